"""Every key of a resolved scenario and what the emulation backend does with it: one table,
`KERNEL_SETTINGS` (docs/emulation.md shows it). A key is either applied (how: a socket option,
a route attribute, a namespace sysctl, a qdisc, the delay line) or its value must be one the
kernel already has, else the scenario is refused in one line naming the key and what is allowed.
Nothing is recorded that was not in effect: the only key the run records differently is
`record.rtt`, with a warning. A key missing from the table is refused, so a new scenario key
cannot be ignored silently.

Kernel values cited are Linux's (include/net/tcp.h, net/ipv4/tcp_cubic.c) as of 6.x.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core import ScenarioError
from ..units import duration_ns, rate_bps, size_bytes
from . import kernel

# Link and TCP sizes the kernel backend relies on.
TCP_IP_HEADER_BYTES = 52  # IPv4 20 + TCP 20 + the timestamp option 12 (tcp_timestamps=1)
TIMESTAMP_OPTION_BYTES = 12
TCP_MIN_MSS = 88  # TCP_MAXSEG below it is EINVAL (include/net/tcp.h)
MAX_TCP_WINDOW = 32767  # TCP_MAXSEG above it is EINVAL
MTU_RANGE = (576, 9000)  # IPv4's minimum datagram size to jumbo frames
# Kernel constants the scenario's defaults model (include/net/tcp.h).
KERNEL_INITIAL_RTO = "1s"  # TCP_TIMEOUT_INIT
KERNEL_DELACK = "40ms"  # TCP_ATO_MIN, the delayed-ACK timeout it starts from
KERNEL_QUICKACKS = 16  # TCP_MAX_QUICKACKS
# The simulator's TCP Small Queues cap (net.ipv4.tcp_limit_output_bytes, Linux's default since 6.7),
# set in every namespace so that older kernels (1 MiB) match it.
TCP_LIMIT_OUTPUT_BYTES = 4 << 20
KERNEL_RTO_MAX_MS = 120_000  # TCP_RTO_MAX; TCP_RTO_MAX_MS accepts 1000..120000
MIN_RTO_MAX_MS = 1000
# Above this rate a 2-core machine cannot emulate faithfully (docs/emulation.md, Limits).
REFUSED_ABOVE_BPS = 1e9
# The access links are veths at memory speed without a queue (plan.py): faithful when the
# simulator's access links would neither queue nor add delay that matters.
ACCESS_RATE_FACTOR = 10
ACCESS_BUFFER_MIN_PACKETS = 100
# Sampling below this lags: each interval reads TCP_INFO in every sender and both qdiscs'
# counters over netlink in the orchestrator (1.4 ms median, 6 ms p99 on a loaded 2-core machine).
MIN_SAMPLE_INTERVAL = "5ms"
# The scenario's algorithm names that the kernel calls differently.
KERNEL_CC_NAMES = {"newreno": "reno"}
CUBIC_PARAMETERS = Path("/sys/module/tcp_cubic/parameters")


@dataclass(frozen=True)
class Where:
    """Where a key is checked: the whole scenario and, for `flows.*` keys, the flow."""

    scenario: dict[str, Any]
    flow: int | None = None

    def flow_tcp(self, index: int) -> dict[str, Any]:
        return self.scenario["flows"][index]["tcp"]

    def pair_peers(self) -> list[int]:
        """Earlier flows on the same sender/receiver pair (they share its routes)."""
        flows = self.scenario["flows"]
        assert self.flow is not None
        return [i for i in range(self.flow) if flows[i].get("src") == flows[self.flow].get("src")]


Check = Callable[[Any, Where], str | None]


@dataclass(frozen=True)
class Handling:
    """How the kernel backend puts a key in effect (`how`); `refuse` returns, for a value it
    cannot put in effect, what is wrong and what is allowed; `records` is what the run
    records instead (only for outputs the kernel cannot produce)."""

    how: str
    refuse: Check | None = None  # a problem starting with "." names a key inside the value
    records: Any = None


# --- checks --------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    """A value as the scenario's errors write it: `true`, `0.5`, `"linux"`, a quantity bare
    (`40ms`)."""
    if isinstance(value, str) and value[:1].isdigit():
        return value
    return json.dumps(value)


def _exactly(allowed: Any, why: str) -> Check:
    def check(value: Any, _: Where) -> str | None:
        return None if value == allowed else f"{_shown(value)} is not emulated: {why}; allowed: {_shown(allowed)}"

    return check


def _absent(why: str) -> Check:
    def check(value: Any, _: Where) -> str | None:
        return None if value is None else f"{why}; allowed: none"

    return check


def _no_loss(value: float | dict[str, Any], _: Where) -> str | None:
    if isinstance(value, dict):
        return "a loss model (gilbert-elliott) needs netem's gemodel, which this kernel lacks; allowed: 0"
    return None if not value else f"{value} needs random loss (netem), which this kernel lacks; allowed: 0"


# Path models the simulator has and this kernel cannot emulate (docs/path-models.md).
_NO_TRACE = _absent("trace-driven links need a delivery schedule per ms (mm-link), which the delay line and tbf lack")
_NO_JITTER = _absent("jitter needs netem's per-packet delay, which this kernel lacks")
_NO_AGGREGATION = _absent("releasing packets in batches needs a timed qdisc (netem's slot), which this kernel lacks")


def _sample_interval(value: str, _: Where) -> str | None:
    if duration_ns(value) >= duration_ns(MIN_SAMPLE_INTERVAL):
        return None
    return f"{value} is shorter than the kernel backend samples on time (TCP_INFO per sender, qdisc counters over netlink); allowed: at least {MIN_SAMPLE_INTERVAL}"


def _each_flow(_: Any, where: Where) -> str | None:
    """The kernel backend records each flow: it refuses a scenario whose flows the simulator
    would record in groups (`record.flows`, `record.aggregate_above`)."""
    record = where.scenario["record"]
    flows = len(where.scenario["flows"])
    grouped = record["flows"] == "groups" or (record["flows"] == "auto" and flows > record["aggregate_above"])
    if not grouped:
        return None
    return f'flow groups are not emulated: the kernel backend records each flow; allowed: record.flows = "each", or "auto" with record.aggregate_above at least {flows}'


def _bottleneck_rate(value: str, _: Where) -> str | None:
    if rate_bps(value) <= REFUSED_ABOVE_BPS:
        return None
    return (
        f"{value} is more than this 2-core machine can emulate faithfully; allowed: at most 1Gbps (about 10-100Mbps is faithful)"
    )


# The link's queue disciplines: FIFOs, always in the kernel (sch_fifo.c), and the AQMs whose
# qdisc of the same name the kernel may lack (kernel.py); plan.py builds each.
FIFO_QUEUES = ("droptail", "headdrop")
AQM_QUEUES = ("codel", "fq_codel", "red", "pie")
# sch_pie's burst allowance (pie_vars_init), which tc cannot set.
PIE_MAX_BURST_MS = 150.0


def queue_kind(value: Any) -> str:
    """The discipline of a resolved `queue` (a name, or a table with `kind`)."""
    return value if isinstance(value, str) else value["kind"]


def kernel_queues() -> list[str]:
    """The disciplines this kernel has a qdisc for (an AQM counts where unknown: tc tries)."""
    return [*FIFO_QUEUES, *(kind for kind in AQM_QUEUES if kernel.has(kind) is not False)]


def _queue(value: Any, where: Where) -> str | None:
    kind = queue_kind(value)
    if kind not in FIFO_QUEUES + AQM_QUEUES:
        return f"{kind!r} has no kernel qdisc here; allowed: {', '.join(kernel_queues())}"
    if kind in AQM_QUEUES and kernel.has(kind) is False:
        return f"{kind} needs the kernel's {kernel.missing(kind)}, which this kernel does not have; allowed here: {', '.join(kernel_queues())}"
    in_packets = where.scenario["topology"]["bottleneck"]["buffer"].endswith("pkt")
    if kind == "headdrop" and not in_packets:
        return "headdrop needs a buffer in packets (pfifo_head_drop); allowed: droptail, or a buffer in pkt"
    if kind in ("codel", "fq_codel", "pie") and not in_packets:
        return f"{kind}'s limit counts packets in Linux (sch_{kind}), tcplab's bytes with a byte buffer; allowed: a topology.bottleneck.buffer in pkt"
    if kind == "red" and in_packets:
        return (
            "red with a buffer in packets averages packets, Linux's sch_red bytes (a 52 B ACK weighs "
            "as much as a full packet in one, 1/29 of it in the other); allowed: a topology.bottleneck.buffer in bytes"
        )
    return {"pie": _pie, "red": _red}.get(kind, lambda _: None)(value)


def _pie(queue: dict[str, Any]) -> str | None:
    if queue["max_burst_ms"] != PIE_MAX_BURST_MS:
        return (
            f".max_burst_ms: {_shown(queue['max_burst_ms'])} is not emulated: sch_pie's burst allowance is fixed "
            f"(pie_vars_init) and tc has no setting for it; allowed: {_shown(PIE_MAX_BURST_MS)}"
        )
    for name in ("alpha", "beta"):
        if queue[name] == 0:
            return (
                f".{name}: 0 is not emulated: tc sends no {name} of 0 (q_pie.c), so sch_pie would keep its "
                f"default; allowed: 0.0625 to 2"
            )
    for name in ("target_ms", "tupdate_ms"):
        if whole_microseconds(queue[name]) is None:
            return f".{name}: {_shown(queue[name])} is not emulated: tc takes whole microseconds; allowed: a multiple of 0.001"
    ticks = kernel.hz()
    jiffy_us = 1_000_000 // ticks if ticks else None
    if jiffy_us and whole_microseconds(queue["tupdate_ms"]) % jiffy_us:
        return (
            f".tupdate_ms: {_shown(queue['tupdate_ms'])} is not emulated: sch_pie's timer counts whole jiffies "
            f"(usecs_to_jiffies), {jiffy_us / 1000:g} ms at this kernel's HZ {ticks}; allowed: a multiple of {jiffy_us / 1000:g}"
        )
    return None


def _red(queue: dict[str, Any]) -> str | None:
    if queue["gentle"]:
        return ".gentle: true is not emulated: Linux's sch_red has no gentle mode; allowed: false"
    return None


def whole_microseconds(ms: float) -> int | None:
    """A time in ms as tc's whole microseconds, or None if it is not a whole number of them."""
    us = round(ms * 1000)
    return us if abs(us - ms * 1000) < 1e-6 else None


def _access_queue(value: Any, _: Where) -> str | None:
    kind = queue_kind(value)
    if kind in FIFO_QUEUES:
        return None
    return (
        f"{kind} is not emulated: it drops, marks or paces before its buffer fills, and the access links "
        f"are veths without a queue; allowed: {', '.join(FIFO_QUEUES)}"
    )


def _policer(value: Any, _: Where) -> str | None:
    if kernel.has("police") is False:
        return f"policing needs the kernel's {kernel.missing('police')}, which this kernel does not have; allowed: none"
    return "policing is not emulated: the backend sets up no police filter on the router's input, whose drops its link counters would miss; allowed: none"


def _mtu(value: int, where: Where) -> str | None:
    low, high = MTU_RANGE
    if not low <= value <= high:
        return f"{value} is outside what the veths and the delay line are set up for; allowed: {low} to {high}"
    return None


def _same_mtu(value: int, where: Where) -> str | None:
    bottleneck = where.scenario["topology"]["bottleneck"]["mtu"]
    if value == bottleneck:
        return None
    return f"{value} differs from topology.bottleneck.mtu {bottleneck}; the emulated path has one MTU on every veth; allowed: {bottleneck}"


def _access_rate(value: str, where: Where) -> str | None:
    bottleneck = where.scenario["topology"]["bottleneck"]["rate"]
    if rate_bps(value) >= ACCESS_RATE_FACTOR * rate_bps(bottleneck):
        return None
    least = ACCESS_RATE_FACTOR * rate_bps(bottleneck) / 1e6
    return (
        f"{value} is not emulated: access links are unshaped veths, faithful only when at least "
        f"{ACCESS_RATE_FACTOR}x faster than the bottleneck ({bottleneck}); allowed: at least {least:g}Mbps"
    )


def _buffer_packets(buffer: str, mtu: int) -> float:
    """A queue limit in full-size packets ("330pkt", or bytes over the MTU)."""
    return float(buffer.removesuffix("pkt")) if buffer.endswith("pkt") else size_bytes(buffer) / mtu


def _access_buffer(value: str, where: Where) -> str | None:
    least = max([ACCESS_BUFFER_MIN_PACKETS] + [f["tcp"]["initial_cwnd"] for f in where.scenario["flows"]])
    if _buffer_packets(value, where.scenario["topology"]["access"]["mtu"]) >= least:
        return None
    return (
        f"{value} is not emulated: access links have no queue of their own, faithful only when the "
        f"simulator's would not fill (a sender's bursts: its initial window, a few packets per ACK); "
        f"allowed: at least {least}pkt"
    )


def _mss(value: int, where: Where) -> str | None:
    mtu = where.scenario["topology"]["bottleneck"]["mtu"]
    low, high = TCP_MIN_MSS - TIMESTAMP_OPTION_BYTES, min(mtu - TCP_IP_HEADER_BYTES, MAX_TCP_WINDOW - TIMESTAMP_OPTION_BYTES)
    if low <= value <= high:
        return None
    return (
        f"{value} is not emulated: kernel TCP never sends a segment larger than the path MTU "
        f"({mtu} with {TCP_IP_HEADER_BYTES} B of headers) and TCP_MAXSEG takes {TCP_MIN_MSS}-{MAX_TCP_WINDOW}; "
        f"allowed: {low} to {high} (or a larger topology.bottleneck.mtu and topology.access.mtu)"
    )


def _whole_milliseconds(value: str) -> bool:
    return duration_ns(value) % 1_000_000 == 0


def _min_rto(value: str, where: Where) -> str | None:
    if _whole_milliseconds(value) and duration_ns(value) > 0:
        return _same_on_pair(value, where, "min_rto", "rto_min")
    return (
        f"{value} is not emulated: the route attribute rto_min counts whole milliseconds; allowed: a positive whole number of ms"
    )


def _max_rto(value: str, _: Where) -> str | None:
    ms = duration_ns(value) / 1e6
    if _whole_milliseconds(value) and MIN_RTO_MAX_MS <= ms <= KERNEL_RTO_MAX_MS:
        return None
    return f"{value} is not emulated: TCP_RTO_MAX_MS takes whole milliseconds from 1s to 120s; allowed: 1s to 120s"


def _initial_cwnd(value: int, where: Where) -> str | None:
    if value < 1:
        return f"{value} is not emulated: a route's initcwnd of 0 means the kernel's default; allowed: 1 or more"
    return _same_on_pair(value, where, "initial_cwnd", "initcwnd")


def _ecn(value: bool, where: Where) -> str | None:
    return _same_on_pair(value, where, "ecn", "features ecn")


def _ack_every(value: int, where: Where) -> str | None:
    if value not in (1, 2):
        return f"{value} is not emulated: the kernel ACKs at least every second full segment (or every one with quickack); allowed: 1, 2"
    return _same_on_pair(value, where, "ack_every", "quickack")


def _same_on_pair(value: Any, where: Where, key: str, attribute: str) -> str | None:
    """Settings made per route are shared by the flows of one sender/receiver pair."""
    for peer in where.pair_peers():
        other = where.flow_tcp(peer)[key]
        if other != value:
            return f"{_shown(value)} differs from flows.{peer}.tcp.{key} {_shown(other)} on the same pair; the kernel backend sets it per route ({attribute}); allowed: {_shown(other)}"
    return None


def _same_in_namespace(key: str, sysctl: str) -> Check:
    """Settings made per namespace are shared by every flow."""

    def check(value: Any, where: Where) -> str | None:
        first = where.flow_tcp(0)[key]
        if value == first:
            return None
        return f"{_shown(value)} differs from flows.0.tcp.{key} {_shown(first)}; the kernel backend sets it per namespace ({sysctl}), for every flow at once; allowed: {_shown(first)}"

    return check


def _src(value: str, _: Where) -> str | None:
    if value.startswith("s") and value[1:].isdigit():
        return None
    return f"{_shown(value)} is not emulated: flows start at a sender; allowed: s<i>"


def _dst(value: str, where: Where) -> str | None:
    src = where.scenario["flows"][where.flow]["src"]
    if value == f"r{src[1:]}":
        return None
    return f'{_shown(value)} is not emulated: a flow from {src} goes to its own receiver; allowed: "r{src[1:]}"'


# --- congestion control -------------------------------------------------------------------

# tcp_cubic's module parameters (net/ipv4/tcp_cubic.c) as the scenario's CUBIC parameters:
# name -> (module parameter, scenario value -> module value, module value -> scenario value).
_HYSTART_DETECT = {"ack-train": 1, "delay": 2, "both": 3}
CUBIC_MODULE: dict[str, tuple[str, Callable[[Any], Any], Callable[[int], Any]]] = {
    "beta": ("beta", lambda v: round(v * 1024), lambda m: m / 1024),  # BICTCP_BETA_SCALE 1024
    "c": ("bic_scale", lambda v: round(v * 1024 / 10), lambda m: m * 10 / 1024),
    "fast_convergence": ("fast_convergence", int, bool),
    "tcp_friendliness": ("tcp_friendliness", int, bool),
    "hystart": ("hystart", lambda v: int(v) if isinstance(v, bool) else None, bool),
    "hystart_detect": ("hystart_detect", _HYSTART_DETECT.get, {m: n for n, m in _HYSTART_DETECT.items()}.get),
    "hystart_low_window": ("hystart_low_window", int, int),
    "hystart_ack_delta_ms": ("hystart_ack_delta_us", lambda v: round(v * 1000), lambda m: m / 1000),
}


def kernel_cc(kind: str) -> str:
    """The kernel's name of the scenario's algorithm `kind`."""
    return KERNEL_CC_NAMES.get(kind, kind)


def cc_defaults(kind: str) -> dict[str, Any]:
    """The resolved parameters of algorithm `kind` with nothing set."""
    from ..scenario import validate

    document = {
        "duration": "1s",
        "topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps", "delay": "1ms"}},
        "flows": [{"cc": kind}],
    }
    return validate(document)["flows"][0]["cc"]


def host_cubic() -> dict[str, int] | None:
    """tcp_cubic's current module parameters on this host (None where it exposes none)."""
    if not CUBIC_PARAMETERS.is_dir():
        return None
    return {
        p.name: int(p.read_text().split()[0]) for p in CUBIC_PARAMETERS.iterdir() if p.read_text().strip().lstrip("-").isdigit()
    }


def _cc(value: Any, where: Where) -> str | None:
    """An algorithm's parameters are the host's own: tcp_cubic's module parameters where the
    host exposes them (global to the machine, so never written here), else the mainline
    constants that the scenario's defaults model."""
    table = value if isinstance(value, dict) else {"kind": value}
    kind = table["kind"]
    host = (host_cubic() if kind == "cubic" else None) or {}
    for name, default in cc_defaults(kind).items():
        parameter, to_module, from_module = CUBIC_MODULE.get(name, (None, None, None))  # host: cubic's only
        if parameter in host:
            if to_module(table[name]) != host[parameter]:
                return (
                    f".{name}: {_shown(table[name])} is not in effect on this host: tcp_cubic's {parameter} is {host[parameter]} "
                    f"({CUBIC_PARAMETERS}, global to the machine, which tcplab does not change); allowed: {_shown(from_module(host[parameter]))}"
                )
        elif table.get(name) != default:
            return (
                f".{name}: {_shown(table.get(name))} is not emulated: the kernel's tcp_{kernel_cc(kind)} has no per-socket "
                f"parameters (only compiled-in constants, or module parameters global to the machine); allowed: {_shown(default)} (the kernel's)"
            )
    return None


def _initial_ssthresh(value: Any, where: Where) -> str | None:
    if value != "inf":
        return f'{_shown(value)} is not emulated: the kernel starts every connection with an infinite ssthresh (no per-socket setting); allowed: "inf"'
    host = host_cubic() if where.scenario["flows"][where.flow]["cc"]["kind"] == "cubic" else None
    if host and host.get("initial_ssthresh"):
        return f'"inf" is not in effect on this host: tcp_cubic\'s initial_ssthresh is {host["initial_ssthresh"]} ({CUBIC_PARAMETERS}); allowed: a host with initial_ssthresh 0'
    return None


# --- the table -----------------------------------------------------------------------------

KERNEL_SETTINGS: dict[str, Handling] = {
    "name": Handling("names the run directory; no effect on the network"),
    "duration": Handling("how long the senders run and the run is sampled"),
    "seed": Handling(
        "the run's label only: the emulation draws nothing at random, and the kernel's own randomness "
        "(initial sequence numbers, ports, BBR's probing phase) is not seeded"
    ),
    "sample_interval": Handling(
        "each sender reads TCP_INFO, the orchestrator the qdisc counters, at this period", _sample_interval
    ),
    "record.rtt": Handling(
        "not measured on the kernel (no per-ACK RTT samples): rtt.parquet is not written and the run records false",
        records=False,
    ),
    "record.memory_limit": Handling("bounds the simulator's recorded series; the emulation's samples are far smaller"),
    "record.flows": Handling("each flow's TCP_INFO samples are its rows in flows.parquet", _each_flow),
    "record.aggregate_above": Handling(
        'with record.flows = "auto": the flow count above which flows would be grouped (refused under record.flows)'
    ),
    "record.links": Handling(
        "whatever this says, the bottleneck's two directions are sampled (the links the flows share): "
        "the access links are veths without a queue of their own"
    ),
    "topology.kind": Handling("the dumbbell's three namespaces", _exactly("dumbbell", "only dumbbells have wired veths here")),
    "topology.pairs": Handling("one address per pair on the senders' and on the receivers' veth"),
    "topology.access_delays": Handling("added to each pair's one-way delay in the delay line"),
    "topology.wifi": Handling("refused", _absent("radio access cannot be emulated on wired veths")),
    "topology.bottleneck.rate": Handling(
        "tbf rate on the router's TUN devices dl0 (data) and dl1 (ACKs), IP packet sizes, then the delay line's transmitter at the same rate",
        _bottleneck_rate,
    ),
    "topology.bottleneck.delay": Handling("the delay line holds each packet for its path's one-way delay"),
    "topology.bottleneck.buffer": Handling(
        "limit of the tbf's child queue: pfifo (packets) or bfifo (bytes), or the AQM's limit"
    ),
    "topology.bottleneck.queue": Handling(
        "the tbf's child qdisc: droptail: pfifo/bfifo; headdrop: pfifo_head_drop; codel, fq_codel, red, pie: "
        "the qdisc of that name with the discipline's parameters, where the kernel has it",
        _queue,
    ),
    "topology.bottleneck.loss": Handling("refused unless 0", _no_loss),
    "topology.bottleneck.mtu": Handling("mtu (and gso_max_size, gro_max_size) of every veth and of the TUN devices", _mtu),
    "topology.bottleneck.framing": Handling(
        "the delay line's transmitter times IP packets",
        _exactly(0, "link-layer framing is not emulated: the transmitter times IP packets"),
    ),
    "topology.bottleneck.device_queue": Handling(
        "—",
        _exactly(0, "the qdisc feeds the delay line's transmitter directly; a device queue after it is not emulated"),
    ),
    "topology.bottleneck.ecn_threshold": Handling(
        "refused",
        _absent("CE marking by a threshold on a FIFO is not emulated (the AQMs mark by their own ecn and ce_threshold_ms)"),
    ),
    "topology.bottleneck.reverse": Handling("refused", _absent("per-direction overrides are not emulated")),
    "topology.bottleneck.policer": Handling("refused", _policer),
    "topology.bottleneck.shaper": Handling(
        "the data device's tbf runs at the shaper's rate and burst with the link rate as its peak rate "
        "(a one-packet peak bucket), its child the link's queue; moot at or above the link rate: the link's tbf alone"
    ),
    "topology.bottleneck.trace": Handling("refused", _NO_TRACE),
    "topology.bottleneck.jitter": Handling("refused", _NO_JITTER),
    "topology.bottleneck.aggregation": Handling("refused", _NO_AGGREGATION),
    "topology.access.rate": Handling("not shaped (veths at memory speed): only rates that would not matter", _access_rate),
    "topology.access.delay": Handling("added to each pair's one-way delay in the delay line"),
    "topology.access.buffer": Handling("no queue of its own: only buffers that would not fill", _access_buffer),
    "topology.access.queue": Handling(
        "no effect: under the rate and buffer rules the access queue does not fill (FIFOs only)", _access_queue
    ),
    "topology.access.loss": Handling("refused unless 0", _no_loss),
    "topology.access.mtu": Handling("the veths' MTU, equal to the bottleneck's", _same_mtu),
    "topology.access.framing": Handling("no effect: the access links are not shaped"),
    "topology.access.device_queue": Handling("no effect: the access links are not shaped"),
    "topology.access.ecn_threshold": Handling(
        "refused", _absent("CE marking needs a queue, and the access links are veths without one")
    ),
    "topology.access.reverse": Handling("refused", _absent("per-direction overrides are not emulated")),
    "topology.access.policer": Handling(
        "refused", _absent("access links are veths at memory speed without a queue, with no token bucket")
    ),
    "topology.access.shaper": Handling(
        "refused", _absent("access links are veths at memory speed without a queue, with no token bucket")
    ),
    "topology.access.trace": Handling("refused", _NO_TRACE),
    "topology.access.jitter": Handling("refused", _NO_JITTER),
    "topology.access.aggregation": Handling("refused", _NO_AGGREGATION),
    "flows.*.cc": Handling(
        "TCP_CONGESTION on the sender's socket (newreno is the kernel's reno); parameters: the host's own, "
        "compared and never written (tcp_cubic's module parameters are global to the machine; other "
        "algorithms have the mainline constants, the scenario's defaults)",
        _cc,
    ),
    "flows.*.src": Handling("the sender's address s<i>", _src),
    "flows.*.dst": Handling("the receiver's address r<i>", _dst),
    "flows.*.start": Handling("the sender starts writing then"),
    "flows.*.stop": Handling("the sender stops writing then"),
    "flows.*.bytes": Handling("the sender writes that many bytes"),
    "flows.*.app": Handling("refused", _absent("fixed-rate applications are not emulated (bulk or bytes only)")),
    "flows.*.count": Handling("expanded into single flows when the scenario is resolved: the backend runs those"),
    "flows.*.mix": Handling("expanded into single flows, each with its cc, when the scenario is resolved"),
    "tcp.mss": Handling(
        f"TCP_MAXSEG = mss + {TIMESTAMP_OPTION_BYTES} (the timestamp option) on the sender's socket; TCP_INFO snd_mss is checked",
        _mss,
    ),
    "tcp.initial_cwnd": Handling(
        "initcwnd on the senders' route to the flow's receiver, initrwnd (and tcp_rmem's default) on the receivers' route back so the first window fits; TCP_INFO snd_cwnd is checked",
        _initial_cwnd,
    ),
    "tcp.initial_ssthresh": Handling(
        "infinite: no cached route metrics (tcp_no_metrics_save=1) and tcp_cubic's initial_ssthresh 0, checked", _initial_ssthresh
    ),
    "tcp.min_rto": Handling("rto_min on the senders' route to the flow's receiver", _min_rto),
    "tcp.max_rto": Handling("TCP_RTO_MAX_MS on the sender's socket when not the kernel's 120s", _max_rto),
    "tcp.initial_rto": Handling(
        "the kernel's TCP_TIMEOUT_INIT", _exactly(KERNEL_INITIAL_RTO, "the kernel's initial RTO is fixed (TCP_TIMEOUT_INIT)")
    ),
    "tcp.rto": Handling("the kernel's estimator", _exactly("linux", "the kernel's RTT estimator is Linux's")),
    "tcp.sack": Handling(
        "net.ipv4.tcp_sack in the senders' and receivers' namespaces; TCP_INFO options are checked",
        _same_in_namespace("sack", "net.ipv4.tcp_sack"),
    ),
    "tcp.snd_buf": Handling(
        "tcp_wmem maximum (twice the size: skb overhead) in the senders' and receivers' namespaces",
        _same_in_namespace("snd_buf", "net.ipv4.tcp_wmem"),
    ),
    "tcp.rcv_buf": Handling(
        "tcp_rmem maximum (twice the size) in the senders' and receivers' namespaces",
        _same_in_namespace("rcv_buf", "net.ipv4.tcp_rmem"),
    ),
    "tcp.pacing": Handling(
        "fq: SO_MAX_PACING_RATE on the sender's socket, which turns on the kernel's own pacing at the rate fq "
        "enforces (200 % of cwnd/SRTT in slow start, 120 % after); off: none"
    ),
    "tcp.recovery": Handling(
        "net.ipv4.tcp_recovery and net.ipv4.tcp_early_retrans in the senders' and receivers' namespaces "
        "(rack-tlp: 1 and 3, the kernel's defaults; rfc6675: 0 and 0, which also stops the loss probe)",
        _same_in_namespace("recovery", "net.ipv4.tcp_recovery"),
    ),
    "tcp.undo": Handling(
        "net.ipv4.tcp_dsack=1 and net.ipv4.tcp_frto=2 in the senders' and receivers' namespaces (the kernel's defaults)",
        _exactly(
            True,
            "the kernel undoes a reduction its timestamps show spurious (tcp_packet_delayed) whatever "
            "net.ipv4.tcp_dsack and net.ipv4.tcp_frto say",
        ),
    ),
    "tcp.ecn": Handling(
        "features ecn on the senders' route to the flow's receiver (the receivers accept, net.ipv4.tcp_ecn=2); TCP_INFO options are checked",
        _ecn,
    ),
    "tcp.ack_every": Handling(
        "2: the kernel's delayed ACKs; 1: quickack on the receivers' route to the flow's sender", _ack_every
    ),
    "tcp.delack_timeout": Handling(
        "the kernel's TCP_ATO_MIN",
        _exactly(KERNEL_DELACK, "the kernel's delayed-ACK timeout has no per-socket or per-route setting"),
    ),
    "tcp.quickack": Handling(
        "the kernel's TCP_MAX_QUICKACKS", _exactly(KERNEL_QUICKACKS, "the kernel's quickack count at connection start is fixed")
    ),
    "tcp.tsq": Handling(
        f"the kernel's TCP Small Queues, net.ipv4.tcp_limit_output_bytes={TCP_LIMIT_OUTPUT_BYTES} in the senders' and receivers' namespaces",
        _exactly(True, "the kernel's TCP Small Queues cannot be switched off (tcp_small_queue_check)"),
    ),
    "tcp.stack": Handling(
        "the kernel's own TCP",
        _exactly("linux", "the emulation runs the kernel's TCP; ns-3's semantics exist only in the simulator"),
    ),
    "tcp.ns3_version": Handling(
        "nothing: it selects the ns-3 release the simulator's ns3 stack follows",
        _exactly("3.44", "the emulation runs the kernel's TCP; ns-3's releases exist only in the simulator"),
    ),
    "tcp.ato": Handling(
        "the kernel's adaptive delayed-ACK timeout",
        _exactly("linux", "the kernel's delayed-ACK timeout always adapts to the arrivals (tcp_event_data_recv)"),
    ),
    "tcp.slow_start_after_idle": Handling(
        "net.ipv4.tcp_slow_start_after_idle in the senders' and receivers' namespaces",
        _same_in_namespace("slow_start_after_idle", "net.ipv4.tcp_slow_start_after_idle"),
    ),
    "tcp.gso": Handling(
        "the kernel's GSO skbs, sized from the pacing rate (tcp_tso_autosize) and counted by BBR's cwnd and in-flight "
        "budgets (bbr_tso_segs_goal): the senders' veth keeps its GSO sizes (plan.py)",
        _exactly(True, "the kernel always builds GSO skbs (Linux 4.17 and later)"),
    ),
    "tcp.tso_defer": Handling(
        "the kernel's TSO deferral (tcp_tso_should_defer, net.ipv4.tcp_tso_win_divisor=3)",
        _exactly(True, "the kernel's TSO deferral cannot be switched off (tcp_tso_should_defer)"),
    ),
}
"""Every key of a resolved dumbbell scenario: `flows.*` stands for each flow, `tcp.*` for the
scenario's `tcp` table and each flow's own (the flow's values are what is checked)."""

# Tables whose value is one setting (checked as a whole, not key by key).
_WHOLE = {
    "topology.wifi",
    *(f"topology.{link}.{key}" for link in ("bottleneck", "access") for key in ("queue", "reverse", "policer", "shaper")),
    "flows.*.cc",
    "flows.*.app",
    *(f"topology.{link}.{key}" for link in ("bottleneck", "access") for key in ("loss", "jitter", "aggregation")),
}


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    pattern = re.sub(r"^flows\.\d+", "flows.*", path)
    if isinstance(value, dict) and pattern not in _WHOLE:
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and path == "flows":
        for index, item in enumerate(value):
            yield from _leaves(item, f"flows.{index}")
    else:
        yield path, value


def check(scenario: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Refuses (ScenarioError, one line) the first key the kernel backend cannot put in
    effect; returns the keys the run records differently ({path: value}) and their warnings."""
    kind = scenario["topology"].get("kind")
    if kind != "dumbbell":
        raise ScenarioError(f"topology.kind: {kind!r} cannot be emulated; allowed: dumbbell")
    recorded: dict[str, Any] = {}
    warnings = []
    for path, value in _leaves(scenario, ""):
        flow = re.match(r"^flows\.(\d+)\.", path)
        where = Where(scenario, int(flow.group(1)) if flow else None)
        pattern = re.sub(r"^flows\.\d+", "flows.*", re.sub(r"^flows\.\d+\.tcp\.", "tcp.", path))
        if pattern.startswith("tcp.") and not flow:
            continue  # the scenario's tcp table: defaults, checked in each flow's own
        handling = KERNEL_SETTINGS.get(pattern)
        if handling is None:
            raise ScenarioError(
                f"{path}: not known to the emulation backend; it applies only the keys listed in docs/emulation.md"
            )
        if handling.refuse is not None:
            problem = handling.refuse(value, where)
            if problem is not None:
                separator = "" if problem.startswith(".") else ": "
                raise ScenarioError(f"{_named(path, value, scenario)}{separator}{problem}")
        if handling.records is not None and value != handling.records:
            recorded[path] = handling.records
            warnings.append(f"{path}: {handling.how}")
    return recorded, warnings


def _named(path: str, value: Any, scenario: dict[str, Any]) -> str:
    """A flow's tcp key is named as the scenario's `tcp.X` when it has that table's value."""
    match = re.match(r"^flows\.\d+\.tcp\.(\w+)$", path)
    if match and scenario.get("tcp", {}).get(match.group(1)) == value:
        return f"tcp.{match.group(1)}"
    return path
