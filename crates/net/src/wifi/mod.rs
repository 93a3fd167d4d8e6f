//! WiFi access (docs/models.md, WiFi): the 802.11n / 802.11ax PHY (rates, PPDU durations,
//! interframe spaces, noise), the SNR → packet-error models, and the BSS that runs EDCA
//! contention, A-MPDU aggregation, BlockAck and retries among the stations and their AP.

pub mod bss;
pub mod error;
pub mod phy;
