//! f32 and f64 arithmetic rounded in a given direction (`.rn .rz .rm .rp` of `add sub mul fma
//! div rcp sqrt`, and of `cvt` from f64 or an integer): the exact result from integer
//! arithmetic on the significands, then one rounding (`round`). The JIT calls these for the directed modes (the host rounds only to
//! nearest); to nearest they equal the host's operations, which the tests check.
//!
//! Non-finite operands and invalid operations give the host's result (exact in every
//! direction), and so do zero operands, but for the sign of an exact zero sum: −0 toward −∞
//! unless both terms are +0 (IEEE 754 §6.3).

use crate::frontend::checked::{FloatOp, Rounding};

/// The operations with a rounding mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Fma,
    Div,
    Rcp,
    Sqrt,
}

/// The directions, by the index the JIT passes to its helpers.
pub const DIRECTIONS: [Rounding; 4] = [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp];

impl Arith {
    /// The operation of `op`, if it takes a rounding direction.
    pub fn of(op: FloatOp) -> Option<Arith> {
        Some(match op {
            FloatOp::Add => Arith::Add,
            FloatOp::Sub => Arith::Sub,
            FloatOp::Mul => Arith::Mul,
            FloatOp::Fma => Arith::Fma,
            FloatOp::Div => Arith::Div,
            FloatOp::Rcp => Arith::Rcp,
            FloatOp::Sqrt => Arith::Sqrt,
            _ => return None,
        })
    }

    /// Indexed by `Arith as u32`.
    pub const ALL: [Arith; 7] = [
        Arith::Add,
        Arith::Sub,
        Arith::Mul,
        Arith::Fma,
        Arith::Div,
        Arith::Rcp,
        Arith::Sqrt,
    ];
}

/// An IEEE binary format: significand bits after the point, exponent bias, total width.
#[derive(Clone, Copy)]
struct Format {
    mant: u32,
    bias: i32,
    bits: u32,
}

const F32: Format = Format {
    mant: 23,
    bias: 127,
    bits: 32,
};
const F64: Format = Format {
    mant: 52,
    bias: 1023,
    bits: 64,
};

/// A finite nonzero value `(-1)^neg · sig · 2^exp`, and whether nonzero bits below `sig`
/// were dropped (`sticky`: the value is a little more than that in magnitude).
#[derive(Clone, Copy, Debug)]
struct Exact {
    neg: bool,
    sig: u128,
    exp: i32,
    sticky: bool,
}

/// The finite value of `bits` in `f` as an exact significand and exponent (sig 0 for zeros).
fn unpack(f: Format, bits: u64) -> Exact {
    let field = ((bits >> f.mant) & ((1 << (f.bits - 1 - f.mant)) - 1)) as i32;
    let frac = bits & ((1 << f.mant) - 1);
    let (sig, exp) = match field {
        0 => (frac, 1 - f.bias - f.mant as i32),
        _ => (frac | 1 << f.mant, field - f.bias - f.mant as i32),
    };
    Exact {
        neg: bits >> (f.bits - 1) != 0,
        sig: sig as u128,
        exp,
        sticky: false,
    }
}

/// `x` with its top bit at bit 125 (room for a carry, none lost: every operand has at most
/// 106 significant bits).
fn top_at_125(x: Exact) -> Exact {
    let shift = x.sig.leading_zeros() as i32 - 2;
    Exact {
        sig: x.sig << shift,
        exp: x.exp - shift,
        ..x
    }
}

/// `x + y` of nonzero values. Aligned with their tops at bit 125, the smaller shifts right
/// and its dropped bits become the sticky bit; when it is subtracted, the result is one less
/// with the sticky bit set (`x - (y + ε) = (x - y - 1) + (1 - ε)`). Exponents within 1 shift
/// at most one bit out of at least 19 zero bits, so heavy cancellation stays exact.
fn sum(x: Exact, y: Exact) -> Exact {
    let (x, y) = (top_at_125(x), top_at_125(y));
    let (big, small) = if (x.exp, x.sig) >= (y.exp, y.sig) {
        (x, y)
    } else {
        (y, x)
    };
    let d = (big.exp - small.exp) as u32;
    let (small_sig, dropped) = if d >= 128 {
        (0, true)
    } else {
        (small.sig >> d, small.sig & ((1u128 << d) - 1) != 0)
    };
    let sig = if big.neg == small.neg {
        big.sig + small_sig
    } else {
        big.sig - small_sig - dropped as u128
    };
    Exact {
        neg: big.neg,
        sig,
        exp: big.exp,
        sticky: dropped,
    }
}

fn product(a: Exact, b: Exact) -> Exact {
    Exact {
        neg: a.neg != b.neg,
        sig: a.sig * b.sig,
        exp: a.exp + b.exp,
        sticky: false,
    }
}

/// `a / b`: a quotient of at least 74 bits and the remainder as the sticky bit.
fn quotient(a: Exact, b: Exact) -> Exact {
    let (n, d) = (a.sig << (126 - bit_length(a.sig)), b.sig);
    let shift = 126 - bit_length(a.sig) as i32;
    Exact {
        neg: a.neg != b.neg,
        sig: n / d,
        exp: a.exp - shift - b.exp,
        sticky: n % d != 0,
    }
}

/// `sqrt(a)` of a positive `a`: at least 62 bits and the remainder as the sticky bit.
fn square_root(a: Exact) -> Exact {
    // sig · 2^exp with an even exponent and sig of 125 or 126 bits.
    let mut shift = 126 - bit_length(a.sig) as i32;
    if (a.exp - shift) % 2 != 0 {
        shift -= 1;
    }
    let n = a.sig << shift;
    let mut r = (n as f64).sqrt() as u128;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    Exact {
        neg: false,
        sig: r,
        exp: (a.exp - shift) / 2,
        sticky: r * r != n,
    }
}

fn bit_length(x: u128) -> u32 {
    128 - x.leading_zeros()
}

/// Rounds a nonzero exact value to `f` in direction `rnd` (the one rounding routine of this
/// module): subnormal results keep the format's least exponent, overflow gives infinity or
/// the largest finite value as the direction says.
fn round(f: Format, x: Exact, rnd: Rounding) -> u64 {
    let emin = 1 - f.bias; // exponent of the least normal
    let top = x.exp + bit_length(x.sig) as i32 - 1;
    let lsb = top.max(emin) - f.mant as i32;
    let mut kept = rounded(x, lsb, rnd);
    let mut lsb = lsb;
    if kept >> (f.mant + 1) != 0 {
        kept >>= 1;
        lsb += 1;
    }
    let sign = (x.neg as u64) << (f.bits - 1);
    let max_field = (1u64 << (f.bits - 1 - f.mant)) - 1;
    if kept >> f.mant != 0 {
        let field = (lsb + f.mant as i32 + f.bias) as u64;
        if field >= max_field {
            let to_infinity = match rnd {
                Rounding::Rn | Rounding::Rna => true,
                Rounding::Rz => false,
                Rounding::Rp => !x.neg,
                Rounding::Rm => x.neg,
            };
            let magnitude = if to_infinity {
                max_field << f.mant
            } else {
                (max_field << f.mant) - 1
            };
            return sign | magnitude;
        }
        sign | field << f.mant | (kept as u64 & ((1 << f.mant) - 1))
    } else {
        sign | kept as u64
    }
}

/// Whether `x` is tiny after rounding (IEEE 754 §7.5): rounded in direction `rnd` to `f`'s
/// precision with the exponent unbounded, below `f`'s smallest normal. What `.ftz` flushes
/// on an H200 (measured for `mul`, `fma` and `cvt.f32.f64`): a result that rounds, in range,
/// up to the smallest normal from below it too.
fn tiny(f: Format, x: Exact, rnd: Rounding) -> bool {
    let emin = 1 - f.bias;
    let top = x.exp + bit_length(x.sig) as i32 - 1;
    // Only a value just below the smallest normal can round up to it.
    top < emin - 1 || top == emin - 1 && rounded(x, top - f.mant as i32, rnd) >> (f.mant + 1) == 0
}

/// `x`'s significand rounded in direction `rnd` to a multiple of 2^`lsb`, in units of it
/// (one bit longer where the rounding carries out).
fn rounded(x: Exact, lsb: i32, rnd: Rounding) -> u128 {
    let shift = lsb - x.exp;
    let (kept, rem, half) = if shift <= 0 {
        (x.sig << -shift, 0, 1)
    } else if shift >= 128 {
        (0, x.sig, 0)
    } else {
        let rem = x.sig & ((1u128 << shift) - 1);
        (x.sig >> shift, rem, 1u128 << (shift - 1))
    };
    let inexact = rem != 0 || x.sticky;
    let up = match rnd {
        Rounding::Rn => {
            // (shift >= 128: the value is below half the least subnormal.)
            half != 0 && (rem > half || rem == half && (x.sticky || kept & 1 == 1))
        }
        Rounding::Rna => half != 0 && rem >= half,
        Rounding::Rz => false,
        Rounding::Rp => inexact && !x.neg,
        Rounding::Rm => inexact && x.neg,
    };
    kept + up as u128
}

/// `op` on the operands' bits in format `f`, rounded in direction `rnd`; `host` is the
/// host's round-to-nearest operation for the exact cases.
fn arith(
    f: Format,
    op: Arith,
    rnd: Rounding,
    ops: [u64; 3],
    host: impl Fn([u64; 3]) -> u64,
) -> u64 {
    match exact(f, op, rnd, ops, host) {
        Ok(x) => round(f, x, rnd),
        Err(bits) => bits,
    }
}

/// The exact result of [`arith`], or its bits where they need no rounding (non-finite
/// operands, zeros).
fn exact(
    f: Format,
    op: Arith,
    rnd: Rounding,
    ops: [u64; 3],
    host: impl Fn([u64; 3]) -> u64,
) -> Result<Exact, u64> {
    let [a, b, c] = ops.map(|v| unpack(f, v));
    let exp_mask = ((1u64 << (f.bits - 1 - f.mant)) - 1) << f.mant;
    let used = match op {
        Arith::Rcp | Arith::Sqrt => 1,
        Arith::Fma => 3,
        _ => 2,
    };
    let non_finite = ops[..used].iter().any(|v| v & exp_mask == exp_mask);
    let zero = |x: &Exact| x.sig == 0;
    if non_finite {
        return Err(host(ops));
    }
    let negated = |x: Exact| Exact { neg: !x.neg, ..x };
    // The terms of a sum, when the operation is one.
    let terms = match op {
        Arith::Add => Some((a, b)),
        Arith::Sub => Some((a, negated(b))),
        Arith::Fma if !zero(&a) && !zero(&b) => Some((product(a, b), c)),
        Arith::Fma => Some((
            Exact {
                neg: a.neg != b.neg,
                sig: 0,
                ..a
            },
            c,
        )),
        _ => None,
    };
    let exact = match (op, terms) {
        (_, Some((x, y))) if zero(&x) && zero(&y) => {
            // An exact zero sum: +0 + +0 is +0 and -0 + -0 is -0 in every direction; mixed
            // signs give +0, or -0 toward -inf.
            let neg = if x.neg == y.neg {
                x.neg
            } else {
                rnd == Rounding::Rm
            };
            return Err((neg as u64) << (f.bits - 1));
        }
        (_, Some((x, y))) if zero(&y) => x,
        (_, Some((x, y))) if zero(&x) => y,
        (_, Some((x, y))) => sum(x, y),
        (Arith::Mul, _) if zero(&a) || zero(&b) => return Err(host(ops)),
        (Arith::Mul, _) => product(a, b),
        (Arith::Div, _) if zero(&a) || zero(&b) => return Err(host(ops)),
        (Arith::Div, _) => quotient(a, b),
        (Arith::Rcp, _) if zero(&a) => return Err(host(ops)),
        (Arith::Rcp, _) => quotient(unpack(f, one(f)), a),
        (Arith::Sqrt, _) if zero(&a) || a.neg => return Err(host(ops)),
        (Arith::Sqrt, _) => square_root(a),
        _ => unreachable!("every operation is a sum or handled"),
    };
    if exact.sig == 0 && !exact.sticky {
        // x + (-x): +0, or -0 toward -inf.
        return Err(((rnd == Rounding::Rm) as u64) << (f.bits - 1));
    }
    Ok(exact)
}

fn one(f: Format) -> u64 {
    (f.bias as u64) << f.mant
}

pub fn f32_op(op: Arith, rnd: Rounding, a: f32, b: f32, c: f32) -> f32 {
    let host = |[a, b, c]: [u64; 3]| {
        let [a, b, c] = [a, b, c].map(|v| f32::from_bits(v as u32));
        host_op(op, a, b, c, f32::mul_add, f32::sqrt, 1.0).to_bits() as u64
    };
    let ops = [a, b, c].map(|v| v.to_bits() as u64);
    f32::from_bits(arith(F32, op, rnd, ops, host) as u32)
}

pub fn f64_op(op: Arith, rnd: Rounding, a: f64, b: f64, c: f64) -> f64 {
    let host = |[a, b, c]: [u64; 3]| {
        let [a, b, c] = [a, b, c].map(f64::from_bits);
        host_op(op, a, b, c, f64::mul_add, f64::sqrt, 1.0).to_bits()
    };
    let ops = [a, b, c].map(f64::to_bits);
    f64::from_bits(arith(F64, op, rnd, ops, host))
}

/// Whether the exact f32 result of `op` on `a`, `b`, `c` is tiny after rounding `rnd`
/// ([`tiny`]; false for non-finite operands and exact zeros).
pub fn f32_tiny(op: Arith, rnd: Rounding, a: f32, b: f32, c: f32) -> bool {
    let ops = [a, b, c].map(|v| v.to_bits() as u64);
    matches!(exact(F32, op, rnd, ops, |_| 0), Ok(x) if tiny(F32, x, rnd))
}

/// Whether `x` rounded `rnd` to f32 is tiny after rounding ([`tiny`]).
pub fn f64_to_f32_tiny(x: f64, rnd: Rounding) -> bool {
    x.is_finite() && x != 0.0 && tiny(F32, unpack(F64, x.to_bits()), rnd)
}

/// `cvt.rnd.f32.f64` (NaNs, infinities and zeros as the host converts them).
pub fn f64_to_f32(x: f64, rnd: Rounding) -> f32 {
    if !x.is_finite() || x == 0.0 {
        return x as f32;
    }
    f32::from_bits(round(F32, unpack(F64, x.to_bits()), rnd) as u32)
}

/// `cvt.rnd.f32.{s,u}N`: the integer `v` (sign- or zero-extended to 64 bits).
pub fn int_to_f32(v: u64, signed: bool, rnd: Rounding) -> f32 {
    match integer(v, signed) {
        Some(x) => f32::from_bits(round(F32, x, rnd) as u32),
        None => 0.0,
    }
}

/// `cvt.rnd.f64.{s,u}N`.
pub fn int_to_f64(v: u64, signed: bool, rnd: Rounding) -> f64 {
    match integer(v, signed) {
        Some(x) => f64::from_bits(round(F64, x, rnd)),
        None => 0.0,
    }
}

fn integer(v: u64, signed: bool) -> Option<Exact> {
    let neg = signed && (v as i64) < 0;
    let magnitude = if neg { (v as i64).unsigned_abs() } else { v };
    (magnitude != 0).then_some(Exact {
        neg,
        sig: magnitude as u128,
        exp: 0,
        sticky: false,
    })
}

/// The host's round-to-nearest operation.
fn host_op<
    T: std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + Copy,
>(
    op: Arith,
    a: T,
    b: T,
    c: T,
    fma: fn(T, T, T) -> T,
    sqrt: fn(T) -> T,
    one: T,
) -> T {
    match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Fma => fma(a, b, c),
        Arith::Div => a / b,
        Arith::Rcp => one / a,
        Arith::Sqrt => sqrt(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_rounds_one_third_its_own_way() {
        let third = |rnd| f32_op(Arith::Div, rnd, 1.0, 3.0, 0.0);
        assert_eq!(third(Rounding::Rn).to_bits(), 0x3EAA_AAAB);
        assert_eq!(third(Rounding::Rz).to_bits(), 0x3EAA_AAAA);
        assert_eq!(third(Rounding::Rm).to_bits(), 0x3EAA_AAAA);
        assert_eq!(third(Rounding::Rp).to_bits(), 0x3EAA_AAAB);
        let minus = |rnd| f32_op(Arith::Div, rnd, -1.0, 3.0, 0.0).to_bits();
        assert_eq!(minus(Rounding::Rm), 0xBEAA_AAAB);
        assert_eq!(minus(Rounding::Rz), 0xBEAA_AAAA);
    }

    #[test]
    fn overflow_goes_to_infinity_or_the_largest_finite_value() {
        let big = f64::MAX;
        assert_eq!(f64_op(Arith::Add, Rounding::Rz, big, big, 0.0), f64::MAX);
        assert_eq!(
            f64_op(Arith::Add, Rounding::Rp, big, big, 0.0),
            f64::INFINITY
        );
        assert_eq!(f64_op(Arith::Add, Rounding::Rm, big, big, 0.0), f64::MAX);
        assert_eq!(
            f64_op(Arith::Mul, Rounding::Rm, -big, 2.0, 0.0),
            f64::NEG_INFINITY
        );
        assert_eq!(f64_op(Arith::Mul, Rounding::Rp, -big, 2.0, 0.0), -f64::MAX);
    }

    #[test]
    fn an_exact_zero_sum_is_negative_only_toward_minus_infinity() {
        for rnd in [Rounding::Rn, Rounding::Rz, Rounding::Rp] {
            assert!(f64_op(Arith::Sub, rnd, 1.5, 1.5, 0.0).is_sign_positive());
        }
        assert!(f64_op(Arith::Sub, Rounding::Rm, 1.5, 1.5, 0.0).is_sign_negative());
        assert!(f32_op(Arith::Add, Rounding::Rm, 0.0, -0.0, 0.0).is_sign_negative());
        assert!(f32_op(Arith::Add, Rounding::Rm, 0.0, 0.0, 0.0).is_sign_positive());
        assert!(f64_op(Arith::Fma, Rounding::Rm, 2.0, 3.0, -6.0).is_sign_negative());
    }

    #[test]
    fn conversions_round_in_their_direction() {
        let x = 1.0 + f64::EPSILON; // between two f32 values
        assert_eq!(f64_to_f32(x, Rounding::Rz), 1.0);
        assert_eq!(f64_to_f32(x, Rounding::Rp), 1.0 + f32::EPSILON);
        assert_eq!(f64_to_f32(-x, Rounding::Rm), -1.0 - f32::EPSILON);
        assert_eq!(f64_to_f32(1e300, Rounding::Rz), f32::MAX);
        let big = (1u64 << 24) + 1; // not an f32
        assert_eq!(int_to_f32(big, false, Rounding::Rp), 16_777_218.0);
        assert_eq!(int_to_f32(big, false, Rounding::Rm), 16_777_216.0);
        assert_eq!(
            int_to_f32(-(big as i64) as u64, true, Rounding::Rz),
            -16_777_216.0
        );
        assert_eq!(
            int_to_f64(u64::MAX, false, Rounding::Rz),
            18_446_744_073_709_549_568.0
        );
        assert_eq!(
            int_to_f64(u64::MAX, false, Rounding::Rn),
            18_446_744_073_709_551_616.0
        );
        for v in [0u64, 1, 12345, 1 << 60, u64::MAX, 0x8000_0000_0000_0001] {
            assert_eq!(int_to_f64(v, true, Rounding::Rn), v as i64 as f64, "{v:#x}");
            assert_eq!(int_to_f32(v, false, Rounding::Rn), v as f32, "{v:#x}");
        }
    }

    #[test]
    fn subnormal_results_round_at_the_least_exponent() {
        let tiny = f64::from_bits(1); // 2^-1074
        assert_eq!(f64_op(Arith::Mul, Rounding::Rp, tiny, 0.5, 0.0), tiny);
        assert_eq!(f64_op(Arith::Mul, Rounding::Rz, tiny, 0.75, 0.0), 0.0);
        assert_eq!(f64_op(Arith::Mul, Rounding::Rn, tiny, 0.75, 0.0), tiny);
        assert_eq!(f64_op(Arith::Mul, Rounding::Rn, tiny, 0.5, 0.0), 0.0);
    }
}
