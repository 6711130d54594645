//! Comparisons: `setp` on integers, f32/f64 and half types.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};

use super::half::format_of;
use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::checked::{Arg, BoolOp, CmpOp};
use crate::types::PtxType;

/// PTX's float comparison as Cranelift's condition (`ne` is ordered, the `u` forms are
/// true on NaN).
pub(super) fn float_cc(cmp: CmpOp) -> Option<FloatCC> {
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

/// PTX's integer comparison as Cranelift's condition.
pub(super) fn int_cc(cmp: CmpOp, signed: bool) -> Option<IntCC> {
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

/// What `set` writes for "true" into `dst` (per 16-bit lane for pair sources, `x2`), and
/// the type of that lane: 1.0 in a float destination, all ones in an integer one.
pub(super) fn set_true_value(dst: PtxType, x2: bool) -> (u64, Type) {
    let bits = match dst {
        PtxType::F16 | PtxType::F16x2 => crate::semantics::half::F16.one() as u64,
        PtxType::BF16 | PtxType::BF16x2 => crate::semantics::half::BF16.one() as u64,
        PtxType::F32 => 1.0f32.to_bits() as u64,
        _ if x2 || dst.size() == 2 => 0xFFFF,
        _ => 0xFFFF_FFFF,
    };
    let lane = if x2 || dst.size() == 2 {
        types::I16
    } else {
        types::I32
    };
    (bits, lane)
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
            // `.ftz` on the bits (as the reference does), then exact f32 values.
            let (fmt, _) = format_of(ty);
            if ftz {
                x = softfloat::half_flush(self.b, fmt, x);
                y = softfloat::half_flush(self.b, fmt, y);
            }
            x = softfloat::half_to_f32(self.b, fmt, x);
            y = softfloat::half_to_f32(self.b, fmt, y);
        } else if ftz {
            x = softfloat::flush_subnormal(self.b, x);
            y = softfloat::flush_subnormal(self.b, y);
        }
        Ok(self.b.ins().fcmp(cc, x, y))
    }

    /// The comparison of each lane (one for scalars, two for x2 types), combined with the
    /// optional predicate `c` (operand 3).
    fn compare_lanes(
        &mut self,
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ty: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> LResult<Vec<Value>> {
        let x = self.read(&a[1], ty)?;
        let y = self.read(&a[2], ty)?;
        let lanes = if matches!(ty, PtxType::F16x2 | PtxType::BF16x2) {
            2
        } else {
            1
        };
        let c = match bool_op {
            Some(_) => Some(self.read(&a[3], PtxType::Pred)?),
            None => None,
        };
        let mut results = Vec::new();
        for lane in 0..lanes {
            let (xl, yl) = if ty.is_half() {
                (self.lane(x, lane), self.lane(y, lane))
            } else {
                (x, y)
            };
            let t = self.compare(cmp, ty, ftz, xl, yl)?;
            results.push(self.combine(bool_op, t, c));
        }
        Ok(results)
    }

    pub(super) fn combine(&mut self, bool_op: Option<BoolOp>, t: Value, c: Option<Value>) -> Value {
        match (bool_op, c) {
            (Some(BoolOp::And), Some(c)) => self.b.ins().band(t, c),
            (Some(BoolOp::Or), Some(c)) => self.b.ins().bor(t, c),
            (Some(BoolOp::Xor), Some(c)) => self.b.ins().bxor(t, c),
            _ => t,
        }
    }

    /// `setp`: `p|q` gets the result and its complement (x2: p from the low lane, q from the
    /// high lane), each combined with `c`.
    pub fn setp(
        &mut self,
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ty: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> LResult {
        let (p_dst, q_dst) = a[0].split_pair();
        let x2 = matches!(ty, PtxType::F16x2 | PtxType::BF16x2);
        if x2 && q_dst.is_none() {
            return Err(self.err("setp on a pair type writes two predicates: use p|q"));
        }
        if x2 {
            let r = self.compare_lanes(cmp, bool_op, ty, ftz, a)?;
            self.write(p_dst, r[0], PtxType::Pred)?;
            return self.write(q_dst.expect("checked above"), r[1], PtxType::Pred);
        }
        // Scalar: q = (!t) BoolOp c, so compute t first, then combine each.
        let plain = self.compare_lanes(cmp, None, ty, ftz, a)?[0];
        let c = match bool_op {
            Some(_) => Some(self.read(&a[3], PtxType::Pred)?),
            None => None,
        };
        let p = self.combine(bool_op, plain, c);
        self.write(p_dst, p, PtxType::Pred)?;
        if let Some(q_dst) = q_dst {
            let not = self.b.ins().bxor_imm_u(plain, 1);
            let q = self.combine(bool_op, not, c);
            self.write(q_dst, q, PtxType::Pred)?;
        }
        Ok(())
    }

    /// `set`: each lane's result as a value of `dst` — 1.0/0.0 in a float destination,
    /// all ones/zero in an integer one; x2 sources pack two 16-bit lanes.
    pub fn set(
        &mut self,
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        dst: PtxType,
        src: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> LResult {
        let results = self.compare_lanes(cmp, bool_op, src, ftz, a)?;
        let (true_bits, lane_ty) = set_true_value(dst, results.len() == 2);
        let lanes: Vec<Value> = results
            .into_iter()
            .map(|t| {
                let on = self.b.ins().iconst(lane_ty, true_bits as i64);
                let off = self.b.ins().iconst(lane_ty, 0);
                self.b.ins().select(t, on, off)
            })
            .collect();
        let v = self.pack(&lanes);
        let bits_ty = dst.bits_type();
        let v = self.coerce(v, bits_ty.ir_type(), false);
        self.write(&a[0], v, bits_ty)
    }
}
