//! The TCP sender (docs/models.md, TCP sender): Linux `tcp_ack` per-ACK processing with the
//! congestion-control hooks in Linux order, SACK/NewReno loss recovery (RFC 6675 / RFC 6582,
//! Linux `tcp_fastretrans_alert`), PRR, RTO with go-back-N (Linux `tcp_enter_loss`),
//! cwnd-limited tracking and slow start after idle, pacing and RFC 3168 ECN.
//!
//! Per ACK: (1) SACK tagging and cleaning of the retransmit queue, feeding the rate sampler;
//! (2) `in_ack_event`; (3) RTT estimator, then `pkts_acked`; (4) loss detection and the CA
//! state machine (`ssthresh`, `set_state`, `cwnd_event(CompleteCwr)`); (5) rate sample;
//! (6) `cong_control`, or PRR in CWR/Recovery, or `cong_avoid`, then the fq pacing rate.
//! The caller then drains [`TcpSender::poll_transmit`] (7).
//!
//! Not modelled (Linux defaults left out, docs/models.md): RACK-TLP, F-RTO and undo,
//! D-SACK, adaptive reordering, Nagle, TSO. ns-3 differs in counting windows in bytes,
//! entering recovery only on DupThresh duplicate ACKs, a 1 s minimum RTO and the RFC 6298
//! estimator, and in raising COMPLETE_CWR-like events for every algorithm.

use crate::config::{EcnMode, PacingMode, TcpConfig};
use crate::pacing::{fq_pacing_rate, schedule_next_departure};
use crate::prr::{Prr, PrrAck};
use crate::rate::RateSampler;
use crate::rtt::{RttEstimator, WindowedMin, MIN_RTT_WINDOW};
use crate::scoreboard::{Scoreboard, Segment, DUP_THRESH};
use tcplab_cc::{rate_sample::AckContext, AckFlags, AckSample, BbrInfo, CaState, CcCx, CongestionControl, CwndEvent, INFINITE_SSTHRESH};
use tcplab_core::{AckHeader, DataHeader, Ecn, Rate, SimDuration, SimTime};

/// A segment the sender puts on the wire now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub header: DataHeader,
    /// ECT(0) on new data when ECN is on; retransmissions are Not-ECT (RFC 3168 §6.1.5)
    /// except in accurate mode (Linux keeps ECT for DCTCP).
    pub ecn: Ecn,
    pub is_retransmit: bool,
}

/// What one ACK did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// RTT of the most recently sent segment this ACK newly (S)ACKed (Linux `ca_rtt_us`,
    /// or the timestamp echo when only retransmitted data was ACKed).
    pub rtt_sample: Option<SimDuration>,
    /// Payload bytes newly cumulatively acknowledged.
    pub newly_acked_bytes: u64,
}

/// A snapshot of the sender for the recorder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderStats {
    pub cwnd_pkts: u32,
    /// None while ssthresh is infinite.
    pub ssthresh_pkts: Option<u32>,
    pub inflight_pkts: u32,
    pub srtt: Option<SimDuration>,
    pub min_rtt: Option<SimDuration>,
    pub pacing_rate: Option<Rate>,
    /// The latest valid delivery-rate sample (Linux `tcpi_delivery_rate`: an app-limited
    /// sample replaces it only if higher).
    pub delivery_rate: Option<Rate>,
    /// Retransmitted segments, cumulative.
    pub retransmits: u64,
    pub rto_count: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    pub segments_sent: u64,
    /// The algorithm's own mode, or "slow_start" / "cong_avoid" / "recovery" / "cwr" / "loss".
    pub cc_state: &'static str,
    /// BBR's model (Linux `get_info` → `tcp_bbr_info`); None for algorithms without one.
    pub bbr: Option<BbrInfo>,
}

/// What the sender could put on the wire next, pacing aside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sendable {
    Retransmission,
    NewData {
        payload: u32,
    },
    /// New data waits but in-flight has reached cwnd.
    CwndLimited,
    Nothing,
}

/// Segments newly (S)ACKed by one ACK, as `tcp_clean_rtx_queue` and `tcp_sacktag_one` tally them.
#[derive(Clone, Copy, Debug, Default)]
struct AckTally {
    first_ackt: Option<SimTime>,
    last_ackt: Option<SimTime>,
    first_sackt: Option<SimTime>,
    last_sackt: Option<SimTime>,
    /// Linux FLAG_RETRANS_DATA_ACKED: Karn's rule forbids the ACK-timing RTT sample.
    retrans_data_acked: bool,
    /// Cumulatively ACKed segments not SACKed before.
    cum_delivered: u32,
    acked_bytes: u64,
}

/// The TCP sender of one flow.
#[derive(Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    cx: CcCx,
    sb: Scoreboard,
    rtt: RttEstimator,
    min_rtt: WindowedMin,
    rate: RateSampler,
    prr: Prr,
    /// Payload bytes the application has written (`u64::MAX` = unbounded).
    app_bytes: u64,
    /// Payload bytes of new data sent so far.
    new_bytes_sent: u64,
    /// Peer's advertised window, bytes.
    snd_wnd: u64,
    /// Linux `high_seq`: snd_nxt when the current CWR/Recovery/Loss episode started.
    high_seq: u32,
    /// Linux `cwnd_usage_seq`: end of the flight whose cwnd usage is being tracked.
    cwnd_usage_seq: u32,
    rto_deadline: Option<SimTime>,
    /// Consecutive RTO expiries without progress (Linux `icsk_retransmits`).
    consecutive_rtos: u32,
    /// RFC 3168: set CWR on the next new data segment.
    queue_cwr: bool,
    /// Linux `lsndtime`: last data transmission.
    last_send: Option<SimTime>,
    started: bool,
    retransmits: u64,
    rto_count: u64,
    bytes_sent: u64,
    bytes_acked: u64,
    segments_sent: u64,
}

impl TcpSender {
    /// `bytes`: None = unbounded bulk transfer, Some(n) = send n bytes then stop.
    pub fn new(cfg: TcpConfig, cc: Box<dyn CongestionControl>, bytes: Option<u64>) -> Self {
        let mut cx = CcCx::new(cfg.mss);
        cx.cwnd = cfg.initial_cwnd;
        cx.ssthresh = cfg.initial_ssthresh;
        cx.ecn_enabled = cfg.ecn.enabled();
        cx.paced = cc.has_cong_control() || cfg.pacing == PacingMode::Fq;
        TcpSender {
            rtt: RttEstimator::new(&cfg),
            snd_wnd: cfg.rcv_buf_bytes,
            cfg,
            cc,
            cx,
            sb: Scoreboard::new(),
            min_rtt: WindowedMin::new(),
            rate: RateSampler::default(),
            prr: Prr::default(),
            app_bytes: bytes.unwrap_or(u64::MAX),
            new_bytes_sent: 0,
            high_seq: 0,
            cwnd_usage_seq: 0,
            rto_deadline: None,
            consecutive_rtos: 0,
            queue_cwr: false,
            last_send: None,
            started: false,
            retransmits: 0,
            rto_count: 0,
            bytes_sent: 0,
            bytes_acked: 0,
            segments_sent: 0,
        }
    }

    /// The connection is established (no handshake is simulated): `cc.init`.
    pub fn start(&mut self, now: SimTime) {
        self.started = true;
        self.cx.now = now;
        self.call_cc(|cc, cx| cc.init(cx));
    }

    /// The application stops writing: what it wrote so far still completes.
    pub fn stop_app(&mut self) {
        self.app_bytes = self.app_bytes.min(self.new_bytes_sent);
    }

    /// The application writes `bytes` more (on/off sources; a no-op for unbounded transfers).
    pub fn write(&mut self, bytes: u64) {
        self.check_app_limited();
        self.app_bytes = self.app_bytes.saturating_add(bytes);
    }

    /// Room left in the send buffer: its size less the unacknowledged bytes and the written
    /// bytes not yet sent (what a non-blocking `send` may still write).
    pub fn send_buffer_free(&self) -> u64 {
        let unsent = if self.app_bytes == u64::MAX { 0 } else { self.app_bytes - self.new_bytes_sent };
        self.cfg.snd_buf_bytes.saturating_sub(self.sb.bytes_out() + unsent)
    }

    /// The written data has all been sent and cumulatively acknowledged.
    pub fn is_done(&self) -> bool {
        self.app_bytes != u64::MAX && self.new_bytes_sent == self.app_bytes && self.sb.packets_out() == 0
    }

    /// Linux per-ACK processing (`tcp_ack`). Call [`poll_transmit`](Self::poll_transmit)
    /// afterwards.
    pub fn on_ack(&mut self, now: SimTime, ack: &AckHeader) -> AckOutcome {
        let mut out = AckOutcome::default();
        let prior_una = self.sb.snd_una();
        if !self.started || ack.ack < prior_una || ack.ack > self.sb.snd_nxt() {
            return out; // old or invalid ACK
        }
        self.cx.now = now;
        self.check_app_limited();
        let advanced = ack.ack > prior_una;
        let ece = self.cfg.ecn.enabled() && ack.ece;
        // Linux tcp_may_update_window: a pure ACK updates the window (FLAG_WIN_UPDATE) when
        // it advances snd_una or opens the window.
        let win_update = advanced || ack.rwnd_bytes > self.snd_wnd;
        let window_changed = ack.rwnd_bytes != self.snd_wnd;
        if win_update {
            self.snd_wnd = ack.rwnd_bytes;
        }
        if self.sb.packets_out() == 0 {
            return out;
        }
        let prior_in_flight = self.sb.in_flight();
        let prior_delivered = self.rate.delivered;
        let prior_lost = self.rate.lost;
        self.rate.begin_ack();

        // (1) SACK tagging and cleaning of the retransmit queue.
        let mut tally = AckTally::default();
        let newly_sacked = if self.cfg.sack {
            let rate = &mut self.rate;
            self.sb.tag_sacks(ack.sack_blocks(), ack.ack, |seq, seg| {
                rate.on_delivered(seq, seg);
                if !seg.ever_retransmitted() {
                    tally.first_sackt.get_or_insert(seg.sent);
                    tally.last_sackt = Some(seg.sent);
                }
            })
        } else {
            0
        };
        let rate = &mut self.rate;
        let pkts_acked = self.sb.ack_to(ack.ack, |seq, seg: &Segment| {
            if seg.ever_retransmitted() {
                tally.retrans_data_acked = true;
            } else if !seg.sacked() {
                tally.first_ackt.get_or_insert(seg.sent);
                tally.last_ackt = Some(seg.sent);
            }
            if !seg.sacked() {
                tally.cum_delivered += 1;
                rate.on_delivered(seq, seg);
            }
            tally.acked_bytes += u64::from(seg.payload);
        });
        if self.cfg.sack {
            self.rate.count_delivered(newly_sacked + tally.cum_delivered, ece);
        } else {
            let delivered = self.sb.remove_reno_sacks(pkts_acked);
            self.rate.count_delivered(delivered, ece);
        }
        out.newly_acked_bytes = tally.acked_bytes;
        self.bytes_acked += tally.acked_bytes;

        // (2) in_ack_event: Linux's fast path is a pure advance with an unchanged window.
        let fast_path = advanced && ack.sack_len == 0 && !ack.ece && !window_changed;
        self.call_cc(|cc, cx| cc.in_ack_event(cx, AckFlags { slowpath: !fast_path, win_update, ece }));

        // (3) RTT estimator, then pkts_acked.
        let ca_rtt_us = self.update_rtt(now, ack, advanced, &tally);
        out.rtt_sample = ca_rtt_us.map(SimDuration::from_micros);
        let sample = AckSample { pkts_acked, rtt_us: ca_rtt_us.map_or(-1, |r| r as i64), in_flight: prior_in_flight };
        self.call_cc(|cc, cx| cc.pkts_acked(cx, &sample));

        // (4) Loss detection and the CA state machine (Linux tcp_ack_is_dubious).
        // FLAG_NOT_DUP: the ACK advanced snd_una or updated the window.
        if !win_update || newly_sacked > 0 || ece || self.cx.ca_state != CaState::Open {
            let num_dupack = u32::from(!win_update);
            self.fastretrans_alert(advanced, num_dupack, newly_sacked > 0, ece);
        }

        // (5) Rate sample.
        let delivered = (self.rate.delivered - prior_delivered) as u32;
        let losses = (self.rate.lost - prior_lost) as u32;
        let rs = self.rate.generate(&AckContext {
            now,
            delivered,
            losses,
            min_rtt_us: self.min_rtt.get(),
            prior_in_flight,
            rtt_us: ca_rtt_us.map_or(-1, |r| r as i64),
            is_ece: ece,
            is_ack_delayed: ack.delayed,
        });

        // (6) Window control.
        if self.cc.has_cong_control() {
            self.call_cc(|cc, cx| cc.cong_control(cx, &rs));
        } else {
            if matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
                let prr_ack = PrrAck {
                    ssthresh: self.cx.ssthresh,
                    prior_cwnd: self.cx.prior_cwnd,
                    in_flight: self.sb.in_flight(),
                    newly_acked_sacked: delivered,
                    newly_lost: losses,
                    snd_una_advanced: advanced,
                };
                if let Some(cwnd) = self.prr.cwnd_after_ack(&prr_ack) {
                    self.cx.cwnd = cwnd;
                }
            } else if advanced {
                self.call_cc(|cc, cx| cc.cong_avoid(cx, delivered));
            }
            self.cx.pacing_rate = fq_pacing_rate(&self.cx);
        }

        if advanced {
            self.consecutive_rtos = 0;
            self.rtt.reset_backoff();
            self.rto_deadline = (self.sb.packets_out() > 0).then(|| now + self.rtt.rto());
        }
        out
    }

    /// The next segment that may leave at `now` (retransmissions first), or None.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if !self.started || (self.cx.paced && now < self.cx.next_send_time) {
            return None;
        }
        self.cx.now = now;
        match self.sendable() {
            Sendable::Retransmission => {
                let seq = self.sb.next_retransmit()?;
                Some(self.transmit(now, seq, self.sb.get(seq).payload, true))
            }
            Sendable::NewData { payload } => {
                if self.sb.packets_out() == 0 {
                    self.restart_after_idle(now);
                }
                let t = self.transmit(now, self.sb.snd_nxt(), payload, false);
                self.cwnd_validate(self.sb.in_flight() >= self.cx.cwnd);
                Some(t)
            }
            Sendable::CwndLimited => {
                self.cwnd_validate(true);
                None
            }
            Sendable::Nothing => None,
        }
    }

    /// Whether the next segment to leave is a retransmission (Linux doubles the TCP Small
    /// Queues limit for those: `tcp_xmit_retransmit_queue`).
    pub fn retransmission_next(&self) -> bool {
        matches!(self.sendable(), Sendable::Retransmission)
    }

    /// Segments sent and not yet cumulatively acknowledged (Linux `packets_out`).
    pub fn packets_out(&self) -> u32 {
        self.sb.packets_out()
    }

    /// Earliest of the RTO deadline and, when a segment is ready but pacing holds it, its
    /// release time.
    pub fn next_timer(&self) -> Option<SimTime> {
        match (self.rto_deadline, self.pacing_release()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The retransmission timer's deadline, if armed.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_deadline
    }

    /// When pacing releases the segment that is ready to go, if pacing holds one.
    pub fn pacing_release(&self) -> Option<SimTime> {
        let held = self.cx.paced
            && self.cx.next_send_time > self.cx.now
            && matches!(self.sendable(), Sendable::Retransmission | Sendable::NewData { .. });
        held.then_some(self.cx.next_send_time)
    }

    /// Fires the RTO if it is due; otherwise nothing happens. Call `poll_transmit` afterwards.
    pub fn on_timer(&mut self, now: SimTime) {
        self.cx.now = now;
        if self.rto_deadline.is_some_and(|d| now >= d) {
            self.retransmission_timeout(now);
        }
    }

    pub fn stats(&self) -> SenderStats {
        let srtt = self.rtt.srtt_us();
        let min_rtt = self.min_rtt.get();
        SenderStats {
            cwnd_pkts: self.cx.cwnd,
            ssthresh_pkts: (self.cx.ssthresh < INFINITE_SSTHRESH).then_some(self.cx.ssthresh),
            inflight_pkts: self.sb.in_flight(),
            srtt: (srtt > 0).then(|| SimDuration::from_micros(srtt)),
            min_rtt: (min_rtt != u64::MAX).then(|| SimDuration::from_micros(min_rtt)),
            pacing_rate: (self.cx.pacing_rate > 0).then(|| Rate::from_bps(self.cx.pacing_rate.saturating_mul(8))),
            delivery_rate: self.rate.delivery_rate(self.cfg.mss),
            retransmits: self.retransmits,
            rto_count: self.rto_count,
            bytes_sent: self.bytes_sent,
            bytes_acked: self.bytes_acked,
            segments_sent: self.segments_sent,
            cc_state: self.cc.mode().unwrap_or(match self.cx.ca_state {
                CaState::Open | CaState::Disorder if self.cx.in_slow_start() => "slow_start",
                CaState::Open | CaState::Disorder => "cong_avoid",
                CaState::Cwr => "cwr",
                CaState::Recovery => "recovery",
                CaState::Loss => "loss",
            }),
            bbr: self.cc.get_info(&self.cx),
        }
    }

    /// The state the congestion-control algorithm sees (for tests and traces).
    pub fn cc_view(&self) -> &CcCx {
        &self.cx
    }

    /// Runs a congestion-control hook on an up-to-date view of the sender, then takes back
    /// what an algorithm may write to the connection beyond the window and pacing fields kept
    /// in the view: `app_limited`, which BBR sets in PROBE_RTT (Linux `bbr_update_min_rtt`
    /// writes `tp->app_limited`) and the rate sampler owns here.
    fn call_cc<R>(&mut self, hook: impl FnOnce(&mut dyn CongestionControl, &mut CcCx) -> R) -> R {
        self.sync_cx();
        let result = hook(self.cc.as_mut(), &mut self.cx);
        self.rate.app_limited = self.cx.app_limited;
        result
    }

    /// Copies the sender's state into the algorithm's view before a hook runs.
    fn sync_cx(&mut self) {
        let cx = &mut self.cx;
        cx.snd_una = self.sb.snd_una();
        cx.snd_nxt = self.sb.snd_nxt();
        cx.packets_out = self.sb.packets_out();
        cx.in_flight = self.sb.in_flight();
        cx.srtt_us = self.rtt.srtt_us();
        cx.min_rtt_us = self.min_rtt.get();
        cx.delivered = self.rate.delivered;
        cx.delivered_ce = self.rate.delivered_ce;
        cx.delivered_time = self.rate.delivered_time;
        cx.lost = self.rate.lost;
        cx.app_limited = self.rate.app_limited;
    }

    /// Linux `tcp_clean_rtx_queue` + `tcp_ack_update_rtt`: feeds the estimator and min_rtt;
    /// returns the RTT of the newest (S)ACKed segment (`ca_rtt_us`).
    fn update_rtt(&mut self, now: SimTime, ack: &AckHeader, advanced: bool, t: &AckTally) -> Option<u64> {
        let us = |sent: SimTime| now.saturating_since(sent).as_micros();
        let mut seq_rtt = None;
        let mut ca_rtt = None;
        if !t.retrans_data_acked {
            if let (Some(first), Some(last)) = (t.first_ackt, t.last_ackt) {
                seq_rtt = Some(us(first));
                ca_rtt = Some(us(last));
            }
        }
        if let (Some(first), Some(last)) = (t.first_sackt, t.last_sackt) {
            seq_rtt = seq_rtt.or(Some(us(first)));
            ca_rtt = Some(us(last));
        }
        if seq_rtt.is_none() && advanced {
            // Timestamps disambiguate retransmissions: TSecr is when this copy was sent.
            let ts = us(ack.tsecr).max(1);
            seq_rtt = Some(ts);
            ca_rtt = Some(ts);
        }
        let seq_rtt = seq_rtt?;
        let ca = ca_rtt.unwrap_or(seq_rtt);
        // Linux tcp_update_rtt_min: a possibly delayed ACK may not raise the minimum.
        if !(ack.delayed && ca > self.min_rtt.get()) {
            self.min_rtt.update(MIN_RTT_WINDOW, now, ca.max(1));
        }
        self.rtt.on_sample(seq_rtt, self.sb.snd_una(), self.sb.snd_nxt());
        Some(ca)
    }

    /// Linux `tcp_fastretrans_alert` without undo and RACK.
    fn fastretrans_alert(&mut self, advanced: bool, num_dupack: u32, data_sacked: bool, ece: bool) {
        let reno = !self.cfg.sack;
        let snd_una = self.sb.snd_una();
        if reno && self.sb.packets_out() == 0 {
            self.sb.reset_reno_sacks();
        }
        let do_lost = num_dupack > 0 || (data_sacked && self.sb.highest_sack_end() > snd_una + DUP_THRESH);
        // D. Leave CWR/Recovery once high_seq is acknowledged.
        if self.cx.ca_state != CaState::Open && snd_una >= self.high_seq {
            match self.cx.ca_state {
                // CWR holds until something above high_seq is ACKed, so that CWR got through.
                CaState::Cwr if snd_una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                }
                CaState::Recovery => {
                    if reno {
                        self.sb.reset_reno_sacks();
                        if snd_una == self.high_seq {
                            return; // RFC 6582: hold until an ACK above `recover`
                        }
                    }
                    self.set_state(CaState::Open);
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        let mut fast_rexmit = false;
        match self.cx.ca_state {
            CaState::Recovery => {
                if !advanced && reno {
                    self.count_reno_dupacks(num_dupack, ece);
                }
                self.identify_packet_loss(advanced);
            }
            state => {
                if state == CaState::Loss {
                    if snd_una >= self.high_seq {
                        if !(reno && snd_una == self.high_seq) {
                            self.set_state(CaState::Open);
                        }
                    } else if reno {
                        if self.sb.snd_nxt() > self.high_seq && num_dupack > 0 {
                            self.count_reno_dupacks(num_dupack, ece);
                        } else if advanced {
                            self.sb.reset_reno_sacks();
                        }
                    }
                    self.identify_packet_loss(advanced);
                    if self.cx.ca_state != CaState::Open {
                        return;
                    }
                }
                if reno {
                    if advanced {
                        self.sb.reset_reno_sacks();
                    }
                    self.count_reno_dupacks(num_dupack, ece);
                }
                self.identify_packet_loss(advanced);
                if !self.time_to_recover() {
                    self.try_to_open(ece);
                    return;
                }
                self.enter_recovery();
                fast_rexmit = true;
            }
        }
        if !reno && do_lost {
            self.update_scoreboard(fast_rexmit);
        }
    }

    fn count_reno_dupacks(&mut self, n: u32, ece: bool) {
        let counted = self.sb.add_reno_sacks(n);
        self.rate.count_delivered(counted, ece);
    }

    /// Linux `tcp_time_to_recover` (no RACK): a loss is known, or DupThresh packets were SACKed.
    fn time_to_recover(&self) -> bool {
        self.sb.lost_out() > 0 || self.sb.sacked_out() + 1 > DUP_THRESH
    }

    /// Linux `tcp_identify_packet_loss` without RACK: NewReno marks the head lost on the
    /// DupThresh-th duplicate ACK and on every partial ACK during recovery.
    fn identify_packet_loss(&mut self, advanced: bool) {
        if self.cfg.sack || self.sb.packets_out() == 0 {
            return;
        }
        let state = self.cx.ca_state;
        if (state < CaState::Recovery && self.sb.sacked_out() >= DUP_THRESH) || (state == CaState::Recovery && advanced) {
            self.rate.lost += u64::from(self.sb.mark_head_lost());
        }
    }

    /// Linux `tcp_update_scoreboard` (SACK): RFC 6675 IsLost below high_seq.
    fn update_scoreboard(&mut self, fast_rexmit: bool) {
        let newly = if self.sb.sacked_out() >= DUP_THRESH {
            self.sb.mark_lost_from_sacks(self.high_seq)
        } else if fast_rexmit {
            self.sb.mark_head_lost()
        } else {
            0
        };
        self.rate.lost += u64::from(newly);
    }

    /// Linux `tcp_try_to_open`: ECE starts CWR; otherwise Open or Disorder.
    fn try_to_open(&mut self, ece: bool) {
        if ece && self.cx.ca_state < CaState::Cwr {
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
        }
        if self.cx.ca_state != CaState::Cwr {
            let any_retrans = self.sb.retrans_out() > 0 || self.sb.head().is_some_and(|h| h.ever_retransmitted());
            let state = if self.sb.sacked_out() + self.sb.lost_out() > 0 || any_retrans { CaState::Disorder } else { CaState::Open };
            if self.cx.ca_state != state {
                self.set_state(state);
                self.high_seq = self.sb.snd_nxt();
            }
        }
    }

    /// Linux `tcp_enter_recovery`: a reduction already under way (CWR) is kept.
    fn enter_recovery(&mut self) {
        if !matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
            self.init_cwnd_reduction();
        }
        self.set_state(CaState::Recovery);
    }

    /// Linux `tcp_init_cwnd_reduction` (RFC 6937).
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.sb.snd_nxt();
        self.cx.cwnd_cnt = 0;
        self.cx.prior_cwnd = self.cx.cwnd;
        self.prr.start();
        self.cx.ssthresh = self.call_cc(|cc, cx| cc.ssthresh(cx));
        self.queue_cwr = self.cfg.ecn.enabled();
    }

    /// Linux `tcp_end_cwnd_reduction`; `cong_control` algorithms are left alone.
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.cx.ssthresh < INFINITE_SSTHRESH {
            self.cx.cwnd = self.cx.ssthresh;
        }
        self.call_cc(|cc, cx| cc.cwnd_event(cx, CwndEvent::CompleteCwr));
    }

    fn set_state(&mut self, state: CaState) {
        self.call_cc(|cc, cx| cc.set_state(cx, state));
        self.cx.ca_state = state;
    }

    /// Linux `tcp_retransmit_timer` + `tcp_enter_loss` (RFC 6298 §5).
    fn retransmission_timeout(&mut self, now: SimTime) {
        if self.sb.packets_out() == 0 {
            self.rto_deadline = None;
            return;
        }
        self.rate.lost += u64::from(self.sb.mark_all_lost());
        let state = self.cx.ca_state;
        if state <= CaState::Disorder || self.high_seq <= self.sb.snd_una() || (state == CaState::Loss && self.consecutive_rtos == 0) {
            self.cx.prior_cwnd = self.cx.cwnd;
            self.cx.ssthresh = self.call_cc(|cc, cx| cc.ssthresh(cx));
            self.call_cc(|cc, cx| cc.cwnd_event(cx, CwndEvent::Loss));
        }
        self.cx.cwnd = self.sb.in_flight() + 1;
        self.cx.cwnd_cnt = 0;
        self.set_state(CaState::Loss);
        self.high_seq = self.sb.snd_nxt();
        self.queue_cwr = self.cfg.ecn.enabled();
        self.consecutive_rtos += 1;
        self.rto_count += 1;
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.check_app_limited();
    }

    /// Payload of the next new segment (0 = the application has nothing more).
    fn next_payload(&self) -> u32 {
        let unsent = self.app_bytes - self.new_bytes_sent;
        unsent.min(u64::from(self.cfg.mss)) as u32
    }

    fn sendable(&self) -> Sendable {
        let in_flight = self.sb.in_flight();
        if in_flight < self.cx.cwnd && self.sb.lost_out() > self.sb.retrans_out() {
            return Sendable::Retransmission;
        }
        let payload = self.next_payload();
        if payload == 0 {
            return Sendable::Nothing;
        }
        if in_flight >= self.cx.cwnd {
            return Sendable::CwndLimited;
        }
        let after = self.sb.bytes_out() + u64::from(payload);
        if after > self.snd_wnd || after > self.cfg.snd_buf_bytes {
            return Sendable::Nothing;
        }
        Sendable::NewData { payload }
    }

    fn transmit(&mut self, now: SimTime, seq: u32, payload: u32, is_retransmit: bool) -> Transmit {
        let in_flight = self.sb.in_flight();
        let packets_out = self.sb.packets_out();
        if in_flight == 0 {
            self.call_cc(|cc, cx| cc.cwnd_event(cx, CwndEvent::TxStart));
        }
        let tx = self.rate.on_send(now, packets_out, in_flight + 1);
        let mut cwr = false;
        if is_retransmit {
            self.sb.record_retransmit(seq, now, tx);
            self.retransmits += 1;
            if seq == self.sb.snd_una() {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        } else {
            self.sb.push(Segment::new(payload, now, tx));
            self.new_bytes_sent += u64::from(payload);
            if packets_out == 0 {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
            cwr = std::mem::take(&mut self.queue_cwr);
        }
        // Linux tcp_ecn_send: ECT on new data; retransmissions only for NEEDS_ECN algorithms.
        let ect = match self.cfg.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => !is_retransmit,
            EcnMode::Accurate => true,
        };
        let ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
        if matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr.on_sent();
        }
        if self.cx.paced {
            schedule_next_departure(&mut self.cx, now, payload);
        }
        self.last_send = Some(now);
        self.cx.last_send_time = now;
        self.segments_sent += 1;
        self.bytes_sent += u64::from(payload);
        Transmit { header: DataHeader { seq, payload, tsval: now, cwr }, ecn, is_retransmit }
    }

    /// Linux `tcp_cwnd_validate`: remember whether this flight was cwnd-limited and its
    /// largest packets_out.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let packets_out = self.sb.packets_out();
        if self.sb.snd_una() >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.cx.is_cwnd_limited && packets_out > self.cx.max_packets_out)
        {
            self.cx.is_cwnd_limited = is_cwnd_limited;
            self.cx.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.sb.snd_nxt();
        }
    }

    /// Linux `tcp_slow_start_after_idle_check` + `tcp_cwnd_restart`.
    fn restart_after_idle(&mut self, now: SimTime) {
        let Some(last) = self.last_send else { return };
        if !self.cfg.slow_start_after_idle || self.cc.has_cong_control() {
            return;
        }
        let rto = self.rtt.rto();
        let idle = now.saturating_since(last);
        if idle <= rto {
            return;
        }
        self.call_cc(|cc, cx| cc.cwnd_event(cx, CwndEvent::CwndRestart));
        let cwnd = self.cx.cwnd;
        if !matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
            // Linux tcp_current_ssthresh
            self.cx.ssthresh = self.cx.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
        }
        let restart_cwnd = self.cfg.initial_cwnd.min(cwnd);
        let mut reduced = cwnd;
        let mut remaining = idle - rto;
        while remaining > SimDuration::ZERO && reduced > restart_cwnd {
            reduced >>= 1;
            remaining = remaining - rto;
        }
        self.cx.cwnd = reduced.max(restart_cwnd);
    }

    /// Linux `tcp_rate_check_app_limited` (tcp_rate.c).
    fn check_app_limited(&mut self) {
        let in_flight = self.sb.in_flight();
        if self.app_bytes - self.new_bytes_sent < u64::from(self.cfg.mss)
            && in_flight < self.cx.cwnd
            && self.sb.lost_out() <= self.sb.retrans_out()
        {
            self.rate.mark_app_limited(in_flight);
        }
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
