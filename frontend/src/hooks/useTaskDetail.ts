// A task with its sessions, refetched when a task event names it and after a reconnect.
// Refetches are throttled (one in flight, at most one queued), never starved by an event stream.
import { useCallback, useEffect, useRef, useState } from "react";
import { errorCode, errorText, gql } from "../api/graphql";
import { onReconnect } from "../api/live";
import { TASK } from "../api/ops";
import type { TaskDetail } from "../api/ops";
import { app } from "../state/app";
import { useStore } from "../state/store";

export interface TaskDetailState {
  detail: TaskDetail | null;
  load: "loading" | "ready" | "error";
  error: string | null;
  notFound: boolean;
  reload: () => void;
}

const MIN_GAP_MS = 250;

export function useTaskDetail(taskId: string): TaskDetailState {
  const version = useStore(app, (s) => s.taskVersion[taskId] ?? 0);
  const [detail, setDetail] = useState<TaskDetail | null>(null);
  const [load, setLoad] = useState<TaskDetailState["load"]>("loading");
  const [error, setError] = useState<string | null>(null);
  const [notFound, setNotFound] = useState(false);
  const [nonce, setNonce] = useState(0);
  const current = useRef(taskId);
  const inFlight = useRef(false);
  const queued = useRef(false);
  const lastStart = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const run = useCallback(async () => {
    const id = current.current;
    inFlight.current = true;
    queued.current = false;
    lastStart.current = Date.now();
    try {
      const data = await gql(TASK, { id });
      if (current.current !== id) return;
      setDetail(data.task);
      setLoad("ready");
      setError(null);
    } catch (err) {
      if (current.current !== id) return;
      if (errorCode(err) === "NOT_FOUND") setNotFound(true);
      setError(errorText(err));
      setLoad((l) => (l === "ready" ? l : "error"));
    } finally {
      inFlight.current = false;
      if (queued.current) schedule();
    }
  }, []);

  const schedule = useCallback(() => {
    if (inFlight.current) {
      queued.current = true;
      return;
    }
    if (timer.current) return; // a fetch is already due
    const wait = Math.max(0, lastStart.current + MIN_GAP_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      void run();
    }, wait);
  }, [run]);

  useEffect(() => {
    current.current = taskId;
    setDetail(null);
    setLoad("loading");
    setNotFound(false);
    setError(null);
    lastStart.current = 0;
  }, [taskId]);

  useEffect(() => {
    schedule();
  }, [taskId, version, nonce, schedule]);

  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  useEffect(() => onReconnect(() => setNonce((n) => n + 1)), []);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { detail, load, error, notFound, reload };
}
