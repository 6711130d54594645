//! The reference (`ptxjit::semantics::half`) against an independent oracle: rustc_apfloat
//! (LLVM's APFloat in Rust), whose Half and BFloat add, sub, mul, fma and conversions are
//! correctly rounded in every mode.

mod common;

use common::{Rng, special_halves};
use ptxjit::frontend::checked::Rounding;
use ptxjit::semantics::half::{self as reference, BF16, CANONICAL_NAN, F16, HalfFormat};
use rustc_apfloat::ieee::{BFloat, Double, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

fn round_of(mode: Rounding) -> Round {
    match mode {
        Rounding::Rn => Round::NearestTiesToEven,
        Rounding::Rz => Round::TowardZero,
        Rounding::Rm => Round::TowardNegative,
        Rounding::Rp => Round::TowardPositive,
        Rounding::Rna => Round::NearestTiesToAway,
    }
}

/// The oracle's bits, with any NaN mapped to ptxjit's canonical NaN.
fn canon<F: Float>(fmt: HalfFormat, v: F) -> u16 {
    let bits = v.to_bits() as u16;
    if fmt.is_nan(bits) {
        CANONICAL_NAN
    } else {
        bits
    }
}

fn operands(fmt: HalfFormat, n: usize) -> Vec<(u16, u16, u16)> {
    let s = special_halves(fmt.mant_bits, fmt.exp_bits);
    let mut v = Vec::new();
    for &a in &s {
        for &b in &s {
            for &c in s.iter().step_by(5) {
                v.push((a, b, c));
            }
        }
    }
    let mut rng = Rng(0xABCD_EF01_2345_6789);
    for _ in 0..n {
        let r = rng.next();
        v.push((r as u16, (r >> 16) as u16, (r >> 32) as u16));
    }
    v
}

fn check_format<F: Float>(fmt: HalfFormat, n: usize) {
    let rne = Round::NearestTiesToEven;
    for (a, b, c) in operands(fmt, n) {
        let (x, y, z) = (
            F::from_bits(a as u128),
            F::from_bits(b as u128),
            F::from_bits(c as u128),
        );
        assert_eq!(
            reference::add(fmt, a, b),
            canon(fmt, x.add_r(y, rne).value),
            "add {a:#06x} {b:#06x}"
        );
        assert_eq!(
            reference::sub(fmt, a, b),
            canon(fmt, x.sub_r(y, rne).value),
            "sub {a:#06x} {b:#06x}"
        );
        assert_eq!(
            reference::mul(fmt, a, b),
            canon(fmt, x.mul_r(y, rne).value),
            "mul {a:#06x} {b:#06x}"
        );
        let fma = if fmt == F16 {
            reference::fma_f16(a, b, c)
        } else {
            reference::fma_bf16(a, b, c)
        };
        assert_eq!(
            fma,
            canon(fmt, x.mul_add_r(y, z, rne).value),
            "fma {a:#06x} {b:#06x} {c:#06x}"
        );
    }
}

#[test]
fn f16_add_sub_mul_fma_agree_with_apfloat() {
    check_format::<Half>(F16, 300_000);
}

#[test]
fn bf16_add_sub_mul_fma_agree_with_apfloat() {
    check_format::<BFloat>(BF16, 300_000);
}

#[test]
fn conversions_from_f32_and_f64_agree_with_apfloat_in_every_mode() {
    let mut rng = Rng(42);
    for i in 0..200_000 {
        let r = rng.next();
        let x32 = f32::from_bits(if i % 2 == 0 {
            r as u32
        } else {
            (r as u32 & 0x807F_FFFF) | ((r as u32 >> 23) % 60 + 90) << 23
        });
        let x64 = f64::from_bits(if i % 2 == 0 {
            r
        } else {
            (r & 0x800F_FFFF_FFFF_FFFF) | ((r >> 52) % 60 + 990) << 52
        });
        for mode in [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp] {
            let mut lost = false;
            let s = Single::from_bits(x32.to_bits() as u128);
            let d = Double::from_bits(x64.to_bits() as u128);
            let h: Half = s.convert_r(round_of(mode), &mut lost).value;
            assert_eq!(
                F16.round(x32 as f64, mode),
                canon(F16, h),
                "f16 {mode:?} {x32:e}"
            );
            let h: BFloat = s.convert_r(round_of(mode), &mut lost).value;
            assert_eq!(
                BF16.round(x32 as f64, mode),
                canon(BF16, h),
                "bf16 {mode:?} {x32:e}"
            );
            let h: Half = d.convert_r(round_of(mode), &mut lost).value;
            assert_eq!(F16.round(x64, mode), canon(F16, h), "f16 {mode:?} {x64:e}");
            let h: BFloat = d.convert_r(round_of(mode), &mut lost).value;
            assert_eq!(
                BF16.round(x64, mode),
                canon(BF16, h),
                "bf16 {mode:?} {x64:e}"
            );
        }
    }
}
