//! The `kind = "mmwave"` topology (docs/scenario-format.md, docs/models.md, 5G mmWave): a remote
//! host — SGi link — PGW — S1-U link — one mmWave eNB — UEs over the radio
//! (MmWavePointToPointEpcHelper). This file holds the schema types, the checks that need the
//! geometry (a UE path through a building, a building over the eNB, parameters the PHY refuses) and
//! the `CellConfig` they build.
//!
//! Node names: `remote` (host), `pgw` and `enb` (routers), one host per UE (`ue0`, `ue1`, …
//! unless named). The S1-U link carries GTP-U, whose 36 B per packet are not added (at
//! 10 Gb/s they change nothing the studies measure). A segment larger than the SGi MTU is
//! fragmented by the remote host (MmWavePointToPointEpcHelper): the cell splits it into IP fragments of that MTU.

use crate::error::ScenarioError;
use crate::link_spec::LinkSpec;
use crate::units::{DurationValue, FrequencyValue, SizeValue};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::{Rate, SimDuration, SimRng, SimTime};
use tcplab_net::mmwave::cell::CellConfig;
use tcplab_net::mmwave::channel::{Channel, ChannelConfig, ChannelConfigError, ChannelProfile};
use tcplab_net::mmwave::geometry::{building_containing, Building, LosTest, Position};
use tcplab_net::mmwave::mobility::{Mobility, Waypoint, WaypointPath};
use tcplab_net::mmwave::phy::{FrameConfig, Mcs, PhyError};
use tcplab_net::mmwave::rlc::RlcConfig;
use tcplab_net::mmwave::scheduler::SharingPolicy;

/// Node names of the core network, before the UEs.
pub const REMOTE: &str = "remote";
pub const PGW: &str = "pgw";
pub const ENB: &str = "enb";

/// Radio propagation profile (docs/models.md, profiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RadioProfile {
    /// ns3-mmwave V2.0: NYU path loss, building-obstacle blockage trace, NYU beamforming gain.
    #[serde(rename = "mmw-v2")]
    MmwV2,
    /// V2.0 PHY/MAC with the 3GPP TR 38.901 UMi-Street-Canyon path loss and shadowing.
    #[serde(rename = "mmw-v2-3gpp")]
    MmwV23gpp,
}

/// How the scheduler shares the subframe's symbols when demand exceeds them (MmWaveFlexTtiMacScheduler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerSpec {
    /// Equal max-min shares per flow (V2.0 FlexTTI).
    #[default]
    RoundRobin,
    /// Proportional fair over an averaging window of 100 subframes (10 ms).
    ProportionalFair,
}

/// Line-of-sight test (ns-3 buildings LOS test).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum LosTestSpec {
    /// Ground-plane footprints, building height ignored (the obstacle model of MMW-V2).
    #[serde(rename = "2d")]
    Footprint2d,
    /// 3-D segment against the building boxes (the 3GPP buildings model).
    #[serde(rename = "3d")]
    Box3d,
}

/// The base station.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnbSpec {
    /// [x, y, z] in metres.
    #[serde(default = "default_enb_position")]
    pub position: [f64; 3],
    /// Transmit power, dBm (ns3-mmwave V2.0 defaults: 30).
    #[serde(default = "default_tx_power")]
    pub tx_power_dbm: f64,
    /// Receiver noise figure, dB (ns3-mmwave V2.0 defaults: 5).
    #[serde(default = "default_noise_figure")]
    pub noise_figure_db: f64,
}

impl Default for EnbSpec {
    fn default() -> Self {
        EnbSpec { position: default_enb_position(), tx_power_dbm: default_tx_power(), noise_figure_db: default_noise_figure() }
    }
}

fn default_enb_position() -> [f64; 3] {
    [0.0, 0.0, 30.0]
}
fn default_tx_power() -> f64 {
    30.0
}
fn default_noise_figure() -> f64 {
    5.0
}

/// RLC AM of every bearer (LteRlcAm).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlcSpec {
    /// Transmission buffer of each downlink bearer at the eNB (MaxTxBufferSize, not yet
    /// transmitted bytes; tail drop beyond it). ns-3 default 1048576 B.
    #[serde(default = "default_rlc_buffer")]
    pub buffer: SizeValue,
    /// Transmission buffer of each UE's uplink bearer (default: `buffer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ul_buffer: Option<SizeValue>,
    /// t-Reordering (ns-3 default 10 ms; study (a) 2 ms).
    #[serde(default = "default_rlc_timer")]
    pub t_reordering: DurationValue,
    /// t-StatusProhibit (ns-3 default 10 ms; study (a) 1 ms).
    #[serde(default = "default_rlc_timer")]
    pub t_status_prohibit: DurationValue,
}

impl Default for RlcSpec {
    fn default() -> Self {
        RlcSpec { buffer: default_rlc_buffer(), ul_buffer: None, t_reordering: default_rlc_timer(), t_status_prohibit: default_rlc_timer() }
    }
}

fn default_rlc_buffer() -> SizeValue {
    SizeValue(1_048_576)
}
fn default_rlc_timer() -> DurationValue {
    DurationValue(SimDuration::from_millis(10))
}

/// A building: an axis-aligned box, metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildingSpec {
    pub x: [f64; 2],
    pub y: [f64; 2],
    pub z: [f64; 2],
}

/// A point of a UE's path: where it is at time `t` (it moves in a straight line between points).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaypointSpec {
    pub t: DurationValue,
    /// [x, y, z] in metres.
    pub position: [f64; 3],
}

/// One user: a waypoint path, or a start position with an optional constant velocity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UeSpec {
    /// Node name (default ue<i>).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Position at time 0, [x, y, z] in metres (with `velocity`, or alone for a UE that stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f64; 3]>,
    /// Constant velocity [vx, vy, vz] in m/s from `move_at` on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<[f64; 3]>,
    /// When a UE with a `velocity` starts moving (default 0 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_at: Option<DurationValue>,
    /// Piecewise-linear path; before the first point the UE is there, after the last it stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waypoints: Option<Vec<WaypointSpec>>,
}

/// A 5G mmWave cell with its core network (docs/models.md, 5G mmWave).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MmwaveTopology {
    /// "mmw-v2" (study siad-mmwave) or "mmw-v2-3gpp" (study mmwave-5cc).
    #[serde(default = "default_profile")]
    pub profile: RadioProfile,
    /// Carrier frequency (MMW-V2: 28GHz or 73GHz; MMW-V2-3GPP: 0.5 to 100 GHz).
    #[serde(default = "default_carrier")]
    pub carrier: FrequencyValue,
    /// Channel bandwidth (13.889 MHz chunks of 48 subcarriers; 1GHz = 72 chunks).
    #[serde(default = "default_bandwidth")]
    pub bandwidth: FrequencyValue,
    /// Line-of-sight test: "2d" (default for mmw-v2) or "3d" (default for mmw-v2-3gpp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub los_test: Option<LosTestSpec>,
    /// Sharing between UEs and directions: "round-robin" or "proportional-fair".
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    /// CqiTimerThreshold: subframes without a CQI report before CQI 1 is assumed (MmWaveFlexTtiMacScheduler: 100;
    /// study (a) 1000). Also how long a CQI of 0 stalls the downlink.
    #[serde(default = "default_cqi_timer")]
    pub cqi_timer_subframes: u32,
    /// HARQ round trip in subframes (MmWaveHarqPhy: about 5).
    #[serde(default = "default_harq_rtt")]
    pub harq_rtt_subframes: u32,
    /// Use this MCS (0 to 28) in both directions instead of adaptive modulation and coding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_mcs: Option<u32>,
    /// Add the small-scale fading layer (docs/models.md, fast fading) on top of the beamforming gain.
    #[serde(default)]
    pub fast_fading: bool,
    /// UE transmit power, dBm (ns3-mmwave V2.0 defaults: 30).
    #[serde(default = "default_tx_power")]
    pub ue_tx_power_dbm: f64,
    /// UE receiver noise figure, dB (ns3-mmwave V2.0 defaults: 5).
    #[serde(default = "default_noise_figure")]
    pub ue_noise_figure_db: f64,
    #[serde(default)]
    pub enb: EnbSpec,
    #[serde(default)]
    pub rlc: RlcSpec,
    /// SGi link remote host ↔ PGW (default 100 Gbps, 10 ms, MTU 1500, as the V2.0 example).
    #[serde(default = "default_remote")]
    pub remote: LinkSpec,
    /// S1-U link PGW ↔ eNB (MmWavePointToPointEpcHelper: 10 Gbps, 1 ms, MTU 2000).
    #[serde(default = "default_s1u")]
    pub s1u: LinkSpec,
    #[serde(default)]
    pub buildings: Vec<BuildingSpec>,
    pub ues: Vec<UeSpec>,
}

fn default_profile() -> RadioProfile {
    RadioProfile::MmwV2
}
fn default_carrier() -> FrequencyValue {
    FrequencyValue(28_000_000_000)
}
fn default_bandwidth() -> FrequencyValue {
    FrequencyValue(1_000_000_000)
}
fn default_cqi_timer() -> u32 {
    100
}
fn default_harq_rtt() -> u32 {
    5
}
fn default_remote() -> LinkSpec {
    LinkSpec::new(Rate::from_bps(100_000_000_000), SimDuration::from_millis(10))
}
fn default_s1u() -> LinkSpec {
    LinkSpec { mtu: 2000, ..LinkSpec::new(Rate::from_bps(10_000_000_000), SimDuration::from_millis(1)) }
}

/// Proportional-fair averaging window (10 ms of subframes).
const PF_WINDOW_SUBFRAMES: f64 = 100.0;

/// Transmit powers from 1 µW to 1 kW; outside 0–46 dBm (1 mW to 40 W) is unusual for a cell
/// whose reference profiles use 30 dBm at both ends (docs/models.md).
const TX_POWER_DBM: (f64, f64) = (-30.0, 60.0);
const USUAL_TX_POWER_DBM: (f64, f64) = (0.0, 46.0);
/// The urban-micro path-loss models hold up to 5 km from the base station (3GPP TR 38.901
/// Table 7.4.1-1, UMi-Street Canyon; the NYU fits of MMW-V2 come from shorter links).
const MAX_UE_DISTANCE_M: f64 = 5_000.0;
/// Both reference profiles use a 1 GHz channel (docs/models.md); wider is unusual.
const USUAL_MAX_BANDWIDTH_HZ: u64 = 1_000_000_000;
/// 500 km/h, the high-speed-train deployment of 3GPP TR 38.913 §6.1.5, the fastest it studies.
const USUAL_MAX_UE_SPEED_MPS: f64 = 500.0 / 3.6;

impl MmwaveTopology {
    /// The UE node names, in UE order.
    pub fn ue_names(&self) -> Vec<String> {
        self.ues.iter().enumerate().map(|(i, u)| u.name.clone().unwrap_or_else(|| format!("ue{i}"))).collect()
    }

    /// Every node name with whether it is a host: remote, pgw, enb, then the UEs.
    pub fn node_names(&self) -> Vec<(String, bool)> {
        let mut names = vec![(REMOTE.to_string(), true), (PGW.to_string(), false), (ENB.to_string(), false)];
        names.extend(self.ue_names().into_iter().map(|n| (n, true)));
        names
    }

    fn los_test(&self) -> LosTest {
        match self.los_test {
            Some(LosTestSpec::Footprint2d) => LosTest::Footprint2d,
            Some(LosTestSpec::Box3d) => LosTest::Box3d,
            None if self.profile == RadioProfile::MmwV2 => LosTest::Footprint2d,
            None => LosTest::Box3d,
        }
    }

    /// Fills the defaults that depend on other keys (the LOS test of the profile, the UL
    /// buffer, the UE names) and checks what the PHY, geometry and mobility can tell.
    pub fn resolve(&mut self, duration: SimDuration) -> Result<(), ScenarioError> {
        let err = |path: &str, msg: String| Err(ScenarioError::new(format!("topology.{path}"), msg));
        self.los_test.get_or_insert(match self.los_test() {
            LosTest::Footprint2d => LosTestSpec::Footprint2d,
            LosTest::Box3d => LosTestSpec::Box3d,
        });
        self.rlc.ul_buffer.get_or_insert(self.rlc.buffer);
        if self.ues.is_empty() {
            return err("ues", "is empty; at least one [[topology.ues]] entry is required".into());
        }
        for (i, name) in self.ue_names().iter().enumerate() {
            if name.is_empty() || [REMOTE, PGW, ENB].contains(&name.as_str()) || self.ue_names()[..i].contains(name) {
                return err(
                    &format!("ues.{i}.name"),
                    format!("{name:?} is empty, reserved (remote, pgw, enb) or used twice; UE names must be unique"),
                );
            }
            self.ues[i].name = Some(name.clone());
        }
        if self.cqi_timer_subframes == 0 {
            return err("cqi_timer_subframes", "must be at least 1 subframe (ns-3 default 100)".into());
        }
        if let Some(m) = self.fixed_mcs {
            Mcs::new(m).map_err(|e| ScenarioError::new("topology.fixed_mcs", e.to_string()))?;
        }
        self.frame().map_err(|(path, e)| ScenarioError::new(format!("topology.{path}"), e.to_string()))?;
        for (key, bytes) in [("buffer", self.rlc.buffer), ("ul_buffer", self.rlc.ul_buffer.expect("filled above"))] {
            if bytes.0 == 0 {
                return err(&format!("rlc.{key}"), "must be > 0 bytes, e.g. \"1MiB\"".into());
            }
        }
        if self.bandwidth.0 / 2 >= self.carrier.0 {
            return err(
                "bandwidth",
                format!(
                    "{} cannot be carried at {}: the channel would reach below 0 Hz; allowed: under twice the carrier",
                    self.bandwidth, self.carrier
                ),
            );
        }
        let buildings = self.buildings()?;
        let enb = position(self.enb.position);
        if !enb.is_finite() || enb.z_m < 0.0 {
            return err("enb.position", "coordinates must be finite numbers, the height (z) at least 0 m (the ground)".into());
        }
        if let Some(b) = building_containing(enb, &buildings) {
            return err(
                &format!("buildings.{b}"),
                format!("contains the eNB at {:?}; a base station cannot be inside a building", self.enb.position),
            );
        }
        let horizon = SimTime::ZERO + duration;
        for i in 0..self.ues.len() {
            let mobility = self.mobility(i)?;
            if let Some(entry) = mobility.first_building_entry(&buildings, horizon) {
                let key = if self.ues[i].waypoints.is_some() { "waypoints" } else { "position" };
                return err(
                    &format!("ues.{i}.{key}"),
                    format!(
                        "the UE's path enters building {} at t = {:.3} s; paths must go around buildings",
                        entry.building_index,
                        entry.time.as_secs_f64()
                    ),
                );
            }
        }
        for i in 0..self.ues.len() {
            let mobility = self.mobility(i)?;
            // Each leg is straight: its ends are its farthest and lowest points.
            let ends: Vec<(SimTime, Position)> = mobility
                .legs(SimTime::ZERO, horizon)
                .iter()
                .flat_map(|l| [(l.start, l.start_position), (l.end, mobility.position_at(l.end))])
                .collect();
            let key = if self.ues[i].waypoints.is_some() { "waypoints" } else { "position" };
            if let Some((t, p)) = ends.iter().find(|(_, p)| p.z_m < 0.0) {
                return err(
                    &format!("ues.{i}.{key}"),
                    format!("the UE is {:.1} m below the ground at t = {:.3} s; allowed: heights (z) from 0 m", -p.z_m, t.as_secs_f64()),
                );
            }
            let far = ends
                .iter()
                .map(|(t, p)| (*t, p.distance_m(enb)))
                .fold((SimTime::ZERO, 0.0), |far, here| if here.1 > far.1 { here } else { far });
            if far.1 > MAX_UE_DISTANCE_M {
                return err(
                    &format!("ues.{i}.{key}"),
                    format!(
                        "the UE is {:.0} m from the eNB at t = {:.3} s; allowed: within {MAX_UE_DISTANCE_M} m (the urban-micro path-loss models hold to 5 km, 3GPP TR 38.901 Table 7.4.1-1)",
                        far.1,
                        far.0.as_secs_f64()
                    ),
                );
            }
        }
        let (min_power, max_power) = TX_POWER_DBM;
        for (key, v) in [("enb.tx_power_dbm", self.enb.tx_power_dbm), ("ue_tx_power_dbm", self.ue_tx_power_dbm)] {
            if !(min_power..=max_power).contains(&v) {
                return err(key, format!("{v} dBm is out of range; allowed: {min_power} to {max_power} dBm (1 µW to 1 kW)"));
            }
        }
        for (key, v) in [("enb.noise_figure_db", self.enb.noise_figure_db), ("ue_noise_figure_db", self.ue_noise_figure_db)] {
            if !(v >= 0.0 && v.is_finite()) {
                return err(key, format!("{v} dB is out of range; allowed: a finite number ≥ 0 dB (no receiver adds less than no noise)"));
            }
        }
        let config = self.cell_config(SimTime::ZERO + duration, 1500)?;
        Channel::new(config.channel, SimRng::stream(0, "check")).map_err(|e| {
            let key = match e {
                ChannelConfigError::CarrierHz(_) => "carrier",
                ChannelConfigError::BandwidthHz(_) => "bandwidth",
                ChannelConfigError::TxPowerDbm(_) => "enb.tx_power_dbm",
                ChannelConfigError::NoiseFigureDb(_) => "ue_noise_figure_db",
            };
            ScenarioError::new(format!("topology.{key}"), e.to_string())
        })?;
        Ok(())
    }

    /// What is allowed but unusual (see `resolve::warnings`); `self` is resolved.
    pub fn warnings(&self, duration: SimDuration) -> Vec<String> {
        let mut out = Vec::new();
        if self.bandwidth.0 > USUAL_MAX_BANDWIDTH_HZ {
            out.push(format!("topology.bandwidth: {} is wider than the 1GHz of both reference profiles (docs/models.md)", self.bandwidth));
        }
        let (low, high) = USUAL_TX_POWER_DBM;
        for (key, v) in [("enb.tx_power_dbm", self.enb.tx_power_dbm), ("ue_tx_power_dbm", self.ue_tx_power_dbm)] {
            if !(low..=high).contains(&v) {
                out.push(format!("topology.{key}: {v} dBm is unusual for a cell (usual: {low} to {high} dBm; the reference profiles use 30 dBm, docs/models.md)"));
            }
        }
        for i in 0..self.ues.len() {
            let mobility = self.mobility(i).expect("checked in resolve");
            let fastest = mobility.legs(SimTime::ZERO, SimTime::ZERO + duration).iter().map(|l| l.velocity.speed_mps()).fold(0.0, f64::max);
            if fastest > USUAL_MAX_UE_SPEED_MPS {
                let key = if self.ues[i].waypoints.is_some() { "waypoints" } else { "velocity" };
                out.push(format!(
                    "topology.ues.{i}.{key}: the UE moves at {fastest:.0} m/s, faster than 3GPP's fastest deployment (a high-speed train, 500 km/h = {USUAL_MAX_UE_SPEED_MPS:.0} m/s, TR 38.913)"
                ));
            }
        }
        out
    }

    fn frame(&self) -> Result<FrameConfig, (&'static str, PhyError)> {
        let frame = FrameConfig::mmw_v2(self.carrier.hz(), self.bandwidth.hz()).map_err(|e| match e {
            PhyError::InvalidCarrier { .. } => ("carrier", e),
            _ => ("bandwidth", e),
        })?;
        frame.with_harq_rtt_subframes(self.harq_rtt_subframes).map_err(|e| ("harq_rtt_subframes", e))
    }

    fn buildings(&self) -> Result<Vec<Building>, ScenarioError> {
        self.buildings
            .iter()
            .enumerate()
            .map(|(i, b)| Building::new(b.x, b.y, b.z).map_err(|e| ScenarioError::new(format!("topology.buildings.{i}"), e.to_string())))
            .collect()
    }

    fn mobility(&self, i: usize) -> Result<Mobility, ScenarioError> {
        let u = &self.ues[i];
        let path = |key: &str| format!("topology.ues.{i}.{key}");
        match (&u.waypoints, u.position) {
            (Some(_), Some(_)) => {
                Err(ScenarioError::new(path("position"), "give either waypoints or a position (with an optional velocity), not both"))
            }
            (None, None) => {
                Err(ScenarioError::new(path("position"), "missing; a UE needs a position (optionally with a velocity) or waypoints"))
            }
            (Some(points), None) => {
                if u.velocity.is_some() || u.move_at.is_some() {
                    return Err(ScenarioError::new(path("velocity"), "velocity and move_at go with position, not with waypoints"));
                }
                let waypoints = points.iter().map(|w| Waypoint { time: SimTime::ZERO + w.t.0, position: position(w.position) }).collect();
                WaypointPath::new(waypoints).map(Mobility::Waypoints).map_err(|e| ScenarioError::new(path("waypoints"), e.to_string()))
            }
            (None, Some(p)) => {
                let start = position(p);
                if !start.is_finite() {
                    return Err(ScenarioError::new(path("position"), "coordinates must be finite numbers"));
                }
                match u.velocity {
                    None if u.move_at.is_some() => Err(ScenarioError::new(path("move_at"), "needs a velocity")),
                    None => Ok(Mobility::Stationary(start)),
                    Some(v) if v.iter().any(|c| !c.is_finite()) => {
                        Err(ScenarioError::new(path("velocity"), "components must be finite numbers (m/s)"))
                    }
                    Some(v) => Ok(Mobility::ConstantVelocity {
                        start_time: SimTime::ZERO + u.move_at.map_or(SimDuration::ZERO, |d| d.0),
                        start_position: start,
                        velocity: tcplab_net::mmwave::geometry::Velocity { x_mps: v[0], y_mps: v[1], z_mps: v[2] },
                    }),
                }
            }
        }
    }

    /// The cell of a resolved topology, its LOS timelines computed up to `horizon`;
    /// `ip_mtu` is the size the remote host and the UEs fragment to.
    pub fn cell_config(&self, horizon: SimTime, ip_mtu: u32) -> Result<CellConfig, ScenarioError> {
        let profile = match self.profile {
            RadioProfile::MmwV2 => ChannelProfile::MmwV2,
            RadioProfile::MmwV23gpp => ChannelProfile::MmwV2ThreeGpp,
        };
        let channel = ChannelConfig {
            profile,
            carrier_hz: self.carrier.hz(),
            bandwidth_hz: self.bandwidth.hz(),
            tx_power_dbm: self.enb.tx_power_dbm,
            noise_figure_db: self.ue_noise_figure_db,
            fast_fading: self.fast_fading,
        };
        let rlc = |buffer: SizeValue| RlcConfig {
            max_tx_buffer_bytes: buffer.0,
            t_reordering: self.rlc.t_reordering.0,
            t_status_prohibit: self.rlc.t_status_prohibit.0,
        };
        Ok(CellConfig {
            channel,
            frame: self.frame().map_err(|(path, e)| ScenarioError::new(format!("topology.{path}"), e.to_string()))?,
            rlc: rlc(self.rlc.buffer),
            ul_rlc: rlc(self.rlc.ul_buffer.unwrap_or(self.rlc.buffer)),
            cqi_threshold_subframes: self.cqi_timer_subframes,
            policy: match self.scheduler {
                SchedulerSpec::RoundRobin => SharingPolicy::RoundRobin,
                SchedulerSpec::ProportionalFair => SharingPolicy::ProportionalFair { window_subframes: PF_WINDOW_SUBFRAMES },
            },
            fixed_mcs: self.fixed_mcs.map(|m| Mcs::new(m).expect("checked in resolve")),
            enb_position: position(self.enb.position),
            buildings: self.buildings()?,
            los_test: self.los_test(),
            horizon,
            ues: (0..self.ues.len()).map(|i| self.mobility(i)).collect::<Result<_, _>>()?,
            ip_mtu,
            ue_tx_power_dbm: self.ue_tx_power_dbm,
            enb_noise_figure_db: self.enb.noise_figure_db,
        })
    }
}

fn position(p: [f64; 3]) -> Position {
    Position::new(p[0], p[1], p[2])
}
