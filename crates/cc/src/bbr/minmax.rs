//! Windowed running maximum as Linux lib/win_minmax.c (Kathleen Nichols' algorithm), used by
//! BBR v1 for its bandwidth filter (Linux bbr_update_bw()): the best, second-best and
//! third-best samples of the window are kept so the maximum can expire in O(1) per update.
//! Only the max half is needed here. ns-3 TcpBbr uses the same algorithm (`WindowedFilter`).
//! Values are u64 where Linux has u32 (BBR bandwidths never wrap here).

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    /// Time of the sample, in the caller's unit (BBR: packet-timed rounds).
    t: u32,
    v: u64,
}

/// Maximum of the samples of the last `win` time units.
#[derive(Clone, Debug, Default)]
pub(super) struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    pub(super) fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets everything: `v` at `t` becomes best, second and third choice.
    fn reset(&mut self, t: u32, v: u64) {
        self.s = [Sample { t, v }; 3];
    }

    /// Linux `minmax_running_max`: adds `v` measured at `t`, returns the windowed maximum.
    pub(super) fn update(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let new = Sample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].v {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].v {
            self.s[2] = new;
        }
        self.subwin_update(win, new)
    }

    /// Linux `minmax_subwin_update`: expires the best choice once it is older than the
    /// window, and keeps the second and third choices from the later quarters of it.
    fn subwin_update(&mut self, win: u32, new: Sample) -> u64 {
        let dt = new.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s = [self.s[1], self.s[2], new];
            if new.t.wrapping_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], new];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one from it.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed with no third choice: take one from it.
            self.s[2] = new;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_larger_sample_wins_at_once_and_a_smaller_one_waits_for_the_window() {
        let mut f = MaxFilter::default();
        assert_eq!(f.update(10, 0, 100), 100);
        assert_eq!(f.update(10, 1, 50), 100);
        assert_eq!(f.update(10, 2, 200), 200);
        // 200 (round 2) is the maximum of rounds 2..=12 and expires at round 13.
        for t in 3..=12 {
            assert_eq!(f.update(10, t, 60), 200, "round {t}");
        }
        assert_eq!(f.update(10, 13, 60), 60);
    }

    #[test]
    fn the_next_best_sample_of_the_window_takes_over_when_the_best_expires() {
        let mut f = MaxFilter::default();
        f.update(10, 0, 100);
        // 90 at round 3 (after a quarter window) becomes second choice, 80 at round 6 third.
        f.update(10, 3, 90);
        f.update(10, 6, 80);
        assert_eq!(f.update(10, 11, 10), 90);
        assert_eq!(f.update(10, 14, 10), 80);
    }
}
