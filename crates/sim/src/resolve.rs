//! From user JSON to a checked, fully resolved [`Scenario`]. Every error names the dotted
//! key path (the syntax of `--set`), the bad value and what is allowed, in one line;
//! [`warnings`] lists what is allowed but unusual (docs/scenario-format.md, "Ranges").
//! Sections are parsed one by one so that the path survives serde's tagged and untagged
//! enums, and each flow's `tcp` table is merged over the scenario's before it is parsed.

use crate::error::ScenarioError;
use crate::flow_group::{FlowGroup, FlowGroupSpec};
use crate::link_spec::{queue_context, AggregationSpec, JitterSpec, LinkSpec, LossSpec, TokenBucketSpec};
use crate::scenario::{dumbbell_node_names, FlowSpec, ParkingLot, Scenario, StackSpec, TcpSpec, Topology};
use crate::units::{BufferValue, DurationValue, EcnThresholdValue, RateValue, SizeValue};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use tcplab_cc::config::humanize_serde_message;
use tcplab_cc::ns3::Ns3Version;
use tcplab_cc::CcConfig;
use tcplab_core::packet::HEADER_BYTES;
use tcplab_core::{Rate, SimDuration, SimRng};
use tcplab_net::{QueueConfig, Trace};

/// The IPv4 total-length field has 16 bits (RFC 791 §3.1): no IP packet is larger.
const MAX_IP_PACKET_BYTES: u32 = 65_535;
/// Every IPv4 link must carry 68-byte datagrams unfragmented (RFC 791 §3.2, Fragmentation).
const MIN_MTU_BYTES: u32 = 68;
/// The most link-layer bytes per frame a link may add (Ethernet with preamble, FCS, gap and
/// two VLAN tags is 46).
const MAX_FRAMING_BYTES: u32 = 100;
/// Most packets a link's `device_queue` may hold.
const MAX_DEVICE_QUEUE_PACKETS: u32 = 100_000;
/// The largest window TCP can advertise: window scaling shifts by at most 14 (RFC 7323
/// §2.3), so 2^30 bytes.
const MAX_RCV_BUF_BYTES: u64 = 1 << 30;
/// The IPv4 default send MSS (RFC 9293 §3.7.1); smaller segments are unusual.
const USUAL_MIN_MSS: u32 = 536;
/// RFC 1122 §4.2.3.2: an ACK "MUST" not be delayed 0.5 s or more.
const MAX_USUAL_DELACK: SimDuration = SimDuration::from_millis(500);
/// RTOs are kept in microseconds (as by Linux's tcp_rtt_estimator()).
const MIN_RTO_SETTING: SimDuration = SimDuration::from_micros(1);
/// Linux arms timers in jiffies: with HZ=1000 no RTO is shorter than 1 ms.
const MIN_USUAL_RTO: SimDuration = SimDuration::from_millis(1);
/// Transmission times are whole nanoseconds, rounded up: below 10 ns a full-size packet's
/// time (or an application's write interval) would be off by more than 10 %, below 100 ns
/// by more than 1 %.
const MIN_PACKET_TIME_NS: u64 = 10;
const USUAL_MIN_PACKET_TIME_NS: u64 = 100;
/// The longest jitter scale and aggregation interval: far beyond any path, and far from
/// overflowing the clock however long the exponential's tail.
const MAX_PATH_EFFECT: SimDuration = SimDuration::from_secs(100);

fn join(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => prefix.to_string(),
        _ => format!("{prefix}.{rest}"),
    }
}

/// Deserializes `value` as `T`, reporting errors at `prefix` + the path inside `value`.
fn parse_at<T: DeserializeOwned>(value: Value, prefix: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let inner: Vec<String> = e
            .path()
            .iter()
            .filter_map(|seg| match seg {
                serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        let path = join(prefix, &inner.join("."));
        let message = humanize_serde_message(&e.into_inner().to_string());
        // "missing field `x`" names the key in the message: move it into the path.
        match message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
            Some(key) => ScenarioError::new(join(&path, key), "missing; this key is required"),
            None => ScenarioError::new(path, message),
        }
    })
}

fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    map.remove(key)
}

/// Parses and checks a scenario given as JSON text.
pub fn resolve_json(text: &str) -> Result<Scenario, ScenarioError> {
    resolve(parse_json(text)?)
}

/// A scenario document from JSON text.
pub fn parse_json(text: &str) -> Result<Value, ScenarioError> {
    serde_json::from_str(text).map_err(|e| ScenarioError::new("", format!("not valid JSON: {e}")))
}

/// Parses and checks a scenario given as a JSON value, every key on its own; fills every
/// default. What only the built network can tell is checked where it is built
/// (`crate::validate`, `World::new`).
pub fn resolve(value: Value) -> Result<Scenario, ScenarioError> {
    let Value::Object(mut top) = value else {
        return Err(ScenarioError::new("", "a scenario must be a table of keys"));
    };
    let global_tcp_raw = match take(&mut top, "tcp") {
        Some(Value::Object(map)) => map,
        Some(other) => return Err(ScenarioError::new("tcp", format!("{other} is not a table of TCP settings"))),
        None => Map::new(),
    };
    let global_tcp = parse_tcp(global_tcp_raw.clone(), "tcp")?;
    let topology_value = take(&mut top, "topology").ok_or_else(|| {
        ScenarioError::new("topology", format!("missing; a topology table with kind = one of {} is required", topology_kinds()))
    })?;
    let flows_value =
        take(&mut top, "flows").ok_or_else(|| ScenarioError::new("flows", "missing; at least one [[flows]] entry is required"))?;

    let topology = parse_topology(topology_value)?;
    let Value::Array(flow_values) = flows_value else {
        return Err(ScenarioError::new("flows", "must be an array of tables ([[flows]])"));
    };
    let groups =
        flow_values.into_iter().enumerate().map(|(i, v)| parse_flow(v, i, &global_tcp_raw)).collect::<Result<Vec<FlowGroup>, _>>()?;
    let global_tcp_json = serde_json::to_value(&global_tcp).expect("TcpSpec serializes");

    // What is left are the scalar top-level keys (and unknown ones, which serde reports).
    top.insert("tcp".into(), global_tcp_json);
    top.insert("topology".into(), serde_json::to_value(&topology).expect("topology serializes"));
    top.insert("flows".into(), Value::Array(Vec::new()));
    let mut scenario: Scenario = parse_at(Value::Object(top), "")?;
    // The entries' counts are held to the memory limit before any flow is made.
    let total = crate::budget::check_flows(groups.iter().map(FlowGroup::count), scenario.record.memory_limit.0)?;
    scenario.flows.reserve_exact(total as usize);
    for (entry, group) in groups.iter().enumerate() {
        group.expand(entry, scenario.seed, &mut scenario.flows);
    }
    crate::budget::check_network(&scenario)?;
    check(&mut scenario).map_err(|e| blame_entry(e, &groups))?;
    Ok(scenario)
}

/// The topology kinds, for error messages.
fn topology_kinds() -> String {
    Topology::ALL.map(|(kind, _)| kind).join(", ")
}

fn parse_topology(value: Value) -> Result<Topology, ScenarioError> {
    let Value::Object(mut map) = value else {
        return Err(ScenarioError::new("topology", format!("must be a table with kind = one of {}", topology_kinds())));
    };
    let kind = match take(&mut map, "kind") {
        Some(Value::String(k)) => k,
        Some(other) => {
            return Err(ScenarioError::new("topology.kind", format!("{other} is not a topology kind; allowed: {}", topology_kinds())))
        }
        None => return Err(ScenarioError::new("topology.kind", format!("missing; allowed: {}", topology_kinds()))),
    };
    match kind.as_str() {
        "dumbbell" => Ok(Topology::Dumbbell(Box::new(parse_at(Value::Object(map), "topology")?))),
        "explicit" => Ok(Topology::Explicit(parse_at(Value::Object(map), "topology")?)),
        "mmwave" => Ok(Topology::Mmwave(Box::new(parse_at(Value::Object(map), "topology")?))),
        "parking_lot" => Ok(Topology::ParkingLot(Box::new(parse_at(Value::Object(map), "topology")?))),
        "leaf_spine" => Ok(Topology::LeafSpine(Box::new(parse_at(Value::Object(map), "topology")?))),
        other => Err(ScenarioError::new("topology.kind", format!("unknown topology {other:?}; allowed: {}", topology_kinds()))),
    }
}

/// One `[[flows]]` entry, checked: its `tcp` table over the scenario's, its algorithms parsed
/// for its stack, its patterns (`crate::flow_group`).
fn parse_flow(value: Value, index: usize, global_tcp: &Map<String, Value>) -> Result<FlowGroup, ScenarioError> {
    let prefix = format!("flows.{index}");
    let Value::Object(mut map) = value else {
        return Err(ScenarioError::new(prefix, "must be a table"));
    };
    let mut tcp = global_tcp.clone();
    match take(&mut map, "tcp") {
        Some(Value::Object(over)) => tcp.extend(over),
        Some(other) => return Err(ScenarioError::new(format!("{prefix}.tcp"), format!("{other} is not a table of TCP settings"))),
        None => {}
    }
    let tcp = parse_tcp(tcp, &format!("{prefix}.tcp"))?;
    // The algorithm is parsed on its own so that an error names the parameter at fault; on the
    // ns3 stack with ns-3's defaults for the parameters left out.
    let parse_cc = |cc: Value| match tcp.stack {
        StackSpec::Linux => CcConfig::parse(cc).and_then(|cc| cc.check_linux().map(|()| cc)),
        StackSpec::Ns3 => tcplab_cc::ns3::parse(cc),
    };
    if let Some(cc) = take(&mut map, "cc") {
        let path = format!("{prefix}.cc");
        let cc = parse_cc(cc).map_err(|(key, message)| ScenarioError::new(join(&path, &key), message))?;
        map.insert("cc".into(), serde_json::to_value(&cc).expect("CcConfig serializes"));
    }
    map.insert("tcp".into(), serde_json::to_value(&tcp).expect("TcpSpec serializes"));
    let spec: FlowGroupSpec = parse_at(Value::Object(map), &prefix)?;
    FlowGroup::new(spec, &prefix, parse_cc)
}

/// `check` names a flow by its place among all flows; the error is given to the `[[flows]]`
/// entry it came from, with the flow's index within the entry when the entry has several.
fn blame_entry(e: ScenarioError, groups: &[FlowGroup]) -> ScenarioError {
    let Some(rest) = e.path.strip_prefix("flows.") else { return e };
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let Ok(expanded) = rest[..digits].parse::<u64>() else { return e };
    let key = &rest[digits..];
    let mut first = 0;
    for (entry, group) in groups.iter().enumerate() {
        let count = group.count();
        if expanded < first + count {
            let message = match count {
                1 => e.message,
                _ => format!("flow {} of the entry's {count} (flows.{expanded} once expanded): {}", expanded - first, e.message),
            };
            return ScenarioError::new(format!("flows.{entry}{key}"), message);
        }
        first += count;
    }
    e
}

/// A `tcp` table (the scenario's, or a flow's over it) with its stack's defaults for the keys
/// it leaves out; on the ns3 stack a Linux-only mechanism switched on is refused.
fn parse_tcp(table: Map<String, Value>, path: &str) -> Result<TcpSpec, ScenarioError> {
    let ns3 = table.get("stack").and_then(Value::as_str) == Some("ns3");
    if !ns3 {
        let spec: TcpSpec = parse_at(Value::Object(table), path)?;
        if spec.ns3_version != Ns3Version::default() {
            return Err(ScenarioError::new(
                format!("{path}.ns3_version"),
                "\"3.35\" needs tcp.stack = \"ns3\": it selects the ns-3 release the ns3 stack follows; allowed on the linux stack: \"3.44\"",
            ));
        }
        return Ok(spec);
    }
    let Value::Object(mut full) = serde_json::to_value(TcpSpec::ns3()).expect("TcpSpec serializes") else {
        unreachable!("TcpSpec serializes as a table")
    };
    full.extend(table);
    let spec: TcpSpec = parse_at(Value::Object(full), path)?;
    check_ns3_tcp(&spec, path)?;
    Ok(spec)
}

/// Refuses, on the ns3 stack, the keys whose mechanism ns-3's TcpSocketBase lacks.
fn check_ns3_tcp(t: &TcpSpec, path: &str) -> Result<(), ScenarioError> {
    let ns3 = TcpSpec::ns3();
    let linux_only: [(&str, bool, &str); 9] = [
        ("gso", t.gso != ns3.gso, "ns-3 sends one segment at a time"),
        ("tso_defer", t.tso_defer != ns3.tso_defer, "ns-3 has no TSO deferral"),
        ("tsq", t.tsq != ns3.tsq, "ns-3 has no TCP Small Queues"),
        ("recovery", t.recovery != ns3.recovery, "ns-3 3.44 detects loss by RFC 6675 DupThresh only (no RACK-TLP)"),
        ("rto", t.rto != ns3.rto, "ns-3's estimator is RFC 6298's (RttMeanDeviation)"),
        ("undo", t.undo != ns3.undo, "ns-3 has no undo, D-SACK or F-RTO"),
        ("ato", t.ato != ns3.ato, "ns-3's delayed-ACK timer is fixed (DelAckTimeout)"),
        ("quickack", t.quickack != ns3.quickack, "ns-3 has no quickack mode"),
        ("slow_start_after_idle", t.slow_start_after_idle != ns3.slow_start_after_idle, "ns-3 does not restart cwnd after idle"),
    ];
    if let Some((key, _, why)) = linux_only.iter().find(|(_, set, _)| *set) {
        let value = serde_json::to_value(t).expect("TcpSpec serializes")[*key].clone();
        return Err(ScenarioError::new(format!("{path}.{key}"), format!("{value} needs tcp.stack = \"linux\": {why}")));
    }
    if t.ecn {
        return Err(ScenarioError::new(
            format!("{path}.ecn"),
            "true is not modelled on the ns3 stack yet; allowed: false, or tcp.stack = \"linux\"",
        ));
    }
    Ok(())
}

/// Semantic checks serde cannot express; fills dumbbell defaults (pairs, src/dst).
fn check(s: &mut Scenario) -> Result<(), ScenarioError> {
    let duration = s.duration.0;
    if duration.as_nanos() == 0 {
        return Err(ScenarioError::new("duration", "must be > 0, e.g. \"10s\""));
    }
    let interval = s.sample_interval.0;
    if interval.as_nanos() == 0 || interval > duration {
        return Err(ScenarioError::new(
            "sample_interval",
            format!("{} must be > 0 and at most the duration ({})", s.sample_interval, s.duration),
        ));
    }
    if s.flows.is_empty() {
        return Err(ScenarioError::new("flows", "is empty; at least one flow is required"));
    }
    check_tcp(&s.tcp, "tcp")?;
    // The ends each flow names itself (the others are defaults filled in below): an error
    // blames a key the user wrote.
    let given: Vec<(bool, bool)> = s.flows.iter().map(|f| (f.src.is_some(), f.dst.is_some())).collect();
    let nodes = match &mut s.topology {
        Topology::Dumbbell(d) => {
            let pairs = d.pairs.unwrap_or(s.flows.len() as u32);
            if pairs == 0 {
                let what = if d.wifi.is_some() { "; the WiFi stations are the senders, so a BSS needs one" } else { "" };
                return Err(ScenarioError::new("topology.pairs", format!("must be at least 1{what}")));
            }
            d.pairs = Some(pairs);
            check_link(&d.bottleneck, "topology.bottleneck", false)?;
            check_link(&d.access, "topology.access", false)?;
            if let Some(wifi) = &mut d.wifi {
                wifi.resolve(pairs)?;
            }
            if let Some(delays) = &d.access_delays {
                if delays.len() != pairs as usize {
                    return Err(ScenarioError::new(
                        "topology.access_delays",
                        format!("has {} entries; one per pair ({pairs}) is required", delays.len()),
                    ));
                }
            }
            for (i, f) in s.flows.iter_mut().enumerate() {
                if f.src.is_none() && f.dst.is_none() && i as u32 >= pairs {
                    return Err(ScenarioError::new(
                        format!("flows.{i}"),
                        format!("has no src/dst and the dumbbell has only {pairs} pairs; set topology.pairs or the flow's src and dst"),
                    ));
                }
                f.src.get_or_insert_with(|| format!("s{i}"));
                f.dst.get_or_insert_with(|| format!("r{i}"));
            }
            dumbbell_node_names(pairs)
        }
        Topology::Explicit(e) => {
            let mut seen = HashSet::new();
            for (i, n) in e.nodes.iter().enumerate() {
                if n.name.is_empty() {
                    return Err(ScenarioError::new(format!("topology.nodes.{i}.name"), "must not be empty"));
                }
                if !seen.insert(n.name.as_str()) {
                    return Err(ScenarioError::new(
                        format!("topology.nodes.{i}.name"),
                        format!("{:?} is declared twice; node names must be unique", n.name),
                    ));
                }
            }
            if e.links.is_empty() {
                return Err(ScenarioError::new("topology.links", "is empty; at least one link is required"));
            }
            for (i, l) in e.links.iter().enumerate() {
                let path = format!("topology.links.{i}");
                check_link(l, &path, true)?;
                for (end, name) in [("a", &l.a), ("b", &l.b)] {
                    let name = name.as_deref().unwrap_or_default();
                    if !seen.contains(name) {
                        return Err(ScenarioError::new(
                            format!("{path}.{end}"),
                            format!("unknown node {name:?}; declared nodes: {}", node_list(e)),
                        ));
                    }
                }
                if l.a == l.b {
                    return Err(ScenarioError::new(format!("{path}.b"), "a link must join two different nodes"));
                }
            }
            e.nodes.iter().map(|n| (n.name.clone(), n.role == crate::scenario::NodeRoleSpec::Host)).collect()
        }
        Topology::Mmwave(m) => {
            check_link(&m.remote, "topology.remote", false)?;
            check_link(&m.s1u, "topology.s1u", false)?;
            m.resolve(duration)?;
            let ues = m.ue_names();
            for (i, f) in s.flows.iter_mut().enumerate() {
                if f.src.is_none() && f.dst.is_none() && i >= ues.len() {
                    return Err(ScenarioError::new(
                        format!("flows.{i}"),
                        format!("has no src/dst and the cell has only {} UEs; set the flow's src and dst", ues.len()),
                    ));
                }
                // A missing end is the remote host, or UE i when the other end is the remote host.
                let remote = crate::mmwave::REMOTE;
                let other_end = |given: &Option<String>| {
                    if given.as_deref() == Some(remote) || given.is_none() {
                        ues[i % ues.len()].clone()
                    } else {
                        remote.to_string()
                    }
                };
                if f.src.is_none() && f.dst.is_none() {
                    f.src = Some(remote.to_string());
                }
                let dst = other_end(&f.src);
                let src = other_end(&f.dst);
                f.dst.get_or_insert(dst);
                f.src.get_or_insert(src);
            }
            m.node_names()
        }
        Topology::ParkingLot(p) => {
            check_parking_lot(p, &mut s.flows)?;
            p.node_names()
        }
        Topology::LeafSpine(t) => {
            for (key, count) in [("leaves", t.leaves), ("spines", t.spines), ("hosts_per_leaf", t.hosts_per_leaf)] {
                if count == 0 {
                    return Err(ScenarioError::new(format!("topology.{key}"), "must be at least 1"));
                }
            }
            for (path, l) in t.link_specs() {
                check_link(l, &path, false)?;
            }
            t.node_names()
        }
    };
    // Generated topologies name their hosts by a pattern; the others list them.
    let host_pattern = match &s.topology {
        Topology::ParkingLot(p) => Some(p.host_pattern()),
        Topology::LeafSpine(t) => Some(t.host_pattern()),
        _ => None,
    };
    let is_host: HashMap<&str, bool> = nodes.iter().map(|(name, host)| (name.as_str(), *host)).collect();
    for (i, f) in s.flows.iter().enumerate() {
        check_flow(f, i, &nodes, host_pattern.as_deref(), &is_host, duration, given[i])?;
    }
    Ok(())
}

/// A parking lot's hops and links; fills its through pairs (default: one per flow naming
/// neither end) and gives the j-th such flow through pair j.
fn check_parking_lot(p: &mut ParkingLot, flows: &mut [FlowSpec]) -> Result<(), ScenarioError> {
    if p.hops == 0 {
        return Err(ScenarioError::new("topology.hops", "must be at least 1 (the bottlenecks in a row)"));
    }
    match (&p.bottleneck, &p.bottlenecks) {
        (Some(_), Some(_)) => {
            return Err(ScenarioError::new(
                "topology.bottlenecks",
                "cannot be given with topology.bottleneck; allowed: bottleneck (every hop alike) or bottlenecks (one per hop)",
            ))
        }
        (None, None) => {
            return Err(ScenarioError::new(
                "topology.bottleneck",
                "missing; give bottleneck (every hop alike) or bottlenecks (one per hop)",
            ))
        }
        (None, Some(links)) if links.len() != p.hops as usize => {
            return Err(ScenarioError::new(
                "topology.bottlenecks",
                format!("has {} entries; one per hop ({}) is required", links.len(), p.hops),
            ))
        }
        _ => {}
    }
    for (path, l) in p.link_specs() {
        check_link(l, &path, false)?;
    }
    let unnamed = flows.iter().filter(|f| f.src.is_none() && f.dst.is_none()).count() as u32;
    let pairs = *p.pairs.get_or_insert(unnamed);
    let mut next_pair = 0;
    for (i, f) in flows.iter_mut().enumerate() {
        match (&f.src, &f.dst) {
            (None, None) if next_pair == pairs => return Err(ScenarioError::new(
                format!("flows.{i}"),
                format!(
                    "has no src/dst and the flows before it took all through pairs (topology.pairs = {pairs}); set topology.pairs or the flow's src and dst"
                ),
            )),
            (None, None) => {
                let [src, dst] = ParkingLot::through_pair(next_pair);
                (f.src, f.dst) = (Some(src), Some(dst));
                next_pair += 1;
            }
            (Some(_), None) | (None, Some(_)) => {
                let missing = if f.src.is_none() { "src" } else { "dst" };
                return Err(ScenarioError::new(
                    format!("flows.{i}.{missing}"),
                    "missing; a parking-lot flow names both ends, or neither to take the next through pair s<i> -> d<i>",
                ));
            }
            (Some(_), Some(_)) => {}
        }
    }
    Ok(())
}

fn node_list(e: &crate::scenario::Explicit) -> String {
    e.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", ")
}

fn check_tcp(t: &TcpSpec, path: &str) -> Result<(), ScenarioError> {
    let err = |key: &str, msg: String| Err(ScenarioError::new(format!("{path}.{key}"), msg));
    let max_mss = MAX_IP_PACKET_BYTES - HEADER_BYTES;
    if t.mss == 0 || t.mss > max_mss {
        return err("mss", format!("{} is out of range; allowed: 1 to {max_mss} bytes (an IPv4 packet, {HEADER_BYTES} B of headers included, is at most {MAX_IP_PACKET_BYTES} B: RFC 791)", t.mss));
    }
    if t.initial_cwnd == 0 {
        return err("initial_cwnd", "must be at least 1 packet".into());
    }
    if let crate::scenario::Ssthresh::Packets(n) = t.initial_ssthresh {
        if n < 2 {
            return err("initial_ssthresh", format!("{n} is too small; allowed: \"inf\" or at least 2 packets"));
        }
    }
    // The RTT estimator keeps microseconds, as Linux's tcp_rtt_estimator() does: a shorter
    // timeout would be zero, and a zero RTO re-arms itself forever at the same instant.
    for (key, value) in [("min_rto", t.min_rto), ("max_rto", t.max_rto), ("initial_rto", t.initial_rto)] {
        if value.0 < MIN_RTO_SETTING {
            return err(key, format!("{value} is below 1us; allowed: 1us or more (RTOs are kept in microseconds)"));
        }
    }
    if t.max_rto.0 < t.min_rto.0 {
        return err("max_rto", format!("{} is below min_rto ({})", t.max_rto, t.min_rto));
    }
    let segment = t.mss as u64;
    if t.snd_buf.0 < segment {
        return err("snd_buf", format!("{} is smaller than one segment ({} B)", t.snd_buf, t.mss));
    }
    if t.rcv_buf.0 < segment {
        return err("rcv_buf", format!("{} is smaller than one segment ({} B)", t.rcv_buf, t.mss));
    }
    if t.rcv_buf.0 > MAX_RCV_BUF_BYTES {
        let max = SizeValue(MAX_RCV_BUF_BYTES);
        return err(
            "rcv_buf",
            format!("{} is more than TCP can advertise; allowed: one segment to {max} (window scaling, RFC 7323 §2.3)", t.rcv_buf),
        );
    }
    if t.ack_every == 0 {
        return err("ack_every", "must be at least 1 (1 = ACK every segment)".into());
    }
    if t.ato == crate::scenario::AtoSpec::Linux && t.delack_timeout.0 > tcplab_tcp::DELACK_MAX {
        return err(
            "delack_timeout",
            format!(
                "{} is above {}, the longest delayed ACK of ato = \"linux\" (TCP_DELACK_MAX); allowed with ato = \"fixed\"",
                t.delack_timeout,
                DurationValue(tcplab_tcp::DELACK_MAX)
            ),
        );
    }
    Ok(())
}

fn check_loss(loss: LossSpec, path: String) -> Result<(), ScenarioError> {
    match loss {
        LossSpec::Probability(p) if !(0.0..1.0).contains(&p) => {
            Err(ScenarioError::new(path, format!("{p} is not a loss probability; allowed: 0 <= loss < 1")))
        }
        LossSpec::Probability(_) => Ok(()),
        LossSpec::GilbertElliott(g) => {
            for (key, value) in [("p", g.p), ("r", g.r), ("loss_bad", g.loss_bad)] {
                if !(0.0..=1.0).contains(&value) {
                    return Err(ScenarioError::new(format!("{path}.{key}"), format!("{value} is not a probability; allowed: 0 to 1")));
                }
            }
            if !(0.0..1.0).contains(&g.loss_good) {
                let message = format!("{} is not a loss probability of the good state; allowed: 0 <= loss_good < 1", g.loss_good);
                return Err(ScenarioError::new(format!("{path}.loss_good"), message));
            }
            Ok(())
        }
    }
}

/// A jitter scale or aggregation interval: more than 0, at most `MAX_PATH_EFFECT`.
fn check_path_effect(d: DurationValue, path: String, zero_means: &str) -> Result<(), ScenarioError> {
    if d.0.as_nanos() == 0 {
        return Err(ScenarioError::new(
            path,
            format!("0s {zero_means}; allowed: more than 0s, at most {}", DurationValue(MAX_PATH_EFFECT)),
        ));
    }
    if d.0 > MAX_PATH_EFFECT {
        return Err(ScenarioError::new(
            path,
            format!("{d} is out of range; allowed: more than 0s, at most {}", DurationValue(MAX_PATH_EFFECT)),
        ));
    }
    Ok(())
}

/// A direction's trace, jitter and aggregation; `prefix` is the direction's key path.
fn check_path_models(
    l: &LinkSpec,
    trace: Option<&str>,
    jitter: Option<JitterSpec>,
    aggregation: Option<AggregationSpec>,
    shaper: Option<TokenBucketSpec>,
    path: &str,
    prefix: &str,
) -> Result<(), ScenarioError> {
    if let Some(file) = trace {
        let trace = Trace::load(file).map_err(|e| ScenarioError::new(format!("{prefix}.trace"), e))?;
        let mean = RateValue(trace.mean_rate());
        if l.rate.0 < mean.0 {
            let message = format!(
                "{} is below the mean rate of trace {file:?} ({mean}); with a trace, rate is the link's nominal rate; allowed: at least {mean}",
                l.rate
            );
            return Err(ScenarioError::new(format!("{path}.rate"), message));
        }
        if shaper.is_some() {
            return Err(ScenarioError::new(format!("{prefix}.shaper"), "a trace decides when packets leave; remove shaper or trace"));
        }
    }
    if let Some(j) = jitter {
        check_path_effect(j.amount, format!("{prefix}.jitter.amount"), "adds no jitter (remove jitter)")?;
    }
    if let Some(a) = aggregation {
        check_path_effect(a.interval, format!("{prefix}.aggregation.interval"), "cannot batch anything (remove aggregation)")?;
    }
    Ok(())
}

fn check_buffer(buffer: BufferValue, mtu: u32, path: String) -> Result<(), ScenarioError> {
    let ok = match buffer {
        BufferValue::Packets(n) => n >= 1,
        BufferValue::Bytes(b) => b >= mtu as u64,
    };
    if !ok {
        return Err(ScenarioError::new(path, format!("{buffer} is smaller than one packet; allowed: at least 1pkt or {mtu} B (the MTU)")));
    }
    Ok(())
}

/// The discipline's own parameter checks, against the direction's buffer and marking.
fn check_queue(
    queue: &QueueConfig,
    l: &LinkSpec,
    buffer: BufferValue,
    ecn_threshold: Option<EcnThresholdValue>,
    path: String,
) -> Result<(), ScenarioError> {
    let ctx = queue_context(l, buffer, ecn_threshold, SimRng::stream(0, "validation"));
    queue.validate(&ctx).map_err(|message| match message.split_once(": ") {
        // "target_ms: -1 is out of range; ..." names a parameter: the path takes it
        Some((param, rest)) if param.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') => {
            ScenarioError::new(format!("{path}.{param}"), rest)
        }
        _ => ScenarioError::new(path, message),
    })
}

/// Only a FIFO marks by the link's `ecn_threshold`; an AQM has its own `ecn`.
fn check_marking_queue(queue: &QueueConfig, path: String, why: &str) -> Result<(), ScenarioError> {
    if queue.takes_ecn_threshold() {
        return Ok(());
    }
    let name = queue.name();
    Err(ScenarioError::new(
        path,
        format!("ecn_threshold does not apply to queue \"{name}\"{why}, which marks by its own `ecn` parameter; allowed: ecn_threshold with droptail or headdrop"),
    ))
}

/// A marking threshold must be > 0 and, in packets against a packet limit, below the limit
/// (an arrival never finds more than limit − 1 packets queued).
fn check_ecn_threshold(t: EcnThresholdValue, buffer: BufferValue, path: String) -> Result<(), ScenarioError> {
    let message = match (t, buffer) {
        (EcnThresholdValue::Packets(0), _) => "0pkt would mark every ECT packet; allowed: at least 1pkt".to_string(),
        (EcnThresholdValue::Sojourn(d), _) if d.as_nanos() == 0 => {
            format!("{t} would mark every queued ECT packet; allowed: a sojourn time > 0")
        }
        (EcnThresholdValue::Packets(k), BufferValue::Packets(n)) if k >= n => {
            format!("{t} is not below the buffer ({buffer}): no packet would ever be marked")
        }
        _ => return Ok(()),
    };
    Err(ScenarioError::new(path, message))
}

fn check_link(l: &LinkSpec, path: &str, explicit: bool) -> Result<(), ScenarioError> {
    if explicit && (l.a.is_none() || l.b.is_none()) {
        let end = if l.a.is_none() { "a" } else { "b" };
        return Err(ScenarioError::new(format!("{path}.{end}"), "missing; an explicit link names both nodes (a and b)"));
    }
    if !explicit && (l.a.is_some() || l.b.is_some()) {
        return Err(ScenarioError::new(format!("{path}.a"), "this topology's links have fixed ends; remove a and b"));
    }
    if l.rate.0.bps() == 0 {
        return Err(ScenarioError::new(format!("{path}.rate"), "must be > 0, e.g. \"10Mbps\""));
    }
    if !(MIN_MTU_BYTES..=MAX_IP_PACKET_BYTES).contains(&l.mtu) {
        return Err(ScenarioError::new(
            format!("{path}.mtu"),
            format!("{} is out of range; allowed: {MIN_MTU_BYTES} to {MAX_IP_PACKET_BYTES} bytes (IPv4, RFC 791)", l.mtu),
        ));
    }
    if l.framing > MAX_FRAMING_BYTES {
        return Err(ScenarioError::new(
            format!("{path}.framing"),
            format!("{} B is out of range; allowed: 0 to {MAX_FRAMING_BYTES} bytes of link-layer overhead per frame", l.framing),
        ));
    }
    if l.device_queue > MAX_DEVICE_QUEUE_PACKETS {
        return Err(ScenarioError::new(
            format!("{path}.device_queue"),
            format!("{} is out of range; allowed: 0 (none) to {MAX_DEVICE_QUEUE_PACKETS} packets", l.device_queue),
        ));
    }
    check_packet_time(l.rate, u64::from(l.mtu), &format!("{path}.rate"), &format!("one {} B packet", l.mtu))?;
    check_buffer(l.buffer, l.mtu, format!("{path}.buffer"))?;
    check_queue(&l.queue, l, l.buffer, l.ecn_threshold, format!("{path}.queue"))?;
    check_loss(l.loss, format!("{path}.loss"))?;
    if let Some(t) = l.ecn_threshold {
        check_marking_queue(&l.queue, format!("{path}.ecn_threshold"), "")?;
        check_ecn_threshold(t, l.buffer, format!("{path}.ecn_threshold"))?;
    }
    check_token_bucket(l.policer, l, format!("{path}.policer"))?;
    check_token_bucket(l.shaper, l, format!("{path}.shaper"))?;
    check_path_models(l, l.trace.as_deref(), l.jitter, l.aggregation, l.shaper, path, path)?;
    if let Some(r) = &l.reverse {
        let reverse = format!("{path}.reverse");
        check_path_models(l, r.trace.as_deref(), r.jitter, r.aggregation, r.shaper, path, &reverse)?;
        check_token_bucket(r.policer, l, format!("{path}.reverse.policer"))?;
        check_token_bucket(r.shaper, l, format!("{path}.reverse.shaper"))?;
        if let Some(b) = r.buffer {
            check_buffer(b, l.mtu, format!("{path}.reverse.buffer"))?;
        }
        let (queue, buffer) = (r.queue.as_ref().unwrap_or(&l.queue), r.buffer.unwrap_or(l.buffer));
        check_queue(queue, l, buffer, r.ecn_threshold.or(l.ecn_threshold), format!("{path}.reverse.queue"))?;
        match (r.ecn_threshold, l.ecn_threshold) {
            (Some(_), _) => check_marking_queue(queue, format!("{path}.reverse.ecn_threshold"), "")?,
            (None, Some(_)) => {
                check_marking_queue(queue, format!("{path}.reverse.queue"), " (the link's ecn_threshold applies to b -> a too)")?
            }
            (None, None) => {}
        }
        if let Some(loss) = r.loss {
            check_loss(loss, format!("{path}.reverse.loss"))?;
        }
        if let Some(t) = r.ecn_threshold {
            check_ecn_threshold(t, r.buffer.unwrap_or(l.buffer), format!("{path}.reverse.ecn_threshold"))?;
        }
    }
    Ok(())
}

/// A policer or shaper needs a rate and room for one packet of the link.
fn check_token_bucket(bucket: Option<TokenBucketSpec>, l: &LinkSpec, path: String) -> Result<(), ScenarioError> {
    let Some(bucket) = bucket else { return Ok(()) };
    if bucket.rate.0.bps() == 0 {
        return Err(ScenarioError::new(format!("{path}.rate"), "must be > 0, e.g. \"5Mbps\""));
    }
    check_packet_time(bucket.rate, u64::from(l.mtu), &format!("{path}.rate"), &format!("one {} B packet", l.mtu))?;
    if bucket.burst.0 < u64::from(l.mtu) {
        let message = format!("{} is smaller than one packet; allowed: at least {} B (the link's mtu)", bucket.burst, l.mtu);
        return Err(ScenarioError::new(format!("{path}.burst"), message));
    }
    Ok(())
}

/// Nanoseconds to send `bytes` at `rate` (the simulator rounds up to a whole nanosecond).
fn packet_time_ns(rate: RateValue, bytes: u64) -> f64 {
    bytes as f64 * 8e9 / rate.0.bps() as f64
}

/// Refuses a rate at which `what` (`bytes` long) takes less than `MIN_PACKET_TIME_NS`.
fn check_packet_time(rate: RateValue, bytes: u64, path: &str, what: &str) -> Result<(), ScenarioError> {
    if packet_time_ns(rate, bytes) >= MIN_PACKET_TIME_NS as f64 {
        return Ok(());
    }
    let max = RateValue(Rate::from_bps(bytes.saturating_mul(8_000_000_000) / MIN_PACKET_TIME_NS));
    Err(ScenarioError::new(
        path,
        format!(
            "{rate} is too fast for the simulator's 1 ns clock: {what} would take under {MIN_PACKET_TIME_NS} ns; allowed: at most {max}"
        ),
    ))
}

/// `is_host` maps each node name of `nodes` to whether it is a host (a lookup per flow end
/// keeps validation linear in the number of flows).
fn check_flow(
    f: &FlowSpec,
    i: usize,
    nodes: &[(String, bool)],
    host_pattern: Option<&str>,
    is_host: &HashMap<&str, bool>,
    duration: SimDuration,
    given: (bool, bool),
) -> Result<(), ScenarioError> {
    let path = format!("flows.{i}");
    f.cc.validate().map_err(|m| ScenarioError::new(format!("{path}.cc"), m))?;
    let hosts = || {
        host_pattern
            .map_or_else(|| nodes.iter().filter(|(_, h)| *h).map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "), str::to_string)
    };
    for (key, name) in [("src", f.src.as_deref()), ("dst", f.dst.as_deref())] {
        let Some(name) = name else {
            return Err(ScenarioError::new(
                format!("{path}.{key}"),
                format!("missing; this topology has no default, give both ends of the flow (hosts: {})", hosts()),
            ));
        };
        match is_host.get(name) {
            None => return Err(ScenarioError::new(format!("{path}.{key}"), format!("unknown node {name:?}; hosts: {}", hosts()))),
            Some(false) => {
                return Err(ScenarioError::new(
                    format!("{path}.{key}"),
                    format!("{name:?} is a router; flows run between hosts: {}", hosts()),
                ))
            }
            Some(_) => {}
        }
    }
    if f.src == f.dst {
        let name = f.src.as_deref().unwrap_or_default();
        return Err(match given {
            (true, false) => ScenarioError::new(
                format!("{path}.src"),
                format!("{name:?} is this flow's default dst; set dst too, or a src other than {name:?}"),
            ),
            (false, true) => ScenarioError::new(
                format!("{path}.dst"),
                format!("{name:?} is this flow's default src; set src too, or a dst other than {name:?}"),
            ),
            _ => ScenarioError::new(format!("{path}.dst"), "must differ from src"),
        });
    }
    if f.start.0 >= duration {
        return Err(ScenarioError::new(
            format!("{path}.start"),
            format!("{} is not before the end of the run ({})", f.start, crate::units::DurationValue(duration)),
        ));
    }
    if let Some(stop) = f.stop {
        if stop.0 <= f.start.0 {
            return Err(ScenarioError::new(format!("{path}.stop"), format!("{stop} must be after start ({})", f.start)));
        }
    }
    if f.bytes.is_some_and(|b| b.0 == 0) {
        return Err(ScenarioError::new(format!("{path}.bytes"), "must be > 0 (omit it for an unbounded transfer)"));
    }
    if let Some(tcp) = &f.tcp {
        check_tcp(tcp, &format!("{path}.tcp"))?;
    }
    if let Some(app) = &f.app {
        if app.rate.0.bps() == 0 {
            return Err(ScenarioError::new(format!("{path}.app.rate"), "must be > 0, e.g. \"1Gbps\""));
        }
        let snd_buf = f.tcp.as_ref().map_or(SizeValue(u64::MAX), |t| t.snd_buf);
        if app.packet_size.0 == 0 || app.packet_size.0 > u64::from(u32::MAX) || app.packet_size > snd_buf {
            let max = snd_buf.min(SizeValue(u64::from(u32::MAX)));
            let why =
                if app.packet_size > snd_buf { ": a write larger than the send buffer (tcp.snd_buf) is always discarded" } else { "" };
            return Err(ScenarioError::new(
                format!("{path}.app.packet_size"),
                format!("{} is out of range{why}; allowed: 1B to {max} per write", app.packet_size),
            ));
        }
        check_packet_time(
            app.rate,
            app.packet_size.0,
            &format!("{path}.app.rate"),
            &format!("the interval between two {} writes", app.packet_size),
        )?;
    }
    Ok(())
}

/// What is allowed but unusual enough that a run may not mean what its author expects: one
/// line each, starting with the key path. `s` is resolved.
pub fn warnings(s: &Scenario) -> Vec<String> {
    let duration = s.duration.0;
    let global = tcp_warnings(&s.tcp);
    let mut out: Vec<String> = global.iter().map(|(key, message)| format!("tcp.{key}: {message}")).collect();
    // (key under the flow, message, first flow, how many flows): the flows of a `count` entry
    // share their settings, and a warning is one line however many share it.
    let mut by_flow: Vec<(String, String, usize, usize)> = Vec::new();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    for (i, f) in s.flows.iter().enumerate() {
        let mut found: Vec<(String, String)> = Vec::new();
        // A flow's tcp table holds the scenario's settings too: those were reported under `tcp`.
        for (key, message) in f.tcp.as_ref().map(tcp_warnings).unwrap_or_default() {
            if !global.contains(&(key, message.clone())) {
                found.push((format!("tcp.{key}"), message));
            }
        }
        if let Some(app) = &f.app {
            let ns = packet_time_ns(app.rate, app.packet_size.0);
            if ns < USUAL_MIN_PACKET_TIME_NS as f64 {
                let message = format!(
                    "writes of {} come every {ns:.1} ns; the 1 ns clock rounds that interval up by as much as {:.1} %",
                    app.packet_size,
                    100.0 / ns
                );
                found.push(("app.rate".into(), message));
            }
        }
        for (key, message) in found {
            match seen.get(&(key.clone(), message.clone())) {
                Some(&at) => by_flow[at].3 += 1,
                None => {
                    seen.insert((key.clone(), message.clone()), by_flow.len());
                    by_flow.push((key, message, i, 1));
                }
            }
        }
    }
    out.extend(by_flow.into_iter().map(|(key, message, first, flows)| match flows {
        1 => format!("flows.{first}.{key}: {message}"),
        _ => format!("flows.{first}.{key}: {message} (and {} more flows alike)", flows - 1),
    }));
    let mut links: Vec<(String, &LinkSpec)> = Vec::new();
    match &s.topology {
        Topology::Dumbbell(d) => {
            links.push(("topology.bottleneck".into(), &d.bottleneck));
            links.push(("topology.access".into(), &d.access));
            for (i, delay) in d.access_delays.iter().flatten().enumerate() {
                out.extend(delay_warning(*delay, duration, &format!("topology.access_delays.{i}")));
            }
            if let Some(wifi) = &d.wifi {
                out.extend(wifi.warnings());
            }
        }
        Topology::Explicit(e) => links.extend(e.links.iter().enumerate().map(|(i, l)| (format!("topology.links.{i}"), l))),
        Topology::Mmwave(m) => {
            links.push(("topology.remote".into(), &m.remote));
            links.push(("topology.s1u".into(), &m.s1u));
            out.extend(m.warnings(duration));
        }
        Topology::ParkingLot(p) => links.extend(p.link_specs()),
        Topology::LeafSpine(t) => links.extend(t.link_specs()),
    }
    for (path, l) in links {
        let ns = packet_time_ns(l.rate, u64::from(l.mtu));
        if ns < USUAL_MIN_PACKET_TIME_NS as f64 {
            out.push(format!(
                "{path}.rate: one {} B packet takes {ns:.1} ns at {}; the 1 ns clock rounds that up by as much as {:.1} %",
                l.mtu,
                l.rate,
                100.0 / ns
            ));
        }
        if ns > duration.as_nanos() as f64 {
            out.push(format!(
                "{path}.rate: one {} B packet takes {:.3} s at {}, longer than the run ({})",
                l.mtu,
                ns * 1e-9,
                l.rate,
                s.duration
            ));
        }
        out.extend(delay_warning(l.delay, duration, &format!("{path}.delay")));
    }
    out
}

/// A one-way delay so long that no packet could be acknowledged before the run ends.
fn delay_warning(delay: DurationValue, duration: SimDuration, path: &str) -> Option<String> {
    (delay.0.saturating_mul(2) >= duration).then(|| {
        format!("{path}: {delay} one way: the run ({}) ends before a packet could be acknowledged across it", DurationValue(duration))
    })
}

/// (key, message) of each warning about a TCP table.
fn tcp_warnings(t: &TcpSpec) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if t.mss < USUAL_MIN_MSS {
        out.push(("mss", format!("{} B is below the IPv4 default MSS of {USUAL_MIN_MSS} B (RFC 9293 §3.7.1)", t.mss)));
    }
    for (key, value) in [("min_rto", t.min_rto), ("initial_rto", t.initial_rto)] {
        if value.0 < MIN_USUAL_RTO {
            out.push((
                key,
                format!("{value} is below 1ms, the shortest RTO Linux can arm (one jiffy at HZ=1000): expect spurious timeouts"),
            ));
        }
    }
    if t.delack_timeout.0 >= MAX_USUAL_DELACK {
        out.push(("delack_timeout", format!("{} is not below 0.5 s, which RFC 1122 §4.2.3.2 requires of an ACK delay", t.delack_timeout)));
    }
    let ack_bytes = u64::from(t.ack_every) * u64::from(t.mss);
    if t.ack_every > 1 && ack_bytes > t.rcv_buf.0 {
        let message = format!(
            "{} segments ({}) are more than rcv_buf ({}) lets in flight: the receiver will ACK only when delack_timeout ({}) expires",
            t.ack_every,
            SizeValue(ack_bytes),
            t.rcv_buf,
            t.delack_timeout
        );
        out.push(("ack_every", message));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Edit = Box<dyn Fn(&mut Value)>;

    fn base() -> Value {
        json!({
            "duration": "5s",
            "topology": { "kind": "dumbbell", "bottleneck": { "rate": "10Mbps", "delay": "10ms", "buffer": "100pkt" } },
            "flows": [{ "cc": "cubic" }]
        })
    }

    fn error_of(edit: impl Fn(&mut Value)) -> String {
        let mut v = base();
        edit(&mut v);
        crate::validate(v).expect_err("scenario should be rejected").to_string()
    }

    fn warnings_of(edit: impl Fn(&mut Value)) -> Vec<String> {
        let mut v = base();
        edit(&mut v);
        warnings(&resolve(v).expect("scenario should be accepted"))
    }

    fn wifi(v: &mut Value, settings: Value) {
        let mut table = json!({ "standard": "802.11n", "mcs": 4 });
        table.as_object_mut().unwrap().extend(settings.as_object().unwrap().clone());
        v["topology"]["wifi"] = table;
    }

    fn mmwave(v: &mut Value, ue: Value, settings: Value) {
        let mut topology = json!({ "kind": "mmwave", "ues": [ue] });
        topology.as_object_mut().unwrap().extend(settings.as_object().unwrap().clone());
        v["topology"] = topology;
    }

    #[test]
    fn the_shipped_defaults_raise_no_warning() {
        assert_eq!(warnings_of(|_| {}), Vec::<String>::new());
        assert_eq!(warnings_of(|v| wifi(v, json!({}))), Vec::<String>::new());
        assert_eq!(warnings_of(|v| mmwave(v, json!({ "position": [50.0, 0.0, 1.5] }), json!({}))), Vec::<String>::new());
    }

    fn parking_lot(v: &mut Value, settings: Value, flows: Value) {
        let mut topology = json!({ "kind": "parking_lot", "hops": 3, "bottleneck": { "rate": "10Mbps", "delay": "10ms" } });
        topology.as_object_mut().unwrap().extend(settings.as_object().unwrap().clone());
        (v["topology"], v["flows"]) = (topology, flows);
    }

    fn leaf_spine(v: &mut Value, settings: Value, flows: Value) {
        let mut topology = json!({ "kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4, "fabric_link": { "rate": "10Gbps", "delay": "10us" } });
        topology.as_object_mut().unwrap().extend(settings.as_object().unwrap().clone());
        (v["topology"], v["flows"]) = (topology, flows);
    }

    #[test]
    fn parking_lots_give_unnamed_flows_the_through_pairs_in_order() {
        let mut v = base();
        let flows = json!([{"cc": "cubic", "src": "c1s0", "dst": "c1d0"}, {"cc": "cubic"}, {"cc": "reno"}]);
        parking_lot(&mut v, json!({}), flows);
        let s = resolve(v).unwrap();
        let ends: Vec<(&str, &str)> = s.flows.iter().map(|f| (f.src.as_deref().unwrap(), f.dst.as_deref().unwrap())).collect();
        assert_eq!(ends, [("c1s0", "c1d0"), ("s0", "d0"), ("s1", "d1")]);
        let Topology::ParkingLot(p) = &s.topology else { panic!("a parking lot") };
        assert_eq!((p.pairs, p.cross_pairs), (Some(2), 1));
        assert_eq!(warnings(&s), Vec::<String>::new());
    }

    #[test]
    fn parking_lot_and_leaf_spine_errors_name_the_key_in_one_line() {
        fn through(v: &mut Value, settings: Value) {
            parking_lot(v, settings, json!([{"cc": "cubic"}]));
        }
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|v| v["topology"]["kind"] = json!("ring")), "topology.kind: unknown topology \"ring\"; allowed: dumbbell, explicit, mmwave, parking_lot, leaf_spine"),
            (Box::new(|v| through(v, json!({"hops": 0}))), "topology.hops: must be at least 1 (the bottlenecks in a row)"),
            (
                Box::new(|v| through(v, json!({"bottlenecks": [{"rate": "1Mbps", "delay": "1ms"}, {"rate": "2Mbps", "delay": "1ms"}, {"rate": "3Mbps", "delay": "1ms"}]}))),
                "topology.bottlenecks: cannot be given with topology.bottleneck; allowed: bottleneck (every hop alike) or bottlenecks (one per hop)",
            ),
            (
                Box::new(|v| {
                    through(v, json!({"bottlenecks": [{"rate": "1Mbps", "delay": "1ms"}, {"rate": "2Mbps", "delay": "1ms"}]}));
                    v["topology"].as_object_mut().unwrap().remove("bottleneck");
                }),
                "topology.bottlenecks: has 2 entries; one per hop (3) is required",
            ),
            (
                Box::new(|v| {
                    through(v, json!({}));
                    v["topology"].as_object_mut().unwrap().remove("bottleneck");
                }),
                "topology.bottleneck: missing; give bottleneck (every hop alike) or bottlenecks (one per hop)",
            ),
            (
                Box::new(|v| {
                    through(v, json!({"bottlenecks": [{"rate": "1Mbps", "delay": "1ms"}, {"rate": "0Mbps", "delay": "1ms"}, {"rate": "3Mbps", "delay": "1ms"}]}));
                    v["topology"].as_object_mut().unwrap().remove("bottleneck");
                }),
                "topology.bottlenecks.1.rate: must be > 0",
            ),
            (Box::new(|v| through(v, json!({"access": {"rate": "1Gbps", "delay": "0ms", "a": "x"}}))), "topology.access.a: this topology's links have fixed ends; remove a and b"),
            (
                Box::new(|v| parking_lot(v, json!({"pairs": 1}), json!([{"cc": "cubic"}, {"cc": "cubic"}]))),
                "flows.1: has no src/dst and the flows before it took all through pairs (topology.pairs = 1); set topology.pairs or the flow's src and dst",
            ),
            (
                Box::new(|v| parking_lot(v, json!({}), json!([{"cc": "cubic", "src": "c0s0"}]))),
                "flows.0.dst: missing; a parking-lot flow names both ends, or neither to take the next through pair s<i> -> d<i>",
            ),
            (
                Box::new(|v| parking_lot(v, json!({}), json!([{"cc": "cubic", "src": "c3s0", "dst": "c0d0"}]))),
                "flows.0.src: unknown node \"c3s0\"; hosts: s<i>, d<i> with i < 0 (through pairs); c<h>s<j>, c<h>d<j> with h < 3 and j < 1 (cross pairs of hop h)",
            ),
            (
                Box::new(|v| parking_lot(v, json!({}), json!([{"cc": "cubic", "src": "c0s0", "dst": "r1"}]))),
                "flows.0.dst: \"r1\" is a router; flows run between hosts: s<i>, d<i> with i < 0",
            ),
            (Box::new(|v| parking_lot(v, json!({"cross_pairs": -1}), json!([{"cc": "cubic"}]))), "topology.cross_pairs: "),
            (Box::new(|v| leaf_spine(v, json!({"spines": 0}), json!([{"cc": "cubic", "src": "h0_0", "dst": "h1_0"}]))), "topology.spines: must be at least 1"),
            (Box::new(|v| leaf_spine(v, json!({"leaves": 0}), json!([{"cc": "cubic", "src": "h0_0", "dst": "h1_0"}]))), "topology.leaves: must be at least 1"),
            (
                Box::new(|v| leaf_spine(v, json!({"hosts_per_leaf": 0}), json!([{"cc": "cubic", "src": "h0_0", "dst": "h1_0"}]))),
                "topology.hosts_per_leaf: must be at least 1",
            ),
            (Box::new(|v| leaf_spine(v, json!({"fabric_link": {"rate": "0bps", "delay": "1ms"}}), json!([{"cc": "cubic"}]))), "topology.fabric_link.rate: must be > 0"),
            (
                Box::new(|v| leaf_spine(v, json!({}), json!([{"cc": "cubic"}]))),
                "flows.0.src: missing; this topology has no default, give both ends of the flow (hosts: h<l>_<i> with l < 2 and i < 4)",
            ),
            (
                Box::new(|v| leaf_spine(v, json!({}), json!([{"cc": "cubic", "src": "h0_4", "dst": "h1_0"}]))),
                "flows.0.src: unknown node \"h0_4\"; hosts: h<l>_<i> with l < 2 and i < 4",
            ),
            (
                Box::new(|v| leaf_spine(v, json!({}), json!([{"cc": "cubic", "src": "h0_0", "dst": "spine1"}]))),
                "flows.0.dst: \"spine1\" is a router; flows run between hosts: h<l>_<i>",
            ),
            (Box::new(|v| leaf_spine(v, json!({"fabric": {}}), json!([{"cc": "cubic"}]))), "topology.fabric: unknown key \"fabric\"; allowed: leaves, spines, hosts_per_leaf, host_link, fabric_link"),
        ];
        for (edit, start) in cases {
            let e = error_of(edit);
            assert!(e.starts_with(start) && !e.contains('\n'), "expected {start:?} in {e:?}");
        }
    }

    /// Untagged and hand-written deserializers say what they found and what is allowed.
    #[test]
    fn wrong_types_name_the_key_what_was_found_and_what_is_allowed() {
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|v| v["flows"][0]["cc"] = json!(5)), "flows.0.cc: expected an algorithm name (newreno, cubic, bbr"),
            (
                Box::new(|v| v["flows"][0]["cc"] = json!({"kind": "cubic", "beta": "x"})),
                "flows.0.cc.beta: cubic: expected a number, found the string \"x\"",
            ),
            (
                Box::new(|v| v["flows"][0]["cc"] = json!({"kind": "cubic", "hystart": 5})),
                "flows.0.cc.hystart: cubic: expected true, false or \"hystart++\", found the integer 5",
            ),
            (Box::new(|v| v["flows"][0]["cc"] = json!({"kind": true})), "flows.0.cc.kind: expected an algorithm name"),
            (
                Box::new(|v| v["tcp"] = json!({"initial_ssthresh": 1.5})),
                "tcp.initial_ssthresh: expected \"inf\" or a whole number of packets from 0 to 4294967295, found the number 1.5",
            ),
            (
                Box::new(|v| v["tcp"] = json!({"initial_ssthresh": "infinite"})),
                "tcp.initial_ssthresh: expected \"inf\" or a whole number of packets from 0 to 4294967295, found the string \"infinite\"",
            ),
            (Box::new(|v| v["tcp"] = json!({"mss": -1})), "tcp.mss: expected a whole number from 0 to 4294967295, found the integer -1"),
            (Box::new(|v| v["seed"] = json!(1.5)), "seed: expected a whole number from 0 to 18446744073709551615, found the number 1.5"),
            (Box::new(|v| v["duration"] = json!(5)), "duration: expected a duration written as a string with a unit"),
            (Box::new(|v| v["tcp"] = json!({"rto": "fast"})), "tcp.rto: unknown value \"fast\"; allowed: linux, rfc6298"),
        ];
        for (edit, start) in cases {
            let e = error_of(edit);
            assert!(e.starts_with(start), "expected {start:?} in {e:?}");
            for internal in ["untagged", "variant", "u32", "u64", "f64", "a a "] {
                assert!(!e.contains(internal), "{internal:?} in {e:?}");
            }
        }
    }

    /// The key the user wrote is blamed, not the default it collides with.
    #[test]
    fn a_flow_ending_where_it_starts_blames_the_end_the_user_set() {
        let e = error_of(|v| v["flows"][0]["src"] = json!("r0"));
        assert_eq!(e, "flows.0.src: \"r0\" is this flow's default dst; set dst too, or a src other than \"r0\"");
        let e = error_of(|v| v["flows"][0]["dst"] = json!("s0"));
        assert!(e.starts_with("flows.0.dst: \"s0\" is this flow's default src"), "{e}");
        let e = error_of(|v| v["flows"][0] = json!({"cc": "cubic", "src": "s0", "dst": "s0"}));
        assert_eq!(e, "flows.0.dst: must differ from src");
        let e = error_of(|v| {
            v["topology"] = json!({"kind": "explicit", "nodes": [{"name": "a"}, {"name": "b"}], "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}]});
            v["flows"][0]["src"] = json!("a");
        });
        assert!(e.starts_with("flows.0.dst: missing; this topology has no default"), "{e}");
    }

    /// What is physically impossible or would leave nothing to measure is refused with the range.
    #[test]
    fn impossible_values_are_refused_with_the_allowed_range() {
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("99999999999999999999Gbps")), "topology.bottleneck.rate: \"99999999999999999999Gbps\" is too large; allowed: at most 1000000000Gbps"),
            (Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("2000Gbps")), "topology.bottleneck.rate: 2000Gbps is too fast for the simulator's 1 ns clock: one 1500 B packet would take under 10 ns; allowed: at most 1200Gbps"),
            (Box::new(|v| v["duration"] = json!("2000000000s")), "duration: \"2000000000s\" is too large; allowed: at most 1000000000s"),
            (Box::new(|v| v["tcp"] = json!({"mss": 65484})), "tcp.mss: 65484 is out of range; allowed: 1 to 65483 bytes"),
            (
                Box::new(|v| v["tcp"] = json!({"delack_timeout": "300ms"})),
                "tcp.delack_timeout: 300ms is above 200ms, the longest delayed ACK of ato = \"linux\" (TCP_DELACK_MAX); allowed with ato = \"fixed\"",
            ),
            (Box::new(|v| v["tcp"] = json!({"ato": "adaptive"})), "tcp.ato: unknown value \"adaptive\"; allowed: linux, fixed"),
            (Box::new(|v| v["tcp"] = json!({"tsq": "yes"})), "tcp.tsq: "),
            (Box::new(|v| v["tcp"] = json!({"initial_rto": "1ns"})), "tcp.initial_rto: 1ns is below 1us; allowed: 1us or more"),
            (Box::new(|v| v["tcp"] = json!({"min_rto": "999ns", "max_rto": "999ns"})), "tcp.min_rto: 999ns is below 1us"),
            (Box::new(|v| v["tcp"] = json!({"rcv_buf": "2GiB"})), "tcp.rcv_buf: 2GiB is more than TCP can advertise; allowed: one segment to 1GiB"),
            (Box::new(|v| v["topology"]["bottleneck"]["mtu"] = json!(65536)), "topology.bottleneck.mtu: 65536 is out of range; allowed: 68 to 65535 bytes"),
            (Box::new(|v| v["topology"]["bottleneck"]["mtu"] = json!(67)), "topology.bottleneck.mtu: 67 is out of range; allowed: 68 to 65535 bytes"),
            (Box::new(|v| v["topology"]["bottleneck"]["framing"] = json!(101)), "topology.bottleneck.framing: 101 B is out of range; allowed: 0 to 100 bytes"),
            (
                Box::new(|v| v["topology"]["bottleneck"]["device_queue"] = json!(100_001)),
                "topology.bottleneck.device_queue: 100001 is out of range; allowed: 0 (none) to 100000 packets",
            ),
            (Box::new(|v| v["flows"][0]["app"] = json!({"rate": "1Mbps", "packet_size": "7MB"})), "flows.0.app.packet_size: 7MB is out of range: a write larger than the send buffer (tcp.snd_buf) is always discarded; allowed: 1B to 6MiB"),
            (Box::new(|v| v["flows"][0]["app"] = json!({"rate": "1000Gbps", "packet_size": "1B"})), "flows.0.app.rate: 1000Gbps is too fast for the simulator's 1 ns clock: the interval between two 1B writes would take under 10 ns; allowed: at most 800Mbps"),
            (Box::new(|v| wifi(v, json!({"max_ampdu": "1GB"}))), "topology.wifi.max_ampdu: 1GB is above what 802.11n allows; allowed: 0B (off) to 65535B"),
            (Box::new(|v| wifi(v, json!({"standard": "802.11ax", "mcs": 0, "max_ampdu": "1GB"}))), "topology.wifi.max_ampdu: 1GB is above what 802.11ax allows; allowed: 0B (off) to 6500631B"),
            (Box::new(|v| wifi(v, json!({"max_amsdu": "7936B"}))), "topology.wifi.max_amsdu: 7936B is above what 802.11n allows; allowed: 0B (off) to 7935B"),
            (Box::new(|v| wifi(v, json!({"max_queue_delay": "0ms"}))), "topology.wifi.max_queue_delay: 0s would drop every packet before it is sent"),
            (Box::new(|v| wifi(v, json!({"rss_dbm": -90.0}))), "topology.wifi.rss_dbm: -90 dBm is out of range; allowed: -82 to 16.0206 dBm"),
            (Box::new(|v| wifi(v, json!({"rss_dbm": 20.0}))), "topology.wifi.rss_dbm: 20 dBm is out of range"),
            (Box::new(|v| wifi(v, json!({"noise_figure_db": -1.0}))), "topology.wifi.noise_figure_db: -1 dB is out of range; allowed: a finite number ≥ 0 dB"),
            (Box::new(|v| wifi(v, json!({"retry_limit": 256}))), "topology.wifi.retry_limit: 256 is out of range; allowed: 1 to 255 transmissions"),
            (Box::new(|v| mmwave(v, json!({"position": [1.0e7, 0.0, 1.5]}), json!({}))), "topology.ues.0.position: the UE is 10000000 m from the eNB at t = 0.000 s; allowed: within 5000 m"),
            (Box::new(|v| mmwave(v, json!({"position": [0.0, 0.0, 1.5], "velocity": [0.0, 1.0e6, 0.0]}), json!({}))), "topology.ues.0.position: the UE is 5000000 m from the eNB at t = 5.000 s"),
            (Box::new(|v| mmwave(v, json!({"waypoints": [{"t": "0s", "position": [10.0, 0.0, 1.5]}, {"t": "20s", "position": [20010.0, 0.0, 1.5]}]}), json!({}))), "topology.ues.0.waypoints: the UE is 5010 m from the eNB at t = 5.000 s"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"enb": {"position": [0.0, 0.0, 1.0e9]}}))), "topology.ues.0.position: the UE is 999999999 m from the eNB"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, -3.0]}), json!({}))), "topology.ues.0.position: the UE is 3.0 m below the ground at t = 0.000 s"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"enb": {"position": [0.0, 0.0, -1.0]}}))), "topology.enb.position: coordinates must be finite numbers, the height (z) at least 0 m"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"bandwidth": "56GHz"}))), "topology.bandwidth: 56GHz cannot be carried at 28GHz"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"enb": {"tx_power_dbm": 1e6}}))), "topology.enb.tx_power_dbm: 1000000 dBm is out of range; allowed: -30 to 60 dBm"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"ue_tx_power_dbm": -1e6}))), "topology.ue_tx_power_dbm: -1000000 dBm is out of range"),
            (Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"enb": {"noise_figure_db": -3.0}}))), "topology.enb.noise_figure_db: -3 dB is out of range"),
        ];
        for (edit, start) in cases {
            let e = error_of(edit);
            assert!(e.starts_with(start), "expected {start:?} in {e:?}");
        }
        // The edges of the ranges are allowed.
        for edit in [
            Box::new(|v: &mut Value| v["tcp"] = json!({"mss": 65483, "snd_buf": "1MB", "rcv_buf": "1GiB"})) as Edit,
            Box::new(|v| v["topology"]["bottleneck"]["mtu"] = json!(68)),
            Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("1200Gbps")),
            Box::new(|v| wifi(v, json!({"rss_dbm": -82.0, "retry_limit": 255, "max_amsdu": "7935B"}))),
            Box::new(|v| mmwave(v, json!({"position": [4999.0, 0.0, 1.5]}), json!({"enb": {"tx_power_dbm": 60.0}}))),
        ] {
            let mut v = base();
            edit(&mut v);
            resolve(v).unwrap();
        }
    }

    /// A trace file in the temporary directory with `text`; its path.
    fn trace_file(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("tcplab-resolve-{}-{name}.trace", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }

    /// Trace, jitter, aggregation and loss-model errors name the key and what is allowed.
    #[test]
    fn path_model_errors_name_the_key_and_what_is_allowed() {
        let bottleneck = |key: &str, value: Value| -> String {
            let key = key.to_string();
            error_of(move |v| v["topology"]["bottleneck"][&key] = value.clone())
        };
        let decreasing = trace_file("decreasing", "1\n2\n3\n4\n5\n15\n12\n20\n");
        assert_eq!(
            bottleneck("trace", json!(decreasing)),
            format!("topology.bottleneck.trace: file {decreasing:?}: line 7: 12 is less than the line before (15); a trace's times must not decrease")
        );
        let zeros = trace_file("zeros", "0\n0\n");
        assert!(
            bottleneck("trace", json!(zeros)).ends_with("every time is 0; the last line is the trace's period and must be at least 1 ms")
        );
        let empty = trace_file("empty", "");
        assert!(bottleneck("trace", json!(empty)).ends_with(": is empty; a trace has one line per delivery opportunity (its time in ms)"));
        let words = trace_file("words", "1\nten\n");
        assert!(bottleneck("trace", json!(words)).ends_with(": line 2: \"ten\" is not a whole number of milliseconds (0 to 4294967295)"));
        assert_eq!(bottleneck("trace", json!("no/such.trace")), "topology.bottleneck.trace: file \"no/such.trace\" not found");
        // 2 opportunities per ms: 24 Mbit/s, above the link's 10 Mbit/s.
        let fast = trace_file("fast", "1\n1\n2\n2\n");
        assert_eq!(
            bottleneck("trace", json!(fast)),
            format!("topology.bottleneck.rate: 10Mbps is below the mean rate of trace {fast:?} (24Mbps); with a trace, rate is the link's nominal rate; allowed: at least 24Mbps")
        );
        let reverse =
            error_of(|v| v["topology"]["bottleneck"]["reverse"] = json!({"trace": fast, "shaper": {"rate": "5Mbps", "burst": "3KB"}}));
        assert!(reverse.starts_with("topology.bottleneck.rate: 10Mbps is below the mean rate"), "{reverse}");
        let ok = trace_file("ok", "1\n4\n");
        let shaped =
            error_of(|v| v["topology"]["bottleneck"]["reverse"] = json!({"trace": ok, "shaper": {"rate": "5Mbps", "burst": "3KB"}}));
        assert_eq!(shaped, "topology.bottleneck.reverse.shaper: a trace decides when packets leave; remove shaper or trace");

        let cases: Vec<(&str, Value, &str)> = vec![
            ("loss", json!({"model": "gilbert-elliott", "p": 1.5, "r": 0.3}), "topology.bottleneck.loss.p: 1.5 is not a probability; allowed: 0 to 1"),
            ("loss", json!({"model": "gilbert-elliott", "p": 0.1, "r": -0.3}), "topology.bottleneck.loss.r: -0.3 is not a probability; allowed: 0 to 1"),
            ("loss", json!({"model": "gilbert-elliott", "p": 0.1, "r": 0.3, "loss_bad": 2}), "topology.bottleneck.loss.loss_bad: 2 is not a probability"),
            ("loss", json!({"model": "gilbert-elliott", "p": 0.1, "r": 0.3, "loss_good": 1}), "topology.bottleneck.loss.loss_good: 1 is not a loss probability of the good state; allowed: 0 <= loss_good < 1"),
            ("loss", json!({"model": "gilbert", "p": 0.1, "r": 0.3}), "topology.bottleneck.loss: unknown value \"gilbert\"; allowed: gilbert-elliott"),
            ("loss", json!({"model": "gilbert-elliott", "p": 0.1}), "topology.bottleneck.loss.r: missing; this key is required"),
            ("loss", json!("1%"), "topology.bottleneck.loss: expected a loss probability or a table with model = \"gilbert-elliott\", found the string \"1%\""),
            ("jitter", json!({"amount": "0ms"}), "topology.bottleneck.jitter.amount: 0s adds no jitter (remove jitter); allowed: more than 0s, at most 100s"),
            ("jitter", json!({"amount": "101s"}), "topology.bottleneck.jitter.amount: 101s is out of range; allowed: more than 0s, at most 100s"),
            ("jitter", json!({"amount": "1ms", "distribution": "pareto"}), "topology.bottleneck.jitter.distribution: unknown value \"pareto\"; allowed: uniform, normal, exponential"),
            ("aggregation", json!({"interval": "0s"}), "topology.bottleneck.aggregation.interval: 0s cannot batch anything (remove aggregation)"),
        ];
        for (key, value, start) in cases {
            let e = bottleneck(key, value);
            assert!(e.starts_with(start), "expected {start:?} in {e:?}");
        }
        for name in ["decreasing", "zeros", "empty", "words", "fast", "ok"] {
            std::fs::remove_file(std::env::temp_dir().join(format!("tcplab-resolve-{}-{name}.trace", std::process::id()))).unwrap();
        }
    }

    /// What is merely unusual passes, with one warning line naming the key.
    #[test]
    fn unusual_values_pass_with_a_warning_naming_the_key() {
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|v| v["tcp"] = json!({"mss": 100})), "tcp.mss: 100 B is below the IPv4 default MSS of 536 B"),
            (Box::new(|v| v["flows"][0]["tcp"] = json!({"mss": 100})), "flows.0.tcp.mss: 100 B is below"),
            (Box::new(|v| v["tcp"] = json!({"delack_timeout": "1s", "ato": "fixed"})), "tcp.delack_timeout: 1s is not below 0.5 s"),
            (Box::new(|v| v["tcp"] = json!({"initial_rto": "10us"})), "tcp.initial_rto: 10us is below 1ms"),
            (
                Box::new(|v| v["tcp"] = json!({"ack_every": 100, "rcv_buf": "64KiB"})),
                "tcp.ack_every: 100 segments (144800B) are more than rcv_buf (64KiB)",
            ),
            (
                Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("200Gbps")),
                "topology.bottleneck.rate: one 1500 B packet takes 60.0 ns at 200Gbps",
            ),
            (
                Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("1bps")),
                "topology.bottleneck.rate: one 1500 B packet takes 12000.000 s at 1bps, longer than the run (5s)",
            ),
            (
                Box::new(|v| v["topology"]["bottleneck"]["delay"] = json!("3s")),
                "topology.bottleneck.delay: 3s one way: the run (5s) ends before",
            ),
            (
                Box::new(|v| v["flows"][0]["app"] = json!({"rate": "100Gbps", "packet_size": "1000B"})),
                "flows.0.app.rate: writes of 1KB come every 80.0 ns; the 1 ns clock rounds that interval up by as much as 1.2 %",
            ),
            (
                Box::new(|v| wifi(v, json!({"max_queue_delay": "1ms"}))),
                "topology.wifi.max_queue_delay: 1ms is shorter than one PPDU may last (5484us",
            ),
            (
                Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"enb": {"tx_power_dbm": 50.0}}))),
                "topology.enb.tx_power_dbm: 50 dBm is unusual for a cell",
            ),
            (
                Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5]}), json!({"bandwidth": "2GHz"}))),
                "topology.bandwidth: 2GHz is wider than the 1GHz",
            ),
            (
                Box::new(|v| mmwave(v, json!({"position": [50.0, 0.0, 1.5], "velocity": [0.0, 200.0, 0.0]}), json!({}))),
                "topology.ues.0.velocity: the UE moves at 200 m/s",
            ),
        ];
        for (edit, start) in cases {
            let w = warnings_of(edit);
            assert!(w.len() == 1 && w[0].starts_with(start), "expected {start:?} in {w:?}");
        }
        // The flows of a count entry share one line.
        let w = warnings_of(|v| v["flows"] = json!([{"cc": "cubic"}, {"cc": "cubic", "count": 500, "tcp": {"mss": 100}}]));
        assert_eq!(w, ["flows.1.tcp.mss: 100 B is below the IPv4 default MSS of 536 B (RFC 9293 §3.7.1) (and 499 more flows alike)"]);
        // A flow's copy of the scenario's tcp table is not reported a second time.
        let w = warnings_of(|v| {
            v["tcp"] = json!({"mss": 100});
            v["flows"] = json!([{"cc": "cubic"}, {"cc": "cubic", "tcp": {"ack_every": 1}}]);
        });
        assert_eq!(w.len(), 1, "{w:?}");
    }
}
