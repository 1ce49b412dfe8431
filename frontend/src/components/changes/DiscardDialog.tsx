// Discarding a file's uncommitted changes, or one hunk of them, after a confirmation that shows what goes.
// Hunks come from the file's UNCOMMITTED diff: that is what discardChanges reverts (committed work stays).
import { useEffect, useState } from "react";
import { errorCode, errorText, gql, unwrap } from "../../api/graphql";
import { DISCARD_CHANGES, FILE_HUNKS } from "../../api/changesOps";
import type { DiffHunk, FileChange } from "../../api/changesOps";
import { t } from "../../i18n";
import { Dialog } from "../Dialog";

const PREVIEW_LINES = 12;
const PREFIX = { CONTEXT: " ", ADD: "+", DELETE: "-" } as const;

export function DiscardDialog(props: {
  taskId: string;
  repositoryId: string;
  file: FileChange;
  onClose: () => void;
  onDiscarded: () => void;
}) {
  const { taskId, repositoryId, file } = props;
  const [hunks, setHunks] = useState<DiffHunk[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const paths = file.oldPath && file.oldPath !== file.path ? [file.path, file.oldPath] : [file.path];
    gql(FILE_HUNKS, { id: taskId, paths, scope: "UNCOMMITTED", context: 3, large: false }).then(
      (data) => {
        const repository = data.task.changes.repositories.find((r) => r.repositoryId === repositoryId);
        setHunks(repository?.files.nodes.find((f) => f.path === file.path)?.hunks ?? []);
      },
      (err) => setError(errorText(err)),
    );
  }, [taskId, repositoryId, file.path, file.oldPath]);

  const discard = async (hunk: DiffHunk | null) => {
    setBusy(true);
    setError(null);
    try {
      const input = hunk
        ? { taskId, repositoryId, hunk: { path: file.path, header: hunk.header } }
        : { taskId, repositoryId, paths: file.oldPath && file.oldPath !== file.path ? [file.path, file.oldPath] : [file.path] };
      unwrap((await gql(DISCARD_CHANGES, { i: input })).discardChanges);
      props.onDiscarded();
      props.onClose();
    } catch (err) {
      setError(errorCode(err) === "CONFLICT" ? t("discardConflict", { error: errorText(err) }) : errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const uncommitted = hunks !== null && (hunks.length > 0 || file.untracked || file.binary);
  return (
    <Dialog open title={t("discardTitle", { path: file.path })} onClose={props.onClose} testId="discard-dialog">
      <p>{t("discardExplain")}</p>
      {hunks === null && !error && <p className="muted">{t("loading")}</p>}
      {hunks !== null && !uncommitted && <p className="muted" data-testid="discard-nothing">{t("discardNothing")}</p>}
      {uncommitted && (
        <>
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void discard(null)} data-testid="discard-file">
            {t("discardFile")}
          </button>
          {hunks.length > 1 && (
            <ol className="discard-hunks">
              {hunks.map((hunk) => (
                <li key={hunk.header} data-testid="discard-hunk-row">
                  <pre className="discard-preview">
                    <code>{hunk.header}</code>
                    {"\n"}
                    {hunk.lines.slice(0, PREVIEW_LINES).map((l) => PREFIX[l.kind] + l.text).join("\n")}
                    {hunk.lines.length > PREVIEW_LINES ? "\n…" : ""}
                  </pre>
                  <button type="button" className="btn btn-small btn-danger" disabled={busy} onClick={() => void discard(hunk)} data-testid="discard-hunk">
                    {t("discardHunk")}
                  </button>
                </li>
              ))}
            </ol>
          )}
        </>
      )}
      {error && (
        <p className="inline-error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="btn" onClick={props.onClose}>
          {t("cancel")}
        </button>
      </div>
    </Dialog>
  );
}
