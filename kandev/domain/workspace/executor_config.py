"""An executor profile's settings (its `config`), checked once where they are saved and read back typed where a
box is made: the Docker image and how to get it, limits, network, user, mounts, a prepare script, and the
capabilities a worker needs to run the profile. Every rule that refuses a value names the field, never echoes it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kandev.domain.errors import ValidationError
from kandev.domain.workspace.source_roots import confine_path
from kandev.models.enums import ExecutorKind
from kandev.platform.settings import Settings

# The capability each box kind needs of a worker, whatever else its profile lists.
KIND_CAPABILITY = {ExecutorKind.SANDBOX: "sandbox", ExecutorKind.DOCKER: "docker"}
BOX_KINDS = frozenset(KIND_CAPABILITY)
PULL_POLICIES = ("NEVER", "IF_MISSING")
NO_NETWORK, FULL_NETWORK = "NONE", "FULL"
# Where the box finds its own pieces: never an operator's mount target.
WORKSPACE, BRIDGE_DIR = "/workspace", "/run/kandev"
RESERVED_TARGETS = (WORKSPACE, BRIDGE_DIR, "/proc", "/sys", "/dev")

_CAPABILITY = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# A Docker network's name; `host` and `container:<id>` would share a network stack the box must not reach.
_NETWORK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_REFUSED_NETWORKS = ("host",)
_USER = re.compile(r"^\d{1,10}(:\d{1,10})?$")
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/:@-]{0,254}$")
_MAX_SCRIPT = 64 * 1024
_MAX_MOUNTS = 16
_MAX_ENV = 64


@dataclass(frozen=True, slots=True)
class Mount:
    """A host folder under the source roots, seen at `target` in the box."""

    source: str
    target: str
    read_only: bool = True


@dataclass(frozen=True, slots=True)
class BoxConfig:
    """A box executor profile's settings; defaults are the safe choice (no network, a non-root user)."""

    image: str = ""
    pull_policy: str = "NEVER"
    dockerfile: str = ""
    env: dict[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    cpus: float | None = None
    memory_mb: int | None = None
    pids: int | None = None
    network: str = NO_NETWORK
    user: str = ""
    prepare_script: str = ""
    capabilities: tuple[str, ...] = ()

    def stored(self) -> dict[str, Any]:
        """What the profile's `config` column holds."""
        data = asdict(self)
        data["mounts"] = [asdict(m) for m in self.mounts]
        data["capabilities"] = list(self.capabilities)
        return data


def read_config(kind: str, stored: Mapping[str, Any] | None) -> BoxConfig:
    """The stored config as typed settings, with the kind's own capability (checked when saved)."""
    data = dict(stored or {})
    mounts = tuple(Mount(**m) for m in data.pop("mounts", None) or [])
    capabilities = tuple(data.pop("capabilities", None) or ())
    known = {k: v for k, v in data.items() if k in BoxConfig.__dataclass_fields__}
    config = BoxConfig(**known, mounts=mounts, capabilities=capabilities)
    return _with_own_capability(kind, config)


def required_capabilities(kind: str, stored: Mapping[str, Any] | None) -> tuple[str, ...]:
    """What a worker must offer to run a profile of `kind` with this config (none for the plain kinds)."""
    if kind not in BOX_KINDS:
        return tuple(sorted({*(stored or {}).get("capabilities", ())}))
    return read_config(kind, stored).capabilities


def _with_own_capability(kind: str, config: BoxConfig) -> BoxConfig:
    own = KIND_CAPABILITY.get(ExecutorKind(kind))
    wanted = tuple(sorted({*config.capabilities, *([own] if own else [])}))
    if wanted == config.capabilities:
        return config
    return BoxConfig(**{**_fields(config), "capabilities": wanted})


def _fields(config: BoxConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in BoxConfig.__dataclass_fields__}


def check_config(settings: Settings, kind: ExecutorKind, given: Mapping[str, Any]) -> BoxConfig:
    """The settings `given` (snake_case names, as the command contract delivers them) checked for `kind`;
    ValidationError naming the first field that breaks a rule."""
    allowed = _ALLOWED.get(kind, frozenset({"capabilities"}))
    defaults = BoxConfig()
    for name, value in given.items():
        unset = value in (None, "", [], {}, ()) or value == getattr(defaults, name, None)
        if name not in allowed and not unset:
            raise ValidationError(f"{name} does not apply to a {kind.name} executor", field=name)
    config = BoxConfig(
        image=_image(given.get("image") or ""),
        pull_policy=_choice(given.get("pull_policy") or "NEVER", PULL_POLICIES, "pull_policy"),
        dockerfile=_text(given.get("dockerfile") or "", "dockerfile"),
        env=_env(given.get("env") or {}),
        mounts=tuple(_mount(settings, m, i) for i, m in enumerate(_bounded(given.get("mounts"), _MAX_MOUNTS))),
        cpus=_number(given.get("cpus"), "cpus", 0.01, 256.0),
        memory_mb=_whole(given.get("memory_mb"), "memory_mb", 16, 1 << 20),
        pids=_whole(given.get("pids"), "pids", 8, 1 << 22),
        network=_network(kind, given.get("network") or NO_NETWORK),
        user=_user(given.get("user") or ""),
        prepare_script=_text(given.get("prepare_script") or "", "prepare_script"),
        capabilities=tuple(_capability(c) for c in _bounded(given.get("capabilities"), 16)),
    )
    if kind == ExecutorKind.DOCKER and not (config.image or config.dockerfile):
        raise ValidationError("a DOCKER executor needs an image or a Dockerfile", field="image")
    return _with_own_capability(kind, config) if kind in BOX_KINDS else config


# Every setting a box profile has (a DOCKER profile takes them all), in the order the API lists them.
BOX_SETTINGS = (
    "image",
    "pull_policy",
    "dockerfile",
    "env",
    "mounts",
    "cpus",
    "memory_mb",
    "pids",
    "network",
    "user",
    "prepare_script",
    "capabilities",
)
_ALLOWED = {
    ExecutorKind.DOCKER: frozenset(BOX_SETTINGS),
    ExecutorKind.SANDBOX: frozenset({"network", "memory_mb", "pids", "capabilities"}),
}


def _bounded(value: Any, limit: int) -> list[Any]:
    items = list(value or [])
    if len(items) > limit:
        raise ValidationError(f"at most {limit} entries", field="config")
    return items


def _image(value: str) -> str:
    if value and not _IMAGE.match(value):
        raise ValidationError("image must be an image reference such as debian:bookworm", field="image")
    return value


def _choice(value: str, choices: tuple[str, ...], name: str) -> str:
    if value not in choices:
        raise ValidationError(f"{name} must be one of {', '.join(choices)}", field=name)
    return value


def _text(value: str, name: str) -> str:
    if len(value.encode()) > _MAX_SCRIPT or "\0" in value:
        raise ValidationError(f"{name} must be text of at most {_MAX_SCRIPT // 1024} KiB", field=name)
    return value


def _env(value: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(value, Mapping) or len(value) > _MAX_ENV:
        raise ValidationError(f"env must be an object of at most {_MAX_ENV} names", field="env")
    for name, text in value.items():
        if not _ENV_NAME.match(str(name)) or str(name).upper().startswith("KANDEV_"):
            raise ValidationError("env names are letters, digits and _, and never KANDEV_*", field="env")
        if not isinstance(text, str) or "\0" in text:
            raise ValidationError("env values must be text", field="env")
    return {str(k): v for k, v in value.items()}


def _mount(settings: Settings, value: Any, index: int) -> Mount:
    where = f"mounts.{index}"
    if not isinstance(value, Mapping) or not isinstance(value.get("source"), str):
        raise ValidationError("a mount needs a source and a target", field=where)
    source = str(confine_path(settings, value["source"], f"{where}.source"))
    target = str(value.get("target") or "")
    if not target.startswith("/") or ".." in target.split("/") or ":" in target or "\0" in target:
        raise ValidationError("a mount's target must be an absolute path in the box", field=f"{where}.target")
    if any(target == r or target.startswith(r + "/") for r in RESERVED_TARGETS) or target == "/":
        raise ValidationError("a mount's target can't be /, /workspace, /run/kandev or a system folder", field=where)
    return Mount(source, target.rstrip("/") or "/", bool(value.get("read_only", True)))


def _number(value: Any, name: str, low: float, high: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValidationError(f"{name} must be a number from {low:g} to {high:g}", field=name)
    return float(value)


def _whole(value: Any, name: str, low: int, high: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(f"{name} must be a whole number from {low} to {high}", field=name)
    return value


def _network(kind: ExecutorKind, value: str) -> str:
    if kind == ExecutorKind.SANDBOX:
        return _choice(value, (NO_NETWORK, FULL_NETWORK), "network")
    if value == NO_NETWORK:
        return value
    if not _NETWORK.match(value) or value.lower() in _REFUSED_NETWORKS:
        raise ValidationError(
            "network must be NONE or the name of a Docker network (never host: the box would share the host's)",
            field="network",
        )
    return value


def _user(value: str) -> str:
    if value and not _USER.match(value):
        raise ValidationError("user must be a numeric uid or uid:gid", field="user")
    return value


def _capability(value: Any) -> str:
    if not isinstance(value, str) or not _CAPABILITY.match(value):
        raise ValidationError("a capability is a short lower-case name such as docker or gpu", field="capabilities")
    return value
