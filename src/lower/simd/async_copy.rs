//! `cp.async` in the group code. In Triton's pipelines each lane copies its own `cp-size`
//! bytes, lane k's source and destination the first lane's plus k × `cp-size`, and each
//! copies all of them or (`src-size` 0, past a row's end) none. Where that holds in every
//! lane of a group, the copy is one range check a side and vector loads and stores (or
//! stores of zeros, nothing read); otherwise, as at a row's last group, it goes lane by lane
//! (`lower::async_copy`'s one-thread code), which also names the lane of any fault.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::super::{LResult, Translator};
use super::Wide;
use crate::frontend::ast::{Immediate, StateSpace};
use crate::frontend::checked::{AddrBase, Arg, Inst, Op};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}{, cache-policy}` on
    /// every lane, where the destination register is lane-affine with step `cp-size` and
    /// the source a 64-bit register of varying lanes (tested contiguous at run time).
    pub(in crate::lower) fn v_cp_async(&mut self, inst: &Inst) -> LResult<bool> {
        let (Op::CpAsync { hint, .. }, [dst, src, size, rest @ ..]) = (inst.op, &inst.args[..])
        else {
            return Ok(false);
        };
        let &Arg::Imm(Immediate::Int(size @ (4 | 8 | 16))) = size else {
            return Ok(false);
        };
        let size = size as u32;
        // (A cache hint's policy operand last; its absence is the one-thread code's error.)
        let Some(extra) = rest.get(..rest.len().wrapping_sub(usize::from(hint))) else {
            return Ok(false);
        };
        let (
            &Arg::Addr {
                base: AddrBase::Reg(dst_base),
                ..
            },
            &Arg::Addr {
                base: AddrBase::Reg(src_base),
                offset: src_offset,
            },
        ) = (dst, src)
        else {
            return Ok(false);
        };
        let lanes = self.lanes.as_ref().expect("grouped");
        let dst_apart = lanes.strides[dst_base as usize] == Some(i64::from(size));
        let src_wide = self.func.regs[src_base as usize].ty.ir_type() == types::I64;
        if !dst_apart || !src_wide || self.is_uniform_reg(src_base) {
            return Ok(false);
        }
        let count = match extra {
            [] => None,
            [n] if !self.is_predicate(n) && self.v_src_ok(n, PtxType::U32) => {
                Some(self.v_read(n, PtxType::U32)?)
            }
            _ => return Ok(false),
        };
        // Every lane copying all its bytes, or none of them.
        let (all, none) = match count {
            None => {
                let yes = self.b.ins().iconst(types::I8, 1);
                (yes, self.b.ins().iconst(types::I8, 0))
            }
            Some(count) => (
                self.every_lane_is(&count, IntCC::UnsignedGreaterThanOrEqual, size),
                self.every_lane_is(&count, IntCC::Equal, 0),
            ),
        };
        // Lane 0's shared address from its offset (the register's scalar), as `ld.shared`'s
        // vector form takes it.
        self.enter_scalars();
        let to = self.address(dst, StateSpace::Shared);
        self.enter_scalars();
        let to = to?;
        let (from, together) = self.v_lanes_apart(src_base, src_offset, size)?;
        let span = size * self.width() as u32;
        // (The destination's lanes are contiguous by its stride; the source's as tested.)
        let (mut to_ok, mut from_ok) = (self.b.ins().iconst(types::I8, 1), together);
        if self.confined {
            let (ok, _) = self.accessible(to, StateSpace::Shared, span, size);
            to_ok = self.b.ins().band(to_ok, ok);
            let (ok, _) = self.accessible(from, StateSpace::Global, span, size);
            from_ok = self.b.ins().band(from_ok, ok);
        }
        let copy = self.b.ins().band(all, from_ok);
        let copy = self.b.ins().band(copy, to_ok);
        let zeros = self.b.ins().band(none, to_ok);
        let join = self.b.create_block();
        let flags = MemFlagsData::new();
        let chunks = (span / 16) as i32;

        let (copying, not_copying) = self.branch_cold(copy, false);
        self.b.switch_to_block(copying);
        for c in 0..chunks {
            let v = self.b.ins().load(types::I8X16, flags, from, 16 * c);
            self.b.ins().store(flags, v, to, 16 * c);
        }
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(not_copying);
        let (zeroing, by_lane) = self.branch_cold(zeros, false);
        self.b.switch_to_block(zeroing);
        let zero = self.v_const(types::I8X16, &[0; 16]);
        for c in 0..chunks {
            self.b.ins().store(flags, zero, to, 16 * c);
        }
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(by_lane);
        self.lane_by_lane_looped(inst)?;
        self.b.ins().jump(join, &[]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(true)
    }

    /// Whether every lane of `v` (i32 lanes) compares `cc` with `n` (an `i8`, 0 or 1).
    fn every_lane_is(&mut self, v: &[Value], cc: IntCC, n: u32) -> Value {
        let n = self.v_splat(types::I32X4, i64::from(n));
        let holds: Wide = v.iter().map(|&x| self.b.ins().icmp(cc, x, n)).collect();
        self.v_all(&holds)
    }
}
