//! TCP Westwood+ as Linux tcp_westwood.c (Mascolo, Casetti, Gerla et al.,
//! "TCP Westwood: bandwidth estimation for TCP", MobiCom 2001; Grieco & Mascolo, "Performance
//! evaluation and comparison of Westwood+, New Reno, and Vegas TCP congestion control", CCR
//! 2004). Reno growth; the acked bytes of each RTT window (at least 50 ms) give a bandwidth
//! sample, smoothed by two cascaded ⅞ low-pass filters into `bw_est` (bytes per jiffy). After
//! fast recovery or ECN CWR (COMPLETE_CWR) cwnd = ssthresh = bw_est·RTT_min, and after an RTO
//! ssthresh = bw_est·RTT_min; entering recovery still halves ssthresh (Reno) for PRR.
//!
//! Linux jiffies (HZ = 1000: 1 jiffy = 1 ms, RTT rounded up to whole jiffies) and integer
//! filters. Linux counts bytes by sequence number; here sequence numbers are segments of one
//! MSS, so bytes = segments·MSS. As in Linux the bytes of the connection's first ACK are not
//! counted (it only sets the reference `snd_una`), so the first window's sample is slightly
//! low. Linux's u32 fields would wrap beyond ≈ 4 GB per window or bw_est·RTT_min ≥ 2³²; here
//! the arithmetic is 64-bit and the window in packets saturates.
//!
//! ns-3 TcpWestwoodPlus differs: one sample per RTT from a timer, a Tustin filter (gain
//! 0.9) instead of the two ⅞ filters, ssthresh = BWE·RTT_min set at the loss itself, no 50 ms
//! floor. Linux is followed.

use crate::config::{AlgorithmConfig, ParamDoc};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::{AckFlags, AckSample, CcCx, CongestionControl, CwndEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Shortest bandwidth-sampling window, jiffies (Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20, 50 ms).
const RTT_WINDOW_MIN: u64 = 50;
/// RTT assumed before the first sample, jiffies (Linux `TCP_WESTWOOD_INIT_RTT` = 20·HZ).
const INIT_RTT: u64 = 20_000;
/// µs per jiffy (CONFIG_HZ_1000).
const US_PER_JIFFY: u64 = 1000;

/// Parameters of Westwood+ (none: Linux tcp_westwood.c has no module parameters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WestwoodConfig {}

impl AlgorithmConfig for WestwoodConfig {
    const NAME: &'static str = "westwood";
    const SUMMARY: &'static str = "TCP Westwood+, Linux tcp_westwood.c (Reno with ssthresh = estimated bandwidth × min RTT)";
    const PARAMS: &'static [ParamDoc] = &[];
    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Westwood::new())
    }
}

/// Westwood+ state (Linux `struct westwood`).
#[derive(Clone, Debug)]
pub struct Westwood {
    /// First filter stage, bytes per jiffy.
    bw_ns_est: u64,
    /// Bandwidth estimate, bytes per jiffy.
    bw_est: u64,
    /// Start of the current sampling window, jiffies.
    rtt_win_start: u64,
    /// Bytes acked in the current window.
    bk: u64,
    /// snd_una at the previous ACK, segments.
    snd_una: u32,
    /// Bytes credited for dupACKs, not yet covered by a cumulative ACK.
    accounted: u64,
    /// Latest RTT, jiffies (never 0).
    rtt: u64,
    /// Minimum RTT, jiffies.
    rtt_min: u64,
    /// No ACK seen yet: the next one only sets `snd_una`.
    first_ack: bool,
    /// The next ACK restarts `rtt_min` from the latest RTT (after an RTO).
    reset_rtt_min: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Self::new()
    }
}

/// Linux `westwood_do_filter`: a ⅞ low-pass step.
fn low_pass(a: u64, b: u64) -> u64 {
    (7 * a + b) >> 3
}

impl Westwood {
    pub fn new() -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_start: 0,
            bk: 0,
            snd_una: 0,
            accounted: 0,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    /// Linux `westwood_update_window` + `westwood_filter`: once the window exceeds both the
    /// RTT and 50 ms, its bytes over its length become a bandwidth sample.
    fn update_window(&mut self, cx: &CcCx) {
        if self.first_ack {
            self.snd_una = cx.snd_una;
            self.first_ack = false;
        }
        let now = cx.now.as_jiffies();
        let delta = now.saturating_sub(self.rtt_win_start);
        if delta > self.rtt.max(RTT_WINDOW_MIN) {
            let sample = self.bk / delta;
            if self.bw_ns_est == 0 && self.bw_est == 0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = low_pass(self.bw_ns_est, sample);
                self.bw_est = low_pass(self.bw_est, self.bw_ns_est);
            }
            self.bk = 0;
            self.rtt_win_start = now;
        }
    }

    /// Linux `westwood_acked_count` (slow-path ACKs): a dupACK counts one MSS, which later
    /// cumulative ACKs pay back so that every byte is counted once.
    fn acked_count(&mut self, cx: &CcCx) -> u64 {
        let mss = u64::from(cx.mss);
        let mut cumul = u64::from(cx.snd_una.wrapping_sub(self.snd_una)) * mss;
        if cumul == 0 {
            self.accounted += mss;
            cumul = mss;
        }
        if cumul > mss {
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = mss;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        cumul
    }

    /// Linux `tcp_westwood_bw_rttmin`: bw_est·RTT_min in packets, at least 2.
    fn bw_rttmin(&self, cx: &CcCx) -> u32 {
        let packets = self.bw_est * self.rtt_min / u64::from(cx.mss);
        packets.clamp(2, u64::from(u32::MAX)) as u32
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        WestwoodConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Westwood::new();
        self.rtt_win_start = cx.now.as_jiffies();
        self.snd_una = cx.snd_una;
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        reno_ssthresh(cx)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        reno_cong_avoid(cx, acked);
    }

    /// Linux `tcp_westwood_ack`: the fast path counts snd_una's advance, the slow path
    /// (dupACKs, SACKs) goes through `acked_count`.
    fn in_ack_event(&mut self, cx: &mut CcCx, flags: AckFlags) {
        self.update_window(cx);
        self.bk += if flags.slowpath { self.acked_count(cx) } else { u64::from(cx.snd_una.wrapping_sub(self.snd_una)) * u64::from(cx.mss) };
        self.snd_una = cx.snd_una;
        self.rtt_min = if self.reset_rtt_min { self.rtt } else { self.rtt_min.min(self.rtt) };
        self.reset_rtt_min = false;
    }

    fn pkts_acked(&mut self, _cx: &mut CcCx, sample: &AckSample) {
        if sample.rtt_us > 0 {
            // Linux usecs_to_jiffies rounds up.
            self.rtt = (sample.rtt_us as u64).div_ceil(US_PER_JIFFY);
        }
    }

    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        match ev {
            CwndEvent::CompleteCwr => {
                cx.ssthresh = self.bw_rttmin(cx);
                cx.cwnd = cx.ssthresh;
            }
            CwndEvent::Loss => {
                cx.ssthresh = self.bw_rttmin(cx);
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Ack, Sender};
    use crate::CaState;
    use tcplab_core::{SimDuration, SimTime};

    fn at_ms(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    /// One ACK at `now`: in_ack_event then pkts_acked, as the sender orders them.
    fn ack(w: &mut Westwood, cx: &mut CcCx, now: SimTime, newly_acked: u32, rtt_us: i64) {
        cx.now = now;
        cx.snd_una += newly_acked;
        w.in_ack_event(cx, AckFlags { slowpath: newly_acked == 0, ..AckFlags::default() });
        w.pkts_acked(cx, &AckSample { pkts_acked: newly_acked, rtt_us, in_flight: 10 });
    }

    // docs/validation.md Westwood+ 1
    #[test]
    fn a_constant_ack_stream_measures_its_rate() {
        // One 1500-byte packet ACKed per jiffy from jiffy 0 (B = 1500 B/jiffy), RTT 20 ms,
        // so windows last max(20, 50) + 1 = 51 jiffies.
        let mut cx = CcCx::new(1500);
        let mut w = Westwood::new();
        w.init(&mut cx);
        for j in 0..=50 {
            ack(&mut w, &mut cx, at_ms(j), 1, 20_000);
        }
        // The first window closes at jiffy 51 (delta 51 > 50). It holds the ACKs of jiffies
        // 1–50 (the very first ACK only sets snd_una, Linux `first_ack`): ⌊75000/51⌋ = 1470,
        // which fills both filter stages.
        assert_eq!((w.bw_ns_est, w.bw_est), (0, 0));
        ack(&mut w, &mut cx, at_ms(51), 1, 20_000);
        assert_eq!((w.bw_ns_est, w.bw_est, w.rtt, w.rtt_min), (1470, 1470, 20, 20));
        // Every later window holds exactly 51 ACKs over 51 jiffies: sample B = 1500.
        // bw_ns = ⌊(7·1470 + 1500)/8⌋ = 1473, bw = ⌊(7·1470 + 1473)/8⌋ = 1470.
        for j in 52..=102 {
            ack(&mut w, &mut cx, at_ms(j), 1, 20_000);
        }
        assert_eq!((w.bw_ns_est, w.bw_est), (1473, 1470));
        // Next: bw_ns = ⌊(7·1473 + 1500)/8⌋ = 1476, bw = ⌊(7·1470 + 1476)/8⌋ = 1470.
        for j in 103..=153 {
            ack(&mut w, &mut cx, at_ms(j), 1, 20_000);
        }
        assert_eq!((w.bw_ns_est, w.bw_est), (1476, 1470));
        // An estimate at B stays at B: (7·1500 + 1500)/8 = 1500 in both stages.
        w.bw_ns_est = 1500;
        w.bw_est = 1500;
        for j in 154..=204 {
            ack(&mut w, &mut cx, at_ms(j), 1, 20_000);
        }
        assert_eq!((w.bw_ns_est, w.bw_est, w.rtt_win_start), (1500, 1500, 204));
    }

    #[test]
    fn windows_last_at_least_one_rtt() {
        // RTT 80 ms > 50 ms: the first window closes only once delta > 80.
        let mut cx = CcCx::new(1500);
        let mut w = Westwood::new();
        w.init(&mut cx);
        for j in 0..=80 {
            ack(&mut w, &mut cx, at_ms(j), 1, 79_001); // rounds up to 80 jiffies
        }
        assert_eq!((w.rtt, w.bw_est), (80, 0));
        ack(&mut w, &mut cx, at_ms(81), 1, 79_001);
        // ACKs of jiffies 1–80: 80·1500/81 = 1481.
        assert_eq!(w.bw_est, 1481);
    }

    #[test]
    fn dupacks_count_one_mss_each_and_are_paid_back() {
        let mut cx = CcCx::new(1500);
        let mut w = Westwood::new();
        w.init(&mut cx);
        ack(&mut w, &mut cx, at_ms(0), 1, 20_000); // first ACK: reference only
        for _ in 0..3 {
            ack(&mut w, &mut cx, at_ms(1), 0, -1);
        }
        assert_eq!((w.bk, w.accounted), (4500, 4500));
        // A cumulative ACK of 4 packets (6000 B) pays back 4500: counts 1500.
        cx.now = at_ms(2);
        cx.snd_una += 4;
        w.in_ack_event(&mut cx, AckFlags { slowpath: true, ..AckFlags::default() });
        assert_eq!((w.bk, w.accounted), (6000, 0));
        // Three dupACKs then a cumulative ACK of 2 packets (3000 ≤ 4500 accounted): one MSS.
        for _ in 0..3 {
            ack(&mut w, &mut cx, at_ms(3), 0, -1);
        }
        cx.snd_una += 2;
        w.in_ack_event(&mut cx, AckFlags { slowpath: true, ..AckFlags::default() });
        assert_eq!((w.bk, w.accounted), (6000 + 4500 + 1500, 1500));
    }

    /// A sender with cwnd 60 in flight whose estimate says bw_est·RTT_min = 1500 B/jiffy ·
    /// 100 jiffies / 1500 B = 100 packets.
    fn sender_at_100_packets_bdp() -> Sender<Westwood> {
        let mut s = Sender::new(Box::new(Westwood::new()), CcCx::new(1500));
        s.cx.cwnd = 60;
        s.init();
        for _ in 0..60 {
            s.send(SimTime::ZERO);
        }
        let w = &mut s.cc;
        (w.bw_ns_est, w.bw_est, w.rtt, w.rtt_min, w.reset_rtt_min) = (1500, 1500, 100, 100, false);
        s
    }

    // docs/validation.md Westwood+ 2
    #[test]
    fn recovery_halves_then_completes_at_bandwidth_times_min_rtt() {
        let mut s = sender_at_100_packets_bdp();
        // A SACK of one packet reports one lost: Recovery with Reno's ssthresh 60/2 = 30 (PRR).
        let sack = Ack { pkts_acked: 0, delivered: 1, losses: 1, rtt_us: 100_000, ece: false, newest: None };
        s.ack(at_ms(1), &sack);
        assert_eq!((s.cx.ca_state, s.cx.ssthresh), (CaState::Recovery, 30));
        // Recovery ends (snd_una reaches high_seq 60): COMPLETE_CWR sets cwnd = ssthresh = 100.
        let cum = Ack { pkts_acked: 60, delivered: 58, losses: 0, rtt_us: 100_000, ece: false, newest: None };
        s.ack(at_ms(2), &cum);
        assert_eq!((s.cx.ca_state, s.cx.cwnd, s.cx.ssthresh), (CaState::Open, 100, 100));
    }

    // docs/validation.md Westwood+ 2
    #[test]
    fn rto_sets_ssthresh_to_bandwidth_times_min_rtt_and_restarts_min_rtt() {
        let mut s = sender_at_100_packets_bdp();
        s.rto(at_ms(1));
        assert_eq!((s.cx.cwnd, s.cx.ssthresh), (1, 100));
        // The next ACK takes RTT_min afresh from the latest RTT, even a larger one (150 ms).
        s.cc.rtt = 150;
        let ack = Ack { pkts_acked: 1, delivered: 1, losses: 0, rtt_us: 150_000, ece: false, newest: None };
        s.ack(at_ms(2), &ack);
        assert_eq!(s.cc.rtt_min, 150);
        // Without a reset the minimum holds: a 200 ms RTT leaves it at 150.
        let ack = Ack { rtt_us: 200_000, ..ack };
        s.ack(at_ms(3), &ack);
        s.ack(at_ms(4), &ack);
        assert_eq!((s.cc.rtt, s.cc.rtt_min), (200, 150));
    }

    #[test]
    fn bandwidth_window_is_at_least_two_packets() {
        let mut cx = CcCx::new(1500);
        let mut w = Westwood::new();
        w.init(&mut cx);
        w.cwnd_event(&mut cx, CwndEvent::CompleteCwr);
        assert_eq!((cx.cwnd, cx.ssthresh), (2, 2));
    }
}
