//! The half `.approx` functions (`tanh`, `ex2`) as tables of every result, one for each
//! format and form, made once a process from the reference (`semantics::half_ops`) when a
//! kernel first uses one: the generated code loads a half's result (one thread at a time,
//! or lane by lane in a group) where it would call libm on the exact value and round.

use std::sync::OnceLock;

use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::Translator;
use crate::semantics::half::HalfFormat;
use crate::semantics::half_ops;

/// A one-operand half function with a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    Tanh,
    /// `ex2.approx`, with or without `.ftz` (of the input and the result).
    Ex2 {
        ftz: bool,
    },
}

/// Entry h: `f` of the half with bits h, in format `fmt`.
pub fn table(f: Function, fmt: HalfFormat) -> &'static [u16] {
    static TABLES: [OnceLock<Box<[u16]>>; 6] = [const { OnceLock::new() }; 6];
    let form = match f {
        Function::Tanh => 0,
        Function::Ex2 { ftz: false } => 1,
        Function::Ex2 { ftz: true } => 2,
    };
    let bf16 = usize::from(fmt.exp_bits == 8);
    TABLES[2 * form + bf16].get_or_init(|| {
        (0..=u16::MAX)
            .map(|h| match f {
                Function::Tanh => half_ops::tanh(fmt, h),
                Function::Ex2 { ftz } => half_ops::ex2(fmt, ftz, h),
            })
            .collect()
    })
}

impl Translator<'_, '_> {
    /// `f` of the half `h` (`i16`): its table's entry.
    pub(super) fn half_table_lookup(&mut self, f: Function, fmt: HalfFormat, h: Value) -> Value {
        let base = table(f, fmt).as_ptr() as i64;
        let index = self.b.ins().uextend(types::I64, h);
        let offset = self.b.ins().ishl_imm_u(index, 1);
        let addr = self.b.ins().iadd_imm_s(offset, base);
        self.b.ins().load(types::I16, super::invariant(), addr, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::half::{BF16, F16};

    #[test]
    fn each_table_is_its_functions_reference_at_every_half() {
        for fmt in [F16, BF16] {
            for f in [
                Function::Tanh,
                Function::Ex2 { ftz: false },
                Function::Ex2 { ftz: true },
            ] {
                let t = table(f, fmt);
                assert_eq!(t.len(), 1 << 16);
                for h in [0u16, 0x3C00, 0x3F80, 0x8001, 0x7C00, 0xFC00, 0x7E01, 0x1234] {
                    let want = match f {
                        Function::Tanh => half_ops::tanh(fmt, h),
                        Function::Ex2 { ftz } => half_ops::ex2(fmt, ftz, h),
                    };
                    assert_eq!(t[h as usize], want, "{f:?} {fmt:?} {h:#06x}");
                }
            }
        }
    }
}
