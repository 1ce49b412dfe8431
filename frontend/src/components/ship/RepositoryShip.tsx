// Shipping one repository of a task, in order: commit, push, the pull request (open it, then its card), update
// from the base, merge. One request at a time for the whole repository.
import type { FixRound, GitIdentity, PendingRepository, PullRequest, ShipRepository, ShipTask } from "../../api/shipOps";
import { useRequest } from "../../hooks/useRequest";
import { t, tn } from "../../i18n";
import { CommitBox } from "./CommitBox";
import { ConflictsNotice } from "./ConflictsNotice";
import { MergeBox } from "./MergeBox";
import { OpenPullRequest } from "./OpenPullRequest";
import { PullRequestCard } from "./PullRequestCard";
import { PushBox } from "./PushBox";
import { UpdateBranch } from "./UpdateBranch";

export function RepositoryShip(props: {
  task: ShipTask;
  repository: ShipRepository;
  pending: PendingRepository | undefined;
  /** Why the uncommitted files could not be read, if they could not. */
  unread: string | null;
  identity: GitIdentity | null;
  pr: PullRequest | undefined;
  rounds: FixRound[];
  onDone: () => void;
}) {
  const { task, repository, pending, pr, onDone } = props;
  const gate = useRequest();
  const conflicts = (pending?.files.nodes ?? []).filter((f) => f.status === "UNMERGED").map((f) => f.path);
  const branch = repository.sourceBranch ?? repository.branch;
  const merged = pr?.state === "merged";

  return (
    <section className="panel ship-repo" aria-labelledby={`ship-${repository.repositoryId}`} data-testid="ship-repository" data-repository={repository.name}>
      <header className="ship-repo-head">
        <h2 id={`ship-${repository.repositoryId}`}>{repository.name}</h2>
        <span className="muted small">
          {branch ? <code>{branch}</code> : t("noBranchYet")} → <code>{repository.baseBranch ?? "?"}</code>
          {pending && pending.ahead != null && ` · ${tn("aheadOfBase", pending.ahead)}`}
        </span>
        <span className="muted small" data-testid="ship-code-host">
          {repository.codeHost ? t("onCodeHost", { host: repository.codeHost === "gitlab" ? "GitLab" : "GitHub" }) : t("noCodeHost")}
        </span>
      </header>
      {pending?.note && <p className="muted small">{pending.note}</p>}
      <ConflictsNotice taskId={task.id} repository={repository.name} base={repository.baseBranch} paths={conflicts} />
      {!merged && (
        <CommitBox taskId={task.id} repositoryId={repository.repositoryId} pending={pending} unread={props.unread} identity={props.identity} gate={gate} onDone={onDone} />
      )}
      {!merged && <PushBox taskId={task.id} repository={repository} gate={gate} onDone={onDone} />}
      {pr && <PullRequestCard pr={pr} rounds={props.rounds} fix={task.fixFailingChecks} />}
      {/* One open request per repository: another can be opened once it was closed unmerged. */}
      {repository.codeHost && (!pr || pr.state === "closed") && (
        <OpenPullRequest taskId={task.id} taskTitle={task.title} repository={repository} gate={gate} onDone={onDone} />
      )}
      {!merged && <UpdateBranch taskId={task.id} repository={repository} behind={pending?.behind ?? null} gate={gate} onDone={onDone} />}
      <MergeBox taskId={task.id} repository={repository} pr={pr} gate={gate} onDone={onDone} />
    </section>
  );
}
