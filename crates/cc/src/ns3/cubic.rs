//! ns-3's TcpCubic (ns-3 3.44 `tcp-cubic.cc`, with its attribute defaults), window in segments
//! inside the class and bytes in the Tcb. Departs from Linux tcp_cubic.c (crates/cc/src/cubic.rs):
//! - slow start adds every acknowledged segment (byte counting) with no cap at ssthresh, and
//!   nothing of the ACK is left for congestion avoidance;
//! - K, t and the target in `double` seconds (Linux: fixed point, jiffies); at most one segment
//!   per ACK in congestion avoidance; no once-per-jiffy caching of `cnt`; no TX_START epoch shift;
//! - delay_min and HyStart's samples are the smoothed RTT ns-3 passes to PktsAcked (Linux: the
//!   ACK's own RTT sample); samples are ignored for 10 ms after an epoch start (Linux 1 s);
//! - HyStart delay threshold clamp(delay_min, 4 ms, 1000 ms) (Linux: delay_min/8 within 4-16 ms);
//!   the round minimum is of its first 8 samples only; the ACK train needs now − round_start >
//!   delay_min (Linux: (delay_min + ACK delay)/2 unpaced); it runs while cwnd ≤ ssthresh (Linux <);
//! - an RTO (CA_LOSS) keeps W_max (ns-3 #1085; Linux zeroes it); β 0.7 and C as doubles.

use super::{CongState, Ns3CongestionOps, Tcb};
use crate::cubic::{CubicConfig, Hystart, HystartDetect};
use tcplab_core::{SimDuration, SimTime};

/// ns-3 `HyStartMinSamples` default.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// ns-3 `HyStartDelayMin` / `HyStartDelayMax` defaults.
const HYSTART_DELAY_MIN: SimDuration = SimDuration::from_millis(4);
const HYSTART_DELAY_MAX: SimDuration = SimDuration::from_millis(1000);
/// ns-3 `CubicDelta`: RTT samples are ignored this long after an epoch starts.
const CUBIC_DELTA: SimDuration = SimDuration::from_millis(10);
/// ns-3 `CntClamp`: most ACKs per segment of growth before the first loss.
const CNT_CLAMP: u32 = 20;

/// TcpCubic.
#[derive(Clone, Debug)]
pub struct Cubic {
    fast_convergence: bool,
    tcp_friendliness: bool,
    beta: f64,
    c: f64,
    hystart: bool,
    hystart_detect: HystartDetect,
    /// `m_hystartLowWindow`, segments.
    hystart_low_window: u32,
    hystart_ack_delta: SimDuration,
    /// `m_cWndCnt`: segments acked towards the next one-segment increase.
    cwnd_cnt: u32,
    /// `m_lastMaxCwnd` (W_max), segments.
    last_max_cwnd: u32,
    /// `m_bicOriginPoint`, segments.
    bic_origin_point: u32,
    /// `m_bicK`, seconds.
    bic_k: f64,
    /// `m_delayMin`; None is ns-3's `Time::Min()` (no sample yet).
    delay_min: Option<SimDuration>,
    /// `m_epochStart`; None is `Time::Min()` (no epoch).
    epoch_start: Option<SimTime>,
    /// `m_found`.
    found: bool,
    /// `m_roundStart`, `m_lastAck`, `m_endSeq` (bytes).
    round_start: SimTime,
    last_ack: SimTime,
    end_seq: u64,
    /// `m_currRtt`: the round's smallest sample; None is `Time::Min()`.
    curr_rtt: Option<SimDuration>,
    /// `m_sampleCnt`.
    sample_cnt: u32,
    /// `m_ackCnt`: segments acked towards the Reno estimate's next segment.
    ack_cnt: u32,
    /// `m_tcpCwnd`: the Reno estimate W_est, segments.
    tcp_cwnd: u32,
}

impl Cubic {
    pub fn new(config: &CubicConfig) -> Self {
        debug_assert!(config.hystart != Hystart::PlusPlus, "ns3::parse refuses hystart++");
        Cubic {
            fast_convergence: config.fast_convergence,
            tcp_friendliness: config.tcp_friendliness,
            beta: config.beta,
            c: config.c,
            hystart: config.hystart == Hystart::Linux,
            hystart_detect: config.hystart_detect,
            hystart_low_window: config.hystart_low_window,
            hystart_ack_delta: SimDuration::from_nanos((config.hystart_ack_delta_ms * 1e6).round() as u64),
            cwnd_cnt: 0,
            last_max_cwnd: 0,
            bic_origin_point: 0,
            bic_k: 0.0,
            delay_min: None,
            epoch_start: None,
            found: false,
            round_start: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            end_seq: 0,
            curr_rtt: None,
            sample_cnt: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
        }
    }

    /// `HystartReset`: a new round ends when `high_tx_mark` is acknowledged.
    fn hystart_reset(&mut self, tcb: &Tcb) {
        self.round_start = tcb.now;
        self.last_ack = tcb.now;
        self.end_seq = tcb.high_tx_mark;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `CubicReset` (ns-3 ≥ 3.42 keeps `m_lastMaxCwnd`, `m_cWndCnt` and `m_epochStart`).
    fn cubic_reset(&mut self) {
        self.bic_origin_point = 0;
        self.bic_k = 0.0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.delay_min = None;
        self.found = false;
    }

    /// `Update`: ACKs (segments) per one-segment increase, at least 2.
    fn update(&mut self, tcb: &Tcb, segments_acked: u32) -> u32 {
        let seg_cwnd = tcb.cwnd_segments();
        self.ack_cnt = self.ack_cnt.wrapping_add(segments_acked);
        let epoch_start = match self.epoch_start {
            Some(t) => t,
            None => {
                self.ack_cnt = segments_acked;
                self.tcp_cwnd = seg_cwnd;
                if self.last_max_cwnd <= seg_cwnd {
                    self.bic_k = 0.0;
                    self.bic_origin_point = seg_cwnd;
                } else {
                    self.bic_k = (f64::from(self.last_max_cwnd - seg_cwnd) / self.c).powf(1.0 / 3.0);
                    self.bic_origin_point = self.last_max_cwnd;
                }
                self.epoch_start = Some(tcb.now);
                tcb.now
            }
        };
        // t = now + delay_min − epoch_start, in seconds.
        let delay_min = self.delay_min.unwrap_or(SimDuration::ZERO);
        let t = (tcb.now.saturating_since(epoch_start).as_nanos() + delay_min.as_nanos()) as f64 / 1e9;
        let offs = if t < self.bic_k { self.bic_k - t } else { t - self.bic_k };
        // ns-3 converts the double to uint32_t (undefined beyond 2³²; saturates here).
        let delta = (self.c * offs.powf(3.0)) as u32;
        let bic_target = if t < self.bic_k { self.bic_origin_point.wrapping_sub(delta) } else { self.bic_origin_point.wrapping_add(delta) };
        let mut cnt = if bic_target > seg_cwnd { seg_cwnd / (bic_target - seg_cwnd) } else { seg_cwnd.wrapping_mul(100) };
        if self.last_max_cwnd == 0 && cnt > CNT_CLAMP {
            cnt = CNT_CLAMP;
        }
        if self.tcp_friendliness {
            // Reno estimate: one segment per (cwnd·scale/8) segments acked, scale = 15 for β 0.7.
            let scale = (8.0 * (1024.0 + self.beta * 1024.0) / 3.0 / (1024.0 - self.beta * 1024.0)) as u32;
            let delta = seg_cwnd.wrapping_mul(scale) >> 3;
            // ns-3 loops `while (m_ackCnt > delta)`, forever when delta is 0 (cwnd < 1 segment).
            if delta > 0 && self.ack_cnt > delta {
                let k = (self.ack_cnt - 1) / delta;
                self.ack_cnt -= k * delta;
                self.tcp_cwnd = self.tcp_cwnd.wrapping_add(k);
            }
            if self.tcp_cwnd > seg_cwnd {
                let max_cnt = seg_cwnd / (self.tcp_cwnd - seg_cwnd);
                cnt = cnt.min(max_cnt);
            }
        }
        cnt.max(2)
    }

    /// `HystartUpdate` with the RTT ns-3 passes (the smoothed RTT).
    fn hystart_update(&mut self, tcb: &mut Tcb, delay: SimDuration) {
        if self.found {
            return;
        }
        let now = tcb.now;
        let delay_min = self.delay_min.unwrap_or(SimDuration::ZERO);
        // ACK train: ACKs closer than HyStartAckDelta for longer than delay_min.
        if now.saturating_since(self.last_ack) <= self.hystart_ack_delta {
            self.last_ack = now;
            if now.saturating_since(self.round_start) > delay_min && self.hystart_detect != HystartDetect::Delay {
                self.found = true;
            }
        }
        // Delay: the minimum of the round's first HyStartMinSamples samples, then compared.
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt.is_none_or(|c| c > delay) {
                self.curr_rtt = Some(delay);
            }
            self.sample_cnt += 1;
        } else if self.curr_rtt.is_some_and(|c| c > delay_min + delay_thresh(delay_min)) && self.hystart_detect != HystartDetect::AckTrain {
            self.found = true;
        }
        if self.found {
            tcb.ssthresh = tcb.cwnd;
        }
    }
}

/// `HystartDelayThresh`: `t` clamped to [HyStartDelayMin, HyStartDelayMax].
fn delay_thresh(t: SimDuration) -> SimDuration {
    if t > HYSTART_DELAY_MAX {
        HYSTART_DELAY_MAX
    } else if t < HYSTART_DELAY_MIN {
        HYSTART_DELAY_MIN
    } else {
        t
    }
}

impl Ns3CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, tcb: &mut Tcb) {
        self.hystart_reset(tcb);
    }

    fn get_ss_thresh(&mut self, tcb: &Tcb, _bytes_in_flight: u32) -> u32 {
        let seg_cwnd = tcb.cwnd_segments();
        if seg_cwnd < self.last_max_cwnd && self.fast_convergence {
            self.last_max_cwnd = (f64::from(seg_cwnd) * (1.0 + self.beta) / 2.0) as u32;
        } else {
            self.last_max_cwnd = seg_cwnd;
        }
        self.epoch_start = None;
        ((f64::from(seg_cwnd) * self.beta) as u32).max(2) * tcb.segment_size
    }

    fn increase_window(&mut self, tcb: &mut Tcb, mut segments_acked: u32) {
        if !tcb.is_cwnd_limited {
            return;
        }
        if tcb.cwnd < tcb.ssthresh {
            if self.hystart && tcb.last_acked_seq > self.end_seq {
                self.hystart_reset(tcb);
            }
            tcb.cwnd = tcb.cwnd.saturating_add(segments_acked.saturating_mul(tcb.segment_size));
            segments_acked = 0;
        }
        if tcb.cwnd >= tcb.ssthresh && segments_acked > 0 {
            self.cwnd_cnt = self.cwnd_cnt.wrapping_add(segments_acked);
            let cnt = self.update(tcb, segments_acked);
            if self.cwnd_cnt >= cnt {
                tcb.cwnd = tcb.cwnd.saturating_add(tcb.segment_size);
                self.cwnd_cnt -= cnt;
            }
        }
    }

    fn pkts_acked(&mut self, tcb: &mut Tcb, _segments_acked: u32, rtt: SimDuration) {
        if let Some(epoch) = self.epoch_start {
            if tcb.now.saturating_since(epoch) < CUBIC_DELTA {
                return;
            }
        }
        if self.delay_min.is_none_or(|d| d > rtt) {
            self.delay_min = Some(rtt);
        }
        let low = u64::from(self.hystart_low_window) * u64::from(tcb.segment_size);
        if self.hystart && tcb.cwnd <= tcb.ssthresh && u64::from(tcb.cwnd) >= low {
            self.hystart_update(tcb, rtt);
        }
    }

    fn congestion_state_set(&mut self, tcb: &mut Tcb, new_state: CongState) {
        if new_state == CongState::Loss {
            self.cubic_reset();
            self.hystart_reset(tcb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CcConfig;
    use serde_json::json;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn cubic() -> Cubic {
        let CcConfig::Cubic(config) = crate::ns3::default_config("cubic").unwrap() else { unreachable!() };
        Cubic::new(&config)
    }

    /// A cwnd-limited connection with 1000-byte segments, initialised at time 0.
    fn setup(cwnd_segs: u32, ssthresh: u32) -> (Cubic, Tcb) {
        let mut t = Tcb::new(1000, cwnd_segs, ssthresh);
        t.is_cwnd_limited = true;
        let mut c = cubic();
        c.init(&mut t);
        (c, t)
    }

    fn acks(c: &mut Cubic, t: &mut Tcb, n: u32) {
        for _ in 0..n {
            c.increase_window(t, 1);
        }
    }

    #[test]
    fn defaults_are_ns3_attributes_and_hystart_plus_plus_is_refused() {
        let CcConfig::Cubic(config) = crate::ns3::parse(json!("cubic")).unwrap() else { unreachable!() };
        assert_eq!((config.beta, config.c, config.hystart, config.hystart_low_window), (0.7, 0.4, Hystart::Linux, 16));
        let err = crate::ns3::parse(json!({ "kind": "cubic", "hystart": "hystart++" })).unwrap_err();
        assert_eq!(err.0, "hystart");
        assert!(err.1.contains("tcp.stack = \"linux\""), "{}", err.1);
        assert!(crate::ns3::parse(json!({ "kind": "cubic", "hystart": false, "hystart_detect": "delay" })).is_ok());
    }

    #[test]
    fn slow_start_counts_bytes_past_ssthresh_and_only_when_cwnd_limited() {
        // 10 segments + 3 acked = 13 (Linux would stop at ssthresh 11 and spend 2 in CA).
        let (mut c, mut t) = setup(10, 11_000);
        t.is_cwnd_limited = false;
        c.increase_window(&mut t, 3);
        assert_eq!(t.cwnd, 10_000);
        t.is_cwnd_limited = true;
        c.increase_window(&mut t, 3);
        assert_eq!(t.cwnd, 13_000);
        assert_eq!(c.cwnd_cnt, 0);
    }

    #[test]
    fn ssthresh_is_beta_cwnd_and_fast_convergence_shrinks_w_max() {
        let (mut c, mut t) = setup(100, u32::MAX);
        // First loss: W_max = 100, ssthresh = ⌊100·0.7⌋ = 70 segments (flight ignored).
        assert_eq!(c.get_ss_thresh(&t, 5_000), 70_000);
        assert_eq!(c.last_max_cwnd, 100);
        // Loss below W_max: W_max = ⌊80·1.7/2⌋ = 68, ssthresh = ⌊80·0.7⌋ = 56.
        t.cwnd = 80_000;
        assert_eq!(c.get_ss_thresh(&t, 80_000), 56_000);
        assert_eq!(c.last_max_cwnd, 68);
        // Never below 2 segments: ⌊2·0.7⌋ = 1 → 2.
        t.cwnd = 2_000;
        assert_eq!(c.get_ss_thresh(&t, 2_000), 2_000);
        assert_eq!(c.epoch_start, None);
    }

    // Values also from ns-3 3.44 TcpCubic on the same inputs, driven through its Python bindings.
    #[test]
    fn cubic_curve_k_and_target() {
        let (mut c, mut t) = setup(100, u32::MAX);
        t.ssthresh = c.get_ss_thresh(&t, 100_000);
        t.cwnd = t.ssthresh; // 70 segments, W_max 100
        c.pkts_acked(&mut t, 1, ms(100)); // delay_min 100 ms
                                          // K = ∛((100 − 70)/0.4) = ∛75 = 4.2172 s. At the epoch start t = delay_min = 0.1 s:
                                          // offs = 4.1172, 0.4·offs³ = 27.9 → 27, target = 100 − 27 = 73, cnt = 70/(73−70) = 23.
        acks(&mut c, &mut t, 22);
        assert!((c.bic_k - 75f64.cbrt()).abs() < 1e-12);
        assert_eq!(t.cwnd, 70_000);
        acks(&mut c, &mut t, 1);
        assert_eq!(t.cwnd, 71_000);
        // 5 s later: t = 5.1, offs = 0.8828, 0.4·offs³ = 0.28 → 0, target = W_max = 100,
        // cnt = 71/29 = 2: one segment per 2 ACKs.
        t.now = SimTime(5_000_000_000);
        acks(&mut c, &mut t, 1);
        assert_eq!(t.cwnd, 71_000);
        acks(&mut c, &mut t, 1);
        assert_eq!(t.cwnd, 72_000);
        // Beyond the plateau, 6.9 s: t = 7.0, offs = 2.7828, 0.4·offs³ = 8.6 → 8, target 108,
        // cnt = 72/36 = 2.
        t.now = SimTime(6_900_000_000);
        acks(&mut c, &mut t, 2);
        assert_eq!(t.cwnd, 73_000);
    }

    // Values from ns-3 3.44 TcpCubic on the same inputs: loss at 100 segments, delay_min 100 ms,
    // then every 0.5 s one ACK (cwnd recorded), 199 more ACKs (cwnd recorded).
    #[test]
    fn congestion_avoidance_trajectory_matches_ns3() {
        let expected = [
            (70, 73),
            (74, 82),
            (83, 88),
            (89, 93),
            (94, 97),
            (97, 99),
            (99, 100),
            (100, 100),
            (100, 100),
            (100, 100),
            (100, 100),
            (101, 101),
        ];
        let (mut c, mut t) = setup(100, u32::MAX);
        t.ssthresh = c.get_ss_thresh(&t, 100_000);
        t.cwnd = t.ssthresh;
        c.pkts_acked(&mut t, 1, ms(100));
        for (step, &(first, last)) in expected.iter().enumerate() {
            t.now = SimTime(step as u64 * 500_000_000);
            acks(&mut c, &mut t, 1);
            assert_eq!(t.cwnd, first * 1000, "step {step}, first ACK");
            acks(&mut c, &mut t, 199);
            assert_eq!(t.cwnd, last * 1000, "step {step}, 200th ACK");
        }
    }

    #[test]
    fn before_any_loss_cnt_is_clamped_to_20() {
        // W_max 0, origin = cwnd = 30: target 30 is not above cwnd, cnt = 100·30 = 3000 → 20.
        let (mut c, mut t) = setup(30, 30_000);
        c.pkts_acked(&mut t, 1, ms(10));
        acks(&mut c, &mut t, 19);
        assert_eq!(t.cwnd, 30_000);
        acks(&mut c, &mut t, 1);
        assert_eq!(t.cwnd, 31_000);
    }

    // Values also from ns-3 3.44 TcpCubic on the same inputs, driven through its Python bindings.
    #[test]
    fn tcp_friendliness_grows_with_the_reno_estimate() {
        for friendly in [true, false] {
            let (mut c, mut t) = setup(50, u32::MAX);
            c.tcp_friendliness = friendly;
            t.ssthresh = c.get_ss_thresh(&t, 50_000); // 35 segments; cwnd stays 50 = W_max
            c.pkts_acked(&mut t, 1, ms(10));
            // K = 0, origin 50, t = 0.01 s: 0.4·0.01³ → 0, target 50 = cwnd, cnt = 100·50 = 5000.
            // W_est starts at 50 and gains a segment each time ack_cnt exceeds
            // 50·15 >> 3 = 93 (15 = ⌊8·(1024+716.8)/3/(1024−716.8)⌋): on the 94th ACK W_est = 51,
            // cnt = 50/(51−50) = 50, and cwnd_cnt 94 ≥ 50 adds a segment.
            acks(&mut c, &mut t, 93);
            assert_eq!(t.cwnd, 50_000);
            acks(&mut c, &mut t, 1);
            assert_eq!(t.cwnd, if friendly { 51_000 } else { 50_000 }, "friendliness {friendly}");
        }
    }

    // Also from ns-3 3.44 TcpCubic on the same inputs, driven through its Python bindings: growth on ACK 16.
    #[test]
    fn rto_keeps_w_max() {
        let (mut c, mut t) = setup(100, u32::MAX);
        c.get_ss_thresh(&t, 100_000);
        c.congestion_state_set(&mut t, CongState::Loss);
        assert_eq!((c.last_max_cwnd, c.delay_min, c.found), (100, None, false));
        t.cwnd = 50_000;
        t.ssthresh = 50_000;
        c.pkts_acked(&mut t, 1, ms(100));
        // K = ∛(50/0.4) = 5, t = 0.1: 0.4·4.9³ = 47.06 → 47, target 53, cnt = 50/3 = 16
        // (with W_max reset, as Linux does, cnt would be clamped to 20).
        acks(&mut c, &mut t, 15);
        assert_eq!(t.cwnd, 50_000);
        acks(&mut c, &mut t, 1);
        assert_eq!(t.cwnd, 51_000);
    }

    #[test]
    fn rtt_samples_are_ignored_for_10_ms_after_an_epoch_starts() {
        let (mut c, mut t) = setup(20, 20_000);
        c.pkts_acked(&mut t, 1, ms(50));
        acks(&mut c, &mut t, 1); // epoch starts at 0
        t.now = SimTime(9_999_999);
        c.pkts_acked(&mut t, 1, ms(40));
        assert_eq!(c.delay_min, Some(ms(50)));
        t.now = SimTime(10_000_000);
        c.pkts_acked(&mut t, 1, ms(40));
        assert_eq!(c.delay_min, Some(ms(40)));
    }

    // Values also from ns-3 3.44 TcpCubic on the same inputs, driven through its Python bindings.
    #[test]
    fn hystart_delay_exit_needs_twice_delay_min() {
        for (rtt_ms, exits) in [(150, false), (210, true)] {
            let (mut c, mut t) = setup(16, u32::MAX);
            t.now = SimTime(5_000_000);
            c.pkts_acked(&mut t, 1, ms(100)); // delay_min 100 ms
                                              // Round ends (ACK past end_seq 0): reset, slow start to 17 segments.
            t.last_acked_seq = 16_000;
            t.high_tx_mark = 32_000;
            c.increase_window(&mut t, 1);
            assert_eq!((t.cwnd, c.end_seq, c.sample_cnt), (17_000, 32_000, 0));
            // Samples 5 ms apart (no ACK train). The first 8 give curr_rtt; the 9th compares it
            // with delay_min + clamp(delay_min, 4, 1000 ms) = 200 ms (Linux: 100 + 12.5 ms).
            for i in 1..=9u64 {
                t.now = SimTime(5_000_000 * (i + 1));
                c.pkts_acked(&mut t, 1, ms(rtt_ms));
                if i == 8 {
                    assert_eq!(t.ssthresh, u32::MAX, "{rtt_ms} ms, 8th sample");
                }
            }
            assert_eq!(t.ssthresh, if exits { 17_000 } else { u32::MAX }, "{rtt_ms} ms");
        }
    }

    // Values also from ns-3 3.44 TcpCubic on the same inputs, driven through its Python bindings.
    #[test]
    fn hystart_ack_train_exit_after_delay_min() {
        for detect in [HystartDetect::Both, HystartDetect::Delay] {
            let (mut c, mut t) = setup(16, u32::MAX);
            c.hystart_detect = detect;
            // ACKs every 1 ms (≤ HyStartAckDelta 2 ms) from the round start at 0, delay_min
            // 10 ms: the train is found when now − round_start > 10 ms, on the ACK at 11 ms
            // (Linux unpaced: (delay_min + ACK delay)/2 ≈ 5 ms).
            for i in 1..=11u64 {
                t.now = SimTime(1_000_000 * i);
                c.pkts_acked(&mut t, 1, ms(10));
                if i == 10 {
                    assert_eq!(t.ssthresh, u32::MAX);
                }
            }
            let exited = detect == HystartDetect::Both;
            assert_eq!(t.ssthresh, if exited { 16_000 } else { u32::MAX }, "{detect:?}");
        }
    }

    #[test]
    fn hystart_waits_for_the_low_window_and_can_be_off() {
        // Same ACK train as above with cwnd 15 < HyStartLowWindow 16, then with HyStart off.
        for (cwnd, on) in [(15, true), (16, false)] {
            let (mut c, mut t) = setup(cwnd, u32::MAX);
            c.hystart = on;
            for i in 1..=20u64 {
                t.now = SimTime(1_000_000 * i);
                c.pkts_acked(&mut t, 1, ms(10));
            }
            assert_eq!(t.ssthresh, u32::MAX);
        }
    }
}
