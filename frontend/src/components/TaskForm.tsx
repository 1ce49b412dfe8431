// The form behind "New task" and "New subtask". Only the subtask form offers Autopilot: top-level
// tasks get it through the API, and nothing offers to change it after creation.
import { useEffect, useId, useState } from "react";
import { CREATE_TASK, START_TASK } from "../api/ops";
import { MCP_SERVERS, SELECT_MCP_SERVER, type McpServerRow } from "../api/mcpOps";
import { EXECUTOR_PROFILES, type ExecutorRow } from "../api/settingsOps";
import { LIMITS } from "../api/limits";
import { errorText, gql, unwrap } from "../api/graphql";
import type { Task } from "../api/ops";
import type { CreateTaskInput } from "../gql/graphql";
import { app, applyTask } from "../state/app";
import { defaultProfile } from "../state/derive";
import { useStore } from "../state/store";
import { t } from "../i18n";
import { InfoGlyph } from "./Icons";
import { InlineError } from "./LoadState";

export function TaskForm(props: {
  parentId?: string;
  workflowId?: string;
  /** What the form starts with (the onboarding's first task). */
  initial?: { title: string; prompt: string };
  onDone: (task: Task, started: boolean) => void;
  onCancel: () => void;
}) {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const profiles = useStore(app, (s) => s.profiles);
  const [title, setTitle] = useState(props.initial?.title ?? "");
  const [prompt, setPrompt] = useState(props.initial?.prompt ?? "");
  const [profileId, setProfileId] = useState(defaultProfile(profiles)?.id ?? "");
  const [start, setStart] = useState(true);
  const [autopilot, setAutopilot] = useState(false);
  const [showInfo, setShowInfo] = useState(false);
  const [mcpServers, setMcpServers] = useState<McpServerRow[]>([]);
  const [mcpChosen, setMcpChosen] = useState<string[]>([]);
  const [executors, setExecutors] = useState<ExecutorRow[]>([]);
  const [executorId, setExecutorId] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const subtask = Boolean(props.parentId);
  const willStart = start && prompt.trim().length > 0;
  useEffect(() => {
    if (workspaceId) void gql(MCP_SERVERS, { w: workspaceId }).then((r) => setMcpServers(r.mcpServers), () => setMcpServers([]));
    if (workspaceId) void gql(EXECUTOR_PROFILES, { w: workspaceId }).then((r) => setExecutors(r.executorProfiles), () => setExecutors([]));
  }, [workspaceId]);
  const toggleMcp = (serverId: string, on: boolean) => setMcpChosen((ids) => (on ? [...ids, serverId] : ids.filter((x) => x !== serverId)));

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!title.trim()) {
      setError("A title is required.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const input: CreateTaskInput = {
        workspaceId: workspaceId!,
        title: title.trim(),
        prompt: prompt.trim() || null,
        // With MCP servers chosen, the agent starts once they are selected at the task, so its first turn has them.
        startAgent: willStart && mcpChosen.length === 0,
        agentProfileId: profileId || null,
        executorProfileId: executorId || null,
      };
      if (props.workflowId && !subtask) input.workflowId = props.workflowId;
      if (subtask) {
        input.parentId = props.parentId;
        input.autopilot = autopilot;
      }
      const data = await gql(CREATE_TASK, { i: input });
      let task = unwrap(data.createTask).task!;
      for (const mcpServerId of mcpChosen) {
        unwrap((await gql(SELECT_MCP_SERVER, { i: { mcpServerId, scope: "TASK", targetId: task.id } })).selectMcpServer);
      }
      if (willStart && mcpChosen.length > 0) {
        const started = unwrap((await gql(START_TASK, { i: { taskId: task.id, prompt: input.prompt, agentProfileId: input.agentProfileId } })).startTask);
        task = started.task ?? task;
      }
      applyTask(task);
      props.onDone(task, willStart);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="form" onSubmit={submit} data-testid={subtask ? "subtask-form" : "task-form"}>
      <label className="field">
        <span>Title</span>
        <input
          className="input"
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          required
          autoFocus
          maxLength={LIMITS.CreateTaskInput.title.maxLength}
          name="title"
        />
      </label>
      <label className="field">
        <span>
          Prompt <span className="muted">(optional)</span>
        </span>
        <textarea
          className="input"
          rows={4}
          value={prompt}
          onChange={(e) => setPrompt(e.target.value)}
          name="prompt"
          placeholder="What should the agent do? With the Scripted agent try: /say hello"
        />
      </label>
      <div className="field-row">
        <label className="field">
          <span>Agent</span>
          <select className="input" value={profileId} onChange={(e) => setProfileId(e.target.value)} name="agent">
            {profiles.map((p) => (
              <option key={p.id} value={p.id} disabled={!p.available}>
                {p.name}
                {p.available ? "" : ` (needs ${p.missingCommand ?? "setup"})`}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={willStart}
            disabled={!prompt.trim()}
            onChange={(e) => setStart(e.target.checked)}
            name="start"
          />
          <span>Start the agent now</span>
        </label>
      </div>
      {subtask && (
        <div className="autopilot-field">
          <span className="switch-wrap">
            <button
              type="button"
              role="switch"
              aria-checked={autopilot}
              aria-labelledby={`${id}-ap`}
              className={`switch${autopilot ? " is-on" : ""}`}
              onClick={() => setAutopilot((v) => !v)}
              data-testid="autopilot-switch"
            >
              <span className="switch-knob" aria-hidden="true" />
            </button>
            <span id={`${id}-ap`} className="switch-label">
              {t("autopilot")}
            </span>
          </span>
          <button
            type="button"
            className="icon-btn"
            aria-label="About Autopilot"
            aria-expanded={showInfo}
            aria-controls={`${id}-info`}
            onClick={() => setShowInfo((v) => !v)}
            data-testid="autopilot-info"
          >
            <InfoGlyph />
          </button>
          {showInfo && (
            <p id={`${id}-info`} className="info-text">
              {t("autopilotInfo")}
            </p>
          )}
        </div>
      )}
      <details className="field" data-testid="task-advanced">
        <summary>Advanced</summary>
        <label className="field">
          <span>Executor</span>
          <select className="input" value={executorId} onChange={(e) => setExecutorId(e.target.value)} name="executor" data-testid="task-executor">
            <option value="">The workspace's default</option>
            {executors.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
                {x.unavailableReason ? ` (${x.unavailableReason})` : ""}
              </option>
            ))}
          </select>
        </label>
        <fieldset className="field" data-testid="task-mcp-selector">
          <legend>MCP servers for this task</legend>
          {mcpServers.length === 0 && <p className="muted">No MCP servers are configured (Settings → MCP servers).</p>}
          {mcpServers.map((s) => (
            <label key={s.id} className="check">
              <input type="checkbox" checked={mcpChosen.includes(s.id)} onChange={(e) => toggleMcp(s.id, e.target.checked)} data-testid="task-mcp-select" data-name={s.name} />
              <code>{s.name}</code>
            </label>
          ))}
        </fieldset>
      </details>
      <InlineError error={error} />
      <div className="form-actions">
        <button type="button" className="btn" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy} data-testid="create-task-submit">
          {busy ? "Creating…" : subtask ? "Create subtask" : "Create task"}
        </button>
      </div>
    </form>
  );
}
