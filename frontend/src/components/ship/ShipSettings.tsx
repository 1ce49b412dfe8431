// The task's shipping settings: fix failing checks (the agent is prompted with a failing check's log, at most so
// many rounds) and auto-merge once green and approved. Each change is saved in turn, shown as chosen meanwhile.
import { useEffect, useRef, useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import { LIMITS } from "../../api/limits";
import { UPDATE_TASK } from "../../api/ops";
import type { ShipTask } from "../../api/shipOps";
import { t } from "../../i18n";
import { applyTask } from "../../state/app";

const { minimum, maximum } = LIMITS.FixFailingChecksInput.maxRounds;
const ROUNDS = Array.from({ length: maximum - minimum + 1 }, (_, i) => minimum + i);

type Shown = { enabled: boolean; maxRounds: number; autoMerge: boolean };

export function ShipSettings({ task, onDone }: { task: ShipTask; onDone: () => void }) {
  const { enabled, maxRounds } = task.fixFailingChecks;
  const held: Shown = { enabled, maxRounds, autoMerge: task.autoMerge };
  const [shown, setShown] = useState<Shown>(held);
  const [error, setError] = useState<string | null>(null);
  // Changes go one after another, so the server ends with the last one chosen.
  const queue = useRef<Promise<void>>(Promise.resolve());
  // While changes wait to be saved, what is chosen stays shown: an earlier change's answer must not undo a later one.
  const pending = useRef(0);
  useEffect(() => {
    if (pending.current === 0) setShown({ enabled, maxRounds, autoMerge: task.autoMerge });
  }, [enabled, maxRounds, task.autoMerge]);

  const save = (next: Partial<Shown>) => {
    setShown((s) => ({ ...s, ...next }));
    setError(null);
    pending.current += 1;
    const { autoMerge, ...fix } = next;
    const i = { taskId: task.id, autoMerge: autoMerge ?? null, fixFailingChecks: Object.keys(fix).length ? fix : null };
    queue.current = queue.current.then(async () => {
      try {
        const answer = unwrap((await gql(UPDATE_TASK, { i })).updateTask);
        if (answer.task) applyTask(answer.task);
      } catch (err) {
        setError(t("settingsRefused", { error: errorText(err) }));
        setShown(held);
      } finally {
        pending.current -= 1;
      }
      onDone();
    });
  };

  return (
    <fieldset className="fieldset ship-settings" data-testid="ship-settings">
      <legend>{t("shipSettings")}</legend>
      <div className="ship-actions">
        <label className="check small">
          <input type="checkbox" checked={shown.enabled} onChange={(e) => save({ enabled: e.target.checked })} data-testid="fix-checks-enabled" />
          {t("fixFailingChecks")}
        </label>
        <label className="field-inline">
          <span>{t("fixMaxRounds")}</span>
          <select className="input input-small" value={shown.maxRounds} onChange={(e) => save({ maxRounds: Number(e.target.value) })} data-testid="fix-checks-rounds">
            {ROUNDS.map((n) => (
              <option key={n} value={n}>
                {t("fixRoundsCount", { n })}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label className="check small">
        <input type="checkbox" checked={shown.autoMerge} onChange={(e) => save({ autoMerge: e.target.checked })} data-testid="auto-merge" />
        {t("autoMerge")}
      </label>
      {error && (
        <p className="inline-error" role="alert" data-testid="settings-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}
