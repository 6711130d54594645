//! The tensor-map instructions: `cp.async.bulk.tensor` (a call of `ptxjit_tensor_copy`,
//! `crate::tensor_copy::run`, completing at issue like every asynchronous copy, see
//! `async_copy`), `tensormap.replace` (a call of `ptxjit_tensormap_replace`) and
//! `tensormap.cp_fenceproxy` (a 128-byte copy).

use std::mem::offset_of;

use cranelift_codegen::ir::{
    InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value, types,
};
use ptxjit_runtime::Status;

use super::{LResult, Translator};
use crate::frontend::ast::{Immediate, StateSpace};
use crate::frontend::checked::{Arg, MbarrierOp};
use crate::tensor_copy::Request;
use crate::tensor_map::{self, Field};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `cp.async.bulk.tensor.Nd` load `[dstMem], [tensorMap], {coords}, [mbar]{, policy}` or
    /// store `[tensorMap], {coords}, [srcMem]{, policy}` (the checker split the tensor
    /// operand in two).
    pub fn cp_async_bulk_tensor(
        &mut self,
        dims: u8,
        store: bool,
        hint: bool,
        a: &[Arg],
    ) -> LResult {
        let (smem, map, coords, mbar) = match (store, a) {
            (true, [map, coords, smem, ..]) => (smem, map, coords, None),
            (false, [smem, map, coords, mbar, ..]) => (smem, map, coords, Some(mbar)),
            _ => return Err(self.err("cp.async.bulk.tensor's operands are incomplete")),
        };
        let coords = self.elements(coords).to_vec();
        if coords.len() != dims as usize {
            return Err(self.err(format!(
                "a .{dims}d tensor copy takes {dims} coordinates, found {}",
                coords.len()
            )));
        }
        if hint {
            let policy = a.last().expect("the row has a cache-policy operand");
            self.read(policy, PtxType::B64)?;
        }
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size_of::<Request>() as u32,
            3,
        ));
        let put = |t: &mut Self, v, at: usize| {
            t.b.ins().stack_store(types::I64, v, slot, at as i32);
        };
        let map = self.address(map, StateSpace::Generic)?;
        self.check_range(
            map,
            StateSpace::Generic,
            tensor_map::SIZE as u32,
            tensor_map::ALIGN as u32,
            false,
        );
        put(self, map, offset_of!(Request, map));
        // A load may land in another block of the cluster (`.shared::cluster`).
        let (smem, base) = if store {
            (self.address(smem, StateSpace::Shared)?, self.shared_base)
        } else {
            let smem = self.address(smem, StateSpace::SharedCluster)?;
            self.check_range(smem, StateSpace::SharedCluster, 1, 1, true);
            let base = self.block_shared_base(smem);
            (smem, base)
        };
        let offset = self.b.ins().isub(smem, base);
        put(self, offset, offset_of!(Request, offset));
        put(self, base, offset_of!(Request, shared));
        let len = self.shared_len();
        put(self, len, offset_of!(Request, shared_len));
        for (i, c) in coords.iter().enumerate() {
            let v = self.read(c, PtxType::S32)?;
            put(self, v, offset_of!(Request, coords) + 4 * i);
        }
        let dims = self.b.ins().iconst(types::I32, dims as i64);
        put(self, dims, offset_of!(Request, dims));
        let store = self.b.ins().iconst(types::I32, store as i64);
        put(self, store, offset_of!(Request, store));
        let req = self.b.ins().stack_addr(types::I64, slot, 0);
        let f = self.helper_ref("ptxjit_tensor_copy");
        let call = self.b.ins().call(f, &[req]);
        let kind = self.b.inst_results(call)[0];
        self.end_on_fault(kind, |t, at| {
            t.b.ins()
                .stack_load(types::I64, types::I64, slot, at as i32)
        });
        if let Some(mbar) = mbar {
            let bytes = self.b.ins().stack_load(
                types::I64,
                types::I64,
                slot,
                offset_of!(Request, bytes) as i32,
            );
            let mbar = self.access_address(mbar, StateSpace::SharedCluster, 8, true)?;
            self.mbarrier_run(MbarrierOp::CompleteTx, mbar, bytes);
        }
        Ok(())
    }

    /// If the helper's `kind` is not 0: the fault words it left at `Request`'s offsets go to
    /// the block context (with this thread's rank), and the launch ends with that kind here.
    fn end_on_fault(&mut self, kind: Value, load: impl Fn(&mut Self, usize) -> Value) {
        let (go_on, fault) = self.branch_cold(kind, true);
        self.b.switch_to_block(fault);
        let address = load(self, offset_of!(Request, fault_address));
        let detail = load(self, offset_of!(Request, fault_detail));
        self.record_fault(address, detail);
        let kind = self.b.ins().uextend(types::I64, kind);
        let kind = self.b.ins().ishl_imm_u(kind, 56);
        let here = Status::encode(0, self.func_id as u32, self.inst_index);
        let status = self.b.ins().bor_imm_u(kind, here as i64);
        self.b.ins().return_(&[status]);
        self.b.switch_to_block(go_on);
    }

    /// `tensormap.replace.tile.field{.ss}.b1024.type [addr], {ord,} new_val`.
    pub fn tensormap_replace(
        &mut self,
        field: Field,
        space: StateSpace,
        ty: PtxType,
        a: &[Arg],
    ) -> LResult {
        let wide = matches!(field, Field::GlobalAddress | Field::GlobalStride);
        if wide != (ty == PtxType::B64) {
            return Err(self.err(format!(
                "the new value of {field:?} is {}, not {ty}",
                if wide { ".b64" } else { ".b32" }
            )));
        }
        let (ord, value) = match (field.has_ordinal(), a) {
            (true, [_, ord, value]) => (Some(ord), value),
            (false, [_, value]) => (None, value),
            _ => return Err(self.err("tensormap.replace takes [addr], {ord,} new_val")),
        };
        let ord = match ord {
            Some(Arg::Imm(Immediate::Int(n))) => *n,
            Some(_) => return Err(self.err("the ordinal of tensormap.replace is an immediate")),
            None => 0,
        };
        if field.largest_code().is_some() && !matches!(value, Arg::Imm(_)) {
            return Err(self.err(format!("the new value of {field:?} is an immediate")));
        }
        // The ISA's ranges, checked now where the operands are known.
        let mut scratch = [0u8; tensor_map::SIZE];
        let known = match value {
            Arg::Imm(Immediate::Int(v)) => *v,
            _ => 0,
        };
        tensor_map::replace(&mut scratch, field, ord.min(u32::MAX as u64) as u32, known)
            .map_err(|e| self.err(e))?;
        let value = self.read(value, ty)?;
        let value = self.extend(value, types::I64, false);
        let addr = self.address(&a[0], space)?;
        self.check_range(
            addr,
            space,
            tensor_map::SIZE as u32,
            tensor_map::ALIGN as u32,
            true,
        );
        let code = Field::ALL.iter().position(|&f| f == field).expect("listed");
        let code = self.b.ins().iconst(types::I32, code as i64);
        let ord = self.b.ins().iconst(types::I32, ord as i64);
        let f = self.helper_ref("ptxjit_tensormap_replace");
        self.b.ins().call(f, &[addr, code, ord, value]);
        Ok(())
    }

    /// `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
    /// [dst], [src], 128`: the map copied, its fence implied (nothing is cached here).
    pub fn tensormap_copy(&mut self, a: &[Arg]) -> LResult {
        match &a[2] {
            Arg::Imm(Immediate::Int(128)) => {}
            _ => return Err(self.err("tensormap.cp_fenceproxy copies 128 bytes")),
        }
        let size = tensor_map::SIZE as u32;
        let align = tensor_map::ALIGN as u32;
        let dst = self.address(&a[0], StateSpace::Global)?;
        self.check_range(dst, StateSpace::Global, size, align, true);
        let src = self.address(&a[1], StateSpace::Shared)?;
        self.check_range(src, StateSpace::Shared, size, align, false);
        for w in 0..size as i32 / 8 {
            let v = self
                .b
                .ins()
                .load(types::I64, MemFlagsData::new(), src, 8 * w);
            self.b.ins().store(MemFlagsData::new(), v, dst, 8 * w);
        }
        Ok(())
    }
}
