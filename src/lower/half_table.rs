//! The half `.approx` functions (`tanh`, `ex2`) as tables of every result, one for each
//! hardware function (`semantics::half_approx::Mufu`), made once a process from the reference
//! when a kernel first uses one: the generated code loads a half's result (one thread at a
//! time, or lane by lane in a group) instead of computing the correctly rounded value and
//! reading the reference's bit of difference.

use std::sync::OnceLock;

use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::Translator;
use crate::semantics::half_approx::Mufu;

/// Entry h: `f` of the half with bits h.
pub fn table(f: Mufu) -> &'static [u16] {
    static TABLES: [OnceLock<Box<[u16]>>; Mufu::ALL.len()] =
        [const { OnceLock::new() }; Mufu::ALL.len()];
    TABLES[f as usize].get_or_init(|| (0..=u16::MAX).map(|h| f.eval(h)).collect())
}

impl Translator<'_, '_> {
    /// `f` of the half `h` (`i16`): its table's entry.
    pub(super) fn half_table_lookup(&mut self, f: Mufu, h: Value) -> Value {
        let base = table(f).as_ptr() as i64;
        let index = self.b.ins().uextend(types::I64, h);
        let offset = self.b.ins().ishl_imm_u(index, 1);
        let addr = self.b.ins().iadd_imm_s(offset, base);
        self.b.ins().load(types::I16, super::invariant(), addr, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_is_its_functions_reference_at_every_half() {
        for f in Mufu::ALL {
            let t = table(f);
            assert_eq!(t.len(), 1 << 16);
            for h in 0..=u16::MAX {
                assert_eq!(t[usize::from(h)], f.eval(h), "{} {h:#06x}", f.name());
            }
        }
    }
}
