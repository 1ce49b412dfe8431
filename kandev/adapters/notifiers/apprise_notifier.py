"""The Notifier port over Apprise (https://github.com/caronc/apprise): one URL form for about a hundred services
(Slack, Discord, Teams, Telegram, ntfy, Gotify, Pushover, Mattermost, e-mail over SMTP, generic JSON/form/XML
webhooks, ...), maintained and released often. Each send instantiates the URL's one plugin and calls it directly
(no Apprise-level retries: the delivery job retries), with bounded socket timeouts, no redirects, in-memory
storage, and, for a non-admin's URL, every name it looks up pinned to what the outbound rule validated
(kandev.adapters.notifiers.pinning). A generic webhook (json://, form://, xml://) gets the notification's key as
an `Idempotency-Key` header, so a receiver can drop a repeat after a retry."""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import apprise

from kandev.adapters.notifiers.pinning import pinned
from kandev.domain.errors import ValidationError
from kandev.domain.outbound import OutboundPolicy
from kandev.domain.ports import Notification, NotificationFailed, NotificationTarget
from kandev.platform.log_redaction import remember_secrets
from kandev.platform.redaction import Redactor

# What a non-admin may use: services whose plugins send with `requests` or `smtplib` from the calling thread,
# so the pinned resolver sees every connection they make. An admin may use any Apprise URL.
OPEN_SCHEMES = frozenset(
    {
        "json", "jsons", "form", "forms", "xml", "xmls",
        "slack", "discord", "msteams", "tgram", "pover", "ntfy", "ntfys",
        "gotify", "gotifys", "mmost", "mmosts", "rocket", "rockets", "mailto", "mailtos",
    }
)  # fmt: skip
_WEBHOOKS = frozenset({"json", "jsons", "form", "forms", "xml", "xmls"})
_ASSET = apprise.AppriseAsset(
    app_id="Kandev", app_desc="Kandev", storage_mode="memory", allow_templates=False, secure_logging=True
)
_ASSET.http_redirects = False
_SECRETISH = re.compile(r"[^/:@?&=#]{6,}")


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def _secrets(url: str) -> list[str]:
    """The parts of a URL that may be tokens (user, password, path segments, query values), for redaction."""
    parts = urlsplit(url)
    found = [
        parts.username or "",
        parts.password or "",
        *parts.path.split("/"),
        *(v for _, v in parse_qsl(parts.query)),
    ]
    if parts.hostname and not ("." in parts.hostname or parts.hostname == "localhost"):
        found.append(parts.hostname)  # slack://T0K3N/...: the "host" is a token
    return [piece for piece in found if piece and _SECRETISH.fullmatch(piece)]


class AppriseNotifier:
    def __init__(self) -> None:
        logging.getLogger("apprise").setLevel(logging.WARNING)

    def _plugin(self, url: str, field: str) -> Any:
        remember_secrets([url, *_secrets(url)])
        plugin = apprise.Apprise.instantiate(url, asset=_ASSET, suppress_exceptions=True) if "://" in url else None
        if plugin is None:
            raise ValidationError(
                f"{field} is not a notification URL Apprise understands (e.g. json://host/path, slack://..., "
                "mailto://...)",
                field=field,
                reason="unknown_service",
            )
        return plugin

    def check(self, url: str, policy: OutboundPolicy | None, field: str) -> NotificationTarget:
        plugin = self._plugin(url, field)
        scheme = _scheme(url)
        target = _target(plugin)
        if policy is None:
            return NotificationTarget(scheme, target)
        if scheme not in OPEN_SCHEMES:
            raise ValidationError(
                f"{field}: only an admin may use the '{scheme}' service", field=field, reason="service_not_allowed"
            )
        with pinned(policy, field, probe=True) as pin:
            self._notify(plugin, Notification("Kandev", "check", "check"), 5.0)
        if pin.refusal is not None:
            raise pin.refusal
        if not pin.hosts:
            raise ValidationError(f"{field} does not name a service Kandev can reach", field=field, reason="no_host")
        return NotificationTarget(scheme, target or pin.hosts[0])

    def send(self, url: str, note: Notification, policy: OutboundPolicy | None, timeout: float) -> None:
        plugin = self._plugin(url, "url")
        if _scheme(url) in _WEBHOOKS and isinstance(getattr(plugin, "headers", None), dict):
            plugin.headers["Idempotency-Key"] = note.key
        redactor = Redactor([url, *_secrets(url)])
        if policy is None:
            error = self._notify(plugin, note, timeout)
        else:
            with pinned(policy, "url") as pin:
                error = self._notify(plugin, note, timeout)
            if pin.refusal is not None:
                raise NotificationFailed(pin.refusal.message)
        if error is not None:
            raise NotificationFailed(redactor.text(error))

    def _notify(self, plugin: Any, note: Notification, timeout: float) -> str | None:
        """None when sent; else the library's last warning (why), or a plain reason."""
        plugin.retry = 0
        plugin.socket_connect_timeout = min(timeout, 5.0)
        plugin.socket_read_timeout = timeout
        with apprise.LogCapture(level=logging.WARNING) as captured:
            try:
                sent = plugin.notify(body=note.body, title=note.title)
            except Exception as error:  # a plugin's bug must not end the job without a reason
                return f"the notification library failed: {type(error).__name__}"
        if sent:
            return None
        lines = [line.split(" - ", 2)[-1].strip() for line in captured.getvalue().splitlines() if line.strip()]
        return (lines[-1] if lines else "the service did not accept the notification")[:400]


def _target(plugin: Any) -> str:
    """The host a person recognises (hooks.slack.com is implied by slack://, so nothing then)."""
    host = getattr(plugin, "host", "") or ""
    return host if "." in host or host == "localhost" or ":" in host else ""
