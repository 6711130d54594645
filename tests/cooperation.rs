//! Threads that cooperate: barriers, warp collectives and atomics, one rule per test.

use ptxjit::frontend::checked::ShflMode;
use ptxjit::sync::shfl_source;
mod common;

use ptxjit::{Arg, DeviceBuffer, Dim3, Module};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Kernel `k(.param .u64 out)`: `body` runs with `%out` = the buffer, `%t` = %tid.x, `%n` =
/// %ntid.x, `%lane` = %laneid, and `%o` = out + 4*(global thread id); returns the buffer as u32.
fn run(
    decls: &str,
    body: &str,
    words: usize,
    grid: impl Into<Dim3>,
    block: impl Into<Dim3>,
) -> Result<Vec<u32>, String> {
    let ptx = format!(
        "{HEAD}{decls}\n.visible .entry k(.param .u64 k_out)\n{{\n\
         .reg .pred %p<8>;\n.reg .b32 %r<24>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<8>;\n.reg .b16 %h<8>;\n\
         .reg .b32 %t, %n, %lane, %g;\n.reg .b64 %out, %o;\n\
         ld.param.u64 %out, [k_out];\nmov.u32 %t, %tid.x;\nmov.u32 %n, %ntid.x;\nmov.u32 %lane, %laneid;\n\
         mov.u32 %g, %ctaid.x;\nmad.lo.u32 %g, %g, %n, %t;\nmul.wide.u32 %rd7, %g, 4;\nadd.s64 %o, %out, %rd7;\n\
         {body}\nret;\n}}\n"
    );
    common::out_in_both_forms(&ptx, &common::plain_launch(grid, block), &vec![0; words])
}

#[test]
fn barrier_inside_a_loop_with_1024_threads() {
    // Each of 10 steps: write tid+step to shared, barrier, read the neighbour's, barrier.
    let got = run(
        ".shared .align 4 .u32 sh[1024];",
        "mov.u32 %r1, 0;\nmov.u32 %r2, 0;\nshl.b32 %r3, %t, 2;\nmov.u32 %r4, sh;\nadd.u32 %r5, %r4, %r3;\n\
         add.u32 %r6, %t, 1;\nrem.u32 %r6, %r6, %n;\nshl.b32 %r6, %r6, 2;\nadd.u32 %r6, %r4, %r6;\n\
         LOOP:\nadd.u32 %r7, %t, %r1;\nst.shared.u32 [%r5], %r7;\nbar.sync 0;\nld.shared.u32 %r8, [%r6];\n\
         add.u32 %r2, %r2, %r8;\nbarrier.sync.aligned 0;\nadd.u32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, 10;\n@%p1 bra LOOP;\n\
         st.global.u32 [%o], %r2;",
        2048,
        2,
        1024,
    )
    .unwrap();
    for (i, v) in got.iter().enumerate() {
        let next = ((i % 1024) + 1) % 1024;
        assert_eq!(*v as usize, 10 * next + 45, "thread {i}");
    }
}

#[test]
fn exited_threads_do_not_hold_up_a_barrier() {
    // Threads >= 40 return early; the others still pass the barrier (ISA: exit releases
    // barriers the exiting threads were holding up).
    let got = run(
        ".shared .align 4 .u32 sh[64];",
        "setp.ge.u32 %p1, %t, 40;\n@%p1 ret;\nmov.u32 %r4, sh;\nshl.b32 %r3, %t, 2;\nadd.u32 %r5, %r4, %r3;\n\
         st.shared.u32 [%r5], %t;\nbar.sync 0;\nsub.u32 %r6, 39, %t;\nshl.b32 %r6, %r6, 2;\nadd.u32 %r6, %r4, %r6;\n\
         ld.shared.u32 %r7, [%r6];\nst.global.u32 [%o], %r7;",
        64,
        1,
        64,
    )
    .unwrap();
    let want: Vec<u32> = (0..64).map(|t| if t < 40 { 39 - t } else { 0 }).collect();
    assert_eq!(got, want);
}

/// The error of `body` on a block of 64 threads, which must be a barrier that can never
/// complete.
fn never_completing_barrier(body: &str) -> String {
    let err = run("", body, 64, 1, 64).unwrap_err();
    assert!(
        err.starts_with("kernel 'k': barrier that can never complete"),
        "{err}"
    );
    err
}

#[test]
fn a_barrier_some_threads_never_reach_is_an_error_naming_kernel_and_line() {
    // Half the threads wait at barrier 0, the other half at barrier 1: neither completes.
    let err =
        never_completing_barrier("setp.lt.u32 %p1, %t, 32;\n@%p1 bar.sync 0;\n@!%p1 bar.sync 1;");
    assert!(err.contains("at <ptx>:"), "{err}");
}

#[test]
fn threads_at_one_bar_sync_for_all_threads_naming_different_barriers_never_complete() {
    // Each warp names its own barrier, and each barrier waits for all 64 threads.
    never_completing_barrier("shr.u32 %r1, %t, 5;\nbar.sync %r1;");
}

#[test]
fn a_bar_sync_counting_more_threads_than_the_block_has_never_completes() {
    never_completing_barrier("bar.sync 0, 96;");
}

#[test]
fn a_bar_sync_counting_fewer_threads_than_wait_releases_them_all() {
    // Each warp names its own barrier, counting one warp.
    let got = run(
        "",
        "shr.u32 %r1, %t, 5;\nbar.sync %r1, 32;\nst.global.u32 [%o], %r1;",
        64,
        1,
        64,
    )
    .unwrap();
    assert_eq!(got, [[0; 32], [1; 32]].concat());
}

#[test]
fn lanes_released_apart_from_a_barrier_go_on_with_every_register() {
    // Threads 0–31 wait together, each eight at barrier 0 or 1 in turn. Threads 32–47 make
    // up barrier 0's count, but barrier 1's other threads (64–79) first pass barrier 2: so
    // barrier 0 completes a round before barrier 1, and the lanes that waited together go
    // on apart, each with the values it had, uniform (%r2), lane-affine (%r3) or neither
    // (%r1).
    let got = run(
        "",
        "shr.u32 %r1, %t, 3;\nand.b32 %r1, %r1, 1;\nmul.lo.u32 %r2, %n, 3;\nshl.b32 %r3, %t, 2;\n\
         setp.lt.u32 %p1, %t, 32;\n@!%p1 bra OTHERS;\nbar.sync %r1, 32;\nbra DONE;\n\
         OTHERS:\nsetp.lt.u32 %p2, %t, 64;\n@%p2 bra MIDDLE;\nbar.sync 2, 32;\n\
         setp.lt.u32 %p3, %t, 80;\n@!%p3 bra DONE;\nbar.sync 1, 32;\nbra DONE;\n\
         MIDDLE:\nsetp.lt.u32 %p4, %t, 48;\n@!%p4 bra DONE;\nbar.sync 0, 32;\n\
         DONE:\nadd.u32 %r4, %r2, %r3;\nadd.u32 %r4, %r4, %r1;\nst.global.u32 [%o], %r4;",
        96,
        1,
        96,
    )
    .unwrap();
    let want: Vec<u32> = (0..96).map(|t| 288 + 4 * t + (t >> 3 & 1)).collect();
    assert_eq!(got, want);
}

#[test]
fn threads_at_different_bar_sync_instructions_are_a_divergent_barrier() {
    let err = run(
        "",
        "setp.lt.u32 %p1, %t, 16;\n@%p1 bra A;\nbar.sync 0;\nbra B;\nA:\nbar.sync 0;\nB:",
        32,
        1,
        32,
    )
    .unwrap_err();
    assert!(err.starts_with("kernel 'k': divergent barrier"), "{err}");
}

/// Each `shfl.sync` mode and its name.
const SHFL_MODES: [(ShflMode, &str); 4] = [
    (ShflMode::Up, "up"),
    (ShflMode::Down, "down"),
    (ShflMode::Bfly, "bfly"),
    (ShflMode::Idx, "idx"),
];

#[test]
fn shfl_every_mode_with_predicate_and_segments_matches_the_isa() {
    for (mode, m) in SHFL_MODES {
        for (b, c) in [
            (1u32, 0x1fu32),
            (5, 0x1f),
            (3, 0),
            (2, 0x181f),
            (6, 0x1c1f),
            (17, 0x101f),
        ] {
            let c = if mode == ShflMode::Up { c & !0x1f } else { c };
            let got = run(
                "",
                &format!(
                    "mul.lo.u32 %r1, %g, 7;\nadd.u32 %r1, %r1, 100;\n\
                     shfl.sync.{m}.b32 %r2|%p1, %r1, {b}, {c}, -1;\nselp.u32 %r3, 65536, 0, %p1;\n\
                     or.b32 %r2, %r2, %r3;\nst.global.u32 [%o], %r2;"
                ),
                64,
                1,
                64,
            )
            .unwrap();
            for (i, v) in got.iter().enumerate() {
                let lane = (i % 32) as u32;
                let (src, p) = shfl_source(mode, lane, b, c);
                let src_thread = (i as u32 / 32) * 32 + src;
                let want = (src_thread * 7 + 100) | if p { 65536 } else { 0 };
                assert_eq!(*v, want, "shfl.{m} b={b} c={c:#x} thread {i}");
            }
        }
    }
}

#[test]
fn shfl_with_operands_in_registers_matches_the_isa() {
    // b and c the same in every lane but known only at launch (from %ntid.x = 64), b
    // different in every lane, and membermasks in registers: all of every warp's lanes.
    for (mode, m) in SHFL_MODES {
        for (b, c) in [(5u32, 0x1fu32), (2, 0x181f), (6, 0x1c1f), (3, 0)] {
            let c = if mode == ShflMode::Up { c & !0x1f } else { c };
            let got = run(
                "",
                &format!(
                    "mul.lo.u32 %r1, %g, 7;\nadd.u32 %r1, %r1, 100;\n\
                     add.u32 %r4, %n, {b_from_n};\nadd.u32 %r5, %n, {c_from_n};\n\
                     mul.lo.u32 %r6, %lane, 5;\nadd.u32 %r7, %n, -65;\nmov.u32 %r8, -1;\n\
                     shfl.sync.{m}.b32 %r2|%p1, %r1, %r4, %r5, %r7;\nselp.u32 %r3, 65536, 0, %p1;\n\
                     or.b32 %r2, %r2, %r3;\nst.global.u32 [%o], %r2;\n\
                     shfl.sync.{m}.b32 %r2|%p1, %r1, %r6, %r5, %r8;\nselp.u32 %r3, 65536, 0, %p1;\n\
                     or.b32 %r2, %r2, %r3;\nst.global.u32 [%o+256], %r2;",
                    b_from_n = b.wrapping_sub(64) as i32,
                    c_from_n = c.wrapping_sub(64) as i32,
                ),
                128,
                1,
                64,
            )
            .unwrap();
            for (i, v) in got.iter().enumerate() {
                let t = i as u32 % 64;
                let lane = t % 32;
                let b = if i < 64 { b } else { lane * 5 };
                let (src, p) = shfl_source(mode, lane, b, c);
                let want = ((t - lane + src) * 7 + 100) | if p { 65536 } else { 0 };
                assert_eq!(*v, want, "shfl.{m} b={b} c={c:#x} word {i}");
            }
        }
    }
}

#[test]
fn votes_redux_and_elect_over_whole_warps_give_each_warp_its_own_result() {
    // Two warps: p = (t % 3 == 0) for the ballot; t < 40 for all/any/uni (every lane of warp
    // 0, some of warp 1); values 3t - 50 for the reductions.
    let ops = [
        "add.s32", "min.s32", "max.s32", "min.u32", "max.u32", "and.b32", "or.b32", "xor.b32",
    ];
    let mut body = String::from(
        "rem.u32 %r1, %t, 3;\nsetp.eq.u32 %p1, %r1, 0;\nvote.sync.ballot.b32 %r2, %p1, -1;\n\
         st.global.u32 [%o], %r2;\nsetp.lt.u32 %p2, %t, 40;\n\
         vote.sync.all.pred %p3, %p2, -1;\nvote.sync.any.pred %p4, !%p2, -1;\n\
         vote.sync.uni.pred %p5, %p2, -1;\nselp.u32 %r3, 1, 0, %p3;\nselp.u32 %r4, 2, 0, %p4;\n\
         selp.u32 %r5, 4, 0, %p5;\nor.b32 %r3, %r3, %r4;\nor.b32 %r3, %r3, %r5;\n\
         elect.sync %r6|%p6, -1;\nselp.u32 %r7, 8, 0, %p6;\nor.b32 %r3, %r3, %r7;\n\
         shl.b32 %r6, %r6, 4;\nor.b32 %r3, %r3, %r6;\nactivemask.b32 %r8;\n\
         st.global.u32 [%o+256], %r3;\nst.global.u32 [%o+512], %r8;\n\
         mul.lo.u32 %r9, %t, 3;\nadd.u32 %r9, %r9, -50;\n",
    );
    for (k, op) in ops.iter().enumerate() {
        body += &format!(
            "redux.sync.{op} %r10, %r9, -1;\nst.global.u32 [%o+{}], %r10;\n",
            768 + 256 * k
        );
    }
    let got = run("", &body, 64 * 11, 1, 64).unwrap();
    for t in 0..64u32 {
        let warp: Vec<u32> = (t / 32 * 32..t / 32 * 32 + 32).collect();
        let ballot = warp
            .iter()
            .filter(|&&u| u % 3 == 0)
            .fold(0u32, |m, &u| m | 1 << (u % 32));
        assert_eq!(got[t as usize], ballot, "ballot, thread {t}");
        let all = warp.iter().all(|&u| u < 40);
        let any_not = warp.iter().any(|&u| u >= 40);
        let uni = all || warp.iter().all(|&u| u >= 40);
        let leader = t % 32 == 0;
        let votes = all as u32 | (any_not as u32) << 1 | (uni as u32) << 2 | (leader as u32) << 3;
        assert_eq!(got[64 + t as usize], votes, "votes and elect, thread {t}");
        assert_eq!(got[128 + t as usize], u32::MAX, "activemask, thread {t}");
        let values: Vec<i32> = warp.iter().map(|&u| 3 * u as i32 - 50).collect();
        let want = [
            values.iter().sum::<i32>() as u32,
            *values.iter().min().unwrap() as u32,
            *values.iter().max().unwrap() as u32,
            values.iter().map(|&v| v as u32).min().unwrap(),
            values.iter().map(|&v| v as u32).max().unwrap(),
            values.iter().fold(!0, |m, &v| m & v as u32),
            values.iter().fold(0, |m, &v| m | v as u32),
            values.iter().fold(0, |m, &v| m ^ v as u32),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(got[192 + 64 * k + t as usize], *w, "{}, thread {t}", ops[k]);
        }
    }
}

/// Two warps load 8×8 b16 matrices with `ldmatrix` from rows their lanes name, row
/// `(5 × lane + 7 × warp) % 128 + shift` of a shared array whose half j holds j; the
/// registers of x4, x2.trans and x1 (through a generic address) are stored as planes of 64
/// words.
fn ldmatrix_planes(shift: u32) -> Result<Vec<u32>, String> {
    run(
        ".shared .align 16 .b8 sh[2048];",
        &format!(
            "mov.u32 %r1, 0;\nFILL:\nshl.b32 %r2, %t, 3;\nadd.u32 %r2, %r2, %r1;\nshl.b32 %r3, %r2, 1;\n\
             add.u32 %r4, %r3, 1;\nshl.b32 %r4, %r4, 16;\nor.b32 %r4, %r4, %r3;\nshl.b32 %r5, %r2, 2;\n\
             mov.u32 %r6, sh;\nadd.u32 %r5, %r5, %r6;\nst.shared.u32 [%r5], %r4;\nadd.u32 %r1, %r1, 1;\n\
             setp.lt.u32 %p1, %r1, 8;\n@%p1 bra FILL;\nbar.sync 0;\n\
             shr.u32 %r7, %t, 5;\nmul.lo.u32 %r7, %r7, 7;\nmad.lo.u32 %r7, %lane, 5, %r7;\n\
             rem.u32 %r7, %r7, 128;\nadd.u32 %r7, %r7, {shift};\nshl.b32 %r7, %r7, 4;\nadd.u32 %r7, %r7, %r6;\n\
             ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r10, %r11, %r12, %r13}}, [%r7];\n\
             ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%r14, %r15}}, [%r7];\n\
             cvt.u64.u32 %rd1, %r7;\ncvta.shared.u64 %rd1, %rd1;\n\
             ldmatrix.sync.aligned.m8n8.x1.b16 {{%r16}}, [%rd1];\n\
             st.global.u32 [%o], %r10;\nst.global.u32 [%o+256], %r11;\nst.global.u32 [%o+512], %r12;\n\
             st.global.u32 [%o+768], %r13;\nst.global.u32 [%o+1024], %r14;\n\
             st.global.u32 [%o+1280], %r15;\nst.global.u32 [%o+1536], %r16;"
        ),
        64 * 7,
        1,
        64,
    )
}

#[test]
fn ldmatrix_gives_each_lane_its_fragment_of_the_rows_its_warp_names() {
    let got = ldmatrix_planes(0).unwrap();
    for t in 0..64u32 {
        let (warp, lane) = (t / 32, t % 32);
        let row = |l: u32| (5 * l + 7 * warp) % 128;
        // Half (r, c) of matrix m: element c of the row lane 8m + r names.
        let half = |m: u32, r: u32, c: u32| 8 * row(8 * m + r) + c;
        let (g, q) = (lane / 4, lane % 4);
        let word = |m: u32, trans: bool| match trans {
            false => half(m, g, 2 * q) | half(m, g, 2 * q + 1) << 16,
            true => half(m, 2 * q, g) | half(m, 2 * q + 1, g) << 16,
        };
        let want = [
            word(0, false),
            word(1, false),
            word(2, false),
            word(3, false),
            word(0, true),
            word(1, true),
            word(0, false),
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(got[64 * k + t as usize], *w, "register {k}, thread {t}");
        }
    }
}

#[test]
fn ldmatrix_of_a_row_outside_shared_memory_is_an_illegal_address() {
    // Lane 24 of warp 1 ((5 × 24 + 7) % 128 + 1 = 128) names the row past the array's end.
    let err = ldmatrix_planes(1).unwrap_err();
    assert!(
        err.contains("illegal shared address 0x800 (16-byte load, thread 56;"),
        "{err}"
    );
}

#[test]
fn lanes_that_reach_a_shuffle_apart_go_on_alone_and_regroup_at_the_next_barrier() {
    // Odd lanes add 1000 before the shuffles, so the group diverges and its lanes reach the
    // first shuffle one at a time; after the barrier they shuffle together again.
    let got = run(
        "",
        "mov.u32 %r1, %t;\nand.b32 %r2, %t, 1;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 bra EVEN;\n\
         add.u32 %r1, %r1, 1000;\nEVEN:\nshfl.sync.bfly.b32 %r3, %r1, 1, 31, -1;\n\
         shfl.sync.down.b32 %r4, %r3, 2, 31, -1;\nadd.u32 %r5, %r3, %r4;\nbar.sync 0;\n\
         shfl.sync.idx.b32 %r6, %r5, 3, 31, -1;\nst.global.u32 [%o], %r6;\n\
         st.global.u32 [%o+256], %r5;",
        128,
        1,
        64,
    )
    .unwrap();
    let r1 = |t: u32| t + if t % 2 == 1 { 1000 } else { 0 };
    let r3 = |t: u32| r1(t ^ 1);
    let r5 = |t: u32| r3(t) + if t % 32 + 2 < 32 { r3(t + 2) } else { r3(t) };
    for t in 0..64u32 {
        assert_eq!(got[64 + t as usize], r5(t), "thread {t}");
        assert_eq!(got[t as usize], r5(t / 32 * 32 + 3), "thread {t}");
    }
}

#[test]
fn a_block_reduction_with_a_lane_of_each_warp_between_shuffles_and_a_barrier() {
    // nvcc's: each warp sums by shuffles (the full membermask in a register), its lane 0
    // stores the sum, and after the barrier warp 0 sums the warps' sums, its lanes past the
    // warps' count with 0. Lanes of a group that skip the store or the load do not wait.
    let down = |r: &str| {
        [16, 8, 4, 2, 1]
            .map(|d| {
                format!("shfl.sync.down.b32 %r5, {r}, {d}, 31, %r13;\nadd.u32 {r}, {r}, %r5;\n")
            })
            .concat()
    };
    let body = format!(
        "mov.u32 %r13, -1;\nshr.u32 %r3, %t, 5;\nmad.lo.u32 %r4, %t, 3, 1;\n{}\
         setp.ne.u32 %p1, %lane, 0;\n@%p1 bra STORED;\nshl.b32 %r6, %r3, 2;\nmov.u32 %r7, sums;\n\
         add.u32 %r7, %r7, %r6;\nst.shared.u32 [%r7], %r4;\nSTORED:\nbar.sync 0;\n\
         setp.ne.u32 %p2, %r3, 0;\n@%p2 bra END;\nmov.u32 %r8, 0;\nshr.u32 %r9, %n, 5;\n\
         setp.ge.u32 %p3, %lane, %r9;\n@%p3 bra LOADED;\nshl.b32 %r6, %lane, 2;\n\
         mov.u32 %r7, sums;\nadd.u32 %r7, %r7, %r6;\nld.shared.u32 %r8, [%r7];\nLOADED:\n{}\
         @%p1 bra END;\nmul.wide.u32 %rd1, %ctaid.x, 4;\nadd.s64 %rd1, %out, %rd1;\n\
         st.global.u32 [%rd1], %r8;\nEND:",
        down("%r4"),
        down("%r8")
    );
    let got = run(".shared .align 4 .b32 sums[8];", &body, 2, 2, 256).unwrap();
    let sum: u32 = (0..256).map(|t| 3 * t + 1).sum();
    assert_eq!(got, [sum, sum]);
}

#[test]
fn votes_ballot_and_match_over_a_warp() {
    let got = run(
        "",
        "and.b32 %r1, %t, 5;\nsetp.ne.u32 %p1, %r1, 0;\n\
         vote.sync.ballot.b32 %r2, %p1, -1;\n\
         vote.sync.any.pred %p2, %p1, -1;\nvote.sync.all.pred %p3, %p1, -1;\nsetp.lt.u32 %p5, %t, 100;\nvote.sync.uni.pred %p4, %p5, -1;\n\
         selp.u32 %r3, 1, 0, %p2;\nselp.u32 %r4, 2, 0, %p3;\nselp.u32 %r5, 4, 0, %p4;\n\
         or.b32 %r3, %r3, %r4;\nor.b32 %r3, %r3, %r5;\n\
         setp.eq.u32 %p7, %lane, 1;\n@%p7 bra MASKED;\nsetp.eq.u32 %p7, %lane, 3;\n@%p7 bra MASKED;\nbra MATCH;\n\
         MASKED:\nvote.sync.any.pred %p6, !%p1, 0x0000000A;\nselp.u32 %r6, 8, 0, %p6;\nor.b32 %r3, %r3, %r6;\n\
         MATCH:\nshr.u32 %r7, %t, 2;\nmatch.any.sync.b32 %r8, %r7, -1;\n\
         st.global.u32 [%o], %r2;\nst.global.u32 [%o+128], %r3;\nst.global.u32 [%o+256], %r8;",
        96,
        1,
        32,
    )
    .unwrap();
    let ballot = (0..32u32).filter(|t| t & 5 != 0).fold(0, |m, t| m | 1 << t);
    for t in 0..32usize {
        assert_eq!(got[t], ballot);
        // any = 1, all = 0, uni = 4; lanes 1 and 3 also ran a vote over just the two of them
        // (both have bit 0 set, so any of !p is false → no 8).
        assert_eq!(got[32 + t], 1 | 4, "thread {t}");
        assert_eq!(got[64 + t], 0xF << (t / 4 * 4), "match thread {t}");
    }
}

#[test]
fn a_register_written_before_a_shuffle_a_group_computes_itself_is_saved_at_the_next_barrier() {
    // %r5 passes the first barrier, is written, then a shuffle whose membermask register
    // (uniform, every lane, computed) the group computes itself, then another barrier.
    let got = run(
        "",
        "mov.u32 %r5, %t;\nor.b32 %r7, %n, 0xFFFFFFFF;\nbar.sync 0;\nadd.u32 %r5, %r5, 100;\n\
         shfl.sync.idx.b32 %r6, %t, 0, 31, %r7;\nbar.sync 0;\nadd.u32 %r5, %r5, %r6;\n\
         st.global.u32 [%o], %r5;",
        64,
        1,
        64,
    )
    .unwrap();
    let want: Vec<u32> = (0..64).map(|t| t + 100 + (t & !31)).collect();
    assert_eq!(got, want);
}

#[test]
fn a_ballot_of_half_warp_membermasks_counts_each_half_apart() {
    // Every lane at the one vote, lanes 0–15 naming themselves, lanes 16–31 themselves.
    let got = run(
        "",
        "setp.lt.u32 %p1, %lane, 16;\nselp.b32 %r1, 0x0000FFFF, 0xFFFF0000, %p1;\n\
         and.b32 %r2, %lane, 8;\nsetp.ne.u32 %p2, %r2, 0;\nvote.sync.ballot.b32 %r3, %p2, %r1;\n\
         st.global.u32 [%o], %r3;",
        64,
        1,
        64,
    )
    .unwrap();
    let want: Vec<u32> = (0..64)
        .map(|t| {
            if t % 32 < 16 {
                0x0000_FF00
            } else {
                0xFF00_0000
            }
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn bar_red_popc_and_or() {
    let got = run(
        "",
        "setp.lt.u32 %p1, %t, 37;\nbar.red.popc.u32 %r1, 0, %p1;\nbar.red.and.pred %p2, 0, %p1;\nbar.red.or.pred %p3, 0, %p1;\n\
         bar.red.popc.u32 %r4, 0, !%p1;\n\
         selp.u32 %r2, 1000, 0, %p2;\nselp.u32 %r3, 2000, 0, %p3;\nadd.u32 %r1, %r1, %r2;\nadd.u32 %r1, %r1, %r3;\n\
         shl.b32 %r4, %r4, 16;\nadd.u32 %r1, %r1, %r4;\nst.global.u32 [%o], %r1;",
        100,
        1,
        100,
    )
    .unwrap();
    assert!(got.iter().all(|v| *v == 37 + 2000 + (63 << 16)), "{got:?}");
}

#[test]
fn bar_arrive_lets_producers_go_on_while_consumers_wait_for_a_count() {
    // Warp 0 produces and arrives at barrier 1; warp 1 waits there (count 64), then reads.
    let got = run(
        ".shared .align 4 .u32 sh[32];",
        "mov.u32 %r4, sh;\nand.b32 %r1, %t, 31;\nshl.b32 %r2, %r1, 2;\nadd.u32 %r5, %r4, %r2;\n\
         setp.lt.u32 %p1, %t, 32;\n@!%p1 bra CONSUMER;\nmul.lo.u32 %r6, %t, 3;\nst.shared.u32 [%r5], %r6;\nbar.arrive 1, 64;\nbra END;\n\
         CONSUMER:\nbar.sync 1, 64;\nld.shared.u32 %r7, [%r5];\nst.global.u32 [%o], %r7;\nEND:",
        64,
        1,
        64,
    )
    .unwrap();
    for (t, v) in got.iter().enumerate().skip(32) {
        assert_eq!(*v as usize, (t - 32) * 3);
    }
}

#[test]
fn a_vote_after_an_exited_lane_proceeds_with_the_lanes_present() {
    // As an NVIDIA-validated test expects on sm_70 and later: lane 0 has exited, the full
    // membermask's vote is over lanes 1-31.
    let got = run(
        "",
        "setp.eq.u32 %p1, %lane, 0;\n@%p1 ret;\n\
         vote.sync.all.pred %p2, 1, 0xffffffff;\nselp.u32 %r1, 1, 0, %p2;\n\
         setp.ne.u32 %p3, %lane, 5;\nvote.sync.ballot.b32 %r2, %p3, 0xffffffff;\n\
         match.any.sync.b32 %r3, 7, 0xffffffff;\n\
         st.global.u32 [%o], %r1;\nst.global.u32 [%o+128], %r2;\nst.global.u32 [%o+256], %r3;",
        96,
        1,
        32,
    )
    .unwrap();
    for lane in 1..32 {
        assert_eq!(got[lane], 1, "vote.all, lane {lane}");
        assert_eq!(got[32 + lane], !1u32 & !(1 << 5), "ballot, lane {lane}");
        assert_eq!(got[64 + lane], !1u32, "match.any, lane {lane}");
    }
}

#[test]
fn a_shuffle_proceeds_without_the_lanes_that_exited() {
    let got = run(
        "",
        "setp.ge.u32 %p1, %lane, 16;\n@%p1 ret;\nshfl.sync.bfly.b32 %r1, %t, 1, 31, -1;\n\
         add.u32 %r2, %t, 100;\nadd.u32 %r3, %lane, 16;\nshfl.sync.idx.b32 %r4, %r2, %r3, 31, -1;\n\
         st.global.u32 [%o], %r1;\nst.global.u32 [%o+64], %r4;",
        32,
        1,
        32,
    )
    .unwrap();
    for lane in 0..16 {
        assert_eq!(got[lane], lane as u32 ^ 1);
        // Reading an exited lane: the reader's own value.
        assert_eq!(got[16 + lane], lane as u32 + 100);
    }
}

#[test]
fn a_collective_whose_live_member_waits_elsewhere_is_an_error() {
    let err = run(
        "",
        "setp.ge.u32 %p1, %lane, 16;\n@%p1 bra OTHER;\nshfl.sync.bfly.b32 %r1, %t, 1, 31, -1;\n\
         ret;\nOTHER:\nshfl.sync.bfly.b32 %r1, %t, 2, 31, -1;",
        32,
        1,
        32,
    )
    .unwrap_err();
    assert!(
        err.starts_with(
            "kernel 'k': warp or warpgroup collective whose member threads did not all arrive"
        ),
        "{err}"
    );
}

#[test]
fn atomics_on_global_and_shared_memory_across_blocks() {
    let got = run(
        ".shared .align 4 .u32 cnt;",
        "atom.global.add.u32 %r1, [%out], 1;\n\
         atom.shared.add.u32 %r2, [cnt], 2;\nbar.sync 0;\nld.shared.u32 %r3, [cnt];\n\
         setp.eq.u32 %p1, %t, 0;\n@%p1 red.global.add.u32 [%out+4], %r3;\n\
         atom.global.max.s32 %r4, [%out+8], %g;\natom.global.min.s32 %r4, [%out+12], %g;\n\
         atom.global.inc.u32 %r5, [%out+16], 99;\natom.global.dec.u32 %r5, [%out+20], 7;\n\
         atom.global.or.b32 %r6, [%out+24], %t;\natom.global.xor.b32 %r6, [%out+28], 1;\n\
         LOOP:\nld.global.u32 %r8, [%out+32];\nadd.u32 %r9, %r8, 3;\natom.global.cas.b32 %r10, [%out+32], %r8, %r9;\n\
         setp.ne.u32 %p2, %r10, %r8;\n@%p2 bra LOOP;\n\
         atom.global.exch.b32 %r11, [%out+36], 5;",
        10,
        64,
        256,
    )
    .unwrap();
    let n = 64 * 256u32;
    assert_eq!(got[0], n);
    assert_eq!(got[1], 64 * 512);
    assert_eq!(got[2], n - 1);
    assert_eq!(got[3], 0);
    assert_eq!(got[4], n % 100, "inc wraps at 99");
    // dec from 0 wraps to 7, then counts down: after n steps of a cycle of 8.
    assert_eq!(got[5], (8 - n % 8) % 8);
    assert_eq!(got[6], 255);
    assert_eq!(got[7], n % 2);
    assert_eq!(got[8], 3 * n);
    assert_eq!(got[9], 5);
}

#[test]
fn float_and_half_atomic_adds_are_exact_when_the_sums_are() {
    let got = run(
        "",
        "atom.global.add.f32 %f1, [%out], 0f3F000000;\n\
         mov.b16 %h1, 0x3C00;\natom.global.add.noftz.f16 %h2, [%out+4], %h1;\n\
         mov.b32 %r1, 0x38003C00;\natom.global.add.noftz.f16x2 %r2, [%out+8], %r1;\n\
         mov.b16 %h3, 0x3F80;\nsetp.lt.u32 %p1, %t, 64;\n@%p1 red.global.add.noftz.bf16 [%out+12], %h3;\n\
         atom.global.add.f64 %rd1, [%out+16], 0d3FF0000000000000;",
        6,
        4,
        128,
    )
    .unwrap();
    assert_eq!(f32::from_bits(got[0]), 256.0);
    assert_eq!(got[1] & 0xFFFF, half::f16::from_f32(512.0).to_bits() as u32);
    assert_eq!(
        got[2],
        (half::f16::from_f32(256.0).to_bits() as u32) << 16
            | half::f16::from_f32(512.0).to_bits() as u32
    );
    // 256 adds of 1.0: every partial sum is exact in bf16 (8 significant bits).
    assert_eq!(
        got[3] & 0xFFFF,
        half::bf16::from_f32(256.0).to_bits() as u32
    );
    assert_eq!(f64::from_bits(got[4] as u64 | (got[5] as u64) << 32), 512.0);
}

#[test]
fn warp_sync_fence_and_activemask() {
    let got = run(
        "",
        "bar.warp.sync -1;\nmembar.gl;\nfence.acq_rel.gpu;\nactivemask.b32 %r1;\nst.global.u32 [%o], %r1;",
        40,
        1,
        40,
    )
    .unwrap();
    assert!(got[..32].iter().all(|m| *m == u32::MAX));
    assert!(got[32..].iter().all(|m| *m == 0xFF));
}

#[test]
fn activemask_in_a_diverged_warp_gives_the_lanes_on_the_same_path() {
    // Even lanes take one branch, odd lanes the other, each with its own activemask; lanes
    // 40 and up exit first and are not active.
    let got = run(
        "",
        "setp.ge.u32 %p2, %t, 40;\n@%p2 bra END;\nand.b32 %r2, %t, 1;\nsetp.eq.u32 %p1, %r2, 0;\n\
         @%p1 bra EVEN;\nactivemask.b32 %r1;\nbra STORE;\nEVEN:\nactivemask.b32 %r1;\n\
         STORE:\nst.global.u32 [%o], %r1;\nEND:",
        64,
        1,
        64,
    )
    .unwrap();
    for (t, m) in got.iter().enumerate() {
        let want = match t {
            40.. => 0,
            32.. if t % 2 == 0 => 0x55,
            32.. => 0xAA,
            _ if t % 2 == 0 => 0x5555_5555,
            _ => 0xAAAA_AAAA,
        };
        assert_eq!(*m, want, "thread {t}");
    }
}

/// One warp: A (16×16) and B (16×8) f16 or bf16 through shared memory, `ldmatrix` (x4 for A,
/// x2.trans for B; on shared or, if `generic`, on generic addresses from `cvta.shared`),
/// `mma.m16n8k16` with C = 0.5, D stored row-major as f32.
/// `mma` of A and B loaded by `ldmatrix` from shared memory (through generic addresses where
/// `generic`; where `adjacent`, the second `ldmatrix` right before the `mma`, one sync point
/// with it).
fn mma_through_ldmatrix(ty: &str, a: &[u16], b: &[u16], generic: bool, adjacent: bool) -> Vec<f32> {
    let mut ptx = format!(
        "{HEAD}.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)\n{{\n\
         .shared .align 16 .b8 sA[512];\n.shared .align 16 .b8 sB[256];\n\
         .reg .b32 %l, %r<16>, %a<4>, %b<2>;\n.reg .b64 %rd<8>;\n.reg .f32 %c<4>, %d<4>;\n.reg .b16 %h;\n.reg .pred %p;\n\
         mov.u32 %l, %laneid;\nld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pd];\n\
         mov.u32 %r1, 0;\nCOPY_A:\nshl.b32 %r2, %l, 3;\nadd.u32 %r2, %r2, %r1;\nmul.wide.u32 %rd4, %r2, 2;\nadd.s64 %rd5, %rd1, %rd4;\n\
         ld.global.b16 %h, [%rd5];\nshl.b32 %r3, %r2, 1;\nmov.u32 %r4, sA;\nadd.u32 %r3, %r3, %r4;\nst.shared.b16 [%r3], %h;\n\
         add.u32 %r1, %r1, 1;\nsetp.lt.u32 %p, %r1, 8;\n@%p bra COPY_A;\n\
         mov.u32 %r1, 0;\nCOPY_B:\nshl.b32 %r2, %l, 2;\nadd.u32 %r2, %r2, %r1;\nmul.wide.u32 %rd4, %r2, 2;\nadd.s64 %rd5, %rd2, %rd4;\n\
         ld.global.b16 %h, [%rd5];\nshl.b32 %r3, %r2, 1;\nmov.u32 %r4, sB;\nadd.u32 %r3, %r3, %r4;\nst.shared.b16 [%r3], %h;\n\
         add.u32 %r1, %r1, 1;\nsetp.lt.u32 %p, %r1, 4;\n@%p bra COPY_B;\n\
         bar.sync 0;\n\
         and.b32 %r5, %l, 7;\nshr.u32 %r6, %l, 3;\nand.b32 %r6, %r6, 1;\nshl.b32 %r6, %r6, 3;\nadd.u32 %r5, %r5, %r6;\n\
         shr.u32 %r7, %l, 4;\nshl.b32 %r7, %r7, 3;\nshl.b32 %r5, %r5, 4;\nadd.u32 %r5, %r5, %r7;\nshl.b32 %r5, %r5, 1;\n\
         mov.u32 %r4, sA;\nadd.u32 %r5, %r5, %r4;\n\
         ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%a0, %a1, %a2, %a3}}, [%r5];\n\
         and.b32 %r8, %l, 15;\nshl.b32 %r8, %r8, 4;\nmov.u32 %r4, sB;\nadd.u32 %r8, %r8, %r4;\n\
         ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%b0, %b1}}, [%r8];\n\
         mov.f32 %c0, 0f3F000000;\nmov.f32 %c1, 0f3F000000;\nmov.f32 %c2, 0f3F000000;\nmov.f32 %c3, 0f3F000000;\n\
         mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};\n\
         shr.u32 %r9, %l, 2;\nand.b32 %r10, %l, 3;\nshl.b32 %r10, %r10, 1;\nshl.b32 %r11, %r9, 3;\nadd.u32 %r11, %r11, %r10;\n\
         mul.wide.u32 %rd6, %r11, 4;\nadd.s64 %rd7, %rd3, %rd6;\nst.global.v2.f32 [%rd7], {{%d0, %d1}};\nst.global.v2.f32 [%rd7+256], {{%d2, %d3}};\n\
         ret;\n}}\n"
    );
    if adjacent {
        let c = "mov.f32 %c0, 0f3F000000;\nmov.f32 %c1, 0f3F000000;\nmov.f32 %c2, 0f3F000000;\n\
                 mov.f32 %c3, 0f3F000000;\n";
        let load_b = "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%b0, %b1}, [%r8];\n";
        assert!(ptx.contains(c) && ptx.contains(load_b));
        ptx = ptx.replace(c, "").replace(load_b, &format!("{c}{load_b}"));
    }
    if generic {
        for (shared, generic) in [
            (
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%a0, %a1, %a2, %a3}, [%r5];",
                "cvt.u64.u32 %rd4, %r5;\ncvta.shared.u64 %rd4, %rd4;\n\
                 ldmatrix.sync.aligned.m8n8.x4.b16 {%a0, %a1, %a2, %a3}, [%rd4];",
            ),
            (
                "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%b0, %b1}, [%r8];",
                "cvt.u64.u32 %rd5, %r8;\ncvta.shared.u64 %rd5, %rd5;\n\
                 ldmatrix.sync.aligned.m8n8.x2.trans.b16 {%b0, %b1}, [%rd5];",
            ),
        ] {
            assert!(ptx.contains(shared));
            ptx = ptx.replace(shared, generic);
        }
    }
    let module = Module::from_ptx(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let (ba, bb) = (
        DeviceBuffer::from_slice(a).unwrap(),
        DeviceBuffer::from_slice(b).unwrap(),
    );
    let d = DeviceBuffer::zeroed(16 * 8 * 4).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(
            1,
            32,
            &[Arg::buffer(&ba), Arg::buffer(&bb), Arg::buffer(&d)],
        )
        .unwrap();
    d.to_vec()
}

#[test]
fn ldmatrix_on_shared_or_generic_addresses_and_mma_m16n8k16_multiply_a_tile() {
    for (ty, enc, dec) in [
        (
            "f16",
            (|x: f32| half::f16::from_f32(x).to_bits()) as fn(f32) -> u16,
            (|b: u16| half::f16::from_bits(b).to_f32()) as fn(u16) -> f32,
        ),
        (
            "bf16",
            |x: f32| half::bf16::from_f32(x).to_bits(),
            |b: u16| half::bf16::from_bits(b).to_f32(),
        ),
    ] {
        // Small integers and halves: every product and partial sum is exact in f32.
        let a: Vec<u16> = (0..256)
            .map(|i| enc(((i * 7 % 13) as f32 - 6.0) / 2.0))
            .collect();
        let b: Vec<u16> = (0..128).map(|i| enc((i * 5 % 11) as f32 - 5.0)).collect();
        for (generic, adjacent) in [(false, false), (true, false), (false, true), (true, true)] {
            let got = mma_through_ldmatrix(ty, &a, &b, generic, adjacent);
            for r in 0..16 {
                for c in 0..8 {
                    let want: f32 = 0.5
                        + (0..16)
                            .map(|k| dec(a[r * 16 + k]) * dec(b[k * 8 + c]))
                            .sum::<f32>();
                    assert_eq!(
                        got[r * 8 + c],
                        want,
                        "{ty} D[{r}][{c}], generic {generic}, adjacent {adjacent}"
                    );
                }
            }
        }
    }
}

#[test]
fn local_memory_read_before_it_is_written_reads_zero_in_every_block() {
    // A thread adds to its local word before it ever stored there, in blocks that run one
    // after another on the same workers (whose frames, and local memory in them, a block
    // takes over from the one before): undefined on a GPU, the same in every run here.
    let got = run(
        "",
        ".local .align 8 .b8 depot[8];\n.reg .b64 %SP;\nmov.u64 %SP, depot;\n\
         ld.local.u32 %r1, [%SP];\nadd.u32 %r1, %r1, %t;\nst.local.u32 [%SP], %r1;\nbar.sync 0;\n\
         ld.local.u32 %r2, [%SP];\nst.global.u32 [%o], %r2;",
        64 * 64,
        64,
        64,
    )
    .unwrap();
    assert_eq!(got, (0..64 * 64).map(|g| g % 64).collect::<Vec<u32>>());
}

#[test]
fn local_memory_is_per_thread_across_barriers() {
    // Each thread fills its local array, waits at a barrier (the others fill theirs), then
    // reads its own values back.
    let got = run(
        "",
        ".local .align 8 .b8 depot[32];\n.reg .b64 %SP;\nmov.u64 %SP, depot;\n\
         st.local.u32 [%SP], %t;\nmul.lo.u32 %r1, %t, 3;\nst.local.u32 [%SP+28], %r1;\nbar.sync 0;\n\
         ld.local.u32 %r2, [%SP];\nld.local.u32 %r3, [%SP+28];\nadd.u32 %r4, %r2, %r3;\nst.global.u32 [%o], %r4;",
        128,
        1,
        128,
    )
    .unwrap();
    assert_eq!(got, (0..128).map(|t| 4 * t).collect::<Vec<u32>>());
}

#[test]
fn a_barrier_after_a_shuffle_does_not_see_the_shuffles_operands() {
    // The shuffle leaves 1000 in the frame's operand slot that holds a barrier's thread count.
    let got = run(
        "",
        "shfl.sync.idx.b32 %r1, %t, 1000, 31, -1;\nbar.sync 0;\nst.global.u32 [%o], %r1;",
        64,
        1,
        64,
    )
    .unwrap();
    assert_eq!(
        got,
        (0..64u32)
            .map(|t| (t / 32) * 32 + 1000 % 32)
            .collect::<Vec<_>>()
    );
}

#[test]
fn redux_sync_combines_the_members_values() {
    // Lane l holds l - 5 (signed): add, min/max as s32 and u32, and/or/xor, over the lanes
    // of the mask 0x0000FFFF (lanes 0..16), written by each member.
    let ops = [
        "add.s32", "min.s32", "max.s32", "min.u32", "max.u32", "and.b32", "or.b32", "xor.b32",
    ];
    let mut body =
        String::from("setp.ge.u32 %p1, %lane, 16;\n@%p1 bra DONE;\nadd.s32 %r1, %lane, -5;\n");
    for (k, op) in ops.iter().enumerate() {
        body += &format!(
            "redux.sync.{op} %r2, %r1, 0xFFFF;\nmul.lo.u32 %r3, %t, 32;\nadd.u32 %r3, %r3, {};\n\
             mul.wide.u32 %rd1, %r3, 4;\nadd.s64 %rd1, %out, %rd1;\nst.global.u32 [%rd1], %r2;\n",
            4 * k
        );
    }
    body += "DONE:\n";
    let got = run("", &body, 32 * 32, 1, 32).unwrap();
    let values: Vec<i32> = (0..16).map(|l| l - 5).collect();
    let expect = [
        values.iter().sum::<i32>() as u32,
        -5i32 as u32,
        10,
        0,
        -1i32 as u32,
        values.iter().fold(!0, |m, v| m & *v as u32),
        values.iter().fold(0, |m, v| m | *v as u32),
        values.iter().fold(0, |m, v| m ^ *v as u32),
    ];
    for lane in 0..16 {
        let words: Vec<u32> = (0..8).map(|k| got[32 * lane + 4 * k]).collect();
        assert_eq!(words, expect, "lane {lane}");
    }
}

#[test]
fn redux_sync_f32_min_max_take_abs_and_nan_as_the_isa_says() {
    // Lane l holds (l - 5) * 1.5, except lane 5: -0.0, and lane 20: a NaN. Each form is
    // reduced over lanes 0..16 (no NaN), 0..21 (one NaN) and lane 20 alone (only a NaN).
    let forms = ["min", "max", "min.abs", "max.abs", "min.NaN", "max.abs.NaN"];
    let masks = [0xFFFF, 0x1F_FFFF, 0x10_0000];
    let mut body = String::from(
        "add.s32 %r1, %lane, -5;\ncvt.rn.f32.s32 %f1, %r1;\nmul.f32 %f1, %f1, 0f3FC00000;\n\
         setp.eq.u32 %p1, %lane, 5;\n@%p1 neg.f32 %f1, %f1;\n\
         setp.eq.u32 %p1, %lane, 20;\n@%p1 mov.b32 %f1, 0x7FC00001;\n",
    );
    for (k, form) in forms.iter().enumerate() {
        for (j, mask) in masks.iter().enumerate() {
            body += &format!(
                "mov.u32 %r3, {mask:#x};\nshr.b32 %r3, %r3, %lane;\nand.b32 %r3, %r3, 1;\n\
                 setp.eq.u32 %p2, %r3, 0;\n@%p2 bra SKIP{k}_{j};\n\
                 redux.sync.{form}.f32 %f2, %f1, {mask:#x};\nmul.lo.u32 %r4, %t, 32;\nadd.u32 %r4, %r4, {};\n\
                 mul.wide.u32 %rd1, %r4, 4;\nadd.s64 %rd1, %out, %rd1;\nst.global.f32 [%rd1], %f2;\nSKIP{k}_{j}:\n",
                3 * k + j
            );
        }
    }
    let got = run("", &body, 32 * 32, 1, 32).unwrap();
    let nan = 0x7FFF_FFFFu32;
    let f = |x: f32| x.to_bits();
    let expect = [
        // min: the smallest; NaN ignored; only NaN: canonical NaN.
        [f(-7.5), f(-7.5), nan],
        [f(15.0), f(21.0), nan],
        // .abs: lane 5's -0 becomes +0, the smallest magnitude.
        [f(0.0), f(0.0), nan],
        [f(15.0), f(21.0), nan],
        // .NaN: any NaN member makes the result the canonical NaN.
        [f(-7.5), nan, nan],
        [f(15.0), nan, nan],
    ];
    for lane in [0usize, 5, 15, 20] {
        for (k, row) in expect.iter().enumerate() {
            for (j, mask) in masks.iter().enumerate() {
                if mask >> lane & 1 == 1 {
                    assert_eq!(
                        got[32 * lane + 3 * k + j],
                        row[j],
                        "lane {lane} {} mask {mask:#x}",
                        forms[k]
                    );
                }
            }
        }
    }
}

#[test]
fn redux_sync_f32_orders_minus_zero_below_plus_zero() {
    // Even lanes +0, odd lanes -0.
    let body = "and.b32 %r1, %lane, 1;\nshl.b32 %r1, %r1, 31;\nmov.b32 %f1, %r1;\n\
                redux.sync.min.f32 %f2, %f1, 0xFFFFFFFF;\nredux.sync.max.f32 %f3, %f1, 0xFFFFFFFF;\n\
                mov.b32 %r2, %f2;\nmov.b32 %r3, %f3;\nshr.b32 %r2, %r2, 16;\nor.b32 %r2, %r2, %r3;\n\
                st.global.u32 [%o], %r2;\n";
    let got = run("", body, 32, 1, 32).unwrap();
    assert!(got.iter().all(|&v| v == 0x8000), "{got:x?}");
}

#[test]
fn movmatrix_transposes_the_warps_8x8_b16_matrix() {
    // Lane l holds row l/4, columns 2(l%4) and +1 of M, M[i][j] = 0x1000 + 0x100 i + j;
    // afterwards the same elements of the transpose. Two warps, each its own matrix.
    let body = "shr.u32 %r1, %lane, 2;\nand.b32 %r2, %lane, 3;\nshl.b32 %r2, %r2, 1;\n\
                shl.b32 %r3, %r1, 8;\nadd.u32 %r3, %r3, %r2;\nadd.u32 %r3, %r3, 0x1000;\n\
                shr.u32 %r7, %t, 5;\nshl.b32 %r7, %r7, 14;\nadd.u32 %r3, %r3, %r7;\n\
                add.u32 %r4, %r3, 1;\nshl.b32 %r4, %r4, 16;\nor.b32 %r5, %r3, %r4;\n\
                movmatrix.sync.aligned.m8n8.trans.b16 %r6, %r5;\nst.global.u32 [%o], %r6;\n";
    let got = run("", body, 64, 1, 64).unwrap();
    let m = |warp: u32, i: u32, j: u32| 0x1000 + 0x4000 * warp + 0x100 * i + j;
    for t in 0..64u32 {
        let (warp, l) = (t / 32, t % 32);
        let (r, c0) = (l / 4, 2 * (l % 4));
        let want = m(warp, c0, r) | m(warp, c0 + 1, r) << 16;
        assert_eq!(got[t as usize], want, "thread {t}");
    }
}

#[test]
fn vote_without_sync_votes_among_the_warps_lanes() {
    // The deprecated form (ZLUDA's GPU-validated `vote_ballot_nosync`): 64 threads, tid >= 34.
    let body = "setp.ge.u32 %p1, %t, 34;\nvote.ballot.b32 %r1, %p1;\nvote.any.pred %p2, %p1;\n\
                vote.all.pred %p3, !%p1;\nselp.u32 %r2, 1, 0, %p2;\nselp.u32 %r3, 2, 0, %p3;\n\
                add.u32 %r2, %r2, %r3;\nxor.b32 %r1, %r1, %r2;\nst.global.u32 [%o], %r1;\n";
    let got = run("", body, 64, 1, 64).unwrap();
    assert!(got[..32].iter().all(|&v| v == 2), "{got:x?}");
    assert!(got[32..].iter().all(|&v| v == 0xFFFF_FFFC ^ 1), "{got:x?}");
}

#[test]
fn redux_sync_proceeds_without_exited_members() {
    // Lane 0 exits; the others reduce over the full mask.
    let body = "setp.eq.u32 %p1, %lane, 0;\n@%p1 exit;\nredux.sync.add.u32 %r1, %lane, 0xFFFFFFFF;\n\
                st.global.u32 [%o], %r1;\n";
    let got = run("", body, 32, 1, 32).unwrap();
    assert_eq!(got[0], 0);
    assert!(
        got[1..].iter().all(|&v| v == (1..32).sum::<u32>()),
        "{got:?}"
    );
}

#[test]
fn elect_sync_leads_with_the_lowest_member_lane() {
    // Members: the odd lanes. d is the leader's lane, p true in the leader only.
    let body = "and.b32 %r1, %lane, 1;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra DONE;\n\
                elect.sync %r2|%p2, 0xAAAAAAAA;\nselp.u32 %r3, 100, 0, %p2;\nadd.u32 %r2, %r2, %r3;\n\
                st.global.u32 [%o], %r2;\nDONE:\n";
    let got = run("", body, 32, 1, 32).unwrap();
    for (lane, v) in got.iter().enumerate() {
        let expect = match lane {
            1 => 101,
            l if l % 2 == 1 => 1,
            _ => 0,
        };
        assert_eq!(*v, expect, "lane {lane}");
    }
}

/// Each of 32 lanes stores its index-derived words with `stmatrix.x4{.trans}` to shared memory
/// (four 8×8 b16 matrices, lane `8m + r` giving row r of matrix m), and the block writes the
/// 256 halves out.
fn stmatrix(trans: &str) -> Vec<u16> {
    let got = run(
        ".shared .align 16 .b16 mat[256];",
        &format!(
            "shr.u32 %r1, %lane, 3;\nand.b32 %r2, %lane, 7;\nmad.lo.u32 %r3, %r1, 64, 0;\n\
             mad.lo.u32 %r3, %r2, 8, %r3;\nshl.b32 %r3, %r3, 1;\nmov.u32 %r4, mat;\nadd.u32 %r3, %r3, %r4;\n\
             shl.b32 %r10, %lane, 16;\n\
             or.b32 %r5, %r10, 0;\nor.b32 %r6, %r10, 1;\nor.b32 %r7, %r10, 2;\nor.b32 %r8, %r10, 3;\n\
             add.u32 %r5, %r5, 0x1000;\nadd.u32 %r6, %r6, 0x1000;\nadd.u32 %r7, %r7, 0x1000;\nadd.u32 %r8, %r8, 0x1000;\n\
             stmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 [%r3], {{%r5, %r6, %r7, %r8}};\n\
             bar.sync 0;\nshl.b32 %r11, %t, 4;\nadd.u32 %r11, %r11, %r4;\n\
             ld.shared.v4.b32 {{%r12, %r13, %r14, %r15}}, [%r11];\nmul.wide.u32 %rd1, %t, 16;\n\
             add.s64 %rd1, %out, %rd1;\nst.global.v4.b32 [%rd1], {{%r12, %r13, %r14, %r15}};"
        ),
        128,
        1,
        32,
    )
    .unwrap();
    got.iter()
        .flat_map(|w| [*w as u16, (*w >> 16) as u16])
        .collect()
}

#[test]
fn stmatrix_stores_each_lanes_fragment_where_ldmatrix_would_load_it() {
    // Register m of lane l holds 0x1000 + m in its low half and l in its high half.
    for trans in ["", ".trans"] {
        let got = stmatrix(trans);
        for m in 0..4 {
            for row in 0..8 {
                for col in 0..8 {
                    let (r, c) = if trans.is_empty() {
                        (row, col)
                    } else {
                        (col, row)
                    };
                    // Lane l holds (r, c) = (l/4, 2(l%4) + half).
                    let lane = r * 4 + c / 2;
                    let want = if c % 2 == 0 {
                        0x1000 + m as u16
                    } else {
                        lane as u16
                    };
                    assert_eq!(
                        got[64 * m + 8 * row + col],
                        want,
                        "{trans} m{m} ({row},{col})"
                    );
                }
            }
        }
    }
}

// Lane groups (`lower::lanes::coop`): `run` checks every test in both forms; these cases
// are the group form's own rules.

#[test]
fn lanes_that_diverged_before_a_barrier_go_on_together_after_it() {
    // Lane 0 of each warp stores alone; all meet at the barrier, then each lane's values
    // (its id, its sum) come back.
    let got = run(
        ".shared .align 4 .u32 sh[2];",
        "and.b32 %r1, %t, 31;\nshr.u32 %r2, %t, 5;\nmul.lo.u32 %r3, %t, 3;\n\
         setp.ne.u32 %p1, %r1, 0;\n@%p1 bra SKIP;\nmov.u32 %r4, sh;\nshl.b32 %r5, %r2, 2;\n\
         add.u32 %r4, %r4, %r5;\nst.shared.u32 [%r4], %r2;\nSKIP:\nbar.sync 0;\n\
         ld.shared.u32 %r6, [sh+4];\nadd.u32 %r7, %r3, %r6;\nst.global.u32 [%o], %r7;",
        64,
        1,
        64,
    )
    .unwrap();
    assert_eq!(got, (0..64u32).map(|t| 3 * t + 1).collect::<Vec<_>>());
}

#[test]
fn a_register_the_same_in_every_lane_that_diverged_lanes_wrote_apart_keeps_each_lanes_value() {
    // `%r5` is a constant in every write (one value a group), but lane 3 skips the second.
    let got = run(
        "",
        "mov.u32 %r5, 7;\nsetp.eq.u32 %p1, %t, 3;\n@%p1 bra SKIP;\nmov.u32 %r5, 9;\nSKIP:\n\
         bar.sync 0;\nst.global.u32 [%o], %r5;",
        64,
        1,
        64,
    )
    .unwrap();
    assert_eq!(
        got,
        (0..64u32)
            .map(|t| if t == 3 { 7 } else { 9 })
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_lane_affine_register_that_diverged_lanes_wrote_apart_keeps_each_lanes_value() {
    // `%r5` is the lane's id plus a constant in every write, a different one in lane 5.
    let got = run(
        "",
        "add.u32 %r5, %t, 100;\nsetp.eq.u32 %p1, %t, 5;\n@%p1 bra SKIP;\nadd.u32 %r5, %t, 200;\n\
         SKIP:\nbar.sync 0;\nst.global.u32 [%o], %r5;",
        64,
        1,
        64,
    )
    .unwrap();
    assert_eq!(
        got,
        (0..64u32)
            .map(|t| if t == 5 { t + 100 } else { t + 200 })
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_group_resumes_each_lanes_shuffled_value_after_rounds_of_shuffles_and_barriers() {
    // A warp's sum by shfl.down, written by lane 0 and read back by all after a barrier.
    let got = run(
        ".shared .align 4 .u32 sh[2];",
        "mov.u32 %r1, %t;\nshfl.sync.down.b32 %r2, %r1, 16, 31, -1;\nadd.u32 %r1, %r1, %r2;\n\
         shfl.sync.down.b32 %r2, %r1, 8, 31, -1;\nadd.u32 %r1, %r1, %r2;\n\
         shfl.sync.down.b32 %r2, %r1, 4, 31, -1;\nadd.u32 %r1, %r1, %r2;\n\
         shfl.sync.down.b32 %r2, %r1, 2, 31, -1;\nadd.u32 %r1, %r1, %r2;\n\
         shfl.sync.down.b32 %r2, %r1, 1, 31, -1;\nadd.u32 %r1, %r1, %r2;\n\
         and.b32 %r3, %t, 31;\nshr.u32 %r4, %t, 5;\nsetp.eq.u32 %p1, %r3, 0;\n\
         mov.u32 %r5, sh;\nshl.b32 %r6, %r4, 2;\nadd.u32 %r5, %r5, %r6;\n\
         @%p1 st.shared.u32 [%r5], %r1;\nbar.sync 0;\nld.shared.u32 %r7, [%r5];\n\
         add.u32 %r7, %r7, %t;\nst.global.u32 [%o], %r7;",
        64,
        1,
        64,
    )
    .unwrap();
    // Lane 0's sum is over its warp's ids with the out-of-range lanes' own values added
    // along the way (shfl.down keeps a lane's value where its source is past the end).
    let warp = |w: u32| -> u32 {
        let mut v: Vec<u32> = (0..32).map(|l| 32 * w + l).collect();
        for d in [16, 8, 4, 2, 1] {
            let prev = v.clone();
            for l in 0..32 {
                v[l] = prev[l] + if l + d < 32 { prev[l + d] } else { prev[l] };
            }
        }
        v[0]
    };
    assert_eq!(
        got,
        (0..64u32).map(|t| warp(t / 32) + t).collect::<Vec<_>>()
    );
}
