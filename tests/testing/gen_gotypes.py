"""Regenerate ``aioinformer/testing/_gotypes.json``: the Go encoding facts of the API types.

For every type of the served groups that the OpenAPI schemas define, the JSON records each
field's Go type (as ``reflect`` prints it: ``v1.Container``, ``[]v1.Container``,
``map[string]string``, ``[]uint8``) and how ``encoding/json`` writes it, as flags: the shape
(``s`` scalar, ``S`` plain struct, ``l`` slice, ``m`` map, ``t`` time, ``q`` int-or-string or
quantity, ``r`` raw extension) and ``p`` (pointer), ``o`` (``omitempty``), ``z``
(``omitzero``). The facts come from the ``types.go`` files of checkouts of kubernetes/api and
kubernetes/apimachinery (the tag matching the served release)::

    python tests/testing/gen_gotypes.py API_CHECKOUT APIMACHINERY_CHECKOUT > _gotypes.json

Not a test; kept with the tests because only maintainers run it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from aioinformer.testing._apiserver._schema._published import schemas

GROUPS = [
    ("core", "v1"),
    ("apps", "v1"),
    ("batch", "v1"),
    ("autoscaling", "v1"),
    ("autoscaling", "v2"),
    ("networking", "v1"),
    ("policy", "v1"),
    ("rbac", "v1"),
    ("coordination", "v1"),
    ("discovery", "v1"),
    ("events", "v1"),
    ("storage", "v1"),
    ("scheduling", "v1"),
    ("node", "v1"),
    ("certificates", "v1"),
]
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
ALIASES = {
    "metav1": META,
    "v1": "io.k8s.api.core.v1",
    "corev1": "io.k8s.api.core.v1",
    "apiv1": "io.k8s.api.core.v1",
}
SPECIAL = {"intstr.IntOrString", "resource.Quantity", "runtime.RawExtension", "types.UID"}
STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
NAMED = re.compile(r"^type (\w+) ([^\s{=]+)\s*$", re.M)
FIELD = re.compile(r"^\t(\w+)\s+([^\s`]+)\s+`([^`]*)`")
EMBEDDED = re.compile(r"^\t([\w.*]+)\s+`([^`]*)`")

Field = tuple[str, str, bool, bool, bool]


class Package:
    """The structs and named types of one Go package."""

    def __init__(self, name: str, directory: Path) -> None:
        self.name = name
        self.structs: dict[str, list[Field]] = {}
        self.named: dict[str, str] = {}
        for path in sorted(directory.glob("*.go")):
            if path.name.endswith("_test.go") or "generated" in path.name:
                continue
            source = path.read_text()
            for match in STRUCT.finditer(source):
                self.structs[match[1]] = list(_fields(match[2]))
            self.named.update(NAMED.findall(source))


def _fields(body: str) -> list[Field]:
    fields = []
    for line in body.splitlines():
        match = FIELD.match(line)
        if match:
            go_type, tags = match[2], match[3]
        else:
            embedded = EMBEDDED.match(line)
            if embedded is None:
                continue
            go_type, tags = embedded[1], embedded[2]
        json_tag = re.search(r'json:"([^"]*)"', tags)
        if json_tag is None:
            continue
        parts = json_tag[1].split(",")
        inline = "inline" in parts or parts[0] == ""
        fields.append((parts[0], go_type, "omitempty" in parts, "omitzero" in parts, inline))
    return fields


class Reader:
    """Resolves Go types across the packages."""

    def __init__(self, api: Path, apimachinery: Path) -> None:
        self.packages = {
            f"io.k8s.api.{group}.{version}": Package(version, api / group / version)
            for group, version in GROUPS
        }
        self.packages[META] = Package("v1", apimachinery / "pkg" / "apis" / "meta" / "v1")

    def kind_of(self, package: str, name: str) -> str:
        found = self.packages[package]
        if name in found.structs:
            return "struct"
        underlying = found.named.get(name, "")
        if underlying.startswith("map["):
            return "map"
        return "slice" if underlying.startswith("[]") else "scalar"

    def qualify(self, package: str, go_type: str) -> tuple[str, str]:
        """The type as reflect prints it, and its kind."""
        go_type = go_type.lstrip("*")
        if go_type.startswith("[]"):
            inner = self.qualify(package, go_type[2:])[0]
            return ("[]uint8" if inner == "uint8" else "[]" + inner), "slice"
        mapped = re.match(r"map\[(\w+)\](.*)", go_type)
        if mapped:
            key, value = self.qualify(package, mapped[1])[0], self.qualify(package, mapped[2])[0]
            return f"map[{key}]{value}", "map"
        if go_type == "byte":
            return "uint8", "scalar"
        if go_type in ("string", "bool", "int32", "int64", "int", "float64", "uint8"):
            return go_type, "scalar"
        if go_type in SPECIAL:
            return go_type, "special"
        if "." in go_type:
            alias, name = go_type.split(".", 1)
            target = ALIASES.get(alias, "")
            if target in self.packages:
                return f"{self.packages[target].name}.{name}", self.kind_of(target, name)
            return go_type, "special"
        return f"{self.packages[package].name}.{go_type}", self.kind_of(package, go_type)

    def fields(self, package: str, name: str) -> dict[str, str]:
        """``json name -> "<flags> <go type>"``, embedded structs flattened."""
        result: dict[str, str] = {}
        for json_name, go_type, omitempty, omitzero, inline in self.packages[package].structs.get(
            name, []
        ):
            if inline:
                bare = go_type.lstrip("*")
                alias, _, embedded = bare.rpartition(".")
                target = ALIASES.get(alias, package) if alias else package
                if target in self.packages:
                    result.update(self.fields(target, embedded))
                continue
            if json_name == "-":
                continue
            qualified, kind = self.qualify(package, go_type)
            shape = _shape(qualified, kind)
            flags = shape + ("p" if go_type.startswith("*") else "")
            flags += ("o" if omitempty else "") + ("z" if omitzero else "")
            result[json_name] = f"{flags} {qualified}"
        return result


def _shape(qualified: str, kind: str) -> str:
    if qualified in ("v1.Time", "v1.MicroTime"):
        return "t"
    if qualified in ("intstr.IntOrString", "resource.Quantity"):
        return "q"
    if qualified == "runtime.RawExtension":
        return "r"
    return {"struct": "S", "slice": "l", "map": "m"}.get(kind, "s")


def main(api: Path, apimachinery: Path) -> str:
    reader = Reader(api, apimachinery)
    table: dict[str, list[object]] = {}
    for definition in sorted(schemas().definitions):
        package, _, name = definition.rpartition(".")
        if package in reader.packages and name in reader.packages[package].structs:
            go_name = f"{reader.packages[package].name}.{name}"
            table[definition] = [go_name, reader.fields(package, name)]
    return json.dumps(table, separators=(",", ":"))


if __name__ == "__main__":
    sys.stdout.write(main(Path(sys.argv[1]), Path(sys.argv[2])))
