//! The instructions around the half-precision core, one rule per test: each kernel writes
//! what it computed to a buffer of u64 words, checked against PTX's definition.

use ptxjit::{Arg, DeviceBuffer, Dim3, LaunchConfig, Module};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs `body` in a kernel `k(.param .u64 out)` with `%out` holding the buffer address and
/// common registers declared; returns the first `words` u64 of the buffer.
fn run_body(decls: &str, body: &str, words: usize) -> Vec<u64> {
    let ptx = format!(
        "{HEADER}{decls}\n.visible .entry k(.param .u64 k_out)\n{{\n\
         .reg .pred %p<8>;\n.reg .b16 %h<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<4>;\n\
         .reg .b64 %out;\nld.param.u64 %out, [k_out];\n{body}\nret;\n}}\n"
    );
    run_ptx(&ptx, words, 1, 1)
}

fn run_ptx(ptx: &str, words: usize, grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Vec<u64> {
    let config = LaunchConfig {
        grid: grid.into(),
        block: block.into(),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative: false,
    };
    launch(ptx, words * 8, &config).to_vec()
}

/// Launches kernel `k(.param .u64 out)` of `ptx` with an output buffer of `bytes`.
fn launch(ptx: &str, bytes: usize, config: &LaunchConfig) -> DeviceBuffer {
    let module = Module::from_ptx(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let out = DeviceBuffer::zeroed(bytes).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch_with(config, &[Arg::buffer(&out)])
        .unwrap();
    out
}

/// `st.global.u64 [%out+8*i], %rdN` lines for registers already holding results.
fn store64(regs: &[&str]) -> String {
    regs.iter()
        .enumerate()
        .map(|(i, r)| format!("st.global.u64 [%out+{}], {r};\n", 8 * i))
        .collect()
}

#[test]
fn integer_multiply_forms() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, -3;\nmov.u32 %r2, 7;\n\
             mul.wide.s32 %rd1, %r1, %r2;\nmul.wide.u32 %rd2, %r1, %r2;\n\
             mul.hi.u32 %r3, %r1, %r2;\ncvt.u64.u32 %rd3, %r3;\n\
             mul.hi.s32 %r4, %r1, %r2;\ncvt.s64.s32 %rd4, %r4;\n\
             mad.lo.s32 %r5, %r1, %r2, 100;\ncvt.s64.s32 %rd5, %r5;\n\
             mad.wide.s32 %rd6, %r1, %r2, %rd2;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4", "%rd5", "%rd6"])),
        6,
    );
    let big = (0xFFFF_FFFDu64) * 7;
    assert_eq!(
        got,
        vec![(-21i64) as u64, big, big >> 32, u64::MAX, 79, big - 21]
    );
}

#[test]
fn division_by_zero_and_overflow_do_not_trap() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, 17;\nmov.u32 %r2, 0;\n\
             div.u32 %r3, %r1, %r2;\ncvt.u64.u32 %rd1, %r3;\n\
             rem.u32 %r4, %r1, %r2;\ncvt.u64.u32 %rd2, %r4;\n\
             mov.u32 %r5, 0x80000000;\nmov.u32 %r6, -1;\n\
             div.s32 %r7, %r5, %r6;\ncvt.u64.u32 %rd3, %r7;\n\
             rem.s32 %r8, %r5, %r6;\ncvt.u64.u32 %rd4, %r8;\n\
             div.s32 %r9, -17, 5;\ncvt.s64.s32 %rd5, %r9;\nrem.s32 %r10, -17, 5;\ncvt.s64.s32 %rd6, %r10;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4", "%rd5", "%rd6"])),
        6,
    );
    assert_eq!(
        got,
        vec![
            0xFFFF_FFFF,
            17,
            0x8000_0000,
            0,
            (-3i64) as u64,
            (-2i64) as u64
        ]
    );
}

#[test]
fn shifts_clamp_their_amount() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, 0x80000001;\n\
             shl.b32 %r2, %r1, 33;\ncvt.u64.u32 %rd1, %r2;\n\
             shr.u32 %r3, %r1, 40;\ncvt.u64.u32 %rd2, %r3;\n\
             shr.s32 %r4, %r1, 40;\ncvt.u64.u32 %rd3, %r4;\n\
             shl.b32 %r5, %r1, 1;\ncvt.u64.u32 %rd4, %r5;\n\
             shr.s32 %r6, %r1, 4;\ncvt.u64.u32 %rd5, %r6;\n\
             mov.u64 %rd7, 1;\nshl.b64 %rd6, %rd7, 63;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4", "%rd5", "%rd6"])),
        6,
    );
    assert_eq!(got, vec![0, 0, 0xFFFF_FFFF, 2, 0xF800_0000, 1 << 63]);
}

#[test]
fn min_max_abs_neg_bits_and_saturating_add() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, -5;\nmov.u32 %r2, 3;\n\
             min.s32 %r3, %r1, %r2;\ncvt.s64.s32 %rd1, %r3;\nmin.u32 %r4, %r1, %r2;\ncvt.u64.u32 %rd2, %r4;\n\
             abs.s32 %r5, %r1;\ncvt.u64.u32 %rd3, %r5;\nneg.s32 %r6, %r2;\ncvt.s64.s32 %rd4, %r6;\n\
             popc.b32 %r7, %r1;\ncvt.u64.u32 %rd5, %r7;\nclz.b32 %r8, %r2;\ncvt.u64.u32 %rd6, %r8;\n\
             brev.b32 %r9, %r2;\ncvt.u64.u32 %rd7, %r9;\n\
             mov.u32 %r10, 0x7FFFFFF0;\nadd.sat.s32 %r11, %r10, 100;\ncvt.u64.u32 %rd8, %r11;\n\
             not.b32 %r12, %r2;\ncvt.u64.u32 %rd9, %r12;\ncnot.b32 %r13, %r2;\ncvt.u64.u32 %rd10, %r13;\n",
        ) + &store64(&[
            "%rd1", "%rd2", "%rd3", "%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd9", "%rd10",
        ])),
        10,
    );
    assert_eq!(
        got,
        vec![
            (-5i64) as u64,
            3,
            5,
            (-3i64) as u64,
            31,
            30,
            0xC000_0000,
            0x7FFF_FFFF,
            0xFFFF_FFFC,
            0
        ]
    );
}

#[test]
fn setp_with_bool_op_and_predicate_pair_then_selp() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, 5;\n\
             setp.lt.s32 %p1, %r1, 10;\n\
             setp.gt.and.s32 %p2|%p3, %r1, 7, %p1;\n\
             setp.ne.or.u32 %p4, %r1, 5, !%p1;\n\
             selp.u64 %rd1, 1, 0, %p1;\nselp.u64 %rd2, 1, 0, %p2;\nselp.u64 %rd3, 1, 0, %p3;\nselp.u64 %rd4, 1, 0, %p4;\n\
             setp.lo.u32 %p5, %r1, -1;\nselp.u64 %rd5, 1, 0, %p5;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4", "%rd5"])),
        5,
    );
    assert_eq!(got, vec![1, 0, 1, 0, 1]);
}

#[test]
fn mov_packs_and_unpacks_vectors_low_element_first() {
    let got = run_body(
        "",
        &(String::from(
            "mov.b16 %h1, 0x3C00;\nmov.b16 %h2, 0x4000;\n\
             mov.b32 %r1, {%h1, %h2};\ncvt.u64.u32 %rd1, %r1;\n\
             mov.b32 {%h3, %h4}, %r1;\ncvt.u64.u16 %rd2, %h4;\n\
             mov.b64 %rd3, {%r1, %r1};\n\
             mov.b64 {%r2, %r3}, %rd3;\ncvt.u64.u32 %rd4, %r3;\n\
             mov.b32 {_, %h5}, 0x12345678;\ncvt.u64.u16 %rd5, %h5;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4", "%rd5"])),
        5,
    );
    assert_eq!(
        got,
        vec![
            0x4000_3C00,
            0x4000,
            0x4000_3C00_4000_3C00,
            0x4000_3C00,
            0x1234
        ]
    );
}

#[test]
fn loop_with_predicated_branch() {
    let got = run_body(
        "",
        "mov.u64 %rd1, 0;\nmov.u32 %r1, 1;\n\
         LOOP:\ncvt.u64.u32 %rd2, %r1;\nadd.s64 %rd1, %rd1, %rd2;\nadd.s32 %r1, %r1, 1;\n\
         setp.le.u32 %p1, %r1, 100;\n@%p1 bra.uni LOOP;\n\
         @!%p1 st.global.u64 [%out], %rd1;\n@%p1 st.global.u64 [%out], 7;\n",
        1,
    );
    assert_eq!(got, vec![5050]);
}

#[test]
fn special_registers_cover_a_3d_grid_of_3d_blocks() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<20>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [out];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %tid.y;\nmov.u32 %r3, %tid.z;\n\
         mov.u32 %r4, %ntid.x;\nmov.u32 %r5, %ntid.y;\nmov.u32 %r6, %ntid.z;\n\
         mov.u32 %r7, %ctaid.x;\nmov.u32 %r8, %ctaid.y;\nmov.u32 %r9, %ctaid.z;\n\
         mov.u32 %r10, %nctaid.x;\nmov.u32 %r11, %nctaid.y;\n\
         mad.lo.u32 %r12, %r9, %r11, %r8;\nmad.lo.u32 %r12, %r12, %r10, %r7;\n\
         mad.lo.u32 %r13, %r3, %r5, %r2;\nmad.lo.u32 %r13, %r13, %r4, %r1;\n\
         mul.lo.u32 %r14, %r4, %r5;\nmul.lo.u32 %r14, %r14, %r6;\n\
         mad.lo.u32 %r15, %r12, %r14, %r13;\n\
         mov.u32 %r16, %laneid;\nmov.u32 %r17, %warpid;\nshl.b32 %r17, %r17, 16;\nor.b32 %r16, %r16, %r17;\n\
         mul.wide.u32 %rd2, %r15, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r16;\nret;\n}}\n"
    );
    let (grid, block) = (Dim3::new(3, 2, 2), Dim3::new(5, 4, 3));
    let threads = (grid.count() * block.count()) as usize;
    let words = run_ptx(&ptx, threads.div_ceil(2), grid, block);
    let got: Vec<u32> = words
        .iter()
        .flat_map(|w| [*w as u32, (*w >> 32) as u32])
        .collect();
    for (i, v) in got.iter().take(threads).enumerate() {
        let rank = (i % 60) as u32; // rank within the block
        assert_eq!(*v, (rank % 32) | (rank / 32) << 16, "thread {i}");
    }
}

#[test]
fn vector_loads_and_stores_local_memory_and_scoped_registers() {
    let got = run_body(
        "",
        &(String::from(
            ".local .align 16 .b8 depot[32];\n.reg .b64 %SP;\n\
             mov.u64 %SP, depot;\ncvta.local.u64 %rd1, %SP;\n\
             st.local.v4.u32 [%SP], {1, 2, 3, 4};\n\
             st.v2.u32 [%rd1+16], {5, 6};\n\
             ld.local.v4.u32 {%r1, %r2, %r3, %r4}, [%SP];\n\
             { .reg .b32 %r1; ld.v2.u32 {%r1, %r5}, [%rd1+16]; add.u32 %r4, %r4, %r1; }\n\
             cvt.u64.u32 %rd2, %r1;\ncvt.u64.u32 %rd3, %r4;\ncvt.u64.u32 %rd4, %r5;\n\
             ld.local.u8 %r6, [%SP+4];\ncvt.u64.u32 %rd5, %r6;\n\
             st.local.s8 [%SP], -2;\nld.local.s8 %r7, [%SP];\ncvt.s64.s32 %rd6, %r7;\n",
        ) + &store64(&["%rd2", "%rd3", "%rd4", "%rd5", "%rd6"])),
        5,
    );
    assert_eq!(got, vec![1, 9, 6, 2, (-2i64) as u64]);
}

#[test]
fn call_passes_params_and_returns_by_param_space() {
    let decls = ".func (.param .b32 ret) addmul(.param .b32 a, .param .b32 b)\n{\n.reg .b32 %x<4>;\n\
                 ld.param.b32 %x1, [a];\nld.param.b32 %x2, [b];\nmad.lo.s32 %x3, %x1, 10, %x2;\n\
                 st.param.b32 [ret], %x3;\nret;\n}\n\
                 .func (.param .b64 r) fact(.param .b64 n)\n{\n.reg .b64 %y<4>;\n.reg .pred %q;\n\
                 ld.param.b64 %y1, [n];\nsetp.le.u64 %q, %y1, 1;\n@%q bra BASE;\n\
                 sub.s64 %y2, %y1, 1;\n{ .param .b64 p0; .param .b64 r0; st.param.b64 [p0], %y2;\n\
                 call.uni (r0), fact, (p0);\nld.param.b64 %y3, [r0]; }\nmul.lo.s64 %y1, %y1, %y3;\n\
                 BASE:\nst.param.b64 [r], %y1;\nret;\n}\n";
    let got = run_body(
        decls,
        &(String::from(
            "{ .param .b32 p0; .param .b32 p1; .param .b32 r0;\n\
             st.param.b32 [p0], 4;\nst.param.b32 [p1], 2;\ncall.uni (r0), addmul, (p0, p1);\nld.param.b32 %r1, [r0]; }\n\
             cvt.u64.u32 %rd1, %r1;\n\
             { .param .b64 p0; .param .b64 r0; st.param.b64 [p0], 10;\ncall (r0), fact, (p0);\nld.param.b64 %rd2, [r0]; }\n",
        ) + &store64(&["%rd1", "%rd2"])),
        2,
    );
    assert_eq!(got, vec![42, 3_628_800]);
}

#[test]
fn exit_in_a_called_function_ends_only_that_thread() {
    let ptx = format!(
        "{HEADER}.func quit(.param .b32 t)\n{{\n.reg .b32 %t;\n.reg .pred %q;\nld.param.b32 %t, [t];\n\
         setp.eq.u32 %q, %t, 1;\n@%q exit;\nret;\n}}\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\n\
         {{ .param .b32 p; st.param.b32 [p], %r1; call quit, (p); }}\n\
         mul.wide.u32 %rd2, %r1, 8;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u64 [%rd3], 9;\nret;\n}}\n"
    );
    assert_eq!(run_ptx(&ptx, 3, 1, 3), vec![9, 0, 9]);
}

#[test]
fn module_variables_global_const_and_shared() {
    let got = run_body(
        ".global .align 4 .u32 tab[4] = {10, 20, 30, 40};\n.const .align 8 .b64 k64 = 0x123456789;\n\
         .shared .align 4 .b8 smem[64];",
        &(String::from(
            "ld.global.u32 %r1, [tab+8];\ncvt.u64.u32 %rd1, %r1;\nld.const.u64 %rd2, [k64];\n\
             mov.u64 %rd3, tab;\nld.u32 %r2, [%rd3+12];\ncvt.u64.u32 %rd4, %r2;\n\
             mov.u32 %r3, smem;\nst.shared.u32 [%r3+4], 77;\n\
             mov.u64 %rd5, smem;\ncvta.shared.u64 %rd6, %rd5;\nld.u32 %r4, [%rd6+4];\ncvt.u64.u32 %rd7, %r4;\n\
             cvta.to.shared.u64 %rd8, %rd6;\n\
             st.global.u32 [tab], 5;\nld.global.u32 %r5, [tab];\ncvt.u64.u32 %rd9, %r5;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd4", "%rd7", "%rd8", "%rd9"])),
        6,
    );
    assert_eq!(got, vec![30, 0x1_2345_6789, 40, 77, 0, 5]);
}

#[test]
fn isspacep_tells_each_generic_address_its_window() {
    // Rows: a generic address of global, shared and local memory; columns: isspacep.global,
    // .shared, .local (bits 0, 1, 2 of each word).
    let test = |reg: &str, out: &str| {
        format!(
            "isspacep.global %p1, {reg};\nisspacep.shared %p2, {reg};\nisspacep.local %p3, {reg};\n\
             selp.u64 {out}, 1, 0, %p1;\nselp.u64 %rd15, 2, 0, %p2;\nor.b64 {out}, {out}, %rd15;\n\
             selp.u64 %rd15, 4, 0, %p3;\nor.b64 {out}, {out}, %rd15;\n"
        )
    };
    let got = run_body(
        ".shared .align 8 .b8 smem[16];",
        &(String::from(
            ".local .align 8 .b8 depot[16];\n\
             mov.u64 %rd4, %out;\nmov.u64 %rd5, smem;\ncvta.shared.u64 %rd5, %rd5;\n\
             mov.u64 %rd6, depot;\ncvta.local.u64 %rd6, %rd6;\n",
        ) + &test("%rd4", "%rd1")
            + &test("%rd5", "%rd2")
            + &test("%rd6", "%rd3")
            + &store64(&["%rd1", "%rd2", "%rd3"])),
        3,
    );
    assert_eq!(got, vec![1, 2, 4]);
}

#[test]
fn f32_nan_results_are_canonical_and_min_max_follow_ptx() {
    let got = run_body(
        "",
        &(String::from(
            "mov.b32 %f1, 0fFFC00001;\nmov.f32 %f2, 0f3F800000;\n\
             add.f32 %f3, %f1, %f2;\nmov.b32 %r1, %f3;\ncvt.u64.u32 %rd1, %r1;\n\
             min.f32 %f4, %f1, %f2;\nmov.b32 %r2, %f4;\ncvt.u64.u32 %rd2, %r2;\n\
             mov.b32 %f5, 0f80000000;\nmov.b32 %f6, 0f00000000;\n\
             max.f32 %f7, %f5, %f6;\nmov.b32 %r3, %f7;\ncvt.u64.u32 %rd3, %r3;\n\
             min.f32 %f7, %f6, %f5;\nmov.b32 %r4, %f7;\ncvt.u64.u32 %rd4, %r4;\n\
             min.f32 %f7, %f1, %f1;\nmov.b32 %r5, %f7;\ncvt.u64.u32 %rd5, %r5;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4", "%rd5"])),
        5,
    );
    assert_eq!(
        got,
        vec![0x7FFF_FFFF, 0x3F80_0000, 0, 0x8000_0000, 0x7FFF_FFFF]
    );
}

#[test]
fn f32_ftz_sat_division_and_conversions() {
    let got = run_body(
        "",
        &(String::from(
            "mov.b32 %f1, 0f00400000;\nmov.f32 %f2, 0f40000000;\n\
             mul.ftz.f32 %f3, %f1, %f2;\nmov.b32 %r1, %f3;\ncvt.u64.u32 %rd1, %r1;\n\
             mul.f32 %f3, %f1, %f2;\nmov.b32 %r2, %f3;\ncvt.u64.u32 %rd2, %r2;\n\
             add.sat.f32 %f4, %f2, %f2;\nmov.b32 %r3, %f4;\ncvt.u64.u32 %rd3, %r3;\n\
             div.rn.f32 %f5, 0f3F800000, 0f40400000;\nmov.b32 %r4, %f5;\ncvt.u64.u32 %rd4, %r4;\n\
             cvt.rzi.s32.f32 %r5, 0f4F800000;\ncvt.u64.u32 %rd5, %r5;\n\
             cvt.rni.s32.f32 %r6, 0fC0200000;\ncvt.s64.s32 %rd6, %r6;\n\
             cvt.rn.f32.s32 %f6, -3;\nmov.b32 %r7, %f6;\ncvt.u64.u32 %rd7, %r7;\n\
             ex2.approx.f32 %f7, 0f40400000;\nmov.b32 %r8, %f7;\ncvt.u64.u32 %rd8, %r8;\n\
             sqrt.rn.f32 %f7, 0f40800000;\nmov.b32 %r9, %f7;\ncvt.u64.u32 %rd9, %r9;\n\
             cvt.f64.f32 %fd1, %f2;\nmov.b64 %rd10, %fd1;\n",
        ) + &store64(&[
            "%rd1", "%rd2", "%rd3", "%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd9", "%rd10",
        ])),
        10,
    );
    assert_eq!(
        got,
        vec![
            0,
            0x0080_0000,
            0x3F80_0000,
            (1.0f32 / 3.0).to_bits() as u64,
            0x7FFF_FFFF,
            (-2i64) as u64,
            (-3.0f32).to_bits() as u64,
            8.0f32.to_bits() as u64,
            2.0f32.to_bits() as u64,
            2.0f64.to_bits()
        ]
    );
}

#[test]
fn dynamic_shared_memory_is_sized_at_launch() {
    let ptx = format!(
        "{HEADER}.extern .shared .align 16 .b8 dyn[];\n.visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %dynamic_smem_size;\n\
         mov.u32 %r2, dyn;\nst.shared.u32 [%r2+1020], %r1;\nld.shared.u32 %r3, [dyn+1020];\n\
         st.global.u32 [%rd1], %r3;\nret;\n}}\n"
    );
    let config = LaunchConfig {
        grid: Dim3::new(2, 1, 1),
        block: Dim3::new(1, 1, 1),
        dynamic_shared_bytes: 1024,
        cluster: None,
        cooperative: false,
    };
    assert_eq!(launch(&ptx, 4, &config).to_vec::<u32>(), vec![1024]);
}

#[test]
fn funnel_shifts_wrap_or_clamp_their_amount() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, 0x89ABCDEF;\nmov.u32 %r2, 0x01234567;\n\
             shf.l.wrap.b32 %r3, %r1, %r2, 8;\ncvt.u64.u32 %rd1, %r3;\n\
             shf.r.wrap.b32 %r4, %r1, %r2, 40;\ncvt.u64.u32 %rd2, %r4;\n\
             shf.l.clamp.b32 %r5, %r1, %r2, 40;\ncvt.u64.u32 %rd3, %r5;\n\
             shf.r.clamp.b32 %r6, %r1, %r2, 33;\ncvt.u64.u32 %rd4, %r6;\n",
        ) + &store64(&["%rd1", "%rd2", "%rd3", "%rd4"])),
        4,
    );
    assert_eq!(
        got,
        vec![0x2345_6789, 0x6789_ABCD, 0x89AB_CDEF, 0x0123_4567]
    );
}

#[test]
fn bit_field_extract_insert_and_byte_permute() {
    let got = run_body(
        "",
        &(String::from(
            "mov.u32 %r1, 0xF0F0A5C3;\n\
             bfe.u32 %r2, %r1, 4, 8;\ncvt.u64.u32 %rd1, %r2;\n\
             bfe.s32 %r3, %r1, 28, 8;\ncvt.u64.u32 %rd2, %r3;\n\
             bfe.s32 %r4, %r1, 0, 0;\ncvt.u64.u32 %rd3, %r4;\n\
             bfe.u32 %r5, %r1, 40, 8;\ncvt.u64.u32 %rd4, %r5;\n\
             bfi.b32 %r6, 0xFF, %r1, 8, 4;\ncvt.u64.u32 %rd5, %r6;\n\
             bfi.b32 %r7, 0xFF, %r1, 30, 8;\ncvt.u64.u32 %rd6, %r7;\n\
             mov.u32 %r8, 0x33221100;\nmov.u32 %r9, 0x77665544;\n\
             prmt.b32 %r10, %r8, %r9, 0x5410;\ncvt.u64.u32 %rd7, %r10;\n\
             mov.u32 %r11, 0x00008000;\nprmt.b32 %r12, %r11, 0, 0x9999;\ncvt.u64.u32 %rd8, %r12;\n\
             mov.u64 %rd10, 0x8000000000000000;\nbfe.s64 %rd9, %rd10, 60, 10;\n",
        ) + &store64(&[
            "%rd1", "%rd2", "%rd3", "%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd9",
        ])),
        9,
    );
    assert_eq!(
        got,
        vec![
            0x5C,
            0xFFFF_FFFF,
            0,
            0,
            0xF0F0_AFC3,
            0xF0F0_A5C3 | 0xC000_0000,
            0x5544_1100,
            0xFFFF_FFFF,
            (-8i64) as u64
        ]
    );
}

#[test]
fn a_declaration_directive_may_be_written_together_with_its_type() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param.u64 k_out)\n{{\n.reg.b64 %rd<2>;\n\
         ld.param.u64 %rd1, [k_out];\nst.global.u64 [%rd1], 7;\nret;\n}}\n"
    );
    assert_eq!(run_ptx(&ptx, 1, 1, 1), [7]);
}

#[test]
fn warp_sz_is_the_warp_size() {
    let got = run_body(
        "",
        &format!(
            "mov.u32 %r1, WARP_SZ;\nadd.u32 %r2, %r1, WARP_SZ;\ncvt.u64.u32 %rd1, %r1;\n\
             cvt.u64.u32 %rd2, %r2;\n{}",
            store64(&["%rd1", "%rd2"])
        ),
        2,
    );
    assert_eq!(got, [32, 64]);
}

#[test]
fn extern_shared_declared_in_several_functions_is_one_dynamic_region() {
    let ptx = format!(
        "{HEADER}.func (.param .b32 r) get()\n{{\n.extern .shared .align 4 .b8 dyn_b[];\n\
         .reg .b32 %r<2>;\nld.shared.u32 %r1, [dyn_b+4];\nst.param.b32 [r], %r1;\nret;\n}}\n\
         .visible .entry k(.param .u64 k_out)\n{{\n.extern .shared .align 16 .b8 dyn_a[];\n\
         .reg .b32 %r<3>;\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [k_out];\n\
         st.shared.u32 [dyn_a+4], 77;\n\
         {{\n.param .b32 r;\ncall (r), get, ();\nld.param.b32 %r2, [r];\n}}\n\
         cvt.u64.u32 %rd2, %r2;\nst.global.u64 [%rd1], %rd2;\nret;\n}}\n"
    );
    let module = Module::from_ptx(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let out = DeviceBuffer::zeroed(8).unwrap();
    let config = LaunchConfig {
        grid: 1.into(),
        block: 1.into(),
        dynamic_shared_bytes: 64,
        cluster: None,
        cooperative: false,
    };
    module
        .kernel("k")
        .unwrap()
        .launch_with(&config, &[Arg::buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec::<u64>(), [77]);
}

#[test]
fn testp_classifies_each_kind_of_value() {
    // Values: 1.0, a subnormal, +0, inf, NaN; each tested for all six classes (bit k of a
    // word per class), f32 and f64.
    let values32 = [
        "0f3F800000",
        "0f00000001",
        "0f00000000",
        "0fFF800000",
        "0f7FC00000",
    ];
    let values64 = [
        "0d3FF0000000000000",
        "0d0000000000000001",
        "0d8000000000000000",
        "0d7FF0000000000000",
        "0dFFF8000000000000",
    ];
    let ops = [
        "finite",
        "infinite",
        "number",
        "notanumber",
        "normal",
        "subnormal",
    ];
    let mut body = String::new();
    for (v, (x32, x64)) in values32.iter().zip(values64).enumerate() {
        body += &format!("mov.b32 %f1, {x32};\nmov.b64 %fd1, {x64};\nmov.u64 %rd1, 0;\n");
        for (k, op) in ops.iter().enumerate() {
            body += &format!(
                "testp.{op}.f32 %p1, %f1;\nselp.u64 %rd2, {b32}, 0, %p1;\nor.b64 %rd1, %rd1, %rd2;\n\
                 testp.{op}.f64 %p1, %fd1;\nselp.u64 %rd2, {b64}, 0, %p1;\nor.b64 %rd1, %rd1, %rd2;\n",
                b32 = 1u64 << k,
                b64 = 1u64 << (k + 8),
            );
        }
        body += &format!("st.global.u64 [%out+{}], %rd1;\n", 8 * v);
    }
    let got = run_body("", &body, 5);
    // finite=1, infinite=2, number=4, notanumber=8, normal=16, subnormal=32, in both types.
    let both = |bits: u64| bits | bits << 8;
    assert_eq!(
        got,
        [
            both(1 | 4 | 16),
            both(1 | 4 | 32),
            both(1 | 4),
            both(2 | 4),
            both(8)
        ]
    );
}

#[test]
fn copysign_gives_b_the_sign_of_a_and_keeps_a_nan_payload() {
    let got = run_body(
        "",
        "mov.b32 %f1, 0fBF800000;\nmov.b32 %f2, 0f40000000;\ncopysign.f32 %f3, %f1, %f2;\n\
         mov.b32 %r1, %f3;\ncvt.u64.u32 %rd1, %r1;\n\
         mov.b32 %f2, 0f7FC00123;\ncopysign.f32 %f3, %f1, %f2;\nmov.b32 %r1, %f3;\ncvt.u64.u32 %rd2, %r1;\n\
         mov.b64 %fd1, 0d3FF0000000000000;\nmov.b64 %fd2, 0dC000000000000000;\n\
         copysign.f64 %fd3, %fd1, %fd2;\nmov.b64 %rd3, %fd3;\n\
         st.global.u64 [%out], %rd1;\nst.global.u64 [%out+8], %rd2;\nst.global.u64 [%out+16], %rd3;\n",
        3,
    );
    assert_eq!(got, [0xC000_0000, 0xFFC0_0123, 0x4000_0000_0000_0000]);
}

#[test]
fn cluster_registers_describe_clusters_of_one_cta() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<12>;\n.reg .b64 %rd<4>;\n\
         .shared .align 4 .b8 s[100];\n.extern .shared .align 16 .b8 dyn[];\n\
         ld.param.u64 %rd1, [out];\n\
         mov.u32 %r1, %clusterid.y;\nmov.u32 %r2, %nclusterid.y;\nmov.u32 %r3, %cluster_ctarank;\n\
         mov.u32 %r4, %cluster_nctarank;\nmov.u32 %r5, %cluster_ctaid.x;\nmov.u32 %r6, %cluster_nctaid.z;\n\
         mov.u32 %r7, %is_explicit_cluster;\nmov.u32 %r8, %envreg3;\nmov.u32 %r9, %total_smem_size;\n\
         mov.u32 %r10, %aggr_smem_size;\nnanosleep.u32 1000;\n\
         mov.u32 %r11, %ctaid.y;\nmul.wide.u32 %rd2, %r11, 48;\nadd.s64 %rd1, %rd1, %rd2;\n\
         st.global.v4.u32 [%rd1], {{%r1, %r2, %r3, %r4}};\nst.global.v4.u32 [%rd1+16], {{%r5, %r6, %r7, %r8}};\n\
         st.global.v2.u32 [%rd1+32], {{%r9, %r10}};\nret;\n}}\n"
    );
    let config = LaunchConfig {
        grid: Dim3::new(1, 2, 1),
        block: Dim3::new(32, 1, 1),
        dynamic_shared_bytes: 64,
        cluster: None,
        cooperative: false,
    };
    let words: Vec<u32> = launch(&ptx, 96, &config).to_vec();
    // Static shared memory ends at 100 bytes, aligned to 16 for the dynamic region: 112 + 64.
    assert_eq!(words[..10], [0, 2, 0, 1, 0, 1, 0, 0, 176, 176]);
    assert_eq!(words[12..22], [1, 2, 0, 1, 0, 1, 0, 0, 176, 176]);
}

#[test]
fn createpolicy_makes_a_policy_the_cache_hints_take_and_nothing_else_changes() {
    // No cache to steer: the opaque policy is 0 and a load or store with it is a plain one.
    let got = run_body(
        "",
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;\n\
         createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %rd2;\n\
         createpolicy.range.global.L2::evict_normal.b64 %rd3, [%out], 64, 128;\n\
         createpolicy.cvt.L2.b64 %rd4, %rd1;\n\
         st.global.L2::cache_hint.u64 [%out+32], 7, %rd1;\n\
         ld.global.L2::cache_hint.u64 %rd5, [%out+32], %rd2;\n\
         add.u64 %rd5, %rd5, %rd3;\nadd.u64 %rd5, %rd5, %rd4;\nst.global.u64 [%out], %rd5;",
        5,
    );
    assert_eq!(got, [7, 0, 0, 0, 7]);
}

#[test]
fn griddepcontrol_is_satisfied_at_once_as_launches_run_in_order() {
    // A grid starts after the grids before it completed: `wait` has nothing to wait for.
    let got = run_body(
        "",
        "griddepcontrol.wait;\nmov.u64 %rd1, 5;\ngriddepcontrol.launch_dependents;\n\
         st.global.u64 [%out], %rd1;",
        1,
    );
    assert_eq!(got, [5]);
}

#[test]
fn a_kernels_static_shared_size_ends_at_its_last_variable_as_a_gpu_reports_it() {
    // a: bytes 0..10; b, aligned to 8: bytes 16..46 (blocks still get 48: the dynamic part
    // starts 16-aligned).
    let ptx = format!(
        "{HEADER}.visible .entry k()\n{{\n.shared .align 4 .b8 a[10];\n.shared .align 8 .b8 b[30];\n\
         .reg .b32 %r;\nmov.u32 %r, a;\nst.shared.u32 [%r], 1;\nmov.u32 %r, b;\nst.shared.u32 [%r], 1;\nret;\n}}\n"
    );
    let module = Module::from_ptx(&ptx).unwrap();
    let attributes = module.kernel("k").unwrap().attributes();
    assert_eq!(attributes.static_shared_bytes, 46);
}
