//! Thread block clusters (sm_90): a case per rule of the ISA's clusters — the `%cluster*`
//! registers, the kernel directives, distributed shared memory (`mapa`, `getctarank`,
//! `ld/st/atom .shared::cluster`, generic pointers into another block) and
//! `barrier.cluster`.

mod common;

use ptxjit::{Arg, DeviceBuffer, Dim3, LaunchConfig, Module};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Kernel `k(.param .u64 out)` with `directives`, a shared `sh` (64 × u32) and `bar` (.b64):
/// `body` runs with `%t` = %tid.x, `%rank` = %cluster_ctarank, `%sh` = sh's shared address,
/// `%bar` = bar's, and `%o` = out + 4 × (its global thread index). Returns `words` u32.
fn run(
    directives: &str,
    body: &str,
    grid: u32,
    cluster: Option<u32>,
    threads: u32,
    words: usize,
) -> Result<Vec<u32>, String> {
    run_with_funcs("", directives, body, grid, cluster, threads, words)
}

/// [`run`] with the functions `funcs` declared before the kernel.
fn run_with_funcs(
    funcs: &str,
    directives: &str,
    body: &str,
    grid: u32,
    cluster: Option<u32>,
    threads: u32,
    words: usize,
) -> Result<Vec<u32>, String> {
    let ptx = format!(
        "{HEAD}{funcs}.visible .entry k(.param .u64 k_out){directives}\n{{\n\
         .reg .pred %p<8>;\n.reg .b32 %r<24>;\n.reg .b64 %rd<8>;\n\
         .reg .b32 %t, %rank, %sh, %bar;\n.reg .b64 %out, %o;\n\
         .shared .align 8 .b64 bar;\n.shared .align 4 .u32 sh[64];\n\
         ld.param.u64 %out, [k_out];\nmov.u32 %t, %tid.x;\nmov.u32 %rank, %cluster_ctarank;\n\
         mov.u32 %sh, sh;\nmov.u32 %bar, bar;\n\
         mov.u32 %r23, %ctaid.x;\nmov.u32 %r22, %ntid.x;\nmad.lo.u32 %r23, %r23, %r22, %t;\n\
         mul.wide.u32 %rd7, %r23, 4;\nadd.s64 %o, %out, %rd7;\n\
         {body}\nret;\n}}\n"
    );
    let config = LaunchConfig {
        grid: Dim3::new(grid, 1, 1),
        block: Dim3::new(threads, 1, 1),
        dynamic_shared_bytes: 0,
        cluster: cluster.map(Dim3::from),
        cooperative: false,
    };
    common::out_in_both_forms(&ptx, &config, &vec![0; words])
}

/// The whole cluster passes its barrier.
const CLUSTER_SYNC: &str = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n";

/// Each thread stores `%ctaid.x × 100 + %t` to `sh[%t]`.
const STORE_OWN: &str = "shl.b32 %r1, %t, 2;\nadd.u32 %r1, %sh, %r1;\nmov.u32 %r2, %ctaid.x;\n\
    mad.lo.u32 %r2, %r2, 100, %t;\nst.shared.u32 [%r1], %r2;\n";

/// Runs a kernel of one thread a block that stores the value of `special` (a u32 register).
fn special(special: &str, grid: (u32, u32, u32), cluster: Option<(u32, u32, u32)>) -> Vec<u32> {
    let ptx = format!(
        "{HEAD}.visible .entry k(.param .u64 k_out)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [k_out];\nmov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %nctaid.x;\n\
         mov.u32 %r3, %ctaid.y;\nmad.lo.u32 %r1, %r3, %r2, %r1;\nmul.wide.u32 %rd2, %r1, 4;\n\
         add.s64 %rd1, %rd1, %rd2;\nmov.u32 %r1, {special};\nst.global.u32 [%rd1], %r1;\nret;\n}}\n"
    );
    let module = Module::from_ptx(&ptx).unwrap();
    let blocks = (grid.0 * grid.1 * grid.2) as usize;
    let out = DeviceBuffer::from_slice(&vec![0u32; blocks]).unwrap();
    let config = LaunchConfig {
        grid: grid.into(),
        block: Dim3::new(1, 1, 1),
        dynamic_shared_bytes: 0,
        cluster: cluster.map(Dim3::from),
        cooperative: false,
    };
    let k = module.kernel("k").unwrap();
    k.launch_with(&config, &[Arg::buffer(&out)]).unwrap();
    out.to_vec()
}

#[test]
fn cluster_registers_give_each_block_its_place_in_its_cluster() {
    // A 4 × 2 grid of 2 × 2 clusters; blocks in row-major order of (x, y).
    let g = (4, 2, 1);
    let c = Some((2, 2, 1));
    assert_eq!(special("%cluster_ctarank", g, c), [0, 1, 0, 1, 2, 3, 2, 3]);
    assert_eq!(special("%cluster_ctaid.x", g, c), [0, 1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(special("%cluster_ctaid.y", g, c), [0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(special("%clusterid.x", g, c), [0, 0, 1, 1, 0, 0, 1, 1]);
    assert_eq!(special("%clusterid.y", g, c), [0; 8]);
    assert_eq!(special("%nclusterid.x", g, c), [2; 8]);
    assert_eq!(special("%cluster_nctaid.y", g, c), [2; 8]);
    assert_eq!(special("%cluster_nctarank", g, c), [4; 8]);
    assert_eq!(special("%is_explicit_cluster", g, c), [1; 8]);
}

#[test]
fn a_launch_without_cluster_dimensions_has_clusters_of_one_block() {
    let g = (3, 1, 1);
    assert_eq!(special("%cluster_ctarank", g, None), [0, 0, 0]);
    assert_eq!(special("%cluster_nctarank", g, None), [1, 1, 1]);
    assert_eq!(special("%clusterid.x", g, None), [0, 1, 2]);
    assert_eq!(special("%nclusterid.x", g, None), [3, 3, 3]);
    assert_eq!(special("%is_explicit_cluster", g, None), [0, 0, 0]);
}

#[test]
fn reqnctapercluster_gives_the_cluster_shape_of_every_launch() {
    let body = "mov.u32 %r1, %cluster_nctarank;\nst.global.u32 [%o], %r1;";
    let got = run("\n.reqnctapercluster 2, 1, 1", body, 4, None, 1, 4).unwrap();
    assert_eq!(got, [2; 4]);
    let same = run("\n.reqnctapercluster 2, 1, 1", body, 4, Some(2), 1, 4).unwrap();
    assert_eq!(same, [2; 4]);
}

#[test]
fn a_launch_with_another_shape_than_reqnctapercluster_is_an_error() {
    let err = run("\n.reqnctapercluster 2, 1, 1", "", 4, Some(4), 1, 4).unwrap_err();
    assert!(err.contains(".reqnctapercluster"), "{err}");
}

#[test]
fn explicitcluster_requires_cluster_dimensions() {
    let err = run("\n.explicitcluster", "", 4, None, 1, 4).unwrap_err();
    assert!(err.contains(".explicitcluster"), "{err}");
    assert!(run("\n.explicitcluster", "", 4, Some(2), 1, 4).is_ok());
}

#[test]
fn maxclusterrank_bounds_the_blocks_of_a_cluster() {
    let err = run("\n.maxclusterrank 2", "", 4, Some(4), 1, 4).unwrap_err();
    assert!(err.contains(".maxclusterrank"), "{err}");
}

#[test]
fn a_grid_that_is_not_whole_clusters_is_an_error() {
    let err = run("", "", 3, Some(2), 1, 4).unwrap_err();
    assert!(err.contains("not a whole number of clusters"), "{err}");
}

#[test]
fn a_cluster_has_at_most_16_blocks() {
    let err = run("", "", 32, Some(32), 1, 32).unwrap_err();
    assert!(err.contains("1 to 16 blocks"), "{err}");
    assert!(run("", "", 32, Some(16), 1, 32).is_ok());
}

#[test]
fn mapa_and_ld_shared_cluster_read_another_blocks_shared_memory() {
    // Pairs of blocks: each reads its partner's sh[%t] (16 clusters spread over the workers).
    let body = format!(
        "{STORE_OWN}{CLUSTER_SYNC}xor.b32 %r3, %rank, 1;\nshl.b32 %r4, %t, 2;\n\
         add.u32 %r4, %sh, %r4;\nmapa.shared::cluster.u32 %r5, %r4, %r3;\n\
         ld.shared::cluster.u32 %r6, [%r5];\n{CLUSTER_SYNC}st.global.u32 [%o], %r6;"
    );
    let got = run("", &body, 32, Some(2), 8, 256).unwrap();
    let want: Vec<u32> = (0..256u32)
        .map(|i| {
            let (block, t) = (i / 8, i % 8);
            (block ^ 1) * 100 + t
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_shared_cta_address_is_the_own_blocks_shared_cluster_address() {
    let body = format!(
        "{STORE_OWN}shl.b32 %r4, %t, 2;\nadd.u32 %r4, %sh, %r4;\n\
         ld.shared::cluster.u32 %r6, [%r4];\nst.global.u32 [%o], %r6;\n{CLUSTER_SYNC}"
    );
    let got = run("", &body, 2, Some(2), 4, 8).unwrap();
    assert_eq!(got, [0, 1, 2, 3, 100, 101, 102, 103]);
}

#[test]
fn mapa_of_a_generic_address_gives_a_generic_pointer_into_the_other_block() {
    let body = format!(
        "{STORE_OWN}{CLUSTER_SYNC}cvta.shared.u64 %rd1, sh;\nmul.wide.u32 %rd2, %t, 4;\n\
         add.s64 %rd1, %rd1, %rd2;\nxor.b32 %r3, %rank, 1;\nmapa.u64 %rd3, %rd1, %r3;\n\
         ld.u32 %r6, [%rd3];\n{CLUSTER_SYNC}st.global.u32 [%o], %r6;"
    );
    let got = run("", &body, 4, Some(2), 2, 8).unwrap();
    assert_eq!(got, [100, 101, 0, 1, 300, 301, 200, 201]);
}

#[test]
fn st_and_atom_shared_cluster_write_another_blocks_memory() {
    // Every thread (rank r, thread t) of a cluster of four adds r + 1 to rank 0's sh[0] and
    // stores 10r + t + 1 to rank 3's sh[16 + 4r + t]; after the barrier each reads its slot
    // back, and rank 0's thread 0 adds 1000 × the sum.
    let body = format!(
        "{CLUSTER_SYNC}mov.u32 %r9, 0;\nmapa.shared::cluster.u32 %r1, %sh, %r9;\n\
         add.u32 %r2, %rank, 1;\natom.shared::cluster.add.u32 %r3, [%r1], %r2;\n\
         mov.u32 %r9, 3;\nmapa.shared::cluster.u32 %r4, %sh, %r9;\n\
         mad.lo.u32 %r5, %rank, 4, %t;\nshl.b32 %r5, %r5, 2;\nadd.u32 %r4, %r4, %r5;\n\
         mad.lo.u32 %r6, %rank, 10, %t;\nadd.u32 %r6, %r6, 1;\n\
         st.shared::cluster.u32 [%r4+64], %r6;\n{CLUSTER_SYNC}\
         ld.shared::cluster.u32 %r7, [%r4+64];\nor.b32 %r8, %rank, %t;\n\
         setp.eq.u32 %p1, %r8, 0;\n@%p1 ld.shared.u32 %r8, [%sh];\n\
         @%p1 mad.lo.u32 %r7, %r8, 1000, %r7;\nst.global.u32 [%o], %r7;\n{CLUSTER_SYNC}"
    );
    let got = run("", &body, 4, Some(4), 4, 16).unwrap();
    let want: Vec<u32> = (0..16u32)
        .map(|i| {
            let (r, t) = (i / 4, i % 4);
            10 * r
                + t
                + 1
                + if i == 0 {
                    1000 * 4 * (1 + 2 + 3 + 4)
                } else {
                    0
                }
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn getctarank_names_the_block_an_address_points_into() {
    let body = "add.u32 %r1, %rank, 1;\nand.b32 %r1, %r1, 3;\n\
         mapa.shared::cluster.u32 %r2, %sh, %r1;\ngetctarank.shared::cluster.u32 %r3, %r2;\n\
         getctarank.shared::cluster.u32 %r4, %sh;\n\
         cvta.shared.u64 %rd1, sh;\nmapa.u64 %rd2, %rd1, %r1;\ngetctarank.u64 %r5, %rd2;\n\
         mad.lo.u32 %r3, %r4, 16, %r3;\nmad.lo.u32 %r3, %r5, 256, %r3;\nst.global.u32 [%o], %r3;";
    let got = run("", body, 4, Some(4), 1, 4).unwrap();
    let want: Vec<u32> = (0..4).map(|r| (r + 1) % 4 * 257 + r * 16).collect();
    assert_eq!(got, want);
}

#[test]
fn a_rank_outside_the_cluster_is_an_illegal_shared_address() {
    let body = "mov.u32 %r1, 5;\nmapa.shared::cluster.u32 %r2, %sh, %r1;\n\
         ld.shared::cluster.u32 %r3, [%r2];\nst.global.u32 [%o], %r3;";
    let err = run("", body, 2, Some(2), 1, 2).unwrap_err();
    assert!(err.contains("illegal shared address"), "{err}");
    assert!(err.contains("block of rank 5"), "{err}");
}

#[test]
fn barrier_cluster_wait_returns_once_every_thread_of_the_cluster_arrived() {
    // Between arrive and wait each block runs a barrier of its own; after the wait, every
    // block's stores before its arrival are visible to the others.
    let body = format!(
        "{STORE_OWN}barrier.cluster.arrive.release;\nbar.sync 0;\n\
         barrier.cluster.wait.acquire;\nadd.u32 %r3, %rank, 1;\nrem.u32 %r3, %r3, 3;\n\
         shl.b32 %r4, %t, 2;\nadd.u32 %r4, %sh, %r4;\nmapa.shared::cluster.u32 %r5, %r4, %r3;\n\
         ld.shared::cluster.u32 %r6, [%r5];\n{CLUSTER_SYNC}st.global.u32 [%o], %r6;"
    );
    let got = run("", &body, 3, Some(3), 64, 192).unwrap();
    let want: Vec<u32> = (0..192u32)
        .map(|i| (i / 64 + 1) % 3 * 100 + i % 64)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_cluster_wait_holds_until_late_threads_arrive() {
    // Rank 0 arrives at once; rank 1 first passes three block barriers, then stores and
    // arrives. Rank 0 must read what rank 1 stored.
    let body = format!(
        "setp.eq.u32 %p1, %rank, 0;\n@%p1 bra ARRIVE;\nbar.sync 0;\nbar.sync 0;\nbar.sync 0;\n\
         {STORE_OWN}ARRIVE:\n{CLUSTER_SYNC}mov.u32 %r9, 1;\nshl.b32 %r4, %t, 2;\n\
         add.u32 %r4, %sh, %r4;\nmapa.shared::cluster.u32 %r5, %r4, %r9;\n\
         ld.shared::cluster.u32 %r6, [%r5];\n{CLUSTER_SYNC}st.global.u32 [%o], %r6;"
    );
    let got = run("", &body, 2, Some(2), 2, 4).unwrap();
    assert_eq!(got, [100, 101, 100, 101]);
}

#[test]
fn a_cluster_wait_holds_until_late_threads_arrive_in_every_cluster_a_worker_runs() {
    // Clusters of two blocks of two threads, 32 clusters one after another on each worker:
    // rank 1 passes three block barriers, stores its thread's word to global memory and
    // arrives once; rank 0 arrives at once, then copies rank 1's words to its own. (A frame
    // that kept the last cluster's arrival would let rank 0 through early.)
    let body = "setp.eq.u32 %p1, %rank, 0;\n@%p1 bra ARRIVE;\nbar.sync 0;\nbar.sync 0;\nbar.sync 0;\n\
         mov.u32 %r2, %ctaid.x;\nmad.lo.u32 %r2, %r2, 100, %t;\nst.global.u32 [%o], %r2;\n\
         ARRIVE:\nbarrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n\
         @!%p1 bra END;\nld.global.u32 %r3, [%o+8];\nst.global.u32 [%o], %r3;\nEND:";
    let got = run("", body, 128, Some(2), 2, 256).unwrap();
    let want: Vec<u32> = (0..128)
        .flat_map(|b| [0, 1].map(|t| (b | 1) * 100 + t))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_cluster_wait_after_a_warp_collective_holds_until_late_threads_arrive() {
    // As above, after a `shfl.sync` of every lane, with rank 1 late by two more: the wait is
    // no warp collective, whatever membermask the warp's last collective gave.
    let body = format!(
        "shfl.sync.idx.b32 %r10, %t, 0, 31, -1;\nsetp.eq.u32 %p1, %rank, 0;\n@%p1 bra ARRIVE;\n\
         shfl.sync.idx.b32 %r10, %t, 0, 31, -1;\nshfl.sync.idx.b32 %r10, %t, 0, 31, -1;\n{STORE_OWN}ARRIVE:\n{CLUSTER_SYNC}mov.u32 %r9, 1;\n\
         shl.b32 %r4, %t, 2;\nadd.u32 %r4, %sh, %r4;\nmapa.shared::cluster.u32 %r5, %r4, %r9;\n\
         ld.shared::cluster.u32 %r6, [%r5];\n{CLUSTER_SYNC}st.global.u32 [%o], %r6;"
    );
    let got = run("", &body, 2, Some(2), 2, 4).unwrap();
    assert_eq!(got, [100, 101, 100, 101]);
}

#[test]
fn the_cluster_barrier_can_be_passed_again_and_again() {
    // Rank r adds r + 1 to rank 0's sh[1] once per phase, ten phases; the sum is exact only
    // if every phase separates the additions from the reads.
    let body = "mov.u32 %r1, 0;\nmov.u32 %r9, 0;\nmapa.shared::cluster.u32 %r2, %sh, %r9;\n\
         LOOP:\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nsetp.ne.u32 %p1, %t, 0;\n\
         @%p1 bra SKIP;\nld.shared::cluster.u32 %r3, [%r2+4];\nadd.u32 %r4, %rank, 1;\n\
         add.u32 %r3, %r3, %r4;\nst.shared::cluster.u32 [%r2+4], %r3;\nSKIP:\n\
         barrier.cluster.arrive;\nbarrier.cluster.wait;\nld.shared::cluster.u32 %r5, [%r2+4];\n\
         add.u32 %r1, %r1, 1;\nsetp.lt.u32 %p2, %r1, 10;\n@%p2 bra LOOP;\n\
         st.global.u32 [%o], %r5;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;";
    // Blocks add one at a time (thread 0 of each block): sequential within a phase here, as
    // any order is; the sum after ten phases is 10 × (1 + 2 + 3 + 4).
    let got = run("", body, 4, Some(4), 2, 8).unwrap();
    assert_eq!(got, [100; 8]);
}

#[test]
fn exited_threads_do_not_hold_up_the_cluster_barrier() {
    // Odd threads exit at once; the even ones pass two cluster barriers.
    let body = format!(
        "and.b32 %r1, %t, 1;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 exit;\n{CLUSTER_SYNC}{CLUSTER_SYNC}\
         st.global.u32 [%o], 7;"
    );
    let got = run("", &body, 2, Some(2), 4, 8).unwrap();
    assert_eq!(got, [7, 0, 7, 0, 7, 0, 7, 0]);
}

#[test]
fn a_cluster_wait_that_can_never_complete_is_a_deadlock_error() {
    // Rank 1 waits without arriving: the phase can never complete.
    let body = "setp.eq.u32 %p1, %rank, 0;\n@%p1 barrier.cluster.arrive;\nbarrier.cluster.wait;";
    let err = run("", body, 2, Some(2), 1, 2).unwrap_err();
    assert!(err.contains("barrier that can never complete"), "{err}");
    assert!(err.contains("barrier.cluster.wait"), "{err}");
}

#[test]
fn a_remote_mbarrier_arrive_completes_a_phase_in_another_block() {
    // Rank 0 initializes its mbarrier for one arrival and waits on phase 0; rank 1 writes
    // into rank 0's sh and arrives on rank 0's mbarrier.
    let body = "setp.eq.u32 %p1, %rank, 0;\n@%p1 mbarrier.init.shared::cta.b64 [%bar], 1;\n\
         fence.mbarrier_init.release.cluster;\nbarrier.cluster.arrive.relaxed;\n\
         barrier.cluster.wait;\n@%p1 bra WAIT;\nmov.u32 %r9, 0;\n\
         mapa.shared::cluster.u32 %r1, %sh, %r9;\nst.shared::cluster.u32 [%r1], 42;\n\
         mapa.shared::cluster.u32 %r2, %bar, %r9;\n\
         mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r2];\nbra DONE;\n\
         WAIT:\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p2, [%bar], 0;\n\
         @!%p2 bra WAIT;\nld.shared.u32 %r3, [%sh];\nst.global.u32 [%o], %r3;\n\
         DONE:\nbarrier.cluster.arrive;\nbarrier.cluster.wait;";
    let got = run("", body, 2, Some(2), 1, 2).unwrap();
    assert_eq!(got, [42, 0]);
}

#[test]
fn a_cluster_barrier_arrival_in_a_called_function_counts() {
    // Each block stores to its own `sh`, arrives in a called function, waits, and then reads
    // the other block's: the arrival inside the callee completes the phase.
    let funcs = ".func arrive()\n{\nbarrier.cluster.arrive;\nret;\n}\n";
    let body = format!(
        "{STORE_OWN}call.uni arrive, ();\nbarrier.cluster.wait;\nxor.b32 %r3, %rank, 1;\n\
         mapa.shared::cluster.u32 %r4, %sh, %r3;\nld.shared::cluster.u32 %r5, [%r4];\n\
         st.global.u32 [%o], %r5;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;"
    );
    let got = run_with_funcs(funcs, "", &body, 2, Some(2), 1, 2).unwrap();
    assert_eq!(got, [100, 0]);
}

#[test]
fn a_plain_shared_fault_far_out_is_not_described_as_a_cluster_address() {
    let body = "mov.u32 %r1, 0x2000000;\nld.shared.u32 %r3, [%r1];\nst.global.u32 [%o], %r3;";
    let err = run("", body, 2, Some(2), 1, 2).unwrap_err();
    assert!(err.contains("illegal shared address 0x2000000"), "{err}");
    assert!(!err.contains(".shared::cluster"), "{err}");
}
