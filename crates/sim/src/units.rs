//! Quantities as users write them: rates ("100Mbps"), durations ("10ms"), sizes ("4MB" is
//! 10^6 bytes, "4MiB" is 2^20), queue limits ("100pkt" or a size), ECN marking
//! thresholds ("20pkt" or a duration) and radio frequencies ("28GHz"). Each parses from a
//! string and serializes back to its canonical string, so a resolved scenario reads like
//! the one the user wrote (design.md §4).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use tcplab_core::{Rate, SimDuration};

/// Splits "12.5Mbps" into (12.5, "Mbps").
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+'))).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let value: f64 = num.parse().ok()?;
    value.is_finite().then_some((value, unit.trim()))
}

fn parse_scaled(s: &str, units: &[(&str, f64)], what: &str, example: &str) -> Result<f64, String> {
    let allowed = || units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ");
    let (value, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not a {what}; expected a number with a unit ({}), e.g. {example:?}", allowed()))?;
    let scale = units
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, k)| *k)
        .ok_or_else(|| format!("{s:?} has an unknown {what} unit {unit:?}; allowed: {}", allowed()))?;
    if value < 0.0 {
        return Err(format!("{s:?} is negative; a {what} must be ≥ 0"));
    }
    Ok(value * scale)
}

/// Formats `value` (in base units) with the largest unit that keeps it an exact integer;
/// zero takes the largest unit ("0s", not "0ns").
fn format_scaled(value: u64, units: &[(&str, f64)]) -> String {
    if value == 0 {
        return format!("0{}", units[units.len() - 1].0);
    }
    for (unit, scale) in units.iter().rev() {
        let scale = *scale as u64;
        if scale > 0 && value >= scale && value.is_multiple_of(scale) {
            return format!("{}{unit}", value / scale);
        }
    }
    format!("{value}{}", units[0].0)
}

macro_rules! string_quantity {
    ($name:ident, $doc:literal, $pattern:literal) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = serde_json::Value::deserialize(d)?;
                match v {
                    serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
                    other => Err(serde::de::Error::custom(format!(
                        "{other} is not a {}; write it as a string with a unit, e.g. {:?}",
                        $doc, $pattern
                    ))),
                }
            }
        }
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "description": $doc, "examples": [$pattern] })
            }
        }
    };
}

const RATE_UNITS: &[(&str, f64)] = &[("bps", 1.0), ("kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9)];
const DURATION_UNITS: &[(&str, f64)] = &[("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("min", 60e9)];
const FREQUENCY_UNITS: &[(&str, f64)] = &[("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9)];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("KiB", 1024.0),
    ("MB", 1e6),
    ("MiB", 1048576.0),
    ("GB", 1e9),
    ("GiB", 1073741824.0),
];

/// A rate such as "100Mbps".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RateValue(pub Rate);

impl std::str::FromStr for RateValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bps = parse_scaled(s, RATE_UNITS, "rate", "100Mbps")?;
        Ok(RateValue(Rate::from_bps(bps.round() as u64)))
    }
}
impl fmt::Display for RateValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(self.0.bps(), RATE_UNITS))
    }
}
string_quantity!(RateValue, "a rate: a number with bps, kbps, Mbps or Gbps", "100Mbps");

/// A duration such as "10ms".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DurationValue(pub SimDuration);

impl std::str::FromStr for DurationValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let ns = parse_scaled(s, DURATION_UNITS, "duration", "10ms")?;
        Ok(DurationValue(SimDuration::from_nanos(ns.round() as u64)))
    }
}
impl fmt::Display for DurationValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Minutes read badly in resolved files ("1min" vs "60s"): stop at seconds.
        f.write_str(&format_scaled(self.0.as_nanos(), &DURATION_UNITS[..4]))
    }
}
string_quantity!(DurationValue, "a duration: a number with ns, us, ms, s or min", "10ms");

/// A size in bytes such as "4MB" (10^6) or "4MiB" (2^20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SizeValue(pub u64);

impl std::str::FromStr for SizeValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(SizeValue(parse_scaled(s, SIZE_UNITS, "size", "4MB")?.round() as u64))
    }
}
impl fmt::Display for SizeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(self.0, SIZE_UNITS))
    }
}
string_quantity!(SizeValue, "a size: a number with B, KB, KiB, MB, MiB, GB or GiB (KB = 1000 B, KiB = 1024 B)", "4MB");

/// A frequency or bandwidth in whole hertz, such as "28GHz" or "200MHz".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FrequencyValue(pub u64);

impl FrequencyValue {
    pub fn hz(self) -> f64 {
        self.0 as f64
    }
}
impl std::str::FromStr for FrequencyValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(FrequencyValue(parse_scaled(s, FREQUENCY_UNITS, "frequency", "28GHz")?.round() as u64))
    }
}
impl fmt::Display for FrequencyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_scaled(self.0, FREQUENCY_UNITS))
    }
}
string_quantity!(FrequencyValue, "a frequency: a number with Hz, kHz, MHz or GHz", "28GHz");

/// A queue capacity: "100pkt" or a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferValue {
    Packets(u32),
    Bytes(u64),
}

impl std::str::FromStr for BufferValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(n) = s.trim().strip_suffix("pkt") {
            return match n.trim().parse::<u32>() {
                Ok(n) => Ok(BufferValue::Packets(n)),
                Err(_) => Err(format!("{s:?} is not a buffer size; expected a whole number of packets like \"100pkt\" or a size like \"1MB\"")),
            };
        }
        s.parse::<SizeValue>()
            .map(|b| BufferValue::Bytes(b.0))
            .map_err(|_| format!("{s:?} is not a buffer size; expected packets like \"100pkt\" or a size with B, KB, KiB, MB, MiB, GB or GiB"))
    }
}
impl fmt::Display for BufferValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferValue::Packets(n) => write!(f, "{n}pkt"),
            BufferValue::Bytes(b) => write!(f, "{}", SizeValue(*b)),
        }
    }
}
string_quantity!(BufferValue, "a queue capacity: packets (\"100pkt\") or a size (\"1MB\", \"64KiB\")", "100pkt");

/// A CE-marking threshold: a backlog ("20pkt") or a sojourn time ("1ms").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnThresholdValue {
    Packets(u32),
    Sojourn(SimDuration),
}

impl std::str::FromStr for EcnThresholdValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected a backlog in packets like \"20pkt\" or a sojourn time like \"1ms\"";
        if let Some(n) = s.trim().strip_suffix("pkt") {
            return n.trim().parse::<u32>().map(EcnThresholdValue::Packets).map_err(|_| format!("{s:?} is not an ECN threshold; {expected}"));
        }
        s.parse::<DurationValue>()
            .map(|d| EcnThresholdValue::Sojourn(d.0))
            .map_err(|_| format!("{s:?} is not an ECN threshold; {expected} (ns, us, ms, s)"))
    }
}
impl fmt::Display for EcnThresholdValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EcnThresholdValue::Packets(n) => write!(f, "{n}pkt"),
            EcnThresholdValue::Sojourn(d) => write!(f, "{}", DurationValue(*d)),
        }
    }
}
string_quantity!(
    EcnThresholdValue,
    "an ECN marking threshold: a backlog in packets (\"20pkt\", marks on enqueue) or a sojourn time (\"1ms\", marks on dequeue)",
    "20pkt"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print_canonically() {
        assert_eq!("100Mbps".parse::<RateValue>().unwrap().0, Rate::from_mbps(100));
        assert_eq!("1.5Gbps".parse::<RateValue>().unwrap().0.bps(), 1_500_000_000);
        assert_eq!("1.5Gbps".parse::<RateValue>().unwrap().to_string(), "1500Mbps");
        assert_eq!(RateValue(Rate::from_bps(1234)).to_string(), "1234bps");
        let e = "10Mbs".parse::<RateValue>().unwrap_err();
        assert!(e.contains("unknown rate unit \"Mbs\"") && e.contains("Mbps"), "{e}");
        assert!("-5Mbps".parse::<RateValue>().unwrap_err().contains("negative"));
        assert!("fast".parse::<RateValue>().is_err());
    }

    #[test]
    fn durations_sizes_and_buffers() {
        assert_eq!("2.5s".parse::<DurationValue>().unwrap().0, SimDuration::from_millis(2500));
        assert_eq!("1min".parse::<DurationValue>().unwrap().to_string(), "60s");
        assert_eq!("0ms".parse::<DurationValue>().unwrap().to_string(), "0s");
        assert_eq!("40us".parse::<DurationValue>().unwrap().0, SimDuration::from_micros(40));
        assert_eq!("4MB".parse::<SizeValue>().unwrap().0, 4_000_000);
        assert_eq!("4MiB".parse::<SizeValue>().unwrap().0, 4 << 20);
        assert_eq!("4MiB".parse::<SizeValue>().unwrap().to_string(), "4MiB");
        assert_eq!("16384pkt".parse::<BufferValue>().unwrap(), BufferValue::Packets(16384));
        assert_eq!("1MB".parse::<BufferValue>().unwrap(), BufferValue::Bytes(1_000_000));
        assert!("1.5pkt".parse::<BufferValue>().is_err());
    }

    #[test]
    fn ecn_thresholds_are_packets_or_durations() {
        assert_eq!("20pkt".parse::<EcnThresholdValue>().unwrap(), EcnThresholdValue::Packets(20));
        assert_eq!("500us".parse::<EcnThresholdValue>().unwrap(), EcnThresholdValue::Sojourn(SimDuration::from_micros(500)));
        assert_eq!("1000us".parse::<EcnThresholdValue>().unwrap().to_string(), "1ms");
        assert_eq!(EcnThresholdValue::Packets(65).to_string(), "65pkt");
        for bad in ["20", "20pk", "2.5pkt", "1MB"] {
            let e = bad.parse::<EcnThresholdValue>().unwrap_err();
            assert!(e.contains("not an ECN threshold") && e.contains("\"20pkt\""), "{e}");
        }
    }

    #[test]
    fn frequencies_parse_and_print_canonically() {
        assert_eq!("28GHz".parse::<FrequencyValue>().unwrap().0, 28_000_000_000);
        assert_eq!("1GHz".parse::<FrequencyValue>().unwrap().hz(), 1e9);
        assert_eq!("200MHz".parse::<FrequencyValue>().unwrap().to_string(), "200MHz");
        assert_eq!("0.2GHz".parse::<FrequencyValue>().unwrap().to_string(), "200MHz");
        assert!("28Ghz".parse::<FrequencyValue>().unwrap_err().contains("GHz"));
    }

    #[test]
    fn numbers_without_units_are_refused_with_an_example() {
        let e = serde_json::from_str::<RateValue>("100").unwrap_err().to_string();
        assert!(e.contains("string with a unit"), "{e}");
    }
}
