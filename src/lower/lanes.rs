//! Lane groups: a plain kernel runs its threads 16, 32 or 64 at a time ([`width`]), as SIMD
//! code.
//!
//! Why: a thread's code is mostly a chain of dependent operations, so running one thread
//! after another leaves most of the CPU idle. Here every PTX register that varies by thread is
//! a set of Cranelift vectors over the group's lanes (`width / lanes a vector` of them: for
//! 16 lanes one `i8x16` predicate, four `i32x4` for a 32-bit register, eight `i64x2` for a
//! 64-bit one); a register that holds the same value in every lane (`uniform_registers`) is
//! one scalar, and one that group helpers mostly read and write lives in a stack slot
//! (`homes`). Instructions with a vector form (`simd`) compute all lanes at once; any other
//! instruction runs lane by lane: each lane's operands are loaded from the vectors (stored
//! to the stack), the one-thread lowering computes, the results go back in (unrolled; a
//! loop over the lanes on cold paths). So every instruction is correct in the group code,
//! and the vector forms only make it faster.
//!
//! A branch (or guarded `ret`/`exit`) is taken by the whole group when its lanes agree: loop
//! back-edges and bounds checks inside the grid. When they disagree the group *diverges*: the
//! live registers of every lane are spilled to a stack area and each lane continues alone in
//! the function's ordinary one-thread code from its own target, one lane after another; then
//! the next group starts. So divergence costs a spill and scalar speed, never correctness.
//! Except where a forward branch skips a few instructions without control flow (`if (lane ==
//! 0) ...`): the lanes that do not take it run them under a mask, and the group goes on
//! together from the branch's target (`Translator::masks_skipped`).
//!
//! Used for `.entry` kernels without calls, per-thread memory (`.local`) or warp matrix
//! products other than `mma` (`wgmma`, `stmatrix`, and `mma` on f64), when `ntid.x` is a multiple of the [`width`] (checked at launch: other
//! blocks run the one-thread loop). The lanes of a group share `%tid.y` and `%tid.z`. A cooperative
//! kernel's groups meet the one-thread code at its synchronization points, through the
//! threads' frames (`coop`).

use std::collections::HashMap;

use cranelift_codegen::ir::{
    self, Block, InstBuilder, MemFlagsData, StackSlot, StackSlotData, StackSlotKind, Type, types,
};
use cranelift_frontend::Variable;

use super::liveness::Liveness;
use super::{LResult, Translator, ctx, invariant};
use crate::frontend::ast::{FunctionKind, StateSpace};
use crate::frontend::checked::{self, Arg, Function, Op};
use crate::frontend::scopes::MAX_REGISTERS;
use ptxjit_runtime::Status;

mod coop;
mod forward;

/// Kernels with at most this many instructions that run lane by lane get 32 threads a
/// group (64 where the launch allows: [`width`]), others 16.
///
/// Why: a group helper's call on 32 lanes has twice the independent work (the fma chains
/// gain 1.3–1.7×; on 64, 1.5× more: a chain's helper call is bound by its latency, the
/// conversions', until eight 16-half steps overlap), and a loop's fixed costs (range checks,
/// the back-edge's compare, the call) are paid once for twice the lanes; but an instruction
/// without a vector form is emitted once a lane, so a kernel of many such takes twice as
/// long to compile at 32 (Triton's `add`: 58 → 134 ms), where the second tier must repay its
/// compile quickly.
const FEW_LANE_BY_LANE: usize = 8;

/// The most instructions a divergent forward branch may skip for the lanes that do not take
/// it to run them under a mask ([`Translator::masks_skipped`]): each runs lane by lane.
const MASKED_SKIP: usize = 12;

/// The widest group that may diverge: a divergence mask is one `i64`.
pub const WIDEST: usize = 64;

/// The groups of a kernel that [`widens`], where asked for (`Options::wide`), widest first:
/// a form takes the widest that divides its launch's blocks ([`wide_width`]).
pub const WIDE: [usize; 2] = [256, 128];

/// The lanes a group would have in the wide form, compiled for blocks of `block_x` threads
/// in x, of a kernel that [`widens`] to `most` lanes, if any (its registers may bound it
/// lower: [`width`]).
pub fn wide_width(block_x: u32, most: usize) -> Option<usize> {
    WIDE.into_iter()
        .find(|&w| w <= most && (block_x as usize).is_multiple_of(w))
}

/// Where group helpers read and write (a register's home, the operands they are passed in the
/// spill area) starts on a cache line ([`Translator::helper_addr`]): a helper's 32-byte
/// accesses that straddle two lines cost it 5–9%, depending on where the frame happened to
/// put the slot (the scalar `f16` chain 936–947 → 861–868 µs a launch; a C model of the
/// loop: 1.51–1.53 ns a 16-half step at 0 or 32 bytes past a line, 1.58–1.64 at 16 or 48).
/// Cranelift aligns a frame to 16 bytes only, so such a slot has `HELPER_ALIGN - 16` bytes to
/// spare.
const HELPER_ALIGN: u32 = 64;

/// A stack slot with `bytes` from its [`HELPER_ALIGN`] boundary on
/// ([`Translator::helper_addr`]).
fn helper_slot(b: &mut cranelift_frontend::FunctionBuilder, bytes: u32) -> StackSlot {
    b.create_sized_stack_slot(StackSlotData::new(
        StackSlotKind::ExplicitSlot,
        bytes + HELPER_ALIGN - 16,
        4, // what Cranelift's frame keeps: 16 bytes
    ))
}

/// Threads per group for `f`: 16, 32, or [`WIDEST`] when the form is compiled for launches
/// whose `ntid.x` (`block_x`) is a multiple of it (others run the one-thread form; a form
/// compiled without a launch stays at 32), or one of [`WIDE`] where `wide` asks for it, the
/// launch allows and `f` [`widens`]. A predicate is one `i8x16` per 16 lanes; a 32-bit
/// register is four `i32x4` per 16 lanes.
pub fn width(f: &Function, block_x: Option<u32>, wide: bool) -> usize {
    width_given(f, &uniform_registers(f), block_x, wide)
}

/// [`width`], with `f`'s [`uniform_registers`] already found.
fn width_given(f: &Function, uniform: &[bool], block_x: Option<u32>, wide: bool) -> usize {
    let allows = |lanes: usize| {
        block_x.is_some_and(|x| (x as usize).is_multiple_of(lanes))
            && f.regs.len() * lanes <= MAX_REGISTERS
    };
    let lane_by_lane = f
        .body
        .iter()
        .flatten()
        .filter(|i| {
            !group_wide(i, uniform)
                && !lane_invariant(i, uniform)
                && !super::simd::may_have_vector_form(i)
        })
        .count();
    // (A group of one warp: nvcc's reductions branch on the warp's index, which a wider
    // group's lanes disagree on. nvcc's dot product, 16.4 → 6.4 ms at 32. A kernel of `mma`s
    // computes them in groups of whole warps only, which no launch may narrow: a lane alone
    // could not go on from the second `mma` of a run, `coop`.)
    let collectives: Vec<_> = f
        .body
        .iter()
        .flatten()
        .filter(|i| super::simd::warp::in_group(i))
        .collect();
    let mma = collectives.iter().any(|i| matches!(i.op, Op::Mma(_)));
    if mma || (allows(32) && !collectives.is_empty()) {
        32
    } else if lane_by_lane > FEW_LANE_BY_LANE {
        16
    } else if let Some(w) = wide
        .then(|| widens_given(f, uniform))
        .flatten()
        .and_then(|most| WIDE.into_iter().find(|&w| w <= most && allows(w)))
    {
        w
    } else if allows(WIDEST) {
        WIDEST
    } else if block_x.is_some_and(|x| x % 32 != 0 && x % 16 == 0) {
        // (Blocks 16 threads wide, as tiled kernels' 16 × 16, divide no wider group.)
        16
    } else {
        32
    }
}

/// The widest group of [`WIDE`] that `f`'s groups may be and gain by, if any: none where a
/// branch or exit of it can diverge (a divergence mask holds [`WIDEST`] lanes) or no loop of
/// it calls a group helper (`simd`), whose call has two or four times the independent
/// 16-half steps in a group of 128 or 256: the fma chain's helper is bound by a step's
/// latency, the conversions', more than by its throughput (128 halves a call 1.68 ns a
/// step, 256 1.50, in a C model of its loop). The f16x2 chain ran 6.5% faster at 128 lanes,
/// 8–9% at 256 (`bench`: 0.504–0.508 → 0.515–0.521 of its AVX-512 ceiling from 128 to 256;
/// the scalar f16 chain 5–9%, AVX2 3%); 256 only where its loops make at most
/// [`FEW_HELPER_CALLS`]. Its group form compiles 1.4 or 2.2 times as long, so the tier
/// compiles it only for a kernel that has run long in the 64-lane form (`tier`).
pub fn widens(f: &Function) -> Option<usize> {
    widens_given(f, &uniform_registers(f))
}

/// The most group-helper calls a kernel's loops may make for its groups to gain by 256
/// lanes over 128. A loop of more independent calls already overlaps one call's last steps
/// with the next one's first: in loops of 1, 2, 3, 4, 8 and 16 `fma.rn.f16x2` on as many
/// registers, 256 lanes ran 7, 7, 0, 2, 0 and −1% faster than 128 (and 128 than 64: 27, 24,
/// 6, 4, 3 and 0%), for 1.7–2.6 times the compile.
const FEW_HELPER_CALLS: usize = 2;

/// [`widens`], with `f`'s [`uniform_registers`] already found.
fn widens_given(f: &Function, uniform: &[bool]) -> Option<usize> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let in_loop = loop_positions(f);
    let calls = body
        .iter()
        .zip(&in_loop)
        .filter(|&(i, &l)| l && by_group_helper(i))
        .count();
    // (A cooperative group hands its lanes to the one-thread code as at a divergence.)
    let never_diverges = !super::sync::is_cooperative(f)
        && body
            .iter()
            .all(|i| !is_guarded_exit(i) || i.guard.is_some_and(|g| uniform[g.reg as usize]));
    if !never_diverges || calls == 0 {
        return None;
    }
    Some(if calls <= FEW_HELPER_CALLS { 256 } else { 128 })
}

/// Whether `inst` is a half `add sub mul fma` that a group helper does (where the host has
/// the helpers: `Callees::group_helpers`).
fn by_group_helper(inst: &checked::Inst) -> bool {
    match inst.op {
        Op::Float { op, ty, mods } if inst.guard.is_none() && ty.is_half() => {
            crate::native::code(op, mods, ty).is_some()
        }
        _ => false,
    }
}

/// The vector type that holds lanes of scalar type `t`, if Cranelift has one.
pub(super) fn vector_of(t: Type) -> Option<Type> {
    Some(match t {
        types::I8 => types::I8X16,
        types::I16 => types::I16X8,
        types::I32 => types::I32X4,
        types::I64 => types::I64X2,
        types::F32 => types::F32X4,
        types::F64 => types::F64X2,
        _ => return None,
    })
}

/// The stack area: the group's first thread (x, y, z), the divergence site to resume (-1:
/// none), the divergence mask (an `i64`, a bit a lane), the lane to run next, then one
/// register frame per lane.
const BASE: i32 = 0;
const RESUME: i32 = 12;
const MASK: i32 = 16;
const LANE: i32 = 24;
const FRAMES: i32 = 32;

/// Whether `f` can run in lane groups: every register has a vector type, and a variable per
/// lane for each would fit the register bound of one function (see `MAX_REGISTERS`).
pub fn eligible(f: &Function) -> bool {
    f.kind == FunctionKind::Entry
        && f.regs.len() * width(f, None, false) <= MAX_REGISTERS
        && f.regs.iter().all(|r| vector_of(r.ty.ir_type()).is_some())
        && f.vars.iter().all(|v| v.space == StateSpace::Shared)
        && f.body
            .iter()
            .flatten()
            .all(|i| i.op != Op::Call && !is_matrix_product(i))
}

/// Whether `inst` is a warp's or warpgroup's matrix product or store (`mma`, `wgmma`,
/// `stmatrix`) that the group code does not compute: a kernel of them computes in
/// `crate::sync` between rounds, from operands that every lane moves through its frame, so
/// it keeps its one-thread form. (`ldmatrix` loads in the group, and `mma` multiplies there,
/// but on f64: `simd::warp`.)
fn is_matrix_product(inst: &checked::Inst) -> bool {
    match inst.op {
        Op::Mma(form) => crate::mma::group_code(form).is_none(),
        op => matches!(op, Op::WarpMatrix { store: true, .. } | Op::Wgmma(_)),
    }
}

/// Whether `inst` writes only registers that are `uniform` (`uniform_registers`): a value the
/// same in every lane, computed once a group.
fn group_wide(inst: &checked::Inst, uniform: &[bool]) -> bool {
    let defs = super::liveness::destinations(inst);
    !defs.is_empty() && defs.iter().all(|&d| uniform[d as usize])
}

/// Whether `inst`, unguarded, writes one value for every lane ([`same_in_every_lane`]) to
/// registers that are not all `uniform`.
fn lane_invariant(inst: &checked::Inst, uniform: &[bool]) -> bool {
    inst.guard.is_none() && !group_wide(inst, uniform) && same_in_every_lane(inst, uniform)
}

/// Whether the instruction ends control flow for the lanes whose guard holds.
fn is_guarded_exit(inst: &checked::Inst) -> bool {
    inst.guard.is_some() && matches!(inst.op, Op::Bra | Op::Ret | Op::Exit)
}

/// Positions where a lane of a diverged group may continue in the one-thread code besides
/// labels: after each guarded branch, `ret` or `exit`, and at each cooperating instruction
/// (`coop`). The one-thread code starts a block there.
pub fn continuations(f: &Function) -> Vec<usize> {
    f.body
        .iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, inst)| match () {
            _ if is_guarded_exit(inst) => Some(i + 1),
            _ if inst.op.cooperates() => Some(i),
            _ => None,
        })
        .collect()
}

/// Special registers with the same value in every lane of a group.
pub(super) fn is_uniform_special(s: checked::Special) -> bool {
    use crate::frontend::checked::{Dim, Special};
    matches!(
        s,
        Special::Tid(Dim::Y | Dim::Z)
            | Special::Ntid(_)
            | Special::Ctaid(_)
            | Special::Nctaid(_)
            | Special::NWarpId
            | Special::NSmId
            | Special::GridId
            | Special::DynamicSmemSize
            | Special::ClusterId(_)
            | Special::NClusterId(_)
            | Special::ClusterCtaId(_)
            | Special::ClusterNCtaId(_)
            | Special::ClusterCtaRank
            | Special::ClusterNCtaRank
            | Special::IsExplicitCluster
    )
}

/// Registers that hold the same value in every lane of a group: written only from
/// constants, parameters, the block's and grid's shape, `%tid.y`, `%tid.z` and other such
/// registers. Control flow inside the group code is uniform (a disagreement leaves it), so
/// such a register needs one variable for the whole group and its instructions are lowered
/// once.
pub fn uniform_registers(f: &Function) -> Vec<bool> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut uniform = vec![true; f.regs.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for inst in body {
            let defs = super::liveness::destinations(inst);
            if defs.iter().all(|&d| !uniform[d as usize]) {
                continue;
            }
            let ok = same_in_every_lane(inst, &uniform);
            if !ok {
                for d in defs {
                    uniform[d as usize] = false;
                }
                changed = true;
            }
        }
    }
    uniform
}

/// Registers whose every write is an unguarded `mov` of one integer immediate: that value,
/// known when the kernel is compiled (a read before the write reads an undefined value).
/// nvcc passes a warp collective's full membermask so (`mov.u32 %r13, -1`), which the
/// group then computes without a test ([`simd::warp`](super::simd::warp)).
pub fn constant_registers(f: &Function) -> Vec<Option<u64>> {
    use crate::frontend::ast::Immediate;
    // (None: not written yet; Some(None): not a constant.)
    let mut known: Vec<Option<Option<u64>>> = vec![None; f.regs.len()];
    for inst in f.body.iter().flatten() {
        let value = match (&inst.op, inst.args.as_slice(), &inst.guard) {
            (Op::Mov(_), [Arg::Reg(_), Arg::Imm(Immediate::Int(x))], None) => Some(*x),
            _ => None,
        };
        for d in super::liveness::destinations(inst) {
            let k = &mut known[d as usize];
            *k = match *k {
                None => Some(value),
                Some(v) if v == value => Some(v),
                Some(_) => Some(None),
            };
        }
    }
    known.into_iter().map(Option::flatten).collect()
}

/// Whether `inst` only computes its registers from its operands: no memory, no fault, no
/// effect on other threads (so it may run in lanes whose control flow skips it, where
/// those registers are dead).
fn has_no_effects(inst: &checked::Inst) -> bool {
    matches!(
        inst.op,
        Op::Mov(_)
            | Op::MovVec { .. }
            | Op::Cvt { .. }
            | Op::CvtNarrow(_)
            | Op::Int { .. }
            | Op::Float { .. }
            | Op::Setp { .. }
            | Op::Set { .. }
            | Op::Selp(_)
            | Op::Cvta { .. }
    )
}

/// Whether `inst` computes the same value in every lane of a group, its sources being
/// `uniform` registers: an operation without side effects on no per-lane special register,
/// or a load through the same address in every lane (the lanes of a group load at once, as
/// a warp's do: a lane's store to that address between their loads, which one thread at a
/// time would see, is a race the memory model leaves undefined).
fn same_in_every_lane(inst: &checked::Inst, uniform: &[bool]) -> bool {
    let uniform_load = match inst.op {
        Op::Ld { space, .. } => matches!(
            space,
            StateSpace::Param
                | StateSpace::Const
                | StateSpace::Shared
                | StateSpace::Global
                | StateSpace::Generic
        ),
        _ => false,
    };
    let op_ok = has_no_effects(inst) || uniform_load;
    let special_ok = |a: &Arg| match a {
        Arg::Special(s) => is_uniform_special(*s),
        Arg::Vector(v) => v.iter().all(|x| !matches!(x, Arg::Special(_))),
        _ => true,
    };
    op_ok
        && inst.args.iter().all(special_ok)
        && super::liveness::sources(inst)
            .iter()
            .all(|&u| uniform[u as usize])
}

/// Where an instruction in a loop counts for more in [`homes`]: it runs many times for the
/// one time code around the loop does.
const IN_LOOP_WEIGHT: usize = 16;

/// Registers that are better kept in memory than in vectors: those that group helpers
/// (`simd`'s `v_half`, through memory) read and write at least as often as other
/// instructions do, counting an instruction inside a loop [`IN_LOOP_WEIGHT`] times. A
/// helper reads such a register where it lives and writes its result there, so a chain of
/// helper instructions (`acc = fma(acc, x, c)` in a loop) stores and loads no vectors; any
/// other instruction loads the vectors it reads and stores those it writes.
fn homes(
    f: &Function,
    uniform: &[bool],
    strides: &[Option<i64>],
    group_helpers: bool,
    in_loop: &[bool],
) -> Vec<bool> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let by_helper = |inst: &checked::Inst| group_helpers && by_group_helper(inst);
    let (mut helper_uses, mut other_uses) = (vec![0; f.regs.len()], vec![0; f.regs.len()]);
    for (pos, inst) in body.iter().enumerate() {
        let weight = if in_loop[pos] { IN_LOOP_WEIGHT } else { 1 };
        let mut regs = super::liveness::sources(inst);
        regs.extend(super::liveness::destinations(inst));
        regs.sort_unstable();
        regs.dedup();
        let uses = if by_helper(inst) {
            &mut helper_uses
        } else {
            &mut other_uses
        };
        for r in regs {
            uses[r as usize] += weight;
        }
    }
    (0..f.regs.len())
        .map(|r| {
            !uniform[r]
                && strides[r].is_none()
                && helper_uses[r] > 0
                && helper_uses[r] >= other_uses[r]
        })
        .collect()
}

/// Whether each position of `f`'s body lies inside a loop: between a label and a branch back
/// to it (each loop's span marked at its ends, then summed).
fn loop_positions(f: &Function) -> Vec<bool> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut spans = vec![0i64; body.len() + 1];
    for (pos, inst) in body.iter().enumerate() {
        if let (Op::Bra, Some(Arg::Label(l))) = (inst.op, inst.args.first()) {
            let target = f.labels[*l];
            if target <= pos {
                spans[target] += 1;
                spans[pos + 1] -= 1;
            }
        }
    }
    spans
        .iter()
        .scan(0, |open, d| {
            *open += d;
            Some(*open > 0)
        })
        .collect()
}

/// Whether `f`'s one-thread form should poll for a hand-over to its group form between
/// threads (`Options::handover`): it has a group form and a loop. (Without one, a thread is
/// as short as its code and a block as short as a thousand of them: the asks before each
/// block come often enough, and a poll would cost an import and a test a thread.)
pub(super) fn polls_for_handover(f: &Function) -> bool {
    // (A cooperative block resumes from frames its own function laid out: a form is chosen
    // before the block starts.)
    eligible(f) && !super::sync::is_cooperative(f) && loop_positions(f).contains(&true)
}

/// How the group code holds a register's lanes where a loop over the lanes reads them
/// ([`Translator::hold_lanes`]).
#[derive(Clone, Copy)]
enum Held {
    /// Lane 0's value, and the stride between lanes (0: the same in every lane).
    Once(ir::Value, i64),
    /// In memory from this address plus this offset, a lane after another.
    Area(ir::Value, i32),
}

/// Translation state of the group code.
pub(super) struct Lanes {
    /// Each register's vectors over the lanes (none for a uniform or a derived register, or
    /// one kept in memory: [`homes`](Self::homes)).
    pub(super) vectors: Vec<Vec<Variable>>,
    /// What the one-thread lowering sees as each register in the group code: a uniform
    /// register's one variable, or a scalar that holds one lane's value while an instruction
    /// runs lane by lane.
    pub(super) scalars: Vec<Variable>,
    pub(super) uniform: Vec<bool>,
    /// Each register's value where it is a constant ([`constant_registers`]).
    pub(super) constants: Vec<Option<u64>>,
    /// Each lane-affine register's stride (`affine`): its scalar in `scalars` holds lane 0's
    /// value between instructions, beside its vectors. A 32-bit one has no vectors of its
    /// own ([`derived`](Self::derived)).
    pub(super) strides: Vec<Option<i64>>,
    /// Registers that live in memory ([`homes`]): a stack slot of all the group's lanes,
    /// which group helpers read and write in place.
    homes: Vec<Option<StackSlot>>,
    /// The 32-bit lane-affine registers: lane k is lane 0's value + k × stride (mod 2³², so
    /// exactly, whatever the widenings on the way did to 64-bit ones), so the group code
    /// keeps only lane 0's value and makes the vectors where an instruction reads them
    /// (`lane_vectors`). Their instructions compute lane 0 alone, and no vectors stay live
    /// across a loop or a helper's call for them.
    derived: Vec<bool>,
    /// For each 64-bit lane-affine register, whether its lanes are lane 0's value + k ×
    /// stride as 64-bit integers in this group (false where a widening crossed the end of
    /// the 32-bit range between lanes).
    pub(super) in_range: Vec<Option<Variable>>,
    /// Threads in the group ([`width`]).
    pub(super) width: usize,
    /// Whether each position lies inside a loop (`loop_positions`).
    pub(super) in_loop: Vec<bool>,
    /// The group's first thread: the lanes are x + 0..width, y, z.
    pub(super) first: [Variable; 3],
    /// The thread id the one-thread lowering sees (one lane's while it runs lane by lane).
    tid: [Variable; 3],
    area: StackSlot,
    /// Where an instruction that runs lane by lane finds its registers' lanes: room for
    /// every register one instruction touches (`lane_by_lane`), and for the four operands
    /// of a group helper's call (`simd`).
    pub(super) spill: StackSlot,
    /// Offset of each register in a lane's frame, and the frame's size.
    slots: Vec<i32>,
    frame_bytes: i32,
    live: Liveness,
    /// Group-code block at each label position.
    labels: HashMap<usize, Block>,
    /// One-thread-code block at each position a lane may continue from.
    scalar: HashMap<usize, Block>,
    /// Where the group goes when all its threads are done.
    next_group: Block,
    /// The group helpers' signature (`crate::native::GroupHelper`), where they are called.
    pub(super) helper_signature: Option<ir::SigRef>,
    /// For each divergence site, the block that runs its next lane (or, after the last,
    /// starts the next group); the resume index is the site's number.
    resume_blocks: Vec<Block>,
    /// Accesses of consecutive elements lowered as one (`simd::runs`).
    runs: super::simd::runs::Runs,
    /// Where each load forwarded to group helpers stops being forwarded (`forward`).
    forwards: Vec<Option<usize>>,
    /// The forwards under way.
    pending: Vec<forward::Pending>,
    /// A cooperative kernel's resume points and group end (`coop`).
    coop: Option<coop::CoopLanes>,
    /// Where a loop over the lanes finds registers' lanes ([`Translator::hold_lanes`]),
    /// once made.
    held_area: Option<StackSlot>,
    /// The one-thread code's start ([`Translator::choose_groups`]).
    thread_start: Option<Block>,
}

impl Lanes {
    /// The stride between lanes of register `r` where the group keeps it once (lane 0's
    /// value, as [`Held::Once`]): 0 for a uniform register, a derived one's stride.
    fn kept_once(&self, r: u32) -> Option<i64> {
        let i = r as usize;
        match (self.uniform[i], self.derived[i]) {
            (true, _) => Some(0),
            (_, true) => Some(self.strides[i].expect("a derived register is lane-affine")),
            _ => None,
        }
    }

    pub(super) fn new(
        b: &mut cranelift_frontend::FunctionBuilder,
        f: &Function,
        scalar: &HashMap<usize, Block>,
        group_helpers: bool,
        block_x: Option<u32>,
        wide: bool,
    ) -> Lanes {
        let uniform = uniform_registers(f);
        let width = width_given(f, &uniform, block_x, wide && group_helpers);
        let scalars = f
            .regs
            .iter()
            .map(|r| b.declare_var(r.ty.ir_type()))
            .collect();
        let live = super::liveness::analyze(f);
        let strides = super::affine::lane_strides(f, &uniform, live.at(0), width);
        // (A uniform register has no stride: `lane_strides` gives strides of varying ones.)
        let derived: Vec<bool> = f
            .regs
            .iter()
            .zip(&strides)
            .map(|(r, s)| s.is_some() && r.ty.bits() == 32)
            .collect();
        let in_loop = loop_positions(f);
        let runs = super::simd::runs::plan(f, &uniform, &strides);
        let homed = homes(f, &uniform, &strides, group_helpers, &in_loop);
        let forwards = forward::plan(f, &homed, &runs, group_helpers);
        let homes = f
            .regs
            .iter()
            .zip(&homed)
            .map(|(r, &h)| h.then(|| helper_slot(b, width as u32 * r.ty.ir_type().bytes())))
            .collect();
        let vectors = f
            .regs
            .iter()
            .zip(uniform.iter().zip(derived.iter().zip(&homed)))
            .map(|(r, (&u, (&d, &h)))| {
                let vt = vector_of(r.ty.ir_type()).expect("eligible");
                let n = if u || d || h {
                    0
                } else {
                    width / vt.lane_count() as usize
                };
                (0..n).map(|_| b.declare_var(vt)).collect()
            })
            .collect();
        let in_range = f
            .regs
            .iter()
            .zip(&strides)
            .map(|(r, s)| (s.is_some() && r.ty.bits() == 64).then(|| b.declare_var(types::I8)))
            .collect();
        let first = [0; 3].map(|_| b.declare_var(types::I32));
        let tid = [0; 3].map(|_| b.declare_var(types::I32));
        let helper_signature = group_helpers.then(|| {
            let mut sig = ir::Signature::new(b.func.signature.call_conv);
            let params = [types::I64, types::I64, types::I64, types::I64, types::I32];
            sig.params.extend(params.map(ir::AbiParam::new));
            b.import_signature(sig)
        });
        let (slots, end) = super::sync::register_slots(f, 0);
        let frame_bytes = end.max(8);
        let area = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            FRAMES as u32 + width as u32 * frame_bytes as u32,
            4,
        ));
        let most_touched = f
            .body
            .iter()
            .flatten()
            .map(|i| super::liveness::sources(i).len() + super::liveness::destinations(i).len())
            .max()
            .unwrap_or(0);
        let spill = helper_slot(b, (most_touched.max(4) * width * 8) as u32);
        let mut labels = HashMap::new();
        for &pos in &f.labels {
            labels.entry(pos).or_insert_with(|| b.create_block());
        }
        labels.entry(0).or_insert_with(|| b.create_block());
        // (The divergence site that runs each lane alone is the first.)
        let mut resume_blocks = Vec::new();
        let coop = super::sync::is_cooperative(f).then(|| {
            resume_blocks.push(b.create_block());
            coop::CoopLanes::new(b, super::sync::sync_points(f).len(), 0)
        });
        Lanes {
            coop,
            held_area: None,
            thread_start: None,
            runs,
            forwards,
            pending: Vec::new(),
            width,
            in_loop,
            homes,
            vectors,
            scalars,
            uniform,
            constants: constant_registers(f),
            strides,
            derived,
            in_range,
            first,
            tid,
            area,
            spill,
            slots,
            frame_bytes,
            live,
            labels,
            scalar: scalar.clone(),
            next_group: b.create_block(),
            helper_signature,
            resume_blocks,
        }
    }
}

impl Translator<'_, '_> {
    /// In the entry block: no lane is pending; to `groups` if the block's `ntid.x` is a
    /// multiple of the group's width, else to `one_thread`.
    pub(super) fn choose_groups(&mut self, groups: Block, one_thread: Block) {
        let (area, width) = {
            let lanes = self.lanes.as_mut().expect("grouped");
            lanes.thread_start = Some(one_thread);
            (lanes.area, lanes.width)
        };
        let none = self.b.ins().iconst(types::I32, -1);
        self.b.ins().stack_store(types::I64, none, area, RESUME);
        let nx = self
            .b
            .ins()
            .load(types::I32, invariant(), self.ctx, ctx::NTID);
        let rest = self.b.ins().band_imm_u(nx, width as i64 - 1);
        self.b.ins().brif(rest, one_thread, &[], groups, &[]);
    }

    /// Emits the group code, starting at `start`.
    pub(super) fn lower_groups(&mut self, start: Block) -> LResult {
        let body = self.func.body.as_ref().expect("defined");
        let lanes = self.lanes.as_ref().expect("grouped");
        let (area, next_group, width) = (lanes.area, lanes.next_group, lanes.width);
        let body_start = lanes.labels[&0];
        let entry_live: Vec<u32> = lanes.live.at(0).to_vec();

        // First group: the block's start, (0, 0, 0) unless the one-thread form handed the
        // block over (at a multiple of the width in x).
        self.b.switch_to_block(start);
        for d in 0..3 {
            let first = self.b.ins().load(
                types::I32,
                MemFlagsData::trusted(),
                self.ctx,
                ctx::START + 4 * d,
            );
            self.b
                .ins()
                .stack_store(types::I64, first, area, BASE + 4 * d);
        }
        let group_start = self.b.create_block();
        self.b.ins().jump(group_start, &[]);

        // Each group: the lanes' thread ids; registers read before any write start at zero
        // (so that their values never flow in from elsewhere).
        self.b.switch_to_block(group_start);
        let base: Vec<ir::Value> = (0..3)
            .map(|d| {
                self.b
                    .ins()
                    .stack_load(types::I64, types::I32, area, BASE + 4 * d)
            })
            .collect();
        let lanes = self.lanes.as_ref().expect("grouped");
        let (first, tid) = (lanes.first, lanes.tid);
        for d in 0..3 {
            self.b.def_var(first[d], base[d]);
            self.b.def_var(tid[d], base[d]);
        }
        if self.coop.is_some() {
            let fresh = self.b.create_block();
            self.coop_group_dispatch(fresh);
            self.b.switch_to_block(fresh);
        }
        for &r in &entry_live {
            let ty = self.func.regs[r as usize].ty;
            let zero = self.const_bits(ty, 0);
            let lanes = self.lanes.as_ref().expect("grouped");
            let (scalar, vectors) = (lanes.scalars[r as usize], lanes.vectors[r as usize].clone());
            self.b.def_var(scalar, zero);
            if let Some(flag) = lanes.in_range[r as usize] {
                let yes = self.b.ins().iconst(types::I8, 1);
                self.b.def_var(flag, yes);
            }
            for v in vectors {
                let vt = vector_of(ty.ir_type()).expect("eligible");
                let zeros = self.b.ins().splat(vt, zero);
                self.b.def_var(v, zeros);
            }
            if self.home(r).is_some() {
                let vt = vector_of(ty.ir_type()).expect("eligible");
                let zeros = self.b.ins().splat(vt, zero);
                let n = self.lanes.as_ref().expect("grouped").width / vt.lane_count() as usize;
                self.home_write(r, vec![zeros; n]);
            }
        }
        self.b.ins().jump(body_start, &[]);

        // The body, once per group.
        let labels = self.lanes.as_ref().expect("grouped").labels.clone();
        let terminated =
            self.lower_in_order(body, &labels, |t, inst, i| t.group_instruction(inst, i))?;
        if !terminated {
            let end = self.group_end();
            self.b.ins().jump(end, &[]);
        }
        if self.coop.is_some() {
            self.lower_group_done();
            self.lower_alone_site();
        }

        // Next group: x advances by the width, then y, then z; after the last, the block is
        // done.
        self.b.switch_to_block(next_group);
        let flags = invariant();
        for d in 0..3 {
            let n = self
                .b
                .ins()
                .load(types::I32, flags, self.ctx, ctx::NTID + 4 * d);
            let cur = self
                .b
                .ins()
                .stack_load(types::I64, types::I32, area, BASE + 4 * d);
            let step = if d == 0 { width as i64 } else { 1 };
            let next = self.b.ins().iadd_imm_s(cur, step);
            let more = self
                .b
                .ins()
                .icmp(ir::condcodes::IntCC::UnsignedLessThan, next, n);
            let advance = self.b.create_block();
            let carry = self.b.create_block();
            self.b.ins().brif(more, advance, &[], carry, &[]);
            self.b.switch_to_block(advance);
            self.b
                .ins()
                .stack_store(types::I64, next, area, BASE + 4 * d);
            self.b.ins().jump(group_start, &[]);
            self.b.switch_to_block(carry);
            let zero = self.b.ins().iconst(types::I32, 0);
            self.b
                .ins()
                .stack_store(types::I64, zero, area, BASE + 4 * d);
        }
        // (A cooperative kernel's block has finished a round.)
        let status = match self.coop {
            Some(_) => Status::encode(Status::ROUND, 0, 0),
            None => 0,
        };
        let done = self.b.ins().iconst(types::I64, status as i64);
        self.b.ins().return_(&[done]);
        Ok(())
    }

    /// The one-thread code's thread end in a grouped kernel: a lane of a diverged group
    /// finished, so the next lane (or the next group) goes on; otherwise `next_thread`.
    pub(super) fn lane_dispatch(&mut self, at: Block, next_thread: Block) {
        let lanes = self.lanes.as_ref().expect("grouped");
        let (area, blocks) = (lanes.area, lanes.resume_blocks.clone());
        self.b.switch_to_block(at);
        let resume = self
            .b
            .ins()
            .stack_load(types::I64, types::I32, area, RESUME);
        let targets: Vec<ir::BlockCall> = blocks
            .iter()
            .map(|&blk| self.b.func.dfg.block_call(blk, &[]))
            .collect();
        let default = self.b.func.dfg.block_call(next_thread, &[]);
        let table = self
            .b
            .create_jump_table(ir::JumpTableData::new(default, &targets));
        self.b.ins().br_table(resume, table);
    }

    /// Lowers one instruction for the whole group; returns whether it ended the block.
    fn group_instruction(&mut self, inst: &checked::Inst, pos: usize) -> LResult<bool> {
        let ended = self.group_instruction_itself(inst, pos)?;
        // (A stretch of forwarded loads holds no branch or exit: `forward::plan`.)
        if !ended {
            self.settle_forwards(inst, pos);
        }
        Ok(ended)
    }

    fn group_instruction_itself(&mut self, inst: &checked::Inst, pos: usize) -> LResult<bool> {
        let lanes = self.lanes.as_ref().expect("grouped");
        if lanes.runs.deferred[pos] {
            return Ok(false);
        }
        if let Some(members) = lanes.runs.at_last.get(&pos).cloned() {
            self.v_run(&members)?;
            return Ok(false);
        }
        let next_group = self.group_end();
        let target = |t: &Self| -> LResult<Option<usize>> {
            match (inst.op, inst.args.first()) {
                (Op::Bra, Some(Arg::Label(l))) => Ok(Some(t.func.labels[*l])),
                (Op::Bra, _) => {
                    Err(t.err("bra needs a label operand (indirect branches are not supported)"))
                }
                _ => Ok(None),
            }
        };
        if inst.op == Op::Bra {
            self.poll_abort_at_back_edge(inst);
        }
        if inst.op.cooperates() {
            return self.group_cooperates(inst, pos);
        }
        match (inst.op, inst.guard) {
            (Op::Bra, None) => {
                let blk = target(self)?.map(|p| self.lanes.as_ref().expect("grouped").labels[&p]);
                self.b.ins().jump(blk.expect("branch target"), &[]);
                Ok(true)
            }
            (Op::Ret | Op::Exit, None) => {
                self.b.ins().jump(next_group, &[]);
                Ok(true)
            }
            (Op::Trap, None) => {
                // Every lane stops here; the first one ends the block.
                self.enter_scalars();
                let r = self.instruction(inst, &[]);
                self.enter_scalars();
                r
            }
            (Op::Bra | Op::Ret | Op::Exit, Some(g))
                if self.lanes.as_ref().expect("grouped").uniform[g.reg as usize] =>
            {
                // The lanes cannot disagree.
                let to = target(self)?;
                let lanes = self.lanes.as_ref().expect("grouped");
                let taken = to.map_or(next_group, |p| lanes.labels[&p]);
                let p = self.b.use_var(lanes.scalars[g.reg as usize]);
                let cont = self.b.create_block();
                let (t, f) = if g.negated {
                    (cont, taken)
                } else {
                    (taken, cont)
                };
                self.b.ins().brif(p, t, &[], f, &[]);
                self.b.seal_block(cont);
                self.b.switch_to_block(cont);
                Ok(false)
            }
            (Op::Bra | Op::Ret | Op::Exit, Some(g)) => {
                let to = target(self)?;
                let mask = self.guard_lanes(g);
                let every_lane = self.every_lane();
                let taken = match to {
                    Some(p) => self.lanes.as_ref().expect("grouped").labels[&p],
                    None => next_group,
                };
                let cont = self.b.create_block();
                let mixed = self.b.create_block();
                let diverge = self.b.create_block();
                let all = self
                    .b
                    .ins()
                    .icmp_imm_u(ir::condcodes::IntCC::Equal, mask, every_lane);
                self.b.ins().brif(all, taken, &[], mixed, &[]);
                self.b.seal_block(mixed);
                self.b.switch_to_block(mixed);
                self.b.ins().brif(mask, diverge, &[], cont, &[]);
                self.b.seal_block(diverge);
                self.b.seal_block(cont);
                self.b.switch_to_block(diverge);
                match to.and_then(|t| Some((t, self.masks_skipped(pos, t)?))) {
                    Some((target, masked)) => {
                        self.run_skipped_masked(mask, pos, target, &masked)?;
                    }
                    None => self.diverge(mask, to, pos + 1)?,
                }
                self.b.switch_to_block(cont);
                Ok(false)
            }
            _ if self.is_uniform(inst) => {
                self.enter_scalars();
                let r = self.instruction(inst, &[]);
                self.enter_scalars();
                r?;
                Ok(false)
            }
            _ if self.is_lane_invariant(inst) => {
                // Lowered once, as for a uniform register, then repeated in every lane.
                self.enter_scalars();
                let r = self.instruction(inst, &[]);
                self.enter_scalars();
                r?;
                for d in super::liveness::destinations(inst) {
                    let scalar = self.lanes.as_ref().expect("grouped").scalars[d as usize];
                    let x = self.b.use_var(scalar);
                    let vt = vector_of(self.func.regs[d as usize].ty.ir_type()).expect("eligible");
                    let v = self.b.ins().splat(vt, x);
                    let n = self.lanes.as_ref().expect("grouped").width / vt.lane_count() as usize;
                    self.write_vectors(d, vec![v; n]);
                }
                Ok(false)
            }
            _ => {
                let lanes = self.lanes.as_ref().expect("grouped");
                let defs = super::liveness::destinations(inst);
                let derived = matches!(defs[..], [d] if lanes.derived[d as usize]);
                if !derived && !self.vector_form(inst, pos)? {
                    // (`cp.async`'s one-thread code takes a path a byte for a partial copy:
                    // 576 Cranelift instructions, 18,000 a group of 32 unrolled, where
                    // Triton's softmax has 24 of them.)
                    match inst.op {
                        Op::CpAsync { .. } => self.lane_by_lane_looped(inst)?,
                        _ => self.lane_by_lane(inst)?,
                    }
                }
                self.affine_lane_zero(inst)?;
                Ok(false)
            }
        }
    }

    /// Where the group's lanes disagree at the forward branch at `pos` to `target`, whether
    /// the lanes that do not take it run the instructions it skips under a mask and the
    /// group goes on at `target` together ([`run_skipped_masked`]), rather than each lane
    /// alone up to the next sync point ([`diverge`]): nvcc's `if (lane == 0) ...` before a
    /// barrier or shuffles. So where the skipped instructions are a few, without control
    /// flow, cooperation or a run of accesses (`simd::runs`); for each, whether it runs
    /// under the mask (lane by lane) or for every lane: one without side effects whose
    /// registers are dead at `target` may run in every lane (so lane-affine and uniform
    /// ones keep their form); any other runs under the mask, and must not write a register
    /// the group keeps once for its lanes.
    ///
    /// [`run_skipped_masked`]: Self::run_skipped_masked
    /// [`diverge`]: Self::diverge
    fn masks_skipped(&self, pos: usize, target: usize) -> Option<Vec<bool>> {
        let lanes = self.lanes.as_ref().expect("grouped");
        let body = self.func.body.as_deref().unwrap_or(&[]);
        let skipped = pos + 1..target;
        if target <= pos || skipped.len() > MASKED_SKIP || target > body.len() {
            return None;
        }
        let live = lanes.live.at(target);
        skipped
            .map(|p| {
                let inst = &body[p];
                let control = matches!(inst.op, Op::Bra | Op::Ret | Op::Exit | Op::Trap);
                let in_run = lanes.runs.deferred[p] || lanes.runs.at_last.contains_key(&p);
                if control || inst.op.cooperates() || in_run {
                    return None;
                }
                let defs = super::liveness::destinations(inst);
                let dead = defs.iter().all(|d| !live.contains(d));
                let kept_once =
                    |d: &u32| lanes.uniform[*d as usize] || lanes.strides[*d as usize].is_some();
                match () {
                    _ if dead && (has_no_effects(inst) || self.is_uniform(inst)) => Some(false),
                    _ if defs.iter().any(kept_once) => None,
                    _ => Some(true),
                }
            })
            .collect()
    }

    /// The instructions a divergent forward branch at `pos` to `target` skips, in the lanes
    /// that do not take it (`taken`: those that do, an `i64` mask), each under that mask
    /// where `masked` says so (see [`masks_skipped`](Self::masks_skipped)), then on to
    /// `target`'s group code. Ends the current block.
    fn run_skipped_masked(
        &mut self,
        taken: ir::Value,
        pos: usize,
        target: usize,
        masked: &[bool],
    ) -> LResult {
        let every_lane = self.every_lane();
        let only = self.b.ins().bxor_imm_u(taken, every_lane);
        let body = self.func.body.as_deref().expect("defined");
        for (p, &masked) in (pos + 1..target).zip(masked) {
            let inst = &body[p];
            if masked {
                self.masked_lane_by_lane(inst, only)?;
            } else {
                self.group_instruction(inst, p)?;
            }
        }
        let blk = self.lanes.as_ref().expect("grouped").labels[&target];
        self.b.ins().jump(blk, &[]);
        Ok(())
    }

    /// The lanes where varying guard `g` holds, as a bit mask (lane k: bit k).
    pub(super) fn guard_lanes(&mut self, g: checked::Guard) -> ir::Value {
        let p = self.lanes.as_ref().expect("grouped").vectors[g.reg as usize].clone();
        let p: Vec<ir::Value> = p.into_iter().map(|p| self.b.use_var(p)).collect();
        let mask = self.lane_mask(&p);
        if g.negated {
            let every_lane = self.every_lane();
            self.b.ins().bxor_imm_u(mask, every_lane)
        } else {
            mask
        }
    }

    /// The lanes (bit k: lane k, of at most 64) where predicate vectors `p` (lanes 0/1,
    /// sixteen a vector) hold.
    pub(in crate::lower) fn lane_mask(&mut self, p: &[ir::Value]) -> ir::Value {
        // Negated, 0/-1, whose high bits make the mask.
        let mut mask = self.b.ins().iconst(types::I64, 0);
        for (c, &p) in p.iter().enumerate() {
            let set = self.b.ins().ineg(p);
            let bits = self.b.ins().vhigh_bits(types::I64, set);
            let bits = self.b.ins().ishl_imm_u(bits, 16 * c as i64);
            mask = self.b.ins().bor(mask, bits);
        }
        mask
    }

    /// The bit mask of every lane of the group.
    pub(super) fn every_lane(&self) -> i64 {
        (u64::MAX >> (64 - self.lanes.as_ref().expect("grouped").width)) as i64
    }

    /// Lowers `inst` once per lane with the one-thread lowering: the lane's values of the
    /// registers it reads or may write are taken out of their vectors, and the registers it
    /// writes put back.
    pub(super) fn lane_by_lane(&mut self, inst: &checked::Inst) -> LResult {
        self.each_lane(inst, false, None)
    }

    /// [`lane_by_lane`](Self::lane_by_lane) as a loop over the lanes: the instruction's code
    /// once instead of once a lane, for the cold paths (a vector access whose range failed its
    /// checks), where compile time matters and speed does not.
    pub(super) fn lane_by_lane_looped(&mut self, inst: &checked::Inst) -> LResult {
        self.each_lane(inst, true, None)
    }

    /// `inst` lane by lane, in a loop, in the lanes of mask `only` (an `i64`, lane k: bit
    /// k); the others keep their registers, as where a guard fails.
    fn masked_lane_by_lane(&mut self, inst: &checked::Inst, only: ir::Value) -> LResult {
        self.each_lane(inst, true, Some(only))
    }

    fn each_lane(
        &mut self,
        inst: &checked::Inst,
        looped: bool,
        only: Option<ir::Value>,
    ) -> LResult {
        let lanes = self.lanes.as_ref().expect("grouped");
        let varying = |regs: Vec<u32>| -> Vec<u32> {
            let mut regs: Vec<u32> = regs
                .into_iter()
                .filter(|&r| !lanes.uniform[r as usize])
                .collect();
            regs.sort_unstable();
            regs.dedup();
            regs
        };
        let written = varying(super::liveness::destinations(inst));
        let read = varying(super::liveness::sources(inst));
        let mut touched = read.clone();
        touched.extend(&written);
        let touched = varying(touched);
        // A register's old lanes matter where it is read, or kept by a guard that fails
        // (`liveness` treats an unguarded write as the end of the old value too).
        let needed: Vec<bool> = touched
            .iter()
            .map(|r| read.contains(r) || inst.guard.is_some() || only.is_some())
            .collect();
        let (first, tid, spill, width) = (lanes.first, lanes.tid, lanes.spill, lanes.width);
        // Through memory: every vector stored once, each lane's values loaded as scalars, its
        // results stored in place, the vectors loaded back. (Extracting and inserting lanes
        // instead keeps the vectors live across all the lanes' code, which made the register
        // allocator's work grow far faster than the code.)
        let region = |i: usize, k: usize, size: u32| (i * width * 8 + k * size as usize) as i32;
        for (i, &r) in touched.iter().enumerate().filter(|&(i, _)| needed[i]) {
            for (c, v) in self.lane_vectors(r).into_iter().enumerate() {
                self.b
                    .ins()
                    .stack_store(types::I64, v, spill, region(i, 0, 0) + 16 * c as i32);
            }
        }
        // A lane-affine register's scalar is lane 0's value outside this instruction.
        let lane_zero: Vec<(Variable, ir::Value)> = touched
            .iter()
            .filter(|&&r| self.lanes.as_ref().expect("grouped").strides[r as usize].is_some())
            .map(|&r| {
                let scalar = self.lanes.as_ref().expect("grouped").scalars[r as usize];
                (scalar, self.b.use_var(scalar))
            })
            .collect();
        let lane_type = |t: &Self, r: u32| t.func.regs[r as usize].ty.ir_type();
        // Lane k's code: its register values at region(i, k, size) of `spill`, where `k` is
        // a constant (unrolled) or the loop's counter.
        let lane = |t: &mut Self, k: Result<usize, ir::Value>| -> LResult {
            let base = t.b.ins().stack_addr(types::I64, spill, 0);
            let at = |t: &mut Self, i: usize, size: u32| match k {
                Ok(k) => (base, region(i, k, size)),
                Err(k) => {
                    let k = t.b.ins().uextend(types::I64, k);
                    let off = t.b.ins().imul_imm_s(k, size as i64);
                    (t.b.ins().iadd(base, off), region(i, 0, 0))
                }
            };
            let k_value = |t: &mut Self| match k {
                Ok(k) => t.b.ins().iconst(types::I32, k as i64),
                Err(k) => k,
            };
            for (i, &r) in touched.iter().enumerate().filter(|&(i, _)| needed[i]) {
                let ty = lane_type(t, r);
                let (p, off) = at(t, i, ty.bytes());
                let v = t.b.ins().load(ty, MemFlagsData::trusted(), p, off);
                let scalar = t.lanes.as_ref().expect("grouped").scalars[r as usize];
                t.b.def_var(scalar, v);
            }
            let x = t.b.use_var(first[0]);
            let k = k_value(t);
            let x = t.b.ins().iadd(x, k);
            t.b.def_var(tid[0], x);
            // (A lane outside `only` skips the instruction: its registers go back as read.)
            let skip = only.map(|only| {
                let k = t.b.ins().uextend(types::I64, k);
                let bit = t.b.ins().ushr(only, k);
                let bit = t.b.ins().band_imm_u(bit, 1);
                let (run, skip) = (t.b.create_block(), t.b.create_block());
                t.b.ins().brif(bit, run, &[], skip, &[]);
                t.b.seal_block(run);
                t.b.switch_to_block(run);
                skip
            });
            t.enter_scalars();
            let r = t.instruction(inst, &[]);
            t.enter_scalars();
            r?;
            if let Some(skip) = skip {
                t.b.ins().jump(skip, &[]);
                t.b.seal_block(skip);
                t.b.switch_to_block(skip);
            }
            for (i, &r) in touched.iter().enumerate() {
                if written.contains(&r) {
                    let scalar = t.lanes.as_ref().expect("grouped").scalars[r as usize];
                    let v = t.b.use_var(scalar);
                    let (p, off) = at(t, i, lane_type(t, r).bytes());
                    t.b.ins().store(MemFlagsData::trusted(), v, p, off);
                }
            }
            Ok(())
        };
        if looped {
            self.counted_loop(types::I32, width as i64, 1, |t, k| lane(t, Err(k)))?;
        } else {
            for k in 0..width {
                lane(self, Ok(k))?;
            }
        }
        for (i, &r) in touched.iter().enumerate() {
            if written.contains(&r) {
                let vt = vector_of(lane_type(self, r)).expect("eligible");
                let n = width / vt.lane_count() as usize;
                let v = (0..n)
                    .map(|c| {
                        let off = region(i, 0, 0) + 16 * c as i32;
                        self.b.ins().stack_load(types::I64, vt, spill, off)
                    })
                    .collect();
                self.write_vectors(r, v);
            }
        }
        for (scalar, v) in lane_zero {
            self.b.def_var(scalar, v);
        }
        Ok(())
    }

    /// `body` in a loop whose counter (a `ty` value, `body`'s argument) goes from 0 by `step`
    /// while below `end`.
    pub(in crate::lower) fn counted_loop(
        &mut self,
        ty: Type,
        end: i64,
        step: i64,
        body: impl FnOnce(&mut Self, ir::Value) -> LResult,
    ) -> LResult {
        let head = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(head, ty);
        let zero = self.b.ins().iconst(ty, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let k = self.b.block_params(head)[0];
        body(self, k)?;
        let next = self.b.ins().iadd_imm_s(k, step);
        let more = self
            .b
            .ins()
            .icmp_imm_u(ir::condcodes::IntCC::UnsignedLessThan, next, end);
        self.b.ins().brif(more, head, &[next.into()], done, &[]);
        self.b.seal_block(head);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// After `inst` wrote a lane-affine register's vectors: lane 0's value in its scalar
    /// (the one-thread lowering, for lane 0), and for a 64-bit one whether its lanes stay in
    /// range (those of its sources, and no widening that crosses the 32-bit range's end).
    fn affine_lane_zero(&mut self, inst: &checked::Inst) -> LResult {
        let lanes = self.lanes.as_ref().expect("grouped");
        let defs = super::liveness::destinations(inst);
        let [d] = defs[..] else { return Ok(()) };
        if lanes.strides[d as usize].is_none() {
            return Ok(());
        }
        let (first, tid) = (lanes.first[0], lanes.tid[0]);
        let x = self.b.use_var(first);
        self.b.def_var(tid, x);
        self.enter_scalars();
        let r = self.instruction(inst, &[]);
        self.enter_scalars();
        r?;
        let lanes = self.lanes.as_ref().expect("grouped");
        let width = lanes.width;
        let Some(flag) = lanes.in_range[d as usize] else {
            return Ok(());
        };
        let flags: Vec<Variable> = super::liveness::sources(inst)
            .iter()
            .filter_map(|&s| lanes.in_range[s as usize])
            .collect();
        let widened = super::affine::widening(inst, &lanes.strides)
            .and_then(|w| Some((lanes.scalars[w.register? as usize], w.stride, w.signed)));
        let mut ok = self.b.ins().iconst(types::I8, 1);
        for f in flags {
            let f = self.b.use_var(f);
            ok = self.b.ins().band(ok, f);
        }
        if let Some((scalar, stride, signed)) = widened {
            use ir::condcodes::IntCC;
            let x = self.b.use_var(scalar);
            let x = if signed {
                self.b.ins().sextend(types::I64, x)
            } else {
                self.b.ins().uextend(types::I64, x)
            };
            let last = self.b.ins().iadd_imm_s(x, stride * (width as i64 - 1));
            let (lo, hi) = if signed {
                (i32::MIN as i64, i32::MAX as i64)
            } else {
                (0, u32::MAX as i64)
            };
            let above = self
                .b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, last, lo);
            let below = self
                .b
                .ins()
                .icmp_imm_s(IntCC::SignedLessThanOrEqual, last, hi);
            let fits = self.b.ins().band(above, below);
            ok = self.b.ins().band(ok, fits);
        }
        self.b.def_var(flag, ok);
        Ok(())
    }

    /// `each` (one-thread code that reads `inst`'s source registers) once for every lane,
    /// with the lane's values of those registers and its thread id in the one-thread code's
    /// variables; the group's values are kept.
    pub(in crate::lower) fn each_lane_value<T>(
        &mut self,
        inst: &checked::Inst,
        mut each: impl FnMut(&mut Self, usize) -> LResult<T>,
    ) -> LResult<Vec<T>> {
        let mut sources = super::liveness::sources(inst);
        sources.sort_unstable();
        sources.dedup();
        let lanes = self.lanes.as_ref().expect("grouped");
        let (width, first, tid) = (lanes.width, lanes.first[0], lanes.tid[0]);
        let lane_zero: Vec<(Variable, ir::Value)> = sources
            .iter()
            .map(|&r| {
                let scalar = self.lanes.as_ref().expect("grouped").scalars[r as usize];
                (scalar, self.b.use_var(scalar))
            })
            .collect();
        // (Each lane's values first: a lane-affine register's lanes are made from its scalar.)
        let values: Vec<Vec<ir::Value>> = (0..width)
            .map(|lane| sources.iter().map(|&r| self.lane_value(r, lane)).collect())
            .collect();
        let mut results = Vec::with_capacity(width);
        for (lane, values) in values.into_iter().enumerate() {
            for (&(scalar, _), v) in lane_zero.iter().zip(values) {
                self.b.def_var(scalar, v);
            }
            let x = self.b.use_var(first);
            let x = self.b.ins().iadd_imm_s(x, lane as i64);
            self.b.def_var(tid, x);
            self.enter_scalars();
            let r = each(self, lane);
            self.enter_scalars();
            results.push(r?);
        }
        for (scalar, v) in lane_zero {
            self.b.def_var(scalar, v);
        }
        let x = self.b.use_var(first);
        self.b.def_var(tid, x);
        Ok(results)
    }

    /// How the group holds each of `regs`, for [`held_lane`](Self::held_lane): kept once
    /// (lane 0's value and the stride), in its home, or, for a register with vectors, its
    /// lanes stored in the area ([`lanes_area`](Self::lanes_area)) at the register's place
    /// in `regs`.
    fn hold_lanes(&mut self, regs: &[u32]) -> Vec<Held> {
        let width = self.lanes.as_ref().expect("grouped").width as i32;
        let area = self.lanes_area(regs.len());
        let base = self.b.ins().stack_addr(types::I64, area, 0);
        regs.iter()
            .enumerate()
            .map(|(j, &r)| {
                let lanes = self.lanes.as_ref().expect("grouped");
                let scalar = lanes.scalars[r as usize];
                match (lanes.kept_once(r), lanes.homes[r as usize]) {
                    (Some(stride), _) => Held::Once(self.b.use_var(scalar), stride),
                    (None, Some(_)) => Held::Area(self.home_addr(r), 0),
                    _ => {
                        let at = j as i32 * width * 8;
                        for (c, v) in self.lane_vectors(r).into_iter().enumerate() {
                            let flags = MemFlagsData::trusted();
                            self.b.ins().store(flags, v, base, at + 16 * c as i32);
                        }
                        Held::Area(base, at)
                    }
                }
            })
            .collect()
    }

    /// Register `r`'s value in `lane` (an `i64`), held as `h` ([`hold_lanes`](Self::hold_lanes)).
    fn held_lane(&mut self, r: u32, h: Held, lane: ir::Value) -> ir::Value {
        let ty = self.func.regs[r as usize].ty.ir_type();
        match h {
            Held::Once(x, 0) => x,
            Held::Once(x, stride) => {
                let lane = self.coerce(lane, ty, false);
                let step = self.b.ins().imul_imm_s(lane, stride);
                self.b.ins().iadd(x, step)
            }
            Held::Area(base, at) => {
                let off = self.b.ins().imul_imm_s(lane, ty.bytes() as i64);
                let p = self.b.ins().iadd(base, off);
                self.b.ins().load(ty, MemFlagsData::trusted(), p, at)
            }
        }
    }

    /// The stack area where registers' lanes pass between vectors and a loop over the
    /// lanes, with room for `regs` registers (eight bytes a lane each): one slot, grown to
    /// the most any use asks.
    fn lanes_area(&mut self, regs: usize) -> StackSlot {
        let lanes = self.lanes.as_ref().expect("grouped");
        let bytes = (regs.max(1) * lanes.width * 8) as u32;
        let area = match lanes.held_area {
            Some(area) => area,
            None => {
                let area = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    bytes,
                    4,
                ));
                self.lanes.as_mut().expect("grouped").held_area = Some(area);
                area
            }
        };
        let slot = &mut self.b.func.sized_stack_slots[area];
        slot.size = slot.size.max(bytes);
        area
    }

    /// Lane `k`'s value of register `r`.
    fn lane_value(&mut self, r: u32, k: usize) -> ir::Value {
        let lanes = self.lanes.as_ref().expect("grouped");
        if lanes.uniform[r as usize] {
            return self.b.use_var(lanes.scalars[r as usize]);
        }
        if lanes.derived[r as usize] {
            let stride = lanes.strides[r as usize].expect("lane-affine");
            let x = self.b.use_var(lanes.scalars[r as usize]);
            return self.b.ins().iadd_imm_s(x, stride * k as i64);
        }
        if lanes.homes[r as usize].is_some() {
            let ty = self.func.regs[r as usize].ty.ir_type();
            let off = (k as u32 * ty.bytes()) as i32;
            let at = self.home_addr(r);
            return self.b.ins().load(ty, MemFlagsData::trusted(), at, off);
        }
        let vectors = &lanes.vectors[r as usize];
        let per = lanes.width / vectors.len();
        let v = self.b.use_var(vectors[k / per]);
        self.b.ins().extractlane(v, (k % per) as u8)
    }

    /// The stack slot register `r` lives in, if it is kept in memory ([`homes`]), at
    /// [`helper_addr`](Self::helper_addr).
    pub(super) fn home(&self, r: u32) -> Option<StackSlot> {
        self.lanes.as_ref().expect("grouped").homes[r as usize]
    }

    /// Where group helpers' data in `slot` (a home, or the spill area) starts: its first
    /// [`HELPER_ALIGN`]-byte boundary.
    pub(super) fn helper_addr(&mut self, slot: StackSlot) -> ir::Value {
        let at = self.b.ins().stack_addr(types::I64, slot, 0);
        let at = self.b.ins().iadd_imm_s(at, HELPER_ALIGN as i64 - 16);
        self.b.ins().band_imm_s(at, -(HELPER_ALIGN as i64))
    }

    /// `v` (register `r`'s vectors, lanes 0.. first) as `r`'s value: in its variables, or
    /// stored where it lives.
    pub(super) fn write_vectors(&mut self, r: u32, v: Vec<ir::Value>) {
        if self.home(r).is_some() {
            return self.home_write(r, v);
        }
        let vars = self.lanes.as_ref().expect("grouped").vectors[r as usize].clone();
        // (A derived register's instructions never get here: `group_instruction`.)
        assert_eq!(vars.len(), v.len(), "a register with vectors of its own");
        for (var, v) in vars.into_iter().zip(v) {
            self.b.def_var(var, v);
        }
    }

    fn home_write(&mut self, r: u32, v: Vec<ir::Value>) {
        let home = self.home(r).expect("kept in memory");
        let at = self.helper_addr(home);
        for (c, v) in v.into_iter().enumerate() {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, at, 16 * c as i32);
        }
    }

    /// Register `r`'s vectors over the lanes (not uniform): its variables' values, loaded
    /// from its home ([`homes`]), or for a [derived](Lanes::derived) register, lane 0's
    /// value + k × stride.
    pub(super) fn lane_vectors(&mut self, r: u32) -> Vec<ir::Value> {
        let lanes = self.lanes.as_ref().expect("grouped");
        if lanes.homes[r as usize].is_some() {
            let vt = vector_of(self.func.regs[r as usize].ty.ir_type()).expect("eligible");
            let n = lanes.width / vt.lane_count() as usize;
            let at = self.home_addr(r);
            return (0..n)
                .map(|c| {
                    self.b
                        .ins()
                        .load(vt, MemFlagsData::trusted(), at, 16 * c as i32)
                })
                .collect();
        }
        if !lanes.derived[r as usize] {
            let vars = lanes.vectors[r as usize].clone();
            return vars.into_iter().map(|v| self.b.use_var(v)).collect();
        }
        let (stride, width) = (lanes.strides[r as usize].expect("lane-affine"), lanes.width);
        let x = self.b.use_var(lanes.scalars[r as usize]);
        let steps = [0, 1, 2, 3].map(|k| (stride * k) as u32 as u64);
        let steps = self.v_const(types::I32X4, &steps);
        (0..width / 4)
            .map(|c| {
                let base = self.b.ins().iadd_imm_s(x, stride * 4 * c as i64);
                let base = self.b.ins().splat(types::I32X4, base);
                self.b.ins().iadd(base, steps)
            })
            .collect()
    }

    /// Whether the instruction computes a group-wide value (no side effects): lowered once.
    fn is_uniform(&self, inst: &checked::Inst) -> bool {
        group_wide(inst, &self.lanes.as_ref().expect("grouped").uniform)
    }

    /// Whether the instruction writes the same value in every lane to registers that vary
    /// elsewhere (`ld.param.u64 %rd1, [p]` before `add.s64 %rd1, %rd1, %rd2`): lowered once
    /// and repeated, not once a lane. Unguarded (a guard that fails keeps each lane's old
    /// value), into registers with vectors of their own (not lane-affine: their scalar is
    /// lane 0's value, kept by `affine_lane_zero`).
    fn is_lane_invariant(&self, inst: &checked::Inst) -> bool {
        let lanes = self.lanes.as_ref().expect("grouped");
        lane_invariant(inst, &lanes.uniform)
            && super::liveness::destinations(inst)
                .iter()
                .all(|&d| lanes.strides[d as usize].is_none())
    }

    /// Swaps the group code's scalar registers and thread id with the one-thread code's, so
    /// that the one-thread lowering reads and writes them (call again to undo).
    pub(super) fn enter_scalars(&mut self) {
        let lanes = self.lanes.as_mut().expect("grouped");
        std::mem::swap(&mut self.regs, &mut lanes.scalars);
        std::mem::swap(&mut self.tid, &mut lanes.tid);
    }

    /// Runs the lanes of divergence site `site` (its resume block `blk`) from lane 0.
    fn enter_site(&mut self, site: usize, blk: Block) {
        let area = self.lanes.as_ref().expect("grouped").area;
        let site = self.b.ins().iconst(types::I32, site as i64);
        self.b.ins().stack_store(types::I64, site, area, RESUME);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.ins().stack_store(types::I64, zero, area, LANE);
        self.b.ins().jump(blk, &[]);
    }

    /// In a site's resume block `blk`: the lane to run next (counted as run), the builder
    /// in the block that runs it; after the last lane, the next group.
    fn next_lane(&mut self, blk: Block) -> ir::Value {
        let lanes = self.lanes.as_ref().expect("grouped");
        let (area, width, next_group) = (lanes.area, lanes.width, lanes.next_group);
        self.b.switch_to_block(blk);
        let k = self.b.ins().stack_load(types::I64, types::I32, area, LANE);
        let all_done = self
            .b
            .ins()
            .icmp_imm_u(ir::condcodes::IntCC::Equal, k, width as i64);
        let done = self.b.create_block();
        let run = self.b.create_block();
        self.b.ins().brif(all_done, done, &[], run, &[]);
        self.b.switch_to_block(done);
        let none = self.b.ins().iconst(types::I32, -1);
        self.b.ins().stack_store(types::I64, none, area, RESUME);
        self.b.ins().jump(next_group, &[]);
        self.b.switch_to_block(run);
        let next = self.b.ins().iadd_imm_s(k, 1);
        self.b.ins().stack_store(types::I64, next, area, LANE);
        k
    }

    /// The one-thread code's thread id set to the group's lane `k`; in a cooperative kernel,
    /// that thread's frame.
    fn enter_lane(&mut self, k: ir::Value) -> Option<ir::Value> {
        self.set_lane_tid(k);
        self.coop.is_some().then(|| {
            let linear = self.linear_tid();
            self.thread_frame(linear)
        })
    }

    /// The one-thread code's thread id: the group's lane `k`.
    fn set_lane_tid(&mut self, k: ir::Value) {
        let area = self.lanes.as_ref().expect("grouped").area;
        for d in 0..3 {
            let v = self
                .b
                .ins()
                .stack_load(types::I64, types::I32, area, BASE + 4 * d);
            let v = if d == 0 { self.b.ins().iadd(v, k) } else { v };
            self.b.def_var(self.tid[d as usize], v);
        }
    }

    /// The group disagrees at a branch: spill the lanes, then run them one by one from
    /// `taken` (a position; `None` = the lane is finished) or `fallthrough`.
    pub(in crate::lower) fn diverge(
        &mut self,
        mask: ir::Value,
        taken: Option<usize>,
        fallthrough: usize,
    ) -> LResult {
        let lanes = self.lanes.as_ref().expect("grouped");
        let (area, frame_bytes, width) = (lanes.area, lanes.frame_bytes, lanes.width);
        let mut live: Vec<u32> = lanes.live.at(fallthrough).to_vec();
        if let Some(t) = taken {
            live.extend_from_slice(lanes.live.at(t));
        }
        live.sort_unstable();
        live.dedup();
        let slots = lanes.slots.clone();
        let scalar_taken = taken.map(|t| lanes.scalar[&t]);
        let scalar_fall = lanes.scalar[&fallthrough];
        let site = lanes.resume_blocks.len();
        self.b.ins().stack_store(types::I64, mask, area, MASK);
        // (A loop over the lanes: code proportional to the live registers.)
        let held = self.hold_lanes(&live);
        let frames = self.b.ins().stack_addr(types::I64, area, FRAMES);
        self.counted_loop(types::I64, width as i64, 1, |t, k| {
            let offset = t.b.ins().imul_imm_s(k, frame_bytes as i64);
            let frame = t.b.ins().iadd(frames, offset);
            for (&r, &h) in live.iter().zip(&held) {
                let v = t.held_lane(r, h, k);
                let flags = MemFlagsData::trusted();
                t.b.ins().store(flags, v, frame, slots[r as usize]);
            }
            Ok(())
        })?;
        // One resume block per site, a loop over the lanes (the lane to run next is in the
        // area): code proportional to the live registers, not to them times the lanes.
        let resume = self.b.create_block();
        self.lanes
            .as_mut()
            .expect("grouped")
            .resume_blocks
            .push(resume);
        self.enter_site(site, resume);
        let k = self.next_lane(resume);
        let mask = self.b.ins().stack_load(types::I64, types::I64, area, MASK);
        let bit = self.b.ins().ushr(mask, k);
        let bit = self.b.ins().band_imm_u(bit, 1);
        if scalar_taken.is_none() {
            // Lanes that took a `ret`/`exit` are finished (so their frames say, in a
            // cooperative kernel).
            let (go, exited) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(bit, exited, &[], go, &[]);
            self.b.switch_to_block(exited);
            if self.coop.is_some() {
                let frame = self.enter_lane(k).expect("cooperative");
                let done = self
                    .b
                    .ins()
                    .iconst(types::I32, crate::sync::frame::DONE as i64);
                let flags = MemFlagsData::trusted();
                self.b
                    .ins()
                    .store(flags, done, frame, crate::sync::frame::RESUME);
            }
            self.b.ins().jump(resume, &[]);
            self.b.switch_to_block(go);
        }
        let k64 = self.b.ins().uextend(types::I64, k);
        let offset = self.b.ins().imul_imm_u(k64, frame_bytes as i64);
        let frames = self.b.ins().stack_addr(types::I64, area, FRAMES);
        let frame = self.b.ins().iadd(frames, offset);
        for &r in &live {
            let ty = self.func.regs[r as usize].ty.ir_type();
            let v = self
                .b
                .ins()
                .load(ty, MemFlagsData::trusted(), frame, slots[r as usize]);
            self.b.def_var(self.regs[r as usize], v);
        }
        if let Some(frame) = self.enter_lane(k) {
            let frame_var = self.coop.as_ref().expect("cooperative").frame;
            self.b.def_var(frame_var, frame);
        }
        match scalar_taken {
            Some(t) => {
                self.b.ins().brif(bit, t, &[], scalar_fall, &[]);
            }
            None => {
                self.b.ins().jump(scalar_fall, &[]);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    fn width_of(body: &str) -> usize {
        width_for(body, None)
    }

    /// [`super::width`] of a kernel of `body`, for launches of `block_x` threads in x.
    fn width_for(body: &str, block_x: Option<u32>) -> usize {
        wide_width_for(body, block_x, false)
    }

    /// [`width_for`], the form asked to be as wide as the kernel allows where `wide`.
    fn wide_width_for(body: &str, block_x: Option<u32>, wide: bool) -> usize {
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
             .reg .pred %p;\nmov.u32 %r1, %tid.x;\n{body}\nret;\n}}\n"
        );
        let m = crate::kernel::check_ptx("t.ptx", &text).expect("valid");
        super::width(&m.functions[0], block_x, wide)
    }

    /// Which of `%r1`..`%r3` ([`super::homes`]) are kept in memory, with every group helper.
    fn homes_of(body: &str) -> Vec<bool> {
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .pred %p;\n\
             mov.u32 %r1, %tid.x;\nmov.u32 %r2, %r1;\n{body}\nret;\n}}\n"
        );
        let m = crate::kernel::check_ptx("t.ptx", &text).expect("valid");
        let f = &m.functions[0];
        let uniform = super::uniform_registers(f);
        let strides = vec![None; f.regs.len()];
        let homes = super::homes(f, &uniform, &strides, true, &super::loop_positions(f));
        (1..4)
            .map(|i| {
                homes[f
                    .regs
                    .iter()
                    .position(|r| r.name == format!("%r{i}"))
                    .unwrap()]
            })
            .collect()
    }

    #[test]
    fn a_register_that_helpers_use_in_a_loop_is_kept_in_memory() {
        if !crate::native::available() {
            return;
        }
        let chain = "LOOP:\nfma.rn.f16x2 %r2, %r2, %r2, %r2;\nsetp.lt.u32 %p, %r1, 9;\n@%p bra LOOP;\n\
                     add.u32 %r3, %r2, 1;";
        assert_eq!(homes_of(chain), [false, true, false]);
    }

    #[test]
    fn a_register_that_other_instructions_use_more_keeps_its_vectors() {
        let body = "fma.rn.f16x2 %r2, %r2, %r2, %r2;\nadd.u32 %r3, %r2, 1;\nadd.u32 %r3, %r2, %r3;";
        assert_eq!(homes_of(body), [false, false, false]);
    }

    #[test]
    fn an_unguarded_write_of_uniform_operands_to_a_varying_register_is_lowered_once() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .pred %q;\n\
             mov.u64 %rd2, %tid.x;\nsetp.eq.u64 %q, %rd2, 3;\n\
             ld.param.u64 %rd1, [p];\nadd.s64 %rd1, %rd1, %rd2;\n@%q ld.param.u64 %rd1, [p];\n\
             ld.param.u64 %rd2, [p];\nret;\n}\n";
        let m = crate::kernel::check_ptx("t.ptx", text).expect("valid");
        let f = &m.functions[0];
        let uniform = super::uniform_registers(f);
        let invariant: Vec<bool> = f
            .body
            .iter()
            .flatten()
            .map(|i| super::lane_invariant(i, &uniform))
            .collect();
        // The first `ld.param` is; the per-lane `add`, the guarded load (other lanes keep
        // their values) and the `mov` of `%tid.x` are not; nor is anything without a
        // destination.
        assert_eq!(
            invariant,
            [false, false, true, false, false, true, false],
            "{uniform:?}"
        );
    }

    #[test]
    fn a_kernel_of_vector_forms_runs_32_lanes_a_group() {
        assert_eq!(width_of(&"add.u32 %r2, %r1, 1;\n".repeat(40)), 32);
    }

    #[test]
    fn a_kernel_of_vector_forms_runs_64_lanes_a_group_for_blocks_a_multiple_of_64() {
        let body = "add.u32 %r2, %r1, 1;\n".repeat(40);
        assert_eq!(width_for(&body, Some(256)), 64);
        assert_eq!(width_for(&body, Some(64)), 64);
        assert_eq!(width_for(&body, Some(96)), 32);
        assert_eq!(width_for(&body, Some(32)), 32);
        // Many lane-by-lane instructions keep 16, whatever the launch.
        let many = "cvt.sat.u64.s32 %rd2, %r1;\n".repeat(super::FEW_LANE_BY_LANE + 1);
        assert_eq!(width_for(&many, Some(256)), 16);
    }

    #[test]
    fn a_kernel_whose_loop_calls_a_group_helper_and_never_diverges_may_run_256_lanes() {
        // A loop on a uniform counter: the lanes always agree.
        let chain = "mov.u32 %r3, 0;\nLOOP:\nfma.rn.f16x2 %r2, %r2, %r2, %r2;\n\
                     add.u32 %r3, %r3, 1;\nsetp.lt.u32 %p, %r3, 9;\n@%p bra LOOP;";
        assert_eq!(wide_width_for(chain, Some(256), true), 256);
        assert_eq!(wide_width_for(chain, Some(768), true), 256);
        // The widest that divides the blocks.
        assert_eq!(wide_width_for(chain, Some(128), true), 128);
        assert_eq!(wide_width_for(chain, Some(384), true), 128);
        // Or that the registers fit: 300 of 256 lanes would pass `MAX_REGISTERS`.
        let movs: String = (0..300).map(|i| format!("mov.u32 %q{i}, %r1;\n")).collect();
        let many = format!(".reg .b32 %q<300>;\n{movs}{chain}");
        assert_eq!(wide_width_for(&many, Some(256), true), 128);
        // Or that gains: more helper calls a loop overlap one another at 128 lanes.
        let fma = "fma.rn.f16x2 %r2, %r2, %r2, %r2;\n";
        let calls = |n: usize| chain.replace(fma, &fma.repeat(n));
        assert_eq!(
            wide_width_for(&calls(super::FEW_HELPER_CALLS), Some(256), true),
            256
        );
        assert_eq!(
            wide_width_for(&calls(super::FEW_HELPER_CALLS + 1), Some(256), true),
            128
        );
        // Not asked, or blocks not a multiple of 128: 64.
        assert_eq!(wide_width_for(chain, Some(256), false), 64);
        assert_eq!(wide_width_for(chain, Some(192), true), 64);
        // A branch on a varying value may diverge (a mask holds 64 lanes).
        let varying = chain.replace("%p, %r3, 9", "%p, %r1, 9");
        assert_eq!(wide_width_for(&varying, Some(256), true), 64);
        // A loop without a group helper gains nothing.
        let plain = chain.replace("fma.rn.f16x2 %r2, %r2, %r2, %r2", "add.u32 %r2, %r2, 1");
        assert_eq!(wide_width_for(&plain, Some(256), true), 64);
        // Nor does a group helper outside a loop.
        let once = "fma.rn.f16x2 %r2, %r2, %r2, %r2;";
        assert_eq!(wide_width_for(once, Some(256), true), 64);
    }

    #[test]
    fn a_kernel_with_warp_collectives_runs_a_warp_a_group() {
        let shfl = "shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n";
        assert_eq!(width_for(shfl, Some(256)), 32);
        // However many instructions run lane by lane.
        let many = "cvt.sat.u64.s32 %rd2, %r1;\n".repeat(super::FEW_LANE_BY_LANE + 1);
        assert_eq!(width_for(&format!("{many}{shfl}"), Some(256)), 32);
        // Blocks of 16 hold no warp.
        assert_eq!(width_for(shfl, Some(48)), 16);
    }

    #[test]
    fn a_register_only_ever_given_one_immediate_is_a_constant() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<6>;\n.reg .pred %q;\n\
             mov.u32 %r1, -1;\nmov.u32 %r1, -1;\n\
             mov.u32 %r2, 1;\nmov.u32 %r2, 2;\n\
             mov.u32 %r3, %r1;\n\
             setp.eq.u32 %q, %r3, 0;\n@%q mov.u32 %r4, 7;\n\
             mov.u32 %r5, 7;\nadd.u32 %r5, %r5, 1;\nret;\n}\n";
        let m = crate::kernel::check_ptx("t.ptx", text).expect("valid");
        let f = &m.functions[0];
        let constants = super::constant_registers(f);
        let of = |name: &str| constants[f.regs.iter().position(|r| r.name == name).unwrap()];
        assert_eq!(of("%r1"), Some(u64::MAX), "the same immediate twice");
        assert_eq!(of("%r2"), None, "two immediates");
        assert_eq!(of("%r3"), None, "a register's value");
        assert_eq!(of("%r4"), None, "a guarded move");
        assert_eq!(of("%r5"), None, "written by another instruction too");
    }

    #[test]
    fn a_kernel_of_many_lane_by_lane_instructions_runs_16_lanes_a_group() {
        let few = "cvt.sat.u64.s32 %rd2, %r1;\n".repeat(super::FEW_LANE_BY_LANE);
        assert_eq!(width_of(&few), 32);
        assert_eq!(width_of(&format!("{few}cvt.sat.u64.s32 %rd2, %r1;")), 16);
        // Uniform instructions are lowered once for the group, whatever their form.
        let uniform = "cvt.sat.u64.s32 %rd2, %r3;\n".repeat(20);
        assert_eq!(width_of(&format!("mov.u32 %r3, %ntid.x;\n{uniform}")), 32);
    }
}
