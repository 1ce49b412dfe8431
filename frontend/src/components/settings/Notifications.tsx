// Settings → Notifications: this browser's notifications (asked once, sound optional) and the workspace's
// outgoing channels (Slack, Discord, e-mail, ntfy, a JSON webhook, … in Apprise's URL form) with Send test and
// how each one's last attempt went (a failing or slow target shows here).
import { useCallback, useEffect, useState } from "react";
import { gql, unwrap } from "../../api/graphql";
import {
  CREATE_NOTIFICATION_CHANNEL,
  DELETE_NOTIFICATION_CHANNEL,
  NOTIFICATION_CHANNELS,
  TEST_NOTIFICATION_CHANNEL,
  UPDATE_NOTIFICATION_CHANNEL,
  type ChannelRow,
} from "../../api/notificationOps";
import type { NotificationEvent } from "../../gql/graphql";
import { app } from "../../state/app";
import { browserNotifications, enableBrowserNotifications, setNotificationSound } from "../../state/browserNotify";
import { useStore } from "../../state/store";
import { FormError, useAction } from "./useAction";

const EVENTS: { id: NotificationEvent; label: string }[] = [
  { id: "NEEDS_INPUT" as NotificationEvent, label: "A task needs a person (question, permission)" },
  { id: "TURN_FAILED" as NotificationEvent, label: "A turn failed" },
  { id: "REVIEW_READY" as NotificationEvent, label: "A task reached review" },
];
const STATUS: Record<string, string> = { NEW: "Not tried yet", OK: "Working", SLOW: "Slow", FAILING: "Failing" };

export function Notifications() {
  return (
    <div className="settings-body">
      <BrowserNotifications />
      <Channels />
    </div>
  );
}

function BrowserNotifications() {
  const [state, setState] = useState(browserNotifications());
  const refresh = () => setState(browserNotifications());
  return (
    <div className="panel" data-testid="browser-notifications">
      <h2>In this browser</h2>
      {!state.supported ? (
        <p className="muted">This browser has no notifications.</p>
      ) : (
        <>
          <p className="muted">
            Tells you when a task needs you, a turn fails or a task reaches review, while Kandev is open in a tab.
            {state.permission === "denied" && " The browser blocks notifications for this site: allow them in its site settings."}
          </p>
          <label className="field-inline">
            <input
              type="checkbox"
              checked={state.enabled}
              disabled={state.permission === "denied"}
              onChange={(e) => void enableBrowserNotifications(e.target.checked).then(refresh)}
              data-testid="browser-notifications-enabled"
            />
            <span>Show notifications</span>
          </label>
          <label className="field-inline">
            <input type="checkbox" checked={state.sound} onChange={(e) => (setNotificationSound(e.target.checked), refresh())} data-testid="browser-notifications-sound" />
            <span>With a sound</span>
          </label>
        </>
      )}
    </div>
  );
}

function Channels() {
  const workspaceId = useStore(app, (s) => s.workspaceId)!;
  const [channels, setChannels] = useState<ChannelRow[] | null>(null);
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<NotificationEvent[]>(EVENTS.map((e) => e.id));
  const add = useAction();
  const load = useAction();
  const reload = useCallback(
    () => load.run(async () => setChannels((await gql(NOTIFICATION_CHANNELS, { w: workspaceId })).notificationChannels)),
    [workspaceId],
  );
  useEffect(() => void reload(), [reload]);
  // Deliveries are retried in the background: their outcome shows without a reload.
  useEffect(() => {
    const timer = window.setInterval(() => void reload(), 5000);
    return () => window.clearInterval(timer);
  }, [reload]);
  const create = () =>
    add.run(async () => {
      unwrap((await gql(CREATE_NOTIFICATION_CHANNEL, { i: { workspaceId, name, url, events } })).createNotificationChannel);
      setName("");
      setUrl("");
      await reload();
    });
  return (
    <>
      <div className="panel">
        <h2>Channels</h2>
        <FormError error={load.error} />
        {channels && channels.length === 0 && <p className="muted">No channels yet.</p>}
        <ul className="rows" data-testid="notification-channels">
          {channels?.map((c) => <ChannelItem key={c.id} channel={c} onChange={reload} />)}
        </ul>
      </div>
      <form className="panel" onSubmit={(e) => (e.preventDefault(), void create())}>
        <h2>Add a channel</h2>
        <p className="muted">
          Any <a href="https://github.com/caronc/apprise/wiki" target="_blank" rel="noreferrer noopener">Apprise URL</a>: a JSON
          webhook <code>json://host/path</code> (<code>jsons://</code> for https), <code>slack://…</code>, <code>discord://…</code>,{" "}
          <code>mailto://user:pass@host</code>, <code>ntfy://topic</code>, … The URL is stored encrypted and never shown again.
        </p>
        <div className="field-row">
          <label className="field">
            <span>Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} data-testid="channel-name" />
          </label>
          <label className="field field-grow">
            <span>URL</span>
            <input className="input" type="password" autoComplete="off" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="json://hooks.example.com/kandev" data-testid="channel-url" />
          </label>
        </div>
        <fieldset className="field">
          <legend>Tell it when</legend>
          {EVENTS.map((e) => (
            <label key={e.id} className="field-inline">
              <input
                type="checkbox"
                checked={events.includes(e.id)}
                onChange={(x) => setEvents((all) => (x.target.checked ? [...all, e.id] : all.filter((i) => i !== e.id)))}
                data-testid={`channel-event-${e.id}`}
              />
              <span>{e.label}</span>
            </label>
          ))}
        </fieldset>
        <button className="btn btn-primary" disabled={add.busy || !name || !url || !events.length} data-testid="add-channel">
          Add
        </button>
        <FormError error={add.error} testId="channel-error" />
      </form>
    </>
  );
}

function ChannelItem({ channel, onChange }: { channel: ChannelRow; onChange: () => Promise<unknown> }) {
  const action = useAction();
  const [tested, setTested] = useState<{ delivered: boolean; error?: string | null } | null>(null);
  const test = () =>
    action.run(async () => {
      setTested(null);
      setTested(unwrap((await gql(TEST_NOTIFICATION_CHANNEL, { id: channel.id })).testNotificationChannel));
      await onChange();
    });
  const toggle = () =>
    action.run(async () => {
      unwrap((await gql(UPDATE_NOTIFICATION_CHANNEL, { i: { channelId: channel.id, enabled: !channel.enabled } })).updateNotificationChannel);
      await onChange();
    });
  const remove = () =>
    window.confirm(`Delete the channel ${channel.name}?`) &&
    action.run(async () => {
      unwrap((await gql(DELETE_NOTIFICATION_CHANNEL, { id: channel.id })).deleteNotificationChannel);
      await onChange();
    });
  return (
    <li className="row row-wrap" data-testid="notification-channel" data-name={channel.name} data-status={channel.status}>
      <div className="row-main">
        <strong>{channel.name}</strong>{" "}
        <span className="muted small">
          {channel.service}
          {channel.target ? ` · ${channel.target}` : ""} · {channel.events.length} event(s){channel.enabled ? "" : " · off"}
        </span>
        <div className={`small channel-status channel-status-${channel.status.toLowerCase()}`} data-testid="channel-status">
          {STATUS[channel.status] ?? channel.status}
          {channel.lastDurationMs != null && ` (last attempt ${channel.lastDurationMs} ms)`}
          {channel.pendingDeliveries > 0 && ` · ${channel.pendingDeliveries} being retried`}
          {channel.failedDeliveries > 0 && ` · ${channel.failedDeliveries} given up`}
          {channel.lastError && <div className="error-text" data-testid="channel-last-error">{channel.lastError}</div>}
        </div>
        {tested && (
          <div className={tested.delivered ? "small ok-text" : "small error-text"} role="status" data-testid="channel-test-result">
            {tested.delivered ? "Test notification delivered." : `Not delivered: ${tested.error ?? "unknown reason"}`}
          </div>
        )}
      </div>
      <button type="button" className="btn btn-small" disabled={action.busy} onClick={() => void test()} data-testid="test-channel">
        {action.busy ? "Sending…" : "Send test"}
      </button>
      <button type="button" className="btn btn-small" disabled={action.busy} onClick={() => void toggle()} data-testid="toggle-channel">
        {channel.enabled ? "Turn off" : "Turn on"}
      </button>
      <button type="button" className="btn btn-small btn-danger" disabled={action.busy} onClick={() => void remove()} data-testid="delete-channel">
        Delete
      </button>
      <FormError error={action.error} />
    </li>
  );
}
