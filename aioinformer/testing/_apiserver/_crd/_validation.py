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
each schema (structural: :mod:`._structural`; rules and defaults:
:mod:`._schema_rules`; only some keywords at the root with a status subresource; not
nullable at the root), subresources (``scale`` paths under ``.spec``/``.status``), printer
columns, selectable fields, conversion (``None``; ``Webhook`` only for a CRD with one version:
the fake calls no webhooks), ``status.storedVersions``, API approval of ``*.k8s.io`` groups,
``spec.preserveUnknownFields``; on update also the immutable group, plural, and once
established scope and kind. CEL rules are checked for shape, then compiled (:mod:`._cel`):
a rule that does not compile, or whose estimated cost is over budget, is a 422 here.

The parts checked field by field (names, deprecation warnings, subresources, printer columns,
selectable fields, conversion, stored versions, API approval) port
``ValidateCustomResourceDefinitionNames``, ``ValidateCustomResourceDefinitionSubresources``,
``ValidateCustomResourceColumnDefinition``, ``ValidateCustomResourceSelectableFields``,
``validateDeprecationWarning``, ``validateCustomResourceConversion``,
``ValidateCustomResourceDefinitionStoredVersions``, ``validateAPIApproval`` and
``validatePreserveUnknownFields``, and ``pkg/apihelpers`` (``IsProtectedCommunityGroup``,
``GetAPIApprovalState``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._validation._content import is_dns1035_label, is_dns1123_subdomain
from .._validation._fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from .._validation._meta import (
    as_list,
    as_map,
    immutable,
    semantic,
    validate_object_meta,
    validate_object_meta_update,
)
from ._cel import CompiledSchema, compile_rules
from ._schema import Schema, compile_schema
from ._schema_rules import SchemaOptions, default_errors, relaxed_options, schema_rule_errors
from ._structural import is_zero, structural_error, validate_structural

__all__ = [
    "APPROVAL",
    "approval_state",
    "column_errors",
    "conversion_errors",
    "deprecation_errors",
    "dns1035_errors",
    "is_protected_group",
    "names_errors",
    "selectable_errors",
    "subresource_errors",
    "tail_errors",
    "validate_crd",
    "validate_crd_update",
]

#: The annotation protected groups need (``api-approved.kubernetes.io``).
APPROVAL = "api-approved.kubernetes.io"
_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"
_WEBHOOK_ONLY = "should not be set when strategy is not set to Webhook"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def is_protected_group(group: str) -> bool:
    """``IsProtectedCommunityGroup``: ``k8s.io``, ``kubernetes.io`` and their subdomains."""
    return any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io"))


def approval_state(annotations: Mapping[str, Any]) -> tuple[str, str]:
    """``GetAPIApprovalState``: ``Missing``, ``Bypassed``, ``Approved`` or ``Invalid``, and
    the reason."""
    value = _text(annotations.get(APPROVAL))
    quoted = f'"{APPROVAL}"'
    if not value:
        return "Missing", (
            f"protected groups must have approval annotation {quoted}, see "
            "https://github.com/kubernetes/enhancements/pull/1111"
        )
    if value.startswith("unapproved"):
        return "Bypassed", f'not approved: "{value}"'
    scheme, _, rest = value.partition("://")
    if scheme and rest and "/" not in scheme and rest.split("/")[0]:
        return "Approved", f"approved in {value}"
    return "Invalid", (
        f"protected groups must have approval annotation {quoted} with either a URL or a reason "
        'starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111'
    )


def _dns1035(value: str, path: str, mixed_case: bool = False) -> list[FieldError]:
    problems = is_dns1035_label(value.lower() if mixed_case else value)
    if not value or not problems:
        return []
    prefix = "may have mixed case, but should otherwise match: " if mixed_case else ""
    return [invalid(path, value, prefix + ",".join(problems))]


def names_errors(names: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``."""
    errors = _dns1035(_text(names.get("plural")), f"{path}.plural")
    errors += _dns1035(_text(names.get("singular")), f"{path}.singular")
    errors += _dns1035(_text(names.get("kind")), f"{path}.kind", True)
    errors += _dns1035(_text(names.get("listKind")), f"{path}.listKind", True)
    for i, short in enumerate(as_list(names.get("shortNames"))):
        errors += _dns1035(_text(short), f"{path}.shortNames[{i}]") or (
            [
                invalid(f"{path}.shortNames[{i}]", "", ",".join(is_dns1035_label(""))),
            ]
            if not short
            else []
        )
    kind = _text(names.get("kind"))
    if kind and kind == names.get("listKind"):
        errors.append(invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    for i, category in enumerate(as_list(names.get("categories"))):
        errors += _dns1035(_text(category), f"{path}.categories[{i}]")
    return errors


def _simple_path(value: str, path: str) -> list[FieldError]:
    """``validateSimpleJSONPath``."""
    if not value:
        return [invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [invalid(path, value, "must be a simple json path starting with .")]
    return []


def subresource_errors(sub: Mapping[str, Any] | None, path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionSubresources``."""
    scale = as_map(sub).get("scale")
    if not isinstance(scale, Mapping):
        return []
    errors: list[FieldError] = []
    for key, under in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        value, where = _text(scale.get(key)), f"{path}.scale.{key}"
        if not value:
            errors.append(required(where))
        elif problems := _simple_path(value, where):
            errors += problems
        elif not value.startswith(under):
            errors.append(invalid(where, value, f"should be a json path under {under[:-1]}"))
    selector, where = _text(scale.get("labelSelectorPath")), f"{path}.scale.labelSelectorPath"
    if selector:
        if problems := _simple_path(selector, where):
            errors += problems
        elif not selector.startswith((".spec.", ".status.")):
            errors.append(
                invalid(where, selector, "should be a json path under either .spec or .status")
            )
    return errors


def column_errors(column: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateCustomResourceColumnDefinition``."""
    errors: list[FieldError] = []
    if not column.get("name"):
        errors.append(required(f"{path}.name"))
    kind, fmt = _text(column.get("type")), _text(column.get("format"))
    if not kind:
        errors.append(required(f"{path}.type", f"must be one of {_COLUMN_TYPES}"))
    elif kind not in _COLUMN_TYPES.split(","):
        errors.append(invalid(f"{path}.type", kind, f"must be one of {_COLUMN_TYPES}"))
    if fmt and fmt not in _COLUMN_FORMATS.split(","):
        errors.append(invalid(f"{path}.format", fmt, f"must be one of {_COLUMN_FORMATS}"))
    json_path = _text(column.get("jsonPath"))
    if not json_path:
        errors.append(required(f"{path}.JSONPath"))
    else:
        errors += _simple_path(json_path, f"{path}.JSONPath")
    return errors


def selectable_errors(fields: list[Any], schema: Schema | None, path: str) -> list[FieldError]:
    """``ValidateCustomResourceSelectableFields``."""
    if schema is None:
        return [invalid(path, "", "may only be set when validations.schema is included")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, entry in enumerate(fields):
        json_path, where = _text(as_map(entry).get("jsonPath")), f"{path}[{i}].jsonPath"
        if not json_path:
            errors.append(required(where))
            continue
        node: Schema | None = schema
        problem = ""
        for name in json_path.split(".")[1:]:
            if "[" in name:
                problem = "array notation is not allowed"
                break
            node = (node.properties or {}).get(name) if node is not None else None
            if node is None:
                problem = "does not refer to a valid field"
                break
        if not json_path.startswith(".") or problem:
            detail = problem or f"expected [ or . but got: {json_path.split('.')[0]}"
            errors.append(invalid(where, json_path, f"is an invalid path: {detail}"))
            continue
        if json_path.split(".")[1] == "metadata":
            errors.append(invalid(where, json_path, "must not point to fields in metadata"))
        if node is None or node.type not in ("string", "boolean", "integer"):
            errors.append(
                invalid(
                    where,
                    json_path,
                    "must point to a field of type string, boolean or integer. Enum string "
                    "fields and strings with formats are allowed.",
                )
            )
        if json_path in seen:
            errors.append(duplicate(where, json_path))
        seen.add(json_path)
    if len(seen) > 8:
        errors.append(too_many(path, len(seen), 8))
    return errors


def deprecation_errors(version: Mapping[str, Any], path: str) -> list[FieldError]:
    warning = version.get("deprecationWarning")
    where = f"{path}.deprecationWarning"
    if version.get("deprecated") is not True and warning is not None:
        return [invalid(where, warning, "can only be set for deprecated versions")]
    if not isinstance(warning, str):
        return []
    problems = []
    if len(warning) > 256:
        problems.append("must be <= 256 characters long")
    if not warning:
        problems.append("must not be an empty string")
    for i, ch in enumerate(warning):
        if not ch.isprintable():
            at = len(warning[:i].encode())
            problems.append(
                "must only contain printable UTF-8 characters; non-printable character found "
                f"at index {at}"
            )
            break
    return [invalid(where, warning, problem) for problem in problems]


def conversion_errors(conversion: Any, versions: list[Any], path: str) -> list[FieldError]:
    if not isinstance(conversion, Mapping):
        return []
    strategy = _text(conversion.get("strategy"))
    webhook = as_map(conversion.get("webhook"))
    where = f"{path}.strategy"
    if not strategy:
        return [required(where)]
    if strategy not in ("None", "Webhook"):
        return [not_supported(where, strategy, ["None", "Webhook"])]
    errors: list[FieldError] = []
    if strategy == "Webhook":
        config = as_map(webhook.get("clientConfig"))
        if not webhook.get("clientConfig"):
            errors.append(
                required(f"{path}.webhookClientConfig", "required when strategy is set to Webhook")
            )
        elif ("url" in config) == ("service" in config):
            errors.append(
                required(f"{path}.webhookClientConfig", "exactly one of url or service is required")
            )
        reviews = [_text(v) for v in as_list(webhook.get("conversionReviewVersions"))]
        if not reviews:
            errors.append(required(f"{path}.conversionReviewVersions"))
        elif not {"v1", "v1beta1"} & set(reviews):
            errors.append(
                invalid(
                    f"{path}.conversionReviewVersions",
                    reviews,
                    "must include at least one of v1, v1beta1",
                )
            )
        if not errors and len(versions) > 1:
            errors.append(
                forbidden(
                    where,
                    "the fake API server calls no conversion webhooks: use strategy None (objects "
                    "then change only their apiVersion between versions) or a single version",
                )
            )
    else:
        if webhook.get("clientConfig"):
            errors.append(forbidden(f"{path}.webhookClientConfig", _WEBHOOK_ONLY))
        if webhook.get("conversionReviewVersions"):
            errors.append(forbidden(f"{path}.conversionReviewVersions", _WEBHOOK_ONLY))
    return errors


def dns1035_errors(value: str, path: str) -> list[FieldError]:
    problems = is_dns1035_label(value)
    return [invalid(path, value, ",".join(problems))] if problems else []


def _stored_versions(crd: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStoredVersions``."""
    stored = [_text(v) for v in as_list(as_map(crd.get("status")).get("storedVersions"))]
    path = "status.storedVersions"
    if not stored:
        return [invalid(path, stored, "must have at least one stored version")]
    errors: list[FieldError] = []
    remaining = {v: i for i, v in enumerate(stored)}
    for version in as_list(as_map(crd.get("spec")).get("versions")):
        name = _text(as_map(version).get("name"))
        if as_map(version).get("storage") is True and name not in remaining:
            errors.append(invalid(path, stored, f"must have the storage version {name}"))
        remaining.pop(name, None)
    for name, i in remaining.items():
        errors.append(
            invalid(
                f"{path}[{i}]",
                name,
                f"missing from spec.versions; {name} was previously a storage version, and must "
                f"remain in spec.versions until a storage migration ensures no data remains "
                f"persisted in {name} and removes {name} from status.storedVersions",
            )
        )
    return errors


def _approval(crd: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    if not is_protected_group(_text(as_map(crd.get("spec")).get("group"))):
        return []
    annotations = as_map(as_map(crd.get("metadata")).get("annotations"))
    state, reason = approval_state(annotations)
    if old is not None:
        before, _ = approval_state(as_map(as_map(old.get("metadata")).get("annotations")))
        if before == state:
            return []
    path = f"metadata.annotations[{APPROVAL}]"
    if state == "Missing":
        return [required(path, reason)]
    if state == "Invalid":
        return [invalid(path, _text(annotations.get(APPROVAL)), reason)]
    return []


def tail_errors(crd: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    status = as_map(crd.get("status"))
    errors = names_errors(as_map(status.get("acceptedNames")), "status.acceptedNames")
    errors += _stored_versions(crd) + _approval(crd, old)
    old_keep = old is not None and as_map(old.get("spec")).get("preserveUnknownFields") is True
    if not old_keep and as_map(crd.get("spec")).get("preserveUnknownFields") is True:
        errors.append(
            invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                "spec.versions[*].schema instead",
            )
        )
    return errors


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
    rule_errors = schema_rule_errors(where, schema, opts)
    if not (errors or late or rule_errors):
        # The CEL rules compile once the structural schema is valid (``celContext`` of
        # ``ValidateCustomResourceDefinitionOpenAPISchema``).
        rules = compile_rules(schema, where)
        if not isinstance(rules, CompiledSchema):
            rule_errors += rules
    errors += rule_errors
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
    """The errors of a create (after :func:`~._lifecycle.prepare_crd_create`)."""
    errors = validate_object_meta(crd.get("metadata"), namespaced=False, name_fn=_crd_name(crd))
    errors += _spec(as_map(crd.get("spec")), SchemaOptions(), True)
    return errors + tail_errors(crd, None)


def validate_crd_update(
    crd: Mapping[str, Any], old: Mapping[str, Any], *, established: bool
) -> list[FieldError]:
    """The errors of an update (after :func:`~._lifecycle.prepare_crd_update`); rules the
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
