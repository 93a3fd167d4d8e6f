//! The mmWave radio channel between one eNB and one UE (ns3-mmwave V2.0 and its propagation-loss
//! models): noise with noise figure, transmit power and SNR (ns-3 MmWaveSpectrumValueHelper); NYU
//! 28/73 GHz path loss (MmWavePropagationLossModel); the buildings-obstacle model's blockage
//! transition trace driven by a LOS tracker (BuildingsObstaclePropagationLossModel); 3GPP TR 38.901
//! UMi-Street Canyon path loss with spatially correlated shadowing (TR 38.901 UMi-SC); the
//! beamforming + small-scale fading gain of the NYU channel with long-term beamforming
//! (MmWaveBeamforming) and of the 3GPP channel (MmWave3gppChannel); an optional time-correlated
//! fast-fading layer and the NYU frequency-selectivity penalty (docs/models.md, fast fading).
//! `Channel` combines them per profile (docs/models.md, profiles).
//!
//! Simplifications and choices (where ns3-mmwave has no simple closed form, or is ambiguous):
//! - Line of sight is an input (`ChannelInput::los`); the geometric test (ns-3 buildings LOS test)
//!   lives elsewhere.
//! - Thermal noise uses ns-3's kT at 290 K (−173.98 dBm/Hz), so the noise over 1 GHz with
//!   NF 5 dB is −78.98 dBm, which rounds to −79.0 dBm at 0.1 dB (docs/validation.md M1).
//! - Distances are floored at 1 m (all log-distance formulas diverge at 0).
//! - BuildingsObstaclePropagationLossModel: the measured trace is replaced by the piecewise-linear curves through the points
//!   listed in docs/models.md (the ±1 dB ripple of the flat phase is left out). The tracker counts
//!   8.625 samples per ms (125 µs sampling plus one 1.6 ms tick). The model takes the skip
//!   rule only for a blockage ending during the drop; a blockage starting again during the
//!   recovery uses the mirror rule (the down trace starts at 340 − n_up), which keeps the
//!   loss roughly continuous. The 28 GHz trace is also used at 73 GHz.
//! - TR 38.901 UMi-SC: hUT is clamped to the model's validity range 1.5–22.5 m (a 1 m UE would put the
//!   breakpoint at 0 m); the optional NLOS variant and blockage model A are left out.
//!   ns-3 steps the shadowing at every path-loss call (each transmission); here it steps on a
//!   fixed 1 ms grid of simulated time (`next_update_after`) and when the LOS state changes,
//!   from a stream of its own, so one seed gives one shadowing realisation whatever the
//!   traffic: two algorithms compared with the same seed see the same channel. At 30 m/s a
//!   step moves the UE 3 cm, against correlation distances of 10–13 m.
//! - MmWaveBeamforming: the 100 Matlab instances are replaced by a lean draw, N(27.5, 2.5²) dB
//!   clipped to [20, 32] dB, re-drawn at every multiple of 100 ms of simulated time.
//! - MmWave3gppChannel with direct beams (attribute DirectBeam, default true; the mmwave-5cc
//!   study says "direct beamforming"): both arrays (eNB 8×8, UE 4×4, λ/2, isotropic elements)
//!   are steered at the geometric eNB–UE direction, not at the channel's strongest eigenmode.
//!   The beamforming loss L_bf below the ideal 30.1 dB is what the TR 38.901 UMi-SC clusters
//!   (Table 7.5-6 at 28 GHz, steps 3–8 of §7.5) lose outside those two beams; it is drawn from
//!   a normal law fitted to a Monte Carlo of those steps at d2D = 150 m, hBS 10 m, hUT 1.5 m
//!   (`direct_beam_loss.py` beside this file, 6000 drops per state): LOS mean 0.7 dB, σ 0.75,
//!   1st–99th percentile 0.0–3.6 dB (the K-factor's LOS ray falls in both main lobes); NLOS mean
//!   12.9 dB, σ 2.5, 1st–99th percentile 8.2–20.8 dB (no ray arrives along the blocked direct
//!   path). At 60 m the NLOS mean is 14.1 dB: the distance dependence is left out. One
//!   standard-normal draw per 100 ms is shared by both states, so a LOS/NLOS switch changes
//!   the loss at once.
//!   Fixed (issue 19): this model used to take L_bf ≈ 1 dB (LOS) and ≈ 5 dB, range 3–8 (NLOS),
//!   the strongest-cluster power of eigen-beamforming (DirectBeam false). With direct beams
//!   that overstated the NLOS SINR by ≈ 8 dB: at x = 150 m of the mmwave-5cc track the mean NLOS
//!   SNR was +4 dB instead of −4 dB, so the blockage left ≥ 1 Gb/s of uplink capacity.
//! - MmWaveBeamforming penalty: the table is indexed by operating MCS; it is interpolated here over
//!   the wideband SNR at each operating point (operating SINR + penalty) and clamped at both ends.
//!   The 3GPP profile gets no penalty (ns3-mmwave publishes none).
//! - The fast-fading layer (docs/models.md, fast fading) is off by default (the MmWaveBeamforming statistics already average the fading over
//!   the band); when on, it is a complex AR(1) process with step correlation
//!   J0(2π·f_D·Δt) over the time since the previous sample, Rician (K = 9 dB) in LOS and
//!   Rayleigh in NLOS, with the power floored at −50 dB.
//! - Left out: the stand-alone NYU model's outage/LOS draw is offered (`NyuStatisticalLink`)
//!   but `Channel` does not use it, since both profiles take LOS from building geometry;
//!   likewise the 3GPP statistical LOS probability (`umi_los_probability`).

use std::f64::consts::PI;
use std::fmt;
use tcplab_core::{SimDuration, SimRng, SimTime};

/// A position in metres (x, y, z).
pub type Point3 = [f64; 3];

/// Speed of light used by TR 38.901 (note to Table 7.4.1-1) for the breakpoint and Doppler.
const SPEED_OF_LIGHT_MPS: f64 = 3.0e8;
/// Boltzmann constant × 290 K in dBm/Hz, as ns-3 computes it (MmWaveSpectrumValueHelper: −173.98 dBm/Hz).
const THERMAL_NOISE_DBM_PER_HZ: f64 = -173.977_3;
/// Shortest distance fed to a log-distance formula.
const MIN_DISTANCE_M: f64 = 1.0;

fn db_to_lin(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

fn lin_to_db(lin: f64) -> f64 {
    10.0 * lin.log10()
}

/// One standard normal draw (Box–Muller; the sine branch is discarded to keep no state).
fn standard_normal(rng: &mut SimRng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]: ln is finite
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos()
}

/// Piecewise-linear interpolation through `(x, y)` knots sorted by x, flat outside them.
fn interpolate(knots: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (knots[0], knots[knots.len() - 1]);
    if x <= first.0 {
        return first.1;
    }
    if x >= last.0 {
        return last.1;
    }
    let i = knots.partition_point(|k| k.0 <= x);
    let ((x0, y0), (x1, y1)) = (knots[i - 1], knots[i]);
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

fn distance_2d_m(a: Point3, b: Point3) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

fn distance_3d_m(a: Point3, b: Point3) -> f64 {
    distance_2d_m(a, b).hypot(a[2] - b[2])
}

// ---------------------------------------------------------------------------------------
// Noise and SNR (ns-3 MmWaveSpectrumValueHelper)
// ---------------------------------------------------------------------------------------

/// Thermal noise plus noise figure integrated over `bandwidth_hz` (ns-3 MmWaveSpectrumValueHelper), in dBm.
pub fn noise_power_dbm(bandwidth_hz: f64, noise_figure_db: f64) -> f64 {
    THERMAL_NOISE_DBM_PER_HZ + lin_to_db(bandwidth_hz) + noise_figure_db
}

/// Wideband SNR: P_tx + G − PL − N, all in dB/dBm. With one eNB there is no
/// interference, so this is also the SINR.
pub fn snr_db(tx_power_dbm: f64, gain_db: f64, path_loss_db: f64, noise_dbm: f64) -> f64 {
    tx_power_dbm + gain_db - path_loss_db - noise_dbm
}

// ---------------------------------------------------------------------------------------
// MmWavePropagationLossModel: NYU 28/73 GHz path loss
// ---------------------------------------------------------------------------------------

/// The two carriers the NYU model has measurements for (MmWavePropagationLossModel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NyuBand {
    Ghz28,
    Ghz73,
}

/// NYU α + 10·β·log10(d) fit with its shadowing spread (MmWavePropagationLossModel table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NyuFit {
    pub alpha_db: f64,
    pub beta: f64,
    pub sigma_db: f64,
}

impl NyuBand {
    /// The band for a carrier, or None when the NYU model has no fit for it.
    pub fn from_carrier_hz(carrier_hz: f64) -> Option<Self> {
        if carrier_hz == 28e9 {
            Some(NyuBand::Ghz28)
        } else if carrier_hz == 73e9 {
            Some(NyuBand::Ghz73)
        } else {
            None
        }
    }

    /// The LOS or NLOS fit (MmWavePropagationLossModel table).
    pub fn fit(self, los: bool) -> NyuFit {
        let (alpha_db, beta, sigma_db) = match (self, los) {
            (NyuBand::Ghz28, true) => (61.4, 2.0, 5.8),
            (NyuBand::Ghz28, false) => (72.0, 2.92, 8.7),
            (NyuBand::Ghz73, true) => (69.8, 2.0, 5.8),
            (NyuBand::Ghz73, false) => (82.7, 2.69, 7.7),
        };
        NyuFit { alpha_db, beta, sigma_db }
    }
}

impl NyuFit {
    /// Mean path loss (no shadowing) at 3-D distance `d3d_m`.
    pub fn path_loss_db(self, d3d_m: f64) -> f64 {
        self.alpha_db + 10.0 * self.beta * d3d_m.max(MIN_DISTANCE_M).log10()
    }
}

/// Link state drawn by the stand-alone NYU model (MmWavePropagationLossModel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NyuLinkState {
    Los,
    Nlos,
    Outage,
}

/// The stand-alone `MmWavePropagationLossModel`: the state and one shadowing value are
/// drawn once per link, from the distance at the first evaluation, and kept for its life.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NyuStatisticalLink {
    pub band: NyuBand,
    pub state: NyuLinkState,
    pub shadowing_db: f64,
}

/// Loss applied to a link in outage (MmWavePropagationLossModel).
pub const NYU_OUTAGE_LOSS_DB: f64 = 500.0;

impl NyuStatisticalLink {
    /// Outage and LOS probabilities at 2-D/3-D distance `d_m` (MmWavePropagationLossModel).
    pub fn probabilities(d_m: f64) -> (f64, f64) {
        let p_out = (1.0 - (-0.0334 * d_m + 5.2).exp()).max(0.0);
        let p_los = (1.0 - p_out) * (-0.0149 * d_m).exp();
        (p_out, p_los)
    }

    pub fn draw(band: NyuBand, d_m: f64, rng: &mut SimRng) -> Self {
        let (p_out, p_los) = Self::probabilities(d_m);
        let u = rng.next_f64();
        let state = if u < p_out {
            NyuLinkState::Outage
        } else if u < p_out + p_los {
            NyuLinkState::Los
        } else {
            NyuLinkState::Nlos
        };
        let sigma_db = band.fit(state == NyuLinkState::Los).sigma_db;
        NyuStatisticalLink { band, state, shadowing_db: sigma_db * standard_normal(rng) }
    }

    pub fn path_loss_db(&self, d3d_m: f64) -> f64 {
        match self.state {
            NyuLinkState::Outage => NYU_OUTAGE_LOSS_DB,
            s => self.band.fit(s == NyuLinkState::Los).path_loss_db(d3d_m) + self.shadowing_db,
        }
    }
}

// ---------------------------------------------------------------------------------------
// BuildingsObstaclePropagationLossModel: buildings-obstacle blockage trace and LOS tracker
// ---------------------------------------------------------------------------------------

/// LOS-tracker samples per ms: one per 125 µs plus one per 1.6 ms (BuildingsObstaclePropagationLossModel), i.e. 69/8.
const TRACKER_SAMPLES_PER_MS_NUM: u128 = 69;
const TRACKER_SAMPLES_PER_MS_DEN: u128 = 8;
/// Trace length; the drop index is capped at its last sample and the tracker resets to pure
/// LOS after this many recovery samples (BuildingsObstaclePropagationLossModel).
const TRACE_SAMPLES: u32 = 340;

/// Extra loss (dB) over the LOS path loss by tracker samples since blockage began
/// (BuildingsObstaclePropagationLossModel).
const DROP_TRACE: [(f64, f64); 7] = [(0.0, 0.0), (185.0, 0.0), (188.0, 3.0), (221.0, 10.0), (280.0, 20.0), (305.0, 30.0), (339.0, 35.96)];
/// Extra loss (dB) by tracker samples since LOS returned (BuildingsObstaclePropagationLossModel): starts deeper than the flat
/// NLOS value, ≈ 0 from sample 140.
const RECOVERY_TRACE: [(f64, f64); 6] = [(0.0, 44.6), (29.0, 30.0), (68.0, 20.0), (108.0, 10.0), (127.0, 3.0), (140.0, 0.0)];

fn tracker_samples(elapsed: SimDuration) -> u32 {
    let n = elapsed.as_nanos() as u128 * TRACKER_SAMPLES_PER_MS_NUM / (TRACKER_SAMPLES_PER_MS_DEN * 1_000_000);
    n.min(u32::MAX as u128) as u32
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TrackerPhase {
    /// No observation yet.
    Unknown,
    Los,
    /// Blocked at `since`; the trace index is `start + samples since`.
    Dropping {
        since: SimTime,
        start: u32,
    },
    /// LOS again at `since`; the trace index is `start + samples since`.
    Recovering {
        since: SimTime,
        start: u32,
    },
}

/// The LOS tracker of `BuildingsObstaclePropagationLossModel`: turns the geometric
/// LOS flag into the extra blockage loss added to the NYU LOS path loss.
#[derive(Clone, Copy, Debug)]
pub struct LosTracker {
    phase: TrackerPhase,
}

impl Default for LosTracker {
    fn default() -> Self {
        LosTracker { phase: TrackerPhase::Unknown }
    }
}

impl LosTracker {
    /// Extra loss in dB at `now` given the geometric LOS flag at `now`. Calls must come in
    /// non-decreasing time; the flag is taken to have changed at the call that first reports
    /// it (sample it at least every 125 µs for trace resolution).
    pub fn extra_loss_db(&mut self, now: SimTime, los: bool) -> f64 {
        let index = |since: SimTime, start: u32| start.saturating_add(tracker_samples(now.saturating_since(since)));
        self.phase = match (self.phase, los) {
            // A link that starts blocked is put straight in the flat NLOS phase.
            (TrackerPhase::Unknown, false) => TrackerPhase::Dropping { since: now, start: TRACE_SAMPLES },
            (TrackerPhase::Unknown, true) => TrackerPhase::Los,
            (TrackerPhase::Los, false) => TrackerPhase::Dropping { since: now, start: 0 },
            (TrackerPhase::Dropping { since, start }, true) => {
                let skip = TRACE_SAMPLES - index(since, start).min(TRACE_SAMPLES);
                TrackerPhase::Recovering { since: now, start: skip }
            }
            (TrackerPhase::Recovering { since, start }, false) => {
                let n_up = index(since, start);
                if n_up >= TRACE_SAMPLES {
                    TrackerPhase::Dropping { since: now, start: 0 }
                } else {
                    TrackerPhase::Dropping { since: now, start: TRACE_SAMPLES - n_up }
                }
            }
            (TrackerPhase::Recovering { since, start }, true) if index(since, start) >= TRACE_SAMPLES => TrackerPhase::Los,
            (phase, _) => phase,
        };
        match self.phase {
            TrackerPhase::Unknown | TrackerPhase::Los => 0.0,
            TrackerPhase::Dropping { since, start } => interpolate(&DROP_TRACE, index(since, start).min(TRACE_SAMPLES - 1) as f64),
            TrackerPhase::Recovering { since, start } => interpolate(&RECOVERY_TRACE, index(since, start) as f64),
        }
    }
}

// ---------------------------------------------------------------------------------------
// TR 38.901 UMi-SC: 3GPP TR 38.901 UMi-Street Canyon
// ---------------------------------------------------------------------------------------

/// UT height validity range of UMi-Street Canyon (TR 38.901 Table 7.4.1-1; TR 38.901 UMi-SC).
const UMI_HUT_RANGE_M: (f64, f64) = (1.5, 22.5);
/// Effective environment height hE = 1 m for UMi (TR 38.901 note 1 to Table 7.4.1-1).
const UMI_ENV_HEIGHT_M: f64 = 1.0;
/// Shadowing standard deviations, LOS / NLOS (TR 38.901 Table 7.4.1-1; TR 38.901 UMi-SC).
pub const UMI_LOS_SIGMA_DB: f64 = 4.0;
pub const UMI_NLOS_SIGMA_DB: f64 = 7.82;
/// Shadowing decorrelation distances, LOS / NLOS (TR 38.901 Table 7.5-6; TR 38.901 UMi-SC).
pub const UMI_LOS_DCORR_M: f64 = 10.0;
pub const UMI_NLOS_DCORR_M: f64 = 13.0;

/// UMi-Street Canyon mean path loss in dB (TR 38.901 UMi-SC), without shadowing.
pub fn umi_path_loss_db(los: bool, carrier_hz: f64, d2d_m: f64, d3d_m: f64, hbs_m: f64, hut_m: f64) -> f64 {
    let fc_ghz = carrier_hz / 1e9;
    let hut_m = hut_m.clamp(UMI_HUT_RANGE_M.0, UMI_HUT_RANGE_M.1);
    let d3d_m = d3d_m.max(MIN_DISTANCE_M);
    let breakpoint_m = 4.0 * (hbs_m - UMI_ENV_HEIGHT_M) * (hut_m - UMI_ENV_HEIGHT_M) * carrier_hz / SPEED_OF_LIGHT_MPS;
    let pl_los = if d2d_m <= breakpoint_m {
        32.4 + 21.0 * d3d_m.log10() + 20.0 * fc_ghz.log10()
    } else {
        32.4 + 40.0 * d3d_m.log10() + 20.0 * fc_ghz.log10() - 9.5 * (breakpoint_m.powi(2) + (hbs_m - hut_m).powi(2)).log10()
    };
    if los {
        return pl_los;
    }
    let pl_nlos = 22.4 + 35.3 * d3d_m.log10() + 21.3 * fc_ghz.log10() - 0.3 * (hut_m - 1.5);
    pl_los.max(pl_nlos)
}

/// UMi statistical LOS probability (TR 38.901 UMi-SC), for use when buildings are not modelled.
pub fn umi_los_probability(d2d_m: f64) -> f64 {
    if d2d_m <= 18.0 {
        1.0
    } else {
        18.0 / d2d_m + (-d2d_m / 36.0).exp() * (1.0 - 18.0 / d2d_m)
    }
}

/// Shadowing correlated along the UE track (TR 38.901 UMi-SC): S ← R·S + √(1−R²)·σ·N(0,1) with
/// R = exp(−Δd/d_corr), Δd the 2-D UE displacement since the previous draw.
#[derive(Clone, Copy, Debug)]
pub struct CorrelatedShadowing {
    sigma_db: f64,
    d_corr_m: f64,
    /// UE (x, y) and value of the previous draw.
    last: Option<([f64; 2], f64)>,
}

impl CorrelatedShadowing {
    pub fn new(sigma_db: f64, d_corr_m: f64) -> Self {
        CorrelatedShadowing { sigma_db, d_corr_m, last: None }
    }

    pub fn sample_db(&mut self, ue_xy_m: [f64; 2], rng: &mut SimRng) -> f64 {
        let fresh = self.sigma_db * standard_normal(rng);
        let value = match self.last {
            None => fresh,
            Some((xy, old)) => {
                let r = (-(ue_xy_m[0] - xy[0]).hypot(ue_xy_m[1] - xy[1]) / self.d_corr_m).exp();
                r * old + (1.0 - r * r).sqrt() * fresh
            }
        };
        self.last = Some((ue_xy_m, value));
        value
    }
}

// ---------------------------------------------------------------------------------------
// beamforming gain: beamforming + fading gain, fast fading, frequency-selectivity penalty
// ---------------------------------------------------------------------------------------

/// Step of the 3GPP shadowing's time grid (header).
pub const SHADOWING_UPDATE_PERIOD: SimDuration = SimDuration::from_millis(1);

/// Beamforming gain re-draw period: `LongTermUpdatePeriod` (MmWaveBeamforming) / channel `UpdatePeriod`
/// of the examples (MmWave3gppChannel).
pub const BF_UPDATE_PERIOD: SimDuration = SimDuration::from_millis(100);
/// Ideal coherent array gain, 10·log10(64·16) (MmWaveBeamforming, MmWave3gppChannel).
pub const IDEAL_ARRAY_GAIN_DB: f64 = 30.103;

/// A normal law in dB, clipped to a range; evaluated at a standard-normal draw.
#[derive(Clone, Copy, Debug)]
struct ClippedNormalDb {
    mean_db: f64,
    sigma_db: f64,
    min_db: f64,
    max_db: f64,
}

impl ClippedNormalDb {
    fn at(self, z: f64) -> f64 {
        (self.mean_db + self.sigma_db * z).clamp(self.min_db, self.max_db)
    }
}

/// NYU wideband BF + fading gain (MmWaveBeamforming lean model).
const NYU_BF_GAIN: ClippedNormalDb = ClippedNormalDb { mean_db: 27.5, sigma_db: 2.5, min_db: 20.0, max_db: 32.0 };
/// Direct-beam loss below the ideal array gain (MmWave3gppChannel DirectBeam; TR 38.901 UMi-SC
/// clusters): mean, σ and 1st–99th percentiles of `direct_beam_loss.py` (header).
const UMI_LOS_BF_LOSS: ClippedNormalDb = ClippedNormalDb { mean_db: 0.7, sigma_db: 0.75, min_db: 0.0, max_db: 3.6 };
const UMI_NLOS_BF_LOSS: ClippedNormalDb = ClippedNormalDb { mean_db: 12.9, sigma_db: 2.5, min_db: 8.2, max_db: 20.8 };

/// Wideband SNR − effective SINR of the frequency-selective NYU channel (MmWaveBeamforming table),
/// as (wideband SNR at the operating point, penalty): MCS 0, 8, 20, 28.
const NYU_SELECTIVITY_PENALTY: [(f64, f64); 4] = [(-5.5, 0.5), (3.6, 1.6), (15.2, 2.2), (26.2, 4.2)];

/// Effective-SINR penalty of the NYU channel at wideband SNR `snr_db` (MmWaveBeamforming).
pub fn nyu_selectivity_penalty_db(snr_db: f64) -> f64 {
    interpolate(&NYU_SELECTIVITY_PENALTY, snr_db)
}

/// Rician K-factor of the LOS fast fading (docs/models.md, fast fading: K ≈ 9 dB, TR 38.901 Table 7.5-6 UMi LOS).
const LOS_RICIAN_K_DB: f64 = 9.0;
/// Floor of the fast-fading power gain, to keep the dB value finite.
const FADING_FLOOR_DB: f64 = -50.0;

/// Σ c_i·y^i (Horner).
fn polynomial(coefficients: &[f64], y: f64) -> f64 {
    coefficients.iter().rev().fold(0.0, |acc, c| acc * y + c)
}

/// Bessel J0 (Abramowitz & Stegun 9.4.1 for |x| ≤ 3, 9.4.3 beyond; |error| < 1e-7).
fn bessel_j0(x: f64) -> f64 {
    const SMALL: [f64; 7] = [1.0, -2.249_999_7, 1.265_620_8, -0.316_386_6, 0.044_447_9, -0.003_944_4, 0.000_210_0];
    const MODULUS: [f64; 7] = [0.797_884_56, -0.000_000_77, -0.005_527_40, -0.000_095_12, 0.001_372_37, -0.000_728_05, 0.000_144_76];
    const PHASE: [f64; 7] = [0.0, -0.041_663_97, -0.000_039_54, 0.002_625_73, -0.000_541_25, -0.000_293_33, 0.000_135_58];
    let x = x.abs();
    if x <= 3.0 {
        polynomial(&SMALL, (x / 3.0).powi(2))
    } else {
        let y = 3.0 / x;
        let theta = x - std::f64::consts::FRAC_PI_4 + polynomial(&PHASE, y);
        polynomial(&MODULUS, y) * theta.cos() / x.sqrt()
    }
}

/// Maximum Doppler shift f_D = v·fc/c in Hz (MmWaveBeamforming, docs/models.md, fast fading).
pub fn doppler_hz(speed_mps: f64, carrier_hz: f64) -> f64 {
    speed_mps * carrier_hz / SPEED_OF_LIGHT_MPS
}

/// Time-correlated small-scale fading (docs/models.md, fast fading): the scattered part w is a unit-power
/// complex Gaussian AR(1) process with correlation J0(2π·f_D·Δt) between samples Δt apart.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastFading {
    /// Scattered component (re, im) and the time it was drawn.
    last: Option<(f64, f64, SimTime)>,
}

impl FastFading {
    /// Power gain in dB at `now`; `rician_k_db` None means Rayleigh.
    pub fn gain_db(&mut self, now: SimTime, doppler_hz: f64, rician_k_db: Option<f64>, rng: &mut SimRng) -> f64 {
        let (n_re, n_im) = (standard_normal(rng) * 0.5f64.sqrt(), standard_normal(rng) * 0.5f64.sqrt());
        let (re, im) = match self.last {
            None => (n_re, n_im),
            Some((re, im, t)) => {
                let rho = bessel_j0(2.0 * PI * doppler_hz * now.saturating_since(t).as_secs_f64());
                let innovation = (1.0 - rho * rho).max(0.0).sqrt();
                (rho * re + innovation * n_re, rho * im + innovation * n_im)
            }
        };
        self.last = Some((re, im, now));
        let k = rician_k_db.map_or(0.0, db_to_lin);
        let (direct, scattered) = ((k / (k + 1.0)).sqrt(), (1.0 / (k + 1.0)).sqrt());
        let power = (direct + scattered * re).powi(2) + (scattered * im).powi(2);
        lin_to_db(power).max(FADING_FLOOR_DB)
    }
}

// ---------------------------------------------------------------------------------------
// The channel
// ---------------------------------------------------------------------------------------

/// Reference profiles (docs/models.md, profiles). MMW-NR21 is a cross-check profile and is not modelled here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelProfile {
    /// NYU LOS path loss + obstacle-model blockage trace (BuildingsObstaclePropagationLossModel) + NYU BF gain (MmWaveBeamforming).
    MmwV2,
    /// 3GPP UMi-SC path loss with correlated shadowing (TR 38.901 UMi-SC) + 3GPP BF gain (MmWave3gppChannel).
    MmwV2ThreeGpp,
}

impl ChannelProfile {
    /// The SINR AMC and BLER use for a wideband SINR `sinr_db`: less the MmWaveBeamforming selectivity
    /// penalty for the NYU channel, unchanged for 3GPP (ns3-mmwave publishes no penalty table for it).
    pub fn effective_sinr_db(self, sinr_db: f64) -> f64 {
        match self {
            ChannelProfile::MmwV2 => sinr_db - nyu_selectivity_penalty_db(sinr_db),
            ChannelProfile::MmwV2ThreeGpp => sinr_db,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelConfig {
    pub profile: ChannelProfile,
    pub carrier_hz: f64,
    pub bandwidth_hz: f64,
    /// Power of the transmitting side (ns3-mmwave V2.0 defaults: 30 dBm at both eNB and UE).
    pub tx_power_dbm: f64,
    /// Noise figure of the receiving side (ns3-mmwave V2.0 defaults: 5 dB at both eNB and UE).
    pub noise_figure_db: f64,
    /// Add the fast-fading layer (docs/models.md, fast fading) on top of the BF gain.
    pub fast_fading: bool,
}

impl ChannelConfig {
    /// MMW-V2 defaults (docs/models.md, profiles): 28 GHz, 1 GHz, 30 dBm, NF 5 dB.
    pub fn mmw_v2() -> Self {
        ChannelConfig {
            profile: ChannelProfile::MmwV2,
            carrier_hz: 28e9,
            bandwidth_hz: 1e9,
            tx_power_dbm: 30.0,
            noise_figure_db: 5.0,
            fast_fading: false,
        }
    }

    /// MMW-V2-3GPP defaults: as MMW-V2 with the 3GPP channel (docs/models.md, profiles).
    pub fn mmw_v2_3gpp() -> Self {
        ChannelConfig { profile: ChannelProfile::MmwV2ThreeGpp, ..Self::mmw_v2() }
    }
}

/// A configuration value the channel cannot use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChannelConfigError {
    /// The NYU model only has fits for 28 and 73 GHz; TR 38.901 covers 0.5–100 GHz.
    CarrierHz(f64),
    BandwidthHz(f64),
    TxPowerDbm(f64),
    NoiseFigureDb(f64),
}

impl fmt::Display for ChannelConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ChannelConfigError::CarrierHz(v) => {
                write!(f, "carrier {v} Hz: MMW-V2 allows 28e9 or 73e9, MMW-V2-3GPP 0.5e9 to 100e9")
            }
            ChannelConfigError::BandwidthHz(v) => write!(f, "bandwidth {v} Hz: must be positive"),
            ChannelConfigError::TxPowerDbm(v) => write!(f, "transmit power {v} dBm: must be finite"),
            ChannelConfigError::NoiseFigureDb(v) => write!(f, "noise figure {v} dB: must be finite and ≥ 0"),
        }
    }
}

impl std::error::Error for ChannelConfigError {}

/// What the caller knows at one evaluation instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelInput {
    pub now: SimTime,
    pub enb_pos_m: Point3,
    pub ue_pos_m: Point3,
    /// Speed used for the Doppler of the fast-fading layer (V2.0 used vx + vy + vz, MmWaveBeamforming).
    pub ue_speed_mps: f64,
    /// Geometric line of sight (ns-3 buildings LOS test): the 2-D test for MMW-V2, the 3-D test for MMW-V2-3GPP.
    pub los: bool,
}

/// The channel at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelSample {
    /// Path loss including blockage trace (MMW-V2) or shadowing (MMW-V2-3GPP).
    pub path_loss_db: f64,
    /// Beamforming + wideband fading gain (MmWaveBeamforming / MmWave3gppChannel).
    pub bf_gain_db: f64,
    /// Fast-fading gain (0 when the layer is off).
    pub fading_db: f64,
    /// Wideband SNR (= SINR with one cell).
    pub sinr_db: f64,
    /// SINR after the frequency-selectivity penalty, for AMC and BLER (MmWaveBeamforming).
    pub effective_sinr_db: f64,
}

/// Per-profile path-loss state.
#[derive(Clone, Debug)]
enum PathLoss {
    Obstacle {
        los_fit: NyuFit,
        tracker: LosTracker,
    },
    ThreeGpp {
        los_shadowing: CorrelatedShadowing,
        nlos_shadowing: CorrelatedShadowing,
        /// Grid step, LOS state and value of the shadowing in force.
        held: Option<(u64, bool, f64)>,
        /// Shadowing draws only (header: independent of the sampling cadence).
        rng: SimRng,
    },
}

/// One eNB–UE channel. Owns its random stream; same config, seed and inputs give the same
/// samples.
#[derive(Clone, Debug)]
pub struct Channel {
    config: ChannelConfig,
    noise_dbm: f64,
    path_loss: PathLoss,
    /// Index of the current 100 ms BF epoch and its standard-normal draw.
    bf_epoch: Option<(u64, f64)>,
    /// BF draws only, so their values do not depend on how often the channel is sampled.
    bf_rng: SimRng,
    fading: FastFading,
    /// Fast-fading draws.
    rng: SimRng,
}

impl Channel {
    /// A channel drawing from sub-streams seeded by `rng`.
    pub fn new(config: ChannelConfig, mut rng: SimRng) -> Result<Self, ChannelConfigError> {
        let c = &config;
        if !(c.bandwidth_hz.is_finite() && c.bandwidth_hz > 0.0) {
            return Err(ChannelConfigError::BandwidthHz(c.bandwidth_hz));
        }
        if !c.tx_power_dbm.is_finite() {
            return Err(ChannelConfigError::TxPowerDbm(c.tx_power_dbm));
        }
        if !(c.noise_figure_db.is_finite() && c.noise_figure_db >= 0.0) {
            return Err(ChannelConfigError::NoiseFigureDb(c.noise_figure_db));
        }
        let path_loss = match c.profile {
            ChannelProfile::MmwV2 => {
                let band = NyuBand::from_carrier_hz(c.carrier_hz).ok_or(ChannelConfigError::CarrierHz(c.carrier_hz))?;
                PathLoss::Obstacle { los_fit: band.fit(true), tracker: LosTracker::default() }
            }
            ChannelProfile::MmwV2ThreeGpp => {
                if !(0.5e9..=100e9).contains(&c.carrier_hz) {
                    return Err(ChannelConfigError::CarrierHz(c.carrier_hz));
                }
                PathLoss::ThreeGpp {
                    los_shadowing: CorrelatedShadowing::new(UMI_LOS_SIGMA_DB, UMI_LOS_DCORR_M),
                    nlos_shadowing: CorrelatedShadowing::new(UMI_NLOS_SIGMA_DB, UMI_NLOS_DCORR_M),
                    held: None,
                    rng: SimRng::stream(rng.next_u64(), "mmwave/channel/shadowing"),
                }
            }
        };
        let noise_dbm = noise_power_dbm(c.bandwidth_hz, c.noise_figure_db);
        let bf_rng = SimRng::stream(rng.next_u64(), "mmwave/channel/bf");
        Ok(Channel { config, noise_dbm, path_loss, bf_epoch: None, bf_rng, fading: FastFading::default(), rng })
    }

    pub fn config(&self) -> &ChannelConfig {
        &self.config
    }

    /// Receiver noise power over the whole carrier (ns-3 MmWaveSpectrumValueHelper).
    pub fn noise_dbm(&self) -> f64 {
        self.noise_dbm
    }

    /// The first instant after `t` at which the channel's state steps on its own, whether
    /// sampled or not (the 3GPP shadowing grid); None when only LOS switches change it. A
    /// caller that wants the realisation to depend on the seed alone samples at each.
    pub fn next_update_after(&self, t: SimTime) -> Option<SimTime> {
        match self.path_loss {
            PathLoss::Obstacle { .. } => None,
            PathLoss::ThreeGpp { .. } => {
                let step = SHADOWING_UPDATE_PERIOD.as_nanos();
                Some(SimTime((t.as_nanos() / step + 1) * step))
            }
        }
    }

    /// Evaluate the channel at `input.now`. Calls must come in non-decreasing time.
    pub fn sample(&mut self, input: &ChannelInput) -> ChannelSample {
        let ChannelInput { now, enb_pos_m, ue_pos_m, ue_speed_mps, los } = *input;
        let d3d_m = distance_3d_m(enb_pos_m, ue_pos_m);
        let path_loss_db = match &mut self.path_loss {
            PathLoss::Obstacle { los_fit, tracker } => los_fit.path_loss_db(d3d_m) + tracker.extra_loss_db(now, los),
            PathLoss::ThreeGpp { los_shadowing, nlos_shadowing, held, rng } => {
                let mean_db =
                    umi_path_loss_db(los, self.config.carrier_hz, distance_2d_m(enb_pos_m, ue_pos_m), d3d_m, enb_pos_m[2], ue_pos_m[2]);
                let step = now.as_nanos() / SHADOWING_UPDATE_PERIOD.as_nanos();
                let value = match *held {
                    Some((k, state, value)) if k == step && state == los => value,
                    _ => {
                        let process = if los { los_shadowing } else { nlos_shadowing };
                        process.sample_db([ue_pos_m[0], ue_pos_m[1]], rng)
                    }
                };
                *held = Some((step, los, value));
                mean_db + value
            }
        };
        let z = self.bf_draw(now);
        let bf_gain_db = match self.config.profile {
            ChannelProfile::MmwV2 => NYU_BF_GAIN.at(z),
            ChannelProfile::MmwV2ThreeGpp => IDEAL_ARRAY_GAIN_DB - if los { UMI_LOS_BF_LOSS.at(z) } else { UMI_NLOS_BF_LOSS.at(z) },
        };
        let fading_db = if self.config.fast_fading {
            let doppler = doppler_hz(ue_speed_mps.abs(), self.config.carrier_hz);
            let k_db = los.then_some(LOS_RICIAN_K_DB);
            self.fading.gain_db(now, doppler, k_db, &mut self.rng)
        } else {
            0.0
        };
        let sinr_db = snr_db(self.config.tx_power_dbm, bf_gain_db + fading_db, path_loss_db, self.noise_dbm);
        let effective_sinr_db = self.config.profile.effective_sinr_db(sinr_db);
        ChannelSample { path_loss_db, bf_gain_db, fading_db, sinr_db, effective_sinr_db }
    }

    /// The standard-normal draw of the 100 ms BF epoch containing `now`. Every epoch since
    /// the previous call gets its own draw, so the values do not depend on the call cadence.
    fn bf_draw(&mut self, now: SimTime) -> f64 {
        let epoch = now.as_nanos() / BF_UPDATE_PERIOD.as_nanos();
        match self.bf_epoch {
            Some((e, z)) if e >= epoch => z,
            previous => {
                let draws = previous.map_or(epoch + 1, |(e, _)| epoch - e);
                let mut z = 0.0;
                for _ in 0..draws {
                    z = standard_normal(&mut self.bf_rng);
                }
                self.bf_epoch = Some((epoch, z));
                z
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_near(got: f64, want: f64, tol: f64, what: &str) {
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} ± {tol}");
    }

    fn ms(t: f64) -> SimTime {
        SimTime((t * 1e6).round() as u64)
    }

    fn mean_std(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        (mean, (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt())
    }

    fn correlation(pairs: &[(f64, f64)]) -> f64 {
        let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
        let ((ma, sa), (mb, sb)) = (mean_std(&a), mean_std(&b));
        pairs.iter().map(|(x, y)| (x - ma) * (y - mb)).sum::<f64>() / (pairs.len() as f64 * sa * sb)
    }

    /// d3D of the UMi table rows: hBS 10 m, hUT 1.5 m.
    fn umi_d3d(d2d_m: f64) -> f64 {
        d2d_m.hypot(8.5)
    }

    // ---- noise and SNR ----

    #[test]
    fn m1_noise_over_1ghz_with_nf_5db_is_minus_79_dbm() {
        assert_near(noise_power_dbm(1e9, 5.0), -79.0, 0.05, "1 GHz");
        assert_near(noise_power_dbm(1e9, 5.0), -78.977, 0.001, "ns-3 kT");
        assert_near(noise_power_dbm(200e6, 5.0), -86.0, 0.05, "200 MHz");
        let ch = Channel::new(ChannelConfig::mmw_v2(), SimRng::stream(1, "c")).unwrap();
        assert_eq!(ch.noise_dbm(), noise_power_dbm(1e9, 5.0));
    }

    // ---- MmWavePropagationLossModel ----

    #[test]
    fn m2_nyu_los_path_loss_at_study_distances() {
        let los = NyuBand::Ghz28.fit(true);
        assert_near(los.path_loss_db(59.5), 96.9, 0.05, "59.5 m");
        assert_near(los.path_loss_db(150.0), 104.9, 0.05, "150 m");
        assert_near(NyuBand::Ghz28.fit(false).path_loss_db(100.0), 72.0 + 58.4, 1e-9, "28 GHz NLOS");
        assert_near(NyuBand::Ghz73.fit(true).path_loss_db(100.0), 69.8 + 40.0, 1e-9, "73 GHz LOS");
        assert_near(NyuBand::Ghz73.fit(false).path_loss_db(100.0), 82.7 + 53.8, 1e-9, "73 GHz NLOS");
        assert_eq!(NyuBand::from_carrier_hz(73e9), Some(NyuBand::Ghz73));
        assert_eq!(NyuBand::from_carrier_hz(60e9), None);
    }

    #[test]
    fn nyu_statistical_link_draws_state_by_distance() {
        let (p_out, p_los) = NyuStatisticalLink::probabilities(59.5);
        assert_eq!(p_out, 0.0);
        assert_near(p_los, 0.41, 0.005, "P(LOS) at 59.5 m (docs/models.md, profiles)");
        let (p_out, p_los) = NyuStatisticalLink::probabilities(200.0);
        assert_near(p_out, 1.0 - (-1.48f64).exp(), 1e-12, "P(out) at 200 m");
        assert_near(p_los, (-1.48f64).exp() * (-2.98f64).exp(), 1e-12, "P(LOS) at 200 m");

        let mut rng = SimRng::stream(3, "nyu");
        let links: Vec<_> = (0..20_000).map(|_| NyuStatisticalLink::draw(NyuBand::Ghz28, 200.0, &mut rng)).collect();
        let share = |s| links.iter().filter(|l| l.state == s).count() as f64 / links.len() as f64;
        assert_near(share(NyuLinkState::Outage), p_out, 0.01, "outage share");
        assert_near(share(NyuLinkState::Los), p_los, 0.005, "LOS share");
        let nlos: Vec<f64> = links.iter().filter(|l| l.state == NyuLinkState::Nlos).map(|l| l.shadowing_db).collect();
        assert_near(mean_std(&nlos).1, 8.7, 0.4, "NLOS shadowing σ");
        let out = links.iter().find(|l| l.state == NyuLinkState::Outage).unwrap();
        assert_eq!(out.path_loss_db(200.0), NYU_OUTAGE_LOSS_DB);
        let l = links.iter().find(|l| l.state == NyuLinkState::Nlos).unwrap();
        assert_near(l.path_loss_db(200.0), NyuBand::Ghz28.fit(false).path_loss_db(200.0) + l.shadowing_db, 1e-9, "");
    }

    // ---- BuildingsObstaclePropagationLossModel ----

    /// Extra loss sampled every 125 µs over `[from_ms, to_ms)`, with the LOS flag by time.
    fn tracker_run(tracker: &mut LosTracker, from_ms: f64, to_ms: f64, los: impl Fn(f64) -> bool) -> Vec<(f64, f64)> {
        let steps = ((to_ms - from_ms) / 0.125).round() as usize;
        (0..steps)
            .map(|i| {
                let t = from_ms + i as f64 * 0.125;
                (t, tracker.extra_loss_db(ms(t), los(t)))
            })
            .collect()
    }

    fn first_time(trace: &[(f64, f64)], pred: impl Fn(f64) -> bool) -> f64 {
        trace.iter().find(|(_, l)| pred(*l)).expect("never reached").0
    }

    #[test]
    fn m3_blockage_drop_is_flat_for_21_ms_then_completes_at_39_ms() {
        let mut tracker = LosTracker::default();
        let trace = tracker_run(&mut tracker, 0.0, 2000.0, |t| t < 1000.0);
        assert!(trace.iter().filter(|(t, _)| *t < 1000.0).all(|(_, l)| *l == 0.0), "LOS has no extra loss");
        let after = |t0: f64| trace.iter().filter(move |(t, _)| *t >= t0).copied().collect::<Vec<_>>();
        let drop = after(1000.0);
        let leaves_flat_ms = first_time(&drop, |l| l > 1.0) - 1000.0;
        assert!((0.9 * 21.5..=1.1 * 21.8).contains(&leaves_flat_ms), "flat phase ends at {leaves_flat_ms} ms");
        let complete_ms = first_time(&drop, |l| l >= 35.96) - 1000.0;
        assert!((0.9 * 39.4..=1.1 * 39.4).contains(&complete_ms), "drop completes at {complete_ms} ms");
        // The reference table of the drop (docs/models.md, blockage): extra loss reached by time after blockage.
        for (loss, at_ms) in [(3.0, 21.8), (10.0, 25.6), (20.0, 32.5), (30.0, 35.4)] {
            assert_near(first_time(&drop, |l| l >= loss) - 1000.0, at_ms, 0.2, &format!("{loss} dB point"));
        }
        assert!(drop.iter().filter(|(t, _)| *t < 1021.4).all(|(_, l)| *l == 0.0), "flat to sample 185");
        assert!(after(1040.0).iter().all(|(_, l)| (l - 36.0).abs() <= 1.0), "steady NLOS = LOS + 36 dB");
    }

    #[test]
    fn m3_recovery_starts_deeper_and_takes_16_ms() {
        let mut tracker = LosTracker::default();
        let trace = tracker_run(&mut tracker, 0.0, 600.0, |t| !(100.0..300.0).contains(&t));
        let rec: Vec<_> = trace.iter().filter(|(t, _)| *t >= 300.0).copied().collect();
        assert_near(rec[0].1, 44.6, 1e-9, "recovery starts at the deepest point");
        let done_ms = first_time(&rec, |l| l < 1.0) - 300.0;
        assert!((0.9 * 16.0..=1.1 * 16.0).contains(&done_ms), "recovery done at {done_ms} ms");
        for (loss, at_ms) in [(30.0, 3.4), (20.0, 7.9), (10.0, 12.5), (3.0, 14.7)] {
            assert_near(first_time(&rec, |l| l <= loss) - 300.0, at_ms, 0.2, &format!("{loss} dB point"));
        }
        // Back to pure LOS after 340 samples (39.4 ms): a new blockage starts the full drop.
        assert_eq!(tracker.phase, TrackerPhase::Los);
    }

    #[test]
    fn tracker_skips_ahead_when_blockage_is_short_and_starts_flat_when_born_blocked() {
        // Blocked for 10 ms (86 samples, still flat): the up trace skips 254 samples, to 0 dB.
        let mut short = LosTracker::default();
        let trace = tracker_run(&mut short, 0.0, 40.0, |t| !(10.0..20.0).contains(&t));
        assert!(trace.iter().all(|(_, l)| *l == 0.0), "a blockage shorter than the flat phase never shows");
        // Blocked until the 30 dB point (305 samples): the up trace resumes at 35 samples.
        let mut mid = LosTracker::default();
        let t_back = 10.0 + 305.0 / 8.625;
        let trace = tracker_run(&mut mid, 0.0, 60.0, |t| !(10.0..t_back).contains(&t));
        let before = trace.iter().rev().find(|(t, _)| *t < t_back).unwrap().1;
        let at = trace.iter().find(|(t, _)| *t >= t_back).unwrap().1;
        assert_near(before, 30.0, 0.5, "loss at LOS return");
        assert_near(at, interpolate(&RECOVERY_TRACE, 35.0), 0.3, "recovery resumes at sample 35");
        assert!((at - before).abs() < 3.0, "no jump: {before} -> {at}");
        // Re-blocked 1.2 ms into a recovery (n_up = 10): the drop resumes at sample 330.
        let mut re = LosTracker::default();
        let trace = tracker_run(&mut re, 0.0, 200.0, |t| !(10.0..100.0).contains(&t) && t < 101.25);
        let at = trace.iter().find(|(t, _)| *t >= 101.25).unwrap().1;
        assert_near(at, interpolate(&DROP_TRACE, 330.0), 0.01, "mirror rule");
        // A link that starts blocked is in the flat NLOS phase at once.
        let mut born = LosTracker::default();
        assert_near(born.extra_loss_db(SimTime::ZERO, false), 35.96, 1e-9, "born blocked");
    }

    #[test]
    fn m3_obstacle_channel_nlos_minus_los_is_36_db_at_any_distance() {
        for d in [30.0, 59.5, 150.0] {
            let input = |now, los| ChannelInput { now, enb_pos_m: [0.0, 0.0, 30.0], ue_pos_m: [d, 0.0, 30.0], ue_speed_mps: 0.0, los };
            let mut ch = Channel::new(ChannelConfig::mmw_v2(), SimRng::stream(5, "c")).unwrap();
            let los = ch.sample(&input(ms(10.0), true));
            ch.sample(&input(ms(40.0), false)); // blockage begins
            let nlos = ch.sample(&input(ms(90.0), false)); // same BF epoch, after the drop
            assert_near(los.path_loss_db, NyuBand::Ghz28.fit(true).path_loss_db(d), 1e-9, "LOS: no shadowing");
            assert_near(nlos.path_loss_db - los.path_loss_db, 36.0, 0.05, "NLOS − LOS");
            assert_near(los.sinr_db - nlos.sinr_db, 36.0, 0.05, "SINR drop");
        }
    }

    // ---- TR 38.901 UMi-SC ----

    #[test]
    fn m4_umi_path_loss_table() {
        // (d2D, PL_LOS, PL_NLOS) of the TR 38.901 UMi-SC table.
        let table = [(30.0, 92.7, 106.0), (50.0, 97.2, 113.4), (100.0, 103.4, 123.9), (150.0, 107.1, 130.1), (200.0, 109.7, 134.5)];
        for (d2d, los, nlos) in table {
            let pl = |l| umi_path_loss_db(l, 28e9, d2d, umi_d3d(d2d), 10.0, 1.5);
            assert_near(pl(true), los, 0.05, &format!("LOS at {d2d} m"));
            assert_near(pl(false), nlos, 0.05, &format!("NLOS at {d2d} m"));
        }
    }

    #[test]
    fn umi_breakpoint_is_1680_m_and_continuous_and_nlos_never_below_los() {
        let pl = |los, d2d: f64| umi_path_loss_db(los, 28e9, d2d, umi_d3d(d2d), 10.0, 1.5);
        let (below, above) = (pl(true, 1679.9), pl(true, 1680.1));
        assert_near(above, below, 0.05, "continuous at the breakpoint");
        // Beyond the breakpoint the slope is 40 dB/decade.
        assert_near(pl(true, 16800.0) - pl(true, 1680.1), 40.0, 0.1, "PL2 slope");
        assert_near(pl(true, 1000.0) - pl(true, 100.0), 21.0, 0.1, "PL1 slope");
        let short = |los| umi_path_loss_db(los, 28e9, 2.0, 2.0, 10.0, 1.5);
        assert_eq!(short(false), short(true), "NLOS = max(LOS, NLOS') at 2 m");
        assert!(short(true) > 22.4 + 35.3 * 2f64.log10() + 21.3 * 28f64.log10(), "LOS wins at 2 m");
        // hUT below 1.5 m is clamped: a 1 m UE is treated as 1.5 m.
        let at_hut = |hut_m| umi_path_loss_db(true, 28e9, 100.0, 100.5, 10.0, hut_m);
        assert_eq!(at_hut(1.0), at_hut(1.5));
        assert_eq!(umi_los_probability(18.0), 1.0);
        assert_near(umi_los_probability(100.0), 0.18 + (-100.0f64 / 36.0).exp() * 0.82, 1e-12, "P_LOS");
    }

    #[test]
    fn m4_shadowing_sigma_and_decorrelation_distance() {
        let mut rng = SimRng::stream(11, "shadow");
        for (sigma, d_corr) in [(UMI_LOS_SIGMA_DB, UMI_LOS_DCORR_M), (UMI_NLOS_SIGMA_DB, UMI_NLOS_DCORR_M)] {
            assert!([(4.0, 10.0), (7.82, 13.0)].contains(&(sigma, d_corr)), "TR 38.901 constants");
            // Pairs of draws Δd apart on many independent tracks.
            let pairs = |dd: f64, rng: &mut SimRng| -> Vec<(f64, f64)> {
                (0..20_000)
                    .map(|_| {
                        let mut s = CorrelatedShadowing::new(sigma, d_corr);
                        (s.sample_db([0.0, 0.0], rng), s.sample_db([0.6 * dd, 0.8 * dd], rng))
                    })
                    .collect()
            };
            let at_dcorr = pairs(d_corr, &mut rng);
            let (first, second): (Vec<f64>, Vec<f64>) = at_dcorr.iter().copied().unzip();
            assert_near(mean_std(&first).1, sigma, 0.03 * sigma, "σ of the first draw");
            assert_near(mean_std(&second).1, sigma, 0.03 * sigma, "σ stays stationary");
            assert_near(correlation(&at_dcorr), (-1.0f64).exp(), 0.03, "R at Δd = d_corr");
            assert_near(correlation(&pairs(0.5 * d_corr, &mut rng)), (-0.5f64).exp(), 0.03, "R at d_corr/2");
            assert_near(correlation(&pairs(5.0 * d_corr, &mut rng)), 0.0, 0.03, "R far away");
            let same = pairs(0.0, &mut rng);
            assert!(same.iter().all(|(a, b)| a == b), "no displacement, same value");
        }
    }

    #[test]
    fn threegpp_channel_keeps_one_shadowing_process_per_state() {
        let mut ch = Channel::new(ChannelConfig::mmw_v2_3gpp(), SimRng::stream(2, "c")).unwrap();
        let input = |t, y, los| ChannelInput { now: ms(t), enb_pos_m: [0.0, 0.0, 10.0], ue_pos_m: [100.0, y, 1.5], ue_speed_mps: 1.0, los };
        let mean = |los| umi_path_loss_db(los, 28e9, 100.0, umi_d3d(100.0), 10.0, 1.5);
        let los1 = ch.sample(&input(1.0, 0.0, true)).path_loss_db - mean(true);
        let nlos1 = ch.sample(&input(2.0, 0.0, false)).path_loss_db - mean(false);
        // Back in LOS at the same spot: the LOS process has not moved, so its value is kept.
        let los2 = ch.sample(&input(3.0, 0.0, true)).path_loss_db - mean(true);
        assert_eq!(los1, los2);
        assert_ne!(los1, nlos1);
        // Instantaneous switching: NLOS path loss is above LOS by the table gap ± shadowing.
        let s = ch.sample(&input(4.0, 0.0, false));
        assert_near(s.path_loss_db - mean(false), nlos1, 1e-9, "NLOS process kept too");
    }

    // ---- beamforming gain ----

    /// BF gain at every ms for `secs` seconds, one value per 100 ms epoch.
    fn bf_epochs(config: ChannelConfig, los: bool, secs: u64) -> Vec<f64> {
        let mut ch = Channel::new(config, SimRng::stream(9, "bf")).unwrap();
        let mut epochs = Vec::new();
        for i in 0..secs * 1000 {
            let input = ChannelInput {
                now: SimTime(i * 1_000_000),
                enb_pos_m: [0.0, 0.0, 10.0],
                ue_pos_m: [50.0, 0.0, 1.5],
                ue_speed_mps: 0.0,
                los,
            };
            let g = ch.sample(&input).bf_gain_db;
            if i % 100 == 0 {
                epochs.push(g);
            } else {
                assert_eq!(Some(&g), epochs.last(), "constant inside a 100 ms epoch (t = {i} ms)");
            }
        }
        epochs
    }

    #[test]
    fn m5_nyu_bf_gain_mean_27_5_sigma_2_5_redrawn_every_100_ms() {
        let epochs = bf_epochs(ChannelConfig::mmw_v2(), true, 600);
        let (mean, std) = mean_std(&epochs);
        assert_near(mean, 27.5, 0.1, "mean");
        assert_near(std, 2.5, 0.15, "σ (clipping trims it slightly)");
        assert!(epochs.iter().all(|g| (20.0..=32.0).contains(g)), "clipped to [20, 32] dB");
        let repeats = epochs.windows(2).filter(|w| w[0] == w[1]);
        assert!(repeats.clone().all(|w| w[0] == 20.0 || w[0] == 32.0), "re-drawn every epoch");
        assert!(repeats.count() < epochs.len() / 100, "only clipped values repeat");
        // The NYU gain does not depend on the LOS state.
        assert_eq!(bf_epochs(ChannelConfig::mmw_v2(), false, 2), epochs[..20].to_vec());
    }

    #[test]
    fn bf_gain_does_not_depend_on_sampling_cadence() {
        let mut fine = Channel::new(ChannelConfig::mmw_v2(), SimRng::stream(4, "c")).unwrap();
        let mut coarse = Channel::new(ChannelConfig::mmw_v2(), SimRng::stream(4, "c")).unwrap();
        let input = |ms_t: u64| ChannelInput {
            now: SimTime(ms_t * 1_000_000),
            enb_pos_m: [0.0; 3],
            ue_pos_m: [50.0, 0.0, 0.0],
            ue_speed_mps: 0.0,
            los: true,
        };
        for t in 0..3000 {
            let g = fine.sample(&input(t)).bf_gain_db;
            if t % 730 == 5 {
                assert_eq!(coarse.sample(&input(t)).bf_gain_db, g, "t = {t} ms");
            }
        }
    }

    #[test]
    fn threegpp_bf_gain_is_array_gain_minus_the_direct_beam_loss() {
        let (los, los_std) = mean_std(&bf_epochs(ChannelConfig::mmw_v2_3gpp(), true, 300));
        let nlos_epochs = bf_epochs(ChannelConfig::mmw_v2_3gpp(), false, 300);
        let (nlos, nlos_std) = mean_std(&nlos_epochs);
        assert_near(IDEAL_ARRAY_GAIN_DB, 10.0 * 1024f64.log10(), 1e-3, "64 × 16 elements");
        // direct_beam_loss.py: LOS 0.7 dB (σ 0.75; the clip at 0 dB lifts the mean ≈ 0.1 dB), NLOS 12.9 dB (σ 2.5).
        assert_near(los, IDEAL_ARRAY_GAIN_DB - 0.8, 0.15, "LOS mean");
        assert_near(los_std, 0.65, 0.1, "LOS spread");
        assert_near(nlos, IDEAL_ARRAY_GAIN_DB - 12.9, 0.3, "NLOS mean");
        assert_near(nlos_std, 2.5, 0.2, "NLOS spread");
        let lo = IDEAL_ARRAY_GAIN_DB - 20.8..=IDEAL_ARRAY_GAIN_DB - 8.2;
        assert!(nlos_epochs.iter().all(|g| lo.contains(g)), "NLOS loss within 8.2–20.8 dB");
    }

    #[test]
    fn selectivity_penalty_follows_the_mcs_table() {
        for (snr, pen) in NYU_SELECTIVITY_PENALTY {
            assert_eq!(nyu_selectivity_penalty_db(snr), pen);
        }
        assert_eq!(nyu_selectivity_penalty_db(-20.0), 0.5);
        assert_eq!(nyu_selectivity_penalty_db(45.0), 4.2);
        assert_near(nyu_selectivity_penalty_db(9.4), 1.9, 1e-9, "midway MCS 8–20");
    }

    /// MMW-V2-3GPP end to end: the mean SNR of the channel, over 4000 independent channels (seeds)
    /// sampled once, at the mmwave-5cc geometry. The mean removes the zero-mean shadowing
    /// (σ 4 / 7.82 dB, standard error ≤ 0.13 dB here), leaving the deterministic part worked out
    /// by hand from TR 38.901 (Table 7.4.1-1, UMi-Street Canyon) and the ns3-mmwave defaults:
    ///
    /// - eNB (0, 0, 10), UE (d, 0, 1.5): d3D = √(d² + 8.5²); breakpoint 4·9·0.5·28e9/3e8 = 1680 m, so PL1;
    /// - PL_LOS = 32.4 + 21·log10(d3D) + 20·log10(28) = 32.4 + 21·log10(d3D) + 28.94;
    /// - PL_NLOS = max(PL_LOS, 22.4 + 35.3·log10(d3D) + 21.3·log10(28) − 0.3·(1.5 − 1.5)) = 22.4 + 35.3·log10(d3D) + 30.82;
    /// - noise = −174 dBm/Hz + 10·log10(1e9) + NF 5 dB = −79.0 dBm (the receiver's NF: the eNB's for the uplink);
    /// - TX 30 dBm (eNB and UE alike, MmWaveEnbPhy/MmWaveUePhy TxPower);
    /// - gain = 10·log10(64·16) = 30.1 dB (8×8 eNB, 4×4 UE, counted once for the link) minus the direct-beam
    ///   loss: LOS ≈ 0.8 dB (N(0.7, 0.75²) floored at 0), NLOS 12.9 dB.
    ///
    /// | d2D | d3D | PL_LOS | PL_NLOS | SNR LOS = 30 + 29.3 − PL + 79.0 | SNR NLOS = 30 + 17.2 − PL + 79.0 |
    /// |---|---|---|---|---|---|
    /// | 50 m | 50.72 m | 32.4 + 35.81 + 28.94 = 97.15 | 22.4 + 60.19 + 30.82 = 113.42 | 41.2 | 12.8 |
    /// | 150 m | 150.24 m | 32.4 + 45.71 + 28.94 = 107.06 | 22.4 + 76.84 + 30.82 = 130.07 | 31.2 | −3.9 |
    #[test]
    fn umi_street_canyon_snr_at_50_and_150_m_matches_the_hand_budget() {
        let mean_snr = |d2d: f64, los: bool| {
            let snrs: Vec<f64> = (0..4000u64)
                .map(|seed| {
                    let mut ch = Channel::new(ChannelConfig::mmw_v2_3gpp(), SimRng::stream(seed, "umi-budget")).unwrap();
                    let input =
                        ChannelInput { now: SimTime::ZERO, enb_pos_m: [0.0, 0.0, 10.0], ue_pos_m: [d2d, 0.0, 1.5], ue_speed_mps: 0.0, los };
                    ch.sample(&input).sinr_db
                })
                .collect();
            mean_std(&snrs)
        };
        for (d2d, los_snr, nlos_snr) in [(50.0, 41.2, 12.8), (150.0, 31.2, -3.9)] {
            let (los, los_spread) = mean_snr(d2d, true);
            let (nlos, nlos_spread) = mean_snr(d2d, false);
            assert_near(los, los_snr, 0.5, &format!("LOS SNR at {d2d} m"));
            assert_near(nlos, nlos_snr, 0.5, &format!("NLOS SNR at {d2d} m"));
            // Shadowing (4 / 7.82 dB) and the beamforming draw (0.65 / 2.5 dB) add in power.
            assert_near(los_spread, 4.05, 0.2, &format!("LOS spread at {d2d} m"));
            assert_near(nlos_spread, 8.2, 0.3, &format!("NLOS spread at {d2d} m"));
        }
    }

    /// Worked SNRs of docs/validation.md, mmWave capacity: P_tx + G − PL − N with the rounded noise of −79.0 dBm.
    #[test]
    fn a12_study_sinrs() {
        let noise = noise_power_dbm(1e9, 5.0);
        let nyu = NyuBand::Ghz28.fit(true);
        // Study (a), MMW-V2, d3D 59.5 m, mean BF gain 27.5 dB.
        let los = snr_db(30.0, 27.5, nyu.path_loss_db(59.5), noise);
        assert_near(los, 39.6, 0.1, "study (a) LOS");
        assert_near(los - nyu_selectivity_penalty_db(los), 35.0, 0.5, "study (a) LOS effective");
        let nlos = snr_db(30.0, 27.5, nyu.path_loss_db(59.5) + 36.0, noise);
        assert_near(nlos, 3.6, 0.1, "study (a) NLOS");
        assert_near(nlos - nyu_selectivity_penalty_db(nlos), 2.0, 0.1, "study (a) NLOS effective");
        // V2.0 building example, UE at ≈ 150 m.
        let los = snr_db(30.0, 27.5, nyu.path_loss_db(150.0), noise);
        assert_near(los, 31.6, 0.1, "V2.0 example LOS");
        let nlos = los - 36.0;
        assert_near(nlos, -4.4, 0.1, "V2.0 example NLOS");
        assert_near(nlos - nyu_selectivity_penalty_db(nlos), -5.0, 0.1, "V2.0 example NLOS effective");
        // Study (b), 3GPP UMi: the docs/validation.md LOS numbers use G = 29 dB.
        let umi = |los, d2d: f64| umi_path_loss_db(los, 28e9, d2d, umi_d3d(d2d), 10.0, 1.5);
        assert_near(snr_db(30.0, 29.0, umi(true, 50.0), noise), 40.9, 0.1, "study (b) LOS 50 m");
        assert_near(snr_db(30.0, 29.0, umi(true, 100.0), noise), 34.6, 0.1, "study (b) LOS 100 m");
        // NLOS with direct beams, the model's mean gain 30.1 − 12.9 dB (docs/validation.md, mmWave capacity).
        let g_nlos = IDEAL_ARRAY_GAIN_DB - 12.9;
        assert_near(snr_db(30.0, g_nlos, umi(false, 50.0), noise), 12.8, 0.1, "study (b) NLOS 50 m");
        assert_near(snr_db(30.0, g_nlos, umi(false, 100.0), noise), 2.3, 0.1, "study (b) NLOS 100 m");
        assert_near(snr_db(30.0, g_nlos, umi(false, 150.0), noise), -3.9, 0.1, "study (b) NLOS 150 m");
    }

    #[test]
    fn channel_sinr_is_tx_plus_gain_minus_loss_minus_noise() {
        let first_sample = |config, enb_pos_m, ue_pos_m, ue_speed_mps| {
            let mut ch = Channel::new(config, SimRng::stream(8, "c")).unwrap();
            ch.sample(&ChannelInput { now: SimTime::ZERO, enb_pos_m, ue_pos_m, ue_speed_mps, los: true })
        };
        // Study (a) start: eNB (0, 0, 30), UE (50, 15, 1.5): d3D = 59.47 m.
        let s = first_sample(ChannelConfig::mmw_v2(), [0.0, 0.0, 30.0], [50.0, 15.0, 1.5], 2.0);
        assert_near(s.path_loss_db, 96.9, 0.05, "study (a) PL");
        assert_near(s.sinr_db - s.bf_gain_db, 30.0 - 96.9 + 79.0, 0.05, "SNR − G");
        assert_eq!(s.fading_db, 0.0);
        assert_near(s.sinr_db - s.effective_sinr_db, nyu_selectivity_penalty_db(s.sinr_db), 1e-12, "penalty");
        let s = first_sample(ChannelConfig::mmw_v2_3gpp(), [0.0, 0.0, 10.0], [100.0, 0.0, 1.5], 0.0);
        assert_eq!(s.sinr_db, s.effective_sinr_db, "no penalty for 3GPP");
        assert_near(s.sinr_db - s.bf_gain_db + s.path_loss_db, 30.0 + 79.0, 0.05, "3GPP SNR");
    }

    #[test]
    fn bessel_j0_and_doppler_values() {
        for (x, j0) in [(0.0, 1.0), (1.0, 0.765_197_7), (2.404_825_6, 0.0), (5.0, -0.177_596_8), (10.0, -0.245_935_8)] {
            assert_near(bessel_j0(x), j0, 1e-6, &format!("J0({x})"));
        }
        assert_near(doppler_hz(2.0, 28e9), 187.0, 0.5, "2 m/s");
        assert_near(doppler_hz(1.4, 28e9), 131.0, 0.5, "1.4 m/s");
        assert_near(doppler_hz(30.0, 28e9), 2800.0, 0.5, "30 m/s");
        assert_near(bessel_j0(2.0 * PI * doppler_hz(2.0, 28e9) * 100e-6), 0.9966, 1e-4, "ρ per subframe at 2 m/s");
    }

    /// Linear fading power sampled every 100 µs.
    fn fading_powers(doppler: f64, k_db: Option<f64>, n: u64) -> Vec<f64> {
        let mut f = FastFading::default();
        let mut rng = SimRng::stream(6, "fading");
        (0..n).map(|i| db_to_lin(f.gain_db(SimTime(i * 100_000), doppler, k_db, &mut rng))).collect()
    }

    #[test]
    fn fast_fading_is_unit_power_with_jakes_step_correlation() {
        let lag1 = |p: &[f64]| correlation(&p.windows(2).map(|w| (w[0], w[1])).collect::<Vec<_>>());
        // 30 m/s: ρ = J0(2π·2800·100 µs) ≈ 0.39; Rayleigh power correlation is ρ².
        let fast = fading_powers(2800.0, None, 200_000);
        assert_near(mean_std(&fast).0, 1.0, 0.02, "Rayleigh mean power");
        let rho = bessel_j0(2.0 * PI * 2800.0 * 100e-6);
        assert_near(lag1(&fast), rho * rho, 0.02, "30 m/s step correlation");
        let deep = |p: &[f64]| p.iter().filter(|&&x| x < 0.1).count() as f64 / p.len() as f64;
        assert_near(deep(&fast), 1.0 - (-0.1f64).exp(), 0.005, "Rayleigh P(< −10 dB)");
        // 2 m/s: nearly frozen from one subframe to the next.
        assert!(lag1(&fading_powers(187.0, None, 50_000)) > 0.98);
        // Rician K = 9 dB in LOS: unit power, deep fades far rarer.
        let rician = fading_powers(2800.0, Some(LOS_RICIAN_K_DB), 200_000);
        assert_near(mean_std(&rician).0, 1.0, 0.02, "Rician mean power");
        assert!(deep(&rician) < deep(&fast) / 20.0, "Rician deep fades: {}", deep(&rician));
    }

    #[test]
    fn same_seed_same_samples_and_config_errors() {
        let run = |seed| {
            let cfg = ChannelConfig { fast_fading: true, ..ChannelConfig::mmw_v2_3gpp() };
            let mut ch = Channel::new(cfg, SimRng::stream(seed, "c")).unwrap();
            (0..500u64)
                .map(|i| {
                    ch.sample(&ChannelInput {
                        now: SimTime(i * 1_000_000),
                        enb_pos_m: [0.0, 0.0, 10.0],
                        ue_pos_m: [50.0, i as f64 * 0.01, 1.5],
                        ue_speed_mps: 10.0,
                        los: i % 200 < 100,
                    })
                })
                .collect::<Vec<_>>()
        };
        let a = run(1);
        assert_eq!(a, run(1));
        assert_ne!(a, run(2));
        assert!(a.iter().any(|s| s.fading_db != 0.0), "fast fading on");

        let err = |cfg| Channel::new(cfg, SimRng::stream(1, "c")).unwrap_err();
        let v2 = ChannelConfig::mmw_v2();
        assert_eq!(err(ChannelConfig { carrier_hz: 60e9, ..v2 }), ChannelConfigError::CarrierHz(60e9));
        let gpp = ChannelConfig { carrier_hz: 200e9, ..ChannelConfig::mmw_v2_3gpp() };
        assert_eq!(err(gpp), ChannelConfigError::CarrierHz(200e9));
        assert_eq!(err(ChannelConfig { bandwidth_hz: 0.0, ..v2 }), ChannelConfigError::BandwidthHz(0.0));
        let nan_power = err(ChannelConfig { tx_power_dbm: f64::NAN, ..v2 });
        assert_eq!(nan_power.to_string(), "transmit power NaN dBm: must be finite");
        assert_eq!(err(ChannelConfig { noise_figure_db: -1.0, ..v2 }), ChannelConfigError::NoiseFigureDb(-1.0));
        let at73 = Channel::new(ChannelConfig { carrier_hz: 73e9, ..v2 }, SimRng::stream(1, "c"));
        assert!(at73.is_ok(), "NYU 73 GHz is supported");
    }
}
