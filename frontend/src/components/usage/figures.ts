// How usage reads: token counts compact (12.3k), money in US dollars as agents report it, in the reader's locale.
import type { BudgetView } from "../../api/usageOps";
import { t } from "../../i18n";

const COMPACT = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
const WHOLE = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const PERCENT = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 0 });

export function tokens(n: number): string {
  return COMPACT.format(n);
}

export function exactTokens(n: number): string {
  return WHOLE.format(n);
}

export function percent(fraction: number): string {
  return PERCENT.format(fraction);
}

/** Dollars: cents, or a tenth of a cent below a dollar (agents' turns often cost less than a cent). */
export function usd(n: number): string {
  if (n > 0 && n < 0.001) return `< ${usd(0.001)}`;
  const digits = n < 1 ? 3 : 2;
  return new Intl.NumberFormat(undefined, { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: digits }).format(n);
}

export interface Spend {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What a task cost, shortest first: its dollars when an agent reported cost, else its tokens; null when nothing. */
export function spendLabel(spend: Spend): string | null {
  if (spend.costUsd > 0) return usd(spend.costUsd);
  const total = spend.inputTokens + spend.outputTokens;
  return total > 0 ? t("tokensShort", { n: tokens(total) }) : null;
}

/** "$1.25 of $1.00 · 1.2k of 5k tokens": what was spent against each limit the budget has. */
export function budgetSpent(budget: BudgetView): string {
  const parts = [];
  if (budget.limitUsd !== null) parts.push(t("spentOf", { spent: usd(budget.spent.costUsd), limit: usd(budget.limitUsd) }));
  if (budget.limitTokens !== null) {
    parts.push(t("spentOfTokens", { spent: tokens(budget.spent.tokens), limit: tokens(budget.limitTokens) }));
  }
  return parts.join(" · ");
}
