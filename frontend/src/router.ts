// Client-side routes: "/" is the board, "/tasks/<id>" a task, "/settings/<section>" the settings, "/stats" the Stats page. The server
// answers index.html for all of them.
import { useSyncExternalStore } from "react";

export type Route =
  | { name: "board" }
  | { name: "task"; taskId: string }
  | { name: "settings"; section: string }
  | { name: "automationEditor"; automationId: string | null }
  | { name: "authoring"; taskId: string | null }
  | { name: "agenda" }
  | { name: "automation"; automationId: string }
  | { name: "run"; runId: string }
  | { name: "stats" };

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => listeners.forEach((l) => l()));

function parse(path: string): Route {
  if (/^\/stats\/?$/.test(path)) return { name: "stats" };
  if (/^\/automations\/new\/?$/.test(path)) return { name: "automationEditor", automationId: null };
  const authoring = /^\/automations\/describe(?:\/([^/]+))?\/?$/.exec(path);
  if (authoring) return { name: "authoring", taskId: authoring[1] ? decodeURIComponent(authoring[1]) : null };
  const editing = /^\/automations\/([^/]+)\/edit\/?$/.exec(path);
  if (editing) return { name: "automationEditor", automationId: decodeURIComponent(editing[1]) };
  const match = /^\/tasks\/([^/]+)\/?$/.exec(path);
  if (match) return { name: "task", taskId: decodeURIComponent(match[1]) };
  const settings = /^\/settings(?:\/([^/]+))?\/?$/.exec(path);
  if (settings) return { name: "settings", section: settings[1] ?? "workspace" };
  // /runs and /runs/<id> are older links: the agenda and the run's automation answer them.
  if (/^\/(?:automations|runs)\/?$/.test(path)) return { name: "agenda" };
  const automation = /^\/automations\/([^/]+)\/?$/.exec(path);
  if (automation) return { name: "automation", automationId: decodeURIComponent(automation[1]) };
  const run = /^\/runs\/([^/]+)\/?$/.exec(path);
  if (run) return { name: "run", runId: decodeURIComponent(run[1]) };
  return { name: "board" };
}

let current = { path: "", route: parse(window.location.pathname) };

function snapshot(): Route {
  if (current.path !== window.location.pathname) {
    current = { path: window.location.pathname, route: parse(window.location.pathname) };
  }
  return current.route;
}

export function useRoute(): Route {
  return useSyncExternalStore((l) => {
    listeners.add(l);
    return () => listeners.delete(l);
  }, snapshot);
}

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === window.location.pathname + window.location.search) return;
  if (options.replace) window.history.replaceState(null, "", path);
  else window.history.pushState(null, "", path);
  listeners.forEach((l) => l());
  window.scrollTo(0, 0);
}

export function taskPath(taskId: string): string {
  return `/tasks/${encodeURIComponent(taskId)}`;
}

/** For <a href> clicks: plain left clicks navigate in-app, modified clicks open as usual. */
export function linkClick(path: string) {
  return (event: React.MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(path);
  };
}
