//! LEDBAT (RFC 6817) with ns-3 TcpLedbat's defaults for what the RFC
//! leaves open. There is no LEDBAT module in mainline Linux, so unlike the other algorithms
//! this one follows the RFC and ns-3, not Linux.
//!
//! Per ACK in congestion avoidance: queuing delay q = current delay (minimum of the last
//! `current_filter` samples) − base delay (minimum over `base_history` one-minute buckets);
//! cwnd += gain·(TARGET − q)/TARGET · acked/cwnd, then cwnd ≤ flight size before the ACK +
//! ALLOWED_INCREASE and cwnd ≥ MIN_CWND. On loss (once per RTT, which the sender's recovery
//! guarantees) cwnd halves, never below MIN_CWND.
//!
//! Choices and differences:
//! * Delay samples: the RFC and ns-3 use one-way delays from TCP timestamps (TSval −
//!   TSecr, ns-3 in whole ms). The sender gives congestion control RTT samples only, so
//!   the RTT (µs) stands in: the base subtraction cancels the constant parts, but
//!   reverse-path queueing (and delayed-ACK waits) count as queuing delay here.
//! * Fractional cwnd: the RFC's cwnd is in bytes; here it is whole packets with an exact
//!   integer credit (gain in 1/1024, delays in µs) carried between ACKs, like Linux's
//!   `snd_cwnd_cnt`, in both directions. When a bound clamps cwnd the credit is dropped.
//! * Base history: a new bucket when the minute (of simulated time) changes, as the RFC's
//!   pseudo-code; ns-3 starts one when more than 60 whole seconds passed since the last.
//!   The current-delay filter keeps exactly `current_filter` samples (ns-3's keeps one
//!   fewer).
//! * Slow start (ns-3 `SSParam = DO_SLOWSTART`; the RFC suggests none): Linux-style slow
//!   start only until the first congestion-avoidance ACK, and again once cwnd has fallen
//!   to 1 (after an RTO). Before any delay sample congestion avoidance is Reno's +1 per
//!   cwnd acked (ns-3 falls back to NewReno's congestion avoidance without timestamps).
//!   In congestion avoidance, as ns-3, ssthresh is kept just below cwnd.
//! * ALLOWED_INCREASE: the RFC's bound (flight before the ACK + 1 packet) is used; ns-3
//!   bounds by the flight before the ACK alone. A sender that was cwnd-limited (Linux
//!   `tcp_is_cwnd_limited`) counts its whole cwnd as the flight: with GSO it may hold part of
//!   a burst back for an ACK (`tcp_tso_should_defer`), and the flight alone would then ratchet
//!   cwnd down to it; ns-3 has no GSO.
//! * Loss: ssthresh = max(cwnd/2, MIN_CWND) (RFC 6817 §2.4.2); ns-3 inherits NewReno's
//!   max(bytes in flight/2, 2 MSS).

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::reno_ssthresh;
use crate::{AckSample, CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use tcplab_core::SimRng;

/// The gain is kept in 1/1024 so the window credit is exact integer arithmetic.
const GAIN_SCALE: f64 = 1024.0;
/// Length of one base-history bucket (RFC 6817 §2.4.2: one minute), ns.
const BUCKET_NS: u64 = 60_000_000_000;

/// Parameters of LEDBAT (RFC 6817 constants, ns-3 TcpLedbat attribute defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LedbatConfig {
    /// TARGET, ms: the queuing delay LEDBAT aims for (RFC: at most 100 ms; ns-3 100 ms).
    pub target_delay_ms: f64,
    /// GAIN, unitless: cwnd changes by up to gain packets per RTT (RFC: at most 1; ns-3 1).
    /// Rounded to a multiple of 1/1024.
    pub gain: f64,
    /// BASE_HISTORY: one-minute buckets whose minima give the base delay (RFC, ns-3: 10).
    pub base_history: u32,
    /// CURRENT_FILTER: the current delay is the minimum of this many last samples (ns-3 4).
    pub current_filter: u32,
    /// ALLOWED_INCREASE, packets: cwnd ≤ flight size before the ACK + this (RFC 1).
    pub allowed_increase: u32,
    /// MIN_CWND, packets: the window never goes below this (RFC, ns-3: 2).
    pub min_cwnd: u32,
    /// Slow start until the first congestion-avoidance ACK and after an RTO (ns-3
    /// `SSParam`, default yes); without it, congestion avoidance from the start.
    pub slow_start: bool,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            target_delay_ms: 100.0,
            gain: 1.0,
            base_history: 10,
            current_filter: 4,
            allowed_increase: 1,
            min_cwnd: 2,
            slow_start: true,
        }
    }
}

impl AlgorithmConfig for LedbatConfig {
    const NAME: &'static str = "ledbat";
    const SUMMARY: &'static str = "LEDBAT (RFC 6817, as ns-3 TcpLedbat; no mainline Linux module), RTT-based delay";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "target_delay_ms", unit: "ms", doc: "target queuing delay (RFC: ≤ 100 ms)" },
        ParamDoc { name: "gain", unit: "", doc: "largest cwnd change per RTT in packets (RFC: ≤ 1), rounded to a multiple of 1/1024" },
        ParamDoc { name: "base_history", unit: "minutes", doc: "one-minute buckets for the base delay" },
        ParamDoc { name: "current_filter", unit: "samples", doc: "current delay = min of this many last samples" },
        ParamDoc { name: "allowed_increase", unit: "packets", doc: "cwnd ≤ flight before the ACK + this" },
        ParamDoc { name: "min_cwnd", unit: "packets", doc: "smallest window" },
        ParamDoc { name: "slow_start", unit: "", doc: "slow start at the start and after an RTO (ns-3 SSParam)" },
    ];

    fn validate(&self) -> Result<(), String> {
        let t = self.target_delay_ms;
        check_range("target_delay_ms", t, t > 0.0 && t <= 100.0, "0 < target_delay_ms ≤ 100 (RFC 6817)")?;
        let g = self.gain;
        check_range("gain", g, g * GAIN_SCALE >= 1.0 && g <= 1.0, "1/1024 ≤ gain ≤ 1 (RFC 6817)")?;
        check_range("base_history", self.base_history, self.base_history >= 1, "base_history ≥ 1")?;
        check_range("current_filter", self.current_filter, self.current_filter >= 1, "current_filter ≥ 1")?;
        let inc = self.allowed_increase;
        check_range("allowed_increase", inc, inc >= 1, "allowed_increase ≥ 1 (RFC 6817)")?;
        check_range("min_cwnd", self.min_cwnd, self.min_cwnd >= 2, "min_cwnd ≥ 2")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Ledbat::new(self))
    }
}

/// LEDBAT state.
#[derive(Clone, Debug)]
pub struct Ledbat {
    config: LedbatConfig,
    /// TARGET, µs.
    target_us: i64,
    /// GAIN·1024.
    gain: i64,
    /// The last `current_filter` delay samples, µs.
    current: VecDeque<u64>,
    /// Minimum delay of each of the last `base_history` minutes, µs (newest last).
    base: VecDeque<u64>,
    /// The minute the newest bucket belongs to.
    bucket_minute: u64,
    /// Window credit in µs·packets·1024: one packet is worth target·cwnd·1024.
    credit: i64,
    /// Packets in flight before the current ACK.
    prior_in_flight: u32,
    /// Slow start is still allowed (ns-3 `LEDBAT_CAN_SS`).
    can_slow_start: bool,
}

impl Ledbat {
    pub fn new(config: &LedbatConfig) -> Self {
        Ledbat {
            config: config.clone(),
            target_us: (config.target_delay_ms * 1000.0).round().max(1.0) as i64,
            gain: (config.gain * GAIN_SCALE).round().max(1.0) as i64,
            current: VecDeque::new(),
            base: VecDeque::new(),
            bucket_minute: 0,
            credit: 0,
            prior_in_flight: 0,
            can_slow_start: config.slow_start,
        }
    }

    /// RFC 6817 `update_current_delay` and `update_base_delay` with one sample.
    fn add_delay(&mut self, cx: &CcCx, delay_us: u64) {
        if self.current.len() == self.config.current_filter as usize {
            self.current.pop_front();
        }
        self.current.push_back(delay_us);
        let minute = cx.now.as_nanos() / BUCKET_NS;
        match self.base.back_mut() {
            Some(last) if minute == self.bucket_minute => *last = (*last).min(delay_us),
            _ => {
                if self.base.len() == self.config.base_history as usize {
                    self.base.pop_front();
                }
                self.base.push_back(delay_us);
                self.bucket_minute = minute;
            }
        }
    }

    /// Current queuing delay estimate, µs (None before any sample).
    fn queuing_delay(&self) -> Option<u64> {
        let current = self.current.iter().min()?;
        let base = self.base.iter().min()?;
        Some(current.saturating_sub(*base))
    }

    /// The RFC 6817 window update for `acked` packets at queuing delay `q_us`.
    fn ledbat_update(&mut self, cx: &mut CcCx, acked: u32, q_us: u64) {
        let off_target = self.target_us - q_us.min(i64::MAX as u64 / 2) as i64;
        self.credit = self.credit.saturating_add(self.gain.saturating_mul(off_target).saturating_mul(i64::from(acked)));
        let per_packet = (self.target_us * GAIN_SCALE as i64).saturating_mul(i64::from(cx.cwnd));
        let steps = self.credit / per_packet;
        self.credit -= steps * per_packet;
        let cwnd = (i64::from(cx.cwnd) + steps).clamp(0, i64::from(u32::MAX)) as u32;
        // A cwnd-limited sender uses its whole window even with a partial GSO burst held back
        // (TSO deferral counts as cwnd-limited, Linux `tcp_tso_should_defer`).
        let flight = if cx.is_cwnd_limited() { self.prior_in_flight.max(cx.cwnd) } else { self.prior_in_flight };
        let max_allowed = flight.saturating_add(self.config.allowed_increase);
        let bounded = cwnd.min(max_allowed).max(self.config.min_cwnd);
        if bounded != cwnd {
            self.credit = 0;
        }
        cx.cwnd = bounded.min(cx.cwnd_clamp);
        // As ns-3: keep ssthresh below cwnd so that the sender sees congestion avoidance.
        if cx.cwnd <= cx.ssthresh {
            cx.ssthresh = cx.cwnd.saturating_sub(1);
        }
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        LedbatConfig::NAME
    }

    fn init(&mut self, _cx: &mut CcCx) {
        *self = Self::new(&self.config);
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        self.credit = 0;
        reno_ssthresh(cx).max(self.config.min_cwnd)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if cx.cwnd <= 1 && self.config.slow_start {
            self.can_slow_start = true;
        }
        if self.can_slow_start && cx.in_slow_start() {
            if cx.is_cwnd_limited() {
                cx.slow_start(acked);
            }
            return;
        }
        self.can_slow_start = false;
        match self.queuing_delay() {
            Some(q) => self.ledbat_update(cx, acked, q),
            None if cx.is_cwnd_limited() => cx.cong_avoid_ai(cx.cwnd, acked),
            None => {}
        }
    }

    fn pkts_acked(&mut self, cx: &mut CcCx, sample: &AckSample) {
        self.prior_in_flight = sample.in_flight;
        if sample.rtt_us > 0 {
            self.add_delay(cx, sample.rtt_us as u64);
        }
    }

    fn mode(&self) -> Option<&'static str> {
        Some(if self.can_slow_start { "slow_start" } else { "ledbat" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Path;
    use crate::INFINITE_SSTHRESH;
    use tcplab_core::{SimDuration, SimTime};

    const MS: u64 = 1000;

    /// LEDBAT in congestion avoidance at `cwnd` (ssthresh = cwnd).
    fn setup(cwnd: u32) -> (Ledbat, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        let mut l = Ledbat::new(&LedbatConfig::default());
        l.init(&mut cx);
        (l, cx)
    }

    /// A delay sample (RTT, µs) without window processing, with a full flight.
    fn sample(l: &mut Ledbat, cx: &mut CcCx, rtt_us: u64) {
        l.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us: rtt_us as i64, in_flight: cx.cwnd });
    }

    /// `n` ACKs of `acked` packets each with a full flight before each and RTT `rtt_us`.
    fn acks(l: &mut Ledbat, cx: &mut CcCx, n: u32, acked: u32, rtt_us: u64) {
        for _ in 0..n {
            sample(l, cx, rtt_us);
            l.cong_avoid(cx, acked);
        }
    }

    /// Base delay 40 ms, then the filter full of `rtt_us` samples (queuing delay rtt − 40 ms).
    fn with_queue(cwnd: u32, rtt_us: u64) -> (Ledbat, CcCx) {
        let (mut l, mut cx) = setup(cwnd);
        sample(&mut l, &mut cx, 40 * MS);
        for _ in 0..4 {
            sample(&mut l, &mut cx, rtt_us);
        }
        assert_eq!(l.queuing_delay(), Some(rtt_us - 40 * MS));
        (l, cx)
    }

    // docs/validation.md LEDBAT 1
    #[test]
    fn queuing_delay_at_target_holds_cwnd_zero_gains_one_twice_loses_one_per_rtt() {
        // q = TARGET = 100 ms: off_target 0, cwnd never moves.
        let (mut l, mut cx) = with_queue(20, 140 * MS);
        acks(&mut l, &mut cx, 200, 1, 140 * MS);
        assert_eq!((cx.cwnd, l.credit), (20, 0));
        // q = 0: off_target 1 → each packet adds 1/20; 19 ACKs leave 20, the 20th makes 21.
        let (mut l, mut cx) = with_queue(20, 40 * MS);
        acks(&mut l, &mut cx, 19, 1, 40 * MS);
        assert_eq!(cx.cwnd, 20);
        acks(&mut l, &mut cx, 1, 1, 40 * MS);
        assert_eq!((cx.cwnd, l.credit), (21, 0));
        // q = 2·TARGET = 200 ms: off_target −1 → −1 per 20 packets acked.
        let (mut l, mut cx) = with_queue(20, 240 * MS);
        acks(&mut l, &mut cx, 19, 1, 240 * MS);
        assert_eq!(cx.cwnd, 20);
        acks(&mut l, &mut cx, 1, 1, 240 * MS);
        assert_eq!(cx.cwnd, 19);
        // q = 50 ms: off_target ½ → 40 packets acked per +1 at cwnd 20.
        let (mut l, mut cx) = with_queue(20, 90 * MS);
        acks(&mut l, &mut cx, 39, 1, 90 * MS);
        assert_eq!(cx.cwnd, 20);
        acks(&mut l, &mut cx, 1, 1, 90 * MS);
        assert_eq!(cx.cwnd, 21);
        // As ns-3, the first congestion-avoidance ACK put ssthresh just below cwnd (20 − 1).
        assert_eq!(cx.ssthresh, 19);
    }

    #[test]
    fn delays_are_filtered_min_of_4_over_minute_buckets() {
        let (mut l, mut cx) = setup(20);
        for rtt in [50, 60, 70, 80] {
            sample(&mut l, &mut cx, rtt * MS);
        }
        assert_eq!(l.queuing_delay(), Some(0)); // min(50..80) − 50
        sample(&mut l, &mut cx, 90 * MS); // the 50 ms sample leaves the filter
        assert_eq!(l.queuing_delay(), Some(10 * MS));
        // A new minute opens a bucket; the old minimum stays for base_history minutes.
        cx.now = SimTime::ZERO + SimDuration::from_secs(60);
        sample(&mut l, &mut cx, 70 * MS);
        assert_eq!(l.base, [50 * MS, 70 * MS]);
        cx.now = SimTime::ZERO + SimDuration::from_secs(60 * 10);
        sample(&mut l, &mut cx, 75 * MS);
        assert_eq!(l.base.len(), 3);
        for minute in 11..=17 {
            cx.now = SimTime::ZERO + SimDuration::from_secs(60 * minute);
            sample(&mut l, &mut cx, 75 * MS);
        }
        assert_eq!(l.base.len(), 10);
        assert_eq!(l.base.iter().min(), Some(&(50 * MS)));
        cx.now = SimTime::ZERO + SimDuration::from_secs(60 * 18);
        sample(&mut l, &mut cx, 75 * MS); // an 11th bucket: the 50 ms minute is forgotten
        assert_eq!(l.base.iter().min(), Some(&(70 * MS)));
    }

    // docs/validation.md LEDBAT 2
    #[test]
    fn cwnd_stays_within_flight_plus_one_and_min_cwnd() {
        // q = 0 with only 10 in flight before the ACK (app-limited): cwnd = min(20, 10 + 1).
        let (mut l, mut cx) = with_queue(20, 40 * MS);
        cx.is_cwnd_limited = false;
        l.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: 40_000, in_flight: 10 });
        l.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 11);
        // The same flight held back by cwnd (a deferred GSO burst): the window is the flight,
        // and q = 0 adds 1/20 of a packet, kept as credit.
        let (mut l, mut cx) = with_queue(20, 40 * MS);
        l.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: 40_000, in_flight: 10 });
        l.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 20);
        assert!(l.credit > 0);
        // A stretch ACK of 100 packets at q = 0 would add 100/20 = 5; the bound is 20 + 1.
        let (mut l, mut cx) = with_queue(20, 40 * MS);
        acks(&mut l, &mut cx, 1, 100, 40 * MS);
        assert_eq!((cx.cwnd, l.credit), (21, 0));
        // q = 10·TARGET: off_target −9 → −3 at cwnd 3 would reach 0; floor MIN_CWND = 2.
        let (mut l, mut cx) = with_queue(3, 1_040 * MS);
        acks(&mut l, &mut cx, 1, 1, 1_040 * MS);
        assert_eq!(cx.cwnd, 2);
        acks(&mut l, &mut cx, 50, 1, 1_040 * MS);
        assert_eq!(cx.cwnd, 2);
        // Loss halves, not below MIN_CWND: 20 → 10, 3 → 2.
        cx.cwnd = 20;
        assert_eq!(l.ssthresh(&mut cx), 10);
        cx.cwnd = 3;
        assert_eq!(l.ssthresh(&mut cx), 2);
    }

    #[test]
    fn slow_start_only_until_congestion_avoidance_and_again_after_rto() {
        let (mut l, mut cx) = setup(10);
        cx.ssthresh = INFINITE_SSTHRESH;
        assert_eq!(l.mode(), Some("slow_start"));
        acks(&mut l, &mut cx, 10, 1, 40 * MS);
        assert_eq!(cx.cwnd, 20); // standard slow start
        cx.ssthresh = 20; // e.g. recovery ended with cwnd = ssthresh
        acks(&mut l, &mut cx, 1, 1, 40 * MS);
        assert_eq!((l.mode(), cx.ssthresh), (Some("ledbat"), 19));
        // Below ssthresh again (LEDBAT shrank cwnd): no return to slow start.
        cx.ssthresh = 100;
        acks(&mut l, &mut cx, 1, 1, 1_000 * MS);
        assert_eq!(l.mode(), Some("ledbat"));
        // RTO: cwnd 1 re-arms slow start up to ssthresh.
        cx.ssthresh = l.ssthresh(&mut cx);
        cx.cwnd = 1;
        acks(&mut l, &mut cx, 1, 1, 40 * MS);
        assert_eq!((cx.cwnd, l.mode()), (2, Some("slow_start")));
        // Without slow start: congestion avoidance from the first ACK; before any delay
        // sample that is Reno's.
        let mut l = Ledbat::new(&LedbatConfig { slow_start: false, ..LedbatConfig::default() });
        let mut cx = CcCx::new(1500);
        cx.max_packets_out = 10;
        l.cong_avoid(&mut cx, 10); // +1 per cwnd acked, though ssthresh is infinite
        assert_eq!((cx.cwnd, cx.cwnd_cnt, l.mode()), (11, 0, Some("ledbat")));
    }

    #[test]
    fn on_a_path_the_queue_settles_at_the_target_delay() {
        // 1 packet/ms, 40 ms propagation (base RTT 41 ms), 300 packets of buffer. Slow start
        // overflows the buffer once; then LEDBAT holds ≈ 100 ms of queue: cwnd ≈ 41 + 100.
        let ms = SimDuration::from_millis(1);
        let cc = Box::new(Ledbat::new(&LedbatConfig::default()));
        let mut path = Path::new(cc, ms, SimDuration::from_millis(40), Some(300));
        path.run_until(SimTime::ZERO + SimDuration::from_secs(40));
        let lost = path.sender.cx.lost;
        assert!(lost > 0);
        path.run_until(SimTime::ZERO + SimDuration::from_secs(100));
        let cx = &path.sender.cx;
        assert_eq!(cx.lost, lost, "losses after settling");
        assert!((136..=146).contains(&cx.cwnd), "cwnd {}", cx.cwnd);
        let queue_ms = (cx.srtt_us as f64 - 41_000.0) / 1000.0;
        assert!((95.0..=105.0).contains(&queue_ms), "queue {queue_ms} ms");
    }
}
