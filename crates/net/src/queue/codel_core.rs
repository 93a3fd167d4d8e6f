//! The CoDel state machine of one FIFO (RFC 8289 as Linux implements it in
//! `include/net/codel.h` and `include/net/codel_impl.h`), shared by the `codel` discipline
//! (one per queue) and `fq_codel` (one per flow bucket): [`CodelParams`], [`CodelVars`] and
//! [`CodelVars::dequeue`] (Linux `codel_dequeue` with `codel_should_drop`) over any
//! [`CodelSource`].
//!
//! Linux's arithmetic is kept where it changes results:
//! * time is counted in CoDel's 1024-ns units in a wrapping `u32` (`codel_time_t`,
//!   `now_ns >> 10`) with serial-number comparisons; a packet's sojourn is
//!   `(now >> 10) - (enqueued_at >> 10)`, as Linux stamps packets with `codel_get_time()`;
//! * parameters are converted as `tc` passes them: whole microseconds, `us * 1000 >> 10`
//!   (target 5 ms = 4882 units = 4.999168 ms, interval 100 ms = 97656 units);
//! * 1/√count is kept in a 16-bit fixed point `rec_inv_sqrt` updated by one Newton step per
//!   count change (`codel_Newton_step`), and the control law is
//!   `t + (interval * (rec_inv_sqrt << 16)) >> 32` (`codel_control_law`, `reciprocal_scale`).
//!   One Newton step from 1.0 gives 0.5 for count 2 (not 1/√2), so the second drop comes
//!   interval/2 after the first; the approximation then converges (0.5625, 0.4878, 0.4415, …
//!   for counts 3, 4, 5).
//!
//! Not modelled: `codel_stats` beyond the drop and mark counts the [`DropSink`] keeps
//! (`maxpacket`, which Linux now only reports: the "is the backlog at most one packet" guard
//! compares the backlog with `params->mtu`), the `ce_threshold_selector`/`mask` (DSCP-selected
//! CE marking), and the cap of drops per dequeue that very recent kernels add
//! (`CODEL_MAX_DROPS_PER_DEQUEUE`).

use super::{DropReason, DropSink};
use tcplab_core::{Ecn, Packet, SimTime};

/// CoDel's clock: 1024-ns units in a wrapping `u32` (Linux `codel_get_time`).
pub(super) fn codel_time(t: SimTime) -> u32 {
    (t.as_nanos() >> 10) as u32
}

/// `a` after `b` in serial-number arithmetic (Linux `codel_time_after`).
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

fn before(a: u32, b: u32) -> bool {
    after(b, a)
}

/// Milliseconds to CoDel units as `tc` passes them to Linux: whole microseconds, then
/// `us * NSEC_PER_USEC >> CODEL_SHIFT`.
pub(super) fn ms_to_codel(ms: f64) -> u32 {
    let us = (ms * 1000.0).round() as u64;
    ((us * 1000) >> 10) as u32
}

/// The longest CoDel time, ms: below its 2^31-unit (about 2199 s) comparison range.
pub(super) const CODEL_MAX_MS: f64 = 2_000_000.0;

/// RFC 3168 ECN-capable: ECT, or already CE (Linux `INET_ECN_set_ce` succeeds on both).
pub(super) fn ecn_capable(pkt: &Packet) -> bool {
    pkt.ecn != Ecn::NotEct
}

/// CoDel's parameters (Linux `struct codel_params`), in CoDel units.
#[derive(Clone, Copy, Debug)]
pub(super) struct CodelParams {
    pub target: u32,
    pub interval: u32,
    /// CE-mark ECT packets whose sojourn exceeds this (`None`: off, Linux's
    /// `CODEL_DISABLED_THRESHOLD`).
    pub ce_threshold: Option<u32>,
    /// A backlog of at most this many bytes is never dropped from (Linux `params->mtu`,
    /// `psched_mtu()` of the device).
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl CodelParams {
    pub fn new(target_ms: f64, interval_ms: f64, ce_threshold_ms: f64, ecn: bool, mtu: u32) -> Self {
        let ce_threshold = (ce_threshold_ms > 0.0).then(|| ms_to_codel(ce_threshold_ms));
        CodelParams { target: ms_to_codel(target_ms), interval: ms_to_codel(interval_ms), ce_threshold, mtu, ecn }
    }

    /// `t + interval / sqrt(count)` with 1/√count as `rec_inv_sqrt` (Linux `codel_control_law`).
    fn control_law(&self, t: u32, rec_inv_sqrt: u16) -> u32 {
        let scale = (self.interval as u64 * ((rec_inv_sqrt as u64) << 16)) >> 32;
        t.wrapping_add(scale as u32)
    }
}

/// One queue's CoDel state (Linux `struct codel_vars`); all zero at start, as `codel_vars_init`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CodelVars {
    /// Drops (or marks) since entering the dropping state, plus any reused from the last cycle.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/√count in 16-bit fixed point (0xFFFF ≈ 1.0).
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for an interval; 0 = below target.
    pub first_above_time: u32,
    /// When to drop next, or when the last drop happened.
    pub drop_next: u32,
    /// Sojourn of the last packet looked at.
    pub ldelay: u32,
}

/// The FIFO a CoDel instance takes packets from (Linux's `dequeue_func` and backlog pointer).
pub(super) trait CodelSource {
    /// Removes the oldest packet, taking it out of every backlog count.
    fn pop(&mut self) -> Option<Packet>;
    /// The backlog in bytes the "at most one MTU queued" guard compares, after the pop (the
    /// queue's own for `codel`; the whole qdisc's, all flows, for `fq_codel`, as in Linux).
    fn backlog(&self) -> u64;
}

impl CodelVars {
    /// One Newton–Raphson step of 1/√count: `y' = y/2 · (3 − count·y²)` in Q0.32, kept in
    /// 16 bits (Linux `codel_Newton_step`; C's unsigned wrap-around included).
    pub fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u64) << 16;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let val = (3u64 << 32).wrapping_sub((self.count as u64).wrapping_mul(invsqrt2)) >> 2;
        let val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> 16) as u16;
    }

    /// Linux `codel_should_drop`: whether `pkt` (just popped; `None` if the queue was empty)
    /// is eligible for a drop at `now`.
    fn should_drop(&mut self, pkt: Option<&Packet>, backlog: u64, p: &CodelParams, now: u32) -> bool {
        let Some(pkt) = pkt else {
            self.first_above_time = 0;
            return false;
        };
        self.ldelay = now.wrapping_sub(codel_time(pkt.enqueued_at));
        if before(self.ldelay, p.target) || backlog <= p.mtu as u64 {
            // Below target (or too little queued to matter): must stay above for an interval.
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            self.first_above_time = now.wrapping_add(p.interval);
            false
        } else {
            after(now, self.first_above_time)
        }
    }

    /// Marks `pkt` if ECN is on and it is ECN-capable (true: marked, keep it).
    fn mark(p: &CodelParams, pkt: &mut Packet, sink: &mut DropSink) -> bool {
        if p.ecn && ecn_capable(pkt) {
            sink.ce_mark(pkt);
            true
        } else {
            false
        }
    }

    /// Linux `codel_dequeue`: the next packet of `src` to send at `now`, dropping (or, with
    /// `ecn`, marking) as CoDel decides; drops go to `sink` as [`DropReason::Aqm`].
    pub fn dequeue<S: CodelSource>(&mut self, p: &CodelParams, src: &mut S, t: SimTime, sink: &mut DropSink) -> Option<Packet> {
        let Some(mut pkt) = src.pop() else {
            self.dropping = false;
            return None;
        };
        let now = codel_time(t);
        let drop = self.should_drop(Some(&pkt), src.backlog(), p, now);
        let mut out = Some(pkt);
        if self.dropping {
            if !drop {
                // Sojourn below target: leave the dropping state.
                self.dropping = false;
            } else {
                // Drop (or mark) at each scheduled time passed; a large backlog may make the
                // next drop due at once, hence the loop.
                while self.dropping && after_eq(now, self.drop_next) {
                    let Some(mut pkt) = out.take() else { break };
                    self.count = self.count.wrapping_add(1);
                    self.newton_step();
                    if Self::mark(p, &mut pkt, sink) {
                        self.drop_next = p.control_law(self.drop_next, self.rec_inv_sqrt);
                        out = Some(pkt);
                        break;
                    }
                    sink.drop(pkt, DropReason::Aqm);
                    out = src.pop();
                    if !self.should_drop(out.as_ref(), src.backlog(), p, now) {
                        self.dropping = false;
                    } else {
                        self.drop_next = p.control_law(self.drop_next, self.rec_inv_sqrt);
                    }
                }
            }
        } else if drop {
            pkt = out.take().expect("popped above");
            if Self::mark(p, &mut pkt, sink) {
                out = Some(pkt);
            } else {
                sink.drop(pkt, DropReason::Aqm);
                out = src.pop();
                self.should_drop(out.as_ref(), src.backlog(), p, now);
            }
            self.dropping = true;
            // Re-entering soon after the last cycle: start from the drop rate that controlled
            // the queue then (count − lastcount), if within 16 intervals of its last drop.
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1 && before(now.wrapping_sub(self.drop_next), p.interval.wrapping_mul(16)) {
                self.count = delta;
                self.newton_step();
            } else {
                self.count = 1;
                self.rec_inv_sqrt = u16::MAX;
            }
            self.lastcount = self.count;
            self.drop_next = p.control_law(now, self.rec_inv_sqrt);
        }
        if let (Some(pkt), Some(ce)) = (out.as_mut(), p.ce_threshold) {
            if after(self.ldelay, ce) && ecn_capable(pkt) {
                sink.ce_mark(pkt);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_steps_from_one_follow_linux_fixed_point() {
        // count 2 from rec_inv_sqrt 0xFFFF: invsqrt = 0xFFFF0000, invsqrt² >> 32 = 0xFFFE0001,
        // 3·2³² − 2·0xFFFE0001 = 4295229438, >> 2 = 1073807359, · 0xFFFF0000 >> 31 >> 16 = 32769.
        let mut v = CodelVars { count: 1, rec_inv_sqrt: u16::MAX, ..Default::default() };
        let mut got = vec![];
        for c in 2..=7 {
            v.count = c;
            v.newton_step();
            got.push(v.rec_inv_sqrt);
        }
        // 0.50002, 0.5625, 0.4878, 0.4415, 0.4041, 0.3752 (1/√c: 0.707, 0.577, 0.5, 0.447, 0.408, 0.378).
        assert_eq!(got, [32769, 36864, 31968, 28935, 26481, 24588]);
    }

    #[test]
    fn control_law_scales_the_interval_by_rec_inv_sqrt() {
        let p = CodelParams::new(5.0, 100.0, 0.0, false, 1500);
        assert_eq!((p.target, p.interval, p.ce_threshold), (4882, 97656, None));
        // 97656 · 0xFFFF0000 >> 32 = 97656 − ⌈97656/65536⌉ = 97654; 97656 · 0x80010000 >> 32 = 48829.
        assert_eq!(p.control_law(10, u16::MAX), 10 + 97654);
        assert_eq!(p.control_law(10, 32769), 10 + 48829);
        // Wraps like codel_time_t.
        assert_eq!(p.control_law(u32::MAX, u16::MAX), 97653);
        assert!(after(5, u32::MAX - 5) && before(u32::MAX - 5, 5));
    }

    #[test]
    fn time_parameters_are_whole_microseconds_in_1024_ns_units() {
        assert_eq!(ms_to_codel(1.0), 976); // 1 000 000 >> 10 = 976.5625
        assert_eq!(ms_to_codel(0.0014), 0); // 1 µs = 1000 ns < 1024
        assert_eq!(ms_to_codel(0.0026), 2); // 3 µs = 3000 ns
        assert_eq!(codel_time(SimTime(1024 * 7 + 1023)), 7);
    }
}
