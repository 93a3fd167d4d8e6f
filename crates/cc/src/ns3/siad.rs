//! TCP SIAD as the siad-mmwave study ran it: the study's own ns-3 port `ns3::TcpSiad` (a
//! TcpNewReno subclass, tcp-siad.cc/.h), `variant = "ns3-study"`, tcp.stack = "ns3" only. Its
//! C++ integer types are kept: u32 window arithmetic wraps where it wraps there, delay products
//! are u64 truncated to u32. Departs from Kühlewind's tcp_siad.c ([`crate::siad`]):
//! - delay = PktsAcked's RTT argument (ns-3's SRTT) in whole ms (truncated) on every ACK,
//!   dupACKs and Recovery included (Linux: now − TSecr per ACK, in cong_avoid only);
//! - α in whole segments/RTT (Linux α·N); after a decrease α = (incthresh − ssthresh)/RTTcurr
//!   in ms, not /N; no OFFSET; ssthresh forced to 20 segments at the first IncreaseWindow; cwnd
//!   capped at 666 segments; α, incthresh, prev_max_cwnd start at 10, not the initial cwnd;
//! - cwnd_max cases reordered, other tests, cwnd − α unguarded; Additional Decrease: α from the
//!   window before the reduction, clamped to cwnd, and a scaled window above incthresh wraps α
//!   and drops cwnd to 2; num_ms only if ConfigNumRtt is 0, num_ms/⌊(RTTcurr+RTTmin)/2⌋ ≥ 20;
//! - 64-bit prev_min_delay (Linux u16); no cwnd-limited test, no undo, BytesInFlight ignored;
//!   IncreaseWindow rounds cwnd and ssthresh down to whole segments (floor 2). A zero divisor
//!   (SIGFPE in the C++: RTT < 1 ms, the (N−1)th Additional Decrease) is taken as 1.

use super::{linux_only, CaEvent, Ns3CongestionOps, Tcb};
use crate::siad::{SiadConfig, SiadVariant};
use tcplab_core::SimDuration;

/// `TcpSiad::default_num_rtt`: Num_RTT when ConfigNumRtt is 0.
const DEFAULT_NUM_RTT: u32 = 20;
/// `TcpSiad::minCwnd`, segments.
const MIN_CWND: u32 = 2;
/// The `INT_MAX` the port initialises its delays to (ms, "no sample").
const NO_DELAY: u64 = i32::MAX as u64;
/// ssthresh forced at the first IncreaseWindow (`isStart`), segments.
const START_SSTHRESH: u32 = 20;
/// `SendCwndClamp` attribute default, segments.
const CWND_CLAMP: u32 = 666;
/// Initial α, incthresh and prev_max_cwnd (`Alpha`, `Incthresh`, `PreviousMaxCwnd` attributes).
const INITIAL_WINDOW: u32 = 10;

/// The ns3 stack's SIAD parameters: the port's attribute defaults (ConfigNumRtt 0, i.e. the
/// built-in 20; ConfigNumMs 0).
pub fn ns3_defaults() -> SiadConfig {
    SiadConfig { num_rtt: 0, num_ms: 0, variant: SiadVariant::Ns3Study }
}

/// Refuses what TcpSiad cannot run: the Linux module, and num_ms beside a nonzero num_rtt
/// (the port reads ConfigNumMs only when ConfigNumRtt is 0).
pub fn check(c: &SiadConfig) -> Result<(), (String, String)> {
    if c.variant == SiadVariant::Linux {
        return Err(linux_only(
            "variant",
            "\"linux\"",
            "the ns3 stack runs the siad-mmwave study's ns-3 port (ns3::TcpSiad, variant = \"ns3-study\"); tcp_siad.c runs on the linux stack",
        ));
    }
    if c.num_ms != 0 && c.num_rtt != 0 {
        return Err((
            "num_ms".to_string(),
            format!(
                "num_ms = {} needs num_rtt = 0 with variant = \"ns3-study\": TcpSiad reads ConfigNumMs only when ConfigNumRtt is 0 (Num_RTT is then at least its built-in 20)",
                c.num_ms
            ),
        ));
    }
    Ok(())
}

/// `a / b`, with a zero divisor taken as 1 (the C++ would raise SIGFPE).
fn div32(a: u32, b: u32) -> u32 {
    a / b.max(1)
}

/// `a / b` in 64 bits, a zero divisor taken as 1.
fn div64(a: u64, b: u64) -> u64 {
    a / b.max(1)
}

/// TcpSiad. Windows, thresholds and α in segments, delays in whole ms.
#[derive(Clone, Debug)]
pub struct Ns3Siad {
    /// `config_num_rtt` (`ConfigNumRtt`); 0 = the built-in 20.
    config_num_rtt: u32,
    /// `configNumMs` (`ConfigNumMs`); 0 = off.
    config_num_ms: u32,
    /// `curr_num_rtt`. The `CurrNumRtt` attribute (0) overrides the constructor's value when
    /// ns-3 builds the object, so it is 0 until the first regular increase (when configured)
    /// or the first GetSsThresh; no reachable path divides by it before then.
    curr_num_rtt: u32,
    /// `alpha`: segments added per RTT.
    alpha: u32,
    /// `incthresh`: target of the linear increase, Fast Increase above.
    incthresh: u32,
    /// `prev_max_cwnd`.
    prev_max_cwnd: u32,
    /// `dec_cnt`: Additional Decreases this epoch.
    dec_cnt: u32,
    /// `min_delay_seen` (attribute default false; the constructor's true is overridden).
    min_delay_seen: bool,
    /// `increase_performed`.
    increase_performed: bool,
    /// `snd_cwnd_cnt`: segments acked towards the next increment.
    snd_cwnd_cnt: u32,
    /// `snd_cwnd_clamp`.
    snd_cwnd_clamp: u32,
    /// `prev_delay`, `curr_delay`, `min_delay`, `curr_min_delay`, ms.
    prev_delay: u64,
    curr_delay: u64,
    min_delay: u64,
    curr_min_delay: u64,
    /// `prev_min_delay1..3`.
    prev_min_delay: [u64; 3],
    /// `isStart`: no IncreaseWindow yet.
    is_start: bool,
}

impl Ns3Siad {
    /// A TcpSiad as ns-3's object factory leaves it (attribute defaults over the constructor),
    /// with ConfigNumRtt = `num_rtt` and ConfigNumMs = `num_ms`.
    pub fn new(config: &SiadConfig) -> Self {
        debug_assert!(config.variant == SiadVariant::Ns3Study, "ns3::parse refuses variant linux");
        Ns3Siad {
            config_num_rtt: config.num_rtt,
            config_num_ms: config.num_ms,
            curr_num_rtt: 0,
            alpha: INITIAL_WINDOW,
            incthresh: INITIAL_WINDOW,
            prev_max_cwnd: INITIAL_WINDOW,
            dec_cnt: 0,
            min_delay_seen: false,
            increase_performed: false,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: CWND_CLAMP,
            prev_delay: NO_DELAY,
            curr_delay: NO_DELAY,
            min_delay: NO_DELAY,
            curr_min_delay: NO_DELAY,
            prev_min_delay: [0; 3],
            is_start: true,
        }
    }

    /// The Additional Decrease branch of `IncreaseWindow`: the window of one RTT ago
    /// (ssthresh) scaled by min_delay/curr_delay, less the larger of the new α and
    /// cwnd/(N − dec_cnt). Returns (cwnd, ssthresh).
    fn additional_decrease(&mut self, ssthresh: u32) -> (u32, u32) {
        self.dec_cnt += 1;
        self.snd_cwnd_cnt = 0;
        let left = self.curr_num_rtt.wrapping_sub(self.dec_cnt);
        // No OFFSET; the u64 quotient is truncated to u32 as the C++ assignment does.
        let mut cwnd = div64(self.min_delay.wrapping_mul(u64::from(ssthresh)), self.curr_delay) as u32;
        if cwnd > MIN_CWND {
            // incthresh − cwnd wraps when the scaled window is above the target; the divisor
            // is 0 on the (N−1)th decrease of an epoch.
            let alpha_new = div32(self.incthresh.wrapping_sub(cwnd), left.wrapping_sub(1)).max(1);
            let reduce = div32(cwnd, left);
            if reduce >= alpha_new {
                // α from the window before the reduction (Linux: after it).
                self.alpha = div32(self.incthresh.wrapping_sub(cwnd), left).max(1);
                if cwnd > reduce.wrapping_add(MIN_CWND) {
                    cwnd -= reduce;
                } else {
                    cwnd = MIN_CWND;
                    self.min_delay_seen = true;
                }
            } else {
                self.alpha = alpha_new;
                if cwnd > alpha_new.wrapping_add(MIN_CWND) {
                    cwnd -= self.alpha;
                } else {
                    cwnd = MIN_CWND;
                    self.min_delay_seen = true;
                }
            }
        } else {
            cwnd = MIN_CWND;
            self.min_delay_seen = true;
            self.alpha = div32(self.incthresh.wrapping_sub(cwnd), left);
        }
        // Reaching the target would take more than doubling per RTT: clamp α, stop decreasing.
        if self.alpha > cwnd {
            self.alpha = cwnd;
            self.min_delay_seen = true;
        }
        self.alpha = self.alpha.max(1);
        (cwnd, cwnd - 1)
    }

    /// The regular-increase branch of `IncreaseWindow`: +1 segment per cwnd/α segments acked
    /// (slow start included, where α = cwnd), up to the clamp, then α adapts. Returns cwnd.
    fn regular_increase(&mut self, mut cwnd: u32, ssthresh: u32, segments_acked: u32) -> u32 {
        self.snd_cwnd_cnt = self.snd_cwnd_cnt.wrapping_add(segments_acked);
        if self.config_num_rtt != 0 {
            self.curr_num_rtt = self.config_num_rtt;
        }
        let next = div32(cwnd, self.alpha).max(1);
        if self.snd_cwnd_cnt < next {
            return cwnd;
        }
        let n = self.snd_cwnd_cnt / next;
        if cwnd < self.snd_cwnd_clamp {
            let inc = segments_acked.min(n).min(self.snd_cwnd_clamp - cwnd);
            cwnd += inc;
            self.increase_performed = true;
            let before = cwnd - inc;
            let crossed = |threshold: u32| cwnd >= threshold && before < threshold;
            if crossed(ssthresh) && self.incthresh > ssthresh {
                // Leaving slow start below the target: reach it in N RTTs.
                self.alpha = div32(self.incthresh - ssthresh, self.curr_num_rtt).max(1);
            } else if (crossed(ssthresh) && self.incthresh <= ssthresh) || crossed(self.incthresh) {
                // No target above ssthresh, or Fast Increase starts.
                self.alpha = 1;
            } else if cwnd > self.incthresh && self.alpha < cwnd / 2 {
                // Fast Increase: α grows with every increment, up to cwnd/2.
                self.alpha += inc;
            } else if cwnd < ssthresh {
                self.alpha = cwnd;
            }
            self.alpha = self.alpha.max(1);
        }
        self.snd_cwnd_cnt = self.snd_cwnd_cnt.wrapping_sub(n.wrapping_mul(next));
        cwnd
    }

    /// `GetSsThresh`'s estimate of the window when congestion happened, about one RTT before
    /// it was detected, in the port's order of cases.
    fn cwnd_max(&self, cwnd: u32, ssthresh: u32) -> u32 {
        if !self.increase_performed {
            return cwnd;
        }
        if self.alpha == 1 && cwnd >= self.incthresh && self.incthresh > ssthresh {
            // Fast Increase just started (α reset to 1): remove the linear α.
            cwnd.wrapping_sub(div32(self.incthresh - ssthresh, self.curr_num_rtt))
        } else if self.alpha >= cwnd / 2 && cwnd > self.incthresh {
            // Fast Increase at its top rate, checked before slow start.
            cwnd - cwnd / 3
        } else if self.alpha >= cwnd && cwnd <= ssthresh {
            // Slow start at full rate (Linux: either test).
            cwnd / 2
        } else if (cwnd > self.incthresh || cwnd < ssthresh) && self.alpha != 1 {
            cwnd.wrapping_sub(self.alpha / 2)
        } else {
            cwnd.wrapping_sub(self.alpha)
        }
    }

    /// Four strictly rising minima in a row: a standing queue was taken for base delay; fall
    /// back to the oldest (`GetSsThresh`; 64-bit records).
    fn guard_min_delay(&mut self) {
        let md = self.min_delay;
        let [p1, p2, p3] = self.prev_min_delay;
        if md < p1 || md < p2 || md < p3 {
            self.prev_min_delay = [0; 3];
        } else if md > p1 {
            if p1 == 0 {
                self.prev_min_delay[0] = md;
            } else if p2 == 0 {
                self.prev_min_delay[1] = md;
            } else if md > p2 {
                if p3 == 0 {
                    self.prev_min_delay[2] = md;
                } else if md > p3 {
                    self.min_delay = p1;
                    self.prev_min_delay[1] = 0;
                    self.prev_min_delay[2] = 0;
                }
            }
        }
    }
}

impl Ns3CongestionOps for Ns3Siad {
    fn name(&self) -> &'static str {
        "siad"
    }

    /// `TcpSiad::GetSsThresh`: the estimated maximum scaled by min_delay/curr_delay, the new
    /// Num_RTT, target and α. The BytesInFlight argument is ignored.
    fn get_ss_thresh(&mut self, tcb: &Tcb, _bytes_in_flight: u32) -> u32 {
        self.snd_cwnd_cnt = 0;
        let ssthresh = tcb.ssthresh_segments();
        let cwnd = tcb.cwnd_segments();
        let cwnd_max = self.cwnd_max(cwnd, ssthresh);
        self.guard_min_delay();
        let delay_known = self.min_delay != NO_DELAY && self.curr_delay != 0;
        let s = if delay_known { (self.min_delay.wrapping_mul(u64::from(cwnd_max)) / self.curr_delay) as u32 } else { cwnd_max / 2 }
            .max(MIN_CWND);
        self.curr_num_rtt = if self.config_num_rtt != 0 {
            self.config_num_rtt
        } else if self.config_num_ms != 0 && delay_known {
            let num_rtt = div64(u64::from(self.config_num_ms), (self.curr_delay + self.min_delay) / 2) as u32;
            num_rtt.max(DEFAULT_NUM_RTT)
        } else {
            DEFAULT_NUM_RTT
        };
        // trend = cwnd_max − prev_max_cwnd as a signed 32-bit value; cwnd_max + trend in u32.
        let trend = cwnd_max.wrapping_sub(self.prev_max_cwnd);
        self.incthresh = if self.prev_max_cwnd < cwnd_max.wrapping_mul(2) { cwnd_max.wrapping_add(trend).max(s) } else { s };
        // α over the delay in ms (Linux: over N), truncated to u32.
        self.alpha = div64(u64::from(self.incthresh.wrapping_sub(s)), self.curr_delay).max(1) as u32;
        self.prev_max_cwnd = cwnd_max;
        s.wrapping_mul(tcb.segment_size)
    }

    /// `TcpSiad::IncreaseWindow`: Additional Decrease or regular increase, then cwnd and
    /// ssthresh written back as whole segments, at least 2.
    fn increase_window(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        if self.is_start {
            self.is_start = false;
            tcb.ssthresh = tcb.segment_size.wrapping_mul(START_SSTHRESH);
        }
        let cwnd = tcb.cwnd_segments();
        let ssthresh = tcb.ssthresh_segments();
        // Slow start or Fast Increase: no Additional Decrease.
        if cwnd > self.incthresh || cwnd < ssthresh {
            self.min_delay_seen = true;
        }
        let due = cwnd > ssthresh.wrapping_add(self.alpha).wrapping_add(2)
            && !self.min_delay_seen
            && self.dec_cnt < self.curr_num_rtt.wrapping_sub(1);
        let (cwnd, ssthresh) =
            if due { self.additional_decrease(ssthresh) } else { (self.regular_increase(cwnd, ssthresh, segments_acked), ssthresh) };
        tcb.cwnd = cwnd.max(MIN_CWND).wrapping_mul(tcb.segment_size);
        tcb.ssthresh = ssthresh.max(MIN_CWND).wrapping_mul(tcb.segment_size);
    }

    /// `TcpSiad::PktsAcked`: two-sample minimum filter and minimum tracking on the RTT
    /// argument in whole ms (truncated, as `Time::GetMilliSeconds`).
    fn pkts_acked(&mut self, tcb: &mut Tcb, _segments_acked: u32, rtt: SimDuration) {
        let delay = rtt.as_nanos() / 1_000_000;
        self.curr_delay = delay.min(self.prev_delay);
        self.prev_delay = delay;
        if delay <= self.min_delay {
            self.min_delay = delay;
            self.curr_min_delay = delay;
            self.min_delay_seen = true;
        } else if delay <= self.curr_min_delay {
            self.curr_min_delay = delay;
            // The same minimum about an RTT into the epoch: the old one is stale.
            if tcb.cwnd_segments() > tcb.ssthresh_segments().wrapping_add(self.alpha).wrapping_add(1) {
                self.min_delay = delay;
                self.min_delay_seen = true;
            }
        }
    }

    /// `TcpSiad::CwndEvent(CA_EVENT_COMPLETE_CWR)`: a new epoch arms the Additional Decrease.
    fn cwnd_event(&mut self, _tcb: &mut Tcb, event: CaEvent) {
        if event == CaEvent::CompleteCwr {
            self.curr_min_delay = NO_DELAY;
            self.dec_cnt = 0;
            self.min_delay_seen = false;
            self.increase_performed = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CcConfig;
    use serde_json::json;

    const SEG: u32 = 1000;

    /// The ns3 stack's default SIAD (ConfigNumRtt 0) on a Tcb of `cwnd` and `ssthresh`
    /// segments, past its first IncreaseWindow.
    fn siad(cwnd: u32, ssthresh: u32) -> (Ns3Siad, Tcb) {
        let CcConfig::Siad(config) = crate::ns3::parse(json!("siad")).unwrap() else { unreachable!() };
        let mut s = Ns3Siad::new(&config);
        s.is_start = false;
        s.curr_num_rtt = DEFAULT_NUM_RTT;
        let mut t = Tcb::new(SEG, 10, ssthresh * SEG);
        t.cwnd = cwnd * SEG;
        (s, t)
    }

    fn segs(t: &Tcb) -> (u32, u32) {
        (t.cwnd / SEG, t.ssthresh / SEG)
    }

    #[test]
    fn ssthresh_is_forced_to_20_segments_at_the_first_increase_only() {
        let CcConfig::Siad(config) = crate::ns3::parse(json!("siad")).unwrap() else { unreachable!() };
        let mut s = Ns3Siad::new(&config);
        let mut t = Tcb::new(SEG, 10, u32::MAX);
        // isStart: ssthresh 0xffffffff → 20 segments. cwnd 10 < 20: slow start, α = 10,
        // next = 10/10 = 1, one segment acked → cwnd 11 and α = cwnd = 11.
        s.increase_window(&mut t, 1);
        assert_eq!(segs(&t), (11, 20));
        assert_eq!(s.alpha, 11);
        // Slow start counts segments, not ACKs: a delayed ACK of 2 adds 2 (ns-3 NewReno: 1).
        s.increase_window(&mut t, 2);
        assert_eq!(segs(&t), (13, 20));
        // Not forced again.
        t.ssthresh = 50 * SEG;
        s.increase_window(&mut t, 1);
        assert_eq!(segs(&t), (14, 50));
    }

    #[test]
    fn leaving_slow_start_at_the_forced_ssthresh_resets_alpha_to_1() {
        // incthresh is the initial 10 ≤ ssthresh 20: crossing ssthresh gives α = 1; then
        // cwnd 21 > incthresh 10 and α 1 < 21/2: Fast Increase, α += inc each increment.
        let (mut s, mut t) = siad(19, 20);
        s.alpha = 19;
        s.increase_window(&mut t, 2); // next = 19/19 = 1, n = 2, inc 2 → 21
        assert_eq!((segs(&t), s.alpha), ((21, 20), 1));
        // next = 21/1 = 21 segments for the next increment.
        for _ in 0..20 {
            s.increase_window(&mut t, 1);
        }
        assert_eq!(segs(&t).0, 21);
        s.increase_window(&mut t, 1);
        assert_eq!((segs(&t).0, s.alpha), (22, 2));
    }

    #[test]
    fn linear_increase_adds_alpha_segments_per_rtt() {
        // cwnd 50, ssthresh 40, incthresh 60, α 2: next = ⌊50/2⌋ = 25 segments per
        // increment, then ⌊51/2⌋ = 25: 50 single-segment ACKs (one RTT) add 2 = α.
        let (mut s, mut t) = siad(50, 40);
        (s.alpha, s.incthresh, s.min_delay_seen) = (2, 60, true);
        for _ in 0..24 {
            s.increase_window(&mut t, 1);
        }
        assert_eq!(segs(&t).0, 50);
        s.increase_window(&mut t, 1);
        assert_eq!(segs(&t).0, 51);
        for _ in 0..25 {
            s.increase_window(&mut t, 1);
        }
        assert_eq!((segs(&t), s.alpha, s.snd_cwnd_cnt), ((52, 40), 2, 0));
    }

    #[test]
    fn cwnd_is_capped_at_666_segments_and_rounded_to_segments() {
        // Slow start at 665 with α = cwnd: next 1, n 2, inc = min(2, 2, 666 − 665) = 1.
        let (mut s, mut t) = siad(665, 1000);
        s.alpha = 665;
        s.increase_window(&mut t, 2);
        assert_eq!(segs(&t).0, 666);
        // At the clamp nothing is added; the count is spent all the same (n·next = 2).
        s.increase_window(&mut t, 2);
        assert_eq!((t.cwnd, s.snd_cwnd_cnt), (666 * SEG, 0));
        // A window above the clamp (Recovery's) is left as it is, less its partial segment.
        t.cwnd = 700 * SEG + 999;
        s.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 700 * SEG);
    }

    /// Before a loss in linear increase: cwnd 102, ssthresh 60, incthresh 110, α 2,
    /// prev_max_cwnd 90, grown since the last decrease.
    fn before_loss(min_delay: u64, curr_delay: u64) -> (Ns3Siad, Tcb) {
        let (mut s, t) = siad(102, 60);
        (s.alpha, s.incthresh, s.prev_max_cwnd, s.increase_performed) = (2, 110, 90, true);
        (s.min_delay, s.curr_delay) = (min_delay, curr_delay);
        (s, t)
    }

    #[test]
    fn decrease_scales_by_the_delay_ratio_without_offset_and_alpha_is_over_the_delay_in_ms() {
        // Linear increase (no earlier case applies): cwnd_max = 102 − α 2 = 100.
        // ssthresh = ⌊40·100/80⌋ = 50 (Linux 49: OFFSET). trend = 100 − 90 = 10,
        // incthresh = max(100 + 10, 50) = 110, α = max(1, ⌊(110 − 50)/80 ms⌋) = 1 (Linux: 60/N
        // = 3).
        let (mut s, t) = before_loss(40, 80);
        s.snd_cwnd_cnt = 7;
        assert_eq!(s.get_ss_thresh(&t, 1), 50 * SEG);
        assert_eq!((s.incthresh, s.alpha, s.prev_max_cwnd, s.curr_num_rtt, s.snd_cwnd_cnt), (110, 1, 100, 20, 0));
        // Same ratio at 20 ms: ⌊10·100/20⌋ = 50, α = ⌊60/20⌋ = 3; at 6 ms: ⌊60/6⌋ = 10.
        let (mut s, t) = before_loss(10, 20);
        assert_eq!((s.get_ss_thresh(&t, 1), s.alpha), (50 * SEG, 3));
        let (mut s, t) = before_loss(3, 6);
        assert_eq!((s.get_ss_thresh(&t, 1), s.alpha), (50 * SEG, 10));
        // No delay sample: ⌊100/2⌋ = 50; α = max(1, ⌊60/INT_MAX⌋) = 1.
        let (mut s, t) = before_loss(NO_DELAY, NO_DELAY);
        assert_eq!((s.get_ss_thresh(&t, 1), s.alpha), (50 * SEG, 1));
    }

    #[test]
    fn cwnd_max_checks_fast_increase_before_slow_start() {
        // First loss in slow start: cwnd 18, α = cwnd = 18, ssthresh 20, incthresh still 10.
        // α 18 ≥ 18/2 and 18 > 10 → cwnd_max = 18 − ⌊18/3⌋ = 12 (Linux: slow start, 9).
        // No delay info: ssthresh ⌊12/2⌋ = 6; trend 12 − 10 = 2, incthresh = max(14, 6) = 14.
        let (mut s, t) = siad(18, 20);
        (s.alpha, s.increase_performed) = (18, true);
        assert_eq!(s.get_ss_thresh(&t, 1), 6 * SEG);
        assert_eq!((s.prev_max_cwnd, s.incthresh), (12, 14));
        // Fast Increase just started: α 1, cwnd 110 ≥ incthresh 110 > ssthresh 60:
        // cwnd_max = 110 − ⌊50/20⌋ = 108, ⌊108/2⌋ = 54.
        let (mut s, t) = siad(110, 60);
        (s.alpha, s.incthresh, s.increase_performed) = (1, 110, true);
        assert_eq!(s.get_ss_thresh(&t, 1), 54 * SEG);
    }

    #[test]
    fn num_ms_applies_only_without_num_rtt_over_the_halved_delay_sum() {
        // ConfigNumMs 4000, RTTcurr 81, RTTmin 40: ⌊4000/⌊121/2⌋⌋ = ⌊4000/60⌋ = 66
        // (Linux ⌊8000/121⌋ = 66); 1000 ms: ⌊1000/60⌋ = 16 → floor 20.
        for (num_ms, n) in [(4000, 66), (1000, 20)] {
            let (mut s, t) = before_loss(40, 81);
            s.config_num_ms = num_ms;
            s.get_ss_thresh(&t, 1);
            assert_eq!(s.curr_num_rtt, n);
        }
    }

    /// After a decrease to ssthresh = cwnd = 50 with min_delay 40: the Additional Decrease is
    /// armed (COMPLETE_CWR), the samples at cwnd 50 are 80 ms (80.9 truncated), then cwnd has
    /// grown to `cwnd` with no new sample (one at or below 80 ms above cwnd 50 + α 1 + 1 would
    /// rebase min_delay).
    fn armed(cwnd: u32) -> (Ns3Siad, Tcb) {
        let (mut s, mut t) = siad(50, 50);
        (s.alpha, s.incthresh, s.min_delay) = (1, 110, 40);
        s.cwnd_event(&mut t, CaEvent::CompleteCwr);
        let rtt = SimDuration::from_micros(80_900);
        s.pkts_acked(&mut t, 1, rtt);
        s.pkts_acked(&mut t, 1, rtt);
        assert_eq!((s.curr_delay, s.min_delay, s.curr_min_delay, s.min_delay_seen), (80, 40, 80, false));
        t.cwnd = cwnd * SEG;
        (s, t)
    }

    #[test]
    fn additional_decrease_when_the_minimum_delay_is_not_seen_again() {
        let (mut s, mut t) = armed(53);
        s.increase_window(&mut t, 1); // 53 ≯ 53: regular increase
        assert_eq!((s.dec_cnt, segs(&t).0), (0, 53));
        let (mut s, mut t) = armed(54);
        // ⌊40·50/80⌋ = 25 (no OFFSET); α' = max(1, ⌊(110 − 25)/(20 − 1 − 1)⌋) = ⌊85/18⌋ = 4;
        // reduce = ⌊25/19⌋ = 1 < 4 → α = 4, cwnd 25 − 4 = 21, ssthresh 20.
        // (Linux: 24 after OFFSET, α 4, cwnd 20, ssthresh 19.)
        s.increase_window(&mut t, 1);
        assert_eq!((segs(&t), s.alpha, s.dec_cnt, s.min_delay_seen), ((21, 20), 4, 1, false));
    }

    #[test]
    fn additional_decrease_by_cwnd_over_remaining_rtts_takes_alpha_before_the_reduction() {
        // N 4, one decrease made: ⌊40·100/50⌋ = 80; dec_cnt 2: α' = ⌊(110 − 80)/1⌋ = 30,
        // reduce = ⌊80/2⌋ = 40 ≥ 30 → α = ⌊(110 − 80)/2⌋ = 15 from cwnd 80 (Linux: from 40,
        // 35); cwnd 40, ssthresh 39.
        let (mut s, mut t) = siad(104, 100);
        (s.config_num_rtt, s.curr_num_rtt, s.dec_cnt, s.alpha, s.incthresh) = (4, 4, 1, 1, 110);
        (s.min_delay, s.curr_delay) = (40, 50);
        s.increase_window(&mut t, 1);
        assert_eq!((segs(&t), s.alpha, s.dec_cnt), ((40, 39), 15, 2));
        // The third (N − 1) decrease divides by N − dec_cnt − 1 = 0, a SIGFPE in the C++,
        // taken as 1 here: ⌊40·39/50⌋ = 31, α' = 110 − 31 = 79, reduce = ⌊31/1⌋ = 31 < 79,
        // 31 ≯ 81 → cwnd 2, α clamped to 2, ssthresh 1 → floor 2.
        (s.alpha, s.min_delay_seen) = (1, false);
        t.cwnd = 43 * SEG;
        s.increase_window(&mut t, 1);
        assert_eq!((segs(&t), s.alpha, s.dec_cnt, s.min_delay_seen), ((2, 2), 2, 3, true));
        // No fourth: dec_cnt 3 ≮ N − 1.
        s.min_delay_seen = false;
        t.cwnd = 10 * SEG;
        s.increase_window(&mut t, 1);
        assert_eq!(s.dec_cnt, 3);
    }

    #[test]
    fn a_scaled_window_above_incthresh_wraps_alpha_and_collapses_to_two_segments() {
        // Only with min_delay above curr_delay (a rebased minimum): ssthresh 45 < cwnd 50 ≤
        // incthresh 50, ⌊60·45/50⌋ = 54 > 50, so (50 − 54) wraps to 4294967292 and α' =
        // 4294967292/18 = 238609294; reduce ⌊54/19⌋ = 2 < α'; 54 ≯ α' + 2 → cwnd 2, α clamped
        // to 2, ssthresh 1 → 2. (Linux: α 1, 54 − OFFSET = 53, cwnd 53 − ⌊53/19⌋ = 51.)
        let (mut s, mut t) = siad(50, 45);
        (s.alpha, s.incthresh, s.min_delay, s.curr_delay) = (1, 50, 60, 50);
        s.increase_window(&mut t, 1);
        assert_eq!((segs(&t), s.alpha, s.dec_cnt, s.min_delay_seen), ((2, 2), 2, 1, true));
    }

    #[test]
    fn the_delay_is_the_rtt_argument_in_whole_ms_and_a_repeated_minimum_rebases() {
        let (mut s, mut t) = siad(50, 40);
        // 40.9 ms → 40: the first sample is the minimum.
        s.pkts_acked(&mut t, 1, SimDuration::from_micros(40_900));
        assert_eq!((s.min_delay, s.curr_delay, s.prev_delay), (40, 40, 40));
        s.cwnd_event(&mut t, CaEvent::CompleteCwr);
        // 60 then 50: curr_delay = min of the last two; 50 ≤ curr_min 60 but cwnd 50 ≯ 40 + α 10
        // + 1 = 51: no rebase.
        s.pkts_acked(&mut t, 1, SimDuration::from_millis(60));
        s.pkts_acked(&mut t, 1, SimDuration::from_millis(50));
        assert_eq!((s.min_delay, s.curr_min_delay, s.curr_delay), (40, 50, 50));
        // At cwnd 52 > 51 a repeat of 50 rebases min_delay.
        t.cwnd = 52 * SEG;
        s.pkts_acked(&mut t, 1, SimDuration::from_millis(50));
        assert_eq!((s.min_delay, s.min_delay_seen), (50, true));
    }

    #[test]
    fn ns3_config_defaults_variant_and_refusals() {
        assert_eq!(crate::ns3::parse(json!("siad")).unwrap(), CcConfig::Siad(ns3_defaults()));
        let c = crate::ns3::parse(json!({"kind": "siad", "num_rtt": 30})).unwrap();
        assert_eq!(c, CcConfig::Siad(SiadConfig { num_rtt: 30, ..ns3_defaults() }));
        assert!(crate::ns3::parse(json!({"kind": "siad", "variant": "ns3-study", "num_ms": 2000})).is_ok());
        let (key, e) = crate::ns3::parse(json!({"kind": "siad", "variant": "linux"})).unwrap_err();
        assert_eq!(key, "variant");
        assert!(e.starts_with("variant = \"linux\" needs tcp.stack = \"linux\""), "{e}");
        let (key, e) = crate::ns3::parse(json!({"kind": "siad", "num_rtt": 20, "num_ms": 2000})).unwrap_err();
        assert_eq!(key, "num_ms");
        assert!(e.contains("needs num_rtt = 0"), "{e}");
        assert_eq!(crate::ns3::build(&c, tcplab_core::SimRng::stream(1, "cc"), crate::ns3::Ns3Version::V3_44).name(), "siad");
    }
}
