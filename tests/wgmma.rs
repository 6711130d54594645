//! `wgmma.mma_async` (sm_90a), a case per rule of the ISA: a warpgroup of 128 threads copies
//! a tile image into shared memory, issues one product between `wgmma.fence` and
//! `wgmma.wait_group 0`, and stores its D registers. Tiles are laid out here as a TMA would
//! write them (row-major boxes, swizzled by address), or as the ISA's core-matrix figures
//! draw them; A's register fragments and D's come from the ISA's figures. Values are small
//! integers, so every sum is exact, but in the case of the accumulation rule.

mod common;

use common::Rng;
use ptxjit::{Arg, DeviceBuffer, Module};

const THREADS: usize = 128;

/// A product to run: the instruction's opcode, its shape, and what it reads.
struct Product {
    opcode: String,
    /// D registers per thread (N/2, or N/4 for an f16 D).
    nd: usize,
    /// Shared memory image (copied to a 1024-byte-aligned array).
    shared: Vec<u8>,
    /// A's registers per thread, or A's descriptor (start relative to the array).
    a: Result<Vec<[u32; 4]>, u64>,
    b_desc: u64,
    d: Vec<Vec<u32>>,
    scale_d: bool,
    /// The operands after scale-d, e.g. `1, 1, 0, 1`.
    immediates: String,
    threads: usize,
}

impl Product {
    fn new(opcode: &str, nd: usize, shared: Vec<u8>, b_desc: u64) -> Product {
        Product {
            opcode: opcode.to_string(),
            nd,
            shared,
            a: Err(0),
            b_desc,
            d: vec![vec![0; nd]; THREADS],
            scale_d: false,
            immediates: String::new(),
            threads: THREADS,
        }
    }

    fn ptx(&self) -> String {
        let nd = self.nd;
        let words = self.shared.len() / 4;
        let d: Vec<String> = (0..nd).map(|i| format!("%d{i}")).collect();
        let loads: String = (0..nd)
            .map(|i| format!("ld.global.b32 %d{i}, [%rd5+{}];\n", 16 + 4 * i))
            .collect();
        let stores: String = (0..nd)
            .map(|i| format!("st.global.b32 [%rd10+{}], %d{i};\n", 4 * i))
            .collect();
        let a = match self.a {
            Ok(_) => "{%a0, %a1, %a2, %a3}",
            Err(_) => "%rd7",
        };
        let imm = match self.immediates.as_str() {
            "" => String::new(),
            i => format!(", {i}"),
        };
        format!(
            ".version 8.0\n.target sm_90a\n.address_size 64\n\
             .visible .entry k(.param .u64 sm, .param .u64 regs, .param .u64 out, \
             .param .u64 adesc, .param .u64 bdesc, .param .u32 scaled)\n{{\n\
             .shared .align 1024 .b8 smem[{bytes}];\n\
             .reg .b32 %r<8>, %a<4>, %d<{nd}>;\n.reg .b64 %rd<12>;\n.reg .pred %p<2>;\n\
             mov.u32 %r0, %tid.x;\nld.param.u64 %rd0, [sm];\nmov.u32 %r1, %r0;\n\
             COPY:\nsetp.ge.u32 %p0, %r1, {words};\n@%p0 bra COPIED;\n\
             mul.wide.u32 %rd1, %r1, 4;\nadd.s64 %rd2, %rd0, %rd1;\nld.global.u32 %r2, [%rd2];\n\
             mov.u32 %r3, smem;\nshl.b32 %r4, %r1, 2;\nadd.u32 %r3, %r3, %r4;\n\
             st.shared.u32 [%r3], %r2;\nadd.u32 %r1, %r1, {threads};\nbra COPY;\n\
             COPIED:\nbar.sync 0;\n\
             ld.param.u64 %rd3, [regs];\nmul.wide.u32 %rd4, %r0, {stride};\n\
             add.s64 %rd5, %rd3, %rd4;\n\
             ld.global.b32 %a0, [%rd5];\nld.global.b32 %a1, [%rd5+4];\n\
             ld.global.b32 %a2, [%rd5+8];\nld.global.b32 %a3, [%rd5+12];\n{loads}\
             mov.u32 %r5, smem;\nshr.u32 %r5, %r5, 4;\ncvt.u64.u32 %rd6, %r5;\n\
             ld.param.u64 %rd7, [adesc];\nadd.s64 %rd7, %rd7, %rd6;\n\
             ld.param.u64 %rd8, [bdesc];\nadd.s64 %rd8, %rd8, %rd6;\n\
             ld.param.u32 %r6, [scaled];\nsetp.ne.u32 %p1, %r6, 0;\n\
             wgmma.fence.sync.aligned;\n\
             {opcode} {{{d}}}, {a}, %rd8, %p1{imm};\n\
             wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n\
             ld.param.u64 %rd9, [out];\nmul.wide.u32 %rd4, %r0, {out_stride};\n\
             add.s64 %rd10, %rd9, %rd4;\n{stores}ret;\n}}\n",
            bytes = self.shared.len().max(16),
            threads = self.threads,
            stride = 16 + 4 * nd,
            out_stride = 4 * nd,
            opcode = self.opcode,
            d = d.join(", "),
        )
    }

    fn run(&self) -> Result<Vec<Vec<u32>>, String> {
        self.run_ptx(&self.ptx())
    }

    fn run_ptx(&self, ptx: &str) -> Result<Vec<Vec<u32>>, String> {
        let module = Module::from_ptx_named("wgmma.ptx", ptx, &Default::default())
            .map_err(|e| e.to_string())?;
        let mut regs = Vec::new();
        for t in 0..self.threads {
            let a = match &self.a {
                Ok(a) => a[t],
                Err(_) => [0; 4],
            };
            regs.extend(a.iter().chain(&self.d[t]).flat_map(|w| w.to_le_bytes()));
        }
        let shared = DeviceBuffer::from_slice(&self.shared).unwrap();
        let regs = DeviceBuffer::from_slice(&regs).unwrap();
        let out = DeviceBuffer::zeroed(self.threads * self.nd * 4).unwrap();
        let a_desc = *self.a.as_ref().err().unwrap_or(&0);
        module
            .kernel("k")
            .unwrap()
            .launch(
                1,
                self.threads as u32,
                &[
                    Arg::buffer(&shared),
                    Arg::buffer(&regs),
                    Arg::buffer(&out),
                    Arg::u64(a_desc),
                    Arg::u64(self.b_desc),
                    Arg::u32(self.scale_d as u32),
                ],
            )
            .map_err(|e| e.to_string())?;
        let words: Vec<u32> = out.to_vec();
        Ok(words.chunks(self.nd).map(|c| c.to_vec()).collect())
    }
}

/// A descriptor: start (bytes from the array), LBO, SBO (bytes), swizzle mode (ISA encoding).
fn desc(start: u64, lbo: u64, sbo: u64, mode: u64) -> u64 {
    (start / 16) | ((lbo / 16) << 16) | ((sbo / 16) << 32) | (mode << 62)
}

/// (row, column) of D element `i` of thread `t` (ISA figure "WGMMA .m64nNk* register fragment
/// layout for accumulator matrix D").
fn d_at(t: usize, i: usize) -> (usize, usize) {
    let (w, g, tt) = (t / 32, t % 32 / 4, t % 4);
    (16 * w + g + 8 * (i % 4 / 2), 8 * (i / 4) + 2 * tt + i % 2)
}

/// (row, column) of A element `i` of thread `t` for K = 16 (figure "register fragment layout
/// for matrix A", two f16 to a register).
fn a_at(t: usize, i: usize) -> (usize, usize) {
    let (w, g, tt) = (t / 32, t % 32 / 4, t % 4);
    (16 * w + g + 8 * (i / 2 % 2), 2 * tt + i % 2 + 8 * (i / 4))
}

/// The address a TMA box of `span`-byte rows puts byte `linear` at (CuTe `Swizzle<b,4,3>`:
/// the 16-byte chunk XOR the address's 128-byte row, b = log2(span / 16) bits).
fn swizzled(linear: usize, span: usize) -> usize {
    let mask = span / 16 - 1;
    linear ^ ((linear >> 7 & mask) << 4)
}

fn matrix(rows: usize, cols: usize, rng: &mut Rng, lo: i64, hi: i64) -> Vec<Vec<f64>> {
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| (lo + (rng.next() % (hi - lo + 1) as u64) as i64) as f64)
                .collect()
        })
        .collect()
}

fn f16(x: f64) -> u16 {
    half::f16::from_f64(x).to_bits()
}
fn bf16(x: f64) -> u16 {
    half::bf16::from_f64(x).to_bits()
}

fn put(shared: &mut [u8], at: usize, bits: u64, bytes: usize) {
    shared[at..at + bytes].copy_from_slice(&bits.to_le_bytes()[..bytes]);
}

/// Writes matrix `m` into `shared`, element (r, c) at `at(r, c)` as `bytes` bytes of `enc`.
fn fill(
    shared: &mut [u8],
    m: &[Vec<f64>],
    at: impl Fn(usize, usize) -> usize,
    enc: impl Fn(f64) -> u64,
    bytes: usize,
) {
    for (r, row) in m.iter().enumerate() {
        for (c, x) in row.iter().enumerate() {
            put(shared, at(r, c), enc(*x), bytes);
        }
    }
}

/// Every f32 D element of every thread is A·B (+ `c(t, i)`).
fn assert_products(
    d: &[Vec<u32>],
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    c: impl Fn(usize, usize) -> f64,
) {
    for (t, regs) in f32s(d).iter().enumerate() {
        for (i, got) in regs.iter().enumerate() {
            assert_eq!(
                *got,
                product(a, b, t, i) + c(t, i),
                "thread {t} element {i}"
            );
        }
    }
}

/// A product of A and B from K-major 128B-swizzled tiles (`k_major_128b`).
fn swizzled_product(
    opcode: &str,
    nd: usize,
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    enc: fn(f64) -> u16,
) -> Product {
    let mut p = Product::new(opcode, nd, k_major_128b(a, b, enc), desc(8192, 16, 1024, 1));
    p.a = Err(desc(0, 16, 1024, 1));
    p.immediates = "1, 1, 0, 0".into();
    p
}

/// A·B (+ C) at thread t's D element i.
fn product(a: &[Vec<f64>], b: &[Vec<f64>], t: usize, i: usize) -> f64 {
    let (row, col) = d_at(t, i);
    (0..b.len()).map(|k| a[row][k] * b[k][col]).sum()
}

/// f32 D registers as values.
fn f32s(d: &[Vec<u32>]) -> Vec<Vec<f64>> {
    d.iter()
        .map(|r| r.iter().map(|w| f32::from_bits(*w) as f64).collect())
        .collect()
}

/// A (64 × 16) and B (16 × N) as K-major tiles of 128-byte swizzled rows, as TMA loads a
/// row-major A and a column-major B, in 2-byte elements: A at 0, B at 8192.
fn k_major_128b(a: &[Vec<f64>], b: &[Vec<f64>], enc: fn(f64) -> u16) -> Vec<u8> {
    let mut shared = vec![0u8; 8192 + 1024 * b[0].len() / 8];
    for (r, row) in a.iter().enumerate() {
        for (k, x) in row.iter().enumerate() {
            put(
                &mut shared,
                swizzled(r * 128 + 2 * k, 128),
                enc(*x) as u64,
                2,
            );
        }
    }
    for (k, row) in b.iter().enumerate() {
        for (n, x) in row.iter().enumerate() {
            let at = 8192 + swizzled(n * 128 + 2 * k, 128);
            put(&mut shared, at, enc(*x) as u64, 2);
        }
    }
    shared
}

/// Small values: 64 × k and k × n in [-4, 4].
fn pair(seed: u64, k: usize, n: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let mut rng = Rng(seed);
    (
        matrix(64, k, &mut rng, -4, 4),
        matrix(k, n, &mut rng, -4, 4),
    )
}

const M64N8K16: &str = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16";

#[test]
fn a_in_registers_times_a_k_major_interleaved_b() {
    // m64n16k16, f16 into f32. B's core matrices (8 N-rows of 16 bytes, 128 bytes each):
    // LBO 128 between the two along K, SBO 256 between the two along N.
    let (a, b) = pair(1, 16, 16);
    let mut shared = vec![0u8; 512];
    let core = |k: usize, n: usize| (n / 8) * 256 + (k / 8) * 128 + (n % 8) * 16 + (k % 8) * 2;
    fill(&mut shared, &b, core, |x| f16(x) as u64, 2);
    let opcode = "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16";
    let mut p = Product::new(opcode, 8, shared, desc(0, 128, 256, 0));
    p.a = Ok((0..THREADS)
        .map(|t| {
            std::array::from_fn(|r| {
                let [lo, hi] = [2 * r, 2 * r + 1].map(|i| {
                    let (row, col) = a_at(t, i);
                    f16(a[row][col]) as u32
                });
                lo | hi << 16
            })
        })
        .collect());
    p.immediates = "1, 1, 0".into();
    assert_products(&p.run().unwrap(), &a, &b, |_, _| 0.0);
}

#[test]
fn descriptors_read_k_major_tiles_with_the_128b_swizzle_tma_writes() {
    let (a, b) = pair(2, 16, 64);
    let opcode = "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16";
    let p = swizzled_product(opcode, 32, &a, &b, bf16);
    assert_products(&p.run().unwrap(), &a, &b, |_, _| 0.0);
}

#[test]
fn a_start_32_bytes_on_reads_the_next_k_slice_of_a_swizzled_row() {
    // A is 64 × 64 in 128-byte rows; the product takes K = 16..32, as Triton's second step
    // does, from a start 32 bytes into the pattern. B holds that slice's 16 rows of K.
    let mut rng = Rng(3);
    let (a, b) = (
        matrix(64, 64, &mut rng, -4, 4),
        matrix(16, 8, &mut rng, -4, 4),
    );
    let mut shared = vec![0u8; 8192 + 1024];
    let bits = |x: f64| f16(x) as u64;
    fill(
        &mut shared,
        &a,
        |r, k| swizzled(r * 128 + 2 * k, 128),
        bits,
        2,
    );
    fill(
        &mut shared,
        &b,
        |k, n| 8192 + swizzled(n * 128 + 2 * k, 128),
        bits,
        2,
    );
    let mut p = Product::new(M64N8K16, 4, shared, desc(8192, 16, 1024, 1));
    p.a = Err(desc(32, 16, 1024, 1));
    p.immediates = "1, 1, 0, 0".into();
    let slice: Vec<Vec<f64>> = a.iter().map(|r| r[16..32].to_vec()).collect();
    assert_products(&p.run().unwrap(), &slice, &b, |_, _| 0.0);
}

#[test]
fn imm_trans_reads_mn_major_tiles() {
    // A as K rows of 64 M (M-major), B as K rows of 128 N in two 64-wide tiles 2048 bytes
    // apart (N-major, LBO 2048), each 128-byte rows swizzled; SBO 1024 between 8 K-rows.
    let (a, b) = pair(4, 16, 128);
    let mut shared = vec![0u8; 2048 + 4096];
    let bits = |x: f64| f16(x) as u64;
    fill(
        &mut shared,
        &a,
        |m, k| swizzled(k * 128 + 2 * m, 128),
        bits,
        2,
    );
    let b_at = |k: usize, n: usize| 2048 + (n / 64) * 2048 + swizzled(k * 128 + 2 * (n % 64), 128);
    fill(&mut shared, &b, b_at, bits, 2);
    let opcode = "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16";
    let mut p = Product::new(opcode, 64, shared, desc(2048, 2048, 1024, 1));
    p.a = Err(desc(0, 2048, 1024, 1));
    p.immediates = "1, 1, 1, 1".into();
    assert_products(&p.run().unwrap(), &a, &b, |_, _| 0.0);
}

#[test]
fn imm_scale_minus_one_negates_a_or_b() {
    let (a, b) = pair(5, 16, 8);
    let negated: Vec<Vec<f64>> = a.iter().map(|r| r.iter().map(|x| -x).collect()).collect();
    for (imm, a_sign) in [
        ("-1, 1, 0, 0", &negated),
        ("1, -1, 0, 0", &negated),
        ("-1, -1, 0, 0", &a),
    ] {
        let mut p = swizzled_product(M64N8K16, 4, &a, &b, f16);
        p.immediates = imm.into();
        assert_products(&p.run().unwrap(), a_sign, &b, |_, _| 0.0);
    }
}

#[test]
fn scale_d_true_accumulates_and_false_ignores_d() {
    let (a, b) = pair(6, 16, 8);
    for scale_d in [true, false] {
        let mut p = swizzled_product(M64N8K16, 4, &a, &b, f16);
        p.scale_d = scale_d;
        p.d = (0..THREADS)
            .map(|t| (0..4).map(|i| ((t * 4 + i) as f32).to_bits()).collect())
            .collect();
        let c = |t: usize, i: usize| if scale_d { (t * 4 + i) as f64 } else { 0.0 };
        assert_products(&p.run().unwrap(), &a, &b, c);
    }
}

#[test]
fn an_f16_d_packs_two_elements_to_a_register_rounded_once() {
    // Sums of 16 products of values in [-64, 64] exceed f16's 11 bits: one rounding of the
    // exact sum, with each of D's halves where scale-d is true, to nearest even.
    let mut rng = Rng(7);
    let (a, b) = (
        matrix(64, 16, &mut rng, -64, 64),
        matrix(16, 16, &mut rng, -64, 64),
    );
    let opcode = "wgmma.mma_async.sync.aligned.m64n16k16.f16.f16.f16";
    // (Integers below 2048: each exact in f16.)
    let c = |t: usize, i: usize| (t * 8 + i) as f64 - 300.0;
    for scale_d in [false, true] {
        let mut p = swizzled_product(opcode, 4, &a, &b, f16);
        p.scale_d = scale_d;
        p.d = (0..THREADS)
            .map(|t| {
                (0..4)
                    .map(|r| f16(c(t, 2 * r)) as u32 | (f16(c(t, 2 * r + 1)) as u32) << 16)
                    .collect()
            })
            .collect();
        let d = p.run().unwrap();
        for (t, regs) in d.iter().enumerate() {
            for i in 0..8 {
                let got = (regs[i / 2] >> (16 * (i % 2))) as u16;
                let exact = product(&a, &b, t, i) + if scale_d { c(t, i) } else { 0.0 };
                assert_eq!(got, f16(exact), "thread {t} element {i}: {exact}");
            }
        }
    }
}

#[test]
fn tf32_inputs_are_32_bit_elements_read_without_their_low_13_bits() {
    // m64n8k8: K-major 32-byte rows of 8 tf32, no swizzle: core matrices of 8 rows × 4.
    let mut rng = Rng(8);
    let (a, b) = (
        matrix(64, 8, &mut rng, -8, 8),
        matrix(8, 8, &mut rng, -8, 8),
    );
    // Set low mantissa bits that tf32 ignores.
    let tf32 = |x: f64| ((x as f32).to_bits() | (0x1FFF * (x != 0.0) as u32)) as u64;
    let core = |r: usize, k: usize| (r / 8) * 256 + (k / 4) * 128 + (r % 8) * 16 + (k % 4) * 4;
    let mut shared = vec![0u8; 2048 + 256];
    fill(&mut shared, &a, core, tf32, 4);
    fill(&mut shared, &b, |k, n| 2048 + core(n, k), tf32, 4);
    let opcode = "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32";
    let mut p = Product::new(opcode, 4, shared, desc(2048, 128, 256, 0));
    p.a = Err(desc(0, 128, 256, 0));
    p.immediates = "1, 1".into();
    assert_products(&p.run().unwrap(), &a, &b, |_, _| 0.0);
}

/// A (64 × 32) and B (32 × N) of bytes as K-major 128B-swizzled tiles (32 bytes of K per row).
fn byte_tiles(a: &[Vec<f64>], b: &[Vec<f64>], ea: fn(f64) -> u8, eb: fn(f64) -> u8) -> Vec<u8> {
    let mut shared = vec![0u8; 8192 + 1024 * b[0].len() / 8];
    fill(
        &mut shared,
        a,
        |r, k| swizzled(r * 128 + k, 128),
        |x| ea(x) as u64,
        1,
    );
    fill(
        &mut shared,
        b,
        |k, n| 8192 + swizzled(n * 128 + k, 128),
        |x| eb(x) as u64,
        1,
    );
    shared
}

#[test]
fn e4m3_times_e5m2_into_f32() {
    use ptxjit::frontend::checked::Rounding;
    use ptxjit::semantics::minifloat::Mini;
    let mut rng = Rng(9);
    let (a, b) = (
        matrix(64, 32, &mut rng, -8, 8),
        matrix(32, 8, &mut rng, -8, 8),
    );
    let e4m3 = |x: f64| Mini::E4m3.round(x, Rounding::Rn, false);
    let e5m2 = |x: f64| Mini::E5m2.round(x, Rounding::Rn, false);
    let opcode = "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2";
    let mut p = Product::new(
        opcode,
        4,
        byte_tiles(&a, &b, e4m3, e5m2),
        desc(8192, 16, 1024, 1),
    );
    p.a = Err(desc(0, 16, 1024, 1));
    p.immediates = "1, 1".into();
    assert_products(&p.run().unwrap(), &a, &b, |_, _| 0.0);
    // A from registers, four bytes a register (ISA: row g + 8·(r mod 2), column 4t + j +
    // 16·(r div 2) of warp w's 16 rows, element j of register r).
    p.a = Ok((0..THREADS)
        .map(|t| {
            let (w, g, tt) = (t / 32, t % 32 / 4, t % 4);
            std::array::from_fn(|r| {
                (0..4).fold(0, |reg, j| {
                    let (row, col) = (16 * w + g + 8 * (r % 2), 4 * tt + j + 16 * (r / 2));
                    reg | (e4m3(a[row][col]) as u32) << (8 * j)
                })
            })
        })
        .collect());
    assert_products(&p.run().unwrap(), &a, &b, |_, _| 0.0);
}

#[test]
fn s8_times_u8_into_s32_wraps_or_saturates_with_satfinite() {
    // Every product 127 × 255: 32 of them plus D overflow s32 when D starts near its top.
    let a = vec![vec![127.0; 32]; 64];
    let b = vec![vec![255.0; 8]; 32];
    let big = i32::MAX - 1000;
    let tiles = byte_tiles(&a, &b, |x| x as i8 as u8, |x| x as u8);
    for (sat, want) in [
        ("", (big as i64 + 32 * 127 * 255) as i32),
        (".satfinite", i32::MAX),
    ] {
        let opcode = format!("wgmma.mma_async.sync.aligned.m64n8k32{sat}.s32.s8.u8");
        let mut p = Product::new(&opcode, 4, tiles.clone(), desc(8192, 16, 1024, 1));
        p.a = Err(desc(0, 16, 1024, 1));
        p.scale_d = true;
        p.d = vec![vec![big as u32; 4]; THREADS];
        let d = p.run().unwrap();
        assert!(
            d.iter().flatten().all(|w| *w as i32 == want),
            "{sat}: {:?}",
            d[0]
        );
    }
}

fn small_product() -> Product {
    let (a, b) = pair(10, 16, 8);
    swizzled_product(M64N8K16, 4, &a, &b, f16)
}

#[test]
fn a_warpgroup_needs_all_128_threads() {
    let mut p = small_product();
    p.threads = 96;
    let err = p.run().unwrap_err();
    assert!(err.contains("warpgroup collective"), "{err}");
    assert!(err.contains("wgmma.mma_async"), "{err}");
}

#[test]
fn a_matrix_outside_shared_memory_is_an_illegal_address() {
    let mut p = small_product();
    p.b_desc = desc(16000, 16, 1024, 1);
    let err = p.run().unwrap_err();
    assert!(err.contains("illegal shared address"), "{err}");
}

#[test]
fn imm_scale_must_be_one_or_minus_one() {
    let mut p = small_product();
    p.immediates = "2, 1, 0, 0".into();
    let err = p.run().unwrap_err();
    assert!(
        err.contains("imm-scale-a is the immediate 1 or -1"),
        "{err}"
    );
}

#[test]
fn d_has_n_over_2_registers() {
    let mut p = small_product();
    p.nd = 3;
    p.d = vec![vec![0; 3]; THREADS];
    let err = p.run().unwrap_err();
    assert!(err.contains("takes 4 D registers, found 3"), "{err}");
}

#[test]
fn the_warps_of_a_warpgroup_give_the_same_descriptors() {
    let p = small_product();
    // Each warp moves B's start by its index × 16 bytes.
    let ptx = p.ptx().replace(
        "add.s64 %rd8, %rd8, %rd6;\n",
        "add.s64 %rd8, %rd8, %rd6;\nmov.u32 %r7, %tid.x;\nshr.u32 %r7, %r7, 5;\n\
         cvt.u64.u32 %rd11, %r7;\nadd.s64 %rd8, %rd8, %rd11;\n",
    );
    let err = p.run_ptx(&ptx).unwrap_err();
    assert!(err.contains("different matrix descriptors"), "{err}");
}

#[test]
fn an_f32_d_truncates_each_product_25_bits_below_the_largest_as_mma_sync_does() {
    // Every row of A starts 2^-24, 2^15, -2^15 and every column of B 2^-24, 2^15, 2^15: the
    // largest products are ±2^30, so every product is truncated to a multiple of 2^5
    // (`mma.sync`'s rule on an H200, taken for `wgmma`'s: inferred, not measured). The first,
    // 2^-48, is lost, and so are the low five bits of row r's last product, r (B's last row
    // is ones): D is r without them.
    let (tiny, big) = (2f64.powi(-24), 2f64.powi(15));
    let a: Vec<Vec<f64>> = (0..64)
        .map(|r| {
            let mut row = vec![0.0; 16];
            row[..3].copy_from_slice(&[tiny, big, -big]);
            row[15] = r as f64;
            row
        })
        .collect();
    let b: Vec<Vec<f64>> = (0..16)
        .map(|k| match k {
            0 => vec![tiny; 8],
            1 | 2 => vec![big; 8],
            15 => vec![1.0; 8],
            _ => vec![0.0; 8],
        })
        .collect();
    let p = swizzled_product(M64N8K16, 4, &a, &b, f16);
    let d = f32s(&p.run().unwrap());
    for (t, regs) in d.iter().enumerate() {
        for (i, got) in regs.iter().enumerate() {
            let (row, _) = d_at(t, i);
            assert_eq!(
                got.to_bits(),
                ((row & !31) as f64).to_bits(),
                "thread {t} element {i}"
            );
        }
    }
}
