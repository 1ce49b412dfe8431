// Repositories a task works in, each with the base branch its changes are diffed against (branches listed from
// the repository, its default branch first), and the executor that runs it. Used by the new-task form and by an
// idle task's "Where it works" dialog.
import { useEffect, useState } from "react";
import { gql } from "../api/graphql";
import { REPOSITORY_BRANCHES } from "../api/placementOps";
import type { PlacementExecutor, PlacementRepository } from "../api/placementOps";
import { t } from "../i18n";

export interface RepositoryChoice {
  repositoryId: string;
  /** null: the repository's default branch. */
  baseBranch: string | null;
}

const BRANCHES = 200;
// Read once per workspace while the page lives: every picker row shares the answer.
const branchLists = new Map<string, Promise<Record<string, string[]>>>();

function branchesOf(workspaceId: string): Promise<Record<string, string[]>> {
  let found = branchLists.get(workspaceId);
  if (!found) {
    found = gql(REPOSITORY_BRANCHES, { w: workspaceId, first: BRANCHES }).then((data) =>
      Object.fromEntries(data.repositories.map((r) => [r.id, r.branches])),
    );
    found.catch(() => branchLists.delete(workspaceId));
    branchLists.set(workspaceId, found);
  }
  return found;
}

/** A repository's branches, null while they load (or when git could not list them). */
export function useBranches(workspaceId: string | null, repositoryId: string | null): string[] | null {
  const [branches, setBranches] = useState<string[] | null>(null);
  useEffect(() => {
    setBranches(null);
    if (!workspaceId || !repositoryId) return;
    let cancelled = false;
    branchesOf(workspaceId).then(
      (all) => !cancelled && setBranches(all[repositoryId] ?? []),
      () => {},
    );
    return () => {
      cancelled = true;
    };
  }, [workspaceId, repositoryId]);
  return branches;
}

export function BranchSelect(props: {
  workspaceId: string | null;
  repository: PlacementRepository | undefined;
  value: string | null;
  onChange: (branch: string | null) => void;
  label: string;
  testId?: string;
}) {
  const { repository } = props;
  const branches = useBranches(props.workspaceId, repository?.id ?? null);
  const chosen = props.value ?? repository?.defaultBranch ?? "";
  const options = [...new Set([...(repository ? [repository.defaultBranch] : []), ...(branches ?? []), ...(chosen ? [chosen] : [])])];
  return (
    <label className="field">
      <span>{props.label}</span>
      <select
        className="input"
        value={chosen}
        disabled={!repository}
        aria-busy={branches === null}
        onChange={(e) => props.onChange(e.target.value === repository?.defaultBranch ? null : e.target.value)}
        data-testid={props.testId ?? "base-branch"}
      >
        {options.map((b) => (
          <option key={b} value={b}>
            {b === repository?.defaultBranch ? t("defaultBranch", { branch: b }) : b}
          </option>
        ))}
      </select>
    </label>
  );
}

export function RepositoryPicker(props: {
  workspaceId: string | null;
  repositories: PlacementRepository[];
  value: RepositoryChoice[];
  onChange: (next: RepositoryChoice[]) => void;
}) {
  const { repositories, value } = props;
  const unused = repositories.filter((r) => !value.some((c) => c.repositoryId === r.id));
  const update = (index: number, next: RepositoryChoice) => props.onChange(value.map((c, i) => (i === index ? next : c)));
  return (
    <fieldset className="field repo-picker" data-testid="repository-picker">
      <legend>{t("repositoriesLegend")}</legend>
      {repositories.length === 0 && <p className="muted small">{t("noRepositories")}</p>}
      {value.map((choice, index) => {
        const repository = repositories.find((r) => r.id === choice.repositoryId);
        return (
          <div key={choice.repositoryId} className="repo-choice" data-testid="repository-choice" data-repository-id={choice.repositoryId}>
            <label className="field">
              <span>{t("repositoryLabel")}</span>
              <select
                className="input"
                value={choice.repositoryId}
                onChange={(e) => update(index, { repositoryId: e.target.value, baseBranch: null })}
                data-testid="repository-select"
              >
                {repositories
                  .filter((r) => r.id === choice.repositoryId || !value.some((c) => c.repositoryId === r.id))
                  .map((r) => (
                    <option key={r.id} value={r.id}>
                      {r.name}
                    </option>
                  ))}
              </select>
            </label>
            <BranchSelect
              workspaceId={props.workspaceId}
              repository={repository}
              value={choice.baseBranch}
              onChange={(baseBranch) => update(index, { ...choice, baseBranch })}
              label={t("baseBranchLabel")}
            />
            <button
              type="button"
              className="btn btn-small"
              onClick={() => props.onChange(value.filter((_, i) => i !== index))}
              aria-label={t("removeRepository", { name: repository?.name ?? "" })}
            >
              {t("remove")}
            </button>
          </div>
        );
      })}
      {unused.length > 0 && (
        <button
          type="button"
          className="btn btn-small"
          onClick={() => props.onChange([...value, { repositoryId: unused[0].id, baseBranch: null }])}
          data-testid="add-repository"
        >
          {t("addRepository")}
        </button>
      )}
    </fieldset>
  );
}

/** The executor of a new task; the empty choice is the workspace default, or, for a subtask, its parent's. */
export function ExecutorSelect(props: { executors: PlacementExecutor[]; value: string; onChange: (id: string) => void; disabled?: boolean; subtask?: boolean }) {
  return (
    <label className="field">
      <span>{t("executorLabel")}</span>
      <select
        className="input"
        value={props.value}
        disabled={props.disabled}
        onChange={(e) => props.onChange(e.target.value)}
        name="executor"
        data-testid="executor-select"
      >
        <option value="">{t(props.subtask ? "parentsExecutor" : "workspaceDefault")}</option>
        {props.executors.map((x) => (
          <option key={x.id} value={x.id}>
            {x.name}
            {x.unavailableReason ? ` (${x.unavailableReason})` : ""}
          </option>
        ))}
      </select>
    </label>
  );
}
