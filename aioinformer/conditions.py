"""Status conditions (``metav1.Condition``) with the Kubernetes rules, and their write through
the ``status`` subresource.

Read with :func:`find_condition`, :func:`is_true`, :func:`is_false` and :func:`is_unknown`
(on an object or a list of conditions); edit a copy (:func:`conditions_of`) with
:func:`set_condition` and :func:`remove_condition`, which say whether they changed it; write
it with :func:`write_conditions`::

    from aioinformer import conditions

    current = conditions.conditions_of(widget)
    if conditions.set_condition(
        current, type="Ready", status=True, reason="Reconciled",
        observed_generation=widget["metadata"]["generation"],
    ):
        await conditions.write_conditions(client, WIDGETS, widget, current)

``lastTransitionTime`` changes only when ``status`` does; types, statuses, reasons and
messages are validated as the API server validates ``metav1.Condition``.
"""

from ._control._conditions import Condition as Condition
from ._control._conditions import conditions_of as conditions_of
from ._control._conditions import find_condition as find_condition
from ._control._conditions import is_false as is_false
from ._control._conditions import is_true as is_true
from ._control._conditions import is_unknown as is_unknown
from ._control._conditions import remove_condition as remove_condition
from ._control._conditions import set_condition as set_condition
from ._control._conditions import write_conditions as write_conditions
from ._exports import publish as _publish

__all__ = (
    "Condition",
    "conditions_of",
    "find_condition",
    "is_true",
    "is_false",
    "is_unknown",
    "set_condition",
    "remove_condition",
    "write_conditions",
)

_publish(__name__, __all__, globals())
