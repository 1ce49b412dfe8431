// The task's shipping settings: fix failing checks (the agent is prompted with a failing check's log, at most so
// many rounds) and auto-merge once green and approved.
import { useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { LIMITS } from "../../api/limits";
import { UPDATE_TASK } from "../../api/ops";
import type { ShipTask } from "../../api/shipOps";
import { useRequest } from "../../hooks/useRequest";
import { t } from "../../i18n";
import { applyTask } from "../../state/app";
import { Refusal } from "./Done";

const ROUNDS = LIMITS.FixFailingChecksInput.maxRounds;

type Change = { fixFailingChecks?: { enabled?: boolean; maxRounds?: number }; autoMerge?: boolean };

export function ShipSettings({ task, onDone }: { task: ShipTask; onDone: () => void }) {
  const gate = useRequest();
  const { enabled, maxRounds } = task.fixFailingChecks;
  // Shown as chosen at once; back to what the server holds if it refuses.
  const [shown, setShown] = useState({ enabled, autoMerge: task.autoMerge, rounds: String(maxRounds) });
  const held = { enabled, autoMerge: task.autoMerge, rounds: String(maxRounds) };
  useEffect(() => setShown({ enabled, autoMerge: task.autoMerge, rounds: String(maxRounds) }), [enabled, maxRounds, task.autoMerge]);

  const save = async (change: Change, next: Partial<typeof shown>) => {
    setShown((s) => ({ ...s, ...next }));
    const answer = await gate.run("settings", async () => unwrap((await gql(UPDATE_TASK, { i: { taskId: task.id, ...change } })).updateTask));
    if (answer?.task) applyTask(answer.task);
    else setShown(held);
    onDone();
  };
  const saveRounds = () => {
    const n = Number(shown.rounds);
    if (n === maxRounds || !shown.rounds.trim()) return setShown((s) => ({ ...s, rounds: String(maxRounds) }));
    void save({ fixFailingChecks: { maxRounds: n } }, {});
  };

  return (
    <fieldset className="fieldset ship-settings" data-testid="ship-settings" disabled={gate.busy !== null}>
      <legend>{t("shipSettings")}</legend>
      <div className="ship-actions">
        <label className="check small">
          <input
            type="checkbox"
            checked={shown.enabled}
            onChange={(e) => void save({ fixFailingChecks: { enabled: e.target.checked } }, { enabled: e.target.checked })}
            data-testid="fix-checks-enabled"
          />
          {t("fixFailingChecks")}
        </label>
        <label className="field-inline">
          <span>{t("fixMaxRounds")}</span>
          <input
            className="input input-small ship-rounds"
            type="number"
            min={ROUNDS.minimum}
            max={ROUNDS.maximum}
            value={shown.rounds}
            onChange={(e) => setShown((s) => ({ ...s, rounds: e.target.value }))}
            onBlur={saveRounds}
            onKeyDown={(e) => e.key === "Enter" && (e.preventDefault(), saveRounds())}
            data-testid="fix-checks-rounds"
          />
        </label>
      </div>
      <label className="check small">
        <input
          type="checkbox"
          checked={shown.autoMerge}
          onChange={(e) => void save({ autoMerge: e.target.checked }, { autoMerge: e.target.checked })}
          data-testid="auto-merge"
        />
        {t("autoMerge")}
      </label>
      <Refusal gate={gate} action="settings" label="settingsRefused" />
    </fieldset>
  );
}
