"""The sub-commands of the ``aioinformer`` command line (one module each)."""

__all__: list[str] = []
