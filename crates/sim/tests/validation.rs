//! Bad scenarios get one error naming the key path and what is allowed.
//! The Python suite holds the full table; these pin the Rust-side paths and messages.

use tcplab_sim::{resolve, validate};

const BASE: &str = r#"
duration = "5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = "100pkt" }
[[flows]]
cc = "newreno"
"#;

fn error_of(edit: impl Fn(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = toml::from_str(BASE).unwrap();
    edit(&mut v);
    validate(v).expect_err("scenario should be rejected").to_string()
}

#[test]
fn base_scenario_is_valid_and_gets_defaults() {
    let s = resolve(toml::from_str(BASE).unwrap()).unwrap();
    assert_eq!(s.flows[0].src.as_deref(), Some("s0"));
    assert_eq!(s.flows[0].tcp.as_ref().unwrap().mss, 1448);
    assert_eq!(s.seed, 1);
}

#[test]
fn errors_name_the_dotted_path() {
    use serde_json::json;
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str, &str)> = vec![
        (Box::new(|v| v["colour"] = json!("red")), "colour", "unknown key \"colour\"; allowed: name, duration"),
        (Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("10Mbs")), "topology.bottleneck.rate", "unknown rate unit"),
        (Box::new(|v| v["topology"]["bottleneck"]["rate"] = json!("0Mbps")), "topology.bottleneck.rate", "must be > 0"),
        (Box::new(|v| v["topology"]["bottleneck"]["delay"] = json!("-1ms")), "topology.bottleneck.delay", "negative"),
        (Box::new(|v| v["topology"]["bottleneck"]["buffer"] = json!("100B")), "topology.bottleneck.buffer", "smaller than one packet"),
        (Box::new(|v| v["topology"]["bottleneck"]["loss"] = json!(1.5)), "topology.bottleneck.loss", "0 <= loss < 1"),
        (Box::new(|v| v["topology"]["kind"] = json!("ring")), "topology.kind", "allowed: dumbbell, explicit"),
        (Box::new(|v| v["flows"][0]["cc"] = json!("cubbic")), "flows.0.cc", "unknown algorithm"),
        (Box::new(|v| v["flows"][0]["dst"] = json!("nowhere")), "flows.0.dst", "unknown node"),
        (Box::new(|v| v["flows"][0]["src"] = json!("left")), "flows.0.src", "is a router"),
        (Box::new(|v| v["flows"][0]["tcp"] = json!({"mss": 0})), "flows.0.tcp.mss", "out of range"),
        (Box::new(|v| v["tcp"] = json!({"ack_every": 0})), "tcp.ack_every", "at least 1"),
        (Box::new(|v| v["tcp"] = json!({"sack": "yes"})), "tcp.sack", "expected true or false, found the string \"yes\""),
        (Box::new(|v| v["duration"] = json!(5)), "duration", "string with a unit"),
        (Box::new(|v| v["flows"] = json!([])), "flows", "at least one flow"),
        (Box::new(|v| v["flows"][0]["start"] = json!("9s")), "flows.0.start", "not before the end"),
        (
            Box::new(|v| v["topology"]["bottleneck"]["ecn_threshold"] = json!("20pk")),
            "topology.bottleneck.ecn_threshold",
            "not an ECN threshold",
        ),
        (Box::new(|v| v["topology"]["bottleneck"]["ecn_threshold"] = json!(20)), "topology.bottleneck.ecn_threshold", "string with a unit"),
        (Box::new(|v| v["topology"]["bottleneck"]["ecn_threshold"] = json!("0pkt")), "topology.bottleneck.ecn_threshold", "at least 1pkt"),
        (
            Box::new(|v| v["topology"]["bottleneck"]["ecn_threshold"] = json!("0ms")),
            "topology.bottleneck.ecn_threshold",
            "a sojourn time > 0",
        ),
        (
            Box::new(|v| v["topology"]["bottleneck"]["ecn_threshold"] = json!("100pkt")),
            "topology.bottleneck.ecn_threshold",
            "not below the buffer (100pkt)",
        ),
        (
            Box::new(|v| v["topology"]["bottleneck"]["reverse"] = json!({"ecn_threshold": "1"})),
            "topology.bottleneck.reverse.ecn_threshold",
            "not an ECN threshold",
        ),
        (
            Box::new(|v| v["topology"]["bottleneck"]["reverse"] = json!({"buffer": "10pkt", "ecn_threshold": "10pkt"})),
            "topology.bottleneck.reverse.ecn_threshold",
            "not below the buffer (10pkt)",
        ),
    ];
    for (edit, path, fragment) in cases {
        let e = error_of(edit);
        assert!(e.starts_with(&format!("{path}: ")), "expected path {path:?} in {e:?}");
        assert!(e.contains(fragment), "expected {fragment:?} in {e:?}");
        assert!(!e.contains('\n'), "multi-line error: {e:?}");
    }
}

#[test]
fn unconnected_hosts_are_refused_before_anything_runs() {
    let text = r#"
duration = "1s"
[topology]
kind = "explicit"
nodes = [{ name = "a" }, { name = "b" }, { name = "c" }, { name = "d" }]
links = [{ a = "a", b = "b", rate = "1Mbps", delay = "1ms" }, { a = "c", b = "d", rate = "1Mbps", delay = "1ms" }]
[[flows]]
cc = "newreno"
src = "a"
dst = "d"
"#;
    let e = validate(toml::from_str(text).unwrap()).expect_err("a and d are not connected").to_string();
    assert!(e.starts_with("flows.0.dst: ") && e.contains("cannot be reached"), "{e}");
    // `resolve` checks each key on its own and builds nothing; a run makes the graph's checks as
    // it builds its world, once (no separate validation pass builds the network first).
    let resolved = resolve(toml::from_str(text).unwrap()).expect("each key is valid on its own");
    match tcplab_sim::run(resolved, 1, |_| Ok(())) {
        Err(tcplab_sim::RunError::Scenario(run_error)) => assert_eq!(run_error.to_string(), e),
        _ => panic!("the run must refuse the scenario with validate's error"),
    }
}

#[test]
fn ecn_thresholds_resolve_and_print_canonically() {
    let mut v: serde_json::Value = toml::from_str(BASE).unwrap();
    v["topology"]["bottleneck"]["ecn_threshold"] = serde_json::json!("20pkt");
    v["topology"]["bottleneck"]["reverse"] = serde_json::json!({"ecn_threshold": "500us"});
    let s = resolve(v).unwrap();
    let link = serde_json::to_value(&s.topology).unwrap()["bottleneck"].clone();
    assert_eq!(link["ecn_threshold"], "20pkt");
    assert_eq!(link["reverse"]["ecn_threshold"], "500us");
    let plain = serde_json::to_value(&resolve(toml::from_str(BASE).unwrap()).unwrap().topology).unwrap();
    assert!(plain["bottleneck"].get("ecn_threshold").is_none(), "no marking unless asked");
}
