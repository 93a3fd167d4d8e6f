//! The ns3 stack's sender (`tcp.stack = "ns3"`, docs/ns3-stack.md): ns-3 3.44's
//! `TcpSocketBase` with `TcpTxBuffer`, `TcpPrrRecovery` and `TcpRateLinux`, driving a
//! [`tcplab_cc::ns3::Ns3CongestionOps`]. Per ACK, as `TcpSocketBase::DoForwardUp` /
//! `ReceivedAck` / `ProcessAck`: (1) `EstimateRtt` from the timestamp echo (ns-3 timestamps
//! count whole ms) when the ACK covers the oldest segment of the RTT history; (2) the peer's
//! window; (3) SACK scoreboard update and RFC 6675 loss marking, then the cumulative ACK,
//! counting delivered bytes for the rate estimator; (4) `ProcessAck`: duplicate ACKs (with
//! SACK: ACKs that SACK something new) move Open → Disorder → Recovery at the third or when the
//! head is lost; PRR in Recovery; `PktsAcked` and, in Open only, `IncreaseWindow`; a partial
//! ACK retransmits the next hole at once; (5) `CongControl` with a rate sample for BBR.
//! BytesInFlight is `TcpTxBuffer`'s: a SACKed retransmission stays in it until the cumulative
//! ACK or a timeout (`Scoreboard::ns3`); entering Recovery leaves a head already lost alone,
//! so a lost head's outstanding retransmission stays in flight (`EnterRecovery` marks the head
//! only if `TcpTxBuffer::IsLost` is false).
//! Sending is `SendPendingData`: while min(cwnd, rwnd) − BytesInFlight holds a segment,
//! RFC 6675 NextSeg (lost segments first, then new data), one segment per pacing interval when
//! pacing is on (never for the initial window).
//!
//! What differs from the Linux stack (sender.rs) is ns-3's, on purpose: windows in bytes; no
//! RACK, TLP, undo, F-RTO, cwnd-limited check on growth, GSO, TSO deferral or TSQ; RTO only
//! restarted by new ACKs (`NewAck`), min RTO 1 s, RFC 6298 estimator; the minimum RTT is that of
//! the smoothed RTT; CongestionStateSet/CwndEvent at ns-3's places; PRR as 3.44 computes it
//! (prr.rs). Simplified: a segment is one simulator packet, cut when it is first sent (ns-3
//! re-cuts its byte stream at every retransmission, which only matters when segment sizes
//! change); without SACK, duplicate ACKs stand for full segments in BytesInFlight; NextSeg's
//! rule 3 (retransmitting a hole not yet lost when no new data is available) and ECN are left
//! out (the scenario refuses `tcp.ecn` on this stack).

mod prr;
mod rate;
mod rtt;

use crate::config::{PacingMode, TcpConfig};
use crate::scoreboard::{Scoreboard, Segment};
use crate::sender::{AckOutcome, SenderGauges, SenderStats, Transmit};
use prr::{Ns3Prr, PrrInput};
use rate::Ns3Rate;
use rtt::RttMeanDeviation;
use std::collections::VecDeque;
use tcplab_cc::ns3::{CaEvent, CongState, Ns3CongestionOps, Tcb};
use tcplab_cc::INFINITE_SSTHRESH;
use tcplab_core::{AckHeader, DataHeader, Ecn, Rate, SimDuration, SimTime};

/// ns-3 `TcpSocketBase::ReTxThreshold` default.
const RETX_THRESH: u32 = 3;
/// ns-3's cap on the backed-off RTO (`ReTxTimeout`: 60 s).
const MAX_RTO: SimDuration = SimDuration::from_secs(60);
/// ns-3 `TcpSocketState::PacingSsRatio` / `PacingCaRatio` defaults, percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;
/// ns-3 `TcpSocket::ConnTimeout` default: the SYN is sent again after this long.
const CONN_TIMEOUT: SimDuration = SimDuration::from_secs(3);
/// ns-3 BulkSendApplication's `SendSize` default: the bulk application refills the send buffer
/// in writes of this many bytes whenever an ACK frees room.
const BULK_SEND_SIZE: u64 = 512;

/// One entry of ns-3's RTT history (`RttHistory`): a segment sent for the first time (with
/// timestamps, whether it was resent does not matter).
#[derive(Clone, Copy, Debug)]
struct RttHistory {
    seq: u32,
}

/// The ns3 stack's TCP sender of one flow.
#[derive(Debug)]
pub struct Ns3Sender {
    cfg: TcpConfig,
    cc: Box<dyn Ns3CongestionOps>,
    tcb: Tcb,
    sb: Scoreboard,
    rtt: RttMeanDeviation,
    /// `m_rto`.
    rto: SimDuration,
    /// `m_retxEvent`'s expiry, if scheduled.
    rto_deadline: Option<SimTime>,
    /// `m_history`: segments sent for the first time, oldest first.
    history: VecDeque<RttHistory>,
    prr: Ns3Prr,
    rate: Ns3Rate,
    dup_ack_count: u32,
    /// `m_recover` (segment number) and `m_recoverActive`.
    recover: u32,
    recover_active: bool,
    is_first_partial_ack: bool,
    bytes_acked_not_processed: u32,
    /// `m_rWnd`: the peer's window, bytes.
    rwnd: u64,
    /// Segments that go out at once, before `SendPendingData` (the fast retransmission on
    /// entering Recovery and the retransmission on a partial ACK, which ns-3 sends outright).
    forced: VecDeque<Transmit>,
    /// When the pacing timer expires (`m_pacingTimer`); sends wait for it.
    pacing_until: SimTime,
    /// Payload bytes the application has written (`u64::MAX` = bulk: the buffer stays full).
    app_bytes: u64,
    new_bytes_sent: u64,
    started: bool,
    /// The handshake: a SYN is due, and whether the SYN-ACK came.
    syn_due: bool,
    established: bool,
    retransmits: u64,
    rto_count: u64,
    bytes_sent: u64,
    bytes_acked: u64,
    segments_sent: u64,
}

impl Ns3Sender {
    /// `bytes`: None = bulk (ns-3 BulkSendApplication without MaxBytes), Some(n) = n bytes.
    pub fn new(cfg: TcpConfig, cc: Box<dyn Ns3CongestionOps>, bytes: Option<u64>) -> Self {
        let ssthresh = if cfg.initial_ssthresh >= INFINITE_SSTHRESH { u32::MAX } else { cfg.initial_ssthresh.saturating_mul(cfg.mss) };
        let mut tcb = Tcb::new(cfg.mss, cfg.initial_cwnd, ssthresh);
        tcb.pacing = cfg.pacing == PacingMode::Fq;
        Ns3Sender {
            rto: cfg.initial_rto,
            rwnd: cfg.rcv_buf_bytes,
            cc,
            tcb,
            sb: Scoreboard::ns3(),
            rtt: RttMeanDeviation::default(),
            rto_deadline: None,
            history: VecDeque::new(),
            prr: Ns3Prr::default(),
            rate: Ns3Rate::default(),
            dup_ack_count: 0,
            recover: 0,
            recover_active: false,
            is_first_partial_ack: true,
            bytes_acked_not_processed: 0,
            forced: VecDeque::new(),
            pacing_until: SimTime::ZERO,
            app_bytes: bytes.unwrap_or(u64::MAX),
            new_bytes_sent: 0,
            started: false,
            syn_due: false,
            established: false,
            retransmits: 0,
            rto_count: 0,
            bytes_sent: 0,
            bytes_acked: 0,
            segments_sent: 0,
            cfg,
        }
    }

    /// The application connects: `Init`, then the SYN (`poll_transmit` sends it). ns-3 runs a
    /// three-way handshake; its SYN-ACK gives the first RTT sample (the SYN is in the RTT
    /// history) before `CongestionStateSet(CA_OPEN)`, where BBR sets its first pacing rate.
    pub fn start(&mut self, now: SimTime) {
        self.started = true;
        self.tcb.now = now;
        self.cc.init(&mut self.tcb);
        self.syn_due = true;
    }

    /// `ProcessSynSent` on the SYN-ACK: RTT sample, initial window, CA_OPEN, then the
    /// application's first writes.
    fn established(&mut self, now: SimTime, ack: &AckHeader) -> Option<SimDuration> {
        let rtt = self.measure_rtt(now, ack);
        self.rwnd = ack.rwnd_bytes;
        self.rto_deadline = None;
        self.tcb.cwnd = self.tcb.initial_cwnd * self.cfg.mss;
        self.tcb.ssthresh = self.tcb.initial_ssthresh;
        self.set_state(CongState::Open);
        self.established = true;
        self.app_write();
        Some(rtt)
    }

    pub fn stop_app(&mut self) {
        self.app_bytes = self.app_bytes.min(self.new_bytes_sent);
    }

    /// The application writes `bytes` more (`TcpSocketBase::Send`, then `CalculateAppLimited`).
    pub fn write(&mut self, bytes: u64) {
        self.app_bytes = self.app_bytes.saturating_add(bytes);
        self.app_write();
    }

    /// Room left in the send buffer (`GetTxAvailable`).
    pub fn send_buffer_free(&self) -> u64 {
        self.cfg.snd_buf_bytes.saturating_sub(self.sb.bytes_out() + self.unsent())
    }

    pub fn is_done(&self) -> bool {
        self.app_bytes != u64::MAX && self.new_bytes_sent == self.app_bytes && self.sb.packets_out() == 0
    }

    /// Frees the scoreboard, the RTT history and the forced sends once empty (when done).
    pub fn release_buffers(&mut self) {
        self.sb.release_room();
        if self.history.is_empty() && self.forced.is_empty() {
            (self.history, self.forced) = (VecDeque::new(), VecDeque::new());
        }
    }

    /// Bytes of the buffers sized by the window (scoreboard, RTT history, forced sends).
    pub fn heap_bytes(&self) -> usize {
        self.sb.heap_bytes()
            + self.history.capacity() * std::mem::size_of::<RttHistory>()
            + self.forced.capacity() * std::mem::size_of::<Transmit>()
    }

    pub fn packets_out(&self) -> u32 {
        self.sb.packets_out()
    }

    /// Written bytes not sent yet; bulk keeps the send buffer full.
    fn unsent(&self) -> u64 {
        if self.app_bytes == u64::MAX {
            self.cfg.snd_buf_bytes.saturating_sub(self.sb.bytes_out())
        } else {
            self.app_bytes - self.new_bytes_sent
        }
    }

    fn seg_bytes(&self, segments: u32) -> u32 {
        segments.saturating_mul(self.cfg.mss)
    }

    /// `BytesInFlight()`, also stored in `m_bytesInFlight` as ns-3 does. Without SACK the
    /// duplicate ACKs counted as SACKed stand for full segments.
    fn bytes_in_flight(&mut self) -> u32 {
        let b = if self.cfg.sack { self.sb.in_flight_bytes() as u32 } else { self.seg_bytes(self.sb.in_flight()) };
        self.tcb.bytes_in_flight = b;
        b
    }

    /// An application write: ns-3 checks for app-limited there (`CalculateAppLimited`).
    fn app_write(&mut self) {
        let in_flight = self.bytes_in_flight();
        let (lost, retrans) = (self.sb.lost_bytes() as u32, self.sb.retrans_bytes() as u32);
        self.rate.calculate_app_limited(self.tcb.cwnd, in_flight, self.cfg.mss, self.unsent(), lost, retrans);
    }

    fn set_state(&mut self, state: CongState) {
        self.cc.congestion_state_set(&mut self.tcb, state);
        self.tcb.cong_state = state;
    }

    fn prr_input(&self) -> PrrInput {
        PrrInput {
            bytes_in_flight: self.tcb.bytes_in_flight,
            ssthresh: self.tcb.ssthresh,
            segment_size: self.cfg.mss,
            retrans_data_acked: self.tcb.is_retrans_data_acked,
        }
    }

    /// `DoForwardUp` for an ACK: `EstimateRtt`, `UpdateWindowSize`, `ReceivedAck`. Call
    /// [`poll_transmit`](Self::poll_transmit) afterwards (`SendPendingData`).
    pub fn on_ack(&mut self, now: SimTime, ack: &AckHeader) -> AckOutcome {
        let mut out = AckOutcome::default();
        if !self.started || ack.ack > self.sb.snd_nxt() {
            return out;
        }
        self.tcb.now = now;
        if !self.established {
            out.rtt_sample = self.established(now, ack);
            return out;
        }
        out.rtt_sample = self.estimate_rtt(now, ack);
        let head = self.sb.snd_una();
        if ack.ack > head || (ack.ack == head && ack.rwnd_bytes > self.rwnd) {
            self.rwnd = ack.rwnd_bytes;
        }
        if ack.ack < head {
            return out; // stale
        }
        let previous_lost = self.sb.lost_bytes();
        let prior_in_flight = self.tcb.bytes_in_flight;
        let previous_delivered = self.rate.rc.delivered;
        // (3) ReadOptions: the SACK scoreboard (TcpTxBuffer::Update) and its loss marking
        let rate = &mut self.rate;
        let newly_sacked = if self.cfg.sack {
            self.sb.tag_sacks(ack.sack_blocks(), ack.ack, |_, seg| rate.on_delivered(now, u32::from(seg.payload), seg.sent, &seg.tx))
        } else {
            0
        };
        if newly_sacked > 0 {
            self.sb.mark_lost_from_sacks(self.sb.snd_nxt());
        }
        if ack.ack > head && ack.ack < self.recover && self.tcb.cong_state == CongState::Recovery {
            // `IsRetransmittedDataAcked` for the segments this ACK covers
            self.tcb.is_retrans_data_acked = (head..ack.ack).any(|s| self.sb.get(s).retrans_outstanding());
        }
        // DiscardUpTo
        let rate = &mut self.rate;
        let mut acked_bytes = 0u64;
        self.sb.ack_to(ack.ack, |_, seg| {
            if !seg.sacked() {
                rate.on_delivered(now, u32::from(seg.payload), seg.sent, &seg.tx);
            }
            acked_bytes += u64::from(seg.payload);
        });
        out.newly_acked_bytes = acked_bytes;
        self.bytes_acked += acked_bytes;
        let current_delivered = (self.rate.rc.delivered - previous_delivered) as u32;
        self.tcb.last_acked_sacked_bytes = current_delivered;
        self.bytes_in_flight();
        // (4)
        self.process_ack(now, ack.ack, newly_sacked > 0, current_delivered, head);
        self.tcb.is_retrans_data_acked = false;
        // (5)
        if self.cc.has_cong_control() {
            // ns-3 takes |lost now − lost before|: a lost segment SACKed counts as a loss too
            let lost = self.sb.lost_bytes().abs_diff(previous_lost) as u32;
            let rs = self.rate.generate_sample(current_delivered, lost, prior_in_flight, self.tcb.min_rtt);
            let rc = self.rate.rc;
            self.cc.cong_control(&mut self.tcb, &rc, &rs);
        }
        out
    }

    /// `EstimateRtt` with timestamps: a sample when the ACK covers the oldest entry of the
    /// history; RTT = now − the echoed timestamp (whole ms); `m_lastRtt`, SRTT, RTO, min RTT.
    fn estimate_rtt(&mut self, now: SimTime, ack: &AckHeader) -> Option<SimDuration> {
        let front = *self.history.front()?;
        let covered = ack.ack > front.seq;
        while self.history.front().is_some_and(|h| h.seq < ack.ack) {
            self.history.pop_front();
        }
        if !covered {
            return None;
        }
        Some(self.measure_rtt(now, ack))
    }

    /// One RTT measurement from the timestamp echo: whole milliseconds between now and the
    /// echoed value, both truncated (`TcpOptionTS::ElapsedTimeFromTsValue`), zero becoming
    /// 1 µs (`CalculateRttSample`); then `m_lastRtt`, the estimator, RTO, SRTT and the minimum
    /// of SRTT.
    fn measure_rtt(&mut self, now: SimTime, ack: &AckHeader) -> SimDuration {
        let rtt = ts_value(now).saturating_since(ack.tsecr).max(SimDuration::from_micros(1));
        self.tcb.last_rtt = rtt;
        self.rtt.measurement(rtt);
        self.rto = self.rtt.rto(self.cfg.min_rto).expect("just measured");
        self.tcb.srtt = self.rtt.srtt();
        self.tcb.min_rtt = self.tcb.min_rtt.min(self.tcb.srtt);
        rtt
    }

    /// `TcpSocketBase::ProcessAck`.
    fn process_ack(&mut self, now: SimTime, ack: u32, scoreboard_updated: bool, current_delivered: u32, old_head: u32) {
        let mut exited_fast_recovery = false;
        let old_dup_ack_count = self.dup_ack_count;
        let mss = self.cfg.mss;
        self.tcb.last_acked_seq = u64::from(ack) * u64::from(mss);
        let high_tx = self.sb.snd_nxt();
        let is_dupack = if self.cfg.sack { scoreboard_updated } else { ack == old_head && ack < high_tx };
        if is_dupack {
            self.dup_ack(now, current_delivered);
        }
        if ack == old_head && ack == high_tx {
            return;
        }
        if ack == old_head {
            let srtt = self.tcb.srtt;
            self.cc.pkts_acked(&mut self.tcb, 1, srtt);
        } else if ack > old_head {
            let mut segs_acked = current_delivered / mss;
            self.bytes_acked_not_processed += current_delivered % mss;
            if self.bytes_acked_not_processed >= mss {
                segs_acked += 1;
                self.bytes_acked_not_processed -= mss;
            }
            if !is_dupack {
                self.dup_ack_count = 0;
            }
            let srtt = self.tcb.srtt;
            let state = self.tcb.cong_state;
            if ack < self.recover && state == CongState::Recovery {
                if !self.cfg.sack {
                    self.sb.ns3_mark_head_lost();
                }
                if !self.cc.has_cong_control() && segs_acked >= 1 {
                    if let Some(cwnd) = self.prr.do_recovery(self.prr_input(), current_delivered, false) {
                        self.tcb.cwnd = cwnd;
                    }
                }
                // `IsRetransmittedDataAcked(ack + segment)`: the new head is not resent yet
                if !self.sb.get(ack).retrans_outstanding() {
                    self.do_retransmit(now);
                }
                self.cc.pkts_acked(&mut self.tcb, 1, srtt);
                let reset = self.is_first_partial_ack;
                self.new_ack(now, ack, reset);
                self.is_first_partial_ack = false;
            } else if ack < self.recover && state == CongState::Loss {
                self.cc.pkts_acked(&mut self.tcb, segs_acked, srtt);
                self.cc.increase_window(&mut self.tcb, segs_acked);
                self.new_ack(now, ack, true);
            } else {
                match state {
                    CongState::Open => self.cc.pkts_acked(&mut self.tcb, segs_acked, srtt),
                    CongState::Disorder => {
                        if segs_acked >= old_dup_ack_count {
                            self.cc.pkts_acked(&mut self.tcb, segs_acked - old_dup_ack_count, srtt);
                        }
                        if !is_dupack {
                            self.set_state(CongState::Open);
                        }
                    }
                    CongState::Recovery => {
                        self.is_first_partial_ack = true;
                        segs_acked = ack - old_head;
                        self.cc.pkts_acked(&mut self.tcb, segs_acked, srtt);
                        self.cc.cwnd_event(&mut self.tcb, CaEvent::CompleteCwr);
                        self.set_state(CongState::Open);
                        exited_fast_recovery = true;
                        self.dup_ack_count = 0;
                    }
                    CongState::Loss => {
                        self.is_first_partial_ack = true;
                        segs_acked = ack.saturating_sub(self.recover);
                        self.cc.pkts_acked(&mut self.tcb, segs_acked, srtt);
                        self.set_state(CongState::Open);
                    }
                    CongState::Cwr => unreachable!("the ns3 stack has no ECN"),
                }
                if ack >= self.recover {
                    self.recover_active = false;
                }
                if exited_fast_recovery {
                    self.new_ack(now, ack, true);
                    self.tcb.cwnd = self.tcb.ssthresh;
                }
                if self.tcb.cong_state == CongState::Open {
                    self.cc.increase_window(&mut self.tcb, segs_acked);
                    self.new_ack(now, ack, true);
                }
            }
        }
        self.update_pacing_rate();
    }

    /// `TcpSocketBase::DupAck`.
    fn dup_ack(&mut self, now: SimTime, current_delivered: u32) {
        let state = self.tcb.cong_state;
        if state == CongState::Loss {
            return;
        }
        if state != CongState::Recovery {
            self.dup_ack_count += 1;
        }
        if state == CongState::Open {
            self.set_state(CongState::Disorder);
        }
        match self.tcb.cong_state {
            CongState::Recovery => {
                if !self.cfg.sack {
                    self.sb.add_reno_sacks(1);
                }
                if !self.cc.has_cong_control() {
                    if let Some(cwnd) = self.prr.do_recovery(self.prr_input(), current_delivered, true) {
                        self.tcb.cwnd = cwnd;
                    }
                }
            }
            CongState::Disorder => {
                let head = self.sb.snd_una();
                let enter = (self.dup_ack_count == RETX_THRESH && (head >= self.recover || !self.recover_active))
                    || self.sb.head().is_some_and(|h| h.lost());
                if enter {
                    self.enter_recovery(now, current_delivered);
                } else if !self.cfg.sack {
                    self.sb.add_reno_sacks(1); // limited transmit
                }
            }
            _ => {}
        }
    }

    /// `TcpSocketBase::EnterRecovery`.
    fn enter_recovery(&mut self, now: SimTime, current_delivered: u32) {
        // without SACK the head is marked lost again; with SACK only if it is not lost yet, so
        // that a lost head's outstanding retransmission stays in flight
        if !self.cfg.sack {
            self.sb.add_reno_sacks(1);
            self.sb.ns3_mark_head_lost();
        } else if !self.sb.head().is_some_and(|h| h.lost()) {
            self.sb.ns3_mark_head_lost();
        }
        let head = self.sb.snd_una();
        self.recover = self.sb.snd_nxt();
        self.recover_active = true;
        self.set_state(CongState::Recovery);
        let mut in_flight = self.bytes_in_flight();
        if !self.cfg.sack {
            in_flight += self.cfg.mss;
        }
        self.tcb.ssthresh = self.cc.get_ss_thresh(&self.tcb, in_flight);
        if !self.cc.has_cong_control() {
            if let Some(cwnd) = self.prr.enter_recovery(self.prr_input(), current_delivered) {
                self.tcb.cwnd = cwnd;
            }
        }
        let tx = self.send_segment(now, head, true);
        self.forced.push_back(tx);
    }

    /// `TcpSocketBase::DoRetransmit`, sent at once whatever the window: what NextSeg offers
    /// (a lost segment not yet resent, else a new segment), else the head again.
    fn do_retransmit(&mut self, now: SimTime) {
        let tx = match self.next_seg() {
            Some((seq, retransmit)) => self.send_segment(now, seq, retransmit),
            None => self.send_segment(now, self.sb.snd_una(), true),
        };
        self.forced.push_back(tx);
    }

    /// `TcpTxBuffer::NextSeg` without rule 3: (segment, is a retransmission).
    fn next_seg(&mut self) -> Option<(u32, bool)> {
        if let Some(seq) = self.sb.next_retransmit() {
            return Some((seq, true));
        }
        let payload = self.unsent().min(u64::from(self.cfg.mss));
        (payload > 0 && self.sb.bytes_out() + payload <= self.rwnd).then_some((self.sb.snd_nxt(), false))
    }

    /// `TcpSocketBase::NewAck`.
    fn new_ack(&mut self, now: SimTime, ack: u32, reset_rto: bool) {
        if reset_rto {
            if let Some(rto) = self.rtt.rto(self.cfg.min_rto) {
                self.rto = rto;
            }
            self.rto_deadline = Some(now + self.rto);
        }
        // NotifySend: a bulk application refills the buffer, a write `CalculateAppLimited`
        // checks (a write of SendSize fails, unchecked, when less room is left); other
        // applications write on their own schedule
        if self.app_bytes == u64::MAX && self.send_buffer_free() >= BULK_SEND_SIZE {
            self.app_write();
        }
        let mss = u64::from(self.cfg.mss);
        self.tcb.next_tx_sequence = self.tcb.next_tx_sequence.max(u64::from(ack) * mss);
        if self.sb.packets_out() == 0 && self.unsent() == 0 {
            self.rto_deadline = None;
        }
    }

    /// `UpdatePacingRate` (not for algorithms with `CongControl`, which set it themselves).
    fn update_pacing_rate(&mut self) {
        if self.cc.has_cong_control() || !self.tcb.pacing || self.tcb.srtt == SimDuration::ZERO {
            return;
        }
        let ratio = if self.tcb.cwnd < self.tcb.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        let bytes = u64::from(self.tcb.cwnd.max(self.tcb.bytes_in_flight));
        let bps = (bytes as f64 * 8.0 * ratio as f64 / 100.0 / self.tcb.srtt.as_secs_f64()) as u64;
        self.tcb.pacing_rate = bps.min(self.tcb.max_pacing_rate);
    }

    /// `IsPacingEnabled`: pacing is on and the initial window has gone out.
    fn pacing_enabled(&self) -> bool {
        self.tcb.pacing && u64::from(self.sb.snd_nxt()) * u64::from(self.cfg.mss) > u64::from(self.tcb.initial_cwnd * self.cfg.mss)
    }

    /// The next segment to send at `now`: first those ns-3 sent outright during ACK
    /// processing, then one iteration of `SendPendingData`. Drain until None.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if let Some(tx) = self.forced.pop_front() {
            return Some(tx);
        }
        if std::mem::take(&mut self.syn_due) {
            self.rto_deadline = Some(now + CONN_TIMEOUT);
            let header = DataHeader { seq: 0, payload: 0, tsval: ts_value(now), cwr: false, psh: false };
            return Some(Transmit { header, ecn: Ecn::NotEct, is_retransmit: false });
        }
        if !self.established {
            return None;
        }
        self.tcb.now = now;
        if self.pacing_enabled() && now < self.pacing_until {
            return None;
        }
        let window = self.rwnd.min(u64::from(self.tcb.cwnd));
        let in_flight = u64::from(self.bytes_in_flight());
        let available = window.saturating_sub(in_flight);
        if available == 0 {
            return None;
        }
        let (seq, retransmit) = self.next_seg()?;
        let data_from_seq = if retransmit { u64::MAX } else { self.unsent() };
        // silly-window avoidance: wait for a full segment unless the data left fits
        if available < u64::from(self.cfg.mss) && data_from_seq > available {
            return None;
        }
        if in_flight == 0 {
            self.cc.cwnd_event(&mut self.tcb, CaEvent::TxStart);
        }
        Some(self.send_segment(now, seq, retransmit))
    }

    /// `SendDataPacket`.
    fn send_segment(&mut self, now: SimTime, seq: u32, retransmit: bool) -> Transmit {
        let start = self.bytes_in_flight() == 0;
        let tx = self.rate.on_sent(now, start);
        let payload = if retransmit {
            self.sb.record_retransmit(seq, now, tx);
            self.retransmits += 1;
            u32::from(self.sb.get(seq).payload)
        } else {
            let payload = self.unsent().min(u64::from(self.cfg.mss)) as u32;
            self.sb.push(Segment::new(payload, now, tx));
            self.new_bytes_sent += u64::from(payload);
            self.history.push_back(RttHistory { seq });
            payload
        };
        if self.pacing_enabled() && now >= self.pacing_until {
            self.pacing_until = now + Rate::from_bps(self.tcb.pacing_rate.max(1)).tx_time(u64::from(payload));
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
        let in_flight = self.bytes_in_flight();
        self.tcb.is_cwnd_limited = self.tcb.cwnd < in_flight + self.cfg.mss;
        if matches!(self.tcb.cong_state, CongState::Recovery | CongState::Cwr) {
            self.prr.on_sent(payload);
        }
        let mss = u64::from(self.cfg.mss);
        self.tcb.next_tx_sequence = u64::from(seq + 1) * mss;
        self.tcb.high_tx_mark = self.tcb.high_tx_mark.max(self.tcb.next_tx_sequence);
        self.segments_sent += 1;
        self.bytes_sent += u64::from(payload);
        Transmit {
            header: DataHeader { seq, payload, tsval: ts_value(now), cwr: false, psh: false },
            ecn: Ecn::NotEct,
            is_retransmit: retransmit,
        }
    }

    /// The retransmission timer's deadline, if armed.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_deadline
    }

    /// When the pacing timer lets the next segment go, if it holds one that is ready.
    pub fn pacing_release(&self) -> Option<SimTime> {
        let ready = self.sb.lost_out() > self.sb.retrans_out() || self.unsent() > 0;
        (self.pacing_enabled() && self.tcb.now < self.pacing_until && ready).then_some(self.pacing_until)
    }

    /// Fires the retransmission timer if due (`ReTxTimeout`); call `poll_transmit` afterwards.
    pub fn on_timer(&mut self, now: SimTime) {
        self.tcb.now = now;
        if self.rto_deadline.is_none_or(|d| now < d) {
            return;
        }
        self.rto_deadline = None;
        if !self.established {
            self.syn_due = true; // the SYN again
            return;
        }
        if self.sb.packets_out() == 0 {
            return;
        }
        self.rto_count += 1;
        let in_flight_before = self.bytes_in_flight();
        self.dup_ack_count = 0;
        if !self.cfg.sack {
            self.sb.reset_reno_sacks();
        }
        let head_retransmitted = self.sb.head().is_some_and(|h| h.ever_retransmitted());
        self.sb.mark_all_lost(None);
        self.recover = self.sb.snd_nxt();
        self.recover_active = true;
        self.rto = (self.rto + self.rto).min(MAX_RTO);
        self.history.clear();
        if self.tcb.cong_state != CongState::Loss || !head_retransmitted {
            self.tcb.ssthresh = self.cc.get_ss_thresh(&self.tcb, in_flight_before);
        }
        self.cc.cwnd_event(&mut self.tcb, CaEvent::Loss);
        self.set_state(CongState::Loss);
        self.tcb.cwnd = self.cfg.mss;
        self.pacing_until = now;
        self.bytes_in_flight();
    }

    /// The smoothed RTT (`TcpSocketState::m_srtt`); None before the first measurement.
    pub fn srtt(&self) -> Option<SimDuration> {
        (self.tcb.srtt > SimDuration::ZERO).then_some(self.tcb.srtt)
    }

    /// What a sample of a flow group reads (the same values as `stats`).
    pub fn gauges(&self) -> SenderGauges {
        let srtt = self.tcb.srtt;
        SenderGauges {
            cwnd_pkts: self.tcb.cwnd / self.cfg.mss,
            inflight_pkts: self.sb.in_flight(),
            srtt: (srtt > SimDuration::ZERO).then_some(srtt),
            retransmits: self.retransmits,
        }
    }

    pub fn stats(&self) -> SenderStats {
        let SenderGauges { cwnd_pkts, inflight_pkts, srtt, retransmits } = self.gauges();
        let mss = self.cfg.mss;
        SenderStats {
            cwnd_pkts,
            ssthresh_pkts: (self.tcb.ssthresh != u32::MAX).then_some(self.tcb.ssthresh / mss),
            inflight_pkts,
            srtt,
            min_rtt: (self.tcb.min_rtt != SimDuration::MAX).then_some(self.tcb.min_rtt),
            pacing_rate: self.tcb.pacing.then(|| Rate::from_bps(self.tcb.pacing_rate)),
            delivery_rate: (self.rate.rc.rate_interval > SimDuration::ZERO).then(|| {
                Rate::from_bps((self.rate.rc.rate_delivered.max(0) as f64 * 8.0 / self.rate.rc.rate_interval.as_secs_f64()) as u64)
            }),
            delivery_rate_app_limited: self.rate.rc.rate_app_limited,
            retransmits,
            rto_count: self.rto_count,
            bytes_sent: self.bytes_sent,
            bytes_acked: self.bytes_acked,
            segments_sent: self.segments_sent,
            cc_state: self.cc.mode().unwrap_or(match self.tcb.cong_state {
                CongState::Open | CongState::Disorder if self.tcb.in_slow_start() => "slow_start",
                CongState::Open | CongState::Disorder => "cong_avoid",
                CongState::Cwr => "cwr",
                CongState::Recovery => "recovery",
                CongState::Loss => "loss",
            }),
            bbr: None,
        }
    }

    /// ns-3's `TcpSocketState` of this sender (for tests and traces).
    pub fn tcb(&self) -> &Tcb {
        &self.tcb
    }
}

/// ns-3's timestamp value: whole milliseconds (`TcpOptionTS::NowToTsValue`).
fn ts_value(now: SimTime) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(now.as_nanos() / 1_000_000)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
