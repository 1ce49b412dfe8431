"""Agent runtime: launch an agent, prompt it, stream its updates, cancel and close it.

The parts live in their modules (`base` for the interface, `acp_adapter` for ACP, `scripted` for the
built-in agent). Importing the package imports none of them: the scripted agent, started for every
turn, loads only what it uses.
"""
