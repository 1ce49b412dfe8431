// How full the agent's context window is: what the newest turn that told it reported (contextUsed / contextSize),
// read again when a turn starts or ends and every few seconds while one runs (agents report it as they go).
import { useEffect, useId, useState } from "react";
import { gql } from "../../api/graphql";
import type { Turn } from "../../api/ops";
import { TURN_CONTEXT } from "../../api/usageOps";
import { t } from "../../i18n";
import { exactTokens, percent, tokens } from "./figures";
import "./usage.css";

const RUNNING_REFRESH_MS = 5_000;

interface Context {
  sessionId: string;
  used: number;
  size: number;
  model: string | null;
}

export function ContextGauge({ sessionId, turns }: { sessionId: string | null; turns: readonly Turn[] }) {
  const [context, setContext] = useState<Context | null>(null);
  const id = useId();
  const latest = turns.reduce<Turn | null>((newest, turn) => (newest && newest.seq > turn.seq ? newest : turn), null);
  const running = latest?.state === "RUNNING";
  useEffect(() => {
    if (!sessionId || !latest) return;
    let cancelled = false;
    const load = async () => {
      try {
        const data = await gql(TURN_CONTEXT, { id: sessionId });
        const told = data.session.turns
          .filter((turn) => turn.usage?.contextSize && turn.usage.contextUsed !== null)
          .sort((a, b) => b.seq - a.seq)[0]?.usage;
        if (cancelled) return;
        setContext(told ? { sessionId, used: told.contextUsed ?? 0, size: told.contextSize ?? 0, model: told.model } : null);
      } catch {
        /* the gauge keeps what it showed: the next turn event or tick reads again */
      }
    };
    void load();
    const timer = running ? setInterval(() => void load(), RUNNING_REFRESH_MS) : undefined;
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
    // A turn's id and state stand for the turn list: the gauge reads again when the newest turn starts or ends.
  }, [sessionId, latest?.id, latest?.state, running]);
  if (!context || context.sessionId !== sessionId) return null;
  const { used, size, model } = context;
  const detail = t("contextDetail", { used: exactTokens(used), size: exactTokens(size) }) + (model ? ` · ${model}` : "");
  return (
    <div className="context-gauge" data-testid="context-gauge" data-used={used} data-size={size} title={detail}>
      <label htmlFor={id}>{t("contextWindow")}</label>
      <meter id={id} min={0} max={size} low={size * 0.6} high={size * 0.85} optimum={0} value={Math.min(used, size)} aria-describedby={`${id}-detail`} />
      <span className="context-gauge-figure" aria-hidden="true">
        {percent(used / size)} · {tokens(used)}/{tokens(size)}
      </span>
      <span id={`${id}-detail`} className="sr-only">
        {percent(used / size)}: {detail}
      </span>
    </div>
  );
}
