// Live updates over graphql-transport-ws: one socket, automatic retries, a visible connection state,
// and a "reconnected" signal so views refetch what they may have missed while the socket was down.
import { createClient, type Client } from "graphql-ws";
import type { TypedDocumentString } from "../gql/graphql";
import { getToken, markTokenNeeded, onTokenChange } from "./auth";

export type LinkState = "connecting" | "connected" | "reconnecting" | "unauthorized";

type Listener = () => void;

let client: Client | null = null;
let state: LinkState = "connecting";
let everConnected = false;
const stateListeners = new Set<Listener>();
const reconnectListeners = new Set<Listener>();

// Every state the link went through, for tests and debugging (window.__kandevLinkStates).
const history: LinkState[] = [state];
(window as unknown as { __kandevLinkStates?: LinkState[] }).__kandevLinkStates = history;

function setState(next: LinkState): void {
  if (state === next) return;
  state = next;
  history.push(next);
  if (history.length > 50) history.shift();
  stateListeners.forEach((l) => l());
}

function socketUrl(): string {
  const { protocol, host } = window.location;
  return `${protocol === "https:" ? "wss:" : "ws:"}//${host}/graphql`;
}

const FORBIDDEN = 4403;
const UNAUTHORIZED = 4401;

function closeCode(event: unknown): number | undefined {
  return typeof event === "object" && event !== null && "code" in event ? (event as CloseEvent).code : undefined;
}

function makeClient(): Client {
  let connectedOnce = false;
  return createClient({
    url: socketUrl(),
    lazy: false,
    keepAlive: 10_000, // a ping every 10 s notices a dead socket without waiting for TCP
    retryAttempts: Number.POSITIVE_INFINITY,
    retryWait: async (retries) => {
      // 0.5 s, 1 s, 2 s … capped at 5 s, with jitter
      const base = Math.min(5000, 500 * 2 ** Math.min(retries, 4));
      await new Promise((r) => setTimeout(r, base / 2 + Math.random() * (base / 2)));
    },
    shouldRetry: (event) => {
      const code = closeCode(event);
      if (code === FORBIDDEN || code === UNAUTHORIZED) {
        markTokenNeeded();
        setState("unauthorized");
        return false;
      }
      return true;
    },
    connectionParams: () => {
      const token = getToken();
      return token ? { Authorization: `Bearer ${token}` } : {};
    },
    on: {
      connecting: () => setState(everConnected ? "reconnecting" : "connecting"),
      connected: () => {
        const again = connectedOnce || everConnected;
        connectedOnce = true;
        everConnected = true;
        setState("connected");
        if (again) reconnectListeners.forEach((l) => l());
      },
      closed: (event) => {
        const code = closeCode(event);
        if (code === FORBIDDEN || code === UNAUTHORIZED) {
          markTokenNeeded();
          setState("unauthorized");
          return;
        }
        if (everConnected) setState("reconnecting");
      },
    },
  });
}

function ensureClient(): Client {
  if (!client) client = makeClient();
  return client;
}

onTokenChange(() => {
  // A new token: start over with a fresh socket so connection_init carries it.
  if (client) {
    const old = client;
    client = null;
    void old.dispose();
  }
  if (state === "unauthorized") setState(everConnected ? "reconnecting" : "connecting");
  ensureClient();
});

export function linkState(): LinkState {
  return state;
}

export function onLinkState(listener: Listener): () => void {
  stateListeners.add(listener);
  return () => stateListeners.delete(listener);
}

/** Called after the socket comes back (and after a new token): refetch what may have been missed. */
export function onReconnect(listener: Listener): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

/** Subscribe; returns the unsubscribe function. Errors go to `onError` (the subscription then ends). */
export function subscribe<R, V extends Record<string, unknown>>(
  document: TypedDocumentString<R, V>,
  variables: V,
  onData: (data: R) => void,
  onError?: (message: string) => void,
): () => void {
  let active = true;
  let dispose: (() => void) | null = null;
  const start = () => {
    dispose = ensureClient().subscribe<R>(
      { query: document.toString(), variables },
      {
        next: (result) => {
          if (!active) return;
          if (result.errors?.length) onError?.(result.errors.map((e) => e.message).join("; "));
          else if (result.data) onData(result.data as R);
        },
        error: (err) => {
          if (!active) return;
          const message = Array.isArray(err)
            ? err.map((e: { message: string }) => e.message).join("; ")
            : err instanceof Error
              ? err.message
              : "The live connection closed.";
          onError?.(message);
        },
        complete: () => {},
      },
    );
  };
  start();
  // A new socket (new token) drops the old subscriptions: resubscribe on the new one.
  const off = onTokenChange(() => {
    if (!active) return;
    dispose?.();
    start();
  });
  return () => {
    active = false;
    off();
    dispose?.();
  };
}

/** Test and debugging hook: drop the socket as a network failure would. */
export function dropConnection(): void {
  client?.terminate();
}

(window as unknown as { __kandevDropConnection?: () => void }).__kandevDropConnection = dropConnection;
