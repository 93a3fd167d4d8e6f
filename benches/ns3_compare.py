"""Outside reference: the rtt-lens setup (10 Mbps, 40 ms base RTT, 330-packet drop-tail
buffer, one bulk flow for 21 s) in ns-3 and in tcplab, side by side: goodput, mean RTT,
retransmissions or drops, and wall time.

ns-3 is NOT a tcplab dependency. Install it in its own environment and point this script
at it, e.g.:
    python3 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3
    /tmp/ns3venv/bin/python benches/ns3_compare.py --tcplab .venv/bin/python
The ns-3 side runs in the interpreter that runs this script; the tcplab side in --tcplab.
ns-3 is configured as close to Linux as its attributes allow (MSS 1448, 200 ms min RTO,
ACK every 2nd segment, SACK and timestamps, initial window 10, infinite initial ssthresh,
6 MiB socket buffers,
no traffic-control layer so the device queue is the only queue). Its RTT is estimated as
the mean one-way delay of data packets (FlowMonitor) plus the 20 ms base delay of the
ACK path. Differences that remain by design are listed in docs/models.md, TCP sender.
"""

import argparse
import json
import subprocess
import sys
import time

DURATION_S = 21.0
TCPLAB_CHILD = """
import json, sys, tcplab
r = tcplab.run("rtt-lens", overrides={"flows.0.cc": sys.argv[1]})
f, link = r.summary["flows"][0], r.summary["links"][0]
print(json.dumps({"goodput_mbps": f["goodput_mbps"], "rtt_mean_ms": f["rtt_mean_ms"],
                  "drops": link["drops"], "wall_s": r.summary["run"]["wall_seconds"]}))
"""


def run_ns3(algorithm: str) -> dict:
    from ns import ns

    ns_type = {"cubic": "ns3::TcpCubic", "bbr": "ns3::TcpBbr", "newreno": "ns3::TcpLinuxReno"}[algorithm]
    cfg = ns.Config.SetDefault
    cfg("ns3::TcpL4Protocol::SocketType", ns.StringValue(ns_type))
    cfg("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    cfg("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    cfg("ns3::TcpSocket::InitialSlowStartThreshold", ns.UintegerValue(2**32 - 1))
    cfg("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    cfg("ns3::TcpSocket::SndBufSize", ns.UintegerValue(6 << 20))
    cfg("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(6 << 20))
    cfg("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    cfg("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    cfg("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))

    nodes = ns.NodeContainer()
    nodes.Create(3)
    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue("1Gbps"))
    access.SetChannelAttribute("Delay", ns.StringValue("0ms"))
    access.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("1000p"))
    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue("20ms"))
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("330p"))
    d01 = access.Install(nodes.Get(0), nodes.Get(1))
    d12 = bottleneck.Install(nodes.Get(1), nodes.Get(2))
    ns.InternetStackHelper().Install(nodes)
    address = ns.Ipv4AddressHelper()
    address.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    address.Assign(d01)
    address.SetBase(ns.Ipv4Address("10.1.2.0"), ns.Ipv4Mask("255.255.255.0"))
    i12 = address.Assign(d12)
    # Assign() put a 1000-packet pfifo_fast qdisc in front of each device queue: remove it.
    traffic_control = ns.TrafficControlHelper()
    traffic_control.Uninstall(d01)
    traffic_control.Uninstall(d12)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sink_address = ns.InetSocketAddress(i12.GetAddress(1), port).ConvertTo()
    source = ns.BulkSendHelper("ns3::TcpSocketFactory", sink_address)
    source.SetAttribute("MaxBytes", ns.UintegerValue(0))
    source.Install(nodes.Get(0)).Start(ns.Seconds(0.0))
    sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sinks = sink_helper.Install(nodes.Get(2))
    sinks.Start(ns.Seconds(0.0))
    monitor_helper = ns.FlowMonitorHelper()
    monitor = monitor_helper.InstallAll()

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    started = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - started
    received = ns.DynamicCast[ns.PacketSink](sinks.Get(0)).GetTotalRx()
    # Every packet in flight at the end is younger than 1 s (the queue holds < 0.5 s).
    monitor.CheckForLostPackets(ns.Seconds(1.0))
    data_flow = max(monitor.GetFlowStats(), key=lambda kv: kv[1].rxBytes)[1]
    one_way_ms = data_flow.delaySum.GetSeconds() * 1e3 / max(data_flow.rxPackets, 1)
    result = {
        "goodput_mbps": received * 8e-6 / DURATION_S,
        "rtt_mean_ms": one_way_ms + 20.0,
        # Data packets never received (FlowMonitor; the device queue's own drop counter
        # reads 0 through the Python bindings).
        "drops": data_flow.lostPackets,
        "wall_s": wall,
    }
    ns.Simulator.Destroy()
    return result


def run_tcplab(python: str, algorithm: str) -> dict:
    out = subprocess.run([python, "-c", TCPLAB_CHILD, algorithm], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tcplab", default=".venv/bin/python", help="Python with tcplab installed")
    parser.add_argument("algorithm", nargs="?", default="cubic", choices=["cubic", "bbr", "newreno"])
    args = parser.parse_args()
    rows = {"ns-3": run_ns3(args.algorithm), "tcplab": run_tcplab(args.tcplab, args.algorithm)}
    print(f"rtt-lens, {args.algorithm}: 10 Mbps, 40 ms base RTT, 330 packets, {DURATION_S:.0f} s")
    print(f"{'':8} {'goodput Mbps':>13} {'RTT mean ms':>12} {'drops':>7} {'wall s':>8}")
    for name, r in rows.items():
        print(f"{name:8} {r['goodput_mbps']:>13.2f} {r['rtt_mean_ms']:>12.1f} {r['drops']:>7} {r['wall_s']:>8.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
