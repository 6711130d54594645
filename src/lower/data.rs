//! Data movement: `mov` (including packing and unpacking vectors of bits) and `selp`.

use cranelift_codegen::ir::{InstBuilder, Value};

use super::{LResult, Translator};
use crate::frontend::checked::Arg;
use crate::types::PtxType;

/// The bits type of `bits` bits.
pub(super) fn bits_type(bits: u32) -> Option<PtxType> {
    Some(match bits {
        8 => PtxType::B8,
        16 => PtxType::B16,
        32 => PtxType::B32,
        64 => PtxType::B64,
        _ => return None,
    })
}

impl Translator<'_, '_> {
    pub fn mov(&mut self, ty: PtxType, a: &[Arg]) -> LResult {
        match (&a[0], &a[1]) {
            (Arg::Vector(dst), src) if dst.len() > 1 => {
                let elem = self.element_type(ty, dst.len())?;
                let whole = self.read(src, ty.bits_type())?;
                for (i, d) in dst.iter().enumerate() {
                    let part = if i == 0 {
                        whole
                    } else {
                        self.b
                            .ins()
                            .ushr_imm_u(whole, (i as u32 * elem.bits()) as i64)
                    };
                    let part = self.b.ins().ireduce(elem.ir_type(), part);
                    self.write(d, part, elem)?;
                }
                Ok(())
            }
            (dst, Arg::Vector(src)) if src.len() > 1 => {
                let elem = self.element_type(ty, src.len())?;
                let wide = ty.bits_type();
                let mut acc: Option<Value> = None;
                for (i, s) in src.iter().enumerate() {
                    let part = self.read(s, elem)?;
                    let part = self.b.ins().uextend(wide.ir_type(), part);
                    let part = if i == 0 {
                        part
                    } else {
                        self.b
                            .ins()
                            .ishl_imm_u(part, (i as u32 * elem.bits()) as i64)
                    };
                    acc = Some(match acc {
                        Some(v) => self.b.ins().bor(v, part),
                        None => part,
                    });
                }
                let v = acc.expect("at least two elements");
                self.write(dst, v, wide)
            }
            (dst, src) => {
                let v = self.read(src, ty)?;
                self.write(dst, v, ty)
            }
        }
    }

    /// `mov.vN.type d, a`: a parallel copy (`{a, b}` ← `{b, a}` swaps).
    pub fn mov_vector(&mut self, ty: PtxType, vec: u8, a: &[Arg]) -> LResult {
        let (Arg::Vector(dst), Arg::Vector(src)) = (&a[0], &a[1]) else {
            return Err(self.err(format!("mov.v{vec} moves a vector into a vector")));
        };
        if dst.len() != vec as usize || src.len() != vec as usize {
            return Err(self.err(format!(
                "mov.v{vec} needs {vec} elements on each side, found {} and {}",
                dst.len(),
                src.len()
            )));
        }
        let values = src
            .iter()
            .map(|s| self.read(s, ty))
            .collect::<LResult<Vec<_>>>()?;
        for (d, v) in dst.iter().zip(values) {
            self.write(d, v, ty)?;
        }
        Ok(())
    }

    fn element_type(&self, ty: PtxType, n: usize) -> LResult<PtxType> {
        let bits = ty.bits() / n as u32;
        match bits_type(bits) {
            Some(t) if bits * n as u32 == ty.bits() && (ty.is_int() || ty.is_half()) => Ok(t),
            _ => Err(self.err(format!("cannot split {ty} into {n} parts"))),
        }
    }

    pub fn selp(&mut self, ty: PtxType, a: &[Arg]) -> LResult {
        let x = self.read(&a[1], ty)?;
        let y = self.read(&a[2], ty)?;
        let c = self.read(&a[3], PtxType::Pred)?;
        let r = self.b.ins().select(c, x, y);
        self.write(&a[0], r, ty)
    }
}
