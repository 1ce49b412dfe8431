// The row above the composer: autopilot identity, session and task state, step, queue, stop, and
// the completion fallback when a signal-gated step waits.
import { useState } from "react";
import { errorText, gql, unwrap } from "../api/graphql";
import { MARK_STEP_COMPLETE, STOP_TASK, UPDATE_TASK } from "../api/ops";
import type { SessionState, SessionSummary, Task, WorkflowStep } from "../api/ops";
import { applyTask } from "../state/app";
import { stateLabel } from "../state/derive";
import { toast } from "../state/toasts";
import { t } from "../i18n";
import { AutopilotGlyph } from "./Icons";
import { CompletionHint } from "./TaskBadges";

export function StatusRow(props: {
  task: Task;
  step: WorkflowStep | undefined;
  session: SessionSummary | undefined;
  sessionState: SessionState | null;
  queued: number;
  completion: boolean;
}) {
  const [stopping, setStopping] = useState(false);
  const [completing, setCompleting] = useState(false);
  const { task, sessionState } = props;
  const running = sessionState === "RUNNING" || sessionState === "STARTING";
  const questionPending = task.pendingAction === "CLARIFICATION";

  const stop = async () => {
    setStopping(true);
    try {
      unwrap((await gql(STOP_TASK, { id: task.id })).stopTask);
    } catch (err) {
      toast(`Could not stop: ${errorText(err)}`);
    } finally {
      setStopping(false);
    }
  };

  const complete = async () => {
    setCompleting(true);
    try {
      if (props.session) {
        unwrap((await gql(MARK_STEP_COMPLETE, { s: props.session.id })).markStepComplete);
      } else {
        const data = await gql(UPDATE_TASK, {
          i: { taskId: task.id, state: "COMPLETED" },
        });
        const payload = unwrap(data.updateTask);
        if (payload.task) applyTask(payload.task);
      }
    } catch (err) {
      toast(`Could not complete the step: ${errorText(err)}`);
    } finally {
      setCompleting(false);
    }
  };

  return (
    <div className="status-row" data-testid="status-row">
      {task.autopilot && (
        <span className="chip chip-autopilot" data-testid="autopilot-chip" title={t("autopilotMode")}>
          <AutopilotGlyph size={12} /> {t("autopilot")}
        </span>
      )}
      {props.session && (
        <span className={`chip chip-session session-${(sessionState ?? props.session.state).toLowerCase()}`} data-testid="session-state">
          Session: {stateLabel(sessionState ?? props.session.state)}
        </span>
      )}
      <span className="chip" data-testid="task-state-chip">
        Task: {stateLabel(task.state)}
      </span>
      {props.step && <span className="chip chip-step">Step: {props.step.name}</span>}
      {props.queued > 0 && (
        <span className="chip" data-testid="queued-count">
          {props.queued} queued
        </span>
      )}
      {props.completion && <CompletionHint />}
      <span className="spacer" />
      {props.completion && (
        <button
          type="button"
          className="btn btn-small btn-primary"
          disabled={questionPending || completing}
          title={questionPending ? t("markCompleteDisabled") : t("completionPendingHint")}
          aria-describedby={questionPending ? "complete-blocked" : undefined}
          onClick={() => void complete()}
          data-testid="mark-complete"
        >
          {completing ? "…" : t("markComplete")}
        </button>
      )}
      {questionPending && props.completion && (
        <span id="complete-blocked" className="sr-only">
          {t("markCompleteDisabled")}
        </span>
      )}
      {running && (
        <button type="button" className="btn btn-small btn-danger" onClick={() => void stop()} disabled={stopping} data-testid="stop-task">
          {stopping ? "Stopping…" : "Stop"}
        </button>
      )}
    </div>
  );
}
