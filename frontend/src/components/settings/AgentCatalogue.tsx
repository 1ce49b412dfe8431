// The catalogue of ACP agents Kandev knows how to run, below the agent profiles: what each runs, what it needs, whether
// it is installed here. npm-based agents get Install / Update: a worker installs the package (the server's job), and
// the row shows its progress — waiting, asking the registry, npm at work, with the time so far — and its error in
// place. An installed agent becomes a profile in one click (its command and its environment keys as secrets).
import { useCallback, useEffect, useState } from "react";
import { errorText, gql, unwrap } from "../../api/graphql";
import { AGENT_CATALOGUE, INSTALL_AGENT, UPDATE_AGENT, type CatalogueEntry } from "../../api/catalogueOps";
import { useNow } from "../../hooks/useNow";
import { t, type StringKey } from "../../i18n";
import { FormError } from "./useAction";
import "./catalogue.css";

// While an install waits or runs, the catalogue is read again this often.
const POLL_MS = 1_000;
const ACTIVE = ["QUEUED", "RESOLVING", "INSTALLING"];
const PHASES: Record<string, StringKey> = { QUEUED: "installQueued", RESOLVING: "installResolving", INSTALLING: "installInstalling" };

export function AgentCatalogue({ onUse, onInstalled }: { onUse: (entry: CatalogueEntry) => void; onInstalled: () => void }) {
  const [entries, setEntries] = useState<CatalogueEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const read = useCallback(async () => {
    try {
      setEntries((await gql(AGENT_CATALOGUE)).agentCatalogue);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => void read(), [read, nonce]);
  const active = entries?.some((e) => e.installJob && ACTIVE.includes(e.installJob.state)) ?? false;
  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(() => setNonce((n) => n + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [active, entries]);
  const replace = (entry: CatalogueEntry) => setEntries((list) => list?.map((e) => (e.id === entry.id ? entry : e)) ?? null);

  return (
    <div className="panel" data-testid="agent-catalogue">
      <div className="panel-head">
        <h2>{t("catalogueTitle")}</h2>
      </div>
      <p className="muted small">{t("catalogueIntro")}</p>
      <FormError error={error} />
      <ul className="rows">
        {entries?.map((entry) => (
          <CatalogueRow key={entry.id} entry={entry} onChange={replace} onUse={onUse} onInstalled={onInstalled} />
        ))}
      </ul>
    </div>
  );
}

function CatalogueRow(props: { entry: CatalogueEntry; onChange: (entry: CatalogueEntry) => void; onUse: (entry: CatalogueEntry) => void; onInstalled: () => void }) {
  const { entry } = props;
  const job = entry.installJob;
  const running = Boolean(job && ACTIVE.includes(job.state));
  const [refusal, setRefusal] = useState<string | null>(null);
  const [asked, setAsked] = useState(false);
  const { onInstalled } = props;
  // A job this page started (or watched) that ends well: the profiles may run it now.
  useEffect(() => {
    if (asked && job?.state === "DONE") onInstalled();
  }, [asked, job?.state, onInstalled]);
  const start = async (update: boolean) => {
    setRefusal(null);
    setAsked(true);
    try {
      const answer = update ? (await gql(UPDATE_AGENT, { id: entry.id })).updateAgent : (await gql(INSTALL_AGENT, { id: entry.id })).installAgent;
      props.onChange(unwrap(answer).agent);
    } catch (err) {
      setRefusal(errorText(err));
    }
  };
  const npm = entry.install.npmPackage;
  return (
    <li className="row catalogue-row" data-testid="catalogue-entry" data-agent={entry.id} data-installed={entry.installed} aria-busy={running}>
      <div className="row-main">
        <strong>{entry.name}</strong>{" "}
        <span className={entry.installed ? "catalogue-state is-installed" : "catalogue-state"} data-testid="catalogue-state">
          {entry.installed ? t("installed") : t("notInstalled")}
        </span>
        <div className="muted small">
          <code>{(entry.installedCommand ?? entry.command).join(" ")}</code>
          {" · "}
          {npm ? `npm ${npm}@${entry.install.version}` : t("catalogueBinary")}
          {entry.envKeys.length > 0 && <> · {t("catalogueNeeds", { keys: entry.envKeys.join(", ") })}</>}
          {" · "}
          <a href={entry.docsUrl} target="_blank" rel="noreferrer noopener">
            {t("catalogueDocs")}
            <span className="sr-only"> {entry.name}</span>
          </a>
        </div>
        {job && <InstallProgress job={job} />}
        <FormError error={refusal} testId="install-refused" />
      </div>
      <div className="catalogue-actions">
        {npm ? (
          <button type="button" className="btn btn-small" disabled={running} onClick={() => void start(entry.installed)} data-testid={entry.installed ? "update-agent" : "install-agent"}>
            {entry.installed ? t("update") : t("install")}
            <span className="sr-only"> {entry.name}</span>
          </button>
        ) : (
          entry.install.binaryUrl && (
            <a className="btn btn-small" href={entry.install.binaryUrl} target="_blank" rel="noreferrer noopener">
              {t("download")}
              <span className="sr-only"> {entry.name}</span>
            </a>
          )
        )}
        {entry.installed && (
          <button type="button" className="btn btn-small" onClick={() => props.onUse(entry)} data-testid="use-agent">
            {t("catalogueUse")}
            <span className="sr-only"> {entry.name}</span>
          </button>
        )}
      </div>
    </li>
  );
}

function InstallProgress({ job }: { job: NonNullable<CatalogueEntry["installJob"]> }) {
  const now = useNow(1_000);
  if (job.state === "FAILED") {
    return (
      <p className="form-error" role="alert" data-testid="install-error">
        {t(job.update ? "updateFailed" : "installFailed")}: {job.error}
      </p>
    );
  }
  if (job.state === "DONE") {
    return (
      <p className="muted small" role="status" data-testid="install-done">
        {t(job.update ? "updateDone" : "installDone")}
      </p>
    );
  }
  const seconds = job.startedAt ? Math.max(0, Math.round((now - Date.parse(job.startedAt)) / 1000)) : null;
  return (
    <div className="install-progress" role="status" data-testid="install-progress" data-state={job.state}>
      <progress aria-label={t(PHASES[job.state] ?? "installInstalling")} />
      <span>
        {t(PHASES[job.state] ?? "installInstalling")}
        {seconds !== null && ` · ${t("secondsSoFar", { n: seconds })}`}
      </span>
    </div>
  );
}
