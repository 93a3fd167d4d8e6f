//! RED, Random Early Detection (Floyd & Jacobson 1993; RFC 2309 §4 recommends it), as Linux
//! `sch_red` and `include/net/red.h` implement it, with Adaptive RED (Floyd, Gummadi & Shenker
//! 2001, Linux `red_adaptative_algo`) and ECN marking (RFC 3168).
//!
//! Each arrival updates the average backlog `avg ← (1−W)·avg + W·backlog` (the backlog it
//! finds, before it joins), kept as Linux keeps it: a fixed-point number with `Wlog`
//! fractional bits, W = 2^−Wlog (`red_calc_qavg_no_idle_time`). Below `min_th` the arrival
//! passes; at or above `max_th` it is dropped — or CE-marked, with `ecn` and without
//! `harddrop` (`RED_HARD_MARK`); in between it is dropped or marked with probability
//! p_b = max_p·(avg − min_th)/(max_th − min_th), spaced by Linux's count test
//! (`red_action`, `red_mark_probability`): after each mark a uniform qR is drawn in
//! [0, (max_th − min_th)/max_p) (`red_random`), and the `count`-th arrival since is marked
//! once (avg − min_th)·count ≥ qR, i.e. count·p_b ≥ U — Floyd's uniformised
//! p_a = p_b/(1 − count·p_b), so marks fall uniformly 1 … 1/p_b arrivals apart. The first
//! arrival of a stretch in between only draws qR. max_p is Linux's Q0.32 `max_P`
//! (`probability`·2^32, truncated as tc does) and qR divides a 32-bit draw by
//! max_P/(max_th − min_th), truncated.
//!
//! After an idle period (from the dequeue that found the queue empty to the next arrival)
//! the average decays as if m = idle time / (`avpkt` transmission time at the link rate)
//! packets had arrived to an empty queue: avg·(1−W)^m (`red_calc_qavg_from_idle_time`).
//! This is computed exactly from `ctx.rate`; Linux looks the shift up in tc's 256-entry
//! `Stab` table (`tc_red_eval_idle_damping`, built for tc's `bandwidth`, 10 Mbit/s unless
//! given), which steps, caps the idle time, approximates short idle times linearly, and —
//! as it uses a natural logarithm where the shift needs a binary one — decays as about
//! (1−W)^(0.69·m).
//!
//! Adaptive RED (`adaptive`): every 500 ms from the start (Linux's timer), if the average
//! is above min_th + 0.6·(max_th − min_th) and max_p ≤ 0.5, max_p += min(0.01, max_p/4);
//! if below min_th + 0.4·(max_th − min_th) and max_p ≥ 0.01, max_p ·= 0.9 — Linux's
//! integer arithmetic on max_P (targets from (max_th − min_th)/5 truncated, `max_P/10·9`,
//! the bounds tested before the step, so max_p may end just outside [0.01, 0.5]). A tick
//! while idle sees the decayed average without storing it. There are no timers here: the
//! ticks that fell since the last event run in order at the next enqueue or dequeue,
//! which is exact as nothing changes between events. As in Linux, adaptive changes
//! nothing else (ns-3's ARED also sets the thresholds and W).
//!
//! Units: with a buffer in bytes, thresholds and the average are in bytes of the wire
//! backlog (Linux). With a buffer in packets they are in packets (ns-3's packet mode;
//! Linux's `choke` runs RED over packets too); the fixed point then keeps 10 more
//! fractional bits (1/1024 packet), where Linux's arithmetic in whole units would round
//! avg − min_th down to whole packets and keep the average from decaying below one packet.
//!
//! Parameters are tc's (iproute2 `q_red.c`, `tc_red.c`): `min_th`, `max_th` (0 = derived:
//! max_th = 3·min_th, or a quarter of the buffer, at least 1; min_th = max_th/3),
//! `probability` (max_p, 0.02), `avpkt` (1000 B), `burst` (0 = (2·min_th + max_th)/
//! (3·avpkt), packets: /3), from which W is tc_red_eval_ewma's: the largest 2^−Wlog,
//! Wlog in 1…31, with burst + 1 − min_th/avpkt ≤ (1 − (1−W)^burst)/W (avpkt = 1 in packet
//! mode, as tc's choke). tc refuses a burst no W satisfies; so does `validate` for an
//! explicit burst, but a derived one (thresholds of about one avpkt or less: a buffer under
//! 24 packets or 15 000 bytes with derived thresholds) takes Wlog = 1 so that every buffer
//! has working defaults. Drops by the RED decision are `DropReason::Aqm`; the arrival it passes (or
//! marks) is then refused at the buffer limit as `Tail`, as Linux's child bfifo does.
//!
//! Left out: Linux's `nodrop` flag and qevents, the statistics split (prob/forced), and
//! the offload. The gentle ramp is not in Linux (ns-3's default, Floyd's "gentle" RED):
//! between max_th and 2·max_th p_b rises from max_p to 1 and arrivals go through the same
//! count test; forced marks start at 2·max_th.
//!
//! Differences from ns-3's RedQueueDisc (3.44): it averages in floating point with any QW
//! (default 0.002; here W is a power of two from `burst`), applies m + 1 factors after idle
//! with m = ⌊idle·LinkBandwidth/(8·MeanPktSize)⌋ (its own LinkBandwidth attribute,
//! default 1.5 Mbit/s, not the device's rate) and starts idle at time 0 as here; it takes
//! no early or forced action unless more than one packet (or byte) is queued; by default
//! (`Wait`) it spaces drops 1/p_b … 2/p_b arrivals apart instead of 1 … 1/p_b and draws a
//! uniform per arrival; in byte mode it counts arrivals in MeanPktSize units and scales
//! p_a by size/MeanPktSize; `UseHardDrop` (default true) drops ECT packets above the
//! forced threshold where Linux's default marks them; its ARED (`ARED`) also sets min_th =
//! max(5, TargetDelay·C/2), max_th = 3·min_th and QW = 1 − exp(−1/C), adapts on the first
//! arrival more than `Interval` after the last change (not on a 500 ms clock) from the
//! average including that arrival, with Bottom = min(0.01, 8·MeanPktSize·Rtt/bandwidth),
//! Top 0.5, and keeps its gentle slope from the initial max_p.

use super::{Discipline, DropReason, DropSink, Fifo, ParamDoc, Queue, QueueContext, QueueLimit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::{Ecn, Packet, SimDuration, SimRng, SimTime};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Average backlog where early drops start, in the buffer's unit; 0 = max_th/3.
    pub min_th: u64,
    /// Average backlog where the drop probability reaches `probability`; 0 = 3·min_th if
    /// min_th is set, else a quarter of the buffer (at least 1).
    pub max_th: u64,
    /// max_p, the early-drop probability at max_th (tc `probability`).
    pub probability: f64,
    /// Average packet size, bytes: sets the idle-time decay (and burst with a byte buffer).
    pub avpkt: u32,
    /// Packets the average absorbs in a burst (sets W); 0 = (2·min_th + max_th)/(3·avpkt).
    pub burst: u32,
    /// CE-mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Between max_th and 2·max_th ramp p_b from max_p to 1 instead of dropping all.
    pub gentle: bool,
    /// With `ecn`, drop rather than mark above the forced-drop threshold.
    pub harddrop: bool,
    /// Adaptive RED: adjust max_p every 500 ms to keep the average mid-band.
    pub adaptive: bool,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_th: 0,
            max_th: 0,
            probability: 0.02,
            avpkt: 1000,
            burst: 0,
            ecn: false,
            gentle: false,
            harddrop: false,
            adaptive: false,
        }
    }
}

impl Discipline for RedConfig {
    const NAME: &'static str = "red";
    const SUMMARY: &'static str = "Random Early Detection with Adaptive RED and ECN (Linux sch_red)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc {
            name: "min_th",
            unit: "packets or bytes",
            doc: "average backlog where early drops start, in the buffer's unit; 0 = max_th/3",
        },
        ParamDoc {
            name: "max_th",
            unit: "packets or bytes",
            doc: "average backlog where the drop probability reaches `probability` (above it all are dropped); 0 = 3·min_th if set, else buffer/4",
        },
        ParamDoc { name: "probability", unit: "", doc: "max_p, the early-drop probability at max_th; > 0 and ≤ 1" },
        ParamDoc {
            name: "avpkt",
            unit: "bytes",
            doc: "average packet size: idle time decays the average by one arrival per avpkt transmission time; with a byte buffer also divides burst",
        },
        ParamDoc {
            name: "burst",
            unit: "packets",
            doc: "burst the average absorbs, giving W = 2^-Wlog as tc; 0 = (2·min_th + max_th)/(3·avpkt) (packet buffer: /3)",
        },
        ParamDoc { name: "ecn", unit: "", doc: "CE-mark ECN-capable packets instead of dropping them" },
        ParamDoc {
            name: "gentle",
            unit: "",
            doc: "ramp the probability from max_p at max_th to 1 at 2·max_th (ns-3/Floyd) instead of dropping all above max_th (Linux)",
        },
        ParamDoc { name: "harddrop", unit: "", doc: "with ecn, drop instead of mark above the forced-drop threshold" },
        ParamDoc { name: "adaptive", unit: "", doc: "Adaptive RED: every 500 ms adjust max_p to keep the average 40–60 % between min_th and max_th" },
    ];

    fn validate(&self, ctx: &QueueContext) -> Result<(), String> {
        self.derive(ctx.limit).map(|_| ())
    }

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        Box::new(RedQueue::new(self, ctx))
    }
}

/// The thresholds, burst and EWMA weight after tc's derivations, in the buffer's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derived {
    pub min_th: u64,
    pub max_th: u64,
    pub burst: u32,
    pub wlog: u32,
}

impl RedConfig {
    /// tc's defaults and checks (`red_parse_opt`): the thresholds, burst and Wlog, or what
    /// is out of range.
    pub fn derive(&self, limit: QueueLimit) -> Result<Derived, String> {
        let p = self.probability;
        if !(p > 0.0 && p <= 1.0) {
            return Err(format!("probability: {p} is out of range; allowed: 0 < probability ≤ 1"));
        }
        if self.avpkt == 0 {
            return Err("avpkt: 0 is out of range; allowed: ≥ 1 byte".into());
        }
        let (buffer, unit, avpkt) = match limit {
            QueueLimit::Packets(n) => (n as u64, "packets", 1),
            QueueLimit::Bytes(b) => (b, "bytes", self.avpkt as u64),
        };
        let max_th = match (self.max_th, self.min_th) {
            (0, 0) => (buffer / 4).max(1),
            (0, min) => min.saturating_mul(3),
            (max, _) => max,
        };
        let min_th = if self.min_th == 0 { max_th / 3 } else { self.min_th };
        if max_th > buffer {
            // A derived max_th = buffer/4 always fits; only 3 × min_th can exceed it.
            let how = if self.max_th == 0 { format!(" (3 × min_th {min_th})") } else { String::new() };
            return Err(format!("max_th: {max_th}{how} is above the buffer; allowed: ≤ {buffer} {unit}"));
        }
        if min_th > max_th {
            return Err(format!("min_th: {min_th} is above max_th {max_th}; allowed: min_th ≤ max_th"));
        }
        let derived_burst = ((2 * min_th as u128 + max_th as u128) / (3 * avpkt as u128)).min(u32::MAX as u128) as u32;
        let burst = if self.burst == 0 { derived_burst } else { self.burst };
        let wlog = match eval_ewma(min_th, burst, avpkt) {
            Some(w) => w,
            None if self.burst == 0 => 1,
            None => {
                let of_min = if avpkt == 1 { format!("min_th {min_th} packets") } else { format!("min_th {min_th} bytes and avpkt {avpkt}") };
                return Err(if burst as u64 >= min_th.div_ceil(avpkt) {
                    let one = if avpkt == 1 { "1 packet".to_string() } else { format!("avpkt ({avpkt} bytes)") };
                    format!("burst: {burst} fits no EWMA weight 2^-1…2^-31 with {of_min} (tc_red_eval_ewma); allowed: 0 (derived), or min_th above {one}")
                } else {
                    format!("burst: {burst} is too small for {of_min}; allowed: ≥ {}", min_th.div_ceil(avpkt))
                });
            }
        };
        Ok(Derived { min_th, max_th, burst, wlog })
    }
}

/// tc's `tc_red_eval_ewma`: the least Wlog in 1…31 with
/// burst + 1 − qmin/avpkt ≤ (1 − (1 − W)^burst)/W, W = 2^−Wlog. The right side is computed
/// without cancellation (tc's `1 − pow(1 − W, burst)` rounds to burst·W for tiny W, so
/// where no W satisfies the condition — a = burst, e.g. min_th 1 packet with burst 2 — tc
/// returns a meaningless Wlog near 27).
fn eval_ewma(qmin: u64, burst: u32, avpkt: u64) -> Option<u32> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return None;
    }
    let mut w = 0.5f64;
    for wlog in 1..32 {
        if a <= -(burst as f64 * (-w).ln_1p()).exp_m1() / w {
            return Some(wlog);
        }
        w /= 2.0;
    }
    None
}

/// 1 % in Q0.32 (`RED_ONE_PERCENT`), the lower bound for Adaptive RED's decrease.
const MAX_P_MIN: u32 = 42_949_673;
/// 50 % (`MAX_P_MAX`), the upper bound for its increase.
const MAX_P_MAX: u32 = 50 * MAX_P_MIN;
const ADAPT_INTERVAL: SimDuration = SimDuration::from_millis(500);
/// Extra fractional bits of a packet-mode backlog: one unit is 1/1024 packet.
const PACKET_SHIFT: u32 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// `RED_DONT_MARK`.
    Pass,
    /// `RED_PROB_MARK`: the count test chose this arrival.
    Early,
    /// `RED_HARD_MARK`: at or above the forced threshold.
    Forced,
}

/// Linux's `red_parms` and `red_vars` over a FIFO.
#[derive(Debug)]
pub struct RedQueue {
    fifo: Fifo,
    /// Whether the backlog is counted in packets (1024 units each) or bytes.
    packets: bool,
    wlog: u32,
    /// Thresholds in units << Wlog.
    qth_min: u128,
    qth_max: u128,
    /// max_th − min_th in units (1 if zero), and max_th in units.
    qth_delta: u128,
    max_units: u128,
    /// Adaptive RED's band in units.
    target_min: u128,
    target_max: u128,
    /// max_p in Q0.32 and max_P / qth_delta, the divisor of qR.
    max_p: u32,
    max_p_delta: u32,
    ecn: bool,
    gentle: bool,
    harddrop: bool,
    /// The link rate, bit/s, and the bits·ns/s of one avpkt (8·avpkt·10^9): an idle time
    /// of t ns stands for t·rate/avpkt_bit_ns arrivals.
    rate_bps: f64,
    avpkt_bit_ns: f64,
    rng: SimRng,
    /// The average backlog in units << Wlog.
    qavg: u128,
    /// Arrivals since the last mark in the band (−1: below min_th or above the band).
    qcount: i64,
    /// The cached draw, in units.
    qr: u128,
    /// Since when the queue has been idle (the dequeue that found it empty).
    idle_since: Option<SimTime>,
    /// The next Adaptive RED tick; `SimTime::MAX` when not adaptive.
    next_adapt: SimTime,
}

impl RedQueue {
    /// A queue for `cfg`, which must validate against `ctx`.
    pub fn new(cfg: &RedConfig, ctx: QueueContext) -> Self {
        let d = cfg.derive(ctx.limit).expect("red parameters are validated before build");
        let packets = matches!(ctx.limit, QueueLimit::Packets(_));
        let scale = if packets { PACKET_SHIFT } else { 0 };
        let (min_units, max_units) = ((d.min_th as u128) << scale, (d.max_th as u128) << scale);
        let qth_delta = (max_units - min_units).max(1);
        // tc: max_P = probability · 2^32 converted to u32 (1.0 saturates; 0 would select Plog).
        let max_p = ((cfg.probability * 4_294_967_296.0) as u64).clamp(1, u32::MAX as u64) as u32;
        let fifth = qth_delta / 5;
        RedQueue {
            fifo: Fifo::new(ctx.limit, None),
            packets,
            wlog: d.wlog,
            qth_min: min_units << d.wlog,
            qth_max: max_units << d.wlog,
            qth_delta,
            max_units,
            target_min: min_units + 2 * fifth,
            target_max: min_units + 3 * fifth,
            max_p,
            max_p_delta: ((max_p as u128 / qth_delta) as u32).max(1),
            ecn: cfg.ecn,
            gentle: cfg.gentle,
            harddrop: cfg.harddrop,
            rate_bps: ctx.rate.bps() as f64,
            avpkt_bit_ns: 8.0 * cfg.avpkt as f64 * 1e9,
            rng: ctx.rng,
            qavg: 0,
            qcount: -1,
            qr: 0,
            // Linux's red_change starts an idle period when configured on an empty queue.
            idle_since: Some(SimTime::ZERO),
            next_adapt: if cfg.adaptive { SimTime::ZERO + ADAPT_INTERVAL } else { SimTime::MAX },
        }
    }

    /// The backlog in units: bytes, or packets << 10.
    fn backlog(&self) -> u128 {
        if self.packets {
            (self.fifo.len_packets() as u128) << PACKET_SHIFT
        } else {
            self.fifo.len_bytes() as u128
        }
    }

    /// The average backlog in packets or bytes.
    #[cfg(test)]
    fn average(&self) -> f64 {
        let shift = self.wlog + if self.packets { PACKET_SHIFT } else { 0 };
        self.qavg as f64 / (1u128 << shift) as f64
    }

    /// `red_calc_qavg_from_idle_time`, exact: the average decayed by (1 − W)^m after an
    /// idle period with m = idle / (avpkt transmission time).
    fn decayed(&self, idle: SimDuration) -> u128 {
        let m = idle.as_nanos() as f64 * self.rate_bps / self.avpkt_bit_ns;
        let keep = 1.0 - 1.0 / (1u64 << self.wlog) as f64;
        (self.qavg as f64 * keep.powf(m)) as u128
    }

    /// p_b in the band for an average (units << Wlog) as the count test realises it:
    /// marks come when count·n ≥ qR, n in units, qR uniform in [0, qth_delta·2^32/max_P).
    fn numerator(&self, qavg: u128) -> u128 {
        if qavg < self.qth_max {
            (qavg - self.qth_min) >> self.wlog
        } else {
            // Gentle: p_b = max_p + (1 − max_p)(avg − max_th)/max_th, as n = p_b·delta/max_p.
            let x = (qavg - self.qth_max) >> self.wlog;
            let max_p = self.max_p as u128;
            self.qth_delta + x * self.qth_delta * ((1u128 << 32) - max_p) / (max_p * self.max_units.max(1))
        }
    }

    /// The drop probability p_b at an average backlog in packets or bytes (before the
    /// count spacing): 0 below min_th, 1 at or above the forced threshold.
    #[cfg(test)]
    fn drop_probability(&self, avg: f64) -> f64 {
        let shift = self.wlog + if self.packets { PACKET_SHIFT } else { 0 };
        let qavg = (avg * (1u128 << shift) as f64) as u128;
        match self.band(qavg) {
            Action::Pass => 0.0,
            Action::Forced => 1.0,
            Action::Early => (self.numerator(qavg) as f64 * self.max_p as f64 / 4_294_967_296.0 / self.qth_delta as f64).min(1.0),
        }
    }

    /// `red_cmp_thresh`, with the gentle band reaching to 2·max_th.
    fn band(&self, qavg: u128) -> Action {
        let forced = if self.gentle { 2 * self.qth_max } else { self.qth_max };
        if qavg < self.qth_min {
            Action::Pass
        } else if qavg >= forced {
            Action::Forced
        } else {
            Action::Early
        }
    }

    /// `red_random`: a 32-bit draw over max_P / qth_delta.
    fn random(&mut self) -> u128 {
        ((self.rng.next_u64() >> 32) / self.max_p_delta as u64) as u128
    }

    /// `red_action`.
    fn action(&mut self) -> Action {
        match self.band(self.qavg) {
            Action::Early => {
                self.qcount += 1;
                if self.qcount == 0 {
                    self.qr = self.random();
                } else if self.numerator(self.qavg).saturating_mul(self.qcount as u128) >= self.qr {
                    self.qcount = 0;
                    self.qr = self.random();
                    return Action::Early;
                }
                Action::Pass
            }
            other => {
                self.qcount = -1;
                other
            }
        }
    }

    /// Runs the Adaptive RED ticks due by `now`, each with the state as of its time.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_adapt <= now {
            let at = self.next_adapt;
            self.adapt(at);
            self.next_adapt = at + ADAPT_INTERVAL;
        }
    }

    /// `red_adaptative_algo` at time `at`.
    fn adapt(&mut self, at: SimTime) {
        let qavg = match self.idle_since {
            Some(since) => self.decayed(at.saturating_since(since)),
            None => self.qavg,
        } >> self.wlog;
        if qavg > self.target_max && self.max_p <= MAX_P_MAX {
            self.max_p += MAX_P_MIN.min(self.max_p / 4);
        } else if qavg < self.target_min && self.max_p >= MAX_P_MIN {
            self.max_p = self.max_p / 10 * 9;
        }
        let delta = self.qth_delta;
        self.max_p_delta = ((self.max_p as u128 + delta / 2) / delta).clamp(1, u32::MAX as u128) as u32;
    }
}

impl Queue for RedQueue {
    fn enqueue(&mut self, mut pkt: Packet, now: SimTime, sink: &mut DropSink) {
        self.catch_up(now);
        self.qavg = match self.idle_since.take() {
            Some(since) => self.decayed(now.saturating_since(since)),
            None => self.qavg - (self.qavg >> self.wlog) + self.backlog(),
        };
        let capable = pkt.ecn != Ecn::NotEct;
        match self.action() {
            Action::Pass => {}
            Action::Early if self.ecn && capable => sink.ce_mark(&mut pkt),
            Action::Forced if self.ecn && !self.harddrop && capable => sink.ce_mark(&mut pkt),
            Action::Early | Action::Forced => return sink.drop(pkt, DropReason::Aqm),
        }
        if self.fifo.fits(&pkt) {
            let backlog = self.fifo.len_packets();
            self.fifo.push(pkt, now, backlog, sink);
        } else {
            sink.drop(pkt, DropReason::Tail);
        }
    }

    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        self.catch_up(now);
        let pkt = self.fifo.pop(now, sink);
        if pkt.is_none() && self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
        pkt
    }

    fn len_packets(&self) -> u32 {
        self.fifo.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fifo::tests::{pkt, with_ecn};
    use super::*;
    use crate::queue::QueueConfig;
    use serde_json::json;

    fn queue(limit: QueueLimit, cfg: RedConfig) -> RedQueue {
        RedQueue::new(&cfg, QueueContext::for_tests(limit, None))
    }
    fn at_us(us: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(us)
    }
    /// min 5, max 15 packets with burst 6: tc_red_eval_ewma gives Wlog 2, W = 1/4
    /// (a = 6 + 1 − 5 = 2 > (1 − 2^−6)/(1/2) = 1.97, ≤ (1 − 0.75^6)/(1/4) = 3.29).
    fn quarter() -> RedConfig {
        RedConfig { min_th: 5, max_th: 15, burst: 6, ..RedConfig::default() }
    }
    /// 10 000 to 30 000 bytes in a 100 000-byte buffer.
    fn bytes_cfg() -> RedConfig {
        RedConfig { min_th: 10_000, max_th: 30_000, ..RedConfig::default() }
    }

    #[test]
    fn average_after_arrivals_follows_the_fixed_point_ewma() {
        let mut q = queue(QueueLimit::Packets(100), quarter());
        assert_eq!(q.wlog, 2);
        let mut sink = DropSink::default();
        let mut avgs = vec![];
        for i in 0..4 {
            q.enqueue(pkt(i, 100), SimTime::ZERO, &mut sink);
            avgs.push(q.average());
        }
        // The first arrival ends the initial idle period: 0 decayed is 0. Then backlogs
        // 1, 2, 3 with W = 1/4: 0·¾ + 1·¼ = 0.25; 0.25·¾ + 2·¼ = 0.6875;
        // 0.6875·¾ + 3·¼ = 1.265625 (exact in 1/1024-packet units << 2).
        assert_eq!(avgs, [0.0, 0.25, 0.6875, 1.265625]);

        // Bytes, 150 000-byte buffer, derived thresholds 12 500/37 500 and Wlog 4: 1000-byte
        // packets. Linux's fixed point qavg += backlog − (qavg >> 4), in bytes << 4:
        // 0 → 0 + 1000 − 0 = 1000 (62.5 B) → 1000 + 2000 − 62 = 2938 (183.625 B; the
        // floating-point EWMA gives 183.59375) → 2938 + 3000 − 183 = 5755 (359.6875 B).
        let mut q = queue(QueueLimit::Bytes(150_000), RedConfig::default());
        assert_eq!(q.wlog, 4);
        let mut avgs = vec![];
        for i in 0..4 {
            q.enqueue(pkt(i, 948), SimTime::ZERO, &mut sink);
            avgs.push(q.average());
        }
        assert_eq!(avgs, [0.0, 62.5, 183.625, 359.6875]);
        assert_eq!(sink.drops(), 0);
    }

    #[test]
    fn drop_probability_linear_gentle_and_forced() {
        // max_P = ⌊0.02·2^32⌋ = 85 899 345; delta 20 000 B. p_b = n·max_P/2^32/delta.
        let q = queue(QueueLimit::Bytes(100_000), bytes_cfg());
        let p = |avg| q.drop_probability(avg);
        assert_eq!(p(9_999.0), 0.0);
        assert_eq!(p(10_000.0), 0.0);
        // Half way: 0.02 · 10 000/20 000 = 0.01; three quarters: 0.015.
        assert!((p(20_000.0) - 0.01).abs() < 1e-9, "{}", p(20_000.0));
        assert!((p(25_000.0) - 0.015).abs() < 1e-9);
        // Linux: at and above max_th every arrival is a forced drop.
        assert_eq!((p(29_999.0) < 0.02, p(30_000.0), p(90_000.0)), (true, 1.0, 1.0));

        // Gentle: from max_p at max_th to 1 at 2·max_th; half way (45 000 B)
        // 0.02 + 0.98·½ = 0.51; forced from 60 000 B.
        let q = queue(QueueLimit::Bytes(100_000), RedConfig { gentle: true, ..bytes_cfg() });
        let p = |avg| q.drop_probability(avg);
        assert!((p(30_000.0) - 0.02).abs() < 1e-9);
        assert!((p(45_000.0) - 0.51).abs() < 1e-8, "{}", p(45_000.0));
        assert!((p(59_999.0) - 1.0).abs() < 1e-4);
        assert_eq!(p(60_000.0), 1.0);
    }

    #[test]
    fn count_spacing_marks_once_count_times_the_excess_reaches_q_r() {
        let mut q = queue(QueueLimit::Bytes(100_000), bytes_cfg());
        // max_P / delta = ⌊85 899 345 / 20 000⌋ = 4294; a draw of 2^31 − 1 (U ≈ ½) gives
        // qR = ⌊2 147 483 647 / 4294⌋ = 500 112 bytes.
        assert_eq!(q.max_p_delta, 4294);
        q.qavg = 20_000 << q.wlog; // avg − min_th = 10 000 B, p_b = 0.01
        assert_eq!(q.action(), Action::Pass, "the first arrival in the band only draws");
        assert_eq!(q.qcount, 0);
        q.qr = 500_112;
        // 10 000·count ≥ 500 112 first at count 51 (floating point: count·0.01 ≥ ½ at 50).
        let marks: Vec<u32> = (1..=51).filter(|_| q.action() == Action::Early).collect();
        assert_eq!(marks.len(), 1);
        assert_eq!(q.qcount, 0, "a mark restarts the count");
        assert_eq!((q.action(), q.qcount), (Action::Pass, 1));
        q.qavg = 9_999 << q.wlog;
        assert_eq!((q.action(), q.qcount), (Action::Pass, -1), "below min_th the count resets");

        // Over many arrivals at p_b = 0.01 the gaps between marks are uniform in 1…100
        // (mean 50.5), twice as dense as independent drops at p_b.
        q.qavg = 20_000 << q.wlog;
        let (mut marks, arrivals) = (0u32, 200_000u32);
        for _ in 0..arrivals {
            marks += (q.action() == Action::Early) as u32;
        }
        let gap = arrivals as f64 / marks as f64;
        assert!((gap - 50.5).abs() < 1.5, "mean gap {gap}");
    }

    #[test]
    fn idle_time_decays_the_average_by_the_avpkt_arrivals_it_stands_for() {
        let mut q = queue(QueueLimit::Packets(100), quarter());
        let mut sink = DropSink::default();
        for i in 0..4 {
            q.enqueue(pkt(i, 100), SimTime::ZERO, &mut sink);
        }
        assert_eq!(q.average(), 1.265625); // 5184 in units << 2
        while q.dequeue(SimTime::ZERO, &mut sink).is_some() {}
        // Empty from t = 0. At 10 Mbit/s a 1000-byte avpkt takes 800 µs: 1.6 ms idle is
        // m = 2 arrivals, (1 − ¼)² = 0.5625: 5184·0.5625 = 2916 units, 0.7119140625 packets
        // (the backlog, 0, is not folded in: Linux's idle branch only decays).
        q.enqueue(pkt(4, 100), at_us(1_600), &mut sink);
        assert_eq!(q.average(), 2916.0 / 4096.0);
        // The queue empties at 1.6 ms but no dequeue has found it empty yet (the
        // transmitter is busy): an arrival at 2.4 ms is an ordinary EWMA step with backlog
        // 0, 2916 − 729 = 2187.
        assert!(q.dequeue(at_us(1_600), &mut sink).is_some());
        q.enqueue(pkt(5, 100), at_us(2_400), &mut sink);
        assert_eq!(q.average(), 2187.0 / 4096.0);
    }

    #[test]
    fn adaptive_red_steps_max_p_every_500_ms_outside_the_band() {
        let mut q = queue(QueueLimit::Packets(100), RedConfig { adaptive: true, ..quarter() });
        // Band: delta = 10 packets = 10 240 units, /5 = 2048: 9 to 11 packets.
        assert_eq!((q.target_min, q.target_max), (9 << 10, 11 << 10));
        q.idle_since = None;
        q.qavg = (12 << 10) << q.wlog;
        q.catch_up(at_us(499_999));
        assert_eq!(q.max_p, 85_899_345, "no tick before 500 ms");
        // Ticks at 500, 1000, 1500 ms, each + min(1 %, max_P/4) in Q0.32:
        // 85 899 345 + 21 474 836 = 107 374 181 (0.025) + 26 843 545 = 134 217 726
        // + 33 554 431 = 167 772 157 (0.0390625 − 2^−32·3).
        q.catch_up(at_us(1_600_000));
        assert_eq!(q.max_p, 167_772_157);
        // The divisor of qR follows, rounded: (167 772 157 + 5120)/10 240 = 16 384.
        assert_eq!(q.max_p_delta, 16_384);
        // Inside the band (10 packets): no change at 2000 ms.
        q.qavg = (10 << 10) << q.wlog;
        q.catch_up(at_us(2_000_000));
        assert_eq!(q.max_p, 167_772_157);
        // Below (8 packets) at 2500 ms: ⌊167 772 157/10⌋·9 = 150 994 935 (×0.9).
        q.qavg = (8 << 10) << q.wlog;
        q.catch_up(at_us(2_500_000));
        assert_eq!(q.max_p, 150_994_935);

        // The bounds are tested before each step: from 0.5 (2^31 ≤ 50 % = 2 147 483 650)
        // one more step to 0.51, then none.
        let mut q = queue(QueueLimit::Packets(100), RedConfig { adaptive: true, probability: 0.5, ..quarter() });
        (q.idle_since, q.qavg) = (None, (12 << 10) << q.wlog);
        q.catch_up(at_us(1_000_000));
        assert_eq!(q.max_p, 2_147_483_648 + 42_949_673);
        // From 0.0105 (⌊0.0105·2^32⌋ = 45 097 156 ≥ 1 %) one step down to
        // 4 509 715·9 = 40 587 435, then none.
        let mut q = queue(QueueLimit::Packets(100), RedConfig { adaptive: true, probability: 0.0105, ..quarter() });
        (q.idle_since, q.qavg) = (None, (8 << 10) << q.wlog);
        q.catch_up(at_us(1_000_000));
        assert_eq!(q.max_p, 40_587_435);

        // Idle, the tick sees the decayed average (500 ms is 625 avpkt times: ~0) without
        // storing it.
        let mut q = queue(QueueLimit::Packets(100), RedConfig { adaptive: true, ..quarter() });
        q.qavg = (12 << 10) << q.wlog;
        q.catch_up(at_us(500_000));
        assert_eq!((q.max_p, q.qavg), (85_899_345 / 10 * 9, (12 << 10) << q.wlog));
    }

    /// 10 packets, min = max = 2 with burst 2 (Wlog 1, W = ½): arrivals at t = 0 see
    /// averages 0, 0.5, 1.25, 2.125, …, so from the fourth on every arrival is forced.
    fn step(ecn: bool, harddrop: bool) -> RedQueue {
        queue(QueueLimit::Packets(10), RedConfig { min_th: 2, max_th: 2, burst: 2, ecn, harddrop, ..RedConfig::default() })
    }

    #[test]
    fn ecn_marks_capable_packets_and_drops_the_others() {
        use Ecn::*;
        let mut sink = DropSink::default();
        let mut q = step(true, false);
        for (i, ecn) in [Ect0, Ect0, Ect0, Ect0, NotEct, Ce, Ect0].into_iter().enumerate() {
            q.enqueue(with_ecn(i as u32, ecn), SimTime::ZERO, &mut sink);
        }
        // Backlogs 4 (dropped), 4, 5: 2.125/2 + 2 = 3.0625, /2 + 2 = 3.53125, /2 + 2.5.
        assert_eq!(q.average(), 4.265625);
        // Forced from the 4th: ECT marked, Not-ECT dropped (Aqm), CE passes uncounted.
        assert_eq!((sink.ce_marks, sink.aqm, sink.drops()), (2, 1, 1));
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(SimTime::ZERO, &mut sink)).map(|p| p.ecn).collect();
        assert_eq!(ecns, [Ect0, Ect0, Ect0, Ce, Ce, Ce]);

        // harddrop: forced means dropped, ECT or not; without ecn likewise.
        for mut q in [step(true, true), step(false, false)] {
            let mut sink = DropSink::default();
            for i in 0..6 {
                q.enqueue(with_ecn(i, Ect0), SimTime::ZERO, &mut sink);
            }
            assert_eq!((sink.ce_marks, sink.aqm, q.len_packets()), (0, 3, 3));
        }

        // A probabilistic mark (qR forced to 0) marks ECT with ecn and drops Not-ECT.
        let mut q = queue(QueueLimit::Bytes(100_000), RedConfig { ecn: true, ..bytes_cfg() });
        let mut sink = DropSink::default();
        for ecn in [Ect0, NotEct] {
            (q.idle_since, q.qavg, q.qcount, q.qr) = (None, 20_000 << q.wlog, 0, 0);
            q.enqueue(with_ecn(0, ecn), SimTime::ZERO, &mut sink);
        }
        assert_eq!((sink.ce_marks, sink.aqm, q.len_packets()), (1, 1, 1));
        let mut q = queue(QueueLimit::Bytes(100_000), bytes_cfg());
        (q.idle_since, q.qavg, q.qcount, q.qr) = (None, 20_000 << q.wlog, 0, 0);
        q.enqueue(with_ecn(0, Ect0), SimTime::ZERO, &mut sink);
        assert_eq!((sink.ce_marks, sink.aqm), (1, 2), "without ecn an ECT packet is dropped");
    }

    #[test]
    fn a_full_buffer_drops_the_arrival_as_tail_and_lengths_stay_exact() {
        // 4 packets, min = max = 4, burst 4 (Wlog 1): averages 0, .5, 1.25, 2.125, then
        // 3.0625 and 3.53125 for the fifth and sixth, below max_th: both refused as Tail.
        let cfg = RedConfig { min_th: 4, max_th: 4, burst: 4, ..RedConfig::default() };
        let mut q = queue(QueueLimit::Packets(4), cfg);
        let mut sink = DropSink::default();
        for i in 0..6 {
            q.enqueue(pkt(i, 100), at_us(5), &mut sink);
        }
        assert_eq!(q.average(), 3.53125);
        assert_eq!((sink.tail, sink.aqm, q.len_packets(), q.len_bytes()), (2, 0, 4, 4 * 152));
        let p = q.dequeue(at_us(9), &mut sink).unwrap();
        assert_eq!(p.enqueued_at, at_us(5));
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 3 * 152));
        while q.dequeue(at_us(9), &mut sink).is_some() {}
        assert_eq!((q.len_packets(), q.len_bytes(), q.idle_since), (0, 0, Some(at_us(9))));
    }

    #[test]
    fn an_overload_is_held_below_max_th_by_early_and_forced_drops() {
        // 1000-byte packets every 720 µs into 10 Mbit/s (800 µs each): 11 % too many. The
        // link dequeues whenever its transmitter frees up. Derived 100-packet values:
        // min 8, max 25, W = 1/8.
        let mut q = queue(QueueLimit::Packets(100), RedConfig::default());
        let mut sink = DropSink::default();
        let (mut free_at, mut busy) = (SimTime::ZERO, false);
        let arrivals = 20_000u64;
        for k in 0..arrivals {
            let now = at_us(720 * k);
            while busy && free_at <= now {
                busy = q.dequeue(free_at, &mut sink).is_some();
                free_at += SimDuration::from_micros(800);
            }
            q.enqueue(pkt(k as u32, 948), now, &mut sink);
            if !busy {
                busy = q.dequeue(now, &mut sink).is_some();
                free_at = now + SimDuration::from_micros(800);
            }
        }
        // The surplus, 1 − 720/800 = 10 % of arrivals, leaves as early drops, none at the
        // buffer. Early drops at p_b ≤ max_p = 0.02 (about 2·p_b of arrivals) cannot take it
        // all, so the average settles just under max_th, where forced drops add the rest.
        let share = sink.aqm as f64 / arrivals as f64;
        assert_eq!(sink.tail, 0);
        assert!((share - 0.1).abs() < 0.01, "early drops {share}");
        assert!((20.0..25.0).contains(&q.average()), "average {}", q.average());
    }

    #[test]
    fn derived_defaults_follow_tc() {
        let d = |limit, cfg: RedConfig| cfg.derive(limit).unwrap();
        // 100 packets: max 100/4 = 25, min ⌊25/3⌋ = 8, burst ⌊(16 + 25)/3⌋ = 13;
        // a = 13 + 1 − 8 = 6 > 4(1 − ¾^13) = 3.90, ≤ 8(1 − ⅞^13) = 6.59: Wlog 3.
        assert_eq!(d(QueueLimit::Packets(100), RedConfig::default()), Derived { min_th: 8, max_th: 25, burst: 13, wlog: 3 });
        // 150 000 bytes: max 37 500, min 12 500, burst ⌊62 500/3000⌋ = 20;
        // a = 21 − 12.5 = 8.5 > 8(1 − ⅞^20) = 7.45, ≤ 16(1 − (15/16)^20) = 11.60: Wlog 4.
        assert_eq!(
            d(QueueLimit::Bytes(150_000), RedConfig::default()),
            Derived { min_th: 12_500, max_th: 37_500, burst: 20, wlog: 4 }
        );
        // min_th alone: max = 3·min (tc).
        assert_eq!(d(QueueLimit::Packets(100), RedConfig { min_th: 10, ..RedConfig::default() }).max_th, 30);
        // A 1-packet buffer: max 1, min 0, burst 0, which no W satisfies: Wlog 1. Likewise
        // 16 packets: max 4, min 1, burst 2, a = 2 > 2 − W (tc's rounding finds Wlog 27).
        assert_eq!(d(QueueLimit::Packets(1), RedConfig::default()), Derived { min_th: 0, max_th: 1, burst: 0, wlog: 1 });
        assert_eq!(d(QueueLimit::Packets(16), RedConfig::default()), Derived { min_th: 1, max_th: 4, burst: 2, wlog: 1 });
        assert_eq!(d(QueueLimit::Packets(24), RedConfig::default()), Derived { min_th: 2, max_th: 6, burst: 3, wlog: 2 });
        // ns-3's MinTh 5 / MaxTh 15 with burst 48…65 give Wlog 9 (W = 1/512 ≈ QW 0.002).
        for (burst, wlog) in [(47, 8), (48, 9), (65, 9), (66, 10)] {
            assert_eq!(d(QueueLimit::Packets(25), RedConfig { burst, ..quarter() }).wlog, wlog, "burst {burst}");
        }
    }

    #[test]
    fn validate_names_the_parameter_and_what_is_allowed() {
        let check = |limit, cfg: RedConfig| cfg.validate(&QueueContext::for_tests(limit, None)).expect_err(&format!("{cfg:?}"));
        let p100 = QueueLimit::Packets(100);
        assert_eq!(
            check(p100, RedConfig { min_th: 20, max_th: 15, ..RedConfig::default() }),
            "min_th: 20 is above max_th 15; allowed: min_th ≤ max_th"
        );
        assert_eq!(check(p100, RedConfig { max_th: 101, ..RedConfig::default() }), "max_th: 101 is above the buffer; allowed: ≤ 100 packets");
        assert_eq!(
            check(QueueLimit::Bytes(90_000), RedConfig { min_th: 40_000, ..RedConfig::default() }),
            "max_th: 120000 (3 × min_th 40000) is above the buffer; allowed: ≤ 90000 bytes"
        );
        for p in [0.0, -0.1, 1.5, f64::NAN] {
            assert_eq!(
                check(p100, RedConfig { probability: p, ..RedConfig::default() }),
                format!("probability: {p} is out of range; allowed: 0 < probability ≤ 1")
            );
        }
        assert_eq!(check(p100, RedConfig { avpkt: 0, ..RedConfig::default() }), "avpkt: 0 is out of range; allowed: ≥ 1 byte");
        // Burst 3 with min 5 packets: a = 3 + 1 − 5 < 1 (tc: "burst is too small").
        assert_eq!(
            check(p100, RedConfig { burst: 3, ..quarter() }),
            "burst: 3 is too small for min_th 5 packets; allowed: ≥ 5"
        );
        assert_eq!(
            check(QueueLimit::Bytes(100_000), RedConfig { min_th: 12_500, burst: 12, ..RedConfig::default() }),
            "burst: 12 is too small for min_th 12500 bytes and avpkt 1000; allowed: ≥ 13"
        );
        // Burst 5 is the least for min 5 (a = 1 ≤ 2(1 − 2^-5)): Wlog 1.
        assert_eq!(RedConfig { burst: 5, ..quarter() }.derive(p100).unwrap().wlog, 1);
        // min_th 1 packet, burst 2: a = 2 + 1 − 1 = 2 > (1 − (1 − W)²)/W = 2 − W for all W.
        assert_eq!(
            check(p100, RedConfig { min_th: 1, max_th: 3, burst: 2, ..RedConfig::default() }),
            "burst: 2 fits no EWMA weight 2^-1…2^-31 with min_th 1 packets (tc_red_eval_ewma); allowed: 0 (derived), or min_th above 1 packet"
        );
        // min_th below avpkt: a = 2 + 1 − 0.5 = 2.5, likewise.
        assert_eq!(
            check(QueueLimit::Bytes(100_000), RedConfig { min_th: 500, max_th: 1500, burst: 2, ..RedConfig::default() }),
            "burst: 2 fits no EWMA weight 2^-1…2^-31 with min_th 500 bytes and avpkt 1000 (tc_red_eval_ewma); allowed: 0 (derived), or min_th above avpkt (1000 bytes)"
        );
        // Valid corner cases: min = max, probability 1.
        let ok = |limit, cfg: RedConfig| cfg.validate(&QueueContext::for_tests(limit, None));
        assert_eq!(ok(p100, RedConfig { min_th: 20, max_th: 20, probability: 1.0, ..RedConfig::default() }), Ok(()));
        // Negative and fractional thresholds are refused by the parser.
        let (key, message) = QueueConfig::parse(json!({ "kind": "red", "min_th": -1 })).unwrap_err();
        assert_eq!(key, "min_th", "{message}");
        assert!(QueueConfig::parse(json!({ "kind": "red", "burst": 2.5 })).is_err());
    }
}
