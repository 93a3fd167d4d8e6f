//! A constant-delay line on TUN devices: what netem's `delay` does, for kernels without it,
//! behind the bottleneck's shaper.
//!
//! The router namespace routes each direction of the emulated path into its own TUN device,
//! whose egress qdisc is that direction's bottleneck (a token bucket and the link's queue). The
//! delay line reads each IPv4 packet as the bucket releases it, passes it through the device's
//! transmitter (the link's serialization), holds it for the delay of the first route matching
//! its destination, and writes it back into the device it came from, where a policy rule
//! (`iif <tun>`) sends it on to its real next hop. Every route's queue is FIFO in release order
//! (one device per destination, one transmitter per device, one delay per route), so the writer
//! only compares queue heads. Packets are released by a writer thread that sleeps until shortly
//! before the head is due and spins the rest (real-time priority is the caller's business), and
//! every release's lateness (actual − due) goes into a 1 µs histogram for the validity checks of
//! the run. An IPv4 packet with no route, or one that would take the queued bytes past
//! `max_queued_bytes`, is dropped and counted; anything else (IPv6) is ignored and counted.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

/// The writer spins, rather than sleeps, for the last stretch before a release: sleeping
/// wakes up tens of microseconds late. Not longer: a real-time thread that spins through
/// every gap (at 100 Mbit/s packets are 120 µs apart) uses more than the kernel's real-time
/// budget (`sched_rt_runtime_us`, 95 % of each second) and is stopped for the rest of the
/// second — measured here as 36 ms of p99 lateness with 200 µs of spinning, 0.1 ms with 50.
const SPIN_BEFORE_DUE: Duration = Duration::from_micros(50);
/// Longest the writer waits before looking at the stop flag again.
const IDLE_WAIT: Duration = Duration::from_millis(10);
/// Lateness histogram: 1 µs buckets up to this, the last one open-ended.
const HISTOGRAM_US: usize = 100_000;
const MAX_PACKET_BYTES: usize = 65_536;

/// One TUN device and the rate of its transmitter, bit/s (0: none).
///
/// The rate is the bottleneck's. Its token bucket releases a packet when the packet's
/// transmission would start on a real link, but after a pause, or when its timer fired late, it
/// releases the tokens it saved (its burst) back to back. The transmitter sends at the link's
/// rate, one packet after the other: a transmission starts when the packet arrives or when the
/// previous one is done, whichever is later. So the line delivers at most the link's rate, as a
/// real link does, and holds what a burst brought early (at most the burst) until the link
/// would have sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub tun: String,
    pub rate_bps: u64,
}

/// A device's transmitter: when it is next free.
#[derive(Clone, Copy, Debug)]
struct Transmitter {
    rate_bps: u64,
    free_at: Instant,
}

impl Transmitter {
    /// A packet of `len` bytes arrived at `arrived`: when its transmission ends, and how long
    /// it waited for the packets ahead of it.
    fn send(&mut self, arrived: Instant, len: usize) -> (Instant, Duration) {
        if self.rate_bps == 0 {
            return (arrived, Duration::ZERO);
        }
        let waited = self.free_at.saturating_duration_since(arrived);
        let serialization_ns = (len as u128 * 8 * 1_000_000_000 / u128::from(self.rate_bps)) as u64;
        self.free_at = arrived.max(self.free_at) + Duration::from_nanos(serialization_ns);
        (self.free_at, waited)
    }
}

/// Packets to `network/prefix_len` wait `delay` once their device's transmitter has sent them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub network: Ipv4Addr,
    pub prefix_len: u8,
    pub delay: Duration,
}

impl Route {
    fn matches(&self, dst: Ipv4Addr) -> bool {
        let mask = if self.prefix_len == 0 { 0 } else { u32::MAX << (32 - u32::from(self.prefix_len.min(32))) };
        u32::from(dst) & mask == u32::from(self.network) & mask
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelayLineConfig {
    /// The TUN interfaces (created in the current network namespace if absent).
    pub devices: Vec<Device>,
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
    /// Longest a packet waited for its transmitter, microseconds: the token bucket's burst,
    /// or the reader's own delays.
    pub transmitter_wait_max_us: u64,
}

/// A packet held: when it is due, the device it goes back into, its bytes.
type Held = (Instant, usize, Vec<u8>);

struct Queues {
    /// One FIFO per route.
    per_route: Vec<VecDeque<Held>>,
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

/// Reads whole packets from a device.
type Reader = Box<dyn FnMut(&mut [u8]) -> io::Result<usize> + Send>;
/// Writes a whole packet into a device.
type Writer = Box<dyn FnMut(&[u8]) -> io::Result<()> + Send>;

impl DelayLine {
    /// Opens the TUN devices and starts a reader per device and the writer.
    pub fn start(config: DelayLineConfig) -> io::Result<DelayLine> {
        let mut io: Vec<(Reader, Writer)> = Vec::new();
        for device in &config.devices {
            let tun = Arc::new(crate::tun::open(&device.tun)?);
            let reader = Arc::clone(&tun);
            io.push((Box::new(move |buf: &mut [u8]| (&*reader).read(buf)), Box::new(move |packet: &[u8]| (&*tun).write_all(packet))));
        }
        DelayLine::on_io(io, config)
    }

    /// Runs the delay line on already open devices, one (reader, writer) per configured device
    /// (tests use channels).
    fn on_io(io: Vec<(Reader, Writer)>, config: DelayLineConfig) -> io::Result<DelayLine> {
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
        let mut writers = Vec::new();
        for (index, ((mut read, write), device)) in io.into_iter().zip(&config.devices).enumerate() {
            writers.push(write);
            let shared = Arc::clone(&shared);
            let routes = config.routes.clone();
            let max_queued_bytes = config.max_queued_bytes;
            let mut transmitter = Transmitter { rate_bps: device.rate_bps, free_at: Instant::now() };
            // The reader blocks in read(2); it ends with the device (or the process).
            std::thread::Builder::new().name(format!("delay-line-reader-{index}")).spawn(move || {
                let mut buf = vec![0u8; MAX_PACKET_BYTES];
                while let Ok(n) = read(&mut buf) {
                    let arrived = Instant::now();
                    if shared.stop.load(Ordering::Relaxed) || n == 0 {
                        break;
                    }
                    let destination = ipv4_destination(&buf[..n]);
                    let route = destination.and_then(|dst| routes.iter().position(|r| r.matches(dst)));
                    let mut q = shared.queues.lock().expect("delay line lock");
                    match route {
                        None if destination.is_none() => q.report.ignored_not_ipv4 += 1,
                        None => q.report.dropped_no_route += 1,
                        Some(_) if q.queued_bytes + n > max_queued_bytes => q.report.dropped_queue_full += 1,
                        Some(r) => {
                            let (sent, waited) = transmitter.send(arrived, n);
                            q.report.transmitter_wait_max_us = q.report.transmitter_wait_max_us.max(waited.as_micros() as u64);
                            let due = sent + routes[r].delay;
                            q.queued_bytes += n;
                            q.per_route[r].push_back((due, index, buf[..n].to_vec()));
                            drop(q);
                            shared.wake.notify_one();
                        }
                    }
                }
            })?;
        }
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
                let (due, device, packet) = q.per_route[route].pop_front().expect("head exists");
                q.queued_bytes -= packet.len();
                drop(q);
                while Instant::now() < due {
                    std::hint::spin_loop();
                }
                let written = writers[device](&packet);
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
        Route { network: Ipv4Addr::from(network), prefix_len, delay: Duration::from_millis(ms) }
    }

    #[test]
    fn a_transmitter_sends_one_packet_after_the_other_at_its_rate() {
        // 1500 B at 10 Mbit/s: 1.2 ms; a 52-B ACK: 41.6 µs. Three packets arrive together
        // (a token-bucket burst), a fourth after the transmitter went idle.
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let mut link = Transmitter { rate_bps: 10_000_000, free_at: t0 };
        let sent: Vec<(Instant, Duration)> =
            [(0, 1500), (0, 1500), (0, 52), (10_000, 1500)].into_iter().map(|(us, len)| link.send(at(us), len)).collect();
        let us = Duration::from_micros;
        let ack_done = t0 + Duration::from_nanos(2_441_600);
        assert_eq!(sent, [(at(1_200), us(0)), (at(2_400), us(1_200)), (ack_done, us(2_400)), (at(11_200), us(0))]);
        let mut none = Transmitter { rate_bps: 0, free_at: t0 };
        assert_eq!(none.send(at(5), 1500), (at(5), Duration::ZERO), "no rate: no transmitter");
    }

    /// Feeds `packets` (device, destination, tag) at once into devices with transmitters at
    /// `rates_bps` and collects what comes out, with when and from which device.
    fn run(
        rates_bps: &[u64],
        routes: Vec<Route>,
        packets: Vec<(usize, [u8; 4], u8)>,
        max_queued_bytes: usize,
    ) -> (Vec<(Duration, usize, u8)>, Report) {
        let (out_tx, out_rx) = mpsc::channel::<(Instant, usize, u8)>();
        let mut inputs = Vec::new();
        let mut io: Vec<(Reader, Writer)> = Vec::new();
        for device in 0..rates_bps.len() {
            let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>();
            inputs.push(in_tx);
            let out_tx = out_tx.clone();
            let read = move |buf: &mut [u8]| {
                let p = in_rx.recv().map_err(|_| io::Error::other("closed"))?;
                buf[..p.len()].copy_from_slice(&p);
                Ok(p.len())
            };
            let write = move |p: &[u8]| out_tx.send((Instant::now(), device, p[p.len() - 1])).map_err(|_| io::Error::other("closed"));
            io.push((Box::new(read), Box::new(write)));
        }
        let devices = rates_bps.iter().map(|&rate_bps| Device { tun: "test".into(), rate_bps }).collect();
        let line = DelayLine::on_io(io, DelayLineConfig { devices, routes, max_queued_bytes }).unwrap();
        let start = Instant::now();
        for (device, dst, tag) in packets {
            let mut packet = ipv4_packet(dst, tag);
            if tag >= 100 {
                packet.resize(1500, tag); // a full-size packet, tag last
            }
            inputs[device].send(packet).unwrap();
        }
        std::thread::sleep(Duration::from_millis(120));
        let report = line.stop();
        let out = out_rx.try_iter().map(|(at, device, tag)| (at - start, device, tag)).collect();
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
    fn each_packet_waits_its_routes_delay_in_order_and_goes_back_into_its_device() {
        // Forward 30 ms, reverse 10 ms: the reverse packets come out first, each set in order.
        let routes = vec![route([10, 0, 2, 0], 24, 30), route([10, 0, 1, 0], 24, 10)];
        let packets =
            vec![(0, [10, 0, 2, 1], 1), (1, [10, 0, 1, 1], 2), (0, [10, 0, 2, 1], 3), (1, [10, 0, 1, 1], 4), (0, [10, 9, 9, 9], 5)];
        let (out, report) = run(&[0, 0], routes, packets, 1 << 20);
        let tags: Vec<(usize, u8)> = out.iter().map(|o| (o.1, o.2)).collect();
        assert_eq!(tags, [(1, 2), (1, 4), (0, 1), (0, 3)]);
        for (at, _, tag) in out {
            let want = if tag % 2 == 0 { 10.0 } else { 30.0 };
            let got = at.as_secs_f64() * 1e3;
            assert!(got >= want && got < want + 50.0, "packet {tag} after {got:.3} ms, delay {want} ms");
        }
        assert_eq!((report.packets, report.bytes, report.dropped_no_route), (4, 160, 1));
        assert!(report.lateness_p50_us.is_some() && report.lateness_max_us >= report.lateness_p99_us);
    }

    #[test]
    fn a_burst_leaves_at_the_devices_rate_and_the_other_device_does_not_wait() {
        // Three full-size packets at once into device 0 (10 Mbit/s: 1.2 ms each), one into
        // device 1 (its own transmitter): none leaves before its transmission and delay are
        // over. A busy machine only makes them later.
        let routes = vec![route([10, 0, 2, 0], 24, 5), route([10, 0, 1, 0], 24, 5)];
        let packets = vec![(0, [10, 0, 2, 1], 101), (0, [10, 0, 2, 1], 102), (0, [10, 0, 2, 1], 103), (1, [10, 0, 1, 1], 104)];
        let (out, _) = run(&[10_000_000, 10_000_000], routes, packets, 1 << 20);
        assert_eq!(out.len(), 4);
        for (at, _, tag) in out {
            let earliest = Duration::from_micros(if tag == 104 { 6_200 } else { 5_000 + 1_200 * u64::from(tag - 100) });
            assert!(at >= earliest && at < earliest + Duration::from_millis(50), "packet {tag} after {at:?}, not before {earliest:?}");
        }
    }

    #[test]
    fn a_full_line_drops_and_counts() {
        // Room for two 40-B packets.
        let (out, report) = run(&[0], vec![route([10, 0, 2, 0], 24, 5)], (1..=4).map(|t| (0, [10, 0, 2, 1], t)).collect(), 80);
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
