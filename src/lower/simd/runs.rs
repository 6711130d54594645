//! Runs: a thread's consecutive elements, one access each, as Triton emits them: a thread
//! of a block of 128 loads its 4 (or 8) words at `[%rd + 0]`, `[%rd + 4]`, `[%rd + 8]`,
//! `[%rd + 12]`, each under its own bounds guard, with lanes 16 bytes apart. One access at a
//! time, each is a strided access of the group (`v_access`): its span read for one element
//! in four, or its elements stored one by one. Together they cover the group's span
//! exactly, so the run is one contiguous access: the span read (or written) once, its
//! elements dealt out to (or gathered from) the registers by byte shuffles.
//!
//! A run's accesses are lowered together where its last one stands ([`plan`]); the
//! instructions between them, moved past, must commute with them. Where a guard fails in a
//! lane, or the span fails its range check, each access takes its own form there, in order.

use std::collections::HashMap;

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types};

use super::{Wide, access_elements};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{AddrBase, Arg, Function, Inst, Op};
use crate::lower::lanes::vector_of;
use crate::lower::liveness::{destinations, sources};
use crate::lower::{LResult, Translator};

/// The runs of a function's body.
#[derive(Default)]
pub struct Runs {
    /// Each run's positions, by the position of its last access, where it is lowered.
    pub at_last: HashMap<usize, Vec<usize>>,
    /// The positions of accesses lowered with their run's last one.
    pub deferred: Vec<bool>,
}

/// The most instructions looked through for a run's next access.
const REACH: usize = 24;

/// The access `inst` as (load or not, base register, offset, element size), if it may start
/// or continue a run: one element of global memory a lane through a register ([`data`]).
fn element_access(inst: &Inst) -> Option<(bool, u32, i64, u32)> {
    let (load, space, ty, vec) = match inst.op {
        Op::Ld { space, ty, vec } => (true, space, ty, vec),
        Op::St { space, ty, vec } => (false, space, ty, vec),
        _ => return None,
    };
    let addr = &inst.args[usize::from(load)];
    match *addr {
        Arg::Addr {
            base: AddrBase::Reg(base),
            offset,
        } if vec == 1
            && access_elements(&inst.args[usize::from(!load)], 1).is_some()
            && matches!(space, StateSpace::Global | StateSpace::Generic)
            && matches!(ty.size(), 1 | 2 | 4 | 8) =>
        {
            Some((load, base, offset, ty.size()))
        }
        _ => None,
    }
}

/// The register an access of a run loads, or the value it stores.
fn data(inst: &Inst, load: bool) -> &Arg {
    &access_elements(&inst.args[usize::from(!load)], 1).expect("checked by element_access")[0]
}

/// Whether `x`, between a run's accesses, may be moved past the access `m`: an instruction
/// on registers only, writing none that `m` reads and touching none that `m` writes.
fn commutes(m: &Inst, x: &Inst) -> bool {
    let pure = matches!(
        x.op,
        Op::Mov(_)
            | Op::Int { .. }
            | Op::Float { .. }
            | Op::Setp { .. }
            | Op::Selp(_)
            | Op::Cvt { .. }
    );
    let (m_reads, m_writes) = (sources(m), destinations(m));
    let x_writes = destinations(x);
    pure && !x_writes
        .iter()
        .any(|r| m_reads.contains(r) || m_writes.contains(r))
        && !sources(x).iter().any(|r| m_writes.contains(r))
}

/// Finds the runs of `f`: accesses of one element a lane, of `size` bytes, through one
/// varying base register whose lanes are `m × size` bytes apart (m = 2, 4 or 8, at most 16
/// bytes), at offsets
/// `o, o + size, …` in order, in one basic block, the instructions between them commuting
/// with the accesses before them ([`commutes`]).
pub fn plan(f: &Function, uniform: &[bool], strides: &[Option<i64>]) -> Runs {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut runs = Runs {
        deferred: vec![false; body.len()],
        ..Runs::default()
    };
    let mut taken = vec![false; body.len()];
    for (start, first) in body.iter().enumerate() {
        let Some((load, base, offset, size)) = element_access(first) else {
            continue;
        };
        if taken[start] || uniform[base as usize] {
            continue;
        }
        // The run's length where the lanes' distance is known (else up to 8, and the lanes
        // are tested at run time); its bytes at most 16, a lane's whole in one vector.
        let bytes = i64::from(size);
        let known = match strides[base as usize] {
            None => None,
            Some(s) if s <= 16 && s % bytes == 0 && matches!(s / bytes, 2 | 4 | 8) => {
                Some(s / bytes)
            }
            Some(_) => continue,
        };
        let m = known.unwrap_or((16 / bytes).min(8));
        let mut members = vec![start];
        for pos in start + 1..body.len().min(start + REACH) {
            // (A label starts another block.)
            if f.labels.contains(&pos) {
                break;
            }
            let x = &body[pos];
            let next = bytes * members.len() as i64 + offset;
            if element_access(x) == Some((load, base, next, size))
                && x.op == first.op
                && !destinations(x)
                    .iter()
                    .any(|r| members.iter().any(|&p| destinations(&body[p]).contains(r)))
            {
                members.push(pos);
                if members.len() as i64 == m {
                    break;
                }
                continue;
            }
            if !members.iter().all(|&p| commutes(&body[p], x)) {
                break;
            }
        }
        let whole = match known {
            Some(m) => members.len() as i64 == m,
            None => matches!(members.len(), 2 | 4 | 8),
        };
        if whole {
            let last = *members.last().expect("members");
            for &p in &members {
                taken[p] = true;
                runs.deferred[p] = p != last;
            }
            runs.at_last.insert(last, members);
        }
    }
    runs
}

impl<'a> Translator<'a, '_> {
    /// Lowers the run whose accesses stand at `members` (the last one here): as one access
    /// of the group's span where every guard holds in every lane and the span passes its
    /// range check; else each access in its own form, in order.
    pub(in crate::lower) fn v_run(&mut self, members: &[usize]) -> LResult {
        let func: &'a Function = self.func;
        let body = func.body.as_deref().expect("a body");
        let insts: Vec<&'a Inst> = members.iter().map(|&p| &body[p]).collect();
        let (load, base, offset, size) = element_access(insts[0]).expect("planned");
        let (Op::Ld { space, ty, .. } | Op::St { space, ty, .. }) = insts[0].op else {
            unreachable!("an access")
        };
        let data_ok = insts.iter().all(|i| match load {
            true => self.v_dst_ok(data(i, load), ty),
            false => self.v_src_ok(data(i, load), ty),
        });
        let join = self.b.create_block();
        if data_ok {
            let mut every = self.b.ins().iconst(types::I8, 1);
            for i in &insts {
                if let Some(g) = i.guard {
                    let (holds, _) = self.guard_everywhere(g);
                    every = self.b.ins().band(every, holds);
                }
            }
            let stride = size * insts.len() as u32;
            let (first, together) = self.v_lanes_apart(base, offset, stride)?;
            let span = stride * self.width() as u32;
            let mut ok = self.b.ins().band(every, together);
            if self.confined {
                let (inside, _) = self.accessible(first, space, span, size);
                ok = self.b.ins().band(ok, inside);
            }
            let (fast, slow) = self.branch_cold(ok, false);
            self.b.switch_to_block(fast);
            let flags = MemFlagsData::new();
            let n = (span / 16) as usize;
            if load {
                let loaded: Wide = (0..n)
                    .map(|c| self.b.ins().load(types::I8X16, flags, first, 16 * c as i32))
                    .collect();
                let vt = vector_of(ty.ir_type()).expect("1 to 8 bytes");
                for (i, part) in insts.iter().zip(self.v_split(loaded, stride, insts.len())) {
                    let part = self.v_as(part, vt);
                    self.v_write(data(i, load), part);
                }
            } else {
                let mut parts = Vec::new();
                for i in &insts {
                    parts.push(self.v_read(data(i, load), ty)?);
                }
                for (c, v) in self.v_join(parts, size).into_iter().enumerate() {
                    self.b.ins().store(flags, v, first, 16 * c as i32);
                }
            }
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(slow);
        }
        for (&i, &pos) in insts.iter().zip(members) {
            // (Each in its own name: a fault names its instruction.)
            self.inst_index = pos as u32;
            self.span = i.span;
            self.opcode = &i.opcode;
            if !self.vector_form(i, pos)? {
                self.lane_by_lane(i)?;
            }
        }
        self.b.ins().jump(join, &[]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(())
    }
}
