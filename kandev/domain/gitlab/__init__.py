"""GitLab: workspace connections and task merge requests."""
