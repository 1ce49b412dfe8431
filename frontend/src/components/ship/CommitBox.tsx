// Commit a repository's uncommitted changes: all or chosen files, a message (or the agent's suggestion), amend;
// the person's name and email for commits asked for here the first time.
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { LIMITS } from "../../api/limits";
import { COMMIT_TASK_CHANGES, SET_GIT_IDENTITY, SUGGEST_COMMIT_MESSAGE } from "../../api/shipOps";
import type { GitIdentity, PendingRepository } from "../../api/shipOps";
import type { RequestGate } from "../../hooks/useRequest";
import { t } from "../../i18n";
import { statusName } from "../changes/FileTree";
import { Done, Refusal } from "./Done";

const MAX_PATHS = LIMITS.CommitTaskChangesInput.paths.maxItems;

export function CommitBox(props: {
  taskId: string;
  repositoryId: string;
  pending: PendingRepository | undefined;
  unread: string | null;
  identity: GitIdentity | null;
  gate: RequestGate;
  onDone: () => void;
}) {
  const { taskId, repositoryId, gate } = props;
  const [message, setMessage] = useState("");
  const [amend, setAmend] = useState(false);
  // Files left out; every other uncommitted file is committed (new ones too).
  const [left, setLeft] = useState<Set<string>>(new Set());
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const files = props.pending?.files.nodes ?? [];
  const chosen = files.filter((f) => !left.has(f.path)).map((f) => f.path);
  const all = chosen.length === files.length;
  const id = `commit-${repositoryId}`;

  const toggle = (path: string, on: boolean) =>
    setLeft((s) => {
      const next = new Set(s);
      if (on) next.delete(path);
      else next.add(path);
      return next;
    });

  const suggest = async () => {
    const answer = await gate.run("suggest", async () =>
      unwrap((await gql(SUGGEST_COMMIT_MESSAGE, { taskId, repositoryId })).suggestCommitMessage),
    );
    if (answer) setMessage(answer.message);
  };

  const commit = async (e: React.FormEvent) => {
    e.preventDefault();
    setDone(null);
    const answer = await gate.run("commit", async () => {
      if (!props.identity)
        unwrap((await gql(SET_GIT_IDENTITY, { i: { gitName: name.trim(), gitEmail: email.trim() } })).updateAccount);
      if (!all && chosen.length === 0) throw new Error(t("commitChooseFiles"));
      if (!all && chosen.length > MAX_PATHS) throw new Error(t("commitTooManyFiles", { n: MAX_PATHS }));
      const i = { taskId, repositoryId, message: message.trim() || null, paths: all ? null : chosen, amend };
      return unwrap((await gql(COMMIT_TASK_CHANGES, { i })).commitTaskChanges);
    });
    if (!answer) return;
    setMessage("");
    setAmend(false);
    setLeft(new Set());
    setDone(t("committed", { sha: answer.commit.sha.slice(0, 10) }));
    props.onDone();
  };

  return (
    <form className="ship-step" onSubmit={(e) => void commit(e)} data-testid="commit-box">
      <h3>{t("shipCommit")}</h3>
      {!props.identity && (
        <fieldset className="fieldset" data-testid="git-identity">
          <legend>{t("gitIdentityLegend")}</legend>
          <p className="muted small">{t("gitIdentityHint")}</p>
          <div className="field-row">
            <label className="field">
              <span>{t("gitName")}</span>
              <input className="input" required value={name} autoComplete="name" onChange={(e) => setName(e.target.value)} data-testid="git-name" />
            </label>
            <label className="field">
              <span>{t("gitEmail")}</span>
              <input className="input" required type="email" value={email} autoComplete="email" onChange={(e) => setEmail(e.target.value)} data-testid="git-email" />
            </label>
          </div>
        </fieldset>
      )}
      {files.length === 0 ? (
        <p className="muted small" data-testid="commit-nothing">
          {props.pending
            ? t("nothingUncommitted")
            : props.unread
              ? t("uncommittedUnread", { error: props.unread })
              : t("uncommittedUnknown")}
        </p>
      ) : (
        <fieldset className="ship-files" data-testid="commit-files">
          <legend>{t("commitFiles", { n: chosen.length, total: props.pending?.files.totalCount ?? files.length })}</legend>
          <ul>
            {files.map((f) => (
              <li key={f.path}>
                <label className="check small">
                  <input type="checkbox" checked={!left.has(f.path)} onChange={(e) => toggle(f.path, e.target.checked)} data-testid="commit-file" data-path={f.path} />
                  <span className={`file-status file-status-${f.status.toLowerCase()}`}>{statusName(f.status)}</span>
                  <code className="ship-path">{f.path}</code>
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
      )}
      <label className="sr-only" htmlFor={`${id}-message`}>
        {t("commitMessage")}
      </label>
      <textarea
        id={`${id}-message`}
        className="input"
        rows={3}
        value={message}
        maxLength={LIMITS.CommitTaskChangesInput.message.maxLength}
        placeholder={t("commitMessagePlaceholder")}
        onChange={(e) => setMessage(e.target.value)}
        data-testid="commit-message"
      />
      <div className="ship-actions">
        <button type="button" className="btn btn-small" disabled={gate.busy !== null || files.length === 0} onClick={() => void suggest()} data-testid="suggest-message">
          {gate.busy === "suggest" ? t("suggesting") : t("suggestMessage")}
        </button>
        <label className="check small">
          <input type="checkbox" checked={amend} onChange={(e) => setAmend(e.target.checked)} data-testid="commit-amend" />
          {t("amendLast")}
        </label>
        <span className="spacer" />
        <button type="submit" className="btn btn-small btn-primary" disabled={gate.busy !== null} data-testid="commit-submit">
          {gate.busy === "commit" ? t("committing") : t("commitButton")}
        </button>
      </div>
      <Refusal gate={gate} action="suggest" label="suggestRefused" />
      <Refusal gate={gate} action="commit" label="commitRefused" />
      <Done text={done} testId="commit-done" />
    </form>
  );
}
