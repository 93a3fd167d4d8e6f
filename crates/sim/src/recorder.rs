//! The recorder: time series sampled at `sample_interval` into preallocated columnar vectors (one
//! Vec per column) — flows and queues here, a radio cell's own series next to its adapter
//! (`crate::cell`) — per-ACK RTT samples when asked, and streaming RTT statistics per flow for the
//! summary (a log-bucket histogram: memory does not grow with simulated time). Each series
//! declares its output columns once, with their unit and meaning (`series!`): the bindings build
//! the frames from that, docs/outputs.md lists them, and column names carry their units
//! (docs/architecture.md, rules); what the series may take in memory is bounded before a run
//! starts (`crate::budget`).

use tcplab_core::{LinkId, NodeId, SimDuration, SimTime};

/// How a column is held and written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    F64,
    U32,
    /// A label (`&'static str`).
    Text,
    /// A `NodeId`, written as the node's name.
    Node,
    /// A `LinkId`, written as the link's name.
    Link,
}

impl ColumnKind {
    /// The output type: "f64", "u32" or "str" (labels and names).
    pub fn dtype(self) -> &'static str {
        match self {
            ColumnKind::F64 => "f64",
            ColumnKind::U32 => "u32",
            ColumnKind::Text | ColumnKind::Node | ColumnKind::Link => "str",
        }
    }
}

/// One output column of a series.
#[derive(Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    /// "" for dimensionless values, indices and text.
    pub unit: &'static str,
    /// The lines of the field's doc comment.
    pub doc: &'static [&'static str],
    pub kind: ColumnKind,
}

impl Column {
    /// The doc comment as one line.
    pub fn meaning(&self) -> String {
        self.doc.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" ")
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"name": self.name, "dtype": self.kind.dtype(), "unit": self.unit, "meaning": self.meaning()})
    }
}

/// The values of one column, moved out of its series.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    F64(Vec<f64>),
    U32(Vec<u32>),
    Text(Vec<&'static str>),
    Node(Vec<NodeId>),
    Link(Vec<LinkId>),
}

/// A series' columns in output order, each with its values.
pub type Columns = Vec<(&'static Column, ColumnData)>;

/// What a series is, without its values: its name (the frame's, and the file's stem), its
/// columns, and the bytes one row takes in memory (what the memory budget counts).
#[derive(Debug)]
pub struct SeriesSchema {
    pub name: &'static str,
    pub columns: &'static [Column],
    pub row_bytes: u64,
}

impl SeriesSchema {
    pub fn to_json(&self) -> serde_json::Value {
        self.columns.iter().map(Column::to_json).collect()
    }
}

/// Declares a series named `$series`: one `Vec` per column, `with_capacity(rows)`, its
/// `SCHEMA` (every field is a column: its doc comment is the meaning, `#[column(Kind, "unit")]`
/// its kind and unit) and `into_columns`, which hands the columns out in that order.
macro_rules! series {
    ($(#[$meta:meta])* pub struct $name:ident as $series:literal {
        $($(#[doc = $doc:literal])+ #[column($kind:ident, $unit:literal)] pub $field:ident: $ty:ty,)*
    }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default)]
        pub struct $name {
            $($(#[doc = $doc])+ pub $field: Vec<$ty>,)*
        }

        impl $name {
            pub const ROW_BYTES: u64 = 0 $(+ std::mem::size_of::<$ty>() as u64)*;

            pub const SCHEMA: $crate::recorder::SeriesSchema = $crate::recorder::SeriesSchema {
                name: $series,
                columns: &[$($crate::recorder::Column {
                    name: stringify!($field),
                    unit: $unit,
                    doc: &[$($doc),+],
                    kind: $crate::recorder::ColumnKind::$kind,
                },)*],
                row_bytes: Self::ROW_BYTES,
            };

            pub fn with_capacity(rows: usize) -> Self {
                $name { $($field: Vec::with_capacity(rows),)* }
            }

            /// The columns in output order, each with its values.
            pub fn into_columns(self) -> $crate::recorder::Columns {
                Self::SCHEMA.columns.iter().zip([$($crate::recorder::ColumnData::$kind(self.$field)),*]).collect()
            }
        }
    };
}
pub(crate) use series;

series! {
    /// Per-flow time series (flows.parquet).
    pub struct FlowSeries as "flows" {
        /// Simulated time of the sample.
        #[column(F64, "s")]
        pub t_s: f64,
        /// The flow's index in the scenario's `flows`.
        #[column(U32, "")]
        pub flow: u32,
        /// Congestion window.
        #[column(F64, "packets")]
        pub cwnd_pkts: f64,
        /// Slow-start threshold; NaN (null) while it is infinite.
        #[column(F64, "packets")]
        pub ssthresh_pkts: f64,
        /// Segments the sender counts in flight.
        #[column(F64, "packets")]
        pub inflight_pkts: f64,
        /// Smoothed RTT; NaN (null) before the first RTT sample.
        #[column(F64, "ms")]
        pub srtt_ms: f64,
        /// The sender's minimum-RTT estimate; NaN (null) before the first RTT sample.
        #[column(F64, "ms")]
        pub min_rtt_ms: f64,
        /// The sender's pacing rate; NaN (null) while no pacing rate is set.
        #[column(F64, "Mbit/s")]
        pub pacing_rate_mbps: f64,
        /// The latest delivery-rate sample; NaN (null) before the first valid one.
        #[column(F64, "Mbit/s")]
        pub delivery_rate_mbps: f64,
        /// 1 when that sample was application-limited (Linux `tcpi_delivery_rate_app_limited`:
        /// sent while the sender had less data than cwnd allowed, or BBR's PROBE_RTT), else 0.
        #[column(U32, "")]
        pub delivery_rate_app_limited: u32,
        /// Rate of the in-order bytes delivered to the receiving application during the interval.
        #[column(F64, "Mbit/s")]
        pub goodput_mbps: f64,
        /// Retransmitted segments during the interval.
        #[column(F64, "segments")]
        pub retransmits: f64,
        /// The algorithm's mode (BBR's `PROBE_BW`, Vegas' `hold`, SIAD's `fast_increase`), else
        /// the sender's `slow_start`, `cong_avoid`, `recovery`, `cwr` or `loss`.
        #[column(Text, "")]
        pub cc_state: &'static str,
        /// BBR's bandwidth estimate in payload bytes (Linux `bbr_get_info`: `tcp_bbr_info`'s
        /// `bbr_bw_lo`/`bbr_bw_hi`, as TCP_CC_INFO reads it); NaN (null) for algorithms without a
        /// BBR model (all but `bbr` and `bbr3`).
        #[column(F64, "Mbit/s")]
        pub bbr_bw_mbps: f64,
        /// BBR's windowed minimum RTT (`bbr_min_rtt`); NaN (null) for algorithms without a BBR
        /// model and before the first RTT sample.
        #[column(F64, "ms")]
        pub bbr_min_rtt_ms: f64,
        /// BBR's pacing gain (`bbr_pacing_gain` / 256); NaN (null) for algorithms without a BBR
        /// model.
        #[column(F64, "")]
        pub bbr_pacing_gain: f64,
        /// BBR's cwnd gain (`bbr_cwnd_gain` / 256); NaN (null) for algorithms without a BBR model.
        #[column(F64, "")]
        pub bbr_cwnd_gain: f64,
        /// BBR v1's long-term bandwidth while BBR paces at it, having found the path policed
        /// (`lt_use_bw`, `lt_bw`); NaN (null) otherwise and for algorithms without that model.
        #[column(F64, "Mbit/s")]
        pub bbr_lt_bw_mbps: f64,
    }
}

series! {
    /// Per-queue time series (links.parquet).
    pub struct LinkSeries as "links" {
        /// Simulated time of the sample.
        #[column(F64, "s")]
        pub t_s: f64,
        /// The link direction, by its name `from->to`.
        #[column(Link, "")]
        pub link: LinkId,
        /// Packets waiting in the queue (the one being transmitted not counted).
        #[column(F64, "packets")]
        pub backlog_pkts: f64,
        /// Bytes waiting in the queue.
        #[column(F64, "bytes")]
        pub backlog_bytes: f64,
        /// Queue drops during the interval, for any reason (the sum of the next five).
        #[column(F64, "packets")]
        pub drops: f64,
        /// Arrivals refused by a full queue during the interval.
        #[column(F64, "packets")]
        pub tail_drops: f64,
        /// Queued packets evicted to make room for arrivals (head drop) during the interval.
        #[column(F64, "packets")]
        pub head_drops: f64,
        /// Packets an AQM dropped by its own decision (RED's early drop, CoDel's and PIE's
        /// drops) during the interval.
        #[column(F64, "packets")]
        pub aqm_drops: f64,
        /// Packets dropped to bring the queue back under its limit (FQ-CoDel's batch drop from
        /// the fattest flow) during the interval.
        #[column(F64, "packets")]
        pub overlimit_drops: f64,
        /// Arrivals the direction's policer dropped during the interval.
        #[column(F64, "packets")]
        pub policer_drops: f64,
        /// Packets the queue CE-marked during the interval.
        #[column(F64, "packets")]
        pub ce_marks: f64,
        /// Mean time the packets that left the queue during the interval had waited in it
        /// (from enqueue to the start of their transmission); NaN (null) when none left.
        #[column(F64, "ms")]
        pub sojourn_ms: f64,
        /// The same for the packets that left a dual queue's L4S queue (DualPI2's L queue);
        /// NaN (null) when none left, and always for single-queue disciplines.
        #[column(F64, "ms")]
        pub l4s_sojourn_ms: f64,
    }
}

series! {
    /// Per-ACK RTT samples (rtt.parquet).
    pub struct RttSeries as "rtt" {
        /// Simulated time the ACK arrived.
        #[column(F64, "s")]
        pub t_s: f64,
        /// The flow's index in the scenario's `flows`.
        #[column(U32, "")]
        pub flow: u32,
        /// The RTT sample the ACK gave.
        #[column(F64, "ms")]
        pub rtt_ms: f64,
    }
}

impl RttSeries {
    /// Appends a sample unless `cap` are held (then returns false); the columns grow by
    /// doubling, but never past `cap`.
    pub fn push(&mut self, t_s: f64, flow: u32, rtt_ms: f64, cap: usize) -> bool {
        let len = self.t_s.len();
        if len >= cap {
            return false;
        }
        if len == self.t_s.capacity() {
            let more = len.max(1024).min(cap - len);
            self.t_s.reserve_exact(more);
            self.flow.reserve_exact(more);
            self.rtt_ms.reserve_exact(more);
        }
        self.t_s.push(t_s);
        self.flow.push(flow);
        self.rtt_ms.push(rtt_ms);
        true
    }
}

/// One flow's RTT record, updated on every ACK that measures an RTT: the samples' statistics
/// and the smoothed RTT's averages, in one 128-byte block (two cache lines, 64-byte aligned).
/// With thousands of flows these records are out of cache when an ACK comes; one block, and
/// histogram buckets touched once per `PENDING` samples, keep that to about one miss.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct FlowRtt {
    pub samples: RttStats,
    pub smoothed: SrttStats,
}

impl FlowRtt {
    /// An ACK at `now` measured `rtt_ms`; the sender's smoothed RTT is now `srtt`.
    pub fn add(&mut self, now: SimTime, rtt_ms: f64, srtt: Option<SimDuration>) {
        self.samples.add(rtt_ms);
        self.smoothed.update(now, srtt);
    }
}

/// The RTT percentiles a flow's summary reports, in its order: p50, p95, p99.
pub const SUMMARY_QUANTILES: [f64; 3] = [0.5, 0.95, 0.99];

/// Samples whose histogram bucket waits in `RttStats::pending`: consecutive RTTs of a flow
/// fall in the same few buckets, so a batch touches the histogram's memory once.
const PENDING: usize = 8;

/// Streaming RTT statistics: exact count/mean, percentiles from log-spaced buckets of
/// ratio 1.005 (a reported percentile is within ±0.25 % of the true sample value). Only the
/// buckets between the smallest and the largest sample are held: a flow whose RTT spans
/// 40 to 400 ms needs ~460 of them, and one without samples none. The latest samples' buckets
/// are added in batches (`PENDING`); the statistics read as if each had been added at once.
/// When its flow completes, no ACK brings it another sample, so the record keeps only what
/// the summary reads (`freeze`): a finished flow holds no histogram.
#[derive(Clone, Debug, Default)]
pub struct RttStats {
    count: u64,
    sum_ms: f64,
    histogram: Histogram,
    /// Index of the live histogram's first bucket among all `BUCKETS`.
    first: u16,
    /// The buckets of the samples not yet in the histogram, oldest first.
    pending_len: u8,
    pending: [u16; PENDING],
}

#[derive(Clone, Debug)]
enum Histogram {
    /// Samples per bucket, from bucket `RttStats::first` on.
    Live(Vec<u64>),
    /// The summary's percentiles (`SUMMARY_QUANTILES`), taken when the flow completed.
    Frozen(Box<[Option<f64>; 3]>),
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::Live(Vec::new())
    }
}

const BUCKET_RATIO_LN: f64 = 0.004_987_541_511_038_968; // ln(1.005)
/// Bucket 0 holds samples up to 1 µs; the last covers ≥ ~1000 s.
const BUCKETS: usize = 4_200;

impl RttStats {
    pub fn add(&mut self, rtt_ms: f64) {
        debug_assert!(matches!(self.histogram, Histogram::Live(_)), "an RTT sample after the flow completed");
        self.count += 1;
        self.sum_ms += rtt_ms;
        let us = (rtt_ms * 1e3).max(1.0);
        let idx = ((us.ln() / BUCKET_RATIO_LN) as usize).min(BUCKETS - 1);
        self.pending[self.pending_len as usize] = idx as u16;
        self.pending_len += 1;
        if self.pending_len as usize == PENDING {
            self.flush();
        }
    }

    /// Adds the pending samples to the histogram, in the order they came.
    fn flush(&mut self) {
        for k in 0..std::mem::take(&mut self.pending_len) as usize {
            self.count_in_bucket(self.pending[k] as usize);
        }
    }

    fn count_in_bucket(&mut self, idx: usize) {
        let Histogram::Live(buckets) = &mut self.histogram else { return };
        let mut first = self.first as usize;
        if buckets.is_empty() {
            first = idx;
        } else if idx < first {
            // Grow downwards by at least the held span, so that a falling RTT moves the
            // buckets a few times, not once per new bucket.
            let grow = (first - idx).max(buckets.len()).min(first);
            buckets.splice(0..0, std::iter::repeat_n(0, grow));
            first -= grow;
        }
        self.first = first as u16;
        let i = idx - first;
        if i >= buckets.len() {
            buckets.resize(i + 1, 0);
        }
        buckets[i] += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ms / self.count as f64)
    }

    /// Bytes of the histogram's allocation.
    pub fn heap_bytes(&self) -> usize {
        match &self.histogram {
            Histogram::Live(buckets) => buckets.capacity() * std::mem::size_of::<u64>(),
            Histogram::Frozen(_) => std::mem::size_of::<[Option<f64>; 3]>(),
        }
    }

    /// The summary's percentiles (`SUMMARY_QUANTILES`); pending samples are flushed into one
    /// copy for all three.
    pub fn summary_quantiles_ms(&self) -> [Option<f64>; 3] {
        match &self.histogram {
            Histogram::Live(_) if self.pending_len > 0 => {
                let mut all = self.clone();
                all.flush();
                all.summary_quantiles_ms()
            }
            Histogram::Live(_) => SUMMARY_QUANTILES.map(|q| self.quantile_ms(q)),
            Histogram::Frozen(quantiles) => **quantiles,
        }
    }

    /// Keeps the summary's percentiles and frees the histogram: for a flow that completed,
    /// which measures no more RTTs (its sender has nothing left to be acknowledged).
    pub fn freeze(&mut self) {
        let quantiles = Box::new(self.summary_quantiles_ms());
        (self.histogram, self.pending_len) = (Histogram::Frozen(quantiles), 0);
    }

    /// The `q`-quantile (0 < q ≤ 1) of a live histogram, as the geometric middle of its bucket.
    fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.pending_len > 0 {
            let mut all = self.clone();
            all.flush();
            return all.quantile_ms(q);
        }
        let Histogram::Live(buckets) = &self.histogram else { unreachable!("only a live histogram is asked for any quantile") };
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some((((self.first as usize + i) as f64 + 0.5) * BUCKET_RATIO_LN).exp() * 1e-3);
            }
        }
        unreachable!("rank ≤ count")
    }
}

/// A flow's smoothed RTT over the run, as the studies average it: over time (each value
/// weighted by how long it held, from the first RTT measurement to the flow's end) and per
/// update (the mean of the values after each ACK that measured an RTT; ns-3's `RTT` trace
/// source fires on such updates).
#[derive(Clone, Copy, Debug, Default)]
pub struct SrttStats {
    /// When the first value was set, and when the current one was (valid once `updates > 0`:
    /// the first value always counts as a change).
    since: SimTime,
    last_at: SimTime,
    /// The current value (ns).
    last_ns: u64,
    /// Changes of the value, and Σ of the values they set (ns).
    updates: u64,
    /// ∫ srtt dt up to `last_at` (ns²).
    integral: u128,
    sum_ns: u128,
}

impl SrttStats {
    /// The sender's smoothed RTT after an ACK that measured an RTT at `now`; an update that
    /// leaves it unchanged does not count as a value (ns-3's `TracedValue` fires its trace only
    /// when the value changes, and the studies averaged what the trace reported).
    pub fn update(&mut self, now: SimTime, srtt: Option<SimDuration>) {
        let Some(srtt) = srtt else { return };
        let ns = srtt.as_nanos();
        if self.updates == 0 {
            self.since = now;
        } else {
            self.integral += u128::from(self.last_ns) * u128::from(now.saturating_since(self.last_at).as_nanos());
        }
        if self.updates == 0 || self.last_ns != ns {
            self.updates += 1;
            self.sum_ns += u128::from(ns);
        }
        (self.last_at, self.last_ns) = (now, ns);
    }

    /// The time-weighted mean (ms) from the first value to `end`; None without a value.
    pub fn time_mean_ms(&self, end: SimTime) -> Option<f64> {
        if self.updates == 0 {
            return None;
        }
        let span = end.saturating_since(self.since).as_nanos();
        if span == 0 {
            return Some(self.last_ns as f64 / 1e6);
        }
        let integral = self.integral + u128::from(self.last_ns) * u128::from(end.saturating_since(self.last_at).as_nanos());
        Some(integral as f64 / span as f64 / 1e6)
    }

    /// The mean (ms) of the values the smoothed RTT took, one per change; None without one.
    pub fn update_mean_ms(&self) -> Option<f64> {
        (self.updates > 0).then(|| self.sum_ns as f64 / self.updates as f64 / 1e6)
    }
}

/// Per id `0..n`, the mean of the `values` whose `ids` row is that id and that `keep`
/// accepts (None without any): one pass over the rows, whatever the number of ids.
pub(crate) fn means_by_id(ids: impl IntoIterator<Item = u32>, values: &[f64], n: usize, keep: impl Fn(f64) -> bool) -> Vec<Option<f64>> {
    let mut sums = vec![(0u64, 0.0); n];
    for (id, &v) in ids.into_iter().zip(values) {
        if keep(v) {
            let (count, sum) = &mut sums[id as usize];
            (*count, *sum) = (*count + 1, *sum + v);
        }
    }
    sums.into_iter().map(|(count, sum)| (count > 0).then(|| sum / count as f64)).collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn smoothed_rtt_is_averaged_over_time_and_per_change() {
        // 40 ms from t = 1 s, 100 ms from 2 s (again at 2.2 s: no change), 50 ms from 2.5 s, run
        // ends at 4 s: over time (40·1 + 100·0.5 + 50·1.5) / 3 = 165 / 3 = 55 ms; per change
        // (40 + 100 + 50) / 3, the repeated 100 not counted.
        let mut s = SrttStats::default();
        assert_eq!((s.time_mean_ms(SimTime(4_000_000_000)), s.update_mean_ms()), (None, None));
        s.update(SimTime(500_000_000), None); // no measurement yet: ignored
        for (at_ms, srtt_ms) in [(1000, 40), (2000, 100), (2200, 100), (2500, 50)] {
            s.update(SimTime(at_ms * 1_000_000), Some(SimDuration::from_millis(srtt_ms)));
        }
        assert!((s.time_mean_ms(SimTime(4_000_000_000)).unwrap() - 55.0).abs() < 1e-9);
        assert!((s.update_mean_ms().unwrap() - 190.0 / 3.0).abs() < 1e-9);
    }
    use super::*;

    /// The live histogram's buckets.
    fn held(s: &RttStats) -> &[u64] {
        match &s.histogram {
            Histogram::Live(buckets) => buckets,
            Histogram::Frozen(_) => panic!("frozen"),
        }
    }

    #[test]
    fn quantiles_are_within_bucket_precision() {
        let mut s = RttStats::default();
        for i in 1..=1000 {
            s.add(i as f64 / 10.0); // 0.1 .. 100 ms
        }
        assert_eq!(s.count(), 1000);
        assert!((s.mean_ms().unwrap() - 50.05).abs() < 1e-9);
        for (q, exact) in [(0.5, 50.0), (0.95, 95.0), (0.99, 99.0), (1.0, 100.0)] {
            let got = s.quantile_ms(q).unwrap();
            assert!((got / exact - 1.0).abs() < 0.0026, "q{q}: {got} vs {exact}");
        }
        assert_eq!(RttStats::default().quantile_ms(0.5), None);
    }

    #[test]
    fn buckets_span_only_the_samples_seen() {
        let mut s = RttStats::default();
        for ms in [40.0, 400.0, 100.0, 30.0, 0.0005, 2e6] {
            s.add(ms);
        }
        s.flush();
        // Below 1 µs and above ~1000 s land in the end buckets; the others in their own.
        assert_eq!(held(&s).len(), BUCKETS);
        let q = |q: f64| s.quantile_ms(q).unwrap();
        assert!(q(1.0 / 6.0) < 0.0011 && (q(2.0 / 6.0) / 30.0 - 1.0).abs() < 0.0026 && (q(0.5) / 40.0 - 1.0).abs() < 0.0026);
        assert!((q(4.0 / 6.0) / 100.0 - 1.0).abs() < 0.0026 && (q(5.0 / 6.0) / 400.0 - 1.0).abs() < 0.0026 && q(1.0) > 1e6);
        let mut narrow = RttStats::default();
        for i in 0..1000 {
            narrow.add(40.0 + (i % 360) as f64);
        }
        assert!(held(&narrow).len() < 500, "{}", held(&narrow).len());
    }

    #[test]
    fn samples_waiting_for_their_batch_count_in_the_quantiles() {
        // 11 samples: the first 8 are in the histogram, the last 3 (the largest) wait.
        let mut s = RttStats::default();
        for ms in 1..=11 {
            s.add(ms as f64);
        }
        assert_eq!((s.pending_len, held(&s).iter().sum::<u64>()), (3, 8));
        assert!((s.quantile_ms(1.0).unwrap() / 11.0 - 1.0).abs() < 0.0026);
        assert!((s.quantile_ms(10.0 / 11.0).unwrap() / 10.0 - 1.0).abs() < 0.0026);
        assert!((s.quantile_ms(0.5).unwrap() / 6.0 - 1.0).abs() < 0.0026);
    }

    #[test]
    fn a_frozen_record_keeps_the_summary_and_frees_its_histogram() {
        let mut s = RttStats::default();
        for i in 1..=301 {
            s.add(f64::from(i % 97) + 0.5); // 0.5 .. 96.5 ms, the last 5 pending
        }
        let (summary, mean) = (s.summary_quantiles_ms(), s.mean_ms());
        assert!(held(&s).len() > 800 && summary.iter().all(Option::is_some));
        s.freeze();
        assert!(matches!(s.histogram, Histogram::Frozen(_)));
        assert_eq!((s.summary_quantiles_ms(), s.mean_ms(), s.count()), (summary, mean, 301));
        let mut none = RttStats::default();
        none.freeze();
        assert_eq!((none.summary_quantiles_ms(), none.mean_ms()), ([None; 3], None));
    }

    #[test]
    fn a_flows_rtt_record_is_two_aligned_cache_lines() {
        assert_eq!((std::mem::size_of::<FlowRtt>(), std::mem::align_of::<FlowRtt>()), (128, 64));
    }

    #[test]
    fn rtt_samples_stop_at_the_cap_without_growing_past_it() {
        let mut s = RttSeries::default();
        let cap = 3000;
        let taken = (0..5000).filter(|&i| s.push(i as f64, 0, 1.0, cap)).count();
        assert_eq!(taken, cap);
        assert_eq!((s.t_s.len(), s.flow.len(), s.rtt_ms.len()), (cap, cap, cap));
        assert!(s.t_s.capacity() <= cap && s.rtt_ms.capacity() <= cap);
    }

    #[test]
    fn columns_are_handed_out_in_schema_order_as_their_kind() {
        let mut s = LinkSeries::with_capacity(2);
        s.t_s.extend([0.5, 1.0]);
        s.link.extend([3, 4]);
        for col in [
            &mut s.backlog_pkts,
            &mut s.backlog_bytes,
            &mut s.drops,
            &mut s.tail_drops,
            &mut s.head_drops,
            &mut s.aqm_drops,
            &mut s.overlimit_drops,
            &mut s.policer_drops,
            &mut s.ce_marks,
            &mut s.sojourn_ms,
            &mut s.l4s_sojourn_ms,
        ] {
            col.extend([1.0, 2.0]);
        }
        let columns = s.into_columns();
        let names: Vec<&str> = columns.iter().map(|(c, _)| c.name).collect();
        assert_eq!(
            names,
            [
                "t_s",
                "link",
                "backlog_pkts",
                "backlog_bytes",
                "drops",
                "tail_drops",
                "head_drops",
                "aqm_drops",
                "overlimit_drops",
                "policer_drops",
                "ce_marks",
                "sojourn_ms",
                "l4s_sojourn_ms"
            ]
        );
        for (column, data) in &columns {
            let kind = match data {
                ColumnData::F64(_) => ColumnKind::F64,
                ColumnData::U32(_) => ColumnKind::U32,
                ColumnData::Text(_) => ColumnKind::Text,
                ColumnData::Node(_) => ColumnKind::Node,
                ColumnData::Link(_) => ColumnKind::Link,
            };
            assert_eq!(kind, column.kind, "{}", column.name);
        }
        assert_eq!((&columns[0].1, &columns[1].1), (&ColumnData::F64(vec![0.5, 1.0]), &ColumnData::Link(vec![3, 4])));
    }

    #[test]
    fn a_column_means_its_doc_comment_on_one_line() {
        let cc_state = FlowSeries::SCHEMA.columns.iter().find(|c| c.name == "cc_state").unwrap();
        assert_eq!(cc_state.doc.len(), 2);
        assert!(cc_state.meaning().starts_with("The algorithm's mode (BBR's `PROBE_BW`"));
        assert!(cc_state.meaning().contains("`fast_increase`), else the sender's") && !cc_state.meaning().contains("  "));
        let json = FlowSeries::SCHEMA.columns[5].to_json();
        assert_eq!(
            json,
            serde_json::json!({"name": "srtt_ms", "dtype": "f64", "unit": "ms", "meaning": "Smoothed RTT; NaN (null) before the first RTT sample."})
        );
        assert_eq!(LinkSeries::SCHEMA.columns[1].kind.dtype(), "str");
    }

    #[test]
    fn row_bytes_count_every_column() {
        assert_eq!(RttSeries::ROW_BYTES, 8 + 4 + 8);
        assert_eq!(LinkSeries::ROW_BYTES, 12 * 8 + 4);
        assert_eq!(FlowSeries::ROW_BYTES, 15 * 8 + 2 * 4 + std::mem::size_of::<&str>() as u64);
    }
}
