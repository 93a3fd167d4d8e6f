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
use tcplab_core::{FlowId, LinkId, NodeId, Packet, PacketKind, Rate, SimDuration, SimRng, SimTime};

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
/// Small (`Direction`): the loss model with its random stream and the shaper, rare, are
/// boxed, and absent when there is no loss or no shaper.
#[derive(Debug)]
pub struct WiredLink {
    /// Serialization time of one byte when it is a whole number of ns (10 Mbps: 800 ns),
    /// so the hot path multiplies instead of dividing.
    ns_per_byte: Option<u64>,
    pub delay: SimDuration,
    pub rate: Rate,
    pub format: FrameFormat,
    /// None for a lossless link (`LossModel::Bernoulli(0.0)` draws nothing either).
    loss: Option<Box<(LossModel, SimRng)>>,
    shaper: Option<Box<TokenBucket>>,
}

impl WiredLink {
    pub fn new(rate: Rate, delay: SimDuration, mtu: u32, loss: LossModel, rng: SimRng) -> Self {
        let bps = rate.bps();
        let ns_per_byte = (bps > 0 && 8_000_000_000 % bps == 0).then(|| 8_000_000_000 / bps);
        let loss = (!matches!(loss, LossModel::Bernoulli(p) if p == 0.0)).then(|| Box::new((loss, rng)));
        WiredLink { rate, delay, format: FrameFormat { mtu, framing: 0 }, loss, shaper: None, ns_per_byte }
    }

    /// Shaped by `shaper`.
    pub fn with_shaper(mut self, shaper: Option<TokenBucket>) -> Self {
        self.shaper = shaper.map(Box::new);
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
    #[inline]
    fn transmit(&mut self, pkt: &Packet, now: SimTime) -> Transmission {
        let (fragments, wire_bytes) = self.format.frames(pkt.size);
        let start = match self.shaper.as_mut() {
            Some(shaper) => shaper.release_at(u64::from(pkt.size), now),
            None => now,
        };
        let done_at = start + self.tx_time(wire_bytes);
        let lost = self.loss.as_deref_mut().is_some_and(|(loss, rng)| loss.lose_packet(fragments, rng));
        Transmission { done_at, arrives_at: (!lost).then_some(done_at + self.delay) }
    }

    fn rate(&self) -> Rate {
        self.rate
    }
}

/// The link model of a direction: the constant-rate wire held inline (the common case: one
/// pointer less to follow per packet, which counts when thousands of access links do not fit
/// in cache), any other `LinkModel` boxed.
#[derive(Debug)]
pub enum Model {
    Wired(WiredLink),
    Other(Box<dyn LinkModel>),
}

impl Model {
    #[inline]
    fn transmit(&mut self, pkt: &Packet, now: SimTime) -> Transmission {
        match self {
            Model::Wired(wire) => wire.transmit(pkt, now),
            Model::Other(model) => model.transmit(pkt, now),
        }
    }

    pub fn rate(&self) -> Rate {
        match self {
            Model::Wired(wire) => wire.rate,
            Model::Other(model) => model.rate(),
        }
    }
}

impl From<WiredLink> for Model {
    fn from(wire: WiredLink) -> Self {
        Model::Wired(wire)
    }
}

impl From<Box<dyn LinkModel>> for Model {
    fn from(model: Box<dyn LinkModel>) -> Self {
        Model::Other(model)
    }
}

/// Counters of one link direction. In declaration order (`repr(C)`): what every packet
/// updates comes first, next to the `Direction` fields it reads (see there).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct DirectionStats {
    /// Bytes whose transmission started.
    pub transmitted_bytes: u64,
    /// Time the transmitter was busy, ns.
    pub busy_ns: u64,
    /// How long the packets whose transmission started waited in the queue (its count is
    /// the packets transmitted, lost or not).
    pub sojourn: SojournStats,
    /// Packets lost by the link model (counted when their transmission starts).
    pub link_losses: u64,
    /// What the queue dropped, by reason, and CE-marked.
    pub queue: DropSink,
}

/// One direction of a link with its queue, model and propagation pipe.
///
/// A packet enters the pipe when its transmission starts, with its arrival time already
/// known (`Transmission`), and the transmitter stays busy until `busy_until`. A `TxDone` is
/// asked for only when something must happen then: the queue holds packets to start (it
/// got one while the transmitter was busy), the discipline is one that must see the
/// dequeue when it is empty (an AQM: `Queue::passes_through_when_empty`), or the direction
/// reports every transmission's end (`reports_tx_done`: a sender's egress under TCP Small
/// Queues, whose bytes are released then). An idle FIFO direction — most access links and
/// the ACK path — thus costs one event per packet (its arrival) instead of two; the
/// packets' timings are the same.
///
/// Small, with what a packet crossing an idle direction reads first (`repr(C)`: the first 3
/// of its 6 cache lines, where the compiler's order spread it over 9 of 10), and 64-byte
/// aligned, so that those are 3 whole lines in every direction of the links' vector (unaligned,
/// a direction began anywhere in a line and its first 192 bytes spanned 4): a dumbbell has
/// four directions per flow, and with thousands of flows they are out of cache. The rare
/// parts (policer, delivery effects, a reordering pipe, the wire's loss and shaper) are boxed,
/// so that their absence costs a word. Measured (many-1000, interleaved runs), the size and
/// order gain a few per cent at most; the pass-through and the TxDone only when needed gain
/// the rest.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Direction {
    /// When the transmitter is free again.
    busy_until: SimTime,
    /// The largest packet the queue passes through when empty
    /// (`Queue::passes_through_when_empty`).
    pass_through_bytes: u32,
    pub to: NodeId,
    /// Whether a `TxDone` at `busy_until` is pending (asked for and not yet run).
    tx_done_pending: bool,
    /// Whether every transmission's end gets a `TxDone` telling the data packet's flow and
    /// payload (`finishing`).
    reports_tx_done: bool,
    /// Whether the queue is empty, as of the last call into it.
    queue_empty: bool,
    /// Whether the queue's drop log (`DropSink::log_data_drops`, a sender's egress under TCP
    /// Small Queues) holds data packets not yet taken: known without reading the log, which
    /// lies past the lines a packet crossing an idle direction reads.
    drops_logged: bool,
    /// Whether the far end is simulated apart and takes this direction's packets in batches
    /// (`hand_over_in_batches`): a packet that starts goes to `outbound`, not the pipe.
    hands_over: bool,
    /// Drops arrivals that exceed its token bucket, before the queue.
    pub policer: Option<Box<TokenBucket>>,
    /// Jitter and aggregation of arrivals, if any.
    effects: Option<Box<DeliveryEffects>>,
    pub queue: Box<dyn Queue>,
    /// Packets propagating towards `to`, including the one being serialized.
    pipe: Pipe,
    pub model: Model,
    pub stats: DirectionStats,
    finishing: Option<(FlowId, u32)>,
    /// The wake-up last asked of the caller (`Next::Wake`); one at another time is stale.
    wake_at: Option<SimTime>,
    pub id: LinkId,
    pub from: NodeId,
    pub name: String,
    /// Packets that started on a direction that hands over in batches, with their arrival
    /// times, in the order they started (boxed: most directions never hand over, and unboxed
    /// it made every direction a cache line longer).
    #[allow(clippy::box_collection)]
    outbound: Option<Box<Vec<(SimTime, Packet)>>>,
}

/// What the caller schedules for a direction after offering it a packet, finishing a
/// transmission or waking it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The transmitter is busy until then and has more to do: call `tx_done` at this time.
    TxDone(SimTime),
    /// The transmitter is idle and the queue holds packets none of which may leave yet (a
    /// pacing discipline): call `wake` at this time.
    Wake(SimTime),
}

/// The events a direction asks for: the arrival of the pipe's earliest packet (only when it
/// changed: one pending arrival per direction suffices and the scheduler stays small), and
/// what comes next for the transmitter. When both are set and fall at the same time, the
/// `next` event goes first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Asks {
    pub arrival: Option<SimTime>,
    pub next: Option<Next>,
}

impl Direction {
    pub fn new(id: LinkId, name: String, from: NodeId, to: NodeId, queue: Box<dyn Queue>, model: impl Into<Model>) -> Self {
        debug_assert!(queue.is_empty());
        Direction {
            queue_empty: true,
            drops_logged: false,
            hands_over: false,
            outbound: None,
            pass_through_bytes: queue.passes_through_when_empty(),
            id,
            name,
            from,
            to,
            queue,
            policer: None,
            model: model.into(),
            effects: None,
            busy_until: SimTime::ZERO,
            tx_done_pending: false,
            reports_tx_done: false,
            finishing: None,
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
        self.effects = effects.map(Box::new);
        self
    }

    /// Asks for a `TxDone` at the end of every transmission, which returns the data packet's
    /// flow and payload (TCP Small Queues releases them then).
    pub fn report_tx_done(&mut self) {
        self.reports_tx_done = true;
    }

    /// Offers a packet to the queue; starts the transmitter if it was idle. A packet the
    /// empty queue would pass through unchanged to an idle transmitter starts without it.
    pub fn offer(&mut self, mut pkt: Packet, now: SimTime) -> Asks {
        if self.queue_empty && pkt.size <= self.pass_through_bytes && self.policer.is_none() && !self.busy(now) {
            pkt.enqueued_at = now;
            return self.start(pkt, now);
        }
        let policed = self.policer.as_mut().is_some_and(|policer| !policer.conforms(u64::from(pkt.size), now));
        if policed {
            self.stats.queue.drop(pkt, DropReason::Policer);
        } else {
            self.queue.enqueue(pkt, now, &mut self.stats.queue);
            self.queue_empty = self.queue.is_empty();
        }
        self.note_logged_drops();
        self.start_next(now)
    }

    /// After a call into the queue, which may have logged dropped data packets.
    #[inline]
    fn note_logged_drops(&mut self) {
        self.drops_logged = self.stats.queue.dropped_data.as_ref().is_some_and(|log| !log.is_empty());
    }

    /// Whether data packets the queue dropped wait in its log (`take_logged_drops`).
    #[inline]
    pub fn drops_logged(&self) -> bool {
        self.drops_logged
    }

    /// The data packets the queue dropped since the last call, as (flow, payload bytes).
    pub fn take_logged_drops(&mut self) -> Vec<(FlowId, u32)> {
        self.drops_logged = false;
        self.stats.queue.dropped_data.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Whether the transmitter is serializing a packet at `now` (or finishes one now and its
    /// `TxDone` has not run yet).
    pub fn busy(&self, now: SimTime) -> bool {
        self.tx_done_pending || self.busy_until > now
    }

    /// Starts serializing the next queued packet if the transmitter is idle; if it is busy
    /// and packets wait, asks for a `TxDone` when it frees up. If the queue holds packets
    /// but none may leave yet, asks for a wake-up when one may (once per time).
    /// Inlined into its three callers: the hot path (6 % fewer instructions per delivered
    /// packet on bench (c) than as a call, callgrind).
    #[inline(always)]
    fn start_next(&mut self, now: SimTime) -> Asks {
        if self.busy(now) {
            if self.tx_done_pending || self.queue_empty {
                return Asks::default();
            }
            self.tx_done_pending = true;
            return Asks { arrival: None, next: Some(Next::TxDone(self.busy_until)) };
        }
        let dequeued = self.queue.dequeue(now, &mut self.stats.queue);
        self.queue_empty = self.queue.is_empty();
        self.note_logged_drops();
        let Some(pkt) = dequeued else {
            let wake = self.queue.next_ready_at().filter(|&at| self.wake_at != Some(at)).map(|at| {
                debug_assert!(at > now, "a queue held back a packet due now");
                self.wake_at = Some(at);
                Next::Wake(at)
            });
            return Asks { arrival: None, next: wake };
        };
        self.start(pkt, now)
    }

    /// Serializes `pkt`, which left the queue (or passed it) at `now`, with the transmitter
    /// idle: it enters the pipe at once; a `TxDone` is asked for if the queue holds more, the
    /// discipline is not quiet when empty, or the direction reports every transmission's end.
    #[inline(always)]
    fn start(&mut self, pkt: Packet, now: SimTime) -> Asks {
        self.stats.sojourn.add(now.saturating_since(pkt.enqueued_at));
        let tx = self.model.transmit(&pkt, now);
        self.stats.busy_ns += (tx.done_at - now).as_nanos();
        self.stats.transmitted_bytes += pkt.size as u64;
        self.busy_until = tx.done_at;
        if self.reports_tx_done {
            self.finishing = match pkt.kind {
                PacketKind::Data(hdr) => Some((pkt.flow, hdr.payload)),
                PacketKind::Ack(_) => None,
            };
        }
        // A discipline that is not quiet when empty sees the dequeue at the end (see
        // `Queue::passes_through_when_empty`).
        self.tx_done_pending = self.reports_tx_done || !self.queue_empty || self.pass_through_bytes == 0;
        let next = self.tx_done_pending.then_some(Next::TxDone(tx.done_at));
        let arrival = match tx.arrives_at {
            Some(at) => {
                let at = match self.effects.as_mut() {
                    Some(effects) => effects.arrival(at),
                    None => at,
                };
                if self.hands_over {
                    self.outbound.as_mut().expect("made with the flag").push((at, pkt));
                    None
                } else {
                    self.pipe.push(at, pkt)
                }
            }
            None => {
                self.stats.link_losses += 1;
                None
            }
        };
        Asks { arrival, next }
    }

    /// The wake-up asked for by `Next::Wake` is due: starts the transmitter if a packet may
    /// leave now. A stale wake-up (superseded by a later request) does nothing.
    pub fn wake(&mut self, now: SimTime) -> Asks {
        if self.wake_at != Some(now) {
            return Asks::default();
        }
        self.wake_at = None;
        self.start_next(now)
    }

    /// The transmitter is free: returns the flow and payload of the data packet that
    /// finished, on a direction that reports them, and starts the next packet if any.
    pub fn tx_done(&mut self, now: SimTime) -> (Option<(FlowId, u32)>, Asks) {
        debug_assert!(self.tx_done_pending && self.busy_until == now, "tx_done when none was asked for");
        self.tx_done_pending = false;
        (self.finishing.take(), self.start_next(now))
    }

    /// The pipe's earliest packet reaches the far end at `now` (None: a superseded arrival
    /// event of a reordering pipe); also returns the next arrival to schedule, if any.
    pub fn arrive(&mut self, now: SimTime) -> (Option<Packet>, Option<SimTime>) {
        self.pipe.pop(now)
    }

    /// The least time from a transmission's start to its arrival at the far end, when the
    /// direction's packets may be handed over in batches: a constant-rate wire (its
    /// propagation delay) without delivery effects.
    pub fn min_transit(&self) -> Option<SimDuration> {
        match (&self.model, &self.effects) {
            (Model::Wired(wire), None) => Some(wire.delay),
            _ => None,
        }
    }

    /// Makes the direction keep the packets it starts (`outbound`) instead of putting them in
    /// its pipe, for the caller to hand them to the far end's pipe (`receive`) in batches:
    /// the far end is simulated apart (`tcplab_sim::regions`). Only an in-order pipe can be
    /// handed over so.
    pub fn hand_over_in_batches(&mut self) {
        assert!(self.min_transit().is_some(), "only a wire without delivery effects hands over in batches");
        self.hands_over = true;
        self.outbound = Some(Box::default());
    }

    /// The packets started since the last call, with their arrival times, oldest first.
    pub fn take_outbound(&mut self) -> Vec<(SimTime, Packet)> {
        self.outbound.as_deref_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Gives back the emptied vector `take_outbound` returned, so that the next batch reuses
    /// its capacity instead of growing a new one.
    pub fn recycle_outbound(&mut self, mut emptied: Vec<(SimTime, Packet)>) {
        emptied.clear();
        if let Some(outbound) = self.outbound.as_deref_mut().filter(|o| o.capacity() == 0) {
            *outbound = emptied;
        }
    }

    /// A packet handed over from the transmitting end enters the pipe; returns the arrival
    /// to schedule, if it needs one (as `Asks::arrival`).
    pub fn receive(&mut self, at: SimTime, pkt: Packet) -> Option<SimTime> {
        self.pipe.push(at, pkt)
    }

    /// Exchanges pipes with `other`, the same direction as simulated at its far end.
    pub fn swap_pipe(&mut self, other: &mut Direction) {
        debug_assert_eq!(self.id, other.id);
        std::mem::swap(&mut self.pipe, &mut other.pipe);
    }

    /// Packets in the queue (without touching the queue when it is known to be empty).
    #[inline]
    pub fn backlog_packets(&self) -> u32 {
        if self.queue_empty {
            0
        } else {
            self.queue.len_packets()
        }
    }

    /// Packets held by this direction: queued, and in service or propagating.
    pub fn packets_held(&self) -> u64 {
        self.queue.len_packets() as u64 + self.pipe.len() as u64 + self.outbound.as_ref().map_or(0, |o| o.len() as u64)
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

    /// A FIFO that counts the dequeues it gets while empty and does not say it is quiet then
    /// (as an AQM).
    #[derive(Debug)]
    struct EmptyDequeues {
        packets: std::collections::VecDeque<Packet>,
        empty_dequeues: std::sync::Arc<std::sync::atomic::AtomicU32>,
    }

    impl Queue for EmptyDequeues {
        fn enqueue(&mut self, mut pkt: Packet, now: SimTime, _: &mut DropSink) {
            pkt.enqueued_at = now;
            self.packets.push_back(pkt);
        }
        fn dequeue(&mut self, _: SimTime, _: &mut DropSink) -> Option<Packet> {
            let pkt = self.packets.pop_front();
            if pkt.is_none() {
                self.empty_dequeues.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            pkt
        }
        fn len_packets(&self) -> u32 {
            self.packets.len() as u32
        }
        fn len_bytes(&self) -> u64 {
            self.packets.iter().map(|p| u64::from(p.size)).sum()
        }
    }

    #[test]
    fn a_discipline_not_quiet_when_empty_is_asked_for_a_packet_when_each_transmission_ends() {
        // Linux's RED starts its idle period, and CoDel leaves its dropping state, when the
        // device asks for the next packet and finds none: the end of the last transmission.
        let empty_dequeues = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let queue = EmptyDequeues { packets: Default::default(), empty_dequeues: empty_dequeues.clone() };
        let mut d = Direction::new(0, "a->b".into(), 0, 1, Box::new(queue), wired(0.0));
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO).next, tx_done_at(1_200_000), "asked although nothing waits");
        assert_eq!(d.tx_done(SimTime(1_200_000)), (None, Asks::default()));
        assert_eq!(empty_dequeues.load(std::sync::atomic::Ordering::Relaxed), 1, "the empty dequeue came at 1.2 ms");
    }

    fn tx_done_at(at: u64) -> Option<Next> {
        Some(Next::TxDone(SimTime(at)))
    }

    #[test]
    fn direction_keeps_the_transmitter_busy_and_conserves_packets() {
        let q = DroptailConfig {}.build(QueueContext::for_tests(QueueLimit::Packets(1), None));
        let mut d = Direction::new(0, "a->b".into(), 0, 1, q, wired(0.0));
        // The first packet starts at once and enters the pipe (arrival at 1.2 + 5 ms); nothing
        // waits behind it, so no TxDone is asked for.
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO), Asks { arrival: Some(SimTime(6_200_000)), next: None });
        assert!(d.busy(SimTime(1_199_999)) && !d.busy(SimTime(1_200_000)));
        // The second waits: a TxDone when the transmitter frees up, asked for once; the
        // third finds the 1-packet buffer full.
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO), Asks { arrival: None, next: tx_done_at(1_200_000) });
        assert_eq!(d.offer(pkt(1448), SimTime::ZERO), Asks::default());
        assert_eq!((d.stats.queue.tail, d.packets_held()), (1, 2));
        // The second joins a non-empty pipe: its arrival is announced by the first's.
        assert_eq!(d.tx_done(SimTime(1_200_000)), (None, Asks::default()));
        assert_eq!(d.packets_held(), 2);
        assert_eq!(d.arrive(SimTime(6_200_000)).1, Some(SimTime(7_400_000)));
        assert_eq!(d.arrive(SimTime(7_400_000)).1, None);
        assert_eq!((d.stats.queue.drops(), d.stats.sojourn.count), (1, 2));
        // The first packet left at once, the second after the first's 1.2 ms; the dropped
        // third never left the queue.
        assert_eq!((d.stats.sojourn.count, d.stats.sojourn.sum_ns), (2, 1_200_000));
        // Idle again: the next packet starts at once, with no TxDone.
        assert_eq!(d.offer(pkt(1448), SimTime(8_000_000)), Asks { arrival: Some(SimTime(14_200_000)), next: None });
    }

    #[test]
    fn a_direction_handing_over_in_batches_keeps_what_it_starts_for_the_far_end() {
        let droptail = || DroptailConfig {}.build(QueueContext::for_tests(QueueLimit::Packets(10), None));
        let (mut near, mut far) = (
            Direction::new(0, "a->b".into(), 0, 1, droptail(), wired(0.0)),
            Direction::new(0, "a->b".into(), 0, 1, droptail(), wired(0.0)),
        );
        assert_eq!(near.min_transit(), Some(SimDuration::from_millis(5)));
        near.hand_over_in_batches();
        // No arrival is asked for here; the packets wait with their arrival times.
        assert_eq!(near.offer(pkt(1448), SimTime::ZERO), Asks::default());
        assert_eq!(near.offer(pkt(1448), SimTime::ZERO), Asks { arrival: None, next: tx_done_at(1_200_000) });
        assert_eq!(near.tx_done(SimTime(1_200_000)), (None, Asks::default()));
        assert_eq!(near.packets_held(), 2);
        let mut batch = near.take_outbound();
        assert_eq!(batch.iter().map(|(at, _)| at.0).collect::<Vec<_>>(), [6_200_000, 7_400_000]);
        // The far end's pipe takes them in order and announces the first.
        let announced: Vec<Option<SimTime>> = batch.drain(..).map(|(at, p)| far.receive(at, p)).collect();
        assert_eq!(announced, [Some(SimTime(6_200_000)), None]);
        near.recycle_outbound(batch);
        assert_eq!((near.packets_held(), far.packets_held()), (0, 2));
        assert_eq!(far.arrive(SimTime(6_200_000)).1, Some(SimTime(7_400_000)));
        // Swapping pipes puts the far end's packet back into this copy.
        near.swap_pipe(&mut far);
        assert_eq!((near.packets_held(), far.packets_held()), (1, 0));
    }

    #[test]
    fn a_reporting_direction_asks_for_every_transmissions_end_with_its_data_packet() {
        let q = DroptailConfig {}.build(QueueContext::for_tests(QueueLimit::Packets(10), None));
        let mut d = Direction::new(0, "a->b".into(), 0, 1, q, wired(0.0));
        d.report_tx_done();
        let mut data = pkt(1000);
        data.flow = 7;
        let header = tcplab_core::AckHeader {
            ack: 0,
            sack: Default::default(),
            sack_len: 0,
            tsecr: SimTime::ZERO,
            ece: false,
            rwnd_bytes: 0,
            delayed: false,
        };
        let ack = Packet::ack(7, 1, 0, header);
        assert_eq!(d.offer(data, SimTime::ZERO).next, tx_done_at(Rate::from_mbps(10).tx_time(u64::from(data.size)).as_nanos()));
        let done = d.busy_until;
        assert_eq!(d.offer(ack, SimTime::ZERO), Asks::default(), "one TxDone pending is enough");
        let (finished, asks) = d.tx_done(done);
        assert_eq!(finished, Some((7, 1000)));
        let ack_done = done + Rate::from_mbps(10).tx_time(u64::from(ack.size));
        assert_eq!(asks.next, Some(Next::TxDone(ack_done)), "reported even with nothing queued behind");
        assert_eq!(d.tx_done(ack_done), (None, Asks::default()), "an ACK releases nothing");
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
        let mut d = Direction::new(0, "a->b".into(), 0, 1, q, link);
        let next = |asks: Asks| asks.next;
        assert_eq!(next(d.offer(pkt(1448), us(0))), Some(Next::TxDone(us(12))), "fq sees every transmission's end");
        assert_eq!(next(d.offer(pkt(1448), us(0))), None);
        assert_eq!(next(d.offer(pkt(1448), us(0))), None);
        assert_eq!(next(d.tx_done(us(12)).1), Some(Next::Wake(us(1_000))));
        assert_eq!(d.wake(us(500)), Asks::default());
        assert_eq!(next(d.wake(us(1_000))), Some(Next::TxDone(us(1_012))));
        assert_eq!(next(d.tx_done(us(1_012)).1), Some(Next::Wake(us(2_000))));
        assert_eq!(next(d.offer(pkt(1448), us(1_500))), None, "a wake-up at 2 ms is pending already");
        assert_eq!(next(d.wake(us(2_000))), Some(Next::TxDone(us(2_012))));
        assert_eq!(next(d.tx_done(us(2_012)).1), Some(Next::Wake(us(3_000))));
        assert_eq!(next(d.wake(us(3_000))), Some(Next::TxDone(us(3_012))));
        assert_eq!(next(d.tx_done(us(3_012)).1), None);
        assert_eq!((d.queue.len_packets(), d.stats.sojourn.count), (0, 4));
    }

    #[test]
    fn what_an_idle_direction_touches_per_packet_fits_its_first_three_cache_lines_aligned() {
        // The header, the pipe, the wire, the byte and busy counters and the sojourn count of
        // a packet that did not wait (`SojournStats`: count, zero) come first.
        use std::mem::{offset_of, size_of};
        let hot_end = offset_of!(Direction, stats) + offset_of!(DirectionStats, sojourn) + 16;
        assert!(hot_end <= 3 * 64, "{hot_end}");
        assert!(offset_of!(Direction, model) + size_of::<Model>() <= offset_of!(Direction, stats));
        assert!(size_of::<Pipe>() <= 32, "{}", size_of::<Pipe>());
        assert_eq!(std::mem::align_of::<Direction>(), 64);
        assert!(offset_of!(Direction, drops_logged) < 64, "the drop-log flag is read on every offer");
        assert!(offset_of!(Direction, hands_over) < 64, "the hand-over flag is read on every transmission");
        assert_eq!(size_of::<Direction>(), 6 * 64);
    }
}
