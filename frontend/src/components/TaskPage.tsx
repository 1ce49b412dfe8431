// A task: its transcript live from sessionEvents, what it waits on, its status row and composer.
import { lazy, Suspense, useEffect, useMemo, useState } from "react";
import { errorText, gql, unwrap } from "../api/graphql";
import { ARCHIVE_TASK } from "../api/ops";
import type { SessionSummary, Task } from "../api/ops";
import { TERMINAL_SESSION_STATES } from "../api/ops";
import { useSession } from "../hooks/useSession";
import { SessionMcpServers } from "./SessionMcpServers";
import { useTaskDetail } from "../hooks/useTaskDetail";
import { Checkouts } from "./Checkouts";
import { app, applyTask, moveTask } from "../state/app";
import { activeSession, completionPending, stateLabel, stepOf } from "../state/derive";
import { useStore } from "../state/store";
import { toast } from "../state/toasts";
import { linkClick, navigate, taskPath } from "../router";
import { ClarificationCards, ParentWait, PermissionCards } from "./ActionCards";
import { Composer } from "./Composer";
import { LoadState } from "./LoadState";
import { SubtaskDialog } from "./NewTaskDialog";
import { PlacementDialog } from "./PlacementDialog";
import { StatusRow } from "./StatusRow";
import { TaskMarkers } from "./TaskBadges";
import { Transcript } from "./Transcript";
import { BudgetReached, TaskUsageLine } from "./usage/TaskUsageSlots";
import { t } from "../i18n";
import { Counts } from "./changes/Counts";

// The Changes panel and its diff viewer are a chunk of their own, loaded when the panel first shows.
const ChangesPanel = lazy(() => import("./changes/ChangesPanel"));
const ShipPanel = lazy(() => import("./ship/ShipPanel"));
type Tab = "conversation" | "changes" | "ship";

export function TaskPage({ taskId }: { taskId: string }) {
  const { detail, load, error, notFound, reload } = useTaskDetail(taskId);
  const live = useStore(app, (s) => s.tasks[taskId]);
  const workflows = useStore(app, (s) => s.workflows);
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const allTasks = useStore(app, (s) => s.tasks);
  const [chosenSession, setChosenSession] = useState<string | null>(null);
  const [extraSession, setExtraSession] = useState<SessionSummary | null>(null);
  const [subtaskOpen, setSubtaskOpen] = useState(false);
  const [chosenTab, setChosenTab] = useState<Tab | null>(null);
  const [placementOpen, setPlacementOpen] = useState(false);

  useEffect(() => {
    setChosenSession(null);
    setExtraSession(null);
    setChosenTab(null);
  }, [taskId]);

  // The live row (from taskEvents) is fresher than the detail fetch for the fields both have.
  const task: Task | null = useMemo(() => {
    if (!detail) return live ?? null;
    if (live && live.updatedAt >= detail.updatedAt) return { ...detail, ...live };
    return detail;
  }, [detail, live]);

  const sessions = useMemo(() => {
    const list = detail?.sessions ?? [];
    if (extraSession && !list.some((s) => s.id === extraSession.id)) return [extraSession, ...list];
    return list;
  }, [detail, extraSession]);
  const selected = sessions.find((s) => s.id === chosenSession) ?? activeSession(sessions) ?? sessions[0];
  const view = useSession(selected?.id ?? null);
  const sessionState = view.state ?? selected?.state ?? null;
  const selectedLive = selected && !TERMINAL_SESSION_STATES.includes(sessionState ?? selected.state);
  const sendTarget = selectedLive ? selected : activeSession(sessions);
  const children = useMemo(
    () => Object.values(allTasks).filter((t) => t.parentId === taskId && !t.archivedAt),
    [allTasks, taskId],
  );

  if (!task) {
    if (notFound) {
      return (
        <div className="pad" role="alert">
          <h1 className="page-title">Task not found</h1>
          <p>It may have been deleted, or it belongs to a workspace you can't see.</p>
          <a href="/" onClick={linkClick("/")}>
            Back to the board
          </a>
        </div>
      );
    }
    return load === "error" ? <LoadState state="error" what="the task" error={error} onRetry={reload} /> : <LoadState state="loading" what="the task" />;
  }

  const step = stepOf(workflows, task);
  // Review first: a task waiting for review that changed something opens on its changes.
  const tab: Tab = chosenTab ?? (task.state === "REVIEW" && (task.changeStats?.files ?? 0) > 0 ? "changes" : "conversation");
  const workflow = workflows.find((w) => w.id === task.workflowId);
  const parent = task.parentId ? allTasks[task.parentId] : undefined;
  const completion = completionPending(task, sessionState ? { completionPending: view.completionPending } : null);
  // Idle: no turn runs, so where the task works may change.
  const idle = !["RUNNING", "STARTING"].includes(sessionState ?? "") && !["IN_PROGRESS", "SCHEDULING"].includes(task.state);

  const archive = async () => {
    try {
      const data = await gql(ARCHIVE_TASK, { id: task.id });
      const payload = unwrap(data.archiveTask);
      if (payload.task) applyTask(payload.task);
      toast(`Archived “${task.title}”`, "info");
      navigate("/");
    } catch (err) {
      toast(`Could not archive: ${errorText(err)}`);
    }
  };

  return (
    <section className="task-page" aria-labelledby="task-title" data-testid="task-page" data-task-id={task.id}>
      <header className="task-head">
        <nav className="crumbs" aria-label="Breadcrumb">
          <a href="/" onClick={linkClick("/")}>
            Board
          </a>
          {task.parentId && (
            <>
              <span aria-hidden="true"> / </span>
              <a href={taskPath(task.parentId)} onClick={linkClick(taskPath(task.parentId))}>
                {parent?.title ?? "Parent task"}
              </a>
            </>
          )}
        </nav>
        <div className="task-title-row">
          <h1 id="task-title" className="page-title">
            {task.title}
          </h1>
          <TaskMarkers task={task} completion={completion} />
        </div>
        <div className="task-placement">
          <Checkouts repositories={detail?.repositories} />
          {detail && idle && (
            <button type="button" className="btn-link small" onClick={() => setPlacementOpen(true)} data-testid="change-placement">
              {t("changePlacement")}
              <span className="sr-only"> {t("whereItWorks")}</span>
            </button>
          )}
        </div>
        <div className="task-actions">
          {workflow && (
            <label className="field-inline">
              <span>Step</span>
              <select
                className="input input-small"
                value={task.workflowStepId}
                data-testid="task-step-select"
                onChange={(e) => {
                  const target = workflow.steps.find((s) => s.id === e.target.value);
                  if (target)
                    moveTask(task.id, target.id).catch((err) => toast(`Could not move: ${errorText(err)}`));
                }}
              >
                {workflow.steps.map((s) => (
                  <option key={s.id} value={s.id} disabled={s.id !== task.workflowStepId && !s.allowManualMove}>
                    {s.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <span className="spacer" />
          <button type="button" className="btn btn-small" onClick={() => setSubtaskOpen(true)} data-testid="new-subtask">
            New subtask
          </button>
          <button type="button" className="btn btn-small" onClick={() => void archive()} data-testid="archive-task">
            Archive
          </button>
        </div>
        <TaskUsageLine task={task} sessionId={selected?.id ?? null} turns={view.turns} />
        {task.blockReason && <p className="notice">Blocked: {task.blockReason}</p>}
        {detail?.lastTurnError && sessionState !== "RUNNING" && (
          <p className="msg-error turn-error" role="alert" data-testid="turn-error">
            <strong>The last turn failed:</strong> {detail.lastTurnError.message}
          </p>
        )}
      </header>

      <div className="task-body">
        <div className="task-main" data-tab={tab}>
          <div className="task-tabs" role="tablist" aria-label={t("taskViews")}>
            <button
              type="button"
              role="tab"
              id="tab-conversation"
              aria-selected={tab === "conversation"}
              aria-controls="panel-conversation"
              className={`task-tab${tab === "conversation" ? " is-current" : ""}`}
              onClick={() => setChosenTab("conversation")}
              data-testid="tab-conversation"
            >
              {t("tabConversation")}
            </button>
            <button
              type="button"
              role="tab"
              id="tab-changes"
              aria-selected={tab === "changes"}
              aria-controls="panel-changes"
              className={`task-tab${tab === "changes" ? " is-current" : ""}`}
              onClick={() => setChosenTab("changes")}
              data-testid="tab-changes"
            >
              {t("tabChanges")}
              {task.changeStats && task.changeStats.files > 0 && (
                <Counts additions={task.changeStats.additions} deletions={task.changeStats.deletions} />
              )}
            </button>
            <button
              type="button"
              role="tab"
              id="tab-ship"
              aria-selected={tab === "ship"}
              aria-controls="panel-ship"
              className={`task-tab${tab === "ship" ? " is-current" : ""}`}
              onClick={() => setChosenTab("ship")}
              data-testid="tab-ship"
            >
              {t("tabShip")}
            </button>
          </div>
          {tab === "ship" ? (
            <div className="tab-panel" role="tabpanel" id="panel-ship" aria-labelledby="tab-ship">
              <Suspense fallback={<LoadState state="loading" what={t("shipWhat")} />}>
                <ShipPanel taskId={taskId} />
              </Suspense>
            </div>
          ) : tab === "changes" ? (
            <div className="tab-panel" role="tabpanel" id="panel-changes" aria-labelledby="tab-changes">
              <Suspense fallback={<LoadState state="loading" what={t("changesWhat")} />}>
                <ChangesPanel taskId={taskId} />
              </Suspense>
            </div>
          ) : (
            <div className="tab-panel" role="tabpanel" id="panel-conversation" aria-labelledby="tab-conversation">
              {sessions.length > 1 && (
                <div className="session-tabs" role="tablist" aria-label="Sessions">
                  {sessions.map((s) => (
                    <button
                      key={s.id}
                      type="button"
                      role="tab"
                      aria-selected={s.id === selected?.id}
                      className={`tab${s.id === selected?.id ? " is-current" : ""}`}
                      onClick={() => setChosenSession(s.id)}
                    >
                      {s.name || (s.isPrimary ? "Primary" : "Session")} · {stateLabel(s.state)}
                    </button>
                  ))}
                </div>
              )}
              {selected && workspaceId && <SessionMcpServers key={selected.id} workspaceId={workspaceId} sessionId={selected.id} />}
              {!detail ? (
                <div className="transcript">
                  {load === "error" ? (
                    <LoadState state="error" what="the task" error={error} onRetry={reload} />
                  ) : (
                    <LoadState state="loading" what="the task" />
                  )}
                </div>
              ) : selected ? (
                view.load === "error" ? (
                  <div className="transcript">
                    <LoadState state="error" what="the transcript" error={view.error} onRetry={view.reload} />
                  </div>
                ) : view.load === "loading" && view.messages.length === 0 ? (
                  <div className="transcript">
                    <LoadState state="loading" what="the transcript" />
                  </div>
                ) : (
                  <Transcript
                    messages={view.messages}
                    taskId={taskId}
                    state={sessionState}
                    hasOlder={view.hasOlder}
                    loadingOlder={view.loadingOlder}
                    onLoadOlder={() => void view.loadOlder()}
                  />
                )
              ) : (
                <div className="transcript transcript-empty">
                  <p className="muted pad">
                    No agent has worked on this task yet. Choose an agent below and start it
                    {detail?.prompt ? " with the task's prompt, or write a first prompt." : "."}
                  </p>
                  {detail?.prompt && <pre className="task-prompt">{detail.prompt}</pre>}
                </div>
              )}
            </div>
          )}
          {view.liveError && <p className="inline-error" role="alert">Live transcript stopped: {view.liveError}</p>}

          <div className="dock">
            <ParentWait task={task} />
            <PermissionCards task={task} />
            <ClarificationCards task={task} />
            <BudgetReached task={task} />
            {view.queued.length > 0 && (
              <details className="queued" data-testid="queued-prompts">
                <summary>{view.queued.length} queued message{view.queued.length === 1 ? "" : "s"}</summary>
                <ol>
                  {view.queued.map((q) => (
                    <li key={q.id}>{q.text}</li>
                  ))}
                </ol>
              </details>
            )}
            <StatusRow
              task={task}
              step={step}
              session={sendTarget}
              sessionState={sendTarget?.id === selected?.id ? sessionState : (sendTarget?.state ?? null)}
              queued={view.queued.length}
              completion={completion}
            />
            {detail && <Composer
              task={task}
              session={sendTarget}
              sessionState={sendTarget?.id === selected?.id ? sessionState : (sendTarget?.state ?? null)}
              onStarted={(s) => {
                setExtraSession(s);
                setChosenSession(s.id);
                reload();
              }}
              onSent={() => view.refreshStatus()}
            />}
          </div>
        </div>
        {children.length > 0 && (
          <aside className="task-side" aria-label="Subtasks">
            <h2>Subtasks</h2>
            <ul className="child-list">
              {children.map((c) => (
                <li key={c.id} data-testid="child-row">
                  <a href={taskPath(c.id)} onClick={linkClick(taskPath(c.id))}>
                    {c.title}
                  </a>
                  <span className="muted small"> {stateLabel(c.state)}</span>
                  <TaskMarkers task={c} completion={false} />
                </li>
              ))}
            </ul>
          </aside>
        )}
      </div>
      {placementOpen && detail && <PlacementDialog task={detail} onClose={() => setPlacementOpen(false)} onChanged={reload} />}
      <SubtaskDialog open={subtaskOpen} onClose={() => setSubtaskOpen(false)} parentId={task.id} />
    </section>
  );
}
