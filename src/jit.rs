//! The JIT: compiles every function of a checked module with Cranelift and owns the code,
//! the storage of module-scope variables, and the layout of shared memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use cranelift_module::{FuncId as ClifFuncId, Linkage, Module as _, default_libcall_names};
use ptxjit_runtime::{BlockFn, DeviceBuffer};

use crate::error::{Diagnostic, Error, Result};
use crate::frontend::ast::{FunctionKind, StateSpace};
use crate::frontend::{calls, checked};
use crate::lower::{self, Callees, Env, Translator};
use crate::tier::TierForm;

/// How hard Cranelift optimizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptLevel {
    None,
    #[default]
    Speed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    pub opt_level: OptLevel,
    /// Keep each function's Cranelift IR as text (for `ptxjit clif`).
    pub keep_clif: bool,
    /// The widest instruction set the precompiled half helpers (`crate::native`) may use,
    /// bounded by what the CPU has; `None`: inline IR only. Default: AVX-512, or
    /// `PTXJIT_HELPERS=avx2|off` (to run as on a CPU without AVX-512, or without helpers).
    /// AVX2 caps the code Cranelift generates as well.
    pub native_helpers: Option<crate::native::Isa>,
    /// When plain kernels run their threads in lane groups (`lower::lanes`).
    pub lane_groups: LaneGroups,
    /// Check every address a kernel computes (`lower::confine`): an access outside device
    /// memory ends the launch with an error instead of touching host memory. Off only for
    /// trusted kernels that are given host pointers.
    pub confine: bool,
    /// Bytes a module's `.global` and `.const` variables may declare in all; default
    /// [`MAX_MODULE_DATA_BYTES`], or `PTXJIT_MAX_MODULE_DATA` when that is a number of bytes.
    pub max_module_data: u64,
    /// How the f32 approximate instructions compute (`ex2 lg2 sin cos tanh rcp rsqrt
    /// .approx`, `div.approx`, `div.full`).
    pub approximations: Approximations,
}

/// How the f32 approximate instructions compute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Approximations {
    /// As an H200 runs them (`semantics::mufu`): its instruction sequences around the
    /// multi-function unit, which `sin.approx` of a large argument shows most (the GPU's
    /// reduction to turns, rounded toward zero, is far from the true sine).
    #[default]
    Gpu,
    /// Correctly rounded (the host's libm, IEEE division), within the ISA's error bounds: what
    /// GPU Ocelot's emulator computes, and what its clients' tests expect (tinygrad's mock
    /// GPU compares `sin` of 1e5 and 1e6 with torch's). The C library's `ptx_run` uses it.
    Accurate,
}

/// The default bound on a module's `.global` and `.const` bytes. Storage is committed only
/// where a kernel touches it (or an initializer fills it), so the bound is on what a module
/// can make the host commit, not on what loading it costs.
pub const MAX_MODULE_DATA_BYTES: u64 = 4 << 30;

/// `PTXJIT_MAX_MODULE_DATA=BYTES`, read once; unset or not a number: the default.
fn max_module_data_default() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("PTXJIT_MAX_MODULE_DATA")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(MAX_MODULE_DATA_BYTES)
    })
}

/// When a kernel gets its lane-group form: faster to run, 2.5–21 times slower to compile
/// (the corpus's kernels).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LaneGroups {
    /// Never: one thread at a time.
    Off,
    /// Compiled by a worker of a launch, while the others go on, once the kernel has run in
    /// its one-thread form for as long as that compile is expected to take, or once the
    /// rest of the launch promises to repay it; the blocks not yet started then switch to
    /// it (the rule: `src/tier.rs`). Two tiers, so a module compiles fast, the kernels that
    /// run much run fast, and a launch that would not repay the second compile never waits
    /// for it. A third for the kernels that `lower::lanes::widens`: groups of 128 or 256
    /// lanes, once the 64-lane form has run sixteen times as long as their compile is
    /// expected to take.
    #[default]
    WhenHot,
    /// Compiled with the module, for blocks of any width (groups of up to 32 lanes).
    Always,
    /// Compiled with the module for launches of blocks this many threads wide in x: groups
    /// of 64 lanes where it is a multiple of 64, of 256 or 128 where it is a multiple of that
    /// and the kernel `widens` (`lower::lanes::width`). A launch of blocks whose width the
    /// group's does not divide runs one thread at a time.
    AlwaysForBlockX(u32),
}

/// `PTXJIT_HELPERS=avx512|avx2|off`, read once; unset or not one of those: AVX-512.
fn native_helpers_default() -> Option<crate::native::Isa> {
    static WIDEST: OnceLock<Option<crate::native::Isa>> = OnceLock::new();
    *WIDEST.get_or_init(|| {
        std::env::var("PTXJIT_HELPERS")
            .ok()
            .and_then(|v| crate::native::Isa::parse(&v))
            .unwrap_or(Some(crate::native::Isa::Avx512))
    })
}

/// The least a kernel's lane-group form has taken to compile, in multiples of its one-thread
/// form's compile: 3.6 over the corpus and the compilers' kernels (up to 75, for
/// `tanh.approx`'s vector form). The tier's first guess, before the form is sized
/// (`CompiledKernel::group_compile_estimate`).
pub const GROUP_COMPILE_FLOOR: u32 = 3;

/// A lane-group form's compile time per Cranelift instruction, in multiples of its kernel's
/// one-thread form's: 0.27–0.98 over the corpus and the compilers' kernels, median 0.6 (the
/// whole compile's ratio ranges over 3.6–75, its instruction count's over 5–54).
pub const GROUP_COMPILE_PER_INSTRUCTION: f64 = 0.6;

/// A wide form's compile time (`lower::lanes::WIDE`), in multiples of its kernel's 64-lane
/// form's, for each 64 lanes a group past the first (its vector code is emitted a vector at
/// a time): the fma chains' (f16x2, bf16x2, f16) module compiles for blocks of 64, 128 and
/// 256 took 1.3–1.46 times as long at 128 lanes, 1.93–2.2 at 256, so 0.3–0.46 a 64 lanes;
/// rounded up.
pub const WIDE_COMPILE_PER_64_LANES: f64 = 0.5;

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions {
            opt_level: OptLevel::Speed,
            keep_clif: false,
            native_helpers: native_helpers_default(),
            lane_groups: LaneGroups::WhenHot,
            confine: true,
            max_module_data: max_module_data_default(),
            approximations: Approximations::Gpu,
        }
    }
}

/// Address space reserved for one compiled module's code and data (pages are committed only
/// as they are used): far more than the largest kernels need.
const JIT_RESERVE_BYTES: usize = 256 << 20;

/// Time spent in each compile stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct CompileTimings {
    pub parse_check: Duration,
    /// PTX → Cranelift IR.
    pub lower: Duration,
    /// Cranelift: optimization, register allocation, emission, linking.
    pub codegen: Duration,
}

/// Functions compiled code may call, by symbol name: (name, address, params, returns).
fn helpers() -> Vec<(&'static str, *const u8, Vec<types::Type>, Vec<types::Type>)> {
    let f32_fn = |name, f: extern "C" fn(f32) -> f32| {
        (name, f as *const u8, vec![types::F32], vec![types::F32])
    };
    vec![
        f32_fn("ptxjit_exp2f", helpers::exp2f),
        f32_fn("ptxjit_log2f", helpers::log2f),
        f32_fn("ptxjit_sinf", helpers::sinf),
        f32_fn("ptxjit_cosf", helpers::cosf),
        f32_fn("ptxjit_tanhf", helpers::tanhf),
        f32_fn("ptxjit_exp2f_libm", helpers::exp2f_libm),
        f32_fn("ptxjit_log2f_libm", helpers::log2f_libm),
        f32_fn("ptxjit_sinf_libm", helpers::sinf_libm),
        f32_fn("ptxjit_cosf_libm", helpers::cosf_libm),
        f32_fn("ptxjit_tanhf_libm", helpers::tanhf_libm),
        (
            "ptxjit_poll_upgrade",
            ptxjit_runtime::ptxjit_poll_upgrade as *const u8,
            vec![types::I64, types::I32],
            vec![types::I32],
        ),
        (
            "ptxjit_fma_f16",
            helpers::fma_f16 as *const u8,
            vec![types::I32; 4],
            vec![types::I32],
        ),
        (
            "ptxjit_fma_bf16",
            helpers::fma_bf16 as *const u8,
            vec![types::I32; 4],
            vec![types::I32],
        ),
        (
            "ptxjit_directed_f32",
            helpers::directed_f32 as *const u8,
            vec![types::I32, types::I32, types::F32, types::F32, types::F32],
            vec![types::F32],
        ),
        (
            "ptxjit_flush_result_f32",
            helpers::flush_result_f32 as *const u8,
            vec![
                types::I32,
                types::I32,
                types::F32,
                types::F32,
                types::F32,
                types::F32,
            ],
            vec![types::F32],
        ),
        (
            "ptxjit_flush_narrowed_f32",
            helpers::flush_narrowed_f32 as *const u8,
            vec![types::F64, types::I32, types::F32],
            vec![types::F32],
        ),
        (
            "ptxjit_directed_f64",
            helpers::directed_f64 as *const u8,
            vec![types::I32, types::I32, types::F64, types::F64, types::F64],
            vec![types::F64],
        ),
        (
            "ptxjit_f64_to_f32_directed",
            helpers::f64_to_f32_directed as *const u8,
            vec![types::F64, types::I32],
            vec![types::F32],
        ),
        (
            "ptxjit_int_to_f32_directed",
            helpers::int_to_f32_directed as *const u8,
            vec![types::I64, types::I32, types::I32],
            vec![types::F32],
        ),
        (
            "ptxjit_int_to_f64_directed",
            helpers::int_to_f64_directed as *const u8,
            vec![types::I64, types::I32, types::I32],
            vec![types::F64],
        ),
        (
            "ptxjit_fns",
            helpers::fns as *const u8,
            vec![types::I32; 3],
            vec![types::I32],
        ),
        (
            "ptxjit_cvt_rs",
            helpers::cvt_rs as *const u8,
            vec![types::I32; 4],
            vec![types::I32],
        ),
        (
            "ptxjit_mbarrier",
            helpers::mbarrier as *const u8,
            vec![types::I64, types::I32, types::I64],
            vec![types::I64],
        ),
        (
            "ptxjit_tensor_copy",
            helpers::tensor_copy as *const u8,
            vec![types::I64],
            vec![types::I32],
        ),
        (
            "ptxjit_tensormap_replace",
            helpers::tensormap_replace as *const u8,
            vec![types::I64, types::I32, types::I32, types::I64],
            vec![],
        ),
        (
            "ptxjit_video",
            helpers::video as *const u8,
            vec![types::I64, types::I32, types::I32, types::I32],
            vec![types::I32],
        ),
        (
            "ptxjit_vprintf",
            helpers::vprintf as *const u8,
            vec![types::I64; 4],
            vec![types::I32],
        ),
        (
            "ptxjit_malloc",
            helpers::malloc as *const u8,
            vec![types::I64],
            vec![types::I64],
        ),
        (
            "ptxjit_free",
            helpers::free as *const u8,
            vec![types::I64],
            vec![types::I8],
        ),
        (
            "ptxjit_clock_ns",
            helpers::clock_ns as *const u8,
            vec![],
            vec![types::I64],
        ),
    ]
}

mod helpers {
    //! The functions compiled code calls: the f32 `.approx` transcendentals as an H200's
    //! sequences around its MUFU unit compute them (`semantics::mufu`; `.ftz` flushes around
    //! the call), the exact fallbacks of the inline half arithmetic, and the runtime's.
    use crate::semantics::mufu;
    pub extern "C" fn exp2f(x: f32) -> f32 {
        mufu::ex2(x)
    }
    pub extern "C" fn log2f(x: f32) -> f32 {
        mufu::lg2(x)
    }
    pub extern "C" fn sinf(x: f32) -> f32 {
        mufu::sin(x)
    }
    pub extern "C" fn cosf(x: f32) -> f32 {
        mufu::cos(x)
    }
    pub extern "C" fn tanhf(x: f32) -> f32 {
        mufu::tanh(x)
    }
    // `Approximations::Accurate`: the host's libm.
    pub extern "C" fn exp2f_libm(x: f32) -> f32 {
        x.exp2()
    }
    pub extern "C" fn log2f_libm(x: f32) -> f32 {
        x.log2()
    }
    pub extern "C" fn sinf_libm(x: f32) -> f32 {
        x.sin()
    }
    pub extern "C" fn cosf_libm(x: f32) -> f32 {
        x.cos()
    }
    pub extern "C" fn tanhf_libm(x: f32) -> f32 {
        x.tanh()
    }
    /// The exact fma of the reference, for the JIT's rare midpoint cases (u32 arguments: the
    /// C ABI does not promise how narrower ones are extended); `ftz`: `.ftz` on the result.
    pub extern "C" fn fma_f16(a: u32, b: u32, c: u32, ftz: u32) -> u32 {
        use crate::semantics::half::{F16, fma};
        fma(F16, ftz != 0, a as u16, b as u16, c as u16) as u32
    }
    pub extern "C" fn fma_bf16(a: u32, b: u32, c: u32, ftz: u32) -> u32 {
        use crate::semantics::half::{BF16, fma};
        fma(BF16, ftz != 0, a as u16, b as u16, c as u16) as u32
    }
    /// `semantics::float::flush_result_f32` (`Arith as u32`, `DIRECTIONS` index).
    pub extern "C" fn flush_result_f32(op: u32, rnd: u32, a: f32, b: f32, c: f32, r: f32) -> f32 {
        use crate::semantics::directed::{Arith, DIRECTIONS};
        let (op, rnd) = (Arith::ALL[op as usize], DIRECTIONS[rnd as usize]);
        crate::semantics::float::flush_result_f32(op, rnd, [a, b, c], r)
    }
    /// `semantics::float::flush_narrowed_f32` (`DIRECTIONS` index).
    pub extern "C" fn flush_narrowed_f32(x: f64, rnd: u32, r: f32) -> f32 {
        let rnd = crate::semantics::directed::DIRECTIONS[rnd as usize];
        crate::semantics::float::flush_narrowed_f32(x, rnd, r)
    }
    /// f32/f64 arithmetic in a rounding direction (`Arith as u32`, `DIRECTIONS` index).
    pub extern "C" fn directed_f32(op: u32, rnd: u32, a: f32, b: f32, c: f32) -> f32 {
        use crate::semantics::directed::{Arith, DIRECTIONS, f32_op};
        f32_op(Arith::ALL[op as usize], DIRECTIONS[rnd as usize], a, b, c)
    }
    pub extern "C" fn directed_f64(op: u32, rnd: u32, a: f64, b: f64, c: f64) -> f64 {
        use crate::semantics::directed::{Arith, DIRECTIONS, f64_op};
        f64_op(Arith::ALL[op as usize], DIRECTIONS[rnd as usize], a, b, c)
    }
    /// `cvt` in a rounding direction (a `DIRECTIONS` index) from f64 or an integer.
    pub extern "C" fn f64_to_f32_directed(x: f64, rnd: u32) -> f32 {
        use crate::semantics::directed::{DIRECTIONS, f64_to_f32};
        f64_to_f32(x, DIRECTIONS[rnd as usize])
    }
    pub extern "C" fn int_to_f32_directed(v: u64, signed: u32, rnd: u32) -> f32 {
        use crate::semantics::directed::{DIRECTIONS, int_to_f32};
        int_to_f32(v, signed != 0, DIRECTIONS[rnd as usize])
    }
    pub extern "C" fn int_to_f64_directed(v: u64, signed: u32, rnd: u32) -> f64 {
        use crate::semantics::directed::{DIRECTIONS, int_to_f64};
        int_to_f64(v, signed != 0, DIRECTIONS[rnd as usize])
    }
    pub extern "C" fn fns(mask: u32, base: u32, offset: u32) -> u32 {
        crate::semantics::int::fns(mask, base, offset as i32)
    }
    /// `cvt.rs` of two f32 bit patterns to a half pair; `flags`: bf16, `.relu`, `.satfinite`.
    pub extern "C" fn cvt_rs(a: u32, b: u32, rbits: u32, flags: u32) -> u32 {
        crate::semantics::half_ops::stochastic_pair(
            a,
            b,
            rbits,
            flags & 1 != 0,
            flags & 2 != 0,
            flags & 4 != 0,
        )
    }
    /// An mbarrier operation (`crate::mbarrier::run`) on an object at a checked address.
    pub extern "C" fn mbarrier(addr: u64, code: u32, operand: u64) -> u64 {
        // SAFETY: the compiled code checked the access as a `.b64` store.
        unsafe { crate::mbarrier::run(addr, code, operand) }
    }
    /// `cp.async.bulk.tensor` (`crate::tensor_copy::run`): 0, or the status kind to end with.
    pub extern "C" fn tensor_copy(req: u64) -> u32 {
        // SAFETY: the compiled code filled the request on its stack, the map's bytes checked.
        unsafe { crate::tensor_copy::run(&mut *(req as *mut crate::tensor_copy::Request)) }
    }
    /// `tensormap.replace` of field `Field::ALL[field]` in the map at a checked address.
    pub extern "C" fn tensormap_replace(addr: u64, field: u32, ord: u32, value: u64) {
        use crate::tensor_map::{Field, SIZE, replace};
        // SAFETY: the compiled code checked the map's 128 bytes as a store.
        let map = unsafe { &mut *(addr as *mut [u8; SIZE]) };
        // The ordinal and the immediate codes were checked when compiling.
        let _ = replace(map, Field::ALL[field as usize], ord, value);
    }
    /// A video instruction packed by `Video::to_bits`.
    pub extern "C" fn video(code: u64, a: u32, b: u32, c: u32) -> u32 {
        use crate::semantics::video::{Video, video};
        video(&Video::from_bits(code), a, b, c)
    }
    /// CUDA's device `printf` (`crate::printf::vprintf`).
    pub extern "C" fn vprintf(format: u64, args: u64, args_len: u64, fault: u64) -> i32 {
        // SAFETY: the compiled code passes the rest of the arguments' window and a slot.
        unsafe { crate::printf::vprintf(format, args, args_len, fault as *mut u64) }
    }
    /// Device `malloc` and `free` (`crate::device_heap`); `free` returns 1 for a pointer it
    /// cannot free.
    pub extern "C" fn malloc(size: u64) -> u64 {
        crate::device_heap::malloc(size)
    }
    pub extern "C" fn free(ptr: u64) -> u8 {
        crate::device_heap::free(ptr).is_err() as u8
    }
    pub extern "C" fn clock_ns() -> i64 {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as i64
    }
}

pub struct CompiledKernel {
    pub func: BlockFn,
    /// Index of the `.entry` in the checked module.
    pub function: usize,
    /// For kernels with barriers or warp collectives: how their rounds are completed.
    pub coop: Option<crate::sync::CoopKernel>,
    /// The time `func` took to compile (this function alone), and its Cranelift instructions.
    pub compile_time: Duration,
    pub ir_size: usize,
    /// What the lane-group form is expected to take to compile, once its size is known
    /// (`tier`; sized once, for the `ntid.x` of the launch that asked first).
    pub group_estimate: OnceLock<Duration>,
    /// Set once a worker has started to size the lane-group form.
    pub group_sizing_started: AtomicBool,
    /// Nanoseconds of launches run in the one-thread form so far (`LaneGroups::WhenHot`).
    pub first_tier_nanos: AtomicU64,
    /// The lane-group form (`tier`; none where the kernel cannot run in lane groups).
    pub grouped: TierForm,
    /// The group form's compile time, once compiled by the tier.
    pub group_compile_time: OnceLock<Duration>,
    /// Nanoseconds of launches run in the lane-group form so far (`tier::ThirdTier`).
    pub second_tier_nanos: AtomicU64,
    /// The wide form (`lower::lanes::WIDE` lanes a group; none where the kernel does not
    /// `widens` or the host has no group helpers).
    pub wide: TierForm,
    /// The widest groups its wide form may have (`lower::lanes::widens`; none where it
    /// has no wide form).
    pub widest: Option<usize>,
    /// The `ntid.x` the wide form was compiled for, set before the form: it runs the
    /// launches whose blocks are a multiple of it (its groups divide those; a narrower
    /// launch would run its one-thread code).
    pub wide_block_x: OnceLock<u32>,
    /// Whether the group form, once compiled, is kept (`tier::Trial`).
    pub trial: crate::tier::Trial,
}

impl CompiledKernel {
    /// What the lane-group form is expected to take to compile: from its size once that is
    /// known ([`group_estimate`](Self::group_estimate)), else at least
    /// [`GROUP_COMPILE_FLOOR`] times the one-thread form's compile.
    pub fn group_compile_estimate(&self) -> Duration {
        let floor = self.compile_time * GROUP_COMPILE_FLOOR;
        self.group_estimate.get().map_or(floor, |&e| e.max(floor))
    }

    /// What the wide form of `lanes` a group is expected to take to compile: the group
    /// form's, and [`WIDE_COMPILE_PER_64_LANES`] times that for each 64 lanes more.
    pub fn wide_compile_estimate(&self, lanes: usize) -> Duration {
        let group = self.group_compile_time.get().copied();
        let more = (lanes / lower::lanes::WIDEST).saturating_sub(1) as f64;
        group
            .unwrap_or_else(|| self.group_compile_estimate())
            .mul_f64(1.0 + WIDE_COMPILE_PER_64_LANES * more)
    }

    /// The lane-group form's compile time expected from its `group_ir_size` Cranelift
    /// instructions (see [`GROUP_COMPILE_PER_INSTRUCTION`]).
    pub fn group_compile_time_for(&self, group_ir_size: usize) -> Duration {
        let per_instruction = self.compile_time.as_secs_f64() / self.ir_size.max(1) as f64;
        Duration::from_secs_f64(
            per_instruction * GROUP_COMPILE_PER_INSTRUCTION * group_ir_size as f64,
        )
    }
}

/// Native code for a module. Dropping it frees the code.
pub struct CompiledModule {
    jit: Option<JITModule>,
    /// The code of the lane-group forms compiled since.
    tiers: Mutex<Vec<JITModule>>,
    env: Env,
    opts: CompileOptions,
    pub kernels: HashMap<String, CompiledKernel>,
    /// Static shared memory every block gets (module and function `.shared` variables),
    /// rounded up to where the dynamic part starts.
    pub static_shared_bytes: u32,
    /// The end of the last static `.shared` variable: what a GPU reports as the kernel's
    /// static shared memory.
    pub static_shared_used: u32,
    /// Cranelift IR text per function name, when `keep_clif` was set.
    pub clif: Vec<(String, String)>,
    /// Where compile time went (parse/check is measured by the caller).
    pub timings: CompileTimings,
    /// Storage of the module's `.global` and `.const` variables (one segment).
    data: Option<DeviceBuffer>,
}

// The JIT module is only read after finalization (function pointers), never mutated.
unsafe impl Send for CompiledModule {}
unsafe impl Sync for CompiledModule {}

impl Drop for CompiledModule {
    fn drop(&mut self) {
        let tiers = std::mem::take(self.tiers.get_mut().unwrap_or_else(|e| e.into_inner()));
        for jit in self.jit.take().into_iter().chain(tiers) {
            // SAFETY: kernels hold an Arc to the module, so no code of it runs any more.
            unsafe { jit.free_memory() };
        }
    }
}

fn align_up(x: u64, a: u32) -> u64 {
    x.div_ceil(a.max(1) as u64) * a.max(1) as u64
}

/// Where every variable lives: storage for `.global`/`.const` variables (returned, to be
/// kept alive with the code; at most `max_data` bytes in all) and offsets in shared memory.
/// The JIT and the interpreter share it.
///
/// The `.global`/`.const` variables are one segment, in declaration order at their alignment,
/// as a GPU lays out a module's data, and kernels may touch it to the end of its 64 KiB granule
/// (a GPU faults only outside mapped pages): reading past a variable reads the next one, or
/// zeros, as on the GPU (ZLUDA's `ldmatrix` test reads past its table).
pub fn place_variables(
    module: &checked::Module,
    max_data: u64,
) -> Result<(Env, Option<DeviceBuffer>)> {
    let mut data_bytes = 0u64;
    let mut data_offsets = Vec::new();
    let mut global_addresses = Vec::new();
    let mut global_shared_offsets = Vec::new();
    let mut shared_end = 0u64;
    // Static shared variables are placed one after another, within a block's limit.
    let mut place_shared =
        |align: u32, size: u64, span: crate::error::Span, name: &str| -> Result<u32> {
            let offset = align_up(shared_end, align);
            match offset.checked_add(size) {
                Some(end) if end <= ptxjit_runtime::MAX_SHARED_BYTES => {
                    shared_end = end;
                    Ok(offset as u32)
                }
                _ => Err(Diagnostic::new(
                    &module.source,
                    span,
                    format!(
                        "shared variable '{name}' ({size} bytes at offset {offset}) passes the \
                     {} bytes of shared memory a block has",
                        ptxjit_runtime::MAX_SHARED_BYTES
                    ),
                )
                .into()),
            }
        };
    let mut extern_shared = Vec::new();
    for (i, g) in module.globals.iter().enumerate() {
        match g.space {
            StateSpace::Shared => {
                global_addresses.push(None);
                if g.is_extern {
                    extern_shared.push(i);
                    global_shared_offsets.push(None);
                } else {
                    let offset = place_shared(g.align, g.size, g.span, &g.name)?;
                    global_shared_offsets.push(Some(offset));
                }
            }
            _ => {
                if g.is_extern {
                    return Err(Diagnostic::new(
                        &module.source,
                        g.span,
                        format!(
                            "external variable '{}' is not defined in this module",
                            g.name
                        ),
                    )
                    .into());
                }
                let offset = align_up(data_bytes, g.align);
                data_bytes = offset.saturating_add(g.size);
                if data_bytes > max_data {
                    return Err(Diagnostic::new(
                        &module.source,
                        g.span,
                        format!(
                            "'{}' ({} bytes) brings the module's .global and .const data to \
                             {data_bytes} bytes, past the limit of {max_data} \
                             (PTXJIT_MAX_MODULE_DATA)",
                            g.name, g.size
                        ),
                    )
                    .into());
                }
                data_offsets.push((i, offset));
                global_addresses.push(None);
                global_shared_offsets.push(None);
            }
        }
    }
    let mut data_end = 0;
    let data = if data_offsets.is_empty() {
        None
    } else {
        let granule = ptxjit_runtime::granule(data_bytes as usize).ok_or(
            ptxjit_runtime::RuntimeError::OutOfMemory(data_bytes as usize),
        )?;
        let segment = DeviceBuffer::zeroed(granule)?;
        for (i, offset) in data_offsets {
            if let Some(init) = &module.globals[i].init {
                segment.write_at(offset as usize, init)?;
            }
            global_addresses[i] = Some(segment.address() + offset);
        }
        // Initializers that hold addresses (`.u64 p[2] = {x, y}`), now that all are known.
        for (i, g) in module.globals.iter().enumerate() {
            for a in &g.init_addresses {
                let (Some(at), Some(target)) = (global_addresses[i], global_addresses[a.target])
                else {
                    continue;
                };
                let value = target.wrapping_add_signed(a.offset);
                segment.write_at((at - segment.address() + a.at) as usize, &[value])?;
            }
        }
        data_end = segment.address() + granule as u64;
        Some(segment)
    };
    let mut local_shared_offsets = HashMap::new();
    for (fi, f) in module.functions.iter().enumerate() {
        for (vi, v) in f.vars.iter().enumerate() {
            if v.space == StateSpace::Shared && !v.is_extern {
                let offset = place_shared(v.align, v.size, v.span, &v.name)?;
                local_shared_offsets.insert((fi, vi), offset);
            }
        }
    }
    let dynamic_shared_offset = align_up(shared_end, 16);
    for i in extern_shared {
        global_shared_offsets[i] = Some(dynamic_shared_offset as u32);
    }
    let env = Env {
        global_addresses,
        data_end,
        global_shared_offsets,
        local_shared_offsets,
        dynamic_shared_offset: dynamic_shared_offset as u32,
        static_shared_end: shared_end as u32,
    };
    Ok((env, data))
}

pub fn compile(module: &checked::Module, opts: &CompileOptions) -> Result<CompiledModule> {
    let (env, data) = place_variables(module, opts.max_module_data)?;
    let all = |_: usize| true;
    let groups = match opts.lane_groups {
        LaneGroups::Off | LaneGroups::WhenHot => None,
        LaneGroups::Always => Some(Groups {
            block_x: None,
            wide: false,
        }),
        LaneGroups::AlwaysForBlockX(x) => Some(Groups {
            block_x: Some(x),
            wide: true,
        }),
    };
    let Built {
        jit,
        ids,
        timings,
        clif,
        times,
        ir_sizes,
    } = build(module, &env, opts, &all, groups, Stage::Code)?;
    let mut kernels = HashMap::new();
    for (fi, f) in module.functions.iter().enumerate() {
        if f.kind != FunctionKind::Entry {
            continue;
        }
        let Some(&id) = ids.get(&fi) else { continue };
        let coop = lower::sync::is_cooperative(f).then(|| {
            let points = lower::sync::sync_points(f);
            let layout = lower::sync::frame_layout(f);
            crate::sync::CoopKernel {
                function: fi as u32,
                frame_bytes: layout.bytes,
                written_first: crate::sync::frame::WRITTEN_FIRST as usize..layout.regs_end,
                grid_wide: points
                    .iter()
                    .any(|p| p.kind == crate::sync::SyncKind::GridSync),
                points,
                static_shared: env.dynamic_shared_offset,
            }
        });
        // (Known at once when the kernel has no lane-group form, or no wide one.)
        let when_hot = opts.lane_groups == LaneGroups::WhenHot && lower::lanes::eligible(f);
        let grouped = if when_hot {
            TierForm::default()
        } else {
            TierForm::none()
        };
        let helpers = opts
            .native_helpers
            .and_then(crate::native::group_helpers_up_to);
        // (Asked of the kernel's own registers, not its webs' (`lower::webs`), which the
        // form computes on: the split only makes more registers uniform, so a kernel that
        // widens here widens there.)
        let widest = (when_hot && helpers.is_some())
            .then(|| lower::lanes::widens(f))
            .flatten();
        let wide = if widest.is_some() {
            TierForm::default()
        } else {
            TierForm::none()
        };
        kernels.insert(
            f.name.clone(),
            CompiledKernel {
                func: block_fn(&jit, id),
                function: fi,
                coop,
                compile_time: times[&fi],
                ir_size: ir_sizes[&fi],
                group_estimate: OnceLock::new(),
                group_sizing_started: AtomicBool::new(false),
                first_tier_nanos: AtomicU64::new(0),
                grouped,
                group_compile_time: OnceLock::new(),
                second_tier_nanos: AtomicU64::new(0),
                wide,
                widest,
                wide_block_x: OnceLock::new(),
                trial: Default::default(),
            },
        );
    }
    Ok(CompiledModule {
        jit: Some(jit),
        tiers: Mutex::new(Vec::new()),
        static_shared_bytes: env.dynamic_shared_offset,
        static_shared_used: env.static_shared_end,
        env,
        opts: *opts,
        kernels,
        clif,
        timings,
        data,
    })
}

impl CompiledModule {
    /// Where module-scope variable `index` lives (`None` for shared variables).
    pub fn global_address(&self, index: usize) -> Option<u64> {
        self.env.global_addresses.get(index).copied().flatten()
    }

    /// Whether the module has storage of its own (`.global`/`.const` variables), which every
    /// load must get fresh and initialized.
    pub fn holds_data(&self) -> bool {
        self.data.is_some()
    }

    pub fn lane_groups(&self) -> LaneGroups {
        self.opts.lane_groups
    }

    /// The lane-group form of kernel `function`, compiled now for launches of `block_x`
    /// threads in x (others of a width it does not divide run the one-thread form), as wide
    /// as it allows (`lower::lanes::WIDE`) where `wide`; `None` if it cannot have one.
    pub fn compile_grouped(
        &self,
        module: &checked::Module,
        function: usize,
        block_x: u32,
        wide: bool,
    ) -> Result<Option<BlockFn>> {
        #[cfg(test)]
        if tests::FAIL_GROUPED.get() {
            panic!("an injected failure of the lane-group compile");
        }
        let Some(Built { jit, ids, .. }) =
            self.build_grouped(module, function, block_x, wide, Stage::Code)?
        else {
            return Ok(None);
        };
        let func = block_fn(&jit, ids[&function]);
        self.tiers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(jit);
        Ok(Some(func))
    }

    /// The Cranelift instructions of the lane-group form [`compile_grouped`] would compile
    /// (lowered, not compiled: a tenth of the compile's time or less); `None` where it would
    /// compile none.
    ///
    /// [`compile_grouped`]: Self::compile_grouped
    pub fn grouped_ir_size(
        &self,
        module: &checked::Module,
        function: usize,
        block_x: u32,
        wide: bool,
    ) -> Result<Option<usize>> {
        let Some(built) = self.build_grouped(module, function, block_x, wide, Stage::Lowered)?
        else {
            return Ok(None);
        };
        // SAFETY: nothing was defined in it, so no code of it can run.
        unsafe { built.jit.free_memory() };
        Ok(built.ir_sizes.get(&function).copied())
    }

    /// [`build`] of the lane-group form of `function` alone, for launches of `block_x`
    /// threads in x (`wide`: see [`Groups`]), to `stage`; `None` if it cannot have one.
    fn build_grouped(
        &self,
        module: &checked::Module,
        function: usize,
        block_x: u32,
        wide: bool,
        stage: Stage,
    ) -> Result<Option<Built>> {
        if !lower::lanes::eligible(&module.functions[function]) {
            return Ok(None);
        }
        let only = |fi: usize| fi == function;
        let groups = Some(Groups {
            block_x: Some(block_x),
            wide,
        });
        build(module, &self.env, &self.opts, &only, groups, stage).map(Some)
    }
}

fn block_fn(jit: &JITModule, id: ClifFuncId) -> BlockFn {
    let ptr = jit.get_finalized_function(id);
    // SAFETY: entries are defined with `lower::signature` of an entry, which is the
    // `BlockFn` ABI (one pointer in, one u64 out, the platform calling convention).
    unsafe { std::mem::transmute::<*const u8, BlockFn>(ptr) }
}

/// A new JIT module and what compiling it took.
struct Built {
    jit: JITModule,
    /// Its functions, by index in the checked module.
    ids: HashMap<usize, ClifFuncId>,
    timings: CompileTimings,
    clif: Vec<(String, String)>,
    /// Each function's lowering and code generation.
    times: HashMap<usize, Duration>,
    /// Each function's Cranelift instructions, as lowered.
    ir_sizes: HashMap<usize, usize>,
}

/// How far [`build`] goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Cranelift IR only (its size), no code.
    Lowered,
    Code,
}

/// The lane-group forms a [`build`] compiles: for launches of this `ntid.x`, if known, and
/// as wide as a kernel and the launch allow (`lower::lanes::WIDE`) where `wide`.
#[derive(Clone, Copy)]
struct Groups {
    block_x: Option<u32>,
    wide: bool,
}

/// Cranelift's x86-64 settings for the AVX-512 extensions it uses.
const AVX512_FEATURES: [&str; 6] = [
    "has_avx512bitalg",
    "has_avx512dq",
    "has_avx512f",
    "has_avx512vbmi",
    "has_avx512vl",
    "has_avx512vnni",
];

/// Compiles the functions `wanted` selects into a new JIT module, with lane groups for the
/// eligible entries if `lane_groups` is some.
fn build(
    module: &checked::Module,
    env: &Env,
    opts: &CompileOptions,
    wanted: &dyn Fn(usize) -> bool,
    lane_groups: Option<Groups>,
    stage: Stage,
) -> Result<Built> {
    let codegen_err = |function: &str, message: String| Error::Codegen {
        function: function.into(),
        message,
    };
    let mut flags = settings::builder();
    let level = match opts.opt_level {
        OptLevel::None => "none",
        OptLevel::Speed => "speed",
    };
    flags
        .set("opt_level", level)
        .map_err(|e| codegen_err("<module>", e.to_string()))?;
    // Without optimization, compile time matters most: the single-pass register allocator.
    if opts.opt_level == OptLevel::None {
        flags
            .set("regalloc_algorithm", "single_pass")
            .map_err(|e| codegen_err("<module>", e.to_string()))?;
    }
    flags
        .set(
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )
        .map_err(|e| codegen_err("<module>", e.to_string()))?;
    let mut isa_builder =
        cranelift_native::builder().map_err(|e| codegen_err("<module>", e.to_string()))?;
    // Helpers capped at AVX2 run the module as on a CPU without AVX-512: Cranelift's code
    // too, which picks other instructions (and other sequences) where it lacks them.
    if opts.native_helpers == Some(crate::native::Isa::Avx2) {
        for feature in AVX512_FEATURES {
            isa_builder
                .set(feature, "false")
                .map_err(|e| codegen_err("<module>", e.to_string()))?;
        }
    }
    let isa = isa_builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| codegen_err("<module>", e.to_string()))?;
    let call_conv = isa.default_call_conv();
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    // One reserved range per module for all its code and data: calls between its functions
    // and references to its constants are 32-bit PC-relative, and separately allocated
    // pieces could land gigabytes apart (across the device arena's reservation, say).
    let memory = ArenaMemoryProvider::new_with_size(JIT_RESERVE_BYTES)
        .map_err(|e| codegen_err("<module>", format!("reserving code memory: {e}")))?;
    jb.memory_provider(Box::new(memory));
    let mut helper_list = helpers();
    if opts.native_helpers.is_some() && crate::native::available() {
        let (i32s, i32) = (vec![types::I32; 4], vec![types::I32]);
        helper_list.push((
            crate::native::SYMBOL,
            crate::native::pair_helper(),
            i32s,
            i32,
        ));
    }
    for (name, addr, _, _) in &helper_list {
        jb.symbol(*name, *addr);
    }
    if let Some(addr) = crate::prefetch::address() {
        jb.symbol(crate::prefetch::SYMBOL, addr);
    }
    let mut jit = JITModule::new(jb);

    // Declarations.
    let mut ids: HashMap<usize, ClifFuncId> = HashMap::new();
    let inlined = calls::inlined_functions(module);
    for (fi, f) in module.functions.iter().enumerate() {
        // (A function inlined at every call is never called: `frontend::calls`.)
        if f.body.is_none() || !wanted(fi) || inlined[fi] {
            continue;
        }
        let sig = lower::signature(f, call_conv);
        let (name, linkage) = match f.kind {
            FunctionKind::Entry => (format!("ptx_entry_{}", f.name), Linkage::Export),
            FunctionKind::Func => (format!("ptx_func_{fi}_{}", f.name), Linkage::Local),
        };
        let id = jit
            .declare_function(&name, linkage, &sig)
            .map_err(|e| codegen_err(&f.name, e.to_string()))?;
        ids.insert(fi, id);
    }
    let mut helper_ids = HashMap::new();
    for (name, _, params, returns) in &helper_list {
        let mut sig = Signature::new(call_conv);
        sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        sig.returns
            .extend(returns.iter().map(|t| AbiParam::new(*t)));
        let id = jit
            .declare_function(name, Linkage::Import, &sig)
            .map_err(|e| codegen_err(name, e.to_string()))?;
        helper_ids.insert(*name, id);
    }
    if crate::prefetch::address().is_some() {
        // Declared to change no register, which the assembly keeps (`prefetch`).
        let mut sig = Signature::new(CallConv::PreserveAll);
        sig.params.extend([AbiParam::new(types::I64); 2]);
        let id = jit
            .declare_function(crate::prefetch::SYMBOL, Linkage::Import, &sig)
            .map_err(|e| codegen_err(crate::prefetch::SYMBOL, e.to_string()))?;
        helper_ids.insert(crate::prefetch::SYMBOL, id);
    }

    // Definitions.
    let mut timings = CompileTimings::default();
    let mut ctx = Context::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut clif = Vec::new();
    let mut times = HashMap::new();
    let mut ir_sizes = HashMap::new();
    for (fi, f) in module.functions.iter().enumerate() {
        let Some(&id) = ids.get(&fi) else { continue };
        jit.clear_context(&mut ctx);
        ctx.func.signature = lower::signature(f, call_conv);
        let lower_start = Instant::now();
        // The lane-group form computes on the kernel's registers split into webs (where
        // the split leaves it a group form: more registers may not fit), but a cooperative
        // kernel's on its own: its frames' layout is the one-thread form's
        // (`lower::lanes::coop`), which `crate::sync` reads.
        let webs;
        let f = match lane_groups {
            Some(_) if lower::lanes::eligible(f) && !lower::sync::is_cooperative(f) => {
                webs = lower::webs::split(f);
                if lower::lanes::eligible(&webs) {
                    &webs
                } else {
                    f
                }
            }
            _ => f,
        };
        {
            let mut builder = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let options = lower::Options {
                lane_groups: lane_groups.is_some(),
                block_x: lane_groups.and_then(|g| g.block_x),
                wide: lane_groups.is_some_and(|g| g.wide),
                confine: opts.confine,
                handover: opts.lane_groups == LaneGroups::WhenHot,
                gpu_approximations: opts.approximations == Approximations::Gpu,
            };
            let callees = Callees {
                declarations: jit.declarations(),
                functions: &ids,
                helpers: &helper_ids,
                group_helpers: opts
                    .native_helpers
                    .and_then(crate::native::group_helpers_up_to),
            };
            Translator::translate(&mut builder, module, fi, f, env, &callees, options)?;
            builder.finalize(jit.isa().frontend_config());
        }
        timings.lower += lower_start.elapsed();
        ir_sizes.insert(fi, ctx.func.dfg.num_insts());
        if stage == Stage::Lowered {
            continue;
        }
        let codegen_start = Instant::now();
        if opts.keep_clif {
            clif.push((f.name.clone(), ctx.func.display().to_string()));
        }
        jit.define_function(id, &mut ctx).map_err(|e| {
            let detail = match e {
                cranelift_module::ModuleError::Compilation(ce) => {
                    cranelift_codegen::print_errors::pretty_error(&ctx.func, ce)
                }
                other => other.to_string(),
            };
            codegen_err(&f.name, detail)
        })?;
        timings.codegen += codegen_start.elapsed();
        times.insert(fi, lower_start.elapsed());
    }
    if stage == Stage::Code {
        jit.finalize_definitions()
            .map_err(|e| codegen_err("<module>", e.to_string()))?;
    }
    Ok(Built {
        jit,
        ids,
        timings,
        clif,
        times,
        ir_sizes,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Makes `compile_grouped` panic on this thread (tests of the tier fallback).
        pub static FAIL_GROUPED: Cell<bool> = const { Cell::new(false) };
    }
}
