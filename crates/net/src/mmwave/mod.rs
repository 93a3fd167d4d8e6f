//! 5G mmWave radio access (radio-models.md Part A): the building blocks of the lean model
//! that will sit behind a `LinkModel` — geometry and line of sight, mobility, the channel
//! (noise, path loss, blockage, shadowing, beamforming gain, SINR) and the PHY (frame
//! structure, AMC, HARQ). The scheduler, RLC AM and the link model that wires them to the
//! simulator follow in a later change (issue 4).

pub mod channel;
pub mod geometry;
pub mod mobility;
pub mod phy;
