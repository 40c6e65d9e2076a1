"""The write options a real server checks, and ``fieldValidation``'s outcomes.

Ports of the behaviour of apimachinery's ``ValidateCreateOptions``/``ValidateUpdateOptions``/
``ValidatePatchOptions`` (``dryRun`` only ``All``; ``fieldValidation`` one of ``Ignore``,
``Warn``, ``Strict`` or empty; ``fieldManager`` at most 128 printable characters, required
for apply; ``force`` only for apply) and of apiserver's handlers (``fieldValidation``,
``transformDecodeError``, ``addStrictDecodingWarnings``, the patch handlers' strict errors):

* the directive defaults to ``Warn`` (kubectl sends ``Strict``; the Python clients nothing);
* ``Strict``: a create or update answers 400 ``<Kind> in version "<v>" cannot be handled as
  a <Kind>: strict decoding error: unknown field "spec.replica", …``; a JSON, merge or
  strategic patch answers 422 ``"" is invalid: patch: Invalid value: …: strict decoding
  error: …``; an apply answers 400 ``error strict decoding patch: …`` for duplicate keys;
* ``Warn``: one ``Warning: 299 - "unknown field \\"spec.replica\\""`` header per problem;
* ``Ignore``: nothing (unknown fields are dropped all the same).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._api._failure import StatusFailure
from ._fielderrors import (
    FieldError,
    forbidden,
    go_json,
    invalid,
    invalid_failure,
    not_supported,
    required,
    too_long,
)

__all__ = [
    "DIRECTIVES",
    "directive",
    "duplicate_fields",
    "go_format",
    "strict_outcome",
    "validate_options",
    "warning_header",
]

#: The accepted ``fieldValidation`` values, in the order the server lists them.
DIRECTIVES = ["", "Ignore", "Strict", "Warn"]


def directive(value: str | None) -> str:
    """The effective directive: ``Warn`` when the request names none."""
    return value or "Warn"


def validate_options(
    kind: str,
    *,
    dry_run: Sequence[str] = (),
    field_validation: str = "",
    field_manager: str = "",
    patch_type: str = "",
    force: bool | None = None,
) -> None:
    """``Validate{Create,Update,Patch}Options`` (``kind`` is ``CreateOptions``,
    ``UpdateOptions`` or ``PatchOptions``; ``patch_type`` ``json``/``merge``/``strategic``/
    ``apply`` for patches).

    :raises StatusFailure: 422 ``<kind>.meta.k8s.io "" is invalid: …``.
    """
    errors: list[FieldError] = []
    if kind == "PatchOptions":
        if patch_type == "apply":
            if not field_manager:
                errors.append(required("fieldManager", "is required for apply patch"))
        elif force is not None:
            errors.append(forbidden("force", "may not be specified for non-apply patch"))
    if len(field_manager) > 128:
        errors.append(too_long("fieldManager", 128))
    for i, ch in enumerate(field_manager):
        if not ch.isprintable():
            errors.append(
                invalid(
                    "fieldManager",
                    field_manager,
                    f"invalid character U+{ord(ch):04X} (at position {i})",
                )
            )
    if any(value != "All" for value in dry_run):
        errors.append(not_supported("dryRun", list(dry_run), ["All"]))
    if field_validation not in DIRECTIVES:
        errors.append(not_supported("fieldValidation", field_validation, DIRECTIVES))
    if errors:
        raise invalid_failure("meta.k8s.io", kind, "", errors)


class _Object(dict[str, Any]):
    """A decoded JSON object that keeps every key/value pair, repeated keys included."""

    entries: list[tuple[str, Any]]


def _pairs(items: list[tuple[str, Any]]) -> _Object:
    out = _Object(items)
    out.entries = items
    return out


def _repeated(value: Any, path: str, found: list[str]) -> None:
    if isinstance(value, _Object):
        seen: set[str] = set()
        for key, child in value.entries:
            where = f"{path}.{key}" if path else key
            if key in seen:
                found.append(f'duplicate field "{where}"')
            seen.add(key)
            _repeated(child, where, found)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _repeated(child, f"{path}[{i}]", found)


def duplicate_fields(raw: bytes | str) -> list[str]:
    """The ``duplicate field "a.b"`` errors of a JSON body, in document order (paths as
    sigs.k8s.io/json spells them: keys joined with ``.``, list items as ``[i]``). A body that
    is not JSON has none (its syntax error is reported elsewhere)."""
    try:
        document = json.loads(raw, object_pairs_hook=_pairs)
    except ValueError:
        return []
    found: list[str] = []
    _repeated(document, "", found)
    return found


def go_format(value: Any) -> str:
    """Go's ``%+v`` of a decoded JSON value (``map[a:1 b:[x y]]``), as the strategic-patch
    handler prints the patch in its strict-decoding error."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def strict_outcome(
    problems: Sequence[str],
    *,
    directive: str,
    operation: str,
    kind: str = "",
    version: str = "",
    patched: Any = None,
) -> list[str]:
    """What a request with strict-decoding ``problems`` gets: the warnings to send (``Warn``),
    nothing (``Ignore`` or no problems), or a raised failure (``Strict``).

    :param operation: ``create``/``update`` (a body), ``json``/``merge``/``strategic`` (a
        patch; ``patched`` is the patched object, or for ``strategic`` the patch) or
        ``apply``.
    :raises StatusFailure: as the real handler answers under ``Strict``.
    """
    if not problems or directive == "Ignore":
        return []
    if directive != "Strict":
        return list(dict.fromkeys(problems))
    text = "strict decoding error: " + ", ".join(problems)
    if operation in ("create", "update"):
        raise StatusFailure.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: {text}'
        )
    if operation == "apply":
        raise StatusFailure.bad_request(f"error strict decoding patch: {', '.join(problems)}")
    shown = go_format(patched) if operation == "strategic" else go_json(patched)
    raise invalid_failure("", "", "", [invalid("patch", shown, text)])


def warning_header(text: str) -> str:
    """One ``Warning`` header value as the server writes it: ``299 - "<text>"``, with ``"``
    and ``\\`` escaped."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
