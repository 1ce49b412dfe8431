// The workspace's code-host connections: GitHub (a token) and GitLab (a token and, optionally, the instance).
// A token is verified by the code host before it is stored, sent once and never shown again.
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import {
  CODE_HOST_CONNECTIONS,
  CONNECT_GITHUB,
  CONNECT_GITLAB,
  DISCONNECT_GITHUB,
  DISCONNECT_GITLAB,
  type Connections as ConnectionState,
} from "../../api/connectionOps";
import { app } from "../../state/app";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";

export function Connections() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [state, setState] = useState<ConnectionState | null>(null);
  const load = useAction();
  const reload = useCallback(
    () => load.run(async () => setState(await gql(CODE_HOST_CONNECTIONS, { w: workspaceId }))),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);

  return (
    <div className="settings-body">
      <p className="muted">
        Agents read and update their task's pull or merge request through these connections. Tokens are verified with the code host, stored
        encrypted as workspace secrets and never shown again.
      </p>
      <FormError error={load.error} />
      <GithubPanel workspaceId={workspaceId} connection={state?.githubConnection ?? null} loaded={state !== null} onChange={reload} />
      <GitlabPanel workspaceId={workspaceId} connection={state?.gitlabConnection ?? null} loaded={state !== null} onChange={reload} />
    </div>
  );
}

type PanelProps<T> = { workspaceId: string; connection: T | null; loaded: boolean; onChange: () => Promise<unknown> };

function GithubPanel({ workspaceId, connection, loaded, onChange }: PanelProps<NonNullable<ConnectionState["githubConnection"]>>) {
  const [token, setToken] = useState("");
  const action = useAction();
  const connect = () =>
    action.run(async () => {
      unwrap((await gql(CONNECT_GITHUB, { i: { workspaceId, token } })).connectGithub);
      setToken("");
      await onChange();
    });
  const disconnect = () =>
    window.confirm("Disconnect GitHub? Its token is forgotten.") &&
    action.run(async () => {
      unwrap((await gql(DISCONNECT_GITHUB, { w: workspaceId })).disconnectGithub);
      await onChange();
    });
  return (
    <form className="panel" onSubmit={(e) => (e.preventDefault(), void connect())} data-testid="github-connection">
      <h2>GitHub</h2>
      {loaded && (
        <p data-testid="github-status">
          {connection ? (
            <>
              Connected as <strong>{connection.login}</strong> on {connection.host}
            </>
          ) : (
            "Not connected"
          )}
        </p>
      )}
      <div className="field-row">
        <label className="field">
          <span>{connection ? "New token" : "Token"}</span>
          <input className="input" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} required data-testid="github-token" />
        </label>
        <button className="btn btn-primary" disabled={action.busy || !token.trim()} data-testid="connect-github">
          {connection ? "Replace token" : "Connect"}
        </button>
        {connection && (
          <button type="button" className="btn btn-danger" onClick={() => void disconnect()} disabled={action.busy} data-testid="disconnect-github">
            Disconnect
          </button>
        )}
      </div>
      <FormError error={action.error} testId="github-error" />
    </form>
  );
}

function GitlabPanel({ workspaceId, connection, loaded, onChange }: PanelProps<NonNullable<ConnectionState["gitlabConnection"]>>) {
  const [token, setToken] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const action = useAction();
  const connect = () =>
    action.run(async () => {
      const input = { workspaceId, token, baseUrl: baseUrl.trim() || connection?.baseUrl || null };
      unwrap((await gql(CONNECT_GITLAB, { i: input })).connectGitlab);
      setToken("");
      await onChange();
    });
  const disconnect = () =>
    window.confirm("Disconnect GitLab? Its token is forgotten.") &&
    action.run(async () => {
      unwrap((await gql(DISCONNECT_GITLAB, { w: workspaceId })).disconnectGitlab);
      await onChange();
    });
  return (
    <form className="panel" onSubmit={(e) => (e.preventDefault(), void connect())} data-testid="gitlab-connection">
      <h2>GitLab</h2>
      {loaded && (
        <p data-testid="gitlab-status">
          {connection ? (
            <>
              Connected as <strong>{connection.username}</strong> on {connection.baseUrl}
            </>
          ) : (
            "Not connected"
          )}
        </p>
      )}
      <div className="field-row">
        <label className="field">
          <span>Instance URL</span>
          <input
            className="input"
            type="url"
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.target.value)}
            placeholder={connection?.baseUrl ?? "https://gitlab.com (the server's default)"}
            maxLength={500}
            data-testid="gitlab-base-url"
          />
        </label>
        <label className="field">
          <span>{connection ? "New token" : "Token"}</span>
          <input className="input" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} required data-testid="gitlab-token" />
        </label>
        <button className="btn btn-primary" disabled={action.busy || !token.trim()} data-testid="connect-gitlab">
          {connection ? "Replace token" : "Connect"}
        </button>
        {connection && (
          <button type="button" className="btn btn-danger" onClick={() => void disconnect()} disabled={action.busy} data-testid="disconnect-gitlab">
            Disconnect
          </button>
        )}
      </div>
      <FormError error={action.error} testId="gitlab-error" />
    </form>
  );
}
