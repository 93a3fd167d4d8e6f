//! The mmWave topology end to end: the study-(a) path's base RTT (docs/validation.md M11), the
//! blockage as TCP sees it, uplink fixed-rate traffic (study (b)), and the bad-input errors of the
//! cell's keys.

mod common;
use common::{cell_series, run_ok, scenario};
use tcplab_sim::validate;

/// Study (a) (docs/models.md, profiles): eNB (0, 0, 30), one building x∈[40, 45] y∈[−4, 4],
/// the UE walking (50, 15, 1.5) → (50, −15, 1.5) over 15 s, remote link 100 Gbps 12.5 ms.
fn study_a(flow: &str, tcp: &str, duration: &str, rlc_buffer: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[tcp]
{tcp}
[topology]
kind = "mmwave"
cqi_timer_subframes = 1000
remote = {{ rate = "100Gbps", delay = "12.5ms", mtu = 1500, buffer = "10000pkt" }}
rlc = {{ buffer = "{rlc_buffer}", t_reordering = "2ms", t_status_prohibit = "1ms" }}
[[topology.buildings]]
x = [40.0, 45.0]
y = [-4.0, 4.0]
z = [0.0, 30.0]
[[topology.ues]]
waypoints = [{{ t = "0s", position = [50.0, 15.0, 1.5] }}, {{ t = "15s", position = [50.0, -15.0, 1.5] }}]
[[flows]]
{flow}
"#
    )
}

#[test]
fn study_a_base_rtt_is_28_to_29_ms() {
    // A short transfer keeps every queue empty: the RTT is 2 × 12.5 ms (SGi) + 2 × 1 ms
    // (S1-U) + the radio: DL scheduling lead and TB, UL BSR → grant → TB for the ACK.
    let s = scenario(&study_a(
        r#"cc = "cubic"
bytes = "14KB""#,
        "mss = 1400\nack_every = 1",
        "1s",
        "7MB",
    ));
    let out = run_ok(s);
    let f = &out.summary.flows[0];
    assert_eq!(f.bytes_acked, 14_000);
    let (p50, p99) = (f.rtt_p50_ms.unwrap(), f.rtt_p99_ms.unwrap());
    assert!((28.0..=29.0).contains(&p50) && (28.0..=29.0).contains(&p99), "RTT p50 {p50} ms, p99 {p99} ms (M11: 28–29 ms)");
    assert_eq!(f.retransmits, 0);
}

#[test]
fn blockage_cuts_capacity_and_sinr_and_rlc_absorbs_it() {
    // CUBIC over study (a) until 11 s: line of sight until 5 s, blocked until 10 s.
    let s =
        scenario(&study_a(r#"cc = "cubic""#, "mss = 1400\nack_every = 1\nsnd_buf = \"6553600B\"\nrcv_buf = \"6553600B\"", "11s", "7MB"));
    let mut out = run_ok(s);
    let r = cell_series(&mut out);
    let phase = |from: f64, to: f64, col: &str| {
        let xs: Vec<f64> = r["t_s"].iter().zip(&r[col]).filter(|(t, _)| (from..to).contains(*t)).map(|(_, v)| *v).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    assert_eq!(phase(1.0, 4.99, "los"), 1.0);
    assert_eq!(phase(5.01, 9.99, "los"), 0.0);
    assert_eq!(phase(10.01, 11.0, "los"), 1.0);
    // docs/validation.md, mmWave capacity: LOS SNR ≈ 39.6 dB (±2.5 dB beamforming draws), NLOS ≈ 36
    // dB lower once the obstacle trace has settled (≈ 40 ms after the blockage).
    let (los_sinr, nlos_sinr) = (phase(1.0, 4.99, "sinr_db"), phase(5.1, 9.99, "sinr_db"));
    assert!((36.0..43.0).contains(&los_sinr), "LOS SINR {los_sinr} dB");
    assert!((30.0..42.0).contains(&(los_sinr - nlos_sinr)), "NLOS drop {} dB", los_sinr - nlos_sinr);
    // MCS 28 in LOS (3.1 Gb/s PHY), a QPSK/16-QAM MCS behind the building (docs/validation.md,
    // mmWave capacity: 0.34–0.68 Gb/s).
    let (los_cap, nlos_cap) = (phase(1.0, 4.99, "capacity_mbps"), phase(5.1, 9.99, "capacity_mbps"));
    assert!(los_cap > 3000.0, "LOS capacity {los_cap} Mb/s");
    assert!((150.0..1000.0).contains(&nlos_cap), "NLOS capacity {nlos_cap} Mb/s");
    let fs = &out.world.flow_series;
    let goodput = |from: f64, to: f64| {
        let xs: Vec<f64> = fs.t_s.iter().zip(&fs.goodput_mbps).filter(|(t, _)| (from..to).contains(*t)).map(|(_, v)| *v).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let (los_goodput, nlos_goodput) = (goodput(2.0, 4.99), goodput(6.0, 9.99));
    // In LOS the 6.55 MB window, not the radio, limits: W / RTT ≈ 1.8 Gb/s (docs/validation.md, mmWave capacity).
    assert!((1500.0..2000.0).contains(&los_goodput), "LOS goodput {los_goodput} Mb/s");
    // Behind the building the window overfills the radio: goodput is the PHY rate less
    // MAC/RLC/PDCP/IP headers and the UL symbols of the ACKs.
    assert!((0.75..0.97).contains(&(nlos_goodput / nlos_cap)), "NLOS goodput {nlos_goodput} of {nlos_cap} Mb/s");
    // The window's excess queues in RLC behind the building: the RTT grows well past 28.5 ms.
    let srtt = |from: f64, to: f64| {
        let xs: Vec<f64> = fs.t_s.iter().zip(&fs.srtt_ms).filter(|(t, _)| (from..to).contains(*t)).map(|(_, v)| *v).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    assert!(srtt(2.0, 4.99) < 40.0 && srtt(6.0, 9.99) > 60.0, "SRTT LOS {} ms, NLOS {} ms", srtt(2.0, 4.99), srtt(6.0, 9.99));
    // 7 MB of RLC buffer holds the whole window: the radio drops nothing.
    assert_eq!(out.summary.cells["radio"][0]["rlc_drops"], 0);
}

#[test]
fn uplink_fixed_rate_app_is_carried_in_line_of_sight() {
    // Study (b) in miniature: a UE in line of sight 60 m from a 10 m high eNB (3GPP UMi)
    // sends 900-byte writes at 200 Mb/s to the remote host: the cell carries all of it. The
    // only losses are slow start's: the backlog the socket built while cwnd was small
    // reaches the UE's 1 MiB RLC buffer as one burst (nothing paces a host into its own RLC).
    // After that the UL buffer stays nearly empty.
    let s = scenario(
        r#"
duration = "3s"
[tcp]
mss = 1000
snd_buf = "5MB"
rcv_buf = "5MB"
[topology]
kind = "mmwave"
profile = "mmw-v2-3gpp"
enb = { position = [0.0, 0.0, 10.0] }
[[topology.ues]]
position = [60.0, 0.0, 1.5]
[[flows]]
cc = "newreno"
src = "ue0"
dst = "remote"
app = { rate = "200Mbps", packet_size = "900B" }
"#,
    );
    let mut out = run_ok(s);
    let f = &out.summary.flows[0];
    assert_eq!(f.app_discarded_writes, Some(0));
    assert!((195.0..=200.5).contains(&f.goodput_mbps), "uplink goodput {} Mb/s", f.goodput_mbps);
    let radio = &out.summary.cells["radio"][0];
    assert_eq!(radio["los_fraction"], 1.0);
    assert_eq!(radio["rlc_drops"], 0);
    // The radio's utilization: at MCS 28 one data symbol carries ~1760 B (3.1 Gb/s over 22
    // symbols of 10 000 subframes a second); ~2600 B of IP packets and headers a subframe at
    // 200 Mb/s need 2 of the 22 symbols when they come in one TB: ≈ 0.07-0.09 of the uplink's
    // symbols. The downlink carries the ACKs only, 1-3 a subframe, but a TB takes at least one
    // symbol: at most 1/22 = 0.045.
    let (ul, dl) = (radio["ul_utilization"].as_f64().unwrap(), radio["utilization"].as_f64().unwrap());
    assert!((0.06..0.1).contains(&ul) && (0.03..=1.0 / 22.0).contains(&dl), "radio utilization UL {ul}, DL {dl}");
    let r = cell_series(&mut out);
    let late = |col: &str| r["t_s"].iter().zip(&r[col]).filter(|(t, _)| **t > 0.5).map(|(_, v)| *v).fold(0.0, f64::max);
    assert_eq!(late("ul_rlc_drops"), 0.0);
    assert!(late("ul_rlc_backlog_bytes") < 100_000.0);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let text = study_a(r#"cc = "bbr""#, "mss = 10000\nack_every = 1", "5.5s", "4MB");
    let (mut a, mut b) = (run_ok(scenario(&text)), run_ok(scenario(&text)));
    assert_eq!(a.summary.flows, b.summary.flows);
    // Bit for bit (the SINR is NaN before the cell's first channel sample).
    let bits = |out: &mut tcplab_sim::RunOutput| cell_series(out)["sinr_db"].iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&mut a), bits(&mut b));
}

/// The error for the study-(a) scenario with `replace.0` replaced by `replace.1` in its text.
fn error(replace: (&str, &str)) -> String {
    let text = study_a(r#"cc = "cubic""#, "", "15s", "7MB").replace(replace.0, replace.1);
    let value: serde_json::Value = toml::from_str(&text).expect("valid TOML");
    validate(value).expect_err("the scenario is invalid").to_string()
}

#[test]
fn bad_cell_input_gets_one_line_naming_the_key() {
    let cases = [
        // A UE path through a building.
        (("position = [50.0, -15.0, 1.5]", "position = [30.0, -15.0, 1.5]"), "topology.ues.0.waypoints", "enters building 0"),
        // A building over the eNB.
        (
            ("x = [40.0, 45.0]\ny = [-4.0, 4.0]\nz = [0.0, 30.0]", "x = [-5.0, 5.0]\ny = [-4.0, 4.0]\nz = [0.0, 40.0]"),
            "topology.buildings.0",
            "contains the eNB",
        ),
        // Zero bandwidth.
        (("cqi_timer_subframes = 1000", "cqi_timer_subframes = 1000\nbandwidth = \"0Hz\""), "topology.bandwidth", "at least one chunk"),
        // An unknown profile.
        (("cqi_timer_subframes = 1000", "cqi_timer_subframes = 1000\nprofile = \"mmw-v3\""), "topology.profile", "mmw-v2-3gpp"),
        // An MCS index out of range.
        (("cqi_timer_subframes = 1000", "cqi_timer_subframes = 1000\nfixed_mcs = 29"), "topology.fixed_mcs", "allowed 0..=28"),
        // A carrier the NYU model has no fit for.
        (("cqi_timer_subframes = 1000", "cqi_timer_subframes = 1000\ncarrier = \"60GHz\""), "topology.carrier", "28e9 or 73e9"),
        (("cqi_timer_subframes = 1000", "cqi_timer_subframes = 0"), "topology.cqi_timer_subframes", "at least 1"),
        (("[[flows]]", "[[topology.ues]]\nname = \"enb\"\nposition = [0.0, 50.0, 1.5]\n[[flows]]"), "topology.ues.1.name", "reserved"),
        (("[[flows]]", "[[flows]]\napp = { rate = \"0bps\", packet_size = \"900B\" }"), "flows.0.app.rate", "must be > 0"),
    ];
    for ((from, to), path, words) in cases {
        let e = error((from, to));
        assert!(e.starts_with(&format!("{path}: ")) && e.contains(words) && !e.contains('\n'), "{path}: {e}");
    }
}
