//! The second compile tier of [`LaneGroups::WhenHot`](crate::LaneGroups::WhenHot): when a
//! kernel's lane-group form is compiled, and how launches switch to it.
//!
//! A kernel's launches run its one-thread form until one of them, before starting a block,
//! finds either
//! - that the kernel's earlier launches have run in that form for as long as the group form
//!   is expected to take to compile ([`CompiledKernel::group_compile_estimate`]): a ski
//!   rental, so that a kernel of many short launches pays at most about twice what knowing
//!   its future would have, when the estimate is right; or
//! - that what is left of this launch, at the time the asking worker's fastest block took,
//!   would take the one-thread form [`PAYBACK`] times that estimate: the group form (4–7
//!   times faster on the bench's kernels) then repays its compile within this launch. (A
//!   worker's own blocks, not the launch's elapsed time; the fastest so far, since a worker
//!   of a loaded machine is sometimes preempted. A worker predicts from its first block on,
//!   at its second: a first block also waits for the worker to wake and runs from cold
//!   caches, so it errs towards compiling early, which a launch of few long blocks needs
//!   to repay the compile within itself: 8 blocks of the bench's fma chain, 4 a worker,
//!   decided at the fourth ran all of them in the one-thread form.)
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
//! every block that starts once it is ready runs it (the kernels that have a group form have
//! independent blocks: no barriers, no cooperation). So a single long launch (`ptxjit run`'s)
//! switches part-way, and a short one never waits for a compile it would not repay.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ptxjit_runtime::{BlockFn, Upgrade};

use crate::frontend::checked;
use crate::jit::{CompiledKernel, CompiledModule};

/// How much longer than the group form's compile the rest of a launch must promise to run
/// in the one-thread form for the compile to start at once: with the group form 2× faster
/// or more, half that time or more is saved, which repays the compile even when it takes
/// twice its estimate.
pub const PAYBACK: f64 = 2.0;

/// A launch's way to the lane-group form of its kernel, while that form is not decided.
pub(crate) struct SecondTier<'a> {
    kernel: &'a CompiledKernel,
    started: Instant,
    /// The kernel's time in the one-thread form before this launch.
    spent: Duration,
    /// The launch's blocks, the workers running them, and the blocks started so far.
    blocks: u64,
    workers: u64,
    asked: AtomicU64,
    /// Per worker (by rayon's index; the last one for the launching thread): when it last
    /// asked, in nanoseconds after `started`, how often, and its fastest block timed.
    last_asked: Vec<(AtomicU64, AtomicU64, AtomicU64)>,
    /// Compiles the group form (see [`compile`]) and returns it; sizes it (see [`size`]).
    compile: &'a (dyn Fn() -> Option<BlockFn> + Sync),
    size: &'a (dyn Fn() -> Duration + Sync),
}

impl<'a> SecondTier<'a> {
    /// For a launch of `blocks` blocks of `kernel` that started at `started`; `None` when the
    /// kernel's form is decided (`kernel.grouped` then says which runs).
    pub fn new(
        kernel: &'a CompiledKernel,
        started: Instant,
        blocks: u64,
        compile: &'a (dyn Fn() -> Option<BlockFn> + Sync),
        size: &'a (dyn Fn() -> Duration + Sync),
    ) -> Option<SecondTier<'a>> {
        if kernel.grouped.get().is_some() {
            return None;
        }
        let workers = ptxjit_runtime::workers::count();
        // (A worker's second block is the first it can predict from; fewer than four
        // blocks: no allocation on a short launch's path.)
        let timed = if blocks >= 4 { workers + 1 } else { 0 };
        Some(SecondTier {
            kernel,
            started,
            spent: Duration::from_nanos(kernel.first_tier_nanos.load(Ordering::Relaxed)),
            blocks,
            workers: workers as u64,
            asked: AtomicU64::new(0),
            last_asked: (0..timed)
                .map(|_| {
                    (
                        AtomicU64::new(0),
                        AtomicU64::new(0),
                        AtomicU64::new(u64::MAX),
                    )
                })
                .collect(),
            compile,
            size,
        })
    }

    /// Counts the launch's `time` as the one-thread form's (blocks that ran the group form
    /// count too: it is decided then, and the count no longer matters).
    pub fn launched(&self, time: Duration) {
        let nanos = time.as_nanos().min(u64::MAX as u128) as u64;
        self.kernel
            .first_tier_nanos
            .fetch_add(nanos, Ordering::Relaxed);
    }

    /// The rest of the launch in the one-thread form, at the asking worker's fastest block so
    /// far (`None` before its second block); called once a block.
    fn rest(&self) -> Option<Duration> {
        let now = self.started.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        let started = self.asked.fetch_add(1, Ordering::Relaxed);
        // The rest of the launch, at this worker's fastest block's time so far.
        let slot = rayon::current_thread_index().unwrap_or(self.workers as usize);
        self.last_asked
            .get(slot)
            .and_then(|(last, count, fastest)| {
                let previous = last.swap(now, Ordering::Relaxed);
                let count = count.fetch_add(1, Ordering::Relaxed);
                if count == 0 {
                    return None;
                }
                let interval = now.saturating_sub(previous);
                let block = fastest.fetch_min(interval, Ordering::Relaxed).min(interval);
                let left = self.blocks.saturating_sub(started) as f64 / self.workers as f64;
                Some(Duration::from_nanos(block).mul_f64(left))
            })
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
    fn block_fn(&self) -> Option<BlockFn> {
        let k = self.kernel;
        if let Some(&grouped) = k.grouped.get() {
            return grouped;
        }
        // (Once started, no clock: another worker is compiling.)
        if k.group_compile_started.load(Ordering::Relaxed) {
            return None;
        }
        let rest = self.rest();
        if !due(k.group_compile_estimate(), self.spent, rest) {
            return None;
        }
        // Due by the floor: size the form (one worker, once), and ask again.
        if k.group_estimate.get().is_none() {
            if k.group_sizing_started.swap(true, Ordering::AcqRel) {
                return None;
            }
            let _ = k.group_estimate.set((self.size)());
            if !due(k.group_compile_estimate(), self.spent, rest) {
                return None;
            }
        }
        if k.group_compile_started.swap(true, Ordering::AcqRel) {
            return None;
        }
        (self.compile)()
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
        compiled.grouped_ir_size(checked, function, block_x)
    }));
    match lowered {
        Ok(Ok(Some(n))) => kernel.group_compile_time_for(n),
        _ => Duration::ZERO,
    }
}

/// Compiles the lane-group form of kernel `name` (function `function` of `checked`) for
/// launches of `block_x` threads in x and publishes it for the launches; returns it.
pub(crate) fn compile(
    compiled: &CompiledModule,
    checked: &checked::Module,
    name: &str,
    function: usize,
    block_x: u32,
) -> Option<BlockFn> {
    let start = Instant::now();
    // The second tier is only faster, never needed: if its compile fails, even by a panic
    // inside Cranelift (a lowering bug the eager mode's tests should catch), the one-thread
    // form keeps running the kernel.
    let grouped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compiled.compile_grouped(checked, function, block_x)
    }));
    crate::stats::hot_compiled(start);
    let grouped = grouped.ok().and_then(Result::ok).flatten();
    let _ = compiled.kernels[name].grouped.set(grouped);
    grouped
}

/// Waits until `kernel`'s lane-group compile, if one has started, is done; returns whether
/// the kernel now runs its lane-group form.
pub(crate) fn wait(kernel: &CompiledKernel) -> bool {
    if kernel.group_compile_started.load(Ordering::Acquire) {
        kernel.grouped.wait().is_some()
    } else {
        kernel.grouped.get().is_some_and(Option::is_some)
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
    fn a_launch_whose_rest_would_repay_the_compile_compiles_at_once() {
        // The bound: twice the estimate.
        assert!(!due(3 * MS, Duration::ZERO, Some(5 * MS)));
        assert!(due(3 * MS, Duration::ZERO, Some(6 * MS)));
    }

    #[test]
    fn a_launch_with_no_block_timed_predicts_nothing() {
        assert!(!due(4 * MS, Duration::ZERO, None));
    }
}
