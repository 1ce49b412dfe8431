// The automation editor (/automations/new, /automations/<id>/edit): what runs ask, when they fire (a schedule,
// a GitHub condition, both, or a webhook alone), where their tasks go, the repositories they work in, and
// how runs relate to each other. The server checks everything again on save; its refusal is shown as is.
import { useEffect, useId, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { CODE_HOST_CONNECTIONS } from "../../api/connectionOps";
import { REPOSITORIES } from "../../api/settingsOps";
import {
  AUTHORING_DRAFT,
  AUTOMATION_FOR_EDIT,
  CREATE_AUTOMATION,
  UPDATE_AUTOMATION,
  type Authoring,
  type EditedAutomation,
} from "../../api/automationEditorOps";
import type {
  AutomationContext,
  AutomationDestination,
  AutomationTriggerInput,
  AutomationTriggerType,
  RepositoriesQuery,
} from "../../gql/graphql";
import { AutomationBudget } from "../usage/AutomationBudget";
import { linkClick, navigate } from "../../router";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { toast } from "../../state/toasts";
import { FormError, useAction } from "../settings/useAction";
import { ScheduleField } from "./ScheduleField";

type Mode = "MANUAL" | "EVENTS" | "WEBHOOK";
type GithubType = Extract<AutomationTriggerType, `GITHUB_${string}`>;
type Filter = {
  name: string;
  label: string;
  kind: "list" | "bool";
  choices?: string[];
  hint?: string;
  fallback?: string;
  // What an empty list means (default: any).
  empty?: string;
};

const PR_EVENTS = ["opened", "reopened", "synchronize", "ready_for_review", "edited", "labeled"];
const CONCLUSIONS = ["success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale"];
// An empty list is not evaluated (the spec); every repository is the explicit choice below it.
const REPOS: Filter = {
  name: "repositories",
  label: "Repositories (owner/name)",
  kind: "list",
  hint: "acme/api, acme/web",
  empty: "none: the condition is not evaluated",
};
const ALL_REPOS: Filter = { name: "all_repositories", label: "All repositories on", kind: "bool" };
export const GITHUB: Record<GithubType, { label: string; filters: Filter[] }> = {
  GITHUB_PR: {
    label: "A pull request is opened or updated",
    filters: [
      REPOS,
      ALL_REPOS,
      { name: "base_branches", label: "Base branches", kind: "list", hint: "main, release/*" },
      { name: "authors", label: "Authors (GitHub logins)", kind: "list" },
      { name: "events", label: "Events", kind: "list", choices: PR_EVENTS, fallback: "opened" },
      { name: "exclude_drafts", label: "Skip draft pull requests", kind: "bool" },
    ],
  },
  GITHUB_PR_MERGED: {
    label: "A pull request is merged",
    filters: [{ ...REPOS, empty: "every repository" }, { name: "base_branches", label: "Base branches", kind: "list", hint: "main, release/*" }],
  },
  GITHUB_PUSH: {
    label: "Commits are pushed",
    filters: [REPOS, ALL_REPOS, { name: "branches", label: "Branches", kind: "list", hint: "main, release/*" }],
  },
  GITHUB_CI: {
    label: "A CI check completes",
    filters: [
      REPOS,
      ALL_REPOS,
      { name: "conclusions", label: "Conclusions", kind: "list", choices: CONCLUSIONS, fallback: "failure" },
      { name: "check_names", label: "Check names", kind: "list" },
      { name: "head_branches", label: "Head branches", kind: "list" },
    ],
  },
};

interface Draft {
  name: string;
  description: string;
  prompt: string;
  titleTemplate: string;
  agentProfileId: string;
  destination: AutomationDestination;
  workflowId: string;
  workflowStepId: string;
  context: AutomationContext;
  maxConcurrentRuns: number;
  enabled: boolean;
  mode: Mode;
  /** A webhook that takes signed deliveries only. */
  signedOnly: boolean;
  schedule: { on: boolean; expression: string; timezone: string };
  github: { on: boolean; type: GithubType; filters: Record<string, unknown> };
  repositories: { repositoryId: string; baseBranch: string }[];
}

type TriggerLike = {
  type: AutomationTriggerType;
  expression?: string | null;
  timezone?: string | null;
  filters?: unknown;
  requireSignature?: boolean | null;
};

/** When it runs, read from a trigger set (a saved automation's, or what a chat captured). */
function whenOf(triggers: readonly TriggerLike[], fresh: boolean): Pick<Draft, "mode" | "signedOnly" | "schedule" | "github"> {
  const scheduled = triggers.find((t) => t.type === "SCHEDULED");
  const github = triggers.find((t) => t.type.startsWith("GITHUB_"));
  const webhook = triggers.find((t) => t.type === "WEBHOOK");
  return {
    mode: webhook ? "WEBHOOK" : scheduled || github || fresh ? "EVENTS" : "MANUAL",
    signedOnly: Boolean(webhook?.requireSignature),
    schedule: {
      on: Boolean(scheduled) || (fresh && !github),
      expression: scheduled?.expression ?? "0 9 * * 1-5",
      timezone: scheduled?.timezone ?? "",
    },
    github: {
      on: Boolean(github),
      type: (github?.type as GithubType | undefined) ?? "GITHUB_PR",
      filters: (github?.filters as Record<string, unknown> | null | undefined) ?? {},
    },
  };
}

function draftOf(a: EditedAutomation | null, defaultProfile: string): Draft {
  return {
    name: a?.name ?? "",
    description: a?.description ?? "",
    prompt: a?.prompt ?? "",
    titleTemplate: a?.titleTemplate ?? "",
    agentProfileId: a ? (a.agentProfileId ?? "") : defaultProfile,
    destination: a?.destination ?? "HIDDEN",
    workflowId: a?.workflowId ?? "",
    workflowStepId: a?.workflowStepId ?? "",
    context: a?.context ?? "NEW_TASK_PER_RUN",
    maxConcurrentRuns: a?.maxConcurrentRuns ?? 1,
    enabled: a?.enabled ?? true,
    ...whenOf(a?.triggers ?? [], !a),
    repositories: (a?.repositories ?? []).map((r) => ({ repositoryId: r.repositoryId, baseBranch: r.baseBranch })),
  };
}

/** A new automation filled in with what a "describe an automation" chat captured (its hand-off). */
function draftFromChat(chat: Authoring, defaultProfile: string): Draft {
  const empty = chat.triggers.length === 0;
  return { ...draftOf(null, defaultProfile), name: chat.name ?? "", prompt: chat.prompt ?? "", ...whenOf(chat.triggers, empty) };
}

function triggersOf(d: Draft): AutomationTriggerInput[] {
  if (d.mode === "WEBHOOK") return [{ type: "WEBHOOK", requireSignature: d.signedOnly }];
  if (d.mode === "MANUAL") return [];
  const triggers: AutomationTriggerInput[] = [];
  if (d.schedule.on) triggers.push({ type: "SCHEDULED", expression: d.schedule.expression, timezone: d.schedule.timezone.trim() });
  if (d.github.on) {
    const known = new Set(GITHUB[d.github.type].filters.map((f) => f.name));
    // List filters typed as text are sent as lists: "main, release/*" → ["main", "release/*"].
    const filters = Object.fromEntries(
      Object.entries(d.github.filters)
        .filter(([name]) => known.has(name))
        .map(([name, value]) => [name, typeof value === "string" ? value.split(",").map((x) => x.trim()).filter(Boolean) : value]),
    );
    triggers.push({ type: d.github.type, filters });
  }
  return triggers;
}

function settingsOf(d: Draft) {
  return {
    name: d.name.trim(),
    description: d.description,
    prompt: d.prompt,
    titleTemplate: d.titleTemplate,
    agentProfileId: d.agentProfileId || null,
    destination: d.destination,
    workflowId: d.workflowId || null,
    workflowStepId: d.workflowStepId || null,
    context: d.context,
    maxConcurrentRuns: d.context === "CONTINUE_SESSION" ? 1 : d.maxConcurrentRuns,
    enabled: d.enabled,
    triggers: triggersOf(d),
    repositories: d.repositories.map((r) => ({ repositoryId: r.repositoryId, baseBranch: r.baseBranch.trim() || null })),
  };
}

function webhookUrl(automationId: string): string {
  return `${window.location.origin}/api/v1/automations/webhook/${encodeURIComponent(automationId)}`;
}

/** A webhook's address and its secret, shown once (after the save that created it). */
export function WebhookSecret(props: { automationId: string; secret: string; signedOnly: boolean }) {
  return (
    <div className="notice" role="status" data-testid="webhook-secret">
      <p>
        <strong>Copy the secret now:</strong> it is not shown again (Details can reveal it later).{" "}
        {props.signedOnly ? (
          <>Sign every delivery with it as shown under “When it runs”; never send it.</>
        ) : (
          <>
            Send it as the <code>X-Webhook-Secret</code> header, never in the URL, or sign deliveries with it.
          </>
        )}
      </p>
      <dl className="kv">
        <dt>URL</dt>
        <dd>
          <code data-testid="webhook-url">{webhookUrl(props.automationId)}</code>
        </dd>
        <dt>Secret</dt>
        <dd>
          <code data-testid="webhook-secret-value">{props.secret}</code>
        </dd>
      </dl>
    </div>
  );
}

/** How a sender signs a delivery (kandev.domain.automations.webhook_signatures): what the server checks. */
function WebhookSigning(props: { automationId: string | null }) {
  const url = props.automationId ? webhookUrl(props.automationId) : "<the webhook URL>";
  return (
    <div className="muted webhook-signing" data-testid="webhook-signing">
      <p>
        A signed delivery carries two headers: <code>X-Kandev-Timestamp</code>, the Unix time in whole seconds, and{" "}
        <code>X-Kandev-Signature</code>: <code>sha256=</code> and the hex HMAC-SHA256, keyed with the secret, of the
        timestamp, a dot and the raw body (<code>{"<timestamp>.<body>"}</code>). One signed more than 5 minutes from the
        server’s clock is refused, and so is a signature used before: sign each delivery, and each retry, anew.
      </p>
      <pre>{`ts=$(date +%s); body='{"version":"1.2.3"}'
sig=$(printf '%s.%s' "$ts" "$body" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')
curl -X POST "${url}" -H "X-Kandev-Timestamp: $ts" \\
  -H "X-Kandev-Signature: sha256=$sig" --data "$body"`}</pre>
    </div>
  );
}

export function AutomationEditor(props: { automationId: string | null }) {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const profiles = useStore(app, (s) => s.profiles);
  const workflows = useStore(app, (s) => s.workflows);
  const [draft, setDraft] = useState<Draft | null>(props.automationId ? null : draftOf(null, profiles.find((p) => p.available)?.id ?? ""));
  const [repositories, setRepositories] = useState<RepositoriesQuery["repositories"]>([]);
  const [githubHost, setGithubHost] = useState("the connected GitHub host");
  const [secret, setSecret] = useState<{ automationId: string; secret: string } | null>(null);
  const load = useAction();
  const save = useAction();
  const id = useId();

  useEffect(() => {
    if (!props.automationId) {
      const profile = app.get().profiles.find((p) => p.available)?.id ?? "";
      const chat = new URLSearchParams(window.location.search).get("from");
      if (!chat) setDraft(draftOf(null, profile));
      else void load.run(async () => setDraft(draftFromChat((await gql(AUTHORING_DRAFT, { task: chat })).authoringDraft, profile)));
      return;
    }
    void load.run(async () => {
      const data = await gql(AUTOMATION_FOR_EDIT, { id: props.automationId! });
      setDraft(draftOf(data.automation, ""));
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.automationId]);
  useEffect(() => {
    if (!workspaceId) return;
    void gql(REPOSITORIES, { w: workspaceId }).then((data) => setRepositories(data.repositories));
    void gql(CODE_HOST_CONNECTIONS, { w: workspaceId }).then((data) => setGithubHost(data.githubConnection?.host ?? "the connected GitHub host"));
  }, [workspaceId]);

  if (!draft) return <div className="pad">{load.error ? <FormError error={load.error} testId="automation-load-error" /> : <p className="muted">Loading…</p>}</div>;
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const workflow = workflows.find((w) => w.id === draft.workflowId);
  const unused = repositories.filter((r) => !draft.repositories.some((x) => x.repositoryId === r.id));

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void save.run(async () => {
      const settings = settingsOf(draft);
      const answer = props.automationId
        ? unwrap((await gql(UPDATE_AUTOMATION, { i: { automationId: props.automationId, ...settings } })).updateAutomation)
        : unwrap((await gql(CREATE_AUTOMATION, { i: { workspaceId: workspaceId!, ...settings } })).createAutomation);
      const saved = answer.automation;
      if (answer.webhookSecret) setSecret({ automationId: saved.id, secret: answer.webhookSecret });
      toast(`Saved “${saved.name}”`, "info");
      setDraft(draftOf(saved, ""));
      if (!props.automationId) navigate(`/automations/${encodeURIComponent(saved.id)}/edit`);
    });
  };

  return (
    <section className="automation-editor pad" aria-labelledby={`${id}-title`}>
      <div className="toolbar">
        <h1 id={`${id}-title`} className="page-title">
          {props.automationId ? `Edit “${draft.name}”` : "New automation"}
        </h1>
        <span className="spacer" />
        {props.automationId && (
          <a className="btn btn-small" href={`/automations/${encodeURIComponent(props.automationId)}`} onClick={linkClick(`/automations/${encodeURIComponent(props.automationId)}`)} data-testid="automation-runs-link">
            Runs and conversation
          </a>
        )}
      </div>
      {/* The same editor stays mounted from /automations/new to the new automation's page: the secret shows there. */}
      {secret && secret.automationId === props.automationId && <WebhookSecret {...secret} signedOnly={draft.signedOnly} />}
      <form className="form" onSubmit={submit} data-testid="automation-form">
        <label className="field">
          <span>Name</span>
          <input className="input" value={draft.name} onChange={(e) => set({ name: e.target.value })} required maxLength={200} data-testid="automation-name" />
        </label>
        <label className="field">
          <span>
            Description <span className="muted">(optional)</span>
          </span>
          <input className="input" value={draft.description} onChange={(e) => set({ description: e.target.value })} maxLength={5000} />
        </label>
        <label className="field">
          <span>What each run asks the agent</span>
          <textarea
            className="input"
            rows={4}
            value={draft.prompt}
            onChange={(e) => set({ prompt: e.target.value })}
            required
            placeholder="Placeholders such as {{trigger.type}} and {{data.pull_request.title}} are filled in."
            data-testid="automation-prompt"
          />
        </label>
        <div className="field-row">
          <label className="field">
            <span>Agent</span>
            <select className="input" value={draft.agentProfileId} onChange={(e) => set({ agentProfileId: e.target.value })} data-testid="automation-agent">
              <option value="">The workspace default</option>
              {profiles.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                  {p.available ? "" : ` (needs ${p.missingCommand ?? "setup"})`}
                </option>
              ))}
            </select>
          </label>
          <label className="check">
            <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} data-testid="automation-enabled" />
            <span>Enabled</span>
          </label>
        </div>

        <fieldset className="fieldset">
          <legend>When it runs</legend>
          {(
            [
              ["EVENTS", "On a schedule and/or GitHub events"],
              ["WEBHOOK", "When its webhook is called"],
              ["MANUAL", "Only when I press Run now"],
            ] as const
          ).map(([mode, label]) => (
            <label key={mode} className="check">
              <input type="radio" name={`${id}-mode`} checked={draft.mode === mode} onChange={() => set({ mode })} data-testid={`mode-${mode.toLowerCase()}`} />
              <span>{label}</span>
            </label>
          ))}
          {draft.mode === "WEBHOOK" && (
            <>
              <p className="muted">
                {props.automationId && secret === null
                  ? "The webhook keeps its secret when saved again."
                  : "Saving shows the webhook's URL and its secret once."}
              </p>
              <label className="check">
                <input
                  type="checkbox"
                  checked={draft.signedOnly}
                  onChange={(e) => set({ signedOnly: e.target.checked })}
                  data-testid="webhook-signed-only"
                />
                <span>Signed deliveries only (the secret itself is then refused)</span>
              </label>
              <WebhookSigning automationId={props.automationId} />
            </>
          )}
        </fieldset>

        {draft.mode === "EVENTS" && (
          <>
            <label className="check">
              <input
                type="checkbox"
                checked={draft.schedule.on}
                onChange={(e) => set({ schedule: { ...draft.schedule, on: e.target.checked } })}
                data-testid="schedule-on"
              />
              <span>On a schedule</span>
            </label>
            {draft.schedule.on && (
              <ScheduleField
                expression={draft.schedule.expression}
                timezone={draft.schedule.timezone}
                onChange={(value) => set({ schedule: { ...draft.schedule, ...value } })}
              />
            )}
            <label className="check">
              <input
                type="checkbox"
                checked={draft.github.on}
                onChange={(e) => set({ github: { ...draft.github, on: e.target.checked } })}
                data-testid="github-on"
              />
              <span>On a GitHub event</span>
            </label>
            {draft.github.on && <GithubField value={draft.github} onChange={(github) => set({ github })} host={githubHost} />}
          </>
        )}

        <fieldset className="fieldset">
          <legend>Where runs work</legend>
          {draft.repositories.length === 0 && <p className="muted">No repository: each run works in a scratch folder (no git).</p>}
          <ul className="repo-chips" data-testid="automation-repositories">
            {draft.repositories.map((r, index) => {
              const repo = repositories.find((x) => x.id === r.repositoryId);
              return (
                <li key={r.repositoryId} className="repo-chip" data-testid="automation-repository">
                  <span>{repo?.name ?? r.repositoryId}</span>
                  <label>
                    <span className="sr-only">Base branch of {repo?.name ?? "the repository"}</span>
                    <input
                      className="input input-small"
                      value={r.baseBranch}
                      placeholder={repo?.defaultBranch ?? "default branch"}
                      onChange={(e) =>
                        set({ repositories: draft.repositories.map((x, i) => (i === index ? { ...x, baseBranch: e.target.value } : x)) })
                      }
                    />
                  </label>
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`Remove ${repo?.name ?? "the repository"}`}
                    onClick={() => set({ repositories: draft.repositories.filter((_, i) => i !== index) })}
                  >
                    ×
                  </button>
                </li>
              );
            })}
          </ul>
          {unused.length > 0 && (
            <label className="field">
              <span>Add a repository</span>
              <select
                className="input"
                value=""
                onChange={(e) => e.target.value && set({ repositories: [...draft.repositories, { repositoryId: e.target.value, baseBranch: "" }] })}
                data-testid="automation-add-repository"
              >
                <option value="">Choose…</option>
                {unused.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <div className="field-row">
            <label className="field">
              <span>Runs go</span>
              <select className="input" value={draft.destination} onChange={(e) => set({ destination: e.target.value as AutomationDestination })} data-testid="automation-destination">
                <option value="HIDDEN">Only in the automation's history</option>
                <option value="NORMAL">As tasks on a board</option>
              </select>
            </label>
            {draft.destination === "NORMAL" && (
              <>
                <label className="field">
                  <span>Workflow</span>
                  <select className="input" value={draft.workflowId} onChange={(e) => set({ workflowId: e.target.value, workflowStepId: "" })} required data-testid="automation-workflow">
                    <option value="">Choose…</option>
                    {workflows.map((w) => (
                      <option key={w.id} value={w.id}>
                        {w.name}
                      </option>
                    ))}
                  </select>
                </label>
                <label className="field">
                  <span>Step</span>
                  <select className="input" value={draft.workflowStepId} onChange={(e) => set({ workflowStepId: e.target.value })}>
                    <option value="">The start step</option>
                    {(workflow?.steps ?? []).map((s) => (
                      <option key={s.id} value={s.id}>
                        {s.name}
                      </option>
                    ))}
                  </select>
                </label>
              </>
            )}
          </div>
          <label className="field">
            <span>
              Run title <span className="muted">(optional, same placeholders)</span>
            </span>
            <input className="input" value={draft.titleTemplate} onChange={(e) => set({ titleTemplate: e.target.value })} maxLength={500} />
          </label>
        </fieldset>

        <fieldset className="fieldset">
          <legend>Between runs</legend>
          <div className="field-row">
            <label className="field">
              <span>Context</span>
              <select className="input" value={draft.context} onChange={(e) => set({ context: e.target.value as AutomationContext })} data-testid="automation-context">
                <option value="NEW_TASK_PER_RUN">A fresh task each run</option>
                <option value="CONTINUE_SESSION">Continue the first run's conversation</option>
              </select>
            </label>
            <label className="field">
              <span>Runs at once</span>
              <input
                className="input"
                type="number"
                min={1}
                max={draft.context === "CONTINUE_SESSION" ? 1 : 50}
                value={draft.context === "CONTINUE_SESSION" ? 1 : draft.maxConcurrentRuns}
                disabled={draft.context === "CONTINUE_SESSION"}
                onChange={(e) => set({ maxConcurrentRuns: Math.max(1, Number(e.target.value) || 1) })}
                data-testid="automation-concurrency"
              />
            </label>
          </div>
        </fieldset>

        <FormError error={save.error} testId="automation-save-error" />
        <div className="form-actions">
          <button type="submit" className="btn btn-primary" disabled={save.busy} data-testid="save-automation">
            {props.automationId ? "Save" : "Create automation"}
          </button>
        </div>
      </form>
      <AutomationBudget automationId={props.automationId} />
    </section>
  );
}

function GithubField(props: { value: Draft["github"]; onChange: (value: Draft["github"]) => void; host: string }) {
  const id = useId();
  const { type, filters } = props.value;
  const every = filters.all_repositories === true;
  const setFilter = (name: string, value: unknown) => props.onChange({ ...props.value, filters: { ...filters, [name]: value } });
  const list = (name: string): string[] => (Array.isArray(filters[name]) ? (filters[name] as string[]) : []);
  return (
    <fieldset className="fieldset" data-testid="github-field">
      <legend>GitHub condition</legend>
      <label className="field">
        <span>Fires when</span>
        <select className="input" value={type} onChange={(e) => props.onChange({ ...props.value, type: e.target.value as GithubType })} data-testid="github-type">
          {(Object.keys(GITHUB) as GithubType[]).map((t) => (
            <option key={t} value={t}>
              {GITHUB[t].label}
            </option>
          ))}
        </select>
      </label>
      {GITHUB[type].filters.map((f) =>
        f.kind === "bool" ? (
          <label key={f.name} className="check">
            <input
              type="checkbox"
              checked={filters[f.name] === true}
              onChange={(e) =>
                f === ALL_REPOS
                  ? props.onChange({ ...props.value, filters: { ...filters, all_repositories: e.target.checked, repositories: [] } })
                  : setFilter(f.name, e.target.checked)
              }
              data-testid={`github-${f.name}`}
            />
            <span>{f === ALL_REPOS ? `${f.label} ${props.host}` : f.label}</span>
          </label>
        ) : f.choices ? (
          <fieldset key={f.name} className="fieldset fieldset-inline">
            <legend>
              {f.label} {f.fallback && <span className="muted">(none checked: {f.fallback})</span>}
            </legend>
            {f.choices.map((choice) => (
              <label key={choice} className="check">
                <input
                  type="checkbox"
                  checked={list(f.name).includes(choice)}
                  onChange={(e) => setFilter(f.name, e.target.checked ? [...list(f.name), choice] : list(f.name).filter((x) => x !== choice))}
                  name={`${id}-${f.name}`}
                />
                <span>{choice.replace(/_/g, " ")}</span>
              </label>
            ))}
          </fieldset>
        ) : (
          <label key={f.name} className="field">
            <span>
              {f.label} <span className="muted">(comma-separated; empty: {f.empty ?? "any"})</span>
            </span>
            <input
              className="input"
              value={typeof filters[f.name] === "string" ? (filters[f.name] as string) : list(f.name).join(", ")}
              placeholder={f.hint}
              onChange={(e) => setFilter(f.name, e.target.value)}
              disabled={f === REPOS && every}
              data-testid={`github-${f.name}`}
            />
          </label>
        ),
      )}
    </fieldset>
  );
}
