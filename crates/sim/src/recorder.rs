//! The recorder: time series sampled at `sample_interval` into preallocated columnar
//! vectors (one Vec per column) — flows, queues and, with an mmWave cell, the radio state
//! of each UE, with a WiFi BSS the MAC counters of each device — per-ACK RTT samples when asked, and streaming RTT
//! statistics per flow for the summary (a log-bucket histogram: memory does not grow with
//! simulated time). Column names carry their units (design.md §4).

use tcplab_net::mmwave::cell::RadioSnapshot;

/// Per-flow time series (flows.parquet).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub t_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd_pkts: Vec<f64>,
    /// NaN while ssthresh is infinite.
    pub ssthresh_pkts: Vec<f64>,
    pub inflight_pkts: Vec<f64>,
    /// NaN before the first RTT sample.
    pub srtt_ms: Vec<f64>,
    pub min_rtt_ms: Vec<f64>,
    /// NaN while no pacing rate is set.
    pub pacing_rate_mbps: Vec<f64>,
    /// NaN before the first valid delivery-rate sample.
    pub delivery_rate_mbps: Vec<f64>,
    /// In-order bytes delivered to the receiving application during the interval.
    pub goodput_mbps: Vec<f64>,
    /// Retransmitted segments during the interval.
    pub retransmits: Vec<f64>,
    pub cc_state: Vec<&'static str>,
}

/// Per-queue time series (links.parquet).
#[derive(Clone, Debug, Default)]
pub struct LinkSeries {
    pub t_s: Vec<f64>,
    /// Index into the run's link names.
    pub link: Vec<u32>,
    pub backlog_pkts: Vec<f64>,
    pub backlog_bytes: Vec<f64>,
    /// Queue drops during the interval.
    pub drops: Vec<f64>,
    /// Packets the queue CE-marked during the interval.
    pub ce_marks: Vec<f64>,
}

/// Per-UE radio time series of an mmWave cell (radio.parquet). The unprefixed columns are
/// the downlink (the column set), `ul_` the uplink; drops and HARQ retransmissions
/// count during the interval.
#[derive(Clone, Debug, Default)]
pub struct RadioSeries {
    pub t_s: Vec<f64>,
    /// UE index (radio.parquet has the UE names).
    pub ue: Vec<u32>,
    /// Wideband SINR of the latest channel sample, dB.
    pub sinr_db: Vec<f64>,
    /// 1 in line of sight, 0 blocked.
    pub los: Vec<f64>,
    /// The CQI the scheduler uses and the MCS it gives (NaN: CQI 0, downlink stalled).
    pub cqi: Vec<f64>,
    pub mcs: Vec<f64>,
    /// PHY rate of all data symbols at that MCS.
    pub capacity_mbps: Vec<f64>,
    pub rlc_backlog_bytes: Vec<f64>,
    pub rlc_drops: Vec<f64>,
    pub harq_retx: Vec<f64>,
    pub ul_mcs: Vec<f64>,
    pub ul_capacity_mbps: Vec<f64>,
    pub ul_rlc_backlog_bytes: Vec<f64>,
    pub ul_rlc_drops: Vec<f64>,
    pub ul_harq_retx: Vec<f64>,
}

impl RadioSeries {
    pub fn with_capacity(rows: usize) -> Self {
        let col = || Vec::with_capacity(rows);
        RadioSeries {
            t_s: col(),
            ue: Vec::with_capacity(rows),
            sinr_db: col(),
            los: col(),
            cqi: col(),
            mcs: col(),
            capacity_mbps: col(),
            rlc_backlog_bytes: col(),
            rlc_drops: col(),
            harq_retx: col(),
            ul_mcs: col(),
            ul_capacity_mbps: col(),
            ul_rlc_backlog_bytes: col(),
            ul_rlc_drops: col(),
            ul_harq_retx: col(),
        }
    }

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

/// Per-device series of a WiFi BSS (wifi.parquet): the access point (device 0) and each
/// station; counts are during the interval, `airtime_busy` is the fraction of the interval
/// the medium was busy (the same on every row of a BSS).
#[derive(Clone, Debug, Default)]
pub struct WifiSeries {
    pub t_s: Vec<f64>,
    /// 0 for the access point, i + 1 for station i (wifi.parquet has the node names).
    pub device: Vec<u32>,
    pub phy_rate_mbps: Vec<f64>,
    /// PPDUs this device sent that collided.
    pub collisions: Vec<f64>,
    /// MPDU retransmissions this device sent.
    pub retries: Vec<f64>,
    /// Packets this device dropped (retry limit, queue lifetime, full queue).
    pub mac_drops: Vec<f64>,
    /// MPDUs addressed to this device lost to bit errors.
    pub phy_drops: Vec<f64>,
    pub airtime_busy: Vec<f64>,
}

impl WifiSeries {
    pub fn with_capacity(rows: usize) -> Self {
        let col = || Vec::with_capacity(rows);
        WifiSeries { t_s: col(), device: Vec::with_capacity(rows), phy_rate_mbps: col(), collisions: col(), retries: col(), mac_drops: col(), phy_drops: col(), airtime_busy: col() }
    }

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

/// Per-ACK RTT samples (rtt.parquet).
#[derive(Clone, Debug, Default)]
pub struct RttSeries {
    pub t_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub rtt_ms: Vec<f64>,
}

/// Streaming RTT statistics: exact count/mean, percentiles from log-spaced buckets of
/// ratio 1.005 (a reported percentile is within ±0.25 % of the true sample value).
#[derive(Clone, Debug)]
pub struct RttStats {
    count: u64,
    sum_ms: f64,
    buckets: Vec<u64>,
}

const BUCKET_RATIO_LN: f64 = 0.004_987_541_511_038_968; // ln(1.005)
/// Bucket 0 holds samples up to 1 µs; the last covers ≥ ~1000 s.
const BUCKETS: usize = 4_200;

impl Default for RttStats {
    fn default() -> Self {
        RttStats { count: 0, sum_ms: 0.0, buckets: vec![0; BUCKETS] }
    }
}

impl RttStats {
    pub fn add(&mut self, rtt_ms: f64) {
        self.count += 1;
        self.sum_ms += rtt_ms;
        let us = (rtt_ms * 1e3).max(1.0);
        let idx = ((us.ln() / BUCKET_RATIO_LN) as usize).min(BUCKETS - 1);
        self.buckets[idx] += 1;
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
                return Some(((i as f64 + 0.5) * BUCKET_RATIO_LN).exp() * 1e-3);
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
}
