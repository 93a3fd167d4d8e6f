//! Builds the simulated world from a resolved scenario: node and link tables (a dumbbell
//! expands into hosts, routers and links, with its senders on a WiFi BSS if asked; a parking
//! lot into its routers in a row and its pairs; a leaf-spine into hosts, leaves and spines,
//! routed by ECMP; an mmWave topology into its core network and a cell; a cell's radio hops
//! join the routing table),
//! queues, link models with their own random streams, routes towards the flows' ends, and
//! one TCP sender/receiver pair per flow with its application. Every step is linear in the
//! number of nodes, links and flows, and calls a `tick` now and then so that a long setup
//! can report progress and be stopped.

use crate::cell::RecordedCell;
use crate::error::ScenarioError;
use crate::link_spec::{queue_context, AggregationSpec, JitterSpec, LinkSpec, LossSpec, TokenBucketSpec};
use crate::mmwave::{ENB, PGW, REMOTE};
use crate::mmwave_record::RecordedMmwave;
use crate::scenario::{
    dumbbell_node_names, AtoSpec, FlowSpec, LeafSpine, PacingSpec, ParkingLot, RecoverySpec, RtoSpec, Scenario, Ssthresh, StackSpec,
    TcpSpec, Topology,
};
use crate::tsq::Tsq;
use crate::units::{BufferValue, EcnThresholdValue};
use crate::wifi_record::RecordedWifi;
use std::collections::HashMap;
use std::sync::Arc;
use tcplab_cc::INFINITE_SSTHRESH;
use tcplab_core::{FlowId, LinkId, NodeId, SimDuration, SimRng, SimTime};
use tcplab_net::mmwave::cell::MmWaveCell;
use tcplab_net::mmwave::phy::Mcs;
use tcplab_net::radio::{RadioDirection, UserId};
use tcplab_net::wifi::bss::WifiBss;
use tcplab_net::{
    DeliveryEffects, DeviceQueue, Direction, FrameFormat, LinkModel, Model, Node, NodeRole, QueueConfig, RoutingTable, Trace, TraceLink,
    WiredLink,
};
use tcplab_tcp::{DelayedAck, EcnMode, FlowSender, Ns3Sender, PacingMode, RecoveryMode, RtoMode, Stack, TcpConfig, TcpReceiver, TcpSender};

/// One TCP connection in the world.
pub struct Flow {
    pub src: NodeId,
    pub dst: NodeId,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub sender: FlowSender,
    pub receiver: TcpReceiver,
    /// Pending timer event of each sender timer slot (`world::TimerSlot`) and of the receiver.
    pub sender_timers: [Option<SimTime>; 2],
    pub receiver_timer: Option<SimTime>,
    /// When a byte-count transfer was fully acknowledged.
    pub completed_at: Option<SimTime>,
    /// A fixed-rate application; None for bulk.
    pub app: Option<RateApp>,
    /// TCP Small Queues on the sender's wired egress link (`tcp.tsq`), if any.
    pub tsq: Option<Tsq>,
}

/// The network and flows of a scenario, ready to run.
pub struct Network {
    pub nodes: Vec<Node>,
    /// Wired link directions; their index is their `LinkId`.
    pub links: Vec<Direction>,
    /// The radio cell (mmWave cell or WiFi BSS), if the topology has one; its radio hops
    /// follow the wired links in the routing table's `LinkId` space.
    pub radio: Option<RadioAccess>,
    pub routes: RoutingTable,
    pub flows: Vec<Flow>,
}

impl Network {
    /// The link directions (radio hops included) a packet of `flow` from `src` to `dst`
    /// takes, in order.
    pub fn path(&self, src: NodeId, dst: NodeId, flow: FlowId) -> impl Iterator<Item = LinkId> + '_ {
        let mut node = src;
        std::iter::from_fn(move || {
            let link = self.routes.next_hop(node, dst, flow)?;
            node = match self.radio.as_ref().and_then(|r| r.hop(link).map(|h| r.far_end(h.ue, h.direction))) {
                Some(far_end) => far_end,
                None => self.links[link as usize].to,
            };
            Some(link)
        })
    }
}

/// One hop across the radio: base → user (downlink) or user → base (uplink).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadioHop {
    pub ue: UserId,
    pub direction: RadioDirection,
}

/// A cell and how it joins the network.
pub struct RadioAccess {
    /// The cell and what it records.
    pub cell: Box<dyn RecordedCell>,
    /// The eNB or the access point.
    pub base: NodeId,
    /// Node of each UE, in UE order.
    pub ue_nodes: Vec<NodeId>,
    /// `LinkId` of the first radio hop; hop k is `first_hop + k`.
    pub first_hop: LinkId,
    pub hops: Vec<RadioHop>,
    /// The most a hop can carry (the PHY rate at the cell's highest MCS), bit/s.
    pub peak_rate_bps: f64,
}

impl RadioAccess {
    /// The radio hop a routing `LinkId` names, if it is one.
    pub fn hop(&self, link: LinkId) -> Option<RadioHop> {
        link.checked_sub(self.first_hop).map(|k| self.hops[k as usize])
    }

    /// The node a delivery over `hop` reaches.
    pub fn far_end(&self, ue: UserId, direction: RadioDirection) -> NodeId {
        match direction {
            RadioDirection::Dl => self.ue_nodes[ue],
            RadioDirection::Ul => self.base,
        }
    }

    fn new(cell: Box<dyn RecordedCell>, base: NodeId, ue_nodes: Vec<NodeId>, first_hop: LinkId, peak_rate_bps: f64) -> RadioAccess {
        let hops = (0..ue_nodes.len())
            .flat_map(|ue| [RadioHop { ue, direction: RadioDirection::Dl }, RadioHop { ue, direction: RadioDirection::Ul }])
            .collect();
        RadioAccess { cell, base, ue_nodes, first_hop, hops, peak_rate_bps }
    }

    /// (from, to) of every radio hop, in `LinkId` order.
    fn edges(&self) -> impl Iterator<Item = (NodeId, NodeId)> + '_ {
        self.hops.iter().map(|h| match h.direction {
            RadioDirection::Dl => (self.base, self.ue_nodes[h.ue]),
            RadioDirection::Ul => (self.ue_nodes[h.ue], self.base),
        })
    }
}

/// State of a fixed-rate application (`FlowSpec::app`).
#[derive(Clone, Copy, Debug)]
pub struct RateApp {
    /// Time between writes and bytes per write.
    pub interval: SimDuration,
    pub packet_size: u64,
    /// Writes made so far (accepted or discarded) and bytes accepted.
    pub writes: u64,
    pub written_bytes: u64,
    /// Writes discarded because the send buffer was full.
    pub discarded: u64,
    /// Total bytes the application writes (the flow's `bytes`), if bounded.
    pub total_bytes: Option<u64>,
}

impl RateApp {
    /// Every write of a bounded application has been made.
    pub fn finished(&self) -> bool {
        self.total_bytes.is_some_and(|t| self.writes * self.packet_size >= t)
    }

    /// Size of the next write: a whole packet, or what remains of the total.
    pub fn next_write_bytes(&self) -> u64 {
        let made = self.writes * self.packet_size;
        self.total_bytes.map_or(self.packet_size, |t| self.packet_size.min(t.saturating_sub(made)))
    }
}

struct Builder<'t, E> {
    seed: u64,
    nodes: Vec<Node>,
    ids: HashMap<String, NodeId>,
    links: Vec<Direction>,
    /// Traces by file name, each read once and shared by the directions that replay it.
    traces: HashMap<String, Arc<Trace>>,
    tick: &'t mut dyn FnMut() -> Result<(), E>,
}

impl<E: From<ScenarioError>> Builder<'_, E> {
    fn add_node(&mut self, name: String, host: bool) {
        self.ids.insert(name.clone(), self.nodes.len() as NodeId);
        self.nodes.push(Node { name, role: if host { NodeRole::Host } else { NodeRole::Router } });
    }

    fn node_id(&self, name: &str) -> NodeId {
        *self.ids.get(name).expect("resolved scenarios name known nodes")
    }

    /// The trace in file `path`, read on its first use.
    fn trace(&mut self, path: &str, key: String) -> Result<Arc<Trace>, E> {
        if let Some(trace) = self.traces.get(path) {
            return Ok(trace.clone());
        }
        let trace = Arc::new(Trace::load(path).map_err(|e| ScenarioError::new(key, e))?);
        self.traces.insert(path.to_string(), trace.clone());
        Ok(trace)
    }

    /// Adds both directions of a full-duplex link; `delay` overrides the spec's delay;
    /// `path` is the link's key path (for a trace file that cannot be read any more).
    fn add_link(&mut self, a: &str, b: &str, spec: &LinkSpec, delay: Option<SimDuration>, path: &str) -> Result<(), E> {
        let (ia, ib) = (self.node_id(a), self.node_id(b));
        let rev = spec.reverse.clone().unwrap_or_default();
        let delay = delay.unwrap_or(spec.delay.0);
        let directions = [
            DirectionSettings {
                from: ia,
                to: ib,
                buffer: spec.buffer,
                queue: &spec.queue,
                loss: spec.loss,
                ecn_threshold: spec.ecn_threshold,
                policer: spec.policer,
                shaper: spec.shaper,
                trace: spec.trace.as_deref().map(|t| (t, format!("{path}.trace"))),
                jitter: spec.jitter,
                aggregation: spec.aggregation,
            },
            DirectionSettings {
                from: ib,
                to: ia,
                buffer: rev.buffer.unwrap_or(spec.buffer),
                queue: rev.queue.as_ref().unwrap_or(&spec.queue),
                loss: rev.loss.unwrap_or(spec.loss),
                ecn_threshold: rev.ecn_threshold.or(spec.ecn_threshold),
                policer: rev.policer,
                shaper: rev.shaper,
                trace: rev.trace.as_deref().map(|t| (t, format!("{path}.reverse.trace"))),
                jitter: rev.jitter.or(spec.jitter),
                aggregation: rev.aggregation,
            },
        ];
        for d in directions {
            let id = self.links.len() as u32;
            let name = format!("{}->{}", self.nodes[d.from as usize].name, self.nodes[d.to as usize].name);
            let rng = SimRng::stream(self.seed, &format!("link/{name}/loss"));
            let model: Model = match d.trace {
                Some((file, key)) => {
                    let format = FrameFormat { mtu: spec.mtu, framing: spec.framing };
                    let trace: Box<dyn LinkModel> =
                        Box::new(TraceLink::new(self.trace(file, key)?, spec.rate.0, delay, format, d.loss.model(), rng));
                    trace.into()
                }
                None => WiredLink::new(spec.rate.0, delay, spec.mtu, d.loss.model(), rng)
                    .with_framing(spec.framing)
                    .with_shaper(d.shaper.map(|s| s.bucket()))
                    .into(),
            };
            let queue_rng = SimRng::stream(self.seed, &format!("link/{name}/queue"));
            let mut queue = d.queue.build(queue_context(spec, d.buffer, d.ecn_threshold, queue_rng));
            if spec.device_queue > 0 {
                queue = DeviceQueue::boxed(queue, spec.device_queue);
            }
            let effects = DeliveryEffects::new(
                d.jitter.map(|j| j.jitter()),
                d.aggregation.map(|a| a.interval.0),
                SimRng::stream(self.seed, &format!("link/{name}/jitter")),
            );
            let mut direction = Direction::new(id, name, d.from, d.to, queue, model).with_effects(effects);
            direction.policer = d.policer.map(|p| Box::new(p.bucket()));
            self.links.push(direction);
        }
        (self.tick)()
    }
}

/// What one direction of a link is built with.
struct DirectionSettings<'s> {
    from: NodeId,
    to: NodeId,
    buffer: BufferValue,
    queue: &'s QueueConfig,
    loss: LossSpec,
    ecn_threshold: Option<EcnThresholdValue>,
    policer: Option<TokenBucketSpec>,
    shaper: Option<TokenBucketSpec>,
    /// Trace file and its key path.
    trace: Option<(&'s str, String)>,
    jitter: Option<JitterSpec>,
    aggregation: Option<AggregationSpec>,
}

pub fn tcp_config(t: &TcpSpec) -> TcpConfig {
    TcpConfig {
        stack: match t.stack {
            StackSpec::Linux => Stack::Linux,
            StackSpec::Ns3 => Stack::Ns3,
        },
        mss: t.mss,
        initial_cwnd: t.initial_cwnd,
        initial_ssthresh: match t.initial_ssthresh {
            Ssthresh::Packets(n) => n,
            Ssthresh::Infinite(_) => INFINITE_SSTHRESH,
        },
        min_rto: t.min_rto.0,
        max_rto: t.max_rto.0,
        initial_rto: t.initial_rto.0,
        rto_mode: match t.rto {
            RtoSpec::Linux => RtoMode::Linux,
            RtoSpec::Rfc6298 => RtoMode::Rfc6298,
        },
        sack: t.sack,
        snd_buf_bytes: t.snd_buf.0,
        rcv_buf_bytes: t.rcv_buf.0,
        pacing: match t.pacing {
            PacingSpec::Off => PacingMode::Off,
            PacingSpec::Fq => PacingMode::Fq,
        },
        recovery: match t.recovery {
            RecoverySpec::RackTlp => RecoveryMode::RackTlp,
            RecoverySpec::Rfc6675 => RecoveryMode::Rfc6675,
        },
        undo: t.undo,
        ecn: if t.ecn { EcnMode::Classic } else { EcnMode::Off },
        delayed_ack: DelayedAck {
            every: t.ack_every,
            timeout: t.delack_timeout.0,
            quickack_segments: t.quickack,
            adaptive: t.ato == AtoSpec::Linux,
        },
        slow_start_after_idle: t.slow_start_after_idle,
        gso: t.gso,
        tso_defer: t.tso_defer,
    }
}

fn build_flow<E: From<ScenarioError>>(b: &Builder<E>, f: &FlowSpec, index: usize, scenario: &Scenario) -> Flow {
    let tcp = f.tcp.as_ref().unwrap_or(&scenario.tcp);
    let mut cfg = tcp_config(tcp);
    let rng = SimRng::stream(scenario.seed, &format!("flow/{index}/cc"));
    let (cc, ns3_cc) = match tcp.stack {
        StackSpec::Linux => (Some(f.cc.build(rng)), None),
        StackSpec::Ns3 => (None, Some(tcplab_cc::ns3::build(&f.cc, rng, tcp.ns3_version))),
    };
    // Linux TCP_CONG_NEEDS_ECN: the algorithm negotiates ECN itself, whatever `tcp.ecn` says;
    // an L4S one (TCP_CONG_NEEDS_ACCECN, Prague) sends ECT(1).
    if let Some(cc) = cc.as_ref().filter(|cc| cc.needs_accurate_ecn()) {
        cfg.ecn = if cc.sends_ect1() { EcnMode::L4s } else { EcnMode::Accurate };
    }
    let receiver = TcpReceiver::new(&cfg);
    let app = f.app.as_ref().map(|a| RateApp {
        interval: a.rate.0.tx_time(a.packet_size.0),
        packet_size: a.packet_size.0,
        writes: 0,
        written_bytes: 0,
        discarded: 0,
        total_bytes: f.bytes.map(|b| b.0),
    });
    // A fixed-rate application starts with nothing written; bulk has `bytes` (or all) at once.
    let initial_bytes = if app.is_some() { Some(0) } else { f.bytes.map(|b| b.0) };
    Flow {
        src: b.node_id(f.src.as_deref().expect("resolved")),
        dst: b.node_id(f.dst.as_deref().expect("resolved")),
        start: SimTime::ZERO + f.start.0,
        stop: f.stop.map(|s| SimTime::ZERO + s.0),
        sender: match (cc, ns3_cc) {
            (Some(cc), _) => FlowSender::Linux(TcpSender::new(cfg, cc, initial_bytes)),
            (None, Some(cc)) => FlowSender::Ns3(Ns3Sender::new(cfg, cc, initial_bytes)),
            (None, None) => unreachable!("one stack builds the algorithm"),
        },
        receiver,
        sender_timers: [None; 2],
        receiver_timer: None,
        completed_at: None,
        app,
        tsq: None,
    }
}

/// Builds the network of a resolved scenario. Fails only on what needs the built graph
/// (a flow between unconnected hosts).
pub fn build(scenario: &Scenario) -> Result<Network, ScenarioError> {
    build_with(scenario, &mut || Ok(()))
}

/// [`build`], calling `tick` after each link, routing table and flow; an error from it
/// stops the build.
pub fn build_with<E: From<ScenarioError>>(scenario: &Scenario, tick: &mut dyn FnMut() -> Result<(), E>) -> Result<Network, E> {
    let mut b = Builder { seed: scenario.seed, nodes: Vec::new(), ids: HashMap::new(), links: Vec::new(), traces: HashMap::new(), tick };
    match &scenario.topology {
        Topology::Dumbbell(d) => {
            let pairs = d.pairs.expect("resolved dumbbells have pairs");
            for (name, host) in dumbbell_node_names(pairs) {
                b.add_node(name, host);
            }
            b.add_link("left", "right", &d.bottleneck, None, "topology.bottleneck")?;
            for i in 0..pairs as usize {
                if d.wifi.is_none() {
                    let delay = d.access_delays.as_ref().map(|v| v[i].0);
                    b.add_link(&format!("s{i}"), "left", &d.access, delay, "topology.access")?;
                }
                b.add_link("right", &format!("r{i}"), &d.access, None, "topology.access")?;
            }
        }
        Topology::ParkingLot(p) => {
            for (name, host) in p.node_names() {
                b.add_node(name, host);
            }
            for h in 0..p.hops {
                let (link, path) = p.hop_link(h);
                b.add_link(&ParkingLot::router(h), &ParkingLot::router(h + 1), link, None, &path)?;
            }
            let (first, last) = (ParkingLot::router(0), ParkingLot::router(p.hops));
            for [src, dst] in (0..p.pairs.expect("resolved parking lots have pairs")).map(ParkingLot::through_pair) {
                b.add_link(&src, &first, &p.access, None, "topology.access")?;
                b.add_link(&last, &dst, &p.access, None, "topology.access")?;
            }
            for h in 0..p.hops {
                for [src, dst] in (0..p.cross_pairs).map(|j| ParkingLot::cross_pair(h, j)) {
                    b.add_link(&src, &ParkingLot::router(h), &p.access, None, "topology.access")?;
                    b.add_link(&ParkingLot::router(h + 1), &dst, &p.access, None, "topology.access")?;
                }
            }
        }
        Topology::LeafSpine(t) => {
            for (name, host) in t.node_names() {
                b.add_node(name, host);
            }
            for l in 0..t.leaves {
                for i in 0..t.hosts_per_leaf {
                    b.add_link(&LeafSpine::host(l, i), &LeafSpine::leaf(l), &t.host_link, None, "topology.host_link")?;
                }
            }
            for l in 0..t.leaves {
                for s in 0..t.spines {
                    b.add_link(&LeafSpine::leaf(l), &LeafSpine::spine(s), &t.fabric_link, None, "topology.fabric_link")?;
                }
            }
        }
        Topology::Mmwave(_) => {} // after the match: it also builds the cell
        Topology::Explicit(e) => {
            for n in &e.nodes {
                b.add_node(n.name.clone(), n.role == crate::scenario::NodeRoleSpec::Host);
            }
            for (i, l) in e.links.iter().enumerate() {
                b.add_link(l.a.as_deref().expect("resolved"), l.b.as_deref().expect("resolved"), l, None, &format!("topology.links.{i}"))?;
            }
        }
    }
    let mut radio = None;
    if let Topology::Dumbbell(d) = &scenario.topology {
        if let Some(wifi) = &d.wifi {
            let pairs = d.pairs.expect("resolved dumbbells have pairs");
            let config = wifi.clone().resolve(pairs)?;
            let stations: Vec<NodeId> = (0..pairs).map(|i| b.node_id(&format!("s{i}"))).collect();
            let (bss, ap) = (WifiBss::new(config, scenario.seed), b.node_id("left"));
            let peak = bss.phy_rate_bps();
            let cell = Box::new(RecordedWifi::new(bss, ap, &stations));
            radio = Some(RadioAccess::new(cell, ap, stations, b.links.len() as LinkId, peak));
        }
    }
    if let Topology::Mmwave(m) = &scenario.topology {
        for (name, host) in m.node_names() {
            b.add_node(name, host);
        }
        b.add_link(REMOTE, PGW, &m.remote, None, "topology.remote")?;
        b.add_link(PGW, ENB, &m.s1u, None, "topology.s1u")?;
        let config = m.cell_config(SimTime::ZERO + scenario.duration.0, m.remote.mtu)?;
        let peak = config.frame.phy_rate_bps(Mcs::MAX, config.frame.data_symbols_per_subframe());
        let cell = MmWaveCell::new(config, scenario.seed).map_err(|e| ScenarioError::new("topology", e.to_string()))?;
        let ues: Vec<NodeId> = m.ue_names().iter().map(|n| b.node_id(n)).collect();
        let cell = Box::new(RecordedMmwave::new(cell, ues.clone()));
        radio = Some(RadioAccess::new(cell, b.node_id(ENB), ues, b.links.len() as LinkId, peak));
    }
    let mut edges: Vec<(NodeId, NodeId)> = b.links.iter().map(|l| (l.from, l.to)).collect();
    if let Some(r) = &radio {
        edges.extend(r.edges());
    }
    // ECMP where a topology's equal-cost paths are there to be spread over; elsewhere the
    // lowest link, as before ECMP existed (same routes, same results).
    let ecmp = match &scenario.topology {
        Topology::LeafSpine(_) => true,
        Topology::Explicit(e) => e.ecmp,
        Topology::Dumbbell(_) | Topology::Mmwave(_) | Topology::ParkingLot(_) => false,
    };
    let mut routes = if ecmp {
        RoutingTable::with_ecmp(b.nodes.len(), &edges, SimRng::stream(scenario.seed, "routing/ecmp").next_u64())
    } else {
        RoutingTable::new(b.nodes.len(), &edges)
    };
    let mut flows = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        let mut flow = build_flow(&b, f, i, scenario);
        for end in [flow.dst, flow.src] {
            if routes.route_towards(end) {
                (b.tick)()?;
            }
        }
        if !routes.reachable(flow.src, flow.dst) || !routes.reachable(flow.dst, flow.src) {
            return Err(ScenarioError::new(
                format!("flows.{i}.dst"),
                format!(
                    "{:?} cannot be reached from {:?}: no path of links joins them",
                    f.dst.as_deref().unwrap_or_default(),
                    f.src.as_deref().unwrap_or_default()
                ),
            )
            .into());
        }
        let egress = routes.next_hop(flow.src, flow.dst, i as FlowId).expect("reachable");
        if f.tcp.as_ref().unwrap_or(&scenario.tcp).tsq && (egress as usize) < b.links.len() {
            b.links[egress as usize].stats.queue.log_data_drops();
            b.links[egress as usize].report_tx_done();
            flow.tsq = Some(Tsq::new(egress));
        }
        flows.push(flow);
        (b.tick)()?;
    }
    Ok(Network { nodes: b.nodes, links: b.links, radio, routes, flows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dumbbell(pairs: usize) -> Scenario {
        crate::resolve(json!({
            "duration": "1s",
            "topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "100pkt"}},
            "flows": vec![json!({"cc": "reno"}); pairs],
        }))
        .unwrap()
    }

    #[test]
    fn a_large_dumbbell_routes_through_two_tables() {
        let net = build(&dumbbell(4000)).unwrap();
        assert_eq!((net.nodes.len(), net.links.len(), net.flows.len()), (8002, 16002, 4000));
        // One table towards each router; every host shares its router's.
        assert_eq!(net.routes.tables(), 2);
        let (s, r) = (net.flows[3999].src, net.flows[3999].dst);
        let first = net.routes.next_hop(s, r, 3999).unwrap();
        assert_eq!(net.links[first as usize].name, "s3999->left");
    }

    #[test]
    fn setup_ticks_and_stops_when_asked() {
        let scenario = dumbbell(50);
        let mut ticks = 0;
        build_with(&scenario, &mut || {
            ticks += 1;
            Ok::<(), ScenarioError>(())
        })
        .unwrap();
        // Each full-duplex link (1 + 2 per pair), each flow, and the two routing tables.
        assert_eq!(ticks, 1 + 2 * 50 + 50 + 2);
        let mut calls = 0;
        let stopped = build_with(&scenario, &mut || {
            calls += 1;
            if calls == 10 {
                return Err(ScenarioError::new("", "stop"));
            }
            Ok(())
        });
        assert_eq!(stopped.err(), Some(ScenarioError::new("", "stop")));
        assert_eq!(calls, 10);
    }
}
