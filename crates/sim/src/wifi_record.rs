//! What a WiFi BSS records (`crate::cell::RecordedCell`): per device (the access point, then each
//! station) and sample its MAC counters and the medium's busy share (wifi.parquet), and over the
//! run the BSS's rate, airtime and AP drop ratio with each device's counters (summary.json
//! `wifi`).

use crate::cell::RecordedCell;
use crate::recorder::{series, Columns, SeriesSchema};
use serde::Serialize;
use tcplab_core::{NodeId, SimDuration, SimTime};
use tcplab_net::radio::RadioCell;
use tcplab_net::wifi::bss::{DeviceStats, WifiBss};
use tcplab_net::Node;

series! {
    /// Per-device series of a WiFi BSS (wifi.parquet).
    pub struct WifiSeries as "wifi" {
        /// Simulated time of the sample.
        #[column(F64, "s")]
        pub t_s: f64,
        /// The access point, by its node's name (the same on every row of a BSS).
        #[column(Node, "")]
        pub bss: NodeId,
        /// The device, by its node's name: the access point, then each station.
        #[column(Node, "")]
        pub station: NodeId,
        /// PHY rate of data frames at the BSS's MCS.
        #[column(F64, "Mbit/s")]
        pub phy_rate_mbps: f64,
        /// PPDUs this device sent that collided, during the interval.
        #[column(F64, "PPDUs")]
        pub collisions: f64,
        /// MPDU retransmissions this device sent during the interval.
        #[column(F64, "MPDUs")]
        pub retries: f64,
        /// Packets this device dropped (retry limit, queue lifetime, full queue) during the
        /// interval.
        #[column(F64, "packets")]
        pub mac_drops: f64,
        /// MPDUs addressed to this device lost to bit errors during the interval.
        #[column(F64, "MPDUs")]
        pub phy_drops: f64,
        /// Fraction of the interval the medium was busy (the same on every row of a sample).
        #[column(F64, "")]
        pub airtime_busy: f64,
    }
}

/// A WiFi BSS over the run (summary.json `wifi`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WifiSummary {
    /// The access point's node.
    pub bss: String,
    pub mcs: u32,
    pub phy_rate_mbps: f64,
    pub snr_db: f64,
    /// Fraction of the run the medium was busy.
    pub airtime_busy: f64,
    /// MPDUs addressed to the AP lost at its PHY (bit errors and collisions) over all MPDUs
    /// sent to it: the study's drop ratio at the AP.
    pub ap_drop_ratio: f64,
    /// The AP first, then each station.
    pub devices: Vec<WifiDeviceSummary>,
}

/// One device of a BSS: what it sent and what reached it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WifiDeviceSummary {
    pub device: String,
    pub ppdus: u64,
    pub collisions: u64,
    pub retries: u64,
    pub mac_drops: u64,
    pub rx_ok_mpdus: u64,
    pub rx_error_mpdus: u64,
    pub rx_collision_mpdus: u64,
}

/// A BSS with what it records.
pub struct RecordedWifi {
    bss: WifiBss,
    /// The access point's node, then each station's (device 0, 1, …).
    device_nodes: Vec<NodeId>,
    series: WifiSeries,
    /// Each device's counters, and the medium's busy time, at the previous sample.
    before: Vec<DeviceStats>,
    busy_before: SimDuration,
}

impl RecordedWifi {
    pub fn new(bss: WifiBss, ap: NodeId, stations: &[NodeId]) -> Self {
        let device_nodes: Vec<NodeId> = std::iter::once(ap).chain(stations.iter().copied()).collect();
        let before = vec![DeviceStats::default(); device_nodes.len()];
        RecordedWifi { bss, device_nodes, series: WifiSeries::default(), before, busy_before: SimDuration::ZERO }
    }

    /// The counters of device `device` (0: the access point).
    fn stats(&self, device: usize) -> DeviceStats {
        self.bss.stats(device.checked_sub(1))
    }
}

impl RecordedCell for RecordedWifi {
    fn radio(&self) -> &dyn RadioCell {
        &self.bss
    }

    fn radio_mut(&mut self) -> &mut dyn RadioCell {
        &mut self.bss
    }

    fn series(&self) -> &'static SeriesSchema {
        &WifiSeries::SCHEMA
    }

    fn rows_per_sample(&self) -> usize {
        self.device_nodes.len()
    }

    fn row_noun(&self) -> &'static str {
        "WiFi device"
    }

    fn reserve(&mut self, samples: usize) {
        self.series = WifiSeries::with_capacity(samples * self.device_nodes.len());
    }

    fn sample(&mut self, now: SimTime, interval: SimDuration) {
        let t = now.as_secs_f64();
        let busy = self.bss.busy_time();
        let airtime = ((busy - self.busy_before).as_secs_f64() / interval.as_secs_f64()).min(1.0);
        self.busy_before = busy;
        let phy_rate = self.bss.phy_rate_bps() / 1e6;
        for (device, &node) in self.device_nodes.iter().enumerate() {
            let (st, before) = (self.stats(device), self.before[device]);
            let s = &mut self.series;
            s.t_s.push(t);
            s.bss.push(self.device_nodes[0]);
            s.station.push(node);
            s.phy_rate_mbps.push(phy_rate);
            s.collisions.push((st.collisions - before.collisions) as f64);
            s.retries.push((st.retries - before.retries) as f64);
            s.mac_drops.push((st.mac_drops - before.mac_drops) as f64);
            s.phy_drops.push((st.rx_error_mpdus - before.rx_error_mpdus) as f64);
            s.airtime_busy.push(airtime);
            self.before[device] = st;
        }
    }

    fn take_columns(&mut self) -> Columns {
        std::mem::take(&mut self.series).into_columns()
    }

    fn summary(&self, nodes: &[Node], end: SimTime) -> serde_json::Value {
        let name = |node: NodeId| nodes[node as usize].name.clone();
        let devices: Vec<WifiDeviceSummary> = self
            .device_nodes
            .iter()
            .enumerate()
            .map(|(device, &node)| {
                let st = self.stats(device);
                WifiDeviceSummary {
                    device: name(node),
                    ppdus: st.ppdus,
                    collisions: st.collisions,
                    retries: st.retries,
                    mac_drops: st.mac_drops,
                    rx_ok_mpdus: st.rx_ok_mpdus,
                    rx_error_mpdus: st.rx_error_mpdus,
                    rx_collision_mpdus: st.rx_collision_mpdus,
                }
            })
            .collect();
        let ap = &devices[0];
        let received = ap.rx_ok_mpdus + ap.rx_error_mpdus + ap.rx_collision_mpdus;
        let sim_seconds = end.as_secs_f64();
        let summary = WifiSummary {
            bss: name(self.device_nodes[0]),
            mcs: self.bss.data_mcs().index,
            phy_rate_mbps: self.bss.phy_rate_bps() / 1e6,
            snr_db: self.bss.config().snr_db(),
            airtime_busy: if sim_seconds > 0.0 { (self.bss.busy_time().as_secs_f64() / sim_seconds).min(1.0) } else { 0.0 },
            ap_drop_ratio: if received > 0 { (ap.rx_error_mpdus + ap.rx_collision_mpdus) as f64 / received as f64 } else { 0.0 },
            devices,
        };
        serde_json::to_value(summary).expect("the WiFi summary serializes")
    }
}
