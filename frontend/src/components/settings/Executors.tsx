// Executor profiles: where an agent works (a git worktree per task, the repository itself, or a scratch
// folder). Only admins add, rename or delete them; for anyone else the server refuses, and the form says so.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import {
  CREATE_EXECUTOR_PROFILE,
  DELETE_EXECUTOR_PROFILE,
  EXECUTOR_PROFILES,
  UPDATE_EXECUTOR_PROFILE,
  type ExecutorRow,
} from "../../api/settingsOps";
import type { ExecutorKind } from "../../gql/graphql";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { useConfigChange } from "../../hooks/useConfigChange";

const KINDS: { value: ExecutorKind; label: string }[] = [
  { value: "WORKTREE" as ExecutorKind, label: "Worktree: a git worktree per task" },
  { value: "LOCAL" as ExecutorKind, label: "Local: in the repository itself" },
  { value: "SCRATCH" as ExecutorKind, label: "Scratch: an empty folder, no git" },
];

export function Executors() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [rows, setRows] = useState<ExecutorRow[] | null>(null);
  const [name, setName] = useState("");
  const [kind, setKind] = useState<ExecutorKind>("WORKTREE" as ExecutorKind);
  const load = useAction();
  const add = useAction();
  const reload = useCallback(
    () => load.run(async () => setRows((await gql(EXECUTOR_PROFILES, { w: workspaceId })).executorProfiles)),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  useConfigChange(["EXECUTOR_PROFILE"], reload);

  const create = () =>
    add.run(async () => {
      unwrap((await gql(CREATE_EXECUTOR_PROFILE, { i: { workspaceId, name, kind } })).createExecutorProfile);
      setName("");
      await reload();
    });

  return (
    <div className="settings-body">
      <div className="panel">
        <h2>Executor profiles</h2>
        <FormError error={load.error} />
        <ul className="rows" data-testid="executors">
          {rows?.map((row) => <ExecutorItem key={row.id} row={row} onChange={reload} />)}
        </ul>
      </div>
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void create())}>
        <h2>Add an executor profile</h2>
        <p className="muted">Admins only: an executor decides where agents read and write.</p>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required data-testid="executor-name" />
          </label>
          <label className="field">
            <span>Kind</span>
            <select className="input" value={kind} onChange={(e) => setKind(e.target.value as ExecutorKind)} data-testid="executor-kind">
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
          <button className="btn btn-primary" disabled={add.busy || !name.trim()} data-testid="add-executor">
            Add
          </button>
        </div>
        <FormError error={add.error} testId="executor-error" />
      </form>
    </div>
  );
}

function ExecutorItem({ row, onChange }: { row: ExecutorRow; onChange: () => Promise<unknown> }) {
  const [name, setName] = useState(row.name);
  const action = useAction();
  const rename = () =>
    action.run(async () => {
      unwrap((await gql(UPDATE_EXECUTOR_PROFILE, { i: { executorProfileId: row.id, name } })).updateExecutorProfile);
      await onChange();
    });
  const remove = () =>
    window.confirm(`Delete the executor profile ${row.name}?`) &&
    action.run(async () => {
      unwrap((await gql(DELETE_EXECUTOR_PROFILE, { id: row.id })).deleteExecutorProfile);
      await onChange();
    });
  return (
    <li className="row" data-testid="executor" data-name={row.name}>
      <form className="row-main field-row" onSubmit={(e) => (e.preventDefault(), void rename())}>
        <label className="field">
          <span className="sr-only">Name of {row.name}</span>
          <input className="input input-small" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required data-testid="executor-rename" />
        </label>
        <span className="muted">
          {KINDS.find((k) => k.value === row.kind)?.label ?? row.kind}
          {row.builtin && " · built in"}
          {row.serverWide && " · server-wide"}
        </span>
        {name !== row.name && (
          <button className="btn btn-small" disabled={action.busy || !name.trim()} data-testid="save-executor">
            Rename
          </button>
        )}
      </form>
      <button type="button" className="btn btn-small btn-danger" onClick={() => void remove()} data-testid="delete-executor">
        Delete
      </button>
      <FormError error={action.error} testId="executor-row-error" />
    </li>
  );
}
