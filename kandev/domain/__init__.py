"""Domain services: every rule, state machine and authorization check lives here."""
