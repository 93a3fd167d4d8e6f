//! TCP SIAD, Scalable Increase Adaptive Decrease (M. Kühlewind's Linux
//! module tcp_siad.c, written for ~3.x kernels; paper: Kühlewind, arXiv 1612.07947).
//!
//! Every congestion epoch is meant to last Num_RTT (N) RTTs whatever the bandwidth: the
//! decrease scales the window by RTTmin/RTTcurr (emptying the queue), the linear increase
//! rate α = A/N is chosen so that cwnd reaches the target `incthresh` (the last maximum
//! plus its trend) after N RTTs, beyond it α grows by α/cwnd per ACK up to cwnd/2 (Fast
//! Increase: "doubling per RTT", ×2 to ×2.75 per round in the integer code), and if the
//! minimum delay is not seen again after the decrease, Additional Decreases follow (at most
//! N − 1 per epoch). The Linux module is normative; its integer arithmetic is reproduced,
//! including the u16 records of earlier minima. `mode()`: "slow_start", "linear",
//! "fast_increase", "additional_decrease" (Additional Decreases made and still armed).
//!
//! Simulator choices: the per-ACK delay (Linux: now − TSecr in jiffies, else srtt) is the
//! jiffy difference between now and the send time of this ACK's RTT sample (HZ = 1000,
//! 1 jiffy = 1 ms), or SRTT in ms if the ACK has none; packets acked are counted from
//! snd_una progress in segments, as the module does with bytes (the sender's `acked`, which
//! includes SACKed packets, is not used); the cwnd-limited test is the modern
//! `tcp_is_cwnd_limited`. Products are taken in 64 bits (Linux u32 would wrap only for
//! cwnd·N ≳ 4·10⁹). Two divisions Linux can make by zero are guarded: the ratio's divisor
//! RTTcurr (never 0 when an Additional Decrease can run) and N − dec_cnt − 1, which is 0 on
//! the (N−1)th Additional Decrease of an epoch (the first one when N = 2); it is taken as 1,
//! so that decrease ends at MIN_CWND, which is where the paper's red = cwnd/(N − dec_cnt)
//! leads. The per-socket `TCP_SIAD_NUM_RTT` override is not offered: `num_rtt` is already
//! per flow (it differs only in outranking `num_ms`); the sysctl's floor of 2 is a
//! validation error. With RTTs below 1 ms the delay is 0 ms and, as in Linux, every
//! decrease goes to MIN_CWND.
//!
//! The siad-mmwave study's own ns-3 port (`ns3::TcpSiad`, tcp-siad.cc) deviates (integer α,
//! forced initial ssthresh 20, α divided by the delay instead of N, no OFFSET, reordered
//! cwnd_max cases, different Additional Decrease order, no cwnd-limited check, no undo); it is
//! `variant = "ns3-study"`, on tcp.stack = "ns3" only ([`crate::ns3::siad`]); this module is
//! `variant = "linux"`.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::{AckSample, CaState, CcCx, CongestionControl, CwndEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Smallest window, packets (tcp_siad.c `MIN_CWND`).
const MIN_CWND: u32 = 2;
/// Packets subtracted after each delay-ratio reduction, a rounding guard (tcp_siad.c `OFFSET`).
const OFFSET: u32 = 1;
/// Smallest Num_RTT (tcp_siad.c `MIN_RTT`, the floor of the sysctl).
const MIN_NUM_RTT: u32 = 2;
/// Unset delay, ms (tcp_siad.c initialises the delays to `INT_MAX`).
const NO_DELAY: u32 = i32::MAX as u32;

/// Which SIAD implementation runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SiadVariant {
    /// Kühlewind's Linux module tcp_siad.c, tcp.stack = "linux".
    #[default]
    #[serde(rename = "linux")]
    Linux,
    /// The siad-mmwave study's ns-3 port ns3::TcpSiad (tcplab's crates/cc/src/ns3/siad.rs),
    /// tcp.stack = "ns3" only.
    #[serde(rename = "ns3-study")]
    Ns3Study,
}

/// Parameters of SIAD (the tcp_siad.c module parameters, or the TcpSiad attributes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SiadConfig {
    /// Num_RTT: desired length of a congestion epoch in RTTs (count). Default 20. With
    /// variant "ns3-study" it is TcpSiad's ConfigNumRtt, where 0 (the ns3 stack's default)
    /// means its built-in 20 and lets num_ms act.
    pub num_rtt: u32,
    /// Desired time between congestion events in ms; 0 = off. When set, each decrease raises
    /// Num_RTT to ⌊2·num_ms/(RTTcurr + RTTmin)⌋ if that is larger. Default 0. With variant
    /// "ns3-study" (TcpSiad's ConfigNumMs) only when num_rtt is 0, as
    /// max(20, ⌊num_ms/⌊(RTTcurr + RTTmin)/2⌋⌋).
    pub num_ms: u32,
    /// Implementation: "linux" (Kühlewind's tcp_siad.c) or "ns3-study" (the siad-mmwave
    /// study's ns-3 port ns3::TcpSiad, tcp.stack = "ns3" only). Default "linux"; on tcp.stack
    /// = "ns3" the default is "ns3-study", the only one it runs.
    pub variant: SiadVariant,
}

impl Default for SiadConfig {
    fn default() -> Self {
        // tcp_siad.c: NUM_RTT 20, num_ms 0.
        SiadConfig { num_rtt: 20, num_ms: 0, variant: SiadVariant::Linux }
    }
}

impl AlgorithmConfig for SiadConfig {
    const NAME: &'static str = "siad";
    const SUMMARY: &'static str =
        "TCP SIAD, Scalable Increase Adaptive Decrease: congestion events every num_rtt RTTs (Kühlewind's tcp_siad.c)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "num_rtt", unit: "RTTs", doc: "desired RTTs between congestion events (Num_RTT)" },
        ParamDoc { name: "num_ms", unit: "ms", doc: "desired ms between congestion events, raises Num_RTT; 0 = off" },
        ParamDoc {
            name: "variant",
            unit: "",
            doc: "\"linux\" (Kühlewind's tcp_siad.c) or \"ns3-study\" (the siad-mmwave study's ns-3 port ns3::TcpSiad, tcp.stack = \"ns3\" only; its num_rtt 0 = built-in 20)",
        },
    ];

    fn validate(&self) -> Result<(), String> {
        match self.variant {
            SiadVariant::Linux => check_range("num_rtt", self.num_rtt, self.num_rtt >= MIN_NUM_RTT, "num_rtt ≥ 2"),
            // TcpSiad's ConfigNumRtt takes any value (0 = its built-in 20).
            SiadVariant::Ns3Study => Ok(()),
        }
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        assert!(
            self.variant == SiadVariant::Linux,
            "siad variant \"ns3-study\" runs only on the ns3 stack (CcConfig::check_linux refuses it here)"
        );
        Box::new(Siad::new(self))
    }
}

/// SIAD state (tcp_siad.c `struct siad`). Delays in ms (jiffies).
#[derive(Clone, Debug)]
pub struct Siad {
    /// Num_RTT from the configuration (`default_num_rtt`).
    default_num_rtt: u64,
    /// `default_num_ms`, 0 = off.
    num_ms: u64,
    /// N, the current Num_RTT (`curr_num_rtt`).
    n: u64,
    /// A = α·N (`increase`): α packets per RTT with a resolution of 1/N.
    increase: u64,
    /// Estimated window at the previous congestion event, packets.
    prev_max_cwnd: u32,
    /// Target of the linear increase; Fast Increase above it, packets.
    incthresh: u32,
    /// snd_una at the previous ACK.
    prior_snd_una: u32,
    /// Previous delay sample (for the two-sample minimum).
    prev_delay: u32,
    /// Minimum of the last two delay samples (0 before any).
    curr_delay: u32,
    /// Base delay estimate (NO_DELAY before any sample).
    min_delay: u32,
    /// Minimum delay since the last reduction ended.
    curr_min_delay: u32,
    /// Additional Decreases in this epoch.
    dec_cnt: u64,
    /// The minimum delay was seen since the last reduction (no Additional Decrease).
    min_delay_seen: bool,
    /// The window grew since the last reduction ended.
    increase_performed: bool,
    /// `prev_min_delay1..3`: earlier minima if they rose monotonically (u16 as in Linux).
    prev_min_delay: [u16; 3],
    /// RTT sample of the ACK being processed, µs (-1 = none), from `pkts_acked`.
    ack_rtt_us: i64,
    /// Label for the cc_state column; None outside Open/Disorder.
    mode: Option<&'static str>,
}

/// ⌊min_delay·value/curr_delay⌋, the adaptive decrease (paper eq. 3), saturated to u32.
fn delay_scaled(value: u32, min_delay: u32, curr_delay: u32) -> u32 {
    let scaled = u64::from(min_delay) * u64::from(value) / u64::from(curr_delay.max(1));
    scaled.min(u64::from(u32::MAX)) as u32
}

/// `cwnd − min(cwnd − MIN_CWND, growth)`: the window before `growth`, not below MIN_CWND.
fn minus_growth(cwnd: u32, growth: u64) -> u32 {
    cwnd - cwnd.saturating_sub(MIN_CWND).min(growth.min(u64::from(u32::MAX)) as u32)
}

impl Siad {
    pub fn new(config: &SiadConfig) -> Self {
        Self::fresh(u64::from(config.num_rtt.max(MIN_NUM_RTT)), u64::from(config.num_ms))
    }

    /// Everything but the configuration in its initial state (the cwnd-dependent part is
    /// set by `init`).
    fn fresh(default_num_rtt: u64, num_ms: u64) -> Self {
        Siad {
            default_num_rtt,
            num_ms,
            n: default_num_rtt,
            increase: default_num_rtt,
            prev_max_cwnd: 0,
            incthresh: 0,
            prior_snd_una: 0,
            prev_delay: NO_DELAY,
            curr_delay: 0,
            min_delay: NO_DELAY,
            curr_min_delay: NO_DELAY,
            dec_cnt: 0,
            min_delay_seen: true,
            increase_performed: false,
            prev_min_delay: [0; 3],
            ack_rtt_us: -1,
            mode: None,
        }
    }

    /// α in whole packets per RTT.
    fn alpha(&self) -> u64 {
        self.increase / self.n
    }

    /// A for reaching incthresh from `cwnd` in `rtts` RTTs, at least 1 packet per RTT
    /// (paper eq. 4). Linux subtracts unsigned; a window above the target gives α = 1.
    fn rate_to_target(&self, cwnd: u32, rtts: u64) -> u64 {
        let gap = u64::from(self.incthresh.saturating_sub(cwnd));
        (gap * self.n / rtts.max(1)).max(self.n)
    }

    /// The phase of the window for the cc_state column.
    fn phase(&self, cx: &CcCx) -> &'static str {
        if cx.cwnd < cx.ssthresh {
            "slow_start"
        } else if cx.cwnd > self.incthresh {
            "fast_increase"
        } else if self.dec_cnt > 0 && !self.min_delay_seen {
            "additional_decrease"
        } else {
            "linear"
        }
    }

    /// This ACK's delay in ms (per-ACK step 1, docs/models.md, SIAD): jiffies between the sample's
    /// send time and now, as now − TSecr; SRTT if the ACK carries no sample.
    fn take_delay_ms(&mut self, cx: &CcCx) -> u32 {
        let rtt_us = std::mem::replace(&mut self.ack_rtt_us, -1);
        let ms = if rtt_us >= 0 {
            let now_us = cx.now.as_micros();
            let sent_us = now_us.saturating_sub(rtt_us as u64);
            now_us / 1000 - sent_us / 1000
        } else {
            cx.srtt_us / 1000
        };
        ms.min(u64::from(NO_DELAY - 1)) as u32
    }

    /// Per-ACK steps 2–4 (docs/models.md, SIAD): delay filter, minimum tracking and the Additional
    /// Decrease guard.
    fn track_delay(&mut self, cx: &CcCx, d: u32) {
        self.curr_delay = d.min(self.prev_delay);
        self.prev_delay = d;
        if self.min_delay == NO_DELAY || d <= self.min_delay {
            self.min_delay = d;
            self.curr_min_delay = d;
            self.min_delay_seen = true;
        } else if d <= self.curr_min_delay {
            self.curr_min_delay = d;
            // The same minimum more than one RTT after the decrease: the old one is stale.
            if u64::from(cx.cwnd) > u64::from(cx.ssthresh) + self.alpha() + 1 {
                self.min_delay = d;
                self.min_delay_seen = true;
            }
        }
        // No Additional Decrease in Fast Increase or slow start.
        if cx.cwnd > self.incthresh || cx.cwnd < cx.ssthresh {
            self.min_delay_seen = true;
        }
    }

    /// Per-ACK step 7 trigger: about one RTT of increase after the (last) decrease and still no
    /// sample at the minimum delay, at most N − 1 times per epoch.
    fn additional_decrease_due(&self, cx: &CcCx) -> bool {
        u64::from(cx.cwnd) > u64::from(cx.ssthresh) + self.alpha() + 2 && !self.min_delay_seen && self.dec_cnt + 1 < self.n
    }

    /// `cwnd − by` if that leaves more than MIN_CWND, else MIN_CWND and no more decreases.
    fn reduce_by(&mut self, cwnd: u32, by: u64) -> u32 {
        if by + u64::from(MIN_CWND) < u64::from(cwnd) {
            cwnd - by as u32
        } else {
            self.min_delay_seen = true;
            MIN_CWND
        }
    }

    /// Per-ACK step 7: the window of one RTT ago (ssthresh) scaled by RTTmin/RTTcurr, minus OFFSET,
    /// minus the larger of the new α and cwnd/(N − dec_cnt) (paper eqs. 3–5).
    fn additional_decrease(&mut self, cx: &mut CcCx) {
        self.dec_cnt += 1;
        cx.cwnd_cnt = 0;
        let left = self.n - self.dec_cnt;
        let scaled = delay_scaled(cx.ssthresh, self.min_delay, self.curr_delay);
        let cwnd = if scaled > MIN_CWND + OFFSET {
            let cwnd = scaled - OFFSET;
            // Assumes one more reduction by the new α: N − dec_cnt − 1 RTTs remain.
            self.increase = self.rate_to_target(cwnd, left - 1);
            let alpha = self.alpha();
            let red = u64::from(cwnd) / left;
            if red < alpha {
                self.reduce_by(cwnd, alpha)
            } else {
                let cwnd = self.reduce_by(cwnd, red);
                self.increase = self.rate_to_target(cwnd, left);
                cwnd
            }
        } else {
            self.min_delay_seen = true;
            self.increase = self.rate_to_target(MIN_CWND, left);
            MIN_CWND
        };
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd - 1;
        // Reaching the target would need more than doubling per RTT: stop decreasing.
        if self.increase > u64::from(cwnd) * self.n {
            self.min_delay_seen = true;
        }
    }

    /// Per-ACK step 8: +1 per cwnd/α packets acked (slow start included), then adapt α.
    fn increase(&mut self, cx: &mut CcCx, acked_pkts: u32) {
        cx.cwnd_cnt = cx.cwnd_cnt.saturating_add(acked_pkts);
        let next = (u64::from(cx.cwnd) * self.n / self.increase).max(1) as u32;
        if cx.cwnd_cnt < next {
            return;
        }
        let steps = cx.cwnd_cnt / next;
        if cx.cwnd < cx.cwnd_clamp {
            let inc = acked_pkts.min(steps).min(cx.cwnd_clamp - cx.cwnd);
            cx.cwnd += inc;
            self.increase_performed = true;
            self.adapt_rate(cx, inc);
        }
        cx.cwnd_cnt -= steps * next;
    }

    /// Per-ACK step 8 a–d after cwnd grew by `inc`.
    fn adapt_rate(&mut self, cx: &CcCx, inc: u32) {
        let (cwnd, before) = (cx.cwnd, cx.cwnd - inc);
        let crossed = |threshold: u32| cwnd >= threshold && before < threshold;
        let n = self.n;
        if crossed(cx.ssthresh) && self.incthresh > cx.ssthresh {
            // (a) leaving slow start: reach incthresh in N RTTs (paper eq. 2).
            self.increase = u64::from(self.incthresh - cx.ssthresh).max(n);
        } else if crossed(cx.ssthresh) || crossed(self.incthresh) {
            // (b) no target above ssthresh, or Fast Increase starts: α = 1.
            self.increase = n;
        } else if cwnd > self.incthresh && self.increase < u64::from(cwnd >> 1) * n {
            // (c) Fast Increase: α grows by α/cwnd per ACK (paper eq. 1), up to cwnd/2.
            self.increase += u64::from(inc) * n;
        } else if cwnd < cx.ssthresh {
            // (d) slow start: α = cwnd.
            self.increase = u64::from(cwnd) * n;
        }
    }

    /// `ssthresh` step 2 (docs/models.md, SIAD): the window when congestion happened, about one RTT before its detection.
    fn estimate_cwnd_max(&self, cx: &CcCx) -> u32 {
        let cwnd = cx.cwnd;
        if !self.increase_performed {
            return cwnd;
        }
        let n = self.n;
        if self.increase >= u64::from(cwnd) * n || cwnd <= cx.ssthresh {
            cwnd >> 1
        } else if cwnd > self.incthresh && self.increase == u64::from(cwnd >> 1) * n {
            cwnd - cwnd / 3
        } else if cwnd >= self.incthresh && self.incthresh > cx.ssthresh && self.increase == n {
            cwnd - (u64::from(self.incthresh - cx.ssthresh) / n) as u32
        } else if cwnd > self.incthresh {
            minus_growth(cwnd, self.alpha() >> 1)
        } else {
            minus_growth(cwnd, self.alpha())
        }
    }

    /// `ssthresh` step 3: four strictly rising minima in a row mean a standing queue has been taken
    /// for base delay; fall back to the oldest. Linux keeps them as u16 (truncating).
    fn guard_min_delay(&mut self) {
        let md = self.min_delay;
        let [p1, p2, p3] = self.prev_min_delay.map(u32::from);
        if md < p1 || md < p2 || md < p3 {
            self.prev_min_delay = [0; 3];
        } else if md > p1 {
            let stored = md as u16;
            if p1 == 0 {
                self.prev_min_delay[0] = stored;
            } else if p2 == 0 {
                self.prev_min_delay[1] = stored;
            } else if md > p2 {
                if p3 == 0 {
                    self.prev_min_delay[2] = stored;
                } else if md > p3 {
                    self.min_delay = p1;
                    self.prev_min_delay[1] = 0;
                    self.prev_min_delay[2] = 0;
                }
            }
        }
    }
}

impl CongestionControl for Siad {
    fn name(&self) -> &'static str {
        SiadConfig::NAME
    }

    /// Linux `init`: α = cwnd, target and previous maximum = the initial window.
    fn init(&mut self, cx: &mut CcCx) {
        *self = Self::fresh(self.default_num_rtt, self.num_ms);
        self.increase = u64::from(cx.cwnd) * self.n;
        self.prev_max_cwnd = cx.cwnd;
        self.incthresh = cx.cwnd;
        self.prior_snd_una = cx.snd_una;
        self.mode = Some(self.phase(cx));
    }

    /// Linux `ssthresh`: adaptive decrease of the estimated maximum, new Num_RTT, target and α.
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        cx.cwnd_cnt = 0;
        let cwnd_max = self.estimate_cwnd_max(cx);
        self.guard_min_delay();
        let delay_known = self.min_delay != NO_DELAY && self.curr_delay != 0;
        let s = if delay_known { delay_scaled(cwnd_max, self.min_delay, self.curr_delay) } else { cwnd_max >> 1 };
        let s = if s > MIN_CWND + OFFSET { s - OFFSET } else { MIN_CWND };
        self.n = if self.num_ms != 0 && delay_known {
            let mean_rtts = 2 * self.num_ms / (u64::from(self.curr_delay) + u64::from(self.min_delay));
            self.default_num_rtt.max(mean_rtts)
        } else {
            self.default_num_rtt
        };
        // Extrapolate the change of the maximum (signed trend), at least s.
        let (max, prev) = (i64::from(cwnd_max), i64::from(self.prev_max_cwnd));
        self.incthresh = if prev < 2 * max { (2 * max - prev).max(i64::from(s)).min(i64::from(u32::MAX)) as u32 } else { s };
        self.increase = u64::from(self.incthresh - s).max(self.n);
        self.prev_max_cwnd = cwnd_max;
        s
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, _acked: u32) {
        let d = self.take_delay_ms(cx);
        self.track_delay(cx, d);
        let acked_pkts = cx.snd_una.wrapping_sub(self.prior_snd_una).max(1);
        self.prior_snd_una = cx.snd_una;
        if cx.is_cwnd_limited() {
            if self.additional_decrease_due(cx) {
                self.additional_decrease(cx);
            } else {
                self.increase(cx, acked_pkts);
            }
        }
        if matches!(cx.ca_state, CaState::Open | CaState::Disorder) {
            self.mode = Some(self.phase(cx));
        }
    }

    fn pkts_acked(&mut self, _cx: &mut CcCx, sample: &AckSample) {
        self.ack_rtt_us = sample.rtt_us;
    }

    /// Only for the cc_state label: in CWR/Recovery/Loss the sender's state is shown.
    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        self.mode = matches!(new_state, CaState::Open | CaState::Disorder).then(|| self.phase(cx));
    }

    /// Linux `cwnd_event(CA_EVENT_COMPLETE_CWR)`: the end of a reduction arms the Additional Decrease check for the new epoch.
    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        if ev == CwndEvent::CompleteCwr {
            self.prior_snd_una = cx.snd_una;
            self.curr_min_delay = NO_DELAY;
            self.dec_cnt = 0;
            self.min_delay_seen = false;
            self.increase_performed = false;
        }
    }

    /// Linux `undo_cwnd`: restore the target, forget the last one.
    fn undo_cwnd(&mut self, _cx: &mut CcCx) -> u32 {
        let cwnd = self.incthresh;
        self.incthresh = self.prev_max_cwnd;
        self.min_delay_seen = true;
        cwnd
    }

    fn mode(&self) -> Option<&'static str> {
        self.mode
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Path;
    use tcplab_core::{SimDuration, SimTime};

    const MS: SimDuration = SimDuration::from_millis(1);

    /// An initialised SIAD with Num_RTT `num_rtt` on a cwnd-limited connection at `cwnd`,
    /// 10 s into the run.
    fn setup(num_rtt: u32, cwnd: u32) -> (Siad, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.now = SimTime::ZERO + SimDuration::from_secs(10);
        cx.cwnd = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        cx.srtt_us = 40_000;
        let mut siad = Siad::new(&SiadConfig { num_rtt, ..SiadConfig::default() });
        siad.init(&mut cx);
        (siad, cx)
    }

    /// One ACK of one packet, 1 ms after the previous one, with an RTT sample of `rtt_ms`.
    fn ack(siad: &mut Siad, cx: &mut CcCx, rtt_ms: u32) {
        cx.now += MS;
        cx.snd_una += 1;
        cx.max_packets_out = cx.cwnd;
        siad.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us: i64::from(rtt_ms) * 1000, in_flight: cx.cwnd });
        siad.cong_avoid(cx, 1);
    }

    /// One round trip: as many ACKs as the window at its start.
    fn round(siad: &mut Siad, cx: &mut CcCx, rtt_ms: u32) {
        for _ in 0..cx.cwnd {
            ack(siad, cx, rtt_ms);
        }
    }

    /// docs/validation.md SIAD 1's state: linear increase at cwnd 102 with α = 2 (A = 40, N = 20),
    /// ssthresh 60, incthresh 110, grown since the last reduction, min_delay 40 ms,
    /// curr_delay `curr_ms` (NO_DELAY: no delay information).
    fn before_decrease(min_ms: u32, curr_ms: u32) -> (Siad, CcCx) {
        let (mut siad, mut cx) = setup(20, 102);
        cx.ssthresh = 60;
        siad.increase = 40;
        siad.incthresh = 110;
        siad.increase_performed = true;
        siad.min_delay = min_ms;
        siad.curr_delay = curr_ms;
        (siad, cx)
    }

    /// docs/validation.md SIAD 2's epoch: the decrease of `before_decrease(40, 80)` with prev_max_cwnd 90,
    /// then the end of recovery as the sender does it (cwnd = ssthresh, COMPLETE_CWR, Open).
    fn after_decrease() -> (Siad, CcCx) {
        let (mut siad, mut cx) = before_decrease(40, 80);
        siad.prev_max_cwnd = 90;
        cx.ssthresh = siad.ssthresh(&mut cx);
        cx.cwnd = cx.ssthresh;
        siad.cwnd_event(&mut cx, CwndEvent::CompleteCwr);
        siad.set_state(&mut cx, CaState::Open);
        (siad, cx)
    }

    // docs/validation.md SIAD 1
    #[test]
    fn decrease_scales_the_estimated_maximum_by_the_delay_ratio() {
        // Linear increase (A < cwnd·N, cwnd ≤ incthresh): cwnd_max = 102 − min(100, α = 2) = 100.
        // ⌊40·100/80⌋ = 50 → 49 after OFFSET.
        let (mut siad, mut cx) = before_decrease(40, 80);
        assert_eq!(siad.ssthresh(&mut cx), 49);
        assert_eq!((siad.prev_max_cwnd, cx.cwnd_cnt), (100, 0));
        // ⌊40·100/100⌋ − 1 = 39.
        let (mut siad, mut cx) = before_decrease(40, 100);
        assert_eq!(siad.ssthresh(&mut cx), 39);
        // No delay information: ⌊100/2⌋ − 1 = 49.
        let (mut siad, mut cx) = before_decrease(NO_DELAY, 80);
        assert_eq!(siad.ssthresh(&mut cx), 49);
        // Never below MIN_CWND: ⌊40·3/80⌋ = 1 → 2.
        let (mut siad, mut cx) = before_decrease(40, 80);
        cx.cwnd = 3;
        assert_eq!(siad.ssthresh(&mut cx), 2);
    }

    #[test]
    fn cwnd_max_removes_the_growth_of_the_last_rtt() {
        // Without delay information s = ⌊cwnd_max/2⌋ − 1; cwnd_max is kept as prev_max_cwnd.
        let cwnd_max = |cwnd: u32, ssthresh: u32, increase: u64, performed: bool| {
            let (mut siad, mut cx) = before_decrease(NO_DELAY, 80);
            (cx.cwnd, cx.ssthresh, siad.increase, siad.increase_performed) = (cwnd, ssthresh, increase, performed);
            siad.ssthresh(&mut cx);
            siad.prev_max_cwnd
        };
        // No growth since the last reduction: the window itself.
        assert_eq!(cwnd_max(102, 60, 40, false), 102);
        // Slow start (cwnd ≤ ssthresh) or α ≥ cwnd: half.
        assert_eq!(cwnd_max(102, 200, 40, true), 51);
        assert_eq!(cwnd_max(102, 60, 102 * 20, true), 51);
        // Fast Increase at its limit α = ⌊120/2⌋: 120 − 120/3 = 80.
        assert_eq!(cwnd_max(120, 60, 60 * 20, true), 80);
        // Fast Increase just entered (α reset to 1): minus the old α ⌊(110 − 60)/20⌋ = 2.
        assert_eq!(cwnd_max(110, 60, 20, true), 108);
        // Fast Increase, α = 10: minus α/2.
        assert_eq!(cwnd_max(120, 60, 200, true), 115);
        // Linear increase, α = 2: minus α (docs/validation.md SIAD 1).
        assert_eq!(cwnd_max(102, 60, 40, true), 100);
    }

    // docs/validation.md SIAD 2, the target
    #[test]
    fn target_extrapolates_the_trend_of_the_maxima() {
        // prev_max 90, cwnd_max 100: trend 10, incthresh max(110, 49) = 110, A = 110 − 49 = 61.
        let (siad, cx) = after_decrease();
        assert_eq!((cx.ssthresh, siad.incthresh, siad.increase, siad.n), (49, 110, 61, 20));
        assert_eq!(siad.prev_max_cwnd, 100);
        // A falling maximum: prev_max 150 → trend −50, incthresh max(50, 49) = 50, A = max(20, 1).
        // prev_max ≥ 2·cwnd_max: no extrapolation, incthresh = s.
        for (prev_max, incthresh) in [(150, 50), (200, 49)] {
            let (mut siad, mut cx) = before_decrease(40, 80);
            siad.prev_max_cwnd = prev_max;
            assert_eq!(siad.ssthresh(&mut cx), 49);
            assert_eq!((siad.incthresh, siad.increase), (incthresh, 20));
        }
    }

    // docs/validation.md SIAD 2, the rate
    #[test]
    fn linear_increase_reaches_incthresh_after_num_rtt_rounds_then_fast_increase() {
        let (mut siad, mut cx) = after_decrease();
        // α = 61/20 = 3.05: +1 every ⌊cwnd·20/61⌋ ≈ cwnd/3.05 packets, i.e. 3 per round; the
        // 0.05s accumulate in cwnd_cnt and give a 4th in round 20, which reaches 110.
        for k in 1..=19 {
            round(&mut siad, &mut cx, 40);
            assert_eq!((cx.cwnd, siad.mode()), (49 + 3 * k, Some("linear")), "round {k}");
        }
        round(&mut siad, &mut cx, 40);
        assert_eq!(cx.cwnd, 110);
        // At the crossing α is reset to 1 (A = N).
        assert_eq!(siad.increase, 20);
        // Fast Increase: +1 to α per increment of cwnd (α += α/cwnd per ACK) until α reaches
        // cwnd/2. Per round α goes 1 → 2 → 4 (doubling), then the compounding within a round
        // makes it ×2.75: 11, 31, 87, until the cap ⌊294/2⌋ = 147.
        let mut alphas = vec![];
        for _ in 0..7 {
            round(&mut siad, &mut cx, 40);
            alphas.push((siad.alpha(), cx.cwnd));
            assert_eq!(siad.mode(), Some("fast_increase"));
        }
        let expect = [(2, 111), (4, 113), (11, 120), (31, 140), (87, 196), (147, 294), (220, 441)];
        assert_eq!(alphas, expect);
        // Capped: α stays at ⌊cwnd/2⌋ (1.5× per round).
        assert!(alphas.iter().all(|&(alpha, cwnd)| alpha <= u64::from(cwnd / 2)));
    }

    /// ACKs with RTT samples `first` then `rest` (ms) until `stop` holds; returns the window
    /// before the ACK that made it hold.
    fn ack_until(siad: &mut Siad, cx: &mut CcCx, first: u32, rest: u32, stop: impl Fn(&Siad) -> bool) -> u32 {
        let mut rtt = first;
        for _ in 0..1000 {
            let before = cx.cwnd;
            ack(siad, cx, rtt);
            rtt = rest;
            if stop(siad) {
                return before;
            }
        }
        panic!("condition never met");
    }

    // docs/validation.md SIAD 3
    #[test]
    fn additional_decrease_when_the_minimum_delay_is_not_seen_again() {
        // After the docs/validation.md SIAD 2 decrease (ssthresh 49, α 3, incthresh 110, min_delay 40 ms) every
        // sample is above min_delay (79, then 80: never again ≤ the epoch's minimum 79, so
        // min_delay is not re-based). The check fires when cwnd first exceeds 49 + 3 + 2.
        let (mut siad, mut cx) = after_decrease();
        let before = ack_until(&mut siad, &mut cx, 79, 80, |s| s.dec_cnt == 1);
        assert_eq!(before, 55);
        // ⌊40·49/80⌋ − 1 = 23; α_new = ⌊(110 − 23)·20/18⌋ = 96 → 4 > ⌊23/19⌋ = 1: 23 − 4 = 19.
        assert_eq!((cx.cwnd, cx.ssthresh, siad.increase, cx.cwnd_cnt), (19, 18, 96, 0));
        assert_eq!(siad.mode(), Some("additional_decrease"));
        // One RTT later (cwnd > 18 + 4 + 2) the second: ⌊40·18/80⌋ − 1 = 8, α_new =
        // ⌊102·20/17⌋ = 120 → 6 and 6 + 2 is not below 8: MIN_CWND, no further decreases.
        let before = ack_until(&mut siad, &mut cx, 80, 80, |s| s.dec_cnt == 2);
        assert_eq!(before, 25);
        assert_eq!((cx.cwnd, cx.ssthresh, siad.increase), (2, 1, 120));
        assert!(siad.min_delay_seen);
        assert_eq!(siad.mode(), Some("linear"));
        while cx.cwnd < 100 {
            ack(&mut siad, &mut cx, 80);
        }
        assert_eq!(siad.dec_cnt, 2);
    }

    /// An armed epoch at cwnd 164 (ssthresh 159, α 2, incthresh 200, min_delay 40 ms, epoch
    /// minimum 41 ms) after `dec_cnt` Additional Decreases; then one ACK with a 42 ms sample.
    fn additional_decrease_at_164(dec_cnt: u64) -> (Siad, CcCx) {
        let (mut siad, mut cx) = setup(20, 164);
        cx.ssthresh = 159;
        (siad.incthresh, siad.increase, siad.min_delay, siad.curr_min_delay) = (200, 40, 40, 41);
        (siad.prev_delay, siad.min_delay_seen, siad.dec_cnt) = (42, false, dec_cnt);
        ack(&mut siad, &mut cx, 42);
        (siad, cx)
    }

    #[test]
    fn additional_decrease_by_cwnd_over_remaining_rtts_when_larger_than_alpha() {
        // ⌊40·159/42⌋ − 1 = 150; α_new = ⌊50·20/18⌋ = 55 → 2; red = ⌊150/19⌋ = 7 ≥ 2:
        // 150 − 7 = 143, then A = ⌊(200 − 143)·20/19⌋ = 60.
        let (siad, cx) = additional_decrease_at_164(0);
        assert_eq!((cx.cwnd, cx.ssthresh, siad.increase, siad.dec_cnt), (143, 142, 60, 1));
        assert!(!siad.min_delay_seen);
    }

    #[test]
    fn at_most_num_rtt_minus_one_additional_decreases_per_epoch() {
        for dec_cnt in 0..20 {
            let (_, cx) = additional_decrease_at_164(dec_cnt);
            assert_eq!(cx.cwnd < 164, dec_cnt < 19, "after {dec_cnt} decreases: cwnd {}", cx.cwnd);
        }
        // The 19th: N − dec_cnt − 1 = 0 (Linux divides by it; here 1): α_new = 50 and red =
        // 150/1 = 150, which leaves less than MIN_CWND: cwnd 2, no more decreases.
        let (siad, cx) = additional_decrease_at_164(18);
        assert_eq!((cx.cwnd, siad.increase, siad.dec_cnt), (2, 198 * 20, 19));
        assert!(siad.min_delay_seen);
    }

    #[test]
    fn no_additional_decrease_in_fast_increase_or_slow_start() {
        // Control: armed (first sample 79 ms at cwnd 49), then cwnd 60 > 49 + 3 + 2 → decrease.
        let armed = || {
            let (mut siad, mut cx) = after_decrease();
            ack(&mut siad, &mut cx, 79);
            (siad, cx)
        };
        let (mut siad, mut cx) = armed();
        cx.cwnd = 60;
        ack(&mut siad, &mut cx, 80);
        assert_eq!(siad.dec_cnt, 1);
        // Above incthresh 110: none.
        let (mut siad, mut cx) = armed();
        cx.cwnd = 115;
        ack(&mut siad, &mut cx, 80);
        assert_eq!((siad.dec_cnt, siad.min_delay_seen), (0, true));
        assert!(cx.cwnd >= 115);
        // Below ssthresh 49 once: none for the rest of the epoch.
        let (mut siad, mut cx) = armed();
        cx.cwnd = 45;
        ack(&mut siad, &mut cx, 80);
        cx.cwnd = 60;
        ack(&mut siad, &mut cx, 80);
        assert_eq!(siad.dec_cnt, 0);
        assert!(cx.cwnd >= 60);
    }

    #[test]
    fn a_minimum_repeated_after_one_rtt_of_growth_rebases_min_delay() {
        // Every sample 80 ms: the epoch minimum 80 is seen again once cwnd > 49 + 3 + 1, so
        // 80 becomes min_delay (the old 40 ms is stale) before the Additional Decrease check
        // at cwnd 55 could fire.
        let (mut siad, mut cx) = after_decrease();
        let before = ack_until(&mut siad, &mut cx, 80, 80, |s| s.min_delay == 80);
        assert_eq!(before, 54);
        for _ in 0..5 {
            round(&mut siad, &mut cx, 80);
        }
        assert_eq!(siad.dec_cnt, 0);
        assert!(cx.cwnd > 60);
    }

    #[test]
    fn four_rising_minima_in_a_row_fall_back_to_the_oldest() {
        let (mut siad, mut cx) = before_decrease(40, 80);
        let mut decrease_with_min = |min_ms: u32| {
            (siad.min_delay, cx.cwnd, siad.increase_performed) = (min_ms, 100, false);
            siad.ssthresh(&mut cx)
        };
        // ⌊min·100/80⌋ − 1 for 40, 41, 42; the 4th rising value (43) is replaced by 40.
        assert_eq!(decrease_with_min(40), 49);
        assert_eq!(decrease_with_min(41), 50);
        assert_eq!(decrease_with_min(42), 51);
        assert_eq!(decrease_with_min(43), 49);
        assert_eq!((siad.min_delay, siad.prev_min_delay), (40, [40, 0, 0]));
        // A lower minimum clears the record: 44 is then the 2nd rising value only.
        let (mut siad, mut cx) = before_decrease(40, 80);
        for min_ms in [40, 41, 39, 44] {
            (siad.min_delay, cx.cwnd) = (min_ms, 100);
            siad.ssthresh(&mut cx);
        }
        assert_eq!((siad.min_delay, siad.prev_min_delay), (44, [44, 0, 0]));
    }

    #[test]
    fn num_ms_raises_num_rtt_to_the_configured_time() {
        let decrease = |num_ms: u32| {
            let (mut siad, mut cx) = before_decrease(40, 80);
            siad.num_ms = u64::from(num_ms);
            siad.ssthresh(&mut cx);
            (siad.n, siad.increase)
        };
        // ⌊2·6000/(80 + 40)⌋ = 100 RTTs of the mean RTT 60 ms; A = max(100, 110 − 49).
        assert_eq!(decrease(6000), (100, 100));
        // ⌊1200/120⌋ = 10 < 20: Num_RTT stays; 0: off. (prev_max_cwnd is the initial 102:
        // trend −2, incthresh 98, A = 98 − 49.)
        assert_eq!(decrease(600), (20, 49));
        assert_eq!(decrease(0), (20, 49));
    }

    #[test]
    fn slow_start_doubles_and_after_an_rto_alpha_is_set_at_ssthresh() {
        let (mut siad, mut cx) = setup(20, 10);
        assert_eq!((siad.increase, siad.incthresh, siad.mode()), (200, 10, Some("slow_start")));
        for _ in 0..3 {
            round(&mut siad, &mut cx, 40);
        }
        assert_eq!((cx.cwnd, siad.increase), (80, 1600));
        ack(&mut siad, &mut cx, 50);
        ack(&mut siad, &mut cx, 50);
        // RTO at 82 in slow start: cwnd_max 41, ⌊40·41/50⌋ − 1 = 31, incthresh 41 + 31 = 72.
        cx.prior_cwnd = cx.cwnd;
        cx.ssthresh = siad.ssthresh(&mut cx);
        cx.cwnd = 1;
        siad.set_state(&mut cx, CaState::Loss);
        cx.ca_state = CaState::Loss;
        assert_eq!((cx.ssthresh, siad.incthresh, siad.increase, siad.mode()), (31, 72, 41, None));
        // SIAD's own slow start (α = cwnd) back to ssthresh, where α = (72 − 31)/20.
        for _ in 0..29 {
            ack(&mut siad, &mut cx, 40);
            assert_eq!(siad.increase, u64::from(cx.cwnd) * 20);
        }
        ack(&mut siad, &mut cx, 40);
        assert_eq!((cx.cwnd, siad.increase), (31, 41));
        siad.set_state(&mut cx, CaState::Open);
        assert_eq!(siad.mode(), Some("linear"));
    }

    #[test]
    fn the_delay_is_a_jiffy_difference_or_srtt() {
        let (mut siad, mut cx) = setup(20, 10);
        // Sent at 10.0005 s, ACKed at 10.0412 s: jiffies 10041 − 10000 = 41 (the RTT is 40.7 ms).
        cx.now = SimTime::ZERO + SimDuration::from_micros(10_041_200);
        siad.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: 40_700, in_flight: 10 });
        assert_eq!(siad.take_delay_ms(&cx), 41);
        // No sample on this ACK: SRTT 40 ms.
        siad.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: -1, in_flight: 10 });
        assert_eq!(siad.take_delay_ms(&cx), 40);
        assert_eq!(siad.take_delay_ms(&cx), 40);
    }

    #[test]
    fn nothing_changes_the_window_when_not_cwnd_limited() {
        let (mut siad, mut cx) = after_decrease();
        cx.is_cwnd_limited = false;
        for _ in 0..200 {
            ack(&mut siad, &mut cx, 80);
        }
        assert_eq!((cx.cwnd, siad.dec_cnt, siad.curr_delay), (49, 0, 80));
        // ACKed packets are still consumed: the next limited ACK counts one packet.
        assert_eq!(siad.prior_snd_una, cx.snd_una);
    }

    #[test]
    fn undo_restores_the_target_and_disarms_additional_decrease() {
        let (mut siad, mut cx) = after_decrease();
        assert_eq!(siad.undo_cwnd(&mut cx), 110);
        assert_eq!((siad.incthresh, siad.min_delay_seen), (100, true));
    }

    #[test]
    fn config_defaults_validation_and_names() {
        let c = SiadConfig::default();
        assert_eq!((c.num_rtt, c.num_ms), (20, 0));
        assert_eq!(c.validate(), Ok(()));
        let bad = SiadConfig { num_rtt: 1, ..c.clone() };
        assert_eq!(bad.validate(), Err("num_rtt = 1 is out of range; allowed: num_rtt ≥ 2".into()));
        assert_eq!(SiadConfig { num_rtt: 2, ..c.clone() }.validate(), Ok(()));
        let parsed: SiadConfig = serde_json::from_str(r#"{"num_ms": 500}"#).unwrap();
        assert_eq!((parsed.num_rtt, parsed.num_ms), (20, 500));
        assert!(serde_json::from_str::<SiadConfig>(r#"{"numrtt": 5}"#).is_err());
        let cc = c.build(SimRng::stream(1, "cc"));
        assert_eq!((cc.name(), SiadConfig::PARAMS.len()), ("siad", 3));
        assert_eq!(c.variant, SiadVariant::Linux);
        let study: SiadConfig = serde_json::from_str(r#"{"variant": "ns3-study", "num_rtt": 0}"#).unwrap();
        assert_eq!((study.variant, study.validate()), (SiadVariant::Ns3Study, Ok(())));
        assert_eq!(serde_json::to_value(&study).unwrap()["variant"], "ns3-study");
    }

    #[test]
    #[should_panic(expected = "runs only on the ns3 stack")]
    fn the_linux_builder_refuses_the_ns3_study_variant() {
        let study = SiadConfig { variant: SiadVariant::Ns3Study, ..SiadConfig::default() };
        study.build(SimRng::stream(1, "cc"));
    }

    /// A SIAD flow on a 1 packet/ms bottleneck with 40 ms propagation (BDP 41 packets) and a
    /// 20-packet drop-tail buffer that becomes unlimited once cwnd reaches 69: slow start
    /// loses one short burst and nothing sent in the RTT before the loss is noticed, so
    /// there is a single reduction (testkit's Path would end Recovery and re-enter it on the
    /// same ACK if the packets just before high_seq were lost). `on_recovery` runs when the
    /// reduction starts; returns once the flow is back in Open.
    fn after_one_loss_episode(on_recovery: impl FnOnce(&mut Path<Siad>)) -> Path<Siad> {
        let siad = Box::new(Siad::new(&SiadConfig::default()));
        let mut path = Path::new(siad, MS, SimDuration::from_millis(40), Some(20));
        while path.sender.cx.ca_state != CaState::Recovery {
            path.step();
            if path.sender.cx.cwnd >= 69 {
                path.buffer = None;
            }
        }
        on_recovery(&mut path);
        while path.sender.cx.ca_state != CaState::Open {
            path.step();
        }
        path
    }

    /// Steps through the epoch until cwnd reaches incthresh; returns the completed
    /// round trips (snd_una passing the snd_nxt of the round's start) and calls `each` per ACK.
    fn rounds_to_incthresh(path: &mut Path<Siad>, mut each: impl FnMut(&Path<Siad>)) -> u32 {
        let mut marker = path.sender.cx.snd_nxt;
        let mut rounds = 0;
        while path.sender.cx.cwnd < path.sender.cc.incthresh {
            path.step();
            assert_eq!(path.sender.cx.ca_state, CaState::Open, "no congestion event in this epoch");
            each(path);
            if path.sender.cx.snd_una.wrapping_sub(marker) as i32 >= 0 {
                rounds += 1;
                marker = path.sender.cx.snd_nxt;
            }
            assert!(rounds < 100);
        }
        rounds
    }

    #[test]
    fn on_a_path_the_window_reaches_incthresh_about_num_rtt_rtts_after_a_decrease() {
        let mut path = after_one_loss_episode(|_| {});
        // Loss noticed at cwnd 121 in slow start: cwnd_max 60, RTTcurr 61 ms (a full 20-packet
        // queue), ⌊41·60/61⌋ − 1 = 39; incthresh 60 + (60 − 10) = 110, A = 71.
        let (cx, siad) = (&path.sender.cx, &path.sender.cc);
        assert_eq!((cx.prior_cwnd, cx.cwnd, siad.incthresh, siad.increase), (121, 39, 110, 71));
        let rounds = rounds_to_incthresh(&mut path, |_| {});
        assert!((19..=21).contains(&rounds), "{rounds} round trips");
        assert_eq!(path.sender.cc.dec_cnt, 0);
    }

    #[test]
    fn on_a_path_additional_decrease_empties_a_standing_queue() {
        // The bottleneck halves its rate (2 ms per packet) as the loss is noticed: the
        // reduction to 39 was sized for the old rate and now leaves ≈18 packets standing.
        let mut path = after_one_loss_episode(|p| p.packet_time = SimDuration::from_millis(2));
        let unloaded_us = 42_000; // 40 ms + 2 ms serialisation
        let (mut standing_before, mut lowest_after) = (0, i64::MAX);
        let mut labelled = false;
        rounds_to_incthresh(&mut path, |p| {
            let queue_us = p.sender.last_rs.rtt_us - unloaded_us;
            if p.sender.cc.dec_cnt == 0 {
                standing_before = standing_before.max(queue_us);
            } else {
                lowest_after = lowest_after.min(queue_us);
            }
            labelled |= p.sender.cc.mode() == Some("additional_decrease");
        });
        assert!(standing_before >= 30_000, "queue before: {standing_before} µs");
        assert!(path.sender.cc.dec_cnt >= 1 && labelled);
        // Within the same epoch (no loss) the queue is gone and the new base RTT is the minimum.
        assert!(lowest_after <= 1_000, "queue after: {lowest_after} µs");
        assert_eq!(path.sender.cc.min_delay, 42);
    }
}
