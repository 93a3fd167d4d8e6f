"""Differential suite against ns-3: wired dumbbell cases run on ns-3 and on tcplab, compared
per flow (goodput, mean RTT, retransmissions, cwnd: mean and 10–90 % range in 1 s bins).

ns-3 is NOT a tcplab dependency. Its results are cached in tests/data/ns3/differential.json,
so the comparison runs without it. To regenerate them, install the `ns3` package (PyPI,
3.44) in its own environment and run this script with that interpreter:
    python3 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3
    /tmp/ns3venv/bin/python benches/ns3_diff.py regenerate [--cases PATTERN]
Compare tcplab (with tcplab's interpreter) against the cache:
    .venv/bin/python benches/ns3_diff.py compare [--cases PATTERN]

The grid: 1 and 4 flows of one algorithm; 10 and 100 Mbit/s; 1 and 10 BDP of drop-tail
buffer; NewReno, CUBIC, BBR, Vegas, YeAH, Hybla and Westwood+; bulk senders (ns-3's
BulkSendApplication) or fixed-rate writers (1400 B writes at twice the bottleneck rate, a
write the send buffer refuses is dropped); 40 ms base RTT all on the bottleneck, access links
10 times faster with 1000-packet queues, 20 s (tcplab's links add the 2-byte PPP header ns-3's
point-to-point devices put on every frame: `framing = 2`). Both sides set MSS 1448 and 6 MiB socket
buffers; everything else is each side's default (ns-3: TcpSocket/TcpSocketBase attributes,
no traffic-control layer, so the device queue is the only queue). Metrics: ns-3's from the
socket's trace sources (LastRTT per ACK, Retransmission, CongestionWindow sampled every
10 ms) and the PacketSink's bytes; tcplab's from its summary and flows.parquet (10 ms).

A second grid, `aqm` (`--grid aqm`, cached in tests/data/ns3/aqm.json): the same dumbbell with
a queue discipline on the bottleneck (RED, CoDel, FQ-CoDel, PIE; Linux sch_* semantics on
tcplab's side) × NewReno, CUBIC × 10, 100 Mbit/s × 1, 4 bulk flows, a 1000-packet buffer. On
ns-3 the discipline is the root queue disc of both bottleneck devices (TrafficControlHelper),
whose device TxQueue holds 1 packet so that the queue disc holds the backlog; every parameter
is set explicitly on both sides (`ns3_queue_disc` maps tcplab's to ns-3's attributes; the
cache records those set). Added metrics, of the bottleneck's forward direction: the queueing
delay per packet (ns-3: from its Enqueue into the root queue disc to its PhyTxBegin on the
device, so the queue disc's sojourn plus the wait in the 1-packet device queue; tcplab: the
link's `sojourn_mean_ms`/`sojourn_p95_ms`, enqueue to transmission start), its mean and 95th
percentile, and the queue's drops (ns-3: QueueDisc::GetStats(), by reason).
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

CACHE = Path(__file__).resolve().parent.parent / "tests" / "data" / "ns3" / "differential.json"
ALGORITHMS = {
    "newreno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "bbr": "ns3::TcpBbr",
    "vegas": "ns3::TcpVegas",
    "yeah": "ns3::TcpYeah",
    "hybla": "ns3::TcpHybla",
    "westwood": "ns3::TcpWestwoodPlus",
}
BASE_RTT_MS = 40
DURATION_S = 20
MSS = 1448
SOCKET_BUFFER = 6 << 20
WRITE_BYTES = 1400
CWND_SAMPLE_S = 0.01

AQM_CACHE = CACHE.with_name("aqm.json")
AQM_BUFFER_PKTS = 1000  # Linux's codel and pie limit; fq_codel's limit is the buffer too
# Each discipline's tcplab parameters, all explicit (ns3_queue_disc gives ns-3's the same
# meaning). PIE's are Linux sch_pie's defaults (alpha 2/16, beta 20/16).
AQM_QUEUES: dict[str, dict[str, Any]] = {
    "red": {"kind": "red", "probability": 0.02, "gentle": True, "ecn": False},
    "codel": {"kind": "codel", "target_ms": 5.0, "interval_ms": 100.0, "ecn": False},
    "fq_codel": {
        "kind": "fq_codel",
        "target_ms": 5.0,
        "interval_ms": 100.0,
        "flows": 1024,
        "quantum": 1500,
        "ecn": False,
        "drop_batch": 64,
    },
    "pie": {
        "kind": "pie",
        "target_ms": 15.0,
        "tupdate_ms": 15.0,
        "alpha": 0.125,
        "beta": 1.25,
        "max_burst_ms": 150.0,
        "ecn": False,
        "dq_rate_estimator": False,
    },
}
# RED's thresholds (packets) and burst by bottleneck rate (Mbit/s): ns-3's defaults, 5/15
# packets, at 10 Mbit/s and 10 times them at 100 Mbit/s, so that on both paths RED starts
# dropping at 6 ms of average queueing delay and drops everything above 36 ms (gentle: 2 ×
# max_th), far below the 1000-packet buffer. `burst` gives tcplab's (tc's) EWMA weight
# 2^-9 (tc_red_wlog; any burst in 48..65 does at min_th 5, in 177..241 at min_th 50: the
# middle), the QW set on ns-3.
RED_BY_RATE = {
    10: {"min_th": 5, "max_th": 15, "burst": 56},
    100: {"min_th": 50, "max_th": 150, "burst": 209},
}


def cases() -> dict[str, dict[str, Any]]:
    """Every case of the grid by name, e.g. `4xcubic-100M-10bdp-fixed`."""
    grid = {}
    for n, rate, bdp, cc, app in itertools.product([1, 4], [10, 100], [1, 10], ALGORITHMS, ["bulk", "fixed"]):
        packets = max(1, round(bdp * rate * 1e6 * BASE_RTT_MS / 1e3 / (1500 * 8)))
        flow_app = "bulk" if app == "bulk" else {"rate_mbps": 2 * rate, "write_bytes": WRITE_BYTES}
        grid[f"{n}x{cc}-{rate}M-{bdp}bdp-{app}"] = {
            "rate_mbps": rate,
            "rtt_ms": BASE_RTT_MS,
            "buffer_pkts": packets,
            "duration_s": DURATION_S,
            "flows": [{"cc": cc, "app": flow_app}] * n,
        }
    return grid


def aqm_cases() -> dict[str, dict[str, Any]]:
    """Every case of the queue-discipline grid by name, e.g. `4xcubic-100M-codel`: the
    dumbbell of `cases()` with a discipline (`queue`, tcplab's parameters) on the bottleneck."""
    grid = {}
    for kind, cc, rate, n in itertools.product(AQM_QUEUES, ["newreno", "cubic"], [10, 100], [1, 4]):
        queue = dict(AQM_QUEUES[kind], **(RED_BY_RATE[rate] if kind == "red" else {}))
        grid[f"{n}x{cc}-{rate}M-{kind}"] = {
            "rate_mbps": rate,
            "rtt_ms": BASE_RTT_MS,
            "buffer_pkts": AQM_BUFFER_PKTS,
            "duration_s": DURATION_S,
            "flows": [{"cc": cc, "app": "bulk"}] * n,
            "queue": queue,
        }
    return grid


def tc_red_wlog(min_th: float, burst: float) -> int | None:
    """The EWMA weight's log2 (W = 2^-wlog) tc gives RED, as tc_red_eval_ewma (iproute2
    tc/tc_red.c) with min_th in packets (qmin / avpkt): the smallest wlog at which `burst`
    back-to-back arrivals into an empty queue keep the average below min_th; None where tc
    refuses (burst too small)."""
    arrivals = burst + 1 - min_th
    if arrivals < 1:
        return None
    return next((w for w in range(1, 32) if arrivals <= (1 - (1 - 2.0**-w) ** burst) / 2.0**-w), None)


class Grid(NamedTuple):
    cases: Callable[[], dict[str, dict[str, Any]]]
    cache: Path
    example: str  # a case name, for messages


GRIDS = {
    "dumbbell": Grid(cases, CACHE, "4xcubic-100M-10bdp-fixed"),
    "aqm": Grid(aqm_cases, AQM_CACHE, "4xcubic-100M-codel"),
}


def _selected(patterns: list[str] | None, grid: str = "dumbbell") -> dict[str, dict[str, Any]]:
    return select(GRIDS[grid].cases(), patterns, GRIDS[grid].example)


def select(everything: dict[str, dict[str, Any]], patterns: list[str] | None, example: str) -> dict[str, dict[str, Any]]:
    """The cases whose names match one of the shell `patterns` (all without); exits naming
    `example` when none does."""
    if not patterns:
        return everything
    chosen = {name: case for name, case in everything.items() if any(fnmatch.fnmatch(name, p) for p in patterns)}
    if not chosen:
        sys.exit(f"--cases {' '.join(patterns)}: no case matches; names look like {example}")
    return chosen


def _nearest_rank(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _cwnd_bins(times: list[float], cwnd: list[float], duration: float) -> list[dict[str, float]]:
    """Mean, 10th and 90th percentile of the (cwnd) samples of each whole second."""
    bins = []
    for second in range(int(duration)):
        values = sorted(c for t, c in zip(times, cwnd, strict=True) if second <= t < second + 1)
        if values:
            mean = sum(values) / len(values)
            bins.append({"t_s": second, "mean": mean, "p10": _nearest_rank(values, 0.1), "p90": _nearest_rank(values, 0.9)})
    return bins


# --- ns-3 side (runs in ns-3's interpreter, one case per process) -------------------------

# Trace sinks and the fixed-rate writer, compiled by cppyy against ns-3's headers.
NS3_HELPERS = r"""
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
namespace tcplab_diff {
struct FlowTrace {
  std::vector<double> rtt_ms, cwnd_t, cwnd_segs;
  uint32_t retransmissions = 0;
  uint32_t cwnd_bytes = 0;
};
std::vector<FlowTrace> flows;
uint32_t segment = 536;

void LastRtt(uint32_t f, ns3::Time, ns3::Time v) { flows[f].rtt_ms.push_back(v.GetSeconds() * 1e3); }
void Cwnd(uint32_t f, uint32_t, uint32_t v) { flows[f].cwnd_bytes = v; }
void Retransmission(uint32_t f, ns3::Ptr<const ns3::Packet>, const ns3::TcpHeader&, const ns3::Address&,
                    const ns3::Address&, ns3::Ptr<const ns3::TcpSocketBase>) { flows[f].retransmissions++; }

void Trace(uint32_t f, ns3::Ptr<ns3::Socket> s) {
  s->TraceConnectWithoutContext("LastRTT", ns3::MakeBoundCallback(&LastRtt, f));
  s->TraceConnectWithoutContext("CongestionWindow", ns3::MakeBoundCallback(&Cwnd, f));
  s->TraceConnectWithoutContext("Retransmission", ns3::MakeBoundCallback(&Retransmission, f));
}

void SampleCwnd(double interval, double end) {
  double now = ns3::Simulator::Now().GetSeconds();
  for (auto& fl : flows) { fl.cwnd_t.push_back(now); fl.cwnd_segs.push_back(double(fl.cwnd_bytes) / segment); }
  if (now + interval < end) ns3::Simulator::Schedule(ns3::Seconds(interval), &SampleCwnd, interval, end);
}

// Every interval one write of `size` bytes; a write the socket refuses is dropped.
class FixedRateWriter : public ns3::Application {
 public:
  void Setup(ns3::Ptr<ns3::Socket> s, ns3::Address peer, uint32_t size, ns3::Time interval, uint32_t flow) {
    m_socket = s; m_peer = peer; m_size = size; m_interval = interval; m_flow = flow;
  }
  uint64_t dropped = 0;
 private:
  void StartApplication() override { m_socket->Bind(); m_socket->Connect(m_peer); Trace(m_flow, m_socket); Write(); }
  void StopApplication() override { ns3::Simulator::Cancel(m_event); }
  void Write() {
    if (m_socket->Send(ns3::Create<ns3::Packet>(m_size)) < 0) dropped++;
    m_event = ns3::Simulator::Schedule(m_interval, &FixedRateWriter::Write, this);
  }
  ns3::Ptr<ns3::Socket> m_socket; ns3::Address m_peer; uint32_t m_size = 0; ns3::Time m_interval;
  ns3::EventId m_event; uint32_t m_flow = 0;
};

void TraceBulk(uint32_t f, ns3::Ptr<ns3::Application> app) {
  Trace(f, ns3::DynamicCast<ns3::BulkSendApplication>(app)->GetSocket());
}
// BulkSendApplication creates its socket when it starts: trace it just after.
void TraceBulkAt(double at, uint32_t f, ns3::Ptr<ns3::Application> app) {
  ns3::Simulator::Schedule(ns3::Seconds(at), &TraceBulk, f, app);
}

// The bottleneck's forward queue: each packet's time from its enqueue into the root queue disc
// to the start of its transmission (PhyTxBegin: the time the device puts its first bit on the
// channel; MacTx fires on the device's Send, before its 1-packet TxQueue), matched by the
// Packet object: the queue disc item's packet is the one the device sends (the IP and PPP
// headers are added to it in place). Not by uid: TCP's segments are fragments of the
// application's packets and share their uids.
struct QueueTrace {
  std::unordered_map<const ns3::Packet*, int64_t> enqueued_ns;
  std::vector<double> delay_ms, tx_s, sojourn_ms;
  uint32_t device_drops = 0;
};
QueueTrace queue;

void QdiscEnqueue(ns3::Ptr<const ns3::QueueDiscItem> item) {
  queue.enqueued_ns[ns3::PeekPointer(item->GetPacket())] = ns3::Simulator::Now().GetNanoSeconds();
}
void QdiscDrop(ns3::Ptr<const ns3::QueueDiscItem> item) { queue.enqueued_ns.erase(ns3::PeekPointer(item->GetPacket())); }
void QdiscSojourn(ns3::Time t) { queue.sojourn_ms.push_back(t.GetSeconds() * 1e3); }
void TxBegin(ns3::Ptr<const ns3::Packet> p) {
  auto it = queue.enqueued_ns.find(ns3::PeekPointer(p));
  if (it == queue.enqueued_ns.end()) return;
  queue.delay_ms.push_back((ns3::Simulator::Now().GetNanoSeconds() - it->second) * 1e-6);
  queue.tx_s.push_back(ns3::Simulator::Now().GetSeconds());
  queue.enqueued_ns.erase(it);
}
void DeviceDrop(ns3::Ptr<const ns3::Packet>) { queue.device_drops++; }

ns3::QueueDiscContainer InstallQueueDisc(const std::string& type, ns3::NetDeviceContainer devices) {
  ns3::TrafficControlHelper helper;
  helper.SetRootQueueDisc(type);
  return helper.Install(devices);
}
void TraceQueue(ns3::Ptr<ns3::QueueDisc> qd, ns3::Ptr<ns3::NetDevice> device) {
  queue = QueueTrace();
  qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&QdiscEnqueue));
  qd->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&QdiscDrop));
  qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&QdiscSojourn));
  device->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&TxBegin));
  device->TraceConnectWithoutContext("MacTxDrop", ns3::MakeCallback(&DeviceDrop));
}
std::vector<std::string> DropReasons(const std::map<std::string, uint32_t, std::less<>>& counts) {
  std::vector<std::string> out;
  for (const auto& [reason, n] : counts) out.push_back(reason + "=" + std::to_string(n));
  return out;
}
ns3::Ptr<FixedRateWriter> InstallWriter(ns3::Ptr<ns3::Node> node, ns3::Address peer, uint32_t size,
                                        double interval_s, uint32_t f) {
  auto app = ns3::CreateObject<FixedRateWriter>();
  app->Setup(ns3::Socket::CreateSocket(node, ns3::TcpSocketFactory::GetTypeId()), peer, size,
             ns3::Seconds(interval_s), f);
  node->AddApplication(app);
  return app;
}
}
"""


TIME_MAX = "Time::Max"  # ns-3's "never" (disabled thresholds); set as TimeValue(Time::Max())


def ns3_queue_disc(case: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The ns-3 queue disc of `case["queue"]` (tcplab's parameters) and every attribute to set
    on it, as strings, each in the meaning of tcplab's (Linux's) parameter. ECN is off on both
    sides; ns-3's own additions are set to what Linux does (L4S and CE thresholds off)."""
    queue, size = case["queue"], f"{case['buffer_pkts']}p"

    def ms(value: float) -> str:
        return f"{value:g}ms"

    def flag(value: bool) -> str:
        return "true" if value else "false"

    kind = queue["kind"]
    if kind == "codel":
        return "ns3::CoDelQueueDisc", {
            "MaxSize": size,
            "Target": ms(queue["target_ms"]),
            "Interval": ms(queue["interval_ms"]),
            "UseEcn": flag(queue["ecn"]),
            "MinBytes": "1500",  # Linux: codel_params.mtu = psched_mtu(dev), the link's MTU
            "CeThreshold": TIME_MAX,
            "UseL4s": "false",
        }
    if kind == "fq_codel":
        # Quantum is no attribute in ns-3: FqCoDelQueueDisc::SetQuantum (run_ns3). Its flows'
        # CoDel queue discs take MaxSize, Interval and Target from it, MinBytes 1500 by default.
        return "ns3::FqCoDelQueueDisc", {
            "MaxSize": size,
            "Target": ms(queue["target_ms"]),
            "Interval": ms(queue["interval_ms"]),
            "Flows": str(queue["flows"]),
            "DropBatchSize": str(queue["drop_batch"]),
            "UseEcn": flag(queue["ecn"]),
            "Perturbation": "0",
            "EnableSetAssociativeHash": "false",
            "CeThreshold": TIME_MAX,
            "UseL4s": "false",
        }
    if kind == "pie":
        return "ns3::PieQueueDisc", {
            "MaxSize": size,
            "QueueDelayReference": ms(queue["target_ms"]),
            "Tupdate": ms(queue["tupdate_ms"]),
            "A": f"{queue['alpha']:g}",
            "B": f"{queue['beta']:g}",
            "MaxBurstAllowance": ms(queue["max_burst_ms"]),
            "UseDequeueRateEstimator": flag(queue["dq_rate_estimator"]),
            # Linux's pie_drop_early always derandomizes (accu_prob: no drop below 0.85, a
            # drop from 8.5), as ns-3's UseDerandomization does; ns-3's default is off.
            "UseDerandomization": "true",
            "UseCapDropAdjustment": "true",  # Linux caps the increase above 10 % (RFC 8033 5.5)
            "MeanPktSize": "1500",  # ns-3 counts bytes in these; Linux uses the MTU
            "DequeueThreshold": "16384",  # the rate estimator's (off)
            "ActiveThreshold": TIME_MAX,  # active from the start, as Linux's
            "Supdate": "0s",
            "UseEcn": flag(queue["ecn"]),
            "CeThreshold": TIME_MAX,
            "UseL4s": "false",
        }
    if kind == "red":
        wlog = tc_red_wlog(queue["min_th"], queue["burst"])
        return "ns3::RedQueueDisc", {
            "MaxSize": size,
            "MinTh": f"{queue['min_th']:g}",
            "MaxTh": f"{queue['max_th']:g}",
            "LInterm": f"{1 / queue['probability']:g}",
            "QW": f"{2.0**-wlog:.12g}",
            "Gentle": flag(queue["gentle"]),
            # Wait true spaces drops (p/(2 - count·p): no drop before count·p reaches 1, so
            # 1/p to 2/p packets apart); Linux's red_mark_probability draws qR uniform after
            # each drop and drops when count·p exceeds it, 1 to 1/p packets apart: ns-3's
            # Wait false (p/(1 - count·p)).
            "Wait": "false",
            "MeanPktSize": "1500",
            "IdlePktSize": "0",
            "UseHardDrop": "true",  # above 2 max_th (gentle) Linux drops every arrival
            "UseEcn": flag(queue["ecn"]),
            "ARED": "false",
            "AdaptMaxP": "false",
            "FengAdaptive": "false",
            "NLRED": "false",
            "Ns1Compat": "false",
            # the idle-time decay of the average (Linux: tc's Stab from the rate and avpkt)
            "LinkBandwidth": f"{case['rate_mbps']}Mbps",
            "LinkDelay": ms(case["rtt_ms"] / 2),
        }
    raise ValueError(f"no ns-3 queue disc for {kind!r}")


def run_ns3(case: dict[str, Any]) -> dict[str, Any]:
    import cppyy
    from ns import ns

    if not hasattr(cppyy.gbl, "tcplab_diff"):
        cppyy.cppdef(NS3_HELPERS)
    helpers = cppyy.gbl.tcplab_diff
    n, duration = len(case["flows"]), float(case["duration_s"])
    helpers.flows.clear()
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUFFER))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(SOCKET_BUFFER))
    helpers.segment = MSS
    helpers.flows.resize(n)

    senders, receivers, routers = dumbbell_nodes(n)
    for i, flow in enumerate(case["flows"]):
        socket_type = f"/NodeList/{senders.Get(i).GetId()}/$ns3::TcpL4Protocol/SocketType"
        ns.Config.Set(socket_type, ns.TypeIdValue(ns.TypeId.LookupByName(ALGORITHMS[flow["cc"]])))

    def point_to_point(rate_mbps: float, delay_ms: float, packets: int) -> Any:
        helper = ns.PointToPointHelper()
        helper.SetDeviceAttribute("DataRate", ns.StringValue(f"{rate_mbps}Mbps"))
        helper.SetChannelAttribute("Delay", ns.StringValue(f"{delay_ms}ms"))
        helper.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{packets}p"))
        return helper

    access = point_to_point(10 * case["rate_mbps"], 0, 1000)
    # with a queue disc, the device's TxQueue holds 1 packet and the queue disc the backlog
    bottleneck = point_to_point(case["rate_mbps"], case["rtt_ms"] / 2, 1 if "queue" in case else case["buffer_pkts"])
    addresses, traffic_control = ns.Ipv4AddressHelper(), ns.TrafficControlHelper()
    bottleneck_devices = []

    def connect(helper: Any, a: Any, b: Any, network: str) -> Any:
        devices = helper.Install(a, b)
        addresses.SetBase(ns.Ipv4Address(network), ns.Ipv4Mask("255.255.255.0"))
        interfaces = addresses.Assign(devices)
        traffic_control.Uninstall(devices)  # Assign() adds a 1000-packet qdisc: the device queue alone
        bottleneck_devices.append(devices)
        return interfaces

    connect(bottleneck, routers.Get(0), routers.Get(1), "10.0.0.0")
    queue_disc = _install_queue_disc(case, bottleneck_devices[0]) if "queue" in case else None
    peers = []
    for i in range(n):
        connect(access, senders.Get(i), routers.Get(0), f"10.1.{i}.0")
        peers.append(connect(access, routers.Get(1), receivers.Get(i), f"10.2.{i}.0").GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    sinks, writers = [], {}
    for i, flow in enumerate(case["flows"]):
        port = 5000 + i
        peer = ns.InetSocketAddress(peers[i], port).ConvertTo()
        sinks.append(install_sink(receivers.Get(i), port))
        if flow["app"] == "bulk":
            install_bulk(senders.Get(i), peer, 0.0, i)
        else:
            size = flow["app"]["write_bytes"]
            interval = size * 8 / (flow["app"]["rate_mbps"] * 1e6)
            writers[i] = helpers.InstallWriter(senders.Get(i), peer, size, interval, i)
            writers[i].SetStartTime(ns.Seconds(0.0))
    helpers.SampleCwnd(CWND_SAMPLE_S, duration)
    wall_s = run_until(duration)

    flows = []
    for i in range(n):
        trace = helpers.flows[i]
        times, cwnd = list(trace.cwnd_t), list(trace.cwnd_segs)
        flows.append(
            {
                "goodput_mbps": sinks[i].GetTotalRx() * 8e-6 / duration,
                **rtt_and_retransmissions(trace),
                "cwnd_mean_segs": sum(cwnd) / len(cwnd) if cwnd else None,
                "cwnd_bins": _cwnd_bins(times, cwnd, duration),
                "writes_dropped": int(writers[i].dropped) if i in writers else None,
            }
        )
    result = {"wall_s": wall_s, "flows": flows}
    if queue_disc is not None:
        result["bottleneck"] = _bottleneck_metrics(queue_disc, duration)
        result["queue_disc"] = dict(zip(("type", "attributes"), ns3_queue_disc(case), strict=True))
    ns.Simulator.Destroy()
    return result


def dumbbell_nodes(n: int) -> tuple[Any, Any, Any]:
    """`n` senders, `n` receivers and the two routers of a dumbbell, with ns-3's internet stack."""
    from ns import ns

    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    receivers.Create(n)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    for nodes in (senders, receivers, routers):
        stack.Install(nodes)
    return senders, receivers, routers


def install_sink(receiver: Any, port: int) -> Any:
    """A TCP PacketSink on `receiver`'s `port`, listening from 0 s."""
    from ns import ns

    listen = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", listen).Install(receiver)
    sink.Start(ns.Seconds(0.0))
    return ns.DynamicCast[ns.PacketSink](sink.Get(0))


def install_bulk(sender: Any, peer: Any, start_s: float, flow: int) -> None:
    """An unlimited BulkSendApplication from `sender` to `peer` from `start_s`, its socket traced
    as flow `flow` of NS3_HELPERS."""
    import cppyy
    from ns import ns

    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", peer)
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    app = bulk.Install(sender).Get(0)
    app.SetStartTime(ns.Seconds(start_s))
    cppyy.gbl.tcplab_diff.TraceBulkAt(start_s + 1e-6, flow, app)


def run_until(stop_s: float) -> float:
    """Runs the simulation to `stop_s`; returns the wall time it took, s."""
    from ns import ns

    ns.Simulator.Stop(ns.Seconds(stop_s))
    started = time.perf_counter()
    ns.Simulator.Run()
    return time.perf_counter() - started


def rtt_and_retransmissions(trace: Any) -> dict[str, Any]:
    """A traced flow's mean RTT sample (ms) and retransmissions."""
    rtt = list(trace.rtt_ms)
    return {"rtt_mean_ms": sum(rtt) / len(rtt) if rtt else None, "retransmissions": int(trace.retransmissions)}


def _install_queue_disc(case: dict[str, Any], devices: Any) -> Any:
    """Installs the case's queue disc on both bottleneck devices, every attribute explicit,
    and traces the forward one (the left router's); returns it."""
    import cppyy
    from ns import ns

    helpers = cppyy.gbl.tcplab_diff
    kind, attributes = ns3_queue_disc(case)
    discs = helpers.InstallQueueDisc(kind, devices)
    for i in range(discs.GetN()):
        disc = discs.Get(i)
        for name, value in attributes.items():
            disc.SetAttribute(name, ns.TimeValue(ns.Time.Max()) if value == TIME_MAX else ns.StringValue(value))
        if case["queue"]["kind"] == "fq_codel":
            ns.DynamicCast[ns.FqCoDelQueueDisc](disc).SetQuantum(case["queue"]["quantum"])
    helpers.TraceQueue(discs.Get(0), devices.Get(0))
    return discs.Get(0)


def _bottleneck_metrics(disc: Any, duration: float) -> dict[str, Any]:
    """The forward queue's delays (ms; overall and in each second, by transmission time) and
    the queue disc's drops by reason."""
    import cppyy

    trace, stats = cppyy.gbl.tcplab_diff.queue, disc.GetStats()
    delays, sojourns = sorted(trace.delay_ms), list(trace.sojourn_ms)

    def reasons(counts: Any) -> dict[str, int]:
        pairs = (str(entry).rsplit("=", 1) for entry in cppyy.gbl.tcplab_diff.DropReasons(counts))
        return {reason: int(n) for reason, n in pairs}

    return {
        "packets": len(delays),
        "queue_delay_mean_ms": sum(delays) / len(delays) if delays else None,
        "queue_delay_p95_ms": _nearest_rank(delays, 0.95) if delays else None,
        # the queue disc's own sojourn (its SojournTime trace), without the device queue's wait
        "qdisc_sojourn_mean_ms": sum(sojourns) / len(sojourns) if sojourns else None,
        # the start-up transient (slow start into a 1000-packet buffer) apart from the rest
        "queue_delay_bins": _cwnd_bins(list(trace.tx_s), list(trace.delay_ms), duration),
        "drops": int(stats.nTotalDroppedPackets),
        "drops_before_enqueue": reasons(stats.nDroppedPacketsBeforeEnqueue),
        "drops_after_dequeue": reasons(stats.nDroppedPacketsAfterDequeue),
        "requeued": int(stats.nTotalRequeuedPackets),
        "device_drops": int(trace.device_drops),
    }


def _rounded(value: Any) -> Any:
    """Floats to 6 significant digits, far finer than any tolerance of the comparison."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def regenerate(patterns: list[str] | None, overwrite: bool, grid: str = "dumbbell") -> None:
    """Runs the selected cases of `grid` on ns-3 into its cache; cases cached as defined now
    are kept unless `overwrite` (a long regeneration resumes where it stopped)."""
    regenerate_cache(GRIDS[grid].cache, _selected(patterns, grid), overwrite, run_ns3)


def regenerate_cache(
    cache: Path, selected: dict[str, dict[str, Any]], overwrite: bool, run: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    """Runs each of the `selected` cases (by name) with `run` into `cache`, keeping the cases
    cached as defined now unless `overwrite`."""
    from importlib.metadata import version

    cached = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {"cases": {}}
    cached["ns3_version"] = version("ns3")
    for name, case in selected.items():
        if not overwrite and cached["cases"].get(name, {}).get("case") == case:
            continue
        # One process for all cases: ns-3's start-up (compiling its headers) takes ~10 s.
        result = run(case)
        cached["cases"][name] = {"case": case, "ns3": result}
        print(f"{name}: {result['wall_s']:.1f} s", flush=True)
        # after every case, atomically: an interrupted regeneration keeps what it finished
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(".partial")
        partial.write_text(json.dumps(_rounded(cached), separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
        partial.replace(cache)


# --- tcplab side ------------------------------------------------------------------------


def scenario(case: dict[str, Any], stack: str = "ns3") -> str:
    """The case as a tcplab scenario on `stack` ("ns3" or "linux")."""
    rate = case["rate_mbps"]
    lines = [
        'name = "ns3-differential"',
        f'duration = "{case["duration_s"]}s"',
        f'sample_interval = "{round(CWND_SAMPLE_S * 1e3)}ms"',
        "[tcp]",
        f'stack = "{stack}"',
        f"mss = {MSS}",
        f'snd_buf = "{SOCKET_BUFFER}B"',
        f'rcv_buf = "{SOCKET_BUFFER}B"',
        "[topology]",
        'kind = "dumbbell"',
        f"pairs = {len(case['flows'])}",
        # ns-3's PointToPointNetDevice puts a 2-byte PPP header on every frame
        f'bottleneck = {{ rate = "{rate}Mbps", delay = "{case["rtt_ms"] / 2:g}ms", buffer = "{case["buffer_pkts"]}pkt", '
        f"framing = 2{_queue_setting(case)} }}",
        f'access = {{ rate = "{10 * rate}Mbps", delay = "0ms", buffer = "1000pkt", framing = 2 }}',
    ]
    for i, flow in enumerate(case["flows"]):
        lines += ["[[flows]]", f'src = "s{i}"', f'dst = "r{i}"', f'cc = "{flow["cc"]}"']
        if flow["app"] != "bulk":
            lines.append(f'app = {{ rate = "{flow["app"]["rate_mbps"]}Mbps", packet_size = "{flow["app"]["write_bytes"]}B" }}')
    return "\n".join(lines) + "\n"


# ns-3's root queue disc hands a packet to the 1-packet device queue as soon as the one before
# starts transmission, so a backlogged packet waits one transmission time (1500 B + PPP's 2 B)
# after it left the queue disc, and the queue disc's backlog is one packet short of what waits
# in all: its AQM acts on the queue disc's part only. tcplab's link has no device queue; its
# discipline sees the whole wait. The same control point is the ns-3 target plus that
# transmission time (CoDel, FQ-CoDel, PIE: 1.2 ms at 10 Mbit/s, 0.12 ms at 100 Mbit/s) and RED's
# thresholds plus one packet. The AQM runs confirm it: 1xcubic-10M-codel with a 5 ms target
# differs from ns-3 by +7.7 % in goodput, with 6.2 ms it matches ns-3's goodput, mean queueing
# delay and drop count exactly.
DEVICE_QUEUE_OFFSET = {"codel": "target_ms", "fq_codel": "target_ms", "pie": "target_ms", "red": ("min_th", "max_th")}


def tcplab_queue(case: dict[str, Any]) -> dict[str, Any]:
    """The tcplab parameters of `case["queue"]` that act where ns-3's (the same values) do."""
    queue = dict(case["queue"])
    if queue["kind"] == "red":
        for key in DEVICE_QUEUE_OFFSET["red"]:
            queue[key] += 1
    else:
        key = DEVICE_QUEUE_OFFSET[queue["kind"]]
        queue[key] = round(queue[key] + (1500 + 2) * 8 / (case["rate_mbps"] * 1e3), 6)
    return queue


def _queue_setting(case: dict[str, Any]) -> str:
    """`, queue = { kind = ..., ... }` (TOML) for a case with a discipline, else nothing."""
    if "queue" not in case:
        return ""

    def toml(value: Any) -> str:
        return json.dumps(value) if not isinstance(value, bool) else str(value).lower()

    return ", queue = { " + ", ".join(f"{key} = {toml(value)}" for key, value in tcplab_queue(case).items()) + " }"


BOTTLENECK_LINK = "left->right"  # the dumbbell's bottleneck, data direction


def run_tcplab(case: dict[str, Any], stack: str = "ns3") -> dict[str, Any]:
    import polars as pl

    import tcplab

    result = tcplab.run(scenario(case, stack), plots=False)
    flows = []
    for i, summary in enumerate(result.summary["flows"]):
        series = result.flows.filter(pl.col("flow") == i)
        flows.append(
            {
                "goodput_mbps": summary["goodput_mbps"],
                "rtt_mean_ms": summary["rtt_mean_ms"],
                "retransmissions": summary["retransmits"],
                "cwnd_mean_segs": series["cwnd_pkts"].mean(),
                "cwnd_bins": _cwnd_bins(series["t_s"].to_list(), series["cwnd_pkts"].to_list(), case["duration_s"]),
            }
        )
    link = next(link for link in result.summary["links"] if link["id"] == BOTTLENECK_LINK)
    bottleneck = {
        "queue_delay_mean_ms": link.get("sojourn_mean_ms"),
        "queue_delay_p95_ms": link.get("sojourn_p95_ms"),
        "drops": link["drops"],
    }
    return {"wall_s": result.summary["run"]["wall_seconds"], "flows": flows, "bottleneck": bottleneck}


def _error(ours: float | None, reference: float | None) -> str:
    if ours is None or not reference:
        return "–"
    return f"{100 * (ours - reference) / reference:+.1f} %"


STACKS = ("ns3", "linux")

# The acceptance bounds of the ns3 stack against ns-3, as relative errors of the flows' means.
TOLERANCES = {"goodput_mbps": 0.03, "rtt_mean_ms": 0.10, "cwnd_mean_segs": 0.15}

# Cases the ns3 stack does not follow within TOLERANCES, by name pattern, with the mechanism
# (docs/validation.md, "The simulator against ns-3").
DIVERGENT = {
    "4xbbr-10M-1bdp-*": "four BBR flows in one BDP of buffer live on timeouts in both (ns-3: 34 in 20 s, ours: 41); "
    "identical to 0.5 ms up to the first (1.119 s), then which flow times out when differs",
    # The queue-discipline grid. ns-3's RedQueueDisc and PieQueueDisc are not Linux's sch_red and
    # sch_pie (tcplab's): see docs/queue-red.md and docs/queue-pie.md. RED and PIE draw their
    # drops from different generators on the two sides, so single runs part at the first random
    # drop; each entry compares ns-3's RngRun 1-3 with our seeds 1-8.
    "1xnewreno-100M-red": "one NewReno flow recovers from its slow-start overshoot at one segment per RTT, so its "
    "goodput is where the last loss falls: ns-3 51.5-57.3 Mbit/s over RngRun 1-3, ours 39.6-52.8 (seeds 1-8)",
    "1xcubic-10M-red": "seed spread across the bound: ns-3 8.33-8.94 Mbit/s over RngRun 1-3, ours 8.10-8.54 (seeds 1-8)",
    "4xcubic-10M-red": "ns-3's RedQueueDisc takes no action while its queue disc holds at most one packet (nQueued > 1; "
    "Linux's sch_red has no such rule and ns-3 no attribute for it): after each synchronised burst RED's average stays "
    "above 2 max_th while the queue drains, ns-3 lets a trickle through and ours drops every arrival, so ours times out "
    "more (seeds 1-8: 12-19 timeouts, 7.71-8.17 Mbit/s; ns-3 RngRun 1-3: 10-14, 8.37-8.95); the rule in a temporary "
    "build of ours (no action at a backlog of 2 or less, ns-3's device queue included) gives 9-14 and 8.34-8.78",
    "4xcubic-10M-pie": "the same kind of guard: ns-3's PIE holds off while its queue disc has at most 2 packets, Linux's "
    "while the backlog is under 2 MTU; in a temporary build of ours, ns-3's guard moves seeds 1-8 from 8.70-8.90 to "
    "8.91-9.11 Mbit/s (ns-3 RngRun 1-3: 9.24-9.36)",
    "1xnewreno-100M-pie": "as 1xnewreno-100M-red, the other way: ns-3 55.2-66.1 Mbit/s over RngRun 1-3, ours 58.3-78.5",
    "4xnewreno-10M-fq_codel": "deterministic: 8.32 against 9.00 Mbit/s with as many recoveries (101 / 98) and no timeouts; "
    "the senders send the same segments until the queue's service order (flows 1 and 3 served the other way from the "
    "first round trip) moves ACKs by about 1 ms; ns-3's per-flow CoDel guard in ours gives 8.55 (one MTU) or 8.78 (two), "
    "its new-flow list rule nothing",
}


def diverges(name: str) -> str | None:
    """Why `name` is allowed outside TOLERANCES, or None."""
    return next((why for pattern, why in DIVERGENT.items() if fnmatch.fnmatch(name, pattern)), None)


# The acceptance bounds of the ns3 stack on the aqm grid: goodput as on the dumbbell grid, the
# bottleneck's mean queueing delay within 20 %.
AQM_TOLERANCES = {"goodput_mbps": 0.03, "queue_delay_mean_ms": 0.20}
BOTTLENECK_METRICS = ("queue_delay_mean_ms", "queue_delay_p95_ms", "drops")


def _value(result: dict[str, Any], key: str, total: bool = False) -> float | None:
    """A bottleneck metric of a run's `result`, else the mean (or `total`) over its flows."""
    if key in BOTTLENECK_METRICS:
        return result.get("bottleneck", {}).get(key)
    return sum(row[key] or 0 for row in result["flows"]) if total else _mean(result["flows"], key)


def out_of_bounds(ns3: Any, ours: Any, tolerances: dict[str, float] = TOLERANCES) -> list[str]:
    """The metrics whose values (flow means, or the bottleneck's) differ from ns-3's by more
    than `tolerances`; `ns3` and `ours` are runs' results or their flows. A metric ours does
    not report is out of bounds."""
    ns3, ours = ({"flows": run} if isinstance(run, list) else run for run in (ns3, ours))
    failing = []
    for key, bound in tolerances.items():
        theirs, mine = _value(ns3, key), _value(ours, key)
        if mine is None or abs(mine - theirs) > bound * theirs:
            failing.append(key)
    return failing


# What compare prints of each grid: (key, label, digits) of the metrics shown with each stack's
# relative error, then counts shown side by side.
COLUMNS = {
    "dumbbell": (
        (
            ("goodput_mbps", "goodput (Mbit/s)", 2),
            ("rtt_mean_ms", "mean RTT (ms)", 1),
            ("cwnd_mean_segs", "mean cwnd (segments)", 1),
        ),
        ("retransmissions",),
    ),
    "aqm": (
        (
            ("goodput_mbps", "goodput (Mbit/s)", 2),
            ("rtt_mean_ms", "mean RTT (ms)", 1),
            ("queue_delay_mean_ms", "mean queueing delay (ms)", 2),
            ("queue_delay_p95_ms", "p95 queueing delay (ms)", 2),
        ),
        ("retransmissions", "drops"),
    ),
}


def compare(patterns: list[str] | None, stacks: tuple[str, ...] = STACKS, grid: str = "dumbbell") -> None:
    """Prints a Markdown table: ns-3's per-flow means (and on the aqm grid its bottleneck's
    queueing delay) and each tcplab stack's error against them (retransmissions and drops as
    counts); a case outside the grid's acceptance bounds on the ns3 stack is marked ✗."""
    cached = json.loads(GRIDS[grid].cache.read_text(encoding="utf-8"))["cases"]
    selected = _selected(patterns, grid)
    names = [name for name in selected if name in cached]
    if len(names) < len(selected):
        print(f"{len(selected) - len(names)} selected cases have no ns-3 result yet (benches/ns3_diff.py regenerate)")
    metrics, counts = COLUMNS[grid]
    tolerances = AQM_TOLERANCES if grid == "aqm" else TOLERANCES
    header = ["case"]
    for _, label, _ in metrics:
        header += [f"{label} ns-3"] + [f"tcplab-{stack}" for stack in stacks]
    for key in counts:
        header += [f"{key} ns-3"] + [f"tcplab-{stack}" for stack in stacks]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    refused = {}
    for name in names:
        ns3 = cached[name]["ns3"]
        ours = {stack: _run_or_refused(cached[name]["case"], stack, refused) for stack in stacks}
        cells = [f"{name} †" if diverges(name) else name]
        if ours.get("ns3") and out_of_bounds(ns3, ours["ns3"], tolerances):
            cells[0] += " ✗"
        for key, _, digits in metrics:
            theirs = _value(ns3, key)
            cells += [f"{theirs:.{digits}f}"] + [
                _error(_value(ours[stack], key) if ours[stack] else None, theirs) for stack in stacks
            ]
        for key in counts:
            cells += [str(_value(run, key, total=True)) if run else "–" for run in (ns3, *ours.values())]
        print("| " + " | ".join(cells) + " |", flush=True)
    for error in refused:
        print(f"tcplab refused {refused[error]} runs: {error}")


def _run_or_refused(case: dict[str, Any], stack: str, refused: dict[str, int]) -> dict[str, Any] | None:
    """run_tcplab, or None for a case tcplab refuses (a discipline it does not have yet),
    counted in `refused` by error."""
    from tcplab import ScenarioError

    try:
        return run_tcplab(case, stack)
    except ScenarioError as error:
        refused[str(error)] = refused.get(str(error), 0) + 1
        return None


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return sum(row[key] or 0 for row in rows) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("regenerate", "compare"):
        p = sub.add_parser(command)
        p.add_argument("--grid", choices=GRIDS, default="dumbbell", help="the grid of cases (default dumbbell)")
        p.add_argument("--cases", action="append", help="shell pattern of case names (repeatable)")
        if command == "compare":
            p.add_argument("--stack", choices=STACKS, action="append", help="tcplab stack to compare (repeatable; default both)")
        if command == "regenerate":
            p.add_argument("--overwrite", action="store_true", help="run cached cases again")
    args = parser.parse_args()
    if args.command == "regenerate":
        regenerate(args.cases, args.overwrite, args.grid)
    else:
        compare(args.cases, tuple(args.stack) if args.stack else STACKS, args.grid)


if __name__ == "__main__":
    main()
