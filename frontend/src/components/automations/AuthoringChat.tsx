// "Describe an automation" (/automations/describe, then /automations/describe/<task>): a chat with the
// authoring agent. What it has captured shows beside the conversation; when it asks for a yes, a card shows
// the whole definition; when it hands over (or at any time), the form opens filled in with the draft.
import { useEffect, useId, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { SEND_MESSAGE } from "../../api/ops";
import { AUTHORING_CHAT, AUTHORING_DRAFT, START_AUTHORING, type Authoring } from "../../api/automationEditorOps";
import { useSession } from "../../hooks/useSession";
import { linkClick, navigate } from "../../router";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "../settings/useAction";
import { Transcript } from "../Transcript";
import { automationPath } from "../Automations";
import { GITHUB } from "./AutomationEditor";

export function authoringPath(taskId: string): string {
  return `/automations/describe/${encodeURIComponent(taskId)}`;
}

export function AuthoringChat(props: { taskId: string | null }) {
  return props.taskId ? <Chat taskId={props.taskId} /> : <Describe />;
}

function Describe() {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const [text, setText] = useState("");
  const start = useAction();
  const id = useId();
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void start.run(async () => {
      const started = unwrap((await gql(START_AUTHORING, { i: { workspaceId: workspaceId!, prompt: text.trim() } })).startAutomationAuthoring);
      navigate(authoringPath(started.task.id));
    });
  };
  return (
    <section className="authoring pad" aria-labelledby={`${id}-title`}>
      <h1 id={`${id}-title`} className="page-title">
        Describe an automation
      </h1>
      <p className="muted">
        Say what it should do and when; the authoring agent asks what is missing, checks it and creates it after your yes. Or{" "}
        <a href="/automations/new" onClick={linkClick("/automations/new")}>
          fill in the form
        </a>
        .
      </p>
      <form className="form" onSubmit={submit} data-testid="authoring-start">
        <label className="field">
          <span>What should it do?</span>
          <textarea className="input" rows={3} value={text} onChange={(e) => setText(e.target.value)} required data-testid="authoring-prompt" placeholder="Summarise the merged pull requests every weekday at 9" />
        </label>
        <FormError error={start.error} />
        <div className="form-actions">
          <button type="submit" className="btn btn-primary" disabled={start.busy || !text.trim()} data-testid="authoring-begin">
            Start
          </button>
        </div>
      </form>
    </section>
  );
}

function Chat({ taskId }: { taskId: string }) {
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [draft, setDraft] = useState<Authoring | null>(null);
  const loading = useAction();
  const sending = useAction();
  const [text, setText] = useState("");
  const view = useSession(sessionId);
  const id = useId();

  useEffect(() => {
    void loading.run(async () => {
      const data = await gql(AUTHORING_CHAT, { task: taskId });
      setSessionId(data.task.sessions[0]?.id ?? null);
      setDraft(data.authoringDraft);
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [taskId]);
  // The draft is replayed from the operator's messages: read it again whenever the conversation moves.
  const agentMessages = view.messages.filter((m) => m.kind === "AGENT").length;
  useEffect(() => {
    if (agentMessages > 0) void gql(AUTHORING_DRAFT, { task: taskId }).then((data) => setDraft(data.authoringDraft));
  }, [agentMessages, taskId]);

  const send = (prompt: string) =>
    sending.run(async () => {
      unwrap((await gql(SEND_MESSAGE, { i: { taskId, prompt } })).sendMessage);
      setText("");
    });
  const working = view.state === "RUNNING" || view.state === "STARTING";

  return (
    <section className="authoring authoring-chat" aria-labelledby={`${id}-title`} data-testid="authoring-chat" data-state={draft?.state ?? ""}>
      <div className="authoring-head pad">
        <h1 id={`${id}-title`} className="page-title">
          Describe an automation
        </h1>
        <a className="btn btn-small" href={`/automations/new?from=${encodeURIComponent(taskId)}`} onClick={linkClick(`/automations/new?from=${encodeURIComponent(taskId)}`)} data-testid="authoring-to-form">
          Continue in the form
        </a>
      </div>
      <FormError error={loading.error} />
      <Transcript messages={view.messages} state={view.state} hasOlder={view.hasOlder} loadingOlder={view.loadingOlder} onLoadOlder={view.loadOlder} />
      {draft && <DraftCard draft={draft} working={working} onYes={() => void send("yes")} taskId={taskId} />}
      {draft?.state !== "CONFIRMED" && draft?.state !== "HANDED_OFF" && (
        <form
          className="composer"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) void send(text.trim());
          }}
        >
          <label className="sr-only" htmlFor={`${id}-reply`}>
            Reply to the authoring agent
          </label>
          <textarea id={`${id}-reply`} className="input" rows={2} value={text} onChange={(e) => setText(e.target.value)} data-testid="authoring-reply" />
          <FormError error={sending.error} />
          <div className="form-actions">
            <button type="submit" className="btn btn-primary" disabled={sending.busy || !text.trim()} data-testid="authoring-send">
              Send
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

function when(draft: Authoring): string {
  if (draft.triggers.length === 0) return "not yet";
  return draft.triggers
    .map((t) =>
      t.type === "SCHEDULED"
        ? `${t.expression}${t.timezone ? ` (${t.timezone})` : " (UTC)"}`
        : t.type === "WEBHOOK"
          ? "when its webhook is called"
          : (GITHUB[t.type as keyof typeof GITHUB]?.label ?? t.type).toLowerCase(),
    )
    .join("; ");
}

function DraftCard(props: { draft: Authoring; working: boolean; onYes: () => void; taskId: string }) {
  const { draft } = props;
  const form = `/automations/new?from=${encodeURIComponent(props.taskId)}`;
  return (
    <aside className="draft-card" aria-label="What the chat has captured" data-testid="authoring-draft">
      <dl className="kv">
        <dt>Name</dt>
        <dd data-testid="draft-name">{draft.name ?? "not yet"}</dd>
        <dt>Asks</dt>
        <dd data-testid="draft-prompt">{draft.prompt ?? "not yet"}</dd>
        <dt>Fires</dt>
        <dd data-testid="draft-when">{when(draft)}</dd>
      </dl>
      {draft.state === "CONFIRMING" && (
        <div className="form-actions">
          <a className="btn" href={form} onClick={linkClick(form)}>
            Edit in the form
          </a>
          <button type="button" className="btn btn-primary" onClick={props.onYes} disabled={props.working} data-testid="authoring-yes">
            Yes, create it
          </button>
        </div>
      )}
      {draft.state === "CONFIRMED" && draft.automationId && (
        <p role="status" data-testid="authoring-confirmed">
          Created.{" "}
          <a href={automationPath(draft.automationId)} onClick={linkClick(automationPath(draft.automationId))} data-testid="authoring-open-automation">
            Open {draft.name ? `“${draft.name}”` : "the automation"}
          </a>
        </p>
      )}
      {draft.state === "HANDED_OFF" && (
        <p role="status" data-testid="authoring-handed-off">
          The chat handed over:{" "}
          <a href={form} onClick={linkClick(form)}>
            continue in the form with what it captured
          </a>
          .
        </p>
      )}
    </aside>
  );
}
