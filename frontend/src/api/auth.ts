// The personal access token (KANDEV_AUTH=on). Kept in localStorage so a reload stays signed in.
const KEY = "kandev.token";

type Listener = () => void;
const listeners = new Set<Listener>();
const tokenListeners = new Set<Listener>();
let needed = false;

export function getToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    // private mode: the token lives as long as the page
  }
  needed = false;
  tokenListeners.forEach((l) => l());
  listeners.forEach((l) => l());
}

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

let rejected = false;

/** The server refused our credentials: the app shows the token form (saying so if one was tried). */
export function markTokenNeeded(): void {
  if (needed) return;
  rejected = getToken() !== null;
  if (rejected) {
    try {
      localStorage.removeItem(KEY);
    } catch {
      /* nothing stored */
    }
  }
  needed = true;
  listeners.forEach((l) => l());
}

export function tokenNeeded(): boolean {
  return needed;
}

export function onAuthChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Only when a new token is set (the socket must reconnect with it). */
export function onTokenChange(listener: Listener): () => void {
  tokenListeners.add(listener);
  return () => tokenListeners.delete(listener);
}

/** Whether the token form appears because a token was refused (rather than missing). */
export function tokenWasRejected(): boolean {
  return rejected;
}
