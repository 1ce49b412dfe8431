// The message box: starts the task when no session runs, otherwise sends (queued while a turn runs)
// or interrupts the running turn with the new message.
import { useState } from "react";
import { errorText, gql, unwrap } from "../api/graphql";
import { SEND_MESSAGE, START_TASK } from "../api/ops";
import type { SessionState, SessionSummary, Task } from "../api/ops";
import { app, applyTask } from "../state/app";
import { defaultProfile } from "../state/derive";
import { useStore } from "../state/store";
import { t } from "../i18n";
import { useHasKeyboard } from "../hooks/useMedia";
import { InlineError } from "./LoadState";
import { AttachmentPicker, attachmentHandlers, PendingAttachments, useAttachments } from "./Attachments";
import { askForBrowserNotificationsOnce } from "../state/browserNotify";

export function Composer(props: {
  task: Task;
  session: SessionSummary | undefined;
  sessionState: SessionState | null;
  onStarted: (session: SessionSummary) => void;
  onSent: () => void;
}) {
  const profiles = useStore(app, (s) => s.profiles);
  const [text, setText] = useState("");
  const [profileId, setProfileId] = useState(defaultProfile(profiles)?.id ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const needsStart = !props.session;
  const running = props.sessionState === "RUNNING" || props.sessionState === "STARTING";
  // Only where a keyboard is likely: on a phone "Ctrl+Enter" names a key nobody has.
  const keyboard = useHasKeyboard();
  // Files go with a message; a first start takes the task's own prompt and no files.
  const attachments = useAttachments();

  const act = async (mode: "START" | "QUEUED" | "INTERRUPT") => {
    const prompt = text.trim();
    if (mode !== "START" && !prompt) {
      setError("Write a message first.");
      return;
    }
    if (attachments.uploading) {
      setError("Wait for the attached files to finish uploading.");
      return;
    }
    if (attachments.failed) {
      setError("Remove the files that could not be attached first.");
      return;
    }
    askForBrowserNotificationsOnce();
    setBusy(true);
    setError(null);
    try {
      if (mode === "START") {
        const data = await gql(START_TASK, {
          i: { taskId: props.task.id, prompt: prompt || null, agentProfileId: profileId || null },
        });
        const payload = unwrap(data.startTask);
        if (payload.task) applyTask(payload.task);
        if (payload.session) props.onStarted(payload.session);
      } else {
        const data = await gql(SEND_MESSAGE, {
          i: {
            taskId: props.task.id,
            prompt,
            sessionId: props.session?.id ?? null,
            deliveryMode: mode,
            attachmentIds: attachments.ids.length ? attachments.ids : null,
          },
        });
        unwrap(data.sendMessage);
        attachments.clear();
        props.onSent();
      }
      setText("");
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void act(needsStart ? "START" : "QUEUED");
      }}
      data-testid="composer"
    >
      <label className="sr-only" htmlFor="composer-text">
        {needsStart ? "First prompt" : "Message to the agent"}
      </label>
      <textarea
        id="composer-text"
        className="input composer-text"
        rows={2}
        value={text}
        placeholder={needsStart ? "Prompt for the agent (optional: the task's own prompt is used)" : running ? "Queue a message for the agent" : "Message the agent"}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void act(needsStart ? "START" : "QUEUED");
          }
        }}
        aria-keyshortcuts="Control+Enter"
        data-testid="composer-text"
        {...(needsStart ? {} : attachmentHandlers(attachments))}
      />
      {!needsStart && <PendingAttachments state={attachments} />}
      <InlineError error={error} />
      <div className="composer-actions">
        {needsStart ? (
          <>
            <label className="field-inline">
              <span>Agent</span>
              <select className="input input-small" value={profileId} onChange={(e) => setProfileId(e.target.value)} data-testid="start-profile">
                {profiles.map((p) => (
                  <option key={p.id} value={p.id} disabled={!p.available}>
                    {p.name}
                    {p.available ? "" : " (not installed)"}
                  </option>
                ))}
              </select>
            </label>
            <span className="spacer" />
            <button type="submit" className="btn btn-primary" disabled={busy} data-testid="start-task">
              {busy ? "Starting…" : "Start"}
            </button>
          </>
        ) : (
          <>
            <span className="muted small" data-testid="send-hint">
              {keyboard ? t("ctrlEnterSends") : ""}
              {running ? `${keyboard ? " " : ""}(queued after the current turn)` : ""}
            </span>
            <span className="spacer" />
            <AttachmentPicker state={attachments} disabled={busy} />
            {running && (
              <button type="button" className="btn" disabled={busy} onClick={() => void act("INTERRUPT")} data-testid="send-interrupt">
                Interrupt &amp; send
              </button>
            )}
            <button type="submit" className="btn btn-primary" disabled={busy} data-testid="send-message">
              {running ? "Queue" : "Send"}
            </button>
          </>
        )}
      </div>
    </form>
  );
}
