//! CUBIC as Linux tcp_cubic.c v2.3 with HyStart (window function of
//! RFC 9438, HyStart of Ha & Rhee 2008), plus RFC 9406 HyStart++ as an option.
//!
//! Linux integer arithmetic throughout: the epoch clock in jiffies (HZ = 1000, 1 jiffy =
//! 1 ms), K and t in 2⁻¹⁰ s, β as x/1024, C as bic_scale·10/1024 with the cube scaled by
//! 2⁴⁰. Differences from Linux: K uses an exact integer cube root (floor) where Linux uses
//! a 64-entry table and one Newton step (≈0.2 % average error), so K may differ from a
//! Linux host by a few 2⁻¹⁰ s; values that would overflow Linux's u32/u64 (cwnd ≳ 10⁶
//! packets, epochs of hours) saturate instead of wrapping; the HyStart ACK-delay cushion
//! uses the MSS where Linux uses the device's GSO size (docs/models.md, GSO bursts).
//!
//! ns-3 TcpCubic differs: float K and target, byte-counting slow start, HyStart
//! delay cap 1000 ms (Linux 16 ms), RTT samples discarded for 10 ms after an epoch start
//! (Linux 1 s), no TX_START epoch shift, ACK-train threshold not halved when unpaced. RFC
//! 9438 differs too: flight-size β, W_est's α switching to 1, the current RTT (not
//! delay_min) for the look-ahead, W_max kept across RTO, HyStart++. Linux is followed.

use crate::config::{check_range, describe_value, AlgorithmConfig, ParamDoc};
use crate::{AckSample, CaState, CcCx, CongestionControl, CwndEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// β and fast-convergence scale (Linux `BICTCP_BETA_SCALE`).
const BETA_SCALE: u64 = 1024;
/// K and t are kept in 2^-BICTCP_HZ seconds (Linux `BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// Jiffies per second (CONFIG_HZ_1000).
const HZ: u64 = 1000;
/// RTT samples per round before HyStart's delay test (Linux `HYSTART_MIN_SAMPLES`; RFC 9406
/// `N_RTT_SAMPLE` has the same value).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold, µs (Linux `HYSTART_DELAY_MIN/MAX`; RFC 9406
/// `MIN_RTT_THRESH`/`MAX_RTT_THRESH` are the same 4 and 16 ms).
const HYSTART_DELAY_MIN_US: u64 = 4_000;
const HYSTART_DELAY_MAX_US: u64 = 16_000;
/// The threshold is this fraction of the base RTT (Linux `delay_min >> 3`; RFC 9406
/// `MIN_RTT_DIVISOR`).
const HYSTART_DELAY_DIVISOR: u64 = 8;
/// RFC 9406 `CSS_GROWTH_DIVISOR`: slow-start growth is divided by this in CSS.
const CSS_GROWTH_DIVISOR: u32 = 4;
/// RFC 9406 `CSS_ROUNDS`: rounds of CSS before congestion avoidance.
const CSS_ROUNDS: u32 = 5;
/// RFC 9406 `L` for unpaced flows: most packets of growth per ACK (unlimited when paced).
const HSPP_UNPACED_BURST: u32 = 8;
/// Linux `hystart_ack_delay` caps the cushion at 1 ms.
const HYSTART_ACK_DELAY_MAX_US: u64 = 1_000;

/// Which slow-start exit CUBIC uses. Written `true` (Linux HyStart), `false` (none) or
/// `"hystart++"` (RFC 9406) in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "HystartSetting", into = "HystartSetting")]
pub enum Hystart {
    Off,
    Linux,
    PlusPlus,
}

/// The scenario spelling of [`Hystart`].
#[derive(Clone, Serialize, JsonSchema)]
#[serde(untagged)]
enum HystartSetting {
    Switch(bool),
    Named(String),
}

impl<'de> Deserialize<'de> for HystartSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(b) => Ok(HystartSetting::Switch(b)),
            serde_json::Value::String(s) => Ok(HystartSetting::Named(s)),
            other => Err(serde::de::Error::custom(format!("expected true, false or \"hystart++\", found {}", describe_value(&other)))),
        }
    }
}

impl TryFrom<HystartSetting> for Hystart {
    type Error = String;
    fn try_from(s: HystartSetting) -> Result<Self, String> {
        match s {
            HystartSetting::Switch(false) => Ok(Hystart::Off),
            HystartSetting::Switch(true) => Ok(Hystart::Linux),
            HystartSetting::Named(n) if n == "hystart++" => Ok(Hystart::PlusPlus),
            HystartSetting::Named(n) => Err(format!("hystart = {n:?} is not allowed; allowed: true, false, \"hystart++\"")),
        }
    }
}

impl From<Hystart> for HystartSetting {
    fn from(h: Hystart) -> Self {
        match h {
            Hystart::Off => HystartSetting::Switch(false),
            Hystart::Linux => HystartSetting::Switch(true),
            Hystart::PlusPlus => HystartSetting::Named("hystart++".into()),
        }
    }
}

/// Linux `hystart_detect`: which HyStart tests run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HystartDetect {
    /// ACK-train length only (Linux 1).
    AckTrain,
    /// RTT increase only (Linux 2).
    Delay,
    /// Both (Linux 3, the default).
    Both,
}

impl HystartDetect {
    fn ack_train(self) -> bool {
        self != HystartDetect::Delay
    }
    fn delay(self) -> bool {
        self != HystartDetect::AckTrain
    }
}

/// Parameters of CUBIC (the Linux tcp_cubic.c module parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CubicConfig {
    /// Multiplicative decrease factor β, unitless: ssthresh = β·cwnd after a loss. Linux keeps
    /// it as x/1024, so it is rounded to a multiple of 1/1024. Default 717/1024 ≈ 0.7002.
    pub beta: f64,
    /// Cubic scaling constant C in packets/s³. Linux keeps bic_scale = C·1024/10 as an
    /// integer (0.4 → 41, i.e. C = 0.4004), so it is rounded to a multiple of 10/1024.
    pub c: f64,
    /// Fast convergence: after a loss below the previous W_max, remember only
    /// (1+β)/2 of the window, yielding bandwidth to newer flows.
    pub fast_convergence: bool,
    /// TCP friendliness: never grow slower than the Reno estimate W_est.
    pub tcp_friendliness: bool,
    /// Slow-start exit: `true` = Linux HyStart, `false` = none, `"hystart++"` = RFC 9406.
    pub hystart: Hystart,
    /// Which Linux HyStart tests run: `"ack-train"`, `"delay"` or `"both"`.
    pub hystart_detect: HystartDetect,
    /// Linux HyStart runs only once cwnd is at least this many packets.
    pub hystart_low_window: u32,
    /// Largest ACK spacing, in ms, that still counts as one ACK train (Linux keeps µs).
    pub hystart_ack_delta_ms: f64,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            beta: 717.0 / 1024.0,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: Hystart::Linux,
            hystart_detect: HystartDetect::Both,
            hystart_low_window: 16,
            hystart_ack_delta_ms: 2.0,
        }
    }
}

impl AlgorithmConfig for CubicConfig {
    const NAME: &'static str = "cubic";
    const SUMMARY: &'static str = "CUBIC with HyStart, Linux tcp_cubic.c v2.3 (RFC 9438; HyStart++ RFC 9406 optional)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "beta", unit: "", doc: "multiplicative decrease factor, rounded to a multiple of 1/1024" },
        ParamDoc { name: "c", unit: "packets/s³", doc: "cubic scaling constant, rounded to a multiple of 10/1024" },
        ParamDoc { name: "fast_convergence", unit: "", doc: "remember only (1+β)/2 of W_max after a loss below it" },
        ParamDoc { name: "tcp_friendliness", unit: "", doc: "never grow slower than the Reno estimate" },
        ParamDoc { name: "hystart", unit: "", doc: "slow-start exit: true (Linux HyStart), false, \"hystart++\"" },
        ParamDoc { name: "hystart_detect", unit: "", doc: "HyStart tests: \"ack-train\", \"delay\" or \"both\"" },
        ParamDoc { name: "hystart_low_window", unit: "packets", doc: "HyStart runs only from this cwnd on" },
        ParamDoc { name: "hystart_ack_delta_ms", unit: "ms", doc: "largest ACK spacing within an ACK train" },
    ];

    fn validate(&self) -> Result<(), String> {
        check_range("beta", self.beta, self.beta > 0.0 && self.beta < 1.0, "0 < beta < 1")?;
        check_range("c", self.c, (0.01..=100.0).contains(&self.c), "0.01 ≤ c ≤ 100")?;
        let delta = self.hystart_ack_delta_ms;
        let ok = (0.0..=1000.0).contains(&delta);
        check_range("hystart_ack_delta_ms", delta, ok, "0 ≤ hystart_ack_delta_ms ≤ 1000")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new(self))
    }
}

/// The integer constants Linux derives from the module parameters at load time.
#[derive(Clone, Debug)]
struct Params {
    /// β·1024.
    beta: u32,
    /// Linux `cube_rtt_scale` = bic_scale·10 (C·1024).
    cube_rtt_scale: u64,
    /// Linux `cube_factor` = 2⁴⁰ / cube_rtt_scale: K = ∛(cube_factor·(W_max − cwnd)).
    cube_factor: u64,
    /// Linux `beta_scale` = 8·(1024+β)/3/(1024−β): the Reno estimate grows by one packet per
    /// beta_scale·cwnd/8 packets acked (15 for the default β).
    beta_scale: u32,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hystart: Hystart,
    detect: HystartDetect,
    low_window: u32,
    ack_delta_us: u64,
}

impl Params {
    fn new(c: &CubicConfig) -> Self {
        let beta = (c.beta * BETA_SCALE as f64).round().clamp(1.0, BETA_SCALE as f64 - 1.0) as u32;
        let bic_scale = (c.c * BETA_SCALE as f64 / 10.0).round().max(1.0) as u64;
        let cube_rtt_scale = bic_scale * 10;
        Params {
            beta,
            cube_rtt_scale,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale,
            beta_scale: 8 * (BETA_SCALE as u32 + beta) / 3 / (BETA_SCALE as u32 - beta),
            fast_convergence: c.fast_convergence,
            tcp_friendliness: c.tcp_friendliness,
            hystart: c.hystart,
            detect: c.hystart_detect,
            low_window: c.hystart_low_window,
            ack_delta_us: (c.hystart_ack_delta_ms * 1000.0).round() as u64,
        }
    }
}

/// HyStart round state (Linux) and the RFC 9406 additions, which reuse the round, its
/// minimum RTT and its sample count.
#[derive(Clone, Debug)]
struct SlowStartExit {
    /// The exit point was found: slow start is over (Linux `found`).
    found: bool,
    /// Start of the current round, µs.
    round_start: u64,
    /// Last ACK of the current ACK train, µs.
    last_ack: u64,
    /// The round ends when snd_una passes this.
    end_seq: u32,
    /// Minimum RTT of the current round, µs (u32::MAX = none).
    curr_rtt: u32,
    /// RTT samples taken in the current round.
    sample_cnt: u32,
    /// RFC 9406 `lastRoundMinRTT`, µs (u32::MAX = none).
    last_round_min_rtt: u32,
    /// RFC 9406 `cssBaselineMinRtt` while in Conservative Slow Start.
    css_baseline: Option<u32>,
    /// Rounds completed in CSS.
    css_rounds: u32,
    /// Packets acked in CSS not yet turned into window (growth is acked/4).
    css_credit: u32,
}

/// CUBIC state (Linux `struct bictcp`).
#[derive(Clone, Debug)]
pub struct Cubic {
    p: Params,
    /// Packets to be acked per +1 of cwnd.
    cnt: u32,
    /// W_max: cwnd before the last reduction (Linux `last_max_cwnd`); 0 = none yet.
    w_max: u32,
    last_cwnd: u32,
    /// When `cnt` was last computed, jiffies.
    last_time: u64,
    origin_point: u32,
    /// Time from epoch start to the origin point, 2⁻¹⁰ s (Linux `bic_K`).
    k: u64,
    /// Minimum RTT, µs; 0 = no sample yet.
    delay_min: u32,
    /// Start of the growth epoch, jiffies (`None` where Linux has epoch_start = 0).
    epoch_start: Option<u64>,
    /// Packets acked in this epoch not yet credited to the Reno estimate.
    ack_cnt: u32,
    /// Reno estimate W_est, packets (Linux `tcp_cwnd`).
    tcp_cwnd: u32,
    ss: SlowStartExit,
}

/// Linux `after(a, b)` on 32-bit sequence numbers.
fn seq_after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// ⌊∛a⌋, exactly (Linux `cubic_root` approximates it to ≈0.2 %).
fn cbrt_floor(a: u64) -> u64 {
    let cube_le_a = |x: u64| x.checked_pow(3).is_some_and(|c| c <= a);
    // The f64 estimate is within a unit or two; integer steps make it exact.
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && !cube_le_a(x) {
        x -= 1;
    }
    while cube_le_a(x + 1) {
        x += 1;
    }
    x
}

impl Cubic {
    pub fn new(config: &CubicConfig) -> Self {
        Self::with_params(Params::new(config))
    }

    /// Linux `bictcp_reset`: everything but the parameters back to zero.
    fn with_params(p: Params) -> Self {
        Cubic {
            p,
            cnt: 0,
            w_max: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            ss: SlowStartExit {
                found: false,
                round_start: 0,
                last_ack: 0,
                end_seq: 0,
                curr_rtt: u32::MAX,
                sample_cnt: 0,
                last_round_min_rtt: u32::MAX,
                css_baseline: None,
                css_rounds: 0,
                css_credit: 0,
            },
        }
    }

    /// Linux `bictcp_hystart_reset`: a new round starts now and ends at snd_nxt. With
    /// HyStart++ this is also where a round ends (RFC 9406 §4.2).
    fn hystart_reset(&mut self, cx: &mut CcCx) {
        let ss = &mut self.ss;
        let now = cx.now.as_micros();
        ss.round_start = now;
        ss.last_ack = now;
        ss.end_seq = cx.snd_nxt;
        ss.last_round_min_rtt = ss.curr_rtt;
        ss.curr_rtt = u32::MAX;
        ss.sample_cnt = 0;
        if ss.css_baseline.is_some() {
            ss.css_rounds += 1;
            if ss.css_rounds >= CSS_ROUNDS {
                ss.css_baseline = None;
                ss.found = true;
                cx.ssthresh = cx.cwnd;
            }
        }
    }

    /// The cubic window W(t) = origin ± C·|t − K|³ for `t` in 2⁻¹⁰ s since the epoch start.
    fn target(&self, t: u64) -> u32 {
        // Beyond 2³⁰ (12 days) the result saturates anyway; the cap keeps u128 from overflowing.
        let offs = u128::from(t.abs_diff(self.k).min(1 << 30));
        let delta = (u128::from(self.p.cube_rtt_scale) * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
        let delta = delta.min(u128::from(u32::MAX)) as u32;
        if t < self.k {
            self.origin_point.saturating_sub(delta)
        } else {
            self.origin_point.saturating_add(delta)
        }
    }

    /// Linux `bictcp_update`: recomputes `cnt` for a window of `cwnd` at jiffy `now`.
    fn update(&mut self, cwnd: u32, acked: u32, now: u64) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // The cubic part runs at most once per jiffy; a reduction (epoch_start = None) forces it.
        if self.epoch_start.is_none() || now != self.last_time {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => self.start_epoch(cwnd, acked, now),
            };
            // Evaluate one delay_min ahead (Linux usecs_to_jiffies rounds up).
            let ahead = u64::from(self.delay_min).div_ceil(1_000_000 / HZ);
            let t = ((now.saturating_sub(epoch_start) + ahead) << BICTCP_HZ) / HZ;
            let target = self.target(t);
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.saturating_mul(100) };
            // Before the first loss grow at least 5 % per RTT.
            if self.w_max == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.p.tcp_friendliness {
            // W_est += 1 per beta_scale·cwnd/8 packets acked (Linux subtracts in a loop).
            let delta = ((u64::from(cwnd) * u64::from(self.p.beta_scale)) >> 3).max(1);
            let delta = delta.min(u64::from(u32::MAX)) as u32;
            if self.ack_cnt > delta {
                let steps = (self.ack_cnt - 1) / delta;
                self.ack_cnt -= steps * delta;
                self.tcp_cwnd = self.tcp_cwnd.saturating_add(steps);
            }
            if self.tcp_cwnd > cwnd {
                self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
            }
        }
        // At most one packet per two acked: 1.5× per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// A new epoch at jiffy `now` (first growth after a reduction or at start); returns `now`.
    fn start_epoch(&mut self, cwnd: u32, acked: u32, now: u64) -> u64 {
        self.epoch_start = Some(now);
        self.ack_cnt = acked;
        self.tcp_cwnd = cwnd;
        if self.w_max <= cwnd {
            self.k = 0;
            self.origin_point = cwnd;
        } else {
            self.k = cbrt_floor(self.p.cube_factor.saturating_mul(u64::from(self.w_max - cwnd)));
            self.origin_point = self.w_max;
        }
        now
    }

    /// Slow-start growth with HyStart++ (RFC 9406 §4.2): at most L packets per ACK, and a
    /// quarter of that in CSS. Returns the acked packets left for congestion avoidance.
    fn hystart_pp_slow_start(&mut self, cx: &mut CcCx, acked: u32) -> u32 {
        let burst = if cx.paced { acked } else { acked.min(HSPP_UNPACED_BURST) };
        if self.ss.css_baseline.is_none() {
            return cx.slow_start(burst);
        }
        self.ss.css_credit += burst;
        let grow = self.ss.css_credit / CSS_GROWTH_DIVISOR;
        self.ss.css_credit %= CSS_GROWTH_DIVISOR;
        cx.cwnd = cx.cwnd.saturating_add(grow).min(cx.ssthresh).min(cx.cwnd_clamp);
        0
    }

    /// Linux `hystart_update`: ACK-train and delay tests on one RTT sample `delay` (µs).
    fn hystart_update(&mut self, cx: &mut CcCx, delay: u32) {
        if seq_after(cx.snd_una, self.ss.end_seq) {
            self.hystart_reset(cx);
        }
        let delay_min = u64::from(self.delay_min);
        if self.p.detect.ack_train() {
            let now = cx.now.as_micros();
            if now.saturating_sub(self.ss.last_ack) <= self.p.ack_delta_us {
                self.ss.last_ack = now;
                let mut threshold = delay_min + hystart_ack_delay(cx);
                // Unpaced, a round's ACKs may span only half an RTT at the exit point.
                if !cx.paced {
                    threshold >>= 1;
                }
                if now.saturating_sub(self.ss.round_start) > threshold {
                    self.ss.found = true;
                    cx.ssthresh = cx.cwnd;
                }
            }
        }
        if self.p.detect.delay() {
            self.ss.curr_rtt = self.ss.curr_rtt.min(delay);
            if self.ss.sample_cnt < HYSTART_MIN_SAMPLES {
                self.ss.sample_cnt += 1;
            } else if u64::from(self.ss.curr_rtt) > delay_min + delay_threshold(delay_min) {
                self.ss.found = true;
                cx.ssthresh = cx.cwnd;
            }
        }
    }

    /// RFC 9406 §4.2 on one RTT sample `delay` (µs): enter CSS when this round's minimum RTT
    /// exceeds the last round's by the threshold, leave it when the RTT drops back.
    fn hystart_pp_update(&mut self, cx: &mut CcCx, delay: u32) {
        if seq_after(cx.snd_una, self.ss.end_seq) {
            self.hystart_reset(cx);
            if self.ss.found {
                return;
            }
        }
        let ss = &mut self.ss;
        ss.curr_rtt = ss.curr_rtt.min(delay);
        ss.sample_cnt += 1;
        if ss.sample_cnt < HYSTART_MIN_SAMPLES || ss.curr_rtt == u32::MAX || ss.last_round_min_rtt == u32::MAX {
            return;
        }
        let (curr, last) = (u64::from(ss.curr_rtt), u64::from(ss.last_round_min_rtt));
        match ss.css_baseline {
            None if curr >= last + delay_threshold(last) => {
                ss.css_baseline = Some(ss.curr_rtt);
                ss.css_rounds = 0;
            }
            Some(baseline) if ss.curr_rtt < baseline => ss.css_baseline = None,
            _ => {}
        }
    }
}

/// The delay increase that ends slow start: clamp(base/8, 4 ms, 16 ms), µs.
fn delay_threshold(base_us: u64) -> u64 {
    (base_us / HYSTART_DELAY_DIVISOR).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US)
}

/// Linux `hystart_ack_delay`: time to send 4 × the device's GSO size at the pacing rate, at
/// most 1 ms, µs (0 without a pacing rate). With GSO (`tcp.gso`) the device's size is Linux's
/// default 64 KB, so the cushion is 1 ms below 2 Gbit/s; without, a device whose GSO size is
/// one segment: 4 MSS.
fn hystart_ack_delay(cx: &CcCx) -> u64 {
    if cx.pacing_rate == 0 {
        return 0;
    }
    let gso_size = if cx.gso { crate::gso::GSO_LEGACY_MAX_SIZE } else { u64::from(cx.mss) };
    (4 * gso_size * 1_000_000 / cx.pacing_rate).min(HYSTART_ACK_DELAY_MAX_US)
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        CubicConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Self::with_params(self.p.clone());
        if self.p.hystart != Hystart::Off {
            self.hystart_reset(cx);
        }
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        self.epoch_start = None;
        let cwnd = u64::from(cx.cwnd);
        self.w_max = if cx.cwnd < self.w_max && self.p.fast_convergence {
            (cwnd * (BETA_SCALE + u64::from(self.p.beta)) / (2 * BETA_SCALE)) as u32
        } else {
            cx.cwnd
        };
        // A reduction ends HyStart++'s Conservative Slow Start (RFC 9406 §4.2).
        self.ss.css_baseline = None;
        ((cwnd * u64::from(self.p.beta) / BETA_SCALE) as u32).max(2)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if !cx.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if cx.in_slow_start() {
            acked = match self.p.hystart {
                Hystart::PlusPlus => self.hystart_pp_slow_start(cx, acked),
                Hystart::Linux | Hystart::Off => cx.slow_start(acked),
            };
            if acked == 0 {
                return;
            }
        }
        self.update(cx.cwnd, acked, cx.now.as_jiffies());
        cx.cong_avoid_ai(self.cnt, acked);
    }

    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        // After an RTO Linux forgets everything, W_max included (Linux cubictcp_state(),
        // TCP_CA_Loss).
        if new_state == CaState::Loss {
            *self = Self::with_params(self.p.clone());
            self.hystart_reset(cx);
        }
    }

    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        // Restarting after idle: shift the epoch so the curve resumes where it paused.
        if ev == CwndEvent::TxStart {
            let now = cx.now.as_jiffies();
            let idle = now.saturating_sub(cx.last_send_time.as_jiffies());
            if let Some(epoch) = self.epoch_start.as_mut() {
                if idle > 0 {
                    *epoch = (*epoch + idle).min(now);
                }
            }
        }
    }

    fn pkts_acked(&mut self, cx: &mut CcCx, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Discard samples for 1 s after an epoch starts (right after recovery).
        if self.epoch_start.is_some_and(|e| cx.now.as_jiffies().saturating_sub(e) < HZ) {
            return;
        }
        let delay = sample.rtt_us.clamp(1, i64::from(u32::MAX)) as u32;
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.ss.found || !cx.in_slow_start() {
            return;
        }
        match self.p.hystart {
            Hystart::Linux if cx.cwnd >= self.p.low_window => self.hystart_update(cx, delay),
            Hystart::PlusPlus => self.hystart_pp_update(cx, delay),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Path;
    use tcplab_core::{SimDuration, SimTime};

    fn at_ms(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    /// An initialised CUBIC on a cwnd-limited connection at `cwnd`.
    fn setup(config: &CubicConfig, cwnd: u32) -> (Cubic, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        let mut cubic = Cubic::new(config);
        cubic.init(&mut cx);
        (cubic, cx)
    }

    fn rtt_sample(cubic: &mut Cubic, cx: &mut CcCx, rtt_us: i64) {
        cubic.pkts_acked(cx, &AckSample { pkts_acked: 1, rtt_us, in_flight: cx.cwnd });
    }

    /// ACKs one packet at a time, `cwnd` ACKs spread evenly over each `rtt`, until `until`.
    fn ack_clock(cubic: &mut Cubic, cx: &mut CcCx, rtt: SimDuration, until: SimTime, mut each: impl FnMut(&CcCx)) {
        let mut round = cx.now;
        while round < until {
            let n = u64::from(cx.cwnd);
            for i in 0..n {
                cx.now = round + SimDuration::from_nanos(rtt.as_nanos() * i / n);
                cubic.cong_avoid(cx, 1);
                each(cx);
            }
            round += rtt;
        }
    }

    #[test]
    fn cube_root_is_exact() {
        for x in [0u64, 1, 2, 7, 4316, 1 << 20, 2_642_245] {
            let c = x * x * x;
            assert_eq!(cbrt_floor(c), x);
            if x > 0 {
                assert_eq!(cbrt_floor(c - 1), x - 1);
                assert_eq!(cbrt_floor(c + 1), x);
            }
        }
        assert_eq!(cbrt_floor(u64::MAX), 2_642_245);
    }

    #[test]
    fn linux_constants_follow_from_the_parameters() {
        let p = Params::new(&CubicConfig::default());
        // β = 717/1024; bic_scale = round(0.4·102.4) = 41 → 410; 2⁴⁰/410 = 2681735677;
        // beta_scale = 8·1741/3/307 = 4642/307 = 15 (integer steps: 13928/3 = 4642).
        assert_eq!((p.beta, p.cube_rtt_scale, p.cube_factor, p.beta_scale), (717, 410, 2_681_735_677, 15));
        let p = Params::new(&CubicConfig { beta: 0.7, c: 0.4004, ..CubicConfig::default() });
        assert_eq!((p.beta, p.cube_rtt_scale), (717, 410));
    }

    // docs/validation.md CUBIC 1
    #[test]
    fn first_loss_at_100_gives_ssthresh_70_and_k_of_4_22_s() {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 100);
        cx.now = at_ms(5_000);
        rtt_sample(&mut cubic, &mut cx, 40_000);
        // ⌊100·717/1024⌋ = ⌊70.02⌋ = 70; first loss: W_max = cwnd.
        assert_eq!(cubic.ssthresh(&mut cx), 70);
        assert_eq!(cubic.w_max, 100);
        // Recovery ends with cwnd = ssthresh; the first CA ACK starts the epoch.
        cx.cwnd = 70;
        cx.ssthresh = 70;
        cubic.cong_avoid(&mut cx, 1);
        assert_eq!(cubic.epoch_start, Some(5_000));
        // K = ∛(2681735677·30) = ∛80452070310 → 4316 (4316³ = 80397826496, 4317³ =
        // 80453723013) in 2⁻¹⁰ s = 4.2148 s; ∛((100−70)/0.4) = ∛75 = 4.2172 s: −0.06 %,
        // inside Linux cubic_root's ≈0.2 %.
        assert_eq!(cubic.k, 4316);
        assert!((cubic.k as f64 / 1024.0 / 75f64.cbrt() - 1.0).abs() < 0.002);
        assert_eq!(cubic.origin_point, 100);
        // cnt = cwnd/(target − cwnd). At the epoch start t = 40 (delay_min ahead) and the
        // target is 71 (below); 1 s later t = 1040·1024/1000 = 1064 and the target is 88 (87
        // without the look-ahead): cnt = ⌊70/18⌋ = 3.
        assert_eq!(cubic.cnt, 70);
        cx.now = at_ms(6_000);
        cubic.cong_avoid(&mut cx, 1);
        assert_eq!(cubic.cnt, 3);
        // Target at epoch time j ms, evaluated delay_min = 40 ms ahead: t = (j+40)·1024/1000.
        let target_at = |j: u64| cubic.target(((j + 40) << 10) / 1000);
        // j = 0: t = 40, 410·4276³ >> 40 = 29 → 100 − 29.
        assert_eq!(target_at(0), 71);
        // j = K − delay_min = 4175 ms: t = 4215·1024/1000 = 4316 = K → the origin, W_max.
        assert_eq!(target_at(4175), 100);
        // C·|t−K|³ < 1 packet within 1390/1024 s of K: flat at 100, then above it.
        assert_eq!(target_at(5500), 100);
        assert_eq!(target_at(5600), 101); // t = 5775, 410·1459³ >> 40 = 1
        assert_eq!(target_at(8000), 122); // t = 8232, 410·3916³ >> 40 = 22
        let mut prev = 0;
        for j in (0..10_000).step_by(25) {
            let t = target_at(j);
            assert!(t >= prev && (j <= 4175 || t >= 100) && (j >= 4175 || t <= 100), "j {j}: {t}");
            prev = t;
        }
    }

    #[test]
    fn after_a_loss_the_window_climbs_back_to_w_max_and_plateaus_around_k() {
        // Reno friendliness off: on a 40 ms path W_est would outgrow the cubic curve.
        let config = CubicConfig { tcp_friendliness: false, ..CubicConfig::default() };
        let (mut cubic, mut cx) = setup(&config, 100);
        cx.now = at_ms(5_000);
        rtt_sample(&mut cubic, &mut cx, 40_000);
        cx.ssthresh = cubic.ssthresh(&mut cx);
        cx.cwnd = cx.ssthresh;
        let rtt = SimDuration::from_millis(40);
        let epoch = cx.now;
        let mut first_at_100 = None;
        ack_clock(&mut cubic, &mut cx, rtt, epoch + SimDuration::from_millis(5_000), |cx| {
            assert!(cx.cwnd <= 100, "above W_max before K + 0.8 s: {} at {:?}", cx.cwnd, cx.now);
            if cx.cwnd == 100 && first_at_100.is_none() {
                first_at_100 = Some(cx.now - epoch);
            }
        });
        // The target is within a packet of W_max from ≈2.9 s (|t−K| < 1390/1024 s), so the
        // window arrives there before K and stays through K.
        let reached = first_at_100.expect("back at W_max").as_secs_f64();
        assert!((2.5..4.2).contains(&reached), "{reached}");
        ack_clock(&mut cubic, &mut cx, rtt, epoch + SimDuration::from_millis(7_000), |_| {});
        assert!(cx.cwnd > 100);
    }

    // docs/validation.md CUBIC 2
    #[test]
    fn fast_convergence_remembers_0_85_of_a_lower_window() {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 100);
        assert_eq!(cubic.ssthresh(&mut cx), 70);
        cx.cwnd = 90;
        // ⌊90·717/1024⌋ = ⌊63.02⌋ = 63; W_max = ⌊90·(1024+717)/2048⌋ = ⌊76.5⌋ = 76.
        assert_eq!(cubic.ssthresh(&mut cx), 63);
        assert_eq!(cubic.w_max, 76);
        // A loss at or above W_max remembers the window itself.
        cx.cwnd = 120;
        cubic.ssthresh(&mut cx);
        assert_eq!(cubic.w_max, 120);

        let (mut cubic, mut cx) = setup(&CubicConfig { fast_convergence: false, ..CubicConfig::default() }, 100);
        cubic.ssthresh(&mut cx);
        cx.cwnd = 90;
        assert_eq!(cubic.ssthresh(&mut cx), 63);
        assert_eq!(cubic.w_max, 90);
    }

    #[test]
    fn ssthresh_is_never_below_two() {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 2);
        assert_eq!(cubic.ssthresh(&mut cx), 2); // ⌊2·717/1024⌋ = 1
    }

    /// Slow start at `cwnd` with delay_min = 40 ms from a first round; returns the state at
    /// the start of the next round (snd_una past the first round's end_seq), ACKs 3 ms apart
    /// so the ACK-train test never fires.
    fn slow_start_after_a_40_ms_round(cwnd: u32) -> (Cubic, CcCx) {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), cwnd);
        cx.snd_nxt = cwnd;
        cubic.init(&mut cx); // end_seq = snd_nxt = cwnd
        cx.now = at_ms(3);
        cx.snd_una = 1;
        rtt_sample(&mut cubic, &mut cx, 40_000);
        assert_eq!(cubic.delay_min, 40_000);
        cx.snd_una = cwnd + 1; // the next sample starts a new round
        cx.snd_nxt = 2 * cwnd;
        (cubic, cx)
    }

    // docs/validation.md CUBIC 3
    #[test]
    fn hystart_delay_exit_needs_cwnd_16_and_rtt_above_delay_min_plus_5_ms() {
        // delay_min 40 ms → threshold clamp(40/8, 4, 16) = 5 ms: exit once a round's min RTT
        // exceeds 45 ms. Linux counts 8 samples, the 9th compares.
        let (mut cubic, mut cx) = slow_start_after_a_40_ms_round(16);
        for k in 1..=9 {
            cx.now = at_ms(3 + 3 * k);
            rtt_sample(&mut cubic, &mut cx, 45_001);
            assert_eq!(cubic.ss.found, k == 9, "sample {k}");
        }
        assert_eq!(cx.ssthresh, 16);
        assert!(!cx.in_slow_start());

        // Exactly 45 ms is not above the threshold.
        let (mut cubic, mut cx) = slow_start_after_a_40_ms_round(16);
        for k in 1..=20 {
            cx.now = at_ms(3 + 3 * k);
            rtt_sample(&mut cubic, &mut cx, 45_000);
        }
        assert!(!cubic.ss.found && cx.in_slow_start());

        // Below hystart_low_window nothing happens.
        let (mut cubic, mut cx) = slow_start_after_a_40_ms_round(15);
        for k in 1..=20 {
            cx.now = at_ms(3 + 3 * k);
            rtt_sample(&mut cubic, &mut cx, 60_000);
        }
        assert!(!cubic.ss.found);
        assert_eq!(cx.ssthresh, crate::INFINITE_SSTHRESH);
    }

    #[test]
    fn hystart_ack_train_exit_after_half_delay_min_when_unpaced() {
        // delay_min 40 ms, no pacing rate, unpaced: threshold (40 ms + 0)/2 = 20 ms. ACKs
        // 1 ms apart (≤ 2 ms) form a train from the round start.
        let (mut cubic, mut cx) = slow_start_after_a_40_ms_round(32);
        let round_start = cx.now; // reset by the first sample below
        for k in 0..=20 {
            cx.now = round_start + SimDuration::from_millis(k);
            rtt_sample(&mut cubic, &mut cx, 40_000);
            assert!(!cubic.ss.found, "{k} ms");
        }
        cx.now = round_start + SimDuration::from_micros(20_001);
        rtt_sample(&mut cubic, &mut cx, 40_000);
        assert!(cubic.ss.found);
        assert_eq!(cx.ssthresh, 32);
    }

    #[test]
    fn hystart_ack_delay_counts_four_gso_sizes_at_the_pacing_rate() {
        let mut cx = CcCx::new(1448);
        assert_eq!(hystart_ack_delay(&cx), 0, "no pacing rate yet");
        cx.pacing_rate = 125_000_000; // 1 Gbit/s
        cx.gso = false; // 4 · 1448 B / 125 MB/s = 46.3 µs
        assert_eq!(hystart_ack_delay(&cx), 46);
        cx.gso = true; // 4 · 64 KB / 125 MB/s = 2.1 ms, capped at 1 ms
        assert_eq!(hystart_ack_delay(&cx), 1_000);
        cx.pacing_rate = 1_250_000_000; // 10 Gbit/s: 4 · 64 KB take 210 µs
        assert_eq!(hystart_ack_delay(&cx), 209);
    }

    #[test]
    fn rtt_samples_are_ignored_for_a_second_after_an_epoch_starts() {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 50);
        cx.ssthresh = 50;
        cx.now = at_ms(10_000);
        rtt_sample(&mut cubic, &mut cx, 40_000);
        cubic.cong_avoid(&mut cx, 1); // epoch starts at 10 000 jiffies
        cx.now = at_ms(10_999);
        rtt_sample(&mut cubic, &mut cx, 30_000);
        assert_eq!(cubic.delay_min, 40_000);
        cx.now = at_ms(11_000);
        rtt_sample(&mut cubic, &mut cx, 30_000);
        assert_eq!(cubic.delay_min, 30_000);
    }

    #[test]
    fn rto_forgets_w_max_and_growth_is_then_at_least_5_percent_per_rtt() {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 100);
        cx.now = at_ms(1_000);
        rtt_sample(&mut cubic, &mut cx, 40_000);
        cubic.ssthresh(&mut cx);
        assert_eq!(cubic.w_max, 100);
        cubic.set_state(&mut cx, CaState::Loss);
        assert_eq!((cubic.w_max, cubic.delay_min, cubic.epoch_start), (0, 0, None));
        // Later congestion avoidance with no W_max: cnt capped at 20 (+5 % per RTT).
        cx.cwnd = 50;
        cx.ssthresh = 50;
        for ms in 0..100 {
            cx.now = at_ms(2_000 + ms);
            cubic.cong_avoid(&mut cx, 1);
            assert!((2..=20).contains(&cubic.cnt), "{}", cubic.cnt);
        }
    }

    #[test]
    fn growth_is_at_most_one_packet_per_two_acked() {
        // Far below a large W_max the target jumps ahead; cnt stays ≥ 2.
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 1000);
        cubic.ssthresh(&mut cx);
        cx.cwnd = 100;
        cx.ssthresh = 100;
        cx.now = at_ms(1_000);
        cubic.cong_avoid(&mut cx, 1);
        cx.now = at_ms(60_000);
        for _ in 0..10 {
            cubic.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cubic.cnt, 2);
        assert_eq!(cx.cwnd, 105);
    }

    #[test]
    fn reno_friendliness_grows_w_est_by_one_per_15_8_windows_acked() {
        // W_max = cwnd = 100 (K = 0): the cubic curve is flat for a while, W_est is not.
        let (mut cubic, _) = setup(&CubicConfig::default(), 100);
        cubic.w_max = 100;
        // One ACK per ms; with cwnd unchanged `update` recomputes every 32 ms. W_est steps
        // once ack_cnt exceeds 100·15/8 = 187: at the update of ms 192 (193 acks, 6 left).
        for ms in 0..=160 {
            cubic.update(100, 1, 1_000 + ms);
        }
        assert_eq!((cubic.tcp_cwnd, cubic.cnt), (100, 10_000)); // target = cwnd: cnt = 100·cwnd
        for ms in 161..=192 {
            cubic.update(100, 1, 1_000 + ms);
        }
        assert_eq!((cubic.tcp_cwnd, cubic.ack_cnt), (101, 6));
        assert_eq!(cubic.cnt, 100); // min(10 000, 100/(101 − 100))
    }

    #[test]
    fn tx_start_after_idle_shifts_the_epoch_by_the_idle_time() {
        let (mut cubic, mut cx) = setup(&CubicConfig::default(), 50);
        cx.ssthresh = 50;
        cx.now = at_ms(10_000);
        cubic.cong_avoid(&mut cx, 1);
        cx.last_send_time = at_ms(10_500);
        cx.now = at_ms(12_500);
        cubic.cwnd_event(&mut cx, CwndEvent::TxStart);
        assert_eq!(cubic.epoch_start, Some(12_000));
        // Never beyond now.
        cx.last_send_time = at_ms(0);
        cubic.cwnd_event(&mut cx, CwndEvent::TxStart);
        assert_eq!(cubic.epoch_start, Some(12_500));
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_path_before_any_loss() {
        // 1 packet/ms, 40 ms propagation: BDP 41 packets, unlimited buffer. Unpaced, the ACK
        // train of a round lasts longer than delay_min/2 = 20.5 ms once a round carries more
        // than ≈21 packets: HyStart exits between BDP/2 and 2·BDP.
        let ms = SimDuration::from_millis(1);
        let mut path = Path::new(Box::new(Cubic::new(&CubicConfig::default())), ms, SimDuration::from_millis(40), None);
        while path.sender.cx.in_slow_start() && path.now() < at_ms(2_000) {
            path.step();
        }
        let cx = &path.sender.cx;
        assert!(path.sender.cc.ss.found && cx.lost == 0);
        assert!((20..=82).contains(&cx.ssthresh), "{}", cx.ssthresh);
    }

    fn hystart_pp() -> CubicConfig {
        CubicConfig { hystart: Hystart::PlusPlus, ..CubicConfig::default() }
    }

    /// Feeds one HyStart++ round of `n` ACKs with `rtt_us`, each acking one packet.
    fn pp_round(cubic: &mut Cubic, cx: &mut CcCx, n: u32, rtt_us: i64) {
        cx.snd_una = cx.snd_nxt + 1;
        cx.snd_nxt += n;
        for _ in 0..n {
            cx.max_packets_out = cx.cwnd;
            cx.now += SimDuration::from_millis(1);
            rtt_sample(cubic, cx, rtt_us);
            cubic.cong_avoid(cx, 1);
        }
    }

    #[test]
    fn hystart_plus_plus_enters_css_on_rtt_rise_and_leaves_slow_start_after_5_rounds() {
        let (mut cubic, mut cx) = setup(&hystart_pp(), 10);
        pp_round(&mut cubic, &mut cx, 10, 40_000);
        assert_eq!(cx.cwnd, 20); // standard slow start
                                 // vs the last round's 40 ms: RttThresh = clamp(40/8, 4, 16) = 5 ms; 44.999 ms is below.
        pp_round(&mut cubic, &mut cx, 20, 44_999);
        assert_eq!((cx.cwnd, cubic.ss.css_baseline), (40, None));
        // vs 44.999 ms: RttThresh = ⌊44999/8⌋ µs = 5.624 ms, so 50.623 ms is a rise. CSS from
        // the round's 8th sample: ACKs 1–7 add 7, ACKs 8–40 add ⌊33/4⌋ = 8 (1 credit left).
        pp_round(&mut cubic, &mut cx, 40, 50_623);
        assert_eq!(cubic.ss.css_baseline, Some(50_623));
        assert_eq!(cx.cwnd, 55);
        // RTT back below the baseline: slow start again at the 8th sample (7 CSS ACKs with
        // the leftover credit add ⌊8/4⌋ = 2, the 8th adds 1).
        pp_round(&mut cubic, &mut cx, 8, 50_000);
        assert_eq!((cx.cwnd, cubic.ss.css_baseline), (58, None));
        // A new rise, then five CSS rounds end slow start with ssthresh = cwnd.
        let mut rounds = 0;
        while cx.in_slow_start() {
            pp_round(&mut cubic, &mut cx, 16, 60_000);
            rounds += 1;
            assert!(rounds <= 6);
        }
        assert_eq!(rounds, 6); // the round entering CSS, then 5 CSS rounds
        assert!(cubic.ss.found && cx.cwnd - cx.ssthresh <= 1, "{} {}", cx.cwnd, cx.ssthresh);
    }

    #[test]
    fn hystart_plus_plus_limits_unpaced_growth_to_8_packets_per_ack() {
        let (mut cubic, mut cx) = setup(&hystart_pp(), 10);
        cubic.cong_avoid(&mut cx, 20);
        assert_eq!(cx.cwnd, 18);
        cx.paced = true;
        cubic.cong_avoid(&mut cx, 20);
        assert_eq!(cx.cwnd, 38);
    }

    #[test]
    fn hystart_setting_parses_from_bool_or_name() {
        let parse = |v: serde_json::Value| serde_json::from_value::<CubicConfig>(serde_json::json!({ "hystart": v }));
        assert_eq!(parse(true.into()).unwrap().hystart, Hystart::Linux);
        assert_eq!(parse(false.into()).unwrap().hystart, Hystart::Off);
        assert_eq!(parse("hystart++".into()).unwrap().hystart, Hystart::PlusPlus);
        assert!(parse("fast".into()).unwrap_err().to_string().contains("allowed: true, false, \"hystart++\""));
        let v = serde_json::to_value(hystart_pp()).unwrap();
        assert_eq!(v["hystart"], "hystart++");
        assert_eq!(v["hystart_detect"], "both");
    }
}
