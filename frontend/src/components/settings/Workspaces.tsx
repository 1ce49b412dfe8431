// Rename the current workspace, switch to another, or create one (and switch to it).
import { useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { CREATE_WORKSPACE } from "../../api/ops";
import { UPDATE_WORKSPACE } from "../../api/settingsOps";
import { app, selectWorkspace } from "../../state/app";
import { useServerDraft } from "../../hooks/useServerDraft";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";

export function Workspaces() {
  const workspaces = useStore(app, (s) => s.workspaces);
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const current = workspaces.find((w) => w.id === workspaceId);
  const [name, setName] = useServerDraft(current?.name ?? "");
  const [newName, setNewName] = useState("");
  const rename = useAction();
  const create = useAction();

  // selectWorkspace makes the workspace current before it loads the rest: the name field shows its name from that
  // moment, not after the load, which would overwrite what someone typed meanwhile.
  const switchTo = (w: { id: string; name: string }) => {
    const switched = selectWorkspace(w.id);
    setName(w.name);
    return switched;
  };
  const saveName = () =>
    rename.run(async () => {
      const { workspace } = unwrap((await gql(UPDATE_WORKSPACE, { i: { workspaceId: workspaceId!, name } })).updateWorkspace);
      app.set({ workspaces: app.get().workspaces.map((w) => (w.id === workspace.id ? workspace : w)) });
    });
  const createOne = () =>
    create.run(async () => {
      const { workspace } = unwrap((await gql(CREATE_WORKSPACE, { name: newName })).createWorkspace);
      // workspaceEvents may have brought the new workspace already (its refetch can answer first): once only.
      app.set({ workspaces: [...app.get().workspaces.filter((w) => w.id !== workspace.id), workspace] });
      setNewName("");
      await switchTo(workspace);
    });

  return (
    <div className="settings-body">
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void saveName())}>
        <h2>This workspace</h2>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required data-testid="workspace-name" />
          </label>
          <button className="btn btn-primary" disabled={rename.busy || !name.trim() || name === current?.name} data-testid="rename-workspace">
            Rename
          </button>
        </div>
        <FormError error={rename.error} />
      </form>
      {workspaces.length > 1 && (
        <div className="panel">
          <h2>Switch workspace</h2>
          <ul className="rows">
            {workspaces.map((w) => (
              <li key={w.id} className="row">
                <span className="row-main">{w.name}</span>
                {w.id === workspaceId ? (
                  <span className="chip">Current</span>
                ) : (
                  <button type="button" className="btn btn-small" onClick={() => void switchTo(w)}>
                    Switch
                  </button>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void createOne())}>
        <h2>New workspace</h2>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={newName} onChange={(e) => setNewName(e.target.value)} maxLength={200} required data-testid="new-workspace-name" />
          </label>
          <button className="btn" disabled={create.busy || !newName.trim()} data-testid="create-workspace">
            Create and switch
          </button>
        </div>
        <FormError error={create.error} />
      </form>
    </div>
  );
}
