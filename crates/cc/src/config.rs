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
use crate::prague::PragueConfig;
use crate::reno::RenoConfig;
use crate::scalable::ScalableConfig;
use crate::siad::{SiadConfig, SiadVariant};
use crate::vegas::VegasConfig;
use crate::westwood::WestwoodConfig;
use crate::yeah::YeahConfig;
use crate::CongestionControl;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Display;
use tcplab_core::registry::Setting;
pub use tcplab_core::registry::{KindInfo as AlgorithmInfo, ParamDoc, ParamInfo};
use tcplab_core::SimRng;

/// Declares the registry from one list (`tcplab_core::registry!`: `CcConfig`, what a flow
/// holds, and `CcTable`, the tagged table form) and the per-algorithm dispatch. Adding an
/// algorithm is one line here (its name must equal its `AlgorithmConfig::NAME`, which a test
/// checks).
macro_rules! algorithms {
    ($($(#[$doc:meta])* $variant:ident($config:ty) = $name:literal,)*) => {
        tcplab_core::registry! {
            /// The algorithm of one flow and its parameters.
            #[derive(Clone, Debug, PartialEq, Deserialize)]
            #[serde(try_from = "Value")]
            pub enum CcConfig;
            /// An algorithm with parameters: `{ kind = "cubic", beta = 0.7 }`.
            table CcTable;
            kinds AlgorithmConfig, setting SETTING;
            $($(#[$doc])* $variant($config) = $name,)*
        }

        impl CcConfig {
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
    /// TCP Prague (L4STeam tcp_prague.c, RFC 9331); sends ECT(1) with accurate CE feedback.
    Prague(PragueConfig) = "prague",
}

impl CcConfig {
    /// Refuses, for a flow on tcp.stack = "linux", a configuration only the ns3 stack runs
    /// (SIAD's `variant = "ns3-study"`, the study's ns-3 port). The error is (the key at fault,
    /// what is wrong), as [`crate::ns3::parse`] gives for the other direction.
    pub fn check_linux(&self) -> Result<(), (String, String)> {
        match self {
            CcConfig::Siad(c) if c.variant == SiadVariant::Ns3Study => Err((
                "variant".to_string(),
                "variant = \"ns3-study\" needs tcp.stack = \"ns3\": it is the siad-mmwave study's ns-3 port (ns3::TcpSiad); allowed on the linux stack: \"linux\" (tcp_siad.c)".to_string(),
            )),
            _ => Ok(()),
        }
    }
}

/// The `cc` setting: a name or alias, or a table; its errors in the words of a scenario file.
const SETTING: Setting = Setting {
    noun: "algorithm",
    aliases: &[("reno", "newreno"), ("bbr1", "bbr"), ("bbrv3", "bbr3")],
    description: "Congestion control: an algorithm name (its defaults) or a table with `kind` and parameters.",
    not_name_or_table: |names, found| {
        format!("expected an algorithm name ({names}) or a table {{ kind = NAME, ... }}, found {}", describe_value(found))
    },
    kind_not_a_name: |names, found| format!("expected an algorithm name ({names}), found {}", describe_value(found)),
    bad_param: |kind, message| format!("{kind}: {}", humanize_serde_message(&message)),
};

/// Written as the table form, `{ kind = "cubic", beta = 0.7, ... }`.
impl Serialize for CcConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.table().serialize(s)
    }
}

impl TryFrom<Value> for CcConfig {
    type Error = String;
    fn try_from(value: Value) -> Result<Self, String> {
        CcConfig::parse(value).map_err(|(key, message)| if key.is_empty() { message } else { format!("{key}: {message}") })
    }
}

/// A scenario value as a message names it: "the integer 5", "the string \"x\"", "a table".
pub fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "nothing (null)".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("the number {n}"),
        Value::Number(n) => format!("the integer {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(items) => format!("an array of {} item{}", items.len(), if items.len() == 1 { "" } else { "s" }),
        Value::Object(_) => "a table".into(),
    }
}

/// serde's messages in the words of a scenario file: "invalid type: floating point `1.5`,
/// expected u32" becomes "expected a whole number from 0 to 4294967295, found the number
/// 1.5"; "unknown variant `x`, expected `a` or `b`" becomes "unknown value \"x\"; allowed:
/// a, b". Other messages are returned unchanged.
pub fn humanize_serde_message(message: &str) -> String {
    let mismatch =
        ["invalid type: ", "invalid value: "].iter().find_map(|p| message.strip_prefix(p)).and_then(|rest| rest.split_once(", expected "));
    if let Some((found, expected)) = mismatch {
        return format!("expected {}, found {}", serde_expected(expected), serde_unexpected(found));
    }
    if let Some((length, expected)) = message.strip_prefix("invalid length ").and_then(|rest| rest.split_once(", expected ")) {
        return format!("expected {expected}, found an array of {length} items");
    }
    for (prefix, what) in [("unknown variant `", "value"), ("unknown field `", "key")] {
        if let Some((name, allowed)) = message.strip_prefix(prefix).and_then(|rest| rest.split_once("`, ")) {
            let allowed = match allowed.strip_prefix("expected ") {
                Some(list) => list.trim_start_matches("one of ").replace('`', "").replace(" or ", ", "),
                None => "none here".to_string(), // serde: "there are no fields"
            };
            return format!("unknown {what} {name:?}; allowed: {allowed}");
        }
    }
    message.to_string()
}

/// serde's `Unexpected` as a scenario value ("integer `5`" is "the integer 5").
fn serde_unexpected(found: &str) -> String {
    for (prefix, noun) in [("integer ", "integer"), ("floating point ", "number"), ("boolean ", "boolean"), ("string ", "string")] {
        if let Some(value) = found.strip_prefix(prefix) {
            return format!("the {noun} {}", if noun == "string" { value } else { value.trim_matches('`') });
        }
    }
    match found {
        "sequence" => "an array".into(),
        "map" => "a table".into(),
        "unit value" => "nothing (null)".into(),
        other => other.into(),
    }
}

/// serde's "expected" as a scenario type ("u32" is "a whole number from 0 to 4294967295").
fn serde_expected(expected: &str) -> String {
    let whole = |max: u64| format!("a whole number from 0 to {max}");
    match expected {
        "u8" => whole(u8::MAX.into()),
        "u16" => whole(u16::MAX.into()),
        "u32" => whole(u32::MAX.into()),
        "u64" => whole(u64::MAX),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "an array".into(),
        "a map" => "a table".into(),
        e if e.starts_with("struct ") => "a table".into(),
        e => e.into(),
    }
}

/// What each algorithm's parameter struct provides to the registry.
pub trait AlgorithmConfig: Default + Serialize {
    /// Canonical name, equal to its name in `algorithms!` (a test checks).
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
        assert!(e.contains("unknown key \"beta\"; allowed: none"), "{e}");
    }

    /// Every way of writing `cc` wrong names what was found and what is allowed, in the
    /// words of a scenario file (no serde type or enum names).
    #[test]
    fn wrong_types_say_what_was_found_and_what_is_allowed() {
        let parse = |text: &str| CcConfig::parse(serde_json::from_str(text).unwrap()).unwrap_err();
        let (key, e) = parse("5");
        assert_eq!(key, "");
        assert!(
            e.starts_with("expected an algorithm name (newreno, cubic, bbr")
                && e.ends_with("or a table { kind = NAME, ... }, found the integer 5"),
            "{e}"
        );
        assert_eq!(parse("[1, 2]").1.rsplit_once("found ").unwrap().1, "an array of 2 items");
        let (key, e) = parse(r#"{"kind": 5}"#);
        assert_eq!((key.as_str(), e.ends_with("found the integer 5")), ("kind", true), "{e}");
        assert_eq!(parse(r#"{"beta": 0.5}"#), ("kind".to_string(), format!("missing; allowed: {}", CcConfig::names().join(", "))));
        assert_eq!(parse(r#""cubbic""#).0, "", "a bare name is the value itself, not its kind");
        assert_eq!(
            parse(r#"{"kind": "cubic", "beta": "x"}"#),
            ("beta".to_string(), "cubic: expected a number, found the string \"x\"".to_string())
        );
        assert_eq!(
            parse(r#"{"kind": "cubic", "hystart": 5}"#),
            ("hystart".to_string(), "cubic: expected true, false or \"hystart++\", found the integer 5".to_string())
        );
        let (key, e) = parse(r#"{"kind": "bbr", "bw_win_rounds": -1}"#);
        assert_eq!(
            (key.as_str(), e.as_str()),
            ("bw_win_rounds", "bbr: expected a whole number from 0 to 4294967295, found the integer -1")
        );
        let (key, e) = parse(r#"{"kind": "cubic", "hystart_detect": "both!"}"#);
        assert_eq!((key.as_str(), e.as_str()), ("hystart_detect", "cubic: unknown value \"both!\"; allowed: ack-train, delay, both"));
        for text in ["5", r#"{"kind": 5}"#, r#"{"kind": "cubic", "hystart": 5}"#, r#"{"kind": "cubic", "beta": "x"}"#] {
            let e = serde_json::from_str::<CcConfig>(text).unwrap_err().to_string();
            assert!(!e.contains("untagged") && !e.contains("variant") && !e.contains("f64"), "{e}");
        }
    }

    #[test]
    fn serde_messages_read_as_scenario_words() {
        for (serde, ours) in [
            ("invalid type: floating point `1.5`, expected u32", "expected a whole number from 0 to 4294967295, found the number 1.5"),
            ("invalid value: integer `-1`, expected u64", "expected a whole number from 0 to 18446744073709551615, found the integer -1"),
            ("invalid type: string \"a\", expected a boolean", "expected true or false, found the string \"a\""),
            ("invalid type: map, expected f64", "expected a number, found a table"),
            ("invalid type: sequence, expected struct LinkSpec", "expected a table, found an array"),
            ("invalid length 2, expected an array of length 3", "expected an array of length 3, found an array of 2 items"),
            ("unknown variant `fast`, expected `off` or `fq`", "unknown value \"fast\"; allowed: off, fq"),
            ("unknown field `sped`, expected one of `a`, `b`", "unknown key \"sped\"; allowed: a, b"),
            ("something else", "something else"),
        ] {
            assert_eq!(humanize_serde_message(serde), ours);
        }
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
    fn siad_variant_parses_and_ns3_study_is_refused_on_the_linux_stack() {
        let c: CcConfig = serde_json::from_str(r#""siad""#).unwrap();
        assert_eq!(c, CcConfig::Siad(SiadConfig::default()));
        assert_eq!(c.check_linux(), Ok(()));
        let c: CcConfig = serde_json::from_str(r#"{"kind": "siad", "variant": "ns3-study", "num_rtt": 0}"#).unwrap();
        assert_eq!(c, CcConfig::Siad(SiadConfig { num_rtt: 0, num_ms: 0, variant: SiadVariant::Ns3Study }));
        assert_eq!(c.validate(), Ok(()), "num_rtt 0 is TcpSiad's built-in 20");
        let (key, e) = c.check_linux().unwrap_err();
        assert_eq!(key, "variant");
        assert!(e.starts_with("variant = \"ns3-study\" needs tcp.stack = \"ns3\": "), "{e}");
        let c: CcConfig = serde_json::from_str(r#"{"kind": "siad", "variant": "linux", "num_rtt": 0}"#).unwrap();
        assert!(c.validate().unwrap_err().starts_with("num_rtt = 0 is out of range"));
        let (key, e) = CcConfig::parse(serde_json::json!({"kind": "siad", "variant": "ns3"})).unwrap_err();
        assert_eq!((key.as_str(), e.as_str()), ("variant", "siad: unknown value \"ns3\"; allowed: linux, ns3-study"));
        for other in ["cubic", "bbr", "newreno"] {
            let c: CcConfig = serde_json::from_value(serde_json::json!(other)).unwrap();
            assert_eq!(c.check_linux(), Ok(()));
        }
    }

    #[test]
    fn serializes_as_a_table_with_kind() {
        let v = serde_json::to_value(CcConfig::NewReno(RenoConfig {})).unwrap();
        assert_eq!(v, serde_json::json!({"kind": "newreno"}));
    }
}
