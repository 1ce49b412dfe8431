// Where the task page mounts its usage parts: the header's line (context gauge, cost so far, budget) and the card a
// spent budget shows above the composer. Both come in a chunk of their own, loaded with the task page's first view:
// what they show needs a request of its own anyway, and the board's first visit does not carry them.
import { lazy, Suspense } from "react";
import type { Task, Turn } from "../../api/ops";

const TaskUsage = lazy(() => import("./TaskBudget"));
const BudgetReachedCard = lazy(() => import("./TaskBudget").then((m) => ({ default: m.BudgetReached })));

export function TaskUsageLine(props: { task: Task; sessionId: string | null; turns: readonly Turn[] }) {
  return (
    <Suspense fallback={null}>
      <TaskUsage {...props} />
    </Suspense>
  );
}

export function BudgetReached({ task }: { task: Task }) {
  if (task.pendingAction !== "BUDGET_REACHED") return null;
  return (
    <Suspense fallback={null}>
      <BudgetReachedCard task={task} />
    </Suspense>
  );
}
