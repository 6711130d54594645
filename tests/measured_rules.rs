//! The rules an NVIDIA H200 showed where the ISA leaves the bits open (recorded with
//! `tools/gpu-truth`, kept in `tests/hardware/`; `tests/hardware.rs` replays the recordings).
//! One case per rule, with values worked out by hand, run in every compiled form: one thread
//! at a time, lane groups (vector code and the group helpers), and without native helpers.

mod common;

use common::{W, elementwise_with};
use ptxjit::{CompileOptions, LaneGroups};

/// `inst` on each row of `srcs` in every form; they must agree. Returns the results. The
/// rows are repeated to fill whole blocks of 128 threads, so that no lane group diverges and
/// the groups run their vector code and helpers.
fn run(inst: &str, dst: W, srcs: &[(W, &[u64])]) -> Vec<u64> {
    let rows = srcs[0].1.len();
    let filled: Vec<Vec<u64>> = srcs
        .iter()
        .map(|(_, v)| v.iter().copied().cycle().take(128).collect())
        .collect();
    let srcs: Vec<(W, &[u64])> = srcs
        .iter()
        .zip(&filled)
        .map(|((w, _), v)| (*w, v.as_slice()))
        .collect();
    let srcs = srcs.as_slice();
    let forms = [
        CompileOptions {
            lane_groups: LaneGroups::Off,
            ..CompileOptions::default()
        },
        CompileOptions {
            lane_groups: LaneGroups::AlwaysForBlockX(128),
            ..CompileOptions::default()
        },
        CompileOptions {
            lane_groups: LaneGroups::AlwaysForBlockX(128),
            native_helpers: None,
            ..CompileOptions::default()
        },
    ];
    let results: Vec<Vec<u64>> = forms
        .iter()
        .map(|opts| elementwise_with(opts, inst, dst, srcs))
        .collect();
    for r in &results[1..] {
        assert_eq!(r, &results[0], "{inst}: the forms disagree");
    }
    results[0][..rows].to_vec()
}

/// f32 bits of `m · 2^e` (exact).
fn f32_bits(m: u32, e: i32) -> u64 {
    ((m as f64 * 2f64.powi(e)) as f32).to_bits() as u64
}

const F32_MIN_NORMAL: u64 = 0x0080_0000;

#[test]
fn ftz_flushes_an_f16_result_that_rounds_up_to_the_smallest_normal() {
    // 2^-14 × (1 − 2^-11) = 2^-14 − 2^-25: a tie that rounds to the smallest normal, but it
    // has 11 significant bits, so with the exponent unbounded it stays below: tiny.
    let a = [0x0400, 0x8400];
    let b = [0x3BFF, 0x3BFF];
    assert_eq!(
        run(
            "mul.rn.ftz.f16 {d}, {a}, {b}",
            W::B16,
            &[(W::B16, &a), (W::B16, &b)]
        ),
        [0x0000, 0x8000]
    );
    assert_eq!(
        run(
            "mul.rn.f16 {d}, {a}, {b}",
            W::B16,
            &[(W::B16, &a), (W::B16, &b)]
        ),
        [0x0400, 0x8400]
    );
    let zero = [0, 0];
    assert_eq!(
        run(
            "fma.rn.ftz.f16 {d}, {a}, {b}, {c}",
            W::B16,
            &[(W::B16, &a), (W::B16, &b), (W::B16, &zero)]
        ),
        [0x0000, 0x8000]
    );
    let pairs = [0x0400_0400];
    let b2 = [0x3BFF_3C00];
    for inst in [
        "mul.rn.ftz.f16x2 {d}, {a}, {b}",
        "fma.rn.ftz.f16x2 {d}, {a}, {b}, {c}",
    ] {
        let srcs = [
            (W::B32, &pairs[..]),
            (W::B32, &b2[..]),
            (W::B32, &zero[..1]),
        ];
        assert_eq!(run(inst, W::B32, &srcs), [0x0000_0400], "{inst}");
    }
}

#[test]
fn ftz_keeps_an_f16_result_that_rounds_up_to_the_smallest_normal_with_the_exponent_unbounded() {
    // 2^-14 × −(1 + 2^-10) + 2^-14 = 2^-14 − 2^-28 − 2^-38: within half a unit (2^-26) of the
    // smallest normal at unbounded precision, so it rounds to it there too: not tiny.
    let (a, b, c) = ([0x0400], [0x8401], [0x0400]);
    assert_eq!(
        run(
            "fma.rn.ftz.f16 {d}, {a}, {b}, {c}",
            W::B16,
            &[(W::B16, &a), (W::B16, &b), (W::B16, &c)]
        ),
        [0x0400]
    );
}

#[test]
fn ftz_flushes_an_f32_product_tiny_after_rounding_in_every_direction() {
    // 4095 · 2^-75 × 4097 · 2^-75 = (2^24 − 1) · 2^-150: 24 significant bits just below the
    // smallest normal. To nearest and up it rounds to the smallest normal in range; with the
    // exponent unbounded it is exact, below it: tiny. Toward zero it is subnormal anyway.
    let a = [f32_bits(4095, -75), f32_bits(4095, -75) | 1 << 31];
    let b = [f32_bits(4097, -75); 2];
    for (inst, want) in [
        ("mul.rn.ftz.f32", [0, 0x8000_0000]),
        ("mul.rp.ftz.f32", [0, 0x8000_0000]),
        ("mul.rm.ftz.f32", [0, 0x8000_0000]),
        ("mul.rz.ftz.f32", [0, 0x8000_0000]),
        ("mul.rn.f32", [F32_MIN_NORMAL, F32_MIN_NORMAL | 1 << 31]),
        ("mul.rp.f32", [F32_MIN_NORMAL, 0x807F_FFFF]),
    ] {
        let got = run(
            &format!("{inst} {{d}}, {{a}}, {{b}}"),
            W::B32,
            &[(W::B32, &a), (W::B32, &b)],
        );
        assert_eq!(got, want, "{inst}");
    }
    let zero = [0, 0];
    let got = run(
        "fma.rn.ftz.f32 {d}, {a}, {b}, {c}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b), (W::B32, &zero)],
    );
    assert_eq!(got, [0, 0x8000_0000]);
}

#[test]
fn ftz_keeps_an_f32_product_that_rounds_up_to_the_smallest_normal_with_the_exponent_unbounded() {
    // 24573 · 2^-76 × 2731 · 2^-76 = (2^26 − 1) · 2^-152 = 2^-126 − 2^-152: within half a
    // unit (2^-151) of the smallest normal at unbounded precision.
    let (a, b) = ([f32_bits(24573, -76)], [f32_bits(2731, -76)]);
    let got = run(
        "mul.rn.ftz.f32 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b)],
    );
    assert_eq!(got, [F32_MIN_NORMAL]);
}

#[test]
fn ftz_on_division_flushes_only_subnormal_results() {
    // (2^24 − 1) · 2^-148 / 4 rounds to the smallest normal, though tiny after rounding: the
    // H200 keeps it (its division is a sequence of other instructions).
    let (a, b) = ([f32_bits(0xFF_FFFF, -148)], [4f32.to_bits() as u64]);
    let got = run(
        "div.rn.ftz.f32 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b)],
    );
    assert_eq!(got, [F32_MIN_NORMAL]);
}

#[test]
fn ftz_flushes_a_narrowing_from_f64_tiny_after_rounding() {
    let below = |ulps: i32| (2f64.powi(-126) - 2f64.powi(-150 - ulps)).to_bits();
    // 2^-126 − 2^-150 is an f32 value at unbounded precision: tiny. 2^-126 − 2^-152 rounds up
    // to the smallest normal there too: not tiny.
    let x = [below(0), below(2)];
    for (inst, want) in [
        ("cvt.rn.ftz.f32.f64", [0, F32_MIN_NORMAL]),
        ("cvt.rp.ftz.f32.f64", [0, F32_MIN_NORMAL]),
        ("cvt.rn.f32.f64", [F32_MIN_NORMAL, F32_MIN_NORMAL]),
    ] {
        let got = run(&format!("{inst} {{d}}, {{a}}"), W::B32, &[(W::B64, &x)]);
        assert_eq!(got, want, "{inst}");
    }
}

#[test]
fn oob_tests_a_and_b_for_the_oob_nan_of_either_sign_and_not_c() {
    let (one, oob) = (0x3C00u64, 0x7FF7u64);
    let a = [oob | 0x8000, one, one];
    let b = [one, oob, one];
    let c = [one, one, oob];
    let got = run(
        "fma.rn.oob.f16 {d}, {a}, {b}, {c}",
        W::B16,
        &[(W::B16, &a), (W::B16, &b), (W::B16, &c)],
    );
    assert_eq!(got, [0, 0, 0x7FFF]);
}

#[test]
fn cvt_from_f16_makes_a_nan_canonical_and_from_bf16_keeps_its_bits() {
    let nans = [0x7C01, 0xFE00, 0x7FF7];
    assert_eq!(
        run("cvt.f32.f16 {d}, {a}", W::B32, &[(W::B16, &nans)]),
        [0x7FFF_FFFF; 3]
    );
    let nans = [0x7F81, 0xFFC0, 0x7FF7];
    assert_eq!(
        run("cvt.f32.bf16 {d}, {a}", W::B32, &[(W::B16, &nans)]),
        [0x7F81_0000, 0xFFC0_0000, 0x7FF7_0000]
    );
}

/// 2^e as an f32 (`f32::powi` of an exponent past ±127 is 0 or infinity unoptimized: it
/// computes 2^|e| first).
fn pow2(e: i32) -> f32 {
    2f64.powi(e) as f32
}

/// f32 bits of `x`.
fn bits(x: f32) -> u64 {
    x.to_bits() as u64
}

#[test]
fn sin_and_cos_approx_reduce_their_argument_to_turns_rounded_toward_zero() {
    // 1e6 · f32(1/(2π)) rounded toward zero is 159154 + 59/64 turns: the GPU's sine of 1e6
    // is the sine of that, far from the true sine of 1e6 (−0.3500).
    let angle = std::f64::consts::TAU * (59.0 / 64.0 - 1.0);
    let x = [bits(1.0e6)];
    assert_eq!(
        run("sin.approx.f32 {d}, {a}", W::B32, &[(W::B32, &x)]),
        [bits(angle.sin() as f32)]
    );
    assert_eq!(
        run("cos.approx.ftz.f32 {d}, {a}", W::B32, &[(W::B32, &x)]),
        [bits(angle.cos() as f32)]
    );
}

#[test]
fn division_and_reciprocal_scale_huge_and_subnormal_divisors_into_the_units_range() {
    let huge = bits(pow2(127));
    let small = bits(pow2(-127));
    // (5 · RCP(3), rounded twice, is one unit above 5/3.)
    let five_thirds = 0x3FD5_5556;
    let a = [bits(pow2(-20)), bits(1.0), bits(5.0)];
    let b = [huge, small, bits(3.0)];
    let srcs = [(W::B32, &a[..]), (W::B32, &b[..])];
    // div.full: a huge divisor and the dividend by 1/4, a subnormal one by 2^24.
    let full = run("div.full.f32 {d}, {a}, {b}", W::B32, &srcs);
    assert_eq!(full, [bits(pow2(-147)), bits(pow2(127)), five_thirds]);
    // .ftz: the quotient 2^-147 flushed, the subnormal divisor too (1/0).
    let ftz = run("div.full.ftz.f32 {d}, {a}, {b}", W::B32, &srcs);
    assert_eq!(ftz, [0, bits(f32::INFINITY), five_thirds]);
    // div.approx does not scale a huge divisor: its reciprocal, subnormal, is flushed.
    let approx = run("div.approx.f32 {d}, {a}, {b}", W::B32, &srcs);
    assert_eq!(approx, [0, bits(pow2(127)), five_thirds]);
    let x = [huge, small];
    let rcp = run("rcp.approx.f32 {d}, {a}", W::B32, &[(W::B32, &x)]);
    assert_eq!(rcp, [bits(pow2(-127)), bits(pow2(127))]);
}

#[test]
fn ex2_approx_below_minus_126_squares_the_half_power_into_a_subnormal() {
    let x = [bits(-140.0), bits(-126.0)];
    let got = run("ex2.approx.f32 {d}, {a}", W::B32, &[(W::B32, &x)]);
    assert_eq!(got, [bits(pow2(-140)), bits(f32::MIN_POSITIVE)]);
    let got = run("ex2.approx.ftz.f32 {d}, {a}", W::B32, &[(W::B32, &x)]);
    assert_eq!(got, [0, bits(f32::MIN_POSITIVE)]);
}

#[test]
fn accurate_approximations_give_the_hosts_correctly_rounded_values_instead() {
    // `Approximations::Accurate` (GPU Ocelot's emulator's choice, `ptx_run`'s): the true sine
    // of 1e6, and 5/3 divided once.
    let opts = CompileOptions {
        approximations: ptxjit::Approximations::Accurate,
        ..CompileOptions::default()
    };
    let x = [bits(1.0e6)];
    let sin = elementwise_with(&opts, "sin.approx.f32 {d}, {a}", W::B32, &[(W::B32, &x)]);
    assert_eq!(sin, [bits(1.0e6f32.sin())]);
    let (a, b) = ([bits(5.0)], [bits(3.0)]);
    let div = elementwise_with(
        &opts,
        "div.full.f32 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b)],
    );
    assert_eq!(div, [bits(5.0 / 3.0)]);
}
