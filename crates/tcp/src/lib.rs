//! tcplab-tcp: sans-IO TCP endpoints with Linux semantics (docs/models.md, TCP sender). The sender
//! owns the retransmit queue and SACK scoreboard, RTT/RTO, loss recovery with PRR, the
//! delivery-rate sampler and pacing, and calls a [`tcplab_cc::CongestionControl`] in Linux's
//! hook order; the receiver produces cumulative ACKs with SACK blocks, timestamps echo,
//! ECN echo and delayed ACKs. Time is passed in; nothing here schedules events: the caller
//! delivers packets, asks `next_timer()` and calls `on_timer()` (docs/architecture.md).
//! Where ns-3 differs, each module's header says so.

mod config;
mod flow_sender;
pub mod ns3;
mod pacing;
mod prr;
mod rack;
mod rate;
mod receiver;
mod rtt;
mod scoreboard;
mod sender;
#[cfg(test)]
mod testkit;
mod tso_defer;

pub use config::{DelayedAck, EcnMode, PacingMode, RecoveryMode, RtoMode, Stack, TcpConfig, DELACK_MAX};
pub use flow_sender::FlowSender;
pub use ns3::Ns3Sender;
pub use receiver::{Acks, TcpReceiver};
pub use sender::{AckOutcome, SenderGauges, SenderStats, TcpSender, Transmit};
