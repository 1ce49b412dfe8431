// The task's Ship panel: its shipping settings, then each repository's commit, push, pull request, update and
// merge. Live from taskEvents (hooks/useShip); every refusal is shown where it was asked.
import { useShip } from "../../hooks/useShip";
import { t } from "../../i18n";
import { LoadState } from "../LoadState";
import { RepositoryShip } from "./RepositoryShip";
import { ShipSettings } from "./ShipSettings";

export default function ShipPanel({ taskId }: { taskId: string }) {
  const ship = useShip(taskId);
  const task = ship.task.data;
  if (!task) {
    return ship.task.load === "error" ? (
      <LoadState state="error" what={t("shipWhat")} error={ship.task.error} onRetry={ship.reload} />
    ) : (
      <LoadState state="loading" what={t("shipWhat")} />
    );
  }
  return (
    <div className="ship" data-testid="ship-panel">
      {task.repositories.length === 0 ? (
        <p className="muted" data-testid="ship-nothing">
          {t("shipNoRepository")}
        </p>
      ) : (
        <>
          {task.repositories.some((r) => r.codeHost) && <ShipSettings task={task} onDone={ship.reload} />}
          {ship.pendingReason && <p className="muted small">{ship.pendingReason}</p>}
          {task.repositories.map((r) => (
            <RepositoryShip
              key={r.repositoryId}
              task={task}
              repository={r}
              pending={ship.pending.data?.[r.repositoryId]}
              unread={ship.pending.load === "error" ? ship.pending.error : null}
              identity={ship.identity}
              pr={task.pullRequests.find((p) => p.repositoryId === r.repositoryId)}
              rounds={task.checkFixRounds.filter((x) => x.repositoryId === r.repositoryId)}
              onDone={ship.reload}
            />
          ))}
        </>
      )}
    </div>
  );
}
