//! ns-3's proportional rate reduction (ns-3 3.44 `TcpPrrRecovery`, the default
//! `TcpSocketBase::RecoveryType`), in bytes, with 3.44's arithmetic kept as it is:
//! - DeliveredData grows by one segment on every duplicate ACK while below RecoverFS, on top of
//!   the SACKed bytes (RFC 6937 counts the segment only without SACK);
//! - RecoverFS is the pipe when recovery starts (`tcb->m_bytesInFlight`);
//! - prr_delivered × ssthresh is a 32-bit product: past 2³² it wraps, so PRR's share comes out
//!   too small (or nothing) in large windows;
//! - prr_delivered − prr_out is unsigned: once more was sent than delivered, the CRB/SSRB bound
//!   is that negative difference, not DeliveredData.
//!
//! The last two are ns-3 bugs (ns-3-dev later switched to 64-bit and signed arithmetic); the
//! ns3 stack reproduces 3.44, and a unit test pins the wrap against values ns-3 3.44 itself
//! returned for the same inputs.

/// `TcpPrrRecovery` state, bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ns3Prr {
    delivered: u32,
    out: u32,
    recovery_flight_size: u32,
}

/// What `DoRecovery` reads of `TcpSocketState`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrrInput {
    pub bytes_in_flight: u32,
    pub ssthresh: u32,
    pub segment_size: u32,
    /// `m_isRetransDataAcked`: this ACK cumulatively acknowledged a retransmission.
    pub retrans_data_acked: bool,
}

impl Ns3Prr {
    /// `EnterRecovery`: RecoverFS = pipe; the new cwnd, or None when nothing counts as delivered
    /// (an empty pipe: the duplicate ACK's segment is only added below RecoverFS), which leaves
    /// cwnd as it is, as ns-3's early return does.
    pub(crate) fn enter_recovery(&mut self, t: PrrInput, delivered_bytes: u32) -> Option<u32> {
        self.out = 0;
        self.delivered = 0;
        self.recovery_flight_size = t.bytes_in_flight;
        self.do_recovery(t, delivered_bytes, true)
    }

    /// `DoRecovery`: the new cwnd, or None when the ACK delivered nothing (cwnd unchanged).
    pub(crate) fn do_recovery(&mut self, t: PrrInput, mut delivered_bytes: u32, is_dup_ack: bool) -> Option<u32> {
        if is_dup_ack && self.delivered < self.recovery_flight_size {
            delivered_bytes += t.segment_size;
        }
        if delivered_bytes == 0 {
            return None;
        }
        self.delivered = self.delivered.wrapping_add(delivered_bytes);
        let send_count: i32 = if t.bytes_in_flight > t.ssthresh {
            // std::ceil(m_prrDelivered * m_ssThresh * 1.0 / RecoverFS) - m_prrOut, the product
            // in uint32_t
            let product = self.delivered.wrapping_mul(t.ssthresh);
            let share = (f64::from(product) / f64::from(self.recovery_flight_size)).ceil();
            (share as i64 - i64::from(self.out)) as i32
        } else {
            // int limit = std::max(m_prrDelivered - m_prrOut, deliveredBytes): unsigned max,
            // then converted to int
            let mut limit = self.delivered.wrapping_sub(self.out).max(delivered_bytes) as i32;
            if t.retrans_data_acked {
                limit = limit.wrapping_add(t.segment_size as i32);
            }
            limit.min((t.ssthresh - t.bytes_in_flight) as i32)
        };
        // force the fast retransmit on entering recovery
        let floor = if self.out > 0 { 0 } else { t.segment_size as i32 };
        Some(t.bytes_in_flight.wrapping_add(send_count.max(floor) as u32))
    }

    /// `UpdateBytesSent`.
    pub(crate) fn on_sent(&mut self, bytes: u32) {
        self.out = self.out.wrapping_add(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(bytes_in_flight: u32, ssthresh: u32) -> PrrInput {
        PrrInput { bytes_in_flight, ssthresh, segment_size: 1448, retrans_data_acked: false }
    }

    #[test]
    fn small_window_follows_rfc_6937_proportion() {
        // RecoverFS 20 000, ssthresh 10 000. Entering: delivered 1448 + 1448 (dupack) = 2896;
        // ⌈2896·10000/20000⌉ = 1448 → cwnd = pipe + 1448.
        let mut p = Ns3Prr::default();
        assert_eq!(p.enter_recovery(input(20_000, 10_000), 1448), Some(21_448));
        p.on_sent(1448);
        // A SACK of 2896 (not a dupack for the count): delivered 5792; ⌈5792/2⌉ − 1448 = 1448.
        assert_eq!(p.do_recovery(input(18_552, 10_000), 2896, false), Some(18_552 + 1448));
        assert_eq!(p.do_recovery(input(18_552, 10_000), 0, false), None);
    }

    #[test]
    fn the_32_bit_product_wraps_as_in_ns3_3_44() {
        // Values from ns-3 3.44's TcpPrrRecovery on the same inputs (ssthresh 2 000 000,
        // pipe 4 000 000): entering gives pipe + 1448 (the forced retransmission), then every
        // ACK of one segment leaves cwnd = pipe (2896·2e6 wraps to 1 497 032 704, a share of 375
        // bytes, less than prr_out).
        let mut p = Ns3Prr::default();
        let mut pipe = 4_000_000;
        assert_eq!(p.enter_recovery(input(pipe, 2_000_000), 1448), Some(4_001_448));
        for _ in 0..5 {
            p.on_sent(1448);
            pipe -= 1448;
            assert_eq!(p.do_recovery(input(pipe, 2_000_000), 1448, false), Some(pipe));
        }
    }

    #[test]
    fn below_ssthresh_more_sent_than_delivered_sends_nothing() {
        // ns-3 3.44: prr_out 20 000 > prr_delivered 2896; the unsigned difference becomes a
        // negative limit, so cwnd = pipe (RFC 6937 would allow DeliveredData, 1448).
        let mut p = Ns3Prr::default();
        p.enter_recovery(input(1_000_000, 2_000_000), 0);
        p.on_sent(20_000);
        assert_eq!(p.do_recovery(input(1_000_000, 2_000_000), 1448, false), Some(1_000_000));
        // With slack, SSRB adds a segment when a retransmission was acknowledged.
        let mut q = Ns3Prr::default();
        q.enter_recovery(input(10_000, 20_000), 1448);
        // an empty pipe: nothing counts as delivered, cwnd stays
        assert_eq!(Ns3Prr::default().enter_recovery(input(0, 20_000), 0), None);
        q.on_sent(1448);
        let t = PrrInput { retrans_data_acked: true, ..input(10_000, 20_000) };
        // delivered 2896 + 2896 = 5792; limit max(5792 − 1448, 2896) + 1448 = 5792
        assert_eq!(q.do_recovery(t, 2896, false), Some(15_792));
    }
}
