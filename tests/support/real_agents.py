"""The real Claude Code and Codex ACP adapters pinned in tests/real_agents, installed from its lock file, and how each
is pointed at the local fake model API with its non-essential traffic off (nothing leaves loopback)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.parallel import one_at_a_time

AGENTS_DIR = Path(__file__).resolve().parents[1] / "real_agents"
NPM_TIMEOUT = 600


def installed_adapters() -> Path:
    """tests/real_agents/node_modules/.bin, installed from the lock file when missing or older than the lock (by
    one parallel test worker at a time)."""
    with one_at_a_time(AGENTS_DIR.parents[1] / "build" / "real-agents-npm.lock"):
        return _install_adapters()


def _install_adapters() -> Path:
    modules = AGENTS_DIR / "node_modules"
    stamp = modules / ".package-lock.json"
    if stamp.exists() and stamp.stat().st_mtime >= (AGENTS_DIR / "package-lock.json").stat().st_mtime:
        return modules / ".bin"
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the real ACP adapters can't be installed")
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=AGENTS_DIR,
        check=True,
        timeout=NPM_TIMEOUT,
        capture_output=True,
    )
    return modules / ".bin"


def claude_code_env(home: Path, model_api_url: str) -> dict[str, str]:
    """Claude Code's environment: its own HOME, the fake model API with a dummy key, nothing non-essential."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": model_api_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def codex_command(bins: Path, model_api_url: str) -> list[str]:
    """codex-acp with a model provider of its own at the fake's Responses API, asking before it writes."""
    provider = (
        f'model_providers.fake={{name="fake", base_url="{model_api_url}/v1", env_key="FAKE_OPENAI_KEY",'
        ' wire_api="responses", request_max_retries=0, stream_max_retries=0}'
    )
    settings = [provider, 'model_provider="fake"', 'model="gpt-5.3-codex"']
    settings += ['approval_policy="on-request"', 'sandbox_mode="read-only"']
    return [str(bins / "codex-acp"), *(arg for setting in settings for arg in ("-c", setting))]


def codex_env(home: Path) -> dict[str, str]:
    """Codex's environment: its own HOME and CODEX_HOME, and the dummy key its provider names."""
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "CODEX_HOME": str(home), "FAKE_OPENAI_KEY": "sk-fake-key"}
