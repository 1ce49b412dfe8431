"""Kandev: orchestrate AI coding agents as tasks."""

__version__ = "0.1.0"
