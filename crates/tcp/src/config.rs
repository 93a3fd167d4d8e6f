//! Per-connection TCP settings, defaulting to Linux (docs/models.md, TCP sender: initial window 10
//! (RFC 6928), 200 ms RTO floor, SACK on with RACK-TLP loss detection, D-SACK, undo and
//! F-RTO, delayed ACK every 2 segments with an adaptive timer from 40 ms and quickack at start
//! and after idle, slow start after idle on, no pacing without fq, GSO bursts).
//! ns-3 defaults differ: MinRto 1 s, DelAckTimeout 200 ms, no quickack, 536-byte segments.

use tcplab_cc::INFINITE_SSTHRESH;
use tcplab_core::SimDuration;

/// RTT estimator and RTO rule (RFC 6298; Linux tcp_rtt_estimator()).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoMode {
    /// Linux `tcp_rtt_estimator`: damped mdev, per-flight rttvar, RTO = SRTT + rttvar.
    #[default]
    Linux,
    /// RFC 6298: RTO = SRTT + max(G, 4·RTTVAR), floored at `min_rto` (ns-3's estimator).
    Rfc6298,
}

/// Whether algorithms without their own pacing (`has_cong_control() == false`) are paced
/// (Linux sch_fq). Algorithms with `cong_control` (BBR) are always paced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacingMode {
    /// Linux with the default qdisc: not paced (the rate is still computed and reported).
    #[default]
    Off,
    /// Linux with the fq qdisc: paced at 200 % (slow start) / 120 % of cwnd·MSS/SRTT.
    Fq,
}

/// Loss detection (Linux `net.ipv4.tcp_recovery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecoveryMode {
    /// Linux's default (tcp_recovery = 1): RACK marks losses by transmission time (RFC 8985)
    /// and a tail loss probe repairs losses at the end of a flight.
    #[default]
    RackTlp,
    /// RFC 6675 DupThresh only: a hole is lost once three segments above it are SACKed; tail
    /// losses wait for the RTO.
    Rfc6675,
}

/// ECN on a connection (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnMode {
    /// Not-ECT data, ECE ignored.
    #[default]
    Off,
    /// RFC 3168: new data ECT(0), retransmissions Not-ECT; the receiver echoes ECE from a
    /// CE mark until a segment with CWR arrives; one window reduction per window.
    Classic,
    /// What Linux does for algorithms with `TCP_CONG_NEEDS_ECN` (DCTCP): every data segment
    /// ECT(0), and the receiver sets ECE on exactly the ACKs that cover CE-marked segments
    /// (an immediate ACK at every change of CE state). The sender reacts as in `Classic`.
    Accurate,
    /// L4S (RFC 9331), what the L4STeam kernel does for TCP Prague (`TCP_CONG_NEEDS_ACCECN`,
    /// `TCP_ECN_ECT_1`): every data segment ECT(1), with `Accurate`'s feedback. Real AccECN
    /// (RFC 9768) counts CE-marked packets in the ACE field so that a lost or coalesced ACK
    /// loses no mark; the per-ACK ECE here conveys the same count as long as every ACK
    /// arrives, which is the simplification.
    L4s,
}

impl EcnMode {
    /// ECN was negotiated (any flavour).
    pub fn enabled(self) -> bool {
        self != EcnMode::Off
    }

    /// The receiver echoes exactly the CE-marked segments (DCTCP-style feedback).
    pub fn accurate_feedback(self) -> bool {
        matches!(self, EcnMode::Accurate | EcnMode::L4s)
    }
}

/// The longest delayed ACK of the adaptive timer (Linux `TCP_DELACK_MAX`).
pub const DELACK_MAX: SimDuration = SimDuration::from_millis(200);

/// Receiver ACK policy (RFC 1122 §4.2.3.2; Linux __tcp_ack_snd_check()).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayedAck {
    /// ACK once this many full segments are unacknowledged (1 = ACK every segment).
    pub every: u32,
    /// Delayed-ACK timer; adaptive: its start and floor (Linux `TCP_ATO_MIN`, 40 ms; ns-3
    /// uses a fixed 200 ms).
    pub timeout: SimDuration,
    /// Quickack segments at connection start (fixed) or the most per entry into quickack
    /// mode (adaptive: Linux `TCP_MAX_QUICKACKS`, 16).
    pub quickack_segments: u32,
    /// Linux's adaptive ATO and quickack re-entry (receiver.rs); false = `timeout` always.
    pub adaptive: bool,
}

impl Default for DelayedAck {
    fn default() -> Self {
        DelayedAck { every: 2, timeout: SimDuration::from_millis(40), quickack_segments: 16, adaptive: true }
    }
}

/// Whose TCP semantics a connection follows (scenario `tcp.stack`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stack {
    /// Linux's: [`crate::TcpSender`].
    #[default]
    Linux,
    /// ns-3 3.44's TcpSocketBase: [`crate::Ns3Sender`]; its receiver advertises the whole
    /// buffer whatever it holds out of order (`TcpRxBuffer::MaxRxSequence`).
    Ns3,
}

/// Settings of one TCP connection (both ends read the same struct).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    pub stack: Stack,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Initial congestion window, packets (RFC 6928).
    pub initial_cwnd: u32,
    /// Initial slow-start threshold, packets.
    pub initial_ssthresh: u32,
    pub min_rto: SimDuration,
    pub max_rto: SimDuration,
    pub initial_rto: SimDuration,
    pub rto_mode: RtoMode,
    /// SACK (RFC 2018/6675); false = NewReno with Linux "Reno emulation" (RFC 6582).
    pub sack: bool,
    /// Send buffer: caps the unacknowledged payload bytes.
    pub snd_buf_bytes: u64,
    /// Receive buffer: the advertised window is this minus the out-of-order bytes held.
    pub rcv_buf_bytes: u64,
    pub pacing: PacingMode,
    pub recovery: RecoveryMode,
    /// Undo of reductions shown spurious by D-SACKs or timestamps, and F-RTO (Linux's
    /// defaults); false also stops the receiver's D-SACK reports.
    pub undo: bool,
    pub ecn: EcnMode,
    pub delayed_ack: DelayedAck,
    /// Linux `tcp_slow_start_after_idle` (tcp_cwnd_restart()).
    pub slow_start_after_idle: bool,
    /// GSO bursts (Linux since 4.17, `tcp_tso_autosize`): a paced sender releases up to ≈ 1 ms
    /// of data back to back per departure, and BBR budgets for such bursts; false = one
    /// segment per departure.
    pub gso: bool,
    /// With `gso`, TSO deferral (Linux `tcp_tso_should_defer`): a partial burst waits up to
    /// 1 ms for the ACK that lets a full one go.
    pub tso_defer: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            stack: Stack::Linux,
            mss: 1448,
            initial_cwnd: 10,
            initial_ssthresh: INFINITE_SSTHRESH,
            min_rto: SimDuration::from_millis(200),
            max_rto: SimDuration::from_secs(120),
            initial_rto: SimDuration::from_secs(1),
            rto_mode: RtoMode::Linux,
            sack: true,
            snd_buf_bytes: 6 << 20,
            rcv_buf_bytes: 6 << 20,
            pacing: PacingMode::Off,
            recovery: RecoveryMode::RackTlp,
            undo: true,
            ecn: EcnMode::Off,
            delayed_ack: DelayedAck::default(),
            slow_start_after_idle: true,
            gso: true,
            tso_defer: true,
        }
    }
}
