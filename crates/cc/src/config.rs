//! Choosing an algorithm in a scenario: `cc = "cubic"` takes the defaults,
//! `cc = { kind = "cubic", beta = 0.7 }` sets parameters. Each algorithm owns its
//! parameter struct (in its own file) and describes it through [`AlgorithmConfig`]; this
//! module maps names to them, builds instances and describes every algorithm for
//! `tcplab list`.

use crate::bbr::BbrConfig;
use crate::bbr3::Bbr3Config;
use crate::bic::BicConfig;
use crate::cubic::CubicConfig;
use crate::dctcp::DctcpConfig;
use crate::highspeed::HighSpeedConfig;
use crate::htcp::HtcpConfig;
use crate::hybla::HyblaConfig;
use crate::illinois::IllinoisConfig;
use crate::ledbat::LedbatConfig;
use crate::reno::RenoConfig;
use crate::scalable::ScalableConfig;
use crate::siad::SiadConfig;
use crate::vegas::VegasConfig;
use crate::westwood::WestwoodConfig;
use crate::yeah::YeahConfig;
use crate::CongestionControl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Display;
use tcplab_core::SimRng;

/// Declares the registry from one list: `CcConfig` (what a flow holds), `CcTable` (the
/// tagged table form, for parsing and the JSON Schema) and the per-algorithm dispatch.
/// Adding an algorithm is one line here (its name must equal its `AlgorithmConfig::NAME`,
/// which a test checks).
macro_rules! algorithms {
    ($($(#[$doc:meta])* $variant:ident($config:ty) = $name:literal,)*) => {
        /// The algorithm of one flow and its parameters.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind", try_from = "CcSpec")]
        pub enum CcConfig {
            $($(#[$doc])* #[serde(rename = $name)] $variant($config),)*
        }

        /// The table form `{ kind = "...", <parameters> }`: parsed without the `try_from`
        /// indirection, and the source of the table's JSON Schema.
        #[derive(Deserialize, JsonSchema)]
        #[serde(tag = "kind")]
        enum CcTable {
            $($(#[$doc])* #[serde(rename = $name)] $variant($config),)*
        }

        impl From<CcTable> for CcConfig {
            fn from(table: CcTable) -> Self {
                match table {
                    $(CcTable::$variant(c) => CcConfig::$variant(c),)*
                }
            }
        }

        impl CcConfig {
            /// Every algorithm with its parameters and defaults.
            pub fn catalog() -> Vec<AlgorithmInfo> {
                vec![$(info::<$config>(),)*]
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(CcConfig::$variant(_) => <$config as AlgorithmConfig>::NAME,)*
                }
            }

            /// Checks parameter ranges; the error names the parameter and what is allowed.
            pub fn validate(&self) -> Result<(), String> {
                match self {
                    $(CcConfig::$variant(c) => c.validate(),)*
                }
            }

            /// A fresh instance; `rng` is the flow's own stream for algorithms that draw.
            pub fn build(&self, rng: SimRng) -> Box<dyn CongestionControl> {
                match self {
                    $(CcConfig::$variant(c) => c.build(rng),)*
                }
            }
        }
    };
}

algorithms! {
    /// NewReno (Linux "reno").
    NewReno(RenoConfig) = "newreno",
    /// CUBIC with HyStart (Linux tcp_cubic.c).
    Cubic(CubicConfig) = "cubic",
    /// BBR v1 (Linux tcp_bbr.c).
    Bbr(BbrConfig) = "bbr",
    /// BBRv3 (google/bbr v3 tcp_bbr.c; draft-ietf-ccwg-bbr as a profile).
    Bbr3(Bbr3Config) = "bbr3",
    /// Vegas (Linux tcp_vegas.c).
    Vegas(VegasConfig) = "vegas",
    /// YeAH (Linux tcp_yeah.c).
    Yeah(YeahConfig) = "yeah",
    /// Hybla (Linux tcp_hybla.c).
    Hybla(HyblaConfig) = "hybla",
    /// Westwood+ (Linux tcp_westwood.c).
    Westwood(WestwoodConfig) = "westwood",
    /// Scalable TCP (Linux tcp_scalable.c).
    Scalable(ScalableConfig) = "scalable",
    /// HighSpeed TCP (RFC 3649, Linux tcp_highspeed.c).
    HighSpeed(HighSpeedConfig) = "highspeed",
    /// TCP Illinois (Linux tcp_illinois.c).
    Illinois(IllinoisConfig) = "illinois",
    /// H-TCP (Linux tcp_htcp.c).
    Htcp(HtcpConfig) = "htcp",
    /// BIC (Linux tcp_bic.c).
    Bic(BicConfig) = "bic",
    /// LEDBAT (RFC 6817, as ns-3 TcpLedbat).
    Ledbat(LedbatConfig) = "ledbat",
    /// TCP SIAD, Scalable Increase Adaptive Decrease (Kühlewind's Linux module).
    Siad(SiadConfig) = "siad",
    /// DCTCP (RFC 8257, Linux tcp_dctcp.c); negotiates ECN with accurate CE feedback.
    Dctcp(DctcpConfig) = "dctcp",
}

/// What a scenario may write: a bare name or a table with `kind`.
#[derive(Deserialize)]
#[serde(untagged)]
enum CcSpec {
    Name(String),
    Table(serde_json::Map<String, serde_json::Value>),
}

/// Names accepted for each algorithm, the first being canonical.
const ALIASES: &[(&str, &str)] = &[("reno", "newreno"), ("bbr1", "bbr"), ("bbrv3", "bbr3")];

fn canonical(name: &str) -> &str {
    ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, canon)| canon)
}

impl TryFrom<CcSpec> for CcConfig {
    type Error = String;
    fn try_from(spec: CcSpec) -> Result<Self, String> {
        let mut table = match spec {
            CcSpec::Name(name) => {
                let mut t = serde_json::Map::new();
                t.insert("kind".into(), serde_json::Value::String(name));
                t
            }
            CcSpec::Table(t) => t,
        };
        let kind = match table.get("kind") {
            Some(serde_json::Value::String(k)) => canonical(k).to_string(),
            Some(other) => return Err(format!("`kind` must be a string naming an algorithm, got {other}")),
            None => return Err(format!("missing `kind`; allowed: {}", CcConfig::names().join(", "))),
        };
        if !CcConfig::names().contains(&kind.as_str()) {
            return Err(format!("unknown algorithm {kind:?}; allowed: {}", CcConfig::names().join(", ")));
        }
        table.insert("kind".into(), serde_json::Value::String(kind.clone()));
        serde_json::from_value::<CcTable>(serde_json::Value::Object(table))
            .map(CcConfig::from)
            .map_err(|e| format!("{kind}: {e}"))
    }
}

/// A bare name (any accepted spelling) or the table form.
impl JsonSchema for CcConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CcConfig".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut names = CcConfig::names();
        names.extend(ALIASES.iter().map(|(alias, _)| *alias));
        let table = generator.subschema_for::<CcTable>();
        schemars::json_schema!({
            "description": "Congestion control: an algorithm name (its defaults) or a table with `kind` and parameters.",
            "anyOf": [{ "type": "string", "enum": names }, table]
        })
    }
}

/// One tunable parameter, for `tcplab list`.
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: String,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// One algorithm, for `tcplab list`.
#[derive(Clone, Debug, Serialize)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamInfo>,
}

/// Name, unit and one-line description of a parameter; its default is read from the
/// parameter struct's `Default`, so it cannot drift from the code.
pub struct ParamDoc {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// What each algorithm's parameter struct provides to the registry.
pub trait AlgorithmConfig: Default + Serialize {
    /// Canonical name, equal to the serde tag of its `CcConfig` variant.
    const NAME: &'static str;
    /// One line for `tcplab list`.
    const SUMMARY: &'static str;
    /// Every field, in declaration order.
    const PARAMS: &'static [ParamDoc];

    /// Range checks; the error names the parameter and what is allowed.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    /// A fresh instance; `rng` is the flow's own stream for algorithms that draw.
    fn build(&self, rng: SimRng) -> Box<dyn CongestionControl>;
}

/// `Ok` if `ok`, else "`name` = `value` is out of range; allowed: `allowed`".
pub(crate) fn check_range(name: &str, value: impl Display, ok: bool, allowed: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{name} = {value} is out of range; allowed: {allowed}"))
    }
}

fn info<T: AlgorithmConfig>() -> AlgorithmInfo {
    let defaults = serde_json::to_value(T::default()).expect("parameter structs serialize");
    let params = T::PARAMS
        .iter()
        .map(|p| {
            let default = match &defaults[p.name] {
                serde_json::Value::Null => panic!("{}: PARAMS names {:?}, which is not a field", T::NAME, p.name),
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            ParamInfo { name: p.name, default, unit: p.unit, doc: p.doc }
        })
        .collect();
    AlgorithmInfo { name: T::NAME, summary: T::SUMMARY, params }
}

impl CcConfig {
    /// Canonical names of every algorithm.
    pub fn names() -> Vec<&'static str> {
        Self::catalog().iter().map(|a| a.name).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_name_alias_and_table_all_parse() {
        let a: CcConfig = serde_json::from_str(r#""newreno""#).unwrap();
        let b: CcConfig = serde_json::from_str(r#""reno""#).unwrap();
        let c: CcConfig = serde_json::from_str(r#"{"kind": "newreno"}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
    }

    #[test]
    fn unknown_names_and_fields_are_rejected_with_the_allowed_values() {
        let e = serde_json::from_str::<CcConfig>(r#""cubbic""#).unwrap_err().to_string();
        assert!(e.contains("unknown algorithm \"cubbic\"") && e.contains("newreno"), "{e}");
        let e = serde_json::from_str::<CcConfig>(r#"{"kind": "newreno", "beta": 1}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `beta`"), "{e}");
    }

    #[test]
    fn every_catalog_name_parses_builds_and_names_itself() {
        for info in CcConfig::catalog() {
            let c: CcConfig = serde_json::from_value(serde_json::json!(info.name)).unwrap();
            assert_eq!(c.name(), info.name);
            assert_eq!(c.validate(), Ok(()), "{}: defaults must validate", info.name);
            assert_eq!(c.build(SimRng::stream(1, "cc")).name(), info.name);
        }
        let bbr1: CcConfig = serde_json::from_str(r#""bbr1""#).unwrap();
        assert_eq!(bbr1.name(), "bbr");
    }

    #[test]
    fn catalog_params_are_exactly_the_fields_and_documented() {
        for info in CcConfig::catalog() {
            let c: CcConfig = serde_json::from_value(serde_json::json!(info.name)).unwrap();
            let serde_json::Value::Object(table) = serde_json::to_value(&c).unwrap() else { panic!() };
            let fields: Vec<&str> = table.keys().map(String::as_str).filter(|k| *k != "kind").collect();
            let mut params: Vec<&str> = info.params.iter().map(|p| p.name).collect();
            params.sort_unstable();
            assert_eq!(params, fields, "{}", info.name);
            for p in &info.params {
                assert!(!p.doc.is_empty() && !p.default.is_empty(), "{}.{}", info.name, p.name);
            }
        }
    }

    #[test]
    fn parameters_parse_from_a_table_and_ranges_are_checked() {
        let c: CcConfig = serde_json::from_str(r#"{"kind": "cubic", "beta": 1.5}"#).unwrap();
        assert_eq!(c.validate(), Err("beta = 1.5 is out of range; allowed: 0 < beta < 1".into()));
        let c: CcConfig = serde_json::from_str(r#"{"kind": "bbr1", "cwnd_gain": 0}"#).unwrap();
        let e = c.validate().unwrap_err();
        assert!(e.starts_with("cwnd_gain = 0 is out of range"), "{e}");
        let c: CcConfig = serde_json::from_str(r#"{"kind": "bbr", "lt_bw": false, "bw_win_rounds": 0}"#).unwrap();
        assert!(c.validate().unwrap_err().contains("bw_win_rounds = 0"));
    }

    #[test]
    fn serializes_as_a_table_with_kind() {
        let v = serde_json::to_value(CcConfig::NewReno(RenoConfig {})).unwrap();
        assert_eq!(v, serde_json::json!({"kind": "newreno"}));
    }
}
