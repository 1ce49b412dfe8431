// The session transcript: agent text, thoughts, tool calls (collapsible, with results), plans,
// errors, system notes and rich output. Follows new messages while the reader is at the bottom.
import { lazy, Suspense, useEffect, useLayoutEffect, useRef } from "react";
import { jsonObject } from "../api/graphql";
import type { Message, SessionState } from "../api/ops";
import { t, tn } from "../i18n";
import { SentAttachments } from "./Attachments";
import { presentationOf, RichOutput } from "./RichOutput";

// The Markdown renderer is a chunk of its own, loaded with the first transcript: the board never pays for it.
const LazyMarkdown = lazy(() => import("./Markdown"));

function Markdown({ text }: { text: string }) {
  return (
    <Suspense fallback={<div className="msg-text">{text}</div>}>
      <LazyMarkdown text={text} />
    </Suspense>
  );
}

function json(value: unknown): string {
  if (value === undefined || value === null || value === "") return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

const SOURCES: Record<string, string> = {
  user: "You",
  step: "Step start",
  clarification_answer: "Your answer",
  parent_question: "Question from a subtask",
  parent_answer: "Answer from the parent task",
  peer: "Another task",
  automation: "Automation",
};

function sourceLabel(data: Record<string, unknown>): string {
  const source = typeof data.source === "string" ? data.source : "user";
  return SOURCES[source] ?? "You";
}

const STATUS_LABEL: Record<string, string> = {
  pending: "Pending",
  in_progress: "Running",
  completed: "Done",
  failed: "Failed",
};

interface FileDiff {
  path: string;
  old_text?: string | null;
  new_text: string;
}

function fileDiffs(content: unknown): FileDiff[] {
  if (!Array.isArray(content)) return [];
  return content.filter(
    (item): item is FileDiff => jsonObject(item).type === "diff" && typeof jsonObject(item).path === "string" && typeof jsonObject(item).new_text === "string",
  );
}

/** The lines a change replaced and the ones it wrote, between the lines it kept at both ends. */
function changedLines({ old_text, new_text }: FileDiff): string[] {
  const lines = (text: string) => text.replace(/\n$/, "").split("\n"); // a final newline ends a line, not starts one
  const before = old_text ? lines(old_text) : [];
  const after = lines(new_text);
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const removed = before.slice(head, before.length - tail).map((line) => `- ${line}`);
  const added = after.slice(head, after.length - tail).map((line) => `+ ${line}`);
  return [...removed, ...added];
}

/** An ACP diff of a tool call: the file it changed (or created) and the lines that changed. */
function FileChange({ diff }: { diff: FileDiff }) {
  return (
    <div className="tool-diff" data-testid="tool-diff" data-path={diff.path}>
      <code>{diff.path}</code> {diff.old_text == null && <span className="muted small">(new file)</span>}
      <pre>{changedLines(diff).join("\n")}</pre>
    </div>
  );
}

function ToolCall({ message }: { message: Message }) {
  const data = jsonObject(message.data);
  const status = typeof data.status === "string" ? data.status : "pending";
  const input = json(data.raw_input);
  const output = json(data.output) || json(data.raw_output);
  const diffs = fileDiffs(data.content);
  return (
    <details className={`msg msg-tool tool-${status}`} data-testid="msg-tool">
      <summary>
        <span className={`tool-status tool-status-${status}`}>{STATUS_LABEL[status] ?? status}</span>
        <span className="tool-title">{message.text || "Tool call"}</span>
      </summary>
      <div className="tool-body">
        {diffs.length > 0 && (
          <>
            <h4>Changes</h4>
            {diffs.map((diff, i) => (
              <FileChange key={i} diff={diff} />
            ))}
          </>
        )}
        {input && (
          <>
            <h4>Input</h4>
            <pre>{input}</pre>
          </>
        )}
        <h4>Result</h4>
        <pre>{output || (status === "completed" ? "(no output)" : "…")}</pre>
      </div>
    </details>
  );
}

function Plan({ message }: { message: Message }) {
  const data = jsonObject(message.data);
  const entries = Array.isArray(data.entries) ? (data.entries as { content?: string; status?: string }[]) : null;
  return (
    <details className="msg msg-plan" data-testid="msg-plan" open>
      <summary>Plan</summary>
      {entries ? (
        <ol>
          {entries.map((entry, i) => (
            <li key={i} className={`plan-${entry.status ?? "pending"}`}>
              <span className="plan-status">{entry.status === "completed" ? "✓" : entry.status === "in_progress" ? "▸" : "○"}</span>{" "}
              {entry.content}
            </li>
          ))}
        </ol>
      ) : (
        <pre>{message.text}</pre>
      )}
    </details>
  );
}

interface SentThread {
  thread_id?: string;
  path?: string | null;
  line?: number | null;
  end_line?: number | null;
  side?: string;
  comments?: { author?: string; body?: string }[];
}

function threadPlace(thread: SentThread): string {
  if (!thread.path) return t("reviewWholeTask");
  if (thread.line == null) return thread.path;
  const lines = thread.end_line != null && thread.end_line !== thread.line ? `${thread.line}–${thread.end_line}` : `${thread.line}`;
  return `${thread.path}:${lines}${thread.side === "OLD" ? ` (${t("reviewOldSide")})` : ""}`;
}

/** A review sent to the agent (sendReviewToAgent): one message listing its threads, not the prompt's text. */
function ReviewMessage({ message }: { message: Message }) {
  const review = jsonObject(jsonObject(message.data).review);
  const threads = (Array.isArray(review.threads) ? review.threads : []) as SentThread[];
  return (
    <div className="msg msg-review" data-testid="msg-review">
      <span className="msg-who">{tn("reviewMessage", threads.length)}</span>
      <ol className="review-list">
        {threads.map((thread, i) => (
          <li key={thread.thread_id ?? i} data-testid="msg-review-thread">
            <code>{threadPlace(thread)}</code>
            {(thread.comments ?? []).map((c, j) => (
              <div key={j} className="review-comment">
                <strong>{c.author}</strong>
                <Markdown text={c.body ?? ""} />
              </div>
            ))}
          </li>
        ))}
      </ol>
    </div>
  );
}

function MessageView({ message, taskId }: { message: Message; taskId: string | null }) {
  switch (message.kind) {
    case "USER":
      return (
        <div className="msg msg-user" data-testid="msg-user">
          <span className="msg-who">{sourceLabel(jsonObject(message.data))}</span>
          <div className="msg-text">{message.text}</div>
          <SentAttachments attachments={message.attachments} />
        </div>
      );
    case "AGENT":
      return (
        <div className="msg msg-agent" data-testid="msg-agent">
          <Markdown text={message.text} />
        </div>
      );
    case "THOUGHT":
      return (
        <details className="msg msg-thought" data-testid="msg-thought">
          <summary>Thinking</summary>
          <Markdown text={message.text} />
        </details>
      );
    case "TOOL_CALL":
      return <ToolCall message={message} />;
    case "REVIEW":
      return <ReviewMessage message={message} />;
    case "PLAN":
      return <Plan message={message} />;
    case "ERROR":
      return (
        <div className="msg msg-error" role="note" data-testid="msg-error">
          <strong>Error</strong> <span className="msg-text">{message.text}</span>
        </div>
      );
    case "SYSTEM":
      return (
        <div className="msg msg-system" role="separator" aria-label={message.text} data-testid="msg-system">
          <span>{message.text}</span>
        </div>
      );
    case "RICH_OUTPUT": {
      const presentation = presentationOf(message.data);
      return (
        <div className="msg msg-rich" data-testid="msg-rich">
          {presentation ? (
            <RichOutput presentation={presentation} taskId={taskId} messageId={message.id} />
          ) : (
            // A presentation this client doesn't understand (a later version): its plain-text summary.
            message.text && <div className="msg-text">{message.text}</div>
          )}
        </div>
      );
    }
    default:
      return null;
  }
}

interface TranscriptProps {
  messages: Message[];
  /** The task the transcript belongs to: rich-output file blocks preview its files. */
  taskId?: string | null;
  state: SessionState | null;
  /** Older messages than the first one shown exist; `onLoadOlder` fetches a page of them (a button at the
   * top, so the reader decides, and their place in the transcript stays where it was). */
  hasOlder?: boolean;
  loadingOlder?: boolean;
  onLoadOlder?: () => void;
}

export function Transcript({ messages, taskId = null, state, hasOlder = false, loadingOlder = false, onLoadOlder }: TranscriptProps) {
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const previous = useRef({ first: null as string | null, height: 0 });
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const first = messages[0]?.id ?? null;
    if (pinned.current) el.scrollTop = el.scrollHeight;
    // Older messages came in above: keep what the reader was looking at where it was.
    else if (previous.current.first && first !== previous.current.first) el.scrollTop += el.scrollHeight - previous.current.height;
    previous.current = { first, height: el.scrollHeight };
  }, [messages, state]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const onScroll = () => {
      pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => el.removeEventListener("scroll", onScroll);
  }, []);
  const working = state === "RUNNING" || state === "STARTING";
  return (
    <div className="transcript" ref={box} role="log" aria-live="polite" aria-label="Transcript" data-testid="transcript" tabIndex={0}>
      {hasOlder && (
        <div className="transcript-older">
          <button type="button" className="btn btn-small" onClick={onLoadOlder} disabled={loadingOlder} data-testid="load-older">
            {loadingOlder ? "Loading…" : "Load earlier messages"}
          </button>
        </div>
      )}
      {messages.length === 0 && !working && <p className="muted pad">No messages yet.</p>}
      {messages.map((m) => (
        <MessageView key={m.id} message={m} taskId={taskId} />
      ))}
      {working && (
        <p className="working" role="status">
          <span className="spinner" aria-hidden="true" /> Agent is working…
        </p>
      )}
    </div>
  );
}
