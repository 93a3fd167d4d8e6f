//! From user JSON to a checked, fully resolved [`Scenario`]. Every error names the dotted
//! key path (the syntax of `--set`), the bad value and what is allowed, in one line.
//! Sections are parsed one by one so that the path survives serde's tagged and untagged
//! enums, and each flow's `tcp` table is merged over the scenario's before it is parsed.

use crate::scenario::{FlowSpec, LinkSpec, Scenario, Topology};
use crate::units::{BufferValue, EcnThresholdValue};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt;
use tcplab_core::packet::HEADER_BYTES;

/// A scenario the simulator cannot run, with the key path of the culprit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Dotted key path (`flows.0.cc`), empty for the whole document.
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

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
        let message = e.into_inner().to_string();
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
    let value: Value = serde_json::from_str(text).map_err(|e| ScenarioError::new("", format!("not valid JSON: {e}")))?;
    resolve(value)
}

/// Parses and checks a scenario given as a JSON value; fills every default.
pub fn resolve(value: Value) -> Result<Scenario, ScenarioError> {
    let Value::Object(mut top) = value else {
        return Err(ScenarioError::new("", "a scenario must be a table of keys"));
    };
    let tcp_value = take(&mut top, "tcp").unwrap_or_else(|| Value::Object(Map::new()));
    let global_tcp: crate::scenario::TcpSpec = parse_at(tcp_value, "tcp")?;
    let topology_value = take(&mut top, "topology").ok_or_else(|| ScenarioError::new("topology", "missing; a topology table with kind = \"dumbbell\", \"explicit\" or \"mmwave\" is required"))?;
    let flows_value = take(&mut top, "flows").ok_or_else(|| ScenarioError::new("flows", "missing; at least one [[flows]] entry is required"))?;

    let topology = parse_topology(topology_value)?;
    let Value::Array(flow_values) = flows_value else {
        return Err(ScenarioError::new("flows", "must be an array of tables ([[flows]])"));
    };
    let global_tcp_json = serde_json::to_value(&global_tcp).expect("TcpSpec serializes");
    let flows = flow_values
        .into_iter()
        .enumerate()
        .map(|(i, v)| parse_flow(v, i, &global_tcp_json))
        .collect::<Result<Vec<FlowSpec>, _>>()?;

    // What is left are the scalar top-level keys (and unknown ones, which serde reports).
    top.insert("tcp".into(), global_tcp_json);
    top.insert("topology".into(), serde_json::to_value(&topology).expect("topology serializes"));
    top.insert("flows".into(), Value::Array(Vec::new()));
    let mut scenario: Scenario = parse_at(Value::Object(top), "")?;
    scenario.flows = flows;
    check(&mut scenario)?;
    // What only the built graph can tell (a flow between unconnected hosts).
    crate::build::build(&scenario)?;
    Ok(scenario)
}

fn parse_topology(value: Value) -> Result<Topology, ScenarioError> {
    let Value::Object(mut map) = value else {
        return Err(ScenarioError::new("topology", "must be a table with kind = \"dumbbell\", \"explicit\" or \"mmwave\""));
    };
    let kind = match take(&mut map, "kind") {
        Some(Value::String(k)) => k,
        Some(other) => return Err(ScenarioError::new("topology.kind", format!("{other} is not a topology kind; allowed: dumbbell, explicit, mmwave"))),
        None => return Err(ScenarioError::new("topology.kind", "missing; allowed: dumbbell, explicit, mmwave")),
    };
    match kind.as_str() {
        "dumbbell" => Ok(Topology::Dumbbell(Box::new(parse_at(Value::Object(map), "topology")?))),
        "explicit" => Ok(Topology::Explicit(parse_at(Value::Object(map), "topology")?)),
        "mmwave" => Ok(Topology::Mmwave(Box::new(parse_at(Value::Object(map), "topology")?))),
        other => Err(ScenarioError::new("topology.kind", format!("unknown topology {other:?}; allowed: dumbbell, explicit, mmwave"))),
    }
}

fn parse_flow(value: Value, index: usize, global_tcp: &Value) -> Result<FlowSpec, ScenarioError> {
    let prefix = format!("flows.{index}");
    let Value::Object(mut map) = value else {
        return Err(ScenarioError::new(prefix, "must be a table"));
    };
    let mut tcp = global_tcp.as_object().cloned().unwrap_or_default();
    match take(&mut map, "tcp") {
        Some(Value::Object(over)) => tcp.extend(over),
        Some(other) => return Err(ScenarioError::new(format!("{prefix}.tcp"), format!("{other} is not a table of TCP settings"))),
        None => {}
    }
    map.insert("tcp".into(), Value::Object(tcp));
    parse_at(Value::Object(map), &prefix)
}

/// Semantic checks serde cannot express; fills dumbbell defaults (pairs, src/dst).
fn check(s: &mut Scenario) -> Result<(), ScenarioError> {
    let duration = s.duration.0;
    if duration.as_nanos() == 0 {
        return Err(ScenarioError::new("duration", "must be > 0, e.g. \"10s\""));
    }
    let interval = s.sample_interval.0;
    if interval.as_nanos() == 0 || interval > duration {
        return Err(ScenarioError::new("sample_interval", format!("{} must be > 0 and at most the duration ({})", s.sample_interval, s.duration)));
    }
    if s.flows.is_empty() {
        return Err(ScenarioError::new("flows", "is empty; at least one flow is required"));
    }
    check_tcp(&s.tcp, "tcp")?;
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
                    return Err(ScenarioError::new("topology.access_delays", format!("has {} entries; one per pair ({pairs}) is required", delays.len())));
                }
            }
            for (i, f) in s.flows.iter_mut().enumerate() {
                if f.src.is_none() && f.dst.is_none() && i as u32 >= pairs {
                    return Err(ScenarioError::new(format!("flows.{i}"), format!("has no src/dst and the dumbbell has only {pairs} pairs; set topology.pairs or the flow's src and dst")));
                }
                f.src.get_or_insert_with(|| format!("s{i}"));
                f.dst.get_or_insert_with(|| format!("r{i}"));
            }
            crate::build::dumbbell_node_names(pairs)
        }
        Topology::Explicit(e) => {
            let mut seen = HashSet::new();
            for (i, n) in e.nodes.iter().enumerate() {
                if n.name.is_empty() {
                    return Err(ScenarioError::new(format!("topology.nodes.{i}.name"), "must not be empty"));
                }
                if !seen.insert(n.name.as_str()) {
                    return Err(ScenarioError::new(format!("topology.nodes.{i}.name"), format!("{:?} is declared twice; node names must be unique", n.name)));
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
                        return Err(ScenarioError::new(format!("{path}.{end}"), format!("unknown node {name:?}; declared nodes: {}", node_list(e))));
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
                    return Err(ScenarioError::new(format!("flows.{i}"), format!("has no src/dst and the cell has only {} UEs; set the flow's src and dst", ues.len())));
                }
                // A missing end is the remote host, or UE i when the other end is the remote host.
                let remote = crate::mmwave::REMOTE;
                let other_end = |given: &Option<String>| if given.as_deref() == Some(remote) || given.is_none() { ues[i % ues.len()].clone() } else { remote.to_string() };
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
    };
    for (i, f) in s.flows.iter().enumerate() {
        check_flow(f, i, &nodes, duration)?;
    }
    Ok(())
}

fn node_list(e: &crate::scenario::Explicit) -> String {
    e.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", ")
}

fn check_tcp(t: &crate::scenario::TcpSpec, path: &str) -> Result<(), ScenarioError> {
    let err = |key: &str, msg: String| Err(ScenarioError::new(format!("{path}.{key}"), msg));
    if t.mss == 0 || t.mss > 1 << 20 {
        return err("mss", format!("{} is out of range; allowed: 1 to 1048576 bytes", t.mss));
    }
    if t.initial_cwnd == 0 {
        return err("initial_cwnd", "must be at least 1 packet".into());
    }
    if let crate::scenario::Ssthresh::Packets(n) = t.initial_ssthresh {
        if n < 2 {
            return err("initial_ssthresh", format!("{n} is too small; allowed: \"inf\" or at least 2 packets"));
        }
    }
    if t.min_rto.0.as_nanos() == 0 {
        return err("min_rto", "must be > 0".into());
    }
    if t.max_rto.0 < t.min_rto.0 {
        return err("max_rto", format!("{} is below min_rto ({})", t.max_rto, t.min_rto));
    }
    if t.initial_rto.0.as_nanos() == 0 {
        return err("initial_rto", "must be > 0".into());
    }
    let segment = t.mss as u64;
    if t.snd_buf.0 < segment {
        return err("snd_buf", format!("{} is smaller than one segment ({} B)", t.snd_buf, t.mss));
    }
    if t.rcv_buf.0 < segment {
        return err("rcv_buf", format!("{} is smaller than one segment ({} B)", t.rcv_buf, t.mss));
    }
    if t.ack_every == 0 {
        return err("ack_every", "must be at least 1 (1 = ACK every segment)".into());
    }
    Ok(())
}

fn check_loss(loss: f64, path: String) -> Result<(), ScenarioError> {
    if !(0.0..1.0).contains(&loss) {
        return Err(ScenarioError::new(path, format!("{loss} is not a loss probability; allowed: 0 <= loss < 1")));
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

/// A marking threshold must be > 0 and, in packets against a packet limit, below the limit
/// (an arrival never finds more than limit − 1 packets queued).
fn check_ecn_threshold(t: EcnThresholdValue, buffer: BufferValue, path: String) -> Result<(), ScenarioError> {
    let message = match (t, buffer) {
        (EcnThresholdValue::Packets(0), _) => "0pkt would mark every ECT packet; allowed: at least 1pkt".to_string(),
        (EcnThresholdValue::Sojourn(d), _) if d.as_nanos() == 0 => format!("{t} would mark every queued ECT packet; allowed: a sojourn time > 0"),
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
        return Err(ScenarioError::new(format!("{path}.a"), "dumbbell links have fixed ends; remove a and b"));
    }
    if l.rate.0.bps() == 0 {
        return Err(ScenarioError::new(format!("{path}.rate"), "must be > 0, e.g. \"10Mbps\""));
    }
    if l.mtu < HEADER_BYTES + 1 || l.mtu > 1 << 20 {
        return Err(ScenarioError::new(format!("{path}.mtu"), format!("{} is out of range; allowed: {} to 1048576 bytes", l.mtu, HEADER_BYTES + 1)));
    }
    check_buffer(l.buffer, l.mtu, format!("{path}.buffer"))?;
    check_loss(l.loss, format!("{path}.loss"))?;
    if let Some(t) = l.ecn_threshold {
        check_ecn_threshold(t, l.buffer, format!("{path}.ecn_threshold"))?;
    }
    if let Some(r) = &l.reverse {
        if let Some(b) = r.buffer {
            check_buffer(b, l.mtu, format!("{path}.reverse.buffer"))?;
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

fn check_flow(f: &FlowSpec, i: usize, nodes: &[(String, bool)], duration: tcplab_core::SimDuration) -> Result<(), ScenarioError> {
    let path = format!("flows.{i}");
    f.cc.validate().map_err(|m| ScenarioError::new(format!("{path}.cc"), m))?;
    let hosts = || nodes.iter().filter(|(_, h)| *h).map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
    for (key, name) in [("src", f.src.as_deref()), ("dst", f.dst.as_deref())] {
        let name = name.unwrap_or_default();
        match nodes.iter().find(|(n, _)| n == name) {
            None => return Err(ScenarioError::new(format!("{path}.{key}"), format!("unknown node {name:?}; hosts: {}", hosts()))),
            Some((_, false)) => return Err(ScenarioError::new(format!("{path}.{key}"), format!("{name:?} is a router; flows run between hosts: {}", hosts()))),
            Some(_) => {}
        }
    }
    if f.src == f.dst {
        return Err(ScenarioError::new(format!("{path}.dst"), "must differ from src"));
    }
    if f.start.0 >= duration {
        return Err(ScenarioError::new(format!("{path}.start"), format!("{} is not before the end of the run ({})", f.start, crate::units::DurationValue(duration))));
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
        if app.packet_size.0 == 0 || app.packet_size.0 > u64::from(u32::MAX) {
            return Err(ScenarioError::new(format!("{path}.app.packet_size"), format!("{} is out of range; allowed: 1 B to 4 GB per write", app.packet_size)));
        }
    }
    Ok(())
}
