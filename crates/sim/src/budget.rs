//! The memory a run's recorded series may take, estimated from the built network before
//! anything is allocated (docs/scenario-format.md, "Limits"). The sampled series — a row
//! per flow, link direction and radio device every `sample_interval` — are preallocated for
//! the whole run; the per-ACK RTT samples of `record.rtt` grow with the traffic, at most one
//! per data segment, so they are bounded by the segments the flows' bottlenecks can carry.
//! A scenario over its `record.memory_limit` ([`DEFAULT_LIMIT_BYTES`](crate::scenario::DEFAULT_LIMIT_BYTES) unless set) is rejected in one line saying what it would need and
//! which key to change; during the run the RTT samples are held to what the limit leaves.
//! The one key that multiplies the network itself, a dumbbell's `pairs`, is held to the
//! same limit before anything is built.

use crate::build::Network;
use crate::error::ScenarioError;
use crate::recorder::{FlowSeries, LinkSeries, RttSeries};
use crate::scenario::{Scenario, Topology};
use std::collections::HashMap;
use tcplab_core::packet::HEADER_BYTES;
use tcplab_core::{LinkId, SimTime};

/// Memory of one dumbbell pair once built (its hosts, two links, their queues, models and
/// counters), about: a 400 000-pair dumbbell peaks at 1.7 GB.
const PAIR_BYTES: u64 = 4 << 10;

/// Memory of one flow once built (its sender and receiver with their bookkeeping, RTT
/// statistics, its resolved spec), about: 10 000 CUBIC/BBR flows on a dumbbell peaked at
/// 461 MB with their pairs and 1 s series (benches/speed.py, 2026-11-26). Above `PAIR_BYTES`,
/// so flows that fit leave room for the dumbbell pairs they default to.
pub const FLOW_BYTES: u64 = 32 << 10;

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

/// Rejects a dumbbell with more pairs than `record.memory_limit` can hold; run before the
/// scenario's nodes are listed.
pub fn check_network(scenario: &Scenario) -> Result<(), ScenarioError> {
    let Topology::Dumbbell(d) = &scenario.topology else { return Ok(()) };
    let limit = scenario.record.memory_limit.0;
    match d.pairs {
        Some(pairs) if u64::from(pairs) * PAIR_BYTES > limit => Err(ScenarioError::new(
            "topology.pairs",
            format!(
                "{pairs} pairs would need ~{} for the network alone (record.memory_limit {}); allowed: at most {} pairs",
                approx_bytes(u64::from(pairs) * PAIR_BYTES),
                approx_bytes(limit),
                limit / PAIR_BYTES
            ),
        )),
        _ => Ok(()),
    }
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

/// Estimates the recorded series of `scenario`, built into `net`.
pub fn estimate(scenario: &Scenario, net: &Network) -> Estimate {
    let samples = scenario.duration.0.as_nanos() / scenario.sample_interval.0.as_nanos().max(1);
    let cell_row_bytes = net.radio.as_ref().map_or(0, |r| r.cell.rows_per_sample() as u128 * u128::from(r.cell.series().row_bytes));
    let row_bytes = net.flows.len() as u128 * u128::from(FlowSeries::ROW_BYTES)
        + net.links.len() as u128 * u128::from(LinkSeries::ROW_BYTES)
        + cell_row_bytes;
    let series_bytes = saturate(u128::from(samples) * row_bytes);
    let rtt_samples = if scenario.record.rtt { segments_bound(scenario, net) } else { 0 };
    Estimate { samples, series_bytes, rtt_samples, limit_bytes: scenario.record.memory_limit.0 }
}

/// Rejects a scenario whose recorded series would pass its `record.memory_limit`.
pub fn check(scenario: &Scenario, net: &Network) -> Result<Estimate, ScenarioError> {
    let e = estimate(scenario, net);
    let limit = format!("record.memory_limit {}", approx_bytes(e.limit_bytes));
    if e.series_bytes > e.limit_bytes {
        let mut what = vec![count(net.flows.len(), "flow"), count(net.links.len(), "link")];
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
    for (f, spec) in net.flows.iter().zip(&scenario.flows) {
        let (mut node, mut bottleneck) = (f.src, None);
        while let Some(link) = net.routes.next_hop(node, f.dst) {
            let hop = medium(link);
            if bottleneck.is_none_or(|(_, rate)| hop.1 < rate) {
                bottleneck = Some(hop);
            }
            node = match net.radio.as_ref().and_then(|r| r.hop(link).map(|h| r.far_end(h.ue, h.direction))) {
                Some(far_end) => far_end,
                None => net.links[link as usize].to,
            };
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
    use crate::resolve::resolve;
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
        let e = estimate(&s, &net);
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
            estimate(&s, &crate::build::build(&s).unwrap()).rtt_samples
        };
        // The wired links are faster than the cell: its peak rate bounds all UEs together.
        assert_eq!(cell(1), cell(3));
        assert!(cell(1) > 0);
    }

    #[test]
    fn the_estimate_is_what_the_world_preallocates() {
        let s = rtt_lens(|v| v["flows"] = json!([{"cc": "cubic"}, {"cc": "bbr"}, {"cc": "reno"}])).unwrap();
        let world = World::new(s.clone(), &mut || Ok::<(), ScenarioError>(())).unwrap();
        let e = estimate(&s, &world.net);
        let allocated = world.flow_series.t_s.capacity() as u64 * FlowSeries::ROW_BYTES
            + world.link_series.t_s.capacity() as u64 * LinkSeries::ROW_BYTES;
        assert_eq!(e.series_bytes, allocated);
        assert_eq!(world.flow_series.cwnd_pkts.capacity(), 2100 * 3);
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
    fn sizes_read_in_binary_units() {
        assert_eq!(approx_bytes(0), "0 B");
        assert_eq!(approx_bytes(1023), "1023 B");
        assert_eq!(approx_bytes(1536), "1.5 KiB");
        assert_eq!(approx_bytes(crate::scenario::DEFAULT_LIMIT_BYTES), "512 MiB");
        assert_eq!(approx_bytes(48 << 30), "48 GiB");
        assert_eq!(approx_bytes(u64::MAX), "16 EiB");
    }
}
