//! Per-ACK cost of every algorithm of the catalog on a steady ACK stream: the testkit's fixed-rate
//! path (one 1500 B packet per 100 µs = 120 Mbit/s, 20 ms propagation, a BDP of buffer, so
//! loss-based algorithms keep cycling through recovery), warmed up for 30 s of simulated time; then
//! each iteration is one `Path::step`: one ACK with all its hooks, the packets it releases and the
//! fake sender's bookkeeping (Linux's hook order in tcp_ack(),
//! not ns-3's). `newreno`, whose hooks are a few additions, approximates the cost of that harness
//! alone.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use tcplab_cc::testkit::Path;
use tcplab_cc::CcConfig;
use tcplab_core::{SimDuration, SimRng, SimTime};

fn per_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_ack");
    group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).sample_size(30);
    for info in CcConfig::catalog() {
        let config: CcConfig = serde_json::from_value(serde_json::json!(info.name)).expect("catalog names parse");
        let cc = config.build(SimRng::stream(1, "flow/0/cc"));
        let mut path = Path::new(cc, SimDuration::from_micros(100), SimDuration::from_millis(20), Some(200));
        path.run_until(SimTime::ZERO + SimDuration::from_secs(30));
        group.bench_function(info.name, |b| b.iter(|| path.step()));
    }
    group.finish();
}

criterion_group!(benches, per_ack);
criterion_main!(benches);
