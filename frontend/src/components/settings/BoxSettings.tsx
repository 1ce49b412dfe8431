// The settings of the box executors (SANDBOX: Linux namespaces; DOCKER: a container), edited as text fields and
// sent as ExecutorSettingsInput: environment as NAME=value lines, mounts as source:target[:rw] lines, capabilities
// as a comma list. The server checks every value and names the field it refuses.
import type { CreateExecutorProfileInput, ExecutorKind, PullPolicy } from "../../gql/graphql";
import type { ExecutorRow } from "../../api/settingsOps";

export type BoxDraft = {
  image: string;
  pullPolicy: string;
  dockerfile: string;
  env: string;
  mounts: string;
  cpus: string;
  memoryMb: string;
  pids: string;
  network: string;
  user: string;
  prepareScript: string;
  capabilities: string;
};

export const EMPTY_BOX: BoxDraft = {
  image: "",
  pullPolicy: "NEVER",
  dockerfile: "",
  env: "",
  mounts: "",
  cpus: "",
  memoryMb: "",
  pids: "",
  network: "NONE",
  user: "",
  prepareScript: "",
  capabilities: "",
};

export const isBox = (kind: string) => kind === "SANDBOX" || kind === "DOCKER";

/** The draft of a stored profile (its kind's own capability left out: the server always adds it). */
export function draftOf(row: ExecutorRow): BoxDraft {
  const own = row.kind === "DOCKER" ? "docker" : "sandbox";
  const env = (row.env ?? {}) as Record<string, string>;
  return {
    image: row.image,
    pullPolicy: row.pullPolicy,
    dockerfile: row.dockerfile,
    env: Object.entries(env).map(([k, v]) => `${k}=${v}`).join("\n"),
    mounts: row.mounts.map((m) => `${m.source}:${m.target}${m.readOnly ? "" : ":rw"}`).join("\n"),
    cpus: row.cpus?.toString() ?? "",
    memoryMb: row.memoryMb?.toString() ?? "",
    pids: row.pids?.toString() ?? "",
    network: row.network,
    user: row.user,
    prepareScript: row.prepareScript,
    capabilities: row.capabilities.filter((c) => c !== own).join(", "),
  };
}

type ExecutorSettingsInput = Omit<CreateExecutorProfileInput, "workspaceId" | "name" | "kind">;

const number = (text: string) => (text.trim() ? Number(text) : null);

/** The settings the kind takes, as the API wants them. */
export function settingsOf(kind: ExecutorKind | string, draft: BoxDraft): ExecutorSettingsInput {
  const capabilities = draft.capabilities.split(",").map((c) => c.trim()).filter(Boolean);
  const common = { memoryMb: number(draft.memoryMb), pids: number(draft.pids), network: draft.network || "NONE", capabilities };
  if (kind !== "DOCKER") return common;
  const env = Object.fromEntries(
    draft.env.split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")).trim(), l.slice(l.indexOf("=") + 1)]),
  );
  const mounts = draft.mounts
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [source, target, mode] = l.split(":");
      return { source, target: target ?? "", readOnly: mode !== "rw" };
    });
  return {
    ...common,
    image: draft.image.trim(),
    pullPolicy: draft.pullPolicy as PullPolicy,
    dockerfile: draft.dockerfile,
    env,
    mounts,
    cpus: number(draft.cpus),
    user: draft.user.trim(),
    prepareScript: draft.prepareScript,
  };
}

export function BoxSettingsFields(props: { kind: string; draft: BoxDraft; onChange: (draft: BoxDraft) => void }) {
  const { kind, draft } = props;
  const field = (key: keyof BoxDraft) => ({
    value: draft[key],
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) =>
      props.onChange({ ...draft, [key]: e.target.value }),
    "data-testid": `box-${key}`,
  });
  const docker = kind === "DOCKER";
  return (
    <fieldset className="field box-settings" data-testid="box-settings">
      <legend>{docker ? "Container" : "Sandbox"}</legend>
      {docker && (
        <div className="field-row">
          <label className="field">
            <span>Image</span>
            <input className="input" placeholder="debian:bookworm" {...field("image")} />
          </label>
          <label className="field">
            <span>Pull policy</span>
            <select className="input" {...field("pullPolicy")}>
              <option value="NEVER">Never: the image must be on the worker</option>
              <option value="IF_MISSING">If missing</option>
            </select>
          </label>
          <label className="field">
            <span>User (uid[:gid])</span>
            <input className="input" placeholder="the agent's identity" {...field("user")} />
          </label>
        </div>
      )}
      <div className="field-row">
        <label className="field">
          <span>Network</span>
          {docker ? (
            <input className="input" placeholder="NONE or a Docker network" {...field("network")} />
          ) : (
            <select className="input" {...field("network")}>
              <option value="NONE">None (its own loopback only)</option>
              <option value="FULL">Full (the host's network)</option>
            </select>
          )}
        </label>
        <label className="field">
          <span>Memory (MB)</span>
          <input className="input" inputMode="numeric" {...field("memoryMb")} />
        </label>
        <label className="field">
          <span>Processes</span>
          <input className="input" inputMode="numeric" {...field("pids")} />
        </label>
        {docker && (
          <label className="field">
            <span>CPUs</span>
            <input className="input" inputMode="decimal" {...field("cpus")} />
          </label>
        )}
      </div>
      <label className="field">
        <span>Capabilities a worker needs besides {docker ? "docker" : "sandbox"} (comma-separated)</span>
        <input className="input" placeholder="gpu" {...field("capabilities")} />
      </label>
      {docker && (
        <>
          <label className="field">
            <span>Environment (NAME=value per line; values may be ${"{secret:NAME}"})</span>
            <textarea className="input" rows={2} {...field("env")} />
          </label>
          <label className="field">
            <span>Extra mounts (source:target[:rw] per line, sources under the source roots)</span>
            <textarea className="input" rows={2} {...field("mounts")} />
          </label>
          <label className="field">
            <span>Dockerfile (instead of an image)</span>
            <textarea className="input mono" rows={3} {...field("dockerfile")} />
          </label>
          <label className="field">
            <span>Prepare script (runs in the container before the agent)</span>
            <textarea className="input mono" rows={3} {...field("prepareScript")} />
          </label>
        </>
      )}
    </fieldset>
  );
}
