//! One mmWave cell run TTI by TTI (radio-models.md A6 frame timing, A7 scheduling, A8 AMC,
//! A9 HARQ, A10 RLC AM), composing the channel (A3–A5), the LOS timeline of each UE's track
//! (A1, A2), the FlexTTI scheduler and one RLC AM bearer per UE. This is the downlink only:
//! packets enter at the eNB (`enqueue`) and leave at the UE with their delivery instant.
//!
//! Per subframe starting at t (100 µs, A6), in this order:
//! 1. every UE's channel is sampled at t, LOS taken from its `LosTimeline`; the LOS↔NLOS
//!    switches since the previous sample are fed to the channel at their exact instants first,
//!    so the A4.2 tracker starts its 39 ms drop / 16 ms recovery when the geometry changes,
//!    whatever the sampling cadence (A4.2 asks for ≤ 125 µs; every subframe is sampled while
//!    the cell has work);
//! 2. the allocations decided two subframes earlier (scheduling lead, A6) go on air: HARQ
//!    draws each TB's fate with the UE's effective SINR at t and the cell's own `SimRng`;
//! 3. HARQ processes whose retransmission timed out are freed and their RLC PDU is handed to
//!    ARQ (`RlcAm::on_failed`, detected at t);
//! 4. the scheduler decides the subframe at t + 2 TTI from the RLC buffer status at t, and
//!    every new DL TB is filled by RLC at once (TB bytes = ⌊tb_bits / 8⌋).
//!
//! Outcomes are acted on at the instant the real feedback exists (end of the TB's symbols +
//! 100 µs decode, `HarqEntity::transmit`): the UE's CQI report (A6: after every DL reception,
//! decoded or not, CQI from the effective SINR the TB saw), then RLC delivery
//! (`on_delivered`, packets handed out stamped with that instant) or ARQ (`on_failed`).
//!
//! Choices and simplifications (reported):
//! - *The CQI report reaches the scheduler at the TB's decode instant (no extra UL feedback
//!   delay; A6 gives none). It is therefore used two subframes later at the earliest.
//! - *DL demand (A7.3): the caller-chosen queue is the eligible RLC retransmission bytes if any,
//!   else the new bytes; no RLC STATUS PDUs travel in DL (the bearer is DL-only, its STATUS
//!   PDUs go UL and are not modelled, as in rlc.rs).
//! - *If RLC has nothing to put in a scheduled new TB (only possible for a TB under 7 B), the
//!   TB goes on air as padding and its outcome is ignored.
//! - Idle cell: with no RLC bytes, no HARQ process busy, no allocation pending and no
//!   outcome pending, `advance_to` skips straight to the first subframe boundary after `now`
//!   without sampling the channel (the LOS switches in between are still fed to the tracker
//!   when sampling resumes, step 1). A packet enqueued into an idle cell is scheduled at the
//!   first boundary strictly after its arrival.
//! - Doppler speed is the V2.0 quirk vx + vy + vz (A5.1), used only with fast fading on.
//! - Observed (tests): in study (a) the NLOS effective SINR stays above the MCS-0 threshold,
//!   so DL continues at a QPSK/16-QAM MCS through the blockage; but the A4.2 recovery trace
//!   starts 8.6 dB below the NLOS plateau, so at the end of the blockage a low BF draw gives
//!   CQI 0. The stall is short (a few subframes): retransmissions of the TBs in flight are
//!   DL receptions and refresh the CQI, long before the 100 ms CQI timer.
//! - Left out (next step): the uplink (UE → eNB) — UL RLC bearers with BSR, UL SINR/MCS
//!   (`ue_best_mcs`), the UL grant delay (`FrameConfig::ul_scheduling_delay`) and UL HARQ; the
//!   scheduler already supports UL flows (`UeDemand::ul_bsr_bytes`, `ul_mcs`).

use tcplab_core::{Packet, SimRng, SimTime};

use super::channel::{Channel, ChannelConfig, ChannelConfigError, ChannelInput, ChannelSample};
use super::geometry::{Building, LosTest, Position};
use super::mobility::{LosTimeline, Mobility};
use super::phy::{cqi_from_sinr, Cqi, FrameConfig, HarqOutcome, HARQ_PROCESSES};
use super::rlc::{PduId, RlcAm, RlcConfig};
use super::scheduler::{Allocation, Direction, FlexTtiScheduler, SharingPolicy, UeDemand};

/// Index of a UE in the cell, in the order of `CellConfig::ues`.
pub type UeId = usize;

/// Subframes from a scheduling decision to the subframe it fills, plus the current one:
/// the ring of decided allocations has one slot per subframe in that window (A6 lead = 2).
const ALLOCATION_SLOTS: usize = 3;

/// Everything a cell needs; one `Mobility` per UE.
#[derive(Clone, Debug)]
pub struct CellConfig {
    pub channel: ChannelConfig,
    pub frame: FrameConfig,
    pub rlc: RlcConfig,
    /// CqiTimerThreshold in subframes (A7: 100 default, 1000 in study (a)).
    pub cqi_threshold_subframes: u32,
    pub policy: SharingPolicy,
    pub enb_position: Position,
    pub buildings: Vec<Building>,
    /// 2-D for MMW-V2 (study a), 3-D for MMW-V2-3GPP (study b), A1.
    pub los_test: LosTest,
    /// End of the span the LOS timelines are computed over (the scenario's duration).
    pub horizon: SimTime,
    pub ues: Vec<Mobility>,
}

/// The radio state of one UE for the recorder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadioSnapshot {
    /// Wideband SINR and effective SINR (after the A5.1 selectivity penalty) of the latest
    /// channel sample, dB (NaN before the first sample).
    pub sinr_db: f64,
    pub effective_sinr_db: f64,
    /// Path loss including the blockage trace or shadowing, dB.
    pub path_loss_db: f64,
    pub los: bool,
    /// The DL CQI the scheduler uses now (A7.3), and the DL MCS it gives (None: CQI 0 stall).
    pub cqi: u8,
    pub mcs: Option<u8>,
    /// PHY rate of all 22 data symbols at `mcs`, Mb/s (0 when stalled).
    pub capacity_mbps: f64,
    /// RLC bytes not yet delivered for the first time: new + retransmission queue.
    pub rlc_backlog_bytes: u64,
    /// SDUs tail-dropped by RLC so far.
    pub rlc_drops: u64,
    /// HARQ retransmissions put on air so far.
    pub harq_retx: u64,
}

/// A DL TB whose feedback is not yet acted on.
#[derive(Clone, Copy, Debug)]
struct PendingOutcome {
    at: SimTime,
    ue: UeId,
    cqi: Cqi,
    /// The RLC PDU and whether it was delivered (false: HARQ gave up); None while HARQ
    /// retransmits, or for a padding TB.
    result: Option<(PduId, bool)>,
}

struct UeState {
    mobility: Mobility,
    timeline: LosTimeline,
    channel: Channel,
    rlc: RlcAm,
    /// The RLC PDU each DL HARQ process carries.
    harq_pdu: [Option<PduId>; HARQ_PROCESSES],
    /// DL HARQ processes holding a TB.
    harq_busy: u32,
    harq_retx: u64,
    last_sample_at: Option<SimTime>,
    last: Option<ChannelSample>,
    los: bool,
}

/// One cell: eNB, UEs, channels, MAC and RLC, advanced lazily by the simulator.
pub struct MmWaveCell {
    frame: FrameConfig,
    enb: [f64; 3],
    scheduler: FlexTtiScheduler,
    ues: Vec<UeState>,
    rng: SimRng,
    /// Start of the next subframe to run, and of the last one run.
    next_subframe: SimTime,
    last_subframe: SimTime,
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
    /// Builds the cell; the channels and HARQ draw from sub-streams of `seed`.
    pub fn new(config: CellConfig, seed: u64) -> Result<MmWaveCell, ChannelConfigError> {
        assert!(!config.ues.is_empty(), "a cell needs at least one UE");
        let mut ues = Vec::with_capacity(config.ues.len());
        for (i, mobility) in config.ues.into_iter().enumerate() {
            let timeline = LosTimeline::compute(
                config.los_test,
                config.enb_position,
                &mobility,
                &config.buildings,
                SimTime::ZERO,
                config.horizon,
            );
            let channel = Channel::new(
                config.channel,
                SimRng::stream(seed, &format!("mmwave/cell/channel/{i}")),
            )?;
            ues.push(UeState {
                mobility,
                timeline,
                channel,
                rlc: RlcAm::new(config.rlc),
                harq_pdu: [None; HARQ_PROCESSES],
                harq_busy: 0,
                harq_retx: 0,
                last_sample_at: None,
                last: None,
                los: true,
            });
        }
        let n = ues.len();
        let data_symbols = config.frame.data_symbols_per_subframe() as usize;
        Ok(MmWaveCell {
            frame: config.frame,
            enb: point(config.enb_position),
            scheduler: FlexTtiScheduler::new(
                config.frame,
                n,
                config.cqi_threshold_subframes,
                config.policy,
            ),
            ues,
            rng: SimRng::stream(seed, "mmwave/cell/harq"),
            next_subframe: SimTime::ZERO,
            last_subframe: SimTime::ZERO,
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

    /// A packet for `ue` reaches the eNB's PDCP at `now`: accepted (true) or tail-dropped by
    /// RLC (false). Call `advance_to(now)` first.
    pub fn enqueue(&mut self, ue: UeId, packet: Packet, now: SimTime) -> bool {
        if !self.has_work() {
            self.skip_idle_until(now);
        }
        self.ues[ue].rlc.enqueue(packet, now)
    }

    /// Runs every subframe boundary and every HARQ outcome at or before `now`, appending the
    /// packets delivered to the UEs (delivery instant, UE, packet) in time order.
    pub fn advance_to(&mut self, now: SimTime, out: &mut Vec<(SimTime, UeId, Packet)>) {
        loop {
            if !self.has_work() {
                self.skip_idle_until(now);
                return;
            }
            match self.pending.first() {
                Some(p) if p.at <= self.next_subframe && p.at <= now => {
                    self.act_on_first_outcome(out)
                }
                _ if self.next_subframe <= now => self.run_subframe(),
                _ => return,
            }
        }
    }

    /// The instant `advance_to` next has something to do: the next HARQ outcome or subframe
    /// boundary while any work is pending; None for an idle cell.
    pub fn next_event(&self) -> Option<SimTime> {
        if !self.has_work() {
            return None;
        }
        Some(
            self.pending
                .first()
                .map_or(self.next_subframe, |p| p.at.min(self.next_subframe)),
        )
    }

    /// The radio state of `ue` as of the last subframe run.
    pub fn snapshot(&self, ue: UeId) -> RadioSnapshot {
        let u = &self.ues[ue];
        let cqi = self.scheduler.ue(ue).dl_cqi.cqi(self.last_subframe);
        let mcs = self.scheduler.ue(ue).dl_cqi.dl_mcs(self.last_subframe);
        let status = u.rlc.buffer_status(self.last_subframe);
        RadioSnapshot {
            sinr_db: u.last.map_or(f64::NAN, |s| s.sinr_db),
            effective_sinr_db: u.last.map_or(f64::NAN, |s| s.effective_sinr_db),
            path_loss_db: u.last.map_or(f64::NAN, |s| s.path_loss_db),
            los: u.los,
            cqi: cqi.index(),
            mcs: mcs.map(|m| m.index()),
            capacity_mbps: mcs.map_or(0.0, |m| {
                self.frame
                    .phy_rate_bps(m, self.frame.data_symbols_per_subframe())
                    / 1e6
            }),
            rlc_backlog_bytes: status.new_bytes
                + status.retx_ready_bytes
                + status.retx_waiting_bytes,
            rlc_drops: u.rlc.stats().dropped_sdus,
            harq_retx: u.harq_retx,
        }
    }

    fn has_work(&self) -> bool {
        !self.pending.is_empty()
            || self.allocations.iter().any(|a| !a.is_empty())
            || self.ues.iter().any(|u| {
                let s = u.rlc.buffer_status(self.next_subframe);
                u.harq_busy > 0 || s.new_bytes + s.retx_ready_bytes + s.retx_waiting_bytes > 0
            })
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

    fn act_on_first_outcome(&mut self, out: &mut Vec<(SimTime, UeId, Packet)>) {
        let p = self.pending.remove(0);
        self.scheduler.ue_mut(p.ue).dl_cqi.report(p.cqi, p.at);
        let rlc = &mut self.ues[p.ue].rlc;
        match p.result {
            Some((pdu, true)) => {
                self.delivered.clear();
                rlc.on_delivered(pdu, &mut self.delivered);
                out.extend(self.delivered.drain(..).map(|packet| (p.at, p.ue, packet)));
            }
            Some((pdu, false)) => rlc.on_failed(pdu, p.at),
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
            debug_assert_eq!(a.direction, Direction::Dl, "the cell schedules DL only");
            let u = &mut self.ues[a.ue];
            let sinr = u.last.expect("sampled above").effective_sinr_db;
            if a.retransmission {
                u.harq_retx += 1;
            }
            let harq = &mut self.scheduler.ue_mut(a.ue).dl_harq;
            let outcome = harq.transmit(a.harq, t, a.first_symbol, sinr, &mut self.rng);
            let (at, delivered) = match outcome {
                HarqOutcome::Delivered { at, .. } => (at, Some(true)),
                HarqOutcome::Failed { detected_at } => (detected_at, Some(false)),
                HarqOutcome::Retransmit { .. } => (
                    t + self.frame.data_end_offset(a.first_symbol, a.symbols)
                        + self.frame.tb_decode_latency(),
                    None,
                ),
            };
            let result = match delivered {
                Some(ok) => {
                    u.harq_busy -= 1;
                    u.harq_pdu[a.harq.index()].take().map(|pdu| (pdu, ok))
                }
                None => None,
            };
            self.push_outcome(PendingOutcome {
                at,
                ue: a.ue,
                cqi: cqi_from_sinr(sinr),
                result,
            });
        }
        self.allocations[slot].clear();

        // Step 3: timed-out HARQ processes hand their PDU to ARQ.
        for (i, u) in self.ues.iter_mut().enumerate() {
            while let Some(id) = self.scheduler.ue_mut(i).dl_harq.expire_stale(t) {
                u.harq_busy -= 1;
                if let Some(pdu) = u.harq_pdu[id.index()].take() {
                    u.rlc.on_failed(pdu, t);
                }
            }
        }

        // Step 4: decide the subframe at t + 2 TTI and fill its new TBs.
        for (d, u) in self.demands.iter_mut().zip(&self.ues) {
            let s = u.rlc.buffer_status(t);
            let queue = if s.retx_ready_bytes > 0 {
                s.retx_ready_bytes
            } else {
                s.new_bytes
            };
            *d = UeDemand {
                dl_queue_bytes: u32::try_from(queue).unwrap_or(u32::MAX),
                ..UeDemand::default()
            };
        }
        let target = (slot + ALLOCATION_SLOTS - 1) % ALLOCATION_SLOTS;
        for a in self.scheduler.schedule(t, &self.demands) {
            if !a.retransmission {
                let u = &mut self.ues[a.ue];
                u.harq_busy += 1;
                u.harq_pdu[a.harq.index()] = u.rlc.fill(a.tb_bits / 8, t).map(|f| f.pdu);
            }
            self.allocations[target].push(*a);
        }

        self.last_subframe = t;
        self.next_subframe = t + self.frame.tti();
        self.slot = (slot + 1) % ALLOCATION_SLOTS;
    }
}

/// Samples `u`'s channel at `t`, first at every LOS switch since its previous sample (A4.2).
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
    if let Some(mut prev) = u.last_sample_at {
        while let Some(switch) = u.timeline.next_transition_after(prev).filter(|&s| s < t) {
            at(u, switch);
            prev = switch;
        }
    }
    at(u, t);
}

#[cfg(test)]
mod tests {
    use super::super::channel::NyuBand;
    use super::super::mobility::{NlosInterval, Waypoint, WaypointPath};
    use super::super::phy::Mcs;
    use super::super::rlc::{rlc_header_bytes, PDCP_HEADER_BYTES};
    use super::*;
    use tcplab_core::{DataHeader, Ecn, SimDuration};

    /// IP packet size used throughout (PDCP SDU of 1502 B).
    const IP_BYTES: u32 = 1500;
    const TTI: SimDuration = SimDuration::from_micros(100);

    fn s(secs: f64) -> SimTime {
        SimTime((secs * 1e9).round() as u64)
    }
    fn pkt(seq: u32) -> Packet {
        let hdr = DataHeader {
            seq,
            payload: IP_BYTES - 52,
            tsval: SimTime::ZERO,
            cwr: false,
        };
        Packet::data(0, 0, 1, hdr, Ecn::NotEct)
    }
    fn frame() -> FrameConfig {
        FrameConfig::mmw_v2(28e9, 1e9).unwrap()
    }
    /// Study (a), radio-models.md A0: eNB (0, 0, 30), building x∈[40, 45], y∈[−4, 4], UE
    /// (50, 15, 1.5) → (50, −15, 1.5) over 15 s, NLOS for 5 s ≤ t < 10 s.
    fn study_a_track() -> Mobility {
        let wp = |t: f64, y: f64| Waypoint {
            time: s(t),
            position: Position::new(50.0, y, 1.5),
        };
        Mobility::Waypoints(WaypointPath::new(vec![wp(0.0, 15.0), wp(15.0, -15.0)]).unwrap())
    }
    fn study_a_building() -> Building {
        Building::new([40.0, 45.0], [-4.0, 4.0], [0.0, 30.0]).unwrap()
    }
    fn cell(
        ues: Vec<Mobility>,
        buildings: Vec<Building>,
        buffer_bytes: u64,
        seed: u64,
    ) -> MmWaveCell {
        let config = CellConfig {
            channel: ChannelConfig::mmw_v2(),
            frame: frame(),
            rlc: RlcConfig::study_a(buffer_bytes),
            cqi_threshold_subframes: 1000,
            policy: SharingPolicy::RoundRobin,
            enb_position: Position::new(0.0, 0.0, 30.0),
            buildings,
            los_test: LosTest::Footprint2d,
            horizon: s(15.0),
            ues,
        };
        MmWaveCell::new(config, seed).unwrap()
    }

    /// IP goodput of a saturated flow using `symbols` data symbols at `mcs` every subframe
    /// with no HARQ loss: TB bytes less the MAC subheader and the RLC header of the
    /// ⌈TB / 1502⌉ + 1 SDU segments a TB can hold, less the PDCP header share.
    fn expected_ip_rate_bps(mcs: Mcs, symbols: u32) -> f64 {
        let tb_bytes = frame().tb_bits(mcs, symbols) / 8;
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
            trace.extend(out.drain(..).map(|(at, ue, p)| (at, ue, seq_of(&p))));
            probe(cell, t);
            credit += per_tti;
            let n = if per_tti.is_infinite() {
                usize::MAX
            } else {
                credit as usize
            };
            credit -= n as f64;
            for (ue, seq) in next_seq.iter_mut().enumerate() {
                for _ in 0..n {
                    if !cell.enqueue(ue, pkt(*seq), t) && per_tti.is_infinite() {
                        break;
                    }
                    *seq += 1;
                }
            }
            t += TTI;
        }
        trace
    }

    fn seq_of(p: &Packet) -> u32 {
        match p.kind {
            tcplab_core::PacketKind::Data(h) => h.seq,
            _ => unreachable!("only data packets are offered"),
        }
    }

    /// IP bits per second delivered to `ue` with delivery instants in [from, to).
    /// A saturated study-(a) UE run from `from` to `to` (seed `seed`), with the UE's path loss
    /// and snapshot taken at each of the `probes` instants (subframe starts).
    fn study_a_saturated(seed: u64, from: SimTime, to: SimTime, probes: &[SimTime]) -> (Trace, Vec<(f64, RadioSnapshot)>) {
        let mut c = cell(vec![study_a_track()], vec![study_a_building()], 1_000_000, seed);
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
        let n = trace
            .iter()
            .filter(|&&(at, u, _)| u == ue && at >= from && at < to)
            .count();
        n as f64 * f64::from(IP_BYTES) * 8.0 / (to - from).as_secs_f64()
    }

    #[test]
    fn saturated_los_ue_gets_the_mcs_28_rate_less_overhead() {
        // Study-(a) start, LOS: effective SINR ≈ 35 dB (A12) with the BF gain anywhere in its
        // [20, 32] dB clip range stays above 27 dB ≫ 20.08 dB (MCS 28 threshold): CQI 15,
        // MCS 28, no HARQ error. 22 symbols at MCS 28: TB 313,500 bits = 39,187 B.
        assert_eq!(frame().tb_bits(Mcs::MAX, 22) / 8, 39_187);
        let mut c = cell(
            vec![study_a_track()],
            vec![study_a_building()],
            1_000_000,
            1,
        );
        let mut seq = [0];
        let trace = run(
            &mut c,
            SimTime::ZERO,
            s(1.0),
            f64::INFINITY,
            &mut seq,
            |_, _| {},
        );
        let want = expected_ip_rate_bps(Mcs::MAX, 22);
        assert!((want / 1e9 - 3.127).abs() < 0.001, "{want}");
        let got = rate_bps(&trace, 0, s(0.1), s(1.0));
        assert!((got / want - 1.0).abs() < 0.005, "got {got}, want {want}");
        let snap = c.snapshot(0);
        assert!(snap.los);
        assert_eq!((snap.cqi, snap.mcs, snap.harq_retx), (15, Some(28), 0));
        assert!((snap.capacity_mbps - frame().phy_rate_bps(Mcs::MAX, 22) / 1e6).abs() < 1e-9);
        assert!(
            snap.effective_sinr_db > 27.0 && snap.effective_sinr_db < 41.0,
            "{snap:?}"
        );
    }

    #[test]
    fn blockage_onset_follows_the_39_ms_drop_and_delivery_continues_at_a_lower_mcs() {
        // NLOS from 5 s (study a). The A4.2 drop trace adds 0 dB for 185 tracker samples
        // (21.4 ms at 8.625 samples/ms), 16.27 dB at 30 ms (⌊258.75⌋ = 258 samples) and its flat
        // 35.96 dB from 339 samples (39.3 ms). The NLOS effective SINR (≈ 2 dB at the mean BF
        // gain, A12; −5…+7 dB over the BF clip range) stays above the MCS-0 threshold
        // (−7.24 dB): no CQI-0 stall, DL continues at a QPSK MCS (MCS 8 at 2 dB).
        let probes = [s(4.99), s(5.02), s(5.03), s(5.04), s(5.1)];
        let (trace, pl) = study_a_saturated(3, s(4.9), s(5.2), &probes);
        let los_pl = pl[0].0;
        assert!(pl[0].1.los && !pl[1].1.los);
        assert!(
            (pl[1].0 - los_pl).abs() < 0.01,
            "flat start of the drop: {pl:?}"
        );
        assert!(
            (pl[2].0 - los_pl - 16.27).abs() < 0.01,
            "30 ms into the drop: {pl:?}"
        );
        assert!(
            (pl[3].0 - los_pl - 35.96).abs() < 0.01,
            "end of the drop: {pl:?}"
        );
        let nlos = pl[4].1;
        let mcs = nlos.mcs.expect("no CQI-0 stall in NLOS");
        assert!(nlos.effective_sinr_db > -7.24 && mcs <= 12, "{nlos:?}");
        // MCS 28 rate until the drop starts, then a fraction of it, never a stall.
        let los_rate = expected_ip_rate_bps(Mcs::MAX, 22);
        let before = rate_bps(&trace, 0, s(5.0), s(5.02));
        assert!(
            (before / los_rate - 1.0).abs() < 0.02,
            "{before} vs {los_rate}"
        );
        let after = rate_bps(&trace, 0, s(5.05), s(5.2));
        let nlos_rate = expected_ip_rate_bps(Mcs::new(u32::from(mcs)).unwrap(), 22);
        assert!(
            after < 0.3 * los_rate && after > 0.8 * nlos_rate,
            "{after} vs {nlos_rate}"
        );
        for w in 0..15 {
            let from = s(5.05) + SimDuration::from_millis(10 * w);
            assert!(
                rate_bps(&trace, 0, from, from + SimDuration::from_millis(10)) > 0.0,
                "stall at {from:?}"
            );
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
        assert!(
            (after / los_rate - 1.0).abs() < 0.02,
            "{after} vs {los_rate}"
        );
        assert!(rate_bps(&trace, 0, s(9.95), s(10.0)) < 0.3 * los_rate);
    }

    #[test]
    fn rlc_tail_drop_with_a_ten_sdu_buffer() {
        // Buffer of 10 PDCP SDUs (15,020 B). Without a CQI report the scheduler uses CQI 1 →
        // MCS 0: a 22-symbol TB holds 9,099 − 2 × 24 (two code blocks) = 9,051 bits = 1,131 B,
        // i.e. 1,125 B of SDU data in one segment (4 B MAC + 2 B RLC header), then
        // 377 + 746 = 1,123 B in two segments (4 + 4 B headers).
        assert_eq!(frame().tb_bits(Mcs::MIN, 22) / 8, 1131);
        let mut c = cell(
            vec![Mobility::Stationary(Position::new(50.0, 15.0, 1.5))],
            vec![],
            15_020,
            5,
        );
        let mut out = Vec::new();
        let mut offer = |c: &mut MmWaveCell, at_us: u64, n: u32| {
            let t = SimTime::ZERO + SimDuration::from_micros(at_us);
            c.advance_to(t, &mut out);
            (0..n).filter(|&i| c.enqueue(0, pkt(i), t)).count()
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
    /// 3GPP switch is abrupt: at 100 m the SINR falls from ≈ 34.6 dB to ≈ 10.2 dB (A12) while
    /// the TBs in flight keep MCS 28 (20.08 dB): even Chase-combined over four transmissions
    /// (+6 dB) they fail, and RLC ARQ heals them. Offers `per_tti` packets per subframe until
    /// `until`, then drains the cell (for at most a second).
    fn blockage_run(seed: u64, until: SimTime, per_tti: f64) -> (Trace, MmWaveCell, u32) {
        let wp = |t: f64, y: f64| Waypoint {
            time: s(t),
            position: Position::new(100.0, y, 1.5),
        };
        let track =
            Mobility::Waypoints(WaypointPath::new(vec![wp(0.0, 20.0), wp(2.0, -20.0)]).unwrap());
        let config = CellConfig {
            channel: ChannelConfig::mmw_v2_3gpp(),
            frame: frame(),
            rlc: RlcConfig::study_a(300_000),
            cqi_threshold_subframes: 1000,
            policy: SharingPolicy::RoundRobin,
            enb_position: Position::new(0.0, 0.0, 10.0),
            buildings: vec![Building::new([60.0, 70.0], [-3.0, 3.0], [0.0, 30.0]).unwrap()],
            los_test: LosTest::Box3d,
            horizon: s(3.0),
            ues: vec![track],
        };
        let mut c = MmWaveCell::new(config, seed).unwrap();
        let mut seq = [0];
        let mut trace = run(&mut c, SimTime::ZERO, until, per_tti, &mut seq, |_, _| {});
        let mut out = Vec::new();
        while let Some(t) = c
            .next_event()
            .filter(|&t| t < until + SimDuration::from_secs(1))
        {
            c.advance_to(t, &mut out);
        }
        trace.extend(out.drain(..).map(|(at, ue, p)| (at, ue, seq_of(&p))));
        (trace, c, seq[0])
    }

    #[test]
    fn every_accepted_packet_is_delivered_once_in_order_across_a_blockage() {
        // 20 packets per subframe (2.4 Gb/s) overload the NLOS link: RLC drops. One packet
        // every 5 subframes (24 Mb/s) leaves the transmission queue mostly empty. Offering
        // that stops 200 µs into the blockage leaves TBs that fail after the last new data:
        // ARQ retransmissions are then the only data waiting (A7.3: the demand is the
        // retransmission queue).
        for (per_tti, until, drops) in [
            (20.0, s(2.0), true),
            (0.2, s(2.0), false),
            (1.0, s(0.7502), false),
        ] {
            let (trace, c, offered) = blockage_run(6, until, per_tti);
            let snap = c.snapshot(0);
            assert_eq!(snap.rlc_drops > 0, drops, "{snap:?}");
            assert!(snap.harq_retx > 0, "{snap:?}");
            assert!(
                c.ues[0].rlc.stats().retx_queued_bytes > 0,
                "no HARQ failure healed by ARQ"
            );
            assert_eq!(
                c.ues[0].timeline.nlos_intervals(),
                &[NlosInterval {
                    start: s(0.75),
                    end: s(1.25)
                }]
            );
            assert!(
                trace
                    .windows(2)
                    .all(|w| w[0].2 < w[1].2 && w[0].0 <= w[1].0),
                "out of order"
            );
            assert_eq!(trace.len() as u64 + snap.rlc_drops, u64::from(offered));
            assert_eq!(snap.rlc_backlog_bytes, 0);
            assert_eq!(c.next_event(), None);
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
        let ues = vec![
            Mobility::Stationary(Position::new(50.0, 15.0, 1.5)),
            Mobility::Stationary(Position::new(50.0, -15.0, 1.5)),
        ];
        let mut c = cell(ues, vec![], 1_000_000, 9);
        let mut seq = [0, 0];
        let trace = run(
            &mut c,
            SimTime::ZERO,
            s(0.5),
            f64::INFINITY,
            &mut seq,
            |_, _| {},
        );
        let want = expected_ip_rate_bps(Mcs::MAX, 11);
        for ue in 0..2 {
            let got = rate_bps(&trace, ue, s(0.05), s(0.5));
            assert!((got / want - 1.0).abs() < 0.01, "UE {ue}: {got} vs {want}");
        }
    }

    #[test]
    fn idle_cell_has_no_next_event_and_skips_idle_time() {
        let mut c = cell(
            vec![Mobility::Stationary(Position::new(50.0, 15.0, 1.5))],
            vec![],
            1_000_000,
            10,
        );
        let mut out = Vec::new();
        assert_eq!(c.next_event(), None);
        c.advance_to(s(3.0), &mut out);
        assert_eq!(c.next_event(), None);
        // A packet at 3.00005 s waits for the boundary at 3.0001 s. Without a CQI report the
        // TBs are MCS 0: the one decided there (on air at 3.0003 s, lead 2) carries 1,125 of
        // the 1,502 B; the one decided at 3.0002 s carries the other 377 B in the symbols for
        // 377 + 17 B (A7.3) and is decoded 100 µs after its last symbol.
        assert!(c.enqueue(0, pkt(0), s(3.00005)));
        assert_eq!(c.next_event(), Some(s(3.0001)));
        while let Some(t) = c.next_event() {
            c.advance_to(t, &mut out);
        }
        let symbols = frame().symbols_for_bits(Mcs::MIN, (377 + 17) * 8);
        assert_eq!(symbols, 8);
        let at = s(3.0004) + frame().data_end_offset(0, symbols) + frame().tb_decode_latency();
        assert_eq!(
            out.iter()
                .map(|&(t, ue, ref p)| (t, ue, seq_of(p)))
                .collect::<Vec<_>>(),
            vec![(at, 0, 0)]
        );
        assert_eq!(c.next_event(), None);
    }

    #[test]
    fn los_switch_during_idle_time_starts_the_drop_on_time() {
        // Idle through the 5 s blockage onset, woken at 5.0101 s: the switch at 5 s is fed to
        // the tracker at 5 s, so at 5.03 s the loss is the 30-ms point of the drop (16.27 dB
        // above LOS), not the 19.9-ms point (0 dB) it would be if the drop began on waking.
        let mut c = cell(
            vec![study_a_track()],
            vec![study_a_building()],
            1_000_000,
            11,
        );
        let mut out = Vec::new();
        c.advance_to(s(4.0), &mut out);
        assert!(c.enqueue(0, pkt(0), s(4.0)));
        while let Some(t) = c.next_event() {
            c.advance_to(t, &mut out);
        }
        assert_eq!(out.len(), 1);
        c.advance_to(s(5.01), &mut out);
        let mut seq = [1];
        run(
            &mut c,
            s(5.01),
            s(5.0301),
            f64::INFINITY,
            &mut seq,
            |_, _| {},
        );
        let ue = study_a_track().position_at(s(5.03));
        let d3d_m = ue.distance_m(Position::new(0.0, 0.0, 30.0));
        let los_pl = NyuBand::from_carrier_hz(28e9)
            .unwrap()
            .fit(true)
            .path_loss_db(d3d_m);
        assert!(
            (c.snapshot(0).path_loss_db - los_pl - 16.27).abs() < 0.01,
            "{:?}",
            c.snapshot(0)
        );
    }

    #[test]
    fn cqi_zero_at_the_recovery_onset_is_cleared_by_harq_retransmission_reports() {
        // LOS returns at 10 s with the recovery trace 8.6 dB deeper than the NLOS plateau; with
        // a low BF draw (seed 8) the effective SINR of the TBs sent at 10.0000 s is −8.0 dB,
        // below the MCS-0 threshold (−7.24 dB): CQI 0, so no new DL data (A7.3, M13). Every
        // DL reception refreshes the CQI (A6) and the failed TBs in flight are retransmitted
        // (HARQ RTT 5 subframes), so the stall lasts 3 subframes, not the 100 ms CQI timer.
        let mut c = cell(
            vec![study_a_track()],
            vec![study_a_building()],
            1_000_000,
            8,
        );
        let mut seq = [0];
        let mut stalled = Vec::new();
        let probe = |c: &MmWaveCell, t: SimTime| {
            if c.snapshot(0).mcs.is_none() {
                stalled.push((t, c.snapshot(0).harq_retx));
            }
        };
        let trace = run(&mut c, s(9.9), s(10.05), f64::INFINITY, &mut seq, probe);
        assert_eq!(
            stalled,
            vec![(s(10.0002), 0), (s(10.0003), 0), (s(10.0004), 0)]
        );
        assert!(c.snapshot(0).harq_retx > 0);
        assert!(rate_bps(&trace, 0, s(10.0), s(10.01)) > 0.0);
    }
}
