//! Launch configuration, the block context handed to compiled code, and the grid executor.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use rayon::prelude::*;

use crate::cluster::{ClusterPlace, MAX_CLUSTER_BLOCKS};
use crate::{RuntimeError, workers};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    pub fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3::new(x, 1, 1)
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    /// Bytes of `.extern .shared` memory per block.
    pub dynamic_shared_bytes: u32,
    /// Blocks per cluster (sm_90), when the launch gives them (see `crate::cluster`).
    pub cluster: Option<Dim3>,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): its blocks may wait for each
    /// other at the grid barrier (see [`Cooperation::grid_wide`]).
    pub cooperative: bool,
}

/// Limits of a compute-capability 8.x/9.x device.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
/// Shared memory per block, static plus dynamic: an sm_90 GPU's 227 KiB (with the opt-in
/// `cudaFuncAttributeMaxDynamicSharedMemorySize`), so what runs on an H100 runs here, and no
/// launch makes every block zero gigabytes.
pub const MAX_SHARED_BYTES: u64 = 227 << 10;
pub const MAX_BLOCK: Dim3 = Dim3::new(1024, 1024, 64);
const MAX_GRID: Dim3 = Dim3::new(i32::MAX as u32, 65535, 65535);

/// Whether a block of `b` threads can exist: 1 to [`MAX_THREADS_PER_BLOCK`] threads, each
/// dimension within [`MAX_BLOCK`].
pub fn block_fits(b: Dim3) -> bool {
    (1..=MAX_THREADS_PER_BLOCK).contains(&b.count())
        && b.x <= MAX_BLOCK.x
        && b.y <= MAX_BLOCK.y
        && b.z <= MAX_BLOCK.z
}

/// What [`block_fits`] requires, for messages.
pub fn block_limits() -> String {
    let m = MAX_BLOCK;
    format!(
        "a block has 1 to {MAX_THREADS_PER_BLOCK} threads, at most ({}, {}, {})",
        m.x, m.y, m.z
    )
}

impl LaunchConfig {
    pub fn validate(&self) -> Result<(), RuntimeError> {
        let bad = |msg: String| Err(RuntimeError::InvalidConfig(msg));
        let (g, b) = (self.grid, self.block);
        if g.count() == 0 {
            return bad(format!("grid {g:?} must have no zero dimension"));
        }
        if !block_fits(b) {
            return bad(format!(
                "{} threads per block in {b:?}: {}",
                b.count(),
                block_limits()
            ));
        }
        if self.dynamic_shared_bytes as u64 > MAX_SHARED_BYTES {
            return bad(format!(
                "{} bytes of dynamic shared memory exceeds the limit of {MAX_SHARED_BYTES}",
                self.dynamic_shared_bytes
            ));
        }
        if g.x > MAX_GRID.x || g.y > MAX_GRID.y || g.z > MAX_GRID.z {
            return bad(format!("grid {g:?} exceeds the limit {MAX_GRID:?}"));
        }
        if let Some(c) = self.cluster {
            if !(1..=MAX_CLUSTER_BLOCKS).contains(&c.count()) {
                return bad(format!(
                    "cluster {c:?} must have 1 to {MAX_CLUSTER_BLOCKS} blocks"
                ));
            }
            if g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0 {
                return bad(format!(
                    "grid {g:?} is not a whole number of clusters {c:?}"
                ));
            }
        }
        Ok(())
    }
}

/// What compiled code receives for one block. The field layout is the contract with the code
/// generator, which reads fields at their `offset_of!` offsets.
#[repr(C)]
#[derive(Debug)]
pub struct BlockContext {
    /// The kernel's parameter buffer (laid out as the `.entry` declares).
    pub params: *const u8,
    /// This block's shared memory: static variables first, then the dynamic part.
    pub shared: *mut u8,
    pub ctaid: [u32; 3],
    pub nctaid: [u32; 3],
    pub ntid: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// Cooperative launches: the saved state of every thread of the block (`frame_bytes`
    /// each, in thread rank order); null otherwise.
    pub frames: *mut u8,
    /// Set when the launch must stop (its timeout passed): compiled code checks it at every
    /// backward branch and returns [`Status::TIMEOUT`].
    pub abort: *const AtomicBool,
    /// Written by compiled code before it returns [`Status::ILLEGAL_ADDRESS`] or
    /// [`Status::MISALIGNED`]: the address, and [`Fault::detail`].
    pub fault_address: Cell<u64>,
    pub fault_detail: Cell<u64>,
    /// Compiled functions return [`Status::STACK_OVERFLOW`] when the stack pointer is below
    /// this (deep recursion in `.func`s), instead of overflowing the worker's stack.
    pub stack_limit: u64,
    pub cluster: ClusterPlace,
    /// The shared memory of the cluster's block of rank 0; rank r's is `shared_stride` × r
    /// bytes further (this block's is `shared`).
    pub cluster_shared: *mut u8,
    pub shared_stride: u64,
    /// 1 in a cooperative launch ([`LaunchConfig::cooperative`]), else 0.
    pub cooperative: u32,
    /// The thread (x, y, z) the block function starts at: (0, 0, 0), or where a hand-over
    /// (below) left the block. Written by compiled code before it polls.
    pub start: [Cell<u32>; 3],
    /// How many of the block's threads a block function that can hand its block over has
    /// finished when it next calls [`ptxjit_poll_upgrade`] (`u32::MAX`: never); a multiple
    /// of [`HANDOVER_ALIGN`].
    pub poll_at: Cell<u32>,
    /// The launch's [`Upgrade`], if it has one: a `*const Option<&dyn Upgrade>`, for
    /// [`ptxjit_poll_upgrade`].
    pub upgrade: *const (),
    /// Set by [`ptxjit_poll_upgrade`] when it says hand over: the form to go on with.
    pub handover: Cell<Option<BlockFn>>,
}

/// A block is handed over only where a multiple of this many of its threads (in their
/// order: x fastest, then y, then z) have finished: a multiple of every lane group's width,
/// so that the group form can start there.
pub const HANDOVER_ALIGN: u32 = 64;

/// The answer to a block function's poll ([`Upgrade::poll`]).
#[derive(Clone, Copy, Debug)]
pub enum Poll {
    /// Stop: this form runs the rest of the block.
    HandOver(BlockFn),
    /// Go on, and ask again when this many of the block's threads have finished (`u32::MAX`:
    /// never; rounded up to a multiple of [`HANDOVER_ALIGN`]).
    At(u32),
}

/// `at` rounded up to where a block may be handed over.
fn poll_point(at: u32) -> u32 {
    at.checked_next_multiple_of(HANDOVER_ALIGN)
        .unwrap_or(u32::MAX)
}

/// Called by a block function that can hand its block over, when `done` (`poll_at`) of its
/// threads have finished, with the next thread in `start`: 1 if the block function must
/// return [`Status::HANDOVER`] (the form in `handover` then runs the rest of the block, from
/// `start`), else 0 (with `poll_at` set anew).
///
/// # Safety
/// `ctx` must be the context the executor passed to the calling block function.
pub unsafe extern "C" fn ptxjit_poll_upgrade(ctx: *const BlockContext, done: u32) -> u32 {
    // SAFETY: by the caller's promise; `upgrade` is null or points at the launch's options'
    // `upgrade`, which outlives the launch's blocks.
    let (ctx, upgrade) = unsafe {
        let ctx = &*ctx;
        (ctx, ctx.upgrade.cast::<Option<&dyn Upgrade>>().as_ref())
    };
    match upgrade.copied().flatten().map(|u| u.poll(done)) {
        Some(Poll::HandOver(f)) => {
            ctx.handover.set(Some(f));
            1
        }
        Some(Poll::At(at)) => {
            ctx.poll_at.set(poll_point(at));
            0
        }
        None => {
            ctx.poll_at.set(u32::MAX);
            0
        }
    }
}

/// Stack the executor's own frames may take above a block function's allowance when a block
/// runs on its caller's thread.
const EXECUTOR_STACK_BYTES: u64 = 256 << 10;

/// How many ranges of units a worker's share of a grid is cut into where blocks are stolen
/// (`run_grid`).
const RUNS_PER_WORKER: u64 = 256;

/// 128 bytes aligned to 128: the unit of a block's shared memory and of a kernel's parameter
/// buffer, so that an object's alignment in those spaces (a tensor map's 64 bytes, a swizzled
/// box's 128) is that of its host address.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(128))]
pub struct Line(pub [u64; 16]);

impl Line {
    /// Zeroed lines holding at least `bytes` bytes.
    pub fn zeroed(bytes: usize) -> Vec<Line> {
        vec![Line::default(); bytes.div_ceil(size_of::<Line>())]
    }

    pub fn bytes_mut(lines: &mut [Line]) -> &mut [u8] {
        let len = size_of_val(lines);
        // SAFETY: a line is 128 plain bytes, no padding; u8 has alignment 1.
        unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr() as *mut u8, len) }
    }
}

/// Stack a block function may use below the runtime's frame (workers have twice this:
/// [`workers::STACK_BYTES`](crate::workers::STACK_BYTES)).
pub const KERNEL_STACK_BYTES: u64 = 1 << 20;

/// What a faulting access was, as compiled code packs it into `fault_detail`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub address: u64,
    /// Bytes accessed.
    pub width: u32,
    pub is_store: bool,
    /// `address` is an offset in the block's shared memory.
    pub shared: bool,
    /// `address` is a `.shared::cluster` address (a window and an offset).
    pub cluster: bool,
    /// The thread's rank in its block.
    pub thread: u32,
}

impl Fault {
    /// `width | is_store << 8 | shared << 9 | thread << 32`.
    pub fn detail(width: u32, is_store: bool, shared: bool, thread: u32) -> u64 {
        width as u64 & 0xFF | (is_store as u64) << 8 | (shared as u64) << 9 | (thread as u64) << 32
    }

    /// Set in a detail word (with `shared`) when the address is a `.shared::cluster` one.
    pub const CLUSTER_WINDOW: u64 = 1 << 10;

    fn decode(address: u64, detail: u64) -> Fault {
        Fault {
            address,
            width: (detail & 0xFF) as u32,
            is_store: detail >> 8 & 1 == 1,
            shared: detail >> 9 & 1 == 1,
            cluster: detail & Fault::CLUSTER_WINDOW != 0,
            thread: (detail >> 32) as u32,
        }
    }
}

/// A compiled block function: runs every thread of one block, returns a [`Status`] word.
pub type BlockFn = unsafe extern "C" fn(*const BlockContext) -> u64;

/// Why a block stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusKind {
    /// Internal: the thread executed `exit` inside a called function.
    Exit,
    /// `trap`.
    Trap,
    /// A cooperative round ended (see [`Cooperation`]).
    Round,
    /// The launch's timeout passed.
    Timeout,
    /// An access outside device memory (or the block's shared memory, or the thread's local
    /// memory).
    IllegalAddress,
    /// An access not aligned to its width.
    Misaligned,
    /// Calls nested too deeply for the worker's stack.
    StackOverflow,
    /// A failed `assert` (a call of `__assertfail`).
    Assert,
    /// An indirect `call` through a value that is no function its prototype admits.
    BadCall,
    /// Internal: the block is handed over to a faster form ([`ptxjit_poll_upgrade`]).
    Handover,
    /// Any other code, reserved for later kinds.
    Other(u32),
}

/// The word a block function returns: 0 when every thread finished, otherwise the kind
/// (bits 56–63), the index of the function (bits 32–55) and of the instruction (bits 0–31)
/// that stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status(pub u64);

impl Status {
    pub const OK: u64 = 0;
    pub const EXIT: u32 = 1;
    pub const TRAP: u32 = 2;
    /// Cooperative block functions return this after every thread ran to its next
    /// synchronization point (or its end).
    pub const ROUND: u32 = 3;
    pub const TIMEOUT: u32 = 4;
    pub const ILLEGAL_ADDRESS: u32 = 5;
    pub const MISALIGNED: u32 = 6;
    pub const STACK_OVERFLOW: u32 = 7;
    /// CUDA's `assert` failed: the kernel called `__assertfail`.
    pub const ASSERT: u32 = 8;
    /// An indirect call through a pointer to no function its prototype admits.
    pub const BAD_CALL: u32 = 9;
    /// Internal: the block function stopped between two threads for a faster form to run
    /// the rest of the block ([`ptxjit_poll_upgrade`]).
    pub const HANDOVER: u32 = 10;

    pub fn encode(kind: u32, function: u32, inst: u32) -> u64 {
        (kind as u64) << 56 | ((function as u64) & 0xFF_FFFF) << 32 | inst as u64
    }

    pub fn kind(self) -> StatusKind {
        match (self.0 >> 56) as u32 {
            Status::EXIT => StatusKind::Exit,
            Status::TRAP => StatusKind::Trap,
            Status::ROUND => StatusKind::Round,
            Status::TIMEOUT => StatusKind::Timeout,
            Status::ILLEGAL_ADDRESS => StatusKind::IllegalAddress,
            Status::MISALIGNED => StatusKind::Misaligned,
            Status::STACK_OVERFLOW => StatusKind::StackOverflow,
            Status::ASSERT => StatusKind::Assert,
            Status::BAD_CALL => StatusKind::BadCall,
            Status::HANDOVER => StatusKind::Handover,
            k => StatusKind::Other(k),
        }
    }

    pub fn function(self) -> u32 {
        ((self.0 >> 32) & 0xFF_FFFF) as u32
    }

    pub fn instruction(self) -> u32 {
        self.0 as u32
    }
}

/// A block that stopped with a non-zero status.
#[derive(Clone, Copy, Debug)]
pub struct BlockFailure {
    pub status: Status,
    pub block: Dim3,
    /// For illegal and misaligned addresses: the access.
    pub fault: Option<Fault>,
}

/// Completes a cooperative round of one cluster's blocks (a single block when the launch
/// has no clusters; every block of a grid-wide cooperative launch): sees their frames (each block's `header_bytes + frame_bytes × threads`,
/// rounded up to 8 bytes, in rank order) and contexts; returns whether every block is
/// finished, or the rank of the block and the status word that end the launch.
pub type AfterRound<'a> =
    dyn Fn(&mut [u8], &[BlockContext]) -> Result<bool, (usize, u64)> + Sync + 'a;

/// How the threads of a block cooperate, for kernels with barriers or warp collectives.
///
/// The block function then runs in *rounds*: each call runs every thread from where it
/// stopped to its next synchronization point (saving its state in its frame) or to its end,
/// and returns [`Status::ROUND`]. After every block of the cluster has run its round,
/// `after_round` sees all their frames, performs what the waiting threads asked for
/// (releases a barrier, exchanges shuffled values) and says whether the cluster is finished;
/// an `Err` carries the status word that ends the launch.
pub struct Cooperation<'a> {
    /// Bytes before the frames, for state of the whole block (a multiple of 8).
    pub header_bytes: usize,
    /// Bytes of saved state per thread (a multiple of 8).
    pub frame_bytes: usize,
    /// The bytes of each frame the kernel writes before it reads them (the save slots of
    /// its registers, which a thread fills where it waits and reads where it resumes, and
    /// the words that pass operands and results), whole words: not zeroed between units of
    /// blocks, which zeroes the rest (Triton's and nvcc's frames are mostly slots: a fifth
    /// of nvcc's dot product's time went to zeroing them).
    pub written_first: std::ops::Range<usize>,
    pub after_round: &'a AfterRound<'a>,
    /// The kernel has grid barriers: in a cooperative launch, all the blocks of the grid run
    /// their rounds together (one unit of work, in cluster order), and `after_round` sees
    /// them all.
    pub grid_wide: bool,
}

/// How blocks are spread over the workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Blocks are tasks on a work-stealing pool: idle workers take work from busy ones.
    #[default]
    WorkStealing,
    /// Each worker gets an equal contiguous share of the blocks up front (for comparison).
    Static,
}

/// A faster form of a launch's block function that may become ready while the launch runs
/// (a second compile tier, compiled beside it): the executor asks before every block and
/// runs the blocks not yet started with it once it is there. A block function may also ask
/// between its threads ([`ptxjit_poll_upgrade`]) and hand the rest of its block over. In
/// cooperative launches, asked once before each unit of blocks that run their rounds
/// together (a cluster, or the grid), which all run the form it gives: a block resumes from
/// frames its own function laid out (the forms given must lay them out alike).
pub trait Upgrade: Sync {
    /// The function for the next block, if a faster one is ready, else the first poll's
    /// point for the block (see [`Poll::At`]). Called before every block of the launch: must
    /// be cheap.
    fn block_fn(&self) -> Poll;

    /// Asked by a block function when `done` of its block's threads have finished: the
    /// function for the rest of the block, if a faster one is ready (it must run the block
    /// from the context's `start`), or when to ask again.
    fn poll(&self, done: u32) -> Poll {
        let _ = done;
        Poll::At(u32::MAX)
    }
}

/// How a launch runs, beyond its configuration.
#[derive(Clone, Copy, Default)]
pub struct LaunchOptions<'a> {
    pub schedule: Schedule,
    /// Stop the launch (with [`Status::TIMEOUT`]) after this long; no worker stays busy.
    pub timeout: Option<Duration>,
    /// A faster block function to switch to when it is ready.
    pub upgrade: Option<&'a dyn Upgrade>,
}

/// Runs `func` for every block of the grid, blocks as tasks on a work-stealing pool of
/// [`workers`](crate::workers).
/// Returns when every block has finished, or with the first failure seen (blocks not yet
/// started are then skipped).
///
/// # Safety
/// `func` must be a block function that only touches memory reachable from `params` (laid out
/// as it expects), from the shared memory this function allocates (`static_shared_bytes`
/// plus the dynamic part of `config`) and, with `cooperation`, from the frames.
pub unsafe fn launch(
    func: BlockFn,
    config: &LaunchConfig,
    params: &[u8],
    static_shared_bytes: u32,
    cooperation: Option<&Cooperation>,
) -> Result<Result<(), BlockFailure>, RuntimeError> {
    // SAFETY: the caller's guarantees are passed on.
    unsafe {
        launch_scheduled(
            func,
            config,
            params,
            static_shared_bytes,
            cooperation,
            &LaunchOptions::default(),
        )
    }
}

/// [`launch`] with [`LaunchOptions`]: a choice of [`Schedule`], a timeout, an [`Upgrade`].
///
/// # Safety
/// As for [`launch`], and the same of the functions an upgrade gives.
pub unsafe fn launch_scheduled(
    func: BlockFn,
    config: &LaunchConfig,
    params: &[u8],
    static_shared_bytes: u32,
    cooperation: Option<&Cooperation>,
    options: &LaunchOptions,
) -> Result<Result<(), BlockFailure>, RuntimeError> {
    config.validate()?;
    let shared = static_shared_bytes as u64 + config.dynamic_shared_bytes as u64;
    if shared > MAX_SHARED_BYTES {
        return Err(RuntimeError::InvalidConfig(format!(
            "{static_shared_bytes} bytes of static and {} of dynamic shared memory exceed the \
             limit of {MAX_SHARED_BYTES} a block",
            config.dynamic_shared_bytes
        )));
    }
    let abort = AtomicBool::new(false);
    // SAFETY (both calls): the caller's guarantees are passed on.
    let run = || unsafe {
        run_grid(
            func,
            config,
            params,
            static_shared_bytes,
            cooperation,
            options,
            &abort,
        )
    };
    let Some(timeout) = options.timeout else {
        return Ok(run());
    };
    // A watchdog raises the abort flag when the timeout passes, unless the grid is done.
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            let (lock, cv) = &done;
            let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = cv
                .wait_timeout_while(guard, timeout, |finished| !*finished)
                .unwrap_or_else(|e| e.into_inner());
            if !*guard {
                abort.store(true, Ordering::Relaxed);
            }
        });
        let result = run();
        *done.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        done.1.notify_all();
        Ok(result)
    })
}

/// Per worker: the shared memory, frames and contexts of the cluster it runs.
/// Zeroes the headers and frames of a unit's blocks (`frames`, `block_words` a block) for
/// its next blocks, but for each frame's part the kernel writes before it reads
/// ([`Cooperation::written_first`]).
fn clear_frames(frames: &mut [u64], c: &Cooperation, block_words: usize, threads: usize) {
    let kept = &c.written_first;
    if kept.is_empty() {
        frames.fill(0);
        return;
    }
    // (In words: the header and frames are whole words, and so is what a frame keeps.)
    debug_assert!(c.header_bytes.is_multiple_of(8) && c.frame_bytes.is_multiple_of(8));
    let (header, frame) = (c.header_bytes / 8, c.frame_bytes / 8);
    let kept = kept.start / 8..kept.end.div_ceil(8);
    for block in frames.chunks_mut(block_words) {
        let (h, rest) = block.split_at_mut(header);
        h.fill(0);
        // What lies between one frame's kept words and the next's is one stretch.
        let frames = &mut rest[..frame * threads];
        zero(&mut frames[..kept.start]);
        for t in 0..threads {
            let gap = t * frame + kept.end..((t + 1) * frame + kept.start).min(frames.len());
            zero(&mut frames[gap]);
        }
    }
}

/// Zeroes `words`: a few (a frame's state words) by stores, not a call of `memset` each
/// (nvcc's dot product zeroes 256 such stretches a block: 3.14 → 2.94 ms).
fn zero(words: &mut [u64]) {
    if words.len() <= 8 {
        for w in words {
            // SAFETY: a valid reference. (Volatile, so that the loop stays stores.)
            unsafe { std::ptr::write_volatile(w, 0) };
        }
    } else {
        words.fill(0);
    }
}

type Scratch = (Vec<Line>, Vec<u64>, Vec<BlockContext>);

/// The grid itself (see [`launch_scheduled`]); stops early once `abort` is set. The unit of
/// work is a cluster: its blocks run on one worker, round by round when they cooperate, so
/// that they can wait for each other and reach each other's shared memory.
///
/// # Safety
/// As for [`launch`].
unsafe fn run_grid(
    func: BlockFn,
    config: &LaunchConfig,
    params: &[u8],
    static_shared_bytes: u32,
    cooperation: Option<&Cooperation>,
    options: &LaunchOptions,
    abort: &AtomicBool,
) -> Result<(), BlockFailure> {
    let shared_bytes = static_shared_bytes as usize + config.dynamic_shared_bytes as usize;
    // Each block's shared memory starts on a line, as on its own.
    let stride = shared_bytes.next_multiple_of(size_of::<Line>());
    let (g, b) = (config.grid, config.block);
    let cluster_size = config.cluster_dims().count() as usize;
    // The unit of work: a cluster, or the whole grid when its blocks wait for each other.
    let grid_wide = config.cooperative && cooperation.is_some_and(|c| c.grid_wide);
    let size = if grid_wide {
        g.count() as usize
    } else {
        cluster_size
    };
    let clusters = g.count() / size as u64;
    let frame_words = cooperation.map_or(0, |c| {
        (c.header_bytes + c.frame_bytes * b.count() as usize).div_ceil(8)
    });
    // Raw pointers are not Send; pass the parameter buffer's address instead.
    let params_addr = params.as_ptr() as usize;
    let run_cluster = |scratch: &mut Scratch, index: u64| -> Result<(), BlockFailure> {
        let (shared, frames, ctxs) = scratch;
        let fail = |ctx: &BlockContext, status: u64| BlockFailure {
            status: Status(status),
            block: Dim3::new(ctx.ctaid[0], ctx.ctaid[1], ctx.ctaid[2]),
            // (Other kinds may describe themselves in the fault words too.)
            fault: matches!(
                Status(status).kind(),
                StatusKind::IllegalAddress | StatusKind::Misaligned | StatusKind::Other(_)
            )
            .then(|| Fault::decode(ctx.fault_address.get(), ctx.fault_detail.get())),
        };
        // Clusters not yet started when the launch is aborted do not start (the running ones
        // report where they stopped), and the failure makes rayon stop handing out the rest,
        // so a grid of 2^31 blocks ends with its timeout, not after skipping them one by one.
        if abort.load(Ordering::Relaxed) {
            return Err(aborted());
        }
        // Shared memory and frames start zeroed in every cluster, so results never depend on
        // scheduling.
        shared.iter_mut().for_each(|w| *w = Line::default());
        if let Some(c) = cooperation {
            clear_frames(frames, c, frame_words, b.count() as usize);
        }
        // The stack below this frame, minus the allowance, is the kernel's limit.
        let here = std::hint::black_box(&index) as *const u64 as u64;
        let cluster_shared = shared.as_mut_ptr() as *mut u8;
        let frames_base = frames.as_mut_ptr();
        let frames_bytes = frames.len() * 8;
        let context = |rank: usize| {
            // (In a grid-wide unit, `rank` counts blocks of the grid in cluster order.)
            let cluster = index * (size / cluster_size) as u64 + (rank / cluster_size) as u64;
            let (ctaid, place) = config.cluster_block(cluster, (rank % cluster_size) as u32);
            let first_of_cluster = rank / cluster_size * cluster_size;
            BlockContext {
                params: params_addr as *const u8,
                shared: cluster_shared.wrapping_add(rank * stride),
                ctaid,
                nctaid: [g.x, g.y, g.z],
                ntid: [b.x, b.y, b.z],
                dynamic_shared_bytes: config.dynamic_shared_bytes,
                frames: if frame_words == 0 {
                    std::ptr::null_mut()
                } else {
                    frames_base.wrapping_add(rank * frame_words) as *mut u8
                },
                abort,
                fault_address: Cell::new(0),
                fault_detail: Cell::new(0),
                stack_limit: here.saturating_sub(KERNEL_STACK_BYTES),
                cluster: place,
                cluster_shared: cluster_shared.wrapping_add(first_of_cluster * stride),
                shared_stride: stride as u64,
                cooperative: config.cooperative as u32,
                start: Default::default(),
                poll_at: Cell::new(u32::MAX),
                upgrade: (&raw const options.upgrade).cast(),
                handover: Cell::new(None),
            }
        };
        let run = |ctxs: &[BlockContext]| {
            let Some(c) = cooperation else {
                for ctx in ctxs {
                    let mut func = func;
                    match options.upgrade.map(|u| u.block_fn()) {
                        Some(Poll::HandOver(f)) => func = f,
                        Some(Poll::At(at)) => ctx.poll_at.set(poll_point(at)),
                        None => {}
                    }
                    loop {
                        // SAFETY: the caller guarantees `func` (and an upgrade) is a block
                        // function for this context.
                        match unsafe { func(ctx) } {
                            Status::OK => break,
                            s if Status(s).kind() == StatusKind::Handover => {
                                func = ctx.handover.take().expect("set by the poll");
                            }
                            s => return Err(fail(ctx, s)),
                        }
                    }
                }
                return Ok(());
            };
            // A cooperative block resumes from the frames its function laid out, so its form
            // is asked for once, before its first round (each form lays out frames alike, so
            // `after_round` reads either).
            let func = match options.upgrade.map(|u| u.block_fn()) {
                Some(Poll::HandOver(f)) => f,
                _ => func,
            };
            loop {
                for ctx in ctxs {
                    // SAFETY: as above.
                    let status = unsafe { func(ctx) };
                    if Status(status).kind() != StatusKind::Round {
                        return Err(fail(ctx, status));
                    }
                }
                // SAFETY: the frames are this worker's buffer; no block function is running.
                let bytes =
                    unsafe { std::slice::from_raw_parts_mut(frames_base as *mut u8, frames_bytes) };
                match (c.after_round)(bytes, ctxs) {
                    Ok(true) => return Ok(()),
                    // (A kernel that never finishes loops, and its loops poll `abort`.)
                    Ok(false) => continue,
                    // (`after_round` may describe the failure in the fault words.)
                    Err((rank, s)) => return Err(fail(&ctxs[rank], s)),
                }
            }
        };
        // A block on its own needs no list (nor its allocation, on the path of every launch).
        if size == 1 {
            return run(std::slice::from_ref(&context(0)));
        }
        ctxs.clear();
        ctxs.extend((0..size).map(context));
        run(ctxs)
    };
    // A block that ran and failed says more than a block skipped after the abort, whichever
    // rayon reports: the first such failure is kept here.
    let ran_and_failed: Mutex<Option<BlockFailure>> = Mutex::new(None);
    let run_cluster = |scratch: &mut Scratch, index: u64| {
        run_cluster(scratch, index).inspect_err(|f| {
            if f.status != aborted().status {
                let mut first = ran_and_failed.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(*f);
            }
        })
    };
    let scratch = || {
        let lines = (stride * size).div_ceil(size_of::<Line>());
        (
            vec![Line::default(); lines],
            vec![0u64; frame_words * size],
            Vec::new(),
        )
    };
    // One cluster cannot run in parallel: on the caller's thread if its stack has the room
    // the kernel may use, plus the executor's own frames.
    if clusters == 1 && workers::room_here(KERNEL_STACK_BYTES + EXECUTOR_STACK_BYTES) {
        return run_cluster(&mut scratch(), 0);
    }
    // The grid cut into ranges of consecutive units: one a worker (`Static`), or
    // `RUNS_PER_WORKER` a worker (`WorkStealing`; a unit each in a smaller grid), so that
    // rayon's cost an item (tens of ns) is paid once a range in a grid of many short blocks,
    // while stealing still evens out uneven ones.
    let worker_count = workers::count() as u64;
    let ranges = match options.schedule {
        Schedule::Static => worker_count,
        Schedule::WorkStealing => clusters.min(worker_count * RUNS_PER_WORKER),
    };
    // (Range k's first unit; in 128 bits, since a grid's units may number up to 2^63.)
    let start = |k: u64| (u128::from(clusters) * u128::from(k) / u128::from(ranges)) as u64;
    let result = workers::run(|| {
        (0..ranges)
            .into_par_iter()
            .try_for_each_init(scratch, |s, k| {
                (start(k)..start(k + 1)).try_for_each(|c| run_cluster(s, c))
            })
    });
    if let Some(failure) = ran_and_failed
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
    {
        return Err(failure);
    }
    // Aborted between clusters: no block saw it, but the grid is not complete.
    result.and_then(|()| match abort.load(Ordering::Relaxed) {
        true => Err(aborted()),
        false => Ok(()),
    })
}

/// The failure of a launch aborted before a block started.
fn aborted() -> BlockFailure {
    BlockFailure {
        status: Status(Status::encode(Status::TIMEOUT, 0, u32::MAX)),
        block: Dim3::new(0, 0, 0),
        fault: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

    static BLOCKS_RUN: AtomicU64 = AtomicU64::new(0);

    unsafe extern "C" fn count_blocks(ctx: *const BlockContext) -> u64 {
        let ctx = unsafe { &*ctx };
        assert_eq!(ctx.ntid, [4, 2, 1]);
        BLOCKS_RUN.fetch_add(
            1 + ctx.ctaid[0] as u64 + 100 * ctx.ctaid[1] as u64,
            Ordering::Relaxed,
        );
        0
    }

    unsafe extern "C" fn trap_in_block_3(ctx: *const BlockContext) -> u64 {
        if unsafe { (*ctx).ctaid[0] } == 3 {
            Status::encode(Status::TRAP, 2, 7)
        } else {
            0
        }
    }

    #[test]
    fn every_block_of_the_grid_runs_once() {
        let cfg = LaunchConfig {
            grid: Dim3::new(5, 3, 1),
            block: Dim3::new(4, 2, 1),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        unsafe { launch(count_blocks, &cfg, &[], 0, None) }
            .unwrap()
            .unwrap();
        // sum over x<5, y<3 of (1 + x + 100y) = 15 + 30 + 100*5*3
        assert_eq!(BLOCKS_RUN.load(Ordering::Relaxed), 15 + 30 + 1500);
    }

    /// How often each block of `a_grid_cut_into_runs_runs_each_block_once` ran.
    static RUN_COUNTS: [AtomicU8; 100_000] = [const { AtomicU8::new(0) }; 100_000];

    unsafe extern "C" fn count_each_block(ctx: *const BlockContext) -> u64 {
        let ctx = unsafe { &*ctx };
        let i = ctx.ctaid[0] as usize + 1_000 * ctx.ctaid[1] as usize;
        RUN_COUNTS[i].fetch_add(1, Ordering::Relaxed);
        0
    }

    #[test]
    fn a_grid_cut_into_runs_runs_each_block_once() {
        // Ranges of more than one block (up to 195 workers), of 195 or 196 blocks with 2.
        let cfg = LaunchConfig {
            grid: Dim3::new(1_000, 100, 1),
            block: Dim3::new(1, 1, 1),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        let blocks = 100_000;
        assert!(blocks >= 2 * RUNS_PER_WORKER as usize * workers::count());
        unsafe { launch(count_each_block, &cfg, &[], 0, None) }
            .unwrap()
            .unwrap();
        let counts: Vec<u8> = RUN_COUNTS[..blocks]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        assert!(counts.iter().all(|&c| c == 1));
    }

    #[test]
    fn a_failing_block_is_reported_with_its_index() {
        let cfg = LaunchConfig {
            grid: Dim3::new(8, 1, 1),
            block: Dim3::new(1, 1, 1),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        let failure = unsafe { launch(trap_in_block_3, &cfg, &[], 0, None) }
            .unwrap()
            .unwrap_err();
        assert_eq!(failure.block, Dim3::new(3, 0, 0));
        assert_eq!(failure.status.kind(), StatusKind::Trap);
        assert_eq!(failure.status.function(), 2);
        assert_eq!(failure.status.instruction(), 7);
    }

    /// Which form ran each block of `blocks_started_after_an_upgrade_is_ready_run_it`.
    static FORM_RUN: [AtomicU8; 64] = [const { AtomicU8::new(0) }; 64];

    unsafe extern "C" fn first_form(ctx: *const BlockContext) -> u64 {
        FORM_RUN[unsafe { (*ctx).ctaid[0] } as usize].store(1, Ordering::Relaxed);
        0
    }

    unsafe extern "C" fn faster_form(ctx: *const BlockContext) -> u64 {
        FORM_RUN[unsafe { (*ctx).ctaid[0] } as usize].store(2, Ordering::Relaxed);
        0
    }

    /// Ready after `after` blocks have asked.
    struct ReadyAfter {
        after: u64,
        asked: AtomicU64,
    }

    impl Upgrade for ReadyAfter {
        fn block_fn(&self) -> Poll {
            let asked = self.asked.fetch_add(1, Ordering::Relaxed);
            match asked >= self.after {
                true => Poll::HandOver(faster_form),
                false => Poll::At(u32::MAX),
            }
        }
    }

    #[test]
    fn blocks_started_after_an_upgrade_is_ready_run_it() {
        let cfg = LaunchConfig {
            grid: Dim3::new(64, 1, 1),
            block: Dim3::new(1, 1, 1),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        let upgrade = ReadyAfter {
            after: 10,
            asked: AtomicU64::new(0),
        };
        let options = LaunchOptions {
            upgrade: Some(&upgrade),
            ..LaunchOptions::default()
        };
        unsafe { launch_scheduled(first_form, &cfg, &[], 0, None, &options) }
            .unwrap()
            .unwrap();
        assert_eq!(
            upgrade.asked.load(Ordering::Relaxed),
            64,
            "asked once a block"
        );
        let ran = |form| {
            FORM_RUN
                .iter()
                .filter(|f| f.load(Ordering::Relaxed) == form)
                .count()
        };
        assert_eq!((ran(1), ran(2)), (10, 54));
    }

    #[test]
    fn oversized_block_is_rejected() {
        let cfg = LaunchConfig {
            grid: Dim3::new(1, 1, 1),
            block: Dim3::new(1025, 1, 1),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        assert!(unsafe { launch(count_blocks, &cfg, &[], 0, None) }.is_err());
    }
}
