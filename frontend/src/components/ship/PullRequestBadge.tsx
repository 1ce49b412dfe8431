// A task's pull requests on its board card: number, state and how its checks stand.
import type { Task } from "../../api/ops";
import { t, type StringKey } from "../../i18n";
import { checksSummary, stateLabel } from "./checks";

const CHECKS: Record<string, StringKey> = { failing: "badgeChecksFailing", pending: "badgeChecksPending", passing: "badgeChecksPassing" };

export function PullRequestBadges({ task }: { task: Task }) {
  if (task.pullRequests.length === 0) return null;
  return (
    <span className="pr-badges">
      {task.pullRequests.map((pr) => {
        const checks = checksSummary(pr.checks);
        const state = stateLabel(pr.state, pr.draft);
        const label = CHECKS[checks] ? `${state} · ${t(CHECKS[checks])}` : state;
        return (
          <a
            key={pr.repositoryId ?? pr.number}
            className={`pr-badge pr-state-${pr.draft && pr.state === "open" ? "draft" : pr.state}`}
            href={pr.url}
            target="_blank"
            rel="noreferrer noopener"
            title={label}
            aria-label={t("badgeLabel", { n: pr.number, state: label })}
            data-testid="card-pr"
            data-state={pr.state}
            data-checks={checks}
          >
            #{pr.number}
            {checks !== "none" && (
              <span className={`check-mark check-${checks}`} aria-hidden="true">
                {checks === "failing" ? "✕" : checks === "pending" ? "●" : "✓"}
              </span>
            )}
          </a>
        );
      })}
    </span>
  );
}
