//! The later compile tiers of [`LaneGroups::WhenHot`](crate::LaneGroups::WhenHot): when a
//! kernel's lane-group form is compiled, and how launches switch to it; and the third, a
//! wide group form for the kernels that gain by one ([`ThirdTier`]).
//!
//! A kernel's launches run its one-thread form until one of them, asking before a block or
//! within one (below), finds either
//! - that the kernel's earlier launches have run in that form for as long as the group form
//!   is expected to take to compile ([`CompiledKernel::group_compile_estimate`]): a ski
//!   rental, so that a kernel of many short launches pays at most about twice what knowing
//!   its future would have, when the estimate is right; or
//! - that what is left of this launch, at the asking worker's fastest pace, would take the
//!   one-thread form [`PAYBACK`] times that estimate: the group form (4–7 times faster on
//!   the bench's kernels) then repays its compile within this launch. (A worker's own
//!   pace, not the launch's elapsed time; the fastest so far, since a worker of a loaded
//!   machine is sometimes preempted.)
//!
//! A worker asks before each block and, within a block of a kernel with a loop, every
//! [`POLL_GAP`] or so, at the earliest after 64 threads (the one-thread form calls
//! `ptxjit_poll_upgrade`): its pace is the time a thread took since its last ask. Its first
//! 64 threads are enough to predict from; they also wait for the worker to wake and run
//! from cold caches, so the prediction errs towards compiling early, which a launch of few
//! long blocks needs. Once the group form is ready, a block in the one-thread form hands
//! the rest of its threads over to it at its next poll. (Asked only between blocks, the
//! bench's f16x2 fma chain in 8 blocks of 1,024 threads, 4 ms each, decided at a worker's
//! second block and then waited for the blocks begun meanwhile: its first launch took
//! 15–18 ms, now 4.3–6.0, `ptxjit run`.)
//!
//! The estimate: a group form's compile takes 3.6–75 times its one-thread form's (vector
//! forms of some instructions are large, and an instruction without one is emitted once a
//! lane), but per Cranelift instruction it takes 0.27–0.98 times as long. So the rule first
//! asks with a floor (`GROUP_COMPILE_FLOOR` times the one-thread compile); when that says
//! compile, the worker lowers the group form without compiling it (a tenth of the compile's
//! time or less), takes the estimate from its size (`GROUP_COMPILE_PER_INSTRUCTION`), and
//! asks again. A fixed ratio (8, the median) was off by up to 6× each way.
//!
//! That worker compiles the group form while the others go on with the one-thread form, and
//! every block runs it from the next poll once it is ready. So a single long launch
//! (`ptxjit run`'s) switches part-way, and a short one never waits for a compile it would
//! not repay. A cooperative kernel's block resumes from frames its form laid out, so it
//! neither polls nor hands over: the form is asked for before each block (each unit of
//! blocks that run their rounds together), and the trial times such units.
//!
//! A kernel whose loop calls a group helper and never diverges (`lanes::widens`) gains
//! more from groups of 128 or 256 lanes (two or four times the independent steps a
//! helper's call: the f16x2 chain 6.5% at 128, 8–9% at 256), whose compile takes 1.4 or
//! 2.2 times the 64-lane form's: too little a gain to pay that in the launch that first
//! needs a group form (the bench's tier line measured 1.7–2.1 → 2.2–3.3 × the best form
//! with 128 lanes there), so a third tier compiles it once the 64-lane form has run long
//! enough to have repaid it ([`ThirdTier`]), for the widest groups that divide that
//! launch's blocks.
//!
//! Once compiled, the group form is tried before it is kept ([`Trial`]): an instruction
//! without a vector form runs lane by lane, moving its operands out of the vectors and
//! back, which can cost more than the one-thread form saves, and neither the form's size
//! nor its share of such instructions tells (measured on the corpus: the shares of forms
//! that gained and of forms that lost overlap). So the launches that first run the group
//! form time blocks of both forms, in turn, and the kernel keeps the faster for good.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ptxjit_runtime::{BlockFn, HANDOVER_ALIGN, Poll, Upgrade};

use crate::frontend::checked;
use crate::jit::{CompiledKernel, CompiledModule};
use crate::lower::lanes::{WIDEST, wide_width};

/// How much longer than the group form's compile the rest of a launch must promise to run
/// in the one-thread form for the compile to start at once. With a rest `R`, a compile `C`
/// on one of `W` workers (the others go on meanwhile) and a group form `s` times faster,
/// the launch then takes `C + (R − C(W−1)/W)/s`: less than `R` when `R > 1.5 C` if `s ≥ 3`
/// on one worker, `s ≥ 2` on two (the bench's kernels: 4–7). Every block, begun or not,
/// switches once the form is ready (the hand-over), so no block started in the one-thread
/// form holds the launch's end.
pub const PAYBACK: f64 = 1.5;

/// How often a block in the one-thread form asks, once its pace is known: a poll costs
/// 50–100 ns (a clock read, a few atomics), so about 0.5% of a block's time, while a ready
/// group form waits at most this long for a block to hand over.
pub const POLL_GAP: Duration = Duration::from_micros(20);

/// A later tier's form of a kernel (the group form, the wide one): whether a worker has
/// started its compile, and the form once decided (`None`: the kernel has none, or its
/// compile failed).
#[derive(Default)]
pub struct TierForm {
    started: AtomicBool,
    form: OnceLock<Option<BlockFn>>,
}

impl TierForm {
    /// A form the kernel will never have.
    pub fn none() -> TierForm {
        let form = TierForm::default();
        let _ = form.form.set(None);
        form
    }

    /// Whether the form is decided (compiled, or known not to come).
    pub fn decided(&self) -> bool {
        self.form.get().is_some()
    }

    /// The form, if compiled.
    pub fn ready(&self) -> Option<BlockFn> {
        self.form.get().copied().flatten()
    }

    /// Whether a worker has started its compile.
    pub fn started(&self) -> bool {
        self.started.load(Ordering::Relaxed)
    }

    /// Waits until its compile, if one has started, is done; returns the form if compiled.
    fn wait(&self) -> Option<BlockFn> {
        if self.started.load(Ordering::Acquire) {
            *self.form.wait()
        } else {
            self.ready()
        }
    }

    /// What a block asks of a decided form: run it, or stay with the one it has for good.
    fn poll(&self) -> Option<Poll> {
        self.form.get().map(|f| match *f {
            Some(form) => Poll::HandOver(form),
            None => Poll::At(u32::MAX),
        })
    }

    /// Compiles it by `compile` (which decides it) unless another worker has started to
    /// (then `meanwhile`): the form to run, or, where the compile failed, the form the block
    /// has, for good.
    fn compile_once(&self, compile: &dyn Fn() -> Option<BlockFn>, meanwhile: Poll) -> Poll {
        if self.started.swap(true, Ordering::AcqRel) {
            return meanwhile;
        }
        compile().map_or(Poll::At(u32::MAX), Poll::HandOver)
    }
}

/// A launch's way to the lane-group form of its kernel, while that form is not decided.
pub(crate) struct SecondTier<'a> {
    kernel: &'a CompiledKernel,
    started: Instant,
    /// The kernel's time in the one-thread form before this launch.
    spent: Duration,
    /// The launch's threads, a block's, the workers running them, and the threads finished
    /// as far as the asks have counted.
    threads: u64,
    block_threads: u64,
    workers: u64,
    finished: AtomicU64,
    /// Per worker: its last ask ([`Self::worker_slot`]).
    last_asked: Vec<Asked>,
    /// The fastest pace of any worker (see [`Asked`]).
    pace: AtomicU64,
    /// Compiles the group form (see [`compile`]) and returns it; sizes it (see [`size`]).
    compile: &'a (dyn Fn() -> Option<BlockFn> + Sync),
    size: &'a (dyn Fn() -> Duration + Sync),
}

impl<'a> SecondTier<'a> {
    /// For a launch of `blocks` blocks of `block_threads` threads of `kernel` that started at
    /// `started`; `None` when the kernel's form is decided (`kernel.grouped` then says which
    /// runs).
    pub fn new(
        kernel: &'a CompiledKernel,
        started: Instant,
        blocks: u64,
        block_threads: u64,
        compile: &'a (dyn Fn() -> Option<BlockFn> + Sync),
        size: &'a (dyn Fn() -> Duration + Sync),
    ) -> Option<SecondTier<'a>> {
        if kernel.grouped.decided() {
            return None;
        }
        let workers = ptxjit_runtime::workers::count();
        let threads = blocks.saturating_mul(block_threads);
        // (Few blocks and threads: no allocation on a short launch's path.)
        let timed = if blocks >= 4 || threads >= 4 * HANDOVER_ALIGN as u64 {
            workers + 1
        } else {
            0
        };
        Some(SecondTier {
            kernel,
            started,
            spent: Duration::from_nanos(kernel.first_tier_nanos.load(Ordering::Relaxed)),
            threads,
            block_threads,
            workers: workers as u64,
            finished: AtomicU64::new(0),
            last_asked: (0..timed).map(|_| Asked::default()).collect(),
            pace: AtomicU64::new(u64::MAX),
            compile,
            size,
        })
    }

    /// Counts the launch's `time` as the one-thread form's (blocks that ran the group form
    /// count too: it is decided then, and the count no longer matters).
    pub fn launched(&self, time: Duration) {
        add_nanos(&self.kernel.first_tier_nanos, time);
    }

    /// The rest of the launch in the one-thread form, at the asking worker's fastest pace so
    /// far (`None` at its first ask): asked at a block's start (`done` = `None`: the
    /// worker's block before, if any, has finished) or within a block, `done` of its threads
    /// finished.
    fn rest(&self, done: Option<u64>) -> Option<Duration> {
        let now = self.now();
        let asked = self.worker_slot()?;
        // (Each worker writes its own slot only.)
        let previous = asked.at.swap(now, Ordering::Relaxed);
        let first = asked.count.fetch_add(1, Ordering::Relaxed) == 0;
        let position = asked.position.swap(done.unwrap_or(0), Ordering::Relaxed);
        let ran = match done {
            // The block before, if this worker ran one, from where it last asked.
            None if first => 0,
            None => self.block_threads.saturating_sub(position),
            Some(done) => done.saturating_sub(position),
        };
        let finished = self.finished.fetch_add(ran, Ordering::Relaxed) + ran;
        if first || ran == 0 {
            return None;
        }
        // Nanoseconds a thread, in 1/1024ths.
        let pace = now.saturating_sub(previous).saturating_mul(1024) / ran;
        self.pace.fetch_min(pace, Ordering::Relaxed);
        let pace = asked.fastest.fetch_min(pace, Ordering::Relaxed).min(pace);
        let left = self.threads.saturating_sub(finished) as f64 / self.workers as f64;
        Some(Duration::from_nanos(pace).mul_f64(left / 1024.0))
    }

    /// The group form if it is ready, or compiled now by the rule (see the top of this
    /// file), else when to ask again; asked at a block's start or within one (`done`: see
    /// [`Self::rest`]).
    fn ask(&self, done: Option<u64>) -> Poll {
        let k = self.kernel;
        let again = Poll::At((done.unwrap_or(0) as u32).saturating_add(self.poll_interval()));
        if let Some(decided) = k.grouped.poll() {
            return decided;
        }
        // (Once started, no clock: another worker is compiling.)
        if k.grouped.started() {
            return again;
        }
        let rest = self.rest(done);
        if !due(k.group_compile_estimate(), self.spent, rest) {
            return again;
        }
        // Due by the floor: size the form (one worker, once), and ask again.
        if k.group_estimate.get().is_none() {
            if k.group_sizing_started.swap(true, Ordering::AcqRel) {
                return again;
            }
            let _ = k.group_estimate.set((self.size)());
            if !due(k.group_compile_estimate(), self.spent, rest) {
                // (The sizing's time is no thread's: the pace restarts after it.)
                if let Some(asked) = self.worker_slot() {
                    asked.at.store(self.now(), Ordering::Relaxed);
                }
                return again;
            }
        }
        k.grouped.compile_once(self.compile, again)
    }

    /// Threads between two polls of a block, at the fastest pace seen ([`poll_interval`]).
    fn poll_interval(&self) -> u32 {
        poll_interval(self.pace.load(Ordering::Relaxed))
    }

    /// Nanoseconds since the launch started.
    fn now(&self) -> u64 {
        self.started.elapsed().as_nanos().min(u64::MAX as u128) as u64
    }

    /// The asking worker's [`Asked`] (by rayon's index; the last one for the launching
    /// thread), where the launch times its workers.
    fn worker_slot(&self) -> Option<&Asked> {
        let slot = rayon::current_thread_index().unwrap_or(self.workers as usize);
        self.last_asked.get(slot)
    }
}

/// Threads between two polls of a block at `pace` (see [`Asked`]; `u64::MAX`: not known
/// yet): [`POLL_GAP`]'s worth, at least [`HANDOVER_ALIGN`].
fn poll_interval(pace: u64) -> u32 {
    let threads = (POLL_GAP.as_nanos() as u64 * 1024).div_ceil(pace.max(1));
    threads.clamp(HANDOVER_ALIGN as u64, u32::MAX as u64) as u32
}

/// A worker's last ask of a [`SecondTier`]: when (nanoseconds after the launch started), how
/// many asks, the threads of its block finished then, and its fastest pace (nanoseconds a
/// thread, in 1/1024ths).
struct Asked {
    at: AtomicU64,
    count: AtomicU64,
    position: AtomicU64,
    fastest: AtomicU64,
}

impl Default for Asked {
    fn default() -> Asked {
        Asked {
            at: AtomicU64::new(0),
            count: AtomicU64::new(0),
            position: AtomicU64::new(0),
            fastest: AtomicU64::new(u64::MAX),
        }
    }
}

/// The rule (see the top of this file): compile now, with the compile expected to take
/// `estimate`, the kernel's earlier launches having run `spent` in the one-thread form and
/// the rest of this one expected to take `rest` in it (`None`: no block timed yet)?
///
/// (This launch's own time is not rent: a launch that ends soon after would wait for the
/// whole compile; its rest's estimate decides it.)
fn due(estimate: Duration, spent: Duration, rest: Option<Duration>) -> bool {
    spent >= estimate || rest.is_some_and(|r| r >= estimate.mul_f64(PAYBACK))
}

impl Upgrade for SecondTier<'_> {
    fn block_fn(&self) -> Poll {
        self.ask(None)
    }

    fn poll(&self, done: u32) -> Poll {
        self.ask(Some(done as u64))
    }
}

/// What the lane-group form of kernel `name` (function `function` of `checked`), for
/// launches of `block_x` threads in x, is expected to take to compile: from the Cranelift
/// instructions it lowers to (`CompiledKernel::group_compile_time_for`). Where it has no
/// group form, or its lowering fails, zero: the estimate is then the floor
/// (`CompiledKernel::group_compile_estimate`), and its compile fails as fast.
pub(crate) fn size(
    compiled: &CompiledModule,
    checked: &checked::Module,
    name: &str,
    function: usize,
    block_x: u32,
) -> Duration {
    let kernel = &compiled.kernels[name];
    let lowered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compiled.grouped_ir_size(checked, function, block_x, false)
    }));
    match lowered {
        Ok(Ok(Some(n))) => kernel.group_compile_time_for(n),
        _ => Duration::ZERO,
    }
}

/// Compiles the lane-group form of kernel `name` (function `function` of `checked`) for
/// launches of `block_x` threads in x, the wide one where `wide` (see [`ThirdTier`]), and
/// publishes it for the launches; returns it.
pub(crate) fn compile(
    compiled: &CompiledModule,
    checked: &checked::Module,
    name: &str,
    function: usize,
    block_x: u32,
    wide: bool,
) -> Option<BlockFn> {
    let start = Instant::now();
    // The later tiers are only faster, never needed: if a compile fails, even by a panic
    // inside Cranelift (a lowering bug the eager mode's tests should catch), the form before
    // keeps running the kernel.
    let form = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compiled.compile_grouped(checked, function, block_x, wide)
    }));
    crate::stats::hot_compiled(start);
    let form = form.ok().and_then(Result::ok).flatten();
    let kernel = &compiled.kernels[name];
    if wide {
        let _ = kernel.wide_block_x.set(block_x);
        let _ = kernel.wide.form.set(form);
    } else {
        let _ = kernel.group_compile_time.set(start.elapsed());
        let _ = kernel.grouped.form.set(form);
    }
    form
}

/// The latest of `kernel`'s later forms that runs launches of blocks `block_x` threads in x
/// (`None`: its one-thread form): the wide form only where the blocks are a multiple of the
/// ones it was compiled for, which its groups divide (others it would run one thread at a
/// time); the group form unless its trial declined it.
pub(crate) fn form_for(kernel: &CompiledKernel, block_x: u32) -> Option<BlockFn> {
    let wide = kernel
        .wide_block_x
        .get()
        .is_some_and(|&x| block_x.is_multiple_of(x));
    let wide = kernel.wide.ready().filter(|_| wide);
    let grouped = kernel.grouped.ready().filter(|_| !kernel.trial.declined());
    wide.or(grouped)
}

/// Waits until `kernel`'s lane-group compile, if one has started, is done; returns whether
/// the kernel now runs its lane-group form (or tries it: [`Trial`]).
pub(crate) fn wait(kernel: &CompiledKernel) -> bool {
    kernel.grouped.wait().is_some() && !kernel.trial.declined()
}

/// Waits until `kernel`'s compiles in progress are done; returns whether its launches of
/// `block_x` threads in x now run the last form they may get.
pub(crate) fn settled(kernel: &CompiledKernel, block_x: u32) -> bool {
    let grouped = wait(kernel);
    kernel.wide.wait();
    let widens = wide_lanes(kernel, block_x).is_some() && !kernel.wide.decided();
    let tried = kernel.grouped.ready().is_none() || kernel.trial.decided();
    kernel.grouped.decided() && tried && !(grouped && widens)
}

/// The lanes a group of `kernel`'s wide form would have, compiled for blocks of `block_x`
/// threads in x (`None`: it has none for those).
fn wide_lanes(kernel: &CompiledKernel, block_x: u32) -> Option<usize> {
    kernel.widest.and_then(|most| wide_width(block_x, most))
}

/// How much of a kernel's time in the 64-lane form its wide form (`lanes::WIDE`) saves, at
/// least: the fma chain's 6.5%, rounded down.
pub const WIDE_GAIN: f64 = 1.0 / 16.0;

/// A launch's way to the wide form of a kernel that runs its 64-lane form, while the wide
/// form is not decided: a ski rental again, with the rent what the wide form would have
/// saved. A worker compiles it before a block once the kernel's time in the group form,
/// this launch's so far included, times [`WIDE_GAIN`] reaches the wide compile's estimate
/// for the launch's blocks (`CompiledKernel::wide_compile_estimate`: sixteen times that,
/// about 50 ms of the f16x2 chain in blocks of 256); the others go on, and every block
/// after runs the wide form, as do later launches of blocks a multiple of these. A kernel
/// that runs long gains 6.5% or more for a compile it has repaid; one that stops sooner has
/// paid at most twice what knowing its future would have.
pub(crate) struct ThirdTier<'a> {
    kernel: &'a CompiledKernel,
    started: Instant,
    /// The kernel's time in the group form before this launch.
    spent: Duration,
    /// What the wide form for this launch's blocks is expected to take to compile.
    estimate: Duration,
    /// Compiles the wide form (see [`compile`]) and returns it.
    compile: &'a (dyn Fn() -> Option<BlockFn> + Sync),
}

impl<'a> ThirdTier<'a> {
    /// For a launch of blocks `block_x` threads wide of `kernel` that started at `started`;
    /// `None` unless the kernel runs its group form and its wide form is not decided (or
    /// the launch's blocks are not a multiple of the wide group).
    pub fn new(
        kernel: &'a CompiledKernel,
        started: Instant,
        block_x: u32,
        compile: &'a (dyn Fn() -> Option<BlockFn> + Sync),
    ) -> Option<ThirdTier<'a>> {
        let grouped = kernel.grouped.ready().is_some() && kernel.trial.kept();
        let lanes = wide_lanes(kernel, block_x)?;
        if !grouped || kernel.wide.decided() {
            return None;
        }
        let spent = kernel.second_tier_nanos.load(Ordering::Relaxed);
        Some(ThirdTier {
            kernel,
            started,
            spent: Duration::from_nanos(spent),
            estimate: kernel.wide_compile_estimate(lanes),
            compile,
        })
    }

    /// Counts the launch's `time` as the group form's.
    pub fn launched(&self, time: Duration) {
        add_nanos(&self.kernel.second_tier_nanos, time);
    }
}

/// Blocks of each form a kernel's [`Trial`] times before it decides.
pub const TRIAL_BLOCKS: usize = 16;

/// Whether a kernel keeps its group form, once compiled, or goes back to its one-thread
/// form: decided by each form's first quartile of block times (a thread's) after
/// [`TRIAL_BLOCKS`] of each, timed in the launches that first run the group form
/// ([`TrialLaunch`]). Not the fastest block: a kernel's blocks may differ in work (the
/// bench's uneven kernel has none in every 17th block, which made its group form lose a
/// trial of fastest blocks now and then). Not the median: the blocks of these first
/// launches are bimodal on this host, about half of them 2–4 times slower than the rest
/// in either form (`nv_cvt`'s one-thread blocks 41–47 against 72–190 ns a thread), and a
/// preempted block is an outlier either way. A tie keeps the group form.
pub struct Trial {
    verdict: AtomicU8,
    /// Per form ([`ONE_THREAD`], [`GROUP`]): the blocks timed so far, and the first
    /// [`TRIAL_BLOCKS`] of their nanoseconds a thread, in 1/1024ths.
    blocks: [AtomicUsize; 2],
    paces: [[AtomicU64; TRIAL_BLOCKS]; 2],
}

/// A [`Trial`]'s forms.
const ONE_THREAD: u8 = 0;
const GROUP: u8 = 1;
/// No form: a worker's first block, or one after the trial decided.
const NO_FORM: u8 = 2;

/// A [`Trial`]'s verdicts.
const UNDECIDED: u8 = 0;
const KEPT: u8 = 1;
const DECLINED: u8 = 2;

impl Default for Trial {
    fn default() -> Trial {
        Trial {
            verdict: AtomicU8::new(UNDECIDED),
            blocks: Default::default(),
            paces: Default::default(),
        }
    }
}

impl Trial {
    pub fn decided(&self) -> bool {
        self.verdict.load(Ordering::Acquire) != UNDECIDED
    }

    /// Whether the group form was tried and kept.
    pub fn kept(&self) -> bool {
        self.verdict.load(Ordering::Acquire) == KEPT
    }

    /// Whether the group form was tried and found slower: the kernel runs one thread at a
    /// time again.
    pub fn declined(&self) -> bool {
        self.verdict.load(Ordering::Acquire) == DECLINED
    }

    /// Counts a block of each form, at paces `one_thread` and `group` (see [`Self::record`]).
    #[cfg(test)]
    pub fn record_one_thread_and_group(&self, one_thread: u64, group: u64) {
        self.record(ONE_THREAD, one_thread);
        self.record(GROUP, group);
    }

    /// Counts a block of `form` that ran at `pace` (nanoseconds a thread, in 1/1024ths), and
    /// decides once each form has [`TRIAL_BLOCKS`].
    fn record(&self, form: u8, pace: u64) {
        let f = form as usize;
        let i = self.blocks[f].fetch_add(1, Ordering::AcqRel);
        if let Some(slot) = self.paces[f].get(i) {
            slot.store(pace, Ordering::Release);
        }
        let timed = |f: usize| self.blocks[f].load(Ordering::Acquire) >= TRIAL_BLOCKS;
        if i + 1 < TRIAL_BLOCKS || !timed(1 - f) {
            return;
        }
        let first_quartile = |f: usize| {
            let mut p: Vec<u64> = self.paces[f]
                .iter()
                .map(|p| p.load(Ordering::Acquire))
                .collect();
            p.sort_unstable();
            p[TRIAL_BLOCKS / 4]
        };
        let verdict = if first_quartile(GROUP as usize) <= first_quartile(ONE_THREAD as usize) {
            KEPT
        } else {
            DECLINED
        };
        let _ =
            self.verdict
                .compare_exchange(UNDECIDED, verdict, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// A launch's part in its kernel's [`Trial`]: each worker runs its blocks in the one-thread
/// or the group form, timing each from its ask to its next, until the trial decides; then
/// the kept form. A worker's n-th block gets the form of the parity of n's one bits (the
/// Thue–Morse sequence: as many of each form in every 2^k blocks from a multiple of 2^k,
/// so neither form gets the blocks of one parity, or of any residue of a power of two,
/// when their work differs by block index).
pub(crate) struct TrialLaunch<'a> {
    kernel: &'a CompiledKernel,
    started: Instant,
    block_threads: u64,
    one_thread: BlockFn,
    /// Per worker (by rayon's index; the last one for the launching thread).
    workers: Vec<TrialWorker>,
}

/// A worker's last ask of a [`TrialLaunch`]: when (nanoseconds after the launch started),
/// the form of the block it then got, and how many it made.
#[derive(Default)]
struct TrialWorker {
    at: AtomicU64,
    ran: AtomicU8,
    asks: AtomicU64,
}

impl<'a> TrialLaunch<'a> {
    /// For a launch of blocks `block` of `kernel` (whose one-thread form is `one_thread`)
    /// that started at `started`; `None` unless the kernel has its group form and has not
    /// decided its trial, and the blocks are a multiple of the widest group wide (where the
    /// group form runs groups whatever its width).
    pub fn new(
        kernel: &'a CompiledKernel,
        started: Instant,
        block: ptxjit_runtime::Dim3,
        one_thread: BlockFn,
    ) -> Option<TrialLaunch<'a>> {
        let groups = block.x.is_multiple_of(WIDEST as u32);
        if !groups || kernel.grouped.ready().is_none() || kernel.trial.decided() {
            return None;
        }
        let block_threads = block.count();
        let workers = ptxjit_runtime::workers::count() + 1;
        Some(TrialLaunch {
            kernel,
            started,
            block_threads: block_threads.max(1),
            one_thread,
            workers: (0..workers)
                .map(|_| TrialWorker {
                    ran: AtomicU8::new(NO_FORM),
                    ..TrialWorker::default()
                })
                .collect(),
        })
    }
}

impl Upgrade for TrialLaunch<'_> {
    fn block_fn(&self) -> Poll {
        let trial = &self.kernel.trial;
        let slot = rayon::current_thread_index().unwrap_or(self.workers.len() - 1);
        let Some(w) = self.workers.get(slot) else {
            return Poll::At(u32::MAX);
        };
        // (Each worker writes its own slot only.)
        let now = self.started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        let previous = w.at.swap(now, Ordering::Relaxed);
        let form = w.ran.load(Ordering::Relaxed);
        if form != NO_FORM && !trial.decided() {
            let pace = now.saturating_sub(previous).saturating_mul(1024) / self.block_threads;
            trial.record(form, pace);
        }
        let n = w.asks.fetch_add(1, Ordering::Relaxed);
        let next = match trial.verdict.load(Ordering::Acquire) {
            UNDECIDED if n.count_ones() % 2 == 0 => ONE_THREAD,
            UNDECIDED => GROUP,
            _ => NO_FORM,
        };
        w.ran.store(next, Ordering::Relaxed);
        // (The launch's own form is the group form: see `Kernel::launch_with`.)
        if next == ONE_THREAD || trial.declined() {
            Poll::HandOver(self.one_thread)
        } else {
            Poll::At(u32::MAX)
        }
    }

    fn poll(&self, _done: u32) -> Poll {
        Poll::At(u32::MAX)
    }
}

/// Adds `time` to a count of nanoseconds.
fn add_nanos(count: &AtomicU64, time: Duration) {
    let nanos = time.as_nanos().min(u64::MAX as u128) as u64;
    count.fetch_add(nanos, Ordering::Relaxed);
}

/// The rule of [`ThirdTier`]: compile the wide form, expected to take `estimate`, after
/// `spent` in the group form?
fn wide_due(estimate: Duration, spent: Duration) -> bool {
    spent.mul_f64(WIDE_GAIN) >= estimate
}

impl Upgrade for ThirdTier<'_> {
    fn block_fn(&self) -> Poll {
        // (The group form asks nothing within a block.)
        let stay = Poll::At(u32::MAX);
        let k = self.kernel;
        if let Some(decided) = k.wide.poll() {
            return decided;
        }
        let spent = self.spent + self.started.elapsed();
        if k.wide.started() || !wide_due(self.estimate, spent) {
            return stay;
        }
        k.wide.compile_once(self.compile, stay)
    }

    fn poll(&self, _done: u32) -> Poll {
        Poll::At(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_kernel_is_compiled_once_its_one_thread_time_reaches_the_estimate() {
        assert!(!due(4 * MS, 3 * MS, None));
        assert!(due(4 * MS, 4 * MS, None));
        assert!(due(4 * MS, 5 * MS, Some(Duration::ZERO)));
    }

    #[test]
    fn a_wide_form_is_compiled_once_the_group_form_has_run_sixteen_times_its_compile() {
        assert!(!wide_due(4 * MS, 63 * MS));
        assert!(wide_due(4 * MS, 64 * MS));
    }

    #[test]
    fn a_launch_whose_rest_would_repay_the_compile_compiles_at_once() {
        // The bound: 1.5 times the estimate.
        assert!(!due(4 * MS, Duration::ZERO, Some(5 * MS)));
        assert!(due(4 * MS, Duration::ZERO, Some(6 * MS)));
    }

    #[test]
    fn a_block_polls_about_every_poll_gap_and_at_most_every_64_threads() {
        let pace = |nanos: u64| nanos * 1024;
        assert_eq!(poll_interval(u64::MAX), HANDOVER_ALIGN, "no pace known");
        assert_eq!(
            poll_interval(pace(3_700)),
            HANDOVER_ALIGN,
            "the fma chain's"
        );
        assert_eq!(poll_interval(pace(100)), 200);
        assert_eq!(
            poll_interval(pace(15)),
            1334,
            "a block of 1,024 threads of 15 ns: no poll"
        );
        assert_eq!(poll_interval(0), 20_000 * 1024);
    }

    #[test]
    fn a_trial_keeps_the_group_form_unless_its_first_quartile_was_slower() {
        for (one_thread, group, kept) in
            [(2000, 1000, true), (1000, 1000, true), (1000, 1001, false)]
        {
            let trial = Trial::default();
            for b in 0..TRIAL_BLOCKS as u64 {
                assert!(!trial.decided(), "after {b} blocks of each");
                // Blocks of uneven work, alike for both forms; one of each preempted, far
                // out, and the fastest of one form's far below.
                let spread = 10 * ((b * 7) % TRIAL_BLOCKS as u64);
                let preempted = if b == 3 { 1_000_000 } else { 0 };
                let idle = if b == 5 { one_thread / 2 } else { 0 };
                trial.record(ONE_THREAD, one_thread + spread + preempted - idle);
                trial.record(GROUP, group + spread + preempted);
            }
            assert!(trial.decided());
            assert_eq!(trial.kept(), kept, "{one_thread} vs {group}");
            assert_eq!(trial.declined(), !kept);
        }
    }

    #[test]
    fn a_trial_is_not_swayed_by_its_fastest_blocks() {
        // The one-thread form got the blocks without work; its quartile is slower.
        let trial = Trial::default();
        for b in 0..TRIAL_BLOCKS as u64 {
            trial.record(ONE_THREAD, if b < 3 { 1 } else { 1000 });
            trial.record(GROUP, 100);
        }
        assert!(trial.kept());
    }

    #[test]
    fn a_trial_decides_once_both_forms_have_their_blocks() {
        let trial = Trial::default();
        for _ in 0..3 * TRIAL_BLOCKS {
            trial.record(GROUP, 10);
        }
        assert!(!trial.decided());
        for _ in 0..TRIAL_BLOCKS {
            trial.record(ONE_THREAD, 5);
        }
        assert!(trial.declined());
    }

    #[test]
    fn a_launch_with_no_block_timed_predicts_nothing() {
        assert!(!due(4 * MS, Duration::ZERO, None));
    }
}
