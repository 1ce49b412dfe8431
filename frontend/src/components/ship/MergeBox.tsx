// Merge: the pull request on its code host with a method, or, for a repository on no code host, the task's branch
// into its base locally. Once everything of the task is merged the server moves it to its workflow's final step.
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { MERGE_PULL_REQUEST, MERGE_TASK_BRANCH } from "../../api/shipOps";
import type { MergeMethod, PullRequest, ShipRepository } from "../../api/shipOps";
import type { RequestGate } from "../../hooks/useRequest";
import { t } from "../../i18n";
import { Done, Refusal } from "./Done";

const METHODS: MergeMethod[] = ["MERGE", "SQUASH", "REBASE"];
const METHOD_KEY = { MERGE: "methodMerge", SQUASH: "methodSquash", REBASE: "methodRebase" } as const;

export function MergeBox(props: {
  taskId: string;
  repository: ShipRepository;
  pr: PullRequest | undefined;
  gate: RequestGate;
  onDone: () => void;
}) {
  const { taskId, repository, pr, gate } = props;
  const [method, setMethod] = useState<MergeMethod>("MERGE");
  const [done, setDone] = useState<string | null>(null);
  const hosted = repository.codeHost !== null;
  // GitLab merges or squashes; it has no rebase-merge of its own.
  const methods = repository.codeHost === "gitlab" ? METHODS.filter((m) => m !== "REBASE") : METHODS;
  if (hosted && (!pr || pr.state !== "open")) return null;

  const merge = async () => {
    setDone(null);
    const i = { taskId, repositoryId: repository.repositoryId };
    const answer = await gate.run("merge", async () => {
      if (hosted) return unwrap((await gql(MERGE_PULL_REQUEST, { i: { ...i, method } })).mergePullRequest).pullRequest.state;
      return unwrap((await gql(MERGE_TASK_BRANCH, { i })).mergeTaskBranch).sha;
    });
    if (!answer) return;
    setDone(hosted ? t("mergedPullRequest") : t("mergedLocally", { base: repository.baseBranch ?? "", sha: answer.slice(0, 10) }));
    props.onDone();
  };

  return (
    <section className="ship-step" aria-label={t("shipMerge")} data-testid="merge-box">
      <h3>{t("shipMerge")}</h3>
      {!hosted && <p className="muted small">{t("mergeLocalHint", { base: repository.baseBranch ?? "" })}</p>}
      <div className="ship-actions">
        {hosted && (
          <label className="field-inline">
            <span>{t("mergeMethod")}</span>
            <select className="input input-small" value={method} onChange={(e) => setMethod(e.target.value as MergeMethod)} data-testid="merge-method">
              {methods.map((m) => (
                <option key={m} value={m}>
                  {t(METHOD_KEY[m])}
                </option>
              ))}
            </select>
          </label>
        )}
        <span className="spacer" />
        <button type="button" className="btn btn-small btn-primary" disabled={gate.busy !== null} onClick={() => void merge()} data-testid="merge-submit">
          {gate.busy === "merge" ? t("merging") : hosted ? t("mergeButton") : t("mergeLocalButton", { base: repository.baseBranch ?? "" })}
        </button>
      </div>
      <Refusal gate={gate} action="merge" label="mergeRefused" />
      <Done text={done} testId="merge-done" />
    </section>
  );
}
