// The loading and error states every request shows.
export function LoadState(props: {
  state: "loading" | "error";
  what: string;
  error?: string | null;
  onRetry?: () => void;
}) {
  if (props.state === "loading") {
    return (
      <p className="load" role="status" aria-live="polite">
        <span className="spinner" aria-hidden="true" /> Loading {props.what}…
      </p>
    );
  }
  return (
    <div className="load load-error" role="alert">
      <p>
        Could not load {props.what}
        {props.error ? `: ${props.error}` : "."}
      </p>
      {props.onRetry && (
        <button type="button" className="btn btn-small" onClick={props.onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function InlineError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="inline-error" role="alert">
      {error}
    </p>
  );
}
