//! Lane groups (`lower::lanes`): threads run several at a time, and give the same results as
//! one thread at a time — when the lanes agree, when they disagree at a branch or an exit,
//! and for block shapes the groups cannot cover.

use ptxjit::{Arg, CompileOptions, DeviceBuffer, Dim3, LaneGroups, Module};

fn module(ptx: &str, lane_groups: LaneGroups) -> Module {
    let opts = CompileOptions {
        lane_groups,
        ..CompileOptions::default()
    };
    Module::from_ptx_named("<ptx>", ptx, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `entry(out, n)` over `threads` threads in blocks of `block` and returns `out` as u32.
fn run(ptx: &str, lane_groups: LaneGroups, grid: u32, block: [u32; 3], n: u32) -> Vec<u32> {
    let threads = grid * block.iter().product::<u32>();
    run_bytes(ptx, lane_groups, grid, block, threads * 4, n)
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Runs `entry(out, n)` as [`run`] does with `out` of `bytes` bytes, and returns `out`.
fn run_bytes(
    ptx: &str,
    lane_groups: LaneGroups,
    grid: u32,
    block: [u32; 3],
    bytes: u32,
    n: u32,
) -> Vec<u8> {
    let out = DeviceBuffer::zeroed(bytes as usize).unwrap();
    module(ptx, lane_groups)
        .kernel("k")
        .unwrap()
        .launch(
            grid,
            Dim3::new(block[0], block[1], block[2]),
            &[Arg::buffer(&out), Arg::u32(n)],
        )
        .unwrap();
    out.to_bytes()
}

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry k(.param .u64 out, .param .u32 n)\n{\n\
    .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<4>;\n\
    ld.param.u64 %rd1, [out];\nld.param.u32 %r9, [n];\n\
    mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\n\
    mad.lo.s32 %r4, %r1, %r2, %r3;\nmul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\n";

fn kernel(body: &str) -> String {
    format!("{HEADER}{body}\n}}\n")
}

/// Every lane-group mode gives `expected` (groups of 64 lanes where `block` allows).
fn check_all_modes(ptx: &str, grid: u32, block: [u32; 3], n: u32, expected: &[u32]) {
    let modes = [
        LaneGroups::Off,
        LaneGroups::Always,
        LaneGroups::AlwaysForBlockX(block[0]),
        LaneGroups::WhenHot,
    ];
    for mode in modes {
        let got = run(ptx, mode, grid, block, n);
        assert_eq!(got, expected, "{mode:?}");
    }
}

#[test]
fn lanes_that_agree_at_a_loop_branch_stay_together() {
    // A uniform trip count: every lane runs the loop n times.
    let ptx = kernel(
        "mov.u32 %r5, 0;\nmov.u32 %r6, %r4;\nLOOP:\nmul.lo.u32 %r6, %r6, 3;\nadd.u32 %r6, %r6, 1;\n\
         add.u32 %r5, %r5, 1;\nsetp.lt.u32 %p1, %r5, %r9;\n@%p1 bra LOOP;\nst.global.u32 [%rd3], %r6;\nret;",
    );
    let expected: Vec<u32> = (0..256u32)
        .map(|t| (0..5).fold(t, |v, _| v.wrapping_mul(3).wrapping_add(1)))
        .collect();
    check_all_modes(&ptx, 4, [64, 1, 1], 5, &expected);
}

#[test]
fn f32_nan_results_are_canonical_wherever_an_instruction_sees_their_bits() {
    // A NaN of each thread's own payload: %r6's NaN, read only by `mul`, is that `mul`'s to
    // make canonical; %r7 is stored and %r8 negated (a sign operation keeps a NaN's bits),
    // so theirs are canonical where they are computed. n selects the word stored.
    let ptx = kernel(
        "or.b32 %r5, %r4, 0xFFC00000;\nadd.f32 %r6, %r5, 0f3F800000;\nmul.f32 %r7, %r6, 0f40000000;\n\
         add.f32 %r8, %r5, 0f3F800000;\nneg.f32 %r10, %r8;\nsetp.eq.u32 %p1, %r9, 0;\n\
         selp.b32 %r11, %r7, %r10, %p1;\nst.global.u32 [%rd3], %r11;\nret;",
    );
    check_all_modes(&ptx, 2, [64, 1, 1], 0, &[0x7FFF_FFFF; 128]);
    check_all_modes(&ptx, 2, [64, 1, 1], 1, &[0xFFFF_FFFF; 128]);
}

#[test]
fn lanes_that_disagree_at_a_branch_continue_one_by_one() {
    // Per-thread trip counts (tid mod 5), and a branch on odd threads before it.
    let ptx = kernel(
        "and.b32 %r7, %r4, 1;\nsetp.eq.u32 %p2, %r7, 1;\nmov.u32 %r6, 100;\n@%p2 bra ODD;\n\
         add.u32 %r6, %r6, 1000;\nODD:\nrem.u32 %r8, %r4, 5;\nmov.u32 %r5, 0;\n\
         LOOP:\nsetp.ge.u32 %p1, %r5, %r8;\n@%p1 bra DONE;\nadd.u32 %r6, %r6, %r4;\nadd.u32 %r5, %r5, 1;\nbra LOOP;\n\
         DONE:\nst.global.u32 [%rd3], %r6;\nret;",
    );
    let expected: Vec<u32> = (0..256u32)
        .map(|t| {
            let base = if t % 2 == 1 { 100 } else { 1100 };
            base + t * (t % 5)
        })
        .collect();
    check_all_modes(&ptx, 2, [128, 1, 1], 0, &expected);
}

#[test]
fn lanes_that_skip_a_few_instructions_leave_them_to_the_others_under_a_mask() {
    // Threads not a multiple of 4 skip seven instructions: the lanes that do not run them
    // under a mask (a register live after them, read or only written, a guarded add, a
    // store), or in every lane where what they write is dead after them (the lane-affine
    // `%r10`, the uniform `%r11`).
    let ptx = kernel(
        "and.b32 %r7, %r4, 3;\nsetp.ne.u32 %p2, %r7, 0;\nand.b32 %r5, %r4, 4;\n\
         setp.ne.u32 %p3, %r5, 0;\nmov.u32 %r8, %r4;\nmov.u32 %r6, 3;\n@%p2 bra SKIP;\n\
         mad.lo.s32 %r10, %r4, 3, %r9;\nadd.u32 %r8, %r8, %r10;\n@%p3 add.u32 %r8, %r8, 1000;\n\
         ld.param.u32 %r11, [n];\nadd.u32 %r8, %r8, %r11;\nld.global.u32 %r6, [%rd3];\n\
         st.global.u32 [%rd3], 7;\n\
         SKIP:\nadd.u32 %r8, %r8, %r6;\natom.global.add.u32 %r12, [%rd3], %r8;\nret;",
    );
    let n = 5;
    let expected: Vec<u32> = (0..256u32)
        .map(|t| match t % 4 {
            0 => 7 + t + (3 * t + n) + if t & 4 != 0 { 1000 } else { 0 } + n,
            _ => t + 3,
        })
        .collect();
    check_all_modes(&ptx, 2, [128, 1, 1], n, &expected);
}

#[test]
fn lanes_that_skip_a_write_to_a_register_kept_once_for_the_group_go_on_one_by_one() {
    // After the branch, `%r11` (uniform before it) and `%r10` (lane-affine) differ between
    // the lanes that took it and the others: no form of the group's holds them.
    let ptx = kernel(
        "mov.u32 %r11, 5;\nmov.u32 %r10, %r4;\nand.b32 %r7, %r4, 3;\nsetp.ne.u32 %p2, %r7, 0;\n\
         @%p2 bra SKIP;\nmov.u32 %r11, 77;\nadd.u32 %r10, %r4, 100;\n\
         SKIP:\nadd.u32 %r8, %r10, %r11;\nst.global.u32 [%rd3], %r8;\nret;",
    );
    let expected: Vec<u32> = (0..256u32)
        .map(|t| if t % 4 == 0 { t + 177 } else { t + 5 })
        .collect();
    check_all_modes(&ptx, 2, [128, 1, 1], 0, &expected);
}

#[test]
fn lanes_that_exit_early_leave_the_others_running() {
    // Threads at or past n exit (the usual bounds check); multiples of 3 return early.
    let ptx = kernel(
        "setp.ge.u32 %p1, %r4, %r9;\n@%p1 exit;\nrem.u32 %r5, %r4, 3;\nsetp.eq.u32 %p2, %r5, 0;\n\
         @%p2 ret;\nadd.u32 %r6, %r4, 7;\nst.global.u32 [%rd3], %r6;\nret;",
    );
    let n = 201;
    let expected: Vec<u32> = (0..256u32)
        .map(|t| if t >= n || t % 3 == 0 { 0 } else { t + 7 })
        .collect();
    check_all_modes(&ptx, 2, [128, 1, 1], n, &expected);
}

#[test]
fn a_body_that_ends_with_a_label_falls_to_the_next_group() {
    // `@p bra DONE; st ...; DONE: }`: the label stands after the last instruction, with and
    // without a `ret` before it (the hot compile of these panicked in Cranelift).
    let expected: Vec<u32> = (0..512u32)
        .map(|i| if i % 5 == 0 { 0 } else { i })
        .collect();
    for ret in ["", "ret;\n"] {
        let ptx = kernel(&format!(
            "rem.u32 %r5, %r4, 5;\nsetp.eq.u32 %p1, %r5, 0;\n@%p1 bra DONE;\n\
             st.global.u32 [%rd3], %r4;\n{ret}DONE:"
        ));
        check_all_modes(&ptx, 2, [256, 1, 1], 0, &expected);
    }
}

#[test]
fn thousands_of_registers_live_across_a_divergent_branch_run_hot() {
    // 4,200 registers live across a branch that splits every group: as lane-group variables
    // they would overflow Cranelift's block parameters (the hot compile panicked), so the
    // kernel keeps its one-thread form, hot or not.
    const N: usize = 4200;
    let mut body = String::from("add.u32 %r10, %r4, 1;\n");
    for i in 1..N {
        body += &format!("mul.lo.u32 %v{i}, %v{}, 3;\n", i - 1).replace("%v0,", "%r10,");
    }
    body += "and.b32 %r5, %r4, 1;\nsetp.eq.u32 %p1, %r5, 0;\n@%p1 bra EVEN;\nadd.u32 %r4, %r4, 7;\nEVEN:\n";
    body += "mov.u32 %r6, %r10;\n";
    for i in 1..N {
        body += &format!("xor.b32 %r6, %r6, %v{i};\n");
    }
    body += "add.u32 %r6, %r6, %r4;\nst.global.u32 [%rd3], %r6;\nret;";
    let ptx = kernel(&format!(".reg .b32 %v<{N}>;\n{body}"));
    let expected: Vec<u32> = (0..512u32)
        .map(|i| {
            let mut v = i + 1;
            let mut x = v;
            for _ in 1..N {
                v = v.wrapping_mul(3);
                x ^= v;
            }
            x.wrapping_add(if i % 2 == 1 { i + 7 } else { i })
        })
        .collect();
    check_all_modes(&ptx, 2, [256, 1, 1], 0, &expected);
}

#[test]
fn a_lane_affine_register_has_each_lanes_value_wherever_it_is_read() {
    // %r10 = 5 - 3 × thread (lane-affine: lane 0's value and a stride; wraps below zero),
    // read by a vector form (add), lane by lane (rem), and in each lane after the group
    // diverges (xor).
    let ptx = kernel(
        "mul.lo.u32 %r5, %r4, -3;\nadd.u32 %r10, %r5, 5;\nrem.u32 %r6, %r10, 1000;\n\
         add.u32 %r7, %r10, %r6;\nand.b32 %r8, %r4, 3;\nsetp.eq.u32 %p1, %r8, 0;\n@%p1 bra SKIP;\n\
         xor.b32 %r7, %r7, %r10;\nSKIP:\nst.global.u32 [%rd3], %r7;\nret;",
    );
    let expected: Vec<u32> = (0..256u32)
        .map(|t| {
            let r10 = 5u32.wrapping_sub(t.wrapping_mul(3));
            let r7 = r10.wrapping_add(r10 % 1000);
            if t % 4 == 0 { r7 } else { r7 ^ r10 }
        })
        .collect();
    check_all_modes(&ptx, 2, [128, 1, 1], 0, &expected);
}

#[test]
fn a_register_reused_for_unrelated_values_has_each_value_in_each_lane() {
    // `%r10` holds the block's index, then the thread's, then (in odd lanes, after the group
    // diverges) three times that; `%rd3` the parameter, then the thread's address: each
    // value a register of its own in the group code (`lower::webs`).
    let ptx = kernel(
        "mov.u32 %r10, %ctaid.x;
mad.lo.u32 %r10, %r10, %ntid.x, %tid.x;
         mul.wide.u32 %rd2, %r10, 4;
ld.param.u64 %rd3, [out];
add.s64 %rd3, %rd3, %rd2;
         and.b32 %r11, %r10, 1;
setp.eq.u32 %p1, %r11, 0;
@%p1 bra EVEN;
         mul.lo.u32 %r10, %r10, 3;
EVEN:
st.global.u32 [%rd3], %r10;
ret;",
    );
    let expected: Vec<u32> = (0..256u32)
        .map(|t| if t % 2 == 0 { t } else { 3 * t })
        .collect();
    check_all_modes(&ptx, 2, [128, 1, 1], 0, &expected);
}

#[test]
fn blocks_whose_x_size_is_not_a_multiple_of_the_group_run_one_thread_at_a_time() {
    // Every thread writes tid.x + 100 tid.y + 10000 tid.z at its linear index.
    let ptx = kernel(
        "mov.u32 %r10, %tid.y;\nmov.u32 %r11, %tid.z;\nmov.u32 %r12, %ntid.y;\n\
         mad.lo.u32 %r13, %r11, %r12, %r10;\nmad.lo.u32 %r13, %r13, %r2, %r3;\n\
         mov.u32 %r14, %nctaid.x;\nmul.lo.u32 %r14, %r14, 0;\nadd.u32 %r13, %r13, %r14;\n\
         mul.wide.u32 %rd2, %r13, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
         mad.lo.u32 %r6, %r10, 100, %r3;\nmad.lo.u32 %r6, %r11, 10000, %r6;\nst.global.u32 [%rd3], %r6;\nret;",
    );
    for block in [[12, 2, 3], [16, 3, 2], [32, 1, 1], [5, 1, 1]] {
        let expected: Vec<u32> = (0..block[2])
            .flat_map(|z| {
                (0..block[1]).flat_map(move |y| (0..block[0]).map(move |x| x + 100 * y + 10000 * z))
            })
            .collect();
        check_all_modes(&ptx, 1, block, 0, &expected);
    }
    // Groups of 64 lanes (compiled for blocks of 128) run blocks of 96 and 32 threads one
    // thread at a time.
    for block in [[96, 1, 1], [32, 2, 1]] {
        let expected: Vec<u32> = (0..block[1])
            .flat_map(|y| (0..block[0]).map(move |x| x + 100 * y))
            .collect();
        let got = run(&ptx, LaneGroups::AlwaysForBlockX(128), 1, block, 0);
        assert_eq!(got, expected, "{block:?}");
    }
}

#[test]
fn atomics_of_every_lane_count() {
    // Each thread adds its id to one counter: every lane's atomic happens once.
    let ptx = kernel("atom.global.add.u32 %r5, [%rd1], %r4;\nret;");
    for mode in [
        LaneGroups::Off,
        LaneGroups::Always,
        LaneGroups::AlwaysForBlockX(64),
    ] {
        let got = run(&ptx, mode, 8, [64, 1, 1], 0);
        assert_eq!(got[0], (0..512).sum::<u32>(), "{mode:?}");
    }
}

#[test]
fn half_arithmetic_of_a_group_matches_one_thread_at_a_time() {
    // Per-thread f16x2 and f16 values through fma, add and mul, with uniform operands too.
    let ptx = kernel(
        "mul.lo.u32 %r5, %r4, 0x00410043;\nxor.b32 %r5, %r5, 0x3C003800;\nmov.b32 %r6, 0x3C013BFF;\n\
         fma.rn.f16x2 %r7, %r5, %r6, %r5;\nadd.rn.ftz.sat.f16x2 %r8, %r7, %r5;\nfma.rn.relu.f16x2 %r8, %r8, %r7, %r5;\nsub.rn.f16x2 %r8, %r8, %r6;\nmul.rn.ftz.f16x2 %r8, %r8, %r7;\n\
         cvt.u16.u32 %rs1, %r7;\nfma.rn.ftz.f16 %rs2, %rs1, %rs1, %rs1;\n\
         mov.b16 %rs3, 0x3BFF;\nfma.rn.f16 %rs2, %rs2, %rs3, %rs1;\nmul.rn.f16 %rs2, %rs3, %rs2;\ncvt.u32.u16 %r10, %rs2;\n\
         xor.b32 %r8, %r8, %r10;\nst.global.u32 [%rd3], %r8;\nret;",
    )
    .replace(".reg .b64 %rd<4>;", ".reg .b64 %rd<4>;\n.reg .b16 %rs<4>;");
    // One-thread code is checked against the reference form by form (half_ops.rs); here the
    // group code (one helper call for the group's halves, a uniform operand passed as one
    // value) must give its bits: in groups of 64 and 32 lanes, and of 16 (where nine
    // instructions without a vector form, which run lane by lane, come first).
    let lane_by_lane = "cvt.u64.u32 %rd2, %r4;\n".repeat(9);
    let sixteen = ptx.replacen(
        "mul.lo.u32 %r5",
        &format!("{lane_by_lane}mul.lo.u32 %r5"),
        1,
    );
    for ptx in [ptx, sixteen] {
        let off = run(&ptx, LaneGroups::Off, 64, [256, 1, 1], 0);
        for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(256)] {
            assert_eq!(run(&ptx, groups, 64, [256, 1, 1], 0), off, "{groups:?}");
        }
        assert!(off.iter().any(|&v| v != 0));
    }
}

#[test]
fn a_loop_of_group_helper_calls_that_never_diverges_runs_wide_groups_alike() {
    // A loop on a uniform counter of half instructions (the helpers: `lanes::widens`), with
    // a uniform branch inside, a per-lane guarded instruction, a store and a load of each
    // lane's own element (a group's range checked at once) and integer work; compiled for
    // blocks of 256 (groups of 256 lanes) and of 128 (128 lanes), run with blocks of 256,
    // 512, 384, 128, 192 and 64 (a block its groups do not divide runs the form's
    // one-thread code).
    let ptx = kernel(
        "mul.lo.u32 %r5, %r4, 0x00410043;\nxor.b32 %r5, %r5, 0x3C003800;\nmov.b32 %r6, 0x3C013BFF;\n\
         cvt.u16.u32 %rs1, %r4;\nor.b16 %rs1, %rs1, 0x3800;\nmov.b16 %rs3, 0x3BFF;\n\
         and.b32 %r10, %r4, 3;\nsetp.eq.u32 %p2, %r10, 0;\nmov.u32 %r7, 0;\n\
         LOOP:\nfma.rn.f16x2 %r5, %r5, %r6, %r5;\nfma.rn.relu.bf16x2 %r8, %r5, %r6, %r5;\n\
         fma.rn.ftz.f16 %rs1, %rs1, %rs3, %rs1;\n@%p2 add.u32 %r8, %r8, %r4;\n\
         and.b32 %r11, %r7, 1;\nsetp.eq.u32 %p3, %r11, 1;\n@%p3 bra SKIP;\n\
         add.rn.ftz.f16x2 %r5, %r5, %r8;\nSKIP:\nst.global.u32 [%rd3], %r8;\n\
         ld.global.u32 %r12, [%rd3];\nxor.b32 %r5, %r5, %r12;\nadd.u32 %r7, %r7, 1;\n\
         setp.lt.u32 %p1, %r7, %r9;\n@%p1 bra LOOP;\ncvt.u32.u16 %r10, %rs1;\n\
         xor.b32 %r8, %r8, %r5;\nxor.b32 %r8, %r8, %r10;\nst.global.u32 [%rd3], %r8;\nret;",
    )
    .replace(".reg .b64 %rd<4>;", ".reg .b64 %rd<4>;\n.reg .b16 %rs<4>;");
    for x in [256, 512, 384, 128, 192, 64] {
        let off = run(&ptx, LaneGroups::Off, 6, [x, 1, 1], 7);
        assert!(off.iter().any(|&v| v != 0));
        for compiled_for in [256, 128] {
            let wide = run(
                &ptx,
                LaneGroups::AlwaysForBlockX(compiled_for),
                6,
                [x, 1, 1],
                7,
            );
            assert_eq!(wide, off, "blocks of {x}, compiled for {compiled_for}");
        }
    }
}

#[test]
fn a_register_that_group_helpers_keep_in_memory_has_each_lanes_value() {
    // %r5 is mostly read and written by half instructions in a loop, so the group code keeps
    // it in memory for the helpers (`lanes::homes`); integer instructions read it before and
    // after, and the lanes leave the loop at different trips (t mod 8), so a diverged
    // group's lanes take their values from there.
    let ptx = kernel(
        "mul.lo.u32 %r5, %r4, 0x00410043;\nxor.b32 %r5, %r5, 0x3C003800;\nmov.b32 %r6, 0x3C013BFF;\n\
         and.b32 %r8, %r4, 7;\nmov.u32 %r7, 0;\nLOOP:\nfma.rn.f16x2 %r5, %r5, %r6, %r5;\n\
         mul.rn.f16x2 %r5, %r5, %r6;\nadd.u32 %r7, %r7, 1;\nsetp.le.u32 %p1, %r7, %r8;\n@%p1 bra LOOP;\n\
         xor.b32 %r8, %r5, %r4;\nst.global.u32 [%rd3], %r8;\nret;",
    );
    for uniform_trips in [false, true] {
        // (With a uniform trip count the lanes agree and stay a group.)
        let ptx = if uniform_trips {
            ptx.replace("and.b32 %r8, %r4, 7;", "mov.u32 %r8, 5;")
        } else {
            ptx.clone()
        };
        let off = run(&ptx, LaneGroups::Off, 8, [64, 1, 1], 0);
        for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
            let got = run(&ptx, groups, 8, [64, 1, 1], 0);
            assert_eq!(got, off, "{groups:?}, uniform trips: {uniform_trips}");
        }
    }
}

/// Loads that group helpers read next from the buffer itself (`lanes::forward`): each
/// thread's x at out + 4t (or, lanes swapped in pairs, 4(t ^ 1)), y at out + 4096 + 4t, a
/// half at out + 8192 + 2t, its result at out + 12288 + 4t, in blocks of 256.
#[test]
fn loads_forwarded_to_group_helpers_give_one_threads_bits() {
    let body = |x_address: &str, between: &str| {
        kernel(&format!(
            ".reg .b16 %rs<4>;\n.reg .b64 %rw<4>;\n\
             mul.lo.u32 %r5, %r4, 0x00410043;\nxor.b32 %r5, %r5, 0x3C003800;\n\
             mul.lo.u32 %r6, %r4, 0x00270031;\nxor.b32 %r6, %r6, 0x38003400;\n{x_address}\
             st.global.u32 [%rw2], %r5;\nst.global.u32 [%rd3+4096], %r6;\n\
             mul.wide.u32 %rw1, %r4, 2;\nadd.s64 %rw1, %rd1, %rw1;\nst.global.u16 [%rw1+8192], %r5;\n\
             ld.global.u32 %r7, [%rw2];\nld.global.u32 %r8, [%rd3+4096];\n\
             ld.global.b16 %rs1, [%rw1+8192];\n{between}\
             fma.rn.f16x2 %r10, %r7, %r8, %r7;\nfma.rn.f16 %rs2, %rs1, %rs1, %rs1;\n\
             fma.rn.f16x2 %r7, %r7, %r8, %r10;\n\
             xor.b32 %r11, %r8, %r10;\nadd.rn.f16x2 %r12, %r8, %r11;\nadd.rn.f16x2 %r12, %r12, %r8;\n\
             mul.rn.f16 %rs2, %rs2, %rs1;\ncvt.u32.u16 %r13, %rs2;\nxor.b32 %r12, %r12, %r13;\n\
             xor.b32 %r12, %r12, %r7;\n\
             st.global.u32 [%rd3+12288], %r12;\nret;"
        ))
    };
    let contiguous = "mov.b64 %rw2, %rd3;\n";
    // Not one range: the loads go lane by lane.
    let swapped = "xor.b32 %r13, %r4, 1;\nmul.wide.u32 %rw2, %r13, 4;\nadd.s64 %rw2, %rd1, %rw2;\n";
    // Stores between the loads and the helpers: these read what the loads read.
    let stores = "st.global.u32 [%rw2], %r6;\nst.global.u32 [%rd3+4096], %r5;\n\
                  st.global.u16 [%rw1+8192], %r6;\n";
    for (x_address, between) in [
        (contiguous, ""),
        (swapped, ""),
        (contiguous, stores),
        (swapped, stores),
    ] {
        let ptx = body(x_address, between);
        let want = run_bytes(&ptx, LaneGroups::Off, 4, [256, 1, 1], 16384, 0);
        assert!(want[12288..].iter().any(|&b| b != 0));
        for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(256)] {
            let got = run_bytes(&ptx, groups, 4, [256, 1, 1], 16384, 0);
            assert!(got == want, "{groups:?}: {ptx}");
        }
    }
}

#[test]
fn every_launch_of_a_kernel_on_its_way_to_the_group_form_is_correct() {
    let ptx = kernel("add.u32 %r6, %r4, %r9;\nst.global.u32 [%rd3], %r6;\nret;");
    let m = module(&ptx, LaneGroups::WhenHot);
    let k = m.kernel("k").unwrap();
    // Small launches (one-thread form), then larger ones, which may start the group form's
    // compile and switch to it part-way: all correct.
    for (grid, n) in [(1u32, 5u32), (1, 6), (64, 7), (64, 8)] {
        let out = DeviceBuffer::zeroed(grid as usize * 256 * 4).unwrap();
        k.launch(grid, 256, &[Arg::buffer(&out), Arg::u32(n)])
            .unwrap();
        let got: Vec<u32> = out
            .to_bytes()
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let expected: Vec<u32> = (0..grid * 256).map(|t| t + n).collect();
        assert_eq!(got, expected, "grid {grid}");
    }
}

/// Runs `body` (after `HEADER`, with `%r5`, `%r6` two hashes of the thread index, `%f1`, `%f2`
/// those bits as f32, some made NaN, infinite or subnormal, and `%rs1`, `%rs2` their low
/// halves) in lane groups and one thread at a time: the same results.
fn same_as_one_thread(body: &str) {
    let ptx = kernel(&format!(
        ".reg .b16 %rs<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rw<8>;\n\
         mul.lo.u32 %r5, %r4, -1640531535;\nmul.lo.u32 %r6, %r4, -2048144789;\n\
         and.b32 %r7, %r4, 7;\nsetp.eq.u32 %p3, %r7, 1;\nselp.b32 %r5, 0x7FC00001, %r5, %p3;\n\
         setp.eq.u32 %p3, %r7, 2;\nselp.b32 %r6, 0xFF800000, %r6, %p3;\n\
         setp.eq.u32 %p3, %r7, 3;\nselp.b32 %r5, 0x00000003, %r5, %p3;\n\
         mov.b32 %f1, %r5;\nmov.b32 %f2, %r6;\ncvt.u16.u32 %rs1, %r5;\ncvt.u16.u32 %rs2, %r6;\n{body}\n\
         st.global.u32 [%rd3], %r8;\nret;"
    ));
    let want = run(&ptx, LaneGroups::Off, 4, [64, 1, 1], 5);
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        let got = run(&ptx, groups, 4, [64, 1, 1], 5);
        assert_eq!(got, want, "{groups:?}: {body}");
    }
}

#[test]
fn a_register_given_one_value_for_every_lane_and_per_lane_values_elsewhere_has_both() {
    // `%r8`, `%rw1`, `%p2` and `%f3` vary by lane, but each is first written from uniform
    // operands (a parameter, a constant, the block's size), lowered once for the group.
    same_as_one_thread(
        "ld.param.u32 %r8, [n];\nadd.u32 %r8, %r8, %ntid.x;\nadd.u32 %r8, %r8, %r5;\n\
         ld.param.u64 %rw1, [out];\nadd.s64 %rw1, %rw1, %rd2;\nsub.s64 %rw1, %rw1, %rd1;\n\
         cvt.u32.u64 %r7, %rw1;\nadd.u32 %r8, %r8, %r7;\nmul.wide.u32 %rw1, %r6, 3;\n\
         cvt.u32.u64 %r7, %rw1;\n\
         xor.b32 %r8, %r8, %r7;\nsetp.gt.u32 %p2, %r9, 4;\nselp.b32 %r7, 1, 2, %p2;\n\
         add.u32 %r8, %r8, %r7;\nsetp.lt.u32 %p2, %r5, %r6;\nselp.b32 %r7, 4, 8, %p2;\n\
         add.u32 %r8, %r8, %r7;\nmov.f32 %f3, 0f3FC00000;\nadd.f32 %f3, %f3, %f3;\n\
         mov.b32 %r7, %f3;\nadd.u32 %r8, %r8, %r7;\nmov.b32 %f3, %r6;\nmov.b32 %r7, %f3;\n\
         add.u32 %r8, %r8, %r7;",
    );
    // A guarded write of a uniform value keeps the old value in the lanes whose guard fails.
    same_as_one_thread("mov.u32 %r8, %r5;\nsetp.lt.u32 %p2, %r5, %r6;\n@%p2 mov.u32 %r8, 7;");
}

#[test]
fn integer_vector_forms_match_one_thread_at_a_time() {
    for op in [
        "add.s32",
        "sub.u32",
        "mul.lo.s32",
        "and.b32",
        "or.b32",
        "xor.b32",
        "min.s32",
        "min.u32",
        "max.s32",
        "max.u32",
    ] {
        same_as_one_thread(&format!("{op} %r8, %r5, %r6;"));
        same_as_one_thread(&format!("{op} %r8, %r5, 12345;"));
    }
    for op in ["add.u16", "mul.lo.u16", "min.s16", "max.u16", "sub.s16"] {
        same_as_one_thread(&format!("{op} %rs3, %rs1, %rs2;\ncvt.u32.u16 %r8, %rs3;"));
    }
    same_as_one_thread("mad.lo.s32 %r8, %r5, %r6, %r4;");
    same_as_one_thread("not.b32 %r8, %r5;");
    same_as_one_thread("neg.s32 %r8, %r5;");
    for n in [0, 1, 31, 32, 40] {
        for op in ["shl.b32", "shr.u32", "shr.s32"] {
            same_as_one_thread(&format!("{op} %r8, %r5, {n};"));
        }
    }
    // Widening: by a power of two (a shift), by a register, and with an addend.
    for ty in ["s32", "u32"] {
        for b in ["8", "%r6", "-3"] {
            same_as_one_thread(&format!(
                "mul.wide.{ty} %rw5, %r5, {b};\nshr.u64 %rw5, %rw5, 17;\ncvt.u32.u64 %r8, %rw5;"
            ));
        }
        same_as_one_thread(&format!(
            "cvt.u64.u32 %rw6, %r6;\nmad.wide.{ty} %rw5, %r5, %r6, %rw6;\nshr.u64 %rw5, %rw5, 9;\n\
             cvt.u32.u64 %r8, %rw5;"
        ));
    }
    same_as_one_thread("mul.wide.s16 %r8, %rs1, %rs2;");
    // A multiplier with the type's top bit set is negative in a signed multiply, not the
    // power of two its bits read as unsigned.
    same_as_one_thread(
        "mul.wide.s32 %rw5, %r5, 0x80000000;\nshr.u64 %rw5, %rw5, 17;\ncvt.u32.u64 %r8, %rw5;",
    );
    // The product's upper half: by a register, a power of two, a negative power, a constant.
    for ty in ["s32", "u32"] {
        for b in ["%r6", "4", "0x80000000", "-1640531535"] {
            same_as_one_thread(&format!("mul.hi.{ty} %r8, %r5, {b};"));
        }
        same_as_one_thread(&format!("mad.hi.{ty} %r8, %r5, %r6, %r4;"));
    }
    for ty in ["s16", "u16"] {
        same_as_one_thread(&format!(
            "mul.hi.{ty} %rs3, %rs1, %rs2;\ncvt.u32.u16 %r8, %rs3;"
        ));
        same_as_one_thread(&format!(
            "mad.hi.{ty} %rs3, %rs1, %rs2, %rs1;\ncvt.u32.u16 %r8, %rs3;"
        ));
    }
    // Predicates: and, or, xor, not of two comparisons.
    for op in ["and.pred", "or.pred", "xor.pred"] {
        same_as_one_thread(&format!(
            "setp.lt.s32 %p1, %r5, %r6;\nsetp.gt.u32 %p2, %r5, 99;\n{op} %p1, %p1, %p2;\n\
             not.pred %p2, %p1;\nselp.u32 %r8, 1, 2, %p2;"
        ));
    }
}

#[test]
fn comparison_vector_forms_match_one_thread_at_a_time() {
    for cmp in ["eq", "ne", "lt", "le", "gt", "ge"] {
        for ty in ["s32", "u32", "s16", "u16"] {
            let (a, b) = if ty.ends_with("16") {
                ("%rs1", "%rs2")
            } else {
                ("%r5", "%r6")
            };
            same_as_one_thread(&format!(
                "setp.{cmp}.{ty} %p1, {a}, {b};\nselp.u32 %r8, 7, 9, %p1;"
            ));
        }
    }
    for cmp in ["lo", "ls", "hi", "hs"] {
        same_as_one_thread(&format!(
            "setp.{cmp}.u32 %p1, %r5, %r6;\nselp.u32 %r8, 7, 9, %p1;"
        ));
    }
    // f32, ordered and not: NaN lanes among them.
    for cmp in [
        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    ] {
        same_as_one_thread(&format!(
            "setp.{cmp}.f32 %p1, %f1, %f2;\nselp.u32 %r8, 7, 9, %p1;"
        ));
        same_as_one_thread(&format!(
            "setp.{cmp}.f32 %p1, %f1, %f1;\nselp.u32 %r8, 7, 9, %p1;"
        ));
    }
}

#[test]
fn a_unit_stride_index_compared_with_a_uniform_value_matches_one_thread_at_a_time() {
    // lane k = lane 0 + k (the thread index, also moved to cross the end of the signed and the
    // unsigned range inside a group) against constants below, inside, at the edges of and
    // above a group's values, on either side; each comparison a bit of the result.
    let bases = [
        (
            "mov.u32 %r10, %r4;",
            vec![0, 5, 31, 32, 33, 64, 100, 200, 255, 256, -1],
        ),
        (
            "add.u32 %r10, %r4, 0x7FFFFFF8;",
            vec![
                0x7FFF_FFF8,
                0x7FFF_FFFF,
                -0x8000_0000,
                -0x7FFF_FFF8,
                -0x7FFF_FF00,
                0,
            ],
        ),
        (
            "add.u32 %r10, %r4, 0xFFFFFFF8;",
            vec![-8, -1, 0, 5, 0x100, 0x7FFF_FFFF],
        ),
    ];
    let mut forms: Vec<(&str, &str)> = ["eq", "ne", "lt", "le", "gt", "ge"]
        .iter()
        .flat_map(|c| [(*c, "s32"), (*c, "u32")])
        .collect();
    forms.extend(["lo", "ls", "hi", "hs"].map(|c| (c, "u32")));
    for (base, constants) in &bases {
        for &(cmp, ty) in &forms {
            for index_first in [true, false] {
                let mut body = format!("{base}\nmov.u32 %r8, 0;\n");
                for k in constants {
                    let (a, b) = if index_first {
                        ("%r10".to_string(), k.to_string())
                    } else {
                        (k.to_string(), "%r10".to_string())
                    };
                    body += &format!(
                        "setp.{cmp}.{ty} %p1, {a}, {b};\nselp.u32 %r7, 1, 0, %p1;\n\
                         mad.lo.u32 %r8, %r8, 2, %r7;\n"
                    );
                }
                same_as_one_thread(&body);
            }
        }
    }
    // A group of 32 (one lane-by-lane instruction): the thread index itself and a uniform
    // register.
    for cmp in ["lt", "ge", "eq", "ne"] {
        same_as_one_thread(&format!(
            "mov.u32 %r10, %tid.x;\nsetp.{cmp}.u32 %p1, %r10, 40;\nselp.u32 %r8, 7, 9, %p1;"
        ));
        same_as_one_thread(&format!(
            "setp.{cmp}.s32 %p1, %r9, %r4;\nselp.u32 %r8, 7, 9, %p1;"
        ));
    }
}

#[test]
fn float_vector_forms_match_one_thread_at_a_time() {
    for op in [
        "add.f32",
        "sub.rn.f32",
        "mul.f32",
        "add.ftz.f32",
        "mul.sat.f32",
    ] {
        same_as_one_thread(&format!("{op} %f3, %f1, %f2;\nmov.b32 %r8, %f3;"));
    }
    same_as_one_thread("fma.rn.f32 %f3, %f1, %f2, %f1;\nmov.b32 %r8, %f3;");
    same_as_one_thread("fma.rn.ftz.sat.f32 %f3, %f1, %f2, %f1;\nmov.b32 %r8, %f3;");
    for op in [
        "div.rn.f32",
        "div.full.ftz.f32",
        "div.approx.f32",
        "sub.ftz.sat.f32",
        "min.f32",
        "max.ftz.f32",
    ] {
        same_as_one_thread(&format!("{op} %f3, %f1, %f2;\nmov.b32 %r8, %f3;"));
    }
    // Equal operands (±0 among them) and NaNs in both places.
    for (x, y) in [("%f1", "%f1"), ("%f1", "0f80000000"), ("0f00000000", "%f1")] {
        for op in ["min.f32", "max.f32"] {
            same_as_one_thread(&format!("{op} %f3, {x}, {y};\nmov.b32 %r8, %f3;"));
        }
    }
    for op in [
        "sqrt.rn.f32",
        "sqrt.approx.ftz.f32",
        "rcp.rn.f32",
        "rcp.approx.ftz.f32",
        "rsqrt.approx.f32",
        "neg.f32",
        "abs.ftz.f32",
    ] {
        same_as_one_thread(&format!("{op} %f3, %f2;\nmov.b32 %r8, %f3;"));
    }
    // `.b32` registers as f32 operands and results (Triton declares no others).
    for op in ["add.f32", "mul.rn.f32", "min.f32", "div.rn.f32"] {
        same_as_one_thread(&format!("{op} %r8, %r5, %r6;"));
    }
    same_as_one_thread("fma.rn.f32 %r8, %r5, %r6, %r5;");
    same_as_one_thread("sqrt.rn.f32 %r8, %r6;");
    same_as_one_thread("setp.lt.f32 %p1, %r5, %r6;\nselp.u32 %r8, 1, 2, %p1;");
    // Halves through the group helper (or lane by lane, on hosts without it).
    for op in [
        "fma.rn.f16x2",
        "fma.rn.bf16x2",
        "fma.rn.sat.f16x2",
        "fma.rn.relu.bf16x2",
    ] {
        same_as_one_thread(&format!("{op} %r8, %r5, %r6, %r5;"));
    }
    for op in ["add.f16", "mul.ftz.f16", "fma.rn.bf16", "sub.bf16"] {
        let srcs = if op.starts_with("fma") {
            "%rs1, %rs2, %rs1"
        } else {
            "%rs1, %rs2"
        };
        same_as_one_thread(&format!("{op} %rs3, {srcs};\ncvt.u32.u16 %r8, %rs3;"));
    }
}

#[test]
fn moves_to_and_from_a_registers_halves_match_one_thread_at_a_time() {
    // A 32-bit register's 16-bit halves out, swapped back in; one half wanted; a half the
    // same in every lane.
    same_as_one_thread("mov.b32 {%rs3, %rs4}, %r5;\nmov.b32 %r8, {%rs4, %rs3};");
    same_as_one_thread("mov.b32 {_, %rs3}, %r6;\ncvt.u32.u16 %r8, %rs3;");
    same_as_one_thread("cvt.u16.u32 %rs5, %r9;\nmov.b32 %r8, {%rs1, %rs5};");
    // A 64-bit register's 32-bit halves, and a packed product's.
    same_as_one_thread(
        "mov.b64 %rw5, {%r5, %r6};\nmov.b64 {%r7, %r8}, %rw5;\nshl.b32 %r8, %r8, 1;\n\
         xor.b32 %r8, %r8, %r7;",
    );
    same_as_one_thread(
        "mul.wide.u32 %rw5, %r5, %r6;\nmov.b64 {%r7, %r8}, %rw5;\nadd.u32 %r8, %r8, %r7;",
    );
}

#[test]
fn integer_conversions_and_moves_between_classes_match_one_thread_at_a_time() {
    // Cut to the low bits, then extended by the narrow type's signedness (the result's high
    // bits shown), through 16, 32 and 64 bits.
    let (from_32, show_32) = ("mov.b32 %r7, %r5;", "mov.b32 %r8, %r7;");
    let (from_64, show_64) = (
        "mul.wide.s32 %rw5, %r5, %r6;",
        "shr.u64 %rw5, %rw5, 17;\ncvt.u32.u64 %r8, %rw5;",
    );
    for (narrow, wide, n, w, from, show) in [
        ("u16", "u32", "%rs3", "%r7", from_32, show_32),
        ("s16", "s32", "%rs3", "%r7", from_32, show_32),
        ("u32", "u64", "%r7", "%rw5", from_64, show_64),
        ("s32", "s64", "%r7", "%rw5", from_64, show_64),
        ("s16", "s64", "%rs3", "%rw5", from_64, show_64),
    ] {
        same_as_one_thread(&format!(
            "{from}\ncvt.{narrow}.{wide} {n}, {w};\ncvt.{wide}.{narrow} {w}, {n};\n{show}"
        ));
    }
    // Bits between an integer and a float register, both ways.
    same_as_one_thread("mov.b32 %f3, %r5;\nadd.f32 %f3, %f3, %f2;\nmov.b32 %r8, %f3;");
    // To f32, rounded to nearest even.
    for (src, x) in [
        ("s32", "%r5"),
        ("u32", "%r6"),
        ("s16", "%rs1"),
        ("u16", "%rs2"),
    ] {
        same_as_one_thread(&format!("cvt.rn.f32.{src} %f3, {x};\nmov.b32 %r8, %f3;"));
    }
    same_as_one_thread("cvt.rn.sat.f32.s32 %f3, %r5;\nmov.b32 %r8, %f3;");
    // .sat: clamped to the destination's range, between every pair of 16- and 32-bit types
    // (hashes of both signs and of small magnitudes, the result's bits shown).
    for dst in ["u16", "s16", "u32", "s32"] {
        for src in ["u16", "s16", "u32", "s32"] {
            let (x, d) = (
                if src.ends_with("16") { "%rs1" } else { "%r5" },
                if dst.ends_with("16") { "%rs3" } else { "%r7" },
            );
            let show = if dst.ends_with("16") {
                "cvt.u32.u16 %r8, %rs3;"
            } else {
                "mov.b32 %r8, %r7;"
            };
            same_as_one_thread(&format!("cvt.sat.{dst}.{src} {d}, {x};\n{show}"));
            same_as_one_thread(&format!(
                "shr.s32 %r6, %r6, 16;\ncvt.u16.u32 %rs1, %r6;\ncvt.sat.{dst}.{src} {d}, {};\n{show}",
                if src.ends_with("16") { "%rs1" } else { "%r6" }
            ));
        }
    }
}

#[test]
fn selp_of_every_width_matches_one_thread_at_a_time() {
    // A predicate that varies by lane and one the same in every lane (`n` > 4).
    for p in ["setp.lt.u32 %p1, %r5, %r6;", "setp.gt.u32 %p1, %r9, 4;"] {
        same_as_one_thread(&format!("{p}\nselp.b32 %r8, %r5, %r6, %p1;"));
        same_as_one_thread(&format!("{p}\nselp.u32 %r8, %r5, 77, %p1;"));
        same_as_one_thread(&format!(
            "{p}\nselp.f32 %f3, %f1, %f2, %p1;\nmov.b32 %r8, %f3;"
        ));
        same_as_one_thread(&format!(
            "{p}\nselp.b16 %rs3, %rs1, %rs2, %p1;\ncvt.u32.u16 %r8, %rs3;"
        ));
        same_as_one_thread(&format!(
            "{p}\nmul.wide.u32 %rw5, %r5, %r6;\nmul.wide.u32 %rw6, %r6, 3;\n\
             selp.b64 %rw5, %rw5, %rw6, %p1;\nshr.u64 %rw5, %rw5, 13;\ncvt.u32.u64 %r8, %rw5;"
        ));
    }
}

#[test]
fn half_sign_and_order_vector_forms_match_one_thread_at_a_time() {
    // Pairs of hashed halves (NaNs, infinities and subnormals among them), f16 and bf16.
    for ty in ["f16x2", "bf16x2"] {
        for op in ["neg", "abs", "neg.ftz", "abs.ftz"] {
            if ty == "bf16x2" && op.ends_with("ftz") {
                continue;
            }
            same_as_one_thread(&format!("{op}.{ty} %r8, %r5;"));
        }
        for op in ["min", "max", "min.NaN", "max.NaN", "min.ftz", "max.ftz.NaN"] {
            if ty == "bf16x2" && op.contains("ftz") {
                continue;
            }
            same_as_one_thread(&format!("{op}.{ty} %r8, %r5, %r6;"));
            same_as_one_thread(&format!("{op}.{ty} %r8, %r5, %r5;"));
            // Against +0 and −0, and a NaN, the same in every lane.
            for c in ["0x00008000", "0x80000000", "0x7E017E01"] {
                same_as_one_thread(&format!("{op}.{ty} %r8, %r5, {c};"));
            }
        }
    }
    for ty in ["f16x2", "bf16x2"] {
        same_as_one_thread(&format!("tanh.approx.{ty} %r8, %r5;"));
    }
    same_as_one_thread("ex2.approx.f16x2 %r8, %r6;");
    for ty in ["f16", "bf16"] {
        for op in ["neg", "abs", "min", "max.NaN"] {
            let srcs = if op.starts_with('m') {
                "%rs1, %rs2"
            } else {
                "%rs1"
            };
            same_as_one_thread(&format!("{op}.{ty} %rs3, {srcs};\ncvt.u32.u16 %r8, %rs3;"));
        }
    }
}

#[test]
fn half_sign_order_and_table_vector_forms_match_one_thread_for_every_half() {
    // Lane i: a = the half i, b = another half of i's (both halves of a pair the same).
    for op in [
        "min.f16",
        "max.f16",
        "min.NaN.f16",
        "max.ftz.f16",
        "min.bf16",
        "max.NaN.bf16",
        "neg.f16",
        "abs.ftz.f16",
        "abs.bf16",
        "tanh.approx.f16",
        "tanh.approx.bf16",
        "ex2.approx.f16",
        "ex2.approx.ftz.bf16",
    ] {
        let srcs = if op.starts_with('m') {
            "%rs1, %rs2"
        } else {
            "%rs1"
        };
        let ptx = kernel(&format!(
            ".reg .b16 %rs<4>;\ncvt.u16.u32 %rs1, %r4;\nmul.lo.u32 %r5, %r4, 40503;\n\
             shr.u32 %r5, %r5, 3;\ncvt.u16.u32 %rs2, %r5;\n{op} %rs3, {srcs};\n\
             cvt.u32.u16 %r8, %rs3;\nst.global.u32 [%rd3], %r8;\nret;"
        ));
        let want = run(&ptx, LaneGroups::Off, 1024, [64, 1, 1], 0);
        let got = run(&ptx, LaneGroups::AlwaysForBlockX(64), 1024, [64, 1, 1], 0);
        assert!(got == want, "{op}");
    }
}

const FLOAT_CMPS: [&str; 14] = [
    "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
];

#[test]
fn half_comparison_vector_forms_match_one_thread_at_a_time() {
    // Pairs of hashed halves (NaNs, infinities and subnormals among them), against
    // themselves and against ±0 and a NaN the same in every lane.
    let both = "selp.u32 %r8, 1, 0, %p1;\nselp.u32 %r7, 2, 0, %p2;\nor.b32 %r8, %r8, %r7;";
    for ty in ["f16x2", "bf16x2"] {
        let ftz = if ty == "f16x2" { ".ftz" } else { "" };
        for cmp in FLOAT_CMPS {
            for (x, y) in [("%r5", "%r6"), ("%r5", "%r5"), ("%r5", "0x80000000")] {
                same_as_one_thread(&format!("setp.{cmp}{ftz}.{ty} %p1|%p2, {x}, {y};\n{both}"));
            }
            same_as_one_thread(&format!("set.{cmp}.u32.{ty} %r8, %r5, %r6;"));
            same_as_one_thread(&format!("set.{cmp}{ftz}.{ty}.{ty} %r8, %r6, 0x7E010000;"));
        }
        // A BoolOp with a predicate that varies.
        same_as_one_thread(&format!("setp.lt.and.{ty} %p1|%p2, %r5, %r6, %p3;\n{both}"));
        same_as_one_thread(&format!("set.geu.xor.u32.{ty} %r8, %r5, %r6, %p3;"));
    }
    for ty in ["f16", "bf16"] {
        let ftz = if ty == "f16" { ".ftz" } else { "" };
        for cmp in FLOAT_CMPS {
            same_as_one_thread(&format!("setp.{cmp}.{ty} %p1|%p2, %rs1, %rs2;\n{both}"));
            same_as_one_thread(&format!(
                "set.{cmp}.{ty}.{ty} %rs3, %rs1, %rs2;\ncvt.u32.u16 %r8, %rs3;"
            ));
            same_as_one_thread(&format!("set.{cmp}{ftz}.u32.{ty} %r8, %rs1, 0x8000;"));
            same_as_one_thread(&format!(
                "set.{cmp}.u16.{ty} %rs3, %rs2, %rs2;\ncvt.u32.u16 %r8, %rs3;"
            ));
        }
        same_as_one_thread(&format!(
            "setp.gt.or.{ty} %p1|%p2, %rs1, %rs2, %p3;\n{both}"
        ));
        same_as_one_thread(&format!(
            "set.ne.and.s16.{ty} %rs3, %rs1, %rs2, %p3;\ncvt.u32.u16 %r8, %rs3;"
        ));
    }
}

#[test]
fn half_comparisons_match_one_thread_for_every_half() {
    // Lane i: a = the half i, b = another half of i's; each comparison a bit of the result.
    for (ty, ftz) in [("f16", ""), ("f16", ".ftz"), ("bf16", "")] {
        let compares: String = FLOAT_CMPS
            .iter()
            .enumerate()
            .map(|(bit, cmp)| {
                format!(
                    "setp.{cmp}{ftz}.{ty} %p1, %rs1, %rs2;\nselp.u32 %r7, {}, 0, %p1;\n\
                     or.b32 %r8, %r8, %r7;\n",
                    1u32 << bit
                )
            })
            .collect();
        let ptx = kernel(&format!(
            ".reg .b16 %rs<4>;\ncvt.u16.u32 %rs1, %r4;\nmul.lo.u32 %r5, %r4, 40503;\n\
             shr.u32 %r5, %r5, 3;\ncvt.u16.u32 %rs2, %r5;\nmov.u32 %r8, 0;\n{compares}\
             st.global.u32 [%rd3], %r8;\nret;"
        ));
        let want = run(&ptx, LaneGroups::Off, 1024, [64, 1, 1], 0);
        let got = run(&ptx, LaneGroups::AlwaysForBlockX(64), 1024, [64, 1, 1], 0);
        assert!(got == want, "{ty}{ftz}");
    }
}

#[test]
fn conversions_between_halves_and_f32_match_one_thread_at_a_time() {
    for ty in ["f16", "bf16"] {
        for m in ["", ".ftz"] {
            same_as_one_thread(&format!("cvt{m}.f32.{ty} %f3, %rs1;\nmov.b32 %r8, %f3;"));
            for rnd in ["rn", "rz", "rm", "rp"] {
                same_as_one_thread(&format!(
                    "cvt.{rnd}{m}.{ty}.f32 %rs3, %f1;\ncvt.{rnd}{m}.{ty}.f32 %rs4, %f2;\n\
                     mov.b32 %r8, {{%rs3, %rs4}};"
                ));
            }
            same_as_one_thread(&format!("cvt.rz.{ty}x2.f32 %r8, %f1, %f2;"));
            same_as_one_thread(&format!("cvt.rni{m}.s32.f32 %r8, %f1;"));
            same_as_one_thread(&format!("cvt.rzi.s32.{ty} %r8, %rs1;"));
        }
    }
}

#[test]
fn conversions_between_halves_and_f32_match_one_thread_for_every_half_and_many_floats() {
    // Lane i: the half i widened; f32s i × a large odd number (every sign and exponent) and
    // i × 2^15 (the positive range in even steps), narrowed.
    for body in [
        "cvt.f32.f16 %f3, %rs1;\nmov.b32 %r8, %f3;",
        "cvt.ftz.f32.bf16 %f3, %rs1;\nmov.b32 %r8, %f3;",
        "cvt.rn.f16.f32 %rs2, %f1;\ncvt.rn.f16.f32 %rs3, %f2;\nmov.b32 %r8, {%rs2, %rs3};",
        "cvt.rn.bf16.f32 %rs2, %f1;\ncvt.rn.ftz.bf16.f32 %rs3, %f2;\n\
         mov.b32 %r8, {%rs2, %rs3};",
        "cvt.rn.ftz.f16.f32 %rs2, %f1;\ncvt.rn.bf16.f32 %rs3, %f2;\nmov.b32 %r8, {%rs2, %rs3};",
        // Directed rounding, pairs, .relu and .satfinite.
        "cvt.rz.f16.f32 %rs2, %f1;\ncvt.rm.f16.f32 %rs3, %f2;\nmov.b32 %r8, {%rs2, %rs3};",
        "cvt.rp.f16.f32 %rs2, %f1;\ncvt.rm.ftz.f16.f32 %rs3, %f1;\nmov.b32 %r8, {%rs2, %rs3};",
        "cvt.rz.bf16.f32 %rs2, %f1;\ncvt.rp.bf16.f32 %rs3, %f2;\nmov.b32 %r8, {%rs2, %rs3};",
        "cvt.rm.bf16.f32 %rs2, %f1;\ncvt.rz.relu.f16.f32 %rs3, %f1;\nmov.b32 %r8, {%rs2, %rs3};",
        "cvt.rn.f16x2.f32 %r8, %f1, %f2;",
        "cvt.rz.relu.satfinite.f16x2.f32 %r8, %f2, %f1;",
        "cvt.rn.relu.bf16x2.f32 %r8, %f1, %f2;",
        "cvt.rn.satfinite.f16.f32 %rs2, %f1;\ncvt.rz.satfinite.bf16.f32 %rs3, %f1;\n\
         mov.b32 %r8, {%rs2, %rs3};",
        // To integers, from f32 and halves.
        "cvt.rni.s32.f16 %r8, %rs1;",
        "cvt.rzi.u32.bf16 %r8, %rs1;",
        "cvt.rni.s32.f32 %r8, %f1;",
        "cvt.rzi.u32.f32 %r8, %f2;",
        "cvt.rpi.ftz.s32.f32 %r8, %f1;",
        "cvt.rmi.s16.f32 %rs2, %f1;\ncvt.rpi.u16.f16 %rs3, %rs1;\nmov.b32 %r8, {%rs2, %rs3};",
        "cvt.rzi.u16.f32 %rs2, %f1;\ncvt.rni.s16.bf16 %rs3, %rs1;\nmov.b32 %r8, {%rs2, %rs3};",
    ] {
        let ptx = kernel(&format!(
            ".reg .b16 %rs<4>;\n.reg .f32 %f<4>;\ncvt.u16.u32 %rs1, %r4;\n\
             mul.lo.u32 %r5, %r4, -1640531535;\nmov.b32 %f1, %r5;\nshl.b32 %r6, %r4, 15;\n\
             mov.b32 %f2, %r6;\n{body}\nst.global.u32 [%rd3], %r8;\nret;"
        ));
        let want = run(&ptx, LaneGroups::Off, 1024, [64, 1, 1], 0);
        let got = run(&ptx, LaneGroups::AlwaysForBlockX(64), 1024, [64, 1, 1], 0);
        assert!(got == want, "{body}");
    }
}

/// Loads and stores: contiguous lanes (one range check) and a stride (lane by lane), of 32-
/// and 16-bit values.
#[test]
fn memory_vector_forms_match_one_thread_at_a_time() {
    same_as_one_thread(
        "st.global.u32 [%rd3], %r5;\nld.global.u32 %r8, [%rd3];\nadd.u32 %r8, %r8, 1;",
    );
    same_as_one_thread(
        "st.global.u16 [%rd3], %rs1;\nst.global.u16 [%rd3+2], %rs2;\nld.global.u16 %rs3, [%rd3+2];\n\
         cvt.u32.u16 %r8, %rs3;",
    );
}

/// Byte and halfword accesses to and from wider registers, contiguous across the lanes: a
/// store keeps the register's low bytes, a load extends by the access type's signedness.
#[test]
fn accesses_narrower_than_their_register_match_one_thread_at_a_time() {
    // 256 threads: bytes at out + t, halfwords at out + 256 + 2t, bytes again at out + 768 + t.
    let ptx = kernel(
        ".reg .b16 %rs<4>;\n.reg .b64 %rw<4>;\n\
         mul.lo.u32 %r5, %r4, -1640531535;\ncvt.u16.u32 %rs1, %r4;\n\
         cvt.u64.u32 %rw1, %r4;\nadd.s64 %rw1, %rd1, %rw1;\nmul.wide.u32 %rw2, %r4, 2;\n\
         add.s64 %rw2, %rd1, %rw2;\n\
         st.global.u8 [%rw1], %r5;\nld.global.s8 %r6, [%rw1];\nld.global.u8 %rs2, [%rw1];\n\
         st.global.u16 [%rw2+256], %r6;\nld.global.s16 %r7, [%rw2+256];\n\
         ld.global.u8 %r8, [%rw1];\nadd.u32 %r7, %r7, %r8;\nadd.u16 %rs2, %rs2, %rs1;\n\
         st.global.u8 [%rw1+768], %rs2;\nst.global.u16 [%rw2+256], %r7;\nret;",
    );
    let want = run(&ptx, LaneGroups::Off, 4, [64, 1, 1], 0);
    assert!(want[..64].iter().any(|&w| w != 0), "bytes stored");
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert_eq!(run(&ptx, groups, 4, [64, 1, 1], 0), want, "{groups:?}");
    }
}

/// `.v2` and `.v4` loads and stores, contiguous across the lanes (16, 8 and 4 bytes a
/// lane), a sink among the destinations, elements narrower than their registers.
#[test]
fn vector_accesses_match_one_thread_at_a_time() {
    // 256 threads, 32 bytes each: 16 a lane from out, 8 from out + 4096, 4 from out + 6144
    // and out + 7168.
    let ptx = kernel(
        ".reg .b16 %rs<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rw<4>;\n\
         mul.lo.u32 %r5, %r4, -1640531535;\nmul.lo.u32 %r6, %r4, -2048144789;\n\
         mov.b32 %f1, %r5;\nmov.b32 %f2, %r6;\n\
         mul.wide.u32 %rw1, %r4, 16;\nadd.s64 %rw1, %rd1, %rw1;\n\
         mul.wide.u32 %rw2, %r4, 8;\nadd.s64 %rw2, %rd1, %rw2;\n\
         st.global.v4.f32 [%rw1], {%f1, %f2, %f2, %f1};\n\
         ld.global.v4.f32 {%f3, %f4, _, %f5}, [%rw1];\nadd.rn.f32 %f3, %f3, %f4;\n\
         st.global.v2.f32 [%rw2+4096], {%f3, %f5};\nld.global.v2.u32 {%r7, %r8}, [%rw2+4096];\n\
         st.global.v2.u16 [%rd3+6144], {%r7, %r8};\n\
         ld.global.v4.u8 {%rs1, %rs2, %rs3, %rs4}, [%rd3+6144];\n\
         ld.global.v2.s16 {%r9, %r10}, [%rd3+6144];\nadd.u16 %rs1, %rs1, %rs4;\n\
         add.u32 %r9, %r9, %r10;\n\
         st.global.v4.u8 [%rd3+7168], {%rs1, %rs2, %r9, 7};\n\
         st.global.v2.b16 [%rw2+4100], {%rs3, %rs2};\nret;",
    );
    let want = run_bytes(&ptx, LaneGroups::Off, 4, [64, 1, 1], 8192, 0);
    assert!(want[7168..].iter().any(|&w| w != 0), "bytes stored");
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert!(
            run_bytes(&ptx, groups, 4, [64, 1, 1], 8192, 0) == want,
            "{groups:?}"
        );
    }
}

/// Guarded loads and stores (a bound on the thread index, as Triton writes them): groups
/// whose lanes all pass, some, or none; a negated guard; a guard the same in every lane; a
/// strided access.
#[test]
fn guarded_accesses_match_one_thread_at_a_time() {
    // 256 threads, the first 200 within the bound n (a group of 64 lanes split at 200); each
    // thread's word at out + 4t, its strided halfword at out + 1024 + 16t + 2.
    let ptx = kernel(
        ".reg .b16 %rs<4>;\n.reg .b64 %rw<4>;\n\
         mul.lo.u32 %r5, %r4, -1640531535;\ncvt.u16.u32 %rs1, %r5;\nmov.u16 %rs2, 5;\n\
         setp.lt.u32 %p1, %r4, %r9;\nsetp.ne.u32 %p2, %r9, 0;\n\
         mul.wide.u32 %rw1, %r4, 16;\nadd.s64 %rw1, %rd1, %rw1;\nmov.u32 %r8, 3;\n\
         @%p1 st.global.u32 [%rd3], %r5;\n@%p1 ld.global.u32 %r8, [%rd3];\n\
         @!%p1 st.global.v2.b16 [%rd3], {%rs1, %rs1};\n\
         @%p2 ld.global.b16 %rs1, [%rd3+2];\ncvt.u32.u16 %r6, %rs1;\nadd.u32 %r8, %r8, %r6;\n\
         @%p1 st.global.b16 [%rw1+1026], %rs1;\n@%p1 ld.global.b16 %rs2, [%rw1+1026];\n\
         cvt.u32.u16 %r6, %rs2;\nadd.u32 %r8, %r8, %r6;\n\
         @!%p2 ld.global.u32 %r8, [%rw1+1024];\nst.global.u32 [%rd3], %r8;\nret;",
    );
    let want = run_bytes(&ptx, LaneGroups::Off, 4, [64, 1, 1], 8192, 200);
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert!(
            run_bytes(&ptx, groups, 4, [64, 1, 1], 8192, 200) == want,
            "{groups:?}"
        );
    }
}

/// Loads of one element of each lane's run, lanes 8 or 16 bytes apart (Triton's accesses):
/// each lane's element, from its own run; the last group's span passes the buffer's end.
#[test]
fn strided_loads_match_one_thread_at_a_time() {
    // 256 threads: words at out + 4t; runs of 8 bytes at out + 1024 + 8t, of 16 at
    // out + 3072 + 16t, the last ending the buffer.
    let ptx = kernel(
        ".reg .b16 %rs<4>;\n.reg .b64 %rw<4>;\n\
         mul.lo.u32 %r5, %r4, -1640531535;\nmul.lo.u32 %r6, %r4, -2048144789;\n\
         mul.wide.u32 %rw1, %r4, 16;\nadd.s64 %rw1, %rd1, %rw1;\n\
         mul.wide.u32 %rw2, %r4, 8;\nadd.s64 %rw2, %rd1, %rw2;\n\
         st.global.v4.b32 [%rw1+3072], {%r5, %r6, %r4, %r5};\n\
         st.global.v2.b32 [%rw2+1024], {%r6, %r5};\n\
         ld.global.u16 %rs1, [%rw1+3078];\nld.global.u8 %rs2, [%rw1+3085];\n\
         ld.global.s16 %r7, [%rw1+3086];\nld.global.u32 %r8, [%rw2+1028];\n\
         cvt.u32.u16 %r6, %rs1;\nadd.u32 %r8, %r8, %r6;\ncvt.u32.u16 %r6, %rs2;\n\
         add.u32 %r8, %r8, %r6;\nadd.u32 %r8, %r8, %r7;\nst.global.u32 [%rd3], %r8;\nret;",
    );
    let want = run_bytes(&ptx, LaneGroups::Off, 4, [64, 1, 1], 7168, 0);
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert!(
            run_bytes(&ptx, groups, 4, [64, 1, 1], 7168, 0) == want,
            "{groups:?}"
        );
    }
}

#[test]
fn strided_stores_match_one_thread_at_a_time() {
    // 256 threads, each with runs of 16 bytes at out + 16t, 8 at out + 4096 + 8t, 32 at
    // out + 6144 + 32t and 16 at out + 14336 + 16t (the last lane's element ending the
    // buffer, its run past it): every run first filled, then one element of it stored a
    // lane; the bytes around each element keep what the thread wrote there.
    let ptx = kernel(
        ".reg .b16 %rs<4>;\n.reg .b64 %rw<4>;\n\
         mul.lo.u32 %r5, %r4, -1640531535;\nmul.lo.u32 %r6, %r4, -2048144789;\n\
         mul.wide.u32 %rw1, %r4, 16;\nadd.s64 %rw1, %rd1, %rw1;\n\
         mul.wide.u32 %rw2, %r4, 8;\nadd.s64 %rw2, %rd1, %rw2;\n\
         mul.wide.u32 %rw3, %r4, 32;\nadd.s64 %rw3, %rd1, %rw3;\n\
         st.global.v4.b32 [%rw1], {%r6, %r6, %r6, %r6};\n\
         st.global.v2.b32 [%rw2+4096], {%r6, %r6};\n\
         st.global.v4.b32 [%rw3+6144], {%r6, %r6, %r6, %r6};\n\
         st.global.v4.b32 [%rw3+6160], {%r6, %r6, %r6, %r6};\n\
         st.global.u32 [%rw1+4], %r5;\nst.global.u8 [%rw1+13], %r5;\n\
         cvt.u16.u32 %rs1, %r5;\nst.global.u16 [%rw2+4098], %rs1;\n\
         st.global.v2.b32 [%rw3+6152], {%r5, %r4};\n\
         st.global.u32 [%rw1+14336], %r5;\nret;",
    );
    let bytes = 14336 + 16 * 255 + 4;
    let want = run_bytes(&ptx, LaneGroups::Off, 4, [64, 1, 1], bytes, 0);
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert!(
            run_bytes(&ptx, groups, 4, [64, 1, 1], bytes, 0) == want,
            "{groups:?}"
        );
    }
}

#[test]
fn a_strided_store_past_the_buffer_fails_as_one_thread_does() {
    // The last thread's element (out + 16 × 255) lies past the 4080-byte buffer.
    let ptx = kernel(
        ".reg .b64 %rw<2>;\nmul.wide.u32 %rw1, %r4, 16;\nadd.s64 %rw1, %rd1, %rw1;\n\
         st.global.u32 [%rw1], %r4;\nret;",
    );
    for groups in [
        LaneGroups::Off,
        LaneGroups::Always,
        LaneGroups::AlwaysForBlockX(64),
    ] {
        let out = DeviceBuffer::zeroed(4080).unwrap();
        let err = module(&ptx, groups)
            .kernel("k")
            .unwrap()
            .launch(4, Dim3::new(64, 1, 1), &[Arg::buffer(&out), Arg::u32(0)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("illegal address"), "{groups:?}: {err}");
        assert!(err.contains("block (3, 0, 0)"), "{groups:?}: {err}");
    }
}

/// A kernel over Triton's runs: thread t's four words, elements 4t..4t+3 of the input at
/// out + 4096 (which each thread first fills) and of the output at out, each access under its own bound (element < n),
/// through a base register whose lane-0 index `%r5` the caller computes from `%r4` (`index`);
/// `between` stands between the run's loads and writes `%e9`, which the output adds in.
fn run_kernel(index: &str, between: &str) -> String {
    kernel(&format!(
        ".reg .b64 %rw<4>;\n.reg .b32 %e<12>;\n.reg .pred %q<5>;\n{index}\n\
         add.u32 %r6, %r5, 1;\nadd.u32 %r7, %r5, 2;\nadd.u32 %r8, %r5, 3;\n\
         setp.lt.s32 %q1, %r5, %r9;\nsetp.lt.s32 %q2, %r6, %r9;\n\
         setp.lt.s32 %q3, %r7, %r9;\nsetp.lt.s32 %q4, %r8, %r9;\n\
         mul.wide.s32 %rw1, %r5, 4;\nadd.s64 %rw2, %rd1, %rw1;\nadd.s64 %rw1, %rw2, 4096;\n\
         mul.lo.u32 %e5, %r5, -1640531535;\nadd.u32 %e6, %e5, 7;\nxor.b32 %e7, %e5, 99;\n\
         shr.u32 %e8, %e5, 3;\n\
         @%q1 st.global.b32 [%rw1+0], {{ %e5 }};\n@%q2 st.global.b32 [%rw1+4], {{ %e6 }};\n\
         @%q3 st.global.b32 [%rw1+8], {{ %e7 }};\n@%q4 st.global.b32 [%rw1+12], {{ %e8 }};\n\
         mov.u32 %e1, 0x0;\n@%q1 ld.global.b32 {{ %e1 }}, [%rw1+0];\n\
         mov.u32 %e2, 0x0;\n@%q2 ld.global.b32 {{ %e2 }}, [%rw1+4];\n{between}\n\
         mov.u32 %e3, 0x0;\n@%q3 ld.global.b32 {{ %e3 }}, [%rw1+8];\n\
         mov.u32 %e4, 0x0;\n@%q4 ld.global.b32 {{ %e4 }}, [%rw1+12];\n\
         mul.lo.u32 %e1, %e1, 3;\nadd.u32 %e2, %e2, %e1;\nxor.b32 %e3, %e3, %e2;\n\
         sub.u32 %e4, %e4, %e3;\nadd.u32 %e4, %e4, %e9;\n\
         @%q1 st.global.b32 [%rw2+0], {{ %e1 }};\n@%q2 st.global.b32 [%rw2+4], {{ %e2 }};\n\
         @%q3 st.global.b32 [%rw2+8], {{ %e3 }};\n@%q4 st.global.b32 [%rw2+12], {{ %e4 }};\nret;"
    ))
}

/// Triton's element index: `(tid × 4) & 252 | ctaid << 8`, its lanes' distance unknown
/// when compiling (so tested when running).
const TRITON_INDEX: &str = "mov.u32 %r5, %tid.x;\nshl.b32 %r5, %r5, 2;\nand.b32 %r5, %r5, 252;\n\
    mov.u32 %r6, %ctaid.x;\nshl.b32 %r6, %r6, 8;\nor.b32 %r5, %r5, %r6;";

#[test]
fn runs_of_consecutive_elements_match_one_thread_at_a_time() {
    for index in [
        TRITON_INDEX,
        // Lane-affine: lanes 16 bytes apart, known when compiling.
        "shl.b32 %r5, %r4, 2;",
        // Neighbouring lanes swapped: not a run of the group.
        "xor.b32 %r5, %r4, 1;\nshl.b32 %r5, %r5, 2;",
    ] {
        // An instruction between the loads on other registers, and one that reads a load's
        // result (the loads before it stay where they are).
        for between in ["add.u32 %e9, %e5, 1;", "add.u32 %e9, %e1, %e2;"] {
            let ptx = run_kernel(index, between);
            // n = 1000: the last group's lanes past element 999 fail their guards.
            for n in [1024, 1000] {
                let want = run_bytes(&ptx, LaneGroups::Off, 4, [64, 1, 1], 8192, n);
                for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
                    assert!(
                        run_bytes(&ptx, groups, 4, [64, 1, 1], 8192, n) == want,
                        "{groups:?} n {n}: {index} / {between}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_run_past_the_buffer_faults_at_the_access_one_thread_does() {
    // The last thread's third input word (out + 8184) lies past the 8184-byte buffer.
    let ptx = run_kernel(TRITON_INDEX, "mov.u32 %e9, 0;");
    let error = |groups| {
        let out = DeviceBuffer::zeroed(8184).unwrap();
        let error = module(&ptx, groups)
            .kernel("k")
            .unwrap()
            .launch(4, Dim3::new(64, 1, 1), &[Arg::buffer(&out), Arg::u32(1024)])
            .unwrap_err()
            .to_string();
        // (Past the address, which is another buffer's each time.)
        error.split_once(" (").expect("an address").1.to_string()
    };
    let want = error(LaneGroups::Off);
    assert!(want.contains("[%rw1+8]"), "{want}");
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert_eq!(error(groups), want, "{groups:?}");
    }
}

#[test]
fn a_grid_stride_loop_over_halfwords_stores_each_element_once() {
    // Lane-affine addresses of stride 2 (`mul.wide` by 2 of an index that a uniform step
    // advances): contiguous 16-bit stores, and the tail where some lanes stop.
    let ptx = kernel(
        ".reg .b16 %h;\nmov.u32 %r10, %nctaid.x;\nmul.lo.u32 %r10, %r10, %r2;\nmov.u32 %r5, %r4;\n\
         setp.ge.u32 %p1, %r5, %r9;\n@%p1 bra DONE;\nLOOP:\nmul.wide.u32 %rd2, %r5, 2;\n\
         add.s64 %rd3, %rd1, %rd2;\nmad.lo.u32 %r6, %r5, 3, 1;\ncvt.u16.u32 %h, %r6;\nst.global.u16 [%rd3], %h;\n\
         add.u32 %r5, %r5, %r10;\nsetp.lt.u32 %p1, %r5, %r9;\n@%p1 bra LOOP;\nDONE:\nret;",
    );
    let n = 2 * 256 - 40;
    let halves: Vec<u32> = (0..512u32)
        .map(|i| if i < n { (i * 3 + 1) & 0xFFFF } else { 0 })
        .collect();
    let expected: Vec<u32> = halves.chunks(2).map(|h| h[0] | h[1] << 16).collect();
    check_all_modes(&ptx, 2, [128, 1, 1], n, &expected);
}

/// A grid-stride loop that adds `3i + 1` to each element in place: one load and one store
/// a lane, through the same address.
fn grid_stride_increment() -> String {
    kernel(
        "mov.u32 %r10, %nctaid.x;\nmul.lo.u32 %r10, %r10, %r2;\nmov.u32 %r5, %r4;\n\
         setp.ge.u32 %p1, %r5, %r9;\n@%p1 bra DONE;\nLOOP:\nmul.wide.u32 %rd2, %r5, 4;\n\
         add.s64 %rd3, %rd1, %rd2;\nld.global.u32 %r7, [%rd3];\nmad.lo.u32 %r6, %r5, 3, 1;\n\
         add.u32 %r7, %r7, %r6;\nst.global.u32 [%rd3], %r7;\n\
         add.u32 %r5, %r5, %r10;\nsetp.lt.u32 %p1, %r5, %r9;\n@%p1 bra LOOP;\nDONE:\nret;",
    )
}

#[test]
fn a_grid_stride_loop_whose_prefetches_run_past_the_buffer_stores_each_element_once() {
    // 8 blocks of 128 threads: the loop steps 4 KiB, far enough for its load to prefetch
    // four steps ahead (`prefetch`), past the buffer's end in the last steps.
    let n = 8 * 1024 - 40;
    let expected: Vec<u32> = (0..8 * 1024u32)
        .map(|i| if i < n { i * 3 + 1 } else { 0 })
        .collect();
    let ptx = grid_stride_increment();
    for mode in [
        LaneGroups::Off,
        LaneGroups::Always,
        LaneGroups::AlwaysForBlockX(128),
    ] {
        let out = DeviceBuffer::zeroed(expected.len() * 4).unwrap();
        module(&ptx, mode)
            .kernel("k")
            .unwrap()
            .launch(8, 128, &[Arg::buffer(&out), Arg::u32(n)])
            .unwrap();
        assert_eq!(out.to_vec::<u32>(), expected, "{mode:?}");
    }
}

/// How many calls of the prefetch helper (the one function declared `preserve_all`) the
/// group form of `ptx`'s kernel makes.
fn prefetch_calls(ptx: &str) -> usize {
    let opts = CompileOptions {
        lane_groups: LaneGroups::AlwaysForBlockX(128),
        keep_clif: true,
        ..CompileOptions::default()
    };
    let module = Module::from_ptx_named("<ptx>", ptx, &opts).unwrap();
    let (_, clif) = &module.clif()[0];
    let sig = clif
        .lines()
        .find_map(|l| l.trim().strip_suffix(" = (i64, i64) preserve_all"))
        .map(str::to_owned);
    let Some(sig) = sig else { return 0 };
    let callee = clif
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_suffix(&format!(" {sig}"))
                .map(|f| f.split(' ').next().unwrap().to_owned())
        })
        .expect("declared");
    clif.matches(&format!("call {callee}(")).count()
}

#[test]
fn a_loops_contiguous_load_prefetches_ahead_and_a_store_through_its_address_does_not() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    assert_eq!(prefetch_calls(&grid_stride_increment()), 1);
    // Outside a loop, the hardware's prefetchers follow the groups.
    let once = kernel(
        "ld.global.u32 %r7, [%rd3];\nadd.u32 %r7, %r7, 1;\nst.global.u32 [%rd3], %r7;\nret;",
    );
    assert_eq!(prefetch_calls(&once), 0);
}

#[test]
fn lanes_whose_widened_index_wraps_between_them_are_not_contiguous() {
    // %r5 = tid + 0xFFFFFFF8: lanes 0..7 widen to 2^32 - 8 + k, lanes 8..15 to k - 8. The base
    // puts lanes 0..7 at `out` and lanes 8..15 16 GiB below it: lane 8 faults, as one thread
    // at a time, and no vector access reads lanes 8..15 from after lane 7.
    let ptx = kernel(
        "add.u32 %r5, %r3, 0xFFFFFFF8;\nmul.wide.u32 %rd2, %r5, 4;\n\
         sub.s64 %rd1, %rd1, 0x3FFFFFFE0;\nadd.s64 %rd3, %rd1, %rd2;\n\
         ld.global.u32 %r6, [%rd3];\nret;",
    );
    for mode in [LaneGroups::Off, LaneGroups::Always] {
        let out = DeviceBuffer::zeroed(64).unwrap();
        let err = module(&ptx, mode)
            .kernel("k")
            .unwrap()
            .launch(1, 16, &[Arg::buffer(&out), Arg::u32(0)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("thread 8)"), "{mode:?}: {err}");
    }
}

#[test]
fn a_launch_of_few_long_blocks_switching_forms_part_way_gives_the_one_thread_results() {
    // Two blocks of 1,024 threads, each thread a loop of n steps: the tier may compile the
    // group form while the blocks run and hand each over part-way (`tier`), where the
    // first 64 threads' pace predicts a rest worth it; the results are the same whenever
    // it does.
    let ptx = kernel(
        "mov.u32 %r5, 0;\nmov.u32 %r6, %r4;\nLOOP:\nmul.lo.u32 %r6, %r6, 1664525;\n\
         add.u32 %r6, %r6, 1013904223;\nxor.b32 %r6, %r6, %r5;\nadd.u32 %r5, %r5, 1;\n\
         setp.lt.u32 %p1, %r5, %r9;\n@%p1 bra LOOP;\nst.global.u32 [%rd3], %r6;\nret;",
    );
    let expected: Vec<u32> = (0..2048u32)
        .map(|t| {
            (0..20_000u32).fold(t, |v, i| {
                v.wrapping_mul(1664525).wrapping_add(1013904223) ^ i
            })
        })
        .collect();
    for mode in [LaneGroups::Off, LaneGroups::WhenHot] {
        let got = run(&ptx, mode, 2, [1024, 1, 1], 20_000);
        assert_eq!(got, expected, "{mode:?}");
    }
}

/// `ptx` run over 4 blocks of 64 threads gives the same `out` one thread at a time and in
/// lane groups (of up to 32, and of 64).
fn same_with_groups_of_64(ptx: &str) {
    let want = run(ptx, LaneGroups::Off, 4, [64, 1, 1], 0);
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert_eq!(run(ptx, groups, 4, [64, 1, 1], 0), want, "{groups:?}");
    }
}

/// The error of `ptx` run on one block of 64 threads, the same one thread at a time and in
/// lane groups (of up to 32, and of 64).
fn same_error_with_groups_of_64(ptx: &str) -> String {
    let error = |groups| {
        let out = DeviceBuffer::zeroed(1024).unwrap();
        module(ptx, groups)
            .kernel("k")
            .unwrap()
            .launch(1, Dim3::new(64, 1, 1), &[Arg::buffer(&out), Arg::u32(0)])
            .unwrap_err()
            .to_string()
    };
    let want = error(LaneGroups::Off);
    for groups in [LaneGroups::Always, LaneGroups::AlwaysForBlockX(64)] {
        assert_eq!(error(groups), want, "{groups:?}");
    }
    want
}

#[test]
fn shared_accesses_of_contiguous_lanes_and_of_one_address_match_one_thread_at_a_time() {
    // Each thread stores its words at sh + 4t (u32), sh + 1024 + 2t (u16), sh + 1536 + 8t
    // (.v2) and sh + 2048 + t (u8), reads them back, and reads sh[0] and sh + 1540 (one
    // address in every lane, which thread 0 wrote: it runs first, or with the first lanes;
    // an address a later thread writes would race, and the forms may differ).
    let ptx = kernel(
        ".shared .align 16 .b8 sh[2560];\n.reg .b32 %s<16>;\n.reg .b16 %h<4>;\n\
         mov.u32 %s1, sh;\nshl.b32 %s2, %r3, 2;\nadd.u32 %s2, %s1, %s2;\n\
         shl.b32 %s3, %r3, 1;\nadd.u32 %s3, %s1, %s3;\nshl.b32 %s4, %r3, 3;\nadd.u32 %s4, %s1, %s4;\n\
         add.u32 %s5, %s1, %r3;\nmul.lo.u32 %s6, %r4, 2654435761;\n\
         st.shared.u32 [%s2], %s6;\ncvt.u16.u32 %h1, %s6;\nst.shared.u16 [%s3+1024], %h1;\n\
         xor.b32 %s7, %s6, 255;\nst.shared.v2.u32 [%s4+1536], {%s6, %s7};\n\
         st.shared.u8 [%s5+2048], %s7;\n\
         ld.shared.u32 %s8, [%s2];\nld.shared.u16 %h2, [%s3+1024];\ncvt.u32.u16 %s9, %h2;\n\
         ld.shared.v2.u32 {%s10, %s11}, [%s4+1536];\nld.shared.u8 %s12, [%s5+2048];\n\
         ld.shared.u32 %s13, [sh];\nld.shared.u32 %s14, [%s1+1540];\n\
         add.u32 %s8, %s8, %s9;\nxor.b32 %s8, %s8, %s10;\nadd.u32 %s8, %s8, %s11;\n\
         xor.b32 %s8, %s8, %s12;\nadd.u32 %s8, %s8, %s13;\nxor.b32 %s8, %s8, %s14;\n\
         st.global.u32 [%rd3], %s8;\nret;",
    );
    same_with_groups_of_64(&ptx);
}

#[test]
fn a_shared_access_past_the_blocks_shared_memory_faults_as_one_thread_does() {
    // Thread 63's word (sh + 252 + 8) lies past the 256 bytes.
    let ptx = kernel(
        ".shared .align 16 .b8 sh[256];\n.reg .b32 %s<4>;\n\
         mov.u32 %s1, sh;\nshl.b32 %s2, %r3, 2;\nadd.u32 %s2, %s1, %s2;\n\
         st.shared.u32 [%s2+8], %r4;\nret;",
    );
    let want = same_error_with_groups_of_64(&ptx);
    assert!(want.contains("[%s2+8]"), "{want}");
}

#[test]
fn shared_accesses_at_scattered_offsets_match_one_thread_at_a_time() {
    // Thread t writes at its slot p = 7t mod 64 (a permutation: Triton's layout conversions
    // shuffle the thread index's bits) a word, a half, a pair of halves, a byte (the low one
    // of a 32-bit register) and a double word; after the barrier it reads slot t of each and
    // slot 63 − t as a byte into a 32-bit register: another thread's, so a wrong lane's
    // address shows. Threads 2i and 2i + 1 also write one word at slot i: the later
    // thread's stays, as where threads run one at a time.
    let ptx = kernel(
        ".shared .align 16 .b8 sh[3072];\n.reg .b32 %s<24>;\n.reg .b16 %h<8>;\n.reg .b64 %d<4>;\n\
         mov.u32 %s1, sh;\nmul.lo.u32 %s2, %r3, 7;\nand.b32 %s2, %s2, 63;\n\
         shl.b32 %s3, %s2, 2;\nadd.u32 %s3, %s1, %s3;\nshl.b32 %s4, %s2, 1;\nadd.u32 %s4, %s1, %s4;\n\
         add.u32 %s5, %s1, %s2;\nshl.b32 %s6, %s2, 3;\nadd.u32 %s6, %s1, %s6;\n\
         mul.lo.u32 %s7, %r4, 2654435761;\ncvt.u16.u32 %h1, %s7;\nshr.u32 %s8, %s7, 16;\n\
         cvt.u16.u32 %h2, %s8;\ncvt.u64.u32 %d1, %s7;\nshl.b64 %d1, %d1, 29;\n\
         st.shared.u32 [%s3], %s7;\nst.shared.b16 [%s4+256], %h1;\n\
         st.shared.v2.b16 [%s3+512], {%h2, %h1};\nst.shared.u8 [%s5+768], %s8;\n\
         st.shared.b64 [%s6+1024], %d1;\nshr.u32 %s20, %r3, 1;\nshl.b32 %s20, %s20, 2;\n\
         add.u32 %s20, %s1, %s20;\nst.shared.u32 [%s20+2048], %r4;\nbar.sync 0;\n\
         shl.b32 %s9, %r3, 2;\nadd.u32 %s9, %s1, %s9;\nshl.b32 %s10, %r3, 1;\nadd.u32 %s10, %s1, %s10;\n\
         shl.b32 %s11, %r3, 3;\nadd.u32 %s11, %s1, %s11;\nsub.u32 %s12, 63, %r3;\nadd.u32 %s12, %s1, %s12;\n\
         ld.shared.u32 %s13, [%s9];\nld.shared.b16 %h3, [%s10+256];\n\
         ld.shared.v2.b16 {%h4, %h5}, [%s9+512];\nld.shared.u8 %s14, [%s12+768];\n\
         ld.shared.b64 %d2, [%s11+1024];\nld.shared.u32 %s21, [%s20+2048];\n\
         add.u32 %s13, %s13, %s21;\n\
         cvt.u32.u16 %s15, %h3;\ncvt.u32.u16 %s16, %h4;\ncvt.u32.u16 %s17, %h5;\ncvt.u32.u64 %s18, %d2;\n\
         shr.u64 %d3, %d2, 32;\ncvt.u32.u64 %s19, %d3;\n\
         add.u32 %s13, %s13, %s15;\nxor.b32 %s13, %s13, %s16;\nadd.u32 %s13, %s13, %s17;\n\
         xor.b32 %s13, %s13, %s14;\nadd.u32 %s13, %s13, %s18;\nxor.b32 %s13, %s13, %s19;\n\
         st.global.u32 [%rd3], %s13;\nret;",
    );
    same_with_groups_of_64(&ptx);
}

#[test]
fn a_scattered_shared_access_outside_or_misaligned_faults_as_one_thread_does() {
    // Slot p = 7t mod 64 of 4 bytes, 8 bytes on: p 62 and 63 end past the 256 bytes. Or
    // one byte on, in 512 bytes: every lane inside but misaligned.
    for (offset, bytes, why) in [(8, 256, "illegal shared address"), (1, 512, "misaligned")] {
        let ptx = kernel(&format!(
            ".shared .align 16 .b8 sh[{bytes}];\n.reg .b32 %s<4>;\n\
             mov.u32 %s1, sh;\nmul.lo.u32 %s2, %r3, 7;\nand.b32 %s2, %s2, 63;\n\
             shl.b32 %s2, %s2, 2;\nadd.u32 %s2, %s1, %s2;\n\
             st.shared.u32 [%s2+{offset}], %r4;\nret;"
        ));
        let want = same_error_with_groups_of_64(&ptx);
        assert!(want.contains(why), "{want}");
    }
}
