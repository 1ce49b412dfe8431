"""GitLab REST API access."""
