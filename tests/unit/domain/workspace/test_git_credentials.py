"""The git credential helper: the token reaches git only through the environment of the process that needs
it; config, command lines and error texts never carry it."""

from __future__ import annotations

import os
import subprocess

from kandev.domain.ports import GitCredential, env_name
from kandev.domain.workspace.git_credentials import command_args, config_entries, origin_of, redact

TOKEN = "tok-5e0b2c7d-credential"


def test_the_helper_answers_get_with_the_token_from_its_environment_only():
    credential = GitCredential("github.com", "x-access-token", TOKEN)
    [(reset_key, reset), (key, value)] = config_entries(credential, ["https://github.com"])
    assert reset_key == key == "credential.https://github.com.helper" and reset == ""
    assert TOKEN not in value and TOKEN not in " ".join(command_args(credential, ["https://github.com"]))
    script = value.removeprefix("!") + ' "$@"'  # how git runs a `!` helper: `sh -c '<helper> "$@"' <helper> get`
    env = {"PATH": os.environ["PATH"], env_name("github.com"): TOKEN}
    answered = subprocess.run(["sh", "-c", script, "helper", "get"], env=env, capture_output=True, text=True)
    assert answered.stdout == f"username=x-access-token\npassword={TOKEN}\n"
    # `store` and `erase` (git telling helpers about a credential) print nothing.
    stored = subprocess.run(["sh", "-c", script, "helper", "store"], env=env, capture_output=True, text=True)
    assert stored.stdout == ""


def test_the_helper_is_scoped_to_each_https_origin_of_the_remotes_and_resets_other_helpers_first():
    credential = GitCredential("127.0.0.1", "x-access-token", TOKEN)
    args = command_args(credential, ["https://127.0.0.1:8443"])
    assert args[:2] == ["-c", "credential.helper="]
    assert origin_of("https://user:pw@127.0.0.1:8443/acme/app.git") == "https://127.0.0.1:8443"
    assert origin_of("http://127.0.0.1/acme/app.git") is None  # a token never goes over plain http
    assert origin_of("/srv/repos/app.git") is None
    assert command_args(None, ["https://127.0.0.1:8443"]) == []


def test_git_output_is_redacted_of_the_token_and_of_credentials_in_urls():
    credential = GitCredential("github.com", "x-access-token", TOKEN)
    text = f"fatal: unable to access 'https://x-access-token:{TOKEN}@github.com/acme/app.git/': 403 {TOKEN}"
    shown = redact(text, credential)
    assert TOKEN not in shown and "x-access-token:" not in shown and "github.com/acme/app.git" in shown
    assert TOKEN not in repr(credential)
