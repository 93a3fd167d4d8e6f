//! Trace-driven link directions in the format of Mahimahi's `mm-link` (Netravali et al.,
//! "Mahimahi: Accurate Record-and-Replay for HTTP", USENIX ATC 2015; mahimahi
//! src/frontend/link_queue.cc, `LinkQueue::rationalize()`): a trace lists delivery
//! opportunities, one line each, as whole milliseconds since the start, never decreasing
//! (equal lines are several opportunities in the same millisecond). The trace repeats with
//! the last line's time as its period (`mm-link`'s repeat mode: each wrap adds the last
//! timestamp to the base).
//!
//! Each opportunity carries `OPPORTUNITY_BYTES` bytes. A packet takes the bytes left in the
//! opportunity that finished the packet before it, if that opportunity is not in its past, and
//! then whole opportunities until all of its bytes are carried: it leaves at the opportunity that
//! carries its last byte (then propagates for the link's delay). Bytes of an opportunity that
//! no packet is waiting for are lost, as are opportunities that pass while the queue is empty.
//! Per packet this is O(1) while the link is busy (the next opportunity is the next line) and a
//! binary search in one period after an idle spell.
//!
//! Differences from `mm-link`: its credit is 1504 bytes (its TUN device's largest payload) and it
//! refuses larger packets; here an opportunity carries 1500 bytes of IP packet (plus the link's
//! framing), so a full-size packet takes one opportunity, and larger packets (fragments) take
//! several. `mm-link` keeps time in milliseconds and serves an opportunity only to packets
//! queued before it ran; here time is in nanoseconds and a packet can use an opportunity at the
//! very instant it starts. Left out: `mm-link`'s own queue disciplines (the link's `queue` and
//! `buffer` apply), its non-repeating mode (which stops at the end of the trace).

use crate::link::{FrameFormat, LinkModel, Transmission};
use crate::loss::LossModel;
use std::sync::Arc;
use tcplab_core::{Packet, Rate, SimDuration, SimRng, SimTime};

/// Bytes one delivery opportunity carries.
pub const OPPORTUNITY_BYTES: u32 = 1500;

const NS_PER_MS: u64 = 1_000_000;

/// A parsed trace: opportunity times in ms, not decreasing, the last one > 0 (the period).
#[derive(Debug, PartialEq, Eq)]
pub struct Trace {
    times_ms: Box<[u32]>,
}

impl Trace {
    /// Parses a trace's text; the error names the line and what is wrong, in one line.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut times_ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            let ms: u32 =
                line.parse().map_err(|_| format!("line {}: {line:?} is not a whole number of milliseconds (0 to {})", i + 1, u32::MAX))?;
            if let Some(&before) = times_ms.last() {
                if ms < before {
                    return Err(format!("line {}: {ms} is less than the line before ({before}); a trace's times must not decrease", i + 1));
                }
            }
            times_ms.push(ms);
        }
        match times_ms.last() {
            None => Err("is empty; a trace has one line per delivery opportunity (its time in ms)".into()),
            Some(0) => Err("every time is 0; the last line is the trace's period and must be at least 1 ms".into()),
            Some(_) => Ok(Trace { times_ms: times_ms.into() }),
        }
    }

    /// Reads and parses the trace file at `path`.
    pub fn load(path: &str) -> Result<Trace, String> {
        let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("file {path:?} not found"),
            _ => format!("file {path:?} cannot be read: {e}"),
        })?;
        Trace::parse(&text).map_err(|e| format!("file {path:?}: {e}"))
    }

    /// The time after which the trace repeats.
    pub fn period(&self) -> SimDuration {
        SimDuration::from_millis(u64::from(self.times_ms[self.times_ms.len() - 1]))
    }

    /// Opportunities per period.
    pub fn opportunities(&self) -> usize {
        self.times_ms.len()
    }

    /// Mean capacity over one period.
    pub fn mean_rate(&self) -> Rate {
        let bits = self.times_ms.len() as u128 * u128::from(OPPORTUNITY_BYTES) * 8;
        Rate::from_bps((bits * 1000 / u128::from(self.times_ms[self.times_ms.len() - 1])) as u64)
    }

    fn offset(&self, index: usize) -> SimDuration {
        SimDuration::from_nanos(u64::from(self.times_ms[index]) * NS_PER_MS)
    }
}

/// A link direction whose capacity follows a trace; constant propagation `delay` after the
/// opportunity that carries a packet's last byte; loss per frame as a wired link.
#[derive(Debug)]
pub struct TraceLink {
    trace: Arc<Trace>,
    /// Nominal rate (`LinkModel::rate`): what the memory budget and queues are told.
    rate: Rate,
    delay: SimDuration,
    format: FrameFormat,
    loss: LossModel,
    rng: SimRng,
    /// Index in the trace of the next unused opportunity, and the start of its period.
    next: usize,
    period_start: SimTime,
    /// Bytes left in the last opportunity used, and its time.
    credit: u32,
    credit_at: SimTime,
}

impl TraceLink {
    pub fn new(trace: Arc<Trace>, rate: Rate, delay: SimDuration, format: FrameFormat, loss: LossModel, rng: SimRng) -> Self {
        TraceLink { trace, rate, delay, format, loss, rng, next: 0, period_start: SimTime::ZERO, credit: 0, credit_at: SimTime::ZERO }
    }

    fn next_time(&self) -> SimTime {
        self.period_start + self.trace.offset(self.next)
    }

    /// Moves `next` to the first opportunity at or after `now` (after an idle spell).
    fn skip_to(&mut self, now: SimTime) {
        if self.next_time() >= now {
            return;
        }
        let period = self.trace.period().as_nanos();
        let periods = now.as_nanos() / period;
        // At exactly a period boundary the previous period's last lines (at its end) are due.
        let (periods, offset) = match now.as_nanos() % period {
            0 if periods > 0 => (periods - 1, period),
            rest => (periods, rest),
        };
        self.period_start = SimTime(periods * period);
        self.next = self.trace.times_ms.partition_point(|&ms| u64::from(ms) * NS_PER_MS < offset);
    }

    /// Uses the next opportunity for up to its full bytes; returns its time.
    fn use_opportunity(&mut self, bytes: u64) -> u64 {
        let at = self.next_time();
        let used = bytes.min(u64::from(OPPORTUNITY_BYTES));
        self.credit = OPPORTUNITY_BYTES - used as u32;
        self.credit_at = at;
        self.next += 1;
        if self.next == self.trace.times_ms.len() {
            self.next = 0;
            self.period_start += self.trace.period();
        }
        bytes - used
    }
}

impl LinkModel for TraceLink {
    fn transmit(&mut self, pkt: &Packet, now: SimTime) -> Transmission {
        let (frames, wire_bytes) = self.format.frames(pkt.size);
        let mut left = wire_bytes;
        if self.credit_at >= now {
            let used = left.min(u64::from(self.credit));
            self.credit -= used as u32;
            left -= used;
        }
        if left > 0 {
            self.skip_to(now);
            while left > 0 {
                left = self.use_opportunity(left);
            }
        }
        let done_at = self.credit_at;
        let lost = self.loss.lose_packet(frames, &mut self.rng);
        Transmission { done_at, arrives_at: (!lost).then_some(done_at + self.delay) }
    }

    fn rate(&self) -> Rate {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{DataHeader, Ecn};

    /// A packet of `size` IP bytes.
    fn pkt(size: u32) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq: 0, payload: size - 52, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
    }

    fn link(trace: &str) -> TraceLink {
        let format = FrameFormat { mtu: 1500, framing: 0 };
        let trace = Arc::new(Trace::parse(trace).unwrap());
        TraceLink::new(trace, Rate::from_mbps(100), SimDuration::from_millis(10), format, LossModel::Bernoulli(0.0), SimRng::stream(1, "t"))
    }

    const MS: u64 = NS_PER_MS;

    /// Runs packets (size, offered at ms) through the link as a FIFO transmitter would:
    /// each starts when it is offered or when the one before is done. Returns done times, ms.
    fn done_times(link: &mut TraceLink, packets: &[(u32, f64)]) -> Vec<f64> {
        let mut free = SimTime::ZERO;
        packets
            .iter()
            .map(|&(size, at_ms)| {
                let start = SimTime((at_ms * MS as f64) as u64).max(free);
                free = link.transmit(&pkt(size), start).done_at;
                free.as_nanos() as f64 / MS as f64
            })
            .collect()
    }

    #[test]
    fn one_opportunity_per_ms_carries_12_mbit_s_of_full_size_packets() {
        let mut l = link("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
        assert_eq!(l.trace.mean_rate(), Rate::from_mbps(12));
        // 1000 back-to-back 1500 B packets from t = 0 leave one per ms: the last at 1000 ms,
        // 1.5 MB in 1 s = 12 Mbit/s; each arrives 10 ms later.
        let mut start = SimTime::ZERO;
        let mut last = None;
        for _ in 0..1000 {
            let tx = l.transmit(&pkt(1500), start);
            start = tx.done_at;
            last = Some(tx);
        }
        assert_eq!(last, Some(Transmission { done_at: SimTime(1000 * MS), arrives_at: Some(SimTime(1010 * MS)) }));
    }

    #[test]
    fn packets_share_and_span_opportunities_as_worked_by_hand() {
        // Opportunities at 1, 1, 3, 6 ms (period 6 ms).
        let mut l = link("1\n1\n3\n6\n");
        let packets = [
            (600, 0.0),  // opportunity 1 (1 ms): 900 B left
            (600, 0.5),  // queued at 1 ms: the 900 B left carry it, 300 B left
            (1000, 0.5), // 300 B at 1 ms, then the second 1 ms opportunity: 800 B left
            (1500, 2.0), // the 800 B at 1 ms are past: a whole opportunity, 3 ms
            (3000, 3.0), // 6 ms and the next period's 1 ms and 1 ms: 7 ms
            (100, 7.5),  // idle from 7 to 7.5: 1500 B at 7 ms lost; next is 9 ms (3 + 6)
        ];
        assert_eq!(done_times(&mut l, &packets), [1.0, 1.0, 1.0, 3.0, 7.0, 9.0]);
    }

    #[test]
    fn the_trace_loops_with_its_last_time_as_period() {
        // Period 4 ms: opportunities at 2, 4 | 6, 8 | 10, 12 ...; a packet offered at 4 ms
        // (a period boundary) still gets the first period's opportunity at 4 ms.
        let mut l = link("2\n4\n");
        assert_eq!(
            done_times(&mut l, &[(1500, 0.0), (1500, 4.0), (1500, 4.5), (1500, 1000.0), (1500, 1001.0)]),
            [2.0, 4.0, 6.0, 1000.0, 1002.0]
        );
    }

    #[test]
    fn malformed_traces_are_refused_with_the_line() {
        assert_eq!(Trace::parse("1\n5\n3\n"), Err("line 3: 3 is less than the line before (5); a trace's times must not decrease".into()));
        assert_eq!(Trace::parse("1\n2.5\n"), Err("line 2: \"2.5\" is not a whole number of milliseconds (0 to 4294967295)".into()));
        assert_eq!(Trace::parse(""), Err("is empty; a trace has one line per delivery opportunity (its time in ms)".into()));
        assert!(Trace::parse("0\n0\n").unwrap_err().starts_with("every time is 0"));
        assert!(Trace::load("/nonexistent/x.trace").unwrap_err().starts_with("file \"/nonexistent/x.trace\" not found"));
    }
}
