//! Geometry and line of sight for the mmWave cell (ns-3 buildings LOS test): 3-D positions and
//! velocities, buildings as axis-aligned boxes, the eNB→UE line-of-sight test in its two
//! flavours, and the exact blockage interval of a UE moving in a straight line (used by
//! `mobility::LosTimeline` to time LOS/NLOS transitions).
//!
//! - `LosTest::Box3d` (3GPP-buildings model, MMW-V2-3GPP): NLOS when the straight segment eNB→UE
//!   crosses a building box. Implemented with the slab method on t∈[0,1], which is equivalent to
//!   the source's separating-axis test.
//! - `LosTest::Footprint2d` (`BuildingsObstaclePropagationLossModel` + LOS tracker, MMW-V2):
//!   building height is ignored; NLOS when the segment, projected on the ground plane, crosses
//!   the building's rectangle. This replaces ns-3's azimuth-between-corners test
//!   and agrees with it for the scenarios here.
//!
//! Choices and simplifications (reported):
//! - Both tests use the *open* box: a segment that only touches a face, an edge or a corner is
//!   LOS. This follows the source's strict "azimuth strictly between the corners" comparison
//!   and the profile's "blocked while |y| < 5 m" (docs/models.md, profiles); ns-3's 3-D separating-axis test counts touching as an
//!   intersection. The two differ only on measure-zero configurations (single instants). The
//!   open box also lets an eNB sit on a roof or a wall without seeing its own building.
//! - The azimuth test's quirks (corner choice by the sign of the azimuth, endpoint swap outside
//!   [−90°, 90°)) are not reproduced; they only matter for buildings behind or beside the eNB.
//! - A building must have a positive extent on every axis (a "thin wall" is a box a few cm
//!   thick). Buildings may overlap each other.

use std::fmt;

/// A point in space, in metres (x, y on the ground plane, z up).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Position {
    pub x_m: f64,
    pub y_m: f64,
    pub z_m: f64,
}

/// A velocity, in metres per second.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Velocity {
    pub x_mps: f64,
    pub y_mps: f64,
    pub z_mps: f64,
}

impl Position {
    pub const fn new(x_m: f64, y_m: f64, z_m: f64) -> Self {
        Position { x_m, y_m, z_m }
    }
    /// 3-D distance (d3D of the path-loss models).
    pub fn distance_m(self, other: Position) -> f64 {
        let (dx, dy, dz) = (other.x_m - self.x_m, other.y_m - self.y_m, other.z_m - self.z_m);
        (dx * dx + dy * dy + dz * dz).sqrt()
    }
    /// Distance on the ground plane (d2D of the 3GPP model, which also drives the shadowing
    /// decorrelation, TR 38.901 UMi-SC).
    pub fn distance_2d_m(self, other: Position) -> f64 {
        (other.x_m - self.x_m).hypot(other.y_m - self.y_m)
    }
    /// The position reached after moving at `velocity` for `dt_s` seconds.
    pub fn moved(self, velocity: Velocity, dt_s: f64) -> Position {
        Position::new(self.x_m + velocity.x_mps * dt_s, self.y_m + velocity.y_mps * dt_s, self.z_m + velocity.z_mps * dt_s)
    }
    pub fn is_finite(self) -> bool {
        self.x_m.is_finite() && self.y_m.is_finite() && self.z_m.is_finite()
    }
    fn to_array(self) -> [f64; 3] {
        [self.x_m, self.y_m, self.z_m]
    }
}

impl Velocity {
    pub const ZERO: Velocity = Velocity::new(0.0, 0.0, 0.0);

    pub const fn new(x_mps: f64, y_mps: f64, z_mps: f64) -> Self {
        Velocity { x_mps, y_mps, z_mps }
    }
    /// The velocity that covers `from`→`to` in `dt_s` seconds.
    pub fn between(from: Position, to: Position, dt_s: f64) -> Velocity {
        Velocity::new((to.x_m - from.x_m) / dt_s, (to.y_m - from.y_m) / dt_s, (to.z_m - from.z_m) / dt_s)
    }
    /// Physical speed |v|.
    pub fn speed_mps(self) -> f64 {
        (self.x_mps * self.x_mps + self.y_mps * self.y_mps + self.z_mps * self.z_mps).sqrt()
    }
    /// vx + vy + vz: the "speed" ns3-mmwave V2.0 puts in the Doppler frequency (MmWaveBeamforming quirk).
    pub fn component_sum_mps(self) -> f64 {
        self.x_mps + self.y_mps + self.z_mps
    }
    pub fn is_finite(self) -> bool {
        self.x_mps.is_finite() && self.y_mps.is_finite() && self.z_mps.is_finite()
    }
    fn to_array(self) -> [f64; 3] {
        [self.x_mps, self.y_mps, self.z_mps]
    }
}

/// Which line-of-sight test a propagation model uses (ns-3 buildings LOS test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LosTest {
    /// Ground-plane projection, building height ignored (MMW-V2 obstacle model, study (a)).
    Footprint2d,
    /// Full 3-D segment–box test (MMW-V2-3GPP buildings model, study (b)).
    Box3d,
}

impl LosTest {
    /// Number of coordinate axes the test looks at (x, y and, for 3-D, z).
    fn axes(self) -> usize {
        match self {
            LosTest::Footprint2d => 2,
            LosTest::Box3d => 3,
        }
    }
}

/// A bad building description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GeometryError {
    /// A coordinate is NaN or infinite.
    NonFinite,
    /// `min >= max` on this axis ('x', 'y' or 'z').
    EmptyExtent { axis: char, min_m: f64, max_m: f64 },
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeometryError::NonFinite => write!(f, "building coordinates must be finite numbers"),
            GeometryError::EmptyExtent { axis, min_m, max_m } => {
                write!(f, "building {axis} range [{min_m}, {max_m}] m is empty: the minimum must be below the maximum")
            }
        }
    }
}

/// A building: the axis-aligned box x∈[min,max] × y∈[min,max] × z∈[min,max], in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Building {
    min: [f64; 3],
    max: [f64; 3],
}

impl Building {
    /// A box from its ranges on each axis, e.g. study (a): `new([40, 45], [-4, 4], [0, 30])`.
    pub fn new(x_m: [f64; 2], y_m: [f64; 2], z_m: [f64; 2]) -> Result<Building, GeometryError> {
        let ranges = [x_m, y_m, z_m];
        if ranges.iter().flatten().any(|v| !v.is_finite()) {
            return Err(GeometryError::NonFinite);
        }
        for (axis, [lo, hi]) in ['x', 'y', 'z'].into_iter().zip(ranges) {
            if lo >= hi {
                return Err(GeometryError::EmptyExtent { axis, min_m: lo, max_m: hi });
            }
        }
        Ok(Building { min: [x_m[0], y_m[0], z_m[0]], max: [x_m[1], y_m[1], z_m[1]] })
    }
    pub fn min_corner(&self) -> Position {
        Position::new(self.min[0], self.min[1], self.min[2])
    }
    pub fn max_corner(&self) -> Position {
        Position::new(self.max[0], self.max[1], self.max[2])
    }

    /// True if `p` is strictly inside the box (on a face is outside). Used to reject a UE or
    /// an eNB placed inside a building.
    pub fn contains(&self, p: Position) -> bool {
        self.segment_entry(p, p, 3).is_some()
    }

    /// True if this building blocks the eNB→UE line of sight under `test`.
    pub fn blocks(&self, test: LosTest, enb: Position, ue: Position) -> bool {
        self.segment_entry(enb, ue, test.axes()).is_some()
    }

    /// Where the straight segment `from`→`to` first enters the box's interior, as the fraction
    /// f∈[0,1] of the way (the interior is reached just after f). `None` if it never does.
    pub fn segment_entry_fraction(&self, from: Position, to: Position) -> Option<f64> {
        self.segment_entry(from, to, 3)
    }

    /// Slab method on the open box, looking at the first `axes` coordinates only.
    fn segment_entry(&self, from: Position, to: Position, axes: usize) -> Option<f64> {
        let (a, b) = (from.to_array(), to.to_array());
        let (mut enter, mut leave) = (0.0_f64, 1.0_f64);
        for k in 0..axes {
            let d = b[k] - a[k];
            if d == 0.0 {
                if !(a[k] > self.min[k] && a[k] < self.max[k]) {
                    return None;
                }
            } else {
                let (t_min, t_max) = ((self.min[k] - a[k]) / d, (self.max[k] - a[k]) / d);
                enter = enter.max(t_min.min(t_max));
                leave = leave.min(t_min.max(t_max));
            }
        }
        // Open slabs intersected with the closed [0, 1]: non-empty iff enter < leave.
        (enter < leave).then_some(enter)
    }

    /// For a UE moving in a straight line, p(τ) = `start` + `velocity`·τ with τ∈[0, `duration_s`],
    /// the open τ-interval (in seconds) during which this building blocks the eNB→UE line of
    /// sight under `test`; `None` if it never does (or only at isolated instants).
    ///
    /// Exact, no sampling: the segment eNB→p(τ) meets the box iff some point
    /// q = eNB + s·(start − eNB) + u·velocity with u = s·τ lies in it. In (s, u) the conditions
    /// (box slabs, 0 ≤ s ≤ 1, 0 ≤ u ≤ s·T) are half-planes, so the feasible set is a bounded
    /// convex polygon and τ = u/s takes its extremes at the polygon's vertices. The blocked set
    /// is an interval because the region "shadowed" by a box is convex.
    pub fn shadow_interval_s(
        &self,
        test: LosTest,
        enb: Position,
        start: Position,
        velocity: Velocity,
        duration_s: f64,
    ) -> Option<(f64, f64)> {
        if duration_s.is_nan() || duration_s <= 0.0 {
            return None;
        }
        let axes = test.axes();
        if self.segment_entry(enb, enb, axes).is_some() {
            // The eNB is inside the building: every segment starts blocked.
            return Some((0.0, duration_s));
        }
        let (e, a, w) = (enb.to_array(), start.to_array(), velocity.to_array());
        // Half-planes c_s·s + c_u·u ≤ c, stored as [c_s, c_u, c].
        let mut planes = [[0.0_f64; 3]; 10];
        let mut n = 0;
        for k in 0..axes {
            let d = a[k] - e[k];
            planes[n] = [d, w[k], self.max[k] - e[k]];
            planes[n + 1] = [-d, -w[k], e[k] - self.min[k]];
            n += 2;
        }
        for plane in [[1.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [-duration_s, 1.0, 0.0]] {
            planes[n] = plane;
            n += 1;
        }
        let planes = &planes[..n];
        let feasible =
            |s: f64, u: f64| planes.iter().all(|&[cs, cu, c]| cs * s + cu * u <= c + 1e-9 * (1.0 + c.abs() + cs.abs() + cu.abs()));
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for (i, &[a1, b1, c1]) in planes.iter().enumerate() {
            for &[a2, b2, c2] in &planes[i + 1..] {
                let det = a1 * b2 - a2 * b1;
                if det.abs() <= 1e-14 * (a1.abs() + b1.abs()) * (a2.abs() + b2.abs()) {
                    continue;
                }
                let s = (c1 * b2 - c2 * b1) / det;
                let u = (a1 * c2 - a2 * c1) / det;
                if s > 0.0 && feasible(s, u) {
                    let tau = (u / s).clamp(0.0, duration_s);
                    lo = lo.min(tau);
                    hi = hi.max(tau);
                }
            }
        }
        // The interval of the closed box; its interior is the open-box answer unless the
        // segment only grazes the box (then the midpoint is not blocked either).
        (lo < hi && self.blocks(test, enb, start.moved(velocity, 0.5 * (lo + hi)))).then_some((lo, hi))
    }
}

/// True if no building blocks the eNB→UE line of sight under `test`.
pub fn is_los(test: LosTest, enb: Position, ue: Position, buildings: &[Building]) -> bool {
    !buildings.iter().any(|b| b.blocks(test, enb, ue))
}

/// Index of the first building whose interior contains `p` (scenario validation: an eNB or a
/// UE must not be inside a building).
pub fn building_containing(p: Position, buildings: &[Building]) -> Option<usize> {
    buildings.iter().position(|b| b.contains(p))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{building_a, ue_a, BOTH, ENB_A};
    use super::*;

    #[test]
    fn study_a_distance_matches_a12() {
        // docs/validation.md, mmWave capacity: d3D ≈ 59.5 m at the start of the track; 57.55 m when abeam of the eNB.
        assert!((ENB_A.distance_m(ue_a(15.0)) - 59.475).abs() < 1e-3);
        assert!((ENB_A.distance_m(ue_a(0.0)) - 57.552).abs() < 1e-3);
        assert!((ENB_A.distance_2d_m(ue_a(15.0)) - 52.202).abs() < 1e-3);
    }

    #[test]
    fn study_a_blocked_exactly_while_abs_y_below_5() {
        // The ray to (50, y) crosses x = 40 at 0.8·y: blocked iff |0.8·y| < 4 (docs/models.md, profiles).
        let b = building_a();
        for test in BOTH {
            for (y, blocked) in [(15.0, false), (5.001, false), (4.999, true), (0.0, true), (-4.999, true), (-5.001, false)] {
                assert_eq!(b.blocks(test, ENB_A, ue_a(y)), blocked, "{test:?} y={y}");
                assert_eq!(is_los(test, ENB_A, ue_a(y), &[b]), !blocked, "{test:?} y={y}");
            }
        }
    }

    #[test]
    fn touching_an_edge_or_face_is_los() {
        let b = building_a();
        for test in BOTH {
            // y = ±5: the ray grazes the vertical edges (40, ±4).
            assert!(!b.blocks(test, ENB_A, ue_a(5.0)), "{test:?}");
            assert!(!b.blocks(test, ENB_A, ue_a(-5.0)), "{test:?}");
            // A segment lying in the plane of the face y = 4.
            assert!(!b.blocks(test, Position::new(0.0, 4.0, 1.0), Position::new(60.0, 4.0, 1.0)), "{test:?}");
            // Ending exactly on the near face x = 40.
            assert!(!b.blocks(test, Position::new(0.0, 0.0, 1.0), Position::new(40.0, 0.0, 1.0)), "{test:?}");
            // Just beyond it.
            assert!(b.blocks(test, Position::new(0.0, 0.0, 1.0), Position::new(40.01, 0.0, 1.0)), "{test:?}");
        }
    }

    #[test]
    fn height_matters_only_in_3d() {
        // Over the roof: the segment stays at z = 35 > 30.
        let b = building_a();
        let (enb, ue) = (Position::new(0.0, 0.0, 35.0), Position::new(60.0, 0.0, 35.0));
        assert!(!b.blocks(LosTest::Box3d, enb, ue));
        assert!(b.blocks(LosTest::Footprint2d, enb, ue));
        // eNB on the roof (z = 30 is the roof plane) looking away from the building: LOS.
        let roof = Position::new(42.0, 0.0, 30.0);
        assert!(!b.blocks(LosTest::Box3d, roof, Position::new(42.0, 0.0, 80.0)));
    }

    #[test]
    fn zero_length_segment_is_a_point_test() {
        let b = building_a();
        let inside = Position::new(42.0, 0.0, 10.0);
        let outside = Position::new(30.0, 0.0, 10.0);
        for test in BOTH {
            assert!(b.blocks(test, inside, inside));
            assert!(!b.blocks(test, outside, outside));
        }
        // A point on a face is not inside.
        assert!(!b.contains(Position::new(40.0, 0.0, 10.0)));
        assert!(b.contains(inside));
    }

    #[test]
    fn ue_inside_a_building_is_nlos_and_detected() {
        let b = building_a();
        let ue = Position::new(42.0, 1.0, 1.5);
        for test in BOTH {
            assert!(!is_los(test, ENB_A, ue, &[b]));
        }
        let other = Building::new([100.0, 110.0], [0.0, 10.0], [0.0, 5.0]).unwrap();
        assert_eq!(building_containing(ue, &[other, b]), Some(1));
        assert_eq!(building_containing(ENB_A, &[other, b]), None);
    }

    #[test]
    fn segment_entry_fraction_is_where_the_interior_starts() {
        let b = building_a();
        let f = b.segment_entry_fraction(Position::new(30.0, 0.0, 1.0), Position::new(50.0, 0.0, 1.0));
        assert_eq!(f, Some(0.5));
        let f = b.segment_entry_fraction(Position::new(42.0, 0.0, 1.0), Position::new(50.0, 0.0, 1.0));
        assert_eq!(f, Some(0.0));
        assert_eq!(b.segment_entry_fraction(Position::new(30.0, 5.0, 1.0), Position::new(50.0, 5.0, 1.0)), None);
    }

    #[test]
    fn bad_buildings_are_rejected() {
        assert_eq!(
            Building::new([45.0, 40.0], [-4.0, 4.0], [0.0, 30.0]),
            Err(GeometryError::EmptyExtent { axis: 'x', min_m: 45.0, max_m: 40.0 })
        );
        assert!(matches!(Building::new([40.0, 45.0], [4.0, 4.0], [0.0, 30.0]), Err(GeometryError::EmptyExtent { axis: 'y', .. })));
        assert!(matches!(Building::new([40.0, 45.0], [-4.0, 4.0], [0.0, 0.0]), Err(GeometryError::EmptyExtent { axis: 'z', .. })));
        assert_eq!(Building::new([40.0, f64::NAN], [-4.0, 4.0], [0.0, 30.0]), Err(GeometryError::NonFinite));
        let b = building_a();
        assert_eq!(b.min_corner(), Position::new(40.0, -4.0, 0.0));
        assert_eq!(b.max_corner(), Position::new(45.0, 4.0, 30.0));
    }

    #[test]
    fn study_a_shadow_interval_is_5_to_10_s() {
        // UE (50, 15, 1.5) → (50, −15, 1.5) over 15 s: blocked for τ∈(5, 10) s (docs/models.md, profiles).
        let v = Velocity::new(0.0, -2.0, 0.0);
        for test in BOTH {
            let (lo, hi) = building_a().shadow_interval_s(test, ENB_A, ue_a(15.0), v, 15.0).unwrap();
            assert!((lo - 5.0).abs() < 1e-9 && (hi - 10.0).abs() < 1e-9, "{test:?} {lo} {hi}");
        }
    }

    #[test]
    fn shadow_interval_edge_cases() {
        let b = building_a();
        let down = Velocity::new(0.0, -2.0, 0.0);
        // Clipped by the leg: starting at y = 3 (already blocked) for 2 s → (0, 2).
        let (lo, hi) = b.shadow_interval_s(LosTest::Box3d, ENB_A, ue_a(3.0), down, 2.0).unwrap();
        assert!(lo.abs() < 1e-9 && (hi - 2.0).abs() < 1e-9);
        // Stops exactly at the edge of the shadow (y = 5): never blocked.
        assert_eq!(b.shadow_interval_s(LosTest::Box3d, ENB_A, ue_a(15.0), down, 5.0), None);
        // Standing still in the shadow (a pause): blocked for the whole leg.
        let (lo, hi) = b.shadow_interval_s(LosTest::Footprint2d, ENB_A, ue_a(0.0), Velocity::ZERO, 3.0).unwrap();
        assert!(lo.abs() < 1e-9 && (hi - 3.0).abs() < 1e-9);
        // Standing still in LOS, and a zero-length leg.
        assert_eq!(b.shadow_interval_s(LosTest::Box3d, ENB_A, ue_a(10.0), Velocity::ZERO, 3.0), None);
        assert_eq!(b.shadow_interval_s(LosTest::Box3d, ENB_A, ue_a(0.0), down, 0.0), None);
        // Walking outward on the ray y = 0.1·x through the corner (40, 4): the segment grazes
        // the corner for the whole leg (closed box: blocked throughout; open box: never).
        let ue0 = Position::new(50.0, 5.0, 1.5);
        let radial = Velocity::new(1.0, 0.1, 0.0);
        assert_eq!(b.shadow_interval_s(LosTest::Footprint2d, ENB_A, ue0, radial, 20.0), None);
        // eNB inside the building: always blocked.
        let enb_in = Position::new(42.0, 0.0, 10.0);
        assert_eq!(b.shadow_interval_s(LosTest::Box3d, enb_in, ue_a(15.0), down, 4.0), Some((0.0, 4.0)));
    }

    #[test]
    fn shadow_interval_in_3d_depends_on_height() {
        // Low building z∈[0, 5], eNB at 30 m, UE at 1.5 m: the segment is at
        // z = 30 − 28.5·s (s = fraction of the way), below the roof only for s > 25/28.5, i.e.
        // x > 43.86 m. Blocked iff |s·y| < 4 for some s∈(25/28.5, 0.9): |y| < 4.56 m, so
        // τ∈((15 − 4.56)/2, (15 + 4.56)/2) = (5.22, 9.78) s. A 4 m building needs s > 26/28.5
        // > 0.9 (beyond its far face): never in the way in 3-D, always in 2-D.
        let low = Building::new([40.0, 45.0], [-4.0, 4.0], [0.0, 5.0]).unwrap();
        let lower = Building::new([40.0, 45.0], [-4.0, 4.0], [0.0, 4.0]).unwrap();
        let v = Velocity::new(0.0, -2.0, 0.0);
        let (lo, hi) = low.shadow_interval_s(LosTest::Box3d, ENB_A, ue_a(15.0), v, 15.0).unwrap();
        assert!((lo - 5.22).abs() < 1e-9 && (hi - 9.78).abs() < 1e-9, "{lo} {hi}");
        assert_eq!(lower.shadow_interval_s(LosTest::Box3d, ENB_A, ue_a(15.0), v, 15.0), None);
        assert!(lower.shadow_interval_s(LosTest::Footprint2d, ENB_A, ue_a(15.0), v, 15.0).is_some());
    }

    #[test]
    fn velocity_speed_and_v2_doppler_quirk() {
        let v = Velocity::new(3.0, -4.0, 0.0);
        assert_eq!(v.speed_mps(), 5.0);
        assert_eq!(v.component_sum_mps(), -1.0);
        assert_eq!(Velocity::between(ue_a(15.0), ue_a(-15.0), 15.0), Velocity::new(0.0, -2.0, 0.0));
        assert_eq!(ue_a(15.0).moved(Velocity::new(0.0, -2.0, 0.0), 2.5), ue_a(10.0));
    }
}
