// How a pull request's checks and states read, shared by the PR card and the board's badge.
import type { PullRequestCheck } from "../../api/shipOps";
import { t, type StringKey } from "../../i18n";

type CheckLike = Pick<PullRequestCheck, "status" | "conclusion">;
export type ChecksSummary = "none" | "failing" | "pending" | "passing";

// As the server counts a failure (kandev.domain.code_requests.FAILED_CONCLUSIONS).
const FAILED = ["failure", "timed_out", "cancelled", "action_required", "startup_failure"];

export function failed(check: CheckLike): boolean {
  return check.status === "completed" && FAILED.includes(check.conclusion ?? "");
}

export function checksSummary(checks: readonly CheckLike[]): ChecksSummary {
  if (checks.length === 0) return "none";
  if (checks.some(failed)) return "failing";
  if (checks.some((c) => c.status !== "completed")) return "pending";
  return "passing";
}

const CONCLUSION: Record<string, StringKey> = {
  success: "checkSuccess",
  failure: "checkFailure",
  neutral: "checkNeutral",
  cancelled: "checkCancelled",
  skipped: "checkSkipped",
  timed_out: "checkTimedOut",
  action_required: "checkActionRequired",
};

export function checkLabel(check: CheckLike): string {
  if (check.status === "queued") return t("checkQueued");
  if (check.status !== "completed") return t("checkRunning");
  const key = CONCLUSION[check.conclusion ?? ""];
  return key ? t(key) : (check.conclusion ?? t("checkDone"));
}

const STATE: Record<string, StringKey> = { open: "prOpen", closed: "prClosed", merged: "prMerged" };

export function stateLabel(state: string, draft: boolean): string {
  const key = STATE[state];
  const name = key ? t(key) : state;
  return draft && state === "open" ? t("prDraftState", { state: name }) : name;
}
