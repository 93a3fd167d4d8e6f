//! The sender of a flow on either stack (`tcp.stack`): Linux's ([`TcpSender`]) or ns-3's
//! ([`Ns3Sender`]), behind the one interface the simulator drives. An enum, not a trait object:
//! the Linux path pays one predictable branch per call.

use crate::ns3::Ns3Sender;
use crate::sender::{AckOutcome, SenderGauges, SenderStats, TcpSender, Transmit};
use tcplab_core::{AckHeader, SimDuration, SimTime};

/// A flow's sender. Both variants are large (the Linux one ~1 KB): boxing the larger would add
/// a pointer chase to every call on the hot path for a few hundred bytes per flow.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum FlowSender {
    Linux(TcpSender),
    Ns3(Ns3Sender),
}

/// Forwards methods to whichever sender the flow has (one arm per receiver kind).
macro_rules! forward {
    () => {};
    ($(#[$doc:meta])* fn $name:ident(&mut self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?; $($rest:tt)*) => {
        $(#[$doc])* pub fn $name(&mut self $(, $arg: $ty)*) $(-> $ret)? {
            match self {
                FlowSender::Linux(s) => s.$name($($arg),*),
                FlowSender::Ns3(s) => s.$name($($arg),*),
            }
        }
        forward! { $($rest)* }
    };
    ($(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?; $($rest:tt)*) => {
        $(#[$doc])* pub fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
            match self {
                FlowSender::Linux(s) => s.$name($($arg),*),
                FlowSender::Ns3(s) => s.$name($($arg),*),
            }
        }
        forward! { $($rest)* }
    };
}

impl FlowSender {
    forward! {
        /// The connection is established.
        fn start(&mut self, now: SimTime);
        /// The application stops writing.
        fn stop_app(&mut self);
        /// The application writes `bytes` more.
        fn write(&mut self, bytes: u64);
        /// Room left in the send buffer.
        fn send_buffer_free(&self) -> u64;
        /// All written data is sent and acknowledged.
        fn is_done(&self) -> bool;
        /// Frees the buffers sized by the window once they are empty (when done).
        fn release_buffers(&mut self);
        /// Bytes of the buffers sized by the window.
        fn heap_bytes(&self) -> usize;
        /// Processes an ACK; drain `poll_transmit` afterwards.
        fn on_ack(&mut self, now: SimTime, ack: &AckHeader) -> AckOutcome;
        /// The next segment that may leave now, or None.
        fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit>;
        /// Segments sent and not cumulatively acknowledged.
        fn packets_out(&self) -> u32;
        /// The retransmission timer's deadline.
        fn rto_deadline(&self) -> Option<SimTime>;
        /// When pacing releases the next segment, if it holds one.
        fn pacing_release(&self) -> Option<SimTime>;
        /// Fires the retransmission timer if it is due.
        fn on_timer(&mut self, now: SimTime);
        /// The smoothed RTT; None before the first measurement.
        fn srtt(&self) -> Option<SimDuration>;
        /// A snapshot for the recorder.
        fn stats(&self) -> SenderStats;
        /// The part of the snapshot that a sample of a flow group reads.
        fn gauges(&self) -> SenderGauges;
    }

    /// The end of a write (Linux: schedules the loss probe); nothing on the ns3 stack.
    pub fn end_write(&mut self, now: SimTime) {
        if let FlowSender::Linux(s) = self {
            s.end_write(now);
        }
    }

    /// The Linux sender, for TCP Small Queues (Linux only: the ns3 stack refuses `tcp.tsq`).
    pub fn linux(&self) -> Option<&TcpSender> {
        match self {
            FlowSender::Linux(s) => Some(s),
            FlowSender::Ns3(_) => None,
        }
    }
}
