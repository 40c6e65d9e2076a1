"""Sample CustomResourceDefinitions and custom resources for the CRD building blocks' tests."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

__all__ = ["crontab", "crontab_crd", "crontab_schema"]

_HERE = Path(__file__).parent


@functools.cache
def _load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((_HERE / name).read_text())
    return document


def crontab_crd() -> dict[str, Any]:
    """The CronTab CRD (a fresh copy): v1beta1 served, v1 served and stored."""
    return copy.deepcopy(_load("crontab.yaml"))


def crontab_schema(version: str = "v1") -> dict[str, Any]:
    """The ``openAPIV3Schema`` of one of the CronTab versions (a fresh copy)."""
    for entry in crontab_crd()["spec"]["versions"]:
        if entry["name"] == version:
            schema: dict[str, Any] = entry["schema"]["openAPIV3Schema"]
            return schema
    raise KeyError(version)


def crontab(name: str = "nightly", **spec: Any) -> dict[str, Any]:
    """A CronTab in ``stable.example.com/v1``, namespace ``default``."""
    body: dict[str, Any] = {"cronSpec": "*/5 * * * *", "image": "my-awesome-cron-image"}
    body.update(spec)
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "namespace": "default"},
        "spec": body,
    }
