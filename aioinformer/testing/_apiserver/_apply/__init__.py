"""Patches and server-side apply: JSON merge and JSON patch, strategic merge, managed fields."""
