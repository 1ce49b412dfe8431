// Executor profiles: where an agent works (a git worktree per task, the repository itself, a scratch folder, a
// sandbox or a Docker container). Only admins add, change, test or delete them; for anyone else the server refuses,
// and the form says so. A box profile lists the worker capabilities it needs and says when no live worker has them.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import {
  CREATE_EXECUTOR_PROFILE,
  DELETE_EXECUTOR_PROFILE,
  EXECUTOR_PROFILES,
  TEST_EXECUTOR_PROFILE,
  UPDATE_EXECUTOR_PROFILE,
  type ExecutorRow,
} from "../../api/settingsOps";
import { BoxSettingsFields, EMPTY_BOX, draftOf, isBox, settingsOf, type BoxDraft } from "./BoxSettings";
import type { ExecutorKind } from "../../gql/graphql";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { useConfigChange } from "../../hooks/useConfigChange";

const KINDS: { value: ExecutorKind; label: string }[] = [
  { value: "WORKTREE" as ExecutorKind, label: "Worktree: a git worktree per task" },
  { value: "LOCAL" as ExecutorKind, label: "Local: in the repository itself" },
  { value: "SCRATCH" as ExecutorKind, label: "Scratch: an empty folder, no git" },
  { value: "SANDBOX" as ExecutorKind, label: "Sandbox: the worktree in Linux namespaces (bubblewrap)" },
  { value: "DOCKER" as ExecutorKind, label: "Docker: the worktree in a container" },
];

export function Executors() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [rows, setRows] = useState<ExecutorRow[] | null>(null);
  const [name, setName] = useState("");
  const [kind, setKind] = useState<ExecutorKind>("WORKTREE" as ExecutorKind);
  const [draft, setDraft] = useState<BoxDraft>(EMPTY_BOX);
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
      const settings = isBox(kind) ? settingsOf(kind, draft) : {};
      unwrap((await gql(CREATE_EXECUTOR_PROFILE, { i: { workspaceId, name, kind, ...settings } })).createExecutorProfile);
      setName("");
      setDraft(EMPTY_BOX);
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
        {isBox(kind) && <BoxSettingsFields kind={kind} draft={draft} onChange={setDraft} />}
        <FormError error={add.error} testId="executor-error" />
      </form>
    </div>
  );
}

type TestReport = { ok: boolean; worker?: string | null; findings: string[]; error?: string | null };

function ExecutorItem({ row, onChange }: { row: ExecutorRow; onChange: () => Promise<unknown> }) {
  const [name, setName] = useState(row.name);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<BoxDraft>(() => draftOf(row));
  const [report, setReport] = useState<TestReport | null>(null);
  const action = useAction();
  const testing = useAction();
  const save = () =>
    action.run(async () => {
      const i = { executorProfileId: row.id, ...settingsOf(row.kind, draft) };
      unwrap((await gql(UPDATE_EXECUTOR_PROFILE, { i })).updateExecutorProfile);
      setEditing(false);
      await onChange();
    });
  const test = () =>
    testing.run(async () => {
      setReport(null);
      setReport(unwrap((await gql(TEST_EXECUTOR_PROFILE, { id: row.id })).testExecutorProfile));
    });
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
      {isBox(row.kind) && (
        <>
          <button type="button" className="btn btn-small" onClick={() => setEditing((v) => !v)} aria-expanded={editing} data-testid="edit-executor">
            Settings
          </button>
          <button type="button" className="btn btn-small" onClick={() => void test()} disabled={testing.busy} data-testid="test-executor">
            {testing.busy ? "Testing…" : "Test this profile"}
          </button>
        </>
      )}
      <button type="button" className="btn btn-small btn-danger" onClick={() => void remove()} data-testid="delete-executor">
        Delete
      </button>
      {isBox(row.kind) && (
        <p className="muted row-detail" data-testid="executor-capabilities">
          Needs a worker with: {row.capabilities.join(", ")}
          {row.unavailableReason && (
            <span className="warn" data-testid="executor-unavailable">
              {" "}
              · {row.unavailableReason}
            </span>
          )}
        </p>
      )}
      {editing && (
        <form className="row-detail" onSubmit={(e) => (e.preventDefault(), void save())} data-testid="executor-settings-form">
          <BoxSettingsFields kind={row.kind} draft={draft} onChange={setDraft} />
          <button className="btn btn-small btn-primary" disabled={action.busy} data-testid="save-executor-settings">
            Save settings
          </button>
        </form>
      )}
      {report && (
        <div className={`row-detail test-report ${report.ok ? "ok" : "failed"}`} role="status" data-testid="executor-test-report">
          <strong>{report.ok ? "The box works" : "The box could not be made"}</strong>
          {report.worker && <span className="muted"> · on worker {report.worker}</span>}
          {report.error && <p data-testid="executor-test-error">{report.error}</p>}
          <ul>
            {report.findings.map((line, index) => (
              <li key={index}>{line}</li>
            ))}
          </ul>
        </div>
      )}
      <FormError error={testing.error} testId="executor-test-failure" />
      <FormError error={action.error} testId="executor-row-error" />
    </li>
  );
}
