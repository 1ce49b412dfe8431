// One request at a time for a group of buttons: a click while one is in flight sends nothing (a code host must
// never see two requests for one click), and a refusal is kept beside the action it answered, to show in place.
import { useCallback, useRef, useState } from "react";
import { errorText } from "../api/graphql";

export interface RequestGate {
  /** The action in flight, if any: every button of the group is disabled meanwhile. */
  busy: string | null;
  /** Runs `call` unless another action is in flight; its answer, or undefined when refused or not run. */
  run: <T>(action: string, call: () => Promise<T>) => Promise<T | undefined>;
  /** The refusal of `action`'s last run, if it was refused. */
  errorOf: (action: string) => string | null;
}

export function useRequest(): RequestGate {
  // A ref, not state: two clicks in one frame both see it before React re-renders.
  const inFlight = useRef(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<{ action: string; message: string } | null>(null);

  const run = useCallback(async <T>(action: string, call: () => Promise<T>): Promise<T | undefined> => {
    if (inFlight.current) return undefined;
    inFlight.current = true;
    setBusy(action);
    setFailure(null);
    try {
      return await call();
    } catch (err) {
      setFailure({ action, message: errorText(err) });
      return undefined;
    } finally {
      inFlight.current = false;
      setBusy(null);
    }
  }, []);

  const errorOf = useCallback((action: string) => (failure?.action === action ? failure.message : null), [failure]);
  return { busy, run, errorOf };
}
