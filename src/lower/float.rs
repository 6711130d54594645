//! f32 and f64 arithmetic. Results that are NaN become the canonical f32 NaN; `.ftz` flushes
//! subnormal inputs and results; `.sat` clamps. The f32 approximate instructions (`.approx`,
//! `div.full`, `ex2`, `lg2`, `sin`, `cos`, `tanh`) follow an H200's instruction sequences
//! around its MUFU unit, the unit itself correctly rounded (`semantics::mufu`, `lower::mufu`).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::{LResult, Translator};
use super::{mufu, softfloat};
use crate::frontend::checked::{Arg, FloatMods, FloatOp, Function, Op, Rounding, TestOp};
use crate::semantics::directed::{Arith, DIRECTIONS};
use crate::types::PtxType;

/// The registers no instruction sees a NaN's bits of: every instruction that reads one is
/// f32 arithmetic that makes a NaN result canonical itself (not a sign operation, which
/// keeps a NaN's bits). An f32 operation that writes such a register leaves its NaN as
/// the host gives it (x86 keeps an input NaN's payload, where PTX gives the canonical NaN):
/// that NaN reaches nothing but a NaN result of that arithmetic, canonical there. (An fma
/// chain's steps: its vector compare and select were half each step's latency.)
pub(super) fn nan_unseen(f: &Function) -> Vec<bool> {
    let mut unseen = vec![true; f.regs.len()];
    for inst in f.body.iter().flatten() {
        let canonical = matches!(inst.op, Op::Float { op, ty: PtxType::F32, .. }
            if !op.is_sign_operation());
        if !canonical {
            for r in super::liveness::sources(inst) {
                unseen[r as usize] = false;
            }
        }
    }
    unseen
}

impl Translator<'_, '_> {
    /// Whether an f32 result written to `dst` must be made canonical where it is NaN
    /// (see [`nan_unseen`]).
    pub(super) fn nan_seen(&self, dst: &Arg) -> bool {
        !matches!(dst, Arg::Reg(r) if self.nan_unseen[*r as usize])
    }

    pub fn float(&mut self, op: FloatOp, ty: PtxType, mods: FloatMods, a: &[Arg]) -> LResult {
        if !ty.is_float() {
            return Err(self.err(format!("{op:?} is not defined on {ty}")));
        }
        let directed = match mods.rnd {
            Some(_) if op.is_sign_operation() => None,
            Some(rnd) => match (self.direction(rnd)?, Arith::of(op)) {
                (Some(rnd), Some(arith)) => Some((arith, rnd)),
                (None, _) => None,
                (Some(_), None) => return Err(self.unsupported("a rounding of this operation")),
            },
            None => None,
        };
        if mods.relu || mods.nan || mods.xorsign_abs || mods.oob {
            return Err(self.unsupported("modifier not defined on f32/f64"));
        }
        let nsrc = op.sources();
        let mut x = Vec::new();
        for arg in &a[1..=nsrc] {
            let v = self.read(arg, ty)?;
            x.push(if mods.ftz {
                softfloat::flush_subnormal(self.b, v)
            } else {
                v
            });
        }
        // (`jit::Approximations`: else IEEE division and the host's libm.)
        let mufu_f32 = ty == PtxType::F32 && self.gpu_approximations;
        let r = match op {
            // The host rounds only to nearest: the other directions are exact arithmetic in
            // a helper (`semantics::directed`).
            _ if let Some((arith, rnd)) = directed => {
                let name = if ty == PtxType::F32 {
                    "ptxjit_directed_f32"
                } else {
                    "ptxjit_directed_f64"
                };
                let f = self.helper_ref(name);
                let mut args = vec![self.b.ins().iconst(types::I32, arith as i64), rnd];
                args.extend((0..3).map(|i| x.get(i).copied().unwrap_or(x[0])));
                let call = self.b.ins().call(f, &args);
                self.b.inst_results(call)[0]
            }
            FloatOp::Add => self.b.ins().fadd(x[0], x[1]),
            FloatOp::Sub => self.b.ins().fsub(x[0], x[1]),
            FloatOp::Mul => self.b.ins().fmul(x[0], x[1]),
            FloatOp::Fma => self.b.ins().fma(x[0], x[1], x[2]),
            // div.full, div.approx, rcp.approx and rsqrt.approx (f32) as an H200's sequences
            // compute them (`semantics::mufu`); div.rn is IEEE division.
            FloatOp::Div if mufu_f32 && mods.full => mufu::div_full(self.b, x[0], x[1], mods.ftz),
            FloatOp::Div if mufu_f32 && mods.approx => {
                mufu::div_approx(self.b, x[0], x[1], mods.ftz)
            }
            FloatOp::Rcp if mufu_f32 && mods.approx => mufu::rcp(self.b, x[0]),
            FloatOp::Rsqrt if mufu_f32 => mufu::rsqrt(self.b, x[0]),
            FloatOp::Div => self.b.ins().fdiv(x[0], x[1]),
            FloatOp::Sqrt => self.b.ins().sqrt(x[0]),
            FloatOp::Rcp => {
                let one = self.one(ty);
                self.b.ins().fdiv(one, x[0])
            }
            FloatOp::Rsqrt => {
                let one = self.one(ty);
                let s = self.b.ins().sqrt(x[0]);
                self.b.ins().fdiv(one, s)
            }
            // Sign-bit operations: NaNs pass through unchanged (documented for f64; chosen
            // for f32 too, as the sign operation the ISA describes).
            FloatOp::Neg => self.b.ins().fneg(x[0]),
            FloatOp::Abs => self.b.ins().fabs(x[0]),
            FloatOp::Copysign => self.b.ins().fcopysign(x[1], x[0]),
            FloatOp::Min | FloatOp::Max => {
                softfloat::min_max(self.b, op == FloatOp::Max, x[0], x[1])
            }
            FloatOp::Ex2 | FloatOp::Lg2 | FloatOp::Sin | FloatOp::Cos | FloatOp::Tanh => {
                let name = match (op, mufu_f32) {
                    _ if ty != PtxType::F32 => {
                        return Err(self.err(format!("{op:?} is only defined on .f32")));
                    }
                    (FloatOp::Ex2, true) => "ptxjit_exp2f",
                    (FloatOp::Lg2, true) => "ptxjit_log2f",
                    (FloatOp::Sin, true) => "ptxjit_sinf",
                    (FloatOp::Cos, true) => "ptxjit_cosf",
                    (FloatOp::Tanh, true) => "ptxjit_tanhf",
                    (FloatOp::Ex2, false) => "ptxjit_exp2f_libm",
                    (FloatOp::Lg2, false) => "ptxjit_log2f_libm",
                    (FloatOp::Sin, false) => "ptxjit_sinf_libm",
                    (FloatOp::Cos, false) => "ptxjit_cosf_libm",
                    _ => "ptxjit_tanhf_libm",
                };
                let f = self.helper_ref(name);
                let call = self.b.ins().call(f, &[x[0]]);
                self.b.inst_results(call)[0]
            }
        };
        let mut r = r;
        if mods.sat {
            r = softfloat::saturate(self.b, r);
        }
        if mods.ftz {
            r = match Arith::of(op) {
                // (A sum of f32 values that is below the smallest normal is exact: only a
                // product can round up to it.)
                Some(arith @ (Arith::Mul | Arith::Fma)) if ty == PtxType::F32 => {
                    let rnd = directed.map(|(_, rnd)| rnd);
                    self.flush_result_f32(arith, rnd, &x, r)
                }
                _ => softfloat::flush_subnormal(self.b, r),
            };
        }
        if ty == PtxType::F32 && !op.is_sign_operation() && self.nan_seen(&a[0]) {
            r = softfloat::canonicalize_f32(self.b, r);
        }
        self.write(&a[0], r, ty)
    }

    /// `.ftz` on `r`, an f32 `mul` or `fma` of `x` rounded in direction `rnd` (the helpers'
    /// index; `None` to nearest), as `semantics::float::flush_result_f32`: a subnormal
    /// flushed here; the smallest normal, which an exact value tiny after rounding can round
    /// up to, decided by that function out of line (rare).
    pub(super) fn flush_result_f32(
        &mut self,
        arith: Arith,
        rnd: Option<Value>,
        x: &[Value],
        r: Value,
    ) -> Value {
        self.flush_tiny_f32(r, |this| this.call_flush_result_f32(arith, rnd, x, r))
    }

    /// A call of `semantics::float::flush_result_f32` (see [`Self::flush_result_f32`]).
    pub(super) fn call_flush_result_f32(
        &mut self,
        arith: Arith,
        rnd: Option<Value>,
        x: &[Value],
        r: Value,
    ) -> Value {
        let f = self.helper_ref("ptxjit_flush_result_f32");
        let op = self.b.ins().iconst(types::I32, arith as i64);
        let rnd = rnd.unwrap_or_else(|| self.b.ins().iconst(types::I32, 0));
        let mut args = vec![op, rnd];
        args.extend((0..3).map(|i| x.get(i).copied().unwrap_or(x[0])));
        args.push(r);
        let call = self.b.ins().call(f, &args);
        self.b.inst_results(call)[0]
    }

    /// `.ftz` on an f32 result `r` that may be tiny after rounding: a subnormal flushed
    /// here; at the smallest normal, `decide` (emitted out of line: rare) gives the result.
    pub(super) fn flush_tiny_f32(
        &mut self,
        r: Value,
        decide: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        let flushed = softfloat::flush_subnormal(self.b, r);
        let bits = self.b.ins().bitcast(types::I32, MemFlagsData::new(), r);
        let magnitude = self.b.ins().band_imm_u(bits, 0x7FFF_FFFF);
        let smallest_normal = f32::MIN_POSITIVE.to_bits() as i64;
        let at = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, magnitude, smallest_normal);
        let cold = self.b.create_block();
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, types::F32);
        self.b.ins().brif(at, cold, &[], done, &[flushed.into()]);
        self.b.seal_block(cold);
        self.b.set_cold_block(cold);
        self.b.switch_to_block(cold);
        let decided = decide(self);
        self.b.ins().jump(done, &[decided.into()]);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        result
    }

    /// The index of a direction other than to nearest, for the helpers of
    /// `semantics::directed` (`None` to nearest, which the host does itself).
    pub(super) fn direction(&mut self, rnd: Rounding) -> LResult<Option<Value>> {
        match DIRECTIONS.iter().position(|&d| d == rnd) {
            Some(0) => Ok(None),
            Some(k) => Ok(Some(self.b.ins().iconst(types::I32, k as i64))),
            None => Err(self.unsupported("this rounding of f32/f64 values")),
        }
    }

    /// `testp.op.type p, a`: a class of `a`'s value (zero is neither normal nor subnormal).
    pub fn testp(&mut self, op: TestOp, ty: PtxType, a: &[Arg]) -> LResult {
        let x = self.read(&a[1], ty)?;
        let x = self.b.ins().fabs(x);
        let [zero, min_normal, inf] = if ty == PtxType::F32 {
            [0.0, f32::MIN_POSITIVE, f32::INFINITY].map(|v| self.b.ins().f32const(v))
        } else {
            [0.0, f64::MIN_POSITIVE, f64::INFINITY].map(|v| self.b.ins().f64const(v))
        };
        let p = match op {
            TestOp::Finite => self.b.ins().fcmp(FloatCC::LessThan, x, inf),
            TestOp::Infinite => self.b.ins().fcmp(FloatCC::Equal, x, inf),
            TestOp::Number => self.b.ins().fcmp(FloatCC::Ordered, x, x),
            TestOp::NotANumber => self.b.ins().fcmp(FloatCC::Unordered, x, x),
            TestOp::Normal => {
                let big = self
                    .b
                    .ins()
                    .fcmp(FloatCC::GreaterThanOrEqual, x, min_normal);
                let finite = self.b.ins().fcmp(FloatCC::LessThan, x, inf);
                self.b.ins().band(big, finite)
            }
            TestOp::Subnormal => {
                let small = self.b.ins().fcmp(FloatCC::LessThan, x, min_normal);
                let nonzero = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
                self.b.ins().band(small, nonzero)
            }
        };
        self.write(&a[0], p, PtxType::Pred)
    }

    fn one(&mut self, ty: PtxType) -> Value {
        if ty == PtxType::F32 {
            self.b.ins().f32const(1.0)
        } else {
            self.b.ins().f64const(1.0)
        }
    }
}
