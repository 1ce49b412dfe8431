// A task's changed files, loaded once and kept current from taskEvents: a CHANGES event refetches the list and
// drops the hunks held for the files it names (all of them when it names none), so an open diff refreshes.
import { useCallback, useEffect, useRef, useState } from "react";
import { errorText, gql } from "../api/graphql";
import { onReconnect } from "../api/live";
import { FILE_HUNKS, FILES_PAGE, TASK_CHANGES } from "../api/changesOps";
import type { FileChange, FileWithHunks, RepositoryChanges } from "../api/changesOps";
import { onTaskEvent } from "../state/app";

/** A changed file within its repository. */
export interface FileRef {
  repositoryId: string;
  path: string;
}

export function fileKey(ref: FileRef): string {
  return `${ref.repositoryId}\u0000${ref.path}`;
}

const ALL = "*";

/** How many times `ref`'s diff is known to have changed since the panel opened. */
export function fileVersion(versions: Record<string, number>, ref: FileRef): number {
  return (versions[fileKey(ref)] ?? 0) + (versions[ALL] ?? 0);
}

export interface HunksState {
  file: FileWithHunks | null;
  load: "loading" | "ready" | "error";
  error: string | null;
}

export interface ChangesState {
  load: "loading" | "ready" | "error";
  error: string | null;
  reason: string | null;
  repositories: RepositoryChanges[];
  /** Each repository's files, every page loaded so far. */
  files: Record<string, FileChange[]>;
  /** Bumped when a file's diff changed: views holding its hunks read them again. */
  versions: Record<string, number>;
  reload: () => void;
  loadMore: (repositoryId: string) => Promise<void>;
  /** Reflect a reviewed mark before the list is read again. */
  markReviewed: (ref: FileRef, reviewed: boolean) => void;
}

const REFRESH_GAP_MS = 300;

export function useChanges(taskId: string): ChangesState {
  const [state, setState] = useState<Omit<ChangesState, "reload" | "loadMore" | "markReviewed">>({
    load: "loading",
    error: null,
    reason: null,
    repositories: [],
    files: {},
    versions: {},
  });
  const [nonce, setNonce] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const current = useRef(taskId);
  current.current = taskId;

  useEffect(() => {
    let cancelled = false;
    (async () => {
      try {
        const data = await gql(TASK_CHANGES, { id: taskId, first: FILES_PAGE, after: null });
        if (cancelled) return;
        const repositories = data.task.changes.repositories;
        setState((s) => ({
          ...s,
          load: "ready",
          error: null,
          reason: data.task.changes.reason ?? null,
          repositories,
          files: Object.fromEntries(repositories.map((r) => [r.repositoryId, r.files.nodes])),
        }));
      } catch (err) {
        if (cancelled) return;
        setState((s) => ({ ...s, load: s.load === "ready" ? "ready" : "error", error: errorText(err) }));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [taskId, nonce]);

  const refresh = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setNonce((n) => n + 1);
    }, REFRESH_GAP_MS);
  }, []);

  useEffect(
    () =>
      onTaskEvent((event) => {
        if (event.kind !== "CHANGES" || event.task?.id !== current.current) return;
        const named = event.changedFiles ?? [];
        setState((s) => {
          const versions = { ...s.versions };
          // None named: too many to list, every file may have changed.
          for (const key of named.length ? named.map(fileKey) : [ALL]) versions[key] = (versions[key] ?? 0) + 1;
          return { ...s, versions };
        });
        refresh();
      }),
    [refresh],
  );
  // Back from a dropped connection: anything may have changed meanwhile.
  useEffect(
    () =>
      onReconnect(() => {
        setState((s) => ({ ...s, versions: { ...s.versions, [ALL]: (s.versions[ALL] ?? 0) + 1 } }));
        refresh();
      }),
    [refresh],
  );
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);

  const loadMore = useCallback(
    async (repositoryId: string) => {
      const repository = state.repositories.find((r) => r.repositoryId === repositoryId);
      const after = repository?.files.pageInfo.endCursor;
      if (!repository?.files.pageInfo.hasNextPage || !after) return;
      const data = await gql(TASK_CHANGES, { id: taskId, first: FILES_PAGE, after });
      const next = data.task.changes.repositories.find((r) => r.repositoryId === repositoryId);
      if (!next || current.current !== taskId) return;
      setState((s) => ({
        ...s,
        repositories: s.repositories.map((r) => (r.repositoryId === repositoryId ? { ...r, files: next.files } : r)),
        files: { ...s.files, [repositoryId]: [...(s.files[repositoryId] ?? []), ...next.files.nodes] },
      }));
    },
    [state.repositories, taskId],
  );

  const markReviewed = useCallback((ref: FileRef, reviewed: boolean) => {
    setState((s) => ({
      ...s,
      files: {
        ...s.files,
        [ref.repositoryId]: (s.files[ref.repositoryId] ?? []).map((f) => (f.path === ref.path ? { ...f, reviewed } : f)),
      },
    }));
  }, []);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { ...state, reload, loadMore, markReviewed };
}

/** One file's hunks (`context` unchanged lines around each change), read again whenever `version` moves. */
export function useFileHunks(
  taskId: string,
  file: FileChange | null,
  repositoryId: string | null,
  version: number,
  includeLarge: boolean,
): HunksState {
  const [state, setState] = useState<HunksState>({ file: null, load: "loading", error: null });
  const path = file?.path ?? null;
  const oldPath = file?.oldPath ?? null;
  useEffect(() => {
    if (!path || !repositoryId) return;
    let cancelled = false;
    setState((s) => (s.file?.path === path ? s : { file: null, load: "loading", error: null }));
    readFile(taskId, repositoryId, path, oldPath, 3, includeLarge).then(
      (found) => !cancelled && setState({ file: found, load: "ready", error: null }),
      (err) => !cancelled && setState({ file: null, load: "error", error: errorText(err) }),
    );
    return () => {
      cancelled = true;
    };
  }, [taskId, repositoryId, path, oldPath, version, includeLarge]);
  return state;
}

/** A changed file with its hunks; null when it is no longer changed. */
export async function readFile(
  taskId: string,
  repositoryId: string,
  path: string,
  oldPath: string | null,
  context: number,
  includeLarge = false,
): Promise<FileWithHunks | null> {
  const paths = oldPath && oldPath !== path ? [path, oldPath] : [path];
  const data = await gql(FILE_HUNKS, { id: taskId, paths, scope: "ALL", context, large: includeLarge });
  const repository = data.task.changes.repositories.find((r) => r.repositoryId === repositoryId);
  return repository?.files.nodes.find((f) => f.path === path) ?? null;
}
