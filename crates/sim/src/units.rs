//! Quantities as users write them: rates ("100Mbps"), durations ("10ms"), sizes ("4MB" is
//! 10^6 bytes, "4MiB" is 2^20), queue limits ("100pkt" or a size), ECN marking
//! thresholds ("20pkt" or a duration) and radio frequencies ("28GHz"). Each parses from a
//! string and serializes back to its canonical string, so a resolved scenario reads like
//! the one the user wrote (docs/architecture.md, rules).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use tcplab_cc::config::describe_value;
use tcplab_core::{Rate, SimDuration};

/// One kind of quantity: its units (name, size in base units, smallest first), how many of
/// them a value is printed with. Every quantity is at most 10^18 base units (`MAX_QUANTITY`), so that
/// adding two never overflows 64 bits (durations are nanoseconds on a clock that ends after
/// 584 years; 10^18 ns is 31.7 years).
struct Units {
    what: &'static str,
    units: &'static [(&'static str, u64)],
    printed: usize,
    /// How zero is written.
    zero: &'static str,
    example: &'static str,
}

const RATE: Units = Units {
    what: "rate",
    zero: "0bps",
    units: &[("bps", 1), ("kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000)],
    printed: 4,
    example: "100Mbps",
};
/// Minutes read badly in resolved files ("1min" vs "60s"): printing stops at seconds.
const DURATION: Units = Units {
    what: "duration",
    zero: "0s",
    units: &[("ns", 1), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000), ("min", 60_000_000_000)],
    printed: 4,
    example: "10ms",
};
const FREQUENCY: Units = Units {
    what: "frequency",
    zero: "0Hz",
    units: &[("Hz", 1), ("kHz", 1_000), ("MHz", 1_000_000), ("GHz", 1_000_000_000)],
    printed: 4,
    example: "28GHz",
};
const SIZE: Units = Units {
    what: "size",
    zero: "0B",
    units: &[("B", 1), ("KB", 1_000), ("KiB", 1 << 10), ("MB", 1_000_000), ("MiB", 1 << 20), ("GB", 1_000_000_000), ("GiB", 1 << 30)],
    printed: 7,
    example: "4MB",
};

/// Digits kept after the decimal point: with units of at most 6·10^10 base units, further
/// digits are worth less than 10^-9 of a base unit.
const FRACTION_DIGITS: usize = 20;

/// The largest value of any quantity, in base units.
pub const MAX_QUANTITY: u64 = 1_000_000_000_000_000_000;

impl Units {
    fn allowed(&self) -> String {
        self.units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
    }

    /// `s` in base units, exactly (decimal arithmetic, no float), rounded to the nearest unit.
    fn parse(&self, s: &str) -> Result<u64, String> {
        let what = self.what;
        let text = s.trim();
        let end = text.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+'))).unwrap_or(text.len());
        let (number, unit) = text.split_at(end);
        let (negative, digits) = match number.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, number.strip_prefix('+').unwrap_or(number)),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
            return Err(format!("{s:?} is not a {what}; expected a number with a unit ({}), e.g. {:?}", self.allowed(), self.example));
        }
        let unit = unit.trim();
        let scale = self.units.iter().find(|(u, _)| *u == unit).map(|(_, k)| u128::from(*k));
        let scale = scale.ok_or_else(|| format!("{s:?} has an unknown {what} unit {unit:?}; allowed: {}", self.allowed()))?;
        if negative && digits.bytes().any(|b| matches!(b, b'1'..=b'9')) {
            return Err(format!("{s:?} is negative; allowed: 0 to {}", self.format(MAX_QUANTITY)));
        }
        let fraction = &fraction[..fraction.len().min(FRACTION_DIGITS)];
        let denominator = 10u128.pow(fraction.len() as u32);
        let fraction = (fraction.parse::<u128>().unwrap_or(0) * scale + denominator / 2) / denominator;
        let whole = if whole.is_empty() { Some(0) } else { whole.parse::<u128>().ok() };
        match whole.and_then(|w| w.checked_mul(scale)).and_then(|w| w.checked_add(fraction)) {
            Some(v) if v <= u128::from(MAX_QUANTITY) => Ok(v as u64),
            _ => Err(format!("{s:?} is too large; allowed: at most {}", self.format(MAX_QUANTITY))),
        }
    }

    /// `value` (base units) with the largest printed unit that keeps it a whole number.
    fn format(&self, value: u64) -> String {
        let units = &self.units[..self.printed];
        if value == 0 {
            return self.zero.to_string();
        }
        let (unit, scale) = units.iter().rev().find(|(_, k)| value.is_multiple_of(*k)).expect("the base unit divides everything");
        format!("{}{unit}", value / scale)
    }
}

macro_rules! string_quantity {
    ($name:ident, $doc:literal, $expected:literal, $pattern:literal) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                match serde_json::Value::deserialize(d)? {
                    serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
                    other => Err(serde::de::Error::custom(format!("expected {}, found {}", $expected, describe_value(&other)))),
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

/// A rate such as "100Mbps".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RateValue(pub Rate);

impl std::str::FromStr for RateValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RATE.parse(s).map(|bps| RateValue(Rate::from_bps(bps)))
    }
}
impl fmt::Display for RateValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&RATE.format(self.0.bps()))
    }
}
string_quantity!(
    RateValue,
    "a rate: a number with bps, kbps, Mbps or Gbps",
    "a rate written as a string with a unit (bps, kbps, Mbps or Gbps), e.g. \"100Mbps\"",
    "100Mbps"
);

/// A duration such as "10ms".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DurationValue(pub SimDuration);

impl std::str::FromStr for DurationValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        DURATION.parse(s).map(|ns| DurationValue(SimDuration::from_nanos(ns)))
    }
}
impl fmt::Display for DurationValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&DURATION.format(self.0.as_nanos()))
    }
}
string_quantity!(
    DurationValue,
    "a duration: a number with ns, us, ms, s or min",
    "a duration written as a string with a unit (ns, us, ms, s or min), e.g. \"10ms\"",
    "10ms"
);

/// A size in bytes such as "4MB" (10^6) or "4MiB" (2^20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SizeValue(pub u64);

impl std::str::FromStr for SizeValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SIZE.parse(s).map(SizeValue)
    }
}
impl fmt::Display for SizeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&SIZE.format(self.0))
    }
}
string_quantity!(
    SizeValue,
    "a size: a number with B, KB, KiB, MB, MiB, GB or GiB (KB = 1000 B, KiB = 1024 B)",
    "a size written as a string with a unit (B, KB, KiB, MB, MiB, GB or GiB), e.g. \"4MB\"",
    "4MB"
);

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
        FREQUENCY.parse(s).map(FrequencyValue)
    }
}
impl fmt::Display for FrequencyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&FREQUENCY.format(self.0))
    }
}
string_quantity!(
    FrequencyValue,
    "a frequency: a number with Hz, kHz, MHz or GHz",
    "a frequency written as a string with a unit (Hz, kHz, MHz or GHz), e.g. \"28GHz\"",
    "28GHz"
);

/// A whole number of packets, "100pkt"; `None` if `s` is not written in packets.
fn parse_packets(s: &str, what: &str, expected: &str) -> Option<Result<u32, String>> {
    let n = s.trim().strip_suffix("pkt")?.trim();
    Some(match n.parse::<u32>() {
        Ok(n) => Ok(n),
        Err(_) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            Err(format!("{s:?} is too large; allowed: at most {}pkt", u32::MAX))
        }
        Err(_) => Err(format!("{s:?} is not {what}; {expected}")),
    })
}

/// A queue capacity: "100pkt" or a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferValue {
    Packets(u32),
    Bytes(u64),
}

impl std::str::FromStr for BufferValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected a whole number of packets like \"100pkt\" or a size with B, KB, KiB, MB, MiB, GB or GiB like \"1MB\"";
        if let Some(packets) = parse_packets(s, "a buffer size", expected) {
            return packets.map(BufferValue::Packets);
        }
        match s.parse::<SizeValue>() {
            Ok(b) => Ok(BufferValue::Bytes(b.0)),
            Err(e) if e.contains("too large") || e.contains("negative") => Err(e),
            Err(_) => Err(format!("{s:?} is not a buffer size; {expected}")),
        }
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
string_quantity!(
    BufferValue,
    "a queue capacity: packets (\"100pkt\") or a size (\"1MB\", \"64KiB\")",
    "a queue capacity written as a string with a unit: packets (\"100pkt\") or a size (\"1MB\")",
    "100pkt"
);

/// A CE-marking threshold: a backlog ("20pkt") or a sojourn time ("1ms").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnThresholdValue {
    Packets(u32),
    Sojourn(SimDuration),
}

impl std::str::FromStr for EcnThresholdValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected a backlog in packets like \"20pkt\" or a sojourn time like \"1ms\" (ns, us, ms, s)";
        if let Some(packets) = parse_packets(s, "an ECN threshold", expected) {
            return packets.map(EcnThresholdValue::Packets);
        }
        match s.parse::<DurationValue>() {
            Ok(d) => Ok(EcnThresholdValue::Sojourn(d.0)),
            Err(e) if e.contains("too large") || e.contains("negative") => Err(e),
            Err(_) => Err(format!("{s:?} is not an ECN threshold; {expected}")),
        }
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
    "an ECN threshold written as a string with a unit: packets (\"20pkt\") or a sojourn time (\"1ms\")",
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
        let e = serde_json::from_str::<DurationValue>("5").unwrap_err().to_string();
        assert_eq!(e, "expected a duration written as a string with a unit (ns, us, ms, s or min), e.g. \"10ms\", found the integer 5");
        for (json, found) in [("true", "the boolean true"), ("1.5", "the number 1.5"), ("[1]", "an array of 1 item"), ("{}", "a table")] {
            let e = serde_json::from_str::<BufferValue>(json).unwrap_err().to_string();
            assert!(e.starts_with("expected a queue capacity") && e.ends_with(found), "{e}");
        }
    }

    #[test]
    fn zero_is_written_in_the_base_unit_except_durations() {
        assert_eq!("0B".parse::<SizeValue>().unwrap().to_string(), "0B");
        assert_eq!("0GiB".parse::<SizeValue>().unwrap().to_string(), "0B");
        assert_eq!(RateValue(Rate::from_bps(0)).to_string(), "0bps");
        assert_eq!(FrequencyValue(0).to_string(), "0Hz");
        assert_eq!(DurationValue(SimDuration::ZERO).to_string(), "0s");
        assert_eq!(BufferValue::Bytes(0).to_string(), "0B");
    }

    /// Every value prints in a form that parses back to itself: zero, the smallest, values
    /// above 2^53 (where a float parser loses units) and the largest allowed.
    #[test]
    fn printing_and_parsing_round_trip_exactly() {
        for units in [&RATE, &DURATION, &FREQUENCY, &SIZE] {
            let mut values = vec![0, 1, 999, 1000, 1024, 1 << 20, 1_500_000_000, (1 << 53) + 1, MAX_QUANTITY - 1, MAX_QUANTITY];
            values.extend((0..200u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % MAX_QUANTITY));
            for v in values {
                let text = units.format(v);
                assert_eq!(units.parse(&text), Ok(v), "{} {v} printed as {text}", units.what);
            }
        }
    }

    #[test]
    fn decimals_are_exact_and_rounded_to_the_base_unit() {
        assert_eq!("9007199254740993B".parse::<SizeValue>().unwrap().0, 9_007_199_254_740_993);
        assert_eq!("0.1s".parse::<DurationValue>().unwrap().0.as_nanos(), 100_000_000);
        assert_eq!("1.0000000005s".parse::<DurationValue>().unwrap().0.as_nanos(), 1_000_000_001);
        assert_eq!(".5KiB".parse::<SizeValue>().unwrap().0, 512);
        assert_eq!("+2ms".parse::<DurationValue>().unwrap().0.as_nanos(), 2_000_000);
        assert_eq!("-0s".parse::<DurationValue>().unwrap().0.as_nanos(), 0);
        for bad in [".", "1.2.3s", "s", "--1s"] {
            assert!(bad.parse::<DurationValue>().unwrap_err().contains("is not a duration; expected a number with a unit"), "{bad}");
        }
        assert!("1e3s".parse::<DurationValue>().unwrap_err().contains("unknown duration unit \"e3s\""));
    }

    /// Values beyond a quantity's range are refused with the range, never clamped.
    #[test]
    fn values_beyond_the_range_are_refused_not_clamped() {
        let e = "99999999999999999999Gbps".parse::<RateValue>().unwrap_err();
        assert_eq!(e, "\"99999999999999999999Gbps\" is too large; allowed: at most 1000000000Gbps");
        let e = "1000000000000000000000000000000000000000000s".parse::<DurationValue>().unwrap_err();
        assert!(e.ends_with("is too large; allowed: at most 1000000000s"), "{e}");
        assert!("1000000000.000000001s".parse::<DurationValue>().unwrap_err().contains("too large"));
        assert!("1000000000s".parse::<DurationValue>().is_ok());
        assert!("1000000001GB".parse::<SizeValue>().unwrap_err().ends_with("at most 1000000000GB"));
        assert!("1000000001GHz".parse::<FrequencyValue>().unwrap_err().ends_with("at most 1000000000GHz"));
        assert!("-5s".parse::<DurationValue>().unwrap_err().contains("is negative; allowed: 0 to 1000000000s"));
        assert!("4294967296pkt".parse::<BufferValue>().unwrap_err().ends_with("is too large; allowed: at most 4294967295pkt"));
        assert!("4294967296pkt".parse::<EcnThresholdValue>().unwrap_err().contains("too large"));
        assert!("2000000000GB".parse::<BufferValue>().unwrap_err().contains("too large"));
        assert!("2000000000s".parse::<EcnThresholdValue>().unwrap_err().contains("too large"));
    }
}
