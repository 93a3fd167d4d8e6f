//! CoDel, Controlled Delay (RFC 8289; Linux `sch_codel` over `include/net/codel_impl.h`):
//! a FIFO that drops at dequeue once packets have waited longer than `target` for at least
//! `interval`, then drops again at `interval/√count` spacing until the sojourn falls below
//! target (the state machine, with Linux's fixed point, is in `codel_core`).
//!
//! * Enqueue (Linux `codel_qdisc_enqueue`): tail drop ([`DropReason::Tail`]) when the link's
//!   buffer is full. Linux limits `codel` in packets (default 1000, tcplab's default buffer);
//!   a buffer in bytes is applied like `bfifo` (the arrival must fit in the bytes left).
//! * Dequeue (Linux `codel_dequeue`): drops are [`DropReason::Aqm`]; with `ecn`, an
//!   ECN-capable packet is CE-marked instead of dropped (an already-CE one counts as marked
//!   but is not counted again), Not-ECT packets are dropped. No drop while the backlog left
//!   after the dequeue is at most one MTU (the link's MTU stands for Linux's `psched_mtu`,
//!   which adds the 14-byte Ethernet header that tcplab's packet sizes do not count).
//!   `ce_threshold_ms` CE-marks ECT packets whose sojourn exceeds it, whatever `ecn` says.
//! * The link's `ecn_threshold` is refused (`Discipline::TAKES_ECN_THRESHOLD`): CoDel marks by
//!   its own parameters.
//!
//! Not modelled: see `codel_core` (statistics, DSCP-selected CE marking, the per-dequeue drop
//! cap of recent kernels). CoDel time wraps after 2³² × 1024 ns ≈ 73 min as in Linux; packets
//! never wait that long in a simulated queue.
//!
//! ns-3's CoDelQueueDisc (as read in the 3.40 and a later
//! ns-3-dev source; 3.44 itself not checked) differs in ways a differential test can show:
//! * MaxSize defaults to 1500 × 1000 = 1 500 000 bytes (ns-3 limits in bytes, tcplab uses the
//!   link's buffer) and its over-limit drop is "Overlimit drop" before enqueue (here Tail);
//! * its guard is `MinBytes` (1500) compared strictly (`bytes < MinBytes` is safe), where
//!   Linux and tcplab hold off while `backlog <= mtu`: a backlog of exactly 1500 bytes is
//!   drop-eligible in ns-3 and not here;
//! * when it marks instead of dropping in the dropping state it schedules the next signal from
//!   `now` (`ControlLaw(now, …)`), where Linux continues from `drop_next`: with ECN, ns-3
//!   marks less often when dequeues come later than `drop_next`;
//! * its sojourn is `(now − stamp) >> 10` where Linux subtracts the two clocks in 1024-ns
//!   units (they can differ by one unit);
//! * `CeThreshold` marks only when `UseEcn` is true and the packet was not just marked;
//!   Linux's `ce_threshold` does not depend on `ecn`;
//! * its time comparisons are 64-bit differences of 32-bit values (no wrap-around);
//! * `UseL4s` (ECT(1) marked by CeThreshold only) has no Linux `codel` counterpart.

use super::check_ms;
use super::codel_core::{CodelParams, CodelSource, CodelVars, CODEL_MAX_MS};
use super::{Discipline, DropReason, DropSink, Fifo, ParamDoc, Queue, QueueContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::{Packet, SimTime};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CodelConfig {
    /// Acceptable standing queue delay, ms.
    pub target_ms: f64,
    /// Sliding window over which the sojourn must stay above target before dropping, ms.
    pub interval_ms: f64,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// CE-mark ECT packets whose sojourn exceeds this, ms (0 = off).
    pub ce_threshold_ms: f64,
}

impl Default for CodelConfig {
    /// Linux `codel_params_init`: target 5 ms, interval 100 ms, no ECN, no CE threshold.
    fn default() -> Self {
        CodelConfig { target_ms: 5.0, interval_ms: 100.0, ecn: false, ce_threshold_ms: 0.0 }
    }
}

impl Discipline for CodelConfig {
    const NAME: &'static str = "codel";
    const SUMMARY: &'static str = "CoDel: drops (or marks) at dequeue when packets wait longer than target (Linux codel, RFC 8289)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "target_ms", unit: "ms", doc: "acceptable standing queue delay (sojourn time)" },
        ParamDoc { name: "interval_ms", unit: "ms", doc: "the sojourn must stay above target this long before the first drop" },
        ParamDoc { name: "ecn", unit: "", doc: "CE-mark ECN-capable packets instead of dropping them" },
        ParamDoc { name: "ce_threshold_ms", unit: "ms", doc: "CE-mark ECT packets whose sojourn exceeds this (0 = off)" },
    ];

    fn validate(&self, _ctx: &QueueContext) -> Result<(), String> {
        check_ms("target_ms", self.target_ms, None, CODEL_MAX_MS)?;
        check_ms("interval_ms", self.interval_ms, None, CODEL_MAX_MS)?;
        check_ms("ce_threshold_ms", self.ce_threshold_ms, Some("off"), CODEL_MAX_MS)
    }

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        let params = CodelParams::new(self.target_ms, self.interval_ms, self.ce_threshold_ms, self.ecn, ctx.mtu);
        Box::new(CodelQueue { fifo: Fifo::new(ctx.limit, None), params, vars: CodelVars::default() })
    }
}

/// The backlog of `sch_codel` is the qdisc's own.
impl CodelSource for Fifo {
    fn pop(&mut self) -> Option<Packet> {
        self.pop_oldest()
    }
    fn backlog(&self) -> u64 {
        self.len_bytes()
    }
}

#[derive(Debug)]
pub struct CodelQueue {
    fifo: Fifo,
    params: CodelParams,
    vars: CodelVars,
}

impl Queue for CodelQueue {
    fn enqueue(&mut self, pkt: Packet, now: SimTime, sink: &mut DropSink) {
        if self.fifo.fits(&pkt) {
            let backlog = self.fifo.len_packets();
            self.fifo.push(pkt, now, backlog, sink);
        } else {
            sink.drop(pkt, DropReason::Tail);
        }
    }

    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        self.vars.dequeue(&self.params, &mut self.fifo, now, sink)
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
    use super::super::fifo::tests::{pkt, seq};
    use super::*;
    use crate::queue::QueueLimit;
    use tcplab_core::{Ecn, SimDuration};

    fn queue(cfg: CodelConfig, limit: QueueLimit) -> CodelQueue {
        let ctx = QueueContext::for_tests(limit, None);
        CodelQueue {
            fifo: Fifo::new(ctx.limit, None),
            params: CodelParams::new(cfg.target_ms, cfg.interval_ms, cfg.ce_threshold_ms, cfg.ecn, ctx.mtu),
            vars: CodelVars::default(),
        }
    }
    fn ns(v: u64) -> SimTime {
        SimTime(v)
    }
    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }
    /// A 1500-byte packet (the MTU).
    fn full(i: u32) -> Packet {
        pkt(i, 1448)
    }
    /// Dequeues at `t`; returns the sequence number sent and the Aqm drops so far.
    fn deq(q: &mut CodelQueue, t: SimTime, sink: &mut DropSink) -> (u32, u64) {
        let p = q.dequeue(t, sink).expect("a packet");
        (seq(&p), sink.aqm)
    }

    /// 100 full-size packets queued at 0; the sojourn of every later dequeue is its time.
    fn standing_queue(cfg: CodelConfig) -> (CodelQueue, DropSink) {
        let (mut q, mut sink) = (queue(cfg, QueueLimit::Packets(1000)), DropSink::default());
        for i in 0..100 {
            q.enqueue(full(i), SimTime::ZERO, &mut sink);
        }
        (q, sink)
    }

    // CoDel units (1024 ns): target 5 ms = 4882, interval 100 ms = 97656.
    // 10 ms = 9765.625 → 9765: above target, first_above_time = 9765 + 97656 = 107421.
    // 110.000 ms → 107421 (not after 107421); 110.001 ms → 107422: first drop, count 1,
    // rec_inv_sqrt 0xFFFF, drop_next = 107422 + 97654 = 205076 (= 209 997 824 ns).
    // count 2: rec 32769 (0.50002, Linux's first Newton step gives 1/2, not 1/√2):
    //   drop_next = 205076 + 48829 = 253905 (259 998 720 ns);
    // count 3: rec 36864 (0.5625): +54931 = 308836 (316 248 064 ns);
    // count 4: rec 31968 (0.4878): +47635 = 356471 (365 026 304 ns).
    #[test]
    fn drop_schedule_follows_the_fixed_point_control_law() {
        let (mut q, mut sink) = standing_queue(CodelConfig::default());
        assert_eq!(deq(&mut q, ms(10), &mut sink), (0, 0));
        assert_eq!(q.vars.first_above_time, 107421);
        assert_eq!(deq(&mut q, ms(110), &mut sink), (1, 0), "not after first_above_time yet");
        // Packet 2 is dropped, packet 3 sent.
        assert_eq!(deq(&mut q, ns(110_001_000), &mut sink), (3, 1));
        assert_eq!((q.vars.count, q.vars.lastcount, q.vars.drop_next), (1, 1, 205076));
        let mut next = 4;
        for (due, count) in [(209_997_824, 2), (259_998_720, 3), (316_248_064, 4)] {
            // One unit before the scheduled drop: sent; at it: one dropped, the next sent.
            assert_eq!(deq(&mut q, ns(due - 1024), &mut sink), (next, count - 1));
            assert_eq!(deq(&mut q, ns(due), &mut sink), (next + 2, count));
            assert_eq!(q.vars.count as u64, count);
            next += 3;
        }
        assert_eq!((q.vars.drop_next, q.vars.rec_inv_sqrt), (356471, 31968));
        assert_eq!(sink.drops(), sink.aqm);
        assert_eq!(q.len_packets(), 100 - next);
        assert_eq!(q.len_bytes(), 1500 * (100 - next) as u64);
    }

    // A dequeue long after drop_next catches up in one call: at 400 ms (390625 units) with
    // drop_next 205076, packets 3, 4, 5, 6 are dropped (counts 2, 3, 4, 5; drop_next 253905,
    // 308836, 356471, then 356471 + 43116 = 399587 with rec 28935, which is after 390625),
    // packet 7 is sent.
    #[test]
    fn a_late_dequeue_drops_every_packet_due_in_one_call() {
        let (mut q, mut sink) = standing_queue(CodelConfig::default());
        deq(&mut q, ms(10), &mut sink);
        assert_eq!(deq(&mut q, ns(110_001_000), &mut sink), (2, 1));
        assert_eq!(deq(&mut q, ms(400), &mut sink), (7, 5));
        assert_eq!((q.vars.count, q.vars.drop_next), (5, 399587));
    }

    // Leaving and re-entering: after drops up to count 4 (lastcount 1), the queue drains and
    // refills. Re-entering within 16 intervals of drop_next reuses count − lastcount = 3:
    // one Newton step from rec 31968 with count 3 gives 36542 (0.5576), so the next drop is
    // 97656 · 36542·2¹⁶ >> 32 = 54451 units later. Re-entering after more than 16 intervals
    // starts again from count 1.
    #[test]
    fn re_entering_the_dropping_state_reuses_count_minus_lastcount() {
        let (mut q, mut sink) = standing_queue(CodelConfig::default());
        deq(&mut q, ms(10), &mut sink);
        for t in [110_001_000, 209_997_824, 259_998_720, 316_248_064] {
            deq(&mut q, ns(t), &mut sink);
        }
        assert_eq!((q.vars.count, q.vars.lastcount, q.vars.drop_next), (4, 1, 356471));
        // Drain before the next drop is due; the last packets leave the dropping state
        // (backlog at most one MTU).
        while q.dequeue(ms(320), &mut sink).is_some() {}
        assert!(!q.vars.dropping);
        assert_eq!(sink.aqm, 4);
        // Refill at 330 ms; above target at 340 ms, eligible after 440 ms.
        for i in 100..150 {
            q.enqueue(full(i), ms(330), &mut sink);
        }
        // 340 ms = 332031 units, sojourn 332031 − 322265 = 9766: first_above_time 429687.
        deq(&mut q, ms(340), &mut sink);
        assert_eq!(deq(&mut q, ms(440), &mut sink), (101, 4), "440 ms = 429687, not after it");
        // 440.001 ms = 429688: drop; 429688 − drop_next 356471 < 16 intervals.
        assert_eq!(deq(&mut q, ns(440_001_000), &mut sink), (103, 5));
        assert_eq!((q.vars.count, q.vars.lastcount, q.vars.rec_inv_sqrt), (3, 3, 36542));
        assert_eq!(q.vars.drop_next, 429688 + 54451);

        // Now a cycle that starts more than 16 intervals (1.6 s) after drop_next.
        while q.dequeue(ms(450), &mut sink).is_some() {}
        for i in 150..200 {
            q.enqueue(full(i), ms(3000), &mut sink);
        }
        deq(&mut q, ms(3010), &mut sink); // first_above_time 2939453 + 97656 = 3037109
        let before = sink.aqm;
        assert_eq!(deq(&mut q, ns(3_110_001_000), &mut sink).1, before + 1); // 3037110
        assert_eq!((q.vars.count, q.vars.lastcount, q.vars.rec_inv_sqrt), (1, 1, u16::MAX));
        assert_eq!(q.vars.drop_next, 3037110 + 97654);
    }

    // Backlog after the dequeue ≤ MTU (1500 B): never a drop, however long packets wait.
    // One 1500-byte packet queued, one arriving per dequeue every 10 ms: each dequeued
    // packet waited 10 or 20 ms (> target) but leaves exactly 1500 bytes behind. With two
    // queued (3000 bytes behind), the first drop comes after an interval.
    #[test]
    fn no_drop_while_the_backlog_is_at_most_one_mtu() {
        for (depth, first_drop) in [(1u32, None), (2, Some(110))] {
            let (mut q, mut sink) = (queue(CodelConfig::default(), QueueLimit::Packets(1000)), DropSink::default());
            let mut i = 0;
            for _ in 0..depth {
                q.enqueue(full(i), SimTime::ZERO, &mut sink);
                i += 1;
            }
            let mut dropped_at = None;
            for step in 1..=100u64 {
                q.enqueue(full(i), ms(10 * (step - 1)), &mut sink);
                i += 1;
                q.dequeue(ms(10 * step), &mut sink);
                if sink.aqm > 0 && dropped_at.is_none() {
                    dropped_at = Some(10 * step);
                }
            }
            // With 2 queued: above target from 10 ms (first_above_time 9765 + 97656 =
            // 107421), and 110 ms = 107421 is not after it: the drop comes at 120 ms.
            assert_eq!(dropped_at, first_drop.map(|t: u64| t + 10), "depth {depth}");
        }
    }

    // ecn = true: ECT packets are marked, not dropped (an already-CE one counts as marked
    // but adds no mark); Not-ECT packets are still dropped. After a mark in the dropping
    // state, Linux schedules from drop_next (205076 + 48829 = 253905), even when the
    // dequeue came late (ns-3 would schedule from now).
    #[test]
    fn ecn_marks_capable_packets_and_drops_the_others() {
        let cfg = CodelConfig { ecn: true, ..Default::default() };
        let (mut q, mut sink) = (queue(cfg, QueueLimit::Packets(1000)), DropSink::default());
        let ecns = [Ecn::Ect0, Ecn::Ect0, Ecn::Ect0, Ecn::NotEct, Ecn::Ect0, Ecn::Ce, Ecn::Ect0];
        for (i, ecn) in ecns.into_iter().chain(std::iter::repeat_n(Ecn::Ect0, 20)).enumerate() {
            q.enqueue(Packet { ecn, ..full(i as u32) }, SimTime::ZERO, &mut sink);
        }
        q.dequeue(ms(10), &mut sink);
        q.dequeue(ms(110), &mut sink);
        // Enters the dropping state on packet 2 (ECT): marked and sent.
        let p = q.dequeue(ns(110_001_000), &mut sink).unwrap();
        assert_eq!((seq(&p), p.ecn, sink.ce_marks, sink.aqm), (2, Ecn::Ce, 1, 0));
        assert_eq!(q.vars.drop_next, 205076);
        // Next signal due for packet 3 (Not-ECT), 5 ms late: dropped; packet 4 is sent unmarked.
        let p = q.dequeue(ns(209_997_824 + 5_000_000), &mut sink).unwrap();
        assert_eq!((seq(&p), p.ecn, sink.ce_marks, sink.aqm), (4, Ecn::Ect0, 1, 1));
        assert_eq!(q.vars.drop_next, 253905);
        // Packet 5 is already CE: the signal is "sent" (no drop, no new mark counted).
        let p = q.dequeue(ns(259_998_720 + 20_000_000), &mut sink).unwrap();
        assert_eq!((seq(&p), p.ecn, sink.ce_marks, sink.aqm), (5, Ecn::Ce, 1, 1));
        assert_eq!(q.vars.drop_next, 308836, "from drop_next, not from now");
        let p = q.dequeue(ns(316_248_064), &mut sink).unwrap();
        assert_eq!((seq(&p), p.ecn, sink.ce_marks, sink.aqm, q.vars.count), (6, Ecn::Ce, 2, 1, 4));
    }

    // ce_threshold 1 ms = 976 units: a sojourn of 976 units (1.000 ms) is not above it, 977
    // (1.001 ms) is. Marking is independent of `ecn` and of the drop logic.
    #[test]
    fn ce_threshold_marks_ect_packets_whose_sojourn_exceeds_it() {
        let cfg = CodelConfig { ce_threshold_ms: 1.0, ..Default::default() };
        let (mut q, mut sink) = (queue(cfg, QueueLimit::Packets(10)), DropSink::default());
        for (i, ecn) in [Ecn::Ect0, Ecn::Ect0, Ecn::NotEct].into_iter().enumerate() {
            q.enqueue(Packet { ecn, ..pkt(i as u32, 100) }, SimTime::ZERO, &mut sink);
        }
        assert_eq!(q.dequeue(ms(1), &mut sink).unwrap().ecn, Ecn::Ect0);
        assert_eq!(q.dequeue(ns(1_001_000), &mut sink).unwrap().ecn, Ecn::Ce);
        assert_eq!(q.dequeue(ms(2), &mut sink).unwrap().ecn, Ecn::NotEct);
        assert_eq!((sink.ce_marks, sink.drops()), (1, 0));
    }

    #[test]
    fn a_full_buffer_refuses_arrivals_as_tail_drops() {
        let (mut q, mut sink) = (queue(CodelConfig::default(), QueueLimit::Packets(3)), DropSink::default());
        for i in 0..5 {
            q.enqueue(full(i), SimTime::ZERO, &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.len_bytes()), (2, 3, 4500));
        // Bytes: 4000 B hold two 1500-byte packets and a 552-byte one (3552), not a fourth.
        let (mut q, mut sink) = (queue(CodelConfig::default(), QueueLimit::Bytes(4000)), DropSink::default());
        for p in [full(0), full(1), pkt(2, 500), pkt(3, 500)] {
            q.enqueue(p, SimTime::ZERO, &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.len_bytes()), (1, 3, 3552));
        assert_eq!(q.dequeue(SimTime::ZERO, &mut sink).map(|p| p.enqueued_at), Some(SimTime::ZERO));
    }

    #[test]
    fn packets_and_bytes_are_conserved() {
        let (mut q, mut sink) = (queue(CodelConfig::default(), QueueLimit::Packets(200)), DropSink::default());
        let mut rng = tcplab_core::SimRng::stream(7, "codel");
        let (mut sent, mut offered, mut bytes_in, mut bytes_out) = (0u64, 0u64, 0u64, 0u64);
        let mut t = SimTime::ZERO;
        for i in 0..20_000u32 {
            t += SimDuration::from_micros(rng.below(2000) as u64);
            // Arrivals outpace departures two to one: CoDel drops, and the buffer overflows too.
            let p = pkt(i, 100 + rng.below(1400));
            bytes_in += p.size as u64;
            offered += 1;
            q.enqueue(p, t, &mut sink);
            if i % 2 == 0 {
                if let Some(p) = q.dequeue(t, &mut sink) {
                    sent += 1;
                    bytes_out += p.size as u64;
                }
            }
        }
        assert!(sink.aqm > 100 && sink.tail > 0, "{sink:?}");
        assert_eq!(offered, sent + sink.drops() + q.len_packets() as u64);
        let mut left = 0;
        while let Some(p) = q.dequeue(t, &mut sink) {
            left += p.size as u64;
        }
        assert_eq!(q.len_bytes(), 0);
        assert!(bytes_in >= bytes_out + left);
    }

    #[test]
    fn validate_names_the_parameter_and_what_is_allowed() {
        let ctx = QueueContext::for_tests(QueueLimit::Packets(100), None);
        assert_eq!(CodelConfig::default().validate(&ctx), Ok(()));
        let bad = |c: CodelConfig| c.validate(&ctx).unwrap_err();
        assert_eq!(
            bad(CodelConfig { target_ms: -1.0, ..Default::default() }),
            "target_ms: -1 is out of range; allowed: 0.001 to 2000000 ms"
        );
        assert_eq!(
            bad(CodelConfig { interval_ms: 0.0, ..Default::default() }),
            "interval_ms: 0 is out of range; allowed: 0.001 to 2000000 ms"
        );
        assert_eq!(
            bad(CodelConfig { ce_threshold_ms: -2.0, ..Default::default() }),
            "ce_threshold_ms: -2 is out of range; allowed: 0 (off) or 0.001 to 2000000 ms"
        );
    }

    #[test]
    fn build_uses_the_link_mtu_and_parses_from_a_table() {
        let cfg: CodelConfig = serde_json::from_value(serde_json::json!({ "target_ms": 2.5, "ecn": true })).unwrap();
        assert_eq!(cfg, CodelConfig { target_ms: 2.5, ecn: true, ..Default::default() });
        let mut ctx = QueueContext::for_tests(QueueLimit::Packets(10), None);
        ctx.mtu = 9000;
        let mut q = cfg.build(ctx);
        let mut sink = DropSink::default();
        q.enqueue(full(0), SimTime::ZERO, &mut sink);
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1500));
    }
}
