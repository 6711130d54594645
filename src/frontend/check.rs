//! Resolves names and decodes instructions: `ast::Module` → `checked::Module`.
//!
//! Each opcode is decoded once, here, into its family with normalized modifiers; an opcode that
//! parses but is not supported is reported by its full name and location.

use super::ast::{self, Immediate, OperandKind, StateSpace, Stmt};
use super::checked::*;
use super::scopes::{MAX_REGISTERS, Name, Scopes};
use crate::error::{Diagnostic, Source, Span};
use crate::types::PtxType;
use ptxjit_runtime::{Dim3, block_fits, block_limits};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

type CResult<T> = Result<T, Diagnostic>;

pub fn check(source: &Arc<Source>, m: ast::Module) -> Result<Module, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut globals = Vec::new();
    let mut global_names = HashMap::new();
    for g in &m.globals {
        match var_from_decl(source, g) {
            Ok(v) => {
                global_names.insert(g.name.clone(), globals.len());
                globals.push(v);
            }
            Err(d) => diags.push(d),
        }
    }
    // A function may be declared (prototype) and defined later: the definition wins.
    let mut func_ids: HashMap<String, FuncId> = HashMap::new();
    let mut order: Vec<&ast::Function> = Vec::new();
    for f in &m.functions {
        match func_ids.get(&f.name) {
            Some(&id) if order[id].body.is_none() => order[id] = f,
            Some(_) if f.body.is_none() => {}
            Some(_) => diags.push(Diagnostic::new(
                source,
                f.span,
                format!("function '{}' is defined twice", f.name),
            )),
            None => {
                func_ids.insert(f.name.clone(), order.len());
                order.push(f);
            }
        }
    }
    let mut functions = Vec::new();
    for f in &order {
        let checker = FunctionChecker {
            source,
            globals: &global_names,
            global_vars: &globals,
            funcs: &func_ids,
            vars: Vec::new(),
            scopes: Scopes::default(),
            limit_reported: Cell::new(false),
            labels: HashMap::new(),
            label_pos: Vec::new(),
            label_names: Vec::new(),
            body: Vec::new(),
            params: HashMap::new(),
            param_elem_sizes: Vec::new(),
            return_elem_sizes: Vec::new(),
            diags: Vec::new(),
        };
        match checker.function(f) {
            Ok(cf) => functions.push(cf),
            Err(mut ds) => diags.append(&mut ds),
        }
    }
    if diags.is_empty() {
        Ok(Module {
            source: source.clone(),
            functions,
            globals,
        })
    } else {
        Err(diags)
    }
}

fn var_from_decl(source: &Arc<Source>, d: &ast::VarDecl) -> CResult<Var> {
    let size = d.size();
    // Limits well above any GPU's (228 KB of shared memory per block, 512 KB of local memory
    // per thread) that keep every allocation reasonable on the host.
    let limit: u64 = match d.space {
        StateSpace::Shared => 16 << 20,
        StateSpace::Local | StateSpace::Param => 1 << 20,
        _ => 1 << 32,
    };
    if size > limit {
        return Err(Diagnostic::new(
            source,
            d.span,
            format!(
                "variable '{}' is too large ({size} bytes; the limit for this state space is {limit})",
                d.name
            ),
        ));
    }
    let init = if d.init.is_empty() {
        None
    } else {
        let elem = d.ty.size() as usize;
        if d.init.len() as u64 * elem as u64 > size.max(elem as u64) {
            return Err(Diagnostic::new(
                source,
                d.span,
                format!("too many initializers for '{}'", d.name),
            ));
        }
        // Only what the initializer gives: the rest of the variable is zero, and storage
        // commits its pages when first touched, so a big array with a short initializer
        // costs nothing until a kernel uses it.
        let bytes: Vec<u8> = d
            .init
            .iter()
            .flat_map(|v| {
                immediate_bits(*v, d.ty)
                    .to_le_bytes()
                    .into_iter()
                    .take(elem)
            })
            .collect();
        Some(bytes)
    };
    Ok(Var {
        name: d.name.clone(),
        span: d.span,
        space: d.space,
        size: size.max(init.as_ref().map_or(0, |b| b.len() as u64)),
        elem_size: d.ty.size(),
        align: d.alignment(),
        is_extern: d.is_extern,
        init,
    })
}

/// The bits of a literal as a value of `ty` (an integer literal in a float variable is
/// converted by value, as ptxas does).
pub fn immediate_bits(imm: Immediate, ty: PtxType) -> u64 {
    match (imm, ty) {
        (Immediate::Int(v), PtxType::F32) => (v as i64 as f32).to_bits() as u64,
        (Immediate::Int(v), PtxType::F64) => (v as i64 as f64).to_bits(),
        (Immediate::Int(v), _) => v,
        (Immediate::F32(b), PtxType::F64) => (f32::from_bits(b) as f64).to_bits(),
        (Immediate::F32(b), _) => b as u64,
        (Immediate::F64(b), PtxType::F32) => (f64::from_bits(b) as f32).to_bits() as u64,
        (Immediate::F64(b), _) => b,
    }
}

struct FunctionChecker<'a> {
    source: &'a Arc<Source>,
    globals: &'a HashMap<String, usize>,
    global_vars: &'a [Var],
    funcs: &'a HashMap<String, FuncId>,
    vars: Vec<Var>,
    scopes: Scopes,
    limit_reported: Cell<bool>,
    labels: HashMap<String, LabelId>,
    label_pos: Vec<usize>,
    label_names: Vec<String>,
    body: Vec<Inst>,
    /// Parameter and return names → symbol, and their element sizes.
    params: HashMap<String, Symbol>,
    param_elem_sizes: Vec<u32>,
    return_elem_sizes: Vec<u32>,
    diags: Vec<Diagnostic>,
}

fn layout(params: &[ast::ParamDecl]) -> (Vec<Param>, u32) {
    let mut offset = 0u32;
    let mut out = Vec::new();
    for p in params {
        let align = p.alignment();
        offset = offset.div_ceil(align) * align;
        out.push(Param {
            name: p.name.clone(),
            span: p.span,
            ty: p.ty,
            size: p.size(),
            align,
            offset,
            array: p.array,
        });
        offset += p.size();
    }
    (out, offset)
}

impl<'a> FunctionChecker<'a> {
    fn err(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.source, span, msg)
    }

    fn function(mut self, f: &ast::Function) -> Result<Function, Vec<Diagnostic>> {
        let (params, params_size) = layout(&f.params);
        let (returns, _) = layout(&f.returns);
        let symbols = params
            .iter()
            .enumerate()
            .map(|(i, p)| (p, Symbol::Param(i)));
        let returned = returns
            .iter()
            .enumerate()
            .map(|(i, p)| (p, Symbol::Return(i)));
        for (p, symbol) in symbols.chain(returned) {
            if self.params.insert(p.name.clone(), symbol).is_some() {
                let d = self.err(p.span, format!("parameter '{}' is declared twice", p.name));
                self.diags.push(d);
            }
        }
        for (directive, dims) in [(".reqntid", f.reqntid), (".maxntid", f.maxntid)] {
            if let Some(d) = dims.filter(|&[x, y, z]| !block_fits(Dim3::new(x, y, z))) {
                let msg = format!("{directive} {d:?}: {}", block_limits());
                self.diags.push(self.err(f.span, msg));
            }
        }
        self.param_elem_sizes = params.iter().map(|p| p.ty.size()).collect();
        self.return_elem_sizes = returns.iter().map(|p| p.ty.size()).collect();
        let body = match &f.body {
            Some(stmts) => {
                self.collect_labels(stmts);
                self.block(stmts);
                // (`within_limit` reports the use that crosses the limit where it can.)
                if self.diags.is_empty() && self.scopes.reg_count() > MAX_REGISTERS {
                    let d = self.too_many_registers(f.span);
                    self.diags.push(d);
                }
                if !self.diags.is_empty() {
                    return Err(self.diags);
                }
                Some(std::mem::take(&mut self.body))
            }
            None => None,
        };
        Ok(Function {
            name: f.name.clone(),
            kind: f.kind,
            span: f.span,
            params,
            params_size,
            returns,
            regs: self.scopes.into_regs(),
            vars: self.vars,
            body,
            labels: self.label_pos,
            label_names: self.label_names,
            reqntid: f.reqntid,
            maxntid: f.maxntid,
        })
    }

    fn collect_labels(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Label { name, span } => {
                    if self.labels.contains_key(name) {
                        self.diags
                            .push(self.err(*span, format!("label '{name}' is defined twice")));
                    } else {
                        self.labels.insert(name.clone(), self.label_names.len());
                        self.label_names.push(name.clone());
                        self.label_pos.push(usize::MAX);
                    }
                }
                Stmt::Block(inner) => self.collect_labels(inner),
                _ => {}
            }
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Reg(r) => {
                    if r.vector != 1 {
                        self.diags.push(self.err(
                            r.names[0].span,
                            "vector registers (.reg .v2/.v4) are not supported",
                        ));
                        continue;
                    }
                    for name in &r.names {
                        if let Err(msg) = self.scopes.declare_reg(name, r.ty) {
                            self.diags.push(self.err(name.span, msg));
                        }
                    }
                }
                Stmt::Var(v) if matches!(v.space, StateSpace::Global | StateSpace::Const) => {
                    self.diags.push(self.err(
                        v.span,
                        "unsupported: a .global or .const variable declared inside a function body",
                    ))
                }
                Stmt::Var(v) if !v.init.is_empty() => self.diags.push(self.err(
                    v.span,
                    "unsupported: an initializer on a variable inside a function body",
                )),
                Stmt::Var(v) => match var_from_decl(self.source, v) {
                    Ok(var) => match self.scopes.declare_var(&v.name, self.vars.len()) {
                        Ok(()) => self.vars.push(var),
                        Err(msg) => self.diags.push(self.err(v.span, msg)),
                    },
                    Err(d) => self.diags.push(d),
                },
                Stmt::Label { name, .. } => {
                    let id = self.labels[name];
                    self.label_pos[id] = self.body.len();
                }
                Stmt::Inst(i) => match self.instruction(i) {
                    Ok(inst) => self.body.push(inst),
                    Err(d) => self.diags.push(d),
                },
                Stmt::Block(inner) => {
                    self.scopes.push();
                    self.block(inner);
                    self.scopes.pop();
                }
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<Name> {
        self.scopes.lookup(name)
    }

    fn too_many_registers(&self, span: Span) -> Diagnostic {
        self.err(
            span,
            format!("the function uses more than {MAX_REGISTERS} registers (ptxjit's limit)"),
        )
    }

    fn symbol(&self, name: &str) -> Option<Symbol> {
        match self.lookup(name) {
            Some(Name::Var(id)) => Some(Symbol::Local(id)),
            Some(Name::Reg(_)) => None,
            None => self
                .params
                .get(name)
                .copied()
                .or_else(|| self.globals.get(name).map(|&g| Symbol::Global(g))),
        }
    }

    /// Element size of the variable (or parameter) `name`.
    fn elem_size(&self, name: &str) -> Option<u32> {
        match self.symbol(name)? {
            Symbol::Local(id) => Some(self.vars[id].elem_size),
            Symbol::Global(g) => Some(self.global_vars[g].elem_size),
            Symbol::Param(i) => self.param_elem_sizes.get(i).copied(),
            Symbol::Return(i) => self.return_elem_sizes.get(i).copied(),
        }
    }

    fn reg(&self, name: &str, span: Span) -> CResult<RegId> {
        match self.lookup(name) {
            Some(Name::Reg(id)) => self.within_limit(id, span),
            _ => Err(self.err(span, format!("undefined register '{name}'"))),
        }
    }

    /// `id`, used at `span`; the first use of a register past the limit is reported (once:
    /// the function fails with it).
    fn within_limit(&self, id: RegId, span: Span) -> CResult<RegId> {
        match id as usize >= MAX_REGISTERS && !self.limit_reported.replace(true) {
            true => Err(self.too_many_registers(span)),
            false => Ok(id),
        }
    }

    fn instruction(&mut self, i: &ast::Instruction) -> CResult<Inst> {
        let op = decode(&i.opcode).map_err(|msg| self.err(i.opcode_span, msg))?;
        let guard = match &i.guard {
            Some(g) => {
                let reg = self.reg(&g.reg, g.span)?;
                if self.scopes.reg_type(reg) != PtxType::Pred {
                    return Err(
                        self.err(g.span, format!("guard '{}' is not a .pred register", g.reg))
                    );
                }
                Some(Guard {
                    reg,
                    negated: g.negated,
                })
            }
            None => None,
        };
        let mut args = i
            .operands
            .iter()
            .map(|o| self.operand(o, op))
            .collect::<CResult<Vec<_>>>()?;
        // `ld.u32 r, a[1]` addresses memory without brackets.
        let address_position = match op {
            Op::Ld { .. } => Some(1),
            Op::St { .. } => Some(0),
            Op::Atom { red, .. } => Some(if red { 0 } else { 1 }),
            _ => None,
        };
        if let Some(k) = address_position
            && let (Some(Arg::SymbolAddr(sym, offset)), Some(o)) = (args.get(k), i.operands.get(k))
            && matches!(o.kind, OperandKind::Element(..))
        {
            args[k] = Arg::Addr {
                base: AddrBase::Symbol(*sym),
                offset: *offset,
            };
        }
        let inst = Inst {
            guard,
            op,
            args,
            span: i.span,
            opcode: i.opcode.clone(),
        };
        self.check_arity(&inst)?;
        if let Op::Mov(ty) = op {
            for (arg, operand) in inst.args.iter().zip(&i.operands) {
                self.check_moved_width(arg, operand, ty, &i.opcode)?;
            }
        }
        if let (Op::Bar(_), Some(&Arg::Imm(Immediate::Int(id)))) = (op, inst.args.first())
            && id >= 16
        {
            return Err(self.err(
                i.operands[0].span,
                format!("barrier {id} does not exist (a CTA has barriers 0 to 15)"),
            ));
        }
        Ok(inst)
    }

    fn operand(&self, o: &ast::Operand, op: Op) -> CResult<Arg> {
        Ok(match &o.kind {
            OperandKind::Imm(v) => Arg::Imm(*v),
            OperandKind::Sink => Arg::Sink,
            OperandKind::Name(name, offset) => {
                if let Some(Name::Reg(id)) = self.lookup(name) {
                    if *offset != 0 {
                        return Err(
                            self.err(o.span, "a register cannot take an offset outside [ ]")
                        );
                    }
                    return Ok(Arg::Reg(self.within_limit(id, o.span)?));
                }
                if let Some(s) = special(name) {
                    return Ok(Arg::Special(s));
                }
                // The ISA's one predefined constant (it may be shadowed by a declared name).
                if name == "WARP_SZ" && *offset == 0 && self.symbol(name).is_none() {
                    return Ok(Arg::Imm(Immediate::Int(32)));
                }
                if matches!(op, Op::Bra)
                    && let Some(&l) = self.labels.get(name)
                {
                    return Ok(Arg::Label(l));
                }
                if matches!(op, Op::Call)
                    && let Some(&f) = self.funcs.get(name)
                {
                    return Ok(Arg::Func(f));
                }
                if let Some(s) = self.symbol(name) {
                    return Ok(Arg::SymbolAddr(s, *offset));
                }
                if name.starts_with('%') {
                    return Err(self.err(o.span, format!("undefined register '{name}'")));
                }
                return Err(self.err(o.span, format!("undefined name '{name}'")));
            }
            OperandKind::Element(name, index) => {
                // `a[i]`: the address of element i (ISA "arrays as operands"); in a memory
                // instruction's address position it becomes `[a+offset]` (see `instruction`).
                let (Some(s), Some(size)) = (self.symbol(name), self.elem_size(name)) else {
                    return Err(self.err(o.span, format!("undefined array '{name}'")));
                };
                let Some(offset) = index.checked_mul(size as i64) else {
                    return Err(self.err(
                        o.span,
                        format!("element {index} of '{name}' is beyond any address"),
                    ));
                };
                Arg::SymbolAddr(s, offset)
            }
            OperandKind::Address { base, offset } => {
                let base = match base {
                    None => AddrBase::Absolute,
                    Some(name) => match self.lookup(name) {
                        Some(Name::Reg(id)) => AddrBase::Reg(self.within_limit(id, o.span)?),
                        _ => match self.symbol(name) {
                            Some(s) => AddrBase::Symbol(s),
                            None => {
                                return Err(
                                    self.err(o.span, format!("undefined name '{name}' in address"))
                                );
                            }
                        },
                    },
                };
                Arg::Addr {
                    base,
                    offset: *offset,
                }
            }
            OperandKind::Vector(items) => {
                let mut v = Vec::new();
                for item in items {
                    v.push(self.operand(item, op)?);
                }
                Arg::Vector(v)
            }
            OperandKind::List(items) => {
                let mut v = Vec::new();
                for item in items {
                    v.push(match &item.kind {
                        OperandKind::Name(name, 0) => match self.symbol(name) {
                            Some(s) => Arg::SymbolAddr(s, 0),
                            None => self.operand(item, op)?,
                        },
                        _ => self.operand(item, op)?,
                    });
                }
                Arg::List(v)
            }
            OperandKind::Not(inner) => match &inner.kind {
                OperandKind::Name(name, 0) => Arg::Not(self.reg(name, inner.span)?),
                _ => return Err(self.err(o.span, "'!' applies to a predicate register")),
            },
            OperandKind::Pair(a, b) => Arg::Pair(
                Box::new(self.operand(a, op)?),
                Box::new(self.operand(b, op)?),
            ),
        })
    }

    /// A `mov` operand holds exactly the bits the instruction moves (ptxas rejects a
    /// `mov.b64` into a `.b32` register, which would otherwise truncate): a register of the
    /// type's size, or a vector of registers that together have it.
    fn check_moved_width(
        &self,
        arg: &Arg,
        operand: &ast::Operand,
        ty: PtxType,
        opcode: &str,
    ) -> CResult<()> {
        let (args, operands, parts) = match (arg, &operand.kind) {
            (Arg::Reg(_), _) => (std::slice::from_ref(arg), std::slice::from_ref(operand), 1),
            (Arg::Vector(items), OperandKind::Vector(operands)) => {
                (&items[..], &operands[..], items.len() as u32)
            }
            _ => return Ok(()),
        };
        for (a, o) in args.iter().zip(operands) {
            let Arg::Reg(reg) = *a else { continue };
            let reg_ty = self.scopes.reg_type(reg);
            let fits = (reg_ty == PtxType::Pred) == (ty == PtxType::Pred)
                && reg_ty.size() * parts == ty.size();
            if !fits {
                let wanted = if parts == 1 {
                    format!("{} bits", ty.bits())
                } else {
                    format!("{} parts of {} bits", parts, ty.bits() / parts)
                };
                let name = match &o.kind {
                    OperandKind::Name(name, _) => name.as_str(),
                    _ => "the register",
                };
                return Err(self.err(
                    o.span,
                    format!(
                        "'{name}' is a .{} register, but '{opcode}' moves {wanted}",
                        reg_ty.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn check_arity(&self, inst: &Inst) -> CResult<()> {
        let n = inst.args.len();
        let want: &[usize] = match inst.op {
            Op::Mov(_) | Op::Ld { .. } | Op::St { .. } | Op::Cvta { .. } => &[2],
            Op::Cvt { dst, .. } if dst == PtxType::F16x2 || dst == PtxType::BF16x2 => &[2, 3],
            Op::Cvt { .. } => &[2],
            Op::Int { op, .. } => match op {
                IntOp::Abs
                | IntOp::Neg
                | IntOp::Not
                | IntOp::CNot
                | IntOp::Popc
                | IntOp::Clz
                | IntOp::Brev => &[2],
                IntOp::Mad(_) | IntOp::Shf { .. } | IntOp::Bfe | IntOp::Prmt => &[4],
                IntOp::Bfi => &[5],
                _ => &[3],
            },
            Op::Float { op, .. } => match op.sources() {
                1 => &[2],
                2 => &[3],
                _ => &[4],
            },
            Op::Setp { bool_op, .. } | Op::Set { bool_op, .. } => {
                if bool_op.is_some() {
                    &[4]
                } else {
                    &[3]
                }
            }
            Op::Selp(_) => &[4],
            Op::Bar(BarKind::Sync) => &[1, 2],
            Op::Bar(BarKind::Arrive) => &[2],
            Op::Bar(BarKind::Red(_)) => &[3, 4],
            Op::WarpSync => &[1],
            Op::Fence => &[0],
            Op::Shfl(_) => &[5],
            Op::Vote(_) | Op::Match { .. } => &[3],
            Op::Activemask => &[1],
            Op::Ldmatrix { .. } => &[2],
            Op::Mma { .. } => &[4],
            Op::Atom { red: true, .. } => &[2],
            Op::Atom {
                op: AtomOp::Cas, ..
            } => &[4],
            Op::Atom { .. } => &[3],
            Op::Bra => &[1],
            Op::Ret | Op::Exit | Op::Trap => &[0],
            Op::Call => &[1, 2, 3],
        };
        if want.contains(&n) {
            Ok(())
        } else {
            let expected = want
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(" or ");
            Err(self.err(
                inst.span,
                format!("'{}' takes {expected} operands, found {n}", inst.opcode),
            ))
        }
    }
}

fn special(name: &str) -> Option<Special> {
    let dim = |s: &str| match s {
        "x" => Some(Dim::X),
        "y" => Some(Dim::Y),
        "z" => Some(Dim::Z),
        _ => None,
    };
    if let Some((base, comp)) = name.split_once('.') {
        let d = dim(comp)?;
        return Some(match base {
            "%tid" => Special::Tid(d),
            "%ntid" => Special::Ntid(d),
            "%ctaid" => Special::Ctaid(d),
            "%nctaid" => Special::Nctaid(d),
            _ => return None,
        });
    }
    Some(match name {
        "%laneid" => Special::LaneId,
        "%warpid" => Special::WarpId,
        "%nwarpid" => Special::NWarpId,
        "%smid" => Special::SmId,
        "%nsmid" => Special::NSmId,
        "%gridid" => Special::GridId,
        "%clock" => Special::Clock,
        "%clock64" => Special::Clock64,
        "%globaltimer" => Special::GlobalTimer,
        "%dynamic_smem_size" => Special::DynamicSmemSize,
        "%lanemask_eq" => Special::LaneMask(CmpOp::Eq),
        "%lanemask_le" => Special::LaneMask(CmpOp::Le),
        "%lanemask_lt" => Special::LaneMask(CmpOp::Lt),
        "%lanemask_ge" => Special::LaneMask(CmpOp::Ge),
        "%lanemask_gt" => Special::LaneMask(CmpOp::Gt),
        _ => return None,
    })
}

// ---- opcode decoding ------------------------------------------------------------------------

fn cmp_op(s: &str) -> Option<CmpOp> {
    use super::checked::CmpOp::*;
    Some(match s {
        "eq" => Eq,
        "ne" => Ne,
        "lt" => Lt,
        "le" => Le,
        "gt" => Gt,
        "ge" => Ge,
        "lo" => Lo,
        "ls" => Ls,
        "hi" => Hi,
        "hs" => Hs,
        "equ" => Equ,
        "neu" => Neu,
        "ltu" => Ltu,
        "leu" => Leu,
        "gtu" => Gtu,
        "geu" => Geu,
        "num" => Num,
        "nan" => Nan,
        _ => return None,
    })
}

/// The `.and/.or/.xor` and `.ftz` modifiers of `setp` and `set`.
fn comparison_modifiers(mods: &[&str]) -> Option<(Option<BoolOp>, bool)> {
    let mut bool_op = None;
    let mut ftz = false;
    for m in mods {
        match *m {
            "and" => bool_op = Some(BoolOp::And),
            "or" => bool_op = Some(BoolOp::Or),
            "xor" => bool_op = Some(BoolOp::Xor),
            "ftz" => ftz = true,
            _ => return None,
        }
    }
    Some((bool_op, ftz))
}

fn rounding(s: &str) -> Option<(Rounding, bool)> {
    Some(match s {
        "rn" => (Rounding::Rn, false),
        "rz" => (Rounding::Rz, false),
        "rm" => (Rounding::Rm, false),
        "rp" => (Rounding::Rp, false),
        "rna" => (Rounding::Rna, false),
        "rni" => (Rounding::Rn, true),
        "rzi" => (Rounding::Rz, true),
        "rmi" => (Rounding::Rm, true),
        "rpi" => (Rounding::Rp, true),
        _ => return None,
    })
}

/// Modifiers that change nothing on a CPU (cache policy, memory ordering, scope).
fn is_memory_hint(m: &str) -> bool {
    matches!(
        m,
        "nc" | "ca"
            | "cg"
            | "cs"
            | "lu"
            | "cv"
            | "wb"
            | "wt"
            | "volatile"
            | "relaxed"
            | "acquire"
            | "release"
            | "weak"
            | "sys"
            | "gpu"
            | "cta"
            | "cluster"
            | "mmio"
            | "unified"
    ) || m.starts_with("L1::")
        || m.starts_with("L2::")
}

/// Decodes a dotted opcode into its family. The error message names the whole opcode.
pub fn decode(opcode: &str) -> Result<Op, String> {
    let unsupported = || format!("unsupported instruction '{opcode}'");
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let mods: Vec<&str> = parts.collect();
    let ty_of = |m: &str| PtxType::from_name(m);
    let last_ty = || mods.last().and_then(|m| ty_of(m)).ok_or_else(unsupported);
    // Every modifier must be understood: anything left over makes the form unsupported.
    let only = |allowed: &dyn Fn(&str) -> bool| -> Result<(), String> {
        if mods.iter().all(|m| allowed(m)) {
            Ok(())
        } else {
            Err(unsupported())
        }
    };
    Ok(match base {
        "mov" => {
            only(&|m| ty_of(m).is_some())?;
            Op::Mov(last_ty()?)
        }
        "ld" | "ldu" | "st" => {
            let mut space = StateSpace::Generic;
            let mut vec = 1u8;
            for m in &mods[..mods.len().saturating_sub(1)] {
                if let Some(s) = StateSpace::from_name(m) {
                    space = s;
                } else if let Some(n) = m.strip_prefix('v').and_then(|n| n.parse::<u8>().ok()) {
                    if !matches!(n, 2 | 4 | 8) {
                        return Err(unsupported());
                    }
                    vec = n;
                } else if !is_memory_hint(m) {
                    return Err(unsupported());
                }
            }
            let ty = last_ty()?;
            if base == "st" {
                Op::St { space, ty, vec }
            } else {
                Op::Ld { space, ty, vec }
            }
        }
        "cvta" => {
            let to_generic = mods.first() != Some(&"to");
            let rest = if to_generic { &mods[..] } else { &mods[1..] };
            match rest {
                [space, ty] => match (StateSpace::from_name(space), ty_of(ty)) {
                    (Some(space), Some(ty @ (PtxType::U32 | PtxType::U64))) => Op::Cvta {
                        to_generic,
                        space,
                        ty,
                    },
                    _ => return Err(unsupported()),
                },
                _ => return Err(unsupported()),
            }
        }
        "cvt" => {
            if mods.len() < 2 {
                return Err(unsupported());
            }
            let (dst, src) = match (ty_of(mods[mods.len() - 2]), ty_of(mods[mods.len() - 1])) {
                (Some(d), Some(s)) => (d, s),
                _ => return Err(unsupported()),
            };
            if [dst, src]
                .iter()
                .any(|t| matches!(t, PtxType::Pred | PtxType::B128))
            {
                return Err(unsupported());
            }
            let mut m = CvtMods {
                rnd: None,
                integral: false,
                ftz: false,
                sat: false,
                relu: false,
                satfinite: false,
            };
            for x in &mods[..mods.len() - 2] {
                match *x {
                    "ftz" => m.ftz = true,
                    "sat" => m.sat = true,
                    "relu" => m.relu = true,
                    "satfinite" => m.satfinite = true,
                    r => {
                        let (rnd, integral) = rounding(r).ok_or_else(unsupported)?;
                        m.rnd = Some(rnd);
                        m.integral = integral;
                    }
                }
            }
            Op::Cvt { dst, src, mods: m }
        }
        "setp" => {
            let cmp = mods
                .first()
                .and_then(|m| cmp_op(m))
                .ok_or_else(unsupported)?;
            let ty = last_ty()?;
            let (bool_op, ftz) =
                comparison_modifiers(&mods[1..mods.len() - 1]).ok_or_else(unsupported)?;
            if ty == PtxType::Pred || ty == PtxType::B128 {
                return Err(unsupported());
            }
            Op::Setp {
                cmp,
                bool_op,
                ty,
                ftz,
            }
        }
        "set" => {
            // set.CmpOp{.BoolOp}{.ftz}.dtype.stype
            let cmp = mods
                .first()
                .and_then(|m| cmp_op(m))
                .ok_or_else(unsupported)?;
            if mods.len() < 3 {
                return Err(unsupported());
            }
            let (dst, src) = match (ty_of(mods[mods.len() - 2]), ty_of(mods[mods.len() - 1])) {
                (Some(d), Some(s)) => (d, s),
                _ => return Err(unsupported()),
            };
            let (bool_op, ftz) =
                comparison_modifiers(&mods[1..mods.len() - 2]).ok_or_else(unsupported)?;
            let x2 = matches!(src, PtxType::F16x2 | PtxType::BF16x2);
            let dst_ok = if x2 {
                matches!(dst, PtxType::U32 | PtxType::S32) || dst == src
            } else {
                matches!(
                    dst,
                    PtxType::U16
                        | PtxType::S16
                        | PtxType::U32
                        | PtxType::S32
                        | PtxType::F16
                        | PtxType::BF16
                        | PtxType::F32
                )
            };
            if !dst_ok || src == PtxType::Pred || src.size() > 8 {
                return Err(unsupported());
            }
            Op::Set {
                cmp,
                bool_op,
                dst,
                src,
                ftz,
            }
        }
        "selp" => {
            only(&|m| ty_of(m).is_some())?;
            Op::Selp(last_ty()?)
        }
        "bra" => {
            only(&|m| m == "uni")?;
            Op::Bra
        }
        "ret" => {
            only(&|m| m == "uni")?;
            Op::Ret
        }
        "exit" if mods.is_empty() => Op::Exit,
        // `brkpt` stops a kernel like `trap` when no debugger is attached.
        "trap" | "brkpt" if mods.is_empty() => Op::Trap,
        "call" => {
            only(&|m| m == "uni")?;
            Op::Call
        }
        "bar" | "barrier" => decode_bar(base, &mods).ok_or_else(unsupported)?,
        "membar" | "fence" => Op::Fence,
        "shfl" => match mods[..] {
            ["sync", mode, "b32"] => Op::Shfl(match mode {
                "up" => ShflMode::Up,
                "down" => ShflMode::Down,
                "bfly" => ShflMode::Bfly,
                "idx" => ShflMode::Idx,
                _ => return Err(unsupported()),
            }),
            _ => return Err(unsupported()),
        },
        "vote" => {
            // vote.sync.mode.type (and the pre-Volta form without .sync, same meaning here)
            let rest = if mods.first() == Some(&"sync") {
                &mods[1..]
            } else {
                &mods[..]
            };
            match rest {
                ["all", "pred"] => Op::Vote(VoteMode::All),
                ["any", "pred"] => Op::Vote(VoteMode::Any),
                ["uni", "pred"] => Op::Vote(VoteMode::Uni),
                ["ballot", "b32"] => Op::Vote(VoteMode::Ballot),
                _ => return Err(unsupported()),
            }
        }
        "match" => match mods[..] {
            [mode @ ("any" | "all"), "sync", t @ ("b32" | "b64")] => Op::Match {
                all: mode == "all",
                ty: ty_of(t).expect("b32/b64"),
            },
            _ => return Err(unsupported()),
        },
        "activemask" if mods[..] == ["b32"] => Op::Activemask,
        // ldmatrix.sync.aligned.m8n8.num{.trans}{.ss}.b16, .ss = .shared{::cta}; without
        // .ss the address is generic (and must point into shared memory).
        "ldmatrix" => {
            let [
                "sync",
                "aligned",
                "m8n8",
                n @ ("x1" | "x2" | "x4"),
                ref rest @ ..,
                "b16",
            ] = mods[..]
            else {
                return Err(unsupported());
            };
            let (trans, space) = match rest {
                [] => (false, StateSpace::Generic),
                ["trans"] => (true, StateSpace::Generic),
                ["shared" | "shared::cta"] => (false, StateSpace::Shared),
                ["trans", "shared" | "shared::cta"] => (true, StateSpace::Shared),
                _ => return Err(unsupported()),
            };
            Op::Ldmatrix {
                num: n[1..].parse().expect("1, 2 or 4"),
                trans,
                space,
            }
        }
        "mma" => match mods[..] {
            [
                "sync",
                "aligned",
                "m16n8k16",
                "row",
                "col",
                "f32",
                "f16",
                "f16",
                "f32",
            ] => Op::Mma { bf16: false },
            [
                "sync",
                "aligned",
                "m16n8k16",
                "row",
                "col",
                "f32",
                "bf16",
                "bf16",
                "f32",
            ] => Op::Mma { bf16: true },
            _ => return Err(unsupported()),
        },
        "atom" | "red" => decode_atom(base == "red", &mods).ok_or_else(unsupported)?,
        "prmt" if mods[..] == ["b32"] => Op::Int {
            op: IntOp::Prmt,
            ty: PtxType::B32,
        },
        "bfe" => match mods[..] {
            [t @ ("u32" | "s32" | "u64" | "s64")] => Op::Int {
                op: IntOp::Bfe,
                ty: ty_of(t).expect("listed"),
            },
            _ => return Err(unsupported()),
        },
        "bfi" => match mods[..] {
            [t @ ("b32" | "b64")] => Op::Int {
                op: IntOp::Bfi,
                ty: ty_of(t).expect("listed"),
            },
            _ => return Err(unsupported()),
        },
        "shf" => match mods[..] {
            [dir @ ("l" | "r"), mode @ ("wrap" | "clamp"), "b32"] => Op::Int {
                op: IntOp::Shf {
                    left: dir == "l",
                    clamp: mode == "clamp",
                },
                ty: PtxType::B32,
            },
            _ => return Err(unsupported()),
        },
        _ => return decode_arith(base, &mods).ok_or_else(unsupported),
    })
}

/// `bar{.cta}.sync`, `barrier{.cta}.sync{.aligned}`, `bar.arrive`, `bar.red.op.type`,
/// `bar.warp.sync`.
fn decode_bar(base: &str, mods: &[&str]) -> Option<Op> {
    let rest: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| *m != "cta" && *m != "aligned")
        .collect();
    Some(match rest[..] {
        ["sync"] => Op::Bar(BarKind::Sync),
        [] if base == "bar" && mods.is_empty() => return None,
        ["arrive"] => Op::Bar(BarKind::Arrive),
        ["warp", "sync"] if base == "bar" => Op::WarpSync,
        ["red", "popc", "u32"] => Op::Bar(BarKind::Red(BarRed::Popc)),
        ["red", "and", "pred"] => Op::Bar(BarKind::Red(BarRed::And)),
        ["red", "or", "pred"] => Op::Bar(BarKind::Red(BarRed::Or)),
        _ => return None,
    })
}

/// `atom{.sem}{.scope}{.space}.op{.noftz}.type` and `red…` (the destination-less form).
fn decode_atom(red: bool, mods: &[&str]) -> Option<Op> {
    let ty = PtxType::from_name(mods.last()?)?;
    let mut space = StateSpace::Generic;
    let mut op = None;
    for m in &mods[..mods.len() - 1] {
        if let Some(s) = StateSpace::from_name(m) {
            space = s;
            continue;
        }
        op = Some(match *m {
            "add" => AtomOp::Add,
            "min" => AtomOp::Min,
            "max" => AtomOp::Max,
            "inc" => AtomOp::Inc,
            "dec" => AtomOp::Dec,
            "and" => AtomOp::And,
            "or" => AtomOp::Or,
            "xor" => AtomOp::Xor,
            "exch" if !red => AtomOp::Exch,
            "cas" if !red => AtomOp::Cas,
            "noftz" | "relaxed" | "acquire" | "release" | "acq_rel" | "sys" | "gpu" | "cta"
            | "cluster" => continue,
            _ => return None,
        });
    }
    let op = op?;
    if matches!(
        space,
        StateSpace::Param | StateSpace::Const | StateSpace::Local
    ) {
        return None;
    }
    let ok = match op {
        AtomOp::Add => {
            matches!(
                ty,
                PtxType::U32
                    | PtxType::S32
                    | PtxType::U64
                    | PtxType::S64
                    | PtxType::F32
                    | PtxType::F64
            ) || ty.is_half()
        }
        AtomOp::Min | AtomOp::Max => {
            matches!(
                ty,
                PtxType::U32 | PtxType::S32 | PtxType::U64 | PtxType::S64
            )
        }
        AtomOp::Inc | AtomOp::Dec => ty == PtxType::U32,
        AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(ty, PtxType::B32 | PtxType::B64),
        AtomOp::Exch | AtomOp::Cas => matches!(ty, PtxType::B16 | PtxType::B32 | PtxType::B64),
    };
    ok.then_some(Op::Atom { space, op, ty, red })
}

/// Integer and floating-point arithmetic: the type decides the family.
fn decode_arith(base: &str, mods: &[&str]) -> Option<Op> {
    let ty = PtxType::from_name(mods.last()?)?;
    let mods = &mods[..mods.len() - 1];
    if ty == PtxType::B128 {
        return None;
    }
    if ty.is_int() || ty == PtxType::Pred {
        let mul_mode = |mods: &[&str]| -> Option<MulMode> {
            match mods {
                ["lo"] => Some(MulMode::Lo),
                ["hi"] => Some(MulMode::Hi),
                ["wide"] => Some(MulMode::Wide),
                _ => None,
            }
        };
        let plain = mods.is_empty();
        let op = match base {
            "add" | "sub" => {
                let sat = match mods {
                    [] => false,
                    ["sat"] if ty == PtxType::S32 => true,
                    _ => return None,
                };
                if base == "add" {
                    IntOp::Add { sat }
                } else {
                    IntOp::Sub { sat }
                }
            }
            "mul" => IntOp::Mul(mul_mode(mods)?),
            "mad" => IntOp::Mad(mul_mode(mods)?),
            "div" if plain => IntOp::Div,
            "rem" if plain => IntOp::Rem,
            "min" if plain => IntOp::Min,
            "max" if plain => IntOp::Max,
            "abs" if plain => IntOp::Abs,
            "neg" if plain => IntOp::Neg,
            "and" if plain => IntOp::And,
            "or" if plain => IntOp::Or,
            "xor" if plain => IntOp::Xor,
            "not" if plain => IntOp::Not,
            "cnot" if plain => IntOp::CNot,
            "shl" if plain => IntOp::Shl,
            "shr" if plain => IntOp::Shr,
            "popc" if plain => IntOp::Popc,
            "clz" if plain => IntOp::Clz,
            "brev" if plain => IntOp::Brev,
            _ => return None,
        };
        return Some(Op::Int { op, ty });
    }
    let op = match base {
        "add" => FloatOp::Add,
        "sub" => FloatOp::Sub,
        "mul" => FloatOp::Mul,
        "fma" | "mad" => FloatOp::Fma,
        "div" => FloatOp::Div,
        "neg" => FloatOp::Neg,
        "abs" => FloatOp::Abs,
        "min" => FloatOp::Min,
        "max" => FloatOp::Max,
        "rcp" => FloatOp::Rcp,
        "sqrt" => FloatOp::Sqrt,
        "rsqrt" => FloatOp::Rsqrt,
        "ex2" => FloatOp::Ex2,
        "lg2" => FloatOp::Lg2,
        "sin" => FloatOp::Sin,
        "cos" => FloatOp::Cos,
        "tanh" => FloatOp::Tanh,
        _ => return None,
    };
    let mut m = FloatMods::default();
    for x in mods {
        match *x {
            "ftz" => m.ftz = true,
            "sat" => m.sat = true,
            "approx" => m.approx = true,
            "full" => m.full = true,
            "relu" => m.relu = true,
            "NaN" => m.nan = true,
            "xorsign" => m.xorsign_abs = true,
            "abs" if m.xorsign_abs => {}
            "oob" => m.oob = true,
            "noftz" => {}
            r => {
                let (rnd, integral) = rounding(r)?;
                if integral {
                    return None;
                }
                m.rnd = Some(rnd);
            }
        }
    }
    if ty.is_half() && !half_form_allowed(op, ty, &m) {
        return None;
    }
    Some(Op::Float { op, ty, mods: m })
}

/// The modifier combinations the ISA's syntax blocks (9.7.4) allow on half types.
fn half_form_allowed(op: FloatOp, ty: PtxType, m: &FloatMods) -> bool {
    let is_f16 = matches!(ty, PtxType::F16 | PtxType::F16x2);
    let rn_only = matches!(m.rnd, None | Some(Rounding::Rn));
    let no_extra = !m.approx && !m.full && !m.nan && !m.xorsign_abs;
    match op {
        FloatOp::Add | FloatOp::Sub | FloatOp::Mul => {
            rn_only && no_extra && !m.relu && !m.oob && (is_f16 || (!m.ftz && !m.sat))
        }
        FloatOp::Fma => {
            let base = m.rnd == Some(Rounding::Rn) && no_extra && !(m.sat && m.relu);
            let f16_form = !m.oob && is_f16;
            let bf16_form = !m.oob && !m.ftz && !m.sat;
            let oob_form = m.oob && !m.ftz && !m.sat;
            base && (f16_form || bf16_form || oob_form)
        }
        FloatOp::Neg | FloatOp::Abs => {
            m.rnd.is_none() && no_extra && !m.sat && !m.relu && !m.oob && (is_f16 || !m.ftz)
        }
        FloatOp::Min | FloatOp::Max => {
            m.rnd.is_none()
                && !m.approx
                && !m.full
                && !m.sat
                && !m.relu
                && !m.oob
                && (is_f16 || !m.ftz)
        }
        FloatOp::Tanh => {
            m.approx
                && m.rnd.is_none()
                && !m.ftz
                && !m.sat
                && !m.relu
                && !m.oob
                && !m.nan
                && !m.xorsign_abs
        }
        // ex2.approx.f16 (no .ftz) and ex2.approx.ftz.bf16 (.ftz required).
        FloatOp::Ex2 => {
            m.approx
                && m.ftz != is_f16
                && m.rnd.is_none()
                && !m.sat
                && !m.relu
                && !m.oob
                && !m.nan
                && !m.xorsign_abs
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_names_the_whole_unsupported_opcode() {
        assert_eq!(
            decode("tex.2d.v4.f32.f32").unwrap_err(),
            "unsupported instruction 'tex.2d.v4.f32.f32'"
        );
        assert_eq!(
            decode("ld.global.v3.f32").unwrap_err(),
            "unsupported instruction 'ld.global.v3.f32'"
        );
    }

    #[test]
    fn decode_memory_forms() {
        assert_eq!(
            decode("ld.global.nc.v2.f32").unwrap(),
            Op::Ld {
                space: StateSpace::Global,
                ty: PtxType::F32,
                vec: 2
            }
        );
        assert_eq!(
            decode("st.u16").unwrap(),
            Op::St {
                space: StateSpace::Generic,
                ty: PtxType::U16,
                vec: 1
            }
        );
        assert_eq!(
            decode("ld.global.L1::no_allocate.b32").unwrap(),
            Op::Ld {
                space: StateSpace::Global,
                ty: PtxType::B32,
                vec: 1
            }
        );
        assert_eq!(
            decode("cvta.to.global.u64").unwrap(),
            Op::Cvta {
                to_generic: false,
                space: StateSpace::Global,
                ty: PtxType::U64
            }
        );
    }

    #[test]
    fn decode_families_by_type() {
        assert_eq!(
            decode("mul.wide.s32").unwrap(),
            Op::Int {
                op: IntOp::Mul(MulMode::Wide),
                ty: PtxType::S32
            }
        );
        let Op::Float { op, ty, mods } = decode("fma.rn.ftz.sat.f16x2").unwrap() else {
            panic!()
        };
        assert_eq!((op, ty), (FloatOp::Fma, PtxType::F16x2));
        assert!(mods.ftz && mods.sat && mods.rnd == Some(Rounding::Rn));
        let Op::Float { mods, .. } = decode("min.ftz.NaN.xorsign.abs.f16").unwrap() else {
            panic!()
        };
        assert!(mods.nan && mods.xorsign_abs && mods.ftz);
        let Op::Cvt { dst, src, mods } = decode("cvt.rni.s32.f16").unwrap() else {
            panic!()
        };
        assert_eq!(
            (dst, src, mods.rnd, mods.integral),
            (PtxType::S32, PtxType::F16, Some(Rounding::Rn), true)
        );
        let Op::Setp { cmp, bool_op, .. } = decode("setp.gt.and.f32").unwrap() else {
            panic!()
        };
        assert_eq!((cmp, bool_op), (CmpOp::Gt, Some(BoolOp::And)));
    }

    #[test]
    fn unknown_modifier_is_unsupported_not_ignored() {
        assert!(decode("add.cc.u32").is_err());
        assert!(decode("mul.lo.hi.s32").is_err());
    }
}
