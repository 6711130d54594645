//! Process-wide totals of where ptxjit's time went: compiling modules, compiling lane-group
//! forms, running launches. A host that loads ptxjit (a test suite through the C library)
//! reads them to know how much of its time is ptxjit's and how much of that is compiling.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A count of events and the time they took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub count: u64,
    pub time: Duration,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Modules compiled (parse, check, first tier), cache hits not counted.
    pub compiles: Tally,
    /// Lane-group forms compiled when a kernel became hot (by a worker of a launch).
    pub hot_compiles: Tally,
    /// Launches, from argument checks to the grid's end.
    pub launches: Tally,
}

struct Counter {
    count: AtomicU64,
    nanos: AtomicU64,
}

impl Counter {
    const fn new() -> Counter {
        Counter {
            count: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        }
    }

    fn add(&self, since: Instant) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = since.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn tally(&self) -> Tally {
        Tally {
            count: self.count.load(Ordering::Relaxed),
            time: Duration::from_nanos(self.nanos.load(Ordering::Relaxed)),
        }
    }
}

static COMPILES: Counter = Counter::new();
static HOT_COMPILES: Counter = Counter::new();
static LAUNCHES: Counter = Counter::new();

pub(crate) fn compiled(since: Instant) {
    COMPILES.add(since);
}

pub(crate) fn hot_compiled(since: Instant) {
    HOT_COMPILES.add(since);
}

pub(crate) fn launched(since: Instant) {
    LAUNCHES.add(since);
}

/// The totals so far in this process.
pub fn totals() -> Totals {
    Totals {
        compiles: COMPILES.tally(),
        hot_compiles: HOT_COMPILES.tally(),
        launches: LAUNCHES.tally(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_adds_events_and_their_time() {
        let c = Counter::new();
        let start = Instant::now() - Duration::from_millis(5);
        c.add(start);
        c.add(start);
        let t = c.tally();
        assert_eq!(t.count, 2);
        assert!(t.time >= Duration::from_millis(10), "{t:?}");
    }
}
