//! The library API, shaped like the CUDA driver API: a module from PTX text, kernels by name,
//! launches with arguments.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ptxjit_runtime::{BlockFailure, DeviceBuffer, Dim3, LaunchConfig, StatusKind};

use crate::error::{Error, Result, Source};
use crate::frontend::ast::StateSpace;
use crate::frontend::{check, checked, parser};
use crate::jit::{self, CompileOptions, CompiledModule};
use crate::types::PtxType;

struct Inner {
    checked: checked::Module,
    compiled: CompiledModule,
}

/// A compiled PTX module. Cheap to clone; kernels keep it alive.
#[derive(Clone)]
pub struct Module {
    inner: Arc<Inner>,
}

impl Module {
    /// Parses, checks and compiles PTX text.
    pub fn from_ptx(text: &str) -> Result<Module> {
        Module::from_ptx_named("<ptx>", text, &CompileOptions::default())
    }

    /// Reads and compiles a PTX file; diagnostics name the file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::Launch {
            kernel: String::new(),
            message: format!("cannot read {}: {e}", path.display()),
        })?;
        Module::from_ptx_named(
            &path.display().to_string(),
            &text,
            &CompileOptions::default(),
        )
    }

    /// Compiles PTX text whose diagnostics use `name` as the file name.
    /// Compiled modules are cached by their text (and name and options), so compiling the
    /// same text again is nearly free, unless the module holds data (`.global`/`.const`
    /// variables): each such module gets its own, freshly initialized, as each CUDA module
    /// load does.
    pub fn from_ptx_named(name: &str, text: &str, opts: &CompileOptions) -> Result<Module> {
        let key = (name.to_string(), text.to_string(), *opts);
        if let Some(inner) = cache::get(&key) {
            return Ok(Module { inner });
        }
        let start = std::time::Instant::now();
        let checked = check_ptx(name, text)?;
        let parse_check = start.elapsed();
        let mut compiled = jit::compile(&checked, opts)?;
        compiled.timings.parse_check = parse_check;
        crate::stats::compiled(start);
        let inner = Arc::new(Inner { checked, compiled });
        if !inner.compiled.holds_data() {
            cache::put(key, inner.clone());
        }
        Ok(Module { inner })
    }

    /// Whether the module has `.global`/`.const` storage of its own (see
    /// [`from_ptx_named`](Self::from_ptx_named): such modules are never shared).
    pub fn holds_data(&self) -> bool {
        self.inner.compiled.holds_data()
    }

    /// Where the compile time of this module went.
    pub fn timings(&self) -> jit::CompileTimings {
        self.inner.compiled.timings
    }

    /// The names of the module's `.entry` kernels, in source order.
    pub fn kernel_names(&self) -> Vec<String> {
        self.inner
            .checked
            .entries()
            .map(|f| f.name.clone())
            .collect()
    }

    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        match self.inner.compiled.kernels.get(name) {
            Some(k) => Ok(Kernel {
                module: self.inner.clone(),
                name: name.to_string(),
                function: k.function,
                func: k.func,
                timeout: None,
            }),
            None => Err(Error::NoSuchKernel {
                name: name.into(),
                available: self.kernel_names().join(", "),
            }),
        }
    }

    /// The device address and size of a module-scope `.global` or `.const` variable.
    pub fn global(&self, name: &str) -> Option<(u64, u64)> {
        let m = &self.inner.checked;
        let i = m.globals.iter().position(|g| g.name == name)?;
        let address = self.inner.compiled.global_address(i)?;
        Some((address, m.globals[i].size))
    }

    /// Cranelift IR of every function, if compiled with `keep_clif`.
    pub fn clif(&self) -> &[(String, String)] {
        &self.inner.compiled.clif
    }
}

mod cache {
    //! Compiled modules by (name, text, options): a small bounded cache, oldest out first.
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use super::Inner;
    use crate::jit::CompileOptions;

    pub type Key = (String, String, CompileOptions);
    const CAPACITY: usize = 64;
    static CACHE: Mutex<VecDeque<(Key, Arc<Inner>)>> = Mutex::new(VecDeque::new());

    pub fn get(key: &Key) -> Option<Arc<Inner>> {
        let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    pub fn put(key: Key, value: Arc<Inner>) {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CAPACITY {
            cache.pop_front();
        }
        cache.push_back((key, value));
    }
}

/// Parses and checks PTX text (no code generation).
pub fn check_ptx(name: &str, text: &str) -> Result<checked::Module> {
    let source = Source::new(name, text);
    let ast = parser::parse(&source)?;
    check::check(&source, ast).map_err(|mut ds| {
        if ds.len() == 1 {
            Error::from(ds.remove(0))
        } else {
            Error::PtxMany(ds)
        }
    })
}

/// A kernel's resources, as a driver reports them.
#[derive(Clone, Copy, Debug)]
pub struct KernelAttributes {
    /// 1024, or fewer as `.maxntid`/`.reqntid` ask.
    pub max_threads_per_block: u32,
    /// `.shared` variables of the module and the kernel.
    pub static_shared_bytes: u64,
    /// The module's `.const` variables.
    pub const_bytes: u64,
    /// The kernel's `.local` variables, per thread.
    pub local_bytes: u64,
    pub registers: u32,
    /// The module's `.version`, as major × 10 + minor.
    pub ptx_version: u32,
}

/// `.version X.Y` of a PTX text as X × 10 + Y (0 if absent).
fn ptx_version(text: &str) -> u32 {
    let Some(at) = text.find(".version") else {
        return 0;
    };
    let word = text[at + 8..].split_whitespace().next().unwrap_or("");
    let (major, minor) = word.split_once('.').unwrap_or((word, "0"));
    major.parse::<u32>().unwrap_or(0) * 10 + minor.parse::<u32>().unwrap_or(0)
}

/// A kernel parameter as the `.entry` declares it.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub ty: PtxType,
    /// Bytes the argument must have.
    pub size: u32,
    /// Where it sits in the kernel's parameter buffer (the layout of CUDA's packed
    /// `CU_LAUNCH_PARAM_BUFFER_POINTER` argument).
    pub offset: u32,
    /// `Some(K)` for `.b8 name[K]`-style by-value aggregates.
    pub array: Option<u32>,
}

/// One kernel argument: the bytes of its value (a buffer passes its device address).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    bytes: Vec<u8>,
}

impl Arg {
    pub fn bytes(b: &[u8]) -> Arg {
        Arg { bytes: b.to_vec() }
    }
    pub fn u8(v: u8) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn u16(v: u16) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn u32(v: u32) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn u64(v: u64) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn i8(v: i8) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn i16(v: i16) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn i32(v: i32) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn i64(v: i64) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn f32(v: f32) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn f64(v: f64) -> Arg {
        Arg::bytes(&v.to_le_bytes())
    }
    pub fn f16(v: half::f16) -> Arg {
        Arg::bytes(&v.to_bits().to_le_bytes())
    }
    pub fn bf16(v: half::bf16) -> Arg {
        Arg::bytes(&v.to_bits().to_le_bytes())
    }
    /// The device address of a buffer.
    pub fn buffer(b: &DeviceBuffer) -> Arg {
        Arg::u64(b.address())
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl From<&DeviceBuffer> for Arg {
    fn from(b: &DeviceBuffer) -> Arg {
        Arg::buffer(b)
    }
}

/// A kernel of a compiled module.
#[derive(Clone)]
pub struct Kernel {
    module: Arc<Inner>,
    name: String,
    function: usize,
    func: ptxjit_runtime::BlockFn,
    timeout: Option<Duration>,
}

/// The time of each launch of [`Kernel::launch_repeated`], in order: the first (which also
/// pays for compiling a tier chosen at launch) and the others.
#[derive(Clone, Debug)]
pub struct LaunchTimes {
    pub times: Vec<std::time::Duration>,
}

impl LaunchTimes {
    pub fn first(&self) -> std::time::Duration {
        self.times[0]
    }

    /// The fastest and the median of the launches after the first (`None` for one launch).
    pub fn min_and_median_after_first(&self) -> Option<(std::time::Duration, std::time::Duration)> {
        let mut rest = self.times[1..].to_vec();
        rest.sort();
        Some((*rest.first()?, rest[rest.len() / 2]))
    }
}

impl Kernel {
    /// The same kernel, whose launches stop with an error after `timeout` (a kernel that loops
    /// forever then returns instead of hanging; no worker stays busy).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Kernel {
        self.timeout = timeout;
        self
    }

    fn decl(&self) -> &checked::Function {
        &self.module.checked.functions[self.function]
    }

    pub fn name(&self) -> &str {
        &self.decl().name
    }

    pub fn params(&self) -> Vec<ParamInfo> {
        self.decl()
            .params
            .iter()
            .map(|p| ParamInfo {
                name: p.name.clone(),
                ty: p.ty,
                size: p.size,
                offset: p.offset,
                array: p.array,
            })
            .collect()
    }

    /// What the driver API's `cuFuncGetAttribute` reports of the kernel.
    pub fn attributes(&self) -> KernelAttributes {
        let f = self.decl();
        let m = &self.module.checked;
        let bytes = |vars: &[checked::Var], space| {
            vars.iter()
                .filter(|v| v.space == space)
                .map(|v| v.size)
                .sum::<u64>()
        };
        let max_threads = match (f.reqntid, f.maxntid) {
            (Some(n), _) | (None, Some(n)) => n.iter().product::<u32>().min(1024),
            (None, None) => 1024,
        };
        KernelAttributes {
            max_threads_per_block: max_threads,
            static_shared_bytes: self.module.compiled.static_shared_used as u64,
            const_bytes: bytes(&m.globals, StateSpace::Const),
            local_bytes: bytes(&f.vars, StateSpace::Local),
            // PTX's virtual registers, as many as a GPU thread may hold at most, or as
            // `.maxnreg` allows (ptxas spills the rest).
            registers: (f.regs.len() as u32)
                .min(f.maxnreg.unwrap_or(255))
                .clamp(1, 255),
            ptx_version: ptx_version(&m.source.text),
        }
    }

    fn launch_error(&self, message: String) -> Error {
        Error::Launch {
            kernel: self.name().into(),
            message,
        }
    }

    /// Launches a grid and waits for it to finish.
    pub fn launch(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[Arg],
    ) -> Result<()> {
        self.launch_with(
            &LaunchConfig {
                grid: grid.into(),
                block: block.into(),
                dynamic_shared_bytes: 0,
                cluster: None,
                cooperative: false,
            },
            args,
        )
    }

    pub fn launch_with(&self, config: &LaunchConfig, args: &[Arg]) -> Result<()> {
        self.launch_scheduled(config, args, ptxjit_runtime::Schedule::WorkStealing)
    }

    /// Launches `n` times (at least once) and times each launch, calling `between` before
    /// every launch after the first, outside the timing (to restore inputs a kernel writes
    /// in place, say). Stops at the first launch that fails.
    pub fn launch_repeated(
        &self,
        config: &LaunchConfig,
        args: &[Arg],
        n: usize,
        mut between: impl FnMut(),
    ) -> Result<LaunchTimes> {
        let mut times = Vec::with_capacity(n.max(1));
        for i in 0..n.max(1) {
            if i > 0 {
                between();
            }
            let start = std::time::Instant::now();
            self.launch_with(config, args)?;
            times.push(start.elapsed());
        }
        Ok(LaunchTimes { times })
    }

    /// [`launch_with`](Self::launch_with) with a choice of how blocks are spread over the
    /// workers (the static split is there for comparisons).
    pub fn launch_scheduled(
        &self,
        config: &LaunchConfig,
        args: &[Arg],
        schedule: ptxjit_runtime::Schedule,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let result = self.run(config, args, schedule, started);
        crate::stats::launched(started);
        result
    }

    /// The launch, which began at `started` (its timeout counts from then).
    fn run(
        &self,
        config: &LaunchConfig,
        args: &[Arg],
        schedule: ptxjit_runtime::Schedule,
        started: std::time::Instant,
    ) -> Result<()> {
        let f = self.decl();
        if args.len() != f.params.len() {
            return Err(self.launch_error(format!(
                "takes {} arguments, {} given",
                f.params.len(),
                args.len()
            )));
        }
        if let Some(max) = f.maxntid {
            let b = config.block;
            let most = max.iter().map(|&n| n as u64).product::<u64>();
            if b.count() > most {
                return Err(self.launch_error(format!(
                    "allows at most {most} threads a block (.maxntid {max:?}), got {b:?}"
                )));
            }
        }
        let config = &self.cluster_config(config)?;
        if let Some(req) = f.reqntid {
            let b = config.block;
            if [b.x, b.y, b.z] != req {
                return Err(self.launch_error(format!(
                    "requires a block of {req:?} threads (.reqntid), got {b:?}"
                )));
            }
        }
        // The parameter buffer, aligned as `.param .align 64` tensor maps need; on the stack
        // when it is small (an aligned allocation costs a short launch 50 ns).
        use ptxjit_runtime::Line;
        let mut small = [Line::default(); 4];
        let mut large;
        let lines: &mut [Line] = if f.params_size as usize <= size_of_val(&small) {
            &mut small
        } else {
            large = Line::zeroed(f.params_size as usize);
            &mut large
        };
        let buf: &mut [u8] = Line::bytes_mut(lines);
        for (i, (p, a)) in f.params.iter().zip(args).enumerate() {
            if a.bytes.len() != p.size as usize {
                return Err(self.launch_error(format!(
                    "argument {i} ('{}', {}{}) needs {} bytes, got {}",
                    p.name,
                    p.ty,
                    p.array.map(|k| format!("[{k}]")).unwrap_or_default(),
                    p.size,
                    a.bytes.len()
                )));
            }
            buf[p.offset as usize..(p.offset + p.size) as usize].copy_from_slice(&a.bytes);
        }
        let static_shared = self.module.compiled.static_shared_bytes;
        let k = &self.module.compiled.kernels[&self.name];
        let func = crate::tier::form_for(k, config.block.x).unwrap_or(self.func);
        // (A test's injected failure is read on the launching thread, not the worker's.)
        #[cfg(test)]
        let fail = jit::tests::FAIL_GROUPED.get();
        let compile_form = |wide| {
            #[cfg(test)]
            let before = jit::tests::FAIL_GROUPED.replace(fail);
            let m = &self.module;
            let form = crate::tier::compile(
                &m.compiled,
                &m.checked,
                &self.name,
                self.function,
                config.block.x,
                wide,
            );
            #[cfg(test)]
            jit::tests::FAIL_GROUPED.set(before);
            form
        };
        let compile = || compile_form(false);
        let compile_wide = || compile_form(true);
        let size = || {
            let m = &self.module;
            crate::tier::size(
                &m.compiled,
                &m.checked,
                &self.name,
                self.function,
                config.block.x,
            )
        };
        let blocks = config.grid.count();
        let second_tier =
            crate::tier::SecondTier::new(k, started, blocks, config.block.count(), &compile, &size);
        let trial = second_tier
            .is_none()
            .then(|| crate::tier::TrialLaunch::new(k, started, config.block, self.func))
            .flatten();
        let third_tier = (second_tier.is_none() && trial.is_none())
            .then(|| crate::tier::ThirdTier::new(k, started, config.block.x, &compile_wide))
            .flatten();
        let upgrade: Option<&dyn ptxjit_runtime::Upgrade> = match (&second_tier, &trial) {
            (Some(t), _) => Some(t),
            (None, Some(t)) => Some(t),
            (None, None) => third_tier.as_ref().map(|t| t as _),
        };
        let coop = k.coop.as_ref();
        let after_round = |frames: &mut [u8], ctxs: &[ptxjit_runtime::BlockContext]| {
            coop.expect("only cooperative kernels have rounds")
                .after_round(frames, ctxs)
        };
        let cooperation = coop.map(|c| ptxjit_runtime::Cooperation {
            header_bytes: crate::sync::frame::HEADER,
            frame_bytes: c.frame_bytes,
            written_first: c.written_first.clone(),
            after_round: &after_round,
            grid_wide: c.grid_wide,
        });
        // SAFETY: `func` (and the group form the second tier gives) was compiled from this
        // kernel's checked function, whose parameter layout `buf` follows.
        let outcome = unsafe {
            ptxjit_runtime::launch_scheduled(
                func,
                config,
                buf,
                static_shared,
                cooperation.as_ref(),
                &ptxjit_runtime::LaunchOptions {
                    schedule,
                    timeout: self.timeout.map(|t| t.saturating_sub(started.elapsed())),
                    upgrade,
                },
            )
        };
        if let Some(t) = &second_tier {
            t.launched(started.elapsed());
        }
        if let Some(t) = &third_tier {
            t.launched(started.elapsed());
        }
        let outcome = outcome.map_err(|e| self.launch_error(e.to_string()))?;
        let shared_bytes = static_shared as u64 + config.dynamic_shared_bytes as u64;
        outcome.map_err(|failure| self.failure(failure, shared_bytes))
    }

    /// `config` with the cluster shape the kernel's directives require or allow.
    fn cluster_config(&self, config: &LaunchConfig) -> Result<LaunchConfig> {
        let directives = self.decl().cluster;
        let cluster = match (directives.required, config.cluster) {
            (Some(req), Some(c)) if [c.x, c.y, c.z] != req => {
                return Err(self.launch_error(format!(
                    "requires clusters of {req:?} blocks (.reqnctapercluster), launched with \
                     {c:?}"
                )));
            }
            (Some([x, y, z]), _) => Some(Dim3::new(x, y, z)),
            (None, c) => c,
        };
        if directives.explicit && cluster.is_none() {
            return Err(self.launch_error(
                "must be launched with cluster dimensions (.explicitcluster)".into(),
            ));
        }
        if let (Some(max), Some(c)) = (directives.max_rank, cluster)
            && c.count() > max as u64
        {
            return Err(self.launch_error(format!(
                "allows at most {max} blocks a cluster (.maxclusterrank), got {c:?}"
            )));
        }
        Ok(LaunchConfig { cluster, ..*config })
    }

    /// Whether this kernel's launches of blocks `block_x` threads wide now run the last form
    /// they may get (with [`LaneGroups::WhenHot`](crate::LaneGroups::WhenHot), a form a later
    /// tier may still compile is not); waits first if a launch (on another thread) is
    /// compiling one. For timing launches as they run once the kernel is hot.
    pub fn settled(&self, block_x: u32) -> bool {
        let compiled = &self.module.compiled;
        match compiled.lane_groups() {
            jit::LaneGroups::WhenHot => {
                crate::tier::settled(&compiled.kernels[&self.name], block_x)
            }
            _ => true,
        }
    }

    /// Whether this kernel's launches now run in lane groups; waits first if a launch (on
    /// another thread) is compiling that form
    /// ([`LaneGroups::WhenHot`](crate::LaneGroups::WhenHot)).
    pub fn finish_compiling(&self) -> bool {
        let compiled = &self.module.compiled;
        match compiled.lane_groups() {
            jit::LaneGroups::Off => false,
            jit::LaneGroups::Always | jit::LaneGroups::AlwaysForBlockX(_) => {
                crate::lower::lanes::eligible(self.decl())
            }
            jit::LaneGroups::WhenHot => crate::tier::wait(&compiled.kernels[&self.name]),
        }
    }

    /// The error of a failed block of a launch whose blocks had `shared_bytes` of shared memory.
    fn failure(&self, failure: BlockFailure, shared_bytes: u64) -> Error {
        let m = &self.module.checked;
        let status = failure.status;
        let what = match status.kind() {
            StatusKind::Trap => "trap".to_string(),
            StatusKind::Assert => "assertion failed (CUDA's assert: __assertfail)".to_string(),
            StatusKind::BadCall => {
                "indirect call through an address that is no function its prototype or target \
                 list admits"
                    .to_string()
            }
            StatusKind::Exit => "exit outside a kernel".to_string(),
            StatusKind::Round => "unfinished round".to_string(),
            StatusKind::Handover => "hand-over to another form outside a launch".to_string(),
            StatusKind::StackOverflow => {
                let f = m.functions.get(status.function() as usize);
                return self.launch_error(format!(
                    "calls nested too deeply (stack overflow) entering '{}' in block ({}, {}, {})",
                    f.map_or("?", |f| f.name.as_str()),
                    failure.block.x,
                    failure.block.y,
                    failure.block.z
                ));
            }
            StatusKind::Timeout => format!(
                "timeout after {:.3} s",
                self.timeout.unwrap_or_default().as_secs_f64()
            ),
            kind @ (StatusKind::IllegalAddress | StatusKind::Misaligned) => {
                let what = if kind == StatusKind::IllegalAddress {
                    "illegal"
                } else {
                    "misaligned"
                };
                match failure.fault {
                    Some(f) => {
                        let access = if f.is_store { "store" } else { "load" };
                        let (space, window) = if f.shared {
                            // (See `lower::cluster` for the windows.)
                            let block = match f.address >> 24 {
                                w if !f.cluster || w == 0 => String::new(),
                                w => format!(
                                    " (.shared::cluster: offset {:#x} in the block of rank {})",
                                    f.address & 0xFF_FFFF,
                                    w - 1
                                ),
                            };
                            (
                                " shared",
                                format!(
                                    "{block}; the block has {shared_bytes} bytes of shared memory"
                                ),
                            )
                        } else {
                            ("", String::new())
                        };
                        format!(
                            "{what}{space} address {:#x} ({}-byte {access}, thread {}{window})",
                            f.address, f.width, f.thread
                        )
                    }
                    None => format!("{what} address"),
                }
            }
            StatusKind::Other(crate::sync::status::DEADLOCK) => {
                "barrier that can never complete (the other threads wait elsewhere)".to_string()
            }
            StatusKind::Other(crate::sync::status::DIVERGENT_BARRIER) => {
                "divergent barrier (threads of the block wait at different bar.sync instructions)"
                    .to_string()
            }
            StatusKind::Other(crate::sync::status::INCOMPLETE_COLLECTIVE) => {
                "warp or warpgroup collective whose member threads did not all arrive".to_string()
            }
            StatusKind::Other(crate::sync::status::WGMMA_DESCRIPTORS) => {
                "wgmma whose warps give different matrix descriptors (the ISA requires the same \
                 across the warpgroup)"
                    .to_string()
            }
            StatusKind::Other(crate::sync::status::MBARRIER_UNINITIALIZED) => {
                "mbarrier operation on memory that holds no mbarrier object (never initialized \
                 by mbarrier.init, or invalidated)"
                    .to_string()
            }
            StatusKind::Other(crate::sync::status::MBARRIER_RANGE) => {
                "mbarrier count out of range (init count 1 to 2^20-1, no more arrivals than the \
                 phase still expects, tx-count within 2^20-1 either way) or an object not \
                 8-byte aligned"
                    .to_string()
            }
            StatusKind::Other(crate::sync::status::MBARRIER_DEADLOCK) => format!(
                "mbarrier phase that can never complete (the waiting threads saw their objects \
                 unchanged for {} rounds in which no other thread could proceed)",
                crate::sync::STUCK_ROUNDS
            ),
            StatusKind::Other(crate::sync::status::TENSOR_MAP) => failure
                .fault
                .and_then(|f| crate::tensor_map::MapError::from_words(f.address, f.width as u64))
                .map_or("invalid tensor map".to_string(), |e| {
                    if e.is_unsupported() {
                        format!("tensor map: {e}")
                    } else {
                        format!("invalid tensor map: {e}")
                    }
                }),
            StatusKind::Other(k) => format!("error {k}"),
        };
        let inst = m
            .functions
            .get(status.function() as usize)
            .and_then(|f| f.body.as_ref())
            .and_then(|b| b.get(status.instruction() as usize));
        if inst.is_none() && status.kind() == StatusKind::Timeout {
            return self.launch_error(format!("{what}: stopped between blocks"));
        }
        let (location, instruction) = match inst {
            Some(i) => (
                m.source.location(i.span),
                m.source.text[i.span.start as usize..i.span.end as usize].to_string(),
            ),
            None => ("<unknown>".into(), "<unknown>".into()),
        };
        let b = failure.block;
        Error::Runtime {
            kernel: self.name().into(),
            kind: Some(status.kind()),
            what: format!("{what} in block ({}, {}, {})", b.x, b.y, b.z),
            location,
            instruction,
        }
    }
}

#[cfg(test)]
mod tier_tests {
    use std::sync::atomic::Ordering;

    use ptxjit_runtime::{HANDOVER_ALIGN, Poll};

    use super::*;

    /// Out\[i\] = i, in blocks of 256.
    const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 out) {\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
        ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\n\
        mov.u32 %r3, %ntid.x;\nmad.lo.u32 %r1, %r2, %r3, %r1;\n\
        mul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd1, %rd1, %rd2;\n\
        st.global.u32 [%rd1], %r1;\nret;\n}\n";

    /// A fresh module of [`PTX`] (not the cache's, whose kernel may have run elsewhere).
    fn fresh(name: &str) -> (Module, Kernel) {
        let module = Module::from_ptx_named(name, PTX, &CompileOptions::default()).unwrap();
        let kernel = module.kernel("k").unwrap();
        (module, kernel)
    }

    fn compiled(kernel: &Kernel) -> &jit::CompiledKernel {
        &kernel.module.compiled.kernels["k"]
    }

    /// As if the kernel had run in its one-thread form for a minute: longer than its group
    /// form could take to compile.
    fn run_long_enough(kernel: &Kernel) {
        let nanos = std::time::Duration::from_secs(60).as_nanos() as u64;
        compiled(kernel)
            .first_tier_nanos
            .store(nanos, Ordering::Relaxed);
    }

    fn launch_and_check(kernel: &Kernel, blocks: u32) {
        let out = DeviceBuffer::zeroed(blocks as usize * 256 * 4).unwrap();
        kernel.launch(blocks, 256, &[Arg::buffer(&out)]).unwrap();
        let want: Vec<u32> = (0..blocks * 256).collect();
        assert_eq!(out.to_vec::<u32>(), want);
    }

    #[test]
    fn a_kernel_that_has_run_less_than_its_group_compile_takes_stays_one_thread() {
        let (_m, kernel) = fresh("<tier: brief>");
        let k = compiled(&kernel);
        let estimate = k.group_compile_estimate().as_nanos() as u64;
        // Launches of two blocks predict nothing from their own blocks; what the kernel has
        // run before decides. (On a loaded machine a few launches can reach the estimate:
        // the rule is checked launch by launch, not a time assumed.)
        for launch in 0..4 {
            let before = k.first_tier_nanos.load(Ordering::Relaxed);
            launch_and_check(&kernel, 2);
            if before >= estimate {
                break;
            }
            assert!(
                !k.grouped.started(),
                "launch {launch} compiled after {before} ns of {estimate}"
            );
            assert!(!kernel.finish_compiling());
            assert!(
                k.first_tier_nanos.load(Ordering::Relaxed) > before,
                "launch time counted"
            );
        }
    }

    #[test]
    fn a_kernel_that_has_run_as_long_as_its_group_compile_takes_gets_the_group_form() {
        let (_m, kernel) = fresh("<tier: long>");
        run_long_enough(&kernel);
        // The first block's worker compiles it, and runs it with the blocks after.
        launch_and_check(&kernel, 8);
        assert!(kernel.finish_compiling());
        assert!(compiled(&kernel).grouped.ready().is_some());
        launch_and_check(&kernel, 8);
    }

    /// Out\[i\] = the pair of halves from i after 64 fmas: a loop of a group helper's on a
    /// uniform counter (`lanes::widens`).
    const CHAIN: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 out) {\n.reg .pred %p;\n.reg .b32 %r<8>;\n\
        .reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\n\
        mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmad.lo.u32 %r1, %r2, %r3, %r1;\n\
        and.b32 %r4, %r1, 0x03FF03FF;\nor.b32 %r4, %r4, 0x38003800;\nmov.u32 %r5, 0;\n\
        LOOP:\nfma.rn.f16x2 %r4, %r4, 0x3BFF3BFE, 0x14181419;\nadd.u32 %r5, %r5, 1;\n\
        setp.lt.u32 %p, %r5, 64;\n@%p bra LOOP;\nmul.wide.u32 %rd2, %r1, 4;\n\
        add.u64 %rd1, %rd1, %rd2;\nst.global.u32 [%rd1], %r4;\nret;\n}\n";

    /// [`CHAIN`]'s output for `blocks` blocks of `x` threads from `kernel`.
    fn chain_out(kernel: &Kernel, blocks: u32, x: u32) -> Vec<u32> {
        let out = DeviceBuffer::zeroed((blocks * x) as usize * 4).unwrap();
        kernel.launch(blocks, x, &[Arg::buffer(&out)]).unwrap();
        out.to_vec::<u32>()
    }

    #[test]
    fn a_kernel_whose_group_form_has_run_long_enough_gets_the_wide_form_with_the_same_bits() {
        if !crate::native::available() {
            return;
        }
        let one_thread = CompileOptions {
            lane_groups: jit::LaneGroups::Off,
            ..CompileOptions::default()
        };
        let reference = Module::from_ptx_named("<tier: wide, reference>", CHAIN, &one_thread)
            .unwrap()
            .kernel("k")
            .unwrap();
        let module =
            Module::from_ptx_named("<tier: wide>", CHAIN, &CompileOptions::default()).unwrap();
        let kernel = module.kernel("k").unwrap();
        let want = chain_out(&reference, 8, 256);
        let k = compiled(&kernel);
        run_long_enough(&kernel);
        assert_eq!(chain_out(&kernel, 8, 256), want, "to the group form");
        assert!(kernel.finish_compiling());
        assert!(!kernel.settled(64), "not tried yet");
        until_tried(&kernel, || {
            assert_eq!(chain_out(&kernel, 8, 256), want, "in the trial");
        });
        assert!(k.trial.kept(), "the group form is many times faster");
        // Launches of blocks a multiple of 128 may still get a wide form; others not.
        assert!(!kernel.settled(256));
        assert!(kernel.settled(64));
        assert!(!k.wide.decided());
        // A minute in the group form: far more than sixteen times its compile.
        let minute = std::time::Duration::from_secs(60).as_nanos() as u64;
        k.second_tier_nanos.store(minute, Ordering::Relaxed);
        assert_eq!(chain_out(&kernel, 8, 256), want, "to the wide form");
        assert!(kernel.settled(256));
        assert!(k.wide.ready().is_some());
        assert_eq!(chain_out(&kernel, 8, 256), want, "in the wide form");
        // Its groups of 256 divide blocks of 512, not of 128 or 64, which run the group form.
        let form = |x| crate::tier::form_for(k, x).map(|f| f as usize);
        let (wide, grouped) = (k.wide.ready().unwrap(), k.grouped.ready().unwrap());
        assert_eq!(form(512), Some(wide as usize));
        assert_eq!(form(128), Some(grouped as usize));
        assert_eq!(chain_out(&kernel, 4, 512), want[..2048], "in the wide form");
        assert_eq!(chain_out(&kernel, 4, 128), want[..512], "in the group form");
        assert_eq!(
            chain_out(&kernel, 16, 64),
            want[..1024],
            "in the group form"
        );
    }

    #[test]
    fn a_kernel_that_does_not_widen_is_settled_once_its_group_form_is_tried() {
        let (_m, kernel) = fresh("<tier: not wide>");
        let wide = &compiled(&kernel).wide;
        assert!(wide.decided() && wide.ready().is_none());
        assert!(!kernel.settled(256));
        run_long_enough(&kernel);
        launch_and_check(&kernel, 8);
        until_tried(&kernel, || launch_and_check(&kernel, 8));
        assert!(kernel.settled(256));
    }

    /// Launches by `launch` until the kernel's trial of its group form has decided.
    fn until_tried(kernel: &Kernel, mut launch: impl FnMut()) {
        for _ in 0..1000 {
            if compiled(kernel).trial.decided() {
                return;
            }
            launch();
        }
        panic!("the trial never decided");
    }

    #[test]
    fn a_kernel_whose_group_form_was_slower_goes_back_to_one_thread_at_a_time() {
        let (_m, kernel) = fresh("<tier: declined>");
        let k = compiled(&kernel);
        run_long_enough(&kernel);
        launch_and_check(&kernel, 8);
        assert!(kernel.finish_compiling());
        // Blocks of the group form timed slower than the one-thread form's.
        for _ in 0..crate::tier::TRIAL_BLOCKS {
            k.trial.record_one_thread_and_group(1000, 2000);
        }
        assert!(k.trial.declined());
        assert!(!kernel.finish_compiling());
        assert!(kernel.settled(256));
        launch_and_check(&kernel, 8);
        launch_and_check(&kernel, 3);
    }

    #[test]
    fn a_launch_of_blocks_narrower_than_the_widest_group_tries_nothing() {
        let (_m, kernel) = fresh("<tier: narrow trial>");
        run_long_enough(&kernel);
        launch_and_check(&kernel, 8);
        assert!(kernel.finish_compiling());
        let out = DeviceBuffer::zeroed(64 * 32 * 4).unwrap();
        for _ in 0..10 {
            kernel.launch(64, 32, &[Arg::buffer(&out)]).unwrap();
        }
        assert!(!compiled(&kernel).trial.decided());
    }

    #[test]
    fn a_kernel_due_by_the_floor_is_sized_then_compiled_if_still_due() {
        let (m, kernel) = fresh("<tier: sized>");
        let k = compiled(&kernel);
        let floor = k.group_compile_estimate();
        assert_eq!(floor, k.compile_time * jit::GROUP_COMPILE_FLOOR);
        k.first_tier_nanos
            .store(floor.as_nanos() as u64, Ordering::Relaxed);
        launch_and_check(&kernel, 8);
        // Its estimate is now its lowered size's, which decided.
        let size = m
            .inner
            .compiled
            .grouped_ir_size(&m.inner.checked, k.function, 256, false)
            .unwrap()
            .unwrap();
        assert!(size > k.ir_size, "{size} instructions for 64 lanes");
        assert_eq!(
            k.group_estimate.get(),
            Some(&k.group_compile_time_for(size))
        );
        let due = floor >= k.group_compile_estimate();
        assert_eq!(kernel.finish_compiling(), due);
    }

    /// Hands each block over at its first poll at or after `at` threads; asks to be polled
    /// as often as a block may be handed over.
    struct HandOverAt {
        at: u32,
        to: ptxjit_runtime::BlockFn,
        polls: std::sync::Mutex<Vec<u32>>,
    }

    impl ptxjit_runtime::Upgrade for HandOverAt {
        fn block_fn(&self) -> Poll {
            Poll::At(1)
        }

        fn poll(&self, done: u32) -> Poll {
            assert_eq!(done % HANDOVER_ALIGN, 0, "polled at {done}");
            self.polls.lock().unwrap().push(done);
            if done < self.at {
                // (Rounded up to the next multiple of 64.)
                return Poll::At(done + 1);
            }
            Poll::HandOver(self.to)
        }
    }

    #[test]
    fn a_block_handed_over_between_threads_runs_each_thread_once() {
        // Out[i] += i + 1 (i + 1 summed in a loop: a kernel that polls has one); a thread run
        // twice or never shows.
        let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .visible .entry k(.param .u64 out) {\n.reg .pred %p1;\n.reg .b32 %r<8>;\n\
            .reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\n\
            mov.u32 %r2, %tid.y;\nmov.u32 %r3, %ntid.x;\nmad.lo.u32 %r1, %r2, %r3, %r1;\n\
            mul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd1, %rd1, %rd2;\nmov.u32 %r5, 1;\n\
            mov.u32 %r6, 0;\nLOOP:\nadd.u32 %r5, %r5, %r1;\nadd.u32 %r6, %r6, 1;\n\
            setp.lt.u32 %p1, %r6, 1;\n@%p1 bra LOOP;\nld.global.u32 %r4, [%rd1];\n\
            add.u32 %r4, %r4, %r5;\nst.global.u32 [%rd1], %r4;\nret;\n}\n";
        let module =
            Module::from_ptx_named("<tier: hand-over>", ptx, &CompileOptions::default()).unwrap();
        let kernel = module.kernel("k").unwrap();
        let k = compiled(&kernel);
        // Groups of 64 lanes (x = 256), of 32 (x = 96), none (x = 40: the group form's
        // one-thread code from the thread handed over at).
        for (x, at) in [(256u32, 320u32), (96, 64), (96, 130), (40, 64)] {
            let block = Dim3::new(x, 4, 1);
            let to = module
                .inner
                .compiled
                .compile_grouped(&module.inner.checked, k.function, x, false)
                .unwrap()
                .unwrap();
            let upgrade = HandOverAt {
                at,
                to,
                polls: Default::default(),
            };
            let threads = block.count() as usize;
            let out = DeviceBuffer::zeroed(threads * 4).unwrap();
            let mut params = [ptxjit_runtime::Line::default()];
            params[0].0[0] = out.address();
            let config = LaunchConfig {
                grid: Dim3::new(1, 1, 1),
                block,
                dynamic_shared_bytes: 0,
                cluster: None,
                cooperative: false,
            };
            let options = ptxjit_runtime::LaunchOptions {
                upgrade: Some(&upgrade),
                ..Default::default()
            };
            // SAFETY: both forms were compiled from this kernel, whose one parameter is the
            // pointer at the buffer's start.
            unsafe {
                ptxjit_runtime::launch_scheduled(
                    k.func,
                    &config,
                    ptxjit_runtime::Line::bytes_mut(&mut params),
                    0,
                    None,
                    &options,
                )
            }
            .unwrap()
            .unwrap();
            let want: Vec<u32> = (1..=threads as u32).collect();
            assert_eq!(out.to_vec::<u32>(), want, "x = {x}, handed over at {at}");
            let every_64_up_to_at: Vec<u32> = (1..=at.div_ceil(HANDOVER_ALIGN))
                .map(|k| k * HANDOVER_ALIGN)
                .collect();
            assert_eq!(*upgrade.polls.lock().unwrap(), every_64_up_to_at);
        }
    }

    #[test]
    fn a_failing_second_tier_compile_leaves_the_first_tier_running() {
        let (_m, kernel) = fresh("<tier: failing>");
        run_long_enough(&kernel);
        // (The flag is read on the launching thread and set on the compiling worker.)
        jit::tests::FAIL_GROUPED.set(true);
        launch_and_check(&kernel, 8);
        jit::tests::FAIL_GROUPED.set(false);
        assert!(!kernel.finish_compiling());
        let grouped = &compiled(&kernel).grouped;
        assert!(grouped.decided() && grouped.ready().is_none());
        // Not retried: the one-thread form runs on.
        launch_and_check(&kernel, 8);
        let grouped = &compiled(&kernel).grouped;
        assert!(grouped.decided() && grouped.ready().is_none());
    }
}
