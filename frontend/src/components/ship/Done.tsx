// What an action of the Ship panel answered, shown where it was asked: its outcome, or its refusal's message.
import type { RequestGate } from "../../hooks/useRequest";
import { t, type StringKey } from "../../i18n";

/** `warn`: it was done, but left something to do (an update that left conflicts). */
export function Done({ text, testId, warn = false }: { text: string | null; testId: string; warn?: boolean }) {
  if (!text) return null;
  return (
    <p className={`ship-done small${warn ? " ship-done-warn" : ""}`} role="status" data-testid={testId}>
      {text}
    </p>
  );
}

/** The refusal of `action`'s last run, as `label` ("Could not … : {error}"). */
export function Refusal({ gate, action, label }: { gate: RequestGate; action: string; label: StringKey }) {
  const error = gate.errorOf(action);
  if (!error) return null;
  return (
    <p className="inline-error" role="alert" data-testid={`${action}-error`}>
      {t(label, { error })}
    </p>
  );
}
