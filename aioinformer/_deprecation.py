"""Former names, kept for one release: each use warns with a :class:`DeprecationWarning`
naming its replacement.

Renamed methods stay as thin methods calling the new one after :func:`warn_renamed`; a renamed
keyword argument stays in the signature (``None`` by default) and goes through
:func:`renamed_argument`.
"""

from __future__ import annotations

import warnings
from typing import TypeVar

__all__ = ["renamed_argument", "warn_renamed"]

T = TypeVar("T")


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new``.

    :param stacklevel: as :func:`warnings.warn`'s; the default points at the caller of the
        function that calls this one (the user's line).
    """
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_argument(
    where: str,
    old: str,
    old_value: T | None,
    new: str,
    new_value: T,
    new_default: T,
    *,
    stacklevel: int = 4,
) -> T:
    """The value of a renamed keyword argument: ``new_value``, or the deprecated ``old_value``
    when that was given (with a warning).

    :param stacklevel: as :func:`warnings.warn`'s; the default points at the caller of the
        function that calls this one.
    :raises TypeError: when both were given (the new one differing from its default).
    """
    if old_value is None:
        return new_value
    if new_value != new_default:
        raise TypeError(f"{where}: give {new}= only ({old}= is its deprecated former name)")
    warn_renamed(f"{where}({old}=...)", f"{new}=", stacklevel=stacklevel)
    return old_value
