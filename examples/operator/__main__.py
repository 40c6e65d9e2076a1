"""An operator for Widgets (``widgets.example.com``, :file:`crd.yaml`), with the toolkit of
aioinformer: a finalizer, an owned object, status conditions, Events, predicates, a
metadata-only informer and leader election.

Against any cluster (or ``aioinformer fake-apiserver``) that ``$KUBECONFIG`` points at::

    kubectl apply -f examples/operator/crd.yaml
    python -m examples.operator            # --namespace NS, --lease-namespace NS, -v

For each Widget (``spec.message``) it

* adds the finalizer ``example.com/cleanup``;
* server-side applies the ConfigMap ``<widget>-widget`` with ``data.message`` = the Widget's
  ``spec.message``, controlled by the Widget (an owner reference with ``controller: true``);
  a ConfigMap deleted or edited by someone else is put back;
* sets the condition ``Ready=True`` (reason ``Reconciled``, ``observedGeneration`` = the
  Widget's ``metadata.generation``) through the status subresource;
* records a ``Normal`` Event (reason ``Reconciled``) about the Widget when it changed
  something;
* ignores status-only changes (the generation predicate) and follows ``spec.message``;
* when the Widget is deleted, records an Event (reason ``Cleanup``), then removes its
  finalizer so the Widget goes (and the garbage collector takes the ConfigMap).

Only the replica holding the Lease ``widget-operator`` reconciles. ``docs/guide/operators.md``
walks through the code (:mod:`.widgets`) and compares it with kopf and controller-runtime.

The package has no ``__init__.py``: it is a namespace package, so that the scripts of
``examples/`` (run as ``python examples/<script>.py``, which puts that directory first on
``sys.path``) still import the standard library's ``operator``. ``__init__.pyi`` tells mypy
that it is a package all the same.
"""

import sys

from .command import main

sys.exit(main())
