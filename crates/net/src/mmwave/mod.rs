//! 5G mmWave radio access (radio-models.md Part A): the building blocks of the lean model
//! that will sit behind a `LinkModel` — geometry and line of sight, mobility, the channel
//! (noise, path loss, blockage, shadowing, beamforming gain, SINR), the PHY (frame
//! structure, AMC, HARQ), the FlexTTI MAC scheduler, RLC AM with PDCP, and the cell that
//! runs them TTI by TTI (downlink). The uplink and the wiring into the simulator as a
//! `LinkModel` follow in a later change (issue 4).

pub mod channel;
pub mod cell;
pub mod geometry;
pub mod mobility;
pub mod phy;
pub mod rlc;
pub mod scheduler;
