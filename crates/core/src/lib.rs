//! tcplab-core: the vocabulary every other crate shares — integer-nanosecond simulated
//! time, link rates, packets as they cross the simulated network, the (time, sequence)
//! event scheduler, seeded per-component random streams and the registry of named kinds
//! (algorithms, queue disciplines) with their settings (docs/architecture.md, rules).

pub mod packet;
pub mod rate;
pub mod registry;
pub mod rng;
pub mod scheduler;
pub mod time;

pub use packet::{AckHeader, DataHeader, Ecn, FlowId, LinkId, NodeId, Packet, PacketKind, SackBlock, MAX_SACK_BLOCKS};
pub use rate::Rate;
pub use rng::SimRng;
pub use scheduler::Scheduler;
pub use time::{SimDuration, SimTime};
