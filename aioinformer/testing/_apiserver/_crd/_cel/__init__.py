"""CEL validation rules (``x-kubernetes-validations``) of CustomResourceDefinitions.

apiextensions-apiserver's ``pkg/apiserver/schema/cel`` (``compilation.go``, ``validation.go``)
with the Kubernetes CEL libraries of apiserver ``pkg/cel/library``, on cel-expr-python (the
CEL C++ runtime, with its type checker) and protobuf for the types:

* :func:`compile_rules` at CRD create and update: a :class:`CompiledSchema`, or the CRD's
  field errors (``compilation failed: ERROR: <input>:1:6: undeclared reference to 'x' …``,
  ``cel expression must evaluate to a bool``, cost over budget, misuse of ``oldSelf``,
  an invalid ``fieldPath``) as the real CRD validation reports them;
* :func:`validate` on custom resource create, update and status update: the rules' field
  errors (``rule``, ``message``, ``messageExpression``, ``reason``, ``fieldPath``, transition
  rules with ``oldSelf`` and ``optionalOldSelf``, ratcheting of unchanged values), in the
  1.35+ form (an object or list shows no value: ``spec: Invalid value: <message>``);
* :func:`blocking_error` instead of running the rules when the object already has an error of
  a :data:`BLOCKING_TYPES` type (``hasBlockingErr``).

Cost is estimated, not cel-go's exact figures (see :mod:`._cost`). Not available: two-variable
comprehensions and ``sortBy`` (cel-expr-python cannot add macros).
"""

from ._errors import rule_repr
from ._escape import escape, unescape
from ._rules import (
    BLOCKING_TYPES,
    CompiledSchema,
    blocking_error,
    compile_rules,
    rules_of,
    valid_field_path,
    validate,
)

__all__ = [
    "BLOCKING_TYPES",
    "CompiledSchema",
    "blocking_error",
    "compile_rules",
    "escape",
    "rule_repr",
    "rules_of",
    "unescape",
    "valid_field_path",
    "validate",
]
