//! TCP Illinois as Linux tcp_illinois.c (Liu, Başar, Srikant, "TCP-Illinois:
//! a loss- and delay-based congestion control algorithm for high-speed networks", 2008):
//! Reno-like AIMD whose increase α (0.3…10 packets per RTT) and decrease β (1/8…1/2) are
//! set once per RTT from the average queueing delay da relative to the largest seen, dm.
//!
//! Linux integer arithmetic: α in 1/128, β in 1/64, RTTs in µs capped at 2³²/1280 µs so
//! the α formula cannot overflow. Linux keeps the per-RTT sample count in 16 bits; here it
//! is 32 bits (no wrap at 65 536 samples per RTT). ns-3 TcpIllinois uses the same
//! constants with doubles and updates per ACK count rather than per `end_seq`; Linux is
//! followed.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::ca_after_slow_start;
use crate::{AckSample, CaState, CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Linux `ALPHA_SHIFT`: α is x/128.
const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// Linux `ALPHA_MIN` = ⌊3·128/10⌋ = 38 ≈ 0.297.
const ALPHA_MIN: u32 = 3 * ALPHA_SCALE / 10;
/// Linux `ALPHA_MAX` = 10.0.
const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// Linux `ALPHA_BASE` = 1.0 (Reno).
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// Linux `RTT_MAX`: RTT samples are capped here (µs, ≈ 3.36 s) so dm·α_max fits in 32 bits.
const RTT_MAX_US: u32 = u32::MAX / ALPHA_MAX;
/// Linux `BETA_SHIFT`: β is x/64.
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// Linux `BETA_MIN` = 1/8.
const BETA_MIN: u32 = BETA_SCALE / 8;
/// Linux `BETA_MAX` = `BETA_BASE` = 1/2 (Reno).
const BETA_MAX: u32 = BETA_SCALE / 2;
const BETA_BASE: u32 = BETA_MAX;

/// Parameters of Illinois (the Linux module parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct IllinoisConfig {
    /// Below this cwnd, packets, α = 1 and β = 1/2 (Reno).
    pub win_thresh: u32,
    /// RTTs of low delay, after delay had risen, before α returns to α_max.
    pub theta: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig { win_thresh: 15, theta: 5 }
    }
}

impl AlgorithmConfig for IllinoisConfig {
    const NAME: &'static str = "illinois";
    const SUMMARY: &'static str = "TCP Illinois, Linux tcp_illinois.c (delay-adaptive AIMD, Liu/Başar/Srikant)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "win_thresh", unit: "packets", doc: "Reno α and β below this cwnd" },
        ParamDoc { name: "theta", unit: "RTTs", doc: "low-delay RTTs before α returns to its maximum" },
    ];

    fn validate(&self) -> Result<(), String> {
        check_range("theta", self.theta, self.theta <= 255, "theta ≤ 255")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Illinois::new(self))
    }
}

/// Illinois state (Linux `struct illinois`).
#[derive(Clone, Debug)]
pub struct Illinois {
    config: IllinoisConfig,
    /// Sum and count of the RTT samples of the current RTT, µs.
    sum_rtt: u64,
    cnt_rtt: u32,
    /// Smallest and largest RTT ever seen, µs.
    base_rtt: u32,
    max_rtt: u32,
    /// The current RTT ends when an ACK passes this.
    end_seq: u32,
    /// Additive increase, 1/128 packets per RTT.
    alpha: u32,
    /// Multiplicative decrease, 1/64.
    beta: u32,
    /// Packets cumulatively acked by the current ACK (from `pkts_acked`).
    acked: u32,
    /// The average delay went above dm/100 since α was last at its maximum.
    rtt_above: bool,
    /// Consecutive low-delay RTTs since then.
    rtt_low: u32,
}

/// Linux `after(a, b)` on 32-bit sequence numbers.
fn seq_after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// β from the average (da) and maximum (dm) queueing delay: 1/8 up to dm/10, 1/2 from
/// 8·dm/10, linear in between (Linux `beta`).
fn beta_for(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = (8 * u64::from(dm) / 10) as u32;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2)
}

impl Illinois {
    pub fn new(config: &IllinoisConfig) -> Self {
        Illinois {
            config: config.clone(),
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// Linux `rtt_reset`: a new RTT starts now (max_rtt is never aged).
    fn rtt_reset(&mut self, cx: &CcCx) {
        self.end_seq = cx.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// α from the delays (Linux `alpha`): α_max while delay stays under dm/100 (after a rise,
    /// only after `theta` such RTTs), else κ1/(κ2 + da), falling from α_max to α_min at dm.
    fn alpha_for(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            self.rtt_low += 1;
            if self.rtt_low < self.config.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        let (dm, da) = (dm - d1, da - d1);
        dm * ALPHA_MAX / (dm + da * (ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN)
    }

    /// Linux `update_params`, once per RTT.
    fn update_params(&mut self, cx: &CcCx) {
        if cx.cwnd < self.config.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt - self.base_rtt;
            let da = (self.sum_rtt / u64::from(self.cnt_rtt)) as u32 - self.base_rtt;
            self.alpha = self.alpha_for(da, dm);
            self.beta = beta_for(da, dm);
        }
        self.rtt_reset(cx);
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        IllinoisConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Self::new(&self.config);
        self.rtt_reset(cx);
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        let decrease = ((u64::from(cx.cwnd) * u64::from(self.beta)) >> BETA_SHIFT) as u32;
        (cx.cwnd - decrease).max(2)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        // The ACK's sequence is the new snd_una.
        if seq_after(cx.snd_una, self.end_seq) {
            self.update_params(cx);
        }
        if !ca_after_slow_start(cx, acked) {
            return;
        }
        // cwnd += α/cwnd per packet acked.
        cx.cwnd_cnt = cx.cwnd_cnt.saturating_add(self.acked);
        self.acked = 1;
        let delta = ((u64::from(cx.cwnd_cnt) * u64::from(self.alpha)) >> ALPHA_SHIFT) as u32;
        if delta >= cx.cwnd {
            cx.cwnd = (cx.cwnd + delta / cx.cwnd).min(cx.cwnd_clamp);
            cx.cwnd_cnt = 0;
        }
    }

    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(cx);
        }
    }

    fn pkts_acked(&mut self, _cx: &mut CcCx, sample: &AckSample) {
        self.acked = sample.pkts_acked;
        if sample.rtt_us < 0 {
            return;
        }
        let rtt = sample.rtt_us.min(i64::from(RTT_MAX_US)) as u32;
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += u64::from(rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Illinois in congestion avoidance at `cwnd` (ssthresh = cwnd). Not cwnd-limited, so
    /// the window stays put while the per-RTT parameters are exercised.
    fn setup(cwnd: u32) -> (Illinois, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.snd_nxt = cwnd;
        let mut il = Illinois::new(&IllinoisConfig::default());
        il.init(&mut cx);
        (il, cx)
    }

    /// One RTT: `cwnd` ACKs of one packet each with the given RTT samples (cycled), the
    /// flight sliding forward; the first ACK after `end_seq` closes the previous RTT.
    fn rtt(il: &mut Illinois, cx: &mut CcCx, samples_us: &[i64]) {
        for k in 0..cx.cwnd as usize {
            cx.snd_una += 1;
            cx.snd_nxt += 1;
            let rtt_us = samples_us[k % samples_us.len()];
            il.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us, in_flight: cx.cwnd });
            il.cong_avoid(cx, 1);
        }
    }

    // docs/validation.md Illinois 1
    #[test]
    fn below_win_thresh_alpha_is_1_and_beta_one_half() {
        let (mut il, mut cx) = setup(14);
        assert_eq!((il.alpha, il.beta), (ALPHA_MAX, BETA_BASE));
        rtt(&mut il, &mut cx, &[100_000]);
        rtt(&mut il, &mut cx, &[100_000]);
        assert_eq!((il.alpha, il.beta), (128, 32));
        // 14 − (14·32 >> 6) = 14 − 7 = 7.
        assert_eq!(il.ssthresh(&mut cx), 7);
        // Growth is Reno's: δ = cnt·128 >> 7 = cnt, so +1 once 14 are acked.
        cx.is_cwnd_limited = true;
        for _ in 0..13 {
            il.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 14);
        il.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 15);
    }

    // docs/validation.md Illinois 3
    #[test]
    fn delay_at_its_maximum_gives_alpha_min_and_beta_one_half() {
        let (mut il, mut cx) = setup(800);
        // base_rtt 100 ms, then an RTT at max_rtt 200 ms (its average too).
        rtt(&mut il, &mut cx, &[100_000]);
        rtt(&mut il, &mut cx, &[200_000]);
        // This closes it: dm = da = 100 000 µs, d1 = 1000:
        // α = 99000·1280 / (99000 + ⌊99000·1242/38⌋) = 126 720 000 / 3 334 736 = 38;
        // da ≥ d3 = 80 000 → β = 32.
        rtt(&mut il, &mut cx, &[200_000]);
        assert_eq!((il.alpha, il.beta), (38, 32));
        assert!(il.rtt_above);
        assert_eq!(il.ssthresh(&mut cx), 400); // 800 − 800·32/64
    }

    // docs/validation.md Illinois 2
    #[test]
    fn low_delay_after_high_waits_theta_rtts_for_alpha_max_and_beta_is_an_eighth() {
        let (mut il, mut cx) = setup(800);
        rtt(&mut il, &mut cx, &[100_000]);
        rtt(&mut il, &mut cx, &[200_000]);
        rtt(&mut il, &mut cx, &[100_000]); // closes the 200 ms RTT: α = 38 (as above)
        assert_eq!(il.alpha, 38);
        // RTTs at base: da = 0 ≤ d1 = 1000. The first four keep α (rtt_low 1..4); β = 1/8 at
        // once (da ≤ d2 = 10 000). The fifth (rtt_low reaches θ = 5) restores α_max.
        for low in 1..=4 {
            rtt(&mut il, &mut cx, &[100_000]);
            assert_eq!((il.alpha, il.beta, il.rtt_low), (38, 8, low));
        }
        rtt(&mut il, &mut cx, &[100_000]);
        assert_eq!((il.alpha, il.beta, il.rtt_low, il.rtt_above), (1280, 8, 0, false));
        // 800 − (800·8 >> 6) = 800 − 100 = 700.
        assert_eq!(il.ssthresh(&mut cx), 700);
        // α = 10: δ = cnt·1280 >> 7 = 10·cnt ≥ 800 at cnt 80 → +1 per 80 acked, +10 per RTT.
        cx.is_cwnd_limited = true;
        for _ in 0..79 {
            il.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 800);
        il.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 801);
    }

    #[test]
    fn never_above_means_alpha_max_at_once_and_mid_delay_is_linear() {
        let (mut il, mut cx) = setup(800);
        rtt(&mut il, &mut cx, &[100_000]);
        rtt(&mut il, &mut cx, &[100_000]);
        assert_eq!((il.alpha, il.beta), (ALPHA_MAX, BETA_MIN));
        // About half-way: an RTT alternating 100 and 200 ms. An RTT closes on its second
        // ACK (the first is not after end_seq), so the closed one holds 401 samples of 100 ms
        // and 399 of 200 ms: average ⌊119 900 000/800⌋ = 149 875, da = 49 875, dm = 100 000,
        // d2 = 10 000, d3 = 80 000: β = (8·80000 − 32·10000 + 24·49875)/70000 = ⌊21.67⌋ = 21.
        rtt(&mut il, &mut cx, &[100_000, 200_000]);
        rtt(&mut il, &mut cx, &[100_000]);
        assert_eq!(il.beta, 21);
        // α = 99000·1280 / (99000 + ⌊48875·1242/38⌋) = 126 720 000 / 1 696 440 = ⌊74.7⌋ = 74.
        assert_eq!(il.alpha, 74);
    }

    #[test]
    fn rto_resets_to_reno_and_samples_are_capped() {
        let (mut il, mut cx) = setup(800);
        il.set_state(&mut cx, CaState::Loss);
        assert_eq!((il.alpha, il.beta), (128, 32));
        il.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: 10_000_000, in_flight: 1 });
        assert_eq!(il.max_rtt, 3_355_443); // 2³²/1280
    }
}
