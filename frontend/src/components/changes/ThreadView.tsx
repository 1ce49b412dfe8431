// One review thread: its comments (Markdown, rendered as untrusted), a reply, resolve and reopen; a resolved
// thread shows folded, an outdated one with the lines it was opened on as they were then.
import { useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import {
  DELETE_REVIEW_COMMENT,
  REOPEN_REVIEW_THREAD,
  REPLY_TO_REVIEW_THREAD,
  RESOLVE_REVIEW_THREAD,
} from "../../api/changesOps";
import type { ReviewThread } from "../../api/changesOps";
import { LIMITS } from "../../api/limits";
import { t, tn } from "../../i18n";
import { toast } from "../../state/toasts";
import Markdown from "../Markdown";

type Author = ReviewThread["comments"][number]["author"];

function authorName(author: Author): string {
  return author.kind === "AGENT" ? t("reviewAgent") : (author.login ?? t("reviewSomeone"));
}

const STATE_LABEL = { OPEN: "reviewStateOpen", RESOLVED: "reviewStateResolved", OUTDATED: "reviewStateOutdated" } as const;

export function where(thread: ReviewThread): string {
  if (!thread.path) return t("reviewWholeTask");
  if (thread.line == null) return thread.path;
  const lines = thread.endLine != null && thread.endLine !== thread.line ? `${thread.line}–${thread.endLine}` : `${thread.line}`;
  return `${thread.path}:${lines}${thread.side === "OLD" ? ` (${t("reviewOldSide")})` : ""}`;
}

export function ThreadView(props: {
  thread: ReviewThread;
  onChange: (thread: ReviewThread) => void;
  onDeleted: (threadId: string) => void;
  /** Show where the thread is (a list outside the diff). */
  showWhere?: boolean;
}) {
  const { thread } = props;
  const [reply, setReply] = useState("");
  const [busy, setBusy] = useState(false);
  const resolved = thread.state === "RESOLVED";

  const run = async (action: () => Promise<ReviewThread | null>) => {
    setBusy(true);
    try {
      const next = await action();
      if (next) props.onChange(next);
      return true;
    } catch (err) {
      toast(t("reviewActionFailed", { error: errorText(err) }));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const sendReply = async (e: React.FormEvent) => {
    e.preventDefault();
    const body = reply.trim();
    if (!body) return;
    const ok = await run(async () => unwrap((await gql(REPLY_TO_REVIEW_THREAD, { i: { threadId: thread.id, body } })).replyToReviewThread).thread);
    if (ok) setReply("");
  };
  const resolve = () => run(async () => unwrap((await gql(RESOLVE_REVIEW_THREAD, { id: thread.id })).resolveReviewThread).thread);
  const reopen = () => run(async () => unwrap((await gql(REOPEN_REVIEW_THREAD, { id: thread.id })).reopenReviewThread).thread);
  const remove = (commentId: string) =>
    run(async () => {
      const payload = unwrap((await gql(DELETE_REVIEW_COMMENT, { id: commentId })).deleteReviewComment);
      if (payload.threadDeleted) {
        props.onDeleted(thread.id);
        return null;
      }
      return payload.thread;
    });

  const body = (
    <>
      {thread.state === "OUTDATED" && thread.anchor && (
        <div className="thread-snippet">
          <p className="muted small">{t("reviewOutdatedNote", { line: thread.anchor.line ?? "?" })}</p>
          <pre data-testid="thread-snippet">{thread.anchor.lineText}</pre>
        </div>
      )}
      <ol className="thread-comments">
        {thread.comments.map((c) => (
          <li key={c.id} className="thread-comment" data-testid="review-comment">
            <div className="thread-comment-head">
              <strong>{authorName(c.author)}</strong>
              <time className="muted small" dateTime={c.createdAt}>
                {new Date(c.createdAt).toLocaleString()}
              </time>
              <span className="spacer" />
              {c.author.kind === "PERSON" && (
                <button type="button" className="btn-link small" onClick={() => void remove(c.id)} disabled={busy}>
                  {t("reviewDelete")}
                </button>
              )}
            </div>
            <Markdown text={c.body} />
          </li>
        ))}
      </ol>
      {resolved && thread.resolvedBy && (
        <p className="muted small" data-testid="thread-resolved-by">
          {t("reviewResolvedBy", { who: authorName(thread.resolvedBy) })}
        </p>
      )}
      <form className="thread-reply" onSubmit={sendReply}>
        <label className="sr-only" htmlFor={`reply-${thread.id}`}>
          {t("reviewReply")}
        </label>
        <textarea
          id={`reply-${thread.id}`}
          className="input"
          rows={2}
          value={reply}
          maxLength={LIMITS.ReplyToReviewThreadInput.body.maxLength}
          placeholder={t("reviewReplyPlaceholder")}
          onChange={(e) => setReply(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void sendReply(e);
          }}
          data-testid="thread-reply-text"
        />
        <div className="thread-actions">
          <button type="submit" className="btn btn-small" disabled={busy || !reply.trim()} data-testid="thread-reply">
            {t("reviewReply")}
          </button>
          {resolved ? (
            <button type="button" className="btn btn-small" onClick={() => void reopen()} disabled={busy} data-testid="thread-reopen">
              {t("reviewReopen")}
            </button>
          ) : (
            <button type="button" className="btn btn-small" onClick={() => void resolve()} disabled={busy} data-testid="thread-resolve">
              {t("reviewResolve")}
            </button>
          )}
        </div>
      </form>
    </>
  );

  const head = (
    <>
      <span className={`thread-state thread-state-${thread.state.toLowerCase()}`} data-testid="thread-state">
        {t(STATE_LABEL[thread.state])}
      </span>
      {props.showWhere && <code className="thread-where">{where(thread)}</code>}
      {thread.sentAt && <span className="thread-sent muted small">{t("reviewSent")}</span>}
      <span className="muted small">{tn("reviewCommentCount", thread.comments.length)}</span>
    </>
  );

  return (
    <article
      className={`thread thread-${thread.state.toLowerCase()}`}
      data-testid="review-thread"
      data-thread-id={thread.id}
      data-state={thread.state}
      tabIndex={-1}
      aria-label={t("reviewThreadLabel", { where: where(thread) })}
    >
      {resolved ? (
        <details>
          <summary className="thread-head">{head}</summary>
          {body}
        </details>
      ) : (
        <>
          <div className="thread-head">{head}</div>
          {body}
        </>
      )}
    </article>
  );
}
