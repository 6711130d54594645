//! Thread block clusters (sm_90): where each block of a launch sits in its cluster.
//!
//! The blocks of one cluster run together on one worker (`launch::run_grid`), their shared
//! memories side by side in one allocation (rank r's at `BlockContext::cluster_shared +
//! r × shared_stride`), so that each block can reach the others' (distributed shared
//! memory). A launch without cluster dimensions has implicit clusters of one block.

use crate::launch::{Dim3, LaunchConfig};

/// Blocks a cluster may have: an sm_90 GPU's limit with non-portable sizes allowed (8 is
/// the portable size; ptxjit accepts both).
pub const MAX_CLUSTER_BLOCKS: u64 = 16;

/// What the `%cluster*` special registers read in one block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ClusterPlace {
    pub clusterid: [u32; 3],
    pub nclusterid: [u32; 3],
    pub cluster_ctaid: [u32; 3],
    pub cluster_nctaid: [u32; 3],
    pub cluster_ctarank: u32,
    pub cluster_nctarank: u32,
    /// 1 when the launch gave cluster dimensions (or the kernel requires them).
    pub is_explicit_cluster: u32,
}

impl LaunchConfig {
    /// The cluster dimensions, (1, 1, 1) for implicit clusters.
    pub fn cluster_dims(&self) -> Dim3 {
        self.cluster.unwrap_or(Dim3::new(1, 1, 1))
    }

    /// The block of rank `rank` in cluster number `cluster` (clusters and ranks both count x
    /// fastest): its `%ctaid` and its place in the cluster.
    pub fn cluster_block(&self, cluster: u64, rank: u32) -> ([u32; 3], ClusterPlace) {
        let c = self.cluster_dims();
        let g = self.grid;
        let dims = [c.x, c.y, c.z];
        let explicit = self.cluster.is_some() as u32;
        if dims == [1; 3] {
            // (On the path of every block of every launch: no divisions by one.)
            let ctaid = unravel(cluster, [g.x, g.y, g.z]);
            let place = ClusterPlace {
                clusterid: ctaid,
                nclusterid: [g.x, g.y, g.z],
                cluster_ctaid: [0; 3],
                cluster_nctaid: dims,
                cluster_ctarank: 0,
                cluster_nctarank: 1,
                is_explicit_cluster: explicit,
            };
            return (ctaid, place);
        }
        let n = [g.x / c.x, g.y / c.y, g.z / c.z];
        let clusterid = unravel(cluster, n);
        let within = unravel(rank as u64, dims);
        let ctaid = std::array::from_fn(|d| clusterid[d] * dims[d] + within[d]);
        let place = ClusterPlace {
            clusterid,
            nclusterid: n,
            cluster_ctaid: within,
            cluster_nctaid: dims,
            cluster_ctarank: rank,
            cluster_nctarank: c.count() as u32,
            is_explicit_cluster: explicit,
        };
        (ctaid, place)
    }

    /// The place of the block `ctaid` (for executors that go block by block).
    pub fn cluster_place(&self, ctaid: [u32; 3]) -> ClusterPlace {
        let c = self.cluster_dims();
        let g = self.grid;
        let dims = [c.x, c.y, c.z];
        let clusterid: [u32; 3] = std::array::from_fn(|d| ctaid[d] / dims[d]);
        let within: [u32; 3] = std::array::from_fn(|d| ctaid[d] % dims[d]);
        let (n0, n1) = ((g.x / c.x) as u64, (g.y / c.y) as u64);
        let cluster = clusterid[0] as u64 + n0 * (clusterid[1] as u64 + n1 * clusterid[2] as u64);
        let rank = within[0] + c.x * (within[1] + c.y * within[2]);
        self.cluster_block(cluster, rank).1
    }
}

/// The (x, y, z) of linear index `i` in a box of `dims`, x fastest.
fn unravel(i: u64, dims: [u32; 3]) -> [u32; 3] {
    let (x, xy) = (dims[0] as u64, dims[0] as u64 * dims[1] as u64);
    [
        (i % x) as u32,
        (i / x % dims[1] as u64) as u32,
        (i / xy) as u32,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(grid: (u32, u32, u32), cluster: Option<(u32, u32, u32)>) -> LaunchConfig {
        LaunchConfig {
            grid: grid.into(),
            block: Dim3::new(1, 1, 1),
            dynamic_shared_bytes: 0,
            cluster: cluster.map(Dim3::from),
            cooperative: false,
        }
    }

    #[test]
    fn a_launch_without_clusters_has_clusters_of_one_block() {
        let c = config((3, 2, 1), None);
        let (ctaid, place) = c.cluster_block(4, 0);
        assert_eq!(ctaid, [1, 1, 0]);
        assert_eq!(place.clusterid, [1, 1, 0]);
        assert_eq!(place.nclusterid, [3, 2, 1]);
        assert_eq!(place.cluster_nctaid, [1, 1, 1]);
        assert_eq!((place.cluster_ctarank, place.cluster_nctarank), (0, 1));
        assert_eq!(place.is_explicit_cluster, 0);
    }

    #[test]
    fn ranks_count_x_fastest_within_the_cluster() {
        let c = config((4, 4, 1), Some((2, 2, 1)));
        let (ctaid, place) = c.cluster_block(3, 3);
        // Cluster 3 is (1, 1); rank 3 is (1, 1) inside it.
        assert_eq!(ctaid, [3, 3, 0]);
        assert_eq!(place.cluster_ctaid, [1, 1, 0]);
        assert_eq!(place.nclusterid, [2, 2, 1]);
        assert_eq!((place.cluster_ctarank, place.cluster_nctarank), (3, 4));
        assert_eq!(place.is_explicit_cluster, 1);
        assert_eq!(c.cluster_place(ctaid), place);
    }
}
