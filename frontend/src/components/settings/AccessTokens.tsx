// Personal access tokens: create one (shown once, here), see when each was last used, revoke one; the list is
// live (a token issued or revoked elsewhere shows without a reload).
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import { ACCESS_TOKENS, CREATE_ACCESS_TOKEN, REVOKE_ACCESS_TOKEN, type TokenRow } from "../../api/settingsOps";
import { useConfigChange } from "../../hooks/useConfigChange";
import { FormError, useAction } from "./useAction";

function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "never";
}

export function AccessTokens() {
  const [tokens, setTokens] = useState<TokenRow[] | null>(null);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const load = useAction();
  const create = useAction();
  const reload = useCallback(() => load.run(async () => setTokens((await gql(ACCESS_TOKENS)).accessTokens)), []);
  useEffect(() => void reload(), [reload]);
  // A token issued or revoked in another tab, or through the API, shows here (told to its owner only).
  useConfigChange(["ACCESS_TOKEN"], reload);

  const submit = () =>
    create.run(async () => {
      const { token } = unwrap((await gql(CREATE_ACCESS_TOKEN, { name })).createAccessToken);
      setCreated(token);
      setName("");
      await reload();
    });
  const revoke = (token: TokenRow) =>
    window.confirm(`Revoke ${token.name}? Anything using it is signed out.`) &&
    load.run(async () => {
      unwrap((await gql(REVOKE_ACCESS_TOKEN, { id: token.id })).revokeAccessToken);
      await reload();
    });

  return (
    <div className="settings-body">
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void submit())}>
        <h2>New access token</h2>
        <p className="muted">For the API, GraphiQL, the RQ dashboard and the CLI. Treat it like a password.</p>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required placeholder="laptop" data-testid="token-name" />
          </label>
          <button className="btn btn-primary" disabled={create.busy || !name.trim()} data-testid="create-token">
            Create
          </button>
        </div>
        <FormError error={create.error} />
        {created && (
          <div className="token-once" role="status" data-testid="new-token">
            <p>Copy it now: it is not shown again.</p>
            <code>{created}</code>
            <div className="field-row">
              <button type="button" className="btn btn-small" onClick={() => void navigator.clipboard?.writeText(created)}>
                Copy
              </button>
              <button type="button" className="btn btn-small" onClick={() => setCreated(null)} data-testid="dismiss-token">
                Done
              </button>
            </div>
          </div>
        )}
      </form>
      <div className="panel">
        <h2>Your tokens</h2>
        <FormError error={load.error} />
        {tokens && tokens.length === 0 && <p className="muted">No tokens yet.</p>}
        <ul className="rows" data-testid="tokens">
          {tokens?.map((t) => (
            <li key={t.id} className="row" data-testid="token" data-name={t.name}>
              <div className="row-main">
                <strong>{t.name}</strong>
                <div className="muted">
                  Created {when(t.createdAt)} · last used {when(t.lastUsedAt)}
                  {t.revokedAt && <> · <span data-testid="token-revoked">revoked {when(t.revokedAt)}</span></>}
                </div>
              </div>
              {!t.revokedAt && (
                <button type="button" className="btn btn-small btn-danger" onClick={() => void revoke(t)} data-testid="revoke-token">
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
