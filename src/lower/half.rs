//! f16, f16x2, bf16, bf16x2 arithmetic (PTX ISA 9.7.4): per lane, the same steps as
//! `semantics::half_ops`, built from the helpers in `softfloat`; `tanh`/`ex2` read the
//! tables of `half_table`.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::checked::{Arg, FloatMods, FloatOp};
use crate::semantics::half::{BF16, F16, HalfFormat};
use crate::semantics::half_approx::Mufu;
use crate::semantics::half_ops::OOB_NAN;
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
        if !matches!(
            op,
            FloatOp::Add
                | FloatOp::Sub
                | FloatOp::Mul
                | FloatOp::Min
                | FloatOp::Max
                | FloatOp::Fma
                | FloatOp::Neg
                | FloatOp::Abs
                | FloatOp::Tanh
                | FloatOp::Ex2
        ) {
            return Err(self.unsupported("not defined on half-precision types"));
        }
        let nsrc = op.sources();
        // f16x2 and f16 arithmetic: one call to the precompiled helper when the host has one
        // (a scalar in the pair's low half). Since the helper mends midpoints in registers,
        // the call beats the inline code on scalars too: one-thread chains of 256 scalar
        // `add` 1.7×, `mul` 1.5×, `fma` 2.2×, `fma.ftz` 1.3×, `fma.sat` 1.2× faster.
        if matches!(ty, PtxType::F16x2 | PtxType::F16)
            && let (Some(code), Some(helper)) = (
                crate::native::code(op, mods, ty),
                self.native_helper_ref(crate::native::SYMBOL),
            )
        {
            let mut args = Vec::new();
            for i in 0..3 {
                let v = match a.get(1 + i).filter(|_| i < nsrc) {
                    Some(arg) => self.read(arg, ty)?,
                    None => self.b.ins().iconst(types::I32, 0),
                };
                args.push(self.extend(v, types::I32, false));
            }
            args.push(self.b.ins().iconst(types::I32, code as i64));
            let call = self.b.ins().call(helper, &args);
            let mut r = self.b.inst_results(call)[0];
            if ty == PtxType::F16 {
                r = self.b.ins().ireduce(types::I16, r);
            }
            return self.write(&a[0], r, ty);
        }
        let src: Vec<Value> = a[1..=nsrc]
            .iter()
            .map(|arg| self.read(arg, ty))
            .collect::<LResult<_>>()?;
        let mut out = Vec::new();
        for lane in 0..lanes {
            let x: Vec<Value> = src.iter().map(|&v| self.lane(v, lane)).collect();
            out.push(match op {
                FloatOp::Add | FloatOp::Sub | FloatOp::Mul | FloatOp::Fma => {
                    self.half_arith_lane(fmt, op, mods, &x)
                }
                FloatOp::Neg | FloatOp::Abs => {
                    self.half_neg_abs(fmt, op == FloatOp::Abs, mods.ftz, x[0])
                }
                FloatOp::Min | FloatOp::Max => {
                    self.half_min_max(fmt, op == FloatOp::Max, mods, x[0], x[1])
                }
                _ => {
                    let f = Mufu::of(op, fmt).expect("tanh or ex2, as checked above");
                    self.half_table_lookup(f, x[0])
                }
            });
        }
        let result = self.pack(&out);
        self.write(&a[0], result, ty)
    }

    /// `add sub mul fma`: `.oob` test → `.ftz` inputs → exact f64 → one rounding → `.ftz`
    /// result → `.sat` → `.relu` → `.oob` forces +0.
    pub(super) fn half_arith_lane(
        &mut self,
        fmt: HalfFormat,
        op: FloatOp,
        mods: FloatMods,
        x: &[Value],
    ) -> Value {
        // `semantics::half_ops::is_oob`: `a` or `b`, either sign.
        let oob = mods.oob.then(|| {
            let [p, q] = [x[0], x[1]].map(|h| {
                let magnitude = self.b.ins().band_imm_u(h, 0x7FFF);
                self.b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, magnitude, OOB_NAN as i64)
            });
            self.b.ins().bor(p, q)
        });
        let x: Vec<Value> = x
            .iter()
            .map(|&h| {
                if mods.ftz {
                    softfloat::half_flush(self.b, fmt, h)
                } else {
                    h
                }
            })
            .collect();
        let mut r = if op == FloatOp::Fma {
            self.half_fma_rne(fmt, mods.ftz, &x)
        } else {
            // add/sub/mul in f32: exact products; sums rounded once more, harmlessly
            // (24 >= 2*11 + 2 bits), then rounded to the half format.
            let f: Vec<Value> = x
                .iter()
                .map(|&h| softfloat::half_to_f32(self.b, fmt, h))
                .collect();
            let v = match op {
                FloatOp::Add => self.b.ins().fadd(f[0], f[1]),
                FloatOp::Sub => self.b.ins().fsub(f[0], f[1]),
                _ => self.b.ins().fmul(f[0], f[1]),
            };
            let r = softfloat::f32_to_half_rne(self.b, fmt, v);
            if mods.ftz {
                softfloat::half_flush_tiny(self.b, fmt, v, r)
            } else {
                r
            }
        };
        if mods.sat {
            r = softfloat::half_saturate(self.b, fmt, r);
        }
        if mods.relu {
            r = softfloat::half_relu(self.b, fmt, r);
        }
        if let Some(hit) = oob {
            let zero = self.b.ins().iconst(types::I16, 0);
            r = self.b.ins().select(hit, zero, r);
        }
        r
    }

    /// `fma.rn` on one lane, rounded once. Fast path: an f32 fma (the product of two halves is
    /// exact in f32), then rounding to the half format. Rounding twice can only err when the
    /// f32 result lies exactly on a midpoint of the half grid (midpoints are f32 values, and
    /// rounding to nearest never crosses a representable value); such results, flagged by
    /// their zero low bits, take the exact path: the reference's fma (f64, with round-to-odd
    /// for bf16, then one rounding). `.ftz` on the result where `ftz` (an f32 result on
    /// the tiny bound itself, which is such a "midpoint", takes the exact path too).
    fn half_fma_rne(&mut self, fmt: HalfFormat, ftz: bool, x: &[Value]) -> Value {
        let f: Vec<Value> = x
            .iter()
            .map(|&h| softfloat::half_to_f32(self.b, fmt, h))
            .collect();
        let r32 = self.b.ins().fma(f[0], f[1], f[2]);
        let fast = softfloat::f32_to_half_rne(self.b, fmt, r32);
        // A midpoint has all bits below the half's last place plus one zero and is not itself
        // a half value. (Both tests are off the critical path: they only feed the branch.)
        let low_mask = (1i64 << (22 - fmt.mant_bits)) - 1;
        let bits = self.b.ins().bitcast(types::I32, MemFlagsData::new(), r32);
        let low = self.b.ins().band_imm_u(bits, low_mask);
        let low_zero = self.b.ins().icmp_imm_u(IntCC::Equal, low, 0);
        let back = softfloat::half_to_f32(self.b, fmt, fast);
        let inexact = self.b.ins().fcmp(FloatCC::NotEqual, back, r32);
        let hazard = self.b.ins().band(low_zero, inexact);
        let fast = if ftz {
            softfloat::half_flush_tiny(self.b, fmt, r32, fast)
        } else {
            fast
        };
        let slow = self.b.create_block();
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, types::I16);
        self.b.ins().brif(hazard, slow, &[], done, &[fast.into()]);
        self.b.set_cold_block(slow);
        self.b.switch_to_block(slow);
        // The exact path is the reference itself, out of line (it is rare, and inlining it
        // would double the code of every fma).
        let helper = if fmt == F16 {
            "ptxjit_fma_f16"
        } else {
            "ptxjit_fma_bf16"
        };
        let mut args: Vec<Value> = x
            .iter()
            .map(|&h| self.b.ins().uextend(types::I32, h))
            .collect();
        args.push(self.b.ins().iconst(types::I32, ftz as i64));
        let f = self.helper_ref(helper);
        let call = self.b.ins().call(f, &args);
        let exact = self.b.inst_results(call)[0];
        let slow_result = self.b.ins().ireduce(types::I16, exact);
        self.b.ins().jump(done, &[slow_result.into()]);
        self.b.switch_to_block(done);
        result
    }

    /// Sign operations; a NaN gives the canonical NaN.
    fn half_neg_abs(&mut self, fmt: HalfFormat, is_abs: bool, ftz: bool, h: Value) -> Value {
        let h = if ftz {
            softfloat::half_flush(self.b, fmt, h)
        } else {
            h
        };
        let r = if is_abs {
            self.b.ins().band_imm_u(h, 0x7FFF)
        } else {
            self.b.ins().bxor_imm_u(h, 0x8000)
        };
        let nan = softfloat::half_is_nan(self.b, fmt, h);
        softfloat::half_nan_if(self.b, nan, r)
    }

    /// `min`/`max` `{.ftz}{.NaN}{.xorsign.abs}`, as `semantics::half_ops::min_max`.
    fn half_min_max(
        &mut self,
        fmt: HalfFormat,
        is_max: bool,
        mods: FloatMods,
        a: Value,
        b: Value,
    ) -> Value {
        let (mut a, mut b) = if mods.ftz {
            (
                softfloat::half_flush(self.b, fmt, a),
                softfloat::half_flush(self.b, fmt, b),
            )
        } else {
            (a, b)
        };
        let xor = self.b.ins().bxor(a, b);
        let sign = self.b.ins().band_imm_u(xor, 0x8000);
        if mods.xorsign_abs {
            a = self.b.ins().band_imm_u(a, 0x7FFF);
            b = self.b.ins().band_imm_u(b, 0x7FFF);
        }
        let an = softfloat::half_is_nan(self.b, fmt, a);
        let bn = softfloat::half_is_nan(self.b, fmt, b);
        let (fa, fb) = (
            softfloat::half_to_f32(self.b, fmt, a),
            softfloat::half_to_f32(self.b, fmt, b),
        );
        let cc = if is_max {
            FloatCC::GreaterThan
        } else {
            FloatCC::LessThan
        };
        let a_wins = self.b.ins().fcmp(cc, fa, fb);
        let picked = self.b.ins().select(a_wins, a, b);
        // Equal values differ only for ±0: max prefers +0 (AND of bits), min −0 (OR).
        let merged = if is_max {
            self.b.ins().band(a, b)
        } else {
            self.b.ins().bor(a, b)
        };
        let equal = self.b.ins().fcmp(FloatCC::Equal, fa, fb);
        let picked = self.b.ins().select(equal, merged, picked);
        let picked = self.b.ins().select(bn, a, picked);
        let picked = self.b.ins().select(an, b, picked);
        let nan_result = if mods.nan {
            self.b.ins().bor(an, bn)
        } else {
            self.b.ins().band(an, bn)
        };
        let d = softfloat::half_nan_if(self.b, nan_result, picked);
        if !mods.xorsign_abs {
            return d;
        }
        let magnitude = self.b.ins().band_imm_u(d, 0x7FFF);
        let signed = self.b.ins().bor(magnitude, sign);
        let d_nan = softfloat::half_is_nan(self.b, fmt, d);
        self.b.ins().select(d_nan, d, signed)
    }
}
