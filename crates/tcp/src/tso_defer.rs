//! TSO deferral, Linux tcp_output.c `tcp_tso_should_defer` with `sysctl_tcp_tso_win_divisor`
//! = 3 (docs/models.md, GSO bursts): a sender that may send only part of a full GSO burst
//! holds it for the ACK due within min(1 ms, SRTT/2), so an ACK-clocked flow sends full bursts
//! of `tcp_tso_segs` segments rather than two segments per ACK. It sends at once when in
//! Recovery or Loss, when its last departure is more than 1 ms ago, when a full burst or a
//! third of the window fits, when nothing is in flight, or when the next ACK is not due soon.
//! Left out: the case of a partial skb at the end of the written data held for more data
//! (Linux defers it too, unless it carries FIN or EOR), as Nagle is. ns-3 has no GSO and no
//! deferral.

use tcplab_core::{SimDuration, SimTime};

/// Linux `sysctl_tcp_tso_win_divisor`: a third of the window is always worth sending.
pub(crate) const TSO_WIN_DIVISOR: u64 = 3;
/// Linux's 1 ms in `tcp_tso_should_defer`: the longest a sender waits after its last
/// departure, and the most it waits for the next ACK.
const MAX_DEFER: SimDuration = SimDuration::from_millis(1);

/// What `tcp_tso_should_defer` looks at, in bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeferInput {
    pub now: SimTime,
    /// Linux `tcp_wstamp_ns`: the last departure, or for a paced sender the next one.
    pub last_departure: SimTime,
    /// In Recovery or Loss (Linux sends at once from `TCP_CA_Recovery` on).
    pub recovering: bool,
    /// A full burst: `tcp_tso_segs` segments.
    pub full_burst: u64,
    /// What cwnd admits: (cwnd − in flight) · MSS.
    pub cong_win: u64,
    /// What the peer's window admits beyond the data sent.
    pub send_win: u64,
    /// min(peer's window, cwnd · MSS), of which a third is always sent.
    pub window: u64,
    /// The data ready to go in the next burst: at most a full burst.
    pub ready: u64,
    /// When the oldest unacknowledged segment left, if any is.
    pub oldest_sent: Option<SimTime>,
    pub srtt: SimDuration,
}

/// Why a burst is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defer {
    No,
    /// cwnd admits no more than the data at hand (Linux `is_cwnd_limited`).
    CwndLimited,
    /// The peer's window admits no more than the data at hand.
    RwndLimited,
}

/// Linux `tcp_tso_should_defer`.
pub(crate) fn should_defer(i: &DeferInput) -> Defer {
    if i.recovering || i.now > i.last_departure + MAX_DEFER {
        return Defer::No;
    }
    let limit = i.cong_win.min(i.send_win);
    if limit >= i.full_burst || limit >= i.window / TSO_WIN_DIVISOR {
        return Defer::No;
    }
    let Some(oldest) = i.oldest_sent else { return Defer::No };
    // The next ACK is expected one SRTT after the oldest segment left.
    let threshold = SimDuration::from_nanos(i.srtt.as_nanos() / 2).min(MAX_DEFER);
    if oldest + i.srtt > i.now + threshold {
        return Defer::No;
    }
    if i.cong_win < i.send_win {
        if i.cong_win <= i.ready {
            return Defer::CwndLimited;
        }
    } else if i.send_win <= i.ready {
        return Defer::RwndLimited;
    }
    Defer::No
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(v)
    }

    /// An ACK-clocked flow at 20 ms SRTT, cwnd 100, goal 9 segments, its last burst 500 µs
    /// ago, the oldest segment sent 20 ms ago (its ACK is due now), and 3 segments of cwnd
    /// free: it waits (3 < 9 and 3 < 100 / 3 = 33).
    fn held() -> DeferInput {
        DeferInput {
            now: us(100_000),
            last_departure: us(99_500),
            recovering: false,
            full_burst: 9 * MSS,
            cong_win: 3 * MSS,
            send_win: 1000 * MSS,
            window: 100 * MSS,
            ready: 9 * MSS,
            oldest_sent: Some(us(80_000)),
            srtt: SimDuration::from_millis(20),
        }
    }

    #[test]
    fn a_partial_burst_waits_for_the_ack_due_within_a_millisecond() {
        assert_eq!(should_defer(&held()), Defer::CwndLimited);
        // The peer's window, not cwnd, is what is short.
        let rwnd = DeferInput { cong_win: 50 * MSS, send_win: 3 * MSS, ..held() };
        assert_eq!(should_defer(&rwnd), Defer::RwndLimited);
    }

    #[test]
    fn a_full_burst_or_a_third_of_the_window_goes_at_once() {
        assert_eq!(should_defer(&DeferInput { cong_win: 9 * MSS, ..held() }), Defer::No);
        // cwnd 24: a third is 8 segments; 8 free (< 9) are sent, 7 wait.
        let small = DeferInput { window: 24 * MSS, ..held() };
        assert_eq!(should_defer(&DeferInput { cong_win: 8 * MSS, ..small }), Defer::No);
        assert_eq!(should_defer(&DeferInput { cong_win: 7 * MSS, ..small }), Defer::CwndLimited);
    }

    #[test]
    fn no_wait_after_a_millisecond_of_silence_or_in_recovery() {
        // 1 ms after the last departure exactly it still waits; 1 µs later it sends.
        assert_eq!(should_defer(&DeferInput { last_departure: us(99_000), ..held() }), Defer::CwndLimited);
        assert_eq!(should_defer(&DeferInput { last_departure: us(98_999), ..held() }), Defer::No);
        assert_eq!(should_defer(&DeferInput { recovering: true, ..held() }), Defer::No);
    }

    #[test]
    fn no_wait_when_the_next_ack_is_not_due_soon() {
        // The oldest segment left 18.9 ms ago: its ACK is due in 1.1 ms > min(1 ms, 10 ms).
        assert_eq!(should_defer(&DeferInput { oldest_sent: Some(us(81_100)), ..held() }), Defer::No);
        // 19 ms ago: due in 1 ms, it waits.
        assert_eq!(should_defer(&DeferInput { oldest_sent: Some(us(81_000)), ..held() }), Defer::CwndLimited);
        // At 1 ms SRTT the threshold is 500 µs: due in 600 µs sends, in 500 µs waits.
        let short = DeferInput { srtt: SimDuration::from_millis(1), ..held() };
        assert_eq!(should_defer(&DeferInput { oldest_sent: Some(us(99_600)), ..short }), Defer::No);
        assert_eq!(should_defer(&DeferInput { oldest_sent: Some(us(99_500)), ..short }), Defer::CwndLimited);
        assert_eq!(should_defer(&DeferInput { oldest_sent: None, ..held() }), Defer::No);
    }

    #[test]
    fn the_last_data_goes_when_the_window_holds_it_all() {
        // Two segments left to send, three free in cwnd: Linux would hold them for more data
        // from the application (the left-out case); here they go.
        assert_eq!(should_defer(&DeferInput { ready: 2 * MSS, ..held() }), Defer::No);
        // Three left and three free: cwnd is the limit.
        assert_eq!(should_defer(&DeferInput { ready: 3 * MSS, ..held() }), Defer::CwndLimited);
    }
}
