//! Inline IR helpers for everything Cranelift cannot do natively on x86-64: decoding and
//! rounding f16/bf16, and PTX's NaN, flush-to-zero and saturation rules. This file is the one
//! place that decides NaN results; it mirrors `semantics::half` step for step.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{Endianness, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;

use crate::frontend::checked::Rounding;
pub use crate::semantics::float::CANONICAL_NAN_F32;
use crate::semantics::half::{CANONICAL_NAN, HalfFormat};

const F64_INF: i64 = 0x7FF0_0000_0000_0000;
const F64_MANT: i64 = (1 << 52) - 1;

/// Exact f64 value of half bits `h` (an `i16`). NaNs decode quiet with their payload.
pub fn half_to_f64(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let mb = fmt.mant_bits as i64;
    let x = b.ins().uextend(types::I64, h);
    let sign = b.ins().band_imm_u(x, 0x8000);
    let sign = b.ins().ishl_imm_u(sign, 48);
    let mag = b.ins().band_imm_u(x, 0x7FFF);
    // The half's exponent and fraction placed in f64 fields; scaling by 2^(1023 - bias) fixes
    // the exponent, for subnormals too (they land in f64's subnormal range first).
    let placed = b.ins().ishl_imm_u(mag, 52 - mb);
    let placed = b.ins().bitcast(types::F64, MemFlagsData::new(), placed);
    let scale = b.ins().f64const(2f64.powi(1023 - fmt.bias()));
    let finite = b.ins().fmul(placed, scale);
    let finite = b.ins().bitcast(types::I64, MemFlagsData::new(), finite);
    // Inf and NaN: all-ones exponent; NaNs made quiet.
    let frac = b.ins().band_imm_u(mag, (1 << mb) - 1);
    let frac = b.ins().ishl_imm_u(frac, 52 - mb);
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, mag, fmt.inf_bits() as i64);
    let quiet = b.ins().iconst(types::I64, 0x0008_0000_0000_0000);
    let zero = b.ins().iconst(types::I64, 0);
    let quiet = b.ins().select(is_nan, quiet, zero);
    let special = b.ins().bor_imm_u(frac, F64_INF);
    let special = b.ins().bor(special, quiet);
    let is_special = b.ins().icmp_imm_u(
        IntCC::UnsignedGreaterThanOrEqual,
        mag,
        fmt.inf_bits() as i64,
    );
    let bits = b.ins().select(is_special, special, finite);
    let bits = b.ins().bor(bits, sign);
    b.ins().bitcast(types::F64, MemFlagsData::new(), bits)
}

/// The f64 `x` taken apart, its significand rounded with `mode` to the quantum of a format
/// with `mant_bits` and smallest normal exponent `emin` (`kept`; a carry out of it moves into
/// the exponent when the caller places it). The first half of `HalfFormat::round`, shared by
/// the half and the narrow (fp8/fp6/fp4) formats.
pub struct Significand {
    pub negative: Value,
    /// |x|'s bits.
    pub a: Value,
    /// x's unbiased exponent, and `emin` as a value.
    pub e: Value,
    pub emin: Value,
    pub kept: Value,
}

pub fn round_significand(
    b: &mut FunctionBuilder,
    mant_bits: u32,
    emin: i32,
    x: Value,
    mode: Rounding,
) -> Significand {
    let mb = mant_bits as i64;
    let raw = b.ins().bitcast(types::I64, MemFlagsData::new(), x);
    let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, raw, 0);
    let a = b.ins().band_imm_u(raw, i64::MAX);
    let e = b.ins().ushr_imm_u(a, 52);
    let e = b.ins().iadd_imm_s(e, -1023);
    let m = b.ins().band_imm_u(a, F64_MANT);
    let m = b.ins().bor_imm_u(m, 1 << 52);
    // shift = min(52 - mb + max(emin - e, 0), 63)
    let emin_v = b.ins().iconst(types::I64, emin as i64);
    let below = b.ins().isub(emin_v, e);
    let zero = b.ins().iconst(types::I64, 0);
    let below = b.ins().smax(below, zero);
    let shift = b.ins().iadd_imm_s(below, 52 - mb);
    let cap = b.ins().iconst(types::I64, 63);
    let shift = b.ins().umin(shift, cap);
    let kept = b.ins().ushr(m, shift);
    let one = b.ins().iconst(types::I64, 1);
    let unit = b.ins().ishl(one, shift);
    let low_mask = b.ins().iadd_imm_s(unit, -1);
    let rem = b.ins().band(m, low_mask);
    let half = b.ins().ushr_imm_u(unit, 1);
    let inexact = b.ins().icmp_imm_u(IntCC::NotEqual, rem, 0);
    let up = match mode {
        Rounding::Rn => {
            let above = b.ins().icmp(IntCC::UnsignedGreaterThan, rem, half);
            let tie = b.ins().icmp(IntCC::Equal, rem, half);
            let odd = b.ins().band_imm_u(kept, 1);
            let odd = b.ins().ireduce(types::I8, odd);
            let tie_odd = b.ins().band(tie, odd);
            b.ins().bor(above, tie_odd)
        }
        Rounding::Rna => b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, rem, half),
        Rounding::Rz => b.ins().iconst(types::I8, 0),
        Rounding::Rp => {
            let positive = b.ins().bxor_imm_u(negative, 1);
            b.ins().band(inexact, positive)
        }
        Rounding::Rm => b.ins().band(inexact, negative),
    };
    let up = b.ins().uextend(types::I64, up);
    let kept = b.ins().iadd(kept, up);
    Significand {
        negative,
        a,
        e,
        emin: emin_v,
        kept,
    }
}

/// Rounds the f64 `x` to half bits (`i16`) with `mode`: the IR twin of `HalfFormat::round`.
pub fn f64_to_half(b: &mut FunctionBuilder, fmt: HalfFormat, x: Value, mode: Rounding) -> Value {
    let mb = fmt.mant_bits as i64;
    let inf = fmt.inf_bits() as i64;
    let Significand {
        negative,
        a,
        e,
        emin: emin_v,
        kept,
    } = round_significand(b, fmt.mant_bits, fmt.emin(), x, mode);
    let zero = b.ins().iconst(types::I64, 0);
    // bits = ((max(e, emin) + bias - 1) << mb) + kept
    let exp = b.ins().smax(e, emin_v);
    let exp = b.ins().iadd_imm_s(exp, fmt.bias() as i64 - 1);
    let exp = b.ins().ishl_imm_u(exp, mb);
    let bits = b.ins().iadd(exp, kept);
    let overflow = b
        .ins()
        .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, bits, inf);
    let inf_v = b.ins().iconst(types::I64, inf);
    let max_v = b.ins().iconst(types::I64, inf - 1);
    let on_overflow = match mode {
        Rounding::Rn | Rounding::Rna => inf_v,
        Rounding::Rz => max_v,
        Rounding::Rp => b.ins().select(negative, max_v, inf_v),
        Rounding::Rm => b.ins().select(negative, inf_v, max_v),
    };
    let bits = b.ins().select(overflow, on_overflow, bits);
    // Zero and infinity keep their class whatever the mode.
    let is_zero = b.ins().icmp_imm_u(IntCC::Equal, a, 0);
    let bits = b.ins().select(is_zero, zero, bits);
    let is_inf = b.ins().icmp_imm_u(IntCC::Equal, a, F64_INF);
    let bits = b.ins().select(is_inf, inf_v, bits);
    let sign = b.ins().uextend(types::I64, negative);
    let sign = b.ins().ishl_imm_u(sign, 15);
    let bits = b.ins().bor(bits, sign);
    let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, F64_INF);
    let nan = b.ins().iconst(types::I64, CANONICAL_NAN as i64);
    let bits = b.ins().select(is_nan, nan, bits);
    b.ins().ireduce(types::I16, bits)
}

// ---- fast paths for round-to-nearest-even (the arithmetic instructions) ---------------------

/// Exact f32 value of half bits `h` (`i16`), for arithmetic and comparisons (a NaN stays a
/// NaN; its payload does not matter there).
pub fn half_to_f32(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let x = b.ins().uextend(types::I32, h);
    if fmt.exp_bits == 8 {
        // bf16 is the top half of an f32.
        let bits = b.ins().ishl_imm_u(x, 16);
        return b.ins().bitcast(types::F32, MemFlagsData::new(), bits);
    }
    // f16: one load from a table of all 65,536 values. Measured (`ptxjit bench`): the f16x2
    // axpy 1.8× and the fma chains 1.25× faster than decoding with bit operations (about ten
    // dependent instructions), which is what builds the table.
    let table = F16_TO_F32.as_ptr() as i64;
    let index = b.ins().uextend(types::I64, x);
    let offset = b.ins().ishl_imm_u(index, 2);
    let addr = b.ins().iadd_imm_s(offset, table);
    b.ins().load(types::F32, crate::lower::invariant(), addr, 0)
}

/// f32 bits of every f16 (NaN payloads kept, not quieted).
static F16_TO_F32: std::sync::LazyLock<Box<[u32]>> = std::sync::LazyLock::new(|| {
    (0..=u16::MAX)
        .map(|h| {
            let sign = (h as u32 & 0x8000) << 16;
            let mag = h as u32 & 0x7FFF;
            let placed = mag << 13;
            let bits = if mag >= 0x7C00 {
                placed | 0x7F80_0000
            } else {
                (f32::from_bits(placed) * 2f32.powi(112)).to_bits()
            };
            bits | sign
        })
        .collect()
});

/// [`half_to_f32`] for `cvt`, NaNs as `HalfFormat::to_f32_bits` says: an f16 NaN gives the
/// canonical NaN, a bf16 NaN keeps its bits.
pub fn half_to_f32_cvt(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let v = half_to_f32(b, fmt, h);
    if fmt.exp_bits == 8 {
        return v;
    }
    let is_nan = b.ins().fcmp(FloatCC::Unordered, v, v);
    let nan = b.ins().f32const(f32::from_bits(CANONICAL_NAN_F32));
    b.ins().select(is_nan, nan, v)
}

/// The constants of [`f32_to_half_rne`]'s f16 steps, shared with the lane groups' vector
/// form of it (`simd::half_cvt`).
pub mod f32_to_f16_rne {
    /// Added as an f32 to a magnitude below f16's normal range: the sum's low bits are the
    /// f16 subnormal's, rounded at its quantum by the FPU.
    pub const SUBNORMAL_MAGIC: u32 = ((127 - 15) + (23 - 10) + 1) << 23;
    /// Added to a normal magnitude's bits: the exponent rebiased, and half an ulp minus one.
    pub const REBIAS_HALF_ULP: u32 = (((15 - 127) << 23) + 0xFFF) as u32;
    /// Magnitudes below this (2^-14, f16's smallest normal) round to subnormals.
    pub const SMALLEST_NORMAL: u32 = 113 << 23;
    /// Magnitudes from this (2^16, infinity included) on overflow.
    pub const OVERFLOW: u32 = (127 + 16) << 23;
}

/// Rounds an f32 to half bits to nearest even (NaN → canonical): the classic bit tricks,
/// correct for every input.
pub fn f32_to_half_rne(b: &mut FunctionBuilder, fmt: HalfFormat, x: Value) -> Value {
    let bits = b.ins().bitcast(types::I32, MemFlagsData::new(), x);
    let is_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    let nan = b.ins().iconst(types::I32, CANONICAL_NAN as i64);
    if fmt.exp_bits == 8 {
        // bf16: add half an ulp minus one plus the result's low bit, then truncate.
        let odd = b.ins().ushr_imm_u(bits, 16);
        let odd = b.ins().band_imm_u(odd, 1);
        let r = b.ins().iadd_imm_s(bits, 0x7FFF);
        let r = b.ins().iadd(r, odd);
        let r = b.ins().ushr_imm_u(r, 16);
        let r = b.ins().select(is_nan, nan, r);
        return b.ins().ireduce(types::I16, r);
    }
    let sign = b.ins().band_imm_u(bits, 0x8000_0000u32 as i64);
    let sign = b.ins().ushr_imm_u(sign, 16);
    let a = b.ins().band_imm_u(bits, 0x7FFF_FFFF);
    // Subnormal results: an f32 add aligns the value so the FPU rounds at the f16 quantum.
    let magic_bits = f32_to_f16_rne::SUBNORMAL_MAGIC;
    let af = b.ins().bitcast(types::F32, MemFlagsData::new(), a);
    let magic = b.ins().f32const(f32::from_bits(magic_bits));
    let sum = b.ins().fadd(af, magic);
    let sum = b.ins().bitcast(types::I32, MemFlagsData::new(), sum);
    let subnormal = b.ins().iadd_imm_s(sum, -(magic_bits as i64));
    // Normal results: rebias, add half an ulp minus one plus the low bit, truncate.
    let odd = b.ins().ushr_imm_u(a, 13);
    let odd = b.ins().band_imm_u(odd, 1);
    let normal = b
        .ins()
        .iadd_imm_s(a, f32_to_f16_rne::REBIAS_HALF_ULP as i32 as i64);
    let normal = b.ins().iadd(normal, odd);
    let normal = b.ins().ushr_imm_u(normal, 13);
    let tiny = b.ins().icmp_imm_u(
        IntCC::UnsignedLessThan,
        a,
        f32_to_f16_rne::SMALLEST_NORMAL as i64,
    );
    let r = b.ins().select(tiny, subnormal, normal);
    // 2^16 and above (inf included) overflow; below that the normal path reaches 0x7C00 itself.
    let huge = b.ins().icmp_imm_u(
        IntCC::UnsignedGreaterThanOrEqual,
        a,
        f32_to_f16_rne::OVERFLOW as i64,
    );
    let inf = b.ins().iconst(types::I32, 0x7C00);
    let r = b.ins().select(huge, inf, r);
    let r = b.ins().bor(r, sign);
    let r = b.ins().select(is_nan, nan, r);
    b.ins().ireduce(types::I16, r)
}

/// f64 → f32 rounded to odd: the last bit is set when inexact, so a later rounding to a
/// format of at most 22 bits is correct (no double-rounding error).
pub fn f64_to_f32_odd(b: &mut FunctionBuilder, x: Value) -> Value {
    let r = b.ins().fdemote(types::F32, x);
    let back = b.ins().fpromote(types::F64, r);
    let inexact = b.ins().fcmp(FloatCC::OrderedNotEqual, back, x);
    let abs_back = b.ins().fabs(back);
    let abs_x = b.ins().fabs(x);
    let away = b.ins().fcmp(FloatCC::GreaterThan, abs_back, abs_x);
    let bits = b.ins().bitcast(types::I32, MemFlagsData::new(), r);
    let down = b.ins().iadd_imm_s(bits, -1);
    let bits = b.ins().select(away, down, bits);
    let odd = b.ins().bor_imm_u(bits, 1);
    let bits = b.ins().select(inexact, odd, bits);
    b.ins().bitcast(types::F32, MemFlagsData::new(), bits)
}

/// Rounds the f64 `x` to half bits, nearest even: round to odd in f32, then the f32 fast path.
pub fn f64_to_half_rne(b: &mut FunctionBuilder, fmt: HalfFormat, x: Value) -> Value {
    let odd = f64_to_f32_odd(b, x);
    f32_to_half_rne(b, fmt, odd)
}

/// Rounds `a*b + c` (f64 values with at most 26-bit significands, so `a*b` is exact) to odd:
/// the result's last bit is set when inexact. Rounding that to a format of ≤ 51 bits then
/// gives the correctly rounded fma (no double-rounding error).
pub fn fma_round_to_odd(b: &mut FunctionBuilder, x: Value, y: Value, c: Value) -> Value {
    let p = b.ins().fmul(x, y);
    // TwoSum: s + e == p + c exactly.
    let s = b.ins().fadd(p, c);
    let bb = b.ins().fsub(s, p);
    let s_minus_bb = b.ins().fsub(s, bb);
    let ea = b.ins().fsub(p, s_minus_bb);
    let eb = b.ins().fsub(c, bb);
    let e = b.ins().fadd(ea, eb);
    let s_bits = b.ins().bitcast(types::I64, MemFlagsData::new(), s);
    let e_bits = b.ins().bitcast(types::I64, MemFlagsData::new(), e);
    // Truncate toward zero: when the exact value is smaller in magnitude than s (e has the
    // opposite sign), step s's magnitude down one unit; then set the sticky last bit.
    let opposite = b.ins().bxor(s_bits, e_bits);
    let opposite = b.ins().icmp_imm_s(IntCC::SignedLessThan, opposite, 0);
    let down = b.ins().iadd_imm_s(s_bits, -1);
    let trunc = b.ins().select(opposite, down, s_bits);
    let odd = b.ins().bor_imm_u(trunc, 1);
    let zero = b.ins().f64const(0.0);
    let exact = b.ins().fcmp(FloatCC::Equal, e, zero);
    // e is NaN when s is infinite or NaN: keep s then.
    let e_nan = b.ins().fcmp(FloatCC::Unordered, e, e);
    let keep = b.ins().bor(exact, e_nan);
    let bits = b.ins().select(keep, s_bits, odd);
    b.ins().bitcast(types::F64, MemFlagsData::new(), bits)
}

/// `x` where `cond` (the result of a compare of values of `x`'s type) holds, else `y`: a
/// select for scalars, a bit select of the lanes' masks for vectors (f32x4 here).
pub(super) fn pick(b: &mut FunctionBuilder, cond: Value, x: Value, y: Value) -> Value {
    let ty = b.func.dfg.value_type(x);
    if ty.is_vector() {
        let lanes = MemFlagsData::new().with_endianness(Endianness::Little);
        let mask = b.ins().bitcast(ty, lanes, cond);
        b.ins().bitselect(mask, x, y)
    } else {
        b.ins().select(cond, x, y)
    }
}

/// The float `v` of type `ty` (f32, f64, or in every lane of an f32x4).
pub(super) fn float_const(b: &mut FunctionBuilder, ty: types::Type, v: f64) -> Value {
    match ty {
        types::F64 => b.ins().f64const(v),
        types::F32 => b.ins().f32const(v as f32),
        _ => {
            let lane = b.ins().f32const(v as f32);
            b.ins().splat(ty, lane)
        }
    }
}

/// Replaces any NaN f32 (or any NaN lane of an f32x4) by the canonical NaN.
pub fn canonicalize_f32(b: &mut FunctionBuilder, v: Value) -> Value {
    let is_nan = b.ins().fcmp(FloatCC::Unordered, v, v);
    let nan = b.ins().f32const(f32::from_bits(CANONICAL_NAN_F32));
    let ty = b.func.dfg.value_type(v);
    let nan = if ty.is_vector() {
        b.ins().splat(ty, nan)
    } else {
        nan
    };
    pick(b, is_nan, nan, v)
}

/// Flushes an f32 or f64 subnormal (or each subnormal lane of an f32x4) to zero of the same
/// sign.
pub fn flush_subnormal(b: &mut FunctionBuilder, v: Value) -> Value {
    let ty = b.func.dfg.value_type(v);
    if ty.is_vector() {
        let magnitude = b.ins().fabs(v);
        let smallest = float_const(b, ty, f32::MIN_POSITIVE as f64);
        let tiny = b.ins().fcmp(FloatCC::LessThan, magnitude, smallest);
        // (The sign bits: x86-64's Cranelift has no vector `fcopysign`.)
        let lanes = MemFlagsData::new().with_endianness(Endianness::Little);
        let bits = b.ins().bitcast(types::I32X4, lanes, v);
        let sign = b.ins().iconst(types::I32, 0x8000_0000u32 as i32 as i64);
        let sign = b.ins().splat(types::I32X4, sign);
        let signed_zero = b.ins().band(bits, sign);
        let signed_zero = b.ins().bitcast(ty, lanes, signed_zero);
        return pick(b, tiny, signed_zero, v);
    }
    let (it, exp_mask, sign_mask) = if ty == types::F32 {
        (types::I32, 0x7F80_0000i64, 0x8000_0000u32 as i32 as i64)
    } else {
        (types::I64, F64_INF, i64::MIN)
    };
    let bits = b.ins().bitcast(it, MemFlagsData::new(), v);
    let exp = b.ins().band_imm_u(bits, exp_mask);
    let tiny = b.ins().icmp_imm_u(IntCC::Equal, exp, 0);
    let signed_zero = b.ins().band_imm_u(bits, sign_mask);
    let bits = b.ins().select(tiny, signed_zero, bits);
    b.ins().bitcast(ty, MemFlagsData::new(), bits)
}

/// `.sat`: clamps to [+0, 1]; NaN gives +0 (f32, f64, or the lanes of an f32x4).
pub fn saturate(b: &mut FunctionBuilder, v: Value) -> Value {
    let ty = b.func.dfg.value_type(v);
    let (zero, one) = (float_const(b, ty, 0.0), float_const(b, ty, 1.0));
    let positive = b.ins().fcmp(FloatCC::GreaterThan, v, zero);
    let v = pick(b, positive, v, zero);
    let big = b.ins().fcmp(FloatCC::GreaterThan, v, one);
    pick(b, big, one, v)
}

/// PTX min/max (f32, f64, or the lanes of an f32x4): a NaN operand yields the other; −0 <
/// +0. (Both NaN: a NaN, made canonical by the caller.)
pub fn min_max(b: &mut FunctionBuilder, is_max: bool, x: Value, y: Value) -> Value {
    let ty = b.func.dfg.value_type(x);
    let (it, flags) = if ty.is_vector() {
        (
            types::I32X4,
            MemFlagsData::new().with_endianness(Endianness::Little),
        )
    } else {
        (
            types::Type::int(ty.bits() as u16).expect("f32 or f64"),
            MemFlagsData::new(),
        )
    };
    let cc = if is_max {
        FloatCC::GreaterThan
    } else {
        FloatCC::LessThan
    };
    let x_wins = b.ins().fcmp(cc, x, y);
    let picked = pick(b, x_wins, x, y);
    // Equal values: only ±0 differ; max takes the AND of sign bits (+0 wins), min the OR.
    let xb = b.ins().bitcast(it, flags, x);
    let yb = b.ins().bitcast(it, flags, y);
    let merged = if is_max {
        b.ins().band(xb, yb)
    } else {
        b.ins().bor(xb, yb)
    };
    let merged = b.ins().bitcast(ty, flags, merged);
    let equal = b.ins().fcmp(FloatCC::Equal, x, y);
    let picked = pick(b, equal, merged, picked);
    let x_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    let y_nan = b.ins().fcmp(FloatCC::Unordered, y, y);
    let picked = pick(b, y_nan, x, picked);
    pick(b, x_nan, y, picked)
}

// ---- bit-level rules on half values (i16), mirroring `semantics::half_ops` ----------------

/// Whether half bits `h` are a NaN (`i8` 0/1).
pub fn half_is_nan(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let mag = b.ins().band_imm_u(h, 0x7FFF);
    b.ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, mag, fmt.inf_bits() as i64)
}

/// `.ftz`: a subnormal becomes zero of the same sign.
pub fn half_flush(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let mag = b.ins().band_imm_u(h, 0x7FFF);
    let tiny = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThan, mag, 1i64 << fmt.mant_bits);
    let signed_zero = b.ins().band_imm_u(h, 0x8000);
    b.ins().select(tiny, signed_zero, h)
}

/// `.ftz` on `r`, half bits rounded to nearest from the f32 `v`: zero of its sign where `v`
/// is tiny after rounding (`HalfFormat::flush_tiny`; `v` must lie on the same side of the
/// bound as the exact value, which an exact value or one rounded to odd does).
pub fn half_flush_tiny(b: &mut FunctionBuilder, fmt: HalfFormat, v: Value, r: Value) -> Value {
    let magnitude = b.ins().fabs(v);
    let bound = b.ins().f32const(fmt.tiny_bound() as f32);
    let tiny = b.ins().fcmp(FloatCC::LessThan, magnitude, bound);
    let signed_zero = b.ins().band_imm_u(r, 0x8000);
    b.ins().select(tiny, signed_zero, r)
}

/// `.sat` on half bits: clamp to [+0, 1]; NaN and −0 give +0.
pub fn half_saturate(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let one = b.ins().iconst(types::I16, fmt.one() as i64);
    let zero = b.ins().iconst(types::I16, 0);
    let big = b.ins().icmp(IntCC::UnsignedGreaterThan, h, one);
    let r = b.ins().select(big, one, h);
    // Negative values (sign set, NaNs included) and positive NaNs become +0.
    let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, h, 0);
    let nan = half_is_nan(b, fmt, h);
    let to_zero = b.ins().bor(negative, nan);
    b.ins().select(to_zero, zero, r)
}

/// `.relu` on half bits: negatives (and −0) give +0; a NaN gives the canonical NaN.
pub fn half_relu(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let zero = b.ins().iconst(types::I16, 0);
    let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, h, 0);
    let r = b.ins().select(negative, zero, h);
    let nan = half_is_nan(b, fmt, h);
    let canonical = b.ins().iconst(types::I16, CANONICAL_NAN as i64);
    b.ins().select(nan, canonical, r)
}

/// `.satfinite`: an infinite result becomes the largest finite value of the same sign.
pub fn half_satfinite(b: &mut FunctionBuilder, fmt: HalfFormat, h: Value) -> Value {
    let mag = b.ins().band_imm_u(h, 0x7FFF);
    let inf = b.ins().icmp_imm_u(IntCC::Equal, mag, fmt.inf_bits() as i64);
    let max = b.ins().iadd_imm_s(h, -1);
    b.ins().select(inf, max, h)
}

/// The canonical NaN when `cond` (i8) holds, else `h`.
pub fn half_nan_if(b: &mut FunctionBuilder, cond: Value, h: Value) -> Value {
    let canonical = b.ins().iconst(types::I16, CANONICAL_NAN as i64);
    b.ins().select(cond, canonical, h)
}
