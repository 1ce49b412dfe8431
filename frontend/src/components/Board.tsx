// The board: a workflow's steps as columns; cards move live, by drag or by the keyboard.
import { createContext, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { Task, Workflow, WorkflowStep } from "../api/ops";
import { errorText } from "../api/graphql";
import { t, tn } from "../i18n";
import { useNow } from "../hooks/useNow";
import { app, loadMoreTasks, moveTask, refetchTasks } from "../state/app";
import { cardStatus, completionPending, timeAgo } from "../state/derive";
import { useStore } from "../state/store";
import { toast } from "../state/toasts";
import { linkClick, taskPath } from "../router";
import { Dialog } from "./Dialog";
import { TaskMarkers } from "./TaskBadges";
import { PullRequestBadges } from "./ship/PullRequestBadge";
import { LoadState } from "./LoadState";
import { NewTaskDialog } from "./NewTaskDialog";
import { TaskCost } from "./usage/TaskCost";
import { FIRST_TASK, Onboarding } from "./Onboarding";

const DRAG_TYPE = "application/x-kandev-task";

/** How every move on the board starts (drag, keyboard, the Move-to menu): through the confirmation rule. */
const RequestMove = createContext<(taskId: string, step: WorkflowStep) => void>(() => {});

/** A move restarts a task's agent when the step starts agents on entry and the task has run before: ask first. */
function needsConfirmation(task: Task | undefined, step: WorkflowStep): boolean {
  return Boolean(task && step.autoStartsAgent && task.activity.hasRun && task.workflowStepId !== step.id);
}

export function Board() {
  const workflows = useStore(app, (s) => s.workflows);
  const workspace = useStore(app, (s) => s.workspaces.find((w) => w.id === s.workspaceId));
  const tasks = useStore(app, (s) => s.tasks);
  const load = useStore(app, (s) => s.tasksLoad);
  const error = useStore(app, (s) => s.tasksError);
  const [workflowId, setWorkflowId] = useState<string | null>(null);
  const [creating, setCreating] = useState<false | "blank" | "first">(false);
  const [confirming, setConfirming] = useState<{ task: Task; step: WorkflowStep } | null>(null);
  const requestMove = (taskId: string, step: WorkflowStep) => {
    const task = app.get().tasks[taskId];
    if (task && needsConfirmation(task, step)) setConfirming({ task, step });
    else void move(taskId, step);
  };
  // On a phone the board shows one column at a time, picked with the tabs above it.
  const [shownStep, setShownStep] = useState<string | null>(null);
  const workflow: Workflow | undefined =
    workflows.find((w) => w.id === workflowId) ??
    workflows.find((w) => w.id === workspace?.defaultWorkflowId) ??
    workflows[0];

  const byStep = useMemo(() => {
    const map = new Map<string, Task[]>();
    for (const task of Object.values(tasks)) {
      if (task.archivedAt || task.workflowId !== workflow?.id) continue;
      const list = map.get(task.workflowStepId) ?? [];
      list.push(task);
      map.set(task.workflowStepId, list);
    }
    // Newest first, as the columns' pages come: scrolling down brings older cards.
    for (const list of map.values()) list.sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
    return map;
  }, [tasks, workflow?.id]);

  const steps = workflow?.steps ?? [];
  const shown = steps.find((s) => s.id === shownStep)?.id ?? (steps.find((s) => s.isStartStep) ?? steps[0])?.id;
  const swipe = useSwipe((direction) => {
    const next = steps[steps.findIndex((s) => s.id === shown) + direction];
    if (next) setShownStep(next.id);
  });

  if (!workflow) return <p className="muted pad">This workspace has no workflow.</p>;

  return (
    <section className="board-page" aria-labelledby="board-title">
      <div className="toolbar">
        <h1 id="board-title" className="page-title">
          {workflow.name}
        </h1>
        {workflows.length > 1 && (
          <label className="field-inline">
            <span className="sr-only">Workflow</span>
            <select className="input input-small" value={workflow.id} onChange={(e) => setWorkflowId(e.target.value)} data-testid="board-workflow">
              {workflows.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <span className="spacer" />
        <button type="button" className="btn btn-primary" onClick={() => setCreating("blank")} data-testid="new-task">
          New task
        </button>
      </div>
      {load === "error" && <LoadState state="error" what="tasks" error={error} onRetry={() => void refetchTasks()} />}
      {load === "ready" && Object.keys(tasks).length === 0 && <Onboarding onTryIt={() => setCreating("first")} />}
      {load === "loading" && Object.keys(tasks).length === 0 ? (
        <LoadState state="loading" what="tasks" />
      ) : (
        <>
          <StepTabs steps={workflow.steps} counts={byStep} shown={shown} onShow={setShownStep} />
          <RequestMove.Provider value={requestMove}>
            <div className="board" data-testid="board" {...swipe}>
              {workflow.steps.map((step) => (
                <Column key={step.id} step={step} steps={workflow.steps} tasks={byStep.get(step.id) ?? []} hiddenOnPhone={step.id !== shown} />
              ))}
            </div>
          </RequestMove.Provider>
        </>
      )}
      <NewTaskDialog
        key={creating || "closed"}
        open={creating !== false}
        onClose={() => setCreating(false)}
        workflow={workflow}
        initial={creating === "first" ? FIRST_TASK : undefined}
      />
      <Dialog open={confirming !== null} title={t("confirmMoveTitle")} onClose={() => setConfirming(null)} testId="confirm-move">
        {confirming && (
          <>
            <p>{t("confirmMoveText", { task: confirming.task.title, step: confirming.step.name })}</p>
            <div className="form-actions">
              <button type="button" className="btn" onClick={() => setConfirming(null)} data-testid="confirm-move-cancel">
                {t("cancel")}
              </button>
              <button
                type="button"
                className="btn btn-primary"
                data-testid="confirm-move-ok"
                onClick={() => {
                  void move(confirming.task.id, confirming.step);
                  setConfirming(null);
                }}
              >
                {t("confirmMove")}
              </button>
            </div>
          </>
        )}
      </Dialog>
    </section>
  );
}

// How far a finger must travel sideways, and how much more sideways than down, for a swipe: a tap, a scroll
// down the column or a slightly slanted one never changes the column.
const SWIPE_PX = 60;

/** On a phone, swiping the board sideways shows the next or previous column, as its tab would. */
function useSwipe(onSwipe: (direction: 1 | -1) => void) {
  const start = useRef<{ x: number; y: number } | null>(null);
  return {
    onTouchStart: (e: React.TouchEvent) => {
      const touch = e.touches[0];
      start.current = e.touches.length === 1 && touch ? { x: touch.clientX, y: touch.clientY } : null;
    },
    onTouchEnd: (e: React.TouchEvent) => {
      const from = start.current;
      const touch = e.changedTouches[0];
      start.current = null;
      if (!from || !touch) return;
      const dx = touch.clientX - from.x;
      if (Math.abs(dx) >= SWIPE_PX && Math.abs(dx) > 2 * Math.abs(touch.clientY - from.y)) onSwipe(dx < 0 ? 1 : -1);
    },
  };
}

/** The phone's column picker (hidden on wider screens, where every column shows). */
function StepTabs(props: { steps: WorkflowStep[]; counts: Map<string, Task[]>; shown: string | undefined; onShow: (id: string) => void }) {
  const strip = useRef<HTMLDivElement>(null);
  // A swipe may pick a column whose tab is scrolled out of the strip: bring it in.
  useEffect(() => {
    strip.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [props.shown]);
  return (
    <div className="board-tabs" role="tablist" aria-label="Board columns" data-testid="board-tabs" ref={strip}>
      {props.steps.map((step) => (
        <button
          key={step.id}
          type="button"
          role="tab"
          aria-selected={step.id === props.shown}
          aria-controls={`column-${step.id}`}
          className={step.id === props.shown ? "board-tab is-current" : "board-tab"}
          onClick={() => props.onShow(step.id)}
          data-testid="board-tab"
          data-step-id={step.id}
        >
          {step.name} <span className="board-tab-count">{props.counts.get(step.id)?.length ?? 0}</span>
        </button>
      ))}
    </div>
  );
}

function Column({ step, steps, tasks, hiddenOnPhone }: { step: WorkflowStep; steps: WorkflowStep[]; tasks: Task[]; hiddenOnPhone: boolean }) {
  const [over, setOver] = useState(false);
  const requestMove = useContext(RequestMove);
  const headingId = `col-${step.id}`;
  const live = useStore(app, (s) => s.tasksLoad === "ready");
  const paging = useStore(app, (s) => s.columns[step.id]);
  const shown = !paging ? "…" : paging.hasNextPage ? `${tasks.length}+` : String(tasks.length);
  // A column reads its own pages: its first once the task list is live, the next when its end scrolls into view.
  useEffect(() => {
    if (live && !paging) void loadMoreTasks(step.id);
  }, [live, paging, step.id]);
  const end = useRef<HTMLLIElement | null>(null);
  useEffect(() => {
    const sentinel = end.current;
    if (!sentinel || !paging?.hasNextPage || paging.loading || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void loadMoreTasks(step.id);
    });
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [paging, step.id]);
  return (
    <section
      className={`column${over ? " is-over" : ""}${step.allowManualMove ? "" : " no-drop"}${hiddenOnPhone ? " hidden-on-phone" : ""}`}
      id={`column-${step.id}`}
      aria-labelledby={headingId}
      data-testid="column"
      data-step-id={step.id}
      data-step-name={step.name}
      onDragOver={(e) => {
        if (!step.allowManualMove || !e.dataTransfer.types.includes(DRAG_TYPE)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "move";
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        setOver(false);
        const taskId = e.dataTransfer.getData(DRAG_TYPE);
        if (!taskId || !step.allowManualMove) return;
        e.preventDefault();
        requestMove(taskId, step);
      }}
    >
      <header className="column-head">
        <h2 id={headingId}>{step.name}</h2>
        <span className="count" aria-label={`${shown} tasks`}>
          {shown}
        </span>
        {step.autoAdvanceRequiresSignal && (
          <span className="step-flag" title="Advances when the agent signals completion">
            waits for signal
          </span>
        )}
      </header>
      <ul className="cards" data-testid="cards">
        {tasks.map((task) => (
          <Card key={task.id} task={task} step={step} steps={steps} />
        ))}
        {paging?.hasNextPage && (
          <li ref={end} className="cards-more">
            <button
              type="button"
              className="btn btn-small"
              data-testid="load-more"
              disabled={paging.loading}
              onClick={() => void loadMoreTasks(step.id)}
            >
              {paging.loading ? "Loading…" : "Show older tasks"}
            </button>
          </li>
        )}
      </ul>
    </section>
  );
}

async function move(taskId: string, step: WorkflowStep) {
  try {
    await moveTask(taskId, step.id);
  } catch (error) {
    toast(`Could not move the task to ${step.name}: ${errorText(error)}`);
  }
}

function Card({ task, step, steps }: { task: Task; step: WorkflowStep; steps: WorkflowStep[] }) {
  const completion = completionPending(task);
  const requestMove = useContext(RequestMove);
  const now = useNow();
  const status = cardStatus(task);
  const { agentName, lastActivityAt, preview } = task.activity;
  const changes = task.changeStats;
  const index = steps.findIndex((s) => s.id === step.id);
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (!e.altKey || (e.key !== "ArrowLeft" && e.key !== "ArrowRight")) return;
    const direction = e.key === "ArrowLeft" ? -1 : 1;
    for (let i = index + direction; i >= 0 && i < steps.length; i += direction) {
      if (steps[i].allowManualMove) {
        e.preventDefault();
        requestMove(task.id, steps[i]);
        return;
      }
    }
  };
  return (
    <li
      className={`card card-tone-${status.tone}`}
      draggable
      data-testid="task-card"
      data-task-id={task.id}
      onDragStart={(e) => {
        e.dataTransfer.setData(DRAG_TYPE, task.id);
        e.dataTransfer.effectAllowed = "move";
      }}
      onKeyDown={onKeyDown}
    >
      <a
        className="card-title"
        href={taskPath(task.id)}
        onClick={linkClick(taskPath(task.id))}
        aria-keyshortcuts="Alt+ArrowLeft Alt+ArrowRight"
      >
        {task.title}
      </a>
      {(agentName || lastActivityAt) && (
        <div className="card-agent">
          {agentName && (
            <span className="card-agent-name" data-testid="card-agent">
              {agentName}
            </span>
          )}
          {lastActivityAt && (
            <time className="card-time" dateTime={lastActivityAt} title={new Date(lastActivityAt).toLocaleString()} data-testid="card-time">
              {timeAgo(lastActivityAt, now)}
            </time>
          )}
          <TaskCost task={task} />
        </div>
      )}
      {preview && (
        <p className="card-preview" title={preview} data-testid="card-preview">
          {preview}
        </p>
      )}
      {changes && changes.files > 0 && (
        <p className="card-changes" data-testid="card-changes">
          <span aria-hidden="true">{tn("cardChanges", changes.files, { add: changes.additions, del: changes.deletions })}</span>
          <span className="sr-only">{tn("cardChangesLabel", changes.files, { add: changes.additions, del: changes.deletions })}</span>
        </p>
      )}
      <PullRequestBadges task={task} />
      <div className="card-meta">
        <span className={`card-status status-${status.tone}`} data-testid="card-status">
          {status.label}
        </span>
        <span className="card-step" data-testid="card-step">
          {step.name}
        </span>
        <TaskMarkers task={task} completion={completion} />
        <span className="spacer" />
        <label className="move">
          <span className="sr-only">Move “{task.title}” to step</span>
          <select
            className="move-select"
            value=""
            data-testid="move-select"
            onChange={(e) => {
              const target = steps.find((s) => s.id === e.target.value);
              if (target) requestMove(task.id, target);
            }}
          >
            <option value="" disabled>
              {t("moveTo")}
            </option>
            {steps.map((s) => (
              <option key={s.id} value={s.id} disabled={s.id === step.id || !s.allowManualMove}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      </div>
    </li>
  );
}
