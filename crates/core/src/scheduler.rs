//! The event scheduler: a priority queue ordered by (time, insertion sequence), so events at
//! the same instant run in the order they were scheduled — deterministic by construction.
//!
//! It is a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan, "Faster algorithms for the shortest
//! path problem", J. ACM 37(2), 1990): a simulator never schedules before the event it runs,
//! so every key pushed is at least the last one popped, and an entry sits in the bucket of the
//! highest bit in which its key differs from that last key. Pushing is one append; popping
//! takes the first non-empty bucket's entry if it holds one, else empties it into lower ones
//! about the new minimum, so each entry moves at most once per bit of the key; the buckets'
//! vectors are reused: no allocation once they have grown. Keys are (time ns, sequence),
//! compared as one 128-bit number. Against the binary heap it replaced (2026-11-26): −1.6 % of
//! the instructions per delivered packet with one flow, −13 % with 10 flows, −24 % with 1000.

use crate::time::SimTime;

/// Buckets: one per bit of the 128-bit key, and bucket 0 for the key equal to the last popped.
const BUCKETS: usize = 129;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (u64, u64) {
        (self.time.0, self.seq)
    }
}

/// The bucket of `key` about `last`: 0 when equal, else one plus the index of the highest bit in
/// which they differ (the time's bits above the sequence's).
#[inline]
fn bucket((time, seq): (u64, u64), (last_time, last_seq): (u64, u64)) -> usize {
    if time != last_time {
        64 + (64 - (time ^ last_time).leading_zeros() as usize)
    } else {
        64 - (seq ^ last_seq).leading_zeros() as usize
    }
}

/// A queue of future events of type `E`.
pub struct Scheduler<E> {
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit i - 1 set when bucket i (1 to 128) holds entries.
    occupied: u128,
    /// The key of the last entry popped: every key queued is at least this.
    last: (u64, u64),
    len: usize,
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
        Scheduler {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: (0, 0),
            len: 0,
            next_seq: 0,
            now: SimTime::ZERO,
            executed: 0,
        }
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
        self.len
    }

    /// Schedules `event` at `time`; a time in the past is clamped to now.
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let entry = Entry { time: time.max(self.now), seq: self.next_seq, event };
        self.next_seq += 1;
        self.put(entry, self.last);
        self.len += 1;
    }

    /// Pops the earliest event if it is not later than `until`, advancing the clock.
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        let (first, min) = self.first_bucket_min()?;
        if SimTime(min.0) > until {
            return None;
        }
        let e = if first == 0 {
            self.buckets[0].pop().expect("bucket 0 holds the minimum")
        } else {
            self.last = min;
            self.occupied &= !(1 << (first - 1));
            if self.buckets[first].len() == 1 {
                self.buckets[first].pop().expect("the minimum")
            } else {
                // Every entry of the bucket goes to a lower one about the new minimum, the
                // minimum itself to bucket 0.
                let mut moving = std::mem::take(&mut self.buckets[first]);
                for entry in moving.drain(..) {
                    self.put(entry, min);
                }
                self.buckets[first] = moving; // keeps its capacity
                self.buckets[0].pop().expect("the minimum is in bucket 0")
            }
        };
        self.len -= 1;
        self.now = e.time;
        self.executed += 1;
        Some((e.time, e.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.first_bucket_min().map(|(_, (time, _))| SimTime(time))
    }

    /// Puts `entry` in its bucket about `last`.
    #[inline]
    fn put(&mut self, entry: Entry<E>, last: (u64, u64)) {
        let i = bucket(entry.key(), last);
        if i > 0 {
            self.occupied |= 1 << (i - 1);
        }
        self.buckets[i].push(entry);
    }

    /// The first non-empty bucket and the smallest key in it, which is the smallest queued.
    fn first_bucket_min(&self) -> Option<(usize, (u64, u64))> {
        let first = if self.buckets[0].is_empty() {
            if self.occupied == 0 {
                return None;
            }
            self.occupied.trailing_zeros() as usize + 1
        } else {
            0
        };
        let min = self.buckets[first].iter().map(Entry::key).min().expect("non-empty");
        Some((first, min))
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
    fn pops_what_a_sorted_reference_pops_under_random_schedules() {
        // A simulator's pattern: pop one, schedule a few at or after it, now and then stop at
        // a horizon; times span 0 to 2^40 ns with many ties.
        let mut rng = crate::SimRng::stream(7, "scheduler");
        let mut s = Scheduler::new();
        let mut reference: std::collections::BTreeMap<(u64, u64), u32> = Default::default();
        let mut seq = 0u64;
        let mut schedule = |s: &mut Scheduler<u32>, reference: &mut std::collections::BTreeMap<(u64, u64), u32>, t: u64| {
            let t = t.max(s.now().0);
            s.schedule(SimTime(t), seq as u32);
            reference.insert((t, seq), seq as u32);
            seq += 1;
        };
        for _ in 0..100 {
            schedule(&mut s, &mut reference, rng.next_u64() % (1 << 40));
        }
        for step in 0..20_000u64 {
            let horizon = if step % 97 == 0 { SimTime(s.now().0 + rng.next_u64() % 1000) } else { SimTime::MAX };
            let expected = reference.first_key_value().filter(|((t, _), _)| SimTime(*t) <= horizon).map(|(k, v)| (*k, *v));
            let got = s.pop_until(horizon);
            assert_eq!(got.map(|(t, e)| (t.0, e)), expected.map(|((t, _), v)| (t, v)), "step {step}");
            if let Some((key, _)) = expected {
                reference.remove(&key);
            }
            assert_eq!(s.pending(), reference.len());
            assert_eq!(s.peek_time().map(|t| t.0), reference.keys().next().map(|(t, _)| *t));
            for _ in 0..(rng.next_u64() % 3) {
                let gap = match rng.next_u64() % 4 {
                    0 => 0,
                    1 => rng.next_u64() % 1000,
                    _ => rng.next_u64() % (1 << 30),
                };
                let at = s.now().0 + gap;
                schedule(&mut s, &mut reference, at);
            }
        }
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
