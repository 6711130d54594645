//! `cvt`: between integer widths, floats, halves and integers, with every rounding mode the
//! half formats need (one rounding routine, `softfloat::f64_to_half`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

use super::half::format_of;
use super::softfloat;
use super::{LResult, Translator};
use crate::frontend::checked::{Arg, CvtMods, Rounding};
use crate::semantics::half::HalfFormat;
use crate::types::PtxType;

impl Translator<'_, '_> {
    pub fn cvt(&mut self, dst: PtxType, src: PtxType, mods: CvtMods, a: &[Arg]) -> LResult {
        if (mods.relu || mods.satfinite) && !dst.is_half() {
            return Err(self.unsupported(".relu and .satfinite are defined for half destinations"));
        }
        if matches!(dst, PtxType::F16x2 | PtxType::BF16x2) {
            // cvt.rn.f16x2.f32 d, a, b: a goes to the high half, b to the low half.
            if a.len() != 3 || src != PtxType::F32 {
                return Err(self.err(format!("cvt to {dst} takes two .f32 sources")));
            }
            let (fmt, _) = format_of(dst);
            let mode = mods.rnd.unwrap_or(Rounding::Rn);
            let mut lanes = Vec::new();
            for arg in [&a[2], &a[1]] {
                let x = self.read(arg, PtxType::F32)?;
                let x = if mods.ftz {
                    softfloat::flush_subnormal(self.b, x)
                } else {
                    x
                };
                let mut x = self.b.ins().fpromote(types::F64, x);
                if mods.sat {
                    x = softfloat::saturate(self.b, x);
                }
                let h = softfloat::f64_to_half(self.b, fmt, x, mode);
                lanes.push(self.half_result_mods(fmt, mods, h));
            }
            let r = self.pack(&lanes);
            return self.write(&a[0], r, dst);
        }
        if a.len() != 2 {
            return Err(self.err("cvt takes one source"));
        }
        let x = self.read(&a[1], src)?;
        let r = match (dst.is_int(), src.is_int()) {
            (true, true) => self.int_to_int(dst, src, mods.sat, x)?,
            (true, false) => {
                let f = self.exact_f64(src, mods.ftz, x);
                self.float_to_int(dst, mods, f)?
            }
            (false, true) => self.int_to_float(dst, src, mods, x)?,
            (false, false) => self.float_to_float(dst, src, mods, x)?,
        };
        self.write(&a[0], r, dst)
    }

    /// A float or half value as an exact f64 (flushing f32 subnormals with `.ftz`).
    fn exact_f64(&mut self, src: PtxType, ftz: bool, x: Value) -> Value {
        match src {
            PtxType::F64 => x,
            PtxType::F32 => {
                let x = if ftz {
                    softfloat::flush_subnormal(self.b, x)
                } else {
                    x
                };
                self.b.ins().fpromote(types::F64, x)
            }
            _ => {
                let (fmt, _) = format_of(src);
                softfloat::half_to_f64(self.b, fmt, x)
            }
        }
    }

    fn int_to_int(&mut self, dst: PtxType, src: PtxType, sat: bool, x: Value) -> LResult<Value> {
        let (dt, st) = (dst.ir_type(), src.ir_type());
        if sat && (dst.size() > 4 || src.size() > 4) {
            // A signed source can pass only the bounds it can reach in i64; an unsigned one
            // only the upper bound (u64's, u64::MAX, clamps nothing).
            let wide = self.extend(x, types::I64, src.is_signed());
            let (lo, hi) = int_range(dst);
            let clamped = if src.is_signed() {
                let lo = self.b.ins().iconst(types::I64, lo);
                let v = self.b.ins().smax(wide, lo);
                if dst == PtxType::U64 {
                    v
                } else {
                    let hi = self.b.ins().iconst(types::I64, hi);
                    self.b.ins().smin(v, hi)
                }
            } else {
                let hi = self.b.ins().iconst(types::I64, hi);
                self.b.ins().umin(wide, hi)
            };
            return Ok(if dt.bits() < 64 {
                self.b.ins().ireduce(dt, clamped)
            } else {
                clamped
            });
        }
        if !sat || dst.size() > 4 || src.size() > 4 {
            return Ok(if dt.bits() < st.bits() {
                self.b.ins().ireduce(dt, x)
            } else {
                self.extend(x, dt, src.is_signed())
            });
        }
        let wide = self.extend(x, types::I64, src.is_signed());
        let (lo, hi) = int_range(dst);
        let lo = self.b.ins().iconst(types::I64, lo);
        let hi = self.b.ins().iconst(types::I64, hi);
        let clamped = self.b.ins().smax(wide, lo);
        let clamped = self.b.ins().smin(clamped, hi);
        Ok(if dt.bits() < 64 {
            self.b.ins().ireduce(dt, clamped)
        } else {
            clamped
        })
    }

    /// Float → integer: round per the `.rXi` mode, then saturate to the range (NaN → 0).
    fn float_to_int(&mut self, dst: PtxType, mods: CvtMods, f: Value) -> LResult<Value> {
        let rounded = self.round_integral(mods.rnd.unwrap_or(Rounding::Rz), f)?;
        let signed = dst.is_signed();
        if dst.size() == 8 {
            return Ok(if signed {
                self.b.ins().fcvt_to_sint_sat(types::I64, rounded)
            } else {
                self.b.ins().fcvt_to_uint_sat(types::I64, rounded)
            });
        }
        let (lo, hi) = int_range(dst);
        let hi = self.b.ins().iconst(types::I64, hi);
        let clamped = if signed {
            let wide = self.b.ins().fcvt_to_sint_sat(types::I64, rounded);
            let lo = self.b.ins().iconst(types::I64, lo);
            let clamped = self.b.ins().smax(wide, lo);
            self.b.ins().smin(clamped, hi)
        } else {
            let wide = self.b.ins().fcvt_to_uint_sat(types::I64, rounded);
            self.b.ins().umin(wide, hi)
        };
        Ok(self.b.ins().ireduce(dst.ir_type(), clamped))
    }

    fn round_integral(&mut self, mode: Rounding, f: Value) -> LResult<Value> {
        Ok(match mode {
            Rounding::Rn => self.b.ins().nearest(f),
            Rounding::Rz => self.b.ins().trunc(f),
            Rounding::Rm => self.b.ins().floor(f),
            Rounding::Rp => self.b.ins().ceil(f),
            Rounding::Rna => return Err(self.err(".rna is not defined for this conversion")),
        })
    }

    fn int_to_float(
        &mut self,
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
        x: Value,
    ) -> LResult<Value> {
        let mode = mods.rnd.unwrap_or(Rounding::Rn);
        let signed = src.is_signed();
        let wide = self.extend(x, types::I64, signed);
        if dst.is_half() {
            let f = self.int_to_f64_for_half(wide, signed);
            let f = if mods.sat {
                softfloat::saturate(self.b, f)
            } else {
                f
            };
            let (fmt, _) = format_of(dst);
            let h = softfloat::f64_to_half(self.b, fmt, f, mode);
            return Ok(self.half_result_mods(fmt, mods, h));
        }
        let ft = dst.ir_type();
        let f = if let Some(rnd) = self.direction(mode)? {
            let name = if dst == PtxType::F32 {
                "ptxjit_int_to_f32_directed"
            } else {
                "ptxjit_int_to_f64_directed"
            };
            let f = self.helper_ref(name);
            let signed = self.b.ins().iconst(types::I32, signed as i64);
            let call = self.b.ins().call(f, &[wide, signed, rnd]);
            self.b.inst_results(call)[0]
        } else if signed {
            self.b.ins().fcvt_from_sint(ft, wide)
        } else {
            self.b.ins().fcvt_from_uint(ft, wide)
        };
        Ok(if mods.sat {
            softfloat::saturate(self.b, f)
        } else {
            f
        })
    }

    /// An integer as an f64 that rounds to any half format exactly as the integer would:
    /// exact below 2^53; above, the bits below the f64 precision are kept as a sticky bit
    /// (round to odd), so the one rounding to the half format is still correct.
    fn int_to_f64_for_half(&mut self, wide: Value, signed: bool) -> Value {
        let negative = if signed {
            self.b.ins().icmp_imm_s(IntCC::SignedLessThan, wide, 0)
        } else {
            self.b.ins().iconst(types::I8, 0)
        };
        let neg = self.b.ins().ineg(wide);
        let mag = self.b.ins().select(negative, neg, wide);
        let exact = self.b.ins().fcvt_from_uint(types::F64, mag);
        let high = self.b.ins().ushr_imm_u(mag, 11);
        let low = self.b.ins().band_imm_u(mag, 0x7FF);
        let sticky = self.b.ins().icmp_imm_u(IntCC::NotEqual, low, 0);
        let sticky = self.b.ins().uextend(types::I64, sticky);
        let odd = self.b.ins().bor(high, sticky);
        let odd = self.b.ins().fcvt_from_uint(types::F64, odd);
        let scale = self.b.ins().f64const(2048.0);
        let odd = self.b.ins().fmul(odd, scale);
        let big = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, mag, 1i64 << 53);
        let f = self.b.ins().select(big, odd, exact);
        let minus = self.b.ins().fneg(f);
        self.b.ins().select(negative, minus, f)
    }

    fn float_to_float(
        &mut self,
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
        x: Value,
    ) -> LResult<Value> {
        if dst == src {
            // cvt.rni.f32.f32 and friends: round to an integral value in the same format.
            let mut v = if mods.ftz && !dst.is_half() {
                softfloat::flush_subnormal(self.b, x)
            } else {
                x
            };
            if dst.is_half() {
                // cvt.rni.f16.f16 and friends: an integral half value is exactly representable.
                if !mods.integral {
                    return Err(self.unsupported("half to itself needs .rni/.rzi/.rmi/.rpi"));
                }
                let (fmt, _) = format_of(dst);
                let x = if mods.ftz {
                    softfloat::half_flush(self.b, fmt, x)
                } else {
                    x
                };
                let f = softfloat::half_to_f64(self.b, fmt, x);
                let mut f = self.round_integral(mods.rnd.unwrap_or(Rounding::Rn), f)?;
                if mods.sat {
                    f = softfloat::saturate(self.b, f);
                }
                return Ok(softfloat::f64_to_half(self.b, fmt, f, Rounding::Rn));
            }
            if mods.integral {
                v = self.round_integral(mods.rnd.unwrap_or(Rounding::Rn), v)?;
            }
            if mods.sat {
                v = softfloat::saturate(self.b, v);
            }
            if dst == PtxType::F32 {
                v = softfloat::canonicalize_f32(self.b, v);
            }
            return Ok(v);
        }
        if mods.integral {
            return Err(self
                .err("integral rounding (.rni etc.) needs the same source and destination type"));
        }
        let mode = mods.rnd.unwrap_or(Rounding::Rn);
        // The common conversions take the short exact paths.
        if src == PtxType::F32 && dst.is_half() && mode == Rounding::Rn && !mods.sat {
            let (fmt, _) = format_of(dst);
            let x = if mods.ftz {
                softfloat::flush_subnormal(self.b, x)
            } else {
                x
            };
            let h = softfloat::f32_to_half_rne(self.b, fmt, x);
            return Ok(self.half_result_mods(fmt, mods, h));
        }
        if src.is_half() && dst == PtxType::F32 && !mods.sat {
            let (fmt, _) = format_of(src);
            let v = softfloat::half_to_f32_cvt(self.b, fmt, x);
            return Ok(if mods.ftz {
                softfloat::flush_subnormal(self.b, v)
            } else {
                v
            });
        }
        let mut f = self.exact_f64(src, mods.ftz, x);
        if mods.sat {
            f = softfloat::saturate(self.b, f);
        }
        Ok(match dst {
            PtxType::F64 => f,
            PtxType::F32 => {
                // Exact for every half value; f64 → f32 rounds to nearest even, or in a
                // direction in a helper.
                let direction = self.direction(mode)?;
                let v = match direction {
                    Some(rnd) if src == PtxType::F64 => {
                        let helper = self.helper_ref("ptxjit_f64_to_f32_directed");
                        let call = self.b.ins().call(helper, &[f, rnd]);
                        self.b.inst_results(call)[0]
                    }
                    _ => self.b.ins().fdemote(types::F32, f),
                };
                let v = match (mods.ftz, src) {
                    // `semantics::float::flush_narrowed_f32`.
                    (true, PtxType::F64) => self.flush_tiny_f32(v, |this| {
                        let helper = this.helper_ref("ptxjit_flush_narrowed_f32");
                        let rnd = direction.unwrap_or_else(|| this.b.ins().iconst(types::I32, 0));
                        let call = this.b.ins().call(helper, &[f, rnd, v]);
                        this.b.inst_results(call)[0]
                    }),
                    (true, _) => softfloat::flush_subnormal(self.b, v),
                    _ => v,
                };
                if src == PtxType::F64 {
                    softfloat::canonicalize_f32(self.b, v)
                } else {
                    v
                }
            }
            _ => {
                let (fmt, _) = format_of(dst);
                let h = softfloat::f64_to_half(self.b, fmt, f, mode);
                self.half_result_mods(fmt, mods, h)
            }
        })
    }

    /// `.satfinite` then `.relu` on a half result (as `semantics::half_ops::convert`).
    fn half_result_mods(&mut self, fmt: HalfFormat, mods: CvtMods, h: Value) -> Value {
        let h = if mods.satfinite {
            softfloat::half_satfinite(self.b, fmt, h)
        } else {
            h
        };
        if mods.relu {
            softfloat::half_relu(self.b, fmt, h)
        } else {
            h
        }
    }
}

/// The range of an integer type of at most 32 bits, as i64.
/// The range of an integer type (u64's upper bound as its bits: -1).
pub(super) fn int_range(ty: PtxType) -> (i64, i64) {
    let unused = 64 - ty.bits();
    if ty.is_signed() {
        (i64::MIN >> unused, i64::MAX >> unused)
    } else {
        (0, (u64::MAX >> unused) as i64)
    }
}
