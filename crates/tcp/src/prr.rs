//! Proportional Rate Reduction as Linux `tcp_cwnd_reduction` does it (RFC 6937
//! with Linux's slow-start reduction bound). Used in CWR and Recovery by algorithms without
//! `cong_control`. While in-flight is above ssthresh the sender releases
//! ⌈ssthresh·prr_delivered / prior_cwnd⌉ − prr_out packets; below it, it grows back towards
//! ssthresh no faster than slow start. ns-3's TcpPrrRecovery implements RFC 6937 in bytes
//! with the conservative bound (no "+1 on snd_una advance").

/// Per-episode PRR counters (Linux `prr_delivered`, `prr_out`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prr {
    delivered: u32,
    out: u32,
}

/// What one ACK brought, as `tcp_cwnd_reduction` sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrrAck {
    pub ssthresh: u32,
    pub prior_cwnd: u32,
    /// Packets in flight after this ACK's loss marking.
    pub in_flight: u32,
    /// Packets newly ACKed or SACKed.
    pub newly_acked_sacked: u32,
    /// Packets newly marked lost.
    pub newly_lost: u32,
    pub snd_una_advanced: bool,
}

impl Prr {
    /// A reduction starts (Linux `tcp_init_cwnd_reduction`).
    pub(crate) fn start(&mut self) {
        *self = Prr::default();
    }

    /// A packet was sent during the reduction.
    pub(crate) fn on_sent(&mut self) {
        self.out += 1;
    }

    /// The new cwnd after this ACK, or None if the ACK delivered nothing.
    pub(crate) fn cwnd_after_ack(&mut self, a: &PrrAck) -> Option<u32> {
        if a.newly_acked_sacked == 0 || a.prior_cwnd == 0 {
            return None;
        }
        self.delivered += a.newly_acked_sacked;
        let delta = i64::from(a.ssthresh) - i64::from(a.in_flight);
        let mut sndcnt = if delta < 0 {
            let dividend = u64::from(a.ssthresh) * u64::from(self.delivered) + u64::from(a.prior_cwnd) - 1;
            (dividend / u64::from(a.prior_cwnd)) as i64 - i64::from(self.out)
        } else {
            let mut n = (i64::from(self.delivered) - i64::from(self.out)).max(i64::from(a.newly_acked_sacked));
            if a.snd_una_advanced && a.newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // The fast retransmit always goes out.
        sndcnt = sndcnt.max(if self.out == 0 { 1 } else { 0 });
        Some((i64::from(a.in_flight) + sndcnt) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(in_flight: u32, newly: u32) -> PrrAck {
        PrrAck { ssthresh: 20, prior_cwnd: 40, in_flight, newly_acked_sacked: newly, newly_lost: 0, snd_una_advanced: false }
    }

    #[test]
    fn proportional_part_by_hand() {
        let mut p = Prr::default();
        // entering: ⌈20·1/40⌉ − 0 = 1 → cwnd = 36 + 1 (the fast retransmit)
        assert_eq!(p.cwnd_after_ack(&ack(36, 1)), Some(37));
        p.on_sent();
        // ⌈20·2/40⌉ − 1 = 0 → cwnd = in_flight
        assert_eq!(p.cwnd_after_ack(&ack(35, 1)), Some(35));
        // ⌈20·3/40⌉ − 1 = 1
        assert_eq!(p.cwnd_after_ack(&ack(34, 1)), Some(35));
        p.on_sent();
        // a stretch ACK delivering 5: ⌈20·8/40⌉ − 2 = 2
        assert_eq!(p.cwnd_after_ack(&ack(30, 5)), Some(32));
    }

    #[test]
    fn whole_round_releases_half_of_the_deliveries() {
        // A window of 40 delivered one packet per ACK: ⌈20·40/40⌉ = 20 packets sent, and
        // the pipe ends at ssthresh.
        let mut p = Prr::default();
        let mut in_flight = 40;
        for _ in 0..40 {
            in_flight -= 1;
            let cwnd = p.cwnd_after_ack(&ack(in_flight, 1)).unwrap();
            while in_flight < cwnd {
                p.on_sent();
                in_flight += 1;
            }
        }
        assert_eq!((p.out, in_flight), (20, 20));
    }

    #[test]
    fn slow_start_bound_below_ssthresh() {
        let mut p = Prr { delivered: 8, out: 8 };
        // delta = 20 − 15 = 5; max(10 − 8, 2) + 1 (snd_una advanced, no new loss) = 3
        let a = PrrAck { in_flight: 15, newly_acked_sacked: 2, snd_una_advanced: true, ..ack(0, 0) };
        assert_eq!(p.cwnd_after_ack(&a), Some(18));
        // delta = 2 caps the burst: max(14 − 8, 4) + 1 = 7 → 2
        let a = PrrAck { in_flight: 18, newly_acked_sacked: 4, snd_una_advanced: true, ..ack(0, 0) };
        assert_eq!(p.cwnd_after_ack(&a), Some(20));
        // a new loss on this ACK removes the +1
        let mut p = Prr { delivered: 8, out: 8 };
        let a = PrrAck { in_flight: 15, newly_acked_sacked: 2, snd_una_advanced: true, newly_lost: 1, ..ack(0, 0) };
        assert_eq!(p.cwnd_after_ack(&a), Some(17));
    }

    #[test]
    fn first_ack_always_allows_the_fast_retransmit() {
        let mut p = Prr::default();
        // pipe exactly at ssthresh: delta = 0 would allow nothing, but prr_out == 0 forces 1
        assert_eq!(p.cwnd_after_ack(&ack(20, 1)), Some(21));
        let mut p = Prr::default();
        assert_eq!(p.cwnd_after_ack(&ack(20, 0)), None, "nothing delivered: cwnd untouched");
    }
}
