//! Static shortest-path routing: for each (node, destination) the outgoing link direction,
//! by fewest hops. Ties go to the link declared first, so routes are deterministic; or, with
//! equal-cost multipath ([`RoutingTable::with_ecmp`]), to one of the equal-cost links chosen
//! per flow by a seeded hash of (flow, node) mapped onto them by hash-threshold (RFC 2992 §2;
//! Linux fib_select_multipath(), whose next hops split the hash space by `fib_nh_upper_bound`).
//! A flow's packets thus take one path and are never reordered across paths, while different
//! flows spread over them. Left out: flowlet switching, weights, rerouting around failed
//! links (links never fail), and the hash of real 5-tuples (a flow's id stands for its tuple).
//!
//! Tables are built only towards the destinations asked for, one breadth-first search each,
//! and a destination entered from a single neighbour (a host on its access link, a UE or a
//! station behind its base) shares that neighbour's table: every shortest path to it ends
//! with that neighbour, so the first hops are the same. A dumbbell of n pairs thus needs
//! two tables of 2n + 2 entries, not (2n + 2)² — setup stays linear in the network's size.
//! An ECMP table keeps each node's equal-cost links as a range of one flat list (compressed
//! rows), so a lookup stays O(1): one hash, one multiplication.

use std::collections::VecDeque;
use tcplab_core::rng::mix64;
use tcplab_core::{FlowId, LinkId, NodeId};

const NO_LINK: LinkId = LinkId::MAX;
const NO_TABLE: u32 = u32::MAX;

/// Next hops towards one destination.
#[derive(Clone, Debug)]
enum Table {
    /// `links[node]`: the lowest link from `node` to a node one hop closer.
    Lowest(Vec<LinkId>),
    /// Every link from node `n` to a node one hop closer, in id order:
    /// `links[first[n] as usize..first[n + 1] as usize]`.
    EqualCost { first: Vec<u32>, links: Vec<LinkId> },
}

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
    tables: Vec<Table>,
    /// Seed of the per-flow hash among equal-cost links; None: the lowest link always.
    ecmp_seed: Option<u64>,
}

impl RoutingTable {
    /// `edges[i] = (from, to)` for directed link `i`; ties go to the lowest link; no table
    /// is built yet.
    pub fn new(nodes: usize, edges: &[(NodeId, NodeId)]) -> Self {
        Self::with_tie_break(nodes, edges, None)
    }

    /// As [`RoutingTable::new`], but each flow takes one of the equal-cost links by a hash
    /// of (flow, node) seeded with `seed`.
    pub fn with_ecmp(nodes: usize, edges: &[(NodeId, NodeId)], seed: u64) -> Self {
        Self::with_tie_break(nodes, edges, Some(seed))
    }

    fn with_tie_break(nodes: usize, edges: &[(NodeId, NodeId)], ecmp_seed: Option<u64>) -> Self {
        let mut incoming: Vec<Vec<(LinkId, NodeId)>> = vec![Vec::new(); nodes];
        for (id, &(from, to)) in edges.iter().enumerate() {
            incoming[to as usize].push((id as LinkId, from));
        }
        let (mut anchor, mut last_hop) = ((0..nodes as NodeId).collect::<Vec<_>>(), vec![NO_LINK; nodes]);
        for (node, links) in incoming.iter().enumerate() {
            // Links are listed in id order: the first is the lowest from the single neighbour.
            // With ECMP, parallel links from that neighbour are equal-cost: the node keeps its
            // own table then.
            if let Some(&(first, from)) = links.first() {
                if links.iter().all(|&(_, f)| f == from) && (ecmp_seed.is_none() || links.len() == 1) {
                    (anchor[node], last_hop[node]) = (from, first);
                }
            }
        }
        RoutingTable { incoming, anchor, last_hop, table_of: vec![NO_TABLE; nodes], tables: Vec::new(), ecmp_seed }
    }

    /// Makes `next_hop(_, dst, _)` answer: builds the table `dst` needs unless it exists;
    /// returns whether it built one.
    pub fn route_towards(&mut self, dst: NodeId) -> bool {
        let anchor = self.anchor[dst as usize];
        if self.table_of[anchor as usize] != NO_TABLE {
            return false;
        }
        self.table_of[anchor as usize] = self.tables.len() as u32;
        let table = match self.ecmp_seed {
            None => self.lowest_links(anchor),
            Some(_) => self.equal_cost_links(anchor),
        };
        self.tables.push(table);
        true
    }

    /// Breadth-first from `dst` over reversed links: calls `on_link(from, link)` for every
    /// link from a node to one a hop closer to `dst`.
    fn search(&self, dst: NodeId, mut on_link: impl FnMut(usize, LinkId)) {
        let mut dist = vec![u32::MAX; self.anchor.len()];
        dist[dst as usize] = 0;
        let mut frontier = VecDeque::from([dst as usize]);
        while let Some(v) = frontier.pop_front() {
            for &(link, from) in &self.incoming[v] {
                let u = from as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    frontier.push_back(u);
                }
                if dist[u] == dist[v] + 1 {
                    on_link(u, link);
                }
            }
        }
    }

    /// Each node's lowest link to a node one hop closer to `dst`.
    fn lowest_links(&self, dst: NodeId) -> Table {
        let mut next = vec![NO_LINK; self.anchor.len()];
        self.search(dst, |u, link| next[u] = next[u].min(link));
        Table::Lowest(next)
    }

    /// Each node's links to a node one hop closer to `dst`, as rows of one flat list.
    fn equal_cost_links(&self, dst: NodeId) -> Table {
        let n = self.anchor.len();
        let mut found = Vec::new();
        self.search(dst, |u, link| found.push((u as u32, link)));
        // Counting sort by node into rows; each row (a node's out-degree at most) in id order.
        let mut first = vec![0u32; n + 1];
        for &(u, _) in &found {
            first[u as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut links = vec![NO_LINK; found.len()];
        for (u, link) in found {
            links[fill[u as usize] as usize] = link;
            fill[u as usize] += 1;
        }
        for u in 0..n {
            links[first[u] as usize..first[u + 1] as usize].sort_unstable();
        }
        Table::EqualCost { first, links }
    }

    /// The link `flow` takes from `node` towards `dst` (None at `dst` or when unreachable).
    /// Panics unless `route_towards(dst)` was called.
    #[inline]
    pub fn next_hop(&self, node: NodeId, dst: NodeId, flow: FlowId) -> Option<LinkId> {
        if node == dst {
            return None;
        }
        let anchor = self.anchor[dst as usize];
        if node == anchor {
            let link = self.last_hop[dst as usize];
            return (link != NO_LINK).then_some(link);
        }
        let table = self.table_of[anchor as usize];
        assert!(table != NO_TABLE, "no routes were built towards node {dst}");
        match &self.tables[table as usize] {
            Table::Lowest(next) => Some(next[node as usize]).filter(|&link| link != NO_LINK),
            Table::EqualCost { first, links } => {
                let (start, end) = (first[node as usize], first[node as usize + 1]);
                let seed = self.ecmp_seed.expect("equal-cost tables are built with a seed");
                (end > start).then(|| links[(start + hash_threshold(seed, flow, node, end - start)) as usize])
            }
        }
    }

    pub fn reachable(&self, src: NodeId, dst: NodeId) -> bool {
        // Every flow reaches what one does: the first is asked.
        src == dst || self.next_hop(src, dst, 0).is_some()
    }

    /// Tables built so far (each holds one entry per node).
    pub fn tables(&self) -> usize {
        self.tables.len()
    }
}

/// Which of `n` equal-cost links `flow` takes at `node`: a seeded 64-bit hash of the pair,
/// its upper half split into `n` equal ranges (hash-threshold, RFC 2992 §2). Hashing the
/// node too decorrelates the choices of successive routers (no polarization).
fn hash_threshold(seed: u64, flow: FlowId, node: NodeId, n: u32) -> u32 {
    let hash = mix64(seed ^ mix64((u64::from(flow) << 32) | u64::from(node)));
    (((hash >> 32) * u64::from(n)) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
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
        assert_eq!(rt.next_hop(0, 4, 0), Some(0)); // via 1: declared first
        assert_eq!(rt.next_hop(1, 4, 0), Some(2));
        assert_eq!(rt.next_hop(4, 0, 0), Some(9));
        assert_eq!(rt.next_hop(3, 0, 0), Some(3)); // 3->1 declared before 3->2
        assert!(rt.reachable(2, 4));
    }

    #[test]
    fn disconnected_nodes_have_no_route() {
        let rt = towards_all(3, &[(0, 1), (1, 0)]);
        assert!(!rt.reachable(0, 2));
        assert_eq!(rt.next_hop(2, 0, 0), None);
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

    /// 2 to 15 nodes and up to `links_per_node` of them random links each, every link with
    /// its reverse direction at `duplex` odds (parallel links and islands happen).
    fn random_graph(seed: u64, stream: &str, links_per_node: u32, duplex: f64) -> (usize, Vec<(NodeId, NodeId)>) {
        let mut rng = SimRng::stream(seed, stream);
        let nodes = 2 + rng.below(14) as usize;
        let mut edges = Vec::new();
        for _ in 0..rng.below(links_per_node * nodes as u32) {
            let (a, b) = (rng.below(nodes as u32), rng.below(nodes as u32));
            if a != b {
                edges.push((a, b));
                if rng.chance(duplex) {
                    edges.push((b, a));
                }
            }
        }
        (nodes, edges)
    }

    #[test]
    fn shared_tables_give_the_routes_of_one_search_per_destination() {
        // Random graphs with leaves (shared tables), parallel and one-way links, islands.
        for seed in 0..40 {
            let (nodes, edges) = random_graph(seed, "routing-test", 3, 0.8);
            let rt = towards_all(nodes, &edges);
            for dst in 0..nodes as NodeId {
                for node in 0..nodes as NodeId {
                    assert_eq!(
                        rt.next_hop(node, dst, 0),
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
        assert_eq!(rt.next_hop(7, 9, 0), Some(12)); // 7 -> hub
        assert_eq!(rt.next_hop(0, 9, 0), Some(17)); // hub -> 9
    }
    /// A two-tier Clos: leaves 0..4, spines 4..6 (every leaf to every spine), hosts 6..14 (two
    /// per leaf); full duplex, fabric links first.
    fn clos() -> (usize, Vec<(NodeId, NodeId)>) {
        let mut full_duplex: Vec<(NodeId, NodeId)> = (0..4).flat_map(|leaf| [(leaf, 4), (leaf, 5)]).collect();
        full_duplex.extend((0..8).map(|host| (6 + host, host / 2)));
        (14, full_duplex.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect())
    }

    #[test]
    fn ecmp_picks_one_of_exactly_the_equal_cost_links_per_flow() {
        let (nodes, edges) = clos();
        let mut rt = RoutingTable::with_ecmp(nodes, &edges, 7);
        for dst in 6..14 {
            rt.route_towards(dst);
        }
        // Hosts share their leaf's table (one link in), so one table per leaf.
        assert_eq!(rt.tables(), 4);
        // From leaf 0 towards a host of leaf 3: up to spine 4 (link 0) or spine 5 (link 2).
        let mut uses = [0; 2];
        for flow in 0..1000 {
            let link = rt.next_hop(0, 13, flow).unwrap();
            assert!(link == 0 || link == 2, "flow {flow}: link {link} is not an equal-cost link");
            uses[(link / 2) as usize] += 1;
            // The same (flow, node) always takes the same link, whatever the destination on
            // that leaf.
            assert_eq!(rt.next_hop(0, 12, flow), Some(link));
            assert_eq!(rt.next_hop(0, 13, flow), Some(link));
        }
        assert!(uses.iter().all(|&n| (400..=600).contains(&n)), "{uses:?}");
        // Where one path is shortest, every flow takes it: spine 4 down to leaf 3 (link 13),
        // host 12 up to leaf 3 (link 28), leaf 3 down to host 13 (link 31), host 6 up to
        // leaf 0 (link 16).
        assert!((0..100).all(|flow| rt.next_hop(4, 13, flow) == Some(13) && rt.next_hop(12, 13, flow) == Some(28)));
        assert!((0..100).all(|flow| rt.next_hop(3, 13, flow) == Some(31)));
        assert!((0..100).all(|flow| rt.next_hop(6, 13, flow) == Some(16)));
        // Another seed spreads the flows differently, deterministically.
        let mut other = RoutingTable::with_ecmp(nodes, &edges, 8);
        other.route_towards(13);
        let picks = |rt: &RoutingTable| (0..64).map(|flow| rt.next_hop(0, 13, flow).unwrap()).collect::<Vec<_>>();
        assert_ne!(picks(&rt), picks(&other));
        let mut again = RoutingTable::with_ecmp(nodes, &edges, 8);
        again.route_towards(13);
        assert_eq!(picks(&other), picks(&again));
    }

    #[test]
    fn ecmp_spreads_over_every_equal_cost_link_of_random_graphs() {
        for seed in 0..40 {
            let (nodes, edges) = random_graph(seed, "routing-ecmp-test", 4, 1.0);
            let mut rt = RoutingTable::with_ecmp(nodes, &edges, seed);
            let lowest = towards_all(nodes, &edges);
            for dst in 0..nodes as NodeId {
                rt.route_towards(dst);
            }
            for dst in 0..nodes as NodeId {
                for node in 0..nodes as NodeId {
                    if lowest.next_hop(node, dst, 0).is_none() {
                        assert_eq!(rt.next_hop(node, dst, 0), None);
                        continue;
                    }
                    // The equal-cost links: to a neighbour (links are full duplex, so it reaches
                    // dst too) as close to dst as the lowest link's.
                    let hops_via = |link: LinkId| hops(&lowest, &edges, edges[link as usize].1, dst);
                    let best = hops_via(lowest.next_hop(node, dst, 0).unwrap());
                    let equal: HashSet<LinkId> =
                        (0..edges.len() as LinkId).filter(|&l| edges[l as usize].0 == node && hops_via(l) == best).collect();
                    let taken: HashSet<LinkId> = (0..200).map(|flow| rt.next_hop(node, dst, flow).unwrap()).collect();
                    assert_eq!(taken, equal, "seed {seed}: {node} -> {dst} over {edges:?}");
                }
            }
        }
    }

    /// Hops from `node` to `dst` along the lowest-link routes.
    fn hops(rt: &RoutingTable, edges: &[(NodeId, NodeId)], mut node: NodeId, dst: NodeId) -> u32 {
        let mut hops = 0;
        while let Some(link) = rt.next_hop(node, dst, 0) {
            node = edges[link as usize].1;
            hops += 1;
        }
        hops
    }
}
