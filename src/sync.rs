//! Cooperating threads: the saved state of a thread (its *frame*) and what happens between
//! rounds of a cooperative block (see `ptxjit_runtime::Cooperation`): barriers are released,
//! warp collectives (`shfl`, `vote`, `match`, `bar.warp.sync`) exchange their values, warp
//! and warpgroup matrix products (`mma`, `wgmma`) are computed.
//!
//! A kernel with such instructions runs each thread until its next synchronization point,
//! where the compiled code stores the instruction's operands in the frame, saves every
//! register there, and moves on to the next thread. After a round, every unfinished thread is
//! waiting; [`after_round`] performs what the waiting threads asked for, writes their results,
//! and marks them runnable again. `exit`/`ret` mark a thread done; per the ISA, exited
//! threads no longer hold up barriers for all threads of the CTA.
//!
//! The blocks of a cluster run their rounds together (`ptxjit_runtime::Cooperation`), and
//! [`CoopKernel::after_round`] sees all of them: a cluster barrier completes when every
//! thread of the cluster that has not exited has arrived, and a launch is stuck only when
//! no block of the cluster can proceed. A cooperative launch of a kernel with grid barriers
//! (`Op::GridSync`) runs all its blocks together in the same way, and its grid barrier
//! completes when every thread of the grid that has not exited waits at it.

use ptxjit_runtime::{BlockContext, Status};

use crate::frontend::checked::{
    BarKind, BarRed, MmaForm, MmaType, ReduxOp, ShflMode, VoteMode, WgmmaForm,
};

/// Byte offsets within a thread's frame, and the block header before the frames.
pub mod frame {
    /// Per block: 16 barrier arrival counters (`bar.arrive`), u32 each, at 0; the cluster
    /// barrier's completed phases, u32, at [`CLUSTER_PHASES`] (the same in every block of
    /// the cluster).
    pub const HEADER: usize = 128;
    pub const CLUSTER_PHASES: i32 = 64;
    /// u32: where the thread resumes: 0 = its start, k + 1 = after sync point k, `DONE`.
    pub const RESUME: i32 = 0;
    /// u32: 1 while the thread waits at sync point `RESUME - 1`.
    pub const WAITING: i32 = 4;
    /// u32: the phase of the cluster barrier the thread last arrived in, plus 1 (0: none).
    pub const CLUSTER_ARRIVAL: i32 = 8;
    /// u32 and u64: at an mbarrier wait, how many rounds in a row it timed out seeing the
    /// same object word, and that word (`CoopKernel::time_out_waits`).
    pub const WAIT_ROUNDS: i32 = 12;
    pub const WAIT_WORD: i32 = 16;
    /// The words above start every block zeroed; the rest of the frame up to the `.local`
    /// variables, a thread writes before it reads (`CoopKernel::written_first`).
    pub const WRITTEN_FIRST: i32 = 24;
    /// u32: 1 where the thread's lane group saved its state (`lower::lanes::coop`): the
    /// registers the group keeps once a group are alike in its lanes, and in lane 0's frame
    /// only until its lanes go on alone; 0 where the thread did.
    pub const GROUPED: i32 = 24;
    /// u32: a result predicate, written by `after_round`.
    pub const RESULT_PRED: i32 = 28;
    /// 16 × u64: the operands of the synchronizing instruction (at most 12: `mma.m8n8k4`
    /// with f32 C); the last is the membermask of warp collectives.
    pub const ARGS: i32 = 32;
    pub const MASK_ARG: i32 = 15;
    /// 8 × u64 result values (`mma`'s D), written by `after_round`.
    pub const RESULT: i32 = 160;
    pub const RESULTS: usize = 8;
    /// Saved registers start here.
    pub const REGS: i32 = 224;
    pub const DONE: u32 = u32::MAX;
}

/// Status kinds (beyond the runtime's) that end a cooperative launch.
pub mod status {
    /// A barrier that can never complete: some threads wait, the others wait elsewhere.
    pub const DEADLOCK: u32 = 16;
    /// Threads of a block wait at different `bar.sync` instructions for all threads.
    pub const DIVERGENT_BARRIER: u32 = 17;
    /// A warp collective whose live member lanes wait elsewhere (or, for `ldmatrix` and
    /// `mma`, a warp with exited lanes).
    pub const INCOMPLETE_COLLECTIVE: u32 = 18;
    /// An mbarrier operation on memory that holds no mbarrier object.
    pub const MBARRIER_UNINITIALIZED: u32 = 19;
    /// An mbarrier count out of the ISA's ranges, or a misaligned object.
    pub const MBARRIER_RANGE: u32 = 20;
    /// Threads wait on mbarrier phases that nothing can complete any more.
    pub const MBARRIER_DEADLOCK: u32 = 21;
    /// A tensor copy through a map that breaks a rule (`crate::tensor_map::MapError`, in the
    /// fault words).
    pub const TENSOR_MAP: u32 = 22;
    /// A `wgmma` whose warps give different matrix descriptors.
    pub const WGMMA_DESCRIPTORS: u32 = 23;
}

/// Rounds in a row that every thread waiting on an mbarrier may time out seeing its object
/// unchanged, with no other thread able to proceed, before the launch ends as a deadlock.
/// (A thread may poll with `test_wait` and do other work in between, so a single such round
/// proves nothing; this many bounds the wait.)
pub const STUCK_ROUNDS: u32 = 256;

/// What a synchronization point does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// `bar.sync`/`bar.red`: ARGS = [barrier id, thread count (0 = all), predicate].
    Barrier(BarKind),
    /// ARGS = [a, b, c], membermask.
    Shfl(ShflMode),
    /// ARGS = [predicate], membermask.
    Vote(VoteMode),
    /// ARGS = [value], membermask.
    Match { all: bool },
    /// ARGS = [value], membermask.
    Redux { op: ReduxOp, signed: bool },
    /// membermask only.
    Elect,
    /// `bar.warp.sync`: membermask only.
    WarpSync,
    /// `ldmatrix`/`stmatrix` `.sync.aligned.m8n8.xN{.trans}.shared.b16`: ARGS = [host
    /// address of this lane's row] (and for `stmatrix` the N words to store); `ldmatrix`'s
    /// results: N words.
    WarpMatrix { store: bool, num: u32, trans: bool },
    /// `mma.sync.aligned...`: ARGS = the A, B and C registers in order; results: D's.
    Mma(MmaForm),
    /// `wgmma.mma_async.sync.aligned...`, over the warpgroup: ARGS as `crate::wgmma::args`;
    /// D is read and written in place, in its registers' save slots (`SyncPoint::slots`).
    Wgmma(WgmmaForm),
    /// `mbarrier.test_wait`/`try_wait` on a phase not complete when the thread got there:
    /// ARGS = [host address of the object, state or phase parity]; result: the predicate.
    MbarrierWait { parity: bool },
    /// `barrier.cluster.wait`: no ARGS (the arrival is in `frame::CLUSTER_ARRIVAL`).
    ClusterWait,
    /// The grid barrier of a cooperative launch (`Op::GridSync`): no ARGS.
    GridSync,
    /// `activemask`: no ARGS; result: the lanes of the warp waiting at the same instruction.
    Activemask,
}

/// What completes a synchronization point: its warp's lanes, its warpgroup, a barrier of its
/// block, an mbarrier's phase, the cluster barrier or the grid barrier.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Completer {
    Warp,
    Warpgroup,
    Barrier,
    Mbarrier,
    Cluster,
    Grid,
}

impl SyncKind {
    fn completer(self) -> Completer {
        match self {
            SyncKind::Shfl(_)
            | SyncKind::Vote(_)
            | SyncKind::Match { .. }
            | SyncKind::Redux { .. }
            | SyncKind::Elect
            | SyncKind::WarpSync
            | SyncKind::WarpMatrix { .. }
            | SyncKind::Mma(_)
            | SyncKind::Activemask => Completer::Warp,
            SyncKind::Wgmma(_) => Completer::Warpgroup,
            SyncKind::Barrier(_) => Completer::Barrier,
            SyncKind::MbarrierWait { .. } => Completer::Mbarrier,
            SyncKind::ClusterWait => Completer::Cluster,
            SyncKind::GridSync => Completer::Grid,
        }
    }
}

/// The [`Completer`]s that threads wait for in a round, as a set.
#[derive(Clone, Copy)]
struct Waited(u8);

impl Waited {
    fn has(self, c: Completer) -> bool {
        self.0 >> c as u8 & 1 == 1
    }
}

#[derive(Clone, Debug)]
pub struct SyncPoint {
    /// Index of the instruction in the kernel's body.
    pub inst: u32,
    pub kind: SyncKind,
    /// Frame offsets of the registers the point updates in place: `wgmma`'s D; for a run of
    /// `mma`s, each one's A, B, C and D registers in turn.
    pub slots: Vec<i32>,
    /// Instructions the point performs: consecutive `mma`s of one form are one point, and
    /// so is an `ldmatrix` with the run of them right after it (`lower::sync::sync_points`);
    /// the others one instruction each.
    pub insts: u32,
    /// For an `ldmatrix` with a run of `mma`s after it, their form (`slots` holds the
    /// `ldmatrix`'s registers' slots, then the run's).
    pub then_mma: Option<MmaForm>,
}

/// Everything `after_round` needs to know about a cooperative kernel.
pub struct CoopKernel {
    pub function: u32,
    pub frame_bytes: usize,
    /// The part of a frame each thread writes before it reads it, which needs no zeroing
    /// between blocks (`ptxjit_runtime::Cooperation::written_first`): from
    /// [`frame::WRITTEN_FIRST`] to the end of the registers' save slots. A sync point writes
    /// every operand word its kind reads, `after_round` every result word it releases a
    /// thread to read, and a sync point's save and restore take the same registers, those
    /// live after it.
    pub written_first: std::ops::Range<usize>,
    pub points: Vec<SyncPoint>,
    /// Bytes of static shared memory (the dynamic part follows them).
    pub static_shared: u32,
    /// Whether a point is the grid barrier (a cooperative launch then runs the whole grid as
    /// one group: `ptxjit_runtime::Cooperation::grid_wide`).
    pub grid_wide: bool,
}

struct Frames<'a> {
    bytes: &'a mut [u8],
    size: usize,
}

impl Frames<'_> {
    /// Where byte `off` of thread `t`'s frame is.
    fn index(&self, t: usize, off: i32) -> usize {
        frame::HEADER + t * self.size + off as usize
    }
    /// Thread `t`'s frame.
    fn frame(&self, t: usize) -> &[u8] {
        &self.bytes[self.index(t, 0)..][..self.size]
    }
    fn frame_mut(&mut self, t: usize) -> &mut [u8] {
        let i = self.index(t, 0);
        &mut self.bytes[i..][..self.size]
    }
    fn u32_at(&self, t: usize, off: i32) -> u32 {
        let i = self.index(t, off);
        u32::from_le_bytes(self.bytes[i..i + 4].try_into().expect("4 bytes"))
    }
    fn u64_at(&self, t: usize, off: i32) -> u64 {
        let i = self.index(t, off);
        u64::from_le_bytes(self.bytes[i..i + 8].try_into().expect("8 bytes"))
    }
    fn set_u32(&mut self, t: usize, off: i32, v: u32) {
        let i = self.index(t, off);
        self.bytes[i..i + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn set_u64(&mut self, t: usize, off: i32, v: u64) {
        let i = self.index(t, off);
        self.bytes[i..i + 8].copy_from_slice(&v.to_le_bytes());
    }
    fn arg(&self, t: usize, k: i32) -> u64 {
        self.u64_at(t, frame::ARGS + 8 * k)
    }
    /// Releases thread `t` with a result.
    fn release(&mut self, t: usize, value: u64, pred: bool) {
        self.release_with(t, &[value], pred);
    }
    fn release_with(&mut self, t: usize, values: &[u64], pred: bool) {
        for (i, v) in values.iter().enumerate() {
            self.set_u64(t, frame::RESULT + 8 * i as i32, *v);
        }
        self.set_u32(t, frame::RESULT_PRED, pred as u32);
        self.wake(t);
    }
    /// Thread `t` goes on, without results.
    fn wake(&mut self, t: usize) {
        self.set_u32(t, frame::WAITING, 0);
    }
    /// Where thread `t` is after a round.
    fn at(&self, t: usize) -> At {
        match (
            self.u32_at(t, frame::RESUME),
            self.u32_at(t, frame::WAITING),
        ) {
            (frame::DONE, _) => At::Done,
            (r, 1) => At::Waiting(r as usize - 1),
            _ => At::Runnable,
        }
    }
    fn header_u32(&self, off: i32) -> u32 {
        let i = off as usize;
        u32::from_le_bytes(self.bytes[i..i + 4].try_into().expect("4 bytes"))
    }
    fn set_header_u32(&mut self, off: i32, v: u32) {
        let i = off as usize;
        self.bytes[i..i + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn arrivals(&self, id: usize) -> u32 {
        u32::from_le_bytes(self.bytes[4 * id..4 * id + 4].try_into().expect("4 bytes"))
    }
    fn set_arrivals(&mut self, id: usize, v: u32) {
        self.bytes[4 * id..4 * id + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// Where each thread is after a round.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Done,
    Waiting(usize),
    Runnable,
}

impl CoopKernel {
    fn fail(&self, kind: u32, point: usize) -> u64 {
        Status::encode(kind, self.function, self.points[point].inst)
    }

    /// Performs the requests of the waiting threads of a cluster's blocks (`bytes` holds
    /// their headers and frames one after another, `ctxs` their contexts). `Ok(true)` when
    /// every thread is done; an error names the rank of the block that reports it.
    pub fn after_round(
        &self,
        bytes: &mut [u8],
        ctxs: &[BlockContext],
    ) -> Result<bool, (usize, u64)> {
        let n = (ctxs[0].ntid[0] * ctxs[0].ntid[1] * ctxs[0].ntid[2]) as usize;
        if let [_] = ctxs {
            let mut f = Frames {
                bytes: &mut *bytes,
                size: self.frame_bytes,
            };
            if let Some(done) = self.whole_block_round(&mut f, n) {
                return Ok(done);
            }
        }
        let mut blocks: Vec<Frames> = bytes
            .chunks_mut(bytes.len() / ctxs.len())
            .map(|bytes| Frames {
                bytes,
                size: self.frame_bytes,
            })
            .collect();
        // Where each thread of each block is, block after block: the round's one list (a
        // round is over a block's threads, so what it costs beyond them is what counts),
        // and what some thread waits for (each look at a kind is over every thread).
        let mut at = Vec::with_capacity(blocks.len() * n);
        let mut waited = 0;
        for f in &blocks {
            for t in 0..n {
                let a = f.at(t);
                match a {
                    At::Done => {}
                    At::Runnable => return Ok(false),
                    At::Waiting(p) => waited |= 1 << self.points[p].kind.completer() as u8,
                }
                at.push(a);
            }
        }
        if waited == 0 {
            return Ok(true);
        }
        let waited = Waited(waited);
        let mut progress = false;
        for (rank, ((f, at), ctx)) in blocks.iter_mut().zip(at.chunks(n)).zip(ctxs).enumerate() {
            progress |= self
                .block_round(f, at, ctx, waited)
                .map_err(|s| (rank, s))?;
        }
        if waited.has(Completer::Cluster) {
            let cluster_size = ctxs[0].cluster.cluster_nctarank.max(1) as usize;
            for (cluster, at) in blocks
                .chunks_mut(cluster_size)
                .zip(at.chunks(cluster_size * n))
            {
                progress |= self.cluster_barrier(cluster, at);
            }
        }
        if waited.has(Completer::Grid) {
            progress |= self.grid_barrier(&mut blocks, &at);
        }
        if progress {
            return Ok(false);
        }
        let mut moving = false;
        if waited.has(Completer::Mbarrier) {
            for (rank, (f, at)) in blocks.iter_mut().zip(at.chunks(n)).enumerate() {
                moving |= self.time_out_waits(f, at).map_err(|s| (rank, s))?;
            }
        }
        if moving {
            return Ok(false);
        }
        // Nothing can proceed: name the first waiting thread's instruction.
        let (rank, point) = at
            .iter()
            .enumerate()
            .find_map(|(i, a)| match a {
                At::Waiting(p) => Some((i / n, *p)),
                _ => None,
            })
            .expect("someone waits");
        let kind = match self.points[point].kind.completer() {
            Completer::Barrier | Completer::Cluster | Completer::Grid => status::DEADLOCK,
            Completer::Mbarrier => status::MBARRIER_DEADLOCK,
            Completer::Warp | Completer::Warpgroup => status::INCOMPLETE_COLLECTIVE,
        };
        Err((rank, self.fail(kind, point)))
    }

    /// The rounds a lone block spends most of its time in, in one look at each thread: all
    /// its threads wait at one `bar.sync` of the whole block (which then completes), or all
    /// at one warp collective of whole warps (performed warp by warp), or all are done
    /// (`Some(true)`). `None` for any other round, which takes the general path.
    fn whole_block_round(&self, f: &mut Frames, n: usize) -> Option<bool> {
        let state = |f: &Frames, t: usize| f.u64_at(t, frame::RESUME);
        let first = state(f, 0);
        if first as u32 == frame::DONE {
            return (1..n)
                .all(|t| state(f, t) as u32 == frame::DONE)
                .then_some(true);
        }
        let (resume, waiting) = (first as u32, (first >> 32) as u32);
        if waiting != 1 || resume == 0 {
            return None;
        }
        let p = resume as usize - 1;
        let kind = self.points[p].kind;
        match kind {
            SyncKind::Barrier(BarKind::Sync) => {
                // (With every thread there, a count up to the block's completes the barrier
                // and leaves its `bar.arrive` arrivals as they are, as in `barriers`.)
                let id = f.arg(0, 0);
                if id >= 16 || f.arg(0, 1) > n as u64 {
                    return None;
                }
                if !(1..n).all(|t| state(f, t) == first && f.arg(t, 0) == id) {
                    return None;
                }
                (0..n).for_each(|t| f.wake(t));
            }
            // (`activemask` names no members: its own rule, in `warp_collectives`.)
            _ if kind.completer() == Completer::Warp
                && kind != SyncKind::Activemask
                && n.is_multiple_of(32) =>
            {
                let whole_warp = |t| f.arg(t, frame::MASK_ARG) as u32 == u32::MAX;
                if !(1..n).all(|t| state(f, t) == first) || !(0..n).all(whole_warp) {
                    return None;
                }
                for base in (0..n).step_by(32) {
                    self.warp_point(f, p, base, 32, u32::MAX);
                }
            }
            _ => return None,
        }
        Some(false)
    }

    /// What one block's waiting threads asked for that the block alone can give; whether
    /// any thread was released.
    fn block_round(
        &self,
        f: &mut Frames,
        at: &[At],
        ctx: &BlockContext,
        waited: Waited,
    ) -> Result<bool, u64> {
        if at.iter().all(|a| *a == At::Done) {
            return Ok(false);
        }
        let mut progress = false;
        if waited.has(Completer::Warp) {
            progress |= self.warp_collectives(f, at)?;
        }
        if waited.has(Completer::Warpgroup) {
            progress |= self.warpgroup_mmas(f, at, ctx)?;
        }
        if !progress && waited.has(Completer::Barrier) {
            progress = self.barriers(f, at)?;
        }
        if waited.has(Completer::Mbarrier) {
            progress |= self.mbarrier_waits(f, at)?;
        }
        Ok(progress)
    }

    /// The cluster barrier: its phase completes when every thread of the cluster that has
    /// not exited has arrived in it; then the waits of the threads that arrived return.
    /// Whether anything changed.
    /// (`at`: where the threads of `blocks` are, block after block.)
    fn cluster_barrier(&self, blocks: &mut [Frames], at: &[At]) -> bool {
        let n = at.len() / blocks.len();
        let completed = blocks[0].header_u32(frame::CLUSTER_PHASES);
        let (mut live, mut arrived) = (0, 0);
        for (f, at) in blocks.iter().zip(at.chunks(n)) {
            for t in (0..at.len()).filter(|&t| at[t] != At::Done) {
                live += 1;
                arrived += u32::from(f.u32_at(t, frame::CLUSTER_ARRIVAL) == completed + 1);
            }
        }
        let complete = live > 0 && arrived == live;
        let completed = completed + u32::from(complete);
        let mut released = false;
        for (f, at) in blocks.iter_mut().zip(at.chunks(n)) {
            f.set_header_u32(frame::CLUSTER_PHASES, completed);
            for (t, a) in at.iter().enumerate() {
                let waits =
                    matches!(*a, At::Waiting(p) if self.points[p].kind == SyncKind::ClusterWait);
                let arrival = f.u32_at(t, frame::CLUSTER_ARRIVAL);
                if waits && arrival != 0 && arrival <= completed {
                    f.release_with(t, &[], false);
                    released = true;
                }
            }
        }
        complete || released
    }

    /// The grid barrier: it completes when every thread of the grid (the blocks a
    /// cooperative launch runs together) that has not exited waits at it. Whether it did.
    /// (`at`: as for [`Self::cluster_barrier`].)
    fn grid_barrier(&self, blocks: &mut [Frames], at: &[At]) -> bool {
        let at_grid_sync =
            |a: &At| matches!(*a, At::Waiting(p) if self.points[p].kind == SyncKind::GridSync);
        let all_there = at.iter().all(|a| *a == At::Done || at_grid_sync(a));
        if !all_there || !at.iter().any(at_grid_sync) {
            return false;
        }
        let n = at.len() / blocks.len();
        for (f, at) in blocks.iter_mut().zip(at.chunks(n)) {
            for (t, a) in at.iter().enumerate() {
                if at_grid_sync(a) {
                    f.release_with(t, &[], false);
                }
            }
        }
        true
    }

    /// The threads waiting at an mbarrier wait: (thread, point, host address of the object).
    fn mbarrier_waiters(&self, f: &Frames, at: &[At]) -> Vec<(usize, usize, u64)> {
        (0..at.len())
            .filter_map(|t| match at[t] {
                At::Waiting(p) if matches!(self.points[p].kind, SyncKind::MbarrierWait { .. }) => {
                    Some((t, p, f.arg(t, 0)))
                }
                _ => None,
            })
            .collect()
    }

    /// Releases, with `true`, every mbarrier wait whose phase has completed.
    fn mbarrier_waits(&self, f: &mut Frames, at: &[At]) -> Result<bool, u64> {
        let mut progress = false;
        for (t, point, addr) in self.mbarrier_waiters(f, at) {
            let SyncKind::MbarrierWait { parity } = self.points[point].kind else {
                unreachable!("mbarrier_waiters keeps waits")
            };
            let word = object_word(addr);
            let done = crate::mbarrier::phase_complete(word, f.arg(t, 1), parity)
                .map_err(|_| self.fail(status::MBARRIER_UNINITIALIZED, point))?;
            if done {
                f.set_u32(t, frame::WAIT_ROUNDS, 0);
                f.release(t, 0, true);
                progress = true;
            }
        }
        Ok(progress)
    }

    /// When nothing else can proceed, the mbarrier waits return `false` (a `try_wait`'s time
    /// limit, a `test_wait`'s answer), so that threads polling in a loop run on; unless every
    /// such thread has seen its object unchanged for [`STUCK_ROUNDS`] such rounds.
    fn time_out_waits(&self, f: &mut Frames, at: &[At]) -> Result<bool, u64> {
        let waiters = self.mbarrier_waiters(f, at);
        let mut moving = false;
        for &(t, _, addr) in &waiters {
            let word = object_word(addr);
            let rounds = if f.u64_at(t, frame::WAIT_WORD) == word {
                f.u32_at(t, frame::WAIT_ROUNDS) + 1
            } else {
                f.set_u64(t, frame::WAIT_WORD, word);
                0
            };
            f.set_u32(t, frame::WAIT_ROUNDS, rounds);
            moving |= rounds < STUCK_ROUNDS;
        }
        if !moving {
            return Ok(false);
        }
        for &(t, _, _) in &waiters {
            f.release(t, 0, false);
        }
        Ok(true)
    }

    /// Completes every warp collective whose member lanes all wait at it.
    fn warp_collectives(&self, f: &mut Frames, at: &[At]) -> Result<bool, u64> {
        let mut progress = false;
        for (warp, at) in at.chunks(32).enumerate() {
            let base = 32 * warp;
            let lanes_at = |wanted: At| lane_mask(at.iter().map(|a| *a == wanted));
            let done = lanes_at(At::Done);
            let warp_lanes = u32::MAX >> (32 - at.len());
            // The lanes released this round.
            let mut settled = 0u32;
            for (lane, a) in at.iter().enumerate() {
                let At::Waiting(point) = *a else {
                    continue;
                };
                if settled >> lane & 1 == 1 {
                    continue;
                }
                let kind = self.points[point].kind;
                if kind.completer() != Completer::Warp {
                    continue;
                }
                let here = lanes_at(At::Waiting(point));
                if kind == SyncKind::Activemask {
                    // The lanes that got here together: with every thread stopped, those of
                    // the warp that wait at this instruction (the others took another path,
                    // wait elsewhere, or have exited).
                    for l in lanes(here) {
                        f.release(base + l, here as u64, false);
                    }
                    settled |= here;
                    progress = true;
                    continue;
                }
                // On sm_70 and later, lanes that have exited drop out of a membermask and the
                // others proceed without them; `ldmatrix` and `mma` need the whole warp.
                let whole_warp = matches!(kind, SyncKind::WarpMatrix { .. } | SyncKind::Mma(_));
                if whole_warp && at.len() < 32 {
                    return Err(self.fail(status::INCOMPLETE_COLLECTIVE, point));
                }
                let mut members = f.arg(base + lane, frame::MASK_ARG) as u32 & warp_lanes;
                if !whole_warp {
                    members &= !done;
                }
                // (A member set that overlaps one already performed: membermasks that
                // disagree, which the ISA leaves undefined; the lane waits for a later round.)
                if members != 0
                    && members & !here == 0
                    && members >> lane & 1 == 1
                    && members & settled == 0
                {
                    self.warp_point(f, point, base, at.len(), members);
                    settled |= members;
                    progress = true;
                } else if members & done != 0 {
                    return Err(self.fail(status::INCOMPLETE_COLLECTIVE, point));
                }
            }
        }
        Ok(progress)
    }

    /// Performs sync point `point`, a warp's, for the lanes `members` of the warp whose first
    /// thread is `base` and that has `lanes` lanes, and releases them.
    fn warp_point(&self, f: &mut Frames, point: usize, base: usize, lanes: usize, members: u32) {
        let p = &self.points[point];
        match (p.kind, p.then_mma) {
            (SyncKind::Mma(form), _) if !p.slots.is_empty() => {
                self.mma_run(f, form, &p.slots, base, members);
            }
            (SyncKind::WarpMatrix { num, trans, .. }, Some(form)) => {
                // (The rows to the `ldmatrix`'s registers' slots, where the run's first
                // reads them.)
                let rows = ldmatrix(num, trans, |l| f.arg(base + l, 0));
                let (loaded, run) = p.slots.split_at(num as usize);
                for (l, words) in rows.iter().enumerate() {
                    for (&slot, &w) in loaded.iter().zip(words) {
                        f.set_u32(base + l, slot, w as u32);
                    }
                }
                self.mma_run(f, form, run, base, members);
            }
            (kind, _) => self.collective(f, kind, base, lanes, members),
        }
    }

    /// Performs every `wgmma` whose warpgroup's 128 threads all wait at it.
    fn warpgroup_mmas(&self, f: &mut Frames, at: &[At], ctx: &BlockContext) -> Result<bool, u64> {
        let mut progress = false;
        for base in (0..at.len()).step_by(128) {
            let group = base..(base + 128).min(at.len());
            let Some(point) = group.clone().find_map(|t| match at[t] {
                At::Waiting(p) if matches!(self.points[p].kind, SyncKind::Wgmma(_)) => Some(p),
                _ => None,
            }) else {
                continue;
            };
            // A warpgroup is four whole warps; one that has exited can never arrive.
            let arrived = group.clone().all(|t| at[t] == At::Waiting(point));
            if group.len() < 128 || group.clone().any(|t| at[t] == At::Done) {
                return Err(self.fail(status::INCOMPLETE_COLLECTIVE, point));
            }
            if arrived {
                self.wgmma(f, point, base, ctx)?;
                progress = true;
            }
        }
        Ok(progress)
    }

    /// The product of the warpgroup of threads `base..base + 128` at `point`.
    fn wgmma(
        &self,
        f: &mut Frames,
        point: usize,
        base: usize,
        ctx: &BlockContext,
    ) -> Result<(), u64> {
        use crate::wgmma::{Issue, Outside, args, run};
        let SyncKind::Wgmma(form) = self.points[point].kind else {
            unreachable!("warpgroup_mmas keeps wgmma points")
        };
        let slots = &self.points[point].slots;
        let threads = base..base + 128;
        let words = |t: usize| [args::A_DESC, args::B_DESC, args::FLAGS].map(|k| f.arg(t, k));
        if threads.clone().any(|t| words(t) != words(base)) {
            return Err(self.fail(status::WGMMA_DESCRIPTORS, point));
        }
        let issue = Issue {
            a_desc: f.arg(base, args::A_DESC),
            b_desc: f.arg(base, args::B_DESC),
            flags: f.arg(base, args::FLAGS),
            scale_d: threads
                .clone()
                .map(|t| f.arg(t, args::SCALE_D) & 1 == 1)
                .collect(),
            a: threads
                .clone()
                .map(|t| std::array::from_fn(|i| f.arg(t, args::A_REGS + i as i32) as u32))
                .collect(),
        };
        let mut d: Vec<u32> = threads
            .clone()
            .flat_map(|t| slots.iter().map(move |&s| (t, s)))
            .map(|(t, s)| f.u32_at(t, s))
            .collect();
        let len = self.static_shared as usize + ctx.dynamic_shared_bytes as usize;
        // SAFETY: between rounds no thread runs; the block's shared memory is this long.
        let shared = unsafe { std::slice::from_raw_parts(ctx.shared, len) };
        if let Err(Outside { address, bytes }) = run(form, &issue, shared, &mut d) {
            ctx.fault_address.set(address);
            ctx.fault_detail.set(ptxjit_runtime::Fault::detail(
                bytes as u32,
                false,
                true,
                base as u32,
            ));
            return Err(self.fail(Status::ILLEGAL_ADDRESS, point));
        }
        for (t, regs) in threads.zip(d.chunks_exact(slots.len())) {
            for (&s, &v) in slots.iter().zip(regs) {
                f.set_u32(t, s, v);
            }
            f.release_with(t, &[], false);
        }
        Ok(())
    }

    /// The `mma`s of a run (`slots`: each one's A, B, C and D registers' save slots, see
    /// [`SyncPoint::slots`]) for the warp whose first thread is `base`, in order, each D
    /// written in place (so a later one reads an earlier one's D as a lane would); then
    /// releases the lanes `members` (the whole warp).
    fn mma_run(&self, f: &mut Frames, form: MmaForm, slots: &[i32], base: usize, members: u32) {
        let [na, nb, nc, nd] = form.registers().map(|n| n as usize);
        // (Registers of 64 bits: `.f64`'s, all four operands'.)
        let wide = form.d == MmaType::F64;
        let word = |frame: &[u8], slot: i32| {
            let at = &frame[slot as usize..];
            match wide {
                true => u64::from_le_bytes(at[..8].try_into().expect("8 bytes")),
                false => u32::from_le_bytes(at[..4].try_into().expect("4 bytes")) as u64,
            }
        };
        // Lane l's D register j, `d(l, j)`, written to its slot of the lane's frame.
        let place = |f: &mut Frames, results: &[i32], d: &dyn Fn(usize, usize) -> u64| {
            for l in 0..32 {
                let frame = f.frame_mut(base + l);
                for (j, &slot) in results.iter().enumerate() {
                    let (at, w) = (&mut frame[slot as usize..], d(l, j));
                    match wide {
                        true => at[..8].copy_from_slice(&w.to_le_bytes()),
                        false => at[..4].copy_from_slice(&(w as u32).to_le_bytes()),
                    }
                }
            }
        };
        for mma in slots.chunks(na + nb + nc + nd) {
            let (operands, results) = mma.split_at(na + nb + nc);
            let lanes: [&[u8]; 32] = std::array::from_fn(|l| f.frame(base + l));
            let operand = |l: usize, i: usize| word(lanes[l], operands[i]);
            if crate::mma::halves_m16n8k16(form) {
                let d = crate::mma::halves_product(form, |l, i| operand(l, i) as u32);
                place(f, results, &|l, j| d[l][j] as u64);
            } else {
                let d = warp_mma(form, 32, operand);
                place(f, results, &|l, j| d[l * nd + j]);
            }
        }
        for l in self::lanes(members) {
            f.wake(base + l);
        }
    }

    /// Performs the collective `kind` of the lanes `members` (a mask) of the warp whose
    /// first thread is `base` and that has `lanes` lanes, and releases them.
    fn collective(&self, f: &mut Frames, kind: SyncKind, base: usize, lanes: usize, members: u32) {
        let arg = |f: &Frames, l: usize, k: i32| f.arg(base + l, k);
        if let SyncKind::WarpMatrix { store, num, trans } = kind {
            if store {
                stmatrix(num, trans, |l| arg(f, l, 0), |l, m| arg(f, l, 1 + m as i32));
            }
            let results = match store {
                true => [[0; 4]; 32],
                false => ldmatrix(num, trans, |l| arg(f, l, 0)),
            };
            let num = if store { 0 } else { num as usize };
            for l in self::lanes(members) {
                f.release_with(base + l, &results[l][..num], false);
            }
            return;
        }
        if let SyncKind::Mma(form) = kind {
            let nd = form.registers()[3] as usize;
            let d = warp_mma(form, lanes, |l, i| arg(f, l, i as i32));
            for l in self::lanes(members) {
                f.release_with(base + l, &d[l * nd..][..nd], false);
            }
            return;
        }
        let pred = |f: &Frames, l: usize| arg(f, l, 0) & 1 == 1;
        let mut results = [(0u64, false); 32];
        // What every member gets alike, found once.
        let common = match kind {
            SyncKind::Vote(mode) => {
                let ballot = lane_mask((0..32).map(|l| members >> l & 1 == 1 && pred(f, l)));
                match mode {
                    VoteMode::All => (0, ballot == members),
                    VoteMode::Any => (0, ballot != 0),
                    VoteMode::Uni => (0, ballot == members || ballot == 0),
                    VoteMode::Ballot => (ballot as u64, false),
                }
            }
            SyncKind::Redux { op, signed } => {
                let values = self::lanes(members).map(|l| arg(f, l, 0) as u32);
                (redux(op, signed, values) as u64, false)
            }
            _ => (0, false),
        };
        for l in self::lanes(members) {
            results[l] = match kind {
                SyncKind::Shfl(mode) => {
                    let (b, c) = (arg(f, l, 1) as u32, arg(f, l, 2) as u32);
                    let (j, pval) = shfl_source(mode, l as u32, b, c);
                    // A source lane outside the warp, exited or not participating gives an
                    // undefined value: the lane's own.
                    let src = if j < 32 && members >> j & 1 == 1 {
                        j as usize
                    } else {
                        l
                    };
                    (arg(f, src, 0) as u32 as u64, pval)
                }
                SyncKind::Vote(_) | SyncKind::Redux { .. } => common,
                // The lowest member lane leads.
                SyncKind::Elect => {
                    let leader = members.trailing_zeros() as usize;
                    (leader as u64, l == leader)
                }
                SyncKind::Match { all } => {
                    let v = arg(f, l, 0);
                    let same =
                        lane_mask((0..32).map(|m| members >> m & 1 == 1 && arg(f, m, 0) == v));
                    if all {
                        let equal = same == members;
                        (if equal { members as u64 } else { 0 }, equal)
                    } else {
                        (same as u64, false)
                    }
                }
                _ => (0, false),
            };
        }
        for l in self::lanes(members) {
            let (v, p) = results[l];
            f.release(base + l, v, p);
        }
    }

    /// Releases every barrier whose participants have all arrived.
    fn barriers(&self, f: &mut Frames, at: &[At]) -> Result<bool, u64> {
        // Per barrier id: the first thread waiting at it, how many wait, how many of those
        // give a true predicate (`bar.red`), and whether one waits at another instruction.
        let mut live = 0;
        let mut first = [None; 16];
        let mut waiting = [0u32; 16];
        let mut true_preds = [0u32; 16];
        let mut divergent = [false; 16];
        for (t, a) in at.iter().enumerate() {
            if *a == At::Done {
                continue;
            }
            live += 1;
            let At::Waiting(p) = *a else {
                continue;
            };
            let Some(id) = self.barrier_id(f, t, p) else {
                continue;
            };
            let (_, first_p) = *first[id].get_or_insert((t, p));
            waiting[id] += 1;
            if matches!(self.points[p].kind, SyncKind::Barrier(BarKind::Red(_))) {
                true_preds[id] += (f.arg(t, 2) & 1) as u32;
            }
            divergent[id] |= p != first_p;
        }
        let mut released = 0u16;
        // (None for `bar.sync`, which has no results: its threads' result words stay
        // untouched, on cache lines of their frames that nothing else reads this round.)
        let mut results = [None; 16];
        for id in 0..16 {
            let Some((first, point)) = first[id] else {
                continue;
            };
            let count = f.arg(first, 1) as u32;
            let expected = if count == 0 { live } else { count };
            let arrived = f.arrivals(id);
            if waiting[id] + arrived < expected {
                continue;
            }
            if count == 0 && divergent[id] {
                return Err(self.fail(status::DIVERGENT_BARRIER, point));
            }
            results[id] = match self.points[point].kind {
                SyncKind::Barrier(BarKind::Red(BarRed::Popc)) => {
                    Some((true_preds[id] as u64, false))
                }
                SyncKind::Barrier(BarKind::Red(BarRed::And)) => {
                    Some((0, true_preds[id] == waiting[id]))
                }
                SyncKind::Barrier(BarKind::Red(BarRed::Or)) => Some((0, true_preds[id] > 0)),
                _ => None,
            };
            f.set_arrivals(
                id,
                arrived.saturating_sub(expected.saturating_sub(waiting[id])),
            );
            released |= 1 << id;
        }
        for (t, a) in at.iter().enumerate() {
            if let At::Waiting(p) = *a
                && let Some(id) = self.barrier_id(f, t, p)
                && released >> id & 1 == 1
            {
                match results[id] {
                    Some((value, pred)) => f.release(t, value, pred),
                    None => f.wake(t),
                }
            }
        }
        Ok(released != 0)
    }

    /// The id of the barrier that thread `t`, waiting at point `p`, waits at, if `p` is a
    /// barrier (an id past 15 is none: its threads wait for ever).
    fn barrier_id(&self, f: &Frames, t: usize, p: usize) -> Option<usize> {
        let id = f.arg(t, 0);
        (matches!(self.points[p].kind, SyncKind::Barrier(_)) && id < 16).then_some(id as usize)
    }
}

/// `mma` `form` over a warp whose first `lanes` lanes give their operand register i by
/// `operand(lane, i)` (the others zero): each lane's D registers, `form.registers()[3]` a
/// lane, lane 0's first.
fn warp_mma(
    form: MmaForm,
    lanes: usize,
    operand: impl Fn(usize, usize) -> u64,
) -> [u64; 32 * frame::RESULTS] {
    let n = crate::mma::operand_registers(form);
    let nd = form.registers()[3] as usize;
    // (A lane's operands fill its ARGS, at most 16 words; D, its RESULTS.)
    let mut regs = [0; 32 * 16];
    for (l, r) in regs.chunks_mut(n).take(lanes).enumerate() {
        for (i, r) in r.iter_mut().enumerate() {
            *r = operand(l, i);
        }
    }
    let mut d = [0; 32 * frame::RESULTS];
    crate::mma::mma(form, &regs[..32 * n], &mut d[..32 * nd]);
    d
}

/// The mask of the lanes (of at most 32) for which `each` gives true, lane 0 lowest.
fn lane_mask(each: impl Iterator<Item = bool>) -> u32 {
    each.enumerate()
        .fold(0, |m, (l, yes)| m | u32::from(yes) << l)
}

/// The lanes of a mask, lowest first.
fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask >> l & 1 == 1)
}

/// The word of the mbarrier object at a host address the waiting thread's code checked.
fn object_word(addr: u64) -> u64 {
    // SAFETY: the compiled wait checked the access as a `.b64` store (and its alignment:
    // a misaligned object never reaches a sync point).
    let object = unsafe { crate::mbarrier::at(addr) }.expect("checked aligned");
    object.load(std::sync::atomic::Ordering::Acquire)
}

/// The fragment of an 8×8 b16 matrix that lane `l` holds in one register of `ldmatrix` and
/// `stmatrix`: row l/4, columns 2(l%4) and 2(l%4)+1 (with `.trans`: column l/4, rows 2(l%4)
/// and 2(l%4)+1), low element in the low half. As (row, column) of the low and high halves.
fn matrix_fragment(l: usize, trans: bool) -> [(usize, usize); 2] {
    let (g, t) = (l / 4, l % 4);
    if trans {
        [(2 * t, g), (2 * t + 1, g)]
    } else {
        [(g, 2 * t), (g, 2 * t + 1)]
    }
}

/// The address of element (row, col) of matrix `m`, whose rows lanes 8m..8m+7 give.
fn matrix_element(
    row_address: &impl Fn(usize) -> u64,
    m: usize,
    (row, col): (usize, usize),
) -> u64 {
    row_address(8 * m + row) + 2 * col as u64
}

/// `ldmatrix`: lanes 8i..8i+7 give the row addresses of matrix i (8 rows of 8 b16); each lane
/// receives its [`matrix_fragment`] of each matrix.
/// Lane l's registers are `[l][..num]` (`num` is 1, 2 or 4).
fn ldmatrix(num: u32, trans: bool, row_address: impl Fn(usize) -> u64) -> [[u64; 4]; 32] {
    // Each row read once, whole: the lanes' fragments then come from registers. (Read an
    // element at a time, a row's address for each, it took 6% of Triton's matmul.)
    let mut rows = [[[0u16; 8]; 8]; 4];
    for (m, rows) in rows.iter_mut().enumerate().take(num as usize) {
        for (r, row) in rows.iter_mut().enumerate() {
            // SAFETY: the address was computed by the kernel for a shared-memory row, as
            // `ld.shared` would read it, and (when confined) checked to lie in shared memory
            // with the row's 16 bytes.
            *row = unsafe { std::ptr::read_unaligned(row_address(8 * m + r) as *const [u16; 8]) };
        }
    }
    let mut fragments = [[0; 4]; 32];
    for (l, registers) in fragments.iter_mut().enumerate() {
        for (m, (register, rows)) in registers.iter_mut().zip(&rows).enumerate() {
            if m < num as usize {
                let [lo, hi] = matrix_fragment(l, trans).map(|(row, col)| rows[row][col]);
                *register = lo as u64 | (hi as u64) << 16;
            }
        }
    }
    fragments
}

/// `stmatrix`: the inverse of [`ldmatrix`]: each lane's register m (`word(l, m)`) holds its
/// [`matrix_fragment`] of matrix m, stored at the rows lanes 8m..8m+7 give.
fn stmatrix(
    num: u32,
    trans: bool,
    row_address: impl Fn(usize) -> u64,
    word: impl Fn(usize, usize) -> u64,
) {
    for l in 0..32 {
        for m in 0..num as usize {
            let w = word(l, m);
            for (k, at) in matrix_fragment(l, trans).into_iter().enumerate() {
                let addr = matrix_element(&row_address, m, at);
                // SAFETY: as for `ldmatrix`: a shared-memory row the kernel computed, checked
                // when confined.
                unsafe { std::ptr::write_unaligned(addr as *mut u16, (w >> (16 * k)) as u16) }
            }
        }
    }
}

/// The PTX `shfl.sync` source lane and predicate for lane `lane` (ISA 9.7.8.6).
pub fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 31;
    let cval = c & 31;
    let segmask = (c >> 8) & 31;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, pval) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Bfly => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (bval & !segmask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    (if pval { j as u32 } else { lane }, pval)
}

/// `redux.sync.op`: the members' values combined (wrapping add; min/max as the type's sign).
fn redux(op: ReduxOp, signed: bool, values: impl Iterator<Item = u32>) -> u32 {
    if let ReduxOp::Float { max, abs, nan } = op {
        return redux_f32(max, abs, nan, values);
    }
    let pick = |x: u32, y: u32, max: bool| match (signed, max) {
        (true, true) => (x as i32).max(y as i32) as u32,
        (true, false) => (x as i32).min(y as i32) as u32,
        (false, true) => x.max(y),
        (false, false) => x.min(y),
    };
    values
        .reduce(|x, y| match op {
            ReduxOp::Add => x.wrapping_add(y),
            ReduxOp::Min => pick(x, y, false),
            ReduxOp::Max => pick(x, y, true),
            ReduxOp::And => x & y,
            ReduxOp::Or => x | y,
            ReduxOp::Xor => x ^ y,
            ReduxOp::Float { .. } => unreachable!("redux_f32"),
        })
        .unwrap_or(0)
}

/// `redux.sync.{min,max}{.abs}{.NaN}.f32`: PTX min/max (+0 above -0) of the non-NaN values,
/// the canonical NaN when there are none; with `.NaN`, when any value is NaN.
fn redux_f32(max: bool, abs: bool, nan: bool, values: impl Iterator<Item = u32>) -> u32 {
    use crate::semantics::float::{CANONICAL_NAN_F32, min_max_f32};
    let values: Vec<f32> = values
        .map(|v| f32::from_bits(if abs { v & 0x7FFF_FFFF } else { v }))
        .collect();
    if nan && values.iter().any(|v| v.is_nan()) {
        return CANONICAL_NAN_F32;
    }
    values
        .into_iter()
        .filter(|v| !v.is_nan())
        .reduce(|x, y| min_max_f32(max, x, y))
        .map_or(CANONICAL_NAN_F32, f32::to_bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shfl_down_and_up_clamp_at_the_segment_edges() {
        // Full warp: c = 0x1f, segmask 0.
        assert_eq!(shfl_source(ShflMode::Down, 3, 16, 0x1f), (19, true));
        assert_eq!(shfl_source(ShflMode::Down, 20, 16, 0x1f), (20, false));
        assert_eq!(shfl_source(ShflMode::Up, 3, 4, 0), (3, false));
        assert_eq!(shfl_source(ShflMode::Up, 7, 4, 0), (3, true));
        assert_eq!(shfl_source(ShflMode::Bfly, 5, 1, 0x1f), (4, true));
        // Width 8 (as __shfl_sync with width 8 emits: c = ((32-8) << 8) | 0x1f).
        let c = (24 << 8) | 0x1f;
        assert_eq!(shfl_source(ShflMode::Idx, 13, 2, c), (10, true));
        assert_eq!(shfl_source(ShflMode::Down, 13, 4, c), (13, false));
        assert_eq!(shfl_source(ShflMode::Bfly, 13, 4, c), (9, true));
    }
}
