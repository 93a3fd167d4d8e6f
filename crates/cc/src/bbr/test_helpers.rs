//! Test helpers shared by the BBR v1 (`crate::bbr`) and BBRv3 (`crate::bbr3`) unit tests:
//! millisecond times and stepping the testkit's fixed-rate path until a condition holds.

use crate::testkit::Path;
use crate::CongestionControl;
use tcplab_core::{SimDuration, SimTime};

pub(crate) const MS: SimDuration = SimDuration::from_millis(1);

pub(crate) fn at_ms(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

/// Steps `p` until `done` holds, at most until `limit`.
pub(crate) fn step_until<C>(p: &mut Path<C>, limit: SimTime, mut done: impl FnMut(&Path<C>) -> bool)
where
    C: CongestionControl,
{
    while !done(p) {
        assert!(p.now() < limit, "not reached by {limit:?}");
        p.step();
    }
}

/// Steps `p` into PROBE_RTT (as `mode()` reports it), at most until `limit`; returns the
/// cwnd of the last step before it.
pub(crate) fn step_into_probe_rtt<C: CongestionControl>(p: &mut Path<C>, limit: SimTime) -> u32 {
    let mut cwnd_before = 0;
    step_until(p, limit, |p| {
        if p.sender.cc.mode() != Some("PROBE_RTT") {
            cwnd_before = p.sender.cx.cwnd;
        }
        p.sender.cc.mode() == Some("PROBE_RTT")
    });
    cwnd_before
}
