//! Register liveness over a function's instructions, so that a cooperative kernel saves at a
//! synchronization point only the registers still needed after it.

use crate::frontend::checked::{Arg, Function, Inst, Op};

/// A set of registers.
#[derive(Clone, PartialEq, Eq)]
struct Set(Vec<u64>);

impl Set {
    fn new(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, r: u32) {
        self.0[r as usize / 64] |= 1 << (r % 64);
    }
    fn remove(&mut self, r: u32) {
        self.0[r as usize / 64] &= !(1 << (r % 64));
    }
    fn union_with(&mut self, o: &Set) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn members(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (w, bits) in self.0.iter().enumerate() {
            for b in 0..64 {
                if bits >> b & 1 == 1 {
                    out.push((w * 64 + b) as u32);
                }
            }
        }
        out
    }
}

/// Registers an argument mentions.
pub(super) fn regs_of(arg: &Arg, out: &mut Vec<u32>) {
    match arg {
        Arg::Reg(r) | Arg::Not(r) => out.push(*r),
        Arg::Addr {
            base: crate::frontend::checked::AddrBase::Reg(r),
            ..
        } => out.push(*r),
        Arg::Vector(v) | Arg::List(v) => v.iter().for_each(|a| regs_of(a, out)),
        Arg::Pair(a, b) => {
            regs_of(a, out);
            regs_of(b, out);
        }
        _ => {}
    }
}

/// Each register an argument mentions replaced by `to(register)` (where [`regs_of`] finds
/// them).
pub(super) fn rename_regs(arg: &mut Arg, to: &mut impl FnMut(u32) -> u32) {
    match arg {
        Arg::Reg(r) | Arg::Not(r) => *r = to(*r),
        Arg::Addr {
            base: crate::frontend::checked::AddrBase::Reg(r),
            ..
        } => *r = to(*r),
        Arg::Vector(v) | Arg::List(v) => v.iter_mut().for_each(|a| rename_regs(a, to)),
        Arg::Pair(a, b) => {
            rename_regs(a, to);
            rename_regs(b, to);
        }
        _ => {}
    }
}

/// Whether the instruction's first operand is only written (a plain destination).
fn first_is_destination(op: Op) -> bool {
    match op {
        Op::St { .. }
        | Op::Bra
        | Op::Ret
        | Op::Exit
        | Op::Trap
        | Op::Call
        | Op::Fence
        | Op::GridDepControl
        | Op::CpAsync { .. }
        | Op::CpAsyncBulk { .. }
        | Op::CpAsyncBulkTensor { .. }
        | Op::TensormapReplace { .. }
        | Op::TensormapCopy
        | Op::Hint
        | Op::CpAsyncGroup
        | Op::WarpSync => false,
        Op::Bar(crate::frontend::checked::BarKind::Red(_)) => true,
        Op::Bar(_) => false,
        Op::Atom { red, .. } => !red,
        _ => true,
    }
}

/// Whether the instruction's first argument is where it writes its result (registers).
pub fn writes_first(inst: &Inst) -> bool {
    matches!(
        inst.args.first(),
        Some(Arg::Reg(_) | Arg::Vector(_) | Arg::Pair(..) | Arg::List(_))
    ) && first_is_destination(inst.op)
}

/// Registers the instruction writes (if it executes).
pub fn destinations(inst: &Inst) -> Vec<u32> {
    let mut defs = Vec::new();
    if writes_first(inst) {
        regs_of(&inst.args[0], &mut defs);
    }
    // `.cc` writes the carry flag, the last argument.
    if let (Some(c), Some(flag)) = (inst.op.carry(), inst.args.last())
        && c.carry_out
    {
        regs_of(flag, &mut defs);
    }
    defs
}

/// Whether the instruction reads its destination's registers too: `wgmma`'s D is its
/// accumulator.
pub fn reads_destination(inst: &Inst) -> bool {
    matches!(inst.op, Op::Wgmma(_))
}

/// Registers the instruction reads: its guard, sources and address operands.
pub fn sources(inst: &Inst) -> Vec<u32> {
    let mut uses: Vec<u32> = inst.guard.iter().map(|g| g.reg).collect();
    let skip = usize::from(!destinations(inst).is_empty() && !reads_destination(inst));
    for a in &inst.args[skip..] {
        regs_of(a, &mut uses);
    }
    uses
}

/// (registers read, registers certainly written) by one instruction.
fn uses_defs(inst: &Inst) -> (Vec<u32>, Vec<u32>) {
    let mut uses = sources(inst);
    let mut defs = destinations(inst);
    // A guarded write may not happen: it does not end the old value's life.
    if inst.guard.is_some() {
        uses.append(&mut defs);
    }
    (uses, defs)
}

/// Registers live before (`live_in`) and after (`live_out`) each instruction: needed by some
/// later instruction.
pub struct Liveness {
    pub live_in: Vec<Vec<u32>>,
    pub live_out: Vec<Vec<u32>>,
}

impl Liveness {
    /// Registers live when execution reaches instruction `pos` (none past the end).
    pub fn at(&self, pos: usize) -> &[u32] {
        self.live_in.get(pos).map_or(&[], Vec::as_slice)
    }
}

/// The instructions execution may go to after each instruction of `f`'s body.
pub fn successors(f: &Function) -> Vec<Vec<usize>> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let n = body.len();
    body.iter()
        .enumerate()
        .map(|(i, inst)| {
            let target = match inst.args.first() {
                Some(Arg::Label(l)) if inst.op == Op::Bra => Some(f.labels[*l]),
                _ => None,
            };
            let mut s = Vec::new();
            match inst.op {
                Op::Bra => {
                    s.extend(target);
                    if inst.guard.is_some() {
                        s.push(i + 1);
                    }
                }
                Op::Ret | Op::Exit | Op::Trap if inst.guard.is_none() => {}
                _ => s.push(i + 1),
            }
            s.retain(|&j| j < n);
            s
        })
        .collect()
}

pub fn analyze(f: &Function) -> Liveness {
    let Some(body) = &f.body else {
        return Liveness {
            live_in: Vec::new(),
            live_out: Vec::new(),
        };
    };
    let n = body.len();
    let nregs = f.regs.len();
    let info: Vec<(Vec<u32>, Vec<u32>)> = body.iter().map(uses_defs).collect();
    let succs = successors(f);
    let mut live_in = vec![Set::new(nregs); n];
    let mut live_out = vec![Set::new(nregs); n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let mut out = Set::new(nregs);
            for &j in &succs[i] {
                out.union_with(&live_in[j]);
            }
            let mut inn = out.clone();
            for &d in &info[i].1 {
                inn.remove(d);
            }
            for &u in &info[i].0 {
                inn.insert(u);
            }
            if inn != live_in[i] || out != live_out[i] {
                live_in[i] = inn;
                live_out[i] = out;
                changed = true;
            }
        }
    }
    Liveness {
        live_in: live_in.iter().map(Set::members).collect(),
        live_out: live_out.iter().map(Set::members).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::check_ptx;

    #[test]
    fn only_values_used_later_are_live_and_loops_carry_theirs() {
        let m = check_ptx(
            "t.ptx",
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
             .reg .b32 %a, %b, %c, %i;\n.reg .pred %p;\n\
             mov.u32 %a, 1;\nmov.u32 %b, 2;\nmov.u32 %i, 0;\nLOOP:\nbar.sync 0;\nadd.u32 %c, %a, %i;\n\
             add.u32 %i, %i, 1;\nsetp.lt.u32 %p, %i, 4;\n@%p bra LOOP;\nret;\n}\n",
        )
        .unwrap();
        let f = &m.functions[0];
        let live = analyze(f).live_out;
        let name = |r: u32| f.regs[r as usize].name.as_str();
        // After the barrier (instruction 3): %a and %i (the loop counter) — not %b, never
        // used, nor %c, written before any read.
        let mut after_bar: Vec<&str> = live[3].iter().map(|&r| name(r)).collect();
        after_bar.sort();
        assert_eq!(after_bar, vec!["%a", "%i"]);
    }
}
