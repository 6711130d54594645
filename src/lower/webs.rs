//! Webs: a register the PTX reuses for unrelated values split into one register per web, a
//! set of writes and reads joined by the values that flow between them.
//!
//! Why: the lane-group code's analyses (`lanes`' uniform registers and homes, `affine`'s
//! strides) give a register one answer for the whole kernel. PTX written by hand reuses
//! registers (`mov.u32 %g, %ctaid.x; mad.lo.u32 %g, %g, %nt, %tid.x`, or `ld.param.u64 %rd1`
//! then `add.s64 %rd1, %rd1, %rd2`), and such a register is neither uniform nor lane-affine:
//! a store through it computes every lane's address and tests them for contiguity at run
//! time where one scalar address would do (the bench's fma chain: its 64-lane form 1,139 →
//! 946 Cranelift lines, compiled in 1.49 → 1.17 ms; 128 lanes 1,843 → 1,442, 3.85 → 2.22
//! ms). Compilers' PTX is mostly split already (a virtual register a value: the corpus's
//! kernels lower to the same code), and a value a loop carries stays one web.
//!
//! The semantics are unchanged: a read sees the same writes as before, since a write and
//! the reads it reaches are in one web, and two webs of a register are never live at once.

use std::collections::HashMap;

use super::liveness::{self, destinations, reads_destination, regs_of, writes_first};
use crate::frontend::checked::{Function, Inst};

/// `f` with each register's webs in registers of their own (the register's first web keeps
/// it; the others get new ones of the same name and type, after `f`'s). A write no read sees
/// keeps its register: no other web of it is live there.
pub fn split(f: &Function) -> Function {
    let Some(body) = f.body.as_deref() else {
        return f.clone();
    };
    let live = liveness::analyze(f);
    let succs = liveness::successors(f);
    let defs: Vec<Vec<u32>> = body
        .iter()
        .map(|inst| {
            let mut d = destinations(inst);
            d.sort_unstable();
            d.dedup();
            d
        })
        .collect();
    // The nodes: the value of register r entering instruction i (where r is live), then the
    // value instruction i writes to r.
    let mut in_base = Vec::with_capacity(body.len());
    let mut def_base = Vec::with_capacity(body.len());
    let mut nodes = 0;
    for ins in &live.live_in {
        in_base.push(nodes);
        nodes += ins.len();
    }
    let first_write = nodes;
    for ds in &defs {
        def_base.push(nodes);
        nodes += ds.len();
    }
    let entering = |r: u32, i: usize| {
        live.live_in[i]
            .binary_search(&r)
            .ok()
            .map(|k| in_base[i] + k)
    };
    let written = |r: u32, i: usize| defs[i].binary_search(&r).ok().map(|k| def_base[i] + k);
    // (Registers written where the instruction's first argument is, and read elsewhere,
    // can be told apart; any other written register is read and written as one value.)
    let first_written = |i: usize| {
        let mut first = Vec::new();
        if writes_apart(&body[i]) {
            regs_of(&body[i].args[0], &mut first);
        }
        first
    };

    let mut webs = UnionFind::new(nodes);
    for (i, inst) in body.iter().enumerate() {
        for &j in &succs[i] {
            for &r in &live.live_in[j] {
                let to = entering(r, j).expect("live");
                // The value leaving i: its write, or (for a guarded write, as well) the value
                // that entered i.
                if let Some(w) = written(r, i) {
                    webs.union(to, w);
                    if inst.guard.is_none() {
                        continue;
                    }
                }
                if let Some(e) = entering(r, i) {
                    webs.union(to, e);
                }
            }
        }
        let first = first_written(i);
        for &r in defs[i].iter().filter(|r| !first.contains(r)) {
            if let (Some(e), Some(w)) = (entering(r, i), written(r, i)) {
                webs.union(e, w);
            }
        }
    }

    let mut out = f.clone();
    let regs = &mut out.regs;
    let mut reg_of_web: HashMap<usize, u32> = HashMap::new();
    let mut first_taken = vec![false; f.regs.len()];
    let mut register = |webs: &mut UnionFind, node: usize, r: u32| -> u32 {
        let root = webs.find(node);
        if webs.size(root) == 1 && node >= first_write {
            // A write that no read sees.
            return r;
        }
        *reg_of_web.entry(root).or_insert_with(|| {
            if !std::mem::replace(&mut first_taken[r as usize], true) {
                r
            } else {
                regs.push(f.regs[r as usize].clone());
                (regs.len() - 1) as u32
            }
        })
    };
    // The values a register holds when the kernel starts keep it.
    for &r in live.at(0) {
        register(&mut webs, entering(r, 0).expect("live"), r);
    }
    for (i, inst) in out.body.iter_mut().flatten().enumerate() {
        let first = writes_apart(inst);
        let mut read = |r: u32| match entering(r, i).or_else(|| written(r, i)) {
            Some(node) => register(&mut webs, node, r),
            None => r,
        };
        if let Some(g) = &mut inst.guard {
            g.reg = read(g.reg);
        }
        for (k, arg) in inst.args.iter_mut().enumerate() {
            if k == 0 && first {
                continue;
            }
            liveness::rename_regs(arg, &mut read);
        }
        if first {
            let mut write = |r: u32| match written(r, i) {
                Some(node) => register(&mut webs, node, r),
                None => r,
            };
            liveness::rename_regs(&mut inst.args[0], &mut write);
        }
    }
    out
}

/// Whether `inst` writes its first argument's registers apart from what it reads (a value of
/// their own), unlike `wgmma`'s accumulator.
fn writes_apart(inst: &Inst) -> bool {
    writes_first(inst) && !reads_destination(inst)
}

/// Disjoint sets of `0..n` (union by size, path halving).
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let up = self.parent[self.parent[x] as usize];
            self.parent[x] = up;
            x = up as usize;
        }
        x
    }

    fn size(&self, root: usize) -> u32 {
        self.size[root]
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        let (big, small) = if self.size[a] >= self.size[b] {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[small] = big as u32;
        self.size[big] += self.size[small];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::checked::Arg;

    /// `body` checked as a kernel and split: its registers' names, and each instruction's
    /// register operands (the guard first) by name and index.
    fn split_body(regs: &str, body: &str) -> (usize, Vec<Vec<String>>) {
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{regs}\n{body}\nret;\n}}\n"
        );
        let m = crate::kernel::check_ptx("t.ptx", &text).expect("valid");
        let f = split(&m.functions[0]);
        let added = f.regs.len() - m.functions[0].regs.len();
        let operands = f
            .body
            .iter()
            .flatten()
            .map(|inst| {
                let mut regs: Vec<u32> = inst.guard.iter().map(|g| g.reg).collect();
                inst.args.iter().for_each(|a| regs_of(a, &mut regs));
                regs.iter()
                    .map(|&r| format!("{}#{r}", f.regs[r as usize].name))
                    .collect()
            })
            .collect();
        (added, operands)
    }

    #[test]
    fn a_register_reused_for_an_unrelated_value_becomes_two() {
        let (added, ops) = split_body(
            ".reg .b32 %g, %nt;\n.reg .b64 %rd1, %rd2;",
            "mov.u32 %g, %ctaid.x;\nmov.u32 %nt, %ntid.x;\nmad.lo.u32 %g, %g, %nt, %tid.x;\n\
             ld.param.u64 %rd1, [p];\nmul.wide.u32 %rd2, %g, 4;\nadd.s64 %rd1, %rd1, %rd2;\n\
             st.global.u32 [%rd1], %g;",
        );
        assert_eq!(added, 2);
        // The block's base and the thread's index.
        let (base, index) = (&ops[0][0], &ops[2][0]);
        assert_ne!(base, index);
        assert_eq!(ops[2][1], *base);
        assert_eq!(ops[4][1], *index);
        assert_eq!(ops[6][1], *index);
        // The parameter and the address.
        let (param, address) = (&ops[3][0], &ops[5][0]);
        assert_ne!(param, address);
        assert_eq!(ops[5][1], *param);
        assert_eq!(ops[6][0], *address);
    }

    #[test]
    fn a_value_a_loop_carries_stays_one_register() {
        let (added, ops) = split_body(
            ".reg .b32 %i;\n.reg .pred %p;",
            "mov.u32 %i, 0;\nLOOP:\nadd.u32 %i, %i, 1;\nsetp.lt.u32 %p, %i, 8;\n@%p bra LOOP;",
        );
        assert_eq!(added, 0);
        assert_eq!(ops[1][0], ops[0][0]);
        assert_eq!(ops[1][1], ops[0][0]);
    }

    #[test]
    fn a_guarded_write_is_one_value_with_the_one_it_may_leave() {
        let (added, ops) = split_body(
            ".reg .b32 %r;\n.reg .pred %p;\n.reg .b64 %a;",
            "ld.param.u64 %a, [p];\nsetp.eq.u32 %p, %tid.x, 0;\nmov.u32 %r, 1;\n@%p mov.u32 %r, 2;\n\
             st.global.u32 [%a], %r;",
        );
        assert_eq!(added, 0);
        assert_eq!(ops[3][1], ops[2][0]);
        assert_eq!(ops[4][1], ops[2][0]);
    }

    #[test]
    fn a_value_joined_from_two_paths_is_one_register() {
        let (added, ops) = split_body(
            ".reg .b32 %r;\n.reg .pred %p;\n.reg .b64 %a;",
            "ld.param.u64 %a, [p];\nsetp.eq.u32 %p, %tid.x, 0;\n@%p bra ONE;\nmov.u32 %r, 2;\n\
             bra.uni DONE;\nONE:\nmov.u32 %r, 1;\nDONE:\nst.global.u32 [%a], %r;",
        );
        assert_eq!(added, 0);
        assert_eq!(ops[3][0], ops[5][0]);
        assert_eq!(ops[6][1], ops[3][0]);
    }

    #[test]
    fn a_write_no_read_sees_keeps_its_register() {
        let (added, ops) = split_body(
            ".reg .b32 %r;\n.reg .b64 %a;",
            "ld.param.u64 %a, [p];\nmov.u32 %r, 1;\nst.global.u32 [%a], %r;\nmov.u32 %r, 2;",
        );
        assert_eq!(added, 0);
        assert_eq!(ops[3][0], ops[1][0]);
    }

    #[test]
    fn the_carry_flag_a_chain_reads_and_writes_is_one_value_an_instruction() {
        let (_, ops) = split_body(
            ".reg .b32 %a, %b, %c;",
            "mov.u32 %a, %tid.x;\nadd.cc.u32 %b, %a, 1;\naddc.cc.u32 %c, %a, 2;\naddc.u32 %c, %c, %b;",
        );
        // The flag is the last operand: written by one instruction, read by the next.
        assert_eq!(ops[1].last(), ops[2].last());
        assert_eq!(ops[2].last(), ops[3].last());
    }

    #[test]
    fn after_the_split_a_reused_address_register_is_lane_affine() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
                    .visible .entry k(.param .u64 p)\n{\n.reg .b32 %g;\n.reg .b64 %rd1, %rd2;\n\
                    mov.u32 %g, %ctaid.x;\nmad.lo.u32 %g, %g, %ntid.x, %tid.x;\n\
                    ld.param.u64 %rd1, [p];\nmul.wide.u32 %rd2, %g, 4;\nadd.s64 %rd1, %rd1, %rd2;\n\
                    st.global.u32 [%rd1], %g;\nret;\n}\n";
        let m = crate::kernel::check_ptx("t.ptx", text).expect("valid");
        let address_stride = |f: &Function| {
            let uniform = super::super::lanes::uniform_registers(f);
            let strides =
                super::super::affine::lane_strides(f, &uniform, liveness::analyze(f).at(0), 16);
            let body = f.body.as_deref().expect("defined");
            let store = &body[body.len() - 2];
            match &store.args[0] {
                Arg::Addr {
                    base: crate::frontend::checked::AddrBase::Reg(r),
                    ..
                } => strides[*r as usize],
                other => panic!("a store through a register, not {other:?}"),
            }
        };
        assert_eq!(address_stride(&m.functions[0]), None);
        assert_eq!(address_stride(&split(&m.functions[0])), Some(4));
    }
}
