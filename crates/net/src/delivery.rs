//! What happens to a packet of a link direction after the link model's constant delay and
//! before it reaches the far end: random extra delay (jitter) and batched release
//! (aggregation); and the pipe that holds packets in propagation, in order or not.
//!
//! Jitter follows Linux netem's per-packet delay (net/sched/sch_netem.c, `netem_enqueue()` and
//! `tabledist()`), with two differences: the draw is an extra delay ≥ 0 on top of the link's
//! `delay` (netem draws around its delay, both ways), so `delay` stays the smallest one-way
//! delay; and it is drawn from closed forms instead of netem's 4096-entry tables. Uniform:
//! U[0, amount]. Normal: |N(0, amount)| (a normal of σ = amount truncated at 0, the
//! half-normal; mean amount·√(2/π)). Exponential: mean amount. With `reorder`, each packet's
//! arrival is its own (later packets may overtake), as netem without a rate; without it a
//! packet never arrives before the one sent before it (arrival = max(drawn arrival, previous
//! arrival)), as netem keeps order when its `rate` is set (`netem_enqueue()` then schedules
//! a packet no earlier than the last one queued).
//! Left out: netem's correlation and its pareto/paretonormal tables.
//!
//! Aggregation models a receiver-side link that hands packets on in batches, as WiFi block
//! ACKs and cellular uplink grants do to TCP's ACKs ("ACK compression"; Cardwell et al., "BBR
//! congestion control", IETF draft-cardwell-iccrg-bbr-congestion-control on
//! ACK aggregation, and Linux's `bbr_update_ack_aggregation()`): a packet that reaches the far
//! end at t is released at the next multiple of `interval` since the start, ⌈t / interval⌉ ·
//! interval, with everything else that arrived in the same interval. Left out: batches bounded
//! by a packet count, and grid phases other than 0.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use tcplab_core::{Packet, SimDuration, SimRng, SimTime};

/// The distribution of a link direction's extra per-packet delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitterDistribution {
    /// Uniform in [0, amount].
    Uniform,
    /// |N(0, σ = amount)|.
    Normal,
    /// Exponential with mean `amount`.
    Exponential,
}

impl JitterDistribution {
    /// Mean extra delay for `amount`, in ns.
    pub fn mean_ns(self, amount: SimDuration) -> f64 {
        let a = amount.as_nanos() as f64;
        match self {
            JitterDistribution::Uniform => a / 2.0,
            JitterDistribution::Normal => a * (2.0 / std::f64::consts::PI).sqrt(),
            JitterDistribution::Exponential => a,
        }
    }

    fn draw_ns(self, amount: SimDuration, rng: &mut SimRng) -> u64 {
        let a = amount.as_nanos() as f64;
        let ns = match self {
            JitterDistribution::Uniform => a * rng.next_f64(),
            JitterDistribution::Normal => {
                // Box–Muller on (0, 1] × [0, 1).
                let (u1, u2) = (1.0 - rng.next_f64(), rng.next_f64());
                (a * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()).abs()
            }
            JitterDistribution::Exponential => rng.exponential(a),
        };
        ns.round() as u64
    }
}

/// Extra per-packet delay of a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jitter {
    pub distribution: JitterDistribution,
    pub amount: SimDuration,
    /// Whether a packet may arrive before one sent earlier.
    pub reorder: bool,
}

/// Jitter and aggregation of one link direction, with its random stream and the last arrival
/// (the floor of order-keeping jitter).
#[derive(Debug)]
pub struct DeliveryEffects {
    jitter: Option<Jitter>,
    aggregation: Option<SimDuration>,
    rng: SimRng,
    last_arrival: SimTime,
}

impl DeliveryEffects {
    /// None when neither is set: the link keeps its plain in-order path.
    pub fn new(jitter: Option<Jitter>, aggregation: Option<SimDuration>, rng: SimRng) -> Option<Self> {
        (jitter.is_some() || aggregation.is_some()).then_some(DeliveryEffects { jitter, aggregation, rng, last_arrival: SimTime::ZERO })
    }

    /// Whether packets may leave the pipe out of order.
    pub fn reorders(&self) -> bool {
        self.jitter.is_some_and(|j| j.reorder)
    }

    /// When a packet that the link model delivers at `at` reaches the far end.
    pub fn arrival(&mut self, at: SimTime) -> SimTime {
        let mut at = at;
        if let Some(j) = self.jitter {
            at += SimDuration::from_nanos(j.distribution.draw_ns(j.amount, &mut self.rng));
            if !j.reorder {
                at = at.max(self.last_arrival);
                self.last_arrival = at;
            }
        }
        match self.aggregation {
            Some(interval) => SimTime(at.as_nanos().div_ceil(interval.as_nanos()) * interval.as_nanos()),
            None => at,
        }
    }
}

/// A packet propagating on a reordering pipe; ordered by arrival, then by entry.
#[derive(Debug)]
pub struct InFlight {
    at: SimTime,
    entry: u64,
    pkt: Packet,
}

impl PartialEq for InFlight {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.entry) == (other.at, other.entry)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for InFlight {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.entry).cmp(&(other.at, other.entry))
    }
}

/// A reordering pipe's packets by arrival, how many entered, and the arrival announced.
#[derive(Debug)]
pub struct ReorderingPipe {
    heap: BinaryHeap<Reverse<InFlight>>,
    entries: u64,
    announced: Option<SimTime>,
}

/// Packets in propagation. The event loop keeps one arrival event per link for its earliest
/// packet: an in-order pipe's head; a reordering pipe's earliest, re-announced when a packet
/// arrives earlier than the one announced (the event announced before then finds nothing due
/// and is ignored).
#[derive(Debug)]
pub enum Pipe {
    InOrder(VecDeque<(SimTime, Packet)>),
    /// Boxed: rare, and the in-order form is what every idle link reads.
    Reordering(Box<ReorderingPipe>),
}

impl Pipe {
    pub fn reordering() -> Self {
        Pipe::Reordering(Box::new(ReorderingPipe { heap: BinaryHeap::new(), entries: 0, announced: None }))
    }

    /// Adds a packet arriving at `at`; returns the arrival to schedule, if it needs one.
    pub fn push(&mut self, at: SimTime, pkt: Packet) -> Option<SimTime> {
        match self {
            Pipe::InOrder(queue) => {
                debug_assert!(queue.back().is_none_or(|(t, _)| *t <= at), "link model reordered packets");
                queue.push_back((at, pkt));
                (queue.len() == 1).then_some(at)
            }
            Pipe::Reordering(pipe) => {
                let ReorderingPipe { heap, entries, announced } = pipe.as_mut();
                heap.push(Reverse(InFlight { at, entry: *entries, pkt }));
                *entries += 1;
                let earlier = announced.is_none_or(|t| at < t);
                earlier.then(|| *announced.insert(at))
            }
        }
    }

    /// The packet due at `now`, if any (a superseded arrival event finds none), and the next
    /// arrival to schedule, if any.
    pub fn pop(&mut self, now: SimTime) -> (Option<Packet>, Option<SimTime>) {
        match self {
            Pipe::InOrder(queue) => {
                let pkt = queue.pop_front().expect("arrival with an empty pipe").1;
                (Some(pkt), queue.front().map(|(at, _)| *at))
            }
            Pipe::Reordering(pipe) => {
                let ReorderingPipe { heap, announced, .. } = pipe.as_mut();
                if heap.peek().is_none_or(|first| first.0.at > now) {
                    return (None, None);
                }
                let first = heap.pop().expect("peeked").0;
                debug_assert_eq!(first.at, now, "a reordering pipe's packet is announced at its arrival");
                *announced = heap.peek().map(|next| next.0.at);
                (Some(first.pkt), *announced)
            }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Pipe::InOrder(queue) => queue.len(),
            Pipe::Reordering(pipe) => pipe.heap.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{DataHeader, Ecn, PacketKind};

    fn pkt(seq: u32) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq, payload: 1000, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
    }

    const MS: u64 = 1_000_000;

    fn jitter(distribution: JitterDistribution, reorder: bool) -> Jitter {
        Jitter { distribution, amount: SimDuration::from_millis(10), reorder }
    }

    /// Pushes packets with these arrival times (ms) and runs the arrival events as the event
    /// loop does; returns (seq, arrival ms) in delivery order.
    fn deliveries(mut pipe: Pipe, arrivals: &[u64]) -> Vec<(u32, u64)> {
        let mut events = BinaryHeap::new();
        for (seq, &ms) in arrivals.iter().enumerate() {
            if let Some(at) = pipe.push(SimTime(ms * MS), pkt(seq as u32)) {
                events.push(Reverse(at));
            }
        }
        let mut out = Vec::new();
        while let Some(Reverse(now)) = events.pop() {
            let (delivered, next) = pipe.pop(now);
            if let Some(at) = next {
                events.push(Reverse(at));
            }
            if let Some(p) = delivered {
                let PacketKind::Data(h) = p.kind else { unreachable!() };
                out.push((h.seq, now.as_nanos() / MS));
            }
        }
        assert!(pipe.is_empty());
        out
    }

    #[test]
    fn order_kept_jitter_never_lets_a_packet_overtake() {
        // Sent 1 ms apart with 5 ms of delay; uniform extra delays drawn by the stream.
        let mut kept = DeliveryEffects::new(Some(jitter(JitterDistribution::Uniform, false)), None, SimRng::stream(5, "j")).unwrap();
        let mut free = DeliveryEffects::new(Some(jitter(JitterDistribution::Uniform, true)), None, SimRng::stream(5, "j")).unwrap();
        let base = |i: u64| SimTime((5 + i) * MS);
        let kept: Vec<SimTime> = (0..50).map(|i| kept.arrival(base(i))).collect();
        let free: Vec<SimTime> = (0..50).map(|i| free.arrival(base(i))).collect();
        // Same draws: order-kept arrivals are the running maximum of the free ones.
        let running_max: Vec<SimTime> = free
            .iter()
            .scan(SimTime::ZERO, |m, &t| {
                *m = (*m).max(t);
                Some(*m)
            })
            .collect();
        assert_eq!(kept, running_max);
        assert!(free.windows(2).any(|w| w[1] < w[0]), "10 ms of jitter over 1 ms spacing reorders");
    }

    #[test]
    fn a_reordering_pipe_delivers_by_arrival_time_whatever_the_push_order() {
        // Pushed with arrivals 10, 4, 7, 4, 12 ms: delivered 1 (4), 3 (4), 2 (7), 0 (10), 4 (12);
        // the event first announced at 10 ms is superseded by the one at 4 ms and ignored.
        assert_eq!(deliveries(Pipe::reordering(), &[10, 4, 7, 4, 12]), [(1, 4), (3, 4), (2, 7), (0, 10), (4, 12)]);
        assert_eq!(deliveries(Pipe::InOrder(VecDeque::new()), &[1, 4, 4, 9]), [(0, 1), (1, 4), (2, 4), (3, 9)]);
    }

    #[test]
    fn mean_extra_delay_matches_the_distribution() {
        for distribution in [JitterDistribution::Uniform, JitterDistribution::Normal, JitterDistribution::Exponential] {
            let mut e = DeliveryEffects::new(Some(jitter(distribution, true)), None, SimRng::stream(9, "j")).unwrap();
            let n = 10_000;
            let sum: u64 = (0..n).map(|_| e.arrival(SimTime::ZERO).as_nanos()).sum();
            let mean = sum as f64 / n as f64;
            let want = distribution.mean_ns(SimDuration::from_millis(10));
            assert!((mean / want - 1.0).abs() < 0.03, "{distribution:?}: {mean} vs {want}");
        }
    }

    #[test]
    fn aggregation_releases_at_the_next_multiple_of_the_interval() {
        let mut e = DeliveryEffects::new(None, Some(SimDuration::from_millis(2)), SimRng::stream(1, "a")).unwrap();
        let released: Vec<u64> =
            [1_000_000, 1_999_999, 2_000_000, 2_000_001, 5_500_000].map(|ns| e.arrival(SimTime(ns)).as_nanos()).to_vec();
        assert_eq!(released, [2_000_000, 2_000_000, 2_000_000, 4_000_000, 6_000_000]);
        assert!(!e.reorders());
    }
}
