//! `cp.async`: the copy is made when the instruction executes. The ISA lets an asynchronous
//! copy complete at any time before the `cp.async.wait_group`/`wait_all` that covers it, and
//! makes reading or writing its destination earlier a race; completing at issue is one such
//! time, so the commit and wait instructions have nothing left to order.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types};

use super::{LResult, Translator};
use crate::frontend::ast::{Immediate, StateSpace};
use crate::frontend::checked::Arg;
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
        // Byte k of the destination: the source's byte k if k < count, else zero.
        self.b.switch_to_block(partial);
        let Arg::Addr { base, offset } = &a[1] else {
            return Err(self.err("cp.async's source is an address"));
        };
        for k in 0..size {
            let from = self.b.create_block();
            let zero = self.b.create_block();
            let next = self.b.create_block();
            self.b.append_block_param(next, types::I8);
            let inside = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThan, count, k as i64);
            self.b.ins().brif(inside, from, &[], zero, &[]);
            self.b.switch_to_block(from);
            let byte = Arg::Addr {
                base: *base,
                offset: offset + k as i64,
            };
            let src = self.access_address(&byte, StateSpace::Global, 1, false)?;
            let v = self.b.ins().load(types::I8, MemFlagsData::new(), src, 0);
            self.b.ins().jump(next, &[v.into()]);
            self.b.switch_to_block(zero);
            let z = self.b.ins().iconst(types::I8, 0);
            self.b.ins().jump(next, &[z.into()]);
            self.b.switch_to_block(next);
            let v = self.b.block_params(next)[0];
            self.b.ins().store(MemFlagsData::new(), v, dst, k as i32);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
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

    fn is_predicate(&self, arg: &Arg) -> bool {
        match arg {
            Arg::Not(_) => true,
            Arg::Reg(r) => self.func.regs[*r as usize].ty == PtxType::Pred,
            _ => false,
        }
    }
}
