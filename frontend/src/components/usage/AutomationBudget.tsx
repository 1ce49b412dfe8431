// An automation's monthly budget in its editor: what it spent this UTC month against its limits, whether that stops
// it firing, and the form that sets, raises or removes the budget (its own mutation, beside the editor's Save).
import { useEffect, useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import { AUTOMATION_BUDGET, SET_AUTOMATION_BUDGET, type BudgetView } from "../../api/usageOps";
import type { BudgetInput } from "../../gql/graphql";
import { t } from "../../i18n";
import { InlineError } from "../LoadState";
import { BudgetForm } from "./BudgetForm";
import { budgetSpent } from "./figures";
import "./usage.css";

export function AutomationBudget({ automationId }: { automationId: string | null }) {
  const [budget, setBudget] = useState<BudgetView | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!automationId) return;
    let cancelled = false;
    gql(AUTOMATION_BUDGET, { id: automationId })
      .then((data) => !cancelled && setBudget(data.automation.budget))
      .catch((err: unknown) => !cancelled && setError(errorText(err)));
    return () => {
      cancelled = true;
    };
  }, [automationId]);
  const save = async (limits: BudgetInput) => {
    const answer = unwrap((await gql(SET_AUTOMATION_BUDGET, { i: { automationId: automationId!, ...limits } })).setAutomationBudget);
    setBudget(answer.budget);
  };
  return (
    <fieldset className="fieldset" data-testid="automation-budget">
      <legend>{t("monthlyBudget")}</legend>
      {!automationId ? (
        <p className="muted small">{t("monthlyBudgetAfterSave")}</p>
      ) : budget === undefined ? (
        error ? <InlineError error={error} /> : <p className="muted small">{t("loading")}</p>
      ) : (
        <>
          {budget ? (
            <p className={budget.reached ? "budget-state is-reached" : "budget-state"} data-testid="automation-budget-state" data-reached={budget.reached} role={budget.reached ? "alert" : undefined}>
              {t("thisMonth")}: {budgetSpent(budget)}
              {budget.reached && <> — {t("monthlyBudgetSpent")}</>}
            </p>
          ) : (
            <p className="muted small">{t("monthlyBudgetNone")}</p>
          )}
          <BudgetForm key={budget ? `${budget.limitUsd}:${budget.limitTokens}` : "none"} budget={budget} onSave={save} saveLabel={t("budgetSave")} testId="automation-budget-form" />
        </>
      )}
    </fieldset>
  );
}
