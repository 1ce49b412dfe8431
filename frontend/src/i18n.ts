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
  },
};

function catalog(): Partial<Record<StringKey, string>> {
  const lang = (navigator.language || "en").toLowerCase().split("-")[0];
  return catalogs[lang] ?? en;
}

const active = catalog();

export function t(key: StringKey): string {
  return active[key] ?? en[key];
}
