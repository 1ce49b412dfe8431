// Push the task's branch to the repository's remote; force-with-lease replaces it after an amend or a rebase.
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { PUSH_TASK_BRANCH } from "../../api/shipOps";
import type { ShipRepository } from "../../api/shipOps";
import type { RequestGate } from "../../hooks/useRequest";
import { t } from "../../i18n";
import { Done, Refusal } from "./Done";

export function PushBox(props: { taskId: string; repository: ShipRepository; gate: RequestGate; onDone: () => void }) {
  const { taskId, repository, gate } = props;
  const [force, setForce] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const branch = repository.sourceBranch ?? repository.branch;

  const push = async () => {
    setDone(null);
    const i = { taskId, repositoryId: repository.repositoryId, forceWithLease: force };
    const answer = await gate.run("push", async () => unwrap((await gql(PUSH_TASK_BRANCH, { i })).pushTaskBranch));
    if (!answer) return;
    const { push: pushed } = answer;
    setForce(false);
    setDone(t(pushed.changed ? "pushed" : "pushedAlready", { branch: pushed.branch, sha: pushed.sha.slice(0, 10) }));
    props.onDone();
  };

  return (
    <section className="ship-step" aria-label={t("shipPush")} data-testid="push-box">
      <h3>{t("shipPush")}</h3>
      <p className="muted small">{branch ? t("pushWhat", { branch }) : t("pushNoBranch")}</p>
      <div className="ship-actions">
        <label className="check small">
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} data-testid="push-force" />
          {t("forceWithLease")}
        </label>
        <span className="spacer" />
        <button type="button" className="btn btn-small btn-primary" disabled={gate.busy !== null} onClick={() => void push()} data-testid="push-submit">
          {gate.busy === "push" ? t("pushing") : t("pushButton")}
        </button>
      </div>
      <Refusal gate={gate} action="push" label="pushRefused" />
      <Done text={done} testId="push-done" />
    </section>
  );
}
