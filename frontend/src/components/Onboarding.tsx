// What an empty workspace's board shows: a first task with the built-in Scripted agent (no model, no
// account, works offline), and how to connect a real agent.
import { linkClick } from "../router";

/** The Scripted agent's directives, one per line; the first task's prompt. */
export const FIRST_TASK = {
  title: "My first task",
  prompt: "/say Looking at the workspace now.\n/tool list_tasks_kandev {}\n/say Done: **one** task found.",
};

export function Onboarding(props: { onTryIt: () => void }) {
  return (
    <section className="onboarding" aria-labelledby="onboarding-title" data-testid="onboarding">
      <h2 id="onboarding-title">Start with a first task</h2>
      <ol className="onboarding-steps">
        <li>
          <p>
            Run one with the <strong>Scripted</strong> agent: it is built in and needs no model or account. It follows
            directives, one per line:
          </p>
          <pre className="onboarding-code">{FIRST_TASK.prompt}</pre>
          <dl className="onboarding-directives">
            <dt>
              <code>/say TEXT</code>
            </dt>
            <dd>writes an agent message (Markdown)</dd>
            <dt>
              <code>/tool NAME JSON</code>
            </dt>
            <dd>calls a Kandev MCP tool; the call expands to its arguments and result</dd>
            <dt>
              <code>/sleep SECONDS</code>
            </dt>
            <dd>waits (press Stop meanwhile)</dd>
            <dt>
              <code>/fail TEXT</code>
            </dt>
            <dd>fails the turn, to see how an error looks</dd>
          </dl>
          <button type="button" className="btn btn-primary" onClick={props.onTryIt} data-testid="onboarding-try">
            Try the Scripted agent
          </button>
        </li>
        <li>
          <p>
            Connect a real agent: add its key (for example <code>ANTHROPIC_API_KEY</code>) in{" "}
            <a href="/settings/secrets" onClick={linkClick("/settings/secrets")}>
              Settings → Secrets
            </a>
            , then in{" "}
            <a href="/settings/agents" onClick={linkClick("/settings/agents")}>
              Settings → Agent profiles
            </a>{" "}
            give its profile the environment <code>{"ANTHROPIC_API_KEY=${secret:ANTHROPIC_API_KEY}"}</code>. A profile
            whose command is not installed says which command to install.
          </p>
        </li>
      </ol>
    </section>
  );
}
