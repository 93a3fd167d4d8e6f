//! Packets as they cross the simulated network: a data segment or an ACK of one TCP flow.
//! Sequence numbers count MSS-sized segments (docs/models.md, GSO bursts: one simulator packet is
//! one segment), so the SACK scoreboard and every window are in packets, as in Linux.
//! A packet is `Copy` and carries no heap data: the hot path never allocates.

use crate::time::SimTime;

pub type NodeId = u32;
pub type LinkId = u32;
pub type FlowId = u32;

/// Header bytes on the wire besides the payload: IPv4 (20) + TCP (20) + timestamps option (12).
pub const HEADER_BYTES: u32 = 52;
/// SACK blocks an ACK can carry alongside the timestamps option (RFC 2018, Linux).
pub const MAX_SACK_BLOCKS: usize = 3;

/// ECN codepoint of the IP header (RFC 3168; ECT(1) identifies L4S traffic, RFC 9331).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    /// ECT(1): the L4S identifier (RFC 9331 §4.1), sent by scalable senders (TCP Prague).
    Ect1,
    Ce,
}

impl Ecn {
    /// ECT(0) or ECT(1): a packet an AQM may CE-mark (Linux `INET_ECN_set_ce` marks both).
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// A SACK block: segments `start..end` (end exclusive) received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

/// TCP header fields of a data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// Segment number (0-based).
    pub seq: u32,
    /// Payload bytes (the MSS, or less for the last segment of a byte-count transfer).
    pub payload: u32,
    /// Timestamp value (TSval): when this copy was sent.
    pub tsval: SimTime,
    /// The sender's CWR flag (RFC 3168).
    pub cwr: bool,
    /// PSH: the segment ends the data the application has written so far (Linux `tcp_push`
    /// marks a write's last segment; a bulk sender with unbounded data never does).
    pub psh: bool,
}

impl DataHeader {
    /// A segment without payload is the SYN of the ns3 stack's handshake (the Linux stack
    /// simulates no handshake and never sends one).
    pub fn is_syn(&self) -> bool {
        self.payload == 0
    }
}

/// TCP header fields of a pure ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckHeader {
    /// Next segment expected (cumulative ACK).
    pub ack: u32,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_len: u8,
    /// Echo of the TSval of the segment that triggered this ACK (TSecr).
    pub tsecr: SimTime,
    /// ECN-Echo flag.
    pub ece: bool,
    /// Advertised receive window, in bytes.
    pub rwnd_bytes: u64,
    /// Set when the ACK was held back by the delayed-ACK logic.
    pub delayed: bool,
}

impl AckHeader {
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data(DataHeader),
    Ack(AckHeader),
}

/// One packet on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Bytes on the wire (headers included).
    pub size: u32,
    pub ecn: Ecn,
    /// When the packet entered the queue it sits in (for sojourn-time AQMs and traces).
    pub enqueued_at: SimTime,
    pub kind: PacketKind,
}

impl Packet {
    pub fn data(flow: FlowId, src: NodeId, dst: NodeId, hdr: DataHeader, ecn: Ecn) -> Self {
        Packet { flow, src, dst, size: hdr.payload + HEADER_BYTES, ecn, enqueued_at: SimTime::ZERO, kind: PacketKind::Data(hdr) }
    }

    pub fn ack(flow: FlowId, src: NodeId, dst: NodeId, hdr: AckHeader) -> Self {
        // SACK option: 2 bytes of kind/length + 8 per block, padded to 4 bytes.
        let sack_bytes = if hdr.sack_len == 0 { 0 } else { (2 + 8 * hdr.sack_len as u32).div_ceil(4) * 4 };
        Packet { flow, src, dst, size: HEADER_BYTES + sack_bytes, ecn: Ecn::NotEct, enqueued_at: SimTime::ZERO, kind: PacketKind::Ack(hdr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_sizes_count_headers_and_sack_option() {
        let d = Packet::data(0, 0, 1, DataHeader { seq: 0, payload: 1448, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct);
        assert_eq!(d.size, 1500);
        let mut h = AckHeader {
            ack: 1,
            sack: [SackBlock::default(); 3],
            sack_len: 0,
            tsecr: SimTime::ZERO,
            ece: false,
            rwnd_bytes: 0,
            delayed: false,
        };
        assert_eq!(Packet::ack(0, 1, 0, h).size, 52);
        h.sack_len = 1;
        assert_eq!(Packet::ack(0, 1, 0, h).size, 52 + 12);
        h.sack_len = 3;
        assert_eq!(Packet::ack(0, 1, 0, h).size, 52 + 28);
    }
}
