//! Resolves names and decodes instructions: `ast::Module` → `checked::Module`.
//!
//! Each opcode is decoded once, here, into its family with normalized modifiers; an opcode that
//! parses but is not supported is reported by its full name and location.

use super::ast::{self, Immediate, OperandKind, StateSpace, Stmt};
use super::checked::*;
use super::isa::{self, DecodeError};
use super::scopes::{MAX_REGISTERS, Name, Scopes};
use super::selectors;
use crate::error::{Diagnostic, Source, Span};
use crate::types::PtxType;
use ptxjit_runtime::{Dim3, block_fits, block_limits};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

type CResult<T> = Result<T, Diagnostic>;

pub fn check(source: &Arc<Source>, m: ast::Module) -> Result<Module, Vec<Diagnostic>> {
    let mut diags = Vec::new();
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
    let mut globals = Vec::new();
    let mut global_names = HashMap::new();
    for g in &m.globals {
        match var_from_decl(source, g)
            .and_then(|v| resolve_addresses(source, g, v, &global_names, &func_ids, &globals))
        {
            Ok(v) => {
                global_names.insert(g.name.clone(), globals.len());
                globals.push(v);
            }
            Err(d) => diags.push(d),
        }
    }
    // `.global`/`.const` variables declared in a body are module variables whose name only
    // their scope sees: placed with the others, in the order the bodies declare them.
    let mut body_globals = Vec::new();
    for f in &order {
        let mut mine = VecDeque::new();
        for v in data_declared_in(f.body.as_deref().unwrap_or(&[])) {
            let var = var_from_decl(source, v).and_then(|var| {
                resolve_addresses(source, v, var, &global_names, &func_ids, &globals)
            });
            mine.push_back(match var {
                Ok(var) => {
                    globals.push(var);
                    Some(globals.len() - 1)
                }
                Err(d) => {
                    diags.push(d);
                    None
                }
            });
        }
        body_globals.push(mine);
    }
    let signatures: Vec<Signature> = order.iter().map(|f| Signature::of(f)).collect();
    let mut functions = Vec::new();
    for (f, body_globals) in order.iter().zip(body_globals) {
        let checker = FunctionChecker {
            source,
            globals: &global_names,
            global_vars: &globals,
            funcs: &func_ids,
            signatures: &signatures,
            callees: HashMap::new(),
            vars: Vec::new(),
            scopes: Scopes::default(),
            limit_reported: Cell::new(false),
            labels: Vec::new(),
            label_pos: Vec::new(),
            label_names: Vec::new(),
            body: Vec::new(),
            params: HashMap::new(),
            param_elem_sizes: Vec::new(),
            return_elem_sizes: Vec::new(),
            carry_flag: None,
            reg_return_stores: Vec::new(),
            body_globals,
            diags: Vec::new(),
        };
        match checker.function(f) {
            Ok(cf) => functions.push(cf),
            Err(mut ds) => diags.append(&mut ds),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut module = Module {
        source: source.clone(),
        functions,
        globals,
    };
    super::calls::rewrite(&mut module)?;
    Ok(module)
}

fn var_from_decl(source: &Arc<Source>, d: &ast::VarDecl) -> CResult<Var> {
    let size = d.size();
    // Limits well above any GPU's (228 KB of shared memory per block, 512 KB of local memory
    // per thread) that keep every allocation reasonable on the host.
    let limit: u64 = match d.space {
        StateSpace::Shared | StateSpace::SharedCluster => 16 << 20,
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
        init_addresses: Vec::new(),
    })
}

/// The `.global`/`.const` declarations of a body, nested scopes included, in text order.
fn data_declared_in(stmts: &[Stmt]) -> Vec<&ast::VarDecl> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Stmt::Var(v) if matches!(v.space, StateSpace::Global | StateSpace::Const) => {
                out.push(v)
            }
            Stmt::Block(inner) => out.extend(data_declared_in(inner)),
            _ => {}
        }
    }
    out
}

/// Resolves the variables' addresses in `d`'s initializer (earlier module variables in
/// `.global` or `.const`, or functions): where in `v` each one goes.
fn resolve_addresses(
    source: &Arc<Source>,
    d: &ast::VarDecl,
    mut v: Var,
    names: &HashMap<String, usize>,
    funcs: &HashMap<String, FuncId>,
    vars: &[Var],
) -> CResult<Var> {
    for a in &d.init_addresses {
        if d.ty.size() != 8 {
            return Err(Diagnostic::new(
                source,
                a.span,
                format!(
                    "the address of '{}' fills 64 bits, but '{}' holds .{} elements",
                    a.name,
                    d.name,
                    d.ty.name()
                ),
            ));
        }
        if let Some(&f) = funcs.get(&a.name) {
            let at = a.element * 8;
            let bytes = v.init.as_mut().expect("an initializer holds the address");
            let token = (FUNCTION_ADDRESS + f as u64).wrapping_add(a.offset as u64);
            bytes[at..at + 8].copy_from_slice(&token.to_le_bytes());
            continue;
        }
        let target = names
            .get(&a.name)
            .copied()
            .filter(|&t| matches!(vars[t].space, StateSpace::Global | StateSpace::Const));
        let Some(target) = target else {
            return Err(Diagnostic::new(
                source,
                a.span,
                format!(
                    "'{}' in the initializer of '{}' is not a .global or .const variable \
                     declared before it",
                    a.name, d.name
                ),
            ));
        };
        v.init_addresses.push(InitAddress {
            at: a.element as u64 * 8,
            target,
            offset: a.offset,
        });
    }
    Ok(v)
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

/// What an indirect call matches a function by: its return and parameter sizes, in order
/// (ptxas passes each by its size), and whether it has a body to call.
#[derive(PartialEq)]
struct Signature {
    returns: Vec<u32>,
    params: Vec<u32>,
    defined: bool,
}

impl Signature {
    /// A kernel is never a callee: only a defined `.func` matches a prototype.
    fn of(f: &ast::Function) -> Signature {
        let callable = f.body.is_some() && f.kind == ast::FunctionKind::Func;
        Signature::declared(&f.returns, &f.params, callable)
    }

    fn declared(returns: &[ast::ParamDecl], params: &[ast::ParamDecl], defined: bool) -> Self {
        let sizes = |ps: &[ast::ParamDecl]| ps.iter().map(|p| p.size()).collect();
        Signature {
            returns: sizes(returns),
            params: sizes(params),
            defined,
        }
    }
}

struct FunctionChecker<'a> {
    source: &'a Arc<Source>,
    globals: &'a HashMap<String, usize>,
    global_vars: &'a [Var],
    funcs: &'a HashMap<String, FuncId>,
    /// By `FuncId`.
    signatures: &'a [Signature],
    /// `.callprototype`/`.calltargets` labels → the functions an indirect call may reach.
    callees: HashMap<String, Vec<FuncId>>,
    vars: Vec<Var>,
    scopes: Scopes,
    limit_reported: Cell<bool>,
    /// The labels of each enclosing `{ }` block, innermost last: a label is local to the
    /// block that defines it (ptxas accepts the same label in two blocks; Triton's inline
    /// assembly repeats `waitLoop:` in every wait), and a branch takes the innermost.
    labels: Vec<HashMap<String, LabelId>>,
    label_pos: Vec<usize>,
    label_names: Vec<String>,
    body: Vec<Inst>,
    /// Parameter and return names → symbol, and their element sizes.
    params: HashMap<String, Symbol>,
    param_elem_sizes: Vec<u32>,
    return_elem_sizes: Vec<u32>,
    /// The register holding CC.CF, once an extended-precision instruction uses it.
    carry_flag: Option<RegId>,
    /// Stores of a `.func`'s `.reg` return values to their slots, before each `ret`.
    reg_return_stores: Vec<Inst>,
    /// The module variables of the body's `.global`/`.const` declarations, in text order
    /// (`None` where one was in error).
    body_globals: VecDeque<Option<usize>>,
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
        let decls = f.params.iter().chain(&f.returns);
        for ((p, symbol), decl) in symbols.chain(returned).zip(decls) {
            let clash = if decl.is_reg {
                self.reg_parameter(decl, symbol)
            } else {
                self.params.insert(p.name.clone(), symbol).is_some()
            };
            if clash {
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
                // Falling off the end returns too.
                let stores = self.reg_return_stores.clone();
                self.body.extend(stores);
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
            maxnreg: f.maxnreg,
            cluster: f.cluster,
        })
    }

    fn collect_labels(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Callees {
                    name,
                    span,
                    callees,
                } => match self.resolve_callees(callees) {
                    Ok(fs) => {
                        if self.callees.insert(name.clone(), fs).is_some() {
                            let msg = format!("'{name}' is declared twice");
                            self.diags.push(self.err(*span, msg));
                        }
                    }
                    Err(d) => self.diags.push(d),
                },
                Stmt::Block(inner) => self.collect_labels(inner),
                _ => {}
            }
        }
    }

    /// Opens the label scope of a block: the labels its own statements define.
    fn declare_labels(&mut self, stmts: &[Stmt]) {
        let mut scope = HashMap::new();
        for s in stmts {
            if let Stmt::Label { name, span } = s {
                if scope.contains_key(name) {
                    self.diags
                        .push(self.err(*span, format!("label '{name}' is defined twice")));
                } else {
                    scope.insert(name.clone(), self.label_names.len());
                    self.label_names.push(name.clone());
                    self.label_pos.push(usize::MAX);
                }
            }
        }
        self.labels.push(scope);
    }

    fn label(&self, name: &str) -> Option<LabelId> {
        self.labels.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// The defined functions a `.callprototype` matches, or the `.calltargets` named.
    fn resolve_callees(&self, callees: &ast::Callees) -> CResult<Vec<FuncId>> {
        match callees {
            ast::Callees::Prototype { returns, params } => {
                let wanted = Signature::declared(returns, params, true);
                Ok((0..self.signatures.len())
                    .filter(|&f| self.signatures[f] == wanted)
                    .collect())
            }
            ast::Callees::Targets(names) => names
                .iter()
                .map(|(name, span)| {
                    self.funcs.get(name).copied().ok_or_else(|| {
                        self.err(*span, format!("'{name}' in .calltargets is not a function"))
                    })
                })
                .collect(),
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        self.declare_labels(stmts);
        for s in stmts {
            match s {
                Stmt::Reg(r) => {
                    for name in &r.names {
                        if let Err(msg) = self.scopes.declare_reg(name, r.ty, r.vector) {
                            self.diags.push(self.err(name.span, msg));
                        }
                    }
                }
                Stmt::Var(v) if matches!(v.space, StateSpace::Global | StateSpace::Const) => {
                    let placed = self
                        .body_globals
                        .pop_front()
                        .expect("collected in this order");
                    if let Some(g) = placed
                        && let Err(msg) = self.scopes.declare_global(&v.name, g)
                    {
                        self.diags.push(self.err(v.span, msg));
                    }
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
                    let id = self.labels.last().expect("declared")[name];
                    self.label_pos[id] = self.body.len();
                }
                Stmt::Callees { .. } => {}
                Stmt::Inst(i) => self.push_instruction(i),
                Stmt::Block(inner) => {
                    self.scopes.push();
                    self.block(inner);
                    self.scopes.pop();
                }
            }
        }
        self.labels.pop();
    }

    /// Checks `i` into the body (a function of its own: `block` recurses once per nesting
    /// level, so its frame stays small).
    fn push_instruction(&mut self, i: &ast::Instruction) {
        match self.instruction(i) {
            Ok(inst) if inst.op == Op::Movmatrix => {
                if let Err(d) = self.movmatrix(inst) {
                    self.diags.push(d);
                }
            }
            Ok(inst) => {
                if inst.op == Op::Ret {
                    let stores = self.reg_return_stores.iter().map(|st| Inst {
                        guard: inst.guard,
                        ..st.clone()
                    });
                    self.body.extend(stores.collect::<Vec<_>>());
                }
                self.body.push(inst)
            }
            Err(d) => self.diags.push(d),
        }
    }

    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a` as the shuffles it amounts to. Lane `l`
    /// holds row `l / 4`, columns `2(l % 4)` and `+1` of an 8×8 matrix of b16 (low half
    /// first); of the transpose it receives `M[2(l % 4)][l / 4]` and `M[2(l % 4) + 1][l / 4]`,
    /// held by lanes `8(l % 4) + l / 8` and 4 more, in their half `(l / 4) % 2`:
    ///
    /// ```text
    /// src0 = 8 * (lane & 3) + (lane >> 3);  w0 = shfl.idx(a, src0)
    /// src1 = src0 + 4;                      w1 = shfl.idx(a, src1)
    /// d = prmt(w0, w1, ((lane >> 2) & 1) ? 0x7632 : 0x5410)
    /// ```
    ///
    /// The shuffles make it a warp collective, with their checks (all 32 lanes take part).
    fn movmatrix(&mut self, inst: Inst) -> CResult<()> {
        let span = inst.span;
        let reg = |c: &mut Self, name: &str| -> CResult<Arg> {
            let r = c.scopes.hidden_reg(name, PtxType::U32);
            Ok(Arg::Reg(c.within_limit(r, span)?))
        };
        let [lane, t, src0, src1, w0, w1, sel] = [
            "movmatrix.lane",
            "movmatrix.t",
            "movmatrix.src0",
            "movmatrix.src1",
            "movmatrix.w0",
            "movmatrix.w1",
            "movmatrix.sel",
        ]
        .map(|n| reg(self, n));
        let (lane, t, src0, src1, w0, w1, sel) = (lane?, t?, src0?, src1?, w0?, w1?, sel?);
        let imm = |v: u64| Arg::Imm(Immediate::Int(v));
        let int = |op, ty| Op::Int { op, ty };
        let add = int(IntOp::Add { sat: false }, PtxType::U32);
        let (and, shl, shr) = (
            int(IntOp::And, PtxType::B32),
            int(IntOp::Shl, PtxType::B32),
            int(IntOp::Shr, PtxType::U32),
        );
        let a = inst.args[1].clone();
        let shfl = |w: &Arg, src: Arg| {
            let args = vec![w.clone(), a.clone(), src, imm(0x1f), imm(u32::MAX as u64)];
            (Op::Shfl(ShflMode::Idx), args)
        };
        let steps = [
            (
                Op::Mov(PtxType::U32),
                vec![lane.clone(), Arg::Special(Special::LaneId)],
            ),
            (and, vec![t.clone(), lane.clone(), imm(3)]),
            (shl, vec![t.clone(), t.clone(), imm(3)]),
            (shr, vec![src0.clone(), lane.clone(), imm(3)]),
            (add, vec![src0.clone(), src0.clone(), t.clone()]),
            (add, vec![src1.clone(), src0.clone(), imm(4)]),
            shfl(&w0, src0),
            shfl(&w1, src1),
            (shr, vec![t.clone(), lane, imm(2)]),
            (and, vec![t.clone(), t.clone(), imm(1)]),
            (
                int(IntOp::Mad(MulMode::Lo), PtxType::U32),
                vec![sel.clone(), t, imm(0x2222), imm(0x5410)],
            ),
            (
                int(IntOp::Prmt, PtxType::B32),
                vec![inst.args[0].clone(), w0, w1, sel],
            ),
        ];
        for (op, args) in steps {
            self.body.push(Inst {
                guard: inst.guard,
                op,
                args,
                span,
                opcode: inst.opcode.clone(),
            });
        }
        Ok(())
    }

    /// A `.func`'s `.reg` parameter or return value is a register of the body: a parameter
    /// is loaded from its slot on entry, a return value stored to its slot before each `ret`.
    /// Whether the name was already taken.
    fn reg_parameter(&mut self, p: &ast::ParamDecl, symbol: Symbol) -> bool {
        let name = ast::RegName {
            name: p.name.clone(),
            range: None,
            span: p.span,
        };
        if self.scopes.declare_reg(&name, p.ty, p.vector).is_err() {
            return true;
        }
        let reg = match self.lookup(&p.name) {
            Some(Name::Reg(id)) => Arg::Reg(id),
            Some(Name::Vector(first, n)) => Arg::Vector((first..first + n).map(Arg::Reg).collect()),
            _ => unreachable!("just declared"),
        };
        let slot = Arg::Addr {
            base: AddrBase::Symbol(symbol),
            offset: 0,
        };
        let (space, ty, vec) = (StateSpace::Param, p.ty, p.vector as u8);
        let (op, args) = match symbol {
            Symbol::Return(_) => (Op::St { space, ty, vec }, vec![slot, reg]),
            _ => (Op::Ld { space, ty, vec }, vec![reg, slot]),
        };
        let inst = Inst {
            guard: None,
            op,
            args,
            span: p.span,
            opcode: format!("(.reg parameter '{}')", p.name),
        };
        match symbol {
            Symbol::Return(_) => self.reg_return_stores.push(inst),
            _ => self.body.push(inst),
        }
        false
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
            Some(Name::Global(g)) => Some(Symbol::Global(g)),
            Some(Name::Reg(_) | Name::Vector(..)) => None,
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
            Some(Name::Vector(..)) => Err(self.err(
                span,
                format!("'{name}' is a vector register: name one element ('{name}.x')"),
            )),
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
        let decoded = match isa::decode_instruction(&i.opcode, i.operands.len()) {
            Ok(d) => d,
            Err(DecodeError::Unsupported(msg)) => return Err(self.err(i.opcode_span, msg)),
            Err(DecodeError::Operands(msg)) => return Err(self.err(i.span, msg)),
        };
        let mut op = decoded.op;
        // The video instructions' operand selectors and negations belong to the instruction.
        let video_operands;
        let operands = match op {
            Op::Video(v) => {
                let is_name = |n: &str| self.lookup(n).is_some() || self.symbol(n).is_some();
                let (v, plain) = selectors::video_operands(v, &i.operands, is_name)
                    .map_err(|(span, msg)| self.err(span, msg))?;
                op = Op::Video(v);
                video_operands = plain;
                &video_operands
            }
            _ => &i.operands,
        };
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
        let mut args = Vec::new();
        for (k, o) in operands.iter().enumerate() {
            // (The first operand is a destination or an address.)
            let sum = (k > 0)
                .then(|| self.register_plus_constant(o, guard))
                .flatten();
            args.push(match sum {
                Some(sum) => sum?,
                None => self.operand(o, op)?,
            });
        }
        // `ld.u32 r, a[1]` addresses memory without brackets where the line has `[a]`.
        for (k, (arg, o)) in args.iter_mut().zip(&i.operands).enumerate() {
            if let Arg::SymbolAddr(sym, offset) = *arg
                && matches!(o.kind, OperandKind::Element(..))
                && decoded.is_address(k)
            {
                *arg = Arg::Addr {
                    base: AddrBase::Symbol(sym),
                    offset,
                };
            }
        }
        // `[tensorMap, {c0, c1}]`: the map's address, then the coordinates as a vector; only
        // where a tensor copy's line has it.
        let tensor_at = match op {
            Op::CpAsyncBulkTensor { store, .. } => Some(if store { 0 } else { 1 }),
            _ => None,
        };
        for (k, o) in i.operands.iter().enumerate() {
            let is_tensor = matches!(o.kind, OperandKind::TensorAddress { .. });
            if is_tensor != (tensor_at == Some(k)) {
                let msg = match is_tensor {
                    true => "a [tensorMap, {coordinates}] operand belongs to cp.async.bulk.tensor",
                    false => "expected [tensorMap, {coordinates}]",
                };
                return Err(self.err(o.span, msg.to_string()));
            }
        }
        for (k, o) in i.operands.iter().enumerate().rev() {
            if let OperandKind::TensorAddress { coords, .. } = &o.kind {
                let mut v = Vec::new();
                for c in coords {
                    v.push(self.operand(c, op)?);
                }
                args.insert(k + 1, Arg::Vector(v));
            }
        }
        // `vote` without `.sync` votes among the warp's active lanes: here, between
        // synchronization points, every lane of the warp that has not exited.
        if let (Op::Vote(_), 2) = (op, args.len()) {
            args.push(Arg::Imm(Immediate::Int(u32::MAX as u64)));
        }
        // The carry flag of extended-precision arithmetic: one hidden register per function.
        if op.carry().is_some() {
            let flag = *self
                .carry_flag
                .get_or_insert_with(|| self.scopes.hidden_reg("CC.CF", PtxType::U32));
            args.push(Arg::Reg(self.within_limit(flag, i.span)?));
        }
        let inst = Inst {
            guard,
            op,
            args,
            span: i.span,
            opcode: i.opcode.clone(),
        };
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

    /// A source `r+imm` (or `r + imm`) with `r` an integer register: ptxas takes the sum, so
    /// it is computed into a hidden register by an `add` before the instruction. `None` for
    /// any other operand.
    fn register_plus_constant(
        &mut self,
        o: &ast::Operand,
        guard: Option<Guard>,
    ) -> Option<CResult<Arg>> {
        let OperandKind::Name(name, offset) = &o.kind else {
            return None;
        };
        let Some(Name::Reg(id)) = self.lookup(name).filter(|_| *offset != 0) else {
            return None;
        };
        let ty = self.scopes.reg_type(id);
        if !ty.is_int() {
            let msg = format!(
                "'{name}' is a .{} register: only integers take '+'",
                ty.name()
            );
            return Some(Err(self.err(o.span, msg)));
        }
        let sum = self.scopes.hidden_reg(&format!("{name}+{offset}"), ty);
        let add = Inst {
            guard,
            op: Op::Int {
                op: IntOp::Add { sat: false },
                ty,
            },
            args: vec![
                Arg::Reg(sum),
                Arg::Reg(id),
                Arg::Imm(Immediate::Int(*offset as u64)),
            ],
            span: o.span,
            opcode: format!("add.{}", ty.name()),
        };
        self.body.push(add);
        Some(self.within_limit(sum, o.span).map(Arg::Reg))
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
                if let Some(Name::Vector(first, n)) = self.lookup(name) {
                    // As `{v.x, v.y, ...}`.
                    let last = self.within_limit(first + n - 1, o.span)?;
                    if *offset != 0 {
                        return Err(
                            self.err(o.span, "a register cannot take an offset outside [ ]")
                        );
                    }
                    return Ok(Arg::Vector((first..=last).map(Arg::Reg).collect()));
                }
                if let Some(s) = special(name) {
                    return Ok(Arg::Special(s));
                }
                // The ISA's one predefined constant (it may be shadowed by a declared name).
                if name == "WARP_SZ" && *offset == 0 && self.symbol(name).is_none() {
                    return Ok(Arg::Imm(Immediate::Int(32)));
                }
                if matches!(op, Op::Bra)
                    && let Some(l) = self.label(name)
                {
                    return Ok(Arg::Label(l));
                }
                if let Some(&f) = self.funcs.get(name) {
                    // Called, or taken as a value (`mov.u64 %rd, f`).
                    return Ok(if matches!(op, Op::Call) {
                        Arg::Func(f)
                    } else {
                        Arg::Imm(Immediate::Int(FUNCTION_ADDRESS + f as u64))
                    });
                }
                if matches!(op, Op::Call)
                    && let Some(fs) = self.callees.get(name)
                {
                    return Ok(Arg::Callees(fs.clone()));
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
            OperandKind::Address { base, offset }
            | OperandKind::TensorAddress { base, offset, .. } => {
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
            OperandKind::Neg(_) => {
                return Err(self.err(o.span, "'-' negates only vmad's a, b and c"));
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
            "%clusterid" => Special::ClusterId(d),
            "%nclusterid" => Special::NClusterId(d),
            "%cluster_ctaid" => Special::ClusterCtaId(d),
            "%cluster_nctaid" => Special::ClusterNCtaId(d),
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
        "%total_smem_size" | "%aggr_smem_size" => Special::TotalSmemSize,
        "%cluster_ctarank" => Special::ClusterCtaRank,
        "%cluster_nctarank" => Special::ClusterNCtaRank,
        "%is_explicit_cluster" => Special::IsExplicitCluster,
        // Environment registers the driver would set: none is, so all read 0.
        _ if name
            .strip_prefix("%envreg")
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n < 32) =>
        {
            Special::Constant(0)
        }
        "%lanemask_eq" => Special::LaneMask(CmpOp::Eq),
        "%lanemask_le" => Special::LaneMask(CmpOp::Le),
        "%lanemask_lt" => Special::LaneMask(CmpOp::Lt),
        "%lanemask_ge" => Special::LaneMask(CmpOp::Ge),
        "%lanemask_gt" => Special::LaneMask(CmpOp::Gt),
        _ => return None,
    })
}
