// One file's diff in @pierre/diffs' CodeView: virtualised, highlighted in a worker, unified or split, unchanged
// lines between hunks expandable (both versions read whole on the first expand). A click on a line number
// (shift-click for a range) opens a comment there; threads sit under their lines, the rest (whole-file,
// outdated, or on lines the diff does not show) above the first hunk.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { processFile, type DiffLineAnnotation, type FileDiffMetadata, type SelectedLineRange } from "@pierre/diffs";
import { CodeView, type CodeViewHandle } from "@pierre/diffs/react";
import { errorText, gql, unwrap } from "../../api/graphql";
import { ADD_REVIEW_COMMENT } from "../../api/changesOps";
import type { FileWithHunks, ReviewThread } from "../../api/changesOps";
import { LIMITS } from "../../api/limits";
import { readFile } from "../../hooks/useChanges";
import { t } from "../../i18n";
import { toast } from "../../state/toasts";
import { shownLines, unifiedPatch, wholeVersions } from "./patch";
import { ThreadView } from "./ThreadView";

type Side = "deletions" | "additions";

/** A comment being written on lines `start`..`end` of one side. */
export interface Draft {
  side: Side;
  start: number;
  end: number;
}

interface Note {
  threads: ReviewThread[];
  draft: Draft | null;
}

/** Lines read around each change when a file is read whole to expand what lies between its hunks. */
const WHOLE_FILE_CONTEXT = 10_000;

function toSide(side: "OLD" | "NEW"): Side {
  return side === "OLD" ? "deletions" : "additions";
}

/** Each thread's place in the diff: under its last line, or (lineNumber 0) above the first hunk. */
function notesOf(file: FileWithHunks, threads: readonly ReviewThread[], draft: Draft | null): DiffLineAnnotation<Note>[] {
  const shown = shownLines(file.hunks);
  const top: Side = file.status === "DELETED" ? "deletions" : "additions";
  const byPlace = new Map<string, DiffLineAnnotation<Note>>();
  const place = (side: Side, lineNumber: number) => {
    const key = `${side}:${lineNumber}`;
    let note = byPlace.get(key);
    if (!note) {
      note = { side, lineNumber, metadata: { threads: [], draft: null } };
      byPlace.set(key, note);
    }
    return note.metadata;
  };
  for (const thread of threads) {
    const last = thread.endLine ?? thread.line;
    const onShownLine = last != null && thread.state !== "OUTDATED" && shown[thread.side].has(last);
    if (onShownLine) place(toSide(thread.side), last).threads.push(thread);
    else place(top, 0).threads.push(thread);
  }
  if (draft) place(draft.side, draft.end).draft = draft;
  return [...byPlace.values()];
}

const EXPAND_LABEL = { up: "expandAbove", down: "expandBelow", both: "expandAround", all: "expandAll" } as const;

/** The viewer draws its "show unchanged lines" controls as unnamed divs: name them, and let a keyboard press them. */
function labelExpandButtons(node: HTMLElement): void {
  const root = node.shadowRoot ?? node;
  for (const button of root.querySelectorAll<HTMLElement>("[data-expand-button]")) {
    if (button.dataset.kandevLabelled) continue;
    button.dataset.kandevLabelled = "";
    const kind = "expandAllButton" in button.dataset ? "all" : "expandUp" in button.dataset ? "up" : "expandDown" in button.dataset ? "down" : "both";
    button.setAttribute("aria-label", t(EXPAND_LABEL[kind]));
    button.tabIndex = 0;
    button.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      button.click();
    });
  }
}

function DraftComment(props: {
  draft: Draft;
  onSubmit: (body: string) => Promise<boolean>;
  onCancel: () => void;
}) {
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);
  const text = useRef<HTMLTextAreaElement>(null);
  useEffect(() => text.current?.focus({ preventScroll: true }), []);
  const { start, end, side } = props.draft;
  const lines = start === end ? `${start}` : `${start}–${end}`;
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!body.trim()) return;
    setBusy(true);
    const ok = await props.onSubmit(body.trim());
    setBusy(false);
    if (ok) setBody("");
  };
  return (
    <form className="draft-comment" onSubmit={submit} data-testid="draft-comment">
      <label className="small" htmlFor="draft-comment-text">
        {t(side === "deletions" ? "commentOnOldLines" : "commentOnLines", { lines })}
      </label>
      <textarea
        id="draft-comment-text"
        ref={text}
        className="input"
        rows={3}
        value={body}
        maxLength={LIMITS.AddReviewCommentInput.body.maxLength}
        placeholder={t("commentPlaceholder")}
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void submit(e);
          if (e.key === "Escape") props.onCancel();
        }}
        data-testid="draft-comment-text"
      />
      <div className="thread-actions">
        <button type="submit" className="btn btn-small btn-primary" disabled={busy || !body.trim()} data-testid="draft-comment-submit">
          {t("addComment")}
        </button>
        <button type="button" className="btn btn-small" onClick={props.onCancel}>
          {t("cancel")}
        </button>
      </div>
    </form>
  );
}

export interface DiffViewProps {
  taskId: string;
  repositoryId: string;
  file: FileWithHunks;
  threads: readonly ReviewThread[];
  mode: "unified" | "split";
  /** Long lines wrap (phones: no sideways scroll) instead of scrolling. */
  wrap: boolean;
  /** Scroll to this thread once shown, and focus it. */
  focusThread: string | null;
  onThread: (thread: ReviewThread) => void;
  onThreadDeleted: (threadId: string) => void;
}

export default function DiffView(props: DiffViewProps) {
  const { taskId, repositoryId, file, threads } = props;
  const handle = useRef<CodeViewHandle<Note, undefined>>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const itemId = `${repositoryId}:${file.path}`;

  useEffect(() => setDraft(null), [itemId]);

  // One metadata object per version of the file's diff: the viewer keeps its expansions and highlighting on it.
  const fileDiff = useMemo<FileDiffMetadata | undefined>(
    () => processFile(unifiedPatch(file), { isGitDiff: true, cacheKey: `${itemId}:${file.diffKey}` }),
    [file, itemId],
  );
  const version = useRef(0);
  const items = useMemo(() => {
    if (!fileDiff) return [];
    version.current += 1;
    return [{ id: itemId, type: "diff" as const, fileDiff, annotations: notesOf(file, threads, draft), version: version.current }];
  }, [fileDiff, file, threads, draft, itemId]);

  const loadDiffFiles = useCallback(async () => {
    const whole = await readFile(taskId, repositoryId, file.path, file.oldPath ?? null, WHOLE_FILE_CONTEXT, true);
    const versions = whole && wholeVersions(whole.hunks, WHOLE_FILE_CONTEXT);
    if (!versions) throw new Error(t("cannotExpand"));
    return {
      oldFile: { name: file.oldPath ?? file.path, contents: versions.old },
      newFile: { name: file.path, contents: versions.new },
    };
  }, [taskId, repositoryId, file.path, file.oldPath]);

  const onSelectionEnd = useCallback((range: SelectedLineRange | null) => {
    if (!range) return;
    const side: Side = range.endSide ?? range.side ?? "additions";
    const sameSide = (range.side ?? side) === side;
    const [start, end] = sameSide ? [Math.min(range.start, range.end), Math.max(range.start, range.end)] : [range.end, range.end];
    setDraft({ side, start, end });
  }, []);

  const options = useMemo(
    () => ({
      diffStyle: props.mode,
      overflow: props.wrap ? ("wrap" as const) : ("scroll" as const),
      enableLineSelection: true,
      disableFileHeader: true,
      lineHoverHighlight: "number" as const,
      loadDiffFiles,
      hunkSeparators: "line-info" as const,
      onLineSelectionEnd: onSelectionEnd,
      onPostRender: labelExpandButtons,
    }),
    [props.mode, props.wrap, loadDiffFiles, onSelectionEnd],
  );

  const comment = async (body: string): Promise<boolean> => {
    if (!draft) return false;
    const side = draft.side === "deletions" ? "OLD" : "NEW";
    try {
      const data = await gql(ADD_REVIEW_COMMENT, {
        i: {
          taskId,
          repositoryId,
          path: side === "OLD" ? (file.oldPath ?? file.path) : file.path,
          line: draft.start,
          endLine: draft.end,
          side,
          body,
        },
      });
      props.onThread(unwrap(data.addReviewComment).thread);
      setDraft(null);
      handle.current?.clearSelectedLines();
      return true;
    } catch (err) {
      toast(t("commentFailed", { error: errorText(err) }));
      return false;
    }
  };

  const { focusThread } = props;
  useEffect(() => {
    if (!focusThread) return;
    const thread = threads.find((x) => x.id === focusThread);
    if (!thread) return;
    const line = thread.endLine ?? thread.line;
    const shown = line != null && thread.state !== "OUTDATED" && shownLines(file.hunks)[thread.side].has(line);
    if (shown) handle.current?.scrollTo({ type: "line", id: itemId, lineNumber: line, side: toSide(thread.side), align: "center" });
    else handle.current?.scrollTo({ type: "position", position: 0 });
    // The thread renders once its lines are in view.
    let tries = 0;
    const timer = setInterval(() => {
      const element = document.querySelector<HTMLElement>(`[data-thread-id="${CSS.escape(focusThread)}"]`);
      if (element || ++tries > 40) {
        clearInterval(timer);
        element?.focus({ preventScroll: false });
      }
    }, 50);
    return () => clearInterval(timer);
  }, [focusThread, threads, file.hunks, itemId]);

  if (!fileDiff) return <p className="muted pad">{t("diffUnreadable")}</p>;
  return (
    <CodeView<Note, undefined>
      ref={handle}
      className="diff-view"
      items={items}
      options={options}
      renderAnnotation={(...[annotation]) => {
        const note = annotation.metadata as Note;
        return (
          <div className="diff-notes">
            {note.threads.map((thread) => (
              <ThreadView
                key={thread.id}
                thread={thread}
                onChange={props.onThread}
                onDeleted={props.onThreadDeleted}
                showWhere={annotation.lineNumber === 0}
              />
            ))}
            {note.draft && (
              <DraftComment
                draft={note.draft}
                onSubmit={comment}
                onCancel={() => {
                  setDraft(null);
                  handle.current?.clearSelectedLines();
                }}
              />
            )}
          </div>
        );
      }}
    />
  );
}
