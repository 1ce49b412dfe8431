"""Implementations of the domain's Executor port (kandev.domain.ports.Executor): plain processes, bubblewrap
sandboxes and Docker containers, registered at composition (kandev.wiring)."""
