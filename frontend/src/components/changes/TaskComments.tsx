// Comments on the whole task (threads without a file): listed above the files, with a form to open one.
import { useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import { ADD_REVIEW_COMMENT } from "../../api/changesOps";
import type { ReviewThread } from "../../api/changesOps";
import { LIMITS } from "../../api/limits";
import { t } from "../../i18n";
import { toast } from "../../state/toasts";
import { ThreadView } from "./ThreadView";

export function TaskComments(props: {
  taskId: string;
  threads: ReviewThread[];
  onThread: (thread: ReviewThread) => void;
  onDeleted: (threadId: string) => void;
}) {
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);
  const open = props.threads.filter((x) => x.state !== "RESOLVED").length;
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!body.trim()) return;
    setBusy(true);
    try {
      const data = await gql(ADD_REVIEW_COMMENT, { i: { taskId: props.taskId, body: body.trim() } });
      props.onThread(unwrap(data.addReviewComment).thread);
      setBody("");
    } catch (err) {
      toast(t("commentFailed", { error: errorText(err) }));
    } finally {
      setBusy(false);
    }
  };
  return (
    <details className="task-comments" data-testid="task-comments">
      <summary>{t("taskComments", { n: open })}</summary>
      {props.threads.map((thread) => (
        <ThreadView key={thread.id} thread={thread} onChange={props.onThread} onDeleted={props.onDeleted} />
      ))}
      <form className="thread-reply" onSubmit={submit}>
        <label className="sr-only" htmlFor="task-comment-text">
          {t("taskCommentLabel")}
        </label>
        <textarea
          id="task-comment-text"
          className="input"
          rows={2}
          value={body}
          maxLength={LIMITS.AddReviewCommentInput.body.maxLength}
          placeholder={t("taskCommentLabel")}
          onChange={(e) => setBody(e.target.value)}
        />
        <div className="thread-actions">
          <button type="submit" className="btn btn-small" disabled={busy || !body.trim()}>
            {t("addComment")}
          </button>
        </div>
      </form>
    </details>
  );
}
