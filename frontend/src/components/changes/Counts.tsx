// "+12 −3": lines added and removed, read out in words.
import { t } from "../../i18n";

export function Counts({ additions, deletions }: { additions: number; deletions: number }) {
  return (
    <span className="counts" role="img" aria-label={t("linesChanged", { add: additions, del: deletions })}>
      <span className="count-add">+{additions}</span> <span className="count-del">−{deletions}</span>
    </span>
  );
}
