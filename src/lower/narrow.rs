//! `cvt` to and from the formats no register holds: fp8/fp6/fp4 pairs, ue8m0 pairs, tf32,
//! and `cvt.pack.sat`. Bit-level twins of `semantics::minifloat` (which picks among values);
//! `tests/lowp_conversions.rs` compares the two over every 16-bit input.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::half::format_of;
use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::checked::{Arg, NarrowCvt, Rounding};
use crate::semantics::half::BF16;
use crate::semantics::minifloat::{Mini, tf32, ue8m0};
use crate::types::PtxType;

const F32_INF: i64 = 0x7F80_0000;

impl Translator<'_, '_> {
    pub fn cvt_narrow(&mut self, form: NarrowCvt, a: &[Arg]) -> LResult {
        match form {
            NarrowCvt::ToMini {
                fmt,
                src,
                rnd,
                relu,
            } => {
                // Upper slot from `a` (or the upper half), lower from `b` (or the lower half).
                let values = self.pair_as_f64(src, a)?;
                let hi = self.f64_to_mini(fmt, values[0], rnd, relu);
                let lo = self.f64_to_mini(fmt, values[1], rnd, relu);
                let r = self.join(hi, lo, fmt.slot_bits());
                let ty = if fmt == Mini::E2m1 {
                    PtxType::B8
                } else {
                    PtxType::B16
                };
                let r = self.coerce(r, ty.ir_type(), false);
                self.write(&a[0], r, ty)
            }
            NarrowCvt::FromMini { fmt, dst, relu } => {
                let src = if fmt == Mini::E2m1 {
                    PtxType::B8
                } else {
                    PtxType::B16
                };
                let x = self.read(&a[1], src)?;
                let x = self.coerce(x, types::I32, false);
                let (half, _) = format_of(dst);
                let mut lanes = Vec::new();
                for slot in 0..2 {
                    let bits = self.b.ins().ushr_imm_u(x, (slot * fmt.slot_bits()) as i64);
                    let v = self.mini_to_f64(fmt, bits);
                    let h = softfloat::f64_to_half(self.b, half, v, Rounding::Rn);
                    lanes.push(if relu {
                        softfloat::half_relu(self.b, half, h)
                    } else {
                        h
                    });
                }
                let r = self.pack(&lanes);
                self.write(&a[0], r, dst)
            }
            NarrowCvt::ToUe8m0 {
                src,
                rnd,
                satfinite,
            } => {
                let words = self.pair_as_f32_bits(src, a)?;
                let hi = self.f32_to_ue8m0(words[0], rnd, satfinite);
                let lo = self.f32_to_ue8m0(words[1], rnd, satfinite);
                let r = self.join(hi, lo, 8);
                let r = self.b.ins().ireduce(types::I16, r);
                self.write(&a[0], r, PtxType::B16)
            }
            NarrowCvt::FromUe8m0 => {
                let x = self.read(&a[1], PtxType::B16)?;
                let x = self.b.ins().uextend(types::I32, x);
                let lo = self.b.ins().band_imm_u(x, 0xFF);
                let hi = self.b.ins().ushr_imm_u(x, 8);
                let lanes = [self.ue8m0_to_bf16(lo), self.ue8m0_to_bf16(hi)];
                let r = self.pack(&lanes);
                self.write(&a[0], r, PtxType::BF16x2)
            }
            NarrowCvt::ToTf32 {
                rnd,
                satfinite,
                relu,
            } => {
                let x = self.read(&a[1], PtxType::B32)?;
                let r = self.f32_to_tf32(x, rnd, satfinite, relu);
                self.write(&a[0], r, PtxType::B32)
            }
            // Rare (sm_100a): the reference rounds, in a helper.
            NarrowCvt::Stochastic {
                dst,
                relu,
                satfinite,
            } => {
                let mut args = Vec::new();
                for arg in &a[1..4] {
                    args.push(self.read(arg, PtxType::B32)?);
                }
                let flags =
                    (dst == PtxType::BF16x2) as i64 | (relu as i64) << 1 | (satfinite as i64) << 2;
                args.push(self.b.ins().iconst(types::I32, flags));
                let f = self.helper_ref("ptxjit_cvt_rs");
                let call = self.b.ins().call(f, &args);
                let r = self.b.inst_results(call)[0];
                self.write(&a[0], r, dst)
            }
            NarrowCvt::PackSat { bits, signed } => {
                let (lo, hi) = if signed {
                    (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
                } else {
                    (0, (1i64 << bits) - 1)
                };
                let mut packed = if bits == 16 {
                    self.b.ins().iconst(types::I32, 0)
                } else {
                    self.read(&a[3], PtxType::B32)?
                };
                for arg in [&a[1], &a[2]] {
                    let x = self.read(arg, PtxType::S32)?;
                    let lo = self.b.ins().iconst(types::I32, lo);
                    let hi = self.b.ins().iconst(types::I32, hi);
                    let x = self.b.ins().smax(x, lo);
                    let x = self.b.ins().smin(x, hi);
                    let x = self.b.ins().band_imm_u(x, (1i64 << bits) - 1);
                    packed = self.b.ins().ishl_imm_u(packed, bits as i64);
                    packed = self.b.ins().bor(packed, x);
                }
                self.write(&a[0], packed, PtxType::B32)
            }
        }
    }

    /// The two sources of a pair conversion as exact f64s, upper slot first: `d, a, b` with
    /// f32 sources, or `d, a` with a packed f16x2/bf16x2 (upper half first).
    fn pair_as_f64(&mut self, src: PtxType, a: &[Arg]) -> LResult<[Value; 2]> {
        if src == PtxType::F32 {
            let x = self.read(&a[1], PtxType::F32)?;
            let y = self.read(&a[2], PtxType::F32)?;
            return Ok([x, y].map(|v| self.b.ins().fpromote(types::F64, v)));
        }
        let (fmt, _) = format_of(src);
        let x = self.read(&a[1], src)?;
        Ok([1, 0].map(|i| {
            let h = self.lane(x, i);
            softfloat::half_to_f64(self.b, fmt, h)
        }))
    }

    /// As [`pair_as_f64`](Self::pair_as_f64), as f32 bits (a bf16 widens by a shift).
    fn pair_as_f32_bits(&mut self, src: PtxType, a: &[Arg]) -> LResult<[Value; 2]> {
        if src == PtxType::F32 {
            return Ok([
                self.read(&a[1], PtxType::B32)?,
                self.read(&a[2], PtxType::B32)?,
            ]);
        }
        let x = self.read(&a[1], PtxType::B32)?;
        let hi = self.b.ins().band_imm_u(x, 0xFFFF_0000u32 as i64);
        let lo = self.b.ins().ishl_imm_u(x, 16);
        Ok([hi, lo])
    }

    /// `hi` above `lo`, `slot` bits each, in an i32 (both hold only their slot's bits).
    fn join(&mut self, hi: Value, lo: Value, slot: u32) -> Value {
        let hi = self.b.ins().ishl_imm_u(hi, slot as i64);
        self.b.ins().bor(hi, lo)
    }

    /// Rounds an f64 to `fmt` with `.satfinite` (and `.relu`), as i32 bits: the IEEE rounding
    /// of the half formats (`softfloat::round_significand`) clamped to the largest finite value.
    fn f64_to_mini(&mut self, fmt: Mini, x: Value, mode: Rounding, relu: bool) -> Value {
        let r = softfloat::round_significand(self.b, fmt.mant_bits(), 1 - fmt.bias(), x, mode);
        let b = &mut *self.b;
        // bits = ((max(e, emin) + bias - 1) << mb) + kept; a carry moves into the exponent.
        let exp = b.ins().smax(r.e, r.emin);
        let exp = b.ins().iadd_imm_s(exp, fmt.bias() as i64 - 1);
        let exp = b.ins().ishl_imm_u(exp, fmt.mant_bits() as i64);
        let bits = b.ins().iadd(exp, r.kept);
        let max = b.ins().iconst(types::I64, fmt.max_finite() as i64);
        let bits = b.ins().smin(bits, max);
        let is_zero = b.ins().icmp_imm_u(IntCC::Equal, r.a, 0);
        let zero = b.ins().iconst(types::I64, 0);
        let bits = b.ins().select(is_zero, zero, bits);
        let sign = b.ins().iconst(types::I64, fmt.sign_bit() as i64);
        let signed = b.ins().bor(bits, sign);
        let on_negative = if relu { zero } else { signed };
        let bits = b.ins().select(r.negative, on_negative, bits);
        let is_nan = b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThan, r.a, 0x7FF0_0000_0000_0000);
        let nan = fmt.canonical_nan().unwrap_or(fmt.max_finite());
        let nan = b.ins().iconst(types::I64, nan as i64);
        let bits = b.ins().select(is_nan, nan, bits);
        b.ins().ireduce(types::I32, bits)
    }

    /// The exact value of the narrow value in the low bits of `bits` (an i32; higher bits
    /// ignored), as an f64: the fields placed in f64's, scaled by 2^(1023 - bias).
    fn mini_to_f64(&mut self, fmt: Mini, bits: Value) -> Value {
        let mb = fmt.mant_bits() as i64;
        let b = &mut *self.b;
        let x = b.ins().uextend(types::I64, bits);
        let sign = b.ins().band_imm_u(x, fmt.sign_bit() as i64);
        let sign = b.ins().ishl_imm_u(sign, 64 - fmt.width() as i64);
        let mag = b.ins().band_imm_u(x, fmt.sign_bit() as i64 - 1);
        let placed = b.ins().ishl_imm_u(mag, 52 - mb);
        let placed = b.ins().bitcast(types::F64, MemFlagsData::new(), placed);
        let scale = b.ins().f64const(2f64.powi(1023 - fmt.bias()));
        let finite = b.ins().fmul(placed, scale);
        let finite = b.ins().bitcast(types::I64, MemFlagsData::new(), finite);
        let value = match fmt {
            Mini::E4m3 => {
                let nan = b.ins().iconst(types::I64, 0x7FF8_0000_0000_0000);
                let is_nan = b.ins().icmp_imm_u(IntCC::Equal, mag, 0x7F);
                b.ins().select(is_nan, nan, finite)
            }
            Mini::E5m2 => {
                let nan = b.ins().iconst(types::I64, 0x7FF8_0000_0000_0000);
                let inf = b.ins().iconst(types::I64, 0x7FF0_0000_0000_0000);
                let is_inf = b.ins().icmp_imm_u(IntCC::Equal, mag, 0x7C);
                let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, mag, 0x7C);
                let v = b.ins().select(is_inf, inf, finite);
                b.ins().select(is_nan, nan, v)
            }
            _ => finite,
        };
        let value = b.ins().bor(value, sign);
        b.ins().bitcast(types::F64, MemFlagsData::new(), value)
    }

    /// f32 bits (i32) to ue8m0 (i32): the exponent field, plus one for `.rp` when bits are
    /// left over above 2^-127; NaN (and what overflows) the NaN code unless `.satfinite`.
    fn f32_to_ue8m0(&mut self, x: Value, mode: Rounding, satfinite: bool) -> Value {
        let b = &mut *self.b;
        let a = b.ins().band_imm_u(x, 0x7FFF_FFFF);
        let mut code = b.ins().ushr_imm_u(a, 23);
        if mode == Rounding::Rp {
            let frac = b.ins().band_imm_u(a, 0x7F_FFFF);
            let inexact = b.ins().icmp_imm_u(IntCC::NotEqual, frac, 0);
            let above_min = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x40_0000);
            let finite = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, a, F32_INF);
            let up = b.ins().band(inexact, above_min);
            let up = b.ins().band(up, finite);
            let up = b.ins().uextend(types::I32, up);
            code = b.ins().iadd(code, up);
        }
        if satfinite {
            let not_nan = b
                .ins()
                .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, a, F32_INF);
            let nan_code = b.ins().icmp_imm_u(IntCC::Equal, code, ue8m0::NAN as i64);
            let clamp = b.ins().band(not_nan, nan_code);
            let max = b.ins().iconst(types::I32, ue8m0::NAN as i64 - 1);
            code = b.ins().select(clamp, max, code);
        }
        let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, F32_INF);
        let nan = b.ins().iconst(types::I32, ue8m0::NAN as i64);
        b.ins().select(is_nan, nan, code)
    }

    /// A ue8m0 code (i32) as bf16 bits (i16): 2^(c - 127), a subnormal for c = 0.
    fn ue8m0_to_bf16(&mut self, c: Value) -> Value {
        let b = &mut *self.b;
        let normal = b.ins().ishl_imm_u(c, 7);
        let is_zero = b.ins().icmp_imm_u(IntCC::Equal, c, 0);
        let smallest = b.ins().iconst(types::I32, 0x40);
        let v = b.ins().select(is_zero, smallest, normal);
        let is_nan = b.ins().icmp_imm_u(IntCC::Equal, c, ue8m0::NAN as i64);
        let nan = b
            .ins()
            .iconst(types::I32, BF16.round(f64::NAN, Rounding::Rn) as i64);
        let v = b.ins().select(is_nan, nan, v);
        b.ins().ireduce(types::I16, v)
    }

    /// f32 bits (i32) to tf32 bits: round away the low 13 bits of the magnitude (a carry
    /// moves into the exponent), then overflow, NaN and `.relu`.
    fn f32_to_tf32(&mut self, x: Value, mode: Rounding, satfinite: bool, relu: bool) -> Value {
        let b = &mut *self.b;
        let sign = b.ins().band_imm_u(x, 0x8000_0000u32 as i64);
        let a = b.ins().band_imm_u(x, 0x7FFF_FFFF);
        let rounded = match mode {
            Rounding::Rz => a,
            Rounding::Rna => b.ins().iadd_imm_s(a, 0x1000),
            _ => {
                let odd = b.ins().ushr_imm_u(a, 13);
                let odd = b.ins().band_imm_u(odd, 1);
                let biased = b.ins().iadd_imm_s(a, 0xFFF);
                b.ins().iadd(biased, odd)
            }
        };
        let r = b.ins().band_imm_u(rounded, !0x1FFFi64 & 0xFFFF_FFFF);
        // A finite input that rounds past the largest finite value overflows.
        let overflow = b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThan, r, tf32::MAX as i64);
        let big = b.ins().iconst(
            types::I32,
            if satfinite { tf32::MAX } else { 0x7F80_0000 } as i64,
        );
        let r = b.ins().select(overflow, big, r);
        let r = b.ins().bor(r, sign);
        let r = if relu {
            let negative = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
            let zero = b.ins().iconst(types::I32, 0);
            b.ins().select(negative, zero, r)
        } else {
            r
        };
        let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, F32_INF);
        let nan = b.ins().iconst(types::I32, tf32::NAN as i64);
        b.ins().select(is_nan, nan, r)
    }
}
