// The sidebar (desktop) and the task switcher sheet (mobile): every live task, one row each.
import { useMemo, useState } from "react";
import { app } from "../state/app";
import { completionPending, stateLabel, stepOf, switcherOrder } from "../state/derive";
import { useStore } from "../state/store";
import { linkClick, taskPath, useRoute } from "../router";
import { TaskMarkers } from "./TaskBadges";
import { LoadState } from "./LoadState";
import { refetchTasks } from "../state/app";

export function TaskSwitcher({ onNavigate, testId }: { onNavigate?: () => void; testId: string }) {
  const tasks = useStore(app, (s) => s.tasks);
  const workflows = useStore(app, (s) => s.workflows);
  const load = useStore(app, (s) => s.tasksLoad);
  const error = useStore(app, (s) => s.tasksError);
  const route = useRoute();
  const [filter, setFilter] = useState("");
  const rows = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const live = Object.values(tasks).filter((t) => !t.archivedAt);
    const ordered = switcherOrder(live);
    return needle ? ordered.filter(({ task }) => task.title.toLowerCase().includes(needle)) : ordered;
  }, [tasks, filter]);
  const currentId = route.name === "task" ? route.taskId : null;

  return (
    <nav className="switcher" aria-label="Tasks" data-testid={testId}>
      <div className="switcher-head">
        <label className="sr-only" htmlFor={`${testId}-filter`}>
          Filter tasks
        </label>
        <input
          id={`${testId}-filter`}
          className="input input-small"
          type="search"
          placeholder="Filter tasks"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      </div>
      {load === "loading" && !rows.length ? (
        <LoadState state="loading" what="tasks" />
      ) : load === "error" ? (
        <LoadState state="error" what="tasks" error={error} onRetry={() => void refetchTasks()} />
      ) : rows.length === 0 ? (
        <p className="muted switcher-empty">{filter ? "No task matches." : "No tasks yet."}</p>
      ) : (
        <ul className="switcher-list">
          {rows.map(({ task, depth }) => {
            const step = stepOf(workflows, task);
            const completion = completionPending(task);
            return (
              <li
                key={task.id}
                className={`switch-row${task.id === currentId ? " is-current" : ""}`}
                style={{ paddingLeft: `${0.5 + Math.min(depth, 3) * 0.9}rem` }}
                data-testid="task-row"
                data-task-id={task.id}
              >
                <a
                  className="switch-link"
                  href={taskPath(task.id)}
                  aria-current={task.id === currentId ? "page" : undefined}
                  onClick={(e) => {
                    linkClick(taskPath(task.id))(e);
                    onNavigate?.();
                  }}
                >
                  <span className="switch-title">{task.title}</span>
                  <span className="switch-meta">
                    <span className={`state-dot state-${task.state.toLowerCase()}`} aria-hidden="true" />
                    <span data-testid="task-state">{stateLabel(task.state)}</span>
                    {step && <span className="muted"> · {step.name}</span>}
                  </span>
                </a>
                <TaskMarkers task={task} completion={completion} />
              </li>
            );
          })}
        </ul>
      )}
    </nav>
  );
}
