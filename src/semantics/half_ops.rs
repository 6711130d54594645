//! The reference semantics of every half-precision instruction (PTX ISA 9.7.4, 9.7.7.1) but
//! `tanh.approx`/`ex2.approx` (`half_approx`), one lane at a time, on raw bits. The JIT (`lower::half`, `lower::softfloat`) follows the same
//! steps in the same order; `tests/half_ops.rs` compares the two bit for bit.
//!
//! Order of steps for `add sub mul fma`: `.oob` test on the raw inputs → `.ftz` on inputs →
//! exact result (f64; bf16 fma rounded to odd) → one rounding → `.ftz` on the result (tiny
//! after rounding: `HalfFormat::flush_tiny`) → `.sat` → `.relu` → `.oob` forces +0.

use super::half::{BF16, CANONICAL_NAN, F16, HalfFormat, fma_exact};
use crate::frontend::checked::{BoolOp, CmpOp, FloatMods, FloatOp, Rounding};

/// The magnitude bits of the "OOB NaN" that `fma.oob` tests for (per 16-bit lane). NVIDIA does
/// not publish it; measured on an H200 (every half in each operand): `a` or `b` with these
/// magnitude bits, either sign, makes the result +0; `c` is not tested.
pub const OOB_NAN: u16 = 0x7FF7;

/// Whether `fma.oob` forces +0 for these operands (see [`OOB_NAN`]).
pub fn is_oob(a: u16, b: u16) -> bool {
    a & 0x7FFF == OOB_NAN || b & 0x7FFF == OOB_NAN
}

impl HalfFormat {
    /// `.ftz`: a subnormal becomes zero of the same sign.
    pub fn flush(self, h: u16) -> u16 {
        if h & 0x7FFF < self.min_normal_bits() {
            h & 0x8000
        } else {
            h
        }
    }

    pub fn one(self) -> u16 {
        (self.bias() as u16) << self.mant_bits
    }

    /// `.sat`: clamp to [+0, 1]; NaN and −0 give +0.
    pub fn saturate(self, h: u16) -> u16 {
        if self.is_nan(h) || h & 0x8000 != 0 {
            0
        } else if h > self.one() {
            self.one()
        } else {
            h
        }
    }

    /// `.relu`: negatives (and −0) give +0; a NaN gives the canonical NaN.
    pub fn relu(self, h: u16) -> u16 {
        if self.is_nan(h) {
            CANONICAL_NAN
        } else if h & 0x8000 != 0 {
            0
        } else {
            h
        }
    }
}

/// The exact result of `add sub mul fma` on halves (bf16's fma rounded to odd: see
/// [`fma_exact`]), as an f64 that rounds, and compares with the tiny bound, as it does.
pub fn exact(fmt: HalfFormat, op: FloatOp, a: u16, b: u16, c: u16) -> f64 {
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    match op {
        FloatOp::Add => x + y,
        FloatOp::Sub => x - y,
        FloatOp::Mul => x * y,
        FloatOp::Fma => fma_exact(fmt, a, b, c),
        _ => panic!("arith covers add, sub, mul, fma, not {op:?}"),
    }
}

/// `add sub mul fma` with their modifiers (`mods.rnd` is always `.rn` for halves).
pub fn arith(fmt: HalfFormat, op: FloatOp, mods: FloatMods, a: u16, b: u16, c: u16) -> u16 {
    let oob = mods.oob && is_oob(a, b);
    let flush = |h: u16| if mods.ftz { fmt.flush(h) } else { h };
    let exact = exact(fmt, op, flush(a), flush(b), flush(c));
    let mut r = fmt.round(exact, Rounding::Rn);
    if mods.ftz {
        r = fmt.flush_tiny(exact, r);
    }
    if mods.sat {
        r = fmt.saturate(r);
    }
    if mods.relu {
        r = fmt.relu(r);
    }
    if oob { 0 } else { r }
}

/// `neg{.ftz}`, `abs{.ftz}`: sign operations; a NaN input gives the canonical NaN (the ISA
/// leaves it unspecified; GPUs implement these as arithmetic, which canonicalizes).
pub fn neg_abs(fmt: HalfFormat, is_abs: bool, ftz: bool, a: u16) -> u16 {
    let a = if ftz { fmt.flush(a) } else { a };
    if fmt.is_nan(a) {
        CANONICAL_NAN
    } else if is_abs {
        a & 0x7FFF
    } else {
        a ^ 0x8000
    }
}

/// `min`/`max` `{.ftz}{.NaN}{.xorsign.abs}`.
///
/// One NaN operand gives the other operand; two NaNs, or any NaN with `.NaN`, give the
/// canonical NaN; −0 < +0. `.xorsign.abs` compares magnitudes and gives the result the XOR of
/// the inputs' signs unless the result is NaN. (The ISA's x2 pseudo-code for `max` tests
/// `!isNaN(fA[i])` there; its prose, its scalar form and `min` all test the result, which is
/// what is done here.)
pub fn min_max(fmt: HalfFormat, is_max: bool, mods: FloatMods, a: u16, b: u16) -> u16 {
    let (mut a, mut b) = if mods.ftz {
        (fmt.flush(a), fmt.flush(b))
    } else {
        (a, b)
    };
    let sign = (a ^ b) & 0x8000;
    if mods.xorsign_abs {
        a &= 0x7FFF;
        b &= 0x7FFF;
    }
    let (an, bn) = (fmt.is_nan(a), fmt.is_nan(b));
    let d = if (an && bn) || (mods.nan && (an || bn)) {
        CANONICAL_NAN
    } else if an {
        b
    } else if bn {
        a
    } else {
        let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
        if x == y {
            // Equal values differ only for ±0: max prefers +0, min −0.
            if is_max { a & b } else { a | b }
        } else if (x > y) == is_max {
            a
        } else {
            b
        }
    };
    if mods.xorsign_abs && !fmt.is_nan(d) {
        (d & 0x7FFF) | sign
    } else {
        d
    }
}

/// A comparison of two exact values (ordered forms are false on NaN, unordered true).
pub fn compare(cmp: CmpOp, x: f64, y: f64) -> bool {
    let unordered = x.is_nan() || y.is_nan();
    match cmp {
        CmpOp::Eq => x == y,
        CmpOp::Ne => !unordered && x != y,
        CmpOp::Lt | CmpOp::Lo => x < y,
        CmpOp::Le | CmpOp::Ls => x <= y,
        CmpOp::Gt | CmpOp::Hi => x > y,
        CmpOp::Ge | CmpOp::Hs => x >= y,
        CmpOp::Equ => unordered || x == y,
        CmpOp::Neu => x != y,
        CmpOp::Ltu => unordered || x < y,
        CmpOp::Leu => unordered || x <= y,
        CmpOp::Gtu => unordered || x > y,
        CmpOp::Geu => unordered || x >= y,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

/// `setp`/`set` on one lane of a half type: compare (after `.ftz`), then combine with `c`.
pub fn compare_half(fmt: HalfFormat, cmp: CmpOp, ftz: bool, a: u16, b: u16) -> bool {
    let (a, b) = if ftz {
        (fmt.flush(a), fmt.flush(b))
    } else {
        (a, b)
    };
    compare(cmp, fmt.to_f64(a), fmt.to_f64(b))
}

pub fn bool_op(op: Option<BoolOp>, t: bool, c: bool) -> bool {
    match op {
        None => t,
        Some(BoolOp::And) => t && c,
        Some(BoolOp::Or) => t || c,
        Some(BoolOp::Xor) => t ^ c,
    }
}

/// `cvt` of an exact value to a half format with `.relu` and `.satfinite`: `.satfinite` turns
/// an infinite result into the largest finite value of the same sign (NaN stays NaN).
pub fn convert(fmt: HalfFormat, x: f64, mode: Rounding, relu: bool, satfinite: bool) -> u16 {
    saturate(fmt, fmt.round(x, mode), relu, satfinite)
}

/// `cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits` on bit patterns: `a` to
/// the upper half with the upper 16 bits of `rbits`, `b` to the lower with the lower 16
/// (rounding: [`HalfFormat::round_stochastic`]; the modifiers as in [`convert`]).
pub fn stochastic_pair(a: u32, b: u32, rbits: u32, bf16: bool, relu: bool, satfinite: bool) -> u32 {
    let fmt = if bf16 { BF16 } else { F16 };
    let half = |x: u32, r: u32| {
        saturate(
            fmt,
            fmt.round_stochastic(f32::from_bits(x), r & 0xFFFF),
            relu,
            satfinite,
        ) as u32
    };
    half(a, rbits >> 16) << 16 | half(b, rbits)
}

fn saturate(fmt: HalfFormat, mut r: u16, relu: bool, satfinite: bool) -> u16 {
    if satfinite && r & 0x7FFF == fmt.inf_bits() {
        r -= 1;
    }
    if relu { fmt.relu(r) } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mods() -> FloatMods {
        FloatMods {
            rnd: Some(Rounding::Rn),
            ..FloatMods::default()
        }
    }

    #[test]
    fn ftz_flushes_inputs_and_results_keeping_the_sign() {
        let ftz = FloatMods {
            ftz: true,
            ..mods()
        };
        // 2^-14 (min normal) * 0.5 = 2^-15, subnormal: flushed with .ftz.
        assert_eq!(arith(F16, FloatOp::Mul, ftz, 0x0400, 0x3800, 0), 0x0000);
        assert_eq!(arith(F16, FloatOp::Mul, mods(), 0x0400, 0x3800, 0), 0x0200);
        assert_eq!(arith(F16, FloatOp::Mul, ftz, 0x8400, 0x3800, 0), 0x8000);
        // A subnormal input is zero under .ftz: x + (-x) where x subnormal.
        assert_eq!(arith(F16, FloatOp::Add, ftz, 0x0001, 0x3C00, 0), 0x3C00);
    }

    #[test]
    fn sat_clamps_to_zero_one_and_nan_to_plus_zero() {
        let sat = FloatMods {
            sat: true,
            ..mods()
        };
        assert_eq!(arith(F16, FloatOp::Add, sat, 0x3C00, 0x3C00, 0), 0x3C00);
        assert_eq!(arith(F16, FloatOp::Sub, sat, 0x0000, 0x3C00, 0), 0x0000);
        assert_eq!(arith(F16, FloatOp::Add, sat, 0x7C00, 0xFC00, 0), 0x0000);
        assert_eq!(arith(F16, FloatOp::Mul, sat, 0x3800, 0x3800, 0), 0x3400);
    }

    #[test]
    fn relu_clamps_negatives_and_keeps_nan_canonical() {
        let relu = FloatMods {
            relu: true,
            ..mods()
        };
        assert_eq!(
            arith(BF16, FloatOp::Fma, relu, 0xBF80, 0x3F80, 0x0000),
            0x0000
        );
        assert_eq!(
            arith(BF16, FloatOp::Fma, relu, 0x7F80, 0x0000, 0x0000),
            CANONICAL_NAN
        );
        assert_eq!(
            arith(F16, FloatOp::Fma, relu, 0x3C00, 0x3C00, 0x3C00),
            0x4000
        );
    }

    #[test]
    fn oob_nan_in_a_or_b_of_either_sign_gives_plus_zero() {
        let oob = FloatMods {
            oob: true,
            ..mods()
        };
        assert_eq!(arith(F16, FloatOp::Fma, oob, OOB_NAN, 0x3C00, 0x3C00), 0);
        assert_eq!(
            arith(F16, FloatOp::Fma, oob, 0x3C00, 0x8000 | OOB_NAN, 0x7C00),
            0
        );
        assert_eq!(
            arith(BF16, FloatOp::Fma, oob, 0x8000 | OOB_NAN, 0x3F80, 0),
            0
        );
        // c is not tested: its NaN is a NaN.
        assert_eq!(
            arith(F16, FloatOp::Fma, oob, 0x3C00, 0x3C00, OOB_NAN),
            CANONICAL_NAN
        );
        assert_eq!(
            arith(F16, FloatOp::Fma, oob, 0x7E00, 0x3C00, 0x3C00),
            CANONICAL_NAN
        );
        assert_eq!(
            arith(F16, FloatOp::Fma, mods(), OOB_NAN, 0x3C00, 0x3C00),
            CANONICAL_NAN
        );
    }

    #[test]
    fn min_max_nan_rules() {
        let m = mods();
        let nan_mod = FloatMods { nan: true, ..m };
        assert_eq!(min_max(F16, false, m, 0x7E00, 0x3C00), 0x3C00);
        assert_eq!(min_max(F16, true, m, 0x3C00, 0x7E01), 0x3C00);
        assert_eq!(min_max(F16, true, m, 0x7E01, 0xFE02), CANONICAL_NAN);
        assert_eq!(min_max(F16, false, nan_mod, 0x7E00, 0x3C00), CANONICAL_NAN);
        assert_eq!(min_max(F16, false, m, 0x0000, 0x8000), 0x8000);
        assert_eq!(min_max(F16, true, m, 0x8000, 0x0000), 0x0000);
    }

    #[test]
    fn xorsign_abs_compares_magnitudes_and_sets_the_xor_sign() {
        let xs = FloatMods {
            xorsign_abs: true,
            ..mods()
        };
        // min(|-2|, |3|) = 2, sign = 1 ^ 0 → -2
        assert_eq!(min_max(F16, false, xs, 0xC000, 0x4200), 0xC000);
        // max(|-2|, |-3|) = 3, sign = 1 ^ 1 → +3
        assert_eq!(min_max(F16, true, xs, 0xC000, 0xC200), 0x4200);
        // a NaN result ignores xorsign
        assert_eq!(
            min_max(F16, true, FloatMods { nan: true, ..xs }, 0xFE00, 0x4200),
            CANONICAL_NAN
        );
        // one NaN: the other operand's magnitude, with the xor sign
        assert_eq!(min_max(F16, true, xs, 0xFE00, 0x4200), 0xC200);
    }

    #[test]
    fn neg_abs_flip_the_sign_and_canonicalize_nan() {
        assert_eq!(neg_abs(F16, false, false, 0x3C00), 0xBC00);
        assert_eq!(neg_abs(F16, false, false, 0x0000), 0x8000);
        assert_eq!(neg_abs(F16, true, false, 0xFC00), 0x7C00);
        assert_eq!(neg_abs(F16, false, false, 0x7E01), CANONICAL_NAN);
        assert_eq!(neg_abs(F16, false, true, 0x0001), 0x8000);
        assert_eq!(neg_abs(BF16, true, false, 0xFFC0), CANONICAL_NAN);
    }

    #[test]
    fn satfinite_and_relu_conversions() {
        assert_eq!(convert(F16, 1e6, Rounding::Rn, false, true), 0x7BFF);
        assert_eq!(
            convert(F16, -f64::INFINITY, Rounding::Rn, false, true),
            0xFBFF
        );
        assert_eq!(
            convert(F16, f64::NAN, Rounding::Rn, false, true),
            CANONICAL_NAN
        );
        assert_eq!(convert(F16, -3.0, Rounding::Rn, true, false), 0);
        assert_eq!(convert(BF16, 1e39, Rounding::Rz, false, false), 0x7F7F);
    }
}
