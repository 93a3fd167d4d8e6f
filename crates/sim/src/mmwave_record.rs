//! What an mmWave cell records (`crate::cell::RecordedCell`): per UE and sample its radio state
//! (radio.parquet), and per UE over the run its mean SINR, line-of-sight share and capacity with
//! its drop and HARQ counters (summary.json `radio`).

use crate::cell::RecordedCell;
use crate::recorder::{means_by_id, series, Columns, SeriesSchema};
use serde::Serialize;
use tcplab_core::{NodeId, SimDuration, SimTime};
use tcplab_net::mmwave::cell::{MmWaveCell, RadioSnapshot};
use tcplab_net::radio::RadioCell;
use tcplab_net::Node;

series! {
    /// Per-UE radio time series of an mmWave cell (radio.parquet). The unprefixed columns are
    /// the downlink, `ul_` the uplink.
    pub struct RadioSeries as "radio" {
        /// Simulated time of the sample.
        #[column(F64, "s")]
        pub t_s: f64,
        /// The UE, by its node's name.
        #[column(Node, "")]
        pub ue: NodeId,
        /// Wideband SINR of the latest channel sample; NaN (null) before the first.
        #[column(F64, "dB")]
        pub sinr_db: f64,
        /// 1 in line of sight, 0 blocked.
        #[column(F64, "")]
        pub los: f64,
        /// The CQI the scheduler uses (0: the downlink is stalled).
        #[column(F64, "")]
        pub cqi: f64,
        /// The MCS index the scheduler gives at that CQI; NaN (null) while CQI 0 stalls it.
        #[column(F64, "")]
        pub mcs: f64,
        /// PHY rate of all data symbols of a subframe at that MCS.
        #[column(F64, "Mbit/s")]
        pub capacity_mbps: f64,
        /// RLC bytes not yet delivered for the first time (new and retransmission queues).
        #[column(F64, "bytes")]
        pub rlc_backlog_bytes: f64,
        /// IP packets tail-dropped by RLC during the interval.
        #[column(F64, "packets")]
        pub rlc_drops: f64,
        /// HARQ retransmissions put on air during the interval.
        #[column(F64, "transport blocks")]
        pub harq_retx: f64,
        /// The MCS index new uplink transport blocks would get; NaN (null) while stalled.
        #[column(F64, "")]
        pub ul_mcs: f64,
        /// Uplink PHY rate of all data symbols of a subframe at that MCS.
        #[column(F64, "Mbit/s")]
        pub ul_capacity_mbps: f64,
        /// Uplink RLC bytes not yet delivered for the first time.
        #[column(F64, "bytes")]
        pub ul_rlc_backlog_bytes: f64,
        /// IP packets tail-dropped by the uplink RLC during the interval.
        #[column(F64, "packets")]
        pub ul_rlc_drops: f64,
        /// Uplink HARQ retransmissions put on air during the interval.
        #[column(F64, "transport blocks")]
        pub ul_harq_retx: f64,
    }
}

/// The radio of one UE over the run (summary.json `radio`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RadioSummary {
    pub ue: String,
    /// Means over the samples of the radio series.
    pub sinr_mean_db: Option<f64>,
    pub los_fraction: f64,
    pub capacity_mean_mbps: f64,
    /// IP packets tail-dropped by RLC, and HARQ retransmissions, per direction.
    pub rlc_drops: u64,
    pub harq_retx: u64,
    pub ul_rlc_drops: u64,
    pub ul_harq_retx: u64,
    /// Share of the data symbols of the run's subframes that carried the UE's TBs, per direction
    /// (the radio's utilization by this UE).
    pub utilization: f64,
    pub ul_utilization: f64,
}

/// An mmWave cell with what it records.
pub struct RecordedMmwave {
    cell: MmWaveCell,
    /// Node of each UE, in UE order.
    ue_nodes: Vec<NodeId>,
    series: RadioSeries,
    /// Each UE's cumulative counters at the previous sample (`counters`).
    before: Vec<[u64; 4]>,
}

/// DL RLC drops, DL HARQ retransmissions, UL RLC drops, UL HARQ retransmissions so far.
fn counters(s: &RadioSnapshot) -> [u64; 4] {
    [s.rlc_drops, s.harq_retx, s.ul_rlc_drops, s.ul_harq_retx]
}

impl RecordedMmwave {
    pub fn new(cell: MmWaveCell, ue_nodes: Vec<NodeId>) -> Self {
        let before = vec![[0; 4]; ue_nodes.len()];
        RecordedMmwave { cell, ue_nodes, series: RadioSeries::default(), before }
    }
}

impl RecordedCell for RecordedMmwave {
    fn radio(&self) -> &dyn RadioCell {
        &self.cell
    }

    fn radio_mut(&mut self) -> &mut dyn RadioCell {
        &mut self.cell
    }

    fn series(&self) -> &'static SeriesSchema {
        &RadioSeries::SCHEMA
    }

    fn rows_per_sample(&self) -> usize {
        self.ue_nodes.len()
    }

    fn row_noun(&self) -> &'static str {
        "UE"
    }

    fn reserve(&mut self, samples: usize) {
        self.series = RadioSeries::with_capacity(samples * self.ue_nodes.len());
    }

    fn sample(&mut self, now: SimTime, _interval: SimDuration) {
        let t = now.as_secs_f64();
        let nan_if_none = |v: Option<u8>| v.map_or(f64::NAN, f64::from);
        let s = &mut self.series;
        for (ue, (&node, before)) in self.ue_nodes.iter().zip(&mut self.before).enumerate() {
            let snap = self.cell.snapshot(ue);
            let now = counters(&snap);
            let delta = |k: usize| (now[k] - before[k]) as f64;
            s.t_s.push(t);
            s.ue.push(node);
            s.sinr_db.push(snap.sinr_db);
            s.los.push(if snap.los { 1.0 } else { 0.0 });
            s.cqi.push(f64::from(snap.cqi));
            s.mcs.push(nan_if_none(snap.mcs));
            s.capacity_mbps.push(snap.capacity_mbps);
            s.rlc_backlog_bytes.push(snap.rlc_backlog_bytes as f64);
            s.rlc_drops.push(delta(0));
            s.harq_retx.push(delta(1));
            s.ul_mcs.push(nan_if_none(snap.ul_mcs));
            s.ul_capacity_mbps.push(snap.ul_capacity_mbps);
            s.ul_rlc_backlog_bytes.push(snap.ul_rlc_backlog_bytes as f64);
            s.ul_rlc_drops.push(delta(2));
            s.ul_harq_retx.push(delta(3));
            *before = now;
        }
    }

    fn take_columns(&mut self) -> Columns {
        std::mem::take(&mut self.series).into_columns()
    }

    fn summary(&self, nodes: &[Node], _end: SimTime) -> serde_json::Value {
        let (rs, ues) = (&self.series, self.ue_nodes.len());
        // Each sample has one row per UE, in UE order.
        let means = |col: &[f64], keep: fn(f64) -> bool| means_by_id((0..ues as u32).cycle(), col, ues, keep);
        let (sinr_means, los_means, capacity_means) =
            (means(&rs.sinr_db, f64::is_finite), means(&rs.los, |_| true), means(&rs.capacity_mbps, |_| true));
        let ues: Vec<RadioSummary> = self
            .ue_nodes
            .iter()
            .enumerate()
            .map(|(ue, &node)| {
                let snap = self.cell.snapshot(ue);
                RadioSummary {
                    ue: nodes[node as usize].name.clone(),
                    sinr_mean_db: sinr_means[ue],
                    los_fraction: los_means[ue].unwrap_or(0.0),
                    capacity_mean_mbps: capacity_means[ue].unwrap_or(0.0),
                    rlc_drops: snap.rlc_drops,
                    harq_retx: snap.harq_retx,
                    ul_rlc_drops: snap.ul_rlc_drops,
                    ul_harq_retx: snap.ul_harq_retx,
                    utilization: snap.air_share,
                    ul_utilization: snap.ul_air_share,
                }
            })
            .collect();
        serde_json::to_value(ues).expect("radio summaries serialize")
    }
}
