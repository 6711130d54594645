//! Lowering: one checked PTX function → one Cranelift function.
//!
//! # How values are held
//! Every PTX register is a Cranelift `Variable` of its declared type's IR type
//! (`PtxType::ir_type`): predicates are `i8` 0/1, f32/f64 are floats, and **f16/bf16 values are
//! integer bits** (`i16`, pairs in `i32`, low lane = bits 0–15). Half arithmetic decodes the bits
//! exactly (to f32, or f64 where f32 is not enough), computes, and rounds once in `softfloat`,
//! which is also the one place that decides NaN results (canonical `0x7FFF` for halves,
//! `0x7FFFFFFF` for f32).
//!
//! # Kernels
//! An `.entry` becomes a *block function* `fn(*const BlockContext) -> u64`: it loops over the
//! threads of its block inside the compiled code (x fastest), running the body once per thread;
//! `ret`/`exit` jump to the next thread. A kernel with barriers or warp collectives runs in
//! rounds instead: each thread runs to its next synchronization point, saves its registers in
//! its frame and yields (`sync.rs` here, `crate::sync` for what happens between rounds).
//! A `.func` becomes `fn(ctx, tid.x, tid.y, tid.z, return slots…, param slots…) -> u64`, with
//! every `.param` passed by address. The `u64` is a `ptxjit_runtime::Status` word (0 = done).
//!
//! # Addresses
//! Global, const, param, local and generic addresses are host addresses (a device buffer's
//! address is its host address). Shared addresses are offsets into the block's shared memory
//! (so 32-bit shared pointers work); `cvta.shared` adds the block's shared base.
//!
//! Instruction families live in their own files (`int`, `float`, `half`, `convert`, `compare`,
//! `memory`, `data`, `control`); operand access in `operands`.

mod affine;
mod async_copy;
mod atomic;
mod carry;
mod cluster;
mod compare;
mod confine;
mod control;
mod convert;
mod data;
mod float;
mod half;
mod half_table;
mod int;
mod int_parts;
pub mod lanes;
pub mod liveness;
mod mbarrier;
mod memory;
mod mufu;
mod narrow;
mod operands;
mod runtime_calls;
mod simd;
pub mod softfloat;
pub mod sync;
mod tensor;
pub mod webs;
mod wgmma;

use std::collections::HashMap;

use cranelift_codegen::ir::{
    self, Block, FuncRef, InstBuilder, MemFlagsData, StackSlot, Value, types,
};
use cranelift_frontend::{FunctionBuilder, Variable};
use cranelift_module::{FuncId as ClifFuncId, ModuleDeclarations};
use ptxjit_runtime::{BlockContext, Status};

use crate::error::{Diagnostic, Span};
use crate::frontend::ast::{FunctionKind, StateSpace};
use crate::frontend::checked::{self, BarKind, FuncId, Op};

/// What the translator needs to know about the rest of the compiled module and the runtime.
pub struct Env {
    /// Host address of each module-scope `.global`/`.const` variable (`None` for `.shared`).
    pub global_addresses: Vec<Option<u64>>,
    /// Where the segment holding them ends (its 64 KiB granule; see `jit::place_variables`).
    pub data_end: u64,
    /// Offset in shared memory of each module-scope `.shared` variable.
    pub global_shared_offsets: Vec<Option<u32>>,
    /// Offset of each function's body-level `.shared` variables: (function, var) → offset.
    pub local_shared_offsets: HashMap<(FuncId, usize), u32>,
    /// Where dynamic (`.extern .shared`) memory starts.
    pub dynamic_shared_offset: u32,
    /// The end of the last static `.shared` variable (`dynamic_shared_offset` before rounding).
    pub static_shared_end: u32,
}

/// What a translation does beyond the instructions' meaning.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Plain kernels also get their lane-group form (`lanes`).
    pub lane_groups: bool,
    /// The `ntid.x` of the launch that the lane-group form is compiled for, if one is
    /// (`lanes::width`: the widest groups need blocks a multiple of them).
    pub block_x: Option<u32>,
    /// The lane-group form may be `lanes::WIDE` (where the kernel `lanes::widens`).
    pub wide: bool,
    /// Every computed address is checked (`confine`).
    pub confine: bool,
    /// The one-thread form of a kernel that has a lane-group form asks now and then whether
    /// to hand the rest of its block over to that form (`BlockContext::poll_at`, `tier`).
    pub handover: bool,
    /// The f32 approximate instructions as an H200 runs them (`semantics::mufu`), else
    /// correctly rounded (`jit::Approximations`).
    pub gpu_approximations: bool,
}

/// The functions a body may call: the module's own and the runtime's helpers, declared once
/// per JIT module. A body imports one on first use (`Translator::function_ref`): importing every
/// function into every body made compiling n functions cost n².
pub struct Callees<'a> {
    pub declarations: &'a ModuleDeclarations,
    pub functions: &'a HashMap<FuncId, ClifFuncId>,
    pub helpers: &'a HashMap<&'static str, ClifFuncId>,
    /// The group helpers this compile calls (by address), if any.
    pub group_helpers: Option<&'static crate::native::GroupHelpers>,
}

/// Byte offsets of `BlockContext` fields: the runtime's side of the contract.
pub mod ctx {
    use super::BlockContext;
    use std::mem::offset_of;
    pub const PARAMS: i32 = offset_of!(BlockContext, params) as i32;
    pub const SHARED: i32 = offset_of!(BlockContext, shared) as i32;
    pub const CTAID: i32 = offset_of!(BlockContext, ctaid) as i32;
    pub const NCTAID: i32 = offset_of!(BlockContext, nctaid) as i32;
    pub const NTID: i32 = offset_of!(BlockContext, ntid) as i32;
    pub const DYNAMIC_SHARED: i32 = offset_of!(BlockContext, dynamic_shared_bytes) as i32;
    pub const FRAMES: i32 = offset_of!(BlockContext, frames) as i32;
    pub const ABORT: i32 = offset_of!(BlockContext, abort) as i32;
    pub const FAULT_ADDRESS: i32 = offset_of!(BlockContext, fault_address) as i32;
    pub const FAULT_DETAIL: i32 = offset_of!(BlockContext, fault_detail) as i32;
    pub const STACK_LIMIT: i32 = offset_of!(BlockContext, stack_limit) as i32;
    pub const CLUSTER_SHARED: i32 = offset_of!(BlockContext, cluster_shared) as i32;
    pub const SHARED_STRIDE: i32 = offset_of!(BlockContext, shared_stride) as i32;
    pub const COOPERATIVE: i32 = offset_of!(BlockContext, cooperative) as i32;
    pub const START: i32 = offset_of!(BlockContext, start) as i32;
    pub const POLL_AT: i32 = offset_of!(BlockContext, poll_at) as i32;
    /// A field of the block's `ptxjit_runtime::ClusterPlace`.
    macro_rules! cluster {
        ($field:ident) => {
            (offset_of!(BlockContext, cluster) + offset_of!(ptxjit_runtime::ClusterPlace, $field))
                as i32
        };
    }
    pub const CLUSTERID: i32 = cluster!(clusterid);
    pub const NCLUSTERID: i32 = cluster!(nclusterid);
    pub const CLUSTER_CTAID: i32 = cluster!(cluster_ctaid);
    pub const CLUSTER_NCTAID: i32 = cluster!(cluster_nctaid);
    pub const CLUSTER_CTARANK: i32 = cluster!(cluster_ctarank);
    pub const CLUSTER_NCTARANK: i32 = cluster!(cluster_nctarank);
    pub const IS_EXPLICIT_CLUSTER: i32 = cluster!(is_explicit_cluster);
}

/// `.local` (and `.param`) bytes one function may have on the stack: well inside
/// `ptxjit_runtime::KERNEL_STACK_BYTES`, so that its frame never passes the stack's end
/// before the limit check sees it.
pub const MAX_STACK_VARIABLE_BYTES: u64 = 256 << 10;

/// Flags for loads of what does not change during a launch (the block context, the kernel's
/// parameters): Cranelift may then hoist them out of the thread loop.
pub(crate) fn invariant() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

/// Where a body-level variable lives.
#[derive(Clone, Copy)]
enum VarLoc {
    /// At this offset in the function's one stack area for `.local` (and `.param`) variables.
    Stack(StackSlot, i32),
    Shared(u32),
    /// Cooperative kernels' `.local` variables: at this offset in the thread's frame.
    Frame(i32),
}

pub struct Translator<'a, 'b> {
    pub b: &'b mut FunctionBuilder<'a>,
    pub module: &'a checked::Module,
    pub func: &'a checked::Function,
    pub func_id: FuncId,
    env: &'a Env,
    callees: &'a Callees<'a>,
    /// The callees this body has imported so far.
    imported: HashMap<ClifFuncId, FuncRef>,
    regs: Vec<Variable>,
    tid: [Variable; 3],
    ctx: Value,
    shared_base: Value,
    /// Entry: the parameter buffer; func: one pointer per parameter.
    params: Vec<Value>,
    returns: Vec<Value>,
    vars: Vec<VarLoc>,
    /// Entry only: where a finished thread goes.
    thread_end: Option<Block>,
    /// Cooperative kernels (barriers, warp collectives): the frame machinery.
    coop: Option<Coop>,
    /// Plain kernels run in lane groups: the group code's state (`lanes`).
    lanes: Option<lanes::Lanes>,
    /// The one-thread form polls for a hand-over (`Options::handover`): the block's threads
    /// finished so far, and `ctx::POLL_AT` as last read (at entry and after each poll).
    polls: Option<(Variable, Variable)>,
    /// Check every computed address (`confine`).
    confined: bool,
    /// `Options::gpu_approximations`.
    gpu_approximations: bool,
    /// Per register: no instruction sees a NaN's bits in it (`float::nan_unseen`).
    nan_unseen: Vec<bool>,
    /// Where the thread's `.local` variables are, and how many bytes.
    local_window: Option<(VarLoc, u64)>,
    /// A called function: its callers' `.local` windows, which a generic address may reach
    /// too (a caller passes the address of its locals): a chain of records (lo, len, next)
    /// on the stack, 0-terminated (`confine::CHAIN_*`).
    callers_locals: Option<Value>,
    /// The record this function hands its callees (made at its first call).
    locals_record: Option<ir::StackSlot>,
    /// Index and span of the instruction being lowered (for statuses and diagnostics).
    pub inst_index: u32,
    pub span: Span,
    opcode: &'a str,
}

pub type LResult<T = ()> = Result<T, Diagnostic>;

/// State of a cooperative kernel's translation (see `crate::sync`).
struct Coop {
    /// The block's frames area (header first).
    frames: Value,
    /// The current thread's frame.
    frame: Variable,
    layout: sync::FrameLayout,
    /// Sync point number of each synchronizing instruction.
    point_of: HashMap<usize, usize>,
    /// For each sync point, the registers to save and restore: those live after it, and
    /// for one whose operands are in the registers' slots (`SyncPoint::slots`: a run of
    /// `mma`s), its registers.
    saved: Vec<Vec<u32>>,
    /// For each sync point, the registers of `saved` whose slots hold their values where
    /// the one-thread code reaches it (`sync::current_slots`), sorted.
    current: Vec<Vec<u32>>,
    /// Whether each sync point's operands and results are in its registers' slots.
    in_slots: Vec<bool>,
    /// Instructions a sync point before them performs (a run's later `mma`s).
    merged: std::collections::HashSet<usize>,
    resume_blocks: Vec<Block>,
}

/// The Cranelift signature of a translated function.
pub fn signature(
    f: &checked::Function,
    call_conv: cranelift_codegen::isa::CallConv,
) -> ir::Signature {
    let mut sig = ir::Signature::new(call_conv);
    sig.params.push(ir::AbiParam::new(types::I64));
    if f.kind == FunctionKind::Func {
        for _ in 0..3 {
            sig.params.push(ir::AbiParam::new(types::I32));
        }
        // The callers' `.local` windows (`Translator::callers_locals`).
        sig.params.push(ir::AbiParam::new(types::I64));
        for _ in f.returns.iter().chain(&f.params) {
            sig.params.push(ir::AbiParam::new(types::I64));
        }
    }
    sig.returns.push(ir::AbiParam::new(types::I64));
    sig
}

impl<'a, 'b> Translator<'a, 'b> {
    /// Translates `func` (`module`'s function `func_id`, or for a lane-group form its copy
    /// with registers split into [`webs`]) into the builder's function (whose signature is
    /// [`signature`]).
    pub fn translate(
        b: &'b mut FunctionBuilder<'a>,
        module: &'a checked::Module,
        func_id: FuncId,
        func: &'a checked::Function,
        env: &'a Env,
        callees: &'a Callees<'a>,
        options: Options,
    ) -> LResult {
        let body = func
            .body
            .as_ref()
            .expect("only defined functions are translated");
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        let ctx = args[0];
        let regs: Vec<Variable> = func
            .regs
            .iter()
            .map(|r| b.declare_var(r.ty.ir_type()))
            .collect();
        let tid = [
            b.declare_var(types::I32),
            b.declare_var(types::I32),
            b.declare_var(types::I32),
        ];
        let flags = invariant();
        // Deep recursion stops with an error before it can overflow the worker's stack.
        let sp = b.ins().get_stack_pointer(types::I64);
        let limit = b.ins().load(types::I64, flags, ctx, ctx::STACK_LIMIT);
        let overflow = b
            .ins()
            .icmp(ir::condcodes::IntCC::UnsignedLessThan, sp, limit);
        let too_deep = b.create_block();
        let go_on = b.create_block();
        b.set_cold_block(too_deep);
        b.ins().brif(overflow, too_deep, &[], go_on, &[]);
        b.seal_block(too_deep);
        b.seal_block(go_on);
        b.switch_to_block(too_deep);
        let status = Status::encode(Status::STACK_OVERFLOW, func_id as u32, u32::MAX);
        let status = b.ins().iconst(types::I64, status as i64);
        b.ins().return_(&[status]);
        b.switch_to_block(go_on);
        let shared_base = b.ins().load(types::I64, flags, ctx, ctx::SHARED);
        let (params, returns) = match func.kind {
            FunctionKind::Entry => {
                // From the thread the block starts at: (0, 0, 0) unless another form handed
                // the block over.
                for (d, t) in tid.into_iter().enumerate() {
                    let at = ctx::START + 4 * d as i32;
                    let first = b.ins().load(types::I32, MemFlagsData::trusted(), ctx, at);
                    b.def_var(t, first);
                }
                (
                    vec![b.ins().load(types::I64, flags, ctx, ctx::PARAMS)],
                    vec![],
                )
            }
            FunctionKind::Func => {
                for (i, t) in tid.iter().enumerate() {
                    b.def_var(*t, args[1 + i]);
                }
                let nret = func.returns.len();
                (args[5 + nret..].to_vec(), args[5..5 + nret].to_vec())
            }
        };
        let callers_locals = (func.kind == FunctionKind::Func).then(|| args[4]);
        // Shared variables have their offsets; the others share one stack area (so that a
        // local address can be checked against one window).
        let mut stack_bytes = 0u64;
        let mut stack_align = 1u32;
        let mut offsets = Vec::new();
        for v in func.vars.iter().filter(|v| v.space != StateSpace::Shared) {
            let align = v.align.clamp(1, 4096);
            stack_align = stack_align.max(align);
            stack_bytes = stack_bytes.div_ceil(align as u64) * align as u64;
            offsets.push(stack_bytes);
            stack_bytes += v.size;
        }
        let mut offsets = offsets.into_iter();
        if stack_bytes > MAX_STACK_VARIABLE_BYTES {
            return Err(Diagnostic::new(
                &module.source,
                func.span,
                format!(
                    "'{}' has {stack_bytes} bytes of .local variables; at most {} are supported",
                    func.name, MAX_STACK_VARIABLE_BYTES
                ),
            ));
        }
        let stack = (stack_bytes > 0).then(|| {
            b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                stack_bytes as u32,
                stack_align.trailing_zeros() as u8,
            ))
        });
        let mut vars = Vec::new();
        for (i, v) in func.vars.iter().enumerate() {
            vars.push(match v.space {
                StateSpace::Shared => VarLoc::Shared(if v.is_extern {
                    env.dynamic_shared_offset
                } else {
                    env.local_shared_offsets[&(func_id, i)]
                }),
                _ => VarLoc::Stack(
                    stack.expect("sized above"),
                    offsets.next().expect("one offset per variable") as i32,
                ),
            });
        }
        let mut local_window = stack.map(|slot| (VarLoc::Stack(slot, 0), stack_bytes));
        let points = sync::sync_points(func);
        let cooperative = sync::is_cooperative(func);
        if cooperative && func.kind == FunctionKind::Func {
            let span = points
                .first()
                .map_or(func.span, |p| body[p.inst as usize].span);
            return Err(Diagnostic::new(
                &module.source,
                span,
                "a .func that waits for other threads is inlined where it is called, never \
                 compiled on its own",
            ));
        }
        let coop = cooperative.then(|| {
            let frame = b.declare_var(types::I64);
            let live = liveness::analyze(func).live_out;
            let saved: Vec<Vec<u32>> = points
                .iter()
                .map(|p| {
                    let mut saved = live[(p.inst + p.insts - 1) as usize].clone();
                    if sync::in_slots(p) {
                        saved.extend(sync::point_registers(func, p));
                        saved.sort_unstable();
                        saved.dedup();
                    }
                    saved
                })
                .collect();
            Coop {
                frames: b.ins().load(types::I64, flags, ctx, ctx::FRAMES),
                frame,
                layout: sync::frame_layout(func),
                point_of: points
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (p.inst as usize, k))
                    .collect(),
                current: {
                    let body = func.body.as_deref().unwrap_or(&[]);
                    let passes: Vec<sync::Pass> = points
                        .iter()
                        .map(|p| sync::Pass::of_one_thread(body[p.inst as usize].op))
                        .collect();
                    sync::current_slots(func, &points, &saved, &passes)
                },
                saved,
                in_slots: points.iter().map(sync::in_slots).collect(),
                merged: points
                    .iter()
                    .flat_map(|p| (p.inst + 1..p.inst + p.insts).map(|i| i as usize))
                    .collect(),
                resume_blocks: points.iter().map(|_| b.create_block()).collect(),
            }
        });
        if let Some(c) = &coop {
            for &(i, off) in &c.layout.locals {
                vars[i] = VarLoc::Frame(off);
            }
            // The frame's locals run from the first to the frame's end.
            local_window = c
                .layout
                .locals
                .first()
                .map(|&(_, off)| (VarLoc::Frame(off), (c.layout.bytes as i32 - off) as u64));
        }
        let mut t = Translator {
            b,
            module,
            func,
            func_id,
            env,
            callees,
            imported: HashMap::new(),
            regs,
            tid,
            ctx,
            shared_base,
            params,
            returns,
            vars,
            thread_end: None,
            coop,
            lanes: None,
            polls: None,
            confined: options.confine,
            gpu_approximations: options.gpu_approximations,
            nan_unseen: float::nan_unseen(func),
            local_window,
            callers_locals,
            locals_record: None,
            inst_index: 0,
            span: func.span,
            opcode: "",
        };
        // Blocks: one per instruction index that a label stands before.
        let mut label_blocks: HashMap<usize, Block> = HashMap::new();
        for &pos in &func.labels {
            label_blocks
                .entry(pos)
                .or_insert_with(|| t.b.create_block());
        }
        let grouped = options.lane_groups && lanes::eligible(func);
        if options.handover && !options.lane_groups && lanes::polls_for_handover(func) {
            t.polls = Some(t.threads_before_start());
        }
        if grouped {
            // A lane of a diverged group may continue after any guarded branch.
            for pos in lanes::continuations(func) {
                label_blocks
                    .entry(pos)
                    .or_insert_with(|| t.b.create_block());
            }
            t.lanes = Some(lanes::Lanes::new(
                t.b,
                func,
                &label_blocks,
                callees.group_helpers.is_some(),
                options.block_x,
                options.wide,
            ));
        }
        let body_start = *label_blocks.entry(0).or_insert_with(|| t.b.create_block());
        if func.kind == FunctionKind::Entry {
            t.thread_end = Some(t.b.create_block());
        }
        // Where each thread (re)starts: the body, or for cooperative kernels a dispatch on
        // the thread's frame.
        let thread_start = if t.coop.is_some() {
            t.b.create_block()
        } else {
            body_start
        };
        let groups_start = grouped.then(|| t.b.create_block());
        match groups_start {
            Some(groups) => t.choose_groups(groups, thread_start),
            None => {
                t.b.ins().jump(thread_start, &[]);
            }
        }
        if t.coop.is_some() {
            t.dispatch(thread_start, body_start);
        }
        let label_block: Vec<Block> = func.labels.iter().map(|p| label_blocks[p]).collect();
        let terminated = t.lower_in_order(body, &label_blocks, |t, inst, _| {
            t.instruction(inst, &label_block)
        })?;
        if !terminated {
            // Falling off the end is `ret`.
            t.thread_done();
        }
        if let Some(groups) = groups_start {
            t.lower_groups(groups)?;
            let next_thread = t.b.create_block();
            t.lane_dispatch(t.thread_end.expect("entry"), next_thread);
            t.next_thread(next_thread, thread_start);
        } else if let Some(end) = t.thread_end {
            t.next_thread(end, thread_start);
        }
        t.b.seal_all_blocks();
        Ok(())
    }

    /// Whether this is a kernel (`.entry`), not a called function.
    pub fn is_entry(&self) -> bool {
        self.thread_end.is_some()
    }

    /// The reference through which this body calls module function `function`.
    fn function_ref(&mut self, function: FuncId) -> FuncRef {
        self.import(self.callees.functions[&function])
    }

    /// The reference through which this body calls runtime helper `name` (`jit::helpers`
    /// declares every one of them).
    fn helper_ref(&mut self, name: &str) -> FuncRef {
        self.native_helper_ref(name)
            .unwrap_or_else(|| panic!("helper {name} is always declared"))
    }

    /// Like `helper_ref`, for the precompiled SIMD helpers, which only some hosts have.
    /// Branches on `cond` to two new blocks: a cold one where `cond` is `cold_when`, the
    /// other (hot) otherwise; both sealed, as this branch is their one way in. Returns (hot,
    /// cold); the builder stays in the branching block.
    pub(super) fn branch_cold(&mut self, cond: Value, cold_when: bool) -> (Block, Block) {
        let (hot, cold) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        let (then, otherwise) = if cold_when { (cold, hot) } else { (hot, cold) };
        self.b.ins().brif(cond, then, &[], otherwise, &[]);
        self.b.seal_block(hot);
        self.b.seal_block(cold);
        (hot, cold)
    }

    fn native_helper_ref(&mut self, name: &str) -> Option<FuncRef> {
        let id = *self.callees.helpers.get(name)?;
        Some(self.import(id))
    }

    fn import(&mut self, id: ClifFuncId) -> FuncRef {
        if let Some(&f) = self.imported.get(&id) {
            return f;
        }
        let decl = self.callees.declarations.get_function_decl(id);
        let signature = self.b.import_signature(decl.signature.clone());
        let name = self
            .b
            .func
            .declare_imported_user_function(ir::UserExternalName {
                namespace: 0,
                index: id.as_u32(),
            });
        let f = self.b.import_function(ir::ExtFuncData {
            name: ir::ExternalName::user(name),
            signature,
            colocated: decl.linkage.is_final(),
            patchable: false,
        });
        self.imported.insert(id, f);
        f
    }

    pub fn err(&self, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.module.source, self.span, msg)
    }

    /// A form the decoder accepts but the lowering does not implement (yet).
    pub fn unsupported(&self, why: impl std::fmt::Display) -> Diagnostic {
        self.err(format!("unsupported instruction '{}' ({why})", self.opcode))
    }

    /// Cooperative kernels: find the thread's frame; skip it while it waits; otherwise jump
    /// to where it resumes (its start, or after its last sync point).
    fn dispatch(&mut self, start: Block, body_start: Block) {
        let coop = self.coop.as_ref().expect("cooperative");
        let frame_var = coop.frame;
        let resume_blocks = coop.resume_blocks.clone();
        let end = self.thread_end.expect("entry");
        self.b.switch_to_block(start);
        let linear = self.linear_tid();
        let frame = self.thread_frame(linear);
        self.b.def_var(frame_var, frame);
        let flags = MemFlagsData::trusted();
        let waiting = self
            .b
            .ins()
            .load(types::I32, flags, frame, crate::sync::frame::WAITING);
        let run = self.b.create_block();
        self.b.ins().brif(waiting, end, &[], run, &[]);
        self.b.switch_to_block(run);
        let resume = self
            .b
            .ins()
            .load(types::I32, flags, frame, crate::sync::frame::RESUME);
        let targets: Vec<ir::BlockCall> = std::iter::once(body_start)
            .chain(resume_blocks)
            .map(|blk| self.b.func.dfg.block_call(blk, &[]))
            .collect();
        let default = self.b.func.dfg.block_call(end, &[]);
        let table = self
            .b
            .create_jump_table(ir::JumpTableData::new(default, &targets));
        self.b.ins().br_table(resume, table);
    }

    /// The frame of the thread whose linear id (x fastest, then y, then z) is `linear` (an
    /// `i32`), in a cooperative kernel.
    pub(super) fn thread_frame(&mut self, linear: Value) -> Value {
        let coop = self.coop.as_ref().expect("cooperative");
        let (frames, frame_bytes) = (coop.frames, coop.layout.bytes);
        let linear = self.b.ins().uextend(types::I64, linear);
        let offset = self.b.ins().imul_imm_u(linear, frame_bytes as i64);
        let base = self
            .b
            .ins()
            .iadd_imm_s(frames, crate::sync::frame::HEADER as i64);
        self.b.ins().iadd(base, offset)
    }

    /// The thread is finished: next thread (entry) or return 0 (func).
    fn thread_done(&mut self) {
        match self.thread_end {
            Some(end) => {
                if let Some(coop) = &self.coop {
                    let frame = self.b.use_var(coop.frame);
                    let done = self
                        .b
                        .ins()
                        .iconst(types::I32, crate::sync::frame::DONE as i64);
                    self.b.ins().store(
                        MemFlagsData::trusted(),
                        done,
                        frame,
                        crate::sync::frame::RESUME,
                    );
                }
                self.b.ins().jump(end, &[]);
            }
            None => {
                let zero = self.b.ins().iconst(types::I64, 0);
                self.b.ins().return_(&[zero]);
            }
        }
    }

    /// Returns a status word built from `kind` and the current instruction.
    pub(crate) fn return_status(&mut self, kind: u32) {
        let status = Status::encode(kind, self.func_id as u32, self.inst_index);
        let status = self.b.ins().iconst(types::I64, status as i64);
        self.b.ins().return_(&[status]);
    }

    /// The thread loop's increment: x fastest, then y, then z; returns after the last thread.
    fn next_thread(&mut self, end: Block, thread_start: Block) {
        let next_start = match self.polls {
            Some((done, at)) => self.poll_for_handover(done, at, thread_start),
            None => thread_start,
        };
        let b = &mut *self.b;
        b.switch_to_block(end);
        let flags = invariant();
        let mut carry_blocks = Vec::new();
        for d in 0..3 {
            let n = b
                .ins()
                .load(types::I32, flags, self.ctx, ctx::NTID + 4 * d as i32);
            let cur = b.use_var(self.tid[d]);
            let next = b.ins().iadd_imm_s(cur, 1);
            let more = b
                .ins()
                .icmp(ir::condcodes::IntCC::UnsignedLessThan, next, n);
            let advance = b.create_block();
            let carry = b.create_block();
            b.ins().brif(more, advance, &[], carry, &[]);
            b.switch_to_block(advance);
            b.def_var(self.tid[d], next);
            b.ins().jump(next_start, &[]);
            b.switch_to_block(carry);
            let zero = b.ins().iconst(types::I32, 0);
            b.def_var(self.tid[d], zero);
            carry_blocks.push(carry);
        }
        // A plain kernel is finished; a cooperative one has finished a round.
        let status = if self.coop.is_some() {
            Status::encode(Status::ROUND, 0, 0)
        } else {
            0
        };
        let status = b.ins().iconst(types::I64, status as i64);
        b.ins().return_(&[status]);
    }

    /// The threads of the block before the one it starts at (`ctx::START`), in a variable
    /// that [`Self::poll_for_handover`] counts on, and `ctx::POLL_AT` in another.
    fn threads_before_start(&mut self) -> (Variable, Variable) {
        let b = &mut *self.b;
        let [x, y, z] = self.tid.map(|t| b.use_var(t));
        let n = |b: &mut FunctionBuilder, d: i32| {
            b.ins()
                .load(types::I32, invariant(), self.ctx, ctx::NTID + 4 * d)
        };
        let (nx, ny) = (n(b, 0), n(b, 1));
        let rows = b.ins().imul(z, ny);
        let rows = b.ins().iadd(rows, y);
        let before = b.ins().imul(rows, nx);
        let before = b.ins().iadd(before, x);
        let done = b.declare_var(types::I32);
        b.def_var(done, before);
        let at = b.declare_var(types::I32);
        let first_poll = b
            .ins()
            .load(types::I32, MemFlagsData::trusted(), self.ctx, ctx::POLL_AT);
        b.def_var(at, first_poll);
        (done, at)
    }

    /// Where the thread loop goes with the next thread's ids set: counts the thread just
    /// finished in `done`, and when that reaches `at` (`ctx::POLL_AT`) asks the runtime
    /// whether to hand the rest of the block over (with the next thread in `ctx::START`); if
    /// so, returns [`Status::HANDOVER`], else reads the next `at` and goes on at
    /// `thread_start`. Returns the block to go to.
    fn poll_for_handover(&mut self, done: Variable, at: Variable, thread_start: Block) -> Block {
        let poll_point = self.b.create_block();
        let ask = self.b.create_block();
        let hand_over = self.b.create_block();
        self.b.set_cold_block(ask);
        self.b.set_cold_block(hand_over);
        self.b.switch_to_block(poll_point);
        let count = self.b.use_var(done);
        let count = self.b.ins().iadd_imm_s(count, 1);
        self.b.def_var(done, count);
        let next_poll = self.b.use_var(at);
        let due = self.b.ins().icmp(
            ir::condcodes::IntCC::UnsignedGreaterThanOrEqual,
            count,
            next_poll,
        );
        self.b.ins().brif(due, ask, &[], thread_start, &[]);
        self.b.switch_to_block(ask);
        for d in 0..3 {
            let t = self.b.use_var(self.tid[d]);
            self.b.ins().store(
                MemFlagsData::trusted(),
                t,
                self.ctx,
                ctx::START + 4 * d as i32,
            );
        }
        let poll = self.helper_ref("ptxjit_poll_upgrade");
        let call = self.b.ins().call(poll, &[self.ctx, count]);
        let yes = self.b.inst_results(call)[0];
        // (Not invariant: the poll moved it.)
        let next_poll =
            self.b
                .ins()
                .load(types::I32, MemFlagsData::trusted(), self.ctx, ctx::POLL_AT);
        self.b.def_var(at, next_poll);
        self.b.ins().brif(yes, hand_over, &[], thread_start, &[]);
        self.b.switch_to_block(hand_over);
        let status = Status::encode(Status::HANDOVER, self.func_id as u32, 0);
        let status = self.b.ins().iconst(types::I64, status as i64);
        self.b.ins().return_(&[status]);
        poll_point
    }

    /// Lowers one instruction; returns whether it ended the current block unconditionally.
    /// Lowers `body` in order with `lower` (which says whether the instruction ended its
    /// block): a label's block where one stands, a block of its own for code after a
    /// terminator that no label reaches (it has no predecessors), and the block of a label
    /// after the last instruction (`DONE: }`). Returns whether the end is terminated; if not,
    /// control falls off the end of the body.
    fn lower_in_order(
        &mut self,
        body: &'a [checked::Inst],
        blocks: &HashMap<usize, Block>,
        mut lower: impl FnMut(&mut Self, &'a checked::Inst, usize) -> LResult<bool>,
    ) -> LResult<bool> {
        let mut terminated = true;
        for (i, inst) in body.iter().enumerate() {
            if let Some(&blk) = blocks.get(&i) {
                if !terminated {
                    self.b.ins().jump(blk, &[]);
                }
                self.b.switch_to_block(blk);
            } else if terminated {
                let blk = self.b.create_block();
                self.b.switch_to_block(blk);
            }
            self.inst_index = i as u32;
            self.span = inst.span;
            self.opcode = &inst.opcode;
            terminated = lower(self, inst, i)?;
        }
        if let Some(&blk) = blocks.get(&body.len()) {
            if !terminated {
                self.b.ins().jump(blk, &[]);
            }
            self.b.switch_to_block(blk);
            terminated = false;
        }
        Ok(terminated)
    }

    fn instruction(&mut self, inst: &checked::Inst, labels: &[Block]) -> LResult<bool> {
        // Guarded branches and returns become conditional branches; other guarded
        // instructions are skipped around.
        if let Some(g) = inst.guard {
            let p = self.b.use_var(self.regs[g.reg as usize]);
            let exec = self.b.create_block();
            let skip = self.b.create_block();
            let (on_true, on_false) = if g.negated {
                (skip, exec)
            } else {
                (exec, skip)
            };
            match inst.op {
                Op::Bra => {
                    self.poll_abort_at_back_edge(inst);
                    let target = self.branch_target(inst, labels)?;
                    let (t, f) = if g.negated {
                        (skip, target)
                    } else {
                        (target, skip)
                    };
                    self.b.ins().brif(p, t, &[], f, &[]);
                    // Sealing each block once its predecessors are known keeps the SSA
                    // builder from placing provisional parameters everywhere.
                    self.b.seal_block(skip);
                    self.b.switch_to_block(skip);
                    return Ok(false);
                }
                _ => {
                    self.b.ins().brif(p, on_true, &[], on_false, &[]);
                    self.b.seal_block(exec);
                    self.b.switch_to_block(exec);
                    let ended = self.unguarded(inst, labels)?;
                    if !ended {
                        self.b.ins().jump(skip, &[]);
                    }
                    self.b.seal_block(skip);
                    self.b.switch_to_block(skip);
                    return Ok(false);
                }
            }
        }
        self.unguarded(inst, labels)
    }

    fn unguarded(&mut self, inst: &checked::Inst, labels: &[Block]) -> LResult<bool> {
        let a = &inst.args;
        match inst.op {
            Op::Bra => {
                self.poll_abort_at_back_edge(inst);
                let target = self.branch_target(inst, labels)?;
                self.b.ins().jump(target, &[]);
                return Ok(true);
            }
            Op::Ret => {
                self.thread_done();
                return Ok(true);
            }
            Op::Exit => {
                match self.thread_end {
                    Some(_) => self.thread_done(),
                    None => self.return_status(Status::EXIT),
                }
                return Ok(true);
            }
            Op::Trap => {
                self.return_status(Status::TRAP);
                return Ok(true);
            }
            // CUDA's `assert` calls `__assertfail(message, file, line, function, charSize)`,
            // which the GPU's runtime provides: the launch stops with the assertion's status.
            Op::Call if self.calls_assertfail(a) => {
                self.return_status(Status::ASSERT);
                return Ok(true);
            }
            Op::Call => self.call(a)?,
            Op::Mov(ty) => self.mov(ty, a)?,
            Op::MovVec { ty, vec } => self.mov_vector(ty, vec, a)?,
            Op::Selp(ty) => self.selp(ty, a)?,
            Op::Ld { space, ty, vec } => self.load(space, ty, vec, a)?,
            Op::St { space, ty, vec } => self.store(space, ty, vec, a)?,
            Op::Cvta {
                to_generic,
                space,
                ty,
            } => self.cvta(to_generic, space, ty, a)?,
            Op::Isspacep(space) => self.isspacep(space, a)?,
            Op::Cvt { dst, src, mods } => self.cvt(dst, src, mods, a)?,
            Op::CvtNarrow(form) => self.cvt_narrow(form, a)?,
            Op::Int { op, ty } => self.int(op, ty, a)?,
            Op::Float { op, ty, mods } if ty.is_half() => self.half(op, ty, mods, a)?,
            Op::Float { op, ty, mods } => self.float(op, ty, mods, a)?,
            Op::Bar(BarKind::Arrive) => self.bar_arrive(a)?,
            op @ (Op::Bar(_)
            | Op::Shfl(_)
            | Op::Vote(_)
            | Op::Match { .. }
            | Op::WarpSync
            | Op::WarpMatrix { .. }
            | Op::Mma(_)
            | Op::Wgmma(_)
            | Op::Redux { .. }
            | Op::Elect
            | Op::ClusterBarrier { wait: true }
            | Op::GridSync
            | Op::Activemask
            | Op::Mbarrier {
                op: checked::MbarrierOp::Wait { .. },
                ..
            }) => self.sync_point(op, a)?,
            Op::Mbarrier { op, space } => self.mbarrier(op, space, a)?,
            Op::Testp { op, ty } => self.testp(op, ty, a)?,
            // At most 2t ns: none is within bounds (the operand is still read, and checked).
            Op::Nanosleep => {
                self.read(&a[0], crate::types::PtxType::U32)?;
            }
            Op::Fence => {
                self.b.ins().fence();
            }
            Op::GridDepControl | Op::CpAsyncGroup => {}
            Op::CpAsync { cg, hint } => self.cp_async(cg, hint, a)?,
            Op::CpAsyncBulk {
                to_global,
                from_shared,
                hint,
            } => self.cp_async_bulk(to_global, from_shared, hint, a)?,
            Op::CpAsyncBulkTensor { dims, store, hint } => {
                self.cp_async_bulk_tensor(dims, store, hint, a)?
            }
            Op::TensormapReplace { field, space, ty } => {
                self.tensormap_replace(field, space, ty, a)?
            }
            Op::TensormapCopy => self.tensormap_copy(a)?,
            Op::Hint => {}
            Op::Video(v) => self.video(v, a)?,
            Op::Movmatrix => {
                return Err(self.err("movmatrix reached lowering unexpanded".to_string()));
            }
            Op::CreatePolicy => {
                let policy = self.b.ins().iconst(types::I64, 0);
                self.write(&a[0], policy, crate::types::PtxType::B64)?;
            }
            Op::Mapa { space, ty } => self.mapa(space, ty, a)?,
            Op::GetCtaRank { space, ty } => self.getctarank(space, ty, a)?,
            Op::ClusterBarrier { wait: false } => self.cluster_arrive(),
            Op::Atom { space, op, ty, red } => self.atom(space, op, ty, red, a)?,
            Op::Setp {
                cmp,
                bool_op,
                ty,
                ftz,
            } => self.setp(cmp, bool_op, ty, ftz, a)?,
            Op::Set {
                cmp,
                bool_op,
                dst,
                src,
                ftz,
            } => self.set(cmp, bool_op, dst, src, ftz, a)?,
        }
        Ok(false)
    }

    /// A branch backwards (a loop) first checks the launch's abort flag, so that a kernel that
    /// loops forever stops at its timeout.
    fn poll_abort_at_back_edge(&mut self, inst: &checked::Inst) {
        let backwards = match inst.args.first() {
            Some(checked::Arg::Label(l)) => self.func.labels[*l] <= self.inst_index as usize,
            _ => false,
        };
        if !backwards {
            return;
        }
        let flag_ptr = self
            .b
            .ins()
            .load(types::I64, invariant(), self.ctx, ctx::ABORT);
        // Not invariant: another thread sets it during the launch.
        let flag = self
            .b
            .ins()
            .load(types::I8, MemFlagsData::trusted(), flag_ptr, 0);
        let stop = self.b.create_block();
        let go_on = self.b.create_block();
        self.b.ins().brif(flag, stop, &[], go_on, &[]);
        self.b.seal_block(stop);
        self.b.seal_block(go_on);
        self.b.switch_to_block(stop);
        self.return_status(Status::TIMEOUT);
        self.b.switch_to_block(go_on);
    }

    fn branch_target(&self, inst: &checked::Inst, labels: &[Block]) -> LResult<Block> {
        match inst.args.first() {
            Some(checked::Arg::Label(l)) => Ok(labels[*l]),
            _ => Err(self.err("bra needs a label operand (indirect branches are not supported)")),
        }
    }
}
