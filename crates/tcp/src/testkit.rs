//! Test harness (tests only): a "wire" that joins one sender and one receiver with a fixed
//! one-way delay in each direction, an optional bottleneck rate (unbounded FIFO) on the data
//! path, chosen drops and CE marks; a probe algorithm that records the hooks it sees, and a spy
//! that logs a real algorithm's rate samples and modes.
//! No ns-3 counterpart (ns-3 tests build full node/channel topologies).

use crate::{TcpConfig, TcpReceiver, TcpSender, Transmit};
use std::sync::{Arc, Mutex};
use tcplab_cc::reno::Reno;
use tcplab_cc::{AckFlags, AckSample, BbrInfo, CaState, CcCx, CongestionControl, CwndEvent, RateSample};
use tcplab_core::packet::HEADER_BYTES;
use tcplab_core::{AckHeader, DataHeader, Ecn, Rate, Scheduler, SimDuration, SimTime};

pub(crate) fn ms(v: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(v)
}

/// A hook call seen by [`Probe`], with the time and the window at that moment.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Hook {
    Ssthresh {
        now: SimTime,
        cwnd: u32,
        result: u32,
    },
    SetState {
        now: SimTime,
        from: CaState,
        to: CaState,
        cwnd: u32,
    },
    Event {
        now: SimTime,
        ev: CwndEvent,
        cwnd: u32,
        ssthresh: u32,
    },
    CongControl {
        now: SimTime,
        rs: RateSample,
        app_limited: u64,
    },
    /// A [`Spy`]'s `cong_control`, with the algorithm's mode after it.
    Control {
        now: SimTime,
        rs: RateSample,
        mode: Option<&'static str>,
    },
}

pub(crate) type HookLog = Arc<Mutex<Vec<Hook>>>;

/// Reno that logs its hooks; with `fixed` = Some((cwnd, pacing bytes/s)) it is instead a
/// `cong_control` algorithm holding a constant window and pacing rate.
#[derive(Debug)]
pub(crate) struct Probe {
    log: HookLog,
    fixed: Option<(u32, u64)>,
}

impl Probe {
    pub(crate) fn reno() -> (Box<dyn CongestionControl>, HookLog) {
        let log = HookLog::default();
        (Box::new(Probe { log: log.clone(), fixed: None }), log)
    }

    pub(crate) fn fixed_rate(cwnd: u32, pacing_bytes_per_sec: u64) -> (Box<dyn CongestionControl>, HookLog) {
        let log = HookLog::default();
        (Box::new(Probe { log: log.clone(), fixed: Some((cwnd, pacing_bytes_per_sec)) }), log)
    }

    fn push(&self, h: Hook) {
        self.log.lock().unwrap().push(h);
    }
}

impl CongestionControl for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn init(&mut self, cx: &mut CcCx) {
        if let Some((cwnd, rate)) = self.fixed {
            cx.cwnd = cwnd;
            cx.pacing_rate = rate;
        }
    }
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        let result = Reno.ssthresh(cx);
        self.push(Hook::Ssthresh { now: cx.now, cwnd: cx.cwnd, result });
        result
    }
    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        Reno.cong_avoid(cx, acked);
    }
    fn has_cong_control(&self) -> bool {
        self.fixed.is_some()
    }
    fn cong_control(&mut self, cx: &mut CcCx, rs: &RateSample) {
        self.push(Hook::CongControl { now: cx.now, rs: *rs, app_limited: cx.app_limited });
    }
    fn set_state(&mut self, cx: &mut CcCx, to: CaState) {
        self.push(Hook::SetState { now: cx.now, from: cx.ca_state, to, cwnd: cx.cwnd });
    }
    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        self.push(Hook::Event { now: cx.now, ev, cwnd: cx.cwnd, ssthresh: cx.ssthresh });
    }
}

/// A real algorithm whose `cong_control` calls are logged as [`Hook::Control`]; every hook is
/// passed on unchanged.
#[derive(Debug)]
pub(crate) struct Spy {
    inner: Box<dyn CongestionControl>,
    log: HookLog,
}

impl Spy {
    pub(crate) fn wrap(inner: Box<dyn CongestionControl>) -> (Box<dyn CongestionControl>, HookLog) {
        let log = HookLog::default();
        (Box::new(Spy { inner, log: log.clone() }), log)
    }
}

impl CongestionControl for Spy {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn init(&mut self, cx: &mut CcCx) {
        self.inner.init(cx);
    }
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        self.inner.ssthresh(cx)
    }
    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        self.inner.cong_avoid(cx, acked);
    }
    fn has_cong_control(&self) -> bool {
        self.inner.has_cong_control()
    }
    fn cong_control(&mut self, cx: &mut CcCx, rs: &RateSample) {
        self.inner.cong_control(cx, rs);
        self.log.lock().unwrap().push(Hook::Control { now: cx.now, rs: *rs, mode: self.inner.mode() });
    }
    fn in_ack_event(&mut self, cx: &mut CcCx, flags: AckFlags) {
        self.inner.in_ack_event(cx, flags);
    }
    fn pkts_acked(&mut self, cx: &mut CcCx, sample: &AckSample) {
        self.inner.pkts_acked(cx, sample);
    }
    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        self.inner.set_state(cx, new_state);
    }
    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        self.inner.cwnd_event(cx, ev);
    }
    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        self.inner.undo_cwnd(cx)
    }
    fn mode(&self) -> Option<&'static str> {
        self.inner.mode()
    }
    fn get_info(&self, cx: &CcCx) -> Option<BbrInfo> {
        self.inner.get_info(cx)
    }
    fn needs_accurate_ecn(&self) -> bool {
        self.inner.needs_accurate_ecn()
    }
    fn min_tso_segs(&self, cx: &CcCx) -> u32 {
        self.inner.min_tso_segs(cx)
    }
    fn sends_ect1(&self) -> bool {
        self.inner.sends_ect1()
    }
    fn tso_segs(&self, cx: &CcCx) -> Option<u32> {
        self.inner.tso_segs(cx)
    }
}

/// One transmission seen on the wire.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sent {
    pub at: SimTime,
    pub tx: Transmit,
    pub dropped: bool,
}

enum Ev {
    Data(DataHeader, Ecn),
    Ack(AckHeader),
}

pub(crate) struct Wire {
    pub tx: TcpSender,
    pub rx: TcpReceiver,
    pub now: SimTime,
    delay: SimDuration,
    bottleneck: Option<Rate>,
    link_free: SimTime,
    events: Scheduler<Ev>,
    /// (seq, n): drop the n-th transmission of seq (1 = the original).
    drops: Vec<(u32, u32)>,
    /// (seq, n, extra): the n-th transmission of seq takes `extra` longer to arrive.
    delays: Vec<(u32, u32, SimDuration)>,
    /// Sequences whose first transmission is CE-marked.
    ce_marks: Vec<u32>,
    copies: Vec<u32>,
    pub sent: Vec<Sent>,
    /// ACKs as they reach the sender.
    pub acks: Vec<(SimTime, AckHeader)>,
}

impl Wire {
    pub(crate) fn new(cfg: TcpConfig, cc: Box<dyn CongestionControl>, bytes: Option<u64>, delay: SimDuration) -> Self {
        let rx = TcpReceiver::new(&cfg);
        let mut tx = TcpSender::new(cfg, cc, bytes);
        tx.start(SimTime::ZERO);
        Wire {
            tx,
            rx,
            now: SimTime::ZERO,
            delay,
            bottleneck: None,
            link_free: SimTime::ZERO,
            events: Scheduler::new(),
            drops: Vec::new(),
            delays: Vec::new(),
            ce_marks: Vec::new(),
            copies: Vec::new(),
            sent: Vec::new(),
            acks: Vec::new(),
        }
    }

    pub(crate) fn with_bottleneck(mut self, rate: Rate) -> Self {
        self.bottleneck = Some(rate);
        self
    }

    pub(crate) fn drop_copy(&mut self, seq: u32, copy: u32) {
        self.drops.push((seq, copy));
    }

    pub(crate) fn delay_copy(&mut self, seq: u32, copy: u32, extra: SimDuration) {
        self.delays.push((seq, copy, extra));
    }

    pub(crate) fn mark_ce(&mut self, seq: u32) {
        self.ce_marks.push(seq);
    }

    /// Runs until `end`, or until the transfer is done and nothing is pending.
    pub(crate) fn run_until(&mut self, end: SimTime) {
        self.pump();
        for _ in 0..50_000_000u64 {
            let ev = self.events.peek_time();
            let rt = self.rx.next_timer();
            let st = self.tx.next_timer();
            let Some(t) = [ev, rt, st].into_iter().flatten().min() else { return };
            if t > end || (self.tx.is_done() && ev.is_none()) {
                return;
            }
            self.now = t;
            if ev == Some(t) {
                match self.events.pop_until(t).map(|(_, e)| e) {
                    Some(Ev::Data(hdr, ecn)) => {
                        for ack in self.rx.on_data(t, &hdr, ecn) {
                            self.events.schedule(t + self.delay, Ev::Ack(ack));
                        }
                    }
                    Some(Ev::Ack(ack)) => {
                        self.acks.push((t, ack));
                        self.tx.on_ack(t, &ack);
                        self.pump();
                    }
                    None => unreachable!(),
                }
            } else if rt == Some(t) {
                if let Some(ack) = self.rx.on_timer(t) {
                    self.events.schedule(t + self.delay, Ev::Ack(ack));
                }
            } else {
                self.tx.on_timer(t);
                self.pump();
            }
        }
        panic!("wire did not settle");
    }

    fn pump(&mut self) {
        while let Some(tx) = self.tx.poll_transmit(self.now) {
            let seq = tx.header.seq as usize;
            if self.copies.len() <= seq {
                self.copies.resize(seq + 1, 0);
            }
            self.copies[seq] += 1;
            let copy = self.copies[seq];
            let dropped = self.drops.contains(&(tx.header.seq, copy));
            self.sent.push(Sent { at: self.now, tx, dropped });
            if dropped {
                continue;
            }
            let mut ecn = tx.ecn;
            if ecn.is_ect() && copy == 1 && self.ce_marks.contains(&tx.header.seq) {
                ecn = Ecn::Ce;
            }
            let departure = match self.bottleneck {
                Some(rate) => {
                    let start = self.link_free.max(self.now);
                    self.link_free = start + rate.tx_time(u64::from(tx.header.payload + HEADER_BYTES));
                    self.link_free
                }
                None => self.now,
            };
            let extra = self.delays.iter().find(|d| (d.0, d.1) == (tx.header.seq, copy)).map_or(SimDuration::ZERO, |d| d.2);
            self.events.schedule(departure + self.delay + extra, Ev::Data(tx.header, ecn));
        }
    }

    pub(crate) fn retransmissions(&self) -> Vec<&Sent> {
        self.sent.iter().filter(|s| s.tx.is_retransmit).collect()
    }
}

/// ACK every segment (the setting of docs/validation.md).
pub(crate) fn ack_every_segment() -> TcpConfig {
    TcpConfig { delayed_ack: crate::DelayedAck { every: 1, ..crate::DelayedAck::default() }, ..TcpConfig::default() }
}
