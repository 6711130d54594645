//! f32/f64 rules of PTX that differ from plain IEEE arithmetic on the host: canonical NaN
//! results, flush-to-zero, saturation, min/max. (The JIT's twins are in `lower::softfloat`
//! and `lower::float`.)

use super::directed::{self, Arith};
use crate::frontend::checked::Rounding;

/// "The result of a single-precision floating-point operation involving one or more input
/// NaNs is the quiet NaN of bit pattern 0x7fffffff."
pub const CANONICAL_NAN_F32: u32 = 0x7FFF_FFFF;

pub fn canonical_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN_F32)
    } else {
        x
    }
}

/// `.ftz`: a subnormal becomes zero of the same sign.
pub fn flush_f32(x: f32) -> f32 {
    if x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    }
}

/// `.ftz` on `r`, the f32 result of `op` on `x` (flushed operands) rounded `rnd`, as an H200
/// flushes (measured): a subnormal result; and for `add sub mul fma` a result tiny after
/// rounding (`directed::f32_tiny`): the smallest normal where the exact value was below it
/// and rounded up to it only because the exponent range ends there. (`div`, `rcp` and
/// `sqrt` flush subnormal results only: no rounding up to the smallest normal was flushed
/// in the probes.)
pub fn flush_result_f32(op: Arith, rnd: Rounding, x: [f32; 3], r: f32) -> f32 {
    let sum_or_product = matches!(op, Arith::Add | Arith::Sub | Arith::Mul | Arith::Fma);
    if sum_or_product
        && r.abs() == f32::MIN_POSITIVE
        && directed::f32_tiny(op, rnd, x[0], x[1], x[2])
    {
        0f32.copysign(r)
    } else {
        flush_f32(r)
    }
}

/// `.ftz` on `r`, `cvt.rnd.ftz.f32.f64` of `x`: zero of its sign where tiny after rounding
/// (measured on an H200, as for [`flush_result_f32`]).
pub fn flush_narrowed_f32(x: f64, rnd: Rounding, r: f32) -> f32 {
    if directed::f64_to_f32_tiny(x, rnd) {
        0f32.copysign(r)
    } else {
        r
    }
}

pub fn flush_f64(x: f64) -> f64 {
    if x.is_subnormal() {
        0f64.copysign(x)
    } else {
        x
    }
}

/// `.sat`: clamp to [+0, 1]; NaN and −0 give +0.
pub fn saturate(x: f64) -> f64 {
    if x > 1.0 {
        1.0
    } else if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// PTX min/max: a NaN operand yields the other; −0 < +0; both NaN → NaN.
pub fn min_max_f64(is_max: bool, x: f64, y: f64) -> f64 {
    if x.is_nan() {
        return y;
    }
    if y.is_nan() {
        return x;
    }
    if x == y {
        // ±0: max prefers +0, min −0.
        let (xb, yb) = (x.to_bits(), y.to_bits());
        return f64::from_bits(if is_max { xb & yb } else { xb | yb });
    }
    if (x > y) == is_max { x } else { y }
}

pub fn min_max_f32(is_max: bool, x: f32, y: f32) -> f32 {
    // Exact in f64, ±0 included.
    min_max_f64(is_max, x as f64, y as f64) as f32
}
