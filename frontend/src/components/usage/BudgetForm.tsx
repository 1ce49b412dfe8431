// A budget's two limits — tokens (input plus output) and US dollars — either or both; saving both empty removes
// the budget. The server checks the limits again; its refusal shows in place.
import { useId, useState } from "react";
import type { BudgetInput } from "../../gql/graphql";
import { t } from "../../i18n";
import { FormError, useAction } from "../settings/useAction";
import type { BudgetView } from "../../api/usageOps";

function number(text: string): number | null {
  const value = text.trim() === "" ? NaN : Number(text);
  return Number.isFinite(value) ? value : null;
}

export function BudgetForm(props: {
  budget: BudgetView | null;
  onSave: (limits: BudgetInput) => Promise<unknown>;
  onDone?: () => void;
  saveLabel: string;
  testId: string;
}) {
  const [limitTokens, setTokens] = useState(props.budget?.limitTokens?.toString() ?? "");
  const [limitUsd, setUsd] = useState(props.budget?.limitUsd?.toString() ?? "");
  const save = useAction();
  const id = useId();
  const submit = (limits: BudgetInput) =>
    save.run(async () => {
      await props.onSave(limits);
      props.onDone?.();
    });
  const tokensValue = number(limitTokens);
  return (
    <form
      className="budget-form"
      data-testid={props.testId}
      onSubmit={(e) => {
        e.preventDefault();
        void submit({ limitTokens: tokensValue === null ? null : Math.round(tokensValue), limitUsd: number(limitUsd) });
      }}
    >
      <div className="field-row">
        <label className="field" htmlFor={`${id}-usd`}>
          <span>{t("budgetUsd")}</span>
          <input id={`${id}-usd`} className="input" type="number" min={0} step="0.01" inputMode="decimal" value={limitUsd} onChange={(e) => setUsd(e.target.value)} data-testid="budget-usd" />
        </label>
        <label className="field" htmlFor={`${id}-tokens`}>
          <span>{t("budgetTokens")}</span>
          <input id={`${id}-tokens`} className="input" type="number" min={0} step={1} inputMode="numeric" value={limitTokens} onChange={(e) => setTokens(e.target.value)} data-testid="budget-tokens" />
        </label>
      </div>
      <p className="muted small">{t("budgetHint")}</p>
      <FormError error={save.error} testId="budget-error" />
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={save.busy} data-testid="budget-save">
          {props.saveLabel}
        </button>
        {props.budget && (
          <button type="button" className="btn btn-danger" disabled={save.busy} onClick={() => void submit({ limitTokens: null, limitUsd: null })} data-testid="budget-remove">
            {t("budgetRemove")}
          </button>
        )}
        {props.onDone && (
          <button type="button" className="btn" onClick={props.onDone}>
            {t("cancel")}
          </button>
        )}
      </div>
    </form>
  );
}
