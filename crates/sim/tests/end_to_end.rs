//! End-to-end behaviour of whole runs: end to end, and determinism.

mod common;
use common::*;

/// Payload rate of a link carrying full 1500-byte packets with a 1448-byte MSS.
fn payload_mbps(link_mbps: f64) -> f64 {
    link_mbps * 1448.0 / 1500.0
}

#[test]
fn cubic_fills_a_10mbps_link_with_a_one_bdp_buffer() {
    // 10 Mbps x 40 ms RTT = 50 000 B = 33 packets of 1500 B.
    let out = run_ok(scenario(&dumbbell(&["cubic"], "10Mbps", "20ms", "34pkt", "30s")));
    let goodput = out.summary.flows[0].goodput_mbps;
    assert!(goodput >= 0.95 * payload_mbps(10.0), "goodput {goodput:.3} Mbps < 95 % of {:.3}", payload_mbps(10.0));
}

#[test]
fn bbr_keeps_the_queue_far_below_cubic_on_a_deep_buffer() {
    // 10 BDP = 330 packets.
    let cubic = run_ok(scenario(&dumbbell(&["cubic"], "10Mbps", "20ms", "330pkt", "30s")));
    let bbr = run_ok(scenario(&dumbbell(&["bbr"], "10Mbps", "20ms", "330pkt", "30s")));
    let (qc, qb) = (mean_backlog(&cubic, "left->right"), mean_backlog(&bbr, "left->right"));
    assert!(qb * 4.0 < qc, "BBR mean queue {qb:.1} pkts is not far below CUBIC's {qc:.1}");
    for out in [&cubic, &bbr] {
        assert!(out.summary.flows[0].goodput_mbps > 0.9 * payload_mbps(10.0));
    }
}

#[test]
fn same_seed_same_outputs_other_seed_changes_only_random_parts() {
    let lossy = |seed: u64| {
        let text = dumbbell(&["cubic", "newreno"], "20Mbps", "10ms", "50pkt", "5s")
            .replace("buffer = \"50pkt\" }", "buffer = \"50pkt\", loss = 0.01 }");
        let mut s = scenario(&text);
        s.seed = seed;
        run_ok(s)
    };
    let (a, b, c) = (lossy(1), lossy(1), lossy(2));
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.world.flow_series.cwnd_pkts, b.world.flow_series.cwnd_pkts);
    assert_eq!(a.world.link_series.backlog_bytes, b.world.link_series.backlog_bytes);
    assert_ne!(a.summary.flows[0].bytes_acked, c.summary.flows[0].bytes_acked);
    // Non-random parts stay: same sampling grid, same link set.
    assert_eq!(a.world.flow_series.t_s, c.world.flow_series.t_s);
    let names = |o: &tcplab_sim::RunOutput| o.summary.links.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&c));
    // Without random loss the seed changes nothing but BBR's phase draw (none here).
    let clean = |seed: u64| {
        let mut s = scenario(&dumbbell(&["cubic"], "20Mbps", "10ms", "50pkt", "3s"));
        s.seed = seed;
        run_ok(s).summary.flows[0].bytes_acked
    };
    assert_eq!(clean(1), clean(2));
}

#[test]
fn flows_with_different_access_delays_see_different_rtts() {
    // Two short transfers one after the other, so neither sees the other's queue.
    let text = dumbbell(&["cubic", "cubic"], "20Mbps", "5ms", "200pkt", "3s")
        .replacen("[[flows]]", "access_delays = [\"1ms\", \"20ms\"]\n[[flows]]", 1)
        .replace("cc = \"cubic\"", "cc = \"cubic\"\nbytes = \"20KB\"")
        .replacen("bytes = \"20KB\"", "bytes = \"20KB\"\nstart = \"0s\"", 1)
        + "start = \"1s\"\n";
    let out = run_ok(scenario(&text));
    let min_rtt = |f: u32| {
        let s = &out.world.flow_series;
        s.flow.iter().zip(&s.min_rtt_ms).filter(|(id, _)| **id == f).map(|(_, v)| *v).fold(f64::INFINITY, f64::min)
    };
    // Base RTT: 2 x (access delay + 5 ms) plus serialization (0.6 ms per packet at 20 Mbps).
    assert!((12.0..13.5).contains(&min_rtt(0)), "{}", min_rtt(0));
    assert!((50.0..51.5).contains(&min_rtt(1)), "{}", min_rtt(1));
}

#[test]
fn byte_count_transfer_completes_and_stops() {
    let text = dumbbell(&["cubic"], "10Mbps", "10ms", "100pkt", "10s").replace("cc = \"cubic\"", "cc = \"cubic\"\nbytes = \"1MB\"");
    let out = run_ok(scenario(&text));
    let f = &out.summary.flows[0];
    assert_eq!(f.bytes_acked, 1_000_000);
    let done = f.completion_s.expect("transfer completes");
    // 1 MB at 9.65 Mbps is 0.83 s of transmission plus slow start: well under 2 s.
    assert!((0.8..2.0).contains(&done), "{done}");
}

#[test]
fn every_example_scenario_runs_and_keeps_the_invariants() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut ran = 0;
    for entry in std::fs::read_dir(root).expect("scenarios/ exists") {
        let path = entry.expect("readable").path();
        if path.extension().is_some_and(|e| e == "toml") {
            // A `[study]` table (cases, seeds) is for the Python front end, which removes it.
            let mut value: toml::Value = toml::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("valid TOML");
            value.as_table_mut().expect("a table").remove("study");
            let mut s = scenario(&toml::to_string(&value).expect("serializes"));
            s.duration = tcplab_sim::units::DurationValue(tcplab_core::SimDuration::from_secs(3).min(s.duration.0));
            run_ok(s); // run() checks the invariants
            ran += 1;
        }
    }
    assert!(ran >= 1);
}

// Linux bbr_get_info (TCP_CC_INFO), as the emulation backend records it: on 10 Mbit/s, 40 ms the
// bw estimate is the payload rate, 10 Mbit/s × 1448/1500 = 9.6533 Mbit/s (the delivery rate
// counts packets, reported × MSS; only the integer packets/µs << 24 arithmetic rounds it, far
// below 0.1 %); min_rtt is the empty-queue RTT, 40 ms + 1500 B at 10 Mbit/s (1.2 ms) + the ACK's
// 52 B at 10 Mbit/s (41.6 µs) + 1500 B over the two 1 Gbit/s access links (24 µs) = 41.266 ms,
// plus 1.2 ms with GSO: a burst is 2 packets and the ACK (every second packet) is the second's,
// which waited for the first at the bottleneck;
// the gains are v1's: 739/256 in STARTUP (pacing and cwnd), 88/256 and 739/256 in DRAIN, the
// 5/4, 3/4, 1 pacing cycle with cwnd gain 2 in PROBE_BW, 1 and 1 in PROBE_RTT.
#[test]
fn bbr_records_its_model_and_cubic_none() {
    let out = run_ok(scenario(&dumbbell(&["bbr"], "10Mbps", "20ms", "330pkt", "11s")));
    let s = &out.world.flow_series;
    assert!(s.bbr_min_rtt_ms[0].is_nan(), "no RTT sample in the first 10 ms");
    let high_gain = 739.0 / 256.0;
    let mut pacing_gains_in_probe_bw = Vec::new();
    for i in 0..s.t_s.len() {
        let gains = (s.bbr_pacing_gain[i], s.bbr_cwnd_gain[i]);
        match s.cc_state[i] {
            "STARTUP" => assert_eq!(gains, (high_gain, high_gain)),
            "DRAIN" => assert_eq!(gains, (88.0 / 256.0, high_gain)),
            "PROBE_BW" => {
                assert_eq!(gains.1, 2.0);
                pacing_gains_in_probe_bw.push(gains.0);
            }
            "PROBE_RTT" => assert_eq!(gains, (1.0, 1.0)),
            other => panic!("mode {other}"),
        }
        if s.t_s[i] >= 1.0 {
            // At most 1 % low: when the 10-round max filter has seen no 5/4 phase (PROBE_RTT's
            // rounds count), it holds cruise samples paced 1 % below bw (bbr_pacing_margin_percent).
            let ratio = s.bbr_bw_mbps[i] / payload_mbps(10.0);
            assert!(ratio < 1.0 + 1e-3 && ratio > 0.99 - 1e-3, "bw {} Mbit/s at {} s", s.bbr_bw_mbps[i], s.t_s[i]);
        }
    }
    assert!(s.cc_state.contains(&"PROBE_RTT"), "min_rtt expires after 10 s");
    for g in [1.25, 0.75, 1.0] {
        assert!(pacing_gains_in_probe_bw.contains(&g), "pacing gain {g} in PROBE_BW");
    }
    assert!(pacing_gains_in_probe_bw.iter().all(|g| [1.25, 0.75, 1.0].contains(g)));
    let last = s.t_s.len() - 1;
    assert!((s.bbr_bw_mbps[last] / payload_mbps(10.0) - 1.0).abs() < 1e-3, "bw {}", s.bbr_bw_mbps[last]);
    assert!((s.bbr_min_rtt_ms[last] - 42.466).abs() < 1e-3, "min_rtt {}", s.bbr_min_rtt_ms[last]);

    // BBRv3 reports the same model (its bbr_get_info): the bw in use and min_rtt.
    let v3 = run_ok(scenario(&dumbbell(&["bbr3"], "10Mbps", "20ms", "330pkt", "3s")));
    let s = &v3.world.flow_series;
    let last = s.t_s.len() - 1;
    assert!((s.bbr_bw_mbps[last] / payload_mbps(10.0) - 1.0).abs() < 1e-3, "bw {}", s.bbr_bw_mbps[last]);
    assert!((s.bbr_min_rtt_ms[last] - 41.266).abs() < 1e-3, "min_rtt {}", s.bbr_min_rtt_ms[last]);
    assert_eq!(s.bbr_pacing_gain[0], 710.0 / 256.0, "v3's STARTUP pacing gain");

    let cubic = run_ok(scenario(&dumbbell(&["cubic"], "10Mbps", "20ms", "330pkt", "1s")));
    let s = &cubic.world.flow_series;
    for column in [&s.bbr_bw_mbps, &s.bbr_min_rtt_ms, &s.bbr_pacing_gain, &s.bbr_cwnd_gain] {
        assert!(column.iter().all(|v| v.is_nan()));
    }
}
