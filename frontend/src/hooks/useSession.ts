// One session's transcript, turns and queue: loaded once, then kept live from sessionEvents.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { errorText, gql } from "../api/graphql";
import { subscribe } from "../api/live";
import { OLDER_MESSAGES, SESSION, SESSION_EVENTS, SESSION_STATUS } from "../api/ops";
import type { Message, QueuedPrompt, SessionState, Turn } from "../api/ops";

/** Messages per transcript page. */
export const TRANSCRIPT_PAGE = 100;

export interface SessionView {
  load: "loading" | "ready" | "error";
  error: string | null;
  liveError: string | null;
  state: SessionState | null;
  /** Session.completionPending, null until loaded. */
  completionPending: boolean | null;
  messages: Message[];
  turns: Turn[];
  queued: QueuedPrompt[];
  reload: () => void;
  refreshStatus: () => void;
  /** Older messages exist than the loaded ones; loadOlder fetches the next page of them. */
  hasOlder: boolean;
  loadingOlder: boolean;
  loadOlder: () => Promise<void>;
}

function merged(held: Record<string, Message>, messages: readonly Message[]): Record<string, Message> {
  const next = { ...held };
  for (const message of messages) {
    const known = next[message.id];
    // An event newer than the page wins.
    if (!known || known.updatedAt <= message.updatedAt) next[message.id] = message;
  }
  return next;
}

function upsertTurn(turns: Turn[], turn: Turn): Turn[] {
  const rest = turns.filter((t) => t.id !== turn.id);
  return [...rest, turn].sort((a, b) => a.seq - b.seq);
}

export function useSession(sessionId: string | null): SessionView {
  const [byId, setById] = useState<Record<string, Message>>({});
  const [turns, setTurns] = useState<Turn[]>([]);
  const [queued, setQueued] = useState<QueuedPrompt[]>([]);
  const [state, setState] = useState<SessionState | null>(null);
  const [completionPending, setCompletionPending] = useState<boolean | null>(null);
  const [load, setLoad] = useState<SessionView["load"]>("loading");
  const [error, setError] = useState<string | null>(null);
  const [liveError, setLiveError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const [hasOlder, setHasOlder] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  // The session whose events the server confirmed it listens to: the snapshot loads only after that.
  const [listening, setListening] = useState<string | null>(null);
  const statusTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const idRef = useRef(sessionId);
  idRef.current = sessionId;

  const refreshStatus = useCallback(() => {
    if (statusTimer.current) clearTimeout(statusTimer.current);
    statusTimer.current = setTimeout(async () => {
      const id = idRef.current;
      if (!id) return;
      try {
        const data = await gql(SESSION_STATUS, { id });
        if (idRef.current !== id) return;
        setCompletionPending(data.session.completionPending);
        setTurns(data.session.turns);
        setQueued(data.session.queuedPrompts);
        setState(data.session.state);
      } catch {
        /* the next event or reconnect refetches */
      }
    }, 80);
  }, []);

  // Live first, then the snapshot, so nothing that happens during the load is lost: the server's
  // SUBSCRIBED message (first on every subscription, again after each reconnect) (re)loads the snapshot.
  useEffect(() => {
    setById({});
    setHasOlder(false);
    setTurns([]);
    setQueued([]);
    setState(null);
    setCompletionPending(null);
    setLiveError(null);
    if (!sessionId) return;
    setLoad("loading");
    return subscribe(
      SESSION_EVENTS,
      { s: sessionId },
      ({ sessionEvents: event }) => {
        setLiveError(null);
        setState(event.session.state);
        setCompletionPending(event.session.completionPending);
        if (event.kind === "SUBSCRIBED") {
          setListening(sessionId);
          setNonce((n) => n + 1);
          return;
        }
        if (event.message) {
          const message = event.message;
          setById((m) => {
            const held = m[message.id];
            if (held && held.updatedAt > message.updatedAt) return m;
            return { ...m, [message.id]: message };
          });
        }
        if (event.turn) {
          const turn = event.turn;
          setTurns((t) => upsertTurn(t, turn));
        }
        if (event.kind === "PROMPT_QUEUED" || event.kind === "TURN_STARTED" || event.kind === "TURN_ENDED") {
          refreshStatus();
        }
      },
      (message) => {
        setLiveError(message);
        setListening(sessionId); // not live, but the snapshot still shows
      },
    );
  }, [sessionId, refreshStatus]);

  useEffect(() => {
    if (!sessionId || listening !== sessionId) return;
    let cancelled = false;
    (async () => {
      try {
        const data = await gql(SESSION, { id: sessionId, page: TRANSCRIPT_PAGE });
        if (cancelled) return;
        setById((m) => merged(m, data.session.messages.nodes));
        setHasOlder(data.session.messages.pageInfo.hasNextPage);
        setTurns(data.session.turns);
        setQueued(data.session.queuedPrompts);
        setState(data.session.state);
        setCompletionPending(data.session.completionPending);
        setLoad("ready");
        setError(null);
      } catch (err) {
        if (cancelled) return;
        setError(errorText(err));
        setLoad((l) => (l === "ready" ? l : "error"));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [sessionId, listening, nonce]);

  useEffect(() => () => {
    if (statusTimer.current) clearTimeout(statusTimer.current);
  }, []);

  const messages = useMemo(() => Object.values(byId).sort((a, b) => a.seq - b.seq), [byId]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  const oldest = messages[0]?.id ?? null;
  const loadOlder = useCallback(async () => {
    const id = idRef.current;
    if (!id || !oldest || loadingOlder) return;
    setLoadingOlder(true);
    try {
      const data = await gql(OLDER_MESSAGES, { id, page: TRANSCRIPT_PAGE, before: oldest });
      if (idRef.current !== id) return;
      setById((m) => merged(m, data.session.messages.nodes));
      setHasOlder(data.session.messages.pageInfo.hasNextPage);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoadingOlder(false);
    }
  }, [oldest, loadingOlder]);
  return {
    load,
    error,
    liveError,
    state,
    completionPending,
    messages,
    turns,
    queued,
    reload,
    refreshStatus,
    hasOlder,
    loadingOlder,
    loadOlder,
  };
}
