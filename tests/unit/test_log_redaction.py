"""Defence in depth: a secret value this process handled never reaches a log record in clear."""

from __future__ import annotations

import logging

import pytest

from kandev.platform.log_redaction import install_log_redaction, remember_secrets
from kandev.runtime.base import REDACTED

SECRET = "sk-handled-secret-4242"


def test_a_remembered_secret_is_scrubbed_from_messages_arguments_and_tracebacks(caplog: pytest.LogCaptureFixture):
    install_log_redaction()
    remember_secrets([SECRET, "abc"])  # too short to scrub without ruining every log line
    caplog.set_level(logging.DEBUG)
    log = logging.getLogger("some.library.anywhere")
    log.error("resolved env %s", {"API_KEY": SECRET})
    log.debug(f"inline {SECRET} and abc")
    try:
        raise RuntimeError(f"boom with {SECRET}")
    except RuntimeError:
        log.exception("failed")
    assert SECRET not in caplog.text
    assert caplog.text.count(REDACTED) == 3
    assert "and abc" in caplog.text
    assert all(SECRET not in r.getMessage() for r in caplog.records)


def test_installing_twice_adds_one_filter_to_the_root_handlers():
    handler = logging.StreamHandler()
    logging.getLogger().addHandler(handler)
    try:
        install_log_redaction()
        install_log_redaction()
        assert len(handler.filters) == 1
    finally:
        logging.getLogger().removeHandler(handler)
