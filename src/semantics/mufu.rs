//! The f32 `.approx` instructions and `div.full`/`div.approx` as an H200 runs them: the
//! instruction sequence `ptxas` (CUDA 13.0) emits for each around the multi-function unit
//! (MUFU), read from its SASS (`cuobjdump -sass`), with each MUFU function taken as its
//! correctly rounded value. The sequences scale subnormal and huge operands into the unit's
//! range, and `sin`/`cos` reduce their argument to turns with one f32 multiply rounded toward
//! zero, so that a large argument gives what the GPU gives, not the true sine.
//!
//! The unit's own approximation is not published and not modeled: against the recordings in
//! `tests/hardware` these functions are within a few units in the last place, or (`sin`,
//! `cos`, `lg2` near 1, `tanh`) a small absolute error (README, semantics table). `.ftz`
//! variants are these functions with inputs and results flushed (`ptxas` emits the unit
//! alone, which flushes its input and output).

use super::directed;
use super::float::{canonical_f32, flush_f32};
use crate::frontend::checked::{FloatMods, FloatOp, Rounding};

/// 2^126: above this `rcp` and `div.full` scale the divisor by 1/4 (its reciprocal would be
/// subnormal, which the unit flushes).
pub const HUGE: f32 = f32::from_bits(0x7E80_0000);
/// 2^24: a subnormal operand is scaled by this into the normal range.
pub const SUBNORMAL_SCALE: f32 = 16_777_216.0;
/// The f32 of 1/(2π) that `sin` and `cos` multiply by (0x3E22F983).
pub const INV_TWO_PI: f32 = f32::from_bits(0x3E22_F983);

/// The unit's functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mufu {
    Rcp,
    Rsq,
    Lg2,
    /// `sin(2π t)` of turns `t`.
    Sin,
    /// `cos(2π t)`.
    Cos,
    Tanh,
}

/// A MUFU function of `y`: its input and output flushed (but `Tanh`'s, which keeps
/// subnormals), the value correctly rounded (the model; `Rsq` as a square root and a division
/// in f32, each rounded, as the JIT's inline code computes it), a NaN canonical.
pub fn mufu(f: Mufu, y: f32) -> f32 {
    if f == Mufu::Tanh {
        return canonical_f32((y as f64).tanh() as f32);
    }
    let y = flush_f32(y);
    let f32_result = match f {
        Mufu::Rcp => Some(1.0 / y),
        Mufu::Rsq => Some(1.0 / y.sqrt()),
        _ => None,
    };
    if let Some(r) = f32_result {
        return flush_f32(canonical_f32(r));
    }
    let y = y as f64;
    let turns = || std::f64::consts::TAU * (y - y.round_ties_even());
    let r = match f {
        Mufu::Rcp | Mufu::Rsq => unreachable!("computed in f32 above"),
        Mufu::Lg2 => y.log2(),
        Mufu::Sin if y.is_infinite() => f64::NAN,
        Mufu::Sin => turns().sin(),
        Mufu::Cos if y.is_infinite() => f64::NAN,
        Mufu::Cos => turns().cos(),
        Mufu::Tanh => unreachable!("computed above"),
    };
    // (The sign of a zero input is kept: sin(−0) = −0.)
    let r = if f == Mufu::Sin && y == 0.0 { y } else { r };
    flush_f32(canonical_f32(r as f32))
}

/// The f32 instruction `op` with `mods` on (flushed) operands `y`, where it is one of these
/// sequences (`.ftz` flushes its result after).
pub fn of(op: FloatOp, mods: FloatMods, y: [f32; 3]) -> Option<f32> {
    Some(match op {
        FloatOp::Div if mods.full => div_full(y[0], y[1], mods.ftz),
        FloatOp::Div if mods.approx => div_approx(y[0], y[1], mods.ftz),
        FloatOp::Rcp if mods.approx => rcp(y[0]),
        FloatOp::Rsqrt => rsqrt(y[0]),
        FloatOp::Ex2 => ex2(y[0]),
        FloatOp::Lg2 => lg2(y[0]),
        FloatOp::Sin => sin(y[0]),
        FloatOp::Cos => cos(y[0]),
        FloatOp::Tanh => tanh(y[0]),
        _ => return None,
    })
}

/// Whether `|x|` is below the smallest normal (a NaN is not: `FSETP.GEU` is true for it).
fn tiny(x: f32) -> bool {
    x.abs() < f32::MIN_POSITIVE
}

/// `rcp.approx.f32`: `s · RCP(x · s)`, `s` = 1/4 for a huge `x`, 2^24 for a subnormal one.
pub fn rcp(x: f32) -> f32 {
    let s = if x.abs() > HUGE {
        0.25
    } else if tiny(x) {
        SUBNORMAL_SCALE
    } else {
        1.0
    };
    s * mufu(Mufu::Rcp, x * s)
}

/// `rsqrt.approx.f32`: a subnormal `x` scaled by 2^24, the result by 2^12.
pub fn rsqrt(x: f32) -> f32 {
    if tiny(x) {
        mufu(Mufu::Rsq, x * SUBNORMAL_SCALE) * 4096.0
    } else {
        mufu(Mufu::Rsq, x)
    }
}

/// `ex2.approx.f32`: below −126 the square of the power of half the argument (so that a
/// subnormal result is not flushed by the unit).
pub fn ex2(x: f32) -> f32 {
    // (The unit's flushes change nothing here: 2 to a subnormal power rounds to 1, and the
    // unit's result is subnormal only below −252, where its square is 0 either way. Written
    // out rather than through `mufu`, as the hottest of these helpers: Triton's softmax.)
    let unit = |y: f32| canonical_f32((y as f64).exp2() as f32);
    if x < -126.0 {
        let e = unit(x * 0.5);
        e * e
    } else {
        unit(x)
    }
}

/// `lg2.approx.f32`: a subnormal `x` scaled by 2^24, then 24 subtracted.
pub fn lg2(x: f32) -> f32 {
    if tiny(x) {
        mufu(Mufu::Lg2, x * SUBNORMAL_SCALE) - 24.0
    } else {
        mufu(Mufu::Lg2, x)
    }
}

/// `x` in turns: `x · 1/(2π)` rounded toward zero (`FMUL.RZ`).
fn turns(x: f32) -> f32 {
    directed::f32_op(directed::Arith::Mul, Rounding::Rz, x, INV_TWO_PI, 0.0)
}

/// `sin.approx.f32`.
pub fn sin(x: f32) -> f32 {
    mufu(Mufu::Sin, turns(x))
}

/// `cos.approx.f32`.
pub fn cos(x: f32) -> f32 {
    mufu(Mufu::Cos, turns(x))
}

/// `tanh.approx.f32`.
pub fn tanh(x: f32) -> f32 {
    mufu(Mufu::Tanh, x)
}

/// `div.full.f32` (`ftz`: `div.full.ftz.f32`): `a · RCP(b)`, both scaled by 1/4 where `b`
/// is huge and (without `.ftz`) by 2^24 where it is subnormal.
pub fn div_full(a: f32, b: f32, ftz: bool) -> f32 {
    let (huge, small) = (b.abs() > HUGE, tiny(b));
    let (mut a, mut b) = (a, b);
    if huge {
        (a, b) = (a * 0.25, b * 0.25);
    }
    if ftz {
        return flush_f32(mufu(Mufu::Rcp, flush_f32(b)) * flush_f32(a));
    }
    if small {
        (a, b) = (a * SUBNORMAL_SCALE, b * SUBNORMAL_SCALE);
    }
    mufu(Mufu::Rcp, b) * a
}

/// `div.approx.f32` (`ftz`: `div.approx.ftz.f32`): `a · RCP(b)`, both scaled by 2^24 where
/// (without `.ftz`) `b` is subnormal.
pub fn div_approx(a: f32, b: f32, ftz: bool) -> f32 {
    if ftz {
        return flush_f32(mufu(Mufu::Rcp, b) * flush_f32(a));
    }
    let (a, b) = if tiny(b) {
        (a * SUBNORMAL_SCALE, b * SUBNORMAL_SCALE)
    } else {
        (a, b)
    };
    mufu(Mufu::Rcp, b) * a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2^e as an f32 (`f32::powi` of an exponent past ±127 is 0 or infinity unoptimized: it
    /// computes 2^|e| first).
    fn pow2(e: i32) -> f32 {
        2f64.powi(e) as f32
    }

    #[test]
    fn sin_and_cos_reduce_to_turns_rounded_toward_zero() {
        // 1e6 · f32(1/(2π)) = 159154.9367…: f32 keeps 1/64ths there, and toward zero that
        // is 159154 + 59/64. The GPU's sine of 1e6 is the sine of that many turns.
        let t = turns(1.0e6);
        assert_eq!(t, 159_154.0 + 59.0 / 64.0);
        let angle = std::f64::consts::TAU * (t as f64 - (t as f64).round());
        assert_eq!(sin(1.0e6), angle.sin() as f32);
        assert_ne!(sin(1.0e6), (1.0e6f64).sin() as f32);
        assert_eq!(cos(0.0), 1.0);
        assert_eq!(sin(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(sin(f32::INFINITY).is_nan());
    }

    #[test]
    fn the_unit_flushes_its_subnormal_input_and_output() {
        let sub = f32::from_bits(1);
        assert_eq!(mufu(Mufu::Rcp, sub), f32::INFINITY);
        assert_eq!(mufu(Mufu::Lg2, sub), f32::NEG_INFINITY);
        assert_eq!(sin(sub), 0.0);
    }

    #[test]
    fn subnormal_operands_are_scaled_into_range_without_ftz() {
        let (p127, p128) = (f32::from_bits(0x0040_0000), f32::from_bits(0x0020_0000));
        assert_eq!(rcp(p127), pow2(127));
        assert_eq!(rsqrt(p128), pow2(64));
        assert_eq!(lg2(p128), -128.0);
        assert_eq!(div_full(1.0, p127, false), pow2(127));
        assert_eq!(div_full(1.0, p127, true), f32::INFINITY);
        assert_eq!(div_approx(p128, p128, false), 1.0);
    }

    #[test]
    fn huge_divisors_are_scaled_by_a_quarter() {
        // 1/2^127 is subnormal: RCP alone would flush it, the scaled sequence keeps it.
        let huge = pow2(127);
        assert_eq!(rcp(huge), pow2(-127));
        assert_eq!(div_full(pow2(-20), huge, false), pow2(-147));
        assert_eq!(div_full(pow2(-20), huge, true), 0.0);
        // div.approx does not scale: the reciprocal is flushed.
        assert_eq!(div_approx(1.0, huge, false), 0.0);
    }

    #[test]
    fn ex2_below_minus_126_squares_the_half_power() {
        assert_eq!(ex2(-140.0), pow2(-140));
        assert_eq!(ex2(-126.0), f32::MIN_POSITIVE);
        assert_eq!(ex2(f32::NEG_INFINITY), 0.0);
        assert!(ex2(f32::NAN).is_nan());
    }
}
