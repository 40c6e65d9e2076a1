"""Test doubles on the client side: the fake clock, the in-memory source of objects and the
scripted lister-watcher."""
