//! The grid barrier of a cooperative launch, as CUDA's device runtime reaches it: libcudadevrt's
//! `cudaCGSynchronize(handle, flags)` calls the driver's `__cuda_syscall_CGS_sync`, which
//! returns 0 once every thread of the grid has arrived. One rule per test.

mod common;

use ptxjit::{Dim3, LaunchConfig};

/// The declaration libcudadevrt's PTX makes, and a function in its form (numba calls it
/// once per thread).
const SYSCALL: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .extern .func (.param .b32 func_retval0) __cuda_syscall_CGS_sync\n\
    (\n.param .b64 __cuda_syscall_CGS_sync_param_0,\n.param .b32 __cuda_syscall_CGS_sync_param_1\n);\n\
    .visible .func (.param .b32 func_retval0) grid_sync(.param .b64 handle)\n{\n\
    .reg .b32 %r<3>;\n.reg .b64 %rd<2>;\nld.param.b64 %rd1, [handle];\n{\n\
    .param .b64 param0;\n.param .b32 param1;\n.param .b32 retval0;\n\
    st.param.b64 [param0], %rd1;\nst.param.b32 [param1], 0;\n\
    call.uni (retval0), __cuda_syscall_CGS_sync, (param0, param1);\nld.param.b32 %r1, [retval0];\n}\n\
    st.param.b32 [func_retval0], %r1;\nret;\n}\n";

/// `%r9 = grid_sync(1)` in the kernel.
const GRID_SYNC: &str = "{\n.param .b64 p;\nst.param.b64 [p], 1;\n.param .b32 r;\n\
    call.uni (r), grid_sync, (p);\nld.param.b32 %r9, [r];\n}\n";

/// Kernel `k(.param .u64 out)`: `body` runs with `%g` = the global thread index, `%n` = the
/// grid's threads, `%out` = the buffer and `%o` = out + 4 × %g. Returns `words` u32.
fn run(
    body: &str,
    grid: u32,
    block: u32,
    cooperative: bool,
    words: usize,
) -> Result<Vec<u32>, String> {
    let ptx = format!(
        "{SYSCALL}.visible .entry k(.param .u64 k_out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .b32 %g, %n;\n.reg .b64 %out, %o;\n\
         ld.param.u64 %out, [k_out];\nmov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\n\
         mad.lo.u32 %g, %r1, %r2, %r3;\nmov.u32 %r4, %nctaid.x;\nmul.lo.u32 %n, %r4, %r2;\n\
         mul.wide.u32 %rd7, %g, 4;\nadd.s64 %o, %out, %rd7;\n{body}\nret;\n}}\n"
    );
    let config = LaunchConfig {
        grid: Dim3::new(grid, 1, 1),
        block: Dim3::new(block, 1, 1),
        dynamic_shared_bytes: 0,
        cluster: None,
        cooperative,
    };
    common::out_in_both_forms(&ptx, &config, &vec![0; words])
}

/// Each thread stores `%g + 1`, synchronizes the grid, and reads the value of thread
/// `(%g + 37) mod %n` (another block's), `rounds` times, adding what it read.
fn neighbours(rounds: u32) -> String {
    format!(
        "mov.u32 %r10, 0;\nmov.u32 %r11, 0;\nadd.u32 %r12, %g, 37;\nrem.u32 %r12, %r12, %n;\n\
         mul.wide.u32 %rd1, %r12, 4;\nadd.s64 %rd1, %out, %rd1;\n\
         LOOP:\nadd.u32 %r5, %g, %r10;\nst.global.u32 [%o], %r5;\n{GRID_SYNC}\
         ld.global.u32 %r6, [%rd1];\nadd.u32 %r11, %r11, %r6;\n{GRID_SYNC}\
         add.u32 %r10, %r10, 1;\nsetp.lt.u32 %p1, %r10, {rounds};\n@%p1 bra LOOP;\n\
         st.global.u32 [%o], %r11;"
    )
}

#[test]
fn a_grid_barrier_makes_every_blocks_stores_visible_to_every_other_block() {
    let (grid, block, rounds) = (8, 32, 5);
    let n = grid * block;
    let got = run(&neighbours(rounds), grid, block, true, n as usize).unwrap();
    for (g, v) in got.iter().enumerate() {
        let other = (g as u32 + 37) % n;
        let want: u32 = (0..rounds).map(|r| other + r).sum();
        assert_eq!(*v, want, "thread {g}");
    }
}

#[test]
fn the_grid_barrier_returns_0_once_it_completes() {
    let got = run(
        &format!("{GRID_SYNC}st.global.u32 [%o], %r9;"),
        4,
        8,
        true,
        32,
    )
    .unwrap();
    assert_eq!(got, vec![0; 32]);
}

#[test]
fn outside_a_cooperative_launch_the_grid_barrier_fails_without_waiting() {
    // cudaCGSynchronize then returns an error; nothing waits, so nothing deadlocks.
    let got = run(
        &format!("{GRID_SYNC}st.global.u32 [%o], %r9;"),
        4,
        8,
        false,
        32,
    )
    .unwrap();
    assert_eq!(got, vec![1; 32]);
}

#[test]
fn a_grid_barrier_after_a_warp_collective_waits_for_late_blocks() {
    // Block 1 passes two more `shfl.sync` before it stores; block 0 must read its stores.
    // The grid barrier is no warp collective, whatever membermask the warp's last
    // `shfl.sync` gave.
    let body = format!(
        "shfl.sync.idx.b32 %r13, %g, 0, 31, -1;\nmov.u32 %r6, %ctaid.x;\nsetp.eq.u32 %p1, %r6, 0;\n\
         @%p1 bra SYNC;\nshfl.sync.idx.b32 %r13, %g, 0, 31, -1;\nshfl.sync.idx.b32 %r13, %g, 0, 31, -1;\nSYNC:\nadd.u32 %r5, %g, 1;\n\
         st.global.u32 [%o], %r5;\n{GRID_SYNC}add.u32 %r12, %g, 32;\nrem.u32 %r12, %r12, %n;\n\
         mul.wide.u32 %rd1, %r12, 4;\nadd.s64 %rd1, %out, %rd1;\nld.global.u32 %r6, [%rd1];\n\
         {GRID_SYNC}st.global.u32 [%o], %r6;"
    );
    let got = run(&body, 2, 32, true, 64).unwrap();
    let want: Vec<u32> = (0..64).map(|g| (g + 32) % 64 + 1).collect();
    assert_eq!(got, want);
}

#[test]
fn threads_that_exited_do_not_hold_up_the_grid_barrier() {
    // The upper half of every block returns first; the rest pass the barrier.
    let body = format!(
        "mov.u32 %r5, %tid.x;\nsetp.ge.u32 %p1, %r5, 16;\n@%p1 bra DONE;\n{GRID_SYNC}\
         add.u32 %r9, %r9, 5;\nst.global.u32 [%o], %r9;\nDONE:"
    );
    let got = run(&body, 3, 32, true, 96).unwrap();
    let want: Vec<u32> = (0..96).map(|g| if g % 32 < 16 { 5 } else { 0 }).collect();
    assert_eq!(got, want);
}

#[test]
fn a_grid_barrier_some_threads_never_reach_is_a_deadlock_error() {
    // Thread 0 of block 1 waits at a block barrier its block's other threads never reach;
    // they wait at the grid barrier, which thread 0 never reaches.
    let body = format!(
        "mov.u32 %r5, %tid.x;\nmov.u32 %r6, %ctaid.x;\n\
         setp.eq.u32 %p2, %r5, 0;\nsetp.eq.u32 %p3, %r6, 1;\n\
         and.pred %p1, %p2, %p3;\n@%p1 bar.sync 0;\n@!%p1 bra SYNC;\nbra DONE;\nSYNC:\n{GRID_SYNC}DONE:"
    );
    let err = run(&body, 2, 32, true, 64).unwrap_err();
    assert!(err.contains("barrier that can never complete"), "{err}");
}
