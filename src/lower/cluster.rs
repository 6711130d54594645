//! Clusters (sm_90): `.shared::cluster` addresses, `mapa`, `getctarank` and
//! `barrier.cluster.arrive` (its `wait` is a synchronization point: `crate::sync`).
//!
//! # `.shared::cluster` addresses
//! The blocks of a cluster run together, their shared memories side by side
//! (`ptxjit_runtime::ClusterPlace`). A `.shared::cluster` address is 32 bits: bits 24–31
//! choose a *window*, bits 0–23 a byte of that window's block. Window 0 is the executing
//! block's own, so every `.shared::cta` address is also the `.shared::cluster` address of
//! the same byte, as the ISA requires; window r + 1 is the block of rank r, the same bytes in
//! every block of the cluster (what `mapa` returns). Generic addresses of shared memory are
//! host addresses, as for every other space, so a generic pointer into another block's shared
//! memory is one too.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::{LResult, Translator, ctx, invariant};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::Arg;
use crate::sync::frame;
use crate::types::PtxType;

/// Bits 0–23 of a `.shared::cluster` address: the byte within its window.
const WINDOW_SHIFT: i64 = 24;
const OFFSET_MASK: i64 = (1 << WINDOW_SHIFT) - 1;
/// The window `mapa` gives for a rank beyond every cluster: accesses through it fault.
const NO_WINDOW: i64 = 0xFF;

impl Translator<'_, '_> {
    /// The host address of a `.shared::cluster` address (its low 32 bits).
    pub(super) fn cluster_window_to_host(&mut self, addr: Value) -> Value {
        let word = self.b.ins().band_imm_u(addr, 0xFFFF_FFFF);
        let window = self.b.ins().ushr_imm_u(word, WINDOW_SHIFT);
        let offset = self.b.ins().band_imm_u(word, OFFSET_MASK);
        let rank = self.b.ins().iadd_imm_s(window, -1);
        let remote = self.rank_shared_base(rank);
        let own = self.b.ins().icmp_imm_u(IntCC::Equal, window, 0);
        let base = self.b.ins().select(own, self.shared_base, remote);
        self.b.ins().iadd(base, offset)
    }

    /// The `.shared::cluster` address (window r + 1) of a host address in the shared memory
    /// of the cluster's block of rank r.
    pub(super) fn host_to_cluster_window(&mut self, host: Value) -> Value {
        let (rank, offset) = self.rank_and_offset(host);
        let window = self.b.ins().iadd_imm_s(rank, 1);
        let window = self.b.ins().ishl_imm_u(window, WINDOW_SHIFT);
        self.b.ins().bor(window, offset)
    }

    /// Whether `[host, host + width)` lies in the shared memory of one block of the
    /// cluster (as an i8 0/1).
    pub(super) fn in_cluster_shared(&mut self, host: Value, width: u32) -> Value {
        let (rank, offset) = self.rank_and_offset(host);
        let ranks = self.ctx_u32(ctx::CLUSTER_NCTARANK);
        let ranks = self.b.ins().uextend(types::I64, ranks);
        let member = self.b.ins().icmp(IntCC::UnsignedLessThan, rank, ranks);
        let last = self.b.ins().iadd_imm_s(offset, width as i64);
        let len = self.shared_len();
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, last, len);
        self.b.ins().band(member, fits)
    }

    /// The rank of the block whose shared memory would hold host address `host`, and the
    /// offset in it (both i64; a rank past the cluster's for an address outside it).
    fn rank_and_offset(&mut self, host: Value) -> (Value, Value) {
        let base = self.cluster_shared_base();
        let from_base = self.b.ins().isub(host, base);
        // (A launch without shared memory has a stride of 0: every address is outside.)
        let stride = self.shared_stride();
        let one = self.b.ins().iconst(types::I64, 1);
        let stride = self.b.ins().umax(stride, one);
        let rank = self.b.ins().udiv(from_base, stride);
        let start = self.b.ins().imul(rank, stride);
        let offset = self.b.ins().isub(from_base, start);
        (rank, offset)
    }

    /// The start of the shared memory of the cluster's block that holds host address `host`.
    pub(super) fn block_shared_base(&mut self, host: Value) -> Value {
        let (_, offset) = self.rank_and_offset(host);
        self.b.ins().isub(host, offset)
    }

    /// The host address of the shared memory of the cluster's block of rank `rank` (i64).
    fn rank_shared_base(&mut self, rank: Value) -> Value {
        let stride = self.shared_stride();
        let start = self.b.ins().imul(rank, stride);
        let base = self.cluster_shared_base();
        self.b.ins().iadd(base, start)
    }

    fn cluster_shared_base(&mut self) -> Value {
        self.b
            .ins()
            .load(types::I64, invariant(), self.ctx, ctx::CLUSTER_SHARED)
    }

    fn shared_stride(&mut self) -> Value {
        self.b
            .ins()
            .load(types::I64, invariant(), self.ctx, ctx::SHARED_STRIDE)
    }

    /// `mapa{.shared::cluster}.type d, a, b`: `a`'s byte in the block of rank `b`.
    pub fn mapa(&mut self, space: StateSpace, ty: PtxType, a: &[Arg]) -> LResult {
        let addr = self.read(&a[1], ty)?;
        let addr = self.extend(addr, types::I64, false);
        let rank = self.read(&a[2], PtxType::U32)?;
        let rank = self.b.ins().uextend(types::I64, rank);
        let mapped = if space == StateSpace::SharedCluster {
            let offset = self.b.ins().band_imm_u(addr, OFFSET_MASK);
            let last = self.b.ins().iconst(types::I64, NO_WINDOW - 1);
            let rank = self.b.ins().umin(rank, last);
            let window = self.b.ins().iadd_imm_s(rank, 1);
            let window = self.b.ins().ishl_imm_u(window, WINDOW_SHIFT);
            self.b.ins().bor(window, offset)
        } else {
            let (_, offset) = self.rank_and_offset(addr);
            let base = self.rank_shared_base(rank);
            self.b.ins().iadd(base, offset)
        };
        let mapped = self.coerce(mapped, ty.ir_type(), false);
        self.write(&a[0], mapped, ty)
    }

    /// `getctarank{.shared::cluster}.type d, a`: the rank of the block `a` points into.
    pub fn getctarank(&mut self, space: StateSpace, ty: PtxType, a: &[Arg]) -> LResult {
        let addr = self.read(&a[1], ty)?;
        let addr = self.extend(addr, types::I64, false);
        let rank = if space == StateSpace::SharedCluster {
            let word = self.b.ins().band_imm_u(addr, 0xFFFF_FFFF);
            let window = self.b.ins().ushr_imm_u(word, WINDOW_SHIFT);
            let window = self.b.ins().ireduce(types::I32, window);
            let remote = self.b.ins().iadd_imm_s(window, -1);
            let own = self.ctx_u32(ctx::CLUSTER_CTARANK);
            let is_own = self.b.ins().icmp_imm_u(IntCC::Equal, window, 0);
            self.b.ins().select(is_own, own, remote)
        } else {
            let (rank, _) = self.rank_and_offset(addr);
            self.b.ins().ireduce(types::I32, rank)
        };
        self.write(&a[0], rank, PtxType::U32)
    }

    /// `barrier.cluster.arrive`: the thread records that it arrived in the barrier's current
    /// phase (`crate::sync` completes the phase and releases the waits).
    pub fn cluster_arrive(&mut self) {
        let coop = self
            .coop
            .as_ref()
            .expect("an arrival makes a kernel cooperative");
        let frames = coop.frames;
        let flags = MemFlagsData::trusted();
        let completed = self
            .b
            .ins()
            .load(types::I32, flags, frames, frame::CLUSTER_PHASES);
        let phase = self.b.ins().iadd_imm_s(completed, 1);
        let frame = self.frame();
        self.b
            .ins()
            .store(flags, phase, frame, frame::CLUSTER_ARRIVAL);
    }
}
