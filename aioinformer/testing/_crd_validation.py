"""What the API server checks when a CustomResourceDefinition (``apiextensions.k8s.io/v1``) is
created or updated, with its messages and field paths.

A port of the behaviour of apiextensions-apiserver
``pkg/apis/apiextensions/validation/validation.go`` (``ValidateCustomResourceDefinition``,
``ValidateCustomResourceDefinitionUpdate`` and what they call), as seen through the v1 →
internal conversion (``Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_…``): when
every version has the same schema, subresources, printer columns or selectable fields, they
are validated once at the top level, so errors name ``spec.validation.openAPIV3Schema…``,
``spec.subresources…``, ``spec.additionalPrinterColumns[i]…``; otherwise
``spec.versions[i].schema.openAPIV3Schema…`` and so on.

Checked: the name (``<plural>.<group>``), group, scope, names (DNS-1035 labels; kind and list
kind distinct), versions (names, unique, exactly one storage version, deprecation warnings),
each schema (structural: :mod:`._crd_structural`; rules and defaults:
:mod:`._crd_schema_rules`; only some keywords at the root with a status subresource; not
nullable at the root), subresources (``scale`` paths under ``.spec``/``.status``), printer
columns, selectable fields, conversion (``None``; ``Webhook`` only for a CRD with one version:
the fake calls no webhooks), ``status.storedVersions``, API approval of ``*.k8s.io`` groups,
``spec.preserveUnknownFields``; on update also the immutable group, plural, and once
established scope and kind. CEL rules are checked for shape only, not compiled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._crd_parts import (
    column_errors,
    conversion_errors,
    deprecation_errors,
    dns1035_errors,
    names_errors,
    selectable_errors,
    subresource_errors,
    tail_errors,
)
from ._crd_schema import Schema, compile_schema
from ._crd_schema_rules import SchemaOptions, default_errors, relaxed_options, schema_rule_errors
from ._crd_structural import is_zero, structural_error, validate_structural
from ._fielderrors import FieldError, forbidden, invalid, not_supported, required
from ._validation_content import is_dns1123_subdomain
from ._validation_meta import (
    as_list,
    as_map,
    immutable,
    semantic,
    validate_object_meta,
    validate_object_meta_update,
)

__all__ = ["validate_crd", "validate_crd_update"]

_ROOT_ALLOWED = (
    "Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
    "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties "
    "ExternalDocs Example XPreserveUnknownFields XValidations"
)
_ROOT_TYPE = (
    'only "object" is allowed as the type at the root of the schema if the status subresource '
    "is enabled"
)
_ROOT_ONLY = (
    f"only [{_ROOT_ALLOWED}] fields are allowed at the root of the schema if the status "
    "subresource is enabled"
)
# JSONSchemaProps fields in Go order: (json name, allowed at the root with /status).
_ROOT_FIELDS = (
    ("id", False), ("$schema", False), ("$ref", False), ("description", True),
    ("type", True), ("nullable", False), ("format", True), ("title", True),
    ("default", False), ("maximum", True), ("exclusiveMaximum", True), ("minimum", True),
    ("exclusiveMinimum", True), ("maxLength", True), ("minLength", True), ("pattern", True),
    ("maxItems", True), ("minItems", True), ("uniqueItems", True), ("multipleOf", True),
    ("enum", False), ("maxProperties", False), ("minProperties", False), ("required", True),
    ("items", True), ("allOf", False), ("oneOf", False), ("anyOf", False), ("not", False),
    ("properties", True), ("additionalProperties", False), ("patternProperties", False),
    ("dependencies", False), ("additionalItems", False), ("definitions", False),
    ("externalDocs", True), ("example", True), ("x-kubernetes-preserve-unknown-fields", True),
    ("x-kubernetes-embedded-resource", False), ("x-kubernetes-int-or-string", False),
    ("x-kubernetes-list-map-keys", False), ("x-kubernetes-list-type", False),
    ("x-kubernetes-map-type", False), ("x-kubernetes-validations", True),
)  # fmt: skip


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _root_fields(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    """The root of a schema with the status subresource: an object with few keywords."""
    for key, allowed in _ROOT_FIELDS:
        if is_zero(schema.get(key)):
            continue
        if key == "type":
            if schema["type"] != "object":
                return [invalid(f"{path}.openAPIV3Schema.type", schema["type"], _ROOT_TYPE)]
            continue
        if not allowed:
            return [invalid(f"{path}.openAPIV3Schema", dict(schema), _ROOT_ONLY)]
    return []


def _schema(
    holder: Mapping[str, Any] | None, status: bool, opts: SchemaOptions, path: str
) -> list[FieldError]:
    """``validateCustomResourceDefinitionValidation``."""
    schema = as_map(holder).get("openAPIV3Schema") if holder is not None else None
    if not isinstance(schema, Mapping):
        return []
    where = f"{path}.openAPIV3Schema"
    errors = _root_fields(schema, path) if status else []
    if schema.get("nullable") is True:
        errors.append(forbidden(f"{where}.nullable", "nullable cannot be true at the root"))
    late: list[FieldError] = []
    refused = structural_error(schema)
    if refused:
        late.append(invalid(where, "", refused))
    elif structural := validate_structural(where, schema):
        errors += structural
    else:
        compiled = Schema(schema)
        errors += default_errors(where, schema, compiled, pruned=opts.pruned_defaults)
    errors += schema_rule_errors(where, schema, opts)
    return errors or late


def _same(values: list[Any]) -> bool:
    return all(semantic(v) == semantic(values[0]) for v in values[1:])


def _spec(spec: Mapping[str, Any], opts: SchemaOptions, require_schema: bool) -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec``."""
    errors: list[FieldError] = []
    group = _text(spec.get("group"))
    if not group:
        errors.append(required("spec.group"))
    elif problems := is_dns1123_subdomain(group):
        errors.append(invalid("spec.group", group, ",".join(problems)))
    elif "." not in group:
        errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = _text(spec.get("scope"))
    if not scope:
        errors.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = [as_map(v) for v in as_list(spec.get("versions"))]
    shared = {
        key: bool(versions) and _same([v.get(key) for v in versions])
        for key in ("schema", "subresources", "additionalPrinterColumns", "selectableFields")
    }
    top = {key: versions[0].get(key) if versions and shared[key] else None for key in shared}
    if require_schema and not as_map(top["schema"]).get("openAPIV3Schema"):
        for i, version in enumerate(versions):
            if not as_map(version.get("schema")).get("openAPIV3Schema"):
                errors.append(required(f"spec.versions[{i}].schema.openAPIV3Schema"))
    any_status = any(as_map(v.get("subresources")).get("status") is not None for v in versions)
    names = [v.get("name") for v in versions]
    for i, version in enumerate(versions):
        where = f"spec.versions[{i}]"
        errors += dns1035_errors(_text(version.get("name")), f"{where}.name")
        subresources = (
            top["subresources"] if shared["subresources"] else version.get("subresources")
        )
        status = as_map(subresources).get("status") is not None
        errors += deprecation_errors(version, where)
        if not shared["schema"]:
            errors += _schema(
                as_map(version.get("schema")) or None, status, opts, f"{where}.schema"
            )
        if not shared["subresources"]:
            errors += subresource_errors(
                as_map(version.get("subresources")), f"{where}.subresources"
            )
        if not shared["additionalPrinterColumns"]:
            for j, column in enumerate(as_list(version.get("additionalPrinterColumns"))):
                errors += column_errors(as_map(column), f"{where}.additionalPrinterColumns[{j}]")
        fields = as_list(version.get("selectableFields"))
        if fields and not shared["selectableFields"]:
            schema = as_map(version.get("schema")).get("openAPIV3Schema")
            compiled = compile_schema(schema) if isinstance(schema, Mapping) else None
            errors += selectable_errors(fields, compiled, f"{where}.selectableFields")
    if len(set(names)) != len(names):
        errors.append(invalid("spec.versions", versions, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        errors.append(
            invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    if versions and _text(versions[0].get("name")):
        errors += dns1035_errors(_text(versions[0].get("name")), "spec.version")
    names_spec = as_map(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names_spec.get(key):
            errors.append(required(f"spec.names.{key}"))
    errors += names_errors(names_spec, "spec.names")
    errors += _schema(as_map(top["schema"]) or None, any_status, opts, "spec.validation")
    errors += subresource_errors(as_map(top["subresources"]), "spec.subresources")
    for j, column in enumerate(as_list(top["additionalPrinterColumns"])):
        errors += column_errors(as_map(column), f"spec.additionalPrinterColumns[{j}]")
    if as_list(top["selectableFields"]):
        schema = as_map(top["schema"]).get("openAPIV3Schema")
        compiled = compile_schema(schema) if isinstance(schema, Mapping) else None
        errors += selectable_errors(
            as_list(top["selectableFields"]), compiled, "spec.selectableFields"
        )
    return errors + conversion_errors(spec.get("conversion"), versions, "spec.conversion")


def _crd_name(crd: Mapping[str, Any]) -> Any:
    spec = as_map(crd.get("spec"))
    wanted = f"{_text(as_map(spec.get('names')).get('plural'))}.{_text(spec.get('group'))}"

    def check(name: str, prefix: bool) -> list[str]:
        problems = is_dns1123_subdomain(name)
        if name != wanted:
            problems = [*problems, 'must be spec.names.plural+"."+spec.group']
        return problems

    return check


def validate_crd(crd: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a create (after :func:`._crd_lifecycle.prepare_crd_create`)."""
    errors = validate_object_meta(crd.get("metadata"), namespaced=False, name_fn=_crd_name(crd))
    errors += _spec(as_map(crd.get("spec")), SchemaOptions(), True)
    return errors + tail_errors(crd, None)


def validate_crd_update(
    crd: Mapping[str, Any], old: Mapping[str, Any], *, established: bool
) -> list[FieldError]:
    """The errors of an update (after :func:`._crd_lifecycle.prepare_crd_update`); rules the
    old CRD already broke are relaxed as the real server relaxes them."""
    errors = validate_object_meta_update(crd.get("metadata"), old.get("metadata"))
    opts = _relaxed(as_map(old.get("spec")))
    spec, old_spec = as_map(crd.get("spec")), as_map(old.get("spec"))
    errors += _spec(spec, opts, _all_schemas(old_spec))
    names, old_names = as_map(spec.get("names")), as_map(old_spec.get("names"))
    if established:
        errors += immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope")
        errors += immutable(names.get("kind"), old_names.get("kind"), "spec.names.kind")
    errors += immutable(spec.get("group"), old_spec.get("group"), "spec.group")
    errors += immutable(names.get("plural"), old_names.get("plural"), "spec.names.plural")
    return errors + tail_errors(crd, old)


def _all_schemas(spec: Mapping[str, Any]) -> bool:
    return all(
        isinstance(as_map(as_map(v).get("schema")).get("openAPIV3Schema"), Mapping)
        for v in as_list(spec.get("versions"))
    )


def _relaxed(old_spec: Mapping[str, Any]) -> SchemaOptions:
    """The options of an update: a rule the old schemas break is not required."""
    schemas = []
    for version in as_list(old_spec.get("versions")):
        schema = as_map(as_map(version).get("schema")).get("openAPIV3Schema")
        if isinstance(schema, Mapping):
            schemas.append(schema)
    return relaxed_options(schemas)
