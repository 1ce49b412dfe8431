// Where a task works: each repository with the branch it is on and the base its changes are diffed against;
// for a pull request or a branch a provider event named (an automation run's), that branch, which its pushes
// go to.
import type { TaskDetail } from "../api/ops";

export function Checkouts({ repositories }: { repositories: TaskDetail["repositories"] | undefined }) {
  if (!repositories || repositories.length === 0) return null;
  return (
    <ul className="checkouts muted small" aria-label="Repositories" data-testid="task-checkouts">
      {repositories.map((r) => (
        <li key={r.repositoryId} data-testid="task-checkout" data-source-branch={r.sourceBranch ?? ""}>
          <strong>{r.name}</strong>
          {" on "}
          <code data-testid="checkout-branch">{r.sourceBranch ?? r.branch ?? "a new branch"}</code>
          {r.pullRequest != null &&
            (r.url ? (
              <>
                {" "}
                (<a href={r.url} target="_blank" rel="noreferrer noopener">
                  PR #{r.pullRequest}
                </a>
                )
              </>
            ) : (
              ` (PR #${r.pullRequest})`
            ))}
          {r.baseBranch && (
            <>
              {" · base "}
              <code>{r.baseBranch}</code>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
