//! The tensor cores' floating-point sum: how an NVIDIA H200 (sm_90, driver 580, CUDA 13)
//! adds the products of `mma.sync` and C. Fitted to recordings of every float form on that
//! GPU (random operands over wide exponent ranges, and operands mixed with zeros,
//! subnormals, the largest and smallest normals, infinities and NaNs: `tests/hardware.rs`),
//! which this rule gives bit for bit:
//!
//! - every product a·b is exact; its *alignment exponent* is the sum of a's and b's exponents
//!   as encoded (a subnormal's is its format's least normal exponent), not the exponent of
//!   the product itself (a product of significands in [1, 4) may exceed 2);
//! - C's alignment exponent is its own exponent as encoded;
//! - E is the largest alignment exponent of the block's terms (its products and C), zeros
//!   left out; each term is truncated toward zero to a multiple of 2^(E − 25) ([`WIDTH`]);
//! - the truncated terms are summed exactly, and the sum rounded to D's type ([`to_d`]): to
//!   f32 toward zero (a sum of 2^128 or more is infinity), to f16 to nearest even;
//! - a NaN term, an infinity times zero or infinities of both signs give the canonical NaN,
//!   other infinities themselves; an exactly zero sum is −0 only where every term is (IEEE
//!   754's sum of zeros: no recording holds a zero sum, nor a subnormal D, so that part and
//!   the gradual underflow of a tiny D are IEEE 754's rule, not measured);
//! - a block is the instruction's K products (16, 8 or 4) and C, except fp8's: ptxas runs
//!   `mma.sync` on fp8 as f16 products in blocks of 16 ([`Blocks::Fp8Pairs`]).
//!
//! `wgmma` takes the same rule for its K per instruction (16 for f16 and bf16, 8 for tf32,
//! 32 for fp8, one block each): inferred from these `mma.sync` recordings, not measured.
//!
//! The sum is computed in f64: every product is exact there, scaling a term by 2^(25 − E)
//! is exact, and so is the sum of the truncated terms (integers below 2^32); infinities and
//! NaNs propagate as IEEE 754 says, which is the rule above for them. Alignment exponents
//! are kept as the powers 2^e ([`alignment`]): a product's is the product of its operands',
//! and the code that finds E is then the same vector code as the code that sums.

use crate::frontend::checked::{MmaForm, MmaType, WgmmaForm};
use crate::lower::softfloat::CANONICAL_NAN_F32;
use crate::semantics::half::CANONICAL_NAN as CANONICAL_NAN_F16;

/// The bits below E a term keeps: terms are truncated to multiples of 2^(E − WIDTH).
const WIDTH: i32 = 25;

/// The alignment of an infinity or NaN: larger than any number's (2^127), yet a product of
/// two stays finite. (Where one is a term the sum is no number, whatever E is.)
const NO_NUMBER: i32 = 200;

/// Most products to an element that [`Arith::matrix`] takes (fp8's).
const MOST_K: usize = 32;

/// The least 2^E: a block of zeros (E is −∞) still scales within f64's exponents; every
/// block with a number keeps its own (bf16's subnormal products' is 2^−266).
const LEAST_E: i32 = -400;

/// How a form's products fall into blocks, each summed by the rule above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocks {
    /// One block: all K products and C.
    Whole,
    /// `mma.sync` on fp8 (e4m3, e5m2), as ptxas runs it on sm_90: each operand converted to
    /// f16 (exactly: an e4m3 subnormal becomes a normal f16) and multiplied by `m16n8k16` f16
    /// products chained from +0, a block of 16 each (for K 32 first the k with k mod 4 < 2,
    /// the low two bytes of each of a lane's registers, then the others with the first's D);
    /// then C is added to the last D by an f32 (or f16) add rounded to nearest even. The
    /// recordings of both fp8 types at K 32 fit this in every element, and no single block
    /// does; K 16 (one f16 block, then C) is inferred, no recording has it.
    Fp8Pairs,
}

/// A float form's arithmetic: its operands' types and its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arith {
    pub a: MmaType,
    pub b: MmaType,
    pub c: MmaType,
    pub d: MmaType,
    pub blocks: Blocks,
}

impl Arith {
    /// `mma.sync`'s arithmetic for `form`.
    pub(crate) fn of_mma(form: MmaForm) -> Arith {
        let blocks = match form.a {
            MmaType::E4m3 | MmaType::E5m2 => Blocks::Fp8Pairs,
            _ => Blocks::Whole,
        };
        let (a, b, c, d) = (form.a, form.b, form.c, form.d);
        Arith { a, b, c, d, blocks }
    }

    /// `wgmma`'s arithmetic for `form`: one block per instruction, D as C.
    pub(crate) fn of_wgmma(form: WgmmaForm) -> Arith {
        let (a, b, d) = (form.a, form.b, form.d);
        Arith {
            a,
            b,
            c: d,
            d,
            blocks: Blocks::Whole,
        }
    }

    /// Where product `k` of `k_all` goes in the order [`Arith::matrix`] takes A's columns
    /// and B's rows in: each block's products together, the blocks in turn.
    pub(crate) fn k_position(self, k: usize, k_all: usize) -> usize {
        match (self.blocks, k_all) {
            (Blocks::Fp8Pairs, 32) => match first_of_pair(k) {
                true => k / 4 * 2 + k % 4,
                false => 16 + k / 4 * 2 + k % 4 - 2,
            },
            _ => k,
        }
    }

    /// D's bits of one element: the `products` (a, b) in k order, and `c`. The rule's
    /// reference form, an element at a time; [`Arith::matrix`] is the same on matrices.
    pub(crate) fn element(self, products: &[(f64, f64)], c: f64) -> u64 {
        let term = |&(x, y): &(f64, f64)| (x * y, alignment(self.a, x) * alignment(self.b, y));
        let c_term = (c, alignment(self.c, c));
        match self.blocks {
            Blocks::Whole => to_d(self.d, block_sum(products.iter().map(term).chain([c_term]))),
            Blocks::Fp8Pairs => {
                let step = |k_first: bool, from: u64| {
                    let from = crate::mma::float_element(self.d, from, 0);
                    let terms = products
                        .iter()
                        .enumerate()
                        .filter(move |&(k, _)| products.len() <= 16 || first_of_pair(k) == k_first);
                    let terms = terms.map(move |(_, p)| term(p));
                    to_d(
                        self.d,
                        block_sum(terms.chain([(from, alignment(self.d, from))])),
                    )
                };
                let mut sum = step(true, 0);
                if products.len() > 16 {
                    sum = step(false, sum);
                }
                add_c(self.d, sum, c)
            }
        }
    }

    /// D's bits (`d`, m × n, row after row) of A (m × k, row after row; k at most 32)
    /// times B plus C (m × n): [`Arith::element`]'s bits, eight columns at a time. B comes as
    /// N/8 panels of eight columns, each K rows of eight (a row-major K × 8 B is one); A's
    /// columns and B's rows in [`Arith::k_position`]'s order of k.
    pub(crate) fn matrix(
        self,
        (a, b, c): (&[f64], &[[f64; 8]], &[f64]),
        (m, n, k): (usize, usize, usize),
        d: &mut [u64],
    ) {
        assert!(k <= MOST_K && n.is_multiple_of(8), "an mma or wgmma shape");
        // (AVX-512 where a row has several panels, `wgmma`'s: Triton's sm_90 matmul 42.8–43.2
        // → 40.9–41.9 ms on Zen 4; `mma`'s one panel measured 2% slower with it than with
        // AVX2, nvcc's gemm 67.2–67.7 → 68.4–69.5 ms.)
        #[cfg(target_arch = "x86_64")]
        if n > 8 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512 F.
            return unsafe { self.matrix_avx512((a, b, c), (m, n, k), d) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.matrix_avx2((a, b, c), (m, n, k), d) };
        }
        self.matrix_with((a, b, c), (m, n, k), d)
    }

    /// [`Arith::matrix`] compiled for AVX-512: a row's eight columns are one register.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn matrix_avx512(
        self,
        abc: (&[f64], &[[f64; 8]], &[f64]),
        shape: (usize, usize, usize),
        d: &mut [u64],
    ) {
        self.matrix_with(abc, shape, d)
    }

    /// [`Arith::matrix`] compiled for AVX2, whose `vroundpd` truncates four terms at a time
    /// (x86-64's baseline has no vector truncation: each term would call libm's `trunc`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn matrix_avx2(
        self,
        abc: (&[f64], &[[f64; 8]], &[f64]),
        shape: (usize, usize, usize),
        d: &mut [u64],
    ) {
        self.matrix_with(abc, shape, d)
    }

    #[inline(always)]
    fn matrix_with(
        self,
        (a, b, c): (&[f64], &[[f64; 8]], &[f64]),
        (m, n, k): (usize, usize, usize),
        d: &mut [u64],
    ) {
        // (Each type's least normal number found once: in the loops the compiler would look
        // it up for each element.)
        let least = [self.a, self.b, self.c, self.d].map(least_normal);
        // B's alignments, each once: on the stack for `mma`'s one panel, else (`wgmma`'s up
        // to 32) in a vector.
        let (mut one_panel, mut panels) = ([[0.0; 8]; MOST_K], Vec::new());
        let align_b = if n == 8 {
            &mut one_panel[..k]
        } else {
            panels.resize(b.len(), [0.0; 8]);
            &mut panels[..]
        };
        for (e, &x) in align_b.iter_mut().zip(b) {
            *e = aligned8(least[1], x);
        }
        for (row, a) in a.chunks_exact(k).take(m).enumerate() {
            let mut align_a = [0.0; MOST_K];
            for (e, &x) in align_a.iter_mut().zip(a) {
                *e = aligned(least[0], x);
            }
            let panels = b.chunks_exact(k).zip(align_b.chunks_exact(k)).take(n / 8);
            for (panel, b) in panels.enumerate() {
                let at = row * n + 8 * panel;
                let c: [f64; 8] = c[at..][..8].try_into().expect("eight");
                let bits = self.columns((a, &align_a[..k]), b, c, least);
                d[at..][..8].copy_from_slice(&bits);
            }
        }
    }

    /// D's bits of eight elements of a row: `a`'s row times a panel `b` of B, plus `c`, each
    /// with its alignments; `least`, the least normal numbers of A's to D's types.
    #[inline(always)]
    fn columns(self, a: (&[f64], &[f64]), b: Panel, c: [f64; 8], least: [f64; 4]) -> [u64; 8] {
        match self.blocks {
            Blocks::Whole => to_d8(self.d, block_columns(a, b, (c, aligned8(least[2], c)))),
            Blocks::Fp8Pairs => {
                // (Each block of 16 from the last one's D, the first from +0.)
                let mut sum = [0; 8];
                let blocks = a.0.chunks(16).zip(a.1.chunks(16));
                for (a, b) in blocks.zip(b.0.chunks(16).zip(b.1.chunks(16))) {
                    let from = d_values(self.d, sum);
                    sum = to_d8(
                        self.d,
                        block_columns(a, b, (from, aligned8(least[3], from))),
                    );
                }
                add_c8(self.d, sum, c)
            }
        }
    }
}

/// A panel of B: K rows of eight columns, and their alignments.
type Panel<'a> = (&'a [[f64; 8]], &'a [[f64; 8]]);

/// Whether [`Blocks::Fp8Pairs`] with K 32 puts product `k` in its first block.
fn first_of_pair(k: usize) -> bool {
    k % 4 < 2
}

/// 2^e for the alignment exponent e of an element of type `ty` whose value is `x`: its
/// exponent as encoded (fp8 elements take f16's: [`Blocks::Fp8Pairs`]); 0 for a zero.
fn alignment(ty: MmaType, x: f64) -> f64 {
    aligned(least_normal(ty), x)
}

/// [`alignment`] of `x` in a type whose least normal number is `least`.
#[inline(always)]
fn aligned(least: f64, x: f64) -> f64 {
    // (Every element is a normal f64: without its significand and sign it is 2^e, or
    // infinity for an infinity or NaN. Below the format's least normal number it is a
    // subnormal.)
    let power = f64::from_bits(x.to_bits() & 0x7FF0_0000_0000_0000);
    let power = if power < least { least } else { power };
    let power = if power > pow2(NO_NUMBER) {
        pow2(NO_NUMBER)
    } else {
        power
    };
    if x == 0.0 { 0.0 } else { power }
}

/// [`aligned`] of each of eight elements.
#[inline(always)]
fn aligned8(least: f64, x: [f64; 8]) -> [f64; 8] {
    // (A loop, not `map`, which the compiler leaves a call to and does not vectorize.)
    let mut e = [0.0; 8];
    for (e, x) in e.iter_mut().zip(x) {
        *e = aligned(least, x);
    }
    e
}

/// The least normal number of a float operand type (of f16 for fp8: [`Blocks::Fp8Pairs`]).
fn least_normal(ty: MmaType) -> f64 {
    pow2(match ty {
        MmaType::F16 | MmaType::E4m3 | MmaType::E5m2 => -14,
        _ => -126,
    })
}

/// 2^n, for n within f64's normal exponents.
#[inline(always)]
fn pow2(n: i32) -> f64 {
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// For a block whose largest alignment is `top` (2^E), the unit its terms are truncated to,
/// 2^(E − WIDTH), and its inverse, the scale that makes them integers.
#[inline(always)]
fn unit(top: f64) -> (f64, f64) {
    let top = if top < pow2(LEAST_E) {
        pow2(LEAST_E)
    } else {
        top
    };
    // (2^(WIDTH − E) from 2^E's bits, E + 1023 times 2^52: a subtraction, not a division.)
    let scale = ((2 * 1023 + WIDTH as u64) << 52) - top.to_bits();
    (top * pow2(-WIDTH), f64::from_bits(scale))
}

/// One block's sum by the rule (D's value before [`to_d`]'s rounding): `terms` are (value,
/// alignment) pairs, products as (a·b, 2^ea · 2^eb) and C as (c, 2^ec). The reference form
/// of the rule; [`block_columns`] computes the same eight D elements at a time.
fn block_sum(terms: impl Iterator<Item = (f64, f64)> + Clone) -> f64 {
    let top = terms
        .clone()
        .fold(0.0, |top, (_, e)| if e > top { e } else { top });
    let (unit, scale) = unit(top);
    // (From −0: a sum of zeros is −0 only if all of them are, as IEEE 754 adds.)
    let units = terms.fold(-0.0, |sum, (x, _)| sum + (x * scale).trunc());
    units * unit
}

/// [`block_sum`] of eight D elements of a row: A's row (`a` and its alignments `ea`, K of
/// them) times a panel of B (K rows of eight), plus C's eight (`c` and `ec`). Column by
/// column in vector registers, the same code for E as for the sum.
#[inline(always)]
fn block_columns(
    (a, ea): (&[f64], &[f64]),
    (b, eb): Panel,
    (c, ec): ([f64; 8], [f64; 8]),
) -> [f64; 8] {
    let mut top = ec;
    for (&x, y) in ea.iter().zip(eb) {
        for (top, &y) in top.iter_mut().zip(y) {
            let e = x * y;
            *top = if e > *top { e } else { *top };
        }
    }
    let (mut unit, mut scale) = ([0.0; 8], [0.0; 8]);
    for j in 0..8 {
        (unit[j], scale[j]) = self::unit(top[j]);
    }
    let mut units = [0.0; 8];
    for j in 0..8 {
        units[j] = (c[j] * scale[j]).trunc();
    }
    for (&x, y) in a.iter().zip(b) {
        for ((u, &y), &s) in units.iter_mut().zip(y).zip(&scale) {
            *u += (x * y * s).trunc();
        }
    }
    for (u, unit) in units.iter_mut().zip(unit) {
        *u *= unit;
    }
    units
}

/// D's bits for a block's `sum` ([`block_sum`]): f32 toward zero (infinity from 2^128 on),
/// f16 to nearest even; a NaN canonical.
fn to_d(d: MmaType, sum: f64) -> u64 {
    to_d8(d, [sum; 8])[0]
}

/// [`to_d`] of eight sums, in vector registers.
#[inline(always)]
fn to_d8(d: MmaType, sums: [f64; 8]) -> [u64; 8] {
    let mut toward_zero = [0; 8];
    for (r, &x) in toward_zero.iter_mut().zip(&sums) {
        *r = f32_toward_zero(x);
    }
    let mut bits = [0; 8];
    if d == MmaType::F16 {
        // Rounded to odd in f32 (toward zero, the last bit set if that was inexact), an f32
        // rounds to nearest f16 as the sum itself would: f32 keeps 13 more bits.
        let mut odd = [0.0; 8];
        for ((odd, &r), &x) in odd.iter_mut().zip(&toward_zero).zip(&sums) {
            *odd = f32::from_bits(r | (f32::from_bits(r) as f64 != x) as u32);
        }
        let mut halves = [half::f16::ZERO; 8];
        half::slice::HalfFloatSliceExt::convert_from_f32_slice(&mut halves[..], &odd);
        for ((b, h), x) in bits.iter_mut().zip(halves).zip(sums) {
            *b = if x.is_nan() {
                CANONICAL_NAN_F16
            } else {
                h.to_bits()
            } as u64;
        }
    } else {
        for ((b, r), x) in bits.iter_mut().zip(toward_zero).zip(sums) {
            *b = if x.is_nan() { CANONICAL_NAN_F32 } else { r } as u64;
        }
    }
    bits
}

/// The bits of `x` rounded to f32 toward zero, except that from 2^128 on it is infinity (the
/// recordings' overflows are infinities, not the largest finite f32).
#[inline(always)]
fn f32_toward_zero(x: f64) -> u32 {
    let nearest = x as f32;
    // (Where rounding to nearest went away from zero, one step back: f32's bits order its
    // magnitudes.)
    let away = (nearest as f64).abs() > x.abs() && x.abs() < pow2(128);
    nearest.to_bits() - away as u32
}

/// D's bits where C is added after the products' blocks, as [`Blocks::Fp8Pairs`] does: the
/// products' D `products` (D's bits) plus `c`, rounded to nearest even in D's type.
fn add_c(d: MmaType, products: u64, c: f64) -> u64 {
    add_c8(d, [products; 8], [c; 8])[0]
}

/// [`add_c`] of eight elements.
#[inline(always)]
fn add_c8(d: MmaType, products: [u64; 8], c: [f64; 8]) -> [u64; 8] {
    let mut sum = d_values(d, products);
    for (sum, c) in sum.iter_mut().zip(c) {
        // (The f64 sum of two f32 or f16 values rounds to the same bits as their sum would.)
        *sum += c;
    }
    if d == MmaType::F16 {
        return to_d8(d, sum);
    }
    let mut bits = [0; 8];
    for (bits, x) in bits.iter_mut().zip(sum) {
        *bits = if x.is_nan() {
            CANONICAL_NAN_F32
        } else {
            (x as f32).to_bits()
        } as u64;
    }
    bits
}

/// The values of eight D elements' bits.
#[inline(always)]
fn d_values(d: MmaType, bits: [u64; 8]) -> [f64; 8] {
    let mut x = [0.0; 8];
    for (x, bits) in x.iter_mut().zip(bits) {
        *x = match d {
            MmaType::F16 => half::f16::from_bits(bits as u16).to_f64(),
            _ => f32::from_bits(bits as u32) as f64,
        };
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use MmaType::*;

    /// [`Arith::matrix`] in each form compiled here that this CPU runs (AVX-512, AVX2,
    /// baseline x86-64) gives [`Arith::element`]'s bits for every element, on halves of
    /// tiny, huge and unit magnitudes of both signs, subnormals, infinities and NaNs.
    #[test]
    fn every_compiled_form_of_the_matrix_gives_the_elements_bits() {
        type Matrix = fn(Arith, (&[f64], &[[f64; 8]], &[f64]), (usize, usize, usize), &mut [u64]);
        let mut forms: Vec<(&str, Matrix)> = vec![("baseline", |arith, abc, shape, d| {
            arith.matrix_with(abc, shape, d)
        })];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                forms.push(("avx2", |arith, abc, shape, d| unsafe {
                    arith.matrix_avx2(abc, shape, d)
                }));
            }
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512 F.
                forms.push(("avx512", |arith, abc, shape, d| unsafe {
                    arith.matrix_avx512(abc, shape, d)
                }));
            }
        }
        let ariths = [
            (F16, F32, Blocks::Whole, 16),
            (F16, F16, Blocks::Whole, 16),
            (BF16, F32, Blocks::Whole, 16),
            (E4m3, F32, Blocks::Fp8Pairs, 32),
            (E5m2, F16, Blocks::Fp8Pairs, 32),
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let palette = [
            0x0001, 0x7800, 0xF800, 0x3C00, 0xBC00, 0x8001, 0x0400, 0x7C00, 0x7E00,
        ];
        let mut half = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let bits = match palette.get(seed as usize % 24) {
                Some(&h) => h,
                None => (seed >> 8) as u16 & 0xBFFF,
            };
            half::f16::from_bits(bits).to_f64()
        };
        let (m, n) = (16, 16);
        for (ab, cd, blocks, k) in ariths {
            let arith = Arith {
                a: ab,
                b: ab,
                c: cd,
                d: cd,
                blocks,
            };
            for _ in 0..20 {
                let a: Vec<f64> = (0..m * k).map(|_| half()).collect();
                let b: Vec<f64> = (0..k * n).map(|_| half()).collect();
                let c: Vec<f64> = (0..m * n).map(|_| half()).collect();
                // (A's columns and B's rows in the matrix's order of k, B in panels.)
                let mut a_k = vec![0.0; m * k];
                for (row, kk) in (0..m).flat_map(|row| (0..k).map(move |kk| (row, kk))) {
                    a_k[row * k + arith.k_position(kk, k)] = a[row * k + kk];
                }
                let mut panels = vec![[0.0; 8]; n / 8 * k];
                for (kk, col) in (0..k).flat_map(|kk| (0..n).map(move |col| (kk, col))) {
                    panels[col / 8 * k + arith.k_position(kk, k)][col % 8] = b[kk * n + col];
                }
                for &(name, matrix) in &forms {
                    let mut d = vec![0; m * n];
                    matrix(arith, (&a_k, &panels, &c), (m, n, k), &mut d);
                    for (row, col) in (0..m).flat_map(|row| (0..n).map(move |col| (row, col))) {
                        let products: Vec<_> = (0..k)
                            .map(|kk| (a[row * k + kk], b[kk * n + col]))
                            .collect();
                        let want = arith.element(&products, c[row * n + col]);
                        assert_eq!(d[row * n + col], want, "{name}: {arith:?} ({row}, {col})");
                    }
                }
            }
        }
    }
}
