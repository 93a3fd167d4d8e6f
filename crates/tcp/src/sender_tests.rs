//! Sender scenarios (docs/models.md, TCP sender; docs/validation.md Reno 3) driven through the test
//! wire. The expected numbers are Linux's; ns-3 differences are listed in sender.rs.

use super::*;
use crate::testkit::{ack_every_segment, ms, Hook, HookLog, Probe, Spy, Wire};
use crate::{DelayedAck, EcnMode, RecoveryMode};
use tcplab_cc::RateSample;
use tcplab_core::SackBlock;

const MSS: u64 = 1448;

fn hooks(log: &HookLog) -> Vec<Hook> {
    log.lock().unwrap().clone()
}

fn ssthresh_calls(log: &HookLog) -> Vec<(u32, u32)> {
    hooks(log).iter().filter_map(|h| if let Hook::Ssthresh { cwnd, result, .. } = h { Some((*cwnd, *result)) } else { None }).collect()
}

fn states_entered(log: &HookLog) -> Vec<CaState> {
    hooks(log).iter().filter_map(|h| if let Hook::SetState { to, .. } = h { Some(*to) } else { None }).collect()
}

fn events(log: &HookLog, which: CwndEvent) -> Vec<(SimTime, u32, u32)> {
    hooks(log)
        .iter()
        .filter_map(|h| match h {
            Hook::Event { now, ev, cwnd, ssthresh } if *ev == which => Some((*now, *cwnd, *ssthresh)),
            _ => None,
        })
        .collect()
}

fn retransmitted_seqs(w: &Wire) -> Vec<u32> {
    w.retransmissions().iter().map(|s| s.tx.header.seq).collect()
}

fn ack_hdr(ack: u32, sacks: &[(u32, u32)]) -> AckHeader {
    let mut sack = [SackBlock::default(); 3];
    for (i, &(start, end)) in sacks.iter().enumerate() {
        sack[i] = SackBlock { start, end };
    }
    AckHeader { ack, sack, sack_len: sacks.len() as u8, tsecr: SimTime::ZERO, ece: false, rwnd_bytes: 6 << 20, delayed: false }
}

// docs/validation.md Reno 3: fast retransmit at cwnd 40 → ssthresh 20, ≈ 20 packets sent in the
// recovery round (PRR), cwnd = 20 when recovery ends.
#[test]
fn one_loss_gives_one_fast_retransmit_and_one_prr_halving() {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(ack_every_segment(), cc, None, SimDuration::from_millis(50));
    // ACKs of segments 0..29 grow cwnd from 10 to 40 in slow start; 30 is lost.
    w.drop_copy(30, 1);
    w.run_until(ms(1000));

    assert_eq!(retransmitted_seqs(&w), vec![30]);
    assert_eq!(w.tx.stats().rto_count, 0);
    assert_eq!(ssthresh_calls(&log), vec![(40, 20)]);
    assert_eq!(states_entered(&log), vec![CaState::Disorder, CaState::Recovery, CaState::Open]);
    let t_enter = hooks(&log)
        .iter()
        .find_map(|h| match h {
            Hook::SetState { now, to: CaState::Recovery, .. } => Some(*now),
            _ => None,
        })
        .unwrap();
    let exits = events(&log, CwndEvent::CompleteCwr);
    assert_eq!(exits.len(), 1);
    let (t_exit, cwnd_at_exit, ssthresh_at_exit) = exits[0];
    assert_eq!((cwnd_at_exit, ssthresh_at_exit), (20, 20));
    let sent_in_recovery = w.sent.iter().filter(|s| s.at >= t_enter && s.at < t_exit).count();
    assert!((19..=21).contains(&sent_in_recovery), "sent {sent_in_recovery} packets during recovery");
    assert_eq!(t_exit - t_enter, SimDuration::from_millis(100), "recovery lasts one round trip");
    // afterwards: congestion avoidance from 20
    assert_eq!(w.tx.stats().ssthresh_pkts, Some(20));
    assert!(w.tx.stats().cwnd_pkts >= 20);
}

#[test]
fn three_losses_in_one_window_are_repaired_in_one_sack_recovery() {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(TcpConfig::default(), cc, None, SimDuration::from_millis(50));
    for seq in [30, 35, 40] {
        w.drop_copy(seq, 1);
    }
    w.run_until(ms(2000));
    assert_eq!(retransmitted_seqs(&w), vec![30, 35, 40]);
    assert_eq!(w.tx.stats().rto_count, 0);
    assert_eq!(ssthresh_calls(&log).len(), 1);
    assert_eq!(states_entered(&log).iter().filter(|s| **s == CaState::Recovery).count(), 1);
    // all three retransmissions leave within one round trip of the first
    let r = w.retransmissions();
    assert!(r[2].at - r[0].at < SimDuration::from_millis(100));
    assert_eq!(events(&log, CwndEvent::CompleteCwr).len(), 1);
    assert!(w.tx.stats().bytes_acked > 500 * MSS);
}

// RFC 6582 via Linux Reno emulation: each partial ACK retransmits the next hole, one episode.
#[test]
fn newreno_without_sack_repairs_three_losses_with_partial_acks() {
    let (cc, log) = Probe::reno();
    let cfg = TcpConfig { sack: false, ..ack_every_segment() };
    let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(50));
    for seq in [30, 35, 40] {
        w.drop_copy(seq, 1);
    }
    w.run_until(ms(2000));
    assert_eq!(retransmitted_seqs(&w), vec![30, 35, 40]);
    assert_eq!(w.tx.stats().rto_count, 0);
    assert_eq!(ssthresh_calls(&log), vec![(40, 20)]);
    assert_eq!(states_entered(&log).iter().filter(|s| **s == CaState::Recovery).count(), 1);
    // one hole per round trip
    let r = w.retransmissions();
    assert_eq!(r[1].at - r[0].at, SimDuration::from_millis(100));
    assert_eq!(r[2].at - r[1].at, SimDuration::from_millis(100));
    assert_eq!(events(&log, CwndEvent::CompleteCwr), vec![(r[2].at + SimDuration::from_millis(100), 20, 20)]);
}

// RFC 3042 as Linux does it: each of the first two duplicate ACKs lowers in-flight by one and
// lets one new segment out; the third starts recovery with the retransmission.
#[test]
fn limited_transmit_on_the_first_two_dupacks() {
    for sack in [true, false] {
        let cfg = TcpConfig { sack, ..TcpConfig::default() };
        let (cc, _) = Probe::reno();
        let mut tx = TcpSender::new(cfg, cc, None);
        tx.start(SimTime::ZERO);
        let first: Vec<u32> = std::iter::from_fn(|| tx.poll_transmit(SimTime::ZERO)).map(|t| t.header.seq).collect();
        assert_eq!(first, (0..10).collect::<Vec<_>>());
        // 2 ms apart: a new segment within 1 ms of the last could wait (TSO deferral).
        for (k, expect) in [(2, Some((10, false))), (3, Some((11, false))), (4, Some((0, true)))] {
            let t = ms(100 + 2 * u64::from(k));
            tx.on_ack(t, &ack_hdr(0, &[(1, k)]));
            let sent = tx.poll_transmit(t).map(|t| (t.header.seq, t.is_retransmit));
            assert_eq!(sent, expect, "sack={sack}, dupack {}", k - 1);
            if k < 4 {
                assert_eq!(tx.poll_transmit(t), None);
            }
        }
        assert_eq!(tx.stats().cc_state, "recovery");
    }
}

#[test]
fn without_tlp_a_tail_loss_is_repaired_by_rto_and_the_second_rto_is_backed_off() {
    let (cc, log) = Probe::reno();
    let cfg = TcpConfig { recovery: RecoveryMode::Rfc6675, ..ack_every_segment() };
    let mut w = Wire::new(cfg, cc, Some(30 * MSS), SimDuration::from_millis(50));
    for seq in [27, 28, 29] {
        w.drop_copy(seq, 1);
    }
    w.drop_copy(27, 2);
    w.run_until(ms(10_000));
    assert!(w.tx.is_done());
    assert_eq!(w.rx.delivered_bytes(), 30 * MSS);
    assert_eq!(w.sent.iter().filter(|s| s.dropped).count(), 4);
    let r27: Vec<SimTime> = w.retransmissions().iter().filter(|s| s.tx.header.seq == 27).map(|s| s.at).collect();
    assert_eq!(r27.len(), 2);
    let last_ack_before = w.acks.iter().rfind(|(t, _)| *t < r27[0]).unwrap().0;
    // every RTT sample is 100 ms: RTO = SRTT + max(4·mdev, rto_min) = 300 ms
    let first_rto = r27[0] - last_ack_before;
    assert_eq!(first_rto, SimDuration::from_millis(300));
    assert_eq!(r27[1] - r27[0], SimDuration::from_millis(600));
    assert_eq!(w.tx.stats().rto_count, 2);
    // hook order on the first timeout: ssthresh, LOSS, set_state(Loss) with cwnd = 1;
    // the second (no progress in between) does not reduce ssthresh again.
    let h = hooks(&log);
    let i = h.iter().position(|h| matches!(h, Hook::Ssthresh { .. })).unwrap();
    let Hook::Ssthresh { cwnd, result, .. } = h[i] else { unreachable!() };
    assert_eq!(result, cwnd / 2);
    assert!(matches!(h[i + 1], Hook::Event { ev: CwndEvent::Loss, .. }));
    assert!(matches!(h[i + 2], Hook::SetState { to: CaState::Loss, cwnd: 1, .. }));
    assert_eq!(ssthresh_calls(&log).len(), 1);
    assert_eq!(states_entered(&log).iter().filter(|s| **s == CaState::Loss).count(), 2);
    // a stale timer call changes nothing
    w.tx.on_timer(ms(20_000));
    assert_eq!(w.tx.stats().rto_count, 2);
}

#[test]
fn receive_window_caps_data_in_flight() {
    let cfg = TcpConfig { rcv_buf_bytes: 8 * MSS, ..ack_every_segment() };
    let (cc, _) = Probe::reno();
    let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(20));
    w.run_until(ms(1000));
    let mut worst = 0;
    for s in &w.sent {
        let acked = w.acks.iter().filter(|(t, _)| *t <= s.at).map(|(_, a)| a.ack).max().unwrap_or(0);
        worst = worst.max(s.tx.header.seq + 1 - acked);
    }
    assert_eq!(worst, 8, "in-flight reaches the window and never exceeds it");
    // not cwnd-limited: slow start stops at twice the largest flight (Linux tcp_is_cwnd_limited)
    assert_eq!(w.tx.stats().cwnd_pkts, 16);
    assert!(!w.tx.cc_view().is_cwnd_limited);
    assert_eq!(w.tx.cc_view().max_packets_out, 8);
}

#[test]
fn byte_count_transfer_completes() {
    let (cc, _) = Probe::reno();
    let mut w = Wire::new(TcpConfig::default(), cc, Some(1_000_000), SimDuration::from_millis(20)).with_bottleneck(Rate::from_mbps(100));
    w.run_until(ms(10_000));
    assert!(w.tx.is_done());
    assert_eq!(w.rx.delivered_bytes(), 1_000_000);
    let st = w.tx.stats();
    assert_eq!((st.bytes_acked, st.bytes_sent, st.retransmits), (1_000_000, 1_000_000, 0));
    assert_eq!(st.segments_sent, 691);
    assert_eq!(w.sent.last().unwrap().tx.header.payload, 1_000_000 - 690 * 1448);
    assert_eq!(st.inflight_pkts, 0);
}

#[test]
fn delivery_rate_equals_the_bottleneck_rate() {
    // paced at 12 Mbit/s into a 10 Mbit/s bottleneck
    let (cc, log) = Probe::fixed_rate(200, 1_500_000);
    let mut w = Wire::new(ack_every_segment(), cc, None, SimDuration::from_millis(10)).with_bottleneck(Rate::from_mbps(10));
    w.run_until(ms(2000));
    let payload_rate = 10e6 * 1448.0 / 1500.0;
    let mut valid = 0;
    for h in hooks(&log) {
        if let Hook::CongControl { now, rs, .. } = h {
            if now >= ms(200) && rs.interval_us > 0 {
                let bps = rs.delivered as f64 * 1448.0 * 8e6 / rs.interval_us as f64;
                assert!((bps / payload_rate - 1.0).abs() < 0.01, "sample {bps} bit/s at {now:?}");
                assert!(!rs.is_app_limited);
                valid += 1;
            }
        }
    }
    assert!(valid > 1000, "{valid} valid samples");
    let reported = w.tx.stats().delivery_rate.unwrap().bps() as f64;
    assert!((reported / payload_rate - 1.0).abs() < 0.01);
}

#[test]
fn samples_are_app_limited_once_the_application_runs_dry() {
    let (cc, log) = Probe::fixed_rate(20, 1_000_000);
    let mut w = Wire::new(ack_every_segment(), cc, Some(50 * MSS), SimDuration::from_millis(10));
    w.run_until(ms(5000));
    assert!(w.tx.is_done());
    let t_write = w.now + SimDuration::from_millis(100);
    w.now = t_write;
    w.tx.write(10 * MSS);
    assert!(!w.tx.is_done());
    w.run_until(ms(10_000));
    assert!(w.tx.is_done());
    let samples: Vec<(SimTime, RateSample, u64)> = hooks(&log)
        .into_iter()
        .filter_map(|h| if let Hook::CongControl { now, rs, app_limited } = h { Some((now, rs, app_limited)) } else { None })
        .collect();
    assert!(samples.iter().filter(|(t, ..)| *t < t_write).all(|(_, rs, _)| !rs.is_app_limited));
    let later: Vec<_> = samples.iter().filter(|(t, rs, _)| *t > t_write && rs.delivered > 0).collect();
    assert_eq!(later.len(), 10);
    assert!(later.iter().all(|(_, rs, _)| rs.is_app_limited));
    // the connection was marked app-limited while the last of the first 50 were in flight
    assert!(samples.iter().any(|(t, _, app_limited)| *t < t_write && *app_limited > 0));
}

#[test]
fn ecn_echo_gives_one_cwr_reduction_per_window() {
    let (cc, log) = Probe::reno();
    let cfg = TcpConfig { ecn: EcnMode::Classic, ..ack_every_segment() };
    let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(50));
    for seq in [100, 101, 102, 1000] {
        w.mark_ce(seq);
    }
    w.run_until(ms(5000));
    assert!(w.sent.iter().any(|s| s.tx.header.seq > 1100), "the flow got past the second mark");
    assert_eq!(w.tx.stats().retransmits, 0);
    let cuts = ssthresh_calls(&log);
    assert_eq!(cuts.len(), 2, "three marks in one window, one in a later window: {cuts:?}");
    assert!(cuts.iter().all(|&(cwnd, ssthresh)| ssthresh == cwnd / 2));
    assert_eq!(states_entered(&log).iter().filter(|s| **s == CaState::Cwr).count(), 2);
    let exits = events(&log, CwndEvent::CompleteCwr);
    assert_eq!(exits.len(), 2);
    assert!(exits.iter().all(|&(_, cwnd, ssthresh)| cwnd == ssthresh));
    assert_eq!(w.sent.iter().filter(|s| s.tx.header.cwr).count(), 2);
    assert!(w.sent.iter().all(|s| s.tx.ecn == Ecn::Ect0));
}

/// A 400-segment transfer over 50 ms each way with delayed ACKs (every 2, quickack 16) and
/// CE marks on `marks`; returns the wire once done.
fn marked_transfer(ecn: EcnMode, marks: &[u32]) -> (Wire, HookLog) {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(TcpConfig { ecn, ..TcpConfig::default() }, cc, Some(400 * MSS), SimDuration::from_millis(50));
    for &seq in marks {
        w.mark_ce(seq);
    }
    w.run_until(ms(20_000));
    assert!(w.tx.is_done());
    (w, log)
}

#[test]
fn accurate_ecn_counts_exactly_the_marked_packets_despite_delayed_acks() {
    // Runs of odd and even length, lone marks, one right after quickack ends.
    let marks = [16, 30, 31, 32, 33, 34, 101, 150, 151, 300];
    let (w, log) = marked_transfer(EcnMode::Accurate, &marks);
    assert_eq!(w.tx.cc_view().delivered_ce, marks.len() as u64);
    // Every ACK with ECE newly acknowledges only marked segments, every ACK without none.
    let mut acked = 0;
    for (_, a) in &w.acks {
        for seq in acked..a.ack {
            assert_eq!(marks.contains(&seq), a.ece, "segment {seq} acknowledged by an ACK with ECE = {}", a.ece);
        }
        acked = acked.max(a.ack);
    }
    // The sender still reduces once per window with ECE: five groups of marks, but the run
    // 30–34 is echoed while the reduction for 16 is under way (high_seq 42), so four cuts.
    let cuts = ssthresh_calls(&log);
    assert_eq!(cuts.len(), 4, "{cuts:?}");
    assert_eq!(w.sent.iter().filter(|s| s.tx.header.cwr).count(), cuts.len());
    assert_eq!(w.tx.stats().retransmits, 0);

    // Classic ECN repeats ECE until CWR gets through: more than the marks are counted.
    let (classic, _) = marked_transfer(EcnMode::Classic, &marks);
    assert!(classic.tx.cc_view().delivered_ce > marks.len() as u64);
}

#[test]
fn l4s_mode_marks_ect1_and_gets_the_same_feedback_as_accurate_mode() {
    // CE marks on ECT(1) segments are echoed exactly as on ECT(0) ones: the same ACKs, the
    // same ECE flags, the same reductions.
    let marks = [16, 30, 31, 32, 33, 34, 101, 150, 151, 300];
    let (accurate, _) = marked_transfer(EcnMode::Accurate, &marks);
    let (l4s, _) = marked_transfer(EcnMode::L4s, &marks);
    assert!(l4s.sent.iter().all(|s| s.tx.ecn == Ecn::Ect1));
    assert_eq!(l4s.tx.cc_view().delivered_ce, marks.len() as u64);
    let feedback = |w: &Wire| w.acks.iter().map(|(_, a)| (a.ack, a.ece)).collect::<Vec<_>>();
    assert_eq!(feedback(&l4s), feedback(&accurate));
}

#[test]
fn retransmissions_are_ect_only_in_accurate_and_l4s_modes() {
    for (ecn, expected) in
        [(EcnMode::Classic, Ecn::NotEct), (EcnMode::Accurate, Ecn::Ect0), (EcnMode::L4s, Ecn::Ect1), (EcnMode::Off, Ecn::NotEct)]
    {
        let (cc, _) = Probe::reno();
        let mut w = Wire::new(TcpConfig { ecn, ..ack_every_segment() }, cc, Some(100 * MSS), SimDuration::from_millis(50));
        w.drop_copy(30, 1);
        w.run_until(ms(5000));
        let rexmits = w.retransmissions();
        assert_eq!(rexmits.len(), 1);
        assert_eq!(rexmits[0].tx.ecn, expected, "{ecn:?}");
        let new_data = match ecn {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::L4s => Ecn::Ect1,
            EcnMode::Classic | EcnMode::Accurate => Ecn::Ect0,
        };
        assert!(w.sent.iter().filter(|s| !s.tx.is_retransmit).all(|s| s.tx.ecn == new_data));
    }
}

#[test]
fn slow_start_restarts_after_an_idle_rto() {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(ack_every_segment(), cc, Some(100 * MSS), SimDuration::from_millis(50));
    w.run_until(ms(5000));
    assert!(w.tx.is_done());
    let last_send = w.sent.last().unwrap().at;
    let before = w.tx.stats();
    // idle 200 ms < RTO (300 ms): no restart
    w.now = last_send + SimDuration::from_millis(200);
    w.tx.write(MSS);
    w.run_until(ms(10_000));
    assert!(events(&log, CwndEvent::CwndRestart).is_empty());
    // idle 500 ms > RTO: one halving per full RTO beyond the first (500 − 300 > 0, 200 − 300 < 0)
    let before_cwnd = w.tx.stats().cwnd_pkts;
    assert_eq!(before_cwnd, before.cwnd_pkts, "a lone segment does not grow an app-limited window");
    let last_send = w.sent.last().unwrap().at;
    w.now = last_send + SimDuration::from_millis(500);
    w.tx.write(20 * MSS);
    w.run_until(ms(20_000));
    assert_eq!(events(&log, CwndEvent::CwndRestart).len(), 1);
    let (_, cwnd, ssthresh) = *events(&log, CwndEvent::TxStart).last().unwrap();
    assert_eq!(cwnd, (before_cwnd / 2).max(10));
    // ssthresh = max(ssthresh, ¾·cwnd): still infinite, as no loss happened
    assert_eq!(ssthresh, INFINITE_SSTHRESH);
}

#[test]
fn fq_pacing_spreads_the_window() {
    let run = |pacing| {
        let (cc, _) = Probe::reno();
        // one segment per departure (GSO bursts are tested below)
        let cfg = TcpConfig { pacing, gso: false, ..ack_every_segment() };
        let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(50));
        w.run_until(ms(1000));
        let after_first_rtt: Vec<SimTime> = w.sent.iter().filter(|s| s.at > ms(100)).map(|s| s.at).collect();
        let bursts = after_first_rtt.windows(2).filter(|p| p[0] == p[1]).count();
        (bursts, w.tx.stats())
    };
    let (bursts_off, st_off) = run(PacingMode::Off);
    let (bursts_fq, st_fq) = run(PacingMode::Fq);
    assert!(bursts_off > 100);
    assert_eq!(bursts_fq, 0);
    // the rate is reported either way (Linux computes it even when not paced)
    assert!(st_off.pacing_rate.is_some() && st_fq.pacing_rate.is_some());
}

/// 100 Mbit/s of pacing, 12 500 000 B/s: one 1448 B segment takes 115 840 ns, and Linux
/// `tcp_tso_autosize` gives ⌊(12 500 000 >> 10) / 1448⌋ = ⌊12207 / 1448⌋ = 8 segments per burst
/// (a 20 ms RTT adds no min-RTT allowance: 20000 >> 9 = 39 ≥ 32).
const RATE_100M: u64 = 12_500_000;
const SEG_NS: u64 = 115_840;

/// Send times (ns) of the first `n` segments of a paced transfer at `cwnd` and RATE_100M.
fn first_departures(cwnd: u32, gso: bool, n: usize) -> Vec<u64> {
    let (cc, _) = Probe::fixed_rate(cwnd, RATE_100M);
    let mut w = Wire::new(TcpConfig { gso, ..ack_every_segment() }, cc, None, SimDuration::from_millis(10));
    w.run_until(ms(5));
    w.sent.iter().take(n).map(|s| s.at.0).collect()
}

#[test]
fn gso_bursts_leave_back_to_back_and_the_next_waits_for_the_whole_burst() {
    // cwnd 200: tcp_cwnd_test allows min(200, 100) = 100, so bursts of 8 segments at 0,
    // 8 · 115 840 = 926 720 ns, 1 853 440 ns, ...
    let burst = |k: u64| vec![k * 8 * SEG_NS; 8];
    assert_eq!(first_departures(200, true, 24), [burst(0), burst(1), burst(2)].concat());
    // Without GSO: one segment per 115 840 ns.
    let single: Vec<u64> = (0..24).map(|i| i * SEG_NS).collect();
    assert_eq!(first_departures(200, false, 24), single);
}

#[test]
fn a_burst_is_at_most_half_the_cwnd() {
    // cwnd 4: tcp_cwnd_test's quota is min(4 − in_flight, max(4/2, 1)) = 2 although the rate
    // asks for 8; two bursts of 2, the second 2 · 115 840 ns later, then cwnd is full.
    let gap = 2 * SEG_NS;
    assert_eq!(first_departures(4, true, 5), [0, 0, gap, gap]);
    // cwnd 1: max(1/2, 1) = 1 segment.
    assert_eq!(first_departures(1, true, 2), [0]);
}

#[test]
fn the_receive_window_ends_a_burst_early_and_the_next_waits_for_what_was_sent() {
    // A 3-segment receive window cuts the first burst of 8 to 3 at t = 0. Their ACKs all come
    // back at 20 ms, each opening the window by one segment: the first lets a 1-segment burst
    // go at 20 ms, which holds the next departure to 20 ms + 115 840 ns; the window the other
    // two ACKs opened then leaves as one burst of 2.
    let (cc, _) = Probe::fixed_rate(200, RATE_100M);
    let cfg = TcpConfig { rcv_buf_bytes: 3 * MSS, ..ack_every_segment() };
    let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(10));
    w.run_until(ms(21));
    let at: Vec<u64> = w.sent.iter().map(|s| s.at.0).collect();
    let t = 20_000_000;
    assert_eq!(at, [0, 0, 0, t, t + SEG_NS, t + SEG_NS]);
}

#[test]
fn rfc6298_mode_runs_the_same_transfer() {
    let (cc, _) = Probe::reno();
    let cfg = TcpConfig { rto_mode: crate::RtoMode::Rfc6298, ..ack_every_segment() };
    let mut w = Wire::new(cfg, cc, Some(50 * MSS), SimDuration::from_millis(50));
    w.drop_copy(49, 1);
    w.run_until(ms(10_000));
    assert!(w.tx.is_done());
    // tail loss: RTO = SRTT + 4·RTTVAR with RTTVAR decaying from 50 ms; above the 200 ms floor
    let r = w.retransmissions();
    let last_ack = w.acks.iter().rfind(|(t, _)| *t < r[0].at).unwrap().0;
    let rto = r[0].at - last_ack;
    assert!(rto >= SimDuration::from_millis(200) && rto < SimDuration::from_millis(300), "{rto:?}");
    assert_eq!(w.tx.stats().srtt, Some(SimDuration::from_millis(100)));
}

#[test]
fn delayed_acks_and_receiver_drive_a_lossy_transfer_to_completion() {
    let (cc, _) = Probe::reno();
    let cfg = TcpConfig { delayed_ack: DelayedAck { quickack_segments: 0, ..DelayedAck::default() }, ..TcpConfig::default() };
    let mut w = Wire::new(cfg, cc, Some(2000 * MSS), SimDuration::from_millis(10)).with_bottleneck(Rate::from_mbps(50));
    for seq in (100..2000).step_by(97) {
        w.drop_copy(seq, 1);
    }
    w.drop_copy(1999, 1);
    w.run_until(ms(60_000));
    assert!(w.tx.is_done());
    assert_eq!(w.rx.delivered_bytes(), 2000 * MSS);
    // The last segment carries PSH: its ACK goes out at once, not at the delayed-ACK timer.
    assert!(w.acks.last().is_some_and(|(_, a)| !a.delayed && a.ack == 2000));
}

// Linux tcp_end_cwnd_reduction: even when PRR left cwnd near a shrinking pipe (nothing new
// to send during recovery), leaving Recovery sets cwnd = ssthresh.
#[test]
fn recovery_exit_sets_cwnd_to_ssthresh_when_the_pipe_drained() {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(ack_every_segment(), cc, Some(45 * MSS), SimDuration::from_millis(50));
    w.drop_copy(30, 1);
    w.run_until(ms(5000));
    assert!(w.tx.is_done());
    assert_eq!(retransmitted_seqs(&w), vec![30]);
    assert_eq!(ssthresh_calls(&log), vec![(40, 20)]);
    let exits = events(&log, CwndEvent::CompleteCwr);
    assert_eq!(exits.len(), 1);
    assert_eq!((exits[0].1, exits[0].2), (20, 20));
    assert_eq!(w.tx.stats().cwnd_pkts, 20);
}

/// A BBR flow's first PROBE_RTT, as [`first_probe_rtt`] records it.
struct ProbeRttTrace {
    enter: SimTime,
    exit: SimTime,
    /// Each transmission's time and the app-limited mark the sender stored in it (Linux
    /// `tcp_rate_skb_sent`).
    marks: Vec<(SimTime, bool)>,
    /// Each `cong_control` call's time and rate sample.
    samples: Vec<(SimTime, RateSample)>,
}

/// Runs `cc` from t = 0 until `end`, past its first PROBE_RTT, on a 10 Mbit/s, 40 ms path (ACK
/// every second segment).
fn first_probe_rtt(cc: Box<dyn CongestionControl>, end: SimTime) -> ProbeRttTrace {
    let (cc, log) = Spy::wrap(cc);
    let mut w = Wire::new(TcpConfig::default(), cc, None, SimDuration::from_millis(20)).with_bottleneck(Rate::from_mbps(10));
    let mut marks = Vec::new();
    let mut t = SimTime::ZERO;
    while t < end {
        t += SimDuration::from_millis(1);
        let seen = w.sent.len();
        w.run_until(t);
        marks.extend(w.sent[seen..].iter().map(|s| (s.at, w.tx.sb.get(s.tx.header.seq).tx.is_app_limited)));
    }
    let controls: Vec<_> = hooks(&log)
        .into_iter()
        .filter_map(|h| if let Hook::Control { now, rs, mode } = h { Some((now, rs, mode)) } else { None })
        .collect();
    let enter = controls.iter().find(|c| c.2 == Some("PROBE_RTT")).expect("no PROBE_RTT").0;
    let exit = controls.iter().find(|c| c.0 > enter && c.2 != Some("PROBE_RTT")).expect("PROBE_RTT did not end").0;
    ProbeRttTrace { enter, exit, marks, samples: controls.into_iter().map(|(now, rs, _)| (now, rs)).collect() }
}

// Linux bbr_update_min_rtt (BBRv3: the same code in its PROBE_RTT handling): on every ACK in
// PROBE_RTT BBR sets tp->app_limited = delivered + in-flight, so what it sends there carries
// the app-limited mark and the ACKs of those packets give app-limited samples (tcp_rate_gen),
// which the bandwidth filters do not let lower the estimate.
#[test]
fn bbr_marks_what_it_sends_in_probe_rtt_app_limited() {
    let v1 = tcplab_cc::bbr::Bbr::new(&tcplab_cc::bbr::BbrConfig::default(), tcplab_core::SimRng::stream(1, "cc"));
    let v3 = tcplab_cc::bbr3::Bbr3::new(&tcplab_cc::bbr3::Bbr3Config::default(), tcplab_core::SimRng::stream(1, "cc"));
    // v1's min_rtt expires 10 s after its last refresh, v3's PROBE_RTT comes every 5 s.
    for (cc, end) in [(Box::new(v1) as Box<dyn CongestionControl>, ms(11_000)), (Box::new(v3), ms(6_000))] {
        let name = cc.name();
        let ProbeRttTrace { enter, exit, marks, samples } = first_probe_rtt(cc, end);
        // Nothing before PROBE_RTT is app-limited (the application always has data) ...
        assert!(marks.iter().filter(|(at, _)| *at < enter).all(|(_, marked)| !marked), "{name}");
        // ... and everything sent in it is.
        let sent_in: Vec<bool> = marks.iter().filter(|(at, _)| (enter..exit).contains(at)).map(|m| m.1).collect();
        assert!(sent_in.len() >= 8 && sent_in.iter().all(|m| *m), "{name}: marks of what PROBE_RTT sent: {sent_in:?}");
        // The ACK of each of those packets (its send time is the ACK time less the sample's
        // RTT) gives an app-limited sample.
        let of_probe_rtt: Vec<bool> = samples
            .iter()
            .filter(|(now, rs)| {
                let rtt = SimDuration::from_micros(rs.rtt_us.max(0) as u64);
                rs.rtt_us > 0 && (enter + rtt..exit + rtt).contains(now)
            })
            .map(|(_, rs)| rs.is_app_limited)
            .collect();
        assert!(of_probe_rtt.len() >= 4 && of_probe_rtt.iter().all(|a| *a), "{name}: {of_probe_rtt:?}");
        if name == "bbr" {
            // v1 holds cwnd 4 (bbr_cwnd_min_target) for 200 ms (bbr_probe_rtt_mode_ms) once
            // in-flight is down to 4, i.e. after the last pre-PROBE_RTT packets drain (~one
            // 48 ms RTT), then leaves on the next ACK: 4 packets per 41.2 ms round (40 ms + 1500 B
            // at 10 Mbit/s) over ~258 ms ≈ 20 packets. The app-limited bubble set on the last
            // PROBE_RTT ACK ends once its 4 packets in flight are delivered, one round after the
            // exit, so the round sent after the exit is marked too: at bw that is one BDP,
            // 10 Mbit/s × 41.2 ms / 1500 B = 34 packets. 20 + 34 packets, one ACK per two: 27
            // app-limited samples.
            assert!((exit - enter).as_millis_f64() > 240.0 && (exit - enter).as_millis_f64() < 270.0, "{exit:?} − {enter:?}");
            assert!((18..=22).contains(&sent_in.len()), "{}", sent_in.len());
            let app_limited = samples.iter().filter(|(_, rs)| rs.is_app_limited).count();
            assert!((24..=30).contains(&app_limited), "{app_limited} app-limited samples");
        }
    }
}

fn retransmission_times(w: &Wire) -> Vec<(SimTime, u32)> {
    w.retransmissions().iter().map(|s| (s.at, s.tx.header.seq)).collect()
}

// RFC 8985 §7, Linux tcp_schedule_loss_probe / tcp_send_loss_probe. 30 segments, RTT 100 ms:
// all sent by 100 ms; 27, 28, 29 lost; the last ACK (of 26) comes at 200 ms, SRTT 100 ms, so
// the probe timer is 2·SRTT + TCP_TIMEOUT_MIN = 202 ms (RTO 300 ms). With nothing new to send,
// the probe repeats the last segment (29) at 402 ms; its SACK at 502 ms lets RACK mark 27 and
// 28 lost (sent 402 ms earlier, RACK.rtt 100 ms + window 25 ms): Recovery retransmits 27 (PRR
// allows one), then 28 on the next ACK. No RTO. RFC 6675 alone waits for the RTO at 500 ms.
#[test]
fn a_tail_loss_is_repaired_by_a_loss_probe_at_two_srtt() {
    let run = |recovery| {
        let (cc, _) = Probe::reno();
        let cfg = TcpConfig { recovery, ..ack_every_segment() };
        let mut w = Wire::new(cfg, cc, Some(30 * MSS), SimDuration::from_millis(50));
        for seq in [27, 28, 29] {
            w.drop_copy(seq, 1);
        }
        w.run_until(ms(10_000));
        assert!(w.tx.is_done());
        w
    };
    let w = run(RecoveryMode::RackTlp);
    assert_eq!(retransmission_times(&w), vec![(ms(402), 29), (ms(502), 27), (ms(602), 28)]);
    assert_eq!(w.tx.stats().rto_count, 0);
    let old = run(RecoveryMode::Rfc6675);
    assert_eq!(old.retransmissions()[0].at, ms(500));
    assert_eq!(old.tx.stats().rto_count, 1);
}

// RFC 8985 §6.2, Linux tcp_rack_detect_loss / tcp_rack_reo_timeout. Ten segments sent at 0,
// RTT 100 ms, 8 lost: the SACK of 9 at 100 ms gives RACK.rtt 100 ms and, with one segment
// SACKed and no reordering seen, a window of min_rtt/4 = 25 ms. 8 is lost at 0 + 100 + 25 ms;
// the reordering timer fires after ⌈25 ms⌉ + TCP_TIMEOUT_MIN (2 ms) and the retransmission
// leaves at 127 ms. RFC 6675 (one SACKed segment, below DupThresh) waits for the RTO.
#[test]
fn a_hole_with_fewer_than_dupthresh_sacks_is_lost_after_rtt_plus_the_reordering_window() {
    let run = |recovery| {
        let (cc, log) = Probe::reno();
        let cfg = TcpConfig { recovery, ..ack_every_segment() };
        let mut w = Wire::new(cfg, cc, Some(10 * MSS), SimDuration::from_millis(50));
        w.drop_copy(8, 1);
        w.run_until(ms(10_000));
        assert!(w.tx.is_done());
        (w, log)
    };
    let (w, log) = run(RecoveryMode::RackTlp);
    assert_eq!(retransmission_times(&w), vec![(ms(127), 8)]);
    assert_eq!(states_entered(&log), vec![CaState::Disorder, CaState::Recovery, CaState::Open]);
    assert_eq!(ssthresh_calls(&log), vec![(18, 9)]);
    assert_eq!(w.tx.stats().rto_count, 0);
    let (old, _) = run(RecoveryMode::Rfc6675);
    assert_eq!(old.tx.stats().rto_count, 1);
}

// RACK judges a retransmission by its own send time: 30's retransmission (300 ms) is lost
// too; segments PRR sent after it in the same instant are SACKed at 400 ms, one RACK.rtt
// later, so 30 goes again at 400 ms within the same recovery. RFC 6675 needs the RTO.
#[test]
fn a_lost_retransmission_is_repaired_without_an_rto() {
    let run = |recovery| {
        let (cc, log) = Probe::reno();
        let cfg = TcpConfig { recovery, ..ack_every_segment() };
        let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(50));
        w.drop_copy(30, 1);
        w.drop_copy(30, 2);
        w.run_until(ms(1500));
        (w, log)
    };
    let (w, log) = run(RecoveryMode::RackTlp);
    assert_eq!(retransmission_times(&w), vec![(ms(300), 30), (ms(400), 30)]);
    assert_eq!(w.tx.stats().rto_count, 0);
    assert_eq!(ssthresh_calls(&log), vec![(40, 20)]);
    let (old, _) = run(RecoveryMode::Rfc6675);
    assert_eq!(old.tx.stats().rto_count, 1);
}

// One segment out (29, lost): the probe timer is 2·SRTT + rto_min = 400 ms, capped by the
// RTO (300 ms), so the probe repeats 29 at 500 ms where RFC 6675 times out. Its ACK (30 =
// tlp_high_seq) at 600 ms proves nothing; more data written then is ACKed at 700 ms, above
// tlp_high_seq, which shows the probe repaired a loss: one CWR reduction (Linux
// tcp_process_tlp_ack), then Open again.
#[test]
fn a_probe_that_repaired_a_loss_costs_one_cwr_reduction() {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(ack_every_segment(), cc, Some(30 * MSS), SimDuration::from_millis(50));
    w.drop_copy(29, 1);
    w.run_until(ms(650));
    assert_eq!(retransmission_times(&w), vec![(ms(500), 29)]);
    assert!(ssthresh_calls(&log).is_empty());
    w.tx.write(10 * MSS);
    w.run_until(ms(2000));
    assert!(w.tx.is_done());
    assert_eq!(w.tx.stats().rto_count, 0);
    assert_eq!(states_entered(&log), vec![CaState::Cwr, CaState::Open]);
    let cuts: Vec<SimTime> =
        hooks(&log).iter().filter_map(|h| if let Hook::Ssthresh { now, .. } = h { Some(*now) } else { None }).collect();
    assert_eq!(cuts, vec![ms(700)]);
    let (_, ssthresh) = ssthresh_calls(&log)[0];
    assert_eq!(events(&log, CwndEvent::CompleteCwr), vec![(ms(700), ssthresh, ssthresh)]);
}

/// cwnd and ssthresh (None: infinite) after running until `t`.
fn window_at(w: &mut Wire, t: SimTime) -> (u32, Option<u32>) {
    w.run_until(t);
    let st = w.tx.stats();
    (st.cwnd_pkts, st.ssthresh_pkts)
}

// Reordering, not loss (RFC 2883 §4.2, Linux tcp_check_dsack / tcp_try_undo_dsack). As in
// the first test, 30 (sent at 200 ms) looks lost at 300 ms: retransmitted, ssthresh 40 → 20.
// But the original only took 150 ms longer: the retransmission arrives first (350 ms), the ACK
// at 400 ms ends the recovery at cwnd 20 (its timestamp is the retransmission's: no Eifel
// undo); the original reaches the receiver at 400 ms, a duplicate, and the D-SACK of 30..31
// reaches the sender at 450 ms: the one retransmission was needless, so the reduction is
// undone at once: Reno's undo_cwnd gives back cwnd 40, ssthresh returns to infinite. Without
// undo the receiver sends no D-SACK and cwnd stays 20.
#[test]
fn a_dsack_for_a_reordered_segment_undoes_the_fast_retransmit() {
    let run = |undo| {
        let (cc, log) = Probe::reno();
        let mut w = Wire::new(TcpConfig { undo, ..ack_every_segment() }, cc, None, SimDuration::from_millis(50));
        w.delay_copy(30, 1, SimDuration::from_millis(150));
        let windows = [window_at(&mut w, ms(449)), window_at(&mut w, ms(450))];
        (w, log, windows)
    };
    let (w, log, windows) = run(true);
    assert_eq!(retransmission_times(&w), vec![(ms(300), 30)]);
    assert_eq!(ssthresh_calls(&log), vec![(40, 20)]);
    assert_eq!(states_entered(&log), vec![CaState::Disorder, CaState::Recovery, CaState::Open]);
    let dsack = w.acks.iter().find(|(_, a)| a.sack_len > 0 && a.sack[0].start < a.ack).expect("a D-SACK");
    assert_eq!((dsack.0, dsack.1.sack[0]), (ms(450), SackBlock { start: 30, end: 31 }));
    assert_eq!(windows, [(20, Some(20)), (40, None)]);
    let (_, _, old) = run(false);
    assert_eq!(old, [(20, Some(20)), (20, Some(20))]);
}

// Eifel detection (RFC 3522, Linux tcp_packet_delayed / tcp_try_undo_partial): 30 is only
// 75 ms late, so the original arrives (325 ms) before the retransmission (350 ms). The ACK it
// triggers reaches the sender at 375 ms, a partial ACK (segments sent at 300 ms are still
// out), and echoes 30's original timestamp (200 ms), older than the retransmission (300 ms):
// with no retransmission left out, the reduction is undone at once, before any D-SACK:
// cwnd 40 again, and slow start (ssthresh infinite again) adds one for the segment this ACK
// delivered.
#[test]
fn timestamps_showing_the_original_arrived_undo_the_recovery() {
    let (cc, log) = Probe::reno();
    let mut w = Wire::new(ack_every_segment(), cc, None, SimDuration::from_millis(50));
    w.delay_copy(30, 1, SimDuration::from_millis(75));
    assert_eq!(window_at(&mut w, ms(374)).1, Some(20));
    assert_eq!(window_at(&mut w, ms(375)), (41, None));
    assert_eq!(retransmission_times(&w), vec![(ms(300), 30)]);
    assert_eq!(states_entered(&log), vec![CaState::Disorder, CaState::Recovery, CaState::Open]);
    assert!(events(&log, CwndEvent::CompleteCwr).is_empty(), "undone: no CWR completion");
}

// A delay spike, not a loss (RFC 5682 §3.1, Linux tcp_enter_loss / tcp_process_loss): 10 is
// lost and 11..29 (sent at 100 ms) are 400 ms late. The RTO (300 ms after the last ACK)
// fires at 400 ms: cwnd 1, ssthresh 10, 10 retransmitted. Its ACK at 500 ms advances
// snd_una but echoes the retransmission's timestamp, so F-RTO sends new data (30, 31) instead
// of retransmitting 11. At 600 ms the delayed originals are ACKed: never-retransmitted data
// below high_seq, so the timeout was spurious: cwnd 20 and ssthresh (infinite) come back and
// nothing else is retransmitted. RFC 6675 without TLP keeps the scenario to the RTO. Without
// undo, 11 and 12 go again at 500 ms and ssthresh stays 10.
#[test]
fn frto_undoes_a_spurious_timeout_after_a_delay_spike() {
    let run = |undo| {
        let (cc, log) = Probe::reno();
        let cfg = TcpConfig { undo, recovery: RecoveryMode::Rfc6675, ..ack_every_segment() };
        let mut w = Wire::new(cfg, cc, Some(40 * MSS), SimDuration::from_millis(50));
        w.drop_copy(10, 1);
        for seq in 11..30 {
            w.delay_copy(seq, 1, SimDuration::from_millis(400));
        }
        let before = window_at(&mut w, ms(599));
        let after = window_at(&mut w, ms(600));
        (w, log, before, after)
    };
    let (w, log, before, after) = run(true);
    assert_eq!(retransmission_times(&w), vec![(ms(400), 10)]);
    let at_500: Vec<u32> = w.sent.iter().filter(|s| s.at == ms(500)).map(|s| s.tx.header.seq).collect();
    assert_eq!(at_500, vec![30, 31]);
    assert_eq!(before, (2, Some(10)));
    assert_eq!(after.1, None);
    assert!(after.0 >= 20, "cwnd {}", after.0);
    assert_eq!(states_entered(&log), vec![CaState::Loss, CaState::Open]);
    assert_eq!(w.tx.stats().rto_count, 1);
    let (old, _, _, old_after) = run(false);
    assert_eq!(&retransmission_times(&old)[..3], &[(ms(400), 10), (ms(500), 11), (ms(500), 12)]);
    assert_eq!(old_after.1, Some(10));
}

// Linux tcp_process_tlp_ack with FLAG_DSACK_TLP, driven by hand-made ACKs. Ten segments at 0,
// all but 9 ACKed at 100 ms; 9's probe leaves when the timer fires (one segment out: 2·SRTT
// + rto_min capped by the RTO, 300 ms), then one more segment (10) is written and sent. The
// ACK of 11 carries a D-SACK of 9 (both copies arrived): the probe repaired nothing, so the
// episode ends without the CWR reduction an ACK above tlp_high_seq would otherwise cost.
#[test]
fn a_dsack_of_the_probe_ends_the_episode_without_a_reduction() {
    let (cc, log) = Probe::reno();
    let mut tx = TcpSender::new(ack_every_segment(), cc, Some(10 * MSS));
    tx.start(SimTime::ZERO);
    while tx.poll_transmit(SimTime::ZERO).is_some() {}
    tx.on_ack(ms(100), &ack_hdr(9, &[]));
    let probe_at = tx.next_timer().unwrap();
    assert_eq!(probe_at, ms(400));
    tx.on_timer(probe_at);
    let probe = tx.poll_transmit(probe_at).unwrap();
    assert_eq!((probe.header.seq, probe.is_retransmit), (9, true));
    tx.write(MSS);
    assert_eq!(tx.poll_transmit(probe_at).map(|t| t.header.seq), Some(10));
    assert_eq!(tx.tlp_high_seq, Some(10));
    tx.on_ack(ms(500), &ack_hdr(11, &[(9, 10)]));
    assert_eq!(tx.tlp_high_seq, None);
    assert!(ssthresh_calls(&log).is_empty());
    assert!(!states_entered(&log).contains(&CaState::Cwr));
}

// Linux schedules the loss probe at the end of each write (tcp_write_xmit ends with
// tcp_schedule_loss_probe), from the oldest segment's RTO (tcp_rto_delta_us); a write that
// TCP Small Queues stops before the sender runs dry ends with `end_write`. Ten segments at 0,
// RTT 100 ms: the first ACK (100 ms; SRTT 100, RTTVAR 50, RTO 300 ms) arms the probe for
// 2·SRTT + TCP_TIMEOUT_MIN = 202 ms later, at 302 ms. One new segment leaves and the write
// stops: its end re-arms the probe for min(202 ms, RTO left of segment 1 = 300 − 100 ms),
// at 300 ms.
#[test]
fn a_write_stopped_early_schedules_its_loss_probe_when_it_ends() {
    let (cc, _) = Probe::reno();
    let mut w = Wire::new(ack_every_segment(), cc, Some(30 * MSS), SimDuration::from_millis(50));
    let first: Vec<Transmit> = std::iter::from_fn(|| w.tx.poll_transmit(SimTime::ZERO)).collect();
    assert_eq!(first.len(), 10);
    let ack = w.rx.on_data(ms(50), &first[0].header, first[0].ecn).into_iter().next().expect("ACK of every segment");
    w.tx.on_ack(ms(100), &ack);
    assert_eq!(w.tx.rto_deadline(), Some(ms(302)));
    assert!(w.tx.poll_transmit(ms(100)).is_some_and(|t| t.header.seq == 10));
    assert_eq!(w.tx.rto_deadline(), Some(ms(302)), "the write has not ended");
    w.tx.end_write(ms(100));
    assert_eq!(w.tx.rto_deadline(), Some(ms(300)));
}

/// Sizes of the groups of new segments that left at one instant, from 100 ms to 300 ms, of an
/// unpaced Reno flow in congestion avoidance from cwnd 200 on a 100 Mbit/s, 20 ms path: 33
/// packets over its BDP of 167 keep a standing queue, so an ACK, freeing one segment, comes
/// every 120 µs (1500 B at 100 Mbit/s) without a gap.
fn unpaced_bursts(tso_defer: bool) -> Vec<usize> {
    let (cc, _) = Probe::reno();
    let cfg = TcpConfig { initial_cwnd: 200, initial_ssthresh: 200, tso_defer, ..ack_every_segment() };
    let mut w = Wire::new(cfg, cc, None, SimDuration::from_millis(10)).with_bottleneck(Rate::from_mbps(100));
    w.run_until(ms(300));
    let mut groups: Vec<(SimTime, usize)> = Vec::new();
    for s in w.sent.iter().filter(|s| !s.tx.is_retransmit && s.at >= ms(100)) {
        match groups.last_mut() {
            Some((at, n)) if *at == s.at => *n += 1,
            _ => groups.push((s.at, 1)),
        }
    }
    groups.into_iter().map(|(_, n)| n).collect()
}

#[test]
fn tso_deferral_turns_an_ack_clocked_flow_into_full_bursts() {
    // Without deferral each ACK lets one segment go, two when cwnd grows.
    assert!(unpaced_bursts(false).iter().all(|&n| n <= 2));
    // With it, a burst waits for the ACKs that let a full one go, but no more than 1 ms after
    // the last departure. The goal is 10 segments: SRTT ≈ 23.7 ms (it lags the RTT, which
    // grows with cwnd) and cwnd ≈ 205 give the fq rate 1.2 · 205 · 1448 B / 23.7 ms ≈
    // 15.0 MB/s, and tcp_tso_autosize ⌊(15.0 MB/s >> 10) / 1448⌋ = 10. The ACKs freeing 10
    // take 10 · 120 µs; the 9th comes 1.08 ms after the last burst and sends the 9 freed, or
    // 10 when Reno grew cwnd on one of them (once per window of ≈ 23 bursts).
    let bursts = unpaced_bursts(true);
    assert!(bursts.iter().all(|&n| n == 9 || n == 10), "{bursts:?}");
    let tens = bursts.iter().filter(|&&n| n == 10).count();
    assert!((1..=bursts.len() / 20).contains(&tens), "{tens} bursts of 10 in {}", bursts.len());
}
