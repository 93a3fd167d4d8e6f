//! Unit tests of ns-3 TcpBbr with hand-fed rate samples: 1000-byte segments, initial cwnd
//! 10 segments, SRTT = last RTT = min RTT = 100 ms at the first CA_OPEN, 8 Mbit/s samples
//! (BDP = 8e6 · 0.1 / 8 = 100 000 bytes).

use super::*;
use crate::ns3::{CaEvent, CongState, Ns3CongestionOps, RateConnection, RateSample, Tcb};
use tcplab_core::{SimDuration, SimRng, SimTime};

const MSS: u32 = 1000;
const BW: u64 = 8_000_000;

fn at_ms(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

struct H {
    b: Ns3Bbr,
    tcb: Tcb,
    delivered: u64,
}

fn start_with(version: Ns3Version, seed: u64) -> H {
    let mut b = Ns3Bbr::new(&ns3_defaults(), SimRng::stream(seed, "bbr"), version);
    let mut tcb = Tcb::new(MSS, 10, u32::MAX);
    tcb.srtt = SimDuration::from_millis(100);
    tcb.last_rtt = SimDuration::from_millis(100);
    tcb.min_rtt = SimDuration::from_millis(100);
    b.congestion_state_set(&mut tcb, CongState::Open);
    H { b, tcb, delivered: 0 }
}

fn start() -> H {
    start_with(Ns3Version::V3_44, 1)
}

impl H {
    /// One ACK at `ms` delivering one segment with a `bps` sample. `round`: the sample's
    /// packet was sent after the last round end (prior_delivered = everything delivered
    /// before), else it is an old one (prior_delivered 0).
    fn ack_with(&mut self, ms: u64, bps: u64, round: bool, edit: impl FnOnce(&mut RateSample)) {
        let prior = self.delivered;
        self.delivered += u64::from(MSS);
        self.tcb.now = at_ms(ms);
        self.tcb.last_acked_sacked_bytes = MSS;
        let rc = RateConnection { delivered: self.delivered, ..Default::default() };
        let mut rs = RateSample {
            delivery_rate_bps: bps,
            interval: SimDuration::from_millis(100),
            delivered: i64::from(MSS),
            prior_delivered: if round { prior } else { 0 },
            prior_time: self.tcb.now,
            prior_in_flight: self.tcb.bytes_in_flight,
            acked_sacked: MSS,
            ..Default::default()
        };
        edit(&mut rs);
        self.b.cong_control(&mut self.tcb, &rc, &rs);
    }

    fn ack(&mut self, ms: u64, bps: u64) {
        self.ack_with(ms, bps, true, |_| {});
    }

    fn mode(&self) -> &'static str {
        self.b.mode().unwrap()
    }

    /// STARTUP → pipe full at the 4th round at 8 Mbit/s (in-flight held above the BDP so
    /// that DRAIN lasts) → PROBE_BW once in-flight is down to the BDP budget. Ends at 500 ms.
    fn drive_to_probe_bw(&mut self) {
        self.tcb.bytes_in_flight = 200_000;
        for ms in [100, 200, 300, 400] {
            self.ack(ms, BW);
        }
        assert_eq!(self.mode(), "DRAIN");
        self.tcb.bytes_in_flight = 103_000;
        self.ack(500, BW);
        assert_eq!(self.mode(), "PROBE_BW");
    }
}

#[test]
fn init_turns_pacing_on_at_high_gain_times_cwnd_over_min_rtt() {
    let h = start();
    assert!(h.tcb.pacing);
    // nominal = 10 000 B · 8 / 0.1 s = 800 000 bit/s; × 2.89 = 2 312 000 bit/s.
    assert_eq!(h.tcb.pacing_rate, 2_312_000);
    assert_eq!(h.b.max_bw_filter.best(), 800_000);
    assert_eq!(h.b.min_rtt, SimDuration::from_millis(100)); // from SRTT
    assert_eq!(h.tcb.ssthresh, u32::MAX);
    assert_eq!(h.mode(), "STARTUP");
}

#[test]
fn startup_paces_at_high_gain_less_the_margin_and_grows_cwnd_toward_high_gain_bdp() {
    let mut h = start();
    h.ack(100, BW);
    // The 8 Mbit/s sample replaces the initial 800 kbit/s (the filter's zero value).
    assert_eq!(h.b.max_bw_filter.best(), BW);
    // 2.89 · 8e6 = 23 120 000, × 0.99 = 22 888 800.
    assert_eq!(h.tcb.pacing_rate, 22_888_800);
    // Target 2.89 · 100 000 + 3 · 1000 = 292 000 (truncated from the double); cwnd 10 000 is
    // below it: + 1000 acked.
    assert_eq!(h.b.target_cwnd, 292_000);
    assert_eq!(h.tcb.cwnd, 11_000);
}

#[test]
fn pipe_is_full_after_three_rounds_without_25_percent_growth() {
    let mut h = start();
    h.tcb.bytes_in_flight = 200_000;
    h.ack(100, BW); // round 1: full_bw 0 → 8e6, count 0
    h.ack(200, BW); // count 1
    h.ack(300, 10_000_000); // exactly 1.25 × 8e6: still growing, full_bw = 10e6, count 0
    h.ack(400, 10_000_000); // count 1
    h.ack(500, 12_000_000); // 1.2 × 10e6 < 1.25: count 2
    assert_eq!(h.b.full_bandwidth_count, 2);
    assert_eq!(h.mode(), "STARTUP");
    // A non-round ACK does not count.
    h.ack_with(550, 12_000_000, false, |_| {});
    assert_eq!(h.mode(), "STARTUP");
    h.ack(600, 12_000_000); // count 3: full → DRAIN
    assert!(h.b.is_pipe_filled);
    assert_eq!(h.mode(), "DRAIN");
    // ssthresh = InFlight(1) = 12e6 · 0.1 / 8 + 3000 = 153 000.
    assert_eq!(h.tcb.ssthresh, 153_000);
    // Pacing at 12e6 / 2.89 · 0.99 = 4 110 726.6 → 4 110 726, lowered now that the pipe is full.
    assert_eq!(h.tcb.pacing_rate, 4_110_726);
}

#[test]
fn drain_ends_once_in_flight_is_down_to_the_bdp_budget() {
    let mut h = start();
    h.tcb.bytes_in_flight = 200_000;
    for ms in [100, 200, 300, 400] {
        h.ack(ms, BW);
    }
    assert_eq!(h.mode(), "DRAIN");
    assert_eq!(h.tcb.ssthresh, 103_000); // 100 000 + 3 · 1000
    h.tcb.bytes_in_flight = 103_001;
    h.ack(500, BW);
    assert_eq!(h.mode(), "DRAIN");
    h.tcb.bytes_in_flight = 103_000;
    h.ack(600, BW);
    assert_eq!(h.mode(), "PROBE_BW");
    assert_eq!(h.b.cwnd_gain, 2.0);
}

#[test]
fn probe_bw_starts_in_one_of_six_phases_never_the_drain_phase_or_the_one_after() {
    let mut seen = [0u32; 8];
    for seed in 0..600 {
        let mut h = start_with(Ns3Version::V3_44, seed);
        h.b.enter_probe_bw(at_ms(1));
        seen[h.b.cycle_index] += 1;
        assert_eq!(h.b.pacing_gain, PACING_GAIN_CYCLE[h.b.cycle_index]);
    }
    // 7 − ⌊U[0,6)⌋ ∈ 2..=7, advanced once: 3..=7 or 0, each about 100 times in 600.
    assert_eq!((seen[1], seen[2]), (0, 0));
    for i in [0, 3, 4, 5, 6, 7] {
        assert!((60..=140).contains(&seen[i]), "phase {i}: {seen:?}");
    }
}

#[test]
fn gain_cycle_phases_end_as_ns3_tests_them() {
    let mut h = start();
    h.drive_to_probe_bw();
    // Put the cycle in the 5/4 phase, starting at 600 ms.
    h.b.cycle_index = GAIN_CYCLE_LENGTH - 1;
    h.b.advance_cycle_phase(at_ms(600));
    assert_eq!((h.b.cycle_index, h.b.pacing_gain), (0, 1.25));
    // 5/4 phase: longer than min RTT (100 ms) and in-flight ≥ InFlight(1.25) =
    // 1.25 · 100 000 + 3000 + 2000 = 130 000, or a loss.
    h.tcb.bytes_in_flight = 130_000;
    h.ack(700, BW); // exactly 100 ms: not longer
    assert_eq!(h.b.cycle_index, 0);
    h.tcb.bytes_in_flight = 129_999;
    h.ack(701, BW);
    assert_eq!(h.b.cycle_index, 0);
    h.tcb.bytes_in_flight = 130_000;
    h.ack(702, BW);
    assert_eq!((h.b.cycle_index, h.b.pacing_gain), (1, 0.75));
    // 3/4 phase: ends at once when in-flight ≤ InFlight(1) = 103 000.
    h.tcb.bytes_in_flight = 103_001;
    h.ack(703, BW);
    assert_eq!(h.b.cycle_index, 1);
    h.tcb.bytes_in_flight = 103_000;
    h.ack(704, BW);
    assert_eq!((h.b.cycle_index, h.b.pacing_gain), (2, 1.0));
    // Gain 1: after more than min RTT whatever the in-flight.
    h.ack(804, BW);
    assert_eq!(h.b.cycle_index, 2);
    h.ack(805, BW);
    assert_eq!(h.b.cycle_index, 3);
}

#[test]
fn a_loss_ends_the_probing_phase_once_it_lasted_min_rtt() {
    let mut h = start();
    h.drive_to_probe_bw();
    h.b.cycle_index = GAIN_CYCLE_LENGTH - 1;
    h.b.advance_cycle_phase(at_ms(600));
    h.tcb.bytes_in_flight = 50_000;
    h.ack_with(701, BW, true, |rs| rs.bytes_loss = 1000);
    assert_eq!(h.b.cycle_index, 1);
}

#[test]
fn probe_rtt_follows_an_expired_min_rtt_and_holds_cwnd_at_4_segments() {
    let mut h = start();
    h.drive_to_probe_bw(); // min RTT 100 ms, stamped at 500 ms
    h.tcb.cwnd = 50_000;
    h.tcb.bytes_in_flight = 20_000;
    h.tcb.last_rtt = SimDuration::from_millis(120);
    h.ack(10_500, BW); // 500 ms + 10 s: not yet expired (needs later than that)
    assert_eq!(h.mode(), "PROBE_BW");
    h.tcb.cwnd = 50_000;
    h.ack(10_501, BW);
    assert_eq!(h.mode(), "PROBE_RTT");
    // The expired min RTT takes the larger sample; cwnd is saved, then capped at 4 · 1000.
    assert_eq!(h.b.min_rtt, SimDuration::from_millis(120));
    assert_eq!(h.b.prior_cwnd, 50_000);
    assert_eq!(h.tcb.cwnd, 4_000);
    assert_eq!(h.b.probe_rtt_done_stamp, SimTime::ZERO); // in-flight 20 000 > 4000
    h.tcb.bytes_in_flight = 4_000;
    h.ack(10_550, BW); // done at 10 550 + 200 ms, after a round
    assert_eq!(h.b.probe_rtt_done_stamp, at_ms(10_750));
    assert_eq!(h.tcb.cwnd, 4_000);
    h.ack(10_650, BW); // a round started, but the 200 ms have not passed
    assert_eq!(h.mode(), "PROBE_RTT");
    h.ack(10_750, BW); // not later than the stamp
    assert_eq!(h.mode(), "PROBE_RTT");
    h.ack(10_751, BW);
    assert_eq!(h.mode(), "PROBE_BW");
    // Restored to 50 000, then + 1000 acked (the target, 2 · 120 000 + 3000 at least, is
    // far above).
    assert_eq!(h.tcb.cwnd, 51_000);
    assert_eq!(h.b.min_rtt_stamp, at_ms(10_751));
    // PROBE_RTT left TcpBbr's own app-limited mark (delivered + in-flight, bytes): TX_START
    // now counts as a restart from idle.
    assert_ne!(h.b.app_limited, 0);
    h.b.cwnd_event(&mut h.tcb, CaEvent::TxStart);
    assert!(h.b.idle_restart);
}

#[test]
fn app_limited_samples_below_the_max_never_enter_the_filter() {
    let mut h = start();
    h.ack(100, BW); // round 1: best 8e6
    for i in 0..12 {
        h.ack_with(200 + 100 * i, 4_000_000, true, |rs| rs.is_app_limited = true);
    }
    // 12 rounds later the 8e6 sample is older than the 10-round window, but nothing replaced
    // it: app-limited samples below the max are not fed to the filter.
    assert_eq!(h.b.round_count, 13);
    assert_eq!(h.b.max_bw_filter.best(), BW);
    // Nor do they count toward a full pipe.
    assert_eq!(h.b.full_bandwidth_count, 0);
    assert_eq!(h.mode(), "STARTUP");
    // An app-limited sample above the max is taken.
    h.ack_with(1_500, 9_000_000, true, |rs| rs.is_app_limited = true);
    assert_eq!(h.b.max_bw_filter.best(), 9_000_000);
    // A non-app-limited lower one enters; once the window expires it is the max.
    for i in 0..11 {
        h.ack(1_600 + 100 * i, 4_000_000);
    }
    assert_eq!(h.b.max_bw_filter.best(), 4_000_000);
}

#[test]
fn ss_thresh_is_left_alone_and_the_cwnd_saved_for_after_recovery() {
    let mut h = start();
    h.ack(50, BW); // a first round, so that the Recovery ACK below is not a round start
    h.tcb.cwnd = 50_000;
    assert_eq!(h.b.get_ss_thresh(&h.tcb, 40_000), u32::MAX);
    assert_eq!(h.b.prior_cwnd, 50_000);
    // Entering Recovery: cwnd = in-flight + max(bytes this ACK, SMSS) = 30 000 + 2000.
    h.tcb.bytes_in_flight = 30_000;
    h.tcb.last_acked_sacked_bytes = 2_000;
    h.b.congestion_state_set(&mut h.tcb, CongState::Recovery);
    h.tcb.cong_state = CongState::Recovery;
    assert_eq!(h.tcb.cwnd, 32_000);
    // In Recovery SaveCwnd keeps the larger.
    assert_eq!(h.b.get_ss_thresh(&h.tcb, 30_000), u32::MAX);
    assert_eq!(h.b.prior_cwnd, 50_000);
    // Packet conservation: cwnd ≥ in-flight + acked; a loss takes its bytes off first.
    h.tcb.bytes_in_flight = 31_500;
    h.ack_with(100, BW, false, |rs| rs.bytes_loss = 3_000);
    assert_eq!(h.tcb.cwnd, 32_500); // max(32 000 − 3000, 31 500 + 1000)
    h.b.cwnd_event(&mut h.tcb, CaEvent::CompleteCwr);
    assert_eq!(h.tcb.cwnd, 50_000);
}

#[test]
fn ack_aggregation_allowance_is_capped_by_the_4096_byte_epoch() {
    let mut h = start();
    h.drive_to_probe_bw();
    h.b.extra_acked = [0; 2];
    h.b.ack_epoch_acked = 0;
    // Five 1000-byte ACKs within the same second: the expected count is bw × 0 s = 0, so the
    // epoch holds 1000, 2000, 3000, 4000 bytes, then 4000 + 1000 ≥ 4096 restarts it.
    for ms in 600..605 {
        h.ack_with(ms, BW, false, |_| {});
    }
    assert_eq!(h.b.ack_epoch_acked, 1_000);
    // drive_to_probe_bw's 5th round moved to the second bucket.
    assert_eq!(h.b.extra_acked, [0, 4_000]);
    // At most 100 ms of bw (8e6 / 80 = 100 000 bytes): 4000.
    assert_eq!(h.b.ack_aggregation_cwnd(), 4_000);
}

#[test]
fn version_3_35_has_no_pacing_margin_and_seeds_min_rtt_from_the_last_sample() {
    let mut b = Ns3Bbr::new(&ns3_defaults(), SimRng::stream(1, "bbr"), Ns3Version::V3_35);
    let mut tcb = Tcb::new(MSS, 10, u32::MAX);
    tcb.srtt = SimDuration::from_millis(100);
    tcb.last_rtt = SimDuration::from_millis(80);
    tcb.min_rtt = SimDuration::from_millis(80);
    b.congestion_state_set(&mut tcb, CongState::Open);
    assert_eq!(b.min_rtt, SimDuration::from_millis(80));
    let mut h = H { b, tcb, delivered: 0 };
    h.ack(100, BW);
    assert_eq!(h.tcb.pacing_rate, 23_120_000); // 2.89 · 8e6, no 1 % margin

    // 3.44 seeds it from SRTT.
    let mut b = Ns3Bbr::new(&ns3_defaults(), SimRng::stream(1, "bbr"), Ns3Version::V3_44);
    let mut tcb = Tcb::new(MSS, 10, u32::MAX);
    tcb.srtt = SimDuration::from_millis(100);
    tcb.last_rtt = SimDuration::from_millis(80);
    b.congestion_state_set(&mut tcb, CongState::Open);
    assert_eq!(b.min_rtt, SimDuration::from_millis(100));
}

#[test]
fn a_zero_rate_sample_ends_a_round_in_3_44_but_not_in_3_35() {
    for (version, rounds) in [(Ns3Version::V3_44, 2), (Ns3Version::V3_35, 1)] {
        let mut h = start_with(version, 1);
        h.ack(100, BW);
        h.ack(200, 0);
        assert_eq!(h.b.round_count, rounds, "{version:?}");
    }
}

#[test]
fn ns3_defaults_pass_the_check_and_linux_only_settings_are_refused() {
    assert!(check(&ns3_defaults()).is_ok());
    let high = BbrConfig { high_gain: 3.0, ..ns3_defaults() };
    assert!(check(&high).is_ok()); // drain_gain left at the default: derived from high_gain
    let cases = [
        ("lt_bw", BbrConfig { lt_bw: true, ..ns3_defaults() }),
        ("cwnd_gain", BbrConfig { cwnd_gain: 2.5, ..ns3_defaults() }),
        ("drain_gain", BbrConfig { drain_gain: 0.5, ..ns3_defaults() }),
        ("extra_acked_gain", BbrConfig { extra_acked_gain: 0.0, ..ns3_defaults() }),
        ("probe_rtt_ms", BbrConfig { probe_rtt_ms: 0, ..ns3_defaults() }),
    ];
    for (key, c) in cases {
        let (k, msg) = check(&c).unwrap_err();
        assert_eq!(k, key);
        assert!(msg.contains("needs tcp.stack = \"linux\""), "{msg}");
    }
}

#[test]
fn the_ns3_stack_parses_bbr_with_ns3_defaults_and_builds_this_class() {
    use crate::CcConfig;
    use serde_json::json;
    let c = crate::ns3::parse(json!("bbr")).unwrap();
    assert_eq!(c, CcConfig::Bbr(ns3_defaults()));
    let c = crate::ns3::parse(json!({"kind": "bbr", "high_gain": 2.5, "probe_rtt_ms": 100})).unwrap();
    let CcConfig::Bbr(b) = &c else { panic!("{c:?}") };
    assert_eq!((b.high_gain, b.probe_rtt_ms, b.lt_bw), (2.5, 100, false));
    let (key, _) = crate::ns3::parse(json!({"kind": "bbr", "lt_bw": true})).unwrap_err();
    assert_eq!(key, "lt_bw");
    let cc = crate::ns3::build(&c, SimRng::stream(1, "bbr"), Ns3Version::V3_44);
    assert_eq!((cc.name(), cc.mode(), cc.has_cong_control()), ("bbr", Some("STARTUP"), true));
}
