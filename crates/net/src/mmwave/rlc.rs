//! RLC AM and PDCP of the lean ns3-mmwave model (LteRlcAm, with the TB layout of FlexTTI step 6 and
//! the HARQ hand-off of MmWaveHarqPhy; validation target docs/validation.md M8 "RLC heal").
//!
//! One [`RlcAm`] holds both ends of one radio bearer: the transmitter (byte-limited
//! transmission buffer with tail drop, segmentation/concatenation of SDUs into the one RLC
//! PDU each TB carries, ARQ retransmission queue) and the receiver (reassembly and in-order
//! delivery). A PDCP SDU is a whole IP packet or IP fragment ([`Packet`]); PDCP is a
//! pass-through that adds its 2-byte header (LteRlcAm).
//!
//! Simplifications and choices (points ns-3 leaves open or that are approximate are marked *):
//! - Tail drop (LteRlcAm buffer rule): an SDU is accepted only if the not-yet-transmitted bytes
//!   (PDCP PDU sizes, i.e. IP size + 2) plus its own PDCP size stay ≤ the limit. Retransmission
//!   and sent-but-unacknowledged bytes are not limited. This is the only drop in the RAN.
//! - *Header sizes: ns-3 fixes the PDCP header (2 B, LtePdcp) and the MAC subheader (4 B, FlexTTI
//!   step 6). The RLC AMD PDU header follows TS 36.322 §6.2.1.4 as used by ns-3's LTE RLC AM: 2 B
//!   fixed (D/C, RF, P, FI, E, 10-bit SN) plus one 12-bit E+LI field per SDU segment beyond the
//!   first, rounded up to whole bytes. A retransmitted piece uses the same header formula: the
//!   re-segmentation fields (LSF, SO) are not added.
//! - *ARQ (lean form of LteRlcAm ARQ, M8): a TB lost to HARQ (`HarqOutcome::Failed`) puts its
//!   segments in the retransmission queue, eligible `t-Reordering + t-StatusProhibit` after the
//!   failure was detected. A "t-Reordering + 1 ms" rule and the "t-Reordering + STATUS
//!   (+ prohibit)" of LteRlcAm both give 3 ms (2 + 1) with the study-(a) timers, and with the ns-3
//!   defaults this gives 20 ms, the upper end of the 10–20 ms heal time of LteRlcAm. STATUS PDUs
//!   are not modelled on the reverse link (they are never lost), so t-PollRetransmit never fires
//!   and is not a parameter here.
//! - Retransmissions have priority: a TB is filled first from the eligible retransmission
//!   queue (re-segmented to fit), and any room left is filled with new data (ns-3 sends
//!   either a retransmission or new data per TB; mixing only uses the padding).
//! - Not modelled: the 512-PDU window (a 3 ms heal at ≤ 10 PDUs/ms stays far below it),
//!   maxRetxThreshold (a piece is retransmitted until it arrives, so every accepted SDU is
//!   delivered), the CoDel AQM (off in the studies), PDCP discard timers, the reordering of
//!   TBs HARQ delivers out of order (reassembly per SDU makes delivery in order anyway).
//! - *Buffer sizes: "MB" is 10^6 B (docs/scenario-format.md); study (b)'s "1 MB" is
//!   ambiguous between 10^6 B and ns-3's default 1,048,576 B: the caller passes bytes.
//!
//! Hot path: [`RlcAm::fill`] and the HARQ hand-offs reuse the per-PDU segment buffers, so
//! after warm-up they do not allocate.

use std::collections::VecDeque;

use tcplab_core::{Packet, SimDuration, SimTime};

/// PDCP header of a data radio bearer, bytes per SDU (LteRlcAm).
pub const PDCP_HEADER_BYTES: u32 = 2;
/// MAC subheader of the one RLC PDU a DL TB carries, bytes (FlexTTI step 6: PDU = TB − 4 B).
pub const MAC_SUBHEADER_BYTES: u32 = 4;
/// Fixed part of an RLC AMD PDU header, bytes (TS 36.322 §6.2.1.4, 10-bit SN).
pub const RLC_FIXED_HEADER_BYTES: u32 = 2;
/// One E + LI field, bits, for each SDU segment of a PDU beyond the first (TS 36.322).
const RLC_LI_BITS: u32 = 12;

/// RLC header bytes of a PDU carrying `segments` SDU segments (≥ 1).
pub fn rlc_header_bytes(segments: u32) -> u32 {
    RLC_FIXED_HEADER_BYTES + (RLC_LI_BITS * segments.saturating_sub(1)).div_ceil(8)
}

/// RLC AM parameters (LteRlcAm table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RlcConfig {
    /// MaxTxBufferSize: limit on not-yet-transmitted PDCP bytes.
    pub max_tx_buffer_bytes: u64,
    pub t_reordering: SimDuration,
    pub t_status_prohibit: SimDuration,
}

impl RlcConfig {
    /// ns-3 lte-rlc-am defaults (LteRlcAm): 1,048,576 B, t-Reordering 10 ms, t-StatusProhibit
    /// 10 ms.
    pub fn ns3_default() -> RlcConfig {
        RlcConfig {
            max_tx_buffer_bytes: 1_048_576,
            t_reordering: SimDuration::from_millis(10),
            t_status_prohibit: SimDuration::from_millis(10),
        }
    }

    /// Study-(a) scripts (docs/models.md, profiles, LteRlcAm): t-Reordering 2 ms, t-StatusProhibit 1 ms, with the swept
    /// buffer (4/7/20/40 MB in the study, 10^6 B per MB).
    pub fn study_a(max_tx_buffer_bytes: u64) -> RlcConfig {
        RlcConfig { max_tx_buffer_bytes, t_reordering: SimDuration::from_millis(2), t_status_prohibit: SimDuration::from_millis(1) }
    }

    /// Delay from the detection of a HARQ failure to the earliest RLC retransmission.
    pub fn arq_delay(&self) -> SimDuration {
        self.t_reordering + self.t_status_prohibit
    }
}

/// A contiguous piece of one SDU's PDCP PDU (PDCP header included in the byte range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the SDU, counted from 0 over the accepted SDUs.
    pub sdu: u64,
    /// First byte of the piece within the PDCP PDU.
    pub offset: u32,
    pub len: u32,
}

/// Handle of an RLC PDU in flight (one per TB), for the HARQ hand-off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PduId(u32);

/// What [`RlcAm::fill`] put into a TB. `payload_bytes + header_bytes ≤ tb_bytes`; the rest is
/// padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PduFill {
    pub pdu: PduId,
    /// SDU bytes (PDCP PDU bytes) carried, retransmitted ones included.
    pub payload_bytes: u32,
    /// Of `payload_bytes`, those taken from the retransmission queue.
    pub retx_bytes: u32,
    /// MAC subheader + RLC header bytes.
    pub header_bytes: u32,
    pub segments: u32,
}

/// Queued bytes for the scheduler (FlexTTI step 3), PDCP headers included, RLC/MAC headers not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BufferStatus {
    /// Not yet transmitted (the transmission buffer the tail-drop limit applies to).
    pub new_bytes: u64,
    /// In the retransmission queue and eligible now.
    pub retx_ready_bytes: u64,
    /// In the retransmission queue, waiting for the ARQ delay.
    pub retx_waiting_bytes: u64,
}

/// Running counters of one bearer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RlcStats {
    pub accepted_sdus: u64,
    pub accepted_bytes: u64,
    /// SDUs refused by the tail-drop rule, and their PDCP bytes.
    pub dropped_sdus: u64,
    pub dropped_bytes: u64,
    pub delivered_sdus: u64,
    /// Bytes put back into the retransmission queue by HARQ failures.
    pub retx_queued_bytes: u64,
}

/// An accepted SDU, alive from acceptance to in-order delivery.
#[derive(Clone, Copy, Debug)]
struct SduSlot {
    packet: Packet,
    /// PDCP PDU size: IP size + PDCP header.
    size: u32,
    /// Bytes the receiver holds.
    received: u32,
}

#[derive(Clone, Copy, Debug)]
struct RetxPiece {
    seg: Segment,
    ready_at: SimTime,
}

#[derive(Clone, Debug, Default)]
struct PduRecord {
    segments: Vec<Segment>,
    in_flight: bool,
}

/// Transmitter and receiver of one RLC AM bearer with its PDCP pass-through.
#[derive(Clone, Debug)]
pub struct RlcAm {
    config: RlcConfig,
    /// SDUs `base_sdu ..` in acceptance order, until delivered.
    sdus: VecDeque<SduSlot>,
    base_sdu: u64,
    /// First SDU with untransmitted bytes, and how many of its bytes were already sent.
    next_tx_sdu: u64,
    next_tx_offset: u32,
    new_bytes: u64,
    /// Sorted by `ready_at` (ties in arrival order).
    retx: VecDeque<RetxPiece>,
    retx_bytes: u64,
    pdus: Vec<PduRecord>,
    free_pdus: Vec<u32>,
    stats: RlcStats,
}

impl RlcAm {
    pub fn new(config: RlcConfig) -> RlcAm {
        RlcAm {
            config,
            sdus: VecDeque::new(),
            base_sdu: 0,
            next_tx_sdu: 0,
            next_tx_offset: 0,
            new_bytes: 0,
            retx: VecDeque::new(),
            retx_bytes: 0,
            pdus: Vec::new(),
            free_pdus: Vec::new(),
            stats: RlcStats::default(),
        }
    }

    pub fn config(&self) -> &RlcConfig {
        &self.config
    }

    pub fn stats(&self) -> &RlcStats {
        &self.stats
    }

    /// PDCP receives an IP packet at `now`: accepted into the transmission buffer (true,
    /// `enqueued_at` stamped with `now`, as the other queues do) or tail-dropped (false,
    /// counted in [`RlcStats::dropped_sdus`]).
    pub fn enqueue(&mut self, mut packet: Packet, now: SimTime) -> bool {
        let size = packet.size + PDCP_HEADER_BYTES;
        if self.new_bytes + u64::from(size) > self.config.max_tx_buffer_bytes {
            self.stats.dropped_sdus += 1;
            self.stats.dropped_bytes += u64::from(size);
            return false;
        }
        packet.enqueued_at = now;
        self.sdus.push_back(SduSlot { packet, size, received: 0 });
        self.new_bytes += u64::from(size);
        self.stats.accepted_sdus += 1;
        self.stats.accepted_bytes += u64::from(size);
        true
    }

    /// Bytes waiting for transmission at `now`.
    pub fn buffer_status(&self, now: SimTime) -> BufferStatus {
        let retx_ready_bytes: u64 = self.retx.iter().take_while(|p| p.ready_at <= now).map(|p| u64::from(p.seg.len)).sum();
        BufferStatus { new_bytes: self.new_bytes, retx_ready_bytes, retx_waiting_bytes: self.retx_bytes - retx_ready_bytes }
    }

    /// Builds the RLC PDU of a TB of `tb_bytes` scheduled at `now`: eligible retransmissions
    /// first, then new data, segmenting SDUs to fill the TB. None if there is nothing to send
    /// or the TB cannot carry one payload byte; nothing is consumed then.
    pub fn fill(&mut self, tb_bytes: u32, now: SimTime) -> Option<PduFill> {
        let idx = self.free_pdus.pop().unwrap_or_else(|| {
            self.pdus.push(PduRecord::default());
            (self.pdus.len() - 1) as u32
        });
        let mut segments = std::mem::take(&mut self.pdus[idx as usize].segments);
        segments.clear();
        let (mut payload_bytes, mut retx_bytes) = (0u32, 0u32);
        loop {
            let header = MAC_SUBHEADER_BYTES + rlc_header_bytes(segments.len() as u32 + 1);
            let room = tb_bytes.saturating_sub(header + payload_bytes);
            if room == 0 {
                break;
            }
            let seg = if self.retx.front().is_some_and(|p| p.ready_at <= now) {
                let seg = self.take_retx(room);
                retx_bytes += seg.len;
                seg
            } else if self.new_bytes > 0 {
                self.take_new(room)
            } else {
                break;
            };
            payload_bytes += seg.len;
            segments.push(seg);
        }
        let n = segments.len() as u32;
        let record = &mut self.pdus[idx as usize];
        record.segments = segments;
        if n == 0 {
            self.free_pdus.push(idx);
            return None;
        }
        record.in_flight = true;
        Some(PduFill { pdu: PduId(idx), payload_bytes, retx_bytes, header_bytes: MAC_SUBHEADER_BYTES + rlc_header_bytes(n), segments: n })
    }

    /// The SDU pieces a PDU in flight carries.
    pub fn segments(&self, pdu: PduId) -> &[Segment] {
        &self.record(pdu).segments
    }

    /// HARQ delivered the TB of `pdu` (`HarqOutcome::Delivered`, at its `at`): the receiver
    /// reassembles and appends the SDUs now complete and in order to `out`, returning how
    /// many. Panics if `pdu` is not in flight (a caller bug).
    pub fn on_delivered(&mut self, pdu: PduId, out: &mut Vec<Packet>) -> usize {
        let record = self.release(pdu);
        for seg in &record.segments {
            self.sdus[(seg.sdu - self.base_sdu) as usize].received += seg.len;
        }
        self.pdus[pdu.0 as usize] = record;
        let mut n = 0;
        while self.sdus.front().is_some_and(|s| s.received == s.size) {
            let slot = self.sdus.pop_front().expect("front checked");
            out.push(slot.packet);
            self.base_sdu += 1;
            n += 1;
        }
        self.stats.delivered_sdus += n as u64;
        n
    }

    /// HARQ gave up on the TB of `pdu` (`HarqOutcome::Failed` at `detected_at`): its pieces
    /// become eligible for retransmission [`RlcConfig::arq_delay`] later. Panics if `pdu`
    /// is not in flight.
    pub fn on_failed(&mut self, pdu: PduId, detected_at: SimTime) {
        let record = self.release(pdu);
        let ready_at = detected_at + self.config.arq_delay();
        let pos = self.retx.partition_point(|p| p.ready_at <= ready_at);
        for (i, seg) in record.segments.iter().enumerate() {
            self.retx.insert(pos + i, RetxPiece { seg: *seg, ready_at });
            self.retx_bytes += u64::from(seg.len);
            self.stats.retx_queued_bytes += u64::from(seg.len);
        }
        self.pdus[pdu.0 as usize] = record;
    }

    fn record(&self, pdu: PduId) -> &PduRecord {
        let record = &self.pdus[pdu.0 as usize];
        assert!(record.in_flight, "RLC PDU {} is not in flight", pdu.0);
        record
    }

    /// Takes a PDU record out of flight (its slot goes back to the free list; the caller puts
    /// the record back to keep its segment buffer).
    fn release(&mut self, pdu: PduId) -> PduRecord {
        self.record(pdu);
        let mut record = std::mem::take(&mut self.pdus[pdu.0 as usize]);
        record.in_flight = false;
        self.free_pdus.push(pdu.0);
        record
    }

    /// Up to `room` bytes from the head of the (eligible) retransmission queue.
    fn take_retx(&mut self, room: u32) -> Segment {
        let front = self.retx.front_mut().expect("caller checked");
        let seg = if front.seg.len <= room {
            self.retx.pop_front().expect("front exists").seg
        } else {
            let head = Segment { len: room, ..front.seg };
            front.seg.offset += room;
            front.seg.len -= room;
            head
        };
        self.retx_bytes -= u64::from(seg.len);
        seg
    }

    /// Up to `room` not-yet-transmitted bytes, in SDU order.
    fn take_new(&mut self, room: u32) -> Segment {
        let slot = &self.sdus[(self.next_tx_sdu - self.base_sdu) as usize];
        let len = (slot.size - self.next_tx_offset).min(room);
        let seg = Segment { sdu: self.next_tx_sdu, offset: self.next_tx_offset, len };
        if self.next_tx_offset + len == slot.size {
            self.next_tx_sdu += 1;
            self.next_tx_offset = 0;
        } else {
            self.next_tx_offset += len;
        }
        self.new_bytes -= u64::from(len);
        seg
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{pkt, seq};
    use super::*;
    use tcplab_core::SimRng;

    fn ms(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(x)
    }

    fn big() -> RlcConfig {
        RlcConfig::study_a(40_000_000)
    }

    #[test]
    fn config_arq_delays_match_a10_heal_times() {
        // LteRlcAm: heal ≈ 3–4 ms with study settings, 10–20 ms with defaults; M8: t-Reordering + 1–2 ms.
        assert_eq!(RlcConfig::study_a(7_000_000).arq_delay(), SimDuration::from_millis(3));
        assert_eq!(RlcConfig::ns3_default().arq_delay(), SimDuration::from_millis(20));
        assert_eq!(RlcConfig::ns3_default().max_tx_buffer_bytes, 1_048_576);
    }

    #[test]
    fn header_sizes() {
        assert_eq!(rlc_header_bytes(1), 2);
        assert_eq!(rlc_header_bytes(2), 4); // 2 + 12 bits → 2 B
        assert_eq!(rlc_header_bytes(3), 5); // 2 + 24 bits → 3 B
        assert_eq!(rlc_header_bytes(4), 7); // 2 + 36 bits → 5 B
    }

    #[test]
    fn tail_drop_at_the_byte_limit() {
        // 1500-B IP packets are 1502-B PDCP PDUs; 6 × 1502 = 9012 ≤ 10,000 < 7 × 1502.
        let mut rlc = RlcAm::new(RlcConfig::study_a(10_000));
        let accepted: Vec<bool> = (0..8).map(|i| rlc.enqueue(pkt(i, 1500), ms(0))).collect();
        assert_eq!(accepted, [true, true, true, true, true, true, false, false]);
        assert_eq!(rlc.stats().dropped_sdus, 2);
        assert_eq!(rlc.stats().dropped_bytes, 2 * 1502);
        assert_eq!(rlc.buffer_status(ms(0)).new_bytes, 9012);
        // 988 B left: a 986-B IP packet (988 B with PDCP) fits exactly, one more byte does not.
        assert!(!rlc.enqueue(pkt(8, 987), ms(0)));
        assert!(rlc.enqueue(pkt(9, 986), ms(0)));
        assert_eq!(rlc.buffer_status(ms(0)).new_bytes, 10_000);
        // Transmitted bytes leave the limited buffer; unacknowledged ones do not count.
        let f = rlc.fill(1508, ms(0)).unwrap(); // 1508 − 4 − 2 = 1502 B: SDU 0 whole
        assert_eq!(f.payload_bytes, 1502);
        assert!(rlc.enqueue(pkt(10, 1500), ms(0)));
        assert!(!rlc.enqueue(pkt(11, 52), ms(0)));
        assert_eq!(rlc.stats().accepted_sdus, 8);
        assert_eq!(rlc.stats().dropped_sdus, 4);
    }

    #[test]
    fn segmentation_across_tbs_and_reassembly_with_exact_bytes() {
        let mut rlc = RlcAm::new(big());
        for i in 0..3 {
            rlc.enqueue(pkt(i, 1500), ms(u64::from(i) + 1));
        }
        // TB 1, 1000 B: MAC 4 + RLC 2 → 994 B of SDU 0.
        let a = rlc.fill(1000, ms(0)).unwrap();
        assert_eq!((a.payload_bytes, a.header_bytes, a.segments), (994, 6, 1));
        assert_eq!(rlc.segments(a.pdu), &[Segment { sdu: 0, offset: 0, len: 994 }]);
        // TB 2, 1000 B: the last 508 B of SDU 0 and, with a 2-B LI, 1000 − 4 − 4 − 508 = 484 B of SDU 1.
        let b = rlc.fill(1000, ms(0)).unwrap();
        assert_eq!((b.payload_bytes, b.header_bytes, b.segments), (992, 8, 2));
        assert_eq!(rlc.segments(b.pdu), &[Segment { sdu: 0, offset: 994, len: 508 }, Segment { sdu: 1, offset: 0, len: 484 }]);
        // TB 3, 4000 B: rest of SDU 1 (1018), SDU 2 (1502), header 4 + 4 → 1472 B padding.
        let c = rlc.fill(4000, ms(0)).unwrap();
        assert_eq!((c.payload_bytes, c.header_bytes, c.segments), (2520, 8, 2));
        assert_eq!(a.payload_bytes + b.payload_bytes + c.payload_bytes, 3 * 1502);
        assert_eq!(rlc.fill(4000, ms(0)), None);
        // HARQ delivers out of order: nothing leaves before SDU 0 is complete.
        let mut out = Vec::new();
        assert_eq!(rlc.on_delivered(c.pdu, &mut out), 0);
        assert_eq!(rlc.on_delivered(b.pdu, &mut out), 0);
        assert_eq!(rlc.on_delivered(a.pdu, &mut out), 3);
        assert_eq!(out.iter().map(seq).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(out.iter().map(|p| p.size).sum::<u32>(), 4500);
        assert!(out.iter().all(|p| p.enqueued_at == ms(u64::from(seq(p)) + 1)));
    }

    #[test]
    fn too_small_tb_carries_nothing() {
        let mut rlc = RlcAm::new(big());
        rlc.enqueue(pkt(0, 100), ms(0));
        assert_eq!(rlc.fill(6, ms(0)), None); // 4 + 2 B of headers, no room
        assert_eq!(rlc.buffer_status(ms(0)).new_bytes, 102);
        let f = rlc.fill(7, ms(0)).unwrap();
        assert_eq!((f.payload_bytes, f.header_bytes), (1, 6));
    }

    #[test]
    fn residual_harq_loss_is_healed_after_t_reordering_plus_status_prohibit() {
        let mut rlc = RlcAm::new(big()); // arq delay 3 ms
        for i in 0..4 {
            rlc.enqueue(pkt(i, 1500), ms(0));
        }
        let lost = rlc.fill(1508, ms(10)).unwrap(); // SDU 0
        let ok = rlc.fill(3012, ms(10)).unwrap(); // SDUs 1 and 2: 4 + 4 + 3004
        assert_eq!(ok.payload_bytes, 3004);
        let detected = ms(10) + SimDuration::from_micros(1700);
        rlc.on_failed(lost.pdu, detected);
        let mut out = Vec::new();
        // Head-of-line blocking: SDUs 1 and 2 wait for SDU 0.
        assert_eq!(rlc.on_delivered(ok.pdu, &mut out), 0);
        let ready = detected + SimDuration::from_millis(3);
        let st = rlc.buffer_status(SimTime(ready.0 - 1));
        assert_eq!((st.new_bytes, st.retx_ready_bytes, st.retx_waiting_bytes), (1502, 0, 1502));
        // One nanosecond early only new data (SDU 3) goes out.
        let early = rlc.fill(1508, SimTime(ready.0 - 1)).unwrap();
        assert_eq!((early.retx_bytes, rlc.segments(early.pdu)[0].sdu), (0, 3));
        let heal = rlc.fill(1508, ready).unwrap();
        assert_eq!(rlc.segments(heal.pdu), &[Segment { sdu: 0, offset: 0, len: 1502 }]);
        assert_eq!(heal.retx_bytes, 1502);
        assert_eq!(rlc.on_delivered(heal.pdu, &mut out), 3);
        assert_eq!(rlc.on_delivered(early.pdu, &mut out), 1);
        assert_eq!(out.iter().map(seq).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(rlc.stats().retx_queued_bytes, 1502);
        assert_eq!(rlc.buffer_status(ready), BufferStatus::default());
    }

    #[test]
    fn retransmissions_go_before_new_data_and_are_resegmented() {
        let mut rlc = RlcAm::new(big());
        for i in 0..3 {
            rlc.enqueue(pkt(i, 1000), ms(0)); // 1002-B PDCP PDUs
        }
        let a = rlc.fill(1012, ms(0)).unwrap(); // SDU 0 (1002) + 2 B of SDU 1 (header 4 + 4)
        assert_eq!(rlc.segments(a.pdu)[1], Segment { sdu: 1, offset: 0, len: 2 });
        rlc.on_failed(a.pdu, ms(1));
        let st = rlc.buffer_status(ms(4));
        assert_eq!((st.new_bytes, st.retx_ready_bytes, st.retx_waiting_bytes), (2002, 1004, 0));
        // A 600-B TB: 594 B of SDU 0 again, nothing new.
        let b = rlc.fill(600, ms(4)).unwrap();
        assert_eq!(rlc.segments(b.pdu), &[Segment { sdu: 0, offset: 0, len: 594 }]);
        // A 1000-B TB: rest of SDU 0 (408), SDU 1's 2 B, then new data: 1000 − 4 − 5 − 410 = 581 B of SDU 1.
        let c = rlc.fill(1000, ms(4)).unwrap();
        assert_eq!(
            rlc.segments(c.pdu),
            &[Segment { sdu: 0, offset: 594, len: 408 }, Segment { sdu: 1, offset: 0, len: 2 }, Segment { sdu: 1, offset: 2, len: 581 },]
        );
        assert_eq!((c.retx_bytes, c.payload_bytes, c.header_bytes), (410, 991, 9));
        let st = rlc.buffer_status(ms(4));
        assert_eq!((st.new_bytes, st.retx_ready_bytes), (2002 - 581, 0));
    }

    #[test]
    fn every_accepted_sdu_is_delivered_once_in_order_under_random_tb_loss() {
        for (cap, seed) in [(40_000_000u64, 1u64), (20_000, 2), (5_000, 3)] {
            let mut rng = SimRng::stream(seed, "rlc/test");
            let mut rlc = RlcAm::new(RlcConfig::study_a(cap));
            // (decision time, pdu, delivered?) of TBs in flight.
            let mut flight: Vec<(SimTime, PduId, bool)> = Vec::new();
            let (mut out, mut accepted) = (Vec::new(), Vec::new());
            let mut offered = 0u32;
            let tti = SimDuration::from_micros(100);
            let mut now = SimTime::ZERO;
            for step in 0..20_000u32 {
                if step < 15_000 {
                    for _ in 0..rng.below(4) {
                        let p = pkt(offered, 52 + rng.below(1449));
                        if rlc.enqueue(p, now) {
                            accepted.push(offered);
                        }
                        offered += 1;
                    }
                }
                if let Some(f) = rlc.fill(8 + rng.below(3000), now) {
                    let at = now + SimDuration::from_micros(200 + u64::from(rng.below(600)));
                    flight.push((at, f.pdu, !rng.chance(0.2)));
                }
                now += tti;
                let mut i = 0;
                while i < flight.len() {
                    if flight[i].0 <= now {
                        let (at, pdu, ok) = flight.swap_remove(i);
                        if ok {
                            rlc.on_delivered(pdu, &mut out);
                        } else {
                            rlc.on_failed(pdu, at);
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            assert!(flight.is_empty());
            let st = rlc.stats();
            assert_eq!(st.accepted_sdus + st.dropped_sdus, u64::from(offered));
            assert!(st.retx_queued_bytes > 0);
            assert_eq!(cap == 40_000_000, st.dropped_sdus == 0, "cap {cap}");
            assert_eq!(out.iter().map(seq).collect::<Vec<_>>(), accepted);
            assert_eq!(rlc.buffer_status(now), BufferStatus::default());
        }
    }
}
