//! Extended-precision arithmetic: `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`. The
//! carry flag CC.CF is a register the checker adds as the instruction's last argument (0 or
//! 1, a `.u32`), so it lives, spills and resumes like any other register. Sums are computed
//! twice as wide and the carry is the bit above the type's width; a subtraction is
//! `a + !b + 1` (`+ CF` for `subc`), so its flag is the carry, as on the GPU.
//! (Reference: `semantics::int::add_carry`, `sub_carry`.)

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
        // (carry flags, x, y, the carry in when the flag is not read)
        let (carry, x, y, fixed_in) = match op {
            IntOp::AddCarry(c) => (c, x, y, 0),
            IntOp::SubCarry(c) => (c, x, self.b.ins().bnot(y), 1),
            // The half of the product the mode names, plus c.
            IntOp::MadCarry { hi, carry } => {
                let product = self.product_half(hi, ty, x, y);
                (carry, product, self.read(&a[3], ty)?, 0)
            }
            _ => unreachable!("not an extended-precision op: {op:?}"),
        };
        let x = self.b.ins().uextend(wide, x);
        let y = self.b.ins().uextend(wide, y);
        let mut r = self.b.ins().iadd(x, y);
        if carry.carry_in {
            let cf = self.read(flag, PtxType::U32)?;
            let cf = self.b.ins().band_imm_u(cf, 1);
            let cf = self.b.ins().uextend(wide, cf);
            r = self.b.ins().iadd(r, cf);
        } else if fixed_in != 0 {
            r = self.b.ins().iadd_imm_u(r, fixed_in);
        }
        let low = self.b.ins().ireduce(ty.ir_type(), r);
        self.write(&a[0], low, ty)?;
        if carry.carry_out {
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
