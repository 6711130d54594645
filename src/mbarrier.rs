//! The mbarrier object: ptxjit's layout of the ISA's opaque 8-byte `.shared` word, and its
//! operations.
//!
//! The ISA names four parts: the current phase, the pending arrival count of the current
//! phase, the expected arrival count of each phase (1 to 2^20 − 1) and the tx-count
//! (−(2^20 − 1) to 2^20 − 1). Here they are bit fields of the word, plus a bit that says the
//! word holds an mbarrier at all (`init` sets it, `inval` clears it), so that an operation on
//! memory that holds none is an error rather than a guess:
//!
//! | bits  | field |
//! |-------|-------|
//! | 0–19  | pending arrivals |
//! | 20–39 | expected arrivals |
//! | 40–60 | tx-count, two's complement |
//! | 61    | valid |
//! | 63    | phase parity |
//!
//! A phase completes when both its pending arrivals and its tx-count are zero: the parity
//! flips and the next phase expects the expected count again. The *state* that `arrive`
//! returns holds the phase parity then (bit 63) and the pending count before the arrival
//! (bits 0–19, which `pending_count` reads); a wait on a state or a parity is complete when
//! the object's phase parity differs from it, which is what the ISA defines for the current
//! and the immediately preceding phase, the only two a wait may name.
//!
//! The word is updated atomically: the threads of a block interleave only at synchronization
//! points, but an asynchronous copy's completion may come from anywhere.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::frontend::checked::MbarrierOp;

const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const EXPECTED_SHIFT: u32 = 20;
const TX_SHIFT: u32 = 40;
const TX_BITS: u32 = 21;
const VALID: u64 = 1 << 61;
const PHASE: u64 = 1 << 63;
/// The largest arrival count and tx-count magnitude.
pub const MAX_COUNT: u64 = COUNT_MASK;

/// What an operation on an object can go wrong with (each ends the launch at the instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// The word holds no mbarrier: never initialized, or invalidated.
    NotInitialized,
    /// `init` with a count outside 1 to 2^20 − 1, more arrivals than the phase still expects,
    /// a tx-count leaving ±(2^20 − 1), or an address not 8-byte aligned.
    OutOfRange,
}

/// An operation that changes an mbarrier object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    Init(u32),
    Inval,
    /// The arrive-on operation with its count; `drop` first lowers the expected count by the
    /// same amount (`arrive_drop`); `expect_tx` first raises the tx-count.
    Arrive {
        count: u32,
        drop: bool,
        expect_tx: u32,
    },
    ExpectTx(u32),
    CompleteTx(u32),
    /// `cp.async.mbarrier.arrive`: its copies are complete already, so the arrival happens now;
    /// without `.noinc` the pending count is raised by one first (no net change).
    CpAsyncArrive {
        noinc: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fields {
    pending: u64,
    expected: u64,
    tx: i64,
    phase: bool,
}

fn unpack(word: u64) -> Result<Fields, Misuse> {
    if word & VALID == 0 {
        return Err(Misuse::NotInitialized);
    }
    let tx = (word >> TX_SHIFT) & ((1 << TX_BITS) - 1);
    Ok(Fields {
        pending: word & COUNT_MASK,
        expected: (word >> EXPECTED_SHIFT) & COUNT_MASK,
        // Sign-extend the 21-bit field.
        tx: ((tx << (64 - TX_BITS)) as i64) >> (64 - TX_BITS),
        phase: word & PHASE != 0,
    })
}

fn pack(f: Fields) -> u64 {
    let tx = (f.tx as u64) & ((1 << TX_BITS) - 1);
    f.pending | f.expected << EXPECTED_SHIFT | tx << TX_SHIFT | VALID | (f.phase as u64) << 63
}

impl Fields {
    fn add_tx(&mut self, delta: i64) -> Result<(), Misuse> {
        self.tx += delta;
        if self.tx.unsigned_abs() > MAX_COUNT {
            return Err(Misuse::OutOfRange);
        }
        Ok(())
    }

    fn arrive(&mut self, count: u64) -> Result<(), Misuse> {
        if count > self.pending {
            return Err(Misuse::OutOfRange);
        }
        self.pending -= count;
        Ok(())
    }

    /// Completes the phase if nothing is pending any more.
    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
    }
}

/// The new word after `update`, and the state to return (for arrivals).
pub fn apply(word: u64, update: Update) -> Result<(u64, u64), Misuse> {
    if let Update::Init(count) = update {
        let count = count as u64;
        if !(1..=MAX_COUNT).contains(&count) {
            return Err(Misuse::OutOfRange);
        }
        let f = Fields {
            pending: count,
            expected: count,
            tx: 0,
            phase: false,
        };
        return Ok((pack(f), 0));
    }
    let mut f = unpack(word)?;
    let state = f.pending | (f.phase as u64) << 63;
    match update {
        Update::Init(_) => unreachable!("handled above"),
        Update::Inval => return Ok((0, 0)),
        Update::Arrive {
            count,
            drop,
            expect_tx,
        } => {
            let count = count as u64;
            if drop {
                f.expected = f.expected.checked_sub(count).ok_or(Misuse::OutOfRange)?;
            }
            f.add_tx(expect_tx as i64)?;
            f.arrive(count)?;
        }
        Update::ExpectTx(n) => f.add_tx(n as i64)?,
        Update::CompleteTx(n) => f.add_tx(-(n as i64))?,
        Update::CpAsyncArrive { noinc } => {
            if noinc {
                f.arrive(1)?;
            }
        }
    }
    f.settle();
    Ok((pack(f), state))
}

/// The pending count before the arrival that returned `state` (`mbarrier.pending_count`).
pub fn pending_count(state: u64) -> u32 {
    (state & COUNT_MASK) as u32
}

/// Whether the phase that `state` (a state from `arrive`, or with `parity` a phase parity in
/// bit 0) names has completed, for the object `word`.
pub fn phase_complete(word: u64, state: u64, parity: bool) -> Result<bool, Misuse> {
    let f = unpack(word)?;
    let named = if parity {
        state & 1 != 0
    } else {
        state & PHASE != 0
    };
    Ok(f.phase != named)
}

/// The object at a host address, for atomic access; `None` if the address is not 8-byte
/// aligned.
///
/// # Safety
/// `addr` must point to 8 bytes the caller may read and write (the compiled code checked
/// the access as it checks a `.b64` store) for the duration of the returned borrow.
pub unsafe fn at<'a>(addr: u64) -> Option<&'a AtomicU64> {
    if !addr.is_multiple_of(8) {
        return None;
    }
    // SAFETY: aligned, and valid per the caller.
    Some(unsafe { AtomicU64::from_ptr(addr as *mut u64) })
}

/// Applies `update` to the object at `addr` atomically: the state, or the misuse.
///
/// # Safety
/// As for [`at`].
pub unsafe fn update(addr: u64, update: Update) -> Result<u64, Misuse> {
    // SAFETY: per the caller.
    let object = unsafe { at(addr) }.ok_or(Misuse::OutOfRange)?;
    let mut word = object.load(Ordering::Acquire);
    loop {
        let (new, state) = apply(word, update)?;
        match object.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Ok(state),
            Err(now) => word = now,
        }
    }
}

/// The result words of [`run`] that are no state: the launch ends with the misuse.
pub const ERR_NOT_INITIALIZED: u64 = u64::MAX;
pub const ERR_OUT_OF_RANGE: u64 = u64::MAX - 1;

const KIND_BITS: u32 = 0xF;
const DROP: u32 = 1 << 4;
const EXPECT_TX: u32 = 1 << 5;
const NOINC: u32 = 1 << 6;
const PARITY: u32 = 1 << 7;

/// The constant that names `op` to [`run`] (its run-time operand goes separately).
pub fn code(op: MbarrierOp) -> u32 {
    match op {
        MbarrierOp::Init => 0,
        MbarrierOp::Inval => 1,
        MbarrierOp::Arrive { drop, expect_tx } => {
            2 | if drop { DROP } else { 0 } | if expect_tx { EXPECT_TX } else { 0 }
        }
        MbarrierOp::ExpectTx => 3,
        MbarrierOp::CompleteTx => 4,
        MbarrierOp::CpAsyncArrive { noinc } => 5 | if noinc { NOINC } else { 0 },
        MbarrierOp::Wait { parity, .. } => 6 | if parity { PARITY } else { 0 },
        MbarrierOp::PendingCount => unreachable!("pending_count reads a state, not an object"),
    }
}

/// What compiled code calls: the operation [`code`] names on the object at `addr`, with
/// `operand` (its count, txCount, state or parity). Returns the state (arrivals), whether
/// the phase is complete (waits: 0 or 1), or an `ERR_` word.
///
/// # Safety
/// As for [`at`].
pub unsafe fn run(addr: u64, code: u32, operand: u64) -> u64 {
    let n = operand as u32;
    let update = match code & KIND_BITS {
        0 => Update::Init(n),
        1 => Update::Inval,
        2 if code & EXPECT_TX != 0 => Update::Arrive {
            count: 1,
            drop: code & DROP != 0,
            expect_tx: n,
        },
        2 => Update::Arrive {
            count: n,
            drop: code & DROP != 0,
            expect_tx: 0,
        },
        3 => Update::ExpectTx(n),
        4 => Update::CompleteTx(n),
        5 => Update::CpAsyncArrive {
            noinc: code & NOINC != 0,
        },
        _ => {
            // SAFETY: per the caller.
            let Some(object) = (unsafe { at(addr) }) else {
                return ERR_OUT_OF_RANGE;
            };
            let word = object.load(Ordering::Acquire);
            return match phase_complete(word, operand, code & PARITY != 0) {
                Ok(done) => done as u64,
                Err(e) => error_word(e),
            };
        }
    };
    // SAFETY: per the caller.
    unsafe { self::update(addr, update) }.unwrap_or_else(error_word)
}

fn error_word(e: Misuse) -> u64 {
    match e {
        Misuse::NotInitialized => ERR_NOT_INITIALIZED,
        Misuse::OutOfRange => ERR_OUT_OF_RANGE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(count: u32) -> u64 {
        apply(0, Update::Init(count)).unwrap().0
    }

    fn arrive(word: u64, count: u32) -> (u64, u64) {
        let update = Update::Arrive {
            count,
            drop: false,
            expect_tx: 0,
        };
        apply(word, update).unwrap()
    }

    #[test]
    fn init_sets_phase_zero_pending_and_expected_to_count_and_tx_to_zero() {
        let w = init(3);
        assert_eq!(
            unpack(w).unwrap(),
            Fields {
                pending: 3,
                expected: 3,
                tx: 0,
                phase: false
            }
        );
    }

    #[test]
    fn init_count_must_be_between_one_and_two_to_the_twenty_minus_one() {
        assert_eq!(apply(0, Update::Init(0)), Err(Misuse::OutOfRange));
        assert_eq!(apply(0, Update::Init(1 << 20)), Err(Misuse::OutOfRange));
        assert!(apply(0, Update::Init((1 << 20) - 1)).is_ok());
    }

    #[test]
    fn the_last_arrival_completes_the_phase_and_reloads_the_pending_count() {
        let w = init(2);
        let (w, s0) = arrive(w, 1);
        assert!(!phase_complete(w, s0, false).unwrap());
        let (w, s1) = arrive(w, 1);
        assert_eq!(pending_count(s0), 2);
        assert_eq!(pending_count(s1), 1);
        assert!(phase_complete(w, s0, false).unwrap());
        assert_eq!(unpack(w).unwrap().pending, 2);
        assert!(unpack(w).unwrap().phase);
    }

    #[test]
    fn a_phase_with_transactions_pending_completes_when_they_complete() {
        let w = init(1);
        let expect = Update::Arrive {
            count: 1,
            drop: false,
            expect_tx: 64,
        };
        let (w, s) = apply(w, expect).unwrap();
        assert!(!phase_complete(w, s, false).unwrap());
        let (w, _) = apply(w, Update::CompleteTx(48)).unwrap();
        assert!(!phase_complete(w, s, false).unwrap());
        let (w, _) = apply(w, Update::CompleteTx(16)).unwrap();
        assert!(phase_complete(w, s, false).unwrap());
    }

    #[test]
    fn tx_count_may_go_negative_when_transactions_complete_before_they_are_expected() {
        let w = init(1);
        let (w, _) = apply(w, Update::CompleteTx(32)).unwrap();
        assert_eq!(unpack(w).unwrap().tx, -32);
        let (w, s) = apply(
            w,
            Update::Arrive {
                count: 1,
                drop: false,
                expect_tx: 32,
            },
        )
        .unwrap();
        assert!(phase_complete(w, s, false).unwrap());
    }

    #[test]
    fn parity_waits_name_the_current_phase_false_and_the_preceding_one_true() {
        let w = init(1);
        assert!(!phase_complete(w, 0, true).unwrap());
        assert!(phase_complete(w, 1, true).unwrap());
        let (w, _) = arrive(w, 1);
        assert!(phase_complete(w, 0, true).unwrap());
        assert!(!phase_complete(w, 1, true).unwrap());
    }

    #[test]
    fn arrive_drop_lowers_the_expected_count_of_later_phases() {
        let w = init(2);
        let drop = Update::Arrive {
            count: 1,
            drop: true,
            expect_tx: 0,
        };
        let (w, _) = apply(w, drop).unwrap();
        let (w, _) = arrive(w, 1);
        assert_eq!(unpack(w).unwrap().pending, 1);
    }

    #[test]
    fn cp_async_arrive_without_noinc_changes_no_count() {
        let w = init(2);
        let (v, _) = apply(w, Update::CpAsyncArrive { noinc: false }).unwrap();
        assert_eq!(v, w);
        let (v, _) = apply(w, Update::CpAsyncArrive { noinc: true }).unwrap();
        assert_eq!(unpack(v).unwrap().pending, 1);
    }

    #[test]
    fn an_operation_on_a_word_that_holds_no_mbarrier_is_an_error() {
        assert_eq!(apply(0, Update::ExpectTx(1)), Err(Misuse::NotInitialized));
        let (w, _) = apply(init(1), Update::Inval).unwrap();
        assert_eq!(phase_complete(w, 0, true), Err(Misuse::NotInitialized));
    }

    #[test]
    fn more_arrivals_than_pending_and_tx_counts_past_the_range_are_errors() {
        assert_eq!(
            apply(
                init(1),
                Update::Arrive {
                    count: 2,
                    drop: false,
                    expect_tx: 0
                }
            ),
            Err(Misuse::OutOfRange)
        );
        let w = apply(init(1), Update::ExpectTx(MAX_COUNT as u32))
            .unwrap()
            .0;
        assert_eq!(apply(w, Update::ExpectTx(1)), Err(Misuse::OutOfRange));
    }
}
