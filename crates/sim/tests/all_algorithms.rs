//! scenarios/all-algorithms.toml: every algorithm alone on one 50 Mbps, 20 ms, 2-BDP
//! bottleneck. Each must fill the link, and each must queue the way its design says: the
//! delay-based and ECN-based ones keep the RTT near the base, the loss-based ones fill the
//! buffer (as assertions).

mod common;
use common::*;

/// Payload ceiling of 50 Mbps with 1500-byte packets and a 1448-byte MSS.
const CEILING_MBPS: f64 = 50.0 * 1448.0 / 1500.0;

#[test]
fn every_algorithm_fills_the_link_and_queues_as_designed() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/all-algorithms.toml");
    let out = run_ok(scenario(&std::fs::read_to_string(path).expect("readable")));
    let names: Vec<&str> = out.summary.flows.iter().map(|f| f.cc.as_str()).collect();
    for name in tcplab_cc::CcConfig::names() {
        assert!(names.contains(&name), "all-algorithms.toml lacks {name}");
    }
    // Base RTT 20 ms plus serialization; the full 167-packet buffer adds 40 ms.
    let low_delay = ["bbr", "bbr3", "vegas", "dctcp", "prague"];
    for f in &out.summary.flows {
        let rtt = f.rtt_mean_ms.expect("RTT samples");
        assert!(f.goodput_mbps > 0.95 * CEILING_MBPS, "{}: goodput {:.2} Mbps", f.cc, f.goodput_mbps);
        if low_delay.contains(&f.cc.as_str()) {
            assert!(rtt < 26.0, "{}: mean RTT {rtt:.1} ms, expected near the 20 ms base", f.cc);
            assert!(f.retransmit_pct < 0.1, "{}: {:.2} % retransmitted", f.cc, f.retransmit_pct);
        } else {
            assert!(rtt > 40.0, "{}: mean RTT {rtt:.1} ms, a loss-based algorithm fills the buffer", f.cc);
            assert!(f.retransmits > 0, "{}: a loss-based algorithm must lose packets here", f.cc);
        }
    }
    let bottleneck = out.summary.links.iter().find(|l| l.id == "left->right").expect("bottleneck");
    assert!(bottleneck.ce_marks > 0, "DCTCP's packets are marked");
}
