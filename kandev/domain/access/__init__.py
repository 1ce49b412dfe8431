"""Who may do what: users, personal access tokens, session tokens and the visibility scope.

Front door: `tokens.AccessTokenService`."""
