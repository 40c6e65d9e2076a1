"""What the fake keeps and answers: an object is its decoded JSON.

The fake's own name for it, so that the server shares no type with the client it tests
(the client's ``aioinformer.KubeObject`` happens to be the same ``dict``)."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["KubeObject"]

#: A Kubernetes object as decoded JSON: ``apiVersion``, ``kind``, ``metadata``, ...
KubeObject: TypeAlias = dict[str, Any]
