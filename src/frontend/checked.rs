//! The checked module: names resolved to ids, instructions decoded into families with their
//! modifiers normalized (one struct per family, so one lowering function serves every form).

use super::ast::{FunctionKind, Immediate, StateSpace};
use crate::error::{Source, Span};
use crate::semantics::minifloat::Mini;
use crate::types::PtxType;
use std::sync::Arc;

pub type RegId = u32;
pub type FuncId = usize;
pub type LabelId = usize;

/// A function's address, as `mov.u64 %rd, f` and an initializer `{f}` give it: an opaque
/// value (the ISA gives it no meaning beyond `call` through it), here `FUNCTION_ADDRESS + id`,
/// far outside every address space, so a load or store through it is an illegal address.
pub const FUNCTION_ADDRESS: u64 = 0xFFFF_F000_0000_0000;

#[derive(Debug)]
pub struct Module {
    pub source: Arc<Source>,
    pub functions: Vec<Function>,
    /// Module-scope `.global`, `.const` and `.shared` variables.
    pub globals: Vec<Var>,
}

impl Module {
    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry && f.body.is_some())
    }
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub span: Span,
    /// Parameters, each at its byte offset in the parameter buffer.
    pub params: Vec<Param>,
    pub params_size: u32,
    /// `.func` return values.
    pub returns: Vec<Param>,
    pub regs: Vec<Reg>,
    /// Variables declared in the body (`.local` depots, `.param` call slots, `.shared`).
    pub vars: Vec<Var>,
    /// `None` when only declared.
    pub body: Option<Vec<Inst>>,
    /// For each label, the index in `body` of the instruction it stands before.
    pub labels: Vec<usize>,
    pub label_names: Vec<String>,
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// `.maxnreg`: the registers a thread may use (reported as the kernel's count, if fewer).
    pub maxnreg: Option<u32>,
    pub cluster: crate::frontend::ast::ClusterDirectives,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub span: Span,
    pub ty: PtxType,
    pub size: u32,
    pub align: u32,
    pub offset: u32,
    /// `.b8 name[K]`: a by-value aggregate of K elements.
    pub array: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Reg {
    pub name: String,
    pub ty: PtxType,
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub span: Span,
    pub space: StateSpace,
    pub size: u64,
    /// Bytes of one element of its declared type (`name[i]` is `i` elements in).
    pub elem_size: u32,
    pub align: u32,
    pub is_extern: bool,
    /// Initial bytes (little-endian) of the variable's start, the rest being zero.
    pub init: Option<Vec<u8>>,
    /// Where `init` holds other variables' addresses, filled in when they are placed.
    pub init_addresses: Vec<InitAddress>,
}

/// A 64-bit initializer element that is the address of module variable `target` plus `offset`.
#[derive(Clone, Debug)]
pub struct InitAddress {
    /// Byte offset in the variable.
    pub at: u64,
    pub target: usize,
    pub offset: i64,
}

#[derive(Clone, Debug)]
pub struct Inst {
    pub guard: Option<Guard>,
    pub op: Op,
    pub args: Vec<Arg>,
    pub span: Span,
    /// The opcode as written (for messages).
    pub opcode: String,
}

#[derive(Clone, Copy, Debug)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    X,
    Y,
    Z,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    /// %lanemask_eq/le/lt/ge/gt
    LaneMask(CmpOp),
    SmId,
    NSmId,
    GridId,
    Clock,
    Clock64,
    GlobalTimer,
    DynamicSmemSize,
    /// `%total_smem_size` and `%aggr_smem_size` (no shared memory is reserved here, so the
    /// two are equal): the block's static and dynamic shared bytes.
    TotalSmemSize,
    /// The block's place in its cluster (`ptxjit_runtime::ClusterPlace`).
    ClusterId(Dim),
    NClusterId(Dim),
    ClusterCtaId(Dim),
    ClusterNCtaId(Dim),
    ClusterCtaRank,
    ClusterNCtaRank,
    IsExplicitCluster,
    /// `%envreg0..31` (0).
    Constant(u32),
}

/// Where a variable lives, for address-of and `[name]` addressing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// Index into `Module::globals`.
    Global(usize),
    /// Index into the function's `vars`.
    Local(usize),
    /// Index into the function's `params`.
    Param(usize),
    /// Index into the function's `returns`.
    Return(usize),
}

#[derive(Clone, Debug)]
pub enum Arg {
    Reg(RegId),
    Imm(Immediate),
    Special(Special),
    /// A memory operand `[base+offset]`.
    Addr {
        base: AddrBase,
        offset: i64,
    },
    /// The address of a variable (`mov.u64 %rd1, smem;`).
    SymbolAddr(Symbol, i64),
    Vector(Vec<Arg>),
    /// `(a, b)` in a call.
    List(Vec<Arg>),
    /// `p|q` destinations.
    Pair(Box<Arg>, Box<Arg>),
    /// `!p` source.
    Not(RegId),
    Label(LabelId),
    Func(FuncId),
    /// The functions an indirect `call` may reach (its `.callprototype` or `.calltargets`).
    Callees(Vec<FuncId>),
    Sink,
}

impl Arg {
    /// A destination written `d|p` as (`d`, `Some(p)`); any other as (itself, `None`).
    pub fn split_pair(&self) -> (&Arg, Option<&Arg>) {
        match self {
            Arg::Pair(d, p) => (d, Some(p)),
            other => (other, None),
        }
    }

    /// The elements of a vector operand `{a, b, ...}`; any other as its one element.
    pub fn elements(&self) -> &[Arg] {
        match self {
            Arg::Vector(items) => items,
            other => std::slice::from_ref(other),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrBase {
    Reg(RegId),
    Symbol(Symbol),
    Absolute,
}

// ---- instruction families -----------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// to nearest even
    Rn,
    /// toward zero
    Rz,
    /// toward −∞
    Rm,
    /// toward +∞
    Rp,
    /// to nearest, ties away from zero (`.rna`, cvt to tf32 only)
    Rna,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MulMode {
    Lo,
    Hi,
    Wide,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add {
        sat: bool,
    },
    Sub {
        sat: bool,
    },
    Mul(MulMode),
    Mad(MulMode),
    Div,
    Rem,
    Min,
    Max,
    Abs,
    Neg,
    And,
    Or,
    Xor,
    Not,
    CNot,
    Shl,
    Shr,
    Popc,
    Clz,
    Brev,
    /// Funnel shift `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c` (`b:a` shifted by `c`).
    Shf {
        left: bool,
        clamp: bool,
    },
    /// `bfe d, a, pos, len`: bit-field extract (sign-filled for signed types).
    Bfe,
    /// `bfi d, f, b, pos, len`: insert the low `len` bits of `f` into `b` at `pos`.
    Bfi,
    /// `prmt.b32 d, a, b, c` (default mode): pick bytes of `b:a` by the nibbles of `c`.
    Prmt,
    /// `prmt.b32.mode d, a, b, c`: the bytes the mode's table gives for `c & 3`.
    PrmtMode(PrmtMode),
    /// Extended precision (`add.cc`, `addc{.cc}`, `sub.cc`, `subc{.cc}`, `mad{.lo,.hi}.cc`,
    /// `madc{.lo,.hi}{.cc}`): the carry flag CC.CF is the instruction's last argument, a
    /// register the checker adds (see [`Op::carry`]).
    AddCarry(Carry),
    SubCarry(Carry),
    MadCarry {
        hi: bool,
        carry: Carry,
    },
    /// `mul24.{lo,hi}` and `mad24.{lo,hi}`: the 48-bit product of 24-bit operands.
    Mul24 {
        hi: bool,
    },
    Mad24 {
        hi: bool,
    },
    /// `sad d, a, b, c`: `c + |a - b|`.
    Sad,
    /// `bfind{.shiftamt}`: the most significant non-sign bit (0xffffffff if none).
    Bfind {
        shiftamt: bool,
    },
    /// `bmsk.{clamp,wrap}.b32 d, a, b`: `b` ones from bit `a`.
    Bmsk {
        clamp: bool,
    },
    /// `dp4a.atype.btype` / `dp2a.{lo,hi}.atype.btype`: `c` plus the dot product of bytes
    /// (dp4a) or of halves of `a` and bytes of `b` (dp2a).
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    Dp2a {
        hi: bool,
        a_signed: bool,
        b_signed: bool,
    },
    /// `fns.b32 d, mask, base, offset`: the position of the `offset`-th set bit of `mask`
    /// counting up (offset > 0) or down (< 0) from `base`; 0xffffffff when there is none.
    Fns,
    /// `min.relu.s32`/`max.relu.s32`: the minimum or maximum, 0 if negative.
    Relu {
        max: bool,
    },
    /// `add sub min max` on `.u16x2`/`.s16x2` (`.relu` on the signed `min`/`max`): each half of
    /// the words on its own.
    Halves {
        op: HalvesOp,
        signed: bool,
        relu: bool,
    },
    /// `lop3{.BoolOp}.b32 d{|p}, a, b, c, immLut{, q}`: the function of `a`, `b`, `c` whose
    /// truth table is `immLut`; with `.BoolOp`, `p = (d != 0) BoolOp q`.
    Lop3 {
        bool_op: Option<BoolOp>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalvesOp {
    Add,
    Sub,
    Min,
    Max,
}

/// The carry flag an extended-precision instruction reads (`addc`) and writes (`.cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carry {
    pub carry_in: bool,
    pub carry_out: bool,
}

/// `prmt`'s modes other than the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrmtMode {
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// `testp.op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// `redux.sync.op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
    /// `.f32` `min`/`max` (of absolute values with `.abs`; any NaN gives NaN with `.NaN`).
    Float {
        max: bool,
        abs: bool,
        nan: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Fma,
    Div,
    Neg,
    Abs,
    Min,
    Max,
    Rcp,
    Sqrt,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    /// `copysign d, a, b`: `b` with the sign of `a`.
    Copysign,
}

impl FloatOp {
    /// How many source operands the instruction takes.
    pub fn sources(self) -> usize {
        match self {
            FloatOp::Fma => 3,
            FloatOp::Add
            | FloatOp::Sub
            | FloatOp::Mul
            | FloatOp::Div
            | FloatOp::Min
            | FloatOp::Max
            | FloatOp::Copysign => 2,
            _ => 1,
        }
    }
}

impl FloatOp {
    /// `neg`, `abs`, `copysign`: they change the sign bit only, so a NaN keeps its payload.
    pub fn is_sign_operation(self) -> bool {
        matches!(self, FloatOp::Neg | FloatOp::Abs | FloatOp::Copysign)
    }
}

/// The modifiers a floating-point instruction may carry, normalized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FloatMods {
    pub rnd: Option<Rounding>,
    pub ftz: bool,
    pub sat: bool,
    pub approx: bool,
    /// `div.full.f32`
    pub full: bool,
    pub relu: bool,
    pub nan: bool,
    pub xorsign_abs: bool,
    pub oob: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CvtMods {
    pub rnd: Option<Rounding>,
    /// `.rni .rzi .rmi .rpi`: round to an integral value in the float type.
    pub integral: bool,
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
    pub satfinite: bool,
}

/// What an `mbarrier` instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarrierOp {
    /// `mbarrier.init [addr], count`.
    Init,
    /// `mbarrier.inval [addr]`.
    Inval,
    /// `mbarrier.arrive{.expect_tx}` / `mbarrier.arrive_drop{.expect_tx}` (`.noComplete`
    /// included) `state, [addr]{, count | txCount}`.
    Arrive { drop: bool, expect_tx: bool },
    /// `mbarrier.expect_tx [addr], txCount`.
    ExpectTx,
    /// `mbarrier.complete_tx [addr], txCount`.
    CompleteTx,
    /// `mbarrier.test_wait` (`test`) or `mbarrier.try_wait`, `{.parity}`: `waitComplete, [addr],
    /// state | phaseParity{, suspendTimeHint}`. A synchronization point when the phase is not
    /// complete yet (`crate::sync`).
    Wait { test: bool, parity: bool },
    /// `mbarrier.pending_count count, state`.
    PendingCount,
    /// `cp.async.mbarrier.arrive{.noinc} [addr]`.
    CpAsyncArrive { noinc: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Mov(PtxType),
    /// `mov.v2/.v4`: element by element, every source read before any destination is written.
    MovVec {
        ty: PtxType,
        vec: u8,
    },
    Ld {
        space: StateSpace,
        ty: PtxType,
        vec: u8,
    },
    St {
        space: StateSpace,
        ty: PtxType,
        vec: u8,
    },
    /// `cvta.space` (to generic) or `cvta.to.space` (from generic).
    Cvta {
        to_generic: bool,
        space: StateSpace,
        ty: PtxType,
    },
    /// `isspacep.space`: whether a generic address lies in the space's window.
    Isspacep(StateSpace),
    Cvt {
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
    },
    /// `cvt` to or from a format no register holds (fp8, fp6, fp4, ue8m0, tf32), and
    /// `cvt.pack.sat`.
    CvtNarrow(NarrowCvt),
    Int {
        op: IntOp,
        ty: PtxType,
    },
    /// f32/f64 arithmetic, and f16/bf16 (x2) arithmetic: `ty` decides which lowering serves it.
    Float {
        op: FloatOp,
        ty: PtxType,
        mods: FloatMods,
    },
    Setp {
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ty: PtxType,
        ftz: bool,
    },
    /// `set.CmpOp{.BoolOp}{.ftz}.dtype.stype`: the comparison as a value of `dst`.
    Set {
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        dst: PtxType,
        src: PtxType,
        ftz: bool,
    },
    Selp(PtxType),
    Bra,
    Ret,
    Exit,
    Call,
    Trap,
    /// `bar`/`barrier` `.sync`, `.arrive`, `.red.{popc,and,or}`.
    Bar(BarKind),
    /// `bar.warp.sync membermask`.
    WarpSync,
    /// `membar` / `fence` (any scope or semantics).
    Fence,
    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}
    /// {, cache-policy}`: the copy completes when it is issued (`lower::async_copy`). `hint`:
    /// `.L2::cache_hint` names a cache-policy operand.
    CpAsync {
        cg: bool,
        hint: bool,
    },
    /// `cp.async.commit_group`, `cp.async.wait_group N`, `cp.async.wait_all`: with every copy
    /// complete at issue, the groups order nothing further.
    CpAsyncGroup,
    /// `cp.async.bulk` between global and shared memory, or shared to shared: `size` bytes
    /// (a multiple of 16, 16-byte aligned) copied at issue; a copy to shared memory then
    /// completes its bytes on the mbarrier operand (`.mbarrier::complete_tx::bytes`).
    CpAsyncBulk {
        to_global: bool,
        from_shared: bool,
        hint: bool,
    },
    /// `cp.async.bulk.tensor.Nd` in tile mode (`crate::tensor_copy`), copied at issue. The
    /// checker splits the `[tensorMap, {coords}]` operand in two: a load's operands are
    /// `[dstMem], [tensorMap], {coords}, [mbar]{, cache-policy}` (its bytes then completed on
    /// `mbar`), a store's `[tensorMap], {coords}, [srcMem]{, cache-policy}`.
    CpAsyncBulkTensor {
        dims: u8,
        store: bool,
        hint: bool,
    },
    /// `tensormap.replace.tile.field{.ss}.b1024.type [addr], {ord,} new_val`
    /// (`crate::tensor_map::replace`); `space` is `Global`, `Shared` or `Generic`.
    TensormapReplace {
        field: crate::tensor_map::Field,
        space: StateSpace,
        ty: PtxType,
    },
    /// `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope
    /// .sync.aligned [dst], [src], 128`: a map copied from shared to global memory.
    TensormapCopy,
    /// Advice to the hardware, with no effect here: `prefetch`, `prefetchu`,
    /// `cp.async.bulk.prefetch` (no cache to warm), `setmaxnreg` (a CPU thread's registers
    /// are its own); `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group` (nothing is in
    /// flight: see `Wgmma`).
    Hint,
    /// The `mbarrier` instructions and `cp.async.mbarrier.arrive` (`crate::mbarrier`): `space`
    /// is `Shared`, `SharedCluster` (a remote arrive) or `Generic`.
    Mbarrier {
        op: MbarrierOp,
        space: StateSpace,
    },
    Shfl(ShflMode),
    Vote(VoteMode),
    /// `match.{any,all}.sync.{b32,b64}`.
    Match {
        all: bool,
        ty: PtxType,
    },
    /// `activemask.b32 d`: the lanes of the warp executing it together (`crate::sync`).
    Activemask,
    /// `ldmatrix` (`store` false) or `stmatrix` `.sync.aligned.m8n8.xN{.trans}{.shared}.b16`.
    WarpMatrix {
        store: bool,
        num: u32,
        trans: bool,
        /// `Shared`, or `Generic` (an address that must point into shared memory).
        space: StateSpace,
    },
    /// `mma.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype`.
    Mma(MmaForm),
    /// `wgmma.mma_async.sync.aligned.m64nNkK{.satfinite}.dtype.atype.btype d, a, b-desc,
    /// scale-d{, imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b}` (`crate::wgmma`); A
    /// is a descriptor or a vector of registers. `wgmma.fence`, `.commit_group` and
    /// `.wait_group` are `Hint`s: the product completes when the warpgroup issues it.
    Wgmma(WgmmaForm),
    /// `testp.op.type p, a`.
    Testp {
        op: TestOp,
        ty: PtxType,
    },
    /// `nanosleep.u32 t`: sleeps at most `2t` ns, so not at all.
    Nanosleep,
    /// `griddepcontrol.{launch_dependents,wait}`: launches on a stream run one after another,
    /// so a grid's prerequisites have completed before it starts: both are satisfied at once.
    GridDepControl,
    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`: only until the checker replaces it by
    /// the shuffles that move each element (`check::movmatrix`); never lowered.
    Movmatrix,
    /// A video instruction, operand selectors included (`semantics::video`).
    Video(crate::semantics::video::Video),
    /// `createpolicy`: an opaque cache policy for the `.L2::cache_hint` of loads and stores,
    /// which have no cache to steer here: 0.
    CreatePolicy,
    /// `redux.sync.op.type d, a, membermask`.
    Redux {
        op: ReduxOp,
        ty: PtxType,
    },
    /// `elect.sync d|p, membermask`: the lowest member lane leads.
    Elect,
    /// `mapa{.shared::cluster}.type d, a, rank`: the address in the cluster's block of that
    /// rank that corresponds to `a` (`space` is `SharedCluster` or `Generic`; see
    /// `crate::cluster`).
    Mapa {
        space: StateSpace,
        ty: PtxType,
    },
    /// `getctarank{.shared::cluster}.type d, a`: the rank of the block whose shared memory
    /// holds `a`.
    GetCtaRank {
        space: StateSpace,
        ty: PtxType,
    },
    /// `barrier.cluster.arrive` (`wait` false) and `barrier.cluster.wait`: the arrival is
    /// recorded in the thread's frame, the wait is a synchronization point (`crate::sync`).
    ClusterBarrier {
        wait: bool,
    },
    /// `call (r), __cuda_syscall_CGS_sync, (handle, flags)`: the driver's system call behind
    /// the device runtime's `cudaCGSynchronize` (`frontend::calls`), a barrier of every thread
    /// of a cooperative launch; `r` is 0 once it completes, 1 in a launch that is not
    /// cooperative (the call then does not wait). Operands as the call's.
    GridSync,
    /// `atom` (`red` = false) or `red` (no destination).
    Atom {
        space: StateSpace,
        op: AtomOp,
        ty: PtxType,
        red: bool,
    },
}

/// A direct call's operands in its four written forms, `call f`, `call f, (p…)`,
/// `call (r…), f`, `call (r…), f, (p…)`: (returns, f, parameters).
pub fn direct_call(args: &[Arg]) -> Option<(&[Arg], FuncId, &[Arg])> {
    let none = &[][..];
    match args {
        [Arg::Func(f)] => Some((none, *f, none)),
        [Arg::Func(f), Arg::List(p)] => Some((none, *f, p)),
        [Arg::List(r), Arg::Func(f)] => Some((r, *f, none)),
        [Arg::List(r), Arg::Func(f), Arg::List(p)] => Some((r, *f, p)),
        _ => None,
    }
}

impl Function {
    /// Why a call with `rets` return and `params` parameter operands does not fit this
    /// function, if it does not.
    pub fn call_mismatch(&self, rets: usize, params: usize) -> Option<String> {
        (rets != self.returns.len() || params != self.params.len()).then(|| {
            format!(
                "'{}' takes {} return and {} parameter operands, found {rets} and {params}",
                self.name,
                self.returns.len(),
                self.params.len()
            )
        })
    }
}

impl Op {
    /// Whether the instruction waits for other threads, or counts in what they wait for:
    /// what makes a function run in rounds (`lower::sync`).
    pub fn cooperates(self) -> bool {
        matches!(
            self,
            Op::Bar(_)
                | Op::Shfl(_)
                | Op::Vote(_)
                | Op::Match { .. }
                | Op::Redux { .. }
                | Op::Elect
                | Op::WarpSync
                | Op::WarpMatrix { .. }
                | Op::Mma(_)
                | Op::Wgmma(_)
                | Op::Mbarrier {
                    op: MbarrierOp::Wait { .. },
                    ..
                }
                | Op::ClusterBarrier { .. }
                | Op::GridSync
                | Op::Activemask
        )
    }

    /// The carry flag the instruction uses, if it is an extended-precision one.
    pub fn carry(self) -> Option<Carry> {
        match self {
            Op::Int {
                op: IntOp::AddCarry(c) | IntOp::SubCarry(c) | IntOp::MadCarry { carry: c, .. },
                ..
            } => Some(c),
            _ => None,
        }
    }
}

/// The `cvt` forms of `Op::CvtNarrow`. Pairs pack the first source (`a`, or the upper half of
/// a packed source) into the upper slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NarrowCvt {
    /// `cvt.frnd.satfinite{.relu}.fmt.{f32,f16x2,bf16x2}`: `src` is F32 (`d, a, b`) or a pair.
    ToMini {
        fmt: Mini,
        src: PtxType,
        rnd: Rounding,
        relu: bool,
    },
    /// `cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits`: stochastic rounding,
    /// `a` to the upper half with the upper 16 bits of `rbits`, `b` to the lower.
    Stochastic {
        dst: PtxType,
        relu: bool,
        satfinite: bool,
    },
    /// `cvt.rn{.relu}.{f16x2,bf16x2}.fmt d, a`.
    FromMini { fmt: Mini, dst: PtxType, relu: bool },
    /// `cvt.frnd3{.satfinite}.ue8m0x2.{f32,bf16x2}`.
    ToUe8m0 {
        src: PtxType,
        rnd: Rounding,
        satfinite: bool,
    },
    /// `cvt.rn.bf16x2.ue8m0x2 d, a`.
    FromUe8m0,
    /// `cvt.rna{.satfinite}.tf32.f32` and `cvt.frnd2{.satfinite}{.relu}.tf32.f32`.
    ToTf32 {
        rnd: Rounding,
        satfinite: bool,
        relu: bool,
    },
    /// `cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}`: a and b saturated to `bits`-bit
    /// integers, packed above `c` (`bits` 16: no `c`).
    PackSat { bits: u32, signed: bool },
}

/// One `mma` form: the shape and the element types of D, A, B and C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaForm {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub d: MmaType,
    pub a: MmaType,
    pub b: MmaType,
    pub c: MmaType,
    /// Integer accumulation clamps to the s32 range instead of wrapping.
    pub satfinite: bool,
    /// `.alayout` is `.row` and `.blayout` is `.col` (every shape but `m8n8k4` on f16 has
    /// only these).
    pub a_row: bool,
    pub b_col: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaType {
    F16,
    BF16,
    Tf32,
    F32,
    F64,
    E4m3,
    E5m2,
    S8,
    U8,
    S32,
}

impl MmaType {
    pub fn from_name(name: &str) -> Option<MmaType> {
        Some(match name {
            "f16" => MmaType::F16,
            "bf16" => MmaType::BF16,
            "tf32" => MmaType::Tf32,
            "f32" => MmaType::F32,
            "f64" => MmaType::F64,
            "e4m3" => MmaType::E4m3,
            "e5m2" => MmaType::E5m2,
            "s8" => MmaType::S8,
            "u8" => MmaType::U8,
            "s32" => MmaType::S32,
            _ => return None,
        })
    }

    pub fn bits(self) -> u32 {
        match self {
            MmaType::F16 | MmaType::BF16 => 16,
            MmaType::Tf32 | MmaType::F32 | MmaType::S32 => 32,
            MmaType::F64 => 64,
            MmaType::E4m3 | MmaType::E5m2 | MmaType::S8 | MmaType::U8 => 8,
        }
    }
}

impl MmaForm {
    /// `mma.m8n8k4` on f16: four independent products, one per quad pair of lanes
    /// (lanes 4q..4q+3 and 16+4q..16+4q+3), each fragment over 8 lanes.
    pub fn quad_pairs(self) -> bool {
        (self.m, self.n, self.k) == (8, 8, 4) && self.a == MmaType::F16
    }

    /// Registers per lane of A, B and C (D as C, but in its own type): a fragment holds
    /// rows × columns / (lanes per product) elements, packed into 32-bit registers (64-bit
    /// for f64).
    pub fn registers(self) -> [u32; 4] {
        let per_reg = |t: MmaType| (32 / t.bits()).max(1);
        let lanes = if self.quad_pairs() { 8 } else { 32 };
        [
            self.m * self.k / lanes / per_reg(self.a),
            self.k * self.n / lanes / per_reg(self.b),
            self.m * self.n / lanes / per_reg(self.c),
            self.m * self.n / lanes / per_reg(self.d),
        ]
    }
}

/// `wgmma.mma_async`'s shape (M is 64) and types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaForm {
    pub n: u32,
    pub k: u32,
    pub d: MmaType,
    pub a: MmaType,
    pub b: MmaType,
    /// Integer accumulation clamps to the s32 range instead of wrapping.
    pub satfinite: bool,
}

impl WgmmaForm {
    /// D's registers per thread: 64 × N elements over 128 threads, two f16 to a register.
    pub fn d_registers(self) -> u32 {
        self.n / 2 / (32 / self.d.bits())
    }

    /// The floating-point forms take `imm-scale-a` and `imm-scale-b`.
    pub fn scales(self) -> bool {
        !matches!(self.a, MmaType::S8 | MmaType::U8)
    }

    /// The f16 and bf16 forms take `imm-trans-b`, and `imm-trans-a` when A is a descriptor.
    pub fn transposes(self) -> bool {
        matches!(self.a, MmaType::F16 | MmaType::BF16)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarKind {
    Sync,
    Arrive,
    Red(BarRed),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarRed {
    Popc,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}
