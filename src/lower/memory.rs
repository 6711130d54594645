//! Memory: `ld`, `st` (all state spaces, vectors) and `cvta`.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types};

use super::{LResult, Translator};
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::{AddrBase, Arg, Symbol};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// Element type of a memory access: predicates cannot be loaded, but for a `.func`'s
    /// `.reg .pred` parameters and return values (a byte in their slot; see the checker).
    fn access_type(&self, ty: PtxType, space: StateSpace) -> LResult<PtxType> {
        if ty == PtxType::Pred && space != StateSpace::Param {
            return Err(self.err("cannot load or store a .pred"));
        }
        Ok(ty)
    }

    pub fn load(&mut self, space: StateSpace, ty: PtxType, vec: u8, a: &[Arg]) -> LResult {
        let ty = self.access_type(ty, space)?;
        let dst = self.elements(&a[0]).to_vec();
        if dst.len() != vec as usize {
            return Err(self.err(format!(
                "a .v{vec} load needs {vec} destinations, found {}",
                dst.len()
            )));
        }
        let addr = self.access_address(&a[1], space, ty.size() * vec as u32, false)?;
        // A kernel's own parameters do not change during the launch.
        let kernel_param = self.is_entry()
            && matches!(
                a[1],
                Arg::Addr {
                    base: AddrBase::Symbol(Symbol::Param(_)),
                    ..
                }
            );
        let flags = if kernel_param {
            super::invariant()
        } else {
            MemFlagsData::new()
        };
        for (i, d) in dst.iter().enumerate() {
            let v = self
                .b
                .ins()
                .load(ty.ir_type(), flags, addr, (i as u32 * ty.size()) as i32);
            self.write(d, v, ty)?;
        }
        Ok(())
    }

    pub fn store(&mut self, space: StateSpace, ty: PtxType, vec: u8, a: &[Arg]) -> LResult {
        let ty = self.access_type(ty, space)?;
        let src = self.elements(&a[1]).to_vec();
        if src.len() != vec as usize {
            return Err(self.err(format!(
                "a .v{vec} store needs {vec} sources, found {}",
                src.len()
            )));
        }
        let addr = self.access_address(&a[0], space, ty.size() * vec as u32, true)?;
        for (i, s) in src.iter().enumerate() {
            let v = self.read(s, ty)?;
            self.b
                .ins()
                .store(MemFlagsData::new(), v, addr, (i as u32 * ty.size()) as i32);
        }
        Ok(())
    }

    /// Only shared addresses differ between their window and generic form (see `lower`).
    pub fn cvta(&mut self, to_generic: bool, space: StateSpace, ty: PtxType, a: &[Arg]) -> LResult {
        let v = self.read(&a[1], ty)?;
        let v = self.extend(v, types::I64, false);
        let r = if to_generic {
            self.space_to_host(v, space)
        } else {
            self.host_to_space(v, space)
        };
        let r = if ty == PtxType::U32 {
            self.b.ins().ireduce(types::I32, r)
        } else {
            r
        };
        self.write(&a[0], r, ty)
    }

    /// `isspacep.space p, a`: whether the generic address `a` lies in `space`'s window (one
    /// byte of it; the same test confinement makes, whether or not the module is confined).
    pub fn isspacep(&mut self, space: StateSpace, a: &[Arg]) -> LResult {
        let v = self.read(&a[1], PtxType::U64)?;
        let inside = self.in_space(v, space, 1);
        self.write(&a[0], inside, PtxType::Pred)
    }
}
