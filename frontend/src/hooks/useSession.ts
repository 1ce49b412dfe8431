// One session's transcript, turns and queue: loaded once, then kept live from sessionEvents.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { errorText, gql } from "../api/graphql";
import { subscribe } from "../api/live";
import { SESSION, SESSION_EVENTS, SESSION_STATUS } from "../api/ops";
import type { Message, QueuedPrompt, SessionState, Turn } from "../api/ops";

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
        const data = await gql(SESSION, { id: sessionId });
        if (cancelled) return;
        setById((m) => {
          const next = { ...m };
          for (const message of data.session.messages.nodes) {
            const held = next[message.id];
            // An event newer than the snapshot wins.
            if (!held || held.updatedAt <= message.updatedAt) next[message.id] = message;
          }
          return next;
        });
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
  return { load, error, liveError, state, completionPending, messages, turns, queued, reload, refreshStatus };
}
