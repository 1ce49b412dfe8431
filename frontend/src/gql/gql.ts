/* eslint-disable */
import * as types from './graphql';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment AutomationEditFields on Automation {\n    id\n    name\n    description\n    prompt\n    titleTemplate\n    agentProfileId\n    destination\n    workflowId\n    workflowStepId\n    context\n    maxConcurrentRuns\n    enabled\n    hasWebhookSecret\n    triggers {\n      id\n      type\n      enabled\n      expression\n      timezone\n      filters\n      requireSignature\n    }\n    repositories {\n      repositoryId\n      baseBranch\n    }\n  }\n": typeof types.AutomationEditFieldsFragmentDoc,
    "\n  query AutomationForEdit($id: ID!) {\n    automation(id: $id) {\n      ...AutomationEditFields\n    }\n  }\n": typeof types.AutomationForEditDocument,
    "\n  query CronCheck($e: String!, $tz: String!) {\n    validateCron(expression: $e, timezone: $tz, count: 5) {\n      valid\n      error\n      description\n      nextFires\n    }\n  }\n": typeof types.CronCheckDocument,
    "\n  fragment AutomationSaved on AutomationPayload {\n    webhookSecret\n    automation {\n      ...AutomationEditFields\n    }\n  }\n": typeof types.AutomationSavedFragmentDoc,
    "\n  mutation CreateAutomationFromEditor($i: CreateAutomationInput!) {\n    createAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ValidationError {\n        field\n      }\n      ...AutomationSaved\n    }\n  }\n": typeof types.CreateAutomationFromEditorDocument,
    "\n  mutation UpdateAutomationFromEditor($i: UpdateAutomationInput!) {\n    updateAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ValidationError {\n        field\n      }\n      ...AutomationSaved\n    }\n  }\n": typeof types.UpdateAutomationFromEditorDocument,
    "\n  fragment AuthoringDraftFields on AuthoringDraft {\n    taskId\n    state\n    operatorMessages\n    name\n    prompt\n    automationId\n    triggers {\n      type\n      expression\n      timezone\n      filters\n    }\n  }\n": typeof types.AuthoringDraftFieldsFragmentDoc,
    "\n  mutation StartAutomationAuthoring($i: StartAutomationAuthoringInput!) {\n    startAutomationAuthoring(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on StartTaskPayload {\n        task {\n          id\n        }\n        session {\n          id\n        }\n      }\n    }\n  }\n": typeof types.StartAutomationAuthoringDocument,
    "\n  query AuthoringChat($task: ID!) {\n    task(id: $task) {\n      id\n      sessions {\n        id\n      }\n    }\n    authoringDraft(taskId: $task) {\n      ...AuthoringDraftFields\n    }\n  }\n": typeof types.AuthoringChatDocument,
    "\n  query AuthoringDraft($task: ID!) {\n    authoringDraft(taskId: $task) {\n      ...AuthoringDraftFields\n    }\n  }\n": typeof types.AuthoringDraftDocument,
    "\n  fragment RunRow on AutomationRun {\n    id\n    automationId\n    triggerType\n    status\n    reason\n    taskId\n    sessionId\n    turnId\n    titleSnapshot\n    createdAt\n    finishedAt\n    stoppedAt\n  }\n": typeof types.RunRowFragmentDoc,
    "\n  fragment AckRow on AutomationAck {\n    status\n    detail\n    summary\n    ackedAt\n  }\n": typeof types.AckRowFragmentDoc,
    "\n  fragment NextRunRow on NextRunIndicator {\n    state\n    label\n    at\n    relative\n    webhookPath\n    runningSince\n    elapsedSeconds\n    slowAfterSeconds\n    slow\n  }\n": typeof types.NextRunRowFragmentDoc,
    "\n  fragment AutomationRow on Automation {\n    id\n    name\n    description\n    enabled\n    nextFire\n    lastAck {\n      ...AckRow\n    }\n    nextRun {\n      ...NextRunRow\n    }\n    runs(first: 1) {\n      nodes {\n        ...RunRow\n      }\n    }\n  }\n": typeof types.AutomationRowFragmentDoc,
    "\n  query Automations($w: ID!) {\n    automations(workspaceId: $w) {\n      ...AutomationRow\n    }\n  }\n": typeof types.AutomationsDocument,
    "\n  query Agenda($w: ID!) {\n    agenda(workspaceId: $w) {\n      upcoming {\n        nextFire\n        automation {\n          id\n          name\n        }\n        trigger {\n          id\n          expression\n          timezone\n        }\n      }\n      recent {\n        ...RunRow\n      }\n    }\n  }\n": typeof types.AgendaDocument,
    "\n  query AutomationRuns($id: ID!) {\n    automationRuns(automationId: $id, first: 50) {\n      nodes {\n        ...RunRow\n      }\n    }\n  }\n": typeof types.AutomationRunsDocument,
    "\n  subscription AutomationEvents($w: ID!) {\n    automationEvents(workspaceId: $w) {\n      kind\n      automationId\n      run {\n        ...RunRow\n      }\n      nextFire\n      ack {\n        ...AckRow\n      }\n      nextRun {\n        ...NextRunRow\n      }\n    }\n  }\n": typeof types.AutomationEventsDocument,
    "\n  mutation RunAutomationNow($i: RunAutomationNowInput!) {\n    runAutomationNow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on RunAutomationNowPayload {\n        admission\n        reason\n        run {\n          ...RunRow\n        }\n      }\n    }\n  }\n": typeof types.RunAutomationNowDocument,
    "\n  mutation StopRun($i: StopRunInput!) {\n    stopRun(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationRunPayload {\n        run {\n          ...RunRow\n        }\n      }\n    }\n  }\n": typeof types.StopRunDocument,
    "\n  mutation ReackAutomation($i: ReackAutomationInput!) {\n    reackAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationPayload {\n        automation {\n          ...AutomationRow\n        }\n      }\n    }\n  }\n": typeof types.ReackAutomationDocument,
    "\n  query WorkspaceRuns($w: ID!, $after: String) {\n    runs(workspaceId: $w, first: 100, after: $after) {\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        id\n        automationId\n      }\n    }\n  }\n": typeof types.WorkspaceRunsDocument,
    "\n  fragment CatalogueFields on AgentCatalogueEntry {\n    id\n    name\n    command\n    install {\n      npmPackage\n      version\n      binaryUrl\n    }\n    envKeys\n    docsUrl\n    verified\n    installed\n    installedCommand\n    installJob {\n      state\n      update\n      error\n      startedAt\n      endedAt\n    }\n  }\n": typeof types.CatalogueFieldsFragmentDoc,
    "\n  query AgentCatalogue {\n    agentCatalogue {\n      ...CatalogueFields\n    }\n  }\n": typeof types.AgentCatalogueDocument,
    "\n  mutation InstallAgent($id: String!) {\n    installAgent(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on AgentInstallPayload {\n        agent {\n          ...CatalogueFields\n        }\n      }\n    }\n  }\n": typeof types.InstallAgentDocument,
    "\n  mutation UpdateAgent($id: String!) {\n    updateAgent(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on AgentInstallPayload {\n        agent {\n          ...CatalogueFields\n        }\n      }\n    }\n  }\n": typeof types.UpdateAgentDocument,
    "\n  fragment FileChangeFields on FileChange {\n    path\n    oldPath\n    status\n    additions\n    deletions\n    binary\n    tooLarge\n    reviewed\n    diffKey\n    oldMode\n    newMode\n    symlink\n    submodule\n    untracked\n  }\n": typeof types.FileChangeFieldsFragmentDoc,
    "\n  fragment ReviewThreadFields on ReviewThread {\n    id\n    repositoryId\n    path\n    line\n    endLine\n    side\n    state\n    origin\n    anchor {\n      line\n      endLine\n      lineText\n    }\n    comments {\n      id\n      author {\n        kind\n        login\n      }\n      body\n      createdAt\n    }\n    resolvedBy {\n      kind\n      login\n    }\n    resolvedAt\n    sentInPromptId\n    sentAt\n    createdAt\n    updatedAt\n  }\n": typeof types.ReviewThreadFieldsFragmentDoc,
    "\n  query TaskChanges($id: ID!, $first: Int!, $after: String) {\n    task(id: $id) {\n      id\n      changes {\n        reason\n        repositories {\n          repositoryId\n          name\n          branch\n          baseBranch\n          ahead\n          behind\n          note\n          stats {\n            files\n            additions\n            deletions\n          }\n          files(first: $first, after: $after) {\n            totalCount\n            pageInfo {\n              hasNextPage\n              endCursor\n            }\n            nodes {\n              ...FileChangeFields\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.TaskChangesDocument,
    "\n  query FileHunks($id: ID!, $paths: [String!], $scope: ChangeScope, $context: Int!, $large: Boolean!) {\n    task(id: $id) {\n      id\n      changes(scope: $scope, paths: $paths) {\n        repositories {\n          repositoryId\n          files(first: 10) {\n            nodes {\n              ...FileChangeFields\n              invalidUtf8\n              submoduleChange {\n                oldCommit\n                newCommit\n              }\n              hunks(context: $context, includeLarge: $large) {\n                header\n                oldStart\n                oldLines\n                newStart\n                newLines\n                lines {\n                  kind\n                  oldNumber\n                  newNumber\n                  text\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.FileHunksDocument,
    "\n  query ReviewThreads($id: ID!) {\n    task(id: $id) {\n      id\n      reviewThreads {\n        ...ReviewThreadFields\n      }\n    }\n  }\n": typeof types.ReviewThreadsDocument,
    "\n  mutation AddReviewComment($i: AddReviewCommentInput!) {\n    addReviewComment(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": typeof types.AddReviewCommentDocument,
    "\n  mutation ReplyToReviewThread($i: ReplyToReviewThreadInput!) {\n    replyToReviewThread(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": typeof types.ReplyToReviewThreadDocument,
    "\n  mutation ResolveReviewThread($id: ID!) {\n    resolveReviewThread(threadId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": typeof types.ResolveReviewThreadDocument,
    "\n  mutation ReopenReviewThread($id: ID!) {\n    reopenReviewThread(threadId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": typeof types.ReopenReviewThreadDocument,
    "\n  mutation DeleteReviewComment($id: ID!) {\n    deleteReviewComment(commentId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        threadDeleted\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": typeof types.DeleteReviewCommentDocument,
    "\n  mutation SendReviewToAgent($i: SendReviewToAgentInput!) {\n    sendReviewToAgent(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on SendReviewPayload {\n        promptId\n        threads {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": typeof types.SendReviewToAgentDocument,
    "\n  mutation SetFileReviewed($i: SetFileReviewedInput!) {\n    setFileReviewed(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on FileReviewedPayload {\n        repositoryId\n        path\n        reviewed\n        diffKey\n      }\n    }\n  }\n": typeof types.SetFileReviewedDocument,
    "\n  mutation DiscardChanges($i: DiscardChangesInput!) {\n    discardChanges(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on DiscardChangesPayload {\n        repositoryId\n        paths\n      }\n    }\n  }\n": typeof types.DiscardChangesDocument,
    "\n  query CodeHostConnections($w: ID!) {\n    githubConnection(workspaceId: $w) {\n      login\n      host\n      connectedAt\n    }\n    gitlabConnection(workspaceId: $w) {\n      username\n      baseUrl\n      host\n      connectedAt\n    }\n  }\n": typeof types.CodeHostConnectionsDocument,
    "\n  mutation ConnectGithub($i: ConnectGithubInput!) {\n    connectGithub(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.ConnectGithubDocument,
    "\n  mutation DisconnectGithub($w: ID!) {\n    disconnectGithub(input: { workspaceId: $w }) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DisconnectGithubDocument,
    "\n  mutation ConnectGitlab($i: ConnectGitlabInput!) {\n    connectGitlab(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.ConnectGitlabDocument,
    "\n  mutation DisconnectGitlab($w: ID!) {\n    disconnectGitlab(input: { workspaceId: $w }) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DisconnectGitlabDocument,
    "\n  query McpServers($w: ID!) {\n    mcpServers(workspaceId: $w) {\n      id\n      name\n      kind\n      url\n      headers\n      package\n      command\n      args\n      env\n      serverWide\n    }\n  }\n": typeof types.McpServersDocument,
    "\n  query McpServerTemplates {\n    mcpServerTemplates {\n      key\n      name\n      title\n      description\n      publisher\n      kind\n      url\n      package\n      headers\n      secrets\n    }\n  }\n": typeof types.McpServerTemplatesDocument,
    "\n  mutation CreateMcpServer($i: CreateMcpServerInput!) {\n    createMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.CreateMcpServerDocument,
    "\n  mutation UpdateMcpServer($i: UpdateMcpServerInput!) {\n    updateMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.UpdateMcpServerDocument,
    "\n  mutation DeleteMcpServer($id: ID!) {\n    deleteMcpServer(mcpServerId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeleteMcpServerDocument,
    "\n  query SelectedMcpServers($s: McpScope!, $t: ID!) {\n    selectedMcpServers(scope: $s, targetId: $t) {\n      id\n    }\n  }\n": typeof types.SelectedMcpServersDocument,
    "\n  mutation SelectMcpServer($i: McpSelectionInput!) {\n    selectMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.SelectMcpServerDocument,
    "\n  mutation DeselectMcpServer($i: McpSelectionInput!) {\n    deselectMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeselectMcpServerDocument,
    "\n  query McpRegistry($w: ID!) {\n    mcpRegistry(workspaceId: $w) {\n      ...McpRegistryFields\n    }\n  }\n": typeof types.McpRegistryDocument,
    "\n  mutation RefreshMcpRegistry($w: ID!) {\n    refreshMcpRegistry(workspaceId: $w) {\n      ...McpRegistryFields\n    }\n  }\n": typeof types.RefreshMcpRegistryDocument,
    "\n  fragment McpRegistryFields on McpRegistry {\n    status\n    fetchedAt\n    checkedAt\n    error\n    entries {\n      key\n      name\n      title\n      description\n      version\n      publisher\n      websiteUrl\n      suggestedName\n      installable\n      options {\n        index\n        kind\n        label\n        url\n        package\n        transport\n        installable\n        reason\n        secrets\n      }\n    }\n  }\n": typeof types.McpRegistryFieldsFragmentDoc,
    "\n  mutation AddMcpRegistryEntry($i: AddMcpRegistryEntryInput!) {\n    addMcpRegistryEntry(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.AddMcpRegistryEntryDocument,
    "\n  query SessionMcpServers($s: ID!) {\n    sessionMcpServers(sessionId: $s) {\n      sessionId\n      desiredRevision\n      appliedRevision\n      servers {\n        id\n        name\n        kind\n        origins {\n          scope\n          id\n        }\n      }\n    }\n  }\n": typeof types.SessionMcpServersDocument,
    "\n  query NotificationChannels($w: ID!) {\n    notificationChannels(workspaceId: $w) {\n      id\n      name\n      service\n      target\n      events\n      enabled\n      status\n      lastAttemptAt\n      lastDeliveredAt\n      lastError\n      lastDurationMs\n      pendingDeliveries\n      failedDeliveries\n    }\n  }\n": typeof types.NotificationChannelsDocument,
    "\n  mutation CreateNotificationChannel($i: CreateNotificationChannelInput!) {\n    createNotificationChannel(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n": typeof types.CreateNotificationChannelDocument,
    "\n  mutation UpdateNotificationChannel($i: UpdateNotificationChannelInput!) {\n    updateNotificationChannel(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n": typeof types.UpdateNotificationChannelDocument,
    "\n  mutation DeleteNotificationChannel($id: ID!) {\n    deleteNotificationChannel(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n": typeof types.DeleteNotificationChannelDocument,
    "\n  mutation TestNotificationChannel($id: ID!) {\n    testNotificationChannel(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on TestNotificationPayload {\n        delivered\n        error\n      }\n    }\n  }\n": typeof types.TestNotificationChannelDocument,
    "\n  fragment ErrorFields on Error {\n    message\n    code\n  }\n": typeof types.ErrorFieldsFragmentDoc,
    "\n  fragment TaskFields on Task {\n    id\n    title\n    state\n    autopilot\n    parentId\n    pendingAction\n    workflowId\n    workflowStepId\n    externalId\n    archivedAt\n    createdAt\n    updatedAt\n    blockReason\n    placement {\n      executor\n      worker\n      boxId\n      waitingFor\n    }\n    usage {\n      inputTokens\n      outputTokens\n      costUsd\n    }\n    changeStats {\n      files\n      additions\n      deletions\n    }\n    activity {\n      agentProfileId\n      agentName\n      lastActivityAt\n      preview\n      hasRun\n      lastTurnFailed\n      needsAnswer\n    }\n    pullRequests {\n      repositoryId\n      number\n      url\n      state\n      draft\n      checks {\n        status\n        conclusion\n      }\n    }\n  }\n": typeof types.TaskFieldsFragmentDoc,
    "\n  fragment SessionFields on Session {\n    id\n    name\n    state\n    isPrimary\n    agentProfileId\n    createdAt\n  }\n": typeof types.SessionFieldsFragmentDoc,
    "\n  fragment MessageFields on Message {\n    id\n    kind\n    text\n    data\n    turnId\n    seq\n    createdAt\n    updatedAt\n    attachments {\n      id\n      name\n      size\n      contentType\n      url\n    }\n  }\n": typeof types.MessageFieldsFragmentDoc,
    "\n  fragment TurnFields on Turn {\n    id\n    seq\n    state\n    stopReason\n    error\n  }\n": typeof types.TurnFieldsFragmentDoc,
    "\n  fragment SessionStatusFields on Session {\n    ...SessionFields\n    completionPending\n    turns {\n      ...TurnFields\n    }\n    queuedPrompts {\n      id\n      text\n      source\n    }\n  }\n": typeof types.SessionStatusFieldsFragmentDoc,
    "\n  query Boot {\n    workspaces {\n      id\n      name\n      defaultWorkflowId\n    }\n  }\n": typeof types.BootDocument,
    "\n  mutation CreateWorkspace($name: String!) {\n    createWorkspace(input: { name: $name }) {\n      __typename\n      ...ErrorFields\n      ... on WorkspacePayload {\n        workspace {\n          id\n          name\n          defaultWorkflowId\n        }\n      }\n    }\n  }\n": typeof types.CreateWorkspaceDocument,
    "\n  query Workspace($w: ID!) {\n    workflows(workspaceId: $w) {\n      id\n      name\n      steps {\n        id\n        name\n        position\n        isStartStep\n        isFinalStep\n        autoAdvanceRequiresSignal\n        allowManualMove\n        autoStartsAgent\n      }\n    }\n    agentProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      available\n      missingCommand\n    }\n  }\n": typeof types.WorkspaceDocument,
    "\n  query Tasks($w: ID!, $step: ID, $first: Int!, $after: String) {\n    tasks(workspaceId: $w, workflowStepId: $step, first: $first, after: $after, archived: false) {\n      nodes {\n        ...TaskFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": typeof types.TasksDocument,
    "\n  query Task($id: ID!) {\n    task(id: $id) {\n      ...TaskFields\n      prompt\n      executorProfileId\n      lastTurnError {\n        message\n        endedAt\n      }\n      repositories {\n        repositoryId\n        name\n        baseBranch\n        branch\n        sourceBranch\n        pullRequest\n        url\n      }\n      sessions {\n        ...SessionFields\n      }\n    }\n  }\n": typeof types.TaskDocument,
    "\n  query Session($id: ID!, $page: Int!) {\n    session(id: $id) {\n      ...SessionStatusFields\n      messages(first: $page, order: DESC) {\n        nodes {\n          ...MessageFields\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n": typeof types.SessionDocument,
    "\n  query OlderMessages($id: ID!, $page: Int!, $before: ID!) {\n    session(id: $id) {\n      id\n      messages(first: $page, order: DESC, beforeMessageId: $before) {\n        nodes {\n          ...MessageFields\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n": typeof types.OlderMessagesDocument,
    "\n  query SessionStatus($id: ID!) {\n    session(id: $id) {\n      ...SessionStatusFields\n    }\n  }\n": typeof types.SessionStatusDocument,
    "\n  query PendingPermissions($w: ID!, $t: ID) {\n    pendingPermissions(workspaceId: $w, taskId: $t) {\n      id\n      taskId\n      sessionId\n      title\n      toolCall\n      options {\n        optionId\n        name\n        kind\n      }\n    }\n  }\n": typeof types.PendingPermissionsDocument,
    "\n  subscription TaskEvents($w: ID!) {\n    taskEvents(workspaceId: $w) {\n      kind\n      task {\n        ...TaskFields\n      }\n      changedFiles {\n        repositoryId\n        path\n      }\n      reviewThread {\n        ...ReviewThreadFields\n      }\n    }\n  }\n": typeof types.TaskEventsDocument,
    "\n  subscription SessionEvents($s: ID!) {\n    sessionEvents(sessionId: $s) {\n      kind\n      session {\n        id\n        state\n        completionPending\n      }\n      message {\n        ...MessageFields\n      }\n      turn {\n        ...TurnFields\n      }\n    }\n  }\n": typeof types.SessionEventsDocument,
    "\n  mutation CreateTask($i: CreateTaskInput!) {\n    createTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CreateTaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": typeof types.CreateTaskDocument,
    "\n  mutation MoveTask($i: MoveTaskInput!) {\n    moveTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": typeof types.MoveTaskDocument,
    "\n  mutation UpdateTask($i: UpdateTaskInput!) {\n    updateTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": typeof types.UpdateTaskDocument,
    "\n  mutation ArchiveTask($id: ID!) {\n    archiveTask(taskId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ArchiveTaskPayload {\n        alreadyArchived\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": typeof types.ArchiveTaskDocument,
    "\n  mutation StartTask($i: StartTaskInput!) {\n    startTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on StartTaskPayload {\n        task {\n          ...TaskFields\n        }\n        session {\n          ...SessionFields\n        }\n      }\n    }\n  }\n": typeof types.StartTaskDocument,
    "\n  mutation SendMessage($i: SendMessageInput!) {\n    sendMessage(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on SendMessagePayload {\n        session {\n          ...SessionFields\n        }\n        queuedPromptId\n      }\n    }\n  }\n": typeof types.SendMessageDocument,
    "\n  mutation StopTask($id: ID!) {\n    stopTask(taskId: $id) {\n      __typename\n      ...ErrorFields\n      ... on StopTaskPayload {\n        status\n      }\n    }\n  }\n": typeof types.StopTaskDocument,
    "\n  mutation MarkStepComplete($s: ID!) {\n    markStepComplete(sessionId: $s) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.MarkStepCompleteDocument,
    "\n  mutation ResolvePermission($i: ResolvePermissionInput!) {\n    resolvePermission(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ResolvePermissionPayload {\n        request {\n          id\n        }\n      }\n    }\n  }\n": typeof types.ResolvePermissionDocument,
    "\n  query PendingQuestions($w: ID!, $t: ID, $after: String) {\n    pendingQuestions(workspaceId: $w, taskId: $t, after: $after, limit: 200) {\n      nodes {\n        id\n        taskId\n        sessionId\n        context\n        questions\n        state\n      }\n      nextCursor\n    }\n  }\n": typeof types.PendingQuestionsDocument,
    "\n  mutation AnswerClarification($i: AnswerClarificationInput!) {\n    answerClarification(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.AnswerClarificationDocument,
    "\n  mutation RejectClarification($id: ID!) {\n    rejectClarification(clarificationId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.RejectClarificationDocument,
    "\n  query ParentQuestion($id: ID!) {\n    task(id: $id) {\n      pendingParentQuestion {\n        id\n        context\n        questions\n      }\n    }\n  }\n": typeof types.ParentQuestionDocument,
    "\n  query FilePreview($taskId: ID!, $path: String!, $repository: String) {\n    filePreview(taskId: $taskId, path: $path, repository: $repository) {\n      __typename\n      ... on TextFilePreview {\n        path\n        size\n        text\n      }\n      ... on ImageFilePreview {\n        path\n        size\n        mimeType\n        dataBase64\n      }\n      ... on FilePreviewUnavailable {\n        path\n        reason\n        message\n      }\n      ...ErrorFields\n    }\n  }\n": typeof types.FilePreviewDocument,
    "\n  query TaskPlacementChoices($w: ID!) {\n    repositories(workspaceId: $w) {\n      id\n      name\n      defaultBranch\n    }\n    executorProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      capabilities\n      unavailableReason\n    }\n    workspaces {\n      id\n      lastTaskChoice {\n        repositories {\n          repositoryId\n          baseBranch\n        }\n        executorProfileId\n        agentProfileId\n      }\n    }\n  }\n": typeof types.TaskPlacementChoicesDocument,
    "\n  query RepositoryBranches($w: ID!, $first: Int!) {\n    repositories(workspaceId: $w) {\n      id\n      branches(first: $first)\n    }\n  }\n": typeof types.RepositoryBranchesDocument,
    "\n  mutation UpdateRepositoryBaseBranch($i: UpdateRepositoryBaseBranchInput!) {\n    updateRepositoryBaseBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on UpdateRepositoryBaseBranchPayload {\n        baseBranch\n      }\n    }\n  }\n": typeof types.UpdateRepositoryBaseBranchDocument,
    "\n  mutation AddWorkspaceSources($i: AddWorkspaceSourcesInput!) {\n    addWorkspaceSources(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AddWorkspaceSourcesPayload {\n        changed\n      }\n    }\n  }\n": typeof types.AddWorkspaceSourcesDocument,
    "\n  fragment ProfileFields on AgentProfile {\n    id\n    name\n    kind\n    command\n    env\n    supportsMcp\n    permissionPolicy\n    builtin\n    serverWide\n    available\n    missingCommand\n  }\n": typeof types.ProfileFieldsFragmentDoc,
    "\n  query AgentProfiles($w: ID!) {\n    agentProfiles(workspaceId: $w) {\n      ...ProfileFields\n    }\n  }\n": typeof types.AgentProfilesDocument,
    "\n  mutation CreateAgentProfile($i: CreateAgentProfileInput!) {\n    createAgentProfile(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CreateAgentProfilePayload {\n        agentProfile {\n          ...ProfileFields\n        }\n      }\n    }\n  }\n": typeof types.CreateAgentProfileDocument,
    "\n  mutation UpdateAgentProfile($i: UpdateAgentProfileInput!) {\n    updateAgentProfile(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AgentProfilePayload {\n        agentProfile {\n          ...ProfileFields\n        }\n      }\n    }\n  }\n": typeof types.UpdateAgentProfileDocument,
    "\n  mutation DeleteAgentProfile($id: ID!) {\n    deleteAgentProfile(agentProfileId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeleteAgentProfileDocument,
    "\n  mutation UpdateWorkspace($i: UpdateWorkspaceInput!) {\n    updateWorkspace(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkspacePayload {\n        workspace {\n          id\n          name\n          defaultWorkflowId\n        }\n      }\n    }\n  }\n": typeof types.UpdateWorkspaceDocument,
    "\n  query Secrets($w: ID!) {\n    secrets(workspaceId: $w) {\n      id\n      name\n      createdAt\n    }\n  }\n": typeof types.SecretsDocument,
    "\n  mutation CreateSecret($i: CreateSecretInput!) {\n    createSecret(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.CreateSecretDocument,
    "\n  mutation ReplaceSecret($i: ReplaceSecretInput!) {\n    replaceSecret(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.ReplaceSecretDocument,
    "\n  mutation DeleteSecret($id: ID!) {\n    deleteSecret(secretId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeleteSecretDocument,
    "\n  query AccessTokens {\n    accessTokens {\n      id\n      name\n      createdAt\n      lastUsedAt\n      revokedAt\n    }\n  }\n": typeof types.AccessTokensDocument,
    "\n  mutation CreateAccessToken($name: String!) {\n    createAccessToken(input: { name: $name }) {\n      __typename\n      ...ErrorFields\n      ... on CreateAccessTokenPayload {\n        token\n      }\n    }\n  }\n": typeof types.CreateAccessTokenDocument,
    "\n  mutation RevokeAccessToken($id: ID!) {\n    revokeAccessToken(id: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.RevokeAccessTokenDocument,
    "\n  query ExecutorProfiles($w: ID!) {\n    executorProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      builtin\n      serverWide\n      image\n      pullPolicy\n      dockerfile\n      env\n      mounts {\n        source\n        target\n        readOnly\n      }\n      cpus\n      memoryMb\n      pids\n      network\n      user\n      prepareScript\n      capabilities\n      unavailableReason\n    }\n  }\n": typeof types.ExecutorProfilesDocument,
    "\n  mutation TestExecutorProfile($id: ID!) {\n    testExecutorProfile(executorProfileId: $id) {\n      __typename\n      ... on ExecutorTestPayload {\n        ok\n        worker\n        findings\n        error\n      }\n      ...ErrorFields\n    }\n  }\n": typeof types.TestExecutorProfileDocument,
    "\n  mutation CreateExecutorProfile($i: CreateExecutorProfileInput!) {\n    createExecutorProfile(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.CreateExecutorProfileDocument,
    "\n  mutation UpdateExecutorProfile($i: UpdateExecutorProfileInput!) {\n    updateExecutorProfile(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.UpdateExecutorProfileDocument,
    "\n  mutation DeleteExecutorProfile($id: ID!) {\n    deleteExecutorProfile(executorProfileId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeleteExecutorProfileDocument,
    "\n  query Repositories($w: ID!) {\n    repositories(workspaceId: $w) {\n      id\n      name\n      path\n      defaultBranch\n    }\n  }\n": typeof types.RepositoriesDocument,
    "\n  mutation CreateRepository($i: CreateRepositoryInput!) {\n    createRepository(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.CreateRepositoryDocument,
    "\n  subscription WorkspaceEvents($w: ID!) {\n    workspaceEvents(workspaceId: $w) {\n      kind\n      id\n    }\n  }\n": typeof types.WorkspaceEventsDocument,
    "\n  fragment PullRequestFields on TaskPullRequestView {\n    repositoryId\n    repository\n    provider\n    number\n    url\n    state\n    draft\n    title\n    headBranch\n    headSha\n    baseBranch\n    reviewDecision\n    mergeable\n    mergeableReason\n    reviewComments\n    mergedAt\n    refreshedAt\n    checks {\n      name\n      status\n      conclusion\n      url\n    }\n  }\n": typeof types.PullRequestFieldsFragmentDoc,
    "\n  query ShipTask($id: ID!) {\n    account {\n      gitIdentity {\n        name\n        email\n      }\n    }\n    task(id: $id) {\n      id\n      title\n      autoMerge\n      fixFailingChecks {\n        enabled\n        maxRounds\n        stopped\n      }\n      checkFixRounds {\n        id\n        repositoryId\n        round\n        checkNames\n        state\n        createdAt\n      }\n      pullRequests {\n        ...PullRequestFields\n      }\n      repositories {\n        repositoryId\n        name\n        baseBranch\n        branch\n        sourceBranch\n        codeHost\n      }\n    }\n  }\n": typeof types.ShipTaskDocument,
    "\n  query ShipChanges($id: ID!) {\n    task(id: $id) {\n      id\n      changes(scope: UNCOMMITTED) {\n        reason\n        repositories {\n          repositoryId\n          ahead\n          behind\n          note\n          files(first: 500) {\n            totalCount\n            nodes {\n              path\n              oldPath\n              status\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.ShipChangesDocument,
    "\n  mutation SetGitIdentity($i: UpdateAccountInput!) {\n    updateAccount(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AccountPayload {\n        account {\n          gitIdentity {\n            name\n            email\n          }\n        }\n      }\n    }\n  }\n": typeof types.SetGitIdentityDocument,
    "\n  mutation CommitTaskChanges($i: CommitTaskChangesInput!) {\n    commitTaskChanges(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CommitPayload {\n        commit {\n          repositoryId\n          sha\n          message\n        }\n      }\n    }\n  }\n": typeof types.CommitTaskChangesDocument,
    "\n  mutation SuggestCommitMessage($taskId: ID!, $repositoryId: ID) {\n    suggestCommitMessage(taskId: $taskId, repositoryId: $repositoryId) {\n      __typename\n      ...ErrorFields\n      ... on SuggestedMessagePayload {\n        message\n      }\n    }\n  }\n": typeof types.SuggestCommitMessageDocument,
    "\n  mutation PushTaskBranch($i: PushTaskBranchInput!) {\n    pushTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PushPayload {\n        push {\n          repositoryId\n          branch\n          sha\n          changed\n        }\n      }\n    }\n  }\n": typeof types.PushTaskBranchDocument,
    "\n  mutation OpenPullRequest($i: OpenPullRequestInput!) {\n    openPullRequest(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PullRequestPayload {\n        pullRequest {\n          ...PullRequestFields\n        }\n      }\n    }\n  }\n": typeof types.OpenPullRequestDocument,
    "\n  mutation MergePullRequest($i: MergePullRequestInput!) {\n    mergePullRequest(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PullRequestPayload {\n        pullRequest {\n          ...PullRequestFields\n        }\n      }\n    }\n  }\n": typeof types.MergePullRequestDocument,
    "\n  mutation MergeTaskBranch($i: MergeTaskBranchInput!) {\n    mergeTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on MergeTaskBranchPayload {\n        sha\n      }\n    }\n  }\n": typeof types.MergeTaskBranchDocument,
    "\n  mutation UpdateTaskBranch($i: UpdateTaskBranchInput!) {\n    updateTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on UpdateTaskBranchPayload {\n        repositoryId\n        status\n        head\n        conflicts\n      }\n    }\n  }\n": typeof types.UpdateTaskBranchDocument,
    "\n  fragment BudgetFields on Budget {\n    period\n    limitTokens\n    limitUsd\n    reached\n    spent {\n      tokens\n      costUsd\n    }\n  }\n": typeof types.BudgetFieldsFragmentDoc,
    "\n  query Usage($w: ID!, $from: DateTime!, $to: DateTime!, $by: UsageGroupBy!) {\n    usage(workspaceId: $w, from: $from, to: $to, groupBy: $by) {\n      key\n      turns\n      completedTurns\n      failedTurns\n      inputTokens\n      outputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      costUsd\n    }\n  }\n": typeof types.UsageDocument,
    "\n  query TaskBudget($id: ID!) {\n    task(id: $id) {\n      id\n      budget {\n        ...BudgetFields\n      }\n    }\n  }\n": typeof types.TaskBudgetDocument,
    "\n  mutation SetTaskBudget($id: ID!, $budget: BudgetInput!) {\n    updateTask(input: { taskId: $id, budget: $budget }) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n          budget {\n            ...BudgetFields\n          }\n        }\n      }\n    }\n  }\n": typeof types.SetTaskBudgetDocument,
    "\n  query TurnContext($id: ID!) {\n    session(id: $id) {\n      id\n      turns {\n        id\n        seq\n        usage {\n          contextUsed\n          contextSize\n          model\n        }\n      }\n    }\n  }\n": typeof types.TurnContextDocument,
    "\n  query AutomationBudget($id: ID!) {\n    automation(id: $id) {\n      id\n      budget {\n        ...BudgetFields\n      }\n    }\n  }\n": typeof types.AutomationBudgetDocument,
    "\n  mutation SetAutomationBudget($i: SetAutomationBudgetInput!) {\n    setAutomationBudget(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationBudgetPayload {\n        budget {\n          ...BudgetFields\n        }\n      }\n    }\n  }\n": typeof types.SetAutomationBudgetDocument,
    "\n  fragment EditorStepFields on WorkflowStep {\n    id\n    name\n    position\n    isStartStep\n    isFinalStep\n    autoAdvanceRequiresSignal\n    allowManualMove\n    prompt\n    wipLimit\n    events\n  }\n": typeof types.EditorStepFieldsFragmentDoc,
    "\n  fragment EditorWorkflowFields on Workflow {\n    id\n    name\n    description\n    warnings\n    steps {\n      ...EditorStepFields\n    }\n  }\n": typeof types.EditorWorkflowFieldsFragmentDoc,
    "\n  query WorkflowEditor($w: ID!) {\n    workflows(workspaceId: $w) {\n      ...EditorWorkflowFields\n    }\n  }\n": typeof types.WorkflowEditorDocument,
    "\n  mutation CreateWorkflow($i: CreateWorkflowInput!) {\n    createWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkflowPayload {\n        workflow {\n          ...EditorWorkflowFields\n        }\n      }\n    }\n  }\n": typeof types.CreateWorkflowDocument,
    "\n  mutation UpdateWorkflow($i: UpdateWorkflowInput!) {\n    updateWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.UpdateWorkflowDocument,
    "\n  mutation DeleteWorkflow($id: ID!) {\n    deleteWorkflow(workflowId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeleteWorkflowDocument,
    "\n  mutation CreateWorkflowStep($i: CreateWorkflowStepInput!) {\n    createWorkflowStep(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.CreateWorkflowStepDocument,
    "\n  mutation UpdateWorkflowStep($i: UpdateWorkflowStepInput!) {\n    updateWorkflowStep(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.UpdateWorkflowStepDocument,
    "\n  mutation DeleteWorkflowStep($id: ID!, $to: ID) {\n    deleteWorkflowStep(stepId: $id, moveTasksToStepId: $to) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.DeleteWorkflowStepDocument,
    "\n  mutation ReorderWorkflowSteps($i: ReorderWorkflowStepsInput!) {\n    reorderWorkflowSteps(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": typeof types.ReorderWorkflowStepsDocument,
    "\n  query ExportWorkflow($id: ID!) {\n    exportWorkflow(workflowId: $id)\n  }\n": typeof types.ExportWorkflowDocument,
    "\n  mutation ImportWorkflow($i: ImportWorkflowInput!) {\n    importWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkflowPayload {\n        workflow {\n          id\n        }\n      }\n    }\n  }\n": typeof types.ImportWorkflowDocument,
};
const documents: Documents = {
    "\n  fragment AutomationEditFields on Automation {\n    id\n    name\n    description\n    prompt\n    titleTemplate\n    agentProfileId\n    destination\n    workflowId\n    workflowStepId\n    context\n    maxConcurrentRuns\n    enabled\n    hasWebhookSecret\n    triggers {\n      id\n      type\n      enabled\n      expression\n      timezone\n      filters\n      requireSignature\n    }\n    repositories {\n      repositoryId\n      baseBranch\n    }\n  }\n": types.AutomationEditFieldsFragmentDoc,
    "\n  query AutomationForEdit($id: ID!) {\n    automation(id: $id) {\n      ...AutomationEditFields\n    }\n  }\n": types.AutomationForEditDocument,
    "\n  query CronCheck($e: String!, $tz: String!) {\n    validateCron(expression: $e, timezone: $tz, count: 5) {\n      valid\n      error\n      description\n      nextFires\n    }\n  }\n": types.CronCheckDocument,
    "\n  fragment AutomationSaved on AutomationPayload {\n    webhookSecret\n    automation {\n      ...AutomationEditFields\n    }\n  }\n": types.AutomationSavedFragmentDoc,
    "\n  mutation CreateAutomationFromEditor($i: CreateAutomationInput!) {\n    createAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ValidationError {\n        field\n      }\n      ...AutomationSaved\n    }\n  }\n": types.CreateAutomationFromEditorDocument,
    "\n  mutation UpdateAutomationFromEditor($i: UpdateAutomationInput!) {\n    updateAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ValidationError {\n        field\n      }\n      ...AutomationSaved\n    }\n  }\n": types.UpdateAutomationFromEditorDocument,
    "\n  fragment AuthoringDraftFields on AuthoringDraft {\n    taskId\n    state\n    operatorMessages\n    name\n    prompt\n    automationId\n    triggers {\n      type\n      expression\n      timezone\n      filters\n    }\n  }\n": types.AuthoringDraftFieldsFragmentDoc,
    "\n  mutation StartAutomationAuthoring($i: StartAutomationAuthoringInput!) {\n    startAutomationAuthoring(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on StartTaskPayload {\n        task {\n          id\n        }\n        session {\n          id\n        }\n      }\n    }\n  }\n": types.StartAutomationAuthoringDocument,
    "\n  query AuthoringChat($task: ID!) {\n    task(id: $task) {\n      id\n      sessions {\n        id\n      }\n    }\n    authoringDraft(taskId: $task) {\n      ...AuthoringDraftFields\n    }\n  }\n": types.AuthoringChatDocument,
    "\n  query AuthoringDraft($task: ID!) {\n    authoringDraft(taskId: $task) {\n      ...AuthoringDraftFields\n    }\n  }\n": types.AuthoringDraftDocument,
    "\n  fragment RunRow on AutomationRun {\n    id\n    automationId\n    triggerType\n    status\n    reason\n    taskId\n    sessionId\n    turnId\n    titleSnapshot\n    createdAt\n    finishedAt\n    stoppedAt\n  }\n": types.RunRowFragmentDoc,
    "\n  fragment AckRow on AutomationAck {\n    status\n    detail\n    summary\n    ackedAt\n  }\n": types.AckRowFragmentDoc,
    "\n  fragment NextRunRow on NextRunIndicator {\n    state\n    label\n    at\n    relative\n    webhookPath\n    runningSince\n    elapsedSeconds\n    slowAfterSeconds\n    slow\n  }\n": types.NextRunRowFragmentDoc,
    "\n  fragment AutomationRow on Automation {\n    id\n    name\n    description\n    enabled\n    nextFire\n    lastAck {\n      ...AckRow\n    }\n    nextRun {\n      ...NextRunRow\n    }\n    runs(first: 1) {\n      nodes {\n        ...RunRow\n      }\n    }\n  }\n": types.AutomationRowFragmentDoc,
    "\n  query Automations($w: ID!) {\n    automations(workspaceId: $w) {\n      ...AutomationRow\n    }\n  }\n": types.AutomationsDocument,
    "\n  query Agenda($w: ID!) {\n    agenda(workspaceId: $w) {\n      upcoming {\n        nextFire\n        automation {\n          id\n          name\n        }\n        trigger {\n          id\n          expression\n          timezone\n        }\n      }\n      recent {\n        ...RunRow\n      }\n    }\n  }\n": types.AgendaDocument,
    "\n  query AutomationRuns($id: ID!) {\n    automationRuns(automationId: $id, first: 50) {\n      nodes {\n        ...RunRow\n      }\n    }\n  }\n": types.AutomationRunsDocument,
    "\n  subscription AutomationEvents($w: ID!) {\n    automationEvents(workspaceId: $w) {\n      kind\n      automationId\n      run {\n        ...RunRow\n      }\n      nextFire\n      ack {\n        ...AckRow\n      }\n      nextRun {\n        ...NextRunRow\n      }\n    }\n  }\n": types.AutomationEventsDocument,
    "\n  mutation RunAutomationNow($i: RunAutomationNowInput!) {\n    runAutomationNow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on RunAutomationNowPayload {\n        admission\n        reason\n        run {\n          ...RunRow\n        }\n      }\n    }\n  }\n": types.RunAutomationNowDocument,
    "\n  mutation StopRun($i: StopRunInput!) {\n    stopRun(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationRunPayload {\n        run {\n          ...RunRow\n        }\n      }\n    }\n  }\n": types.StopRunDocument,
    "\n  mutation ReackAutomation($i: ReackAutomationInput!) {\n    reackAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationPayload {\n        automation {\n          ...AutomationRow\n        }\n      }\n    }\n  }\n": types.ReackAutomationDocument,
    "\n  query WorkspaceRuns($w: ID!, $after: String) {\n    runs(workspaceId: $w, first: 100, after: $after) {\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        id\n        automationId\n      }\n    }\n  }\n": types.WorkspaceRunsDocument,
    "\n  fragment CatalogueFields on AgentCatalogueEntry {\n    id\n    name\n    command\n    install {\n      npmPackage\n      version\n      binaryUrl\n    }\n    envKeys\n    docsUrl\n    verified\n    installed\n    installedCommand\n    installJob {\n      state\n      update\n      error\n      startedAt\n      endedAt\n    }\n  }\n": types.CatalogueFieldsFragmentDoc,
    "\n  query AgentCatalogue {\n    agentCatalogue {\n      ...CatalogueFields\n    }\n  }\n": types.AgentCatalogueDocument,
    "\n  mutation InstallAgent($id: String!) {\n    installAgent(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on AgentInstallPayload {\n        agent {\n          ...CatalogueFields\n        }\n      }\n    }\n  }\n": types.InstallAgentDocument,
    "\n  mutation UpdateAgent($id: String!) {\n    updateAgent(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on AgentInstallPayload {\n        agent {\n          ...CatalogueFields\n        }\n      }\n    }\n  }\n": types.UpdateAgentDocument,
    "\n  fragment FileChangeFields on FileChange {\n    path\n    oldPath\n    status\n    additions\n    deletions\n    binary\n    tooLarge\n    reviewed\n    diffKey\n    oldMode\n    newMode\n    symlink\n    submodule\n    untracked\n  }\n": types.FileChangeFieldsFragmentDoc,
    "\n  fragment ReviewThreadFields on ReviewThread {\n    id\n    repositoryId\n    path\n    line\n    endLine\n    side\n    state\n    origin\n    anchor {\n      line\n      endLine\n      lineText\n    }\n    comments {\n      id\n      author {\n        kind\n        login\n      }\n      body\n      createdAt\n    }\n    resolvedBy {\n      kind\n      login\n    }\n    resolvedAt\n    sentInPromptId\n    sentAt\n    createdAt\n    updatedAt\n  }\n": types.ReviewThreadFieldsFragmentDoc,
    "\n  query TaskChanges($id: ID!, $first: Int!, $after: String) {\n    task(id: $id) {\n      id\n      changes {\n        reason\n        repositories {\n          repositoryId\n          name\n          branch\n          baseBranch\n          ahead\n          behind\n          note\n          stats {\n            files\n            additions\n            deletions\n          }\n          files(first: $first, after: $after) {\n            totalCount\n            pageInfo {\n              hasNextPage\n              endCursor\n            }\n            nodes {\n              ...FileChangeFields\n            }\n          }\n        }\n      }\n    }\n  }\n": types.TaskChangesDocument,
    "\n  query FileHunks($id: ID!, $paths: [String!], $scope: ChangeScope, $context: Int!, $large: Boolean!) {\n    task(id: $id) {\n      id\n      changes(scope: $scope, paths: $paths) {\n        repositories {\n          repositoryId\n          files(first: 10) {\n            nodes {\n              ...FileChangeFields\n              invalidUtf8\n              submoduleChange {\n                oldCommit\n                newCommit\n              }\n              hunks(context: $context, includeLarge: $large) {\n                header\n                oldStart\n                oldLines\n                newStart\n                newLines\n                lines {\n                  kind\n                  oldNumber\n                  newNumber\n                  text\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n": types.FileHunksDocument,
    "\n  query ReviewThreads($id: ID!) {\n    task(id: $id) {\n      id\n      reviewThreads {\n        ...ReviewThreadFields\n      }\n    }\n  }\n": types.ReviewThreadsDocument,
    "\n  mutation AddReviewComment($i: AddReviewCommentInput!) {\n    addReviewComment(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": types.AddReviewCommentDocument,
    "\n  mutation ReplyToReviewThread($i: ReplyToReviewThreadInput!) {\n    replyToReviewThread(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": types.ReplyToReviewThreadDocument,
    "\n  mutation ResolveReviewThread($id: ID!) {\n    resolveReviewThread(threadId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": types.ResolveReviewThreadDocument,
    "\n  mutation ReopenReviewThread($id: ID!) {\n    reopenReviewThread(threadId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": types.ReopenReviewThreadDocument,
    "\n  mutation DeleteReviewComment($id: ID!) {\n    deleteReviewComment(commentId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        threadDeleted\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": types.DeleteReviewCommentDocument,
    "\n  mutation SendReviewToAgent($i: SendReviewToAgentInput!) {\n    sendReviewToAgent(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on SendReviewPayload {\n        promptId\n        threads {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n": types.SendReviewToAgentDocument,
    "\n  mutation SetFileReviewed($i: SetFileReviewedInput!) {\n    setFileReviewed(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on FileReviewedPayload {\n        repositoryId\n        path\n        reviewed\n        diffKey\n      }\n    }\n  }\n": types.SetFileReviewedDocument,
    "\n  mutation DiscardChanges($i: DiscardChangesInput!) {\n    discardChanges(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on DiscardChangesPayload {\n        repositoryId\n        paths\n      }\n    }\n  }\n": types.DiscardChangesDocument,
    "\n  query CodeHostConnections($w: ID!) {\n    githubConnection(workspaceId: $w) {\n      login\n      host\n      connectedAt\n    }\n    gitlabConnection(workspaceId: $w) {\n      username\n      baseUrl\n      host\n      connectedAt\n    }\n  }\n": types.CodeHostConnectionsDocument,
    "\n  mutation ConnectGithub($i: ConnectGithubInput!) {\n    connectGithub(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.ConnectGithubDocument,
    "\n  mutation DisconnectGithub($w: ID!) {\n    disconnectGithub(input: { workspaceId: $w }) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DisconnectGithubDocument,
    "\n  mutation ConnectGitlab($i: ConnectGitlabInput!) {\n    connectGitlab(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.ConnectGitlabDocument,
    "\n  mutation DisconnectGitlab($w: ID!) {\n    disconnectGitlab(input: { workspaceId: $w }) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DisconnectGitlabDocument,
    "\n  query McpServers($w: ID!) {\n    mcpServers(workspaceId: $w) {\n      id\n      name\n      kind\n      url\n      headers\n      package\n      command\n      args\n      env\n      serverWide\n    }\n  }\n": types.McpServersDocument,
    "\n  query McpServerTemplates {\n    mcpServerTemplates {\n      key\n      name\n      title\n      description\n      publisher\n      kind\n      url\n      package\n      headers\n      secrets\n    }\n  }\n": types.McpServerTemplatesDocument,
    "\n  mutation CreateMcpServer($i: CreateMcpServerInput!) {\n    createMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.CreateMcpServerDocument,
    "\n  mutation UpdateMcpServer($i: UpdateMcpServerInput!) {\n    updateMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.UpdateMcpServerDocument,
    "\n  mutation DeleteMcpServer($id: ID!) {\n    deleteMcpServer(mcpServerId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeleteMcpServerDocument,
    "\n  query SelectedMcpServers($s: McpScope!, $t: ID!) {\n    selectedMcpServers(scope: $s, targetId: $t) {\n      id\n    }\n  }\n": types.SelectedMcpServersDocument,
    "\n  mutation SelectMcpServer($i: McpSelectionInput!) {\n    selectMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.SelectMcpServerDocument,
    "\n  mutation DeselectMcpServer($i: McpSelectionInput!) {\n    deselectMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeselectMcpServerDocument,
    "\n  query McpRegistry($w: ID!) {\n    mcpRegistry(workspaceId: $w) {\n      ...McpRegistryFields\n    }\n  }\n": types.McpRegistryDocument,
    "\n  mutation RefreshMcpRegistry($w: ID!) {\n    refreshMcpRegistry(workspaceId: $w) {\n      ...McpRegistryFields\n    }\n  }\n": types.RefreshMcpRegistryDocument,
    "\n  fragment McpRegistryFields on McpRegistry {\n    status\n    fetchedAt\n    checkedAt\n    error\n    entries {\n      key\n      name\n      title\n      description\n      version\n      publisher\n      websiteUrl\n      suggestedName\n      installable\n      options {\n        index\n        kind\n        label\n        url\n        package\n        transport\n        installable\n        reason\n        secrets\n      }\n    }\n  }\n": types.McpRegistryFieldsFragmentDoc,
    "\n  mutation AddMcpRegistryEntry($i: AddMcpRegistryEntryInput!) {\n    addMcpRegistryEntry(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.AddMcpRegistryEntryDocument,
    "\n  query SessionMcpServers($s: ID!) {\n    sessionMcpServers(sessionId: $s) {\n      sessionId\n      desiredRevision\n      appliedRevision\n      servers {\n        id\n        name\n        kind\n        origins {\n          scope\n          id\n        }\n      }\n    }\n  }\n": types.SessionMcpServersDocument,
    "\n  query NotificationChannels($w: ID!) {\n    notificationChannels(workspaceId: $w) {\n      id\n      name\n      service\n      target\n      events\n      enabled\n      status\n      lastAttemptAt\n      lastDeliveredAt\n      lastError\n      lastDurationMs\n      pendingDeliveries\n      failedDeliveries\n    }\n  }\n": types.NotificationChannelsDocument,
    "\n  mutation CreateNotificationChannel($i: CreateNotificationChannelInput!) {\n    createNotificationChannel(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n": types.CreateNotificationChannelDocument,
    "\n  mutation UpdateNotificationChannel($i: UpdateNotificationChannelInput!) {\n    updateNotificationChannel(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n": types.UpdateNotificationChannelDocument,
    "\n  mutation DeleteNotificationChannel($id: ID!) {\n    deleteNotificationChannel(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n": types.DeleteNotificationChannelDocument,
    "\n  mutation TestNotificationChannel($id: ID!) {\n    testNotificationChannel(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on TestNotificationPayload {\n        delivered\n        error\n      }\n    }\n  }\n": types.TestNotificationChannelDocument,
    "\n  fragment ErrorFields on Error {\n    message\n    code\n  }\n": types.ErrorFieldsFragmentDoc,
    "\n  fragment TaskFields on Task {\n    id\n    title\n    state\n    autopilot\n    parentId\n    pendingAction\n    workflowId\n    workflowStepId\n    externalId\n    archivedAt\n    createdAt\n    updatedAt\n    blockReason\n    placement {\n      executor\n      worker\n      boxId\n      waitingFor\n    }\n    usage {\n      inputTokens\n      outputTokens\n      costUsd\n    }\n    changeStats {\n      files\n      additions\n      deletions\n    }\n    activity {\n      agentProfileId\n      agentName\n      lastActivityAt\n      preview\n      hasRun\n      lastTurnFailed\n      needsAnswer\n    }\n    pullRequests {\n      repositoryId\n      number\n      url\n      state\n      draft\n      checks {\n        status\n        conclusion\n      }\n    }\n  }\n": types.TaskFieldsFragmentDoc,
    "\n  fragment SessionFields on Session {\n    id\n    name\n    state\n    isPrimary\n    agentProfileId\n    createdAt\n  }\n": types.SessionFieldsFragmentDoc,
    "\n  fragment MessageFields on Message {\n    id\n    kind\n    text\n    data\n    turnId\n    seq\n    createdAt\n    updatedAt\n    attachments {\n      id\n      name\n      size\n      contentType\n      url\n    }\n  }\n": types.MessageFieldsFragmentDoc,
    "\n  fragment TurnFields on Turn {\n    id\n    seq\n    state\n    stopReason\n    error\n  }\n": types.TurnFieldsFragmentDoc,
    "\n  fragment SessionStatusFields on Session {\n    ...SessionFields\n    completionPending\n    turns {\n      ...TurnFields\n    }\n    queuedPrompts {\n      id\n      text\n      source\n    }\n  }\n": types.SessionStatusFieldsFragmentDoc,
    "\n  query Boot {\n    workspaces {\n      id\n      name\n      defaultWorkflowId\n    }\n  }\n": types.BootDocument,
    "\n  mutation CreateWorkspace($name: String!) {\n    createWorkspace(input: { name: $name }) {\n      __typename\n      ...ErrorFields\n      ... on WorkspacePayload {\n        workspace {\n          id\n          name\n          defaultWorkflowId\n        }\n      }\n    }\n  }\n": types.CreateWorkspaceDocument,
    "\n  query Workspace($w: ID!) {\n    workflows(workspaceId: $w) {\n      id\n      name\n      steps {\n        id\n        name\n        position\n        isStartStep\n        isFinalStep\n        autoAdvanceRequiresSignal\n        allowManualMove\n        autoStartsAgent\n      }\n    }\n    agentProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      available\n      missingCommand\n    }\n  }\n": types.WorkspaceDocument,
    "\n  query Tasks($w: ID!, $step: ID, $first: Int!, $after: String) {\n    tasks(workspaceId: $w, workflowStepId: $step, first: $first, after: $after, archived: false) {\n      nodes {\n        ...TaskFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": types.TasksDocument,
    "\n  query Task($id: ID!) {\n    task(id: $id) {\n      ...TaskFields\n      prompt\n      executorProfileId\n      lastTurnError {\n        message\n        endedAt\n      }\n      repositories {\n        repositoryId\n        name\n        baseBranch\n        branch\n        sourceBranch\n        pullRequest\n        url\n      }\n      sessions {\n        ...SessionFields\n      }\n    }\n  }\n": types.TaskDocument,
    "\n  query Session($id: ID!, $page: Int!) {\n    session(id: $id) {\n      ...SessionStatusFields\n      messages(first: $page, order: DESC) {\n        nodes {\n          ...MessageFields\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n": types.SessionDocument,
    "\n  query OlderMessages($id: ID!, $page: Int!, $before: ID!) {\n    session(id: $id) {\n      id\n      messages(first: $page, order: DESC, beforeMessageId: $before) {\n        nodes {\n          ...MessageFields\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n": types.OlderMessagesDocument,
    "\n  query SessionStatus($id: ID!) {\n    session(id: $id) {\n      ...SessionStatusFields\n    }\n  }\n": types.SessionStatusDocument,
    "\n  query PendingPermissions($w: ID!, $t: ID) {\n    pendingPermissions(workspaceId: $w, taskId: $t) {\n      id\n      taskId\n      sessionId\n      title\n      toolCall\n      options {\n        optionId\n        name\n        kind\n      }\n    }\n  }\n": types.PendingPermissionsDocument,
    "\n  subscription TaskEvents($w: ID!) {\n    taskEvents(workspaceId: $w) {\n      kind\n      task {\n        ...TaskFields\n      }\n      changedFiles {\n        repositoryId\n        path\n      }\n      reviewThread {\n        ...ReviewThreadFields\n      }\n    }\n  }\n": types.TaskEventsDocument,
    "\n  subscription SessionEvents($s: ID!) {\n    sessionEvents(sessionId: $s) {\n      kind\n      session {\n        id\n        state\n        completionPending\n      }\n      message {\n        ...MessageFields\n      }\n      turn {\n        ...TurnFields\n      }\n    }\n  }\n": types.SessionEventsDocument,
    "\n  mutation CreateTask($i: CreateTaskInput!) {\n    createTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CreateTaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": types.CreateTaskDocument,
    "\n  mutation MoveTask($i: MoveTaskInput!) {\n    moveTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": types.MoveTaskDocument,
    "\n  mutation UpdateTask($i: UpdateTaskInput!) {\n    updateTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": types.UpdateTaskDocument,
    "\n  mutation ArchiveTask($id: ID!) {\n    archiveTask(taskId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ArchiveTaskPayload {\n        alreadyArchived\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n": types.ArchiveTaskDocument,
    "\n  mutation StartTask($i: StartTaskInput!) {\n    startTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on StartTaskPayload {\n        task {\n          ...TaskFields\n        }\n        session {\n          ...SessionFields\n        }\n      }\n    }\n  }\n": types.StartTaskDocument,
    "\n  mutation SendMessage($i: SendMessageInput!) {\n    sendMessage(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on SendMessagePayload {\n        session {\n          ...SessionFields\n        }\n        queuedPromptId\n      }\n    }\n  }\n": types.SendMessageDocument,
    "\n  mutation StopTask($id: ID!) {\n    stopTask(taskId: $id) {\n      __typename\n      ...ErrorFields\n      ... on StopTaskPayload {\n        status\n      }\n    }\n  }\n": types.StopTaskDocument,
    "\n  mutation MarkStepComplete($s: ID!) {\n    markStepComplete(sessionId: $s) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.MarkStepCompleteDocument,
    "\n  mutation ResolvePermission($i: ResolvePermissionInput!) {\n    resolvePermission(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ResolvePermissionPayload {\n        request {\n          id\n        }\n      }\n    }\n  }\n": types.ResolvePermissionDocument,
    "\n  query PendingQuestions($w: ID!, $t: ID, $after: String) {\n    pendingQuestions(workspaceId: $w, taskId: $t, after: $after, limit: 200) {\n      nodes {\n        id\n        taskId\n        sessionId\n        context\n        questions\n        state\n      }\n      nextCursor\n    }\n  }\n": types.PendingQuestionsDocument,
    "\n  mutation AnswerClarification($i: AnswerClarificationInput!) {\n    answerClarification(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.AnswerClarificationDocument,
    "\n  mutation RejectClarification($id: ID!) {\n    rejectClarification(clarificationId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.RejectClarificationDocument,
    "\n  query ParentQuestion($id: ID!) {\n    task(id: $id) {\n      pendingParentQuestion {\n        id\n        context\n        questions\n      }\n    }\n  }\n": types.ParentQuestionDocument,
    "\n  query FilePreview($taskId: ID!, $path: String!, $repository: String) {\n    filePreview(taskId: $taskId, path: $path, repository: $repository) {\n      __typename\n      ... on TextFilePreview {\n        path\n        size\n        text\n      }\n      ... on ImageFilePreview {\n        path\n        size\n        mimeType\n        dataBase64\n      }\n      ... on FilePreviewUnavailable {\n        path\n        reason\n        message\n      }\n      ...ErrorFields\n    }\n  }\n": types.FilePreviewDocument,
    "\n  query TaskPlacementChoices($w: ID!) {\n    repositories(workspaceId: $w) {\n      id\n      name\n      defaultBranch\n    }\n    executorProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      capabilities\n      unavailableReason\n    }\n    workspaces {\n      id\n      lastTaskChoice {\n        repositories {\n          repositoryId\n          baseBranch\n        }\n        executorProfileId\n        agentProfileId\n      }\n    }\n  }\n": types.TaskPlacementChoicesDocument,
    "\n  query RepositoryBranches($w: ID!, $first: Int!) {\n    repositories(workspaceId: $w) {\n      id\n      branches(first: $first)\n    }\n  }\n": types.RepositoryBranchesDocument,
    "\n  mutation UpdateRepositoryBaseBranch($i: UpdateRepositoryBaseBranchInput!) {\n    updateRepositoryBaseBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on UpdateRepositoryBaseBranchPayload {\n        baseBranch\n      }\n    }\n  }\n": types.UpdateRepositoryBaseBranchDocument,
    "\n  mutation AddWorkspaceSources($i: AddWorkspaceSourcesInput!) {\n    addWorkspaceSources(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AddWorkspaceSourcesPayload {\n        changed\n      }\n    }\n  }\n": types.AddWorkspaceSourcesDocument,
    "\n  fragment ProfileFields on AgentProfile {\n    id\n    name\n    kind\n    command\n    env\n    supportsMcp\n    permissionPolicy\n    builtin\n    serverWide\n    available\n    missingCommand\n  }\n": types.ProfileFieldsFragmentDoc,
    "\n  query AgentProfiles($w: ID!) {\n    agentProfiles(workspaceId: $w) {\n      ...ProfileFields\n    }\n  }\n": types.AgentProfilesDocument,
    "\n  mutation CreateAgentProfile($i: CreateAgentProfileInput!) {\n    createAgentProfile(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CreateAgentProfilePayload {\n        agentProfile {\n          ...ProfileFields\n        }\n      }\n    }\n  }\n": types.CreateAgentProfileDocument,
    "\n  mutation UpdateAgentProfile($i: UpdateAgentProfileInput!) {\n    updateAgentProfile(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AgentProfilePayload {\n        agentProfile {\n          ...ProfileFields\n        }\n      }\n    }\n  }\n": types.UpdateAgentProfileDocument,
    "\n  mutation DeleteAgentProfile($id: ID!) {\n    deleteAgentProfile(agentProfileId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeleteAgentProfileDocument,
    "\n  mutation UpdateWorkspace($i: UpdateWorkspaceInput!) {\n    updateWorkspace(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkspacePayload {\n        workspace {\n          id\n          name\n          defaultWorkflowId\n        }\n      }\n    }\n  }\n": types.UpdateWorkspaceDocument,
    "\n  query Secrets($w: ID!) {\n    secrets(workspaceId: $w) {\n      id\n      name\n      createdAt\n    }\n  }\n": types.SecretsDocument,
    "\n  mutation CreateSecret($i: CreateSecretInput!) {\n    createSecret(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.CreateSecretDocument,
    "\n  mutation ReplaceSecret($i: ReplaceSecretInput!) {\n    replaceSecret(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.ReplaceSecretDocument,
    "\n  mutation DeleteSecret($id: ID!) {\n    deleteSecret(secretId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeleteSecretDocument,
    "\n  query AccessTokens {\n    accessTokens {\n      id\n      name\n      createdAt\n      lastUsedAt\n      revokedAt\n    }\n  }\n": types.AccessTokensDocument,
    "\n  mutation CreateAccessToken($name: String!) {\n    createAccessToken(input: { name: $name }) {\n      __typename\n      ...ErrorFields\n      ... on CreateAccessTokenPayload {\n        token\n      }\n    }\n  }\n": types.CreateAccessTokenDocument,
    "\n  mutation RevokeAccessToken($id: ID!) {\n    revokeAccessToken(id: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.RevokeAccessTokenDocument,
    "\n  query ExecutorProfiles($w: ID!) {\n    executorProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      builtin\n      serverWide\n      image\n      pullPolicy\n      dockerfile\n      env\n      mounts {\n        source\n        target\n        readOnly\n      }\n      cpus\n      memoryMb\n      pids\n      network\n      user\n      prepareScript\n      capabilities\n      unavailableReason\n    }\n  }\n": types.ExecutorProfilesDocument,
    "\n  mutation TestExecutorProfile($id: ID!) {\n    testExecutorProfile(executorProfileId: $id) {\n      __typename\n      ... on ExecutorTestPayload {\n        ok\n        worker\n        findings\n        error\n      }\n      ...ErrorFields\n    }\n  }\n": types.TestExecutorProfileDocument,
    "\n  mutation CreateExecutorProfile($i: CreateExecutorProfileInput!) {\n    createExecutorProfile(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.CreateExecutorProfileDocument,
    "\n  mutation UpdateExecutorProfile($i: UpdateExecutorProfileInput!) {\n    updateExecutorProfile(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.UpdateExecutorProfileDocument,
    "\n  mutation DeleteExecutorProfile($id: ID!) {\n    deleteExecutorProfile(executorProfileId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeleteExecutorProfileDocument,
    "\n  query Repositories($w: ID!) {\n    repositories(workspaceId: $w) {\n      id\n      name\n      path\n      defaultBranch\n    }\n  }\n": types.RepositoriesDocument,
    "\n  mutation CreateRepository($i: CreateRepositoryInput!) {\n    createRepository(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.CreateRepositoryDocument,
    "\n  subscription WorkspaceEvents($w: ID!) {\n    workspaceEvents(workspaceId: $w) {\n      kind\n      id\n    }\n  }\n": types.WorkspaceEventsDocument,
    "\n  fragment PullRequestFields on TaskPullRequestView {\n    repositoryId\n    repository\n    provider\n    number\n    url\n    state\n    draft\n    title\n    headBranch\n    headSha\n    baseBranch\n    reviewDecision\n    mergeable\n    mergeableReason\n    reviewComments\n    mergedAt\n    refreshedAt\n    checks {\n      name\n      status\n      conclusion\n      url\n    }\n  }\n": types.PullRequestFieldsFragmentDoc,
    "\n  query ShipTask($id: ID!) {\n    account {\n      gitIdentity {\n        name\n        email\n      }\n    }\n    task(id: $id) {\n      id\n      title\n      autoMerge\n      fixFailingChecks {\n        enabled\n        maxRounds\n        stopped\n      }\n      checkFixRounds {\n        id\n        repositoryId\n        round\n        checkNames\n        state\n        createdAt\n      }\n      pullRequests {\n        ...PullRequestFields\n      }\n      repositories {\n        repositoryId\n        name\n        baseBranch\n        branch\n        sourceBranch\n        codeHost\n      }\n    }\n  }\n": types.ShipTaskDocument,
    "\n  query ShipChanges($id: ID!) {\n    task(id: $id) {\n      id\n      changes(scope: UNCOMMITTED) {\n        reason\n        repositories {\n          repositoryId\n          ahead\n          behind\n          note\n          files(first: 500) {\n            totalCount\n            nodes {\n              path\n              oldPath\n              status\n            }\n          }\n        }\n      }\n    }\n  }\n": types.ShipChangesDocument,
    "\n  mutation SetGitIdentity($i: UpdateAccountInput!) {\n    updateAccount(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AccountPayload {\n        account {\n          gitIdentity {\n            name\n            email\n          }\n        }\n      }\n    }\n  }\n": types.SetGitIdentityDocument,
    "\n  mutation CommitTaskChanges($i: CommitTaskChangesInput!) {\n    commitTaskChanges(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CommitPayload {\n        commit {\n          repositoryId\n          sha\n          message\n        }\n      }\n    }\n  }\n": types.CommitTaskChangesDocument,
    "\n  mutation SuggestCommitMessage($taskId: ID!, $repositoryId: ID) {\n    suggestCommitMessage(taskId: $taskId, repositoryId: $repositoryId) {\n      __typename\n      ...ErrorFields\n      ... on SuggestedMessagePayload {\n        message\n      }\n    }\n  }\n": types.SuggestCommitMessageDocument,
    "\n  mutation PushTaskBranch($i: PushTaskBranchInput!) {\n    pushTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PushPayload {\n        push {\n          repositoryId\n          branch\n          sha\n          changed\n        }\n      }\n    }\n  }\n": types.PushTaskBranchDocument,
    "\n  mutation OpenPullRequest($i: OpenPullRequestInput!) {\n    openPullRequest(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PullRequestPayload {\n        pullRequest {\n          ...PullRequestFields\n        }\n      }\n    }\n  }\n": types.OpenPullRequestDocument,
    "\n  mutation MergePullRequest($i: MergePullRequestInput!) {\n    mergePullRequest(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PullRequestPayload {\n        pullRequest {\n          ...PullRequestFields\n        }\n      }\n    }\n  }\n": types.MergePullRequestDocument,
    "\n  mutation MergeTaskBranch($i: MergeTaskBranchInput!) {\n    mergeTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on MergeTaskBranchPayload {\n        sha\n      }\n    }\n  }\n": types.MergeTaskBranchDocument,
    "\n  mutation UpdateTaskBranch($i: UpdateTaskBranchInput!) {\n    updateTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on UpdateTaskBranchPayload {\n        repositoryId\n        status\n        head\n        conflicts\n      }\n    }\n  }\n": types.UpdateTaskBranchDocument,
    "\n  fragment BudgetFields on Budget {\n    period\n    limitTokens\n    limitUsd\n    reached\n    spent {\n      tokens\n      costUsd\n    }\n  }\n": types.BudgetFieldsFragmentDoc,
    "\n  query Usage($w: ID!, $from: DateTime!, $to: DateTime!, $by: UsageGroupBy!) {\n    usage(workspaceId: $w, from: $from, to: $to, groupBy: $by) {\n      key\n      turns\n      completedTurns\n      failedTurns\n      inputTokens\n      outputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      costUsd\n    }\n  }\n": types.UsageDocument,
    "\n  query TaskBudget($id: ID!) {\n    task(id: $id) {\n      id\n      budget {\n        ...BudgetFields\n      }\n    }\n  }\n": types.TaskBudgetDocument,
    "\n  mutation SetTaskBudget($id: ID!, $budget: BudgetInput!) {\n    updateTask(input: { taskId: $id, budget: $budget }) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n          budget {\n            ...BudgetFields\n          }\n        }\n      }\n    }\n  }\n": types.SetTaskBudgetDocument,
    "\n  query TurnContext($id: ID!) {\n    session(id: $id) {\n      id\n      turns {\n        id\n        seq\n        usage {\n          contextUsed\n          contextSize\n          model\n        }\n      }\n    }\n  }\n": types.TurnContextDocument,
    "\n  query AutomationBudget($id: ID!) {\n    automation(id: $id) {\n      id\n      budget {\n        ...BudgetFields\n      }\n    }\n  }\n": types.AutomationBudgetDocument,
    "\n  mutation SetAutomationBudget($i: SetAutomationBudgetInput!) {\n    setAutomationBudget(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationBudgetPayload {\n        budget {\n          ...BudgetFields\n        }\n      }\n    }\n  }\n": types.SetAutomationBudgetDocument,
    "\n  fragment EditorStepFields on WorkflowStep {\n    id\n    name\n    position\n    isStartStep\n    isFinalStep\n    autoAdvanceRequiresSignal\n    allowManualMove\n    prompt\n    wipLimit\n    events\n  }\n": types.EditorStepFieldsFragmentDoc,
    "\n  fragment EditorWorkflowFields on Workflow {\n    id\n    name\n    description\n    warnings\n    steps {\n      ...EditorStepFields\n    }\n  }\n": types.EditorWorkflowFieldsFragmentDoc,
    "\n  query WorkflowEditor($w: ID!) {\n    workflows(workspaceId: $w) {\n      ...EditorWorkflowFields\n    }\n  }\n": types.WorkflowEditorDocument,
    "\n  mutation CreateWorkflow($i: CreateWorkflowInput!) {\n    createWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkflowPayload {\n        workflow {\n          ...EditorWorkflowFields\n        }\n      }\n    }\n  }\n": types.CreateWorkflowDocument,
    "\n  mutation UpdateWorkflow($i: UpdateWorkflowInput!) {\n    updateWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.UpdateWorkflowDocument,
    "\n  mutation DeleteWorkflow($id: ID!) {\n    deleteWorkflow(workflowId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeleteWorkflowDocument,
    "\n  mutation CreateWorkflowStep($i: CreateWorkflowStepInput!) {\n    createWorkflowStep(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.CreateWorkflowStepDocument,
    "\n  mutation UpdateWorkflowStep($i: UpdateWorkflowStepInput!) {\n    updateWorkflowStep(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.UpdateWorkflowStepDocument,
    "\n  mutation DeleteWorkflowStep($id: ID!, $to: ID) {\n    deleteWorkflowStep(stepId: $id, moveTasksToStepId: $to) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.DeleteWorkflowStepDocument,
    "\n  mutation ReorderWorkflowSteps($i: ReorderWorkflowStepsInput!) {\n    reorderWorkflowSteps(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n": types.ReorderWorkflowStepsDocument,
    "\n  query ExportWorkflow($id: ID!) {\n    exportWorkflow(workflowId: $id)\n  }\n": types.ExportWorkflowDocument,
    "\n  mutation ImportWorkflow($i: ImportWorkflowInput!) {\n    importWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkflowPayload {\n        workflow {\n          id\n        }\n      }\n    }\n  }\n": types.ImportWorkflowDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AutomationEditFields on Automation {\n    id\n    name\n    description\n    prompt\n    titleTemplate\n    agentProfileId\n    destination\n    workflowId\n    workflowStepId\n    context\n    maxConcurrentRuns\n    enabled\n    hasWebhookSecret\n    triggers {\n      id\n      type\n      enabled\n      expression\n      timezone\n      filters\n      requireSignature\n    }\n    repositories {\n      repositoryId\n      baseBranch\n    }\n  }\n"): typeof import('./graphql').AutomationEditFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AutomationForEdit($id: ID!) {\n    automation(id: $id) {\n      ...AutomationEditFields\n    }\n  }\n"): typeof import('./graphql').AutomationForEditDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CronCheck($e: String!, $tz: String!) {\n    validateCron(expression: $e, timezone: $tz, count: 5) {\n      valid\n      error\n      description\n      nextFires\n    }\n  }\n"): typeof import('./graphql').CronCheckDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AutomationSaved on AutomationPayload {\n    webhookSecret\n    automation {\n      ...AutomationEditFields\n    }\n  }\n"): typeof import('./graphql').AutomationSavedFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateAutomationFromEditor($i: CreateAutomationInput!) {\n    createAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ValidationError {\n        field\n      }\n      ...AutomationSaved\n    }\n  }\n"): typeof import('./graphql').CreateAutomationFromEditorDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateAutomationFromEditor($i: UpdateAutomationInput!) {\n    updateAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ValidationError {\n        field\n      }\n      ...AutomationSaved\n    }\n  }\n"): typeof import('./graphql').UpdateAutomationFromEditorDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AuthoringDraftFields on AuthoringDraft {\n    taskId\n    state\n    operatorMessages\n    name\n    prompt\n    automationId\n    triggers {\n      type\n      expression\n      timezone\n      filters\n    }\n  }\n"): typeof import('./graphql').AuthoringDraftFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartAutomationAuthoring($i: StartAutomationAuthoringInput!) {\n    startAutomationAuthoring(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on StartTaskPayload {\n        task {\n          id\n        }\n        session {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').StartAutomationAuthoringDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AuthoringChat($task: ID!) {\n    task(id: $task) {\n      id\n      sessions {\n        id\n      }\n    }\n    authoringDraft(taskId: $task) {\n      ...AuthoringDraftFields\n    }\n  }\n"): typeof import('./graphql').AuthoringChatDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AuthoringDraft($task: ID!) {\n    authoringDraft(taskId: $task) {\n      ...AuthoringDraftFields\n    }\n  }\n"): typeof import('./graphql').AuthoringDraftDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment RunRow on AutomationRun {\n    id\n    automationId\n    triggerType\n    status\n    reason\n    taskId\n    sessionId\n    turnId\n    titleSnapshot\n    createdAt\n    finishedAt\n    stoppedAt\n  }\n"): typeof import('./graphql').RunRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AckRow on AutomationAck {\n    status\n    detail\n    summary\n    ackedAt\n  }\n"): typeof import('./graphql').AckRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment NextRunRow on NextRunIndicator {\n    state\n    label\n    at\n    relative\n    webhookPath\n    runningSince\n    elapsedSeconds\n    slowAfterSeconds\n    slow\n  }\n"): typeof import('./graphql').NextRunRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AutomationRow on Automation {\n    id\n    name\n    description\n    enabled\n    nextFire\n    lastAck {\n      ...AckRow\n    }\n    nextRun {\n      ...NextRunRow\n    }\n    runs(first: 1) {\n      nodes {\n        ...RunRow\n      }\n    }\n  }\n"): typeof import('./graphql').AutomationRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Automations($w: ID!) {\n    automations(workspaceId: $w) {\n      ...AutomationRow\n    }\n  }\n"): typeof import('./graphql').AutomationsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Agenda($w: ID!) {\n    agenda(workspaceId: $w) {\n      upcoming {\n        nextFire\n        automation {\n          id\n          name\n        }\n        trigger {\n          id\n          expression\n          timezone\n        }\n      }\n      recent {\n        ...RunRow\n      }\n    }\n  }\n"): typeof import('./graphql').AgendaDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AutomationRuns($id: ID!) {\n    automationRuns(automationId: $id, first: 50) {\n      nodes {\n        ...RunRow\n      }\n    }\n  }\n"): typeof import('./graphql').AutomationRunsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription AutomationEvents($w: ID!) {\n    automationEvents(workspaceId: $w) {\n      kind\n      automationId\n      run {\n        ...RunRow\n      }\n      nextFire\n      ack {\n        ...AckRow\n      }\n      nextRun {\n        ...NextRunRow\n      }\n    }\n  }\n"): typeof import('./graphql').AutomationEventsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RunAutomationNow($i: RunAutomationNowInput!) {\n    runAutomationNow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on RunAutomationNowPayload {\n        admission\n        reason\n        run {\n          ...RunRow\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').RunAutomationNowDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StopRun($i: StopRunInput!) {\n    stopRun(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationRunPayload {\n        run {\n          ...RunRow\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').StopRunDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReackAutomation($i: ReackAutomationInput!) {\n    reackAutomation(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationPayload {\n        automation {\n          ...AutomationRow\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ReackAutomationDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WorkspaceRuns($w: ID!, $after: String) {\n    runs(workspaceId: $w, first: 100, after: $after) {\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        id\n        automationId\n      }\n    }\n  }\n"): typeof import('./graphql').WorkspaceRunsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CatalogueFields on AgentCatalogueEntry {\n    id\n    name\n    command\n    install {\n      npmPackage\n      version\n      binaryUrl\n    }\n    envKeys\n    docsUrl\n    verified\n    installed\n    installedCommand\n    installJob {\n      state\n      update\n      error\n      startedAt\n      endedAt\n    }\n  }\n"): typeof import('./graphql').CatalogueFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AgentCatalogue {\n    agentCatalogue {\n      ...CatalogueFields\n    }\n  }\n"): typeof import('./graphql').AgentCatalogueDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InstallAgent($id: String!) {\n    installAgent(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on AgentInstallPayload {\n        agent {\n          ...CatalogueFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').InstallAgentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateAgent($id: String!) {\n    updateAgent(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on AgentInstallPayload {\n        agent {\n          ...CatalogueFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateAgentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment FileChangeFields on FileChange {\n    path\n    oldPath\n    status\n    additions\n    deletions\n    binary\n    tooLarge\n    reviewed\n    diffKey\n    oldMode\n    newMode\n    symlink\n    submodule\n    untracked\n  }\n"): typeof import('./graphql').FileChangeFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ReviewThreadFields on ReviewThread {\n    id\n    repositoryId\n    path\n    line\n    endLine\n    side\n    state\n    origin\n    anchor {\n      line\n      endLine\n      lineText\n    }\n    comments {\n      id\n      author {\n        kind\n        login\n      }\n      body\n      createdAt\n    }\n    resolvedBy {\n      kind\n      login\n    }\n    resolvedAt\n    sentInPromptId\n    sentAt\n    createdAt\n    updatedAt\n  }\n"): typeof import('./graphql').ReviewThreadFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TaskChanges($id: ID!, $first: Int!, $after: String) {\n    task(id: $id) {\n      id\n      changes {\n        reason\n        repositories {\n          repositoryId\n          name\n          branch\n          baseBranch\n          ahead\n          behind\n          note\n          stats {\n            files\n            additions\n            deletions\n          }\n          files(first: $first, after: $after) {\n            totalCount\n            pageInfo {\n              hasNextPage\n              endCursor\n            }\n            nodes {\n              ...FileChangeFields\n            }\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').TaskChangesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FileHunks($id: ID!, $paths: [String!], $scope: ChangeScope, $context: Int!, $large: Boolean!) {\n    task(id: $id) {\n      id\n      changes(scope: $scope, paths: $paths) {\n        repositories {\n          repositoryId\n          files(first: 10) {\n            nodes {\n              ...FileChangeFields\n              invalidUtf8\n              submoduleChange {\n                oldCommit\n                newCommit\n              }\n              hunks(context: $context, includeLarge: $large) {\n                header\n                oldStart\n                oldLines\n                newStart\n                newLines\n                lines {\n                  kind\n                  oldNumber\n                  newNumber\n                  text\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').FileHunksDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ReviewThreads($id: ID!) {\n    task(id: $id) {\n      id\n      reviewThreads {\n        ...ReviewThreadFields\n      }\n    }\n  }\n"): typeof import('./graphql').ReviewThreadsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddReviewComment($i: AddReviewCommentInput!) {\n    addReviewComment(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').AddReviewCommentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReplyToReviewThread($i: ReplyToReviewThreadInput!) {\n    replyToReviewThread(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ReplyToReviewThreadDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResolveReviewThread($id: ID!) {\n    resolveReviewThread(threadId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ResolveReviewThreadDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReopenReviewThread($id: ID!) {\n    reopenReviewThread(threadId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ReopenReviewThreadDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteReviewComment($id: ID!) {\n    deleteReviewComment(commentId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ReviewThreadPayload {\n        threadDeleted\n        thread {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').DeleteReviewCommentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendReviewToAgent($i: SendReviewToAgentInput!) {\n    sendReviewToAgent(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on SendReviewPayload {\n        promptId\n        threads {\n          ...ReviewThreadFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').SendReviewToAgentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetFileReviewed($i: SetFileReviewedInput!) {\n    setFileReviewed(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on FileReviewedPayload {\n        repositoryId\n        path\n        reviewed\n        diffKey\n      }\n    }\n  }\n"): typeof import('./graphql').SetFileReviewedDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DiscardChanges($i: DiscardChangesInput!) {\n    discardChanges(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on DiscardChangesPayload {\n        repositoryId\n        paths\n      }\n    }\n  }\n"): typeof import('./graphql').DiscardChangesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CodeHostConnections($w: ID!) {\n    githubConnection(workspaceId: $w) {\n      login\n      host\n      connectedAt\n    }\n    gitlabConnection(workspaceId: $w) {\n      username\n      baseUrl\n      host\n      connectedAt\n    }\n  }\n"): typeof import('./graphql').CodeHostConnectionsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConnectGithub($i: ConnectGithubInput!) {\n    connectGithub(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').ConnectGithubDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DisconnectGithub($w: ID!) {\n    disconnectGithub(input: { workspaceId: $w }) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DisconnectGithubDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConnectGitlab($i: ConnectGitlabInput!) {\n    connectGitlab(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').ConnectGitlabDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DisconnectGitlab($w: ID!) {\n    disconnectGitlab(input: { workspaceId: $w }) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DisconnectGitlabDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpServers($w: ID!) {\n    mcpServers(workspaceId: $w) {\n      id\n      name\n      kind\n      url\n      headers\n      package\n      command\n      args\n      env\n      serverWide\n    }\n  }\n"): typeof import('./graphql').McpServersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpServerTemplates {\n    mcpServerTemplates {\n      key\n      name\n      title\n      description\n      publisher\n      kind\n      url\n      package\n      headers\n      secrets\n    }\n  }\n"): typeof import('./graphql').McpServerTemplatesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateMcpServer($i: CreateMcpServerInput!) {\n    createMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').CreateMcpServerDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateMcpServer($i: UpdateMcpServerInput!) {\n    updateMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').UpdateMcpServerDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteMcpServer($id: ID!) {\n    deleteMcpServer(mcpServerId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeleteMcpServerDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SelectedMcpServers($s: McpScope!, $t: ID!) {\n    selectedMcpServers(scope: $s, targetId: $t) {\n      id\n    }\n  }\n"): typeof import('./graphql').SelectedMcpServersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SelectMcpServer($i: McpSelectionInput!) {\n    selectMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').SelectMcpServerDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeselectMcpServer($i: McpSelectionInput!) {\n    deselectMcpServer(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeselectMcpServerDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query McpRegistry($w: ID!) {\n    mcpRegistry(workspaceId: $w) {\n      ...McpRegistryFields\n    }\n  }\n"): typeof import('./graphql').McpRegistryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RefreshMcpRegistry($w: ID!) {\n    refreshMcpRegistry(workspaceId: $w) {\n      ...McpRegistryFields\n    }\n  }\n"): typeof import('./graphql').RefreshMcpRegistryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment McpRegistryFields on McpRegistry {\n    status\n    fetchedAt\n    checkedAt\n    error\n    entries {\n      key\n      name\n      title\n      description\n      version\n      publisher\n      websiteUrl\n      suggestedName\n      installable\n      options {\n        index\n        kind\n        label\n        url\n        package\n        transport\n        installable\n        reason\n        secrets\n      }\n    }\n  }\n"): typeof import('./graphql').McpRegistryFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddMcpRegistryEntry($i: AddMcpRegistryEntryInput!) {\n    addMcpRegistryEntry(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').AddMcpRegistryEntryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SessionMcpServers($s: ID!) {\n    sessionMcpServers(sessionId: $s) {\n      sessionId\n      desiredRevision\n      appliedRevision\n      servers {\n        id\n        name\n        kind\n        origins {\n          scope\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').SessionMcpServersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NotificationChannels($w: ID!) {\n    notificationChannels(workspaceId: $w) {\n      id\n      name\n      service\n      target\n      events\n      enabled\n      status\n      lastAttemptAt\n      lastDeliveredAt\n      lastError\n      lastDurationMs\n      pendingDeliveries\n      failedDeliveries\n    }\n  }\n"): typeof import('./graphql').NotificationChannelsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateNotificationChannel($i: CreateNotificationChannelInput!) {\n    createNotificationChannel(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').CreateNotificationChannelDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateNotificationChannel($i: UpdateNotificationChannelInput!) {\n    updateNotificationChannel(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateNotificationChannelDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteNotificationChannel($id: ID!) {\n    deleteNotificationChannel(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on NotificationChannelPayload {\n        channel {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').DeleteNotificationChannelDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TestNotificationChannel($id: ID!) {\n    testNotificationChannel(id: $id) {\n      __typename\n      ...ErrorFields\n      ... on TestNotificationPayload {\n        delivered\n        error\n      }\n    }\n  }\n"): typeof import('./graphql').TestNotificationChannelDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ErrorFields on Error {\n    message\n    code\n  }\n"): typeof import('./graphql').ErrorFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TaskFields on Task {\n    id\n    title\n    state\n    autopilot\n    parentId\n    pendingAction\n    workflowId\n    workflowStepId\n    externalId\n    archivedAt\n    createdAt\n    updatedAt\n    blockReason\n    placement {\n      executor\n      worker\n      boxId\n      waitingFor\n    }\n    usage {\n      inputTokens\n      outputTokens\n      costUsd\n    }\n    changeStats {\n      files\n      additions\n      deletions\n    }\n    activity {\n      agentProfileId\n      agentName\n      lastActivityAt\n      preview\n      hasRun\n      lastTurnFailed\n      needsAnswer\n    }\n    pullRequests {\n      repositoryId\n      number\n      url\n      state\n      draft\n      checks {\n        status\n        conclusion\n      }\n    }\n  }\n"): typeof import('./graphql').TaskFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment SessionFields on Session {\n    id\n    name\n    state\n    isPrimary\n    agentProfileId\n    createdAt\n  }\n"): typeof import('./graphql').SessionFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment MessageFields on Message {\n    id\n    kind\n    text\n    data\n    turnId\n    seq\n    createdAt\n    updatedAt\n    attachments {\n      id\n      name\n      size\n      contentType\n      url\n    }\n  }\n"): typeof import('./graphql').MessageFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TurnFields on Turn {\n    id\n    seq\n    state\n    stopReason\n    error\n  }\n"): typeof import('./graphql').TurnFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment SessionStatusFields on Session {\n    ...SessionFields\n    completionPending\n    turns {\n      ...TurnFields\n    }\n    queuedPrompts {\n      id\n      text\n      source\n    }\n  }\n"): typeof import('./graphql').SessionStatusFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Boot {\n    workspaces {\n      id\n      name\n      defaultWorkflowId\n    }\n  }\n"): typeof import('./graphql').BootDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWorkspace($name: String!) {\n    createWorkspace(input: { name: $name }) {\n      __typename\n      ...ErrorFields\n      ... on WorkspacePayload {\n        workspace {\n          id\n          name\n          defaultWorkflowId\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').CreateWorkspaceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Workspace($w: ID!) {\n    workflows(workspaceId: $w) {\n      id\n      name\n      steps {\n        id\n        name\n        position\n        isStartStep\n        isFinalStep\n        autoAdvanceRequiresSignal\n        allowManualMove\n        autoStartsAgent\n      }\n    }\n    agentProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      available\n      missingCommand\n    }\n  }\n"): typeof import('./graphql').WorkspaceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Tasks($w: ID!, $step: ID, $first: Int!, $after: String) {\n    tasks(workspaceId: $w, workflowStepId: $step, first: $first, after: $after, archived: false) {\n      nodes {\n        ...TaskFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"): typeof import('./graphql').TasksDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Task($id: ID!) {\n    task(id: $id) {\n      ...TaskFields\n      prompt\n      executorProfileId\n      lastTurnError {\n        message\n        endedAt\n      }\n      repositories {\n        repositoryId\n        name\n        baseBranch\n        branch\n        sourceBranch\n        pullRequest\n        url\n      }\n      sessions {\n        ...SessionFields\n      }\n    }\n  }\n"): typeof import('./graphql').TaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Session($id: ID!, $page: Int!) {\n    session(id: $id) {\n      ...SessionStatusFields\n      messages(first: $page, order: DESC) {\n        nodes {\n          ...MessageFields\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').SessionDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OlderMessages($id: ID!, $page: Int!, $before: ID!) {\n    session(id: $id) {\n      id\n      messages(first: $page, order: DESC, beforeMessageId: $before) {\n        nodes {\n          ...MessageFields\n        }\n        pageInfo {\n          hasNextPage\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').OlderMessagesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SessionStatus($id: ID!) {\n    session(id: $id) {\n      ...SessionStatusFields\n    }\n  }\n"): typeof import('./graphql').SessionStatusDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PendingPermissions($w: ID!, $t: ID) {\n    pendingPermissions(workspaceId: $w, taskId: $t) {\n      id\n      taskId\n      sessionId\n      title\n      toolCall\n      options {\n        optionId\n        name\n        kind\n      }\n    }\n  }\n"): typeof import('./graphql').PendingPermissionsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription TaskEvents($w: ID!) {\n    taskEvents(workspaceId: $w) {\n      kind\n      task {\n        ...TaskFields\n      }\n      changedFiles {\n        repositoryId\n        path\n      }\n      reviewThread {\n        ...ReviewThreadFields\n      }\n    }\n  }\n"): typeof import('./graphql').TaskEventsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription SessionEvents($s: ID!) {\n    sessionEvents(sessionId: $s) {\n      kind\n      session {\n        id\n        state\n        completionPending\n      }\n      message {\n        ...MessageFields\n      }\n      turn {\n        ...TurnFields\n      }\n    }\n  }\n"): typeof import('./graphql').SessionEventsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateTask($i: CreateTaskInput!) {\n    createTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CreateTaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').CreateTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MoveTask($i: MoveTaskInput!) {\n    moveTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').MoveTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateTask($i: UpdateTaskInput!) {\n    updateTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ArchiveTask($id: ID!) {\n    archiveTask(taskId: $id) {\n      __typename\n      ...ErrorFields\n      ... on ArchiveTaskPayload {\n        alreadyArchived\n        task {\n          ...TaskFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ArchiveTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartTask($i: StartTaskInput!) {\n    startTask(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on StartTaskPayload {\n        task {\n          ...TaskFields\n        }\n        session {\n          ...SessionFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').StartTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendMessage($i: SendMessageInput!) {\n    sendMessage(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on SendMessagePayload {\n        session {\n          ...SessionFields\n        }\n        queuedPromptId\n      }\n    }\n  }\n"): typeof import('./graphql').SendMessageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StopTask($id: ID!) {\n    stopTask(taskId: $id) {\n      __typename\n      ...ErrorFields\n      ... on StopTaskPayload {\n        status\n      }\n    }\n  }\n"): typeof import('./graphql').StopTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkStepComplete($s: ID!) {\n    markStepComplete(sessionId: $s) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').MarkStepCompleteDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResolvePermission($i: ResolvePermissionInput!) {\n    resolvePermission(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on ResolvePermissionPayload {\n        request {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ResolvePermissionDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PendingQuestions($w: ID!, $t: ID, $after: String) {\n    pendingQuestions(workspaceId: $w, taskId: $t, after: $after, limit: 200) {\n      nodes {\n        id\n        taskId\n        sessionId\n        context\n        questions\n        state\n      }\n      nextCursor\n    }\n  }\n"): typeof import('./graphql').PendingQuestionsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AnswerClarification($i: AnswerClarificationInput!) {\n    answerClarification(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').AnswerClarificationDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RejectClarification($id: ID!) {\n    rejectClarification(clarificationId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').RejectClarificationDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ParentQuestion($id: ID!) {\n    task(id: $id) {\n      pendingParentQuestion {\n        id\n        context\n        questions\n      }\n    }\n  }\n"): typeof import('./graphql').ParentQuestionDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FilePreview($taskId: ID!, $path: String!, $repository: String) {\n    filePreview(taskId: $taskId, path: $path, repository: $repository) {\n      __typename\n      ... on TextFilePreview {\n        path\n        size\n        text\n      }\n      ... on ImageFilePreview {\n        path\n        size\n        mimeType\n        dataBase64\n      }\n      ... on FilePreviewUnavailable {\n        path\n        reason\n        message\n      }\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').FilePreviewDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TaskPlacementChoices($w: ID!) {\n    repositories(workspaceId: $w) {\n      id\n      name\n      defaultBranch\n    }\n    executorProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      capabilities\n      unavailableReason\n    }\n    workspaces {\n      id\n      lastTaskChoice {\n        repositories {\n          repositoryId\n          baseBranch\n        }\n        executorProfileId\n        agentProfileId\n      }\n    }\n  }\n"): typeof import('./graphql').TaskPlacementChoicesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RepositoryBranches($w: ID!, $first: Int!) {\n    repositories(workspaceId: $w) {\n      id\n      branches(first: $first)\n    }\n  }\n"): typeof import('./graphql').RepositoryBranchesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateRepositoryBaseBranch($i: UpdateRepositoryBaseBranchInput!) {\n    updateRepositoryBaseBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on UpdateRepositoryBaseBranchPayload {\n        baseBranch\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateRepositoryBaseBranchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddWorkspaceSources($i: AddWorkspaceSourcesInput!) {\n    addWorkspaceSources(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AddWorkspaceSourcesPayload {\n        changed\n      }\n    }\n  }\n"): typeof import('./graphql').AddWorkspaceSourcesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ProfileFields on AgentProfile {\n    id\n    name\n    kind\n    command\n    env\n    supportsMcp\n    permissionPolicy\n    builtin\n    serverWide\n    available\n    missingCommand\n  }\n"): typeof import('./graphql').ProfileFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AgentProfiles($w: ID!) {\n    agentProfiles(workspaceId: $w) {\n      ...ProfileFields\n    }\n  }\n"): typeof import('./graphql').AgentProfilesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateAgentProfile($i: CreateAgentProfileInput!) {\n    createAgentProfile(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CreateAgentProfilePayload {\n        agentProfile {\n          ...ProfileFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').CreateAgentProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateAgentProfile($i: UpdateAgentProfileInput!) {\n    updateAgentProfile(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AgentProfilePayload {\n        agentProfile {\n          ...ProfileFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateAgentProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteAgentProfile($id: ID!) {\n    deleteAgentProfile(agentProfileId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeleteAgentProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateWorkspace($i: UpdateWorkspaceInput!) {\n    updateWorkspace(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkspacePayload {\n        workspace {\n          id\n          name\n          defaultWorkflowId\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateWorkspaceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Secrets($w: ID!) {\n    secrets(workspaceId: $w) {\n      id\n      name\n      createdAt\n    }\n  }\n"): typeof import('./graphql').SecretsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateSecret($i: CreateSecretInput!) {\n    createSecret(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').CreateSecretDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReplaceSecret($i: ReplaceSecretInput!) {\n    replaceSecret(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').ReplaceSecretDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteSecret($id: ID!) {\n    deleteSecret(secretId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeleteSecretDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AccessTokens {\n    accessTokens {\n      id\n      name\n      createdAt\n      lastUsedAt\n      revokedAt\n    }\n  }\n"): typeof import('./graphql').AccessTokensDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateAccessToken($name: String!) {\n    createAccessToken(input: { name: $name }) {\n      __typename\n      ...ErrorFields\n      ... on CreateAccessTokenPayload {\n        token\n      }\n    }\n  }\n"): typeof import('./graphql').CreateAccessTokenDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeAccessToken($id: ID!) {\n    revokeAccessToken(id: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').RevokeAccessTokenDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ExecutorProfiles($w: ID!) {\n    executorProfiles(workspaceId: $w) {\n      id\n      name\n      kind\n      builtin\n      serverWide\n      image\n      pullPolicy\n      dockerfile\n      env\n      mounts {\n        source\n        target\n        readOnly\n      }\n      cpus\n      memoryMb\n      pids\n      network\n      user\n      prepareScript\n      capabilities\n      unavailableReason\n    }\n  }\n"): typeof import('./graphql').ExecutorProfilesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TestExecutorProfile($id: ID!) {\n    testExecutorProfile(executorProfileId: $id) {\n      __typename\n      ... on ExecutorTestPayload {\n        ok\n        worker\n        findings\n        error\n      }\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').TestExecutorProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateExecutorProfile($i: CreateExecutorProfileInput!) {\n    createExecutorProfile(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').CreateExecutorProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateExecutorProfile($i: UpdateExecutorProfileInput!) {\n    updateExecutorProfile(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').UpdateExecutorProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteExecutorProfile($id: ID!) {\n    deleteExecutorProfile(executorProfileId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeleteExecutorProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Repositories($w: ID!) {\n    repositories(workspaceId: $w) {\n      id\n      name\n      path\n      defaultBranch\n    }\n  }\n"): typeof import('./graphql').RepositoriesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateRepository($i: CreateRepositoryInput!) {\n    createRepository(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').CreateRepositoryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WorkspaceEvents($w: ID!) {\n    workspaceEvents(workspaceId: $w) {\n      kind\n      id\n    }\n  }\n"): typeof import('./graphql').WorkspaceEventsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PullRequestFields on TaskPullRequestView {\n    repositoryId\n    repository\n    provider\n    number\n    url\n    state\n    draft\n    title\n    headBranch\n    headSha\n    baseBranch\n    reviewDecision\n    mergeable\n    mergeableReason\n    reviewComments\n    mergedAt\n    refreshedAt\n    checks {\n      name\n      status\n      conclusion\n      url\n    }\n  }\n"): typeof import('./graphql').PullRequestFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ShipTask($id: ID!) {\n    account {\n      gitIdentity {\n        name\n        email\n      }\n    }\n    task(id: $id) {\n      id\n      title\n      autoMerge\n      fixFailingChecks {\n        enabled\n        maxRounds\n        stopped\n      }\n      checkFixRounds {\n        id\n        repositoryId\n        round\n        checkNames\n        state\n        createdAt\n      }\n      pullRequests {\n        ...PullRequestFields\n      }\n      repositories {\n        repositoryId\n        name\n        baseBranch\n        branch\n        sourceBranch\n        codeHost\n      }\n    }\n  }\n"): typeof import('./graphql').ShipTaskDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ShipChanges($id: ID!) {\n    task(id: $id) {\n      id\n      changes(scope: UNCOMMITTED) {\n        reason\n        repositories {\n          repositoryId\n          ahead\n          behind\n          note\n          files(first: 500) {\n            totalCount\n            nodes {\n              path\n              oldPath\n              status\n            }\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ShipChangesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetGitIdentity($i: UpdateAccountInput!) {\n    updateAccount(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AccountPayload {\n        account {\n          gitIdentity {\n            name\n            email\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').SetGitIdentityDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CommitTaskChanges($i: CommitTaskChangesInput!) {\n    commitTaskChanges(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on CommitPayload {\n        commit {\n          repositoryId\n          sha\n          message\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').CommitTaskChangesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SuggestCommitMessage($taskId: ID!, $repositoryId: ID) {\n    suggestCommitMessage(taskId: $taskId, repositoryId: $repositoryId) {\n      __typename\n      ...ErrorFields\n      ... on SuggestedMessagePayload {\n        message\n      }\n    }\n  }\n"): typeof import('./graphql').SuggestCommitMessageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PushTaskBranch($i: PushTaskBranchInput!) {\n    pushTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PushPayload {\n        push {\n          repositoryId\n          branch\n          sha\n          changed\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').PushTaskBranchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation OpenPullRequest($i: OpenPullRequestInput!) {\n    openPullRequest(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PullRequestPayload {\n        pullRequest {\n          ...PullRequestFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').OpenPullRequestDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MergePullRequest($i: MergePullRequestInput!) {\n    mergePullRequest(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on PullRequestPayload {\n        pullRequest {\n          ...PullRequestFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').MergePullRequestDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MergeTaskBranch($i: MergeTaskBranchInput!) {\n    mergeTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on MergeTaskBranchPayload {\n        sha\n      }\n    }\n  }\n"): typeof import('./graphql').MergeTaskBranchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateTaskBranch($i: UpdateTaskBranchInput!) {\n    updateTaskBranch(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on UpdateTaskBranchPayload {\n        repositoryId\n        status\n        head\n        conflicts\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateTaskBranchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment BudgetFields on Budget {\n    period\n    limitTokens\n    limitUsd\n    reached\n    spent {\n      tokens\n      costUsd\n    }\n  }\n"): typeof import('./graphql').BudgetFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Usage($w: ID!, $from: DateTime!, $to: DateTime!, $by: UsageGroupBy!) {\n    usage(workspaceId: $w, from: $from, to: $to, groupBy: $by) {\n      key\n      turns\n      completedTurns\n      failedTurns\n      inputTokens\n      outputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      costUsd\n    }\n  }\n"): typeof import('./graphql').UsageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TaskBudget($id: ID!) {\n    task(id: $id) {\n      id\n      budget {\n        ...BudgetFields\n      }\n    }\n  }\n"): typeof import('./graphql').TaskBudgetDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetTaskBudget($id: ID!, $budget: BudgetInput!) {\n    updateTask(input: { taskId: $id, budget: $budget }) {\n      __typename\n      ...ErrorFields\n      ... on TaskPayload {\n        task {\n          ...TaskFields\n          budget {\n            ...BudgetFields\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').SetTaskBudgetDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TurnContext($id: ID!) {\n    session(id: $id) {\n      id\n      turns {\n        id\n        seq\n        usage {\n          contextUsed\n          contextSize\n          model\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').TurnContextDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AutomationBudget($id: ID!) {\n    automation(id: $id) {\n      id\n      budget {\n        ...BudgetFields\n      }\n    }\n  }\n"): typeof import('./graphql').AutomationBudgetDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetAutomationBudget($i: SetAutomationBudgetInput!) {\n    setAutomationBudget(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on AutomationBudgetPayload {\n        budget {\n          ...BudgetFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').SetAutomationBudgetDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment EditorStepFields on WorkflowStep {\n    id\n    name\n    position\n    isStartStep\n    isFinalStep\n    autoAdvanceRequiresSignal\n    allowManualMove\n    prompt\n    wipLimit\n    events\n  }\n"): typeof import('./graphql').EditorStepFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment EditorWorkflowFields on Workflow {\n    id\n    name\n    description\n    warnings\n    steps {\n      ...EditorStepFields\n    }\n  }\n"): typeof import('./graphql').EditorWorkflowFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WorkflowEditor($w: ID!) {\n    workflows(workspaceId: $w) {\n      ...EditorWorkflowFields\n    }\n  }\n"): typeof import('./graphql').WorkflowEditorDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWorkflow($i: CreateWorkflowInput!) {\n    createWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkflowPayload {\n        workflow {\n          ...EditorWorkflowFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').CreateWorkflowDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateWorkflow($i: UpdateWorkflowInput!) {\n    updateWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').UpdateWorkflowDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWorkflow($id: ID!) {\n    deleteWorkflow(workflowId: $id) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeleteWorkflowDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWorkflowStep($i: CreateWorkflowStepInput!) {\n    createWorkflowStep(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').CreateWorkflowStepDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateWorkflowStep($i: UpdateWorkflowStepInput!) {\n    updateWorkflowStep(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').UpdateWorkflowStepDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWorkflowStep($id: ID!, $to: ID) {\n    deleteWorkflowStep(stepId: $id, moveTasksToStepId: $to) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').DeleteWorkflowStepDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReorderWorkflowSteps($i: ReorderWorkflowStepsInput!) {\n    reorderWorkflowSteps(input: $i) {\n      __typename\n      ...ErrorFields\n    }\n  }\n"): typeof import('./graphql').ReorderWorkflowStepsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ExportWorkflow($id: ID!) {\n    exportWorkflow(workflowId: $id)\n  }\n"): typeof import('./graphql').ExportWorkflowDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ImportWorkflow($i: ImportWorkflowInput!) {\n    importWorkflow(input: $i) {\n      __typename\n      ...ErrorFields\n      ... on WorkflowPayload {\n        workflow {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').ImportWorkflowDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
