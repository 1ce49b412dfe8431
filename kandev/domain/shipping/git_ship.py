"""Git for shipping a task's changes, never running anything the agent's worktree or the repository brings along.

- In the worktree (commit, update from the base): git is told where everything is and runs as the agent's identity
  when agents have one (kandev.domain.changes.git_reader), and every program a config or attribute could name is
  neutralised: hooks, fsmonitor, pager, editor, filter and merge drivers, external diff and textconv, credential
  helpers, askpass and signing (`commit.gpgSign`, `gpg.program`).
- Against the repository and the network (push, fetch, a local merge): from a throw-away git dir of the server's
  whose object store is the repository's own, so no config of the repository's or the agent's is read (no remote,
  `insteadOf`, push URL, helper or `core.sshCommand` of theirs), and the credential reaches that one git process
  through the one-call helper (kandev.domain.workspace.git_credentials): never argv, a URL, a file or a log.

Blocking: callers run it in a thread."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from kandev.domain.changes.diffs import ChangeScope
from kandev.domain.changes.git_reader import GitPlace, GitReadError, run, run_result, with_filters_emptied
from kandev.domain.changes.reading import Checkout, find_base, snapshot
from kandev.domain.errors import ConflictError, UnprocessableError
from kandev.domain.ports import GitCredential
from kandev.domain.workspace import git_credentials as creds
from kandev.domain.workspace.git import HARDENING

# What a worktree's config may not decide while Kandev commits, merges or rebases in it.
_WORKTREE_CONFIG = {
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "gpg.program": "/nonexistent",
    "gpg.ssh.program": "/nonexistent",
    "gpg.x509.program": "/nonexistent",
    "core.editor": ":",
    "sequence.editor": ":",
    "core.askPass": "",
    "core.sshCommand": "/nonexistent",
    "commit.template": "",
    "commit.verbose": "false",
    "commit.cleanup": "whitespace",
    "core.commentChar": "#",
    "merge.verifySignatures": "false",
    "merge.autoStash": "false",
    "merge.stat": "false",
    "merge.renormalize": "false",
    "rebase.autoStash": "false",
    "rebase.updateRefs": "false",
    "rebase.stat": "false",
    "rebase.instructionFormat": "",
    "rerere.enabled": "false",
    "i18n.commitEncoding": "UTF-8",
    "user.useConfigOnly": "false",
}
# Network git: what a helper, a prompt or an ssh of anyone else's choosing could otherwise do.
_NETWORK_CONFIG = (
    "-c",
    "core.askPass=",
    "-c",
    "core.sshCommand=ssh -o BatchMode=yes",
    "-c",
    "http.followRedirects=false",
    "-c",
    "push.gpgSign=false",
    "-c",
    "transfer.fsckObjects=false",
)
NETWORK_TIMEOUT = 120.0
MAX_MESSAGE = 20_000


@dataclass(frozen=True)
class GitIdentity:
    """Who a commit is by: a person's name and email from their account settings."""

    name: str
    email: str


@dataclass(frozen=True)
class UpdateOutcome:
    """UP_TO_DATE, UPDATED, or CONFLICTS (the files git could not merge are left UNMERGED in the worktree)."""

    status: str
    head: str | None
    conflicts: list[str]


@dataclass(frozen=True)
class PushOutcome:
    sha: str
    branch: str
    # False when the remote already had exactly this commit.
    changed: bool


def ship_place(place: GitPlace, who: GitIdentity | None = None) -> GitPlace:
    """The place with every filter driver emptied, every merge driver its config names made to fail (git then
    leaves the file in conflict, running nothing of theirs), the settings above fixed and `who` as the author."""
    prepared = with_filters_emptied(place)
    listed = run(prepared, "config", "-z", "--name-only", "--get-regexp", r"^merge\..*\.driver$", check=False)
    drivers = {name for name in listed.decode("utf-8", "replace").split("\0") if name.endswith(".driver")}
    config = {**prepared.filters, **{name: "false" for name in sorted(drivers)}, **_WORKTREE_CONFIG}
    if who is not None:
        config.update({"user.name": who.name, "user.email": who.email})
    return replace(prepared, filters=config)


def _checkout(place: GitPlace, base_branch: str) -> Checkout:
    return Checkout(place, base_branch)


def uncommitted_paths(place: GitPlace, base_branch: str) -> list[str]:
    """The files with uncommitted changes (untracked ones too), by path."""
    found = snapshot(_checkout(place, base_branch), ChangeScope.UNCOMMITTED, history=False)
    return sorted({name for f in found.files for name in (f.path, f.old_path) if name})


def unmerged_paths(place: GitPlace) -> list[str]:
    listed = run(place, "diff", "--no-ext-diff", "--name-only", "-z", "--diff-filter=U", check=False)
    return sorted(p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p)


def in_progress(place: GitPlace) -> str | None:
    """`merge` or `rebase` when one was left in the worktree (with its conflicts), else None."""
    git_dir = Path(place.git_dir)
    if (git_dir / "MERGE_HEAD").exists():
        return "merge"
    if (git_dir / "rebase-merge").exists() or (git_dir / "rebase-apply").exists():
        return "rebase"
    return None


def head_of(place: GitPlace) -> str | None:
    code, out, _ = run_result(place, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    return out.decode().strip() or None if code == 0 else None


def commit(place: GitPlace, base_branch: str, message: str, paths: list[str] | None, amend: bool) -> str:
    """Commit the worktree's changes (only `paths` when given) on its branch with `message`; the new head.
    ConflictError (nothing_to_commit) when there is nothing, (in_progress) while a merge or rebase waits."""
    if (pending := in_progress(place)) is not None:
        raise ConflictError(
            f"a {pending} from the base is waiting in the worktree with conflicts: resolve them first",
            reason="in_progress",
        )
    changed = uncommitted_paths(place, base_branch)
    wanted = changed if paths is None else [p for p in paths if p in changed]
    if paths is not None and len(wanted) != len(set(paths)):
        missing = sorted(set(paths) - set(changed))
        raise ConflictError(f"{missing[0]} has no uncommitted change", reason="nothing_to_commit", path=missing[0])
    if not wanted and not amend:
        raise ConflictError("there is nothing to commit", reason="nothing_to_commit")
    if amend:
        found = find_base(_checkout(place, base_branch))
        if found.head is None or found.head == found.base:
            raise ConflictError("the task's branch has no commit of its own to amend", reason="nothing_to_amend")
    try:
        if wanted:
            run(place, "--literal-pathspecs", "add", "-A", "--", *wanted, timeout=120)
        args = ["commit", "--no-verify", "--no-gpg-sign", "--cleanup=whitespace", "-F", "-"]
        if amend:
            args.append("--amend")
        if paths is not None:
            args += ["--only", "--", *wanted]
        code, _, err = run_result(place, "--literal-pathspecs", *args, stdin=message.encode(), timeout=120)
    except GitReadError as error:
        raise UnprocessableError(f"git could not commit: {error}") from None
    if code != 0:
        raise UnprocessableError(f"git could not commit: {_first_line(err)}")
    head = head_of(place)
    assert head is not None
    return head


def update(place: GitPlace, onto: str, onto_name: str, strategy: str) -> UpdateOutcome:
    """Bring the branch up to `onto` (the base's commit) by a merge or a rebase; conflicts are left in the
    worktree as UNMERGED files for someone to resolve (the branch itself does not move until they are)."""
    if (pending := in_progress(place)) is not None:
        raise ConflictError(
            f"a {pending} from the base is already waiting with conflicts: resolve them (or ask the agent to)",
            reason="in_progress",
        )
    head = head_of(place)
    if head is None:
        raise ConflictError("the task's branch has no commit yet", reason="nothing_to_update")
    if run_result(place, "merge-base", "--is-ancestor", onto, head)[0] == 0:
        return UpdateOutcome("UP_TO_DATE", head, [])
    if run(place, "status", "--porcelain", "-uno", "--ignore-submodules=dirty", check=False).strip():
        raise ConflictError(
            "the worktree has uncommitted changes: commit or discard them before updating the branch",
            reason="uncommitted_changes",
        )
    if strategy == "REBASE":
        args = ["rebase", "--no-autostash", "--no-stat", "--no-verify", onto]
    else:
        args = [
            "merge",
            "--no-ff",
            "--no-stat",
            "--no-verify",
            "--no-edit",
            "-m",
            f"Merge {onto_name} into the task's branch",
            onto,
        ]
    code, _, err = run_result(place, *args, timeout=300)
    if code == 0:
        return UpdateOutcome("UPDATED", head_of(place), [])
    conflicts = unmerged_paths(place)
    if conflicts:
        return UpdateOutcome("CONFLICTS", head, conflicts)
    if in_progress(place) == "rebase":
        run_result(place, "rebase", "--abort")
    raise UnprocessableError(f"git could not update the branch: {_first_line(err)}")


def _first_line(err: bytes) -> str:
    lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    return creds.redact(lines[0][:300]) if lines else "no reason given"


# --- the repository and the network ---------------------------------------------------------------------


@contextmanager
def scratch_git_dir(common_dir: str) -> Iterator[dict[str, str]]:
    """The environment of a git process that works on the repository's objects from a git dir of the server's
    own: nothing of the repository's config (nor any system or global one) is read."""
    folder = tempfile.mkdtemp(prefix="kandev-ship-")
    try:
        os.makedirs(os.path.join(folder, "refs"))
        Path(folder, "HEAD").write_text("ref: refs/heads/kandev-ship\n")
        Path(folder, "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/nonexistent"),
            "LC_ALL": "C",
            "GIT_DIR": folder,
            "GIT_OBJECT_DIRECTORY": os.path.join(common_dir, "objects"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
        }
        if os.environ.get("GIT_SSL_CAINFO"):  # a deployment's (or a test's) own certificate authority
            env["GIT_SSL_CAINFO"] = os.environ["GIT_SSL_CAINFO"]
        yield env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _network_git(
    env: dict[str, str], *args: str, url: str, credential: GitCredential | None, timeout: float = NETWORK_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    origin = creds.origin_of(url)
    helper = creds.command_args(credential, [origin] if origin else []) if credential else ["-c", "credential.helper="]
    full_env = {**env, **(credential.env() if credential and origin else {})}
    try:
        return subprocess.run(
            ["git", *HARDENING, *_NETWORK_CONFIG, *helper, *args],
            cwd="/",
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UnprocessableError(f"git {args[0]} did not finish in {timeout:g} s", reason="unreachable") from None


def remote_head(common_dir: str, url: str, branch: str, credential: GitCredential | None) -> str | None:
    """The remote branch's commit now, or None when the remote has no such branch."""
    with scratch_git_dir(common_dir) as env:
        done = _network_git(env, "ls-remote", "--", url, f"refs/heads/{branch}", url=url, credential=credential)
    if done.returncode != 0:
        raise _network_refusal("read the remote", done.stderr, credential)
    for line in done.stdout.splitlines():
        sha, _, ref = line.partition("\t")
        if ref == f"refs/heads/{branch}":
            return sha
    return None


def fetch_branch(common_dir: str, url: str, branch: str, credential: GitCredential | None) -> str | None:
    """Fetch the remote branch's commit into the repository's objects; its sha (None: no such branch)."""
    with scratch_git_dir(common_dir) as env:
        done = _network_git(
            env,
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--",
            url,
            f"+refs/heads/{branch}:refs/kandev/fetched",
            url=url,
            credential=credential,
        )
        if done.returncode != 0:
            if "couldn't find remote ref" in done.stderr.lower():
                return None
            raise _network_refusal("fetch from the remote", done.stderr, credential)
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "refs/kandev/fetched"],
            cwd="/",
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    return found.stdout.strip() or None


def push(
    common_dir: str,
    url: str,
    sha: str,
    branch: str,
    credential: GitCredential | None,
    lease: str | None = None,
) -> PushOutcome:
    """Push the commit `sha` to `branch` of the remote; with `lease` (the remote commit expected, "" for none),
    a forced push that only happens when the remote still has exactly that."""
    args = ["push", "--porcelain", "--no-verify"]
    if lease is not None:
        args.append(f"--force-with-lease=refs/heads/{branch}:{lease}")
    with scratch_git_dir(common_dir) as env:
        done = _network_git(env, *args, "--", url, f"{sha}:refs/heads/{branch}", url=url, credential=credential)
    flags = [line.split("\t", 1)[0] for line in done.stdout.splitlines() if "\t" in line]
    if done.returncode == 0:
        return PushOutcome(sha, branch, changed="=" not in flags)
    raise _push_refusal(done.stdout + "\n" + done.stderr, credential)


def _push_refusal(output: str, credential: GitCredential | None) -> UnprocessableError:
    text = output.lower()
    if "stale info" in text:
        return UnprocessableError(
            "the remote branch changed since Kandev last pushed it: the forced push was not made (update the branch "
            "first)",
            reason="stale_lease",
        )
    if "non-fast-forward" in text or "fetch first" in text:
        return UnprocessableError(
            "the remote branch has commits the task's branch does not: update the branch first, or push with "
            "force-with-lease",
            reason="push_rejected",
        )
    found = re.search(r"\[remote rejected\] \(([^)\n]{0,200})\)", output)
    if found:
        return UnprocessableError(
            f"the remote refused the push: {creds.redact(found[1], credential)}", reason="push_rejected"
        )
    return _network_refusal("push", output, credential)


def _network_refusal(action: str, stderr: str, credential: GitCredential | None) -> UnprocessableError:
    text = stderr.lower()
    if any(word in text for word in ("authentication failed", "could not read username", "403", "401", "permission")):
        return UnprocessableError(f"the remote refused the credential, so git could not {action}", reason="auth")
    lines = [line for line in stderr.splitlines() if line.strip()]
    detail = creds.redact(lines[-1][:300], credential) if lines else "no reason given"
    return UnprocessableError(f"git could not {action}: {detail}", reason="unreachable")


def merge_commit(common_dir: str, base: str, head: str, message: str, who: GitIdentity) -> str | None:
    """A commit merging `head` into `base` (`head` itself when `base` is behind it), made in the repository's
    objects; None when the two conflict. Moves no branch."""
    with scratch_git_dir(common_dir) as env:

        def git(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["git", *HARDENING, *args],
                cwd="/",
                env={**env, **_author_env(who)},
                input=stdin,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )

        if git("merge-base", "--is-ancestor", base, head).returncode == 0:
            return head
        tree = git("merge-tree", "--write-tree", "--no-messages", base, head)
        if tree.returncode != 0:
            return None
        made = git("commit-tree", "-p", base, "-p", head, "-F", "-", tree.stdout.split()[0], stdin=message)
        if made.returncode != 0:
            raise UnprocessableError(f"git could not make the merge commit: {made.stderr.strip()[:300]}")
        return made.stdout.strip()


def _author_env(who: GitIdentity) -> dict[str, str]:
    return {
        "GIT_AUTHOR_NAME": who.name,
        "GIT_AUTHOR_EMAIL": who.email,
        "GIT_COMMITTER_NAME": who.name,
        "GIT_COMMITTER_EMAIL": who.email,
    }


def _in_repository(common_dir: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A ref command on the repository itself (its config read, but these commands run nothing it names)."""
    with scratch_git_dir(common_dir) as env:
        return subprocess.run(
            ["git", *HARDENING, *args],
            cwd="/",
            env={**env, "GIT_DIR": common_dir},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def set_ref(common_dir: str, ref: str, sha: str, expected: str | None = None) -> bool:
    """Point `ref` of the repository at `sha` (only if it is still at `expected`, when given)."""
    return (
        _in_repository(common_dir, "update-ref", ref, sha, *([expected] if expected is not None else [])).returncode
        == 0
    )


def branch_head(common_dir: str, branch: str) -> str | None:
    """The commit a branch of the repository is at, or None."""
    done = _in_repository(
        common_dir, "rev-parse", "--verify", "--quiet", "--end-of-options", f"refs/heads/{branch}^{{commit}}"
    )
    return done.stdout.strip() or None


def branch_checked_out(common_dir: str, branch: str) -> bool:
    """Whether a working tree of the repository (its own, or one of its worktrees) has `branch` checked out."""
    # The repository's own working tree (a `.git` folder's parent; a bare repository has none) and its worktrees.
    heads = [Path(common_dir, "HEAD")] if Path(common_dir).name == ".git" else []
    worktrees = Path(common_dir, "worktrees")
    if worktrees.is_dir():
        heads += [entry / "HEAD" for entry in worktrees.iterdir() if entry.is_dir() and not entry.is_symlink()]
    wanted = f"ref: refs/heads/{branch}"
    for head in heads:
        try:
            if head.read_text(errors="replace").strip() == wanted:
                return True
        except OSError:
            continue
    return False
