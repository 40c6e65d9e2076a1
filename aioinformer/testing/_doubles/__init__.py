"""Test doubles on the client side: the fake clock and the in-memory lister-watchers."""
