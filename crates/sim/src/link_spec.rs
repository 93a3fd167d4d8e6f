//! A point-to-point link as a scenario writes it (`LinkSpec`, used by every topology kind), and
//! its queue setting in a scenario's words (the link keys of docs/scenario-format.md).

use crate::units::{BufferValue, DurationValue, EcnThresholdValue, RateValue, SizeValue};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_cc::config::humanize_serde_message;
use tcplab_core::{Rate, SimDuration, SimRng};
use tcplab_net::{CeThreshold, GilbertElliott, Jitter, JitterDistribution, LossModel, QueueConfig, QueueContext, QueueLimit, TokenBucket};

/// `queue`: a discipline name or a table with `kind` (`QueueConfig::parse`), in the words of a
/// scenario file.
fn queue_setting<'de, D: serde::Deserializer<'de>>(d: D) -> Result<QueueConfig, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    let found = tcplab_cc::config::describe_value(&value);
    QueueConfig::parse(value).map_err(|(key, message)| {
        let message = match humanize_serde_message(&message) {
            m if key.is_empty() && m.starts_with("expected ") => format!("{m}, found {found}"),
            m if key.is_empty() => m,
            m => format!("{key}: {m}"),
        };
        serde::de::Error::custom(message)
    })
}

fn optional_queue_setting<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<QueueConfig>, D::Error> {
    queue_setting(d).map(Some)
}

/// A token bucket: `rate` sustained, `burst` bytes at once (the bucket's depth).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketSpec {
    /// Rate the bucket fills at.
    pub rate: RateValue,
    /// Depth of the bucket, at least one packet (the link's MTU).
    pub burst: SizeValue,
}

impl TokenBucketSpec {
    pub fn bucket(&self) -> TokenBucket {
        TokenBucket::new(self.rate.0, self.burst.0)
    }
}

/// `loss`: a probability, or a table naming a loss model (docs/path-models.md).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LossSpec {
    /// Each packet (each fragment) lost independently with this probability.
    Probability(f64),
    /// Bursty loss.
    GilbertElliott(GilbertElliottSpec),
}

impl Default for LossSpec {
    fn default() -> Self {
        LossSpec::Probability(0.0)
    }
}

impl LossSpec {
    pub fn model(&self) -> LossModel {
        match *self {
            LossSpec::Probability(p) => LossModel::Bernoulli(p),
            LossSpec::GilbertElliott(g) => {
                LossModel::gilbert_elliott(GilbertElliott { p: g.p, r: g.r, loss_good: g.loss_good, loss_bad: g.loss_bad })
            }
        }
    }
}

impl<'de> Deserialize<'de> for LossSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        match value {
            serde_json::Value::Number(n) => Ok(LossSpec::Probability(n.as_f64().expect("JSON numbers are f64"))),
            serde_json::Value::Object(_) => serde_json::from_value(value)
                .map(LossSpec::GilbertElliott)
                .map_err(|e| serde::de::Error::custom(humanize_serde_message(&e.to_string()))),
            other => Err(serde::de::Error::custom(format!(
                "expected a loss probability or a table with model = \"gilbert-elliott\", found {}",
                tcplab_cc::config::describe_value(&other)
            ))),
        }
    }
}

/// The loss models a `loss` table can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LossModelName {
    GilbertElliott,
}

/// Gilbert–Elliott loss: a good and a bad state, moved once per packet (netem's
/// `gemodel p r 1-h 1-k`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottSpec {
    /// "gilbert-elliott".
    pub model: LossModelName,
    /// P(good → bad) per packet.
    pub p: f64,
    /// P(bad → good) per packet (mean burst: 1 / r packets).
    pub r: f64,
    /// Loss probability in the good state (netem's 1-k); default 0.
    #[serde(default)]
    pub loss_good: f64,
    /// Loss probability in the bad state (netem's 1-h); default 1.
    #[serde(default = "certain")]
    pub loss_bad: f64,
}

fn certain() -> f64 {
    1.0
}

/// The distributions of `jitter`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JitterDistributionName {
    /// Uniform in [0, amount].
    #[default]
    Uniform,
    /// |N(0, σ = amount)|: a normal truncated at 0.
    Normal,
    /// Exponential with mean `amount`.
    Exponential,
}

/// Extra per-packet delay on top of `delay`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    /// Scale of the extra delay: uniform's maximum, normal's σ, exponential's mean.
    pub amount: DurationValue,
    /// "uniform" (default), "normal" or "exponential".
    #[serde(default)]
    pub distribution: JitterDistributionName,
    /// Whether packets may overtake each other (default false: each packet arrives no earlier
    /// than the one sent before it).
    #[serde(default)]
    pub reorder: bool,
}

impl JitterSpec {
    pub fn jitter(&self) -> Jitter {
        let distribution = match self.distribution {
            JitterDistributionName::Uniform => JitterDistribution::Uniform,
            JitterDistributionName::Normal => JitterDistribution::Normal,
            JitterDistributionName::Exponential => JitterDistribution::Exponential,
        };
        Jitter { distribution, amount: self.amount.0, reorder: self.reorder }
    }
}

/// Release arrivals in batches at the multiples of `interval` (docs/path-models.md).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregationSpec {
    /// A packet reaching the far end at t is handed on at the next multiple of `interval`.
    pub interval: DurationValue,
}

/// Overrides for the reverse direction (b -> a) of a link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirectionOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "optional_queue_setting")]
    pub queue: Option<QueueConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_threshold: Option<EcnThresholdValue>,
    /// A trace file for the b -> a direction (a -> b's `trace` is not inherited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Jitter of the b -> a direction (default: a -> b's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterSpec>,
    /// Aggregation of the b -> a direction (a -> b's `aggregation` is not inherited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<AggregationSpec>,
    /// A policer on the b -> a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policer: Option<TokenBucketSpec>,
    /// A shaper on the b -> a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<TokenBucketSpec>,
}

/// A full-duplex point-to-point link. In a dumbbell `a`/`b` are implied; in an explicit
/// topology they name the two nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// First node (explicit topologies only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<String>,
    /// Second node (explicit topologies only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<String>,
    /// Rate of each direction.
    pub rate: RateValue,
    /// One-way propagation delay.
    pub delay: DurationValue,
    /// Queue capacity of each direction.
    #[serde(default = "default_buffer")]
    pub buffer: BufferValue,
    /// Queue discipline of each direction: a name, or a table with `kind` and its parameters.
    #[serde(default, deserialize_with = "queue_setting")]
    pub queue: QueueConfig,
    /// Probability that the link loses a packet (each direction, independently), or a loss
    /// model table: { model = "gilbert-elliott", p, r, loss_good, loss_bad }.
    #[serde(default)]
    pub loss: LossSpec,
    /// Largest IP packet in bytes; larger packets are fragmented.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Link-layer bytes each frame (each IP packet or fragment) takes on the wire besides the
    /// IP packet, outside the MTU: 0 (default) = IP packets only; ns-3's point-to-point
    /// devices add a 2-byte PPP header; Ethernet with preamble, FCS and gap 38.
    #[serde(default)]
    pub framing: u32,
    /// Packets the transmitting device holds after the queue discipline (each direction): the
    /// discipline hands its packets on while the device queue has room and acts on its own
    /// backlog only, as ns-3 layers a root queue disc over a NetDevice's TxQueue (100 packets
    /// on point-to-point devices) and Linux a qdisc over a driver's ring. 0 (default): none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub device_queue: u32,
    /// CE-mark ECT packets (each direction): "20pkt" marks an arrival that finds at least 20
    /// packets queued (DCTCP's step marking, RED with min = max = K), "1ms" marks a packet
    /// leaving after more than 1 ms in the queue (fq_codel's ce_threshold). Default: no marking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_threshold: Option<EcnThresholdValue>,
    /// Police the a -> b direction (b -> a: `reverse.policer`): arrivals beyond `rate` and
    /// `burst` are dropped before the queue (Linux `act_police` with `conform-exceed drop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policer: Option<TokenBucketSpec>,
    /// Shape the a -> b direction (b -> a: `reverse.shaper`): packets leave the queue at
    /// `rate` with up to `burst` bytes at the link's own rate (Linux `tbf` with the link rate as
    /// its peak rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<TokenBucketSpec>,
    /// A Mahimahi trace file (one line per 1500-byte delivery opportunity, in ms) that decides
    /// when the a -> b direction delivers packets, instead of `rate`; relative to the current
    /// directory. `rate` stays the nominal rate (at least the trace's mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Extra random delay per packet, each direction: { amount, distribution, reorder }.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterSpec>,
    /// Hand the a -> b direction's packets on in batches (b -> a: `reverse.aggregation`):
    /// { interval }.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<AggregationSpec>,
    /// Different settings for the b -> a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<DirectionOverrides>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn default_buffer() -> BufferValue {
    BufferValue::Packets(1000)
}
fn default_mtu() -> u32 {
    1500
}

impl LinkSpec {
    pub fn new(rate: Rate, delay: SimDuration) -> Self {
        LinkSpec {
            a: None,
            b: None,
            rate: RateValue(rate),
            delay: DurationValue(delay),
            buffer: default_buffer(),
            queue: QueueConfig::default(),
            loss: LossSpec::default(),
            mtu: default_mtu(),
            framing: 0,
            device_queue: 0,
            ecn_threshold: None,
            policer: None,
            shaper: None,
            trace: None,
            jitter: None,
            aggregation: None,
            reverse: None,
        }
    }
}

/// What the queue of one direction of `link` is built for, with that direction's buffer
/// and marking threshold.
pub fn queue_context(link: &LinkSpec, buffer: BufferValue, ecn_threshold: Option<EcnThresholdValue>, rng: SimRng) -> QueueContext {
    QueueContext {
        limit: match buffer {
            BufferValue::Packets(n) => QueueLimit::Packets(n),
            BufferValue::Bytes(b) => QueueLimit::Bytes(b),
        },
        marking: ecn_threshold.map(|t| match t {
            EcnThresholdValue::Packets(k) => CeThreshold::Backlog(k),
            EcnThresholdValue::Sojourn(d) => CeThreshold::Sojourn(d),
        }),
        rng,
        rate: link.rate.0,
        mtu: link.mtu,
    }
}
