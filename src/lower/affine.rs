//! Lane-affine registers of the group code (`lanes`): registers whose lane k holds lane 0's
//! value + k × a stride known when the kernel is compiled, like a thread index and the
//! addresses computed from it (`base + (ctaid × ntid + tid) × 4`).
//!
//! Why: a load or store through such a register with the stride of its width touches one
//! contiguous range, so the group code needs only lane 0's address (one scalar the group
//! keeps beside the vectors) for one range check and vector accesses: the address vectors
//! and the run-time contiguity test go away.
//!
//! The rules: `%tid.x` has stride 1; a uniform value 0; `add sub neg mov`, `mul.lo`/`shl`
//! by a constant, `mad.lo` with a constant or uniform product, and `mul.wide`/`mad.wide`/
//! `cvt` between 32 and 64 bits combine strides as integers. `%tid.x & (2^j − 1)` (Triton's
//! index within a block) has stride 1 where 2^j is a multiple of the group's width: a
//! group's lanes are consecutive threads in x from a multiple of its width (`lanes`), so
//! they never cross a multiple of 2^j. Arithmetic in 32 bits wraps
//! the same in every lane, so lane k = lane 0 + k × stride holds modulo 2^32; widening to 64
//! bits keeps it only where lanes 0..16 do not cross the 32-bit range's end, which the group
//! code tests at run time (`affine_lane_zero` in `lanes`). A register written by any other
//! instruction, a guarded one, or with two strides, is not affine.

use crate::frontend::ast::Immediate;
use crate::frontend::checked::{Arg, CvtMods, Dim, Function, Inst, IntOp, MulMode, Op, Special};
use crate::types::PtxType;

/// Strides beyond this are not tracked (they gain nothing and stay far from overflow).
const MAX_STRIDE: i64 = 1 << 16;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stride {
    /// Not written yet in the analysis.
    Unknown,
    Known(i64),
    Varies,
}

impl Stride {
    fn join(self, other: Stride) -> Stride {
        match (self, other) {
            (Stride::Unknown, x) | (x, Stride::Unknown) => x,
            (Stride::Known(a), Stride::Known(b)) if a == b => self,
            _ => Stride::Varies,
        }
    }

    fn map(self, f: impl FnOnce(i64) -> Option<i64>) -> Stride {
        match self {
            Stride::Known(s) => match f(s) {
                Some(s) if s.abs() <= MAX_STRIDE => Stride::Known(s),
                _ => Stride::Varies,
            },
            other => other,
        }
    }
}

/// A 32-bit value widened to 64 bits by an affine instruction: the register widened (none
/// for `%tid.x` or a uniform value, which no lane carries across the 32-bit range's end),
/// its stride, and whether the widening extends the sign.
pub(super) struct Widening {
    pub register: Option<u32>,
    pub stride: i64,
    pub signed: bool,
}

/// The widening `inst` does, if it is an affine form that widens: `mul.wide`/`mad.wide`
/// (the operand with a stride; the other is a constant) or `cvt` from 32 to 64 bits.
/// `strides` are [`lane_strides`]'s.
pub(super) fn widening(inst: &Inst, strides: &[Option<i64>]) -> Option<Widening> {
    let stride_of = |arg: &Arg| match arg {
        Arg::Reg(r) => strides[*r as usize].unwrap_or(0),
        Arg::Special(Special::Tid(Dim::X)) => 1,
        _ => 0,
    };
    let a = &inst.args;
    let (operand, signed) = match inst.op {
        Op::Int {
            op: IntOp::Mul(MulMode::Wide) | IntOp::Mad(MulMode::Wide),
            ty,
        } => {
            let operand = if stride_of(&a[1]) != 0 { &a[1] } else { &a[2] };
            (operand, ty.is_signed())
        }
        Op::Cvt { dst, src, .. } if dst.bits() == 64 && src.bits() == 32 => {
            (&a[1], src.is_signed())
        }
        _ => return None,
    };
    Some(Widening {
        register: match operand {
            Arg::Reg(r) => Some(*r),
            _ => None,
        },
        stride: stride_of(operand),
        signed,
    })
}

/// Each register's stride across the lanes of a group of `width`, `None` where it is not
/// affine. `uniform` are the group's uniform registers (stride 0); `entry_live` are read
/// before written, so start at zero in every lane (stride 0 as well).
pub fn lane_strides(
    f: &Function,
    uniform: &[bool],
    entry_live: &[u32],
    width: usize,
) -> Vec<Option<i64>> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let mut strides: Vec<Stride> = uniform
        .iter()
        .map(|&u| if u { Stride::Known(0) } else { Stride::Unknown })
        .collect();
    for &r in entry_live {
        strides[r as usize] = strides[r as usize].join(Stride::Known(0));
    }
    let mut changed = true;
    while changed {
        changed = false;
        for inst in body {
            let defs = super::liveness::destinations(inst);
            if defs.iter().all(|&d| uniform[d as usize]) {
                continue;
            }
            let result = match defs[..] {
                [d] if is_affine_register(f, d) => result_stride(f, inst, &strides, width),
                _ => Stride::Varies,
            };
            for d in defs {
                let joined = strides[d as usize].join(result);
                if joined != strides[d as usize] {
                    strides[d as usize] = joined;
                    changed = true;
                }
            }
        }
    }
    strides
        .into_iter()
        .zip(uniform)
        .map(|(s, &u)| match s {
            Stride::Known(s) if !u => Some(s),
            _ => None,
        })
        .collect()
}

/// Registers the analysis follows: 32- and 64-bit integers.
fn is_affine_register(f: &Function, r: u32) -> bool {
    let ty = f.regs[r as usize].ty;
    ty != PtxType::Pred && matches!(ty.bits(), 32 | 64) && !ty.is_float()
}

/// Whether `arg` is `%tid.x`, or a register only ever set to it (`mov`).
fn is_thread_index(f: &Function, arg: &Arg) -> bool {
    let tid_x = |a: &Arg| matches!(a, Arg::Special(Special::Tid(Dim::X)));
    match arg {
        Arg::Reg(r) => {
            let mut defs = f
                .body
                .iter()
                .flatten()
                .filter(|inst| super::liveness::destinations(inst).contains(r));
            let mut any = false;
            let only_tid = defs.all(|inst| {
                any = true;
                inst.guard.is_none() && matches!(inst.op, Op::Mov(_)) && tid_x(&inst.args[1])
            });
            any && only_tid
        }
        _ => tid_x(arg),
    }
}

/// The stride of `inst`'s result, from its operands' strides, in a group of `width`.
fn result_stride(f: &Function, inst: &Inst, strides: &[Stride], width: usize) -> Stride {
    if inst.guard.is_some() {
        return Stride::Varies;
    }
    let a = &inst.args;
    // An operand read as `bits` bits: its stride, and its value if a constant.
    let operand = |arg: &Arg, bits: u32| -> (Stride, Option<i64>) {
        match arg {
            Arg::Reg(r) if f.regs[*r as usize].ty.bits() == bits => (strides[*r as usize], None),
            // A 32-bit constant as the instruction extends it: only a widening multiply sees
            // the difference (`mul.wide.u32` by 0xFFFFFFFF is not by −1); a 32-bit result is
            // the same mod 2³² either way, and the small signed reading keeps its stride small.
            Arg::Imm(Immediate::Int(v)) => {
                let v = match inst.op {
                    _ if bits == 64 => *v as i64,
                    Op::Int {
                        op: IntOp::Mul(MulMode::Wide) | IntOp::Mad(MulMode::Wide),
                        ty,
                    } if !ty.is_signed() => *v as u32 as i64,
                    _ => *v as u32 as i32 as i64,
                };
                (Stride::Known(0), Some(v))
            }
            Arg::Special(Special::Tid(Dim::X)) if bits == 32 => (Stride::Known(1), None),
            Arg::Special(s) if super::lanes::is_uniform_special(*s) => (Stride::Known(0), None),
            _ => (Stride::Varies, None),
        }
    };
    let times = |(sa, ca): (Stride, Option<i64>), (sb, cb): (Stride, Option<i64>)| match (sa, sb) {
        (Stride::Known(0), Stride::Known(0)) => Stride::Known(0),
        (s, Stride::Known(0)) => cb.map_or(Stride::Varies, |c| s.map(|s| s.checked_mul(c))),
        (Stride::Known(0), s) => ca.map_or(Stride::Varies, |c| s.map(|s| s.checked_mul(c))),
        (Stride::Unknown, _) | (_, Stride::Unknown) => Stride::Unknown,
        _ => Stride::Varies,
    };
    let plus = |x: Stride, y: Stride, sign: i64| match (x, y) {
        (Stride::Known(x), y) => y.map(|y| x.checked_add(sign * y)),
        (x, Stride::Known(_)) => x,
        (Stride::Unknown, _) | (_, Stride::Unknown) => Stride::Unknown,
        _ => Stride::Varies,
    };
    match inst.op {
        Op::Mov(ty) if matches!(ty.bits(), 32 | 64) => operand(&a[1], ty.bits()).0,
        Op::Int { op, ty } if ty.is_int() && matches!(ty.bits(), 32 | 64) => {
            let n = ty.bits();
            match op {
                IntOp::Add { sat: false } => plus(operand(&a[1], n).0, operand(&a[2], n).0, 1),
                IntOp::Sub { sat: false } => plus(operand(&a[1], n).0, operand(&a[2], n).0, -1),
                IntOp::Neg => operand(&a[1], n).0.map(|s| s.checked_neg()),
                IntOp::Mul(MulMode::Lo) => times(operand(&a[1], n), operand(&a[2], n)),
                IntOp::Mad(MulMode::Lo) => plus(
                    times(operand(&a[1], n), operand(&a[2], n)),
                    operand(&a[3], n).0,
                    1,
                ),
                IntOp::Mul(MulMode::Wide) if n == 32 => times(operand(&a[1], n), operand(&a[2], n)),
                IntOp::Mad(MulMode::Wide) if n == 32 => plus(
                    times(operand(&a[1], n), operand(&a[2], n)),
                    operand(&a[3], 64).0,
                    1,
                ),
                IntOp::And => {
                    let low_bits = |arg: &Arg| match operand(arg, n) {
                        (_, Some(m)) => {
                            m >= 0
                                && ((m + 1) as u64).is_multiple_of(width as u64)
                                && ((m + 1) as u64).is_power_of_two()
                        }
                        _ => false,
                    };
                    match (&a[1], &a[2]) {
                        (x, m) | (m, x) if is_thread_index(f, x) && low_bits(m) => Stride::Known(1),
                        _ => Stride::Varies,
                    }
                }
                IntOp::Shl => match operand(&a[2], 32) {
                    (Stride::Known(0), Some(k)) if (0..n as i64).contains(&k) => {
                        operand(&a[1], n).0.map(|s| s.checked_mul(1 << k))
                    }
                    _ => Stride::Varies,
                },
                _ => Stride::Varies,
            }
        }
        // Integer conversions between 32 and 64 bits (and of the same width).
        Op::Cvt { dst, src, mods }
            if dst.is_int()
                && src.is_int()
                && matches!(
                    (src.bits(), dst.bits()),
                    (32, 32) | (32, 64) | (64, 32) | (64, 64)
                )
                && mods == CvtMods::default() =>
        {
            operand(&a[1], src.bits()).0
        }
        _ => Stride::Varies,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stride of each named register after `body`.
    fn strides(regs: &str, body: &str, names: &[&str]) -> Vec<Option<i64>> {
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{regs}\n{body}\nret;\n}}\n"
        );
        let m = crate::kernel::check_ptx("t.ptx", &text).expect("valid");
        let f = &m.functions[0];
        let uniform = super::super::lanes::uniform_registers(f);
        let all = lane_strides(f, &uniform, super::super::liveness::analyze(f).at(0), 16);
        let index = |n: &str| f.regs.iter().position(|r| r.name == n).expect("declared");
        names.iter().map(|n| all[index(n)]).collect()
    }

    #[test]
    fn a_global_index_has_stride_one_and_its_byte_offset_the_element_size() {
        let s = strides(
            ".reg .b32 %c, %nt, %t, %i, %j;\n.reg .b64 %off, %base, %addr, %wide;",
            "mov.u32 %c, %ctaid.x;\nmov.u32 %nt, %ntid.x;\nmov.u32 %t, %tid.x;\n\
             mad.lo.s32 %i, %c, %nt, %t;\nmul.wide.s32 %off, %i, 4;\n\
             ld.param.u64 %base, [p];\nadd.s64 %addr, %base, %off;\nshl.b32 %j, %i, 3;\n\
             cvt.u64.u32 %wide, %j;",
            &["%c", "%t", "%i", "%off", "%base", "%addr", "%j", "%wide"],
        );
        let expected = [
            None,
            Some(1),
            Some(1),
            Some(4),
            None,
            Some(4),
            Some(8),
            Some(8),
        ];
        assert_eq!(s, expected);
    }

    #[test]
    fn a_loop_counter_advanced_by_a_uniform_step_stays_affine() {
        let s = strides(
            ".reg .b32 %i, %step;\n.reg .pred %p;",
            "mov.u32 %i, %tid.x;\nld.param.u32 %step, [n];\nLOOP:\nadd.s32 %i, %i, %step;\n\
             setp.lt.u32 %p, %i, 100;\n@%p bra LOOP;",
            &["%i"],
        );
        assert_eq!(s, [Some(1)]);
    }

    /// `%tid.x & (2^j − 1)` keeps stride 1 where 2^j is a multiple of the width (16 in
    /// these tests): a group's lanes never cross a multiple of 2^j.
    #[test]
    fn the_thread_index_masked_to_low_bits_a_multiple_of_the_width_has_stride_one() {
        let s = strides(
            ".reg .b32 %t, %a, %b, %c, %d, %e, %f, %g, %h;",
            "mov.u32 %t, %tid.x;\nand.b32 %a, %t, 127;\nand.b32 %b, %tid.x, 15;\n\
             and.b32 %c, %t, 7;\nand.b32 %d, %t, 126;\nadd.u32 %e, %t, 1;\n\
             and.b32 %f, %e, 127;\nand.b32 %g, 255, %t;\nand.b32 %h, %t, 47;",
            &["%a", "%b", "%c", "%d", "%f", "%g", "%h"],
        );
        // (7 + 1 is under the width, 126 and 47 are not 2^j − 1, %e starts mid-group.)
        assert_eq!(s, [Some(1), Some(1), None, None, None, Some(1), None]);
    }

    #[test]
    fn a_32_bit_multiply_by_a_negative_constant_has_a_negative_stride() {
        let s = strides(
            ".reg .b32 %t, %down, %back;",
            "mov.u32 %t, %tid.x;\nmul.lo.u32 %down, %t, -3;\nmad.lo.u32 %back, %t, 0xFFFFFFFE, 7;",
            &["%down", "%back"],
        );
        assert_eq!(s, [Some(-3), Some(-2)]);
    }

    #[test]
    fn an_unsigned_widening_multiply_takes_its_constant_unsigned() {
        let s = strides(
            ".reg .b32 %t;\n.reg .b64 %down, %far;",
            "mov.u32 %t, %tid.x;\nmul.wide.s32 %down, %t, -4;\nmul.wide.u32 %far, %t, 0xFFFFFFFC;",
            &["%down", "%far"],
        );
        assert_eq!(s, [Some(-4), None]);
    }

    #[test]
    fn two_strides_a_guard_or_a_non_constant_factor_are_not_affine() {
        let s = strides(
            ".reg .b32 %twice, %guarded, %n, %scaled, %square;\n.reg .pred %p;",
            "mov.u32 %twice, %tid.x;\nshl.b32 %twice, %twice, 1;\nmov.u32 %guarded, %tid.x;\n\
             setp.eq.u32 %p, %guarded, 0;\n@%p add.u32 %guarded, %guarded, 1;\n\
             ld.param.u32 %n, [n];\nmov.u32 %scaled, %tid.x;\nmul.lo.u32 %scaled, %scaled, %n;\n\
             mul.lo.u32 %square, %scaled, %scaled;",
            &["%twice", "%guarded", "%scaled", "%square"],
        );
        assert_eq!(s, [None, None, None, None]);
    }
}
