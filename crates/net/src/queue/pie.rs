//! PIE, Proportional Integral controller Enhanced (RFC 8033), as Linux `sch_pie` and
//! `include/net/pie.h` compute it: a drop probability updated every `tupdate` from the queue
//! delay's distance to the target and its trend (`pie_calculate_probability`), applied to
//! arrivals (`pie_drop_early`), with the delay measured at dequeue (`pie_process_dequeue`)
//! from packet timestamps or, with `dq_rate_estimator`, from the backlog and a measured
//! departure rate (Little's law, RFC 8033 §4.3 / §5.2). Defaults are Linux's (`pie_params_init`).
//!
//! Linux arithmetic kept where it changes results:
//! * times in psched ticks (64 ns: `PSCHED_SHIFT` 6), a packet's delay being
//!   `(now >> 6) - (enqueued >> 6)`; target 15 ms = 234375 ticks, burst 150 ms = 2343750;
//! * the probability as a u64 with `MAX_PROB` = 2^56 − 1 standing for 1; α and β in 1/16
//!   (2 and 20), turned into probability per tick as `α·⌊MAX_PROB / 15625000⌋ >> 4`;
//! * RFC 8033 §5.1's auto-tuning the Linux way: below 10 % α and β are halved, then divided
//!   by 4 again for each decade the probability is under 1 %, 0.1 %, …, 0.0001 % (÷2, ÷8, ÷32,
//!   ÷128, ÷512, ÷2048 by shifts, truncating);
//! * an increase above 2 % is cut to 2 % when the probability is ≥ 10 % (§5.5), and 2 % is
//!   added whenever the delay exceeds 250 ms (Linux only, whatever the probability);
//! * with both delays 0 (and not "delay 0 with a backlog"), the probability decays by 1/64
//!   (RFC: ×0.98; Linux: −prob/64, ≈ ×0.984);
//! * the overflow guards only catch u64 wrap-around, so, as in Linux, the probability may
//!   exceed `MAX_PROB` (drop everything eligible) after long overload and must decay back;
//! * derandomisation (RFC 8033 §5.1, Linux `accu_prob`): no drop while the probabilities
//!   accumulated since the last drop are < 0.85, a certain drop at ≥ 8.5, otherwise a draw
//!   `(rnd >> 8) < prob`; any drop (early or at the limit) clears the sum, an ECN mark taken
//!   at ≥ 8.5 does not (Linux);
//! * no early drop while burst allowance remains, while the current delay is < target/2 with
//!   prob < 20 %, or while the backlog (bytes, before the arrival) is < 2 MTU (`ctx.mtu`;
//!   Linux `psched_mtu` adds the link header);
//! * the burst allowance (150 ms) shrinks at each dequeue by the time since the previous
//!   dequeue (Linux; RFC 8033 §4.4 and ns-3 subtract `tupdate` per update instead) and is
//!   restored, with the estimator state and `accu_prob`, by `pie_vars_init` when an update
//!   finds both delays < target/2 and prob 0 (with the estimator: and a measured rate);
//! * `ecn`: an ECN-capable arrival chosen for drop is CE-marked instead while prob ≤ 10 %;
//! * `bytemode`: a packet of at most one MTU is dropped with `size · ⌊prob / mtu⌋`;
//! * the estimator: 16 KiB cycles started once the backlog is ≥ 16 KiB, the rate in
//!   bytes/tick << 8 in a u32, averaged 7/8 old + 1/8 new, delay = `(backlog << 8) / rate`
//!   (u32), so rates under ~0.5 Mbit/s read as 0 and low rates are coarse, as in Linux.
//!
//! The timer (Linux `pie_timer`, which runs whether or not the queue holds packets) is caught
//! up lazily: at each enqueue or dequeue at `now`, every update due at or before `now` runs in
//! order against the backlog of that interval (constant between events), then the event.
//! The queue is taken to exist before the run starts, as a qdisc configured before the
//! traffic does: its timer is already running, so updates fall every `tupdate` from t = 0 on
//! an exact grid (Linux re-arms in jiffies; it arms the first update HZ/2 after `tc qdisc
//! add`, which, with links built at t = 0, would leave slow start of the first 500 ms
//! uncontrolled). A long idle period stops early at a fixed point (see `catch_up`).
//!
//! Left out: Linux's limit is a packet count; here the limit is the link's buffer, in packets
//! or bytes. De-randomisation is always on, as Linux's `accu_prob` (added in 2019), not an
//! option as in ns-3. `max_burst_ms` is a parameter here; Linux fixes 150 ms.
//!
//! ns-3 PieQueueDisc (3.40–3.44) differs: prob forced to 0 while burst allowance remains, the
//! allowance armed at the first arrival reaching its drop test and lowered by `Tupdate` per
//! update with a 1.5 s burst-reset state machine; the low-delay guard on the *previous*
//! update's delay and `≤ 2` packets (or `≤ 2·MeanPktSize` bytes); floating point, decay ×0.98,
//! no 250 ms rule, prob clamped to [0, 1]; derandomisation off by default
//! (`UseDerandomization`); byte scaling `size / MeanPktSize` whenever MaxSize is in bytes;
//! ECN marking while prob < `MarkEcnThreshold` (strict); estimator average ½ old + ½ new and a
//! restart only above the threshold; first update at `Supdate` = 0 s; MaxSize 25 packets.

use super::{check_ms, Discipline, DropReason, DropSink, Fifo, ParamDoc, Queue, QueueContext, LINUX_MAX_MS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::{Ecn, Packet, SimDuration, SimRng, SimTime};

/// Probability 1 (Linux `MAX_PROB` = U64_MAX >> 8).
const MAX_PROB: u64 = u64::MAX >> 8;
/// A psched tick is 2^6 ns (Linux `PSCHED_SHIFT`).
const PSCHED_SHIFT: u32 = 6;
/// Linux `PSCHED_TICKS_PER_SEC`.
const TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
/// Bytes of a rate-measurement cycle (Linux `QUEUE_THRESHOLD`).
const QUEUE_THRESHOLD: u64 = 16384;
/// Fixed-point shift of the departure rate (Linux `PIE_SCALE`).
const PIE_SCALE: u32 = 8;
/// Linux `DTIME_INVALID` and `DQCOUNT_INVALID` (-1 in a u64).
const DTIME_INVALID: u64 = u64::MAX;
const DQCOUNT_INVALID: u64 = u64::MAX;
/// Above this delay an update adds 2 % (Linux: 250 ms in ticks).
const NON_LINEAR_DELAY: u64 = 250_000_000 >> PSCHED_SHIFT;

fn ticks(t: SimTime) -> u64 {
    t.as_nanos() >> PSCHED_SHIFT
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

/// Parameters of PIE (Linux `tc qdisc ... pie` options; the limit is the link's buffer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PieConfig {
    /// Target queue delay (RFC 8033 QDELAY_REF).
    pub target_ms: f64,
    /// Interval between probability updates (RFC 8033 T_UPDATE).
    pub tupdate_ms: f64,
    /// Weight of the delay's distance to the target, per second (0 to 2 in steps of 1/16).
    pub alpha: f64,
    /// Weight of the delay's change since the last update, per second (0 to 2 in steps of 1/16).
    pub beta: f64,
    /// Burst allowance: no early drop for this long after a quiet period (Linux fixes 150 ms).
    pub max_burst_ms: f64,
    /// CE-mark ECN-capable packets instead of dropping them while the probability is ≤ 10 %.
    pub ecn: bool,
    /// Scale each packet's drop probability by its size / MTU.
    pub bytemode: bool,
    /// Queue delay from the backlog and a measured departure rate instead of timestamps.
    pub dq_rate_estimator: bool,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target_ms: 15.0,
            tupdate_ms: 15.0,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ms: 150.0,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
        }
    }
}

impl Discipline for PieConfig {
    const NAME: &'static str = "pie";
    const SUMMARY: &'static str = "PIE, Linux sch_pie (RFC 8033): drop probability from queue delay, updated every tupdate";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "target_ms", unit: "ms", doc: "target queue delay (RFC 8033 QDELAY_REF)" },
        ParamDoc { name: "tupdate_ms", unit: "ms", doc: "interval between probability updates" },
        ParamDoc { name: "alpha", unit: "1/s", doc: "weight of delay − target, 0 to 2 in steps of 1/16 (Linux 2/16)" },
        ParamDoc { name: "beta", unit: "1/s", doc: "weight of the delay's change, 0 to 2 in steps of 1/16 (Linux 20/16)" },
        ParamDoc { name: "max_burst_ms", unit: "ms", doc: "burst allowance after a quiet period (Linux: fixed 150 ms)" },
        ParamDoc { name: "ecn", unit: "", doc: "CE-mark ECN-capable packets instead of dropping while prob ≤ 10 %" },
        ParamDoc { name: "bytemode", unit: "", doc: "scale the drop probability by packet size / MTU" },
        ParamDoc { name: "dq_rate_estimator", unit: "", doc: "delay = backlog / measured departure rate instead of timestamps" },
    ];

    fn validate(&self, _ctx: &QueueContext) -> Result<(), String> {
        check_ms("target_ms", self.target_ms, None, LINUX_MAX_MS)?;
        check_ms("tupdate_ms", self.tupdate_ms, None, LINUX_MAX_MS)?;
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !((0.0..=2.0).contains(&v) && (v * 16.0).fract() == 0.0) {
                return Err(format!("{name}: {v} is out of range; allowed: 0 to 2 in steps of 1/16 = 0.0625 (Linux's unit)"));
            }
        }
        check_ms("max_burst_ms", self.max_burst_ms, Some("no burst allowance"), LINUX_MAX_MS)
    }

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        Box::new(PieQueue::new(self, ctx))
    }
}

/// The fixed parameters, in Linux's units.
#[derive(Debug)]
struct Params {
    /// Target delay, ticks.
    target: u64,
    /// α and β in probability per tick of delay (before auto-tuning).
    alpha: u64,
    beta: u64,
    /// Burst allowance, ticks.
    max_burst: u64,
    ecn: bool,
    bytemode: bool,
    dq_rate_estimator: bool,
    mtu: u32,
}

/// The controller's state (Linux `struct pie_vars`, less the unused `backlog_old`). An
/// update reads only this, the parameters and the backlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Vars {
    /// Queue delay, ticks: the last dequeued packet's (0 if it left the queue empty) or, with
    /// the estimator, the last update's estimate.
    qdelay: u64,
    /// The delay the previous update used, ticks.
    qdelay_old: u64,
    /// Burst allowance left, ticks.
    burst_time: u64,
    /// Last dequeue or start of the rate-measurement cycle, ticks.
    dq_tstamp: u64,
    /// Drop probability, `MAX_PROB` = 1 (may exceed it, as in Linux).
    prob: u64,
    /// Probabilities accumulated since the last drop.
    accu_prob: u64,
    /// Bytes dequeued in the measurement cycle.
    dq_count: u64,
    /// Departure rate, bytes per tick << `PIE_SCALE`.
    avg_dq_rate: u32,
}

impl Vars {
    /// Linux `pie_vars_init` on a zeroed struct.
    fn new(p: &Params) -> Self {
        let mut v = Vars { qdelay: 0, qdelay_old: 0, burst_time: 0, dq_tstamp: 0, prob: 0, accu_prob: 0, dq_count: 0, avg_dq_rate: 0 };
        v.init(p);
        v
    }

    /// Linux `pie_vars_init`: what it leaves alone (delays, probability) stays.
    fn init(&mut self, p: &Params) {
        self.burst_time = p.max_burst;
        self.dq_tstamp = DTIME_INVALID;
        self.accu_prob = 0;
        self.dq_count = DQCOUNT_INVALID;
        self.avg_dq_rate = 0;
    }
}

#[derive(Debug)]
pub struct PieQueue {
    fifo: Fifo,
    p: Params,
    v: Vars,
    rng: SimRng,
    tupdate: SimDuration,
    /// When the next update is due.
    next_update: SimTime,
    /// Updates computed (not skipped at a fixed point).
    #[cfg(test)]
    updates: u64,
}

impl PieQueue {
    fn new(c: &PieConfig, ctx: QueueContext) -> Self {
        let per_tick = MAX_PROB / TICKS_PER_SEC;
        let p = Params {
            target: ms_to_ns(c.target_ms) >> PSCHED_SHIFT,
            alpha: ((c.alpha * 16.0) as u64 * per_tick) >> 4,
            beta: ((c.beta * 16.0) as u64 * per_tick) >> 4,
            max_burst: ms_to_ns(c.max_burst_ms) >> PSCHED_SHIFT,
            ecn: c.ecn,
            bytemode: c.bytemode,
            dq_rate_estimator: c.dq_rate_estimator,
            mtu: ctx.mtu,
        };
        PieQueue {
            fifo: Fifo::new(ctx.limit, None),
            v: Vars::new(&p),
            p,
            rng: ctx.rng,
            tupdate: SimDuration::from_nanos(ms_to_ns(c.tupdate_ms).max(1)),
            next_update: SimTime::ZERO + SimDuration::from_nanos(ms_to_ns(c.tupdate_ms).max(1)),
            #[cfg(test)]
            updates: 0,
        }
    }

    /// Runs every update due at or before `now`, in order (Linux `pie_timer`, which runs
    /// whether or not packets are queued).
    ///
    /// Between two events the backlog is constant and an update is a function of (state,
    /// backlog, parameters) only: no clock, no random draw. So once an update leaves the
    /// state unchanged, every later update before the next event would too, and they are
    /// skipped. An idle queue gets there within a few thousand updates at worst: with the
    /// queue empty the delay is 0, so after one update both delays are 0, every update
    /// lowers prob (α·target, then the 1/64 decay) until it is 0, the next one restores the
    /// burst allowance and estimator state (`pie_vars_init`), and from then on nothing changes
    /// (with α = β = 0 the decay stops at prob < 64, also a fixed point). A non-empty queue
    /// without dequeues for many intervals (a very slow link) costs one update per interval.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            let before = self.v;
            self.calculate_probability(self.fifo.len_bytes() as u32);
            self.next_update += self.tupdate;
            if self.v == before && self.next_update <= now {
                let missed = (now - self.next_update).as_nanos() / self.tupdate.as_nanos() + 1;
                self.next_update += self.tupdate.saturating_mul(missed);
            }
        }
    }

    /// Linux `pie_calculate_probability`; `backlog` in bytes (a u32 in Linux).
    fn calculate_probability(&mut self, backlog: u32) {
        #[cfg(test)]
        {
            self.updates += 1;
        }
        let (p, v) = (&self.p, &mut self.v);
        let (qdelay, qdelay_old);
        if p.dq_rate_estimator {
            qdelay_old = v.qdelay;
            v.qdelay_old = v.qdelay;
            // Linux shifts the u32 backlog in 32 bits; no rate measured yet reads as delay 0.
            qdelay = (backlog << PIE_SCALE).checked_div(v.avg_dq_rate).unwrap_or(0) as u64;
        } else {
            qdelay = v.qdelay;
            qdelay_old = v.qdelay_old;
        }
        // A zero delay with packets queued means a very small queue: no decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);

        let (mut alpha, mut beta) = (p.alpha, p.beta);
        if v.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100;
            while v.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // Linux's u64 products of (possibly negative, i.e. wrapped) differences, summed into
        // an s64: two's-complement wrapping gives the signed result.
        let mut delta = alpha.wrapping_mul(qdelay.wrapping_sub(p.target)).wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old))) as i64;
        let oldprob = v.prob;
        if delta > (MAX_PROB / (100 / 2)) as i64 && v.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > NON_LINEAR_DELAY {
            delta += (MAX_PROB / (100 / 2)) as i64;
        }
        v.prob = v.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if v.prob < oldprob {
                v.prob = MAX_PROB;
                update_prob = false;
            }
        } else if v.prob > oldprob {
            v.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            v.prob -= v.prob / 64;
        }
        v.qdelay = qdelay;
        if v.qdelay < p.target / 2 && v.qdelay_old < p.target / 2 && v.prob == 0 && (!p.dq_rate_estimator || v.avg_dq_rate > 0) {
            v.init(p);
        }
        if !p.dq_rate_estimator {
            v.qdelay_old = qdelay;
        }
    }

    /// Linux `pie_drop_early`: whether an arrival of `size` bytes joining `backlog` bytes is
    /// chosen for an early drop.
    fn drop_early(&mut self, backlog: u64, size: u32) -> bool {
        let (p, v) = (&self.p, &mut self.v);
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < p.target / 2 && v.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * p.mtu as u64 {
            return false;
        }
        let local_prob = if p.bytemode && size <= p.mtu { (size as u64).wrapping_mul(v.prob / p.mtu as u64) } else { v.prob };
        if local_prob == 0 {
            v.accu_prob = 0;
        } else {
            v.accu_prob = v.accu_prob.wrapping_add(local_prob);
        }
        if v.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if v.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (self.rng.next_u64() >> 8) < local_prob {
            v.accu_prob = 0;
            return true;
        }
        false
    }

    /// Linux `pie_process_dequeue`, after `pkt` left; `backlog` is what remains, bytes.
    fn process_dequeue(&mut self, pkt: &Packet, now: SimTime, backlog: u64) {
        let (p, v) = (&self.p, &mut self.v);
        let now = ticks(now);
        let dtime: u32;
        if !p.dq_rate_estimator {
            v.qdelay = now - ticks(pkt.enqueued_at);
            dtime = if v.dq_tstamp != DTIME_INVALID { now.wrapping_sub(v.dq_tstamp) as u32 } else { 0 };
            v.dq_tstamp = now;
            if backlog == 0 {
                v.qdelay = 0;
            }
            if dtime == 0 {
                return;
            }
        } else {
            if backlog >= QUEUE_THRESHOLD && v.dq_count == DQCOUNT_INVALID {
                v.dq_tstamp = now;
                v.dq_count = 0;
            }
            if v.dq_count == DQCOUNT_INVALID {
                return;
            }
            v.dq_count += pkt.size as u64;
            if v.dq_count < QUEUE_THRESHOLD {
                return;
            }
            let count = (v.dq_count << PIE_SCALE) as u32;
            dtime = now.wrapping_sub(v.dq_tstamp) as u32;
            if dtime == 0 {
                return;
            }
            let count = count / dtime;
            v.avg_dq_rate = if v.avg_dq_rate == 0 { count } else { (v.avg_dq_rate - (v.avg_dq_rate >> 3)) + (count >> 3) };
            if backlog < QUEUE_THRESHOLD {
                v.dq_count = DQCOUNT_INVALID;
            } else {
                v.dq_count = 0;
                v.dq_tstamp = now;
            }
        }
        v.burst_time = v.burst_time.saturating_sub(dtime as u64);
    }
}

impl Queue for PieQueue {
    /// Linux `pie_qdisc_enqueue`.
    fn enqueue(&mut self, mut pkt: Packet, now: SimTime, sink: &mut DropSink) {
        self.catch_up(now);
        if !self.fifo.fits(&pkt) {
            self.v.accu_prob = 0;
            sink.drop(pkt, DropReason::Tail);
            return;
        }
        if self.drop_early(self.fifo.len_bytes(), pkt.size) {
            // Linux INET_ECN_set_ce succeeds for ECT(0), ECT(1) and CE packets.
            if self.p.ecn && self.v.prob <= MAX_PROB / 10 && pkt.ecn != Ecn::NotEct {
                sink.ce_mark(&mut pkt);
            } else {
                self.v.accu_prob = 0;
                sink.drop(pkt, DropReason::Aqm);
                return;
            }
        }
        let backlog = self.fifo.len_packets();
        self.fifo.push(pkt, now, backlog, sink);
    }

    /// Linux `pie_qdisc_dequeue`: PIE never drops at dequeue.
    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        self.catch_up(now);
        let pkt = self.fifo.pop(now, sink)?;
        self.process_dequeue(&pkt, now, self.fifo.len_bytes());
        Some(pkt)
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
    //! Expected values follow Linux's arithmetic: M = MAX_PROB = 2^56 − 1 =
    //! 72057594037927935; a tick is 64 ns, so 1 ms = 15625 ticks and the 15 ms target is
    //! 234375; α = 2·⌊M / 15625000⌋ >> 4 = 2·4611686018 >> 4 = 576460752 and
    //! β = 20·4611686018 >> 4 = 5764607522 (probability per tick of delay).
    use super::super::fifo::tests::pkt;
    use super::*;
    use crate::queue::QueueLimit;

    const M: u64 = MAX_PROB;
    const A: u64 = 576_460_752;
    const B: u64 = 5_764_607_522;
    const TARGET: u64 = 234_375;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }
    /// Ticks in `v` ms.
    fn tk(v: u64) -> u64 {
        v * 15_625
    }
    fn queue_with(c: &PieConfig, limit: QueueLimit) -> PieQueue {
        PieQueue::new(c, QueueContext::for_tests(limit, None))
    }
    fn queue() -> PieQueue {
        queue_with(&PieConfig::default(), QueueLimit::Packets(1000))
    }
    /// A 1500-byte packet (one MTU).
    fn full(i: u32) -> Packet {
        pkt(i, 1448)
    }
    /// The first draw of the untouched test stream, to tell whether a queue drew.
    fn first_draw() -> u64 {
        QueueContext::for_tests(QueueLimit::Packets(1), None).rng.next_u64()
    }
    fn drew(q: &PieQueue) -> bool {
        q.rng.clone().next_u64() != first_draw()
    }
    /// One update from the given state.
    fn update(prob: u64, qdelay: u64, qdelay_old: u64, backlog: u32) -> u64 {
        let mut q = queue();
        (q.v.prob, q.v.qdelay, q.v.qdelay_old) = (prob, qdelay, qdelay_old);
        q.calculate_probability(backlog);
        q.v.prob
    }

    #[test]
    fn parameters_in_linux_units() {
        let q = queue();
        assert_eq!((q.p.alpha, q.p.beta, q.p.target, q.p.max_burst), (A, B, TARGET, 2_343_750));
        assert_eq!((q.v.burst_time, q.v.dq_tstamp, q.v.dq_count), (2_343_750, DTIME_INVALID, DQCOUNT_INVALID));
        assert_eq!(q.next_update, ms(15), "the timer runs from before the run: first update one tupdate in");
    }

    #[test]
    fn update_in_the_normal_range_adds_alpha_and_beta_terms_unscaled() {
        // prob 20 % (≥ 10 %: no auto-tuning), delay 20 ms, previous 18 ms:
        // Δ = 576460752·(312500 − 234375) + 5764607522·(312500 − 281250)
        //   = 45035996250000 + 180143985062500 = 225179981312500 ≈ 0.003125·M
        // (RFC: 0.125/s · 5 ms + 1.25/s · 2 ms = 0.003125).
        let mut q = queue();
        (q.v.prob, q.v.qdelay, q.v.qdelay_old) = (M / 5, tk(20), tk(18));
        q.calculate_probability(30_000);
        assert_eq!(q.v.prob, 14_411_518_807_585_587 + 225_179_981_312_500);
        assert_eq!((q.v.qdelay, q.v.qdelay_old), (tk(20), tk(20)));
    }

    #[test]
    fn low_probabilities_scale_alpha_and_beta_down_by_linux_shifts() {
        // 0.05 %: < 10 % halves; < 1 % and < 0.1 % divide by 4 each; not < 0.01 %: ÷32 in all
        // (ns-3's band [0.01 %, 0.1 %) is ÷32 too). α' = 576460752 >> 5 = 18014398,
        // β' = 5764607522 >> 5 = 180143985. Delay 30 ms, previous 25 ms:
        // Δ = 18014398·234375 + 180143985·78125 = 18295873359375 (≈ 0.000254·M).
        assert_eq!(update(M / 2000, tk(30), tk(25), 30_000), 36_028_797_018_963 + 18_295_873_359_375);
        // prob 0: ÷2 then ÷4 for 1 %, 0.1 %, 0.01 %, 0.001 %, 0.0001 %: ÷2048, α' = 281474,
        // β' = 2814749. Delay 20 ms after 0: Δ = 281474·78125 + 2814749·312500 = 901599218750
        // (RFC floats: 0.025625 / 2048 = 1.2512e-5 of M).
        assert_eq!(update(0, tk(20), 0, 30_000), 901_599_218_750);
        // At the 10 % boundary: just under it halves α and β (both even, so exactly half).
        assert_eq!(update(M / 10, tk(20), tk(18), 30_000), M / 10 + 225_179_981_312_500);
        assert_eq!(update(M / 10 - 1, tk(20), tk(18), 30_000), M / 10 - 1 + 112_589_990_656_250);
    }

    #[test]
    fn increase_capped_at_2pct_from_10pct_and_250ms_adds_2pct() {
        // prob 50 %, delay 100 ms after 50 ms: α·1328125 + β·781250 ≈ 0.073·M > 2 % → 2 %,
        // i.e. (M / 100)·2 = 1441151880758558.
        assert_eq!(update(M / 2, tk(100), tk(50), 30_000), M / 2 + 1_441_151_880_758_558);
        // Same delays at 5 %: no cap below 10 %; ÷2: 288230376·1328125 + 2882303761·781250.
        assert_eq!(update(M / 20, tk(100), tk(50), 30_000), M / 20 + 2_634_605_781_406_250);
        // Delay 300 ms (> 250 ms): capped 2 % plus 2 % (M / 50 = 1441151880758558).
        assert_eq!(update(M / 2, tk(300), tk(300), 30_000), M / 2 + 2 * 1_441_151_880_758_558);
        // The 250 ms rule applies at any probability: from 0, 281474·(4687500 − 234375) + M/50.
        assert_eq!(update(0, tk(300), tk(300), 30_000), 1_442_405_319_664_808);
    }

    #[test]
    fn zero_delays_decay_the_probability_by_a_64th() {
        // prob 50 %, both delays 0, empty queue: Δ = −α·234375 = −135107988750000, giving
        // 35893689030213967, then −⌊p/64⌋ (Linux; RFC and ns-3: ×0.98) = 35332850139116874.
        assert_eq!(update(M / 2, 0, 0, 0), 35_332_850_139_116_874);
        // Delay 0 with packets queued (a tiny queue): no decay this round.
        assert_eq!(update(M / 2, 0, 0, 1500), 35_893_689_030_213_967);
    }

    #[test]
    fn low_delays_and_zero_probability_restore_the_burst_allowance() {
        let mut q = queue();
        // Both delays just under target/2 = 117187 ticks, prob 0 → pie_vars_init.
        (q.v.burst_time, q.v.qdelay, q.v.qdelay_old, q.v.accu_prob, q.v.dq_tstamp) = (0, 117_186, 117_186, 5, 123);
        q.calculate_probability(1500);
        assert_eq!((q.v.prob, q.v.burst_time, q.v.accu_prob, q.v.dq_tstamp), (0, 2_343_750, 0, DTIME_INVALID));
        // The previous delay at target/2: no reset.
        (q.v.burst_time, q.v.qdelay, q.v.qdelay_old) = (0, 117_186, 117_187);
        q.calculate_probability(1500);
        assert_eq!(q.v.burst_time, 0);
    }

    #[test]
    fn burst_allowance_drains_with_time_between_dequeues_and_then_drops_start() {
        let mut q = queue();
        let mut sink = DropSink::default();
        q.next_update = SimTime::MAX; // no updates: prob stays where set
        q.v.prob = M;
        for i in 0..40 {
            q.enqueue(full(i), ms(0), &mut sink);
        }
        assert_eq!(sink.drops(), 0, "no early drop while burst allowance remains");
        // The first dequeue has no previous one (dq_tstamp invalid): nothing taken.
        q.dequeue(ms(0), &mut sink);
        assert_eq!(q.v.burst_time, 2_343_750);
        // Linux takes the time since the previous dequeue off the allowance (10 ms = 156250
        // ticks each here), not tupdate per update as RFC 8033 §4.4 and ns-3 do.
        for k in 1..=15 {
            q.dequeue(ms(10 * k), &mut sink);
            assert_eq!(q.v.burst_time, 2_343_750 - k * 156_250);
            q.enqueue(full(100 + k as u32), ms(10 * k), &mut sink);
            assert_eq!(sink.aqm, (k == 15) as u64, "k = {k}: drops only once the allowance is spent");
        }
        assert_eq!(q.len_packets(), 40 - 16 + 14);
    }

    #[test]
    fn no_early_drop_at_low_delay_and_probability_or_under_two_mtus() {
        let mut q = queue();
        q.v.burst_time = 0;
        // accu_prob already past 8.5: every test that gets that far drops without a draw.
        let certain = |q: &mut PieQueue| q.v.accu_prob = 9 * M;
        certain(&mut q);
        // The current delay (Linux vars->qdelay; RFC and ns-3 use the previous update's) under
        // target/2 = 117187 ticks with prob under 20 %: no drop, nothing accumulated.
        (q.v.prob, q.v.qdelay) = (M / 5 - 1, 117_186);
        assert!(!q.drop_early(30_000, 1500));
        assert_eq!(q.v.accu_prob, 9 * M);
        q.v.qdelay = 117_187;
        assert!(q.drop_early(30_000, 1500));
        (q.v.prob, q.v.qdelay, q.v.qdelay_old) = (M / 5, 0, TARGET);
        assert!(q.drop_early(30_000, 1500), "at 20 % the delay guard is off");
        (q.v.prob, q.v.qdelay, q.v.qdelay_old) = (M / 5 - 1, TARGET, 0);
        assert!(q.drop_early(30_000, 1500), "the previous update's delay does not guard");
        // Backlog (bytes before the arrival) under 2 MTU = 3000: no drop.
        certain(&mut q);
        assert!(!q.drop_early(2999, 1500));
        assert!(q.drop_early(3000, 1500));
        q.v.burst_time = 1;
        assert!(!q.drop_early(30_000, 1500));
        assert!(!drew(&q));
    }

    #[test]
    fn accumulated_probability_derandomises_drops_as_linux() {
        let mut q = queue();
        (q.v.burst_time, q.v.qdelay, q.v.prob) = (0, TARGET, M / 10);
        // 8 arrivals at 10 % accumulate 0.8·M = 57646075230342344 < 0.85·M
        // ((M / 100)·85 = 61248954932238715): no drop and no draw.
        for _ in 0..8 {
            assert!(!q.drop_early(30_000, 1500));
        }
        assert_eq!(q.v.accu_prob, 8 * (M / 10));
        assert!(!drew(&q));
        // The 9th (0.9·M) draws: drop if (rnd >> 8) < prob.
        let rnd = first_draw() >> 8;
        assert_eq!(q.drop_early(30_000, 1500), rnd < M / 10);
        assert!(drew(&q));
        // Reaching 8.5·M ((M / 2)·17) drops without a draw; drop_early keeps the sum (the
        // enqueue that drops clears it).
        let mut q = queue();
        (q.v.burst_time, q.v.qdelay, q.v.prob, q.v.accu_prob) = (0, TARGET, M / 10, (M / 2) * 17 - M / 10);
        assert!(q.drop_early(30_000, 1500));
        assert_eq!(q.v.accu_prob, (M / 2) * 17);
        assert!(!drew(&q));
        // prob 0 clears the sum.
        q.v.prob = 0;
        assert!(!q.drop_early(30_000, 1500));
        assert_eq!(q.v.accu_prob, 0);
        // bytemode: a 750-byte packet counts 750·⌊(M/10) / 1500⌋ = 3602879701896000; 17 of
        // them make 61248954932232000, just under 0.85·M (truncation), so no draw yet.
        let mut q = queue_with(&PieConfig { bytemode: true, ..PieConfig::default() }, QueueLimit::Packets(1000));
        (q.v.burst_time, q.v.qdelay, q.v.prob) = (0, TARGET, M / 10);
        for _ in 0..17 {
            assert!(!q.drop_early(30_000, 750));
        }
        assert_eq!(q.v.accu_prob, 61_248_954_932_232_000);
        assert!(!drew(&q));
        // A packet larger than the MTU counts the whole probability.
        q.drop_early(30_000, 1501);
        assert_eq!(q.v.accu_prob, 61_248_954_932_232_000 + M / 10);
    }

    #[test]
    fn ecn_marks_ect_packets_up_to_10pct_and_drops_above_and_not_ect() {
        let cfg = PieConfig { ecn: true, ..PieConfig::default() };
        let mut q = queue_with(&cfg, QueueLimit::Packets(100));
        let mut sink = DropSink::default();
        q.next_update = SimTime::MAX;
        (q.v.burst_time, q.v.qdelay) = (0, TARGET);
        let p = |i, ecn| Packet { ecn, ..full(i) };
        // prob 0: three packets queue (4500 B ≥ 2 MTU afterwards).
        for i in 0..3 {
            q.enqueue(p(i, Ecn::NotEct), ms(0), &mut sink);
        }
        assert_eq!(sink.drops(), 0);
        // prob exactly 10 % with a certain drop: the ECT packet is marked and queued; the
        // sum is kept (Linux resets it only on a drawn or actual drop), so the next ECT
        // packet is marked too.
        (q.v.prob, q.v.accu_prob) = (M / 10, 9 * M);
        q.enqueue(p(3, Ecn::Ect0), ms(0), &mut sink);
        q.enqueue(p(4, Ecn::Ect0), ms(0), &mut sink);
        assert_eq!((sink.ce_marks, sink.aqm), (2, 0));
        // Not-ECT is dropped, and the drop clears the sum.
        q.enqueue(p(5, Ecn::NotEct), ms(0), &mut sink);
        assert_eq!((sink.aqm, q.v.accu_prob), (1, 0));
        // An arrival already CE counts as marked (INET_ECN_set_ce), not as a new mark.
        q.v.accu_prob = 9 * M;
        q.enqueue(p(6, Ecn::Ce), ms(0), &mut sink);
        assert_eq!((sink.ce_marks, sink.aqm), (2, 1));
        // Above 10 %: ECT packets are dropped.
        (q.v.prob, q.v.accu_prob) = (M / 10 + 1, 9 * M);
        q.enqueue(p(7, Ecn::Ect0), ms(0), &mut sink);
        assert_eq!((sink.ce_marks, sink.aqm), (2, 2));
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(ms(0), &mut sink)).map(|p| p.ecn).collect();
        use Ecn::*;
        assert_eq!(ecns, [NotEct, NotEct, NotEct, Ce, Ce, Ce]);
        assert_eq!(sink.drops(), 2);
    }

    #[test]
    fn the_link_buffer_is_the_limit_and_tail_drops_clear_the_sum() {
        let mut q = queue_with(&PieConfig::default(), QueueLimit::Packets(3));
        let mut sink = DropSink::default();
        for i in 0..3 {
            q.enqueue(full(i), ms(0), &mut sink);
        }
        q.v.accu_prob = M / 2;
        q.enqueue(full(3), ms(0), &mut sink);
        assert_eq!((sink.tail, sink.drops(), q.v.accu_prob), (1, 1, 0));
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 4500));
        let mut q = queue_with(&PieConfig::default(), QueueLimit::Bytes(3100));
        for i in 0..3 {
            q.enqueue(full(i), ms(0), &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.len_bytes()), (2, 2, 3000));
        assert_eq!(q.dequeue(ms(1), &mut sink).unwrap().enqueued_at, ms(0));
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1500));
    }

    #[test]
    fn missed_updates_caught_up_at_once_equal_updates_one_by_one() {
        let start = |q: &mut PieQueue, sink: &mut DropSink| {
            for i in 0..40 {
                q.enqueue(full(i), ms(0), sink);
            }
            q.dequeue(ms(480), sink); // qdelay 480 ms
        };
        let (mut lazy, mut eager) = (queue(), queue());
        // This test's grid: no update before 500 ms, while the backlog builds.
        (lazy.next_update, eager.next_update) = (ms(500), ms(500));
        let (mut s1, mut s2) = (DropSink::default(), DropSink::default());
        start(&mut lazy, &mut s1);
        start(&mut eager, &mut s2);
        // Updates at 500, 515, …, 590 ms: seven, each done as it falls for `eager`.
        let mut probs = vec![];
        for k in 0..7 {
            eager.catch_up(ms(500 + 15 * k));
            probs.push(eager.v.prob);
        }
        // The first from prob 0 (÷2048), delay 480 ms = 7500000 ticks after 0, plus 2 % for
        // > 250 ms: 281474·(7500000 − 234375) + 2814749·7500000 + M/50.
        assert_eq!(probs[0], 1_464_307_582_789_808);
        assert!(probs.windows(2).all(|w| w[1] > w[0]), "{probs:?}");
        let (p1, p2) = (lazy.dequeue(ms(603), &mut s1), eager.dequeue(ms(603), &mut s2));
        assert_eq!(p1, p2);
        assert_eq!(lazy.v, eager.v);
        assert_eq!((lazy.next_update, eager.next_update), (ms(605), ms(605)));
        assert_eq!((lazy.updates, eager.updates), (7, 7));
    }

    #[test]
    fn an_idle_hour_ends_at_the_same_fixed_point_as_every_update_run() {
        // After overload the queue empties: prob 50 %, delay 0, previous update 100 ms.
        let set = |q: &mut PieQueue| {
            (q.v.prob, q.v.qdelay, q.v.qdelay_old, q.v.burst_time, q.v.dq_tstamp, q.v.accu_prob) = (M / 2, 0, tk(100), 0, 77, 5);
        };
        let (mut lazy, mut every) = (queue(), queue());
        set(&mut lazy);
        set(&mut every);
        let hour = ms(3_600_000);
        lazy.catch_up(hour);
        // Every update (Linux's timer runs on an empty queue too): 15 ms, 30 ms, … ≤ 1 h.
        while every.next_update <= hour {
            every.calculate_probability(0);
            every.next_update += every.tupdate;
        }
        assert_eq!(every.updates, 240_000);
        assert!(lazy.updates < 1_000, "{} updates computed", lazy.updates);
        assert_eq!(lazy.v, every.v);
        assert_eq!(lazy.next_update, every.next_update);
        // The probability decayed to 0 and pie_vars_init restored the burst allowance.
        let v = lazy.v;
        assert_eq!((v.prob, v.qdelay, v.qdelay_old, v.burst_time, v.dq_tstamp, v.accu_prob), (0, 0, 0, 2_343_750, DTIME_INVALID, 0));
    }

    #[test]
    fn departure_rate_estimator_measures_16k_cycles() {
        let cfg = PieConfig { dq_rate_estimator: true, ..PieConfig::default() };
        let mut q = queue_with(&cfg, QueueLimit::Packets(1000));
        q.next_update = ms(500); // this test's grid: the first update after the first cycle
        let mut sink = DropSink::default();
        for i in 0..20 {
            q.enqueue(full(i), ms(0), &mut sink); // 30000 B
        }
        // 1500 B leave every 1 ms. At 1 ms 28500 B remain (≥ 16384): the cycle starts then,
        // counting that packet; the 11th (at 11 ms) brings it to 16500 ≥ 16384 B.
        for k in 1..=10 {
            q.dequeue(ms(k), &mut sink);
        }
        assert_eq!((q.v.dq_count, q.v.avg_dq_rate, q.v.dq_tstamp), (15_000, 0, tk(1)));
        q.dequeue(ms(11), &mut sink);
        // rate = (16500 << 8) / (10 ms = 156250 ticks) = 4224000 / 156250 = 27 (27.03); 13500 B
        // remain (< 16384): the cycle ends. The cycle's time comes off the burst allowance.
        assert_eq!((q.v.avg_dq_rate, q.v.dq_count, q.v.burst_time), (27, DQCOUNT_INVALID, 2_343_750 - 156_250));
        // The update at 500 ms: delay = (13500 << 8) / 27 = 128000 ticks (8.19 ms), previous 0,
        // prob 0 (÷2048): 281474·(128000 − 234375) + 2814749·128000 = 330346075250.
        q.catch_up(ms(500));
        assert_eq!((q.v.qdelay, q.v.qdelay_old, q.v.prob), (128_000, 0, 330_346_075_250));
        // A second cycle, of packets leaving every 2 ms: 16500 B over 20 ms = 312500 ticks
        // measures 4224000 / 312500 = 13 (13.5), averaged as 27 − ⌊27/8⌋ + ⌊13/8⌋ = 25. 27000 B
        // remain (≥ 16384): the next cycle starts at once.
        for i in 0..20 {
            q.enqueue(full(100 + i), ms(600), &mut sink);
        }
        for k in 1..=11 {
            q.dequeue(ms(600 + 2 * k - 1), &mut sink);
        }
        assert_eq!((q.v.avg_dq_rate, q.v.dq_count, q.v.dq_tstamp), (25, 0, tk(621)));
    }

    #[test]
    fn validate_names_the_parameter_and_what_is_allowed() {
        let ctx = QueueContext::for_tests(QueueLimit::Packets(100), None);
        let check = |c: PieConfig| c.validate(&ctx);
        let d = PieConfig::default;
        assert_eq!(check(d()), Ok(()));
        assert_eq!(check(PieConfig { max_burst_ms: 0.0, alpha: 0.0, beta: 2.0, ..d() }), Ok(()));
        let range = "allowed: 0.001 to 4294967.295 ms";
        assert_eq!(check(PieConfig { target_ms: -1.0, ..d() }), Err(format!("target_ms: -1 is out of range; {range}")));
        assert_eq!(check(PieConfig { target_ms: 0.0, ..d() }), Err(format!("target_ms: 0 is out of range; {range}")));
        assert_eq!(check(PieConfig { tupdate_ms: 0.0, ..d() }), Err(format!("tupdate_ms: 0 is out of range; {range}")));
        assert_eq!(check(PieConfig { tupdate_ms: f64::NAN, ..d() }), Err(format!("tupdate_ms: NaN is out of range; {range}")));
        assert_eq!(check(PieConfig { tupdate_ms: 5e6, ..d() }), Err(format!("tupdate_ms: 5000000 is out of range; {range}")));
        let steps = "allowed: 0 to 2 in steps of 1/16 = 0.0625 (Linux's unit)";
        assert_eq!(check(PieConfig { alpha: -0.125, ..d() }), Err(format!("alpha: -0.125 is out of range; {steps}")));
        assert_eq!(check(PieConfig { alpha: 0.1, ..d() }), Err(format!("alpha: 0.1 is out of range; {steps}")));
        assert_eq!(check(PieConfig { beta: 2.0625, ..d() }), Err(format!("beta: 2.0625 is out of range; {steps}")));
        assert_eq!(
            check(PieConfig { max_burst_ms: -1.0, ..d() }),
            Err("max_burst_ms: -1 is out of range; allowed: 0 (no burst allowance) or 0.001 to 4294967.295 ms".into())
        );
    }

    #[test]
    fn unresponsive_overload_is_held_near_the_target_delay() {
        // 12 Mbit/s of 1500-byte packets (one per ms) into a 10 Mbit/s link (one per 1.2 ms)
        // for 30 s: a 1000-packet FIFO would sit at 1.2 s of delay; PIE settles near 15 ms
        // with about 1/6 of arrivals dropped.
        let mut q = queue();
        let mut sink = DropSink::default();
        let tx = SimDuration::from_micros(1200);
        let (mut free_at, mut sojourns) = (SimTime::ZERO, vec![]);
        for k in 0..30_000u64 {
            let now = ms(k);
            while q.len_packets() > 0 && free_at <= now {
                let p = q.dequeue(free_at, &mut sink).unwrap();
                sojourns.push((free_at, free_at - p.enqueued_at));
                free_at += tx;
            }
            q.enqueue(full(k as u32), now, &mut sink);
            free_at = free_at.max(now);
        }
        let late: Vec<f64> = sojourns.iter().filter(|(t, _)| *t >= ms(10_000)).map(|(_, d)| d.as_millis_f64()).collect();
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        assert!((8.0..25.0).contains(&mean), "mean sojourn {mean} ms");
        assert_eq!(sink.tail, 0);
        let dropped = sink.aqm as f64 / 30_000.0;
        assert!((0.14..0.19).contains(&dropped), "drop fraction {dropped}");
    }
}
