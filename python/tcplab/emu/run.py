"""Runs a scenario on this machine's kernel TCP (the `emu` backend): builds the plan's
namespaces, starts the delay line, the receivers and one sender per flow, samples the
bottleneck qdisc over netlink while the flows run, then stops every process it started,
deletes the namespaces and returns a `Result` with the simulator's schema.

Safety: nothing outside the run's own namespaces is touched; every process is stopped before
the namespaces are deleted; cleanup runs on success, on error, on Ctrl-C and on SIGTERM. What a
killed run leaves behind is removed by the next run (or `tcplab emulate --cleanup`), see
leftovers.py.

Validity (summary.json `run.validity`): the measured minimum RTT within 1 ms (plus one packet's
serialization) of the configured one, the delay line's lateness p99 under 1 ms with no drops,
no packet dropped by any interface of the run (only the bottleneck qdisc may drop) and none
reordered (each sender's `tcpi_reord_seen` 0), the
bottleneck's dequeued payload between what the senders got acknowledged and that plus what
they retransmitted and what was still unacknowledged at the end (5 % either side), under 0.3
cores of CPU used by other processes, and each connection's negotiated settings (TCP_INFO
once connected: MSS, initial window, SACK, ECN, timestamps) those the plan set; a run that
fails one is marked invalid with the reasons.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from .. import _core
from .._core import ScenarioError
from ..metrics import jain_index, rtt_statistics
from ..result import Result
from ..scenario import prepare, validate
from ..series import frame_schema
from . import leftovers
from . import plan as emu_plan
from .tcpinfo import INFINITE_SSTHRESH, NO_PACING, TcpInfo, bbr_mode

MIN_RTT_TOLERANCE_MS = 1.0
LATENESS_P99_LIMIT_US = 1000
ACKED_VS_BOTTLENECK_TOLERANCE = 0.05
OTHER_CPU_LIMIT_CORES = 0.3
# From the receiver's readiness to the flows' common origin: time for the sender processes
# to start (a Python import each, on two cores) and connect before any data flows.
STARTUP_SLACK_S = 0.5
SENDER_STARTUP_S = 0.25
STOP_TIMEOUT_S = 5.0
AVAILABLE_ALGORITHMS = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
RTO_MAX_SYSCTL = Path("/proc/sys/net/ipv4/tcp_rto_max_ms")  # present where TCP_RTO_MAX_MS is


class EmulationError(RuntimeError):
    """The emulation could not run: not root, a missing kernel feature or tool."""


def require_kernel(plan: emu_plan.EmuPlan) -> None:
    """Refuses, in one line, what this machine cannot do for the plan."""
    require_host()
    available = available_algorithms()
    for flow in plan.flows:
        if flow.kernel_cc not in available:
            raise ScenarioError(f"flows.{flow.index}.cc: {flow.cc!r} is not in this kernel; available: {', '.join(available)}")
        if "--rto-max-ms" in flow.socket_options and not RTO_MAX_SYSCTL.exists():
            raise ScenarioError(
                f"flows.{flow.index}.tcp.max_rto: this kernel has no TCP_RTO_MAX_MS (Linux 6.15 and later); allowed: 120s"
            )


def require_host() -> None:
    """Refuses, in one line, a machine that cannot emulate anything: not root, no iproute2, no TUN."""
    if os.geteuid() != 0:
        raise EmulationError("the emulation backend needs root (network namespaces, qdiscs); run it as root or use the simulator")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise EmulationError(f"`{tool}` is missing; install iproute2 (apt-get install iproute2)")
    if not Path("/dev/net/tun").exists():
        raise EmulationError("/dev/net/tun is missing; the delay line needs TUN devices")


def available_algorithms() -> list[str]:
    """The congestion-control algorithms this kernel has (its names: reno, cubic, ...)."""
    return AVAILABLE_ALGORITHMS.read_text().split()


def clean_leftovers() -> list[str]:
    """`tcplab emulate --cleanup`: removes what killed runs left behind; one line per run."""
    if os.geteuid() != 0:
        raise EmulationError("removing emulation leftovers needs root (network namespaces); run it as root")
    return leftovers.clean()


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise EmulationError(f"`{' '.join(command)}` failed: {done.stderr.strip() or done.returncode}")


class Processes:
    """The processes a run started, stopped (SIGTERM, then SIGKILL) in reverse order."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[str]] = []

    def start(self, namespace: str, module: str, *args: str, stdout: int | None = subprocess.DEVNULL) -> subprocess.Popen[str]:
        command = ["ip", "netns", "exec", namespace, sys.executable, "-m", f"tcplab.emu.{module}", *args]
        process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process in reversed(self.started):
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """Ctrl-C and SIGTERM set the returned event instead of raising wherever the main thread
    happens to be (inside a netlink request, an interrupted pyroute2 socket never answers
    again); the run's loops check it and unwind with KeyboardInterrupt at a safe point."""
    stop = threading.Event()

    def handler(*_: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _pause(stop: threading.Event, seconds: float) -> None:
    """Sleeps `seconds`, unwinding at once if a stop signal arrives."""
    if stop.wait(max(0.0, seconds)):
        raise KeyboardInterrupt


def namespaces_of(prefix: str) -> list[str]:
    """The network namespaces whose names start with `prefix` (what a run leaves behind)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]


def interface_drops(namespaces: list[str]) -> dict[str, int]:
    """Packets each interface of the namespaces dropped (rx + tx), by `ns/interface`."""
    drops = {}
    for ns in namespaces:
        out = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show"], capture_output=True, text=True)
        for link in json.loads(out.stdout or "[]"):
            stats = link.get("stats64", {})
            count = stats.get("rx", {}).get("dropped", 0) + stats.get("tx", {}).get("dropped", 0)
            drops[f"{ns}/{link['ifname']}"] = count
    return drops


def _cpu_seconds(pids: list[int]) -> float:
    """CPU seconds used so far by `pids` (utime + stime of /proc/PID/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _machine_cpu_seconds() -> float:
    """CPU seconds the machine spent in processes: user, nice and system time (/proc/stat);
    interrupt and softirq time, mostly the packets of the run itself, is left out."""
    user, nice, system = (int(v) for v in Path("/proc/stat").read_text().split()[1:4])
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


# The bottleneck queue's drops by the simulator's reasons, from its qdisc: pfifo and bfifo
# refuse arrivals (tail), pfifo_head_drop evicts the oldest (head); an AQM counts its limit's
# drops and its CE marks in its own statistics (TCA_STATS_APP: tc_codel_xstats,
# tc_fq_codel_xstats, tc_red_xstats, tc_pie_xstats of include/uapi/linux/pkt_sched.h), and
# the rest of its drops are the AQM's.
DROP_REASONS = ("tail", "head", "aqm", "overlimit", "policer")
FIFO_DROPS = {"pfifo": "tail", "bfifo": "tail", "pfifo_head_drop": "head"}
AQM_STATISTICS: dict[str, tuple[str, tuple[str, ...], tuple[str, str], tuple[str, ...]]] = {
    # qdisc: (struct layout, its fields, (reason, field) of the limit's drops, CE-mark fields)
    "codel": (
        "<9I",
        ("maxpacket", "count", "lastcount", "ldelay", "drop_next", "drop_overlimit", "ecn_mark", "dropping", "ce_mark"),
        ("tail", "drop_overlimit"),
        ("ecn_mark", "ce_mark"),
    ),
    "fq_codel": (
        "<10I",  # `type` (0: the qdisc's) then tc_fq_codel_qd_stats
        ("type", "maxpacket", "drop_overlimit", "ecn_mark", "new_flow_count", "new_flows_len", "old_flows_len", "ce_mark"),
        ("overlimit", "drop_overlimit"),  # fq_codel_drop's batches from the fattest flow
        ("ecn_mark", "ce_mark"),
    ),
    "red": ("<4I", ("early", "pdrop", "other", "marked"), ("tail", "pdrop"), ("marked",)),
    "pie": (
        "<Q8I",
        ("prob", "delay", "avg_dq_rate", "dq_rate_estimating", "packets_in", "dropped", "overlimit", "maxq", "ecn_mark"),
        ("tail", "overlimit"),
        ("ecn_mark",),
    ),
}
QUEUE_HANDLE = 0x00100000  # the tbf's child, 10: (tc reads handles in hex; plan.py)
ROOT_PARENT = 0xFFFFFFFF


def queue_counters(kind: str, drops: int, app: bytes) -> dict[str, int]:
    """A queue qdisc's cumulative drops by reason and CE marks ("ce"), from its total `drops`
    and its own statistics `app` (the payload of TCA_STATS_APP)."""
    counters = dict.fromkeys((*DROP_REASONS, "ce"), 0)
    if kind in FIFO_DROPS:
        counters[FIFO_DROPS[kind]] = drops
        return counters
    layout, fields, (reason, limit_field), marks = AQM_STATISTICS[kind]
    statistics = dict(zip(fields, struct.unpack_from(layout, app), strict=False))
    counters[reason] = statistics[limit_field]
    counters["aqm"] = drops - statistics[limit_field]
    counters["ce"] = sum(statistics[field] for field in marks)
    return counters


class QueueSample(NamedTuple):
    """One direction's bottleneck at a sample: the queue's backlog, the bytes the tbf sent,
    and the queue's cumulative drops by reason and CE marks (`queue_counters`)."""

    backlog_pkts: int
    backlog_bytes: int
    sent_bytes: int
    counters: dict[str, int]


def queue_sample(qdiscs: list[Any]) -> QueueSample:
    """The sample of one device from its qdiscs as netlink reports them (pyroute2 tcmsg)."""
    backlog, sent, counters = (0, 0), 0, dict.fromkeys((*DROP_REASONS, "ce"), 0)
    for q in qdiscs:
        stats = q.get_attr("TCA_STATS2")
        if stats is None:
            continue
        if q["parent"] == ROOT_PARENT:  # the tbf
            sent = (stats.get_attr("TCA_STATS_BASIC") or {}).get("bytes", 0)
        elif q["handle"] == QUEUE_HANDLE:
            queue = stats.get_attr("TCA_STATS_QUEUE")
            app = stats.nla("TCA_STATS_APP")  # raw: pyroute2 decodes only some qdiscs' statistics
            raw = bytes(app.data[app.offset + 4 : app.offset + app.length]) if app.length else b""
            backlog = (queue["qlen"], queue["backlog"])
            counters = queue_counters(q.get_attr("TCA_KIND"), queue["drops"], raw)
    return QueueSample(*backlog, sent, counters)


class QdiscSampler:
    """The bottleneck qdiscs' counters (`QueueSample`), over netlink."""

    def __init__(self, namespace: str, devices: list[str]) -> None:
        from pyroute2 import NetNS  # imported here: only the emulation needs it

        self.ns = NetNS(namespace, flags=0)  # never create it: the run built it
        self.devices = {}
        for device in devices:
            found = self.ns.link_lookup(ifname=device)
            if not found:
                names = [link.get_attr("IFLA_IFNAME") for link in self.ns.get_links()]
                raise EmulationError(f"netlink in namespace {namespace} does not see {device}; it sees {names}")
            self.devices[device] = found[0]

    def sample(self) -> dict[str, QueueSample]:
        return {device: queue_sample(self.ns.get_qdiscs(index=index)) for device, index in self.devices.items()}

    def close(self) -> None:
        self.ns.close()


def emulate(scenario: Any, *, overrides: dict[str, Any] | None = None, seed: int | None = None) -> Result:
    """Runs `scenario` (a path, study, text or dict) on the kernel; see the module doc."""
    document = validate(prepare(scenario, overrides))
    if seed is not None:
        document["seed"] = seed
    plan = emu_plan.plan_for(document)
    require_kernel(plan)
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for removed in leftovers.clean():
        print(f"warning: removed what a killed emulation left behind: {removed}", file=sys.stderr)
    owner_file = leftovers.claim(plan.prefix)
    processes = Processes()
    work = Path(tempfile.mkdtemp(prefix=f"tcplab-{plan.prefix}-"))
    started_wall = time.monotonic()
    try:
        with _stop_on_signals() as stop:
            raw = _execute(plan, processes, work, stop)
    finally:
        processes.stop_all()
        for command in plan.teardown:
            subprocess.run(command, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
        owner_file.unlink(missing_ok=True)
    left = namespaces_of(plan.prefix)
    if left:
        raise EmulationError(f"namespaces left behind after cleanup: {', '.join(left)}")
    for path, value in plan.recorded.items():
        _set(document, path, value)
    return _result(document, plan, raw, time.monotonic() - started_wall)


def _set(document: dict[str, Any], path: str, value: Any) -> None:
    *tables, key = path.split(".")
    for table in tables:
        document = document.setdefault(table, {})
    document[key] = value


def _execute(plan: emu_plan.EmuPlan, processes: Processes, work: Path, stop: threading.Event) -> dict[str, Any]:
    for command in plan.setup:
        _pause(stop, 0)
        _run(command)
    router, senders, receivers = plan.namespaces["router"], plan.namespaces["senders"], plan.namespaces["receivers"]
    report_path = work / "delay-line.json"
    tuns = [f"{tun}@{int(plan.bottleneck_rate_bps)}" for tun in LINK_NAMES]
    routes = [route.argument() for route in plan.delay_routes]
    delay_line = processes.start(
        router,
        "delayline",
        *[a for t in tuns for a in ("--tun", t)],
        *[a for r in routes for a in ("--route", r)],
        "--report",
        str(report_path),
    )
    sampler = QdiscSampler(router, list(LINK_NAMES))
    try:
        for tun in LINK_NAMES:
            _wait_for_carrier(sampler, tun, delay_line, stop)
        addresses = [f"{pair.receiver_ip}:{emu_plan.RECEIVER_PORT}" for pair in plan.pairs]
        receiver = processes.start(receivers, "traffic", "receive", *addresses, stdout=subprocess.PIPE)
        if receiver.stdout is None or receiver.stdout.readline().strip() != "ready":
            raise EmulationError(f"the receiver did not start: {receiver.stderr.read() if receiver.stderr else ''}")
        origin = time.monotonic() + STARTUP_SLACK_S + SENDER_STARTUP_S * len(plan.flows)
        senders_started = []
        for flow in plan.flows:
            flow_stop_s = min(flow.stop_s if flow.stop_s is not None else plan.duration_s, plan.duration_s)
            args = [
                "send",
                "--flow",
                str(flow.index),
                "--cc",
                flow.kernel_cc,
                "--bind",
                flow.pair.sender_ip,
                "--connect",
                f"{flow.pair.receiver_ip}:{emu_plan.RECEIVER_PORT}",
                "--start-at",
                repr(origin + flow.start_s),
                "--stop-at",
                repr(origin + flow_stop_s),
                "--interval",
                repr(plan.sample_interval_s),
                "--out",
                str(work / f"flow{flow.index}.jsonl"),
                *flow.socket_options,
            ]
            if flow.bytes is not None:
                args += ["--bytes", str(flow.bytes)]
            senders_started.append(processes.start(senders, "traffic", *args))
        # The qdisc counters before any sender starts: the run's byte counts start here.
        baseline = sampler.sample()
        rows = []
        own_before, machine_before = _cpu_seconds([p.pid for p in processes.started]), _machine_cpu_seconds()
        self_before = time.process_time()
        next_sample = origin
        while True:
            next_sample += plan.sample_interval_s
            if next_sample > origin + plan.duration_s + 1e-9:
                break
            _pause(stop, next_sample - time.monotonic())
            rows.append((next_sample - origin, sampler.sample()))
            failed = [p for p in senders_started if p.poll() not in (None, 0)]
            if failed:
                message = failed[0].stderr.read().strip() if failed[0].stderr else ""
                if failed[0].returncode == 3:
                    raise ScenarioError(f"flows: {message}")
                raise EmulationError(f"a sender failed: {message}")
        own = _cpu_seconds([p.pid for p in processes.started]) - own_before + time.process_time() - self_before
        machine = _machine_cpu_seconds() - machine_before
        # Now, while the delay line still runs: once it stops, the packets still in flight
        # are dropped at its device, which says nothing about the measured window.
        drops = interface_drops(list(plan.namespaces.values()))
        for process in senders_started:
            process.wait(timeout=STOP_TIMEOUT_S + plan.sample_interval_s)
    finally:
        sampler.close()
    delay_line.terminate()
    delay_line.wait(timeout=STOP_TIMEOUT_S)
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    flows = {
        flow.index: [json.loads(line) for line in (work / f"flow{flow.index}.jsonl").read_text().splitlines()]
        for flow in plan.flows
    }
    return {
        "origin": origin,
        "qdisc": rows,
        "qdisc_baseline": baseline,
        "established": {index: lines[0]["established"] for index, lines in flows.items() if lines},
        # Seconds after its start each flow connected (positive: its handshake met others' data).
        "connected_late": {
            flow.index: flows[flow.index][0]["connected_at"] - (origin + flow.start_s)
            for flow in plan.flows
            if flows.get(flow.index) and flows[flow.index][0]["connected_at"] > origin + flow.start_s
        },
        "flows": {index: lines[1:] for index, lines in flows.items()},
        "delay_line": report,
        "interface_drops": {name: n for name, n in drops.items() if n},
        "other_cpu_cores": max(0.0, machine - own) / plan.duration_s,
    }


def _wait_for_carrier(sampler: QdiscSampler, device: str, delay_line: subprocess.Popen[str], stop: threading.Event) -> None:
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if delay_line.poll() is not None:
            raise EmulationError(f"the delay line exited: {delay_line.stderr.read() if delay_line.stderr else ''}")
        link = sampler.ns.get_links(ifname=device)
        if link and link[0].get_attr("IFLA_CARRIER") == 1:
            return
        _pause(stop, 0.01)
    raise EmulationError(f"the delay line did not attach to TUN {device}")


def _result(document: dict[str, Any], plan: emu_plan.EmuPlan, raw: dict[str, Any], wall_s: float) -> Result:
    origin = raw["origin"]
    interval = plan.sample_interval_s
    flow_rows = []
    flow_summaries = []
    for flow in plan.flows:
        samples = raw["flows"][flow.index]
        previous_acked = previous_retrans = 0
        srtts = []
        for sample in samples:
            acked, retrans = sample["bytes_acked"], sample["total_retrans"]
            srtt = sample["rtt_us"] / 1e3 if sample["rtt_us"] else None
            if srtt is not None:
                srtts.append(srtt)
            flow_rows.append(
                {
                    "t_s": sample["t"] - origin,
                    "flow": flow.index,
                    "cwnd_pkts": float(sample["snd_cwnd"]),
                    "ssthresh_pkts": None if sample["snd_ssthresh"] >= INFINITE_SSTHRESH else float(sample["snd_ssthresh"]),
                    "inflight_pkts": float(max(0, sample["unacked"] - sample["sacked"] - sample["lost"] + sample["retrans"])),
                    "srtt_ms": srtt,
                    "min_rtt_ms": sample["min_rtt_us"] / 1e3 if sample["min_rtt_us"] else None,
                    "pacing_rate_mbps": None if sample["pacing_rate"] in (0, NO_PACING) else sample["pacing_rate"] * 8 / 1e6,
                    "delivery_rate_mbps": sample["delivery_rate"] * 8 / 1e6,
                    "delivery_rate_app_limited": sample["rate_flags"] & 1,
                    "goodput_mbps": (acked - previous_acked) * 8 / interval / 1e6,
                    "retransmits": float(retrans - previous_retrans),
                    "cc_state": _state(sample),
                    **_bbr_columns(sample.get("bbr")),
                }
            )
            previous_acked, previous_retrans = acked, retrans
        last = (
            samples[-1]
            if samples
            else {"bytes_acked": 0, "total_retrans": 0, "min_rtt_us": 0, "data_segs_out": 0, "bytes_sent": 0}
        )
        active_s = max(1e-9, min(plan.duration_s, flow.stop_s or plan.duration_s) - flow.start_s)
        flow_summaries.append(
            {
                "id": flow.index,
                "cc": flow.cc,
                "stack": "linux",
                "goodput_mbps": last["bytes_acked"] * 8 / active_s / 1e6,
                **rtt_statistics(srtts),
                # srtt sampled every interval: its mean is the time average; the kernel's
                # per-ACK updates are not observable from ss.
                "srtt_mean_ms": float(np.mean(srtts)) if srtts else None,
                "srtt_update_mean_ms": None,
                # The smallest of the run: the kernel's min RTT is a 5-minute windowed minimum
                # (tcp_min_rtt_wlen), which forgets the handshake in runs of 300 s.
                "min_rtt_ms": min((x["min_rtt_us"] for x in samples if x["min_rtt_us"]), default=0) / 1e3 or None,
                "retransmits": last["total_retrans"],
                "segments_sent": last["data_segs_out"],
                "retransmit_pct": 100 * last["total_retrans"] / last["data_segs_out"] if last["data_segs_out"] else 0.0,
                "rto_count": None,
                "bytes_acked": last["bytes_acked"],
                "bytes_sent": last["bytes_sent"],
                "completion_s": None,
            }
        )
    link_rows, link_summaries = _links(plan, raw["qdisc"], raw["qdisc_baseline"], interval)
    validity = _validity(plan, document, flow_summaries, link_summaries, raw)
    summary = {
        "flows": flow_summaries,
        "links": link_summaries,
        "fairness_jain": jain_index([f["goodput_mbps"] for f in flow_summaries]),
        "run": {
            "seed": document.get("seed", 1),
            "sim_seconds": plan.duration_s,
            "wall_seconds": wall_s,
            "tcplab_version": _core.version(),
            "backend": "emu",
            "delay_line": raw["delay_line"],
            "negotiated": [_negotiated(raw).get(flow.index) for flow in plan.flows],
            "validity": validity,
        },
    }
    return Result(
        scenario=document,
        summary=summary,
        flows=pl.DataFrame(flow_rows, schema=frame_schema("flows")),
        links=pl.DataFrame(link_rows, schema=frame_schema("links")),
        rtt=None,
    )


def _bbr_columns(bbr: dict[str, Any] | None) -> dict[str, float]:
    """BBR's own model from TCP_CC_INFO, in the core's `bbr_*` flow columns (left out, i.e.
    null, for other algorithms)."""
    if bbr is None:
        return {}
    return {
        "bbr_bw_mbps": bbr["bw_bytes_per_s"] * 8 / 1e6,
        "bbr_min_rtt_ms": bbr["min_rtt_us"] / 1e3,
        "bbr_pacing_gain": bbr["pacing_gain"],
        "bbr_cwnd_gain": bbr["cwnd_gain"],
    }


def _state(sample: dict[str, Any]) -> str:
    """The sample's congestion state as the simulator names it: BBR's mode, or else the
    kernel's CA state."""
    bbr = sample.get("bbr")
    if bbr is not None:
        return bbr_mode(bbr["pacing_gain"], bbr["cwnd_gain"])
    return TcpInfo(**{k: v for k, v in sample.items() if k not in ("t", "bbr")}).state


# The bottleneck's directions by the TUN device whose egress qdisc they are.
LINK_NAMES = {emu_plan.DATA_TUN: "left->right", emu_plan.ACK_TUN: "right->left"}


QdiscSample = dict[str, QueueSample]


def _links(
    plan: emu_plan.EmuPlan, rows: list[tuple[float, QdiscSample]], baseline: QdiscSample, interval: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The links' rows and summaries; bytes, drops and marks count from `baseline`, the
    qdiscs' counters just before the senders started (time 0)."""
    link_rows = []
    summaries = []
    for device, name in LINK_NAMES.items():
        previous = baseline[device].counters
        backlogs = []
        for t, sample in rows:
            now = sample[device]
            backlogs.append(now.backlog_pkts)
            new = {key: float(now.counters[key] - previous[key]) for key in now.counters}
            link_rows.append(
                {
                    "t_s": t,
                    "link": name,
                    "backlog_pkts": float(now.backlog_pkts),
                    "backlog_bytes": float(now.backlog_bytes),
                    "drops": sum(new[reason] for reason in DROP_REASONS),
                    **{f"{reason}_drops": new[reason] for reason in DROP_REASONS},
                    "ce_marks": new["ce"],
                    # the qdisc's counters do not time packets
                    "sojourn_ms": None,
                    "l4s_sojourn_ms": None,
                }
            )
            previous = now.counters
        total = {key: previous[key] - baseline[device].counters[key] for key in previous}
        sent = (rows[-1][1][device].sent_bytes - baseline[device].sent_bytes) if rows else 0
        span = max(interval, rows[-1][0] if rows else interval)
        summaries.append(
            {
                "id": name,
                "utilization": sent * 8 / (plan.bottleneck_rate_bps * span),
                "drops": sum(total[reason] for reason in DROP_REASONS),
                "drops_by_reason": {reason: total[reason] for reason in DROP_REASONS},
                "losses": 0,
                "ce_marks": total["ce"],
                "bytes_sent": sent,
                "backlog_mean_pkts": float(np.mean(backlogs)) if backlogs else 0.0,
                "backlog_max_pkts": float(max(backlogs)) if backlogs else 0.0,
                "sojourn_mean_ms": None,
                "sojourn_p95_ms": None,
                "sojourn_p99_ms": None,
            }
        )
    return link_rows, summaries


def _validity(
    plan: emu_plan.EmuPlan,
    document: dict[str, Any],
    flows: list[dict[str, Any]],
    links: list[dict[str, Any]],
    raw: dict[str, Any],
) -> dict[str, Any]:
    reasons = []
    for flow, summary in zip(plan.flows, flows, strict=True):
        want = 2 * flow.pair.one_way_delay_ns / 1e6
        got = summary["min_rtt_ms"]
        if got is None or abs(got - want) > MIN_RTT_TOLERANCE_MS + _serialization_ms(plan):
            reasons.append(f"flow {flow.index}: min RTT {got} ms, configured {want:g} ms")
    report = raw["delay_line"]
    if not report:
        reasons.append("the delay line wrote no report")
    else:
        if (report.get("lateness_p99_us") or 0) > LATENESS_P99_LIMIT_US:
            reasons.append(f"delay line lateness p99 {report['lateness_p99_us']} us (limit {LATENESS_P99_LIMIT_US})")
        for key in ("dropped_queue_full", "dropped_no_route", "write_errors"):
            if report.get(key):
                reasons.append(f"delay line {key.replace('_', ' ')}: {report[key]} (packets lost outside the bottleneck)")
    mss = int(document.get("tcp", {}).get("mss", 1448))
    last_samples = [samples[-1] for samples in raw["flows"].values() if samples]
    reason = bottleneck_accounting(links[0]["bytes_sent"], last_samples, mss)
    if reason:
        reasons.append(reason)
    reasons += _settings_not_in_effect(plan, _negotiated(raw))
    for index, samples in raw["flows"].items():
        # The bottleneck is one FIFO: a sender that saw an original segment arrive after a
        # later one met reordering the emulated path made (a delay-line write landing on
        # another CPU's backlog, say), which can undo or trigger a reduction.
        if samples and samples[-1].get("reord_seen"):
            reasons.append(
                f"the emulated path reordered packets: flow {index}'s kernel saw {samples[-1]['reord_seen']} reorderings"
            )
    for interface, count in raw["interface_drops"].items():
        reasons.append(f"{interface} dropped {count} packets (losses outside the bottleneck)")
    for index, late_s in raw["connected_late"].items():
        # The handshake's RTT (the kernel's first RTT sample) then includes others' queue.
        reasons.append(f"sender start delayed: flow {index} connected {late_s * 1e3:.0f} ms after its start")
    if raw["other_cpu_cores"] > OTHER_CPU_LIMIT_CORES:
        reasons.append(f"other processes used {raw['other_cpu_cores']:.2f} cores during the run")
    return {"valid": not reasons, "reasons": reasons, "other_cpu_cores": raw["other_cpu_cores"]}


def bottleneck_accounting(bytes_dequeued: int, last_samples: list[dict[str, Any]], mss: int) -> str | None:
    """Why the bottleneck's byte count disagrees with the senders' last TCP_INFO samples, or
    None. Every acknowledged byte crossed the bottleneck; what else crossed it is at most the
    retransmitted copies and the data still unacknowledged at the end (queued behind or past
    the bottleneck, SACKed or not). The qdisc (on a TUN device) counts IP packets: payload + 52 B
    of TCP/IP headers with timestamps."""
    payload = bytes_dequeued * mss / (mss + 52)
    acked = sum(s["bytes_acked"] for s in last_samples)
    extra = sum((s["total_retrans"] + s["unacked"]) * mss for s in last_samples)
    tolerance = ACKED_VS_BOTTLENECK_TOLERANCE
    if acked and not acked * (1 - tolerance) <= payload <= (acked + extra) * (1 + tolerance):
        return (
            f"bottleneck carried about {payload:.0f} B of payload but senders got {acked} B acknowledged "
            f"(and at most {extra} B retransmitted or unacknowledged)"
        )
    return None


def _negotiated(raw: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Per flow, the settings its connection had once established (TCP_INFO)."""
    result = {}
    for index, fields in raw["established"].items():
        info = TcpInfo(**fields)
        result[index] = {
            "mss": info.snd_mss,
            "initial_cwnd": info.snd_cwnd,
            "sack": info.negotiated("sack"),
            "ecn": info.negotiated("ecn"),
            "timestamps": info.negotiated("timestamps"),
        }
    return result


def _settings_not_in_effect(plan: emu_plan.EmuPlan, negotiated: dict[int, dict[str, Any]]) -> list[str]:
    """The plan's settings each connection does not have."""
    reasons = []
    for flow in plan.flows:
        got = negotiated.get(flow.index)
        if got is None:
            reasons.append(f"flow {flow.index}: no TCP_INFO from the connection")
            continue
        wanted = {**{key: flow.tcp[key] for key in ("mss", "initial_cwnd", "sack", "ecn")}, "timestamps": True}
        for key, value in wanted.items():
            if got[key] != value:
                reasons.append(f"flow {flow.index}: the connection has {key} {got[key]}, the scenario {value}")
    return reasons


def _serialization_ms(plan: emu_plan.EmuPlan) -> float:
    """Time to put one full packet and one ACK on the bottleneck, which every RTT includes."""
    return (plan.mtu + 66) * 8 / plan.bottleneck_rate_bps * 1e3
