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
