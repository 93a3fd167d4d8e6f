//! The scenario schema (docs/scenario-format.md): serde + schemars types that are both the
//! JSON Schema users see (`tcplab schema`) and the resolved scenario written next to every
//! run, with every default filled in. Parsing and checking live in `resolve.rs`.

pub use crate::link_spec::{DirectionOverrides, LinkSpec};
use crate::mmwave::MmwaveTopology;
use crate::units::{DurationValue, RateValue, SizeValue};
use crate::wifi::WifiSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_cc::ns3::Ns3Version;
use tcplab_cc::CcConfig;
use tcplab_core::{Rate, SimDuration};

/// A complete scenario: network, flows, and what to record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "tcplab scenario")]
pub struct Scenario {
    /// Name of the scenario (used for the default output directory).
    #[serde(default = "default_name")]
    pub name: String,
    /// Simulated time to run.
    pub duration: DurationValue,
    /// Seed of every random stream of the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Period of the per-flow and per-queue time series.
    #[serde(default = "default_sample_interval")]
    pub sample_interval: DurationValue,
    /// Optional outputs.
    #[serde(default)]
    pub record: RecordSpec,
    /// TCP settings shared by every flow (each flow may override them in its own `tcp` table).
    #[serde(default)]
    pub tcp: TcpSpec,
    /// The network.
    pub topology: Topology,
    /// The TCP connections: each entry one flow, or with `count` several (expanded into
    /// single flows in the resolved scenario, so the schema shows the input form).
    #[schemars(with = "Vec<crate::flow_group::FlowGroupSpec>")]
    pub flows: Vec<FlowSpec>,
}

fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}
fn default_sample_interval() -> DurationValue {
    DurationValue(SimDuration::from_millis(10))
}

/// Optional outputs of a run, and the memory its recording may take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// Record every RTT sample (one per ACK) into rtt.parquet.
    #[serde(default)]
    pub rtt: bool,
    /// The most memory the recorded series (and a dumbbell's pairs) may take; a scenario that
    /// would need more is refused before it runs. Writing the run directory needs about as much
    /// again (docs/scenario-format.md, "Limits").
    #[serde(default = "default_memory_limit")]
    pub memory_limit: SizeValue,
    /// The flow time series: "each" (a row per flow, flows.parquet), "groups" (a row per
    /// algorithm and stack with sums and percentiles over its flows, flow_groups.parquet) or
    /// "auto" (each up to `aggregate_above` flows, groups above).
    #[serde(default)]
    pub flows: FlowRecording,
    /// The link time series: "all" (every link direction), "shared" (the directions that
    /// carry packets of two or more flows: bottlenecks, not a host's own access link) or
    /// "auto" (all up to `aggregate_above` flows, shared above).
    #[serde(default)]
    pub links: LinkRecording,
    /// Above this many flows, "auto" records flow groups and shared links only.
    #[serde(default = "default_aggregate_above")]
    pub aggregate_above: u32,
}

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec {
            rtt: false,
            memory_limit: default_memory_limit(),
            flows: FlowRecording::Auto,
            links: LinkRecording::Auto,
            aggregate_above: default_aggregate_above(),
        }
    }
}

/// Which flow time series a run records (`record.flows`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FlowRecording {
    /// A row per flow and sample (flows.parquet).
    Each,
    /// A row per algorithm, stack and sample over the group's flows (flow_groups.parquet).
    Groups,
    /// `each` up to `record.aggregate_above` flows, `groups` above.
    #[default]
    Auto,
}

/// Which link directions a run samples (`record.links`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkRecording {
    /// Every link direction.
    All,
    /// The link directions that carry packets (data or ACKs) of two or more flows.
    Shared,
    /// `all` up to `record.aggregate_above` flows, `shared` above.
    #[default]
    Auto,
}

/// Flows above which `record.flows` and `record.links` "auto" aggregate: a hundred flows'
/// rows at the default 10 ms are ~1.5 MB per simulated second.
pub const DEFAULT_AGGREGATE_ABOVE: u32 = 100;

fn default_aggregate_above() -> u32 {
    DEFAULT_AGGREGATE_ABOVE
}

impl RecordSpec {
    /// Whether the flow series holds groups rather than flows, for a run of `flows` flows.
    pub fn flow_groups(&self, flows: usize) -> bool {
        match self.flows {
            FlowRecording::Each => false,
            FlowRecording::Groups => true,
            FlowRecording::Auto => flows > self.aggregate_above as usize,
        }
    }

    /// Whether only the link directions shared by flows are sampled, for `flows` flows.
    pub fn shared_links_only(&self, flows: usize) -> bool {
        match self.links {
            LinkRecording::All => false,
            LinkRecording::Shared => true,
            LinkRecording::Auto => flows > self.aggregate_above as usize,
        }
    }
}

/// What a run's recorded series may take in memory unless `record.memory_limit` says
/// otherwise (writing the run directory from them needs about as much again).
pub const DEFAULT_LIMIT_BYTES: u64 = 512 << 20;

fn default_memory_limit() -> SizeValue {
    SizeValue(DEFAULT_LIMIT_BYTES)
}

/// Initial slow-start threshold: "inf" or a number of packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Ssthresh {
    Packets(u32),
    Infinite(InfiniteMarker),
}

impl<'de> Deserialize<'de> for Ssthresh {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        match &value {
            serde_json::Value::String(s) if s == "inf" => return Ok(Ssthresh::Infinite(InfiniteMarker::Inf)),
            serde_json::Value::Number(n) => {
                if let Some(packets) = n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                    return Ok(Ssthresh::Packets(packets));
                }
            }
            _ => {}
        }
        let found = tcplab_cc::config::describe_value(&value);
        Err(serde::de::Error::custom(format!("expected \"inf\" or a whole number of packets from 0 to {}, found {found}", u32::MAX)))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub enum InfiniteMarker {
    #[serde(rename = "inf")]
    Inf,
}

/// RTT estimator and RTO rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RtoSpec {
    /// Linux: damped mdev, per-flight rttvar, rto_min floor (tcp_rtt_estimator(), tcp_set_rto()).
    Linux,
    /// RFC 6298 as written (ns-3's estimator).
    Rfc6298,
}

/// Pacing of algorithms that do not pace themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PacingSpec {
    /// Unpaced, as Linux with its default qdisc (BBR still paces itself).
    Off,
    /// Paced at 200 % (slow start) or 120 % of cwnd/SRTT, as Linux with the fq qdisc.
    Fq,
}

/// Loss detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RecoverySpec {
    /// RACK (RFC 8985) with tail loss probes, as Linux by default (net.ipv4.tcp_recovery = 1).
    #[serde(rename = "rack-tlp")]
    RackTlp,
    /// RFC 6675 DupThresh only, no loss probe.
    #[serde(rename = "rfc6675")]
    Rfc6675,
}

/// Whose TCP a flow runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StackSpec {
    /// Linux's TCP (tcp_input.c, tcp_output.c, the kernel's congestion-control modules).
    #[default]
    Linux,
    /// ns-3 3.44's TcpSocketBase and ns-3's variant of each algorithm (docs/ns3-stack.md); the
    /// other `tcp` keys then default to ns-3's attribute defaults.
    Ns3,
}

/// Delayed-ACK timer of the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AtoSpec {
    /// Linux: the timeout adapts to the gaps between arrivals, starting from and floored
    /// at `delack_timeout`, at most 200 ms; quickack again after an idle gap longer than the
    /// RTO and after old data (tcp_event_data_recv(), tcp_send_delayed_ack()).
    Linux,
    /// `delack_timeout` always; quickack only at connection start.
    Fixed,
}

/// TCP settings of a flow (Linux defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TcpSpec {
    /// Whose TCP: "linux" or "ns3" (ns-3's semantics, with ns-3's defaults for the keys left out).
    pub stack: StackSpec,
    /// Payload bytes per segment; may exceed the path MTU (IP fragmentation).
    pub mss: u32,
    /// Initial congestion window, packets.
    pub initial_cwnd: u32,
    /// Initial slow-start threshold: "inf" or packets.
    pub initial_ssthresh: Ssthresh,
    /// Lower bound of the retransmission timeout.
    pub min_rto: DurationValue,
    /// Upper bound of the retransmission timeout (backoff stops there).
    pub max_rto: DurationValue,
    /// Retransmission timeout before the first RTT sample.
    pub initial_rto: DurationValue,
    /// RTT estimator: "linux" or "rfc6298".
    pub rto: RtoSpec,
    /// Selective acknowledgements (RFC 2018); false = NewReno dupACK counting.
    pub sack: bool,
    /// Send buffer: caps unacknowledged data.
    pub snd_buf: SizeValue,
    /// Receive buffer: the advertised window.
    pub rcv_buf: SizeValue,
    /// Pacing of algorithms that do not pace themselves: "off" or "fq".
    pub pacing: PacingSpec,
    /// Loss detection: "rack-tlp" or "rfc6675".
    pub recovery: RecoverySpec,
    /// Undo of reductions that duplicate SACKs or timestamps show spurious, and F-RTO, as
    /// Linux; false also stops the receiver's duplicate SACKs.
    pub undo: bool,
    /// ECN (RFC 3168): ECT data, CE marks echoed until CWR, one reduction per window.
    /// Algorithms that need accurate ECN (DCTCP) always have it, with ECE on exactly the
    /// ACKs of CE-marked packets, whatever this says.
    pub ecn: bool,
    /// ACK every this many full segments (1 = every segment).
    pub ack_every: u32,
    /// Delayed-ACK timeout.
    pub delack_timeout: DurationValue,
    /// Segments acknowledged immediately at connection start (Linux quickack).
    pub quickack: u32,
    /// Halve cwnd after an idle period longer than the RTO (Linux default on).
    pub slow_start_after_idle: bool,
    /// GSO bursts, as Linux since 4.17: a paced sender releases about 1 ms of data (at least
    /// 2 segments) back to back per departure and BBR budgets for it; false = one segment
    /// per departure.
    pub gso: bool,
    /// With `gso`, TSO deferral as Linux tcp_tso_should_defer(): a burst that cwnd or the
    /// peer's window cuts short waits up to 1 ms for the ACK that lets a full one go; false =
    /// send what fits at once.
    pub tso_defer: bool,
    /// TCP Small Queues: at most about 1 ms of data (at least two segments) of the flow in
    /// its sender's egress link (Linux tcp_small_queue_check()); false = unlimited.
    pub tsq: bool,
    /// Delayed-ACK timer: "linux" (adaptive ATO) or "fixed" (`delack_timeout` always).
    pub ato: AtoSpec,
    /// With stack "ns3": the ns-3 release to follow, "3.44" or "3.35" (the reference studies';
    /// only TcpBbr differs). The linux stack takes "3.44" only.
    pub ns3_version: Ns3Version,
}

impl Default for TcpSpec {
    fn default() -> Self {
        TcpSpec {
            stack: StackSpec::Linux,
            mss: 1448,
            initial_cwnd: 10,
            initial_ssthresh: Ssthresh::Infinite(InfiniteMarker::Inf),
            min_rto: DurationValue(SimDuration::from_millis(200)),
            max_rto: DurationValue(SimDuration::from_secs(120)),
            initial_rto: DurationValue(SimDuration::from_secs(1)),
            rto: RtoSpec::Linux,
            sack: true,
            snd_buf: SizeValue(6 << 20),
            rcv_buf: SizeValue(6 << 20),
            pacing: PacingSpec::Off,
            recovery: RecoverySpec::RackTlp,
            undo: true,
            ecn: false,
            ack_every: 2,
            delack_timeout: DurationValue(SimDuration::from_millis(40)),
            quickack: 16,
            slow_start_after_idle: true,
            gso: true,
            tso_defer: true,
            tsq: true,
            ato: AtoSpec::Linux,
            ns3_version: Ns3Version::V3_44,
        }
    }
}

impl TcpSpec {
    /// ns-3 3.44's attribute defaults (TcpSocket, TcpSocketBase, TcpSocketState, RttEstimator,
    /// TcpPrrRecovery) in this table's terms; keys without an ns-3 counterpart take the value
    /// that turns the Linux mechanism off.
    pub fn ns3() -> Self {
        TcpSpec {
            stack: StackSpec::Ns3,
            mss: 536,
            min_rto: DurationValue(SimDuration::from_secs(1)),
            max_rto: DurationValue(SimDuration::from_secs(60)),
            rto: RtoSpec::Rfc6298,
            snd_buf: SizeValue(131_072),
            rcv_buf: SizeValue(131_072),
            recovery: RecoverySpec::Rfc6675,
            undo: false,
            delack_timeout: DurationValue(SimDuration::from_millis(200)),
            quickack: 0,
            slow_start_after_idle: false,
            gso: false,
            tso_defer: false,
            tsq: false,
            ato: AtoSpec::Fixed,
            // the same as Linux's: InitialCwnd 10, InitialSlowStartThreshold (infinite),
            // initial RTO 1 s, SACK, no pacing, no ECN, DelAckCount 2
            ..TcpSpec::default()
        }
    }
}

/// The network of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Topology {
    /// N sender/receiver pairs, each sender on an access link to router `left`, each
    /// receiver on an access link to router `right`, one bottleneck `left`-`right`.
    Dumbbell(Box<Dumbbell>),
    /// Nodes and links listed one by one.
    Explicit(Explicit),
    /// A remote host, a core network and one 5G mmWave cell with moving UEs and buildings.
    Mmwave(Box<MmwaveTopology>),
    /// Routers `r0 … r<hops>` in a row joined by `hops` bottlenecks; through pairs cross
    /// them all, cross pairs one each.
    #[serde(rename = "parking_lot")]
    ParkingLot(Box<ParkingLot>),
    /// A two-tier Clos: hosts on leaf switches, every leaf linked to every spine; equal-cost
    /// paths are chosen per flow (ECMP).
    #[serde(rename = "leaf_spine")]
    LeafSpine(Box<LeafSpine>),
}

impl Topology {
    pub const ALL: [(&'static str, &'static str); 5] = [
        ("dumbbell", "N sender/receiver pairs, access links, one bottleneck (left->right); per-pair access delays; optionally the senders on a WiFi 4/6 BSS"),
        ("explicit", "nodes and full-duplex links listed one by one; static shortest-path routing (optionally ECMP)"),
        ("mmwave", "remote host - SGi - PGW - S1-U - 5G mmWave eNB - moving UEs, buildings blocking line of sight"),
        ("parking_lot", "k bottlenecks in a row (r0 -> ... -> rk); through pairs cross all, cross pairs one hop each"),
        ("leaf_spine", "two-tier Clos: hosts on leaves, every leaf linked to every spine; per-flow ECMP over the spines"),
    ];
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// Sender/receiver pairs (default: one per flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u32>,
    /// The shared link between routers `left` and `right`.
    pub bottleneck: LinkSpec,
    /// Every access link (default 1 Gbps, no delay, 1000 packets).
    #[serde(default = "default_access")]
    pub access: LinkSpec,
    /// One-way delay of each pair's sender access link, both directions (overrides
    /// `access.delay` there), so RTTs can differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_delays: Option<Vec<DurationValue>>,
    /// The senders are the stations of one WiFi BSS whose access point is router `left`,
    /// in place of their access links (the receivers keep theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<WifiSpec>,
}

fn default_access() -> LinkSpec {
    LinkSpec::new(Rate::from_mbps(1000), SimDuration::ZERO)
}

/// Node names of a dumbbell with `pairs` pairs, with whether each is a host.
pub fn dumbbell_node_names(pairs: u32) -> Vec<(String, bool)> {
    let mut names: Vec<(String, bool)> = (0..pairs).map(|i| (format!("s{i}"), true)).collect();
    names.extend((0..pairs).map(|i| (format!("r{i}"), true)));
    names.push(("left".into(), false));
    names.push(("right".into(), false));
    names
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLot {
    /// Bottleneck hops in a row (at least 1): routers `r0` to `r<hops>`.
    pub hops: u32,
    /// The link of every hop `r<h>`-`r<h+1>` (give this or `bottlenecks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<LinkSpec>,
    /// One link per hop, in hop order (give this or `bottleneck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottlenecks: Option<Vec<LinkSpec>>,
    /// Every host's access link (default 1 Gbps, no delay, 1000 packets).
    #[serde(default = "default_access")]
    pub access: LinkSpec,
    /// Through pairs `s<i>` (on `r0`) → `d<i>` (on the last router), crossing every hop
    /// (default: one per flow that names neither src nor dst).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u32>,
    /// Cross pairs of each hop h, `c<h>s<j>` (on `r<h>`) → `c<h>d<j>` (on `r<h+1>`) (default 1).
    #[serde(default = "one")]
    pub cross_pairs: u32,
}

impl ParkingLot {
    /// Router `r<h>`: hop h runs from `r<h>` to `r<h+1>`.
    pub fn router(h: u32) -> String {
        format!("r{h}")
    }

    /// Through pair i: sender `s<i>` on `r0`, receiver `d<i>` on the last router.
    pub fn through_pair(i: u32) -> [String; 2] {
        [format!("s{i}"), format!("d{i}")]
    }

    /// Cross pair j of hop h: sender `c<h>s<j>` on `r<h>`, receiver `c<h>d<j>` on `r<h+1>`.
    pub fn cross_pair(h: u32, j: u32) -> [String; 2] {
        [format!("c{h}s{j}"), format!("c{h}d{j}")]
    }

    /// The link of hop `h` and its key path.
    pub fn hop_link(&self, h: u32) -> (&LinkSpec, String) {
        match (&self.bottlenecks, &self.bottleneck) {
            (Some(links), _) => (&links[h as usize], format!("topology.bottlenecks.{h}")),
            (None, Some(link)) => (link, "topology.bottleneck".into()),
            (None, None) => unreachable!("resolved parking lots have their hops' links"),
        }
    }

    /// Every link spec given, with its key path.
    pub fn link_specs(&self) -> Vec<(String, &LinkSpec)> {
        let mut specs: Vec<(String, &LinkSpec)> = self.bottleneck.iter().map(|l| ("topology.bottleneck".into(), l)).collect();
        specs.extend(self.bottlenecks.iter().flatten().enumerate().map(|(h, l)| (format!("topology.bottlenecks.{h}"), l)));
        specs.push(("topology.access".into(), &self.access));
        specs
    }

    /// Node names with whether each is a host: routers, through pairs, cross pairs hop by hop.
    pub fn node_names(&self) -> Vec<(String, bool)> {
        let pairs = self.pairs.expect("resolved parking lots have pairs");
        let mut names: Vec<(String, bool)> = (0..=self.hops).map(|h| (Self::router(h), false)).collect();
        names.extend((0..pairs).flat_map(Self::through_pair).map(|n| (n, true)));
        names.extend((0..self.hops).flat_map(|h| (0..self.cross_pairs).flat_map(move |j| Self::cross_pair(h, j))).map(|n| (n, true)));
        names
    }

    /// The host names, as a pattern for error messages.
    pub fn host_pattern(&self) -> String {
        let pairs = self.pairs.expect("resolved parking lots have pairs");
        format!(
            "s<i>, d<i> with i < {pairs} (through pairs); c<h>s<j>, c<h>d<j> with h < {} and j < {} (cross pairs of hop h)",
            self.hops, self.cross_pairs
        )
    }
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeafSpine {
    /// Leaf switches `leaf<l>` (at least 1).
    pub leaves: u32,
    /// Spine switches `spine<s>` (at least 1), each linked to every leaf.
    pub spines: u32,
    /// Hosts `h<l>_<i>` on each leaf l (at least 1).
    pub hosts_per_leaf: u32,
    /// Every host's link to its leaf (default 1 Gbps, no delay, 1000 packets).
    #[serde(default = "default_access")]
    pub host_link: LinkSpec,
    /// Every leaf-spine link.
    pub fabric_link: LinkSpec,
}

impl LeafSpine {
    /// Every link spec, with its key path.
    pub fn link_specs(&self) -> Vec<(String, &LinkSpec)> {
        vec![("topology.host_link".into(), &self.host_link), ("topology.fabric_link".into(), &self.fabric_link)]
    }

    pub fn leaf(l: u32) -> String {
        format!("leaf{l}")
    }

    pub fn spine(s: u32) -> String {
        format!("spine{s}")
    }

    /// Host i of leaf l.
    pub fn host(l: u32, i: u32) -> String {
        format!("h{l}_{i}")
    }

    /// Node names with whether each is a host: hosts leaf by leaf, leaves, spines.
    pub fn node_names(&self) -> Vec<(String, bool)> {
        let mut names: Vec<(String, bool)> =
            (0..self.leaves).flat_map(|l| (0..self.hosts_per_leaf).map(move |i| (Self::host(l, i), true))).collect();
        names.extend((0..self.leaves).map(|l| (Self::leaf(l), false)));
        names.extend((0..self.spines).map(|s| (Self::spine(s), false)));
        names
    }

    /// The host names, as a pattern for error messages.
    pub fn host_pattern(&self) -> String {
        format!("h<l>_<i> with l < {} and i < {}", self.leaves, self.hosts_per_leaf)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeRoleSpec {
    /// Runs TCP endpoints.
    #[default]
    Host,
    /// Forwards only.
    Router,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    #[serde(default)]
    pub role: NodeRoleSpec,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Explicit {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Equal-cost multipath: each flow takes one of the equal-cost shortest paths by a seeded
    /// hash (default false: the path over the links declared first).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ecmp: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One TCP connection and the application feeding it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Congestion control: a name ("cubic") or a table with `kind` and parameters.
    pub cc: CcConfig,
    /// Sending host (dumbbell default: s<i>).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// Receiving host (dumbbell default: r<i>).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    /// When the connection starts.
    #[serde(default = "zero_duration")]
    pub start: DurationValue,
    /// When the application stops writing (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<DurationValue>,
    /// Bytes to transfer (default: unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<SizeValue>,
    /// The application: bulk (default, always data to send) or writes at a fixed rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppSpec>,
    /// TCP settings of this flow (defaults: the scenario's `tcp` table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSpec>,
}

fn zero_duration() -> DurationValue {
    DurationValue(SimDuration::ZERO)
}

/// An application writing `packet_size` bytes into the socket every `packet_size / rate`
/// seconds (ns-3's OnOffApplication always on). A write that does not fit in the send
/// buffer is discarded, as ns-3's application does when `Send` fails.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub rate: RateValue,
    pub packet_size: SizeValue,
}
