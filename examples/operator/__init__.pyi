"""The Widget operator (see ``__main__.py``). This stub only tells mypy's crawl of
``examples/`` that the directory is a package: at run time it is a namespace package (no
``__init__.py``), so that scripts run from ``examples/`` import the standard library's
``operator`` rather than this."""
