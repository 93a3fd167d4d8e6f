//! Regions: the parts of a network joined only by wires of at least `MIN_LOOKAHEAD` one-way
//! delay (a dumbbell's two sides, joined by its bottleneck), which two threads can simulate
//! side by side (conservative synchronization, as ns-3's distributed simulator does with
//! `ns3::DistributedSimulatorImpl`; docs/architecture.md, "Two threads").
//!
//! A packet that starts on a wire cut between regions cannot arrive before a lookahead (the
//! least delay of the cut wires) has passed, so it is held at its transmitter and handed to
//! the far end's pipe at the next multiple of the lookahead, before any event at that instant
//! or later (`Direction::hand_over_in_batches`). The run does this whether one thread or two
//! simulate it, and samples flows and links at a sample instant only once every event up to
//! that instant has run: the order of events within a region then never depends on the other
//! region's, and results are the same with one thread or two.

use crate::build::Network;
use tcplab_core::{LinkId, NodeId, SimDuration};

/// Wires with less delay than this are never cut: with a shorter lookahead the threads would
/// meet too often for their meetings to pay off.
pub const MIN_LOOKAHEAD: SimDuration = SimDuration::from_millis(1);

/// How a network splits into regions and the regions into two groups (one per thread).
#[derive(Clone, Debug, Default)]
pub struct Regions {
    /// The group (0 or 1) of each node's region.
    pub node_group: Vec<u8>,
    /// The groups of each flow's sender and receiver, and of each link direction's
    /// transmitter: what a sample reads where (`World::sample`), without reading the flows'
    /// and links' own state.
    pub flow_groups: Vec<[u8; 2]>,
    pub link_groups: Vec<u8>,
    /// The link directions between different regions, ascending.
    pub cut: Vec<LinkId>,
    /// The least delay of the cut directions: packets cross at its multiples. None when the
    /// network is one region.
    pub lookahead: Option<SimDuration>,
}

impl Regions {
    /// The regions of `net`: nodes joined by any link direction that cannot be cut (a delay
    /// under `MIN_LOOKAHEAD`, or not a constant-rate wire without delivery effects) are in one
    /// region, and so are a radio cell's base and users. The regions are dealt to two groups,
    /// heaviest first to the lighter group, a flow's sender weighing three times its receiver
    /// (an ACK costs the sender about three times what a segment costs the receiver); group 0
    /// is the lighter, as its thread also builds the samples (`crate::threads`).
    pub fn of(net: &Network) -> Regions {
        let mut parent: Vec<u32> = (0..net.nodes.len() as u32).collect();
        for link in &net.links {
            if link.min_transit().is_none_or(|d| d < MIN_LOOKAHEAD) {
                union(&mut parent, link.from, link.to);
            }
        }
        if let Some(radio) = &net.radio {
            for &ue in &radio.ue_nodes {
                union(&mut parent, radio.base, ue);
            }
        }
        let root: Vec<u32> = (0..parent.len() as u32).map(|n| find(&mut parent, n)).collect();
        let cut: Vec<LinkId> = net.links.iter().filter(|l| root[l.from as usize] != root[l.to as usize]).map(|l| l.id).collect();
        if cut.is_empty() {
            return Regions::grouped(net, vec![0; root.len()], cut, None);
        }
        let mut weight = vec![0u64; root.len()];
        for flow in &net.flows {
            weight[root[flow.src as usize] as usize] += 3;
            weight[root[flow.dst as usize] as usize] += 1;
        }
        let mut regions: Vec<u32> = (0..root.len() as u32).filter(|&n| root[n as usize] == n).collect();
        regions.sort_by_key(|&r| (std::cmp::Reverse(weight[r as usize]), r));
        let mut group_of_region = vec![0u8; root.len()];
        let mut load = [0u64; 2];
        for r in regions {
            let g = usize::from(load[1] < load[0]);
            group_of_region[r as usize] = g as u8;
            load[g] += weight[r as usize];
        }
        if load[0] > load[1] {
            group_of_region.iter_mut().for_each(|g| *g = 1 - *g);
        }
        let lookahead = cut.iter().filter_map(|&l| net.links[l as usize].min_transit()).min();
        Regions::grouped(net, root.iter().map(|&r| group_of_region[r as usize]).collect(), cut, lookahead)
    }

    fn grouped(net: &Network, node_group: Vec<u8>, cut: Vec<LinkId>, lookahead: Option<SimDuration>) -> Regions {
        let flow_groups = net.flows.iter().map(|f| [node_group[f.src as usize], node_group[f.dst as usize]]).collect();
        let link_groups = net.links.iter().map(|l| node_group[l.from as usize]).collect();
        Regions { node_group, flow_groups, link_groups, cut, lookahead }
    }

    /// Whether the regions fall in both groups, so that two threads can share the run.
    pub fn splits(&self) -> bool {
        self.node_group.contains(&1)
    }

    pub fn group(&self, node: NodeId) -> u8 {
        self.node_group[node as usize]
    }
}

fn find(parent: &mut [u32], mut n: u32) -> u32 {
    while parent[n as usize] != n {
        parent[n as usize] = parent[parent[n as usize] as usize];
        n = parent[n as usize];
    }
    n
}

fn union(parent: &mut [u32], a: NodeId, b: NodeId) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    // The smaller root wins, so each region's root is its lowest node.
    parent[ra.max(rb) as usize] = ra.min(rb);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn regions(scenario: serde_json::Value) -> (Regions, Network) {
        let net = crate::build::build(&crate::resolve(scenario).unwrap()).unwrap();
        (Regions::of(&net), net)
    }

    fn dumbbell(bottleneck: serde_json::Value) -> serde_json::Value {
        json!({
            "duration": "1s",
            "topology": {"kind": "dumbbell", "pairs": 2, "bottleneck": bottleneck, "access": {"rate": "1Gbps", "delay": "0ms", "buffer": "100pkt"}},
            "flows": [{"cc": "cubic"}, {"cc": "bbr", "src": "s1", "dst": "r1"}],
        })
    }

    #[test]
    fn a_dumbbell_splits_at_its_bottleneck_senders_apart_from_receivers() {
        let (regions, net) = regions(dumbbell(json!({"rate": "10Mbps", "delay": "10ms", "buffer": "100pkt"})));
        let names: Vec<&str> = regions.cut.iter().map(|&l| net.links[l as usize].name.as_str()).collect();
        assert_eq!(names, ["left->right", "right->left"]);
        assert_eq!(regions.lookahead, Some(SimDuration::from_millis(10)));
        assert!(regions.splits());
        // Two senders weigh more than two receivers: the receivers' side is group 0.
        let group = |name: &str| regions.group(net.nodes.iter().position(|n| n.name == name).unwrap() as NodeId);
        assert_eq!([group("s0"), group("s1"), group("left")], [1, 1, 1]);
        assert_eq!([group("r0"), group("r1"), group("right")], [0, 0, 0]);
        assert_eq!(regions.flow_groups, [[1, 0], [1, 0]]);
    }

    #[test]
    fn short_or_jittered_wires_are_never_cut() {
        for bottleneck in [
            json!({"rate": "10Mbps", "delay": "500us", "buffer": "100pkt"}),
            json!({"rate": "10Mbps", "delay": "10ms", "buffer": "100pkt", "jitter": {"amount": "1ms"}}),
        ] {
            let (regions, _) = regions(dumbbell(bottleneck.clone()));
            assert!(regions.cut.is_empty() && !regions.splits() && regions.lookahead.is_none(), "{bottleneck}");
        }
    }

    #[test]
    fn a_parking_lot_is_cut_at_every_hop_and_its_regions_dealt_to_two_groups() {
        let (regions, net) = regions(json!({
            "duration": "1s",
            "topology": {"kind": "parking_lot", "hops": 3, "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "100pkt"}},
            "flows": [{"cc": "cubic"}],
        }));
        assert_eq!(regions.cut.len(), 6, "both directions of the three hops");
        assert_eq!(regions.lookahead, Some(SimDuration::from_millis(5)));
        let cut_between = |l: LinkId| regions.group(net.links[l as usize].from) != regions.group(net.links[l as usize].to);
        assert!(regions.cut.iter().any(|&l| cut_between(l)) && regions.splits());
    }
}
