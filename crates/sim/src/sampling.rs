//! What each sample of a run records (`record.flows`, `record.links`; docs/outputs.md): a row
//! per flow, or — for runs of many flows — a row per group of flows (one algorithm on one
//! stack) with sums and percentiles over the group, and either every link direction or only
//! those that two or more flows share. A 10 000-flow dumbbell has 20 002 link directions, of
//! which two are shared; a row for each flow and direction every 10 ms would need 5 GiB for
//! 10 s, its groups and shared links 0.3 MB.
//!
//! Percentiles are nearest-rank over the group's active flows (started and not yet complete):
//! the value at rank ⌈q·n⌉ of the n sorted values.

use crate::build::Network;
use crate::recorder::series;
use crate::scenario::Scenario;
use tcplab_core::{FlowId, LinkId, SimTime};
use tcplab_tcp::FlowSender;

series! {
    /// Per-group time series (flow_groups.parquet): one row per group of flows (one algorithm
    /// on one stack) and sample, when flows are recorded in groups.
    pub struct FlowGroupSeries as "flow_groups" {
        /// Simulated time of the sample.
        #[column(F64, "s")]
        pub t_s: f64,
        /// The group's algorithm (the flows' `cc` name).
        #[column(Text, "")]
        pub cc: &'static str,
        /// The group's TCP stack: "linux" or "ns3".
        #[column(Text, "")]
        pub stack: &'static str,
        /// Flows of the group that have started and not completed.
        #[column(U32, "")]
        pub flows_active: u32,
        /// Rate of the in-order bytes delivered to the group's receiving applications during
        /// the interval, summed over its flows.
        #[column(F64, "Mbit/s")]
        pub goodput_mbps: f64,
        /// 5th percentile of the active flows' goodput during the interval; NaN (null) without
        /// an active flow.
        #[column(F64, "Mbit/s")]
        pub goodput_p5_mbps: f64,
        /// Median of the active flows' goodput during the interval; NaN (null) without one.
        #[column(F64, "Mbit/s")]
        pub goodput_p50_mbps: f64,
        /// 95th percentile of the active flows' goodput during the interval; NaN (null)
        /// without one.
        #[column(F64, "Mbit/s")]
        pub goodput_p95_mbps: f64,
        /// Jain's fairness index of the active flows' goodput during the interval (1 for one
        /// flow or all zero); NaN (null) without an active flow.
        #[column(F64, "")]
        pub jain_index: f64,
        /// Median congestion window of the active flows; NaN (null) without one.
        #[column(F64, "packets")]
        pub cwnd_p50_pkts: f64,
        /// 95th percentile of the active flows' congestion windows; NaN (null) without one.
        #[column(F64, "packets")]
        pub cwnd_p95_pkts: f64,
        /// Segments in flight, summed over the group's flows.
        #[column(F64, "packets")]
        pub inflight_pkts: f64,
        /// Median smoothed RTT of the active flows that have one; NaN (null) without any.
        #[column(F64, "ms")]
        pub srtt_p50_ms: f64,
        /// 95th percentile of the active flows' smoothed RTTs; NaN (null) without any.
        #[column(F64, "ms")]
        pub srtt_p95_ms: f64,
        /// Retransmitted segments during the interval, summed over the group's flows.
        #[column(F64, "segments")]
        pub retransmits: f64,
    }
}

/// Which rows each sample takes, decided once from the scenario and the built network.
#[derive(Clone, Debug)]
pub struct SamplePlan {
    /// With flows recorded in groups: each group's (algorithm, stack) and its flows, in the
    /// order of their first flow; None when each flow has its own rows.
    pub groups: Option<Vec<FlowGroup>>,
    /// The link directions sampled, in id order.
    pub links: Vec<LinkId>,
}

#[derive(Clone, Debug)]
pub struct FlowGroup {
    pub cc: &'static str,
    pub stack: &'static str,
    pub flows: Vec<u32>,
}

/// Whose TCP a flow runs, as the outputs name it.
pub fn stack_name(sender: &FlowSender) -> &'static str {
    match sender {
        FlowSender::Linux(_) => "linux",
        FlowSender::Ns3(_) => "ns3",
    }
}

impl SamplePlan {
    pub fn new(scenario: &Scenario, net: &Network) -> Self {
        let flows = net.flows.len();
        let groups = scenario.record.flow_groups(flows).then(|| {
            let mut groups: Vec<FlowGroup> = Vec::new();
            for (i, (flow, spec)) in net.flows.iter().zip(&scenario.flows).enumerate() {
                let (cc, stack) = (spec.cc.name(), stack_name(&flow.sender));
                match groups.iter_mut().find(|g| g.cc == cc && g.stack == stack) {
                    Some(g) => g.flows.push(i as u32),
                    None => groups.push(FlowGroup { cc, stack, flows: vec![i as u32] }),
                }
            }
            groups
        });
        let links = if scenario.record.shared_links_only(flows) { shared_links(net) } else { (0..net.links.len() as LinkId).collect() };
        SamplePlan { groups, links }
    }

    /// Flow-series rows per sample, and the bytes one of them takes.
    pub fn flow_rows(&self, flows: usize) -> (usize, u64) {
        match &self.groups {
            Some(groups) => (groups.len(), FlowGroupSeries::ROW_BYTES),
            None => (flows, crate::recorder::FlowSeries::ROW_BYTES),
        }
    }
}

/// The wired link directions on the paths (data and ACKs) of two or more flows, in id order.
fn shared_links(net: &Network) -> Vec<LinkId> {
    const NONE: u32 = u32::MAX;
    const SHARED: u32 = u32::MAX - 1;
    let mut user = vec![NONE; net.links.len()];
    for (i, f) in net.flows.iter().enumerate() {
        for link in net.path(f.src, f.dst, i as FlowId).chain(net.path(f.dst, f.src, i as FlowId)) {
            if let Some(u) = user.get_mut(link as usize) {
                *u = match *u {
                    NONE => i as u32,
                    same if same == i as u32 => same,
                    _ => SHARED,
                };
            }
        }
    }
    (0..net.links.len() as LinkId).filter(|&l| user[l as usize] == SHARED).collect()
}

/// One flow's values at a sample, as the groups aggregate them.
#[derive(Clone, Copy, Debug)]
pub struct FlowSample {
    pub active: bool,
    pub goodput_mbps: f64,
    pub cwnd_pkts: f64,
    pub inflight_pkts: f64,
    pub srtt_ms: Option<f64>,
    pub retransmits: f64,
}

/// Reused buffers of the per-group percentiles (no allocation per sample once grown).
#[derive(Clone, Debug, Default)]
pub struct GroupScratch {
    goodput: Vec<f64>,
    cwnd: Vec<f64>,
    srtt: Vec<f64>,
}

impl FlowGroupSeries {
    /// Appends the row of `group` at `t_s` from its flows' samples.
    pub fn push_group(&mut self, t_s: f64, group: &FlowGroup, samples: impl Iterator<Item = FlowSample>, scratch: &mut GroupScratch) {
        let GroupScratch { goodput, cwnd, srtt } = scratch;
        goodput.clear();
        cwnd.clear();
        srtt.clear();
        let (mut goodput_sum, mut inflight, mut retransmits) = (0.0, 0.0, 0.0);
        for s in samples {
            goodput_sum += s.goodput_mbps;
            inflight += s.inflight_pkts;
            retransmits += s.retransmits;
            if s.active {
                goodput.push(s.goodput_mbps);
                cwnd.push(s.cwnd_pkts);
                srtt.extend(s.srtt_ms);
            }
        }
        self.t_s.push(t_s);
        self.cc.push(group.cc);
        self.stack.push(group.stack);
        self.flows_active.push(goodput.len() as u32);
        self.goodput_mbps.push(goodput_sum);
        self.jain_index.push(if goodput.is_empty() { f64::NAN } else { crate::summary::jain_index(goodput) });
        let [goodput_p5, goodput_p50, goodput_p95] = nearest_ranks(goodput, [0.05, 0.5, 0.95]);
        self.goodput_p5_mbps.push(goodput_p5);
        self.goodput_p50_mbps.push(goodput_p50);
        self.goodput_p95_mbps.push(goodput_p95);
        let [cwnd_p50, cwnd_p95] = nearest_ranks(cwnd, [0.5, 0.95]);
        self.cwnd_p50_pkts.push(cwnd_p50);
        self.cwnd_p95_pkts.push(cwnd_p95);
        self.inflight_pkts.push(inflight);
        let [srtt_p50, srtt_p95] = nearest_ranks(srtt, [0.5, 0.95]);
        self.srtt_p50_ms.push(srtt_p50);
        self.srtt_p95_ms.push(srtt_p95);
        self.retransmits.push(retransmits);
    }
}

/// The values at ranks ⌈q·n⌉ (1-based) of `values` sorted, one per q of `qs` (ascending);
/// NaN each when empty. Reorders `values`. It selects the middle rank first, then each side's
/// ranks within that side only: three percentiles cost about two passes over the values, not
/// three (the per-group percentiles are most of a sample's work with thousands of flows).
pub fn nearest_ranks<const N: usize>(values: &mut [f64], qs: [f64; N]) -> [f64; N] {
    let mut out = [f64::NAN; N];
    if !values.is_empty() {
        let n = values.len();
        let ranks = qs.map(|q| ((q * n as f64).ceil() as usize).clamp(1, n) - 1);
        debug_assert!(ranks.is_sorted(), "quantiles must ascend: {qs:?}");
        select_ranks(values, 0, &ranks, &mut out);
    }
    out
}

/// Puts in `out[i]` the value at 0-based rank `ranks[i]` (ascending, each at least `offset`)
/// of the whole sorted set, of which `values` holds the ranks from `offset` on.
fn select_ranks(values: &mut [f64], offset: usize, ranks: &[usize], out: &mut [f64]) {
    let Some(&rank) = ranks.get(ranks.len() / 2) else { return };
    let (left, value, right) = values.select_nth_unstable_by(rank - offset, f64::total_cmp);
    // Ranks equal to this one (small groups) take its value; the others lie on one side.
    let (below, from) = (ranks.partition_point(|&r| r < rank), ranks.partition_point(|&r| r <= rank));
    out[below..from].fill(*value);
    let (out_left, rest) = out.split_at_mut(below);
    select_ranks(left, offset, &ranks[..below], out_left);
    select_ranks(right, rank + 1, &ranks[from..], &mut rest[from - below..]);
}

/// Whether a flow counts as active at `now`: started and not complete.
pub fn is_active(start: SimTime, completed_at: Option<SimTime>, now: SimTime) -> bool {
    start <= now && completed_at.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_by_hand() {
        // 1..=20: p5 is rank 1, the median rank 10, p95 rank 19.
        let mut v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(nearest_ranks(&mut v, [0.05, 0.5, 0.95]), [1.0, 10.0, 19.0]);
        assert_eq!(nearest_ranks(&mut [7.0], [0.05, 0.5, 0.95]), [7.0; 3]);
        assert_eq!(nearest_ranks(&mut [9.0, 3.0], [0.05, 0.5, 0.95]), [3.0, 3.0, 9.0]);
        assert!(nearest_ranks(&mut [], [0.5, 0.95]).iter().all(|v| v.is_nan()));
    }

    #[test]
    fn nearest_ranks_match_a_sorted_copy_for_every_size_and_many_ties() {
        let mut rng = tcplab_core::SimRng::stream(3, "ranks");
        let quantiles = [0.05, 0.25, 0.5, 0.75, 0.95];
        for n in 1..300usize {
            let values: Vec<f64> = (0..n).map(|_| (rng.next_u64() % (n as u64 / 3 + 1)) as f64 - 5.0).collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let expected = quantiles.map(|q| sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1]);
            assert_eq!(nearest_ranks(&mut values.clone(), quantiles), expected, "n = {n}");
        }
    }

    #[test]
    fn a_group_row_sums_all_flows_and_ranks_the_active_ones() {
        let group = FlowGroup { cc: "cubic", stack: "linux", flows: vec![0, 1, 2] };
        let sample = |active, goodput_mbps, cwnd_pkts, srtt_ms| FlowSample {
            active,
            goodput_mbps,
            cwnd_pkts,
            inflight_pkts: cwnd_pkts,
            srtt_ms,
            retransmits: 1.0,
        };
        // Two active flows (10 and 30 Mbit/s) and a finished one whose last interval still
        // delivered 2 Mbit/s: sums count all three, percentiles and Jain the active two.
        let samples = [sample(true, 10.0, 20.0, Some(40.0)), sample(true, 30.0, 60.0, None), sample(false, 2.0, 5.0, Some(90.0))];
        let mut s = FlowGroupSeries::default();
        s.push_group(1.5, &group, samples.into_iter(), &mut GroupScratch::default());
        assert_eq!((s.t_s[0], s.cc[0], s.stack[0], s.flows_active[0]), (1.5, "cubic", "linux", 2));
        assert_eq!((s.goodput_mbps[0], s.inflight_pkts[0], s.retransmits[0]), (42.0, 85.0, 3.0));
        assert_eq!((s.goodput_p5_mbps[0], s.goodput_p50_mbps[0], s.goodput_p95_mbps[0]), (10.0, 10.0, 30.0));
        assert!((s.jain_index[0] - 1600.0 / (2.0 * 1000.0)).abs() < 1e-12); // (10+30)² / (2·(100+900))
        assert_eq!((s.cwnd_p50_pkts[0], s.cwnd_p95_pkts[0]), (20.0, 60.0));
        assert_eq!((s.srtt_p50_ms[0], s.srtt_p95_ms[0]), (40.0, 40.0)); // only the active flow with an RTT
        s.push_group(2.0, &group, [sample(false, 0.0, 1.0, None)].into_iter(), &mut GroupScratch::default());
        assert_eq!(s.flows_active[1], 0);
        assert!(s.goodput_p50_mbps[1].is_nan() && s.jain_index[1].is_nan() && s.srtt_p50_ms[1].is_nan());
    }
}
