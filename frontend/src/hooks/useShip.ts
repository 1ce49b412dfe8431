// What the Ship panel shows, kept current from taskEvents: the task's pull requests, fix rounds and settings
// (read again on its PULL_REQUEST and UPDATED events) and its uncommitted files (on its CHANGES events).
import { useCallback, useEffect, useRef, useState } from "react";
import { errorText, gql } from "../api/graphql";
import { onReconnect } from "../api/live";
import { SHIP_CHANGES, SHIP_TASK } from "../api/shipOps";
import type { GitIdentity, PendingRepository, ShipTask } from "../api/shipOps";
import { onTaskEvent } from "../state/app";

export interface Loaded<T> {
  data: T | null;
  load: "loading" | "ready" | "error";
  error: string | null;
}

export interface ShipState {
  task: Loaded<ShipTask>;
  identity: GitIdentity | null;
  /** The uncommitted files (and how far ahead of its base) of each repository, by repository id. */
  pending: Loaded<Record<string, PendingRepository>>;
  pendingReason: string | null;
  reload: () => void;
}

const REFRESH_GAP_MS = 300;
const LOADING = { data: null, load: "loading", error: null } as const;

/** Reads `read` now and whenever `bump` is called (at most once per REFRESH_GAP_MS); keeps the last good answer. */
function useRefreshed<T>(taskId: string, read: (id: string) => Promise<T>): [Loaded<T>, () => void] {
  const [state, setState] = useState<Loaded<T>>(LOADING);
  const [nonce, setNonce] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    let cancelled = false;
    read(taskId).then(
      (data) => !cancelled && setState({ data, load: "ready", error: null }),
      (err) => !cancelled && setState((s) => ({ ...s, load: s.data ? "ready" : "error", error: errorText(err) })),
    );
    return () => {
      cancelled = true;
    };
  }, [taskId, nonce, read]);
  useEffect(() => setState(LOADING), [taskId]);
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);
  const bump = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setNonce((n) => n + 1);
    }, REFRESH_GAP_MS);
  }, []);
  return [state, bump];
}

async function readShip(id: string) {
  return gql(SHIP_TASK, { id });
}

async function readPending(id: string) {
  const data = await gql(SHIP_CHANGES, { id });
  return data.task.changes;
}

export function useShip(taskId: string): ShipState {
  const [ship, bumpShip] = useRefreshed(taskId, readShip);
  const [pending, bumpPending] = useRefreshed(taskId, readPending);
  const current = useRef(taskId);
  current.current = taskId;

  useEffect(
    () =>
      onTaskEvent((event) => {
        if (event.task?.id !== current.current) return;
        if (event.kind === "CHANGES") bumpPending();
        else if (event.kind === "PULL_REQUEST" || event.kind === "UPDATED") bumpShip();
      }),
    [bumpShip, bumpPending],
  );
  useEffect(
    () =>
      onReconnect(() => {
        bumpShip();
        bumpPending();
      }),
    [bumpShip, bumpPending],
  );
  const reload = useCallback(() => {
    bumpShip();
    bumpPending();
  }, [bumpShip, bumpPending]);

  const byRepository = pending.data
    ? Object.fromEntries(pending.data.repositories.map((r) => [r.repositoryId, r]))
    : null;
  return {
    task: { ...ship, data: ship.data?.task ?? null },
    identity: ship.data?.account.gitIdentity ?? null,
    pending: { ...pending, data: byRepository },
    pendingReason: pending.data?.reason ?? null,
    reload,
  };
}
