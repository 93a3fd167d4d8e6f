//! TCP Hybla as Linux tcp_hybla.c (Caini & Firrincieli, "TCP Hybla: a TCP
//! enhancement for heterogeneous networks", Int. J. Satellite Commun. Netw. 22(5), 2004).
//! Growth is normalised to a reference RTT RTT0 = 25 ms: with ρ = SRTT/RTT0 (≥ 1), each ACK
//! adds 2^ρ − 1 packets in slow start and ρ²/cwnd in congestion avoidance, so a long-RTT flow
//! grows per second like a 25 ms Reno flow. Loss handling is Reno's.
//!
//! Linux fixed point: ρ with 3 fractional bits (`rho_3ls`), ρ² with 7 (`rho2_7ls`), fractional
//! cwnd in 1/128 packets (`snd_cwnd_cents`), 2^(frac/8) from an 8-entry table; one increment
//! per ACK whatever it acks. Like Linux, ρ is recomputed only when SRTT falls below the
//! smallest SRTT seen. One difference: the simulator has no handshake, so SRTT may be 0 at
//! `init` where Linux has the SYN RTT; then the sender's initial window is kept (Linux would
//! set cwnd = ρ = 1 and never recompute ρ) and ρ is first computed from the first SRTT.
//!
//! ns-3 TcpHybla uses RRTT = 50 ms by default and floating point; Linux (25 ms) is followed.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::{CaState, CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Linux `hybla_fraction`: 128·2^(i/8) for i = 0..7, i.e. 2 to the fractional part of ρ in
/// 1/128 units.
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// Linux caps the slow-start exponent at 2^16.
const MAX_RHO_EXP: u32 = 16;
/// Linux `hybla_init` sets `snd_cwnd_clamp` to 65535.
const CWND_CLAMP: u32 = 65_535;

/// Parameters of Hybla (the Linux tcp_hybla.c module parameter).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HyblaConfig {
    /// Reference RTT RTT0 in ms: flows with SRTT ≤ RTT0 behave like Reno. Linux `rtt0` 25 ms
    /// (ns-3 RRTT 50 ms).
    pub rtt0_ms: u32,
}

impl Default for HyblaConfig {
    fn default() -> Self {
        HyblaConfig { rtt0_ms: 25 }
    }
}

impl AlgorithmConfig for HyblaConfig {
    const NAME: &'static str = "hybla";
    const SUMMARY: &'static str = "TCP Hybla, Linux tcp_hybla.c (growth scaled to a 25 ms reference RTT)";
    const PARAMS: &'static [ParamDoc] =
        &[ParamDoc { name: "rtt0_ms", unit: "ms", doc: "reference RTT: growth is that of Reno at this RTT" }];

    fn validate(&self) -> Result<(), String> {
        check_range("rtt0_ms", self.rtt0_ms, self.rtt0_ms >= 1, "rtt0_ms ≥ 1")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Hybla::new(self))
    }
}

/// Hybla state (Linux `struct hybla`).
#[derive(Clone, Debug)]
pub struct Hybla {
    rtt0_us: u64,
    /// Hybla growth on (CA state Open); Reno otherwise.
    hybla_en: bool,
    /// Fractional cwnd, 1/128 packets (Linux `snd_cwnd_cents`).
    cents: u32,
    /// ⌊ρ⌋.
    rho: u32,
    /// ρ·8, at least 8.
    rho_3ls: u32,
    /// ρ²·128 (from `rho_3ls`).
    rho2_7ls: u32,
    /// Smallest SRTT seen, µs; `u64::MAX` before the first SRTT (see the module header).
    minrtt_us: u64,
}

impl Hybla {
    pub fn new(config: &HyblaConfig) -> Self {
        let mut hybla = Hybla {
            rtt0_us: u64::from(config.rtt0_ms) * 1000,
            hybla_en: true,
            cents: 0,
            rho: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            minrtt_us: u64::MAX,
        };
        hybla.recalc(0);
        hybla
    }

    /// Linux `hybla_recalc_param`: ρ from SRTT `srtt_us` (µs), never below 1.
    fn recalc(&mut self, srtt_us: u64) {
        let rho_3ls = ((srtt_us << 3) / self.rtt0_us).max(8);
        // Beyond SRTT ≈ 100 s (ρ² ≥ 2³²/128) Linux's u32 would wrap; saturate instead.
        let rho2_7ls = (rho_3ls * rho_3ls) << 1;
        self.rho_3ls = rho_3ls.min(u64::from(u32::MAX)) as u32;
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = rho2_7ls.min(u64::from(u32::MAX)) as u32;
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        HyblaConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        cx.cwnd_clamp = CWND_CLAMP;
        if cx.srtt_us > 0 {
            self.recalc(cx.srtt_us);
            self.minrtt_us = cx.srtt_us;
            // Start at ρ packets: a 2^ρ − 1 slow start from ρ keeps pace with Reno at RTT0.
            cx.cwnd = self.rho;
        }
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        reno_ssthresh(cx)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if cx.srtt_us > 0 && cx.srtt_us < self.minrtt_us {
            self.recalc(cx.srtt_us);
            self.minrtt_us = cx.srtt_us;
        }
        if !cx.is_cwnd_limited() {
            return;
        }
        if !self.hybla_en {
            reno_cong_avoid(cx, acked);
            return;
        }
        let frac = (self.rho_3ls - (self.rho << 3)) as usize;
        let slow_start = cx.in_slow_start();
        // Growth of this ACK in 1/128 packets.
        let inc = if slow_start {
            // 2^ρ − 1 packets.
            (1u32 << self.rho.min(MAX_RHO_EXP)) * FRACTIONS[frac] - 128
        } else {
            // ρ²/cwnd packets; below one packet the ACK also counts towards the Reno rule.
            let inc = self.rho2_7ls / cx.cwnd.max(1);
            if inc < 128 {
                cx.cwnd_cnt += 1;
            }
            inc
        };
        cx.cwnd = cx.cwnd.saturating_add(inc >> 7);
        self.cents += inc & 127;
        while self.cents >= 128 {
            cx.cwnd = cx.cwnd.saturating_add(1);
            self.cents -= 128;
            cx.cwnd_cnt = 0;
        }
        // ρ²/cwnd truncated to 0 (cwnd > 128·ρ²): fall back to +1 per cwnd ACKs.
        if inc == 0 && cx.cwnd_cnt >= cx.cwnd {
            cx.cwnd += 1;
            cx.cwnd_cnt = 0;
        }
        if slow_start {
            cx.cwnd = cx.cwnd.min(cx.ssthresh);
        }
        cx.cwnd = cx.cwnd.min(cx.cwnd_clamp);
    }

    fn set_state(&mut self, _cx: &mut CcCx, new_state: CaState) {
        self.hybla_en = new_state == CaState::Open;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An initialised Hybla with SRTT `srtt_ms`, cwnd-limited.
    fn setup(srtt_ms: u64) -> (Hybla, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.srtt_us = srtt_ms * 1000;
        let mut hybla = Hybla::new(&HyblaConfig::default());
        hybla.init(&mut cx);
        cx.max_packets_out = 1000;
        cx.is_cwnd_limited = true;
        (hybla, cx)
    }

    // docs/validation.md Hybla 1
    #[test]
    fn rho_four_starts_at_four_and_adds_fifteen_per_slow_start_ack() {
        // SRTT 100 ms, RTT0 25 ms: rho_3ls = 800/25 = 32, ρ = 4, cwnd = ρ = 4.
        let (mut hybla, mut cx) = setup(100);
        assert_eq!((hybla.rho, hybla.rho_3ls, cx.cwnd, cx.cwnd_clamp), (4, 32, 4, 65_535));
        // Slow start: 2⁴·128 − 128 = 1920/128 = 15 packets per ACK, whatever the ACK acks.
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 19);
        hybla.cong_avoid(&mut cx, 2);
        assert_eq!(cx.cwnd, 34);
        // Capped at ssthresh: 34 + 15 = 49 → 40.
        cx.ssthresh = 40;
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 40);
    }

    #[test]
    fn fractional_rho_uses_the_two_to_the_eighths_table() {
        // SRTT 110 ms: rho_3ls = 880/25 = 35 → ρ = 4, frac 3 → 2⁴·165 − 128 = 2512 per ACK =
        // 19 packets + 80/128.
        let (mut hybla, mut cx) = setup(110);
        assert_eq!(cx.cwnd, 4);
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, hybla.cents), (23, 80));
        // Second ACK: +19 and 160/128 → one more packet, 32/128 left.
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, hybla.cents), (43, 32));
    }

    // docs/validation.md Hybla 2
    #[test]
    fn congestion_avoidance_adds_rho_squared_over_cwnd_per_ack() {
        // ρ = 4: rho2_7ls = 32²·2 = 2048 (16 packets). At cwnd 32 each ACK adds 2048/32 = 64
        // cents = ½ packet: two ACKs → 33.
        let (mut hybla, mut cx) = setup(100);
        cx.cwnd = 32;
        cx.ssthresh = 32;
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, hybla.cents), (32, 64));
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, hybla.cents), (33, 0));
        // One RTT at cwnd 128: 8 ACKs of 2048/128 = 16 cents make the first packet, then
        // ⌊2048/cwnd⌋ = 15 cents per ACK up to cwnd 136 and 14 beyond: 14 packets in 128 ACKs
        // (16 per RTT before truncation; Reno would add 1).
        cx.cwnd = 128;
        cx.ssthresh = 128;
        for _ in 0..8 {
            hybla.cong_avoid(&mut cx, 1);
        }
        assert_eq!((cx.cwnd, hybla.cents), (129, 0));
        for _ in 8..128 {
            hybla.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 142);
    }

    // docs/validation.md Hybla 2
    #[test]
    fn srtt_at_or_below_rtt0_is_reno() {
        // SRTT 25 ms → rho_3ls = 8, ρ = 1; SRTT 20 ms → 6.4, raised to 8.
        for srtt in [25, 20] {
            let (hybla, cx) = setup(srtt);
            assert_eq!((hybla.rho, hybla.rho_3ls, hybla.rho2_7ls, cx.cwnd), (1, 8, 128, 1));
        }
        // Slow start: 2·128 − 128 = 128 → +1 per ACK.
        let (mut hybla, mut cx) = setup(25);
        cx.cwnd = 10;
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 11);
        // CA at cwnd 200: 128/200 = 0 cents, so +1 per cwnd ACKs exactly as Reno.
        cx.cwnd = 200;
        cx.ssthresh = 100;
        cx.cwnd_cnt = 0;
        for _ in 0..199 {
            hybla.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 200);
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (201, 0));
    }

    #[test]
    fn rho_follows_a_smaller_srtt_only() {
        let (mut hybla, mut cx) = setup(100);
        cx.srtt_us = 200_000;
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!(hybla.rho, 4);
        // SRTT 50 ms < 100 ms: ρ = 2 → slow start adds 2² − 1 = 3.
        cx.srtt_us = 50_000;
        let before = cx.cwnd;
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((hybla.rho, cx.cwnd), (2, before + 3));
    }

    #[test]
    fn without_a_handshake_rtt_rho_comes_from_the_first_srtt() {
        let mut cx = CcCx::new(1500);
        let mut hybla = Hybla::new(&HyblaConfig::default());
        hybla.init(&mut cx);
        cx.max_packets_out = 100;
        assert_eq!(cx.cwnd, 10);
        cx.srtt_us = 100_000;
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!((hybla.rho, cx.cwnd), (4, 25));
    }

    #[test]
    fn outside_open_growth_is_reno() {
        let (mut hybla, mut cx) = setup(100);
        hybla.set_state(&mut cx, CaState::Disorder);
        hybla.cong_avoid(&mut cx, 2);
        assert_eq!(cx.cwnd, 6);
        assert_eq!(hybla.ssthresh(&mut cx), 3);
        hybla.set_state(&mut cx, CaState::Open);
        hybla.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 21);
    }
}
