"""Notifier adapters (kandev.domain.ports.Notifier)."""
