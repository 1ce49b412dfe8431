// The task's Changes panel, review first: the changed files as a tree with "N of M files reviewed", one file's
// diff with its threads, "Send N comments to agent", discard with a confirmation. Keys: j/k next/previous file,
// n/p next/previous thread. On a phone the diff is unified and wraps, and the tree is a sheet.
import { useCallback, useEffect, useMemo, useState } from "react";
import { WorkerPoolContextProvider } from "@pierre/diffs/react";
import DiffsWorker from "@pierre/diffs/worker/worker.js?worker";
import { errorCode, errorText, gql, unwrap } from "../../api/graphql";
import { SEND_REVIEW_TO_AGENT, SET_FILE_REVIEWED } from "../../api/changesOps";
import type { FileChange, ReviewThread } from "../../api/changesOps";
import { fileKey, fileVersion, useChanges, useFileHunks, type FileRef } from "../../hooks/useChanges";
import { useMedia } from "../../hooks/useMedia";
import { pendingForAgent, useReviewThreads } from "../../hooks/useReviewThreads";
import { t, tn } from "../../i18n";
import { toast } from "../../state/toasts";
import { Dialog } from "../Dialog";
import { LoadState } from "../LoadState";
import DiffView from "./DiffView";
import { DiscardDialog } from "./DiscardDialog";
import { Counts } from "./Counts";
import { FileTree, statusName, treeOrder } from "./FileTree";
import { TaskComments } from "./TaskComments";
import { ConflictsNotice } from "../ship/ConflictsNotice";

const MODE_KEY = "kandev.diffMode";
const POOL = { workerFactory: () => new DiffsWorker(), poolSize: 1 };
const HIGHLIGHTER = { theme: { dark: "pierre-dark", light: "pierre-light" } };

function savedMode(): "unified" | "split" {
  try {
    return localStorage.getItem(MODE_KEY) === "split" ? "split" : "unified";
  } catch {
    return "unified";
  }
}

/** Whether a key press goes into a field or a dialog (where j/k/n/p are not shortcuts). */
function typing(event: KeyboardEvent): boolean {
  const target = event.target;
  if (document.querySelector("dialog[open]")) return true;
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

export default function ChangesPanel({ taskId }: { taskId: string }) {
  const changes = useChanges(taskId);
  const review = useReviewThreads(taskId);
  const phone = useMedia("(max-width: 760px)");
  const [chosen, setChosen] = useState<FileRef | null>(null);
  const [mode, setMode] = useState(savedMode);
  const [sheetOpen, setSheetOpen] = useState(false);
  const [discarding, setDiscarding] = useState(false);
  const [focusThread, setFocusThread] = useState<string | null>(null);
  const [large, setLarge] = useState<Set<string>>(new Set());
  const [sending, setSending] = useState(false);

  const order = useMemo(() => treeOrder(changes.repositories, changes.files), [changes.repositories, changes.files]);
  const selected = useMemo(
    () => order.find((r) => chosen && r.repositoryId === chosen.repositoryId && r.path === chosen.path) ?? order[0] ?? null,
    [order, chosen],
  );
  const selectedFile: FileChange | null = selected
    ? ((changes.files[selected.repositoryId] ?? []).find((f) => f.path === selected.path) ?? null)
    : null;
  const version = selected ? fileVersion(changes.versions, selected) : 0;
  const wantsLarge = selected ? large.has(fileKey(selected)) : false;
  const hunks = useFileHunks(taskId, selectedFile, selected?.repositoryId ?? null, version, wantsLarge);

  const total = changes.repositories.reduce((n, r) => n + r.files.totalCount, 0);
  const reviewed = Object.values(changes.files).reduce((n, files) => n + files.filter((f) => f.reviewed).length, 0);
  const stats = changes.repositories.reduce(
    (s, r) => ({ additions: s.additions + r.stats.additions, deletions: s.deletions + r.stats.deletions }),
    { additions: 0, deletions: 0 },
  );
  const pending = review.threads.filter(pendingForAgent);
  const fileThreads = useMemo(() => {
    const by: Record<string, ReviewThread[]> = {};
    for (const thread of review.threads) {
      if (!thread.path || !thread.repositoryId) continue;
      // A comment on a renamed file's old side names its old path; it belongs to the file it became.
      const file = (changes.files[thread.repositoryId] ?? []).find((f) => f.path === thread.path || (thread.side === "OLD" && f.oldPath === thread.path));
      const key = fileKey({ repositoryId: thread.repositoryId, path: file?.path ?? thread.path });
      (by[key] ??= []).push(thread);
    }
    return by;
  }, [review.threads, changes.files]);
  const threadCounts = useMemo(
    () => Object.fromEntries(Object.entries(fileThreads).map(([k, v]) => [k, v.filter((x) => x.state !== "RESOLVED").length])),
    [fileThreads],
  );
  const selectedThreads = selected ? (fileThreads[fileKey(selected)] ?? []) : [];

  const select = useCallback((ref: FileRef, thread: string | null = null) => {
    setChosen(ref);
    setFocusThread(thread);
    setSheetOpen(false);
  }, []);

  // Threads in the order the files and their lines show, for n/p.
  const threadOrder = useMemo(() => {
    const list: { thread: ReviewThread; ref: FileRef }[] = [];
    for (const ref of order)
      for (const thread of [...(fileThreads[fileKey(ref)] ?? [])].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)))
        list.push({ thread, ref });
    return list;
  }, [order, fileThreads]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
      const step = e.key === "j" || e.key === "n" ? 1 : e.key === "k" || e.key === "p" ? -1 : 0;
      if (!step) return;
      if (e.key === "j" || e.key === "k") {
        const at = order.findIndex((r) => selected && fileKey(r) === fileKey(selected));
        const next = order[at + step];
        if (next) {
          e.preventDefault();
          select(next);
        }
        return;
      }
      if (threadOrder.length === 0) return;
      let at = threadOrder.findIndex((x) => x.thread.id === focusThread);
      if (at < 0) {
        // From the file shown: its first thread going forwards, the one before it going back.
        const file = order.findIndex((r) => selected && fileKey(r) === fileKey(selected));
        const first = threadOrder.findIndex((x) => order.findIndex((r) => fileKey(r) === fileKey(x.ref)) >= file);
        at = step > 0 ? (first < 0 ? threadOrder.length : first) - 1 : first < 0 ? threadOrder.length : first;
      }
      const next = threadOrder[at + step];
      if (next) {
        e.preventDefault();
        select(next.ref, next.thread.id);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [order, selected, threadOrder, focusThread, select]);

  const markReviewed = async (ref: FileRef, file: FileChange, value: boolean) => {
    changes.markReviewed(ref, value);
    try {
      const input = { taskId, repositoryId: ref.repositoryId, path: ref.path, reviewed: value, diffKey: file.diffKey };
      unwrap((await gql(SET_FILE_REVIEWED, { i: input })).setFileReviewed);
    } catch (err) {
      changes.markReviewed(ref, !value);
      toast(t("reviewActionFailed", { error: errorText(err) }));
    }
  };

  const send = async () => {
    setSending(true);
    try {
      const payload = unwrap((await gql(SEND_REVIEW_TO_AGENT, { i: { taskId, threadIds: null } })).sendReviewToAgent);
      payload.threads.forEach(review.apply);
      toast(tn("reviewSentToast", payload.threads.length), "info");
    } catch (err) {
      toast(errorCode(err) === "CONFLICT" ? errorText(err) : t("reviewActionFailed", { error: errorText(err) }));
    } finally {
      setSending(false);
    }
  };

  const changeMode = (next: "unified" | "split") => {
    setMode(next);
    try {
      localStorage.setItem(MODE_KEY, next);
    } catch {
      /* storage unavailable */
    }
  };

  if (changes.load !== "ready") {
    return changes.load === "error" ? (
      <LoadState state="error" what={t("changesWhat")} error={changes.error} onRetry={changes.reload} />
    ) : (
      <LoadState state="loading" what={t("changesWhat")} />
    );
  }

  const tree = (
    <FileTree
      repositories={changes.repositories}
      files={changes.files}
      selected={selected}
      threadCounts={threadCounts}
      onSelect={(ref) => select(ref)}
      onReviewed={(ref, file, value) => void markReviewed(ref, file, value)}
      onMore={(id) => void changes.loadMore(id).catch((err) => toast(errorText(err)))}
    />
  );
  const shownMode = phone ? "unified" : mode;

  return (
    <WorkerPoolContextProvider poolOptions={POOL} highlighterOptions={HIGHLIGHTER}>
      <div className="changes" data-testid="changes-panel" aria-keyshortcuts="j k n p">
        <div className="changes-bar">
          {phone && total > 0 && (
            <button type="button" className="btn btn-small" onClick={() => setSheetOpen(true)} data-testid="open-file-sheet">
              {t("filesButton", { n: total })}
            </button>
          )}
          <span className="changes-progress" data-testid="reviewed-progress">
            {t(total === 1 ? "filesReviewedOne" : "filesReviewed", { n: reviewed, total })}
          </span>
          <Counts additions={stats.additions} deletions={stats.deletions} />
          <span className="spacer" />
          {!phone && (
            <div className="segmented" role="group" aria-label={t("diffLayout")}>
              {(["unified", "split"] as const).map((m) => (
                <button
                  key={m}
                  type="button"
                  className={`btn btn-small${mode === m ? " is-on" : ""}`}
                  aria-pressed={mode === m}
                  onClick={() => changeMode(m)}
                  data-testid={`diff-mode-${m}`}
                >
                  {t(m === "unified" ? "diffUnified" : "diffSplit")}
                </button>
              ))}
            </div>
          )}
          <button
            type="button"
            className="btn btn-small btn-primary"
            disabled={pending.length === 0 || sending}
            onClick={() => void send()}
            data-testid="send-review"
          >
            {tn("sendComments", pending.length)}
          </button>
        </div>
        <TaskComments taskId={taskId} threads={review.threads.filter((x) => !x.path)} onThread={review.apply} onDeleted={review.remove} />
        {changes.repositories.map((r) => (
          <ConflictsNotice
            key={r.repositoryId}
            taskId={taskId}
            repository={r.name}
            base={r.baseBranch ?? null}
            paths={(changes.files[r.repositoryId] ?? []).filter((f) => f.status === "UNMERGED").map((f) => f.path)}
          />
        ))}
        {changes.reason && <p className="muted pad">{changes.reason}</p>}
        {!changes.reason && total === 0 && (
          <p className="muted pad" data-testid="no-changes">
            {changes.repositories.find((r) => r.note)?.note ?? t("noChanges")}
          </p>
        )}
        {total > 0 && (
          <div className="changes-body">
            {!phone && <div className="changes-tree">{tree}</div>}
            <section className="changes-file" aria-label={selectedFile?.path ?? t("changedFiles")} data-testid="diff-pane">
              {selected && selectedFile && (
                <header className="changes-file-head" data-testid="diff-head" data-path={selectedFile.path}>
                  <span className={`file-status file-status-${selectedFile.status.toLowerCase()}`}>{statusName(selectedFile.status)}</span>
                  <code className="changes-file-path">
                    {selectedFile.oldPath && selectedFile.oldPath !== selectedFile.path ? `${selectedFile.oldPath} → ` : ""}
                    {selectedFile.path}
                  </code>
                  <Counts additions={selectedFile.additions} deletions={selectedFile.deletions} />
                  <span className="spacer" />
                  <label className="check small">
                    <input
                      type="checkbox"
                      checked={selectedFile.reviewed}
                      onChange={(e) => void markReviewed(selected, selectedFile, e.target.checked)}
                      data-testid="diff-reviewed"
                    />
                    {t("reviewed")}
                  </label>
                  <button type="button" className="btn btn-small btn-danger" onClick={() => setDiscarding(true)} data-testid="discard-open">
                    {t("discardButton")}
                  </button>
                </header>
              )}
              <FileBody
                taskId={taskId}
                selected={selected}
                file={selectedFile}
                hunks={hunks}
                threads={selectedThreads}
                mode={shownMode}
                wrap={phone}
                focusThread={focusThread}
                onThread={review.apply}
                onThreadDeleted={review.remove}
                onLoadLarge={() => selected && setLarge((s) => new Set(s).add(fileKey(selected)))}
              />
            </section>
          </div>
        )}
        {phone && (
          <Dialog open={sheetOpen} title={t("changedFiles")} onClose={() => setSheetOpen(false)} testId="file-sheet">
            {tree}
            <div className="form-actions">
              <button type="button" className="btn" onClick={() => setSheetOpen(false)}>
                {t("close")}
              </button>
            </div>
          </Dialog>
        )}
        {discarding && selected && selectedFile && (
          <DiscardDialog
            taskId={taskId}
            repositoryId={selected.repositoryId}
            file={selectedFile}
            onClose={() => setDiscarding(false)}
            onDiscarded={changes.reload}
          />
        )}
      </div>
    </WorkerPoolContextProvider>
  );
}

function FileBody(props: {
  taskId: string;
  selected: FileRef | null;
  file: FileChange | null;
  hunks: ReturnType<typeof useFileHunks>;
  threads: ReviewThread[];
  mode: "unified" | "split";
  wrap: boolean;
  focusThread: string | null;
  onThread: (thread: ReviewThread) => void;
  onThreadDeleted: (threadId: string) => void;
  onLoadLarge: () => void;
}) {
  const { file, hunks, selected } = props;
  if (!file || !selected) return <p className="muted pad">{t("pickFile")}</p>;
  if (hunks.load === "error") return <LoadState state="error" what={file.path} error={hunks.error} />;
  if (hunks.load === "loading" || !hunks.file) return <LoadState state="loading" what={file.path} />;
  const shown = hunks.file;
  const notes = [
    shown.binary && t("fileBinary"),
    shown.symlink && t("fileSymlink"),
    shown.invalidUtf8 && t("fileInvalidUtf8"),
    shown.oldMode && shown.newMode && shown.oldMode !== shown.newMode && t("fileModeChanged", { from: shown.oldMode, to: shown.newMode }),
    shown.submoduleChange &&
      t("fileSubmodule", { from: shown.submoduleChange.oldCommit?.slice(0, 10) ?? "–", to: shown.submoduleChange.newCommit?.slice(0, 10) ?? "–" }),
  ].filter(Boolean);
  return (
    <>
      {notes.length > 0 && (
        <ul className="file-notes muted small" data-testid="file-notes">
          {notes.map((n) => (
            <li key={String(n)}>{n}</li>
          ))}
        </ul>
      )}
      {shown.tooLarge && shown.hunks.length === 0 ? (
        <p className="pad">
          {t("fileTooLarge")}{" "}
          <button type="button" className="btn btn-small" onClick={props.onLoadLarge} data-testid="load-large">
            {t("loadLargeDiff")}
          </button>
        </p>
      ) : shown.hunks.length === 0 && props.threads.length === 0 ? (
        !shown.binary && !shown.submoduleChange && <p className="muted pad">{t("fileNoLines")}</p>
      ) : (
        <DiffView
          taskId={props.taskId}
          repositoryId={selected.repositoryId}
          file={shown}
          threads={props.threads}
          mode={props.mode}
          wrap={props.wrap}
          focusThread={props.focusThread}
          onThread={props.onThread}
          onThreadDeleted={props.onThreadDeleted}
        />
      )}
    </>
  );
}
