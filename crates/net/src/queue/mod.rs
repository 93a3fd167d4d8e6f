//! Egress queues of link directions. A discipline is one file (its parameter struct,
//! implementing [`Discipline`], and its [`Queue`]) plus one line in `disciplines!` below,
//! which gives the scenario setting (`queue = "droptail"` or `queue = { kind = "headdrop" }`),
//! its JSON Schema, `tcplab list` and validation.
//!
//! A queue reports every packet it discards, with the reason, and every CE mark to the
//! [`DropSink`] its link keeps (a byte-limited head drop may evict several packets for one
//! arrival; an AQM drops at dequeue).

mod fifo;

use fifo::Fifo;

use schemars::JsonSchema;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use tcplab_core::{Ecn, Packet, SimDuration, SimRng, SimTime};

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
}

/// What a link direction's queue discarded, by reason, and CE-marked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropSink {
    pub tail: u64,
    pub head: u64,
    pub aqm: u64,
    pub overlimit: u64,
    pub ce_marks: u64,
}

impl DropSink {
    /// Takes a discarded packet.
    pub fn drop(&mut self, pkt: Packet, reason: DropReason) {
        let _ = pkt;
        *match reason {
            DropReason::Tail => &mut self.tail,
            DropReason::Head => &mut self.head,
            DropReason::Aqm => &mut self.aqm,
            DropReason::Overlimit => &mut self.overlimit,
        } += 1;
    }

    /// CE-marks `pkt` if it is ECT(0) and counts the mark.
    pub fn ce_mark(&mut self, pkt: &mut Packet) {
        if pkt.ecn == Ecn::Ect0 {
            pkt.ecn = Ecn::Ce;
            self.ce_marks += 1;
        }
    }

    /// Packets discarded for any reason.
    pub fn drops(&self) -> u64 {
        self.tail + self.head + self.aqm + self.overlimit
    }
}

/// An egress queue discipline.
pub trait Queue: Send + std::fmt::Debug {
    /// Offers `pkt`; what is discarded (the arrival, or any number of queued packets) or
    /// marked is reported to `sink`.
    fn enqueue(&mut self, pkt: Packet, now: SimTime, sink: &mut DropSink);
    /// The next packet to send, if any; packets discarded on the way go to `sink`.
    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet>;
    fn len_packets(&self) -> u32;
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// Name, unit and one-line description of a discipline parameter; its default is read
/// from the parameter struct's `Default`.
pub struct ParamDoc {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// What each discipline's parameter struct provides to the registry.
pub trait Discipline: Default + Serialize + serde::de::DeserializeOwned {
    /// Name in scenarios, equal to its `disciplines!` name (a test checks).
    const NAME: &'static str;
    /// One line for `tcplab list`.
    const SUMMARY: &'static str;
    /// Every field, in declaration order.
    const PARAMS: &'static [ParamDoc];

    /// Range checks against the link's `limit`; the error names the parameter and what is allowed.
    fn validate(&self, limit: QueueLimit) -> Result<(), String> {
        let _ = limit;
        Ok(())
    }

    /// An empty queue; `rng` is the direction's own stream for disciplines that draw.
    fn build(&self, limit: QueueLimit, marking: Option<CeThreshold>, rng: SimRng) -> Box<dyn Queue>;
}

/// One discipline parameter, for `tcplab list`.
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: String,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// One discipline, for `tcplab list`.
#[derive(Clone, Debug, Serialize)]
pub struct DisciplineInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamInfo>,
}

fn info<T: Discipline>() -> DisciplineInfo {
    let defaults = serde_json::to_value(T::default()).expect("parameter structs serialize");
    let params = T::PARAMS
        .iter()
        .map(|p| {
            let default = match &defaults[p.name] {
                Value::Null => panic!("{}: PARAMS names {:?}, which is not a field", T::NAME, p.name),
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            ParamInfo { name: p.name, default, unit: p.unit, doc: p.doc }
        })
        .collect();
    DisciplineInfo { name: T::NAME, summary: T::SUMMARY, params }
}

/// Declares the registry from one list: each discipline's module (`module::Config`, the file
/// of the same name), `QueueConfig` (what a link direction holds), `QueueTable` (the tagged
/// table form, for the JSON Schema) and the dispatch.
macro_rules! disciplines {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$config:ident) = $name:literal,)*) => {
        $(mod $module; pub use $module::$config;)*

        /// The queue discipline of a link direction and its parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum QueueConfig {
            $($(#[$doc])* $variant($config),)*
        }

        /// A discipline with parameters: `{ kind = "headdrop" }`.
        // Only its JSON Schema is used: `QueueConfig::parse` reads the table.
        #[derive(JsonSchema)]
        #[serde(tag = "kind")]
        #[allow(dead_code)]
        enum QueueTable {
            $($(#[$doc])* #[serde(rename = $name)] $variant($config),)*
        }

        impl QueueConfig {
            /// The parameters of discipline `kind` from a table without `kind`.
            fn from_params(kind: &str, params: Value) -> Result<QueueConfig, serde_path_to_error::Error<serde_json::Error>> {
                match kind {
                    $($name => serde_path_to_error::deserialize::<_, $config>(params).map(QueueConfig::$variant),)*
                    other => unreachable!("{other:?} was checked against the names"),
                }
            }

            /// Every discipline with its parameters and defaults.
            pub fn catalog() -> Vec<DisciplineInfo> {
                vec![$(info::<$config>(),)*]
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(QueueConfig::$variant(_) => <$config as Discipline>::NAME,)*
                }
            }

            /// Checks the parameters against the link's `limit`.
            pub fn validate(&self, limit: QueueLimit) -> Result<(), String> {
                match self {
                    $(QueueConfig::$variant(c) => c.validate(limit),)*
                }
            }

            /// An empty queue of this discipline.
            pub fn build(&self, limit: QueueLimit, marking: Option<CeThreshold>, rng: SimRng) -> Box<dyn Queue> {
                match self {
                    $(QueueConfig::$variant(c) => c.build(limit, marking, rng),)*
                }
            }

            fn params(&self) -> Value {
                match self {
                    $(QueueConfig::$variant(c) => serde_json::to_value(c),)*
                }
                .expect("parameter structs serialize")
            }
        }
    };
}

disciplines! {
    /// FIFO dropping arrivals when full (Linux pfifo/bfifo).
    Droptail(droptail::DroptailConfig) = "droptail",
    /// FIFO dropping the oldest packets when full (Linux pfifo_head_drop).
    Headdrop(headdrop::HeaddropConfig) = "headdrop",
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::Droptail(DroptailConfig::default())
    }
}

impl QueueConfig {
    /// Names of every discipline.
    pub fn names() -> Vec<&'static str> {
        Self::catalog().iter().map(|d| d.name).collect()
    }

    /// Parses what a scenario writes for `queue`: a bare name or a table with `kind`. An error
    /// is (the parameter at fault, empty for the value as a whole; what is wrong and allowed);
    /// a parameter's message is serde's, for the caller to put in scenario words.
    pub fn parse(value: Value) -> Result<Self, (String, String)> {
        let names = || QueueConfig::names().join(", ");
        let (mut table, kind_key) = match value {
            Value::String(name) => (Map::from_iter([("kind".to_string(), Value::String(name))]), ""),
            Value::Object(table) => (table, "kind"),
            _ => return Err((String::new(), format!("expected a queue discipline ({}) or a table {{ kind = NAME, ... }}", names()))),
        };
        let kind = match table.remove("kind") {
            Some(Value::String(k)) => k,
            Some(_) => return Err((kind_key.into(), format!("expected a queue discipline name; allowed: {}", names()))),
            None => return Err((kind_key.into(), format!("missing; allowed: {}", names()))),
        };
        if !QueueConfig::names().contains(&kind.as_str()) {
            return Err((kind_key.into(), format!("unknown queue discipline {kind:?}; allowed: {}", names())));
        }
        QueueConfig::from_params(&kind, Value::Object(table)).map_err(|e| {
            let key = e.path().to_string();
            (if key == "." { String::new() } else { key }, e.into_inner().to_string())
        })
    }
}

/// A discipline without parameters is written as its bare name (`"droptail"`), one with
/// parameters as a table with `kind`.
impl Serialize for QueueConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.params() {
            Value::Object(params) if !params.is_empty() => {
                let mut table = Map::from_iter([("kind".to_string(), Value::String(self.name().into()))]);
                table.extend(params);
                table.serialize(s)
            }
            _ => s.serialize_str(self.name()),
        }
    }
}

/// A bare name or the table form.
impl JsonSchema for QueueConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QueueConfig".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let table = generator.subschema_for::<QueueTable>();
        schemars::json_schema!({
            "description": "Queue discipline: a name (its defaults) or a table with `kind` and parameters.",
            "anyOf": [{ "type": "string", "enum": QueueConfig::names() }, table]
        })
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
            assert_eq!(
                written == json!(name),
                bare.params() == json!({}),
                "{name}: only a discipline without parameters is written as its name"
            );
            assert_eq!(bare.validate(QueueLimit::Packets(1)), Ok(()), "{name}: defaults must validate");
        }
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
