//! Vector forms of the half comparisons: `setp` and `set` on f16 and bf16, scalars and pairs
//! (`.ftz`, a `.BoolOp` with a predicate), with the one-thread lowering's rules (`lower::
//! compare`): `.ftz` on the bits, then the values compared, `ne` ordered and the `u` forms
//! true where either operand is NaN; a pair's low halves decide `p` and its high halves `q`.
//! The halves are compared as integers: with a negative half's magnitude negated, the keys
//! order as the values do, and −0 and +0 are one key; NaN lanes are found from the bits.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::Wide;
use super::bits::lane_order;
use crate::frontend::checked::{Arg, BoolOp, CmpOp};
use crate::lower::compare::set_true_value;
use crate::lower::half::format_of;
use crate::lower::lanes::vector_of;
use crate::lower::{LResult, Translator};
use crate::semantics::half::HalfFormat;
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `setp` of halves for the whole group; `false` (nothing emitted) where an operand
    /// cannot be read or written as vectors.
    pub(super) fn v_half_setp(
        &mut self,
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ty: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> LResult<bool> {
        let (p, q) = a[0].split_pair();
        let x2 = matches!(ty, PtxType::F16x2 | PtxType::BF16x2);
        if !self.v_dst_ok(p, PtxType::Pred)
            || !q.is_none_or(|q| self.v_dst_ok(q, PtxType::Pred))
            || (x2 && q.is_none())
            || !self.v_half_compare_ok(bool_op, ty, a)
        {
            return Ok(false);
        }
        let masks = self.v_half_compare(cmp, ty, ftz, a)?;
        let c = self.v_bool_operand(bool_op, a)?;
        if x2 {
            // Each pair's low and high halves' masks, sign-extended over the pair's 32 bits.
            let (low, high): (Wide, Wide) = masks
                .into_iter()
                .map(|m| {
                    let m = self.b.ins().bitcast(types::I32X4, lane_order(), m);
                    let low = self.b.ins().ishl_imm_u(m, 16);
                    let low = self.b.ins().sshr_imm_u(low, 16);
                    (low, self.b.ins().sshr_imm_u(m, 16))
                })
                .unzip();
            let low = self.v_predicates(low);
            let high = self.v_predicates(high);
            let low = self.v_combine(bool_op, low, &c);
            let high = self.v_combine(bool_op, high, &c);
            self.v_write(p, low);
            self.v_write(q.expect("checked"), high);
            return Ok(true);
        }
        let t = self.v_predicates(masks);
        if let Some(q) = q {
            let one = self.v_splat(types::I8X16, 1);
            let not: Wide = t.iter().map(|&t| self.b.ins().bxor(t, one)).collect();
            let not = self.v_combine(bool_op, not, &c);
            self.v_write(q, not);
        }
        let t = self.v_combine(bool_op, t, &c);
        self.v_write(p, t);
        Ok(true)
    }

    /// `set` of halves for the whole group (the true value of `dst` where the comparison
    /// holds, zero elsewhere); `false` (nothing emitted) where an operand cannot be read or
    /// written as vectors, or `dst` is not as wide as what the comparison makes.
    pub(super) fn v_half_set(
        &mut self,
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        dst: PtxType,
        src: PtxType,
        ftz: bool,
        a: &[Arg],
    ) -> LResult<bool> {
        let x2 = matches!(src, PtxType::F16x2 | PtxType::BF16x2);
        let (true_bits, lane) = set_true_value(dst, x2);
        let width = if x2 { 4 } else { lane.bytes() };
        if dst.size() != width
            || true_bits >> lane.bits() != 0
            || !self.v_dst_ok(&a[0], dst.bits_type())
            || !self.v_half_compare_ok(bool_op, src, a)
        {
            return Ok(false);
        }
        let mut masks = self.v_half_compare(cmp, src, ftz, a)?;
        if let Some(op) = bool_op {
            // The predicate's lanes as masks of the halves' (or, for pairs, the pairs') width.
            let vt = if x2 { types::I32X4 } else { types::I16X8 };
            let c = self.v_lane_masks(&a[3], vt)?;
            masks = masks
                .into_iter()
                .zip(c)
                .map(|(m, c)| {
                    let c = self.b.ins().bitcast(types::I16X8, lane_order(), c);
                    self.v_bool_op(op, m, c)
                })
                .collect();
        }
        if lane == types::I32 {
            masks = masks
                .into_iter()
                .flat_map(|m| [self.b.ins().swiden_low(m), self.b.ins().swiden_high(m)])
                .collect();
        }
        let vt = vector_of(dst.bits_type().ir_type()).expect("checked by v_dst_ok");
        let on = self.v_splat(vector_of(lane).expect("16 or 32 bits"), true_bits as i64);
        let v = masks
            .into_iter()
            .map(|m| {
                let m = self.b.ins().band(m, on);
                self.b.ins().bitcast(vt, lane_order(), m)
            })
            .collect();
        self.v_write(&a[0], v);
        Ok(true)
    }

    /// Whether the sources (and a `.BoolOp`'s predicate) of a half comparison of `ty` can be
    /// read as vectors.
    fn v_half_compare_ok(&self, bool_op: Option<BoolOp>, ty: PtxType, a: &[Arg]) -> bool {
        self.v_src_ok(&a[1], ty)
            && self.v_src_ok(&a[2], ty)
            && (bool_op.is_none() || self.v_src_ok(&a[3], PtxType::Pred))
    }

    /// `cmp` of the halves of operands 1 and 2, as masks of eight halves a vector.
    fn v_half_compare(&mut self, cmp: CmpOp, ty: PtxType, ftz: bool, a: &[Arg]) -> LResult<Wide> {
        let (fmt, _) = format_of(ty);
        let x = self.v_read(&a[1], ty)?;
        let y = self.v_read(&a[2], ty)?;
        x.into_iter()
            .zip(y)
            .map(|(x, y)| {
                let (mut x, mut y) = (self.as_halves(x), self.as_halves(y));
                if ftz {
                    x = self.v_half_flush(fmt, x);
                    y = self.v_half_flush(fmt, y);
                }
                self.v_half_cmp(fmt, cmp, x, y)
            })
            .collect()
    }

    fn v_half_cmp(&mut self, fmt: HalfFormat, cmp: CmpOp, x: Value, y: Value) -> LResult<Value> {
        use CmpOp::*;
        let unordered = {
            let xn = self.v_half_is_nan(fmt, x);
            let yn = self.v_half_is_nan(fmt, y);
            self.b.ins().bor(xn, yn)
        };
        let ordered_cc = match cmp {
            Eq | Equ => IntCC::Equal,
            Ne | Neu => IntCC::NotEqual,
            Lt | Ltu => IntCC::SignedLessThan,
            Le | Leu => IntCC::SignedLessThanOrEqual,
            Gt | Gtu => IntCC::SignedGreaterThan,
            Ge | Geu => IntCC::SignedGreaterThanOrEqual,
            Num => return Ok(self.b.ins().bnot(unordered)),
            Nan => return Ok(unordered),
            Lo | Ls | Hi | Hs => {
                return Err(self.err(format!("comparison {cmp:?} is not defined on halves")));
            }
        };
        let kx = self.v_half_value_key(x);
        let ky = self.v_half_value_key(y);
        let holds = self.b.ins().icmp(ordered_cc, kx, ky);
        Ok(if matches!(cmp, Equ | Neu | Ltu | Leu | Gtu | Geu) {
            self.b.ins().bor(holds, unordered)
        } else {
            self.b.ins().band_not(holds, unordered)
        })
    }

    /// A half's bits as a signed integer that compares as its value does (NaNs aside): a
    /// negative half's magnitude negated, so −0 and +0 are both 0.
    fn v_half_value_key(&mut self, h: Value) -> Value {
        let sign = self.b.ins().sshr_imm_u(h, 15);
        let magnitude = self.v_magnitude(h);
        // (m ^ s) − s: m where s is 0, −m where s is all ones.
        let flipped = self.b.ins().bxor(magnitude, sign);
        self.b.ins().isub(flipped, sign)
    }

    /// A `.BoolOp`'s predicate (operand 3) as vectors of the group's predicates, if any.
    fn v_bool_operand(&mut self, bool_op: Option<BoolOp>, a: &[Arg]) -> LResult<Option<Wide>> {
        match bool_op {
            Some(_) => Ok(Some(self.v_read(&a[3], PtxType::Pred)?)),
            None => Ok(None),
        }
    }

    /// Predicates `t` combined with `c` by `bool_op` (`t` alone without one).
    fn v_combine(&mut self, bool_op: Option<BoolOp>, t: Wide, c: &Option<Wide>) -> Wide {
        match (bool_op, c) {
            (Some(op), Some(c)) => t
                .into_iter()
                .zip(c)
                .map(|(t, &c)| self.v_bool_op(op, t, c))
                .collect(),
            _ => t,
        }
    }

    fn v_bool_op(&mut self, op: BoolOp, x: Value, y: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(x, y),
            BoolOp::Or => self.b.ins().bor(x, y),
            BoolOp::Xor => self.b.ins().bxor(x, y),
        }
    }
}
