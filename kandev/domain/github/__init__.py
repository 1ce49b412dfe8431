"""GitHub in the domain: workspace connections, the server's App, the PR poller and task pull-request links."""
