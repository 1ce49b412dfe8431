"""Browser tests: the built web client in headless Debian Chromium against a real `kandev serve`.

Chromium comes from Debian (`apt-get install chromium`), driven by Playwright for Python with
`executable_path`; nothing is downloaded. Without Chromium (or Playwright, or npm to build the client)
the tests skip with the reason; KANDEV_TEST_STRICT=1 (CI) turns that skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.factories import served_task
from tests.support.parallel import one_at_a_time, worker_suffix
from tests.support.serve import TEST_WORKERS
from tests.support.server import free_port

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
DIST = FRONTEND / "dist"
BUILD = ROOT / "build"
# Held while frontend/node_modules or frontend/dist is written: parallel test workers share them.
WEB_CLIENT_LOCK = BUILD / "web-client.lock"
# CI keeps these as artefacts (.ci/run prints where); KANDEV_SCREENSHOT_DIR puts them elsewhere.
SCREENSHOTS = Path(os.environ.get("KANDEV_SCREENSHOT_DIR") or BUILD / "screenshots")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Every wait in these tests is bounded by one of these.
UI_TIMEOUT_MS = 15_000
START_TIMEOUT_S = 60


def chromium_path() -> str | None:
    for candidate in (os.environ.get("KANDEV_TEST_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _dist_is_stale() -> bool:
    index = DIST / "index.html"
    if not index.exists():
        return True
    built = index.stat().st_mtime
    names = ("index.html", "package.json", "package-lock.json", "vite.config.ts", "codegen.ts")
    sources = [FRONTEND / name for name in names] + [ROOT / "schema.graphql"]
    sources += [p for p in (FRONTEND / "src").rglob("*") if p.is_file()]
    return any(p.exists() and p.stat().st_mtime > built for p in sources)


def run_npm(*args: str, cwd: Path = FRONTEND) -> subprocess.CompletedProcess[str]:
    """npm with `args` in `cwd` (bounded); skips the test when npm is not on PATH."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH (install Node.js 20+ and npm); the web client needs it")
    return subprocess.run([npm, *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def npm_output(done: subprocess.CompletedProcess[str]) -> str:
    return f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def install_web_dependencies() -> None:
    """`npm ci` when node_modules is missing or older than package-lock.json (as `make run` decides)."""
    with one_at_a_time(WEB_CLIENT_LOCK):
        _install_web_dependencies()


def _install_web_dependencies() -> None:
    installed = FRONTEND / "node_modules" / ".package-lock.json"
    lock = FRONTEND / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    done = run_npm("ci", "--no-audit", "--no-fund")
    if done.returncode != 0:
        raise AssertionError(f"`npm ci` failed:\n{npm_output(done)}")


def _build_web_client() -> None:
    _install_web_dependencies()
    done = run_npm("run", "build")
    if done.returncode != 0:
        raise AssertionError(f"`npm run build` failed:\n{npm_output(done)}")


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); browser tests need it")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install -e '.[test]')")
    return path


@pytest.fixture(scope="session")
def web_client(chromium: str) -> Path:
    """frontend/dist, built once when missing or older than its sources (by one parallel worker; the others wait)."""
    with one_at_a_time(WEB_CLIENT_LOCK):
        if _dist_is_stale():
            _build_web_client()
    assert (DIST / "index.html").exists()
    return DIST


@dataclass
class KandevServer:
    base: str
    workspace_id: str

    def gql(self, query: str, **variables: Any) -> dict[str, Any]:
        payload = {"query": query, "variables": variables}
        response = httpx.post(f"{self.base}/graphql", json=payload, timeout=15)
        body = response.json()
        assert "errors" not in body, body["errors"]
        return body["data"]

    def mutate(self, query: str, field: str, **variables: Any) -> dict[str, Any]:
        result = self.gql(query, **variables)[field]
        assert not result["__typename"].endswith("Error"), result
        return result

    def connect_github_app(
        self, token: str, app_id: str, private_key: str, webhook_secret: str, installation: str
    ) -> None:
        """The workspace connected to GitHub with `token`, the server's GitHub App set, and the app's installation
        routed to the workspace (as Settings → GitHub does)."""
        errors = "__typename ... on Error { code message }"
        self.mutate(
            f"mutation($i: ConnectGithubInput!) {{ connectGithub(input: $i) {{ {errors} }} }}",
            "connectGithub",
            i={"workspaceId": self.workspace_id, "token": token},
        )
        self.mutate(
            f"mutation($i: SetGithubAppInput!) {{ setGithubApp(input: $i) {{ {errors} }} }}",
            "setGithubApp",
            i={"appId": app_id, "privateKey": private_key, "webhookSecret": webhook_secret},
        )
        self.mutate(
            f"mutation($i: RouteGithubInstallationInput!) {{ routeGithubInstallation(input: $i) {{ {errors} }} }}",
            "routeGithubInstallation",
            i={"workspaceId": self.workspace_id, "installationId": installation},
        )

    def wait_for(self, query: str, check: Any, timeout: float = 20, **variables: Any) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            data = self.gql(query, **variables)
            if check(data):
                return data
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met in {timeout}s: {data}")
            time.sleep(0.1)


@contextmanager
def serve(log_name: str, **settings: str) -> Iterator[tuple[str, dict[str, str]]]:
    """`kandev serve` on the embedded default, on a free port, with its own data dir; yields the base
    URL and the environment it runs with (for `kandev token create` against the same data dir)."""
    port = free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="kandev-browser-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    # KANDEV_PORT too, so the worker hands agents the right MCP URL.
    env.update(KANDEV_DATA_DIR=str(data_dir), KANDEV_PORT=str(port), KANDEV_HOST="127.0.0.1", **settings)
    env.setdefault("KANDEV_WORKERS", TEST_WORKERS)  # one worker, unless a test is about the pool
    # The server's log stays in build/ after the run, for a failure's post-mortem.
    BUILD.mkdir(parents=True, exist_ok=True)
    log_path = BUILD / log_name.replace(".log", f"{worker_suffix()}.log")
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise AssertionError(f"kandev serve exited with {process.returncode}: {_tail(log_path)}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"kandev serve did not become healthy in time: {_tail(log_path)}")
            time.sleep(0.1)
        page = httpx.get(f"{base}/", headers={"Accept": "text/html"}, timeout=5)
        assert page.status_code == 200 and '<div id="root">' in page.text, "the web client is not served at /"
        yield base, env
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        log.close()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def kandev_server(web_client: Path) -> Iterator[KandevServer]:
    """One server for the session's browser tests; each test makes its own tasks."""
    with serve("browser-tests-serve.log") as (base, _env):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        yield KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])


def _tail(log_path: Path) -> str:
    try:
        return log_path.read_text(errors="replace")[-3000:]
    except OSError:
        return "(no log)"


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    # Module scope, not session: Playwright's sync API keeps an event loop running in this thread
    # while it is open, and the suite's async tests that follow need the thread free of it.
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=UI_TIMEOUT_MS)
    with sync_playwright() as playwright:
        # launch() gives every run a fresh, temporary user data dir.
        instance = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            yield instance
        finally:
            instance.close()


DESKTOP = {"width": 1280, "height": 800}


def _new_page(
    browser: Any, locale: str = "en-US", init_script: str | None = None, **context_options: Any
) -> Iterator[Any]:
    context = browser.new_context(locale=locale, **context_options)
    context.set_default_timeout(UI_TIMEOUT_MS)
    if init_script is not None:
        context.add_init_script(init_script)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A desktop-sized page in its own browser context (fresh storage)."""
    yield from _new_page(browser, viewport=DESKTOP)


@pytest.fixture
def german_page(browser: Any) -> Iterator[Any]:
    """A desktop-sized page whose browser asks for German."""
    yield from _new_page(browser, locale="de-DE", viewport=DESKTOP)


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    """A 375 px wide touch page, like a phone."""
    yield from _new_page(
        browser, viewport={"width": 375, "height": 740}, device_scale_factor=2, is_mobile=True, has_touch=True
    )


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def default_executor_after(kandev_server: KandevServer) -> Iterator[None]:
    """The new-task form remembers the person's last executor; the other browser tests on this server expect the
    workspace default, so a person's create without one restores it."""
    yield
    served_task(
        kandev_server.mutate, kandev_server.workspace_id, f"Back on the default executor {uuid.uuid4().hex[:6]}"
    )
