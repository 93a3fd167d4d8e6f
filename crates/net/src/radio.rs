//! What the simulator needs of a radio cell — a 5G mmWave cell or a WiFi BSS: packets enter
//! on a hop (a user's downlink or uplink), the cell runs itself forward when told the time,
//! and hands packets over at the far end, stamped with the instant they arrived
//! (docs/architecture.md: a cell is a sans-IO state machine, not a per-packet `LinkModel`).

use tcplab_core::{Packet, SimTime};

/// Index of a user of the cell: a UE of an mmWave cell, a station of a WiFi BSS.
pub type UserId = usize;

/// Downlink (base station or access point to the user) or uplink (user to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RadioDirection {
    Dl,
    Ul,
}

impl RadioDirection {
    /// 0 for DL, 1 for UL (index of per-direction arrays).
    pub fn index(self) -> usize {
        match self {
            RadioDirection::Dl => 0,
            RadioDirection::Ul => 1,
        }
    }
}

/// A packet the cell handed over: to user `ue` (DL) or from user `ue` to the base (UL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadioDelivery {
    pub at: SimTime,
    pub ue: UserId,
    pub direction: RadioDirection,
    pub packet: Packet,
}

/// A radio cell as the simulator drives it.
pub trait RadioCell: Send {
    /// A packet reaches the cell at `now` on `ue`'s hop in `direction`; false if the cell
    /// dropped it at once (a full buffer). Call `advance_to(now)` first.
    fn enqueue(&mut self, ue: UserId, direction: RadioDirection, packet: Packet, now: SimTime) -> bool;
    /// Runs everything due at or before `now`, appending the packets handed over in time order.
    fn advance_to(&mut self, now: SimTime, out: &mut Vec<RadioDelivery>);
    /// When `advance_to` next has something to do; None while the cell is idle.
    fn next_event(&self) -> Option<SimTime>;
    /// Packets accepted and not yet handed over or dropped.
    fn packets_held(&self) -> u64;
    /// Packets dropped so far (after being accepted, or at `enqueue`).
    fn packets_dropped(&self) -> u64;
}
