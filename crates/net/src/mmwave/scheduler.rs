//! MAC scheduler of the lean ns3-mmwave V2.0 model: the FlexTTI TDMA scheduler for one UE
//! (MmWaveFlexTtiMacScheduler, frame structure MmWavePhyMacCommon, TB sizes MmWaveAmc, HARQ
//! priority MmWaveHarqPhy) extended to several UEs in one cell with round-robin or
//! proportional-fair sharing.
//!
//! Per subframe, decided `scheduling_lead` (2 subframes, MmWavePhyMacCommon) ahead,
//! [`FlexTtiScheduler::schedule`]
//! 1. leaves the DL and UL control symbols alone: 22 data symbols remain (FlexTTI step 1, MmWavePhyMacCommon);
//! 2. serves ready HARQ retransmissions first, DL then UL, each with its original MCS and
//!    symbol count; one that does not fit waits (FlexTTI step 2, MmWaveHarqPhy);
//! 3. turns the RLC buffer status of every UE into a DL and a UL symbol need (FlexTTI steps 3–5);
//! 4. gives every flow (one UE in one direction) its need if all needs fit, otherwise shares
//!    the symbols left by the retransmissions by the cell's [`SharingPolicy`];
//! 5. claims a HARQ process for every new TB and returns the allocations, DL first, then UL.
//!
//! Simplifications and choices (points MmWaveFlexTtiMacScheduler leaves open are marked *):
//! - *Several UEs: MmWaveFlexTtiMacScheduler covers one UE. Its step 5 ("equal shares between the active flows,
//!   round-robin, a share a flow cannot use goes to the other") is generalised as integer
//!   max-min (water-filling) shares over all active flows of all UEs: [`SharingPolicy::RoundRobin`].
//!   Shares are per flow, so a UE with DL and UL demand holds two shares. Symbols that do not
//!   divide evenly go one each to the first flows in a UE order that rotates by one UE per
//!   subframe (DL before UL within a UE), so over time every flow's count stays within ±1 of
//!   the others'. With one UE this is exactly the MmWaveFlexTtiMacScheduler lean formula
//!   (UL = min(need_ul, max(avail/2, avail − need_dl)), DL = min(need_dl, avail − UL)).
//! - *Proportional fair ([`SharingPolicy::ProportionalFair`]) is the textbook rule over the
//!   symbols of a subframe: flows are served whole, in decreasing order of the metric
//!   r / max(R, 1 bit/s), where r is the flow's rate with all 22 data symbols at its current
//!   MCS and R the exponentially weighted average of the rate it was scheduled,
//!   R ← (1 − 1/T)·R + (1/T)·served, updated for every flow every subframe (served 0 when not
//!   scheduled, retransmissions count). Ties go to the earlier flow in the rotating order.
//! - *DL demand (FlexTTI step 3): status + 4 B (when a status PDU waits) + queue + 3 + 4 + 10 B, at
//!   least 8 B; no demand when both status and queue are empty. The caller chooses the queue (RLC
//!   retransmission queue if non-empty, else the transmission queue), as FlexTTI step 3 says.
//! - UL demand (FlexTTI step 4): BSR + 3 + 8 + 10 B in the symbol computation, none for an empty
//!   BSR.
//! - *UL MCS when the UL SINR is below the MCS-0 threshold (`ue_best_mcs` returns None,
//!   MmWaveFlexTtiMacScheduler does not say): MCS 0, the lowest the AMC offers.
//! - DL new data uses `DlCqiTracker::dl_mcs` at the decision instant: none while stalled by
//!   CQI 0 (FlexTTI step 3, M13). A fixed MCS (`with_fixed_mcs`, a scenario option, not in MmWaveFlexTtiMacScheduler) replaces
//!   the AMC of both directions and the stall. *HARQ retransmissions are still served during a CQI-0 stall: they
//!   keep their MCS and do not consult the CQI.
//! - HARQ processes whose retransmission timed out must be freed by the caller
//!   (`HarqEntity::expire_stale`) before `schedule`, because only the caller maps a process to
//!   the RLC payload it lost. *If all 20 processes of a flow are busy, its share stays unused
//!   in that subframe (rare: about 5 subframes of HARQ round trip against 20 processes).
//! - *Symbol layout: all DL allocations (retransmissions first) from data symbol 0, then all UL
//!   allocations; MmWaveFlexTtiMacScheduler does not fix the order inside the subframe.
//! - Left out: logical-channel multiplexing (one RLC PDU per TB, TB − 4 B subheader, FlexTTI step 6, is
//!   the RLC's job), the UL grant delay (MmWavePhyMacCommon: the caller applies `ul_scheduling_delay`), and
//!   frequency-domain sharing (V2.0 is TDMA: one UE per symbol range, MmWavePhyMacCommon).

use super::phy::{DlCqiTracker, FrameConfig, HarqEntity, HarqId, HarqTb, Mcs};
use tcplab_core::SimTime;

/// MAC subheader of an RLC status PDU in the DL demand, bytes (FlexTTI step 3).
const DL_STATUS_SUBHEADER_BYTES: u32 = 4;
/// Header allowance added to every DL demand, 3 + 4 + 10 bytes (FlexTTI step 3).
const DL_HEADER_ALLOWANCE_BYTES: u32 = 3 + 4 + 10;
/// Smallest DL demand, bytes (FlexTTI step 3).
const DL_MIN_DEMAND_BYTES: u32 = 8;
/// Allowance added to the BSR for the UL symbol computation, 3 + 8 + 10 bytes (FlexTTI step 4).
const UL_HEADER_ALLOWANCE_BYTES: u32 = 3 + 8 + 10;
/// Floor of the proportional-fair average, bit/s, so an unserved flow has a finite metric.
const PF_MIN_AVERAGE_BPS: f64 = 1.0;

pub use crate::radio::RadioDirection;

/// How the data symbols are shared when the needs of all flows do not fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SharingPolicy {
    /// FlexTTI step 5 (V2.0 behaviour) generalised to several UEs: equal max-min shares per flow.
    RoundRobin,
    /// Textbook proportional fair with an averaging window of `window_subframes` (≥ 1).
    ProportionalFair { window_subframes: f64 },
}

/// What one UE asks for in the subframe being scheduled (buffer status from RLC, FlexTTI steps 3–4).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UeDemand {
    /// Bytes of the RLC status PDU waiting in DL (0 if none).
    pub dl_status_bytes: u32,
    /// Bytes of the RLC DL retransmission queue if non-empty, else of the transmission queue.
    pub dl_queue_bytes: u32,
    /// The UE's last buffer status report, bytes.
    pub ul_bsr_bytes: u32,
    /// MCS from AMC on the last UL SINR (`ue_best_mcs`); None below the MCS-0 threshold.
    pub ul_mcs: Option<Mcs>,
}

/// One transport block in the scheduled subframe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub ue: usize,
    pub direction: RadioDirection,
    /// First data symbol, 0-based among the 22 data symbols (as `FrameConfig::data_end_offset`).
    pub first_symbol: u32,
    pub symbols: u32,
    pub mcs: Mcs,
    pub tb_bits: u32,
    /// The process of the UE's HARQ entity in `direction` that carries the TB.
    pub harq: HarqId,
    pub retransmission: bool,
}

/// MAC state of one UE: HARQ entities per direction, the DL CQI and the PF averages.
#[derive(Clone, Debug)]
pub struct UeMac {
    pub dl_harq: HarqEntity,
    pub ul_harq: HarqEntity,
    pub dl_cqi: DlCqiTracker,
    /// Proportional-fair average scheduled rate per direction (DL, UL), bit/s.
    average_bps: [f64; 2],
}

impl UeMac {
    /// HARQ entity of `direction`.
    pub fn harq_mut(&mut self, direction: RadioDirection) -> &mut HarqEntity {
        match direction {
            RadioDirection::Dl => &mut self.dl_harq,
            RadioDirection::Ul => &mut self.ul_harq,
        }
    }
    /// Proportional-fair average rate scheduled in `direction`, bit/s.
    pub fn average_bps(&self, direction: RadioDirection) -> f64 {
        self.average_bps[direction.index()]
    }
}

/// A flow competing for new-data symbols in the current subframe.
#[derive(Clone, Copy, Debug)]
struct Flow {
    ue: usize,
    direction: RadioDirection,
    mcs: Mcs,
    need: u32,
    granted: u32,
    metric: f64,
}

/// The FlexTTI TDMA scheduler of one cell (MmWaveFlexTtiMacScheduler, multi-UE extension in the header).
/// Buffers are sized in `new`; `schedule` does not allocate.
#[derive(Clone, Debug)]
pub struct FlexTtiScheduler {
    frame: FrameConfig,
    policy: SharingPolicy,
    ues: Vec<UeMac>,
    /// UE that comes first in this subframe's order; advances by one every subframe.
    rotation: usize,
    flows: Vec<Flow>,
    allocations: Vec<Allocation>,
    /// An MCS used in both directions instead of AMC (`with_fixed_mcs`).
    fixed_mcs: Option<Mcs>,
}

impl FlexTtiScheduler {
    /// A cell with `ues` UEs (≥ 1), the CQI timer `cqi_threshold_subframes`
    /// (`CQI_TIMER_THRESHOLD_DEFAULT`, 1000 in study (a)) and a sharing policy.
    /// Panics on zero UEs or a PF window below 1 subframe (configuration bugs).
    pub fn new(frame: FrameConfig, ues: usize, cqi_threshold_subframes: u32, policy: SharingPolicy) -> Self {
        assert!(ues >= 1, "a cell needs at least one UE");
        if let SharingPolicy::ProportionalFair { window_subframes } = policy {
            assert!(window_subframes >= 1.0, "PF window below one subframe: {window_subframes}");
        }
        let ue = UeMac {
            dl_harq: HarqEntity::new(frame),
            ul_harq: HarqEntity::new(frame),
            dl_cqi: DlCqiTracker::new(cqi_threshold_subframes, &frame),
            average_bps: [0.0; 2],
        };
        FlexTtiScheduler {
            frame,
            policy,
            ues: vec![ue; ues],
            rotation: 0,
            flows: Vec::with_capacity(2 * ues),
            // Every allocation holds at least one of the 22 data symbols.
            allocations: Vec::with_capacity(frame.data_symbols_per_subframe() as usize),
            fixed_mcs: None,
        }
    }

    /// Every new TB uses `mcs`, in both directions, whatever the CQI or UL SINR (no AMC and
    /// no CQI-0 stall; HARQ still decides each TB's fate from the SINR).
    pub fn with_fixed_mcs(self, mcs: Option<Mcs>) -> Self {
        FlexTtiScheduler { fixed_mcs: mcs, ..self }
    }

    /// The MCS that replaces AMC, if any.
    pub fn fixed_mcs(&self) -> Option<Mcs> {
        self.fixed_mcs
    }

    /// The MCS new DL TBs of `ue` get at `now` (None: stalled by CQI 0).
    pub fn dl_mcs(&self, ue: usize, now: SimTime) -> Option<Mcs> {
        self.fixed_mcs.or_else(|| self.ues[ue].dl_cqi.dl_mcs(now))
    }

    pub fn frame(&self) -> &FrameConfig {
        &self.frame
    }
    pub fn ue_count(&self) -> usize {
        self.ues.len()
    }
    pub fn ue(&self, ue: usize) -> &UeMac {
        &self.ues[ue]
    }
    /// For the link model: CQI reports, HARQ `transmit` and `expire_stale`.
    pub fn ue_mut(&mut self, ue: usize) -> &mut UeMac {
        &mut self.ues[ue]
    }

    /// Schedules the subframe that starts at `now + scheduling_lead`, deciding at `now`, for
    /// `demands` (one per UE, same order). Returns its allocations (DL first, then UL, in
    /// symbol order); the slice is valid until the next call.
    pub fn schedule(&mut self, now: SimTime, demands: &[UeDemand]) -> &[Allocation] {
        assert_eq!(demands.len(), self.ues.len(), "one demand per UE");
        let subframe_start = now + self.frame.scheduling_lead();
        let n = self.ues.len();
        self.allocations.clear();
        let mut avail = self.frame.data_symbols_per_subframe();

        // FlexTTI step 2: HARQ retransmissions first, DL then UL, UEs in rotating order.
        for direction in [RadioDirection::Dl, RadioDirection::Ul] {
            for k in 0..n {
                let ue = (self.rotation + k) % n;
                let harq = self.ues[ue].harq_mut(direction);
                while let Some(id) = harq.ready_retransmission(subframe_start, avail) {
                    let tb = harq.tb(id).expect("a ready process carries a TB");
                    harq.schedule_retransmission(id);
                    avail -= tb.symbols;
                    self.allocations.push(allocation(&self.frame, ue, direction, tb, id, true));
                }
            }
        }

        // FlexTTI steps 3–5: new data.
        self.collect_flows(now, demands);
        let total_need: u32 = self.flows.iter().map(|f| f.need).sum();
        if total_need <= avail {
            self.flows.iter_mut().for_each(|f| f.granted = f.need);
        } else {
            match self.policy {
                SharingPolicy::RoundRobin => max_min_shares(&mut self.flows, avail),
                SharingPolicy::ProportionalFair { .. } => proportional_fair_grants(&mut self.flows, avail),
            }
        }
        for f in &self.flows {
            if f.granted == 0 {
                continue;
            }
            let tb = HarqTb { mcs: f.mcs, symbols: f.granted };
            if let Some(id) = self.ues[f.ue].harq_mut(f.direction).start(tb) {
                self.allocations.push(allocation(&self.frame, f.ue, f.direction, tb, id, false));
            }
        }

        // Layout: DL first, then UL; within a direction retransmissions first, then UEs in
        // rotating order (the key is unique per allocation, so the unstable in-place sort is
        // deterministic and does not allocate).
        let rotation = self.rotation;
        self.allocations.sort_unstable_by_key(|a| (a.direction.index(), !a.retransmission, (a.ue + n - rotation) % n, a.harq.index()));
        let mut next = 0;
        for a in &mut self.allocations {
            a.first_symbol = next;
            next += a.symbols;
        }
        self.update_averages();
        self.rotation = (self.rotation + 1) % n;
        &self.allocations
    }

    /// The DL and UL flows with a non-zero symbol need, in rotating UE order.
    fn collect_flows(&mut self, now: SimTime, demands: &[UeDemand]) {
        self.flows.clear();
        let n = self.ues.len();
        let full = self.frame.data_symbols_per_subframe();
        for k in 0..n {
            let ue = (self.rotation + k) % n;
            let d = &demands[ue];
            let dl = dl_demand_bytes(d).zip(self.dl_mcs(ue, now)).map(|(bytes, mcs)| (RadioDirection::Dl, mcs, bytes));
            let ul_mcs = self.fixed_mcs.or(d.ul_mcs).unwrap_or(Mcs::MIN);
            let ul = ul_demand_bytes(d).map(|bytes| (RadioDirection::Ul, ul_mcs, bytes));
            for (direction, mcs, bytes) in dl.into_iter().chain(ul) {
                let avg = self.ues[ue].average_bps(direction).max(PF_MIN_AVERAGE_BPS);
                self.flows.push(Flow {
                    ue,
                    direction,
                    mcs,
                    need: self.frame.symbols_for_bits(mcs, bytes.saturating_mul(8)),
                    granted: 0,
                    metric: self.frame.phy_rate_bps(mcs, full) / avg,
                });
            }
        }
    }

    /// PF averages: every flow of every UE, including those not scheduled.
    fn update_averages(&mut self) {
        let SharingPolicy::ProportionalFair { window_subframes } = self.policy else {
            return;
        };
        let alpha = 1.0 / window_subframes;
        let tti_s = self.frame.tti().as_secs_f64();
        for (ue, mac) in self.ues.iter_mut().enumerate() {
            for direction in [RadioDirection::Dl, RadioDirection::Ul] {
                let bits: u32 = self.allocations.iter().filter(|a| a.ue == ue && a.direction == direction).map(|a| a.tb_bits).sum();
                let avg = &mut mac.average_bps[direction.index()];
                *avg = (1.0 - alpha) * *avg + alpha * f64::from(bits) / tti_s;
            }
        }
    }
}

/// An allocation of `tb` before layout (`first_symbol` is set once all are known).
fn allocation(frame: &FrameConfig, ue: usize, direction: RadioDirection, tb: HarqTb, harq: HarqId, retransmission: bool) -> Allocation {
    Allocation {
        ue,
        direction,
        first_symbol: 0,
        symbols: tb.symbols,
        mcs: tb.mcs,
        tb_bits: frame.tb_bits(tb.mcs, tb.symbols),
        harq,
        retransmission,
    }
}

/// DL demand in bytes (FlexTTI step 3), None when nothing waits.
fn dl_demand_bytes(d: &UeDemand) -> Option<u32> {
    if d.dl_status_bytes == 0 && d.dl_queue_bytes == 0 {
        return None;
    }
    let status = if d.dl_status_bytes > 0 { d.dl_status_bytes.saturating_add(DL_STATUS_SUBHEADER_BYTES) } else { 0 };
    let bytes = status.saturating_add(d.dl_queue_bytes).saturating_add(DL_HEADER_ALLOWANCE_BYTES);
    Some(bytes.max(DL_MIN_DEMAND_BYTES))
}

/// UL demand in bytes for the symbol computation (FlexTTI step 4), None for an empty BSR.
fn ul_demand_bytes(d: &UeDemand) -> Option<u32> {
    (d.ul_bsr_bytes > 0).then(|| d.ul_bsr_bytes.saturating_add(UL_HEADER_ALLOWANCE_BYTES))
}

/// Integer max-min shares of `avail` symbols (FlexTTI step 5 generalised): flows needing no more than
/// an equal share get their need; the rest split what remains equally, the leftover symbols
/// going one each to the first flows in order.
fn max_min_shares(flows: &mut [Flow], mut avail: u32) {
    loop {
        let open = flows.iter().filter(|f| f.granted < f.need).count() as u32;
        if open == 0 {
            return;
        }
        let share = avail / open;
        let mut satisfied = false;
        for f in flows.iter_mut().filter(|f| f.granted < f.need && f.need <= share) {
            f.granted = f.need;
            avail -= f.need;
            satisfied = true;
        }
        if !satisfied {
            let mut extra = avail % open;
            for f in flows.iter_mut().filter(|f| f.granted < f.need) {
                f.granted = share + u32::from(extra > 0);
                extra = extra.saturating_sub(1);
            }
            return;
        }
    }
}

/// Proportional fair: whole needs in decreasing metric order (ties: earlier flow first)
/// until the symbols run out.
fn proportional_fair_grants(flows: &mut [Flow], mut avail: u32) {
    while avail > 0 {
        let best =
            flows.iter_mut().filter(|f| f.granted == 0 && f.need > 0).reduce(|best, f| if f.metric > best.metric { f } else { best });
        let Some(f) = best else {
            return;
        };
        f.granted = f.need.min(avail);
        avail -= f.granted;
    }
}

#[cfg(test)]
mod tests {
    use super::super::phy::{cqi_from_sinr, Cqi, HarqOutcome, CQI_TIMER_THRESHOLD_DEFAULT};
    use super::super::test_support::{mcs, v2};
    use super::*;
    use tcplab_core::{SimDuration, SimRng};

    fn cqi(i: u32) -> Cqi {
        Cqi::new(i).unwrap()
    }
    fn sf(k: u64) -> SimTime {
        SimTime(k * 100_000)
    }
    fn dl(bytes: u32) -> UeDemand {
        UeDemand { dl_queue_bytes: bytes, ..UeDemand::default() }
    }
    fn scheduler(ues: usize, policy: SharingPolicy, cqis: &[u32]) -> FlexTtiScheduler {
        let mut s = FlexTtiScheduler::new(v2(), ues, CQI_TIMER_THRESHOLD_DEFAULT, policy);
        for (ue, &c) in cqis.iter().enumerate() {
            s.ue_mut(ue).dl_cqi.report(cqi(c), SimTime(0));
        }
        s
    }
    /// Schedules at `now` and puts every TB on air at `sinr_db`; returns the allocations.
    fn run(s: &mut FlexTtiScheduler, now: SimTime, demands: &[UeDemand], sinr_db: f64) -> Vec<Allocation> {
        let allocs = s.schedule(now, demands).to_vec();
        let start = now + s.frame().scheduling_lead();
        let mut rng = SimRng::stream(7, "sched-test");
        for a in &allocs {
            let outcome = s.ue_mut(a.ue).harq_mut(a.direction).transmit(a.harq, start, a.first_symbol, sinr_db, &mut rng);
            if sinr_db > 30.0 {
                assert!(matches!(outcome, HarqOutcome::Delivered { .. }));
            }
        }
        allocs
    }
    const BIG: u32 = 10_000_000;

    #[test]
    fn one_ue_large_demand_gets_all_22_symbols_at_mcs_28() {
        let mut s = scheduler(1, SharingPolicy::RoundRobin, &[15]);
        let a = run(&mut s, sf(0), &[dl(BIG)], 40.0);
        assert_eq!(a.len(), 1);
        let a = a[0];
        assert_eq!((a.ue, a.direction, a.first_symbol, a.symbols), (0, RadioDirection::Dl, 0, 22));
        assert_eq!((a.mcs, a.tb_bits, a.retransmission), (mcs(28), 313_500, false));
        // M7: 313 500 bits per 100 µs = 3.135 Gb/s.
        assert!((f64::from(a.tb_bits) / s.frame().tti().as_secs_f64() - 3.135e9).abs() < 1.0);
    }

    #[test]
    fn a_fixed_mcs_replaces_amc_in_both_directions_and_ignores_cqi_0() {
        for reported in [15, 0] {
            let mut s = scheduler(1, SharingPolicy::RoundRobin, &[reported]).with_fixed_mcs(Some(mcs(10)));
            let d = UeDemand { dl_queue_bytes: BIG, ul_bsr_bytes: 60, ul_mcs: Some(mcs(28)), ..UeDemand::default() };
            let a = run(&mut s, sf(0), &[d], 40.0);
            assert_eq!(
                a.iter().map(|a| (a.direction, a.mcs)).collect::<Vec<_>>(),
                [(RadioDirection::Dl, mcs(10)), (RadioDirection::Ul, mcs(10))],
                "CQI {reported}"
            );
            assert_eq!(s.dl_mcs(0, sf(0)), Some(mcs(10)));
        }
    }

    #[test]
    fn tcp_ack_uplink_takes_one_symbol_and_dl_the_other_21() {
        // M7: with 1 UL symbol per subframe the DL peak is ≈ 2.99 Gb/s (±1 %).
        let mut s = scheduler(1, SharingPolicy::RoundRobin, &[15]);
        let d = UeDemand { dl_queue_bytes: BIG, ul_bsr_bytes: 60, ul_mcs: Some(mcs(28)), ..UeDemand::default() };
        let a = run(&mut s, sf(0), &[d], 40.0);
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].direction, a[0].first_symbol, a[0].symbols), (RadioDirection::Dl, 0, 21));
        assert_eq!((a[1].direction, a[1].first_symbol, a[1].symbols), (RadioDirection::Ul, 21, 1));
        let rate = f64::from(a[0].tb_bits) / 100e-6;
        assert!((rate / 2.99e9 - 1.0).abs() < 0.01, "{rate}");
    }

    #[test]
    fn demand_bytes_follow_a7_allowances() {
        assert_eq!(dl_demand_bytes(&UeDemand::default()), None);
        assert_eq!(dl_demand_bytes(&dl(1)), Some(1 + 17));
        let status_only = UeDemand { dl_status_bytes: 100, ..UeDemand::default() };
        assert_eq!(dl_demand_bytes(&status_only), Some(100 + 4 + 17));
        let both = UeDemand { dl_status_bytes: 10, dl_queue_bytes: 1000, ..UeDemand::default() };
        assert_eq!(dl_demand_bytes(&both), Some(10 + 4 + 1000 + 17));
        assert_eq!(ul_demand_bytes(&UeDemand::default()), None);
        assert_eq!(ul_demand_bytes(&UeDemand { ul_bsr_bytes: 50, ..UeDemand::default() }), Some(50 + 21));
    }

    #[test]
    fn small_demand_gets_just_enough_symbols() {
        // 20 000 B + 17 B → 160 136 bits. At MCS 28: 11 symbols hold 156 738 bits, 12 hold 170 998.
        let f = v2();
        assert_eq!(f.tb_bits(mcs(28), 11), 156_738);
        assert_eq!(f.tb_bits(mcs(28), 12), 170_998);
        let mut s = scheduler(1, SharingPolicy::RoundRobin, &[15]);
        let a = run(&mut s, sf(0), &[dl(20_000)], 40.0);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].symbols, a[0].tb_bits), (12, 170_998));
        assert_eq!(a[0].symbols, f.symbols_for_bits(mcs(28), 20_017 * 8));
        // 1500 B fits one symbol; an UL BSR with MCS below 0 (None) is served at MCS 0.
        let d = UeDemand { dl_queue_bytes: 1500, ul_bsr_bytes: 100, ul_mcs: None, ..UeDemand::default() };
        let a = run(&mut s, sf(1), &[d], 40.0);
        assert_eq!((a[0].direction, a[0].symbols), (RadioDirection::Dl, 1));
        // UL: 121 B = 968 bits; MCS 0 holds 2592·2·0.08 − 24 = 390 bits per symbol → 3 symbols.
        assert_eq!((a[1].direction, a[1].mcs, a[1].symbols, a[1].first_symbol), (RadioDirection::Ul, mcs(0), 3, 1));
        // Nothing waiting: no allocation.
        assert!(s.schedule(sf(2), &[UeDemand::default()]).is_empty());
    }

    #[test]
    fn harq_retransmissions_come_first_keep_size_and_mcs_and_wait_when_they_do_not_fit() {
        let mut s = scheduler(1, SharingPolicy::RoundRobin, &[15]);
        // Two 12-symbol MCS-28 TBs fail in the subframes at 200 and 300 µs; with a 5-subframe
        // HARQ round trip they are ready at 700 and 800 µs.
        let first = run(&mut s, sf(0), &[dl(20_000)], -30.0)[0];
        let second = run(&mut s, sf(1), &[dl(20_000)], -30.0)[0];
        assert_ne!(first.harq, second.harq);
        assert_eq!((first.symbols, second.symbols), (12, 12));
        // The channel got worse: new data now goes at CQI 5 → MCS 8.
        s.ue_mut(0).dl_cqi.report(cqi(5), sf(2));
        // Subframe at 600 µs: nothing ready yet, new data takes all 22 symbols at MCS 8.
        let a = run(&mut s, sf(4), &[dl(BIG)], 40.0);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].mcs, a[0].symbols, a[0].retransmission), (mcs(8), 22, false));
        // Subframe at 800 µs: both are ready. The older one leads with its own size and MCS;
        // the other (12 symbols) does not fit in the 10 left and waits; new data gets the 10.
        let a = run(&mut s, sf(6), &[dl(BIG)], 40.0);
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].harq, a[0].mcs, a[0].symbols, a[0].first_symbol), (first.harq, mcs(28), 12, 0));
        assert!(a[0].retransmission);
        assert_eq!(a[0].tb_bits, first.tb_bits);
        assert_eq!((a[1].mcs, a[1].symbols, a[1].first_symbol, a[1].retransmission), (mcs(8), 10, 12, false));
        // Subframe at 900 µs: the waiting one goes first.
        let a = run(&mut s, sf(7), &[dl(BIG)], 40.0);
        assert_eq!((a[0].harq, a[0].mcs, a[0].symbols, a[0].retransmission), (second.harq, mcs(28), 12, true));
        assert_eq!((a[1].symbols, a[1].retransmission), (10, false));
        // All delivered: new data only.
        let a = run(&mut s, sf(8), &[dl(BIG)], 40.0);
        assert_eq!((a.len(), a[0].symbols, a[0].retransmission), (1, 22, false));
    }

    #[test]
    fn cqi_zero_stalls_dl_for_exactly_the_cqi_timer() {
        // M13: below −7.24 dB the UE reports CQI 0; DL pauses for CqiTimerThreshold × 100 µs
        // (10 ms by default, 100 ms with the study's 1000), then resumes at CQI 1 = MCS 0.
        for threshold in [CQI_TIMER_THRESHOLD_DEFAULT, 1000] {
            let mut s = FlexTtiScheduler::new(v2(), 1, threshold, SharingPolicy::RoundRobin);
            let reported = SimTime(0) + SimDuration::from_micros(50);
            s.ue_mut(0).dl_cqi.report(cqi_from_sinr(-7.3), reported);
            let d = UeDemand { dl_queue_bytes: BIG, ul_bsr_bytes: 60, ul_mcs: Some(mcs(28)), ..UeDemand::default() };
            let t = u64::from(threshold);
            let resume = reported + SimDuration::from_micros(100 * t);
            for now in [sf(1), sf(t / 2), SimTime(resume.0 - 1)] {
                let a = run(&mut s, now, &[d], 40.0);
                assert_eq!(a.len(), 1, "threshold {threshold}, at {now:?}");
                assert_eq!(a[0].direction, RadioDirection::Ul);
            }
            let a = run(&mut s, resume, &[d], 40.0);
            assert_eq!((a[0].direction, a[0].mcs, a[0].symbols), (RadioDirection::Dl, mcs(0), 21));
        }
    }

    /// MmWaveFlexTtiMacScheduler lean formula for one UE: UL = min(need_ul, max(avail/2, avail − need_dl)),
    /// DL = min(need_dl, avail − UL).
    fn lean_split(avail: u32, need_dl: u32, need_ul: u32) -> (u32, u32) {
        let ul = need_ul.min((avail / 2).max(avail.saturating_sub(need_dl)));
        (need_dl.min(avail - ul), ul)
    }
    fn flow(ue: usize, direction: RadioDirection, need: u32) -> Flow {
        Flow { ue, direction, mcs: Mcs::MAX, need, granted: 0, metric: 0.0 }
    }

    #[test]
    fn one_ue_dl_ul_split_matches_the_a7_lean_formula() {
        for avail in 0..=22 {
            for need_dl in 0..=22 {
                for need_ul in 0..=22 {
                    let mut f = [flow(0, RadioDirection::Dl, need_dl), flow(0, RadioDirection::Ul, need_ul)];
                    if need_dl + need_ul <= avail {
                        f.iter_mut().for_each(|f| f.granted = f.need);
                    } else {
                        max_min_shares(&mut f, avail);
                    }
                    assert_eq!((f[0].granted, f[1].granted), lean_split(avail, need_dl, need_ul), "{avail} {need_dl} {need_ul}");
                }
            }
        }
    }

    #[test]
    fn saturated_dl_and_ul_split_evenly_after_retransmissions() {
        let mut s = scheduler(1, SharingPolicy::RoundRobin, &[15]);
        let d = UeDemand { dl_queue_bytes: BIG, ul_bsr_bytes: BIG, ul_mcs: Some(mcs(20)), ..UeDemand::default() };
        let a = run(&mut s, sf(0), &[d], 40.0);
        assert_eq!((a[0].direction, a[0].symbols, a[1].direction, a[1].symbols), (RadioDirection::Dl, 11, RadioDirection::Ul, 11));
        // A 3-symbol UL TB fails; 5 subframes later it is retransmitted first: avail 19 →
        // DL 10 (the odd symbol), UL 9; DL retx/new first, then UL retx, then UL new.
        let small = UeDemand { ul_bsr_bytes: 3000, ul_mcs: Some(mcs(20)), ..UeDemand::default() };
        let ul = run(&mut s, sf(1), &[small], -30.0)[0];
        assert_eq!(ul.symbols, 3);
        let a = run(&mut s, sf(6), &[d], 40.0);
        let layout: Vec<_> = a.iter().map(|a| (a.direction, a.retransmission, a.first_symbol, a.symbols)).collect();
        assert_eq!(layout, [(RadioDirection::Dl, false, 0, 10), (RadioDirection::Ul, true, 10, 3), (RadioDirection::Ul, false, 13, 9)]);
        assert_eq!(a[1].harq, ul.harq);
    }

    #[test]
    fn round_robin_shares_two_ues_within_one_symbol() {
        let mut s = scheduler(2, SharingPolicy::RoundRobin, &[15, 10]);
        let ack = UeDemand { dl_queue_bytes: BIG, ul_bsr_bytes: 60, ul_mcs: Some(mcs(28)), ..UeDemand::default() };
        let demands = [ack, dl(BIG)];
        let (mut total0, mut total1) = (0i64, 0i64);
        let capacity = s.allocations.capacity();
        for k in 0..101 {
            let a = run(&mut s, sf(k), &demands, 40.0);
            let sym = |ue, dir| a.iter().filter(|x| x.ue == ue && x.direction == dir).map(|x| x.symbols).sum::<u32>();
            let (d0, d1) = (sym(0, RadioDirection::Dl), sym(1, RadioDirection::Dl));
            if k == 0 {
                // MCS follows each UE's CQI: CQI 15 → MCS 28, CQI 10 → MCS 18.
                let m = |ue| a.iter().find(|x| x.ue == ue && x.direction == RadioDirection::Dl).unwrap().mcs;
                assert_eq!((m(0), m(1)), (mcs(28), mcs(18)));
            }
            assert_eq!(sym(0, RadioDirection::Ul), 1);
            assert_eq!(d0 + d1, 21);
            assert!(d0.abs_diff(d1) <= 1);
            // TDMA: contiguous, non-overlapping, within the 22 data symbols.
            let mut next = 0;
            for x in &a {
                assert_eq!(x.first_symbol, next);
                next += x.symbols;
            }
            assert!(next <= 22);
            total0 += i64::from(d0);
            total1 += i64::from(d1);
            assert!((total0 - total1).abs() <= 1, "after {k}: {total0} vs {total1}");
        }
        assert_eq!(s.allocations.capacity(), capacity, "no reallocation per subframe");
    }

    #[test]
    fn proportional_fair_serves_the_best_rate_relative_to_its_average() {
        // UE 0 at CQI 15 → MCS 28: r0 = 313 500 bits / 100 µs = 3.135 Gb/s.
        // UE 1 at CQI 6 → MCS 10: r1 = 68 116 bits / 100 µs = 0.68116 Gb/s. Window T = 100.
        let mut s = scheduler(2, SharingPolicy::ProportionalFair { window_subframes: 100.0 }, &[15, 6]);
        assert_eq!(v2().tb_bits(mcs(10), 22), 68_116);
        let demands = [dl(BIG), dl(BIG)];
        let winner = |a: &[Allocation]| {
            assert_eq!(a.len(), 1);
            assert_eq!(a[0].symbols, 22);
            a[0].ue
        };
        // Subframe 0: both averages 0 (floored at 1 bit/s): the higher rate wins → UE 0.
        // R0 = 0.01·3.135e9 = 31.35 Mb/s, R1 = 0.
        assert_eq!(winner(&run(&mut s, sf(0), &demands, 40.0)), 0);
        assert!((s.ue(0).average_bps(RadioDirection::Dl) - 31.35e6).abs() < 1.0);
        // Subframe 1: r1/R1 = 0.68e9 / 1 ≫ r0/R0 = 100 → UE 1. R0 = 31.0365, R1 = 6.8116 Mb/s.
        assert_eq!(winner(&run(&mut s, sf(1), &demands, 40.0)), 1);
        assert!((s.ue(0).average_bps(RadioDirection::Dl) - 31.0365e6).abs() < 1.0);
        assert!((s.ue(1).average_bps(RadioDirection::Dl) - 6.8116e6).abs() < 1.0);
        // Subframe 2: 3.135e9/31.0365e6 = 101.01 > 0.68116e9/6.8116e6 = 100.00 → UE 0.
        assert_eq!(winner(&run(&mut s, sf(2), &demands, 40.0)), 0);
        // Subframe 3: R0 = 62.076 Mb/s → 50.5 < R1 = 6.7435 Mb/s → 101.0 → UE 1.
        assert_eq!(winner(&run(&mut s, sf(3), &demands, 40.0)), 1);
        // Long run with static rates PF equalises time shares (unlike max-rate, which would
        // starve UE 1): UE 1 gets 45–55 % of the symbols.
        let mut ue1 = 0u32;
        for k in 4..1004 {
            // CQI arrives after every DL reception (MmWavePhyMacCommon), so it never expires here.
            s.ue_mut(0).dl_cqi.report(cqi(15), sf(k));
            s.ue_mut(1).dl_cqi.report(cqi(6), sf(k));
            ue1 += run(&mut s, sf(k), &demands, 40.0).iter().filter(|a| a.ue == 1).map(|a| a.symbols).sum::<u32>();
        }
        let share = f64::from(ue1) / (1000.0 * 22.0);
        assert!((0.45..=0.55).contains(&share), "{share}");
    }

    #[test]
    fn proportional_fair_gives_what_the_winner_cannot_use_to_the_next() {
        let mut s = scheduler(2, SharingPolicy::ProportionalFair { window_subframes: 100.0 }, &[15, 6]);
        // UE 0 wins (higher rate, equal zero averages) but needs only 12 symbols: UE 1 gets 10.
        let a = run(&mut s, sf(0), &[dl(20_000), dl(BIG)], 40.0);
        let layout: Vec<_> = a.iter().map(|a| (a.ue, a.first_symbol, a.symbols)).collect();
        assert_eq!(layout, [(0, 0, 12), (1, 12, 10)]);
    }
}
