//! Tests of BBR v1 (Linux tcp_bbr.c) against docs/validation.md (BBR v1 properties 1–3) and Linux
//! tcp_bbr.c, driving the hooks directly or through the testkit's fixed-rate path. The expected
//! numbers are Linux's integer ones; ns-3's float gains would shift them by a packet or so.

use super::test_helpers::{at_ms, step_into_probe_rtt, step_until, MS};
use super::*;
use crate::testkit::Path;
use tcplab_core::SimDuration;

impl Bbr {
    /// Most packets acked beyond the expected in the last 5–10 rounds.
    fn extra_acked(&self) -> u32 {
        self.ack_aggr.extra_acked()
    }
}

fn bbr(seed: u64) -> Bbr {
    Bbr::new(&BbrConfig::default(), SimRng::stream(seed, "bbr"))
}

/// 1 packet of 1500 B per ms (12 Mbit/s), 40 ms propagation, unlimited buffer: min RTT
/// 41 ms, bw = ⌊2²⁴/1000⌋ = 16777 in Linux units, BDP ⌈16777·41000/2²⁴⌉ = ⌈40.9995⌉ = 41.
fn path(seed: u64) -> Path<Bbr> {
    Path::new(Box::new(bbr(seed)), MS, SimDuration::from_millis(40), None)
}

// docs/validation.md BBR v1 1
#[test]
fn initial_pacing_rate_is_high_gain_times_initial_window_over_srtt() {
    let mut cx = CcCx::new(1500);
    cx.srtt_us = 100_000;
    let mut b = bbr(1);
    b.init(&mut cx);
    // bw = ⌊10·2²⁴/100000⌋ = 1677; ⌊1677·1500·739/256⌋ = 7261541; ·990000 >> 24 = 428493 B/s.
    // Real-valued: 739/256 · 10 · 1500 B / 0.1 s · 0.99 = 428677.7 B/s (−0.04 %).
    assert_eq!(cx.pacing_rate, 428_493);
    assert!((cx.pacing_rate as f64 / 428_677.7 - 1.0).abs() < 0.005);
    assert!(cx.paced);
    assert_eq!(cx.ssthresh, INFINITE_SSTHRESH);
    assert_eq!(b.mode(), Some("STARTUP"));

    // Without an RTT, 1 ms is assumed (100× the rate); the first ACK after SRTT is known
    // re-initialises it, although STARTUP otherwise never lowers the pacing rate.
    let mut cx = CcCx::new(1500);
    let mut b = bbr(1);
    b.init(&mut cx);
    assert_eq!(cx.pacing_rate, 42_867_732);
    cx.srtt_us = 100_000;
    b.cong_control(&mut cx, &RateSample::invalid());
    assert_eq!(cx.pacing_rate, 428_493);
}

// docs/validation.md BBR v1 2 (STARTUP and DRAIN)
#[test]
fn startup_ends_after_3_rounds_without_25_percent_growth_and_drain_empties_the_queue() {
    let mut p = path(1);
    // Shadow of the full-pipe rule, fed from what BBR reports after each ACK.
    let (mut full_bw, mut stalled, mut rounds) = (0u64, 0u32, 0u32);
    while p.sender.cc.mode == Mode::Startup {
        assert!(p.now() < at_ms(2_000));
        p.step();
        let b = &p.sender.cc;
        if b.round_start && !p.sender.last_rs.is_app_limited && stalled < 3 {
            rounds += 1;
            // Linux threshold ⌊full_bw·320/256⌋ = ⌊1.25·full_bw⌋.
            if b.max_bw() >= full_bw * 5 / 4 {
                (full_bw, stalled) = (b.max_bw(), 0);
            } else {
                stalled += 1;
            }
        }
        assert_eq!(b.full_bw_reached, stalled >= 3, "round {rounds}");
        assert_eq!(b.mode == Mode::Startup, stalled < 3);
    }
    // The estimate is the bottleneck rate: 1000 packets/s = ⌊2²⁴/1000⌋.
    assert_eq!(p.sender.cc.max_bw(), 16_777);
    assert!(rounds <= 12, "{rounds} rounds");

    // DRAIN paces at 88/256 of bw (·0.99) until in-flight is down to BDP + budget =
    // 41 + 3 → 44 (even). Departures wait ≤ 1/(0.34·1000) s ≈ 3 ms, during which ≤ 3
    // packets are delivered, so staying means in_flight > 44 and leaving in_flight ≤ 47.
    assert_eq!(p.sender.cc.mode, Mode::Drain);
    assert_eq!(p.sender.cx.ssthresh, 44);
    while p.sender.cc.mode == Mode::Drain {
        assert_eq!(p.sender.cc.pacing_gain, 88);
        assert_eq!(p.sender.cx.pacing_rate, rate_bytes_per_sec(1500, 16_777, 88)); // 510462 B/s
        assert!(p.sender.cx.in_flight > 44);
        p.step();
    }
    assert!(p.sender.cx.in_flight <= 47, "{}", p.sender.cx.in_flight);
    assert_eq!(p.sender.cc.mode, Mode::ProbeBw);
    assert_ne!(p.sender.cc.cycle_idx, 1, "PROBE_BW must not start in the 3/4 phase");
}

// docs/validation.md BBR v1 2 (randomised start phase)
#[test]
fn probe_bw_starts_in_any_phase_but_the_draining_one() {
    let mut b = bbr(7);
    let cx = CcCx::new(1500);
    let mut seen = [0u32; CYCLE_LEN];
    for _ in 0..7000 {
        b.reset_probe_bw_mode(&cx);
        seen[b.cycle_idx] += 1;
    }
    // cycle_idx = 7 − rand{0..6}, then +1: phases 0 and 2–7, each with probability 1/7.
    assert_eq!(seen[1], 0);
    for (phase, &n) in seen.iter().enumerate().filter(|(i, _)| *i != 1) {
        assert!((850..1150).contains(&n), "phase {phase}: {n}");
    }
}

// docs/validation.md BBR v1 2 (gain cycle) and 3 (steady-state cwnd)
#[test]
fn probe_bw_cycles_phases_of_at_least_min_rtt_and_holds_cwnd_at_its_target() {
    let mut p = path(2);
    step_until(&mut p, at_ms(2_000), |p| p.sender.cc.mode == Mode::ProbeBw);
    let mut phase_start = p.sender.cx.delivered_time;
    let mut phase = p.sender.cc.cycle_idx;
    let mut probes = 0;
    while p.now() < at_ms(4_000) {
        let prev_cwnd = p.sender.cx.cwnd;
        p.step();
        let (b, cx) = (&p.sender.cc, &p.sender.cx);
        assert_eq!(b.mode, Mode::ProbeBw);
        if b.cycle_idx != phase {
            assert_eq!(b.cycle_idx, (phase + 1) % CYCLE_LEN);
            let lasted_us = (cx.delivered_time - phase_start).as_micros();
            // The 5/4 phase and the 1.0 phases last more than min_rtt; 3/4 may end early.
            if phase != 1 {
                assert!(lasted_us > u64::from(b.min_rtt_us), "phase {phase}: {lasted_us} µs");
            }
            probes += usize::from(phase == 0);
            (phase, phase_start) = (b.cycle_idx, cx.delivered_time);
        }
        // cwnd = min(cwnd + acked, target) with target = ⌈2·bw·min_rtt⌉ + extra_acked + 3,
        // rounded up to even, + 2 in the 5/4 phase. In steady state bw = 16777 and min_rtt =
        // 41000: ⌈81.9989⌉ = 82; extra_acked is 2 on this smooth ACK stream (an epoch's first
        // ACK counts whole, the expected count lags by ⌊0.99998·k⌋): 82 + 2 + 3 → 88, 90 at 5/4.
        let bdp2 = (2 * u128::from(b.max_bw()) * u128::from(b.min_rtt_us)).div_ceil(1 << 24) as u32;
        let target = ((bdp2 + b.extra_acked() + 3 + 1) & !1) + if b.cycle_idx == 0 { 2 } else { 0 };
        assert_eq!(cx.cwnd, (prev_cwnd + 1).min(target));
    }
    // STARTUP's large extra_acked (ACKs beyond a still-low bw estimate) has aged out.
    let b = &p.sender.cc;
    assert_eq!((b.max_bw(), b.min_rtt_us, b.extra_acked()), (16_777, 41_000, 2));
    assert!(probes >= 4, "{probes} probing phases in 2 s");
    assert!(matches!(p.sender.cx.cwnd, 88 | 90), "{}", p.sender.cx.cwnd);
}

// docs/validation.md BBR v1 3
#[test]
fn probe_rtt_after_10_s_without_a_lower_rtt_holds_cwnd_4_then_restores_it() {
    let mut p = path(3);
    p.run_until(at_ms(1_000));
    assert_eq!(p.sender.cc.mode, Mode::ProbeBw);
    // From now on every RTT is 2 ms above the 41 ms minimum: no sample refreshes it.
    p.base_rtt = SimDuration::from_millis(42);
    p.run_until(at_ms(1_200));
    let stamp = p.sender.cc.min_rtt_stamp;
    assert_eq!(p.sender.cc.min_rtt_us, 41_000);
    let cwnd_before = step_into_probe_rtt(&mut p, at_ms(12_000));
    // Entered on the first ACK after min_rtt_stamp + 10 s (ACKs are 1 ms apart).
    let entered = p.now();
    let jiffies = entered.as_jiffies();
    assert!(jiffies > stamp + 10_000 && jiffies <= stamp + 10_002, "{jiffies} vs {stamp}");
    assert_eq!(p.sender.cc.prior_cwnd, cwnd_before);
    // The expired filter took the current RTT.
    assert!(p.sender.cc.min_rtt_us >= 43_000);
    let mut at_min = None; // when in-flight first fell to 4 packets
    while p.sender.cc.mode == Mode::ProbeRtt {
        assert!(p.sender.cx.cwnd <= CWND_MIN_TARGET);
        assert!(p.now() < entered + SimDuration::from_millis(500));
        if at_min.is_none() && p.sender.cc.probe_rtt_done_stamp.is_some() {
            assert!(p.sender.cx.in_flight <= CWND_MIN_TARGET);
            at_min = Some(p.now());
        }
        p.step();
    }
    // Held 200 ms from when in-flight reached 4 packets (≥ one 43 ms round, too).
    let at_min = at_min.expect("in-flight reached 4");
    assert_eq!(p.sender.cc.probe_rtt_done_stamp, Some(at_min.as_jiffies() + 200));
    assert!((p.now() - at_min).as_micros() > 200_000);
    let left = p.now();
    assert_eq!(p.sender.cc.mode, Mode::ProbeBw);
    assert!(p.sender.cx.cwnd >= cwnd_before, "{} < {cwnd_before}", p.sender.cx.cwnd);
    assert_eq!(p.sender.cc.min_rtt_us, 43_000);
    assert_eq!(p.sender.cc.min_rtt_stamp, left.as_jiffies());
}

#[test]
fn first_recovery_round_conserves_packets_and_recovery_exit_restores_cwnd() {
    // A 10-packet buffer: STARTUP overflows it.
    let mut p = Path::new(Box::new(bbr(4)), MS, SimDuration::from_millis(40), Some(10));
    let mut cwnd_before = 0;
    step_until(&mut p, at_ms(3_000), |p| {
        if p.sender.cx.ca_state != CaState::Recovery {
            cwnd_before = p.sender.cx.cwnd;
        }
        p.sender.cx.ca_state == CaState::Recovery
    });
    let cx = &p.sender.cx;
    // ssthresh() saved the cwnd; the first Recovery ACK cuts to in_flight + acked.
    assert_eq!(p.sender.cc.prior_cwnd, cwnd_before);
    assert!(p.sender.cc.packet_conservation);
    assert_eq!(cx.cwnd, cx.in_flight + p.sender.last_rs.acked_sacked);
    while p.sender.cx.ca_state == CaState::Recovery {
        let conserving = p.sender.cc.packet_conservation;
        let (prev, in_flight_before) = (p.sender.cx.cwnd, p.sender.cx.in_flight);
        p.step();
        let (b, cx, rs) = (&p.sender.cc, &p.sender.cx, &p.sender.last_rs);
        if conserving && b.packet_conservation && cx.ca_state == CaState::Recovery {
            let after_losses = prev.saturating_sub(rs.losses).max(1);
            assert_eq!(cx.cwnd, after_losses.max(cx.in_flight + rs.acked_sacked), "{in_flight_before}");
        }
    }
    let (b, cx) = (&p.sender.cc, &p.sender.cx);
    assert!(!b.packet_conservation);
    assert!(cx.cwnd >= b.prior_cwnd.min(b.target_cwnd(b.bw())), "{} vs {}", cx.cwnd, b.prior_cwnd);
}

/// Drives the long-term sampler with one round per 50 ms in PROBE_BW: `delivered` packets
/// and `lost` losses per round, a loss reported at each round start.
fn policed_rounds(b: &mut Bbr, cx: &mut CcCx, rounds: u32, delivered: u64, lost: u64) {
    for _ in 0..rounds {
        cx.now += SimDuration::from_millis(50);
        cx.delivered_time = cx.now;
        cx.delivered += delivered;
        cx.lost += lost;
        b.round_start = true;
        b.lt_bw_sampling(cx, &RateSample { losses: lost as u32, ..RateSample::invalid() });
    }
}

#[test]
fn two_lossy_intervals_at_a_consistent_rate_switch_to_the_policed_rate_for_48_rounds() {
    let mut cx = CcCx::new(1500);
    let mut b = bbr(5);
    b.init(&mut cx);
    b.mode = Mode::ProbeBw;
    // 25 delivered and 8 lost per 50 ms round: 500 packets/s, 8/25 = 32 % ≥ 50/256.
    // Round 1 starts the interval at the first loss; round 4 of it ends it: 75 delivered
    // in 150 ms → ⌊75·2²⁴/150000⌋ = 8388. The next 4 rounds give 100 in 200 ms → 8388 again.
    policed_rounds(&mut b, &mut cx, 4, 25, 8);
    assert_eq!((b.lt.bw, b.lt.use_bw), (8388, false));
    policed_rounds(&mut b, &mut cx, 3, 25, 8);
    assert!(!b.lt.use_bw);
    policed_rounds(&mut b, &mut cx, 1, 25, 8);
    assert_eq!((b.lt.bw, b.lt.use_bw, b.pacing_gain), (8388, true, BBR_UNIT));
    assert_eq!(b.bw(), 8388);
    b.update_gains();
    assert_eq!(b.pacing_gain, BBR_UNIT, "no gain cycling while policed");
    // After 48 PROBE_BW rounds the estimate is dropped and gain cycling restarts.
    policed_rounds(&mut b, &mut cx, 47, 25, 0);
    assert!(b.lt.use_bw);
    policed_rounds(&mut b, &mut cx, 1, 25, 0);
    assert!(!b.lt.use_bw && b.lt.bw == 0 && b.mode == Mode::ProbeBw);
}

/// A fresh BBR in PROBE_BW for the long-term sampler tests.
fn probe_bw_bbr(seed: u64) -> (Bbr, CcCx) {
    let mut cx = CcCx::new(1500);
    let mut b = bbr(seed);
    b.init(&mut cx);
    b.mode = Mode::ProbeBw;
    (b, cx)
}

#[test]
fn light_loss_or_inconsistent_rates_do_not_trigger_the_policer_model() {
    // 4 lost per 25 delivered: 16 % < 50/256 = 19.5 %; intervals never end, and reset
    // after 16 rounds.
    let (mut b, mut cx) = probe_bw_bbr(6);
    policed_rounds(&mut b, &mut cx, 40, 25, 4);
    assert_eq!((b.lt.bw, b.lt.use_bw), (0, false));
    // 500 then 1000 packets/s differ by more than 1/8: the second only replaces the first.
    let (mut b, mut cx) = probe_bw_bbr(6);
    policed_rounds(&mut b, &mut cx, 4, 25, 8);
    assert_eq!(b.lt.bw, 8388);
    policed_rounds(&mut b, &mut cx, 4, 50, 16);
    assert_eq!((b.lt.bw, b.lt.use_bw), (16_777, false));
    // An app-limited sample abandons the interval and the estimate.
    b.lt_bw_sampling(&cx, &RateSample { is_app_limited: true, ..RateSample::invalid() });
    assert_eq!((b.lt.bw, b.lt.use_bw), (0, false));
}

#[test]
fn rto_saves_cwnd_restarts_full_pipe_detection_and_recovery_restores() {
    let mut p = path(8);
    p.run_until(at_ms(1_000));
    let cwnd = p.sender.cx.cwnd;
    p.sender.rto(p.now());
    assert_eq!((p.sender.cx.cwnd, p.sender.cc.prior_cwnd, p.sender.cc.full_bw), (1, cwnd, 0));
    assert_eq!(p.sender.cc.prev_ca_state, CaState::Loss);
    // The fake has no retransmissions: after the RTO everything outstanding is gone, and
    // the first ACKs of new data end the Loss state; cwnd then returns to the saved value.
    step_until(&mut p, at_ms(3_000), |p| p.sender.cx.ca_state == CaState::Open);
    assert!(p.sender.cx.cwnd >= cwnd.min(p.sender.cc.target_cwnd(p.sender.cc.bw())));
}

#[test]
fn idle_restart_in_probe_bw_paces_at_bw_and_defers_probe_rtt_until_data_is_acked() {
    let mut p = path(9);
    p.run_until(at_ms(1_000));
    let cx = &mut p.sender.cx;
    cx.app_limited = cx.delivered + u64::from(cx.in_flight);
    p.sender.cc.cwnd_event(&mut p.sender.cx, CwndEvent::TxStart);
    assert!(p.sender.cc.idle_restart);
    assert_eq!(p.sender.cx.pacing_rate, rate_bytes_per_sec(1500, p.sender.cc.bw(), BBR_UNIT));
    // An expired min_rtt filter does not start PROBE_RTT during the idle restart ...
    p.sender.cc.p.min_rtt_win_ms = 100;
    p.sender.cc.min_rtt_stamp = 0;
    p.sender.cc.cong_control(&mut p.sender.cx, &RateSample::invalid());
    assert!(p.sender.cc.idle_restart && p.sender.cc.mode == Mode::ProbeBw);
    // ... nor on the ACK whose delivery ends the restart, but on the next one.
    p.step();
    assert!(!p.sender.cc.idle_restart && p.sender.cc.mode == Mode::ProbeBw);
    p.sender.cc.min_rtt_stamp = 0;
    p.step();
    assert_eq!(p.sender.cc.mode, Mode::ProbeRtt);
}

#[test]
fn config_gains_become_linux_integers() {
    let b = bbr(1);
    assert_eq!((b.p.high_gain, b.p.drain_gain, b.p.cwnd_gain, b.p.extra_acked_gain), (739, 88, 512, 256));
    assert_eq!((b.p.min_rtt_win_ms, b.p.probe_rtt_ms, b.p.bw_win_rounds), (10_000, 200, 10));
    let c = BbrConfig { high_gain: 2.89, drain_gain: 1.0 / 2.89, ..BbrConfig::default() };
    let b = Bbr::new(&c, SimRng::stream(1, "bbr"));
    assert_eq!((b.p.high_gain, b.p.drain_gain), (740, 89));
}

/// BBR with GSO on, MSS 1448, paced at `rate` bytes/s, its send quantum following that rate.
fn gso_bbr(mss: u32, rate: u64) -> (Bbr, CcCx) {
    let mut cx = CcCx::new(mss);
    cx.gso = true;
    cx.pacing_rate = rate;
    let mut b = bbr(1);
    b.tso_goal.update(&cx, Version::V1, b.min_rtt_us);
    (b, cx)
}

#[test]
fn send_quantum_is_linux_bbr_tso_segs_goal() {
    let goal = |rate| gso_bbr(1448, rate).0.tso_goal.segs();
    // bbr_min_tso_segs: 1 segment below 1.2 Mbit/s = 150 000 B/s, else at least 2.
    assert_eq!(goal(125_000), 1);
    assert_eq!(goal(149_999), 1);
    assert_eq!(goal(150_000), 2);
    // 10 Mbit/s: 1 250 000 >> 10 = 1220 B, less than one MSS → 2.
    assert_eq!(goal(1_250_000), 2);
    // 100 Mbit/s: 12 500 000 >> 10 = 12 207 B → ⌊12207/1448⌋ = 8.
    assert_eq!(goal(12_500_000), 8);
    // 1 Gbit/s: 122 070 B, capped at 64 KB less headers (65 215 B) → 45.
    assert_eq!(goal(125_000_000), 45);
    // At most 127 segments (small MSS): ⌊65215/100⌋ = 652 → 127.
    assert_eq!(gso_bbr(100, 125_000_000).0.tso_goal.segs(), 127);
    // The sender's burst uses the same floor.
    let (b, cx) = gso_bbr(1448, 149_999);
    assert_eq!(b.min_tso_segs(&cx), 1);
    // Unlike tcp_tso_autosize, v1 adds nothing for a short min RTT (1 ms would give 23).
    let (mut b, cx) = gso_bbr(1448, 1_250_000);
    b.min_rtt_us = 1_000;
    b.tso_goal.update(&cx, Version::V1, b.min_rtt_us);
    assert_eq!(b.tso_goal.segs(), 2);
    // Without GSO the quantum is one segment at any rate.
    let (mut b, mut cx) = gso_bbr(1448, 125_000_000);
    cx.gso = false;
    b.tso_goal.update(&cx, Version::V1, b.min_rtt_us);
    assert_eq!(b.tso_goal.segs(), 1);
}

#[test]
fn send_quantum_follows_the_pacing_rate_bbr_sets() {
    let mut cx = CcCx::new(1448);
    cx.gso = true;
    cx.srtt_us = 100_000;
    let mut b = bbr(1);
    b.init(&mut cx);
    // 739/256 · 10 · 1448 B / 0.1 s · 0.99 ≈ 414 kB/s: 404 B per 1024 µs → the minimum 2.
    assert_eq!(b.tso_goal.segs(), 2);
    // bw of 100 Mbit/s in 1448 B packets, ⌊12.5e6/1448 · 2²⁴/10⁶⌋ = 144 827: paced at
    // 12 375 000 B/s → 12 084 B per 1024 µs → 8 segments.
    b.full_bw_reached = true;
    b.set_pacing_rate(&mut cx, 144_827, BBR_UNIT);
    assert_eq!(cx.pacing_rate >> 10, 12_084);
    assert_eq!(b.tso_goal.segs(), 8);
}

#[test]
fn quantization_budget_and_in_flight_at_edt_count_gso_goals() {
    // 10 Mbit/s: goal 2. Budget: 41 + 3·2 = 47, rounded up to even → 48; +2 in the 5/4 phase.
    let (mut b, mut cx) = gso_bbr(1448, 1_250_000);
    assert_eq!(b.quantization_budget(41), 48);
    (b.mode, b.cycle_idx) = (Mode::ProbeBw, 0);
    assert_eq!(b.quantization_budget(41), 50);
    b.cycle_idx = 2;
    assert_eq!(b.quantization_budget(41), 48);
    // Probing (gain 5/4), the next departure adds one goal: 50 + 2, nothing to wait for.
    cx.next_send_time = cx.now;
    b.pacing_gain = BBR_UNIT * 5 / 4;
    assert_eq!(b.packets_in_net_at_edt(&cx, 50), 52);
    b.pacing_gain = BBR_UNIT;
    assert_eq!(b.packets_in_net_at_edt(&cx, 50), 50);
    // 100 Mbit/s: goal 8 → 41 + 24 = 65 → 66.
    let (b, _) = gso_bbr(1448, 12_500_000);
    assert_eq!(b.quantization_budget(41), 66);
    // Without GSO: 41 + 3 = 44.
    assert_eq!(bbr(1).quantization_budget(41), 44);
}
