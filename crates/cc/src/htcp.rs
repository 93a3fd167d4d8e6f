//! H-TCP as Linux tcp_htcp.c (Leith & Shorten, "H-TCP: TCP for
//! high-speed and long-distance networks", PFLDnet 2004): the increase α grows with the
//! time Δ since the last congestion event (α = 2·(1−β)·(1 + 10(Δ−1) + ¼(Δ−1)²) for
//! Δ > 1 s, scaled by RTT), and the backoff β = minRTT/maxRTT ∈ [0.5, 0.8] once the
//! measured bandwidth is stable across congestion events.
//!
//! Linux arithmetic: times in jiffies (HZ = 1000, RTT samples rounded up to a jiffy), α
//! and β in 1/128. Where Linux's u32 intermediates would wrap (α's Δ² term after ≈131 s
//! without congestion, the throughput product) this uses 64 bits and saturates α instead.
//! Linux marks "no undo copy" with last_cong = 0; here it is an `Option`, so a connection
//! whose first event comes at jiffy 0 behaves as one at any other time. ns-3 TcpHtcp uses
//! floats, DeltaL = 1 s, a throughput-ratio switch of 0.2 and no RTT-scaling flag; Linux is
//! followed.

use crate::config::{AlgorithmConfig, ParamDoc};
use crate::reno::ca_after_slow_start;
use crate::{AckSample, CaState, CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Linux `ALPHA_BASE`: 1.0 in 1/128 (one packet per RTT).
const ALPHA_BASE: u32 = 1 << 7;
/// Linux `BETA_MIN` = 0.5 and `BETA_MAX` = 102/128 ≈ 0.8.
const BETA_MIN: u32 = 1 << 6;
const BETA_MAX: u32 = 102;
/// Jiffies per second (CONFIG_HZ_1000); also Δ_L = 1 s, the low-speed period.
const HZ: u64 = 1000;
/// maxRTT may rise by at most this per sample, jiffies (Linux `msecs_to_jiffies(20)`).
const MAX_RTT_STEP: u32 = 20;
/// β follows the RTT ratio only when minRTT exceeds this, jiffies (10 ms).
const MIN_RTT_FOR_BETA: u32 = 10;
/// maxRTT fades to minRTT + 95 % of the excess at each congestion event.
const MAX_RTT_FADE_PERCENT: u32 = 95;
/// Bandwidth samples within this many minRTTs of a congestion event reset the estimate.
const BW_RESET_RTTS: u64 = 3;

/// Parameters of H-TCP (the Linux module parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HtcpConfig {
    /// Scale α by the RTT (relative to 100 ms, clamped to 0.5…10) so flows with different
    /// RTTs converge.
    pub use_rtt_scaling: bool,
    /// Fall back to β = 0.5 when the maximum bandwidth changed by more than 20 % between
    /// congestion events.
    pub use_bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig { use_rtt_scaling: true, use_bandwidth_switch: true }
    }
}

impl AlgorithmConfig for HtcpConfig {
    const NAME: &'static str = "htcp";
    const SUMMARY: &'static str = "H-TCP, Linux tcp_htcp.c (Leith/Shorten; α grows with time since congestion)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "use_rtt_scaling", unit: "", doc: "scale α by RTT/100 ms (clamped to 0.5…10)" },
        ParamDoc { name: "use_bandwidth_switch", unit: "", doc: "β = 0.5 after a bandwidth change > 20 %" },
    ];

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Htcp::new(self))
    }
}

/// What `undo_cwnd` restores (Linux `undo_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Undo {
    last_cong: u64,
    max_rtt: u32,
    old_max_b: u32,
}

/// H-TCP state (Linux `struct htcp`); times in jiffies, bandwidths in packets/s.
#[derive(Clone, Debug)]
pub struct Htcp {
    config: HtcpConfig,
    /// Increase per RTT, 1/128 packets.
    alpha: u32,
    /// Backoff factor, 1/128.
    beta: u32,
    /// β may follow the RTT ratio (set after one congestion event with stable bandwidth).
    modeswitch: bool,
    /// Packets acked by the current ACK, for the window credit (1 unless set in Open).
    pkts_acked: u32,
    /// Packets acked since `lasttime`, for the throughput sample.
    packetcount: u32,
    /// Smallest RTT seen, 0 = none; largest "recent" RTT.
    min_rtt: u32,
    max_rtt: u32,
    /// End of the last congestion event (start of Δ).
    last_cong: u64,
    undo: Option<Undo>,
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    /// Smoothed throughput.
    bi: u32,
    lasttime: u64,
}

/// Linux `usecs_to_jiffies` (rounds up).
fn us_to_jiffies(us: i64) -> u32 {
    (us as u64).div_ceil(1_000_000 / HZ).min(u64::from(u32::MAX)) as u32
}

impl Htcp {
    pub fn new(config: &HtcpConfig) -> Self {
        Htcp {
            config: config.clone(),
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo: None,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    /// Linux `measure_rtt` with one sample in jiffies.
    fn measure_rtt(&mut self, cx: &CcCx, rtt: u32) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if cx.ca_state == CaState::Open {
            self.max_rtt = self.max_rtt.max(self.min_rtt);
            if self.max_rtt < rtt && rtt <= self.max_rtt.saturating_add(MAX_RTT_STEP) {
                self.max_rtt = rtt;
            }
        }
    }

    /// The throughput part of Linux `measure_achieved_throughput`: about once per window
    /// and minRTT, a delivery-rate sample; right after a congestion event it replaces the
    /// estimate, later it is smoothed with gain 1/4 and its maximum kept.
    fn measure_throughput(&mut self, cx: &CcCx, pkts_acked: u32, now: u64) {
        if !matches!(cx.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount = self.packetcount.saturating_add(pkts_acked);
        let elapsed = now.saturating_sub(self.lasttime);
        // Linux computes cwnd − max(α/128, 1) in u32: if it would wrap, no sample.
        let enough = cx.cwnd.checked_sub((self.alpha >> 7).max(1)).is_some_and(|need| self.packetcount >= need);
        if !enough || self.min_rtt == 0 || elapsed < u64::from(self.min_rtt) {
            return;
        }
        let cur = (u64::from(self.packetcount) * HZ / elapsed).min(u64::from(u32::MAX)) as u32;
        if now.saturating_sub(self.last_cong) / u64::from(self.min_rtt) <= BW_RESET_RTTS {
            self.min_b = cur;
            self.max_b = cur;
            self.bi = cur;
        } else {
            self.bi = ((3 * u64::from(self.bi) + u64::from(cur)) / 4) as u32;
            self.max_b = self.max_b.max(self.bi);
            self.min_b = self.min_b.min(self.max_b);
        }
        self.packetcount = 0;
        self.lasttime = now;
    }

    /// Linux `htcp_beta_update`.
    fn beta_update(&mut self) {
        if self.config.use_bandwidth_switch {
            let (max_b, old) = (u64::from(self.max_b), u64::from(self.old_max_b));
            self.old_max_b = self.max_b;
            if !(4 * old..=6 * old).contains(&(5 * max_b)) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > MIN_RTT_FOR_BETA && self.max_rtt > 0 {
            self.beta = ((self.min_rtt << 7) / self.max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// Linux `htcp_alpha_update` at jiffy `now`.
    fn alpha_update(&mut self, now: u64) {
        let mut diff = now.saturating_sub(self.last_cong);
        let mut factor: u64 = 1;
        if diff > HZ {
            diff -= HZ;
            factor = 1 + (10 * diff + (diff / 2) * (diff / 2) / HZ) / HZ;
        }
        if self.config.use_rtt_scaling && self.min_rtt != 0 {
            // RTT/100 ms in 1/8, clamped to [0.5, 10].
            let scale = ((HZ << 3) / (10 * u64::from(self.min_rtt))).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        let alpha = 2 * factor * u64::from((1 << 7) - self.beta);
        self.alpha = if alpha == 0 { ALPHA_BASE } else { alpha.min(u64::from(u32::MAX)) as u32 };
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        HtcpConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Self::new(&self.config);
        self.last_cong = cx.now.as_jiffies();
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        // Linux `htcp_param_update`, then β·cwnd.
        self.beta_update();
        self.alpha_update(cx.now.as_jiffies());
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + (self.max_rtt - self.min_rtt) * MAX_RTT_FADE_PERCENT / 100;
        }
        ((u64::from(cx.cwnd) * u64::from(self.beta)) >> 7).max(2) as u32
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if !ca_after_slow_start(cx, acked) {
            return;
        }
        // cwnd += α/cwnd per packet acked.
        if (u64::from(cx.cwnd_cnt) * u64::from(self.alpha)) >> 7 >= u64::from(cx.cwnd) {
            if cx.cwnd < cx.cwnd_clamp {
                cx.cwnd += 1;
            }
            cx.cwnd_cnt = 0;
            self.alpha_update(cx.now.as_jiffies());
        } else {
            cx.cwnd_cnt = cx.cwnd_cnt.saturating_add(self.pkts_acked);
        }
        self.pkts_acked = 1;
    }

    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        let now = cx.now.as_jiffies();
        match new_state {
            // Δ counts from the end of a reduction.
            CaState::Open => {
                if self.undo.take().is_some() {
                    self.last_cong = now;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => {
                self.undo = Some(Undo { last_cong: self.last_cong, max_rtt: self.max_rtt, old_max_b: self.old_max_b });
                self.last_cong = now;
            }
            CaState::Disorder => {}
        }
    }

    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        if let Some(u) = self.undo.take() {
            self.last_cong = u.last_cong;
            self.max_rtt = u.max_rtt;
            self.old_max_b = u.old_max_b;
        }
        cx.cwnd.max(cx.prior_cwnd)
    }

    fn pkts_acked(&mut self, cx: &mut CcCx, sample: &AckSample) {
        if cx.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked;
        }
        if sample.rtt_us > 0 {
            self.measure_rtt(cx, us_to_jiffies(sample.rtt_us));
        }
        if self.config.use_bandwidth_switch {
            self.measure_throughput(cx, sample.pkts_acked, cx.now.as_jiffies());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{SimDuration, SimTime};

    /// H-TCP initialised at t = 0 (last_cong = 0) in congestion avoidance at `cwnd`,
    /// cwnd-limited.
    fn setup(config: &HtcpConfig, cwnd: u32) -> (Htcp, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        let mut h = Htcp::new(config);
        h.init(&mut cx);
        (h, cx)
    }

    fn at_ms(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    /// One ACK of one packet at `ms` with an RTT sample: pkts_acked, then cong_avoid.
    fn ack(h: &mut Htcp, cx: &mut CcCx, ms: u64, rtt_ms: u32) {
        cx.now = at_ms(ms);
        h.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us: i64::from(rtt_ms) * 1000, in_flight: cx.cwnd });
        h.cong_avoid(cx, 1);
    }

    /// α as recomputed by a window step at `ms` (the credit is topped up so that the next
    /// congestion-avoidance ACK steps; cwnd_cnt·α/128 ≥ cwnd holds for any α ≥ 32).
    fn alpha_at(h: &mut Htcp, cx: &mut CcCx, ms: u64) -> u32 {
        cx.now = at_ms(ms);
        cx.cwnd_cnt = 4 * cx.cwnd;
        h.cong_avoid(cx, 1);
        assert_eq!(cx.cwnd_cnt, 0);
        h.alpha
    }

    // docs/validation.md H-TCP 1
    #[test]
    fn within_a_second_of_congestion_alpha_is_one_packet_per_rtt() {
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 10);
        ack(&mut h, &mut cx, 1, 100); // minRTT 100 jiffies
                                      // Δ = 2 s first raises α (test 2), then a congestion event at 2 s restarts Δ.
        assert_eq!(alpha_at(&mut h, &mut cx, 2_000), 1408);
        cx.now = at_ms(2_000);
        h.ssthresh(&mut cx);
        h.set_state(&mut cx, CaState::Recovery);
        cx.now = at_ms(2_100);
        h.set_state(&mut cx, CaState::Open);
        assert_eq!(h.last_cong, 2_100);
        // Δ = 900 ms ≤ 1 s: factor 1; scale = 8000/(10·100) = 8 → 8·1/8 = 1; β = 64:
        // α = 2·1·(128 − 64) = 128.
        assert_eq!(alpha_at(&mut h, &mut cx, 3_000), 128);
        // With α = 128: credit·128/128 ≥ cwnd is tested before adding, so cwnd (12) ACKs
        // fill the credit and one more steps: +1 per cwnd + 1 ACKs ≈ 1 packet per RTT.
        let cwnd = cx.cwnd;
        for k in 0..=cwnd {
            assert_eq!(cx.cwnd, cwnd, "ACK {k}");
            ack(&mut h, &mut cx, 3_001, 100);
        }
        assert_eq!(cx.cwnd, cwnd + 1);
    }

    // docs/validation.md H-TCP 2
    #[test]
    fn two_seconds_after_congestion_alpha_is_eleven_packets_per_rtt() {
        // Δ = 2000 jiffies > HZ: Δ − HZ = 1000; factor = 1 + (10·1000 + 500·500/1000)/1000 =
        // 1 + 10250/1000 = 11. minRTT 100 ms: scale 8 → 11·8/8 = 11: α = 2·11·64 = 1408.
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 110);
        ack(&mut h, &mut cx, 1, 100);
        assert_eq!(alpha_at(&mut h, &mut cx, 2_000), 1408);
        // 1408/128 = 11 packets per RTT: at cwnd 111, ⌊credit·1408/128⌋ = 11·credit ≥ 111
        // at credit 11, so the 12th ACK steps.
        for _ in 0..11 {
            ack(&mut h, &mut cx, 2_001, 100);
        }
        assert_eq!(cx.cwnd, 111);
        ack(&mut h, &mut cx, 2_001, 100);
        assert_eq!(cx.cwnd, 112);
        // The quadratic term: Δ = 5 s → Δ − HZ = 4000: factor = 1 + (40000 + 2000²/1000)/1000
        // = 1 + 44 = 45 (≈ 1 + 10·4 + ¼·4²) → α = 2·45·64 = 5760.
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 110);
        ack(&mut h, &mut cx, 1, 100);
        assert_eq!(alpha_at(&mut h, &mut cx, 5_000), 5760);
        // RTT scaling, scale = 8000/(10·minRTT) clamped to [4, 80]: minRTT 50 ms → 16 →
        // 88/16 = 5 → α = 640; 200 ms → 4 → 88/4 = 22 → α = 2816; 400 ms → 2, clamped to 4 →
        // 2816 again; 5 ms → 160, clamped to 80 → 88/80 = 1 → α = 128, and at Δ = 5 s
        // 360/80 = 4 → α = 512. Without RTT scaling α = 1408 whatever the RTT.
        for (rtt, ms, alpha) in [(50, 2_000, 640), (200, 2_000, 2816), (400, 2_000, 2816), (5, 2_000, 128), (5, 5_000, 512)] {
            let (mut h, mut cx) = setup(&HtcpConfig::default(), 110);
            ack(&mut h, &mut cx, 1, rtt);
            assert_eq!(alpha_at(&mut h, &mut cx, ms), alpha, "minRTT {rtt} ms at {ms} ms");
        }
        let (mut h, mut cx) = setup(&HtcpConfig { use_rtt_scaling: false, ..HtcpConfig::default() }, 110);
        ack(&mut h, &mut cx, 1, 5);
        assert_eq!(alpha_at(&mut h, &mut cx, 2_000), 1408);
    }

    /// ACKs of one packet every `gap_ms` for `ms`, RTT samples alternating between the two
    /// values, in whatever CA state `cx` is in; not cwnd-limited, so cwnd stays.
    fn run(h: &mut Htcp, cx: &mut CcCx, ms: u64, gap_ms: u64, rtts: (u32, u32)) {
        let start = cx.now.as_jiffies();
        for k in 1..=ms / gap_ms {
            let rtt = if k % 2 == 0 { rtts.0 } else { rtts.1 };
            cx.now = at_ms(start + k * gap_ms);
            h.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us: i64::from(rtt) * 1000, in_flight: cx.cwnd });
            h.cong_avoid(cx, 1);
        }
    }

    /// A fast-retransmit episode now: ssthresh, Recovery for 50 ms of ACKs, back to Open.
    fn congestion_event(h: &mut Htcp, cx: &mut CcCx, rtts: (u32, u32)) -> u32 {
        let ssthresh = h.ssthresh(cx);
        h.set_state(cx, CaState::Recovery);
        cx.ca_state = CaState::Recovery;
        run(h, cx, 50, 1, rtts);
        h.set_state(cx, CaState::Open);
        cx.ca_state = CaState::Open;
        ssthresh
    }

    /// Three congestion events 200 ms apart on a steady 1000 packets/s path with RTT
    /// samples alternating `rtts`; (β, modeswitch) after each. At cwnd 20 a throughput
    /// sample needs 19 packets and minRTT: the first after an event comes within 3 minRTTs
    /// and resets the estimate to 1000 (with a later first sample the estimate would start
    /// from Bi = 0 through the 1/4 filter).
    fn three_events(rtts: (u32, u32)) -> Vec<(u32, bool)> {
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 20);
        cx.is_cwnd_limited = false;
        (0..3)
            .map(|_| {
                run(&mut h, &mut cx, 200, 1, rtts);
                assert_eq!(h.max_b, 1000, "{rtts:?}");
                congestion_event(&mut h, &mut cx, rtts);
                (h.beta, h.modeswitch)
            })
            .collect()
    }

    // docs/validation.md H-TCP 3
    #[test]
    fn beta_follows_min_over_max_rtt_once_modeswitch_is_set() {
        // Event 1: old_maxB = 0, so 5·1000 ∉ [0, 0] trips the bandwidth switch (β 0.5,
        // modeswitch off); event 2: 5000 ∈ [4000, 6000] but modeswitch was off → β 0.5,
        // modeswitch on; event 3: β = ⌊40·128/50⌋ = ⌊102.4⌋ = 102 (0.8, also the cap).
        assert_eq!(three_events((40, 50)), [(64, false), (64, true), (102, true)]);
        // Inside the caps: ⌊60·128/80⌋ = 96 (maxRTT fades to 60 + ⌊20·95/100⌋ = 79 at each
        // event and the next 80 ms sample, within 79 + 20, restores it).
        assert_eq!(three_events((60, 80)), [(64, false), (64, true), (96, true)]);
        // Above the cap: ⌊45·128/50⌋ = 115 → 102.
        assert_eq!(three_events((45, 50)), [(64, false), (64, true), (102, true)]);
        // minRTT 8 ms ≤ 10 ms: β stays 0.5.
        assert_eq!(three_events((8, 10)), [(64, false), (64, true), (64, true)]);
        // β·cwnd: ⌊40·102/128⌋ = 31.
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 40);
        h.beta = 102;
        h.modeswitch = true;
        h.old_max_b = 0; // maxB 0 too: 0 ∈ [0, 0]
        h.min_rtt = 40;
        h.max_rtt = 50;
        assert_eq!(h.ssthresh(&mut cx), 31);
    }

    #[test]
    fn a_bandwidth_change_above_20_percent_resets_beta() {
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 40);
        cx.is_cwnd_limited = false;
        for _ in 0..2 {
            run(&mut h, &mut cx, 200, 1, (40, 50));
            congestion_event(&mut h, &mut cx, (40, 50));
        }
        assert!(h.modeswitch);
        // Half the rate: 39 packets in 78 ms → 500 packets/s; 5·500 ∉ [4·1000, 6·1000].
        run(&mut h, &mut cx, 200, 2, (40, 50));
        assert_eq!(h.max_b, 500);
        congestion_event(&mut h, &mut cx, (40, 50));
        assert_eq!((h.beta, h.modeswitch, h.old_max_b), (64, false, 500));
    }

    #[test]
    fn bandwidth_switch_tolerates_exactly_20_percent() {
        // Stable if 5·maxB ∈ [4·old, 6·old]; with maxB 1000: old 833 fails (6·833 = 4998 <
        // 5000), 834 passes (6·834 = 5004), 1250 passes (4·1250 = 5000), 1251 fails (5004).
        for (old, stable) in [(833, false), (834, true), (1000, true), (1250, true), (1251, false)] {
            let (mut h, mut cx) = setup(&HtcpConfig::default(), 40);
            (h.max_b, h.old_max_b, h.modeswitch) = (1000, old, true);
            (h.min_rtt, h.max_rtt) = (40, 50);
            h.ssthresh(&mut cx);
            assert_eq!((h.modeswitch, h.old_max_b), (stable, 1000), "old_maxB {old}");
            assert_eq!(h.beta, if stable { 102 } else { 64 });
        }
    }

    #[test]
    fn max_rtt_rises_at_most_20_ms_per_sample_and_only_in_open() {
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 40);
        ack(&mut h, &mut cx, 1, 40);
        ack(&mut h, &mut cx, 2, 61); // > 40 + 20: ignored
        assert_eq!((h.min_rtt, h.max_rtt), (40, 40));
        ack(&mut h, &mut cx, 3, 60);
        assert_eq!(h.max_rtt, 60);
        cx.ca_state = CaState::Recovery;
        ack(&mut h, &mut cx, 4, 70);
        assert_eq!(h.max_rtt, 60);
        // 39.001 ms rounds up to 40 jiffies.
        h.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: 39_001, in_flight: 40 });
        assert_eq!(h.min_rtt, 40);
    }

    #[test]
    fn undo_restores_the_congestion_time_and_rtt_memory() {
        let (mut h, mut cx) = setup(&HtcpConfig::default(), 40);
        ack(&mut h, &mut cx, 1, 40);
        ack(&mut h, &mut cx, 2, 50);
        cx.now = at_ms(5_000);
        cx.prior_cwnd = 40;
        // As Linux: ssthresh (fading maxRTT to 40 + ⌊10·95/100⌋ = 49) runs before
        // set_state saves the undo copy, so undo restores 49 and the old last_cong.
        h.ssthresh(&mut cx);
        h.set_state(&mut cx, CaState::Recovery);
        assert_eq!((h.last_cong, h.max_rtt), (5_000, 49));
        h.max_rtt = 70;
        cx.cwnd = 20;
        assert_eq!(h.undo_cwnd(&mut cx), 40);
        assert_eq!((h.last_cong, h.max_rtt, h.undo), (0, 49, None));
        // Nothing to undo: leaving for Open keeps last_cong.
        cx.now = at_ms(6_000);
        h.set_state(&mut cx, CaState::Open);
        assert_eq!(h.last_cong, 0);
    }
}
