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
