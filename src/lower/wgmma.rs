//! `wgmma.mma_async`'s operands, handed at its synchronization point to the warpgroup's
//! product (`crate::wgmma`): the descriptors, `scale-d` and the immediates go to the frame's
//! operand words, A's registers after them, and D stays in its registers' save slots, where
//! the product reads and rewrites it.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types};

use super::{LResult, Translator};
use crate::frontend::ast::Immediate;
use crate::frontend::checked::{Arg, WgmmaForm};
use crate::types::PtxType;
use crate::wgmma::{args, flags};

impl Translator<'_, '_> {
    pub(super) fn wgmma_operands(&mut self, form: WgmmaForm, a: &[Arg]) -> LResult {
        let shape = format!("wgmma.mma_async.m64n{}k{}", form.n, form.k);
        let a_in_regs = matches!(a[1], Arg::Vector(_));
        // d, a, b-desc, scale-d{, imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b}
        let trans = match (form.transposes(), a_in_regs) {
            (false, _) => 0,
            (true, true) => 1,
            (true, false) => 2,
        };
        let expected = 4 + 2 * usize::from(form.scales()) + trans;
        if a.len() != expected {
            let from = if a_in_regs {
                "registers"
            } else {
                "a descriptor"
            };
            return Err(self.err(format!(
                "{shape} with A from {from} takes {expected} operands, found {}",
                a.len()
            )));
        }
        // D: each register's current value to its save slot.
        let d = self.elements(&a[0]).to_vec();
        if d.len() != form.d_registers() as usize {
            return Err(self.err(format!(
                "{shape} takes {} D registers, found {}",
                form.d_registers(),
                d.len()
            )));
        }
        let slots = self.coop.as_ref().expect("cooperative").layout.regs.clone();
        for e in &d {
            let r = match e {
                Arg::Reg(r) if self.func.regs[*r as usize].ty.bits() == 32 => *r as usize,
                _ => return Err(self.err(format!("{shape}'s D is a vector of 32-bit registers"))),
            };
            let v = self.b.use_var(self.regs[r]);
            let frame = self.frame();
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, frame, slots[r]);
        }
        // A: four registers, or a descriptor.
        let mut bits = 0;
        if a_in_regs {
            let regs = self.elements(&a[1]).to_vec();
            if regs.len() != 4 {
                return Err(self.err(format!("{shape} takes A in 4 registers")));
            }
            for (i, r) in regs.iter().enumerate() {
                let v = self.read(r, PtxType::B32)?;
                self.store_arg(args::A_REGS + i as i32, v);
            }
            bits |= flags::A_IN_REGISTERS;
        }
        let a_desc = match a_in_regs {
            // Compared across the warpgroup, so written even when unused.
            true => self.b.ins().iconst(types::I64, 0),
            false => self.read(&a[1], PtxType::B64)?,
        };
        self.store_arg(args::A_DESC, a_desc);
        let b_desc = self.read(&a[2], PtxType::B64)?;
        self.store_arg(args::B_DESC, b_desc);
        let scale_d = self.read(&a[3], PtxType::Pred)?;
        self.store_arg(args::SCALE_D, scale_d);
        // The immediates.
        let mut next = 4;
        let mut imm = |this: &Self, name: &str, set: u64, allowed: [i64; 2]| -> LResult<u64> {
            let arg = &a[next];
            next += 1;
            match arg {
                Arg::Imm(Immediate::Int(v)) if allowed.contains(&(*v as i64)) => {
                    Ok(if *v as i64 == allowed[1] { set } else { 0 })
                }
                _ => Err(this.err(format!(
                    "{shape}'s {name} is the immediate {} or {}",
                    allowed[0], allowed[1]
                ))),
            }
        };
        if form.scales() {
            bits |= imm(self, "imm-scale-a", flags::NEGATE_A, [1, -1])?;
            bits |= imm(self, "imm-scale-b", flags::NEGATE_B, [1, -1])?;
        }
        if trans == 2 {
            bits |= imm(self, "imm-trans-a", flags::TRANSPOSE_A, [0, 1])?;
        }
        if trans > 0 {
            bits |= imm(self, "imm-trans-b", flags::TRANSPOSE_B, [0, 1])?;
        }
        let bits = self.b.ins().iconst(types::I64, bits as i64);
        self.store_arg(args::FLAGS, bits);
        Ok(())
    }
}
