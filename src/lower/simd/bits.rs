//! Vector forms that only move, cut, extend or choose bits: `mov` between register classes
//! (`mov.b32 %f1, %r1`) and of a register to or from its parts (nvcc's `mov.b32 {lo, hi},
//! %r` and `mov.b32 %r, {lo, hi}` around every half pair; the same for the 32-bit halves of
//! a 64-bit register), `cvt` between integer types without `.sat`, and `selp`. A register's
//! lanes lie in its vectors in order (lanes 0.. first), so the parts of 16 lanes are a byte
//! shuffle of their wholes' vectors, and the wholes one of their parts'.

use cranelift_codegen::ir::{
    ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value, types,
};

use super::Wide;
use crate::frontend::checked::Arg;
use crate::lower::convert::int_range;
use crate::lower::lanes::vector_of;
use crate::lower::{LResult, Translator, data::bits_type};
use crate::types::PtxType;

/// How a vector of one lane type is read as another: the lanes' bytes in memory order.
pub(super) fn lane_order() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

impl Translator<'_, '_> {
    /// A `mov` of bits for the whole group: between registers of one size and two classes
    /// (integer, float), or a `mov.b32`/`mov.b64` between a register and its two halves,
    /// `{lo, hi}` (`_` for a half not wanted).
    pub(super) fn v_mov_bits(&mut self, ty: PtxType, a: &[Arg]) -> LResult<bool> {
        if let (Arg::Reg(d), Arg::Reg(s)) = (&a[0], &a[1]) {
            let (dt, st) = (
                self.func.regs[*d as usize].ty,
                self.func.regs[*s as usize].ty,
            );
            if dt.size() != ty.size()
                || st.size() != ty.size()
                || !self.v_dst_ok(&a[0], dt)
                || !self.v_src_ok(&a[1], st)
            {
                return Ok(false);
            }
            let vt = self.v_type_of(&a[0], dt);
            let v = self
                .v_read(&a[1], st)?
                .into_iter()
                .map(|v| self.b.ins().bitcast(vt, lane_order(), v))
                .collect();
            self.v_write(&a[0], v);
            return Ok(true);
        }
        let whole_bytes = ty.size() as usize;
        if !matches!(whole_bytes, 4 | 8) || !(ty.is_int() || ty.is_half()) {
            return Ok(false);
        }
        let part = bits_type(ty.bits() / 2).expect("16 or 32 bits");
        match (&a[0], &a[1]) {
            (Arg::Vector(parts), whole) if parts.len() == 2 => {
                let ok = |t: &Self, p: &Arg| matches!(p, Arg::Sink) || t.v_dst_ok(p, part);
                if !self.v_src_ok(whole, ty) || !parts.iter().all(|p| ok(self, p)) {
                    return Ok(false);
                }
                let whole = self.v_read(whole, ty)?;
                let split = self.v_split(whole, whole_bytes as u32, 2);
                for (p, v) in parts.iter().zip(split) {
                    if matches!(p, Arg::Sink) {
                        continue;
                    }
                    let pt = self.v_type_of(p, part);
                    let v = self.v_as(v, pt);
                    self.v_write(p, v);
                }
                Ok(true)
            }
            (whole, Arg::Vector(parts)) if parts.len() == 2 => {
                if !self.v_dst_ok(whole, ty) || !parts.iter().all(|p| self.v_src_ok(p, part)) {
                    return Ok(false);
                }
                let lo = self.v_read(&parts[0], part)?;
                let hi = self.v_read(&parts[1], part)?;
                let wt = self.v_type_of(whole, ty);
                let v = self.v_join(vec![lo, hi], part.size());
                let v = self.v_as(v, wt);
                self.v_write(whole, v);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// `cvt{.sat}.dst.src d, x` between integer types for the whole group: the low bits of a
    /// wider source, or the source extended by its own signedness; with `.sat` (types of
    /// 16 and 32 bits), the source clamped to the destination's range first.
    pub(super) fn v_cvt_int(
        &mut self,
        dst: PtxType,
        src: PtxType,
        sat: bool,
        a: &[Arg],
    ) -> LResult<bool> {
        let ok = |t: PtxType| t.is_int() && matches!(t.size(), 2 | 4 | 8) && !(sat && t.size() > 4);
        if !ok(dst)
            || !ok(src)
            || a.len() != 2
            || !self.v_dst_ok(&a[0], dst)
            || !self.v_src_ok(&a[1], src)
        {
            return Ok(false);
        }
        let mut v = self.v_read(&a[1], src)?;
        if sat {
            v = self.v_clamp_to_range(v, src, dst);
        }
        let v = self.v_resize(v, src.size(), dst.size(), src.is_signed());
        self.v_write(&a[0], v);
        Ok(true)
    }

    /// Lanes of integer type `src` clamped to the range of `dst` (of at most 32 bits), as
    /// `convert::int_to_int`'s `.sat`: to the part of it that `src` reaches.
    fn v_clamp_to_range(&mut self, v: Wide, src: PtxType, dst: PtxType) -> Wide {
        let (src_lo, src_hi) = int_range(src);
        let (dst_lo, dst_hi) = int_range(dst);
        let (lo, hi) = (src_lo.max(dst_lo), src_hi.min(dst_hi));
        let bits = src.bits();
        // A bound as the source lanes' bits.
        let lane_bits = |x: i64| (x as u64 & (u64::MAX >> (64 - bits))) as i64;
        v.into_iter()
            .map(|mut x| {
                let vt = self.b.func.dfg.value_type(x);
                if lo > src_lo {
                    let lo = self.v_splat(vt, lane_bits(lo));
                    x = self.b.ins().smax(x, lo);
                }
                if hi < src_hi {
                    let hi = self.v_splat(vt, lane_bits(hi));
                    x = if src.is_signed() {
                        self.b.ins().smin(x, hi)
                    } else {
                        self.b.ins().umin(x, hi)
                    };
                }
                x
            })
            .collect()
    }

    /// Integer lanes of `from` bytes (1, 2, 4 or 8) as lanes of `to` bytes: their low bytes,
    /// or extended by `signed`.
    pub(super) fn v_resize(&mut self, mut v: Wide, from: u32, to: u32, signed: bool) -> Wide {
        let mut bytes = from as usize;
        while bytes > to as usize {
            let low = bits_type(bytes as u32 * 4).expect("8, 16 or 32 bits");
            let vt = vector_of(low.ir_type()).expect("integer");
            v = v
                .chunks(2)
                .map(|w| self.shuffle_bytes(w[0], w[1], &unpack_mask(bytes, 0), vt))
                .collect();
            bytes /= 2;
        }
        while bytes < to as usize {
            v = v
                .into_iter()
                .flat_map(|x| {
                    if signed {
                        [self.b.ins().swiden_low(x), self.b.ins().swiden_high(x)]
                    } else {
                        [self.b.ins().uwiden_low(x), self.b.ins().uwiden_high(x)]
                    }
                })
                .collect();
            bytes *= 2;
        }
        v
    }

    /// `selp.T d, x, y, p` for the whole group: each lane's `x` where its `p`, else `y`.
    pub(super) fn v_selp(&mut self, ty: PtxType, a: &[Arg]) -> LResult<bool> {
        if ty == PtxType::Pred
            || !self.v_dst_ok(&a[0], ty)
            || !self.v_src_ok(&a[1], ty)
            || !self.v_src_ok(&a[2], ty)
            || !matches!(a[3], Arg::Reg(_))
            || !self.v_src_ok(&a[3], PtxType::Pred)
        {
            return Ok(false);
        }
        let x = self.v_read(&a[1], ty)?;
        let y = self.v_read(&a[2], ty)?;
        let v: Wide = match self.v_read_uniform(&a[3], PtxType::Pred) {
            Some(p) => {
                let p = p?;
                x.into_iter()
                    .zip(y)
                    .map(|(x, y)| self.b.ins().select(p, x, y))
                    .collect()
            }
            None => {
                let vt = self.b.func.dfg.value_type(x[0]);
                let masks = self.v_lane_masks(&a[3], vt)?;
                x.into_iter()
                    .zip(y)
                    .zip(masks)
                    .map(|((x, y), m)| self.b.ins().bitselect(m, x, y))
                    .collect()
            }
        };
        self.v_write(&a[0], v);
        Ok(true)
    }

    /// The lanes of predicate `p` (varying) as masks of vector type `vt`: each lane all
    /// ones where `p` holds, else zero.
    pub(super) fn v_lane_masks(&mut self, p: &Arg, vt: Type) -> LResult<Wide> {
        // One i8x16 per 16 lanes, 0 or 1: made 0 or -1, then sign-extended to the lanes'
        // width, each step splitting a vector's lanes into its low and high halves.
        let mut masks: Wide = self
            .v_read(p, PtxType::Pred)?
            .into_iter()
            .map(|p| self.b.ins().ineg(p))
            .collect();
        while self.b.func.dfg.value_type(masks[0]).lane_bits() < vt.lane_bits() {
            masks = masks
                .into_iter()
                .flat_map(|m| [self.b.ins().swiden_low(m), self.b.ins().swiden_high(m)])
                .collect();
        }
        Ok(masks
            .into_iter()
            .map(|m| self.b.ins().bitcast(vt, lane_order(), m))
            .collect())
    }

    /// The vector type of register operand `arg` (or of a `ty` value, for another operand).
    fn v_type_of(&self, arg: &Arg, ty: PtxType) -> Type {
        let ir = match arg {
            Arg::Reg(r) => self.func.regs[*r as usize].ty.ir_type(),
            _ => ty.ir_type(),
        };
        vector_of(ir).expect("checked by v_dst_ok")
    }

    /// Vectors of wholes of `whole` bytes (the lanes' in order) as the vectors of each of
    /// their `parts` equal parts (a power of two), the lowest-addressed part first.
    pub(super) fn v_split(&mut self, wholes: Wide, whole: u32, parts: usize) -> Vec<Wide> {
        if parts == 1 {
            return vec![wholes];
        }
        let mut split = Vec::new();
        for j in 0..2 {
            let half: Wide = wholes
                .chunks(2)
                .map(|w| {
                    let mask = unpack_mask(whole as usize, j);
                    self.shuffle_bytes(w[0], w[1], &mask, types::I8X16)
                })
                .collect();
            split.extend(self.v_split(half, whole / 2, parts / 2));
        }
        split
    }

    /// The first `part` bytes of each whole of `whole` bytes in `wholes`: [`v_split`]'s
    /// first part, without the others.
    ///
    /// [`v_split`]: Self::v_split
    pub(super) fn v_first_part(&mut self, wholes: Wide, whole: u32, part: u32) -> Wide {
        if whole == part {
            return wholes;
        }
        let low: Wide = wholes
            .chunks(2)
            .map(|w| self.shuffle_bytes(w[0], w[1], &unpack_mask(whole as usize, 0), types::I8X16))
            .collect();
        self.v_first_part(low, whole / 2, part)
    }

    /// The inverse of [`v_split`](Self::v_split): the vectors of each part, of `part` bytes
    /// (the lowest-addressed part first), as vectors of their wholes.
    pub(super) fn v_join(&mut self, parts: Vec<Wide>, part: u32) -> Wide {
        if parts.len() == 1 {
            return parts.into_iter().next().expect("one");
        }
        let mut pairs = Vec::new();
        for pair in parts.chunks(2) {
            let mut v = Wide::new();
            for (&l, &h) in pair[0].iter().zip(&pair[1]) {
                for t in 0..2 {
                    let mask = pack_mask(2 * part as usize, t);
                    v.push(self.shuffle_bytes(l, h, &mask, types::I8X16));
                }
            }
            pairs.push(v);
        }
        self.v_join(pairs, 2 * part)
    }

    /// Vectors `v` read as vectors of type `vt`.
    pub(super) fn v_as(&mut self, v: Wide, vt: Type) -> Wide {
        v.into_iter()
            .map(|x| {
                if self.b.func.dfg.value_type(x) == vt {
                    x
                } else {
                    self.b.ins().bitcast(vt, lane_order(), x)
                }
            })
            .collect()
    }

    /// The bytes `mask` picks from `x` then `y` (0–15 from `x`, 16–31 from `y`), as `vt`.
    pub(super) fn shuffle_bytes(&mut self, x: Value, y: Value, mask: &[u8; 16], vt: Type) -> Value {
        let bytes = |t: &mut Self, v: Value| {
            if t.b.func.dfg.value_type(v) == types::I8X16 {
                v
            } else {
                t.b.ins().bitcast(types::I8X16, lane_order(), v)
            }
        };
        let (x, y) = (bytes(self, x), bytes(self, y));
        let mask = self
            .b
            .func
            .dfg
            .immediates
            .push(ConstantData::from(mask.to_vec()));
        let v = self.b.ins().shuffle(x, y, mask);
        self.b.ins().bitcast(vt, lane_order(), v)
    }
}

/// The bytes of part `j` (0 low, 1 high) of the wholes of `whole` bytes in two vectors: for
/// each whole in order, its part's bytes.
pub(super) fn unpack_mask(whole: usize, j: usize) -> [u8; 16] {
    let part = whole / 2;
    std::array::from_fn(|i| ((i / part) * whole + j * part + i % part) as u8)
}

/// The bytes of wholes of `whole` bytes made from a low-parts vector (bytes 0–15) and a
/// high-parts one (16–31), the wholes of parts `t × 16 / whole ..`: each whole its low part's
/// bytes, then its high part's.
fn pack_mask(whole: usize, t: usize) -> [u8; 16] {
    let part = whole / 2;
    std::array::from_fn(|i| {
        let element = t * 16 / whole + i / whole;
        let from_high = (i % whole) / part;
        (from_high * 16 + element * part + i % part) as u8
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_32_bit_registers_halves_are_its_even_and_odd_16_bit_lanes() {
        assert_eq!(
            unpack_mask(4, 0),
            [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29]
        );
        assert_eq!(
            unpack_mask(4, 1),
            [2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31]
        );
        assert_eq!(
            unpack_mask(8, 1),
            [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]
        );
    }

    #[test]
    fn packing_interleaves_the_low_and_high_parts() {
        assert_eq!(
            pack_mask(4, 0),
            [0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23]
        );
        assert_eq!(
            pack_mask(4, 1),
            [8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31]
        );
        assert_eq!(
            pack_mask(8, 1),
            [8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31]
        );
    }
}
