//! Functions the GPU's runtime provides and a module declares without defining: device
//! `printf` (`vprintf`), `malloc` and `free`, and the driver's handle of a cooperative grid
//! (`__cuda_syscall_CGS_get_intrinsic_handle`, which libcudadevrt's
//! `cudaCGGetIntrinsicHandle` calls). (CUDA's `__assertfail` ends the thread where it is
//! called: see the driver; the grid barrier is a sync point: `Op::GridSync`.)

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, Value, types};

use super::{LResult, Translator};
use crate::frontend::checked::{Arg, FuncId};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// A call of a runtime function, lowered here: `None` when `func` is not one (by its
    /// name and parameter count), or the call does not match its declaration (then the
    /// caller's checks name the mismatch).
    pub(super) fn runtime_call(
        &mut self,
        rets: &[Arg],
        func: FuncId,
        params: &[Arg],
    ) -> Option<LResult> {
        let callee = &self.module.functions[func];
        if (params.len(), rets.len()) != (callee.params.len(), callee.returns.len()) {
            return None;
        }
        Some(match (callee.name.as_str(), params.len(), rets.len()) {
            ("vprintf", 2, 0 | 1) => self.vprintf(rets, func, params),
            ("malloc", 1, 1) => self.malloc(rets, func, params),
            ("free", 1, 0) => self.free(func, params),
            ("__cuda_syscall_CGS_get_intrinsic_handle", 1, 1) => {
                self.grid_handle(rets, func, params)
            }
            _ => return None,
        })
    }

    /// The value of parameter `i` of a call of `func`, as a u64 (zero-extended from its
    /// declared size).
    fn runtime_param(&mut self, func: FuncId, params: &[Arg], i: usize) -> LResult<Value> {
        let decl = self.module.functions[func].params[i].clone();
        let slot = self.param_slot(&params[i], &decl, true)?;
        let flags = MemFlagsData::trusted();
        Ok(match decl.size {
            4 => {
                let v = self.b.ins().load(types::I32, flags, slot, 0);
                self.b.ins().uextend(types::I64, v)
            }
            _ => self.b.ins().load(types::I64, flags, slot, 0),
        })
    }

    /// Writes a runtime function's result to the call's return operand.
    pub(super) fn runtime_result(
        &mut self,
        rets: &[Arg],
        func: FuncId,
        v: Value,
        ty: PtxType,
    ) -> LResult {
        let Some(ret) = rets.first() else {
            return Ok(());
        };
        if let Arg::Reg(_) = ret {
            return self.write(ret, v, ty);
        }
        let decl = self.module.functions[func].returns[0].clone();
        let slot = self.param_slot(ret, &decl, false)?;
        self.b.ins().store(MemFlagsData::trusted(), v, slot, 0);
        Ok(())
    }

    /// `call (r), vprintf, (format, args)`: CUDA's device `printf` (`crate::printf`), which
    /// the GPU's runtime provides. The helper reads the arguments inside the rest of the
    /// window their buffer lies in, and the strings inside device memory; an address it
    /// cannot read ends the launch as an illegal address.
    fn vprintf(&mut self, rets: &[Arg], func: FuncId, params: &[Arg]) -> LResult {
        let format = self.runtime_param(func, params, 0)?;
        let args = self.runtime_param(func, params, 1)?;
        let len = self.window_rest(args);
        let fault = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            8,
            3,
        ));
        let fault = self.b.ins().stack_addr(types::I64, fault, 0);
        let f = self.helper_ref("ptxjit_vprintf");
        let call = self.b.ins().call(f, &[format, args, len, fault]);
        let result = self.b.inst_results(call)[0];
        let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, result, 0);
        let address = self
            .b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), fault, 0);
        self.unreadable(bad, address);
        self.runtime_result(rets, func, result, PtxType::S32)
    }

    /// `call (p), malloc, (size)`: a block of the device heap (`crate::device_heap`), or 0.
    fn malloc(&mut self, rets: &[Arg], func: FuncId, params: &[Arg]) -> LResult {
        let size = self.runtime_param(func, params, 0)?;
        let f = self.helper_ref("ptxjit_malloc");
        let call = self.b.ins().call(f, &[size]);
        let ptr = self.b.inst_results(call)[0];
        self.runtime_result(rets, func, ptr, PtxType::U64)
    }

    /// `call (h), __cuda_syscall_CGS_get_intrinsic_handle, (scope)`: for the grid's scope
    /// (1) in a cooperative launch, a handle that is not 0 (the grid barrier takes it);
    /// otherwise 0, which `cudaCGSynchronize` answers with an error and no wait. (Scope 2,
    /// a multi-device grid, does not exist on one device.)
    fn grid_handle(&mut self, rets: &[Arg], func: FuncId, params: &[Arg]) -> LResult {
        let scope = self.runtime_param(func, params, 0)?;
        let is_grid = self.b.ins().icmp_imm_u(IntCC::Equal, scope, 1);
        let ctx = self.ctx;
        let cooperative = self.b.ins().load(
            types::I32,
            MemFlagsData::trusted(),
            ctx,
            super::ctx::COOPERATIVE,
        );
        let cooperative = self.b.ins().icmp_imm_u(IntCC::NotEqual, cooperative, 0);
        let valid = self.b.ins().band(is_grid, cooperative);
        let handle = self.b.ins().uextend(types::I64, valid);
        self.runtime_result(rets, func, handle, PtxType::U64)
    }

    /// `call free, (p)`: a pointer `malloc` did not give ends the launch as an illegal
    /// address.
    fn free(&mut self, func: FuncId, params: &[Arg]) -> LResult {
        let ptr = self.runtime_param(func, params, 0)?;
        let f = self.helper_ref("ptxjit_free");
        let call = self.b.ins().call(f, &[ptr]);
        let bad = self.b.inst_results(call)[0];
        let bad = self.b.ins().icmp_imm_u(IntCC::NotEqual, bad, 0);
        self.unreadable(bad, ptr);
        Ok(())
    }
}
