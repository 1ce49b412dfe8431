// Shared clocks: "3 min ago" labels on the cards tick every 30 s, countdowns and elapsed times every second;
// one timer per tick length however many components show a time.
import { useCallback, useSyncExternalStore } from "react";

const CARDS_TICK_MS = 30_000;
const clocks = new Map<number, { listeners: Set<() => void>; timer?: ReturnType<typeof setInterval> }>();

function subscribeTo(tick: number, listener: () => void): () => void {
  let clock = clocks.get(tick);
  if (!clock) clocks.set(tick, (clock = { listeners: new Set() }));
  const own = clock;
  own.listeners.add(listener);
  own.timer ??= setInterval(() => own.listeners.forEach((l) => l()), tick);
  return () => {
    own.listeners.delete(listener);
    if (own.listeners.size === 0 && own.timer) {
      clearInterval(own.timer);
      own.timer = undefined;
    }
  };
}

/** The current time in ms, rounded to `tick` (so every read within one tick agrees, as React compares
 * snapshots) and refreshed every `tick` while anything renders with it. */
export function useNow(tick = CARDS_TICK_MS): number {
  const subscribe = useCallback((listener: () => void) => subscribeTo(tick, listener), [tick]);
  return useSyncExternalStore(subscribe, () => Math.floor(Date.now() / tick) * tick);
}
