//! The recorder: time series sampled at `sample_interval` into preallocated columnar
//! vectors (one Vec per column), per-ACK RTT samples when asked, and streaming RTT
//! statistics per flow for the summary (a log-bucket histogram: memory does not grow with
//! simulated time). Column names carry their units (design.md §4).

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
