//! The WiFi BSS end to end: TCP over a dumbbell whose senders are stations of the access point
//! `left` (docs/models.md, WiFi uplink, docs/validation.md W8, W12, W13), the per-device series and
//! the AP drop ratio, determinism, and the bad-input errors of `topology.wifi`.

mod common;
use common::{cell_series, run_ok, scenario};
use tcplab_sim::{validate, RunOutput};

/// N CUBIC (or `cc`) uploads from WiFi stations through a `bottleneck` to wired receivers.
fn wifi_dumbbell(pairs: u32, cc: &str, bottleneck: &str, wifi: &str, duration: &str) -> String {
    let flows: String = (0..pairs).map(|_| format!("[[flows]]\ncc = \"{cc}\"\n")).collect();
    format!(
        r#"
duration = "{duration}"
[tcp]
mss = 1448
ack_every = 1
[topology]
kind = "dumbbell"
pairs = {pairs}
bottleneck = {bottleneck}
access = {{ rate = "1Gbps", delay = "0ms", buffer = "1000pkt" }}
wifi = {wifi}
{flows}"#
    )
}

const STUDY_BOTTLENECK: &str = r#"{ rate = "30Mbps", delay = "10ms", buffer = "100pkt" }"#;

/// A number of the summary.
fn number(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn total_goodput(out: &RunOutput) -> f64 {
    out.summary.flows.iter().map(|f| f.goodput_mbps).sum()
}

#[test]
fn w12_a_fast_wifi_6_cell_leaves_the_30_mbps_link_the_bottleneck() {
    // 802.11ax, 5 GHz, 80 MHz, GI 3.2 µs, MCS 2 at −80 dBm (7.95 dB): ≈ 70 Mb/s of TCP capacity
    // (docs/models.md, WiFi uplink), so the wired link is the bottleneck: 30 × 1448 / 1500 = 28.96
    // Mb/s.
    for pairs in [1, 4] {
        let text = wifi_dumbbell(pairs, "cubic", STUDY_BOTTLENECK, r#"{ standard = "802.11ax", mcs = 2 }"#, "20s");
        let out = run_ok(scenario(&text));
        let goodput = total_goodput(&out);
        assert!((goodput / 28.96 - 1.0).abs() <= 0.03, "{pairs} stations: {goodput:.2} Mb/s");
        let wifi = &out.summary.cells["wifi"];
        assert_eq!((wifi["mcs"].as_u64(), wifi["devices"].as_array().map(Vec::len)), (Some(2), Some(pairs as usize + 1)));
        assert!((number(&wifi["snr_db"]) - 7.95).abs() < 0.01);
        let airtime = number(&wifi["airtime_busy"]);
        assert!(airtime > 0.2 && airtime < 0.9, "airtime {airtime}");
    }
}

#[test]
fn w13_wifi_4_at_minus_80_dbm_carries_mcs_4_but_not_mcs_5() {
    // 20 MHz at −80 dBm is 13.97 dB: HtMcs4 (39 Mb/s PHY) works, HtMcs5 loses every MPDU.
    let run = |mcs: u32| {
        let wifi = format!(r#"{{ standard = "802.11n", band = "5GHz", mcs = {mcs} }}"#);
        run_ok(scenario(&wifi_dumbbell(1, "cubic", STUDY_BOTTLENECK, &wifi, "20s")))
    };
    let mcs4 = run(4);
    let goodput = total_goodput(&mcs4);
    assert!((27.0..=30.0).contains(&goodput), "HtMcs4: {goodput:.2} Mb/s");
    let mcs5 = run(5);
    assert!(total_goodput(&mcs5) < 0.1, "HtMcs5: {} Mb/s", total_goodput(&mcs5));
    let wifi = &mcs5.summary.cells["wifi"];
    assert!(number(&wifi["ap_drop_ratio"]) > 0.99 && number(&wifi["devices"][1]["mac_drops"]) > 0.0, "{wifi}");
}

#[test]
fn w8_a_fast_wifi_4_uplink_carries_over_50_mbps_of_tcp() {
    // ns-3 wifi-tcp: 802.11n 2.4 GHz, HtMcs7, 20 MHz, one station, NewReno, close to the AP.
    let wifi = r#"{ standard = "802.11n", mcs = 7, rss_dbm = -40.0, error_model = "nist" }"#;
    let fast = r#"{ rate = "1Gbps", delay = "1ms", buffer = "1000pkt" }"#;
    let out = run_ok(scenario(&wifi_dumbbell(1, "newreno", fast, wifi, "10s")));
    let goodput = total_goodput(&out);
    assert!((50.0..60.0).contains(&goodput), "{goodput:.2} Mb/s");
    // TCP ACKs ride the AP's own channel access: the AP sends about one PPDU per data PPDU.
    let devices = &out.summary.cells["wifi"]["devices"];
    let (ap, sta) = (number(&devices[0]["ppdus"]), number(&devices[1]["ppdus"]));
    assert!(ap > 0.5 * sta && ap <= sta + 10.0, "AP {ap} vs station {sta} PPDUs");
}

#[test]
fn four_stations_collide_and_the_series_counts_it() {
    let text = wifi_dumbbell(4, "cubic", STUDY_BOTTLENECK, r#"{ standard = "802.11n", band = "5GHz", mcs = 4 }"#, "10s");
    let mut out = run_ok(scenario(&text));
    let ws = cell_series(&mut out);
    assert_eq!(ws["t_s"].len(), 5 * 1000, "AP + 4 stations per 10 ms sample");
    let collisions: f64 = ws["collisions"].iter().sum();
    let wifi = &out.summary.cells["wifi"];
    let devices = wifi["devices"].as_array().expect("a list of devices");
    assert_eq!(collisions, devices.iter().map(|d| number(&d["collisions"])).sum::<f64>());
    let ap_drop_ratio = number(&wifi["ap_drop_ratio"]);
    assert!(ap_drop_ratio > 0.01, "collisions make the AP lose MPDUs: {ap_drop_ratio}");
    assert!(ws["airtime_busy"].iter().all(|a| (0.0..=1.0).contains(a)));
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let text = wifi_dumbbell(2, "bbr", STUDY_BOTTLENECK, r#"{ standard = "802.11n", band = "5GHz", mcs = 4 }"#, "3s");
    let (a, b) = (run_ok(scenario(&text)), run_ok(scenario(&text)));
    assert_eq!(a.summary.flows, b.summary.flows);
    assert_eq!(a.summary.cells, b.summary.cells);
}

#[test]
fn bad_wifi_input_gets_one_line_naming_the_key() {
    let cases = [
        (r#"{ standard = "802.11n", mcs = 8 }"#, 1, "topology.wifi.mcs", "allowed 0..=7"),
        (r#"{ standard = "802.11ax", band = "2.4GHz", width_mhz = 80, mcs = 2 }"#, 1, "topology.wifi.width_mhz", "allowed: [20, 40]"),
        (r#"{ standard = "802.11n", width_mhz = 80, mcs = 2 }"#, 1, "topology.wifi.width_mhz", "allowed: [20, 40]"),
        (r#"{ standard = "802.11ax", guard_interval_ns = 400, mcs = 2 }"#, 1, "topology.wifi.guard_interval_ns", "[800, 1600, 3200]"),
        (r#"{ standard = "802.11ax" }"#, 1, "topology.wifi.mcs", "missing"),
        (r#"{ standard = "802.11ac", mcs = 2 }"#, 1, "topology.wifi.standard", "802.11ax"),
        (r#"{ standard = "802.11ax", mcs = 2, queue = "1MB" }"#, 1, "topology.wifi.queue", "packets"),
        (r#"{ standard = "802.11ax", mcs = 2 }"#, 0, "topology.pairs", "the WiFi stations are the senders"),
    ];
    for (wifi, pairs, path, words) in cases {
        let mut text = wifi_dumbbell(pairs.max(1), "cubic", STUDY_BOTTLENECK, wifi, "1s");
        if pairs == 0 {
            text = text.replace("pairs = 1", "pairs = 0");
        }
        let value: serde_json::Value = toml::from_str(&text).expect("valid TOML");
        let e = validate(value).expect_err("the scenario is invalid").to_string();
        assert!(e.starts_with(&format!("{path}: ")) && e.contains(words) && !e.contains('\n'), "{path}: {e}");
    }
}
