//! Cooperative kernels in lane groups.
//!
//! A cooperative kernel's group code keeps every thread's state where the one-thread code
//! keeps it between rounds: in the thread's frame (`crate::sync`), laid out alike (the group
//! form computes on the kernel's own registers, not on webs). So the two forms meet only at
//! frames, `after_round` sees the threads it always sees, and a group forms again wherever
//! its lanes do:
//! - At a sync point that always waits (`sync::always_waits`), unguarded, the group stores
//!   each lane's operands and live registers in its frame, from the vectors (a register it
//!   keeps once for all lanes, in lane 0's frame only), marks it saved by the group
//!   (`frame::GROUPED`), and ends its round. At any other cooperating
//!   instruction (guarded, a wait that may find its phase complete, an arrival the frame
//!   records) each lane goes on alone in the one-thread code, as at a divergence, and
//!   saves itself where it next waits.
//! - At the start of a round, a group whose lanes all resume after the same sync point and
//!   none waits resumes as a group: each register's lanes come from the frames, then each
//!   lane's results. A register the group code keeps once for all lanes (uniform,
//!   lane-affine) comes from lane 0's frame where the group saved every lane; where some
//!   lane saved itself, lanes that diverged may have written it apart, so each lane's must
//!   hold that shape, or the group's lanes run alone for the round. So do the lanes of a
//!   group that wait at different points, or some of which wait or are finished; where the
//!   group saved them, its registers kept once first go to every lane's frame
//!   (`fill_kept_once`), which the one-thread code reads.
//! - A warp collective whose membermask names every lane, in a group of whole warps, is
//!   computed in the group (`simd::warp`), which goes on without ending its round; lanes
//!   that reach it alone wait at it as at any sync point.
//! - A group that ends (`ret`, `exit`, the body's end) marks its lanes finished.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, Block, InstBuilder, MemFlagsData, Value, types};

use super::{Held, vector_of};
use crate::frontend::checked::{self, Op};
use crate::lower::simd::warp::Members;
use crate::lower::{LResult, Translator};
use crate::sync::frame;

/// The cooperative part of a kernel's group code.
pub(in crate::lower) struct CoopLanes {
    /// Per sync point, the group code after it, where a group whose lanes all wait there
    /// resumes; its parameter says whether the group saved every lane (`frame::GROUPED`).
    resume: Vec<Block>,
    /// The divergence site that runs each lane of the group alone from its frame (its index
    /// in `Lanes::resume_blocks`).
    alone_site: usize,
    /// Where a group ends: every lane marked finished, then the next group.
    done: Block,
    /// Per sync point, the saved registers whose slots hold their values where the group
    /// code reaches it (`sync::current_slots`), found at the first save.
    current: Option<Vec<Vec<u32>>>,
}

impl CoopLanes {
    /// For a kernel with `points` sync points; `alone_site` as above.
    pub(super) fn new(
        b: &mut cranelift_frontend::FunctionBuilder,
        points: usize,
        alone_site: usize,
    ) -> CoopLanes {
        CoopLanes {
            resume: (0..points)
                .map(|_| {
                    let blk = b.create_block();
                    b.append_block_param(blk, types::I32);
                    blk
                })
                .collect(),
            alone_site,
            done: b.create_block(),
            current: None,
        }
    }
}

/// Whether the group saves its lanes' states at sync point `inst` itself (else each lane
/// goes on alone from it): unguarded, and one that always waits.
fn saves_as_group(inst: &checked::Inst) -> bool {
    inst.guard.is_none() && crate::lower::sync::always_waits(inst.op)
}

impl Translator<'_, '_> {
    /// Whether the group resumes after sync point `inst` (else each lane resumes alone): it
    /// saves the lanes there, the results go to registers the group code keeps per lane, and
    /// the group does not compute it itself whenever it gets there (`simd::warp`).
    fn resumes_as_group(&self, inst: &checked::Inst) -> bool {
        let lanes = self.lanes.as_ref().expect("grouped");
        saves_as_group(inst)
            && crate::lower::liveness::destinations(inst)
                .iter()
                .all(|&d| !lanes.uniform[d as usize] && lanes.strides[d as usize].is_none())
            && !matches!(self.v_collective_members(inst), Some(Members::Known))
    }

    fn coop_lanes(&self) -> &CoopLanes {
        let lanes = self.lanes.as_ref().expect("grouped");
        lanes.coop.as_ref().expect("a cooperative kernel")
    }

    /// Where the group goes when every lane is finished: the next group, after marking each
    /// lane's frame in a cooperative kernel.
    pub(super) fn group_end(&self) -> Block {
        let lanes = self.lanes.as_ref().expect("grouped");
        lanes.coop.as_ref().map_or(lanes.next_group, |c| c.done)
    }

    /// The frames of the group's lanes, lane 0's first (lanes are consecutive threads, so
    /// consecutive frames).
    fn lane_frames(&mut self) -> Vec<Value> {
        let width = self.lanes.as_ref().expect("grouped").width;
        let frame0 = self.lane_frame0();
        let bytes = self.coop.as_ref().expect("cooperative").layout.bytes;
        (0..width)
            .map(|k| self.b.ins().iadd_imm_s(frame0, (k * bytes) as i64))
            .collect()
    }

    /// At a group's start in a cooperative kernel (its thread ids set): resume the group
    /// where all its lanes wait to (`fresh`: they have not started; after a sync point:
    /// its resume block), skip it where they are all finished, else run each lane alone.
    pub(super) fn coop_group_dispatch(&mut self, fresh: Block) {
        let flags = MemFlagsData::trusted();
        let frames = self.lane_frames();
        let r0 = self
            .b
            .ins()
            .load(types::I32, flags, frames[0], frame::RESUME);
        let mut apart = self
            .b
            .ins()
            .load(types::I32, flags, frames[0], frame::WAITING);
        let mut grouped = self
            .b
            .ins()
            .load(types::I32, flags, frames[0], frame::GROUPED);
        for &f in &frames[1..] {
            let r = self.b.ins().load(types::I32, flags, f, frame::RESUME);
            let w = self.b.ins().load(types::I32, flags, f, frame::WAITING);
            let g = self.b.ins().load(types::I32, flags, f, frame::GROUPED);
            let other = self.b.ins().bxor(r, r0);
            apart = self.b.ins().bor(apart, other);
            apart = self.b.ins().bor(apart, w);
            grouped = self.b.ins().band(grouped, g);
        }
        let alone = self.b.create_block();
        let together = self.b.create_block();
        self.b.ins().brif(apart, alone, &[], together, &[]);
        self.b.seal_block(together);
        self.b.switch_to_block(alone);
        self.fill_kept_once(r0, grouped, frames[0]);
        self.go_alone();
        self.b.switch_to_block(together);
        let (resume, next_group) = {
            let lanes = self.lanes.as_ref().expect("grouped");
            (
                lanes.coop.as_ref().expect("cooperative").resume.clone(),
                lanes.next_group,
            )
        };
        let points = crate::lower::sync::sync_points(self.func);
        let body = self.func.body.as_deref().expect("defined");
        let resumes: Vec<bool> = points
            .iter()
            .map(|p| self.resumes_as_group(&body[p.inst as usize]))
            .collect();
        let dfg = &mut self.b.func.dfg;
        let targets: Vec<ir::BlockCall> = std::iter::once(dfg.block_call(fresh, &[]))
            .chain(resume.iter().zip(resumes).map(|(&blk, r)| match r {
                true => dfg.block_call(blk, &[grouped.into()]),
                false => dfg.block_call(alone, &[]),
            }))
            .collect();
        // (Otherwise `DONE`: every lane is finished.)
        let default = self.b.func.dfg.block_call(next_group, &[]);
        let table = self
            .b
            .create_jump_table(ir::JumpTableData::new(default, &targets));
        self.b.ins().br_table(r0, table);
    }

    /// Before the lanes of a group that the group saved (`grouped`: every lane's
    /// `frame::GROUPED`) go on alone: the registers the group keeps once, which it saved in
    /// lane 0's frame only ([`Self::save_lanes`]), into every lane's, for the sync point
    /// lane 0 waits at (`r0`, its `frame::RESUME`). (Every lane still set there has not run
    /// since that save, or it would have saved itself: each waits at that point, or has
    /// finished and needs nothing. So filling again, a later round, writes what is there.)
    fn fill_kept_once(&mut self, r0: Value, grouped: Value, frame0: Value) {
        let flags = MemFlagsData::trusted();
        let coop = self.coop.as_ref().expect("cooperative");
        let (saved, slots) = (coop.saved.clone(), coop.layout.regs.clone());
        let lanes = self.lanes.as_ref().expect("grouped");
        let body = self.func.body.as_deref().expect("defined");
        let points = crate::lower::sync::sync_points(self.func);
        // Per sync point the group saves: its registers kept once, and their strides.
        let kept: Vec<Vec<(u32, i64)>> = points
            .iter()
            .zip(&saved)
            .map(|(p, saved)| match saves_as_group(&body[p.inst as usize]) {
                true => saved
                    .iter()
                    .filter_map(|&r| lanes.kept_once(r).map(|s| (r, s)))
                    .collect(),
                false => Vec::new(),
            })
            .collect();
        let go = self.b.create_block();
        let fill = self.b.create_block();
        self.b.ins().brif(grouped, fill, &[], go, &[]);
        self.b.seal_block(fill);
        self.b.switch_to_block(fill);
        // (A point with nothing to fill goes straight on.)
        let blocks: Vec<Block> = kept
            .iter()
            .map(|regs| match regs.is_empty() {
                true => go,
                false => self.b.create_block(),
            })
            .collect();
        let dfg = &mut self.b.func.dfg;
        let targets: Vec<ir::BlockCall> = std::iter::once(dfg.block_call(go, &[]))
            .chain(blocks.iter().map(|&blk| dfg.block_call(blk, &[])))
            .collect();
        let default = self.b.func.dfg.block_call(go, &[]);
        let table = self
            .b
            .create_jump_table(ir::JumpTableData::new(default, &targets));
        self.b.ins().br_table(r0, table);
        for (regs, blk) in kept.iter().zip(blocks).filter(|(regs, _)| !regs.is_empty()) {
            self.b.seal_block(blk);
            self.b.switch_to_block(blk);
            let first: Vec<Value> = regs
                .iter()
                .map(|&(r, _)| {
                    let ty = self.func.regs[r as usize].ty.ir_type();
                    self.b.ins().load(ty, flags, frame0, slots[r as usize])
                })
                .collect();
            self.each_frame(frame0, |t, lane, f| {
                for (&(r, stride), &v) in regs.iter().zip(&first) {
                    let v = t.held_lane(r, Held::Once(v, stride), lane);
                    t.b.ins().store(flags, v, f, slots[r as usize]);
                }
            })
            .expect("stores only");
            self.b.ins().jump(go, &[]);
        }
        self.b.seal_block(go);
        self.b.switch_to_block(go);
    }

    /// Runs each lane of the group alone from where its frame says, one after another
    /// (the one-thread code's dispatch: a lane that waits is skipped), then the next group;
    /// ends the current block.
    fn go_alone(&mut self) {
        let lanes = self.lanes.as_ref().expect("grouped");
        let site = lanes.coop.as_ref().expect("cooperative").alone_site;
        let blk = lanes.resume_blocks[site];
        self.enter_site(site, blk);
    }

    /// Emits the alone site's block (see [`Self::go_alone`]).
    pub(super) fn lower_alone_site(&mut self) {
        let lanes = self.lanes.as_ref().expect("grouped");
        let start = lanes.thread_start.expect("chosen");
        let blk = lanes.resume_blocks[lanes.coop.as_ref().expect("cooperative").alone_site];
        let k = self.next_lane(blk);
        self.set_lane_tid(k);
        self.b.ins().jump(start, &[]);
    }

    /// The group's end in a cooperative kernel: every lane's frame says it is finished.
    pub(super) fn lower_group_done(&mut self) {
        let (done, next_group) = (
            self.coop_lanes().done,
            self.lanes.as_ref().expect("grouped").next_group,
        );
        self.b.switch_to_block(done);
        let finished = self.b.ins().iconst(types::I32, frame::DONE as i64);
        for f in self.lane_frames() {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), finished, f, frame::RESUME);
        }
        self.b.ins().jump(next_group, &[]);
    }

    /// A cooperating instruction at `pos` in the group code. A sync point that always
    /// waits, unguarded: each lane's operands and registers go to its frame from the
    /// vectors, and the group resumes after it when its lanes all wait there
    /// ([`Self::coop_group_dispatch`]). Any other: each lane goes on alone from it. Returns
    /// whether the block ended.
    pub(super) fn group_cooperates(&mut self, inst: &checked::Inst, pos: usize) -> LResult<bool> {
        // A collective the group computes for whole warps (unguarded, then) needs no sync
        // point: not the first of a run of `mma`s (`sync::sync_points`), where the one-thread
        // code performs the others, so that a lane may not go on alone from them.
        let members = self.v_collective_members(inst);
        if let Some(Members::Known) = members {
            self.v_collective(inst)?;
            return Ok(false);
        }
        if self
            .coop
            .as_ref()
            .expect("cooperative")
            .merged
            .contains(&pos)
        {
            // (Not met: the group code computes every `mma` that joins a run.)
            return Err(
                self.err("the lane-group form cannot compute this mma of a run for whole warps")
            );
        }
        let point = self
            .coop
            .as_ref()
            .expect("cooperative")
            .point_of
            .get(&pos)
            .copied();
        let k = match point {
            Some(k) if saves_as_group(inst) => k,
            _ => {
                let none = self.b.ins().iconst(types::I64, 0);
                self.diverge(none, None, pos)?;
                return Ok(true);
            }
        };
        let resumes = self.resumes_as_group(inst);
        let resume = self.coop_lanes().resume[k];
        let Some(Members::InRegister(mask)) = members else {
            self.save_lanes(inst, k)?;
            if resumes {
                self.b.switch_to_block(resume);
                self.restore_lanes(k)?;
                self.lane_results(inst)?;
            }
            return Ok(!resumes);
        };
        // A warp collective whose membermask names every lane at run time: computed in the
        // group, which goes on. (Lanes that reached it alone, or a membermask of fewer
        // lanes, wait at it as above.)
        let all = self.v_members(mask)?;
        let (hot, cold) = self.branch_cold(all, false);
        self.b.switch_to_block(cold);
        self.save_lanes(inst, k)?;
        self.b.switch_to_block(hot);
        self.v_collective(inst)?;
        let after = self.b.create_block();
        self.b.ins().jump(after, &[]);
        if resumes {
            self.b.switch_to_block(resume);
            self.restore_lanes(k)?;
            self.lane_results(inst)?;
            self.b.ins().jump(after, &[]);
        }
        self.b.seal_block(after);
        self.b.switch_to_block(after);
        Ok(false)
    }

    /// At sync point `k` (`inst`): every lane waits there, as one thread would (its
    /// operands and the registers live after it in its frame), and the group ends its round.
    fn save_lanes(&mut self, inst: &checked::Inst, k: usize) -> LResult {
        let flags = MemFlagsData::trusted();
        let coop = self.coop.as_ref().expect("cooperative");
        let (saved, slots, frame_var, bytes) = (
            coop.saved[k].clone(),
            coop.layout.regs.clone(),
            coop.frame,
            coop.layout.bytes as i64,
        );
        // (Those whose slots hold their values already are left as they are.)
        let current = self.group_current(k);
        let saved: Vec<u32> = saved
            .into_iter()
            .filter(|r| current.binary_search(r).is_err())
            .collect();
        let next_group = self.lanes.as_ref().expect("grouped").next_group;
        let frame0 = self.lane_frame0();
        let held = self.hold_lanes(&saved);
        let [resume_at, one] = [k as i64 + 1, 1].map(|v| self.b.ins().iconst(types::I32, v));
        // A register the group keeps once goes to lane 0's frame alone: the group resumes
        // it from there, and lanes that go on alone first get it in theirs
        // (`fill_kept_once`).
        for (&r, h) in saved.iter().zip(&held) {
            if let Held::Once(x, _) = h {
                self.b.ins().store(flags, *x, frame0, slots[r as usize]);
            }
        }
        self.each_frame(frame0, |t, lane, f| {
            for (&r, h) in saved.iter().zip(&held) {
                if let Held::Area(..) = h {
                    let v = t.held_lane(r, *h, lane);
                    t.b.ins().store(flags, v, f, slots[r as usize]);
                }
            }
            t.b.ins().store(flags, resume_at, f, frame::RESUME);
            t.b.ins().store(flags, one, f, frame::WAITING);
            t.b.ins().store(flags, one, f, frame::GROUPED);
        })?;
        self.each_lane_value(inst, |t, lane| {
            let f = t.b.ins().iadd_imm_s(frame0, lane as i64 * bytes);
            t.b.def_var(frame_var, f);
            t.sync_operands(inst.op, &inst.args)
        })?;
        self.b.ins().jump(next_group, &[]);
        Ok(())
    }

    /// The registers of sync point `k`'s save whose slots hold their values where the group
    /// code reaches it (`sync::current_slots`, for the way the group code goes on past each
    /// point: it saves and resumes, computes a collective itself where its lanes'
    /// membermasks allow, always, or leaves it to the lanes alone). A register the group
    /// keeps once counts in lane 0's frame, where the group saves and restores it.
    fn group_current(&mut self, k: usize) -> Vec<u32> {
        use crate::lower::sync::{Pass, current_slots, sync_points};
        if self.coop_lanes().current.is_none() {
            let points = sync_points(self.func);
            let body = self.func.body.as_deref().expect("defined");
            let passes: Vec<Pass> = points
                .iter()
                .map(|p| {
                    let inst = &body[p.inst as usize];
                    match (saves_as_group(inst), self.v_collective_members(inst)) {
                        (false, _) => Pass::Leaves,
                        (true, None) if self.resumes_as_group(inst) => Pass::Waits,
                        (true, None) => Pass::Leaves,
                        (true, Some(Members::Known)) => Pass::GoesOn,
                        (true, Some(Members::InRegister(_))) => Pass::MayGoOn,
                    }
                })
                .collect();
            let saved = &self.coop.as_ref().expect("cooperative").saved;
            let current = current_slots(self.func, &points, saved, &passes);
            let lanes = self.lanes.as_mut().expect("grouped");
            lanes.coop.as_mut().expect("a cooperative kernel").current = Some(current);
        }
        self.coop_lanes().current.as_ref().expect("found")[k].clone()
    }

    /// After sync point `k` (in its resume block): the registers live after it from the
    /// lanes' frames. Those the group keeps once (uniform, lane-affine) come from lane 0's
    /// where the group saved every lane; else where each lane's hold that shape (else the
    /// lanes run alone).
    fn restore_lanes(&mut self, k: usize) -> LResult {
        let flags = MemFlagsData::trusted();
        let coop = self.coop.as_ref().expect("cooperative");
        let (saved, slots) = (coop.saved[k].clone(), coop.layout.regs.clone());
        let resume = self.coop_lanes().resume[k];
        let grouped = self.b.block_params(resume)[0];
        let frame0 = self.lane_frame0();
        let lanes = self.lanes.as_ref().expect("grouped");
        // Each register's stride between lanes, where the group keeps it once.
        let once: Vec<Option<i64>> = saved
            .iter()
            .map(|&r| match lanes.uniform[r as usize] {
                true => Some(0),
                false => lanes.strides[r as usize],
            })
            .collect();
        let (verify, restore) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(grouped, restore, &[], verify, &[]);
        self.b.seal_block(verify);
        self.b.switch_to_block(verify);
        // (As bits: a uniform register may be a float one.)
        let bits = |t: &mut Self, r: u32, f: Value| {
            let ty = t.func.regs[r as usize].ty.ir_type();
            let v = t.b.ins().load(ty, flags, f, slots[r as usize]);
            match ty.is_float() {
                true => t.b.ins().bitcast(ty.as_int(), MemFlagsData::new(), v),
                false => v,
            }
        };
        let kept: Vec<(u32, i64, Value)> = saved
            .iter()
            .zip(&once)
            .filter_map(|(&r, s)| s.map(|s| (r, s)))
            .map(|(r, s)| (r, s, bits(self, r, frame0)))
            .collect();
        let apart = self.b.declare_var(types::I8);
        let zero = self.b.ins().iconst(types::I8, 0);
        self.b.def_var(apart, zero);
        self.each_frame(frame0, |t, lane, f| {
            for &(r, stride, first) in &kept {
                let v = bits(t, r, f);
                let lane = t.coerce(lane, t.b.func.dfg.value_type(v), false);
                let step = t.b.ins().imul_imm_s(lane, stride);
                let expected = t.b.ins().iadd(first, step);
                let differs = t.b.ins().icmp(IntCC::NotEqual, v, expected);
                let a = t.b.use_var(apart);
                let a = t.b.ins().bor(a, differs);
                t.b.def_var(apart, a);
            }
        })?;
        let apart = self.b.use_var(apart);
        let (alike, cold) = self.branch_cold(apart, true);
        self.b.switch_to_block(cold);
        self.go_alone();
        self.b.switch_to_block(alike);
        self.b.ins().jump(restore, &[]);
        self.b.seal_block(restore);
        self.b.switch_to_block(restore);
        // The registers with vectors: each lane's value to the area, then the vectors.
        let lanes = self.lanes.as_ref().expect("grouped");
        let width = lanes.width as i32;
        let vectored: Vec<u32> = saved
            .iter()
            .zip(&once)
            .filter(|&(&r, s)| *s != Some(0) && !lanes.derived[r as usize])
            .map(|(&r, _)| r)
            .collect();
        let area = self.lanes_area(vectored.len());
        let base = self.b.ins().stack_addr(types::I64, area, 0);
        self.each_frame(frame0, |t, lane, f| {
            for (j, &r) in vectored.iter().enumerate() {
                let ty = t.func.regs[r as usize].ty.ir_type();
                let v = t.b.ins().load(ty, flags, f, slots[r as usize]);
                let off = t.b.ins().imul_imm_s(lane, ty.bytes() as i64);
                let at = t.b.ins().iadd(base, off);
                t.b.ins().store(flags, v, at, j as i32 * width * 8);
            }
        })?;
        for (j, &r) in vectored.iter().enumerate() {
            let vt = vector_of(self.func.regs[r as usize].ty.ir_type()).expect("eligible");
            let n = width as usize / vt.lane_count() as usize;
            let v = (0..n)
                .map(|c| {
                    let off = j as i32 * width * 8 + 16 * c as i32;
                    self.b.ins().load(vt, flags, base, off)
                })
                .collect();
            self.write_vectors(r, v);
        }
        for (&r, stride) in saved.iter().zip(&once) {
            let ty = self.func.regs[r as usize].ty.ir_type();
            let lanes = self.lanes.as_ref().expect("grouped");
            let (scalar, in_range) = (lanes.scalars[r as usize], lanes.in_range[r as usize]);
            if stride.is_some() {
                let v = self.b.ins().load(ty, flags, frame0, slots[r as usize]);
                self.b.def_var(scalar, v);
            }
            if let Some(flag) = in_range {
                let yes = self.b.ins().iconst(types::I8, 1);
                self.b.def_var(flag, yes);
            }
        }
        Ok(())
    }

    /// The frame of the group's lane 0 (lanes are consecutive threads, so consecutive
    /// frames).
    fn lane_frame0(&mut self) -> Value {
        let first = self.lanes.as_ref().expect("grouped").first;
        let first = first.map(|v| self.b.use_var(v));
        let linear = self.linear_id(first);
        self.thread_frame(linear)
    }

    /// `each` (given the lane, an `i64`, and its frame) in a loop over the group's lanes.
    fn each_frame(
        &mut self,
        frame0: Value,
        mut each: impl FnMut(&mut Self, Value, Value),
    ) -> LResult {
        let width = self.lanes.as_ref().expect("grouped").width as i64;
        let bytes = self.coop.as_ref().expect("cooperative").layout.bytes as i64;
        self.counted_loop(types::I64, width, 1, |t, lane| {
            let off = t.b.ins().imul_imm_s(lane, bytes);
            let f = t.b.ins().iadd(frame0, off);
            each(t, lane, f);
            Ok(())
        })
    }

    /// Each lane's results of sync point `inst` from its frame (`sync_results`, as one
    /// thread writes them), into the destinations' vectors.
    fn lane_results(&mut self, inst: &checked::Inst) -> LResult {
        if matches!(inst.op, Op::Wgmma(_)) {
            // (Its D is in the registers' save slots, restored with them: `lower::wgmma`.)
            return Ok(());
        }
        let mut dsts = crate::lower::liveness::destinations(inst);
        dsts.sort_unstable();
        dsts.dedup();
        if dsts.is_empty() {
            return Ok(());
        }
        let frame_var = self.coop.as_ref().expect("cooperative").frame;
        let mut values = vec![Vec::new(); dsts.len()];
        for f in self.lane_frames() {
            self.b.def_var(frame_var, f);
            self.enter_scalars();
            let r = self.sync_results(inst.op, &inst.args);
            self.enter_scalars();
            r?;
            let scalars = &self.lanes.as_ref().expect("grouped").scalars;
            let vars: Vec<_> = dsts.iter().map(|&d| scalars[d as usize]).collect();
            for (lane, var) in values.iter_mut().zip(vars) {
                lane.push(self.b.use_var(var));
            }
        }
        for (&d, lane) in dsts.iter().zip(values) {
            let v = self.vectors_of_lanes(&lane);
            self.write_vectors(d, v);
        }
        Ok(())
    }

    /// The vectors over the lanes of values `lane` (lane 0 first).
    pub(in crate::lower) fn vectors_of_lanes(&mut self, lane: &[Value]) -> Vec<Value> {
        let ty = self.b.func.dfg.value_type(lane[0]);
        let vt = vector_of(ty).expect("a lane type");
        lane.chunks(vt.lane_count() as usize)
            .map(|chunk| {
                let mut v = self.b.ins().splat(vt, chunk[0]);
                for (j, &x) in chunk.iter().enumerate().skip(1) {
                    v = self.b.ins().insertlane(v, x, j as u8);
                }
                v
            })
            .collect()
    }
}
