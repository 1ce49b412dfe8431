"""Agent sessions and their turns, transcripts and prompts, and what a session waits on (questions,
permissions, parent questions).

Front door: `service.SessionService`."""
