//! BIC as Linux tcp_bic.c (Xu, Harfoush, Rhee, "Binary Increase
//! Congestion Control for Fast, Long Distance Networks", INFOCOM 2004): binary search
//! towards the window of the last loss (W_max), linear steps of at most 16 packets per RTT
//! far below it, slow "max probing" above it, Reno below 14 packets; β = 819/1024 ≈ 0.8.
//!
//! Linux details kept: `cnt` is recomputed at most every 1/32 s while cwnd is unchanged
//! (jiffies, HZ = 1000); congestion avoidance gives **one credit per ACK**
//! (`cong_avoid_ai(cnt, 1)`, some kernels pass `acked`) with `cnt` scaled by the
//! measured packets-per-ACK ratio (`delayed_ack`, 1/16 units, initially 2). That ratio is
//! an integer EWMA which settles at 31/16, not 16/16, when every ACK covers one packet, so
//! with per-packet ACKs Linux BIC grows about twice as fast as the nominal rule; with
//! ACK-every-2 it is exact. ns-3 TcpBic uses the same constants, byte-based, without the
//! ACK-ratio scaling. Linux is followed.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::ca_after_slow_start;
use crate::reno::reno_ssthresh;
use crate::{AckSample, CaState, CcCx, CongestionControl, INFINITE_SSTHRESH};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Linux `BICTCP_BETA_SCALE`: β and the fast-convergence factor are x/1024.
const BETA_SCALE: u32 = 1024;
/// Linux `BICTCP_B`: the binary search moves to 1/B of the distance to W_max.
const BICTCP_B: u32 = 4;
/// Linux `ACK_RATIO_SHIFT`: `delayed_ack` is packets per ACK in 1/16 units.
const ACK_RATIO_SHIFT: u32 = 4;
/// Jiffies per second (CONFIG_HZ_1000); `cnt` is recomputed at least every HZ/32.
const HZ: u64 = 1000;
/// Before any loss (W_max = 0) grow at least 5 % per RTT (Linux: cnt ≤ 20).
const NO_LOSS_MAX_CNT: u32 = 20;

/// Parameters of BIC (the Linux module parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BicConfig {
    /// Multiplicative decrease factor β, unitless: ssthresh = β·cwnd above `low_window`.
    /// Linux keeps it as x/1024, so it is rounded to a multiple of 1/1024. Default 819/1024.
    pub beta: f64,
    /// Fast convergence: after a loss below W_max remember only (1+β)/2 of the window.
    pub fast_convergence: bool,
    /// Largest increase per RTT in the binary search, packets (S_max).
    pub max_increment: u32,
    /// At or below this cwnd, packets, BIC behaves as Reno.
    pub low_window: u32,
    /// RTTs to cover the last B packets to W_max (Linux smooth_part).
    pub smooth_part: u32,
    /// Initial ssthresh in packets; 0 = infinite (Linux default).
    pub initial_ssthresh: u32,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig { beta: 819.0 / 1024.0, fast_convergence: true, max_increment: 16, low_window: 14, smooth_part: 20, initial_ssthresh: 0 }
    }
}

impl AlgorithmConfig for BicConfig {
    const NAME: &'static str = "bic";
    const SUMMARY: &'static str = "BIC binary increase, Linux tcp_bic.c (Xu/Harfoush/Rhee 2004)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "beta", unit: "", doc: "multiplicative decrease factor, rounded to a multiple of 1/1024" },
        ParamDoc { name: "fast_convergence", unit: "", doc: "remember only (1+β)/2 of W_max after a loss below it" },
        ParamDoc { name: "max_increment", unit: "packets", doc: "largest binary-search step per RTT (S_max)" },
        ParamDoc { name: "low_window", unit: "packets", doc: "Reno behaviour at or below this cwnd" },
        ParamDoc { name: "smooth_part", unit: "RTTs", doc: "RTTs spent on the last B packets to W_max" },
        ParamDoc { name: "initial_ssthresh", unit: "packets", doc: "initial ssthresh, 0 = infinite" },
    ];

    fn validate(&self) -> Result<(), String> {
        check_range("beta", self.beta, self.beta > 0.0 && self.beta < 1.0, "0 < beta < 1")?;
        check_range("max_increment", self.max_increment, self.max_increment >= 1, "max_increment ≥ 1")?;
        check_range("smooth_part", self.smooth_part, self.smooth_part >= 1, "smooth_part ≥ 1")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Bic::new(self))
    }
}

/// BIC state (Linux `struct bictcp`) with its parameters.
#[derive(Clone, Debug)]
pub struct Bic {
    /// β·1024.
    beta: u32,
    config: BicConfig,
    /// ACKs per +1 of cwnd.
    cnt: u32,
    /// W_max (Linux `last_max_cwnd`); 0 = no loss yet.
    w_max: u32,
    last_cwnd: u32,
    /// When `cnt` was last computed, jiffies.
    last_time: u64,
    /// Start of the growth epoch, jiffies (`None` where Linux has 0). Linux only records it.
    epoch_start: Option<u64>,
    /// Packets per ACK in 1/16 units (EWMA with gain 1/16).
    delayed_ack: u32,
}

impl Bic {
    pub fn new(config: &BicConfig) -> Self {
        let beta = (config.beta * f64::from(BETA_SCALE)).round().clamp(1.0, f64::from(BETA_SCALE - 1)) as u32;
        let mut bic = Bic { beta, config: config.clone(), cnt: 0, w_max: 0, last_cwnd: 0, last_time: 0, epoch_start: None, delayed_ack: 0 };
        bic.reset();
        bic
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.w_max = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// Linux `bictcp_update`: ACKs per +1 for a window of `cwnd` at jiffy `now`.
    fn update(&mut self, cwnd: u32, now: u64) {
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        self.epoch_start.get_or_insert(now);
        let c = &self.config;
        if cwnd <= c.low_window {
            self.cnt = cwnd;
            return;
        }
        let smooth = cwnd.saturating_mul(c.smooth_part) / BICTCP_B;
        self.cnt = if cwnd < self.w_max {
            // Binary search: a 1/B step towards W_max, at most max_increment per RTT.
            let dist = (self.w_max - cwnd) / BICTCP_B;
            if dist > c.max_increment {
                cwnd / c.max_increment
            } else if dist <= 1 {
                smooth
            } else {
                cwnd / dist
            }
        } else if cwnd < self.w_max.saturating_add(BICTCP_B) {
            smooth
        } else if cwnd < self.w_max.saturating_add(c.max_increment.saturating_mul(BICTCP_B - 1)) {
            // Max probing: slow start away from W_max.
            cwnd * (BICTCP_B - 1) / (cwnd - self.w_max)
        } else {
            cwnd / c.max_increment
        };
        if self.w_max == 0 {
            self.cnt = self.cnt.min(NO_LOSS_MAX_CNT);
        }
        self.cnt = ((u64::from(self.cnt) << ACK_RATIO_SHIFT) / u64::from(self.delayed_ack)).max(1) as u32;
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        BicConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        self.reset();
        if self.config.initial_ssthresh != 0 {
            cx.ssthresh = self.config.initial_ssthresh.min(INFINITE_SSTHRESH);
        }
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        self.epoch_start = None;
        let cwnd = u64::from(cx.cwnd);
        let beta = u64::from(self.beta);
        let scale = u64::from(BETA_SCALE);
        self.w_max =
            if cx.cwnd < self.w_max && self.config.fast_convergence { (cwnd * (scale + beta) / (2 * scale)) as u32 } else { cx.cwnd };
        if cx.cwnd <= self.config.low_window {
            reno_ssthresh(cx)
        } else {
            ((cwnd * beta / scale) as u32).max(2)
        }
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if !ca_after_slow_start(cx, acked) {
            return;
        }
        self.update(cx.cwnd, cx.now.as_jiffies());
        cx.cong_avoid_ai(self.cnt, 1);
    }

    fn set_state(&mut self, _cx: &mut CcCx, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    fn pkts_acked(&mut self, cx: &mut CcCx, sample: &AckSample) {
        if cx.ca_state == CaState::Open {
            let d = self.delayed_ack;
            self.delayed_ack = d.saturating_add(sample.pkts_acked) - (d >> ACK_RATIO_SHIFT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{SimDuration, SimTime};

    /// BIC in congestion avoidance at `cwnd` (ssthresh = cwnd), cwnd-limited.
    fn setup(cwnd: u32) -> (Bic, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        let mut bic = Bic::new(&BicConfig::default());
        bic.init(&mut cx);
        (bic, cx)
    }

    /// One ACK covering `pkts` packets at `ms`: pkts_acked, then cong_avoid.
    fn ack(bic: &mut Bic, cx: &mut CcCx, ms: u64, pkts: u32) {
        cx.now = SimTime::ZERO + SimDuration::from_millis(ms);
        bic.pkts_acked(cx, &AckSample { pkts_acked: pkts, rtt_us: 100_000, in_flight: cx.cwnd });
        bic.cong_avoid(cx, pkts);
    }

    #[test]
    fn linux_constants_follow_from_the_parameters() {
        assert_eq!(Bic::new(&BicConfig::default()).beta, 819);
        assert_eq!(Bic::new(&BicConfig { beta: 0.8, ..BicConfig::default() }).beta, 819);
        // 819.2
    }

    // docs/validation.md BIC 1
    #[test]
    fn at_or_below_low_window_growth_is_reno_and_loss_halves() {
        // cwnd 14 ≤ 14: cnt = cwnd = 14 ACKs per +1, unscaled by the ACK ratio (Linux returns
        // before scaling): with one packet per ACK 13 ACKs leave 14, the 14th makes 15 — Reno.
        // (With ACK-every-2 it is 28 packets per +1, half of Reno, as in Linux.)
        let (mut bic, mut cx) = setup(14);
        for k in 0..13 {
            ack(&mut bic, &mut cx, k, 1);
        }
        assert_eq!((bic.cnt, cx.cwnd), (14, 14));
        ack(&mut bic, &mut cx, 13, 1);
        assert_eq!(cx.cwnd, 15);
        // Loss at 14 ≤ low_window halves: max(14/2, 2) = 7; at 15: ⌊15·819/1024⌋ = 11.
        cx.cwnd = 14;
        assert_eq!(bic.ssthresh(&mut cx), 7);
        cx.cwnd = 15;
        assert_eq!(bic.ssthresh(&mut cx), 11);
        cx.cwnd = 3;
        assert_eq!(bic.ssthresh(&mut cx), 2);
    }

    #[test]
    fn ack_ratio_settles_at_31_sixteenths_with_one_packet_per_ack() {
        // Linux's integer EWMA: 32 + 1 − 32/16 = 31, then 31 + 1 − 31/16 = 31 forever, so one
        // packet per ACK reads as ≈ 1.94. W_max 1000, cwnd 512: nominal cnt 512/16 = 32
        // becomes ⌊32·16/31⌋ = 16 ACKs per +1, i.e. 32 packets per RTT instead of 16.
        let (mut bic, mut cx) = setup(1000);
        bic.ssthresh(&mut cx);
        cx.cwnd = 512;
        cx.ssthresh = 512;
        for k in 0..20 {
            ack(&mut bic, &mut cx, 100 * k, 1);
            assert_eq!(bic.delayed_ack, 31);
        }
        assert_eq!(bic.cnt, 16);
        // ACK-every-2 keeps it at 32 (32 + 2 − 2).
        ack(&mut bic, &mut cx, 3_000, 2);
        assert_eq!(bic.delayed_ack, 32);
        // Outside Open the ratio is not sampled.
        cx.ca_state = CaState::Recovery;
        bic.pkts_acked(&mut cx, &AckSample { pkts_acked: 10, rtt_us: -1, in_flight: 14 });
        assert_eq!(bic.delayed_ack, 32);
    }

    // docs/validation.md BIC 2
    #[test]
    fn first_loss_sets_w_max_and_a_lower_second_loss_converges_fast() {
        // ⌊100·819/1024⌋ = ⌊79.98⌋ = 79; W_max = cwnd = 100.
        let (mut bic, mut cx) = setup(100);
        assert_eq!(bic.ssthresh(&mut cx), 79);
        assert_eq!(bic.w_max, 100);
        // 90 < W_max: W_max = ⌊90·1843/2048⌋ = ⌊80.99⌋ = 80; ssthresh ⌊90·819/1024⌋ = ⌊71.98⌋ = 71.
        cx.cwnd = 90;
        assert_eq!(bic.ssthresh(&mut cx), 71);
        assert_eq!(bic.w_max, 80);
        // Exactly: a loss at 2048 below W_max 3000 remembers 2048·1843/2048 = 1843.
        cx.cwnd = 3000;
        bic.ssthresh(&mut cx);
        cx.cwnd = 2048;
        bic.ssthresh(&mut cx);
        assert_eq!(bic.w_max, 1843);
        // Without fast convergence W_max = 90.
        let mut bic = Bic::new(&BicConfig { fast_convergence: false, ..BicConfig::default() });
        cx.cwnd = 100;
        bic.ssthresh(&mut cx);
        cx.cwnd = 90;
        bic.ssthresh(&mut cx);
        assert_eq!(bic.w_max, 90);
    }

    // docs/validation.md BIC 3
    #[test]
    fn far_below_w_max_growth_is_at_most_max_increment_per_rtt() {
        // W_max 1000, cwnd 512: dist = 488/4 = 122 > 16 → cnt = 512/16 = 32 packets, scaled by
        // 16/32 (ACK every 2) → 16 ACKs per +1. One RTT = 256 ACKs (cwnd 512, 2 packets
        // each) → 256/16 = 16 packets (cnt stays 16 up to 528: ⌊⌊528/16⌋·16/32⌋ = 16).
        let (mut bic, mut cx) = setup(1000);
        bic.ssthresh(&mut cx);
        cx.cwnd = 512;
        cx.ssthresh = 512;
        for k in 0..256 {
            ack(&mut bic, &mut cx, k / 4, 2);
            if k == 0 {
                assert_eq!(bic.cnt, 16);
            }
        }
        assert_eq!(cx.cwnd, 528);
        // Close to W_max the step shrinks: cwnd 980 → dist 5 → cnt = 980/5 = 196 → 98 ACKs.
        cx.cwnd = 980;
        ack(&mut bic, &mut cx, 1000, 2);
        assert_eq!(bic.cnt, 98);
        // dist = 2/4 = 0 ≤ 1: cnt = 20·cwnd/4 = 4990 → 2495 ACKs (the plateau).
        cx.cwnd = 998;
        ack(&mut bic, &mut cx, 1100, 2);
        assert_eq!(bic.cnt, 2495);
        // Max probing above W_max: cwnd 1010 → 3·1010/10 = 303 → 151 ACKs; far above → cwnd/16.
        cx.cwnd = 1010;
        ack(&mut bic, &mut cx, 1200, 2);
        assert_eq!(bic.cnt, 151);
        cx.cwnd = 1100;
        ack(&mut bic, &mut cx, 1300, 2);
        assert_eq!(bic.cnt, 1100 / 16 * 16 / 32);
    }

    #[test]
    fn cnt_is_recomputed_only_on_a_new_cwnd_or_after_a_32nd_of_a_second() {
        let (mut bic, mut cx) = setup(1000);
        bic.ssthresh(&mut cx);
        cx.cwnd = 512;
        cx.ssthresh = 512;
        ack(&mut bic, &mut cx, 0, 2);
        assert_eq!(bic.cnt, 16);
        bic.w_max = 530; // dist = 18/4 = 4 → cnt would be 512/4·16/32 = 64
        ack(&mut bic, &mut cx, 31, 2);
        assert_eq!(bic.cnt, 16);
        ack(&mut bic, &mut cx, 32, 2);
        assert_eq!(bic.cnt, 64);
    }

    #[test]
    fn before_any_loss_and_after_rto_growth_is_at_least_5_percent_per_rtt() {
        // W_max = 0: cnt = min(cwnd/16, 20) = 20, scaled 16/32 → 10.
        let (mut bic, mut cx) = setup(1000);
        ack(&mut bic, &mut cx, 0, 2);
        assert_eq!(bic.cnt, 10);
        bic.ssthresh(&mut cx);
        assert_eq!(bic.w_max, 1000);
        bic.set_state(&mut cx, CaState::Loss);
        assert_eq!((bic.w_max, bic.epoch_start, bic.delayed_ack), (0, None, 32));
    }

    #[test]
    fn initial_ssthresh_is_applied_at_init() {
        let mut cx = CcCx::new(1500);
        let mut bic = Bic::new(&BicConfig { initial_ssthresh: 64, ..BicConfig::default() });
        bic.init(&mut cx);
        assert_eq!(cx.ssthresh, 64);
    }
}
