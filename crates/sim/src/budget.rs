//! The memory a run's recorded series may take, estimated from the built network before
//! anything is allocated (docs/scenario-format.md, "Limits"). The sampled series — a row
//! per flow, link direction and radio device every `sample_interval` — are preallocated for
//! the whole run; the per-ACK RTT samples of `record.rtt` grow with the traffic, at most one
//! per data segment, so they are bounded by the segments the flows' bottlenecks can carry.
//! A scenario over its `record.memory_limit` ([`DEFAULT_LIMIT_BYTES`](crate::scenario::DEFAULT_LIMIT_BYTES) unless set) is rejected in one line saying what it would need and
//! which key to change; during the run the RTT samples are held to what the limit leaves.
//! The keys that multiply the network itself (a dumbbell's `pairs`, a parking lot's pairs and
//! hops, a leaf-spine's hosts and spines) are held to the same limit before anything is built.

use crate::build::Network;
use crate::error::ScenarioError;
use crate::recorder::{LinkSeries, RttSeries};
use crate::sampling::SamplePlan;
use crate::scenario::{Scenario, Topology};
use std::collections::HashMap;
use tcplab_core::packet::HEADER_BYTES;
use tcplab_core::{FlowId, LinkId, SimTime};

/// Memory of one dumbbell pair once built (its hosts, two links, their queues, models and
/// counters), about: a 400 000-pair dumbbell peaks at 1.7 GB.
const PAIR_BYTES: u64 = 4 << 10;
/// One node and one full-duplex link (a host on its link, a parking lot's router and hop, a
/// leaf's link to a spine): half a pair.
const PORT_BYTES: u64 = PAIR_BYTES / 2;
/// An equal-cost routing table's bytes per port of the network (its row start and link).
const TABLE_BYTES_PER_PORT: u64 = 8;

/// Memory of one flow once built and run (its sender and receiver with their bookkeeping, RTT
/// statistics, its resolved spec and its summary in Python), about: an idle flow holds 1.7 KB
/// in the world, and 10 000 CUBIC/BBR flows sharing one dumbbell pair peak about 8 KB per
/// flow above the same run with one flow (benches/speed.py's child, 2026-11-26). A flow holds
/// more while it has much in flight (its scoreboard grows with it), and gives it back when it
/// completes. Counting the world's allocations (2026-11-26): 10 000 one-segment flows on one
/// dumbbell pair, 1.80 KB per flow once built and 1.99 KB once all had completed; the incast
/// campaign's 10 000 flows of 10-200 KB, 2.27 and 2.53 KB, of which 0.45 KB is the link series
/// preallocated for its 150 shared link directions (8.4 KB before finished flows freed their
/// scoreboards and RTT histograms; 48 B of each is what a sample reads of the flow, kept apart
/// since samples are taken on two threads: `World::take_readings`). A run on two threads holds a second copy of the world
/// (`crate::threads`): about 2 KB more per flow, within this estimate.
pub const FLOW_BYTES: u64 = 8 << 10;

/// Rejects `[[flows]]` entries whose flows (`counts`, in entry order) would together need more
/// than `limit` (`record.memory_limit`), before any is made, blaming the entry at which the
/// total passes it; the total otherwise.
pub fn check_flows(counts: impl IntoIterator<Item = u64>, limit: u64) -> Result<u64, ScenarioError> {
    let allowed = limit / FLOW_BYTES;
    let mut total = 0u64;
    for (entry, count) in counts.into_iter().enumerate() {
        total = total.saturating_add(count);
        if total > allowed {
            let (path, with_others) = match (count, total == count) {
                (1, _) => ("flows".to_string(), String::new()),
                (_, true) => (format!("flows.{entry}.count"), String::new()),
                (_, false) => (format!("flows.{entry}.count"), format!(" ({total} with the entries before)")),
            };
            return Err(ScenarioError::new(
                path,
                format!(
                    "{count} flows{with_others} would need ~{} (record.memory_limit {}); allowed: at most {allowed} flows in all",
                    approx_bytes(total.saturating_mul(FLOW_BYTES)),
                    approx_bytes(limit)
                ),
            ));
        }
    }
    Ok(total)
}

/// A key that multiplies the network: `value` of it take `bytes_each` (the other keys fixed).
struct Multiplier {
    key: &'static str,
    noun: &'static str,
    value: u64,
    bytes_each: u64,
}

/// Rejects a network too large for `record.memory_limit` (a dumbbell's pairs, a parking
/// lot's pairs and hops, a leaf-spine's hosts and spines), naming the key that weighs most;
/// run before the scenario's nodes are listed.
pub fn check_network(scenario: &Scenario) -> Result<(), ScenarioError> {
    let multipliers = match &scenario.topology {
        Topology::Dumbbell(d) => {
            let Some(pairs) = d.pairs else { return Ok(()) }; // by default one per flow
            vec![Multiplier { key: "topology.pairs", noun: "pairs", value: pairs.into(), bytes_each: PAIR_BYTES }]
        }
        Topology::ParkingLot(p) => {
            let unnamed = scenario.flows.iter().filter(|f| f.src.is_none() && f.dst.is_none()).count() as u64;
            vec![
                Multiplier {
                    key: "topology.pairs",
                    noun: "through pairs",
                    value: p.pairs.map_or(unnamed, u64::from),
                    bytes_each: PAIR_BYTES,
                },
                Multiplier {
                    key: "topology.cross_pairs",
                    noun: "cross pairs per hop",
                    value: p.cross_pairs.into(),
                    bytes_each: u64::from(p.hops).saturating_mul(PAIR_BYTES),
                },
                Multiplier { key: "topology.hops", noun: "hops", value: p.hops.into(), bytes_each: PORT_BYTES },
            ]
        }
        Topology::LeafSpine(t) => {
            // Hosts share their leaf's routing table: at most one table per leaf a flow ends on.
            let tables = u64::from(t.leaves).min(2 * scenario.flows.len() as u64);
            let per_port = u64::from(t.leaves).saturating_mul(PORT_BYTES + tables * TABLE_BYTES_PER_PORT);
            vec![
                Multiplier { key: "topology.hosts_per_leaf", noun: "hosts per leaf", value: t.hosts_per_leaf.into(), bytes_each: per_port },
                Multiplier { key: "topology.spines", noun: "spines", value: t.spines.into(), bytes_each: per_port },
            ]
        }
        Topology::Explicit(_) | Topology::Mmwave(_) => return Ok(()),
    };
    let bytes = |m: &Multiplier| m.value.saturating_mul(m.bytes_each);
    let total = multipliers.iter().map(bytes).fold(0u64, u64::saturating_add);
    let limit = scenario.record.memory_limit.0;
    if total <= limit {
        return Ok(());
    }
    let heaviest = multipliers.iter().max_by_key(|m| bytes(m)).expect("a network has a multiplier");
    let allowed = limit.saturating_sub(total - bytes(heaviest)) / heaviest.bytes_each.max(1);
    Err(ScenarioError::new(
        heaviest.key,
        format!(
            "{} {} would need ~{} for the network alone (record.memory_limit {}); allowed: at most {allowed} {}",
            heaviest.value,
            heaviest.noun,
            approx_bytes(total),
            approx_bytes(limit),
            heaviest.noun
        ),
    ))
}

/// Whether a second copy of the world, which a run on two threads builds (`crate::threads`),
/// fits in `record.memory_limit` on its own: its flows at `FLOW_BYTES` and its link directions
/// at half a `PORT_BYTES` (many-10000's copy measured 31 MB: 10 000 flows, 40 000 directions).
/// The largest runs thus stay on one thread rather than double their memory.
pub fn second_world_fits(scenario: &Scenario, net: &Network) -> bool {
    let bytes = (net.flows.len() as u64).saturating_mul(FLOW_BYTES).saturating_add((net.links.len() as u64).saturating_mul(PORT_BYTES / 2));
    bytes <= scenario.record.memory_limit.0
}

/// What a scenario's recorded series would take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Rows per flow, link direction and radio device: one per `sample_interval`.
    pub samples: u64,
    pub series_bytes: u64,
    /// At most this many per-ACK RTT samples (0 without `record.rtt`).
    pub rtt_samples: u64,
    /// `record.memory_limit`.
    pub limit_bytes: u64,
}

impl Estimate {
    pub fn rtt_bytes(&self) -> u64 {
        self.rtt_samples.saturating_mul(RttSeries::ROW_BYTES)
    }

    /// The RTT samples the run may record before it would pass the limit.
    pub fn rtt_sample_cap(&self) -> u64 {
        self.limit_bytes.saturating_sub(self.series_bytes) / RttSeries::ROW_BYTES
    }
}

/// Estimates the recorded series of `scenario`, built into `net`, sampled as `plan` says.
pub fn estimate(scenario: &Scenario, net: &Network, plan: &SamplePlan) -> Estimate {
    let samples = scenario.duration.0.as_nanos() / scenario.sample_interval.0.as_nanos().max(1);
    let cell_row_bytes = net.radio.as_ref().map_or(0, |r| r.cell.rows_per_sample() as u128 * u128::from(r.cell.series().row_bytes));
    let (flow_rows, flow_row_bytes) = plan.flow_rows(net.flows.len());
    let row_bytes =
        flow_rows as u128 * u128::from(flow_row_bytes) + plan.links.len() as u128 * u128::from(LinkSeries::ROW_BYTES) + cell_row_bytes;
    let series_bytes = saturate(u128::from(samples) * row_bytes);
    let rtt_samples = if scenario.record.rtt { segments_bound(scenario, net) } else { 0 };
    Estimate { samples, series_bytes, rtt_samples, limit_bytes: scenario.record.memory_limit.0 }
}

/// Rejects a scenario whose recorded series would pass its `record.memory_limit`.
pub fn check(scenario: &Scenario, net: &Network, plan: &SamplePlan) -> Result<Estimate, ScenarioError> {
    let e = estimate(scenario, net, plan);
    let limit = format!("record.memory_limit {}", approx_bytes(e.limit_bytes));
    if e.series_bytes > e.limit_bytes {
        let flows = match &plan.groups {
            Some(groups) => count(groups.len(), "flow group"),
            None => count(net.flows.len(), "flow"),
        };
        let mut what = vec![flows, count(plan.links.len(), "link")];
        what.extend(net.radio.as_ref().map(|r| count(r.cell.rows_per_sample(), r.cell.row_noun())));
        let last = what.pop().expect("flows and links are listed");
        let what = format!("{} and {last}", what.join(", "));
        return Err(ScenarioError::new(
            "sample_interval",
            format!(
                "recording {} at {} for {what} would need ~{} of samples ({limit}); raise sample_interval, shorten duration or raise record.memory_limit",
                scenario.duration,
                scenario.sample_interval,
                approx_bytes(e.series_bytes)
            ),
        ));
    }
    if e.rtt_samples > e.rtt_sample_cap() {
        return Err(ScenarioError::new(
            "record.rtt",
            format!(
                "the per-ACK RTT samples of {} over {} could need ~{} besides ~{} of sampled series ({limit}); set record.rtt = false, shorten duration or raise record.memory_limit",
                count(net.flows.len(), "flow"),
                scenario.duration,
                approx_bytes(e.rtt_bytes()),
                approx_bytes(e.series_bytes)
            ),
        ));
    }
    Ok(e)
}

/// The error of a run stopped because its RTT samples reached `cap` (the estimate assumes
/// full-sized segments; smaller ones can pass it).
pub fn rtt_overflow(scenario: &Scenario, cap: u64, at_s: f64) -> ScenarioError {
    ScenarioError::new(
        "record.rtt",
        format!(
            "the run was stopped at {at_s:.3} s of {}: its {cap} per-ACK RTT samples reached record.memory_limit ({}); set record.rtt = false, shorten duration or raise record.memory_limit",
            scenario.duration,
            approx_bytes(scenario.record.memory_limit.0)
        ),
    )
}

/// The most data segments the flows can get delivered: each flow is held to the slowest
/// medium on its path (a link direction, or the radio cell, whose hops share its airtime),
/// and flows sharing that medium share its rate; segments are at least the smallest a flow
/// of the group writes in full (its MSS, or a smaller application write).
fn segments_bound(scenario: &Scenario, net: &Network) -> u64 {
    // (medium, its rate): a radio hop stands for the cell, named by its first hop.
    let medium = |link: LinkId| match net.radio.as_ref().filter(|r| r.hop(link).is_some()) {
        Some(r) => (r.first_hop, r.peak_rate_bps),
        None => (link, net.links[link as usize].model.rate().bps() as f64),
    };
    let end = SimTime::ZERO + scenario.duration.0;
    // Bottleneck medium → (its rate, longest active time of its flows, smallest segment).
    let mut groups: HashMap<LinkId, (f64, f64, u64)> = HashMap::new();
    for (id, (f, spec)) in net.flows.iter().zip(&scenario.flows).enumerate() {
        let mut bottleneck = None;
        for hop in net.path(f.src, f.dst, id as FlowId).map(medium) {
            if bottleneck.is_none_or(|(_, rate)| hop.1 < rate) {
                bottleneck = Some(hop);
            }
        }
        let Some((bottleneck, rate)) = bottleneck else { continue };
        let active_s = f.stop.unwrap_or(end).min(end).saturating_since(f.start).as_secs_f64();
        let mss = u64::from(spec.tcp.as_ref().unwrap_or(&scenario.tcp).mss);
        let segment = spec.app.as_ref().map_or(mss, |a| a.packet_size.0.min(mss)) + u64::from(HEADER_BYTES);
        let g = groups.entry(bottleneck).or_insert((rate, 0.0, u64::MAX));
        g.1 = g.1.max(active_s);
        g.2 = g.2.min(segment);
    }
    let segments: f64 = groups.values().map(|&(rate, active_s, segment)| rate * active_s / (8.0 * segment as f64)).sum();
    segments.ceil().min(u64::MAX as f64) as u64
}

fn saturate(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// "512 MiB", "1.5 GiB", "48 GiB": binary units, two significant digits below 10.
pub fn approx_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 && unit > 0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::FlowSeries;
    use crate::resolve::resolve;
    use crate::sampling::FlowGroupSeries;
    use crate::world::World;
    use serde_json::{json, Value};

    /// The shipped rtt-lens study: one flow over a 10 Mbps bottleneck, 1 Gbps access links.
    fn rtt_lens(edit: impl FnOnce(&mut Value)) -> Result<Scenario, ScenarioError> {
        let mut v = json!({
            "duration": "21s",
            "sample_interval": "10ms",
            "record": {"rtt": true},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "330pkt"},
                "access": {"rate": "1Gbps", "delay": "0ms", "buffer": "1000pkt"}
            },
            "flows": [{"cc": "cubic"}]
        });
        edit(&mut v);
        crate::validate(v)
    }

    #[test]
    fn a_long_run_is_refused_with_what_it_would_need() {
        let e = rtt_lens(|v| v["duration"] = json!("10000000s")).unwrap_err();
        assert_eq!(e.path, "sample_interval");
        assert_eq!(
            e.message,
            "recording 10000000s at 10ms for 1 flow and 6 links would need ~693 GiB of samples (record.memory_limit 512 MiB); raise sample_interval, shorten duration or raise record.memory_limit"
        );
        let e = rtt_lens(|v| v["sample_interval"] = json!("1us")).unwrap_err();
        assert_eq!(e.path, "sample_interval");
        assert!(e.message.contains("21s at 1us") && e.message.contains("~15 GiB"), "{e}");
    }

    #[test]
    fn rtt_samples_are_bounded_by_the_bottleneck() {
        // 10 Mbps of 1500 B segments: ~833 per second, 20 B each.
        let s = rtt_lens(|v| v["duration"] = json!("1000s")).unwrap();
        let net = crate::build::build(&s).unwrap();
        let e = estimate(&s, &net, &SamplePlan::new(&s, &net));
        assert_eq!(e.rtt_samples, 833_334); // 10e6 * 1000 / (8 * 1500), rounded up
        assert_eq!(e.samples, 100_000);
        // Flows through one bottleneck share it; over 1 Gbps for a day, they would not fit.
        let e = rtt_lens(|v| {
            v["duration"] = json!("86400s");
            v["sample_interval"] = json!("1s");
            v["topology"]["bottleneck"]["rate"] = json!("1Gbps");
        })
        .unwrap_err();
        assert_eq!(e.path, "record.rtt");
        assert!(e.message.starts_with("the per-ACK RTT samples of 1 flow over 86400s could need ~134 GiB besides ~61 MiB"), "{e}");
        assert!(rtt_lens(|v| {
            v["duration"] = json!("86400s");
            v["sample_interval"] = json!("1s");
            v["topology"]["bottleneck"]["rate"] = json!("1Gbps");
            v["record"]["rtt"] = json!(false);
        })
        .is_ok());
    }

    #[test]
    fn the_ues_of_a_cell_share_its_rate() {
        let cell = |ues: usize| {
            let s = resolve(json!({
                "duration": "10s",
                "record": {"rtt": true},
                "topology": {
                    "kind": "mmwave",
                    "remote": {"rate": "100Gbps", "delay": "5ms", "buffer": "2000pkt"},
                    "s1u": {"rate": "100Gbps", "delay": "1ms", "buffer": "2000pkt"},
                    "ues": vec![json!({"position": [50.0, 0.0, 1.5]}); ues],
                },
                "flows": vec![json!({"cc": "cubic"}); ues],
            }))
            .unwrap();
            let net = crate::build::build(&s).unwrap();
            estimate(&s, &net, &SamplePlan::new(&s, &net)).rtt_samples
        };
        // The wired links are faster than the cell: its peak rate bounds all UEs together.
        assert_eq!(cell(1), cell(3));
        assert!(cell(1) > 0);
    }

    #[test]
    fn the_estimate_is_what_the_world_preallocates() {
        let s = rtt_lens(|v| v["flows"] = json!([{"cc": "cubic"}, {"cc": "bbr"}, {"cc": "reno"}])).unwrap();
        let world = World::new(s.clone(), &mut || Ok::<(), ScenarioError>(())).unwrap();
        let e = estimate(&s, &world.net, &SamplePlan::new(&s, &world.net));
        let allocated = world.flow_series.t_s.capacity() as u64 * FlowSeries::ROW_BYTES
            + world.link_series.t_s.capacity() as u64 * LinkSeries::ROW_BYTES;
        assert_eq!(e.series_bytes, allocated);
        assert_eq!(world.flow_series.cwnd_pkts.capacity(), 2100 * 3);
    }

    #[test]
    fn many_flows_are_recorded_in_groups_over_their_shared_links() {
        // 101 flows (over `aggregate_above`), two algorithms: two group rows per sample, and
        // the bottleneck's two directions are the only links two flows share.
        let flows: Vec<Value> = (0..101).map(|i| json!({"cc": if i % 2 == 0 { "cubic" } else { "bbr" }})).collect();
        let s = rtt_lens(|v| {
            v["duration"] = json!("2s");
            v["flows"] = json!(flows);
        })
        .unwrap();
        let world = World::new(s.clone(), &mut || Ok::<(), ScenarioError>(())).unwrap();
        let plan = &world.plan;
        let groups: Vec<_> = plan.groups.as_ref().unwrap().iter().map(|g| (g.cc, g.stack, g.flows.len())).collect();
        assert_eq!(groups, [("cubic", "linux", 51), ("bbr", "linux", 50)]);
        let shared: Vec<&str> = plan.links.iter().map(|&l| world.net.links[l as usize].name.as_str()).collect();
        assert_eq!(shared, ["left->right", "right->left"]);
        let e = estimate(&s, &world.net, plan);
        let allocated = world.flow_group_series.t_s.capacity() as u64 * FlowGroupSeries::ROW_BYTES
            + world.link_series.t_s.capacity() as u64 * LinkSeries::ROW_BYTES;
        assert_eq!((e.series_bytes, world.flow_group_series.t_s.capacity(), world.flow_series.t_s.capacity()), (allocated, 200 * 2, 0));
        // Asked for, each flow and every link direction are recorded again.
        let s = rtt_lens(|v| {
            v["duration"] = json!("2s");
            v["flows"] = json!(flows);
            v["record"] = json!({"flows": "each", "links": "all"});
        })
        .unwrap();
        let net = crate::build::build(&s).unwrap();
        let plan = SamplePlan::new(&s, &net);
        assert!(plan.groups.is_none() && plan.links.len() == 2 + 4 * 101);
        // A 10 000-flow dumbbell at 10 ms for 10 s fits the default limit only in groups.
        let many: Vec<Value> = (0..10_000).map(|_| json!({"cc": "cubic"})).collect();
        let big = |record: Value| {
            rtt_lens(|v| {
                v["duration"] = json!("10s");
                v["record"] = record.clone();
                v["flows"] = json!(many);
            })
        };
        assert!(big(json!({})).is_ok());
        let e = big(json!({"flows": "each"})).unwrap_err();
        assert_eq!(e.path, "sample_interval");
        assert!(e.message.contains("for 10000 flows and 2 links would need ~1.3 GiB"), "{e}");
    }

    #[test]
    fn a_dumbbell_too_large_to_build_is_refused_before_building() {
        let e = rtt_lens(|v| v["topology"]["pairs"] = json!(100_000_000)).unwrap_err();
        assert_eq!(e.to_string(), "topology.pairs: 100000000 pairs would need ~381 GiB for the network alone (record.memory_limit 512 MiB); allowed: at most 131072 pairs");
        assert!(rtt_lens(|v| {
            v["topology"]["pairs"] = json!(4000);
            v["duration"] = json!("1s");
        })
        .is_ok());
        // A larger limit lets a larger network through (its series are then what is too large).
        let e = rtt_lens(|v| v["topology"]["pairs"] = json!(200_000)).unwrap_err();
        assert_eq!(e.path, "topology.pairs");
        let e = rtt_lens(|v| {
            v["topology"]["pairs"] = json!(200_000);
            v["record"] = json!({"memory_limit": "1GiB"});
        })
        .unwrap_err();
        assert_eq!(e.path, "sample_interval", "{e}");
    }

    #[test]
    fn generated_topologies_too_large_to_build_name_their_heaviest_key() {
        let refusal = |topology: Value, flows: Value| -> (String, String) {
            let e =
                resolve(json!({"duration": "1s", "record": {"memory_limit": "16MiB"}, "topology": topology, "flows": flows})).unwrap_err();
            (e.path, e.message)
        };
        let hop = json!({"rate": "10Mbps", "delay": "1ms"});
        let through = json!([{"cc": "cubic"}]);
        let (path, message) = refusal(json!({"kind": "parking_lot", "hops": 3, "bottleneck": hop, "cross_pairs": 10_000}), through.clone());
        assert_eq!(path, "topology.cross_pairs");
        assert_eq!(message, "10000 cross pairs per hop would need ~117 MiB for the network alone (record.memory_limit 16 MiB); allowed: at most 1364 cross pairs per hop");
        let (path, _) = refusal(json!({"kind": "parking_lot", "hops": 3, "bottleneck": hop, "pairs": 1_000_000}), through.clone());
        assert_eq!(path, "topology.pairs");
        let (path, _) = refusal(json!({"kind": "parking_lot", "hops": 4_000_000, "bottleneck": hop, "cross_pairs": 0}), through.clone());
        assert_eq!(path, "topology.hops");
        // What the message allows is allowed.
        let fits = |topology: Value, flows: Value| {
            resolve(json!({"duration": "1s", "record": {"memory_limit": "16MiB"}, "topology": topology, "flows": flows}))
        };
        fits(json!({"kind": "parking_lot", "hops": 3, "bottleneck": hop, "cross_pairs": 1364}), through).unwrap();

        let fabric = json!({"rate": "10Gbps", "delay": "10us"});
        let flow = json!([{"cc": "cubic", "src": "h0_0", "dst": "h1_0"}]);
        let leaf_spine = |hosts_per_leaf: u32| json!({"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": hosts_per_leaf, "fabric_link": fabric});
        let (path, message) = refusal(leaf_spine(100_000), flow.clone());
        assert_eq!(path, "topology.hosts_per_leaf");
        assert!(message.ends_with("allowed: at most 4062 hosts per leaf"), "{message}");
        fits(leaf_spine(4062), flow).unwrap();
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(approx_bytes(0), "0 B");
        assert_eq!(approx_bytes(1023), "1023 B");
        assert_eq!(approx_bytes(1536), "1.5 KiB");
        assert_eq!(approx_bytes(crate::scenario::DEFAULT_LIMIT_BYTES), "512 MiB");
        assert_eq!(approx_bytes(48 << 30), "48 GiB");
        assert_eq!(approx_bytes(u64::MAX), "16 EiB");
    }
}
