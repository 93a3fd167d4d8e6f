//! Tests of BBRv3 (google/bbr v3 tcp_bbr.c) against docs/validation.md (BBRv3 properties 1–3) and
//! google/bbr v3 tcp_bbr.c, driving the hooks directly with hand-made rate samples or through the
//! testkit's fixed-rate path. Expected numbers are Linux's integer ones (bw in packets/µs << 24,
//! gains in 1/256).

use super::*;
use crate::bbr::test_helpers::{at_ms, step_into_probe_rtt, MS};
use crate::testkit::Path;
use tcplab_core::SimDuration;

fn bbr3(config: &Bbr3Config) -> Bbr3 {
    Bbr3::new(config, SimRng::stream(1, "bbr3"))
}

/// A connection 1 s in, 1000 packets delivered, SRTT = min RTT = 100 ms, initialised.
fn setup(config: &Bbr3Config) -> (Bbr3, CcCx) {
    let mut cx = CcCx::new(1500);
    cx.now = at_ms(1_000);
    cx.delivered_time = cx.now;
    cx.srtt_us = 100_000;
    cx.min_rtt_us = 100_000;
    cx.delivered = 1_000;
    let mut b = bbr3(config);
    b.init(&mut cx);
    (b, cx)
}

/// A rate sample of one ACK delivering one packet: `delivered` packets over `interval_us`
/// (bw ⌈delivered·2²⁴/interval⌉), RTT 100 ms, sent at the current cwnd. `new_round`: the
/// packet was sent after the current (loss) round began, so this ACK ends it.
fn sample(cx: &CcCx, new_round: bool, delivered: i64, interval_us: i64) -> RateSample {
    RateSample {
        prior_delivered: if new_round { cx.delivered } else { 0 },
        delivered,
        interval_us,
        acked_sacked: 1,
        rtt_us: 100_000,
        tx_in_flight: cx.cwnd,
        prior_in_flight: cx.in_flight,
        ..RateSample::invalid()
    }
}

/// Delivers the packet of `rs` and runs `cong_control`.
fn deliver(b: &mut Bbr3, cx: &mut CcCx, rs: RateSample) {
    cx.delivered += 1;
    cx.lost += u64::from(rs.losses);
    b.cong_control(cx, &rs);
}

/// Delivers one packet with `sample(cx, new_round, delivered, interval_us)`.
fn ack(b: &mut Bbr3, cx: &mut CcCx, new_round: bool, delivered: i64, interval_us: i64) {
    let rs = sample(cx, new_round, delivered, interval_us);
    deliver(b, cx, rs);
}

/// 1 packet of 1500 B per ms (12 Mbit/s), 40 ms propagation: min RTT 41 ms, bw 1000
/// packets/s = 16777.216 in Linux units, BDP 41 packets; `buffer` packets of queue.
fn path(seed: u64, buffer: Option<u32>) -> Path<Bbr3> {
    let b = Bbr3::new(&Bbr3Config::default(), SimRng::stream(seed, "bbr3"));
    Path::new(Box::new(b), MS, SimDuration::from_millis(40), buffer)
}

// docs/validation.md BBRv3 1 (gains)
#[test]
fn startup_paces_at_710_256_and_grows_cwnd_to_twice_the_bdp() {
    let config = Bbr3Config { extra_acked_gain: 0.0, ..Bbr3Config::default() };
    let (mut b, mut cx) = setup(&config);
    assert_eq!((b.mode(), b.pacing_gain, b.cwnd_gain), (Some("STARTUP"), 710, 512));
    // Initial rate from cwnd 10 over SRTT 100 ms: ⌊10·2²⁴/100000⌋ = 1677;
    // ⌊1677·1500·710/256⌋ = 6976582; ⌊6976582·990000/2²⁴⌋ = 411678 B/s
    // (real-valued 710/256·10·1500/0.1·0.99 = 411855 B/s).
    assert_eq!(cx.pacing_rate, 411_678);
    assert_eq!(cx.ssthresh, INFINITE_SSTHRESH);
    // 100 packets per 100 ms: bw ⌈100·2²⁴/100000⌉ = 16778, pacing ⌊16778·1500·710/256⌋ =
    // 69799101, ·990000/2²⁴ → 4118747 B/s.
    cx.cwnd = 199;
    ack(&mut b, &mut cx, false, 100, 100_000);
    assert_eq!(cx.pacing_rate, 4_118_747);
    // cwnd target ⌈16778·100000·2/2²⁴⌉ = ⌈200.003⌉ = 201 (at 710/256 it would be 278):
    // cwnd grows by acked below it and stops there.
    assert_eq!(cx.cwnd, 200);
    ack(&mut b, &mut cx, false, 100, 100_000);
    assert_eq!(cx.cwnd, 201);
    ack(&mut b, &mut cx, false, 100, 100_000);
    assert_eq!(cx.cwnd, 201);
    assert_eq!(b.mode(), Some("STARTUP"));
}

/// STARTUP in `state` with 200 packets in flight: `lossy_acks` ACKs each marking a packet
/// lost (delivering 100 packets per 100 ms, bw 16778, BDP ⌈100.0013⌉ = 101; one of them
/// `max_delivered` per 100·`max_delivered`/100 ms, same bw), then the ACK ending the loss
/// round, which reports `lost` packets lost out of tx_in_flight 200.
fn startup_loss_round(lossy_acks: u32, lost: u64, state: CaState, max_delivered: i64) -> (Bbr3, CcCx) {
    let (mut b, mut cx) = setup(&Bbr3Config::default());
    (cx.ca_state, cx.in_flight, cx.cwnd) = (state, 200, 200);
    for i in 0..lossy_acks {
        let delivered = if i == 1 { max_delivered } else { 100 };
        let rs = RateSample { losses: 1, ..sample(&cx, false, delivered, delivered * 1_000) };
        deliver(&mut b, &mut cx, rs);
    }
    let rs = RateSample { lost, tx_in_flight: 200, ..sample(&cx, true, 100, 100_000) };
    deliver(&mut b, &mut cx, rs);
    (b, cx)
}

// docs/validation.md BBRv3 1 (loss exit)
#[test]
fn six_lossy_acks_in_a_recovery_round_above_2_percent_loss_end_startup() {
    // 4 lost of 200 in flight: 4 > ⌊200·5/256⌋ = 3 (2 %). inflight_hi = max(BDP + budget =
    // max(101, 3, 4) = 101, inflight_latest = 100).
    let (b, cx) = startup_loss_round(6, 4, CaState::Recovery, 100);
    assert!(b.full_bw_reached);
    assert_eq!(b.inflight_hi, 101);
    assert_eq!((b.mode(), cx.ssthresh), (Some("DRAIN"), 101));
    // A round that delivered 150 packets at the same rate: inflight_hi = inflight_latest.
    let (b, _) = startup_loss_round(6, 4, CaState::Recovery, 150);
    assert_eq!(b.inflight_hi, 150);
    // Not with 5 lossy ACKs, nor with 3 of 200 lost (≤ 2 %), nor outside Recovery.
    for (acks, lost, state) in [(5, 4, CaState::Recovery), (6, 3, CaState::Recovery), (6, 4, CaState::Open)] {
        let (b, _) = startup_loss_round(acks, lost, state, 100);
        assert!(!b.full_bw_reached, "{acks} {lost} {state:?}");
        assert_eq!((b.inflight_hi, b.mode()), (INF, Some("STARTUP")));
        assert_eq!(b.loss_events_in_round, 0, "the count restarts with each loss round");
    }
}

// docs/validation.md BBRv3 2
#[test]
fn probe_rtt_every_5_s_caps_cwnd_at_half_the_bdp_for_200_ms_and_a_round() {
    let mut p = path(3, None);
    p.run_until(at_ms(1_500));
    assert!(p.sender.cc.full_bw_reached);
    // From now on every RTT is 2 ms above the 41 ms minimum: no sample refreshes it.
    p.base_rtt = SimDuration::from_millis(42);
    p.run_until(at_ms(1_700));
    let stamp = p.sender.cc.probe_rtt_min_stamp;
    let cwnd_before = step_into_probe_rtt(&mut p, at_ms(8_000));
    // Entered on the first ACK more than 5 s after the last refresh (ACKs are ≤ 1 ms apart).
    let entered = p.now();
    let jiffies = entered.as_jiffies();
    assert!(jiffies > stamp + 5_000 && jiffies <= stamp + 5_002, "{jiffies} vs {stamp}");
    assert_eq!(p.sender.cc.prior_cwnd, cwnd_before);
    // The 10 s min_rtt has not expired: it stays 41 ms. bw = ⌈41·2²⁴/41000⌉ = 16778, so the
    // cap is max(4, ⌈16778·41000·0.5/2²⁴⌉ = ⌈20.50⌉ = 21).
    let b = &p.sender.cc;
    assert_eq!((b.min_rtt_us, b.bw(), b.probe_rtt_cwnd()), (41_000, 16_778, 21));
    let mut at_cap = None; // when in-flight first fell to the cap
    while p.sender.cc.mode == Mode::ProbeRtt {
        assert!(p.sender.cx.cwnd <= 21, "{}", p.sender.cx.cwnd);
        assert!(p.now() < entered + SimDuration::from_millis(500));
        if at_cap.is_none() && p.sender.cc.probe_rtt_done_stamp.is_some() {
            assert!(p.sender.cx.in_flight <= 21);
            at_cap = Some(p.now());
        }
        p.step();
    }
    // Held 200 ms from when in-flight reached the cap (and at least one 43 ms round).
    let at_cap = at_cap.expect("in-flight reached the cap");
    assert_eq!(p.sender.cc.probe_rtt_done_stamp, Some(at_cap.as_jiffies() + 200));
    assert!((p.now() - at_cap).as_micros() > 200_000);
    // Back to PROBE_BW, cruising, with cwnd restored (up to the 2·BDP + budget target) and
    // the next PROBE_RTT 5 s from now.
    let (b, cx) = (&p.sender.cc, &p.sender.cx);
    assert_eq!(b.mode(), Some("PROBE_BW_CRUISE"));
    assert!(cx.cwnd >= b.prior_cwnd.min(82), "{} vs {}", cx.cwnd, b.prior_cwnd);
    assert_eq!(b.probe_rtt_min_stamp, p.now().as_jiffies());
}

/// PROBE_BW with the pipe full at 16777 (1000 packets/s), cwnd 100, no probe due.
fn probe_bw(phase: Phase) -> (Bbr3, CcCx) {
    let (mut b, mut cx) = setup(&Bbr3Config::default());
    b.full_bw_reached = true;
    b.mode = Mode::ProbeBw(phase);
    b.bw_hi = [16_777, 16_777];
    (b.cycle_mstamp, b.probe_wait_us) = (cx.now.as_micros(), 10_000_000);
    cx.cwnd = 100;
    (b, cx)
}

/// One loss round: an ACK marking a loss, ACKs delivering `delivered[i]` packets per 100 ms
/// (the last one ends the round).
fn lossy_round(b: &mut Bbr3, cx: &mut CcCx, delivered: &[i64]) {
    let rs = RateSample { losses: 1, ..sample(cx, false, delivered[0], 100_000) };
    deliver(b, cx, rs);
    for (i, &d) in delivered.iter().enumerate().skip(1) {
        ack(b, cx, i == delivered.len() - 1, d, 100_000);
    }
}

// docs/validation.md BBRv3 3 (lower bounds)
#[test]
fn a_lossy_round_in_cruise_cuts_bw_lo_and_inflight_lo_to_0_7_but_not_below_the_round() {
    let (mut b, mut cx) = probe_bw(Phase::Cruise);
    // Round 1: samples 40, 50, 30 packets per 100 ms → bw 6711, 8389, 5034; bw_latest =
    // 8389, inflight_latest = 50. The bounds start at max_bw = 16777 and cwnd, which grew
    // by 1 per ACK to 102: bw_lo = max(8389, ⌊16777·180/256⌋ = 11796) = 11796, inflight_lo =
    // max(50, ⌊102·180/256⌋ = 71) = 71. (Linux β: 1 − ⌊256·0.3⌋/256 = 180/256.)
    lossy_round(&mut b, &mut cx, &[40, 50, 30]);
    assert_eq!((b.bw_lo, b.inflight_lo), (11_796, 71));
    assert_eq!(b.bw(), 11_796);
    assert_eq!(cx.cwnd, 71, "CRUISE caps cwnd at inflight_lo");
    // Round 2: samples 20, 60, 25 → bw_latest = 10067 > ⌊11796·180/256⌋ = 8294, so
    // bw_lo = 10067; inflight_latest = 60 > ⌊71·180/256⌋ = 49, so inflight_lo = 60.
    lossy_round(&mut b, &mut cx, &[20, 60, 25]);
    assert_eq!((b.bw_lo, b.inflight_lo), (10_067, 60));
    assert_eq!(b.mode(), Some("PROBE_BW_CRUISE"));
    // A round without loss leaves them.
    for i in 0..3 {
        ack(&mut b, &mut cx, i == 2, 10, 100_000);
    }
    assert_eq!((b.bw_lo, b.inflight_lo), (10_067, 60));
}

// docs/validation.md BBRv3 3 (upward probing)
#[test]
fn probe_up_without_loss_raises_inflight_hi_by_1_2_4_8_per_round() {
    // REFILL with inflight_hi 100 and cwnd 100, cwnd-limited; the cwnd target (2.25·BDP of
    // 100 packets) is far above, so cwnd follows inflight_hi. The REFILL round's end starts
    // PROBE_UP with a slope of 1 packet per cwnd = 100 packets acked.
    let (mut b, mut cx) = probe_bw(Phase::Refill);
    b.inflight_hi = 100;
    cx.is_cwnd_limited = true;
    ack(&mut b, &mut cx, true, 100, 100_000);
    assert_eq!((b.mode(), b.bw_probe_up_cnt, b.inflight_hi, cx.cwnd), (Some("PROBE_BW_UP"), 100, 100, 100));
    // Each round, one flight of cwnd packets is acked; at the round's end the slope doubles
    // with cnt = cwnd/2^k: 100 acks at cnt 100 → +1; 101 at cnt 100/2 = 50 → +2 (1 left);
    // 103 at cnt 103/4 = 25 → +4 (4 left); 107 at cnt 107/8 = 13 → +8.
    let mut growth = vec![];
    for _ in 0..4 {
        let (hi, n) = (b.inflight_hi, cx.cwnd);
        for i in 0..n {
            ack(&mut b, &mut cx, i == n - 1, 100, 100_000);
            assert_eq!(cx.cwnd, b.inflight_hi);
        }
        growth.push(b.inflight_hi - hi);
    }
    assert_eq!(growth, [1, 2, 4, 8]);
    assert_eq!(b.mode(), Some("PROBE_BW_UP"));
}

#[test]
fn a_lost_probe_sets_inflight_hi_where_the_loss_rate_crossed_2_percent() {
    let b = bbr3(&Bbr3Config::default());
    // 2 lost with 101 in flight: 2 > ⌊101·5/256⌋ = 1. Before the packet: 100 in flight, 1
    // lost; the budget ⌈100·5/256⌉ = 2 allows 1 more loss, ⌊(1 << 8)/251⌋ = 1 packet on.
    let rs = RateSample { tx_in_flight: 101, lost: 2, ..RateSample::invalid() };
    assert!(b.is_inflight_too_high(&rs));
    assert_eq!(b.inflight_hi_from_lost_packet(&rs), 101);
    // 5 lost: the previous 4 already exceeded the budget, so the level is the 100 before it.
    let rs = RateSample { tx_in_flight: 101, lost: 5, ..RateSample::invalid() };
    assert_eq!(b.inflight_hi_from_lost_packet(&rs), 100);
    assert!(!b.is_inflight_too_high(&RateSample { tx_in_flight: 101, lost: 1, ..RateSample::invalid() }));

    // In PROBE_UP, such a loss ends the probe: inflight_hi = max(level, 0.7·target).
    let (mut b, mut cx) = probe_bw(Phase::Refill);
    b.inflight_hi = 100;
    (cx.is_cwnd_limited, cx.in_flight) = (true, 100);
    ack(&mut b, &mut cx, true, 100, 100_000);
    assert!(b.bw_probe_samples);
    let rs = RateSample { losses: 1, lost: 2, tx_in_flight: 101, ..sample(&cx, false, 100, 100_000) };
    deliver(&mut b, &mut cx, rs);
    assert_eq!((b.mode(), b.inflight_hi), (Some("PROBE_BW_DOWN"), 101));
    assert!(b.prev_probe_too_high && !b.bw_probe_samples);
}

// docs/validation.md behavioural run: convergence and phase cycling
#[test]
fn converges_to_the_bottleneck_rate_with_a_small_queue_and_cycles_the_probe_bw_phases() {
    for buffer in [None, Some(20)] {
        let mut p = path(5, buffer);
        p.run_until(at_ms(2_000));
        let (delivered0, t0) = (p.sender.cx.delivered, p.now());
        let (mut rtt_sum, mut rtt_n) = (0u64, 0u64);
        let mut labels = vec![p.sender.cc.mode().unwrap()];
        while p.now() < at_ms(14_000) {
            p.step();
            let rtt = p.sender.last_rs.rtt_us;
            if rtt > 0 {
                (rtt_sum, rtt_n) = (rtt_sum + rtt as u64, rtt_n + 1);
            }
            let label = p.sender.cc.mode().unwrap();
            if *labels.last().unwrap() != label {
                labels.push(label);
            }
        }
        let secs = (p.now() - t0).as_secs_f64();
        let rate = (p.sender.cx.delivered - delivered0) as f64 / secs;
        let queue_ms = rtt_sum as f64 / rtt_n as f64 / 1_000.0 - 41.0;
        // Measured: ≈ 973 packets/s (PROBE_RTT and DOWN cost ~3 %) and a mean queue of 4.1 ms
        // (unlimited buffer) or 2.4 ms (20 packets, inflight_hi ≈ 63) against a 41-packet BDP.
        assert!(rate > 950.0, "{buffer:?}: {rate} packets/s");
        assert!(queue_ms < 5.0, "{buffer:?}: mean queueing delay {queue_ms} ms");
        if buffer.is_some() {
            assert!((41..=61 + 10).contains(&p.sender.cc.inflight_hi), "{}", p.sender.cc.inflight_hi);
        }
        // Every transition is one of the state machine's, and probing recurs every 2–3 s.
        for w in labels.windows(2) {
            let ok = matches!(
                (w[0], w[1]),
                ("PROBE_BW_DOWN", "PROBE_BW_CRUISE" | "PROBE_BW_REFILL")
                    | ("PROBE_BW_CRUISE", "PROBE_BW_REFILL")
                    | ("PROBE_BW_REFILL", "PROBE_BW_UP")
                    | ("PROBE_BW_UP", "PROBE_BW_DOWN")
                    | ("PROBE_RTT", "PROBE_BW_CRUISE")
                    | (_, "PROBE_RTT")
            );
            assert!(ok, "{buffer:?}: {} → {}", w[0], w[1]);
        }
        let ups = labels.iter().filter(|l| **l == "PROBE_BW_UP").count();
        // Probes come every 2–3 s (probe_wait) or after min(63, target_inflight) rounds
        // (Reno coexistence: ~42 rounds of 43 ms, fewer once losses cut cwnd).
        assert!((4..=12).contains(&ups), "{buffer:?}: {ups} probes in 12 s: {labels:?}");
        for phase in ["PROBE_BW_DOWN", "PROBE_BW_CRUISE", "PROBE_BW_REFILL", "PROBE_RTT"] {
            assert!(labels.contains(&phase), "{buffer:?}: no {phase}: {labels:?}");
        }
    }
}

#[test]
fn draft_profile_uses_the_draft_gains_and_ends_drain_after_3_rounds() {
    let code = bbr3(&Bbr3Config::default());
    assert_eq!((code.p.drain_gain, code.p.down_gain, code.p.extra_acked_win_rtts), (88, 232, 5));
    let draft_config = Bbr3Config { profile: Bbr3Profile::Draft, ..Bbr3Config::default() };
    let draft = bbr3(&draft_config);
    // 0.5·256 = 128, 0.90·256 = 230.4 → 230.
    assert_eq!((draft.p.drain_gain, draft.p.down_gain, draft.p.extra_acked_win_rtts), (128, 230, 10));
    let own = bbr3(&Bbr3Config { drain_gain: 0.4, ..draft_config.clone() });
    assert_eq!(own.p.drain_gain, 102);
    // DRAIN with far more in flight than the BDP: the code waits, the draft leaves once
    // round_count > drain_start_round + 3. Each ACK ends a round; the first enters DRAIN
    // (round 1), so the draft leaves on the 5th.
    for (config, left_on) in [(Bbr3Config::default(), None), (draft_config, Some(5))] {
        let (mut b, mut cx) = setup(&config);
        b.full_bw_reached = true;
        b.bw_hi = [16_777, 16_777];
        cx.in_flight = 1_000;
        let mut left = None;
        for round in 1..=6 {
            ack(&mut b, &mut cx, true, 100, 100_000);
            if left.is_none() && b.mode() != Some("DRAIN") {
                left = Some(round);
                assert_eq!(b.mode(), Some("PROBE_BW_DOWN"));
            }
        }
        assert_eq!(left, left_on);
        assert_eq!(b.pacing_gain, if left.is_some() { 230 } else { 88 });
    }
}

#[test]
fn draft_undo_returns_to_startup_the_code_only_restores_the_bounds() {
    for (profile, mode) in [(Bbr3Profile::Code, "DRAIN"), (Bbr3Profile::Draft, "STARTUP")] {
        let (mut b, mut cx) = setup(&Bbr3Config { profile, ..Bbr3Config::default() });
        cx.cwnd = 50;
        b.ssthresh(&mut cx);
        (b.mode, b.full_bw_reached, b.inflight_hi, b.full_bw_cnt) = (Mode::Drain, true, 60, 2);
        cx.cwnd = 30;
        assert_eq!(b.undo_cwnd(&mut cx), 50);
        assert_eq!((b.mode(), b.inflight_hi, b.full_bw_cnt), (Some(mode), INF, 0));
    }
}

#[test]
fn rto_keeps_the_pre_rto_cwnd_as_inflight_lo_and_restores_cwnd_after_loss() {
    let (mut b, mut cx) = probe_bw(Phase::Cruise);
    cx.prior_cwnd = 100;
    b.ssthresh(&mut cx);
    b.set_state(&mut cx, CaState::Loss);
    cx.ca_state = CaState::Loss;
    cx.cwnd = 1;
    assert_eq!((b.prior_cwnd, b.inflight_lo, b.full_bw), (100, 100, 0));
    ack(&mut b, &mut cx, false, 1, 100_000);
    b.set_state(&mut cx, CaState::Open);
    assert_eq!(cx.cwnd, 100);
}

#[test]
fn config_becomes_linux_integers_and_ranges_are_checked() {
    let b = bbr3(&Bbr3Config::default());
    let p = &b.p;
    assert_eq!((p.startup_pacing_gain, p.startup_cwnd_gain, p.cwnd_gain, p.up_gain), (710, 512, 512, 320));
    // 2 % → ⌊5.12⌋ = 5; 30 % reduction → ⌊76.8⌋ = 76; 15 % → ⌊38.4⌋ = 38.
    assert_eq!((p.loss_thresh, p.beta, p.headroom, p.probe_rtt_cwnd_gain), (5, 76, 38, 128));
    assert_eq!((p.probe_rtt_win_ms, p.probe_rtt_ms, p.min_rtt_win_ms, p.full_loss_cnt), (5_000, 200, 10_000, 6));
    assert_eq!((p.bw_probe_max_rounds, p.bw_probe_base_us, p.bw_probe_rand_us), (63, 2_000_000, 1_000_000));
    assert_eq!(Bbr3Config::default().validate(), Ok(()));
    let bad = Bbr3Config { beta: 1.5, ..Bbr3Config::default() };
    assert_eq!(bad.validate(), Err("beta = 1.5 is out of range; allowed: 0 < beta ≤ 1".into()));
    let bad = Bbr3Config { probe_rtt_win_ms: 20_000, ..Bbr3Config::default() };
    assert!(bad.validate().unwrap_err().starts_with("probe_rtt_win_ms = 20000 is out of range"));
    let bad = Bbr3Config { drain_gain: 20.0, ..Bbr3Config::default() };
    assert!(bad.validate().unwrap_err().contains("or 0 for the profile's value"));
    let parsed: Bbr3Config = serde_json::from_str(r#"{"profile": "draft", "loss_thresh": 0.05}"#).unwrap();
    assert_eq!((parsed.profile, parsed.loss_thresh), (Bbr3Profile::Draft, 0.05));
    assert!(serde_json::from_str::<Bbr3Config>(r#"{"profile": "ietf"}"#).is_err());
    assert_eq!(b.name(), "bbr3");
    assert!(b.has_cong_control() && !b.needs_accurate_ecn());
}

#[test]
fn send_quantum_is_v3_tso_segs_goal_with_its_min_rtt_allowance() {
    let mut cx = CcCx::new(1448);
    cx.gso = true;
    let mut b = bbr3(&Bbr3Config::default());
    let mut goal = |rate, min_rtt_us| {
        cx.pacing_rate = rate;
        b.tso_goal.update(&cx, Version::V3, min_rtt_us);
        b.tso_goal.segs()
    };
    // 10 Mbit/s, 40 ms: 1220 B per 1024 µs, no allowance (40000 >> 9 = 78) → at least 2.
    assert_eq!(goal(1_250_000, 40_000), 2);
    // v3 has no 1-segment floor at low rates.
    assert_eq!(goal(125_000, 40_000), 2);
    // 100 Mbit/s → ⌊12207/1448⌋ = 8.
    assert_eq!(goal(12_500_000, 40_000), 8);
    // 10 Mbit/s, 1 ms: 1220 + 65215 >> 1 = 33 827 B → 23.
    assert_eq!(goal(1_250_000, 1_000), 23);
}

#[test]
fn quantization_budget_is_at_least_three_gso_goals() {
    let mut cx = CcCx::new(1448);
    cx.gso = true;
    cx.pacing_rate = 12_500_000;
    let mut b = bbr3(&Bbr3Config::default());
    b.min_rtt_us = 40_000;
    b.tso_goal.update(&cx, Version::V3, b.min_rtt_us);
    // goal 8: max(10, 3·8, 4) = 24; +2 in PROBE_UP.
    assert_eq!(b.quantization_budget(10), 24);
    assert_eq!(b.quantization_budget(30), 30);
    b.mode = Mode::ProbeBw(Phase::Up);
    assert_eq!(b.quantization_budget(10), 26);
    // Without GSO: max(3, 3·1, 4) = 4.
    assert_eq!(bbr3(&Bbr3Config::default()).quantization_budget(3), 4);
}
