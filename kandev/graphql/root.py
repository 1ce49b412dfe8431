"""Root Query, Mutation and Subscription types and the schema object."""

from __future__ import annotations

from typing import Any

import strawberry

from kandev.graphql.resolvers import account as account_resolvers
from kandev.graphql.resolvers import agent_catalogue as catalogue_resolvers
from kandev.graphql.resolvers import automations as automation_resolvers
from kandev.graphql.resolvers import coordination as coordination_resolvers
from kandev.graphql.resolvers import dependencies as dependency_resolvers
from kandev.graphql.resolvers import github as github_resolvers
from kandev.graphql.resolvers import gitlab as gitlab_resolvers
from kandev.graphql.resolvers import mcp_servers as mcp_resolvers
from kandev.graphql.resolvers import notifications as notification_resolvers
from kandev.graphql.resolvers import profiles as profile_resolvers
from kandev.graphql.resolvers import review_threads as review_thread_resolvers
from kandev.graphql.resolvers import reviews as review_resolvers
from kandev.graphql.resolvers import runs as run_resolvers
from kandev.graphql.resolvers import sessions as session_resolvers
from kandev.graphql.resolvers import ship as ship_resolvers
from kandev.graphql.resolvers import subscriptions as subscription_resolvers
from kandev.graphql.resolvers import tasks as task_resolvers
from kandev.graphql.resolvers import usage as usage_resolvers
from kandev.graphql.resolvers import workflow_engine as engine_resolvers
from kandev.graphql.resolvers import workflows as workflow_resolvers
from kandev.graphql.resolvers import workspace_sources as source_resolvers
from kandev.graphql.resolvers import workspaces as workspace_resolvers
from kandev.graphql.schema.caching import cache_extensions
from kandev.graphql.schema.declare import DeclaredQueryLimits, enforce_declared_limits
from kandev.graphql.schema.error_codes import CodedMaskErrors, is_client_error
from kandev.graphql.schema.error_text import log_error
from kandev.graphql.schema.errors import ERROR_TYPES
from kandev.graphql.schema.fanout import SharedEventExecutor
from kandev.graphql.schema.limits import limit_extensions
from kandev.graphql.schema.plain_fields import PlainFieldExecutor


@strawberry.type
class Query:
    workspaces = strawberry.field(resolver=workspace_resolvers.workspaces, description="Workspaces the caller can see.")
    account = strawberry.field(
        resolver=ship_resolvers.account, description="The caller's own account (its commit identity)."
    )
    access_tokens = strawberry.field(
        resolver=account_resolvers.access_tokens,
        description="The caller's personal access tokens (never their values).",
    )
    workflows = strawberry.field(resolver=workspace_resolvers.workflows, description="A workspace's workflows.")
    workflow = strawberry.field(resolver=workspace_resolvers.workflow)
    export_workflow = strawberry.field(
        resolver=workflow_resolvers.export_workflow,
        description="A workflow as YAML, ready for importWorkflow.",
    )
    task = strawberry.field(resolver=task_resolvers.task)
    tasks = strawberry.field(resolver=task_resolvers.tasks, description="A workspace's tasks, newest first.")
    file_preview = strawberry.field(
        resolver=task_resolvers.file_preview,
        description="One file of a task's repository folder for a rich-output preview: UTF-8 text, a PNG, JPEG, GIF "
        "or WebP image (told by its bytes), or preview unavailable with the reason (missing, not a file, over 1 MiB, "
        "binary). Links are resolved; a path leading outside the folder is a ValidationError.",
    )
    session = strawberry.field(resolver=session_resolvers.session)
    agent_profiles = strawberry.field(
        resolver=profile_resolvers.agent_profiles,
        description="A workspace's agent profiles and the server-wide ones (serverWide).",
    )
    executor_profiles = strawberry.field(
        resolver=profile_resolvers.executor_profiles,
        description="A workspace's executor profiles and the server-wide ones (serverWide).",
    )
    repositories = strawberry.field(resolver=profile_resolvers.repositories)
    secrets = strawberry.field(resolver=profile_resolvers.secrets, description="Secret names; values never leave.")
    notification_channels = strawberry.field(
        resolver=notification_resolvers.notification_channels,
        description="Where a workspace's notifications go, with how each one's last attempt went.",
    )
    mcp_servers = strawberry.field(
        resolver=mcp_resolvers.mcp_servers,
        description="A workspace's MCP server definitions (delivered to agents) and the server-wide ones.",
    )
    selected_mcp_servers = strawberry.field(
        resolver=mcp_resolvers.selected_mcp_servers,
        description="The MCP servers selected at exactly this scope (not what it inherits).",
    )
    session_mcp_servers = strawberry.field(
        resolver=mcp_resolvers.session_mcp_servers,
        description="A session's effective MCP servers with their origins, and its desired and applied revisions.",
    )
    mcp_server_templates = strawberry.field(
        resolver=mcp_resolvers.mcp_server_templates,
        description="Kandev-curated MCP server templates (the marketplace; registry entries are in mcpRegistry).",
    )
    mcp_registry = strawberry.field(
        resolver=mcp_resolvers.mcp_registry,
        description="Cached MCP Registry metadata (publisher supplied, not a Kandev review) and how current it is.",
    )
    pending_questions = strawberry.field(
        resolver=engine_resolvers.pending_questions, description="Questions agents wait on, oldest first."
    )
    pending_actions = strawberry.field(
        resolver=engine_resolvers.pending_actions,
        description="Everything agents wait on in a workspace, oldest first: questions to the operator, permission "
        "requests and autopilot children's questions to their parents, of ordinary tasks and automation runs alike "
        "(runId names a hidden run task's run); archived and deleted tasks' are left out. first: 0 to 500.",
    )
    parent_questions = strawberry.field(
        resolver=engine_resolvers.parent_questions,
        description="An autopilot child's questions to its parent.",
    )
    agent_catalogue = strawberry.field(
        resolver=catalogue_resolvers.agent_catalogue_entries,
        description="ACP agents people use: command, install, environment keys, docs, and whether installed here.",
    )
    usage = strawberry.field(
        resolver=usage_resolvers.usage,
        description="A workspace's usage and cost added up over turns, sessions and replicas, grouped by session, "
        "task, automation, agent, model, workspace or day.",
    )
    pending_permissions = strawberry.field(
        resolver=profile_resolvers.pending_permissions,
        description="Agents waiting for an operator's allow or deny, optionally of one task or session.",
    )
    automations = strawberry.field(
        resolver=automation_resolvers.automations, description="A workspace's automations, by name."
    )
    automation = strawberry.field(resolver=automation_resolvers.automation)
    runs = strawberry.field(
        resolver=run_resolvers.runs,
        description="The runs of every automation of the workspace, newest first; filterable by status (archived "
        "and cancelled included), trigger type and creation time (since inclusive, until exclusive).",
    )
    automation_runs = strawberry.field(
        resolver=automation_resolvers.automation_runs,
        description="An automation's runs, newest first, optionally of one status or trigger type.",
    )
    automation_thread = strawberry.field(
        resolver=automation_resolvers.automation_thread,
        description="An automation's thread, oldest first, also after the automation was deleted (as "
        "Automation.thread).",
    )
    authoring_draft = strawberry.field(
        resolver=automation_resolvers.authoring_draft,
        description="What a 'describe an automation' chat (startAutomationAuthoring's task) has captured, for "
        "the form to take over when the chat hands off.",
    )
    agenda = strawberry.field(
        resolver=automation_resolvers.agenda,
        description="What a workspace's automations fire next, soonest first, and their newest 50 runs.",
    )
    validate_cron = strawberry.field(
        resolver=automation_resolvers.validate_cron,
        extensions=[DeclaredQueryLimits()],
        description="Check a schedule expression in a timezone: valid or why not, in words, and its next fires.",
    )
    dry_run_preflight = strawberry.field(
        resolver=automation_resolvers.dry_run_preflight,
        description="Check an unsaved automation as a save would (its pre-flight acknowledgement) without storing "
        "anything: the agent profile, the MCP tools its run gets, credentials, the next run and a summary.",
    )
    github_connection = strawberry.field(
        resolver=github_resolvers.github_connection, description="A workspace's GitHub connection; null: none."
    )
    gitlab_connection = strawberry.field(
        resolver=gitlab_resolvers.gitlab_connection, description="A workspace's GitLab connection; null: none."
    )
    task_pull_request = strawberry.field(
        resolver=review_resolvers.task_pull_request, description="Agent only (get_task_pr_automation_kandev)."
    )
    task_merge_request = strawberry.field(
        resolver=review_resolvers.task_merge_request, description="Agent only (get_task_mr_automation_kandev)."
    )
    review_threads = strawberry.field(
        resolver=review_thread_resolvers.review_threads,
        description="A task's review threads, oldest first, as Task.reviewThreads (list_review_comments_kandev).",
    )


@enforce_declared_limits
@strawberry.type
class Mutation:
    create_workspace = strawberry.mutation(
        resolver=account_resolvers.create_workspace,
        description="A new workspace of the caller's, with the default workflow and the built-in profiles.",
    )
    update_workspace = strawberry.mutation(resolver=account_resolvers.update_workspace)
    create_access_token = strawberry.mutation(
        resolver=account_resolvers.create_access_token,
        description="A personal access token for the caller; its value is in this answer only.",
    )
    revoke_access_token = strawberry.mutation(
        resolver=account_resolvers.revoke_access_token, description="Revoke one of the caller's own tokens."
    )
    create_task = strawberry.mutation(resolver=task_resolvers.create_task)
    update_task = strawberry.mutation(resolver=task_resolvers.update_task)
    move_task = strawberry.mutation(
        resolver=task_resolvers.move_task, description="Move a task to another step by hand."
    )
    archive_task = strawberry.mutation(
        resolver=task_resolvers.archive_task,
        description="Archive a task. Its autopilot children's questions to it go stale; each child is told to proceed.",
    )
    delete_task = strawberry.mutation(
        resolver=task_resolvers.delete_task,
        description="Delete a task. Questions its autopilot children asked it go stale; each child is told to proceed.",
    )
    add_task_dependency = strawberry.mutation(
        resolver=dependency_resolvers.add_task_dependency,
        description="Make a task wait on another; a link that would close a cycle is refused with the path.",
    )
    remove_task_dependency = strawberry.mutation(
        resolver=dependency_resolvers.remove_task_dependency,
        description="Removing a link that isn't there succeeds.",
    )
    show_rich_output = strawberry.mutation(
        resolver=dependency_resolvers.show_rich_output,
        description="Agent only (show_rich_output_kandev): a version-1 presentation added to the transcript.",
    )
    add_workspace_sources = strawberry.mutation(
        resolver=source_resolvers.add_workspace_sources,
        description=(
            "Add repositories and folders to an idle task, all or nothing; an exact retry is a no-op. "
            "Conflicts: contradictory duplicates, an active turn; UNPROCESSABLE: executor or git failure."
        ),
    )
    add_branch_to_task = strawberry.mutation(
        resolver=source_resolvers.add_branch_to_task,
        description="Worktree executor: one repository on a sibling worktree during a turn; the agent's cwd stays.",
    )
    update_repository_base_branch = strawberry.mutation(
        resolver=source_resolvers.update_repository_base_branch,
        description="Change the base Kandev diffs a task's repository against (not a pull request's target).",
    )
    start_task = strawberry.mutation(
        resolver=session_resolvers.start_task,
        description=(
            "Start the task's agent. An autopilot task on an agent profile without MCP is refused "
            "(ConflictError code AUTOPILOT_NEEDS_MCP), never run without its tools."
        ),
    )
    send_message = strawberry.mutation(
        resolver=session_resolvers.send_message,
        description=(
            "Queue a prompt. An operator's message supersedes a pending parent question; "
            "replyToQuestionId answers one (only from the child's direct parent)."
        ),
    )
    stop_task = strawberry.mutation(
        resolver=session_resolvers.stop_task,
        description=(
            "Stop what is live on the task (turns, question waits): its sessions are CANCELLED, a task in "
            "IN_PROGRESS or SCHEDULING goes to REVIEW, queued prompts wait for the next startTask; "
            "status not_running when nothing is live (nothing changes)."
        ),
    )
    create_agent_profile = strawberry.mutation(resolver=profile_resolvers.create_agent_profile)
    update_agent_profile = strawberry.mutation(
        resolver=profile_resolvers.update_agent_profile,
        description="Edit a profile. supportsMcp can't be turned off while an unfinished autopilot task runs on it.",
    )
    delete_agent_profile = strawberry.mutation(resolver=profile_resolvers.delete_agent_profile)
    create_executor_profile = strawberry.mutation(
        resolver=profile_resolvers.create_executor_profile,
        description="Admins only: where agents work, in a workspace or server-wide (workspaceId null).",
    )
    update_executor_profile = strawberry.mutation(
        resolver=profile_resolvers.update_executor_profile, description="Admins only."
    )
    test_executor_profile = strawberry.mutation(
        resolver=profile_resolvers.test_executor_profile,
        description="Admins only: start and stop a box of a SANDBOX or DOCKER profile on a worker that can run it, "
        "and report what it found (its user, working directory, network, the MCP bridge's Python) or why it could "
        "not be made.",
    )
    delete_executor_profile = strawberry.mutation(
        resolver=profile_resolvers.delete_executor_profile,
        description="Admins only; refused for a workspace's default executor profile.",
    )
    create_repository = strawberry.mutation(resolver=profile_resolvers.create_repository)
    create_secret = strawberry.mutation(resolver=profile_resolvers.create_secret)
    replace_secret = strawberry.mutation(
        resolver=profile_resolvers.replace_secret,
        description="Set a new value for a secret (its name stays; the value is never returned).",
    )
    delete_secret = strawberry.mutation(resolver=profile_resolvers.delete_secret)
    create_notification_channel = strawberry.mutation(
        resolver=notification_resolvers.create_notification_channel,
        description="Add where a workspace's notifications go. A non-admin's URL must not point to this machine "
        "or a private network (checked now and at every send).",
    )
    update_notification_channel = strawberry.mutation(resolver=notification_resolvers.update_notification_channel)
    delete_notification_channel = strawberry.mutation(resolver=notification_resolvers.delete_notification_channel)
    test_notification_channel = strawberry.mutation(
        resolver=notification_resolvers.test_notification_channel,
        description="Send a test notification now and answer whether it arrived (the channel keeps the outcome).",
    )
    create_mcp_server = strawberry.mutation(
        resolver=mcp_resolvers.create_mcp_server,
        description="Define an MCP server for agents; saving starts, downloads and connects to nothing.",
    )
    update_mcp_server = strawberry.mutation(
        resolver=mcp_resolvers.update_mcp_server,
        description="Change a definition; live sessions using it save a new desired revision.",
    )
    delete_mcp_server = strawberry.mutation(resolver=mcp_resolvers.delete_mcp_server)
    select_mcp_server = strawberry.mutation(
        resolver=mcp_resolvers.select_mcp_server,
        description="Select a definition at a scope; it applies to sessions when their turn is idle.",
    )
    deselect_mcp_server = strawberry.mutation(
        resolver=mcp_resolvers.deselect_mcp_server,
        description="Remove a selection made at this scope; an inherited one can't be removed at a narrower scope.",
    )
    refresh_mcp_registry = strawberry.mutation(
        resolver=mcp_resolvers.refresh_mcp_registry,
        description="Fetch the MCP Registry now (at most once per minimum interval); an outage keeps the cache.",
    )
    add_mcp_registry_entry = strawberry.mutation(
        resolver=mcp_resolvers.add_mcp_registry_entry,
        description="Add an active registry entry's remote or exact npm package as an MCP server definition.",
    )
    resolve_permission = strawberry.mutation(resolver=profile_resolvers.resolve_permission)
    install_agent = strawberry.mutation(
        resolver=catalogue_resolvers.install_agent,
        description="Start installing a catalogue agent's npm package (its pinned version) into the work dir: a "
        "worker installs it as the server's user, with --ignore-scripts, read-only to agents, never globally. "
        "Answers at once; the entry's installJob tells how it goes (a second request while one waits or runs "
        "joins it). Admins only.",
    )
    update_agent = strawberry.mutation(
        resolver=catalogue_resolvers.update_agent,
        description="Start installing the registry's current version of a catalogue agent's npm package, as "
        "installAgent does. Admins only.",
    )
    set_automation_budget = strawberry.mutation(
        resolver=usage_resolvers.set_automation_budget,
        description="Set, raise or remove an automation's monthly budget; once spent it does not fire until the "
        "next month or a raised budget.",
    )
    create_workflow = strawberry.mutation(resolver=workflow_resolvers.create_workflow)
    update_workflow = strawberry.mutation(resolver=workflow_resolvers.update_workflow)
    delete_workflow = strawberry.mutation(
        resolver=workflow_resolvers.delete_workflow,
        description="Refused for the workspace's default workflow and while tasks use it.",
    )
    create_workflow_step = strawberry.mutation(resolver=workflow_resolvers.create_workflow_step)
    update_workflow_step = strawberry.mutation(resolver=workflow_resolvers.update_workflow_step)
    delete_workflow_step = strawberry.mutation(
        resolver=workflow_resolvers.delete_workflow_step,
        description="Refused while another step's move_to_step leads to it, and while tasks are in the step unless "
        "moveTasksToStepId names where they go (moved in the same transaction, MOVED events, no agent started).",
    )
    reorder_workflow_steps = strawberry.mutation(resolver=workflow_resolvers.reorder_workflow_steps)
    import_workflow = strawberry.mutation(
        resolver=workflow_resolvers.import_workflow, description="A new workflow from exportWorkflow's YAML."
    )
    signal_step_complete = strawberry.mutation(
        resolver=engine_resolvers.signal_step_complete, description="Agent only (step_complete_kandev)."
    )
    mark_step_complete = strawberry.mutation(
        resolver=engine_resolvers.mark_step_complete,
        description="The operator's 'Mark complete & advance' for a step waiting on a completion signal "
        "(pendingAction COMPLETION_PENDING; any step change clears it).",
    )
    ask_user_question = strawberry.mutation(
        resolver=engine_resolvers.ask_user_question, description="Agent only (ask_user_question_kandev)."
    )
    answer_clarification = strawberry.mutation(resolver=engine_resolvers.answer_clarification)
    set_task_title = strawberry.mutation(
        resolver=coordination_resolvers.set_task_title, description="Agent only (set_task_title_kandev)."
    )
    spawn_session = strawberry.mutation(
        resolver=coordination_resolvers.spawn_session, description="Agent only (spawn_session_kandev)."
    )
    ask_parent_question = strawberry.mutation(
        resolver=engine_resolvers.ask_parent_question, description="Agent only (ask_parent_question_kandev)."
    )
    reject_clarification = strawberry.mutation(resolver=engine_resolvers.reject_clarification)
    create_automation = strawberry.mutation(
        resolver=automation_resolvers.create_automation,
        description="A new automation; a webhook trigger's secret is in this answer only (webhookSecret).",
    )
    start_automation_authoring = strawberry.mutation(
        resolver=automation_resolvers.start_automation_authoring,
        description="Start a 'describe an automation' chat: a hidden task (origin AUTOMATION_AUTHORING, off the "
        "board and lists) whose agent gets the automation-authoring tools and creates the automation the "
        "operator confirms (createdVia CHAT). Continue it with sendMessage to the returned task.",
    )
    update_automation = strawberry.mutation(
        resolver=automation_resolvers.update_automation,
        description="Change an automation; given triggers replace the set (switching layouts deletes the other's).",
    )
    reack_automation = strawberry.mutation(
        resolver=automation_resolvers.reack_automation,
        description="Check an automation's pre-flight again: lastAck is PENDING until the check stores its result.",
    )
    set_automation_enabled = strawberry.mutation(resolver=automation_resolvers.set_automation_enabled)
    set_automation_trigger_enabled = strawberry.mutation(resolver=automation_resolvers.set_automation_trigger_enabled)
    run_automation_now = strawberry.mutation(
        resolver=run_resolvers.run_automation_now,
        description="Fire an automation now (trigger type MANUAL, no deduplication; the concurrency cap applies).",
    )
    stop_run = strawberry.mutation(
        resolver=run_resolvers.stop_run,
        description="Cancel this run's turn only; its session stays waiting for a reply, and the run reads CANCELLED.",
    )
    delete_run = strawberry.mutation(
        resolver=run_resolvers.delete_run,
        description=(
            "Delete a run and its hidden task when no other run references that task (the task is stopped, "
            "deleted and its worktrees removed by a retried background cleanup; its branches are kept)."
        ),
    )
    delete_all_runs = strawberry.mutation(
        resolver=run_resolvers.delete_all_runs,
        description=(
            "Delete every run of an automation and their unreferenced hidden tasks (stopped, deleted and their "
            "worktrees removed by a retried background cleanup); irreversible."
        ),
    )
    delete_automation = strawberry.mutation(
        resolver=automation_resolvers.delete_automation,
        description=(
            "Delete an automation: it fires nothing more and its webhook secret stops working. Its hidden run "
            "tasks are stopped, deleted and their worktrees removed by a retried background cleanup (branches "
            "are kept); tasks it created on the board stay."
        ),
    )
    reveal_webhook_secret = strawberry.mutation(
        resolver=automation_resolvers.reveal_webhook_secret,
        description="The webhook secret of an automation, for the workspace's owner (not for agents).",
    )
    rotate_webhook_secret = strawberry.mutation(
        resolver=automation_resolvers.rotate_webhook_secret,
        description="A new webhook secret; the old one stops working at once.",
    )
    connect_github = strawberry.mutation(
        resolver=github_resolvers.connect_github,
        description="Connect a workspace to GitHub; the token is verified first and a refused one stores nothing.",
    )
    disconnect_github = strawberry.mutation(resolver=github_resolvers.disconnect_github)
    route_github_installation = strawberry.mutation(
        resolver=github_resolvers.route_github_installation,
        description="Route a GitHub App installation's webhook deliveries to a workspace (admins only).",
    )
    set_github_app = strawberry.mutation(
        resolver=github_resolvers.set_github_app, description="Set the server-wide GitHub App (admins only)."
    )
    connect_gitlab = strawberry.mutation(
        resolver=gitlab_resolvers.connect_gitlab,
        description="Connect a workspace to GitLab; the token is verified first and a refused one stores nothing.",
    )
    disconnect_gitlab = strawberry.mutation(resolver=gitlab_resolvers.disconnect_gitlab)
    update_task_pull_request = strawberry.mutation(
        resolver=review_resolvers.update_task_pull_request,
        description="Agent only (update_task_pr_automation_kandev).",
    )
    add_review_comment = strawberry.mutation(
        resolver=review_thread_resolvers.add_review_comment,
        description="Open a review thread on lines of a changed file (side NEW: the working tree; OLD: the base), a "
        "whole file or the whole task. The lines must exist in that version (ValidationError naming line or endLine "
        "otherwise); the thread keeps them as its anchor and follows them as the file changes.",
    )
    reply_to_review_thread = strawberry.mutation(
        resolver=review_thread_resolvers.reply_to_review_thread,
        description="Add a comment at the end of a thread (reply_review_comment_kandev for the task's agent).",
    )
    resolve_review_thread = strawberry.mutation(
        resolver=review_thread_resolvers.resolve_review_thread,
        description="Mark a thread addressed (resolvedBy says who); a note is added as a comment first. Resolving a "
        "resolved thread changes nothing (resolve_review_comment_kandev for the task's agent).",
    )
    reopen_review_thread = strawberry.mutation(
        resolver=review_thread_resolvers.reopen_review_thread,
        description="Open a resolved or outdated thread again.",
    )
    delete_review_comment = strawberry.mutation(
        resolver=review_thread_resolvers.delete_review_comment,
        description="Delete one of your own comments (PermissionDeniedError otherwise); a thread's last comment takes "
        "the thread with it (threadDeleted).",
    )
    send_review_to_agent = strawberry.mutation(
        resolver=review_thread_resolvers.send_review_to_agent,
        description="Queue the threads as one prompt in the task's primary session (behind a running turn; the "
        "transcript shows it as one REVIEW message), marking them sent. A repeat while that prompt still waits "
        "answers it again (a double click queues one prompt); nothing left to send is a ConflictError (reason "
        "nothing_to_send). The prompt's format: docs/review.md.",
    )
    set_file_reviewed = strawberry.mutation(
        resolver=review_thread_resolvers.set_file_reviewed,
        description="Mark a changed file reviewed at its diff (FileChange.reviewed turns false when the file changes "
        "again), or unmark it.",
    )
    discard_changes = strawberry.mutation(
        resolver=review_thread_resolvers.discard_changes,
        description="Undo uncommitted changes in the task's worktree: files back to the branch's last commit, or one "
        "hunk. ConflictError while a turn runs (reason turn_running) or when the hunk is no longer there "
        "(stale_hunk); a path outside the worktree is a ValidationError.",
    )
    update_account = strawberry.mutation(
        resolver=ship_resolvers.update_account,
        description="Set the name and email your commits from Kandev are authored by (asked for at the first commit).",
    )
    commit_task_changes = strawberry.mutation(
        resolver=ship_resolvers.commit_task_changes,
        description="Commit the task's changes (all, or the paths given) on its branch, authored by you (your "
        "account's commit identity: ConflictError reason identity_missing until set) with an Agent/Co-authored-by "
        "trailer naming the agent; an empty message takes the agent's suggestion. ConflictError while a turn runs "
        "(turn_running) or with nothing to commit (nothing_to_commit). The agent's commit_changes_kandev: under its "
        "permission policy.",
    )
    suggest_commit_message = strawberry.mutation(
        resolver=ship_resolvers.suggest_commit_message,
        description="A commit message for the uncommitted changes, from a short utility turn of the task's agent in an "
        "ACP session of its own (the task's conversation is neither read nor continued), on the worker holding the "
        "worktree; nothing is committed.",
    )
    push_task_branch = strawberry.mutation(
        resolver=ship_resolvers.push_task_branch,
        description="Push the task's branch to the repository's remote (a pull request's source branch for a task made "
        "from one), with the code host's credential handed to git for that one call. Never to the default, base or a "
        "protected branch (ConflictError protected_branch); a rejected push is UNPROCESSABLE (push_rejected, "
        "stale_lease, auth, unreachable) and changes nothing. A push already under way: ConflictError in_progress.",
    )
    open_pull_request = strawberry.mutation(
        resolver=ship_resolvers.open_pull_request,
        description="Open the repository's pull request (GitHub) or merge request (GitLab) from the pushed task "
        "branch, linked to the task; one per repository. An open one from the branch (a lost earlier attempt's) is "
        "taken up instead of opening another. Refusals: already_open, no_code_host, and the host's (PROVIDER_ERROR: "
        "duplicate_request, base_missing, auth, unreachable, ...).",
    )
    update_task_branch = strawberry.mutation(
        resolver=ship_resolvers.update_task_branch,
        description="Merge or rebase the base branch's newest commits into the task's branch in its worktree. "
        "Conflicts are left there as UNMERGED files (Task.changes) for someone to resolve; the branch moves only once "
        "they are.",
    )
    merge_pull_request = strawberry.mutation(
        resolver=ship_resolvers.merge_pull_request,
        description="Merge the task's pull request on its code host; refused with the host's reason when it is not "
        "mergeable, was merged or closed outside Kandev, or got new commits since it was shown (head_moved). Once "
        "every request of the task is merged it moves to its workflow's final step (a workspace setting) and its "
        "worktrees are removed (branches kept).",
    )
    merge_task_branch = strawberry.mutation(
        resolver=ship_resolvers.merge_task_branch,
        description="For a repository on no code host: merge the task's branch into its base (on the repository's "
        "local remote when it has one, else in the repository when the base is not checked out); conflicts refuse it "
        "(merge_conflict) and change nothing.",
    )
    update_task_merge_request = strawberry.mutation(
        resolver=review_resolvers.update_task_merge_request,
        description="Agent only (update_task_mr_automation_kandev).",
    )


@strawberry.type
class Subscription:
    task_events = strawberry.subscription(
        resolver=subscription_resolvers.task_events,
        description="Every change to the workspace's tasks, as it commits.",
    )
    automation_events = strawberry.subscription(
        resolver=run_resolvers.automation_events,
        description="Every run created, changed or deleted in the workspace's automations, as it commits.",
    )
    workspace_events = strawberry.subscription(
        resolver=subscription_resolvers.workspace_events,
        description="Every change to the workspace's configuration (itself, its workflows and steps, profiles, "
        "repositories, secrets; server-wide profiles; a new workspace of the caller's), as it commits.",
    )
    session_events = strawberry.subscription(
        resolver=subscription_resolvers.session_events,
        description="Transcript messages, turns and state changes of one session, live.",
    )


class KandevSchema(strawberry.Schema):
    def process_errors(self, errors: list[Any], execution_context: Any = None) -> None:
        # Expected domain errors and the caller's own mistakes are answers, not incidents: log only the rest,
        # without input values.
        for error in errors:
            if not is_client_error(error):
                log_error(error)


class KandevExecutor(PlainFieldExecutor, SharedEventExecutor):
    """Plain fields read directly; subscription events executed once for all who share them."""


schema = KandevSchema(
    query=Query,
    mutation=Mutation,
    subscription=Subscription,
    types=list(ERROR_TYPES),
    extensions=[*limit_extensions(), *cache_extensions(), CodedMaskErrors],
    execution_context_class=KandevExecutor,
)
