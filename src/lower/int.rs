//! Integer arithmetic and logic on 16/32/64-bit types (and logic on predicates).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};

use super::{LResult, Translator};
use crate::frontend::checked::{Arg, IntOp, MulMode};
use crate::types::PtxType;

/// The type twice as wide (for `.wide` and `.hi`).
fn wide_type(ty: PtxType) -> Option<PtxType> {
    Some(match ty {
        PtxType::U16 => PtxType::U32,
        PtxType::S16 => PtxType::S32,
        PtxType::U32 => PtxType::U64,
        PtxType::S32 => PtxType::S64,
        _ => return None,
    })
}

impl Translator<'_, '_> {
    pub fn int(&mut self, op: IntOp, ty: PtxType, a: &[Arg]) -> LResult {
        let signed = ty.is_signed();
        let it = ty.ir_type();
        match op {
            IntOp::Mul(MulMode::Wide) | IntOp::Mad(MulMode::Wide) => {
                let wide = wide_type(ty).ok_or_else(|| {
                    self.err(format!(".wide needs a 16- or 32-bit type, not {ty}"))
                })?;
                let x = self.read(&a[1], ty)?;
                let y = self.read(&a[2], ty)?;
                let x = self.extend(x, wide.ir_type(), signed);
                let y = self.extend(y, wide.ir_type(), signed);
                let mut r = self.b.ins().imul(x, y);
                if matches!(op, IntOp::Mad(_)) {
                    let c = self.read(&a[3], wide)?;
                    r = self.b.ins().iadd(r, c);
                }
                return self.write(&a[0], r, wide);
            }
            IntOp::Shf { left, clamp } => {
                // The 64-bit value b:a shifted; the amount wraps mod 32 or clamps at 32.
                let x = self.read(&a[1], PtxType::B32)?;
                let y = self.read(&a[2], PtxType::B32)?;
                let n = self.read(&a[3], PtxType::U32)?;
                let n = if clamp {
                    let c32 = self.b.ins().iconst(types::I32, 32);
                    self.b.ins().umin(n, c32)
                } else {
                    self.b.ins().band_imm_u(n, 31)
                };
                let lo = self.b.ins().uextend(types::I64, x);
                let hi = self.b.ins().uextend(types::I64, y);
                let hi = self.b.ins().ishl_imm_u(hi, 32);
                let both = self.b.ins().bor(hi, lo);
                let n = self.b.ins().uextend(types::I64, n);
                let r = if left {
                    let s = self.b.ins().ishl(both, n);
                    self.b.ins().ushr_imm_u(s, 32)
                } else {
                    self.b.ins().ushr(both, n)
                };
                let r = self.b.ins().ireduce(types::I32, r);
                return self.write(&a[0], r, PtxType::B32);
            }
            IntOp::Bfe | IntOp::Bfi | IntOp::Prmt => return self.bit_field(op, ty, a),
            IntOp::AddCarry(_) | IntOp::SubCarry(_) | IntOp::MadCarry { .. } => {
                return self.carry_arith(op, ty, a);
            }
            IntOp::PrmtMode(_)
            | IntOp::Mul24 { .. }
            | IntOp::Mad24 { .. }
            | IntOp::Sad
            | IntOp::Bfind { .. }
            | IntOp::Bmsk { .. }
            | IntOp::Dp4a { .. }
            | IntOp::Dp2a { .. }
            | IntOp::Relu { .. }
            | IntOp::Halves { .. }
            | IntOp::Lop3 { .. }
            | IntOp::Fns => return self.int_parts(op, ty, a),
            IntOp::Popc | IntOp::Clz => {
                let x = self.read(&a[1], ty)?;
                let r = if op == IntOp::Popc {
                    self.b.ins().popcnt(x)
                } else {
                    self.b.ins().clz(x)
                };
                let r = self.extend(r, types::I32, false);
                let r = if it.bits() > 32 {
                    self.b.ins().ireduce(types::I32, r)
                } else {
                    r
                };
                return self.write(&a[0], r, PtxType::U32);
            }
            _ => {}
        }
        let x = self.read(&a[1], ty)?;
        let r = match op {
            IntOp::Abs => self.b.ins().iabs(x),
            IntOp::Neg => self.b.ins().ineg(x),
            IntOp::Not if ty == PtxType::Pred => self.b.ins().bxor_imm_u(x, 1),
            IntOp::Not => self.b.ins().bnot(x),
            IntOp::CNot => {
                let z = self.b.ins().icmp_imm_u(IntCC::Equal, x, 0);
                self.extend(z, it, false)
            }
            IntOp::Brev => self.b.ins().bitrev(x),
            IntOp::Shl | IntOp::Shr => {
                let amount = self.read(&a[2], PtxType::U32)?;
                self.shift(op, ty, x, amount)
            }
            _ => {
                let y = self.read(&a[2], ty)?;
                self.binary(op, ty, x, y, a)?
            }
        };
        self.write(&a[0], r, ty)
    }

    fn binary(&mut self, op: IntOp, ty: PtxType, x: Value, y: Value, a: &[Arg]) -> LResult<Value> {
        let signed = ty.is_signed();
        Ok(match op {
            IntOp::Add { sat: false } => self.b.ins().iadd(x, y),
            IntOp::Sub { sat: false } => self.b.ins().isub(x, y),
            IntOp::Add { sat: true } | IntOp::Sub { sat: true } => {
                // s32 only: compute in 64 bits and clamp.
                let x = self.b.ins().sextend(types::I64, x);
                let y = self.b.ins().sextend(types::I64, y);
                let r = if matches!(op, IntOp::Add { .. }) {
                    self.b.ins().iadd(x, y)
                } else {
                    self.b.ins().isub(x, y)
                };
                let lo = self.b.ins().iconst(types::I64, i32::MIN as i64);
                let hi = self.b.ins().iconst(types::I64, i32::MAX as i64);
                let r = self.b.ins().smax(r, lo);
                let r = self.b.ins().smin(r, hi);
                self.b.ins().ireduce(types::I32, r)
            }
            IntOp::Mul(mode) => self.product_half(mode == MulMode::Hi, ty, x, y),
            IntOp::Mad(mode) => {
                let m = self.product_half(mode == MulMode::Hi, ty, x, y);
                let c = self.read(&a[3], ty)?;
                self.b.ins().iadd(m, c)
            }
            IntOp::Div | IntOp::Rem => self.divide(op, ty, x, y),
            IntOp::Min => {
                if signed {
                    self.b.ins().smin(x, y)
                } else {
                    self.b.ins().umin(x, y)
                }
            }
            IntOp::Max => {
                if signed {
                    self.b.ins().smax(x, y)
                } else {
                    self.b.ins().umax(x, y)
                }
            }
            IntOp::And => self.b.ins().band(x, y),
            IntOp::Or => self.b.ins().bor(x, y),
            IntOp::Xor => self.b.ins().bxor(x, y),
            _ => unreachable!("unary and wide forms are handled by the caller"),
        })
    }

    /// PTX shifts clamp the amount: shifting by the width or more gives 0 (or the sign).
    fn shift(&mut self, op: IntOp, ty: PtxType, x: Value, amount: Value) -> Value {
        let width = ty.bits() as i64;
        let it = ty.ir_type();
        let too_far = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, amount, width);
        let amount_t = self.extend(amount, it, false);
        let amount_t = if it.bits() < 32 {
            self.b.ins().ireduce(it, amount)
        } else {
            amount_t
        };
        if op == IntOp::Shr && ty.is_signed() {
            let max = self.b.ins().iconst(it, width - 1);
            let clamped = self.b.ins().select(too_far, max, amount_t);
            return self.b.ins().sshr(x, clamped);
        }
        let shifted = if op == IntOp::Shl {
            self.b.ins().ishl(x, amount_t)
        } else {
            self.b.ins().ushr(x, amount_t)
        };
        let zero = self.b.ins().iconst(it, 0);
        self.b.ins().select(too_far, zero, shifted)
    }

    /// Division never traps on the host: x/0 gives all ones (div) or x (rem), as NVIDIA
    /// GPUs do, and MIN/-1 wraps.
    fn divide(&mut self, op: IntOp, ty: PtxType, x: Value, y: Value) -> Value {
        let it = ty.ir_type();
        let by_zero = self.b.ins().icmp_imm_u(IntCC::Equal, y, 0);
        let one = self.b.ins().iconst(it, 1);
        let mut safe_y = self.b.ins().select(by_zero, one, y);
        let mut overflow = None;
        if ty.is_signed() {
            // MIN / -1 traps in hardware division; compute it as MIN / 1 (= MIN, rem 0).
            let min = self
                .b
                .ins()
                .iconst(it, (1i64 << (it.bits() - 1)) & mask(it));
            let x_min = self.b.ins().icmp(IntCC::Equal, x, min);
            let y_neg1 = self.b.ins().icmp_imm_u(IntCC::Equal, y, mask(it));
            let ov = self.b.ins().band(x_min, y_neg1);
            safe_y = self.b.ins().select(ov, one, safe_y);
            overflow = Some(ov);
        }
        let r = match (op, ty.is_signed()) {
            (IntOp::Div, true) => self.b.ins().sdiv(x, safe_y),
            (IntOp::Div, false) => self.b.ins().udiv(x, safe_y),
            (_, true) => self.b.ins().srem(x, safe_y),
            (_, false) => self.b.ins().urem(x, safe_y),
        };
        let r = match (op, overflow) {
            (IntOp::Rem, Some(ov)) => {
                let zero = self.b.ins().iconst(it, 0);
                self.b.ins().select(ov, zero, r)
            }
            _ => r,
        };
        let on_zero = if op == IntOp::Div {
            self.b.ins().iconst(it, mask(it))
        } else {
            x
        };
        self.b.ins().select(by_zero, on_zero, r)
    }

    /// `bfe`, `bfi`, `prmt`: computed in 128 bits with positions and lengths clamped to the
    /// width, so no shift goes out of range.
    fn bit_field(&mut self, op: IntOp, ty: PtxType, a: &[Arg]) -> LResult {
        let w = ty.bits() as i64;
        let wide = types::I128;
        let ones = |t: &mut Self, bits: Value| -> Value {
            // (1 << bits) - 1 for bits <= 64, in 128 bits.
            let one = t.b.ins().iconst(types::I64, 1);
            let one = t.b.ins().uextend(wide, one);
            let shifted = t.b.ins().ishl(one, bits);
            t.b.ins().iadd_imm_s(shifted, -1)
        };
        let clamp = |t: &mut Self, v: Value| -> Value {
            let v = t.b.ins().band_imm_u(v, 0xFF);
            let limit = t.b.ins().iconst(types::I32, w);
            let v = t.b.ins().umin(v, limit);
            t.b.ins().uextend(types::I64, v)
        };
        let r = match op {
            IntOp::Bfe => {
                let x = self.read(&a[1], ty)?;
                let pos = self.read(&a[2], PtxType::U32)?;
                let len = self.read(&a[3], PtxType::U32)?;
                let (pos, len) = (clamp(self, pos), clamp(self, len));
                let x128 = self.b.ins().uextend(wide, x);
                let shifted = self.b.ins().ushr(x128, pos);
                // Bits available above pos: w - pos.
                let width = self.b.ins().iconst(types::I64, w);
                let avail = self.b.ins().isub(width, pos);
                let eff = self.b.ins().umin(len, avail);
                let mask = ones(self, eff);
                let keep = self.b.ins().band(shifted, mask);
                let r = if ty.is_signed() {
                    // The sign is bit min(pos + len - 1, w - 1); none when len == 0.
                    let top = self.b.ins().iadd(pos, len);
                    let top = self.b.ins().iadd_imm_s(top, -1);
                    let msb = self.b.ins().iconst(types::I64, w - 1);
                    let idx = self.b.ins().umin(top, msb);
                    let bit = self.b.ins().ushr(x128, idx);
                    let bit = self.b.ins().band_imm_u(bit, 1);
                    let bit = self.b.ins().ireduce(types::I8, bit);
                    let len_zero = self.b.ins().icmp_imm_u(IntCC::Equal, len, 0);
                    let no_sign = self.b.ins().bxor_imm_u(len_zero, 1);
                    let sbit = self.b.ins().band(bit, no_sign);
                    let fill = self.b.ins().bnot(mask);
                    let filled = self.b.ins().bor(keep, fill);
                    self.b.ins().select(sbit, filled, keep)
                } else {
                    keep
                };
                self.b.ins().ireduce(ty.ir_type(), r)
            }
            IntOp::Bfi => {
                let f = self.read(&a[1], ty)?;
                let b = self.read(&a[2], ty)?;
                let pos = self.read(&a[3], PtxType::U32)?;
                let len = self.read(&a[4], PtxType::U32)?;
                let (pos, len) = (clamp(self, pos), clamp(self, len));
                let field = ones(self, len);
                let mask = self.b.ins().ishl(field, pos);
                let width_bits = self.b.ins().iconst(types::I64, w);
                let width_mask = ones(self, width_bits);
                let mask = self.b.ins().band(mask, width_mask);
                let f128 = self.b.ins().uextend(wide, f);
                let b128 = self.b.ins().uextend(wide, b);
                let moved = self.b.ins().ishl(f128, pos);
                let moved = self.b.ins().band(moved, mask);
                let cleared = self.b.ins().band_not(b128, mask);
                let r = self.b.ins().bor(cleared, moved);
                self.b.ins().ireduce(ty.ir_type(), r)
            }
            _ => {
                let x = self.read(&a[1], PtxType::B32)?;
                let y = self.read(&a[2], PtxType::B32)?;
                let c = self.read(&a[3], PtxType::B32)?;
                self.prmt(x, y, c)
            }
        };
        self.write(&a[0], r, if op == IntOp::Prmt { PtxType::B32 } else { ty })
    }

    /// `prmt` (default mode): byte i of d is byte `(c >> 4i) & 7` of `y:x`, or its sign if bit
    /// 3 of that nibble is set.
    pub fn prmt(&mut self, x: Value, y: Value, c: Value) -> Value {
        let lo = self.b.ins().uextend(types::I64, x);
        let hi = self.b.ins().uextend(types::I64, y);
        let hi = self.b.ins().ishl_imm_u(hi, 32);
        let both = self.b.ins().bor(hi, lo);
        let mut d = self.b.ins().iconst(types::I32, 0);
        for i in 0..4 {
            let sel = self.b.ins().ushr_imm_u(c, 4 * i);
            let idx = self.b.ins().band_imm_u(sel, 7);
            let shift = self.b.ins().imul_imm_u(idx, 8);
            let shift = self.b.ins().uextend(types::I64, shift);
            let byte = self.b.ins().ushr(both, shift);
            let byte = self.b.ins().band_imm_u(byte, 0xFF);
            let byte = self.b.ins().ireduce(types::I32, byte);
            let replicate = self.b.ins().band_imm_u(sel, 8);
            let sign = self.b.ins().band_imm_u(byte, 0x80);
            let neg = self.b.ins().iconst(types::I32, 0xFF);
            let zero = self.b.ins().iconst(types::I32, 0);
            let signed = self.b.ins().select(sign, neg, zero);
            let byte = self.b.ins().select(replicate, signed, byte);
            let byte = self.b.ins().ishl_imm_u(byte, 8 * i);
            d = self.b.ins().bor(d, byte);
        }
        d
    }

    /// Zero- or sign-extends an integer value to `to` (no-op when already that wide).
    pub fn extend(&mut self, v: Value, to: Type, signed: bool) -> Value {
        let from = self.b.func.dfg.value_type(v);
        if from.bits() >= to.bits() {
            return v;
        }
        if signed {
            self.b.ins().sextend(to, v)
        } else {
            self.b.ins().uextend(to, v)
        }
    }
}

fn mask(t: Type) -> i64 {
    if t.bits() >= 64 {
        -1
    } else {
        ((1u64 << t.bits()) - 1) as i64
    }
}
