// Workspace secrets by name: add one, give one a new value, delete one. A value is sent once and never shown.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { CREATE_SECRET, DELETE_SECRET, REPLACE_SECRET, SECRETS, type SecretRow } from "../../api/settingsOps";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { useConfigChange } from "../../hooks/useConfigChange";

export function Secrets() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [secrets, setSecrets] = useState<SecretRow[] | null>(null);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const add = useAction();
  const load = useAction();
  const reload = useCallback(
    () => load.run(async () => setSecrets((await gql(SECRETS, { w: workspaceId })).secrets)),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  useConfigChange(["SECRET"], reload);

  const create = () =>
    add.run(async () => {
      unwrap((await gql(CREATE_SECRET, { i: { workspaceId, name, value } })).createSecret);
      setName("");
      setValue("");
      await reload();
    });

  return (
    <div className="settings-body">
      <p className="muted">
        Agent profiles use a secret in their environment as <code>{"${secret:NAME}"}</code>. Values are stored encrypted and never shown again.
      </p>
      <div className="panel">
        <h2>Secrets</h2>
        <FormError error={load.error} />
        {secrets && secrets.length === 0 && <p className="muted">No secrets yet.</p>}
        <ul className="rows" data-testid="secrets">
          {secrets?.map((s) => <SecretItem key={s.id} secret={s} onChange={reload} />)}
        </ul>
      </div>
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void create())}>
        <h2>Add a secret</h2>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} pattern="[A-Za-z_][A-Za-z0-9_]*" placeholder="ANTHROPIC_API_KEY" required data-testid="secret-name" />
          </label>
          <label className="field">
            <span>Value</span>
            <input className="input" type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required data-testid="secret-value" />
          </label>
          <button className="btn btn-primary" disabled={add.busy || !name || !value} data-testid="add-secret">
            Add
          </button>
        </div>
        <FormError error={add.error} testId="secret-error" />
      </form>
    </div>
  );
}

function SecretItem({ secret, onChange }: { secret: SecretRow; onChange: () => Promise<unknown> }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState("");
  const action = useAction();
  const replace = () =>
    action.run(async () => {
      unwrap((await gql(REPLACE_SECRET, { i: { secretId: secret.id, value } })).replaceSecret);
      setValue("");
      setEditing(false);
    });
  const remove = () =>
    window.confirm(`Delete the secret ${secret.name}? Profiles that reference it can no longer start.`) &&
    action.run(async () => {
      unwrap((await gql(DELETE_SECRET, { id: secret.id })).deleteSecret);
      await onChange();
    });
  return (
    <li className="row" data-testid="secret" data-name={secret.name}>
      <code className="row-main">{secret.name}</code>
      {editing ? (
        <form className="field-row" onSubmit={(e) => (e.preventDefault(), void replace())}>
          <label className="field">
            <span className="sr-only">New value for {secret.name}</span>
            <input className="input input-small" type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required autoFocus data-testid="secret-new-value" />
          </label>
          <button className="btn btn-small btn-primary" disabled={action.busy || !value} data-testid="save-secret-value">
            Save
          </button>
          <button type="button" className="btn btn-small" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <button type="button" className="btn btn-small" onClick={() => setEditing(true)} data-testid="replace-secret">
            Replace value
          </button>
          <button type="button" className="btn btn-small btn-danger" onClick={() => void remove()} data-testid="delete-secret">
            Delete
          </button>
        </>
      )}
      <FormError error={action.error} />
    </li>
  );
}
