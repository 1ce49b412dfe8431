// Browser notifications (the Notification API) when a task needs a person (a question or a permission), a turn
// fails, or a task reaches review: told by the taskEvents this tab already receives. Permission is asked once
// (on the first prompt sent, a user gesture, or from Settings → Notifications); a short sound is optional.
import type { Task } from "../api/ops";

const ENABLED = "kandev.notify.browser";
const SOUND = "kandev.notify.sound";
const ASKED = "kandev.notify.asked";

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* storage unavailable: the choice lasts as long as the page */
  }
}

export function notificationsSupported(): boolean {
  return typeof window !== "undefined" && "Notification" in window;
}

export function browserNotifications(): { supported: boolean; permission: string; enabled: boolean; sound: boolean } {
  const supported = notificationsSupported();
  return {
    supported,
    permission: supported ? Notification.permission : "unsupported",
    enabled: supported && read(ENABLED) !== "off" && Notification.permission === "granted",
    sound: read(SOUND) === "on",
  };
}

/** Ask the browser once (never again after an answer, whatever it was). */
export function askForBrowserNotificationsOnce(): void {
  if (!notificationsSupported() || read(ASKED) || Notification.permission !== "default") return;
  write(ASKED, "1");
  void Notification.requestPermission();
}

export async function enableBrowserNotifications(on: boolean): Promise<string> {
  write(ENABLED, on ? "on" : "off");
  if (on && notificationsSupported() && Notification.permission === "default") {
    write(ASKED, "1");
    return Notification.requestPermission();
  }
  return notificationsSupported() ? Notification.permission : "unsupported";
}

export function setNotificationSound(on: boolean): void {
  write(SOUND, on ? "on" : "off");
}

/** What changed for a person between two versions of a task, if anything worth a notification. */
export function noticeFor(before: Task | undefined, after: Task): { title: string; body: string; kind: string } | null {
  const asks = after.pendingAction === "PERMISSION" || after.pendingAction === "CLARIFICATION";
  if (asks && before?.pendingAction !== after.pendingAction) {
    const what = after.pendingAction === "PERMISSION" ? "asks for permission" : "asks a question";
    return { kind: "needs-input", title: `${after.title} needs you`, body: `The agent ${what}.` };
  }
  if (after.activity?.lastTurnFailed && before && !before.activity?.lastTurnFailed) {
    return { kind: "turn-failed", title: `${after.title}: a turn failed`, body: "Open the task to see the error." };
  }
  if (after.state === "REVIEW" && before && before.state !== "REVIEW") {
    return { kind: "review", title: `${after.title} is ready for review`, body: "The agent finished its turn." };
  }
  return null;
}

/** Show the notification for a task's change (one per task and kind across tabs: the tag replaces). */
export function notifyTaskChange(before: Task | undefined, after: Task): void {
  const state = browserNotifications();
  if (!state.enabled) return;
  const notice = noticeFor(before, after);
  if (!notice) return;
  try {
    const shown = new Notification(notice.title, { body: notice.body, tag: `kandev-${after.id}-${notice.kind}` });
    shown.onclick = () => {
      window.focus();
      window.location.assign(`/tasks/${encodeURIComponent(after.id)}`);
    };
  } catch {
    return; // e.g. a browser that only notifies from a service worker
  }
  if (state.sound) beep();
}

function beep(): void {
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 880;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.25);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.25);
    tone.onended = () => void audio.close();
  } catch {
    /* no audio here */
  }
}
