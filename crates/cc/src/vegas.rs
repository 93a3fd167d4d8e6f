//! TCP Vegas as Linux tcp_vegas.c (Brakmo & Peterson, "TCP Vegas: end to
//! end congestion avoidance on a global internet", IEEE JSAC 13(8), 1995). Once per RTT the
//! window is compared with what the minimum RTT of that round says the path carries:
//! `diff = cwnd·(minRTT − baseRTT)/baseRTT`; in congestion avoidance cwnd moves by one packet
//! towards α ≤ diff ≤ β, and slow start ends (cwnd cut to the measured rate + 1) as soon as
//! diff > γ. Loss handling is Reno's. RTT bookkeeping (`VegasRtt`) is shared with YeAH.
//!
//! Linux integer arithmetic, RTTs in µs plus one as Linux keeps them; like Linux, Vegas's own
//! slow-start steps do not ask whether the flow is cwnd-limited. One difference: Linux
//! computes `diff` in 32 bits, which wraps once cwnd·(minRTT − baseRTT) reaches 2³² µs
//! (e.g. cwnd 1000 with 4.3 s of queueing); here it is computed in 64 bits.
//!
//! ns-3 TcpVegas differs: diff = cwnd − cwnd·baseRtt/minRtt (the backlog itself),
//! ssthresh = max(min(ssthresh, cwnd − 1), 2) on loss, ns-3 NewReno steps, baseRtt kept
//! across idle periods. Linux is followed.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::{AckSample, CaState, CcCx, CongestionControl, CwndEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Linux's "no RTT yet" value of baseRTT and minRTT (0x7fffffff, tcp_vegas.c).
const RTT_UNSET: u32 = 0x7fff_ffff;

/// Parameters of Vegas (the Linux tcp_vegas.c module parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VegasConfig {
    /// Packets: below this many packets queued (Linux `diff`) cwnd grows by one per RTT.
    /// Linux 2.
    pub alpha: u32,
    /// Packets: above this many packets queued cwnd shrinks by one per RTT. Linux 4.
    pub beta: u32,
    /// Packets: slow start ends once more than this many packets are queued. Linux 1.
    pub gamma: u32,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig { alpha: 2, beta: 4, gamma: 1 }
    }
}

impl AlgorithmConfig for VegasConfig {
    const NAME: &'static str = "vegas";
    const SUMMARY: &'static str = "TCP Vegas, Linux tcp_vegas.c (keeps α–β packets queued; Brakmo & Peterson 1995)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "alpha", unit: "packets", doc: "grow by one per RTT while fewer packets are queued" },
        ParamDoc { name: "beta", unit: "packets", doc: "shrink by one per RTT while more packets are queued" },
        ParamDoc { name: "gamma", unit: "packets", doc: "leave slow start once more packets are queued" },
    ];

    fn validate(&self) -> Result<(), String> {
        let allowed = format!("alpha ≤ beta ({})", self.beta);
        check_range("alpha", self.alpha, self.alpha <= self.beta, &allowed)
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Vegas::new(self))
    }
}

/// Linux `after(a, b)` on 32-bit sequence numbers.
fn seq_after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// How a Vegas round (one RTT, from `beg_snd_nxt` being set until an ACK passes it) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoundEnd {
    /// Two RTT samples or fewer: probably all from delayed ACKs, not trusted (Linux
    /// `cntRTT <= 2`).
    TooFewSamples,
    /// The smallest RTT of the round, µs + 1.
    MinRtt(u32),
}

/// The RTT bookkeeping of Linux `struct vegas` and its hooks (`tcp_vegas_init`,
/// `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`), which YeAH embeds.
/// RTTs are kept as sample + 1 µs, so that neither can be 0.
#[derive(Clone, Debug)]
pub(crate) struct VegasRtt {
    /// Smallest RTT seen since the last (re)start: the propagation delay estimate, µs + 1.
    pub(crate) base_rtt: u32,
    /// Smallest RTT of the current round, µs + 1.
    min_rtt: u32,
    /// RTT samples taken in the current round.
    cnt_rtt: u32,
    /// The round ends on an ACK beyond this sequence (snd_nxt when the round began).
    beg_snd_nxt: u32,
    /// Vegas decisions are on (Linux `doing_vegas_now`): CA state Open.
    doing_vegas_now: bool,
}

impl VegasRtt {
    /// No samples yet; [`init`](Self::init) starts the first round.
    pub(crate) fn new() -> Self {
        VegasRtt { base_rtt: RTT_UNSET, min_rtt: RTT_UNSET, cnt_rtt: 0, beg_snd_nxt: 0, doing_vegas_now: true }
    }

    /// Linux `tcp_vegas_init`: forget baseRTT and start a round at snd_nxt.
    pub(crate) fn init(&mut self, cx: &CcCx) {
        self.base_rtt = RTT_UNSET;
        self.enable(cx);
    }

    /// Linux `vegas_enable`: a fresh round starts at snd_nxt; baseRTT is kept.
    fn enable(&mut self, cx: &CcCx) {
        self.doing_vegas_now = true;
        self.start_round(cx);
    }

    fn start_round(&mut self, cx: &CcCx) {
        self.beg_snd_nxt = cx.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = RTT_UNSET;
    }

    /// Linux `tcp_vegas_pkts_acked`: min-filter the sample into baseRTT and the round.
    pub(crate) fn pkts_acked(&mut self, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        let vrtt = (sample.rtt_us + 1).min(i64::from(RTT_UNSET)) as u32;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// Linux `tcp_vegas_state`: on in Open (with a fresh round), off in any other state.
    pub(crate) fn set_state(&mut self, cx: &CcCx, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(cx);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// Linux `tcp_vegas_cwnd_event`: restarting after idle (or the first send) starts over,
    /// baseRTT included, as the old samples are stale.
    pub(crate) fn cwnd_event(&mut self, cx: &CcCx, ev: CwndEvent) {
        if matches!(ev, CwndEvent::CwndRestart | CwndEvent::TxStart) {
            self.init(cx);
        }
    }

    /// On an ACK beyond `beg_snd_nxt` (Linux `after(ack, beg_snd_nxt)`; the ACK sequence is
    /// the new snd_una): starts the next round at snd_nxt and tells how this one ended.
    /// `None` while the round goes on.
    pub(crate) fn end_round(&mut self, cx: &CcCx) -> Option<RoundEnd> {
        if !seq_after(cx.snd_una, self.beg_snd_nxt) {
            return None;
        }
        let end = if self.cnt_rtt <= 2 { RoundEnd::TooFewSamples } else { RoundEnd::MinRtt(self.min_rtt) };
        self.start_round(cx);
        Some(end)
    }
}

/// The `CongestionControl` hooks that are Vegas's RTT bookkeeping alone, for an algorithm
/// keeping a [`VegasRtt`] in `self.rtt`: Linux tcp_yeah.c's ops point at the same
/// `tcp_vegas_pkts_acked`, `tcp_vegas_state` and `tcp_vegas_cwnd_event` as tcp_vegas.c's.
macro_rules! vegas_rtt_hooks {
    () => {
        fn pkts_acked(&mut self, _cx: &mut CcCx, sample: &AckSample) {
            self.rtt.pkts_acked(sample);
        }

        fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
            self.rtt.set_state(cx, new_state);
        }

        fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
            self.rtt.cwnd_event(cx, ev);
        }
    };
}
pub(crate) use vegas_rtt_hooks;

/// Vegas state (Linux `struct vegas`).
#[derive(Clone, Debug)]
pub struct Vegas {
    config: VegasConfig,
    rtt: VegasRtt,
    /// The last once-per-RTT decision, for the cc_state column.
    step: VegasStep,
}

/// What Vegas did at its last round end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VegasStep {
    /// Slow start (doubling per RTT, or just left it to match the measured rate).
    SlowStart,
    /// Fewer than alpha packets queued: +1.
    Increase,
    /// Between alpha and beta packets queued: no change.
    Hold,
    /// More than beta packets queued: −1.
    Decrease,
    /// Vegas is off (not in Open, or too few RTT samples): Reno's step.
    Reno,
}

/// Linux `tcp_current_ssthresh` in CA state Open (the only state Vegas decides in):
/// ssthresh, or ¾·cwnd if larger.
fn current_ssthresh(cx: &CcCx) -> u32 {
    cx.ssthresh.max((cx.cwnd >> 1) + (cx.cwnd >> 2))
}

impl Vegas {
    pub fn new(config: &VegasConfig) -> Self {
        Vegas { config: config.clone(), rtt: VegasRtt::new(), step: VegasStep::SlowStart }
    }

    /// The once-per-RTT Vegas decision with the round's minimum RTT `rtt` (µs + 1).
    fn adjust(&mut self, cx: &mut CcCx, rtt: u32, acked: u32) {
        let base = u64::from(self.rtt.base_rtt);
        let cwnd = u64::from(cx.cwnd);
        // The window the measured rate fills without a queue (≤ cwnd, as rtt ≥ base).
        let target = (cwnd * base / u64::from(rtt)) as u32;
        // Linux "diff": packets queued, scaled by RTT/baseRTT.
        let diff = cwnd * u64::from(rtt).saturating_sub(base) / base;
        let config = &self.config;
        self.step = if diff > u64::from(config.gamma) && cx.in_slow_start() {
            // Too fast: match the measured rate (+1 for the truncation) and leave slow start.
            cx.cwnd = cx.cwnd.min(target + 1);
            cx.ssthresh = cx.ssthresh.min(cx.cwnd);
            VegasStep::SlowStart
        } else if cx.in_slow_start() {
            cx.slow_start(acked);
            VegasStep::SlowStart
        } else if diff > u64::from(config.beta) {
            cx.cwnd = cx.cwnd.saturating_sub(1);
            cx.ssthresh = cx.ssthresh.min(cx.cwnd);
            VegasStep::Decrease
        } else if diff < u64::from(config.alpha) {
            cx.cwnd += 1;
            VegasStep::Increase
        } else {
            VegasStep::Hold
        };
        cx.cwnd = if cx.cwnd < 2 { 2 } else { cx.cwnd.min(cx.cwnd_clamp) };
        cx.ssthresh = current_ssthresh(cx);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        VegasConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        self.rtt.init(cx);
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        reno_ssthresh(cx)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if !self.rtt.doing_vegas_now {
            self.step = VegasStep::Reno;
            reno_cong_avoid(cx, acked);
            return;
        }
        match self.rtt.end_round(cx) {
            Some(RoundEnd::MinRtt(rtt)) => self.adjust(cx, rtt, acked),
            Some(RoundEnd::TooFewSamples) => {
                self.step = VegasStep::Reno;
                reno_cong_avoid(cx, acked);
            }
            // Between decisions only slow start grows (no growth in CA).
            None => {
                if cx.in_slow_start() {
                    cx.slow_start(acked);
                }
            }
        }
    }

    vegas_rtt_hooks!();

    fn mode(&self) -> Option<&'static str> {
        Some(match self.step {
            VegasStep::SlowStart => "slow_start",
            VegasStep::Increase => "increase",
            VegasStep::Hold => "hold",
            VegasStep::Decrease => "decrease",
            VegasStep::Reno => "reno",
        })
    }
}

/// Test helpers shared with YeAH's tests.
#[cfg(test)]
pub(crate) mod testing {
    use crate::{AckSample, CcCx, CongestionControl};

    /// A cwnd-limited connection at `cwnd` (ssthresh infinite) whose rounds begin at snd_nxt 1000.
    pub(crate) fn limited_cx(cwnd: u32) -> CcCx {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        cx.snd_una = 1000 - cwnd;
        cx.snd_nxt = 1000;
        cx
    }

    /// One RTT sample per entry of `rtts_us` (through `pkts_acked`).
    pub(crate) fn samples(cc: &mut dyn CongestionControl, cx: &mut CcCx, rtts_us: &[i64]) {
        for &rtt_us in rtts_us {
            cc.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us, in_flight: cx.cwnd });
        }
    }

    /// The ACK that ends the round which began at the current snd_nxt: a window more is
    /// sent, then the first packet sent after the round began is ACKed with `acked`.
    pub(crate) fn end_round(cc: &mut dyn CongestionControl, cx: &mut CcCx, acked: u32) {
        let beg = cx.snd_nxt;
        cx.snd_nxt = beg + cx.cwnd;
        cx.snd_una = beg + 1;
        cc.cong_avoid(cx, acked);
    }

    /// Samples `rtts_us`, then the round-ending ACK.
    pub(crate) fn round(cc: &mut dyn CongestionControl, cx: &mut CcCx, rtts_us: &[i64], acked: u32) {
        samples(cc, cx, rtts_us);
        end_round(cc, cx, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{limited_cx, round, samples};
    use super::*;
    use crate::testkit::Path;
    use crate::INFINITE_SSTHRESH;
    use tcplab_core::{SimDuration, SimTime};

    /// Samples are RTT − 1 µs so that Linux's +1 gives round numbers: `vrtt(100)` = 100 ms.
    fn vrtt(ms: i64) -> i64 {
        ms * 1000 - 1
    }

    /// An initialised Vegas at `cwnd` with baseRTT 100 ms already measured and a fresh round.
    fn setup(cwnd: u32, ssthresh: u32) -> (Vegas, CcCx) {
        let mut cx = limited_cx(cwnd);
        cx.ssthresh = ssthresh;
        let mut vegas = Vegas::new(&VegasConfig::default());
        vegas.init(&mut cx);
        samples(&mut vegas, &mut cx, &[vrtt(100)]);
        vegas.set_state(&mut cx, CaState::Open); // new round, baseRTT kept
        (vegas, cx)
    }

    // docs/validation.md Vegas 1: diff = ⌊cwnd·(rtt − base)/base⌋ steers cwnd into α ≤ diff ≤ β.
    #[test]
    fn congestion_avoidance_moves_one_packet_per_rtt_towards_alpha_beta() {
        // cwnd 50, base 100 ms, round minimum 110 ms: diff = 50·10/100 = 5 > β = 4 → 49.
        // ssthresh: min(40, 49) = 40, then max(40, 24 + 12 = 36) = 40.
        let (mut vegas, mut cx) = setup(50, 40);
        round(&mut vegas, &mut cx, &[vrtt(115), vrtt(110), vrtt(112)], 1);
        assert_eq!((cx.cwnd, cx.ssthresh, vegas.mode()), (49, 40, Some("decrease")));
        // 106 ms: diff = 49·6/100 = 2.94 → 2 ∈ [2, 4] → unchanged.
        round(&mut vegas, &mut cx, &[vrtt(106); 3], 1);
        assert_eq!((cx.cwnd, vegas.mode()), (49, Some("hold")));
        // 109 ms: diff = 49·9/100 = 4.41 → 4 = β → unchanged.
        round(&mut vegas, &mut cx, &[vrtt(109); 3], 1);
        assert_eq!(cx.cwnd, 49);
        // 102 ms: diff = 49·2/100 = 0.98 → 0 < α = 2 → 50; ssthresh max(40, 25 + 12) = 40.
        round(&mut vegas, &mut cx, &[vrtt(102); 3], 1);
        assert_eq!((cx.cwnd, cx.ssthresh, vegas.mode()), (50, 40, Some("increase")));
        // Mid-round ACKs never move cwnd in congestion avoidance, whatever they ack.
        samples(&mut vegas, &mut cx, &[vrtt(100); 3]);
        for _ in 0..200 {
            vegas.cong_avoid(&mut cx, 2);
        }
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (50, 0));
    }

    #[test]
    fn ssthresh_follows_three_quarters_of_a_growing_window() {
        // cwnd 100 ≥ ssthresh 60; 100 ms: diff 0 → 101; ssthresh = max(60, 50 + 25 = 75) = 75.
        let (mut vegas, mut cx) = setup(100, 60);
        round(&mut vegas, &mut cx, &[vrtt(100); 3], 1);
        assert_eq!((cx.cwnd, cx.ssthresh), (101, 75));
    }

    // docs/validation.md Vegas 2
    #[test]
    fn slow_start_ends_at_the_measured_rate_once_diff_exceeds_gamma() {
        // Slow start (ssthresh ∞), cwnd 40, 102.5 ms: diff = 40·2.5/100 = 1, not > γ = 1 → the
        // round's ACK still slow-starts: 40 + 2 = 42.
        let (mut vegas, mut cx) = setup(40, INFINITE_SSTHRESH);
        round(&mut vegas, &mut cx, &[102_499; 3], 2);
        assert_eq!((cx.cwnd, cx.ssthresh), (42, INFINITE_SSTHRESH));
        // Mid-round ACKs slow-start as Reno: +acked each.
        vegas.cong_avoid(&mut cx, 1);
        vegas.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 44);
        // 110 ms: diff = 44·10/100 = 4.4 → 4 > 1 → cwnd = min(44, ⌊44·100/110⌋ + 1 = 41) = 41,
        // ssthresh = min(∞, 41) = 41 (then max(41, 20 + 10)): congestion avoidance.
        round(&mut vegas, &mut cx, &[vrtt(110); 3], 2);
        assert_eq!((cx.cwnd, cx.ssthresh), (41, 41));
        assert!(!cx.in_slow_start());
    }

    // docs/validation.md Vegas 3
    #[test]
    fn two_samples_or_fewer_give_a_reno_step() {
        // Slow start, 2 samples at 200 ms (diff would be 40 > γ): Reno slow start, 40 + 2.
        let (mut vegas, mut cx) = setup(40, INFINITE_SSTHRESH);
        round(&mut vegas, &mut cx, &[vrtt(200); 2], 2);
        assert_eq!((cx.cwnd, vegas.mode()), (42, Some("reno")));
        // The same with 3 samples: cut to ⌊42·100/200⌋ + 1 = 22.
        round(&mut vegas, &mut cx, &[vrtt(200); 3], 2);
        assert_eq!((cx.cwnd, vegas.mode()), (22, Some("slow_start")));
        // CA at cwnd 50 with 49 credits: a Reno step adds the 50th (Vegas would hold at diff 3).
        let (mut vegas, mut cx) = setup(50, 40);
        cx.cwnd_cnt = 49;
        round(&mut vegas, &mut cx, &[vrtt(106), vrtt(106)], 1);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (51, 0));
        // No samples at all (e.g. every sample from a retransmission): Reno again.
        round(&mut vegas, &mut cx, &[], 1);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (51, 1));
    }

    // docs/validation.md Vegas 3
    #[test]
    fn cwnd_never_below_two() {
        // CA at cwnd 2, 400 ms: diff = 2·300/100 = 6 > β → 1, raised to 2.
        let (mut vegas, mut cx) = setup(2, 2);
        round(&mut vegas, &mut cx, &[vrtt(400); 3], 1);
        assert_eq!(cx.cwnd, 2);
        // Slow start at cwnd 2, 400 ms: target ⌊2·100/400⌋ + 1 = 1, raised to 2. ssthresh
        // was set from the unclamped cwnd: min(∞, 1) = 1, then max(1, 0 + 0) = 1 (as Linux).
        let (mut vegas, mut cx) = setup(2, INFINITE_SSTHRESH);
        round(&mut vegas, &mut cx, &[vrtt(400); 3], 1);
        assert_eq!((cx.cwnd, cx.ssthresh), (2, 1));
    }

    #[test]
    fn outside_open_and_after_idle_vegas_steps_aside() {
        // In Recovery/Disorder the step is Reno's: CA credit per acked packet.
        let (mut vegas, mut cx) = setup(50, 40);
        vegas.set_state(&mut cx, CaState::Disorder);
        round(&mut vegas, &mut cx, &[vrtt(200); 3], 50);
        assert_eq!(cx.cwnd, 51);
        assert_eq!(vegas.ssthresh(&mut cx), 25);
        // Back in Open, a fresh round: baseRTT (100 ms) is kept, so 200 ms cuts (diff 51 > β).
        vegas.set_state(&mut cx, CaState::Open);
        round(&mut vegas, &mut cx, &[vrtt(200); 3], 1);
        assert_eq!(cx.cwnd, 50);
        // Sending from idle forgets baseRTT: 200 ms becomes the base, diff 0 → +1.
        vegas.cwnd_event(&mut cx, CwndEvent::TxStart);
        round(&mut vegas, &mut cx, &[vrtt(200); 3], 1);
        assert_eq!(cx.cwnd, 51);
    }

    #[test]
    fn alpha_above_beta_is_rejected() {
        assert_eq!(VegasConfig::default().validate(), Ok(()));
        let c = VegasConfig { alpha: 5, ..VegasConfig::default() };
        assert_eq!(c.validate(), Err("alpha = 5 is out of range; allowed: alpha ≤ beta (4)".into()));
    }

    // docs/validation.md Vegas 1 on a path: 1 packet/ms bottleneck, 100 ms
    // propagation, unlimited FIFO. Base RTT 101 ms (with serialisation), so q packets
    // queued give cwnd = 101 + q and diff = ⌊(101 + q)·q/101⌋: q = 1 → 1, 2 → 2, 4 → 4,
    // 5 → 5. Vegas must hold the queue at 2–4 packets. Slow start overshoots first (it
    // exits at ≈ 317 packets: the round's rate was measured while cwnd doubled), and
    // congestion avoidance drains that at one packet per RTT, so steady state comes after
    // ≈ 45 s; the queue is watched from 60 s to 80 s.
    #[test]
    fn keeps_two_to_four_packets_queued_on_a_fixed_path() {
        const MS: SimDuration = SimDuration::from_millis(1);
        let mut path = Path::new(Box::new(Vegas::new(&VegasConfig::default())), MS, SimDuration::from_millis(100), None);
        path.run_until(SimTime::ZERO + SimDuration::from_secs(60));
        let (mut lo, mut hi) = (u64::MAX, 0);
        while path.now() < SimTime::ZERO + SimDuration::from_secs(80) {
            path.step();
            // Packets queued ahead of the ACKed one when it reached the bottleneck.
            let queued = (path.sender.last_rs.rtt_us as u64 - 101_000) / 1000;
            lo = lo.min(queued);
            hi = hi.max(queued);
        }
        assert!(2 <= lo && hi <= 4, "queue {lo}..={hi}");
        assert!((103..=105).contains(&path.sender.cx.cwnd), "cwnd {}", path.sender.cx.cwnd);
    }
}
