//! Extended-precision arithmetic: `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`. The
//! carry flag CC.CF is a register the checker adds as the instruction's last argument (0 or
//! 1, a `.u32`), so it lives, spills and resumes like any other register. Sums are computed
//! twice as wide and the carry (or borrow) is the bit above the type's width.
//! (Reference: `semantics::int::add_carry`, `sub_borrow`.)

use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::{LResult, Translator};
use crate::frontend::checked::{Arg, IntOp};
use crate::types::PtxType;

impl Translator<'_, '_> {
    pub fn carry_arith(&mut self, op: IntOp, ty: PtxType, a: &[Arg]) -> LResult {
        let flag = a.last().expect("the checker adds the carry flag");
        let wide = if ty.bits() == 32 {
            types::I64
        } else {
            types::I128
        };
        let x = self.read(&a[1], ty)?;
        let y = self.read(&a[2], ty)?;
        let (carry, subtract, x, y) = match op {
            IntOp::AddCarry(c) => (c, false, x, y),
            IntOp::SubCarry(c) => (c, true, x, y),
            // The half of the product the mode names, plus c.
            IntOp::MadCarry { hi, carry } => {
                let product = self.product_half(hi, ty, x, y);
                (carry, false, product, self.read(&a[3], ty)?)
            }
            _ => unreachable!("not an extended-precision op: {op:?}"),
        };
        let x = self.b.ins().uextend(wide, x);
        let y = self.b.ins().uextend(wide, y);
        let mut r = if subtract {
            self.b.ins().isub(x, y)
        } else {
            self.b.ins().iadd(x, y)
        };
        if carry.carry_in {
            let cf = self.read(flag, PtxType::U32)?;
            let cf = self.b.ins().band_imm_u(cf, 1);
            let cf = self.b.ins().uextend(wide, cf);
            r = if subtract {
                self.b.ins().isub(r, cf)
            } else {
                self.b.ins().iadd(r, cf)
            };
        }
        let low = self.b.ins().ireduce(ty.ir_type(), r);
        self.write(&a[0], low, ty)?;
        if carry.carry_out {
            // A borrow leaves the bits above all ones: bit `width` is the flag either way.
            let above = self.b.ins().ushr_imm_u(r, ty.bits() as i64);
            let bit = self.b.ins().band_imm_u(above, 1);
            let bit = self.b.ins().ireduce(types::I32, bit);
            self.write(flag, bit, PtxType::U32)?;
        }
        Ok(())
    }

    /// The `.lo` or `.hi` half of `x * y` (signed for signed types): `mul`, `mad`, `mad.cc`.
    pub(super) fn product_half(&mut self, hi: bool, ty: PtxType, x: Value, y: Value) -> Value {
        match (hi, ty.is_signed()) {
            (false, _) => self.b.ins().imul(x, y),
            (true, true) => self.b.ins().smulhi(x, y),
            (true, false) => self.b.ins().umulhi(x, y),
        }
    }
}
