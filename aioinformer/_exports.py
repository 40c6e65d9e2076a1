"""How the public namespaces present what they re-export (as trio and httpx do).

Classes and functions live in private modules (``aioinformer._informer._informer``, ...);
each public namespace re-exports some of them and calls :func:`publish`, so that reprs, tracebacks
and documentation name them where users import them: ``aioinformer.SharedIndexInformer``, not
``aioinformer._informer._informer.SharedIndexInformer``.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping

__all__ = ["publish"]


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def publish(namespace: str, names: Iterable[str], scope: Mapping[str, object]) -> None:
    """Set ``__module__`` of every class and function named in ``names`` that comes from a
    private module of this package to ``namespace`` (the module re-exporting it)."""
    for name in names:
        obj = scope[name]
        if not isinstance(obj, type | types.FunctionType):
            continue  # constants, type aliases
        module = obj.__module__
        if module.startswith("aioinformer.") and _is_private(module):
            obj.__module__ = namespace
