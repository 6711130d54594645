//! Calls the lowering cannot make as calls, rewritten in the checked module.
//!
//! - The device runtime's grid barrier: libcudadevrt's `cudaCGSynchronize` calls the driver's
//!   system call `__cuda_syscall_CGS_sync`, declared and never defined; such a call becomes
//!   [`Op::GridSync`].
//! - A `.func` that waits for other threads (barriers, warp collectives, the grid barrier) is
//!   inlined at every direct call: a cooperative kernel stops each thread at a sync point and
//!   runs the others (`lower::sync`), which a native call frame cannot survive. The callee's
//!   registers, variables and labels are renumbered after the caller's, its parameters and
//!   return values are the call's `.param` variables, and its `ret` branches past the call.
//!   Its `.shared` variables become module variables first: one per block, whichever call
//!   reaches them, as for a called function.
//!   Such a function is then never called, and not compiled (`jit`); calling one through a
//!   pointer is refused where it is lowered.

use super::ast::StateSpace;
use super::checked::{
    AddrBase, Arg, FuncId, Function, Guard, Inst, Module, Op, Symbol, direct_call,
};
use crate::error::Diagnostic;

/// The driver's grid barrier: its name, return and parameter sizes.
const GRID_SYNC: (&str, &[u32], &[u32]) = ("__cuda_syscall_CGS_sync", &[4], &[8, 4]);

/// Rewrites `module`'s calls as described above.
pub fn rewrite(module: &mut Module) -> Result<(), Vec<Diagnostic>> {
    mark_grid_syncs(module);
    let cooperative = inlined_functions(module);
    for f in (0..module.functions.len()).filter(|&f| cooperative[f]) {
        hoist_shared_variables(module, f);
    }
    let mut state = vec![Visit::New; module.functions.len()];
    let mut diags = Vec::new();
    for f in 0..module.functions.len() {
        if let Err(d) = inline_into(module, f, &cooperative, &mut state) {
            diags.push(d);
        }
    }
    if diags.is_empty() { Ok(()) } else { Err(diags) }
}

/// The function a direct call names.
fn callee(inst: &Inst) -> Option<FuncId> {
    (inst.op == Op::Call)
        .then(|| direct_call(&inst.args).map(|(_, f, _)| f))
        .flatten()
}

fn mark_grid_syncs(module: &mut Module) {
    let (name, returns, params) = GRID_SYNC;
    let matches = |f: &Function| {
        f.name == name
            && f.body.is_none()
            && f.returns.iter().map(|p| p.size).eq(returns.iter().copied())
            && f.params.iter().map(|p| p.size).eq(params.iter().copied())
    };
    let syscalls: Vec<bool> = module.functions.iter().map(matches).collect();
    for f in &mut module.functions {
        for inst in f.body.iter_mut().flatten() {
            if callee(inst).is_some_and(|c| syscalls[c]) {
                inst.op = Op::GridSync;
            }
        }
    }
}

/// For each function, whether it is a defined `.func` that waits for other threads, itself or
/// through the functions it calls directly (and so is inlined at every direct call).
pub fn inlined_functions(module: &Module) -> Vec<bool> {
    let fs = &module.functions;
    let mut coop: Vec<bool> = fs
        .iter()
        .map(|f| f.body.iter().flatten().any(|i| i.op.cooperates()))
        .collect();
    loop {
        let mut changed = false;
        for (i, f) in fs.iter().enumerate() {
            if !coop[i]
                && f.body
                    .iter()
                    .flatten()
                    .any(|inst| callee(inst).is_some_and(|c| coop[c]))
            {
                coop[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    fs.iter()
        .zip(coop)
        .map(|(f, c)| c && f.kind == super::ast::FunctionKind::Func && f.body.is_some())
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    Inlining,
    Done,
}

/// Inlines, into function `f`, every direct call of a function of `cooperative` (whose own
/// calls are inlined first).
fn inline_into(
    module: &mut Module,
    f: FuncId,
    cooperative: &[bool],
    state: &mut [Visit],
) -> Result<(), Diagnostic> {
    match state[f] {
        Visit::Done => return Ok(()),
        Visit::Inlining => {
            let func = &module.functions[f];
            return Err(Diagnostic::new(
                &module.source,
                func.span,
                format!(
                    "'{}' waits for other threads and calls itself (directly or not): such a \
                     function is inlined, which recursion prevents",
                    func.name
                ),
            ));
        }
        Visit::New => {}
    }
    state[f] = Visit::Inlining;
    let calls: Vec<FuncId> = module.functions[f]
        .body
        .iter()
        .flatten()
        .filter_map(callee)
        .filter(|&c| cooperative[c])
        .collect();
    for &c in &calls {
        inline_into(module, c, cooperative, state)?;
    }
    if !calls.is_empty() {
        let body = module.functions[f]
            .body
            .take()
            .expect("calls are in a body");
        let mut caller = std::mem::replace(&mut module.functions[f], placeholder());
        let result = inline_calls(module, &mut caller, body, cooperative);
        module.functions[f] = caller;
        result?;
    }
    state[f] = Visit::Done;
    Ok(())
}

/// Moves function `f`'s `.shared` variables to the module's.
fn hoist_shared_variables(module: &mut Module, f: FuncId) {
    let func = &mut module.functions[f];
    if !func.vars.iter().any(|v| v.space == StateSpace::Shared) {
        return;
    }
    let mut to = Vec::with_capacity(func.vars.len());
    let mut kept = Vec::new();
    for v in std::mem::take(&mut func.vars) {
        if v.space == StateSpace::Shared {
            to.push(Symbol::Global(module.globals.len()));
            module.globals.push(v);
        } else {
            to.push(Symbol::Local(kept.len()));
            kept.push(v);
        }
    }
    func.vars = kept;
    let map = Renumber {
        regs: 0,
        vars: 0,
        labels: 0,
        arguments: (0..func.params.len()).map(Symbol::Param).collect(),
        returns: (0..func.returns.len()).map(Symbol::Return).collect(),
        locals: Some(to),
    };
    if let Some(body) = &mut func.body {
        for inst in body.iter_mut() {
            *inst = map.inst(inst);
        }
    }
}

fn placeholder() -> Function {
    Function {
        name: String::new(),
        kind: super::ast::FunctionKind::Func,
        span: crate::error::Span::default(),
        params: Vec::new(),
        params_size: 0,
        returns: Vec::new(),
        regs: Vec::new(),
        vars: Vec::new(),
        body: None,
        labels: Vec::new(),
        label_names: Vec::new(),
        reqntid: None,
        maxntid: None,
        maxnreg: None,
        cluster: Default::default(),
    }
}

/// `caller`'s new body: `body` with each call of a cooperative function replaced by the
/// callee's body.
fn inline_calls(
    module: &Module,
    caller: &mut Function,
    body: Vec<Inst>,
    cooperative: &[bool],
) -> Result<(), Diagnostic> {
    let mut out = Vec::with_capacity(body.len());
    // Where each old instruction starts in `out` (and one past the end).
    let mut starts = Vec::with_capacity(body.len() + 1);
    // Labels added for the inlined bodies: (label, position in `out`).
    let mut added: Vec<(usize, usize)> = Vec::new();
    let old_labels = caller.labels.len();
    for inst in body {
        starts.push(out.len());
        let Some(c) = callee(&inst).filter(|&c| cooperative[c]) else {
            out.push(inst);
            continue;
        };
        let callee = &module.functions[c];
        let err = |message: String| Diagnostic::new(&module.source, inst.span, message);
        let (rets, _, params) = direct_call(&inst.args).expect("`callee` found a direct call");
        if let Some(why) = callee.call_mismatch(rets.len(), params.len()) {
            return Err(err(why));
        }
        let slot = |a: &Arg| match a {
            Arg::SymbolAddr(Symbol::Local(v), 0) => Some(Symbol::Local(*v)),
            _ => None,
        };
        let returns: Option<Vec<Symbol>> = rets.iter().map(slot).collect();
        let arguments: Option<Vec<Symbol>> = params.iter().map(slot).collect();
        let (Some(returns), Some(arguments)) = (returns, arguments) else {
            return Err(err(format!(
                "'{}' waits for other threads, so its calls are inlined, and pass .param \
                 variables (not registers or values)",
                callee.name
            )));
        };
        let map = Renumber {
            regs: caller.regs.len() as u32,
            vars: caller.vars.len(),
            labels: caller.labels.len() + added.len(),
            arguments,
            returns,
            locals: None,
        };
        let after = map.labels + callee.labels.len();
        // A guarded call: the body runs only where the guard holds.
        if let Some(g) = inst.guard {
            out.push(branch(
                Some(Guard {
                    reg: g.reg,
                    negated: !g.negated,
                }),
                after,
                &inst,
            ));
        }
        let start = out.len();
        let callee_body = callee
            .body
            .as_ref()
            .expect("cooperative functions have bodies");
        for ci in callee_body {
            if ci.op == Op::Ret {
                out.push(branch(ci.guard.map(|g| map.guard(g)), after, ci));
            } else {
                out.push(map.inst(ci));
            }
        }
        for (k, &p) in callee.labels.iter().enumerate() {
            added.push((map.labels + k, start + p));
        }
        caller.label_names.extend(
            callee
                .label_names
                .iter()
                .map(|n| format!("{}::{n}", callee.name)),
        );
        added.push((after, out.len()));
        caller
            .label_names
            .push(format!("{}::<return>", callee.name));
        caller.regs.extend(callee.regs.iter().cloned());
        caller.vars.extend(callee.vars.iter().cloned());
    }
    starts.push(out.len());
    for pos in caller.labels.iter_mut().take(old_labels) {
        *pos = starts[*pos];
    }
    debug_assert!(
        added
            .iter()
            .enumerate()
            .all(|(k, &(l, _))| l == old_labels + k)
    );
    caller.labels.extend(added.into_iter().map(|(_, pos)| pos));
    caller.body = Some(out);
    Ok(())
}

/// `bra label` (guarded), at `at`'s place in the text.
fn branch(guard: Option<Guard>, label: usize, at: &Inst) -> Inst {
    Inst {
        guard,
        op: Op::Bra,
        args: vec![Arg::Label(label)],
        span: at.span,
        opcode: "bra".into(),
    }
}

/// How a callee's ids become the caller's.
struct Renumber {
    regs: u32,
    vars: usize,
    labels: usize,
    /// The call's `.param` variables for the callee's parameters and return values.
    arguments: Vec<Symbol>,
    returns: Vec<Symbol>,
    /// Where each variable goes, if not `vars` further on.
    locals: Option<Vec<Symbol>>,
}

impl Renumber {
    fn inst(&self, i: &Inst) -> Inst {
        Inst {
            guard: i.guard.map(|g| self.guard(g)),
            op: i.op,
            args: i.args.iter().map(|a| self.arg(a)).collect(),
            span: i.span,
            opcode: i.opcode.clone(),
        }
    }

    fn guard(&self, g: Guard) -> Guard {
        Guard {
            reg: g.reg + self.regs,
            negated: g.negated,
        }
    }

    fn symbol(&self, s: Symbol) -> Symbol {
        match s {
            Symbol::Global(_) => s,
            Symbol::Local(v) => match &self.locals {
                Some(to) => to[v],
                None => Symbol::Local(v + self.vars),
            },
            Symbol::Param(p) => self.arguments[p],
            Symbol::Return(r) => self.returns[r],
        }
    }

    fn arg(&self, a: &Arg) -> Arg {
        match a {
            Arg::Reg(r) => Arg::Reg(r + self.regs),
            Arg::Not(r) => Arg::Not(r + self.regs),
            Arg::Addr {
                base: AddrBase::Reg(r),
                offset,
            } => Arg::Addr {
                base: AddrBase::Reg(r + self.regs),
                offset: *offset,
            },
            Arg::Addr {
                base: AddrBase::Symbol(s),
                offset,
            } => Arg::Addr {
                base: AddrBase::Symbol(self.symbol(*s)),
                offset: *offset,
            },
            Arg::SymbolAddr(s, offset) => Arg::SymbolAddr(self.symbol(*s), *offset),
            Arg::Vector(items) => Arg::Vector(items.iter().map(|a| self.arg(a)).collect()),
            Arg::List(items) => Arg::List(items.iter().map(|a| self.arg(a)).collect()),
            Arg::Pair(d, p) => Arg::Pair(Box::new(self.arg(d)), Box::new(self.arg(p))),
            Arg::Label(l) => Arg::Label(l + self.labels),
            Arg::Addr {
                base: AddrBase::Absolute,
                ..
            }
            | Arg::Imm(_)
            | Arg::Special(_)
            | Arg::Func(_)
            | Arg::Callees(_)
            | Arg::Sink => a.clone(),
        }
    }
}
