// Cards above the composer for what a task waits on: a permission, a clarification, its parent.
import { useEffect, useState } from "react";
import {
  answerClarification,
  pendingClarifications,
  pendingParentQuestion,
  rejectClarification,
  type Clarification,
  type ParentQuestion,
} from "../api/clarifications";
import { errorText, gql, jsonObject, unwrap } from "../api/graphql";
import { PENDING_PERMISSIONS, RESOLVE_PERMISSION } from "../api/ops";
import type { PermissionRequest, Task } from "../api/ops";
import { app } from "../state/app";
import { useStore } from "../state/store";
import { t } from "../i18n";
import { linkClick, taskPath } from "../router";
import { InlineError } from "./LoadState";

/** Loads `fetch` whenever `key` changes while `active`; clears when inactive. */
function usePending<T>(active: boolean, key: unknown, fetch: () => Promise<T[]>): [T[], string | null, () => void] {
  const [items, setItems] = useState<T[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    if (!active) {
      setItems([]);
      return;
    }
    let cancelled = false;
    fetch()
      .then((found) => {
        if (!cancelled) {
          setItems(found);
          setError(null);
        }
      })
      .catch((err) => !cancelled && setError(errorText(err)));
    return () => {
      cancelled = true;
    };
  }, [active, key, nonce]);
  return [items, error, () => setNonce((n) => n + 1)];
}

export function PermissionCards({ task }: { task: Task }) {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const version = useStore(app, (s) => s.taskVersion[task.id] ?? 0);
  const [requests, error, reload] = usePending<PermissionRequest>(
    task.pendingAction === "PERMISSION",
    `${version}:${task.pendingAction}`,
    async () =>
      (await gql(PENDING_PERMISSIONS, { w: workspaceId!, t: task.id }))
        .pendingPermissions,
  );
  return (
    <>
      <InlineError error={error ? `Could not load the permission request: ${error}` : null} />
      {requests.map((r) => (
        <PermissionCard key={r.id} request={r} onResolved={reload} />
      ))}
    </>
  );
}

function PermissionCard({ request, onResolved }: { request: PermissionRequest; onResolved: () => void }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const rawInput = jsonObject(request.toolCall).raw_input;
  const resolve = async (optionId: string) => {
    setBusy(optionId);
    setError(null);
    try {
      const data = await gql(RESOLVE_PERMISSION, {
        i: { requestId: request.id, optionId },
      });
      unwrap(data.resolvePermission);
      onResolved();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(null);
    }
  };
  const allows = request.options.filter((o) => o.kind.startsWith("allow"));
  const rejects = request.options.filter((o) => !o.kind.startsWith("allow"));
  return (
    <section className="action-card card-permission" aria-labelledby={`perm-${request.id}`} data-testid="permission-card">
      <h3 id={`perm-${request.id}`}>The agent asks for permission</h3>
      <p className="action-title">{request.title || "A tool call"}</p>
      {rawInput !== undefined && rawInput !== null && (
        <details>
          <summary>Details</summary>
          <pre>{JSON.stringify(rawInput, null, 2)}</pre>
        </details>
      )}
      <InlineError error={error} />
      <div className="action-buttons">
        {[...allows, ...rejects].map((o) => (
          <button
            key={o.optionId}
            type="button"
            className={`btn ${o.kind.startsWith("allow") ? "btn-primary" : "btn-danger"}`}
            disabled={busy !== null}
            onClick={() => void resolve(o.optionId)}
            data-testid={o.kind.startsWith("allow") ? "permission-allow" : "permission-deny"}
          >
            {busy === o.optionId ? "…" : o.name}
          </button>
        ))}
      </div>
    </section>
  );
}

export function ClarificationCards({ task }: { task: Task }) {
  const workspaceId = useStore(app, (s) => s.workspaceId);
  const version = useStore(app, (s) => s.taskVersion[task.id] ?? 0);
  const isChildWait = task.autopilot && Boolean(task.parentId);
  const [items, error, reload] = usePending<Clarification>(
    task.pendingAction === "CLARIFICATION" && !isChildWait,
    `${version}:${task.pendingAction}`,
    () => pendingClarifications(workspaceId!, task.id),
  );
  return (
    <>
      <InlineError error={error ? `Could not load the question: ${error}` : null} />
      {items.map((c) => (
        <ClarificationCard key={c.id} clarification={c} onDone={reload} />
      ))}
    </>
  );
}

function ClarificationCard({ clarification, onDone }: { clarification: Clarification; onDone: () => void }) {
  const [selected, setSelected] = useState<Record<string, string[]>>({});
  const [custom, setCustom] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      onDone();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    void run(() =>
      answerClarification(
        clarification.id,
        clarification.questions.map((q) => ({
          questionId: q.id,
          selectedOptions: selected[q.id] ?? [],
          customText: custom[q.id]?.trim() || null,
        })),
      ),
    );
  };
  return (
    <form className="action-card card-question" onSubmit={submit} data-testid="clarification-card">
      <h3>The agent asks</h3>
      {clarification.context && <p className="muted">{clarification.context}</p>}
      {clarification.questions.map((q) => (
        <fieldset key={q.id} className="question">
          <legend>{q.title ? `${q.title}: ` : ""}{q.prompt}</legend>
          {q.options.map((o) => (
            <label key={o.label} className="check">
              <input
                type="radio"
                name={`q-${clarification.id}-${q.id}`}
                checked={(selected[q.id] ?? []).includes(o.label)}
                onChange={() => setSelected((s) => ({ ...s, [q.id]: [o.label] }))}
              />
              <span>
                {o.label}
                {o.description && <span className="muted"> — {o.description}</span>}
              </span>
            </label>
          ))}
          <label className="field">
            <span className="sr-only">Your own answer</span>
            <input
              className="input"
              placeholder={q.options.length ? "Or write your own answer" : "Your answer"}
              value={custom[q.id] ?? ""}
              onChange={(e) => setCustom((c) => ({ ...c, [q.id]: e.target.value }))}
            />
          </label>
        </fieldset>
      ))}
      <InlineError error={error} />
      <div className="action-buttons">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Answer
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => void run(() => rejectClarification(clarification.id))}>
          Decline
        </button>
      </div>
    </form>
  );
}

/** An autopilot child whose question waits on its parent says so, and on which question. */
export function ParentWait({ task }: { task: Task }) {
  const parent = useStore(app, (s) => (task.parentId ? s.tasks[task.parentId] : undefined));
  const version = useStore(app, (s) => s.taskVersion[task.id] ?? 0);
  const waiting = task.autopilot && Boolean(task.parentId) && task.pendingAction === "CLARIFICATION";
  const [question, setQuestion] = useState<ParentQuestion | null>(null);
  useEffect(() => {
    if (!waiting) {
      setQuestion(null);
      return;
    }
    let cancelled = false;
    pendingParentQuestion(task.id)
      .then((q) => !cancelled && setQuestion(q))
      .catch(() => !cancelled && setQuestion(null));
    return () => {
      cancelled = true;
    };
  }, [waiting, task.id, version]);
  if (!waiting || !task.parentId) return null;
  return (
    <section className="action-card card-parent" data-testid="parent-wait" role="status">
      <h3>{t("waitingOnParent")}</h3>
      <p>
        Waiting for{" "}
        <a href={taskPath(task.parentId)} onClick={linkClick(taskPath(task.parentId))}>
          {parent?.title ?? "the parent task"}
        </a>{" "}
        to answer{question ? ":" : " its question."}
      </p>
      {question && (
        <ul className="parent-questions">
          {question.prompts.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
