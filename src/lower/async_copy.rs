//! `cp.async` and `cp.async.bulk`: the copy is made when the instruction executes. The ISA
//! lets an asynchronous copy complete at any time before the wait that covers it
//! (`cp.async.wait_group`/`wait_all`, `cp.async.bulk.wait_group`, or the mbarrier phase its
//! bytes complete on) and makes reading or writing its destination earlier a race; completing
//! at issue is one such time, so the commit and wait instructions have nothing left to order.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};
use ptxjit_runtime::Status;

use super::{LResult, Translator};
use crate::frontend::ast::{Immediate, StateSpace};
use crate::frontend::checked::{Arg, MbarrierOp};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}
    /// {, cache-policy}`: `cp-size` bytes to shared memory, of which the first `src-size` come
    /// from `src` and the rest are zeros (all zeros when `ignore-src` is true); bytes past
    /// `src-size` are never read.
    pub fn cp_async(&mut self, cg: bool, hint: bool, a: &[Arg]) -> LResult {
        let size = match a.get(2) {
            Some(Arg::Imm(Immediate::Int(n @ (4 | 8 | 16)))) if !cg || *n == 16 => *n as u32,
            _ if cg => return Err(self.err("cp.async.cg copies 16 bytes")),
            _ => return Err(self.err("cp-size is 4, 8 or 16")),
        };
        let policy = if hint { a.len().checked_sub(1) } else { None };
        if let Some(i) = policy.filter(|&i| i > 2) {
            self.read(&a[i], PtxType::B64)?;
        } else if hint {
            return Err(self.err(".L2::cache_hint needs a cache-policy operand"));
        }
        let extra = &a[3..policy.unwrap_or(a.len())];
        // The bytes read from `src`: all, or `src-size`, or none where `ignore-src` holds.
        let from_src = match extra {
            [] => None,
            [p @ (Arg::Not(_) | Arg::Reg(_))] if self.is_predicate(p) => {
                let ignore = self.read(p, PtxType::Pred)?;
                let full = self.b.ins().iconst(types::I32, size as i64);
                let none = self.b.ins().iconst(types::I32, 0);
                Some(self.b.ins().select(ignore, none, full))
            }
            [n] => Some(self.read(n, PtxType::U32)?),
            _ => return Err(self.err("cp.async takes src-size or ignore-src, not both")),
        };
        let dst = self.access_address(&a[0], StateSpace::Shared, size, true)?;
        let Some(count) = from_src else {
            return self.copy_whole(dst, &a[1], size);
        };
        let whole = self.b.create_block();
        let partial = self.b.create_block();
        let done = self.b.create_block();
        let is_whole =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, count, size as i64);
        self.b.ins().brif(is_whole, whole, &[], partial, &[]);
        self.b.switch_to_block(whole);
        self.copy_whole(dst, &a[1], size)?;
        self.b.ins().jump(done, &[]);
        // Zeros, then the source's first `count` bytes over them, one a turn of a loop whose
        // check of a byte (naming the byte that fails) is emitted once: a 16-byte copy's
        // bytes one after another had been 600 Cranelift instructions.
        self.b.switch_to_block(partial);
        let zero = self.b.ins().iconst(types::I64, 0);
        match size {
            4 => {
                let zero = self.b.ins().ireduce(types::I32, zero);
                self.b.ins().store(MemFlagsData::new(), zero, dst, 0);
            }
            _ => {
                for w in 0..size as i32 / 8 {
                    self.b.ins().store(MemFlagsData::new(), zero, dst, 8 * w);
                }
            }
        }
        let src = self.address(&a[1], StateSpace::Global)?;
        let count = self.b.ins().uextend(types::I64, count);
        self.copy_loop(dst, None, src, StateSpace::Global, count, 1);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// `cp.async.bulk [dstMem], [srcMem], size{, [mbar]}{, cache-policy}`: `size` bytes, 16 at a
    /// time, each chunk checked in its space; then, for a copy to shared memory, the
    /// complete-tx of `size` bytes on `mbar`.
    pub fn cp_async_bulk(
        &mut self,
        to_global: bool,
        from_shared: bool,
        hint: bool,
        a: &[Arg],
    ) -> LResult {
        let (dst_space, src_space) = match (to_global, from_shared) {
            (true, _) => (StateSpace::Global, StateSpace::Shared),
            (false, true) => (StateSpace::SharedCluster, StateSpace::Shared),
            (false, false) => (StateSpace::SharedCluster, StateSpace::Global),
        };
        if hint {
            let policy = a.last().expect("the row has a cache-policy operand");
            self.read(policy, PtxType::B64)?;
        }
        let size = self.read(&a[2], PtxType::U32)?;
        let size = self.b.ins().uextend(types::I64, size);
        let dst = self.address(&a[0], dst_space)?;
        let src = self.address(&a[1], src_space)?;
        self.copy_chunks(dst, dst_space, src, src_space, size);
        if !to_global {
            let mbar = self.access_address(&a[3], StateSpace::SharedCluster, 8, true)?;
            let op = MbarrierOp::CompleteTx;
            self.mbarrier_run(op, mbar, size);
        }
        Ok(())
    }

    /// Copies `size` bytes (a multiple of 16, else a misaligned access) in 16-byte chunks.
    fn copy_chunks(
        &mut self,
        dst: Value,
        dst_space: StateSpace,
        src: Value,
        src_space: StateSpace,
        size: Value,
    ) {
        let rem = self.b.ins().band_imm_u(size, 15);
        let (whole, ragged) = self.branch_cold(rem, true);
        self.b.switch_to_block(ragged);
        self.return_status(Status::MISALIGNED);
        self.b.switch_to_block(whole);
        self.copy_loop(dst, Some(dst_space), src, src_space, size, 16);
    }

    /// A loop that copies `size` bytes (an `i64`, a multiple of `unit`: 1 or 16) from `src`
    /// in `src_space` to `dst`, `unit` bytes a turn, each unit's source checked (and its
    /// destination, in `dst_space` where given) before it is copied; the code after it
    /// follows.
    fn copy_loop(
        &mut self,
        dst: Value,
        dst_space: Option<StateSpace>,
        src: Value,
        src_space: StateSpace,
        size: Value,
        unit: u32,
    ) {
        let (head, body, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.append_block_param(head, types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let i = self.b.block_params(head)[0];
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, size);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.seal_block(body);
        self.b.switch_to_block(body);
        let from = self.b.ins().iadd(src, i);
        let to = self.b.ins().iadd(dst, i);
        self.check_access(from, src_space, unit, false);
        if let Some(space) = dst_space {
            self.check_access(to, space, unit, true);
        }
        let (ty, words) = match unit {
            1 => (types::I8, 1),
            _ => (types::I64, 2),
        };
        for w in 0..words {
            let v = self.b.ins().load(ty, MemFlagsData::new(), from, 8 * w);
            self.b.ins().store(MemFlagsData::new(), v, to, 8 * w);
        }
        let next = self.b.ins().iadd_imm_s(i, i64::from(unit));
        self.b.ins().jump(head, &[next.into()]);
        self.b.seal_block(head);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
    }

    fn copy_whole(&mut self, dst: cranelift_codegen::ir::Value, src: &Arg, size: u32) -> LResult {
        let src = self.access_address(src, StateSpace::Global, size, false)?;
        let (ty, words) = match size {
            4 => (types::I32, 1),
            8 => (types::I64, 1),
            _ => (types::I64, 2),
        };
        for w in 0..words {
            let v = self.b.ins().load(ty, MemFlagsData::new(), src, 8 * w);
            self.b.ins().store(MemFlagsData::new(), v, dst, 8 * w);
        }
        Ok(())
    }

    pub(super) fn is_predicate(&self, arg: &Arg) -> bool {
        match arg {
            Arg::Not(_) => true,
            Arg::Reg(r) => self.func.regs[*r as usize].ty == PtxType::Pred,
            _ => false,
        }
    }
}
