//! FQ, the Fair Queue packet scheduler with per-flow pacing (Linux `sch_fq`, the qdisc
//! Linux pairs with BBR at the sending host): one FIFO per flow, served round robin with a
//! byte `credit` per flow (`quantum` per round, `initial_quantum` for a new flow), flows that
//! become active joining a *new* list served before the *old* one; with `maxrate_mbps`,
//! each flow's packets are spaced by their length at that rate.
//!
//! What it follows (Linux function names):
//! * classification (`fq_classify`): one flow per packet flow id — Linux's one flow per
//!   socket, a TCP connection's data and ACKs alike;
//! * enqueue (`fq_enqueue`): the arrival is refused ([`DropReason::Tail`]) when `limit`
//!   packets (the link's buffer) are queued in flows, or when its own flow already holds
//!   `flow_limit` packets (Linux `QDISC_DROP_FLOW_LIMIT`: the arrival refused by its full
//!   flow queue, no queued packet evicted, hence Tail rather than Overlimit). A flow not in
//!   a list joins the tail of the new list; a new flow starts with `initial_quantum` of
//!   credit, a flow idle for longer than `refill_delay_ms` gets at least `quantum`;
//! * the fast path (`fq_fastpath_check`, recent kernels): without `maxrate_mbps`, an arrival
//!   while no flow holds a packet and fewer than 8 wait in the fast path goes into that
//!   one FIFO, which is served before any flow and charges no credit;
//! * dequeue (`fq_dequeue`): flows whose pacing time has come move from the throttled set to
//!   the old list's tail, earliest first (`fq_check_throttled`); then the head of the new
//!   list, else of the old: a flow with credit ≤ 0 gets `quantum` more and moves to the old
//!   list's tail; a flow whose head packet is not yet due is throttled until it is; a flow
//!   found empty moves to the old list if it came from the new list, else leaves the lists;
//!   the packet sent is charged to the credit. When every flow with packets is throttled,
//!   dequeue returns None and [`Queue::next_ready_at`] is the earliest pacing time (Linux
//!   arms its watchdog there);
//! * `maxrate_mbps` (`flow_max_rate`, in bytes/s as Linux keeps it): after each packet the
//!   flow may send again len·10⁹/rate ns later (integer ns, at most 1 s), shortened by up to
//!   half for the time the flow's previous pacing time had already passed (Linux's allowance
//!   for timer drift);
//! * `ce_threshold_ms`: CE-marks ECT packets that leave more than this after they were due
//!   (their arrival, or their flow's pacing time if later); fast-path packets are not
//!   checked.
//!
//! Packets carry no EDT departure time (`skb->tstamp`) of their own: tcplab's senders pace
//! themselves (`tcp.pacing = "fq"`, BBR) and hand each packet to the link at its departure
//! time, so every packet is due on arrival — as a Linux TCP packet stamped with its EDT and
//! queued then. Hence `horizon`/`horizon_drop` (drop or cap packets stamped beyond now + 10
//! s) never act and are left out; so is what applies only to packets without a timestamp
//! (pacing at the socket's `sk_pacing_rate` and `low_rate_threshold`).
//!
//! Simplified:
//! * classification is by flow id on every link, as if each packet still had its socket:
//!   Linux hashes forwarded packets (no socket) into 1024 orphan flows, so flows on a router
//!   can share one; no SYN-ACK/TIME_WAIT orphans;
//! * one priority band: tcplab's packets are all priority 0 (Linux band 1), so the bands'
//!   weighted round robin (`priomap`, `weights`) has no effect and is left out;
//! * packets are charged their IP size (Linux's `qdisc_pkt_len` includes the 14-byte
//!   Ethernet header), and `quantum`/`initial_quantum` default to 2 and 10 × 1514 bytes, the
//!   `psched_mtu` of a 1500-byte-MTU Ethernet device, whatever the link's MTU;
//! * a buffer in bytes limits the bytes queued in flows like `bfifo` (Linux: packets only);
//! * pacing wake-ups are exact (Linux's hrtimer has 10 µs of slack), `refill_delay_ms` is
//!   compared in ns (Linux: jiffies);
//! * no garbage collection of idle flows (Linux frees a flow detached for 3 s when a lookup
//!   passes it; here a flow keeps its state, so one idle that long returns with its credit
//!   topped up to `quantum` rather than a fresh `initial_quantum`), no offload horizon, no
//!   statistics beyond the [`DropSink`]'s counts.
//!
//! ns-3 has no counterpart of `sch_fq` (its FqCoDelQueueDisc is fq_codel).

use super::{check_ms, Discipline, DropReason, DropSink, ParamDoc, Queue, QueueContext, QueueLimit, LINUX_MAX_MS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use tcplab_core::{FlowId, Packet, SimDuration, SimTime};

/// Linux's largest `quantum` (`fq_change`).
const QUANTUM_MAX: u32 = 1 << 20;
/// Fast-path packets beyond which arrivals go to their flows (`fq_fastpath_check`).
const FASTPATH_MAX: usize = 8;
/// The longest pacing gap after one packet (Linux clamps to `NSEC_PER_SEC`).
const MAX_GAP_NS: u64 = 1_000_000_000;
/// Largest rate Linux's u32 `maxrate` takes in bytes/s (`~0U` means none).
const MAXRATE_MAX_BYTES: u64 = u32::MAX as u64 - 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FqConfig {
    /// Bytes a flow may send per round robin round.
    pub quantum: u32,
    /// Credit of a flow's first round, bytes.
    pub initial_quantum: u32,
    /// Most packets queued per flow; beyond, arrivals of that flow are dropped.
    pub flow_limit: u32,
    /// Pacing cap of each flow, Mbit/s (0 = none).
    pub maxrate_mbps: f64,
    /// A flow idle longer than this gets at least `quantum` of credit back, ms.
    pub refill_delay_ms: f64,
    /// CE-mark ECT packets that leave more than this after they were due, ms (0 = off).
    pub ce_threshold_ms: f64,
}

impl Default for FqConfig {
    /// Linux `fq_init` (quantum and initial quantum: 2 and 10 × `psched_mtu` of a
    /// 1500-byte-MTU Ethernet device; ce_threshold off; maxrate none).
    fn default() -> Self {
        FqConfig {
            quantum: 2 * 1514,
            initial_quantum: 10 * 1514,
            flow_limit: 100,
            maxrate_mbps: 0.0,
            refill_delay_ms: 40.0,
            ce_threshold_ms: 0.0,
        }
    }
}

impl FqConfig {
    /// `maxrate_mbps` in bytes/s rounded as `tc` gives Linux its u32 rate; None if 0.
    fn maxrate_bytes(&self) -> Option<u64> {
        (self.maxrate_mbps != 0.0).then(|| (self.maxrate_mbps * 1e6 / 8.0).round() as u64)
    }
}

/// A time parameter in ms, kept at Linux's µs resolution (None if 0).
fn us_duration(ms: f64) -> Option<SimDuration> {
    (ms > 0.0).then(|| SimDuration::from_micros((ms * 1000.0).round() as u64))
}

impl Discipline for FqConfig {
    const NAME: &'static str = "fq";
    const SUMMARY: &'static str = "FQ: per-flow fair queueing with optional per-flow pacing (Linux fq)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "quantum", unit: "bytes", doc: "bytes a flow may send per round robin round" },
        ParamDoc { name: "initial_quantum", unit: "bytes", doc: "credit of a new flow's first round" },
        ParamDoc { name: "flow_limit", unit: "packets", doc: "most packets queued per flow; a flow's arrivals beyond are dropped" },
        ParamDoc { name: "maxrate_mbps", unit: "Mbit/s", doc: "pacing cap of each flow (0 = none)" },
        ParamDoc { name: "refill_delay_ms", unit: "ms", doc: "a flow idle longer than this gets at least quantum of credit back" },
        ParamDoc { name: "ce_threshold_ms", unit: "ms", doc: "CE-mark ECT packets that leave more than this after they were due (0 = off)" },
    ];

    fn validate(&self, _ctx: &QueueContext) -> Result<(), String> {
        if !(1..=QUANTUM_MAX).contains(&self.quantum) {
            return Err(format!("quantum: {} is out of range; allowed: 1 to {QUANTUM_MAX} bytes", self.quantum));
        }
        if self.initial_quantum > i32::MAX as u32 {
            return Err(format!("initial_quantum: {} is out of range; allowed: 0 to {} bytes", self.initial_quantum, i32::MAX));
        }
        if self.flow_limit == 0 {
            return Err("flow_limit: 0 is out of range; allowed: ≥ 1 packet".into());
        }
        let rate_ok = self.maxrate_mbps.is_finite() && self.maxrate_bytes().is_none_or(|b| (1..=MAXRATE_MAX_BYTES).contains(&b));
        if !rate_ok || self.maxrate_mbps < 0.0 {
            return Err(format!(
                "maxrate_mbps: {} is out of range; allowed: 0 (none) or 0.000008 to {} Mbit/s",
                self.maxrate_mbps,
                MAXRATE_MAX_BYTES as f64 * 8.0 / 1e6
            ));
        }
        check_ms("refill_delay_ms", self.refill_delay_ms, Some("refill at once"), LINUX_MAX_MS)?;
        check_ms("ce_threshold_ms", self.ce_threshold_ms, Some("off"), LINUX_MAX_MS)
    }

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        Box::new(FqQueue::new(self, ctx.limit))
    }
}

/// Where a flow is (Linux tells them apart by `fq_flow.next` and the `age` bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// In no list since this time (`fq_flow_set_detached`); a new flow is detached at its
    /// creation.
    Detached(SimTime),
    /// In the new or the old list.
    Listed,
    /// Waiting in the throttled set for its pacing time.
    Throttled,
}

/// One flow (Linux `struct fq_flow`).
#[derive(Debug)]
struct Flow {
    packets: VecDeque<Packet>,
    credit: i32,
    /// When maxrate lets the flow send next (`time_next_packet`; None: never paced yet).
    next_packet_at: Option<SimTime>,
    place: Place,
}

#[derive(Debug)]
pub struct FqQueue {
    quantum: i32,
    initial_quantum: i32,
    flow_limit: u32,
    /// `flow_max_rate`, bytes/s.
    maxrate: Option<u64>,
    refill_delay: SimDuration,
    ce_threshold: Option<SimDuration>,
    limit: QueueLimit,
    /// Flow id → index in `flows`.
    index: HashMap<FlowId, u32>,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Throttled flows by pacing time, ties in the order they were throttled (`q->delayed`).
    throttled: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    throttle_seq: u64,
    /// Linux's `q->internal`, the fast path.
    fastpath: VecDeque<Packet>,
    /// Packets and bytes in flows (Linux's `band_pkt_count`, which the limit applies to).
    flow_packets: u32,
    flow_bytes: u64,
    fastpath_bytes: u64,
}

impl FqQueue {
    fn new(cfg: &FqConfig, limit: QueueLimit) -> Self {
        FqQueue {
            quantum: cfg.quantum as i32,
            initial_quantum: cfg.initial_quantum as i32,
            flow_limit: cfg.flow_limit,
            maxrate: cfg.maxrate_bytes(),
            refill_delay: us_duration(cfg.refill_delay_ms).unwrap_or(SimDuration::ZERO),
            ce_threshold: us_duration(cfg.ce_threshold_ms),
            limit,
            index: HashMap::new(),
            flows: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            throttled: BinaryHeap::new(),
            throttle_seq: 0,
            fastpath: VecDeque::new(),
            flow_packets: 0,
            flow_bytes: 0,
            fastpath_bytes: 0,
        }
    }

    fn full(&self, pkt: &Packet) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.flow_packets >= n,
            QueueLimit::Bytes(b) => self.flow_bytes + pkt.size as u64 > b,
        }
    }

    /// `fq_fastpath_check` for a packet due now: no maxrate, no flow holding a packet (none
    /// can be throttled without maxrate) and room in the fast path.
    fn fastpath_open(&self) -> bool {
        self.maxrate.is_none() && self.flow_packets == 0 && self.fastpath.len() < FASTPATH_MAX
    }

    /// The index of `flow`'s state, created with `initial_quantum` of credit if new.
    fn classify(&mut self, flow: FlowId, now: SimTime) -> usize {
        let next = self.flows.len() as u32;
        let idx = *self.index.entry(flow).or_insert(next);
        if idx == next {
            let credit = self.initial_quantum;
            self.flows.push(Flow { packets: VecDeque::new(), credit, next_packet_at: None, place: Place::Detached(now) });
        }
        idx as usize
    }

    /// Removes the head of the new list (`from_new`) or of the old list.
    fn pop_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// `fq_check_throttled`: flows whose pacing time has come join the old list's tail.
    fn unthrottle_due(&mut self, now: SimTime) {
        while let Some(&Reverse((at, _, idx))) = self.throttled.peek() {
            if at > now {
                break;
            }
            self.throttled.pop();
            self.flows[idx as usize].place = Place::Listed;
            self.old_flows.push_back(idx);
        }
    }

    /// The gap maxrate puts after a packet of `size` bytes: len·10⁹/rate ns, at most 1 s,
    /// less up to half of it for the time since the flow's previous pacing time.
    fn pacing_gap(rate: u64, size: u32, previous: Option<SimTime>, now: SimTime) -> SimDuration {
        let len = (size as u64 * 1_000_000_000 / rate).min(MAX_GAP_NS);
        let late = previous.map_or(0, |t| now.saturating_since(t).as_nanos());
        SimDuration::from_nanos(len - late.min(len / 2))
    }
}

impl Queue for FqQueue {
    fn enqueue(&mut self, mut pkt: Packet, now: SimTime, sink: &mut DropSink) {
        if self.full(&pkt) {
            sink.drop(pkt, DropReason::Tail);
            return;
        }
        pkt.enqueued_at = now;
        if self.fastpath_open() {
            self.fastpath_bytes += pkt.size as u64;
            self.fastpath.push_back(pkt);
            return;
        }
        let idx = self.classify(pkt.flow, now);
        let flow = &mut self.flows[idx];
        if flow.packets.len() >= self.flow_limit as usize {
            sink.drop(pkt, DropReason::Tail);
            return;
        }
        if let Place::Detached(since) = flow.place {
            flow.place = Place::Listed;
            self.new_flows.push_back(idx as u32);
            if now.saturating_since(since) > self.refill_delay {
                flow.credit = flow.credit.max(self.quantum);
            }
        }
        self.flow_packets += 1;
        self.flow_bytes += pkt.size as u64;
        flow.packets.push_back(pkt);
    }

    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        if let Some(p) = self.fastpath.pop_front() {
            self.fastpath_bytes -= p.size as u64;
            return Some(p);
        }
        self.unthrottle_due(now);
        loop {
            let from_new = !self.new_flows.is_empty();
            let idx = *self.new_flows.front().or(self.old_flows.front())? as usize;
            let flow = &mut self.flows[idx];
            if flow.credit <= 0 {
                flow.credit += self.quantum;
                self.pop_head(from_new);
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let Some(head) = flow.packets.front() else {
                // An emptied new flow waits a turn in the old list, so that a flow sending
                // a packet at a time cannot starve the old ones.
                if from_new {
                    self.new_flows.pop_front();
                    self.old_flows.push_back(idx as u32);
                } else {
                    self.old_flows.pop_front();
                    flow.place = Place::Detached(now);
                }
                continue;
            };
            let due = flow.next_packet_at.map_or(head.enqueued_at, |t| t.max(head.enqueued_at));
            if now < due {
                flow.next_packet_at = Some(due);
                flow.place = Place::Throttled;
                self.pop_head(from_new);
                self.throttled.push(Reverse((due, self.throttle_seq, idx as u32)));
                self.throttle_seq += 1;
                continue;
            }
            let mut p = flow.packets.pop_front().expect("peeked above");
            self.flow_packets -= 1;
            self.flow_bytes -= p.size as u64;
            if self.ce_threshold.is_some_and(|t| now - due > t) {
                sink.ce_mark(&mut p);
            }
            flow.credit -= p.size as i32;
            if let Some(rate) = self.maxrate {
                flow.next_packet_at = Some(now + Self::pacing_gap(rate, p.size, flow.next_packet_at, now));
            }
            return Some(p);
        }
    }

    fn next_ready_at(&self) -> Option<SimTime> {
        self.throttled.peek().map(|Reverse((at, _, _))| *at)
    }

    fn len_packets(&self) -> u32 {
        self.flow_packets + self.fastpath.len() as u32
    }

    fn len_bytes(&self) -> u64 {
        self.flow_bytes + self.fastpath_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::fifo::tests::{pkt, seq};
    use super::*;
    use tcplab_core::{Ecn, SimRng};

    fn queue(cfg: FqConfig, limit: QueueLimit) -> FqQueue {
        FqQueue::new(&cfg, limit)
    }
    /// Packet `i` of flow `flow` with `size` wire bytes.
    fn fp(flow: u32, i: u32, size: u32) -> Packet {
        Packet { flow, ..pkt(i, size - 52) }
    }
    fn us(v: u64) -> SimTime {
        SimTime(v * 1_000)
    }
    /// (flow, seq) of everything dequeued at `t`.
    fn drain(q: &mut FqQueue, t: SimTime, sink: &mut DropSink) -> Vec<(u32, u32)> {
        std::iter::from_fn(|| q.dequeue(t, sink)).map(|p| (p.flow, seq(&p))).collect()
    }
    fn big() -> QueueLimit {
        QueueLimit::Packets(10_000)
    }

    // Quantum = initial quantum = 3000. Eight 100-byte packets of flow 3 arrive at an empty
    // qdisc: the fast path (no flow holds a packet, fewer than 8 in it) takes them all. Then
    // A1–A6 (1000 B) and B1–B4 (1500 B) go to their flows: new list [A, B]. The fast path is
    // served first; then A: 3000 → A1 A2 A3 (0) → +3000, to old [A]; B: B1 B2 (0) → +3000,
    // old [A, B]; A: A4 A5 A6 → +3000 [B, A]; B: B3 B4; A and B found empty in the old list
    // leave it. Each flow sends 3000 bytes a round whatever its packet size.
    #[test]
    fn round_robin_gives_each_flow_quantum_bytes_a_round_after_the_fast_path() {
        let cfg = FqConfig { quantum: 3000, initial_quantum: 3000, ..Default::default() };
        let (mut q, mut sink) = (queue(cfg, big()), DropSink::default());
        for i in 1..=8 {
            q.enqueue(fp(3, i, 100), SimTime::ZERO, &mut sink);
        }
        assert_eq!((q.fastpath.len(), q.flow_packets), (8, 0));
        for i in 1..=6 {
            q.enqueue(fp(1, i, 1000), SimTime::ZERO, &mut sink);
        }
        for i in 1..=4 {
            q.enqueue(fp(2, i, 1500), SimTime::ZERO, &mut sink);
        }
        assert_eq!((q.len_packets(), q.len_bytes()), (18, 800 + 6000 + 6000));
        let order = drain(&mut q, SimTime::ZERO, &mut sink);
        let expected: Vec<(u32, u32)> =
            (1..=8).map(|i| (3, i)).chain([(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (1, 4), (1, 5), (1, 6), (2, 3), (2, 4)]).collect();
        assert_eq!(order, expected);
        assert_eq!((q.len_packets(), q.len_bytes(), sink.drops()), (0, 0, 0));
        assert!(q.new_flows.is_empty() && q.old_flows.is_empty());
        assert!(q.flows.iter().all(|f| matches!(f.place, Place::Detached(_))));
    }

    // Defaults: quantum 3028, initial quantum 15140, 1500-byte packets. Flow A queues 40:
    // A1–A8 take the fast path, A9–A40 its flow. Its initial credit sends A9–A19 (15140 −
    // 11·1500 = −1360); then +3028 = 1668 sends A20, A21 (−1332). Now B1–B20 arrive: B is
    // new, served first with 15140: B1–B11 (−1360), +3028 = 1668 → old [A, B]; A −1332 +
    // 3028 = 1696 → [B, A]; B12, B13 (−1332) → +3028 [A, B]; A22, A23 (−1304) → [B, A];
    // B14, B15; A24, A25. The new flow's first round is 11 packets where a round is 2.
    #[test]
    fn a_new_flow_sends_its_initial_quantum_before_the_round_robin() {
        let (mut q, mut sink) = (queue(FqConfig::default(), big()), DropSink::default());
        for i in 1..=40 {
            q.enqueue(fp(1, i, 1500), SimTime::ZERO, &mut sink);
        }
        let first: Vec<u32> = (0..21).map(|_| seq(&q.dequeue(SimTime::ZERO, &mut sink).unwrap())).collect();
        assert_eq!(first, (1..=21).collect::<Vec<_>>());
        for i in 1..=20 {
            q.enqueue(fp(2, i, 1500), SimTime::ZERO, &mut sink);
        }
        let next: Vec<(u32, u32)> = (0..19).map(|_| q.dequeue(SimTime::ZERO, &mut sink).map(|p| (p.flow, seq(&p))).unwrap()).collect();
        let expected: Vec<(u32, u32)> =
            (1..=13).map(|i| (2, i)).chain([(1, 22), (1, 23), (2, 14), (2, 15), (1, 24), (1, 25)]).collect();
        assert_eq!(next, expected);
    }

    // Initial quantum 500, nine 1500-byte packets at 0: P1–P8 by the fast path, P9 from the
    // flow (500 − 1500 = −1000). At 1 ms dequeue finds the flow at the new list's head without
    // credit: +3028 = 2028, to the old list, where it is found empty and leaves the lists
    // (detached at 1 ms). Back after exactly refill_delay (40 ms) it keeps 2028; back later,
    // its credit is raised to the quantum, 3028.
    #[test]
    fn a_flow_idle_longer_than_refill_delay_gets_a_quantum_back() {
        for (back_at_us, credit) in [(41_000, 2028), (41_001, 3028)] {
            let cfg = FqConfig { initial_quantum: 500, ..Default::default() };
            let (mut q, mut sink) = (queue(cfg, big()), DropSink::default());
            for i in 1..=9 {
                q.enqueue(fp(1, i, 1500), SimTime::ZERO, &mut sink);
            }
            for _ in 0..9 {
                q.dequeue(SimTime::ZERO, &mut sink).unwrap();
            }
            assert_eq!(q.dequeue(us(1_000), &mut sink), None);
            assert_eq!(q.flows[0].place, Place::Detached(us(1_000)));
            // Eight packets of another flow fill the fast path; flow 1's goes to its flow.
            for i in 1..=8 {
                q.enqueue(fp(2, i, 1500), us(back_at_us), &mut sink);
            }
            q.enqueue(fp(1, 10, 1500), us(back_at_us), &mut sink);
            assert_eq!(q.flows[0].packets.len(), 1);
            assert_eq!(q.flows[0].credit, credit, "back at {back_at_us} µs");
        }
    }

    // flow_limit 100: of 120 arrivals of one flow at 0, 8 take the fast path, 100 fill the
    // flow and 12 are refused (Tail); another flow is still admitted. The buffer limits the
    // packets in flows (Linux's band count), not the fast path: with a 20-packet buffer,
    // 30 arrivals leave 8 + 20 queued and 2 refused.
    #[test]
    fn flow_limit_and_buffer_refuse_arrivals_as_tail_drops() {
        let (mut q, mut sink) = (queue(FqConfig::default(), big()), DropSink::default());
        for i in 0..120 {
            q.enqueue(fp(1, i, 1000), SimTime::ZERO, &mut sink);
        }
        q.enqueue(fp(2, 0, 1000), SimTime::ZERO, &mut sink);
        assert_eq!((sink.tail, sink.drops(), q.len_packets(), q.len_bytes()), (12, 12, 109, 109_000));
        let (mut q, mut sink) = (queue(FqConfig::default(), QueueLimit::Packets(20)), DropSink::default());
        for i in 0..30 {
            q.enqueue(fp(1, i, 1000), SimTime::ZERO, &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.fastpath.len()), (2, 28, 8));
        // In bytes: 8 fast-path packets, then the flow's bytes may not pass 5000.
        let (mut q, mut sink) = (queue(FqConfig::default(), QueueLimit::Bytes(5000)), DropSink::default());
        for i in 0..20 {
            q.enqueue(fp(1, i, 1000), SimTime::ZERO, &mut sink);
        }
        assert_eq!((sink.tail, q.len_packets(), q.len_bytes()), (7, 13, 13_000));
    }

    // maxrate 12 Mbit/s = 1 500 000 B/s: a 1500-byte packet buys its flow a 1 ms gap. Flow
    // 1 queues five at 0 (no fast path with maxrate). P1 leaves at 0 (due at once), next at
    // 1 ms: until then flow 1 is throttled and dequeue gives nothing, next_ready_at 1 ms.
    // Flow 2, without backlog, sends a 100-byte packet at 0.5 ms at once. P2 leaves at 1 ms
    // (on time, next 2 ms). Dequeued 0.3 ms late at 2.3 ms, P3's gap is 1 − 0.3 = 0.7 ms
    // (next 3 ms); P4 on time at 3 ms (next 4 ms); P5 1.9 ms late at 5.9 ms: the gap is cut
    // by at most half, 0.5 ms.
    #[test]
    fn maxrate_spaces_a_flows_packets_by_len_over_rate() {
        let cfg = FqConfig { maxrate_mbps: 12.0, ..Default::default() };
        let (mut q, mut sink) = (queue(cfg, big()), DropSink::default());
        for i in 1..=5 {
            q.enqueue(fp(1, i, 1500), SimTime::ZERO, &mut sink);
        }
        let mut got = |q: &mut FqQueue, t| q.dequeue(t, &mut sink).map(|p| (p.flow, seq(&p)));
        assert_eq!(got(&mut q, us(0)), Some((1, 1)));
        assert_eq!((got(&mut q, us(0)), q.next_ready_at()), (None, Some(us(1_000))));
        q.enqueue(fp(2, 1, 100), us(500), &mut DropSink::default());
        assert_eq!(got(&mut q, us(500)), Some((2, 1)));
        assert_eq!((got(&mut q, us(999)), q.next_ready_at()), (None, Some(us(1_000))));
        assert_eq!(got(&mut q, us(1_000)), Some((1, 2)));
        assert_eq!(q.flows[0].next_packet_at, Some(us(2_000)));
        assert_eq!(got(&mut q, us(2_300)), Some((1, 3)));
        assert_eq!(q.flows[0].next_packet_at, Some(us(3_000)));
        assert_eq!(got(&mut q, us(2_999)), None);
        assert_eq!(got(&mut q, us(3_000)), Some((1, 4)));
        assert_eq!(got(&mut q, us(5_900)), Some((1, 5)));
        assert_eq!(q.flows[0].next_packet_at, Some(us(6_400)));
        // Flow 2's 100-byte packet bought it 100/1.5e6 s = 66 666 ns.
        assert_eq!(q.flows[1].next_packet_at, Some(SimTime(500_000 + 66_666)));
        assert_eq!((q.len_packets(), q.next_ready_at()), (0, None));
    }

    // Two throttled flows become eligible in the order of their pacing times, joining the
    // old list's tail: flow 1 due at 2 ms, flow 2 at 1.5 ms (maxrate 12 Mbit/s; 3000- and
    // 2250-byte packets buy 2 and 1.5 ms). next_ready_at is the earliest.
    #[test]
    fn throttled_flows_wake_earliest_first() {
        let cfg = FqConfig { maxrate_mbps: 12.0, ..Default::default() };
        let (mut q, mut sink) = (queue(cfg, big()), DropSink::default());
        for i in 1..=2 {
            q.enqueue(fp(1, i, 3000), SimTime::ZERO, &mut sink);
            q.enqueue(fp(2, i, 2250), SimTime::ZERO, &mut sink);
        }
        assert_eq!(drain(&mut q, SimTime::ZERO, &mut sink), [(1, 1), (2, 1)]);
        assert_eq!(q.next_ready_at(), Some(us(1_500)));
        assert_eq!(drain(&mut q, us(2_000), &mut sink), [(2, 2), (1, 2)]);
    }

    // ce_threshold 1 ms: eight ECT packets at 0 take the fast path (never checked, though
    // sent 2 ms later), two more at 1 ms go to the flow. At 2 ms the flow's first has waited
    // exactly the threshold (not above); at 2.001 ms the second is marked. With maxrate, the
    // wait counts from the pacing time: a packet queued at 0 but due at 1 ms (12 Mbit/s,
    // 1500 B) and sent at 2.5 ms is 1.5 ms late (marked); a Not-ECT one is never marked.
    #[test]
    fn ce_threshold_marks_packets_late_past_their_due_time() {
        let ect = |flow, i| Packet { ecn: Ecn::Ect0, ..fp(flow, i, 1500) };
        let cfg = FqConfig { ce_threshold_ms: 1.0, ..Default::default() };
        let (mut q, mut sink) = (queue(cfg.clone(), big()), DropSink::default());
        for i in 0..10 {
            q.enqueue(ect(1, i), if i < 8 { us(0) } else { us(1_000) }, &mut sink);
        }
        let marks: Vec<Ecn> = (0..9).map(|_| q.dequeue(us(2_000), &mut sink).unwrap().ecn).collect();
        assert_eq!((marks, sink.ce_marks), (vec![Ecn::Ect0; 9], 0));
        assert_eq!(q.dequeue(SimTime(2_001_000), &mut sink).unwrap().ecn, Ecn::Ce);
        assert_eq!(sink.ce_marks, 1);
        let cfg = FqConfig { maxrate_mbps: 12.0, ..cfg };
        let (mut q, mut sink) = (queue(cfg, big()), DropSink::default());
        for i in 0..2 {
            q.enqueue(ect(1, i), SimTime::ZERO, &mut sink);
            q.enqueue(fp(2, i, 1500), SimTime::ZERO, &mut sink);
        }
        assert_eq!(drain(&mut q, us(0), &mut sink).len(), 2);
        let late: Vec<Ecn> = drain_packets(&mut q, us(2_500), &mut sink).iter().map(|p| p.ecn).collect();
        assert_eq!(late, [Ecn::Ce, Ecn::NotEct]);
        assert_eq!(sink.ce_marks, 1);
    }

    fn drain_packets(q: &mut FqQueue, t: SimTime, sink: &mut DropSink) -> Vec<Packet> {
        std::iter::from_fn(|| q.dequeue(t, sink)).collect()
    }

    #[test]
    fn packets_and_bytes_are_conserved_with_and_without_maxrate() {
        for maxrate_mbps in [0.0, 50.0] {
            let cfg = FqConfig { flow_limit: 20, maxrate_mbps, ..Default::default() };
            let (mut q, mut sink) = (queue(cfg, QueueLimit::Packets(60)), DropSink::default());
            let mut rng = SimRng::stream(7, "fq");
            let (mut offered, mut sent, mut t) = (0u64, 0u64, SimTime::ZERO);
            for i in 0..30_000u32 {
                t += SimDuration::from_micros(rng.below(300) as u64);
                q.enqueue(fp(rng.below(12), i, 64 + rng.below(1437)), t, &mut sink);
                offered += 1;
                if i % 2 == 0 && q.dequeue(t, &mut sink).is_some() {
                    sent += 1;
                }
                let in_flows: usize = q.flows.iter().map(|f| f.packets.len()).sum();
                assert_eq!(q.len_packets() as usize, in_flows + q.fastpath.len());
                let bytes: u64 = q.flows.iter().flat_map(|f| &f.packets).chain(&q.fastpath).map(|p| p.size as u64).sum();
                assert_eq!(q.len_bytes(), bytes);
            }
            assert!(sink.tail > 0, "{sink:?}");
            assert_eq!(offered, sent + sink.drops() + q.len_packets() as u64);
            while let Some(at) = q.next_ready_at().or((!q.is_empty()).then_some(t)) {
                t = t.max(at);
                q.dequeue(t, &mut sink);
            }
            assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
        }
    }

    #[test]
    fn validate_names_the_parameter_and_what_is_allowed() {
        let ctx = QueueContext::for_tests(QueueLimit::Packets(100), None);
        assert_eq!(FqConfig::default().validate(&ctx), Ok(()));
        let bad = |c: FqConfig| c.validate(&ctx).unwrap_err();
        let d = FqConfig::default;
        assert_eq!(bad(FqConfig { quantum: 0, ..d() }), "quantum: 0 is out of range; allowed: 1 to 1048576 bytes");
        assert_eq!(
            bad(FqConfig { initial_quantum: u32::MAX, ..d() }),
            "initial_quantum: 4294967295 is out of range; allowed: 0 to 2147483647 bytes"
        );
        assert_eq!(bad(FqConfig { flow_limit: 0, ..d() }), "flow_limit: 0 is out of range; allowed: ≥ 1 packet");
        let rate = "is out of range; allowed: 0 (none) or 0.000008 to 34359.738352 Mbit/s";
        assert_eq!(bad(FqConfig { maxrate_mbps: -1.0, ..d() }), format!("maxrate_mbps: -1 {rate}"));
        assert_eq!(bad(FqConfig { maxrate_mbps: 0.000001, ..d() }), format!("maxrate_mbps: 0.000001 {rate}"));
        assert_eq!(bad(FqConfig { maxrate_mbps: 40_000.0, ..d() }), format!("maxrate_mbps: 40000 {rate}"));
        assert_eq!(FqConfig { maxrate_mbps: 0.000008, ..d() }.validate(&ctx), Ok(()));
        assert_eq!(
            bad(FqConfig { ce_threshold_ms: -1.0, ..d() }),
            "ce_threshold_ms: -1 is out of range; allowed: 0 (off) or 0.001 to 4294967.295 ms"
        );
        assert_eq!(
            bad(FqConfig { refill_delay_ms: f64::NAN, ..d() }),
            "refill_delay_ms: NaN is out of range; allowed: 0 (refill at once) or 0.001 to 4294967.295 ms"
        );
    }
}
