//! The f32 `div.full`, `div.approx`, `rcp.approx` and `rsqrt.approx` inline, as
//! `semantics::mufu` models an H200's: the scaling of huge and subnormal operands that `ptxas`
//! emits around the MUFU reciprocal, the reciprocal itself correctly rounded with a
//! subnormal result flushed. On an f32 or on the lanes of an f32x4. (The transcendental
//! functions call `semantics::mufu` out of line.)

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use super::softfloat::{float_const, flush_subnormal, pick};
use crate::semantics::mufu::{HUGE, SUBNORMAL_SCALE};

/// MUFU.RCP: `1/y`, a subnormal result flushed.
fn rcp_unit(b: &mut FunctionBuilder, y: Value) -> Value {
    let ty = b.func.dfg.value_type(y);
    let one = float_const(b, ty, 1.0);
    let r = b.ins().fdiv(one, y);
    flush_subnormal(b, r)
}

/// `|x|` compared with `bound` (`cc`): false for a NaN.
fn magnitude_is(b: &mut FunctionBuilder, cc: FloatCC, x: Value, bound: f32) -> Value {
    let ty = b.func.dfg.value_type(x);
    let magnitude = b.ins().fabs(x);
    let bound = float_const(b, ty, bound as f64);
    b.ins().fcmp(cc, magnitude, bound)
}

/// `x` times `s` where `cond`, else `x` (a multiply by one is exact).
fn scale_if(b: &mut FunctionBuilder, cond: Value, x: Value, s: f32) -> Value {
    let ty = b.func.dfg.value_type(x);
    let (s, one) = (float_const(b, ty, s as f64), float_const(b, ty, 1.0));
    let factor = pick(b, cond, s, one);
    b.ins().fmul(x, factor)
}

/// `div.full.f32` (`semantics::mufu::div_full`). The two scalings exclude each other, so one
/// factor does both; the scaled divisor is at most 2^126, so the reciprocal is never
/// subnormal and needs no flush.
pub fn div_full(b: &mut FunctionBuilder, x: Value, y: Value, ftz: bool) -> Value {
    let ty = b.func.dfg.value_type(y);
    let huge = magnitude_is(b, FloatCC::GreaterThan, y, HUGE);
    let one = float_const(b, ty, 1.0);
    let quarter = float_const(b, ty, 0.25);
    let s = if ftz {
        one
    } else {
        let small = magnitude_is(b, FloatCC::LessThan, y, f32::MIN_POSITIVE);
        let scale = float_const(b, ty, SUBNORMAL_SCALE as f64);
        pick(b, small, scale, one)
    };
    let s = pick(b, huge, quarter, s);
    let mut x = b.ins().fmul(x, s);
    if ftz {
        x = flush_subnormal(b, x);
    }
    let y = b.ins().fmul(y, s);
    let r = b.ins().fdiv(one, y);
    b.ins().fmul(r, x)
}

/// `div.approx.f32` (`semantics::mufu::div_approx`).
pub fn div_approx(b: &mut FunctionBuilder, x: Value, y: Value, ftz: bool) -> Value {
    let (x, y) = if ftz {
        (x, y)
    } else {
        let small = magnitude_is(b, FloatCC::LessThan, y, f32::MIN_POSITIVE);
        (
            scale_if(b, small, x, SUBNORMAL_SCALE),
            scale_if(b, small, y, SUBNORMAL_SCALE),
        )
    };
    let r = rcp_unit(b, y);
    b.ins().fmul(r, x)
}

/// `rcp.approx.f32` (`semantics::mufu::rcp`).
pub fn rcp(b: &mut FunctionBuilder, x: Value) -> Value {
    let ty = b.func.dfg.value_type(x);
    let huge = magnitude_is(b, FloatCC::GreaterThan, x, HUGE);
    let small = magnitude_is(b, FloatCC::LessThan, x, f32::MIN_POSITIVE);
    let (quarter, scale, one) = (
        float_const(b, ty, 0.25),
        float_const(b, ty, SUBNORMAL_SCALE as f64),
        float_const(b, ty, 1.0),
    );
    let s = pick(b, small, scale, one);
    let s = pick(b, huge, quarter, s);
    let scaled = b.ins().fmul(x, s);
    let r = rcp_unit(b, scaled);
    b.ins().fmul(s, r)
}

/// `rsqrt.approx.f32` (`semantics::mufu::rsqrt`; the unit's 1/√y as a square root and a
/// division, each rounded).
pub fn rsqrt(b: &mut FunctionBuilder, x: Value) -> Value {
    let ty = b.func.dfg.value_type(x);
    let small = magnitude_is(b, FloatCC::LessThan, x, f32::MIN_POSITIVE);
    let scaled = scale_if(b, small, x, SUBNORMAL_SCALE);
    let root = b.ins().sqrt(scaled);
    let one = float_const(b, ty, 1.0);
    let r = b.ins().fdiv(one, root);
    scale_if(b, small, r, 4096.0)
}
