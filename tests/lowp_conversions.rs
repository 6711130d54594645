//! Group D, the low-precision conversions: the reference (`ptxjit::semantics::minifloat`)
//! against NVIDIA's host implementations (digests in `tests/oracles/nvidia_lowp.digests`, made
//! by `tests/oracles/nvidia_lowp.cpp` from CUDA 13's headers), then every `cvt` form in both
//! compiled forms against the reference, over every input where the input is 16 bits or less.

mod common;

use std::collections::HashMap;

use common::{W, elementwise_with};
use ptxjit::frontend::checked::Rounding;
use ptxjit::semantics::half::{BF16, F16, HalfFormat};
use ptxjit::semantics::minifloat::{Mini, tf32, ue8m0};
use ptxjit::{CompileOptions, LaneGroups};

const DIGESTS: &str = include_str!("oracles/nvidia_lowp.digests");

fn nvidia(name: &str) -> u64 {
    let table: HashMap<&str, &str> = DIGESTS.lines().filter_map(|l| l.split_once(' ')).collect();
    let hex = table
        .get(name)
        .unwrap_or_else(|| panic!("no digest {name}"));
    u64::from_str_radix(hex, 16).unwrap()
}

/// FNV-1a over `width`-byte little-endian outputs, as the oracle program.
fn digest(outputs: impl Iterator<Item = u64>, width: usize) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in outputs {
        for b in &v.to_le_bytes()[..width] {
            h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// The oracle's f32 sample: every upper half with six lower halves around the midpoints.
fn f32_sample() -> Vec<u32> {
    (0..0x10000u32)
        .flat_map(|hi| [0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF].map(|lo| hi << 16 | lo))
        .collect()
}

fn half_f64(fmt: HalfFormat, h: u32) -> f64 {
    fmt.to_f64(h as u16)
}

fn mode_name(mode: Rounding) -> &'static str {
    match mode {
        Rounding::Rz => "rz",
        Rounding::Rp => "rp",
        _ => "rn",
    }
}

/// Modes each narrow format rounds with (fp8: `.rn` only).
fn modes(m: Mini) -> &'static [Rounding] {
    match m {
        Mini::E4m3 | Mini::E5m2 => &[Rounding::Rn],
        _ => &[Rounding::Rn, Rounding::Rz],
    }
}

#[test]
fn the_reference_rounds_as_nvidias_host_code_from_every_half_and_sampled_f32() {
    for m in Mini::ALL {
        for &mode in modes(m) {
            for (src, fmt) in [("f16", F16), ("bf16", BF16)] {
                let got = digest(
                    (0..0x10000).map(|h| m.round_half(fmt, h as u16, mode, false) as u64),
                    1,
                );
                let name = format!("{}.from_{src}.{}", m.name(), mode_name(mode));
                assert_eq!(got, nvidia(&name), "{name}");
            }
            let got = digest(
                f32_sample()
                    .into_iter()
                    .map(|f| m.round(f32::from_bits(f) as f64, mode, false) as u64),
                1,
            );
            let name = format!("{}.from_f32.{}", m.name(), mode_name(mode));
            assert_eq!(got, nvidia(&name), "{name}");
        }
    }
}

#[test]
fn the_reference_widens_every_narrow_value_as_nvidias_host_code() {
    for m in Mini::ALL {
        for (dst, fmt) in [("f16", F16), ("bf16", BF16)] {
            let got = digest(
                (0..1u32 << m.width()).map(|b| widen(m, fmt, b as u8, false) as u64),
                2,
            );
            let name = format!("{}.to_{dst}", m.name());
            assert_eq!(got, nvidia(&name), "{name}");
        }
    }
    let got = digest(
        (0..=255u8).map(|b| BF16.round(ue8m0::to_f64(b), Rounding::Rn) as u64),
        2,
    );
    assert_eq!(got, nvidia("ue8m0.to_bf16"));
}

#[test]
fn the_reference_scales_to_ue8m0_as_nvidias_host_code() {
    for mode in [Rounding::Rz, Rounding::Rp] {
        for satfinite in [false, true] {
            let sat = if satfinite { ".satfinite" } else { "" };
            let got = digest(
                (0..0x10000).map(|h| ue8m0::round(half_f64(BF16, h), mode, satfinite) as u64),
                1,
            );
            let name = format!("ue8m0.from_bf16.{}{sat}", mode_name(mode));
            assert_eq!(got, nvidia(&name), "{name}");
            let got = digest(
                f32_sample()
                    .into_iter()
                    .map(|f| ue8m0::round(f32::from_bits(f) as f64, mode, satfinite) as u64),
                1,
            );
            let name = format!("ue8m0.from_f32.{}{sat}", mode_name(mode));
            assert_eq!(got, nvidia(&name), "{name}");
        }
    }
}

/// A narrow value in f16 or bf16 (exact; NaN is the canonical NaN; `.relu` clamps).
fn widen(m: Mini, fmt: HalfFormat, bits: u8, relu: bool) -> u16 {
    let x = m.to_f64(bits);
    let h = fmt.round(x, Rounding::Rn);
    if relu { fmt.relu(h) } else { h }
}

// ---- the lowering, both compiled forms, against the reference ---------------------------

fn both_forms(inst: &str, dst: W, srcs: &[(W, &[u64])], expect: impl Fn(usize) -> u64) {
    for lanes in [LaneGroups::Always, LaneGroups::Off] {
        let opts = CompileOptions {
            lane_groups: lanes,
            ..CompileOptions::default()
        };
        let got = elementwise_with(&opts, inst, dst, srcs);
        for (i, g) in got.iter().enumerate() {
            let inputs: Vec<u64> = srcs.iter().map(|s| s.1[i]).collect();
            assert_eq!(*g, expect(i), "{inst} on {inputs:x?} ({lanes:?})");
        }
    }
}

fn relu_word(relu: bool) -> &'static str {
    if relu { ".relu" } else { "" }
}

/// Every 16-bit value in the upper half, a scrambled one in the lower.
fn half_pairs() -> Vec<u64> {
    (0..0x10000u64)
        .map(|h| h << 16 | (h.wrapping_mul(40503) & 0xFFFF))
        .collect()
}

#[test]
fn cvt_to_fp8_fp6_fp4_from_every_half_pair() {
    let words = half_pairs();
    for m in Mini::ALL {
        for mode in [Rounding::Rn, Rounding::Rz] {
            for relu in [false, true] {
                for (src, fmt) in [("f16x2", F16), ("bf16x2", BF16)] {
                    let inst = format!(
                        "cvt.{}.satfinite{}.{}x2.{src} {{d}}, {{a}}",
                        mode_name(mode),
                        relu_word(relu),
                        m.name()
                    );
                    let slot = m.slot_bits();
                    both_forms(&inst, W::B16, &[(W::B32, &words)], |i| {
                        let r = |h: u64| m.round_half(fmt, h as u16, mode, relu) as u64;
                        r(words[i] >> 16) << slot | r(words[i] & 0xFFFF)
                    });
                }
            }
        }
    }
}

#[test]
fn cvt_to_fp8_fp6_fp4_from_f32_pairs() {
    let a: Vec<u64> = f32_sample().iter().step_by(3).map(|&f| f as u64).collect();
    let b: Vec<u64> = a.iter().rev().copied().collect();
    for m in Mini::ALL {
        for mode in [Rounding::Rn, Rounding::Rz] {
            for relu in [false, true] {
                let inst = format!(
                    "cvt.{}.satfinite{}.{}x2.f32 {{d}}, {{a}}, {{b}}",
                    mode_name(mode),
                    relu_word(relu),
                    m.name()
                );
                let r = |f: u64| m.round(f32::from_bits(f as u32) as f64, mode, relu) as u64;
                both_forms(&inst, W::B16, &[(W::B32, &a), (W::B32, &b)], |i| {
                    r(a[i]) << m.slot_bits() | r(b[i])
                });
            }
        }
    }
}

#[test]
fn cvt_from_fp8_fp6_fp4_is_exact_for_every_pair() {
    for m in Mini::ALL {
        let slot = m.slot_bits();
        let words: Vec<u64> = (0..1u64 << (2 * slot)).collect();
        for relu in [false, true] {
            for (dst, fmt) in [("f16x2", F16), ("bf16x2", BF16)] {
                let inst = format!(
                    "cvt.rn{}.{dst}.{}x2 {{d}}, {{a}}",
                    relu_word(relu),
                    m.name()
                );
                let mask = (1u64 << slot) - 1;
                let src = if slot == 4 { W::B8 } else { W::B16 };
                both_forms(&inst, W::B32, &[(src, &words)], |i| {
                    // Bits of a slot beyond the format's width are ignored.
                    let w = |s: u64| {
                        let bits = (s & mask) as u8 & ((1u16 << m.width()) - 1) as u8;
                        widen(m, fmt, bits, relu) as u64
                    };
                    w(words[i] >> slot) << 16 | w(words[i])
                });
            }
        }
    }
}

#[test]
fn cvt_to_ue8m0_from_every_bf16_pair_and_sampled_f32() {
    let words = half_pairs();
    let a: Vec<u64> = f32_sample().iter().step_by(3).map(|&f| f as u64).collect();
    let b: Vec<u64> = a.iter().rev().copied().collect();
    for mode in [Rounding::Rz, Rounding::Rp] {
        for satfinite in [false, true] {
            let sat = if satfinite { ".satfinite" } else { "" };
            let r = |x: f64| ue8m0::round(x, mode, satfinite) as u64;
            let inst = format!("cvt.{}{sat}.ue8m0x2.bf16x2 {{d}}, {{a}}", mode_name(mode));
            both_forms(&inst, W::B16, &[(W::B32, &words)], |i| {
                r(half_f64(BF16, (words[i] >> 16) as u32)) << 8
                    | r(half_f64(BF16, (words[i] & 0xFFFF) as u32))
            });
            let inst = format!(
                "cvt.{}{sat}.ue8m0x2.f32 {{d}}, {{a}}, {{b}}",
                mode_name(mode)
            );
            let f = |w: u64| f32::from_bits(w as u32) as f64;
            both_forms(&inst, W::B16, &[(W::B32, &a), (W::B32, &b)], |i| {
                r(f(a[i])) << 8 | r(f(b[i]))
            });
        }
    }
}

#[test]
fn cvt_from_ue8m0_gives_the_power_of_two_in_bf16() {
    let words: Vec<u64> = (0..0x10000).collect();
    let w = |c: u64| BF16.round(ue8m0::to_f64(c as u8), Rounding::Rn) as u64;
    both_forms(
        "cvt.rn.bf16x2.ue8m0x2 {d}, {a}",
        W::B32,
        &[(W::B16, &words)],
        |i| w(words[i] >> 8) << 16 | w(words[i] & 0xFF),
    );
}

#[test]
fn cvt_to_tf32_rounds_away_13_bits() {
    let a: Vec<u64> = f32_sample().iter().map(|&f| f as u64).collect();
    let rows = [
        ("rna", Rounding::Rna, false),
        ("rna.satfinite", Rounding::Rna, false),
        ("rn", Rounding::Rn, false),
        ("rn.satfinite", Rounding::Rn, false),
        ("rn.relu", Rounding::Rn, true),
        ("rz.satfinite.relu", Rounding::Rz, true),
        ("rz", Rounding::Rz, false),
    ];
    for (mods, mode, relu) in rows {
        let satfinite = mods.contains("satfinite");
        let inst = format!("cvt.{mods}.tf32.f32 {{d}}, {{a}}");
        both_forms(&inst, W::B32, &[(W::B32, &a)], |i| {
            tf32::round(a[i] as u32, mode, satfinite, relu) as u64
        });
    }
}

// ---- cvt.rs: stochastic rounding with the random-bits operand ----------------------------

/// f32 words whose f16 results are normal or subnormal, overflow, or special, each with its
/// discarded bits at the edges of the random field and scattered, and random words paired
/// with each: zero, the exact carry boundary for its discarded bits, one below, and a scramble.
fn stochastic_columns(width: u32) -> [Vec<u64>; 3] {
    let mut rng = common::Rng(0x5705);
    let mask = (1u64 << width) - 1;
    let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..6000u64 {
        let x = match i % 4 {
            0 => rng.next() & 0x7FFF_FFFF | (i & 8) << 28,
            1 => (0x3300_0000 + (rng.next() & 0x0BFF_FFFF)) | (i & 8) << 28, // 2^-25 .. 2^1
            2 => 0x4770_0000 + (rng.next() & 0x001F_FFFF), // near f16's largest finite
            _ => [0x7F80_0000, 0xFF80_0000, 0x7FC0_0001, 0, 0x8000_0000, 1][(i / 4 % 6) as usize],
        };
        let discarded = x & mask;
        let random = match i / 4 % 4 {
            0 => 0,
            1 => (mask + 1 - discarded) & mask,
            2 => (mask - discarded) & mask,
            _ => rng.next() & mask,
        };
        a.push(x);
        b.push(x ^ 0x8000_0000);
        r.push(random << 16 | random);
    }
    [a, b, r]
}

/// The magnitude rounded toward zero, plus one unit in the last place if `up`: the rule
/// of `.rs` on the truncated result (a carry out of the significand moves the exponent; out
/// of the largest finite value, to infinity).
fn truncated_plus(fmt: HalfFormat, x: f32, up: bool) -> u16 {
    let rz = fmt.round(x as f64, Rounding::Rz);
    if fmt.is_nan(rz) || rz & 0x7FFF == fmt.inf_bits() {
        return rz;
    }
    rz + up as u16
}

#[test]
fn cvt_rs_rounds_away_from_zero_exactly_when_the_random_bits_carry_out_of_the_discarded_bits() {
    for (dst, fmt, width) in [("f16x2", F16, 13), ("bf16x2", BF16, 16)] {
        let [a, b, r] = stochastic_columns(width);
        let inst = format!("cvt.rs.{dst}.f32 {{d}}, {{a}}, {{b}}, {{c}}");
        both_forms(
            &inst,
            W::B32,
            &[(W::B32, &a), (W::B32, &b), (W::B32, &r)],
            |i| {
                let half = |x: u64, random: u64| -> u64 {
                    let x = f32::from_bits(x as u32);
                    if x.is_nan() {
                        return 0x7FFF;
                    }
                    // The f32 bits below the result's quantum (all of them for normal
                    // results: f32 keeps 13 or 16 more bits than the half format).
                    let quantum = fmt.to_f64(1).max(
                        (x.abs() as f64).log2().floor().exp2() * 2f64.powi(-(fmt.mant_bits as i32)),
                    );
                    let scaled = x.abs() as f64 / quantum;
                    let top = ((scaled - scaled.floor()) * 2f64.powi(width as i32)).floor() as u64;
                    let up = top + (random & ((1 << width) - 1)) >= 1 << width;
                    truncated_plus(fmt, x, up) as u64
                };
                half(a[i], r[i] >> 16) << 16 | half(b[i], r[i] & 0xFFFF)
            },
        );
    }
}

/// `inst` over single words `a`, `b`, `rbits`, in both compiled forms.
fn stochastic(inst: &str, a: u32, b: u32, rbits: u32, want: u32) {
    let cols = [a, b, rbits].map(|w| vec![w as u64]);
    let srcs: Vec<(W, &[u64])> = cols.iter().map(|c| (W::B32, c.as_slice())).collect();
    both_forms(inst, W::B32, &srcs, |_| want as u64);
}

#[test]
fn cvt_rs_f16_takes_13_random_bits_from_each_half_and_ignores_the_top_three() {
    // 1 + 2^-11 + 2^-23: f32 discards 0x1001 below f16's quantum 2^-10 at 1; a random
    // value carries from 0xFFF up.
    let x = 0x3F80_1001;
    let inst = "cvt.rs.f16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, x, x, 0x0FFF_0FFE, 0x3C01_3C00);
    stochastic(inst, x, x, 0xEFFE_F000, 0x3C00_3C01);
    stochastic(inst, x, x, 0xE000_E000, 0x3C00_3C00);
}

#[test]
fn cvt_rs_bf16_takes_all_16_random_bits_of_each_half() {
    // 1 + 2^-8 + 2^-23: f32 discards 0x8001 below bf16's quantum 2^-7 at 1.
    let x = 0x3F80_8001;
    let inst = "cvt.rs.bf16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, x, x, 0x7FFF_7FFE, 0x3F81_3F80);
    stochastic(inst, x, x, 0x7FFE_FFFF, 0x3F80_3F81);
}

#[test]
fn cvt_rs_subnormal_results_add_the_random_bits_to_the_top_of_the_discarded_bits() {
    // 1.5 * 2^-24 is half way between f16's two smallest subnormals.
    let x = 0x33C0_0000;
    let inst = "cvt.rs.f16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, x, x | 0x8000_0000, 0x0FFF_1000, 0x0001_8002);
}

#[test]
fn cvt_rs_overflows_to_infinity_only_when_it_carries_and_satfinite_clamps() {
    // 65520 is half way from f16's largest finite value 65504 to 2^16.
    let x = 0x477F_F000;
    let inst = "cvt.rs.f16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, x, x | 0x8000_0000, 0x0000_1000, 0x7BFF_FC00);
    let inst = "cvt.rs.satfinite.f16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, x, x | 0x8000_0000, 0x0000_1000, 0x7BFF_FBFF);
    stochastic(inst, 0xFF80_0000, 0x7F80_0000, 0, 0xFBFF_7BFF);
}

#[test]
fn cvt_rs_gives_the_canonical_nan_and_relu_zeroes_negatives() {
    let inst = "cvt.rs.f16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, 0x7FC0_0001, 0xFF80_0001, 0x1FFF_1FFF, 0x7FFF_7FFF);
    let inst = "cvt.rs.relu.bf16x2.f32 {d}, {a}, {b}, {c}";
    stochastic(inst, 0xBFC0_0000, 0x3FC0_0000, 0xFFFF_FFFF, 0x0000_3FC0);
}

#[test]
fn cvt_rs_is_unbiased_over_every_random_value_for_normal_results() {
    // Σ over all 2^13 (f16) or 2^16 (bf16) random values of the rounded value is exactly
    // 2^width times the input: each direction is taken in proportion to its distance.
    let mut rng = common::Rng(0xB1A5);
    for (fmt, width) in [(F16, 13), (BF16, 16)] {
        for _ in 0..24 {
            // 2^-14 to 4: normal in both formats.
            let x = f32::from_bits(0x3880_0000 + (rng.next() as u32 & 0x07FF_FFFF));
            let sum: f64 = (0..1u32 << width)
                .map(|r| fmt.to_f64(fmt.round_stochastic(x, r)))
                .sum();
            assert_eq!(sum, x as f64 * (1u64 << width) as f64, "{x:e}");
        }
    }
}

#[test]
fn the_interpreter_rounds_cvt_rs_as_the_jit() {
    // Rows of the tests above: f16 with random carries in one half, bf16 with .relu.
    let ptx = ".version 8.6\n.target sm_100a\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<2>;\n.reg .b32 %r<4>;\n.reg .f32 %f<4>;\n\
        ld.param.u64 %rd1, [out];\nmov.b32 %f1, 0x3F801001;\nmov.b32 %f2, 0xBFC00000;\n\
        cvt.rs.f16x2.f32 %r1, %f1, %f1, 0x0FFF0FFE;\nst.global.b32 [%rd1], %r1;\n\
        cvt.rs.relu.bf16x2.f32 %r2, %f2, %f1, 0xFFFFFFFF;\nst.global.b32 [%rd1+4], %r2;\nret;\n}\n";
    let (interp_out, jit_out) = common::interpreter_and_jit(ptx, 8);
    assert_eq!(interp_out.to_vec::<u32>(), [0x3C01_3C00, 0x0000_3F81]);
    assert_eq!(jit_out.to_vec::<u32>(), interp_out.to_vec::<u32>());
}
