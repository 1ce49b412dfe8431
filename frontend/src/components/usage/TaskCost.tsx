// What a task has cost so far, on its board card: dollars when its agent reported cost, else tokens; the exact
// figures on hover and for assistive technology.
import type { Task } from "../../api/ops";
import { t } from "../../i18n";
import { exactTokens, spendLabel, usd } from "./figures";
import "./usage.css";

export function TaskCost({ task }: { task: Task }) {
  const label = spendLabel(task.usage);
  if (!label) return null;
  const { inputTokens, outputTokens, costUsd } = task.usage;
  const detail = t("costDetail", { cost: usd(costUsd), input: exactTokens(inputTokens), output: exactTokens(outputTokens) });
  return (
    <span className="card-cost" title={detail} data-testid="card-cost" data-cost-usd={costUsd}>
      <span className="sr-only">{t("costSoFar")}: </span>
      {label}
      <span className="sr-only"> ({detail})</span>
    </span>
  );
}
