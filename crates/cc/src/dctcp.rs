//! DCTCP as Linux tcp_dctcp.c (RFC 8257; Alizadeh et al., SIGCOMM 2010):
//! Reno growth, and an ECN reaction scaled by alpha, the EWMA (gain g = 1/16) of the
//! fraction of CE-marked packets per window: cwnd·(1 − alpha/2) once per window. Loss
//! halves the window whatever alpha is. Without ECN the connection falls back to Reno
//! (Linux `dctcp_reno`).
//!
//! The sender half lives here; the receiver half (Linux `dctcp_ece_ack_update`: ECE set
//! exactly on ACKs that cover CE-marked packets, an immediate ACK on every CE-state change)
//! is the accurate-ECN mode of the tcplab-tcp receiver, which flows with this algorithm use
//! (`needs_accurate_ecn`, Linux `TCP_CONG_NEEDS_ECN`). The CE events Linux raises on the
//! receiving socket (`CwndEvent::EcnIsCe`/`EcnNoCe`) are therefore not seen here.
//!
//! Linux integer arithmetic: alpha in 1/1024, `alpha −= max-nonzero(alpha >> g)` per window
//! and `+ (delivered_ce << (10 − g)) / delivered`; products are taken in u64 where Linux uses
//! u32 (identical below ≈ 4·10⁶ packets). `clamp_alpha_on_loss` is the module parameter of
//! older kernels (`dctcp_clamp_alpha_on_loss`, default off: alpha = 1.0 on entering Loss);
//! current kernels dropped it when they added the halving on loss (`dctcp_react_to_loss`),
//! which is always on here. ns-3 TcpDctcp (g 0.0625, alpha 1.0 at start, floating point)
//! behaves the same up to rounding.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::{reno_cong_avoid, reno_ssthresh};
use crate::{AckFlags, CaState, CcCx, CongestionControl, CwndEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// alpha = 1.0 (Linux `DCTCP_MAX_ALPHA`).
const MAX_ALPHA: u32 = 1024;
/// alpha's fixed-point bits (Linux's `10 - dctcp_shift_g` and `>> 11` for alpha/2).
const ALPHA_BITS: u32 = 10;
/// Largest `dctcp_shift_g` Linux accepts (`param_set_uint_minmax(.., 0, 10)`).
const MAX_SHIFT_G: u32 = 10;

/// Parameters of DCTCP (Linux tcp_dctcp.c module parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// Gain of the alpha average as a shift, g = 1/2^shift_g (Linux `dctcp_shift_g`), no unit.
    pub shift_g: u32,
    /// alpha at connection start in 1/1024 (Linux `dctcp_alpha_on_init`; 1024 = 1.0), no unit.
    pub alpha_on_init: u32,
    /// Set alpha to 1.0 when a retransmission timeout enters Loss (older Linux
    /// `dctcp_clamp_alpha_on_loss`), on/off.
    pub clamp_alpha_on_loss: bool,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { shift_g: 4, alpha_on_init: MAX_ALPHA, clamp_alpha_on_loss: false }
    }
}

impl AlgorithmConfig for DctcpConfig {
    const NAME: &'static str = "dctcp";
    const SUMMARY: &'static str =
        "DCTCP: Reno growth, ECN reduction by the marked fraction (RFC 8257, Linux tcp_dctcp.c); turns accurate ECN on";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "shift_g", unit: "", doc: "alpha gain g = 1/2^shift_g" },
        ParamDoc { name: "alpha_on_init", unit: "", doc: "initial alpha in 1024ths: 1024 = 1.0 (Linux dctcp_alpha_on_init)" },
        ParamDoc { name: "clamp_alpha_on_loss", unit: "", doc: "set alpha to 1.0 on a retransmission timeout" },
    ];

    fn validate(&self) -> Result<(), String> {
        let g = self.shift_g;
        check_range("shift_g", g, g <= MAX_SHIFT_G, "0 ≤ shift_g ≤ 10")?;
        let a = self.alpha_on_init;
        check_range("alpha_on_init", a, a <= MAX_ALPHA, "0 ≤ alpha_on_init ≤ 1024")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Dctcp::new(self))
    }
}

/// Linux `before(a, b)` on 32-bit sequence numbers.
fn seq_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[derive(Debug)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    clamp_alpha_on_loss: bool,
    /// ECN was negotiated at `init`; otherwise every hook is Reno's (Linux `dctcp_reno`).
    ecn: bool,
    /// Estimated fraction of CE-marked packets, in 1/1024 (Linux `dctcp_alpha`).
    alpha: u32,
    /// `delivered` / `delivered_ce` when the current observation window began.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// The window ends when snd_una reaches this (snd_nxt at its start).
    next_seq: u32,
    /// cwnd at the last reduction, for undo.
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(c: &DctcpConfig) -> Self {
        Dctcp {
            shift_g: c.shift_g,
            alpha_on_init: c.alpha_on_init,
            clamp_alpha_on_loss: c.clamp_alpha_on_loss,
            ecn: false,
            alpha: c.alpha_on_init.min(MAX_ALPHA),
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            loss_cwnd: 0,
        }
    }

    /// Linux `dctcp_reset`: a new observation window starts now.
    fn reset(&mut self, cx: &CcCx) {
        self.next_seq = cx.snd_nxt;
        self.old_delivered = cx.delivered;
        self.old_delivered_ce = cx.delivered_ce;
    }

    /// Linux `dctcp_react_to_loss`: Reno halving, overriding the alpha-based ssthresh.
    fn react_to_loss(&mut self, cx: &mut CcCx) {
        self.loss_cwnd = cx.cwnd;
        cx.ssthresh = reno_ssthresh(cx);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn init(&mut self, cx: &mut CcCx) {
        self.ecn = cx.ecn_enabled;
        self.alpha = self.alpha_on_init.min(MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(cx);
    }

    /// Linux `dctcp_ssthresh`: cwnd − cwnd·alpha/2 (alpha/1024, hence `>> 11`), at least 2.
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        if !self.ecn {
            return reno_ssthresh(cx);
        }
        self.loss_cwnd = cx.cwnd;
        let cut = (u64::from(cx.cwnd) * u64::from(self.alpha)) >> (ALPHA_BITS + 1);
        (cx.cwnd - cut as u32).max(2)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        reno_cong_avoid(cx, acked);
    }

    /// Linux `dctcp_update_alpha`: once per window (snd_una past `next_seq`),
    /// alpha ← (1 − g)·alpha + g·F with F = CE-marked / delivered packets of the window.
    fn in_ack_event(&mut self, cx: &mut CcCx, _flags: AckFlags) {
        if !self.ecn || seq_before(cx.snd_una, self.next_seq) {
            return;
        }
        let mut alpha = self.alpha;
        // Linux min_not_zero(alpha, alpha >> g): below 2^g the decay takes alpha to 0.
        let decay = alpha >> self.shift_g;
        alpha -= if decay == 0 { alpha } else { decay };
        let delivered_ce = cx.delivered_ce - self.old_delivered_ce;
        if delivered_ce > 0 {
            let delivered = (cx.delivered - self.old_delivered).max(1);
            let gain = (delivered_ce << (ALPHA_BITS - self.shift_g)) / delivered;
            alpha = (u64::from(alpha) + gain).min(u64::from(MAX_ALPHA)) as u32;
        }
        self.alpha = alpha;
        self.reset(cx);
    }

    /// Linux `dctcp_state`: entering Recovery halves the window (fast retransmit).
    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        if !self.ecn {
            return;
        }
        if new_state == CaState::Recovery && cx.ca_state != CaState::Recovery {
            self.react_to_loss(cx);
        }
        if self.clamp_alpha_on_loss && new_state == CaState::Loss {
            self.alpha = MAX_ALPHA;
        }
    }

    /// Linux `dctcp_cwnd_event`: an RTO halves the window.
    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        if self.ecn && ev == CwndEvent::Loss {
            self.react_to_loss(cx);
        }
    }

    /// Linux `dctcp_cwnd_undo` (Reno's `max(cwnd, prior_cwnd)` without ECN).
    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        let before = if self.ecn { self.loss_cwnd } else { cx.prior_cwnd };
        cx.cwnd.max(before)
    }

    fn needs_accurate_ecn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Ack, Sender};
    use crate::INFINITE_SSTHRESH;
    use tcplab_core::SimTime;

    /// A DCTCP connection with ECN negotiated, initialised at snd_nxt = 0, in congestion
    /// avoidance at `cwnd`.
    fn dctcp_with(cfg: &DctcpConfig, cwnd: u32) -> (Dctcp, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.ecn_enabled = true;
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        let mut d = Dctcp::new(cfg);
        d.init(&mut cx);
        (d, cx)
    }

    /// One window of `sent` packets, `ce` of them CE-marked, fully acknowledged: the
    /// cumulative ACK reaches snd_nxt of the window's start, then the next window is sent.
    fn window(d: &mut Dctcp, cx: &mut CcCx, sent: u32, ce: u64) {
        cx.snd_nxt = cx.snd_una + sent;
        d.reset(cx);
        cx.snd_una = cx.snd_nxt;
        cx.delivered += u64::from(sent);
        cx.delivered_ce += ce;
        d.in_ack_event(cx, AckFlags::default());
    }

    /// A testkit sender that has sent `cwnd` packets, all in one observation window.
    fn sender_with_a_full_window(d: Dctcp, cx: CcCx) -> Sender<Dctcp> {
        let mut s = Sender::new(Box::new(d), cx);
        for _ in 0..s.cx.cwnd {
            s.send(SimTime::ZERO);
        }
        s.cc.reset(&s.cx);
        s
    }

    // docs/validation.md DCTCP 1: 1024 − 1024/16 = 960; then 960 − 60 = 900, 900 − 56 = 844,
    // 844 − 52 = 792, 792 − 49 = 743 (integer shifts), each within 1 % of 1024·(15/16)ⁿ.
    #[test]
    fn a_window_without_marks_decays_alpha_by_one_sixteenth() {
        let (mut d, mut cx) = dctcp_with(&DctcpConfig::default(), 20);
        assert_eq!(d.alpha, 1024);
        let mut seen = vec![];
        for _ in 0..5 {
            window(&mut d, &mut cx, 20, 0);
            seen.push(d.alpha);
        }
        assert_eq!(seen, [960, 900, 844, 792, 743]);
        for (n, a) in seen.iter().enumerate() {
            let ideal = 1024.0 * (15.0f64 / 16.0).powi(n as i32 + 1);
            assert!((f64::from(*a) / ideal - 1.0).abs() < 0.01, "window {}: {a} vs {ideal}", n + 1);
        }
    }

    #[test]
    fn alpha_changes_only_when_a_window_ends() {
        let (mut d, mut cx) = dctcp_with(&DctcpConfig::default(), 20);
        cx.snd_nxt = 20;
        d.reset(&cx); // window: segments 0..20
        for una in 1..20 {
            cx.snd_una = una;
            cx.delivered = u64::from(una);
            d.in_ack_event(&mut cx, AckFlags::default());
            assert_eq!(d.alpha, 1024, "snd_una {una} is still inside the window");
        }
        cx.snd_una = 20;
        cx.delivered = 20;
        d.in_ack_event(&mut cx, AckFlags::default());
        assert_eq!(d.alpha, 960);
        assert_eq!(d.next_seq, 20, "the next window ends at snd_nxt when this one ended");
    }

    #[test]
    fn small_alpha_decays_straight_to_zero() {
        // alpha 15: 15 >> 4 = 0, so Linux's min_not_zero takes the whole 15.
        let cfg = DctcpConfig { alpha_on_init: 15, ..DctcpConfig::default() };
        let (mut d, mut cx) = dctcp_with(&cfg, 20);
        window(&mut d, &mut cx, 20, 0);
        assert_eq!(d.alpha, 0);
        window(&mut d, &mut cx, 20, 0);
        assert_eq!(d.alpha, 0);
        // alpha 16: 16 >> 4 = 1 → 15.
        let cfg = DctcpConfig { alpha_on_init: 16, ..DctcpConfig::default() };
        let (mut d, mut cx) = dctcp_with(&cfg, 20);
        window(&mut d, &mut cx, 20, 0);
        assert_eq!(d.alpha, 15);
    }

    // docs/validation.md DCTCP 2 (first half): every packet marked: 1024 − 64 + (20 << 6)/20
    // = 960 + 64 = 1024, so the ECE reduction is cwnd − cwnd·1024/2048 = cwnd/2.
    #[test]
    fn an_all_marked_window_keeps_alpha_at_one_and_ece_halves() {
        let (mut d, mut cx) = dctcp_with(&DctcpConfig::default(), 100);
        window(&mut d, &mut cx, 20, 20);
        assert_eq!(d.alpha, 1024);
        assert_eq!(d.ssthresh(&mut cx), 50);
        cx.cwnd = 2; // 2 − 1 = 1
        assert_eq!(d.ssthresh(&mut cx), 2, "never below 2");
    }

    #[test]
    fn a_partly_marked_window_adds_g_times_the_marked_fraction() {
        // 960 after the decay, + (5 << 6)/10 = 32 → 992.
        let (mut d, mut cx) = dctcp_with(&DctcpConfig::default(), 100);
        window(&mut d, &mut cx, 10, 5);
        assert_eq!(d.alpha, 992);
        // With g = 1/2 (shift 1): 992 − 496 + (1 << 9)/4 = 496 + 128 = 624.
        d.shift_g = 1;
        window(&mut d, &mut cx, 4, 1);
        assert_eq!(d.alpha, 624);
    }

    // docs/validation.md DCTCP 2 (second half): alpha 102 (≈ 0.1), cwnd 100 →
    // 100 − ⌊100·102/2048⌋ = 100 − ⌊4.98⌋ = 96.
    #[test]
    fn ece_reduction_is_cwnd_times_one_minus_half_alpha() {
        let cfg = DctcpConfig { alpha_on_init: 102, ..DctcpConfig::default() };
        let (mut d, mut cx) = dctcp_with(&cfg, 100);
        assert_eq!(d.ssthresh(&mut cx), 96);
        assert_eq!(d.loss_cwnd, 100);
        // alpha 0: no reduction at all.
        d.alpha = 0;
        assert_eq!(d.ssthresh(&mut cx), 100);
    }

    #[test]
    fn ece_through_the_sender_enters_cwr_with_the_alpha_reduction() {
        let cfg = DctcpConfig { alpha_on_init: 102, ..DctcpConfig::default() };
        let (d, cx) = dctcp_with(&cfg, 100);
        let mut s = sender_with_a_full_window(d, cx);
        s.ack(SimTime::ZERO, &Ack { pkts_acked: 1, delivered: 1, losses: 0, rtt_us: 1000, ece: true, newest: None });
        assert_eq!(s.cx.ca_state, CaState::Cwr);
        assert_eq!((s.cx.prior_cwnd, s.cx.ssthresh), (100, 96));
    }

    // docs/validation.md DCTCP 3: fast retransmit and RTO halve cwnd whatever alpha is
    // (here alpha = 0, whose ECN reduction would be none): 100 → 50.
    #[test]
    fn loss_halves_the_window_regardless_of_alpha() {
        let cfg = DctcpConfig { alpha_on_init: 0, ..DctcpConfig::default() };
        let (d, cx) = dctcp_with(&cfg, 100);
        let mut s = sender_with_a_full_window(d, cx);
        s.ack(SimTime::ZERO, &Ack { pkts_acked: 0, delivered: 1, losses: 1, rtt_us: 1000, ece: false, newest: None });
        assert_eq!(s.cx.ca_state, CaState::Recovery);
        assert_eq!((s.cx.prior_cwnd, s.cx.ssthresh), (100, 50));
        assert_eq!(s.cc.loss_cwnd, 100);

        let (d, cx) = dctcp_with(&cfg, 100);
        let mut s = sender_with_a_full_window(d, cx);
        s.rto(SimTime::ZERO);
        assert_eq!((s.cx.ca_state, s.cx.cwnd, s.cx.ssthresh), (CaState::Loss, 1, 50));
        assert_eq!(s.cc.alpha, 0, "alpha is left alone unless clamp_alpha_on_loss");
    }

    #[test]
    fn recovery_after_cwr_halves_but_recovery_again_does_not() {
        let cfg = DctcpConfig { alpha_on_init: 102, ..DctcpConfig::default() };
        let (mut d, mut cx) = dctcp_with(&cfg, 100);
        cx.ssthresh = d.ssthresh(&mut cx);
        d.set_state(&mut cx, CaState::Cwr);
        cx.ca_state = CaState::Cwr;
        assert_eq!(cx.ssthresh, 96);
        d.set_state(&mut cx, CaState::Recovery);
        cx.ca_state = CaState::Recovery;
        assert_eq!(cx.ssthresh, 50);
        cx.cwnd = 60;
        d.set_state(&mut cx, CaState::Recovery);
        assert_eq!(cx.ssthresh, 50, "no second halving within Recovery");
    }

    #[test]
    fn clamp_alpha_on_loss_sets_alpha_to_one_on_rto_only() {
        let cfg = DctcpConfig { alpha_on_init: 100, clamp_alpha_on_loss: true, ..DctcpConfig::default() };
        let (mut d, mut cx) = dctcp_with(&cfg, 100);
        d.set_state(&mut cx, CaState::Recovery);
        assert_eq!(d.alpha, 100, "fast retransmit does not clamp");
        d.set_state(&mut cx, CaState::Loss);
        assert_eq!(d.alpha, 1024);
    }

    #[test]
    fn undo_restores_the_window_before_the_last_reduction() {
        let (mut d, mut cx) = dctcp_with(&DctcpConfig::default(), 80);
        d.ssthresh(&mut cx);
        cx.cwnd = 40;
        cx.prior_cwnd = 0;
        assert_eq!(d.undo_cwnd(&mut cx), 80);
    }

    #[test]
    fn without_ecn_it_is_reno() {
        // alpha 0 would make the ECN reduction nothing; the Reno fallback halves instead,
        // never tracks alpha and undoes to prior_cwnd.
        let cfg = DctcpConfig { alpha_on_init: 0, ..DctcpConfig::default() };
        let mut cx = CcCx::new(1500);
        cx.cwnd = 100;
        let mut d = Dctcp::new(&cfg);
        d.init(&mut cx);
        assert_eq!(d.ssthresh(&mut cx), 50);
        assert_eq!(d.loss_cwnd, 0);
        cx.snd_una = 10;
        cx.delivered = 10;
        cx.delivered_ce = 10;
        d.in_ack_event(&mut cx, AckFlags::default());
        assert_eq!(d.alpha, 0);
        cx.ssthresh = INFINITE_SSTHRESH;
        d.cwnd_event(&mut cx, CwndEvent::Loss);
        d.set_state(&mut cx, CaState::Recovery);
        assert_eq!(cx.ssthresh, INFINITE_SSTHRESH, "the loss hooks are Reno's (none)");
        cx.prior_cwnd = 70;
        cx.cwnd = 30;
        assert_eq!(d.undo_cwnd(&mut cx), 70);
    }

    #[test]
    fn congestion_avoidance_is_renos() {
        let (mut d, mut cx) = dctcp_with(&DctcpConfig::default(), 20);
        cx.is_cwnd_limited = true;
        for _ in 0..19 {
            d.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 20);
        d.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 21);
    }

    #[test]
    fn asks_for_accurate_ecn_and_validates_its_ranges() {
        assert!(Dctcp::new(&DctcpConfig::default()).needs_accurate_ecn());
        assert_eq!(DctcpConfig::default().validate(), Ok(()));
        let e = DctcpConfig { shift_g: 11, ..DctcpConfig::default() }.validate().unwrap_err();
        assert_eq!(e, "shift_g = 11 is out of range; allowed: 0 ≤ shift_g ≤ 10");
        let e = DctcpConfig { alpha_on_init: 1025, ..DctcpConfig::default() }.validate().unwrap_err();
        assert!(e.starts_with("alpha_on_init = 1025 is out of range"), "{e}");
    }
}
