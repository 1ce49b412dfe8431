"""Outgoing notifications: a workspace's channels (where) and the deliveries owed to them (what, once each)."""
