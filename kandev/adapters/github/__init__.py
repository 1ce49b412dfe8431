"""GitHub: the REST client (an outside service reached over HTTP) and the value types it answers with."""
