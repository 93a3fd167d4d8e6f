//! The ns3 stack's sender driven by hand-made ACKs: each test works out what ns-3 3.44's
//! TcpSocketBase does at that step.

use super::*;
use crate::config::{DelayedAck, RecoveryMode, RtoMode, Stack};
use crate::TcpReceiver;
use tcplab_cc::ns3::newreno::NewReno;
use tcplab_core::{SackBlock, MAX_SACK_BLOCKS};

const MSS: u32 = 1000;

fn at_us(us: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_micros(us)
}

fn config() -> TcpConfig {
    TcpConfig {
        stack: Stack::Ns3,
        mss: MSS,
        min_rto: SimDuration::from_secs(1),
        rto_mode: RtoMode::Rfc6298,
        recovery: RecoveryMode::Rfc6675,
        undo: false,
        gso: false,
        tso_defer: false,
        delayed_ack: DelayedAck { every: 2, timeout: SimDuration::from_millis(200), quickack_segments: 0, adaptive: false },
        ..TcpConfig::default()
    }
}

fn ack(ack: u32, tsecr: SimTime, sacks: &[(u32, u32)]) -> AckHeader {
    let mut sack = [SackBlock::default(); MAX_SACK_BLOCKS];
    for (i, (start, end)) in sacks.iter().enumerate() {
        sack[i] = SackBlock { start: *start, end: *end };
    }
    AckHeader { ack, sack, sack_len: sacks.len() as u8, tsecr, ece: false, rwnd_bytes: 6 << 20, delayed: false }
}

fn drain(s: &mut Ns3Sender, now: SimTime) -> Vec<Transmit> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

/// A NewReno sender past the handshake at 40.1 ms (SYN at 0), its initial window sent.
fn established() -> (Ns3Sender, Vec<Transmit>) {
    let mut s = Ns3Sender::new(config(), Box::new(NewReno), None);
    s.start(SimTime::ZERO);
    let syn = drain(&mut s, SimTime::ZERO);
    assert_eq!(syn.len(), 1);
    assert!(syn[0].header.is_syn());
    let rtt = s.on_ack(at_us(40_100), &ack(0, syn[0].header.tsval, &[]));
    // whole milliseconds: 40 − 0
    assert_eq!(rtt.rtt_sample, Some(SimDuration::from_millis(40)));
    let sent = drain(&mut s, at_us(40_100));
    (s, sent)
}

#[test]
fn the_handshake_opens_the_initial_window_in_bytes() {
    let (s, sent) = established();
    assert_eq!(sent.len(), 10); // InitialCwnd 10 × 1000 B
    assert_eq!(s.tcb().cwnd, 10 * MSS);
    assert_eq!(s.tcb().cong_state, CongState::Open);
    // ns-3 timestamps are whole milliseconds
    assert!(sent.iter().all(|t| t.header.tsval == SimTime::ZERO + SimDuration::from_millis(40)));
}

#[test]
fn slow_start_grows_one_segment_per_ack_with_delayed_acks() {
    let (mut s, sent) = established();
    // ACKs of 2 segments each: NewReno's slow start adds one segment per ACK, so after five
    // ACKs (10 segments) cwnd is 15, and 15 − 0 in flight lets 15 more go.
    for i in 1..=5 {
        s.on_ack(at_us(80_100 + i), &ack(2 * i as u32, sent[0].header.tsval, &[]));
    }
    assert_eq!(s.tcb().cwnd, 15 * MSS);
    assert_eq!(drain(&mut s, at_us(80_200)).len(), 15);
}

#[test]
fn the_rtt_sample_is_whole_milliseconds_of_truncated_times() {
    let (mut s, sent) = established();
    // sent at 40.1 ms (TSval 40), ACKed at 80.9 ms: 80 − 40 = 40 ms, not 40.8
    let out = s.on_ack(at_us(80_900), &ack(2, sent[0].header.tsval, &[]));
    assert_eq!(out.rtt_sample, Some(SimDuration::from_millis(40)));
    assert_eq!(s.tcb().last_rtt, SimDuration::from_millis(40));
    // SRTT stays 40 ms; the minimum RTT is that of SRTT
    assert_eq!((s.tcb().srtt, s.tcb().min_rtt), (SimDuration::from_millis(40), SimDuration::from_millis(40)));
}

#[test]
fn three_sacking_acks_enter_recovery_and_resend_the_head_at_once() {
    let (mut s, sent) = established();
    let ts = sent[0].header.tsval;
    // segment 0 lost; ACKs SACKing 1, 1–2, 1–3: Open → Disorder, then Recovery at the third
    s.on_ack(at_us(80_100), &ack(0, ts, &[(1, 2)]));
    assert_eq!(s.tcb().cong_state, CongState::Disorder);
    s.on_ack(at_us(80_200), &ack(0, ts, &[(1, 3)]));
    // in Disorder the SACKed segments left the pipe: the window lets two new ones go
    assert_eq!(drain(&mut s, at_us(80_200)).iter().map(|t| t.header.seq).collect::<Vec<_>>(), vec![10, 11]);
    s.on_ack(at_us(80_300), &ack(0, ts, &[(1, 4)]));
    assert_eq!(s.tcb().cong_state, CongState::Recovery);
    // ssthresh = max(2 SMSS, BytesInFlight/2): 12 sent − 3 SACKed − 1 lost = 8 → 4000
    assert_eq!(s.tcb().ssthresh, 4 * MSS);
    let out = drain(&mut s, at_us(80_300));
    assert!(out[0].is_retransmit && out[0].header.seq == 0);
}

#[test]
fn a_timeout_goes_to_loss_with_one_segment_and_doubles_the_rto() {
    let (mut s, _) = established();
    let deadline = s.rto_deadline().expect("armed by the first segment");
    // RTO before any data sample: the handshake's: max(40 + max(1, 4·20) ms, 1 s) = 1 s
    assert_eq!(deadline, at_us(40_100) + SimDuration::from_secs(1));
    s.on_timer(deadline);
    assert_eq!(s.tcb().cong_state, CongState::Loss);
    assert_eq!(s.tcb().cwnd, MSS);
    // ssthresh from the 10 segments in flight before the timeout: 5000
    assert_eq!(s.tcb().ssthresh, 5 * MSS);
    let out = drain(&mut s, deadline);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_retransmit && out[0].header.seq == 0);
    assert_eq!(s.rto_deadline(), Some(deadline + SimDuration::from_secs(2)));
}

#[test]
fn the_receiver_advertises_its_whole_buffer_and_acks_the_first_segment_at_once() {
    let mut r = TcpReceiver::new(&config());
    let seg = |seq: u32, us: u64| DataHeader { seq, payload: MSS, tsval: at_us(us), cwr: false, psh: false };
    let syn = DataHeader { seq: 0, payload: 0, tsval: SimTime::ZERO, cwr: false, psh: false };
    assert_eq!(r.on_data(at_us(20_000), &syn, Ecn::NotEct).len(), 1);
    // ns-3 sets m_delAckCount to its maximum on establishing: segment 0 is ACKed at once
    assert_eq!(r.on_data(at_us(60_000), &seg(0, 40_000), Ecn::NotEct).len(), 1);
    assert_eq!(r.on_data(at_us(60_100), &seg(1, 40_100), Ecn::NotEct).len(), 0);
    // out of order: ACKed at once; the window is the whole buffer (TcpRxBuffer::MaxRxSequence)
    let acks = r.on_data(at_us(60_300), &seg(3, 40_300), Ecn::NotEct);
    assert_eq!(acks.last().unwrap().rwnd_bytes, config().rcv_buf_bytes);
}

#[test]
fn without_sack_recovery_with_an_empty_pipe_keeps_cwnd() {
    // 4 segments out, three duplicate ACKs: Reno emulation counts them as SACKed and the head
    // as lost, so the pipe is empty when Recovery starts and PRR has nothing delivered to
    // share out (ns-3's DoRecovery returns early); the head still goes out at once.
    let mut s = Ns3Sender::new(TcpConfig { sack: false, ..config() }, Box::new(NewReno), Some(4 * u64::from(MSS)));
    s.start(SimTime::ZERO);
    let syn = drain(&mut s, SimTime::ZERO);
    s.on_ack(at_us(40_100), &ack(0, syn[0].header.tsval, &[]));
    let sent = drain(&mut s, at_us(40_100));
    assert_eq!(sent.len(), 4);
    for i in 1..=3 {
        s.on_ack(at_us(80_100 + i), &ack(0, sent[0].header.tsval, &[]));
    }
    assert_eq!(s.tcb().cong_state, CongState::Recovery);
    assert_eq!(s.tcb().cwnd, 10 * MSS);
    let out = drain(&mut s, at_us(80_200));
    assert!(out[0].is_retransmit && out[0].header.seq == 0);
}

#[test]
fn a_sacked_retransmission_stays_in_bytes_in_flight_until_the_cumulative_ack() {
    let (mut s, sent) = established();
    let ts = sent[0].header.tsval;
    let sends = |s: &mut Ns3Sender, at: u64, blocks: &[(u32, u32)]| {
        s.on_ack(at_us(at), &ack(0, ts, blocks));
        let in_flight = s.tcb().bytes_in_flight;
        let out: Vec<(u32, bool)> = drain(s, at_us(at)).iter().map(|t| (t.header.seq, t.is_retransmit)).collect();
        (in_flight, out)
    };
    // Segments 0 and 1 lost. SACKs of 2, 3 (Disorder: new 10, 11 go), then 4: Recovery with 0
    // and 1 lost (three SACKed above 1), 0 resent at once. SACK of 5: 1 resent; of 6: new 12.
    sends(&mut s, 80_100, &[(2, 3)]);
    sends(&mut s, 80_200, &[(2, 4)]);
    assert_eq!(sends(&mut s, 80_300, &[(2, 5)]).1, [(0, true)]);
    assert_eq!(sends(&mut s, 80_400, &[(2, 6)]).1, [(1, true)]);
    // 13 sent (0–12) − 5 SACKed − 2 lost + 2 resent = 8 segments once 12 is out
    assert_eq!(sends(&mut s, 80_500, &[(2, 7)]), (7 * MSS, vec![(12, false)]));
    assert_eq!(s.tcb().bytes_in_flight, 8 * MSS);
    // The resent 1 is SACKed: TcpTxBuffer::Update clears its lost flag and keeps m_retrans,
    // so BytesInFlight stays 13 − (6 SACKed + 1 lost) + 2 resent = 8 (Linux: 7).
    let (in_flight, out) = sends(&mut s, 80_600, &[(1, 7)]);
    assert_eq!(in_flight, 8 * MSS);
    assert_eq!(out, [(13, false)], "PRR's share of the delivered segments");
    // The full ACK of 0–11 removes both retransmissions: 12 and 13 are in flight.
    s.on_ack(at_us(80_700), &ack(12, ts, &[]));
    assert_eq!((s.tcb().cong_state, s.tcb().bytes_in_flight), (CongState::Open, 2 * MSS));
}

#[test]
fn re_entering_recovery_keeps_a_lost_heads_retransmission_in_flight() {
    // ns-3's EnterRecovery marks the head lost only when it is not (TcpTxBuffer::IsLost is its
    // lost flag): a head lost and resent in the previous recovery keeps its m_retrans, so it
    // stays in BytesInFlight, which sets ssthresh and PRR's RecoverFS.
    let (mut s, sent) = established();
    let ts = sent[0].header.tsval;
    let mut t = 80_000;
    let mut step = |s: &mut Ns3Sender, a: u32, blocks: &[(u32, u32)]| {
        t += 100;
        s.on_ack(at_us(t), &ack(a, ts, blocks));
        drain(s, at_us(t)).iter().map(|x| (x.header.seq, x.is_retransmit)).collect::<Vec<_>>()
    };
    // Segment 0 lost: Recovery at the third SACK (recover = 12), then PRR sends 12–17 as
    // 1–11 are SACKed. 12 is lost too: SACKs of 13–15 mark it and it is resent.
    for end in 2..=12 {
        step(&mut s, 0, &[(1, end)]);
    }
    for end in 14..16 {
        step(&mut s, 0, &[(13, end), (1, 12)]);
    }
    assert_eq!(step(&mut s, 0, &[(13, 16), (1, 12)]), [(12, true)]);
    // The cumulative ACK of 0–11 reaches recover: Open, 12 still missing, 18 goes.
    assert_eq!(step(&mut s, 12, &[(13, 16)]), [(18, false)]);
    assert_eq!(s.tcb().cong_state, CongState::Open);
    // A SACK of 16: Disorder, and the lost head re-enters Recovery at once. BytesInFlight =
    // 7 sent (12–18) − 4 SACKed − 1 lost + 1 resent = 3000; ssthresh = max(2000, 1500) = 2000;
    // PRR: delivered 1000 + 1000 (duplicate ACK), ⌈2000·2000/3000⌉ = 1334, cwnd = 4334. The
    // head goes out again (not counted twice) and 4334 − 3000 lets the new 19 go. (Marking
    // the head lost again would leave 2000 in flight, cwnd 3000 and 19 unsent.)
    assert_eq!(step(&mut s, 12, &[(13, 17)]), [(12, true), (19, false)]);
    assert_eq!((s.tcb().cong_state, s.tcb().ssthresh, s.tcb().cwnd), (CongState::Recovery, 2 * MSS, 4334));
    assert_eq!(s.tcb().bytes_in_flight, 4 * MSS);
}
