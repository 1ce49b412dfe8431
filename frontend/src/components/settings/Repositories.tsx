// The workspace's repositories: local git repositories on the workers' machine that tasks work in.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { CREATE_REPOSITORY, REPOSITORIES, type RepositoryRow } from "../../api/settingsOps";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { McpSelector } from "./McpSelector";
import { useConfigChange } from "../../hooks/useConfigChange";

export function Repositories() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [rows, setRows] = useState<RepositoryRow[] | null>(null);
  const [name, setName] = useState("");
  const [path, setPath] = useState("");
  const [branch, setBranch] = useState("");
  const load = useAction();
  const add = useAction();
  const reload = useCallback(
    () => load.run(async () => setRows((await gql(REPOSITORIES, { w: workspaceId })).repositories)),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  useConfigChange(["REPOSITORY"], reload);

  const create = () =>
    add.run(async () => {
      const input = { workspaceId, name, path, defaultBranch: branch.trim() || null };
      unwrap((await gql(CREATE_REPOSITORY, { i: input })).createRepository);
      setName("");
      setPath("");
      setBranch("");
      await reload();
    });

  return (
    <div className="settings-body">
      <div className="panel">
        <h2>Repositories</h2>
        <FormError error={load.error} />
        {rows && rows.length === 0 && <p className="muted">No repositories yet: tasks work in a scratch folder.</p>}
        <ul className="rows" data-testid="repositories">
          {rows?.map((r) => (
            <li key={r.id} className="row" data-testid="repository" data-name={r.name}>
              <div className="row-main">
                <strong>{r.name}</strong>
                <div className="muted">
                  <code>{r.path}</code> · default branch <code>{r.defaultBranch}</code>
                </div>
                <McpSelector workspaceId={workspaceId} scope="REPOSITORY" targetId={r.id} />
              </div>
            </li>
          ))}
        </ul>
      </div>
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void create())}>
        <h2>Add a repository</h2>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required data-testid="repository-name" />
          </label>
          <label className="field">
            <span>Path on the workers' machine</span>
            <input className="input mono" value={path} onChange={(e) => setPath(e.target.value)} placeholder="/home/me/src/project" required data-testid="repository-path" />
          </label>
          <label className="field">
            <span>Default branch (optional)</span>
            <input className="input mono" value={branch} onChange={(e) => setBranch(e.target.value)} placeholder="main" data-testid="repository-branch" />
          </label>
          <button className="btn btn-primary" disabled={add.busy || !name.trim() || !path.trim()} data-testid="add-repository">
            Add
          </button>
        </div>
        <FormError error={add.error} testId="repository-error" />
      </form>
    </div>
  );
}
