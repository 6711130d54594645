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
            IntOp::Mul(MulMode::Lo) => self.b.ins().imul(x, y),
            IntOp::Mul(MulMode::Hi) => {
                if signed {
                    self.b.ins().smulhi(x, y)
                } else {
                    self.b.ins().umulhi(x, y)
                }
            }
            IntOp::Mad(mode) => {
                let m = if mode == MulMode::Hi {
                    if signed {
                        self.b.ins().smulhi(x, y)
                    } else {
                        self.b.ins().umulhi(x, y)
                    }
                } else {
                    self.b.ins().imul(x, y)
                };
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
