//! Vector forms of the half instructions that are integer operations on the halves' bits:
//! `neg`, `abs`, `min`, `max` (f16 and bf16, scalars and pairs, `.ftz`, `min`/`max` `.NaN`),
//! with the one-thread lowering's rules (`lower::half`): `.ftz` first, a NaN operand's
//! result the canonical NaN, `min`/`max` of one NaN the other operand. A pair is read as
//! its two halves: every 16-bit lane of the vectors is a half, whatever the register.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::Wide;
use crate::frontend::checked::{Arg, FloatMods, FloatOp};
use crate::lower::Translator;
use crate::lower::half::format_of;
use crate::lower::{LResult, lanes::vector_of};
use crate::semantics::half::{CANONICAL_NAN, HalfFormat};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `neg`/`abs`/`min`/`max` of halves for the whole group; `false` (nothing emitted) for
    /// other operations, `.xorsign.abs` and operands the group cannot read as vectors.
    pub(super) fn v_half_bits(
        &mut self,
        op: FloatOp,
        ty: PtxType,
        mods: FloatMods,
        a: &[Arg],
    ) -> LResult<bool> {
        let nsrc = match op {
            FloatOp::Neg | FloatOp::Abs => 1,
            FloatOp::Min | FloatOp::Max if !mods.xorsign_abs => 2,
            _ => return Ok(false),
        };
        if !self.v_dst_ok(&a[0], ty) || !(1..=nsrc).all(|i| self.v_src_ok(&a[i], ty)) {
            return Ok(false);
        }
        let (fmt, _) = format_of(ty);
        let vt = vector_of(ty.ir_type()).expect("half");
        let mut sources = Vec::new();
        for arg in &a[1..=nsrc] {
            let halves: Wide = self
                .v_read(arg, ty)?
                .into_iter()
                .map(|v| self.as_halves(v))
                .collect();
            sources.push(halves);
        }
        let result: Wide = (0..sources[0].len())
            .map(|c| {
                let x: Vec<Value> = sources.iter().map(|s| s[c]).collect();
                let x: Vec<Value> = x
                    .into_iter()
                    .map(|h| {
                        if mods.ftz {
                            self.v_half_flush(fmt, h)
                        } else {
                            h
                        }
                    })
                    .collect();
                let r = match op {
                    FloatOp::Neg | FloatOp::Abs => self.v_half_neg_abs(fmt, op, x[0]),
                    _ => self.v_half_min_max(fmt, op == FloatOp::Max, mods.nan, x[0], x[1]),
                };
                self.b.ins().bitcast(vt, super::bits::lane_order(), r)
            })
            .collect();
        self.v_write(&a[0], result);
        Ok(true)
    }

    /// A vector of halves or pairs as eight halves.
    pub(super) fn as_halves(&mut self, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == types::I16X8 {
            v
        } else {
            self.b
                .ins()
                .bitcast(types::I16X8, super::bits::lane_order(), v)
        }
    }

    /// Each half's magnitude bits.
    pub(super) fn v_magnitude(&mut self, h: Value) -> Value {
        let mask = self.v_splat(types::I16X8, 0x7FFF);
        self.b.ins().band(h, mask)
    }

    /// Lanes that hold a NaN, as masks.
    pub(super) fn v_half_is_nan(&mut self, fmt: HalfFormat, h: Value) -> Value {
        let mag = self.v_magnitude(h);
        let inf = self.v_splat(types::I16X8, i64::from(fmt.inf_bits()));
        self.b.ins().icmp(IntCC::UnsignedGreaterThan, mag, inf)
    }

    /// `.ftz` of halves.
    pub(super) fn v_half_flush(&mut self, fmt: HalfFormat, h: Value) -> Value {
        self.v_flush(h, 1 << fmt.mant_bits)
    }

    /// `.ftz` of floats' bits (halves in 16-bit lanes, f32s in 32-bit ones): a subnormal,
    /// its magnitude under `smallest_normal`'s bits, becomes zero of the same sign.
    pub(super) fn v_flush(&mut self, x: Value, smallest_normal: u32) -> Value {
        let vt = self.b.func.dfg.value_type(x);
        let sign_bit = 1i64 << (vt.lane_bits() - 1);
        let sign_mask = self.v_splat(vt, sign_bit);
        let magnitude_mask = self.v_splat(vt, sign_bit - 1);
        let magnitude = self.b.ins().band(x, magnitude_mask);
        let smallest_normal = self.v_splat(vt, smallest_normal as i64);
        let tiny = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThan, magnitude, smallest_normal);
        let signed_zero = self.b.ins().band(x, sign_mask);
        self.b.ins().bitselect(tiny, signed_zero, x)
    }

    /// The canonical NaN where `nan`, else `h`.
    fn v_half_nan_if(&mut self, nan: Value, h: Value) -> Value {
        let canonical = self.v_splat(types::I16X8, i64::from(CANONICAL_NAN));
        self.b.ins().bitselect(nan, canonical, h)
    }

    fn v_half_neg_abs(&mut self, fmt: HalfFormat, op: FloatOp, h: Value) -> Value {
        let r = if op == FloatOp::Abs {
            self.v_magnitude(h)
        } else {
            let sign = self.v_splat(types::I16X8, 0x8000);
            self.b.ins().bxor(h, sign)
        };
        let nan = self.v_half_is_nan(fmt, h);
        self.v_half_nan_if(nan, r)
    }

    /// `min`/`max` by the halves' order as signed integers (a negative half's magnitude bits
    /// flipped), in which −0 < +0 as `min` and `max` want; one NaN operand gives the other,
    /// two (or, with `.NaN`, one) the canonical NaN.
    fn v_half_min_max(
        &mut self,
        fmt: HalfFormat,
        is_max: bool,
        nan_wins: bool,
        a: Value,
        b: Value,
    ) -> Value {
        let ka = self.v_half_order_key(a);
        let kb = self.v_half_order_key(b);
        let cc = if is_max {
            IntCC::SignedGreaterThan
        } else {
            IntCC::SignedLessThan
        };
        let a_wins = self.b.ins().icmp(cc, ka, kb);
        let picked = self.b.ins().bitselect(a_wins, a, b);
        let an = self.v_half_is_nan(fmt, a);
        let bn = self.v_half_is_nan(fmt, b);
        let picked = self.b.ins().bitselect(bn, a, picked);
        let picked = self.b.ins().bitselect(an, b, picked);
        let nan = if nan_wins {
            self.b.ins().bor(an, bn)
        } else {
            self.b.ins().band(an, bn)
        };
        self.v_half_nan_if(nan, picked)
    }

    /// A half's bits as a signed integer in the order of its value (NaNs aside): a negative
    /// half's magnitude bits flipped, so −0 is −1, just below +0.
    fn v_half_order_key(&mut self, h: Value) -> Value {
        let fifteen = self.b.ins().iconst(types::I32, 15);
        let sign = self.b.ins().sshr(h, fifteen);
        let flip = self.v_magnitude(sign);
        self.b.ins().bxor(h, flip)
    }
}
