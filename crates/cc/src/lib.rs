//! tcplab-cc: congestion control as Linux structures it (tcp_cong.c, `struct tcp_congestion_ops`).
//! The sender owns the window (`CcCx::cwnd`, `ssthresh`, `cwnd_cnt`, like Linux's `struct
//! tcp_sock`) and calls the hooks of a [`CongestionControl`] in Linux's per-ACK order; an algorithm
//! only reacts to hooks and edits the window or the pacing rate. Nothing here knows of packets or
//! links: an algorithm can be tested with a dozen lines of fake ACKs.
//!
//! This departs from the `on_ack/on_loss/cwnd()` shape a minimal interface would have on purpose:
//! mirroring `tcp_congestion_ops` one-to-one keeps every port line-by-line checkable against
//! the Linux sources (see docs/architecture.md).

pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod config;
pub mod cubic;
pub mod dctcp;
pub mod gso;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod ledbat;
pub mod ns3;
pub mod prague;
pub mod rate_sample;
pub mod reno;
pub mod scalable;
pub mod siad;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod vegas;
pub mod westwood;
pub mod yeah;

pub use config::{AlgorithmInfo, CcConfig, ParamInfo};
pub use rate_sample::RateSample;

use std::fmt;
use tcplab_core::SimTime;

/// "Infinite" ssthresh, as Linux `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux congestion-avoidance state (`icsk_ca_state`), ordered as in Linux.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Events of `cwnd_event` (Linux `enum tcp_ca_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndEvent {
    /// First transmission when nothing is in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of congestion window reduction (leaving CWR or Recovery).
    CompleteCwr,
    /// Retransmission timeout.
    Loss,
    /// The receiver saw a CE mark where the previous packet had none.
    EcnIsCe,
    /// The receiver saw no CE mark where the previous packet had one.
    EcnNoCe,
}

/// Flags of `in_ack_event` (Linux `CA_ACK_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckFlags {
    /// The ACK was processed on the slow path (carried SACK, was a duplicate, ...).
    pub slowpath: bool,
    /// The ACK only updated the window.
    pub win_update: bool,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
}

/// Argument of `pkts_acked` (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// Packets removed from the retransmit queue by this ACK (cumulatively ACKed).
    pub pkts_acked: u32,
    /// RTT of the newest never-retransmitted packet this ACK newly (S)ACKed, µs; -1 if none.
    pub rtt_us: i64,
    /// Packets in flight before this ACK.
    pub in_flight: u32,
}

/// BBR's path model as Linux reports it (`struct tcp_bbr_info`, filled by `bbr_get_info` for
/// `TCP_CC_INFO`), in Linux's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrInfo {
    /// Bandwidth estimate, bytes/s (`bbr_bw_lo` | `bbr_bw_hi` << 32).
    pub bw_bytes_per_sec: u64,
    /// Windowed minimum RTT, µs (`bbr_min_rtt`); `u32::MAX` before any RTT sample.
    pub min_rtt_us: u32,
    /// Pacing gain in 1/256 (`bbr_pacing_gain`, BBR_UNIT = 256).
    pub pacing_gain: u32,
    /// cwnd gain in 1/256 (`bbr_cwnd_gain`).
    pub cwnd_gain: u32,
    /// BBR v1's long-term ("policer") bandwidth, bytes/s, while BBR paces at it (Linux
    /// `lt_use_bw`, not in `tcp_bbr_info`); None otherwise and for other BBR versions.
    pub lt_bw_bytes_per_sec: Option<u64>,
}

impl BbrInfo {
    /// A gain as a ratio (gains are fixed point in 1/BBR_UNIT).
    pub fn gain_ratio(gain: u32) -> f64 {
        f64::from(gain) / f64::from(bbr::BBR_UNIT)
    }
}

/// The sender state an algorithm sees and edits: Linux's `struct tcp_sock` fields that
/// `tcp_congestion_ops` implementations touch. Windows in packets, sequence numbers in
/// segments, times in simulated ns (`now`) or µs (`*_us`, as Linux).
#[derive(Clone, Debug)]
pub struct CcCx {
    pub now: SimTime,
    /// Payload bytes per segment.
    pub mss: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Linux `snd_cwnd_cnt`: congestion-avoidance credit.
    pub cwnd_cnt: u32,
    /// Upper bound of cwnd (Linux `snd_cwnd_clamp`).
    pub cwnd_clamp: u32,
    /// cwnd saved by the sender when a reduction started (for undo).
    pub prior_cwnd: u32,
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next new segment to send.
    pub snd_nxt: u32,
    /// Segments sent and not yet cumulatively ACKed.
    pub packets_out: u32,
    /// Linux `tcp_packets_in_flight`: packets_out − (sacked + lost) + retransmitted.
    pub in_flight: u32,
    /// Smoothed RTT in µs, 0 before the first sample (Linux keeps srtt_us << 3; this is plain µs).
    pub srtt_us: u64,
    /// Windowed minimum RTT (Linux `tcp_min_rtt`, 300 s window), µs; `u64::MAX` before any sample.
    pub min_rtt_us: u64,
    /// Packets delivered (ACKed or SACKed) so far.
    pub delivered: u64,
    /// CE-marked packets delivered so far.
    pub delivered_ce: u64,
    /// When `delivered` last changed (Linux `delivered_mstamp`).
    pub delivered_time: SimTime,
    /// Packets marked lost so far.
    pub lost: u64,
    /// Linux `app_limited`: 0, or the `delivered` count that ends the current app-limited bubble.
    pub app_limited: u64,
    /// Linux `is_cwnd_limited`: the last flight was limited by cwnd.
    pub is_cwnd_limited: bool,
    /// Most packets in flight during the last flight (Linux `max_packets_out`).
    pub max_packets_out: u32,
    pub ca_state: CaState,
    /// Pacing rate in bytes per second (Linux `sk_pacing_rate`); 0 = unset. Set by
    /// `cong_control` algorithms, or by the sender's fq rule (Linux sch_fq).
    pub pacing_rate: u64,
    /// Whether packets are actually paced (BBR always; others only with `pacing = "fq"`).
    pub paced: bool,
    /// Earliest departure time of the next packet (Linux `tcp_wstamp_ns`).
    pub next_send_time: SimTime,
    /// When data was last sent (Linux `lsndtime`). The sender raises `CwndEvent::TxStart`
    /// *before* updating it, so during that event it still holds the previous send time
    /// (CUBIC shifts its epoch by the idle time, Linux cubictcp_cwnd_event()).
    pub last_send_time: SimTime,
    /// ECN negotiated for this connection.
    pub ecn_enabled: bool,
    /// The sender builds GSO bursts (scenario `tcp.gso`, Linux since 4.17): BBR then budgets
    /// for bursts sized from the pacing rate, else for single segments.
    pub gso: bool,
}

impl CcCx {
    /// A fresh connection: cwnd 10, ssthresh infinite, no GSO until the sender turns it on.
    pub fn new(mss: u32) -> Self {
        CcCx {
            now: SimTime::ZERO,
            mss,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: 0,
            snd_una: 0,
            snd_nxt: 0,
            packets_out: 0,
            in_flight: 0,
            srtt_us: 0,
            min_rtt_us: u64::MAX,
            delivered: 0,
            delivered_ce: 0,
            delivered_time: SimTime::ZERO,
            lost: 0,
            app_limited: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            ca_state: CaState::Open,
            pacing_rate: 0,
            paced: false,
            next_send_time: SimTime::ZERO,
            last_send_time: SimTime::ZERO,
            ecn_enabled: false,
            gso: false,
        }
    }

    /// Linux `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `tcp_is_cwnd_limited`.
    pub fn is_cwnd_limited(&self) -> bool {
        if self.in_slow_start() {
            return self.cwnd < 2 * self.max_packets_out;
        }
        self.is_cwnd_limited
    }

    /// Linux `tcp_slow_start`: grows cwnd by `acked` up to ssthresh; returns the leftover
    /// `acked` for congestion avoidance in the same ACK (Linux tcp_slow_start()).
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let leftover = acked - (cwnd - self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        leftover
    }

    /// Linux `tcp_cong_avoid_ai`: +1 packet per `w` packets acked.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// A congestion-control algorithm: Linux `tcp_congestion_ops`. The sender calls the hooks in Linux
/// order (Linux tcp_ack(), tcp_cong_control()): `in_ack_event`, `pkts_acked`, loss detection
/// (`ssthresh`, `set_state`, `cwnd_event(CompleteCwr)`), then `cong_control` if
/// [`has_cong_control`](Self::has_cong_control), else PRR in CWR/Recovery or `cong_avoid`.
pub trait CongestionControl: Send + fmt::Debug {
    /// Name as in the scenario file (`"cubic"`, `"bbr"`, ...).
    fn name(&self) -> &'static str;

    /// Connection established.
    fn init(&mut self, _cx: &mut CcCx) {}

    /// The new ssthresh on entering Recovery, CWR or Loss.
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32;

    /// Window growth; called only in Open/Disorder on ACKs that may raise cwnd.
    fn cong_avoid(&mut self, _cx: &mut CcCx, _acked: u32) {}

    /// True for algorithms that replace `cong_avoid` + PRR + pacing (BBR).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// Per-ACK control with the rate sample (only if `has_cong_control`).
    fn cong_control(&mut self, _cx: &mut CcCx, _rs: &RateSample) {}

    /// Every ACK, before RTT and ACK processing.
    fn in_ack_event(&mut self, _cx: &mut CcCx, _flags: AckFlags) {}

    /// Every ACK after the retransmit queue is cleaned and the RTT estimator updated.
    fn pkts_acked(&mut self, _cx: &mut CcCx, _sample: &AckSample) {}

    /// Congestion-avoidance state change (`cx.ca_state` still holds the old state).
    fn set_state(&mut self, _cx: &mut CcCx, _new_state: CaState) {}

    fn cwnd_event(&mut self, _cx: &mut CcCx, _ev: CwndEvent) {}

    /// The cwnd to restore when a loss episode proves spurious (sender takes the max).
    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        cx.cwnd.max(cx.prior_cwnd)
    }

    /// The algorithm's own mode for the `cc_state` column (e.g. BBR's "PROBE_BW"), or
    /// None to let the sender report its Linux CA state.
    fn mode(&self) -> Option<&'static str> {
        None
    }

    /// The algorithm's model for diagnostics (Linux `get_info`, read with `TCP_CC_INFO`): BBR's
    /// `tcp_bbr_info`, or None for algorithms that report none.
    fn get_info(&self, _cx: &CcCx) -> Option<BbrInfo> {
        None
    }

    /// The least segments per GSO burst (Linux `min_tso_segs`; without the hook Linux uses
    /// `sysctl_tcp_min_tso_segs`).
    fn min_tso_segs(&self, _cx: &CcCx) -> u32 {
        gso::TCP_MIN_TSO_SEGS
    }

    /// True for algorithms that need ECN with accurate per-packet CE feedback (Linux
    /// `TCP_CONG_NEEDS_ECN`: DCTCP): the flow then negotiates ECN and the receiver echoes
    /// ECE for exactly the CE-marked packets (RFC 3168).
    fn needs_accurate_ecn(&self) -> bool {
        false
    }

    /// True for L4S algorithms (RFC 9331) that mark their data ECT(1) (the L4STeam kernel's
    /// `TCP_CONG_NEEDS_ACCECN` with `TCP_ECN_ECT_1`: TCP Prague); only with
    /// `needs_accurate_ecn`.
    fn sends_ect1(&self) -> bool {
        false
    }

    /// Segments per GSO burst when the algorithm sizes bursts itself (the L4STeam kernel's
    /// `tso_segs` hook, which replaces `tcp_tso_autosize`); None for Linux's autosizing.
    fn tso_segs(&self, _cx: &CcCx) -> Option<u32> {
        None
    }
}
