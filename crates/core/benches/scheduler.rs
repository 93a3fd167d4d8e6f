//! Scheduler cost: schedule + pop of one event with a steady number of pending events
//! (a few dozen for one flow; thousands with thousands of flows and links; deep pipes never
//! enter the queue).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use tcplab_core::{Scheduler, SimDuration, SimRng, SimTime};

fn hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduler_hold");
    for pending in [16usize, 64, 1024, 16384] {
        group.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, &pending| {
            let mut rng = SimRng::stream(1, "bench");
            let mut sched = Scheduler::new();
            for i in 0..pending {
                sched.schedule(SimTime(rng.below(1_000_000) as u64), i as u32);
            }
            // The "hold" model: pop the earliest event, schedule a new one a random delay later.
            b.iter(|| {
                let (now, ev) = sched.pop_until(SimTime::MAX).expect("never empty");
                sched.schedule(now + SimDuration::from_nanos(rng.below(1_000_000) as u64), black_box(ev));
            });
        });
    }
    group.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
