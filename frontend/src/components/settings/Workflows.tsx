// The workflow editor: a workflow's steps (add, rename, reorder, delete moving their tasks), each step's
// prompt, flags and events, the completion-signal gate, the server's loop warnings, and YAML export/import.
import { useCallback, useEffect, useId, useRef, useState } from "react";
import { gql, jsonObject, unwrap } from "../../api/graphql";
import {
  CREATE_WORKFLOW,
  CREATE_WORKFLOW_STEP,
  DELETE_WORKFLOW,
  DELETE_WORKFLOW_STEP,
  EXPORT_WORKFLOW,
  IMPORT_WORKFLOW,
  REORDER_WORKFLOW_STEPS,
  UPDATE_WORKFLOW,
  UPDATE_WORKFLOW_STEP,
  WORKFLOW_EDITOR,
  type EditorStep,
  type EditorWorkflow,
} from "../../api/workflowOps";
import { app, refreshWorkflows } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";
import { useConfigChange } from "../../hooks/useConfigChange";
import { useServerDraft } from "../../hooks/useServerDraft";

type Action = { type: string; prompt?: string; step_id?: string };
type Events = Record<string, Action[]>;
const MOVES = ["move_to_next", "move_to_previous", "move_to_step"];

/** A move select's value: "", "next", "previous" or "step:<id>". */
function moveOf(actions: Action[] | undefined): string {
  const move = actions?.find((a) => MOVES.includes(a.type));
  if (!move) return "";
  if (move.type === "move_to_step") return `step:${move.step_id ?? ""}`;
  return move.type === "move_to_next" ? "next" : "previous";
}

function moveAction(value: string): Action[] {
  if (value === "next") return [{ type: "move_to_next" }];
  if (value === "previous") return [{ type: "move_to_previous" }];
  if (value.startsWith("step:")) return [{ type: "move_to_step", step_id: value.slice(5) }];
  return [];
}

function eventsOf(step: EditorStep): Events {
  const raw = jsonObject(step.events);
  const events: Events = {};
  for (const [name, actions] of Object.entries(raw)) {
    if (Array.isArray(actions)) events[name] = actions.filter((a): a is Action => typeof a?.type === "string");
  }
  return events;
}

interface Draft {
  name: string;
  prompt: string;
  isStartStep: boolean;
  isFinalStep: boolean;
  allowManualMove: boolean;
  requiresSignal: boolean;
  autoStart: boolean;
  startPrompt: string;
  planMode: boolean;
  resetContext: boolean;
  onTurnStart: string;
  onTurnComplete: string;
  onChildren: string;
  /** Digits, or empty for no limit. */
  wipLimit: string;
}

function draftOf(step: EditorStep): Draft {
  const events = eventsOf(step);
  const enter = events.on_enter ?? [];
  const start = enter.find((a) => a.type === "auto_start_agent");
  return {
    name: step.name,
    prompt: step.prompt,
    isStartStep: step.isStartStep,
    isFinalStep: step.isFinalStep,
    allowManualMove: step.allowManualMove,
    requiresSignal: step.autoAdvanceRequiresSignal,
    autoStart: !!start,
    startPrompt: start?.prompt ?? "",
    planMode: enter.some((a) => a.type === "enable_plan_mode"),
    resetContext: enter.some((a) => a.type === "reset_agent_context"),
    onTurnStart: moveOf(events.on_turn_start),
    onTurnComplete: moveOf(events.on_turn_complete),
    onChildren: moveOf(events.on_children_completed),
    wipLimit: step.wipLimit == null ? "" : String(step.wipLimit),
  };
}

/** The step's events from a draft; actions the editor doesn't show (disable_plan_mode) are kept. */
function eventsFrom(draft: Draft, before: Events): Events {
  const enter: Action[] = [];
  if (draft.resetContext) enter.push({ type: "reset_agent_context" });
  if (draft.planMode) enter.push({ type: "enable_plan_mode" });
  if (draft.autoStart) enter.push(draft.startPrompt.trim() ? { type: "auto_start_agent", prompt: draft.startPrompt } : { type: "auto_start_agent" });
  const others = (name: string) => (before[name] ?? []).filter((a) => !MOVES.includes(a.type));
  const events: Events = {
    on_enter: enter,
    on_turn_start: moveAction(draft.onTurnStart),
    on_turn_complete: [...moveAction(draft.onTurnComplete), ...others("on_turn_complete")],
    on_exit: before.on_exit ?? [],
    on_children_completed: moveAction(draft.onChildren),
  };
  return Object.fromEntries(Object.entries(events).filter(([, actions]) => actions.length > 0));
}

export function Workflows() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [workflows, setWorkflows] = useState<EditorWorkflow[] | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const load = useAction();
  const reload = useCallback(
    () =>
      load.run(async () => {
        const data = await gql(WORKFLOW_EDITOR, { w: workspaceId });
        setWorkflows(data.workflows.map((w) => ({ ...w, steps: [...w.steps].sort((a, b) => a.position - b.position) })));
      }),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  useConfigChange(["WORKFLOW"], reload);
  /** After a write: this page and the board both show the new state. */
  const changed = useCallback(async () => {
    await Promise.all([reload(), refreshWorkflows()]);
  }, [reload]);

  const workflow = workflows?.find((w) => w.id === selected) ?? workflows?.[0];
  return (
    <div className="settings-body">
      <p className="muted">A workflow is the board's columns: the steps tasks move through, and what the agent does in each.</p>
      <FormError error={load.error} />
      {workflows && (
        <div className="panel">
          <div className="field-row">
            <label className="field">
              <span>Workflow</span>
              <select className="input" value={workflow?.id ?? ""} onChange={(e) => setSelected(e.target.value)} data-testid="workflow-select">
                {workflows.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <NewWorkflow workspaceId={workspaceId} onCreated={async (id) => (await changed(), setSelected(id))} />
          <ImportWorkflow workspaceId={workspaceId} onImported={async (id) => (await changed(), setSelected(id))} />
        </div>
      )}
      {workflow && (
        <WorkflowEditor key={workflow.id} workflow={workflow} onChange={changed} onDeleted={async () => (setSelected(null), await changed())} />
      )}
    </div>
  );
}

function NewWorkflow({ workspaceId, onCreated }: { workspaceId: string; onCreated: (id: string) => Promise<unknown> }) {
  const [name, setName] = useState("");
  const action = useAction();
  const create = () =>
    action.run(async () => {
      const made = unwrap((await gql(CREATE_WORKFLOW, { i: { workspaceId, name } })).createWorkflow);
      setName("");
      await onCreated(made.workflow.id);
    });
  return (
    <form className="field-row" onSubmit={(e) => (e.preventDefault(), void create())}>
      <label className="field">
        <span>New workflow</span>
        <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required placeholder="Name" data-testid="new-workflow-name" />
      </label>
      <button className="btn" disabled={action.busy || !name.trim()} data-testid="create-workflow">
        Create
      </button>
      <FormError error={action.error} testId="new-workflow-error" />
    </form>
  );
}

function ImportWorkflow({ workspaceId, onImported }: { workspaceId: string; onImported: (id: string) => Promise<unknown> }) {
  const [yaml, setYaml] = useState("");
  const action = useAction();
  const run = () =>
    action.run(async () => {
      const made = unwrap((await gql(IMPORT_WORKFLOW, { i: { workspaceId, yaml } })).importWorkflow);
      setYaml("");
      await onImported(made.workflow.id);
    });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), void run())}>
      <label className="field">
        <span>Import a workflow (YAML, as exported)</span>
        <textarea className="input mono" rows={3} value={yaml} onChange={(e) => setYaml(e.target.value)} required data-testid="import-yaml" />
      </label>
      <label className="field">
        <span>Or read it from a file</span>
        <input
          type="file"
          className="input"
          accept=".yaml,.yml,text/yaml"
          onChange={(e) => void e.target.files?.[0]?.text().then(setYaml)}
          data-testid="import-file"
        />
      </label>
      <div className="form-actions">
        <button className="btn" disabled={action.busy || !yaml.trim()} data-testid="import-workflow">
          Import as a new workflow
        </button>
      </div>
      <FormError error={action.error} testId="import-error" />
    </form>
  );
}

function WorkflowEditor(props: { workflow: EditorWorkflow; onChange: () => Promise<unknown>; onDeleted: () => Promise<unknown> }) {
  const { workflow, onChange } = props;
  const [name, setName] = useServerDraft(workflow.name);
  const [description, setDescription] = useServerDraft(workflow.description ?? "");
  const [exported, setExported] = useState<string | null>(null);
  const rename = useAction();
  const order = useAction();
  const exporting = useAction();
  const removing = useAction();
  const steps = workflow.steps;

  const saveName = () =>
    rename.run(async () => {
      unwrap((await gql(UPDATE_WORKFLOW, { i: { workflowId: workflow.id, name, description } })).updateWorkflow);
      await onChange();
    });
  const move = (index: number, by: number) =>
    order.run(async () => {
      const ids = steps.map((s) => s.id);
      [ids[index], ids[index + by]] = [ids[index + by], ids[index]];
      unwrap((await gql(REORDER_WORKFLOW_STEPS, { i: { workflowId: workflow.id, stepIds: ids } })).reorderWorkflowSteps);
      await onChange();
      refocus.current = { stepId: steps[index].id, by };
    });
  // Keyboard users keep their place: once the list shows the new order (buttons enabled again), focus
  // follows the moved step (the other arrow when it reached either end).
  const refocus = useRef<{ stepId: string; by: number } | null>(null);
  useEffect(() => {
    if (!refocus.current || order.busy) return;
    const { stepId, by } = refocus.current;
    refocus.current = null;
    const row = document.querySelector(`[data-testid="workflow-step"][data-step-id="${stepId}"]`);
    const names = by < 0 ? ["up", "down"] : ["down", "up"];
    const target = names.map((n) => row?.querySelector<HTMLButtonElement>(`[data-testid="step-${n}"]`)).find((b) => b && !b.disabled);
    target?.focus();
  }, [steps, order.busy]);
  const remove = () =>
    window.confirm(`Delete the workflow ${workflow.name}?`) &&
    removing.run(async () => {
      unwrap((await gql(DELETE_WORKFLOW, { id: workflow.id })).deleteWorkflow);
      await props.onDeleted();
    });
  const exportYaml = () =>
    exporting.run(async () => {
      setExported((await gql(EXPORT_WORKFLOW, { id: workflow.id })).exportWorkflow ?? "");
    });

  return (
    <>
      <div className="panel" data-testid="workflow-editor" data-workflow-id={workflow.id}>
        <form className="field-row" onSubmit={(e) => (e.preventDefault(), void saveName())}>
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required data-testid="workflow-name" />
          </label>
          <label className="field">
            <span>Description</span>
            <input className="input" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={10000} data-testid="workflow-description" />
          </label>
          <button
            className="btn"
            disabled={rename.busy || !name.trim() || (name === workflow.name && description === (workflow.description ?? ""))}
            data-testid="rename-workflow"
          >
            Save
          </button>
          <button type="button" className="btn" onClick={() => void exportYaml()} disabled={exporting.busy} data-testid="export-workflow">
            Export YAML
          </button>
          <button type="button" className="btn btn-danger" onClick={() => void remove()} disabled={removing.busy} data-testid="delete-workflow">
            Delete workflow
          </button>
        </form>
        <FormError error={rename.error ?? exporting.error ?? removing.error} testId="workflow-error" />
        {exported !== null && (
          <label className="field">
            <span>Exported YAML (copy it, or import it into another workspace)</span>
            <textarea className="input mono" rows={8} readOnly value={exported} data-testid="export-yaml" />
          </label>
        )}
        {workflow.warnings.length > 0 && (
          <div className="notice" role="status" data-testid="workflow-warnings">
            {workflow.warnings.map((w) => (
              <p key={w} className="workflow-warning" data-testid="workflow-warning">
                ⚠ {w}
              </p>
            ))}
          </div>
        )}
      </div>
      <div className="panel">
        <h2>Steps</h2>
        <FormError error={order.error} testId="reorder-error" />
        <ol className="rows wf-steps" data-testid="workflow-steps">
          {steps.map((step, index) => (
            <StepItem
              key={step.id}
              step={step}
              steps={steps}
              first={index === 0}
              last={index === steps.length - 1}
              busy={order.busy}
              onMove={(by) => void move(index, by)}
              onChange={onChange}
            />
          ))}
        </ol>
        <AddStep workflowId={workflow.id} onChange={onChange} />
      </div>
    </>
  );
}

function AddStep({ workflowId, onChange }: { workflowId: string; onChange: () => Promise<unknown> }) {
  const [name, setName] = useState("");
  const action = useAction();
  const add = () =>
    action.run(async () => {
      unwrap((await gql(CREATE_WORKFLOW_STEP, { i: { workflowId, name } })).createWorkflowStep);
      setName("");
      await onChange();
    });
  return (
    <form className="field-row" onSubmit={(e) => (e.preventDefault(), void add())}>
      <label className="field">
        <span>New step</span>
        <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required placeholder="Review" data-testid="new-step-name" />
      </label>
      <button className="btn" disabled={action.busy || !name.trim()} data-testid="add-step">
        Add step
      </button>
      <FormError error={action.error} testId="add-step-error" />
    </form>
  );
}

interface StepItemProps {
  step: EditorStep;
  steps: EditorStep[];
  first: boolean;
  last: boolean;
  busy: boolean;
  onMove: (by: number) => void;
  onChange: () => Promise<unknown>;
}

function StepItem({ step, steps, first, last, busy, onMove, onChange }: StepItemProps) {
  const [open, setOpen] = useState(false);
  const formId = useId();
  return (
    <li className="row wf-step" data-testid="workflow-step" data-step-id={step.id} data-name={step.name}>
      <span className="row-main">
        <strong>{step.name}</strong>
        {step.isStartStep && <span className="step-flag wf-flag">start</span>}
        {step.isFinalStep && <span className="step-flag wf-flag">final</span>}
        {step.autoAdvanceRequiresSignal && <span className="step-flag wf-flag">waits for signal</span>}
      </span>
      <button type="button" className="btn btn-small" onClick={() => onMove(-1)} disabled={first || busy} aria-label={`Move ${step.name} up`} data-testid="step-up">
        ↑
      </button>
      <button type="button" className="btn btn-small" onClick={() => onMove(1)} disabled={last || busy} aria-label={`Move ${step.name} down`} data-testid="step-down">
        ↓
      </button>
      <button type="button" className="btn btn-small" onClick={() => setOpen(!open)} aria-expanded={open} aria-controls={formId} data-testid="edit-step">
        {open ? "Close" : "Edit"}
      </button>
      {open && (
        <div id={formId} className="wf-step-body">
          <StepForm key={JSON.stringify(step)} step={step} steps={steps} onChange={onChange} />
          <DeleteStep step={step} steps={steps} onChange={onChange} />
        </div>
      )}
    </li>
  );
}

function MoveSelect(props: { label: string; value: string; onChange: (v: string) => void; step: EditorStep; steps: EditorStep[]; testId: string }) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <select className="input" value={props.value} onChange={(e) => props.onChange(e.target.value)} data-testid={props.testId}>
        <option value="">Stay</option>
        <option value="next">Move to the next step</option>
        <option value="previous">Move to the previous step</option>
        {props.steps
          .filter((s) => s.id !== props.step.id)
          .map((s) => (
            <option key={s.id} value={`step:${s.id}`}>
              Move to {s.name}
            </option>
          ))}
      </select>
    </label>
  );
}

function Check(props: { label: string; checked: boolean; onChange: (v: boolean) => void; testId: string; role?: "switch" }) {
  return (
    <label className="check">
      <input type="checkbox" role={props.role} checked={props.checked} onChange={(e) => props.onChange(e.target.checked)} data-testid={props.testId} />
      <span>{props.label}</span>
    </label>
  );
}

function StepForm({ step, steps, onChange }: { step: EditorStep; steps: EditorStep[]; onChange: () => Promise<unknown> }) {
  const [draft, setDraft] = useServerDraft(draftOf(step));
  const action = useAction();
  const set = <K extends keyof Draft>(key: K) => (value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const gated = draft.onTurnComplete !== "";
  const save = () =>
    action.run(async () => {
      const input = {
        stepId: step.id,
        name: draft.name,
        prompt: draft.prompt,
        isFinalStep: draft.isFinalStep,
        allowManualMove: draft.allowManualMove,
        autoAdvanceRequiresSignal: gated && draft.requiresSignal,
        events: eventsFrom(draft, eventsOf(step)),
        // Explicit null removes the limit.
        wipLimit: draft.wipLimit.trim() === "" ? null : Number(draft.wipLimit),
        // Only a step can claim the start: the previous start step gives it up.
        ...(draft.isStartStep && !step.isStartStep ? { isStartStep: true } : {}),
      };
      unwrap((await gql(UPDATE_WORKFLOW_STEP, { i: input })).updateWorkflowStep);
      await onChange();
    });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), void save())} data-testid="step-form">
      <label className="field">
        <span>Name</span>
        <input className="input" value={draft.name} onChange={(e) => set("name")(e.target.value)} maxLength={200} required data-testid="step-name" />
      </label>
      <label className="field">
        <span>Step prompt (what the agent is told when this step starts it)</span>
        <textarea className="input" rows={3} value={draft.prompt} onChange={(e) => set("prompt")(e.target.value)} data-testid="step-prompt" />
      </label>
      <label className="field wf-wip">
        <span>WIP limit (most tasks moved in by hand; empty: no limit)</span>
        <input className="input" type="number" min={1} step={1} inputMode="numeric" value={draft.wipLimit} onChange={(e) => set("wipLimit")(e.target.value)} data-testid="step-wip-limit" />
      </label>
      <div className="field-row">
        <Check label="Start step" checked={draft.isStartStep} onChange={set("isStartStep")} testId="step-start" />
        <Check label="Final step (tasks entering it are done)" checked={draft.isFinalStep} onChange={set("isFinalStep")} testId="step-final" />
        <Check label="People may move tasks here" checked={draft.allowManualMove} onChange={set("allowManualMove")} testId="step-manual" />
      </div>
      <fieldset className="wf-events">
        <legend>When a task enters</legend>
        <Check label="Start the agent" checked={draft.autoStart} onChange={set("autoStart")} testId="step-auto-start" />
        {draft.autoStart && (
          <label className="field">
            <span>Prompt override (empty: the step prompt)</span>
            <textarea className="input" rows={2} value={draft.startPrompt} onChange={(e) => set("startPrompt")(e.target.value)} data-testid="step-start-prompt" />
          </label>
        )}
        <Check label="Turn on plan mode" checked={draft.planMode} onChange={set("planMode")} testId="step-plan-mode" />
        <Check label="Reset the agent's context" checked={draft.resetContext} onChange={set("resetContext")} testId="step-reset-context" />
      </fieldset>
      <fieldset className="wf-events">
        <legend>Moves</legend>
        <div className="field-row">
          <MoveSelect label="When the agent's turn starts" value={draft.onTurnStart} onChange={set("onTurnStart")} step={step} steps={steps} testId="step-on-turn-start" />
          <MoveSelect label="When the agent's turn completes" value={draft.onTurnComplete} onChange={set("onTurnComplete")} step={step} steps={steps} testId="step-on-turn-complete" />
          <MoveSelect label="When all subtasks are done" value={draft.onChildren} onChange={set("onChildren")} step={step} steps={steps} testId="step-on-children" />
        </div>
        {gated && (
          <div className="wf-gate">
            <Check label="Wait for agent completion signal" role="switch" checked={draft.requiresSignal} onChange={set("requiresSignal")} testId="step-requires-signal" />
            <p className="muted wf-hint">The task moves on only after the agent calls step_complete_kandev (or you mark it complete).</p>
          </div>
        )}
      </fieldset>
      <div className="form-actions">
        <button className="btn btn-primary" disabled={action.busy || !draft.name.trim()} data-testid="save-step">
          Save step
        </button>
      </div>
      <FormError error={action.error} testId="step-error" />
    </form>
  );
}

function DeleteStep({ step, steps, onChange }: { step: EditorStep; steps: EditorStep[]; onChange: () => Promise<unknown> }) {
  const others = steps.filter((s) => s.id !== step.id);
  const [target, setTarget] = useState("");
  const action = useAction();
  const remove = () =>
    window.confirm(`Delete the step ${step.name}?`) &&
    action.run(async () => {
      unwrap((await gql(DELETE_WORKFLOW_STEP, { id: step.id, to: target || null })).deleteWorkflowStep);
      await onChange();
    });
  return (
    <div className="field-row wf-delete">
      <label className="field">
        <span>Its tasks move to</span>
        <select className="input" value={target} onChange={(e) => setTarget(e.target.value)} data-testid="delete-step-target">
          <option value="">Nowhere (refused if it has tasks)</option>
          {others.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      <button type="button" className="btn btn-danger" onClick={() => void remove()} disabled={action.busy} data-testid="delete-step">
        Delete step
      </button>
      <FormError error={action.error} testId="delete-step-error" />
    </div>
  );
}
