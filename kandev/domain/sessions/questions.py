"""The shape rules every question set follows, whoever it is asked of (operator or parent)."""

from __future__ import annotations

from typing import Any

from kandev.domain.errors import ValidationError

MAX_QUESTIONS = 4
MAX_OPTIONS = 8  # choices per question


def normalize_questions(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """1 to 4 questions, each with a prompt; ids default to q1, q2, … and must be unique."""
    if not 1 <= len(questions) <= MAX_QUESTIONS:
        raise ValidationError(f"ask 1 to {MAX_QUESTIONS} questions", field="questions")
    normalized = []
    for index, question in enumerate(questions, 1):
        if not str(question.get("prompt") or "").strip():
            raise ValidationError("every question needs a prompt", field="questions")
        normalized.append({**question, "id": question.get("id") or f"q{index}"})
    if len({q["id"] for q in normalized}) != len(normalized):
        raise ValidationError("question ids must be unique", field="questions")
    return normalized
