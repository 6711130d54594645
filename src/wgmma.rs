//! Warpgroup MMA, `wgmma.mma_async.sync.aligned` (sm_90a): D = A·B + D over a warpgroup (four
//! consecutive warps, the first a multiple of four), M = 64.
//!
//! The instruction is a synchronization point of the cooperative model (`crate::sync`): once
//! the warpgroup's 128 threads have all issued it, [`run`] gathers A (from the threads'
//! registers, or from shared memory through a matrix descriptor) and B (through a
//! descriptor) and computes every thread's D registers. The product is complete at issue, as
//! an asynchronous operation may be: a program may not read D, write A's registers or change
//! the matrices before `wgmma.wait_group` says the product is done, so `wgmma.fence`,
//! `commit_group` and `wait_group` have nothing left to order.
//!
//! Register fragments (ISA "Register Fragments"): warp w of the group holds rows 16w to
//! 16w + 15; within them A is laid out as `mma.m16n8k*`'s A (`crate::mma::a_m16`) and D as
//! its C, repeated every 8 columns: D element i of lane 4g + t is at row g + 8·((i mod 4) div
//! 2), column 8·(i div 4) + 2t + (i mod 2).
//!
//! Shared-memory matrices (ISA "Shared Memory Matrix Layout", its canonical layouts): an
//! M×K A or an N×K B, K-major (`imm-trans` 0) or MN-major (1), in 16-byte units of T
//! elements ([`Descriptor::address`]), then swizzled by the shared address
//! (`crate::swizzle`), so a tile a swizzled TMA load wrote is read back in place.
//!
//! Arithmetic: that of `mma` (`crate::mma::sum`): the products of one instruction (its K:
//! 16 for f16 and bf16, 8 for tf32, 32 for fp8) and D as one block, aligned on the largest
//! exponent and truncated 25 bits below it, the sum rounded toward zero to f32 or to nearest
//! f16. Inferred from recordings of `mma.sync` on an H200 (the same tensor cores), not
//! measured on `wgmma`: its fp8 block especially (`mma.sync` runs fp8 as f16 products).

use crate::frontend::checked::{MmaType, WgmmaForm};
use crate::mma::sum::Arith;
use crate::mma::{Value, a_m16, accumulate, element, float_element};

/// Where the compiled code leaves the instruction's operands among a thread's synchronization
/// operand words (`crate::sync::frame::ARGS`); D stays in its registers' save slots.
pub mod args {
    pub const A_DESC: i32 = 0;
    pub const B_DESC: i32 = 1;
    pub const SCALE_D: i32 = 2;
    /// [`super::flags`].
    pub const FLAGS: i32 = 3;
    /// A's four registers, when A is in registers.
    pub const A_REGS: i32 = 4;
}

/// Bits of the flags word the compiled code passes with the descriptors: where A is, and the
/// instruction's immediates.
pub mod flags {
    pub const A_IN_REGISTERS: u64 = 1;
    /// `imm-scale-a` / `imm-scale-b` is -1.
    pub const NEGATE_A: u64 = 2;
    pub const NEGATE_B: u64 = 4;
    /// `imm-trans-a` / `imm-trans-b` is 1: the matrix is MN-major.
    pub const TRANSPOSE_A: u64 = 8;
    pub const TRANSPOSE_B: u64 = 16;
}

/// A shared-memory matrix descriptor (ISA "Matrix Descriptor Format"), its fields in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descriptor {
    /// The matrix's start in the shared window (bits 0–13, in 16-byte units).
    pub start: u64,
    /// Leading and stride dimension byte offsets (bits 16–29 and 32–45, in 16-byte units).
    pub leading: u64,
    pub stride: u64,
    /// The 128-byte row (mod 8) where the swizzle pattern starts (bits 49–51).
    pub base: u64,
    /// The swizzle span (bits 62–63: 1 is 128 bytes, 2 is 64, 3 is 32), 0 without.
    pub span: u64,
}

impl Descriptor {
    pub fn decode(bits: u64) -> Descriptor {
        let field = |lo: u32| (bits >> lo & 0x3FFF) * 16;
        Descriptor {
            start: field(0),
            leading: field(16),
            stride: field(32),
            base: bits >> 49 & 7,
            span: match bits >> 62 {
                1 => 128,
                2 => 64,
                3 => 32,
                _ => 0,
            },
        }
    }

    pub fn encode(&self) -> u64 {
        let field = |v: u64, lo: u32| ((v / 16) & 0x3FFF) << lo;
        let mode = match self.span {
            128 => 1,
            64 => 2,
            32 => 3,
            _ => 0,
        };
        field(self.start, 0)
            | field(self.leading, 16)
            | field(self.stride, 32)
            | (self.base & 7) << 49
            | mode << 62
    }

    /// The shared address of element (`row`, `k`) of `bytes`-byte elements: `row` counts M
    /// (A) or N (B). With T = 16 / bytes elements to a unit, c = span / 16 units to a swizzled
    /// row, LBO and SBO the descriptor's offsets (the canonical layouts):
    ///
    /// - K-major, unswizzled, `((8,m),(T,2k)):((1T,SBO),(1,LBO))`: rows of one unit, 8 rows a
    ///   core matrix, SBO between core matrices along M/N, LBO along K;
    /// - K-major, swizzled, `((8,m),(T,2k)):((cT,SBO),(1,T))`: rows of the span, K
    ///   contiguous, SBO between groups of 8 rows;
    /// - MN-major, unswizzled, `((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))`: units along M/N, SBO
    ///   between them, 8 K-rows a core matrix, LBO between core matrices along K;
    /// - MN-major, swizzled, `((T,c,m),(8,k)):((1,T,LBO),(cT,SBO))`: rows of the span along
    ///   M/N, LBO between spans, 8 K-rows of them, SBO between groups of 8 K-rows.
    pub fn address(&self, k_major: bool, row: u64, k: u64, bytes: u64) -> u64 {
        let t = 16 / bytes;
        let (lbo, sbo) = (self.leading, self.stride);
        let linear = match (k_major, self.span) {
            (true, 0) => (row % 8) * 16 + (row / 8) * sbo + (k % t) * bytes + (k / t) * lbo,
            (true, span) => (row % 8) * span + (row / 8) * sbo + k * bytes,
            (false, 0) => (row % t) * bytes + (row / t) * sbo + (k % 8) * 16 + (k / 8) * lbo,
            (false, span) => {
                let c = span / 16;
                let mn = (row % t) * bytes + (row / t % c) * 16 + (row / (c * t)) * lbo;
                mn + (k % 8) * span + (k / 8) * sbo
            }
        };
        crate::swizzle::swizzle(self.start + linear, self.span, self.base)
    }
}

/// What the warpgroup's threads gave at the instruction.
#[derive(Debug)]
pub struct Issue {
    pub a_desc: u64,
    pub b_desc: u64,
    /// [`flags`].
    pub flags: u64,
    /// Per thread (128): `scale-d`, and A's four registers when A is in registers.
    pub scale_d: Vec<bool>,
    pub a: Vec<[u32; 4]>,
}

/// A matrix element outside the block's shared memory: its shared address and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outside {
    pub address: u64,
    pub bytes: u64,
}

/// Performs the product: `d` holds the warpgroup's D registers, thread after thread
/// (`form.d_registers()` each), read when the thread's `scale-d` is true, and written.
/// `shared` is the block's shared memory.
pub fn run(form: WgmmaForm, issue: &Issue, shared: &[u8], d: &mut [u32]) -> Result<(), Outside> {
    let (n, k) = (form.n as usize, form.k as usize);
    let has = |f: u64| issue.flags & f != 0;
    // A (64 × K) and B (N × K: its columns as rows), as each element's bits.
    let a = match has(flags::A_IN_REGISTERS) {
        true => a_from_registers(form, &issue.a),
        false => {
            let desc = Descriptor::decode(issue.a_desc);
            tile(&desc, !has(flags::TRANSPOSE_A), (64, k), form.a, shared)?
        }
    };
    let desc = Descriptor::decode(issue.b_desc);
    let b = tile(&desc, !has(flags::TRANSPOSE_B), (n, k), form.b, shared)?;
    match form.d {
        MmaType::S32 => integer_d(form, issue, (&a, &b), d),
        _ => float_d(form, issue, (&a, &b), d),
    }
    Ok(())
}

/// The bits of a `rows` × `k` matrix of `ty` elements through descriptor `desc`, row after
/// row. Read a 16-byte unit at a time: a unit holds T elements along K (K-major) or along
/// the rows (MN-major) in every canonical layout, and the swizzle moves whole units.
fn tile(
    desc: &Descriptor,
    k_major: bool,
    (rows, k): (usize, usize),
    ty: MmaType,
    shared: &[u8],
) -> Result<Vec<u32>, Outside> {
    let bytes = ty.bits() as usize / 8;
    let t = 16 / bytes;
    let mut bits = vec![0; rows * k];
    // (Units along K a row, K-major; along the rows a column of K, MN-major.)
    let (across, down) = match k_major {
        true => (k / t, rows),
        false => (rows / t, k),
    };
    for (i, j) in (0..down).flat_map(|i| (0..across).map(move |j| (i, j))) {
        let (row, kk, step) = match k_major {
            true => (i, j * t, 1),
            false => (j * t, i, k),
        };
        let at = desc.address(k_major, row as u64, kk as u64, bytes as u64) as usize;
        let Some(unit) = shared.get(at..at + 16) else {
            // (The first of the unit's elements that is outside.)
            let e = shared.len().saturating_sub(at) / bytes;
            let address = (at + e * bytes) as u64;
            return Err(Outside {
                address,
                bytes: bytes as u64,
            });
        };
        for (e, x) in unit.chunks_exact(bytes).enumerate() {
            let x = x.iter().rev().fold(0, |v, &b| v << 8 | b as u32);
            bits[row * k + kk + e * step] = x;
        }
    }
    Ok(bits)
}

/// A's bits (64 × K, row after row) from each thread's four registers: warp w holds rows
/// 16w to 16w + 15 as `mma.m16n8k*`'s A ([`a_m16`]).
fn a_from_registers(form: WgmmaForm, registers: &[[u32; 4]]) -> Vec<u32> {
    let k = form.k as usize;
    let bits = form.a.bits() as usize;
    let per = 32 / bits;
    let mut a = vec![0; 64 * k];
    for (t, regs) in registers.iter().enumerate() {
        for i in 0..16 * k / 32 {
            let (row, col) = a_m16(form.k, form.a, t % 32, i);
            let reg = regs[i / per] as u64 >> (bits * (i % per));
            a[(16 * (t / 32) + row) * k + col] = (reg & ((1 << bits) - 1)) as u32;
        }
    }
    a
}

/// Thread `t`'s D elements (`n` / 2 of them, element i in register i / e at e a register)
/// by their index in D (row × N + column): warp w = t div 32 holds rows 16w to 16w + 15,
/// lane 4g + t' row g + 8·((i mod 4) div 2), column 8·(i div 4) + 2t' + (i mod 2).
fn d_elements(t: usize, n: usize) -> impl Iterator<Item = usize> {
    let (row, col) = (16 * (t / 32) + t % 32 / 4, 2 * (t % 4));
    (0..n / 2).map(move |i| (row + 8 * (i % 4 / 2)) * n + col + 8 * (i / 4) + i % 2)
}

/// A float D: every element by the tensor cores' rule ([`Arith::matrix`]), D's old values
/// as C where the thread's `scale-d` is true (+0 where it is false).
fn float_d(form: WgmmaForm, issue: &Issue, (a, b): (&[u32], &[u32]), d: &mut [u32]) {
    let (n, k) = (form.n as usize, form.k as usize);
    let has = |f: u64| issue.flags & f != 0;
    let a = values(form.a, a, has(flags::NEGATE_A));
    let b = values(form.b, b, has(flags::NEGATE_B));
    // (B as eight-column panels, each K rows.)
    let b: Vec<[f64; 8]> = (0..n / 8)
        .flat_map(|panel| (0..k).map(move |kk| (panel, kk)))
        .map(|(panel, kk)| std::array::from_fn(|j| b[(8 * panel + j) * k + kk]))
        .collect();
    let regs = form.d_registers() as usize;
    // (Element i is element i & e of register i >> p: one or two to a register, and the
    // loops below neither divide nor match D's type an element.)
    let p = (32 / form.d.bits()).trailing_zeros();
    let e = (1 << p) - 1;
    let mut c = vec![0.0; 64 * n];
    for (t, regs) in d.chunks_exact(regs).enumerate() {
        if !issue.scale_d[t] {
            continue;
        }
        for (i, at) in d_elements(t, n).enumerate() {
            let reg = regs[i >> p];
            c[at] = match form.d {
                MmaType::F16 => half::f16::from_bits((reg >> (16 * (i & e))) as u16).to_f64(),
                _ => f32::from_bits(reg) as f64,
            };
        }
    }
    let mut bits = vec![0; 64 * n];
    Arith::of_wgmma(form).matrix((&a, &b, &c), (64, n, k), &mut bits);
    let shift = form.d.bits() as usize;
    for (t, regs) in d.chunks_exact_mut(regs).enumerate() {
        regs.fill(0);
        for (i, at) in d_elements(t, n).enumerate() {
            regs[i >> p] |= (bits[at] as u32) << (shift * (i & e));
        }
    }
}

/// The values of `bits`, elements of float type `ty`, negated where `negate` says.
fn values(ty: MmaType, bits: &[u32], negate: bool) -> Vec<f64> {
    let mut values: Vec<f64> = match ty {
        MmaType::F16 | MmaType::BF16 => {
            let halves: Vec<u16> = bits.iter().map(|&x| x as u16).collect();
            let mut values = vec![0.0; bits.len()];
            crate::mma::halves_into_f64(ty, &halves, &mut values);
            values
        }
        _ => bits
            .iter()
            .map(|&x| float_element(ty, x as u64, 0))
            .collect(),
    };
    if negate {
        values.iter_mut().for_each(|x| *x = -*x);
    }
    values
}

/// An integer D (s32): each element by [`accumulate`], D's old value as C where the
/// thread's `scale-d` is true (0 where it is false).
fn integer_d(form: WgmmaForm, issue: &Issue, (a, b): (&[u32], &[u32]), d: &mut [u32]) {
    let (n, k) = (form.n as usize, form.k as usize);
    let value = |ty, x: u32| element(ty, x as u64, 0);
    for (t, regs) in d.chunks_exact_mut(form.d_registers() as usize).enumerate() {
        for (reg, at) in regs.iter_mut().zip(d_elements(t, n)) {
            let c = match issue.scale_d[t] {
                true => element(form.d, *reg as u64, 0),
                false => Value::Int(0),
            };
            let (row, col) = (at / n, at % n);
            let products = (0..k).map(|kk| {
                (
                    value(form.a, a[row * k + kk]),
                    value(form.b, b[col * k + kk]),
                )
            });
            *reg = accumulate(form.d, form.satfinite, products, c) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_decodes_its_fields_in_bytes() {
        let bits = 0x40 | 1 << 16 | 64 << 32 | 3 << 49 | 1 << 62;
        let d = Descriptor::decode(bits);
        assert_eq!(
            d,
            Descriptor {
                start: 0x400,
                leading: 16,
                stride: 1024,
                base: 3,
                span: 128
            }
        );
        assert_eq!(d.encode(), bits);
    }

    /// The ISA's example "K-major, no-swizzling and tf32 type": exact layout
    /// `((8,2),(4,4)):((4,32),(1,64))` in elements, LBO 64 and SBO 32 elements.
    #[test]
    fn k_major_unswizzled_follows_the_isa_tf32_example() {
        let d = Descriptor {
            leading: 64 * 4,
            stride: 32 * 4,
            ..Default::default()
        };
        for row in 0..16 {
            for k in 0..8 {
                let element = (row % 8) * 4 + (row / 8) * 32 + k % 4 + (k / 4) * 64;
                assert_eq!(d.address(true, row, k, 4), element * 4, "({row}, {k})");
            }
        }
    }

    /// "K-major, 32B swizzling and tf32 type": `Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))`.
    #[test]
    fn k_major_swizzled_follows_the_isa_tf32_example() {
        let d = Descriptor {
            stride: 64 * 4,
            span: 32,
            ..Default::default()
        };
        for row in 0..16 {
            for k in 0..8 {
                let linear = ((row % 8) * 8 + (row / 8) * 64 + k) * 4;
                let swizzled = linear ^ ((linear >> 7 & 1) << 4);
                assert_eq!(d.address(true, row, k, 4), swizzled, "({row}, {k})");
            }
        }
    }

    /// "MN-major, no-swizzling and bf16 type": `((8,1,2),(8,2)):((1,8,64),(8,128))`, LBO 128
    /// and SBO 64 elements.
    #[test]
    fn mn_major_unswizzled_follows_the_isa_bf16_example() {
        let d = Descriptor {
            leading: 128 * 2,
            stride: 64 * 2,
            ..Default::default()
        };
        for row in 0..16 {
            for k in 0..16 {
                let element = row % 8 + (row / 8) * 64 + (k % 8) * 8 + (k / 8) * 128;
                assert_eq!(d.address(false, row, k, 2), element * 2, "({row}, {k})");
            }
        }
    }

    /// "MN-major, 32B swizzling and bf16 type": `Swizzle<1,4,3> o
    /// ((8,2,2),(8,2)):((1,8,128),(16,256))`; and the 64B example, `Swizzle<2,4,3> o
    /// ((8,4,2),(8,2)):((1,8,256),(32,512))`.
    #[test]
    fn mn_major_swizzled_follows_the_isa_bf16_examples() {
        for (span, c, lbo, sbo) in [(32u64, 2, 128, 256), (64, 4, 256, 512)] {
            let d = Descriptor {
                leading: lbo * 2,
                stride: sbo * 2,
                span,
                ..Default::default()
            };
            for row in 0..16 * c {
                for k in 0..16 {
                    let element = row % 8
                        + (row / 8 % c) * 8
                        + (row / (8 * c)) * lbo
                        + (k % 8) * 8 * c
                        + (k / 8) * sbo;
                    let linear = element * 2;
                    let swizzled = crate::swizzle::swizzle(linear, span, 0);
                    assert_eq!(
                        d.address(false, row, k, 2),
                        swizzled,
                        "{span}: ({row}, {k})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_start_address_moves_the_whole_matrix() {
        let d = Descriptor {
            start: 0x400,
            stride: 1024,
            span: 128,
            ..Default::default()
        };
        let at_zero = Descriptor { start: 0, ..d };
        // A 1024-byte-aligned start keeps the pattern: the same swizzled offsets.
        assert_eq!(
            d.address(true, 3, 5, 2),
            0x400 + at_zero.address(true, 3, 5, 2)
        );
    }

    /// A small xorshift generator: the tests below draw forms, layouts and operands.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// D by the definitions, an element at a time: each element of A and B read at its own
    /// address ([`Descriptor::address`]) or from its thread's register ([`a_m16`]), each D
    /// element by [`Arith::element`] or [`accumulate`]; `None` where an element is outside.
    fn by_definition(form: WgmmaForm, issue: &Issue, shared: &[u8], d: &[u32]) -> Option<Vec<u32>> {
        let (n, k) = (form.n as usize, form.k as usize);
        let has = |f: u64| issue.flags & f != 0;
        let read = |desc: u64, k_major: bool, row: usize, kk: usize, ty: MmaType| {
            let bytes = ty.bits() as u64 / 8;
            let at = Descriptor::decode(desc).address(k_major, row as u64, kk as u64, bytes);
            let raw = shared.get(at as usize..(at + bytes) as usize)?;
            Some(raw.iter().rev().fold(0u64, |v, &b| v << 8 | b as u64))
        };
        let a_bits = |row: usize, kk: usize| match has(flags::A_IN_REGISTERS) {
            true => {
                let bits = form.a.bits() as usize;
                let per = 32 / bits;
                let t = (0..128)
                    .flat_map(|t| (0..16 * k / 32).map(move |i| (t, i)))
                    .find(|&(t, i)| {
                        (
                            16 * (t / 32) + a_m16(form.k, form.a, t % 32, i).0,
                            a_m16(form.k, form.a, t % 32, i).1,
                        ) == (row, kk)
                    })
                    .expect("every element of A in a register");
                let (t, i) = t;
                Some(issue.a[t][i / per] as u64 >> (bits * (i % per)) & ((1 << bits) - 1))
            }
            false => read(issue.a_desc, !has(flags::TRANSPOSE_A), row, kk, form.a),
        };
        let mut a = vec![vec![0; k]; 64];
        for (row, a) in a.iter_mut().enumerate() {
            for (kk, a) in a.iter_mut().enumerate() {
                *a = a_bits(row, kk)?;
            }
        }
        let mut b = vec![vec![0; n]; k];
        for (kk, b) in b.iter_mut().enumerate() {
            for (col, b) in b.iter_mut().enumerate() {
                *b = read(issue.b_desc, !has(flags::TRANSPOSE_B), col, kk, form.b)?;
            }
        }
        let regs = form.d_registers() as usize;
        let per = 32 / form.d.bits() as usize;
        let mut out = vec![0; d.len()];
        for t in 0..128 {
            for i in 0..n / 2 {
                let (g, lane_t) = (t % 32 / 4, t % 4);
                let row = 16 * (t / 32) + g + 8 * (i % 4 / 2);
                let col = 8 * (i / 4) + 2 * lane_t + i % 2;
                let old = d[t * regs + i / per] as u64;
                let bits = match form.d {
                    MmaType::S32 => {
                        let c = match issue.scale_d[t] {
                            true => element(form.d, old, 0),
                            false => Value::Int(0),
                        };
                        let products = (0..k).map(|kk| {
                            (
                                element(form.a, a[row][kk], 0),
                                element(form.b, b[kk][col], 0),
                            )
                        });
                        accumulate(form.d, form.satfinite, products, c)
                    }
                    _ => {
                        let sign = |negate: bool| if negate { -1.0 } else { 1.0 };
                        let products: Vec<(f64, f64)> = (0..k)
                            .map(|kk| {
                                (
                                    sign(has(flags::NEGATE_A))
                                        * float_element(form.a, a[row][kk], 0),
                                    sign(has(flags::NEGATE_B))
                                        * float_element(form.b, b[kk][col], 0),
                                )
                            })
                            .collect();
                        let c = match issue.scale_d[t] {
                            true => float_element(form.d, old, i % per),
                            false => 0.0,
                        };
                        Arith::of_wgmma(form).element(&products, c)
                    }
                };
                out[t * regs + i / per] |= (bits as u32) << (form.d.bits() as usize * (i % per));
            }
        }
        Some(out)
    }

    /// `run` reads A and B a 16-byte unit at a time and places D by thread: for every type,
    /// N, layout (K- or MN-major, each swizzle, base offset), A in registers or shared
    /// memory, `imm-scale` and `scale-d`, it gives the elements the definitions give.
    #[test]
    fn run_gives_the_elements_the_definitions_give_in_every_layout() {
        use MmaType::*;
        let forms = [
            (F16, F16, F32),
            (F16, F16, F16),
            (BF16, BF16, F32),
            (Tf32, Tf32, F32),
            (E4m3, E5m2, F32),
            (E5m2, E4m3, F16),
            (S8, U8, S32),
            (U8, S8, S32),
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..64 {
            let (a, b, d) = forms[round % forms.len()];
            let k = 256 / a.bits();
            let n = 8 * (1 + rng.below(4) as u32);
            let satfinite = d == S32 && rng.below(2) == 1;
            let form = WgmmaForm {
                n,
                k,
                d,
                a,
                b,
                satfinite,
            };
            let mut shared = vec![0u8; 1 << 16];
            shared.iter_mut().for_each(|x| *x = rng.next() as u8);
            let desc = |rng: &mut Rng| {
                Descriptor {
                    start: 16 * rng.below(256),
                    leading: 16 * rng.below(64),
                    stride: 16 * rng.below(64),
                    base: rng.below(8),
                    span: [0, 32, 64, 128][rng.below(4) as usize],
                }
                .encode()
            };
            let mut flags = 0;
            if form.transposes() {
                flags |= [0, flags::TRANSPOSE_A][rng.below(2) as usize];
                flags |= [0, flags::TRANSPOSE_B][rng.below(2) as usize];
            }
            if form.scales() {
                flags |= [0, flags::NEGATE_A][rng.below(2) as usize];
                flags |= [0, flags::NEGATE_B][rng.below(2) as usize];
            }
            flags |= [0, flags::A_IN_REGISTERS][rng.below(2) as usize];
            if flags & flags::A_IN_REGISTERS != 0 {
                flags &= !flags::TRANSPOSE_A;
            }
            let issue = Issue {
                a_desc: desc(&mut rng),
                b_desc: desc(&mut rng),
                flags,
                scale_d: (0..128).map(|_| rng.below(2) == 1).collect(),
                a: (0..128)
                    .map(|_| std::array::from_fn(|_| rng.next() as u32))
                    .collect(),
            };
            let old: Vec<u32> = (0..128 * form.d_registers())
                .map(|_| rng.next() as u32)
                .collect();
            let want = by_definition(form, &issue, &shared, &old).expect("inside");
            let mut got = old.clone();
            run(form, &issue, &shared, &mut got).expect("inside");
            assert_eq!(got, want, "round {round}: {form:?}, {issue:?}");
        }
    }

    /// A matrix reaching past the end of shared memory is refused, naming an element of it
    /// that is outside; one that ends at the end is read.
    #[test]
    fn an_element_outside_shared_memory_is_named() {
        let form = WgmmaForm {
            n: 64,
            k: 16,
            d: MmaType::F32,
            a: MmaType::F16,
            b: MmaType::F16,
            satfinite: false,
        };
        for len in [0, 100, 1024, 2047, 2048] {
            let shared = vec![0u8; len];
            let issue = Issue {
                a_desc: Descriptor {
                    stride: 256,
                    span: 32,
                    ..Default::default()
                }
                .encode(),
                b_desc: Descriptor {
                    stride: 256,
                    span: 32,
                    ..Default::default()
                }
                .encode(),
                flags: 0,
                scale_d: vec![false; 128],
                a: vec![[0; 4]; 128],
            };
            let mut d = vec![0; 128 * form.d_registers() as usize];
            let Err(Outside { address, bytes }) = run(form, &issue, &shared, &mut d) else {
                // (Rows of 32 bytes, SBO 256 between groups of eight: 2048 bytes.)
                assert_eq!(len, 2048, "{len} bytes cannot hold A and B");
                continue;
            };
            assert_eq!(bytes, 2);
            assert!(
                address + bytes > len as u64 && address < 2048,
                "{len}: {address:#x}"
            );
        }
    }
}
