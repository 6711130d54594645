//! The checked module: names resolved to ids, instructions decoded into families with their
//! modifiers normalized (one struct per family, so one lowering function serves every form).

use super::ast::{FunctionKind, Immediate, StateSpace};
use crate::error::{Source, Span};
use crate::types::PtxType;
use std::sync::Arc;

pub type RegId = u32;
pub type FuncId = usize;
pub type LabelId = usize;

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

#[derive(Debug)]
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
}

#[derive(Debug)]
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
    Sink,
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
            | FloatOp::Max => 2,
            _ => 1,
        }
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CvtMods {
    pub rnd: Option<Rounding>,
    /// `.rni .rzi .rmi .rpi`: round to an integral value in the float type.
    pub integral: bool,
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
    pub satfinite: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Mov(PtxType),
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
    Cvt {
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
    },
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
    Shfl(ShflMode),
    Vote(VoteMode),
    /// `match.{any,all}.sync.{b32,b64}`.
    Match {
        all: bool,
        ty: PtxType,
    },
    Activemask,
    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}{.shared}.b16`.
    Ldmatrix {
        num: u32,
        trans: bool,
        /// `Shared`, or `Generic` (an address that must point into shared memory).
        space: StateSpace,
    },
    /// `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`.
    Mma {
        bf16: bool,
    },
    /// `atom` (`red` = false) or `red` (no destination).
    Atom {
        space: StateSpace,
        op: AtomOp,
        ty: PtxType,
        red: bool,
    },
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
