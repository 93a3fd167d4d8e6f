//! Node mobility for the mmWave cell (ns-3 ConstantVelocity/WaypointMobilityModel) and the LOS/NLOS
//! timeline of a moving UE (ns-3 buildings LOS test geometry applied along the track; the channel
//! drives its blockage model from it, BuildingsObstaclePropagationLossModel and TR 38.901 UMi-SC).
//!
//! - `Mobility::Stationary`, `Mobility::ConstantVelocity` (p(t) = p0 + v·(t − t0) from t0 on,
//!   at p0 before) and `Mobility::Waypoints` (piecewise-linear between (time, position)
//!   waypoints; at the first waypoint before it, at the last one after it). A velocity change at
//!   a scheduled instant (the V2.0 example: start at 2 s, stop at 22 s) and a pause are both
//!   waypoint paths; `WaypointPath::then_pause` / `then_move_to` build them.
//! - `LosTimeline` holds the exact NLOS intervals of a track against a set of buildings,
//!   computed per straight leg with `Building::shadow_interval_s` (no sampling, so no blockage
//!   is missed however short). Interval ends are rounded to the nanosecond.
//! - `Mobility::first_building_entry` finds a track that goes through a building (scenario
//!   validation).
//!
//! Choices and simplifications (reported):
//! - Waypoint times must be strictly increasing (ns-3 would accept equal times, i.e. a jump).
//! - An NLOS interval is half-open, NLOS for start ≤ t < end. The geometric test is on the open
//!   box (geometry.rs), so at the transition instant itself `geometry::is_los` may disagree with
//!   the timeline; the two agree everywhere else.
//! - Blockage that only grazes a building (a single instant, or a track sliding along the
//!   boundary of a shadow) is not an NLOS interval.
//! - The speed used for Doppler (MmWaveBeamforming quirk: vx + vy + vz) is the channel's business;
//!   `velocity_at` gives the vector.

use std::fmt;

use tcplab_core::{SimDuration, SimTime};

use super::geometry::{Building, LosTest, Position, Velocity};

/// A duration in seconds, divided exactly (whole milliseconds give exact seconds, which
/// `as_secs_f64`'s multiplication by 1e-9 does not).
fn secs(d: SimDuration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// One (time, position) point of a waypoint path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waypoint {
    pub time: SimTime,
    pub position: Position,
}

/// A bad mobility description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MobilityError {
    /// A waypoint path needs at least one waypoint.
    NoWaypoints,
    /// Waypoint `index` has a NaN or infinite coordinate.
    NonFinitePosition { index: usize },
    /// Waypoint `index` is not later than the one before it.
    TimeNotIncreasing { index: usize },
    /// `then_move_to` needs a finite speed > 0.
    BadSpeed { speed_mps: f64 },
}

impl fmt::Display for MobilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MobilityError::NoWaypoints => write!(f, "a waypoint path needs at least one waypoint"),
            MobilityError::NonFinitePosition { index } => {
                write!(f, "waypoint {index}: coordinates must be finite numbers")
            }
            MobilityError::TimeNotIncreasing { index } => {
                write!(f, "waypoint {index}: time must be later than the previous waypoint's")
            }
            MobilityError::BadSpeed { speed_mps } => {
                write!(f, "speed {speed_mps} m/s: must be a finite number above 0")
            }
        }
    }
}

/// A validated waypoint path: non-empty, finite positions, strictly increasing times.
#[derive(Clone, Debug, PartialEq)]
pub struct WaypointPath {
    waypoints: Vec<Waypoint>,
}

impl WaypointPath {
    pub fn new(waypoints: Vec<Waypoint>) -> Result<WaypointPath, MobilityError> {
        if waypoints.is_empty() {
            return Err(MobilityError::NoWaypoints);
        }
        for (index, w) in waypoints.iter().enumerate() {
            if !w.position.is_finite() {
                return Err(MobilityError::NonFinitePosition { index });
            }
            if index > 0 && w.time <= waypoints[index - 1].time {
                return Err(MobilityError::TimeNotIncreasing { index });
            }
        }
        Ok(WaypointPath { waypoints })
    }

    /// Appends a stop of `duration` at the current end of the path (no-op for zero).
    pub fn then_pause(mut self, duration: SimDuration) -> WaypointPath {
        let last = self.last();
        if duration > SimDuration::ZERO {
            self.waypoints.push(Waypoint { time: last.time + duration, position: last.position });
        }
        self
    }

    /// Appends a straight move from the current end of the path to `to` at `speed_mps`; the
    /// arrival time is rounded to the nanosecond. Moving to the current end position is a no-op.
    pub fn then_move_to(mut self, to: Position, speed_mps: f64) -> Result<WaypointPath, MobilityError> {
        if !(speed_mps.is_finite() && speed_mps > 0.0) {
            return Err(MobilityError::BadSpeed { speed_mps });
        }
        if !to.is_finite() {
            return Err(MobilityError::NonFinitePosition { index: self.waypoints.len() });
        }
        let last = self.last();
        let travel_ns = (last.position.distance_m(to) / speed_mps * 1e9).round();
        if travel_ns >= 1.0 {
            self.waypoints.push(Waypoint { time: last.time + SimDuration::from_nanos(travel_ns as u64), position: to });
        }
        Ok(self)
    }

    pub fn waypoints(&self) -> &[Waypoint] {
        &self.waypoints
    }

    fn last(&self) -> Waypoint {
        self.waypoints[self.waypoints.len() - 1]
    }

    /// Number of waypoints at or before `t`: `t` lies on the segment that starts at waypoint
    /// `i − 1` (before the path if 0, after it if `len`).
    fn segment_after(&self, t: SimTime) -> usize {
        self.waypoints.partition_point(|w| w.time <= t)
    }
}

/// How a node moves (ns-3 ConstantVelocity/WaypointMobilityModel).
#[derive(Clone, Debug, PartialEq)]
pub enum Mobility {
    Stationary(Position),
    /// At `start_position` until `start_time`, then moving at `velocity` for ever.
    ConstantVelocity {
        start_time: SimTime,
        start_position: Position,
        velocity: Velocity,
    },
    Waypoints(WaypointPath),
}

/// A straight piece of a track: from `start_position` at `start`, moving at `velocity` until
/// `end`. `waypoint_index` is the waypoint the piece starts from (0 for the other models).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg {
    pub start: SimTime,
    pub end: SimTime,
    pub start_position: Position,
    pub velocity: Velocity,
    pub waypoint_index: usize,
}

/// Where a track first goes inside a building.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildingEntry {
    /// Index into the buildings slice.
    pub building_index: usize,
    /// The waypoint whose segment enters (0 for stationary / constant-velocity nodes).
    pub waypoint_index: usize,
    /// When the node is first inside (0-based simulated time, rounded down to the ns).
    pub time: SimTime,
}

impl Mobility {
    pub fn position_at(&self, t: SimTime) -> Position {
        match self {
            Mobility::Stationary(p) => *p,
            Mobility::ConstantVelocity { start_time, start_position, velocity } => {
                start_position.moved(*velocity, secs(t.saturating_since(*start_time)))
            }
            Mobility::Waypoints(path) => {
                let w = path.waypoints();
                match path.segment_after(t) {
                    0 => w[0].position,
                    i if i == w.len() => w[i - 1].position,
                    i => {
                        let (a, b) = (w[i - 1], w[i]);
                        let elapsed_s = secs(t - a.time);
                        a.position.moved(Velocity::between(a.position, b.position, secs(b.time - a.time)), elapsed_s)
                    }
                }
            }
        }
    }

    /// Velocity at `t`; at a waypoint or a start instant, the velocity of the piece that begins there.
    pub fn velocity_at(&self, t: SimTime) -> Velocity {
        match self {
            Mobility::Stationary(_) => Velocity::ZERO,
            Mobility::ConstantVelocity { start_time, velocity, .. } => {
                if t >= *start_time {
                    *velocity
                } else {
                    Velocity::ZERO
                }
            }
            Mobility::Waypoints(path) => {
                let w = path.waypoints();
                match path.segment_after(t) {
                    0 => Velocity::ZERO,
                    i if i == w.len() => Velocity::ZERO,
                    i => Velocity::between(w[i - 1].position, w[i].position, secs(w[i].time - w[i - 1].time)),
                }
            }
        }
    }

    /// The straight pieces of the track within [`from`, `to`), in time order, none empty.
    pub fn legs(&self, from: SimTime, to: SimTime) -> Vec<Leg> {
        // Candidate pieces as (start, end, waypoint index); clipped below.
        let pieces: Vec<(SimTime, SimTime, usize)> = match self {
            Mobility::Stationary(_) => vec![(SimTime::ZERO, SimTime::MAX, 0)],
            Mobility::ConstantVelocity { start_time, .. } => {
                vec![(SimTime::ZERO, *start_time, 0), (*start_time, SimTime::MAX, 0)]
            }
            Mobility::Waypoints(path) => {
                let w = path.waypoints();
                let n = w.len();
                (0..=n)
                    .map(|i| {
                        let start = if i == 0 { SimTime::ZERO } else { w[i - 1].time };
                        let end = if i == n { SimTime::MAX } else { w[i].time };
                        (start, end, i.saturating_sub(1).min(n - 1))
                    })
                    .collect()
            }
        };
        pieces
            .into_iter()
            .filter_map(|(start, end, waypoint_index)| {
                let (start, end) = (start.max(from), end.min(to));
                (start < end).then(|| Leg {
                    start,
                    end,
                    start_position: self.position_at(start),
                    velocity: self.velocity_at(start),
                    waypoint_index,
                })
            })
            .collect()
    }

    /// The first time in [0, `until`) the node is strictly inside a building, if ever
    /// (scenario validation: "a UE path through a building").
    pub fn first_building_entry(&self, buildings: &[Building], until: SimTime) -> Option<BuildingEntry> {
        self.legs(SimTime::ZERO, until).into_iter().find_map(|leg| {
            let end_position = leg.start_position.moved(leg.velocity, secs(leg.end - leg.start));
            buildings
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.segment_entry_fraction(leg.start_position, end_position).map(|f| (f, i)))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(fraction, building_index)| BuildingEntry {
                    building_index,
                    waypoint_index: leg.waypoint_index,
                    time: leg.start + SimDuration::from_nanos((fraction * (leg.end - leg.start).as_nanos() as f64) as u64),
                })
        })
    }
}

/// NLOS for `start` ≤ t < `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NlosInterval {
    pub start: SimTime,
    pub end: SimTime,
}

/// The exact LOS/NLOS history of one eNB→UE link over [`start`, `end`): sorted, disjoint,
/// non-adjacent NLOS intervals. Queries are O(log n) and allocation-free.
#[derive(Clone, Debug, PartialEq)]
pub struct LosTimeline {
    nlos: Vec<NlosInterval>,
    end: SimTime,
}

impl LosTimeline {
    /// Computes the NLOS intervals of `ue` seen from a fixed `enb` behind `buildings`.
    pub fn compute(test: LosTest, enb: Position, ue: &Mobility, buildings: &[Building], start: SimTime, end: SimTime) -> LosTimeline {
        let mut raw: Vec<NlosInterval> = Vec::new();
        for leg in ue.legs(start, end) {
            let leg_ns = (leg.end - leg.start).as_nanos();
            let at = |tau_s: f64| leg.start + SimDuration::from_nanos(((tau_s * 1e9).round() as u64).min(leg_ns));
            for b in buildings {
                if let Some((lo, hi)) = b.shadow_interval_s(test, enb, leg.start_position, leg.velocity, leg_ns as f64 / 1e9) {
                    raw.push(NlosInterval { start: at(lo), end: at(hi) });
                }
            }
        }
        raw.sort_unstable_by_key(|iv| (iv.start, iv.end));
        let mut nlos: Vec<NlosInterval> = Vec::with_capacity(raw.len());
        for iv in raw.into_iter().filter(|iv| iv.start < iv.end) {
            match nlos.last_mut() {
                Some(last) if iv.start <= last.end => last.end = last.end.max(iv.end),
                _ => nlos.push(iv),
            }
        }
        LosTimeline { nlos, end }
    }

    pub fn nlos_intervals(&self) -> &[NlosInterval] {
        &self.nlos
    }

    /// Index of the first interval that ends after `t`.
    fn interval_after(&self, t: SimTime) -> usize {
        self.nlos.partition_point(|iv| iv.end <= t)
    }

    /// Line of sight at `t` (meaningful inside the computed span).
    pub fn is_los_at(&self, t: SimTime) -> bool {
        self.nlos.get(self.interval_after(t)).is_none_or(|iv| iv.start > t)
    }

    /// The first LOS↔NLOS switch strictly after `t` and before the end of the computed span.
    pub fn next_transition_after(&self, t: SimTime) -> Option<SimTime> {
        let iv = self.nlos.get(self.interval_after(t))?;
        let next = if iv.start > t { iv.start } else { iv.end };
        (next < self.end).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::geometry::is_los;
    use super::super::test_support::{building_a, path, s, study_a_track, ue_a, BOTH, ENB_A};
    use super::*;
    use tcplab_core::SimRng;

    fn assert_close(t: SimTime, expected_s: f64, tol_s: f64) {
        assert!((t.as_nanos() as f64 / 1e9 - expected_s).abs() <= tol_s, "{t:?} vs {expected_s} s");
    }

    #[test]
    fn waypoint_interpolation_and_clamping() {
        let ue = study_a_track();
        assert_eq!(ue.position_at(s(7.5)), ue_a(0.0));
        assert_eq!(ue.position_at(s(2.5)), ue_a(10.0));
        assert_eq!(ue.position_at(s(15.0)), ue_a(-15.0));
        assert_eq!(ue.position_at(s(20.0)), ue_a(-15.0));
        assert_eq!(ue.velocity_at(s(3.0)), Velocity::new(0.0, -2.0, 0.0));
        assert_eq!(ue.velocity_at(s(15.0)), Velocity::ZERO);
        // Before the first waypoint the node waits there.
        let late = path(&[(2.0, ue_a(15.0)), (4.0, ue_a(11.0))]);
        assert_eq!(late.position_at(s(1.0)), ue_a(15.0));
        assert_eq!(late.velocity_at(s(1.0)), Velocity::ZERO);
        assert_eq!(late.velocity_at(s(2.0)), Velocity::new(0.0, -2.0, 0.0));
        assert_eq!(late.position_at(s(3.0)), ue_a(13.0));
    }

    #[test]
    fn constant_velocity_and_stationary() {
        let ue = Mobility::ConstantVelocity { start_time: s(2.0), start_position: ue_a(0.0), velocity: Velocity::new(0.0, 1.5, 0.0) };
        assert_eq!(ue.position_at(s(1.0)), ue_a(0.0));
        assert_eq!(ue.position_at(s(4.0)), ue_a(3.0));
        assert_eq!(ue.velocity_at(s(1.999)), Velocity::ZERO);
        assert_eq!(ue.velocity_at(s(2.0)).speed_mps(), 1.5);
        let node = Mobility::Stationary(ENB_A);
        assert_eq!(node.position_at(s(100.0)), ENB_A);
        assert_eq!(node.velocity_at(s(100.0)), Velocity::ZERO);
    }

    #[test]
    fn v2_building_example_track() {
        // docs/models.md, profiles: UE at (150, −0.2, 1), +1.5 m/s in y from 2 s to 22 s.
        let start = Position::new(150.0, -0.2, 1.0);
        let wp = WaypointPath::new(vec![Waypoint { time: SimTime::ZERO, position: start }])
            .unwrap()
            .then_pause(SimDuration::from_secs(2))
            .then_move_to(Position::new(150.0, 29.8, 1.0), 1.5)
            .unwrap();
        assert_eq!(wp.waypoints().last().unwrap().time, s(22.0));
        let ue = Mobility::Waypoints(wp);
        assert_eq!(ue.position_at(s(1.0)), start);
        let mid = ue.position_at(s(12.0));
        assert!((mid.y_m - 14.8).abs() < 1e-9 && mid.x_m == 150.0 && mid.z_m == 1.0);
        assert_eq!(ue.position_at(s(30.0)), Position::new(150.0, 29.8, 1.0));
        assert_eq!(ue.velocity_at(s(5.0)), Velocity::new(0.0, 1.5, 0.0));
    }

    #[test]
    fn study_a_nlos_from_5_to_10_s() {
        let v = Velocity::new(0.0, -2.0, 0.0);
        let tracks = [study_a_track(), Mobility::ConstantVelocity { start_time: SimTime::ZERO, start_position: ue_a(15.0), velocity: v }];
        for test in BOTH {
            for ue in &tracks {
                let tl = LosTimeline::compute(test, ENB_A, ue, &[building_a()], SimTime::ZERO, s(15.0));
                let [iv] = tl.nlos_intervals() else { panic!("{test:?} {:?}", tl.nlos_intervals()) };
                assert_close(iv.start, 5.0, 1e-3);
                assert_close(iv.end, 10.0, 1e-3);
                assert!(tl.is_los_at(s(4.999)) && !tl.is_los_at(s(5.001)));
                assert!(!tl.is_los_at(s(9.999)) && tl.is_los_at(s(10.001)));
                assert_eq!(tl.next_transition_after(SimTime::ZERO), Some(iv.start));
                assert_eq!(tl.next_transition_after(iv.start), Some(iv.end));
                assert_eq!(tl.next_transition_after(iv.end), None);
            }
        }
    }

    #[test]
    fn pause_inside_the_shadow_merges_into_one_interval() {
        // y: 15 → 0 in 7.5 s, stop 5 s, 0 → −15 in 7.5 s. NLOS while |y| < 5: 5 s to 15 s,
        // spanning three legs.
        let wp = WaypointPath::new(vec![Waypoint { time: SimTime::ZERO, position: ue_a(15.0) }])
            .unwrap()
            .then_move_to(ue_a(0.0), 2.0)
            .unwrap()
            .then_pause(SimDuration::from_secs(5))
            .then_move_to(ue_a(-15.0), 2.0)
            .unwrap();
        assert_eq!(wp.waypoints().len(), 4);
        let ue = Mobility::Waypoints(wp);
        assert_eq!(ue.position_at(s(10.0)), ue_a(0.0));
        assert_eq!(ue.velocity_at(s(10.0)), Velocity::ZERO);
        let tl = LosTimeline::compute(LosTest::Footprint2d, ENB_A, &ue, &[building_a()], SimTime::ZERO, s(20.0));
        assert_eq!(tl.nlos_intervals(), &[NlosInterval { start: s(5.0), end: s(15.0) }]);
    }

    #[test]
    fn pause_on_the_shadow_edge_stays_los() {
        // Stops for 3 s exactly at y = 5 (grazing the building's corner), then walks back.
        let ue = path(&[(0.0, ue_a(15.0)), (5.0, ue_a(5.0)), (8.0, ue_a(5.0)), (13.0, ue_a(15.0))]);
        let tl = LosTimeline::compute(LosTest::Box3d, ENB_A, &ue, &[building_a()], SimTime::ZERO, s(13.0));
        assert!(tl.nlos_intervals().is_empty());
        assert!(tl.is_los_at(s(6.0)));
        assert_eq!(tl.next_transition_after(SimTime::ZERO), None);
    }

    #[test]
    fn stationary_ue_and_horizon_clipping() {
        let b = [building_a()];
        let hidden = LosTimeline::compute(LosTest::Box3d, ENB_A, &Mobility::Stationary(ue_a(0.0)), &b, s(1.0), s(3.0));
        assert_eq!(hidden.nlos_intervals(), &[NlosInterval { start: s(1.0), end: s(3.0) }]);
        assert!(!hidden.is_los_at(s(2.0)));
        // The clipped end is not a transition.
        assert_eq!(hidden.next_transition_after(s(1.0)), None);
        let seen = LosTimeline::compute(LosTest::Box3d, ENB_A, &Mobility::Stationary(ue_a(10.0)), &b, s(1.0), s(3.0));
        assert!(seen.nlos_intervals().is_empty() && seen.is_los_at(s(2.0)));
        // Study (a) track seen over [6, 8): NLOS throughout.
        let tl = LosTimeline::compute(LosTest::Box3d, ENB_A, &study_a_track(), &b, s(6.0), s(8.0));
        assert_eq!(tl.nlos_intervals(), &[NlosInterval { start: s(6.0), end: s(8.0) }]);
    }

    #[test]
    fn two_buildings_give_two_intervals_and_overlaps_merge() {
        // Second building on the other side: x∈[40, 45], y∈[−12, −8] blocks 0.8·y∈(−12, −8)
        // at x = 40 … 0.9·y at x = 45, i.e. y∈(−15, −8.89): t∈(11.94, 15) s.
        let far = Building::new([40.0, 45.0], [-12.0, -8.0], [0.0, 30.0]).unwrap();
        let tl = LosTimeline::compute(LosTest::Footprint2d, ENB_A, &study_a_track(), &[building_a(), far], SimTime::ZERO, s(15.0));
        let [a, b] = tl.nlos_intervals() else { panic!("{:?}", tl.nlos_intervals()) };
        assert_eq!((a.start, a.end), (s(5.0), s(10.0)));
        assert_close(b.start, (15.0 + 8.0 / 0.9) / 2.0, 1e-6);
        assert_eq!(b.end, s(15.0));
        assert_eq!(tl.next_transition_after(s(10.0)), Some(b.start));
        // Overlapping shadows (y∈[−6, 0] shifts the lower edge): one interval 5 s … 11.25 s.
        let overlap = Building::new([40.0, 45.0], [-6.0, 0.0], [0.0, 30.0]).unwrap();
        let tl = LosTimeline::compute(LosTest::Footprint2d, ENB_A, &study_a_track(), &[building_a(), overlap], SimTime::ZERO, s(15.0));
        assert_eq!(tl.nlos_intervals(), &[NlosInterval { start: s(5.0), end: s(11.25) }]);
    }

    #[test]
    fn timeline_agrees_with_pointwise_test_on_random_scenes() {
        let mut rng = SimRng::stream(7, "geometry-check");
        let mut u = |lo: f64, hi: f64| lo + (hi - lo) * rng.next_f64();
        let mut transitions = 0;
        for scene in 0..150 {
            let enb = Position::new(u(-20.0, 20.0), u(-20.0, 20.0), u(3.0, 30.0));
            let buildings: Vec<Building> = (0..3)
                .map(|_| {
                    let (x, y, w, d) = (u(-60.0, 60.0), u(-60.0, 60.0), u(1.0, 15.0), u(1.0, 15.0));
                    Building::new([x, x + w], [y, y + d], [0.0, u(2.0, 40.0)]).unwrap()
                })
                .filter(|b| !b.contains(enb))
                .collect();
            let mut time_s = u(0.0, 3.0);
            let points: Vec<(f64, Position)> = (0..4)
                .map(|_| {
                    time_s += u(1.0, 8.0);
                    (time_s, Position::new(u(-80.0, 80.0), u(-80.0, 80.0), u(1.0, 2.0)))
                })
                .collect();
            let ue = path(&points);
            for test in BOTH {
                let tl = LosTimeline::compute(test, enb, &ue, &buildings, SimTime::ZERO, s(30.0));
                transitions += tl.nlos_intervals().len();
                let near_boundary =
                    |t: SimTime| tl.nlos_intervals().iter().any(|iv| iv.start.0.abs_diff(t.0) < 1_000 || iv.end.0.abs_diff(t.0) < 1_000);
                for ms in 0..30_000 {
                    let t = SimTime(ms * 1_000_000 + 123_457);
                    if !near_boundary(t) {
                        let expected = is_los(test, enb, ue.position_at(t), &buildings);
                        assert_eq!(tl.is_los_at(t), expected, "scene {scene} {test:?} t={t:?}");
                    }
                }
            }
        }
        assert!(transitions > 50, "the scenes should exercise blockage ({transitions})");
    }

    #[test]
    fn path_through_a_building_is_reported() {
        let b = building_a();
        let other = Building::new([100.0, 110.0], [0.0, 10.0], [0.0, 5.0]).unwrap();
        // Second segment (from waypoint 1) crosses x = 40 at t = 10 s + 10 s·(40−30)/30.
        let ue =
            path(&[(0.0, Position::new(30.0, 20.0, 1.5)), (10.0, Position::new(30.0, 0.0, 1.5)), (40.0, Position::new(60.0, 0.0, 1.5))]);
        let hit = ue.first_building_entry(&[other, b], s(100.0)).unwrap();
        assert_eq!((hit.building_index, hit.waypoint_index), (1, 1));
        assert_close(hit.time, 10.0 + 10.0, 1e-6);
        // Not yet by 15 s.
        assert_eq!(ue.first_building_entry(&[other, b], s(15.0)), None);
        // Walking along a wall (y = 4 face) is not inside; over the roof neither.
        let along = path(&[(0.0, Position::new(30.0, 4.0, 1.5)), (10.0, Position::new(60.0, 4.0, 1.5))]);
        assert_eq!(along.first_building_entry(&[b], s(20.0)), None);
        let above = path(&[(0.0, Position::new(30.0, 0.0, 31.0)), (10.0, Position::new(60.0, 0.0, 31.0))]);
        assert_eq!(above.first_building_entry(&[b], s(20.0)), None);
        // Standing inside from the start, and a constant-velocity UE driving into it at 4 s.
        let inside = Mobility::Stationary(Position::new(42.0, 0.0, 1.5));
        assert_eq!(
            inside.first_building_entry(&[b], s(1.0)),
            Some(BuildingEntry { building_index: 0, waypoint_index: 0, time: SimTime::ZERO })
        );
        let car = Mobility::ConstantVelocity {
            start_time: s(1.0),
            start_position: Position::new(10.0, 0.0, 1.5),
            velocity: Velocity::new(10.0, 0.0, 0.0),
        };
        let hit = car.first_building_entry(&[b], s(60.0)).unwrap();
        assert_close(hit.time, 4.0, 1e-6);
        // Study-(a) track passes behind the building without entering it.
        assert_eq!(study_a_track().first_building_entry(&[b], s(15.0)), None);
    }

    #[test]
    fn bad_paths_are_rejected() {
        let p = ue_a(0.0);
        assert_eq!(WaypointPath::new(vec![]), Err(MobilityError::NoWaypoints));
        let same_time = vec![Waypoint { time: s(1.0), position: p }, Waypoint { time: s(1.0), position: ue_a(1.0) }];
        assert_eq!(WaypointPath::new(same_time), Err(MobilityError::TimeNotIncreasing { index: 1 }));
        let backwards = vec![Waypoint { time: s(1.0), position: p }, Waypoint { time: s(0.5), position: p }];
        assert_eq!(WaypointPath::new(backwards), Err(MobilityError::TimeNotIncreasing { index: 1 }));
        let nan = vec![Waypoint { time: s(1.0), position: Position::new(f64::NAN, 0.0, 0.0) }];
        assert_eq!(WaypointPath::new(nan), Err(MobilityError::NonFinitePosition { index: 0 }));
        let one = WaypointPath::new(vec![Waypoint { time: SimTime::ZERO, position: p }]).unwrap();
        assert_eq!(one.clone().then_move_to(ue_a(5.0), 0.0), Err(MobilityError::BadSpeed { speed_mps: 0.0 }));
        assert_eq!(one.clone().then_move_to(ue_a(5.0), f64::INFINITY), Err(MobilityError::BadSpeed { speed_mps: f64::INFINITY }));
        assert_eq!(one.clone().then_move_to(ue_a(f64::NAN), 1.0), Err(MobilityError::NonFinitePosition { index: 1 }));
        // Zero-length pause and move are no-ops, so the path stays valid.
        assert_eq!(one.clone().then_pause(SimDuration::ZERO).then_move_to(p, 1.0).unwrap(), one);
    }
}
