//! ns-3's RTT estimator and RTO (ns-3 3.44 `RttMeanDeviation` with its default gains α = 1/8,
//! β = 1/4, updated in integer nanoseconds with shifts as `RttMeanDeviation::IntegerUpdate`;
//! `TcpSocketBase::EstimateRtt`: RTO = max(SRTT + max(G, 4·RTTVAR), MinRto), G = 1 ms).

use tcplab_core::SimDuration;

/// ns-3 `TcpSocketBase::ClockGranularity` default.
const CLOCK_GRANULARITY: SimDuration = SimDuration::from_millis(1);

/// `RttMeanDeviation` state.
#[derive(Clone, Debug, Default)]
pub(crate) struct RttMeanDeviation {
    /// Estimate (SRTT) and variation (RTTVAR), ns; None before the first measurement.
    state: Option<(i64, i64)>,
}

impl RttMeanDeviation {
    /// `RttMeanDeviation::Measurement`: the first sets SRTT = m, RTTVAR = m/2.
    pub(crate) fn measurement(&mut self, m: SimDuration) {
        let m = m.as_nanos() as i64;
        self.state = Some(match self.state {
            None => (m, m / 2),
            Some((srtt, var)) => {
                let delta = m - srtt;
                let srtt = ((srtt << 3) + delta) >> 3;
                let var = ((var << 2) + (delta.abs() - var)) >> 2;
                (srtt, var)
            }
        });
    }

    pub(crate) fn srtt(&self) -> SimDuration {
        SimDuration::from_nanos(self.state.map_or(0, |(s, _)| s.max(0) as u64))
    }

    /// RFC 6298 (2.4) as `TcpSocketBase::EstimateRtt`/`NewAck` compute it; `None` before the
    /// first measurement.
    pub(crate) fn rto(&self, min_rto: SimDuration) -> Option<SimDuration> {
        let (srtt, var) = self.state?;
        let spread = SimDuration::from_nanos((4 * var).max(0) as u64).max(CLOCK_GRANULARITY);
        Some((SimDuration::from_nanos(srtt.max(0) as u64) + spread).max(min_rto))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    #[test]
    fn first_sample_then_integer_updates_by_hand() {
        let mut r = RttMeanDeviation::default();
        assert_eq!(r.rto(ms(1000)), None);
        r.measurement(ms(40));
        // SRTT 40 ms, RTTVAR 20 ms: 40 + 80 = 120 ms, floored at MinRto 1 s.
        assert_eq!(r.srtt(), ms(40));
        assert_eq!(r.rto(ms(1000)), Some(ms(1000)));
        assert_eq!(r.rto(ms(10)), Some(ms(120)));
        r.measurement(ms(48));
        // delta 8 ms: SRTT 40 + 8/8 = 41 ms; RTTVAR 20 + (8 − 20)/4 = 17 ms.
        assert_eq!(r.srtt(), ms(41));
        assert_eq!(r.rto(ms(10)), Some(ms(41 + 68)));
    }

    #[test]
    fn granularity_bounds_the_variation_term() {
        let mut r = RttMeanDeviation::default();
        for _ in 0..200 {
            r.measurement(ms(10));
        }
        // RTTVAR decays to 0: RTO = SRTT + G = 11 ms.
        assert_eq!(r.rto(SimDuration::ZERO), Some(ms(11)));
    }
}
