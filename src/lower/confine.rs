//! Memory confinement: every access whose address the kernel computes is checked before it
//! happens, so that no PTX can read or write host memory outside what the launch gave it.
//!
//! - global, const: inside a live device allocation (`ptxjit_runtime::arena`: offset from the
//!   arena base, one load from its slot table; no branch on the common path);
//! - shared: inside the block's shared memory (static plus dynamic bytes);
//! - local: inside the thread's `.local` variables;
//! - param: inside the kernel's parameter buffer;
//! - generic: any of global, shared, local, and a kernel's parameters (`cvta.param`).
//!
//! An access through a variable's name and a constant offset is checked once, here, at
//! compile time. Every access must also be aligned to its width (PTX requires it; CUDA
//! reports a misaligned address). A failing check stores the address and the access in the
//! block context and ends the launch with `Status::ILLEGAL_ADDRESS` or `Status::MISALIGNED`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, Value, types};
use ptxjit_runtime::{Fault, Status};

use super::{LResult, Translator, VarLoc, ctx, invariant};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{AddrBase, Arg, Symbol};

/// A record of the `.local` chain: the first byte and length of one function's window, and
/// the address of its caller's record (0 past the kernel).
const CHAIN_LO: i32 = 0;
const CHAIN_LEN: i32 = 8;
const CHAIN_NEXT: i32 = 16;
const CHAIN_RECORD_BYTES: u32 = 24;

impl Translator<'_, '_> {
    /// The host address of memory operand `arg`, `width` bytes accessed in `space`, checked
    /// (when the module is compiled confined).
    pub fn access_address(
        &mut self,
        arg: &Arg,
        space: StateSpace,
        width: u32,
        is_store: bool,
    ) -> LResult<Value> {
        let addr = self.address(arg, space)?;
        if !self.confined {
            return Ok(addr);
        }
        if let Arg::Addr {
            base: AddrBase::Symbol(sym),
            offset,
        } = arg
            && let Some(size) = self.symbol_size(*sym)
        {
            // A named variable: in bounds or not, known now.
            if *offset < 0 || *offset as u64 + width as u64 > size {
                let always = self.b.ins().iconst(types::I8, 1);
                let why = Why::Always(Status::ILLEGAL_ADDRESS);
                self.fault_with(always, addr, space, width, is_store, why);
            }
            return Ok(addr);
        }
        self.check_access(addr, space, width, is_store);
        Ok(addr)
    }

    /// Checks `width` bytes at the host address `addr` in `space` (when the module is
    /// compiled confined): inside the space's memory and aligned to `width`.
    pub fn check_access(&mut self, addr: Value, space: StateSpace, width: u32, is_store: bool) {
        self.check_range(addr, space, width, width, is_store);
    }

    /// [`check_access`](Self::check_access) of an object of `width` bytes (at most 255)
    /// aligned to `align`; a shared address's alignment is its offset's in the block's shared
    /// memory.
    pub fn check_range(
        &mut self,
        addr: Value,
        space: StateSpace,
        width: u32,
        align: u32,
        is_store: bool,
    ) {
        if !self.confined {
            return;
        }
        // One branch for both rules; the cold path tells them apart.
        let (ok, inside) = self.accessible(addr, space, width, align);
        let bad = self.b.ins().bxor_imm_u(ok, 1);
        self.fault_with(bad, addr, space, width, is_store, Why::InsideOrNot(inside));
    }

    /// Whether `[addr, addr + width)` lies in `space`'s memory and `addr` is aligned to
    /// `align`, and whether it lies inside at all (both i8 0/1).
    pub(super) fn accessible(
        &mut self,
        addr: Value,
        space: StateSpace,
        width: u32,
        align: u32,
    ) -> (Value, Value) {
        let inside = self.in_space(addr, space, width);
        let low = self.b.ins().band_imm_u(addr, align as i64 - 1);
        let aligned = self.b.ins().icmp_imm_u(IntCC::Equal, low, 0);
        (self.b.ins().band(inside, aligned), inside)
    }

    /// Whether `[addr, addr + width)` (host addresses) lies in `space`'s memory, as an i8
    /// 0/1: the test of confinement, and of `isspacep`.
    pub(super) fn in_space(&mut self, addr: Value, space: StateSpace, width: u32) -> Value {
        match space {
            StateSpace::Global | StateSpace::Const => self.in_device_memory(addr, width),
            StateSpace::Shared => self.in_shared_memory(addr, width),
            StateSpace::SharedCluster => self.in_cluster_shared(addr, width),
            StateSpace::Local => self.in_local_memory(addr, width),
            StateSpace::Param => self.in_parameters(addr, width),
            StateSpace::Generic => {
                // Device memory first (the common case), then the other windows.
                let device = self.in_device_memory(addr, width);
                let done = self.b.create_block();
                let others = self.b.create_block();
                self.b.append_block_param(done, types::I8);
                self.b
                    .ins()
                    .brif(device, done, &[device.into()], others, &[]);
                self.b.seal_block(others);
                self.b.switch_to_block(others);
                let shared = self.in_shared_memory(addr, width);
                let local = self.in_local_memory(addr, width);
                let param = self.in_parameters(addr, width);
                let either = self.b.ins().bor(shared, local);
                let either = self.b.ins().bor(either, param);
                // Last, another block's shared memory (a division: off the common path).
                let cluster = self.b.create_block();
                self.b
                    .ins()
                    .brif(either, done, &[either.into()], cluster, &[]);
                self.b.seal_block(cluster);
                self.b.switch_to_block(cluster);
                let remote = self.in_cluster_shared(addr, width);
                self.b.ins().jump(done, &[remote.into()]);
                self.b.seal_block(done);
                self.b.switch_to_block(done);
                self.b.block_params(done)[0]
            }
        }
    }

    /// `ldmatrix`: lanes below 8 × `matrices` give the address (in `space`: shared or
    /// generic) of a 16-byte row of shared memory (the other lanes' addresses are not used).
    pub(super) fn check_matrix_row(
        &mut self,
        addr: Value,
        space: StateSpace,
        matrices: u32,
        is_store: bool,
    ) {
        if !self.confined {
            return;
        }
        let lane = self.linear_tid();
        let lane = self.b.ins().band_imm_u(lane, 31);
        let used = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThan, lane, 8 * matrices as i64);
        let low = self.b.ins().band_imm_u(addr, 15);
        let misaligned = self.b.ins().icmp_imm_u(IntCC::NotEqual, low, 0);
        let misaligned = self.b.ins().band(used, misaligned);
        self.fault_with(
            misaligned,
            addr,
            space,
            16,
            is_store,
            Why::Always(Status::MISALIGNED),
        );
        let inside = self.in_shared_memory(addr, 16);
        let outside = self.b.ins().bxor_imm_u(inside, 1);
        let bad = self.b.ins().band(used, outside);
        let why = Why::Always(Status::ILLEGAL_ADDRESS);
        self.fault_with(bad, addr, space, 16, is_store, why);
    }

    /// Bytes from a variable's start that accesses through its name may reach, if known before
    /// the launch: its size, or for `.global`/`.const` data the rest of the module's segment, as
    /// on a GPU (not for `.extern .shared` arrays, sized by the launch: those are checked
    /// against shared memory at run time).
    fn symbol_size(&self, sym: Symbol) -> Option<u64> {
        match sym {
            Symbol::Global(g) => match self.env.global_addresses[g] {
                Some(address) => Some(self.env.data_end - address),
                None => {
                    let g = &self.module.globals[g];
                    (!g.is_extern).then_some(g.size)
                }
            },
            Symbol::Local(v) => {
                let v = &self.func.vars[v];
                (!v.is_extern).then_some(v.size)
            }
            Symbol::Param(i) => Some(self.func.params[i].size as u64),
            Symbol::Return(i) => Some(self.func.returns[i].size as u64),
        }
    }

    /// Whether `[addr, addr + width)` lies in one live device allocation (as an i8 0/1): the
    /// test of `Arena::contains`, without a branch.
    fn in_device_memory(&mut self, addr: Value, width: u32) -> Value {
        let (off, end) = self.allocation_end(addr);
        let last = self.b.ins().iadd_imm_s(off, width as i64);
        self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, last, end)
    }

    /// `addr`'s offset in the arena (clamped to its last byte, whose slot is never allocated)
    /// and the end offset of the allocation its slot belongs to (0: none).
    fn allocation_end(&mut self, addr: Value) -> (Value, Value) {
        let arena = ptxjit_runtime::arena();
        let off = self
            .b
            .ins()
            .iadd_imm_s(addr, (arena.base as i64).wrapping_neg());
        let last_byte = self.b.ins().iconst(types::I64, arena.size as i64 - 1);
        let off = self.b.ins().umin(off, last_byte);
        let slot = self
            .b
            .ins()
            .ushr_imm_u(off, ptxjit_runtime::SLOT_SHIFT as i64);
        let entry = self.b.ins().ishl_imm_u(slot, 3);
        let entry = self.b.ins().iadd_imm_s(entry, arena.table as i64);
        // Not invariant: buffers are allocated and freed while kernels run.
        let end = self
            .b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), entry, 0);
        (off, end)
    }

    /// Bytes from `addr` to the end of the device allocation or this function's `.local`
    /// window it lies in; 0 outside both.
    pub(super) fn window_rest(&mut self, addr: Value) -> Value {
        let (off, end) = self.allocation_end(addr);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, off, end);
        let rest = self.b.ins().isub(end, off);
        let zero = self.b.ins().iconst(types::I64, 0);
        let device = self.b.ins().select(inside, rest, zero);
        let Some((lo, len)) = self.own_local_window() else {
            return device;
        };
        let inside = self.in_window(addr, 1, lo, len);
        let end = self.b.ins().iadd(lo, len);
        let rest = self.b.ins().isub(end, addr);
        self.b.ins().select(inside, rest, device)
    }

    /// Ends the launch with an illegal address (a read of one byte at `address`) when `cond`
    /// holds: a runtime helper could not read it.
    pub(super) fn unreadable(&mut self, cond: Value, address: Value) {
        let why = Why::Always(Status::ILLEGAL_ADDRESS);
        self.fault_with(cond, address, StateSpace::Generic, 1, false, why);
    }

    /// Whether `[addr, addr + width)` lies in `[lo, lo + len)`.
    fn in_window(&mut self, addr: Value, width: u32, lo: Value, len: Value) -> Value {
        let off = self.b.ins().isub(addr, lo);
        let last = self.b.ins().iadd_imm_s(off, width as i64);
        let no_wrap = self.b.ins().icmp(IntCC::UnsignedLessThan, off, last);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, last, len);
        self.b.ins().band(no_wrap, fits)
    }

    fn in_shared_memory(&mut self, addr: Value, width: u32) -> Value {
        let total = self.shared_len();
        self.in_window(addr, width, self.shared_base, total)
    }

    /// The bytes of the block's shared memory, static and dynamic.
    pub(super) fn shared_len(&mut self) -> Value {
        let dynamic = self
            .b
            .ins()
            .load(types::I32, invariant(), self.ctx, ctx::DYNAMIC_SHARED);
        let dynamic = self.b.ins().uextend(types::I64, dynamic);
        self.b
            .ins()
            .iadd_imm_s(dynamic, self.env.dynamic_shared_offset as i64)
    }

    /// This function's own `.local` window: (first byte, bytes), or `None`.
    fn own_local_window(&mut self) -> Option<(Value, Value)> {
        let (lo_loc, len) = self.local_window?;
        let lo = match lo_loc {
            VarLoc::Stack(slot, off) => self.b.ins().stack_addr(types::I64, slot, off),
            VarLoc::Frame(off) => {
                let frame = self
                    .b
                    .use_var(self.coop.as_ref().expect("cooperative").frame);
                self.b.ins().iadd_imm_s(frame, off as i64)
            }
            VarLoc::Shared(_) => unreachable!("locals are not shared"),
        };
        Some((lo, self.b.ins().iconst(types::I64, len as i64)))
    }

    /// The record of `.local` windows this function passes to a callee: its own window and
    /// its callers' chain (a stack slot of its own, which no `.local` window covers).
    pub(super) fn locals_record(&mut self) -> Value {
        let slot = *self.locals_record.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                CHAIN_RECORD_BYTES,
                3,
            ))
        });
        let (lo, len) = match self.own_local_window() {
            Some(w) => w,
            None => {
                let zero = self.b.ins().iconst(types::I64, 0);
                (zero, zero)
            }
        };
        let next = match self.callers_locals {
            Some(v) => v,
            None => self.b.ins().iconst(types::I64, 0),
        };
        let record = self.b.ins().stack_addr(types::I64, slot, 0);
        let flags = MemFlagsData::trusted();
        self.b.ins().store(flags, lo, record, CHAIN_LO);
        self.b.ins().store(flags, len, record, CHAIN_LEN);
        self.b.ins().store(flags, next, record, CHAIN_NEXT);
        record
    }

    /// The thread's `.local` variables: this function's (one stack area, or the locals part of
    /// its frame), then its callers' (a generic address of a caller's local, passed down).
    fn in_local_memory(&mut self, addr: Value, width: u32) -> Value {
        let own = match self.own_local_window() {
            Some((lo, len)) => self.in_window(addr, width, lo, len),
            None => self.b.ins().iconst(types::I8, 0),
        };
        let Some(chain) = self.callers_locals else {
            return own;
        };
        // Not its own: walk the callers' records (off the common path).
        let done = self.b.create_block();
        let head = self.b.create_block();
        let body = self.b.create_block();
        self.b.append_block_param(done, types::I8);
        self.b.append_block_param(head, types::I64);
        self.b.set_cold_block(head);
        self.b.set_cold_block(body);
        self.b
            .ins()
            .brif(own, done, &[own.into()], head, &[chain.into()]);
        self.b.switch_to_block(head);
        let record = self.b.block_params(head)[0];
        let end = self.b.ins().icmp_imm_u(IntCC::Equal, record, 0);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().brif(end, done, &[no.into()], body, &[]);
        self.b.seal_block(body);
        self.b.switch_to_block(body);
        let flags = MemFlagsData::trusted();
        let lo = self.b.ins().load(types::I64, flags, record, CHAIN_LO);
        let len = self.b.ins().load(types::I64, flags, record, CHAIN_LEN);
        let next = self.b.ins().load(types::I64, flags, record, CHAIN_NEXT);
        let inside = self.in_window(addr, width, lo, len);
        self.b
            .ins()
            .brif(inside, done, &[inside.into()], head, &[next.into()]);
        self.b.seal_block(head);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// A kernel's parameter buffer (a called function's parameters are only reached by name).
    fn in_parameters(&mut self, addr: Value, width: u32) -> Value {
        if !self.is_entry() {
            return self.b.ins().iconst(types::I8, 0);
        }
        let len = self
            .b
            .ins()
            .iconst(types::I64, self.func.params_size as i64);
        self.in_window(addr, width, self.params[0], len)
    }

    /// The status word of `kind` at the current instruction.
    fn status_word(&mut self, kind: u32) -> Value {
        let status = Status::encode(kind, self.func_id as u32, self.inst_index);
        self.b.ins().iconst(types::I64, status as i64)
    }

    /// If `cond` (nonzero): record the access in the block context and end the launch with
    /// the status `why` gives. A shared access records the address the kernel computed (an
    /// offset in the block's shared memory, or a `.shared::cluster` address), not where the
    /// worker happens to keep that memory.
    fn fault_with(
        &mut self,
        cond: Value,
        addr: Value,
        space: StateSpace,
        width: u32,
        is_store: bool,
        why: Why,
    ) {
        let (go_on, fault) = self.branch_cold(cond, true);
        self.b.switch_to_block(fault);
        let shared = matches!(space, StateSpace::Shared | StateSpace::SharedCluster);
        let recorded = match space {
            StateSpace::Shared => self.b.ins().isub(addr, self.shared_base),
            StateSpace::SharedCluster => self.host_to_cluster_window(addr),
            _ => addr,
        };
        let mut detail = Fault::detail(width, is_store, shared, 0);
        if space == StateSpace::SharedCluster {
            detail |= Fault::CLUSTER_WINDOW;
        }
        let detail = self.b.ins().iconst(types::I64, detail as i64);
        self.record_fault(recorded, detail);
        let status = match why {
            Why::Always(kind) => self.status_word(kind),
            Why::InsideOrNot(inside) => {
                let illegal = self.status_word(Status::ILLEGAL_ADDRESS);
                let misaligned = self.status_word(Status::MISALIGNED);
                self.b.ins().select(inside, misaligned, illegal)
            }
        };
        self.b.ins().return_(&[status]);
        self.b.switch_to_block(go_on);
    }

    /// Records a fault in the block context: its address, and `detail` (`Fault::detail` for
    /// thread 0) with this thread's rank added.
    pub(super) fn record_fault(&mut self, address: Value, detail: Value) {
        let flags = MemFlagsData::trusted();
        self.b
            .ins()
            .store(flags, address, self.ctx, ctx::FAULT_ADDRESS);
        let thread = self.linear_tid();
        let thread = self.b.ins().uextend(types::I64, thread);
        let thread = self.b.ins().ishl_imm_u(thread, 32);
        let detail = self.b.ins().bor(detail, thread);
        self.b
            .ins()
            .store(flags, detail, self.ctx, ctx::FAULT_DETAIL);
    }
}

/// Which status a failed check ends the launch with.
enum Why {
    Always(u32),
    /// A misaligned address if the access was inside its memory (this value nonzero), else
    /// an illegal one (outside and misaligned is reported as outside).
    InsideOrNot(Value),
}
