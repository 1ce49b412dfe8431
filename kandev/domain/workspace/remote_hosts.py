"""Where a repository's network remote really leads, as git and ssh read it, and how a clone is held to the
address that was checked.

For an ssh remote, git itself says what it would hand to ssh (run with a recording ssh command, so no parser of
ours can disagree with git's decoding: `ssh://local%68ost/…`, `[user@host]:…`), and `ssh -G` says which host ssh
would connect to after its config's aliases. A host that is this machine (a loopback or unspecified address, an
address of one of its interfaces, `localhost`, its own name) makes the remote a local path in disguise. A pinned
clone connects to one checked address: curl through `http.curloptResolve` (the TLS name stays the URL's) with
redirects off, ssh through `HostName` (its known-hosts entry stays the host's)."""

from __future__ import annotations

import ipaddress
import os
import re
import shlex
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from kandev.domain.outbound import Resolver, Target, literal_address
from kandev.domain.workspace.git import git_argv, git_env

_HOST_NAME = re.compile(r"[A-Za-z0-9._-]{1,253}")
_SSH_FORMS = re.compile(r"(?i:ssh://)|[\w.-]+@[\w.-]+:")  # the ssh remotes the sources accept
# Records git's arguments to ssh (NUL-separated, as given) in the file KANDEV_SSH_ARGS names, then fails.
_RECORDING_SSH = "printf '%s\\0' >\"$KANDEV_SSH_ARGS\""


def ssh_target(url: str) -> tuple[str, str] | None:
    """The host argument git passes to ssh for `url`, and the path it asks the far side for; None when git
    would not use ssh. Runs git, which connects nowhere."""
    if not _SSH_FORMS.match(url):
        return None
    with tempfile.TemporaryDirectory(prefix="kandev-ssh-") as folder:
        record = Path(folder) / "args"
        env = {
            **git_env(),
            "GIT_SSH_COMMAND": _RECORDING_SSH,
            "GIT_SSH_VARIANT": "ssh",
            "KANDEV_SSH_ARGS": str(record),
        }
        try:
            subprocess.run(
                git_argv("ls-remote", url), env=env, cwd=folder, capture_output=True, timeout=30, check=False
            )
            recorded = record.read_bytes() if record.exists() else b""
        except (OSError, subprocess.TimeoutExpired):
            return None
    args = [arg.decode(errors="replace") for arg in recorded.split(b"\0")[:-1]]
    if len(args) < 2:
        return None
    try:
        path = shlex.split(args[-1])[-1]  # `git-upload-pack '<path>'`
    except (ValueError, IndexError):
        return None
    return args[-2], path


def ssh_host(host_argument: str) -> tuple[str, str]:
    """The host ssh connects to for `host_argument` ([user@]host, config aliases applied) and the name it
    checks the host key under."""
    host = host_argument.rsplit("@", 1)[-1].strip("[]")
    try:
        done = subprocess.run(
            ["ssh", "-G", "--", host_argument], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return host, host
    found = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    if done.returncode == 0 and found.get("hostname"):
        host = found["hostname"]
    return host, found.get("hostkeyalias") or host


def this_machine(host: str, resolver: Resolver) -> tuple[str, ...] | None:
    """The addresses of `host` when it is this machine, else None."""
    name = host.lower().rstrip(".").strip("[]")
    literal = literal_address(name.split("%", 1)[0])
    addresses = (str(literal),) if literal is not None else tuple(resolver(name, 22))
    own = {socket.gethostname().lower().rstrip("."), socket.getfqdn().lower().rstrip(".")}
    if name == "localhost" or name.endswith(".localhost") or name in own:
        return addresses or ("127.0.0.1",)
    return addresses if any(_local(address) for address in addresses) else None


def _local(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified:
        return True
    # An address of one of this machine's interfaces is one a socket can be bound to.
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
    except OSError:
        return False
    return True


def pinned(url: str, pin: Target, key_alias: str | None = None) -> tuple[list[str], dict[str, str]]:
    """The `-c` arguments and environment that hold one git network command on `url` to `pin`'s first address."""
    if not pin.addresses:
        return [], {}
    address = pin.addresses[0]
    if url[:8].lower() == "https://":
        written = urlsplit(url).hostname or pin.host
        shown = f"[{address}]" if ":" in address else address
        args = ["-c", "http.followRedirects=false"]
        for host in sorted({written, pin.host}):
            args += ["-c", f"http.curloptResolve={host}:{pin.port}:{shown}"]
        return args, {}
    alias = key_alias or pin.host
    if not _HOST_NAME.fullmatch(alias):
        alias = pin.host
    command = os.environ.get("GIT_SSH_COMMAND") or "ssh"
    pin_options = f"-o HostName={shlex.quote(address)} -o HostKeyAlias={shlex.quote(alias)}"
    return [], {"GIT_SSH_COMMAND": f"{command} {pin_options}"}
