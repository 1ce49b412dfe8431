// An automation's schedule: a preset or free cron text, checked by the server as it is typed (what it means
// and its next five fires, shown in the chosen timezone), and the timezone.
import { useEffect, useId, useState } from "react";
import { gql, errorText } from "../../api/graphql";
import { CRON_CHECK, type CronCheck } from "../../api/automationEditorOps";

export const PRESETS: { label: string; expression: string }[] = [
  { label: "Every 30 minutes", expression: "@every 30m" },
  { label: "Every hour", expression: "@hourly" },
  { label: "Every day at 09:00", expression: "0 9 * * *" },
  { label: "Weekdays at 09:00", expression: "0 9 * * 1-5" },
  { label: "Mondays at 09:00", expression: "0 9 * * 1" },
];
const CUSTOM = "custom";

function zones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  return intl.supportedValuesOf?.("timeZone") ?? ["UTC"];
}

/** A fire time as the chosen timezone reads it (the server answers in UTC). */
export function inZone(iso: string, timezone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: timezone || "UTC" }).format(new Date(iso));
  } catch {
    return iso;
  }
}

/** The server's reading of an expression, asked again (debounced) whenever it or the timezone changes. */
export function useCronCheck(expression: string, timezone: string): { check: CronCheck | null; failed: string | null } {
  const [check, setCheck] = useState<CronCheck | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    if (!expression.trim()) {
      setCheck(null);
      return;
    }
    let current = true;
    const timer = window.setTimeout(() => {
      gql(CRON_CHECK, { e: expression, tz: timezone })
        .then((data) => current && (setCheck(data.validateCron), setFailed(null)))
        .catch((error) => current && setFailed(errorText(error)));
    }, 250);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [expression, timezone]);
  return { check: expression.trim() ? check : null, failed };
}

export function ScheduleField(props: {
  expression: string;
  timezone: string;
  onChange: (value: { expression: string; timezone: string }) => void;
}) {
  const id = useId();
  const preset = PRESETS.find((p) => p.expression === props.expression)?.expression ?? CUSTOM;
  const [custom, setCustom] = useState(preset === CUSTOM);
  const { check, failed } = useCronCheck(props.expression, props.timezone);
  const set = (patch: Partial<{ expression: string; timezone: string }>) =>
    props.onChange({ expression: props.expression, timezone: props.timezone, ...patch });
  return (
    <fieldset className="fieldset" data-testid="schedule-field">
      <legend>Schedule</legend>
      <label className="field">
        <span>Repeats</span>
        <select
          className="input"
          value={custom ? CUSTOM : preset}
          onChange={(e) => {
            const value = e.target.value;
            setCustom(value === CUSTOM);
            if (value !== CUSTOM) set({ expression: value });
          }}
          data-testid="schedule-preset"
        >
          {PRESETS.map((p) => (
            <option key={p.expression} value={p.expression}>
              {p.label}
            </option>
          ))}
          <option value={CUSTOM}>Custom (cron)</option>
        </select>
      </label>
      {custom && (
        <label className="field">
          <span>Cron expression</span>
          <input
            className="input mono"
            value={props.expression}
            onChange={(e) => set({ expression: e.target.value })}
            placeholder="*/15 9-17 * * 1-5, @daily or @every 2h"
            aria-describedby={`${id}-check`}
            data-testid="schedule-expression"
          />
        </label>
      )}
      <label className="field">
        <span>Timezone</span>
        <input
          className="input"
          list={`${id}-zones`}
          value={props.timezone}
          onChange={(e) => set({ timezone: e.target.value })}
          placeholder="UTC"
          data-testid="schedule-timezone"
        />
        <datalist id={`${id}-zones`}>
          {zones().map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
      </label>
      <div id={`${id}-check`} className="schedule-check" aria-live="polite" data-testid="schedule-check">
        {failed ? (
          <p className="form-error">{failed}</p>
        ) : !check ? null : check.valid ? (
          <>
            <p data-testid="schedule-description">{check.description}</p>
            <p className="muted">Next fires ({props.timezone || "UTC"}):</p>
            <ol className="next-fires" data-testid="schedule-next-fires">
              {check.nextFires.map((fire) => (
                <li key={fire}>
                  <time dateTime={fire}>{inZone(fire, props.timezone)}</time>
                </li>
              ))}
            </ol>
          </>
        ) : (
          <p className="form-error" role="alert" data-testid="schedule-error">
            {check.error}
          </p>
        )}
      </div>
    </fieldset>
  );
}
