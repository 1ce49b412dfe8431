// One shared clock for "3 min ago" labels: a single timer however many cards show a time.
import { useSyncExternalStore } from "react";

const TICK_MS = 30_000;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    timer = setInterval(() => {
      for (const l of listeners) l();
    }, TICK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

// Rounded to the tick, so every read within one tick agrees (React compares snapshots).
const snapshot = () => Math.floor(Date.now() / TICK_MS) * TICK_MS;

/** The current time in ms (to 30 s), refreshed every 30 s while anything renders with it. */
export function useNow(): number {
  return useSyncExternalStore(subscribe, snapshot);
}
