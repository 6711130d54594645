//! `mma.sync.aligned`, a case per shape and type family: each lane's A, B and C registers are
//! built from whole matrices with the ISA's fragment tables (written out here, per shape), the
//! warp multiplies, and D must be the plain matrix product at D's fragment positions. Values
//! are chosen so every sum is exact, so the accumulation rule plays no part.

mod common;

use common::Rng;
use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

/// How one mma form lays its operands out (ISA "Matrix Fragments for mma").
struct Form {
    /// The instruction, e.g. `mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32`.
    inst: &'static str,
    m: usize,
    n: usize,
    k: usize,
    /// Bits per A/B element and per C/D element.
    ab_bits: u32,
    cd_bits: u32,
    /// Encodes a small integer or dyadic value in A/B's format.
    encode: fn(f64) -> u64,
    /// C/D element bits from a value, and back.
    acc: fn(f64) -> u64,
    acc_value: fn(u64) -> f64,
}

fn f16_bits(x: f64) -> u64 {
    half::f16::from_f64(x).to_bits() as u64
}
fn bf16_bits(x: f64) -> u64 {
    half::bf16::from_f64(x).to_bits() as u64
}
fn f32_bits(x: f64) -> u64 {
    (x as f32).to_bits() as u64
}
fn f32_value(b: u64) -> f64 {
    f32::from_bits(b as u32) as f64
}
fn f16_value(b: u64) -> f64 {
    half::f16::from_bits(b as u16).to_f64()
}
fn i8_bits(x: f64) -> u64 {
    x as i64 as u8 as u64
}
fn i32_bits(x: f64) -> u64 {
    x as i64 as u32 as u64
}
fn i32_value(b: u64) -> f64 {
    b as u32 as i32 as f64
}
fn e4m3_bits(x: f64) -> u64 {
    use ptxjit::frontend::checked::Rounding;
    ptxjit::semantics::minifloat::Mini::E4m3.round(x, Rounding::Rn, false) as u64
}
fn f64_bits(x: f64) -> u64 {
    x.to_bits()
}
fn f64_value(b: u64) -> f64 {
    f64::from_bits(b)
}

/// (row, column) of element `j` of A register `r` of lane (g, t) — the ISA's tables.
fn a_at(f: &Form, g: usize, t: usize, r: usize, j: usize) -> (usize, usize) {
    let per = (32 / f.ab_bits).max(1) as usize;
    if f.m == 8 {
        return (g, t * per + j);
    }
    (g + 8 * (r % 2), t * per + j + (r / 2) * (f.k / 2))
}

fn b_at(f: &Form, g: usize, t: usize, r: usize, j: usize) -> (usize, usize) {
    let per = (32 / f.ab_bits).max(1) as usize;
    (t * per + j + r * (f.k / 2), g)
}

fn cd_at(f: &Form, g: usize, t: usize, i: usize) -> (usize, usize) {
    if f.m == 8 {
        return (g, 2 * t + i);
    }
    (g + 8 * (i / 2), 2 * t + i % 2)
}

/// Runs `f` on random small values; D must equal A·B + C exactly.
/// Runs `k(.param .u64 in, .param .u64 out)` of `ptx` (compiled with `lane_groups`) in one
/// block of `threads` with `input`, and returns `out`, of `out_bytes` bytes.
fn run_in_out(
    ptx: &str,
    lane_groups: LaneGroups,
    threads: u32,
    input: &DeviceBuffer,
    out_bytes: usize,
) -> DeviceBuffer {
    let opts = CompileOptions {
        lane_groups,
        ..CompileOptions::default()
    };
    let module =
        Module::from_ptx_named("mma.ptx", ptx, &opts).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let out = DeviceBuffer::zeroed(out_bytes).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(1, threads, &[Arg::buffer(input), Arg::buffer(&out)])
        .unwrap();
    out
}

fn multiplies(f: &Form, lo: i64, hi: i64, seed: u64) {
    let mut rng = Rng(seed);
    let mut value = || (lo + (rng.next() % (hi - lo + 1) as u64) as i64) as f64;
    let a: Vec<Vec<f64>> = (0..f.m)
        .map(|_| (0..f.k).map(|_| value()).collect())
        .collect();
    let b: Vec<Vec<f64>> = (0..f.k)
        .map(|_| (0..f.n).map(|_| value()).collect())
        .collect();
    let c: Vec<Vec<f64>> = (0..f.m)
        .map(|_| (0..f.n).map(|_| value() * 4.0).collect())
        .collect();
    let wide = f.ab_bits == 64;
    let word = if wide { 64 } else { 32 };
    let per_ab = (word / f.ab_bits) as usize;
    let per_cd = (word / f.cd_bits) as usize;
    let (na, nb) = (f.m * f.k / 32 / per_ab, f.k * f.n / 32 / per_ab);
    let (nc, elems) = (f.m * f.n / 32 / per_cd, f.m * f.n / 32);
    let mut regs = vec![0u64; 32 * (na + nb + nc)];
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        let lane = &mut regs[l * (na + nb + nc)..];
        for (r, reg) in lane.iter_mut().enumerate().take(na) {
            for j in 0..per_ab {
                let (row, col) = a_at(f, g, t, r, j);
                *reg |= (f.encode)(a[row][col]) << (f.ab_bits as usize * j % word as usize);
            }
        }
        for r in 0..nb {
            for j in 0..per_ab {
                let (kk, col) = b_at(f, g, t, r, j);
                lane[na + r] |= (f.encode)(b[kk][col]) << (f.ab_bits as usize * j % word as usize);
            }
        }
        for i in 0..elems {
            let (row, col) = cd_at(f, g, t, i);
            lane[na + nb + i / per_cd] |=
                (f.acc)(c[row][col]) << (f.cd_bits as usize * (i % per_cd) % word as usize);
        }
    }
    let t = if wide { "b64" } else { "b32" };
    let regs_of = |p: &str, n: usize| {
        (0..n)
            .map(|i| format!("%{p}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (na_s, nb_s, nc_s) = (regs_of("a", na), regs_of("b", nb), regs_of("c", nc));
    let d_s = regs_of("d", nc);
    let loads: String = (0..na + nb + nc)
        .map(|i| {
            let name = if i < na {
                format!("%a{i}")
            } else if i < na + nb {
                format!("%b{}", i - na)
            } else {
                format!("%c{}", i - na - nb)
            };
            format!("ld.global.{t} {name}, [%rd2+{}];\n", i * word as usize / 8)
        })
        .collect();
    let stores: String = (0..nc)
        .map(|i| format!("st.global.{t} [%rd3+{}], %d{i};\n", i * word as usize / 8))
        .collect();
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .{t} %a<{na}>, %b<{nb}>, %c<{nc}>, %d<{nc}>;\n.reg .b32 %r<2>;\n.reg .b64 %rd<6>;\n\
         mov.u32 %r0, %tid.x;\nld.param.u64 %rd0, [in];\nld.param.u64 %rd1, [out];\n\
         mul.wide.u32 %rd4, %r0, {inb};\nadd.s64 %rd2, %rd0, %rd4;\n\
         mul.wide.u32 %rd5, %r0, {outb};\nadd.s64 %rd3, %rd1, %rd5;\n{loads}\
         {inst} {{{d_s}}}, {{{na_s}}}, {{{nb_s}}}, {{{nc_s}}};\n{stores}ret;\n}}\n",
        inst = f.inst,
        inb = (na + nb + nc) * word as usize / 8,
        outb = nc * word as usize / 8,
    );
    for lanes in [LaneGroups::Always, LaneGroups::Off] {
        let bytes: Vec<u8> = regs
            .iter()
            .flat_map(|w| w.to_le_bytes()[..word as usize / 8].to_vec())
            .collect();
        let input = DeviceBuffer::from_slice(&bytes).unwrap();
        let got = run_in_out(&ptx, lanes, 32, &input, 32 * nc * word as usize / 8).to_bytes();
        for l in 0..32 {
            let (g, t) = (l / 4, l % 4);
            for i in 0..elems {
                let (row, col) = cd_at(f, g, t, i);
                let at = (l * nc + i / per_cd) * word as usize / 8;
                let w = u64::from_le_bytes(
                    got[at..at + 8.min(word as usize / 8)]
                        .iter()
                        .chain([0u8; 8].iter())
                        .take(8)
                        .copied()
                        .collect::<Vec<_>>()
                        .try_into()
                        .unwrap(),
                );
                let bits = (w >> (f.cd_bits as usize * (i % per_cd) % word as usize))
                    & if f.cd_bits == 64 {
                        u64::MAX
                    } else {
                        (1 << f.cd_bits) - 1
                    };
                let want: f64 =
                    (0..f.k).map(|kk| a[row][kk] * b[kk][col]).sum::<f64>() + c[row][col];
                assert_eq!(
                    (f.acc_value)(bits),
                    want,
                    "{} D[{row}][{col}] ({lanes:?})",
                    f.inst
                );
            }
        }
    }
}

#[test]
fn m16n8k8_f16_with_f16_and_f32_accumulators() {
    for (inst, cd_bits, acc, acc_value) in [
        (
            "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
            16,
            f16_bits as fn(f64) -> u64,
            f16_value as fn(u64) -> f64,
        ),
        (
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
            32,
            f32_bits,
            f32_value,
        ),
    ] {
        let f = Form {
            inst,
            m: 16,
            n: 8,
            k: 8,
            ab_bits: 16,
            cd_bits,
            encode: f16_bits,
            acc,
            acc_value,
        };
        multiplies(&f, -8, 8, 1);
    }
}

#[test]
fn m16n8k8_and_k16_bf16() {
    for (inst, k) in [
        ("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 8),
        ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16),
    ] {
        let f = Form {
            inst,
            m: 16,
            n: 8,
            k,
            ab_bits: 16,
            cd_bits: 32,
            encode: bf16_bits,
            acc: f32_bits,
            acc_value: f32_value,
        };
        multiplies(&f, -100, 100, 2);
    }
}

#[test]
fn m16n8k4_and_k8_tf32() {
    for (inst, k) in [
        ("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 4),
        ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8),
    ] {
        let f = Form {
            inst,
            m: 16,
            n: 8,
            k,
            ab_bits: 32,
            cd_bits: 32,
            encode: f32_bits,
            acc: f32_bits,
            acc_value: f32_value,
        };
        multiplies(&f, -1000, 1000, 3);
    }
}

#[test]
fn int8_shapes_accumulate_exactly_in_s32() {
    for (inst, m, k) in [
        ("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 8, 16),
        ("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 16, 16),
        (
            "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
            16,
            32,
        ),
    ] {
        let f = Form {
            inst,
            m,
            n: 8,
            k,
            ab_bits: 8,
            cd_bits: 32,
            encode: i8_bits,
            acc: i32_bits,
            acc_value: i32_value,
        };
        multiplies(&f, -128, 127, 4);
    }
}

#[test]
fn e4m3_m16n8k32_decodes_fp8_inputs() {
    let f = Form {
        inst: "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        m: 16,
        n: 8,
        k: 32,
        ab_bits: 8,
        cd_bits: 32,
        encode: e4m3_bits,
        acc: f32_bits,
        acc_value: f32_value,
    };
    multiplies(&f, -15, 15, 5);
}

#[test]
fn m8n8k4_f64_is_a_chain_of_fmas() {
    let f = Form {
        inst: "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
        m: 8,
        n: 8,
        k: 4,
        ab_bits: 64,
        cd_bits: 64,
        encode: f64_bits,
        acc: f64_bits,
        acc_value: f64_value,
    };
    multiplies(&f, -1_000_000, 1_000_000, 6);
}

/// `mma.m8n8k4` on f16 (ISA "Matrix Fragments for mma.m8n8k4 with .f16 floating point
/// type"): quad pair q, lanes 4q..4q+3 (low) and 16+4q..16+4q+3 (high, h = 4), multiplies
/// its own matrices. With r = lane mod 4: A element i at (r + h, i) `.row`, (i + h, r)
/// `.col`; B element i at (r, i + h) `.row`, (i, r + h) `.col`; an f16 C/D element i at
/// (r + h, i); an f32 C/D element i at ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)).
fn quad_pair_at(lane: usize, i: usize, f32_acc: bool) -> (usize, usize) {
    let h = if lane >= 16 { 4 } else { 0 };
    if f32_acc {
        ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1))
    } else {
        (lane % 4 + h, i)
    }
}

#[test]
fn m8n8k4_f16_multiplies_one_matrix_per_quad_pair_in_every_layout() {
    let mut rng = Rng(8);
    let mut value = |scale: f64| ((rng.next() % 17) as f64 - 8.0) * scale;
    for a_row in [true, false] {
        for b_row in [true, false] {
            for c_f32 in [false, true] {
                for d_f32 in [false, true] {
                    let layout = |row: bool| if row { "row" } else { "col" };
                    let ty = |f32: bool| if f32 { "f32" } else { "f16" };
                    let inst = format!(
                        "mma.sync.aligned.m8n8k4.{}.{}.{}.f16.f16.{}",
                        layout(a_row),
                        layout(b_row),
                        ty(d_f32),
                        ty(c_f32)
                    );
                    let a: Vec<[[f64; 4]; 8]> = (0..4)
                        .map(|_| [[0.0; 4]; 8].map(|r| r.map(|_| value(1.0))))
                        .collect();
                    let b: Vec<[[f64; 8]; 4]> = (0..4)
                        .map(|_| [[0.0; 8]; 4].map(|r| r.map(|_| value(1.0))))
                        .collect();
                    let c: Vec<[[f64; 8]; 8]> = (0..4)
                        .map(|_| [[0.0; 8]; 8].map(|r| r.map(|_| value(4.0))))
                        .collect();
                    let (nc, nd) = (if c_f32 { 8 } else { 4 }, if d_f32 { 8 } else { 4 });
                    let mut words = vec![0u32; 32 * (4 + nc)];
                    for l in 0..32 {
                        let (q, r, h) = ((l % 16) / 4, l % 4, if l >= 16 { 4 } else { 0 });
                        let lane = &mut words[l * (4 + nc)..];
                        for i in 0..4 {
                            let (row, col) = if a_row { (r + h, i) } else { (i + h, r) };
                            lane[i / 2] |= (f16_bits(a[q][row][col]) as u32) << (16 * (i % 2));
                            let (row, col) = if b_row { (r, i + h) } else { (i, r + h) };
                            lane[2 + i / 2] |= (f16_bits(b[q][row][col]) as u32) << (16 * (i % 2));
                        }
                        for i in 0..8 {
                            let (row, col) = quad_pair_at(l, i, c_f32);
                            let v = c[q][row][col];
                            if c_f32 {
                                lane[4 + i] = (v as f32).to_bits();
                            } else {
                                lane[4 + i / 2] |= (f16_bits(v) as u32) << (16 * (i % 2));
                            }
                        }
                    }
                    let regs = |p: &str, n: usize| {
                        (0..n)
                            .map(|i| format!("%{p}{i}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let loads: String = (0..4 + nc)
                        .map(|i| {
                            let name = match i {
                                0 | 1 => format!("%a{i}"),
                                2 | 3 => format!("%b{}", i - 2),
                                _ => format!("%c{}", i - 4),
                            };
                            format!("ld.global.b32 {name}, [%rd2+{}];\n", 4 * i)
                        })
                        .collect();
                    let stores: String = (0..nd)
                        .map(|i| format!("st.global.b32 [%rd3+{}], %d{i};\n", 4 * i))
                        .collect();
                    let ptx = format!(
                        ".version 8.0\n.target sm_90\n.address_size 64\n\
                         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
                         .reg .b32 %a<2>, %b<2>, %c<{nc}>, %d<{nd}>;\n.reg .b32 %r<2>;\n.reg .b64 %rd<6>;\n\
                         mov.u32 %r0, %tid.x;\nld.param.u64 %rd0, [in];\nld.param.u64 %rd1, [out];\n\
                         mul.wide.u32 %rd4, %r0, {inb};\nadd.s64 %rd2, %rd0, %rd4;\n\
                         mul.wide.u32 %rd5, %r0, {outb};\nadd.s64 %rd3, %rd1, %rd5;\n{loads}\
                         {inst} {{{d}}}, {{%a0, %a1}}, {{%b0, %b1}}, {{{cs}}};\n{stores}ret;\n}}\n",
                        inb = 4 * (4 + nc),
                        outb = 4 * nd,
                        d = regs("d", nd),
                        cs = regs("c", nc),
                    );
                    for lanes in [LaneGroups::Always, LaneGroups::Off] {
                        let input = DeviceBuffer::from_slice(&words).unwrap();
                        let got = run_in_out(&ptx, lanes, 32, &input, 32 * nd * 4).to_vec::<u32>();
                        for l in 0..32 {
                            let q = (l % 16) / 4;
                            for i in 0..8 {
                                let (row, col) = quad_pair_at(l, i, d_f32);
                                let want: f64 =
                                    (0..4).map(|k| a[q][row][k] * b[q][k][col]).sum::<f64>()
                                        + c[q][row][col];
                                let g = if d_f32 {
                                    f32_value(got[l * nd + i] as u64)
                                } else {
                                    f16_value((got[l * nd + i / 2] >> (16 * (i % 2))) as u64)
                                };
                                assert_eq!(g, want, "{inst} lane {l} D[{row}][{col}] ({lanes:?})");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Runs `k(.param .u64 out, .param .u32 skip)` of `ptx` over one warp and returns `out`:
/// `words` f32 a lane.
fn warp_floats(ptx: &str, lane_groups: LaneGroups, skip: u32, words: usize) -> Vec<f32> {
    let opts = CompileOptions {
        lane_groups,
        ..CompileOptions::default()
    };
    let module = Module::from_ptx_named("mma.ptx", ptx, &opts).unwrap();
    let out = DeviceBuffer::zeroed(32 * 4 * words).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(1, 32, &[Arg::buffer(&out), Arg::u32(skip)])
        .unwrap();
    out.to_vec::<u32>()
        .into_iter()
        .map(f32::from_bits)
        .collect()
}

#[test]
fn consecutive_mmas_run_in_order_each_reading_the_ones_before() {
    // Every A and B element 1 (f16), so each product adds k = 16 wherever the fragments
    // sit; each mma reads the D before it as its C (the first, C = 1, dead after it), and
    // the run is cut by a label, which a branch may jump to past the others.
    let one = "0x3C003C00";
    let mma = |d: &str, c: &str| {
        let regs = |p: &str| {
            (0..4)
                .map(|i| format!("%{p}{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{{}}}, {{%a0, %a1, %a2, %a3}}, \
             {{%a0, %a1}}, {{{}}};\n",
            regs(d),
            regs(c)
        )
    };
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 out, .param .u32 skip)\n{{\n\
         .reg .b32 %a<4>, %c<4>, %d<4>, %e<4>, %r<2>;\n.reg .b64 %rd<4>;\n.reg .pred %p;\n\
         mov.b32 %a0, {one};\nmov.b32 %a1, {one};\nmov.b32 %a2, {one};\nmov.b32 %a3, {one};\n\
         mov.b32 %c0, 0f3F800000;\nmov.b32 %c1, 0f3F800000;\nmov.b32 %c2, 0f3F800000;\n\
         mov.b32 %c3, 0f3F800000;\nmov.b32 %d3, 0;\nmov.b32 %e3, 0;\n\
         ld.param.u32 %r1, [skip];\nsetp.ne.u32 %p, %r1, 0;\n@%p bra CUT;\n\
         {}{}{}CUT:\n{}\
         mov.u32 %r0, %tid.x;\nld.param.u64 %rd0, [out];\nmul.wide.u32 %rd1, %r0, 12;\n\
         add.s64 %rd2, %rd0, %rd1;\nst.global.b32 [%rd2], %d3;\nst.global.b32 [%rd2+4], %e3;\n\
         st.global.b32 [%rd2+8], %c3;\nret;\n}}\n",
        mma("d", "c"),
        mma("e", "d"),
        mma("d", "e"),
        mma("c", "d"),
    );
    for (lanes, skip) in [LaneGroups::Always, LaneGroups::Off]
        .into_iter()
        .flat_map(|l| [(l, 0), (l, 1)])
    {
        let got = warp_floats(&ptx, lanes, skip, 3);
        let want = match skip {
            0 => [49.0, 33.0, 65.0],
            _ => [0.0, 0.0, 16.0],
        };
        for lane in got.chunks(3) {
            assert_eq!(lane, want, "{lanes:?}, skip {skip}");
        }
    }
}

#[test]
fn a_guarded_mma_is_performed_where_its_guard_holds() {
    // (Its operands pass through the frame, not the registers' slots: a guarded mma is no
    // part of a run.) Every A and B element 1 (f16) and C 1: D = 16 + 1 where the guard
    // holds, its old value elsewhere.
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 out, .param .u32 skip)\n{\n\
         .reg .b32 %a<4>, %c<4>, %d<4>, %r<2>;\n.reg .b64 %rd<4>;\n.reg .pred %p;\n\
         mov.b32 %a0, 0x3C003C00;\nmov.b32 %a1, 0x3C003C00;\nmov.b32 %a2, 0x3C003C00;\n\
         mov.b32 %a3, 0x3C003C00;\nmov.b32 %c0, 0f3F800000;\nmov.b32 %c1, 0f3F800000;\n\
         mov.b32 %c2, 0f3F800000;\nmov.b32 %c3, 0f3F800000;\nmov.b32 %d3, 0f40000000;\n\
         ld.param.u32 %r1, [skip];\nsetp.eq.u32 %p, %r1, 0;\n\
         @%p mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, \
         {%a0, %a1, %a2, %a3}, {%a0, %a1}, {%c0, %c1, %c2, %c3};\n\
         mov.u32 %r0, %tid.x;\nld.param.u64 %rd0, [out];\nmul.wide.u32 %rd1, %r0, 4;\n\
         add.s64 %rd2, %rd0, %rd1;\nst.global.b32 [%rd2], %d3;\nret;\n}\n";
    for (lanes, skip) in [LaneGroups::Always, LaneGroups::Off]
        .into_iter()
        .flat_map(|l| [(l, 0), (l, 1)])
    {
        let want = if skip == 0 { 17.0 } else { 2.0 };
        for d in warp_floats(ptx, lanes, skip, 1) {
            assert_eq!(d, want, "{lanes:?}, skip {skip}");
        }
    }
}

#[test]
fn the_lane_group_form_multiplies_m16n8k16_halves_to_the_one_thread_forms_bits() {
    // Every m16n8k16 form on halves, over two warps of random operands (NaNs, infinities,
    // subnormals and zeros among the raw ones): the group code computes these in the group
    // (`simd::warp`), the one-thread code between rounds (`sync`).
    let forms = [
        ("f32", "f16", "f32"),
        ("f32", "f16", "f16"),
        ("f16", "f16", "f32"),
        ("f16", "f16", "f16"),
        ("f32", "bf16", "f32"),
    ];
    let mut rng = Rng(40);
    for (d, ab, c) in forms {
        let (nc, nd) = (
            if c == "f32" { 4 } else { 2 },
            if d == "f32" { 4 } else { 2 },
        );
        let words = 6 + nc;
        let regs = |p: &str, n: usize| {
            (0..n)
                .map(|i| format!("%{p}{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let loads: String = (0..words)
            .map(|i| format!("ld.global.b32 %s{i}, [%rd2+{}];\n", 4 * i))
            .collect();
        let stores: String = (0..nd)
            .map(|i| format!("st.global.b32 [%rd3+{}], %d{i};\n", 4 * i))
            .collect();
        let sources = |from: usize, n: usize| {
            (from..from + n)
                .map(|i| format!("%s{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
             .reg .b32 %s<{words}>, %d<{nd}>, %r<2>;\n.reg .b64 %rd<6>;\n\
             mov.u32 %r0, %tid.x;\nld.param.u64 %rd0, [in];\nld.param.u64 %rd1, [out];\n\
             mul.wide.u32 %rd4, %r0, {inb};\nadd.s64 %rd2, %rd0, %rd4;\n\
             mul.wide.u32 %rd5, %r0, {outb};\nadd.s64 %rd3, %rd1, %rd5;\n{loads}\
             mma.sync.aligned.m16n8k16.row.col.{d}.{ab}.{ab}.{c} {{{ds}}}, {{{a}}}, {{{b}}}, \
             {{{cs}}};\n{stores}ret;\n}}\n",
            inb = 4 * words,
            outb = 4 * nd,
            ds = regs("d", nd),
            a = sources(0, 4),
            b = sources(4, 2),
            cs = sources(6, nc),
        );
        // (Mostly moderate magnitudes, whose sums vary; one word in eight raw bits.)
        let input: Vec<u32> = (0..64 * words)
            .map(|i| {
                let (bits, raw) = (rng.next() as u32, rng.next().is_multiple_of(8));
                let f32_word = i % words >= 6 && c == "f32";
                match (raw, f32_word, ab) {
                    (true, ..) => bits,
                    (false, true, _) => bits & 0x81FF_FFFF | 0x3E00_0000,
                    (false, false, "bf16") => bits & 0x81FF_81FF | 0x3E00_3E00,
                    (false, false, _) => bits & 0x87FF_87FF | 0x3000_3000,
                }
            })
            .collect();
        let input = DeviceBuffer::from_slice(&input).unwrap();
        let run =
            |lane_groups| run_in_out(&ptx, lane_groups, 64, &input, 64 * nd * 4).to_vec::<u32>();
        let (grouped, one_thread) = (run(LaneGroups::Always), run(LaneGroups::Off));
        for (i, (g, o)) in grouped.iter().zip(&one_thread).enumerate() {
            assert_eq!(
                g,
                o,
                "{d}.{ab}.{ab}.{c}: thread {} D register {}",
                i / nd,
                i % nd
            );
        }
    }
}
