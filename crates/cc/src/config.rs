//! Choosing an algorithm in a scenario: `cc = "cubic"` takes the defaults,
//! `cc = { kind = "cubic", beta = 0.7 }` sets parameters. Each algorithm owns its
//! parameter struct (in its own file); this module maps names to them, builds instances
//! and describes every algorithm for `tcplab list`.

use crate::reno::{Reno, RenoConfig};
use crate::CongestionControl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// The algorithm of one flow and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[serde(try_from = "CcSpec")]
pub enum CcConfig {
    /// NewReno (Linux "reno").
    #[serde(rename = "newreno")]
    NewReno(RenoConfig),
}

/// What a scenario may write: a bare name or a table with `kind`.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum CcSpec {
    Name(String),
    Table(serde_json::Map<String, serde_json::Value>),
}

/// Names accepted for each algorithm, the first being canonical.
const ALIASES: &[(&str, &str)] = &[("reno", "newreno")];

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
        serde_json::from_value::<CcConfigTable>(serde_json::Value::Object(table))
            .map(|t| t.0)
            .map_err(|e| format!("{kind}: {e}"))
    }
}

/// The tagged representation, deserialized without the `try_from` indirection.
struct CcConfigTable(CcConfig);

impl<'de> Deserialize<'de> for CcConfigTable {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        enum Tagged {
            #[serde(rename = "newreno")]
            NewReno(RenoConfig),
        }
        Ok(CcConfigTable(match Tagged::deserialize(d)? {
            Tagged::NewReno(c) => CcConfig::NewReno(c),
        }))
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

impl CcConfig {
    /// Canonical names of every algorithm.
    pub fn names() -> Vec<&'static str> {
        Self::catalog().iter().map(|a| a.name).collect()
    }

    /// Every algorithm with its parameters and defaults.
    pub fn catalog() -> Vec<AlgorithmInfo> {
        vec![AlgorithmInfo { name: "newreno", summary: "NewReno with SACK and PRR, Linux \"reno\" counting (RFC 5681/6582/6675)", params: vec![] }]
    }

    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::NewReno(_) => "newreno",
        }
    }

    /// Checks parameter ranges; the error names the parameter and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            CcConfig::NewReno(_) => Ok(()),
        }
    }

    /// A fresh instance; `rng` is the flow's own stream for algorithms that draw.
    pub fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        match self {
            CcConfig::NewReno(_) => Box::new(Reno),
        }
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
    fn serializes_as_a_table_with_kind() {
        let v = serde_json::to_value(CcConfig::NewReno(RenoConfig {})).unwrap();
        assert_eq!(v, serde_json::json!({"kind": "newreno"}));
    }
}
