//! Calls of `.func` functions (branches, `ret`, `exit` and `trap` are in the driver).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, Value, types};
use ptxjit_runtime::Status;

use super::{LResult, Translator};
use crate::frontend::checked::{Arg, FUNCTION_ADDRESS, FuncId, Param, direct_call};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `call (ret…), f, (arg…)`: every parameter is passed by address. A `.param` variable is
    /// passed as it is; a register, vector register or immediate is copied to a temporary slot
    /// first (and a returned one copied back after).
    pub fn call(&mut self, a: &[Arg]) -> LResult {
        if let Some((rets, func, params)) = direct_call(a) {
            return self.call_direct(rets, func, params);
        }
        let none = &[][..];
        match a {
            // Through a pointer: `call (r), fptr, (p), proto` (or a `.calltargets` list).
            [fptr, Arg::Callees(fs)] => self.call_indirect(none, fptr, none, fs),
            [fptr, Arg::List(p), Arg::Callees(fs)] => self.call_indirect(none, fptr, p, fs),
            [Arg::List(r), fptr, Arg::List(p), Arg::Callees(fs)] => {
                self.call_indirect(r, fptr, p, fs)
            }
            // A register where a function goes, without its prototype.
            [_] | [_, Arg::List(_)] | [Arg::List(_), _] | [Arg::List(_), _, Arg::List(_)] => {
                Err(self
                    .err("a call through a register names its .callprototype or .calltargets last"))
            }
            _ => Err(self.err("call operands must be (returns), function, (parameters)")),
        }
    }

    /// `call (r), fptr, (p), callees`: compares the pointer with each function the prototype
    /// or target list admits and calls the one it is; any other value ends the launch at the
    /// call.
    fn call_indirect(
        &mut self,
        rets: &[Arg],
        fptr: &Arg,
        params: &[Arg],
        fs: &[FuncId],
    ) -> LResult {
        if let Some(&f) = fs.iter().find(|f| !self.callees.functions.contains_key(f)) {
            return Err(self.err(format!(
                "'{}' waits for other threads (barriers, warp collectives), so it is inlined \
                 where it is called, and cannot be called through a pointer",
                self.module.functions[f].name
            )));
        }
        let ptr = self.read(fptr, PtxType::U64)?;
        let done = self.b.create_block();
        for &f in fs {
            let hit =
                self.b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, ptr, (FUNCTION_ADDRESS + f as u64) as i64);
            let call = self.b.create_block();
            let next = self.b.create_block();
            self.b.ins().brif(hit, call, &[], next, &[]);
            self.b.switch_to_block(call);
            self.call_direct(rets, f, params)?;
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(next);
        }
        self.return_status(Status::BAD_CALL);
        self.b.switch_to_block(done);
        Ok(())
    }

    fn call_direct(&mut self, rets: &[Arg], func: FuncId, params: &[Arg]) -> LResult {
        let callee = &self.module.functions[func];
        if callee.body.is_none()
            && let Some(done) = self.runtime_call(rets, func, params)
        {
            return done;
        }
        if callee.body.is_none() {
            return Err(self.err(format!(
                "call of '{}', which is declared but not defined",
                callee.name
            )));
        }
        if let Some(why) = callee.call_mismatch(rets.len(), params.len()) {
            return Err(self.err(why));
        }
        let mut args: Vec<Value> = vec![self.ctx];
        for t in self.tid {
            args.push(self.b.use_var(t));
        }
        let record = self.locals_record();
        args.push(record);
        let mut copy_back = Vec::new();
        for (arg, decl) in rets.iter().zip(&callee.returns) {
            let addr = self.param_slot(arg, decl, false)?;
            for (k, element) in arg.elements().iter().enumerate() {
                if matches!(element, Arg::Reg(_)) {
                    let offset = (k as u32 * decl.ty.size()) as i32;
                    copy_back.push((element.clone(), addr, offset, decl.ty));
                }
            }
            args.push(addr);
        }
        for (arg, decl) in params.iter().zip(&callee.params) {
            let addr = self.param_slot(arg, decl, true)?;
            args.push(addr);
        }
        let f = self.function_ref(func);
        let call = self.b.ins().call(f, &args);
        let status = self.b.inst_results(call)[0];
        for (arg, addr, offset, ty) in copy_back {
            let v = self
                .b
                .ins()
                .load(ty.ir_type(), MemFlagsData::trusted(), addr, offset);
            self.write(&arg, v, ty)?;
        }
        // A non-zero status: `exit` ends the thread in a kernel; anything else propagates.
        let failed = self.b.ins().icmp_imm_u(IntCC::NotEqual, status, 0);
        let handle = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(failed, handle, &[], cont, &[]);
        self.b.switch_to_block(handle);
        match self.thread_end {
            Some(end) => {
                let kind = self.b.ins().ushr_imm_u(status, 56);
                let is_exit = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, kind, Status::EXIT as i64);
                let fail = self.b.create_block();
                self.b.ins().brif(is_exit, end, &[], fail, &[]);
                self.b.switch_to_block(fail);
                self.b.ins().return_(&[status]);
            }
            None => {
                self.b.ins().return_(&[status]);
            }
        }
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// Whether `call` names the runtime's `__assertfail`, declared (not defined) in the
    /// module with its five parameters.
    pub fn calls_assertfail(&self, a: &[Arg]) -> bool {
        let Some(&Arg::Func(f)) = a.iter().find(|a| matches!(a, Arg::Func(_))) else {
            return false;
        };
        let callee = &self.module.functions[f];
        callee.name == "__assertfail" && callee.body.is_none() && callee.params.len() == 5
    }

    pub(super) fn param_slot(&mut self, arg: &Arg, decl: &Param, is_input: bool) -> LResult<Value> {
        match arg {
            Arg::SymbolAddr(sym, 0) => self.symbol_host_address(*sym),
            Arg::Reg(_) | Arg::Imm(_) | Arg::Vector(_) => {
                let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    decl.size.max(8),
                    3,
                ));
                let addr = self.b.ins().stack_addr(types::I64, slot, 0);
                let parts = arg.elements();
                if matches!(arg, Arg::Vector(_)) && parts.len() as u32 * decl.ty.size() != decl.size
                {
                    return Err(self.err(format!(
                        "parameter '{}' has {} bytes, the operand {}",
                        decl.name,
                        decl.size,
                        parts.len() as u32 * decl.ty.size()
                    )));
                }
                if is_input {
                    for (k, part) in parts.iter().enumerate() {
                        let v = self.read(part, decl.ty)?;
                        let offset = (k as u32 * decl.ty.size()) as i32;
                        self.b.ins().store(MemFlagsData::trusted(), v, addr, offset);
                    }
                }
                Ok(addr)
            }
            _ => Err(self.err("call operands must be .param variables or registers")),
        }
    }
}
