//! Token buckets on a link direction: a policer that drops what exceeds its rate and burst
//! (Linux `act_police` with `conform-exceed drop`, the ISP rate limiter BBR's long-term
//! bandwidth model was written for), and a shaper that holds packets back until they conform
//! (Linux `tbf` with the link as its peak rate: its queue is the direction's queue).
//!
//! Tokens are kept as nanoseconds of transmission at the bucket's rate, as Linux keeps them
//! (`toks` in psched time): a packet of L bytes costs L·8/rate; the bucket fills by the time
//! elapsed, up to the burst's worth. Integer throughout, so identical runs stay identical.

use tcplab_core::{Rate, SimDuration, SimTime};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    rate: Rate,
    /// Bucket depth, ns at `rate`.
    depth_ns: u64,
    /// Tokens at `updated`, ns at `rate`.
    tokens_ns: u64,
    updated: SimTime,
}

impl TokenBucket {
    /// A full bucket of `burst` bytes filling at `rate`.
    pub fn new(rate: Rate, burst: u64) -> Self {
        let depth_ns = rate.tx_time(burst).as_nanos();
        TokenBucket { rate, depth_ns, tokens_ns: depth_ns, updated: SimTime::ZERO }
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    fn refill(&mut self, now: SimTime) {
        let elapsed = now.saturating_since(self.updated).as_nanos();
        self.tokens_ns = self.tokens_ns.saturating_add(elapsed).min(self.depth_ns);
        self.updated = self.updated.max(now);
    }

    /// Policing: whether `bytes` arriving at `now` conform; if so their tokens are taken.
    pub fn conforms(&mut self, bytes: u64, now: SimTime) -> bool {
        self.refill(now);
        let cost = self.rate.tx_time(bytes).as_nanos();
        if cost > self.tokens_ns {
            return false;
        }
        self.tokens_ns -= cost;
        true
    }

    /// Shaping: the earliest time from `now` at which `bytes` conform; their tokens are taken
    /// then (the bucket may run into debt no further than one packet's cost, as `tbf`'s does).
    pub fn release_at(&mut self, bytes: u64, now: SimTime) -> SimTime {
        self.refill(now);
        let cost = self.rate.tx_time(bytes).as_nanos();
        let wait = cost.saturating_sub(self.tokens_ns);
        // Not before the packet released last: packets leave in order.
        let at = now.max(self.updated) + SimDuration::from_nanos(wait);
        // At `at` the bucket holds exactly `cost` (or more when there was no wait).
        self.tokens_ns = self.tokens_ns + wait - cost;
        self.updated = at;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    #[test]
    fn a_policer_passes_its_burst_then_its_rate_and_drops_the_rest() {
        // 1.2 Mbit/s: a 1500 B packet costs 10 ms of tokens; a 3000 B bucket holds 20 ms.
        let mut bucket = TokenBucket::new(Rate(1_200_000), 3_000);
        let passed: Vec<bool> = (0..4).map(|_| bucket.conforms(1_500, ms(0))).collect();
        assert_eq!(passed, [true, true, false, false], "the burst: two packets at once");
        assert!(!bucket.conforms(1_500, ms(9)), "9 ms refill 9 ms of the 10 ms a packet costs");
        assert!(bucket.conforms(1_500, ms(10)));
        // Idle for a second: the bucket holds its depth (two packets), not a second's worth.
        let burst: Vec<bool> = (0..3).map(|_| bucket.conforms(1_500, ms(1_010))).collect();
        assert_eq!(burst, [true, true, false]);
        // A small packet fits where a large one does not: 5 ms later, 5 ms of tokens = 750 B.
        assert!(!bucket.conforms(1_500, ms(1_015)));
        assert!(bucket.conforms(750, ms(1_015)));
    }

    #[test]
    fn a_shaper_releases_the_burst_at_once_then_one_packet_per_cost() {
        let mut bucket = TokenBucket::new(Rate(1_200_000), 3_000);
        let at: Vec<SimTime> = (0..5).map(|_| bucket.release_at(1_500, ms(0))).collect();
        // Two from the full bucket, then one every 10 ms.
        assert_eq!(at, [ms(0), ms(0), ms(10), ms(20), ms(30)]);
        // Asked later than it could go, a packet goes at once and tokens restart from then.
        assert_eq!(bucket.release_at(1_500, ms(45)), ms(45));
        assert_eq!(bucket.release_at(1_500, ms(45)), ms(50), "5 ms of tokens were left after 45 ms");
    }
}
