// Settings → Automations (/settings/automations): the current workspace's automations in a table with Run now,
// New automation and Export (one YAML document or a zip of YAML files, an empty workspace's included).
import { useMemo, useState } from "react";
import { errorText } from "../../api/graphql";
import { linkClick } from "../../router";
import { app } from "../../state/app";
import { automations } from "../../state/automations";
import { useStore } from "../../state/store";
import { toast } from "../../state/toasts";
import { AckBadge, automationPath, downloadExport, HealthDot, runAutomationNow } from "../Automations";
import { LoadState } from "../LoadState";

export function AutomationsSettings() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const byId = useStore(automations, (s) => s.byId);
  const load = useStore(automations, (s) => s.load);
  const error = useStore(automations, (s) => s.error);
  const rows = useMemo(() => Object.values(byId).sort((a, b) => a.name.localeCompare(b.name)), [byId]);
  const [busy, setBusy] = useState<string | null>(null);

  const act = async (key: string, what: () => Promise<unknown>) => {
    setBusy(key);
    try {
      await what();
    } catch (err) {
      toast(errorText(err));
    } finally {
      setBusy(null);
    }
  };
  const runNow = (id: string, name: string) =>
    act(id, async () => {
      if (await runAutomationNow(id)) toast(`“${name}” is running`, "info");
    });

  return (
    <div className="settings-body">
      <div className="panel" data-testid="settings-automations">
        <div className="toolbar">
          <h2>Automations</h2>
          <span className="spacer" />
          <button type="button" className="btn btn-small" onClick={() => void act("yaml", () => downloadExport(workspaceId, "yaml"))} disabled={busy !== null} data-testid="export-yaml">
            Export YAML
          </button>
          <button type="button" className="btn btn-small" onClick={() => void act("zip", () => downloadExport(workspaceId, "zip"))} disabled={busy !== null} data-testid="export-zip">
            Export zip
          </button>
          <a className="btn btn-small btn-primary" href="/automations/new" onClick={linkClick("/automations/new")} data-testid="settings-new-automation">
            New automation
          </a>
        </div>
        {load !== "ready" ? (
          <LoadState state={load === "error" ? "error" : "loading"} what="the automations" error={error} />
        ) : rows.length === 0 ? (
          <p className="muted" data-testid="settings-no-automations">
            No automations in this workspace yet.
          </p>
        ) : (
          <div className="table-scroll">
          <table className="table" data-testid="settings-automation-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Health</th>
                <th scope="col">Acknowledgement</th>
                <th scope="col">Next run</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} data-testid="settings-automation" data-automation-id={row.id}>
                  <td>
                    <a href={automationPath(row.id)} onClick={linkClick(automationPath(row.id))}>
                      {row.name}
                    </a>
                  </td>
                  <td>
                    <HealthDot row={row} />
                  </td>
                  <td>
                    <AckBadge row={row} />
                  </td>
                  <td className="muted small">{row.enabled ? row.nextRun.label : "Disabled"}</td>
                  <td>
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => void runNow(row.id, row.name)}
                      disabled={busy !== null || !row.enabled}
                      aria-label={`Run now: ${row.name}`}
                      data-testid="settings-run-now"
                    >
                      <span aria-hidden="true">▶ </span>Run now
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          </div>
        )}
      </div>
    </div>
  );
}
