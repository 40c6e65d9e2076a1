"""A Griffe extension for the API reference: the library's reST markup, rendered as Markdown.

The docstrings are written for Sphinx (field lists, roles, ``::`` blocks, ``#:`` comments);
mkdocstrings parses their field lists (``docstring_style: sphinx``) but renders the text as
Markdown. Before that, this extension rewrites, in every docstring of the package:

* roles (``:class:`~aioinformer.X```, ``:meth:`aclose```, ...) into *optional*
  cross-references: a link where the target is rendered somewhere in the site, plain code
  otherwise. Optional references never fail the strict build, so a module renamed in the
  library degrades a link to code instead of breaking the build;
* ``text::`` followed by an indented block into ``text:`` and a fenced block (Python when it
  parses as Python, text otherwise);
* ``#:`` comments above an attribute into that attribute's docstring (Sphinx autodoc's rule).

Only the site is affected: nothing here runs in the library or its tests.
"""

from __future__ import annotations

import ast
import html
import re
import textwrap
from typing import Any

from griffe import Alias, Docstring, Extension, Module, Object

_ROLE = re.compile(r":(?:py:)?(class|meth|func|attr|data|mod|exc|obj|const):`([^`]+)`")
_TITLED = re.compile(r"^(.*?)\s*<([^>]+)>$")


class SphinxMarkup(Extension):
    """Rewrites the reST markup of every docstring of a package once it is loaded."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        for obj in _walk(pkg):
            _attribute_comments(obj)
            if obj.docstring is not None:
                text = _literal_blocks(obj.docstring.value)
                obj.docstring.value = _ROLE.sub(lambda m, o=obj: _reference(m, o), text)


def _walk(obj: Object) -> list[Object]:
    found = [obj]
    for member in obj.members.values():
        if isinstance(member, Alias):
            continue
        found.extend(_walk(member))
    return found


def _reference(match: re.Match[str], obj: Object) -> str:
    role, text = match.group(1), match.group(2).strip()
    titled = _TITLED.match(text)
    if titled:
        title, target = titled.group(1), titled.group(2)
    else:
        target = text
        short = target.startswith("~")
        target = target.lstrip("~")
        title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        if role in ("func", "meth") and not title.endswith(")"):
            title += "()"
    path = _resolve(target.lstrip("~"), obj)
    return (
        f'<autoref identifier="{html.escape(path)}" optional>'
        f"<code>{html.escape(title)}</code></autoref>"
    )


def _resolve(target: str, obj: Object) -> str:
    """The full path ``target`` names from ``obj`` (as Sphinx would look it up), or
    ``target`` itself when nothing matches."""
    collection = obj.modules_collection
    candidates: list[str] = []
    if target.startswith("."):
        rest = target.lstrip(".")
        scope: Object | None = obj
        while scope is not None:
            candidates.append(f"{scope.path}.{rest}")
            scope = scope.parent
    else:
        head, _, tail = target.partition(".")
        scope = obj
        while scope is not None:
            try:
                resolved = scope.resolve(head)
            except Exception:  # griffe raises NameResolutionError (and others) for a miss
                resolved = None
            if resolved:
                candidates.append(f"{resolved}.{tail}" if tail else resolved)
                break
            scope = scope.parent
        candidates.append(target)
    for candidate in candidates:
        try:
            found = collection.get_member(candidate)
        except Exception:  # not a loaded object
            continue
        if found is not None:
            return candidate
    return candidates[-1] if candidates else target


def _literal_blocks(text: str) -> str:
    """``para::`` + an indented block → ``para:`` + a fenced block."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.rstrip()
        if not stripped.endswith("::"):
            out.append(line)
            i += 1
            continue
        base = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block: list[str] = []
        while j < len(lines) and (
            not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > base
        ):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        if not block:  # not a literal block after all
            out.append(line)
            i += 1
            continue
        head = stripped[:-2].rstrip()
        if head:
            out.append(head + ":" if not stripped[:-2].endswith(" ") else head)
        code = textwrap.dedent("\n".join(block))
        indent = " " * base
        out.extend(["", f"{indent}```{_language(code)}"])
        out.extend(indent + c if c else c for c in code.splitlines())
        out.extend([f"{indent}```", ""])
        i = j
    return "\n".join(out)


def _language(code: str) -> str:
    try:
        ast.parse(code)
    except SyntaxError:
        try:  # a fragment with await at the top level
            compile(code, "<docstring>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError:
            return "text"
    return "python"


def _attribute_comments(obj: Object) -> None:
    """Give an attribute without a docstring the ``#:`` comment lines right above it."""
    if obj.kind.value != "attribute" or obj.docstring is not None or obj.lineno is None:
        return
    try:
        lines = obj.lines_collection[obj.filepath]  # type: ignore[index]
    except (KeyError, TypeError):
        return
    comment: list[str] = []
    number = obj.lineno - 2  # the line above, 0-based
    while number >= 0 and lines[number].lstrip().startswith("#:"):
        comment.insert(0, lines[number].lstrip()[2:].removeprefix(" "))
        number -= 1
    if comment:
        obj.docstring = Docstring("\n".join(comment), parent=obj)
