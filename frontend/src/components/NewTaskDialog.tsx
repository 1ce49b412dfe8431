import type { Workflow } from "../api/ops";
import { navigate, taskPath } from "../router";
import { toast } from "../state/toasts";
import { Dialog } from "./Dialog";
import { TaskForm } from "./TaskForm";

export function NewTaskDialog(props: { open: boolean; onClose: () => void; workflow?: Workflow; initial?: { title: string; prompt: string } }) {
  return (
    <Dialog open={props.open} title="New task" onClose={props.onClose} testId="new-task-dialog">
      <TaskForm
        workflowId={props.workflow?.id}
        initial={props.initial}
        onCancel={props.onClose}
        onDone={(task, started) => {
          props.onClose();
          toast(`Created “${task.title}”`, "info");
          if (started) navigate(taskPath(task.id));
        }}
      />
    </Dialog>
  );
}

export function SubtaskDialog(props: { open: boolean; onClose: () => void; parentId: string }) {
  return (
    <Dialog open={props.open} title="New subtask" onClose={props.onClose} testId="subtask-dialog">
      <TaskForm
        parentId={props.parentId}
        onCancel={props.onClose}
        onDone={(task) => {
          props.onClose();
          toast(`Created subtask “${task.title}”`, "info");
        }}
      />
    </Dialog>
  );
}
