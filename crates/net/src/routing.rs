//! Static shortest-path routing: for each (node, destination) the outgoing link direction,
//! by fewest hops; ties go to the link declared first, so routes are deterministic.
//!
//! Tables are built only towards the destinations asked for, one breadth-first search each,
//! and a destination entered from a single neighbour (a host on its access link, a UE or a
//! station behind its base) shares that neighbour's table: every shortest path to it ends
//! with that neighbour, so the first hops are the same. A dumbbell of n pairs thus needs
//! two tables of 2n + 2 entries, not (2n + 2)² — setup stays linear in the network's size.

use std::collections::VecDeque;
use tcplab_core::{LinkId, NodeId};

const NO_LINK: LinkId = LinkId::MAX;
const NO_TABLE: u32 = u32::MAX;

/// Next hops towards the destinations passed to [`RoutingTable::route_towards`].
#[derive(Clone, Debug)]
pub struct RoutingTable {
    /// Links into each node as (link, from): the searches run from a destination backwards.
    incoming: Vec<Vec<(LinkId, NodeId)>>,
    /// Per node: the node whose table routes towards it (itself, or its only upstream
    /// neighbour) and, in the second case, the lowest link from that neighbour to it.
    anchor: Vec<NodeId>,
    last_hop: Vec<LinkId>,
    /// Per node: index of its table in `tables`, once built.
    table_of: Vec<u32>,
    /// `tables[t][node]`: the link to take from `node` towards the table's node.
    tables: Vec<Vec<LinkId>>,
}

impl RoutingTable {
    /// `edges[i] = (from, to)` for directed link `i`; no table is built yet.
    pub fn new(nodes: usize, edges: &[(NodeId, NodeId)]) -> Self {
        let mut incoming: Vec<Vec<(LinkId, NodeId)>> = vec![Vec::new(); nodes];
        for (id, &(from, to)) in edges.iter().enumerate() {
            incoming[to as usize].push((id as LinkId, from));
        }
        let (mut anchor, mut last_hop) = ((0..nodes as NodeId).collect::<Vec<_>>(), vec![NO_LINK; nodes]);
        for (node, links) in incoming.iter().enumerate() {
            // Links are listed in id order: the first is the lowest from the single neighbour.
            if let Some(&(first, from)) = links.first() {
                if links.iter().all(|&(_, f)| f == from) {
                    (anchor[node], last_hop[node]) = (from, first);
                }
            }
        }
        RoutingTable { incoming, anchor, last_hop, table_of: vec![NO_TABLE; nodes], tables: Vec::new() }
    }

    /// Makes `next_hop(_, dst)` answer: builds the table `dst` needs unless it exists;
    /// returns whether it built one.
    pub fn route_towards(&mut self, dst: NodeId) -> bool {
        let anchor = self.anchor[dst as usize];
        if self.table_of[anchor as usize] != NO_TABLE {
            return false;
        }
        self.table_of[anchor as usize] = self.tables.len() as u32;
        let table = self.search(anchor);
        self.tables.push(table);
        true
    }

    /// Breadth-first from `dst` over reversed links: a node's next hop is its lowest link
    /// to a node one hop closer.
    fn search(&self, dst: NodeId) -> Vec<LinkId> {
        let n = self.anchor.len();
        let mut next = vec![NO_LINK; n];
        let mut dist = vec![u32::MAX; n];
        dist[dst as usize] = 0;
        let mut frontier = VecDeque::from([dst as usize]);
        while let Some(v) = frontier.pop_front() {
            for &(link, from) in &self.incoming[v] {
                let u = from as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    next[u] = link;
                    frontier.push_back(u);
                } else if dist[u] == dist[v] + 1 && link < next[u] {
                    next[u] = link;
                }
            }
        }
        next
    }

    /// The link to take from `node` towards `dst` (None at `dst` or when unreachable).
    /// Panics unless `route_towards(dst)` was called.
    pub fn next_hop(&self, node: NodeId, dst: NodeId) -> Option<LinkId> {
        if node == dst {
            return None;
        }
        let anchor = self.anchor[dst as usize];
        let link = if node == anchor {
            self.last_hop[dst as usize]
        } else {
            let table = self.table_of[anchor as usize];
            assert!(table != NO_TABLE, "no routes were built towards node {dst}");
            self.tables[table as usize][node as usize]
        };
        (link != NO_LINK).then_some(link)
    }

    pub fn reachable(&self, src: NodeId, dst: NodeId) -> bool {
        src == dst || self.next_hop(src, dst).is_some()
    }

    /// Tables built so far (each holds one entry per node).
    pub fn tables(&self) -> usize {
        self.tables.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::SimRng;

    fn towards_all(nodes: usize, edges: &[(NodeId, NodeId)]) -> RoutingTable {
        let mut rt = RoutingTable::new(nodes, edges);
        for dst in 0..nodes as NodeId {
            rt.route_towards(dst);
        }
        rt
    }

    #[test]
    fn routes_take_fewest_hops_with_deterministic_ties() {
        // 0 - 1 - 3 and 0 - 2 - 3 (two equal paths), plus 3 - 4; links as two directions each.
        let full_duplex = [(0, 1), (1, 3), (0, 2), (2, 3), (3, 4)];
        let edges: Vec<(u32, u32)> = full_duplex.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        let rt = towards_all(5, &edges);
        assert_eq!(rt.next_hop(0, 4), Some(0)); // via 1: declared first
        assert_eq!(rt.next_hop(1, 4), Some(2));
        assert_eq!(rt.next_hop(4, 0), Some(9));
        assert_eq!(rt.next_hop(3, 0), Some(3)); // 3->1 declared before 3->2
        assert!(rt.reachable(2, 4));
    }

    #[test]
    fn disconnected_nodes_have_no_route() {
        let rt = towards_all(3, &[(0, 1), (1, 0)]);
        assert!(!rt.reachable(0, 2));
        assert_eq!(rt.next_hop(2, 0), None);
    }

    /// Next hops by their definition: BFS distances to `dst`, then the lowest link to a
    /// node one hop closer.
    fn by_definition(nodes: usize, edges: &[(NodeId, NodeId)], node: NodeId, dst: NodeId) -> Option<LinkId> {
        let mut dist = vec![u32::MAX; nodes];
        dist[dst as usize] = 0;
        for d in 0..nodes as u32 {
            for &(from, to) in edges {
                if dist[to as usize] == d && dist[from as usize] == u32::MAX {
                    dist[from as usize] = d + 1;
                }
            }
        }
        let hops = dist[node as usize];
        (node != dst && hops != u32::MAX)
            .then(|| {
                edges
                    .iter()
                    .enumerate()
                    .find(|(_, &(f, t))| f == node && dist[t as usize].checked_add(1) == Some(hops))
                    .map(|(i, _)| i as LinkId)
            })
            .flatten()
    }

    #[test]
    fn shared_tables_give_the_routes_of_one_search_per_destination() {
        // Random graphs with leaves (shared tables), parallel and one-way links, islands.
        for seed in 0..40 {
            let mut rng = SimRng::stream(seed, "routing-test");
            let nodes = 2 + rng.below(14) as usize;
            let mut edges = Vec::new();
            for _ in 0..rng.below(3 * nodes as u32) {
                let (a, b) = (rng.below(nodes as u32), rng.below(nodes as u32));
                if a != b {
                    edges.push((a, b));
                    if rng.chance(0.8) {
                        edges.push((b, a));
                    }
                }
            }
            let rt = towards_all(nodes, &edges);
            for dst in 0..nodes as NodeId {
                for node in 0..nodes as NodeId {
                    assert_eq!(
                        rt.next_hop(node, dst),
                        by_definition(nodes, &edges, node, dst),
                        "seed {seed}: {node} -> {dst} over {edges:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_star_of_leaves_needs_one_table() {
        // Hub 0 with 1000 leaves: every leaf routes through the hub's table.
        let edges: Vec<(u32, u32)> = (1..=1000).flat_map(|i| [(i, 0), (0, i)]).collect();
        let mut rt = RoutingTable::new(1001, &edges);
        assert!(rt.route_towards(1));
        assert!((2..=1000).all(|dst| !rt.route_towards(dst)));
        assert_eq!(rt.tables(), 1);
        assert_eq!(rt.next_hop(7, 9), Some(12)); // 7 -> hub
        assert_eq!(rt.next_hop(0, 9), Some(17)); // hub -> 9
    }
}
