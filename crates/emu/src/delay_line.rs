//! A constant-delay line on one TUN device: what netem's `delay` does, for kernels without it.
//!
//! The router namespace routes both directions of the emulated path into the TUN device; the
//! delay line reads each IPv4 packet, holds it for the delay of the first route matching its
//! destination plus, when the route names a rate, the packet's serialization time at that rate,
//! and writes it back, where a policy rule (`iif <tun>`) sends it on to its real
//! next hop. With one delay per route every route's queue is FIFO in release order, so the
//! writer only compares queue heads. Packets are released by a writer thread that sleeps
//! until shortly before the head is due and spins the rest (real-time priority is the
//! caller's business), and every release's lateness (actual − due) goes into a 1 µs histogram
//! for the validity checks of the run. An IPv4 packet with no route, or one that would take the
//! queued bytes past `max_queued_bytes`, is dropped and counted; anything else (IPv6) is
//! ignored and counted.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

/// The writer spins, rather than sleeps, for the last stretch before a release: sleeping
/// wakes up tens of microseconds late.
const SPIN_BEFORE_DUE: Duration = Duration::from_micros(200);
/// Longest the writer waits before looking at the stop flag again.
const IDLE_WAIT: Duration = Duration::from_millis(10);
/// Lateness histogram: 1 µs buckets up to this, the last one open-ended.
const HISTOGRAM_US: usize = 100_000;
const MAX_PACKET_BYTES: usize = 65_536;

/// Packets to `network/prefix_len` wait `delay`, plus their length at `rate_bps` (0: none).
///
/// The rate is the bottleneck's: its token bucket releases a packet when the packet's
/// transmission would start on a real link, so the delay line adds the time the transmission
/// takes. A route's FIFO then releases in order as long as its packets' lengths differ by
/// little (full segments, or ACKs): a shorter packet behind a longer one waits for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub network: Ipv4Addr,
    pub prefix_len: u8,
    pub delay: Duration,
    pub rate_bps: u64,
}

impl Route {
    /// How long a packet of `len` bytes waits on this route.
    fn hold(&self, len: usize) -> Duration {
        if self.rate_bps == 0 {
            return self.delay;
        }
        let serialization_ns = (len as u128 * 8 * 1_000_000_000 / u128::from(self.rate_bps)) as u64;
        self.delay + Duration::from_nanos(serialization_ns)
    }

    fn matches(&self, dst: Ipv4Addr) -> bool {
        let mask = if self.prefix_len == 0 { 0 } else { u32::MAX << (32 - u32::from(self.prefix_len.min(32))) };
        u32::from(dst) & mask == u32::from(self.network) & mask
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayLineConfig {
    /// TUN interface name (created in the current network namespace if absent).
    pub tun: String,
    pub routes: Vec<Route>,
    pub max_queued_bytes: usize,
}

/// What the delay line did, for summary.json's validity checks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    pub packets: u64,
    pub bytes: u64,
    /// IPv4 packets no route matched (lost outside the bottleneck), and other packets (IPv6
    /// neighbour discovery on the TUN device), which are not part of the emulated path.
    pub dropped_no_route: u64,
    pub ignored_not_ipv4: u64,
    pub dropped_queue_full: u64,
    pub write_errors: u64,
    /// Release lateness percentiles, microseconds (None before the first release).
    pub lateness_p50_us: Option<u32>,
    pub lateness_p99_us: Option<u32>,
    pub lateness_max_us: Option<u32>,
}

struct Queues {
    /// One FIFO of (due, packet) per route.
    per_route: Vec<VecDeque<(Instant, Vec<u8>)>>,
    queued_bytes: usize,
    lateness: Vec<u64>,
    report: Report,
}

struct Shared {
    queues: Mutex<Queues>,
    wake: Condvar,
    stop: AtomicBool,
}

/// A running delay line; `stop` ends it and returns its report.
pub struct DelayLine {
    shared: Arc<Shared>,
    writer: JoinHandle<()>,
}

/// The IPv4 destination of a raw IP packet, if it is one.
fn ipv4_destination(packet: &[u8]) -> Option<Ipv4Addr> {
    (packet.len() >= 20 && packet[0] >> 4 == 4).then(|| Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]))
}

impl DelayLine {
    /// Opens the TUN device and starts the reader and writer threads.
    pub fn start(config: DelayLineConfig) -> io::Result<DelayLine> {
        let tun = Arc::new(crate::tun::open(&config.tun)?);
        DelayLine::on(tun, config)
    }

    /// Runs the delay line on an already open device (any readable and writable file of
    /// whole packets; tests use a pair of pipes through `on_io`).
    fn on(tun: Arc<File>, config: DelayLineConfig) -> io::Result<DelayLine> {
        let reader_file = Arc::clone(&tun);
        DelayLine::on_io(move |buf| (&*reader_file).read(buf), move |packet| (&*tun).write_all(packet), config)
    }

    fn on_io(
        mut read: impl FnMut(&mut [u8]) -> io::Result<usize> + Send + 'static,
        mut write: impl FnMut(&[u8]) -> io::Result<()> + Send + 'static,
        config: DelayLineConfig,
    ) -> io::Result<DelayLine> {
        let shared = Arc::new(Shared {
            queues: Mutex::new(Queues {
                per_route: vec![VecDeque::new(); config.routes.len()],
                queued_bytes: 0,
                lateness: vec![0; HISTOGRAM_US + 1],
                report: Report::default(),
            }),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let reader_shared = Arc::clone(&shared);
        let routes = config.routes.clone();
        let max_queued_bytes = config.max_queued_bytes;
        // The reader blocks in read(2); it ends with the device (or the process).
        std::thread::Builder::new().name("delay-line-reader".into()).spawn(move || {
            let mut buf = vec![0u8; MAX_PACKET_BYTES];
            while let Ok(n) = read(&mut buf) {
                let arrived = Instant::now();
                if reader_shared.stop.load(Ordering::Relaxed) || n == 0 {
                    break;
                }
                let destination = ipv4_destination(&buf[..n]);
                let route = destination.and_then(|dst| routes.iter().position(|r| r.matches(dst)));
                let mut q = reader_shared.queues.lock().expect("delay line lock");
                match route {
                    None if destination.is_none() => q.report.ignored_not_ipv4 += 1,
                    None => q.report.dropped_no_route += 1,
                    Some(_) if q.queued_bytes + n > max_queued_bytes => q.report.dropped_queue_full += 1,
                    Some(r) => {
                        q.queued_bytes += n;
                        q.per_route[r].push_back((arrived + routes[r].hold(n), buf[..n].to_vec()));
                        drop(q);
                        reader_shared.wake.notify_one();
                    }
                }
            }
        })?;
        let writer_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new().name("delay-line-writer".into()).spawn(move || {
            let shared = writer_shared;
            let mut q = shared.queues.lock().expect("delay line lock");
            while !shared.stop.load(Ordering::Relaxed) {
                let head = q.per_route.iter().enumerate().filter_map(|(r, fifo)| fifo.front().map(|p| (p.0, r))).min();
                let Some((due, route)) = head else {
                    q = shared.wake.wait_timeout(q, IDLE_WAIT).expect("delay line lock").0;
                    continue;
                };
                let now = Instant::now();
                if due > now + SPIN_BEFORE_DUE {
                    let nap = (due - now - SPIN_BEFORE_DUE).min(IDLE_WAIT);
                    q = shared.wake.wait_timeout(q, nap).expect("delay line lock").0;
                    continue;
                }
                let (due, packet) = q.per_route[route].pop_front().expect("head exists");
                q.queued_bytes -= packet.len();
                drop(q);
                while Instant::now() < due {
                    std::hint::spin_loop();
                }
                let written = write(&packet);
                let late_us = Instant::now().saturating_duration_since(due).as_micros().min(HISTOGRAM_US as u128) as usize;
                q = shared.queues.lock().expect("delay line lock");
                q.lateness[late_us] += 1;
                match written {
                    Ok(()) => {
                        q.report.packets += 1;
                        q.report.bytes += packet.len() as u64;
                    }
                    Err(_) => q.report.write_errors += 1,
                }
            }
        })?;
        Ok(DelayLine { shared, writer })
    }

    /// Stops releasing packets (those still held are not sent) and returns the report.
    pub fn stop(self) -> Report {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake.notify_all();
        let _ = self.writer.join();
        let q = self.shared.queues.lock().expect("delay line lock");
        let mut report = q.report.clone();
        let total: u64 = q.lateness.iter().sum();
        let percentile = |p: f64| {
            let rank = ((p * total as f64).ceil() as u64).max(1);
            let mut seen = 0;
            q.lateness.iter().position(|&n| {
                seen += n;
                seen >= rank
            })
        };
        if total > 0 {
            report.lateness_p50_us = percentile(0.5).map(|us| us as u32);
            report.lateness_p99_us = percentile(0.99).map(|us| us as u32);
            report.lateness_max_us = q.lateness.iter().rposition(|&n| n > 0).map(|us| us as u32);
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn ipv4_packet(dst: [u8; 4], tag: u8) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[16..20].copy_from_slice(&dst);
        p[39] = tag;
        p
    }

    fn route(network: [u8; 4], prefix_len: u8, ms: u64) -> Route {
        Route { network: Ipv4Addr::from(network), prefix_len, delay: Duration::from_millis(ms), rate_bps: 0 }
    }

    #[test]
    fn a_route_with_a_rate_adds_each_packets_serialization() {
        let mut r = route([10, 0, 2, 0], 24, 20);
        assert_eq!(r.hold(1500), Duration::from_millis(20));
        r.rate_bps = 10_000_000; // 1500 B at 10 Mbit/s: 1.2 ms; a 52-B ACK: 41.6 µs
        assert_eq!(r.hold(1500), Duration::from_micros(21_200));
        assert_eq!(r.hold(52), Duration::from_nanos(20_041_600));
        r.rate_bps = 300_000_000; // 1500 B: 40 µs
        assert_eq!(r.hold(1500), Duration::from_micros(20_040));
    }

    /// Feeds `packets` (destination, tag) at once and collects what comes out, with when.
    fn run(routes: Vec<Route>, packets: Vec<([u8; 4], u8)>, max_queued_bytes: usize) -> (Vec<(Duration, u8)>, Report) {
        let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>();
        let (out_tx, out_rx) = mpsc::channel::<(Instant, u8)>();
        let read = move |buf: &mut [u8]| {
            let p = in_rx.recv().map_err(|_| io::Error::other("closed"))?;
            buf[..p.len()].copy_from_slice(&p);
            Ok(p.len())
        };
        let write = move |p: &[u8]| out_tx.send((Instant::now(), p[39])).map_err(|_| io::Error::other("closed"));
        let config = DelayLineConfig { tun: "test".into(), routes, max_queued_bytes };
        let line = DelayLine::on_io(read, write, config).unwrap();
        let start = Instant::now();
        for (dst, tag) in &packets {
            in_tx.send(ipv4_packet(*dst, *tag)).unwrap();
        }
        std::thread::sleep(Duration::from_millis(120));
        let report = line.stop();
        let out = out_rx.try_iter().map(|(at, tag)| (at - start, tag)).collect();
        (out, report)
    }

    #[test]
    fn routes_match_by_prefix() {
        let r = route([10, 0, 2, 0], 24, 5);
        assert!(r.matches(Ipv4Addr::new(10, 0, 2, 7)) && !r.matches(Ipv4Addr::new(10, 0, 3, 7)));
        assert!(route([0, 0, 0, 0], 0, 1).matches(Ipv4Addr::new(192, 0, 2, 1)));
        assert_eq!(ipv4_destination(&ipv4_packet([10, 0, 2, 9], 0)), Some(Ipv4Addr::new(10, 0, 2, 9)));
        assert_eq!(ipv4_destination(&[0x60; 40]), None, "IPv6 is not routed");
    }

    #[test]
    fn each_packet_waits_its_routes_delay_in_order() {
        // Forward 30 ms, reverse 10 ms: the reverse packets come out first, each set in order.
        let routes = vec![route([10, 0, 2, 0], 24, 30), route([10, 0, 1, 0], 24, 10)];
        let packets = vec![([10, 0, 2, 1], 1), ([10, 0, 1, 1], 2), ([10, 0, 2, 1], 3), ([10, 0, 1, 1], 4), ([10, 9, 9, 9], 5)];
        let (out, report) = run(routes, packets, 1 << 20);
        let tags: Vec<u8> = out.iter().map(|o| o.1).collect();
        assert_eq!(tags, [2, 4, 1, 3]);
        for (at, tag) in out {
            let want = if tag % 2 == 0 { 10.0 } else { 30.0 };
            let got = at.as_secs_f64() * 1e3;
            assert!(got >= want && got < want + 50.0, "packet {tag} after {got:.3} ms, delay {want} ms");
        }
        assert_eq!((report.packets, report.bytes, report.dropped_no_route), (4, 160, 1));
        assert!(report.lateness_p50_us.is_some() && report.lateness_max_us >= report.lateness_p99_us);
    }

    #[test]
    fn a_full_line_drops_and_counts() {
        // Room for two 40-B packets.
        let (out, report) = run(vec![route([10, 0, 2, 0], 24, 5)], (1..=4).map(|t| ([10, 0, 2, 1], t)).collect(), 80);
        assert_eq!(out.len(), 2);
        assert_eq!(report.dropped_queue_full, 2);
    }

    #[test]
    fn bad_tun_names_are_refused_before_any_syscall() {
        for name in ["", "a-name-longer-than-15", "tün"] {
            assert_eq!(crate::tun::open(name).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        }
    }
}
