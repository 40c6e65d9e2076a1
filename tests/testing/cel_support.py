"""Helpers of the CEL rule tests (test_cel_*.py): schemas, objects, compiled rules."""

from __future__ import annotations

from typing import Any

from aioinformer.testing._apiserver._crd._cel import CompiledSchema, compile_rules, validate


def crd_schema(spec: dict[str, Any], **root: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": spec}, **root}


def compiled(schema: dict[str, Any]) -> CompiledSchema:
    result = compile_rules(schema)
    assert isinstance(result, CompiledSchema), [str(e) for e in result]
    return result


def obj(spec: Any, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-crontab"},
        "spec": spec,
        **extra,
    }


def messages(schema: dict[str, Any], new: Any, old: Any = None, **kw: Any) -> list[str]:
    return [str(e) for e in validate(compiled(schema), new, old, **kw)]


def crd_errors(schema: dict[str, Any]) -> list[str]:
    result = compile_rules(schema)
    assert not isinstance(result, CompiledSchema), "expected CRD errors"
    return [str(e) for e in result]
