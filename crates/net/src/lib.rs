//! tcplab-net: the network a scenario describes — nodes (hosts and routers), full-duplex
//! links split into two directions, each with its own queue and link model, and static
//! shortest-path routing. It moves packets; TCP endpoints live in the simulator that drives it.

pub mod delivery;
pub mod link;
pub mod loss;
pub mod mmwave;
pub mod queue;
pub mod radio;
pub mod routing;
pub mod sojourn;
pub mod token_bucket;
pub mod trace;
pub mod wifi;

pub use delivery::{DeliveryEffects, Jitter, JitterDistribution};
pub use link::{Direction, FrameFormat, LinkModel, Model, Transmission, WiredLink};
pub use loss::{GilbertElliott, LossModel};
pub use queue::{CeThreshold, DeviceQueue, DropReason, DropSink, Queue, QueueConfig, QueueContext, QueueLimit};
pub use routing::RoutingTable;
pub use sojourn::SojournStats;
pub use token_bucket::TokenBucket;
pub use trace::{Trace, TraceLink};

/// Whether a node runs applications (hosts) or only forwards (routers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRole {
    Host,
    Router,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub role: NodeRole,
}
