//! The JIT against the reference (`ptxjit::semantics::half`) for half-precision arithmetic
//! and conversions: every rule checked on special values and on random bit patterns.

mod common;

use common::{Rng, W, elementwise, special_halves};
use ptxjit::frontend::checked::Rounding;
use ptxjit::semantics::half::{self as reference, BF16, CANONICAL_NAN, F16, HalfFormat};

/// Pairs: every combination of special values, then random bit patterns.
fn pairs(fmt: HalfFormat, random: usize, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let specials = special_halves(fmt.mant_bits, fmt.exp_bits);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            a.push(x as u64);
            b.push(y as u64);
        }
    }
    let mut rng = Rng(seed);
    for _ in 0..random {
        let r = rng.next();
        a.push(r & 0xFFFF);
        b.push((r >> 16) & 0xFFFF);
    }
    (a, b)
}

fn check_binary(inst: &str, fmt: HalfFormat, reference: fn(HalfFormat, u16, u16) -> u16) {
    let (a, b) = pairs(fmt, 60_000, 0x9E37_79B9_7F4A_7C15);
    let got = elementwise(inst, W::B16, &[(W::B16, &a), (W::B16, &b)]);
    for i in 0..a.len() {
        let want = reference(fmt, a[i] as u16, b[i] as u16);
        assert_eq!(got[i] as u16, want, "{inst}: {:#06x}, {:#06x}", a[i], b[i]);
    }
}

#[test]
fn add_f16_rounds_once_to_nearest_even() {
    check_binary("add.rn.f16 {d}, {a}, {b}", F16, reference::add);
}

#[test]
fn sub_f16_rounds_once_to_nearest_even() {
    check_binary("sub.f16 {d}, {a}, {b}", F16, reference::sub);
}

#[test]
fn mul_f16_rounds_once_to_nearest_even() {
    check_binary("mul.f16 {d}, {a}, {b}", F16, reference::mul);
}

#[test]
fn add_sub_mul_bf16_round_once_to_nearest_even() {
    check_binary("add.bf16 {d}, {a}, {b}", BF16, reference::add);
    check_binary("sub.rn.bf16 {d}, {a}, {b}", BF16, reference::sub);
    check_binary("mul.bf16 {d}, {a}, {b}", BF16, reference::mul);
}

fn triples(fmt: HalfFormat) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let specials = special_halves(fmt.mant_bits, fmt.exp_bits);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            for &z in specials.iter().step_by(3) {
                a.push(x as u64);
                b.push(y as u64);
                c.push(z as u64);
            }
        }
    }
    let mut rng = Rng(0x1234_5678);
    for _ in 0..60_000 {
        let r = rng.next();
        a.push(r & 0xFFFF);
        b.push((r >> 16) & 0xFFFF);
        c.push((r >> 32) & 0xFFFF);
    }
    (a, b, c)
}

#[test]
fn fma_f16_rounds_once() {
    let (a, b, c) = triples(F16);
    let got = elementwise(
        "fma.rn.f16 {d}, {a}, {b}, {c}",
        W::B16,
        &[(W::B16, &a), (W::B16, &b), (W::B16, &c)],
    );
    for i in 0..a.len() {
        let want = reference::fma_f16(a[i] as u16, b[i] as u16, c[i] as u16);
        assert_eq!(
            got[i] as u16, want,
            "fma {:#06x} {:#06x} {:#06x}",
            a[i], b[i], c[i]
        );
    }
}

#[test]
fn fma_bf16_rounds_once_across_wide_exponent_gaps() {
    let (mut a, mut b, mut c) = triples(BF16);
    // The double-rounding trap: fma(7, 37, -2^-133) must be 258 (0x4381), not 260.
    a.push(0x40E0);
    b.push(0x4214);
    c.push(0x8001);
    let got = elementwise(
        "fma.rn.bf16 {d}, {a}, {b}, {c}",
        W::B16,
        &[(W::B16, &a), (W::B16, &b), (W::B16, &c)],
    );
    assert_eq!(*got.last().unwrap(), 0x4381);
    for i in 0..a.len() {
        let want = reference::fma_bf16(a[i] as u16, b[i] as u16, c[i] as u16);
        assert_eq!(
            got[i] as u16, want,
            "fma {:#06x} {:#06x} {:#06x}",
            a[i], b[i], c[i]
        );
    }
}

#[test]
fn x2_lanes_are_independent_and_low_lane_is_bits_0_to_15() {
    let (a, b) = pairs(F16, 20_000, 77);
    let pack = |v: &[u64]| -> Vec<u64> {
        v.chunks(2)
            .map(|p| p[0] | p.get(1).copied().unwrap_or(0) << 16)
            .collect()
    };
    let (pa, pb) = (pack(&a), pack(&b));
    let got = elementwise(
        "mul.rn.f16x2 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &pa), (W::B32, &pb)],
    );
    for (i, g) in got.iter().enumerate() {
        for lane in 0..2 {
            let j = 2 * i + lane;
            if j >= a.len() {
                continue;
            }
            let want = reference::mul(F16, a[j] as u16, b[j] as u16);
            assert_eq!(
                (g >> (16 * lane)) as u16,
                want,
                "lane {lane} of {:#06x} * {:#06x}",
                a[j],
                b[j]
            );
        }
    }
    let got = elementwise(
        "fma.rn.bf16x2 {d}, {a}, {b}, {a}",
        W::B32,
        &[(W::B32, &pa), (W::B32, &pb)],
    );
    for (i, g) in got.iter().enumerate() {
        for lane in 0..2 {
            let (x, y) = ((pa[i] >> (16 * lane)) as u16, (pb[i] >> (16 * lane)) as u16);
            assert_eq!((g >> (16 * lane)) as u16, reference::fma_bf16(x, y, x));
        }
    }
}

#[test]
fn nan_results_are_the_canonical_nan() {
    let a = [0x7C00u64, 0x7E01, 0xFD00, 0x0000];
    let b = [0xFC00u64, 0x3C00, 0x3C00, 0x7C00];
    let got = elementwise(
        "add.f16 {d}, {a}, {b}",
        W::B16,
        &[(W::B16, &a), (W::B16, &b)],
    );
    assert_eq!(
        got,
        vec![CANONICAL_NAN as u64; 3]
            .into_iter()
            .chain([0x7C00])
            .collect::<Vec<_>>()
    );
    let got = elementwise(
        "mul.f16 {d}, {a}, {b}",
        W::B16,
        &[(W::B16, &[0x0000]), (W::B16, &[0x7C00])],
    );
    assert_eq!(got, vec![CANONICAL_NAN as u64]);
}

fn random_f32s(n: usize) -> Vec<u64> {
    let mut rng = Rng(0xC0FFEE);
    let mut v: Vec<u64> = [
        0u32,
        0x8000_0000,
        1,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0001,
        0x477F_F000,
        0x477F_EFFF,
        0x3380_0000,
        0x3300_0000,
        0x3300_0001,
    ]
    .iter()
    .map(|&x| x as u64)
    .collect();
    // Random f32s, biased towards the exponents where f16 results live.
    for i in 0..n {
        let r = rng.next() as u32;
        let x = if i % 2 == 0 {
            r
        } else {
            (r & 0x807F_FFFF) | (((r >> 23) % 48 + 97) << 23)
        };
        v.push(x as u64);
    }
    v
}

#[test]
fn cvt_f32_to_f16_and_bf16_in_every_rounding_mode() {
    let xs = random_f32s(100_000);
    for (fmt, ty) in [(F16, "f16"), (BF16, "bf16")] {
        for (mode, m) in [
            (Rounding::Rn, "rn"),
            (Rounding::Rz, "rz"),
            (Rounding::Rm, "rm"),
            (Rounding::Rp, "rp"),
        ] {
            let got = elementwise(
                &format!("cvt.{m}.{ty}.f32 {{d}}, {{a}}"),
                W::B16,
                &[(W::B32, &xs)],
            );
            for (x, g) in xs.iter().zip(&got) {
                let want = fmt.round(f32::from_bits(*x as u32) as f64, mode);
                assert_eq!(*g as u16, want, "cvt.{m}.{ty}.f32 of {:#010x}", x);
            }
        }
    }
}

#[test]
fn cvt_f16_to_f32_is_exact_for_every_f16() {
    let all: Vec<u64> = (0..=0xFFFFu64).collect();
    let got = elementwise("cvt.f32.f16 {d}, {a}", W::B32, &[(W::B16, &all)]);
    for (h, g) in all.iter().zip(&got) {
        let want = half::f16::from_bits(*h as u16).to_f32();
        let g = f32::from_bits(*g as u32);
        if want.is_nan() {
            // An f16 NaN gives the canonical f32 NaN (as an H200 converts: measured).
            assert_eq!(g.to_bits(), 0x7FFF_FFFF, "{h:#06x}");
        } else {
            assert_eq!(g.to_bits(), want.to_bits(), "{h:#06x}");
        }
    }
    let got = elementwise("cvt.f32.bf16 {d}, {a}", W::B32, &[(W::B16, &all)]);
    for (h, g) in all.iter().zip(&got) {
        // A bf16 is the top half of an f32: every bit kept, a NaN's too (signalling ones
        // stay signalling, as on an H200).
        assert_eq!(*g as u32, (*h as u32) << 16, "{h:#06x}");
    }
}

#[test]
fn cvt_f16x2_from_two_f32_puts_the_first_source_in_the_high_half() {
    let a = [1.0f32.to_bits() as u64];
    let b = [2.0f32.to_bits() as u64];
    let got = elementwise(
        "cvt.rn.f16x2.f32 {d}, {a}, {b}",
        W::B32,
        &[(W::B32, &a), (W::B32, &b)],
    );
    assert_eq!(got, vec![0x3C00_4000]);
}

#[test]
fn cvt_f64_to_f16_rounds_once() {
    // 1 + 2^-11 + 2^-40: above the tie, so it rounds up; via f32 it would round to the tie
    // and then to even (down).
    let x = 1.0f64 + 2f64.powi(-11) + 2f64.powi(-40);
    let got = elementwise(
        "cvt.rn.f16.f64 {d}, {a}",
        W::B16,
        &[(W::B64, &[x.to_bits()])],
    );
    assert_eq!(got, vec![0x3C01]);
}

#[test]
fn cvt_between_f16_and_integers_saturates_and_maps_nan_to_zero() {
    let h = [0x3E00u64, 0xBE00, 0x7C00, 0x7E00, 0x5640, 0xFBFF];
    let got = elementwise("cvt.rni.s32.f16 {d}, {a}", W::B32, &[(W::B16, &h)]);
    // 1.5 → 2, -1.5 → -2, inf → MAX, NaN → 0, 100 → 100, -65504 → -65504
    assert_eq!(
        got,
        vec![
            2,
            (-2i32) as u32 as u64,
            i32::MAX as u64,
            0,
            100,
            (-65504i32) as u32 as u64
        ]
    );
    let got = elementwise("cvt.rzi.u8.f16 {d}, {a}", W::B8, &[(W::B16, &h)]);
    assert_eq!(got, vec![1, 0, 255, 0, 100, 0]);
    let ints = [0u64, 1, 65519, 65520, (-70000i32) as u32 as u64];
    let got = elementwise("cvt.rn.f16.s32 {d}, {a}", W::B16, &[(W::B32, &ints)]);
    assert_eq!(got, vec![0, 0x3C00, 0x7BFF, 0x7C00, 0xFC00]);
}

#[test]
fn cvt_from_integers_of_every_width_rounds_once_in_every_mode() {
    use rustc_apfloat::ieee::{BFloat, Half};
    use rustc_apfloat::{Float, Round};
    let mut rng = Rng(0xFEED);
    let mut xs: Vec<u64> = vec![
        0,
        1,
        2047,
        2049,
        65519,
        65520,
        u64::MAX,
        1 << 63,
        (1 << 53) + 1,
        (1 << 60) + (1 << 49) + 1,
    ];
    for i in 0..20_000 {
        let r = rng.next();
        xs.push(r >> (i % 64));
    }
    let modes = [
        ("rn", Round::NearestTiesToEven),
        ("rz", Round::TowardZero),
        ("rm", Round::TowardNegative),
        ("rp", Round::TowardPositive),
    ];
    for (m, round) in modes {
        for (src, w) in [
            ("u64", W::B64),
            ("s64", W::B64),
            ("s32", W::B32),
            ("u16", W::B16),
        ] {
            let got16 = elementwise(
                &format!("cvt.{m}.f16.{src} {{d}}, {{a}}"),
                W::B16,
                &[(w, &xs)],
            );
            let gotbf = elementwise(
                &format!("cvt.{m}.bf16.{src} {{d}}, {{a}}"),
                W::B16,
                &[(w, &xs)],
            );
            for (i, &x) in xs.iter().enumerate() {
                let bits = w.bytes() * 8;
                let x = if bits == 64 { x } else { x & ((1 << bits) - 1) };
                let v: i128 = if src.starts_with('s') {
                    ((x << (64 - bits)) as i64 >> (64 - bits)) as i128
                } else {
                    x as i128
                };
                let want16 = Half::from_i128_r(v, round).value.to_bits() as u16;
                let wantbf = BFloat::from_i128_r(v, round).value.to_bits() as u16;
                assert_eq!(got16[i] as u16, want16, "cvt.{m}.f16.{src} {v}");
                assert_eq!(gotbf[i] as u16, wantbf, "cvt.{m}.bf16.{src} {v}");
            }
        }
    }
}

#[test]
fn cvt_half_to_integral_half() {
    // 2.5 → rni 2, rzi 2, rmi 2, rpi 3; -2.5 → -2, -2, -3, -2
    let h = [0x4100u64, 0xC100, 0x7E00];
    for (m, want) in [
        ("rni", [0x4000u64, 0xC000, 0x7FFF]),
        ("rzi", [0x4000, 0xC000, 0x7FFF]),
        ("rmi", [0x4000, 0xC200, 0x7FFF]),
        ("rpi", [0x4200, 0xC000, 0x7FFF]),
    ] {
        let got = elementwise(
            &format!("cvt.{m}.f16.f16 {{d}}, {{a}}"),
            W::B16,
            &[(W::B16, &h)],
        );
        assert_eq!(got, want.to_vec(), "cvt.{m}.f16.f16");
    }
}
