// An automation's monthly budget in its editor: what it spent this UTC month against its limits, whether that stops
// it firing, and the form that sets, raises or removes the budget (its own mutation, beside the editor's Save). On the
// automation's page, a notice while the budget is spent, since a spent budget is why Run now and schedules do nothing.
import { useEffect, useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import { AUTOMATION_BUDGET, SET_AUTOMATION_BUDGET, type BudgetView } from "../../api/usageOps";
import type { BudgetInput } from "../../gql/graphql";
import { t } from "../../i18n";
import { linkClick } from "../../router";
import { InlineError } from "../LoadState";
import { BudgetForm } from "./BudgetForm";
import { budgetSpent } from "./figures";
import "./usage.css";

/** The automation's budget (null: none; undefined: not read yet), read again whenever `refresh` changes. */
function useAutomationBudget(automationId: string | null, refresh: unknown = null) {
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
  }, [automationId, refresh]);
  return { budget, setBudget, error };
}

/** On the automation's page: why it does not fire while its monthly budget is spent, and where to raise it. */
export function AutomationBudgetNotice({ automationId, refresh }: { automationId: string; refresh: unknown }) {
  const { budget } = useAutomationBudget(automationId, refresh);
  if (!budget?.reached) return null;
  const edit = `/automations/${automationId}/edit`;
  return (
    <p className="budget-state is-reached small" role="status" data-testid="automation-budget-notice">
      {t("monthlyBudget")}: {budgetSpent(budget)} — {t("monthlyBudgetSpent")}.{" "}
      <a href={edit} onClick={linkClick(edit)}>
        {t("budgetRaise")}
      </a>
    </p>
  );
}

export function AutomationBudget({ automationId }: { automationId: string | null }) {
  const { budget, setBudget, error } = useAutomationBudget(automationId);
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
