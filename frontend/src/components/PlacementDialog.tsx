// Where an idle task works: the base branch of each of its repositories, another repository added with its
// base. The executor shows as chosen at creation (the API has no way to change it afterwards).
import { useEffect, useState } from "react";
import { errorText, gql, unwrap } from "../api/graphql";
import type { TaskDetail } from "../api/ops";
import {
  ADD_WORKSPACE_SOURCES,
  TASK_PLACEMENT_CHOICES,
  UPDATE_REPOSITORY_BASE_BRANCH,
  type PlacementExecutor,
  type PlacementRepository,
} from "../api/placementOps";
import { t } from "../i18n";
import { app } from "../state/app";
import { useStore } from "../state/store";
import { Dialog } from "./Dialog";
import { InlineError } from "./LoadState";
import { BranchSelect } from "./RepositoryPicker";

export function PlacementDialog(props: { task: TaskDetail; onClose: () => void; onChanged: () => void }) {
  const { task } = props;
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const [repositories, setRepositories] = useState<PlacementRepository[]>([]);
  const [executors, setExecutors] = useState<PlacementExecutor[]>([]);
  const [adding, setAdding] = useState<{ repositoryId: string; baseBranch: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!workspaceId) return;
    gql(TASK_PLACEMENT_CHOICES, { w: workspaceId }).then(
      (data) => {
        setRepositories(data.repositories);
        setExecutors(data.executorProfiles);
      },
      (err) => setError(errorText(err)),
    );
  }, [workspaceId]);

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      props.onChanged();
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const changeBase = (repositoryId: string, baseBranch: string) =>
    run(async () => unwrap((await gql(UPDATE_REPOSITORY_BASE_BRANCH, { i: { taskId: task.id, repositoryId, baseBranch } })).updateRepositoryBaseBranch));
  const add = async () => {
    if (!adding) return;
    const source = { type: "REPOSITORY" as const, repositoryId: adding.repositoryId, baseBranch: adding.baseBranch };
    const ok = await run(async () => unwrap((await gql(ADD_WORKSPACE_SOURCES, { i: { taskId: task.id, sources: [source] } })).addWorkspaceSources));
    if (ok) setAdding(null);
  };

  const unused = repositories.filter((r) => !task.repositories.some((x) => x.repositoryId === r.id));
  const executor = executors.find((x) => x.id === task.executorProfileId);
  return (
    <Dialog open title={t("whereItWorks")} onClose={props.onClose} testId="placement-dialog">
      <p className="muted small">{t("placementIdle")}</p>
      {task.repositories.map((r) => {
        const repository = repositories.find((x) => x.id === r.repositoryId);
        return (
          <div key={r.repositoryId} className="repo-choice" data-testid="placement-repository" data-repository-id={r.repositoryId}>
            <strong className="repo-choice-name">{r.name}</strong>
            <BranchSelect
              workspaceId={workspaceId}
              repository={repository}
              value={r.baseBranch ?? null}
              onChange={(branch) => void changeBase(r.repositoryId, branch ?? repository?.defaultBranch ?? "")}
              label={t("baseBranchLabel")}
            />
          </div>
        );
      })}
      {adding ? (
        <div className="repo-choice" data-testid="placement-add">
          <label className="field">
            <span>{t("repositoryLabel")}</span>
            <select
              className="input"
              value={adding.repositoryId}
              onChange={(e) => setAdding({ repositoryId: e.target.value, baseBranch: null })}
              data-testid="placement-add-repository"
            >
              {unused.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          <BranchSelect
            workspaceId={workspaceId}
            repository={repositories.find((x) => x.id === adding.repositoryId)}
            value={adding.baseBranch}
            onChange={(baseBranch) => setAdding({ ...adding, baseBranch })}
            label={t("baseBranchLabel")}
          />
          <button type="button" className="btn btn-small btn-primary" disabled={busy} onClick={() => void add()} data-testid="placement-add-submit">
            {t("addRepository")}
          </button>
        </div>
      ) : (
        unused.length > 0 && (
          <button type="button" className="btn btn-small" onClick={() => setAdding({ repositoryId: unused[0].id, baseBranch: null })} data-testid="add-repository">
            {t("addRepository")}
          </button>
        )
      )}
      <p className="small" data-testid="placement-executor">
        {t("executorFixed", { name: executor?.name ?? t("workspaceDefault") })}
      </p>
      <InlineError error={error} />
      <div className="form-actions">
        <button type="button" className="btn" onClick={props.onClose}>
          {t("close")}
        </button>
      </div>
    </Dialog>
  );
}
