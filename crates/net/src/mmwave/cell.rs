//! One mmWave cell run TTI by TTI (MmWavePhyMacCommon frame timing, MmWaveFlexTtiMacScheduler
//! scheduling, MmWaveAmc AMC, MmWaveHarqPhy HARQ, LteRlcAm RLC AM, MmWavePointToPointEpcHelper IP
//! fragmentation), composing the channel (noise, path loss, beamforming gain), the LOS timeline of
//! each UE's track (ns-3 buildings LOS test, ns-3 ConstantVelocity/WaypointMobilityModel), the
//! FlexTTI scheduler and two RLC AM bearers per UE: downlink (eNB → UE) and uplink (UE → eNB).
//! Packets enter at either end (`enqueue`) and leave at the other as [`RadioDelivery`]s stamped
//! with their delivery instant.
//!
//! Per subframe starting at t (100 µs, MmWavePhyMacCommon), in this order:
//! 1. every UE's channel is sampled at t, LOS taken from its `LosTimeline`; the LOS↔NLOS switches
//!    and the channel's own grid steps (3GPP shadowing) since the previous sample (since 0 for the
//!    first) are fed to the channel at their exact instants first, so the
//!    BuildingsObstaclePropagationLossModel tracker starts its 39 ms drop / 16 ms recovery when the
//!    geometry changes, and the channel seen by the flows is the same for one seed whatever they
//!    send (BuildingsObstaclePropagationLossModel asks for ≤ 125 µs sampling; every subframe is
//!    sampled while the cell has work);
//! 2. the allocations decided two subframes earlier (scheduling lead, MmWavePhyMacCommon) go on air: HARQ
//!    draws each TB's fate with the SINR of its direction at t and the cell's own `SimRng`;
//! 3. HARQ processes whose retransmission timed out are freed and their RLC PDU is handed to
//!    ARQ (`RlcAm::on_failed`, detected at t);
//! 4. the scheduler decides the subframe at t + 2 TTI from the DL RLC buffer status at t and
//!    each UE's last buffer status report, and every new TB is filled by its bearer's RLC at
//!    once (TB bytes = ⌊tb_bits / 8⌋); then each UE's BSR is taken (UL buffer after the fill).
//!
//! Outcomes are acted on at the instant the real feedback exists (end of the TB's symbols +
//! 100 µs decode, `HarqEntity::transmit`): a DL TB gives the UE's CQI report (MmWavePhyMacCommon: after every
//! DL reception, decoded or not, CQI from the effective SINR the TB saw), a UL TB the eNB's
//! UL SINR estimate; then RLC delivery (`on_delivered`, packets handed out stamped with that
//! instant) or ARQ (`on_failed`).
//!
//! Choices and simplifications (reported; * marks a point ns3-mmwave leaves open):
//! - *The CQI report reaches the scheduler at the TB's decode instant (no extra UL feedback delay;
//!   MmWavePhyMacCommon gives none). It is therefore used two subframes later at the earliest.
//! - *DL demand (FlexTTI step 3): the caller-chosen queue is the eligible RLC retransmission bytes if any,
//!   else the new bytes. RLC STATUS PDUs are not carried in either direction (rlc.rs).
//! - *Uplink (FlexTTI step 4, MmWavePhyMacCommon): the BSR the scheduler uses at a decision is the UE's UL buffer (new +
//!   eligible retransmission bytes) taken after the previous subframe's UL TBs were filled, i.e.
//!   one subframe old (MmWavePhyMacCommon's UL scheduling delay) and net of what was already granted (ns-3
//!   likewise deducts granted bytes from the stored BSR). A UL packet waits ≈ 0.4–0.5 ms from
//!   the UE's PDCP to the eNB in an idle cell (MmWavePointToPointEpcHelper: 0.3–0.5 ms). The UL MCS is
//!   `ue_best_mcs` of the effective UL SINR of the latest UL reception (the current UL SINR
//!   before the first one); below the MCS-0 threshold the scheduler uses MCS 0 (scheduler.rs).
//! - *UL SINR: the same path loss, blockage and beamforming gain as the DL (reciprocity), with
//!   the UE's transmit power and the eNB's noise figure: UL SNR = DL SNR + (P_UE − P_eNB) −
//!   (NF_eNB − NF_UE), then the profile's selectivity penalty. ns3-mmwave's defaults (30 dBm, 5 dB at
//!   both ends) make the two equal.
//! - IP fragmentation (MmWavePointToPointEpcHelper): a packet larger than `ip_mtu` is split into ⌈(size − 20) /
//!   (MTU − 20)⌉ fragments (20 B IPv4 header each), every fragment its own PDCP SDU; each is
//!   offered to RLC on its own, so a full buffer may drop some fragments and take others.
//!   The receiving end passes the packet on when its last fragment arrives, if no fragment
//!   was dropped; the fragments of a packet with a dropped fragment still cross the air and
//!   are discarded (ns-3's reassembly waits 30 s for them; the packet is lost either way).
//!   Drop counts (`rlc_drops`) are IP packets.
//! - *If RLC has nothing to put in a scheduled new TB (a TB under 7 B, or a UL grant for
//!   bytes that left with an earlier TB), the TB goes on air as padding and its outcome
//!   only carries the SINR report.
//! - Idle cell: with no RLC bytes, no HARQ process busy, no allocation pending and no
//!   outcome pending, `advance_to` skips straight to the first subframe boundary after `now`
//!   without sampling the channel (the LOS switches in between are still fed to the tracker
//!   when sampling resumes, step 1). A packet enqueued into an idle cell is scheduled at the
//!   first boundary strictly after its arrival.
//! - Doppler speed is the V2.0 quirk vx + vy + vz (MmWaveBeamforming), used only with fast fading on.
//! - Observed (tests): in study (a) the NLOS effective SINR stays above the MCS-0 threshold,
//!   so DL continues at a QPSK/16-QAM MCS through the blockage; but the BuildingsObstaclePropagationLossModel recovery trace
//!   starts 8.6 dB below the NLOS plateau, so at the end of the blockage a low BF draw gives
//!   CQI 0. The stall is short (a few subframes): retransmissions of the TBs in flight are
//!   DL receptions and refresh the CQI, long before the 100 ms CQI timer.

use std::collections::VecDeque;

use tcplab_core::{Packet, SimRng, SimTime};

use super::channel::{Channel, ChannelConfig, ChannelConfigError, ChannelInput, ChannelProfile, ChannelSample};
use super::geometry::{Building, LosTest, Position};
use super::mobility::{LosTimeline, Mobility};
use super::phy::{cqi_from_sinr, ue_best_mcs, FrameConfig, HarqOutcome, Mcs, HARQ_PROCESSES};
use super::rlc::{PduId, RlcAm, RlcConfig};
use super::scheduler::{Allocation, FlexTtiScheduler, SharingPolicy, UeDemand};
use crate::radio::RadioCell;
pub use crate::radio::{RadioDelivery, RadioDirection};

/// Index of a UE in the cell, in the order of `CellConfig::ues`.
pub type UeId = crate::radio::UserId;

/// Subframes from a scheduling decision to the subframe it fills, plus the current one:
/// the ring of decided allocations has one slot per subframe in that window (MmWavePhyMacCommon lead = 2).
const ALLOCATION_SLOTS: usize = 3;
/// IPv4 header repeated in every fragment (MmWavePointToPointEpcHelper).
const IP_HEADER_BYTES: u32 = 20;
const DIRECTIONS: [RadioDirection; 2] = [RadioDirection::Dl, RadioDirection::Ul];

/// Everything a cell needs; one `Mobility` per UE.
#[derive(Clone, Debug)]
pub struct CellConfig {
    /// The downlink channel: the eNB's transmit power, the UE's noise figure.
    pub channel: ChannelConfig,
    pub frame: FrameConfig,
    /// RLC AM of every DL bearer (at the eNB) and of every UL bearer (at the UE).
    pub rlc: RlcConfig,
    pub ul_rlc: RlcConfig,
    /// CqiTimerThreshold in subframes (MmWaveFlexTtiMacScheduler: 100 default, 1000 in study (a)).
    pub cqi_threshold_subframes: u32,
    pub policy: SharingPolicy,
    /// An MCS for every new TB of both directions instead of AMC (no CQI-0 stall).
    pub fixed_mcs: Option<Mcs>,
    pub enb_position: Position,
    pub buildings: Vec<Building>,
    /// 2-D for MMW-V2 (study a), 3-D for MMW-V2-3GPP (study b), ns-3 buildings LOS test.
    pub los_test: LosTest,
    /// End of the span the LOS timelines are computed over (the scenario's duration).
    pub horizon: SimTime,
    pub ues: Vec<Mobility>,
    /// Packets larger than this many bytes are fragmented (MmWavePointToPointEpcHelper: the SGi MTU, 1500).
    pub ip_mtu: u32,
    /// The uplink's transmit power and receiver noise figure (ns3-mmwave V2.0 defaults: 30 dBm, 5 dB).
    pub ue_tx_power_dbm: f64,
    pub enb_noise_figure_db: f64,
}

/// The radio state of one UE for the recorder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadioSnapshot {
    /// Wideband SINR and effective SINR (after the MmWaveBeamforming selectivity penalty) of the latest
    /// DL channel sample, dB (NaN before the first sample).
    pub sinr_db: f64,
    pub effective_sinr_db: f64,
    /// Path loss including the blockage trace or shadowing, dB.
    pub path_loss_db: f64,
    pub los: bool,
    /// The DL CQI the scheduler uses now (FlexTTI step 3), and the DL MCS it gives (None: CQI 0 stall).
    pub cqi: u8,
    pub mcs: Option<u8>,
    /// PHY rate of all 22 data symbols at `mcs`, Mb/s (0 when stalled).
    pub capacity_mbps: f64,
    /// DL RLC bytes not yet delivered for the first time: new + retransmission queue.
    pub rlc_backlog_bytes: u64,
    /// IP packets tail-dropped by the DL RLC so far.
    pub rlc_drops: u64,
    /// DL HARQ retransmissions put on air so far.
    pub harq_retx: u64,
    /// Share of the data symbols of the subframes run so far that carried this UE's DL TBs.
    pub air_share: f64,
    /// The same for the uplink; the UL MCS is the one new UL TBs would get now.
    pub ul_mcs: Option<u8>,
    pub ul_capacity_mbps: f64,
    pub ul_rlc_backlog_bytes: u64,
    pub ul_rlc_drops: u64,
    pub ul_harq_retx: u64,
    pub ul_air_share: f64,
}

/// A TB whose feedback is not yet acted on.
#[derive(Clone, Copy, Debug)]
struct PendingOutcome {
    at: SimTime,
    ue: UeId,
    direction: RadioDirection,
    /// Effective SINR the TB saw: the CQI report (DL) or UL SINR estimate (UL) it gives.
    sinr_db: f64,
    /// The RLC PDU and whether it was delivered (false: HARQ gave up); None while HARQ
    /// retransmits, or for a padding TB.
    result: Option<(PduId, bool)>,
}

/// One direction of one UE's radio bearer: RLC AM, the IP fragments it carries, and the
/// HARQ processes that carry its PDUs.
struct Bearer {
    rlc: RlcAm,
    /// Per accepted PDCP SDU, in acceptance order: the size of the whole IP packet if the SDU
    /// completes it (its last fragment, every fragment accepted), else None.
    completes: VecDeque<Option<u32>>,
    /// The RLC PDU each HARQ process of this direction carries.
    harq_pdu: [Option<PduId>; HARQ_PROCESSES],
    harq_busy: u32,
    harq_retx: u64,
    /// Data symbols this direction's TBs occupied on air, new and retransmitted.
    symbols_on_air: u64,
    /// IP packets offered, lost to RLC tail drop (any fragment), and handed over.
    packets_offered: u64,
    packets_dropped: u64,
    packets_delivered: u64,
}

impl Bearer {
    fn new(config: RlcConfig) -> Bearer {
        Bearer {
            rlc: RlcAm::new(config),
            completes: VecDeque::new(),
            harq_pdu: [None; HARQ_PROCESSES],
            harq_busy: 0,
            harq_retx: 0,
            symbols_on_air: 0,
            packets_offered: 0,
            packets_dropped: 0,
            packets_delivered: 0,
        }
    }

    /// Offers `packet` to PDCP/RLC as ⌈…⌉ fragments of at most `mtu` bytes (MmWavePointToPointEpcHelper); true if
    /// every fragment was accepted.
    fn enqueue(&mut self, packet: Packet, mtu: u32, now: SimTime) -> bool {
        self.packets_offered += 1;
        let size = packet.size;
        let mut remaining = size.saturating_sub(IP_HEADER_BYTES);
        let chunk = mtu - IP_HEADER_BYTES;
        let mut accepted = 0;
        let mut fragments = 0;
        loop {
            let payload = if size <= mtu { remaining } else { remaining.min(chunk) };
            remaining -= payload;
            fragments += 1;
            let fragment = Packet { size: if size <= mtu { size } else { payload + IP_HEADER_BYTES }, ..packet };
            if self.rlc.enqueue(fragment, now) {
                accepted += 1;
            }
            if remaining == 0 {
                break;
            }
        }
        let intact = accepted == fragments;
        for i in 0..accepted {
            self.completes.push_back((intact && i + 1 == accepted).then_some(size));
        }
        if !intact {
            self.packets_dropped += 1;
        }
        intact
    }

    /// HARQ delivered `pdu`: the packets it completes go to `out` as deliveries at `at`.
    fn deliver(
        &mut self,
        pdu: PduId,
        scratch: &mut Vec<Packet>,
        out: &mut Vec<RadioDelivery>,
        at: SimTime,
        ue: UeId,
        direction: RadioDirection,
    ) {
        scratch.clear();
        self.rlc.on_delivered(pdu, scratch);
        for mut packet in scratch.drain(..) {
            if let Some(size) = self.completes.pop_front().expect("one entry per accepted SDU") {
                packet.size = size;
                self.packets_delivered += 1;
                out.push(RadioDelivery { at, ue, direction, packet });
            }
        }
    }

    fn backlog_bytes(&self, now: SimTime) -> u64 {
        let s = self.rlc.buffer_status(now);
        s.new_bytes + s.retx_ready_bytes + s.retx_waiting_bytes
    }

    fn has_work(&self, now: SimTime) -> bool {
        self.harq_busy > 0 || self.backlog_bytes(now) > 0
    }
}

struct UeState {
    mobility: Mobility,
    timeline: LosTimeline,
    channel: Channel,
    /// DL and UL, indexed by `RadioDirection::index`.
    bearers: [Bearer; 2],
    /// UL bytes the UE's latest buffer status report announced (FlexTTI step 4).
    bsr_bytes: u64,
    /// Effective SINR of the latest UL reception, dB (the eNB's UL estimate).
    ul_sinr_report: Option<f64>,
    last_sample_at: Option<SimTime>,
    last: Option<ChannelSample>,
    los: bool,
}

impl UeState {
    fn bearer(&mut self, direction: RadioDirection) -> &mut Bearer {
        &mut self.bearers[direction.index()]
    }
}

/// One cell: eNB, UEs, channels, MAC and RLC, advanced lazily by the simulator.
pub struct MmWaveCell {
    frame: FrameConfig,
    profile: ChannelProfile,
    enb: [f64; 3],
    /// UL SNR − DL SNR, dB (transmit powers and noise figures; header).
    ul_offset_db: f64,
    ip_mtu: u32,
    scheduler: FlexTtiScheduler,
    ues: Vec<UeState>,
    rng: SimRng,
    /// Start of the next subframe to run, and of the last one run; how many have run.
    next_subframe: SimTime,
    last_subframe: SimTime,
    subframes_run: u64,
    /// Subframe index of `next_subframe` modulo the ring size.
    slot: usize,
    allocations: [Vec<Allocation>; ALLOCATION_SLOTS],
    /// Sorted by `at` (ties in insertion order).
    pending: Vec<PendingOutcome>,
    demands: Vec<UeDemand>,
    delivered: Vec<Packet>,
}

fn point(p: Position) -> [f64; 3] {
    [p.x_m, p.y_m, p.z_m]
}

impl MmWaveCell {
    /// Builds the cell; the channels and HARQ draw from sub-streams of `seed`. Panics on
    /// no UEs or an MTU that leaves no room for fragment payload (configuration bugs).
    pub fn new(config: CellConfig, seed: u64) -> Result<MmWaveCell, ChannelConfigError> {
        assert!(!config.ues.is_empty(), "a cell needs at least one UE");
        assert!(config.ip_mtu > IP_HEADER_BYTES, "IP MTU {} leaves no payload", config.ip_mtu);
        let mut ues = Vec::with_capacity(config.ues.len());
        for (i, mobility) in config.ues.into_iter().enumerate() {
            let timeline =
                LosTimeline::compute(config.los_test, config.enb_position, &mobility, &config.buildings, SimTime::ZERO, config.horizon);
            let channel = Channel::new(config.channel, SimRng::stream(seed, &format!("mmwave/cell/channel/{i}")))?;
            ues.push(UeState {
                mobility,
                timeline,
                channel,
                bearers: [Bearer::new(config.rlc), Bearer::new(config.ul_rlc)],
                bsr_bytes: 0,
                ul_sinr_report: None,
                last_sample_at: None,
                last: None,
                los: true,
            });
        }
        let n = ues.len();
        let data_symbols = config.frame.data_symbols_per_subframe() as usize;
        let c = &config.channel;
        Ok(MmWaveCell {
            frame: config.frame,
            profile: c.profile,
            enb: point(config.enb_position),
            ul_offset_db: (config.ue_tx_power_dbm - c.tx_power_dbm) - (config.enb_noise_figure_db - c.noise_figure_db),
            ip_mtu: config.ip_mtu,
            scheduler: FlexTtiScheduler::new(config.frame, n, config.cqi_threshold_subframes, config.policy)
                .with_fixed_mcs(config.fixed_mcs),
            ues,
            rng: SimRng::stream(seed, "mmwave/cell/harq"),
            next_subframe: SimTime::ZERO,
            last_subframe: SimTime::ZERO,
            subframes_run: 0,
            slot: 0,
            allocations: std::array::from_fn(|_| Vec::with_capacity(data_symbols)),
            // At most one outcome per data symbol of the subframes in the ring.
            pending: Vec::with_capacity(ALLOCATION_SLOTS * data_symbols),
            demands: vec![UeDemand::default(); n],
            delivered: Vec::new(),
        })
    }

    pub fn ue_count(&self) -> usize {
        self.ues.len()
    }

    fn bearers(&self) -> impl Iterator<Item = &Bearer> {
        self.ues.iter().flat_map(|u| &u.bearers)
    }

    /// The radio state of `ue` as of the last subframe run.
    pub fn snapshot(&self, ue: UeId) -> RadioSnapshot {
        let u = &self.ues[ue];
        let t = self.last_subframe;
        let cqi = self.scheduler.ue(ue).dl_cqi.cqi(t);
        let mcs = self.scheduler.dl_mcs(ue, t);
        let ul_mcs = self.ul_mcs(u);
        let capacity = |m: Option<Mcs>| m.map_or(0.0, |m| self.frame.phy_rate_bps(m, self.frame.data_symbols_per_subframe()) / 1e6);
        let [dl, ul] = &u.bearers;
        let symbols_run = self.subframes_run * u64::from(self.frame.data_symbols_per_subframe());
        let share = |b: &Bearer| if symbols_run == 0 { 0.0 } else { b.symbols_on_air as f64 / symbols_run as f64 };
        RadioSnapshot {
            sinr_db: u.last.map_or(f64::NAN, |s| s.sinr_db),
            effective_sinr_db: u.last.map_or(f64::NAN, |s| s.effective_sinr_db),
            path_loss_db: u.last.map_or(f64::NAN, |s| s.path_loss_db),
            los: u.los,
            cqi: cqi.index(),
            mcs: mcs.map(Mcs::index),
            capacity_mbps: capacity(mcs),
            rlc_backlog_bytes: dl.backlog_bytes(t),
            rlc_drops: dl.packets_dropped,
            harq_retx: dl.harq_retx,
            air_share: share(dl),
            ul_mcs: Some(ul_mcs.index()),
            ul_capacity_mbps: capacity(Some(ul_mcs)),
            ul_rlc_backlog_bytes: ul.backlog_bytes(t),
            ul_rlc_drops: ul.packets_dropped,
            ul_harq_retx: ul.harq_retx,
            ul_air_share: share(ul),
        }
    }

    /// Effective UL SINR of a channel sample (header: reciprocity, UE power, eNB noise).
    fn ul_sinr_db(&self, s: &ChannelSample) -> f64 {
        self.profile.effective_sinr_db(s.sinr_db + self.ul_offset_db)
    }

    /// The MCS of new UL TBs of `u` (the scheduler's rule: fixed, else AMC, else MCS 0).
    fn ul_mcs(&self, u: &UeState) -> Mcs {
        let sinr = u.ul_sinr_report.or_else(|| u.last.map(|s| self.ul_sinr_db(&s)));
        self.scheduler.fixed_mcs().or(sinr.and_then(ue_best_mcs)).unwrap_or(Mcs::MIN)
    }

    fn has_work(&self) -> bool {
        !self.pending.is_empty() || self.allocations.iter().any(|a| !a.is_empty()) || self.bearers().any(|b| b.has_work(self.next_subframe))
    }

    /// Moves an idle cell's clock to the first subframe boundary after `now`.
    fn skip_idle_until(&mut self, now: SimTime) {
        if self.next_subframe > now {
            return;
        }
        let tti = self.frame.tti().as_nanos();
        let skipped = (now.as_nanos() - self.next_subframe.as_nanos()) / tti + 1;
        self.next_subframe += self.frame.tti().saturating_mul(skipped);
        self.slot = (self.slot + (skipped % ALLOCATION_SLOTS as u64) as usize) % ALLOCATION_SLOTS;
    }

    fn act_on_first_outcome(&mut self, out: &mut Vec<RadioDelivery>) {
        let p = self.pending.remove(0);
        let u = &mut self.ues[p.ue];
        match p.direction {
            RadioDirection::Dl => self.scheduler.ue_mut(p.ue).dl_cqi.report(cqi_from_sinr(p.sinr_db), p.at),
            RadioDirection::Ul => u.ul_sinr_report = Some(p.sinr_db),
        }
        let bearer = &mut u.bearers[p.direction.index()];
        match p.result {
            Some((pdu, true)) => bearer.deliver(pdu, &mut self.delivered, out, p.at, p.ue, p.direction),
            Some((pdu, false)) => bearer.rlc.on_failed(pdu, p.at),
            None => {}
        }
    }

    fn push_outcome(&mut self, outcome: PendingOutcome) {
        let pos = self.pending.partition_point(|q| q.at <= outcome.at);
        self.pending.insert(pos, outcome);
    }

    fn run_subframe(&mut self) {
        let t = self.next_subframe;
        for u in &mut self.ues {
            sample_channel(u, self.enb, t);
        }

        // Step 2: the TBs decided two subframes ago go on air.
        let slot = self.slot;
        for i in 0..self.allocations[slot].len() {
            let a = self.allocations[slot][i];
            let sample = self.ues[a.ue].last.expect("sampled above");
            let sinr = match a.direction {
                RadioDirection::Dl => sample.effective_sinr_db,
                RadioDirection::Ul => self.ul_sinr_db(&sample),
            };
            let bearer = self.ues[a.ue].bearer(a.direction);
            bearer.symbols_on_air += u64::from(a.symbols);
            if a.retransmission {
                bearer.harq_retx += 1;
            }
            let harq = self.scheduler.ue_mut(a.ue).harq_mut(a.direction);
            let (at, done) = match harq.transmit(a.harq, t, a.first_symbol, sinr, &mut self.rng) {
                HarqOutcome::Delivered { at, .. } => (at, Some(true)),
                HarqOutcome::Failed { detected_at } => (detected_at, Some(false)),
                HarqOutcome::Retransmit { .. } => {
                    (t + self.frame.data_end_offset(a.first_symbol, a.symbols) + self.frame.tb_decode_latency(), None)
                }
            };
            let result = done.and_then(|ok| {
                bearer.harq_busy -= 1;
                bearer.harq_pdu[a.harq.index()].take().map(|pdu| (pdu, ok))
            });
            self.push_outcome(PendingOutcome { at, ue: a.ue, direction: a.direction, sinr_db: sinr, result });
        }
        self.allocations[slot].clear();

        // Step 3: timed-out HARQ processes hand their PDU to ARQ.
        for (i, u) in self.ues.iter_mut().enumerate() {
            for direction in DIRECTIONS {
                let bearer = u.bearer(direction);
                while let Some(id) = self.scheduler.ue_mut(i).harq_mut(direction).expire_stale(t) {
                    bearer.harq_busy -= 1;
                    if let Some(pdu) = bearer.harq_pdu[id.index()].take() {
                        bearer.rlc.on_failed(pdu, t);
                    }
                }
            }
        }

        // Step 4: decide the subframe at t + 2 TTI and fill its new TBs; then take the BSRs.
        for i in 0..self.ues.len() {
            let u = &self.ues[i];
            let s = u.bearers[RadioDirection::Dl.index()].rlc.buffer_status(t);
            let queue = if s.retx_ready_bytes > 0 { s.retx_ready_bytes } else { s.new_bytes };
            self.demands[i] = UeDemand {
                dl_queue_bytes: u32::try_from(queue).unwrap_or(u32::MAX),
                ul_bsr_bytes: u32::try_from(u.bsr_bytes).unwrap_or(u32::MAX),
                ul_mcs: Some(self.ul_mcs(u)),
                ..UeDemand::default()
            };
        }
        let target = (slot + ALLOCATION_SLOTS - 1) % ALLOCATION_SLOTS;
        for a in self.scheduler.schedule(t, &self.demands) {
            if !a.retransmission {
                let bearer = self.ues[a.ue].bearer(a.direction);
                bearer.harq_busy += 1;
                bearer.harq_pdu[a.harq.index()] = bearer.rlc.fill(a.tb_bits / 8, t).map(|f| f.pdu);
            }
            self.allocations[target].push(*a);
        }
        for u in &mut self.ues {
            let s = u.bearers[RadioDirection::Ul.index()].rlc.buffer_status(t);
            u.bsr_bytes = s.new_bytes + s.retx_ready_bytes;
        }

        self.last_subframe = t;
        self.subframes_run += 1;
        self.next_subframe = t + self.frame.tti();
        self.slot = (slot + 1) % ALLOCATION_SLOTS;
    }
}

impl RadioCell for MmWaveCell {
    /// A packet reaches PDCP at `now`: at the eNB for `ue` (DL) or at `ue` for the eNB (UL).
    /// Returns false if RLC tail-dropped it (or one of its fragments). Call `advance_to(now)`
    /// first.
    fn enqueue(&mut self, ue: UeId, direction: RadioDirection, packet: Packet, now: SimTime) -> bool {
        if !self.has_work() {
            self.skip_idle_until(now);
        }
        let mtu = self.ip_mtu;
        self.ues[ue].bearer(direction).enqueue(packet, mtu, now)
    }

    /// Runs every subframe boundary and every HARQ outcome at or before `now`, appending the
    /// packets handed over in time order.
    fn advance_to(&mut self, now: SimTime, out: &mut Vec<RadioDelivery>) {
        loop {
            if !self.has_work() {
                self.skip_idle_until(now);
                return;
            }
            match self.pending.first() {
                Some(p) if p.at <= self.next_subframe && p.at <= now => self.act_on_first_outcome(out),
                _ if self.next_subframe <= now => self.run_subframe(),
                _ => return,
            }
        }
    }

    /// The instant `advance_to` next has something to do: the next HARQ outcome or subframe
    /// boundary while any work is pending; None for an idle cell.
    fn next_event(&self) -> Option<SimTime> {
        if !self.has_work() {
            return None;
        }
        Some(self.pending.first().map_or(self.next_subframe, |p| p.at.min(self.next_subframe)))
    }

    /// IP packets accepted and not yet handed over (in RLC or on air), both directions.
    fn packets_held(&self) -> u64 {
        self.bearers().map(|b| b.packets_offered - b.packets_dropped - b.packets_delivered).sum()
    }

    /// IP packets lost to RLC tail drop so far, both directions.
    fn packets_dropped(&self) -> u64 {
        self.bearers().map(|b| b.packets_dropped).sum()
    }
}

/// Samples `u`'s channel at `t`, first at every instant since its previous sample (from
/// time 0 for the first) at which the channel changes whatever the traffic: each LOS switch
/// (BuildingsObstaclePropagationLossModel) and each step of the channel's own grid (3GPP shadowing). The realisation then
/// depends on the seed and the track only, never on when the cell had work.
fn sample_channel(u: &mut UeState, enb: [f64; 3], t: SimTime) {
    let at = |u: &mut UeState, when: SimTime| {
        let los = u.timeline.is_los_at(when);
        let input = ChannelInput {
            now: when,
            enb_pos_m: enb,
            ue_pos_m: point(u.mobility.position_at(when)),
            ue_speed_mps: u.mobility.velocity_at(when).component_sum_mps(),
            los,
        };
        u.last = Some(u.channel.sample(&input));
        u.los = los;
        u.last_sample_at = Some(when);
    };
    let mut prev = match u.last_sample_at {
        Some(prev) => prev,
        None if t > SimTime::ZERO => {
            at(u, SimTime::ZERO);
            SimTime::ZERO
        }
        None => return at(u, t),
    };
    loop {
        let switch = u.timeline.next_transition_after(prev);
        let step = u.channel.next_update_after(prev);
        match switch.into_iter().chain(step).filter(|&s| s < t).min() {
            Some(next) => {
                at(u, next);
                prev = next;
            }
            None => return at(u, t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::channel::NyuBand;
    use super::super::mobility::NlosInterval;
    use super::super::rlc::{rlc_header_bytes, PDCP_HEADER_BYTES};
    use super::super::test_support::{building_a, path, s, seq as seq_of, study_a_track, v2};
    use super::*;
    use tcplab_core::SimDuration;

    /// IP packet size used throughout (PDCP SDU of 1502 B).
    const IP_BYTES: u32 = 1500;
    const TTI: SimDuration = SimDuration::from_micros(100);

    fn pkt(seq: u32) -> Packet {
        super::super::test_support::pkt(seq, IP_BYTES)
    }
    fn cell_config(ues: Vec<Mobility>, buildings: Vec<Building>, buffer_bytes: u64) -> CellConfig {
        CellConfig {
            channel: ChannelConfig::mmw_v2(),
            frame: v2(),
            rlc: RlcConfig::study_a(buffer_bytes),
            ul_rlc: RlcConfig::study_a(buffer_bytes),
            cqi_threshold_subframes: 1000,
            policy: SharingPolicy::RoundRobin,
            fixed_mcs: None,
            enb_position: Position::new(0.0, 0.0, 30.0),
            buildings,
            los_test: LosTest::Footprint2d,
            horizon: s(15.0),
            ues,
            ip_mtu: 1500,
            ue_tx_power_dbm: 30.0,
            enb_noise_figure_db: 5.0,
        }
    }
    fn cell(ues: Vec<Mobility>, buildings: Vec<Building>, buffer_bytes: u64, seed: u64) -> MmWaveCell {
        MmWaveCell::new(cell_config(ues, buildings, buffer_bytes), seed).unwrap()
    }

    /// IP goodput of a saturated flow using `symbols` data symbols at `mcs` every subframe
    /// with no HARQ loss: TB bytes less the MAC subheader and the RLC header of the
    /// ⌈TB / 1502⌉ + 1 SDU segments a TB can hold, less the PDCP header share.
    fn expected_ip_rate_bps(mcs: Mcs, symbols: u32) -> f64 {
        let tb_bytes = v2().tb_bits(mcs, symbols) / 8;
        let sdu = IP_BYTES + PDCP_HEADER_BYTES;
        let payload = tb_bytes - 4 - rlc_header_bytes(tb_bytes.div_ceil(sdu) + 1);
        f64::from(payload) * f64::from(IP_BYTES) / f64::from(sdu) * 8.0 / TTI.as_secs_f64()
    }

    /// Delivery trace entry: (instant, UE, TCP sequence number).
    type Trace = Vec<(SimTime, UeId, u32)>;

    /// Runs from `from` to `to` one subframe at a time, offering every UE `per_tti` packets
    /// per subframe on average after each step (whole packets as the credit allows;
    /// infinity: until RLC refuses one); returns the delivery trace and calls `probe` after
    /// every step.
    fn run(
        cell: &mut MmWaveCell,
        from: SimTime,
        to: SimTime,
        per_tti: f64,
        next_seq: &mut [u32],
        mut probe: impl FnMut(&MmWaveCell, SimTime),
    ) -> Trace {
        let mut out = Vec::new();
        let mut trace = Vec::new();
        let mut t = from;
        let mut credit = 0.0;
        while t < to {
            cell.advance_to(t, &mut out);
            trace.extend(out.drain(..).map(|d| (d.at, d.ue, seq_of(&d.packet))));
            probe(cell, t);
            credit += per_tti;
            let n = if per_tti.is_infinite() { usize::MAX } else { credit as usize };
            credit -= n as f64;
            for (ue, seq) in next_seq.iter_mut().enumerate() {
                for _ in 0..n {
                    if !cell.enqueue(ue, RadioDirection::Dl, pkt(*seq), t) && per_tti.is_infinite() {
                        break;
                    }
                    *seq += 1;
                }
            }
            t += TTI;
        }
        trace
    }

    /// IP bits per second delivered to `ue` with delivery instants in [from, to).
    /// A saturated study-(a) UE run from `from` to `to` (seed `seed`), with the UE's path loss
    /// and snapshot taken at each of the `probes` instants (subframe starts).
    fn study_a_saturated(seed: u64, from: SimTime, to: SimTime, probes: &[SimTime]) -> (Trace, Vec<(f64, RadioSnapshot)>) {
        let mut c = cell(vec![study_a_track()], vec![building_a()], 1_000_000, seed);
        let mut seq = [0];
        let mut seen = Vec::new();
        let probe = |c: &MmWaveCell, t: SimTime| {
            if probes.contains(&t) {
                seen.push((c.snapshot(0).path_loss_db, c.snapshot(0)));
            }
        };
        let trace = run(&mut c, from, to, f64::INFINITY, &mut seq, probe);
        assert_eq!(seen.len(), probes.len(), "every probe instant is a subframe start");
        (trace, seen)
    }

    fn rate_bps(trace: &Trace, ue: UeId, from: SimTime, to: SimTime) -> f64 {
        let n = trace.iter().filter(|&&(at, u, _)| u == ue && at >= from && at < to).count();
        n as f64 * f64::from(IP_BYTES) * 8.0 / (to - from).as_secs_f64()
    }

    #[test]
    fn saturated_los_ue_gets_the_mcs_28_rate_less_overhead() {
        // Study-(a) start, LOS: effective SINR ≈ 35 dB (docs/validation.md, mmWave capacity) with the BF gain anywhere in its
        // [20, 32] dB clip range stays above 27 dB ≫ 20.08 dB (MCS 28 threshold): CQI 15,
        // MCS 28, no HARQ error. 22 symbols at MCS 28: TB 313,500 bits = 39,187 B.
        assert_eq!(v2().tb_bits(Mcs::MAX, 22) / 8, 39_187);
        let mut c = cell(vec![study_a_track()], vec![building_a()], 1_000_000, 1);
        let mut seq = [0];
        let trace = run(&mut c, SimTime::ZERO, s(1.0), f64::INFINITY, &mut seq, |_, _| {});
        let want = expected_ip_rate_bps(Mcs::MAX, 22);
        assert!((want / 1e9 - 3.127).abs() < 0.001, "{want}");
        let got = rate_bps(&trace, 0, s(0.1), s(1.0));
        assert!((got / want - 1.0).abs() < 0.005, "got {got}, want {want}");
        let snap = c.snapshot(0);
        assert!(snap.los);
        assert_eq!((snap.cqi, snap.mcs, snap.harq_retx), (15, Some(28), 0));
        assert!((snap.capacity_mbps - v2().phy_rate_bps(Mcs::MAX, 22) / 1e6).abs() < 1e-9);
        assert!(snap.effective_sinr_db > 27.0 && snap.effective_sinr_db < 41.0, "{snap:?}");
    }

    #[test]
    fn blockage_onset_follows_the_39_ms_drop_and_delivery_continues_at_a_lower_mcs() {
        // NLOS from 5 s (study a). The BuildingsObstaclePropagationLossModel drop trace adds 0 dB
        // for 185 tracker samples (21.4 ms at 8.625 samples/ms), 16.27 dB at 30 ms (⌊258.75⌋ = 258
        // samples) and its flat 35.96 dB from 339 samples (39.3 ms). The NLOS effective SINR (≈ 2
        // dB at the mean BF gain, docs/validation.md, mmWave capacity; −5…+7 dB over the BF clip
        // range) stays above the MCS-0 threshold (−7.24 dB): no CQI-0 stall, DL continues at a QPSK
        // MCS (MCS 8 at 2 dB).
        let probes = [s(4.99), s(5.02), s(5.03), s(5.04), s(5.1)];
        let (trace, pl) = study_a_saturated(3, s(4.9), s(5.2), &probes);
        let los_pl = pl[0].0;
        assert!(pl[0].1.los && !pl[1].1.los);
        assert!((pl[1].0 - los_pl).abs() < 0.01, "flat start of the drop: {pl:?}");
        assert!((pl[2].0 - los_pl - 16.27).abs() < 0.01, "30 ms into the drop: {pl:?}");
        assert!((pl[3].0 - los_pl - 35.96).abs() < 0.01, "end of the drop: {pl:?}");
        let nlos = pl[4].1;
        let mcs = nlos.mcs.expect("no CQI-0 stall in NLOS");
        assert!(nlos.effective_sinr_db > -7.24 && mcs <= 12, "{nlos:?}");
        // MCS 28 rate until the drop starts, then a fraction of it, never a stall.
        let los_rate = expected_ip_rate_bps(Mcs::MAX, 22);
        let before = rate_bps(&trace, 0, s(5.0), s(5.02));
        assert!((before / los_rate - 1.0).abs() < 0.02, "{before} vs {los_rate}");
        let after = rate_bps(&trace, 0, s(5.05), s(5.2));
        let nlos_rate = expected_ip_rate_bps(Mcs::new(u32::from(mcs)).unwrap(), 22);
        assert!(after < 0.3 * los_rate && after > 0.8 * nlos_rate, "{after} vs {nlos_rate}");
        for w in 0..15 {
            let from = s(5.05) + SimDuration::from_millis(10 * w);
            assert!(rate_bps(&trace, 0, from, from + SimDuration::from_millis(10)) > 0.0, "stall at {from:?}");
        }
    }

    #[test]
    fn blockage_end_follows_the_16_ms_recovery() {
        // LOS again at 10 s: the recovery trace starts 44.6 dB deep (deeper than the flat NLOS
        // 35.96 dB) and reaches 0 dB at 140 samples (16.2 ms); CQI then restores MCS 28.
        let probes = [s(9.99), s(10.0), s(10.017), s(10.05)];
        let (trace, pl) = study_a_saturated(4, s(9.95), s(10.1), &probes);
        let los_pl = pl[3].0;
        assert!(!pl[0].1.los && pl[1].1.los);
        assert!((pl[0].0 - los_pl - 35.96).abs() < 0.02, "{pl:?}");
        assert!((pl[1].0 - los_pl - 44.6).abs() < 0.02, "{pl:?}");
        assert!((pl[2].0 - los_pl).abs() < 0.02, "{pl:?}");
        assert_eq!(pl[3].1.mcs, Some(28));
        let los_rate = expected_ip_rate_bps(Mcs::MAX, 22);
        let after = rate_bps(&trace, 0, s(10.02), s(10.1));
        assert!((after / los_rate - 1.0).abs() < 0.02, "{after} vs {los_rate}");
        assert!(rate_bps(&trace, 0, s(9.95), s(10.0)) < 0.3 * los_rate);
    }

    #[test]
    fn rlc_tail_drop_with_a_ten_sdu_buffer() {
        // Buffer of 10 PDCP SDUs (15,020 B). Without a CQI report the scheduler uses CQI 1 →
        // MCS 0: a 22-symbol TB holds 9,099 − 2 × 24 (two code blocks) = 9,051 bits = 1,131 B,
        // i.e. 1,125 B of SDU data in one segment (4 B MAC + 2 B RLC header), then
        // 377 + 746 = 1,123 B in two segments (4 + 4 B headers).
        assert_eq!(v2().tb_bits(Mcs::MIN, 22) / 8, 1131);
        let mut c = cell(vec![Mobility::Stationary(Position::new(50.0, 15.0, 1.5))], vec![], 15_020, 5);
        let mut out = Vec::new();
        let mut offer = |c: &mut MmWaveCell, at_us: u64, n: u32| {
            let t = SimTime::ZERO + SimDuration::from_micros(at_us);
            c.advance_to(t, &mut out);
            (0..n).filter(|&i| c.enqueue(0, RadioDirection::Dl, pkt(i), t)).count()
        };
        // 15 offered into the empty buffer at 50 µs: 10 fit.
        assert_eq!(offer(&mut c, 50, 15), 10);
        // The TB decided at 100 µs drained 1,125 B < 1,502 B: no room yet.
        assert_eq!(offer(&mut c, 150, 1), 0);
        // After the second decision at 200 µs 2,248 B are drained: one SDU fits of two.
        assert_eq!(offer(&mut c, 250, 2), 1);
        assert_eq!(c.snapshot(0).rlc_drops, 5 + 1 + 1);
        assert_eq!(c.snapshot(0).rlc_backlog_bytes, 11 * 1502 - 2248);
    }

    /// MMW-V2-3GPP (study b channel, 3-D LOS test): eNB at (0, 0, 10); the UE walks from
    /// (100, 20, 1.5) to (100, −20, 1.5) in 2 s behind a building at x∈[60, 70], y∈[−3, 3]
    /// 30 m tall: NLOS while the ray passes the box (|y|·60/100 < 3 m, i.e. 0.75 s to 1.25 s). The
    /// 3GPP switch is abrupt: at 100 m the SINR falls from ≈ 34.6 dB to ≈ 10.2 dB (docs/validation.md, mmWave capacity) while
    /// the TBs in flight keep MCS 28 (20.08 dB): even Chase-combined over four transmissions
    /// (+6 dB) they fail, and RLC ARQ heals them. Offers `per_tti` packets per subframe until
    /// `until`, then drains the cell (for at most a second).
    fn blockage_run(seed: u64, until: SimTime, per_tti: f64) -> (Trace, MmWaveCell, u32) {
        let track = path(&[(0.0, Position::new(100.0, 20.0, 1.5)), (2.0, Position::new(100.0, -20.0, 1.5))]);
        let building = Building::new([60.0, 70.0], [-3.0, 3.0], [0.0, 30.0]).unwrap();
        let config = CellConfig {
            channel: ChannelConfig::mmw_v2_3gpp(),
            enb_position: Position::new(0.0, 0.0, 10.0),
            los_test: LosTest::Box3d,
            horizon: s(3.0),
            ..cell_config(vec![track], vec![building], 300_000)
        };
        let mut c = MmWaveCell::new(config, seed).unwrap();
        let mut seq = [0];
        let mut trace = run(&mut c, SimTime::ZERO, until, per_tti, &mut seq, |_, _| {});
        let mut out = Vec::new();
        while let Some(t) = c.next_event().filter(|&t| t < until + SimDuration::from_secs(1)) {
            c.advance_to(t, &mut out);
        }
        trace.extend(out.drain(..).map(|d| (d.at, d.ue, seq_of(&d.packet))));
        (trace, c, seq[0])
    }

    #[test]
    fn every_accepted_packet_is_delivered_once_in_order_across_a_blockage() {
        // 20 packets per subframe (2.4 Gb/s) overload the NLOS link: RLC drops. One packet
        // every 20 subframes (6 Mb/s) leaves the transmission queue mostly empty. Offering
        // that stops 200 µs into the blockage leaves TBs that fail after the last new data:
        // ARQ retransmissions are then the only data waiting (FlexTTI step 3: the demand is the
        // retransmission queue).
        for (per_tti, until, drops) in [(20.0, s(2.0), true), (0.05, s(2.0), false), (1.0, s(0.7502), false)] {
            let (trace, c, offered) = blockage_run(6, until, per_tti);
            let snap = c.snapshot(0);
            assert_eq!(snap.rlc_drops > 0, drops, "{snap:?}");
            assert!(snap.harq_retx > 0, "{snap:?}");
            assert!(c.ues[0].bearers[0].rlc.stats().retx_queued_bytes > 0, "no HARQ failure healed by ARQ");
            assert_eq!(c.ues[0].timeline.nlos_intervals(), &[NlosInterval { start: s(0.75), end: s(1.25) }]);
            assert!(trace.windows(2).all(|w| w[0].2 < w[1].2 && w[0].0 <= w[1].0), "out of order");
            assert_eq!(trace.len() as u64 + snap.rlc_drops, u64::from(offered));
            assert_eq!(snap.rlc_backlog_bytes, 0);
            assert_eq!(c.next_event(), None);
        }
    }

    #[test]
    fn the_channel_is_the_same_whatever_the_traffic() {
        // The blockage track under 3GPP (shadowing on its 1 ms grid) with a saturating load
        // and with a packet every 50 subframes: wherever both cells sampled the channel at
        // the same subframe, the SINR is the same to the bit.
        let sampled = |per_tti: f64| {
            let (_, mut c, _) = blockage_run(3, SimTime::ZERO, 0.0);
            let mut seen = Vec::new();
            run(&mut c, SimTime::ZERO, s(2.0), per_tti, &mut [0], |c, t| {
                if c.ues[0].last_sample_at == Some(t) {
                    seen.push((t, c.snapshot(0).sinr_db.to_bits(), c.snapshot(0).los));
                }
            });
            seen
        };
        let (busy, sparse) = (sampled(20.0), sampled(0.02));
        let common: Vec<_> = sparse.iter().filter(|p| busy.binary_search_by_key(&p.0, |b| b.0).is_ok()).collect();
        assert!(common.len() > 100 && common.iter().any(|p| !p.2), "{} common samples", common.len());
        for p in common {
            assert!(busy.contains(p), "at {:?} the SINR differs", p.0);
        }
    }

    #[test]
    fn same_seed_same_delivery_trace() {
        let (a, _, _) = blockage_run(7, s(1.2), 20.0);
        let (b, _, _) = blockage_run(7, s(1.2), 20.0);
        let (other, _, _) = blockage_run(8, s(1.2), 20.0);
        assert_eq!(a, b);
        assert_ne!(a, other);
    }

    #[test]
    fn two_ues_round_robin_share_equally() {
        // Two stationary UEs at mirror positions (equal path loss), both at MCS 28: each gets
        // 11 of the 22 data symbols every subframe.
        let ues = vec![Mobility::Stationary(Position::new(50.0, 15.0, 1.5)), Mobility::Stationary(Position::new(50.0, -15.0, 1.5))];
        let mut c = cell(ues, vec![], 1_000_000, 9);
        let mut seq = [0, 0];
        let trace = run(&mut c, SimTime::ZERO, s(0.5), f64::INFINITY, &mut seq, |_, _| {});
        let want = expected_ip_rate_bps(Mcs::MAX, 11);
        for ue in 0..2 {
            let got = rate_bps(&trace, ue, s(0.05), s(0.5));
            assert!((got / want - 1.0).abs() < 0.01, "UE {ue}: {got} vs {want}");
        }
    }

    #[test]
    fn idle_cell_has_no_next_event_and_skips_idle_time() {
        let mut c = cell(vec![Mobility::Stationary(Position::new(50.0, 15.0, 1.5))], vec![], 1_000_000, 10);
        let mut out = Vec::new();
        assert_eq!(c.next_event(), None);
        c.advance_to(s(3.0), &mut out);
        assert_eq!(c.next_event(), None);
        // A packet at 3.00005 s waits for the boundary at 3.0001 s. Without a CQI report the
        // TBs are MCS 0: the one decided there (on air at 3.0003 s, lead 2) carries 1,125 of
        // the 1,502 B; the one decided at 3.0002 s carries the other 377 B in the symbols for
        // 377 + 17 B (FlexTTI step 3) and is decoded 100 µs after its last symbol.
        assert!(c.enqueue(0, RadioDirection::Dl, pkt(0), s(3.00005)));
        assert_eq!(c.next_event(), Some(s(3.0001)));
        while let Some(t) = c.next_event() {
            c.advance_to(t, &mut out);
        }
        let symbols = v2().symbols_for_bits(Mcs::MIN, (377 + 17) * 8);
        assert_eq!(symbols, 8);
        let at = s(3.0004) + v2().data_end_offset(0, symbols) + v2().tb_decode_latency();
        assert_eq!(out.iter().map(|d| (d.at, d.ue, seq_of(&d.packet))).collect::<Vec<_>>(), vec![(at, 0, 0)]);
        assert_eq!(c.next_event(), None);
    }

    #[test]
    fn los_switch_during_idle_time_starts_the_drop_on_time() {
        // Idle through the 5 s blockage onset, woken at 5.0101 s: the switch at 5 s is fed to
        // the tracker at 5 s, so at 5.03 s the loss is the 30-ms point of the drop (16.27 dB
        // above LOS), not the 19.9-ms point (0 dB) it would be if the drop began on waking.
        let mut c = cell(vec![study_a_track()], vec![building_a()], 1_000_000, 11);
        let mut out = Vec::new();
        c.advance_to(s(4.0), &mut out);
        assert!(c.enqueue(0, RadioDirection::Dl, pkt(0), s(4.0)));
        while let Some(t) = c.next_event() {
            c.advance_to(t, &mut out);
        }
        assert_eq!(out.len(), 1);
        c.advance_to(s(5.01), &mut out);
        let mut seq = [1];
        run(&mut c, s(5.01), s(5.0301), f64::INFINITY, &mut seq, |_, _| {});
        let ue = study_a_track().position_at(s(5.03));
        let d3d_m = ue.distance_m(Position::new(0.0, 0.0, 30.0));
        let los_pl = NyuBand::from_carrier_hz(28e9).unwrap().fit(true).path_loss_db(d3d_m);
        assert!((c.snapshot(0).path_loss_db - los_pl - 16.27).abs() < 0.01, "{:?}", c.snapshot(0));
    }

    #[test]
    fn cqi_zero_at_the_recovery_onset_is_cleared_by_harq_retransmission_reports() {
        // LOS returns at 10 s with the recovery trace 8.6 dB deeper than the NLOS plateau; with
        // a low BF draw (seed 8) the effective SINR of the TBs sent at 10.0000 s is −8.0 dB,
        // below the MCS-0 threshold (−7.24 dB): CQI 0, so no new DL data (FlexTTI step 3, M13). Every
        // DL reception refreshes the CQI (MmWavePhyMacCommon) and the failed TBs in flight are retransmitted
        // (HARQ RTT 5 subframes), so the stall lasts 3 subframes, not the 100 ms CQI timer.
        let mut c = cell(vec![study_a_track()], vec![building_a()], 1_000_000, 8);
        let mut seq = [0];
        let mut stalled = Vec::new();
        let probe = |c: &MmWaveCell, t: SimTime| {
            if c.snapshot(0).mcs.is_none() {
                stalled.push((t, c.snapshot(0).harq_retx));
            }
        };
        let trace = run(&mut c, s(9.9), s(10.05), f64::INFINITY, &mut seq, probe);
        assert_eq!(stalled, vec![(s(10.0002), 0), (s(10.0003), 0), (s(10.0004), 0)]);
        assert!(c.snapshot(0).harq_retx > 0);
        assert!(rate_bps(&trace, 0, s(10.0), s(10.01)) > 0.0);
    }

    /// A cell with one stationary study-(a) UE in line of sight and `buffer_bytes` of RLC
    /// buffer in both directions.
    fn los_cell(buffer_bytes: u64, seed: u64) -> MmWaveCell {
        cell(vec![Mobility::Stationary(Position::new(50.0, 15.0, 1.5))], vec![], buffer_bytes, seed)
    }

    fn drain(c: &mut MmWaveCell) -> Vec<RadioDelivery> {
        let mut out = Vec::new();
        while let Some(t) = c.next_event() {
            c.advance_to(t, &mut out);
        }
        out
    }

    #[test]
    fn an_uplink_packet_waits_for_the_bsr_then_its_grant() {
        // A 1500-B packet reaches the UE's PDCP at 3.00005 s in an idle cell. The subframe at
        // 3.0001 s takes the BSR (1,502 B); the decision at 3.0002 s grants it for the
        // subframe at 3.0004 s (lead 2). No UL reception yet: the MCS comes from the current
        // UL SINR (≈ 35 dB effective, docs/validation.md, mmWave capacity) → MCS 28, whose one symbol holds 1,785 B ≥ 1,502
        // + 21 B (FlexTTI step 4). Decoded 100 µs after that symbol: ≈ 0.45 ms after arrival (MmWavePointToPointEpcHelper).
        let mut c = los_cell(1_000_000, 12);
        let mut out = Vec::new();
        c.advance_to(s(3.0), &mut out);
        assert!(c.enqueue(0, RadioDirection::Ul, pkt(7), s(3.00005)));
        assert_eq!(c.packets_held(), 1);
        let out = drain(&mut c);
        assert_eq!(v2().symbols_for_bits(Mcs::MAX, (1502 + 21) * 8), 1);
        let at = s(3.0004) + v2().data_end_offset(0, 1) + v2().tb_decode_latency();
        assert_eq!(out.len(), 1);
        let d = out[0];
        assert_eq!((d.at, d.ue, d.direction, seq_of(&d.packet), d.packet.size), (at, 0, RadioDirection::Ul, 7, IP_BYTES));
        assert!((d.at - s(3.00005)).as_secs_f64() > 0.4e-3 && (d.at - s(3.00005)).as_secs_f64() < 0.5e-3);
        assert_eq!((c.packets_held(), c.snapshot(0).ul_mcs), (0, Some(28)));
    }

    #[test]
    fn uplink_and_downlink_share_the_symbols_of_a_subv2() {
        // Both directions saturated: MmWaveFlexTtiMacScheduler's lean formula gives UL max(avail/2, …) = 11 symbols
        // and DL the other 11, both at MCS 28.
        let mut c = los_cell(1_000_000, 13);
        let mut out = Vec::new();
        let (mut dl, mut ul) = (0, 0);
        let mut t = SimTime::ZERO;
        while t < s(0.3) {
            c.advance_to(t, &mut out);
            while c.enqueue(0, RadioDirection::Dl, pkt(dl), t) {
                dl += 1;
            }
            while c.enqueue(0, RadioDirection::Ul, pkt(ul), t) {
                ul += 1;
            }
            t += TTI;
        }
        let want = expected_ip_rate_bps(Mcs::MAX, 11);
        for direction in DIRECTIONS {
            let n = out.iter().filter(|d| d.direction == direction && d.at >= s(0.05) && d.at < s(0.3)).count();
            let got = n as f64 * f64::from(IP_BYTES) * 8.0 / 0.25;
            assert!((got / want - 1.0).abs() < 0.01, "{direction:?}: {got} vs {want}");
        }
    }

    #[test]
    fn a_packet_over_the_mtu_crosses_as_fragments_and_is_lost_with_any_of_them() {
        // A 10,052-B segment (MSS 10,000, study a) over a 1500-B MTU: ⌈10,032 / 1,480⌉ = 7
        // fragments, six of 1,500 B and one of 1,152 + 20 B; as PDCP SDUs 6 × 1,502 + 1,174 =
        // 10,186 B. A buffer of exactly that takes it and hands the whole segment over once.
        let segment = |seq| Packet { size: 10_052, ..pkt(seq) };
        let mut c = los_cell(10_186, 14);
        assert!(c.enqueue(0, RadioDirection::Dl, segment(0), SimTime::ZERO));
        assert_eq!(c.ues[0].bearers[0].rlc.stats().accepted_sdus, 7);
        let out = drain(&mut c);
        assert_eq!(out.iter().map(|d| (seq_of(&d.packet), d.packet.size)).collect::<Vec<_>>(), vec![(0, 10_052)]);
        // One byte less: the last fragment is tail-dropped; the six others still cross the
        // air, and the segment is lost (counted once). The next packet arrives as usual.
        let mut c = los_cell(10_185, 14);
        assert!(!c.enqueue(0, RadioDirection::Dl, segment(0), SimTime::ZERO));
        assert_eq!((c.packets_dropped(), c.packets_held()), (1, 0));
        assert_eq!(c.ues[0].bearers[0].rlc.stats().accepted_sdus, 6);
        assert!(drain(&mut c).is_empty());
        assert_eq!(c.ues[0].bearers[0].rlc.stats().delivered_sdus, 6);
        let t = s(0.1);
        let mut out = Vec::new();
        c.advance_to(t, &mut out);
        assert!(c.enqueue(0, RadioDirection::Dl, pkt(1), t));
        let out = drain(&mut c);
        assert_eq!(out.iter().map(|d| seq_of(&d.packet)).collect::<Vec<_>>(), vec![1]);
        assert_eq!((c.packets_dropped(), c.packets_held(), c.snapshot(0).rlc_drops), (1, 0, 1));
    }

    #[test]
    fn uplink_sinr_follows_the_ue_power_and_the_enb_noise_figure() {
        // 3GPP profile (no selectivity penalty): 20 dBm at the UE and NF 8 dB at the eNB put
        // the UL 10 + 3 dB below the DL, which has 30 dBm at the eNB and NF 5 dB at the UE.
        let config = CellConfig {
            channel: ChannelConfig::mmw_v2_3gpp(),
            ue_tx_power_dbm: 20.0,
            enb_noise_figure_db: 8.0,
            ..cell_config(vec![Mobility::Stationary(Position::new(100.0, 0.0, 1.5))], vec![], 1_000_000)
        };
        let mut c = MmWaveCell::new(config, 15).unwrap();
        let mut out = Vec::new();
        c.enqueue(0, RadioDirection::Dl, pkt(0), SimTime::ZERO);
        c.advance_to(s(0.001), &mut out);
        let sample = c.ues[0].last.unwrap();
        assert!((c.ul_sinr_db(&sample) - (sample.sinr_db - 13.0)).abs() < 1e-9);
    }
}
