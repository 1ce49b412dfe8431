"""Runtime value types: redaction and the agent-exit error text."""

from __future__ import annotations

from kandev.runtime.base import REDACTED, AgentProcessExited, Redactor


def test_redactor_replaces_every_secret_longest_first() -> None:
    redactor = Redactor(["abc", "abcdef", ""])
    assert redactor.text("x abcdef y abc") == f"x {REDACTED} y {REDACTED}"


def test_redactor_walks_nested_data() -> None:
    redactor = Redactor(["tok"])
    data = {"a": ["tok", {"b": "my tok"}], "n": 3, "tok": None}
    assert redactor.data(data) == {"a": [REDACTED, {"b": f"my {REDACTED}"}], "n": 3, REDACTED: None}


def test_redactor_without_secrets_returns_data_unchanged() -> None:
    data = {"a": "b"}
    assert Redactor([]).data(data) is data


def test_exit_error_names_status_and_stderr_tail() -> None:
    error = AgentProcessExited(3, ["line one", "line two"])
    assert "exited with status 3" in str(error)
    assert str(error).endswith("line one\nline two")


def test_exit_error_names_the_killing_signal() -> None:
    assert "killed by signal 9" in str(AgentProcessExited(-9, []))
