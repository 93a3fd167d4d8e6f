//! 5G mmWave radio access (radio-models.md Part A): the building blocks of the lean model
//! that will sit behind a `LinkModel` — geometry and line of sight, mobility, the channel
//! (noise, path loss, blockage, shadowing, beamforming gain, SINR), the PHY (frame
//! structure, AMC, HARQ), the FlexTTI MAC scheduler and RLC AM with PDCP. The cell that
//! runs them TTI by TTI and its wiring into the simulator follow in a later change (issue 4).

pub mod channel;
pub mod geometry;
pub mod mobility;
pub mod phy;
pub mod rlc;
pub mod scheduler;
