// The markers a task carries in every list: autopilot identity, a pending question or permission, a spent budget,
// and a pending completion. The same components serve the board, the sidebar and the mobile switcher.
import { useId } from "react";
import type { Task } from "../api/ops";
import { t } from "../i18n";
import { AutopilotGlyph, CoinGlyph, FlagGlyph, QuestionGlyph, ShieldGlyph } from "./Icons";

/** A focusable icon whose label shows on hover and on keyboard focus; assistive tech reads the label. */
function LabelledIcon(props: { label: string; className: string; testId: string; children: React.ReactNode }) {
  const tipId = useId();
  return (
    <span
      className={`marker ${props.className}`}
      role="img"
      aria-label={props.label}
      aria-describedby={tipId}
      tabIndex={0}
      data-testid={props.testId}
    >
      {props.children}
      <span className="tooltip" role="tooltip" id={tipId}>
        {props.label}
      </span>
    </span>
  );
}

export function AutopilotIcon() {
  return (
    <LabelledIcon label={t("autopilotMode")} className="marker-autopilot" testId="autopilot-icon">
      <AutopilotGlyph />
    </LabelledIcon>
  );
}

export function AttentionIndicator({ task }: { task: Task }) {
  if (task.pendingAction === "CLARIFICATION") {
    return (
      <LabelledIcon label={t("questionPending")} className="marker-question" testId="question-indicator">
        <QuestionGlyph />
      </LabelledIcon>
    );
  }
  if (task.pendingAction === "PERMISSION") {
    return (
      <LabelledIcon label={t("permissionPending")} className="marker-permission" testId="question-indicator">
        <ShieldGlyph />
      </LabelledIcon>
    );
  }
  if (task.pendingAction === "BUDGET_REACHED") {
    return (
      <LabelledIcon label={t("budgetReached")} className="marker-budget" testId="budget-indicator">
        <CoinGlyph />
      </LabelledIcon>
    );
  }
  return null;
}

export function CompletionHint({ compact = false }: { compact?: boolean }) {
  if (compact) {
    return (
      <LabelledIcon label={t("completionPending")} className="marker-completion" testId="completion-hint">
        <FlagGlyph />
      </LabelledIcon>
    );
  }
  return (
    <span className="hint-completion" data-testid="completion-hint">
      <FlagGlyph /> {t("completionPending")}
    </span>
  );
}

/** Where the task's agent runs when it is boxed, or which worker capability its queued turn waits for. */
export function PlacementMarker({ task }: { task: Task }) {
  const placement = task.placement;
  if (task.pendingAction === "WAITING_FOR_WORKER" && placement?.waitingFor.length) {
    return (
      <span className="placement placement-waiting" role="status" data-testid="placement-waiting">
        {t("waitingForWorker", { capabilities: placement.waitingFor.join(", ") })}
      </span>
    );
  }
  if (placement?.executor === "docker" || placement?.executor === "sandbox") {
    const where = placement.executor === "docker" ? `docker ${placement.boxId?.slice(0, 12) ?? ""}` : "sandbox";
    return (
      <span className="placement muted" title={t("runsOnWorker", { worker: placement.worker ?? "" })} data-testid="placement">
        {where} · {placement.worker}
      </span>
    );
  }
  return null;
}

export function TaskMarkers({ task, completion }: { task: Task; completion: boolean }) {
  return (
    <span className="markers">
      {task.autopilot && <AutopilotIcon />}
      <AttentionIndicator task={task} />
      {completion && task.pendingAction !== "CLARIFICATION" && <CompletionHint compact />}
      <PlacementMarker task={task} />
    </span>
  );
}
