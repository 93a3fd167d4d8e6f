//! One direction of a wired link: an egress queue, a link model that decides how long each
//! packet occupies the transmitter and when (or whether) it reaches the far end, and the
//! packets in propagation. Radio cells are not link models: they sit behind `RadioCell`
//! (radio.rs). Link models: `WiredLink` (constant rate) and `TraceLink` (trace.rs); jitter and
//! aggregation act on arrivals after the model (delivery.rs).

use crate::delivery::{DeliveryEffects, Pipe};
use crate::loss::LossModel;
use crate::queue::DropReason;
use crate::queue::{DropSink, Queue};
use crate::sojourn::SojournStats;
use crate::token_bucket::TokenBucket;
use std::collections::VecDeque;
use tcplab_core::{LinkId, NodeId, Packet, Rate, SimDuration, SimRng, SimTime};

/// IPv4 header bytes repeated in every extra fragment of a packet larger than the MTU.
const IP_HEADER_BYTES: u64 = 20;

/// What the link model decided for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    /// When the transmitter is free again.
    pub done_at: SimTime,
    /// When the packet reaches the far end, or None if the link lost it.
    pub arrives_at: Option<SimTime>,
}

/// How a link direction carries packets. Arrival times must not decrease from one packet
/// to the next (link models deliver in order; jitter may reorder after them).
pub trait LinkModel: Send + std::fmt::Debug {
    fn transmit(&mut self, pkt: &Packet, now: SimTime) -> Transmission;
    /// Nominal capacity (the memory budget bounds the segments a run can deliver with it).
    fn rate(&self) -> Rate;
}

/// How IP packets become frames on a link: fragments beyond the MTU, each with the link's
/// framing bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameFormat {
    pub mtu: u32,
    /// Link-layer bytes per frame on the wire besides the IP packet (PPP: 2).
    pub framing: u32,
}

impl FrameFormat {
    /// Frames of an IP packet of `size` bytes and the bytes they take on the wire: a packet
    /// larger than the MTU travels as fragments, each extra one repeating the IP header.
    #[inline]
    pub fn frames(&self, size: u32) -> (u64, u64) {
        let frames = if size <= self.mtu { 1 } else { (size as u64 - IP_HEADER_BYTES).div_ceil(self.mtu as u64 - IP_HEADER_BYTES) };
        (frames, size as u64 + (frames - 1) * IP_HEADER_BYTES + frames * u64::from(self.framing))
    }
}

/// A wired point-to-point link direction: serialization at `rate`, constant propagation
/// `delay`, optional random loss (`LossModel`). A packet larger than the MTU travels as IP
/// fragments: its serialization time includes the extra fragment headers and it is lost
/// if any fragment is (loss drawn per fragment). With a shaper, a packet
/// starts only once its IP bytes conform to the shaper's token bucket (Linux `tbf` with the
/// link's rate as its peak rate).
#[derive(Debug)]
pub struct WiredLink {
    pub rate: Rate,
    pub delay: SimDuration,
    pub format: FrameFormat,
    pub loss: LossModel,
    shaper: Option<TokenBucket>,
    rng: SimRng,
    /// Serialization time of one byte when it is a whole number of ns (10 Mbps: 800 ns),
    /// so the hot path multiplies instead of dividing.
    ns_per_byte: Option<u64>,
}

impl WiredLink {
    pub fn new(rate: Rate, delay: SimDuration, mtu: u32, loss: LossModel, rng: SimRng) -> Self {
        let bps = rate.bps();
        let ns_per_byte = (bps > 0 && 8_000_000_000 % bps == 0).then(|| 8_000_000_000 / bps);
        WiredLink { rate, delay, format: FrameFormat { mtu, framing: 0 }, loss, shaper: None, rng, ns_per_byte }
    }

    /// Shaped by `shaper`.
    pub fn with_shaper(mut self, shaper: Option<TokenBucket>) -> Self {
        self.shaper = shaper;
        self
    }

    /// With `framing` link-layer bytes per frame on the wire.
    pub fn with_framing(mut self, framing: u32) -> Self {
        self.format.framing = framing;
        self
    }

    fn tx_time(&self, bytes: u64) -> SimDuration {
        match self.ns_per_byte {
            Some(ns) => SimDuration::from_nanos(bytes * ns),
            None => self.rate.tx_time(bytes),
        }
    }
}

impl LinkModel for WiredLink {
    fn transmit(&mut self, pkt: &Packet, now: SimTime) -> Transmission {
        let (fragments, wire_bytes) = self.format.frames(pkt.size);
        let start = match self.shaper.as_mut() {
            Some(shaper) => shaper.release_at(u64::from(pkt.size), now),
            None => now,
        };
        let done_at = start + self.tx_time(wire_bytes);
        let lost = self.loss.lose_packet(fragments, &mut self.rng);
        Transmission { done_at, arrives_at: (!lost).then_some(done_at + self.delay) }
    }

    fn rate(&self) -> Rate {
        self.rate
    }
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Packets offered to the queue.
    pub offered: u64,
    /// What the queue dropped, by reason, and CE-marked.
    pub queue: DropSink,
    /// How long the packets that left the queue waited in it.
    pub sojourn: SojournStats,
    /// Packets lost by the link model.
    pub link_losses: u64,
    /// Packets that finished transmission (lost or not).
    pub transmitted: u64,
    /// Bytes that finished transmission.
    pub transmitted_bytes: u64,
    /// Time the transmitter was busy, ns.
    pub busy_ns: u64,
}

/// One direction of a link with its queue, model and propagation pipe.
#[derive(Debug)]
pub struct Direction {
    pub id: LinkId,
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub queue: Box<dyn Queue>,
    /// Drops arrivals that exceed its token bucket, before the queue.
    pub policer: Option<TokenBucket>,
    pub model: Box<dyn LinkModel>,
    /// Jitter and aggregation of arrivals, if any.
    effects: Option<DeliveryEffects>,
    /// Packet being serialized and when the transmitter frees up.
    in_service: Option<(Packet, Transmission)>,
    /// Packets propagating towards `to`.
    pipe: Pipe,
    /// The wake-up last asked of the caller (`Next::Wake`); one at another time is stale.
    wake_at: Option<SimTime>,
    pub stats: DirectionStats,
}

/// What the caller schedules for a direction after offering it a packet, finishing a
/// transmission or waking it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The transmitter started on a packet: call `tx_done` at this time.
    TxDone(SimTime),
    /// The transmitter is idle and the queue holds packets none of which may leave yet (a
    /// pacing discipline): call `wake` at this time.
    Wake(SimTime),
}

impl Direction {
    pub fn new(id: LinkId, name: String, from: NodeId, to: NodeId, queue: Box<dyn Queue>, model: Box<dyn LinkModel>) -> Self {
        Direction {
            id,
            name,
            from,
            to,
            queue,
            policer: None,
            model,
            effects: None,
            in_service: None,
            pipe: Pipe::InOrder(VecDeque::new()),
            wake_at: None,
            stats: DirectionStats::default(),
        }
    }

    /// With jitter and aggregation on its arrivals (a reordering pipe if the jitter reorders).
    pub fn with_effects(mut self, effects: Option<DeliveryEffects>) -> Self {
        if effects.as_ref().is_some_and(DeliveryEffects::reorders) {
            self.pipe = Pipe::reordering();
        }
        self.effects = effects;
        self
    }

    /// Offers a packet to the queue; starts the transmitter if it was idle.
    pub fn offer(&mut self, pkt: Packet, now: SimTime) -> Option<Next> {
        self.stats.offered += 1;
        let policed = self.policer.as_mut().is_some_and(|policer| !policer.conforms(u64::from(pkt.size), now));
        if policed {
            self.stats.queue.drop(pkt, DropReason::Policer);
        } else {
            self.queue.enqueue(pkt, now, &mut self.stats.queue);
        }
        self.start_next(now)
    }

    /// Starts serializing the next queued packet if the transmitter is idle. If the queue
    /// holds packets but none may leave yet, asks for a wake-up when one may (once per time).
    /// Inlined into its three callers: the hot path (6 % fewer instructions per delivered
    /// packet on bench (c) than as a call, callgrind).
    #[inline(always)]
    fn start_next(&mut self, now: SimTime) -> Option<Next> {
        if self.in_service.is_some() {
            return None;
        }
        let Some(pkt) = self.queue.dequeue(now, &mut self.stats.queue) else {
            let at = self.queue.next_ready_at().filter(|&at| self.wake_at != Some(at))?;
            debug_assert!(at > now, "a queue held back a packet due now");
            self.wake_at = Some(at);
            return Some(Next::Wake(at));
        };
        self.stats.sojourn.add(now.saturating_since(pkt.enqueued_at));
        let tx = self.model.transmit(&pkt, now);
        self.stats.busy_ns += (tx.done_at - now).as_nanos();
        self.in_service = Some((pkt, tx));
        Some(Next::TxDone(tx.done_at))
    }

    /// The wake-up asked for by `Next::Wake` is due: starts the transmitter if a packet may
    /// leave now. A stale wake-up (superseded by a later request) does nothing.
    pub fn wake(&mut self, now: SimTime) -> Option<Next> {
        if self.wake_at != Some(now) {
            return None;
        }
        self.wake_at = None;
        self.start_next(now)
    }

    /// The transmitter finished its packet: it enters the pipe (or is lost). Returns the
    /// arrival to schedule — only when the packet is the pipe's earliest: one pending arrival
    /// per link suffices and the scheduler stays small (`Pipe`) — and what comes next if the
    /// queue had more.
    pub fn tx_done(&mut self, now: SimTime) -> (Option<SimTime>, Option<Next>) {
        let (pkt, tx) = self.in_service.take().expect("tx_done with an idle transmitter");
        self.stats.transmitted += 1;
        self.stats.transmitted_bytes += pkt.size as u64;
        let arrival = match tx.arrives_at {
            Some(at) => {
                let at = match self.effects.as_mut() {
                    Some(effects) => effects.arrival(at),
                    None => at,
                };
                self.pipe.push(at, pkt)
            }
            None => {
                self.stats.link_losses += 1;
                None
            }
        };
        (arrival, self.start_next(now))
    }

    /// The pipe's earliest packet reaches the far end at `now` (None: a superseded arrival
    /// event of a reordering pipe); also returns the next arrival to schedule, if any.
    pub fn arrive(&mut self, now: SimTime) -> (Option<Packet>, Option<SimTime>) {
        self.pipe.pop(now)
    }

    /// The packet being serialized, if any.
    pub fn in_service(&self) -> Option<&Packet> {
        self.in_service.as_ref().map(|(pkt, _)| pkt)
    }

    /// Packets held by this direction: queued, in service and propagating.
    pub fn packets_held(&self) -> u64 {
        self.queue.len_packets() as u64 + self.in_service.is_some() as u64 + self.pipe.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{Discipline, DroptailConfig, FqConfig, QueueContext, QueueLimit};
    use tcplab_core::{DataHeader, Ecn};

    fn pkt(payload: u32) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq: 0, payload, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
    }

    #[test]
    fn framing_adds_its_bytes_to_every_frame_on_the_wire() {
        // 10 Mbps: 800 ns a byte. A 1500 B packet with PPP's 2 B takes 1502 · 800 ns; a
        // 3000 B packet over MTU 1500 is 3 fragments (2980 B of payload over 1480 B each):
        // 3000 + 2·20 B of extra IP headers + 3·2 B of framing.
        let mut link =
            WiredLink::new(Rate::from_mbps(10), SimDuration::ZERO, 1500, LossModel::Bernoulli(0.0), SimRng::stream(1, "t")).with_framing(2);
        let pkt = |size: u32| {
            Packet::data(0, 0, 1, DataHeader { seq: 0, payload: size - 52, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
        };
        assert_eq!(link.transmit(&pkt(1500), SimTime::ZERO).done_at, SimTime(1502 * 800));
        assert_eq!(link.transmit(&pkt(3000), SimTime::ZERO).done_at, SimTime((3000 + 40 + 6) * 800));
    }

    fn wired(loss: f64) -> WiredLink {
        WiredLink::new(Rate::from_mbps(10), SimDuration::from_millis(5), 1500, LossModel::Bernoulli(loss), SimRng::stream(1, "t"))
    }

    #[test]
    fn wired_link_serializes_then_propagates() {
        let tx = wired(0.0).transmit(&pkt(1448), SimTime::ZERO);
        assert_eq!(tx.done_at, SimTime(1_200_000));
        assert_eq!(tx.arrives_at, Some(SimTime(6_200_000)));
    }

    #[test]
    fn exact_and_general_rates_give_the_same_serialization_time() {
        for bps in [10_000_000, 1_000_000_000, 3_000_000, 7_777_777] {
            let link = WiredLink::new(Rate(bps), SimDuration::ZERO, 1500, LossModel::Bernoulli(0.0), SimRng::stream(1, "t"));
            for bytes in [1, 52, 1500, 9000] {
                assert_eq!(link.tx_time(bytes), Rate(bps).tx_time(bytes), "{bps} bps, {bytes} B");
            }
        }
    }

    #[test]
    fn oversized_packets_pay_for_fragment_headers() {
        // 10 052-byte packet over a 1500-byte MTU: ceil(10032 / 1480) = 7 fragments, 6 extra headers.
        let tx = wired(0.0).transmit(&pkt(10_000), SimTime::ZERO);
        assert_eq!(tx.done_at, SimTime(Rate::from_mbps(10).tx_time(10_052 + 6 * 20).as_nanos()));
    }

    #[test]
    fn loss_probability_is_respected() {
        let mut link = wired(0.1);
        let lost = (0..20_000).filter(|_| link.transmit(&pkt(1448), SimTime::ZERO).arrives_at.is_none()).count();
        assert!((1_700..2_300).contains(&lost), "{lost}");
    }

    #[test]
    fn direction_keeps_the_transmitter_busy_and_conserves_packets() {
        let q = DroptailConfig {}.build(QueueContext::for_tests(QueueLimit::Packets(1), None));
        let mut d = Direction::new(0, "a->b".into(), 0, 1, q, Box::new(wired(0.0)));
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO), Some(Next::TxDone(SimTime(1_200_000))));
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO), None);
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO), None);
        assert_eq!((d.stats.queue.tail, d.packets_held()), (1, 2));
        let (arrival, next) = d.tx_done(SimTime(1_200_000));
        assert_eq!(arrival, Some(SimTime(6_200_000)));
        assert_eq!(next, Some(Next::TxDone(SimTime(2_400_000))));
        assert_eq!(d.packets_held(), 2);
        // The second packet joins a non-empty pipe: its arrival is announced by the first's.
        assert_eq!(d.tx_done(SimTime(2_400_000)), (None, None));
        assert_eq!(d.arrive(SimTime(6_200_000)).1, Some(SimTime(7_400_000)));
        assert_eq!(d.arrive(SimTime(7_400_000)).1, None);
        assert_eq!(d.stats.queue.drops(), 1);
        assert_eq!(d.stats.offered, 3);
        // The first packet left at once, the second after the first's 1.2 ms; the dropped
        // third never left the queue.
        assert_eq!((d.stats.sojourn.count, d.stats.sojourn.sum_ns), (2, 1_200_000));
    }

    // fq paces one flow to 12 Mbit/s (1500 B every 1 ms) on a 1 Gbit/s link (12 µs a
    // packet). The first packet starts at once; when it is done the queue holds packets that
    // are not due: the link asks to be woken at 1 ms, ignores a stale wake-up, sends the
    // next at 1 ms, asks for 2 ms, and does not ask twice for the same time.
    #[test]
    fn a_pacing_queue_gets_the_transmitter_woken_when_its_next_packet_is_due() {
        let us = |v: u64| SimTime(v * 1_000);
        let q = FqConfig { maxrate_mbps: 12.0, ..Default::default() }.build(QueueContext::for_tests(QueueLimit::Packets(100), None));
        let link = WiredLink::new(Rate::from_mbps(1000), SimDuration::ZERO, 1500, LossModel::Bernoulli(0.0), SimRng::stream(1, "t"));
        let mut d = Direction::new(0, "a->b".into(), 0, 1, q, Box::new(link));
        assert_eq!(d.offer(pkt(1448), us(0)), Some(Next::TxDone(us(12))));
        assert_eq!(d.offer(pkt(1448), us(0)), None);
        assert_eq!(d.offer(pkt(1448), us(0)), None);
        assert_eq!(d.tx_done(us(12)).1, Some(Next::Wake(us(1_000))));
        assert_eq!(d.wake(us(500)), None);
        assert_eq!(d.wake(us(1_000)), Some(Next::TxDone(us(1_012))));
        assert_eq!(d.tx_done(us(1_012)).1, Some(Next::Wake(us(2_000))));
        assert_eq!(d.offer(pkt(1448), us(1_500)), None, "a wake-up at 2 ms is pending already");
        assert_eq!(d.wake(us(2_000)), Some(Next::TxDone(us(2_012))));
        assert_eq!(d.tx_done(us(2_012)).1, Some(Next::Wake(us(3_000))));
        assert_eq!(d.wake(us(3_000)), Some(Next::TxDone(us(3_012))));
        assert_eq!(d.tx_done(us(3_012)).1, None);
        assert_eq!((d.queue.len_packets(), d.stats.transmitted), (0, 4));
    }
}
