"""What ns-3 itself gives for the wifi-cubic-bbr study's setup (python/tcplab/studies/wifi-cubic-bbr.toml),
beside tcplab's ns3-stack runs of the same cases.

ns-3 is NOT a tcplab dependency. Its results are cached in tests/data/ns3/wifi.json. To
regenerate them, run this script with the interpreter of an environment that has the `ns3`
package (PyPI, 3.44), one case per ns-3 process start-up (as benches/ns3_diff.py):
    /tmp/ns3venv/bin/python benches/ns3_wifi.py regenerate [--cases PATTERN] [--overwrite]
The cache holds one process's run of all cases in order; a case run alone can differ slightly
(wifi4-1-cubic-droptail-20s: 8.1758 alone, 8.1744 in the cache), as ns-3's random streams and
node numbering carry over between the cases of one process.
Compare tcplab (with tcplab's interpreter) against the cache:
    .venv/bin/python benches/ns3_wifi.py compare [--cases PATTERN]

The setup, as the study file's: N = 1 or 4 senders -- access -- router A -- 10 Mbit/s, 10 ms
bottleneck -- router B -- 30 Mbit/s point-to-point links (0 ms, 100-packet device queues) --
N receivers. Access `p2p`: the senders' 30 Mbit/s point-to-point links; `wifi4` and `wifi6`:
the senders are the stations of one BSS whose access point is router A (ns3::ApWifiMac,
ns3::StaWifiMac on a YansWifiChannel), every device received at -80 dBm
(ns3::FixedRssLossModel), ns3::TableBasedErrorRateModel, ns3::ConstantRateWifiManager:
  wifi4 802.11n, 2.4 GHz, 20 MHz, GI 800 ns, HtMcs4;  wifi6 802.11ax, 5 GHz, 80 MHz, GI 3.2 us, HeMcs0.
TCP: ns3::TcpCubic, SegmentSize 536 B, DelAckCount 1, everything else ns-3's default
(TcpSocket/TcpSocketBase attributes); BulkSendApplication to a PacketSink per pair.
Queues, the axis the study does not give:
  droptail  the traffic-control layer removed from every device (TrafficControlHelper::Uninstall),
            the bottleneck device's TxQueue a 37,500 B DropTailQueue (tcplab's buffer);
  fqcodel   ns-3's default: the FqCoDel root queue disc Ipv4AddressHelper::Assign installs on
            every IPv4 device (mq with FqCoDel children on the WiFi devices) over the
            point-to-point devices' default 100-packet TxQueue.
ARP is replaced by populated neighbour caches (NeighborCacheHelper). The flows start at
START_S (after the stations associated; beacons stay on) and run for `duration_s` (20 s for
every case, 60 s for some: the study's run length is not given); goodput is the PacketSink's bytes over that interval in 2^20 bit/s (the study's
"Mbps"). Recorded per case: goodput per flow and total, TCP retransmissions, the bottleneck's
device queue (packets received, drops) and queue discs (drops by reason), and for WiFi:
the access point's PHY receive drops by reason (WifiPhy PhyRxDrop, every frame) and
successful receptions (PhyRxEnd), ns3::WifiPhyRxTraceHelper's statistics of the unicast data
MPDUs addressed to each device (received / failed, failed PPDUs by reason, overlapping
PPDUs), ns3::WifiTxStatsHelper's per-device MPDU successes, retransmissions and failures,
and the MACs' drops by reason (WifiMac DroppedMpdu, MacTxDrop).
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import ns3_diff

CACHE = Path(__file__).resolve().parent.parent / "tests" / "data" / "ns3" / "wifi.json"
STUDY = "wifi-cubic-bbr"
SEGMENT = 536
DURATIONS_S = (20, 60)  # the study's run length is not given; tcplab's study file has 60 s
START_S = 1.0  # the stations associate before (beacon interval 102.4 ms)
MIB = 2**20  # the study's "Mbps"
ACCESS = ("p2p", "wifi4", "wifi6")
QUEUES = ("droptail", "fqcodel")
RATE_MBPS, DELAY_MS, BUFFER_BYTES = 10, 10, 37500  # the bottleneck
ACCESS_MBPS, ACCESS_PACKETS = 30, 100
# The study file's WiFi settings: ns-3 standard, channel settings (number 0: the band's default
# for the width), guard interval and the constant data mode.
WIFI = {
    "wifi4": {"standard": "802.11n", "channel": "{0, 20, BAND_2_4GHZ, 0}", "gi_ns": 800, "mode": "HtMcs4"},
    "wifi6": {"standard": "802.11ax", "channel": "{0, 80, BAND_5GHZ, 0}", "gi_ns": 3200, "mode": "HeMcs0"},
}
RSS_DBM = -80.0


def cases() -> dict[str, dict[str, Any]]:
    """Every case by name, e.g. `wifi4-4-cubic-fqcodel-20s`: the study's case `ns3-wifi4-4-cubic-536B`
    with one of the two queue set-ups, over one of the run lengths."""
    return {
        f"{access}-{n}-cubic-{queue}-{duration}s": {"access": access, "flows": n, "queue": queue, "duration_s": duration}
        for duration, access, n, queue in itertools.product(DURATIONS_S, ACCESS, (1, 4), QUEUES)
    }


def study_case(case: dict[str, Any]) -> str:
    """The study's case of the same setup (tcplab's side; its queue axis names ns-3's FqCoDel
    set-up fq_codel)."""
    queue = {"droptail": "droptail", "fqcodel": "fq_codel"}[case["queue"]]
    return f"{STUDY}:ns3-{case['access']}-{case['flows']}-cubic-{SEGMENT}B-{queue}"


def _selected(patterns: list[str] | None) -> dict[str, dict[str, Any]]:
    return ns3_diff.select(cases(), patterns, "wifi4-4-cubic-fqcodel-20s")


# --- ns-3 side (runs in ns-3's interpreter) ----------------------------------------------

# The BSS and its counters, compiled by cppyy against ns-3's headers (the flows' traces are
# ns3_diff's NS3_HELPERS).
WIFI_HELPERS = r"""
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
namespace tcplab_wifi {
using Counts = std::map<std::string, uint64_t>;
std::map<uint32_t, Counts> phy_drops, mac_drops;  // by node id, then reason
std::map<uint32_t, uint64_t> phy_rx_end, mac_tx_drops, tc_drops;

// A trace source's name is checked: a misspelt one connects nothing and counts 0.
template <typename C> void Connect(ns3::Ptr<ns3::Object> object, const std::string& source, C callback) {
  NS_ABORT_MSG_UNLESS(object->TraceConnectWithoutContext(source, callback), "no trace source " << source);
}
template <typename T> std::string Name(T value) { std::ostringstream s; s << value; return s.str(); }
const char* MacDropName(ns3::WifiMacDropReason r) {
  switch (r) {
    case ns3::WIFI_MAC_DROP_FAILED_ENQUEUE: return "FAILED_ENQUEUE";
    case ns3::WIFI_MAC_DROP_EXPIRED_LIFETIME: return "EXPIRED_LIFETIME";
    case ns3::WIFI_MAC_DROP_REACHED_RETRY_LIMIT: return "REACHED_RETRY_LIMIT";
    case ns3::WIFI_MAC_DROP_QOS_OLD_PACKET: return "QOS_OLD_PACKET";
  }
  return "UNKNOWN";
}

void PhyRxDrop(uint32_t node, ns3::Ptr<const ns3::Packet>, ns3::WifiPhyRxfailureReason r) { phy_drops[node][Name(r)]++; }
void PhyRxEnd(uint32_t node, ns3::Ptr<const ns3::Packet>) { phy_rx_end[node]++; }
void DroppedMpdu(uint32_t node, ns3::WifiMacDropReason r, ns3::Ptr<const ns3::WifiMpdu>) { mac_drops[node][MacDropName(r)]++; }
void MacTxDrop(uint32_t node, ns3::Ptr<const ns3::Packet>) { mac_tx_drops[node]++; }
void TcDrop(uint32_t node, ns3::Ptr<const ns3::Packet>) { tc_drops[node]++; }

// Without a queue disc, the traffic-control layer drops a packet whose device queue is stopped
// (TrafficControlLayer::Send; a queue stops when it could not take another MTU-sized packet):
// these are the drop-tail drops, not the device queue's own (its Enqueue never overflows).
void TraceTrafficControlDrops(ns3::Ptr<ns3::Node> node) {
  Connect(node->GetObject<ns3::TrafficControlLayer>(), "TcDrop", ns3::MakeBoundCallback(&TcDrop, node->GetId()));
}
uint64_t TrafficControlDrops(ns3::Ptr<ns3::Node> node) { return tc_drops[node->GetId()]; }

// One BSS on a YansWifiChannel: `ap` the access point, `stations` its stations, every device
// received by every other at `rss_dbm`, one constant data mode, the table-based error model.
ns3::NetDeviceContainer InstallBss(const std::string& standard, const std::string& channel, uint32_t gi_ns,
                                   const std::string& mode, double rss_dbm, ns3::Ptr<ns3::Node> ap,
                                   ns3::NodeContainer stations) {
  ns3::YansWifiChannelHelper channelHelper;
  channelHelper.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
  channelHelper.AddPropagationLoss("ns3::FixedRssLossModel", "Rss", ns3::DoubleValue(rss_dbm));
  ns3::YansWifiPhyHelper phy;
  phy.SetChannel(channelHelper.Create());
  phy.SetErrorRateModel("ns3::TableBasedErrorRateModel");
  phy.Set("ChannelSettings", ns3::StringValue(channel));
  ns3::WifiHelper wifi;
  wifi.SetStandard(standard);
  wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", ns3::StringValue(mode),
                               "ControlMode", ns3::StringValue(mode));
  if (standard == "802.11ax") wifi.ConfigHeOptions("GuardInterval", ns3::TimeValue(ns3::NanoSeconds(gi_ns)));
  ns3::WifiMacHelper mac;
  ns3::Ssid ssid("tcplab");
  mac.SetType("ns3::StaWifiMac", "Ssid", ns3::SsidValue(ssid), "ActiveProbing", ns3::BooleanValue(false));
  ns3::NetDeviceContainer devices = wifi.Install(phy, mac, stations);
  mac.SetType("ns3::ApWifiMac", "Ssid", ns3::SsidValue(ssid));
  ns3::NetDeviceContainer apDevice = wifi.Install(phy, mac, ap);
  apDevice.Add(devices);  // the access point first
  ns3::MobilityHelper mobility;
  mobility.SetPositionAllocator("ns3::GridPositionAllocator", "DeltaX", ns3::DoubleValue(1.0));
  mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
  mobility.Install(ap);
  mobility.Install(stations);
  for (uint32_t i = 0; i < apDevice.GetN(); ++i) {
    auto device = ns3::DynamicCast<ns3::WifiNetDevice>(apDevice.Get(i));
    uint32_t node = device->GetNode()->GetId();
    Connect(device->GetPhy(), "PhyRxDrop", ns3::MakeBoundCallback(&PhyRxDrop, node));
    Connect(device->GetPhy(), "PhyRxEnd", ns3::MakeBoundCallback(&PhyRxEnd, node));
    Connect(device->GetMac(), "DroppedMpdu", ns3::MakeBoundCallback(&DroppedMpdu, node));
    Connect(device->GetMac(), "MacTxDrop", ns3::MakeBoundCallback(&MacTxDrop, node));
  }
  return apDevice;
}

// Every counter of one device as "key=value" lines (Python parses them): this module's traces,
// WifiPhyRxTraceHelper's reception statistics of the unicast data MPDUs addressed to it and
// WifiTxStatsHelper's of the data MPDUs it sent.
std::string DeviceCounters(ns3::Ptr<ns3::NetDevice> device, const ns3::WifiPhyRxTraceHelper& rx,
                           const ns3::WifiTxStatsHelper& tx) {
  uint32_t node = device->GetNode()->GetId(), index = device->GetIfIndex();
  std::ostringstream out;
  for (const auto& [reason, n] : phy_drops[node]) out << "phy_rx_drops." << reason << "=" << n << "\n";
  for (const auto& [reason, n] : mac_drops[node]) out << "mac_drops." << reason << "=" << n << "\n";
  out << "phy_rx_end=" << phy_rx_end[node] << "\nmac_tx_drops=" << mac_tx_drops[node] << "\n";
  ns3::WifiPhyTraceStatistics stats;
  try {
    stats = rx.GetStatistics(node, index);
  } catch (const std::out_of_range&) {
    // 3.44's WifiPhyRxTraceSink::CountStatisticsForRecord maps a dropped PPDU's receiver
    // address with map::at, which throws for an address of no traced node (seen in wifi6-4)
    out << "rx_statistics_unavailable=1\n";
    return out.str();
  }
  out << "rx_data_mpdus_ok=" << stats.m_receivedMpdus << "\nrx_data_mpdus_failed=" << stats.m_failedMpdus
      << "\nrx_data_ppdus_ok=" << stats.m_receivedPpdus << "\nrx_data_ppdus_failed=" << stats.m_failedPpdus
      << "\nrx_data_ppdus_overlapping=" << stats.m_overlappingPpdus << "\n";
  for (const auto& [reason, n] : stats.m_ppduDropReasons) out << "rx_data_ppdu_drops." << reason << "=" << n << "\n";
  auto key = std::make_tuple(node, index);
  auto count = [&key](const ns3::WifiTxStatsHelper::CountPerNodeDevice_t& counts) {
    auto it = counts.find(key);
    return it == counts.end() ? uint64_t(0) : it->second;
  };
  out << "tx_mpdus_acked=" << count(tx.GetSuccessesByNodeDevice()) << "\ntx_mpdus_failed="
      << count(tx.GetFailuresByNodeDevice()) << "\ntx_retransmissions=" << count(tx.GetRetransmissionsByNodeDevice())
      << "\n";
  return out.str();
}
}
"""


def _counters(text: str) -> dict[str, Any]:
    """DeviceCounters' "a.b=n" lines as nested dicts."""
    counters: dict[str, Any] = {}
    for line in text.splitlines():
        key, value = line.rsplit("=", 1)
        *groups, name = key.split(".")
        target = counters
        for group in groups:
            target = target.setdefault(group, {})
        target[name] = int(value)
    return counters


def run_ns3(case: dict[str, Any]) -> dict[str, Any]:
    import cppyy
    from ns import ns

    if not hasattr(cppyy.gbl, "tcplab_diff"):
        cppyy.cppdef(ns3_diff.NS3_HELPERS)
    if not hasattr(cppyy.gbl, "tcplab_wifi"):
        cppyy.cppdef(WIFI_HELPERS)
    flow_traces, wifi_helpers = cppyy.gbl.tcplab_diff, cppyy.gbl.tcplab_wifi
    counters_by_node = (
        wifi_helpers.phy_drops,
        wifi_helpers.mac_drops,
        wifi_helpers.phy_rx_end,
        wifi_helpers.mac_tx_drops,
        wifi_helpers.tc_drops,
    )
    for counters in counters_by_node:
        counters.clear()
    n, duration, end = case["flows"], float(case["duration_s"]), START_S + case["duration_s"]
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpCubic")))
    flow_traces.flows.clear()
    flow_traces.flows.resize(n)
    flow_traces.segment = SEGMENT

    senders, receivers, routers = ns3_diff.dumbbell_nodes(n)

    def point_to_point(rate_mbps: float, delay_ms: float, queue_size: str) -> Any:
        helper = ns.PointToPointHelper()
        helper.SetDeviceAttribute("DataRate", ns.StringValue(f"{rate_mbps}Mbps"))
        helper.SetChannelAttribute("Delay", ns.StringValue(f"{delay_ms}ms"))
        helper.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(queue_size))
        return helper

    droptail = case["queue"] == "droptail"
    addresses, traffic_control = ns.Ipv4AddressHelper(), ns.TrafficControlHelper()

    def assign(devices: Any, network: str) -> Any:
        addresses.SetBase(ns.Ipv4Address(network), ns.Ipv4Mask("255.255.255.0"))
        interfaces = addresses.Assign(devices)
        if droptail:
            traffic_control.Uninstall(devices)  # Assign() installs the default queue disc
        return interfaces

    # with the default queue disc, the device queue is point-to-point's default (100 packets)
    bottleneck = point_to_point(RATE_MBPS, DELAY_MS, f"{BUFFER_BYTES}B" if droptail else f"{ACCESS_PACKETS}p")
    bottleneck_devices = bottleneck.Install(routers.Get(0), routers.Get(1))
    assign(bottleneck_devices, "10.0.0.0")
    access = point_to_point(ACCESS_MBPS, 0, f"{ACCESS_PACKETS}p")
    wifi_devices = None
    if case["access"] == "p2p":
        for i in range(n):
            assign(access.Install(senders.Get(i), routers.Get(0)), f"10.1.{i}.0")
    else:
        bss = WIFI[case["access"]]
        wifi_devices = wifi_helpers.InstallBss(
            bss["standard"], bss["channel"], bss["gi_ns"], bss["mode"], RSS_DBM, routers.Get(0), senders
        )
        assign(wifi_devices, "10.1.0.0")
    peers = [assign(access.Install(routers.Get(1), receivers.Get(i)), f"10.2.{i}.0").GetAddress(1) for i in range(n)]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    # No ARP (tcplab has none; and WifiPhyRxTraceHelper's statistics throw on a lost broadcast
    # data frame, whose address it cannot map to a node)
    ns.NeighborCacheHelper().PopulateNeighborCache()
    for i in range(n):
        wifi_helpers.TraceTrafficControlDrops(senders.Get(i))
    wifi_helpers.TraceTrafficControlDrops(routers.Get(0))

    if wifi_devices is not None:
        wifi_nodes = ns.NodeContainer(routers.Get(0))
        wifi_nodes.Add(senders)
        rx_stats, tx_stats = ns.WifiPhyRxTraceHelper(), ns.WifiTxStatsHelper()
        for helper in (rx_stats, tx_stats):
            helper.Enable(wifi_nodes)
            helper.Start(ns.Seconds(START_S))
            helper.Stop(ns.Seconds(end))

    sinks = []
    for i in range(n):
        port = 5000 + i
        sinks.append(ns3_diff.install_sink(receivers.Get(i), port))
        ns3_diff.install_bulk(senders.Get(i), ns.InetSocketAddress(peers[i], port).ConvertTo(), START_S, i)
    wall_s = ns3_diff.run_until(end)

    flows = [
        {
            "goodput_mibps": sinks[i].GetTotalRx() * 8 / MIB / duration,
            **ns3_diff.rtt_and_retransmissions(flow_traces.flows[i]),
        }
        for i in range(n)
    ]
    result = {
        "wall_s": wall_s,
        "goodput_mibps": sum(flow["goodput_mibps"] for flow in flows),
        "flows": flows,
        "bottleneck": _bottleneck(bottleneck_devices.Get(0)),
        # router A's traffic-control layer: its bottleneck's drop-tail drops (the access
        # point's downlink carries the TCP ACKs only); the senders': their access queues'
        "traffic_control_drops": {
            "router_a": int(wifi_helpers.TrafficControlDrops(routers.Get(0))),
            "senders": sum(int(wifi_helpers.TrafficControlDrops(senders.Get(i))) for i in range(n)),
        },
    }
    if wifi_devices is not None:
        devices = {"ap": wifi_devices.Get(0)} | {f"s{i}": wifi_devices.Get(1 + i) for i in range(n)}
        result["wifi"] = {
            name: _counters(str(wifi_helpers.DeviceCounters(device, rx_stats, tx_stats))) for name, device in devices.items()
        }
        ap_disc = _queue_disc_stats(wifi_devices.Get(0))
        if ap_disc is not None:
            result["ap_queue_disc"] = ap_disc
    ns.Simulator.Destroy()
    return result


def _queue_disc_stats(device: Any) -> dict[str, Any] | None:
    """The drops (by reason) and packets of the root queue disc on `device`, or None without one."""
    import cppyy
    from ns import ns

    disc = device.GetNode().GetObject[ns.TrafficControlLayer]().GetRootQueueDiscOnDevice(device)
    if not disc:
        return None
    stats = disc.GetStats()

    def reasons(counts: Any) -> dict[str, int]:
        pairs = (str(entry).rsplit("=", 1) for entry in cppyy.gbl.tcplab_diff.DropReasons(counts))
        return {reason: int(n) for reason, n in pairs}

    return {
        "packets": int(stats.nTotalReceivedPackets),
        "drops": int(stats.nTotalDroppedPackets),
        "drops_before_enqueue": reasons(stats.nDroppedPacketsBeforeEnqueue),
        "drops_after_dequeue": reasons(stats.nDroppedPacketsAfterDequeue),
    }


def _bottleneck(device: Any) -> dict[str, Any]:
    """Router A's bottleneck device: its TxQueue's packets and drops, its queue disc's if any."""
    from ns import ns

    queue = ns.DynamicCast[ns.PointToPointNetDevice](device).GetQueue()
    result = {"device_packets": int(queue.GetTotalReceivedPackets()), "device_drops": int(queue.GetTotalDroppedPackets())}
    disc = _queue_disc_stats(device)
    if disc is not None:
        result["queue_disc"] = disc
    return result


def regenerate(patterns: list[str] | None, overwrite: bool) -> None:
    """Runs the selected cases on ns-3 into the cache; cases cached as defined now are kept
    unless `overwrite`."""
    ns3_diff.regenerate_cache(CACHE, _selected(patterns), overwrite, run_ns3)


# --- tcplab side ------------------------------------------------------------------------

AP_DEVICE = "left"  # router A, the access point in tcplab's dumbbell
BOTTLENECK_LINK = "left->right"


def run_tcplab(case: dict[str, Any]) -> dict[str, Any]:
    """The study's case of `case` on tcplab, over the same duration, as ns-3's result's keys."""
    import tcplab

    summary = tcplab.run(study_case(case), overrides={"duration": f"{case['duration_s']}s"}, plots=False).summary
    flows = [
        {
            "goodput_mibps": flow["goodput_mbps"] * 1e6 / MIB,
            "rtt_mean_ms": flow["rtt_mean_ms"],
            "retransmissions": flow["retransmits"],
            "segments_sent": flow["segments_sent"],
        }
        for flow in summary["flows"]
    ]
    link = next(link for link in summary["links"] if link["id"] == BOTTLENECK_LINK)
    result = {
        "goodput_mibps": sum(flow["goodput_mibps"] for flow in flows),
        "flows": flows,
        "bottleneck": {"drops": link["drops"]},
    }
    if "wifi" in summary:
        result["wifi"] = {device["device"]: device for device in summary["wifi"]["devices"]}
        result["ap_drop_ratio"] = summary["wifi"]["ap_drop_ratio"]
    return result


def drop_ratios(result: dict[str, Any], ns3: bool) -> dict[str, float | None]:
    """The candidates for the study's "AP drop ratio" in a run's `result`:
    phy    data MPDUs to the AP lost at its PHY (collisions, errors) over all data MPDUs to it
           (tcplab's ap_drop_ratio; ns-3: WifiPhyRxTraceHelper's failed / (failed + received));
    queue  packets dropped at router A's bottleneck queue (device queue and queue disc) over the
           data packets sent (ns-3: its queue's received packets; tcplab: segments sent);
    mac    MPDUs the stations' MACs dropped (retry limit, lifetime) over their MPDUs acked."""
    wifi = result.get("wifi")
    if ns3:
        bottleneck = result["bottleneck"]
        disc = bottleneck.get("queue_disc", {})
        drops = bottleneck["device_drops"] + disc.get("drops", 0) + result["traffic_control_drops"]["router_a"]
        queue = drops / (disc.get("packets") or bottleneck["device_packets"] + drops)
    else:
        queue = result["bottleneck"]["drops"] / sum(flow["segments_sent"] for flow in result["flows"])
    ratios: dict[str, float | None] = {"phy": None, "queue": queue, "mac": None}
    if wifi is None:
        return ratios
    stations = [device for name, device in wifi.items() if name not in ("ap", AP_DEVICE)]
    if ns3:
        ap = wifi["ap"]
        if "rx_statistics_unavailable" in ap:
            return ratios
        ratios["phy"] = ap["rx_data_mpdus_failed"] / (ap["rx_data_mpdus_failed"] + ap["rx_data_mpdus_ok"])
        dropped = sum(sum(device.get("mac_drops", {}).values()) for device in stations)
        ratios["mac"] = dropped / sum(device["tx_mpdus_acked"] for device in stations)
    else:
        ratios["phy"] = result["ap_drop_ratio"]
        ratios["mac"] = sum(device["mac_drops"] for device in stations) / result["wifi"][AP_DEVICE]["rx_ok_mpdus"]
    return ratios


def compare(patterns: list[str] | None) -> None:
    """Prints a Markdown table: each case's total goodput on ns-3 and tcplab (2^20 bit/s), the
    WiFi case's gap to the P2P case with the same flows and queue, and the drop-ratio candidates
    on both sides."""
    cached = json.loads(CACHE.read_text(encoding="utf-8"))["cases"]
    names = [name for name in _selected(patterns) if name in cached]
    header = ["case", "goodput ns-3", "tcplab", "gap ns-3", "gap tcplab"]
    for kind in ("phy", "queue", "mac"):
        header += [f"{kind} ratio ns-3", "tcplab"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    ours = {name: run_tcplab(cached[name]["case"]) for name in names}

    def gap(results: dict[str, Any], name: str, case: dict[str, Any]) -> str:
        p2p = name.replace(case["access"], "p2p", 1)
        if case["access"] == "p2p" or p2p not in results:
            return "–"
        reference = results[p2p]["goodput_mibps"]
        return f"{100 * (results[name]['goodput_mibps'] - reference) / reference:+.1f} %"

    theirs = {name: cached[name]["ns3"] for name in names}
    for name in names:
        case = cached[name]["case"]
        cells = [name, f"{theirs[name]['goodput_mibps']:.4f}", f"{ours[name]['goodput_mibps']:.4f}"]
        cells += [gap(theirs, name, case), gap(ours, name, case)]
        ns3_ratios, our_ratios = drop_ratios(theirs[name], ns3=True), drop_ratios(ours[name], ns3=False)
        for kind in ("phy", "queue", "mac"):
            cells += ["–" if r[kind] is None else f"{r[kind]:.3g}" for r in (ns3_ratios, our_ratios)]
        print("| " + " | ".join(cells) + " |", flush=True)
    mechanics = ("mpdus_per_ppdu", "dropped_ppdus", "failed_mpdus", "station_retries")
    print("\n| case | " + " | ".join(f"{key} ns-3 | tcplab" for key in mechanics) + " |")
    print("|" + "---|" * (1 + 2 * len(mechanics)))
    for name in names:
        if "wifi" not in theirs[name] or "rx_statistics_unavailable" in theirs[name]["wifi"]["ap"]:
            continue
        values = (wifi_mechanics(theirs[name], ns3=True), wifi_mechanics(ours[name], ns3=False))
        cells = [name] + ["–" if v[key] is None else f"{v[key]:.3g}" for key in mechanics for v in values]
        print("| " + " | ".join(cells) + " |", flush=True)


def wifi_mechanics(result: dict[str, Any], ns3: bool) -> dict[str, float]:
    """The access point's side of the uplink in a WiFi run's `result`: data MPDUs per PPDU sent
    to it (aggregation), the share of those PPDUs lost at its PHY before the payload (ns-3's
    PhyRxDrop reasons: TXING is a collision, both ends starting in the same slot), the share of
    data MPDUs lost (collisions and bit errors), and the stations' MAC retries per data MPDU the
    access point received."""
    wifi = result["wifi"]
    if ns3:
        ap = wifi["ap"]
        ppdus = ap["rx_data_ppdus_ok"] + ap["rx_data_ppdus_failed"]
        mpdus = ap["rx_data_mpdus_ok"] + ap["rx_data_mpdus_failed"]
        retries = sum(device["tx_retransmissions"] for name, device in wifi.items() if name != "ap")
        return {
            "mpdus_per_ppdu": mpdus / ppdus,
            "dropped_ppdus": sum(ap.get("rx_data_ppdu_drops", {}).values()) / ppdus,
            "failed_mpdus": ap["rx_data_mpdus_failed"] / mpdus,
            "station_retries": retries / ap["rx_data_mpdus_ok"],
        }
    ap = wifi[AP_DEVICE]
    mpdus = ap["rx_ok_mpdus"] + ap["rx_collision_mpdus"] + ap["rx_error_mpdus"]
    stations = [device for name, device in wifi.items() if name != AP_DEVICE]
    return {
        "mpdus_per_ppdu": mpdus / sum(device["ppdus"] for device in stations),
        "dropped_ppdus": None,
        "failed_mpdus": (ap["rx_collision_mpdus"] + ap["rx_error_mpdus"]) / mpdus,
        "station_retries": sum(device["retries"] for device in stations) / ap["rx_ok_mpdus"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("regenerate", "compare"):
        p = sub.add_parser(command)
        p.add_argument("--cases", action="append", help="shell pattern of case names (repeatable)")
        if command == "regenerate":
            p.add_argument("--overwrite", action="store_true", help="run cached cases again")
    args = parser.parse_args()
    if args.command == "regenerate":
        regenerate(args.cases, args.overwrite)
    else:
        compare(args.cases)


if __name__ == "__main__":
    main()
