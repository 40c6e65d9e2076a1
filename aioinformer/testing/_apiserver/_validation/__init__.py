"""Validation of built-in objects and write options, with the real field errors and messages."""
