//! Comparisons: `setp` on integers, f32/f64 and half types.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Value};

use super::half::format_of;
use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::checked::{Arg, BoolOp, CmpOp};
use crate::types::PtxType;

fn float_cc(cmp: CmpOp) -> Option<FloatCC> {
    use CmpOp::*;
    Some(match cmp {
        Eq => FloatCC::Equal,
        Ne => FloatCC::OrderedNotEqual,
        Lt => FloatCC::LessThan,
        Le => FloatCC::LessThanOrEqual,
        Gt => FloatCC::GreaterThan,
        Ge => FloatCC::GreaterThanOrEqual,
        Equ => FloatCC::UnorderedOrEqual,
        Neu => FloatCC::NotEqual,
        Ltu => FloatCC::UnorderedOrLessThan,
        Leu => FloatCC::UnorderedOrLessThanOrEqual,
        Gtu => FloatCC::UnorderedOrGreaterThan,
        Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
        Num => FloatCC::Ordered,
        Nan => FloatCC::Unordered,
        Lo | Ls | Hi | Hs => return None,
    })
}

fn int_cc(cmp: CmpOp, signed: bool) -> Option<IntCC> {
    use CmpOp::*;
    Some(match (cmp, signed) {
        (Eq, _) => IntCC::Equal,
        (Ne, _) => IntCC::NotEqual,
        (Lt, true) => IntCC::SignedLessThan,
        (Le, true) => IntCC::SignedLessThanOrEqual,
        (Gt, true) => IntCC::SignedGreaterThan,
        (Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (Lt | Lo, false) => IntCC::UnsignedLessThan,
        (Le | Ls, false) => IntCC::UnsignedLessThanOrEqual,
        (Gt | Hi, false) => IntCC::UnsignedGreaterThan,
        (Ge | Hs, false) => IntCC::UnsignedGreaterThanOrEqual,
        _ => return None,
    })
}

impl Translator<'_, '_> {
    /// Compares `x` and `y` of type `ty` (one lane for halves); returns an `i8` 0/1.
    fn compare(
        &mut self,
        cmp: CmpOp,
        ty: PtxType,
        ftz: bool,
        x: Value,
        y: Value,
    ) -> LResult<Value> {
        if ty.is_int() {
            let cc = int_cc(cmp, ty.is_signed())
                .ok_or_else(|| self.err(format!("comparison {cmp:?} is not defined on {ty}")))?;
            return Ok(self.b.ins().icmp(cc, x, y));
        }
        let cc = float_cc(cmp)
            .ok_or_else(|| self.err(format!("comparison {cmp:?} is not defined on {ty}")))?;
        let (mut x, mut y) = (x, y);
        if ty.is_half() {
            let (fmt, _) = format_of(ty);
            x = softfloat::half_to_f64(self.b, fmt, x);
            y = softfloat::half_to_f64(self.b, fmt, y);
        }
        if ftz {
            if ty.is_half() {
                x = self.flush_half_value(ty, x);
                y = self.flush_half_value(ty, y);
            } else {
                x = softfloat::flush_subnormal(self.b, x);
                y = softfloat::flush_subnormal(self.b, y);
            }
        }
        Ok(self.b.ins().fcmp(cc, x, y))
    }

    /// `.ftz` on a half value already decoded to f64: magnitudes below the format's smallest
    /// normal become zero of the same sign.
    fn flush_half_value(&mut self, ty: PtxType, v: Value) -> Value {
        let (fmt, _) = format_of(ty);
        let min_normal = self.b.ins().f64const(2f64.powi(fmt.emin()));
        let mag = self.b.ins().fabs(v);
        let tiny = self.b.ins().fcmp(FloatCC::LessThan, mag, min_normal);
        let zero = self.b.ins().f64const(0.0);
        let signed_zero = self.b.ins().fcopysign(zero, v);
        self.b.ins().select(tiny, signed_zero, v)
    }

    pub fn setp(
        &mut self,
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ty: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> LResult {
        let x = self.read(&a[1], ty)?;
        let y = self.read(&a[2], ty)?;
        let lanes = if matches!(ty, PtxType::F16x2 | PtxType::BF16x2) {
            2
        } else {
            1
        };
        let mut results = Vec::new();
        for lane in 0..lanes {
            let (xl, yl) = if ty.is_half() {
                (self.lane(x, lane), self.lane(y, lane))
            } else {
                (x, y)
            };
            results.push(self.compare(cmp, ty, ftz, xl, yl)?);
        }
        let c = match bool_op {
            Some(_) => Some(self.read(&a[3], PtxType::Pred)?),
            None => None,
        };
        // `p|q`: p gets the result, q its complement (x2: p from the low lane, q from the high
        // lane, each combined with c).
        let (p_dst, q_dst) = match &a[0] {
            Arg::Pair(p, q) => (&**p, Some(&**q)),
            other => (other, None),
        };
        let (p_val, q_val) = if lanes == 2 {
            (results[0], Some(results[1]))
        } else {
            let not = self.b.ins().bxor_imm_u(results[0], 1);
            (results[0], Some(not))
        };
        let combine = |t: &mut Self, v: Value| -> Value {
            match (bool_op, c) {
                (Some(BoolOp::And), Some(c)) => t.b.ins().band(v, c),
                (Some(BoolOp::Or), Some(c)) => t.b.ins().bor(v, c),
                (Some(BoolOp::Xor), Some(c)) => t.b.ins().bxor(v, c),
                _ => v,
            }
        };
        let p = combine(self, p_val);
        self.write(p_dst, p, PtxType::Pred)?;
        if let (Some(q_dst), Some(q)) = (q_dst, q_val) {
            let q = combine(self, q);
            self.write(q_dst, q, PtxType::Pred)?;
        } else if lanes == 2 {
            return Err(self.err("setp on a pair type writes two predicates: use p|q"));
        }
        Ok(())
    }
}
