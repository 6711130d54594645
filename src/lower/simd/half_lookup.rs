//! Vector form of the half functions the generated code reads from tables (`tanh.approx`,
//! `ex2.approx`: `lower::half_table`): each half of the group's vectors looked up in turn,
//! a gather of one load a lane with none of a lane-by-lane instruction's moves of the other
//! registers.

use cranelift_codegen::ir::InstBuilder;

use super::Wide;
use super::bits::lane_order;
use crate::frontend::checked::{Arg, FloatOp};
use crate::lower::half::format_of;
use crate::lower::lanes::vector_of;
use crate::lower::{LResult, Translator};
use crate::semantics::half_approx::Mufu;
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `tanh.approx` or `ex2.approx` of halves (scalars or pairs) for the whole group;
    /// `false` (nothing emitted) for other operations and operands the group cannot read or
    /// write as vectors.
    pub(super) fn v_half_lookup(&mut self, op: FloatOp, ty: PtxType, a: &[Arg]) -> LResult<bool> {
        let Some(f) = Mufu::of(op, format_of(ty).0) else {
            return Ok(false);
        };
        if !self.v_dst_ok(&a[0], ty) || !self.v_src_ok(&a[1], ty) {
            return Ok(false);
        }
        let vt = vector_of(ty.ir_type()).expect("half");
        let x = self.v_read(&a[1], ty)?;
        let mut v = Wide::new();
        for x in x {
            let mut h = self.as_halves(x);
            for lane in 0..8 {
                let one = self.b.ins().extractlane(h, lane);
                let r = self.half_table_lookup(f, one);
                h = self.b.ins().insertlane(h, r, lane);
            }
            v.push(self.b.ins().bitcast(vt, lane_order(), h));
        }
        self.v_write(&a[0], v);
        Ok(true)
    }
}
