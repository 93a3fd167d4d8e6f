//! The event scheduler: a binary heap ordered by (time, insertion sequence), so events at
//! the same instant run in the order they were scheduled — deterministic by construction.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we pop the earliest entry.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A queue of future events of type `E`.
pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    executed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler { heap: BinaryHeap::with_capacity(1024), next_seq: 0, now: SimTime::ZERO, executed: 0 }
    }

    /// The time of the event being processed (or of the last one popped).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Schedules `event` at `time`; a time in the past is clamped to now.
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let time = time.max(self.now);
        self.heap.push(Entry { time, seq: self.next_seq, event });
        self.next_seq += 1;
    }

    /// Pops the earliest event if it is not later than `until`, advancing the clock.
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        if self.heap.peek()?.time > until {
            return None;
        }
        let e = self.heap.pop()?;
        self.now = e.time;
        self.executed += 1;
        Some((e.time, e.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_fifo_among_equal_times() {
        let mut s = Scheduler::new();
        s.schedule(SimTime(30), "c");
        s.schedule(SimTime(10), "a1");
        s.schedule(SimTime(20), "b");
        s.schedule(SimTime(10), "a2");
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(SimTime::MAX).map(|(_, e)| e)).collect();
        assert_eq!(order, ["a1", "a2", "b", "c"]);
        assert_eq!(s.now(), SimTime(30));
    }

    #[test]
    fn stops_at_the_horizon_and_clamps_past_times() {
        let mut s = Scheduler::new();
        s.schedule(SimTime(5), 1);
        s.schedule(SimTime(50), 2);
        assert_eq!(s.pop_until(SimTime(10)), Some((SimTime(5), 1)));
        assert_eq!(s.pop_until(SimTime(10)), None);
        s.schedule(SimTime(1), 3); // in the past: runs now
        assert_eq!(s.pop_until(SimTime(10)), Some((SimTime(5), 3)));
    }
}
