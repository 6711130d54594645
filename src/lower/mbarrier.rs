//! The `mbarrier` instructions: each a call of `ptxjit_mbarrier` (`crate::mbarrier::run`) on
//! the object's checked address. A wait whose phase is complete continues at once; one that
//! is not becomes a synchronization point (`Translator::sync_point`), which the round
//! completes when the phase does.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::{LResult, Translator};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{Arg, MbarrierOp};
use crate::mbarrier::{ERR_NOT_INITIALIZED, ERR_OUT_OF_RANGE, MAX_COUNT, code};
use crate::sync::status;
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// Every mbarrier instruction but the waits (see [`Translator::mbarrier_wait_ready`]).
    pub fn mbarrier(&mut self, op: MbarrierOp, space: StateSpace, a: &[Arg]) -> LResult {
        if op == MbarrierOp::PendingCount {
            let state = self.read(&a[1], PtxType::B64)?;
            let count = self.b.ins().band_imm_u(state, MAX_COUNT as i64);
            let count = self.b.ins().ireduce(types::I32, count);
            return self.write(&a[0], count, PtxType::U32);
        }
        // The state comes first where the instruction returns one.
        let (state, rest) = match op {
            MbarrierOp::Arrive { .. } => (Some(&a[0]), &a[1..]),
            _ => (None, a),
        };
        let operand = match rest.get(1) {
            Some(n) => {
                let n = self.read(n, PtxType::U32)?;
                self.b.ins().uextend(types::I64, n)
            }
            // An arrival counts one unless told otherwise.
            None => self.b.ins().iconst(types::I64, 1),
        };
        let addr = self.access_address(&rest[0], space, 8, true)?;
        let result = self.mbarrier_run(op, addr, operand);
        if let Some(state) = state {
            self.write(state, result, PtxType::B64)?;
        }
        Ok(())
    }

    /// `mbarrier.{test,try}_wait{.parity} waitComplete, [addr], state|phaseParity{, hint}`:
    /// the object's address and whether the phase is complete now.
    pub fn mbarrier_wait_ready(
        &mut self,
        op: MbarrierOp,
        space: StateSpace,
        a: &[Arg],
    ) -> LResult<(Value, Value, Value)> {
        let MbarrierOp::Wait { parity, .. } = op else {
            unreachable!("a wait")
        };
        let state = if parity {
            let p = self.read(&a[2], PtxType::U32)?;
            self.b.ins().uextend(types::I64, p)
        } else {
            self.read(&a[2], PtxType::B64)?
        };
        // The suspend-time hint only bounds how long a thread sleeps: read, nothing more.
        if let Some(hint) = a.get(3) {
            self.read(hint, PtxType::U32)?;
        }
        let addr = self.access_address(&a[1], space, 8, true)?;
        let done = self.mbarrier_run(op, addr, state);
        let done = self.b.ins().ireduce(types::I8, done);
        Ok((addr, state, done))
    }

    /// Calls `ptxjit_mbarrier` on the object at `addr`; a misuse ends the launch here.
    pub(super) fn mbarrier_run(&mut self, op: MbarrierOp, addr: Value, operand: Value) -> Value {
        let code = self.b.ins().iconst(types::I32, code(op) as i64);
        let f = self.helper_ref("ptxjit_mbarrier");
        let call = self.b.ins().call(f, &[addr, code, operand]);
        let result = self.b.inst_results(call)[0];
        let misuse = self.b.create_block();
        let go_on = self.b.create_block();
        self.b.set_cold_block(misuse);
        let bad = self.b.ins().icmp_imm_u(
            IntCC::UnsignedGreaterThanOrEqual,
            result,
            ERR_OUT_OF_RANGE as i64,
        );
        self.b.ins().brif(bad, misuse, &[], go_on, &[]);
        self.b.seal_block(misuse);
        self.b.switch_to_block(misuse);
        let uninitialized = self.b.create_block();
        let out_of_range = self.b.create_block();
        let which = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, result, ERR_NOT_INITIALIZED as i64);
        self.b
            .ins()
            .brif(which, uninitialized, &[], out_of_range, &[]);
        for (block, kind) in [
            (uninitialized, status::MBARRIER_UNINITIALIZED),
            (out_of_range, status::MBARRIER_RANGE),
        ] {
            self.b.seal_block(block);
            self.b.switch_to_block(block);
            self.return_status(kind);
        }
        self.b.seal_block(go_on);
        self.b.switch_to_block(go_on);
        result
    }
}
