// One form action at a time: busy while it runs, its error (a typed API error's message) kept for display.
import { useCallback, useState } from "react";
import { errorText } from "../../api/graphql";

export function useAction(): {
  busy: boolean;
  error: string | null;
  run: (action: () => Promise<unknown>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export function FormError({ error, testId }: { error: string | null; testId?: string }) {
  if (!error) return null;
  return (
    <p className="form-error" role="alert" data-testid={testId}>
      {error}
    </p>
  );
}
