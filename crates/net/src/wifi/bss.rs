//! One WiFi BSS — an access point and its stations on one channel — run exchange by exchange (ns-3
//! ChannelAccessManager/Txop channel access, ns-3 MpduAggregator/MsduAggregator aggregation,
//! TableBasedErrorRateModel errors; validated against docs/validation.md W4–W13).
//!
//! Every station and the AP contend with EDCA best effort (AIFS = SIFS + 3 slots, CW 15 to
//! 1023, binary exponential backoff frozen while the medium is busy, a new backoff after each
//! transmission). The medium is one: everyone hears everyone (fixed received power, docs/validation.md W1), so
//! the only collisions are transmissions starting in the same slot; there are no hidden nodes.
//! A winner sends one PPDU to one receiver: an A-MPDU of the MPDUs waiting for that receiver
//! (retransmissions first), within the A-MPDU byte limit, the 5484 µs PPDU limit and the
//! BlockAck window; optionally each MPDU is an A-MSDU. Each MPDU survives bit errors with
//! 1 − PER(SNR, MCS, size); a BlockAck (or ACK) after SIFS acknowledges the survivors, the
//! rest are retried up to the retry limit. A collision loses every MPDU of every PPDU in it.
//! The receiver reorders per sender and hands packets over in sequence at the end of the PPDU
//! that completed them; a dropped MPDU no longer blocks the ones behind it.
//!
//! Choices and simplifications (where ns-3 differs or leaves a choice):
//! - Users are the stations; the AP is entity 0 and keeps one queue per station, serving the
//!   station whose head packet is oldest (ns-3's FCFS across receivers, docs/models.md, WiFi
//!   uplink). The MAC queue holds `queue_packets` MSDUs per device (ns-3 wifi defaults: 500) and
//!   drops those older than `max_queue_delay` (500 ms) when it next builds a PPDU; no queue disc
//!   sits above it (ns-3 installs FqCoDel by default, ns-3 wifi defaults).
//! - Timing: a station whose frame arrives on a medium idle for at least AIFS with no backoff
//!   left sends at once; one that finds the medium busy with no backoff left draws one. After
//!   a collision, or a PPDU of which no MPDU survived, the medium counts as busy for the
//!   response timeout (SIFS + slot + legacy preamble) after the longest PPDU for everyone
//!   (ns-3 uses EIFS for the bystanders, 15 µs longer at 5 GHz).
//! - Responses (ACK, BlockAck) at the legacy basic rate never fail (they need about 9 dB at
//!   24 Mb/s, and the fixed-RSS scenarios give ≥ 13.97 dB over 20 MHz, docs/validation.md W1); beacons, RTS/CTS
//!   and management frames are not modelled.
//! - A-MSDU: at most 8 MSDUs per A-MSDU. Rate control: `Constant` (ns-3's
//!   ConstantRateWifiManager, one MCS for every data frame) or `Ideal`: the highest MCS whose
//!   PER for a 1538-B MPDU at the link's SNR is at most 1 %, MCS 0 if none.

use std::collections::VecDeque;

use tcplab_core::{Packet, SimDuration, SimRng, SimTime};

use super::error::{per, Coding, ErrorModel};
use super::phy::{noise_dbm, Mcs, PhyConfig, MAX_PPDU_DURATION};
use crate::radio::{RadioCell, RadioDelivery, RadioDirection, UserId};

/// QoS data MAC header and FCS (ns-3 MpduAggregator/MsduAggregator).
const MAC_HEADER_BYTES: u32 = 26;
const FCS_BYTES: u32 = 4;
/// LLC/SNAP header of every MSDU (ns-3 MpduAggregator/MsduAggregator).
const LLC_BYTES: u32 = 8;
/// A-MPDU subframe delimiter and A-MSDU subframe header (ns-3 MpduAggregator/MsduAggregator).
const AMPDU_DELIMITER_BYTES: u32 = 4;
const AMSDU_SUBFRAME_HEADER_BYTES: u32 = 14;
const MAX_MSDUS_PER_AMSDU: usize = 8;
/// The MPDU size the ideal rate manager judges an MCS by (a 1500-B IP packet, ns-3 MpduAggregator/MsduAggregator).
const IDEAL_REFERENCE_MPDU_BYTES: u32 = 1538;
const IDEAL_MAX_PER: f64 = 0.01;

fn padded(bytes: u32) -> u32 {
    bytes.div_ceil(4) * 4
}

/// How data frames choose their MCS.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateControl {
    Constant(Mcs),
    Ideal,
}

/// Everything a BSS needs (defaults: `BssConfig::new`, ns-3's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BssConfig {
    pub phy: PhyConfig,
    pub stations: usize,
    pub rate: RateControl,
    pub error_model: ErrorModel,
    pub coding: Coding,
    /// Power every device receives from every other (docs/validation.md W1: −80 dBm in the study).
    pub rss_dbm: f64,
    pub noise_figure_db: f64,
    /// A-MPDU size limit in bytes (0: no A-MPDU, each MPDU answered by an ACK).
    pub max_ampdu_bytes: u32,
    /// A-MSDU size limit in bytes (0: off).
    pub max_amsdu_bytes: u32,
    /// BlockAck window in MPDUs (default: the standard's, 64 for HT and 256 for HE).
    pub block_ack_window: u32,
    pub queue_packets: u32,
    pub max_queue_delay: SimDuration,
    /// Transmissions of an MPDU before it is dropped (ns-3 ChannelAccessManager/Txop: 7).
    pub retry_limit: u32,
    pub cw_min: u32,
    pub cw_max: u32,
}

impl BssConfig {
    pub fn new(phy: PhyConfig, stations: usize, rate: RateControl) -> BssConfig {
        BssConfig {
            phy,
            stations,
            rate,
            error_model: ErrorModel::TableBased,
            coding: Coding::Bcc,
            rss_dbm: -80.0,
            noise_figure_db: 7.0,
            max_ampdu_bytes: 65_535,
            max_amsdu_bytes: 0,
            block_ack_window: phy.block_ack_window(),
            queue_packets: 500,
            max_queue_delay: SimDuration::from_millis(500),
            retry_limit: 7,
            cw_min: 15,
            cw_max: 1023,
        }
    }

    /// SNR of every link, dB.
    pub fn snr_db(&self) -> f64 {
        self.rss_dbm - noise_dbm(self.phy.width_mhz, self.noise_figure_db)
    }

    /// The MCS of every data frame.
    pub fn data_mcs(&self) -> Mcs {
        match self.rate {
            RateControl::Constant(mcs) => mcs,
            RateControl::Ideal => {
                let snr = self.snr_db();
                let works = |m: &Mcs| per(self.error_model, self.coding, snr, *m, IDEAL_REFERENCE_MPDU_BYTES) <= IDEAL_MAX_PER;
                self.phy.all_mcs().filter(works).last().unwrap_or(Mcs { index: 0 })
            }
        }
    }
}

/// One MPDU: one MSDU, or an A-MSDU of several.
#[derive(Clone, Copy, Debug)]
struct Mpdu {
    seq: u32,
    msdus: [Option<Packet>; MAX_MSDUS_PER_AMSDU],
    bytes: u32,
    attempts: u32,
    /// When its oldest MSDU entered the MAC queue.
    enqueued_at: SimTime,
}

impl Mpdu {
    fn packets(&self) -> impl Iterator<Item = Packet> + '_ {
        self.msdus.iter().flatten().copied()
    }
    fn count(&self) -> u64 {
        self.msdus.iter().flatten().count() as u64
    }
}

/// Receiver-side state of a sequence number. Slots live in a ring no longer than the
/// BlockAck window, so the received MPDUs stay inline rather than boxed.
#[derive(Clone, Copy, Debug)]
#[allow(clippy::large_enum_variant)]
enum Slot {
    /// Sent or queued for retransmission, not yet received.
    Pending,
    Received(Mpdu),
    /// Dropped by the sender: no longer awaited.
    Gone,
}

/// One sender → receiver pair: the sender's queue, the MPDUs it formed and still has to
/// (re)send, and the receiver's reordering buffer for this sender.
#[derive(Debug, Default)]
struct Link {
    queue: VecDeque<(Packet, SimTime)>,
    /// Formed MPDUs waiting to be sent again (failed ones, or one that did not fit in the
    /// last A-MPDU), in sequence order; they go before new MSDUs.
    retransmit: VecDeque<Mpdu>,
    next_seq: u32,
    /// Slots from sequence number `expected` on.
    reorder: VecDeque<Slot>,
    expected: u32,
}

impl Link {
    fn has_frame(&self) -> bool {
        !self.queue.is_empty() || !self.retransmit.is_empty()
    }
    /// When the frame at the head was queued.
    fn head_since(&self) -> Option<SimTime> {
        let retx = self.retransmit.front().map(|m| m.enqueued_at);
        let new = self.queue.front().map(|q| q.1);
        retx.into_iter().chain(new).min()
    }
    fn slot(&mut self, seq: u32) -> &mut Slot {
        &mut self.reorder[(seq - self.expected) as usize]
    }
    /// Hands over the packets now in sequence.
    fn release(&mut self, mut deliver: impl FnMut(Packet)) {
        while let Some(front) = self.reorder.front() {
            match front {
                Slot::Pending => break,
                Slot::Received(m) => m.packets().for_each(&mut deliver),
                Slot::Gone => {}
            }
            self.reorder.pop_front();
            self.expected += 1;
        }
    }
}

/// Counters of one device, cumulative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// PPDUs this device sent, and of those the ones that collided.
    pub ppdus: u64,
    pub collisions: u64,
    /// MPDU retransmissions this device sent.
    pub retries: u64,
    /// Packets this device dropped: retry limit, queue lifetime, full queue.
    pub mac_drops: u64,
    /// MPDUs addressed to this device lost to bit errors, and to collisions.
    pub rx_error_mpdus: u64,
    pub rx_collision_mpdus: u64,
    pub rx_ok_mpdus: u64,
}

#[derive(Debug)]
struct Device {
    /// One link per receiver: the AP has one per station, a station one to the AP.
    links: Vec<Link>,
    queued: u32,
    backoff: u32,
    cw: u32,
    /// Since when it has had a frame to send (None: nothing queued).
    frame_since: Option<SimTime>,
    stats: DeviceStats,
}

/// A PPDU on the air.
#[derive(Debug)]
struct Ppdu {
    sender: usize,
    link: usize,
    mpdus: Vec<Mpdu>,
    aggregated: bool,
}

#[derive(Debug)]
struct Exchange {
    ppdu_end: SimTime,
    ppdus: Vec<Ppdu>,
}

/// One BSS: an AP (device 0) and `stations` stations (device i + 1 is user i).
pub struct WifiBss {
    config: BssConfig,
    mcs: Mcs,
    snr_db: f64,
    devices: Vec<Device>,
    /// The medium is idle from this instant (unless `exchange` is on the air).
    idle_since: SimTime,
    exchange: Option<Exchange>,
    /// Spare MPDU buffers, so building a PPDU does not allocate after warm-up.
    spare: Vec<Vec<Mpdu>>,
    rng: SimRng,
    busy_time: SimDuration,
    /// Packets accepted into a MAC queue, handed over, dropped after acceptance, and refused
    /// by a full queue.
    accepted: u64,
    delivered: u64,
    dropped: u64,
    refused: u64,
}

impl WifiBss {
    /// Panics on a BSS with no station (a configuration bug; scenarios refuse it earlier).
    pub fn new(config: BssConfig, seed: u64) -> WifiBss {
        assert!(config.stations > 0, "a BSS needs a station");
        let device = |links: usize| Device {
            links: (0..links).map(|_| Link::default()).collect(),
            queued: 0,
            backoff: 0,
            cw: config.cw_min,
            frame_since: None,
            stats: DeviceStats::default(),
        };
        let devices = std::iter::once(device(config.stations)).chain((0..config.stations).map(|_| device(1))).collect();
        WifiBss {
            mcs: config.data_mcs(),
            snr_db: config.snr_db(),
            config,
            devices,
            idle_since: SimTime::ZERO,
            exchange: None,
            spare: Vec::new(),
            rng: SimRng::stream(seed, "wifi/bss"),
            busy_time: SimDuration::ZERO,
            accepted: 0,
            delivered: 0,
            dropped: 0,
            refused: 0,
        }
    }

    pub fn config(&self) -> &BssConfig {
        &self.config
    }

    /// The MCS of data frames and its PHY rate.
    pub fn data_mcs(&self) -> Mcs {
        self.mcs
    }
    pub fn phy_rate_bps(&self) -> f64 {
        self.config.phy.data_rate_bps(self.mcs)
    }

    /// Counters of the AP (`None`) or of station `user`.
    pub fn stats(&self, user: Option<UserId>) -> DeviceStats {
        self.devices[user.map_or(0, |u| u + 1)].stats
    }

    /// Time the medium has been busy (PPDUs and their responses or timeouts) up to the last
    /// exchange that ended.
    pub fn busy_time(&self) -> SimDuration {
        self.busy_time
    }

    fn endpoints(ue: UserId, direction: RadioDirection) -> (usize, usize) {
        match direction {
            RadioDirection::Dl => (0, ue),
            RadioDirection::Ul => (ue + 1, 0),
        }
    }

    fn medium_busy(&self, now: SimTime) -> bool {
        self.exchange.is_some() || now < self.idle_since
    }

    fn draw_backoff(&mut self, device: usize) {
        let cw = self.devices[device].cw;
        self.devices[device].backoff = self.rng.below(cw + 1);
    }

    /// When `device` would start sending, if it has a frame.
    fn access_time(&self, device: usize) -> Option<SimTime> {
        let d = &self.devices[device];
        let since = d.frame_since?;
        let counted = self.idle_since + self.config.phy.aifs() + self.config.phy.slot().saturating_mul(u64::from(d.backoff));
        Some(counted.max(since))
    }

    fn next_access(&self) -> Option<SimTime> {
        (0..self.devices.len()).filter_map(|d| self.access_time(d)).min()
    }

    /// PSDU bytes of `mpdus` sent as one PPDU.
    fn psdu_bytes(mpdus: &[Mpdu], aggregated: bool) -> u32 {
        if !aggregated {
            return mpdus.iter().map(|m| m.bytes).sum();
        }
        let subframes: u32 = mpdus.iter().map(|m| padded(AMPDU_DELIMITER_BYTES + m.bytes)).sum();
        let last = mpdus.last().map_or(0, |m| padded(AMPDU_DELIMITER_BYTES + m.bytes) - (AMPDU_DELIMITER_BYTES + m.bytes));
        subframes - last
    }

    /// Drops what waited longer than the queue lifetime on `link` of `device`; packets the
    /// receiver held behind a dropped MPDU are handed over at `now`.
    fn expire(&mut self, device: usize, link: usize, now: SimTime, out: &mut Vec<RadioDelivery>) {
        let lifetime = self.config.max_queue_delay;
        let d = &mut self.devices[device];
        let l = &mut d.links[link];
        let mut dropped = 0;
        while l.retransmit.front().is_some_and(|m| now.saturating_since(m.enqueued_at) > lifetime) {
            let m = l.retransmit.pop_front().expect("checked");
            *l.slot(m.seq) = Slot::Gone;
            dropped += m.count();
        }
        while l.queue.front().is_some_and(|q| now.saturating_since(q.1) > lifetime) {
            l.queue.pop_front();
            dropped += 1;
        }
        d.queued -= dropped as u32;
        d.stats.mac_drops += dropped;
        self.dropped += dropped;
        self.release(device, link, now, out);
    }

    /// Hands over the packets of `link` of `device` that are now in sequence, at `at`.
    fn release(&mut self, device: usize, link: usize, at: SimTime, out: &mut Vec<RadioDelivery>) {
        let (ue, direction) = if device == 0 { (link, RadioDirection::Dl) } else { (device - 1, RadioDirection::Ul) };
        let delivered = &mut self.delivered;
        self.devices[device].links[link].release(|packet| {
            *delivered += 1;
            out.push(RadioDelivery { at, ue, direction, packet });
        });
    }

    /// The next new MPDU of `link`: one MSDU, or as many as the A-MSDU limit takes.
    fn next_new_mpdu(&mut self, device: usize, link: usize) -> Option<Mpdu> {
        let max_amsdu = self.config.max_amsdu_bytes;
        let l = &mut self.devices[device].links[link];
        let (first, enqueued_at) = l.queue.pop_front()?;
        let mut msdus = [None; MAX_MSDUS_PER_AMSDU];
        msdus[0] = Some(first);
        let mut bytes = LLC_BYTES + first.size;
        if max_amsdu > 0 {
            let subframe = |p: &Packet| AMSDU_SUBFRAME_HEADER_BYTES + LLC_BYTES + p.size;
            bytes = subframe(&first);
            let mut count = 1;
            while count < MAX_MSDUS_PER_AMSDU {
                match l.queue.front() {
                    Some((p, _)) if padded(bytes) + subframe(p) <= max_amsdu => {
                        bytes = padded(bytes) + subframe(p);
                        msdus[count] = l.queue.pop_front().map(|q| q.0);
                        count += 1;
                    }
                    _ => break,
                }
            }
        }
        let seq = l.next_seq;
        l.next_seq += 1;
        l.reorder.push_back(Slot::Pending);
        Some(Mpdu { seq, msdus, bytes: MAC_HEADER_BYTES + bytes + FCS_BYTES, attempts: 0, enqueued_at })
    }

    /// Builds the PPDU `device` sends now on its link with the oldest head frame.
    fn build_ppdu(&mut self, device: usize, now: SimTime, out: &mut Vec<RadioDelivery>) -> Option<Ppdu> {
        let links = self.devices[device].links.len();
        for link in 0..links {
            self.expire(device, link, now, out);
        }
        let link = (0..links)
            .filter(|&l| self.devices[device].links[l].has_frame())
            .min_by_key(|&l| self.devices[device].links[l].head_since())?;
        let aggregated = self.config.max_ampdu_bytes > 0;
        let mut mpdus = self.spare.pop().unwrap_or_default();
        let window = self.config.block_ack_window;
        loop {
            if !mpdus.is_empty() && !aggregated {
                break;
            }
            let l = &self.devices[device].links[link];
            let candidate = match l.retransmit.front() {
                Some(m) => Some(*m),
                None if l.queue.is_empty() => None,
                None => {
                    // A new MPDU must stay inside the BlockAck window from the oldest awaited one.
                    if l.next_seq - l.expected >= window {
                        None
                    } else {
                        self.next_new_mpdu(device, link)
                    }
                }
            };
            let Some(mpdu) = candidate else { break };
            let from_retransmit = self.devices[device].links[link].retransmit.front().is_some_and(|m| m.seq == mpdu.seq);
            mpdus.push(mpdu);
            let fits = !aggregated
                || (mpdus.len() as u32 <= window
                    && Self::psdu_bytes(&mpdus, true) <= self.config.max_ampdu_bytes
                    && self.config.phy.ppdu_duration(Self::psdu_bytes(&mpdus, true), self.mcs) <= MAX_PPDU_DURATION);
            if !fits && mpdus.len() > 1 {
                mpdus.pop();
                if !from_retransmit {
                    // Put the new MPDU back at the head of the retransmission queue, untouched.
                    self.devices[device].links[link].retransmit.push_front(mpdu);
                }
                break;
            }
            if from_retransmit {
                self.devices[device].links[link].retransmit.pop_front();
            }
        }
        Some(Ppdu { sender: device, link, mpdus, aggregated })
    }

    fn start_exchange(&mut self, at: SimTime, out: &mut Vec<RadioDelivery>) {
        let slot = self.config.phy.slot();
        let counting_from = self.idle_since + self.config.phy.aifs();
        let elapsed_slots = if at > counting_from { (at - counting_from).as_nanos() / slot.as_nanos() } else { 0 };
        let winners: Vec<usize> = (0..self.devices.len()).filter(|&d| self.access_time(d) == Some(at)).collect();
        for (i, d) in self.devices.iter_mut().enumerate() {
            if !winners.contains(&i) {
                d.backoff = d.backoff.saturating_sub(elapsed_slots as u32);
            }
        }
        let mut ppdus = Vec::with_capacity(winners.len());
        let mut ppdu_end = at;
        for d in winners {
            match self.build_ppdu(d, at, out) {
                Some(ppdu) if !ppdu.mpdus.is_empty() => {
                    let bytes = Self::psdu_bytes(&ppdu.mpdus, ppdu.aggregated);
                    ppdu_end = ppdu_end.max(at + self.config.phy.ppdu_duration(bytes, self.mcs));
                    ppdus.push(ppdu);
                }
                // Everything it held expired: it has nothing to send after all.
                other => {
                    if let Some(p) = other {
                        self.spare.push(p.mpdus);
                    }
                    self.devices[d].frame_since = None;
                }
            }
        }
        if ppdus.is_empty() {
            return;
        }
        for p in &ppdus {
            let d = &mut self.devices[p.sender];
            d.stats.ppdus += 1;
            d.stats.retries += p.mpdus.iter().filter(|m| m.attempts > 0).count() as u64;
        }
        self.busy_time = self.busy_time + (ppdu_end - at);
        self.exchange = Some(Exchange { ppdu_end, ppdus });
    }

    fn finish_exchange(&mut self, out: &mut Vec<RadioDelivery>) {
        let Exchange { ppdu_end, ppdus } = self.exchange.take().expect("an exchange is on the air");
        let collided = ppdus.len() > 1;
        let phy = self.config.phy;
        let mut medium_free = ppdu_end + phy.response_timeout();
        for mut ppdu in ppdus {
            let receiver = if ppdu.sender == 0 { ppdu.link + 1 } else { 0 };
            let mut received = 0;
            for mut m in ppdu.mpdus.drain(..) {
                m.attempts += 1;
                let ok = !collided && !self.rng.chance(per(self.config.error_model, self.config.coding, self.snr_db, self.mcs, m.bytes));
                let rx = &mut self.devices[receiver].stats;
                match (ok, collided) {
                    (true, _) => rx.rx_ok_mpdus += 1,
                    (false, true) => rx.rx_collision_mpdus += 1,
                    (false, false) => rx.rx_error_mpdus += 1,
                }
                let sender = &mut self.devices[ppdu.sender];
                let link = &mut sender.links[ppdu.link];
                if ok {
                    received += 1;
                    sender.queued -= m.count() as u32;
                    *link.slot(m.seq) = Slot::Received(m);
                } else if m.attempts >= self.config.retry_limit {
                    sender.queued -= m.count() as u32;
                    sender.stats.mac_drops += m.count();
                    self.dropped += m.count();
                    *link.slot(m.seq) = Slot::Gone;
                } else {
                    // Failures go back in sequence order, before MPDUs formed later.
                    let pos = link.retransmit.partition_point(|r| r.seq < m.seq);
                    link.retransmit.insert(pos, m);
                }
            }
            self.release(ppdu.sender, ppdu.link, ppdu_end, out);
            let d = &mut self.devices[ppdu.sender];
            if received > 0 {
                let response = if ppdu.aggregated { phy.block_ack_duration(self.mcs) } else { phy.ack_duration(self.mcs) };
                medium_free = ppdu_end + phy.sifs() + response;
                d.cw = self.config.cw_min;
            } else {
                d.cw = (2 * (d.cw + 1) - 1).min(self.config.cw_max);
                if collided {
                    d.stats.collisions += 1;
                }
            }
            d.frame_since = d.links.iter().any(Link::has_frame).then_some(medium_free);
            self.spare.push(ppdu.mpdus);
            self.draw_backoff(ppdu.sender);
        }
        self.busy_time = self.busy_time + (medium_free - ppdu_end);
        self.idle_since = medium_free;
    }
}

impl RadioCell for WifiBss {
    fn enqueue(&mut self, ue: UserId, direction: RadioDirection, packet: Packet, now: SimTime) -> bool {
        let (device, link) = Self::endpoints(ue, direction);
        if self.devices[device].queued >= self.config.queue_packets {
            self.devices[device].stats.mac_drops += 1;
            self.refused += 1;
            return false;
        }
        let busy = self.medium_busy(now);
        let d = &mut self.devices[device];
        d.links[link].queue.push_back((packet, now));
        d.queued += 1;
        self.accepted += 1;
        if d.frame_since.is_none() {
            d.frame_since = Some(now);
            if busy && d.backoff == 0 {
                self.draw_backoff(device);
            }
        }
        true
    }

    fn advance_to(&mut self, now: SimTime, out: &mut Vec<RadioDelivery>) {
        loop {
            match &self.exchange {
                Some(e) if e.ppdu_end <= now => self.finish_exchange(out),
                Some(_) => return,
                None => match self.next_access() {
                    Some(at) if at <= now => self.start_exchange(at, out),
                    _ => return,
                },
            }
        }
    }

    fn next_event(&self) -> Option<SimTime> {
        match &self.exchange {
            Some(e) => Some(e.ppdu_end),
            None => self.next_access(),
        }
    }

    fn packets_held(&self) -> u64 {
        self.accepted - self.delivered - self.dropped
    }

    fn packets_dropped(&self) -> u64 {
        self.dropped + self.refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::{Band, Standard};
    use tcplab_core::packet::HEADER_BYTES;
    use tcplab_core::{DataHeader, Ecn};

    /// A 1500-B IP packet (1472 B of UDP payload, docs/validation.md W4–W11).
    fn packet(seq: u32) -> Packet {
        Packet::data(0, 1, 0, DataHeader { seq, payload: 1500 - HEADER_BYTES, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
    }
    const UDP_PAYLOAD_BITS: f64 = 1472.0 * 8.0;

    fn ht(band: Band, width: u32, gi: u32, mcs: u32) -> BssConfig {
        let phy = PhyConfig::new(Standard::Ht, band, width, gi, 1).unwrap();
        let mut c = BssConfig::new(phy, 1, RateControl::Constant(phy.mcs(mcs).unwrap()));
        c.rss_dbm = -40.0; // the W4–W11 checks (docs/validation.md) run error-free
        c
    }

    /// Saturated UDP uplink of `stations` stations for `secs`: every station's MAC queue is
    /// topped up to 100 packets after each event. Returns the UDP goodput in Mb/s, the BSS
    /// and the delivery trace (instant, user, sequence number).
    fn saturate(mut config: BssConfig, stations: usize, secs: f64, seed: u64) -> (f64, WifiBss, Vec<(SimTime, UserId, u32)>) {
        config.stations = stations;
        let mut bss = WifiBss::new(config, seed);
        let end = SimTime((secs * 1e9) as u64);
        let mut next_seq = vec![0; stations];
        let mut out = Vec::new();
        let mut trace = Vec::new();
        let mut now = SimTime::ZERO;
        loop {
            for (ue, seq) in next_seq.iter_mut().enumerate() {
                while bss.devices[ue + 1].queued < 100 {
                    assert!(bss.enqueue(ue, RadioDirection::Ul, packet(*seq), now));
                    *seq += 1;
                }
            }
            match bss.next_event() {
                Some(t) if t <= end => now = t,
                _ => break,
            }
            bss.advance_to(now, &mut out);
            trace.extend(out.drain(..).map(|d| match d.packet.kind {
                tcplab_core::PacketKind::Data(h) => (d.at, d.ue, h.seq),
                _ => unreachable!(),
            }));
        }
        let goodput = trace.len() as f64 * UDP_PAYLOAD_BITS / secs / 1e6;
        (goodput, bss, trace)
    }

    fn assert_within(got: f64, range: std::ops::RangeInclusive<f64>, what: &str) {
        assert!(range.contains(&got), "{what}: {got:.2} Mb/s, want {range:?}");
    }

    #[test]
    fn w4_w5_ht_mcs7_20_mhz_udp_with_and_without_a_mpdu() {
        let c = ht(Band::Ghz5, 20, 800, 7);
        // docs/validation.md W4–W11: 28 MPDUs per A-MPDU (5484 µs), cycle 5518.5 µs → 59.75 Mb/s.
        assert_within(saturate(c, 1, 5.0, 1).0, 59.0..=60.5, "W4 A-MPDU 65535");
        // One MPDU + ACK per access: cycle 382.5 µs → 30.8 Mb/s.
        assert_within(saturate(BssConfig { max_ampdu_bytes: 0, ..c }, 1, 5.0, 1).0, 30.0..=31.5, "W5 no aggregation");
    }

    #[test]
    fn w6_w7_a_msdu_alone_and_two_level_aggregation() {
        let c = ht(Band::Ghz5, 20, 800, 7);
        let amsdu_only = BssConfig { max_ampdu_bytes: 0, max_amsdu_bytes: 7935, ..c };
        assert_within(saturate(amsdu_only, 1, 5.0, 1).0, 51.0..=52.5, "W6 A-MSDU 7935");
        let two_level = BssConfig { max_ampdu_bytes: 32_768, max_amsdu_bytes: 3839, ..c };
        assert_within(saturate(two_level, 1, 5.0, 1).0, 58.0..=59.5, "W7 A-MPDU 32 KB + A-MSDU 3839");
    }

    #[test]
    fn w9_w10_the_fastest_ht_and_he_settings() {
        // W9: 40 MHz, 400 ns GI, MCS 7: 42 MPDUs by bytes, model 135.3, ns-3 ≤ 135.
        assert_within(saturate(ht(Band::Ghz5, 40, 400, 7), 1, 3.0, 1).0, 134.0..=136.0, "W9 HT max");
        // W10: HE 160 MHz, MCS 11, GI 0.8 µs, 64-MPDU BlockAck: model ≈ 776, ns-3 ≤ 844.
        let phy = PhyConfig::new(Standard::He, Band::Ghz5, 160, 800, 1).unwrap();
        let he = BssConfig { rss_dbm: -30.0, block_ack_window: 64, ..BssConfig::new(phy, 1, RateControl::Constant(phy.mcs(11).unwrap())) };
        assert_within(saturate(he, 1, 2.0, 1).0, 740.0..=800.0, "W10 HE max");
    }

    #[test]
    fn w11_saturation_throughput_and_collision_probability_follow_bianchi() {
        let c = ht(Band::Ghz5, 20, 800, 7);
        for (n, want, p) in [(1, 59.7, 0.0), (2, 56.8, 0.105), (4, 52.5, 0.23)] {
            let (goodput, bss, _) = saturate(c, n, 10.0, 3);
            assert!((goodput / want - 1.0).abs() <= 0.05, "{n} stations: {goodput:.2} Mb/s, Bianchi {want}");
            let (sent, collided) = (1..=n).fold((0, 0), |(s, k), d| (s + bss.devices[d].stats.ppdus, k + bss.devices[d].stats.collisions));
            let measured = collided as f64 / sent as f64;
            assert!((measured - p).abs() <= 0.03, "{n} stations: collision probability {measured:.3}, Bianchi {p}");
        }
    }

    #[test]
    fn every_packet_is_handed_over_once_in_order_despite_errors_and_collisions() {
        // 20 MHz at −80 dBm (13.97 dB) with MCS 4: PER ≈ 0.4 % per MPDU; MCS 5 would be ≈ 99 %.
        let phy = PhyConfig::new(Standard::Ht, Band::Ghz5, 20, 800, 1).unwrap();
        let c = BssConfig { rss_dbm: -80.6, ..BssConfig::new(phy, 1, RateControl::Constant(phy.mcs(4).unwrap())) };
        let (_, bss, trace) = saturate(c, 3, 3.0, 5);
        let ap = bss.stats(None);
        assert!(ap.rx_error_mpdus > 100 && ap.rx_collision_mpdus > 100, "{ap:?}");
        let retries: u64 = (0..3).map(|u| bss.stats(Some(u)).retries).sum();
        assert!(retries >= ap.rx_error_mpdus / 2);
        for ue in 0..3 {
            let seqs: Vec<u32> = trace.iter().filter(|t| t.1 == ue).map(|t| t.2).collect();
            let drops = bss.stats(Some(ue)).mac_drops;
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "station {ue} out of order");
            // In sequence, with a gap only where the station dropped a packet.
            assert_eq!(u64::from(*seqs.last().unwrap()) + 1 - seqs.len() as u64, drops);
        }
        assert!(trace.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn the_ap_serves_its_stations_and_retries_until_the_limit() {
        // MCS 7 at −80 dBm: every MPDU is lost; each is sent 7 times, then dropped.
        let phy = PhyConfig::new(Standard::Ht, Band::Ghz5, 20, 800, 1).unwrap();
        let c = BssConfig { stations: 2, ..BssConfig::new(phy, 2, RateControl::Constant(phy.mcs(7).unwrap())) };
        let mut bss = WifiBss::new(c, 1);
        for seq in 0..10 {
            assert!(bss.enqueue(seq as usize % 2, RadioDirection::Dl, packet(seq), SimTime::ZERO));
        }
        let mut out = Vec::new();
        while let Some(t) = bss.next_event() {
            bss.advance_to(t, &mut out);
        }
        assert!(out.is_empty());
        let ap = bss.stats(None);
        assert_eq!(ap.mac_drops, 10);
        assert_eq!(bss.packets_dropped(), 10);
        assert_eq!(bss.packets_held(), 0);
        let rx: u64 = (0..2).map(|u| bss.stats(Some(u)).rx_error_mpdus).sum();
        assert_eq!(rx, 70, "7 transmissions of each MPDU");
        assert_eq!(ap.retries, 60);
    }

    #[test]
    fn a_full_queue_refuses_and_an_old_packet_expires() {
        let phy = PhyConfig::new(Standard::Ht, Band::Ghz5, 20, 800, 1).unwrap();
        let c = BssConfig { queue_packets: 3, ..BssConfig::new(phy, 1, RateControl::Constant(phy.mcs(0).unwrap())) };
        let mut bss = WifiBss::new(c, 1);
        let results: Vec<bool> = (0..4).map(|s| bss.enqueue(0, RadioDirection::Ul, packet(s), SimTime::ZERO)).collect();
        assert_eq!(results, [true, true, true, false]);
        assert_eq!((bss.packets_dropped(), bss.packets_held()), (1, 3));
        // Nothing runs for 600 ms: when the station next builds a PPDU its packets are too old.
        let mut out = Vec::new();
        let mut late = WifiBss::new(c, 1);
        late.exchange = None;
        late.idle_since = SimTime::ZERO + SimDuration::from_millis(600);
        late.enqueue(0, RadioDirection::Ul, packet(0), SimTime::ZERO);
        late.advance_to(SimTime::ZERO + SimDuration::from_secs(1), &mut out);
        assert!(out.is_empty());
        assert_eq!((late.packets_dropped(), late.packets_held()), (1, 0));
    }

    #[test]
    fn ideal_rate_control_picks_the_fastest_mcs_the_snr_carries() {
        // At −80 dBm (docs/validation.md W13) the table-based model carries 20 MHz up to MCS 4, 80 MHz up to MCS 2.
        let ht20 = PhyConfig::new(Standard::Ht, Band::Ghz5, 20, 800, 1).unwrap();
        assert_eq!(BssConfig::new(ht20, 1, RateControl::Ideal).data_mcs().index, 4);
        let he80 = PhyConfig::default_for(Standard::He);
        assert_eq!(BssConfig::new(he80, 1, RateControl::Ideal).data_mcs().index, 2);
        let strong = BssConfig { rss_dbm: -40.0, ..BssConfig::new(he80, 1, RateControl::Ideal) };
        // 47.95 dB: beyond every table; MCS 10 and 11 have no BCC table and use NIST (≈ 36 dB).
        assert_eq!(strong.data_mcs().index, 11);
    }

    #[test]
    fn same_seed_same_trace() {
        let c = ht(Band::Ghz5, 20, 800, 7);
        assert_eq!(saturate(c, 3, 0.5, 9).2, saturate(c, 3, 0.5, 9).2);
        assert_ne!(saturate(c, 3, 0.5, 9).2, saturate(c, 3, 0.5, 10).2);
    }
}
