"""A Service's allocated values: cluster IPs, IP families and node ports.

Ports of the behaviour of kubernetes ``pkg/registry/core/service/storage`` (the REST
storage's allocator: ``allocateCreate``, ``patchAllocatedValues`` on update, release on
delete) for a single-stack IPv4 cluster whose service CIDR is ``10.96.0.0/12`` (kubeadm's
default; ``10.96.0.1`` is the ``kubernetes`` Service's) and whose node port range is
30000-32767. Addresses and ports are drawn at random, as the real allocators do, from an
injectable :class:`random.Random`; the errors for taken or out-of-range values are the real
ones (422 causes on ``spec.clusterIPs`` and ``spec.ports[i].nodePort``).
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from .._validation._fielderrors import FieldError, invalid

__all__ = ["ServiceAllocator", "keep_allocated"]


def _ports(spec: dict[str, Any]) -> list[dict[str, Any]]:
    ports = spec.get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def _needs_cluster_ip(spec: dict[str, Any]) -> bool:
    return spec.get("type") != "ExternalName"


def _needs_node_ports(spec: dict[str, Any]) -> bool:
    if spec.get("type") == "NodePort":
        return True
    return (
        spec.get("type") == "LoadBalancer"
        and spec.get("allocateLoadBalancerNodePorts") is not False
    )


def _needs_health_check_port(spec: dict[str, Any]) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def keep_allocated(spec: dict[str, Any], old_spec: dict[str, Any]) -> None:
    """``patchAllocatedValues``: the allocated values an update leaves out are the stored
    ones (cluster IPs and families, node ports by port name, the health check port)."""
    if _needs_cluster_ip(old_spec) and _needs_cluster_ip(spec):
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not spec.get(key) and old_spec.get(key):
                spec[key] = old_spec[key]
    if _needs_node_ports(old_spec) and _needs_node_ports(spec):
        used = {p.get("nodePort") for p in _ports(spec)} & {
            p.get("nodePort") for p in _ports(old_spec)
        }
        by_name = {p.get("name") or "": p.get("nodePort") for p in _ports(old_spec)}
        for port in _ports(spec):
            known = by_name.get(port.get("name") or "")
            if not port.get("nodePort") and known and known not in used:
                port["nodePort"] = known
    both = _needs_health_check_port(old_spec) and _needs_health_check_port(spec)
    if both and not spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = old_spec.get("healthCheckNodePort")


class ServiceAllocator:
    """The cluster IPs and node ports in use, and the allocation of new ones.

    :param cidr: the service CIDR.
    :param node_ports: the inclusive node port range.
    :param rng: the random source (tests pass a seeded one).
    """

    def __init__(
        self,
        *,
        cidr: str = "10.96.0.0/12",
        node_ports: tuple[int, int] = (30000, 32767),
        rng: random.Random | None = None,
    ) -> None:
        self.network = ipaddress.ip_network(cidr)
        self.node_ports = node_ports
        self._rng = rng or random.Random()
        first = self.network.network_address + 1
        self.ips: set[str] = {str(first)}
        self.ports: set[int] = set()

    def _random_ip(self) -> str:
        size = self.network.num_addresses
        while True:
            address = str(self.network.network_address + self._rng.randrange(1, size - 1))
            if address not in self.ips:
                return address

    def _random_port(self) -> int:
        low, high = self.node_ports
        while True:
            port = self._rng.randint(low, high)
            if port not in self.ports:
                return port

    def _take_ip(self, address: str, errors: list[FieldError]) -> None:
        try:
            inside = ipaddress.ip_address(address) in self.network
        except ValueError:
            return  # validation reports malformed addresses
        if not inside:
            errors.append(
                invalid(
                    "spec.clusterIPs",
                    [address],
                    f"failed to allocate IP {address}: the provided IP ({address}) is not in "
                    f"the valid range. The range of valid IPs is {self.network}",
                )
            )
        elif address in self.ips:
            errors.append(
                invalid(
                    "spec.clusterIPs",
                    [address],
                    f"failed to allocate IP {address}: provided IP is already allocated",
                )
            )
        else:
            self.ips.add(address)

    def _take_port(self, port: int, path: str, errors: list[FieldError]) -> None:
        low, high = self.node_ports
        if not low <= port <= high:
            errors.append(
                invalid(
                    path,
                    port,
                    "provided port is not in the valid range. The range of valid ports is "
                    f"{low}-{high}",
                )
            )
        elif port in self.ports:
            errors.append(invalid(path, port, "provided port is already allocated"))
        else:
            self.ports.add(port)

    def allocate(
        self, service: dict[str, Any], old: dict[str, Any] | None = None, *, commit: bool = True
    ) -> list[FieldError]:
        """Allocate what a created (``old`` None) or updated Service lacks, in place; an
        update first takes the values the stored Service had (``patchAllocatedValues``).
        Nothing stays allocated when errors are returned, or without ``commit`` (dry run:
        the Service shows what it would get)."""
        spec = service.setdefault("spec", {})
        old_spec = (old or {}).get("spec") or {}
        if old is not None:
            keep_allocated(spec, old_spec)
        errors: list[FieldError] = []
        taken_ips, taken_ports = set(self.ips), set(self.ports)
        if _needs_cluster_ip(spec):
            cluster_ip = spec.get("clusterIP") or ""
            old_ip = old_spec.get("clusterIP") if _needs_cluster_ip(old_spec) else None
            if not cluster_ip:
                cluster_ip = self._random_ip()
                self.ips.add(cluster_ip)
            elif cluster_ip != "None" and cluster_ip != old_ip:
                self._take_ip(cluster_ip, errors)
            spec["clusterIP"] = cluster_ip
            spec["clusterIPs"] = [cluster_ip]
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
        else:
            for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                spec.pop(key, None)
        old_ports = (
            {p.get("nodePort") for p in _ports(old_spec)} if _needs_node_ports(old_spec) else set()
        )
        if _needs_node_ports(spec):
            for i, port in enumerate(_ports(spec)):
                number = port.get("nodePort")
                if not number:
                    port["nodePort"] = self._random_port()
                    self.ports.add(port["nodePort"])
                elif number not in old_ports:
                    self._take_port(number, f"spec.ports[{i}].nodePort", errors)
        if _needs_health_check_port(spec):
            number = spec.get("healthCheckNodePort")
            if not number:
                spec["healthCheckNodePort"] = self._random_port()
                self.ports.add(spec["healthCheckNodePort"])
            elif number != old_spec.get("healthCheckNodePort"):
                self._take_port(number, "spec.healthCheckNodePort", errors)
        if errors or not commit:
            self.ips, self.ports = taken_ips, taken_ports
        return errors

    def release(self, service: dict[str, Any]) -> None:
        """Free a deleted Service's cluster IP and node ports."""
        spec = service.get("spec") or {}
        for address in spec.get("clusterIPs") or [spec.get("clusterIP")]:
            self.ips.discard(str(address))
        for port in _ports(spec):
            self.ports.discard(port.get("nodePort") or 0)
        self.ports.discard(spec.get("healthCheckNodePort") or 0)
