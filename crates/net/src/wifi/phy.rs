//! WiFi PHY of the lean 802.11n (HT) / 802.11ax (HE) model (ns-3 HtPhy, HePhy, OfdmPhy and the wifi
//! module's defaults): MCS modulation and coding, data rates per width, guard interval and spatial
//! streams, PPDU durations with their preambles, the legacy-rate ACK and BlockAck that answer a
//! data frame, interframe spaces, and the noise and SNR of a fixed received power.
//!
//! Choices (where ns-3 is version dependent):
//! - HT MCS are given per stream (0–7) with `spatial_streams` beside them, as ns-3's HtMcs8–31
//!   are MCS 0–7 with more streams; HE MCS are 0–11.
//! - The data field uses 16 service bits and 6 tail bits per encoder, one encoder below 320 Mb/s
//!   and one per 320 Mb/s above (ns-3 HtPhy/HePhy's N_es rule extended); the HT short-GI symbol is
//!   3.6 µs and the PPDU is not rounded to the 4 µs grid of the legacy part.
//! - HT-LTFs: 1, 2, 4, 4 for 1–4 streams; HE-LTFs: 1, 2, 4, 4, 6, 6, 8, 8 for 1–8 streams,
//!   8 µs each (ns-3 HtPhy/HePhy: the 2x LTF with the 3.2 µs GI of the HE SU default).
//! - Signal extension (6 µs) after every OFDM PPDU at 2.4 GHz, also after ACK and BlockAck.
//! - The slot is the short slot, 9 µs, in both bands (ns-3 enables the ERP short slot at
//!   2.4 GHz after the first beacon, ns-3 wifi defaults).

use std::fmt;
use tcplab_core::SimDuration;

/// 802.11n (HT, "WiFi 4") or 802.11ax (HE, "WiFi 6").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    Ht,
    He,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    Ghz2_4,
    Ghz5,
}

/// What is wrong with a PHY configuration or an MCS, for a one-line scenario error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PhyError {
    Width { width_mhz: u32, allowed: &'static [u32] },
    GuardInterval { gi_ns: u32, allowed: &'static [u32] },
    SpatialStreams { streams: u32, max: u32 },
    Mcs { mcs: u32, max: u32 },
}

impl fmt::Display for PhyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhyError::Width { width_mhz, allowed } => {
                write!(f, "{width_mhz} MHz is not allowed for this standard and band; allowed: {allowed:?} MHz")
            }
            PhyError::GuardInterval { gi_ns, allowed } => {
                write!(f, "{gi_ns} ns is not a guard interval of this standard; allowed: {allowed:?} ns")
            }
            PhyError::SpatialStreams { streams, max } => write!(f, "{streams} spatial streams; allowed 1..={max}"),
            PhyError::Mcs { mcs, max } => write!(f, "MCS {mcs} is not valid for this standard; allowed 0..={max}"),
        }
    }
}

impl std::error::Error for PhyError {}

/// Modulation order (bits per subcarrier) and code rate (numerator, denominator) of MCS
/// 0–11 (ns-3 HtPhy/HePhy).
const MCS_TABLE: [(u32, u32, u32); 12] =
    [(1, 1, 2), (2, 1, 2), (2, 3, 4), (4, 1, 2), (4, 3, 4), (6, 2, 3), (6, 3, 4), (6, 5, 6), (8, 3, 4), (8, 5, 6), (10, 3, 4), (10, 5, 6)];

/// A modulation and coding scheme: modulation bits per subcarrier and code rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mcs {
    pub index: u32,
}

impl Mcs {
    pub fn bits_per_subcarrier(self) -> u32 {
        MCS_TABLE[self.index as usize].0
    }
    /// Code rate as (numerator, denominator).
    pub fn code_rate(self) -> (u32, u32) {
        let (_, n, d) = MCS_TABLE[self.index as usize];
        (n, d)
    }
}

/// The PHY of one BSS: every station and the AP use the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhyConfig {
    pub standard: Standard,
    pub band: Band,
    pub width_mhz: u32,
    pub guard_interval_ns: u32,
    pub spatial_streams: u32,
}

/// Legacy OFDM (non-HT) preamble and SIGNAL field, and its symbol (ns-3 HtPhy/HePhy).
const LEGACY_PREAMBLE: SimDuration = SimDuration::from_micros(20);
const LEGACY_SYMBOL: SimDuration = SimDuration::from_micros(4);
const SERVICE_BITS: u64 = 16;
const TAIL_BITS_PER_ENCODER: u64 = 6;
/// Data rate per BCC encoder (ns-3 HtPhy/HePhy: N_es = 1 below 320 Mb/s).
const BITS_PER_SECOND_PER_ENCODER: f64 = 320e6;
/// Signal extension after OFDM PPDUs in the 2.4 GHz band (ns-3 wifi defaults).
const SIGNAL_EXTENSION_2_4_GHZ: SimDuration = SimDuration::from_micros(6);
/// Longest HT-mixed / HE PPDU (ns-3 HtPhy/HePhy: 5484 µs, aPPDUMaxTime).
pub const MAX_PPDU_DURATION: SimDuration = SimDuration::from_micros(5484);
/// Short slot (ns-3 wifi defaults).
const SLOT: SimDuration = SimDuration::from_micros(9);
/// AIFSN of AC_BE (ns-3 ChannelAccessManager/Txop).
const AIFSN_BEST_EFFORT: u64 = 3;
/// ACK (14 B) and compressed BlockAck frames (32 B with a 64-bit bitmap, 56 B with 256 bits).
pub const ACK_BYTES: u32 = 14;
const BLOCK_ACK_64_BYTES: u32 = 32;
const BLOCK_ACK_256_BYTES: u32 = 56;

impl PhyConfig {
    /// Checks the width for the standard and band, the guard interval and the streams.
    pub fn new(standard: Standard, band: Band, width_mhz: u32, guard_interval_ns: u32, spatial_streams: u32) -> Result<Self, PhyError> {
        let widths: &'static [u32] = match (standard, band) {
            (_, Band::Ghz2_4) => &[20, 40],
            (Standard::Ht, Band::Ghz5) => &[20, 40],
            (Standard::He, Band::Ghz5) => &[20, 40, 80, 160],
        };
        if !widths.contains(&width_mhz) {
            return Err(PhyError::Width { width_mhz, allowed: widths });
        }
        let gis: &'static [u32] = match standard {
            Standard::Ht => &[400, 800],
            Standard::He => &[800, 1600, 3200],
        };
        if !gis.contains(&guard_interval_ns) {
            return Err(PhyError::GuardInterval { gi_ns: guard_interval_ns, allowed: gis });
        }
        let max_streams = match standard {
            Standard::Ht => 4,
            Standard::He => 8,
        };
        if !(1..=max_streams).contains(&spatial_streams) {
            return Err(PhyError::SpatialStreams { streams: spatial_streams, max: max_streams });
        }
        Ok(PhyConfig { standard, band, width_mhz, guard_interval_ns, spatial_streams })
    }

    /// ns-3's defaults per standard (ns-3 wifi defaults): 802.11n 2.4 GHz 20 MHz GI 800 ns;
    /// 802.11ax 5 GHz 80 MHz GI 3200 ns; one stream.
    pub fn default_for(standard: Standard) -> Self {
        match standard {
            Standard::Ht => PhyConfig { standard, band: Band::Ghz2_4, width_mhz: 20, guard_interval_ns: 800, spatial_streams: 1 },
            Standard::He => PhyConfig { standard, band: Band::Ghz5, width_mhz: 80, guard_interval_ns: 3200, spatial_streams: 1 },
        }
    }

    pub fn max_mcs(&self) -> u32 {
        match self.standard {
            Standard::Ht => 7,
            Standard::He => 11,
        }
    }

    pub fn mcs(&self, index: u32) -> Result<Mcs, PhyError> {
        if index > self.max_mcs() {
            return Err(PhyError::Mcs { mcs: index, max: self.max_mcs() });
        }
        Ok(Mcs { index })
    }

    /// Every MCS of the standard, lowest first.
    pub fn all_mcs(&self) -> impl Iterator<Item = Mcs> {
        (0..=self.max_mcs()).map(|index| Mcs { index })
    }

    /// Data subcarriers (ns-3 HtPhy/HePhy).
    fn data_subcarriers(&self) -> u32 {
        match (self.standard, self.width_mhz) {
            (Standard::Ht, 20) => 52,
            (Standard::Ht, _) => 108,
            (Standard::He, 20) => 234,
            (Standard::He, 40) => 468,
            (Standard::He, 80) => 980,
            (Standard::He, _) => 1960,
        }
    }

    /// OFDM symbol of the data field, guard interval included (ns-3 HtPhy/HePhy).
    pub fn symbol(&self) -> SimDuration {
        match self.standard {
            Standard::Ht => SimDuration::from_nanos(3200 + u64::from(self.guard_interval_ns)),
            Standard::He => SimDuration::from_nanos(12_800 + u64::from(self.guard_interval_ns)),
        }
    }

    /// Data bits per OFDM symbol (N_DBPS) at `mcs`, over all streams.
    fn data_bits_per_symbol(&self, mcs: Mcs) -> f64 {
        let (num, den) = mcs.code_rate();
        f64::from(self.spatial_streams * self.data_subcarriers() * mcs.bits_per_subcarrier()) * f64::from(num) / f64::from(den)
    }

    /// PHY data rate in bit/s (ns-3 HtPhy/HePhy: Nss · Nsd · log2 M · R / T_sym).
    pub fn data_rate_bps(&self, mcs: Mcs) -> f64 {
        self.data_bits_per_symbol(mcs) * 1e9 / self.symbol().as_nanos() as f64
    }

    /// Preamble and PHY headers before the data field (ns-3 HtPhy/HePhy).
    pub fn preamble(&self) -> SimDuration {
        let streams = self.spatial_streams as usize;
        match self.standard {
            // L-STF + L-LTF 16, L-SIG 4, HT-SIG 8, HT-STF 4, HT-LTF 4 each.
            Standard::Ht => SimDuration::from_micros(32 + 4 * [1, 2, 4, 4][streams - 1]),
            // L-STF + L-LTF 16, L-SIG + RL-SIG 8, HE-SIG-A 8, HE-STF 4, HE-LTF 8 each.
            Standard::He => SimDuration::from_micros(36 + 8 * [1, 2, 4, 4, 6, 6, 8, 8][streams - 1]),
        }
    }

    fn extension(&self) -> SimDuration {
        match self.band {
            Band::Ghz2_4 => SIGNAL_EXTENSION_2_4_GHZ,
            Band::Ghz5 => SimDuration::ZERO,
        }
    }

    /// Air time of a PPDU carrying `psdu_bytes` at `mcs` (ns-3 HtPhy/HePhy).
    pub fn ppdu_duration(&self, psdu_bytes: u32, mcs: Mcs) -> SimDuration {
        let encoders = (self.data_rate_bps(mcs) / BITS_PER_SECOND_PER_ENCODER).ceil().max(1.0) as u64;
        let bits = SERVICE_BITS + 8 * u64::from(psdu_bytes) + TAIL_BITS_PER_ENCODER * encoders;
        let symbols = (bits as f64 / self.data_bits_per_symbol(mcs)).ceil() as u64;
        self.preamble() + self.symbol().saturating_mul(symbols) + self.extension()
    }

    /// The legacy OFDM rate that answers a data frame at `mcs`: the highest basic rate of {6, 12,
    /// 24} Mb/s not above the data modulation's (ns-3
    /// WifiRemoteStationManager::GetControlAnswerMode).
    pub fn response_rate_bps(&self, mcs: Mcs) -> u64 {
        match mcs.bits_per_subcarrier() {
            1 => 6_000_000,
            2 => 12_000_000,
            _ => 24_000_000,
        }
    }

    /// Air time of a legacy OFDM frame of `bytes` at `rate_bps` (6, 12 or 24 Mb/s).
    pub fn legacy_duration(&self, bytes: u32, rate_bps: u64) -> SimDuration {
        let bits_per_symbol = rate_bps * 4 / 1_000_000; // 4 µs symbols
        let bits = SERVICE_BITS + 8 * u64::from(bytes) + TAIL_BITS_PER_ENCODER;
        LEGACY_PREAMBLE + LEGACY_SYMBOL.saturating_mul(bits.div_ceil(bits_per_symbol)) + self.extension()
    }

    /// The normal ACK answering a single MPDU at `mcs`.
    pub fn ack_duration(&self, mcs: Mcs) -> SimDuration {
        self.legacy_duration(ACK_BYTES, self.response_rate_bps(mcs))
    }

    /// The compressed BlockAck answering an A-MPDU at `mcs`: a 64-bit bitmap for HT, 256 for
    /// HE (ns-3 wifi defaults, ns-3 ChannelAccessManager/Txop).
    pub fn block_ack_duration(&self, mcs: Mcs) -> SimDuration {
        let bytes = match self.standard {
            Standard::Ht => BLOCK_ACK_64_BYTES,
            Standard::He => BLOCK_ACK_256_BYTES,
        };
        self.legacy_duration(bytes, self.response_rate_bps(mcs))
    }

    /// The BlockAck window (ns-3 wifi defaults: 64 for HT, 256 for HE).
    pub fn block_ack_window(&self) -> u32 {
        match self.standard {
            Standard::Ht => 64,
            Standard::He => 256,
        }
    }

    pub fn sifs(&self) -> SimDuration {
        match self.band {
            Band::Ghz2_4 => SimDuration::from_micros(10),
            Band::Ghz5 => SimDuration::from_micros(16),
        }
    }

    pub fn slot(&self) -> SimDuration {
        SLOT
    }

    /// AIFS of AC_BE: SIFS + 3 slots (ns-3 ChannelAccessManager/Txop).
    pub fn aifs(&self) -> SimDuration {
        self.sifs() + SLOT.saturating_mul(AIFSN_BEST_EFFORT)
    }

    /// How long a sender waits for a missing (Block)Ack before it counts a failure: SIFS, a
    /// slot and a legacy preamble (ns-3 ChannelAccessManager/Txop).
    pub fn response_timeout(&self) -> SimDuration {
        self.sifs() + SLOT + LEGACY_PREAMBLE
    }
}

/// Boltzmann constant × 290 K in dBm/Hz, as ns-3 computes the thermal noise.
const THERMAL_NOISE_DBM_PER_HZ: f64 = -173.977_3;

/// Receiver noise over `width_mhz` with noise figure `nf_db` (docs/validation.md W1).
pub fn noise_dbm(width_mhz: u32, nf_db: f64) -> f64 {
    THERMAL_NOISE_DBM_PER_HZ + 10.0 * (f64::from(width_mhz) * 1e6).log10() + nf_db
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phy(standard: Standard, band: Band, width: u32, gi: u32) -> PhyConfig {
        PhyConfig::new(standard, band, width, gi, 1).unwrap()
    }

    fn mbps(p: &PhyConfig, mcs: u32) -> f64 {
        (p.data_rate_bps(p.mcs(mcs).unwrap()) / 1e5).round() / 10.0
    }

    #[test]
    fn w1_noise_and_snr_at_minus_80_dbm() {
        for (width, snr) in [(20, 13.97), (40, 10.96), (80, 7.95), (160, 4.94)] {
            let got = -80.0 - noise_dbm(width, 7.0);
            assert!((got - snr).abs() < 0.005, "{width} MHz: {got}");
        }
    }

    #[test]
    fn w2_phy_rates_match_the_b2_tables() {
        let ht20 = phy(Standard::Ht, Band::Ghz5, 20, 800);
        let ht: Vec<f64> = (0..8).map(|m| mbps(&ht20, m)).collect();
        assert_eq!(ht, [6.5, 13.0, 19.5, 26.0, 39.0, 52.0, 58.5, 65.0]);
        assert_eq!(mbps(&phy(Standard::Ht, Band::Ghz5, 20, 400), 7), 72.2);
        assert_eq!(mbps(&phy(Standard::Ht, Band::Ghz5, 40, 800), 7), 135.0);
        assert_eq!(mbps(&phy(Standard::Ht, Band::Ghz5, 40, 400), 7), 150.0);
        let he80 = [800, 1600, 3200].map(|gi| phy(Standard::He, Band::Ghz5, 80, gi));
        assert_eq!(he80.map(|p| mbps(&p, 11)), [600.5, 567.1, 510.4]);
        assert_eq!(he80.map(|p| mbps(&p, 2)), [108.1, 102.1, 91.9]);
        assert_eq!(mbps(&phy(Standard::He, Band::Ghz5, 20, 3200), 0), 7.3);
        assert_eq!(mbps(&phy(Standard::He, Band::Ghz5, 40, 800), 9), 229.4);
        assert_eq!(mbps(&PhyConfig::new(Standard::Ht, Band::Ghz5, 20, 800, 2).unwrap(), 7), 130.0);
    }

    #[test]
    fn ppdu_and_response_durations_worked_by_hand() {
        let p = phy(Standard::Ht, Band::Ghz5, 20, 800);
        let mcs7 = p.mcs(7).unwrap();
        // docs/validation.md W4–W11: one 1538-B MPDU (1472-B UDP) at HtMcs7: 36 µs + ⌈(16 + 12304 + 6)/260⌉ = 48 symbols.
        assert_eq!(p.ppdu_duration(1538, mcs7), SimDuration::from_micros(36 + 48 * 4));
        // docs/validation.md W4–W11: 28 MPDUs of 1544 B (the last unpadded: 1540) = 43,228 B → 5360 µs.
        assert_eq!(p.ppdu_duration(27 * 1544 + 1540, mcs7), SimDuration::from_micros(5360));
        assert_eq!(p.ack_duration(mcs7), SimDuration::from_micros(28));
        assert_eq!(p.block_ack_duration(mcs7), SimDuration::from_micros(32));
        let he = PhyConfig::default_for(Standard::He);
        assert_eq!(he.block_ack_duration(he.mcs(2).unwrap()), SimDuration::from_micros(60)); // 56 B at 12 Mb/s: 10 symbols
        assert_eq!(he.preamble(), SimDuration::from_micros(44));
        assert_eq!(p.aifs(), SimDuration::from_micros(43));
        let ht24 = PhyConfig::default_for(Standard::Ht);
        assert_eq!(ht24.aifs(), SimDuration::from_micros(37));
        assert_eq!(ht24.ack_duration(mcs7), SimDuration::from_micros(34)); // + 6 µs extension
    }

    #[test]
    fn bad_configurations_name_what_is_allowed() {
        let e = PhyConfig::new(Standard::He, Band::Ghz2_4, 80, 800, 1).unwrap_err();
        assert_eq!(e.to_string(), "80 MHz is not allowed for this standard and band; allowed: [20, 40] MHz");
        assert!(PhyConfig::new(Standard::Ht, Band::Ghz5, 80, 800, 1).is_err());
        assert!(PhyConfig::new(Standard::He, Band::Ghz5, 80, 400, 1).unwrap_err().to_string().contains("[800, 1600, 3200]"));
        assert!(PhyConfig::new(Standard::Ht, Band::Ghz5, 20, 800, 5).is_err());
        assert_eq!(
            phy(Standard::Ht, Band::Ghz5, 20, 800).mcs(8).unwrap_err().to_string(),
            "MCS 8 is not valid for this standard; allowed 0..=7"
        );
        assert!(phy(Standard::He, Band::Ghz5, 20, 800).mcs(11).is_ok());
    }
}
