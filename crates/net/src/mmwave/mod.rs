//! 5G mmWave radio access (docs/models.md, 5G mmWave): geometry and line of sight, mobility, the
//! channel (noise, path loss, blockage, shadowing, beamforming gain, SINR), the PHY (frame
//! structure, AMC, HARQ), the FlexTTI MAC scheduler, RLC AM with PDCP, and the cell that runs
//! them TTI by TTI in both directions; the simulator drives the cell (crates/sim/src/mmwave.rs
//! and world.rs, docs/architecture.md).

pub mod cell;
pub mod channel;
pub mod geometry;
pub mod mobility;
pub mod phy;
pub mod rlc;
pub mod scheduler;

/// What the mmWave tests share: study (a)'s geometry and track (docs/models.md, profiles),
/// the MMW-V2 frame, times in seconds and data packets numbered by TCP sequence.
#[cfg(test)]
pub(crate) mod test_support {
    use super::geometry::{Building, LosTest, Position};
    use super::mobility::{Mobility, Waypoint, WaypointPath};
    use super::phy::{FrameConfig, Mcs};
    use tcplab_core::{DataHeader, Ecn, Packet, PacketKind, SimTime};

    /// The study-(a) eNB.
    pub const ENB_A: Position = Position::new(0.0, 0.0, 30.0);
    /// Both line-of-sight tests.
    pub const BOTH: [LosTest; 2] = [LosTest::Footprint2d, LosTest::Box3d];

    /// The study-(a) building: x ∈ [40, 45], y ∈ [−4, 4], 30 m high.
    pub fn building_a() -> Building {
        Building::new([40.0, 45.0], [-4.0, 4.0], [0.0, 30.0]).unwrap()
    }
    /// A point of the study-(a) track (x = 50 m, 1.5 m high).
    pub fn ue_a(y_m: f64) -> Position {
        Position::new(50.0, y_m, 1.5)
    }
    /// Study (a): (50, 15, 1.5) at 0 s → (50, −15, 1.5) at 15 s, NLOS for 5 s ≤ t < 10 s.
    pub fn study_a_track() -> Mobility {
        path(&[(0.0, ue_a(15.0)), (15.0, ue_a(-15.0))])
    }
    /// Straight lines between (seconds, position) waypoints.
    pub fn path(points: &[(f64, Position)]) -> Mobility {
        Mobility::Waypoints(WaypointPath::new(points.iter().map(|&(t, position)| Waypoint { time: s(t), position }).collect()).unwrap())
    }
    pub fn s(secs: f64) -> SimTime {
        SimTime((secs * 1e9).round() as u64)
    }
    /// The MMW-V2 frame at 28 GHz over 1 GHz.
    pub fn v2() -> FrameConfig {
        FrameConfig::mmw_v2(28e9, 1e9).unwrap()
    }
    pub fn mcs(i: u32) -> Mcs {
        Mcs::new(i).unwrap()
    }
    /// An IP packet of `ip_bytes` whose TCP sequence number identifies it.
    pub fn pkt(seq: u32, ip_bytes: u32) -> Packet {
        let hdr = DataHeader { seq, payload: ip_bytes - 52, tsval: SimTime::ZERO, cwr: false, psh: false };
        Packet::data(0, 0, 1, hdr, Ecn::NotEct)
    }
    pub fn seq(p: &Packet) -> u32 {
        match p.kind {
            PacketKind::Data(h) => h.seq,
            PacketKind::Ack(_) => unreachable!("only data packets are offered"),
        }
    }
}
