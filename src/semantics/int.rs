//! The integer instructions whose meaning is more than one host operation, as the ISA's
//! semantics blocks write them: extended precision, 24-bit multiplies, `sad`, `bfind`, `bmsk`,
//! `dp4a`/`dp2a`, `prmt` modes, `lop3`, the `.u16x2`/`.s16x2` forms. Values are raw bits in u64 of the type's width. (The JIT's
//! twins are in `lower::carry` and `lower::bitwise`.)

use crate::frontend::checked::{HalvesOp, PrmtMode};

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    ((v << (64 - bits)) as i64) >> (64 - bits)
}

/// `add.cc`/`addc`: `a + b + carry_in` and the carry out of the type's width.
pub fn add_carry(bits: u32, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let sum = (a & mask(bits)) as u128 + (b & mask(bits)) as u128 + carry_in as u128;
    (sum as u64 & mask(bits), sum >> bits != 0)
}

/// `sub.cc`/`subc` as the GPU computes them: `a + !b + carry_in` and its carry out, with
/// `carry_in` 1 for `sub.cc` and CC.CF for `subc`. The ISA writes `a - (b + CC.CF)`, CF as a
/// borrow; the hardware's CF is the carry, the borrow's complement: after `sub.cc` of `a < b`
/// an `addc` adds 0 (NVIDIA GPUs, ZLUDA's GPU-validated `subc_cc_s32` test). A chain of
/// subtractions gives the same bits either way; mixing them with additions does not.
pub fn sub_carry(bits: u32, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    add_carry(bits, a, !b, carry_in)
}

/// The `.lo` or `.hi` half of the full product of `a` and `b` (signed or not): what
/// `mad{.lo,.hi}.cc` adds to `c`.
pub fn mul_half(bits: u32, signed: bool, hi: bool, a: u64, b: u64) -> u64 {
    let p = if signed {
        (sign_extend(a, bits) as i128 * sign_extend(b, bits) as i128) as u128
    } else {
        (a & mask(bits)) as u128 * (b & mask(bits)) as u128
    };
    (if hi { p >> bits } else { p }) as u64 & mask(bits)
}

/// `mul24.{lo,hi}`: the low 24 bits of each operand (sign-extended for `.s32`) multiply to
/// 48 bits; `.lo` is bits 0..32 of the product, `.hi` bits 16..48.
pub fn mul24(signed: bool, hi: bool, a: u32, b: u32) -> u32 {
    let operand = |x: u32| {
        if signed {
            sign_extend(x as u64 & 0xFF_FFFF, 24)
        } else {
            (x & 0xFF_FFFF) as i64
        }
    };
    let p = operand(a) * operand(b);
    (if hi { p >> 16 } else { p }) as u32
}

/// `sad`: `c + |a - b|` in the type's width.
pub fn sad(bits: u32, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let diff = if signed {
        (sign_extend(a, bits) as i128 - sign_extend(b, bits) as i128).unsigned_abs() as u64
    } else {
        (a & mask(bits)).abs_diff(b & mask(bits))
    };
    c.wrapping_add(diff) & mask(bits)
}

/// `bfind{.shiftamt}`: the position of the most significant bit that differs from the sign
/// (the most significant 1 for unsigned types), or 0xffffffff when there is none; `.shiftamt`
/// gives the left shift that moves it to the top instead.
pub fn bfind(bits: u32, signed: bool, shiftamt: bool, a: u64) -> u32 {
    let a = a & mask(bits);
    let a = if signed && a >> (bits - 1) & 1 == 1 {
        !a & mask(bits)
    } else {
        a
    };
    if a == 0 {
        return u32::MAX;
    }
    let pos = 63 - a.leading_zeros();
    if shiftamt { bits - 1 - pos } else { pos }
}

/// `bmsk.mode.b32 d, a, b` (the ISA's semantics block, step by step).
pub fn bmsk(clamp: bool, a: u32, b: u32) -> u32 {
    let a1 = a & 0x1F;
    let mut mask0 = u32::MAX << a1;
    let b1 = b & 0x1F;
    let sum = a1 + b1;
    let mut mask1 = if sum >= 32 { 0 } else { u32::MAX << sum };
    let mut overflow = sum >= 32;
    if clamp {
        if a >= 32 {
            overflow = true;
            mask0 = 0;
        }
        if b >= 32 {
            overflow = true;
        }
    }
    if overflow {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = u32::MAX;
    }
    mask0 & !mask1
}

fn part(x: u32, k: u32, width: u32, signed: bool) -> i64 {
    let v = (x >> (k * width)) as u64 & mask(width);
    if signed {
        sign_extend(v, width)
    } else {
        v as i64
    }
}

/// `dp4a`: `c` plus the four products of the bytes of `a` and `b`.
pub fn dp4a(a_signed: bool, b_signed: bool, a: u32, b: u32, c: u32) -> u32 {
    (0..4).fold(c, |acc, k| {
        let p = part(a, k, 8, a_signed) * part(b, k, 8, b_signed);
        acc.wrapping_add(p as u32)
    })
}

/// `dp2a.{lo,hi}`: `c` plus the products of the two halves of `a` with bytes 0 and 1 (`.lo`)
/// or 2 and 3 (`.hi`) of `b`.
pub fn dp2a(hi: bool, a_signed: bool, b_signed: bool, a: u32, b: u32, c: u32) -> u32 {
    let first = if hi { 2 } else { 0 };
    (0..2).fold(c, |acc, k| {
        let p = part(a, k, 16, a_signed) * part(b, first + k, 8, b_signed);
        acc.wrapping_add(p as u32)
    })
}

/// `fns.b32 d, mask, base, offset` (the ISA's semantics block; a `base` above 31, which the
/// ISA leaves undefined, finds nothing).
pub fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    let set = |pos: i64| (0..32).contains(&pos) && mask >> pos & 1 == 1;
    let base = base as i64;
    if offset == 0 {
        return if set(base) { base as u32 } else { u32::MAX };
    }
    let step = offset.signum() as i64;
    let mut count = offset.unsigned_abs() - 1;
    let mut pos = base;
    while (0..32).contains(&pos) {
        if set(pos) {
            if count == 0 {
                return pos as u32;
            }
            count -= 1;
        }
        pos += step;
    }
    u32::MAX
}

/// `lop3.b32 d, a, b, c, immLut`: bit `i` of `d` is bit `4a + 2b + c` of `immLut` (`a`, `b`,
/// `c` the bits `i` of the operands), which is what `F(0xF0, 0xCC, 0xAA) = immLut` says.
pub fn lop3(lut: u8, a: u32, b: u32, c: u32) -> u32 {
    (0..32).fold(0, |d, i| {
        let k = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1);
        d | ((lut as u32 >> k) & 1) << i
    })
}

/// `add sub min max` on `.u16x2`/`.s16x2`: each half on its own (sums wrap); `.relu` makes
/// a negative result 0.
pub fn halves(op: HalvesOp, signed: bool, relu: bool, a: u32, b: u32) -> u32 {
    (0..2).fold(0, |d, k| {
        let lane = |x: u32| {
            let h = (x >> (16 * k)) & 0xFFFF;
            if signed {
                h as u16 as i16 as i32
            } else {
                h as i32
            }
        };
        let (x, y) = (lane(a), lane(b));
        let mut r = match op {
            HalvesOp::Add => x + y,
            HalvesOp::Sub => x - y,
            HalvesOp::Min => x.min(y),
            HalvesOp::Max => x.max(y),
        };
        if relu {
            r = r.max(0);
        }
        d | (r as u32 & 0xFFFF) << (16 * k)
    })
}

/// `prmt.b32 d, a, b, c` (default mode): byte `i` of `d` is byte `c[4i+2..4i]` of `b:a`, or
/// that byte's sign replicated when `c[4i+3]` is set.
pub fn prmt(a: u32, b: u32, c: u32) -> u32 {
    let both = (b as u64) << 32 | a as u64;
    (0..4).fold(0, |d, i| {
        let sel = c >> (4 * i);
        let byte = (both >> (8 * (sel & 7))) as u8;
        let byte = if sel & 8 != 0 {
            ((byte as i8) >> 7) as u8
        } else {
            byte
        };
        d | (byte as u32) << (8 * i)
    })
}

/// The byte each mode picks for `d`'s bytes 0..3, by `c & 3` (the ISA's table, read as
/// selector nibbles of the default mode).
pub fn prmt_mode_selector(mode: PrmtMode, c: u32) -> u32 {
    let table: [u32; 4] = match mode {
        PrmtMode::F4e => [0x3210, 0x4321, 0x5432, 0x6543],
        PrmtMode::B4e => [0x5670, 0x6701, 0x7012, 0x0123],
        PrmtMode::Rc8 => [0x0000, 0x1111, 0x2222, 0x3333],
        PrmtMode::Ecl => [0x3210, 0x3211, 0x3222, 0x3333],
        PrmtMode::Ecr => [0x0000, 0x1110, 0x2210, 0x3210],
        PrmtMode::Rc16 => [0x1010, 0x3232, 0x1010, 0x3232],
    };
    table[(c & 3) as usize]
}

pub fn prmt_mode(mode: PrmtMode, a: u32, b: u32, c: u32) -> u32 {
    prmt(a, b, prmt_mode_selector(mode, c))
}

/// `cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}`: `a` and `b` saturated to `bits`-bit
/// integers, `a` above `b`, both above `c` shifted left by `2 * bits` (`bits` 16: `c` = 0).
pub fn pack_sat(bits: u32, signed: bool, a: i32, b: i32, c: u32) -> u32 {
    let (lo, hi) = if signed {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    let sat = |x: i32| (x as i64).clamp(lo, hi) as u64 & ((1 << bits) - 1);
    let packed = sat(a) << bits | sat(b);
    ((c as u64) << (2 * bits) | packed) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carry_chain_adds_128_bit_numbers() {
        let (x, y) = (u128::MAX - 5, 7u128);
        let mut carry = false;
        let mut sum = 0u128;
        for k in 0..4 {
            let (d, c) = add_carry(32, (x >> (32 * k)) as u64, (y >> (32 * k)) as u64, carry);
            sum |= (d as u128) << (32 * k);
            carry = c;
        }
        assert_eq!((sum, carry), (1, true));
    }

    #[test]
    fn a_subtraction_chain_subtracts_128_bit_numbers() {
        let (x, y) = (1u128 << 64, 1u128);
        let (lo, c) = sub_carry(64, x as u64, y as u64, true);
        let (hi, c2) = sub_carry(64, (x >> 64) as u64, (y >> 64) as u64, c);
        assert_eq!(
            ((hi as u128) << 64 | lo as u128, c2),
            (u64::MAX as u128, true)
        );
    }

    #[test]
    fn the_flag_after_a_subtraction_is_the_carry_not_the_borrow() {
        // 0 - 0 borrows nothing: carry 1; 0 - 1 borrows: carry 0; subc with CF 0 takes one more.
        assert_eq!(sub_carry(32, 0, 0, true), (0, true));
        assert_eq!(sub_carry(32, 0, 1, true), (0xFFFF_FFFF, false));
        assert_eq!(sub_carry(32, 5, 2, false), (2, true));
    }

    #[test]
    fn fns_examples_of_the_isa() {
        assert_eq!(fns(0xaaaa_aaaa, 3, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 3, -1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, -1), 1);
        assert_eq!(fns(0xaaaa_aaaa, 2, 0), u32::MAX);
        assert_eq!(fns(0xaaaa_aaaa, 0, 16), 31);
        assert_eq!(fns(0xaaaa_aaaa, 0, 17), u32::MAX);
        assert_eq!(fns(u32::MAX, 40, 1), u32::MAX);
        assert_eq!(fns(1, 31, i32::MIN), u32::MAX);
    }

    #[test]
    fn lop3_examples_of_the_isa() {
        let (a, b, c) = (0xF0, 0xCC, 0xAA);
        for lut in [0x80u8, 0xFE, 0x40, 0x1A, 0x00, 0xFF, 0x96] {
            assert_eq!(lop3(lut, a, b, c) & 0xFF, lut as u32);
        }
        assert_eq!(lop3(0x80, u32::MAX, 0xF0F0_F0F0, 0xFF00_FF00), 0xF000_F000);
        assert_eq!(lop3(0x96, 1 << 31, 1 << 31, 1 << 31), 1 << 31);
    }

    #[test]
    fn halves_are_computed_apart() {
        assert_eq!(
            halves(HalvesOp::Add, false, false, 0xFFFF_0001, 0x0001_FFFF),
            0
        );
        assert_eq!(
            halves(HalvesOp::Min, true, false, 0x8000_0001, 0x7FFF_FFFF),
            0x8000_FFFF
        );
        assert_eq!(
            halves(HalvesOp::Min, false, false, 0x8000_0001, 0x7FFF_FFFF),
            0x7FFF_0001
        );
        assert_eq!(
            halves(HalvesOp::Max, true, true, 0x8000_FFFE, 0x8001_FFFF),
            0
        );
        assert_eq!(
            halves(HalvesOp::Sub, true, false, 0x0000_0000, 0x0001_0001),
            0xFFFF_FFFF
        );
    }

    #[test]
    fn bmsk_examples_of_the_isa() {
        assert_eq!(bmsk(false, 1, 2), 0x6);
        assert_eq!(bmsk(true, 0, 32), u32::MAX);
        assert_eq!(bmsk(true, 32, 1), 0);
        assert_eq!(bmsk(false, 4, 0), 0);
    }

    #[test]
    fn bfind_finds_the_first_bit_that_differs_from_the_sign() {
        assert_eq!(bfind(32, false, false, 0x10), 4);
        assert_eq!(bfind(32, false, true, 0x10), 27);
        assert_eq!(bfind(32, true, false, 0xFFFF_FFF0), 3);
        assert_eq!(bfind(32, true, false, 0xFFFF_FFFF), u32::MAX);
        assert_eq!(bfind(64, false, false, 0), u32::MAX);
    }

    #[test]
    fn prmt_modes_read_as_their_tables() {
        let (a, b) = (0x3322_1100, 0x7766_5544);
        assert_eq!(prmt_mode(PrmtMode::F4e, a, b, 1), 0x4433_2211);
        assert_eq!(prmt_mode(PrmtMode::B4e, a, b, 0), 0x5566_7700);
        assert_eq!(prmt_mode(PrmtMode::Rc8, a, b, 2), 0x2222_2222);
        assert_eq!(prmt_mode(PrmtMode::Ecl, a, b, 1), 0x3322_1111);
        assert_eq!(prmt_mode(PrmtMode::Ecr, a, b, 2), 0x2222_1100);
        assert_eq!(prmt_mode(PrmtMode::Rc16, a, b, 1), 0x3322_3322);
    }

    #[test]
    fn dp4a_sums_signed_byte_products() {
        assert_eq!(
            dp4a(true, true, 0xFF02_0304, 0x0101_01FF, 10),
            10 - 1 + 3 + 2 - 4
        );
        assert_eq!(dp4a(false, false, 0xFF00_0000, 0xFF00_0000, 0), 255 * 255);
        assert_eq!(
            dp2a(true, true, false, 0xFFFF_0002, 0x0302_0000, 1),
            1 + 4 - 3
        );
    }

    #[test]
    fn mul24_keeps_48_bits() {
        assert_eq!(mul24(false, true, 0xFF_FFFF, 0xFF_FFFF), 0xFFFF_FE00);
        assert_eq!(mul24(true, false, 0xFF_FFFF, 2), 0xFFFF_FFFE);
    }
}
