//! BBRv3 as the google/bbr `v3` branch's net/ipv4/tcp_bbr.c (BBR_VERSION 3), with
//! draft-ietf-ccwg-bbr (editor's copy) as `profile = "draft"` (docs/models.md, BBRv3). The path
//! model of BBR v1 (max bandwidth, min RTT) gains loss- and ECN-driven bounds:
//! `bw_hi`/`inflight_hi` (long-term, set by PROBE_UP's loss rate crossing 2 %) and
//! `bw_lo`/`inflight_lo` (short-term, cut by β = 0.7 per lossy round outside probing). PROBE_BW
//! cycles DOWN → CRUISE → REFILL → UP (`probe_bw.rs`) once every 2–3 s or 63 rounds; PROBE_RTT
//! comes every 5 s at half the BDP. This file holds the parameters, the hooks and the control
//! outputs; `model.rs` the per-ACK model update.
//!
//! Linux units and integer arithmetic as in BBR v1 (`crate::bbr`, whose scale constants, gain
//! conversion and pacing-rate helper are reused, as are the pieces both versions compute alike in
//! `crate::bbr::common`: pacing rate, BDP, quantisation budget, in-flight at EDT, saved cwnd, the
//! ACK-aggregation model): bw in packets/µs << 24, gains in 1/256, PROBE_RTT and min-RTT stamps in
//! jiffies, phase clocks in µs. The send quantum is v3's GSO goal (`bbr_tso_segs_goal`: ≈ 1 ms at
//! the pacing rate plus 64 KB halved per 512 µs of BBR's min RTT, at least 2), or 1 with
//! `tcp.gso` off; v3's own `tso_segs` hook (the same rule, for the sender's bursts) is the
//! sender's `tcp_tso_autosize` here, with TCP's min RTT.
//!
//! Deviations from the Linux code, all forced by the simulator's interface:
//! * There is no `skb_marked_lost` hook: `cong_control` runs its work once per ACK with
//!   `rs.losses > 0` (losses are marked in the same ACK's step 4, before `cong_control`, as
//!   in Linux), and the lost packet's send-time snapshot is approximated by the ACK's own
//!   sample (`rs.tx_in_flight`, `rs.lost`, `rs.is_app_limited` of the newest delivered packet).
//! * No TLP_RECOVERY event and no `is_acking_tlp_retrans_seq` (RACK-TLP is not modelled).
//! * ECN: Linux uses its ECN logic only on routes flagged as shallow-threshold ECN
//!   (`ecn_low`); here that is the `ecn` parameter (off by default), which also asks the
//!   sender for accurate per-packet CE feedback. The receiver-side CE state machine
//!   (ECN_IS_CE/NO_CE events) belongs to the simulated receiver. PLB is not modelled.
//! * Linux's app-limited fast path is a CPU optimisation and is not taken.
//! * Values Linux keeps in u32/u16 (bw, extra_acked) are u64/u32 here (no wrap).
//!
//! `profile = "draft"` follows draft-ietf-ccwg-bbr where it differs from the code:
//! DRAIN gain 0.5, PROBE_DOWN gain 0.90, DRAIN also ends after 3 rounds, extra_acked window
//! 10 rounds, the full-pipe test only at round starts, and undo returns to STARTUP or
//! PROBE_UP if the spurious loss had ended them (the draft re-enters STARTUP; here that also
//! clears `full_bw_reached`, or DRAIN would follow on the next ACK). Both profiles use the
//! code's send quantum (the draft's pacing_rate·1 ms in 2 MSS–64 KB differs by the 2.4 % of
//! 1 ms vs 2^-10 s and the min-RTT allowance).
//! ns-3-dev has no BBRv3.

mod model;
mod probe_bw;
#[cfg(test)]
mod tests;

use crate::bbr::common::{self, AckAggregation, TsoGoal, Version};
use crate::bbr::{check_gain, gain, rate_bytes_per_sec, BBR_SCALE, BBR_UNIT, CWND_MIN_TARGET, EXTRA_ACKED_WIN_RTTS, HZ};
use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::{BbrInfo, CaState, CcCx, CongestionControl, CwndEvent, RateSample, INFINITE_SSTHRESH};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// "No bound" for inflight_lo / inflight_hi and "unset" for bw_probe_up_cnt (Linux ~0U).
const INF: u32 = u32::MAX;
/// "No bound" for bw_lo (Linux ~0U in a u32; bandwidths are u64 here).
const BW_INF: u64 = u64::MAX;
/// DRAIN pacing gain of the code, ⌊256·1000/2885⌋ = 88 (Linux `bbr_drain_gain`) ...
const CODE_DRAIN_GAIN: f64 = 88.0 / 256.0;
/// ... and of the draft (BBRDrainPacingGain).
const DRAFT_DRAIN_GAIN: f64 = 0.5;
/// PROBE_DOWN pacing gain of the code, ⌊256·91/100⌋ = 232 (Linux `bbr_pacing_gain[DOWN]`) ...
const CODE_DOWN_GAIN: f64 = 232.0 / 256.0;
/// ... and of the draft (BBRProbeBW_DOWN pacing gain 0.90).
const DRAFT_DOWN_GAIN: f64 = 0.9;
/// PROBE_UP's cwnd gain is cwnd_gain + 1/4 (Linux `bbr_bw_probe_cwnd_gain` = 1 quarter).
const BW_PROBE_CWND_GAIN: u32 = BBR_UNIT / 4;
/// The initial cwnd is remembered in a 7-bit field (Linux `init_cwnd`).
const INIT_CWND_MAX: u32 = 0x7f;
/// Saturation of Linux's 8-bit `rounds_since_probe` and 4-bit `loss_events_in_round`.
const ROUNDS_SINCE_PROBE_MAX: u32 = 0xff;
const LOSS_EVENTS_MAX: u32 = 0xf;
/// Most doublings of the PROBE_UP slope (Linux caps `bw_probe_up_rounds` at 30).
const BW_PROBE_UP_ROUNDS_MAX: u32 = 30;
/// Random extra rounds before a Reno-coexistence probe: 0 or 1 (Linux `bbr_bw_probe_rand_rounds`).
const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// ECN logic only below this min RTT, µs (Linux `bbr_ecn_max_rtt_us`).
const ECN_MAX_RTT_US: u32 = 5_000;
/// EWMA gain of ecn_alpha, 1/16 (Linux `bbr_ecn_alpha_gain`); alpha starts at 1.0.
const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// On ECN, inflight_lo is cut to 1 − alpha/3 (Linux `bbr_ecn_factor`).
const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// A CE ratio above 1/2 means in-flight is too high (Linux `bbr_ecn_thresh`) ...
const ECN_THRESH: u32 = BBR_UNIT / 2;
/// ... and ends STARTUP after this many such rounds in a row (Linux `bbr_full_ecn_cnt`).
const FULL_ECN_CNT: u32 = 2;
/// After an ECN-only cycle, the first PROBE_UP round adds this fraction of inflight_hi
/// (Linux `bbr_ecn_reprobe_gain`).
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// The draft's DRAIN ends after this many rounds at the latest (draft-ietf-ccwg-bbr, DRAIN).
const DRAFT_DRAIN_MAX_ROUNDS: u64 = 3;
/// The draft's extra_acked window, rounds (code: `crate::bbr::EXTRA_ACKED_WIN_RTTS` = 5).
const DRAFT_EXTRA_ACKED_WIN_RTTS: u32 = 10;

/// Which BBRv3 description to follow where they differ (docs/models.md, BBRv3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bbr3Profile {
    /// google/bbr v3 tcp_bbr.c (Linux semantics).
    Code,
    /// draft-ietf-ccwg-bbr.
    Draft,
}

/// Parameters of BBRv3 (google/bbr v3 tcp_bbr.c constants). Gains are rounded to a
/// multiple of 1/256; the fractions `loss_thresh`, `beta` (as its reduction 1 − beta) and
/// `headroom` are truncated to 1/256 as Linux writes them (`BBR_UNIT * 2 / 100` = 5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Bbr3Config {
    /// "code" (google/bbr v3) or "draft" (draft-ietf-ccwg-bbr): sets the DRAIN and PROBE_DOWN
    /// gains unless given, and the draft's DRAIN timeout, 10-round extra_acked window,
    /// round-start full-pipe test and undo state restoration.
    pub profile: Bbr3Profile,
    /// STARTUP pacing gain, unitless. Default ⌊256·277/100⌋+1 = 710/256 ≈ 2.77 (4 ln 2).
    pub startup_pacing_gain: f64,
    /// STARTUP and DRAIN cwnd gain, unitless. Default 2.
    pub startup_cwnd_gain: f64,
    /// DRAIN pacing gain, unitless; 0 = the profile's (code 88/256 ≈ 0.344, draft 0.5).
    pub drain_gain: f64,
    /// PROBE_BW cwnd gain, unitless (PROBE_UP adds 1/4). Default 2.
    pub cwnd_gain: f64,
    /// PROBE_UP pacing gain, unitless. Default 1.25.
    pub probe_up_gain: f64,
    /// PROBE_DOWN pacing gain, unitless; 0 = the profile's (code 232/256 ≈ 0.906, draft 0.90).
    pub probe_down_gain: f64,
    /// Loss rate (lost / tx_in_flight) above which in-flight is too high, fraction. Default
    /// 0.02 (5/256).
    pub loss_thresh: f64,
    /// Multiplicative cut of bw_lo / inflight_lo per lossy round, fraction. Default 0.7
    /// (Linux keeps the 30 % reduction as 76/256, so the cut is 180/256 ≈ 0.703).
    pub beta: f64,
    /// Headroom left below inflight_hi in CRUISE and PROBE_RTT, fraction of inflight_hi.
    /// Default 0.15 (38/256).
    pub headroom: f64,
    /// STARTUP ends after this many ACKs with losses in a Recovery round whose loss rate is
    /// too high, count (0 = never; at most 15). Default 6.
    pub full_loss_cnt: u32,
    /// Time without a lower RTT sample before PROBE_RTT, ms. Default 5000.
    pub probe_rtt_win_ms: u32,
    /// Least time in PROBE_RTT, ms (also at least one round); 0 disables PROBE_RTT.
    pub probe_rtt_ms: u32,
    /// PROBE_RTT cwnd as a fraction of the BDP, unitless (at least 4 packets). Default 0.5.
    pub probe_rtt_cwnd_gain: f64,
    /// Window of the min-RTT filter, s. Default 10.
    pub min_rtt_win_s: u32,
    /// Most packet-timed rounds between bandwidth probes (Reno coexistence), rounds. Default 63.
    pub bw_probe_max_rounds: u32,
    /// Least wall-clock time between bandwidth probes, ms. Default 2000.
    pub bw_probe_base_ms: u32,
    /// Random extra time between bandwidth probes, uniform in [0, this), ms. Default 1000.
    pub bw_probe_rand_ms: u32,
    /// Gain on the ACK-aggregation cwnd allowance, unitless; 0 disables it. Default 1.
    pub extra_acked_gain: f64,
    /// Use ECN (CE-mark) signals, as Linux does on routes flagged shallow-threshold ECN
    /// (`ecn_low`); needs ECN negotiated and min RTT ≤ 5 ms. Default off.
    pub ecn: bool,
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config {
            profile: Bbr3Profile::Code,
            startup_pacing_gain: 710.0 / 256.0,
            startup_cwnd_gain: 2.0,
            drain_gain: 0.0,
            cwnd_gain: 2.0,
            probe_up_gain: 1.25,
            probe_down_gain: 0.0,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            full_loss_cnt: 6,
            probe_rtt_win_ms: 5_000,
            probe_rtt_ms: 200,
            probe_rtt_cwnd_gain: 0.5,
            min_rtt_win_s: 10,
            bw_probe_max_rounds: 63,
            bw_probe_base_ms: 2_000,
            bw_probe_rand_ms: 1_000,
            extra_acked_gain: 1.0,
            ecn: false,
        }
    }
}

/// A fraction in 1/256, truncated as Linux's `BBR_UNIT * p / 100`.
fn fraction(f: f64) -> u32 {
    (f * f64::from(BBR_UNIT)).floor() as u32
}

/// A gain that may be 0 (= the profile's value).
fn check_profile_gain(name: &str, g: f64) -> Result<(), String> {
    if g == 0.0 {
        Ok(())
    } else {
        check_gain(name, g).map_err(|e| format!("{e} (or 0 for the profile's value)"))
    }
}

impl AlgorithmConfig for Bbr3Config {
    const NAME: &'static str = "bbr3";
    const SUMMARY: &'static str = "BBRv3, google/bbr v3 tcp_bbr.c (profile \"draft\": draft-ietf-ccwg-bbr)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "profile", unit: "", doc: "\"code\" (google/bbr v3) or \"draft\" (draft-ietf-ccwg-bbr)" },
        ParamDoc { name: "startup_pacing_gain", unit: "", doc: "STARTUP pacing gain, rounded to a multiple of 1/256" },
        ParamDoc { name: "startup_cwnd_gain", unit: "", doc: "STARTUP and DRAIN cwnd gain, rounded to a multiple of 1/256" },
        ParamDoc { name: "drain_gain", unit: "", doc: "DRAIN pacing gain, rounded to a multiple of 1/256 (0 = profile's)" },
        ParamDoc { name: "cwnd_gain", unit: "", doc: "PROBE_BW cwnd gain, rounded to a multiple of 1/256 (+1/4 in PROBE_UP)" },
        ParamDoc { name: "probe_up_gain", unit: "", doc: "PROBE_UP pacing gain, rounded to a multiple of 1/256" },
        ParamDoc { name: "probe_down_gain", unit: "", doc: "PROBE_DOWN pacing gain, rounded to a multiple of 1/256 (0 = profile's)" },
        ParamDoc { name: "loss_thresh", unit: "", doc: "loss rate that marks in-flight too high, truncated to a multiple of 1/256" },
        ParamDoc { name: "beta", unit: "", doc: "cut of bw_lo/inflight_lo per lossy round" },
        ParamDoc { name: "headroom", unit: "", doc: "headroom below inflight_hi when cruising, truncated to a multiple of 1/256" },
        ParamDoc { name: "full_loss_cnt", unit: "ACKs", doc: "lossy ACKs in a round that end STARTUP (0 = never)" },
        ParamDoc { name: "probe_rtt_win_ms", unit: "ms", doc: "interval between PROBE_RTTs without a lower RTT" },
        ParamDoc { name: "probe_rtt_ms", unit: "ms", doc: "least PROBE_RTT duration (0 = no PROBE_RTT)" },
        ParamDoc { name: "probe_rtt_cwnd_gain", unit: "", doc: "PROBE_RTT cwnd as a fraction of the BDP" },
        ParamDoc { name: "min_rtt_win_s", unit: "s", doc: "min-RTT filter window" },
        ParamDoc { name: "bw_probe_max_rounds", unit: "rounds", doc: "most rounds between bandwidth probes" },
        ParamDoc { name: "bw_probe_base_ms", unit: "ms", doc: "least time between bandwidth probes" },
        ParamDoc { name: "bw_probe_rand_ms", unit: "ms", doc: "random extra time between bandwidth probes" },
        ParamDoc { name: "extra_acked_gain", unit: "", doc: "ACK-aggregation allowance gain, rounded to a multiple of 1/256 (0 = off)" },
        ParamDoc { name: "ecn", unit: "", doc: "use shallow-threshold ECN signals (Linux ecn_low)" },
    ];

    fn validate(&self) -> Result<(), String> {
        check_gain("startup_pacing_gain", self.startup_pacing_gain)?;
        check_gain("startup_cwnd_gain", self.startup_cwnd_gain)?;
        check_profile_gain("drain_gain", self.drain_gain)?;
        check_gain("cwnd_gain", self.cwnd_gain)?;
        check_gain("probe_up_gain", self.probe_up_gain)?;
        check_profile_gain("probe_down_gain", self.probe_down_gain)?;
        check_gain("probe_rtt_cwnd_gain", self.probe_rtt_cwnd_gain)?;
        let f = self.loss_thresh;
        check_range("loss_thresh", f, (1.0 / 256.0..1.0).contains(&f), "1/256 ≤ loss_thresh < 1")?;
        check_range("beta", self.beta, self.beta > 0.0 && self.beta <= 1.0, "0 < beta ≤ 1")?;
        check_range("headroom", self.headroom, (0.0..1.0).contains(&self.headroom), "0 ≤ headroom < 1")?;
        let g = self.extra_acked_gain;
        check_range("extra_acked_gain", g, (0.0..=16.0).contains(&g), "0 ≤ extra_acked_gain ≤ 16")?;
        let n = self.full_loss_cnt;
        check_range("full_loss_cnt", n, n <= LOSS_EVENTS_MAX, "0 ≤ full_loss_cnt ≤ 15")?;
        check_range("min_rtt_win_s", self.min_rtt_win_s, self.min_rtt_win_s >= 1, "min_rtt_win_s ≥ 1")?;
        let w = self.probe_rtt_win_ms;
        let ok = w >= 1 && u64::from(w) <= u64::from(self.min_rtt_win_s) * HZ;
        check_range("probe_rtt_win_ms", w, ok, "1 ≤ probe_rtt_win_ms ≤ 1000·min_rtt_win_s")?;
        let r = self.bw_probe_max_rounds;
        check_range("bw_probe_max_rounds", r, r <= ROUNDS_SINCE_PROBE_MAX, "0 ≤ bw_probe_max_rounds ≤ 255")?;
        let r = self.bw_probe_rand_ms;
        check_range("bw_probe_rand_ms", r, r >= 1, "bw_probe_rand_ms ≥ 1")
    }

    fn build(&self, rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Bbr3::new(self, rng))
    }
}

/// The parameters in Linux units.
#[derive(Clone, Debug)]
struct Params {
    draft: bool,
    startup_pacing_gain: u32,
    startup_cwnd_gain: u32,
    drain_gain: u32,
    cwnd_gain: u32,
    /// Pacing gain per PROBE_BW phase (Linux `bbr_pacing_gain`).
    up_gain: u32,
    down_gain: u32,
    loss_thresh: u32,
    /// The cut's complement: bw_lo·(256 − beta)/256 (Linux `bbr_beta`).
    beta: u32,
    headroom: u32,
    full_loss_cnt: u32,
    probe_rtt_win_ms: u64,
    probe_rtt_ms: u64,
    probe_rtt_cwnd_gain: u32,
    min_rtt_win_ms: u64,
    bw_probe_max_rounds: u32,
    bw_probe_base_us: u64,
    bw_probe_rand_us: u32,
    extra_acked_gain: u32,
    extra_acked_win_rtts: u32,
    ecn: bool,
}

/// The four PROBE_BW phases (Linux `enum bbr_pacing_gain_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Up,
    Down,
    Cruise,
    Refill,
}

/// BBR's state machine (Linux `enum bbr_mode`; the PROBE_BW phase, Linux `cycle_idx`, only
/// matters in PROBE_BW and every entry to PROBE_BW sets it, so it lives in the mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Startup,
    Drain,
    ProbeBw(Phase),
    ProbeRtt,
}

/// What the incoming ACKs say about bandwidth probing (Linux `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    /// Not probing, no probe feedback.
    Init,
    /// Sending at the estimated bw to refill the pipe.
    Refilling,
    /// In-flight rising to probe bw.
    ProbeStarting,
    /// ACKs of the probe arriving.
    ProbeFeedback,
    /// Probing stopped; its ACKs still arriving.
    ProbeStopping,
}

/// BBRv3 state (Linux `struct bbr`, v3).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    p: Params,
    /// Draws the probe waits.
    rng: SimRng,
    mode: Mode,
    ack_phase: AckPhase,
    /// Min RTT of the min_rtt window, µs; u32::MAX = none yet.
    min_rtt_us: u32,
    /// When `min_rtt_us` was taken, jiffies.
    min_rtt_stamp: u64,
    /// Min RTT of the PROBE_RTT window, µs, and when it was taken, jiffies.
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: u64,
    /// End of PROBE_RTT, jiffies, once in-flight has fallen to PROBE_RTT's cwnd.
    probe_rtt_done_stamp: Option<u64>,
    /// A round passed at PROBE_RTT's cwnd.
    probe_rtt_round_done: bool,
    /// `delivered` at which the current round ends.
    next_rtt_delivered: u64,
    /// This ACK starts a new round.
    round_start: bool,
    /// Rounds so far (the draft's round_count, for its DRAIN timeout).
    round_count: u64,
    /// `round_count` when DRAIN began.
    drain_start_round: u64,
    /// Start of the current PROBE_BW phase (or probe-wait clock), µs.
    cycle_mstamp: u64,
    /// CA state seen on the previous ACK.
    prev_ca_state: CaState,
    /// Restarting after idle.
    idle_restart: bool,
    /// cwnd at init, at most 127: the BDP before any RTT and the STARTUP growth floor.
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    /// STARTUP has filled the pipe (once set, stays set).
    full_bw_reached: bool,
    /// A bw plateau was seen recently (STARTUP or PROBE_UP).
    full_bw_now: bool,
    /// Rounds without 25 % bw growth.
    full_bw_cnt: u32,
    /// Baseline bw for the plateau test.
    full_bw: u64,
    has_seen_rtt: bool,
    /// cwnd saved on entering loss recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// Delivery-rate sample of this ACK, packets/µs << 24 (Linux `bbr_context.sample_bw`).
    sample_bw: u64,
    /// ACK-aggregation model, buckets of `p.extra_acked_win_rtts` rounds (1 before the pipe
    /// is full).
    ack_aggr: AckAggregation,
    /// Send quantum, following the pacing rate and min RTT.
    tso_goal: TsoGoal,
    /// `delivered` at which the current loss round ends.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    /// ACKs with losses in this loss round (STARTUP exit), saturating at 15.
    loss_events_in_round: u32,
    /// Consecutive STARTUP rounds with a CE ratio ≥ 1/2.
    startup_ecn_rounds: u32,
    /// Max delivery rate and delivered volume of the last loss round.
    bw_latest: u64,
    inflight_latest: u32,
    /// Short-term lower bounds (loss/ECN response), BW_INF / INF = none.
    bw_lo: u64,
    inflight_lo: u32,
    /// Max bw of the previous and current PROBE_BW cycle.
    bw_hi: [u64; 2],
    /// Long-term upper bound on in-flight, INF = none.
    inflight_hi: u32,
    /// Packets acked per +1 of inflight_hi in PROBE_UP, and the count so far.
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    /// Doublings of the PROBE_UP slope so far.
    bw_probe_up_rounds: u32,
    /// Wall-clock time from PROBE_DOWN to the next probe, µs.
    probe_wait_us: u64,
    rounds_since_probe: u32,
    /// Rate samples reflect bandwidth probing.
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    ecn_eligible: bool,
    /// EWMA of the CE-marked fraction, 1/256.
    ecn_alpha: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// Bounds (and, for the draft, the mode) before the latest loss episode, for undo.
    undo_bw_lo: u64,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    undo_mode: Mode,
}

impl Bbr3 {
    pub fn new(config: &Bbr3Config, rng: SimRng) -> Self {
        let draft = config.profile == Bbr3Profile::Draft;
        let or_profile = |g: f64, code: f64, draft_g: f64| {
            gain(if g != 0.0 {
                g
            } else if draft {
                draft_g
            } else {
                code
            })
        };
        let p = Params {
            draft,
            startup_pacing_gain: gain(config.startup_pacing_gain),
            startup_cwnd_gain: gain(config.startup_cwnd_gain),
            drain_gain: or_profile(config.drain_gain, CODE_DRAIN_GAIN, DRAFT_DRAIN_GAIN),
            cwnd_gain: gain(config.cwnd_gain),
            up_gain: gain(config.probe_up_gain),
            down_gain: or_profile(config.probe_down_gain, CODE_DOWN_GAIN, DRAFT_DOWN_GAIN),
            loss_thresh: fraction(config.loss_thresh),
            beta: fraction(1.0 - config.beta),
            headroom: fraction(config.headroom),
            full_loss_cnt: config.full_loss_cnt,
            probe_rtt_win_ms: u64::from(config.probe_rtt_win_ms),
            probe_rtt_ms: u64::from(config.probe_rtt_ms),
            probe_rtt_cwnd_gain: gain(config.probe_rtt_cwnd_gain),
            min_rtt_win_ms: u64::from(config.min_rtt_win_s) * HZ,
            bw_probe_max_rounds: config.bw_probe_max_rounds,
            bw_probe_base_us: u64::from(config.bw_probe_base_ms) * 1_000,
            bw_probe_rand_us: config.bw_probe_rand_ms.saturating_mul(1_000),
            extra_acked_gain: gain(config.extra_acked_gain),
            extra_acked_win_rtts: if draft { DRAFT_EXTRA_ACKED_WIN_RTTS } else { EXTRA_ACKED_WIN_RTTS },
            ecn: config.ecn,
        };
        Self::with(p, rng)
    }

    /// The state Linux `bbr_init` sets up, before it reads the connection.
    fn with(p: Params, rng: SimRng) -> Self {
        Bbr3 {
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.startup_cwnd_gain,
            p,
            rng,
            mode: Mode::Startup,
            ack_phase: AckPhase::Init,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            round_start: false,
            round_count: 0,
            drain_start_round: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            init_cwnd: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            sample_bw: 0,
            ack_aggr: AckAggregation::default(),
            tso_goal: TsoGoal::default(),
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            bw_latest: 0,
            inflight_latest: 0,
            bw_lo: BW_INF,
            inflight_lo: INF,
            bw_hi: [0; 2],
            inflight_hi: INF,
            bw_probe_up_cnt: INF,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            probe_wait_us: 0,
            rounds_since_probe: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            undo_mode: Mode::Startup,
        }
    }

    /// Max bw of the last one or two PROBE_BW cycles, packets/µs << 24 (Linux `bbr_max_bw`).
    fn max_bw(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth BBR uses: max_bw bounded by bw_lo (Linux `bbr_bw`).
    fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo)
    }

    /// Linux `bbr_is_probing_bandwidth`: STARTUP, REFILL and UP push in-flight up, so the
    /// lower bounds are not used.
    fn is_probing_bandwidth(&self) -> bool {
        matches!(self.mode, Mode::Startup | Mode::ProbeBw(Phase::Refill | Phase::Up))
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: startup gain · cwnd / SRTT (1 ms before any RTT).
    fn init_pacing_rate_from_rtt(&mut self, cx: &mut CcCx) {
        common::init_pacing_rate_from_rtt(cx, &mut self.has_seen_rtt, self.p.startup_pacing_gain, pacing_rate);
        self.tso_goal.update(cx, Version::V3, self.min_rtt_us);
    }

    /// Linux `bbr_set_pacing_rate`: never slows down before the pipe is full.
    fn set_pacing_rate(&mut self, cx: &mut CcCx, bw: u64, gain: u32) {
        let (full, startup_gain) = (self.full_bw_reached, self.p.startup_pacing_gain);
        common::set_pacing_rate(cx, &mut self.has_seen_rtt, full, startup_gain, pacing_rate, bw, gain);
        self.tso_goal.update(cx, Version::V3, self.min_rtt_us);
    }

    /// Linux `bbr_bdp`: ⌈bw · min_rtt · gain⌉ packets (init_cwnd before any RTT).
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        common::bdp(bw, self.min_rtt_us, gain, self.init_cwnd)
    }

    /// Linux `bbr_quantization_budget` (v3): room for 3 send quanta and at least 4 packets,
    /// plus 2 in PROBE_UP.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        common::quantization_budget(Version::V3, self.tso_goal.segs(), cwnd, self.mode == Mode::ProbeBw(Phase::Up))
    }

    /// Linux `bbr_inflight`: the in-flight target for `bw` and `gain`.
    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Linux `bbr_target_inflight`: the BDP, unless congestion has cut cwnd below it.
    fn target_inflight(&self, cx: &CcCx) -> u32 {
        self.inflight(self.bw(), BBR_UNIT).min(cx.cwnd)
    }

    /// Linux `bbr_inflight_with_headroom`: inflight_hi less 15 % (≥ 1 packet), at least 4.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == INF {
            return INF;
        }
        let headroom = ((u64::from(self.inflight_hi) * u64::from(self.p.headroom)) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(CWND_MIN_TARGET)
    }

    /// Linux `bbr_packets_in_net_at_edt`, at the bw in use.
    fn packets_in_net_at_edt(&self, cx: &CcCx, inflight_now: u32) -> u64 {
        common::packets_in_net_at_edt(cx, self.bw(), self.pacing_gain, self.tso_goal.segs(), inflight_now)
    }

    /// Linux `bbr_ack_aggregation_cwnd` (v3: also before the pipe is full).
    fn ack_aggregation_cwnd(&self) -> u32 {
        self.ack_aggr.cwnd(self.p.extra_acked_gain, self.bw())
    }

    /// Linux `bbr_probe_rtt_cwnd`: half the BDP, at least 4 packets.
    fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp(self.bw(), self.p.probe_rtt_cwnd_gain).max(CWND_MIN_TARGET)
    }

    /// Linux `bbr_save_cwnd`: the last good cwnd, to restore after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, cx: &CcCx) {
        self.prior_cwnd = common::saved_cwnd(self.prior_cwnd, cx, self.prev_ca_state, self.mode == Mode::ProbeRtt);
    }

    /// Linux `bbr_set_cwnd` (v3): slow-start toward the target, or snap down to it once the
    /// pipe is full; at least 4 packets; PROBE_RTT caps at half the BDP.
    fn set_cwnd(&mut self, cx: &mut CcCx, rs: &RateSample, bw: u64) {
        let acked = rs.acked_sacked;
        let mut cwnd = cx.cwnd;
        if acked > 0 {
            let target = self.bdp(bw, self.cwnd_gain).saturating_add(self.ack_aggregation_cwnd());
            let target = self.quantization_budget(target);
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        cx.cwnd = cwnd.min(cx.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            cx.cwnd = cx.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// Linux `bbr_bound_cwnd_for_inflight_model`: inflight_hi while probing, inflight_hi less
    /// headroom when cruising or in PROBE_RTT, and inflight_lo always.
    fn bound_cwnd_for_inflight_model(&self, cx: &mut CcCx) {
        let cap = match self.mode {
            Mode::ProbeBw(Phase::Cruise) | Mode::ProbeRtt => self.inflight_with_headroom(),
            Mode::ProbeBw(_) => self.inflight_hi,
            Mode::Startup | Mode::Drain => INF,
        };
        let cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        cx.cwnd = cx.cwnd.min(cap);
    }

    /// Linux `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// Linux `bbr_reset_lower_bounds`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = BW_INF;
        self.inflight_lo = INF;
    }

    /// Linux `bbr_reset_congestion_signals`: after probing, start the loss/ECN record afresh.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// Linux can use ECN only when negotiated on a shallow-threshold-ECN route (`ecn_low`).
    fn can_use_ecn(&self, cx: &CcCx) -> bool {
        self.p.ecn && cx.ecn_enabled
    }
}

/// Linux `bbr_bw_to_pacing_rate` (v3): as v1's, but at least 1 byte/s.
fn pacing_rate(mss: u32, bw: u64, gain: u32) -> u64 {
    rate_bytes_per_sec(mss, bw, gain).max(1)
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        Bbr3Config::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Bbr3::with(self.p.clone(), self.rng.clone());
        cx.paced = true;
        cx.ssthresh = INFINITE_SSTHRESH;
        let now = cx.now.as_jiffies();
        self.init_cwnd = cx.cwnd.min(INIT_CWND_MAX);
        self.prior_cwnd = cx.prior_cwnd;
        self.next_rtt_delivered = cx.delivered;
        self.min_rtt_us = cx.min_rtt_us.min(u64::from(u32::MAX)) as u32;
        self.probe_rtt_min_us = self.min_rtt_us;
        (self.min_rtt_stamp, self.probe_rtt_min_stamp) = (now, now);
        self.init_pacing_rate_from_rtt(cx);
        self.ack_aggr.restart_epoch(cx.now.as_micros());
        // The first loss round ends with the first full flight ACKed.
        self.loss_round_delivered = cx.delivered + 1;
    }

    /// Entering Recovery, CWR or Loss: save cwnd and the loss-adapted bounds for undo.
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        self.save_cwnd(cx);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        self.undo_mode = self.mode;
        cx.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// Linux `bbr_main` (google/bbr v3), preceded by the `skb_marked_lost` work.
    fn cong_control(&mut self, cx: &mut CcCx, rs: &RateSample) {
        if rs.losses > 0 {
            self.on_packets_lost(cx, rs);
        }
        self.update_round_start(cx, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(ROUNDS_SINCE_PROBE_MAX);
            self.update_ecn_alpha(cx);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        self.calculate_bw_sample(rs);
        self.update_latest_delivery_signals(cx, rs);
        self.update_model(cx, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(cx, bw, self.pacing_gain);
        self.set_cwnd(cx, rs, bw);
        self.bound_cwnd_for_inflight_model(cx);
        self.advance_latest_delivery_signals(rs);
        self.prev_ca_state = cx.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            // Lower bounds adapt from the cwnd before the RTO.
            if !self.is_probing_bandwidth() && self.inflight_lo == INF {
                self.inflight_lo = cx.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            cx.cwnd = cx.cwnd.max(self.prior_cwnd);
        }
    }

    /// Spurious loss: restore the bounds (and, for the draft, the probing state) saved at
    /// its start.
    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        if self.p.draft && self.mode != Mode::ProbeRtt && self.mode != self.undo_mode {
            match self.undo_mode {
                Mode::Startup => {
                    self.mode = Mode::Startup;
                    self.full_bw_reached = false;
                }
                Mode::ProbeBw(Phase::Up) => self.start_up(cx),
                _ => {}
            }
        }
        self.prior_cwnd
    }

    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        if ev == CwndEvent::TxStart && cx.app_limited != 0 {
            self.idle_restart = true;
            self.ack_aggr.restart_epoch(cx.now.as_micros());
            // Restarting from idle and app-limited: pace at bw, no need for more.
            match self.mode {
                Mode::ProbeBw(_) => self.set_pacing_rate(cx, self.bw(), BBR_UNIT),
                Mode::ProbeRtt => self.check_probe_rtt_done(cx),
                Mode::Startup | Mode::Drain => {}
            }
        }
    }

    /// Linux `bbr_get_info` (v3): the bw in use (`bbr_bw`, max_bw bounded by bw_lo) through
    /// `bbr_bw_bytes_per_sec`, which floors it at 1 B/s; min_rtt and both gains.
    fn get_info(&self, cx: &CcCx) -> Option<BbrInfo> {
        let info = common::info(cx, self.bw(), self.min_rtt_us, self.pacing_gain, self.cwnd_gain);
        Some(BbrInfo { bw_bytes_per_sec: info.bw_bytes_per_sec.max(1), ..info })
    }

    fn mode(&self) -> Option<&'static str> {
        Some(match self.mode {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw(Phase::Down) => "PROBE_BW_DOWN",
            Mode::ProbeBw(Phase::Cruise) => "PROBE_BW_CRUISE",
            Mode::ProbeBw(Phase::Refill) => "PROBE_BW_REFILL",
            Mode::ProbeBw(Phase::Up) => "PROBE_BW_UP",
            Mode::ProbeRtt => "PROBE_RTT",
        })
    }

    fn needs_accurate_ecn(&self) -> bool {
        self.p.ecn
    }
}
