// Files left with conflicts by an update from the base (UNMERGED), and a button asking the task's agent to resolve
// them: one message in the task's conversation naming them.
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { SEND_MESSAGE } from "../../api/ops";
import { useRequest } from "../../hooks/useRequest";
import { t, tn } from "../../i18n";
import { Done, Refusal } from "./Done";

/** What the agent is asked: the conflicted files, and to finish the merge or rebase once they are resolved. */
export function resolvePrompt(repository: string, base: string | null, paths: readonly string[]): string {
  const from = base ? ` from ${base}` : "";
  return [
    `Updating the task's branch in ${repository}${from} left merge conflicts in these files:`,
    ...paths.map((p) => `- ${p}`),
    "",
    "Resolve each conflict keeping the intent of both sides, remove the conflict markers, stage the files " +
      "(git add), and finish the merge or rebase that is under way (git merge --continue or git rebase --continue).",
  ].join("\n");
}

export function ConflictsNotice(props: { taskId: string; repository: string; base: string | null; paths: readonly string[] }) {
  const gate = useRequest();
  const [sent, setSent] = useState(false);
  if (props.paths.length === 0) return null;

  const ask = async () => {
    const i = { taskId: props.taskId, prompt: resolvePrompt(props.repository, props.base, props.paths) };
    const answer = await gate.run("resolve", async () => unwrap((await gql(SEND_MESSAGE, { i })).sendMessage));
    if (answer) setSent(true);
  };

  return (
    <div className="notice conflicts" role="status" data-testid="conflicts" data-repository={props.repository}>
      <p>{tn("conflictsIn", props.paths.length, { repository: props.repository })}</p>
      <ul className="conflict-files">
        {props.paths.map((p) => (
          <li key={p}>
            <code data-testid="conflict-file">{p}</code>
          </li>
        ))}
      </ul>
      <div className="ship-actions">
        <button type="button" className="btn btn-small" disabled={gate.busy !== null || sent} onClick={() => void ask()} data-testid="ask-agent-resolve">
          {gate.busy ? t("sending") : t("askAgentResolve")}
        </button>
      </div>
      <Refusal gate={gate} action="resolve" label="resolveRefused" />
      <Done text={sent ? t("resolveSent") : null} testId="resolve-sent" />
    </div>
  );
}
