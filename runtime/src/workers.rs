//! The worker threads grids run on.
//!
//! Launches run on ptxjit's own rayon pool, not the host's global one: a host that loads
//! ptxjit (a test runner with one process per core, each loading the library) chooses its
//! size with `PTXJIT_THREADS`, without touching its own rayon use. `RAYON_NUM_THREADS` is
//! honoured when `PTXJIT_THREADS` is not set, and all cores otherwise.
//!
//! Compiled code may use [`KERNEL_STACK_BYTES`] of stack below the executor's frames, so a
//! grid runs on threads ptxjit made with [`STACK_BYTES`] of stack: a launch from a pool made by
//! [`pool`] (the scaling benchmark's pools of 1 and of all workers) runs there, any other is
//! sent to the default pool. The one exception is a grid of one block from a thread whose
//! stack is known to have the room ([`room_here`]): it runs on the caller's thread, as it
//! could not run in parallel anyway, sparing the hand-off to a sleeping worker (~17 µs,
//! against ~0.2 µs for the launch itself).

use std::sync::OnceLock;

use crate::KERNEL_STACK_BYTES;

/// Stack of every worker: twice what compiled code may use, the rest for the executor.
pub const STACK_BYTES: usize = 2 * KERNEL_STACK_BYTES as usize;

const NAME_PREFIX: &str = "ptxjit-worker-";

/// The worker count the environment asks for, if any: `PTXJIT_THREADS`, then
/// `RAYON_NUM_THREADS` (a positive integer; anything else is ignored, as rayon does).
fn requested(var: impl Fn(&str) -> Option<String>) -> Option<usize> {
    ["PTXJIT_THREADS", "RAYON_NUM_THREADS"]
        .into_iter()
        .find_map(|name| var(name)?.trim().parse().ok().filter(|&n: &usize| n > 0))
}

/// A pool of `threads` workers that grids can run on (inside its `install`).
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_BYTES)
        .thread_name(|i| format!("{NAME_PREFIX}{i}"))
        .build()
}

fn default_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = requested(|name| std::env::var(name).ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        pool(threads).expect("spawning ptxjit's worker threads")
    })
}

/// Whether this thread is a worker of a pool made by [`pool`].
fn on_worker() -> bool {
    rayon::current_thread_index().is_some()
        && std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with(NAME_PREFIX))
}

/// The lowest address of this thread's stack, read once per thread (`None` if the system
/// does not say).
fn stack_low() -> Option<u64> {
    thread_local! {
        static LOW: Option<u64> = read_stack_low();
    }
    LOW.with(|low| *low)
}

fn read_stack_low() -> Option<u64> {
    // SAFETY: `attr` is initialized by pthread_getattr_np before it is read and destroyed
    // after; the out-pointers are valid locals.
    unsafe {
        let mut attr = std::mem::zeroed::<libc::pthread_attr_t>();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let (mut addr, mut size) = (std::ptr::null_mut(), 0usize);
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        ok.then_some(addr as u64)
    }
}

/// Whether this thread's stack has `bytes` free below the caller's frame.
pub fn room_here(bytes: u64) -> bool {
    let here = std::hint::black_box(&bytes) as *const u64 as u64;
    stack_low().is_some_and(|low| here.saturating_sub(low) >= bytes)
}

/// How many workers a launch made from this thread runs on.
pub fn count() -> usize {
    match on_worker() {
        true => rayon::current_num_threads(),
        false => default_pool().current_num_threads(),
    }
}

/// Runs `work` (which uses rayon's parallel iterators) on the workers.
pub(crate) fn run<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    match on_worker() {
        true => work(),
        false => default_pool().install(work),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_foreign_rayon_pool_does_not_run_grids() {
        let foreign = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert!(!foreign.install(on_worker));
        assert!(pool(1).unwrap().install(on_worker));
        assert!(!on_worker());
    }

    #[test]
    fn the_stack_room_of_a_thread_is_known() {
        let small = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| (room_here(64 << 10), room_here(1 << 20)))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(small, (true, false));
        assert!(
            pool(1)
                .unwrap()
                .install(|| room_here(STACK_BYTES as u64 * 3 / 4))
        );
    }

    #[test]
    fn ptxjit_threads_sets_the_worker_count() {
        assert_eq!(requested(env(&[("PTXJIT_THREADS", "3")])), Some(3));
    }

    #[test]
    fn ptxjit_threads_wins_over_rayon_num_threads() {
        let vars = [("PTXJIT_THREADS", "1"), ("RAYON_NUM_THREADS", "4")];
        assert_eq!(requested(env(&vars)), Some(1));
    }

    #[test]
    fn rayon_num_threads_is_honoured_alone() {
        assert_eq!(requested(env(&[("RAYON_NUM_THREADS", "4")])), Some(4));
    }

    #[test]
    fn zero_or_garbage_means_the_default() {
        assert_eq!(requested(env(&[("PTXJIT_THREADS", "0")])), None);
        assert_eq!(requested(env(&[("PTXJIT_THREADS", "many")])), None);
        assert_eq!(requested(env(&[])), None);
    }

    #[test]
    fn a_bad_ptxjit_threads_falls_back_to_rayon_num_threads() {
        let vars = [("PTXJIT_THREADS", "x"), ("RAYON_NUM_THREADS", "2")];
        assert_eq!(requested(env(&vars)), Some(2));
    }
}
