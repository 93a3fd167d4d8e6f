//! The event loop: one scheduler of plain enum events (docs/architecture.md). Packets never sit in
//! the scheduler: a link direction keeps its queue and the packets in propagation (the one
//! being serialized included) itself, and events only say "transmitter of link L is free"
//! (when it has more to send, its AQM must see that, or TCP Small Queues waits for it) or "the
//! earliest packet of link L's pipe arrives" — one of each per link (a reordering pipe may
//! leave a superseded arrival event behind, which finds nothing due), so the heap stays a
//! few dozen entries deep whatever the bandwidth-delay product — or, for a pacing queue
//! (fq's maxrate) holding only packets not yet due, "link L may send again". An mmWave cell is run
//! lazily the same way: one `RadioWake` event at its next subframe boundary or HARQ
//! outcome while it has work, none while it is idle; packets enter it when routing picks a
//! radio hop and leave it as deliveries handed on in time order. Between events the run pauses
//! at the sample instants and at the instants packets cross between regions (`Stops`,
//! `crate::regions`), the same on one thread or two (`crate::threads`).

use crate::build::{build_with, Flow, Network};
use crate::error::ScenarioError;
use crate::recorder::{Columns, FlowRtt, FlowSeries, LinkSeries, RttSeries};
use crate::regions::Regions;
use crate::sampling::{is_active, FlowGroupSeries, FlowSample, GroupScratch, SamplePlan};
use crate::scenario::Scenario;
use crate::tsq::Tsq;
use std::collections::VecDeque;
use tcplab_cc::BbrInfo;
use tcplab_core::{FlowId, LinkId, NodeId, Packet, PacketKind, Scheduler, SimDuration, SimTime};
use tcplab_net::link::{Asks, Direction, Next};
use tcplab_net::radio::RadioDelivery;
use tcplab_net::sojourn::SojournStats;
use tcplab_net::DropReason;
use tcplab_tcp::{SenderGauges, SenderStats};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    FlowStart(FlowId),
    FlowStop(FlowId),
    SenderTimer(FlowId, TimerSlot),
    ReceiverTimer(FlowId),
    LinkTxDone(LinkId),
    /// A pacing queue may have a packet ready (`Next::Wake`).
    LinkWake(LinkId),
    LinkArrival(LinkId),
    /// The cell has a subframe boundary or a HARQ outcome to run (one live event).
    RadioWake,
    /// A fixed-rate application writes its next packet(s).
    AppWrite(FlowId),
}

/// The sender's two timers, each with at most one live event: the retransmission timer (RTO,
/// loss probe or RACK reordering timeout, one timer as in Linux) moves later on almost every
/// ACK, so it is re-armed lazily when its event fires (one event per expiry instead of one per
/// ACK), and pacing releases have their own slot so they never strand its events in the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerSlot {
    Rto = 0,
    Pacing = 1,
}

/// The flows' start and stop events, for the flows whose senders `group` simulates (all when
/// None).
fn flow_events(net: &Network, regions: &Regions, group: Option<u8>) -> Scheduler<Event> {
    let mut sched = Scheduler::new();
    for (i, f) in net.flows.iter().enumerate() {
        if group.is_some_and(|g| regions.group(f.src) != g) {
            continue;
        }
        sched.schedule(f.start, Event::FlowStart(i as FlowId));
        if let Some(stop) = f.stop {
            sched.schedule(stop, Event::FlowStop(i as FlowId));
        }
    }
    sched
}

/// Counters of the whole run, for the end-of-run invariants and the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCounters {
    /// Packets put on the network by hosts (data and ACKs).
    pub packets_sent: u64,
    /// Packets that reached their destination host.
    pub packets_delivered: u64,
}

/// Previous-sample values for per-interval columns.
#[derive(Clone, Copy, Debug, Default)]
struct Baseline {
    delivered_bytes: u64,
    retransmits: u64,
}

/// Everything a sample reads of the flow ends and link transmitters a world simulates, in
/// flow and link order, taken at the sample instant by each world (`take_readings`; on its
/// own thread under `crate::threads`). The world that records builds the sample from these
/// compact arrays, its own and the other world's, and not from thousands of flows' and links'
/// state: under `crate::threads` it does so while the other world runs on.
#[derive(Clone, Default)]
pub(crate) struct Readings {
    /// Bytes delivered to each flow's receiver.
    delivered: Vec<u64>,
    /// Whether each flow is active, and its sender's gauges, when flows are recorded in
    /// groups; else each sender's full snapshot.
    gauges: Vec<(bool, SenderGauges)>,
    stats: Vec<Option<SenderStats>>,
    /// Each direction's queue backlog, packets.
    backlog: Vec<u32>,
    /// The queues of the sampled directions (`SamplePlan::links`): packets, bytes, counters.
    queues: Vec<(u32, u64, QueueBaseline)>,
}

/// A link direction's queue counters at a sample, for the next interval's differences.
#[derive(Clone, Copy, Debug, Default)]
struct QueueBaseline {
    /// Drops by reason (`DropSink::by_reason`).
    drops: [u64; DropReason::COUNT],
    ce_marks: u64,
    /// The waits of the packets that left the queue, and of those that left its L4S queue.
    sojourn: WaitTally,
    l4s_sojourn: WaitTally,
}

impl QueueBaseline {
    fn of(link: &Direction) -> Self {
        QueueBaseline {
            drops: link.stats.queue.by_reason(),
            ce_marks: link.stats.queue.ce_marks,
            sojourn: WaitTally::of(&link.stats.sojourn),
            l4s_sojourn: link.queue.l4s_sojourn().map(WaitTally::of).unwrap_or_default(),
        }
    }
}

/// How many packets left a queue and their summed waits, at a sample.
#[derive(Clone, Copy, Debug, Default)]
struct WaitTally {
    count: u64,
    sum_ns: u128,
}

impl WaitTally {
    fn of(stats: &SojournStats) -> Self {
        WaitTally { count: stats.count, sum_ns: stats.sum_ns }
    }

    /// Mean wait (ms) of the packets that left since `before`; NaN when none left.
    fn mean_ms_since(self, before: WaitTally) -> f64 {
        let left = self.count - before.count;
        if left == 0 {
            f64::NAN
        } else {
            (self.sum_ns - before.sum_ns) as f64 / left as f64 / 1e6
        }
    }
}

/// A scenario being simulated.
pub struct World {
    pub scenario: Scenario,
    sched: Scheduler<Event>,
    pub net: Network,
    end: SimTime,
    sample_interval: SimDuration,
    record_rtt: bool,
    /// Most per-ACK RTT samples the memory budget leaves (`crate::budget`); whether a
    /// sample was refused for it.
    rtt_cap: usize,
    rtt_overflow: bool,
    pub counters: RunCounters,
    /// What each sample records: flows one by one or in groups, which link directions.
    pub plan: SamplePlan,
    pub flow_series: FlowSeries,
    pub flow_group_series: FlowGroupSeries,
    /// Reused per sample: one group's flows and the buffers of its percentiles.
    flow_samples: Vec<FlowSample>,
    group_scratch: GroupScratch,
    pub link_series: LinkSeries,
    pub rtt_series: RttSeries,
    /// Per flow, its RTT samples' statistics and its smoothed RTT's averages.
    pub rtt: Vec<FlowRtt>,
    flow_baseline: Vec<Baseline>,
    /// Queue counters per sampled link at the previous sample.
    link_baseline: Vec<QueueBaseline>,
    /// Per link direction (sampled or not), its backlog summed over the samples, packets.
    pub backlog_sum: Vec<u64>,
    pub samples_taken: u64,
    /// Largest queue backlog seen per link direction, packets.
    pub backlog_max: Vec<u32>,
    /// The pending `RadioWake` instant.
    radio_wake: Option<SimTime>,
    /// Radio deliveries not yet handed on, and whether they are being handed on (a delivery
    /// can make a host send into the cell again).
    radio_out: Vec<RadioDelivery>,
    radio_ready: VecDeque<RadioDelivery>,
    radio_draining: bool,
    /// Flows whose TCP Small Queues limit a release lifted, to pump once the event is done.
    tsq_woken: Vec<FlowId>,
    /// The network's regions, and the group of them this world simulates (None: all).
    pub regions: Regions,
    group: Option<u8>,
    /// Whether this world absorbed the other group's (`absorb`), and the events that one ran.
    absorbed: bool,
    absorbed_events: u64,
    /// The next instants at which packets cross between regions and at which flows and links
    /// are sampled.
    stops: Stops,
    readings: Readings,
    /// The other group's world's readings at the last sample (`crate::threads`), swapped out
    /// of it for the sample to be built while it runs on.
    pub(crate) peer_readings: Readings,
}

/// Where a run pauses besides its events, each before any event at its instant or later: the
/// instants at which the packets that started on the wires between regions are handed to the
/// far ends (the multiples of the lookahead: `crate::regions`), and the sample instants.
#[derive(Clone, Copy, Debug)]
struct Stops {
    crossing: SimTime,
    lookahead: SimDuration,
    sample: SimTime,
    sample_interval: SimDuration,
    end: SimTime,
}

/// What a run does when it pauses (`Stops::next`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Every event before the crossing instant has run: hand the packets over.
    Crossing,
    /// Every event before the sample instant has run: sample.
    Sample,
    /// The run got to where it was asked to go.
    Until,
}

impl Stops {
    /// The next pause up to `until` and the last instant whose events run before it; a
    /// crossing or sample whose events before it end at `until` comes first.
    fn next(&self, until: SimTime) -> (SimTime, Stop) {
        let before = |at: SimTime| SimTime(at.0.saturating_sub(1));
        [(before(self.crossing), Stop::Crossing), (before(self.sample), Stop::Sample), (until, Stop::Until)]
            .into_iter()
            .min_by_key(|&(at, _)| at)
            .expect("three candidates")
    }

    fn passed(&mut self, stop: Stop) {
        match stop {
            Stop::Crossing => self.crossing += self.lookahead,
            Stop::Sample => {
                let next = self.sample + self.sample_interval;
                self.sample = if next <= self.end { next } else { SimTime::MAX };
            }
            Stop::Until => {}
        }
    }
}

impl World {
    /// Builds the world (calling `tick` now and then, see `build_with`) once the memory
    /// budget allows its recorded series, and preallocates them.
    pub fn new<E: From<ScenarioError>>(scenario: Scenario, tick: &mut dyn FnMut() -> Result<(), E>) -> Result<World, E> {
        let mut net = build_with(&scenario, tick)?;
        let plan = SamplePlan::new(&scenario, &net);
        let budget = crate::budget::check(&scenario, &net, &plan)?;
        let end = SimTime::ZERO + scenario.duration.0;
        let sample_interval = scenario.sample_interval.0;
        let samples = budget.samples as usize;
        let regions = Regions::of(&net);
        for &l in &regions.cut {
            net.links[l as usize].hand_over_in_batches();
        }
        let lookahead = regions.lookahead.unwrap_or(SimDuration::MAX);
        let first_sample = SimTime::ZERO + sample_interval;
        let first_sample = if first_sample <= end { first_sample } else { SimTime::MAX };
        let stops = Stops { crossing: SimTime::ZERO + lookahead, lookahead, sample: first_sample, sample_interval, end };
        let flows = net.flows.len();
        let links = net.links.len();
        if let Some(radio) = net.radio.as_mut() {
            radio.cell.reserve(samples);
        }
        let (flow_rows, _) = plan.flow_rows(flows);
        let grouped = plan.groups.is_some();
        let readings = Readings {
            delivered: vec![0; flows],
            gauges: if grouped { vec![Default::default(); flows] } else { Vec::new() },
            stats: if grouped { Vec::new() } else { vec![None; flows] },
            backlog: vec![0; links],
            queues: vec![Default::default(); plan.links.len()],
        };
        let (flow_series, flow_group_series) = match plan.groups {
            Some(_) => (FlowSeries::default(), FlowGroupSeries::with_capacity(samples * flow_rows)),
            None => (FlowSeries::with_capacity(samples * flow_rows), FlowGroupSeries::default()),
        };
        Ok(World {
            flow_series,
            flow_group_series,
            flow_samples: Vec::new(),
            group_scratch: GroupScratch::default(),
            link_series: LinkSeries::with_capacity(samples * plan.links.len()),
            link_baseline: vec![QueueBaseline::default(); plan.links.len()],
            backlog_sum: vec![0; links],
            samples_taken: 0,
            plan,
            radio_wake: None,
            radio_out: Vec::new(),
            radio_ready: VecDeque::new(),
            radio_draining: false,
            tsq_woken: Vec::new(),
            sched: flow_events(&net, &regions, None),
            regions,
            group: None,
            absorbed: false,
            absorbed_events: 0,
            stops,
            readings,
            peer_readings: Readings::default(),
            record_rtt: scenario.record.rtt,
            rtt_cap: usize::try_from(budget.rtt_sample_cap()).unwrap_or(usize::MAX),
            rtt_overflow: false,
            scenario,
            net,
            end,
            sample_interval,
            counters: RunCounters::default(),
            rtt_series: RttSeries::default(),
            rtt: vec![FlowRtt::default(); flows],
            flow_baseline: vec![Baseline::default(); flows],
            backlog_max: vec![0; links],
        })
    }

    pub fn now(&self) -> SimTime {
        self.sched.now()
    }

    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Threads that simulated the run so far: 2 once it has absorbed the other group's world.
    pub fn threads(&self) -> u32 {
        if self.absorbed {
            2
        } else {
            1
        }
    }

    pub fn events(&self) -> u64 {
        self.sched.executed() + self.absorbed_events
    }

    /// The error to stop the run with once the per-ACK RTT samples reached the memory budget.
    pub fn rtt_overflow(&self) -> Option<ScenarioError> {
        self.rtt_overflow.then(|| crate::budget::rtt_overflow(&self.scenario, self.rtt_cap as u64, self.now().as_secs_f64()))
    }

    /// Runs the events up to `until` (capped at the end of the run), but no more than
    /// `max_events` of them, with the hand-overs between regions and the samples due on the
    /// way; returns whether it got to `until`.
    pub fn run_until(&mut self, until: SimTime, max_events: u64) -> bool {
        debug_assert!(self.group.is_none(), "a world restricted to one group runs under `crate::threads`");
        let mut budget = max_events;
        loop {
            let (last, stop) = self.next_stop(until);
            if !self.run_events(last, &mut budget) {
                return false;
            }
            match stop {
                Stop::Crossing => self.cross(None),
                Stop::Sample => {
                    let at = self.sample_instant();
                    self.sample_radio(at);
                    self.take_readings(at);
                    self.sample(at, None);
                }
                Stop::Until => return true,
            }
            self.stops.passed(stop);
        }
    }

    /// The next pause on the way to `until` (capped at the end of the run), and the last
    /// instant whose events run before it.
    pub(crate) fn next_stop(&self, until: SimTime) -> (SimTime, Stop) {
        self.stops.next(until.min(self.end))
    }

    /// The instant of the next sample.
    pub(crate) fn sample_instant(&self) -> SimTime {
        self.stops.sample
    }

    /// Moves past the pause `stop` (its work done).
    pub(crate) fn passed(&mut self, stop: Stop) {
        self.stops.passed(stop);
    }

    /// Runs the events up to `last`, at most `budget` of them (counted down); returns whether
    /// none up to `last` is left.
    pub(crate) fn run_events(&mut self, last: SimTime, budget: &mut u64) -> bool {
        while *budget > 0 {
            let Some((now, ev)) = self.sched.pop_until(last) else { return true };
            self.handle(now, ev);
            *budget -= 1;
        }
        self.sched.peek_time().is_none_or(|t| t > last)
    }

    /// Hands the packets that started on each cut direction to its far end, direction by
    /// direction in ascending order: within this world, or between it and `partner`, the
    /// other group's world (`crate::threads`), whichever simulates each end.
    pub(crate) fn cross(&mut self, mut partner: Option<&mut World>) {
        for i in 0..self.regions.cut.len() {
            let l = self.regions.cut[i];
            let (from, to) = (self.net.links[l as usize].from, self.net.links[l as usize].to);
            let mut packets = match partner.as_deref_mut().filter(|p| p.simulates(from)) {
                Some(p) => p.net.links[l as usize].take_outbound(),
                None => self.net.links[l as usize].take_outbound(),
            };
            match partner.as_deref_mut().filter(|p| p.simulates(to)) {
                Some(p) => p.receive(l, &mut packets),
                None => self.receive(l, &mut packets),
            }
            match partner.as_deref_mut().filter(|p| p.simulates(from)) {
                Some(p) => p.net.links[l as usize].recycle_outbound(packets),
                None => self.net.links[l as usize].recycle_outbound(packets),
            }
        }
    }

    /// The packets that crossed cut direction `l` reach its pipe here (in the order they
    /// started), and its next arrival is scheduled.
    fn receive(&mut self, l: LinkId, packets: &mut Vec<(SimTime, Packet)>) {
        for (at, pkt) in packets.drain(..) {
            if let Some(at) = self.net.links[l as usize].receive(at, pkt) {
                self.sched.schedule(at, Event::LinkArrival(l));
            }
        }
    }

    /// Takes back from `partner` (the other group's world, `crate::threads`) the ends of flows
    /// and links it simulated, and its counts: this world then holds the whole run, as if one
    /// thread had simulated it.
    pub(crate) fn absorb(&mut self, mut partner: World) {
        use std::mem::swap;
        let theirs_group = partner.group.expect("the partner simulates one group");
        for f in 0..self.net.flows.len() {
            let (mine, theirs) = (&mut self.net.flows[f], &mut partner.net.flows[f]);
            if self.regions.group(mine.src) == theirs_group {
                swap(&mut mine.sender, &mut theirs.sender);
                swap(&mut mine.sender_timers, &mut theirs.sender_timers);
                swap(&mut mine.completed_at, &mut theirs.completed_at);
                swap(&mut mine.app, &mut theirs.app);
                swap(&mut mine.tsq, &mut theirs.tsq);
                swap(&mut self.rtt[f], &mut partner.rtt[f]);
            }
            if self.regions.group(mine.dst) == theirs_group {
                swap(&mut mine.receiver, &mut theirs.receiver);
                swap(&mut mine.receiver_timer, &mut theirs.receiver_timer);
                if mine.completed_at.is_some() {
                    mine.receiver.release_buffers();
                }
            }
        }
        for l in 0..self.net.links.len() {
            let (from, to) = (self.net.links[l].from, self.net.links[l].to);
            if partner.simulates(from) {
                swap(&mut self.net.links[l], &mut partner.net.links[l]);
                self.backlog_max[l] = partner.backlog_max[l];
            }
            if partner.simulates(from) != partner.simulates(to) {
                self.net.links[l].swap_pipe(&mut partner.net.links[l]);
            }
        }
        if self.net.radio.as_ref().is_some_and(|r| partner.simulates(r.base)) {
            swap(&mut self.net.radio, &mut partner.net.radio);
            swap(&mut self.radio_wake, &mut partner.radio_wake);
            swap(&mut self.radio_ready, &mut partner.radio_ready);
        }
        self.counters.packets_sent += partner.counters.packets_sent;
        self.counters.packets_delivered += partner.counters.packets_delivered;
        self.absorbed = true;
        self.absorbed_events += partner.events();
        self.group = None;
    }

    /// Whether this world simulates `node` (all do when not restricted to a group).
    fn simulates(&self, node: NodeId) -> bool {
        self.group.is_none_or(|g| self.regions.group(node) == g)
    }

    /// Restricts this world to the regions of `group`, before it has run: only their flows
    /// start. Group 0's world records, with the readings of group 1's (`peer_readings`);
    /// group 1's records nothing.
    pub(crate) fn restrict_to(&mut self, group: u8) {
        debug_assert_eq!(self.sched.executed(), 0);
        self.sched = flow_events(&self.net, &self.regions, Some(group));
        self.group = Some(group);
        if group == 0 {
            self.peer_readings = self.readings.clone();
        } else {
            self.flow_series = FlowSeries::default();
            self.flow_group_series = FlowGroupSeries::default();
            self.link_series = LinkSeries::default();
        }
    }

    /// Samples at `now` from this world's readings and `peer_readings` (`crate::threads`).
    pub(crate) fn sample_with_peer(&mut self, now: SimTime) {
        let peer = std::mem::take(&mut self.peer_readings);
        self.sample(now, Some(&peer));
        self.peer_readings = peer;
    }

    /// Exchanges this world's readings with `readings` (`crate::threads`).
    pub(crate) fn swap_readings(&mut self, readings: &mut Readings) {
        std::mem::swap(&mut self.readings, readings);
    }

    fn handle(&mut self, now: SimTime, ev: Event) {
        self.dispatch(now, ev);
        while let Some(f) = self.tsq_woken.pop() {
            self.pump(f, now);
        }
    }

    fn dispatch(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::FlowStart(f) => {
                self.net.flows[f as usize].sender.start(now);
                if self.net.flows[f as usize].app.is_some() {
                    self.app_write(f, now);
                }
                self.pump(f, now);
            }
            Event::AppWrite(f) => {
                self.app_write(f, now);
                self.pump(f, now);
            }
            Event::RadioWake => {
                if self.radio_wake == Some(now) {
                    self.radio_wake = None;
                    self.radio_advance(now);
                    self.radio_hand_on(now);
                }
            }
            Event::FlowStop(f) => {
                self.net.flows[f as usize].sender.stop_app();
                self.pump(f, now);
            }
            Event::SenderTimer(f, slot) => {
                let flow = &mut self.net.flows[f as usize];
                if flow.sender_timers[slot as usize] == Some(now) {
                    flow.sender_timers[slot as usize] = None;
                    flow.sender.on_timer(now);
                    self.pump(f, now);
                }
            }
            Event::ReceiverTimer(f) => {
                let flow = &mut self.net.flows[f as usize];
                if flow.receiver_timer == Some(now) {
                    flow.receiver_timer = None;
                    if let Some(ack) = flow.receiver.on_timer(now) {
                        let pkt = Packet::ack(f, flow.dst, flow.src, ack);
                        self.send_from_host(pkt, now);
                    }
                    self.arm_receiver_timer(f);
                }
            }
            Event::LinkTxDone(l) => {
                let (finished, asks) = self.net.links[l as usize].tx_done(now);
                if let Some((flow, payload)) = finished {
                    self.tsq_release(l, flow, payload);
                }
                self.tsq_release_drops(l);
                self.schedule_link(l, asks);
            }
            Event::LinkWake(l) => {
                let asks = self.net.links[l as usize].wake(now);
                self.tsq_release_drops(l);
                self.schedule_link(l, asks);
            }
            Event::LinkArrival(l) => {
                let link = &mut self.net.links[l as usize];
                let (pkt, next) = link.arrive(now);
                let node = link.to;
                if let Some(at) = next {
                    self.sched.schedule(at, Event::LinkArrival(l));
                }
                let Some(pkt) = pkt else { return };
                if node == pkt.dst {
                    self.deliver(pkt, now);
                } else {
                    self.forward(node, pkt, now);
                }
            }
        }
    }

    /// Puts a packet created at a host onto the network.
    fn send_from_host(&mut self, pkt: Packet, now: SimTime) {
        self.counters.packets_sent += 1;
        self.forward(pkt.src, pkt, now);
    }

    /// Hands a packet at `node` to the link (or radio hop) towards its destination.
    fn forward(&mut self, node: NodeId, pkt: Packet, now: SimTime) {
        let l = self.net.routes.next_hop(node, pkt.dst, pkt.flow).expect("routes were checked when the world was built");
        if let Some(hop) = self.net.radio.as_ref().and_then(|r| r.hop(l)) {
            self.radio_advance(now);
            let radio = self.net.radio.as_mut().expect("hop found above");
            // A tail-dropped packet is counted by the cell (`packets_dropped`).
            radio.cell.radio_mut().enqueue(hop.ue, hop.direction, pkt, now);
            self.arm_radio_wake();
            self.radio_hand_on(now);
            return;
        }
        let link = &mut self.net.links[l as usize];
        let asks = link.offer(pkt, now);
        let backlog = link.backlog_packets();
        self.tsq_release_drops(l);
        let max = &mut self.backlog_max[l as usize];
        *max = (*max).max(backlog);
        self.schedule_link(l, asks);
    }

    /// Schedules what link `l` asked for: its transmitter's next event first, then the
    /// arrival of its pipe's earliest packet (a zero-delay link's arrival at the same time
    /// runs after the transmission's end, as the packet arrives once it is sent).
    #[inline]
    fn schedule_link(&mut self, l: LinkId, asks: Asks) {
        match asks.next {
            Some(Next::TxDone(at)) => self.sched.schedule(at, Event::LinkTxDone(l)),
            Some(Next::Wake(at)) => self.sched.schedule(at, Event::LinkWake(l)),
            None => {}
        }
        if let Some(at) = asks.arrival {
            self.sched.schedule(at, Event::LinkArrival(l));
        }
    }

    fn deliver(&mut self, pkt: Packet, now: SimTime) {
        self.counters.packets_delivered += 1;
        let f = pkt.flow;
        let flow = &mut self.net.flows[f as usize];
        match pkt.kind {
            PacketKind::Data(hdr) => {
                let (src, dst) = (flow.src, flow.dst);
                for ack in flow.receiver.on_data(now, &hdr, pkt.ecn) {
                    self.send_from_host(Packet::ack(f, dst, src, ack), now);
                }
                self.arm_receiver_timer(f);
            }
            PacketKind::Ack(hdr) => {
                let outcome = flow.sender.on_ack(now, &hdr);
                if let Some(rtt) = outcome.rtt_sample {
                    let ms = rtt.as_millis_f64();
                    self.rtt[f as usize].add(now, ms, flow.sender.srtt());
                    if self.record_rtt && !self.rtt_series.push(now.as_secs_f64(), f, ms, self.rtt_cap) {
                        self.rtt_overflow = true;
                    }
                }
                if flow.completed_at.is_none() && flow.sender.is_done() && flow.app.is_none_or(|a| a.finished()) {
                    self.complete(f, now);
                }
                self.pump(f, now);
            }
        }
    }

    /// Flow `f` has completed at `now`. Nothing is left to acknowledge, so no RTT is measured
    /// from now on: a finished flow keeps no buffer or histogram sized by its past. Out of
    /// line: it runs once per flow, and the ACK path's code stays as it was.
    #[cold]
    #[inline(never)]
    fn complete(&mut self, f: FlowId, now: SimTime) {
        let flow = &mut self.net.flows[f as usize];
        flow.completed_at = Some(now);
        flow.sender.release_buffers();
        flow.receiver.release_buffers();
        self.rtt[f as usize].samples.freeze();
    }

    /// A data packet of flow `f` left link `l`: if that is the flow's egress, its bytes no
    /// longer count against TCP Small Queues.
    fn tsq_release(&mut self, l: LinkId, f: FlowId, payload: u32) {
        if let Some(tsq) = self.net.flows[f as usize].tsq.as_mut().filter(|t| t.egress == l) {
            if tsq.released(payload) {
                self.tsq_woken.push(f);
            }
        }
    }

    /// Releases the data packets link `l`'s queue discarded (logged only on egress links
    /// under TCP Small Queues). Runs on every enqueue and dequeue, so the common case (no
    /// drop logged) is one inlined test of a flag in the direction's first cache line.
    #[inline]
    fn tsq_release_drops(&mut self, l: LinkId) {
        if self.net.links[l as usize].drops_logged() {
            self.tsq_release_logged(l);
        }
    }

    #[cold]
    fn tsq_release_logged(&mut self, l: LinkId) {
        for (f, payload) in self.net.links[l as usize].take_logged_drops() {
            self.tsq_release(l, f, payload);
        }
    }

    /// Lets the sender transmit everything it may now (as TCP Small Queues allows), then
    /// re-arms its timer.
    fn pump(&mut self, f: FlowId, now: SimTime) {
        loop {
            let flow = &mut self.net.flows[f as usize];
            if let (Some(tsq), Some(sender)) = (flow.tsq.as_mut(), flow.sender.linux()) {
                let cx = sender.cc_view();
                let limit = Tsq::limit(cx.pacing_rate, cx.paced, cx.mss);
                if tsq.holds_back(limit, sender.packets_out(), || sender.retransmission_next()) {
                    break;
                }
            }
            let Some(tx) = flow.sender.poll_transmit(now) else { break };
            if let Some(tsq) = flow.tsq.as_mut() {
                tsq.sent(tx.header.payload);
            }
            let pkt = Packet::data(f, flow.src, flow.dst, tx.header, tx.ecn);
            self.send_from_host(pkt, now);
        }
        let flow = &mut self.net.flows[f as usize];
        flow.sender.end_write(now);
        let deadlines = [(TimerSlot::Rto, flow.sender.rto_deadline()), (TimerSlot::Pacing, flow.sender.pacing_release())];
        for (slot, deadline) in deadlines {
            let Some(at) = deadline else { continue };
            // A pending event at or before `at` will fire and re-arm from the deadline then.
            let pending = &mut flow.sender_timers[slot as usize];
            if pending.is_none_or(|t| at < t) {
                *pending = Some(at);
                self.sched.schedule(at, Event::SenderTimer(f, slot));
            }
        }
    }

    /// Runs the cell up to `now`; its deliveries wait in `radio_ready` for `radio_hand_on`.
    fn radio_advance(&mut self, now: SimTime) {
        let Some(radio) = self.net.radio.as_mut() else { return };
        radio.cell.radio_mut().advance_to(now, &mut self.radio_out);
        self.radio_ready.extend(self.radio_out.drain(..));
    }

    /// Makes sure a `RadioWake` is pending at the cell's next event.
    fn arm_radio_wake(&mut self) {
        let Some(at) = self.net.radio.as_ref().and_then(|r| r.cell.radio().next_event()) else { return };
        if self.radio_wake.is_none_or(|t| at < t) {
            self.radio_wake = Some(at);
            self.sched.schedule(at, Event::RadioWake);
        }
    }

    /// Hands the cell's deliveries to the UEs (downlink) or the eNB (uplink), in order. Not
    /// re-entrant: a delivery that makes a host send into the cell queues behind the others.
    fn radio_hand_on(&mut self, now: SimTime) {
        if self.radio_draining {
            return;
        }
        self.radio_draining = true;
        while let Some(d) = self.radio_ready.pop_front() {
            debug_assert!(d.at <= now, "radio deliveries are handed on when they happen");
            let node = self.net.radio.as_ref().expect("deliveries come from the cell").far_end(d.ue, d.direction);
            if node == d.packet.dst {
                self.deliver(d.packet, now);
            } else {
                self.forward(node, d.packet, now);
            }
        }
        self.radio_draining = false;
        self.arm_radio_wake();
    }

    /// A fixed-rate application makes every write due by `now` (those that do not fit in the
    /// send buffer are discarded) and schedules its next one.
    fn app_write(&mut self, f: FlowId, now: SimTime) {
        let flow = &mut self.net.flows[f as usize];
        let app = flow.app.as_mut().expect("only flows with an application write");
        if flow.stop.is_some_and(|stop| now >= stop) || app.finished() {
            return;
        }
        let due = (now - flow.start).as_nanos() / app.interval.as_nanos().max(1) + 1;
        while app.writes < due && !app.finished() {
            let size = app.next_write_bytes();
            app.writes += 1;
            if flow.sender.send_buffer_free() >= size {
                flow.sender.write(size);
                app.written_bytes += size;
            } else {
                app.discarded += 1;
            }
        }
        if !app.finished() {
            let next = flow.start + app.interval.saturating_mul(app.writes);
            self.sched.schedule(next, Event::AppWrite(f));
        }
    }

    fn arm_receiver_timer(&mut self, f: FlowId) {
        let flow: &mut Flow = &mut self.net.flows[f as usize];
        if let Some(at) = flow.receiver.next_timer() {
            if flow.receiver_timer.is_none_or(|t| at < t) {
                flow.receiver_timer = Some(at);
                self.sched.schedule(at, Event::ReceiverTimer(f));
            }
        }
    }

    /// Takes what a sample at `now` reads of the flow ends and link transmitters this world
    /// simulates (`Readings`). The sender's gauges, not its full snapshot, when flows are
    /// recorded in groups: with thousands of flows each flow's state is out of cache, and the
    /// snapshot reads much more of it (the algorithm's mode and BBR model through its box, the
    /// rates).
    pub(crate) fn take_readings(&mut self, now: SimTime) {
        let World { net, readings, regions, group, plan, .. } = self;
        let mine = |g: u8| group.is_none_or(|own| own == g);
        let grouped = !readings.gauges.is_empty();
        for (i, flow) in net.flows.iter().enumerate() {
            let [sending, receiving] = regions.flow_groups[i];
            if mine(receiving) {
                readings.delivered[i] = flow.receiver.delivered_bytes();
            }
            if mine(sending) {
                if grouped {
                    readings.gauges[i] = (is_active(flow.start, flow.completed_at, now), flow.sender.gauges());
                } else {
                    readings.stats[i] = Some(flow.sender.stats());
                }
            }
        }
        for (l, link) in net.links.iter().enumerate() {
            if mine(regions.link_groups[l]) {
                readings.backlog[l] = link.backlog_packets();
            }
        }
        for (k, &l) in plan.links.iter().enumerate() {
            if mine(regions.link_groups[l as usize]) {
                let link = &net.links[l as usize];
                readings.queues[k] = (link.queue.len_packets(), link.queue.len_bytes(), QueueBaseline::of(link));
            }
        }
    }

    /// The readings taken by the world that simulates group `group`'s ends: `peer`'s (the
    /// other group's, under `crate::threads`) or this one's.
    fn readings_of<'a>(&'a self, peer: Option<&'a Readings>, group: u8) -> &'a Readings {
        match peer {
            Some(peer) if self.group != Some(group) => peer,
            _ => &self.readings,
        }
    }

    /// Samples flows and links at `now` from the readings taken then (`take_readings`) by
    /// this world and by the other group's world (`peer`, under `crate::threads`).
    pub(crate) fn sample(&mut self, now: SimTime, peer: Option<&Readings>) {
        let t = now.as_secs_f64();
        if self.plan.groups.is_some() {
            self.sample_flow_groups(now, peer);
        } else {
            self.sample_each_flow(t, peer);
        }
        self.samples_taken += 1;
        // The direction's own emptiness flag, not its queue: a strided scan of the directions
        // instead of one pointer chase per direction (thousands of them with many flows).
        for l in 0..self.backlog_sum.len() {
            self.backlog_sum[l] += u64::from(self.readings_of(peer, self.regions.link_groups[l]).backlog[l]);
        }
        for k in 0..self.plan.links.len() {
            let i = self.plan.links[k];
            let (backlog_pkts, backlog_bytes, now) = self.readings_of(peer, self.regions.link_groups[i as usize]).queues[k];
            let s = &mut self.link_series;
            s.t_s.push(t);
            s.link.push(i);
            s.backlog_pkts.push(backlog_pkts as f64);
            s.backlog_bytes.push(backlog_bytes as f64);
            let before = std::mem::replace(&mut self.link_baseline[k], now);
            let dropped = |r: usize| (now.drops[r] - before.drops[r]) as f64;
            s.drops.push((0..DropReason::COUNT).map(dropped).sum());
            s.tail_drops.push(dropped(0));
            s.head_drops.push(dropped(1));
            s.aqm_drops.push(dropped(2));
            s.overlimit_drops.push(dropped(3));
            s.policer_drops.push(dropped(4));
            s.ce_marks.push((now.ce_marks - before.ce_marks) as f64);
            s.sojourn_ms.push(now.sojourn.mean_ms_since(before.sojourn));
            s.l4s_sojourn_ms.push(now.l4s_sojourn.mean_ms_since(before.l4s_sojourn));
        }
    }

    /// Goodput (Mbit/s) and retransmissions of flow `i` since the previous sample, from its
    /// bytes delivered and retransmissions now, moving its baseline to now.
    fn interval_counts(&mut self, i: usize, delivered: u64, retransmits: u64) -> (f64, f64) {
        let base = std::mem::replace(&mut self.flow_baseline[i], Baseline { delivered_bytes: delivered, retransmits });
        ((delivered - base.delivered_bytes) as f64 * 8e-6 / self.sample_interval.as_secs_f64(), (retransmits - base.retransmits) as f64)
    }

    fn sample_each_flow(&mut self, t: f64, peer: Option<&Readings>) {
        let nan_if_none = |v: Option<f64>| v.unwrap_or(f64::NAN);
        for i in 0..self.net.flows.len() {
            let [sending, receiving] = self.regions.flow_groups[i];
            let st = self.readings_of(peer, sending).stats[i].expect("taken by the world that simulates the sender");
            let delivered = self.readings_of(peer, receiving).delivered[i];
            let (goodput_mbps, retransmits) = self.interval_counts(i, delivered, st.retransmits);
            let s = &mut self.flow_series;
            s.t_s.push(t);
            s.flow.push(i as u32);
            s.cwnd_pkts.push(st.cwnd_pkts as f64);
            s.ssthresh_pkts.push(nan_if_none(st.ssthresh_pkts.map(f64::from)));
            s.inflight_pkts.push(st.inflight_pkts as f64);
            s.srtt_ms.push(nan_if_none(st.srtt.map(|d| d.as_millis_f64())));
            s.min_rtt_ms.push(nan_if_none(st.min_rtt.map(|d| d.as_millis_f64())));
            s.pacing_rate_mbps.push(nan_if_none(st.pacing_rate.map(|r| r.mbps())));
            s.delivery_rate_mbps.push(nan_if_none(st.delivery_rate.map(|r| r.mbps())));
            s.delivery_rate_app_limited.push(u32::from(st.delivery_rate_app_limited));
            s.goodput_mbps.push(goodput_mbps);
            s.retransmits.push(retransmits);
            s.cc_state.push(st.cc_state);
            let bbr = st.bbr.as_ref();
            s.bbr_bw_mbps.push(nan_if_none(bbr.map(|b| b.bw_bytes_per_sec as f64 * 8e-6)));
            s.bbr_min_rtt_ms.push(nan_if_none(bbr.filter(|b| b.min_rtt_us != u32::MAX).map(|b| f64::from(b.min_rtt_us) / 1e3)));
            s.bbr_pacing_gain.push(nan_if_none(bbr.map(|b| BbrInfo::gain_ratio(b.pacing_gain))));
            s.bbr_cwnd_gain.push(nan_if_none(bbr.map(|b| BbrInfo::gain_ratio(b.cwnd_gain))));
            s.bbr_lt_bw_mbps.push(nan_if_none(bbr.and_then(|b| b.lt_bw_bytes_per_sec).map(|b| b as f64 * 8e-6)));
        }
    }

    fn sample_flow_groups(&mut self, now: SimTime, peer: Option<&Readings>) {
        let groups = self.plan.groups.take().expect("called with groups");
        let mut samples = std::mem::take(&mut self.flow_samples);
        for group in &groups {
            samples.clear();
            for &i in &group.flows {
                let [sending, receiving] = self.regions.flow_groups[i as usize];
                let (active, sender) = self.readings_of(peer, sending).gauges[i as usize];
                let delivered = self.readings_of(peer, receiving).delivered[i as usize];
                let (goodput_mbps, retransmits) = self.interval_counts(i as usize, delivered, sender.retransmits);
                samples.push(FlowSample {
                    active,
                    goodput_mbps,
                    cwnd_pkts: sender.cwnd_pkts as f64,
                    inflight_pkts: sender.inflight_pkts as f64,
                    srtt_ms: sender.srtt.map(|d| d.as_millis_f64()),
                    retransmits,
                });
            }
            self.flow_group_series.push_group(now.as_secs_f64(), group, samples.iter().copied(), &mut self.group_scratch);
        }
        self.plan.groups = Some(groups);
        self.flow_samples = samples;
    }

    /// Packets held by links and the cell right now (queued, in service, propagating).
    pub fn packets_in_network(&self) -> u64 {
        let radio = self.net.radio.as_ref().map_or(0, |r| r.cell.radio().packets_held());
        self.net.links.iter().map(|l| l.packets_held()).sum::<u64>() + radio + self.radio_ready.len() as u64
    }

    /// Runs the cell to `now` and samples it, if this world simulates it.
    pub(crate) fn sample_radio(&mut self, now: SimTime) {
        if self.net.radio.as_ref().is_none_or(|r| !self.simulates(r.base)) {
            return;
        }
        self.radio_advance(now);
        self.radio_hand_on(now);
        if let Some(radio) = self.net.radio.as_mut() {
            radio.cell.sample(now, self.sample_interval);
        }
    }

    /// Hands every recorded series out, named (leaving them empty): flows, links, the per-ACK
    /// RTT samples when recorded, and the cell's series.
    pub fn take_series(&mut self) -> Vec<(&'static str, Columns)> {
        use std::mem::take;
        let flows = match self.plan.groups {
            Some(_) => (FlowGroupSeries::SCHEMA.name, take(&mut self.flow_group_series).into_columns()),
            None => (FlowSeries::SCHEMA.name, take(&mut self.flow_series).into_columns()),
        };
        let mut series = vec![flows, (LinkSeries::SCHEMA.name, take(&mut self.link_series).into_columns())];
        if self.record_rtt {
            series.push((RttSeries::SCHEMA.name, take(&mut self.rtt_series).into_columns()));
        }
        if let Some(radio) = self.net.radio.as_mut() {
            series.push((radio.cell.series().name, radio.cell.take_columns()));
        }
        series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rtt_samples_past_the_budget_stop_the_run_with_an_error() {
        let scenario = crate::resolve(json!({
            "duration": "2s",
            "record": {"rtt": true},
            "topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "100pkt"}},
            "flows": [{"cc": "cubic"}],
        }))
        .unwrap();
        let mut world = World::new(scenario, &mut || Ok::<(), ScenarioError>(())).unwrap();
        assert!(world.rtt_cap > 1_000_000);
        world.rtt_cap = 100;
        let half_second = SimTime::ZERO + SimDuration::from_millis(500);
        assert!(!world.run_until(half_second, 1000));
        assert_eq!(world.events(), 1000);
        assert!(world.run_until(half_second, u64::MAX));
        assert_eq!(world.rtt_series.t_s.len(), 100);
        let e = world.rtt_overflow().expect("the cap was reached");
        assert_eq!(e.path, "record.rtt");
        assert!(
            e.message.starts_with("the run was stopped at 0.500 s of 2s: its 100 per-ACK RTT samples reached record.memory_limit"),
            "{e}"
        );
    }

    #[test]
    fn a_finished_flow_keeps_no_buffer_sized_by_its_window() {
        // 2 MB through a 40-packet buffer: windows of tens of segments, losses and SACK holes.
        let scenario = crate::resolve(json!({
            "duration": "10s",
            "topology": {"kind": "dumbbell", "bottleneck": {"rate": "20Mbps", "delay": "20ms", "buffer": "40pkt"}},
            "flows": [{"cc": "cubic", "bytes": "2MB"}, {"cc": "bbr", "bytes": "2MB", "tcp": {"stack": "ns3"}}],
        }))
        .unwrap();
        let mut world = World::new(scenario, &mut || Ok::<(), ScenarioError>(())).unwrap();
        let held = |w: &World, i: usize| {
            let flow = &w.net.flows[i];
            flow.sender.heap_bytes() + flow.receiver.heap_bytes() + w.rtt[i].samples.heap_bytes()
        };
        let mut peak = [0; 2];
        while !world.run_until(world.end(), 1) {
            for (i, peak) in peak.iter_mut().enumerate() {
                *peak = (*peak).max(held(&world, i));
            }
        }
        for (i, peak) in peak.into_iter().enumerate() {
            assert!(world.net.flows[i].completed_at.is_some(), "flow {i} did not complete");
            assert!(peak > 2_000 && held(&world, i) <= 48, "flow {i}: {peak} B at most, {} B at the end", held(&world, i));
        }
        assert!(crate::summary::summarize(&world).flows.iter().all(|f| f.rtt_p99_ms.is_some()));
    }

    /// Reno behind a 10 Mbit/s access link (1.2 ms per 1500 B packet), 400 ms RTT.
    fn access_limited(tsq: bool, access_buffer: &str) -> World {
        let scenario = crate::resolve(json!({
            "duration": "3s",
            "tcp": {"initial_cwnd": 100, "tsq": tsq},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"rate": "1Gbps", "delay": "200ms", "buffer": "1000pkt"},
                "access": {"rate": "10Mbps", "delay": "0ms", "buffer": access_buffer},
            },
            "flows": [{"cc": "reno"}],
        }))
        .unwrap();
        World::new(scenario, &mut || Ok::<(), ScenarioError>(())).unwrap()
    }

    /// Runs one event at a time up to `until`, calling `check` with the flow's data packets
    /// in its egress link (queued or being serialized) after each.
    fn step(world: &mut World, until_ms: u64, mut check: impl FnMut(&World, u32)) {
        let egress = world.net.links.iter().position(|l| l.name == "s0->left").unwrap();
        let until = SimTime::ZERO + SimDuration::from_millis(until_ms);
        loop {
            let done = world.run_until(until, 1);
            let link = &world.net.links[egress];
            check(world, link.queue.len_packets() + u32::from(link.busy(world.now())));
            if done {
                return;
            }
        }
    }

    #[test]
    fn tsq_keeps_three_segments_in_the_egress_and_refills_it_as_each_leaves() {
        let mut world = access_limited(true, "1000pkt");
        // No RTT sample yet: Linux's pacing rate is unlimited, so the limit is the 4 MB
        // sysctl and the whole initial window goes to the egress at once.
        step(&mut world, 1, |_, held| assert!(held <= 100));
        assert_eq!(world.net.links.iter().find(|l| l.name == "s0->left").unwrap().queue.len_packets(), 99);
        let (mut most, mut full) = (0, 0);
        step(&mut world, 1100, |w, held| {
            let st = w.net.flows[0].sender.stats();
            let Some(rate) = st.pacing_rate else { return };
            // Slow start paces at 2 · cwnd · MSS / SRTT, under 5.6 MB/s here (cwnd < 770):
            // the limit is two truesizes, 2 · (1448 + 1280) = 5456 B.
            assert_eq!(crate::tsq::Tsq::limit(rate.bps() / 8, false, 1448), 5456, "{rate:?}");
            // 0, 2728 and 5456 B pass the check (not above 5456 B); the fourth waits. While
            // cwnd has room the egress is refilled to three at once.
            most = most.max(held);
            assert!(held == 3 || st.inflight_pkts >= st.cwnd_pkts, "{held} held, {} in flight, cwnd {}", st.inflight_pkts, st.cwnd_pkts);
            full += u32::from(held == 3);
        });
        assert_eq!(most, 3);
        assert!(full > 300, "{full}");
        assert!(world.net.flows[0].sender.stats().cwnd_pkts > 300);
    }

    #[test]
    fn without_tsq_the_egress_holds_whatever_cwnd_allows() {
        let mut world = access_limited(false, "1000pkt");
        assert!(world.net.flows[0].tsq.is_none());
        let mut most = 0;
        step(&mut world, 1100, |w, held| {
            if w.net.flows[0].sender.stats().srtt.is_some() {
                most = most.max(held);
            }
        });
        assert!(most > 50, "slow start queues about half of each flight: {most}");
    }

    #[test]
    fn tsq_releases_the_bytes_of_packets_its_egress_queue_drops() {
        let mut world = access_limited(true, "2pkt");
        let truesize = crate::tsq::Tsq::truesize(1448);
        step(&mut world, 2500, |w, held| {
            assert_eq!(w.net.flows[0].tsq.unwrap().held(), u64::from(held) * truesize);
        });
        let egress = world.net.links.iter().find(|l| l.name == "s0->left").unwrap();
        assert!(egress.stats.queue.tail > 90, "the initial window overflows the 2-packet buffer");
    }
}
