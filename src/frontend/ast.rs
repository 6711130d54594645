//! The parsed module, before names are resolved: what the text says, with spans.

use crate::error::Span;
use crate::types::PtxType;

#[derive(Debug, Default)]
pub struct Module {
    pub version: Option<String>,
    pub target: Vec<String>,
    pub address_size: Option<u32>,
    pub functions: Vec<Function>,
    pub globals: Vec<VarDecl>,
    /// Every function and module-scope variable as it stands in the text, for the linker.
    pub items: Vec<Item>,
}

/// A module-scope function or variable: its name, whether this text defines it (a body, or
/// a variable not `.extern`), whether other modules see it (`.visible`, `.weak`, `.common`,
/// every `.entry`), whether it is `.weak`, and its bytes in the text (linkage words included).
#[derive(Debug)]
pub struct Item {
    pub name: String,
    pub defines: bool,
    pub visible: bool,
    pub weak: bool,
    pub text: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    Entry,
    Func,
}

#[derive(Debug)]
pub struct Function {
    pub kind: FunctionKind,
    pub name: String,
    pub span: Span,
    pub returns: Vec<ParamDecl>,
    pub params: Vec<ParamDecl>,
    /// `None` for a declaration (`.extern .func f(...);` or a prototype before its definition).
    pub body: Option<Vec<Stmt>>,
    /// `.reqntid` / `.maxntid` if given (x, y, z).
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// `.maxnreg n` (the smallest, if repeated).
    pub maxnreg: Option<u32>,
    pub cluster: ClusterDirectives,
}

/// A parameter of an `.entry` or `.func` (`.param .u64 .ptr .global .align 8 name`,
/// `.param .align 2 .b8 name[2]`, or a `.reg` parameter of a `.func`).
#[derive(Clone, Debug)]
pub struct ParamDecl {
    pub name: String,
    pub span: Span,
    pub ty: PtxType,
    /// Vector width from `.v2`/`.v4`.
    pub vector: u32,
    pub align: Option<u32>,
    /// Element count for array parameters (`.b8 name[K]`).
    pub array: Option<u32>,
    pub is_reg: bool,
}

impl ParamDecl {
    pub fn size(&self) -> u32 {
        self.ty.size() * self.vector * self.array.unwrap_or(1)
    }

    pub fn alignment(&self) -> u32 {
        self.align.unwrap_or(self.ty.size() * self.vector).max(1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Global,
    /// `.shared{::cta}`: the executing block's shared memory.
    Shared,
    /// `.shared::cluster`: the shared memory of every block of the cluster (whose window
    /// holds `.shared::cta`'s; see `crate::cluster`). No variable is declared in it.
    SharedCluster,
    Const,
    Local,
    Param,
    Generic,
}

impl StateSpace {
    pub fn from_name(name: &str) -> Option<StateSpace> {
        Some(match name {
            "global" => StateSpace::Global,
            "shared" => StateSpace::Shared,
            "const" => StateSpace::Const,
            "local" => StateSpace::Local,
            "param" => StateSpace::Param,
            _ => return None,
        })
    }
}

/// A variable in a state space (`.shared .align 4 .b8 smem[1024];`).
#[derive(Clone, Debug)]
pub struct VarDecl {
    pub space: StateSpace,
    pub name: String,
    pub span: Span,
    pub ty: PtxType,
    pub align: Option<u32>,
    /// Vector width from `.v2`/`.v4`.
    pub vector: u32,
    /// Product of the array dimensions; `Some(0)` for `[]` (size set elsewhere).
    pub array: Option<u32>,
    pub is_extern: bool,
    /// Flattened initializer values (raw bits of each element; 0 where an address goes).
    pub init: Vec<Immediate>,
    /// Elements of `init` that are variables' addresses (`{x, y+8, generic(z)}`).
    pub init_addresses: Vec<InitAddress>,
}

/// An initializer element that is the address of a variable plus a byte offset. The
/// address of a `.global`/`.const` variable is the same in its space and as a generic
/// address here, so `generic(x)` and `x` are one thing.
#[derive(Clone, Debug)]
pub struct InitAddress {
    /// Index of the element in `VarDecl::init`.
    pub element: usize,
    pub name: String,
    pub offset: i64,
    pub span: Span,
}

impl VarDecl {
    pub fn size(&self) -> u64 {
        self.ty.size() as u64 * self.vector as u64 * self.array.unwrap_or(1) as u64
    }

    pub fn alignment(&self) -> u32 {
        self.align.unwrap_or(self.ty.size() * self.vector).max(1)
    }
}

#[derive(Debug)]
pub enum Stmt {
    Reg(RegDecl),
    Var(VarDecl),
    Label {
        name: String,
        span: Span,
    },
    /// `name: .callprototype (rets) _ (params);` or `name: .calltargets f, g;`: what an
    /// indirect `call` through a pointer may reach.
    Callees {
        name: String,
        span: Span,
        callees: Callees,
    },
    Inst(Instruction),
    Block(Vec<Stmt>),
}

#[derive(Debug)]
pub enum Callees {
    /// Any function with these return and parameter declarations.
    Prototype {
        returns: Vec<ParamDecl>,
        params: Vec<ParamDecl>,
    },
    /// One of these functions.
    Targets(Vec<(String, Span)>),
}

#[derive(Debug)]
pub struct RegDecl {
    pub ty: PtxType,
    pub vector: u32,
    pub names: Vec<RegName>,
}

/// One name of a `.reg` declaration, or a range of them.
#[derive(Debug)]
pub struct RegName {
    pub name: String,
    /// `Some(n)`: the range `name<n>`, the names `name0` … `name{n-1}` (not expanded: a
    /// range costs nothing until its registers are used).
    pub range: Option<u32>,
    pub span: Span,
}

#[derive(Debug)]
pub struct Instruction {
    pub guard: Option<Guard>,
    /// The whole dotted opcode (`fma.rn.f16x2`).
    pub opcode: String,
    pub opcode_span: Span,
    pub operands: Vec<Operand>,
    pub span: Span,
}

#[derive(Debug)]
pub struct Guard {
    pub reg: String,
    pub negated: bool,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Immediate {
    /// An integer literal (two's complement bits; negative literals wrap).
    Int(u64),
    /// `0fXXXXXXXX`.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal floating literal.
    F64(u64),
}

#[derive(Clone, Debug)]
pub struct Operand {
    pub kind: OperandKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum OperandKind {
    /// A register, special register, label, function or variable name, with an optional
    /// `+offset` (variables only).
    Name(String, i64),
    /// `name[index]`: an array element.
    Element(String, i64),
    Imm(Immediate),
    /// `[base+offset]`; `base` is a register or variable name, or absent for `[imm]`.
    Address {
        base: Option<String>,
        offset: i64,
    },
    /// `[base+offset, {a, b}]`: a tensor map and coordinates (`cp.async.bulk.tensor`).
    TensorAddress {
        base: Option<String>,
        offset: i64,
        coords: Vec<Operand>,
    },
    /// `{a, b}`.
    Vector(Vec<Operand>),
    /// `(a, b)` in `call`.
    List(Vec<Operand>),
    /// `!p`.
    Not(Box<Operand>),
    /// `-a`: a negated register (`vmad`'s operands).
    Neg(Box<Operand>),
    /// `p|q`.
    Pair(Box<Operand>, Box<Operand>),
    /// `_`: a sink.
    Sink,
}

/// A kernel's cluster directives (sm_90).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterDirectives {
    /// `.reqnctapercluster nx, ny, nz`: the cluster shape every launch has.
    pub required: Option<[u32; 3]>,
    /// `.explicitcluster`: launches must give cluster dimensions.
    pub explicit: bool,
    /// `.maxclusterrank n`: at most n blocks a cluster.
    pub max_rank: Option<u32>,
}
