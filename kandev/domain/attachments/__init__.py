"""Attachments: files uploaded once, referenced by id from a task's prompts, handed to its agent."""
