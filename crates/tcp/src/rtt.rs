//! RTT estimation, retransmission timeout and the windowed minimum RTT (RFC 6298; Linux
//! tcp_rtt_estimator()).
//!
//! Linux mode follows `tcp_rtt_estimator`/`tcp_set_rto`: SRTT gain 1/8; mean deviation gain
//! 1/4, but a sample *below* SRTT raises it only with gain 1/32; `rttvar` is the largest
//! 4·mdev of the current flight, never below `rto_min`, and decays by a quarter of its excess
//! once per flight; RTO = SRTT + rttvar, rounded up to a 1 ms jiffy (HZ = 1000). The first
//! sample gives RTO = max(3·R, R + rto_min). RFC 6298 mode is the plain estimator
//! (RTO = SRTT + max(G, 4·RTTVAR), floor `min_rto`), which is what ns-3 uses (with a 1 s
//! floor by default). Both back off exponentially, capped at `max_rto`.
//! `min_rtt` is Linux's `tcp_min_rtt`: a windowed minimum (Kathleen Nichols' 3-sample
//! `minmax` filter) over 300 s.

use crate::config::{RtoMode, TcpConfig};
use tcplab_core::{SimDuration, SimTime};

/// Clock granularity G of RFC 6298 (ns-3's default `ClockGranularity`), µs.
const RFC6298_GRANULARITY_US: u64 = 1_000;
/// Linux jiffy at HZ = 1000, µs (RTOs are whole jiffies).
pub(crate) const JIFFY_US: u64 = 1_000;
/// Window of the minimum-RTT filter (Linux `sysctl_tcp_min_rtt_wlen` = 300 s).
pub(crate) const MIN_RTT_WINDOW: SimDuration = SimDuration::from_secs(300);

#[derive(Clone, Debug)]
pub(crate) struct RttEstimator {
    mode: RtoMode,
    min_rto_us: u64,
    max_rto_us: u64,
    /// SRTT in µs scaled by 8 (Linux `srtt_us`); 0 before the first sample.
    srtt8: u64,
    /// Linux: `mdev_us` (4·mean deviation). RFC 6298: RTTVAR.
    mdev: u64,
    /// Linux `mdev_max_us`: largest `mdev` of the current flight.
    mdev_max: u64,
    /// Linux `rttvar_us`.
    rttvar: u64,
    /// Linux `rtt_seq`: the flight ends when snd_una passes it.
    rtt_seq: u32,
    /// RTO before backoff, µs.
    base_rto_us: u64,
    backoff: u32,
}

impl RttEstimator {
    pub(crate) fn new(cfg: &TcpConfig) -> Self {
        RttEstimator {
            mode: cfg.rto_mode,
            min_rto_us: cfg.min_rto.as_micros(),
            max_rto_us: cfg.max_rto.as_micros(),
            srtt8: 0,
            mdev: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            base_rto_us: cfg.initial_rto.as_micros(),
            backoff: 0,
        }
    }

    /// Smoothed RTT in µs, 0 before the first sample.
    pub(crate) fn srtt_us(&self) -> u64 {
        self.srtt8 >> 3
    }

    /// The current RTO including backoff.
    pub(crate) fn rto(&self) -> SimDuration {
        let backed_off = (self.base_rto_us as u128) << self.backoff;
        SimDuration::from_micros(backed_off.min(self.max_rto_us as u128) as u64)
    }

    /// An RTO expired: double the timeout (capped at `max_rto` by [`rto`](Self::rto); the
    /// exponent stops at 32, far beyond any cap).
    pub(crate) fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(32);
    }

    /// New data was cumulatively acknowledged: forget the backoff.
    pub(crate) fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Feeds one RTT sample (µs). `snd_una`/`snd_nxt` delimit Linux's per-flight rttvar update.
    pub(crate) fn on_sample(&mut self, rtt_us: u64, snd_una: u32, snd_nxt: u32) {
        let rtt_us = rtt_us.max(1);
        match self.mode {
            RtoMode::Linux => self.linux_sample(rtt_us, snd_una, snd_nxt),
            RtoMode::Rfc6298 => self.rfc6298_sample(rtt_us),
        }
        self.backoff = 0;
    }

    fn linux_sample(&mut self, r: u64, snd_una: u32, snd_nxt: u32) {
        if self.srtt8 == 0 {
            self.srtt8 = r << 3;
            self.mdev = r << 1; // makes the first RTO 3·R
            self.rttvar = self.mdev.max(self.min_rto_us);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let r = r as i64;
            let mut m = r - (self.srtt8 >> 3) as i64; // error of the estimate
            self.srtt8 = (self.srtt8 as i64 + m).max(1) as u64; // srtt += m/8 (scaled by 8)
            let quarter_mdev = (self.mdev >> 2) as i64;
            if m < 0 {
                m = -m - quarter_mdev;
                if m > 0 {
                    m >>= 3; // sample below SRTT: gain 1/32 instead of 1/4
                }
            } else {
                m -= quarter_mdev;
            }
            self.mdev = (self.mdev as i64 + m) as u64;
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.rttvar = self.rttvar.max(self.mdev_max);
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.min_rto_us;
            }
        }
        let rto = self.srtt_us() + self.rttvar;
        self.base_rto_us = rto.div_ceil(JIFFY_US) * JIFFY_US;
    }

    fn rfc6298_sample(&mut self, r: u64) {
        if self.srtt8 == 0 {
            self.srtt8 = r << 3;
            self.mdev = r / 2;
        } else {
            let srtt = self.srtt8 >> 3;
            self.mdev = (3 * self.mdev + srtt.abs_diff(r)) / 4;
            self.srtt8 = self.srtt8 - srtt + r; // srtt = 7/8·srtt + 1/8·r (scaled by 8)
        }
        let rto = self.srtt_us() + (4 * self.mdev).max(RFC6298_GRANULARITY_US);
        self.base_rto_us = rto.max(self.min_rto_us);
    }
}

/// Linux `struct minmax` used as a running minimum over a time window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WindowedMin {
    s: [(SimTime, u64); 3],
}

impl WindowedMin {
    pub(crate) fn new() -> Self {
        WindowedMin { s: [(SimTime::ZERO, u64::MAX); 3] }
    }

    /// The current minimum (`u64::MAX` before any sample).
    pub(crate) fn get(&self) -> u64 {
        self.s[0].1
    }

    /// Linux `minmax_running_min`.
    pub(crate) fn update(&mut self, window: SimDuration, t: SimTime, v: u64) -> u64 {
        let val = (t, v);
        if v <= self.s[0].1 || t.saturating_since(self.s[2].0) > window {
            self.s = [val; 3];
            return v;
        }
        if v <= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v <= self.s[2].1 {
            self.s[2] = val;
        }
        // minmax_subwin_update
        let dt = t.saturating_since(self.s[0].0);
        if dt > window {
            self.s = [self.s[1], self.s[2], val];
            if t.saturating_since(self.s[0].0) > window {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].0 == self.s[0].0 && dt.as_nanos() > window.as_nanos() / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].0 == self.s[1].0 && dt.as_nanos() > window.as_nanos() / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000;

    fn estimator(mode: RtoMode) -> RttEstimator {
        RttEstimator::new(&TcpConfig { rto_mode: mode, ..TcpConfig::default() })
    }

    #[test]
    fn initial_rto_is_one_second() {
        assert_eq!(estimator(RtoMode::Linux).rto(), SimDuration::from_secs(1));
    }

    #[test]
    fn linux_first_sample_gives_max_of_three_r_and_r_plus_rto_min() {
        let mut e = estimator(RtoMode::Linux);
        e.on_sample(150 * MS, 0, 10); // mdev = 300 ms > 200 ms: RTO = 3R
        assert_eq!(e.rto(), SimDuration::from_millis(450));
        let mut e = estimator(RtoMode::Linux);
        e.on_sample(50 * MS, 0, 10); // rttvar = max(100, 200) ms: RTO = R + 200 ms
        assert_eq!(e.rto(), SimDuration::from_millis(250));
        assert_eq!(e.srtt_us(), 50 * MS);
    }

    #[test]
    fn linux_estimator_by_hand() {
        let mut e = estimator(RtoMode::Linux);
        e.on_sample(100 * MS, 0, 10); // srtt 100, mdev 200, rttvar 200, rtt_seq 10
        assert_eq!(e.rto(), SimDuration::from_millis(300));
        // 180 ms: m = 80 → srtt = 110; m − mdev/4 = 80 − 50 = 30 → mdev = 230 → rttvar 230.
        e.on_sample(180 * MS, 5, 20);
        assert_eq!(e.srtt_us(), 110 * MS);
        assert_eq!(e.rto(), SimDuration::from_millis(340));
        // 60 ms: m = −50 → srtt = 103.75; |m| − mdev/4 = 50 − 57.5 < 0 → mdev = 222.5 (full
        // gain for decreases). snd_una 11 > rtt_seq 10 ends the flight: rttvar (230) is not
        // above mdev_max (230), no decay. RTO = 103.75 + 230 = 333.75 → 334 ms (jiffies).
        e.on_sample(60 * MS, 11, 30);
        assert_eq!(e.srtt_us(), 103_750);
        assert_eq!(e.rto(), SimDuration::from_millis(334));
        // Next flight (rtt_seq 30, mdev_max reset to 200): 103.75 ms sample → m = 0,
        // mdev = 222.5 − 55.625 = 166.875; snd_una 31 > 30: rttvar 230 decays by
        // (230 − 200)/4 = 7.5 → 222.5. RTO = 103.75 + 222.5 = 326.25 → 327 ms.
        e.on_sample(103_750, 31, 40);
        assert_eq!(e.rto(), SimDuration::from_millis(327));
    }

    #[test]
    fn linux_damps_mdev_for_samples_below_srtt() {
        let mut e = estimator(RtoMode::Linux);
        e.on_sample(100 * MS, 0, 10);
        // 20 ms: m = −80 → srtt 90; 80 − 50 = 30 > 0 → ×1/8 = 3.75 → mdev 203.75 → rttvar.
        // Without damping mdev would be 230. RTO = 90 + 203.75 = 293.75 → 294 ms.
        e.on_sample(20 * MS, 0, 10);
        assert_eq!(e.srtt_us(), 90 * MS);
        assert_eq!(e.rto(), SimDuration::from_millis(294));
    }

    #[test]
    fn rfc6298_estimator_by_hand() {
        let mut e = estimator(RtoMode::Rfc6298);
        e.on_sample(100 * MS, 0, 10); // srtt 100, rttvar 50 → 100 + 200
        assert_eq!(e.rto(), SimDuration::from_millis(300));
        // rttvar = ¾·50 + ¼·80 = 57.5; srtt = ⅞·100 + ⅛·180 = 110 → 110 + 230
        e.on_sample(180 * MS, 5, 20);
        assert_eq!(e.rto(), SimDuration::from_millis(340));
        // rttvar = ¾·57.5 + ¼·90 = 65.625; srtt = ⅞·110 + ⅛·20 = 98.75 → 98.75 + 262.5
        e.on_sample(20 * MS, 11, 30);
        assert_eq!(e.srtt_us(), 98_750);
        assert_eq!(e.rto(), SimDuration::from_micros(361_250));
    }

    #[test]
    fn rfc6298_floor_is_min_rto() {
        let mut e =
            RttEstimator::new(&TcpConfig { rto_mode: RtoMode::Rfc6298, min_rto: SimDuration::from_secs(1), ..TcpConfig::default() });
        e.on_sample(10 * MS, 0, 10);
        assert_eq!(e.rto(), SimDuration::from_secs(1));
    }

    #[test]
    fn backoff_doubles_caps_and_resets() {
        let mut e = estimator(RtoMode::Linux);
        e.on_sample(100 * MS, 0, 10);
        e.back_off();
        assert_eq!(e.rto(), SimDuration::from_millis(600));
        e.back_off();
        assert_eq!(e.rto(), SimDuration::from_millis(1200));
        for _ in 0..100 {
            e.back_off();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(120));
        e.reset_backoff();
        assert_eq!(e.rto(), SimDuration::from_millis(300));
    }

    #[test]
    fn windowed_min_tracks_and_expires() {
        let w = SimDuration::from_secs(300);
        let mut m = WindowedMin::new();
        assert_eq!(m.get(), u64::MAX);
        assert_eq!(m.update(w, SimTime(0), 100), 100);
        assert_eq!(m.update(w, SimTime::ZERO + SimDuration::from_secs(10), 120), 100);
        assert_eq!(m.update(w, SimTime::ZERO + SimDuration::from_secs(20), 90), 90);
        // 90 was seen at 20 s; after it leaves the window the later, larger samples take over.
        assert_eq!(m.update(w, SimTime::ZERO + SimDuration::from_secs(200), 150), 90);
        assert_eq!(m.update(w, SimTime::ZERO + SimDuration::from_secs(330), 160), 150);
    }
}
