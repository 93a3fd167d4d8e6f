//! DualPI2, the coupled dual-queue AQM of L4S (RFC 9332), as Linux `sch_dualpi2` (merged
//! in Linux 6.17) computes it: packets are classified by their ECN codepoint into an L queue
//! (ECT(1) and CE, `ecn_mask` "l4s_ect") and a C queue (the rest); one PI controller
//! (`calculate_probability`, run every `tupdate` by `dualpi2_timer`) drives a base
//! probability p' from the larger of the two queues' head-of-line delays; the C queue drops
//! (or, for ECT packets, marks) with p_C = (p')² (`dualpi2_classic_marking`, two draws)
//! and the L queue marks with p_CL = k·p' (`dualpi2_scalable_marking`), RFC 9332 §2.4;
//! L packets that waited longer than `step_thresh` are also marked (`do_step_aqm`), so the
//! L queue's marking probability is max(p_CL, step) (RFC 9332 §2.5.1.1, Appendix A). A
//! weighted round robin on bytes (`dequeue_packet`, `c_protection_credit`) serves the L queue
//! first but gives the C queue `classic_protection` % of the link while both are backlogged.
//! Defaults are Linux's (`dualpi2_reset_default`).
//!
//! Linux arithmetic kept where it changes results:
//! * the probability is a u32 with `MAX_PROB` = 2^32 − 1 standing for 1; a draw succeeds when
//!   a uniform u32 is ≤ the probability (`dualpi2_roll`);
//! * α and β are given in Hz with tc's 1/256 resolution (tc truncates `alpha·256`; Linux's
//!   defaults are 41/256 = 0.16015625 Hz and 819/256 = 3.19921875 Hz), scaled once to
//!   probability per 64 ns of delay (`dualpi2_scale_alpha_beta`: ⌊⌊v·MAX_PROB / 4⌋ / 10^9⌋,
//!   44 and 879 for the defaults); an update adds `((qdelay − target)·α + (qdelay −
//!   qdelay_old)·β) / 64` in s64 and u32 arithmetic, wrapping as Linux's does, with its
//!   overflow and underflow guards (saturating at 1 and 0);
//! * `drop_overload` off caps p' at 1/k (`MAX_PROB / k`);
//! * overload is k·p' > 1: then C packets are dropped with (p')² whatever their codepoint,
//!   and L packets, with `drop_overload`, dropped with (p')² and otherwise marked;
//! * no mark or drop while the backlog (both queues, bytes) is under 2 MTU (`ctx.mtu`; Linux
//!   `psched_mtu` adds the link header); at dequeue the backlog is counted without the packet
//!   being decided on, at enqueue before the arrival;
//! * the scheduler's credit starts at MTU·(wc − wl) and is reset when both queues are empty;
//!   an L packet sent while C is backlogged adds wc·len, a C packet sent while L is
//!   backlogged subtracts wl·len, and the L queue is served while the credit is ≤ 0; a
//!   packet dropped at dequeue does not change the credit;
//! * the step threshold is a time (sojourn > threshold, ns) or, with `step_thresh_packets`,
//!   the L queue's length after the packet left; `min_qlen_step` withholds the step from
//!   packets that arrived to an L queue shorter than it.
//!
//! The PI timer (which runs whether or not packets are queued) is caught up lazily: at each
//! enqueue or dequeue at `now`, every update due at or before `now` runs in order against
//! the queues' heads of that interval (constant between events). As for PIE, the queue is
//! taken to exist before the run: updates fall every `tupdate` from t = 0 on an exact grid
//! (Linux re-arms the hrtimer `tupdate` after each run), and a long idle period stops at a
//! fixed point (p' = 0 and both delays 0).
//!
//! Left out: Linux's limits (10000 packets and `memory_limit` in skb truesize) — the limit
//! here is the link's buffer, in packets or bytes, shared by both queues and checked before
//! classification (`QDISC_DROP_OVERLIMIT`, reported as a tail drop); tc filters and
//! `skb->priority` classification (and so the "LLLL" class and the drop of Not-ECT packets
//! in the L queue, which only filters can put there); GSO splitting (tcplab packets are
//! single segments); the `max_rtt`/`typical_rtt` auto-configuration of tc (set `target_ms`,
//! `tupdate_ms`, `alpha`, `beta` instead). ns-3 3.44 has no DualPI2 queue disc (it exists
//! only in out-of-tree forks), so there is no ns-3 counterpart.

use super::{check_ms, Discipline, DropReason, DropSink, ParamDoc, Queue, QueueContext, QueueLimit, LINUX_MAX_MS};
use crate::sojourn::SojournStats;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use tcplab_core::{Ecn, Packet, SimDuration, SimRng, SimTime};

/// Probability 1 (Linux `MAX_PROB` = U32_MAX).
const MAX_PROB: u32 = u32::MAX;
/// tc's unit of α and β: 1/256 Hz (`ALPHA_BETA_SCALE`).
const ALPHA_BETA_SCALE: f64 = 256.0;
/// The largest α or β Linux takes, in 1/256 Hz (`ALPHA_BETA_MAX`).
const ALPHA_BETA_MAX: u32 = (1 << 31) - 1;
/// Internal α and β are per 2^6 ns of delay (`ALPHA_BETA_GRANULARITY`), from the netlink
/// 1/256 Hz (`ALPHA_BETA_SHIFT` 8): scaled by 2^(8 − 6).
const ALPHA_BETA_GRANULARITY: u32 = 6;
const ALPHA_BETA_SCALING: u32 = 8 - ALPHA_BETA_GRANULARITY;
/// Weights are percent: wc + wl = 100 (`MAX_WC`).
const MAX_WC: u8 = 100;

/// Which ECN codepoints go to the L queue (tc `l4s_ect` / `any_ect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMask {
    /// ECT(1) and CE (Linux `TC_DUALPI2_ECN_MASK_L4S_ECT`, the default).
    L4sEct,
    /// ECT(0), ECT(1) and CE (`TC_DUALPI2_ECN_MASK_ANY_ECT`), e.g. for DCTCP in a data centre.
    AnyEct,
}

/// Parameters of DualPI2 (Linux `tc qdisc ... dualpi2` options; the limit is the link's buffer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DualPi2Config {
    /// Target queue delay of the PI controller (RFC 9332 §2.5.1 target).
    pub target_ms: f64,
    /// Interval between probability updates (RFC 9332 Tupdate).
    pub tupdate_ms: f64,
    /// Integral gain, Hz, in steps of 1/256 (tc truncates; Linux 41/256 ≈ 0.16).
    pub alpha: f64,
    /// Proportional gain, Hz, in steps of 1/256 (tc truncates; Linux 819/256 ≈ 3.2).
    pub beta: f64,
    /// Coupling factor k: the L queue marks with k·p' (RFC 9332 §2.4).
    pub coupling_factor: u8,
    /// L4S step marking: mark L packets that waited longer than this.
    pub step_thresh_ms: f64,
    /// 0 = the step threshold is `step_thresh_ms`; > 0 = it is this many packets of L queue
    /// (tc `step_thresh Np`), and `step_thresh_ms` must stay at its default.
    pub step_thresh_packets: u32,
    /// No step marking for packets that arrived to an L queue shorter than this (packets).
    pub min_qlen_step: u32,
    /// The C queue's share of the link while both queues are backlogged (WRR weight), percent.
    pub classic_protection: u8,
    /// Which codepoints go to the L queue.
    pub ecn_mask: EcnMask,
    /// On overload (k·p' > 1), drop L packets with (p')² too (true) or keep marking them (false).
    pub drop_overload: bool,
    /// Decide drops and marks at enqueue (true) instead of dequeue (false, Linux's default).
    pub drop_early: bool,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            target_ms: 15.0,
            tupdate_ms: 16.0,
            alpha: 41.0 / ALPHA_BETA_SCALE,
            beta: 819.0 / ALPHA_BETA_SCALE,
            coupling_factor: 2,
            step_thresh_ms: 1.0,
            step_thresh_packets: 0,
            min_qlen_step: 0,
            classic_protection: 10,
            ecn_mask: EcnMask::L4sEct,
            drop_overload: true,
            drop_early: false,
        }
    }
}

impl Discipline for DualPi2Config {
    const NAME: &'static str = "dualpi2";
    const SUMMARY: &'static str =
        "DualPI2, Linux sch_dualpi2 (RFC 9332): coupled L4S and classic queues, p_C = p'², p_L = max(k·p', step)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "target_ms", unit: "ms", doc: "target queue delay of the PI controller" },
        ParamDoc { name: "tupdate_ms", unit: "ms", doc: "interval between probability updates" },
        ParamDoc { name: "alpha", unit: "Hz", doc: "integral gain, steps of 1/256 (Linux 41/256)" },
        ParamDoc { name: "beta", unit: "Hz", doc: "proportional gain, steps of 1/256 (Linux 819/256)" },
        ParamDoc { name: "coupling_factor", unit: "", doc: "k: L marking probability k·p' (1 to 255)" },
        ParamDoc { name: "step_thresh_ms", unit: "ms", doc: "mark L packets that waited longer than this" },
        ParamDoc { name: "step_thresh_packets", unit: "packets", doc: "0 = step threshold in time; > 0 = in L queue packets" },
        ParamDoc { name: "min_qlen_step", unit: "packets", doc: "no step mark for arrivals to an L queue shorter than this" },
        ParamDoc { name: "classic_protection", unit: "%", doc: "C queue's WRR share while both queues are backlogged" },
        ParamDoc { name: "ecn_mask", unit: "", doc: "L queue codepoints: \"l4s_ect\" (ECT(1), CE) or \"any_ect\"" },
        ParamDoc { name: "drop_overload", unit: "", doc: "on overload drop L packets with p'² (else keep marking)" },
        ParamDoc { name: "drop_early", unit: "", doc: "decide at enqueue instead of dequeue" },
    ];

    fn validate(&self, _ctx: &QueueContext) -> Result<(), String> {
        check_ms("target_ms", self.target_ms, Some("no standing delay"), LINUX_MAX_MS)?;
        check_ms("tupdate_ms", self.tupdate_ms, None, LINUX_MAX_MS)?;
        check_ms("step_thresh_ms", self.step_thresh_ms, Some("mark every L packet that waited"), LINUX_MAX_MS)?;
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            let units = v * ALPHA_BETA_SCALE;
            if !(units >= 1.0 && units <= f64::from(ALPHA_BETA_MAX)) {
                return Err(format!("{name}: {v} is out of range; allowed: 1/256 = 0.00390625 to {} Hz", f64::from(ALPHA_BETA_MAX) / 256.0));
            }
        }
        if self.coupling_factor == 0 {
            return Err("coupling_factor: 0 is out of range; allowed: 1 to 255".into());
        }
        if self.classic_protection > MAX_WC {
            return Err(format!("classic_protection: {} is out of range; allowed: 0 to 100 %", self.classic_protection));
        }
        if self.step_thresh_packets > 0 && self.step_thresh_ms != DualPi2Config::default().step_thresh_ms {
            return Err("step_thresh_packets: set together with step_thresh_ms; allowed: one of the two (Linux takes a single step threshold)".into());
        }
        Ok(())
    }

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        Box::new(DualPi2Queue::new(self, ctx))
    }
}

/// Whole microseconds of `ms` in ns, as tc hands times to Linux.
fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1000.0).round() as u64 * 1000
}

/// Linux `dualpi2_scale_alpha_beta` of a gain in Hz (tc's truncation to 1/256 Hz first).
fn scale_alpha_beta(hz: f64) -> u32 {
    let units = (hz * ALPHA_BETA_SCALE) as u64;
    (((units * u64::from(MAX_PROB)) >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32
}

/// When an L packet is step-marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepThreshold {
    /// It waited longer than this.
    Sojourn(SimDuration),
    /// More than this many packets remain in the L queue after it left.
    Packets(u32),
}

/// The fixed parameters, in Linux's units.
#[derive(Debug)]
struct Params {
    /// Target delay, ns.
    target: u64,
    /// α and β in probability per 64 ns of delay.
    alpha: u32,
    beta: u32,
    coupling: u8,
    step: StepThreshold,
    min_qlen_step: u32,
    /// Codepoints of the L queue as Linux's mask of the two ECN bits.
    ecn_mask: u8,
    drop_overload: bool,
    drop_early: bool,
    /// WRR weights, percent.
    wc: i64,
    wl: i64,
    /// Credit when the scheduler starts or both queues empty: MTU·(wc − wl).
    credit_init: i64,
    limit: QueueLimit,
    mtu: u64,
}

/// Which queue a packet belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Classic,
    L4s,
}

#[derive(Debug)]
pub struct DualPi2Queue {
    p: Params,
    /// The L queue, with whether each packet may be step-marked (`apply_step`).
    l: VecDeque<(Packet, bool)>,
    c: VecDeque<Packet>,
    /// Bytes in both queues (Linux `sch->qstats.backlog`).
    bytes: u64,
    /// Base probability p' (`pi2_prob`).
    prob: u32,
    /// The delay of the previous update, ns (`last_qdelay`).
    last_qdelay: u64,
    /// WRR credit: ≤ 0 serves L, > 0 serves C (`c_protection_credit`).
    credit: i64,
    rng: SimRng,
    tupdate: SimDuration,
    /// When the next update is due.
    next_update: SimTime,
    /// How long the packets sent from the L queue waited.
    l_sojourn: SojournStats,
    /// Updates computed (not skipped at a fixed point).
    #[cfg(test)]
    updates: u64,
}

impl DualPi2Queue {
    fn new(c: &DualPi2Config, ctx: QueueContext) -> Self {
        let wc = i64::from(c.classic_protection);
        let wl = i64::from(MAX_WC) - wc;
        let mtu = u64::from(ctx.mtu);
        let step = if c.step_thresh_packets > 0 {
            StepThreshold::Packets(c.step_thresh_packets)
        } else {
            StepThreshold::Sojourn(SimDuration::from_nanos(ms_to_ns(c.step_thresh_ms)))
        };
        let p = Params {
            target: ms_to_ns(c.target_ms),
            alpha: scale_alpha_beta(c.alpha),
            beta: scale_alpha_beta(c.beta),
            coupling: c.coupling_factor,
            step,
            min_qlen_step: c.min_qlen_step,
            ecn_mask: match c.ecn_mask {
                EcnMask::L4sEct => 0b01,
                EcnMask::AnyEct => 0b11,
            },
            drop_overload: c.drop_overload,
            drop_early: c.drop_early,
            wc,
            wl,
            credit_init: mtu as i64 * (wc - wl),
            limit: ctx.limit,
            mtu,
        };
        let tupdate = SimDuration::from_nanos(ms_to_ns(c.tupdate_ms));
        DualPi2Queue {
            credit: p.credit_init,
            p,
            l: VecDeque::new(),
            c: VecDeque::new(),
            bytes: 0,
            prob: 0,
            last_qdelay: 0,
            rng: ctx.rng,
            tupdate,
            next_update: SimTime::ZERO + tupdate,
            l_sojourn: SojournStats::default(),
            #[cfg(test)]
            updates: 0,
        }
    }

    /// Linux `dualpi2_skb_classify` by codepoint: the two ECN bits (ECT(0) 10, ECT(1) 01,
    /// CE 11) against the mask.
    fn classify(&self, ecn: Ecn) -> Class {
        let bits = match ecn {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        };
        if bits & self.p.ecn_mask != 0 {
            Class::L4s
        } else {
            Class::Classic
        }
    }

    fn fits(&self, pkt: &Packet) -> bool {
        match self.p.limit {
            QueueLimit::Packets(n) => self.len_packets() < n,
            QueueLimit::Bytes(b) => self.bytes + u64::from(pkt.size) <= b,
        }
    }

    /// Runs every update due at or before `now`, in order (Linux `dualpi2_timer`). With both
    /// queues empty an update depends on the state alone, so once one leaves the state
    /// unchanged (p' = 0 after the decay, the delay 0) the rest before `now` are skipped.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            let before = (self.prob, self.last_qdelay);
            self.calculate_probability(self.next_update);
            self.next_update += self.tupdate;
            let idle = self.l.is_empty() && self.c.is_empty();
            if idle && (self.prob, self.last_qdelay) == before && self.next_update <= now {
                let missed = (now - self.next_update).as_nanos() / self.tupdate.as_nanos() + 1;
                self.next_update += self.tupdate.saturating_mul(missed);
            }
        }
    }

    /// Linux `calculate_probability` at time `at`: the larger head-of-line delay of the two
    /// queues against the target and against the previous update's.
    fn calculate_probability(&mut self, at: SimTime) {
        #[cfg(test)]
        {
            self.updates += 1;
        }
        let head_delay = |enqueued_at: Option<SimTime>| enqueued_at.map_or(0, |t| at.saturating_since(t).as_nanos());
        let qdelay_l = head_delay(self.l.front().map(|(pkt, _)| pkt.enqueued_at));
        let qdelay_c = head_delay(self.c.front().map(|pkt| pkt.enqueued_at));
        let qdelay = qdelay_l.max(qdelay_c);
        let p = &self.p;
        // s64 products, wrapping as the kernel's (built with -fno-strict-overflow) would for
        // delays above ~4 s with the largest gains.
        let delta = (qdelay as i64)
            .wrapping_sub(p.target as i64)
            .wrapping_mul(i64::from(p.alpha))
            .wrapping_add((qdelay as i64).wrapping_sub(self.last_qdelay as i64).wrapping_mul(i64::from(p.beta)));
        self.last_qdelay = qdelay;
        let prob = u64::from(self.prob);
        // `__scale_delta(delta) + prob` and `prob - __scale_delta(-delta)` are s64, stored in
        // the u32 `new_prob`: truncated, then the guards catch the wrap-around.
        let new_prob = if delta > 0 {
            let up = (prob.wrapping_add(delta as u64 >> ALPHA_BETA_GRANULARITY)) as u32;
            if up < self.prob {
                MAX_PROB
            } else {
                up
            }
        } else {
            let down = prob.wrapping_sub(delta.unsigned_abs() >> ALPHA_BETA_GRANULARITY) as u32;
            if down > self.prob {
                0
            } else {
                down
            }
        };
        self.prob = if p.drop_overload { new_prob } else { new_prob.min(MAX_PROB / u32::from(p.coupling)) };
    }

    /// Linux `dualpi2_roll`: a uniform u32 ≤ `prob`.
    fn roll(&mut self, prob: u32) -> bool {
        ((self.rng.next_u64() >> 32) as u32) <= prob
    }

    /// Linux `must_drop` (with `dualpi2_classic_marking` and `dualpi2_scalable_marking`):
    /// true to drop `pkt`, which may have been CE-marked instead. `backlog`: bytes queued
    /// besides `pkt`.
    fn must_drop(&mut self, pkt: &mut Packet, class: Class, backlog: u64, sink: &mut DropSink) -> bool {
        if backlog < 2 * self.p.mtu {
            return false;
        }
        let prob = self.prob;
        let l_prob = u64::from(prob) * u64::from(self.p.coupling);
        let overload = l_prob > u64::from(MAX_PROB);
        let classic_hit = |q: &mut Self| q.roll(prob) && q.roll(prob);
        match class {
            Class::Classic => {
                if classic_hit(self) {
                    if overload || pkt.ecn == Ecn::NotEct {
                        return true;
                    }
                    sink.ce_mark(pkt);
                }
                false
            }
            Class::L4s if overload => {
                if self.p.drop_overload && classic_hit(self) {
                    return true;
                }
                sink.ce_mark(pkt);
                false
            }
            Class::L4s => {
                if self.roll(l_prob as u32) {
                    sink.ce_mark(pkt);
                }
                false
            }
        }
    }

    /// Linux `dequeue_packet`: the next packet by the WRR credit, with the credit change its
    /// sending would make.
    fn pick(&mut self) -> Option<(Packet, Class, bool, i64)> {
        let serve_l = !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0);
        let (pkt, class, apply_step, weight) = if serve_l {
            let (pkt, apply_step) = self.l.pop_front().expect("L queue not empty");
            (pkt, Class::L4s, apply_step, if self.c.is_empty() { 0 } else { self.p.wc })
        } else if let Some(pkt) = self.c.pop_front() {
            (pkt, Class::Classic, false, if self.l.is_empty() { 0 } else { -self.p.wl })
        } else {
            self.credit = self.p.credit_init;
            return None;
        };
        self.bytes -= u64::from(pkt.size);
        Some((pkt, class, apply_step, weight * i64::from(pkt.size)))
    }

    /// Linux `do_step_aqm` for an L packet leaving at `now`.
    fn step_mark(&self, pkt: &mut Packet, apply_step: bool, now: SimTime, sink: &mut DropSink) {
        let over = match self.p.step {
            StepThreshold::Sojourn(t) => now.saturating_since(pkt.enqueued_at) > t,
            StepThreshold::Packets(n) => self.l.len() as u64 > u64::from(n),
        };
        if apply_step && over {
            sink.ce_mark(pkt);
        }
    }
}

impl Queue for DualPi2Queue {
    fn enqueue(&mut self, mut pkt: Packet, now: SimTime, sink: &mut DropSink) {
        self.catch_up(now);
        let class = self.classify(pkt.ecn);
        if !self.fits(&pkt) {
            sink.drop(pkt, DropReason::Tail);
            return;
        }
        if self.p.drop_early && self.must_drop(&mut pkt, class, self.bytes, sink) {
            sink.drop(pkt, DropReason::Aqm);
            return;
        }
        pkt.enqueued_at = now;
        self.bytes += u64::from(pkt.size);
        match class {
            Class::L4s => {
                let apply_step = self.l.len() as u64 >= u64::from(self.p.min_qlen_step);
                self.l.push_back((pkt, apply_step));
            }
            Class::Classic => self.c.push_back(pkt),
        }
    }

    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        self.catch_up(now);
        while let Some((mut pkt, class, apply_step, credit_change)) = self.pick() {
            if !self.p.drop_early && self.must_drop(&mut pkt, class, self.bytes, sink) {
                sink.drop(pkt, DropReason::Aqm);
                continue;
            }
            if class == Class::L4s {
                self.step_mark(&mut pkt, apply_step, now, sink);
                self.l_sojourn.add(now.saturating_since(pkt.enqueued_at));
            }
            self.credit += credit_change;
            return Some(pkt);
        }
        None
    }

    fn len_packets(&self) -> u32 {
        (self.l.len() + self.c.len()) as u32
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn l4s_sojourn(&self) -> Option<&SojournStats> {
        Some(&self.l_sojourn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::DataHeader;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    /// A 1500-byte data packet with `ecn`.
    fn pkt(seq: u32, ecn: Ecn) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq, payload: 1448, tsval: SimTime::ZERO, cwr: false, psh: false }, ecn)
    }

    fn queue_with(cfg: &DualPi2Config, limit: QueueLimit) -> DualPi2Queue {
        DualPi2Queue::new(cfg, QueueContext::for_tests(limit, None))
    }

    /// Default parameters, 1000 packets, the probability frozen at `prob` (no updates).
    fn frozen(cfg: &DualPi2Config, prob: u32) -> DualPi2Queue {
        let mut q = queue_with(cfg, QueueLimit::Packets(1000));
        q.next_update = SimTime::MAX;
        q.prob = prob;
        q
    }

    fn p(fraction: f64) -> u32 {
        (f64::from(MAX_PROB) * fraction) as u32
    }

    #[test]
    fn gains_are_scaled_as_linux_from_tcs_1_256_hz() {
        // 41·(2^32 − 1) = 176093659095, >> 2 = 44023414773, / 10^9 = 44;
        // 819·(2^32 − 1) = 3517578214605, >> 2 = 879394553651, / 10^9 = 879.
        let q = queue_with(&DualPi2Config::default(), QueueLimit::Packets(10));
        assert_eq!((q.p.alpha, q.p.beta), (44, 879));
        // tc truncates 0.16·256 = 40.96 to 40: 171798691800 >> 2 = 42949672950 → 42.
        assert_eq!(scale_alpha_beta(0.16), 42);
        // Credit starts at MTU·(wc − wl) = 1500·(10 − 90): the L queue goes first.
        assert_eq!(q.credit, -120_000);
    }

    #[test]
    fn one_pi_update_from_given_delays_then_decay_to_zero() {
        let mut q = queue_with(&DualPi2Config::default(), QueueLimit::Packets(100));
        let mut sink = DropSink::default();
        q.enqueue(pkt(0, Ecn::NotEct), ms(0), &mut sink);
        q.enqueue(pkt(1, Ecn::Ect1), ms(10), &mut sink);
        // The first update at tupdate = 16 ms: C head 16 ms, L head 6 ms, so qdelay = 16 ms:
        // (16e6 − 15e6)·44 + (16e6 − 0)·879 = 44e6 + 14064e6 = 14108e6 (per 64 ns) → 220437500.
        q.catch_up(ms(16));
        assert_eq!((q.prob, q.last_qdelay, q.updates), (220_437_500, 16_000_000, 1));
        // At 32 ms (nothing happened): 17e6·44 + 16e6·879 = 14812e6 → +231437500.
        q.catch_up(ms(47));
        assert_eq!((q.prob, q.last_qdelay, q.updates, q.next_update), (451_875_000, 32_000_000, 2, ms(48)));
        // p' ≈ 0.1052: the classic probability is p'² ≈ 0.0111, the L4S one k·p' ≈ 0.2104
        // (RFC 9332 §2.4), drawn as two rolls of p' and one of 2·p' (tested below).
        let base = f64::from(q.prob) / f64::from(MAX_PROB);
        assert!((base - 0.105_211).abs() < 1e-6, "{base}");
        // Both leave at 40 ms (backlog under 2 MTU: no drop); the empty queues' delay is 0:
        // −15e6·44 − 32e6·879 = −28788e6 → −449812500, leaving 2062500; the next update
        // takes −15e6·44 = −660e6 → −10312500, below 0: the underflow guard gives 0.
        assert!(q.dequeue(ms(40), &mut sink).is_some() && q.dequeue(ms(40), &mut sink).is_some());
        q.catch_up(ms(48));
        assert_eq!((q.prob, q.last_qdelay), (2_062_500, 0));
        q.catch_up(ms(64));
        assert_eq!(q.prob, 0);
        assert_eq!(sink.drops(), 0);
    }

    #[test]
    fn saturates_at_one_and_is_capped_at_one_over_k_without_drop_overload() {
        for (drop_overload, cap) in [(true, MAX_PROB), (false, MAX_PROB / 2)] {
            let cfg = DualPi2Config { drop_overload, ..DualPi2Config::default() };
            let mut q = queue_with(&cfg, QueueLimit::Packets(100));
            q.prob = MAX_PROB - 10;
            q.enqueue(pkt(0, Ecn::NotEct), ms(0), &mut DropSink::default());
            // 16 ms of delay adds 220437500 (above): past 2^32 − 1, the overflow guard.
            q.catch_up(ms(16));
            assert_eq!(q.prob, cap, "drop_overload = {drop_overload}");
        }
    }

    /// How many of `n` packets of `ecn` (a queue of 1 MB behind them) are (marked, dropped).
    fn decide(q: &mut DualPi2Queue, ecn: Ecn, n: u32) -> (u32, u32) {
        let (mut marked, mut dropped) = (0, 0);
        for i in 0..n {
            let mut sink = DropSink::default();
            let mut packet = pkt(i, ecn);
            let class = q.classify(ecn);
            if q.must_drop(&mut packet, class, 1_000_000, &mut sink) {
                dropped += 1;
            }
            marked += sink.ce_marks as u32;
        }
        (marked, dropped)
    }

    #[test]
    fn classic_probability_is_p_squared_and_l4s_probability_k_times_p() {
        // p' = 0.2 over 100000 packets each: p_C = 0.04 → 4000 (σ ≈ 62), p_CL = 2·0.2 = 0.4
        // → 40000 (σ ≈ 155); with k = 3, 0.6 → 60000. Bounds are about 4σ.
        let mut q = frozen(&DualPi2Config::default(), p(0.2));
        let (marked, dropped) = decide(&mut q, Ecn::Ect0, 100_000);
        assert!(dropped == 0 && (3_750..4_250).contains(&marked), "C ECT(0): {marked} marked");
        let (marked, dropped) = decide(&mut q, Ecn::NotEct, 100_000);
        assert!(marked == 0 && (3_750..4_250).contains(&dropped), "C Not-ECT: {dropped} dropped");
        let (marked, dropped) = decide(&mut q, Ecn::Ect1, 100_000);
        assert!(dropped == 0 && (39_400..40_600).contains(&marked), "L ECT(1): {marked} marked");
        let mut q = frozen(&DualPi2Config { coupling_factor: 3, ..DualPi2Config::default() }, p(0.2));
        let (marked, _) = decide(&mut q, Ecn::Ect1, 100_000);
        assert!((59_400..60_600).contains(&marked), "k = 3: {marked} marked");
        // A CE arrival in the L queue counts as marked, not as a new mark.
        let (marked, dropped) = decide(&mut q, Ecn::Ce, 1000);
        assert_eq!((marked, dropped), (0, 0));
    }

    #[test]
    fn overload_drops_instead_of_marking() {
        // p' = 0.75, k = 2: k·p' = 1.5 > 1. C packets hit with p'² = 0.5625 are dropped even
        // if ECT; L packets too with drop_overload (the rest marked), and all are marked
        // without it. 10000 packets: 5625 (σ ≈ 50).
        let mut q = frozen(&DualPi2Config::default(), p(0.75));
        let (marked, dropped) = decide(&mut q, Ecn::Ect0, 10_000);
        assert!(marked == 0 && (5_425..5_825).contains(&dropped), "C ECT(0): {dropped} dropped");
        let (marked, dropped) = decide(&mut q, Ecn::Ect1, 10_000);
        assert!((5_425..5_825).contains(&dropped) && marked + dropped == 10_000, "L: {dropped} dropped, {marked} marked");
        let mut q = frozen(&DualPi2Config { drop_overload: false, ..DualPi2Config::default() }, p(0.75));
        assert_eq!(decide(&mut q, Ecn::Ect1, 10_000), (10_000, 0));
        // Just under overload (p' = 0.5 − 1/2^32: k·p' ≤ 1) L packets are marked, not dropped.
        let mut q = frozen(&DualPi2Config::default(), MAX_PROB / 2);
        let (marked, dropped) = decide(&mut q, Ecn::Ect1, 1000);
        assert!(dropped == 0 && marked > 990, "{marked}");
    }

    #[test]
    fn no_mark_or_drop_under_two_mtus_of_backlog() {
        let mut q = frozen(&DualPi2Config::default(), MAX_PROB);
        let mut sink = DropSink::default();
        let mut packet = pkt(0, Ecn::NotEct);
        assert!(!q.must_drop(&mut packet, Class::Classic, 2999, &mut sink));
        assert!(q.must_drop(&mut packet, Class::Classic, 3000, &mut sink));
        // At dequeue the backlog is counted without the packet leaving: two 1500-byte
        // packets leave untouched at p' = 1, the first of three is dropped.
        for i in 0..2 {
            q.enqueue(pkt(i, Ecn::NotEct), ms(0), &mut sink);
        }
        assert!(q.dequeue(ms(1), &mut sink).is_some() && q.dequeue(ms(1), &mut sink).is_some());
        assert_eq!(sink.drops(), 0);
        for i in 0..3 {
            q.enqueue(pkt(i, Ecn::NotEct), ms(1), &mut sink);
        }
        assert!(q.dequeue(ms(2), &mut sink).is_some());
        assert_eq!((sink.aqm, q.len_packets(), q.len_bytes()), (1, 1, 1500));
    }

    #[test]
    fn packets_are_classified_by_codepoint() {
        use Ecn::*;
        for (mask, l) in [(EcnMask::L4sEct, vec![Ect1, Ce]), (EcnMask::AnyEct, vec![Ect0, Ect1, Ce])] {
            let mut q = frozen(&DualPi2Config { ecn_mask: mask, ..DualPi2Config::default() }, 0);
            for (i, ecn) in [NotEct, Ect0, Ect1, Ce].into_iter().enumerate() {
                q.enqueue(pkt(i as u32, ecn), ms(0), &mut DropSink::default());
            }
            let in_l: Vec<Ecn> = q.l.iter().map(|(p, _)| p.ecn).collect();
            assert_eq!(in_l, l, "{mask:?}");
            assert_eq!(q.len_packets(), 4);
        }
    }

    #[test]
    fn step_marks_l_packets_that_waited_longer_than_the_threshold() {
        let mut q = frozen(&DualPi2Config::default(), 0);
        let mut sink = DropSink::default();
        for i in 0..3 {
            q.enqueue(pkt(i, Ecn::Ect1), ms(0), &mut sink);
        }
        q.enqueue(pkt(3, Ecn::Ect0), ms(0), &mut sink);
        // Exactly 1 ms is not above the threshold; 1 ms + 1 ns is. C packets never are.
        let leave = |q: &mut DualPi2Queue, at: SimTime, sink: &mut DropSink| q.dequeue(at, sink).unwrap().ecn;
        assert_eq!(leave(&mut q, ms(1), &mut sink), Ecn::Ect1);
        assert_eq!(leave(&mut q, ms(1) + SimDuration::from_nanos(1), &mut sink), Ecn::Ce);
        assert_eq!(leave(&mut q, ms(5), &mut sink), Ecn::Ce);
        assert_eq!(leave(&mut q, ms(5), &mut sink), Ecn::Ect0);
        assert_eq!(sink.ce_marks, 2);
        // The L queue's own sojourns: 1 ms, 1 ms + 1 ns, 5 ms.
        let l = q.l4s_sojourn().unwrap();
        assert_eq!((l.count, l.sum_ns), (3, 7_000_001));

        // In packets (2): marked while more than 2 remain after it left. min_qlen_step 1:
        // the first arrival (to an empty L queue) is never step-marked.
        let cfg = DualPi2Config { step_thresh_packets: 2, min_qlen_step: 1, ..DualPi2Config::default() };
        let mut q = frozen(&cfg, 0);
        for i in 0..5 {
            q.enqueue(pkt(i, Ecn::Ect1), ms(0), &mut sink);
        }
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(ms(100), &mut sink)).map(|p| p.ecn).collect();
        // Remaining after each: 4 (but not eligible), 3, 2, 1, 0.
        assert_eq!(ecns, [Ecn::Ect1, Ecn::Ce, Ecn::Ect1, Ecn::Ect1, Ecn::Ect1]);
    }

    #[test]
    fn scheduler_gives_the_classic_queue_its_weight_when_both_are_backlogged() {
        // wc = 10 %: credit −120000; each L packet adds 10·1500, each C packet takes 90·1500:
        // 9 L packets bring it from −120000 to 15000 > 0, one C packet back to −120000.
        let mut q = frozen(&DualPi2Config::default(), 0);
        let mut sink = DropSink::default();
        for i in 0..100 {
            q.enqueue(pkt(i, Ecn::Ect1), ms(0), &mut sink);
            q.enqueue(pkt(i, Ecn::NotEct), ms(0), &mut sink);
        }
        let order: String =
            (0..100).map(|_| if q.dequeue(ms(1), &mut sink).unwrap().ecn == Ecn::Ect1 { 'L' } else { 'C' }).collect();
        assert_eq!(&order[..20], "LLLLLLLLLCLLLLLLLLLC");
        assert_eq!(order.matches('C').count(), 10);
        // 50 %: credit 0 → L (+75000), C (−75000), …: alternating.
        let mut q = frozen(&DualPi2Config { classic_protection: 50, ..DualPi2Config::default() }, 0);
        for i in 0..5 {
            q.enqueue(pkt(i, Ecn::Ect1), ms(0), &mut sink);
            q.enqueue(pkt(i, Ecn::NotEct), ms(0), &mut sink);
        }
        let order: String = std::iter::from_fn(|| q.dequeue(ms(1), &mut sink))
            .map(|p| if p.ecn == Ecn::Ect1 { 'L' } else { 'C' })
            .collect();
        assert_eq!(order, "LCLCLCLCLC");
        // Packets sent while the other queue is empty change nothing; both empty resets.
        assert_eq!(q.credit, 0);
        assert_eq!(sink.drops(), 0);
    }

    #[test]
    fn the_link_buffer_is_the_shared_limit() {
        let mut q = queue_with(&DualPi2Config::default(), QueueLimit::Packets(3));
        let mut sink = DropSink::default();
        for (i, ecn) in [Ecn::Ect1, Ecn::Ect1, Ecn::NotEct, Ecn::Ect1, Ecn::NotEct].into_iter().enumerate() {
            q.enqueue(pkt(i as u32, ecn), ms(0), &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.len_bytes()), (2, 3, 4500));
        let mut q = queue_with(&DualPi2Config::default(), QueueLimit::Bytes(3100));
        for i in 0..3 {
            q.enqueue(pkt(i, Ecn::Ect1), ms(0), &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.len_bytes()), (3, 2, 3000));
        assert_eq!(q.dequeue(ms(1), &mut sink).unwrap().enqueued_at, ms(0));
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1500));
    }

    #[test]
    fn drop_early_decides_at_enqueue() {
        let cfg = DualPi2Config { drop_early: true, ..DualPi2Config::default() };
        let mut q = frozen(&cfg, MAX_PROB);
        let mut sink = DropSink::default();
        // Backlog before the arrival: 0, 1500, 3000 (≥ 2 MTU: the third is dropped).
        for i in 0..3 {
            q.enqueue(pkt(i, Ecn::NotEct), ms(0), &mut sink);
        }
        assert_eq!((sink.aqm, q.len_packets()), (1, 2));
        // Nothing is decided at dequeue.
        assert!(q.dequeue(ms(1), &mut sink).is_some());
        assert_eq!(sink.aqm, 1);
    }

    #[test]
    fn an_idle_hour_ends_at_the_same_fixed_point_as_every_update_run() {
        let set = |q: &mut DualPi2Queue| (q.prob, q.last_qdelay) = (MAX_PROB / 2, 40_000_000);
        let (mut lazy, mut every) =
            (queue_with(&DualPi2Config::default(), QueueLimit::Packets(10)), queue_with(&DualPi2Config::default(), QueueLimit::Packets(10)));
        set(&mut lazy);
        set(&mut every);
        let hour = ms(3_600_000);
        lazy.catch_up(hour);
        while every.next_update <= hour {
            every.calculate_probability(every.next_update);
            every.next_update += every.tupdate;
        }
        assert_eq!(every.updates, 225_000);
        assert!(lazy.updates < 1_000, "{} updates computed", lazy.updates);
        assert_eq!((lazy.prob, lazy.last_qdelay, lazy.next_update), (every.prob, every.last_qdelay, every.next_update));
        assert_eq!(lazy.prob, 0);
    }

    #[test]
    fn validate_names_the_parameter_and_what_is_allowed() {
        let ctx = QueueContext::for_tests(QueueLimit::Packets(100), None);
        let check = |c: DualPi2Config| c.validate(&ctx);
        let d = DualPi2Config::default;
        assert_eq!(check(d()), Ok(()));
        assert_eq!(check(DualPi2Config { target_ms: 0.0, step_thresh_ms: 0.0, classic_protection: 100, ..d() }), Ok(()));
        let range = "0.001 to 4294967.295 ms";
        assert_eq!(
            check(DualPi2Config { target_ms: -1.0, ..d() }),
            Err(format!("target_ms: -1 is out of range; allowed: 0 (no standing delay) or {range}"))
        );
        assert_eq!(check(DualPi2Config { tupdate_ms: 0.0, ..d() }), Err(format!("tupdate_ms: 0 is out of range; allowed: {range}")));
        assert_eq!(
            check(DualPi2Config { step_thresh_ms: f64::NAN, ..d() }),
            Err(format!("step_thresh_ms: NaN is out of range; allowed: 0 (mark every L packet that waited) or {range}"))
        );
        let gain = "allowed: 1/256 = 0.00390625 to 8388607.99609375 Hz";
        assert_eq!(check(DualPi2Config { alpha: 0.001, ..d() }), Err(format!("alpha: 0.001 is out of range; {gain}")));
        assert_eq!(check(DualPi2Config { beta: -1.0, ..d() }), Err(format!("beta: -1 is out of range; {gain}")));
        assert_eq!(check(DualPi2Config { coupling_factor: 0, ..d() }), Err("coupling_factor: 0 is out of range; allowed: 1 to 255".into()));
        assert_eq!(
            check(DualPi2Config { classic_protection: 101, ..d() }),
            Err("classic_protection: 101 is out of range; allowed: 0 to 100 %".into())
        );
        assert_eq!(check(DualPi2Config { step_thresh_packets: 5, ..d() }), Ok(()));
        assert!(check(DualPi2Config { step_thresh_packets: 5, step_thresh_ms: 2.0, ..d() }).unwrap_err().starts_with("step_thresh_packets: "));
    }
}
