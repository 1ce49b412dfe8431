// /stats: what the workspace's agents did and cost over the last days, from the `usage` query — turns a day and how
// many ended well, then tokens and cost by agent and by automation. A chunk of its own (most visits never open it);
// each chart is drawn by the rich-output chart (uPlot, its own chunk too) with its numbers in a table beside it.
import { useEffect, useId, useState } from "react";
import { errorText, gql } from "../../api/graphql";
import { USAGE, type UsageRow } from "../../api/usageOps";
import type { UsageGroupBy } from "../../gql/graphql";
import { t, type StringKey } from "../../i18n";
import { app } from "../../state/app";
import { automations } from "../../state/automations";
import { useStore } from "../../state/store";
import { LoadState } from "../LoadState";
import { Chart, type ChartBlock } from "../RichOutput";
import { exactTokens, percent, tokens, usd } from "./figures";
import "./usage.css";

const DAY_MS = 86_400_000;
const PERIODS = [7, 30, 90];
const DAY_LABEL = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });

interface Totals {
  byDay: UsageRow[];
  byAgent: UsageRow[];
  byAutomation: UsageRow[];
}

/** The last `days` UTC days, today included: [from, to) and each day's key (YYYY-MM-DD, as the server groups). */
function period(days: number): { from: Date; to: Date; keys: string[] } {
  const today = new Date();
  const to = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1));
  const from = new Date(to.getTime() - days * DAY_MS);
  const keys = Array.from({ length: days }, (_, i) => new Date(from.getTime() + i * DAY_MS).toISOString().slice(0, 10));
  return { from, to, keys };
}

function bar(title: string, summary: string, labels: string[], series: ChartBlock["series"]): ChartBlock {
  return { type: "chart", chart_type: "bar", title, summary, labels, series };
}

function dayCharts(rows: UsageRow[], keys: string[]): ChartBlock[] {
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const days = keys.map((key) => byKey.get(key));
  const labels = keys.map((key) => DAY_LABEL.format(new Date(`${key}T00:00:00Z`)));
  const turns = bar(t("statsTurnsPerDay"), t("statsTurnsPerDaySummary"), labels, [
    { label: t("statsTurns"), values: days.map((d) => d?.turns ?? 0) },
    { label: t("statsCompleted"), values: days.map((d) => d?.completedTurns ?? 0) },
    { label: t("statsFailed"), values: days.map((d) => d?.failedTurns ?? 0) },
  ]);
  // Bars, which grow from zero: a rate read against a line's padded axis looks higher than it is.
  const success = bar(t("statsSuccessRate"), t("statsSuccessRateSummary"), labels, [
    { label: t("statsSuccessPercent"), values: days.map((d) => (d?.turns ? Math.round((1000 * d.completedTurns) / d.turns) / 10 : null)) },
  ]);
  return [turns, success];
}

function groupCharts(rows: UsageRow[], name: (key: string) => string, what: { tokens: StringKey; cost: StringKey; summary: StringKey }): ChartBlock[] {
  const named = rows.filter((r) => r.key !== null).sort((a, b) => b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens));
  if (named.length === 0) return [];
  const labels = named.map((r) => name(r.key as string));
  return [
    bar(t(what.tokens), t(what.summary), labels, [
      { label: t("statsInput"), values: named.map((r) => r.inputTokens) },
      { label: t("statsOutput"), values: named.map((r) => r.outputTokens) },
    ]),
    bar(t(what.cost), t(what.summary), labels, [{ label: t("statsCostUsd"), values: named.map((r) => Math.round(r.costUsd * 1e4) / 1e4) }]),
  ];
}

function sum(rows: UsageRow[], field: "turns" | "completedTurns" | "failedTurns" | "inputTokens" | "outputTokens" | "cacheReadTokens" | "costUsd"): number {
  return rows.reduce((total, r) => total + r[field], 0);
}

export default function StatsPage() {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const automationsById = useStore(automations, (s) => s.byId);
  const [days, setDays] = useState(30);
  const [totals, setTotals] = useState<Totals | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const id = useId();
  const { from, to, keys } = period(days);
  const range = `${from.toISOString()}/${to.toISOString()}`;

  useEffect(() => {
    if (!workspaceId) return;
    let cancelled = false;
    setError(null);
    const [start, end] = range.split("/");
    const read = (by: UsageGroupBy) => gql(USAGE, { w: workspaceId, from: start, to: end, by }).then((d) => d.usage);
    Promise.all([read("DAY"), read("AGENT"), read("AUTOMATION")])
      .then(([byDay, byAgent, byAutomation]) => !cancelled && setTotals({ byDay, byAgent, byAutomation }))
      .catch((err: unknown) => !cancelled && setError(errorText(err)));
    return () => {
      cancelled = true;
    };
  }, [workspaceId, range, nonce]);

  const turns = totals ? sum(totals.byDay, "turns") : 0;
  const charts = totals
    ? [
        ...dayCharts(totals.byDay, keys),
        ...groupCharts(totals.byAgent, (key) => key || t("statsUnnamedAgent"), { tokens: "statsTokensByAgent", cost: "statsCostByAgent", summary: "statsByAgentSummary" }),
        ...groupCharts(totals.byAutomation, (key) => automationsById[key]?.name ?? t("statsGoneAutomation"), {
          tokens: "statsTokensByAutomation",
          cost: "statsCostByAutomation",
          summary: "statsByAutomationSummary",
        }),
      ]
    : [];

  return (
    <section className="stats-page pad" aria-labelledby={`${id}-title`} data-testid="stats-page">
      <div className="toolbar">
        <h1 id={`${id}-title`} className="page-title">
          {t("stats")}
        </h1>
        <span className="spacer" />
        <label className="field-inline">
          <span>{t("statsPeriod")}</span>
          <select className="input input-small" value={days} onChange={(e) => setDays(Number(e.target.value))} data-testid="stats-period">
            {PERIODS.map((n) => (
              <option key={n} value={n}>
                {t("statsLastDays", { n })}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? (
        <LoadState state="error" what={t("stats")} error={error} onRetry={() => setNonce((n) => n + 1)} />
      ) : !totals ? (
        <LoadState state="loading" what={t("stats")} />
      ) : (
        <>
          <dl className="rich-metrics stats-metrics" data-testid="stats-metrics">
            <div className="rich-metric" data-testid="stats-turns">
              <dt>{t("statsTurns")}</dt>
              <dd className="rich-metric-value">{exactTokens(turns)}</dd>
              <dd className="rich-metric-detail">{t("statsCompletedFailed", { completed: exactTokens(sum(totals.byDay, "completedTurns")), failed: exactTokens(sum(totals.byDay, "failedTurns")) })}</dd>
            </div>
            <div className="rich-metric" data-testid="stats-success">
              <dt>{t("statsSuccessRate")}</dt>
              <dd className="rich-metric-value">{turns ? percent(sum(totals.byDay, "completedTurns") / turns) : "—"}</dd>
            </div>
            <div className="rich-metric" data-testid="stats-tokens">
              <dt>{t("statsTokens")}</dt>
              <dd className="rich-metric-value">{tokens(sum(totals.byDay, "inputTokens") + sum(totals.byDay, "outputTokens"))}</dd>
              <dd className="rich-metric-detail">
                {t("statsTokensDetail", { input: tokens(sum(totals.byDay, "inputTokens")), output: tokens(sum(totals.byDay, "outputTokens")), cache: tokens(sum(totals.byDay, "cacheReadTokens")) })}
              </dd>
            </div>
            <div className="rich-metric" data-testid="stats-cost">
              <dt>{t("statsCost")}</dt>
              <dd className="rich-metric-value">{usd(sum(totals.byDay, "costUsd"))}</dd>
            </div>
          </dl>
          {turns === 0 ? (
            <p className="muted" data-testid="stats-empty">
              {t("statsNoTurns")}
            </p>
          ) : (
            <div className="stats-charts">
              {charts.map((chart) => (
                <Chart key={chart.title} chart={chart} chartKey={`stats/${chart.title}`} />
              ))}
            </div>
          )}
        </>
      )}
    </section>
  );
}
