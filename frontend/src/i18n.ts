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
  signedOut: "Signed out",
  waitingOnParent: "Waiting on the parent task",
  waitingForWorker: "waiting for a worker with {capabilities}",
  runsOnWorker: "Runs on worker {worker}",
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

// Every catalogue names every key: a new English string without its German fails the type check.
const catalogs: Record<string, Record<StringKey, string>> = {
  en,
  de: {
    autopilot: "Autopilot",
    autopilotMode: "Autopilot-Modus",
    autopilotInfo:
      "Im Autopilot arbeitet die Unteraufgabe selbstständig: Sie trifft sichere, umkehrbare Annahmen und fragt ihre übergeordnete Aufgabe nur, wenn eine kritische Entscheidung sie blockiert. Sie fragt nie dich direkt. Das wird beim Anlegen der Unteraufgabe festgelegt.",
    questionPending: "Frage wartet auf Antwort",
    permissionPending: "Berechtigung angefragt",
    completionPending: "Abschluss ausstehend",
    completionPendingHint: "Der Agent hat aufgehört, ohne zu melden, dass dieser Schritt erledigt ist.",
    markComplete: "Als erledigt markieren & weiter",
    markCompleteDisabled: "Beantworte zuerst die offene Frage",
    reconnecting: "Verbindung wird wiederhergestellt…",
    connecting: "Verbinde…",
    live: "Live",
    signedOut: "Abgemeldet",
    waitingOnParent: "Wartet auf die übergeordnete Aufgabe",
    waitingForWorker: "wartet auf einen Worker mit {capabilities}",
    runsOnWorker: "Läuft auf Worker {worker}",
    statusNotStarted: "Nicht gestartet",
    statusStarting: "Startet",
    statusWorking: "Agent arbeitet",
    statusWaiting: "Wartet auf dich",
    statusNeedsAnswer: "Braucht Antwort",
    statusNeedsApproval: "Braucht deine Freigabe",
    statusFailed: "Fehlgeschlagen",
    statusBlocked: "Blockiert",
    statusDone: "Erledigt",
    statusStopped: "Angehalten",
    justNow: "gerade eben",
    minutesAgo: "vor {n} Min.",
    hoursAgo: "vor {n} Std.",
    daysAgo: "vor {n} T.",
    moveTo: "Verschieben nach…",
    confirmMoveTitle: "Agent erneut starten?",
    confirmMoveText: "„{task}“ lief schon einmal. Das Verschieben nach {step} startet seinen Agenten erneut.",
    confirmMove: "Verschieben und starten",
    cancel: "Abbrechen",
    shortcuts: "Tastenkürzel",
    shortcutHelp: "Diese Liste zeigen",
    shortcutMoveCard: "Die ausgewählte Karte in den vorigen oder nächsten Schritt verschieben",
    shortcutSend: "Die Nachricht im Eingabefeld senden",
    shortcutClose: "Einen Dialog oder den Aufgabenwechsler schließen",
    close: "Schließen",
    ctrlEnterSends: "Strg+Enter sendet",
  },
};

function catalog(): Record<StringKey, string> {
  const lang = (navigator.language || "en").toLowerCase().split("-")[0];
  return catalogs[lang] ?? en;
}

const active = catalog();

/** The string for `key`, with `{name}` placeholders filled from `values`. */
export function t(key: StringKey, values?: Record<string, string | number>): string {
  const text: string = active[key];
  return values ? text.replace(/\{(\w+)\}/g, (whole, name: string) => String(values[name] ?? whole)) : text;
}
