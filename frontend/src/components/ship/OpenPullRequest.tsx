// Open the repository's pull (merge) request from the pushed task branch; empty fields take the server's
// defaults (the task's title, the agent's last summary, the task's base branch).
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { LIMITS } from "../../api/limits";
import { OPEN_PULL_REQUEST } from "../../api/shipOps";
import type { ShipRepository } from "../../api/shipOps";
import type { RequestGate } from "../../hooks/useRequest";
import { t } from "../../i18n";
import { Refusal } from "./Done";

const LIMIT = LIMITS.OpenPullRequestInput;

export function OpenPullRequest(props: {
  taskId: string;
  taskTitle: string;
  repository: ShipRepository;
  gate: RequestGate;
  onDone: () => void;
}) {
  const { taskId, repository, gate } = props;
  const [title, setTitle] = useState("");
  const [body, setBody] = useState("");
  const [base, setBase] = useState("");
  const [draft, setDraft] = useState(false);
  const id = `open-pr-${repository.repositoryId}`;
  const gitlab = repository.codeHost === "gitlab";

  const open = async (e: React.FormEvent) => {
    e.preventDefault();
    const i = {
      taskId,
      repositoryId: repository.repositoryId,
      title: title.trim() || null,
      body: body.trim() || null,
      base: base.trim() || null,
      draft,
    };
    const answer = await gate.run("open", async () => unwrap((await gql(OPEN_PULL_REQUEST, { i })).openPullRequest));
    if (answer) props.onDone();
  };

  return (
    <form className="ship-step" onSubmit={(e) => void open(e)} data-testid="open-pr">
      <h3>{t(gitlab ? "openMergeRequest" : "openPullRequest")}</h3>
      <label className="field">
        <span>{t("prTitle")}</span>
        <input id={`${id}-title`} className="input" value={title} maxLength={LIMIT.title.maxLength} placeholder={props.taskTitle} onChange={(e) => setTitle(e.target.value)} data-testid="pr-title" />
      </label>
      <label className="field">
        <span>{t("prBody")}</span>
        <textarea className="input" rows={3} value={body} maxLength={LIMIT.body.maxLength} placeholder={t("prBodyPlaceholder")} onChange={(e) => setBody(e.target.value)} data-testid="pr-body" />
      </label>
      <div className="ship-actions">
        <label className="field-inline">
          <span>{t("prBase")}</span>
          <input className="input input-small ship-base" value={base} maxLength={LIMIT.base.maxLength} placeholder={repository.baseBranch ?? ""} onChange={(e) => setBase(e.target.value)} data-testid="pr-base" />
        </label>
        <label className="check small">
          <input type="checkbox" checked={draft} onChange={(e) => setDraft(e.target.checked)} data-testid="pr-draft" />
          {t("prDraft")}
        </label>
        <span className="spacer" />
        <button type="submit" className="btn btn-small btn-primary" disabled={gate.busy !== null} data-testid="open-pr-submit">
          {gate.busy === "open" ? t("opening") : t(gitlab ? "openMergeRequest" : "openPullRequest")}
        </button>
      </div>
      <Refusal gate={gate} action="open" label="openRefused" />
    </form>
  );
}
