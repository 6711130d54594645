//! Directed rounding of f32/f64 arithmetic (`.rz .rm .rp`): the reference
//! (`semantics::directed`, integer arithmetic) against oracles that share nothing with it,
//! then the JIT (which calls it) on real instructions.
//!
//! - To nearest, the reference must equal the host's operations, bit for bit.
//! - f32: the exact result is a pair of f64s (`hi + lo`, from error-free transformations,
//!   exact for f32 operands); rounding it in a direction is a choice between the two f32
//!   neighbours of `hi`, decided by `lo`'s sign when `hi` is itself an f32.
//! - f64: the same with the host's round-to-nearest result and its exact error, where the
//!   error is exact (results in the normal range).

mod common;

use common::Rng;
use ptxjit::frontend::checked::Rounding;
use ptxjit::semantics::directed::{Arith, f32_op, f64_op};

const DIRECTIONS: [Rounding; 3] = [Rounding::Rz, Rounding::Rm, Rounding::Rp];

/// Operands: edge values crossed with each other, then random bit patterns of every
/// exponent (and random values near each other, for cancellation).
fn operands64(count: usize) -> Vec<[f64; 3]> {
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.5,
        3.0,
        0.1,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        f64::INFINITY,
        f64::NAN,
        1.0 + f64::EPSILON,
        (1u64 << 53) as f64,
    ];
    let mut out = Vec::new();
    for &a in &edges {
        for &b in &edges {
            out.push([a, b, edges[(out.len() * 7) % edges.len()]]);
        }
    }
    let mut rng = Rng(0xD1EC_7ED0);
    while out.len() < count {
        let r = [rng.next(), rng.next(), rng.next()];
        let x = r.map(f64::from_bits);
        out.push(x);
        // Near one another: cancellation in sums, quotients near 1.
        let near = x[0] * (1.0 + (r[1] >> 40) as f64 * f64::EPSILON);
        out.push([x[0], near, -x[0] * near]);
    }
    out
}

fn operands32(count: usize) -> Vec<[f32; 3]> {
    let mut rng = Rng(0xF32D_1EC7);
    let mut out: Vec<[f32; 3]> = operands64(256)
        .iter()
        .map(|x| x.map(|v| v as f32))
        .collect();
    while out.len() < count {
        let r = [rng.next(), rng.next(), rng.next()].map(|v| f32::from_bits(v as u32));
        out.push(r);
        let near = r[0] * (1.0 + (rng.next() >> 50) as f32 * f32::EPSILON);
        out.push([r[0], near, -r[0] * near]);
    }
    out
}

fn host64(op: Arith, [a, b, c]: [f64; 3]) -> f64 {
    match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Fma => a.mul_add(b, c),
        Arith::Div => a / b,
        Arith::Rcp => 1.0 / a,
        Arith::Sqrt => a.sqrt(),
    }
}

fn same(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan()
}

#[test]
fn to_nearest_the_reference_is_the_hosts_arithmetic() {
    for op in Arith::ALL {
        for x in operands64(40_000) {
            let got = f64_op(op, Rounding::Rn, x[0], x[1], x[2]);
            assert!(same(got, host64(op, x)), "{op:?} {x:?}: {got:e}");
        }
        for x in operands32(40_000) {
            let got = f32_op(op, Rounding::Rn, x[0], x[1], x[2]);
            let host = host64(op, x.map(|v| v as f64)) as f32; // exact in f64 but fma, div, sqrt
            let host = match op {
                Arith::Fma => x[0].mul_add(x[1], x[2]),
                Arith::Div => x[0] / x[1],
                Arith::Rcp => 1.0 / x[0],
                Arith::Sqrt => x[0].sqrt(),
                _ => host,
            };
            assert!(same(got as f64, host as f64), "{op:?} {x:?}: {got:e}");
        }
    }
}

/// The exact f32 result as `hi + lo` in f64 (only `lo`'s sign is used).
fn exact_f32(op: Arith, [a, b, c]: [f32; 3]) -> (f64, f64) {
    let [a, b, c] = [a, b, c].map(|v| v as f64);
    let two_sum = |x: f64, y: f64| {
        let s = x + y;
        let t = s - x;
        (s, (x - (s - t)) + (y - t))
    };
    let quotient = |a: f64, b: f64| {
        let q = a / b;
        let r = (-q).mul_add(b, a); // exact
        (q, r * b.signum())
    };
    match op {
        Arith::Add => two_sum(a, b),
        Arith::Sub => two_sum(a, -b),
        Arith::Mul => (a * b, 0.0),
        Arith::Fma => two_sum(a * b, c),
        Arith::Div => quotient(a, b),
        Arith::Rcp => quotient(1.0, a),
        Arith::Sqrt => {
            let s = a.sqrt();
            (s, (-s).mul_add(s, a))
        }
    }
}

/// `hi + lo` rounded to f32 in `rnd`: `hi`'s f32 neighbours, or `hi` stepped by `lo`'s sign.
fn round_f32(hi: f64, lo: f64, rnd: Rounding) -> f32 {
    let near = hi as f32;
    let (below, above) = if near as f64 == hi {
        if lo == 0.0 {
            return near;
        }
        if lo > 0.0 {
            (near, near.next_up())
        } else {
            (near.next_down(), near)
        }
    } else if (near as f64) < hi {
        (near, near.next_up())
    } else {
        (near.next_down(), near)
    };
    let toward_zero_is_below = hi > 0.0;
    match rnd {
        Rounding::Rm => below,
        Rounding::Rp => above,
        Rounding::Rz if toward_zero_is_below => below,
        _ => above,
    }
}

#[test]
fn f32_directed_results_are_the_exact_results_neighbour_in_that_direction() {
    let mut checked = 0;
    for op in Arith::ALL {
        for x in operands32(60_000) {
            let (hi, lo) = exact_f32(op, x);
            if !hi.is_finite() || hi == 0.0 {
                continue; // specials and zero signs: the unit tests and the rule below
            }
            for rnd in DIRECTIONS {
                let got = f32_op(op, rnd, x[0], x[1], x[2]);
                let want = round_f32(hi, lo, rnd);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{op:?} {rnd:?} {x:?}: {got:e}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1_000_000, "{checked}");
}

#[test]
fn f64_directed_results_step_from_the_nearest_by_the_errors_sign() {
    let mut checked = 0;
    for op in [Arith::Add, Arith::Sub, Arith::Mul, Arith::Div, Arith::Sqrt] {
        for x @ [a, b, _] in operands64(60_000) {
            let hi = host64(op, x);
            // The exact error of the nearest result, where it is representable.
            let lo = match op {
                Arith::Add | Arith::Sub => {
                    let b = if op == Arith::Sub { -b } else { b };
                    let t = hi - a;
                    (a - (hi - t)) + (b - t)
                }
                Arith::Mul => a.mul_add(b, -hi),
                Arith::Div => (-hi).mul_add(b, a) * b.signum(),
                _ => (-hi).mul_add(hi, a),
            };
            let safe = hi.is_finite() && hi.abs() >= 2f64.powi(-900) && lo.is_finite();
            // (A remainder is as small as the dividend's last place: keep it normal.)
            let inputs_safe = x
                .iter()
                .all(|v| *v == 0.0 || v.abs() >= 2f64.powi(-900) && v.abs() < 2f64.powi(1000));
            if !safe || !inputs_safe {
                continue;
            }
            for rnd in DIRECTIONS {
                let want = if lo == 0.0 {
                    hi
                } else {
                    match rnd {
                        Rounding::Rp if lo > 0.0 => hi.next_up(),
                        Rounding::Rm if lo < 0.0 => hi.next_down(),
                        Rounding::Rz if (lo > 0.0) != (hi > 0.0) => {
                            if hi > 0.0 {
                                hi.next_down()
                            } else {
                                hi.next_up()
                            }
                        }
                        _ => hi,
                    }
                };
                let got = f64_op(op, rnd, a, b, 0.0);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{op:?} {rnd:?} {x:?}: {got:e}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 400_000, "{checked}");
}

#[test]
fn each_directed_instruction_runs_the_reference_in_both_compiled_forms() {
    use common::{W, elementwise_with};
    use ptxjit::{CompileOptions, LaneGroups};
    let lines = [
        ("add", Arith::Add, 2),
        ("sub", Arith::Sub, 2),
        ("mul", Arith::Mul, 2),
        ("fma", Arith::Fma, 3),
        ("div", Arith::Div, 2),
        ("rcp", Arith::Rcp, 1),
        ("sqrt", Arith::Sqrt, 1),
    ];
    let x64 = operands64(3_000);
    let x32 = operands32(3_000);
    for (name, op, sources) in lines {
        for (rnd, suffix) in DIRECTIONS.into_iter().zip(["rz", "rm", "rp"]) {
            for ty in ["f32", "f64"] {
                let operands = ["{a}", "{b}", "{c}"][..sources].join(", ");
                let inst = format!("{name}.{suffix}.{ty} {{d}}, {operands}");
                let (w, cols): (W, Vec<Vec<u64>>) = if ty == "f32" {
                    let cols = (0..sources)
                        .map(|k| x32.iter().map(|x| x[k].to_bits() as u64).collect())
                        .collect();
                    (W::B32, cols)
                } else {
                    let cols = (0..sources)
                        .map(|k| x64.iter().map(|x| x[k].to_bits()).collect())
                        .collect();
                    (W::B64, cols)
                };
                let want: Vec<u64> = (0..cols[0].len())
                    .map(|i| {
                        let v = |k: usize| cols.get(k).map_or(0, |c| c[i]);
                        if ty == "f32" {
                            let [a, b, c] = [0, 1, 2].map(|k| f32::from_bits(v(k) as u32));
                            let r = f32_op(op, rnd, a, b, c);
                            // PTX's f32 results: every NaN is the canonical one.
                            (if r.is_nan() { 0x7FFF_FFFF } else { r.to_bits() }) as u64
                        } else {
                            let [a, b, c] = [0, 1, 2].map(|k| f64::from_bits(v(k)));
                            f64_op(op, rnd, a, b, c).to_bits()
                        }
                    })
                    .collect();
                let srcs: Vec<(W, &[u64])> = cols.iter().map(|c| (w, c.as_slice())).collect();
                for lane_groups in [LaneGroups::Always, LaneGroups::Off] {
                    let opts = CompileOptions {
                        lane_groups,
                        ..CompileOptions::default()
                    };
                    let got = elementwise_with(&opts, &inst, w, &srcs);
                    for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                        let nan = |v: u64| {
                            if ty == "f32" {
                                f32::from_bits(v as u32).is_nan()
                            } else {
                                f64::from_bits(v).is_nan()
                            }
                        };
                        assert!(
                            g == e || nan(*g) && nan(*e),
                            "{inst} #{i} ({lane_groups:?}): {g:#x} != {e:#x}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_interpreter_rounds_in_the_same_directions() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<2>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n\
        ld.param.u64 %rd1, [out];\n\
        div.rz.f32 %f1, 0f3F800000, 0f40400000;\nst.global.f32 [%rd1], %f1;\n\
        add.rm.f32 %f2, 0f3F800000, 0f33800000;\nst.global.f32 [%rd1+4], %f2;\n\
        fma.rp.f64 %fd1, 0d3FF0000000000001, 0d3FF0000000000001, 0d0000000000000000;\nst.global.f64 [%rd1+8], %fd1;\n\
        rcp.rz.f64 %fd2, 0d4008000000000000;\nst.global.f64 [%rd1+16], %fd2;\n\
        sub.rm.f64 %fd3, 0d3FF8000000000000, 0d3FF8000000000000;\nst.global.f64 [%rd1+24], %fd3;\nret;\n}\n";
    let (interp_out, jit_out) = common::interpreter_and_jit(ptx, 32);
    let words = interp_out.to_vec::<u64>();
    assert_eq!(words, jit_out.to_vec::<u64>());
    let third = f32_op(Arith::Div, Rounding::Rz, 1.0, 3.0, 0.0).to_bits() as u64;
    let sum = f32_op(Arith::Add, Rounding::Rm, 1.0, 2f32.powi(-24), 0.0).to_bits() as u64;
    assert_eq!(words[0], sum << 32 | third);
    assert_eq!(words[1], 0x3FF0_0000_0000_0003); // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104, up
    assert_eq!(words[2], 0x3FD5_5555_5555_5555); // 1/3 toward zero
    assert_eq!(words[3], 0x8000_0000_0000_0000); // x - x toward -inf is -0
}

/// A conversion's reference on source bits.
type Reference = Box<dyn Fn(u64) -> u64>;

#[test]
fn cvt_from_f64_and_integers_rounds_in_each_direction_in_both_forms_and_the_interpreter() {
    use common::{W, elementwise_with};
    use ptxjit::semantics::directed::{f64_to_f32, int_to_f32, int_to_f64};
    use ptxjit::{CompileOptions, LaneGroups};
    let mut rng = Rng(0xC0F7);
    let floats = operands64(4_000);
    let words: Vec<u64> = (0..4_000)
        .map(|i| match i % 4 {
            0 => rng.next(),
            1 => rng.next() >> (rng.next() % 64),
            2 => (rng.next() >> 40) | 1 << 60,
            _ => floats[i][0].to_bits(),
        })
        .collect();
    for (rnd, suffix) in DIRECTIONS.into_iter().zip(["rz", "rm", "rp"]) {
        let forms: [(&str, W, W, Reference); 5] = [
            (
                "f32.f64",
                W::B32,
                W::B64,
                Box::new(move |v| {
                    let r = f64_to_f32(f64::from_bits(v), rnd);
                    (if r.is_nan() { 0x7FFF_FFFF } else { r.to_bits() }) as u64
                }),
            ),
            (
                "f32.s64",
                W::B32,
                W::B64,
                Box::new(move |v| int_to_f32(v, true, rnd).to_bits() as u64),
            ),
            (
                "f32.u64",
                W::B32,
                W::B64,
                Box::new(move |v| int_to_f32(v, false, rnd).to_bits() as u64),
            ),
            (
                "f64.s32",
                W::B64,
                W::B32,
                Box::new(move |v| int_to_f64(v as u32 as i32 as i64 as u64, true, rnd).to_bits()),
            ),
            (
                "f64.u64",
                W::B64,
                W::B64,
                Box::new(move |v| int_to_f64(v, false, rnd).to_bits()),
            ),
        ];
        for (types, dst, src, reference) in forms {
            let inst = format!("cvt.{suffix}.{types} {{d}}, {{a}}");
            let column: Vec<u64> = words
                .iter()
                .map(|&v| {
                    if matches!(src, W::B32) {
                        v & 0xFFFF_FFFF
                    } else {
                        v
                    }
                })
                .collect();
            let want: Vec<u64> = column.iter().map(|&v| reference(v)).collect();
            for lane_groups in [LaneGroups::Always, LaneGroups::Off] {
                let opts = CompileOptions {
                    lane_groups,
                    ..CompileOptions::default()
                };
                let got = elementwise_with(&opts, &inst, dst, &[(src, &column)]);
                assert_eq!(got, want, "{inst} ({lane_groups:?})");
            }
        }
    }
    // The interpreter: one of each.
    use ptxjit::interp::Interpreter;
    use ptxjit::{Arg, DeviceBuffer, LaunchConfig};
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<2>;\n.reg .f32 %f<3>;\n.reg .f64 %fd<2>;\n\
        ld.param.u64 %rd1, [out];\n\
        cvt.rp.f32.f64 %f1, 0d3FF0000000000001;\nst.global.f32 [%rd1], %f1;\n\
        cvt.rm.f32.s64 %f2, -16777217;\nst.global.f32 [%rd1+4], %f2;\n\
        cvt.rz.f64.u64 %fd1, 0xFFFFFFFFFFFFFFFF;\nst.global.f64 [%rd1+8], %fd1;\nret;\n}\n";
    let out = DeviceBuffer::zeroed(16).unwrap();
    let config = LaunchConfig {
        grid: 1.into(),
        block: 1.into(),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative: false,
    };
    Interpreter::from_ptx("k.ptx", ptx)
        .unwrap()
        .launch("k", &config, &[Arg::buffer(&out)])
        .unwrap();
    let got = out.to_vec::<u64>();
    assert_eq!(got[0] as u32, (1.0 + f32::EPSILON).to_bits());
    assert_eq!((got[0] >> 32) as u32, (-16_777_218.0f32).to_bits());
    assert_eq!(got[1], 18_446_744_073_709_549_568f64.to_bits());
}
