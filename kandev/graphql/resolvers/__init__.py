"""Thin GraphQL adapters: convert input, call one service, convert output."""
