//! Loads forwarded to group helpers: a register kept in memory for the helpers (`homes`)
//! that a contiguous `ld` fills and a helper then reads is read by the helper where the load
//! would have read it, in the buffer itself.
//!
//! Why: a stream's `ld x; ld y; fma d, a, x, y` otherwise copies each operand through
//! vectors into its home (for 64 lanes of 32 bits, 16 loads and 16 stores an operand)
//! before the helper reads it from there. The copies were a third of the axpy's group code,
//! whose memory operations, more than its bandwidth, bound it.
//!
//! The helper reads later than the load would have, so nothing between may write memory or
//! the register, and no control flow may join in between (the load's address lives in a
//! variable defined on the load's paths only). [`plan`] forwards a load only through such
//! a stretch of straight code, ending at the last helper that reads the register. While a
//! forward is pending every read of the register goes to that address ([`home_addr`]), and
//! at the stretch's end, where the register is still live, its value is copied into its
//! home.
//!
//! [`home_addr`]: Translator::home_addr

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData};

use super::super::liveness::{destinations, sources};
use super::super::simd::runs::Runs;
use super::{by_group_helper, has_no_effects, vector_of};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{Arg, Function, Inst, Op};
use crate::lower::Translator;

/// A load forwarded to the helpers after it: the register, the variable that holds where
/// its value is (the buffer, or its home where the load went lane by lane), and the last
/// position of the stretch it is forwarded through.
#[derive(Clone, Copy)]
pub(super) struct Pending {
    reg: u32,
    at: cranelift_frontend::Variable,
    end: usize,
}

/// For each position of `f`'s body, where it is a load that may be forwarded, the last
/// position of the stretch it is forwarded through: an unguarded `ld` of one global element
/// a lane into a register kept in memory (`homed`) of the element's width, followed, with no
/// label in between, by instructions that neither write memory, nor branch, nor write the
/// register, up to a group helper's instruction that reads it (the last such one: a
/// helper that also writes the register ends the stretch).
pub(super) fn plan(
    f: &Function,
    homed: &[bool],
    runs: &Runs,
    group_helpers: bool,
) -> Vec<Option<usize>> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let labels: std::collections::HashSet<usize> = f.labels.iter().copied().collect();
    body.iter()
        .enumerate()
        .map(|(p, inst)| {
            let r = forwardable(f, inst, homed)?;
            if !group_helpers || runs.deferred[p] || runs.at_last.contains_key(&p) {
                return None;
            }
            let mut end = None;
            for (q, next) in body.iter().enumerate().skip(p + 1) {
                if labels.contains(&q) {
                    break;
                }
                let (reads, writes) = (sources(next).contains(&r), destinations(next).contains(&r));
                if reads && by_group_helper(next) {
                    end = Some(q);
                } else if reads || !safe_between(next) {
                    break;
                }
                if writes {
                    break;
                }
            }
            end
        })
        .collect()
}

/// The register `inst` loads, if it is a load a stretch may start with ([`plan`]).
fn forwardable(f: &Function, inst: &Inst, homed: &[bool]) -> Option<u32> {
    let Op::Ld { space, ty, vec: 1 } = inst.op else {
        return None;
    };
    let &Arg::Reg(r) = inst.args.first()? else {
        return None;
    };
    let reg_ty = f.regs[r as usize].ty;
    (inst.guard.is_none()
        && matches!(space, StateSpace::Global | StateSpace::Generic)
        && homed[r as usize]
        && reg_ty.ir_type() == ty.ir_type()
        && vector_of(ty.ir_type()).is_some())
    .then_some(r)
}

/// Whether `inst` may stand between a forwarded load and its helpers: it writes no memory
/// (a load, or an instruction without effects), and does not branch or run under a guard
/// (a guarded instruction may run lane by lane, under a mask).
fn safe_between(inst: &Inst) -> bool {
    inst.guard.is_none() && (has_no_effects(inst) || matches!(inst.op, Op::Ld { .. }))
}

impl Translator<'_, '_> {
    /// The end of the stretch the load at `pos` is forwarded through, if [`plan`] chose it.
    pub(in crate::lower) fn forward_end(&self, pos: usize) -> Option<usize> {
        self.lanes.as_ref().expect("grouped").forwards[pos]
    }

    /// A forward of register `r` begins: its value is at `at` (an `i64` variable, defined on
    /// every path here) until position `end`.
    pub(in crate::lower) fn begin_forward(
        &mut self,
        reg: u32,
        at: cranelift_frontend::Variable,
        end: usize,
    ) {
        let lanes = self.lanes.as_mut().expect("grouped");
        lanes.pending.push(Pending { reg, at, end });
    }

    /// Where register `r`'s lanes are to be read from: the address a pending forward holds,
    /// else its home.
    pub(in crate::lower) fn home_addr(&mut self, r: u32) -> ir::Value {
        let lanes = self.lanes.as_ref().expect("grouped");
        if let Some(p) = lanes.pending.iter().find(|p| p.reg == r) {
            return self.b.use_var(p.at);
        }
        let home = lanes.homes[r as usize].expect("kept in memory");
        self.helper_addr(home)
    }

    /// After `inst` at `pos`: the forwards whose stretch ends here end, each register still
    /// needed after it copied into its home (unless `inst` wrote it there: a helper that
    /// reads and writes one register, which the webs of a kernel split in two unless they
    /// did not fit, `crate::jit`).
    pub(super) fn settle_forwards(&mut self, inst: &Inst, pos: usize) {
        let lanes = self.lanes.as_mut().expect("grouped");
        if lanes.pending.iter().all(|p| p.end > pos) {
            return;
        }
        let (ending, going): (Vec<Pending>, Vec<Pending>) =
            lanes.pending.iter().partition(|p| p.end <= pos);
        lanes.pending = going;
        let written = destinations(inst);
        let needed: Vec<Pending> = ending
            .into_iter()
            .filter(|p| lanes.live.live_out[pos].contains(&p.reg) && !written.contains(&p.reg))
            .collect();
        for p in needed {
            let from = self.b.use_var(p.at);
            let vt = vector_of(self.func.regs[p.reg as usize].ty.ir_type()).expect("eligible");
            let n = self.lanes.as_ref().expect("grouped").width / vt.lane_count() as usize;
            let v = (0..n)
                .map(|c| {
                    self.b
                        .ins()
                        .load(vt, MemFlagsData::new(), from, 16 * c as i32)
                })
                .collect();
            self.home_write(p.reg, v);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The positions of `body`'s forwarded loads and where their stretches end ([`super::plan`]),
    /// counted from the body's first instruction.
    fn forwards(body: &str) -> Vec<(usize, usize)> {
        let header = "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd1, %rd1, %rd2;\n\
                      add.s64 %rd3, %rd1, 65536;";
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<12>;\n.reg .b64 %rd<4>;\n\
             .reg .pred %p;\nld.param.u64 %rd1, [p];\n{header}\n{body}\nret;\n}}\n"
        );
        let m = crate::kernel::check_ptx("t.ptx", &text).expect("valid");
        let f = &m.functions[0];
        let uniform = super::super::uniform_registers(f);
        let strides = vec![None; f.regs.len()];
        let homed = super::super::homes(
            f,
            &uniform,
            &strides,
            true,
            &super::super::loop_positions(f),
        );
        let runs = crate::lower::simd::runs::plan(f, &uniform, &strides);
        let skip = 5;
        super::plan(f, &homed, &runs, true)
            .iter()
            .enumerate()
            .filter_map(|(p, e)| e.map(|e| (p - skip, e - skip)))
            .collect()
    }

    const TWO_LOADS: &str = "ld.global.u32 %r2, [%rd1];\nld.global.u32 %r3, [%rd3];\n";

    #[test]
    fn a_load_that_a_helper_reads_next_is_forwarded_to_it() {
        let f = forwards(&format!(
            "{TWO_LOADS}fma.rn.f16x2 %r4, %r2, %r3, %r2;\nst.global.u32 [%rd1], %r4;"
        ));
        assert_eq!(f, [(0, 2), (1, 2)]);
    }

    #[test]
    fn a_forward_reaches_the_last_helper_before_another_read() {
        let f = forwards(&format!(
            "{TWO_LOADS}fma.rn.f16x2 %r4, %r2, %r3, %r2;\nadd.u32 %r5, %r4, 1;\n\
             mul.rn.f16x2 %r6, %r2, %r4;\nxor.b32 %r7, %r2, %r3;\nadd.rn.f16x2 %r8, %r2, %r6;\n\
             add.rn.f16x2 %r8, %r8, %r3;\nst.global.u32 [%rd1], %r8;"
        ));
        // %r2 to the `mul` (the `xor` reads it as integers), %r3 to the `fma`.
        assert_eq!(f, [(0, 4), (1, 2)]);
    }

    #[test]
    fn a_helper_that_writes_the_register_ends_its_forward() {
        let f = forwards(&format!(
            "{TWO_LOADS}fma.rn.f16x2 %r2, %r2, %r3, %r2;\nmul.rn.f16x2 %r2, %r2, %r3;\n\
             st.global.u32 [%rd1], %r2;"
        ));
        assert_eq!(f, [(0, 2), (1, 3)]);
    }

    #[test]
    fn a_store_between_a_load_and_its_helper_keeps_the_load_where_it_is() {
        let f = forwards(&format!(
            "{TWO_LOADS}st.global.u32 [%rd1], %r1;\nfma.rn.f16x2 %r4, %r2, %r3, %r2;\n\
             st.global.u32 [%rd1], %r4;"
        ));
        assert_eq!(f, []);
    }

    #[test]
    fn a_label_or_a_branch_between_a_load_and_its_helper_keeps_the_load_where_it_is() {
        let label = forwards(&format!(
            "{TWO_LOADS}L:\nfma.rn.f16x2 %r4, %r2, %r3, %r2;\nst.global.u32 [%rd1], %r4;"
        ));
        let branch = forwards(&format!(
            "{TWO_LOADS}setp.eq.u32 %p, %r1, 0;\n@%p bra L;\nfma.rn.f16x2 %r4, %r2, %r3, %r2;\n\
             L:\nst.global.u32 [%rd1], %r4;"
        ));
        assert_eq!((label, branch), (vec![], vec![]));
    }

    #[test]
    fn a_guarded_load_or_one_of_shared_memory_is_not_forwarded() {
        let f = forwards(
            "setp.eq.u32 %p, %r1, 0;\n@%p ld.global.u32 %r2, [%rd1];\nld.shared.u32 %r3, [%r1];\n\
             ld.global.u32 %r5, [%rd3];\nfma.rn.f16x2 %r4, %r2, %r3, %r5;\nst.global.u32 [%rd1], %r4;",
        );
        assert_eq!(f, [(3, 4)]);
    }
}
