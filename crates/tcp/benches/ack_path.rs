//! Per-ACK cost of the sender (docs/architecture.md, performance budget: it must not grow with the
//! window). Two shapes at windows of 100 and 10 000 packets: a steady cumulative-ACK stream (one
//! ACK, one new segment), and a full SACK recovery round (head segment lost, W − 1 ACKs with a
//! growing SACK block, the retransmission, the final cumulative ACK), reported per ACK.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use tcplab_cc::{CcCx, CongestionControl};
use tcplab_core::{AckHeader, SackBlock, SimDuration, SimTime};
use tcplab_tcp::{TcpConfig, TcpSender};

/// Holds cwnd at a fixed window (ssthresh = cwnd, so recovery does not shrink it).
#[derive(Debug)]
struct FixedWindow(u32);

impl CongestionControl for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn init(&mut self, cx: &mut CcCx) {
        cx.cwnd = self.0;
    }
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        cx.cwnd
    }
}

struct Driver {
    tx: TcpSender,
    now: SimTime,
}

impl Driver {
    fn new(window: u32) -> Self {
        let bytes = u64::from(window) * 1448 * 4;
        let cfg = TcpConfig { snd_buf_bytes: bytes, rcv_buf_bytes: bytes, ..TcpConfig::default() };
        let mut tx = TcpSender::new(cfg, Box::new(FixedWindow(window)), None);
        tx.start(SimTime::ZERO);
        let mut d = Driver { tx, now: SimTime::ZERO };
        d.drain();
        d
    }

    fn drain(&mut self) -> u32 {
        let mut n = 0;
        while let Some(t) = self.tx.poll_transmit(self.now) {
            black_box(t);
            n += 1;
        }
        n
    }

    fn ack(&mut self, ack: u32, sack: Option<(u32, u32)>) {
        self.now += SimDuration::from_micros(1);
        let mut blocks = [SackBlock::default(); 3];
        if let Some((start, end)) = sack {
            blocks[0] = SackBlock { start, end };
        }
        let hdr = AckHeader {
            ack,
            sack: blocks,
            sack_len: u8::from(sack.is_some()),
            tsecr: self.now,
            ece: false,
            rwnd_bytes: u64::MAX / 2,
            delayed: false,
        };
        black_box(self.tx.on_ack(self.now, &hdr));
    }

    /// The head of a window of `w` is lost: w − 1 duplicate ACKs SACK the rest (the first two
    /// release limited-transmit segments, the third starts recovery and the retransmission),
    /// then one ACK covers everything up to the limited-transmit segments, ending recovery.
    fn recovery_round(&mut self, w: u32) -> u32 {
        let una = self.tx.cc_view().snd_una;
        for k in 1..w {
            self.ack(una, Some((una + 1, una + 1 + k)));
            self.drain();
        }
        self.ack(una + w + 2, None);
        self.drain()
    }
}

fn cumulative(c: &mut Criterion) {
    let mut g = c.benchmark_group("cumulative_ack");
    g.throughput(Throughput::Elements(1));
    for window in [100u32, 10_000] {
        let mut d = Driver::new(window);
        let mut una = 0;
        g.bench_with_input(BenchmarkId::from_parameter(window), &window, |b, _| {
            b.iter(|| {
                una += 1;
                d.ack(una, None);
                d.drain()
            })
        });
    }
    g.finish();
}

fn sack_recovery(c: &mut Criterion) {
    let mut g = c.benchmark_group("sack_recovery_round_per_ack");
    for window in [100u32, 10_000] {
        g.throughput(Throughput::Elements(u64::from(window)));
        let mut d = Driver::new(window);
        d.recovery_round(window);
        let st = d.tx.stats();
        assert_eq!((st.retransmits, st.rto_count, st.cc_state), (1, 0, "cong_avoid"), "one clean recovery per round");
        g.bench_with_input(BenchmarkId::from_parameter(window), &window, |b, &w| b.iter(|| d.recovery_round(w)));
    }
    g.finish();
}

criterion_group!(benches, cumulative, sack_recovery);
criterion_main!(benches);
