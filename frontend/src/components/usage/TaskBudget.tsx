// A task's spend and budget on its page: the context gauge, what it cost so far and its budget (set, raise or remove
// it in a dialog) in the header; and, when the budget is spent (pendingAction BUDGET_REACHED), the card above the
// composer that says nothing more reaches the agent until the budget is raised, with the form that raises it.
import { useCallback, useEffect, useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import type { Task, Turn } from "../../api/ops";
import { SET_TASK_BUDGET, TASK_BUDGET, type BudgetView } from "../../api/usageOps";
import type { BudgetInput } from "../../gql/graphql";
import { t } from "../../i18n";
import { app, applyTask } from "../../state/app";
import { useStore } from "../../state/store";
import { InlineError } from "../LoadState";
import { Dialog } from "../Dialog";
import { ContextGauge } from "./ContextGauge";
import { budgetSpent, exactTokens, spendLabel, usd } from "./figures";
import { BudgetForm } from "./BudgetForm";
import "./usage.css";

/** The task's budget, read again whenever the task changes (a turn's spend, a raise in another tab). */
function useTaskBudget(taskId: string) {
  const version = useStore(app, (s) => s.taskVersion[taskId] ?? 0);
  const [budget, setBudget] = useState<BudgetView | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let cancelled = false;
    gql(TASK_BUDGET, { id: taskId })
      .then((data) => {
        if (cancelled) return;
        setBudget(data.task.budget);
        setError(null);
      })
      .catch((err: unknown) => !cancelled && setError(errorText(err)));
    return () => {
      cancelled = true;
    };
  }, [taskId, version]);
  const save = useCallback(
    async (limits: BudgetInput) => {
      const payload = unwrap((await gql(SET_TASK_BUDGET, { id: taskId, budget: limits })).updateTask);
      setBudget(payload.task.budget);
      applyTask(payload.task); // its pendingAction now: BUDGET_REACHED leaves once the budget is no longer spent
    },
    [taskId],
  );
  return { budget, error, save };
}

/** The header's usage line: context window, cost so far, budget. */
export default function TaskUsage({ task, sessionId, turns }: { task: Task; sessionId: string | null; turns: readonly Turn[] }) {
  const { budget, error, save } = useTaskBudget(task.id);
  const [editing, setEditing] = useState(false);
  const spent = spendLabel(task.usage);
  return (
    <div className="task-usage" data-testid="task-usage">
      <ContextGauge sessionId={sessionId} turns={turns} />
      {spent && (
        <span className="task-spend" data-testid="task-spend" title={t("costDetail", { cost: usd(task.usage.costUsd), input: exactTokens(task.usage.inputTokens), output: exactTokens(task.usage.outputTokens) })}>
          {t("costSoFar")}: <strong>{spent}</strong>
        </span>
      )}
      {budget && (
        <span className={budget.reached ? "task-budget is-reached" : "task-budget"} data-testid="task-budget" data-reached={budget.reached}>
          {t("budget")}: {budgetSpent(budget)}
        </span>
      )}
      <button type="button" className="btn btn-small" onClick={() => setEditing(true)} data-testid="edit-budget">
        {budget ? t("budgetEdit") : t("budgetSet")}
      </button>
      <InlineError error={error} />
      <Dialog open={editing} title={t("taskBudgetTitle")} onClose={() => setEditing(false)} testId="budget-dialog">
        <BudgetForm budget={budget} onSave={save} onDone={() => setEditing(false)} saveLabel={t("save")} testId="task-budget-form" />
      </Dialog>
    </div>
  );
}

/** Above the composer while the task's budget is spent: why nothing reaches the agent, and the way to raise it. */
export function BudgetReached({ task }: { task: Task }) {
  const { budget, error, save } = useTaskBudget(task.id);
  return (
    <section className="action-card card-budget" role="status" aria-labelledby="budget-reached-title" data-testid="budget-reached">
      <h3 id="budget-reached-title">{t("budgetReached")}</h3>
      <p>
        {budget ? `${budgetSpent(budget)}. ` : ""}
        {t("budgetReachedHint")}
      </p>
      <InlineError error={error} />
      {budget && <BudgetForm key={`${budget.limitUsd}:${budget.limitTokens}`} budget={budget} onSave={save} saveLabel={t("budgetRaise")} testId="raise-budget-form" />}
    </section>
  );
}
