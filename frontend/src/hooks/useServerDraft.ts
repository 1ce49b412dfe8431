// A form's draft of a value the server may change meanwhile (another tab, another person): while the draft
// is unedited it follows the server's value; once edited it is the user's until they save or leave.
import { useCallback, useState, type Dispatch, type SetStateAction } from "react";

interface Held<T> {
  key: string;
  draft: T;
}

export function useServerDraft<T>(server: T): [T, Dispatch<SetStateAction<T>>] {
  const key = JSON.stringify(server);
  const [held, setHeld] = useState<Held<T>>({ key, draft: server });
  let current = held;
  if (held.key !== key) {
    const unedited = JSON.stringify(held.draft) === held.key;
    current = { key, draft: unedited ? server : held.draft };
    setHeld(current); // adjusting state while rendering: React re-renders at once, before painting
  }
  const setDraft = useCallback<Dispatch<SetStateAction<T>>>(
    (next) => setHeld((h) => ({ ...h, draft: typeof next === "function" ? (next as (d: T) => T)(h.draft) : next })),
    [],
  );
  return [current.draft, setDraft];
}
