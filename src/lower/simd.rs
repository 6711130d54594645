//! Vector forms of instructions for the group code (`lanes`): one instruction computes every
//! lane of a group with Cranelift's 128-bit vectors (or one call of a precompiled helper on
//! them). Each form takes only what it computes exactly as the one-thread lowering does; for
//! anything else [`Translator::vector_form`] says no and the instruction runs lane by lane.
//!
//! Memory: a group's `ld`/`st` whose lane addresses are contiguous (lane k at the first lane's
//! address + k × width: known when the kernel is compiled for a lane-affine address
//! register, `affine`, else tested at run time) is one range check and vector loads or
//! stores; other addresses, or a range that fails its check, go lane by lane, so a fault
//! names the same lane and address as the one-thread code. Inside a loop, such an access
//! prefetches where its steps lead (`crate::prefetch`).

use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::{
    ConstantData, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Type, Value, types,
};

use super::data::bits_type;
use super::lanes::vector_of;
use super::mufu;
use super::{LResult, Translator};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{
    AddrBase, Arg, CmpOp, CvtMods, Dim, FloatMods, FloatOp, Guard, Inst, IntOp, MulMode, Op,
    Rounding, Special,
};
use crate::semantics::directed::Arith;
use crate::types::PtxType;

mod async_copy;
mod bits;
mod float_int;
mod half_bits;
mod half_cmp;
mod half_cvt;
mod half_lookup;
pub(super) mod runs;
mod scattered;
pub(in crate::lower) mod warp;

/// A register's value in every lane: its vectors, lanes 0.. first.
type Wide = Vec<Value>;

/// Whether `inst` may have a vector form (or be a branch, which the group code takes whole):
/// the ops [`Translator::vector_form`] looks at, before it looks at types and operands. A
/// coarse count for choosing a group's width (`lanes::width`), never a promise.
pub(super) fn may_have_vector_form(inst: &Inst) -> bool {
    inst.guard.is_none()
        && match inst.op {
            Op::Mov(_)
            | Op::Selp(_)
            | Op::Int { .. }
            | Op::Setp { .. }
            | Op::Float { .. }
            | Op::Ld { .. }
            | Op::St { .. }
            | Op::CpAsync { .. } => true,
            _ if warp::in_group(inst) => true,
            Op::Set { src, .. } => src.is_half(),
            Op::Cvt { dst, src, mods } => {
                let half = |t: PtxType| t.is_half();
                (dst.is_int()
                    && src.is_int()
                    && mods.rnd.is_none()
                    && !(mods.sat && (dst.size() > 4 || src.size() > 4)))
                    || (dst.is_int() && (src == PtxType::F32 || half(src)))
                    || (src.is_int() && dst == PtxType::F32)
                    || (half(src) && dst == PtxType::F32)
                    || (src == PtxType::F32 && half(dst))
            }
            _ => false,
        }
        || matches!(inst.op, Op::Bra | Op::Ret | Op::Exit)
}

/// The registers (or the stored values) of an `ld`/`st` of `vec` elements: its braces'
/// elements, or its one operand (`{ %r1 }`, as Triton writes one, is `%r1`).
fn access_elements(held: &Arg, vec: u8) -> Option<&[Arg]> {
    match held {
        Arg::Vector(items) if items.len() == vec as usize => Some(items),
        _ if vec == 1 => Some(std::slice::from_ref(held)),
        _ => None,
    }
}

/// Whether a register of type `reg_ty` is read and written as `ty` lanes by the vector forms:
/// the same IR type, or another of the same width (PTX's `.b32` registers as `.f32`
/// operands, as Triton declares all its registers), whose bits are taken as they are.
fn same_bits(reg_ty: PtxType, ty: PtxType) -> bool {
    let (r, t) = (reg_ty.ir_type(), ty.ir_type());
    (r == t || (r.bits() == t.bits() && vector_of(r).is_some()))
        && (reg_ty == PtxType::Pred) == (ty == PtxType::Pred)
}

impl Translator<'_, '_> {
    /// Lowers `inst` for the whole group with vectors, if it has a vector form here; returns
    /// whether it did (emitting nothing when not).
    pub(super) fn vector_form(&mut self, inst: &Inst, pos: usize) -> LResult<bool> {
        if let Some(g) = inst.guard {
            return self.v_guarded_access(inst, g, pos);
        }
        let a = &inst.args;
        match inst.op {
            Op::Mov(ty) if self.v_dst_ok(&a[0], ty) && self.v_src_ok(&a[1], ty) => {
                let x = self.v_read(&a[1], ty)?;
                self.v_write(&a[0], x);
                Ok(true)
            }
            Op::Mov(ty) => self.v_mov_bits(ty, a),
            Op::Cvt { dst, src, mods } if dst.is_int() && src.is_int() => {
                let sat = CvtMods {
                    sat: true,
                    ..CvtMods::default()
                };
                Ok((mods == CvtMods::default() || mods == sat)
                    && self.v_cvt_int(dst, src, mods.sat, a)?)
            }
            Op::Cvt { dst, src, mods } if dst.is_int() => self.v_cvt_float_int(dst, src, mods, a),
            Op::Cvt { dst, src, mods } if src.is_int() => self.v_cvt_int_float(dst, src, mods, a),
            Op::Cvt { dst, src, mods } => self.v_cvt_half(dst, src, mods, a),
            Op::Selp(ty) => self.v_selp(ty, a),
            Op::Int { op, ty } => self.v_int(op, ty, a),
            Op::Setp {
                cmp,
                bool_op,
                ty,
                ftz,
            } if ty.is_half() => self.v_half_setp(cmp, bool_op, ty, ftz, a),
            Op::Set {
                cmp,
                bool_op,
                dst,
                src,
                ftz,
            } if src.is_half() => self.v_half_set(cmp, bool_op, dst, src, ftz, a),
            Op::Setp {
                cmp,
                bool_op: None,
                ty,
                ftz: false,
            } => self.v_setp(cmp, ty, a),
            Op::Float { op, ty, mods } if ty.is_half() => Ok(self.v_half_bits(op, ty, mods, a)?
                || self.v_half_lookup(op, ty, a)?
                || self.v_half(op, ty, mods, a)?),
            Op::Float {
                op,
                ty: PtxType::F32,
                mods,
            } => self.v_f32(op, mods, a),
            Op::Ld { space, ty, vec } => {
                self.v_access(inst, pos, space, ty, vec, &a[1], Some(&a[0]))
            }
            Op::St { space, ty, vec } => self.v_access(inst, pos, space, ty, vec, &a[0], None),
            Op::CpAsync { .. } => self.v_cp_async(inst),
            _ => Ok(false),
        }
    }

    /// A guarded `ld`/`st` of global memory (Triton guards every access with its bounds):
    /// where the guard holds in every lane, the unguarded instruction's form (vectors where
    /// it has them); where it holds in some lanes or none (a grid's edge), lane by lane.
    fn v_guarded_access(&mut self, inst: &Inst, g: Guard, pos: usize) -> LResult<bool> {
        let (Op::Ld { space, .. } | Op::St { space, .. }) = inst.op else {
            return Ok(false);
        };
        if !matches!(space, StateSpace::Global | StateSpace::Generic) {
            return Ok(false);
        }
        let (every, mask) = self.guard_everywhere(g);
        let (each, some) = self.branch_cold(every, false);
        let join = self.b.create_block();
        self.b.switch_to_block(each);
        let unguarded = Inst {
            guard: None,
            ..inst.clone()
        };
        if !self.vector_form(&unguarded, pos)? {
            self.lane_by_lane(&unguarded)?;
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(some);
        // Where no lane's guard holds (a group past the end of Triton's bounds), nothing.
        if let Some(mask) = mask {
            let (none, part) = self.branch_cold(mask, true);
            self.b.switch_to_block(none);
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(part);
            self.lane_by_lane_looped(inst)?;
        }
        self.b.ins().jump(join, &[]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(true)
    }

    /// Whether every lane of every mask vector in `masks` is set (an `i8`, 0 or 1).
    fn v_all(&mut self, masks: &[Value]) -> Value {
        let (&first, rest) = masks.split_first().expect("lanes");
        let all = rest.iter().fold(first, |acc, &m| self.b.ins().band(acc, m));
        self.b.ins().vall_true(all)
    }

    /// Threads in the group.
    fn width(&self) -> usize {
        self.lanes.as_ref().expect("grouped").width
    }

    fn is_uniform_reg(&self, r: u32) -> bool {
        self.lanes.as_ref().expect("grouped").uniform[r as usize]
    }

    /// Whether `arg` can be read as a `ty` value in every lane here.
    fn v_src_ok(&self, arg: &Arg, ty: PtxType) -> bool {
        if vector_of(ty.ir_type()).is_none() {
            return false;
        }
        match arg {
            Arg::Reg(r) | Arg::Not(r) if self.is_uniform_reg(*r) => {
                (self.func.regs[*r as usize].ty == PtxType::Pred) == (ty == PtxType::Pred)
            }
            // Lane by lane, a register of another width is truncated or extended.
            Arg::Reg(r) | Arg::Not(r) => {
                same_bits(self.func.regs[*r as usize].ty, ty)
                    && (matches!(arg, Arg::Reg(_)) || ty == PtxType::Pred)
            }
            Arg::Imm(_) | Arg::SymbolAddr(..) => true,
            Arg::Special(Special::Tid(Dim::X)) => ty.ir_type() == types::I32,
            Arg::Special(s) => super::lanes::is_uniform_special(*s),
            _ => false,
        }
    }

    /// Whether the result of a `ty` instruction can be written to `arg` as vectors.
    fn v_dst_ok(&self, arg: &Arg, ty: PtxType) -> bool {
        match arg {
            Arg::Reg(r) if !self.is_uniform_reg(*r) => {
                same_bits(self.func.regs[*r as usize].ty, ty)
            }
            _ => false,
        }
    }

    /// `arg` (accepted by [`v_src_ok`](Self::v_src_ok)) as a `ty` value in every lane.
    fn v_read(&mut self, arg: &Arg, ty: PtxType) -> LResult<Wide> {
        let vt = vector_of(ty.ir_type()).expect("checked");
        let n = self.width() / vt.lane_count() as usize;
        match arg {
            Arg::Reg(r) if !self.is_uniform_reg(*r) => {
                let v = self.lane_vectors(*r);
                Ok(self.v_as(v, vt))
            }
            Arg::Not(r) if !self.is_uniform_reg(*r) => {
                let p = self.v_read(&Arg::Reg(*r), ty)?;
                let one = self.v_splat(vt, 1);
                Ok(p.into_iter().map(|p| self.b.ins().bxor(p, one)).collect())
            }
            Arg::Special(Special::Tid(Dim::X)) => {
                let first = self.lanes.as_ref().expect("grouped").first[0];
                let x = self.b.use_var(first);
                let iota = self.v_const(types::I32X4, &[0u32, 1, 2, 3].map(u64::from));
                Ok((0..n)
                    .map(|c| {
                        let base = self.b.ins().iadd_imm_s(x, 4 * c as i64);
                        let base = self.b.ins().splat(vt, base);
                        self.b.ins().iadd(base, iota)
                    })
                    .collect())
            }
            _ => {
                let x = self
                    .v_read_uniform(arg, ty)
                    .expect("the same in every lane")?;
                let v = self.b.ins().splat(vt, x);
                Ok(vec![v; n])
            }
        }
    }

    /// `arg` (accepted by [`v_src_ok`](Self::v_src_ok)) as one scalar, if it is the same in
    /// every lane: the one-thread lowering reads it once.
    fn v_read_uniform(&mut self, arg: &Arg, ty: PtxType) -> Option<LResult<Value>> {
        match arg {
            Arg::Reg(r) | Arg::Not(r) if !self.is_uniform_reg(*r) => None,
            Arg::Special(Special::Tid(Dim::X)) => None,
            _ => {
                self.enter_scalars();
                let x = self.read(arg, ty);
                self.enter_scalars();
                Some(x)
            }
        }
    }

    fn v_write(&mut self, arg: &Arg, v: Wide) {
        let Arg::Reg(r) = arg else {
            unreachable!("checked by v_dst_ok")
        };
        let vt = vector_of(self.func.regs[*r as usize].ty.ir_type()).expect("checked");
        let v = self.v_as(v, vt);
        self.write_vectors(*r, v);
    }

    /// Every lane of vector type `vt` set to the integer `x`.
    fn v_splat(&mut self, vt: Type, x: i64) -> Value {
        let s = self.b.ins().iconst(vt.lane_type(), x);
        self.b.ins().splat(vt, s)
    }

    /// A vector constant of integer lanes.
    pub(super) fn v_const(&mut self, vt: Type, lanes: &[u64]) -> Value {
        let bytes = vt.lane_bits() as usize / 8;
        let data: Vec<u8> = lanes
            .iter()
            .flat_map(|x| x.to_le_bytes()[..bytes].to_vec())
            .collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(data));
        self.b.ins().vconst(vt, c)
    }

    fn v_int(&mut self, op: IntOp, ty: PtxType, a: &[Arg]) -> LResult<bool> {
        let it = ty.ir_type();
        let signed = ty.is_signed();
        if let IntOp::Mul(mode @ (MulMode::Wide | MulMode::Hi))
        | IntOp::Mad(mode @ (MulMode::Wide | MulMode::Hi)) = op
        {
            return self.v_wide(op, mode == MulMode::Hi, ty, a);
        }
        let binary = matches!(
            op,
            IntOp::Add { sat: false }
                | IntOp::Sub { sat: false }
                | IntOp::Mul(MulMode::Lo)
                | IntOp::Mad(MulMode::Lo)
                | IntOp::And
                | IntOp::Or
                | IntOp::Xor
        ) || (matches!(op, IntOp::Min | IntOp::Max) && it.bits() <= 32);
        let unary = matches!(op, IntOp::Not | IntOp::Neg);
        let shift = matches!(op, IntOp::Shl | IntOp::Shr)
            && matches!(a.get(2), Some(Arg::Imm(_)))
            && ty != PtxType::Pred;
        let pred_ok =
            ty != PtxType::Pred || matches!(op, IntOp::And | IntOp::Or | IntOp::Xor | IntOp::Not);
        let mul = matches!(op, IntOp::Mul(_) | IntOp::Mad(_));
        let nsrc = if matches!(op, IntOp::Mad(_)) {
            3
        } else if unary || shift {
            1
        } else {
            2
        };
        if !(binary || unary || shift)
            || !pred_ok
            || (mul && it.bits() < 16)
            || !self.v_dst_ok(&a[0], ty)
            || !(1..=nsrc).all(|i| self.v_src_ok(&a[i], ty))
        {
            return Ok(false);
        }
        let x = self.v_read(&a[1], ty)?;
        let r: Wide = if shift {
            let Arg::Imm(imm) = a[2] else { unreachable!() };
            let bits = it.bits() as u64;
            let n = crate::frontend::check::immediate_bits(imm, PtxType::U32).min(bits);
            x.into_iter()
                .map(|x| match op {
                    // Shifted out entirely: zero, or the sign in every bit.
                    IntOp::Shl if n == bits => self.v_splat(x_type(self, x), 0),
                    IntOp::Shl => self.b.ins().ishl_imm_u(x, n as i64),
                    _ if signed => self.b.ins().sshr_imm_u(x, n.min(bits - 1) as i64),
                    _ if n == bits => self.v_splat(x_type(self, x), 0),
                    _ => self.b.ins().ushr_imm_u(x, n as i64),
                })
                .collect()
        } else if unary {
            x.into_iter()
                .map(|x| match op {
                    IntOp::Not if ty == PtxType::Pred => {
                        let one = self.v_splat(x_type(self, x), 1);
                        self.b.ins().bxor(x, one)
                    }
                    IntOp::Not => self.b.ins().bnot(x),
                    _ => self.b.ins().ineg(x),
                })
                .collect()
        } else {
            let y = self.v_read(&a[2], ty)?;
            let c = if nsrc == 3 {
                Some(self.v_read(&a[3], ty)?)
            } else {
                None
            };
            (0..x.len())
                .map(|i| {
                    let (x, y) = (x[i], y[i]);
                    let ins = self.b.ins();
                    match op {
                        IntOp::Add { .. } => ins.iadd(x, y),
                        IntOp::Sub { .. } => ins.isub(x, y),
                        IntOp::And => ins.band(x, y),
                        IntOp::Or => ins.bor(x, y),
                        IntOp::Xor => ins.bxor(x, y),
                        IntOp::Min if signed => ins.smin(x, y),
                        IntOp::Min => ins.umin(x, y),
                        IntOp::Max if signed => ins.smax(x, y),
                        IntOp::Max => ins.umax(x, y),
                        _ => {
                            let p = ins.imul(x, y);
                            match &c {
                                Some(c) => self.b.ins().iadd(p, c[i]),
                                None => p,
                            }
                        }
                    }
                })
                .collect()
        };
        self.v_write(&a[0], r);
        Ok(true)
    }

    /// `mul.wide` / `mad.wide` from 16 or 32 bits, and (`high`) `mul.hi` / `mad.hi`: each
    /// source vector widened into two.
    fn v_wide(&mut self, op: IntOp, high: bool, ty: PtxType, a: &[Arg]) -> LResult<bool> {
        let wide = match ty {
            PtxType::U16 => PtxType::U32,
            PtxType::S16 => PtxType::S32,
            PtxType::U32 => PtxType::U64,
            PtxType::S32 => PtxType::S64,
            _ => return Ok(false),
        };
        let mad = matches!(op, IntOp::Mad(_));
        // `.hi`: the product's upper half, and an addend, of the sources' type.
        let dst_ty = if high { ty } else { wide };
        if !self.v_dst_ok(&a[0], dst_ty)
            || !self.v_src_ok(&a[1], ty)
            || !self.v_src_ok(&a[2], ty)
            || (mad && !self.v_src_ok(&a[3], dst_ty))
        {
            return Ok(false);
        }
        let signed = ty.is_signed();
        let widened = |t: &mut Self, arg: &Arg| -> LResult<Wide> {
            let x = t.v_read(arg, ty)?;
            let mut out = Vec::new();
            for v in x {
                let ins = t.b.ins();
                let (lo, hi) = if signed {
                    (ins.swiden_low(v), t.b.ins().swiden_high(v))
                } else {
                    (ins.uwiden_low(v), t.b.ins().uwiden_high(v))
                };
                out.extend([lo, hi]);
            }
            Ok(out)
        };
        let x = widened(self, &a[1])?;
        // A constant power of two (an element size) is a shift.
        // (Of the type's width, as the one-thread form reads it: a signed type's top bit is
        // a negative multiplier.)
        let shift = match a[2] {
            Arg::Imm(imm) => {
                let bits = ty.bits();
                let k = crate::frontend::check::immediate_bits(imm, ty) & (u64::MAX >> (64 - bits));
                let negative = signed && k >> (bits - 1) == 1;
                (k.is_power_of_two() && !negative).then(|| k.trailing_zeros())
            }
            _ => None,
        };
        let mut r: Wide = match shift {
            Some(s) => x
                .into_iter()
                .map(|x| self.b.ins().ishl_imm_u(x, s as i64))
                .collect(),
            None => {
                let y = widened(self, &a[2])?;
                x.into_iter()
                    .zip(y)
                    .map(|(x, y)| self.b.ins().imul(x, y))
                    .collect()
            }
        };
        if high {
            // (The products of each source vector's low and high lanes: their upper halves
            // are its lanes' results, in order.)
            let part = ty.size();
            let upper = self.v_split(r, 2 * part, 2).pop().expect("two parts");
            r = self.v_as(upper, vector_of(ty.ir_type()).expect("16 or 32 bits"));
        }
        if mad {
            let c = self.v_read(&a[3], dst_ty)?;
            r = r
                .into_iter()
                .zip(c)
                .map(|(r, c)| self.b.ins().iadd(r, c))
                .collect();
        }
        self.v_write(&a[0], r);
        Ok(true)
    }

    /// `setp.cmp.type p, a, b` on integers up to 32 bits and f32: the lanes' masks narrowed
    /// to one `i8x16` of 0/1.
    fn v_setp(&mut self, cmp: CmpOp, ty: PtxType, a: &[Arg]) -> LResult<bool> {
        let it = ty.ir_type();
        let cond = if ty == PtxType::F32 {
            vector_float_cc(cmp)
        } else if ty.is_int() && (16..=32).contains(&it.bits()) {
            super::compare::int_cc(cmp, ty.is_signed()).map(Cc::Int)
        } else {
            None
        };
        let Some(cond) = cond else { return Ok(false) };
        if !self.v_dst_ok(&a[0], PtxType::Pred)
            || !self.v_src_ok(&a[1], ty)
            || !self.v_src_ok(&a[2], ty)
        {
            return Ok(false);
        }
        if let Cc::Int(cc) = cond
            && let Some((lane_zero, other, cc)) = self.unit_stride_against_uniform(cc, a)
        {
            // Lanes that cross the end of the compared range are rare: there, lane values.
            let other = self.v_read_uniform(other, ty).expect("uniform")?;
            let fits = self.lanes_stay_ordered(lane_zero, cc);
            let (ranged, general) = self.branch_cold(fits, false);
            let join = self.b.create_block();
            self.b.switch_to_block(ranged);
            let p = self.v_lanes_in_range(lane_zero, other, cc);
            self.v_write(&a[0], p);
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(general);
            self.v_setp_lanes(cond, ty, a)?;
            self.b.ins().jump(join, &[]);
            self.b.seal_block(join);
            self.b.switch_to_block(join);
            return Ok(true);
        }
        self.v_setp_lanes(cond, ty, a)?;
        Ok(true)
    }

    /// [`v_setp`](Self::v_setp)'s general form: both operands' lanes compared.
    fn v_setp_lanes(&mut self, cond: Cc, ty: PtxType, a: &[Arg]) -> LResult<()> {
        let x = self.v_read(&a[1], ty)?;
        let y = self.v_read(&a[2], ty)?;
        let masks: Wide = x
            .into_iter()
            .zip(y)
            .map(|(x, y)| match cond {
                Cc::Int(cc) => self.b.ins().icmp(cc, x, y),
                Cc::Float(cc) => self.b.ins().fcmp(cc, x, y),
                // Ordered and not equal.
                Cc::FloatOrderedNe => {
                    let ord = self.b.ins().fcmp(FloatCC::Ordered, x, y);
                    let ne = self.b.ins().fcmp(FloatCC::NotEqual, x, y);
                    self.b.ins().band(ord, ne)
                }
            })
            .collect();
        let p = self.v_predicates(masks);
        self.v_write(&a[0], p);
        Ok(())
    }

    /// Masks (all ones where a lane's condition holds, else zero; one lane a thread) as the
    /// group's predicate vectors: sixteen lanes a vector, 1 or 0.
    fn v_predicates(&mut self, mut masks: Wide) -> Wide {
        // All-ones/zero lanes narrow with signed saturation, keeping all-ones/zero.
        while masks.len() > self.width() / 16 {
            masks = masks
                .chunks(2)
                .map(|pair| self.b.ins().snarrow(pair[0], pair[1]))
                .collect();
        }
        masks.into_iter().map(|m| self.b.ins().ineg(m)).collect()
    }

    /// For a 32-bit `setp` (`cc` on `a[1]`, `a[2]`) of a value whose lane k is lane 0's + k
    /// (`%tid.x`, or a lane-affine register of stride 1) against one the same in every lane:
    /// lane 0's value, the other operand, and the comparison with the lane-affine one first.
    fn unit_stride_against_uniform<'a>(
        &mut self,
        cc: IntCC,
        a: &'a [Arg],
    ) -> Option<(Value, &'a Arg, IntCC)> {
        let lanes = self.lanes.as_ref().expect("grouped");
        let lane_zero = |arg: &Arg| match *arg {
            Arg::Special(Special::Tid(Dim::X)) => Some(lanes.first[0]),
            Arg::Reg(r) if lanes.strides[r as usize] == Some(1) => {
                (self.func.regs[r as usize].ty.bits() == 32).then(|| lanes.scalars[r as usize])
            }
            _ => None,
        };
        let varies = |arg: &Arg| match arg {
            Arg::Reg(r) | Arg::Not(r) => !lanes.uniform[*r as usize],
            Arg::Special(Special::Tid(Dim::X)) => true,
            _ => false,
        };
        let (var, other, cc) = match (lane_zero(&a[1]), lane_zero(&a[2])) {
            (Some(x), None) if !varies(&a[2]) => (x, &a[2], cc),
            (None, Some(y)) if !varies(&a[1]) => (y, &a[1], cc.swap_args()),
            _ => return None,
        };
        Some((self.b.use_var(var), other, cc))
    }

    /// Whether the group's lanes `lane_zero + k` stay in order under `cc`: lane 0's value
    /// plus the width does not pass the end of the signed or unsigned 32-bit range.
    fn lanes_stay_ordered(&mut self, lane_zero: Value, cc: IntCC) -> Value {
        let last = self.width() as i64 - 1;
        let end = if is_signed_cc(cc) {
            i32::MAX as i64
        } else {
            u32::MAX as i64
        };
        let x = self.extend_for(cc, lane_zero);
        self.b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, x, end - last)
    }

    /// The predicate `lane_zero + k  cc  other` of every lane k, where the lanes stay in order
    /// ([`lanes_stay_ordered`](Self::lanes_stay_ordered)): the lanes where it holds are one
    /// range [lo, hi) of k (the complement of one, for `ne`), found from the difference
    /// `other − lane_zero` once; each 16 lanes are then one vector compare of k.
    fn v_lanes_in_range(&mut self, lane_zero: Value, other: Value, cc: IntCC) -> Wide {
        let width = self.width() as i64;
        let x = self.extend_for(cc, lane_zero);
        let y = self.extend_for(cc, other);
        let d = self.b.ins().isub(y, x);
        let d_next = self.b.ins().iadd_imm_s(d, 1);
        let zero = self.b.ins().iconst(types::I64, 0);
        let all = self.b.ins().iconst(types::I64, width);
        // k < d ⟺ k in [0, d) ...
        let (lo, hi) = match cc {
            IntCC::SignedLessThan | IntCC::UnsignedLessThan => (zero, d),
            IntCC::SignedLessThanOrEqual | IntCC::UnsignedLessThanOrEqual => (zero, d_next),
            IntCC::SignedGreaterThan | IntCC::UnsignedGreaterThan => (d_next, all),
            IntCC::SignedGreaterThanOrEqual | IntCC::UnsignedGreaterThanOrEqual => (d, all),
            // `eq`; `ne` is its complement.
            _ => (d, d_next),
        };
        let clamp = |t: &mut Self, v: Value| {
            let v = t.b.ins().smax(v, zero);
            let v = t.b.ins().smin(v, all);
            t.b.ins().ireduce(types::I8, v)
        };
        let (lo, hi) = (clamp(self, lo), clamp(self, hi));
        let len = self.b.ins().isub(hi, lo);
        let (lo, len) = (
            self.b.ins().splat(types::I8X16, lo),
            self.b.ins().splat(types::I8X16, len),
        );
        (0..width as u64 / 16)
            .map(|c| {
                let k: Vec<u64> = (16 * c..16 * c + 16).collect();
                let k = self.v_const(types::I8X16, &k);
                // k − lo wraps far above len where k < lo.
                let offset = self.b.ins().isub(k, lo);
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, offset, len);
                let inside = self.b.ins().ineg(inside);
                if cc == IntCC::NotEqual {
                    let one = self.v_splat(types::I8X16, 1);
                    self.b.ins().bxor(inside, one)
                } else {
                    inside
                }
            })
            .collect()
    }

    /// A 32-bit `x` extended to 64 bits as `cc` compares it (signed or not).
    fn extend_for(&mut self, cc: IntCC, x: Value) -> Value {
        if is_signed_cc(cc) {
            self.b.ins().sextend(types::I64, x)
        } else {
            self.b.ins().uextend(types::I64, x)
        }
    }

    /// Half `add sub mul fma` through the precompiled group helper (`crate::native`), when
    /// the host has it: one call for all the group's lanes.
    fn v_half(&mut self, op: FloatOp, ty: PtxType, mods: FloatMods, a: &[Arg]) -> LResult<bool> {
        let nsrc = op.sources();
        let Some(code) = crate::native::code(op, mods, ty) else {
            return Ok(false);
        };
        if !self.v_dst_ok(&a[0], ty) || !(1..=nsrc).all(|i| self.v_src_ok(&a[i], ty)) {
            return Ok(false);
        }
        let Some(group) = self.callees.group_helpers else {
            return Ok(false);
        };
        // Through the stack area of `lane_by_lane` (from its `helper_addr`): the result at 0,
        // the sources after it, each the group's lanes (4 bytes a lane at most); a source the
        // same in every lane is its 32-bit value, passed in place of the pointer (a bit in
        // `uniform`).
        let spill = self.lanes.as_ref().expect("grouped").spill;
        let area = self.helper_addr(spill);
        let flags = MemFlagsData::trusted();
        let vt = vector_of(ty.ir_type()).expect("half");
        let width = self.width();
        let place = |operand: usize, chunk: usize| (operand * width * 4 + chunk * 16) as i32;
        let mut pointers = Vec::new();
        let mut uniform = 0;
        for (i, arg) in a[1..=nsrc].iter().enumerate() {
            if let Some(x) = self.v_read_uniform(arg, ty) {
                let mut x = x?;
                if ty.size() == 2 {
                    // A half: the same in both halves of the pair.
                    let wide = self.b.ins().uextend(types::I32, x);
                    let high = self.b.ins().ishl_imm_u(wide, 16);
                    x = self.b.ins().bor(wide, high);
                }
                uniform |= 1 << i;
                pointers.push(self.b.ins().uextend(types::I64, x));
            } else if let &Arg::Reg(r) = arg
                && self.home(r).is_some()
            {
                // (Or, for a load forwarded to it, where the load would have read.)
                pointers.push(self.home_addr(r));
            } else {
                for (c, v) in self.v_read(arg, ty)?.into_iter().enumerate() {
                    self.b.ins().store(flags, v, area, place(1 + i, c));
                }
                pointers.push(self.b.ins().iadd_imm_s(area, place(1 + i, 0) as i64));
            }
        }
        // (An add's third pointer is never read.)
        while pointers.len() < 3 {
            pointers.push(pointers[0]);
        }
        let home = self.home_of(&a[0]);
        let dst = match home {
            Some(home) => self.helper_addr(home),
            None => area,
        };
        let halves = width as u32 * ty.size() / 2;
        let halves = self.b.ins().iconst(types::I32, halves as i64);
        let mut args = vec![dst];
        args.extend(pointers);
        args.push(halves);
        // By its address: an instance for each code and set of uniform sources, of which a
        // module declares none (a symbol each would cost every compile).
        let helper = group.get(code, uniform) as usize;
        let callee = self.b.ins().iconst(types::I64, helper as i64);
        let signature = self.lanes.as_ref().and_then(|l| l.helper_signature);
        let signature = signature.expect("a signature where the group helpers are");
        self.b.ins().call_indirect(signature, callee, &args);
        if home.is_none() {
            let r = (0..width / vt.lane_count() as usize)
                .map(|c| self.b.ins().load(vt, flags, area, place(0, c)))
                .collect();
            self.v_write(&a[0], r);
        }
        Ok(true)
    }

    /// Where `arg`'s register lives, if it is kept in memory (`lanes::homes`).
    fn home_of(&self, arg: &Arg) -> Option<cranelift_codegen::ir::StackSlot> {
        match arg {
            Arg::Reg(r) => self.home(*r),
            _ => None,
        }
    }

    /// f32 arithmetic for the whole group, as `lower::float` computes it: `add sub mul fma`
    /// to nearest, `div sqrt rcp rsqrt` (IEEE, whatever `.rn`/`.approx`/`.full`), `min max`
    /// (±0 ordered, one NaN operand gives the other), `neg abs` (bits, NaNs unchanged);
    /// `.ftz` on the inputs and the result, `.sat`, NaN results canonical.
    fn v_f32(&mut self, op: FloatOp, mods: FloatMods, a: &[Arg]) -> LResult<bool> {
        let ty = PtxType::F32;
        let allowed = FloatMods {
            rnd: mods.rnd,
            ftz: mods.ftz,
            sat: mods.sat,
            approx: mods.approx,
            full: mods.full,
            ..FloatMods::default()
        };
        let supported = match op {
            FloatOp::Fma => host_has_fma(),
            FloatOp::Add
            | FloatOp::Sub
            | FloatOp::Mul
            | FloatOp::Div
            | FloatOp::Sqrt
            | FloatOp::Rcp
            | FloatOp::Rsqrt
            | FloatOp::Min
            | FloatOp::Max
            | FloatOp::Neg
            | FloatOp::Abs => true,
            _ => false,
        };
        let nsrc = op.sources();
        if !supported
            || mods != allowed
            || !matches!(mods.rnd, None | Some(Rounding::Rn))
            || !self.v_dst_ok(&a[0], ty)
            || !(1..=nsrc).all(|i| self.v_src_ok(&a[i], ty))
        {
            return Ok(false);
        }
        let mut x = Vec::new();
        for arg in &a[1..=nsrc] {
            let v = self.v_read(arg, ty)?;
            x.push(if mods.ftz { self.v_flush_f32(v) } else { v });
        }
        let one = self.b.ins().f32const(1.0);
        let one = self.b.ins().splat(types::F32X4, one);
        let gpu = self.gpu_approximations;
        let r: Wide = (0..x[0].len())
            .map(|c| {
                let ins = self.b.ins();
                match op {
                    // (The approximate forms as `lower::float` computes them: `lower::mufu`.)
                    FloatOp::Div if gpu && mods.full => {
                        mufu::div_full(self.b, x[0][c], x[1][c], mods.ftz)
                    }
                    FloatOp::Div if gpu && mods.approx => {
                        mufu::div_approx(self.b, x[0][c], x[1][c], mods.ftz)
                    }
                    FloatOp::Rcp if gpu && mods.approx => mufu::rcp(self.b, x[0][c]),
                    FloatOp::Rsqrt if gpu => mufu::rsqrt(self.b, x[0][c]),
                    FloatOp::Rsqrt => {
                        let s = ins.sqrt(x[0][c]);
                        self.b.ins().fdiv(one, s)
                    }
                    FloatOp::Add => ins.fadd(x[0][c], x[1][c]),
                    FloatOp::Sub => ins.fsub(x[0][c], x[1][c]),
                    FloatOp::Mul => ins.fmul(x[0][c], x[1][c]),
                    FloatOp::Fma => ins.fma(x[0][c], x[1][c], x[2][c]),
                    FloatOp::Div => ins.fdiv(x[0][c], x[1][c]),
                    FloatOp::Sqrt => ins.sqrt(x[0][c]),
                    FloatOp::Rcp => ins.fdiv(one, x[0][c]),
                    FloatOp::Neg => ins.fneg(x[0][c]),
                    FloatOp::Abs => ins.fabs(x[0][c]),
                    _ => super::softfloat::min_max(self.b, op == FloatOp::Max, x[0][c], x[1][c]),
                }
            })
            .collect();
        let mut r = r;
        if mods.sat {
            r = r
                .into_iter()
                .map(|v| super::softfloat::saturate(self.b, v))
                .collect();
        }
        if mods.ftz {
            r = match op {
                // (A sum below the smallest normal is exact: only a product can round up to
                // it. See `lower::float`.)
                FloatOp::Mul | FloatOp::Fma => self.v_flush_product_f32(op, &x, r),
                _ => self.v_flush_f32(r),
            };
        }
        if !op.is_sign_operation() && self.nan_seen(&a[0]) {
            r = r
                .into_iter()
                .map(|v| super::softfloat::canonicalize_f32(self.b, v))
                .collect();
        }
        self.v_write(&a[0], r);
        Ok(true)
    }

    /// `.ftz` on the f32 lanes `r` of `mul` or `fma` of `x`, rounded to nearest, as
    /// `Translator::flush_result_f32` does for one: subnormals flushed here; a vector with a
    /// lane at the smallest normal (rare) decided lane by lane out of line.
    fn v_flush_product_f32(&mut self, op: FloatOp, x: &[Wide], r: Wide) -> Wide {
        let arith = Arith::of(op).expect("mul or fma");
        let flushed = self.v_flush_f32(r.clone());
        let mut out = Wide::new();
        for (c, (&r, flushed)) in r.iter().zip(flushed).enumerate() {
            let bits = self.b.ins().bitcast(types::I32X4, bits::lane_order(), r);
            let magnitude = self.v_splat(types::I32X4, 0x7FFF_FFFF);
            let magnitude = self.b.ins().band(bits, magnitude);
            let smallest = self.v_splat(types::I32X4, f32::MIN_POSITIVE.to_bits() as i64);
            let at = self.b.ins().icmp(IntCC::Equal, magnitude, smallest);
            let any = self.b.ins().vany_true(at);
            let cold = self.b.create_block();
            let done = self.b.create_block();
            let result = self.b.append_block_param(done, types::F32X4);
            self.b.ins().brif(any, cold, &[], done, &[flushed.into()]);
            self.b.seal_block(cold);
            self.b.set_cold_block(cold);
            self.b.switch_to_block(cold);
            let mut v = flushed;
            for lane in 0..4u8 {
                let xs: Vec<Value> = x
                    .iter()
                    .map(|w| self.b.ins().extractlane(w[c], lane))
                    .collect();
                let r = self.b.ins().extractlane(r, lane);
                let decided = self.call_flush_result_f32(arith, None, &xs, r);
                v = self.b.ins().insertlane(v, decided, lane);
            }
            self.b.ins().jump(done, &[v.into()]);
            self.b.seal_block(done);
            self.b.switch_to_block(done);
            out.push(result);
        }
        out
    }

    /// `.ftz` of f32 lanes: subnormals become zero of the same sign.
    fn v_flush_f32(&mut self, v: Wide) -> Wide {
        v.into_iter()
            .map(|f| {
                let bits = self.b.ins().bitcast(types::I32X4, bits::lane_order(), f);
                let bits = self.v_flush_f32_bits(bits);
                self.b.ins().bitcast(types::F32X4, bits::lane_order(), bits)
            })
            .collect()
    }

    /// `ld`/`st` of `vec` elements of type `ty` a lane (up to 16 bytes) in global or generic
    /// memory through a 64-bit address register (`value` is the load's destination; none for
    /// a store): when the lanes' addresses are contiguous (or, for a load, a known stride the
    /// span can be read over) and the range passes its checks, vector loads or stores; else
    /// lane by lane.
    #[allow(clippy::too_many_arguments)]
    fn v_access(
        &mut self,
        inst: &Inst,
        pos: usize,
        space: StateSpace,
        ty: PtxType,
        vec: u8,
        addr: &Arg,
        value: Option<&Arg>,
    ) -> LResult<bool> {
        // A lane's bytes: its elements' (`.v2`, `.v4`) one after another.
        let width = ty.size() * u32::from(vec);
        let &Arg::Addr {
            base: AddrBase::Reg(base),
            offset,
        } = addr
        else {
            return Ok(false);
        };
        let Some(elements) = access_elements(value.unwrap_or(&inst.args[1]), vec) else {
            return Ok(false);
        };
        // An integer element narrower than its register: a load extends by the access's
        // signedness, a store keeps the register's low bytes (the one-thread `coerce`).
        let reg_bytes: Vec<Option<u32>> = elements
            .iter()
            .map(|e| match *e {
                Arg::Reg(r) => {
                    let rt = self.func.regs[r as usize].ty;
                    (ty.is_int() && rt.is_int() && rt.size() > ty.size()).then(|| rt.size())
                }
                _ => None,
            })
            .collect();
        let held_ty = |b: Option<u32>| b.map_or(Some(ty), |b| bits_type(8 * b));
        let data_ok = elements.iter().zip(&reg_bytes).all(|(e, &b)| {
            held_ty(b).is_some_and(|t| match value {
                Some(_) => matches!(e, Arg::Sink) || self.v_dst_ok(e, t),
                None => self.v_src_ok(e, t),
            })
        });
        // Shared memory: where the lanes' offsets are contiguous, known when compiling (a
        // lane-affine register of the access's width).
        let shared = space == StateSpace::Shared
            && self.lanes.as_ref().expect("grouped").strides[base as usize]
                == Some(i64::from(width));
        let (global, wide_base) = (
            matches!(space, StateSpace::Global | StateSpace::Generic),
            self.func.regs[base as usize].ty.ir_type() == types::I64,
        );
        // Shared memory at offsets that are not one range (Triton's layout conversions): a
        // 32-bit offset register, each lane's element on its own (`v_scattered`).
        let scattered = space == StateSpace::Shared
            && !shared
            && !self.is_uniform_reg(base)
            && self.func.regs[base as usize].ty.bits() == 32
            && width <= 8;
        if !(shared || scattered || global && wide_base && !self.is_uniform_reg(base))
            || !matches!(width, 1 | 2 | 4 | 8 | 16)
            || ty == PtxType::Pred
            || !data_ok
        {
            return Ok(false);
        }
        // The distance between lanes: the access's width (contiguous), or, lanes further
        // apart (Triton's elements of a thread's run, one access each):
        // - for a load of one element a lane in a confined module, 4, 8 or 16 bytes, a
        //   multiple of the width: the lanes' whole span is read, its range checked
        //   (confinement), and each lane's element picked out of its run;
        // - for a store, up to 64 bytes: the span's range checked, each lane's bytes stored
        //   on their own (writing the span back would overwrite the bytes between them,
        //   which other threads may be writing).
        let stride = match self.lanes.as_ref().expect("grouped").strides[base as usize] {
            _ if scattered => width,
            None => width,
            Some(s) if s == i64::from(width) => width,
            Some(s @ (4 | 8 | 16))
                if value.is_some()
                    && vec == 1
                    && self.confined
                    && s > i64::from(width)
                    && s % i64::from(width) == 0 =>
            {
                s as u32
            }
            Some(s)
                if value.is_none() && width <= 8 && (i64::from(width) + 1..=64).contains(&s) =>
            {
                s as u32
            }
            // Lanes a known distance apart, not the access's width: never contiguous.
            Some(_) => return Ok(false),
        };
        // A store's lanes, as vectors of its wholes (each lane's `width` bytes).
        let stored = match value {
            Some(_) => None,
            None => {
                let mut parts = Vec::new();
                for (e, &b) in elements.iter().zip(&reg_bytes) {
                    let v = self.v_read(e, held_ty(b).expect("checked"))?;
                    parts.push(match b {
                        Some(b) => self.v_resize(v, b, ty.size(), false),
                        None => v,
                    });
                }
                Some(self.v_join(parts, ty.size()))
            }
        };
        let span = stride * self.width() as u32;
        // Lane 0's host address and whether the lanes' range is accessible; or, scattered,
        // each lane's offset and whether every lane's element is.
        let (first, ok, offsets) = if scattered {
            let (offsets, ok) = self.v_scattered_offsets(base, offset, width)?;
            (None, ok, offsets)
        } else {
            let (first, together) = if shared {
                // Lane 0's host address, from its offset (the register's scalar).
                self.enter_scalars();
                let first = self.address(addr, space);
                self.enter_scalars();
                (first?, self.b.ins().iconst(types::I8, 1))
            } else {
                self.v_lanes_apart(base, offset, stride)?
            };
            let ok = if self.confined {
                let (ok, _) = self.accessible(first, space, span, width);
                self.b.ins().band(ok, together)
            } else {
                together
            };
            (Some(first), ok, Wide::new())
        };
        let (fast, slow) = self.branch_cold(ok, false);
        let join = self.b.create_block();

        self.b.switch_to_block(fast);
        if let Some(first) = first
            && self.lanes.as_ref().expect("grouped").in_loop[pos]
            && !shared
            && (stored.is_none() || !self.loaded_from(base, offset))
        {
            self.prefetch_ahead(first, span);
        }
        // A load a group helper reads next from the buffer itself (`lanes::forward`): where
        // the register's value is, on each path.
        let forward = match (first, elements) {
            (Some(first), &[Arg::Reg(r)]) if value.is_some() && !shared && stride == width => {
                self.forward_end(pos).map(|end| (r, end, first))
            }
            _ => None,
        };
        let forward = forward.map(|(r, end, first)| {
            let at = self.b.declare_var(types::I64);
            self.b.def_var(at, first);
            (r, end, at)
        });
        let flags = MemFlagsData::new();
        match stored {
            None if forward.is_some() => {}
            None => {
                let vt = if vec == 1 && stride == width {
                    vector_of(ty.ir_type()).expect("checked")
                } else {
                    types::I8X16
                };
                let n = (span / 16) as usize;
                let loaded: Wide = match first {
                    Some(first) => (0..n)
                        .map(|c| self.b.ins().load(vt, flags, first, 16 * c as i32))
                        .collect(),
                    None => self.v_gather(&offsets, width),
                };
                let parts = if stride == width {
                    self.v_split(loaded, width, vec as usize)
                } else {
                    vec![self.v_first_part(loaded, stride, width)]
                };
                for ((e, &b), v) in elements.iter().zip(&reg_bytes).zip(parts) {
                    if matches!(e, Arg::Sink) {
                        continue;
                    }
                    let et = vector_of(ty.ir_type()).expect("checked");
                    let v = self.v_as(v, et);
                    let v = match b {
                        Some(b) => self.v_resize(v, ty.size(), b, ty.is_signed()),
                        None => v,
                    };
                    self.v_write(e, v);
                }
            }
            Some(v) if scattered => self.v_scatter(&offsets, width, v),
            Some(v) if stride == width => {
                let first = first.expect("contiguous");
                for (c, v) in v.into_iter().enumerate() {
                    self.b.ins().store(flags, v, first, 16 * c as i32);
                }
            }
            Some(v) => {
                let first = first.expect("lanes apart");
                let lane = bits_type(8 * width).expect("1 to 8 bytes").ir_type();
                let vt = vector_of(lane).expect("a lane");
                let per = 16 / width as usize;
                let v = self.v_as(v, vt);
                for k in 0..self.width() {
                    let x = self.b.ins().extractlane(v[k / per], (k % per) as u8);
                    self.b
                        .ins()
                        .store(flags, x, first, (k as u32 * stride) as i32);
                }
            }
        }
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(slow);
        self.lane_by_lane_looped(inst)?;
        if let Some((r, _, at)) = forward {
            let home = self
                .home(r)
                .expect("a forwarded register is kept in memory");
            let home = self.helper_addr(home);
            self.b.def_var(at, home);
        }
        self.b.ins().jump(join, &[]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        if let Some((r, end, at)) = forward {
            self.begin_forward(r, at, end);
        }
        Ok(true)
    }

    /// Whether guard `g` holds in every lane (an `i8`, 0 or 1), and, where its lanes may
    /// differ, the mask of those where it holds ([`guard_lanes`](Self::guard_lanes)).
    fn guard_everywhere(&mut self, g: Guard) -> (Value, Option<Value>) {
        if self.is_uniform_reg(g.reg) {
            let p = self.lanes.as_ref().expect("grouped").scalars[g.reg as usize];
            let p = self.b.use_var(p);
            let holds = if g.negated {
                self.b.ins().bxor_imm_u(p, 1)
            } else {
                p
            };
            return (holds, None);
        }
        let mask = self.guard_lanes(g);
        let all = self.every_lane();
        (self.b.ins().icmp_imm_u(IntCC::Equal, mask, all), Some(mask))
    }

    /// Lane 0's address through the 64-bit register `base` plus `offset`, and whether the
    /// lanes' addresses are lane 0's + k × `stride` (an `i8`). Known when the kernel is
    /// compiled for a lane-affine register of that stride, but for a widening that crossed
    /// the 32-bit range's end between lanes (a flag the group code keeps); else tested.
    fn v_lanes_apart(&mut self, base: u32, offset: i64, stride: u32) -> LResult<(Value, Value)> {
        let lanes = self.lanes.as_ref().expect("grouped");
        if lanes.strides[base as usize] == Some(i64::from(stride)) {
            let (lane0, in_range) = (lanes.scalars[base as usize], lanes.in_range[base as usize]);
            let lane0 = self.b.use_var(lane0);
            let together = match in_range {
                Some(flag) => self.b.use_var(flag),
                None => self.b.ins().iconst(types::I8, 1),
            };
            return Ok((self.b.ins().iadd_imm_s(lane0, offset), together));
        }
        let addrs = self.v_read(&Arg::Reg(base), PtxType::U64)?;
        // Every lane's address minus k × stride is the first lane's.
        let first_base = self.b.ins().extractlane(addrs[0], 0);
        let expected = self.b.ins().splat(types::I64X2, first_base);
        let mut apart = None;
        for (c, &v) in addrs.iter().enumerate() {
            let k = 2 * c as u64 * u64::from(stride);
            let step = self.v_const(types::I64X2, &[k, k + u64::from(stride)]);
            let v = self.b.ins().isub(v, step);
            let d = self.b.ins().bxor(v, expected);
            apart = Some(match apart {
                None => d,
                Some(acc) => self.b.ins().bor(acc, d),
            });
        }
        let apart = self.b.ins().vany_true(apart.expect("lanes"));
        let first = self.b.ins().iadd_imm_s(first_base, offset);
        Ok((first, self.b.ins().bxor_imm_u(apart, 1)))
    }

    /// Whether some load of the function reads through the same address operand (a store
    /// there needs no prefetch of its own: the load's brought the lines in).
    fn loaded_from(&self, base: u32, offset: i64) -> bool {
        self.func.body.iter().flatten().any(|inst| {
            matches!(
                (inst.op, inst.args.get(1)),
                (Op::Ld { .. }, Some(&Arg::Addr { base: AddrBase::Reg(b), offset: o }))
                    if (b, o) == (base, offset)
            )
        })
    }

    /// At a contiguous access of `bytes` from `first` inside a loop: the site's distance
    /// since its last run and, when far, a prefetch of the range eight such distances ahead
    /// (`crate::prefetch`).
    fn prefetch_ahead(&mut self, first: Value, bytes: u32) {
        let Some(f) = self.native_helper_ref(crate::prefetch::SYMBOL) else {
            return;
        };
        let last =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        let last = self.b.ins().stack_addr(types::I64, last, 0);
        let flags = MemFlagsData::trusted();
        let before = self.b.ins().load(types::I64, flags, last, 0);
        self.b.ins().store(flags, first, last, 0);
        let step = self.b.ins().isub(first, before);
        let size = self.b.ins().iabs(step);
        let far = self.b.ins().icmp_imm_u(
            IntCC::UnsignedGreaterThanOrEqual,
            size,
            crate::prefetch::FAR,
        );
        let (prefetch, on) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(far, prefetch, &[], on, &[]);
        self.b.seal_block(prefetch);
        self.b.switch_to_block(prefetch);
        let ahead = self
            .b
            .ins()
            .ishl_imm_u(step, crate::prefetch::DISTANCE_SHIFT);
        let at = self.b.ins().iadd(first, ahead);
        let bytes = self.b.ins().iconst(types::I64, i64::from(bytes));
        self.b.ins().call(f, &[at, bytes]);
        self.b.ins().jump(on, &[]);
        self.b.seal_block(on);
        self.b.switch_to_block(on);
    }
}

/// The type of a value (for constants of the same shape).
fn x_type(t: &Translator, v: Value) -> Type {
    t.b.func.dfg.value_type(v)
}

/// Whether the host has fused multiply-add (Cranelift's vector `fma` needs it).
fn host_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether `cc` compares integers as signed.
fn is_signed_cc(cc: IntCC) -> bool {
    cc != cc.unsigned()
}

#[derive(Clone, Copy)]
enum Cc {
    Int(IntCC),
    Float(FloatCC),
    FloatOrderedNe,
}

/// The f32 comparisons (`compare::float_cc`) that the x86-64 vector compare does in one
/// instruction, or ordered `ne` in two.
fn vector_float_cc(cmp: CmpOp) -> Option<Cc> {
    use FloatCC::*;
    match super::compare::float_cc(cmp)? {
        OrderedNotEqual => Some(Cc::FloatOrderedNe),
        cc @ (Equal | LessThan | LessThanOrEqual | GreaterThan | GreaterThanOrEqual | NotEqual
        | Ordered | Unordered) => Some(Cc::Float(cc)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_register_type_has_a_vector_of_the_group_or_none() {
        for t in [
            types::I8,
            types::I16,
            types::I32,
            types::I64,
            types::F32,
            types::F64,
        ] {
            let vt = vector_of(t).expect("vector");
            assert_eq!(vt.bits(), 128);
            assert_eq!(16 % vt.lane_count() as usize, 0, "a group's 16 or 32 lanes");
        }
        assert!(vector_of(types::I128).is_none());
    }
}
