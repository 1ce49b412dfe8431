"""Tasks, their dependencies and titles. Front door: `service.TaskService`."""
