//! Static shortest-path routing: for each (node, destination) the outgoing link direction,
//! by fewest hops; ties go to the link declared first, so routes are deterministic.

use std::collections::VecDeque;
use tcplab_core::{LinkId, NodeId};

/// Next-hop table: `next[node][dst]` is the link direction to take from `node` towards `dst`.
#[derive(Clone, Debug)]
pub struct RoutingTable {
    n: usize,
    next: Vec<Option<LinkId>>,
}

impl RoutingTable {
    /// `edges[i] = (from, to)` for directed link `i`.
    pub fn shortest_paths(nodes: usize, edges: &[(NodeId, NodeId)]) -> Self {
        let mut next = vec![None; nodes * nodes];
        // Reverse adjacency: for a BFS from each destination towards its sources.
        let mut incoming: Vec<Vec<(LinkId, NodeId)>> = vec![Vec::new(); nodes];
        for (id, &(from, to)) in edges.iter().enumerate() {
            incoming[to as usize].push((id as LinkId, from));
        }
        for dst in 0..nodes {
            let mut dist = vec![u32::MAX; nodes];
            dist[dst] = 0;
            let mut frontier = VecDeque::from([dst]);
            while let Some(v) = frontier.pop_front() {
                for &(link, from) in &incoming[v] {
                    let u = from as usize;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        next[u * nodes + dst] = Some(link);
                        frontier.push_back(u);
                    } else if dist[u] == dist[v] + 1 && next[u * nodes + dst].is_some_and(|l| link < l) {
                        next[u * nodes + dst] = Some(link);
                    }
                }
            }
        }
        RoutingTable { n: nodes, next }
    }

    pub fn next_hop(&self, node: NodeId, dst: NodeId) -> Option<LinkId> {
        self.next[node as usize * self.n + dst as usize]
    }

    pub fn reachable(&self, src: NodeId, dst: NodeId) -> bool {
        src == dst || self.next_hop(src, dst).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_take_fewest_hops_with_deterministic_ties() {
        // 0 - 1 - 3 and 0 - 2 - 3 (two equal paths), plus 3 - 4; links as two directions each.
        let full_duplex = [(0, 1), (1, 3), (0, 2), (2, 3), (3, 4)];
        let edges: Vec<(u32, u32)> = full_duplex.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        let rt = RoutingTable::shortest_paths(5, &edges);
        assert_eq!(rt.next_hop(0, 4), Some(0)); // via 1: declared first
        assert_eq!(rt.next_hop(1, 4), Some(2));
        assert_eq!(rt.next_hop(4, 0), Some(9));
        assert_eq!(rt.next_hop(3, 0), Some(3)); // 3->1 declared before 3->2
        assert!(rt.reachable(2, 4));
    }

    #[test]
    fn disconnected_nodes_have_no_route() {
        let rt = RoutingTable::shortest_paths(3, &[(0, 1), (1, 0)]);
        assert!(!rt.reachable(0, 2));
        assert_eq!(rt.next_hop(2, 0), None);
    }
}
