//! Synchronization points in cooperative kernels (see `crate::sync` for the model): the
//! operands go to the frame, every register is saved, and the thread yields; on resume the
//! registers come back and the results are written. A run of consecutive `mma`s is one
//! point whose operands and results stay in the registers' save slots (`sync_points`).

use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value, types};

use super::{LResult, Translator, ctx};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{
    self, Arg, BarKind, BarRed, Function, MbarrierOp, MmaType, Op, VoteMode,
};
use crate::sync::{SyncKind, SyncPoint, frame};
use crate::types::PtxType;

/// The synchronization points of a function's body, in order. Consecutive `mma`s of one
/// form whose operands are all registers are one point ([`mma_run_slots`]): Triton's
/// matmul issues eight a step, and each point is a round that saves and restores every
/// live register of every thread.
pub fn sync_points(f: &Function) -> Vec<SyncPoint> {
    let Some(body) = &f.body else {
        return Vec::new();
    };
    let (reg_slots, _) = register_slots(f, frame::REGS);
    let mut points = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let (at, inst) = (i, &body[i]);
        i += 1;
        let kind = match inst.op {
            Op::Bar(k @ (BarKind::Sync | BarKind::Red(_))) => SyncKind::Barrier(k),
            Op::Shfl(m) => SyncKind::Shfl(m),
            Op::Vote(m) => SyncKind::Vote(m),
            Op::Match { all, .. } => SyncKind::Match { all },
            Op::Redux { op, ty } => SyncKind::Redux {
                op,
                signed: ty.is_signed(),
            },
            Op::Elect => SyncKind::Elect,
            Op::WarpSync => SyncKind::WarpSync,
            Op::WarpMatrix {
                store, num, trans, ..
            } => SyncKind::WarpMatrix { store, num, trans },
            Op::Mma(form) => SyncKind::Mma(form),
            Op::Wgmma(form) => SyncKind::Wgmma(form),
            Op::Mbarrier {
                op: MbarrierOp::Wait { parity, .. },
                ..
            } => SyncKind::MbarrierWait { parity },
            Op::ClusterBarrier { wait: true } => SyncKind::ClusterWait,
            Op::GridSync => SyncKind::GridSync,
            Op::Activemask => SyncKind::Activemask,
            _ => continue,
        };
        let mut insts = 1;
        let mut then_mma = None;
        let slots = match (kind, inst.args.first()) {
            // (The lowering refuses a D that is not all registers.)
            (SyncKind::Wgmma(_), Some(Arg::Vector(d))) => d
                .iter()
                .filter_map(|r| match r {
                    Arg::Reg(r) => Some(reg_slots[*r as usize]),
                    _ => None,
                })
                .collect(),
            (SyncKind::Mma(_), _) => match mma_run_slots(f, inst, &reg_slots) {
                Some(slots) => extend_mma_run(f, &reg_slots, inst.op, slots, &mut i, &mut insts),
                None => Vec::new(),
            },
            // An `ldmatrix` right before a run of `mma`s (nvcc's gemm loads each B so): one
            // point with the run, the rows going to its registers' slots.
            (SyncKind::WarpMatrix { store: false, .. }, Some(rows)) => {
                let loaded: Option<Vec<i32>> = rows
                    .elements()
                    .iter()
                    .map(|r| match r {
                        Arg::Reg(r) if f.regs[*r as usize].ty.bits() == 32 => {
                            Some(reg_slots[*r as usize])
                        }
                        _ => None,
                    })
                    .collect();
                let next = body
                    .get(i)
                    .filter(|_| inst.guard.is_none() && !f.labels.contains(&i));
                match (
                    loaded,
                    next.map(|n| (n.op, mma_run_slots(f, n, &reg_slots))),
                ) {
                    (Some(mut slots), Some((op @ Op::Mma(form), Some(first)))) => {
                        then_mma = Some(form);
                        slots.extend(first);
                        (insts, i) = (insts + 1, i + 1);
                        extend_mma_run(f, &reg_slots, op, slots, &mut i, &mut insts)
                    }
                    _ => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        points.push(SyncPoint {
            inst: at as u32,
            kind,
            slots,
            insts,
            then_mma,
        });
    }
    points
}

/// `slots` (a run's so far) and those (`reg_slots`: each register's) of the `mma`s of op
/// `op` from body position `i` on that join the run (no label before them: a branch may
/// enter there), `i` and `insts` moved past them.
fn extend_mma_run(
    f: &Function,
    reg_slots: &[i32],
    op: Op,
    mut slots: Vec<i32>,
    i: &mut usize,
    insts: &mut u32,
) -> Vec<i32> {
    let body = f.body.as_deref().unwrap_or(&[]);
    while let Some(next) = body.get(*i)
        && next.op == op
        && !f.labels.contains(i)
        && let Some(more) = mma_run_slots(f, next, reg_slots)
    {
        slots.extend(more);
        *insts += 1;
        *i += 1;
    }
    slots
}

/// The save slots of `mma` `inst`'s A, B, C and D registers in turn, where it can be part
/// of a run of them (`SyncPoint::slots`): unguarded, every operand a register of the
/// element's width (64 bits for f64, else 32), as many as the form takes.
fn mma_run_slots(f: &Function, inst: &checked::Inst, reg_slots: &[i32]) -> Option<Vec<i32>> {
    let Op::Mma(form) = inst.op else { return None };
    if inst.guard.is_some() || inst.args.len() != 4 {
        return None;
    }
    let [na, nb, nc, nd] = form.registers();
    let a = &inst.args;
    let operands = [
        (&a[1], na, form.a),
        (&a[2], nb, form.b),
        (&a[3], nc, form.c),
    ];
    let mut slots = Vec::new();
    for (arg, n, ty) in operands.into_iter().chain([(&a[0], nd, form.d)]) {
        let bits = if ty == MmaType::F64 { 64 } else { 32 };
        let elements = arg.elements();
        if elements.len() != n as usize {
            return None;
        }
        for e in elements {
            match e {
                Arg::Reg(r) if f.regs[*r as usize].ty.bits() == bits => {
                    slots.push(reg_slots[*r as usize])
                }
                _ => return None,
            }
        }
    }
    Some(slots)
}

/// Whether sync point `p`'s results are in its registers' save slots, and its operands
/// but an `ldmatrix`'s row address (a run of `mma`s, after an `ldmatrix` or not; `wgmma`
/// keeps only D there).
pub fn in_slots(p: &SyncPoint) -> bool {
    matches!(p.kind, SyncKind::Mma(_)) && !p.slots.is_empty() || p.then_mma.is_some()
}

/// The registers of the instructions sync point `p` performs.
pub fn point_registers(f: &Function, p: &SyncPoint) -> Vec<u32> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut regs: Vec<u32> = body[p.inst as usize..][..p.insts as usize]
        .iter()
        .flat_map(|inst| inst.args.iter().flat_map(Arg::elements))
        .filter_map(|a| match a {
            Arg::Reg(r) => Some(*r),
            _ => None,
        })
        .collect();
    regs.sort_unstable();
    regs.dedup();
    regs
}

/// Whether sync point `op`'s thread always waits (no ready path: not an mbarrier wait,
/// which may find its phase complete, nor the grid barrier, which outside a cooperative
/// launch fails at once): its operands then end in the frame (`Translator::sync_operands`)
/// and its results come from it (`Translator::sync_results`).
pub fn always_waits(op: Op) -> bool {
    !matches!(op, Op::Mbarrier { .. } | Op::GridSync)
}

/// How code goes on past a sync point, for [`current_slots`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// It saves, waits and restores.
    Waits,
    /// It may wait so, or go on at once (a wait whose phase is complete already; a lane
    /// group's collective it computes itself where its lanes' membermasks allow).
    MayGoOn,
    /// It goes on at once (a lane group's collective of the whole warp, computed in it).
    GoesOn,
    /// The code does not go on past it (a lane group's lanes go on alone).
    Leaves,
}

impl Pass {
    /// How the one-thread code goes on past sync point `op`.
    pub fn of_one_thread(op: Op) -> Pass {
        match always_waits(op) {
            true => Pass::Waits,
            false => Pass::MayGoOn,
        }
    }
}

/// Per sync point, the registers of `saved` (those it saves, in `points`' order) whose save
/// slot already holds their value wherever the code reaches the point (each lane's, for a
/// lane group; lane 0's for a register the group keeps once): restored where it last
/// resumed and not written since, on every path (a forward pass over the body,
/// intersecting where paths join). Its save leaves them out (Triton's matmul: the
/// accumulators, which only `after_round` changes, in their slots). After a point that
/// waits, the registers equal their slots for what the point restores, but for results
/// written after the restore (a run of `mma`s and a `wgmma`, whose D comes back from its
/// slots, have none); after one that may go on at once, only for what that way leaves
/// unwritten too. `passes` says which each point is.
pub fn current_slots(
    f: &Function,
    points: &[SyncPoint],
    saved: &[Vec<u32>],
    passes: &[Pass],
) -> Vec<Vec<u32>> {
    use super::liveness::destinations;
    let body = f.body.as_deref().unwrap_or(&[]);
    let point_at: std::collections::HashMap<usize, usize> = points
        .iter()
        .enumerate()
        .map(|(k, p)| (p.inst as usize, k))
        .collect();
    let written = |p: &SyncPoint| -> Vec<u32> {
        body[p.inst as usize..][..p.insts as usize]
            .iter()
            .flat_map(destinations)
            .collect()
    };
    // What holds after each point, from what held before it.
    let after = |k: usize, before: &[bool]| -> Vec<bool> {
        let p = &points[k];
        let mut unwritten = before.to_vec();
        for r in written(p) {
            unwritten[r as usize] = false;
        }
        let mut restored = vec![false; before.len()];
        for &r in &saved[k] {
            restored[r as usize] = true;
        }
        if !in_slots(p) && !matches!(p.kind, SyncKind::Wgmma(_)) {
            for r in written(p) {
                restored[r as usize] = false;
            }
        }
        match passes[k] {
            Pass::Waits => restored,
            Pass::MayGoOn => restored
                .iter()
                .zip(&unwritten)
                .map(|(&a, &b)| a && b)
                .collect(),
            Pass::GoesOn => unwritten,
            Pass::Leaves => vec![false; before.len()],
        }
    };
    let successors = super::liveness::successors(f);
    // At each instruction, before it (None: not reached yet).
    let mut state: Vec<Option<Vec<bool>>> = vec![None; body.len()];
    let mut work = Vec::new();
    if !body.is_empty() {
        state[0] = Some(vec![false; f.regs.len()]);
        work.push(0);
    }
    while let Some(i) = work.pop() {
        let before = state[i].clone().expect("reached");
        // (A point's further instructions, a run's, are performed with its first.)
        let (out, last) = match point_at.get(&i) {
            Some(&k) => (after(k, &before), i + points[k].insts as usize - 1),
            None => {
                let mut out = before;
                for r in destinations(&body[i]) {
                    out[r as usize] = false;
                }
                (out, i)
            }
        };
        for &j in &successors[last] {
            let next = match &state[j] {
                None => out.clone(),
                Some(s) => s.iter().zip(&out).map(|(&a, &b)| a && b).collect(),
            };
            if state[j].as_ref() != Some(&next) {
                state[j] = Some(next);
                work.push(j);
            }
        }
    }
    points
        .iter()
        .zip(saved)
        .map(|(p, saved)| {
            let before = state[p.inst as usize].as_deref().unwrap_or(&[]);
            let mut current: Vec<u32> = saved
                .iter()
                .copied()
                .filter(|&r| before.get(r as usize).copied().unwrap_or(false))
                .collect();
            current.sort_unstable();
            current
        })
        .collect()
}

/// Whether a function needs the cooperative model (sync points, or arrivals recorded for
/// them: `bar.arrive` counters, `barrier.cluster.arrive`).
pub fn is_cooperative(f: &Function) -> bool {
    f.body.iter().flatten().any(|i| i.op.cooperates())
}

/// Where a cooperative kernel keeps each thread's state in its frame.
pub struct FrameLayout {
    /// Save slot of each register.
    pub regs: Vec<i32>,
    /// Where the save slots end (they start at `frame::REGS`).
    pub regs_end: usize,
    /// `.local` variables (index in `Function::vars` → offset): each thread needs its own,
    /// since threads interleave at synchronization points.
    pub locals: Vec<(usize, i32)>,
    pub bytes: usize,
}

/// A save slot for each register from offset `start` on (8 bytes, 16 for `.b128`), and the
/// offset after the last.
pub fn register_slots(f: &Function, start: i32) -> (Vec<i32>, i32) {
    let mut off = start;
    let slots = f
        .regs
        .iter()
        .map(|r| {
            let o = off;
            off += if r.ty == PtxType::B128 { 16 } else { 8 };
            o
        })
        .collect();
    (slots, off)
}

pub fn frame_layout(f: &Function) -> FrameLayout {
    let (regs, mut off) = register_slots(f, frame::REGS);
    let regs_end = off as usize;
    let mut locals = Vec::new();
    for (i, v) in f.vars.iter().enumerate() {
        // (`.param` variables too: a call's arguments may be stored before a sync point
        // and read after it, by a callee inlined here.)
        if matches!(v.space, StateSpace::Local | StateSpace::Param) {
            let align = v.align.max(8) as i32;
            off = (off + align - 1) / align * align;
            locals.push((i, off));
            off += v.size as i32;
        }
    }
    FrameLayout {
        regs,
        regs_end,
        locals,
        bytes: (off as usize).div_ceil(16) * 16,
    }
}

impl Translator<'_, '_> {
    pub(super) fn frame(&mut self) -> Value {
        let coop = self
            .coop
            .as_ref()
            .expect("sync points only in cooperative kernels");
        self.b.use_var(coop.frame)
    }

    pub(super) fn store_arg(&mut self, k: i32, v: Value) {
        let v = self.extend(v, types::I64, false);
        let frame = self.frame();
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, frame, frame::ARGS + 8 * k);
    }

    fn pred_arg(&mut self, arg: &Arg) -> LResult<Value> {
        self.read(arg, PtxType::Pred)
    }

    /// Lowers the sync point `inst` (number `k` in `sync_points` order).
    pub fn sync_point(&mut self, op: Op, a: &[Arg]) -> LResult {
        let coop = self.coop.as_ref().expect("cooperative");
        let index = self.inst_index as usize;
        if coop.merged.contains(&index) {
            // (Performed with the run's first.)
            return Ok(());
        }
        let k = coop.point_of[&index];
        let resume = coop.resume_blocks[k];
        let in_slots = coop.in_slots[k];
        // 1. Operands (a run of `mma`s: in the registers' slots, saved below; the whole
        // warp takes part).
        let ready = match (in_slots, op) {
            (true, Op::Mma(_)) => {
                let all = self.b.ins().iconst(types::I64, u32::MAX as i64);
                self.store_arg(frame::MASK_ARG, all);
                None
            }
            _ => self.sync_operands(op, a)?,
        };
        // 2. Save the registers still needed afterwards, record where to resume, yield.
        self.save_registers(k);
        let frame = self.frame();
        let flags = MemFlagsData::trusted();
        let resume_at = self.b.ins().iconst(types::I32, k as i64 + 1);
        self.b.ins().store(flags, resume_at, frame, frame::RESUME);
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().store(flags, one, frame, frame::WAITING);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.ins().store(flags, zero, frame, frame::GROUPED);
        let end = self.thread_end.expect("entry");
        self.b.ins().jump(end, &[]);
        // 3. Resume: restore, then write the results.
        self.b.switch_to_block(resume);
        self.restore_registers(k);
        match op {
            Op::Mbarrier { .. } => {
                let join = ready.expect("a wait has a ready block");
                let pred = self.result_pred();
                self.b.ins().jump(join, &[pred.into()]);
                self.b.seal_block(join);
                self.b.switch_to_block(join);
                let done = self.b.block_params(join)[0];
                self.write(&a[0], done, PtxType::Pred)?;
            }
            Op::GridSync => {
                let join = ready.expect("the grid barrier has a ready block");
                let synchronized = self.b.ins().iconst(types::I32, 0);
                self.b.ins().jump(join, &[synchronized.into()]);
                self.b.seal_block(join);
                self.b.switch_to_block(join);
                let result = self.b.block_params(join)[0];
                self.grid_sync_result(a, result)?;
            }
            // (A run's D registers were restored from their slots.)
            _ if in_slots => {}
            _ => self.sync_results(op, a)?,
        }
        Ok(())
    }

    /// Stores the operands of sync point `op` in the thread's frame. A wait that may find
    /// what it waits for done already (not [`always_waits`]) then goes on to the
    /// returned block with its result (`true`, or the grid barrier's 0) instead of waiting.
    pub(super) fn sync_operands(&mut self, op: Op, a: &[Arg]) -> LResult<Option<Block>> {
        // A wait whose phase is complete already goes on to `ready` with `true`.
        let mut ready = None;
        match op {
            Op::Bar(BarKind::Sync) => {
                let id = self.read(&a[0], PtxType::U32)?;
                self.store_arg(0, id);
                // Every operand slot is written: the frame still holds the last collective's.
                let c = match a.get(1) {
                    Some(count) => self.read(count, PtxType::U32)?,
                    None => self.b.ins().iconst(types::I32, 0),
                };
                self.store_arg(1, c);
            }
            Op::Bar(BarKind::Red(_)) => {
                let id = self.read(&a[1], PtxType::U32)?;
                self.store_arg(0, id);
                let c = if a.len() == 4 {
                    self.read(&a[2], PtxType::U32)?
                } else {
                    self.b.ins().iconst(types::I32, 0)
                };
                self.store_arg(1, c);
                let p = self.pred_arg(a.last().expect("bar.red has a predicate"))?;
                self.store_arg(2, p);
            }
            Op::Shfl(_) => {
                for (i, arg) in a[1..4].iter().enumerate() {
                    let v = self.read(arg, PtxType::B32)?;
                    self.store_arg(i as i32, v);
                }
                let m = self.read(&a[4], PtxType::B32)?;
                self.store_arg(frame::MASK_ARG, m);
            }
            Op::Vote(_) => {
                let p = self.pred_arg(&a[1])?;
                self.store_arg(0, p);
                let m = self.read(&a[2], PtxType::B32)?;
                self.store_arg(frame::MASK_ARG, m);
            }
            Op::Match { ty, .. } | Op::Redux { ty, .. } => {
                let v = self.read(&a[1], ty)?;
                self.store_arg(0, v);
                let m = self.read(&a[2], PtxType::B32)?;
                self.store_arg(frame::MASK_ARG, m);
            }
            Op::Elect => {
                let m = self.read(&a[1], PtxType::B32)?;
                self.store_arg(frame::MASK_ARG, m);
            }
            Op::WarpSync => {
                let m = self.read(&a[0], PtxType::B32)?;
                self.store_arg(frame::MASK_ARG, m);
            }
            Op::WarpMatrix {
                store, num, space, ..
            } => {
                let (rows, regs) = if store {
                    (&a[0], &a[1])
                } else {
                    (&a[1], &a[0])
                };
                let addr = self.address(rows, space)?;
                self.check_matrix_row(addr, space, num, store);
                self.store_arg(0, addr);
                if store {
                    let words = self.elements(regs).to_vec();
                    if words.len() != num as usize {
                        return Err(self.err(format!("stmatrix .x{num} stores {num} registers")));
                    }
                    for (k, w) in words.iter().enumerate() {
                        let v = self.read(w, PtxType::B32)?;
                        self.store_arg(1 + k as i32, v);
                    }
                }
                let all = self.b.ins().iconst(types::I64, u32::MAX as i64);
                self.store_arg(frame::MASK_ARG, all);
            }
            Op::Mma(form) => {
                let [na, nb, nc, nd] = form.registers();
                let wide = |t: MmaType| t == MmaType::F64;
                let shapes = [(na, form.a), (nb, form.b), (nc, form.c), (nd, form.d)];
                for (arg, (n, _)) in [&a[1], &a[2], &a[3], &a[0]].into_iter().zip(shapes) {
                    if self.elements(arg).len() != n as usize {
                        return Err(self.err(format!(
                            "mma.m{}n{}k{} takes {nd} D, {na} A, {nb} B and {nc} C registers",
                            form.m, form.n, form.k
                        )));
                    }
                }
                let mut k = 0;
                for (arg, (_, ty)) in [&a[1], &a[2], &a[3]].into_iter().zip(shapes) {
                    for e in self.elements(arg).to_vec() {
                        let v = if wide(ty) {
                            self.read(&e, PtxType::B64)?
                        } else {
                            let v = self.read(&e, PtxType::B32)?;
                            self.b.ins().uextend(types::I64, v)
                        };
                        self.store_arg(k, v);
                        k += 1;
                    }
                }
                let all = self.b.ins().iconst(types::I64, u32::MAX as i64);
                self.store_arg(frame::MASK_ARG, all);
            }
            Op::Wgmma(form) => self.wgmma_operands(form, a)?,
            // The arrival is in the frame already (`cluster_arrive`).
            Op::ClusterBarrier { wait: true } | Op::Activemask => {}
            Op::GridSync => {
                // Outside a cooperative launch the call fails at once (1), without waiting.
                let ctx = self.ctx;
                let cooperative =
                    self.b
                        .ins()
                        .load(types::I32, MemFlagsData::trusted(), ctx, ctx::COOPERATIVE);
                let join = self.b.create_block();
                self.b.append_block_param(join, types::I32);
                let wait = self.b.create_block();
                let failed = self.b.ins().iconst(types::I32, 1);
                self.b
                    .ins()
                    .brif(cooperative, wait, &[], join, &[failed.into()]);
                self.b.seal_block(wait);
                self.b.switch_to_block(wait);
                ready = Some(join);
            }
            Op::Mbarrier { op, space } => {
                let (addr, state, done) = self.mbarrier_wait_ready(op, space, a)?;
                let join = self.b.create_block();
                self.b.append_block_param(join, types::I8);
                let wait = self.b.create_block();
                self.b.ins().brif(done, join, &[done.into()], wait, &[]);
                self.b.seal_block(wait);
                self.b.switch_to_block(wait);
                self.store_arg(0, addr);
                self.store_arg(1, state);
                ready = Some(join);
            }
            _ => unreachable!("not a sync point: {op:?}"),
        }
        Ok(ready)
    }

    /// The thread's result predicate in its frame (written by `after_round`).
    fn result_pred(&mut self) -> Value {
        let frame = self.frame();
        let pred = self.b.ins().load(
            types::I32,
            MemFlagsData::trusted(),
            frame,
            frame::RESULT_PRED,
        );
        self.b.ins().ireduce(types::I8, pred)
    }

    /// Writes the results `after_round` left in the thread's frame to the destinations of
    /// sync point `op` (one that [`always_waits`]).
    pub(super) fn sync_results(&mut self, op: Op, a: &[Arg]) -> LResult {
        let frame = self.frame();
        let value = self
            .b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), frame, frame::RESULT);
        let pred = self.result_pred();
        let value32 = self.b.ins().ireduce(types::I32, value);
        match op {
            Op::Bar(BarKind::Red(BarRed::Popc)) => self.write(&a[0], value32, PtxType::U32)?,
            Op::Bar(BarKind::Red(_)) => self.write(&a[0], pred, PtxType::Pred)?,
            Op::Shfl(_) => match &a[0] {
                Arg::Pair(d, p) => {
                    self.write(d, value32, PtxType::B32)?;
                    self.write(p, pred, PtxType::Pred)?;
                }
                d => self.write(d, value32, PtxType::B32)?,
            },
            Op::Vote(VoteMode::Ballot) | Op::Activemask => {
                self.write(&a[0], value32, PtxType::B32)?
            }
            Op::Vote(_) => self.write(&a[0], pred, PtxType::Pred)?,
            Op::Redux { ty, .. } => self.write(&a[0], value32, ty)?,
            Op::Match { .. } | Op::Elect => match &a[0] {
                Arg::Pair(d, p) => {
                    self.write(d, value32, PtxType::B32)?;
                    self.write(p, pred, PtxType::Pred)?;
                }
                d => self.write(d, value32, PtxType::B32)?,
            },
            Op::WarpMatrix { store: false, .. } => self.write_results(&a[0], PtxType::B32)?,
            Op::Mma(form) => {
                let ty = match form.d {
                    MmaType::F32 => PtxType::F32,
                    MmaType::F64 => PtxType::F64,
                    MmaType::S32 => PtxType::S32,
                    _ => PtxType::B32,
                };
                self.write_results(&a[0], ty)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Stores the grid barrier's result in its call's return operand.
    fn grid_sync_result(&mut self, a: &[Arg], result: Value) -> LResult {
        let Some((rets, f, _)) = crate::frontend::checked::direct_call(a) else {
            return Err(self.err("call operands must be (returns), function, (parameters)"));
        };
        self.runtime_result(rets, f, result, PtxType::B32)
    }

    /// Writes the result words of a sync point to the elements of `dst`, as `ty`.
    fn write_results(&mut self, dst: &Arg, ty: PtxType) -> LResult {
        let flags = MemFlagsData::trusted();
        for (i, d) in self
            .elements(dst)
            .to_vec()
            .iter()
            .enumerate()
            .take(frame::RESULTS)
        {
            let frame = self.frame();
            let off = frame::RESULT + 8 * i as i32;
            let w = self
                .b
                .ins()
                .load(ty.bits_type().ir_type(), flags, frame, off);
            let w = self.coerce(w, ty.ir_type(), false);
            self.write(d, w, ty)?;
        }
        Ok(())
    }

    /// The registers live after sync point `k`, with their save slots.
    fn saved_registers(&self, k: usize) -> Vec<(usize, i32)> {
        let coop = self.coop.as_ref().expect("cooperative");
        coop.saved[k]
            .iter()
            .map(|&r| (r as usize, coop.layout.regs[r as usize]))
            .collect()
    }

    /// Saves the registers of sync point `k` in the thread's frame: in the one-thread form,
    /// not those whose slots hold their values already (`current_slots`; the group form's
    /// lanes enter its one-thread code where they diverge, from registers their slots need
    /// not hold).
    fn save_registers(&mut self, k: usize) {
        let frame = self.frame();
        let coop = self.coop.as_ref().expect("cooperative");
        let current = match self.lanes {
            None => coop.current[k].clone(),
            Some(_) => Vec::new(),
        };
        for (r, off) in self.saved_registers(k) {
            if current.binary_search(&(r as u32)).is_ok() {
                continue;
            }
            let v = self.b.use_var(self.regs[r]);
            self.b.ins().store(MemFlagsData::trusted(), v, frame, off);
        }
    }

    fn restore_registers(&mut self, k: usize) {
        let frame = self.frame();
        for (r, off) in self.saved_registers(k) {
            let ty = self.func.regs[r].ty.ir_type();
            let v = self.b.ins().load(ty, MemFlagsData::trusted(), frame, off);
            self.b.def_var(self.regs[r], v);
        }
    }

    /// `bar.arrive a, b`: count the arrival at barrier `a` without waiting.
    pub fn bar_arrive(&mut self, a: &[Arg]) -> LResult {
        let coop = self
            .coop
            .as_ref()
            .expect("bar.arrive makes a kernel cooperative");
        let frames = coop.frames;
        let id = self.read(&a[0], PtxType::U32)?;
        let id = self.b.ins().band_imm_u(id, 15);
        let off = self.b.ins().ishl_imm_u(id, 2);
        let off = self.b.ins().uextend(types::I64, off);
        let addr = self.b.ins().iadd(frames, off);
        let flags = MemFlagsData::trusted();
        let n = self.b.ins().load(types::I32, flags, addr, 0);
        let n = self.b.ins().iadd_imm_s(n, 1);
        self.b.ins().store(flags, n, addr, 0);
        Ok(())
    }
}
