// A task's review threads: loaded once, then kept live from taskEvents (REVIEW_THREAD carries a thread as it is
// now, REVIEW_THREAD_DELETED one that went), and read again after a reconnect. Mutations answer the thread as it
// is now; `apply` shows that before the event arrives.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { errorText, gql } from "../api/graphql";
import { onReconnect } from "../api/live";
import { REVIEW_THREADS } from "../api/changesOps";
import type { ReviewThread } from "../api/changesOps";
import { onTaskEvent } from "../state/app";

export interface ReviewThreadsState {
  threads: ReviewThread[];
  load: "loading" | "ready" | "error";
  error: string | null;
  apply: (thread: ReviewThread) => void;
  remove: (threadId: string) => void;
}

function newer(held: ReviewThread | undefined, incoming: ReviewThread): boolean {
  return !held || held.updatedAt <= incoming.updatedAt;
}

/** Open (not resolved) threads with something the agent has not been sent: never sent, or a person wrote since. */
export function pendingForAgent(thread: ReviewThread): boolean {
  if (thread.state !== "OPEN") return false;
  if (!thread.sentAt) return true;
  const sent = thread.sentAt;
  return thread.comments.some((c) => c.author.kind === "PERSON" && c.createdAt > sent);
}

export function useReviewThreads(taskId: string): ReviewThreadsState {
  const [byId, setById] = useState<Record<string, ReviewThread>>({});
  const [load, setLoad] = useState<ReviewThreadsState["load"]>("loading");
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const gone = useRef(new Set<string>());
  const current = useRef(taskId);
  current.current = taskId;

  useEffect(() => {
    let cancelled = false;
    gql(REVIEW_THREADS, { id: taskId }).then(
      (data) => {
        if (cancelled) return;
        setById((held) => {
          const next: Record<string, ReviewThread> = {};
          for (const thread of data.task.reviewThreads) {
            if (gone.current.has(thread.id)) continue;
            next[thread.id] = newer(held[thread.id], thread) ? thread : held[thread.id];
          }
          return next;
        });
        setLoad("ready");
        setError(null);
      },
      (err) => {
        if (cancelled) return;
        setError(errorText(err));
        setLoad((l) => (l === "ready" ? l : "error"));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [taskId, nonce]);

  const apply = useCallback((thread: ReviewThread) => {
    setById((held) => (newer(held[thread.id], thread) ? { ...held, [thread.id]: thread } : held));
  }, []);
  const remove = useCallback((threadId: string) => {
    gone.current.add(threadId);
    setById((held) => {
      const next = { ...held };
      delete next[threadId];
      return next;
    });
  }, []);

  useEffect(
    () =>
      onTaskEvent((event) => {
        if (event.task?.id !== current.current || !event.reviewThread) return;
        if (event.kind === "REVIEW_THREAD") apply(event.reviewThread);
        else if (event.kind === "REVIEW_THREAD_DELETED") remove(event.reviewThread.id);
      }),
    [apply, remove],
  );
  useEffect(() => onReconnect(() => setNonce((n) => n + 1)), []);

  const threads = useMemo(
    () => Object.values(byId).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)),
    [byId],
  );
  return { threads, load, error, apply, remove };
}
