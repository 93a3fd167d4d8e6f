//! Cost of the mmWave cell per subframe (docs/architecture.md, performance budget): the study-(a)
//! UE (docs/models.md, profiles) saturated in line of sight (one full MCS-28 TB per subframe, about
//! 26 IP packets handed over) and behind the building (QPSK/16-QAM TBs), and an idle 3GPP cell
//! catching up on a second of channel grid steps before its next packet.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use tcplab_core::{DataHeader, Ecn, Packet, SimDuration, SimTime};
use tcplab_net::mmwave::cell::{CellConfig, MmWaveCell, RadioDelivery, RadioDirection};
use tcplab_net::mmwave::channel::ChannelConfig;
use tcplab_net::mmwave::geometry::{Building, LosTest, Position};
use tcplab_net::mmwave::mobility::{Mobility, Waypoint, WaypointPath};
use tcplab_net::mmwave::phy::FrameConfig;
use tcplab_net::mmwave::rlc::RlcConfig;
use tcplab_net::mmwave::scheduler::SharingPolicy;
use tcplab_net::radio::RadioCell;

const TTI: SimDuration = SimDuration::from_micros(100);
const SUBFRAMES: u64 = 1000;

fn study_a_cell(channel: ChannelConfig, los_test: LosTest) -> MmWaveCell {
    let waypoint = |t: u64, y: f64| Waypoint { time: SimTime::ZERO + SimDuration::from_secs(t), position: Position::new(50.0, y, 1.5) };
    let track = WaypointPath::new(vec![waypoint(0, 15.0), waypoint(15, -15.0)]).expect("valid path");
    let config = CellConfig {
        channel,
        frame: FrameConfig::mmw_v2(28e9, 1e9).expect("valid frame"),
        rlc: RlcConfig::study_a(7_000_000),
        ul_rlc: RlcConfig::study_a(7_000_000),
        cqi_threshold_subframes: 1000,
        policy: SharingPolicy::RoundRobin,
        fixed_mcs: None,
        enb_position: Position::new(0.0, 0.0, 30.0),
        buildings: vec![Building::new([40.0, 45.0], [-4.0, 4.0], [0.0, 30.0]).expect("valid building")],
        los_test,
        horizon: SimTime::ZERO + SimDuration::from_secs(15),
        ues: vec![Mobility::Waypoints(track)],
        ip_mtu: 1500,
        ue_tx_power_dbm: 30.0,
        enb_noise_figure_db: 5.0,
    };
    MmWaveCell::new(config, 1).expect("valid channel")
}

fn packet(seq: u32) -> Packet {
    Packet::data(0, 0, 1, DataHeader { seq, payload: 1448, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
}

/// Runs `SUBFRAMES` subframes from `from`, keeping the DL RLC buffer full.
fn saturated(cell: &mut MmWaveCell, from: SimTime, seq: &mut u32, out: &mut Vec<RadioDelivery>) {
    let mut t = from;
    for _ in 0..SUBFRAMES {
        cell.advance_to(t, out);
        black_box(out.len());
        out.clear();
        while cell.enqueue(0, RadioDirection::Dl, packet(*seq), t) {
            *seq = seq.wrapping_add(1);
        }
        t += TTI;
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("mmwave_cell");
    group.throughput(Throughput::Elements(SUBFRAMES));
    // Line of sight from 0 to 5 s, blocked from 5 to 10 s: each sample stays in its phase.
    for (name, start_s) in [("saturated_los", 1), ("saturated_nlos", 6)] {
        let start = SimTime::ZERO + SimDuration::from_secs(start_s);
        let mut cell = study_a_cell(ChannelConfig::mmw_v2(), LosTest::Footprint2d);
        let (mut seq, mut out) = (0, Vec::new());
        saturated(&mut cell, start, &mut seq, &mut out); // fill RLC and the HARQ pipeline
        let mut from = start + TTI.saturating_mul(SUBFRAMES);
        group.bench_function(name, |b| {
            b.iter(|| {
                if from >= start + SimDuration::from_secs(3) {
                    from = start + TTI.saturating_mul(SUBFRAMES); // time only moves forward per cell
                    cell = study_a_cell(ChannelConfig::mmw_v2(), LosTest::Footprint2d);
                }
                saturated(&mut cell, from, &mut seq, &mut out);
                from += TTI.saturating_mul(SUBFRAMES);
            })
        });
    }
    group.bench_function("idle_3gpp_catch_up_1s", |b| {
        b.iter_batched(
            || study_a_cell(ChannelConfig::mmw_v2_3gpp(), LosTest::Box3d),
            |mut cell| {
                let at = SimTime::ZERO + SimDuration::from_secs(1);
                black_box(cell.enqueue(0, RadioDirection::Dl, packet(0), at));
                cell.advance_to(at + TTI, &mut Vec::new());
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
