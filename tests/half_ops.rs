//! Every half-precision instruction form through the JIT, against the reference
//! (`ptxjit::semantics::half_ops`, `half_approx` for `tanh`/`ex2`), bit for bit: all 65,536
//! inputs of every unary form; all pairs of the special values plus random inputs for binary
//! and ternary forms (1 M random inputs per form in the `--ignored` run); `tanh`/`ex2` also
//! against the ISA's error bounds.

mod common;

use common::{Rng, W, elementwise, special_halves};
use ptxjit::frontend::checked::{CmpOp, FloatMods, FloatOp, Op};
use ptxjit::frontend::isa::decode;
use ptxjit::semantics::half::{BF16, F16, HalfFormat};
use ptxjit::semantics::half_approx::{ex2_approx, tanh_approx};
use ptxjit::semantics::half_ops as reference;

/// The modifiers and op of an opcode, decoded the way the JIT decodes them.
fn parse(opcode: &str) -> (FloatOp, FloatMods) {
    match decode(opcode) {
        Ok(Op::Float { op, mods, .. }) => (op, mods),
        other => panic!("{opcode}: {other:?}"),
    }
}

fn format(ty: &str) -> HalfFormat {
    if ty.starts_with("bf16") { BF16 } else { F16 }
}

/// The reference for one lane of `opcode`.
fn reference_lane(opcode: &str, a: u16, b: u16, c: u16) -> u16 {
    let ty = opcode.rsplit('.').next().unwrap();
    let fmt = format(ty);
    let (op, mods) = parse(opcode);
    match op {
        FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma => {
            reference::arith(fmt, op, mods, a, b, c)
        }
        FloatOp::Neg | FloatOp::Abs => reference::neg_abs(fmt, op == FloatOp::Abs, mods.ftz, a),
        FloatOp::Min | FloatOp::Max => reference::min_max(fmt, op == FloatOp::Max, mods, a, b),
        FloatOp::Tanh => tanh_approx(fmt, a),
        FloatOp::Ex2 => ex2_approx(fmt, a),
        _ => unreachable!(),
    }
}

fn arity(opcode: &str) -> usize {
    match parse(opcode).0 {
        FloatOp::Fma => 3,
        FloatOp::Neg | FloatOp::Abs | FloatOp::Tanh | FloatOp::Ex2 => 1,
        _ => 2,
    }
}

/// Runs `opcode` on the scalar type over the operand columns and compares every result.
fn check_scalar(opcode: &str, cols: &[Vec<u64>]) {
    check_scalar_with(&ptxjit::CompileOptions::default(), opcode, cols)
}

fn check_scalar_with(opts: &ptxjit::CompileOptions, opcode: &str, cols: &[Vec<u64>]) {
    let n = arity(opcode);
    let inst = format!("{opcode} {{d}}, {}", ["{a}", "{b}", "{c}"][..n].join(", "));
    let srcs: Vec<(W, &[u64])> = cols[..n].iter().map(|c| (W::B16, &c[..])).collect();
    let got = common::elementwise_with(opts, &inst, W::B16, &srcs);
    for (i, g) in got.iter().enumerate() {
        let args: Vec<u16> = (0..3)
            .map(|k| cols.get(k).map_or(0, |c| c[i] as u16))
            .collect();
        let want = reference_lane(opcode, args[0], args[1], args[2]);
        assert_eq!(*g as u16, want, "{opcode} {:04x?}", &args[..n]);
    }
}

/// Runs the x2 form: lanes packed two by two, each compared with the reference.
fn check_pairs(opcode: &str, cols: &[Vec<u64>]) {
    check_pairs_with(&ptxjit::CompileOptions::default(), opcode, cols)
}

fn check_pairs_with(opts: &ptxjit::CompileOptions, opcode: &str, cols: &[Vec<u64>]) {
    let n = arity(opcode);
    let packed: Vec<Vec<u64>> = cols[..n]
        .iter()
        .map(|c| {
            c.chunks(2)
                .map(|p| p[0] | p.get(1).copied().unwrap_or(0) << 16)
                .collect()
        })
        .collect();
    let inst = format!("{opcode} {{d}}, {}", ["{a}", "{b}", "{c}"][..n].join(", "));
    let srcs: Vec<(W, &[u64])> = packed.iter().map(|c| (W::B32, &c[..])).collect();
    let got = common::elementwise_with(opts, &inst, W::B32, &srcs);
    for (i, g) in got.iter().enumerate() {
        for lane in 0..2 {
            let args: Vec<u16> = (0..3)
                .map(|k| packed.get(k).map_or(0, |c| (c[i] >> (16 * lane)) as u16))
                .collect();
            let want = reference_lane(opcode, args[0], args[1], args[2]);
            assert_eq!(
                (g >> (16 * lane)) as u16,
                want,
                "{opcode} lane {lane} of {:04x?}",
                &args[..n]
            );
        }
    }
}

/// Special-value combinations (all pairs; triples with a stride) then `random` random rows.
fn columns(fmt: HalfFormat, arity: usize, random: usize, seed: u64) -> Vec<Vec<u64>> {
    let s = special_halves(fmt.mant_bits, fmt.exp_bits);
    let mut cols = vec![Vec::new(), Vec::new(), Vec::new()];
    for &x in &s {
        for &y in &s {
            let zs: Vec<u16> = if arity == 3 {
                s.iter().step_by(3).copied().collect()
            } else {
                vec![0]
            };
            for &z in &zs {
                cols[0].push(x as u64);
                cols[1].push(y as u64);
                cols[2].push(z as u64);
            }
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..random {
        let r = rng.next();
        for (k, col) in cols.iter_mut().enumerate() {
            col.push((r >> (16 * k)) & 0xFFFF);
        }
    }
    cols
}

fn binary_forms() -> Vec<String> {
    let mut v = Vec::new();
    for op in ["add", "sub", "mul"] {
        for m in ["", ".rn", ".ftz", ".sat", ".rn.ftz.sat"] {
            v.push(format!("{op}{m}.f16"));
        }
        v.push(format!("{op}.bf16"));
        v.push(format!("{op}.rn.bf16"));
    }
    for op in ["min", "max"] {
        for ftz in ["", ".ftz"] {
            for nan in ["", ".NaN"] {
                for xs in ["", ".xorsign.abs"] {
                    v.push(format!("{op}{ftz}{nan}{xs}.f16"));
                    if ftz.is_empty() {
                        v.push(format!("{op}{nan}{xs}.bf16"));
                    }
                }
            }
        }
    }
    v
}

fn fma_forms() -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        ".ftz",
        ".sat",
        ".ftz.sat",
        ".relu",
        ".ftz.relu",
        ".oob",
        ".oob.relu",
    ]
    .iter()
    .map(|m| format!("fma.rn{m}.f16"))
    .collect();
    v.extend(
        ["", ".relu", ".oob", ".oob.relu"]
            .iter()
            .map(|m| format!("fma.rn{m}.bf16")),
    );
    v
}

fn random_count() -> usize {
    std::env::var("PTXJIT_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

fn check_all_binary_and_fma(random: usize, opts: &ptxjit::CompileOptions) {
    for (i, form) in binary_forms().iter().chain(&fma_forms()).enumerate() {
        let fmt = format(form.rsplit('.').next().unwrap());
        let cols = columns(fmt, arity(form), random, 0x5EED + i as u64);
        check_scalar_with(opts, form, &cols);
        let x2 = format!("{form}x2");
        check_pairs_with(opts, &x2, &cols);
    }
}

fn with_lane_groups(lane_groups: ptxjit::LaneGroups) -> ptxjit::CompileOptions {
    ptxjit::CompileOptions {
        lane_groups,
        ..Default::default()
    }
}

/// One thread at a time: the one-lane-pair helper (or inline code without F16C).
#[test]
fn binary_and_fma_forms_agree_with_the_reference() {
    check_all_binary_and_fma(random_count(), &with_lane_groups(ptxjit::LaneGroups::Off));
}

/// Lane groups, 32 and 64 lanes wide: the group helper (the implementation this CPU runs;
/// `native`'s unit test checks the others).
#[test]
fn binary_and_fma_forms_agree_with_the_reference_in_lane_groups() {
    for groups in [
        ptxjit::LaneGroups::Always,
        ptxjit::LaneGroups::AlwaysForBlockX(128),
    ] {
        check_all_binary_and_fma(random_count(), &with_lane_groups(groups));
    }
}

/// f16 arithmetic calls a precompiled helper where the host has F16C; the inline IR must give
/// the same bits.
#[test]
fn binary_and_fma_forms_agree_without_the_native_helper() {
    let inline = ptxjit::CompileOptions {
        native_helpers: None,
        ..Default::default()
    };
    check_all_binary_and_fma(random_count() / 4, &inline);
}

#[test]
#[ignore = "1 M random inputs per form: cargo test --release --test half_ops -- --ignored"]
fn binary_and_fma_forms_agree_with_the_reference_on_a_million_random_inputs() {
    check_all_binary_and_fma(1_000_000, &with_lane_groups(ptxjit::LaneGroups::Off));
    check_all_binary_and_fma(1_000_000, &with_lane_groups(ptxjit::LaneGroups::Always));
    let widest = ptxjit::LaneGroups::AlwaysForBlockX(128);
    check_all_binary_and_fma(1_000_000, &with_lane_groups(widest));
    let inline = ptxjit::CompileOptions {
        native_helpers: None,
        ..Default::default()
    };
    check_all_binary_and_fma(1_000_000, &inline);
}

#[test]
fn every_unary_form_agrees_on_all_65536_inputs() {
    let all: Vec<u64> = (0..=0xFFFF).collect();
    let cols = vec![all.clone(), all.clone(), all];
    for form in [
        "neg.f16",
        "neg.ftz.f16",
        "neg.bf16",
        "abs.f16",
        "abs.ftz.f16",
        "abs.bf16",
        "tanh.approx.f16",
        "tanh.approx.bf16",
        "ex2.approx.f16",
        "ex2.approx.ftz.bf16",
    ] {
        check_scalar(form, &cols);
        check_pairs(&format!("{form}x2"), &cols);
    }
}

/// The H200's results (`half_approx`) keep the ISA's bounds but at two bf16 inputs, ±0.74609375
/// (0x3f3f, 0xbf3f): `tanh` gives ±0.62890625 for ±0.632812755, 2^-7.9999 off, where the
/// ISA says 2^-8. (f16 `tanh` reaches its bound, 2^-10.987, to four digits.)
#[test]
fn tanh_and_ex2_are_within_the_isa_error_bounds_but_where_the_h200_is_not() {
    let tanh_beyond_bound = [(BF16, 0x3f3f), (BF16, 0xbf3f)];
    for (fmt, ty, tanh_bound, ex2_bound) in [
        (F16, "f16", 2f64.powf(-10.987), 2f64.powf(-9.9)),
        (BF16, "bf16", 2f64.powi(-8), 2f64.powi(-7)),
    ] {
        for h in 0..=0xFFFFu16 {
            let x = fmt.to_f64(h);
            if x.is_nan() {
                continue;
            }
            let t = fmt.to_f64(tanh_approx(fmt, h));
            let within = (t - x.tanh()).abs() <= tanh_bound;
            assert_eq!(
                within,
                !tanh_beyond_bound.contains(&(fmt, h)),
                "tanh.{ty}({x}) = {t}"
            );
            let ftz = fmt == BF16;
            let e = fmt.to_f64(ex2_approx(fmt, h));
            let exact = if ftz {
                fmt.to_f64(fmt.flush(h)).exp2()
            } else {
                x.exp2()
            };
            let tiny = 2f64.powi(fmt.emin());
            if exact.is_finite() && exact >= tiny && e.is_finite() {
                assert!(
                    ((e - exact) / exact).abs() <= ex2_bound,
                    "ex2.{ty}({x}) = {e}, exact {exact}"
                );
            }
        }
    }
}

/// `set`/`setp` over every comparison: special pairs through the JIT against
/// `reference::compare_half`.
#[test]
fn comparisons_agree_with_the_reference_for_every_cmp_op() {
    let cmps = [
        ("eq", CmpOp::Eq),
        ("ne", CmpOp::Ne),
        ("lt", CmpOp::Lt),
        ("le", CmpOp::Le),
        ("gt", CmpOp::Gt),
        ("ge", CmpOp::Ge),
        ("equ", CmpOp::Equ),
        ("neu", CmpOp::Neu),
        ("ltu", CmpOp::Ltu),
        ("leu", CmpOp::Leu),
        ("gtu", CmpOp::Gtu),
        ("geu", CmpOp::Geu),
        ("num", CmpOp::Num),
        ("nan", CmpOp::Nan),
    ];
    for (fmt, ty) in [(F16, "f16"), (BF16, "bf16")] {
        let cols = columns(fmt, 2, 2_000, 9);
        for (name, cmp) in cmps {
            for ftz in ["", ".ftz"] {
                if ty == "bf16" && !ftz.is_empty() {
                    continue;
                }
                // set with an f16/bf16 destination writes 1.0 or 0.0.
                let got = elementwise(
                    &format!("set.{name}{ftz}.{ty}.{ty} {{d}}, {{a}}, {{b}}"),
                    W::B16,
                    &[(W::B16, &cols[0]), (W::B16, &cols[1])],
                );
                // set with a u32 destination writes all ones or zero.
                let got32 = elementwise(
                    &format!("set.{name}{ftz}.u32.{ty} {{d}}, {{a}}, {{b}}"),
                    W::B32,
                    &[(W::B16, &cols[0]), (W::B16, &cols[1])],
                );
                for i in 0..got.len() {
                    let t = reference::compare_half(
                        fmt,
                        cmp,
                        !ftz.is_empty(),
                        cols[0][i] as u16,
                        cols[1][i] as u16,
                    );
                    assert_eq!(
                        got[i] as u16,
                        if t { fmt.one() } else { 0 },
                        "set.{name}{ftz}.{ty} {:#06x} {:#06x}",
                        cols[0][i],
                        cols[1][i]
                    );
                    assert_eq!(got32[i], if t { 0xFFFF_FFFF } else { 0 });
                }
            }
        }
    }
}

#[test]
fn set_on_pairs_packs_lanes_and_combines_with_a_predicate() {
    // Lanes (1.0, 2.0) vs (2.0, 2.0): lt → (true, false); le → (true, true).
    let a = [0x4000_3C00u64];
    let b = [0x4000_4000u64];
    let got = elementwise(
        "set.lt.f16x2.f16x2 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b)],
    );
    assert_eq!(got, vec![0x0000_3C00]);
    let got = elementwise(
        "set.le.u32.f16x2 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b)],
    );
    assert_eq!(got, vec![0xFFFF_FFFF]);
    let got = elementwise(
        "set.lt.bf16x2.bf16x2 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &[0x4000_3F80]), (W::B32, &[0x4000_4000])],
    );
    assert_eq!(got, vec![0x0000_3F80]);
    // BoolOp with a negated predicate: setp.eq gives p = true; set.lt.and with !p → false.
    let got = elementwise(
        "{ .reg .pred %q; setp.eq.f16 %q, {a}, {a}; set.lt.and.u32.f16 {d}, {a}, {b}, !%q; }",
        W::B32,
        &[(W::B16, &[0x3C00]), (W::B16, &[0x4000])],
    );
    assert_eq!(got, vec![0]);
    let got = elementwise(
        "{ .reg .pred %q; setp.eq.f16 %q, {a}, {a}; set.lt.xor.f16.f32 {d}, {a}, {b}, %q; }",
        W::B16,
        &[
            (W::B32, &[1.0f32.to_bits() as u64]),
            (W::B32, &[2.0f32.to_bits() as u64]),
        ],
    );
    assert_eq!(got, vec![0]);
}

#[test]
fn setp_on_pairs_writes_p_from_the_low_lane_and_q_from_the_high_lane() {
    let got = elementwise(
        "{ .reg .pred %p1, %p2; setp.gt.f16x2 %p1|%p2, {a}, {b}; selp.b32 {d}, 1, 0, %p1; selp.b32 %r1, 2, 0, %p2; or.b32 {d}, {d}, %r1; }",
        W::B32,
        &[
            (W::B32, &[0x3C00_4200, 0x4200_3C00]),
            (W::B32, &[0x4000_4000, 0x4000_4000]),
        ],
    );
    assert_eq!(got, vec![1, 2]);
}

#[test]
fn cvt_relu_and_satfinite_agree_with_the_reference() {
    let mut xs: Vec<u64> = [
        0f32,
        -0.0,
        1.0,
        -1.0,
        65504.0,
        65520.0,
        1e9,
        -1e9,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.4e38,
        -5e-8,
    ]
    .iter()
    .map(|x| x.to_bits() as u64)
    .collect();
    let mut rng = Rng(3);
    xs.extend((0..20_000).map(|_| rng.next() & 0xFFFF_FFFF));
    for (fmt, ty) in [(F16, "f16"), (BF16, "bf16")] {
        for (mode, m) in [
            (ptxjit::frontend::checked::Rounding::Rn, "rn"),
            (ptxjit::frontend::checked::Rounding::Rz, "rz"),
        ] {
            for (relu, satfinite, mods) in [
                (true, false, ".relu"),
                (false, true, ".satfinite"),
                (true, true, ".relu.satfinite"),
            ] {
                let got = elementwise(
                    &format!("cvt.{m}{mods}.{ty}.f32 {{d}}, {{a}}"),
                    W::B16,
                    &[(W::B32, &xs)],
                );
                for (x, g) in xs.iter().zip(&got) {
                    let want = reference::convert(
                        fmt,
                        f32::from_bits(*x as u32) as f64,
                        mode,
                        relu,
                        satfinite,
                    );
                    assert_eq!(*g as u16, want, "cvt.{m}{mods}.{ty}.f32 of {x:#010x}");
                }
            }
        }
    }
    // The x2 form: first source → high half.
    let got = elementwise(
        "cvt.rn.relu.satfinite.f16x2.f32 {d}, {a}, {b}",
        W::B32,
        &[
            (W::B32, &[(-1.0f32).to_bits() as u64]),
            (W::B32, &[1e9f32.to_bits() as u64]),
        ],
    );
    assert_eq!(got, vec![0x0000_7BFF]);
}

#[test]
fn forms_the_isa_does_not_define_are_rejected() {
    for bad in [
        "add.ftz.bf16",
        "add.sat.bf16",
        "fma.rn.sat.relu.f16",
        "fma.f16",
        "fma.rn.ftz.bf16",
        "fma.rn.oob.ftz.f16",
        "neg.ftz.bf16",
        "min.ftz.bf16",
        "min.sat.f16",
        "tanh.f16",
        "ex2.approx.bf16",
        "ex2.approx.ftz.f16",
        "add.relu.f16",
        "sqrt.rn.f16",
    ] {
        assert!(decode(bad).is_err(), "{bad} should be rejected");
    }
}

/// The JIT's fma takes a fast f32 path unless the f32 result sits exactly on a midpoint of the
/// half grid: cases built to land next to midpoints (products near 1 plus tiny addends).
#[test]
fn fma_near_midpoints_rounds_once() {
    let mut rng = Rng(0xF3A);
    for (fmt, ty, one) in [(F16, "f16", 0x3C00u64), (BF16, "bf16", 0x3F80)] {
        let mant = (1u64 << fmt.mant_bits) - 1;
        let mut cols = vec![Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..100_000 {
            let r = rng.next();
            cols[0].push(one | (r & mant));
            cols[1].push(one | ((r >> 16) & mant));
            // Tiny addends: subnormals and the smallest normals, either sign.
            let c = (r >> 32) & ((1 << (fmt.mant_bits + 2)) - 1);
            cols[2].push(c | ((r >> 63) << 15));
        }
        let inline = ptxjit::CompileOptions {
            native_helpers: None,
            ..Default::default()
        };
        for opts in [ptxjit::CompileOptions::default(), inline] {
            check_scalar_with(&opts, &format!("fma.rn.{ty}"), &cols);
            check_pairs_with(&opts, &format!("fma.rn.{ty}x2"), &cols);
        }
    }
}
