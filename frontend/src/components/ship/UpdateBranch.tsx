// Bring the base branch's new commits into the task's branch, by merge or rebase; conflicts are left in the
// worktree as UNMERGED files, which the agent can be asked to resolve.
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { UPDATE_TASK_BRANCH } from "../../api/shipOps";
import type { ShipRepository, UpdateStrategy } from "../../api/shipOps";
import type { RequestGate } from "../../hooks/useRequest";
import { t, tn } from "../../i18n";
import { Done, Refusal } from "./Done";

export function UpdateBranch(props: {
  taskId: string;
  repository: ShipRepository;
  behind: number | null;
  gate: RequestGate;
  onDone: () => void;
}) {
  const { taskId, repository, gate } = props;
  const [strategy, setStrategy] = useState<UpdateStrategy>("MERGE");
  const [done, setDone] = useState<{ text: string; warn: boolean } | null>(null);
  const base = repository.baseBranch ?? "";

  const update = async () => {
    setDone(null);
    const i = { taskId, repositoryId: repository.repositoryId, strategy };
    const answer = await gate.run("update", async () => unwrap((await gql(UPDATE_TASK_BRANCH, { i })).updateTaskBranch));
    if (!answer) return;
    if (answer.status === "UP_TO_DATE") setDone({ text: t("updateUpToDate", { base }), warn: false });
    else if (answer.status === "CONFLICTS") setDone({ text: tn("updateConflicts", answer.conflicts.length), warn: true });
    else setDone({ text: t("branchUpdated", { base, sha: (answer.head ?? "").slice(0, 10) }), warn: false });
    props.onDone();
  };

  return (
    <section className="ship-step" aria-label={t("shipUpdate")} data-testid="update-branch">
      <h3>{t("shipUpdate")}</h3>
      <p className="muted small">{props.behind ? tn("behindBase", props.behind, { base }) : t("updateHint", { base })}</p>
      <div className="ship-actions">
        <div className="segmented" role="group" aria-label={t("updateStrategy")}>
          {(["MERGE", "REBASE"] as const).map((s) => (
            <button
              key={s}
              type="button"
              className={`btn btn-small${strategy === s ? " is-on" : ""}`}
              aria-pressed={strategy === s}
              onClick={() => setStrategy(s)}
              data-testid={`update-${s.toLowerCase()}`}
            >
              {t(s === "MERGE" ? "strategyMerge" : "strategyRebase")}
            </button>
          ))}
        </div>
        <span className="spacer" />
        <button type="button" className="btn btn-small" disabled={gate.busy !== null} onClick={() => void update()} data-testid="update-submit">
          {gate.busy === "update" ? t("updating") : t("updateButton", { base })}
        </button>
      </div>
      <Refusal gate={gate} action="update" label="updateRefused" />
      <Done text={done?.text ?? null} warn={done?.warn} testId="update-done" />
    </section>
  );
}
