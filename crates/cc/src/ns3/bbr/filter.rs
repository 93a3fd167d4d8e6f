//! ns-3's `WindowedFilter` (`windowed-filter.h`, from QUIC's windowed_filter.h) as TcpBbr
//! instantiates it for its max-bandwidth filter: bit/s over 32-bit packet-timed rounds.

/// ns-3 `WindowedFilter<DataRate, MaxFilter<DataRate>, uint32_t, uint32_t>`: Kathleen
/// Nichols' windowed max over packet-timed rounds, bit/s. Unlike Linux `minmax`, any sample
/// replaces a best equal to the filter's zero value (the initial nominal rate here).
#[derive(Clone, Debug, Default)]
pub(super) struct MaxBwFilter {
    window: u32,
    zero: u64,
    /// (rate, round), best first.
    s: [(u64, u32); 3],
}

impl MaxBwFilter {
    pub(super) fn new(window: u32, zero: u64, t: u32) -> Self {
        MaxBwFilter { window, zero, s: [(zero, t); 3] }
    }

    pub(super) fn best(&self) -> u64 {
        self.s[0].0
    }

    /// `WindowedFilter::Update` (`MaxFilter` compares with >=).
    pub(super) fn update(&mut self, v: u64, t: u32) {
        let win = self.window;
        if self.s[0].0 == self.zero || v >= self.s[0].0 || t.wrapping_sub(self.s[2].1) > win {
            self.s = [(v, t); 3];
            return;
        }
        if v >= self.s[1].0 {
            self.s[1] = (v, t);
            self.s[2] = (v, t);
        } else if v >= self.s[2].0 {
            self.s[2] = (v, t);
        }
        if t.wrapping_sub(self.s[0].1) > win {
            self.s = [self.s[1], self.s[2], (v, t)];
            if t.wrapping_sub(self.s[0].1) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
            }
            return;
        }
        if self.s[1].0 == self.s[0].0 && t.wrapping_sub(self.s[1].1) > win >> 2 {
            self.s[1] = (v, t);
            self.s[2] = (v, t);
            return;
        }
        if self.s[2].0 == self.s[1].0 && t.wrapping_sub(self.s[2].1) > win >> 1 {
            self.s[2] = (v, t);
        }
    }
}
