//! The recorder: time series sampled at `sample_interval` into preallocated columnar vectors (one
//! Vec per column) — flows, queues and, with an mmWave cell, the radio state of each UE, with a
//! WiFi BSS the MAC counters of each device — per-ACK RTT samples when asked, and streaming RTT
//! statistics per flow for the summary (a log-bucket histogram: memory does not grow with simulated
//! time). Column names carry their units (docs/architecture.md, rules); what the series may take in
//! memory is bounded before a run starts (`crate::budget`).

use tcplab_net::mmwave::cell::RadioSnapshot;

/// Declares a series: one `Vec` per column, `with_capacity(rows)`, and the bytes one row
/// takes in memory (what the memory budget counts, `crate::budget`).
macro_rules! series {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: Vec<$ty>,)*
        }

        impl $name {
            pub const ROW_BYTES: u64 = 0 $(+ std::mem::size_of::<$ty>() as u64)*;

            pub fn with_capacity(rows: usize) -> Self {
                $name { $($field: Vec::with_capacity(rows),)* }
            }
        }
    };
}

series! {
    /// Per-flow time series (flows.parquet).
    pub struct FlowSeries {
        pub t_s: f64,
        pub flow: u32,
        pub cwnd_pkts: f64,
        /// NaN while ssthresh is infinite.
        pub ssthresh_pkts: f64,
        pub inflight_pkts: f64,
        /// NaN before the first RTT sample.
        pub srtt_ms: f64,
        pub min_rtt_ms: f64,
        /// NaN while no pacing rate is set.
        pub pacing_rate_mbps: f64,
        /// NaN before the first valid delivery-rate sample.
        pub delivery_rate_mbps: f64,
        /// In-order bytes delivered to the receiving application during the interval.
        pub goodput_mbps: f64,
        /// Retransmitted segments during the interval.
        pub retransmits: f64,
        pub cc_state: &'static str,
    }
}

series! {
    /// Per-queue time series (links.parquet).
    pub struct LinkSeries {
        pub t_s: f64,
        /// Index into the run's link names.
        pub link: u32,
        pub backlog_pkts: f64,
        pub backlog_bytes: f64,
        /// Queue drops during the interval.
        pub drops: f64,
        /// Packets the queue CE-marked during the interval.
        pub ce_marks: f64,
    }
}

series! {
    /// Per-UE radio time series of an mmWave cell (radio.parquet). The unprefixed columns are
    /// the downlink (the column set), `ul_` the uplink; drops and HARQ retransmissions
    /// count during the interval.
    pub struct RadioSeries {
        pub t_s: f64,
        /// UE index (radio.parquet has the UE names).
        pub ue: u32,
        /// Wideband SINR of the latest channel sample, dB.
        pub sinr_db: f64,
        /// 1 in line of sight, 0 blocked.
        pub los: f64,
        /// The CQI the scheduler uses and the MCS it gives (NaN: CQI 0, downlink stalled).
        pub cqi: f64,
        pub mcs: f64,
        /// PHY rate of all data symbols at that MCS.
        pub capacity_mbps: f64,
        pub rlc_backlog_bytes: f64,
        pub rlc_drops: f64,
        pub harq_retx: f64,
        pub ul_mcs: f64,
        pub ul_capacity_mbps: f64,
        pub ul_rlc_backlog_bytes: f64,
        pub ul_rlc_drops: f64,
        pub ul_harq_retx: f64,
    }
}

impl RadioSeries {
    /// Appends one row; `counters` are the cumulative [DL drops, DL HARQ retx, UL drops,
    /// UL HARQ retx] now and `before` at the previous sample.
    pub fn push(&mut self, t_s: f64, ue: u32, snap: &RadioSnapshot, counters: [u64; 4], before: [u64; 4]) {
        let nan_if_none = |v: Option<u8>| v.map_or(f64::NAN, f64::from);
        let delta = |k: usize| (counters[k] - before[k]) as f64;
        self.t_s.push(t_s);
        self.ue.push(ue);
        self.sinr_db.push(snap.sinr_db);
        self.los.push(if snap.los { 1.0 } else { 0.0 });
        self.cqi.push(f64::from(snap.cqi));
        self.mcs.push(nan_if_none(snap.mcs));
        self.capacity_mbps.push(snap.capacity_mbps);
        self.rlc_backlog_bytes.push(snap.rlc_backlog_bytes as f64);
        self.rlc_drops.push(delta(0));
        self.harq_retx.push(delta(1));
        self.ul_mcs.push(nan_if_none(snap.ul_mcs));
        self.ul_capacity_mbps.push(snap.ul_capacity_mbps);
        self.ul_rlc_backlog_bytes.push(snap.ul_rlc_backlog_bytes as f64);
        self.ul_rlc_drops.push(delta(2));
        self.ul_harq_retx.push(delta(3));
    }

    /// (name, column) of every f64 column, in output order.
    pub fn f64_columns(&self) -> [(&'static str, &[f64]); 13] {
        [
            ("sinr_db", &self.sinr_db),
            ("los", &self.los),
            ("cqi", &self.cqi),
            ("mcs", &self.mcs),
            ("capacity_mbps", &self.capacity_mbps),
            ("rlc_backlog_bytes", &self.rlc_backlog_bytes),
            ("rlc_drops", &self.rlc_drops),
            ("harq_retx", &self.harq_retx),
            ("ul_mcs", &self.ul_mcs),
            ("ul_capacity_mbps", &self.ul_capacity_mbps),
            ("ul_rlc_backlog_bytes", &self.ul_rlc_backlog_bytes),
            ("ul_rlc_drops", &self.ul_rlc_drops),
            ("ul_harq_retx", &self.ul_harq_retx),
        ]
    }
}

series! {
    /// Per-device series of a WiFi BSS (wifi.parquet): the access point (device 0) and each
    /// station; counts are during the interval, `airtime_busy` is the fraction of the interval
    /// the medium was busy (the same on every row of a BSS).
    pub struct WifiSeries {
        pub t_s: f64,
        /// 0 for the access point, i + 1 for station i (wifi.parquet has the node names).
        pub device: u32,
        pub phy_rate_mbps: f64,
        /// PPDUs this device sent that collided.
        pub collisions: f64,
        /// MPDU retransmissions this device sent.
        pub retries: f64,
        /// Packets this device dropped (retry limit, queue lifetime, full queue).
        pub mac_drops: f64,
        /// MPDUs addressed to this device lost to bit errors.
        pub phy_drops: f64,
        pub airtime_busy: f64,
    }
}

impl WifiSeries {
    /// Appends one row; `counters` are the device's cumulative [collisions, retries,
    /// MAC drops, PHY drops] now and `before` at the previous sample.
    pub fn push(&mut self, t_s: f64, device: u32, phy_rate_mbps: f64, counters: [u64; 4], before: [u64; 4], airtime_busy: f64) {
        let delta = |k: usize| (counters[k] - before[k]) as f64;
        self.t_s.push(t_s);
        self.device.push(device);
        self.phy_rate_mbps.push(phy_rate_mbps);
        self.collisions.push(delta(0));
        self.retries.push(delta(1));
        self.mac_drops.push(delta(2));
        self.phy_drops.push(delta(3));
        self.airtime_busy.push(airtime_busy);
    }

    /// (name, column) of every f64 column, in output order.
    pub fn f64_columns(&self) -> [(&'static str, &[f64]); 6] {
        [
            ("phy_rate_mbps", &self.phy_rate_mbps),
            ("collisions", &self.collisions),
            ("retries", &self.retries),
            ("mac_drops", &self.mac_drops),
            ("phy_drops", &self.phy_drops),
            ("airtime_busy", &self.airtime_busy),
        ]
    }
}

series! {
    /// Per-ACK RTT samples (rtt.parquet).
    pub struct RttSeries {
        pub t_s: f64,
        pub flow: u32,
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

/// Streaming RTT statistics: exact count/mean, percentiles from log-spaced buckets of
/// ratio 1.005 (a reported percentile is within ±0.25 % of the true sample value). Only the
/// buckets between the smallest and the largest sample are held: a flow whose RTT spans
/// 40 to 400 ms needs ~460 of them, and one without samples none.
#[derive(Clone, Debug, Default)]
pub struct RttStats {
    count: u64,
    sum_ms: f64,
    /// Index of `buckets[0]` among all `BUCKETS`.
    first: usize,
    buckets: Vec<u64>,
}

const BUCKET_RATIO_LN: f64 = 0.004_987_541_511_038_968; // ln(1.005)
/// Bucket 0 holds samples up to 1 µs; the last covers ≥ ~1000 s.
const BUCKETS: usize = 4_200;

impl RttStats {
    pub fn add(&mut self, rtt_ms: f64) {
        self.count += 1;
        self.sum_ms += rtt_ms;
        let us = (rtt_ms * 1e3).max(1.0);
        let idx = ((us.ln() / BUCKET_RATIO_LN) as usize).min(BUCKETS - 1);
        if self.buckets.is_empty() {
            self.first = idx;
        } else if idx < self.first {
            // Grow downwards by at least the held span, so that a falling RTT moves the
            // buckets a few times, not once per new bucket.
            let grow = (self.first - idx).max(self.buckets.len()).min(self.first);
            self.buckets.splice(0..0, std::iter::repeat_n(0, grow));
            self.first -= grow;
        }
        let i = idx - self.first;
        if i >= self.buckets.len() {
            self.buckets.resize(i + 1, 0);
        }
        self.buckets[i] += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ms / self.count as f64)
    }

    /// The `q`-quantile (0 < q ≤ 1), as the geometric middle of its bucket.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some((((self.first + i) as f64 + 0.5) * BUCKET_RATIO_LN).exp() * 1e-3);
            }
        }
        unreachable!("rank ≤ count")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // Below 1 µs and above ~1000 s land in the end buckets; the others in their own.
        assert_eq!(s.buckets.len(), BUCKETS);
        let q = |q: f64| s.quantile_ms(q).unwrap();
        assert!(q(1.0 / 6.0) < 0.0011 && (q(2.0 / 6.0) / 30.0 - 1.0).abs() < 0.0026 && (q(0.5) / 40.0 - 1.0).abs() < 0.0026);
        assert!((q(4.0 / 6.0) / 100.0 - 1.0).abs() < 0.0026 && (q(5.0 / 6.0) / 400.0 - 1.0).abs() < 0.0026 && q(1.0) > 1e6);
        let mut narrow = RttStats::default();
        for i in 0..1000 {
            narrow.add(40.0 + (i % 360) as f64);
        }
        assert!(narrow.buckets.len() < 500, "{}", narrow.buckets.len());
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
    fn row_bytes_count_every_column() {
        assert_eq!(RttSeries::ROW_BYTES, 8 + 4 + 8);
        assert_eq!(LinkSeries::ROW_BYTES, 5 * 8 + 4);
        assert_eq!(FlowSeries::ROW_BYTES, 10 * 8 + 4 + std::mem::size_of::<&str>() as u64);
    }
}
