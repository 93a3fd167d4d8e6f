//! The TCP sender (docs/models.md, TCP sender): Linux `tcp_ack` per-ACK processing with the
//! congestion-control hooks in Linux order, SACK/NewReno loss recovery (RFC 6675 / RFC 6582,
//! Linux `tcp_fastretrans_alert`), PRR, RTO with go-back-N (Linux `tcp_enter_loss`),
//! cwnd-limited tracking and slow start after idle, pacing with GSO bursts and RFC 3168 ECN.
//!
//! Per ACK: (1) SACK tagging and cleaning of the retransmit queue, feeding the rate sampler;
//! (2) `in_ack_event`; (3) RTT estimator, then `pkts_acked`; (4) loss detection and the CA
//! state machine (`ssthresh`, `set_state`, `cwnd_event(CompleteCwr)`); (5) rate sample;
//! (6) `cong_control`, or PRR in CWR/Recovery, or `cong_avoid`, then the fq pacing rate.
//! The caller then drains [`TcpSender::poll_transmit`] (7): with `gso` a paced sender releases
//! one GSO burst per departure (Linux `tcp_write_xmit`: `tcp_tso_segs` segments, at most
//! `tcp_cwnd_test`'s quota), a retransmission one segment; a burst cut short by cwnd or the
//! peer's window may wait for an ACK (`tcp_tso_should_defer`, tso_defer.rs).
//!
//! Loss detection is RACK-TLP by default (RFC 8985; rack.rs, and here Linux
//! `tcp_identify_packet_loss`, `tcp_rack_reo_timeout`, `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`, `tcp_rearm_rto`): RTO, loss probe and
//! reordering timeout share one timer as they share Linux's `icsk_retransmit_timer`.
//!
//! Undo (`TcpConfig::undo`, Linux's default): D-SACKs (RFC 2883, Linux `tcp_check_dsack`)
//! count retransmissions shown needless, timestamps show an ACK was for the original (RFC
//! 3522 Eifel, `tcp_packet_delayed`), and F-RTO judges an RTO by the ACKs after it (RFC 5682,
//! `tcp_process_loss`); a reduction shown spurious is undone (`tcp_try_undo_recovery`,
//! `tcp_try_undo_dsack`, `tcp_try_undo_partial`, `tcp_try_undo_loss`,
//! `tcp_undo_cwnd_reduction` with the algorithm's `undo_cwnd`).
//!
//! Not modelled (Linux defaults left out, docs/models.md): the DupThresh growth on
//! reordering, Nagle. ns-3 differs in counting windows
//! in bytes, entering recovery only on DupThresh duplicate ACKs, a 1 s minimum RTO and the
//! RFC 6298 estimator, and in raising COMPLETE_CWR-like events for every algorithm.

use crate::config::{EcnMode, PacingMode, RecoveryMode, TcpConfig};
use crate::pacing::{fq_pacing_rate, schedule_next_departure};
use crate::prr::{Prr, PrrAck};
use crate::rack::Rack;
use crate::rate::RateSampler;
use crate::rtt::{RttEstimator, WindowedMin, JIFFY_US, MIN_RTT_WINDOW};
use crate::scoreboard::{Scoreboard, Segment, DUP_THRESH};
use crate::tso_defer::{should_defer, Defer, DeferInput};
use tcplab_cc::gso::tso_autosize;
use tcplab_cc::{rate_sample::AckContext, AckFlags, AckSample, BbrInfo, CaState, CcCx, CongestionControl, CwndEvent, INFINITE_SSTHRESH};
use tcplab_core::{AckHeader, DataHeader, Ecn, Rate, SackBlock, SimDuration, SimTime};

/// A segment the sender puts on the wire now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub header: DataHeader,
    /// ECT(0) on new data when ECN is on; retransmissions are Not-ECT (RFC 3168 §6.1.5)
    /// except in accurate mode (Linux keeps ECT for DCTCP); ECT(1) on all data in L4S mode.
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
    /// That sample was application-limited (Linux `tcpi_delivery_rate_app_limited`).
    pub delivery_rate_app_limited: bool,
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

/// The part of `SenderStats` that a sample of a flow group reads (the same values: each
/// sender's `stats` takes them from its `gauges`), cheap to take for thousands of flows: it
/// reads a few fields of the sender, where the full snapshot also asks the algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderGauges {
    pub cwnd_pkts: u32,
    pub inflight_pkts: u32,
    pub srtt: Option<SimDuration>,
    /// Retransmitted segments, cumulative.
    pub retransmits: u64,
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

/// What the retransmission timer is armed for (Linux `icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmitTimer {
    Rto,
    LossProbe,
    ReoTimeout,
}

/// A tail loss probe the timer decided on, sent by the next `poll_transmit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    NewData,
    Retransmit(u32),
}

/// A duplicate-SACK block the ACK carried (Linux `tcp_check_dsack`).
#[derive(Clone, Copy, Debug)]
struct Dsack {
    /// Segments reported twice (Linux `dup_segs`), counted as delivered.
    delivered: u32,
    /// It reports the loss probe's segment (Linux FLAG_DSACK_TLP).
    for_probe: bool,
}

/// What `tcp_fastretrans_alert` learns from one ACK (Linux's `flag` bits).
#[derive(Clone, Copy, Debug)]
struct AlertFlags {
    /// FLAG_SND_UNA_ADVANCED.
    advanced: bool,
    num_dupack: u32,
    /// FLAG_DATA_SACKED.
    data_sacked: bool,
    /// FLAG_ECE.
    ece: bool,
    /// FLAG_ORIG_SACK_ACKED.
    orig_sack_acked: bool,
}

/// Linux `TCP_TIMEOUT_MIN`: slack added to the reordering and probe timeouts.
const TCP_TIMEOUT_MIN_US: u64 = 2 * JIFFY_US;

/// Linux `usecs_to_jiffies`: a timeout rounded up to the timer's tick.
fn jiffies_ceil(us: u64) -> SimDuration {
    SimDuration::from_micros(us.div_ceil(JIFFY_US) * JIFFY_US)
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
    /// Linux FLAG_ORIG_SACK_ACKED: a never-retransmitted segment below `high_seq` was newly
    /// (S)ACKed.
    orig_sack_acked: bool,
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
    /// RACK state; used when `cfg.recovery` is RACK-TLP and SACK is on (Linux `tcp_is_rack`).
    rack: Option<Rack>,
    /// The RACK reordering timer was armed by this ACK (Linux clears FLAG_SET_XMIT_TIMER).
    reo_armed: bool,
    /// Linux `tlp_high_seq`: snd_nxt when the outstanding loss probe was sent.
    tlp_high_seq: Option<u32>,
    /// The outstanding probe retransmitted data (Linux `tlp_retrans`).
    tlp_retrans: bool,
    probe: Option<Probe>,
    /// Linux `undo_marker`: snd_una when the latest reduction began; None once undone.
    undo_marker: Option<u32>,
    /// Linux `undo_retrans`: retransmissions since then not shown needless (-1: none sent).
    undo_retrans: i32,
    /// Linux `retrans_stamp`: the episode's first retransmission.
    retrans_stamp: Option<SimTime>,
    /// Linux `prior_ssthresh`: what undo restores (0: nothing).
    prior_ssthresh: u32,
    /// F-RTO is judging the latest RTO (Linux `tp->frto`).
    frto: bool,
    /// F-RTO step 2b: this ACK sends new data instead of retransmissions (Linux REXMIT_NEW).
    frto_new_data: bool,
    /// D-SACKed segments (Linux `dsack_dups`).
    dsack_dups: u64,
    /// The timestamp echoed by the ACK being processed (Linux `rx_opt.rcv_tsecr`).
    rcv_tsecr: SimTime,
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
    /// The retransmission timer's deadline and what it is armed for.
    rto_deadline: Option<SimTime>,
    xmit_timer: XmitTimer,
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
    /// Segments of the current GSO burst still to go, and when it left: a burst is what one
    /// drain of `poll_transmit` sends at one instant.
    burst_left: u32,
    burst_at: SimTime,
    /// New data left since the last `end_write`: the loss probe is scheduled once per write.
    wrote_new_data: bool,
    /// Linux `tcp_tso_segs` for the (pacing rate, min RTT, min_tso_segs) it was computed from.
    tso_segs: (u32, Option<(u64, u64, u32)>),
}

impl TcpSender {
    /// `bytes`: None = unbounded bulk transfer, Some(n) = send n bytes then stop.
    pub fn new(cfg: TcpConfig, cc: Box<dyn CongestionControl>, bytes: Option<u64>) -> Self {
        let mut cx = CcCx::new(cfg.mss);
        cx.cwnd = cfg.initial_cwnd;
        cx.ssthresh = cfg.initial_ssthresh;
        cx.ecn_enabled = cfg.ecn.enabled();
        cx.paced = cc.has_cong_control() || cfg.pacing == PacingMode::Fq;
        let rack = (cfg.recovery == RecoveryMode::RackTlp && cfg.sack).then(Rack::default);
        cx.gso = cfg.gso;
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
            rack,
            reo_armed: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            probe: None,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: None,
            prior_ssthresh: 0,
            frto: false,
            frto_new_data: false,
            dsack_dups: 0,
            rcv_tsecr: SimTime::ZERO,
            app_bytes: bytes.unwrap_or(u64::MAX),
            new_bytes_sent: 0,
            high_seq: 0,
            cwnd_usage_seq: 0,
            rto_deadline: None,
            xmit_timer: XmitTimer::Rto,
            consecutive_rtos: 0,
            queue_cwr: false,
            last_send: None,
            started: false,
            retransmits: 0,
            rto_count: 0,
            bytes_sent: 0,
            bytes_acked: 0,
            segments_sent: 0,
            burst_left: 0,
            wrote_new_data: false,
            burst_at: SimTime::ZERO,
            tso_segs: (1, None),
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

    /// Frees the scoreboard and RACK's list once empty (when done).
    pub fn release_buffers(&mut self) {
        self.sb.release_room();
        if let Some(rack) = self.rack.as_mut() {
            rack.release_room();
        }
    }

    /// Bytes of the buffers sized by the window (scoreboard, RACK's transmissions).
    pub fn heap_bytes(&self) -> usize {
        self.sb.heap_bytes() + self.rack.as_ref().map_or(0, Rack::heap_bytes)
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

        // (1) SACK tagging and cleaning of the retransmit queue; RACK notes the latest
        // transmission delivered (Linux `tcp_rack_advance` in `tcp_sacktag_one` and
        // `tcp_clean_rtx_queue`, the latter skipping ACKs the timestamp shows were for an
        // earlier copy) and reordering (`tcp_check_sack_reordering`).
        self.reo_armed = false;
        self.frto_new_data = false;
        let mut tally = AckTally::default();
        let min_rtt = self.min_rtt.get();
        let prior_fack = self.sb.highest_sack_end();
        let high_seq = self.high_seq;
        let (dsack, blocks) = match self.check_dsack(ack.sack_blocks(), ack.ack, prior_una) {
            Some(dsack) => (Some(dsack), &ack.sack_blocks()[1..]),
            None => (None, ack.sack_blocks()),
        };
        let mut rack = self.rack.as_mut();
        let newly_sacked = if self.cfg.sack {
            let rate = &mut self.rate;
            self.sb.tag_sacks(blocks, ack.ack, |seq, seg| {
                rate.on_delivered(seq, seg);
                if let Some(rack) = rack.as_deref_mut() {
                    rack.on_delivered(now, seq, seg, prior_fack, min_rtt);
                }
                if !seg.ever_retransmitted() {
                    tally.orig_sack_acked |= seq < high_seq;
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
                tally.orig_sack_acked |= seq < high_seq;
                tally.first_ackt.get_or_insert(seg.sent);
                tally.last_ackt = Some(seg.sent);
            }
            if !seg.sacked() {
                tally.cum_delivered += 1;
                rate.on_delivered(seq, seg);
                if let Some(rack) = rack.as_deref_mut() {
                    if !(seg.ever_retransmitted() && ack.tsecr < seg.sent) {
                        rack.on_delivered(now, seq, seg, prior_fack, min_rtt);
                    }
                }
            }
            tally.acked_bytes += u64::from(seg.payload);
        });
        if self.cfg.sack {
            // a D-SACKed retransmission was delivered too (Linux `sack_delivered`)
            let dup_segs = dsack.map_or(0, |d| d.delivered);
            self.rate.count_delivered(newly_sacked + tally.cum_delivered + dup_segs, ece);
        } else {
            let delivered = self.sb.remove_reno_sacks(pkts_acked);
            self.rate.count_delivered(delivered, ece);
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.prune(&self.sb);
            rack.update_reo_wnd(self.rate.prior_delivered(), self.rate.delivered);
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
        if let Some(high) = self.tlp_high_seq.filter(|&h| ack.ack >= h) {
            let dsack_tlp = dsack.is_some_and(|d| d.for_probe);
            self.process_tlp_ack(ack.ack > high, win_update || newly_sacked > 0, dsack_tlp);
        }
        if !win_update || newly_sacked > 0 || ece || dsack.is_some() || self.cx.ca_state != CaState::Open {
            let num_dupack = u32::from(!win_update);
            let flags = AlertFlags { advanced, num_dupack, data_sacked: newly_sacked > 0, ece, orig_sack_acked: tally.orig_sack_acked };
            self.rcv_tsecr = ack.tsecr;
            self.fastretrans_alert(now, flags);
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
            if self.rack.is_none() {
                self.rto_deadline = (self.sb.packets_out() > 0).then(|| now + self.rtt.rto());
            } else if !self.reo_armed && !self.schedule_loss_probe(now, true) {
                // Linux `tcp_set_xmit_timer`
                self.rearm_rto(now);
            }
        }
        out
    }

    /// The next segment that may leave at `now` (retransmissions first), or None. Drain it:
    /// a GSO burst ends when it returns None.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if let Some(probe) = self.probe.take() {
            self.cx.now = now;
            return Some(self.transmit_probe(now, probe));
        }
        let tx = self.next_transmit(now);
        if tx.is_none() {
            self.burst_left = 0;
            self.end_write(now);
        }
        tx
    }

    /// The end of a write (Linux `tcp_write_xmit`): a write that sent new data re-arms the
    /// RTO if a probe was pending (`tcp_event_new_data_sent`) and schedules the loss probe
    /// once (`tcp_schedule_loss_probe`). `poll_transmit` calls it when it runs dry; call it
    /// after stopping early.
    pub fn end_write(&mut self, now: SimTime) {
        if !std::mem::take(&mut self.wrote_new_data) {
            return;
        }
        if self.xmit_timer == XmitTimer::LossProbe {
            self.rearm_rto(now);
        }
        self.schedule_loss_probe(now, false);
    }

    fn next_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if !self.started || self.pacing_holds(now) {
            return None;
        }
        self.cx.now = now;
        match self.sendable() {
            Sendable::Retransmission if self.frto_new_data => self.frto_send_new_data(now),
            Sendable::Retransmission => {
                let seq = self.sb.next_retransmit()?;
                // Linux `tcp_retransmit_skb`: the episode's first retransmission is stamped
                self.retrans_stamp.get_or_insert(now);
                self.undo_retrans = self.undo_retrans.max(0) + 1;
                self.begin_burst(now, true);
                Some(self.transmit(now, seq, u32::from(self.sb.get(seq).payload), true))
            }
            Sendable::NewData { .. } if !self.in_burst(now) && self.defers_burst(now) => None,
            Sendable::NewData { payload } => self.send_new_data(now, payload),
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

    /// F-RTO step 2.b (Linux `tcp_xmit_recovery` with REXMIT_NEW): new data while the window
    /// allows; once none could go out, F-RTO ends and retransmission resumes.
    fn frto_send_new_data(&mut self, now: SimTime) -> Option<Transmit> {
        let payload = self.next_payload();
        if payload > 0 && self.window_allows(payload) {
            return self.send_new_data(now, payload);
        }
        self.frto_new_data = false;
        if self.sb.snd_nxt() <= self.high_seq {
            self.frto = false;
        }
        self.poll_transmit(now)
    }

    /// Sends the next new segment (Linux `tcp_write_xmit` for one segment).
    fn send_new_data(&mut self, now: SimTime, payload: u32) -> Option<Transmit> {
        if self.sb.packets_out() == 0 {
            self.restart_after_idle(now);
        }
        self.begin_burst(now, false);
        let t = self.transmit(now, self.sb.snd_nxt(), payload, false);
        self.cwnd_validate(self.sb.in_flight() >= self.cx.cwnd);
        self.wrote_new_data = self.rack.is_some();
        Some(t)
    }

    /// Earliest of the RTO deadline and, when a segment is ready but pacing holds it, its
    /// release time.
    pub fn next_timer(&self) -> Option<SimTime> {
        match (self.rto_deadline, self.pacing_release()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The retransmission timer's deadline (RTO, loss probe or RACK reordering timeout), if armed.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_deadline
    }

    /// When pacing releases the segment that is ready to go, if pacing holds one.
    pub fn pacing_release(&self) -> Option<SimTime> {
        let held = self.pacing_holds(self.cx.now) && matches!(self.sendable(), Sendable::Retransmission | Sendable::NewData { .. });
        held.then_some(self.cx.next_send_time)
    }

    /// Pacing holds the next segment at `now`: it is not part of a burst under way and its
    /// departure time has not come.
    fn pacing_holds(&self, now: SimTime) -> bool {
        self.cx.paced && !self.in_burst(now) && now < self.cx.next_send_time
    }

    fn in_burst(&self, now: SimTime) -> bool {
        self.burst_left > 0 && now == self.burst_at
    }

    /// Starts a burst at `now` unless one is under way: one segment for a retransmission,
    /// else `burst_segs`. Pacing holds the next burst until this one has left; TSO deferral
    /// judges each burst once, at its start.
    fn begin_burst(&mut self, now: SimTime, retransmission: bool) {
        if self.in_burst(now) {
            return;
        }
        self.burst_left = if retransmission { 1 } else { self.burst_segs() };
        self.burst_at = now;
    }

    /// Segments in the next burst of new data (Linux `tcp_write_xmit`): `tcp_tso_segs`, at
    /// most `tcp_cwnd_test`'s quota min(cwnd − in_flight, max(cwnd/2, 1)). The receive window
    /// and the data at hand end a burst early, segment by segment.
    fn burst_segs(&mut self) -> u32 {
        let cwnd = self.cx.cwnd;
        let quota = cwnd.saturating_sub(self.sb.in_flight()).min((cwnd >> 1).max(1));
        self.tso_segs().min(quota)
    }

    /// Linux `tcp_tso_should_defer` for the burst of new data about to start (tso_defer.rs);
    /// a burst held for want of cwnd makes the flight cwnd-limited, as Linux's
    /// `is_cwnd_limited` does.
    fn defers_burst(&mut self, now: SimTime) -> bool {
        if !(self.cfg.gso && self.cfg.tso_defer) {
            return false;
        }
        let goal = self.tso_segs();
        if goal <= 1 {
            return false;
        }
        let mss = u64::from(self.cfg.mss);
        let full_burst = u64::from(goal) * mss;
        let bytes_out = self.sb.bytes_out();
        let unsent = self.app_bytes - self.new_bytes_sent;
        let input = DeferInput {
            now,
            last_departure: if self.cx.paced { self.cx.next_send_time } else { self.cx.last_send_time },
            recovering: matches!(self.cx.ca_state, CaState::Recovery | CaState::Loss),
            full_burst,
            cong_win: u64::from(self.cx.cwnd.saturating_sub(self.sb.in_flight())) * mss,
            send_win: self.snd_wnd.saturating_sub(bytes_out),
            window: self.snd_wnd.min(u64::from(self.cx.cwnd) * mss),
            ready: unsent.min(self.cfg.snd_buf_bytes.saturating_sub(bytes_out)).min(full_burst),
            oldest_sent: self.sb.head().map(|s| s.sent),
            srtt: SimDuration::from_micros(self.rtt.srtt_us()),
        };
        match should_defer(&input) {
            Defer::No => false,
            Defer::CwndLimited => {
                self.cwnd_validate(true);
                true
            }
            Defer::RwndLimited => true,
        }
    }

    /// Linux `tcp_tso_segs`: the algorithm's own `tso_segs` if it has one, else
    /// `tcp_tso_autosize` with the algorithm's `min_tso_segs`, recomputed only when its inputs
    /// change; 1 without GSO.
    fn tso_segs(&mut self) -> u32 {
        if !self.cfg.gso {
            return 1;
        }
        if let Some(segs) = self.cc.tso_segs(&self.cx) {
            return segs;
        }
        let key = (self.cx.pacing_rate, self.min_rtt.get(), self.cc.min_tso_segs(&self.cx));
        if self.tso_segs.1 != Some(key) {
            self.tso_segs = (tso_autosize(key.0, self.cfg.mss, key.1, key.2), Some(key));
        }
        self.tso_segs.0
    }

    /// Fires the retransmission timer (RTO, loss probe or reordering timeout) if it is due;
    /// otherwise nothing happens. Call `poll_transmit` afterwards.
    pub fn on_timer(&mut self, now: SimTime) {
        self.cx.now = now;
        if self.rto_deadline.is_some_and(|d| now >= d) {
            self.rto_deadline = None;
            match self.xmit_timer {
                XmitTimer::Rto => self.retransmission_timeout(now),
                XmitTimer::LossProbe => self.send_loss_probe(now),
                XmitTimer::ReoTimeout => self.reo_timeout(now),
            }
        }
    }

    /// The smoothed RTT (Linux `srtt_us`); None before the first measurement.
    pub fn srtt(&self) -> Option<SimDuration> {
        let srtt = self.rtt.srtt_us();
        (srtt > 0).then(|| SimDuration::from_micros(srtt))
    }

    /// What a sample of a flow group reads (the same values as `stats`).
    pub fn gauges(&self) -> SenderGauges {
        let srtt = self.rtt.srtt_us();
        SenderGauges {
            cwnd_pkts: self.cx.cwnd,
            inflight_pkts: self.sb.in_flight(),
            srtt: (srtt > 0).then(|| SimDuration::from_micros(srtt)),
            retransmits: self.retransmits,
        }
    }

    pub fn stats(&self) -> SenderStats {
        let SenderGauges { cwnd_pkts, inflight_pkts, srtt, retransmits } = self.gauges();
        let min_rtt = self.min_rtt.get();
        SenderStats {
            cwnd_pkts,
            ssthresh_pkts: (self.cx.ssthresh < INFINITE_SSTHRESH).then_some(self.cx.ssthresh),
            inflight_pkts,
            srtt,
            min_rtt: (min_rtt != u64::MAX).then(|| SimDuration::from_micros(min_rtt)),
            pacing_rate: (self.cx.pacing_rate > 0).then(|| Rate::from_bps(self.cx.pacing_rate.saturating_mul(8))),
            delivery_rate: self.rate.delivery_rate(self.cfg.mss),
            delivery_rate_app_limited: self.rate.delivery_rate_app_limited(),
            retransmits,
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

    /// Linux `tcp_fastretrans_alert`.
    fn fastretrans_alert(&mut self, now: SimTime, f: AlertFlags) {
        let AlertFlags { advanced, num_dupack, data_sacked, ece, .. } = f;
        let reno = !self.cfg.sack;
        let snd_una = self.sb.snd_una();
        if reno && self.sb.packets_out() == 0 {
            self.sb.reset_reno_sacks();
        }
        // A. ECE: the reduction is required, no undo.
        if ece {
            self.prior_ssthresh = 0;
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
                    }
                    if self.try_undo_recovery() {
                        return; // RFC 6582: hold until an ACK above `recover`
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        let mut fast_rexmit = false;
        match self.cx.ca_state {
            CaState::Recovery => {
                if !advanced {
                    if reno {
                        self.count_reno_dupacks(num_dupack, ece);
                    }
                } else if self.try_undo_partial() {
                    return;
                }
                if self.try_undo_dsack() {
                    self.try_to_open(ece);
                }
                self.identify_packet_loss(now, advanced);
                if self.cx.ca_state != CaState::Recovery {
                    if !self.time_to_recover() {
                        return;
                    }
                    // undone, but a loss is evident: a new recovery
                    self.enter_recovery(ece);
                }
            }
            state => {
                if state == CaState::Loss {
                    self.process_loss(f);
                    // A lost retransmission (RACK) starts Recovery.
                    let lost_retrans = self.identify_packet_loss(now, advanced);
                    if self.cx.ca_state != CaState::Open && !lost_retrans {
                        return;
                    }
                }
                if reno {
                    if advanced {
                        self.sb.reset_reno_sacks();
                    }
                    self.count_reno_dupacks(num_dupack, ece);
                }
                if self.cx.ca_state <= CaState::Disorder {
                    self.try_undo_dsack();
                }
                self.identify_packet_loss(now, advanced);
                if !self.time_to_recover() {
                    self.try_to_open(ece);
                    return;
                }
                self.enter_recovery(ece);
                fast_rexmit = true;
            }
        }
        if !reno && do_lost && self.rack.is_none() {
            self.update_scoreboard(fast_rexmit);
        }
    }

    /// Linux `tcp_process_loss` (state Loss): undo when the RTO proves spurious, by
    /// timestamps / D-SACKs or by F-RTO (RFC 5682 §3.1, SACK-enhanced: the first ACK after
    /// the RTO that advances snd_una lets new data go out instead of retransmissions; an ACK
    /// of never-retransmitted data after that shows the RTO was spurious, a duplicate ACK or
    /// SACK that the loss was real).
    fn process_loss(&mut self, f: AlertFlags) {
        let snd_una = self.sb.snd_una();
        let recovered = snd_una >= self.high_seq;
        if f.advanced && self.try_undo_loss(false) {
            return;
        }
        if self.frto {
            if f.orig_sack_acked && self.try_undo_loss(true) {
                return;
            }
            if self.sb.snd_nxt() > self.high_seq {
                if f.data_sacked || f.num_dupack > 0 {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if f.advanced && !recovered {
                self.high_seq = self.sb.snd_nxt();
                // step 2.b: new data if there is any and the window allows
                let payload = self.next_payload();
                if payload > 0 && self.window_allows(payload) {
                    self.frto_new_data = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery();
            return;
        }
        if !self.cfg.sack {
            if self.sb.snd_nxt() > self.high_seq && f.num_dupack > 0 {
                self.count_reno_dupacks(f.num_dupack, f.ece);
            } else if f.advanced {
                self.sb.reset_reno_sacks();
            }
        }
    }

    /// Linux `tcp_check_dsack`: the first SACK block is a duplicate report when it lies below
    /// the ACK or inside the second block (RFC 2883 §4). Retransmissions it shows needless
    /// leave `undo_retrans`; RACK notes it (`tcp_dsack_seen`). None also for a report of
    /// more duplicates than were ever retransmitted (Linux ignores those as dubious).
    fn check_dsack(&mut self, blocks: &[SackBlock], ack: u32, prior_una: u32) -> Option<Dsack> {
        let first = *blocks.first()?;
        let inside_second = blocks.get(1).is_some_and(|b| first.start >= b.start && first.end <= b.end);
        if !(first.start < ack || inside_second) || first.start >= first.end {
            return None;
        }
        let dup_segs = first.end - first.start;
        let for_probe = dup_segs == 1 && self.tlp_high_seq == Some(first.end);
        self.dsack_dups += u64::from(dup_segs);
        if self.dsack_dups > self.retransmits {
            return None;
        }
        if !for_probe {
            if let Some(rack) = self.rack.as_mut() {
                rack.on_dsack();
            }
        }
        let in_episode = |end: u32| self.undo_marker.is_some_and(|m| end > m);
        if self.undo_retrans > 0 && first.end <= prior_una && in_episode(first.end) {
            // data already forgotten: count blindly
            self.undo_retrans = (self.undo_retrans - dup_segs as i32).max(0);
        }
        for seq in first.start.max(prior_una)..first.end.min(self.sb.snd_nxt()) {
            let seg = self.sb.get(seq);
            if seg.ever_retransmitted() {
                if self.undo_retrans > 0 && in_episode(seq + 1) {
                    self.undo_retrans -= 1;
                }
                if seg.sacked() {
                    if let Some(rack) = self.rack.as_mut() {
                        rack.note_reordering();
                    }
                }
            }
        }
        Some(Dsack { delivered: dup_segs, for_probe })
    }

    /// Linux `tcp_packet_delayed`: the ACK echoes a timestamp older than the episode's first
    /// retransmission (RFC 3522), or, with SACK, nothing was retransmitted yet.
    fn packet_delayed(&self) -> bool {
        match self.retrans_stamp {
            Some(stamp) => self.rcv_tsecr > SimTime::ZERO && self.rcv_tsecr < stamp,
            None => self.cfg.sack,
        }
    }

    /// Linux `tcp_may_undo`: every retransmission was needless, or timestamps show the
    /// original arrived.
    fn may_undo(&self) -> bool {
        self.cfg.undo && self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed())
    }

    /// Linux `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.sb.retrans_out() > 0 || self.sb.head().is_some_and(|h| h.ever_retransmitted())
    }

    /// Linux `tcp_init_undo`.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.sb.snd_una());
        self.undo_retrans = if self.sb.retrans_out() > 0 { self.sb.retrans_out() as i32 } else { -1 };
    }

    /// Linux `tcp_undo_cwnd_reduction`: the algorithm's `undo_cwnd`, ssthresh back, and with
    /// `unmark_loss` no segment lost any more.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            self.cx.cwnd = self.call_cc(|cc, cx| cc.undo_cwnd(cx));
            if self.prior_ssthresh > self.cx.ssthresh {
                self.cx.ssthresh = self.prior_ssthresh;
                self.queue_cwr = false;
            }
        }
        self.undo_marker = None;
        if let Some(rack) = self.rack.as_mut() {
            rack.on_undo(&self.sb);
        }
    }

    /// Linux `tcp_try_undo_recovery`, once `high_seq` is ACKed: undo if possible, then Open
    /// (NewReno holds at `high_seq`: returns true).
    fn try_undo_recovery(&mut self) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else if let Some(rack) = self.rack.as_mut() {
            rack.recovery_ended();
        }
        if !self.cfg.sack && self.sb.snd_una() == self.high_seq {
            if !self.any_retrans_done() {
                self.retrans_stamp = None;
            }
            return true;
        }
        self.set_state(CaState::Open);
        false
    }

    /// Linux `tcp_try_undo_dsack`: D-SACKs showed every retransmission needless.
    fn try_undo_dsack(&mut self) -> bool {
        if !(self.cfg.undo && self.undo_marker.is_some() && self.undo_retrans == 0) {
            return false;
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.dsack_undid();
        }
        self.undo_cwnd_reduction(false);
        true
    }

    /// Linux `tcp_try_undo_partial`, on an ACK advancing snd_una in Recovery: timestamps show
    /// the original filled the hole (reordering). With retransmissions still out, returns true
    /// (no further marking on this ACK); otherwise undoes.
    fn try_undo_partial(&mut self) -> bool {
        if !(self.cfg.undo && self.undo_marker.is_some() && self.packet_delayed()) {
            return false;
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.note_reordering();
        }
        if self.sb.retrans_out() > 0 {
            return true;
        }
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
        self.undo_cwnd_reduction(true);
        self.try_keep_open();
        false
    }

    /// Linux `tcp_try_undo_loss`: the RTO was spurious (`frto_undo`: F-RTO says so).
    fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if !(frto_undo || self.may_undo()) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        self.consecutive_rtos = 0;
        if !self.cfg.sack && self.sb.snd_una() == self.high_seq {
            if !self.any_retrans_done() {
                self.retrans_stamp = None;
            }
            return true;
        }
        if frto_undo || self.cfg.sack {
            self.set_state(CaState::Open);
        }
        true
    }

    fn count_reno_dupacks(&mut self, n: u32, ece: bool) {
        let counted = self.sb.add_reno_sacks(n);
        self.rate.count_delivered(counted, ece);
    }

    /// Linux `tcp_time_to_recover`: a loss is known, or (without RACK) DupThresh packets
    /// were SACKed.
    fn time_to_recover(&self) -> bool {
        self.sb.lost_out() > 0 || (self.rack.is_none() && self.sb.sacked_out() + 1 > DUP_THRESH)
    }

    /// Linux `tcp_identify_packet_loss`: NewReno marks the head lost on the DupThresh-th
    /// duplicate ACK and on every partial ACK during recovery; with SACK, RACK marks what
    /// its clock says is lost (`tcp_rack_mark_lost`) and arms the reordering timer for the
    /// rest. Returns whether a retransmission was lost again (FLAG_LOST_RETRANS).
    fn identify_packet_loss(&mut self, now: SimTime, advanced: bool) -> bool {
        if self.sb.packets_out() == 0 {
            return false;
        }
        if !self.cfg.sack {
            let state = self.cx.ca_state;
            if (state < CaState::Recovery && self.sb.sacked_out() >= DUP_THRESH) || (state == CaState::Recovery && advanced) {
                self.rate.lost += u64::from(self.sb.mark_head_lost());
            }
            return false;
        }
        if !self.rack.as_mut().is_some_and(Rack::take_advanced) {
            return false;
        }
        let prior_retrans = self.sb.retrans_out();
        if let Some(remaining_us) = self.rack_detect_loss(now) {
            let timeout = jiffies_ceil(remaining_us) + SimDuration::from_micros(TCP_TIMEOUT_MIN_US);
            self.set_xmit_timer(XmitTimer::ReoTimeout, now + timeout.min(self.rtt.rto()));
            self.reo_armed = true;
        }
        self.sb.retrans_out() < prior_retrans
    }

    /// Linux `tcp_rack_detect_loss` with the window of `tcp_rack_reo_wnd`: marks the
    /// expired segments lost and returns the longest wait of the others, µs.
    fn rack_detect_loss(&mut self, now: SimTime) -> Option<u64> {
        let rack = self.rack.as_mut()?;
        let in_recovery = self.cx.ca_state >= CaState::Recovery;
        let reo_wnd = rack.reo_wnd_us(in_recovery, self.sb.sacked_out(), self.min_rtt.get(), self.rtt.srtt_us());
        let (newly, timeout) = rack.detect_loss(now, &mut self.sb, reo_wnd);
        self.rate.lost += u64::from(newly);
        timeout
    }

    /// Linux `tcp_rack_reo_timeout`: the reordering window of some segments ran out.
    fn reo_timeout(&mut self, now: SimTime) {
        let prior_in_flight = self.sb.in_flight();
        let prior_lost = self.rate.lost;
        self.rack_detect_loss(now);
        if self.sb.in_flight() != prior_in_flight && self.cx.ca_state != CaState::Recovery {
            self.enter_recovery(false);
            if !self.cc.has_cong_control() {
                // Linux `tcp_cwnd_reduction(sk, 1, newly_lost, 0)`
                let prr_ack = PrrAck {
                    ssthresh: self.cx.ssthresh,
                    prior_cwnd: self.cx.prior_cwnd,
                    in_flight: self.sb.in_flight(),
                    newly_acked_sacked: 1,
                    newly_lost: (self.rate.lost - prior_lost) as u32,
                    snd_una_advanced: false,
                };
                if let Some(cwnd) = self.prr.cwnd_after_ack(&prr_ack) {
                    self.cx.cwnd = cwnd;
                }
            }
        }
        self.rearm_rto(now);
    }

    /// Linux `tcp_schedule_loss_probe`: in Open or CWR with SACK, probe after 2·SRTT (plus
    /// the delayed-ACK allowance `min_rto` when one segment is out, else TCP_TIMEOUT_MIN;
    /// 1 s before any RTT sample), but no later than the RTO would fire (`advancing_rto`:
    /// a full RTO from now; otherwise the RTO of the oldest outstanding transmission).
    fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
        if self.rack.is_none() || self.sb.packets_out() == 0 || !matches!(self.cx.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let srtt = self.rtt.srtt_us();
        let mut timeout = if srtt > 0 {
            let slack = if self.sb.packets_out() == 1 { self.cfg.min_rto.as_micros() } else { TCP_TIMEOUT_MIN_US };
            jiffies_ceil(2 * srtt + slack)
        } else {
            self.cfg.initial_rto
        };
        let rto_delta = if advancing_rto { Some(self.rtt.rto()) } else { self.rto_delta(now) };
        if let Some(delta) = rto_delta {
            timeout = timeout.min(jiffies_ceil(delta.as_micros()));
        }
        self.set_xmit_timer(XmitTimer::LossProbe, now + timeout);
        true
    }

    /// Linux `tcp_rto_delta_us`: time left until the oldest outstanding transmission's RTO,
    /// None if it has passed.
    fn rto_delta(&self, now: SimTime) -> Option<SimDuration> {
        let head_sent = self.sb.head()?.sent;
        let due = head_sent + self.rtt.rto();
        (due > now).then(|| due - now)
    }

    /// Linux `tcp_rearm_rto`: an RTO from now, or, when the timer was armed for a probe or
    /// the reordering window, from the oldest outstanding transmission.
    fn rearm_rto(&mut self, now: SimTime) {
        if self.sb.packets_out() == 0 {
            self.rto_deadline = None;
            self.xmit_timer = XmitTimer::Rto;
            return;
        }
        let rto = match self.xmit_timer {
            XmitTimer::Rto => self.rtt.rto(),
            XmitTimer::LossProbe | XmitTimer::ReoTimeout => self.rto_delta(now).unwrap_or(SimDuration::from_micros(1)),
        };
        self.set_xmit_timer(XmitTimer::Rto, now + rto);
    }

    fn set_xmit_timer(&mut self, kind: XmitTimer, at: SimTime) {
        self.xmit_timer = kind;
        self.rto_deadline = Some(at);
    }

    /// Linux `tcp_send_loss_probe`: at most one probe outstanding; new data if the window
    /// allows (cwnd aside), else the last segment again. The probe leaves with the next
    /// `poll_transmit`, which re-arms the RTO from then.
    fn send_loss_probe(&mut self, now: SimTime) {
        if self.tlp_high_seq.is_none() {
            self.tlp_retrans = false;
            let payload = self.next_payload();
            if payload > 0 && self.window_allows(payload) {
                if !(self.cx.paced && now < self.cx.next_send_time) {
                    self.probe = Some(Probe::NewData);
                    return;
                }
            } else if let Some(last) = self.sb.snd_nxt().checked_sub(1).filter(|&s| s >= self.sb.snd_una()) {
                let seg = self.sb.get(last);
                if !seg.sacked() && !seg.retrans_outstanding() {
                    self.probe = Some(Probe::Retransmit(last));
                    return;
                }
            }
        }
        self.rearm_rto(now);
    }

    /// Sends the probe `send_loss_probe` decided on and records it (Linux `probe_sent`).
    fn transmit_probe(&mut self, now: SimTime, probe: Probe) -> Transmit {
        let t = match probe {
            Probe::NewData => {
                let t = self.transmit(now, self.sb.snd_nxt(), self.next_payload(), false);
                self.cwnd_validate(self.sb.in_flight() >= self.cx.cwnd);
                t
            }
            Probe::Retransmit(seq) => self.transmit(now, seq, u32::from(self.sb.get(seq).payload), true),
        };
        self.tlp_high_seq = Some(self.sb.snd_nxt());
        self.tlp_retrans = matches!(probe, Probe::Retransmit(_));
        self.set_xmit_timer(XmitTimer::Rto, now + self.rtt.rto());
        t
    }

    /// Linux `tcp_process_tlp_ack`, for an ACK at or above `tlp_high_seq`: a probe of new
    /// data, or a D-SACK of the probe or a duplicate ACK (both copies arrived), ends the
    /// episode; an ACK above it after a retransmitted probe shows the probe repaired a loss:
    /// one CWR reduction.
    fn process_tlp_ack(&mut self, above: bool, not_dup: bool, dsack_tlp: bool) {
        if !self.tlp_retrans || dsack_tlp {
            self.tlp_high_seq = None;
        } else if above {
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if !not_dup {
            self.tlp_high_seq = None;
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
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
        if ece && self.cx.ca_state < CaState::Cwr {
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
        }
        if self.cx.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// Linux `tcp_try_keep_open`: Disorder while anything is SACKed, lost or retransmitted.
    fn try_keep_open(&mut self) {
        let state =
            if self.sb.sacked_out() + self.sb.lost_out() > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
        if self.cx.ca_state != state {
            self.set_state(state);
            self.high_seq = self.sb.snd_nxt();
        }
    }

    /// Linux `tcp_enter_recovery`: a reduction already under way (CWR) is kept; without ECE
    /// undo may restore the ssthresh of before.
    fn enter_recovery(&mut self, ece: bool) {
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
        self.prior_ssthresh = 0;
        self.init_undo();
        if !matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
            if !ece {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_state(CaState::Recovery);
    }

    /// Linux `tcp_current_ssthresh`: during a reduction its target, else at least 3/4 cwnd.
    fn current_ssthresh(&self) -> u32 {
        if matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
            self.cx.ssthresh
        } else {
            let cwnd = self.cx.cwnd;
            self.cx.ssthresh.max((cwnd >> 1) + (cwnd >> 2))
        }
    }

    /// Linux `tcp_init_cwnd_reduction` (RFC 6937).
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.sb.snd_nxt();
        self.tlp_high_seq = None;
        self.cx.cwnd_cnt = 0;
        self.cx.prior_cwnd = self.cx.cwnd;
        self.prr.start();
        self.cx.ssthresh = self.call_cc(|cc, cx| cc.ssthresh(cx));
        self.queue_cwr = self.cfg.ecn.enabled();
    }

    /// Linux `tcp_end_cwnd_reduction`, unless undone; `cong_control` algorithms are left alone.
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() || (self.cx.ca_state != CaState::Cwr && self.undo_marker.is_none()) {
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
        // Linux `tcp_timeout_mark_lost`: with RACK, segments sent within RACK.rtt of now are
        // not due yet (the head always is).
        let spare =
            self.rack.as_ref().filter(|r| r.rtt_us() > 0).map(|r| SimTime(now.0.saturating_sub(SimDuration::from_micros(r.rtt_us()).0)));
        self.tlp_high_seq = None;
        self.rate.lost += u64::from(self.sb.mark_all_lost(spare));
        let state = self.cx.ca_state;
        if state <= CaState::Disorder || self.high_seq <= self.sb.snd_una() || (state == CaState::Loss && self.consecutive_rtos == 0) {
            self.prior_ssthresh = self.current_ssthresh();
            self.cx.prior_cwnd = self.cx.cwnd;
            self.cx.ssthresh = self.call_cc(|cc, cx| cc.ssthresh(cx));
            self.call_cc(|cc, cx| cc.cwnd_event(cx, CwndEvent::Loss));
            self.init_undo();
        }
        // F-RTO (RFC 5682 §3.1 step 1) unless a recovery was under way, except for repeated
        // timeouts (§3.2)
        self.frto = self.cfg.undo && (state < CaState::Recovery || self.consecutive_rtos > 0);
        self.cx.cwnd = self.sb.in_flight() + 1;
        self.cx.cwnd_cnt = 0;
        self.set_state(CaState::Loss);
        self.high_seq = self.sb.snd_nxt();
        self.queue_cwr = self.cfg.ecn.enabled();
        self.consecutive_rtos += 1;
        self.rto_count += 1;
        self.rtt.back_off();
        self.set_xmit_timer(XmitTimer::Rto, now + self.rtt.rto());
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
        if !self.window_allows(payload) {
            return Sendable::Nothing;
        }
        Sendable::NewData { payload }
    }

    /// The peer's window and the send buffer admit `payload` more bytes.
    fn window_allows(&self, payload: u32) -> bool {
        let after = self.sb.bytes_out() + u64::from(payload);
        after <= self.snd_wnd && after <= self.cfg.snd_buf_bytes
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
            // Linux `tcp_xmit_retransmit_queue` leaves a pending reordering timer alone.
            if seq == self.sb.snd_una() && !(self.xmit_timer == XmitTimer::ReoTimeout && self.rto_deadline.is_some()) {
                self.set_xmit_timer(XmitTimer::Rto, now + self.rtt.rto());
            }
        } else {
            self.sb.push(Segment::new(payload, now, tx));
            self.new_bytes_sent += u64::from(payload);
            if packets_out == 0 {
                self.set_xmit_timer(XmitTimer::Rto, now + self.rtt.rto());
            }
            cwr = std::mem::take(&mut self.queue_cwr);
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.on_sent(seq, self.sb.get(seq));
        }
        // Linux tcp_ecn_send: ECT on new data; retransmissions only for NEEDS_ECN algorithms;
        // ECT(1) for L4S ones (INET_ECN_xmit with TCP_ECN_ECT_1).
        let ecn = match self.cfg.ecn {
            EcnMode::Classic if !is_retransmit => Ecn::Ect0,
            EcnMode::Off | EcnMode::Classic => Ecn::NotEct,
            EcnMode::Accurate => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        };
        if matches!(self.cx.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr.on_sent();
        }
        self.burst_left = self.burst_left.saturating_sub(1);
        if self.cx.paced {
            // Each segment of a burst moves the departure time on by its own length: the
            // next burst waits for the whole burst (Linux advances once by skb->len).
            schedule_next_departure(&mut self.cx, now, payload);
        }
        self.last_send = Some(now);
        self.cx.last_send_time = now;
        self.segments_sent += 1;
        self.bytes_sent += u64::from(payload);
        // PSH on the segment that carries the last byte written so far (a retransmitted
        // segment keeps it, as Linux retransmits the skb with its flags).
        let psh = self.app_bytes == self.new_bytes_sent && seq + 1 == self.sb.snd_nxt();
        Transmit { header: DataHeader { seq, payload, tsval: now, cwr, psh }, ecn, is_retransmit }
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
