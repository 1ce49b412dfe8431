// The sidebar (desktop) and the task switcher sheet (mobile): the loaded live tasks, one row each. Only
// the rows in view are in the page, and scrolling near the end loads the next page of tasks.
import { useEffect, useMemo, useRef, useState, type RefObject } from "react";
import { app, loadMoreTasks } from "../state/app";
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
  const list = useRef<HTMLUListElement | null>(null);
  const { start, end, rowHeight } = useRowsInView(list, rows.length);
  const morePages = useStore(app, (s) => s.sidebar?.hasNextPage ?? false);
  useEffect(() => {
    if (morePages && end >= rows.length - OVERSCAN) void loadMoreTasks(null);
  }, [morePages, end, rows.length]);

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
        <ul className="switcher-list" ref={list}>
          {start > 0 && <li aria-hidden="true" style={{ height: start * rowHeight }} />}
          {rows.slice(start, end).map(({ task, depth }, offset) => {
            const step = stepOf(workflows, task);
            const completion = completionPending(task);
            return (
              <li
                key={task.id}
                className={`switch-row${task.id === currentId ? " is-current" : ""}`}
                style={{ paddingLeft: `${0.5 + Math.min(depth, 3) * 0.9}rem` }}
                data-testid="task-row"
                data-task-id={task.id}
                aria-setsize={rows.length}
                aria-posinset={start + offset + 1}
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
          {end < rows.length && <li aria-hidden="true" style={{ height: (rows.length - end) * rowHeight }} />}
        </ul>
      )}
    </nav>
  );
}

// Rows kept in the page beyond those in view, above and below.
const OVERSCAN = 15;
const ROW_ESTIMATE = 50;

/** The rows of `list` in view in its scrolling container, measured from the first row's height. */
function useRowsInView(list: RefObject<HTMLUListElement | null>, count: number) {
  const [range, setRange] = useState({ start: 0, end: 2 * OVERSCAN, rowHeight: ROW_ESTIMATE });
  useEffect(() => {
    const element = list.current;
    if (!element) return;
    const scroller = scrollingParent(element);
    const update = () => {
      const row = element.querySelector<HTMLElement>("[data-testid=task-row]");
      const rowHeight = row?.offsetHeight || ROW_ESTIMATE;
      const viewTop = scroller ? scroller.getBoundingClientRect().top : 0;
      const viewHeight = scroller ? scroller.clientHeight : window.innerHeight;
      const offset = element.getBoundingClientRect().top - viewTop; // negative once scrolled past the top
      const start = Math.max(0, Math.floor(-offset / rowHeight) - OVERSCAN);
      const end = Math.min(count, Math.ceil((viewHeight - offset) / rowHeight) + OVERSCAN);
      setRange((r) => (r.start === start && r.end === end && r.rowHeight === rowHeight ? r : { start, end, rowHeight }));
    };
    update();
    const target: HTMLElement | Window = scroller ?? window;
    target.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
    return () => {
      target.removeEventListener("scroll", update);
      window.removeEventListener("resize", update);
    };
  }, [list, count]);
  return { ...range, end: Math.min(range.end, count) };
}

function scrollingParent(element: HTMLElement): HTMLElement | null {
  for (let node = element.parentElement; node; node = node.parentElement) {
    const { overflowY } = getComputedStyle(node);
    if (overflowY === "auto" || overflowY === "scroll") return node;
  }
  return null;
}
