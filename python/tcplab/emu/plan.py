"""From a resolved dumbbell scenario to the exact commands that build it on this machine's
kernel: three network namespaces with a unique prefix (senders, router, receivers), veth
pairs between them, addresses, routes with the flows' per-route TCP settings, per-namespace
sysctls, the bottleneck (tbf at the link rate, or a shaper's, with the link's queue as its
child: pfifo/bfifo/pfifo_head_drop, or codel/fq_codel/red/pie with the scenario's parameters
(tc-codel(8), tc-fq_codel(8), tc-red(8), tc-pie(8)); both directions, on the router's TUN
devices) and the delay line on those devices with the policy routing that
sends every crossing packet through it. What each scenario key becomes (or why it is refused) is the table of
settings.py.

Nothing here runs anything: `plan_for()` returns an `EmuPlan` whose `setup` commands
`tcplab emulate --dry-run` prints and `tcplab.emu.run` executes; `teardown` removes every
namespace (and with it every interface, route, qdisc and sysctl of the run).

Layout (A = 10.x, one /16 per run, chosen from the prefix):
    senders ns  ve-s (A.1.1+i for pair i)  <->  ve-rs (A.1.254)  router ns  ve-rd (A.2.254)  <->  ve-d (A.2.1+i)  receivers ns
In the router, the main table sends the receivers' subnet to the TUN device `dl0` (data) and
the senders' to `dl1` (ACKs); each device's egress qdisc is that direction's bottleneck (tbf and
the link's queue). The delay line reads each packet as the tbf releases it, sends it through
the device's transmitter at the link's rate (the serialization, and no faster than the link
after a token burst), holds it for its path's one-way delay and writes it back into its device;
`ip rule iif dl0/dl1` then routes it out of ve-rd or ve-rs.
"""

from __future__ import annotations

import secrets
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from ..units import duration_ns, rate_bps, size_bytes
from . import settings

# Rates this 2-core machine emulates faithfully (docs/emulation.md, Limits: measured valid up
# to 100 Mbit/s, never at 300); outside: a warning.
FAITHFUL_RATE_BPS = (10e6, 100e6)
ROUTER_TABLE = 100
# The bottleneck's directions: the TUN device (and delay-line transmitter) of each.
DATA_TUN, ACK_TUN = "dl0", "dl1"
TUN_QUEUE_PACKETS = 20_000
RECEIVER_PORT = 5001
# tcp_rmem's default (the first advertised window is about half of it) unless an initial
# window needs more.
KERNEL_RMEM_DEFAULT = 131072


@dataclass(frozen=True)
class Pair:
    """Sender/receiver pair i: addresses and the one-way delay of its path."""

    index: int
    sender_ip: str
    receiver_ip: str
    one_way_delay_ns: int


@dataclass(frozen=True)
class DelayRoute:
    """The delay line's route to one host: packets to `network/prefix_len` wait `delay_ns`
    once their device's transmitter has sent them."""

    network: str
    prefix_len: int
    delay_ns: int

    def argument(self) -> str:
        """As `python -m tcplab.emu.delayline --route` takes it."""
        return f"{self.network}/{self.prefix_len}={self.delay_ns}"


@dataclass(frozen=True)
class FlowPlan:
    """One flow as the traffic tools run it: `cc` is the scenario's algorithm, `kernel_cc`
    the kernel's name of it, `socket_options` the sender's arguments that set socket options."""

    index: int
    cc: str
    kernel_cc: str
    pair: Pair
    start_s: float
    stop_s: float | None
    bytes: int | None
    tcp: dict[str, Any]
    socket_options: list[str]


@dataclass
class EmuPlan:
    prefix: str
    namespaces: dict[str, str]  # role ("senders", "router", "receivers") -> name
    pairs: list[Pair]
    flows: list[FlowPlan]
    duration_s: float
    sample_interval_s: float
    bottleneck_rate_bps: float
    mtu: int
    delay_routes: list[DelayRoute]
    setup: list[list[str]] = field(default_factory=list)
    teardown: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    recorded: dict[str, Any] = field(default_factory=dict)  # keys the run records differently

    def commands_text(self) -> str:
        """Every command of the run, one per line, as `--dry-run` prints them."""
        lines = [f"# warning: {warning}" for warning in self.warnings]
        lines += ["# setup", *map(shlex.join, self.setup)]
        lines.append(
            f"# delay line (router namespace): TUN {DATA_TUN} and {ACK_TUN}, transmitters at "
            f"{self.bottleneck_rate_bps / 1e6:g} Mbit/s, then "
            + ", ".join(f"{r.network}/{r.prefix_len} +{r.delay_ns / 1e6:g} ms" for r in self.delay_routes)
        )
        for flow in self.flows:
            lines.append(
                f"# flow {flow.index} (senders namespace): traffic send --cc {flow.kernel_cc} "
                f"--bind {flow.pair.sender_ip} --connect {flow.pair.receiver_ip}:{RECEIVER_PORT} {shlex.join(flow.socket_options)}"
            )
        lines += ["# teardown", *map(shlex.join, self.teardown)]
        return "\n".join(lines)


def plan_for(scenario: dict[str, Any], prefix: str | None = None) -> EmuPlan:
    """The plan of a resolved scenario; raises ScenarioError naming the first key the
    emulation backend cannot put in effect (with what it allows, settings.py)."""
    recorded, warnings = settings.check(scenario)
    topology = scenario["topology"]
    bottleneck, access = topology["bottleneck"], topology["access"]
    rate = rate_bps(bottleneck["rate"])
    if not FAITHFUL_RATE_BPS[0] <= rate <= FAITHFUL_RATE_BPS[1]:
        warnings.append(
            f"topology.bottleneck.rate {bottleneck['rate']} is outside the 10-100Mbps this machine emulates faithfully; check the run's validity"
        )
    prefix = prefix or f"tl{secrets.token_hex(3)}"
    octet = 16 + int(prefix[-4:], 16) % 200  # 10.<octet>.x.y: runs with different prefixes rarely share it
    pairs_count = int(topology["pairs"])
    access_delays = topology.get("access_delays") or [access["delay"]] * pairs_count
    pairs = [
        Pair(
            index=i,
            sender_ip=f"10.{octet}.1.{1 + i}",
            receiver_ip=f"10.{octet}.2.{1 + i}",
            one_way_delay_ns=duration_ns(bottleneck["delay"]) + duration_ns(access_delays[i]) + duration_ns(access["delay"]),
        )
        for i in range(pairs_count)
    ]
    flows = []
    for i, flow in enumerate(scenario["flows"]):
        kind = flow["cc"]["kind"] if isinstance(flow["cc"], dict) else flow["cc"]
        stop = flow.get("stop")
        flows.append(
            FlowPlan(
                index=i,
                cc=kind,
                kernel_cc=settings.kernel_cc(kind),
                pair=pairs[int(flow["src"][1:])],
                start_s=duration_ns(flow.get("start", "0s")) / 1e9,
                stop_s=None if stop is None else duration_ns(stop) / 1e9,
                bytes=None if flow.get("bytes") is None else size_bytes(flow["bytes"]),
                tcp=flow["tcp"],
                socket_options=_socket_options(flow["tcp"]),
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
        mtu=int(bottleneck["mtu"]),
        delay_routes=[DelayRoute(p.receiver_ip, 32, p.one_way_delay_ns) for p in pairs]
        + [DelayRoute(p.sender_ip, 32, p.one_way_delay_ns) for p in pairs],
        warnings=warnings,
        recorded=recorded,
    )
    result.setup = _setup_commands(result, bottleneck, octet)
    result.teardown = [["ip", "netns", "delete", name] for name in namespaces.values()]
    return result


def _socket_options(tcp: dict[str, Any]) -> list[str]:
    """The sender's socket options (traffic.py sets them): TCP_MAXSEG always, the
    others where the flow differs from the kernel's default."""
    options = ["--mss", str(tcp["mss"])]
    rto_max_ms = duration_ns(tcp["max_rto"]) // 1_000_000
    if rto_max_ms != settings.KERNEL_RTO_MAX_MS:
        options += ["--rto-max-ms", str(rto_max_ms)]
    if tcp["pacing"] == "fq":
        options.append("--pacing")
    return options


def _namespace_sysctls(plan_: EmuPlan) -> list[str]:
    """The TCP sysctls of the senders' and receivers' namespaces, from flow 0's settings
    (settings.py refuses flows that differ in them): tcp_rmem / tcp_wmem whose maxima let
    autotuning reach the scenario's buffers (twice the size: the kernel counts skb overhead
    against them, tcp_adv_win_scale) and whose default admits the largest initial window."""
    tcp = plan_.flows[0].tcp
    snd, rcv = size_bytes(tcp["snd_buf"]), size_bytes(tcp["rcv_buf"])
    first_window = max(f.tcp["initial_cwnd"] * (f.tcp["mss"] + settings.TCP_IP_HEADER_BYTES) for f in plan_.flows)
    rmem_default = max(KERNEL_RMEM_DEFAULT, 2 * first_window)
    return [
        f"net.ipv4.tcp_wmem=4096 16384 {2 * snd}",
        f"net.ipv4.tcp_rmem=4096 {rmem_default} {max(2 * rcv, rmem_default)}",
        "net.ipv4.tcp_no_metrics_save=1",
        f"net.ipv4.tcp_sack={int(tcp['sack'])}",
        "net.ipv4.tcp_timestamps=1",
        "net.ipv4.tcp_window_scaling=1",
        "net.ipv4.tcp_ecn=2",  # request ECN only on routes with `features ecn`; accept it
        f"net.ipv4.tcp_slow_start_after_idle={int(tcp['slow_start_after_idle'])}",
        # RACK (1) and the tail loss probe (3), or DupThresh alone with neither (0, 0)
        *(
            ["net.ipv4.tcp_recovery=1", "net.ipv4.tcp_early_retrans=3"]
            if tcp["recovery"] == "rack-tlp"
            else ["net.ipv4.tcp_recovery=0", "net.ipv4.tcp_early_retrans=0"]
        ),
        f"net.ipv4.tcp_limit_output_bytes={settings.TCP_LIMIT_OUTPUT_BYTES}",
        # TSO deferral's window fraction, the kernel's default, which the simulator follows
        "net.ipv4.tcp_tso_win_divisor=3",
        # duplicate-SACK reports and F-RTO, under which the kernel undoes spurious reductions
        "net.ipv4.tcp_dsack=1",
        "net.ipv4.tcp_frto=2",
    ]


def _pair_routes(plan_: EmuPlan, senders: str, receivers: str, octet: int) -> list[list[str]]:
    """A host route per pair in each direction carrying the pair's per-route TCP settings
    (those of its first flow; settings.py refuses flows of one pair that differ in them)."""
    cmds = []
    for pair in plan_.pairs:
        tcp = next((f.tcp for f in plan_.flows if f.pair == pair), None)
        if tcp is None:
            continue
        forward = [
            "ip",
            "-n",
            senders,
            "route",
            "add",
            f"{pair.receiver_ip}/32",
            "via",
            f"10.{octet}.1.254",
            "dev",
            "ve-s",
            "initcwnd",
            str(tcp["initial_cwnd"]),
            "rto_min",
            f"{duration_ns(tcp['min_rto']) // 1_000_000}ms",
        ]
        if tcp["ecn"]:
            forward += ["features", "ecn"]
        back = [
            "ip",
            "-n",
            receivers,
            "route",
            "add",
            f"{pair.sender_ip}/32",
            "via",
            f"10.{octet}.2.254",
            "dev",
            "ve-d",
            "initrwnd",
            str(tcp["initial_cwnd"]),
        ]
        if tcp["ack_every"] == 1:
            back += ["quickack", "1"]
        cmds += [forward, back]
    return cmds


def queue_qdisc(link: dict[str, Any]) -> list[str]:
    """The link's queue as the arguments of its tc qdisc (the tbf's child), from the resolved
    discipline and buffer (settings.py refuses what these cannot put in effect)."""
    queue = link["queue"]
    return _DISCIPLINES[settings.queue_kind(queue)](queue, link)


def _packets(link: dict[str, Any]) -> str:
    return link["buffer"].removesuffix("pkt")


def _us(ms: float) -> str:
    return f"{settings.whole_microseconds(ms)}us"


def _flag(on: bool, name: str) -> str:
    return name if on else f"no{name}"


def _ce_threshold(queue: dict[str, Any]) -> list[str]:
    """CoDel's ce_threshold, left out when off (0 would mark every ECT packet)."""
    return ["ce_threshold", _us(queue["ce_threshold_ms"])] if queue["ce_threshold_ms"] else []


def _fifo(_: Any, link: dict[str, Any]) -> list[str]:
    if link["buffer"].endswith("pkt"):
        return ["pfifo", "limit", _packets(link)]
    return ["bfifo", "limit", str(size_bytes(link["buffer"]))]


def _head_drop(_: Any, link: dict[str, Any]) -> list[str]:
    return ["pfifo_head_drop", "limit", _packets(link)]


def _codel(queue: dict[str, Any], link: dict[str, Any]) -> list[str]:
    """tc-codel(8); times in whole microseconds as tcplab's CoDel takes them."""
    return [
        "codel",
        "limit",
        _packets(link),
        "target",
        _us(queue["target_ms"]),
        "interval",
        _us(queue["interval_ms"]),
        _flag(queue["ecn"], "ecn"),
        *_ce_threshold(queue),
    ]


def _fq_codel(queue: dict[str, Any], link: dict[str, Any]) -> list[str]:
    """tc-fq_codel(8)."""
    return [
        "fq_codel",
        "limit",
        _packets(link),
        "flows",
        str(queue["flows"]),
        "quantum",
        str(queue["quantum"]),
        "target",
        _us(queue["target_ms"]),
        "interval",
        _us(queue["interval_ms"]),
        _flag(queue["ecn"], "ecn"),
        *_ce_threshold(queue),
        "drop_batch",
        str(queue["drop_batch"]),
        "memory_limit",
        str(queue["memory_limit"]),
    ]


def _pie(queue: dict[str, Any], link: dict[str, Any]) -> list[str]:
    """tc-pie(8): alpha and beta in sixteenths (sch_pie scales them by 1/16)."""
    return [
        "pie",
        "limit",
        _packets(link),
        "target",
        _us(queue["target_ms"]),
        "tupdate",
        _us(queue["tupdate_ms"]),
        "alpha",
        str(round(queue["alpha"] * 16)),
        "beta",
        str(round(queue["beta"] * 16)),
        _flag(queue["ecn"], "ecn"),
        _flag(queue["bytemode"], "bytemode"),
        "dq_rate_estimator" if queue["dq_rate_estimator"] else "no_dq_rate_estimator",
    ]


def _red(queue: dict[str, Any], link: dict[str, Any]) -> list[str]:
    """tc-red(8) with a byte buffer: thresholds, burst and probability as the scenario has them
    (tc derives a 0 min, max or burst as tcplab does), `bandwidth` the link's rate (for the
    idle decay)."""
    flags = [name for name in ("ecn", "harddrop", "adaptive") if queue[name]]
    return [
        "red",
        "limit",
        str(size_bytes(link["buffer"])),
        "min",
        str(queue["min_th"]),
        "max",
        str(queue["max_th"]),
        "avpkt",
        str(queue["avpkt"]),
        "burst",
        str(queue["burst"]),
        "probability",
        repr(queue["probability"]),
        "bandwidth",
        f"{int(rate_bps(link['rate']))}bit",
        *flags,
    ]


_DISCIPLINES = {"droptail": _fifo, "headdrop": _head_drop, "codel": _codel, "fq_codel": _fq_codel, "pie": _pie, "red": _red}


def _tbf(link: dict[str, Any], shaper: dict[str, Any] | None) -> list[str]:
    """The direction's token bucket. At the link rate: a bucket of at least 1 ms of tokens
    (two packets), the delay line's transmitter then spacing the packets at the link rate.
    Under a slower shaper: the shaper's rate and burst, with the link rate as the peak rate
    (a peak bucket of one packet), so a packet leaves the queue when the shaper's bucket
    allows and no faster than the link sends, as tcplab's shaper (token_bucket.rs)."""
    rate = int(rate_bps(link["rate"]))
    if shaper is not None and rate_bps(shaper["rate"]) < rate:
        return [
            "tbf",
            "rate",
            f"{int(rate_bps(shaper['rate']))}bit",
            "burst",
            str(size_bytes(shaper["burst"])),
            "peakrate",
            f"{rate}bit",
            "mtu",
            str(link["mtu"]),
            "latency",
            "10s",
        ]
    burst = max(2 * int(link["mtu"]), rate // 8 // 1000)  # ≥ 1 ms of tokens
    return ["tbf", "rate", f"{rate}bit", "burst", str(burst), "latency", "10s"]


def _shaping(ns: str, device: str, link: dict[str, Any], shaper: dict[str, Any] | None) -> list[list[str]]:
    """The tbf (root 1:) with the link's queue as its child (10:), on a TUN device: no
    link-layer header, so the tbf counts IP packet sizes as the simulator's link rates do."""
    return [
        ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", device, "root", "handle", "1:", *_tbf(link, shaper)],
        ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", *queue_qdisc(link)],
    ]


def _setup_commands(plan_: EmuPlan, bottleneck: dict[str, Any], octet: int) -> list[list[str]]:
    s, r, d = plan_.namespaces["senders"], plan_.namespaces["router"], plan_.namespaces["receivers"]
    net1, net2 = f"10.{octet}.1.0/24", f"10.{octet}.2.0/24"
    mtu = str(plan_.mtu)
    cmds: list[list[str]] = [["ip", "netns", "add", ns] for ns in (s, r, d)]
    # IPv4 only: no IPv6 neighbour discovery chatter on the path or into the delay line.
    for ns in (s, r, d):
        cmds.append(
            [
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-q",
                "-w",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]
        )
    cmds += [
        ["ip", "-n", s, "link", "add", "ve-s", "type", "veth", "peer", "name", "ve-rs", "netns", r],
        ["ip", "-n", d, "link", "add", "ve-d", "type", "veth", "peer", "name", "ve-rd", "netns", r],
    ]
    # The path's MTU; GSO and GRO off on the router's and receivers' veths, so queues hold
    # MTU-size packets. The senders' veth keeps the kernel's GSO sizes, so TCP builds its GSO
    # bursts (tcp_tso_autosize) as on a default device, but has no segmentation offloads: the
    # kernel cuts each burst into MTU-size packets that leave back to back, as from a NIC.
    for ns, dev in ((r, "ve-rs"), (r, "ve-rd"), (d, "ve-d")):
        cmds.append(
            ["ip", "-n", ns, "link", "set", dev, "mtu", mtu, "gso_max_size", mtu, "gso_max_segs", "1", "gro_max_size", mtu]
        )
    cmds.append(["ip", "-n", s, "link", "set", "ve-s", "mtu", mtu, "gro_max_size", mtu])
    cmds.append(["ip", "netns", "exec", s, sys.executable, "-m", "tcplab.emu.offloads", "ve-s"])
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
        *_pair_routes(plan_, s, d, octet),
        [
            "ip",
            "netns",
            "exec",
            r,
            "sysctl",
            "-q",
            "-w",
            "net.ipv4.ip_forward=1",
            "net.ipv4.conf.all.rp_filter=0",
            "net.ipv4.conf.default.rp_filter=0",
        ],
    ]
    for ns in (s, d):
        cmds.append(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", *_namespace_sysctls(plan_)])
    # Each direction's TUN device, its bottleneck qdisc, and the routing through it: data
    # (to the receivers' subnet) through dl0, ACKs through dl1, then on from the device the
    # delay line wrote the packet back into.
    # The shaper shapes the forward direction, the data's (settings.py refuses the reverse one).
    for tun, subnet, out, shaper in ((DATA_TUN, net2, "ve-rd", bottleneck.get("shaper")), (ACK_TUN, net1, "ve-rs", None)):
        cmds += [
            ["ip", "-n", r, "tuntap", "add", "dev", tun, "mode", "tun"],
            # The ring between the tbf and the delay line's reader holds what the tbf releases
            # while the reader is not scheduled.
            ["ip", "-n", r, "link", "set", tun, "mtu", mtu, "txqueuelen", str(TUN_QUEUE_PACKETS)],
            ["ip", "-n", r, "link", "set", tun, "up"],
            ["ip", "netns", "exec", r, "sysctl", "-q", "-w", f"net.ipv4.conf.{tun}.rp_filter=0"],
            ["ip", "-n", r, "route", "replace", subnet, "dev", tun],
            ["ip", "-n", r, "route", "add", subnet, "dev", out, "table", str(ROUTER_TABLE)],
            ["ip", "-n", r, "rule", "add", "iif", tun, "lookup", str(ROUTER_TABLE)],
            *_shaping(r, tun, bottleneck, shaper),
        ]
    return cmds
