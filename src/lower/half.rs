//! f16, f16x2, bf16, bf16x2 arithmetic (PTX ISA 9.7.4): each lane is decoded to f64, computed,
//! and rounded once by `softfloat`.

use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::checked::{Arg, FloatMods, FloatOp, Rounding};
use crate::semantics::half::{BF16, F16, HalfFormat};
use crate::types::PtxType;

/// The format and lane count of a half type.
pub fn format_of(ty: PtxType) -> (HalfFormat, u32) {
    match ty {
        PtxType::F16 => (F16, 1),
        PtxType::F16x2 => (F16, 2),
        PtxType::BF16 => (BF16, 1),
        PtxType::BF16x2 => (BF16, 2),
        _ => unreachable!("not a half type: {ty}"),
    }
}

impl Translator<'_, '_> {
    /// Lane `i` (0 = bits 0–15) of a packed value, as `i16`.
    pub fn lane(&mut self, v: Value, i: u32) -> Value {
        if self.b.func.dfg.value_type(v) == types::I16 {
            return v;
        }
        let shifted = if i == 0 {
            v
        } else {
            self.b.ins().ushr_imm_u(v, 16 * i as i64)
        };
        self.b.ins().ireduce(types::I16, shifted)
    }

    /// Packs `i16` lanes into an `i16` (one lane) or `i32` (two lanes, first = low).
    pub fn pack(&mut self, lanes: &[Value]) -> Value {
        if lanes.len() == 1 {
            return lanes[0];
        }
        let lo = self.b.ins().uextend(types::I32, lanes[0]);
        let hi = self.b.ins().uextend(types::I32, lanes[1]);
        let hi = self.b.ins().ishl_imm_u(hi, 16);
        self.b.ins().bor(lo, hi)
    }

    pub fn half(&mut self, op: FloatOp, ty: PtxType, mods: FloatMods, a: &[Arg]) -> LResult {
        let (fmt, lanes) = format_of(ty);
        let plain = FloatMods {
            rnd: mods.rnd,
            ..FloatMods::default()
        };
        if mods != plain || !matches!(mods.rnd, None | Some(Rounding::Rn)) {
            return Err(self.unsupported("modifiers not implemented for half precision yet"));
        }
        let nsrc = match op {
            FloatOp::Add | FloatOp::Sub | FloatOp::Mul => 2,
            FloatOp::Fma if mods.rnd == Some(Rounding::Rn) => 3,
            FloatOp::Fma => return Err(self.err("fma on half-precision types needs .rn")),
            _ => return Err(self.unsupported("not implemented for half precision yet")),
        };
        let src: Vec<Value> = a[1..=nsrc]
            .iter()
            .map(|arg| self.read(arg, ty))
            .collect::<LResult<_>>()?;
        let mut out = Vec::new();
        for lane in 0..lanes {
            let x: Vec<Value> = src
                .iter()
                .map(|&v| {
                    let h = self.lane(v, lane);
                    softfloat::half_to_f64(self.b, fmt, h)
                })
                .collect();
            let exact = match op {
                FloatOp::Add => self.b.ins().fadd(x[0], x[1]),
                FloatOp::Sub => self.b.ins().fsub(x[0], x[1]),
                FloatOp::Mul => self.b.ins().fmul(x[0], x[1]),
                // f16: a*b + c in f64 is exact for finite results; bf16 needs round-to-odd.
                _ if fmt == F16 => self.b.ins().fma(x[0], x[1], x[2]),
                _ => softfloat::fma_round_to_odd(self.b, x[0], x[1], x[2]),
            };
            out.push(softfloat::f64_to_half(self.b, fmt, exact, Rounding::Rn));
        }
        let result = self.pack(&out);
        self.write(&a[0], result, ty)
    }
}
