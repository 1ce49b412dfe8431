// A task's pull (merge) request as the code host last showed it: state, draft, review decision, whether it can be
// merged, each check with its status and link, review comments, and the rounds in which the agent was asked to fix
// failing checks. Kept current by the PULL_REQUEST events the server's polling and webhooks cause.
import type { FixRound, PullRequest, ShipTask } from "../../api/shipOps";
import { t, type StringKey } from "../../i18n";
import { checkLabel, checksSummary, failed, stateLabel } from "./checks";

const REVIEW: Record<string, StringKey> = {
  approved: "reviewApproved",
  changes_requested: "reviewChangesRequested",
  review_required: "reviewRequired",
  none: "reviewNone",
};
const MERGEABLE: Record<string, StringKey> = {
  mergeable: "mergeableYes",
  conflicting: "mergeableConflicts",
  blocked: "mergeableBlocked",
  unknown: "mergeableUnknown",
};
const STOPPED: Record<string, StringKey> = {
  off: "fixStoppedOff",
  rounds_out: "fixStoppedRoundsOut",
  person_intervened: "fixStoppedIntervened",
};
const ROUND: Record<string, StringKey> = { PENDING: "roundPending", PROMPTED: "roundPrompted", FAILED: "roundFailed" };
const SUMMARY: Record<string, StringKey> = {
  none: "checksNone",
  failing: "checksFailing",
  pending: "checksPending",
  passing: "checksPassing",
};

export function PullRequestCard(props: { pr: PullRequest; rounds: FixRound[]; fix: ShipTask["fixFailingChecks"] }) {
  const { pr, rounds, fix } = props;
  const summary = checksSummary(pr.checks);
  const mergeable = pr.mergeable ? MERGEABLE[pr.mergeable] : undefined;
  return (
    <article className="pr-card" data-testid="pr-card" data-state={pr.state} data-number={pr.number}>
      <header className="pr-card-head">
        <span className={`pr-state pr-state-${pr.draft && pr.state === "open" ? "draft" : pr.state}`} data-testid="pr-state">
          {stateLabel(pr.state, pr.draft)}
        </span>
        <a className="pr-title" href={pr.url} target="_blank" rel="noreferrer noopener" data-testid="pr-link">
          #{pr.number} {pr.title}
        </a>
      </header>
      <p className="muted small">
        <code>{pr.headBranch}</code> → <code>{pr.baseBranch}</code> · {pr.repository}
      </p>
      <dl className="pr-facts">
        <div>
          <dt>{t("prReview")}</dt>
          <dd data-testid="pr-review">{t(REVIEW[pr.reviewDecision] ?? "reviewNone")}</dd>
        </div>
        {pr.state === "open" && (
          <div>
            <dt>{t("prMergeable")}</dt>
            <dd data-testid="pr-mergeable" data-mergeable={pr.mergeable ?? ""}>
              {mergeable ? t(mergeable) : t("mergeableUnknown")}
              {pr.mergeableReason ? ` (${pr.mergeableReason})` : ""}
            </dd>
          </div>
        )}
        <div>
          <dt>{t("prReviewComments")}</dt>
          <dd data-testid="pr-review-comments">{pr.reviewComments ?? 0}</dd>
        </div>
      </dl>
      <section aria-label={t("prChecks")}>
        <h4 className="pr-checks-head" data-testid="pr-checks-summary" data-summary={summary}>
          {t("prChecks")}: {t(SUMMARY[summary])}
        </h4>
        {pr.checks.length > 0 && (
          <ul className="pr-checks">
            {pr.checks.map((check, n) => (
              <li key={`${check.name}-${n}`} data-testid="pr-check" data-name={check.name} data-conclusion={check.conclusion ?? ""}>
                <span className={`check-mark check-${failed(check) ? "failed" : check.status !== "completed" ? "pending" : "done"}`} aria-hidden="true">
                  {failed(check) ? "✕" : check.status !== "completed" ? "●" : "✓"}
                </span>
                {check.url ? (
                  <a href={check.url} target="_blank" rel="noreferrer noopener" className="pr-check-name">
                    {check.name}
                  </a>
                ) : (
                  <span className="pr-check-name">{check.name}</span>
                )}
                <span className="muted small" data-testid="pr-check-status">
                  {checkLabel(check)}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      {(fix.enabled || rounds.length > 0) && (
        <section className="pr-rounds" aria-label={t("fixRounds")} data-testid="fix-rounds">
          <h4>{t("fixRoundsOf", { n: rounds.length, max: fix.maxRounds })}</h4>
          {fix.stopped && STOPPED[fix.stopped] && <p className="muted small">{t(STOPPED[fix.stopped])}</p>}
          {rounds.length > 0 && (
            <ol>
              {rounds.map((r) => (
                <li key={r.id} data-testid="fix-round" data-state={r.state}>
                  {t("fixRound", { round: r.round, checks: r.checkNames.join(", "), state: ROUND[r.state] ? t(ROUND[r.state]) : r.state })}{" "}
                  <time className="muted small" dateTime={r.createdAt}>
                    {new Date(r.createdAt).toLocaleString()}
                  </time>
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
    </article>
  );
}
