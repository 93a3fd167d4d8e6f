//! Egress queues of link directions. A discipline is one file (its parameter struct,
//! implementing [`Discipline`], and its [`Queue`]) plus one line in `disciplines!` below,
//! which gives the scenario setting (`queue = "droptail"` or `queue = { kind = "headdrop" }`),
//! its JSON Schema, `tcplab list` and validation.
//!
//! A queue reports every packet it discards, with the reason, and every CE mark to the
//! [`DropSink`] its link keeps (a byte-limited head drop may evict several packets for one
//! arrival; an AQM drops at dequeue).

mod codel_core;
mod device;
mod fifo;

pub use device::DeviceQueue;

use crate::sojourn::SojournStats;
use fifo::{Fifo, FifoQueue};

use serde::{Serialize, Serializer};
use serde_json::Value;
pub use tcplab_core::registry::ParamDoc;
use tcplab_core::registry::Setting;
use tcplab_core::{Ecn, FlowId, Packet, PacketKind, Rate, SimDuration, SimRng, SimTime};

/// The capacity of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// When a queue CE-marks ECT packets (RFC 3168 §5); Not-ECT packets are never marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeThreshold {
    /// On enqueue, when at least this many packets are already queued.
    Backlog(u32),
    /// On dequeue, when the packet waited longer than this.
    Sojourn(SimDuration),
}

/// Why a queue discarded a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The arrival, refused by a full queue (Linux pfifo/bfifo).
    Tail,
    /// A queued packet, oldest first, evicted to make room (Linux pfifo_head_drop).
    Head,
    /// An active queue management decision (RED's early drop, CoDel's drop at dequeue).
    Aqm,
    /// One of a batch dropped to bring the queue back under its limit (Linux `fq_codel_drop`,
    /// ns-3 FqCoDelQueueDisc's "Overlimit drop").
    Overlimit,
    /// The arrival, exceeding the direction's policer (a token bucket in front of the queue).
    Policer,
}

impl DropReason {
    /// How many reasons there are (`DropSink::by_reason` has one count each).
    pub const COUNT: usize = 5;
}

/// What a link direction's queue discarded, by reason, and CE-marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropSink {
    pub tail: u64,
    pub head: u64,
    pub aqm: u64,
    pub overlimit: u64,
    pub policer: u64,
    pub ce_marks: u64,
    /// The data packets discarded, as (flow, payload bytes), kept only once asked for by
    /// [`DropSink::log_data_drops`] (a host's egress under TCP Small Queues) until taken.
    pub dropped_data: Option<Vec<(FlowId, u32)>>,
}

impl DropSink {
    /// Takes a discarded packet.
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) {
        if let (Some(log), PacketKind::Data(hdr)) = (self.dropped_data.as_mut(), pkt.kind) {
            Self::log(log, pkt.flow, hdr.payload);
        }
        *match reason {
            DropReason::Tail => &mut self.tail,
            DropReason::Head => &mut self.head,
            DropReason::Aqm => &mut self.aqm,
            DropReason::Overlimit => &mut self.overlimit,
            DropReason::Policer => &mut self.policer,
        } += 1;
    }

    /// Out of line: drops are rare next to arrivals, and the arrival path stays lean.
    #[cold]
    fn log(log: &mut Vec<(FlowId, u32)>, flow: FlowId, payload: u32) {
        log.push((flow, payload));
    }

    /// From now on, keeps the flow and payload of every data packet discarded.
    pub fn log_data_drops(&mut self) {
        self.dropped_data.get_or_insert_with(Vec::new);
    }

    /// CE-marks `pkt` if it is ECT(0) or ECT(1) and counts the mark (an arrival already CE
    /// is left alone and not counted again).
    pub fn ce_mark(&mut self, pkt: &mut Packet) {
        if pkt.ecn.is_ect() {
            pkt.ecn = Ecn::Ce;
            self.ce_marks += 1;
        }
    }

    /// Packets discarded for any reason.
    pub fn drops(&self) -> u64 {
        self.by_reason().iter().sum()
    }

    /// Packets discarded per reason, in `DropReason` order (tail, head, aqm, overlimit,
    /// policer).
    pub fn by_reason(&self) -> [u64; DropReason::COUNT] {
        [self.tail, self.head, self.aqm, self.overlimit, self.policer]
    }
}

/// The longest time a Linux qdisc takes in its u32-microsecond netlink attributes, ms.
pub(super) const LINUX_MAX_MS: f64 = u32::MAX as f64 / 1000.0;

/// Checks a time parameter given in ms that Linux takes in whole microseconds: 0.001 to
/// `max_ms`, or 0 when `zero` says what 0 means ("off").
pub(super) fn check_ms(name: &str, ms: f64, zero: Option<&str>, max_ms: f64) -> Result<(), String> {
    if (zero.is_some() && ms == 0.0) || (ms.is_finite() && (0.001..=max_ms).contains(&ms)) {
        return Ok(());
    }
    let zero = zero.map(|meaning| format!("0 ({meaning}) or ")).unwrap_or_default();
    Err(format!("{name}: {ms} is out of range; allowed: {zero}0.001 to {max_ms} ms"))
}

/// What a discipline is built for: the link direction it feeds.
#[derive(Clone, Debug)]
pub struct QueueContext {
    /// The direction's buffer.
    pub limit: QueueLimit,
    /// The link's `ecn_threshold`, for the disciplines that take it.
    pub marking: Option<CeThreshold>,
    /// The direction's own random stream, for disciplines that draw.
    pub rng: SimRng,
    /// The rate of the transmitter the queue feeds.
    pub rate: Rate,
    /// The link's MTU in bytes.
    pub mtu: u32,
}

impl QueueContext {
    /// A 10 Mbit/s, 1500-byte-MTU direction with a fixed random stream.
    #[cfg(test)]
    pub fn for_tests(limit: QueueLimit, marking: Option<CeThreshold>) -> Self {
        QueueContext { limit, marking, rng: SimRng::stream(1, "q"), rate: Rate::from_mbps(10), mtu: 1500 }
    }
}

/// An egress queue discipline.
pub trait Queue: Send + std::fmt::Debug {
    /// Offers `pkt`; what is discarded (the arrival, or any number of queued packets) or
    /// marked is reported to `sink`. A queued packet's `enqueued_at` is set to `now` (the
    /// link records each packet's sojourn from it).
    fn enqueue(&mut self, pkt: Packet, now: SimTime, sink: &mut DropSink);
    /// The next packet to send, if any; packets discarded on the way go to `sink`. A
    /// pacing discipline may return None while it holds packets none of which may leave
    /// before [`Queue::next_ready_at`].
    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet>;
    /// After `dequeue` returned None with packets queued: when one may leave (the link
    /// tries `dequeue` again then, or earlier if a packet arrives). Disciplines whose
    /// `dequeue` returns a packet whenever they hold one keep the default, None.
    fn next_ready_at(&self) -> Option<SimTime> {
        None
    }
    fn len_packets(&self) -> u32;
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    /// The largest packet (bytes) that, offered while the discipline is empty, it would send
    /// at once with no change to its state, no drop and no mark; the link then starts such a
    /// packet without the queue when its transmitter is idle (most packets of an idle access
    /// link, without touching the queue's memory). 0, the default: none. A discipline that
    /// returns more than 0 also promises that `dequeue` while it is empty changes nothing:
    /// the link does not call it when a transmission ends with nothing queued. The others
    /// are asked then, as a device asks its qdisc (Linux `sch_red` starts its idle period
    /// there, `sch_codel` leaves its dropping state).
    fn passes_through_when_empty(&self) -> u32 {
        0
    }
    /// How long the packets sent from a low-latency (L4S) queue waited, for dual-queue
    /// disciplines (DualPI2's L queue); None for the others. The link's own sojourn
    /// statistics cover every packet of the direction.
    fn l4s_sojourn(&self) -> Option<&SojournStats> {
        None
    }
}

/// What each discipline's parameter struct provides to the registry.
pub trait Discipline: Default + Serialize + serde::de::DeserializeOwned {
    /// Name in scenarios, equal to its `disciplines!` name (a test checks).
    const NAME: &'static str;
    /// One line for `tcplab list`.
    const SUMMARY: &'static str;
    /// Every field, in declaration order.
    const PARAMS: &'static [ParamDoc];
    /// Whether it CE-marks by the link's `ecn_threshold` (FIFOs); an AQM marks by its own
    /// parameters, and validation refuses the link's threshold with it.
    const TAKES_ECN_THRESHOLD: bool = false;

    /// Range checks against the link's buffer and `ecn_threshold` (`ctx.rng` is a placeholder
    /// here); the error names the parameter and what is allowed.
    fn validate(&self, ctx: &QueueContext) -> Result<(), String> {
        let _ = ctx;
        Ok(())
    }

    /// An empty queue for the direction `ctx` describes.
    fn build(&self, ctx: QueueContext) -> Box<dyn Queue>;
}

/// Declares the registry from one list (`tcplab_core::registry!`: `QueueConfig`, what a link
/// direction holds, and `QueueTable`, the tagged table form), each discipline's module
/// (`module::Config`, the file of the same name) and the dispatch.
macro_rules! disciplines {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$config:ident) = $name:literal,)*) => {
        $(mod $module; pub use $module::$config;)*

        tcplab_core::registry! {
            /// The queue discipline of a link direction and its parameters.
            #[derive(Clone, Debug, PartialEq)]
            pub enum QueueConfig;
            /// A discipline with parameters: `{ kind = "headdrop" }`.
            table QueueTable;
            kinds Discipline, setting SETTING;
            $($(#[$doc])* $variant($config) = $name,)*
        }

        impl QueueConfig {
            /// Checks the parameters against the direction `ctx` describes.
            pub fn validate(&self, ctx: &QueueContext) -> Result<(), String> {
                match self {
                    $(QueueConfig::$variant(c) => c.validate(ctx),)*
                }
            }

            /// Whether it CE-marks by the link's `ecn_threshold` (`Discipline::TAKES_ECN_THRESHOLD`).
            pub fn takes_ecn_threshold(&self) -> bool {
                match self {
                    $(QueueConfig::$variant(_) => <$config as Discipline>::TAKES_ECN_THRESHOLD,)*
                }
            }

            /// An empty queue of this discipline.
            pub fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
                match self {
                    $(QueueConfig::$variant(c) => c.build(ctx),)*
                }
            }
        }
    };
}

disciplines! {
    /// FIFO dropping arrivals when full (Linux pfifo/bfifo).
    Droptail(droptail::DroptailConfig) = "droptail",
    /// FIFO dropping the oldest packets when full (Linux pfifo_head_drop).
    Headdrop(headdrop::HeaddropConfig) = "headdrop",
    /// CoDel (Linux codel, RFC 8289).
    Codel(codel::CodelConfig) = "codel",
    /// FQ-CoDel (Linux fq_codel, RFC 8290).
    FqCodel(fq_codel::FqCodelConfig) = "fq_codel",
    /// PIE, Linux sch_pie (RFC 8033).
    Pie(pie::PieConfig) = "pie",
    /// Random Early Detection with Adaptive RED and ECN (Linux sch_red).
    Red(red::RedConfig) = "red",
    /// Fair queueing with per-flow pacing (Linux sch_fq).
    Fq(fq::FqConfig) = "fq",
    /// DualPI2, the coupled L4S dual queue (Linux sch_dualpi2, RFC 9332).
    DualPi2(dualpi2::DualPi2Config) = "dualpi2",
}

/// The `queue` setting: a name or a table. A parameter's message is serde's, for the caller
/// to put in scenario words.
const SETTING: Setting = Setting {
    noun: "queue discipline",
    aliases: &[],
    description: "Queue discipline: a name (its defaults) or a table with `kind` and parameters.",
    not_name_or_table: |names, _| format!("expected a queue discipline ({names}) or a table {{ kind = NAME, ... }}"),
    kind_not_a_name: |names, _| format!("expected a queue discipline name; allowed: {names}"),
    bad_param: |_, message| message,
};

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::Droptail(DroptailConfig::default())
    }
}

/// A discipline without parameters is written as its bare name (`"droptail"`), one with
/// parameters as a table with `kind`.
impl Serialize for QueueConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let table = self.table();
        match serde_json::to_value(&table).expect("parameter structs serialize") {
            Value::Object(fields) if fields.len() > 1 => table.serialize(s),
            _ => s.serialize_str(self.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_name_and_table_parse_to_the_same_discipline() {
        for name in QueueConfig::names() {
            let bare = QueueConfig::parse(json!(name)).unwrap();
            assert_eq!(bare, QueueConfig::parse(json!({ "kind": name })).unwrap());
            assert_eq!(bare.name(), name, "registry name and Discipline::NAME differ");
            let written = serde_json::to_value(&bare).unwrap();
            assert_eq!(QueueConfig::parse(written.clone()).unwrap(), bare, "{name}: {written} does not read back");
            let info = QueueConfig::catalog().into_iter().find(|d| d.name == name).unwrap();
            assert_eq!(
                written == json!(name),
                info.params.is_empty(),
                "{name}: only a discipline without parameters is written as its name"
            );
            assert_eq!(bare.validate(&QueueContext::for_tests(QueueLimit::Packets(1), None)), Ok(()), "{name}: defaults must validate");
        }
    }

    #[test]
    fn time_parameters_are_checked_against_microseconds_and_a_maximum() {
        assert_eq!(check_ms("target_ms", -1.0, None, 2e6), Err("target_ms: -1 is out of range; allowed: 0.001 to 2000000 ms".into()));
        assert_eq!(check_ms("target_ms", 0.0, None, 2e6), Err("target_ms: 0 is out of range; allowed: 0.001 to 2000000 ms".into()));
        assert_eq!(check_ms("target_ms", 0.0005, None, 2e6), Err("target_ms: 0.0005 is out of range; allowed: 0.001 to 2000000 ms".into()));
        assert_eq!((check_ms("t", 0.001, None, 2e6), check_ms("t", 2e6, None, 2e6)), (Ok(()), Ok(())));
        assert_eq!(check_ms("ce_threshold_ms", 0.0, Some("off"), 2e6), Ok(()));
        assert_eq!(
            check_ms("ce_threshold_ms", f64::NAN, Some("off"), LINUX_MAX_MS),
            Err("ce_threshold_ms: NaN is out of range; allowed: 0 (off) or 0.001 to 4294967.295 ms".into())
        );
    }

    #[test]
    fn wrong_settings_name_the_key_and_what_is_allowed() {
        let parse = |v: Value| QueueConfig::parse(v).unwrap_err();
        let names = QueueConfig::names().join(", ");
        assert!(names.starts_with("droptail, headdrop"), "{names}");
        assert_eq!(parse(json!("fifo")), (String::new(), format!("unknown queue discipline \"fifo\"; allowed: {names}")));
        assert_eq!(parse(json!({ "kind": "fifo" })).0, "kind");
        assert_eq!(parse(json!({})), ("kind".into(), format!("missing; allowed: {names}")));
        assert!(parse(json!(5)).1.starts_with(&format!("expected a queue discipline ({names})")));
        let (key, message) = parse(json!({ "kind": "headdrop", "limit": 5 }));
        assert_eq!(key, "limit");
        assert!(message.starts_with("unknown field `limit`"), "{message}");
    }
}
