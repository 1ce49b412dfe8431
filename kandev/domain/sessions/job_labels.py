"""What the RQ dashboard shows for a turn job: its session, task and title, safe to put in a page."""

from __future__ import annotations

import re

from kandev.platform.log_redaction import scrub

TITLE_CHARS = 120
# The RQ dashboard puts descriptions into its pages unescaped: a task title must not become markup there.
_LOOKALIKES = str.maketrans({"<": "‹", ">": "›", "&": "+", '"': "”", "'": "’", "`": "’"})
_SPACES = re.compile(r"[\s\x00-\x1f\x7f]+")


def job_title(title: str) -> str:
    """A task title fit for a job description: secrets this process knows redacted, no markup, one bounded line."""
    clean = _SPACES.sub(" ", scrub(title).translate(_LOOKALIKES)).strip()
    return clean if len(clean) <= TITLE_CHARS else clean[: TITLE_CHARS - 1] + "…"


def describe_turn(session_id: str, task_id: str, title: str) -> str:
    """`turn session=… task=… «title»`."""
    return f"turn session={session_id} task={task_id} «{job_title(title)}»"
