"""From a resolved dumbbell scenario to the exact commands that build it on this machine's
kernel: three network namespaces with a unique prefix (senders, router, receivers), veth
pairs between them, addresses, routes, per-namespace sysctls, the bottleneck (tbf with a
pfifo/bfifo/pfifo_head_drop child, both directions, on the router) and the delay line's TUN
device with the policy routing that sends every crossing packet through it.

Nothing here runs anything: `plan_for()` returns an `EmuPlan` whose `setup` commands
`tcplab emulate --dry-run` prints and `tcplab.emu.run` executes; `teardown` removes every
namespace (and with it every interface, route, qdisc and sysctl of the run).

Layout (A = 10.x, one /16 per run, chosen from the prefix):
    senders ns  ve-s (A.1.1+i for pair i)  <->  ve-rs (A.1.254)  router ns  ve-rd (A.2.254)  <->  ve-d (A.2.1+i)  receivers ns
In the router, the main table sends both subnets to the TUN device `dl`; the delay line holds
each packet for its path's one-way delay and writes it back; `ip rule iif dl` then routes it
out of ve-rd (data) or ve-rs (ACKs), whose egress is the bottleneck qdisc. The bottleneck
queue therefore sits after the delay, which for a constant delay changes nothing.
"""

from __future__ import annotations

import secrets
import shlex
from dataclasses import dataclass, field
from typing import Any

from .._core import ScenarioError
from ..units import duration_ns, rate_bps, size_bytes

# Rates this 2-core machine emulates faithfully (issue 6 measurements); outside: a warning,
# above REFUSED_ABOVE_BPS: a refusal.
FAITHFUL_RATE_BPS = (10e6, 300e6)
REFUSED_ABOVE_BPS = 1e9
MTU = 1500
# Ethernet framing on a veth (14 B header): the tbf's size table takes it off again.
LINK_OVERHEAD_BYTES = 14
ROUTER_TABLE = 100
TUN_DEVICE = "dl"
TUN_QUEUE_PACKETS = 20_000
RECEIVER_PORT = 5001


@dataclass(frozen=True)
class Pair:
    """Sender/receiver pair i: addresses and the one-way delay of its path."""

    index: int
    sender_ip: str
    receiver_ip: str
    one_way_delay_ns: int


@dataclass(frozen=True)
class FlowPlan:
    """One flow as the traffic tools run it."""

    index: int
    cc: str
    pair: Pair
    start_s: float
    stop_s: float | None
    bytes: int | None


@dataclass
class EmuPlan:
    prefix: str
    namespaces: dict[str, str]  # role ("senders", "router", "receivers") -> name
    pairs: list[Pair]
    flows: list[FlowPlan]
    duration_s: float
    sample_interval_s: float
    bottleneck_rate_bps: float
    bottleneck_device: str  # in the router namespace, data direction
    delay_routes: list[tuple[str, int, int]]  # (network, prefix length, delay ns)
    setup: list[list[str]] = field(default_factory=list)
    teardown: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def commands_text(self) -> str:
        """Every command of the run, one per line, as `--dry-run` prints them."""
        lines = ["# setup", *map(shlex.join, self.setup)]
        lines.append(
            f"# delay line (router namespace): TUN {TUN_DEVICE}, "
            + ", ".join(f"{net}/{length} +{ns / 1e6:g} ms" for net, length, ns in self.delay_routes)
        )
        lines += ["# teardown", *map(shlex.join, self.teardown)]
        return "\n".join(lines)


def _unsupported(path: str, message: str) -> ScenarioError:
    return ScenarioError(f"{path}: {message}")


def plan_for(scenario: dict[str, Any], prefix: str | None = None) -> EmuPlan:
    """The plan of a resolved scenario; raises ScenarioError naming what the emulation
    backend cannot run (with what it can)."""
    topology = scenario["topology"]
    if topology.get("kind") != "dumbbell":
        raise _unsupported(
            "topology.kind", f"{topology.get('kind')!r} cannot be emulated; allowed: dumbbell"
        )
    if topology.get("wifi") is not None:
        raise _unsupported("topology.wifi", "radio access cannot be emulated on wired veths")
    bottleneck, access = topology["bottleneck"], topology["access"]
    for name, link in (("bottleneck", bottleneck), ("access", access)):
        if link.get("loss", 0.0):
            raise _unsupported(f"topology.{name}.loss", "random loss needs netem, which this kernel lacks")
        if link.get("ecn_threshold") is not None:
            raise _unsupported(f"topology.{name}.ecn_threshold", "CE marking needs red/fq_codel, which this kernel lacks")
        if link.get("reverse") is not None:
            raise _unsupported(f"topology.{name}.reverse", "per-direction overrides are not emulated")
    rate = rate_bps(bottleneck["rate"])
    warnings = []
    if rate > REFUSED_ABOVE_BPS:
        raise _unsupported(
            "topology.bottleneck.rate",
            f"{bottleneck['rate']} is more than this 2-core machine can emulate faithfully (at most 1Gbps; about 10-300Mbps is faithful)",
        )
    if not FAITHFUL_RATE_BPS[0] <= rate <= FAITHFUL_RATE_BPS[1]:
        warnings.append(
            f"topology.bottleneck.rate {bottleneck['rate']} is outside the 10-300Mbps this machine emulates faithfully; check the run's validity"
        )
    if rate_bps(access["rate"]) < rate:
        raise _unsupported("topology.access.rate", "access links slower than the bottleneck are not emulated")
    prefix = prefix or f"tl{secrets.token_hex(3)}"
    octet = 16 + int(prefix[-4:], 16) % 200  # 10.<octet>.x.y: runs with different prefixes rarely share it
    pairs_count = int(topology["pairs"])
    access_delays = topology.get("access_delays") or [access["delay"]] * pairs_count
    pairs = [
        Pair(
            index=i,
            sender_ip=f"10.{octet}.1.{1 + i}",
            receiver_ip=f"10.{octet}.2.{1 + i}",
            one_way_delay_ns=duration_ns(bottleneck["delay"])
            + duration_ns(access_delays[i])
            + duration_ns(access["delay"]),
        )
        for i in range(pairs_count)
    ]
    by_name = {f"s{p.index}": p for p in pairs} | {f"r{p.index}": p for p in pairs}
    flows = []
    for i, flow in enumerate(scenario["flows"]):
        cc = flow["cc"]["kind"] if isinstance(flow["cc"], dict) else flow["cc"]
        src, dst = flow["src"], flow["dst"]
        if not (src.startswith("s") and dst == f"r{src[1:]}"):
            raise _unsupported(f"flows.{i}", "the emulation runs flows from sender s<i> to receiver r<i> only")
        if flow.get("app") is not None:
            raise _unsupported(f"flows.{i}.app", "fixed-rate applications are not emulated; bulk or bytes only")
        stop = flow.get("stop")
        flows.append(
            FlowPlan(
                index=i,
                cc=cc,
                pair=by_name[src],
                start_s=duration_ns(flow.get("start", "0s")) / 1e9,
                stop_s=None if stop is None else duration_ns(stop) / 1e9,
                bytes=None if flow.get("bytes") is None else size_bytes(flow["bytes"]),
            )
        )
    namespaces = {"senders": f"{prefix}s", "router": f"{prefix}r", "receivers": f"{prefix}d"}
    result = EmuPlan(
        prefix=prefix,
        namespaces=namespaces,
        pairs=pairs,
        flows=flows,
        duration_s=duration_ns(scenario["duration"]) / 1e9,
        sample_interval_s=duration_ns(scenario["sample_interval"]) / 1e9,
        bottleneck_rate_bps=rate,
        bottleneck_device="ve-rd",
        delay_routes=[(p.receiver_ip, 32, p.one_way_delay_ns) for p in pairs]
        + [(p.sender_ip, 32, p.one_way_delay_ns) for p in pairs],
        warnings=warnings,
    )
    result.setup = _setup_commands(result, scenario, bottleneck, access, octet)
    result.teardown = [["ip", "netns", "delete", name] for name in namespaces.values()]
    return result


def _socket_buffer_sysctls(scenario: dict[str, Any]) -> list[str]:
    """tcp_rmem / tcp_wmem whose maxima let autotuning reach the scenario's buffers (twice
    the size: the kernel counts skb overhead against them, tcp_adv_win_scale)."""
    tcp = scenario.get("tcp", {})
    snd = size_bytes(tcp.get("snd_buf", "6MiB"))
    rcv = size_bytes(tcp.get("rcv_buf", "6MiB"))
    return [
        f"net.ipv4.tcp_wmem=4096 16384 {2 * snd}",
        f"net.ipv4.tcp_rmem=4096 131072 {2 * rcv}",
        "net.ipv4.tcp_no_metrics_save=1",
    ]


def _queue_child(buffer: str) -> list[str]:
    if buffer.endswith("pkt"):
        return ["pfifo", "limit", buffer.removesuffix("pkt")]
    return ["bfifo", "limit", str(size_bytes(buffer))]


def _shaping(ns: str, device: str, link: dict[str, Any]) -> list[list[str]]:
    """tbf at the link's rate with the link's queue as its child (root 1:, child 10:)."""
    rate = int(rate_bps(link["rate"]))
    burst = max(2 * (MTU + LINK_OVERHEAD_BYTES), rate // 8 // 1000)  # ≥ 1 ms of tokens
    child = _queue_child(link["buffer"])
    if link.get("queue") == "headdrop":
        if child[0] != "pfifo":
            raise _unsupported("topology.bottleneck.buffer", "headdrop needs a buffer in packets (pfifo_head_drop)")
        child[0] = "pfifo_head_drop"
    tbf = ["tbf", "rate", f"{rate}bit", "burst", str(burst), "latency", "10s"]
    return [
        # stab overhead −14: the tbf counts IP packet sizes, as the simulator's link rates do.
        ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", device, "root", "handle", "1:", "stab", "overhead", f"-{LINK_OVERHEAD_BYTES}", *tbf],
        ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", *child],
    ]


def _setup_commands(plan_: EmuPlan, scenario: dict[str, Any], bottleneck: dict[str, Any], access: dict[str, Any], octet: int) -> list[list[str]]:
    s, r, d = plan_.namespaces["senders"], plan_.namespaces["router"], plan_.namespaces["receivers"]
    net1, net2 = f"10.{octet}.1.0/24", f"10.{octet}.2.0/24"
    cmds: list[list[str]] = [["ip", "netns", "add", ns] for ns in (s, r, d)]
    # IPv4 only: no IPv6 neighbour discovery chatter on the path or into the delay line.
    for ns in (s, r, d):
        cmds.append(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
    cmds += [
        ["ip", "-n", s, "link", "add", "ve-s", "type", "veth", "peer", "name", "ve-rs", "netns", r],
        ["ip", "-n", d, "link", "add", "ve-d", "type", "veth", "peer", "name", "ve-rd", "netns", r],
    ]
    # Offloads off, so queues hold MTU-size packets: no GSO/TSO super-packets, no GRO merging.
    for ns, dev in ((s, "ve-s"), (r, "ve-rs"), (r, "ve-rd"), (d, "ve-d")):
        cmds.append(["ip", "-n", ns, "link", "set", dev, "gso_max_size", str(MTU), "gso_max_segs", "1", "gro_max_size", str(MTU)])
    for ns in (s, r, d):
        cmds.append(["ip", "-n", ns, "link", "set", "lo", "up"])
    for pair in plan_.pairs:
        cmds.append(["ip", "-n", s, "addr", "add", f"{pair.sender_ip}/24", "dev", "ve-s"])
        cmds.append(["ip", "-n", d, "addr", "add", f"{pair.receiver_ip}/24", "dev", "ve-d"])
    cmds += [
        ["ip", "-n", r, "addr", "add", f"10.{octet}.1.254/24", "dev", "ve-rs"],
        ["ip", "-n", r, "addr", "add", f"10.{octet}.2.254/24", "dev", "ve-rd"],
    ]
    for ns, dev in ((s, "ve-s"), (r, "ve-rs"), (r, "ve-rd"), (d, "ve-d")):
        cmds.append(["ip", "-n", ns, "link", "set", dev, "up"])
    cmds += [
        ["ip", "-n", s, "route", "add", net2, "via", f"10.{octet}.1.254"],
        ["ip", "-n", d, "route", "add", net1, "via", f"10.{octet}.2.254"],
        ["ip", "netns", "exec", r, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"],
    ]
    for ns in (s, d):
        cmds.append(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *_socket_buffer_sysctls(scenario)])
    # The delay line's TUN device and the routing through it.
    cmds += [
        ["ip", "-n", r, "tuntap", "add", "dev", TUN_DEVICE, "mode", "tun"],
        # A slow-start burst arrives at veth speed: the device queue in front of the reader
        # must hold it (the default 500 packets overflowed in CUBIC runs here).
        ["ip", "-n", r, "link", "set", TUN_DEVICE, "txqueuelen", str(TUN_QUEUE_PACKETS)],
        ["ip", "-n", r, "link", "set", TUN_DEVICE, "up"],
        ["ip", "netns", "exec", r, "sysctl", "-q", "-w", f"net.ipv4.conf.{TUN_DEVICE}.rp_filter=0"],
        ["ip", "-n", r, "route", "replace", net2, "dev", TUN_DEVICE],
        ["ip", "-n", r, "route", "replace", net1, "dev", TUN_DEVICE],
        ["ip", "-n", r, "route", "add", net2, "dev", "ve-rd", "table", str(ROUTER_TABLE)],
        ["ip", "-n", r, "route", "add", net1, "dev", "ve-rs", "table", str(ROUTER_TABLE)],
        ["ip", "-n", r, "rule", "add", "iif", TUN_DEVICE, "lookup", str(ROUTER_TABLE)],
    ]
    # The bottleneck in both directions, on the router: data towards the receivers, ACKs back.
    cmds += _shaping(r, "ve-rd", bottleneck)
    cmds += _shaping(r, "ve-rs", bottleneck)
    return cmds
