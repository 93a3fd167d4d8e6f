//! Two threads sharing one run (docs/architecture.md, "Two threads"). The network's regions
//! (`crate::regions`) are dealt to two groups; the calling thread's world simulates group 0
//! (the lighter) and records, a worker thread's copy of the world (built from the same
//! scenario) simulates group 1. Both run to each pause of the run (`World::next_stop`) side
//! by side. At a crossing, with the worker idle, the calling thread hands the packets that
//! crossed between the groups to their far ends. At a sample, each world takes its readings
//! (`World::take_readings`); the worker's are swapped out of its world, and the calling thread
//! builds the sample from both while the worker runs on. The pauses and the order of the
//! hand-overs are those of a run on one thread, so the results are identical. At the end the
//! worker's world gives its ends back (`World::absorb`).
//!
//! The threads wait for each other spinning a little, then yielding: a pause comes every
//! lookahead (10 ms of a dumbbell's simulated time: about a millisecond of wall time with
//! a thousand flows), where waking a thread blocked on a channel cost a fifth of the run
//! (many-1000, measured on a prototype).

use crate::budget;
use crate::world::{Stop, World};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use tcplab_core::SimTime;

/// The fewest full-size packets the wires between the groups must be able to carry in a
/// lookahead for two threads to pay: between pauses the threads must have more to do than
/// meeting costs them (a few microseconds, and the crossed packets' cache lines moving between
/// cores). Measured on this project's 2-core machine (2026-11-26, interleaved runs): one flow
/// over a 100 Mbit/s, 10 ms dumbbell (166 packets a pause, both ways) ran 0-15 % slower on two
/// threads, ten flows there -2 to +5 %, one flow at 1 Gbit/s (1666) 26-34 % faster.
const MIN_PACKETS_PER_CROSSING: f64 = 500.0;

/// Whether `world` (built, not yet run) can run on two threads: its regions fall in two
/// groups, a second copy of the world fits in `record.memory_limit`
/// (`budget::second_world_fits`), and it records no per-ACK RTTs (rows in the order ACKs
/// arrive anywhere, which two threads do not share).
pub fn possible(world: &World) -> bool {
    world.regions.splits() && !world.scenario.record.rtt && budget::second_world_fits(&world.scenario, &world.net)
}

/// Whether two threads would run `world` faster: it can (`possible`) and the wires between the
/// groups carry enough per lookahead (`MIN_PACKETS_PER_CROSSING`).
pub fn worthwhile(world: &World) -> bool {
    let (regions, net) = (&world.regions, &world.net);
    let Some(lookahead) = regions.lookahead else { return false };
    let packets_per_crossing: f64 = regions
        .cut
        .iter()
        .map(|&l| &net.links[l as usize])
        .filter(|link| regions.group(link.from) != regions.group(link.to))
        .map(|link| link.model.rate().bps() as f64 * lookahead.as_secs_f64() / (8.0 * 1500.0))
        .sum();
    packets_per_crossing >= MIN_PACKETS_PER_CROSSING && possible(world)
}

/// Spins (`std::hint::spin_loop`) before a waiting thread starts yielding its core.
const SPINS_BEFORE_YIELDING: u32 = 1 << 14;

/// What the two threads share while they run.
struct Shared<'w> {
    partner: Mutex<&'w mut World>,
    /// The round the worker may run, the last instant whose events it runs in it (and the
    /// sample instant after it, or 0), and the last round it finished.
    go: AtomicU64,
    last: AtomicU64,
    sample: AtomicU64,
    done: AtomicU64,
    quit: AtomicBool,
    /// Set by a thread that panicked, so that the other stops waiting for it.
    abandoned: AtomicBool,
}

/// Marks the run abandoned if its thread unwinds (a panic: a simulator bug).
struct Abandons<'a>(&'a AtomicBool);

impl Drop for Abandons<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

/// Runs `world` (restricted to group 0) and `partner` (group 1) up to `until`, capped at the
/// end of the run, with the hand-overs and samples due on the way; stops at a pause once the
/// two have run `max_events` events, so that a caller checks for Ctrl-C now and then. Returns
/// whether it got to `until`.
pub fn run_until(world: &mut World, partner: &mut World, until: SimTime, max_events: u64) -> bool {
    let first_event = world.events() + partner.events();
    let shared = Shared {
        partner: Mutex::new(partner),
        go: AtomicU64::new(0),
        last: AtomicU64::new(0),
        sample: AtomicU64::new(0),
        done: AtomicU64::new(0),
        quit: AtomicBool::new(false),
        abandoned: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        scope.spawn(|| work(&shared));
        let _abandons = Abandons(&shared.abandoned);
        let mut round = 0;
        // A sample whose readings are taken, to build once the worker runs on.
        let mut taken = None;
        let reached = loop {
            let (last, stop) = world.next_stop(until);
            round += 1;
            let sample = (stop == Stop::Sample).then(|| world.sample_instant());
            shared.last.store(last.0, Ordering::Relaxed);
            shared.sample.store(sample.map_or(0, |at| at.0), Ordering::Relaxed);
            shared.go.store(round, Ordering::Release);
            if let Some(at) = taken.take() {
                world.sample_with_peer(at);
            }
            run_to(world, last);
            if let Some(at) = sample {
                world.sample_radio(at);
                world.take_readings(at);
            }
            assert!(wait_for(&shared.done, round, &shared.abandoned), "the worker thread failed");
            let mut partner = shared.partner.lock().expect("the worker does not panic holding the world");
            match stop {
                Stop::Crossing => world.cross(Some(&mut partner)),
                Stop::Sample => {
                    partner.swap_readings(&mut world.peer_readings);
                    taken = sample;
                }
                Stop::Until => break true,
            }
            world.passed(stop);
            partner.passed(stop);
            if world.events() + partner.events() - first_event >= max_events {
                break false;
            }
        };
        if let Some(at) = taken {
            world.sample_with_peer(at);
        }
        shared.quit.store(true, Ordering::Relaxed);
        shared.go.store(round + 1, Ordering::Release);
        reached
    })
}

/// The worker: runs its world's events up to each round's last instant.
fn work(shared: &Shared) {
    let _abandons = Abandons(&shared.abandoned);
    let mut round = 0;
    loop {
        round += 1;
        if !wait_for(&shared.go, round, &shared.abandoned) || shared.quit.load(Ordering::Relaxed) {
            return;
        }
        let last = SimTime(shared.last.load(Ordering::Relaxed));
        let mut partner = shared.partner.lock().expect("the calling thread does not panic holding the world");
        run_to(&mut partner, last);
        match shared.sample.load(Ordering::Relaxed) {
            0 => {}
            at => {
                partner.sample_radio(SimTime(at));
                partner.take_readings(SimTime(at));
            }
        }
        drop(partner);
        shared.done.store(round, Ordering::Release);
    }
}

fn run_to(world: &mut World, last: SimTime) {
    let mut unlimited = u64::MAX;
    world.run_events(last, &mut unlimited);
}

/// Waits until `counter` reaches `round`; false if the other thread panicked first.
fn wait_for(counter: &AtomicU64, round: u64, abandoned: &AtomicBool) -> bool {
    let mut spins = 0;
    while counter.load(Ordering::Acquire) < round {
        if abandoned.load(Ordering::Acquire) {
            return false;
        }
        if spins < SPINS_BEFORE_YIELDING {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    true
}
