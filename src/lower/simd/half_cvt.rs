//! Vector forms of the conversions between halves and f32 that mixed-precision code runs
//! around its arithmetic: `cvt.f32.f16`/`cvt.f32.bf16` (`.ftz`), and `cvt.frnd.f16.f32`/
//! `cvt.frnd.bf16.f32` and their pair forms `cvt.frnd.f16x2.f32 d, a, b` (`.rn .rz .rm
//! .rp`, `.ftz`, `.relu`, `.satfinite`), with the one-thread lowering's bits (`softfloat::
//! half_to_f32_cvt`, `softfloat::f32_to_half_rne`, `softfloat::f64_to_half`): a half
//! widens exactly, an f16 NaN to the canonical NaN, a bf16 NaN keeping its bits; an f32
//! rounds as asked, a NaN to the canonical NaN. The halves are integer lanes; the only float operations are exact
//! ones, the f32 add that rounds a subnormal result at the half's quantum to nearest, and
//! the `ceil` that rounds it up.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::Wide;
use super::bits::{lane_order, unpack_mask};
use crate::frontend::checked::{Arg, CvtMods, Rounding};
use crate::lower::half::format_of;
use crate::lower::softfloat::f32_to_f16_rne;
use crate::lower::{LResult, Translator};
use crate::semantics::float::CANONICAL_NAN_F32;
use crate::semantics::half::{CANONICAL_NAN, HalfFormat};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `cvt` between a half (scalar f16 or bf16) and f32, and from two f32s to a pair, for
    /// the whole group; `false` (nothing emitted) for other conversions and modifiers.
    pub(super) fn v_cvt_half(
        &mut self,
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
        a: &[Arg],
    ) -> LResult<bool> {
        let scalar_half = |t: PtxType| matches!(t, PtxType::F16 | PtxType::BF16);
        let pair = matches!(dst, PtxType::F16x2 | PtxType::BF16x2);
        let widening = scalar_half(src)
            && dst == PtxType::F32
            && mods
                == CvtMods {
                    ftz: mods.ftz,
                    ..CvtMods::default()
                };
        let narrowing = src == PtxType::F32
            && (scalar_half(dst) || pair)
            && !mods.sat
            && !mods.integral
            && mods.rnd != Some(Rounding::Rna);
        let sources = if pair { 2 } else { 1 };
        if !(widening || narrowing)
            || a.len() != 1 + sources
            || !self.v_dst_ok(&a[0], dst)
            || !(1..=sources).all(|i| self.v_src_ok(&a[i], src))
        {
            return Ok(false);
        }
        if widening {
            let (fmt, _) = format_of(src);
            let x = self.v_read(&a[1], src)?;
            let v = self.v_widen_halves(fmt, mods.ftz, x);
            self.v_write(&a[0], v);
            return Ok(true);
        }
        let (fmt, _) = format_of(dst);
        // Halves in the low 16 bits of 32-bit lanes, one vector of them a source vector.
        let mut narrowed = Vec::new();
        for arg in &a[1..=sources] {
            let mut halves = Wide::new();
            for f in self.v_read(arg, src)? {
                let mut bits = self.b.ins().bitcast(types::I32X4, lane_order(), f);
                if mods.ftz {
                    bits = self.v_flush_f32_bits(bits);
                }
                let h = match mods.rnd.unwrap_or(Rounding::Rn) {
                    Rounding::Rn => self.v_f32_bits_to_half(fmt, bits),
                    mode => self.v_f32_bits_to_half_directed(fmt, bits, mode),
                };
                halves.push(self.v_half_result_mods(fmt, mods, h));
            }
            narrowed.push(halves);
        }
        let v: Wide = if pair {
            // `cvt.f16x2.f32 d, a, b`: a in the high half, b in the low.
            narrowed[0]
                .iter()
                .zip(&narrowed[1])
                .map(|(&high, &low)| {
                    let high = self.b.ins().ishl_imm_u(high, 16);
                    self.b.ins().bor(high, low)
                })
                .collect()
        } else {
            narrowed[0]
                .chunks(2)
                .map(|w| self.shuffle_bytes(w[0], w[1], &unpack_mask(4, 0), types::I16X8))
                .collect()
        };
        self.v_write(&a[0], v);
        Ok(true)
    }

    /// Halves `x` (eight a vector) of format `fmt` as f32s (four a vector), exactly, NaNs as
    /// `cvt` gives them; subnormal results flushed with `ftz`.
    pub(super) fn v_widen_halves(&mut self, fmt: HalfFormat, ftz: bool, x: Wide) -> Wide {
        let mut v = Wide::new();
        for h in x {
            for h in [self.b.ins().uwiden_low(h), self.b.ins().uwiden_high(h)] {
                let mut bits = self.v_half_to_f32_bits(fmt, h);
                if ftz {
                    bits = self.v_flush_f32_bits(bits);
                }
                v.push(self.b.ins().bitcast(types::F32X4, lane_order(), bits));
            }
        }
        v
    }

    /// f32 bits of halves `h` (in the low 16 bits of 32-bit lanes): exact; an f16 NaN the
    /// canonical NaN, a bf16 NaN its own bits (`HalfFormat::to_f32_bits`).
    fn v_half_to_f32_bits(&mut self, fmt: HalfFormat, h: Value) -> Value {
        let sixteen = self.b.ins().iconst(types::I32, 16);
        let thirteen = self.b.ins().iconst(types::I32, 13);
        if fmt.exp_bits == 8 {
            // bf16 is the top half of an f32.
            return self.b.ins().ishl(h, sixteen);
        }
        let (bits, magnitude) = {
            let sign_mask = self.v_splat(types::I32X4, 0x8000);
            let sign = self.b.ins().band(h, sign_mask);
            let sign = self.b.ins().ishl(sign, sixteen);
            let low = self.v_splat(types::I32X4, 0x7FFF);
            let mag = self.b.ins().band(h, low);
            let placed = self.b.ins().ishl(mag, thirteen);
            // Normal: rebias the exponent; infinity and NaN: all exponent bits.
            let rebias = self.v_splat(types::I32X4, (127 - 15) << 23);
            let normal = self.b.ins().iadd(placed, rebias);
            let all_ones = self.v_splat(types::I32X4, 0x7F80_0000);
            let special = self.b.ins().bor(placed, all_ones);
            // Subnormal: its significand times 2^-24, exactly.
            let m = self.b.ins().fcvt_from_sint(types::F32X4, mag);
            let scale = self.b.ins().f32const(2f32.powi(-24));
            let scale = self.b.ins().splat(types::F32X4, scale);
            let sub = self.b.ins().fmul(m, scale);
            let sub = self.b.ins().bitcast(types::I32X4, lane_order(), sub);
            let smallest_normal = self.v_splat(types::I32X4, 0x0400);
            let tiny = self
                .b
                .ins()
                .icmp(IntCC::UnsignedLessThan, mag, smallest_normal);
            let inf = self.v_splat(types::I32X4, 0x7C00);
            let big = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, mag, inf);
            let r = self.b.ins().bitselect(tiny, sub, normal);
            let r = self.b.ins().bitselect(big, special, r);
            let bits = self.b.ins().bor(r, sign);
            let low = self.v_splat(types::I32X4, 0x7FFF_FFFF);
            (bits, self.b.ins().band(bits, low))
        };
        let inf = self.v_splat(types::I32X4, 0x7F80_0000);
        let nan = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThan, magnitude, inf);
        let canonical = self.v_splat(types::I32X4, CANONICAL_NAN_F32 as i64);
        self.b.ins().bitselect(nan, canonical, bits)
    }

    /// `.ftz` of f32 bits.
    pub(super) fn v_flush_f32_bits(&mut self, bits: Value) -> Value {
        self.v_flush(bits, 0x0080_0000)
    }

    /// Halves (in 32-bit lanes) of f32 `bits`, rounded to nearest even, a NaN canonical:
    /// `softfloat::f32_to_half_rne`'s steps on vectors.
    fn v_f32_bits_to_half(&mut self, fmt: HalfFormat, bits: Value) -> Value {
        let x = self.b.ins().bitcast(types::F32X4, lane_order(), bits);
        let is_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let is_nan = self.b.ins().bitcast(types::I32X4, lane_order(), is_nan);
        let nan = self.v_splat(types::I32X4, i64::from(CANONICAL_NAN));
        let one = self.v_splat(types::I32X4, 1);
        let shift = |t: &mut Self, n: i64| t.b.ins().iconst(types::I32, n);
        if fmt.exp_bits == 8 {
            // bf16: add half an ulp minus one plus the result's low bit, then truncate.
            let s16 = shift(self, 16);
            let odd = self.b.ins().ushr(bits, s16);
            let odd = self.b.ins().band(odd, one);
            let half_ulp = self.v_splat(types::I32X4, 0x7FFF);
            let r = self.b.ins().iadd(bits, half_ulp);
            let r = self.b.ins().iadd(r, odd);
            let r = self.b.ins().ushr(r, s16);
            return self.b.ins().bitselect(is_nan, nan, r);
        }
        let sign_mask = self.v_splat(types::I32X4, 0x8000_0000);
        let sign = self.b.ins().band(bits, sign_mask);
        let s16 = shift(self, 16);
        let sign = self.b.ins().ushr(sign, s16);
        let low = self.v_splat(types::I32X4, 0x7FFF_FFFF);
        let a = self.b.ins().band(bits, low);
        // Subnormal results: an f32 add aligns the value so the FPU rounds at the quantum.
        let magic_bits = f32_to_f16_rne::SUBNORMAL_MAGIC;
        let af = self.b.ins().bitcast(types::F32X4, lane_order(), a);
        let magic = self.b.ins().f32const(f32::from_bits(magic_bits));
        let magic = self.b.ins().splat(types::F32X4, magic);
        let sum = self.b.ins().fadd(af, magic);
        let sum = self.b.ins().bitcast(types::I32X4, lane_order(), sum);
        let magic = self.v_splat(types::I32X4, i64::from(magic_bits));
        let subnormal = self.b.ins().isub(sum, magic);
        // Normal results: rebias, add half an ulp minus one plus the low bit, truncate.
        let s13 = shift(self, 13);
        let odd = self.b.ins().ushr(a, s13);
        let odd = self.b.ins().band(odd, one);
        let rebias = self.v_splat(types::I32X4, i64::from(f32_to_f16_rne::REBIAS_HALF_ULP));
        let normal = self.b.ins().iadd(a, rebias);
        let normal = self.b.ins().iadd(normal, odd);
        let normal = self.b.ins().ushr(normal, s13);
        let smallest = self.v_splat(types::I32X4, i64::from(f32_to_f16_rne::SMALLEST_NORMAL));
        let tiny = self.b.ins().icmp(IntCC::UnsignedLessThan, a, smallest);
        let r = self.b.ins().bitselect(tiny, subnormal, normal);
        // 2^16 and above (inf included) overflow; below that the normal path reaches 0x7C00.
        let huge_from = self.v_splat(types::I32X4, i64::from(f32_to_f16_rne::OVERFLOW));
        let huge = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, a, huge_from);
        let inf = self.v_splat(types::I32X4, 0x7C00);
        let r = self.b.ins().bitselect(huge, inf, r);
        let r = self.b.ins().bor(r, sign);
        self.b.ins().bitselect(is_nan, nan, r)
    }

    /// Halves (in 32-bit lanes) of f32 `bits`, rounded toward zero, down or up (`mode`), a
    /// NaN canonical: the magnitude truncated, or rounded up where the direction leads away
    /// from zero; a finite value never rounds toward zero into infinity.
    fn v_f32_bits_to_half_directed(
        &mut self,
        fmt: HalfFormat,
        bits: Value,
        mode: Rounding,
    ) -> Value {
        let negative = self.b.ins().sshr_imm_u(bits, 31);
        let away = match mode {
            Rounding::Rp => self.b.ins().bnot(negative),
            Rounding::Rm => negative,
            _ => self.v_splat(types::I32X4, 0),
        };
        let low = self.v_splat(types::I32X4, 0x7FFF_FFFF);
        let a = self.b.ins().band(bits, low);
        let (down, up) = if fmt.exp_bits == 8 {
            // bf16 is the top half of an f32.
            let carry = self.v_splat(types::I32X4, 0xFFFF);
            let up = self.b.ins().iadd(a, carry);
            (
                self.b.ins().ushr_imm_u(a, 16),
                self.b.ins().ushr_imm_u(up, 16),
            )
        } else {
            // Normal results: rebias, then truncate (or add an ulp less one first).
            let rebias = self.v_splat(types::I32X4, (127 - 15) << 23);
            let normal = self.b.ins().isub(a, rebias);
            let ulp_less_one = self.v_splat(types::I32X4, 0x1FFF);
            let normal_up = self.b.ins().iadd(normal, ulp_less_one);
            let normal = self.b.ins().ushr_imm_u(normal, 13);
            let normal_up = self.b.ins().ushr_imm_u(normal_up, 13);
            // Subnormal results: the value in quanta of 2^-24, exactly, truncated or raised.
            let af = self.b.ins().bitcast(types::F32X4, lane_order(), a);
            let scale = self.b.ins().f32const(2f32.powi(24));
            let scale = self.b.ins().splat(types::F32X4, scale);
            let quanta = self.b.ins().fmul(af, scale);
            let quanta_up = self.b.ins().ceil(quanta);
            let sub = self.b.ins().fcvt_to_sint_sat(types::I32X4, quanta);
            let sub_up = self.b.ins().fcvt_to_sint_sat(types::I32X4, quanta_up);
            let smallest = self.v_splat(types::I32X4, i64::from(f32_to_f16_rne::SMALLEST_NORMAL));
            let tiny = self.b.ins().icmp(IntCC::UnsignedLessThan, a, smallest);
            // Finite values past the largest half: the largest, or infinity rounding away.
            let largest = self.v_splat(types::I32X4, 0x7BFF);
            let inf = self.v_splat(types::I32X4, 0x7C00);
            let normal = self.b.ins().umin(normal, largest);
            let normal_up = self.b.ins().umin(normal_up, inf);
            (
                self.b.ins().bitselect(tiny, sub, normal),
                self.b.ins().bitselect(tiny, sub_up, normal_up),
            )
        };
        let r = self.b.ins().bitselect(away, up, down);
        let r = if fmt.exp_bits == 8 {
            r
        } else {
            let f32_inf = self.v_splat(types::I32X4, 0x7F80_0000);
            let is_inf = self.b.ins().icmp(IntCC::Equal, a, f32_inf);
            let inf = self.v_splat(types::I32X4, 0x7C00);
            self.b.ins().bitselect(is_inf, inf, r)
        };
        let sign = self.b.ins().ushr_imm_u(bits, 31);
        let sign = self.b.ins().ishl_imm_u(sign, 15);
        let r = self.b.ins().bor(r, sign);
        let f32_inf = self.v_splat(types::I32X4, 0x7F80_0000);
        let is_nan = self.b.ins().icmp(IntCC::UnsignedGreaterThan, a, f32_inf);
        let nan = self.v_splat(types::I32X4, i64::from(CANONICAL_NAN));
        self.b.ins().bitselect(is_nan, nan, r)
    }

    /// A converted half's `.satfinite` then `.relu` (`convert::half_result_mods`), on halves
    /// in 32-bit lanes.
    fn v_half_result_mods(&mut self, fmt: HalfFormat, mods: CvtMods, h: Value) -> Value {
        let magnitude_mask = self.v_splat(types::I32X4, 0x7FFF);
        let inf = self.v_splat(types::I32X4, i64::from(fmt.inf_bits()));
        let mut h = h;
        if mods.satfinite {
            let magnitude = self.b.ins().band(h, magnitude_mask);
            let is_inf = self.b.ins().icmp(IntCC::Equal, magnitude, inf);
            let one = self.v_splat(types::I32X4, 1);
            let largest = self.b.ins().isub(h, one);
            h = self.b.ins().bitselect(is_inf, largest, h);
        }
        if mods.relu {
            let magnitude = self.b.ins().band(h, magnitude_mask);
            let nan = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThan, magnitude, inf);
            let sign = self.v_splat(types::I32X4, 0x8000);
            let negative = self.b.ins().band(h, sign);
            let negative = self.b.ins().icmp(IntCC::Equal, negative, sign);
            let zero = self.v_splat(types::I32X4, 0);
            h = self.b.ins().bitselect(negative, zero, h);
            let canonical = self.v_splat(types::I32X4, i64::from(CANONICAL_NAN));
            h = self.b.ins().bitselect(nan, canonical, h);
        }
        h
    }
}
