//! mmWave PHY of the lean ns3-mmwave V2.0 model: frame structure and timing (MmWavePhyMacCommon),
//! AMC from effective SINR to CQI, MCS and transport-block size (MmWaveAmc), the lean error model
//! and HARQ (MmWaveHarqPhy), and the downlink CQI timer that stalls DL on CQI 0 (FlexTTI step 3,
//! validation target docs/validation.md M13). The one-UE FlexTTI scheduler
//! (MmWaveFlexTtiMacScheduler) and RLC (LteRlcAm) are built on this API elsewhere.
//!
//! Profiles: MMW-V2 and MMW-V2-3GPP share this PHY (docs/models.md, profiles); carrier frequency
//! and bandwidth are parameters of [`FrameConfig::mmw_v2`]. MMW-NR21 (cross-check only) is not
//! modelled.
//!
//! Simplifications and choices (* marks a point ns3-mmwave leaves open or an approximation):
//! - Every SINR here is the *effective* SINR in dB: the channel (MmWaveBeamforming) already subtracted its
//!   MCS-dependent frequency-selectivity penalty. AMC and BLER use it as is.
//! - BLER is the MmWaveHarqPhy lean logistic per MCS, centred 0.2 dB below the MmWaveAmc 10 %-TBLER threshold
//!   with scale 0.09 dB, instead of the MI maps and code-block segmentation. The thresholds
//!   are those of a full 22-symbol TB for every TB size; small single-code-block TBs, which
//!   ns-3 decodes 0.2–0.35 dB lower (MmWaveAmc), are treated as large ones (slightly pessimistic).
//! - HARQ combines by Chase combining (linear SINR sum over the transmissions, a lean
//!   rule) instead of ns-3's MI-based incremental redundancy (1–3 dB pessimistic at high
//!   code rate). One uniform draw per transmission decides its fate.
//! - *HARQ round trip: ns3-mmwave's HARQ round trip is about 5 subframes (4–6): default 5, settable 1..=19.
//! - *HARQ timeout (MmWavePhyMacCommon, MmWaveFlexTtiMacScheduler: "feedback timer reaches 20 subframes"): feedback is never lost
//!   here, so the timer only frees a NACKed process that has not been retransmitted within
//!   20 subframes of the start of its last transmission.
//! - The fate of a transmission is drawn when it goes on air; the caller must not act on it
//!   before `ready_at` / `detected_at` / `at` (the instants the real feedback would exist).
//! - *Bandwidth other than 1 GHz: chunks = round(bandwidth / 13.889 MHz), each with 48
//!   subcarriers of which 12 carry reference signals (ns-3's 864 of 3456, kept per chunk).
//! - *CQI 0 threshold: M13 says −7.2 dB; the MmWaveAmc table gives −7.24 dB for MCS 0, used here.
//! - Frame numbering (10 subframes per 1 ms frame) is not modelled: only subframes matter.
//! - Below the MCS-0 threshold [`ue_best_mcs`] returns None; what UL does then is the
//!   scheduler's choice (MmWaveFlexTtiMacScheduler does not say).

use std::fmt;
use tcplab_core::{SimDuration, SimRng, SimTime};

/// Highest MCS index (MmWaveAmc tables have 29 entries).
pub const MAX_MCS: u8 = 28;
/// Highest CQI index (MmWaveAmc: CQI 0..15).
pub const MAX_CQI: u8 = 15;

/// CQI spectral efficiency, CQI 0..15 [MmWaveAmc, mmwave-amc.cc V2.0].
const CQI_SPECTRAL_EFFICIENCY: [f64; 16] = [0.0, 0.15, 0.23, 0.38, 0.60, 0.88, 1.18, 1.48, 1.91, 2.41, 2.73, 3.32, 3.90, 4.52, 5.12, 5.55];

/// MCS spectral efficiency, MCS 0..28 [MmWaveAmc, mmwave-amc.cc V2.0].
const MCS_SPECTRAL_EFFICIENCY: [f64; 29] = [
    0.15, 0.19, 0.23, 0.31, 0.38, 0.49, 0.60, 0.74, 0.88, 1.03, 1.18, 1.33, 1.48, 1.70, 1.91, 2.16, 2.41, 2.57, 2.73, 3.03, 3.32, 3.61,
    3.90, 4.21, 4.52, 4.82, 5.12, 5.33, 5.55,
];

/// Effective code rate per MCS [MmWaveAmc, mmwave-mi-error-model.h V2.0].
const MCS_ECR: [f64; 29] = [
    0.08, 0.10, 0.11, 0.15, 0.19, 0.24, 0.30, 0.37, 0.44, 0.51, // QPSK
    0.30, 0.33, 0.37, 0.42, 0.48, 0.54, 0.60, // 16-QAM
    0.43, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.89, 0.92, // 64-QAM
];

/// Effective SINR (dB) at which a full 22-symbol TB has 10 % TBLER, per MCS [MmWaveAmc table for
/// the even MCS, MmWaveAmc list for the odd MCS; derived from the MI error model].
const MCS_SINR_10PCT_DB: [f64; 29] = [
    -7.24, -6.25, -5.83, -4.47, -3.36, -2.33, -1.37, -0.34, 0.72, 1.62, 3.88, 3.91, 4.70, 5.70, 6.56, 7.52, 8.51, 10.14, 10.48, 11.43,
    12.37, 13.44, 14.40, 15.32, 16.24, 17.17, 18.11, 19.18, 20.08,
];

/// MmWaveHarqPhy lean BLER: the logistic's 50 % point lies this far below the 10 % threshold.
const BLER_CENTRE_BELOW_10PCT_DB: f64 = 0.2;
/// MmWaveHarqPhy lean BLER: logistic scale (50 % → 10 % → 1 % within about 0.2 + 0.2 dB).
const BLER_SCALE_DB: f64 = 0.09;

/// TB CRC and per-code-block CRC length, and the largest code block (TS 36.212, MmWaveAmc).
const CRC_BITS: i64 = 24;
const MAX_CODE_BLOCK_BITS: i64 = 6144;

/// MMW-V2 numerology [MmWavePhyMacCommon, mmwave-phy-mac-common.cc V2.0].
const CHUNK_WIDTH_HZ: f64 = 13.889e6;
const SUBCARRIERS_PER_CHUNK: u32 = 48;
/// 864 reference subcarriers of 3456 per symbol, i.e. 12 per 48-subcarrier chunk.
const REFERENCE_SUBCARRIERS_PER_CHUNK: u32 = 12;
const SYMBOLS_PER_SUBFRAME: u32 = 24;
/// One DL control symbol at the start and one UL control symbol at the end (MmWavePhyMacCommon).
const DL_CONTROL_SYMBOLS: u32 = 1;
const UL_CONTROL_SYMBOLS: u32 = 1;
const SYMBOL_PERIOD: SimDuration = SimDuration::from_nanos(4_160);
const SUBFRAME: SimDuration = SimDuration::from_micros(100);
/// L1/L2 control latency: the MAC schedules subframe n+2 while n is on air (MmWavePhyMacCommon).
const SCHEDULING_LEAD_SUBFRAMES: u64 = 2;
/// UL grant to UL transmission (MmWavePhyMacCommon).
const UL_SCHEDULING_DELAY_SUBFRAMES: u64 = 1;
const TB_DECODE_LATENCY: SimDuration = SimDuration::from_micros(100);
/// HARQ processes per UE and direction (MmWavePhyMacCommon).
pub const HARQ_PROCESSES: usize = 20;
/// A process is freed after this many subframes without progress (MmWavePhyMacCommon,
/// MmWaveFlexTtiMacScheduler).
const HARQ_TIMEOUT_SUBFRAMES: u64 = 20;
/// First transmission to retransmission, in subframes (MmWaveHarqPhy: "about 5, use 4–6").
const HARQ_RTT_SUBFRAMES_DEFAULT: u32 = 5;
/// Up to 3 retransmissions, 4 transmissions in total (FlexTTI step 2, MmWaveHarqPhy).
pub const HARQ_MAX_TRANSMISSIONS: u8 = 4;
/// ns-3 default CqiTimerThreshold in subframes (MmWaveFlexTtiMacScheduler; the study-(a) script uses 1000).
pub const CQI_TIMER_THRESHOLD_DEFAULT: u32 = 100;

/// A bad PHY parameter, reported by the scenario layer with its key path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PhyError {
    McsOutOfRange {
        index: u32,
    },
    CqiOutOfRange {
        index: u32,
    },
    /// Carrier frequency not a positive finite number of Hz.
    InvalidCarrier {
        hz: f64,
    },
    /// Bandwidth not finite or narrower than one 13.889 MHz chunk.
    InvalidBandwidth {
        hz: f64,
    },
    /// HARQ round trip outside 1..=19 subframes (it must end before the HARQ timeout).
    InvalidHarqRtt {
        subframes: u32,
    },
}

impl fmt::Display for PhyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PhyError::McsOutOfRange { index } => write!(f, "MCS index {index} out of range: allowed 0..={MAX_MCS}"),
            PhyError::CqiOutOfRange { index } => write!(f, "CQI index {index} out of range: allowed 0..={MAX_CQI}"),
            PhyError::InvalidCarrier { hz } => write!(f, "carrier frequency {hz} Hz: must be a positive number"),
            PhyError::InvalidBandwidth { hz } => {
                write!(f, "bandwidth {hz} Hz: must be at least one chunk ({CHUNK_WIDTH_HZ} Hz)")
            }
            PhyError::InvalidHarqRtt { subframes } => {
                write!(f, "HARQ round trip {subframes} subframes: allowed 1..={}", HARQ_TIMEOUT_SUBFRAMES - 1)
            }
        }
    }
}

impl std::error::Error for PhyError {}

/// A modulation and coding scheme index, 0..=28 (MmWaveAmc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mcs(u8);

impl Mcs {
    pub const MIN: Mcs = Mcs(0);
    pub const MAX: Mcs = Mcs(MAX_MCS);

    /// Checks a table index from user input.
    pub fn new(index: u32) -> Result<Mcs, PhyError> {
        u8::try_from(index).ok().filter(|&i| i <= MAX_MCS).map(Mcs).ok_or(PhyError::McsOutOfRange { index })
    }
    pub fn index(self) -> u8 {
        self.0
    }
    /// Bits per modulation symbol Qm: MCS 0–9 QPSK, 10–16 16-QAM, 17–28 64-QAM (MmWaveAmc).
    pub fn modulation_order(self) -> u32 {
        match self.0 {
            0..=9 => 2,
            10..=16 => 4,
            _ => 6,
        }
    }
    pub fn effective_code_rate(self) -> f64 {
        MCS_ECR[self.0 as usize]
    }
    /// The AMC table's spectral efficiency (compared with CQI efficiencies, MmWaveAmc).
    pub fn spectral_efficiency(self) -> f64 {
        MCS_SPECTRAL_EFFICIENCY[self.0 as usize]
    }
    /// Effective SINR of 10 % TBLER for a full 22-symbol TB (MmWaveAmc).
    pub fn sinr_threshold_db(self) -> f64 {
        MCS_SINR_10PCT_DB[self.0 as usize]
    }
}

/// A channel quality indicator, 0..=15; 0 means "do not schedule DL" (MmWaveFlexTtiMacScheduler, MmWaveAmc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cqi(u8);

impl Cqi {
    /// Out of range: the UE is not scheduled in DL.
    pub const OUT_OF_RANGE: Cqi = Cqi(0);
    /// Assumed when no CQI was received or it expired (FlexTTI step 3).
    pub const FALLBACK: Cqi = Cqi(1);

    pub fn new(index: u32) -> Result<Cqi, PhyError> {
        u8::try_from(index).ok().filter(|&i| i <= MAX_CQI).map(Cqi).ok_or(PhyError::CqiOutOfRange { index })
    }
    pub fn index(self) -> u8 {
        self.0
    }
    pub fn spectral_efficiency(self) -> f64 {
        CQI_SPECTRAL_EFFICIENCY[self.0 as usize]
    }
}

/// AMC step 1 (MmWaveAmc): the highest MCS whose TB error at `sinr_eff_db` is at most 10 %, or None
/// below the MCS-0 threshold (−7.24 dB). The UL MCS is this value (FlexTTI step 4).
pub fn ue_best_mcs(sinr_eff_db: f64) -> Option<Mcs> {
    (0..=MAX_MCS).rev().map(Mcs).find(|m| sinr_eff_db >= m.sinr_threshold_db())
}

/// AMC step 2 (MmWaveAmc): the highest CQI whose spectral efficiency does not exceed the MCS's.
pub fn cqi_from_mcs(mcs: Mcs) -> Cqi {
    // CQI 1 has the efficiency of MCS 0, so the search always succeeds at CQI ≥ 1.
    (1..=MAX_CQI).rev().map(Cqi).find(|c| c.spectral_efficiency() <= mcs.spectral_efficiency()).unwrap_or(Cqi::FALLBACK)
}

/// The wideband CQI the UE reports at effective SINR `sinr_eff_db` (MmWaveAmc steps 1–2); CQI 0
/// below the MCS-0 threshold.
pub fn cqi_from_sinr(sinr_eff_db: f64) -> Cqi {
    ue_best_mcs(sinr_eff_db).map_or(Cqi::OUT_OF_RANGE, cqi_from_mcs)
}

/// AMC step 3 (MmWaveAmc): the DL MCS for a reported CQI, the highest whose spectral efficiency does
/// not exceed the CQI's. None for CQI 0 (efficiency 0, below every MCS): the UE is not
/// scheduled in DL (FlexTTI step 3).
pub fn mcs_from_cqi(cqi: Cqi) -> Option<Mcs> {
    (0..=MAX_MCS).rev().map(Mcs).find(|m| m.spectral_efficiency() <= cqi.spectral_efficiency())
}

/// MmWaveHarqPhy lean error model: probability that one transmission of a TB with `mcs` fails at
/// effective SINR `sinr_eff_db` (logistic, 10 % at the MmWaveAmc threshold).
pub fn tb_bler(mcs: Mcs, sinr_eff_db: f64) -> f64 {
    let centre_db = mcs.sinr_threshold_db() - BLER_CENTRE_BELOW_10PCT_DB;
    1.0 / (1.0 + ((sinr_eff_db - centre_db) / BLER_SCALE_DB).exp())
}

/// Frame structure and timing of MMW-V2 / MMW-V2-3GPP (MmWavePhyMacCommon).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameConfig {
    carrier_hz: f64,
    bandwidth_hz: f64,
    chunks: u32,
    harq_rtt_subframes: u32,
}

impl FrameConfig {
    /// The V2.0 numerology on a carrier of `carrier_hz` with `bandwidth_hz` of spectrum
    /// (28e9 and 1e9 in both reference profiles).
    pub fn mmw_v2(carrier_hz: f64, bandwidth_hz: f64) -> Result<FrameConfig, PhyError> {
        if !(carrier_hz.is_finite() && carrier_hz > 0.0) {
            return Err(PhyError::InvalidCarrier { hz: carrier_hz });
        }
        let chunks = (bandwidth_hz / CHUNK_WIDTH_HZ).round();
        if !(bandwidth_hz.is_finite() && bandwidth_hz >= CHUNK_WIDTH_HZ && chunks <= u32::MAX as f64) {
            return Err(PhyError::InvalidBandwidth { hz: bandwidth_hz });
        }
        Ok(FrameConfig { carrier_hz, bandwidth_hz, chunks: chunks as u32, harq_rtt_subframes: HARQ_RTT_SUBFRAMES_DEFAULT })
    }

    /// The same frame with a HARQ round trip of `subframes` (MmWaveHarqPhy: 4–6).
    pub fn with_harq_rtt_subframes(self, subframes: u32) -> Result<FrameConfig, PhyError> {
        if subframes == 0 || u64::from(subframes) >= HARQ_TIMEOUT_SUBFRAMES {
            return Err(PhyError::InvalidHarqRtt { subframes });
        }
        Ok(FrameConfig { harq_rtt_subframes: subframes, ..self })
    }

    pub fn carrier_hz(&self) -> f64 {
        self.carrier_hz
    }
    /// The bandwidth noise is integrated over (ns-3 MmWaveSpectrumValueHelper).
    pub fn bandwidth_hz(&self) -> f64 {
        self.bandwidth_hz
    }
    /// Frequency chunks (72 at 1 GHz); the channel's per-chunk SINR uses this count.
    pub fn chunks(&self) -> u32 {
        self.chunks
    }
    pub fn subcarriers(&self) -> u32 {
        self.chunks * SUBCARRIERS_PER_CHUNK
    }
    /// Data resource elements per OFDM symbol (2592 at 1 GHz).
    pub fn data_re_per_symbol(&self) -> u32 {
        self.chunks * (SUBCARRIERS_PER_CHUNK - REFERENCE_SUBCARRIERS_PER_CHUNK)
    }
    /// Symbols per subframe shared between DL and UL data (22).
    pub fn data_symbols_per_subframe(&self) -> u32 {
        SYMBOLS_PER_SUBFRAME - DL_CONTROL_SYMBOLS - UL_CONTROL_SYMBOLS
    }
    /// The TTI: one 100 µs subframe.
    pub fn tti(&self) -> SimDuration {
        SUBFRAME
    }
    pub fn symbol_period(&self) -> SimDuration {
        SYMBOL_PERIOD
    }
    /// How far ahead the MAC schedules: 2 subframes.
    pub fn scheduling_lead(&self) -> SimDuration {
        SUBFRAME.saturating_mul(SCHEDULING_LEAD_SUBFRAMES)
    }
    /// UL grant to UL transmission: 1 subframe.
    pub fn ul_scheduling_delay(&self) -> SimDuration {
        SUBFRAME.saturating_mul(UL_SCHEDULING_DELAY_SUBFRAMES)
    }
    /// End of the last symbol of the TB to its delivery to MAC/RLC: 100 µs.
    pub fn tb_decode_latency(&self) -> SimDuration {
        TB_DECODE_LATENCY
    }
    /// Start of a transmission's subframe to the earliest subframe its retransmission may use.
    pub fn harq_rtt(&self) -> SimDuration {
        SUBFRAME.saturating_mul(u64::from(self.harq_rtt_subframes))
    }
    pub fn harq_timeout(&self) -> SimDuration {
        SUBFRAME.saturating_mul(HARQ_TIMEOUT_SUBFRAMES)
    }
    /// Offset from the subframe start to the end of `n` data symbols starting at data
    /// symbol `first` (0-based among the data symbols; the DL control symbol comes first).
    pub fn data_end_offset(&self, first: u32, n: u32) -> SimDuration {
        SYMBOL_PERIOD.saturating_mul(u64::from(DL_CONTROL_SYMBOLS + first + n))
    }

    /// Transport-block size in bits of `symbols` data symbols at `mcs` (MmWaveAmc):
    /// B = ⌊RE·n·Qm·ECR − 24⌋, then 24 bits less per code block when B > 6144.
    /// The floating-point order follows mmwave-amc.cc so sizes match ns-3 bit for bit.
    pub fn tb_bits(&self, mcs: Mcs, symbols: u32) -> u32 {
        let coded = f64::from(self.data_re_per_symbol() * symbols) * f64::from(mcs.modulation_order());
        let mut bits = (coded * mcs.effective_code_rate() - CRC_BITS as f64) as i64;
        if bits > MAX_CODE_BLOCK_BITS {
            let code_blocks = (bits + MAX_CODE_BLOCK_BITS - 1) / MAX_CODE_BLOCK_BITS;
            bits -= code_blocks * CRC_BITS;
        }
        bits.clamp(0, i64::from(u32::MAX)) as u32
    }

    /// The fewest data symbols whose TB at `mcs` holds `bits` (FlexTTI step 5), capped at the
    /// data symbols of one subframe.
    pub fn symbols_for_bits(&self, mcs: Mcs, bits: u32) -> u32 {
        let max = self.data_symbols_per_subframe();
        (1..=max).find(|&n| self.tb_bits(mcs, n) >= bits).unwrap_or(max)
    }

    /// PHY bit rate of `symbols` data symbols per subframe at `mcs`, in bit/s.
    pub fn phy_rate_bps(&self, mcs: Mcs, symbols: u32) -> f64 {
        f64::from(self.tb_bits(mcs, symbols)) / SUBFRAME.as_secs_f64()
    }
}

/// Index of one HARQ process in a [`HarqEntity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HarqId(u8);

impl HarqId {
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// What became of one transmission of a TB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarqOutcome {
    /// Decoded after `transmissions` tries; the payload reaches the receiver's RLC at `at`.
    Delivered { at: SimTime, transmissions: u8 },
    /// NACK: the same TB (same MCS and symbols) may go on air again from `ready_at`.
    Retransmit { ready_at: SimTime },
    /// Fourth NACK: the TB is lost to HARQ at `detected_at`; RLC ARQ must heal it (LteRlcAm).
    Failed { detected_at: SimTime },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ProcessState {
    Idle,
    /// A transmission of the TB is scheduled and not yet on air.
    Scheduled {
        tb: HarqTb,
        transmissions: u8,
        combined_sinr_lin: f64,
    },
    /// NACKed, waiting for a retransmission from `ready_at`; freed at `timeout_at`.
    AwaitingRetx {
        tb: HarqTb,
        transmissions: u8,
        combined_sinr_lin: f64,
        ready_at: SimTime,
        timeout_at: SimTime,
    },
}

/// The MCS and data-symbol count of the TB a process carries; retransmissions reuse them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HarqTb {
    pub mcs: Mcs,
    pub symbols: u32,
}

/// The stop-and-wait HARQ processes of one UE in one direction (MmWavePhyMacCommon, FlexTTI step 2, MmWaveHarqPhy).
///
/// Life of a process: [`start`](Self::start) (new TB scheduled) → [`transmit`](Self::transmit)
/// when it is on air → delivered, failed, or awaiting a retransmission, which the scheduler
/// finds with [`ready_retransmission`](Self::ready_retransmission) and books with
/// [`schedule_retransmission`](Self::schedule_retransmission). No allocation after `new`.
#[derive(Clone, Debug)]
pub struct HarqEntity {
    processes: [ProcessState; HARQ_PROCESSES],
    frame: FrameConfig,
}

impl HarqEntity {
    pub fn new(frame: FrameConfig) -> HarqEntity {
        HarqEntity { processes: [ProcessState::Idle; HARQ_PROCESSES], frame }
    }

    /// Claims the lowest idle process for a new TB, or None if all 20 are busy.
    pub fn start(&mut self, tb: HarqTb) -> Option<HarqId> {
        let i = self.processes.iter().position(|p| *p == ProcessState::Idle)?;
        self.processes[i] = ProcessState::Scheduled { tb, transmissions: 0, combined_sinr_lin: 0.0 };
        Some(HarqId(i as u8))
    }

    /// The TB a busy process carries.
    pub fn tb(&self, id: HarqId) -> Option<HarqTb> {
        match self.processes[id.index()] {
            ProcessState::Idle => None,
            ProcessState::Scheduled { tb, .. } | ProcessState::AwaitingRetx { tb, .. } => Some(tb),
        }
    }

    /// The NACKed process that has waited longest among those ready in the subframe starting
    /// at `subframe_start` whose TB fits in `max_symbols` (ties: lowest index).
    pub fn ready_retransmission(&self, subframe_start: SimTime, max_symbols: u32) -> Option<HarqId> {
        let mut best: Option<(SimTime, usize)> = None;
        for (i, p) in self.processes.iter().enumerate() {
            if let ProcessState::AwaitingRetx { tb, ready_at, .. } = *p {
                if ready_at <= subframe_start && tb.symbols <= max_symbols && best.is_none_or(|(t, _)| ready_at < t) {
                    best = Some((ready_at, i));
                }
            }
        }
        best.map(|(_, i)| HarqId(i as u8))
    }

    /// Books the retransmission of an awaiting process; false if it was not awaiting one.
    pub fn schedule_retransmission(&mut self, id: HarqId) -> bool {
        let p = &mut self.processes[id.index()];
        match *p {
            ProcessState::AwaitingRetx { tb, transmissions, combined_sinr_lin, .. } => {
                *p = ProcessState::Scheduled { tb, transmissions, combined_sinr_lin };
                true
            }
            _ => false,
        }
    }

    /// The scheduled TB of `id` goes on air in the subframe starting at `subframe_start`,
    /// from data symbol `first_symbol`, at effective SINR `sinr_eff_db`. Draws one uniform
    /// from `rng` and decides with the BLER of the Chase-combined SINR (MmWaveHarqPhy).
    /// Panics if `id` has no scheduled transmission (a scheduler bug).
    pub fn transmit(&mut self, id: HarqId, subframe_start: SimTime, first_symbol: u32, sinr_eff_db: f64, rng: &mut SimRng) -> HarqOutcome {
        debug_assert!(!sinr_eff_db.is_nan(), "NaN SINR");
        let p = &mut self.processes[id.index()];
        let ProcessState::Scheduled { tb, transmissions, combined_sinr_lin } = *p else {
            panic!("HARQ process {} has no scheduled transmission", id.index());
        };
        let transmissions = transmissions + 1;
        let combined_sinr_lin = combined_sinr_lin + 10f64.powf(sinr_eff_db / 10.0);
        let bler = tb_bler(tb.mcs, 10.0 * combined_sinr_lin.log10());
        let decided_at = subframe_start + self.frame.data_end_offset(first_symbol, tb.symbols) + self.frame.tb_decode_latency();
        if rng.next_f64() >= bler {
            *p = ProcessState::Idle;
            HarqOutcome::Delivered { at: decided_at, transmissions }
        } else if transmissions >= HARQ_MAX_TRANSMISSIONS {
            *p = ProcessState::Idle;
            HarqOutcome::Failed { detected_at: decided_at }
        } else {
            let ready_at = subframe_start + self.frame.harq_rtt();
            let timeout_at = subframe_start + self.frame.harq_timeout();
            *p = ProcessState::AwaitingRetx { tb, transmissions, combined_sinr_lin, ready_at, timeout_at };
            HarqOutcome::Retransmit { ready_at }
        }
    }

    /// Frees one process whose retransmission has waited until its timeout (20 subframes
    /// after its last transmission started) and returns it: its TB is lost like a failed
    /// one. Call until None.
    pub fn expire_stale(&mut self, now: SimTime) -> Option<HarqId> {
        let i = self.processes.iter().position(|p| matches!(*p, ProcessState::AwaitingRetx { timeout_at, .. } if timeout_at <= now))?;
        self.processes[i] = ProcessState::Idle;
        Some(HarqId(i as u8))
    }
}

/// The scheduler's view of the DL wideband CQI (FlexTTI step 3): the latest report, valid for
/// CqiTimerThreshold subframes. No report or an expired one means CQI 1; CQI 0 means no DL.
/// CQI is only refreshed by DL receptions, so CQI 0 stalls DL until the timer expires (M13).
#[derive(Clone, Copy, Debug)]
pub struct DlCqiTracker {
    latest: Option<(Cqi, SimTime)>,
    validity: SimDuration,
}

impl DlCqiTracker {
    /// `threshold_subframes`: CqiTimerThreshold (default [`CQI_TIMER_THRESHOLD_DEFAULT`]).
    pub fn new(threshold_subframes: u32, frame: &FrameConfig) -> DlCqiTracker {
        DlCqiTracker { latest: None, validity: frame.tti().saturating_mul(u64::from(threshold_subframes)) }
    }

    /// A CQI report reached the scheduler at `now`.
    pub fn report(&mut self, cqi: Cqi, now: SimTime) {
        self.latest = Some((cqi, now));
    }

    /// The CQI the scheduler uses at `now`.
    pub fn cqi(&self, now: SimTime) -> Cqi {
        match self.latest {
            Some((cqi, at)) if now < at + self.validity => cqi,
            _ => Cqi::FALLBACK,
        }
    }

    /// The DL MCS for new data at `now`, or None while DL is stalled by CQI 0.
    pub fn dl_mcs(&self, now: SimTime) -> Option<Mcs> {
        mcs_from_cqi(self.cqi(now))
    }

    /// While stalled by CQI 0, the instant DL resumes (with CQI 1); None when not stalled.
    pub fn stalled_until(&self, now: SimTime) -> Option<SimTime> {
        match self.latest {
            Some((Cqi::OUT_OF_RANGE, at)) if now < at + self.validity => Some(at + self.validity),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{mcs, v2};
    use super::*;

    fn t_us(us: u64) -> SimTime {
        SimTime(us * 1_000)
    }

    #[test]
    fn out_of_range_indices_and_bad_frames_are_errors() {
        assert_eq!(Mcs::new(29), Err(PhyError::McsOutOfRange { index: 29 }));
        assert_eq!(Mcs::new(300), Err(PhyError::McsOutOfRange { index: 300 }));
        assert_eq!(Mcs::new(28).map(Mcs::index), Ok(28));
        assert_eq!(Cqi::new(16), Err(PhyError::CqiOutOfRange { index: 16 }));
        assert_eq!(Cqi::new(15).map(Cqi::index), Ok(15));
        assert!(matches!(FrameConfig::mmw_v2(0.0, 1e9), Err(PhyError::InvalidCarrier { .. })));
        assert!(matches!(FrameConfig::mmw_v2(f64::NAN, 1e9), Err(PhyError::InvalidCarrier { .. })));
        assert!(matches!(FrameConfig::mmw_v2(28e9, 10e6), Err(PhyError::InvalidBandwidth { .. })));
        assert!(matches!(FrameConfig::mmw_v2(28e9, f64::INFINITY), Err(PhyError::InvalidBandwidth { .. })));
        assert_eq!(v2().with_harq_rtt_subframes(0), Err(PhyError::InvalidHarqRtt { subframes: 0 }));
        assert_eq!(v2().with_harq_rtt_subframes(20), Err(PhyError::InvalidHarqRtt { subframes: 20 }));
        assert_eq!(Mcs::new(29).unwrap_err().to_string(), "MCS index 29 out of range: allowed 0..=28");
    }

    #[test]
    fn mmw_v2_frame_matches_a6() {
        let f = v2();
        assert_eq!(f.carrier_hz(), 28e9);
        assert_eq!(f.chunks(), 72);
        assert_eq!(f.subcarriers(), 3456);
        assert_eq!(f.data_re_per_symbol(), 2592);
        assert_eq!(f.data_symbols_per_subframe(), 22);
        assert_eq!(f.tti(), SimDuration::from_micros(100));
        assert_eq!(f.symbol_period(), SimDuration::from_nanos(4160));
        // 24 symbols ≈ 100 µs.
        assert!((f.symbol_period().as_nanos() * 24).abs_diff(f.tti().as_nanos()) < 200);
        assert_eq!(f.scheduling_lead(), SimDuration::from_micros(200));
        assert_eq!(f.ul_scheduling_delay(), SimDuration::from_micros(100));
        assert_eq!(f.tb_decode_latency(), SimDuration::from_micros(100));
        assert_eq!(f.harq_rtt(), SimDuration::from_micros(500));
        assert_eq!(f.harq_timeout(), SimDuration::from_millis(2));
        // Data symbol 0 is OFDM symbol 1; 22 data symbols end before the UL control symbol.
        assert_eq!(f.data_end_offset(0, 1), SimDuration::from_nanos(2 * 4160));
        assert_eq!(f.data_end_offset(0, 22), SimDuration::from_nanos(23 * 4160));
        assert_eq!(f.with_harq_rtt_subframes(4).unwrap().harq_rtt(), SimDuration::from_micros(400));
    }

    #[test]
    fn bandwidth_scales_chunks_and_resource_elements() {
        let f = FrameConfig::mmw_v2(28e9, 500e6).unwrap();
        assert_eq!(f.chunks(), 36);
        assert_eq!(f.data_re_per_symbol(), 1296);
        assert_eq!(f.bandwidth_hz(), 500e6);
        // Half the REs: MCS 0, 1 symbol: ⌊1296·2·0.08 − 24⌋ = 183.
        assert_eq!(f.tb_bits(mcs(0), 1), 183);
    }

    #[test]
    fn tb_sizes_worked_by_hand() {
        let f = v2();
        // MCS 28, 22 symbols: 2592·22·6·0.92 − 24 = 314748.48 → 314748; 52 code blocks → −1248.
        assert_eq!(f.tb_bits(mcs(28), 22), 313_500);
        // MCS 28, 21 symbols: 300440.64 → 300440; 49 code blocks → −1176.
        assert_eq!(f.tb_bits(mcs(28), 21), 299_264);
        // MCS 10, 22 symbols: 2592·22·4·0.30 − 24 = 68404.8 → 68404; 12 code blocks → −288.
        assert_eq!(f.tb_bits(mcs(10), 22), 68_116);
        // MCS 0, 1 symbol: 2592·2·0.08 − 24 = 390.72 → 390, one code block, no extra CRC.
        assert_eq!(f.tb_bits(mcs(0), 1), 390);
        // MCS 16, 2 symbols: 2592·2·4·0.60 − 24 = 12417.6 → 12417; 3 code blocks → −72.
        assert_eq!(f.tb_bits(mcs(16), 2), 12_345);
        // MCS 0, 6 symbols: 2488.32 − 24 → 2464 (≤ 6144: no split).
        assert_eq!(f.tb_bits(mcs(0), 6), 2464);
    }

    #[test]
    fn symbols_for_bits_is_the_smallest_tb_that_holds_them() {
        let f = v2();
        assert_eq!(f.symbols_for_bits(mcs(0), 1), 1);
        assert_eq!(f.symbols_for_bits(mcs(0), 390), 1);
        assert_eq!(f.symbols_for_bits(mcs(0), 391), 2);
        assert_eq!(f.symbols_for_bits(mcs(28), 299_264), 21);
        assert_eq!(f.symbols_for_bits(mcs(28), 299_265), 22);
        assert_eq!(f.symbols_for_bits(mcs(28), 10_000_000), 22);
    }

    /// M7: MCS 28 with 22 symbols is 3.135 Gb/s; with one symbol per subframe for UL, ≈ 2.99.
    #[test]
    fn m7_peak_dl_phy_rate() {
        let f = v2();
        let peak = f.phy_rate_bps(mcs(28), 22);
        assert!((peak / 3.135e9 - 1.0).abs() < 0.01, "{peak}");
        assert!((peak - 3.135e9).abs() < 1.0, "{peak}");
        let with_ul = f.phy_rate_bps(mcs(28), 21);
        assert!((with_ul / 2.99e9 - 1.0).abs() < 0.01, "{with_ul}");
    }

    /// MmWaveAmc table: (UE-best MCS, threshold dB, CQI, scheduled MCS, 22-symbol PHY rate Gb/s).
    const AMC_TABLE: [(u32, f64, u8, u8, f64); 15] = [
        (0, -7.24, 1, 0, 0.091),
        (2, -5.83, 2, 2, 0.124),
        (4, -3.36, 3, 4, 0.215),
        (6, -1.37, 4, 6, 0.340),
        (8, 0.72, 5, 8, 0.499),
        (10, 3.88, 6, 10, 0.681),
        (12, 4.70, 7, 12, 0.840),
        (14, 6.56, 8, 14, 1.090),
        (16, 8.51, 9, 16, 1.363),
        (18, 10.48, 10, 18, 1.533),
        (20, 12.37, 11, 20, 1.874),
        (22, 14.40, 12, 22, 2.215),
        (24, 16.24, 13, 24, 2.556),
        (26, 18.11, 14, 26, 2.896),
        (28, 20.08, 15, 28, 3.135),
    ];

    /// M6: AMC thresholds per the MmWaveAmc table, ±0.5 dB, and the table's CQI, scheduled MCS
    /// and PHY-rate columns.
    #[test]
    fn m6_amc_follows_the_a8_table() {
        let f = v2();
        for &(best, thr_db, cqi, sched, rate_gbps) in &AMC_TABLE {
            let m = mcs(best);
            // The UE's choice switches to this MCS within ±0.5 dB of the table threshold.
            assert!(ue_best_mcs(thr_db - 0.5).is_none_or(|b| b < m), "MCS {best} below threshold");
            assert!(ue_best_mcs(thr_db + 0.5).is_some_and(|b| b >= m), "MCS {best} above threshold");
            assert_eq!(ue_best_mcs(thr_db), Some(m));
            // Between this threshold and the next odd one the report and grant follow the table.
            assert_eq!(cqi_from_sinr(thr_db).index(), cqi, "CQI for MCS {best}");
            assert_eq!(mcs_from_cqi(cqi_from_sinr(thr_db)).map(Mcs::index), Some(sched));
            let rate = f.phy_rate_bps(Mcs(sched), 22) / 1e9;
            assert!((rate - rate_gbps).abs() <= 0.0006, "MCS {sched}: {rate} Gb/s");
            // The error model's 10 % point is the AMC threshold.
            let bler = tb_bler(m, thr_db);
            assert!((bler - 0.10).abs() < 0.005, "MCS {best}: BLER {bler} at threshold");
        }
    }

    #[test]
    fn odd_ue_mcs_is_scheduled_one_lower_and_only_even_mcs_are_scheduled() {
        // MCS 11 threshold 3.91 dB: UE-best 11 → CQI 6 → scheduled MCS 10.
        assert_eq!(ue_best_mcs(3.95), Some(mcs(11)));
        assert_eq!(cqi_from_sinr(3.95).index(), 6);
        for c in 1..=15 {
            assert_eq!(mcs_from_cqi(Cqi(c)).map(Mcs::index), Some(2 * (c - 1)));
        }
        for m in 0..=28 {
            assert_eq!(mcs_from_cqi(cqi_from_mcs(mcs(m))).map(Mcs::index), Some((m - m % 2) as u8));
        }
    }

    #[test]
    fn cqi_zero_below_the_mcs0_threshold() {
        assert_eq!(ue_best_mcs(-7.25), None);
        assert_eq!(cqi_from_sinr(-7.25), Cqi::OUT_OF_RANGE);
        assert_eq!(cqi_from_sinr(-7.24).index(), 1);
        assert_eq!(cqi_from_sinr(-40.0), Cqi::OUT_OF_RANGE);
        assert_eq!(mcs_from_cqi(Cqi::OUT_OF_RANGE), None);
        assert_eq!(cqi_from_sinr(60.0).index(), 15);
    }

    /// MmWaveHarqPhy reference points for MCS 28: 50 % / 10 % / 1 % at 19.88 / 20.07 / 20.29 dB.
    #[test]
    fn bler_reference_points() {
        let m = mcs(28);
        assert!((tb_bler(m, 19.88) - 0.50).abs() < 0.01);
        assert!((tb_bler(m, 20.07) - 0.10).abs() < 0.015);
        assert!((tb_bler(m, 20.29) - 0.01).abs() < 0.003);
        // Steep and saturating, never NaN.
        assert_eq!(tb_bler(m, 200.0), 0.0);
        assert_eq!(tb_bler(m, -200.0), 1.0);
        assert!(tb_bler(m, 19.5) > 0.98 && tb_bler(m, 20.7) < 1e-3);
        // MCS 0: 50 % at −7.44 dB.
        assert!((tb_bler(mcs(0), -7.44) - 0.5).abs() < 1e-9);
    }

    fn tb28() -> HarqTb {
        HarqTb { mcs: mcs(28), symbols: 22 }
    }

    /// M8: at most 3 retransmissions, the last NACK hands the loss up; RTT 5 subframes.
    #[test]
    fn m8_harq_gives_up_after_four_transmissions() {
        let f = v2();
        let mut h = HarqEntity::new(f);
        let mut rng = SimRng::stream(1, "harq");
        let id = h.start(tb28()).unwrap();
        let mut sf = t_us(1_000);
        for k in 1..=3u64 {
            let out = h.transmit(id, sf, 0, -10.0, &mut rng);
            assert_eq!(out, HarqOutcome::Retransmit { ready_at: sf + f.harq_rtt() }, "transmission {k}");
            assert_eq!(h.ready_retransmission(sf + (f.harq_rtt() - f.tti()), 22), None);
            sf += f.harq_rtt();
            assert_eq!(h.ready_retransmission(sf, 21), None, "a 22-symbol TB needs 22 symbols");
            assert_eq!(h.ready_retransmission(sf, 22), Some(id));
            assert_eq!(h.tb(id), Some(tb28()), "retransmissions reuse MCS and size");
            assert!(h.schedule_retransmission(id));
            assert_eq!(h.ready_retransmission(sf, 22), None);
        }
        let out = h.transmit(id, sf, 0, -10.0, &mut rng);
        let end = sf + f.data_end_offset(0, 22) + f.tb_decode_latency();
        assert_eq!(out, HarqOutcome::Failed { detected_at: end });
        assert_eq!(h.tb(id), None);
        // The first retransmission starts 0.5 ms after the first transmission.
        assert_eq!(f.harq_rtt().as_micros(), 500);
    }

    #[test]
    fn harq_delivery_time_and_chase_combining() {
        let f = v2();
        let mut h = HarqEntity::new(f);
        let mut rng = SimRng::stream(2, "harq");
        let thr = mcs(28).sinr_threshold_db();
        let id = h.start(HarqTb { mcs: mcs(28), symbols: 4 }).unwrap();
        // Alone, thr − 3 dB fails surely and thr − 0.5 dB fails 97 % of the time; combined
        // (0.50 + 0.89 of the threshold SINR ≈ thr + 1.4 dB) they succeed with BLER ≈ 1e-8.
        assert_eq!(h.transmit(id, t_us(0), 3, thr - 3.0, &mut rng), HarqOutcome::Retransmit { ready_at: t_us(500) });
        assert!(h.schedule_retransmission(id));
        let out = h.transmit(id, t_us(500), 3, thr - 0.5, &mut rng);
        // Data symbols 3..7 end at OFDM symbol 8: 500 + 8·4.16 + 100 µs.
        assert_eq!(out, HarqOutcome::Delivered { at: t_us(600) + SimDuration::from_nanos(8 * 4160), transmissions: 2 });
        assert_eq!(h.tb(id), None);
    }

    /// M8 residual loss: at the AMC threshold ~10 % of first transmissions fail and Chase
    /// combining recovers all of them (residual loss ≈ 0, MmWaveHarqPhy).
    #[test]
    fn m8_residual_loss_at_the_amc_operating_point() {
        let mut h = HarqEntity::new(v2());
        let mut rng = SimRng::stream(3, "harq");
        let thr = mcs(28).sinr_threshold_db();
        let (mut first_failures, mut failed, mut transmissions) = (0, 0, 0u32);
        let n = 20_000;
        for i in 0..n {
            let mut sf = t_us(100 * i);
            let id = h.start(tb28()).unwrap();
            loop {
                match h.transmit(id, sf, 0, thr, &mut rng) {
                    HarqOutcome::Delivered { transmissions: k, .. } => {
                        transmissions += u32::from(k);
                        break;
                    }
                    HarqOutcome::Failed { .. } => {
                        failed += 1;
                        break;
                    }
                    HarqOutcome::Retransmit { ready_at } => {
                        if sf == t_us(100 * i) {
                            first_failures += 1;
                        }
                        sf = ready_at;
                        assert!(h.schedule_retransmission(id));
                    }
                }
            }
        }
        let p1 = f64::from(first_failures) / n as f64;
        assert!((p1 - 0.0977).abs() < 0.01, "first-transmission BLER {p1}");
        assert_eq!(failed, 0);
        assert_eq!(transmissions, n as u32 + first_failures);
    }

    #[test]
    fn twenty_processes_then_none_and_stale_ones_expire() {
        let f = v2();
        let mut h = HarqEntity::new(f);
        let mut rng = SimRng::stream(4, "harq");
        let ids: Vec<HarqId> = (0..HARQ_PROCESSES).map(|_| h.start(tb28()).unwrap()).collect();
        assert_eq!(ids.iter().map(|i| i.index()).collect::<Vec<_>>(), (0..20).collect::<Vec<_>>());
        assert_eq!(h.start(tb28()), None);
        // Process 3 NACKed at 1 ms, process 7 at 1.1 ms: the older is offered first.
        assert!(matches!(h.transmit(ids[7], t_us(1_100), 0, -10.0, &mut rng), HarqOutcome::Retransmit { .. }));
        assert!(matches!(h.transmit(ids[3], t_us(1_000), 0, -10.0, &mut rng), HarqOutcome::Retransmit { .. }));
        assert_eq!(h.ready_retransmission(t_us(1_600), 22), Some(ids[3]));
        // Never retransmitted: freed 20 subframes after the last transmission started.
        assert_eq!(h.expire_stale(t_us(2_999)), None);
        assert_eq!(h.expire_stale(t_us(3_000)), Some(ids[3]));
        assert_eq!(h.expire_stale(t_us(3_000)), None);
        assert_eq!(h.expire_stale(t_us(3_100)), Some(ids[7]));
        assert_eq!(h.start(tb28()), Some(ids[3]));
        assert!(!h.schedule_retransmission(ids[3]), "a scheduled process is not awaiting a retransmission");
    }

    #[test]
    fn same_seed_same_outcomes() {
        let run = || {
            let mut h = HarqEntity::new(v2());
            let mut rng = SimRng::stream(9, "harq");
            (0..200u64)
                .map(|i| {
                    let id = h.start(tb28()).unwrap();
                    let out = h.transmit(id, t_us(100 * i), 0, 19.9, &mut rng);
                    h.expire_stale(SimTime::MAX);
                    out
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }

    /// M13: a CQI-0 report stops DL for CqiTimerThreshold × 100 µs, then CQI 1 (MCS 0).
    #[test]
    fn m13_cqi_zero_stalls_dl_for_the_cqi_timer() {
        let f = v2();
        for (threshold, stall) in [(CQI_TIMER_THRESHOLD_DEFAULT, SimDuration::from_millis(10)), (1000, SimDuration::from_millis(100))] {
            let mut cqi = DlCqiTracker::new(threshold, &f);
            assert_eq!(cqi.dl_mcs(t_us(0)), Some(Mcs::MIN), "no report yet: CQI 1");
            cqi.report(cqi_from_sinr(25.0), t_us(1_000));
            assert_eq!(cqi.dl_mcs(t_us(1_000)), Some(Mcs::MAX));
            let at = t_us(2_000);
            cqi.report(cqi_from_sinr(-7.3), at);
            assert_eq!(cqi.dl_mcs(at), None);
            assert_eq!(cqi.stalled_until(at), Some(at + stall));
            let last_stalled = SimTime((at + stall).as_nanos() - 1);
            assert_eq!(cqi.dl_mcs(last_stalled), None);
            assert_eq!(cqi.dl_mcs(at + stall), Some(Mcs::MIN));
            assert_eq!(cqi.cqi(at + stall), Cqi::FALLBACK);
            assert_eq!(cqi.stalled_until(at + stall), None);
            // A good report expires the same way, falling back to CQI 1.
            cqi.report(cqi_from_sinr(15.0), at + stall);
            assert_eq!(cqi.dl_mcs(at + (stall + stall - f.tti())), Some(mcs(22)));
            assert_eq!(cqi.dl_mcs(at + stall + stall), Some(Mcs::MIN));
            assert_eq!(cqi.stalled_until(at + stall), None);
        }
        // −7.2 dB (M13's rounded value) is still CQI 1: the MmWaveAmc threshold is −7.24 dB.
        assert_eq!(cqi_from_sinr(-7.2).index(), 1);
    }
}
