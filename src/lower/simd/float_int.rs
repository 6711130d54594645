//! Vector forms of `cvt` between floats and integers, with the one-thread lowering's rules
//! (`convert::float_to_int`, `convert::int_to_float`): from f32 or a half (widened exactly)
//! to a 16- or 32-bit integer, the value rounded to an integral one in the direction asked
//! for (toward zero without one), NaN 0, a value past the type's range its nearest end; from
//! a 16- or 32-bit integer to f32, rounded to nearest even (`.sat` clamping the result).
use cranelift_codegen::ir::{InstBuilder, types};

use super::Wide;
use crate::frontend::checked::{Arg, CvtMods, Rounding};
use crate::lower::half::format_of;
use crate::lower::{LResult, Translator};
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// `cvt.irnd.dst.src` (or `.rnd`) from f32, f16 or bf16 to an integer of 16 or 32 bits
    /// for the whole group; `false` (nothing emitted) for other types and modifiers.
    pub(super) fn v_cvt_float_int(
        &mut self,
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
        a: &[Arg],
    ) -> LResult<bool> {
        let source_ok = matches!(src, PtxType::F32 | PtxType::F16 | PtxType::BF16);
        let dst_ok = dst.is_int() && matches!(dst.size(), 2 | 4);
        if !source_ok
            || !dst_ok
            || mods.relu
            || mods.satfinite
            || mods.rnd == Some(Rounding::Rna)
            || a.len() != 2
            || !self.v_dst_ok(&a[0], dst)
            || !self.v_src_ok(&a[1], src)
        {
            return Ok(false);
        }
        let x = self.v_read(&a[1], src)?;
        let floats: Wide = if src == PtxType::F32 {
            if mods.ftz { self.v_flush_f32(x) } else { x }
        } else {
            let (fmt, _) = format_of(src);
            self.v_widen_halves(fmt, false, x)
        };
        let signed = dst.is_signed();
        let ints: Wide = floats
            .into_iter()
            .map(|f| {
                let f = match mods.rnd.unwrap_or(Rounding::Rz) {
                    Rounding::Rn => self.b.ins().nearest(f),
                    Rounding::Rm => self.b.ins().floor(f),
                    Rounding::Rp => self.b.ins().ceil(f),
                    _ => self.b.ins().trunc(f),
                };
                if signed {
                    self.b.ins().fcvt_to_sint_sat(types::I32X4, f)
                } else {
                    self.b.ins().fcvt_to_uint_sat(types::I32X4, f)
                }
            })
            .collect();
        let v = if dst.size() == 4 {
            ints
        } else if signed {
            ints.chunks(2)
                .map(|w| self.b.ins().snarrow(w[0], w[1]))
                .collect()
        } else {
            // Clamped first: the narrowing reads its lanes as signed.
            let largest = self.v_splat(types::I32X4, 0xFFFF);
            let ints: Wide = ints
                .into_iter()
                .map(|i| self.b.ins().umin(i, largest))
                .collect();
            ints.chunks(2)
                .map(|w| self.b.ins().unarrow(w[0], w[1]))
                .collect()
        };
        self.v_write(&a[0], v);
        Ok(true)
    }

    /// `cvt.rn{.sat}.f32.src` from an integer of 16 or 32 bits for the whole group; `false`
    /// (nothing emitted) for other types, roundings and modifiers.
    pub(super) fn v_cvt_int_float(
        &mut self,
        dst: PtxType,
        src: PtxType,
        mods: CvtMods,
        a: &[Arg],
    ) -> LResult<bool> {
        let allowed = CvtMods {
            rnd: mods.rnd,
            sat: mods.sat,
            ..CvtMods::default()
        };
        if dst != PtxType::F32
            || !(src.is_int() && matches!(src.size(), 2 | 4))
            || mods != allowed
            || !matches!(mods.rnd, None | Some(Rounding::Rn))
            || a.len() != 2
            || !self.v_dst_ok(&a[0], dst)
            || !self.v_src_ok(&a[1], src)
        {
            return Ok(false);
        }
        let x = self.v_read(&a[1], src)?;
        let signed = src.is_signed();
        let x = self.v_resize(x, src.size(), 4, signed);
        let v = x
            .into_iter()
            .map(|i| {
                let f = if signed {
                    self.b.ins().fcvt_from_sint(types::F32X4, i)
                } else {
                    self.b.ins().fcvt_from_uint(types::F32X4, i)
                };
                if mods.sat {
                    crate::lower::softfloat::saturate(self.b, f)
                } else {
                    f
                }
            })
            .collect();
        self.v_write(&a[0], v);
        Ok(true)
    }
}
