//! The run summary (summary.json) and the end-of-run invariants (docs/architecture.md, "Rules
//! that keep results trustworthy"): packet conservation, acked ≤ sent, no NaN or negative
//! value where a number is required. Flow completion times (the `fct` block) are summarized
//! as the data-center transport studies report them (pFabric, Alizadeh et al. SIGCOMM 2013;
//! HPCC, Li et al. SIGCOMM 2019): percentiles over flows, by algorithm and by size bin, with
//! nearest-rank percentiles and the flows that did not finish counted, not dropped.

use crate::sampling::stack_name;
use crate::world::World;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    pub cc: String,
    /// Whose TCP the flow ran: "linux" or "ns3" (`tcp.stack`).
    pub stack: &'static str,
    pub src: String,
    pub dst: String,
    /// In-order payload delivered to the receiving application over the flow's active time.
    pub goodput_mbps: f64,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    pub rtt_p99_ms: Option<f64>,
    /// The smoothed RTT averaged over time, from the first RTT measurement to the flow's end
    /// (the studies' "RTT"; the per-ACK mean above weighs busy periods more).
    pub srtt_mean_ms: Option<f64>,
    /// The mean of the values the smoothed RTT takes, one per change (what an ns-3
    /// TracedValue trace of it reports).
    pub srtt_update_mean_ms: Option<f64>,
    pub retransmits: u64,
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted share of the segments sent, % (the loss rate the sender saw).
    pub retransmit_pct: f64,
    pub rto_count: u64,
    pub bytes_acked: u64,
    pub bytes_sent: u64,
    /// Seconds from start to the last byte acknowledged (byte-count transfers only).
    pub completion_s: Option<f64>,
    /// Writes of a fixed-rate application discarded because the send buffer was full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_discarded_writes: Option<u64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    pub id: String,
    /// Fraction of the run the transmitter was busy.
    pub utilization: f64,
    /// Packets dropped by the queue, for any reason.
    pub drops: u64,
    /// The queue's drops by reason.
    pub drops_by_reason: DropsByReason,
    /// Packets lost by the link itself (random loss).
    pub losses: u64,
    /// Packets the queue CE-marked (ECN).
    pub ce_marks: u64,
    pub backlog_mean_pkts: f64,
    pub backlog_max_pkts: u32,
    /// Mean, 95th and 99th percentile of the time packets waited in the queue, from enqueue
    /// to the start of their transmission (None if no packet left the queue).
    pub sojourn_mean_ms: Option<f64>,
    pub sojourn_p95_ms: Option<f64>,
    pub sojourn_p99_ms: Option<f64>,
    /// The same of the L4S queue alone, for a queue that has one (DualPI2); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l4s_sojourn_mean_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l4s_sojourn_p95_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l4s_sojourn_p99_ms: Option<f64>,
}

/// A queue's drops by `DropReason`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DropsByReason {
    /// Arrivals refused by a full queue.
    pub tail: u64,
    /// Queued packets evicted for an arrival (head drop).
    pub head: u64,
    /// Drops an AQM decided (RED, CoDel, PIE, ...).
    pub aqm: u64,
    /// Batch drops bringing the queue back under its limit (FQ-CoDel).
    pub overlimit: u64,
    /// Arrivals the direction's policer dropped.
    pub policer: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunInfo {
    pub seed: u64,
    pub sim_seconds: f64,
    /// Filled in by the caller that measured it (the engine never reads the wall clock).
    pub wall_seconds: f64,
    pub events: u64,
    /// Threads that simulated the run: 2 when its regions were shared between two
    /// (`crate::threads`; the results do not depend on it).
    pub threads: u32,
    /// Packets (data and ACKs) that reached their destination host.
    pub packets_delivered: u64,
    pub tcplab_version: String,
    pub backend: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// The cell's section (`crate::cell::RecordedCell::summary`) under its series' name:
    /// "radio" (per UE) or "wifi" (the BSS).
    #[serde(flatten)]
    pub cells: BTreeMap<&'static str, serde_json::Value>,
    /// Completion times of the flows with `bytes` set; absent when no flow has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct: Option<FctSummary>,
    /// Jain's fairness index of the flows' goodputs.
    pub fairness_jain: f64,
    pub run: RunInfo,
}

/// Flow completion times (start to the last byte acknowledged) of byte-count transfers.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FctSummary {
    #[serde(flatten)]
    pub all: FctStats,
    /// The same per algorithm (`cc` name).
    pub by_cc: BTreeMap<String, FctStats>,
    /// The same per size bin of `FCT_SIZE_BINS`, in that order.
    pub by_size: Vec<FctBin>,
}

/// Completion times of a set of sized flows; the percentiles are over the completed ones.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FctStats {
    /// Flows with `bytes` set.
    pub flows: u64,
    pub completed: u64,
    /// Flows whose last byte was not acknowledged before the run ended.
    pub unfinished: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FctBin {
    /// "<100KB", "100KB-10MB" or ">=10MB".
    pub bin: &'static str,
    /// Flow sizes in [min_bytes, max_bytes); max_bytes null for the last bin.
    pub min_bytes: u64,
    pub max_bytes: Option<u64>,
    #[serde(flatten)]
    pub stats: FctStats,
}

/// (name, first size, first size of the next bin): short (mice, under 100 KB), medium, and
/// long (elephants, 10 MB and more) flows, as the pFabric and HPCC evaluations split them.
pub const FCT_SIZE_BINS: [(&str, u64, Option<u64>); 3] =
    [("<100KB", 0, Some(100_000)), ("100KB-10MB", 100_000, Some(10_000_000)), (">=10MB", 10_000_000, None)];

impl FctStats {
    /// `fcts_ms`: one entry per sized flow, its completion time or None if unfinished.
    pub fn new(fcts_ms: impl IntoIterator<Item = Option<f64>>) -> Self {
        let mut flows = 0;
        let mut done: Vec<f64> = Vec::new();
        for fct in fcts_ms {
            flows += 1;
            done.extend(fct);
        }
        done.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least p of the values at or below it.
        let rank = |p: f64| done.get(((p * done.len() as f64).ceil() as usize).max(1) - 1).copied();
        FctStats {
            flows,
            completed: done.len() as u64,
            unfinished: flows - done.len() as u64,
            p50_ms: rank(0.5),
            p95_ms: rank(0.95),
            p99_ms: rank(0.99),
            max_ms: done.last().copied(),
        }
    }
}

/// The `fct` block of `flows` with their sizes (`bytes`), None if no flow has a size.
pub fn fct_summary(flows: &[FlowSummary], sizes: &[Option<u64>]) -> Option<FctSummary> {
    let sized: Vec<(&FlowSummary, u64)> = flows.iter().zip(sizes).filter_map(|(f, size)| size.map(|b| (f, b))).collect();
    if sized.is_empty() {
        return None;
    }
    let fct_ms = |f: &FlowSummary| f.completion_s.map(|s| s * 1e3);
    let mut by_cc: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
    for (f, _) in &sized {
        by_cc.entry(f.cc.clone()).or_default().push(fct_ms(f));
    }
    Some(FctSummary {
        all: FctStats::new(sized.iter().map(|(f, _)| fct_ms(f))),
        by_cc: by_cc.into_iter().map(|(cc, fcts)| (cc, FctStats::new(fcts))).collect(),
        by_size: FCT_SIZE_BINS
            .iter()
            .map(|&(bin, min_bytes, max_bytes)| FctBin {
                bin,
                min_bytes,
                max_bytes,
                stats: FctStats::new(
                    sized.iter().filter(|(_, b)| *b >= min_bytes && max_bytes.is_none_or(|max| *b < max)).map(|(f, _)| fct_ms(f)),
                ),
            })
            .collect(),
    })
}

/// Jain's index (Σx)² / (n·Σx²); 1 for a single flow or all-zero goodputs.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

pub fn summarize(w: &World) -> Summary {
    let end = w.end();
    let names = |id: u32| w.net.nodes[id as usize].name.clone();
    let flows: Vec<FlowSummary> = w
        .net
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let st = f.sender.stats();
            let active_until = f.completed_at.unwrap_or(end);
            let active_s = active_until.saturating_since(f.start).as_secs_f64();
            let rtt = &w.rtt[i].samples;
            let [rtt_p50_ms, rtt_p95_ms, rtt_p99_ms] = rtt.summary_quantiles_ms();
            FlowSummary {
                id: i as u32,
                cc: w.scenario.flows[i].cc.name().to_string(),
                stack: stack_name(&f.sender),
                src: names(f.src),
                dst: names(f.dst),
                goodput_mbps: if active_s > 0.0 { f.receiver.delivered_bytes() as f64 * 8e-6 / active_s } else { 0.0 },
                rtt_mean_ms: rtt.mean_ms(),
                rtt_p50_ms,
                rtt_p95_ms,
                rtt_p99_ms,
                srtt_mean_ms: w.rtt[i].smoothed.time_mean_ms(active_until),
                srtt_update_mean_ms: w.rtt[i].smoothed.update_mean_ms(),
                retransmits: st.retransmits,
                segments_sent: st.segments_sent,
                retransmit_pct: if st.segments_sent > 0 { 100.0 * st.retransmits as f64 / st.segments_sent as f64 } else { 0.0 },
                rto_count: st.rto_count,
                bytes_acked: st.bytes_acked,
                bytes_sent: st.bytes_sent,
                completion_s: f.completed_at.map(|t| t.saturating_since(f.start).as_secs_f64()),
                app_discarded_writes: f.app.map(|a| a.discarded),
            }
        })
        .collect();
    let run_ns = end.as_nanos().max(1) as f64;
    let backlog_mean = |i: usize| if w.samples_taken == 0 { 0.0 } else { w.backlog_sum[i] as f64 / w.samples_taken as f64 };
    let links = w
        .net
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| LinkSummary {
            id: l.name.clone(),
            utilization: (l.stats.busy_ns as f64 / run_ns).min(1.0),
            drops: l.stats.queue.drops(),
            drops_by_reason: {
                let [tail, head, aqm, overlimit, policer] = l.stats.queue.by_reason();
                DropsByReason { tail, head, aqm, overlimit, policer }
            },
            losses: l.stats.link_losses,
            ce_marks: l.stats.queue.ce_marks,
            backlog_mean_pkts: backlog_mean(i),
            backlog_max_pkts: w.backlog_max[i],
            sojourn_mean_ms: l.stats.sojourn.mean_ms(),
            sojourn_p95_ms: l.stats.sojourn.quantile_ms(0.95),
            sojourn_p99_ms: l.stats.sojourn.quantile_ms(0.99),
            l4s_sojourn_mean_ms: l.queue.l4s_sojourn().and_then(|s| s.mean_ms()),
            l4s_sojourn_p95_ms: l.queue.l4s_sojourn().and_then(|s| s.quantile_ms(0.95)),
            l4s_sojourn_p99_ms: l.queue.l4s_sojourn().and_then(|s| s.quantile_ms(0.99)),
        })
        .collect();
    let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_mbps).collect();
    let sizes: Vec<Option<u64>> = w.scenario.flows.iter().map(|f| f.bytes.map(|b| b.0)).collect();
    Summary {
        fairness_jain: jain_index(&goodputs),
        fct: fct_summary(&flows, &sizes),
        flows,
        links,
        cells: w.net.radio.iter().map(|r| (r.cell.series().name, r.cell.summary(&w.net.nodes, end))).collect(),
        run: RunInfo {
            seed: w.scenario.seed,
            sim_seconds: end.as_secs_f64(),
            wall_seconds: 0.0,
            events: w.events(),
            threads: w.threads(),
            packets_delivered: w.counters.packets_delivered,
            tcplab_version: env!("CARGO_PKG_VERSION").to_string(),
            backend: "sim".into(),
        },
    }
}

/// Checks the end-of-run invariants; an error describes the first one broken.
pub fn check_invariants(w: &World, s: &Summary) -> Result<(), String> {
    let c = w.counters;
    let held = w.packets_in_network();
    let queue_drops: u64 = w.net.links.iter().map(|l| l.stats.queue.drops()).sum();
    let link_losses: u64 = w.net.links.iter().map(|l| l.stats.link_losses).sum();
    let radio_drops = w.net.radio.as_ref().map_or(0, |r| r.cell.radio().packets_dropped());
    if c.packets_sent != c.packets_delivered + queue_drops + link_losses + radio_drops + held {
        return Err(format!(
            "packet conservation broken: sent {} != delivered {} + queue drops {queue_drops} + link losses {link_losses} + radio drops {radio_drops} + in network {held}",
            c.packets_sent, c.packets_delivered
        ));
    }
    for f in &s.flows {
        if f.bytes_acked > f.bytes_sent {
            return Err(format!("flow {}: bytes acked {} > bytes sent {}", f.id, f.bytes_acked, f.bytes_sent));
        }
        let numbers = [
            Some(f.goodput_mbps),
            Some(f.retransmit_pct),
            f.rtt_mean_ms,
            f.rtt_p50_ms,
            f.rtt_p95_ms,
            f.rtt_p99_ms,
            f.srtt_mean_ms,
            f.srtt_update_mean_ms,
        ];
        if numbers.iter().flatten().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(format!("flow {}: a summary number is NaN, infinite or negative", f.id));
        }
    }
    let (fs, gs) = (&w.flow_series, &w.flow_group_series);
    let required =
        [&fs.cwnd_pkts, &fs.inflight_pkts, &fs.goodput_mbps, &fs.retransmits, &gs.goodput_mbps, &gs.inflight_pkts, &gs.retransmits];
    if required.iter().any(|col| col.iter().any(|x| !x.is_finite() || *x < 0.0)) {
        return Err("a flow time-series value is NaN, infinite or negative".into());
    }
    let optional = [&fs.ssthresh_pkts, &fs.srtt_ms, &fs.min_rtt_ms, &fs.pacing_rate_mbps, &fs.delivery_rate_mbps];
    if optional.iter().any(|col| col.iter().any(|x| x.is_infinite() || *x < 0.0)) {
        return Err("a flow time-series value is infinite or negative".into());
    }
    Ok(())
}
