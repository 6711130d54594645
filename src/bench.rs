//! The performance measurements behind `ptxjit bench` and `cargo bench`: each one a value, a
//! baseline measured in the same run, their ratio and the target for it.
//!
//! A module of the `ptxjit` binary and of `benches/ptxjit.rs`, not of the library: it uses
//! only the library's public interface, and what users link carries no harness.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use ptxjit::native::Isa;
use ptxjit::{
    Arg, CompileOptions, DeviceBuffer, Dim3, Kernel, LaunchConfig, Module, OptLevel, Schedule,
};

/// One line of the report.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub name: String,
    pub value: f64,
    pub unit: &'static str,
    pub baseline: f64,
    pub baseline_unit: &'static str,
    /// `value / baseline` (or the inverse for lower-is-better quantities, so that bigger is
    /// always better); `NaN` when a baseline could not be measured.
    pub ratio: f64,
    /// The ratio the measurement should reach; `None` for orientation-only lines.
    pub target: Option<f64>,
    pub note: String,
}

impl Measurement {
    pub fn passed(&self) -> Option<bool> {
        self.target.map(|t| self.ratio >= t)
    }

    /// `BENCH <name> value=<x> <unit> baseline=<y> <unit> ratio=<r> target=<t> PASS|MISS`
    pub fn line(&self) -> String {
        let verdict = match self.passed() {
            Some(true) => "PASS",
            Some(false) => "MISS",
            None => "INFO",
        };
        let target = self.target.map_or("none".to_string(), |t| format!("{t}"));
        let note = if self.note.is_empty() {
            String::new()
        } else {
            format!("  # {}", self.note)
        };
        format!(
            "BENCH {} value={} {} baseline={} {} ratio={:.3} target={} {}{}",
            self.name,
            fmt(self.value),
            self.unit,
            fmt(self.baseline),
            self.baseline_unit,
            self.ratio,
            target,
            verdict,
            note
        )
    }
}

fn fmt(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    }
}

/// Wall times of `runs` calls of `f` (after one warm-up call), fastest first.
fn sorted_times(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

/// Median wall time of `runs` calls of `f` (after one warm-up call).
fn median_time(runs: usize, f: impl FnMut()) -> Duration {
    let times = sorted_times(runs, f);
    times[times.len() / 2]
}

/// The median times of several measurements taken in turn, round after round, so that a
/// shared machine's changing load falls on each of them alike (each run once first).
fn interleaved_median_times(runs: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    fs.iter_mut().for_each(|f| f());
    let mut times = vec![Vec::with_capacity(runs); fs.len()];
    for _ in 0..runs {
        for (f, times) in fs.iter_mut().zip(&mut times) {
            let t = Instant::now();
            f();
            times.push(t.elapsed());
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect()
}

/// Launches `kernel` (by `launch`, blocks `block_x` threads wide) until it runs the last
/// form it may get, as once a user's kernel is hot (`LaneGroups::WhenHot` compiles the
/// group form once its launches have run a while, and the wide one, where the kernel has
/// one, after a longer while), for at most two seconds: what the speed lines measure.
fn make_hot(kernel: &Kernel, block_x: u32, mut launch: impl FnMut()) {
    let start = Instant::now();
    while !kernel.settled(block_x) && start.elapsed() < Duration::from_secs(2) {
        launch();
    }
}

pub struct Options {
    /// Smaller sizes: the whole run finishes in under a minute on 2 cores.
    pub quick: bool,
    /// Only these groups of [`GROUPS`] (all when empty).
    pub only: Vec<String>,
}

/// The measurement groups, in report order.
pub const GROUPS: [&str; 7] = [
    "streaming",
    "compute",
    "features",
    "interpreter",
    "compile",
    "launch",
    "scaling",
];

/// Runs everything and prints one `BENCH` line per measurement, then `N passed, N failed`
/// (orientation-only lines count as neither).
pub fn print_report(opts: &Options) {
    let (mut passed, mut failed) = (0, 0);
    for m in run(opts) {
        println!("{}", m.line());
        match m.passed() {
            Some(true) => passed += 1,
            Some(false) => failed += 1,
            None => {}
        }
    }
    println!("{passed} passed, {failed} failed");
}

/// Runs every measurement and returns the report lines in order.
pub fn run(opts: &Options) -> Vec<Measurement> {
    let groups: [fn(&Options) -> Vec<Measurement>; 7] = [
        streaming,
        compute,
        features,
        interpreter,
        compile_time,
        launch_latency,
        scaling,
    ];
    let wanted = |name: &str| opts.only.is_empty() || opts.only.iter().any(|g| g == name);
    GROUPS
        .iter()
        .zip(groups)
        .filter(|(name, _)| wanted(name))
        .flat_map(|(_, group)| group(opts))
        .collect()
}

// ---- 1. streaming ---------------------------------------------------------------------------

const AXPY: &str = include_str!("../examples/h2_axpy/h2_axpy.ptx");

/// f16x2 axpy (nvcc's `__hfma2`) over two operands vs a parallel memcpy; bytes touched per
/// second (axpy reads x and y and writes y; memcpy reads and writes one operand). The
/// operands are larger than the last-level caches of the machines measured (32 MiB), as a
/// quick run's too: where two operands half fit there, memcpy's speed swings 3× run to run.
fn streaming(_opts: &Options) -> Vec<Measurement> {
    let bytes = 64 << 20;
    let n = bytes / 4;
    let module = Module::from_ptx(AXPY).expect("the bundled example compiles");
    let kernel = module.kernel("h2_axpy").expect("h2_axpy");
    let x = DeviceBuffer::from_slice(&vec![0x3C00_3800u32; n]).expect("alloc");
    let y = DeviceBuffer::from_slice(&vec![0x3400_3000u32; n]).expect("alloc");
    let a = Arg::u32(0x3800_3C00);
    let threads = 256u32;
    // A grid-stride loop (64 blocks a worker), and one element a thread.
    let stride_blocks =
        (ptxjit_runtime::workers::count() as u32 * 64).min((n as u32).div_ceil(threads));
    let all_blocks = (n as u32).div_ceil(threads);
    let args = [Arg::u32(n as u32), a, Arg::buffer(&x), Arg::buffer(&y)];
    make_hot(&kernel, threads, || {
        kernel.launch(stride_blocks, threads, &args).expect("axpy")
    });
    let mut src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    src[0] = 2;
    let [t_axpy, t_each, t_copy] = interleaved_median_times(
        5,
        &mut [
            &mut || kernel.launch(stride_blocks, threads, &args).expect("axpy"),
            &mut || kernel.launch(all_blocks, threads, &args).expect("axpy"),
            &mut || {
                dst.par_chunks_mut(1 << 20)
                    .zip(src.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s))
            },
        ],
    )[..] else {
        unreachable!("three measurements")
    };
    let copy_gbs = 2.0 * bytes as f64 / t_copy.as_secs_f64() / 1e9;
    [
        ("stream_f16x2_axpy", t_axpy, "a grid-stride loop"),
        (
            "stream_f16x2_axpy_one_per_thread",
            t_each,
            "one element a thread",
        ),
    ]
    .into_iter()
    .map(|(name, t, shape)| {
        let gbs = 3.0 * bytes as f64 / t.as_secs_f64() / 1e9;
        Measurement {
            name: name.into(),
            value: gbs,
            unit: "GB/s",
            baseline: copy_gbs,
            baseline_unit: "GB/s(memcpy)",
            ratio: gbs / copy_gbs,
            target: Some(0.6),
            note: format!("{} MiB per operand, all cores, {shape}", bytes >> 20),
        }
    })
    .collect()
}

// ---- 2. compute-bound -----------------------------------------------------------------------

/// Each thread: `acc = fma(acc, x, c)` `iters` times; acc starts from the thread index.
fn chain_ptx(ty: &str) -> String {
    let (reg, mov) = match ty {
        "f16" => (
            "b16",
            "cvt.u16.u32 %acc, %g;\nand.b16 %acc, %acc, 0x03FF;\nor.b16 %acc, %acc, 0x3800;",
        ),
        "f16x2" => (
            "b32",
            "and.b32 %acc, %g, 0x03FF03FF;\nor.b32 %acc, %acc, 0x38003800;",
        ),
        _ => (
            "b32",
            "and.b32 %acc, %g, 0x007F03FF;\nor.b32 %acc, %acc, 0x3F003800;",
        ),
    };
    let op = match ty {
        "f16" => "fma.rn.ftz.f16",
        "f16x2" => "fma.rn.f16x2",
        _ => "fma.rn.bf16x2",
    };
    let (ld, st) = if reg == "b16" {
        ("ld.param.b16", "st.global.b16")
    } else {
        ("ld.param.b32", "st.global.b32")
    };
    let width = if reg == "b16" { 2 } else { 4 };
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry chain(.param .u64 out, .param .{reg} x, .param .{reg} c, .param .u32 iters)\n{{\n\
         .reg .{reg} %acc, %x, %c;\n.reg .b32 %i, %n, %g, %t, %nt;\n.reg .pred %p;\n.reg .b64 %rd<3>;\n\
         {ld} %x, [x];\n{ld} %c, [c];\nld.param.u32 %n, [iters];\n\
         mov.u32 %g, %ctaid.x;\nmov.u32 %nt, %ntid.x;\nmov.u32 %t, %tid.x;\nmad.lo.u32 %g, %g, %nt, %t;\n\
         {mov}\nmov.u32 %i, 0;\nLOOP:\n{op} %acc, %acc, %x, %c;\nadd.u32 %i, %i, 1;\nsetp.lt.u32 %p, %i, %n;\n@%p bra LOOP;\n\
         ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %g, {width};\nadd.s64 %rd1, %rd1, %rd2;\n{st} [%rd1], %acc;\nret;\n}}\n"
    )
}

/// `a × b + c` of halves rounded once, as a Rust user writes it exactly with the `half`
/// crate: the product is exact in f64 and the sum's error is known (Fast2Sum), so rounding
/// to odd (f64, then f32) keeps the bits a single rounding to the half needs; the last
/// rounding, from f32, is `half`'s own. (`half`'s `from_f64` would round twice.)
fn fma_rounded_once(a: f64, b: f64, c: f64) -> f32 {
    let p = a * b;
    let s = p + c;
    let e = if p.abs() >= c.abs() {
        (p - s) + c
    } else {
        (c - s) + p
    };
    let s = f64::from_bits(to_odd(s.to_bits(), e, s > 0.0, s.is_finite()));
    let t = s as f32;
    f32::from_bits(to_odd(t.to_bits() as u64, s - t as f64, s > 0.0, t.is_finite()) as u32)
}

/// The bits of a value rounded to odd, given its bits rounded to nearest, the rounding's
/// error `e` (exact − rounded) and the exact value's sign: the neighbour with an odd last bit
/// when inexact (from a zero, the smallest subnormal of that sign).
fn to_odd(bits: u64, e: f64, positive: bool, finite: bool) -> u64 {
    if e == 0.0 || bits & 1 == 1 || !finite {
        bits
    } else if (e > 0.0) == positive {
        bits + 1
    } else {
        bits - 1
    }
}

/// The same chain in plain Rust as a user writes it (exact, the `half` crate, rayon over all
/// cores); `fma.rn.ftz.f16` flushes subnormal inputs and results to zero.
fn native_chain(ty: &str, threads: usize, iters: u32, x: u32, c: u32) -> Vec<u32> {
    use half::{bf16, f16};
    let fma16 = |a: u16, b: u16, c: u16| -> u16 {
        let h = |v: u16| f16::from_bits(v).to_f64();
        f16::from_f32(fma_rounded_once(h(a), h(b), h(c))).to_bits()
    };
    let fmab16 = |a: u16, b: u16, c: u16| -> u16 {
        let h = |v: u16| bf16::from_bits(v).to_f64();
        bf16::from_f32(fma_rounded_once(h(a), h(b), h(c))).to_bits()
    };
    let pair = |fma: &dyn Fn(u16, u16, u16) -> u16, a: u32| -> u32 {
        let (mut lo, mut hi) = (a as u16, (a >> 16) as u16);
        for _ in 0..iters {
            lo = fma(lo, x as u16, c as u16);
            hi = fma(hi, (x >> 16) as u16, (c >> 16) as u16);
        }
        lo as u32 | (hi as u32) << 16
    };
    let ftz = |h: u16| if h & 0x7C00 == 0 { h & 0x8000 } else { h };
    (0..threads as u32)
        .into_par_iter()
        .map(|g| match ty {
            "f16" => {
                let mut acc = ((g as u16) & 0x03FF) | 0x3800;
                for _ in 0..iters {
                    acc = ftz(fma16(ftz(acc), ftz(x as u16), ftz(c as u16)));
                }
                acc as u32
            }
            "f16x2" => pair(&fma16, (g & 0x03FF03FF) | 0x38003800),
            _ => pair(&fmab16, (g & 0x007F03FF) | 0x3F003800),
        })
        .collect()
}

/// A C program compiled with `gcc -O3 -march=native -fopenmp` in a temporary folder (removed
/// when dropped), to run as often as a measurement needs.
struct CProgram {
    dir: std::path::PathBuf,
    exe: std::path::PathBuf,
}

impl CProgram {
    /// `source` compiled with `flags`; `None` without gcc or when it fails.
    fn build(name: &str, source: &str, flags: &[&str]) -> Option<CProgram> {
        let dir = std::env::temp_dir().join(format!("ptxjit-bench-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let program = CProgram {
            exe: dir.join(name),
            dir,
        };
        let src = program.dir.join(format!("{name}.c"));
        std::fs::write(&src, source).ok()?;
        let built = std::process::Command::new("gcc")
            .args(["-O3", "-march=native", "-fopenmp"])
            .args(flags)
            .arg("-o")
            .arg(&program.exe)
            .arg(&src)
            .output()
            .ok()?
            .status
            .success();
        built.then_some(program)
    }

    /// Runs it with `args`: its first output word (GFLOP/s) and the rest of its first line;
    /// `None` when it reports no result.
    fn run(&self, args: &[String]) -> Option<(f64, String)> {
        let out = std::process::Command::new(&self.exe)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text.lines().next()?;
        let (first, rest) = line.split_once(' ').unwrap_or((line, ""));
        let gflops: f64 = first.parse().ok()?;
        (gflops > 0.0).then(|| (gflops, rest.trim().to_string()))
    }
}

impl Drop for CProgram {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// gcc's `_Float16` chain (`a = a * x + c`, which gcc computes in f32 and narrows each step):
/// what C code with the compiler's half type gives.
fn gcc_chain_gflops(threads: usize, iters: u32) -> Option<f64> {
    let source = "#include <stdio.h>\n#include <stdlib.h>\n#include <omp.h>\n\
         int main(int argc, char **argv) {\n int n = atoi(argv[1]), iters = atoi(argv[2]);\n\
         _Float16 *acc = malloc(n * sizeof(_Float16)); _Float16 x = (_Float16)0.999f, c = (_Float16)0.001f;\n\
         for (int i = 0; i < n; i++) acc[i] = (_Float16)(0.5f + (i & 1023) / 2048.0f);\n\
         double best = 1e30;\n for (int r = 0; r < 5; r++) {\n  double t0 = omp_get_wtime();\n\
         #pragma omp parallel for simd\n  for (int i = 0; i < n; i++) { _Float16 a = acc[i]; for (int k = 0; k < iters; k++) a = a * x + c; acc[i] = a; }\n\
           double t = omp_get_wtime() - t0; if (t < best) best = t; }\n\
         double s = 0; for (int i = 0; i < n; i++) s += acc[i];\n\
         printf(\"%f %f\\n\", 2.0 * n * iters / best / 1e9, s);\n return 0;\n}\n";
    CProgram::build("chain", source, &[])?
        .run(&[threads.to_string(), iters.to_string()])
        .map(|(g, _)| g)
}

/// The machine's ceiling for a chain of half fmas: C with intrinsics, 16 independent chains
/// of vectors per thread, each step widening the halves (F16C), one f32 fma, and narrowing
/// back: a rounding more than `fma.rn` (so an upper bound, not the same bits). AVX-512 where
/// the CPU has it and `isa` allows it (16 halves a vector), else AVX2 + F16C + FMA (8).
/// Run with the halves and the steps, it prints its GFLOP/s and the instruction set it used
/// (`none` without either).
fn intrinsics_ceiling(isa: Isa) -> Option<CProgram> {
    let source = r#"#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#if defined(__AVX512F__)
#define ISA "avx512"
#define W 16
typedef __m512 vf; typedef __m256i vh;
#define LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define STORE(p, v) _mm256_storeu_si256((__m256i *)(p), v)
#define WIDEN _mm512_cvtph_ps
#define NARROW(v) _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)
#define FMA _mm512_fmadd_ps
#define SET1 _mm512_set1_ps
#elif defined(__F16C__) && defined(__FMA__) && defined(__AVX2__)
#define ISA "avx2+f16c+fma"
#define W 8
typedef __m256 vf; typedef __m128i vh;
#define LOAD(p) _mm_loadu_si128((const __m128i *)(p))
#define STORE(p, v) _mm_storeu_si128((__m128i *)(p), v)
#define WIDEN _mm256_cvtph_ps
#define NARROW(v) _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)
#define FMA _mm256_fmadd_ps
#define SET1 _mm256_set1_ps
#endif
int main(int argc, char **argv) {
#ifndef ISA
  printf("0 none\n"); return 0;
#else
  long n = atol(argv[1]); int iters = atoi(argv[2]);
  enum { CHAINS = 16, GROUP = CHAINS * W };
  n = n / GROUP * GROUP;
  unsigned short *acc = aligned_alloc(64, n * 2);
  for (long i = 0; i < n; i++) acc[i] = 0x3800 | (i & 0x3FF);
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = omp_get_wtime();
#pragma omp parallel for
    for (long g = 0; g < n; g += GROUP) {
      vf x = SET1(0.999f), c = SET1(0.001f);
      vh a[CHAINS];
      for (int k = 0; k < CHAINS; k++) a[k] = LOAD(acc + g + k * W);
      for (int it = 0; it < iters; it++)
        for (int k = 0; k < CHAINS; k++) a[k] = NARROW(FMA(WIDEN(a[k]), x, c));
      for (int k = 0; k < CHAINS; k++) STORE(acc + g + k * W, a[k]);
    }
    double t = omp_get_wtime() - t0; if (t < best) best = t;
  }
  unsigned long sum = 0; for (long i = 0; i < n; i++) sum += acc[i];
  printf("%f %s %lu\n", 2.0 * n * iters / best / 1e9, ISA, sum);
  return 0;
#endif
}
"#;
    let flags: &[&str] = match isa {
        Isa::Avx512 => &[],
        Isa::Avx2 => &["-mno-avx512f"],
    };
    CProgram::build("ceiling", source, flags)
}

/// Rounds of the f16x2 chain's launches and its ceiling's runs, taken in turn.
const CEILING_ROUNDS: usize = 3;

/// The fma chains of each half type in the JIT against exact Rust (bits compared), the f16x2
/// chain against the intrinsics ceiling of the instruction set its helpers used, and, on a
/// CPU with AVX-512, again with the AVX2 helpers against the AVX2 ceiling (what a CPU
/// without AVX-512 runs).
fn compute(opts: &Options) -> Vec<Measurement> {
    let iters = 256u32;
    let threads: usize = if opts.quick { 1 << 15 } else { 1 << 18 };
    let mut out = Vec::new();
    let gcc = gcc_chain_gflops(threads * 2, iters);
    let widest = ptxjit::native::widest();
    let mut forms = vec![(widest.unwrap_or(Isa::Avx2), CompileOptions::default())];
    if widest == Some(Isa::Avx512) {
        let avx2 = CompileOptions {
            native_helpers: Some(Isa::Avx2),
            ..CompileOptions::default()
        };
        forms.push((Isa::Avx2, avx2));
    }
    for (form, (isa, options)) in forms.iter().enumerate() {
        let types: &[&str] = if form == 0 {
            &["f16x2", "bf16x2", "f16"]
        } else {
            &["f16x2"]
        };
        let program = intrinsics_ceiling(*isa);
        // The ceiling's fastest run so far and its instruction set.
        let mut ceiling: Option<(f64, String)> = None;
        let prefix = if form == 0 { "" } else { "avx2_" };
        for &ty in types {
            // The f16x2 chain and its ceiling measured in turn, in rounds, each the fastest
            // of all its runs: on a shared host, a ratio of two measurements taken minutes
            // apart swings with the other tenants' load.
            let rounds = if ty == "f16x2" { CEILING_ROUNDS } else { 1 };
            let mut beside = || {
                let args = [(threads * 2).to_string(), iters.to_string()];
                let run = (ty == "f16x2")
                    .then(|| program.as_ref()?.run(&args))
                    .flatten();
                if let Some((g, rest)) = run
                    && ceiling.as_ref().is_none_or(|(best, _)| g > *best)
                {
                    ceiling = Some((g, rest.split(' ').next().unwrap_or("").to_string()));
                }
            };
            let (g_jit, g_median, g_native, agree) =
                chain_gflops(ty, options, threads, iters, rounds, &mut beside);
            out.push(Measurement {
                name: format!("fma_chain_{prefix}{ty}_vs_native_rust"),
                value: g_jit,
                unit: "GFLOP/s",
                baseline: g_native,
                baseline_unit: "GFLOP/s(rust)",
                ratio: g_jit / g_native,
                target: Some(10.0),
                note: if agree {
                    format!(
                        "bits agree; exact Rust with the half crate, rayon; the median launch \
                         {g_median:.1} GFLOP/s"
                    )
                } else {
                    "RESULTS DIFFER from exact Rust".into()
                },
            });
            if ty == "f16x2" {
                let (g, c_isa) = ceiling.clone().unwrap_or((f64::NAN, String::new()));
                out.push(Measurement {
                    name: format!("fma_chain_{prefix}f16x2_vs_intrinsics_ceiling"),
                    value: g_jit,
                    unit: "GFLOP/s",
                    baseline: g,
                    baseline_unit: "GFLOP/s(C)",
                    ratio: g_jit / g,
                    target: Some(0.5),
                    note: match ceiling {
                        Some(_) => format!(
                            "{isa:?} helpers; C intrinsics ({c_isa}), 16 vector chains a \
                             thread: widen, f32 fma, narrow; each the fastest of its runs \
                             (the median launch: {:.3})",
                            g_median / g
                        ),
                        None => "no gcc, or neither AVX-512 nor AVX2 + F16C + FMA".into(),
                    },
                });
            }
            if form == 0 && ty != "bf16x2" {
                let g = gcc.unwrap_or(f64::NAN);
                out.push(Measurement {
                    name: format!("fma_chain_{ty}_vs_gcc_float16"),
                    value: g_jit,
                    unit: "GFLOP/s",
                    baseline: g,
                    baseline_unit: "GFLOP/s(gcc)",
                    ratio: g_jit / g,
                    target: None,
                    note: if gcc.is_some() {
                        "orientation: gcc -O3 -march=native -fopenmp".into()
                    } else {
                        "gcc not available".into()
                    },
                });
            }
        }
    }
    out
}

/// The `ty` chain compiled with `options`, hot, and exact Rust on the same input: GFLOP/s of
/// the JIT's fastest launch (as the C baselines take the fastest of their five runs) and of
/// its median launch, over `rounds` rounds of nine launches, each after a run of `beside` (a
/// baseline measured in turn with them); of exact Rust; and whether their bits agree.
fn chain_gflops(
    ty: &str,
    options: &CompileOptions,
    threads: usize,
    iters: u32,
    rounds: usize,
    beside: &mut dyn FnMut(),
) -> (f64, f64, f64, bool) {
    let module = Module::from_ptx_named("chain", &chain_ptx(ty), options).expect("compiles");
    let kernel = module.kernel("chain").expect("chain");
    let (x, c) = match ty {
        "f16" => (0x3BFF, 0x1418),
        "f16x2" => (0x3BFF_3BFE, 0x1418_1419),
        _ => (0x3F7F_3F7E, 0x3A83_3A84),
    };
    let width = if ty == "f16" { 2 } else { 4 };
    let outbuf = DeviceBuffer::zeroed(threads * width).expect("alloc");
    let scalar = |v: u32| {
        if ty == "f16" {
            Arg::u16(v as u16)
        } else {
            Arg::u32(v)
        }
    };
    let args = [Arg::buffer(&outbuf), scalar(x), scalar(c), Arg::u32(iters)];
    let launch = || {
        kernel
            .launch((threads / 256) as u32, 256, &args)
            .expect("chain")
    };
    make_hot(&kernel, 256, launch);
    let mut times = Vec::new();
    for _ in 0..rounds {
        beside();
        times.extend(sorted_times(9, launch));
    }
    times.sort();
    let (t_jit, t_median) = (times[0], times[times.len() / 2]);
    let mut native = Vec::new();
    let t_native = median_time(1, || native = native_chain(ty, threads, iters, x, c));
    let jit: Vec<u32> = if ty == "f16" {
        outbuf.to_vec::<u16>().into_iter().map(u32::from).collect()
    } else {
        outbuf.to_vec::<u32>()
    };
    let flops_per_fma = if ty == "f16" { 2.0 } else { 4.0 };
    let flops = threads as f64 * iters as f64 * flops_per_fma;
    (
        flops / t_jit.as_secs_f64() / 1e9,
        flops / t_median.as_secs_f64() / 1e9,
        flops / t_native.as_secs_f64() / 1e9,
        jit == native,
    )
}

/// The default compilation against each of its speed features turned off, on the fma chain
/// (latency-bound) and the axpy (throughput-bound): the measurements behind keeping them.
/// The precompiled f16x2 helpers (`ptxjit::native`) vs the inline IR, lane groups
/// (`lower::lanes`) vs one thread at a time, and the address checks (`lower::confine`) vs
/// none (a ratio below 1: what confinement costs).
fn features(opts: &Options) -> Vec<Measurement> {
    let mut variants = vec![
        (
            "lane_groups",
            CompileOptions {
                lane_groups: ptxjit::LaneGroups::Off,
                ..CompileOptions::default()
            },
        ),
        (
            "confinement",
            CompileOptions {
                confine: false,
                ..CompileOptions::default()
            },
        ),
    ];
    if ptxjit::native::available() {
        variants.push((
            "f16x2_helpers",
            CompileOptions {
                native_helpers: None,
                ..CompileOptions::default()
            },
        ));
    }
    let time = |text: &str, entry: &str, o: &CompileOptions, grid: u32, args: &[Arg]| {
        let m = Module::from_ptx_named("features", text, o).expect("compiles");
        let k = m.kernel(entry).expect("kernel");
        make_hot(&k, 256, || k.launch(grid, 256, args).expect("launch"));
        median_time(3, || k.launch(grid, 256, args).expect("launch")).as_secs_f64()
    };
    let threads: usize = if opts.quick { 1 << 15 } else { 1 << 17 };
    let out = DeviceBuffer::zeroed(threads * 4).expect("alloc");
    let chain = chain_ptx("f16x2");
    let chain_args = [
        Arg::buffer(&out),
        Arg::u32(0x3BFF_3BFE),
        Arg::u32(0x1418_1419),
        Arg::u32(256),
    ];
    let grid = (threads / 256) as u32;
    let n = if opts.quick { 1 << 22 } else { 1 << 24 };
    let x = DeviceBuffer::from_slice(&vec![0x3C01_3801u32; n]).expect("alloc");
    let y = DeviceBuffer::from_slice(&vec![0x3403_3005u32; n]).expect("alloc");
    let axpy_args = [
        Arg::u32(n as u32),
        Arg::u32(0x3801_3C03),
        Arg::buffer(&x),
        Arg::buffer(&y),
    ];
    let default = CompileOptions::default();
    let mut out_lines = Vec::new();
    for (feature, without) in variants {
        for (kernel, text, entry, grid, args) in [
            ("fma_chain", chain.as_str(), "chain", grid, &chain_args[..]),
            ("axpy", AXPY, "h2_axpy", 512, &axpy_args[..]),
        ] {
            let t_without = time(text, entry, &without, grid, args);
            let t_with = time(text, entry, &default, grid, args);
            out_lines.push(Measurement {
                name: format!("{feature}_on_vs_off_{kernel}"),
                value: t_with * 1e3,
                unit: "ms(on)",
                baseline: t_without * 1e3,
                baseline_unit: "ms(off)",
                ratio: t_without / t_with,
                target: None,
                note: "ratio = time off / time on: > 1, the feature makes it faster".into(),
            });
        }
    }
    out_lines
}

// ---- 3. JIT vs interpreter ------------------------------------------------------------------

/// The same kernels in the JIT and in the reference interpreter: the f16x2 fma chain and the
/// axpy, each as threads per second.
fn interpreter(opts: &Options) -> Vec<Measurement> {
    let threads: u32 = if opts.quick { 2048 } else { 8192 };
    let config = LaunchConfig {
        grid: Dim3::new(threads / 256, 1, 1),
        block: Dim3::new(256, 1, 1),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative: false,
    };
    // One kernel in both executors: `work` items per launch, reported per second.
    let compare = |name: &str,
                   text: &str,
                   entry: &str,
                   args: &[Arg],
                   work: f64,
                   unit: &'static str,
                   base_unit: &'static str,
                   note: &str| {
        let jit = Module::from_ptx(text).expect("kernel compiles");
        let kernel = jit.kernel(entry).expect("kernel");
        let interp =
            ptxjit::interp::Interpreter::from_ptx("bench.ptx", text).expect("kernel checks");
        make_hot(&kernel, config.block.x, || {
            kernel.launch_with(&config, args).expect("jit")
        });
        let t_jit =
            median_time(3, || kernel.launch_with(&config, args).expect("jit")).as_secs_f64();
        let t_int = median_time(1, || {
            interp.launch(entry, &config, args).expect("interpreter")
        })
        .as_secs_f64();
        Measurement {
            name: name.into(),
            value: work / t_jit / 1e6,
            unit,
            baseline: work / t_int / 1e6,
            baseline_unit: base_unit,
            ratio: t_int / t_jit,
            target: Some(100.0),
            note: note.into(),
        }
    };
    let buf = DeviceBuffer::zeroed(threads as usize * 4).expect("alloc");
    let chain_args = [
        Arg::buffer(&buf),
        Arg::u32(0x3BFF_3BFE),
        Arg::u32(0x1418_1419),
        Arg::u32(64),
    ];
    let n = threads as usize * 16;
    let x = DeviceBuffer::from_slice(&vec![0x3C00_3800u32; n]).expect("alloc");
    let y = DeviceBuffer::from_slice(&vec![0x3400_3000u32; n]).expect("alloc");
    let axpy_args = [
        Arg::u32(n as u32),
        Arg::u32(0x3800_3C00),
        Arg::buffer(&x),
        Arg::buffer(&y),
    ];
    vec![
        compare(
            "jit_vs_interpreter_fma_chain",
            &chain_ptx("f16x2"),
            "chain",
            &chain_args,
            threads as f64,
            "Mthreads/s",
            "Mthreads/s(interp)",
            "64 fma.rn.f16x2 per thread",
        ),
        compare(
            "jit_vs_interpreter_axpy",
            AXPY,
            "h2_axpy",
            &axpy_args,
            n as f64,
            "Melem/s",
            "Melem/s(interp)",
            "interpreter on one core, JIT on all",
        ),
    ]
}

// ---- 4. compile time ------------------------------------------------------------------------

/// A straight-line kernel of about `n` instructions mixing half, float and integer work.
pub fn generated_kernel(n: usize, salt: usize) -> String {
    let mut body = String::new();
    let ops = [
        "fma.rn.f16x2 %h{a}, %h{b}, %h{c}, %h{a};",
        "add.s32 %r{a}, %r{b}, %r{c};",
        "mul.f32 %f{a}, %f{b}, %f{c};",
        "cvt.rn.f16.f32 %s{a}, %f{b};",
        "max.f16 %s{b}, %s{a}, %s{c};",
        "mad.lo.s32 %r{a}, %r{b}, %r{c}, %r{a};",
        "cvt.f32.f16 %f{c}, %s{b};",
        "sub.bf16x2 %h{b}, %h{c}, %h{a};",
    ];
    for i in 0..n.saturating_sub(12) {
        let (a, b, c) = (i % 16, (i * 7 + 3) % 16, (i * 11 + 5) % 16);
        body += &ops[i % ops.len()]
            .replace("{a}", &a.to_string())
            .replace("{b}", &b.to_string())
            .replace("{c}", &c.to_string());
        body.push('\n');
    }
    format!(
        "// generated {n} {salt}\n.version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry gen(.param .u64 out)\n{{\n.reg .b32 %h<16>, %r<16>;\n.reg .f32 %f<16>;\n.reg .b16 %s<16>;\n.reg .b64 %rd<4>;\n\
         mov.u32 %r0, %tid.x;\nmov.b32 %h0, %r0;\ncvt.rn.f32.u32 %f0, %r0;\ncvt.u16.u32 %s0, %r0;\n\
         {body}ld.param.u64 %rd1, [out];\nst.global.u32 [%rd1], %h1;\nst.global.u32 [%rd1+4], %r1;\nst.global.f32 [%rd1+8], %f1;\nst.global.b16 [%rd1+12], %s1;\nret;\n}}\n"
    )
}

/// `ptxas`: `$PTXAS`, or the first on `PATH` (the PyPI package nvidia-cuda-nvcc ships one
/// under `site-packages/nvidia/cu13/bin`).
fn find_ptxas() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

fn compile_time(opts: &Options) -> Vec<Measurement> {
    let sizes: &[usize] = if opts.quick {
        &[100, 1000]
    } else {
        &[100, 1000, 10_000]
    };
    let ptxas = find_ptxas();
    let mut out = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let text = generated_kernel(n, i);
        let mut per_inst = [0f64; 2];
        let mut shares = String::new();
        for (k, level) in [OptLevel::None, OptLevel::Speed].into_iter().enumerate() {
            // A fresh name each time: the module cache must not answer.
            let mut best = f64::INFINITY;
            for r in 0..3 {
                let name = format!("gen{n}-{k}-{r}-{}", Instant::now().elapsed().as_nanos());
                let t = Instant::now();
                let m = Module::from_ptx_named(
                    &name,
                    &text,
                    &CompileOptions {
                        opt_level: level,
                        keep_clif: false,
                        ..CompileOptions::default()
                    },
                )
                .expect("generated kernel compiles");
                let secs = t.elapsed().as_secs_f64();
                if secs < best {
                    best = secs;
                    let tm = m.timings();
                    let total = (tm.parse_check + tm.lower + tm.codegen).as_secs_f64();
                    shares = format!(
                        "parse+check {:.0}%, lowering {:.0}%, cranelift {:.0}%",
                        100.0 * tm.parse_check.as_secs_f64() / total,
                        100.0 * tm.lower.as_secs_f64() / total,
                        100.0 * tm.codegen.as_secs_f64() / total
                    );
                }
            }
            per_inst[k] = best * 1e6 / n as f64;
        }
        out.push(Measurement {
            name: format!("compile_{n}_insts_speed"),
            value: per_inst[1],
            unit: "us/inst",
            baseline: 20.0,
            baseline_unit: "us/inst(target)",
            ratio: 20.0 / per_inst[1],
            target: Some(1.0),
            note: format!("opt none: {:.2} us/inst; at speed: {shares}", per_inst[0]),
        });
        if ptxas.is_none() && i == 0 {
            out.push(Measurement {
                name: "compile_vs_ptxas".into(),
                value: f64::NAN,
                unit: "ms",
                baseline: f64::NAN,
                baseline_unit: "ms(ptxas)",
                ratio: f64::NAN,
                target: None,
                note: "ptxas not found: set PTXAS or put it on PATH".into(),
            });
        }
        if let Some(ptxas) = &ptxas {
            let file =
                std::env::temp_dir().join(format!("ptxjit-gen-{}-{n}.ptx", std::process::id()));
            std::fs::write(&file, &text).expect("temp file");
            let t = median_time(1, || {
                std::process::Command::new(ptxas)
                    .args(["-arch=sm_90", "-o", "/dev/null"])
                    .arg(&file)
                    .output()
                    .expect("ptxas runs");
            });
            std::fs::remove_file(&file).ok();
            let ours = per_inst[1] * n as f64 / 1e6;
            out.push(Measurement {
                name: format!("compile_{n}_insts_vs_ptxas"),
                value: ours * 1e3,
                unit: "ms",
                baseline: t.as_secs_f64() * 1e3,
                baseline_unit: "ms(ptxas)",
                ratio: t.as_secs_f64() / ours,
                target: Some(10.0),
                note: String::new(),
            });
        }
    }
    out.extend(group_tier_first_launch(opts));
    // The cache: compiling the same text again.
    let text = generated_kernel(1000, 99);
    Module::from_ptx(&text).expect("compiles");
    let t = median_time(5, || {
        Module::from_ptx(&text).expect("cached");
    });
    out.push(Measurement {
        name: "compile_cached_1000_insts".into(),
        value: t.as_secs_f64() * 1e6,
        unit: "us",
        baseline: 1000.0,
        baseline_unit: "us(target)",
        ratio: 1000.0 / (t.as_secs_f64() * 1e6),
        target: Some(1.0),
        note: "second Module::from_ptx of the same text".into(),
    });
    out
}

/// Rounds of [`group_tier_first_launch`]'s fresh compiles and first launches.
const TIER_ROUNDS: usize = 5;

/// What the two-tier rule (`LaneGroups::WhenHot`: the lane-group form compiled in a launch
/// once the kernel has run as long as that compile is expected to take, or once the rest of
/// the launch promises to repay it) costs a kernel's first launch, against the better of the
/// two fixed choices for that launch: one thread at a time, or the lane-group form compiled
/// with the module. Each is the time from the PTX text to the end of one launch (the fastest
/// of [`TIER_ROUNDS`] fresh compiles, taken in turn with the other forms'), over launch
/// sizes from far below to far above where the group form pays; the line is the worst size.
/// The bound is 2: a ski rental's, when the compile's estimate is right. For the axpy (one
/// element a thread: little work a thread) and the fma chain (256 fmas a thread).
fn group_tier_first_launch(opts: &Options) -> Vec<Measurement> {
    let axpy_sizes: &[u32] = if opts.quick {
        &[1 << 13, 1 << 16, 1 << 19, 1 << 21]
    } else {
        &[1 << 13, 1 << 16, 1 << 19, 1 << 22]
    };
    let chain_sizes: &[u32] = if opts.quick {
        &[1 << 9, 1 << 11, 1 << 13, 1 << 15]
    } else {
        &[1 << 9, 1 << 11, 1 << 13, 1 << 16]
    };
    let axpy_n = *axpy_sizes.last().expect("sizes");
    let chain_n = *chain_sizes.last().expect("sizes");
    let x = DeviceBuffer::from_slice(&vec![0x3C01_3801u32; axpy_n as usize]).expect("alloc");
    let y = DeviceBuffer::from_slice(&vec![0x3403_3005u32; axpy_n as usize]).expect("alloc");
    let out = DeviceBuffer::zeroed(chain_n as usize * 4).expect("alloc");
    let axpy_args = |n: u32| {
        vec![
            Arg::u32(n),
            Arg::u32(0x3801_3C03),
            Arg::buffer(&x),
            Arg::buffer(&y),
        ]
    };
    let chain_args = |_| {
        vec![
            Arg::buffer(&out),
            Arg::u32(0x3BFF_3BFE),
            Arg::u32(0x1418_1419),
            Arg::u32(256),
        ]
    };
    let chain = chain_ptx("f16x2");
    type Args<'a> = &'a dyn Fn(u32) -> Vec<Arg>;
    let kernels: [(&str, &str, &str, &[u32], Args); 2] = [
        ("axpy", AXPY, "h2_axpy", axpy_sizes, &axpy_args),
        ("fma_chain", &chain, "chain", chain_sizes, &chain_args),
    ];
    let mut lines = Vec::new();
    for (kernel, text, entry, sizes, args) in kernels {
        // A fresh compile and first launch of `threads` threads.
        let first_launch = |lane_groups, threads: u32| {
            let name = format!("tier-{kernel}-{lane_groups:?}-{:?}", Instant::now());
            let opts = CompileOptions {
                lane_groups,
                ..CompileOptions::default()
            };
            let t = Instant::now();
            let m = Module::from_ptx_named(&name, text, &opts).expect("compiles");
            let k = m.kernel(entry).expect("kernel");
            k.launch(threads / 256, 256, &args(threads))
                .expect("launch");
            t.elapsed().as_secs_f64()
        };
        // Each form's fastest at each size over the rounds, the three forms in turn
        // at every size of a round: so all see the same moments of a shared host, and a
        // size's rounds lie a whole round apart. (A 2-vCPU host sometimes runs one worker
        // for a tenth of a second: the one-thread form's launch then takes twice as long,
        // the group form's, all compile, hardly longer; three rounds in a row sometimes all
        // fell in such a spell.)
        let mut fastest = vec![[f64::INFINITY; 3]; sizes.len()];
        for _ in 0..TIER_ROUNDS {
            for (&n, best) in sizes.iter().zip(&mut fastest) {
                let forms = [
                    ptxjit::LaneGroups::Off,
                    ptxjit::LaneGroups::Always,
                    ptxjit::LaneGroups::WhenHot,
                ];
                for (form, best) in forms.into_iter().zip(best) {
                    *best = best.min(first_launch(form, n));
                }
            }
        }
        let (mut worst, mut at, mut vs_off) = (0.0, String::new(), 0.0f64);
        for (&n, &[off, always, hot]) in sizes.iter().zip(&fastest) {
            vs_off = vs_off.max(hot / off);
            let loss = hot / off.min(always);
            if loss > worst {
                worst = loss;
                at = format!(
                    "worst at {n} threads: {:.2} ms vs one thread {:.2}, group form {:.2}",
                    hot * 1e3,
                    off * 1e3,
                    always * 1e3
                );
            }
        }
        lines.push(Measurement {
            name: format!("group_tier_first_launch_vs_best_form_{kernel}"),
            value: worst,
            unit: "x(worst size)",
            baseline: 2.0,
            baseline_unit: "x(bound)",
            ratio: 2.0 / worst,
            target: Some(1.0),
            note: format!(
                "{at}; sizes {}..{} threads; worst vs one thread alone {vs_off:.2}x",
                sizes[0],
                sizes[sizes.len() - 1]
            ),
        });
    }
    lines
}

// ---- 5. launch latency ----------------------------------------------------------------------

fn launch_latency(opts: &Options) -> Vec<Measurement> {
    let module = Module::from_ptx(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry empty()\n{\nret;\n}\n",
    )
    .expect("empty kernel");
    let kernel = module.kernel("empty").expect("empty");
    let launches = if opts.quick { 2_000 } else { 10_000 };
    let mut times: Vec<f64> = (0..launches)
        .map(|_| {
            let t = Instant::now();
            kernel.launch(1, 32, &[]).expect("launch");
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    vec![Measurement {
        name: "launch_latency_empty_1x32".into(),
        value: median,
        unit: "us",
        baseline: 1.0,
        baseline_unit: "us(target)",
        ratio: 1.0 / median,
        target: Some(1.0),
        note: format!("median of {launches}"),
    }]
}

// ---- 6. scaling -----------------------------------------------------------------------------

/// Block i of n loops ⌊17i / n⌋ × 64 times over some f32 math: a ramp, so that the
/// grid's later part holds most of its work, which a static split of the blocks among the
/// workers leaves to the last ones (with a pattern that repeats along the grid, as until
/// session 41, a static split was as balanced as stealing and the line compared equals).
const UNEVEN: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry uneven(.param .u64 out)\n{\n.reg .b32 %r<8>;\n.reg .f32 %f<4>;\n.reg .pred %p;\n.reg .b64 %rd<4>;\n\
    mov.u32 %r1, %ctaid.x;\nmov.u32 %r7, %nctaid.x;\nmul.lo.u32 %r2, %r1, 17;\ndiv.u32 %r2, %r2, %r7;\nshl.b32 %r2, %r2, 6;\nmov.u32 %r3, 0;\nmov.u32 %r4, %tid.x;\ncvt.rn.f32.u32 %f1, %r4;\n\
    setp.eq.u32 %p, %r2, 0;\n@%p bra DONE;\nLOOP:\nfma.rn.f32 %f1, %f1, 0f3F7FF000, 0f3A83126F;\nadd.u32 %r3, %r3, 1;\nsetp.lt.u32 %p, %r3, %r2;\n@%p bra LOOP;\n\
    DONE:\nld.param.u64 %rd1, [out];\nmov.u32 %r5, %ntid.x;\nmad.lo.u32 %r6, %r1, %r5, %r4;\nmul.wide.u32 %rd2, %r6, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.f32 [%rd3], %f1;\nret;\n}\n";

fn scaling(opts: &Options) -> Vec<Measurement> {
    let module = Module::from_ptx(UNEVEN).expect("uneven kernel");
    let kernel = module.kernel("uneven").expect("uneven");
    // Grown with the kernel's speed (lane groups), so that the pool's fixed costs stay small
    // beside the work it schedules.
    let blocks: u32 = if opts.quick { 4096 } else { 16384 };
    let out = DeviceBuffer::zeroed(blocks as usize * 64 * 4).expect("alloc");
    let config = LaunchConfig {
        grid: Dim3::new(blocks, 1, 1),
        block: Dim3::new(64, 1, 1),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative: false,
    };
    let args = [Arg::buffer(&out)];
    make_hot(&kernel, 64, || {
        kernel.launch_with(&config, &args).expect("launch")
    });
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = |threads: usize| ptxjit_runtime::workers::pool(threads).expect("pool");
    let setups = [
        (pool(1), Schedule::WorkStealing),
        (pool(workers), Schedule::WorkStealing),
        (pool(workers), Schedule::Static),
    ];
    // The three setups take turns, run after run, so that a noisy neighbour slows all of
    // them alike; each gets the median of its runs.
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    for run in 0..8 {
        for (i, (pool, schedule)) in setups.iter().enumerate() {
            let t = Instant::now();
            pool.install(|| {
                kernel
                    .launch_scheduled(&config, &args, *schedule)
                    .expect("launch")
            });
            if run > 0 {
                times[i].push(t.elapsed().as_secs_f64());
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t1, tp, ts) = (
        median(&mut times[0]),
        median(&mut times[1]),
        median(&mut times[2]),
    );
    let efficiency = t1 / (workers as f64 * tp);
    vec![
        Measurement {
            name: "scaling_efficiency_uneven_blocks".into(),
            value: efficiency,
            unit: "",
            baseline: 0.9,
            baseline_unit: "(target)",
            ratio: efficiency,
            target: Some(0.9),
            note: format!(
                "{workers} workers: 1 worker {:.1} ms, all {:.1} ms",
                t1 * 1e3,
                tp * 1e3
            ),
        },
        Measurement {
            name: "scaling_work_stealing_vs_static_split".into(),
            value: tp * 1e3,
            unit: "ms",
            baseline: ts * 1e3,
            baseline_unit: "ms(static)",
            ratio: ts / tp,
            target: Some(1.0),
            note: String::new(),
        },
    ]
}

#[cfg(test)]
mod tests {
    // (Unused where `cargo bench`'s harness-less target drops the tests.)
    #[allow(unused_imports)]
    use super::*;

    #[test]
    fn the_users_exact_fma_rounds_once_as_the_reference_does() {
        use half::{bf16, f16};
        use ptxjit::semantics::half as reference;
        // Every exponent pairing the chain can meet, and the cases where a sum needs more
        // bits than an f64 has (a product far above or below the addend).
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng as u16
        };
        for _ in 0..200_000 {
            let (a, b, c) = (next() & 0x7BFF, next(), next());
            let h = |v: u16| f16::from_bits(v).to_f64();
            let ours = f16::from_f32(fma_rounded_once(h(a), h(b), h(c))).to_bits();
            let finite = |v: u16| v & 0x7C00 != 0x7C00;
            if finite(a) && finite(b) && finite(c) && finite(ours) {
                assert_eq!(
                    ours,
                    reference::fma_f16(a, b, c),
                    "f16 {a:04x} {b:04x} {c:04x}"
                );
            }
            let (a, b, c) = (a & 0x7F7F, b, c);
            let h = |v: u16| bf16::from_bits(v).to_f64();
            let ours = bf16::from_f32(fma_rounded_once(h(a), h(b), h(c))).to_bits();
            let finite = |v: u16| v & 0x7F80 != 0x7F80;
            if finite(a) && finite(b) && finite(c) && finite(ours) {
                assert_eq!(
                    ours,
                    reference::fma_bf16(a, b, c),
                    "bf16 {a:04x} {b:04x} {c:04x}"
                );
            }
        }
    }

    #[test]
    fn generated_kernels_compile_and_have_the_asked_size() {
        let text = generated_kernel(100, 0);
        let m = Module::from_ptx(&text).unwrap();
        assert_eq!(m.kernel_names(), vec!["gen".to_string()]);
        assert!(text.lines().filter(|l| l.ends_with(';')).count() >= 95);
    }

    #[test]
    fn jit_chain_agrees_with_the_native_reference() {
        for (ty, x, c) in [
            ("f16x2", 0x3BFF_3BFEu32, 0x1418_1419u32),
            ("bf16x2", 0x3F7F_3F7E, 0x3A83_3A84),
            ("f16", 0x3BFF, 0x1418),
        ] {
            let module = Module::from_ptx(&chain_ptx(ty)).unwrap();
            let width = if ty == "f16" { 2 } else { 4 };
            let out = DeviceBuffer::zeroed(512 * width).unwrap();
            let scalar = |v: u32| {
                if ty == "f16" {
                    Arg::u16(v as u16)
                } else {
                    Arg::u32(v)
                }
            };
            module
                .kernel("chain")
                .unwrap()
                .launch(
                    2,
                    256,
                    &[Arg::buffer(&out), scalar(x), scalar(c), Arg::u32(40)],
                )
                .unwrap();
            let jit: Vec<u32> = if ty == "f16" {
                out.to_vec::<u16>().into_iter().map(u32::from).collect()
            } else {
                out.to_vec::<u32>()
            };
            assert_eq!(jit, native_chain(ty, 512, 40, x, c), "{ty}");
        }
    }
}
