//! Congestion control as ns-3 structures it, for the `tcp.stack = "ns3"` profile
//! (docs/ns3-stack.md): ns-3's `TcpCongestionOps` interface over ns-3's `TcpSocketState`
//! (`Tcb` here), windows in bytes, and ns-3's own variant of each algorithm the reference
//! studies use. Each module names the ns-3 release it follows (3.44, the PyPI `ns3` package the
//! differential suite runs, unless its header says otherwise) and where it departs from the
//! Linux module of the same name.
//!
//! The socket (tcplab-tcp's ns-3 sender) calls the hooks where ns-3's `TcpSocketBase` does:
//! `PktsAcked` on every ACK with the segments it acknowledged, `IncreaseWindow` only in
//! CA_OPEN, `GetSsThresh` on entering Recovery, CWR or Loss, `CongestionStateSet` before each
//! state change, `CwndEvent` for TX_START, COMPLETE_CWR and LOSS, and `CongControl` with
//! ns-3's rate sample (`TcpRateLinux`) for algorithms that have it (BBR).

pub mod bbr;
pub mod cubic;
pub mod hybla;
pub mod newreno;
pub mod siad;
pub mod vegas;
pub mod westwood;
pub mod yeah;

use crate::CcConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tcplab_core::{SimDuration, SimRng, SimTime};

/// Which ns-3 release the ns3 stack follows (scenario `tcp.ns3_version`). Of the classes
/// modelled here only TcpBbr differs between the two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Ns3Version {
    /// ns-3 3.44 (the differential suite's ns-3).
    #[default]
    #[serde(rename = "3.44")]
    V3_44,
    /// ns-3 3.35 (the reference studies'): TcpBbr without the 1 % pacing margin, bw samples
    /// skipped only when their rate is 0 (`UpdateBtlBw`), min RTT seeded from m_lastRtt.
    #[serde(rename = "3.35")]
    V3_35,
}

/// ns-3 `TcpSocketState::TcpCongState_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CongState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

impl CongState {
    /// ns-3's name of the state (`TcpSocketState::TcpCongStateName`).
    pub fn name(self) -> &'static str {
        match self {
            CongState::Open => "CA_OPEN",
            CongState::Disorder => "CA_DISORDER",
            CongState::Cwr => "CA_CWR",
            CongState::Recovery => "CA_RECOVERY",
            CongState::Loss => "CA_LOSS",
        }
    }
}

/// ns-3 `TcpSocketState::TcpCAEvent_t`, the events `TcpSocketBase` raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing is in flight.
    TxStart,
    /// End of a Recovery or CWR episode.
    CompleteCwr,
    /// Retransmission timeout.
    Loss,
}

/// The fields of ns-3's `TcpSocketState` that congestion-control classes read or write.
/// Windows, thresholds and sequence numbers in bytes (ns-3 sequence numbers count bytes
/// from the first data byte here: segment `i` starts at `i * segment_size`).
#[derive(Clone, Debug)]
pub struct Tcb {
    /// `Simulator::Now()`.
    pub now: SimTime,
    /// `m_segmentSize`.
    pub segment_size: u32,
    /// `m_cWnd`, bytes.
    pub cwnd: u32,
    /// `m_ssThresh`, bytes.
    pub ssthresh: u32,
    /// `m_initialCWnd`, segments.
    pub initial_cwnd: u32,
    /// `m_initialSsThresh`, bytes.
    pub initial_ssthresh: u32,
    /// `m_congState`.
    pub cong_state: CongState,
    /// `m_bytesInFlight` as last computed by the socket.
    pub bytes_in_flight: u32,
    /// `m_isCwndLimited`: the last send found the window full.
    pub is_cwnd_limited: bool,
    /// `m_lastAckedSeq`: the cumulative ACK of the ACK being processed.
    pub last_acked_seq: u64,
    /// `m_highTxMark`: highest sequence number ever sent (end of the data sent).
    pub high_tx_mark: u64,
    /// `m_nextTxSequence`.
    pub next_tx_sequence: u64,
    /// `m_srtt`; zero before the first sample.
    pub srtt: SimDuration,
    /// `m_lastRtt`: the latest RTT sample; zero before the first.
    pub last_rtt: SimDuration,
    /// `m_minRtt`: the smallest SRTT so far (`TcpSocketBase::EstimateRtt` takes the minimum of
    /// the smoothed RTT, not of the samples); `SimDuration::MAX` (`Time::Max()`) before one.
    pub min_rtt: SimDuration,
    /// `m_pacing`: packets leave at `pacing_rate`.
    pub pacing: bool,
    /// `m_pacingRate`, bit/s.
    pub pacing_rate: u64,
    /// `m_maxPacingRate`, bit/s (ns-3 `MaxPacingRate`, 4 Gb/s).
    pub max_pacing_rate: u64,
    /// `m_lastAckedSackedBytes`: bytes this ACK delivered, cumulatively or by SACK.
    pub last_acked_sacked_bytes: u32,
    /// `m_isRetransDataAcked`: this ACK acknowledged retransmitted data (during Recovery).
    pub is_retrans_data_acked: bool,
}

/// ns-3 `TcpSocketState::MaxPacingRate` default.
pub const MAX_PACING_RATE_BPS: u64 = 4_000_000_000;

impl Tcb {
    /// A fresh connection with ns-3's initial window and threshold (`InitialCwnd` segments,
    /// `InitialSlowStartThreshold` bytes, 0xffff ffff by default).
    pub fn new(segment_size: u32, initial_cwnd: u32, initial_ssthresh: u32) -> Self {
        Tcb {
            now: SimTime::ZERO,
            segment_size,
            cwnd: initial_cwnd * segment_size,
            ssthresh: initial_ssthresh,
            initial_cwnd,
            initial_ssthresh,
            cong_state: CongState::Open,
            bytes_in_flight: 0,
            is_cwnd_limited: false,
            last_acked_seq: 0,
            high_tx_mark: 0,
            next_tx_sequence: 0,
            srtt: SimDuration::ZERO,
            last_rtt: SimDuration::ZERO,
            min_rtt: SimDuration::MAX,
            pacing: false,
            pacing_rate: MAX_PACING_RATE_BPS,
            max_pacing_rate: MAX_PACING_RATE_BPS,
            last_acked_sacked_bytes: 0,
            is_retrans_data_acked: false,
        }
    }

    /// `GetCwndInSegments()`.
    pub fn cwnd_segments(&self) -> u32 {
        self.cwnd / self.segment_size
    }

    /// `GetSsThreshInSegments()`.
    pub fn ssthresh_segments(&self) -> u32 {
        self.ssthresh / self.segment_size
    }

    /// `m_cWnd < m_ssThresh`, ns-3's slow-start test.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// ns-3 `TcpRateOps::TcpRateConnection` (bytes, times).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateConnection {
    /// `m_delivered`: bytes delivered so far.
    pub delivered: u64,
    /// `m_deliveredTime`.
    pub delivered_time: SimTime,
    /// `m_firstSentTime`.
    pub first_sent_time: SimTime,
    /// `m_appLimited`: 0, or the delivered count that ends the app-limited period.
    pub app_limited: u64,
    /// `m_txItemDelivered`.
    pub tx_item_delivered: u64,
    /// `m_rateDelivered`.
    pub rate_delivered: i64,
    /// `m_rateInterval`.
    pub rate_interval: SimDuration,
    /// `m_rateAppLimited`.
    pub rate_app_limited: bool,
}

/// ns-3 `TcpRateOps::TcpRateSample` (bytes, times; the rate in bit/s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `m_deliveryRate`, bit/s.
    pub delivery_rate_bps: u64,
    /// `m_isAppLimited`.
    pub is_app_limited: bool,
    /// `m_interval`.
    pub interval: SimDuration,
    /// `m_delivered`, bytes; negative when the sample is invalid.
    pub delivered: i64,
    /// `m_priorDelivered`.
    pub prior_delivered: u64,
    /// `m_priorTime`; zero when no packet was delivered.
    pub prior_time: SimTime,
    /// `m_sendElapsed`.
    pub send_elapsed: SimDuration,
    /// `m_ackElapsed`.
    pub ack_elapsed: SimDuration,
    /// `m_bytesLoss`.
    pub bytes_loss: u32,
    /// `m_priorInFlight`.
    pub prior_in_flight: u32,
    /// `m_ackedSacked`.
    pub acked_sacked: u32,
}

impl RateSample {
    /// `TcpRateSample::IsValid`.
    pub fn is_valid(&self) -> bool {
        self.prior_time != SimTime::ZERO || self.interval != SimDuration::ZERO
    }
}

/// ns-3 `TcpCongestionOps`. Hooks default to ns-3's base-class bodies (empty).
pub trait Ns3CongestionOps: Send + std::fmt::Debug {
    /// The tcplab name of the algorithm (`"cubic"`), as in the scenario.
    fn name(&self) -> &'static str;

    /// `Init`: the socket is connected.
    fn init(&mut self, _tcb: &mut Tcb) {}

    /// `GetSsThresh`: the new threshold, bytes, on entering Recovery, CWR or Loss.
    fn get_ss_thresh(&mut self, tcb: &Tcb, bytes_in_flight: u32) -> u32;

    /// `IncreaseWindow`: window growth, called in CA_OPEN only.
    fn increase_window(&mut self, _tcb: &mut Tcb, _segments_acked: u32) {}

    /// `PktsAcked`: every ACK, with the segments it acknowledged and ns-3's RTT argument
    /// (the smoothed RTT: `TcpSocketBase` passes `m_tcb->m_srtt`).
    fn pkts_acked(&mut self, _tcb: &mut Tcb, _segments_acked: u32, _rtt: SimDuration) {}

    /// `CongestionStateSet`: called before `tcb.cong_state` changes to `new_state`.
    fn congestion_state_set(&mut self, _tcb: &mut Tcb, _new_state: CongState) {}

    /// `CwndEvent`.
    fn cwnd_event(&mut self, _tcb: &mut Tcb, _event: CaEvent) {}

    /// `HasCongControl`: true for algorithms that replace recovery and window growth (BBR).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `CongControl`, after every ACK, for algorithms with `has_cong_control`.
    fn cong_control(&mut self, _tcb: &mut Tcb, _rc: &RateConnection, _rs: &RateSample) {}

    /// The algorithm's own mode for the `cc_state` column (BBR's "PROBE_BW"), or None to let
    /// the socket report its congestion state.
    fn mode(&self) -> Option<&'static str> {
        None
    }
}

/// The algorithms with an ns-3 variant, as scenario names.
pub const ALGORITHMS: &[&str] = &["newreno", "cubic", "bbr", "vegas", "yeah", "hybla", "westwood", "siad"];

/// The parameters of `kind` under ns-3's defaults (ns-3's attribute defaults where they differ
/// from Linux's), or None when `kind` has no ns-3 variant.
pub fn default_config(kind: &str) -> Option<CcConfig> {
    let linux = CcConfig::parse(Value::String(kind.to_string())).ok()?;
    Some(match linux {
        // TcpCubic: Beta 0.7 (Linux 717/1024); C, HyStart and its window and ACK delta agree.
        CcConfig::Cubic(c) => CcConfig::Cubic(crate::cubic::CubicConfig { beta: 0.7, ..c }),
        // TcpHybla: RRTT 50 ms (Linux rtt0 25 ms).
        CcConfig::Hybla(_) => CcConfig::Hybla(crate::hybla::HyblaConfig { rtt0_ms: 50 }),
        // ns-3's Vegas attributes default to Linux's 2, 4, 1; YeAH and Westwood+ take no
        // parameters here (ns-3's attribute defaults are built in).
        c @ (CcConfig::NewReno(_) | CcConfig::Vegas(_) | CcConfig::Yeah(_) | CcConfig::Westwood(_)) => c,
        CcConfig::Bbr(_) => CcConfig::Bbr(bbr::ns3_defaults()),
        // SIAD: the siad-mmwave study's port TcpSiad (variant "ns3-study"), ConfigNumRtt 0
        // (its built-in 20) and ConfigNumMs 0.
        CcConfig::Siad(_) => CcConfig::Siad(siad::ns3_defaults()),
        _ => return None,
    })
}

/// Parses a flow's `cc` for the ns3 stack: parameters the scenario leaves out take ns-3's
/// defaults, and a parameter only the Linux variant has must keep its neutral value. An error
/// is (the key at fault, empty for the value as a whole; what is wrong and what is allowed).
pub fn parse(value: Value) -> Result<CcConfig, (String, String)> {
    let given = CcConfig::parse(value.clone())?;
    let kind_key = if value.is_object() { "kind" } else { "" };
    let base = default_config(given.name()).ok_or_else(|| (kind_key.to_string(), no_variant(given.name())))?;
    let Value::Object(mut table) = serde_json::to_value(&base).expect("CcConfig serializes") else {
        unreachable!("CcConfig serializes as a table")
    };
    if let Value::Object(explicit) = value {
        table.extend(explicit.into_iter().filter(|(k, _)| k != "kind"));
    }
    let config = CcConfig::parse(Value::Object(table))?;
    check(&config)?;
    Ok(config)
}

/// Refuses parameters the ns-3 variant does not model (a Linux-only mechanism switched on).
fn check(config: &CcConfig) -> Result<(), (String, String)> {
    match config {
        // Every CubicConfig field maps to a TcpCubic attribute except HyStart++.
        CcConfig::Cubic(c) if c.hystart == crate::cubic::Hystart::PlusPlus => {
            Err(linux_only("hystart", "\"hystart++\"", "ns-3 3.44 TcpCubic has only classic HyStart (true or false)"))
        }
        CcConfig::Cubic(_) | CcConfig::Hybla(_) => Ok(()),
        CcConfig::NewReno(_) | CcConfig::Vegas(_) | CcConfig::Yeah(_) | CcConfig::Westwood(_) => Ok(()),
        CcConfig::Bbr(c) => bbr::check(c),
        CcConfig::Siad(c) => siad::check(c),
        other => Err((String::new(), no_variant(other.name()))),
    }
}

/// A fresh ns-3 variant of `config`, which [`parse`] accepted for the ns3 stack, as ns-3
/// `version` has it.
pub fn build(config: &CcConfig, rng: SimRng, version: Ns3Version) -> Box<dyn Ns3CongestionOps> {
    match config {
        CcConfig::NewReno(_) => Box::new(newreno::NewReno),
        CcConfig::Cubic(c) => Box::new(cubic::Cubic::new(c)),
        CcConfig::Hybla(c) => Box::new(hybla::Hybla::new(c)),
        CcConfig::Vegas(c) => Box::new(vegas::Vegas::new(c)),
        CcConfig::Yeah(_) => Box::new(yeah::Yeah::new()),
        CcConfig::Westwood(_) => Box::new(westwood::WestwoodPlus::new()),
        CcConfig::Bbr(c) => Box::new(bbr::Ns3Bbr::new(c, rng, version)),
        CcConfig::Siad(c) => Box::new(siad::Ns3Siad::new(c)),
        other => unreachable!("{} has no ns-3 variant; parse() refuses it", other.name()),
    }
}

/// "`kind` has no ns-3 variant" with the allowed names.
pub fn no_variant(kind: &str) -> String {
    format!("{kind} has no ns-3 variant (tcp.stack = \"ns3\"); allowed: {}", ALGORITHMS.join(", "))
}

/// "`key` = `value` needs tcp.stack = \"linux\"": for a parameter whose mechanism the ns-3
/// variant lacks.
pub fn linux_only(key: &str, value: impl std::fmt::Display, why: &str) -> (String, String) {
    (key.to_string(), format!("{key} = {value} needs tcp.stack = \"linux\": {why}"))
}
