//! A fake TCP sender for driving congestion-control hooks without a network: a test aid, compiled
//! only for this crate's unit tests and with the `testkit` feature (which `tests/conformance.rs`
//! and `benches/per_ack.rs` enable); the simulator's sender is tcplab-tcp.
//!
//! [`Sender`] applies ACKs, RTOs and transmissions to a [`CcCx`] and calls the hooks in Linux order
//! (Linux tcp_ack(), tcp_cong_control()): `in_ack_event`; RTT estimate, then `pkts_acked`; the loss
//! state machine (CWR on ECN echo, Recovery on loss, back to Open once snd_una passes `high_seq`;
//! Linux tcp_cwnd_reduction(), tcp_enter_loss()); the delivery-rate sample (Linux tcp_rate_gen(),
//! by the same [`rate_sample`](crate::rate_sample::rate_sample) as tcplab-tcp's sender); then
//! `cong_control`, PRR (RFC 6937) or `cong_avoid`. [`Path`] puts a `Sender` on a fixed-rate
//! path: one bottleneck of constant rate with a FIFO queue (unlimited or drop-tail), a constant
//! propagation delay, one ACK per packet and a bulk application that always has data.
//!
//! Simplified against Linux: no SACK scoreboard (an [`Ack`] states what it delivers and
//! marks lost, and which sent packet is the newest it delivers), no retransmissions (a lost
//! packet leaves the sequence space with the next cumulative ACK), the RTT estimator reduced
//! to srtt (gain 1/8) and a whole-connection minimum, no undo, RTO only on request, no
//! app-limited detection and no CE counting (a test sets `cx.app_limited` or
//! `cx.delivered_ce` itself), no `tcp_info` delivery rate, and no pacing for algorithms
//! without `cong_control` (Linux default qdisc). ns-3 has no counterpart.

use crate::rate_sample::{rate_sample, AckContext, DeliveryTotals, SentPacket, TxSnapshot};
use crate::{AckFlags, AckSample, CaState, CcCx, CongestionControl, CwndEvent, RateSample, INFINITE_SSTHRESH};
use std::collections::VecDeque;
use tcplab_core::{SimDuration, SimTime};

/// One incoming ACK as the loss-detection layer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    /// Packets cumulatively ACKed: snd_una advances by this many (Linux `pkts_acked`).
    pub pkts_acked: u32,
    /// Packets newly delivered, cumulatively or by SACK (Linux `acked_sacked`).
    pub delivered: u32,
    /// Packets newly marked lost.
    pub losses: u32,
    /// RTT sample in µs, -1 if none.
    pub rtt_us: i64,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// The most recently sent packet this ACK delivers, if any: the rate sample's source.
    pub newest: Option<SentPacket>,
}

/// Linux `before(a, b)` on 32-bit sequence numbers.
fn seq_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// The sender side of one connection, minus the network.
#[derive(Debug)]
pub struct Sender<C: ?Sized + CongestionControl> {
    pub cx: CcCx,
    pub cc: Box<C>,
    /// The rate sample given to the algorithm on the last ACK.
    pub last_rs: RateSample,
    high_seq: u32,
    prr_delivered: u32,
    prr_out: u32,
    first_tx_time: SimTime,
    cwnd_usage_seq: u32,
}

impl<C: ?Sized + CongestionControl> Sender<C> {
    /// A sender over `cx`; call [`Sender::init`] once the connection is "established".
    pub fn new(cc: Box<C>, cx: CcCx) -> Self {
        Sender {
            cx,
            cc,
            last_rs: RateSample::invalid(),
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            first_tx_time: SimTime::ZERO,
            cwnd_usage_seq: 0,
        }
    }

    /// Connection established: `init`. Algorithms with `cong_control` are paced (Linux sch_fq).
    pub fn init(&mut self) {
        if self.cc.has_cong_control() {
            self.cx.paced = true;
        }
        self.cc.init(&mut self.cx);
    }

    /// Whether cwnd lets another packet out.
    pub fn cwnd_allows(&self) -> bool {
        self.cx.in_flight < self.cx.cwnd
    }

    /// Sends one new packet at `now` (TX_START first if nothing is in flight) and returns
    /// what the rate sampler stores in it (Linux `tcp_rate_skb_sent`, `tcp_event_data_sent`).
    pub fn send(&mut self, now: SimTime) -> SentPacket {
        let cx = &mut self.cx;
        cx.now = now;
        if cx.packets_out == 0 {
            self.first_tx_time = now;
            cx.delivered_time = now;
        }
        let tx = TxSnapshot {
            delivered: cx.delivered,
            delivered_ce: cx.delivered_ce,
            delivered_time: cx.delivered_time,
            first_tx_time: self.first_tx_time,
            lost: cx.lost,
            tx_in_flight: cx.in_flight + 1,
            is_app_limited: cx.app_limited != 0,
        };
        if cx.in_flight == 0 {
            self.cc.cwnd_event(cx, CwndEvent::TxStart);
        }
        cx.last_send_time = now;
        cx.snd_nxt = cx.snd_nxt.wrapping_add(1);
        cx.packets_out += 1;
        cx.in_flight += 1;
        if matches!(cx.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr_out += 1;
        }
        if cx.paced && cx.pacing_rate > 0 {
            let gap = SimDuration::from_nanos(u64::from(cx.mss) * 1_000_000_000 / cx.pacing_rate);
            cx.next_send_time = cx.next_send_time.max(now) + gap;
        }
        SentPacket { sent: now, tx, is_retrans: false }
    }

    /// Linux `tcp_cwnd_validate` after a burst of sends; `blocked`: cwnd stopped the burst.
    pub fn cwnd_validate(&mut self, blocked: bool) {
        let cx = &mut self.cx;
        if !seq_before(cx.snd_una, self.cwnd_usage_seq) || blocked || (!cx.is_cwnd_limited && cx.packets_out > cx.max_packets_out) {
            cx.is_cwnd_limited = blocked;
            cx.max_packets_out = cx.packets_out;
            self.cwnd_usage_seq = cx.snd_nxt;
        }
    }

    /// Processes one ACK at `now`, calling the hooks in Linux order (tcp_ack()).
    pub fn ack(&mut self, now: SimTime, ack: &Ack) {
        let cx = &mut self.cx;
        cx.now = now;
        let prior_in_flight = cx.in_flight;
        // (1) Clean the retransmit queue, count deliveries for the rate sampler.
        cx.snd_una = cx.snd_una.wrapping_add(ack.pkts_acked);
        cx.packets_out = cx.packets_out.saturating_sub(ack.pkts_acked);
        cx.in_flight = cx.in_flight.saturating_sub(ack.delivered + ack.losses);
        cx.delivered += u64::from(ack.delivered);
        cx.lost += u64::from(ack.losses);
        if let Some(p) = &ack.newest {
            self.first_tx_time = p.sent;
        }
        // (2)
        let slowpath = ack.pkts_acked == 0 || ack.delivered != ack.pkts_acked;
        self.cc.in_ack_event(cx, AckFlags { slowpath, win_update: false, ece: ack.ece });
        // (3)
        if ack.rtt_us >= 0 {
            let rtt = ack.rtt_us as u64;
            cx.srtt_us = if cx.srtt_us == 0 { rtt } else { (7 * cx.srtt_us + rtt) / 8 };
            cx.min_rtt_us = cx.min_rtt_us.min(rtt);
        }
        let sample = AckSample { pkts_acked: ack.pkts_acked, rtt_us: ack.rtt_us, in_flight: prior_in_flight };
        self.cc.pkts_acked(cx, &sample);
        // (4)
        self.loss_state(ack);
        // (5)
        let rs = self.rate_sample(ack, prior_in_flight);
        // (6)
        let cx = &mut self.cx;
        if self.cc.has_cong_control() {
            self.cc.cong_control(cx, &rs);
        } else if matches!(cx.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr(ack.delivered, ack.losses > 0, ack.pkts_acked > 0);
        } else if ack.pkts_acked > 0 {
            self.cc.cong_avoid(cx, ack.delivered);
        }
        self.last_rs = rs;
    }

    /// Retransmission timeout at `now` (Linux `tcp_enter_loss`): everything in flight
    /// is lost, ssthresh from the algorithm, LOSS event, cwnd = in_flight + 1, state Loss.
    pub fn rto(&mut self, now: SimTime) {
        let cx = &mut self.cx;
        cx.now = now;
        cx.lost += u64::from(cx.in_flight);
        cx.in_flight = 0;
        cx.prior_cwnd = cx.cwnd;
        cx.ssthresh = self.cc.ssthresh(cx);
        self.cc.cwnd_event(cx, CwndEvent::Loss);
        cx.cwnd = cx.in_flight + 1;
        cx.cwnd_cnt = 0;
        self.high_seq = cx.snd_nxt;
        self.cc.set_state(cx, CaState::Loss);
        cx.ca_state = CaState::Loss;
    }

    /// Step (4): leave a finished reduction, then enter Recovery on loss or CWR on ECE.
    fn loss_state(&mut self, ack: &Ack) {
        // This fake sender never retransmits: a loss reported on an ACK that passes high_seq
        // is a packet a real sender would still be repairing (snd_una would sit below it),
        // so the episode is not over yet.
        let episode_done = !seq_before(self.cx.snd_una, self.high_seq) && ack.losses == 0;
        if self.cx.ca_state >= CaState::Cwr && episode_done {
            self.leave_reduction();
        }
        if ack.losses > 0 && self.cx.ca_state < CaState::Recovery {
            self.enter(CaState::Recovery);
        } else if ack.ece && self.cx.ca_state < CaState::Cwr {
            self.enter(CaState::Cwr);
        }
    }

    /// Linux `tcp_init_cwnd_reduction` (unless already reducing), then the state change.
    fn enter(&mut self, state: CaState) {
        let cx = &mut self.cx;
        if cx.ca_state < CaState::Cwr {
            self.high_seq = cx.snd_nxt;
            self.prr_delivered = 0;
            self.prr_out = 0;
            cx.cwnd_cnt = 0;
            cx.prior_cwnd = cx.cwnd;
            cx.ssthresh = self.cc.ssthresh(cx);
        }
        self.cc.set_state(cx, state);
        cx.ca_state = state;
    }

    /// Linux `tcp_end_cwnd_reduction` (CWR/Recovery; skipped for `cong_control`
    /// algorithms as in Linux), then state Open.
    fn leave_reduction(&mut self) {
        let cx = &mut self.cx;
        if matches!(cx.ca_state, CaState::Cwr | CaState::Recovery) && !self.cc.has_cong_control() {
            if cx.ssthresh < INFINITE_SSTHRESH {
                cx.cwnd = cx.ssthresh;
            }
            self.cc.cwnd_event(cx, CwndEvent::CompleteCwr);
        }
        self.cc.set_state(cx, CaState::Open);
        cx.ca_state = CaState::Open;
    }

    /// Linux `tcp_cwnd_reduction` (PRR, RFC 6937).
    fn prr(&mut self, newly: u32, newly_lost: bool, una_advanced: bool) {
        let cx = &mut self.cx;
        if newly == 0 || cx.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly;
        let ssthresh = i128::from(cx.ssthresh);
        let prr_delivered = i128::from(self.prr_delivered);
        let prr_out = i128::from(self.prr_out);
        let delta = ssthresh - i128::from(cx.in_flight);
        let mut sndcnt = if delta < 0 {
            let prior_cwnd = i128::from(cx.prior_cwnd);
            (ssthresh * prr_delivered + prior_cwnd - 1) / prior_cwnd - prr_out
        } else {
            let bound = (prr_delivered - prr_out).max(i128::from(newly)) + i128::from(una_advanced && !newly_lost);
            bound.min(delta)
        };
        sndcnt = sndcnt.max(i128::from(self.prr_out == 0));
        cx.cwnd = (i128::from(cx.in_flight) + sndcnt).min(i128::from(u32::MAX)) as u32;
    }

    /// Step (5): Linux `tcp_rate_gen`: end the app-limited bubble, stamp the delivery, sample.
    fn rate_sample(&mut self, ack: &Ack, prior_in_flight: u32) -> RateSample {
        let cx = &mut self.cx;
        if cx.app_limited != 0 && cx.delivered > cx.app_limited {
            cx.app_limited = 0;
        }
        if ack.delivered > 0 {
            cx.delivered_time = cx.now;
        }
        let totals = DeliveryTotals { delivered: cx.delivered, delivered_ce: cx.delivered_ce, lost: cx.lost };
        let facts = AckContext {
            now: cx.now,
            delivered: ack.delivered,
            losses: ack.losses,
            min_rtt_us: cx.min_rtt_us,
            prior_in_flight,
            rtt_us: ack.rtt_us,
            is_ece: ack.ece,
            is_ack_delayed: false,
        };
        rate_sample(totals, ack.newest.as_ref(), &facts)
    }
}

/// A packet between sending and its ACK.
#[derive(Clone, Copy, Debug)]
struct InPipe {
    /// When its ACK (or, if dropped, the news of its loss) could reach the sender.
    at: SimTime,
    rec: SentPacket,
    dropped: bool,
}

/// A [`Sender`] on a fixed-rate path, advanced one ACK at a time.
#[derive(Debug)]
pub struct Path<C: ?Sized + CongestionControl> {
    pub sender: Sender<C>,
    /// Time to serialise one packet at the bottleneck (1 / bottleneck rate).
    pub packet_time: SimDuration,
    /// Two-way propagation delay. May be raised during a run; ACKs never overtake each other.
    pub base_rtt: SimDuration,
    /// Packets the bottleneck holds besides the one in service; `None` = unlimited.
    pub buffer: Option<u32>,
    now: SimTime,
    link_free: SimTime,
    pipe: VecDeque<InPipe>,
    /// Dropped packets passed over since the last ACK, reported with the next one.
    unreported_losses: u32,
}

impl<C: ?Sized + CongestionControl> Path<C> {
    /// A connection at t = 0 whose handshake measured the unloaded RTT (`base_rtt` +
    /// `packet_time`), already initialised, with MSS 1500 B.
    pub fn new(cc: Box<C>, packet_time: SimDuration, base_rtt: SimDuration, buffer: Option<u32>) -> Self {
        let mut cx = CcCx::new(1500);
        let rtt_us = (base_rtt + packet_time).as_micros();
        cx.srtt_us = rtt_us;
        cx.min_rtt_us = rtt_us;
        let mut sender = Sender::new(cc, cx);
        sender.init();
        Path {
            sender,
            packet_time,
            base_rtt,
            buffer,
            now: SimTime::ZERO,
            link_free: SimTime::ZERO,
            pipe: VecDeque::new(),
            unreported_losses: 0,
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Sends whatever cwnd and pacing allow before the next ACK, then processes that ACK.
    /// A dropped packet is reported as lost by the next ACK (as SACK would), or by an ACK of
    /// its own if nothing follows it.
    pub fn step(&mut self) {
        loop {
            let next_ack = self.pipe.front().map(|p| p.at);
            if self.sender.cwnd_allows() {
                let cx = &self.sender.cx;
                let at = if cx.paced { self.now.max(cx.next_send_time) } else { self.now };
                let ack_due = matches!(next_ack, Some(a) if a <= at);
                if !ack_due {
                    self.now = at;
                    self.transmit();
                    continue;
                }
            }
            let p = self.pipe.pop_front().expect("cwnd closed with nothing in flight");
            self.now = p.at;
            let losses = std::mem::take(&mut self.unreported_losses) + u32::from(p.dropped);
            let ack = if !p.dropped {
                let rtt_us = (p.at - p.rec.sent).as_micros() as i64;
                Ack { pkts_acked: 1 + losses, delivered: 1, losses, rtt_us, ece: false, newest: Some(p.rec) }
            } else if self.pipe.is_empty() {
                Ack { pkts_acked: losses, delivered: 0, losses, rtt_us: -1, ece: false, newest: None }
            } else {
                self.unreported_losses = losses;
                continue;
            };
            self.sender.ack(self.now, &ack);
            return;
        }
    }

    /// Steps until simulated time reaches `t`.
    pub fn run_until(&mut self, t: SimTime) {
        while self.now < t {
            self.step();
        }
    }

    fn transmit(&mut self) {
        let rec = self.sender.send(self.now);
        let backlog = self.link_free.saturating_since(self.now).as_nanos();
        let in_system = backlog.div_ceil(self.packet_time.as_nanos());
        let dropped = self.buffer.is_some_and(|b| in_system > u64::from(b));
        let at = if dropped {
            self.now + self.packet_time + self.base_rtt
        } else {
            self.link_free = self.link_free.max(self.now) + self.packet_time;
            self.link_free + self.base_rtt
        };
        let at = self.pipe.back().map_or(at, |last| at.max(last.at));
        self.pipe.push_back(InPipe { at, rec, dropped });
        let blocked = !self.sender.cwnd_allows();
        self.sender.cwnd_validate(blocked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reno::Reno;

    const MS: SimDuration = SimDuration::from_millis(1);

    #[test]
    fn lossless_path_acks_at_the_bottleneck_rate_with_the_base_rtt() {
        // 1 packet/ms, 40 ms propagation: the first ACK comes after 41 ms.
        let mut path = Path::new(Box::new(Reno), MS, SimDuration::from_millis(40), None);
        path.step();
        assert_eq!(path.now(), SimTime::ZERO + SimDuration::from_millis(41));
        assert_eq!(path.sender.last_rs.rtt_us, 41_000);
        // The initial window of 10 leaves in a burst and its ACKs come 1 ms apart.
        for k in 2..=10 {
            path.step();
            assert_eq!(path.now(), SimTime::ZERO + SimDuration::from_millis(40 + k));
        }
        assert_eq!(path.sender.cx.delivered, 10);
        assert_eq!(path.sender.cx.cwnd, 20);
    }

    #[test]
    fn rate_samples_measure_the_bottleneck_once_the_pipe_is_busy() {
        let mut path = Path::new(Box::new(Reno), MS, SimDuration::from_millis(20), None);
        path.run_until(SimTime::ZERO + SimDuration::from_millis(200));
        let rs = path.sender.last_rs;
        assert!(rs.interval_us > 0, "{rs:?}");
        let pkts_per_s = rs.delivered as f64 * 1e6 / rs.interval_us as f64;
        assert!((pkts_per_s - 1000.0).abs() < 1.0, "{pkts_per_s}");
    }

    #[test]
    fn drop_tail_losses_enter_recovery_and_prr_ends_at_ssthresh() {
        let mut path = Path::new(Box::new(Reno), MS, SimDuration::from_millis(20), Some(5));
        while path.sender.cx.ca_state != CaState::Recovery {
            path.step();
        }
        // cwnd 16 against a 6-packet pipe + 5-packet buffer: 4 drops, ssthresh 16/2.
        assert_eq!((path.sender.cx.prior_cwnd, path.sender.cx.ssthresh, path.sender.cx.lost), (16, 8, 4));
        let mut cwnds = vec![];
        while path.sender.cx.ca_state == CaState::Recovery {
            path.step();
            cwnds.push(path.sender.cx.cwnd);
        }
        // PRR: cwnd never above prior_cwnd, and equal to ssthresh at the end.
        assert!(cwnds.iter().all(|&c| c <= 16), "{cwnds:?}");
        assert_eq!(path.sender.cx.cwnd, path.sender.cx.ssthresh);
    }
}
