//! Warp collectives inside a group: `shfl.sync`, `vote.sync`, `redux.sync` (integer),
//! `elect.sync`, `activemask`, `bar.warp.sync`, `ldmatrix` and `mma` (but f64's:
//! `crate::mma::group_mma`).
//!
//! A group of 32 lanes or more holds whole warps (its width divides `ntid.x`, a multiple of
//! 32), and in the group code every lane is at the same instruction with none exited. Where
//! the membermask names the whole warp, `crate::sync::after_round` would perform the
//! collective with all 32 lanes as members; these forms compute the same results from the
//! group's vectors (`ldmatrix` from the rows each lane names, each lane's address checked
//! as one thread's is), without ending the round (no lane's registers through its frame). A
//! membermask in a register is tested at run time: where it names fewer lanes, the group
//! waits at the collective as before (`lanes::coop`). Lanes that reach a collective alone
//! (after a divergence) wait at it as one thread does, and go on alone after it where its
//! membermask is known: they form a group again at the next sync point they all wait at,
//! and the group code has no resume path at the collective (one cost 4,000 Cranelift
//! instructions at 32 lanes, Triton's softmax's fourteen shuffles a third of its compile).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, InstBuilder, InstructionData, MemFlagsData, Opcode, Value, ValueDef, types,
};

use super::Wide;
use crate::frontend::ast::{Immediate, StateSpace};
use crate::frontend::checked::{AddrBase, Arg, Inst, MmaForm, Op, ReduxOp, ShflMode, VoteMode};
use crate::lower::{LResult, Translator};
use crate::types::PtxType;

/// Whether `inst` is a warp collective that a group of whole warps may compute
/// ([`Translator::v_collective_members`] says where it does).
pub(in crate::lower) fn in_group(inst: &Inst) -> bool {
    inst.guard.is_none()
        && match inst.op {
            Op::Mma(form) => crate::mma::group_code(form).is_some(),
            op => matches!(
                op,
                Op::Shfl(_)
                    | Op::Vote(_)
                    | Op::Redux { .. }
                    | Op::Elect
                    | Op::Activemask
                    | Op::WarpSync
                    | Op::WarpMatrix { store: false, .. }
            ),
        }
}

/// Lanes in a warp.
const WARP: usize = 32;

/// Whether a collective's lanes are all members.
pub(in crate::lower) enum Members<'a> {
    /// Known from the instruction: an immediate membermask of every lane (or none).
    Known,
    /// Where this uniform register's membermask is every lane ([`Translator::v_members`]).
    InRegister(&'a Arg),
}

impl Translator<'_, '_> {
    /// Whether warp collective `inst` has a vector form in this group, and where its lanes
    /// are all members.
    pub(in crate::lower) fn v_collective_members<'a>(&self, inst: &'a Inst) -> Option<Members<'a>> {
        if self.width() < WARP || !in_group(inst) {
            return None;
        }
        let a = &inst.args;
        let (dst, pred) = a.first().map_or((&Arg::Sink, None), Arg::split_pair);
        let dst_ok = |d: &Arg, ty: PtxType| {
            matches!(d, Arg::Sink)
                || (self.v_dst_ok(d, ty)
                    && matches!(d, Arg::Reg(r)
                        if self.lanes.as_ref().expect("grouped").strides[*r as usize].is_none()))
        };
        let pred_ok = || pred.is_none_or(|p| dst_ok(p, PtxType::Pred));
        let mask = match inst.op {
            Op::Shfl(_)
                if dst_ok(dst, PtxType::B32)
                    && pred_ok()
                    && a[1..4].iter().all(|x| self.v_src_ok(x, PtxType::B32)) =>
            {
                &a[4]
            }
            Op::Vote(mode) => {
                let ty = match mode {
                    VoteMode::Ballot => PtxType::B32,
                    _ => PtxType::Pred,
                };
                if !(dst_ok(dst, ty) && self.v_src_ok(&a[1], PtxType::Pred)) {
                    return None;
                }
                &a[2]
            }
            Op::Redux { op, ty }
                if !matches!(op, ReduxOp::Float { .. })
                    && ty.size() == 4
                    && dst_ok(dst, ty)
                    && self.v_src_ok(&a[1], ty) =>
            {
                &a[2]
            }
            Op::Elect if dst_ok(dst, PtxType::B32) && pred_ok() => &a[1],
            Op::WarpSync => &a[0],
            Op::Activemask if dst_ok(dst, PtxType::B32) => return Some(Members::Known),
            // (`ldmatrix` takes the whole warp.)
            Op::WarpMatrix { num, .. }
                if self.elements(dst).len() == num as usize
                    && self.elements(dst).iter().all(|d| dst_ok(d, PtxType::B32)) =>
            {
                return Some(Members::Known);
            }
            // (`mma.sync.aligned` takes the whole warp.)
            Op::Mma(form) => {
                let [d, x, y, c] = mma_operands(inst, form)?;
                let ok = d.iter().all(|d| dst_ok(d, PtxType::B32))
                    && [x, y, c]
                        .concat()
                        .iter()
                        .all(|s| self.v_src_ok(s, PtxType::B32));
                return ok.then_some(Members::Known);
            }
            _ => return None,
        };
        match mask {
            Arg::Imm(Immediate::Int(m)) if *m as u32 == u32::MAX => Some(Members::Known),
            Arg::Reg(r)
                if self.lanes.as_ref().expect("grouped").constants[*r as usize]
                    .is_some_and(|m| m as u32 == u32::MAX) =>
            {
                Some(Members::Known)
            }
            Arg::Reg(r) if self.is_uniform_reg(*r) => Some(Members::InRegister(mask)),
            _ => None,
        }
    }

    /// Whether uniform membermask `mask` names every lane (an `i8`).
    pub(in crate::lower) fn v_members(&mut self, mask: &Arg) -> LResult<Value> {
        let m = self
            .v_read_uniform(mask, PtxType::B32)
            .expect("a uniform register")?;
        Ok(self.b.ins().icmp_imm_s(IntCC::Equal, m, -1))
    }

    /// Warp collective `inst` (whose [`v_collective_members`](Self::v_collective_members)
    /// holds) for every warp of the group: its results as `after_round` writes them.
    pub(in crate::lower) fn v_collective(&mut self, inst: &Inst) -> LResult {
        let a = &inst.args;
        let (dst, pred) = a.first().map_or((&Arg::Sink, None), Arg::split_pair);
        let warps = self.width() / WARP;
        match inst.op {
            Op::Shfl(mode) => {
                let (value, p) = self.v_shfl(mode, a)?;
                self.v_write_to(dst, value);
                if let Some(pred) = pred {
                    self.v_write_to(pred, p);
                }
            }
            Op::Vote(mode) => {
                let p = self.v_read(&a[1], PtxType::Pred)?;
                let mask = self.lane_mask(&p);
                let mut results = Vec::new();
                for w in 0..warps {
                    let ballot = self.b.ins().ushr_imm_u(mask, (WARP * w) as i64);
                    let ballot = self.b.ins().ireduce(types::I32, ballot);
                    let (vt, n, x) = match mode {
                        VoteMode::Ballot => (types::I32X4, WARP / 4, ballot),
                        VoteMode::All => (
                            types::I8X16,
                            2,
                            self.b.ins().icmp_imm_s(IntCC::Equal, ballot, -1),
                        ),
                        VoteMode::Any => (
                            types::I8X16,
                            2,
                            self.b.ins().icmp_imm_s(IntCC::NotEqual, ballot, 0),
                        ),
                        VoteMode::Uni => {
                            let all = self.b.ins().icmp_imm_s(IntCC::Equal, ballot, -1);
                            let none = self.b.ins().icmp_imm_s(IntCC::Equal, ballot, 0);
                            (types::I8X16, 2, self.b.ins().bor(all, none))
                        }
                    };
                    let v = self.b.ins().splat(vt, x);
                    results.extend(std::iter::repeat_n(v, n));
                }
                self.v_write_to(dst, results);
            }
            Op::Redux { op, ty } => {
                let x = self.v_read(&a[1], ty)?;
                let mut results = Vec::new();
                for lanes in x.chunks(WARP / 4) {
                    let v = self.warp_reduce(op, ty.is_signed(), lanes);
                    results.extend(std::iter::repeat_n(v, lanes.len()));
                }
                self.v_write_to(dst, results);
            }
            Op::Elect => {
                // Every lane is a member: lane 0 of each warp leads.
                let zero = self.v_splat(types::I32X4, 0);
                self.v_write_to(dst, vec![zero; self.width() / 4]);
                if let Some(pred) = pred {
                    let mut first = [0u64; 16];
                    first[0] = 1;
                    let leads = self.v_const(types::I8X16, &first);
                    let none = self.v_splat(types::I8X16, 0);
                    self.v_write_to(pred, [leads, none].repeat(warps));
                }
            }
            Op::Activemask => {
                let all = self.v_splat(types::I32X4, -1);
                self.v_write_to(dst, vec![all; self.width() / 4]);
            }
            Op::WarpSync => {}
            Op::WarpMatrix {
                num, trans, space, ..
            } => self.v_ldmatrix(inst, num, trans, space)?,
            Op::Mma(form) => self.v_mma(inst, form)?,
            _ => unreachable!("checked by v_collective_members"),
        }
        Ok(())
    }

    /// `ldmatrix.sync.aligned.m8n8.xnum{.trans}{.space}.b16 d, [a]` for every warp of the
    /// group. From shared memory through a 32-bit register (nvcc's and Triton's): the row
    /// offsets stay vectors and the rows that the lanes name are checked at once (16 bytes,
    /// aligned), then each row is one vector load. Lanes 4q..4q + 3 of a warp receive row
    /// q of each matrix (two columns a lane), or with `.trans` its column q: the rows
    /// transposed. Where a row is outside shared memory or misaligned, each lane goes on
    /// alone from the instruction (the one-thread code's check names it); any other address
    /// goes lane by lane ([`v_ldmatrix_by_lane`](Self::v_ldmatrix_by_lane)). (Lane by lane,
    /// an `.x4` had been 3,000 Cranelift instructions.)
    fn v_ldmatrix(&mut self, inst: &Inst, num: u32, trans: bool, space: StateSpace) -> LResult {
        let base = match inst.args[1] {
            Arg::Addr {
                base: AddrBase::Reg(base),
                offset,
            } if space == StateSpace::Shared && self.func.regs[base as usize].ty.bits() == 32 => {
                Some((base, offset))
            }
            _ => None,
        };
        let Some((base, offset)) = base else {
            return self.v_ldmatrix_by_lane(inst, num, trans, space);
        };
        // (The vectors of a warp's first 8 × num lanes, which give the rows.)
        let used = |c: usize| c % (WARP / 4) < 2 * num as usize;
        let (offsets, ok) = self.v_scattered_offsets_of(base, offset, 16, &used)?;
        let (fast, slow) = self.branch_cold(ok, false);
        // (Each lane alone from here: the one-thread code checks its row, and `sync` loads.)
        self.b.switch_to_block(slow);
        let none = self.b.ins().iconst(types::I64, 0);
        self.diverge(none, None, self.inst_index as usize)?;
        self.b.switch_to_block(fast);
        let flags = MemFlagsData::new();
        let dsts = self.elements(&inst.args[0]).to_vec();
        let mut fragments: Vec<Wide> = vec![Wide::new(); num as usize];
        for warp in 0..self.width() / WARP {
            for (m, fragments) in fragments.iter_mut().enumerate() {
                let rows: Vec<Value> = (0..8)
                    .map(|r| {
                        let at = self.v_lane_address(&offsets, warp * WARP + 8 * m + r);
                        self.b.ins().load(types::I32X4, flags, at, 0)
                    })
                    .collect();
                fragments.extend(if trans { self.transpose8(&rows) } else { rows });
            }
        }
        for (d, v) in dsts.iter().zip(fragments) {
            self.v_write_to(d, v);
        }
        Ok(())
    }

    /// The columns of an 8 × 8 matrix of 16-bit elements whose rows are `rows`: three rounds
    /// of interleaving, of 16-, 32- and 64-bit lanes.
    fn transpose8(&mut self, rows: &[Value]) -> Vec<Value> {
        // Lanes of the result from `x`'s (0..) and `y`'s (8..) 16-bit lanes, `bytes` at a time:
        // the low halves' lanes interleaved, or the high halves'.
        let interleave = |t: &mut Self, x: Value, y: Value, bytes: usize, high: bool| {
            let half = if high { 8 } else { 0 };
            let mask: [u8; 16] = std::array::from_fn(|i| {
                let (unit, within) = (i / bytes, i % bytes);
                let from = if unit % 2 == 0 { 0 } else { 16 };
                (from + half + unit / 2 * bytes + within) as u8
            });
            t.shuffle_bytes(x, y, &mask, types::I32X4)
        };
        let mut v = rows.to_vec();
        for bytes in [2, 4, 8] {
            // Pairs of vectors `bytes` / 2 apart in the order of the round before.
            let step = bytes / 2;
            let mut next = vec![v[0]; 8];
            for group in (0..8).step_by(2 * step) {
                for i in group..group + step {
                    let (x, y) = (v[i], v[i + step]);
                    next[i] = interleave(self, x, y, bytes, false);
                    next[i + step] = interleave(self, x, y, bytes, true);
                }
            }
            v = next;
        }
        // (The rounds leave column q at q's three bits reversed.)
        (0..8).map(|q| v[(q & 1) << 2 | q & 2 | q >> 2]).collect()
    }

    /// [`v_ldmatrix`](Self::v_ldmatrix) lane by lane: each lane's row address computed and
    /// checked as one thread's is (`lane by lane`), then each lane's fragments
    /// (`crate::sync::ldmatrix`) loaded from the rows.
    fn v_ldmatrix_by_lane(
        &mut self,
        inst: &Inst,
        num: u32,
        trans: bool,
        space: StateSpace,
    ) -> LResult {
        let rows = self.each_lane_value(inst, |t, _| {
            let addr = t.address(&inst.args[1], space)?;
            t.check_matrix_row(addr, space, num, false);
            Ok(addr)
        })?;
        let flags = MemFlagsData::new();
        let dsts = self.elements(&inst.args[0]).to_vec();
        for (m, d) in dsts.iter().enumerate() {
            let words: Vec<Value> = (0..self.width())
                .map(|l| {
                    let warp = &rows[l / WARP * WARP..][..WARP];
                    let row = |r: usize| warp[8 * m + r];
                    let (g, t) = (l % WARP / 4, l % 4);
                    if !trans {
                        // Row g, columns 2t and 2t + 1: one word.
                        return self.b.ins().load(types::I32, flags, row(g), 4 * t as i32);
                    }
                    // Column g of rows 2t and 2t + 1.
                    let [lo, hi] = [2 * t, 2 * t + 1].map(|r| {
                        self.b
                            .ins()
                            .uload16(types::I32, flags, row(r), 2 * g as i32)
                    });
                    let hi = self.b.ins().ishl_imm_u(hi, 16);
                    self.b.ins().bor(lo, hi)
                })
                .collect();
            let v = self.vectors_of_lanes(&words);
            self.v_write_to(d, v);
        }
        Ok(())
    }

    /// `mma.sync.aligned` (every form but f64's) for every warp of the group: the operand
    /// registers' vectors stored a register after another (`lane by lane` area), the product
    /// computed by `crate::mma::group_mma`, D's vectors loaded from after them.
    fn v_mma(&mut self, inst: &Inst, form: MmaForm) -> LResult {
        let code = crate::mma::group_code(form).expect("checked by v_collective_members");
        let [d, x, y, c] = mma_operands(inst, form).expect("checked by v_collective_members");
        let spill = self.lanes.as_ref().expect("grouped").spill;
        let area = self.helper_addr(spill);
        let flags = MemFlagsData::trusted();
        let width = self.width();
        // (Register i's lanes at i × width × 4 bytes, sixteen bytes a vector.)
        let at = |i: usize, chunk: usize| (i * width * 4 + chunk * 16) as i32;
        let sources = [x, y, c].concat();
        for (i, s) in sources.iter().enumerate() {
            for (chunk, v) in self.v_read(s, PtxType::B32)?.into_iter().enumerate() {
                self.b.ins().store(flags, v, area, at(i, chunk));
            }
        }
        let d_area = self.b.ins().iadd_imm_s(area, at(sources.len(), 0) as i64);
        let mut signature = ir::Signature::new(self.b.func.signature.call_conv);
        let params = [types::I64, types::I64, types::I64, types::I32];
        signature.params.extend(params.map(ir::AbiParam::new));
        let signature = self.b.import_signature(signature);
        // (By its address, as the half helpers: a module declares no symbol for it.)
        let helper = self.b.ins().iconst(
            types::I64,
            crate::mma::group_mma as *const () as usize as i64,
        );
        let code = self.b.ins().iconst(types::I64, code as i64);
        let width_arg = self.b.ins().iconst(types::I32, width as i64);
        self.b
            .ins()
            .call_indirect(signature, helper, &[code, area, d_area, width_arg]);
        for (j, d) in d.iter().enumerate() {
            let v = (0..width / 4)
                .map(|chunk| self.b.ins().load(types::I32X4, flags, d_area, at(j, chunk)))
                .collect();
            self.v_write(d, v);
        }
        Ok(())
    }

    /// [`v_write`](Self::v_write), or nothing for `_`.
    fn v_write_to(&mut self, d: &Arg, v: Wide) {
        if !matches!(d, Arg::Sink) {
            self.v_write(d, v);
        }
    }

    /// `redux.sync.op` of one warp's eight vectors: a vector whose every lane is the result.
    fn warp_reduce(&mut self, op: ReduxOp, signed: bool, lanes: &[Value]) -> Value {
        let combine = |t: &mut Self, x: Value, y: Value| match (op, signed) {
            (ReduxOp::Add, _) => t.b.ins().iadd(x, y),
            (ReduxOp::Min, true) => t.b.ins().smin(x, y),
            (ReduxOp::Min, false) => t.b.ins().umin(x, y),
            (ReduxOp::Max, true) => t.b.ins().smax(x, y),
            (ReduxOp::Max, false) => t.b.ins().umax(x, y),
            (ReduxOp::And, _) => t.b.ins().band(x, y),
            (ReduxOp::Or, _) => t.b.ins().bor(x, y),
            (ReduxOp::Xor, _) => t.b.ins().bxor(x, y),
            (ReduxOp::Float { .. }, _) => unreachable!("checked by v_collective_members"),
        };
        let mut x = lanes[0];
        for &y in &lanes[1..] {
            x = combine(self, x, y);
        }
        // Across the vector's four lanes: each with the lane two, then one, away.
        for swap in [[2, 3, 0, 1], [1, 0, 3, 2]] {
            let mask = lane_bytes(swap.map(|l| l as usize));
            let y = self.shuffle_bytes(x, x, &mask, types::I32X4);
            x = combine(self, x, y);
        }
        x
    }

    /// `shfl.sync.mode d|p, a, b, c, -1`: each lane's source lane and predicate
    /// (`crate::sync::shfl_source`), then the source lanes' `a`.
    fn v_shfl(&mut self, mode: ShflMode, a: &[Arg]) -> LResult<(Wide, Wide)> {
        let x = self.v_read(&a[1], PtxType::B32)?;
        let width = self.width();
        if let (Some(b), Some(c)) = (self.v_known(&a[2]), self.v_known(&a[3])) {
            // The same permutation every time: shuffles of the vectors.
            let (src, p): (Vec<usize>, Vec<bool>) = (0..width)
                .map(|l| {
                    let (j, p) = crate::sync::shfl_source(mode, (l % WARP) as u32, b, c);
                    (l / WARP * WARP + j as usize, p)
                })
                .unzip();
            let value = self.permute(&x, &src);
            let p: Wide = p
                .chunks(16)
                .map(|lanes| {
                    self.v_const(
                        types::I8X16,
                        &lanes.iter().map(|&p| p as u64).collect::<Vec<_>>(),
                    )
                })
                .collect();
            return Ok((value, p));
        }
        let b = self.v_read(&a[2], PtxType::B32)?;
        let c = self.v_read(&a[3], PtxType::B32)?;
        let mut src = Vec::new();
        let mut p = Vec::new();
        for (k, (b, c)) in b.into_iter().zip(c).enumerate() {
            let lane = 4 * k % WARP;
            let lane = self.v_const(types::I32X4, &[0, 1, 2, 3].map(|i| (lane + i) as u64));
            let low = self.v_splat(types::I32X4, 31);
            let bval = self.b.ins().band(b, low);
            let cval = self.b.ins().band(c, low);
            let segmask = self.b.ins().ushr_imm_u(c, 8);
            let segmask = self.b.ins().band(segmask, low);
            let min_lane = self.b.ins().band(lane, segmask);
            let outside = self.b.ins().band_not(cval, segmask);
            let max_lane = self.b.ins().bor(min_lane, outside);
            let (j, cc) = match mode {
                ShflMode::Up => (
                    self.b.ins().isub(lane, bval),
                    IntCC::SignedGreaterThanOrEqual,
                ),
                ShflMode::Down => (self.b.ins().iadd(lane, bval), IntCC::SignedLessThanOrEqual),
                ShflMode::Bfly => (self.b.ins().bxor(lane, bval), IntCC::SignedLessThanOrEqual),
                ShflMode::Idx => {
                    let within = self.b.ins().band_not(bval, segmask);
                    (
                        self.b.ins().bor(min_lane, within),
                        IntCC::SignedLessThanOrEqual,
                    )
                }
            };
            let valid = self.b.ins().icmp(cc, j, max_lane);
            let from = self.b.ins().bitselect(valid, j, lane);
            let warp = self.v_splat(types::I32X4, (4 * k / WARP * WARP) as i64);
            src.push(self.b.ins().iadd(from, warp));
            p.push(valid);
        }
        let value = self.gather(&x, &src)?;
        let p = self.v_predicates(p);
        Ok((value, p))
    }

    /// `arg` as a `u32` known when the kernel is compiled: an immediate, or a uniform
    /// register whose value here is a constant.
    fn v_known(&mut self, arg: &Arg) -> Option<u32> {
        match arg {
            Arg::Imm(Immediate::Int(x)) => Some(*x as u32),
            Arg::Reg(r) if self.is_uniform_reg(*r) => {
                let v = self.v_read_uniform(arg, PtxType::B32)?.ok()?;
                let dfg = &self.b.func.dfg;
                let ValueDef::Result(inst, 0) = dfg.value_def(dfg.resolve_aliases(v)) else {
                    return None;
                };
                match dfg.insts[inst] {
                    InstructionData::UnaryImm {
                        opcode: Opcode::Iconst,
                        imm,
                    } => Some(imm.bits() as u32),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The group's lanes `x` (`i32x4` vectors) rearranged so that lane l holds lane
    /// `src[l]`'s value, `src` known: a vector whose lanes come from at most two vectors is
    /// one shuffle of them.
    fn permute(&mut self, x: &[Value], src: &[usize]) -> Wide {
        src.chunks(4)
            .map(|lanes| {
                let mut from: Vec<usize> = lanes.iter().map(|s| s / 4).collect();
                from.sort_unstable();
                from.dedup();
                if from.len() == 1 && lanes.iter().enumerate().all(|(i, s)| s % 4 == i) {
                    return x[from[0]];
                }
                if from.len() <= 2 {
                    let pick =
                        |s: usize| 4 * from.iter().position(|&v| v == s / 4).unwrap() + s % 4;
                    let mask = lane_bytes(std::array::from_fn(|i| pick(lanes[i])));
                    let y = x[*from.last().unwrap()];
                    return self.shuffle_bytes(x[from[0]], y, &mask, types::I32X4);
                }
                let mut v = self.v_splat(types::I32X4, 0);
                for (i, &s) in lanes.iter().enumerate() {
                    let e = self.b.ins().extractlane(x[s / 4], (s % 4) as u8);
                    v = self.b.ins().insertlane(v, e, i as u8);
                }
                v
            })
            .collect()
    }

    /// The group's lanes `x` (`i32x4` vectors) rearranged so that lane l holds the value of
    /// the lane that lane l of `src` (`i32x4` vectors, each lane in `0..width`) names:
    /// through the spill area, a lane at a time in a loop.
    fn gather(&mut self, x: &[Value], src: &[Value]) -> LResult<Wide> {
        let width = self.width() as i32;
        let spill = self.lanes.as_ref().expect("grouped").spill;
        let flags = MemFlagsData::trusted();
        let base = self.b.ins().stack_addr(types::I64, spill, 0);
        // The values at 0, the sources at 4 × width, the results at 8 × width.
        for (k, (&v, &s)) in x.iter().zip(src).enumerate() {
            self.b.ins().store(flags, v, base, 16 * k as i32);
            self.b
                .ins()
                .store(flags, s, base, 4 * width + 16 * k as i32);
        }
        self.counted_loop(types::I64, 4 * width as i64, 4, |t, at| {
            let lane = t.b.ins().iadd(base, at);
            let from = t.b.ins().load(types::I32, flags, lane, 4 * width);
            let from = t.b.ins().uextend(types::I64, from);
            let from = t.b.ins().ishl_imm_u(from, 2);
            let from = t.b.ins().iadd(base, from);
            let v = t.b.ins().load(types::I32, flags, from, 0);
            t.b.ins().store(flags, v, lane, 8 * width);
            Ok(())
        })?;
        Ok((0..x.len())
            .map(|k| {
                self.b
                    .ins()
                    .load(types::I32X4, flags, base, 8 * width + 16 * k as i32)
            })
            .collect())
    }
}

/// The byte mask that picks 32-bit lanes `lanes` (0–3 from the first vector, 4–7 from the
/// second) for `shuffle_bytes`.
fn lane_bytes(lanes: [usize; 4]) -> [u8; 16] {
    std::array::from_fn(|i| (4 * lanes[i / 4] + i % 4) as u8)
}

/// The operands of `mma` `inst` of `form` (one of 32-bit registers): D, A, B and C, as many
/// registers each as the form has (32-bit words, whatever their types: the group code moves
/// their bits); `None` where an operand is not such a list.
fn mma_operands(inst: &Inst, form: MmaForm) -> Option<[&[Arg]; 4]> {
    // (`registers` counts A's, B's, C's and D's.)
    let [a, b, c, d] = form.registers();
    let operands: [&[Arg]; 4] =
        std::array::from_fn(|k| inst.args.get(k).map_or(&[][..], Arg::elements));
    let all = operands
        .iter()
        .zip([d, a, b, c])
        .all(|(o, n)| o.len() == n as usize);
    all.then_some(operands)
}
