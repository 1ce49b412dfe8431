// User-facing strings, keyed so they can be translated; English is the fallback for every locale.
const en = {
  autopilot: "Autopilot",
  autopilotMode: "Autopilot mode",
  autopilotInfo:
    "In autopilot the subtask works on its own: it makes safe, reversible assumptions and asks its parent task only when a critical decision blocks it. It never asks you directly. This is fixed when the subtask is created.",
  questionPending: "Question waiting for an answer",
  permissionPending: "Permission requested",
  completionPending: "Completion pending",
  completionPendingHint: "The agent stopped without signalling that this step is complete.",
  markComplete: "Mark complete & advance",
  markCompleteDisabled: "Answer the pending question first",
  reconnecting: "Reconnecting…",
  connecting: "Connecting…",
  live: "Live",
  waitingOnParent: "Waiting on the parent task",
  // A card's status, as a person would say it (derive.ts cardStatus picks one).
  statusNotStarted: "Not started",
  statusStarting: "Starting",
  statusWorking: "Agent working",
  statusWaiting: "Waiting for you",
  statusNeedsAnswer: "Needs answer",
  statusNeedsApproval: "Needs your approval",
  statusFailed: "Failed",
  statusBlocked: "Blocked",
  statusDone: "Done",
  statusStopped: "Stopped",
  justNow: "just now",
  minutesAgo: "{n} min ago",
  hoursAgo: "{n} h ago",
  daysAgo: "{n} d ago",
  moveTo: "Move to…",
  confirmMoveTitle: "Start the agent again?",
  confirmMoveText: "“{task}” has run before. Moving it to {step} starts its agent again.",
  confirmMove: "Move and start",
  cancel: "Cancel",
  shortcuts: "Keyboard shortcuts",
  shortcutHelp: "Show this list",
  shortcutMoveCard: "Move the focused card to the previous or next step",
  shortcutSend: "Send the message in the composer",
  shortcutClose: "Close a dialog or the task switcher",
  close: "Close",
  ctrlEnterSends: "Ctrl+Enter sends",
} as const;

export type StringKey = keyof typeof en;

const catalogs: Record<string, Partial<Record<StringKey, string>>> = {
  en,
  de: {
    autopilot: "Autopilot",
    autopilotMode: "Autopilot-Modus",
    completionPending: "Abschluss ausstehend",
    markComplete: "Als erledigt markieren & weiter",
    reconnecting: "Verbindung wird wiederhergestellt…",
    statusWorking: "Agent arbeitet",
    statusWaiting: "Wartet auf dich",
    statusNeedsAnswer: "Braucht Antwort",
    statusFailed: "Fehlgeschlagen",
    cancel: "Abbrechen",
  },
};

function catalog(): Partial<Record<StringKey, string>> {
  const lang = (navigator.language || "en").toLowerCase().split("-")[0];
  return catalogs[lang] ?? en;
}

const active = catalog();

/** The string for `key`, with `{name}` placeholders filled from `values`. */
export function t(key: StringKey, values?: Record<string, string | number>): string {
  const text: string = active[key] ?? en[key];
  return values ? text.replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole)) : text;
}
