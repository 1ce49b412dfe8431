// The form behind "New task" and "New subtask". Only the subtask form offers Autopilot: top-level
// tasks get it through the API, and nothing offers to change it after creation.
import { useEffect, useId, useState } from "react";
import { CREATE_TASK, START_TASK } from "../api/ops";
import { MCP_SERVERS, SELECT_MCP_SERVER, type McpServerRow } from "../api/mcpOps";
import { TASK_PLACEMENT_CHOICES, type PlacementExecutor, type PlacementRepository } from "../api/placementOps";
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
import { ExecutorSelect, RepositoryPicker, type RepositoryChoice } from "./RepositoryPicker";
import { AttachmentPicker, attachmentHandlers, PendingAttachments, useAttachments } from "./Attachments";
import { askForBrowserNotificationsOnce } from "../state/browserNotify";

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
  const [busy, setBusy] = useState(false);
  // Files go with the task's first prompt.
  const attachments = useAttachments();
  const [error, setError] = useState<string | null>(null);
  const [repositories, setRepositories] = useState<PlacementRepository[]>([]);
  const [executors, setExecutors] = useState<PlacementExecutor[]>([]);
  const [chosenRepositories, setChosenRepositories] = useState<RepositoryChoice[]>([]);
  const [executorId, setExecutorId] = useState("");
  const id = useId();
  const subtask = Boolean(props.parentId);
  const willStart = start && prompt.trim().length > 0;
  useEffect(() => {
    if (workspaceId) void gql(MCP_SERVERS, { w: workspaceId }).then((r) => setMcpServers(r.mcpServers), () => setMcpServers([]));
  }, [workspaceId]);
  // Where a top-level task works, starting from where this person's last task did; a subtask works in its
  // parent's place and runs where its parent does unless another executor is chosen.
  useEffect(() => {
    if (!workspaceId) return;
    let cancelled = false;
    gql(TASK_PLACEMENT_CHOICES, { w: workspaceId }).then(
      (data) => {
        if (cancelled) return;
        setExecutors(data.executorProfiles);
        if (subtask) return;
        setRepositories(data.repositories);
        const last = data.workspaces.find((w) => w.id === workspaceId)?.lastTaskChoice;
        if (!last) return;
        const known = (repoId: string) => data.repositories.some((r) => r.id === repoId);
        setChosenRepositories(last.repositories.filter((r) => known(r.repositoryId)).map((r) => ({ repositoryId: r.repositoryId, baseBranch: r.baseBranch ?? null })));
        if (last.executorProfileId && data.executorProfiles.some((x) => x.id === last.executorProfileId)) setExecutorId(last.executorProfileId);
        if (last.agentProfileId && profiles.some((p) => p.id === last.agentProfileId && p.available)) setProfileId(last.agentProfileId);
      },
      () => {},
    );
    return () => {
      cancelled = true;
    };
    // The profiles list only decides whether the remembered agent is still offered; read it once.
  }, [workspaceId, subtask]);
  const toggleMcp = (serverId: string, on: boolean) => setMcpChosen((ids) => (on ? [...ids, serverId] : ids.filter((x) => x !== serverId)));

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!title.trim()) {
      setError("A title is required.");
      return;
    }
    if (attachments.uploading || attachments.failed) {
      setError(attachments.uploading ? "Wait for the attached files to finish uploading." : "Remove the files that could not be attached first.");
      return;
    }
    askForBrowserNotificationsOnce();
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
        attachmentIds: attachments.ids.length ? attachments.ids : null,
      };
      if (props.workflowId && !subtask) input.workflowId = props.workflowId;
      input.executorProfileId = executorId || null;
      if (!subtask) input.repositories = chosenRepositories.map((r) => ({ repositoryId: r.repositoryId, baseBranch: r.baseBranch }));
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
          {...attachmentHandlers(attachments)}
        />
      </label>
      <div className="field-row">
        <AttachmentPicker state={attachments} disabled={busy} />
        <PendingAttachments state={attachments} />
      </div>
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
      {!subtask && <RepositoryPicker workspaceId={workspaceId} repositories={repositories} value={chosenRepositories} onChange={setChosenRepositories} />}
      <ExecutorSelect executors={executors} value={executorId} onChange={setExecutorId} subtask={subtask} />
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
