//! A WiFi cell in a dumbbell (`topology.wifi`, docs/models.md, WiFi): the senders s0…s(N−1) are the
//! stations of one BSS whose access point is router `left`, in place of their wired access links;
//! the receivers stay on wired links (the wifi-cubic-bbr study, docs/validation.md). This file
//! holds the schema, its checks, and the `BssConfig` it builds.

use crate::error::ScenarioError;
use crate::units::{BufferValue, DurationValue, SizeValue};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimDuration;
use tcplab_net::wifi::bss::{BssConfig, RateControl};
use tcplab_net::wifi::error::{Coding, ErrorModel};
use tcplab_net::wifi::phy::{Band, PhyConfig, Standard, MAX_PPDU_DURATION};

/// The model has every device sense every other (no hidden nodes, docs/models.md), which holds from
/// ns-3's CCA sensitivity, −82 dBm (ns-3 wifi defaults), up to what was sent: no receiver gets more
/// than the 16.0206 dBm transmit power (ns-3 wifi defaults).
const RSS_DBM: (f64, f64) = (-82.0, 16.0206);
/// Largest A-MPDU and A-MSDU of each standard: ns-3's caps of BE_MaxAmpduSize (HT 65,535 B,
/// HE 6,500,631 B) and BE_MaxAmsduSize (HT 7935 B, HE 11,398 B) (ns-3 WifiMac attributes).
const MAX_AMPDU_BYTES: [u64; 2] = [65_535, 6_500_631];
const MAX_AMSDU_BYTES: [u64; 2] = [7_935, 11_398];
/// dot11LongRetryLimit is 1..255 in the IEEE 802.11 MIB (Annex C).
const MAX_RETRY_LIMIT: u32 = 255;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StandardSpec {
    /// WiFi 4 (HT).
    #[serde(rename = "802.11n")]
    Ht,
    /// WiFi 6 (HE).
    #[serde(rename = "802.11ax")]
    He,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BandSpec {
    #[serde(rename = "2.4GHz")]
    Ghz2_4,
    #[serde(rename = "5GHz")]
    Ghz5,
}

/// How data frames pick their MCS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateManagerSpec {
    /// `mcs` for every data frame (ns-3's ConstantRateWifiManager).
    #[default]
    Constant,
    /// The fastest MCS whose PER for a 1538-B MPDU at the SNR is at most 1 %.
    Ideal,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ErrorModelSpec {
    /// ns-3 ≥ 3.33's TableBasedErrorRateModel (AWGN PER tables).
    #[default]
    Table,
    /// NistErrorRateModel (ns-3 ≤ 3.32).
    Nist,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CodingSpec {
    #[default]
    Bcc,
    Ldpc,
}

/// The BSS of the senders (ns-3 wifi defaults per standard).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WifiSpec {
    /// "802.11n" (WiFi 4) or "802.11ax" (WiFi 6).
    pub standard: StandardSpec,
    /// "2.4GHz" or "5GHz" (default: 2.4 GHz for 802.11n, 5 GHz for 802.11ax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<BandSpec>,
    /// Channel width in MHz: 20 or 40 (802.11n, and 802.11ax at 2.4 GHz); 20, 40, 80 or 160
    /// (802.11ax at 5 GHz). Default 20 for 802.11n, 80 for 802.11ax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_mhz: Option<u32>,
    /// Guard interval in ns: 800 or 400 (802.11n); 800, 1600 or 3200 (802.11ax). Default 800
    /// for 802.11n, 3200 for 802.11ax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_interval_ns: Option<u32>,
    #[serde(default = "one")]
    pub spatial_streams: u32,
    #[serde(default)]
    pub rate_manager: RateManagerSpec,
    /// Data MCS of the constant rate manager: 0–7 (802.11n, per stream) or 0–11 (802.11ax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u32>,
    /// Power every device receives from every other, dBm (fixed RSS: no hidden nodes).
    #[serde(default = "default_rss")]
    pub rss_dbm: f64,
    #[serde(default = "default_noise_figure")]
    pub noise_figure_db: f64,
    #[serde(default)]
    pub error_model: ErrorModelSpec,
    #[serde(default)]
    pub coding: CodingSpec,
    /// A-MPDU size limit ("0B": no A-MPDU).
    #[serde(default = "default_ampdu")]
    pub max_ampdu: SizeValue,
    /// A-MSDU size limit ("0B": off).
    #[serde(default = "default_amsdu")]
    pub max_amsdu: SizeValue,
    /// MAC queue of each device, in packets.
    #[serde(default = "default_queue")]
    pub queue: BufferValue,
    /// Packets older than this in the MAC queue are dropped.
    #[serde(default = "default_queue_delay")]
    pub max_queue_delay: DurationValue,
    /// Transmissions of an MPDU before it is dropped.
    #[serde(default = "default_retry_limit")]
    pub retry_limit: u32,
}

fn one() -> u32 {
    1
}
fn default_rss() -> f64 {
    -80.0
}
fn default_noise_figure() -> f64 {
    7.0
}
fn default_ampdu() -> SizeValue {
    SizeValue(65_535)
}
fn default_amsdu() -> SizeValue {
    SizeValue(0)
}
fn default_queue() -> BufferValue {
    BufferValue::Packets(500)
}
fn default_queue_delay() -> DurationValue {
    DurationValue(SimDuration::from_millis(500))
}
fn default_retry_limit() -> u32 {
    7
}

impl WifiSpec {
    /// Fills the per-standard defaults and checks every key; `stations` is the dumbbell's
    /// number of pairs.
    pub fn resolve(&mut self, stations: u32) -> Result<BssConfig, ScenarioError> {
        let err = |key: &str, msg: String| ScenarioError::new(format!("topology.wifi.{key}"), msg);
        let standard = match self.standard {
            StandardSpec::Ht => Standard::Ht,
            StandardSpec::He => Standard::He,
        };
        let defaults = PhyConfig::default_for(standard);
        let band = match *self.band.get_or_insert(match defaults.band {
            Band::Ghz2_4 => BandSpec::Ghz2_4,
            Band::Ghz5 => BandSpec::Ghz5,
        }) {
            BandSpec::Ghz2_4 => Band::Ghz2_4,
            BandSpec::Ghz5 => Band::Ghz5,
        };
        let width = *self.width_mhz.get_or_insert(defaults.width_mhz);
        let gi = *self.guard_interval_ns.get_or_insert(defaults.guard_interval_ns);
        let phy = PhyConfig::new(standard, band, width, gi, self.spatial_streams).map_err(|e| {
            let key = match e {
                tcplab_net::wifi::phy::PhyError::Width { .. } => "width_mhz",
                tcplab_net::wifi::phy::PhyError::GuardInterval { .. } => "guard_interval_ns",
                _ => "spatial_streams",
            };
            err(key, e.to_string())
        })?;
        let rate = match (self.rate_manager, self.mcs) {
            (RateManagerSpec::Constant, None) => {
                return Err(err("mcs", format!("missing; the constant rate manager needs an MCS, 0..={}", phy.max_mcs())));
            }
            (RateManagerSpec::Constant, Some(m)) => RateControl::Constant(phy.mcs(m).map_err(|e| err("mcs", e.to_string()))?),
            (RateManagerSpec::Ideal, Some(_)) => return Err(err("mcs", "goes with rate_manager = \"constant\" only".into())),
            (RateManagerSpec::Ideal, None) => RateControl::Ideal,
        };
        let (min_rss, max_rss) = RSS_DBM;
        if !(min_rss..=max_rss).contains(&self.rss_dbm) {
            let why = "from the CCA sensitivity, so that every device senses every other, to the transmit power (ns-3 WifiPhy CcaSensitivity and TxPowerStart)";
            return Err(err("rss_dbm", format!("{} dBm is out of range; allowed: {min_rss} to {max_rss} dBm ({why})", self.rss_dbm)));
        }
        if !(self.noise_figure_db >= 0.0 && self.noise_figure_db.is_finite()) {
            return Err(err(
                "noise_figure_db",
                format!(
                    "{} dB is out of range; allowed: a finite number ≥ 0 dB (no receiver adds less than no noise)",
                    self.noise_figure_db
                ),
            ));
        }
        let queue_packets = match self.queue {
            BufferValue::Packets(n) if n > 0 => n,
            _ => return Err(err("queue", format!("{} is not allowed; the MAC queue is counted in packets, e.g. \"500pkt\"", self.queue))),
        };
        if !(1..=MAX_RETRY_LIMIT).contains(&self.retry_limit) {
            return Err(err(
                "retry_limit",
                format!(
                    "{} is out of range; allowed: 1 to {MAX_RETRY_LIMIT} transmissions (dot11LongRetryLimit, IEEE 802.11 Annex C)",
                    self.retry_limit
                ),
            ));
        }
        if self.max_queue_delay.0.as_nanos() == 0 {
            return Err(err("max_queue_delay", "0s would drop every packet before it is sent; allowed: > 0 (ns-3's default 500ms)".into()));
        }
        let standard_index = usize::from(standard == Standard::He);
        let name = ["802.11n", "802.11ax"][standard_index];
        let limits = [
            ("max_ampdu", self.max_ampdu, MAX_AMPDU_BYTES[standard_index]),
            ("max_amsdu", self.max_amsdu, MAX_AMSDU_BYTES[standard_index]),
        ];
        for (key, size, max) in limits {
            if size.0 > max {
                return Err(err(
                    key,
                    format!("{size} is above what {name} allows; allowed: 0B (off) to {} (ns-3 WifiMac BE_MaxAmpduSize)", SizeValue(max)),
                ));
            }
        }
        let bytes = |size: SizeValue| u32::try_from(size.0).expect("checked against the standard's limit");
        let mut config = BssConfig::new(phy, stations as usize, rate);
        config.error_model = match self.error_model {
            ErrorModelSpec::Table => ErrorModel::TableBased,
            ErrorModelSpec::Nist => ErrorModel::Nist,
        };
        config.coding = match self.coding {
            CodingSpec::Bcc => Coding::Bcc,
            CodingSpec::Ldpc => Coding::Ldpc,
        };
        config.rss_dbm = self.rss_dbm;
        config.noise_figure_db = self.noise_figure_db;
        config.max_ampdu_bytes = bytes(self.max_ampdu);
        config.max_amsdu_bytes = bytes(self.max_amsdu);
        config.queue_packets = queue_packets;
        config.max_queue_delay = self.max_queue_delay.0;
        config.retry_limit = self.retry_limit;
        Ok(config)
    }
    /// What is allowed but unusual (see `resolve::warnings`); `self` is resolved.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.max_queue_delay.0 < MAX_PPDU_DURATION {
            out.push(format!(
                "topology.wifi.max_queue_delay: {} is shorter than one PPDU may last ({}, the longest HT/HE PPDU): packets may expire while the medium is busy",
                self.max_queue_delay,
                DurationValue(MAX_PPDU_DURATION)
            ));
        }
        out
    }
}
