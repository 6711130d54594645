//! f32/f64 rules of PTX that differ from plain IEEE arithmetic on the host: canonical NaN
//! results, flush-to-zero, saturation, min/max. (The JIT's twins are in `lower::softfloat`
//! and `lower::float`.)

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
