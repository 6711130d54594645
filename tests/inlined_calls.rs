//! A `.func` that waits for other threads (a barrier, a warp collective) is inlined where it
//! is called (`frontend::calls`): one rule per test, in the call forms compilers emit.

use ptxjit::{Arg, DeviceBuffer, Module};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Kernel `k(.param .u64 out)` after the functions `funcs`: `body` runs with `%t` = %tid.x
/// and `%o` = out + 4 × %tid.x. One block of `threads`; returns `threads` words.
fn run(funcs: &str, body: &str, threads: u32) -> Result<Vec<u32>, String> {
    let ptx = format!(
        "{HEAD}.shared .align 4 .u32 sh[256];\n{funcs}\n\
         .visible .entry k(.param .u64 k_out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .b32 %t;\n.reg .b64 %o;\n\
         ld.param.u64 %o, [k_out];\nmov.u32 %t, %tid.x;\nmul.wide.u32 %rd7, %t, 4;\n\
         add.s64 %o, %o, %rd7;\n{body}\nret;\n}}\n"
    );
    let module = Module::from_ptx(&ptx).map_err(|e| e.to_string())?;
    let out = DeviceBuffer::zeroed(threads as usize * 4).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(1, threads, &[Arg::buffer(&out)])
        .map_err(|e| e.to_string())?;
    Ok(out.to_vec())
}

/// `neighbour(x)`: every thread stores `x` in `sh[tid]`, waits for the block, and returns
/// `sh[(tid + 1) % ntid]` (nvcc's calling form: parameters loaded first).
const NEIGHBOUR: &str = ".func (.param .b32 ret) neighbour(.param .b32 x)\n{\n\
    .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
    ld.param.b32 %r1, [x];\nmov.u32 %r2, %tid.x;\nmov.u32 %r3, %ntid.x;\n\
    mov.u32 %r4, sh;\nshl.b32 %r5, %r2, 2;\nadd.u32 %r5, %r4, %r5;\nst.shared.u32 [%r5], %r1;\n\
    bar.sync 0;\nadd.u32 %r6, %r2, 1;\nrem.u32 %r6, %r6, %r3;\nshl.b32 %r6, %r6, 2;\n\
    add.u32 %r6, %r4, %r6;\nld.shared.u32 %r7, [%r6];\nbar.sync 0;\nst.param.b32 [ret], %r7;\nret;\n}\n";

/// The kernel's call `dst = neighbour(src)` of registers.
fn call_neighbour(src: &str, dst: &str) -> String {
    format!(
        "{{\n.param .b32 param0;\nst.param.b32 [param0], {src};\n.param .b32 retval0;\n\
         call.uni (retval0), neighbour, (param0);\nld.param.b32 {dst}, [retval0];\n}}\n"
    )
}

#[test]
fn a_barrier_inside_a_called_function_waits_for_the_whole_block() {
    let body = format!(
        "mul.lo.u32 %r1, %t, 10;\n{}st.global.u32 [%o], %r2;",
        call_neighbour("%r1", "%r2")
    );
    let got = run(NEIGHBOUR, &body, 96).unwrap();
    let want: Vec<u32> = (0..96).map(|t| (t + 1) % 96 * 10).collect();
    assert_eq!(got, want);
}

#[test]
fn each_call_of_a_function_with_a_barrier_is_inlined_on_its_own() {
    let body = format!(
        "mul.lo.u32 %r1, %t, 10;\n{}{}st.global.u32 [%o], %r3;",
        call_neighbour("%r1", "%r2"),
        call_neighbour("%r2", "%r3")
    );
    let got = run(NEIGHBOUR, &body, 32).unwrap();
    let want: Vec<u32> = (0..32).map(|t| (t + 2) % 32 * 10).collect();
    assert_eq!(got, want);
}

#[test]
fn a_parameter_read_after_the_callees_barrier_is_the_callers_own() {
    // The callee reads its parameter only after the barrier, when every other thread has
    // stored its own in the same `.param` variable: each thread's is kept in its frame.
    let func = ".func (.param .b32 ret) late(.param .b32 x)\n{\n.reg .b32 %r<4>;\n\
        bar.sync 0;\nld.param.b32 %r1, [x];\nadd.u32 %r1, %r1, 1;\nst.param.b32 [ret], %r1;\nret;\n}\n";
    let body = "{\n.param .b32 param0;\nst.param.b32 [param0], %t;\n.param .b32 retval0;\n\
        call.uni (retval0), late, (param0);\nld.param.b32 %r2, [retval0];\n}\n\
        st.global.u32 [%o], %r2;";
    let got = run(func, body, 64).unwrap();
    assert_eq!(got, (1..=64).collect::<Vec<u32>>());
}

#[test]
fn a_guarded_call_of_a_function_with_a_barrier_runs_only_where_the_guard_holds() {
    // Every thread calls, the odd ones with a guard that is false: the body's store does
    // not happen for them, and the barrier counts only the threads that call.
    let func = ".func mark(.param .b64 at)\n{\n.reg .b64 %rd<2>;\n\
        ld.param.b64 %rd1, [at];\nbar.sync 1, 32;\nst.global.u32 [%rd1], 7;\nret;\n}\n";
    let body = "and.b32 %r1, %t, 1;\nsetp.eq.u32 %p1, %r1, 0;\n{\n.param .b64 param0;\n\
        st.param.b64 [param0], %o;\n@%p1 call.uni mark, (param0);\n}";
    let got = run(func, body, 64).unwrap();
    let want: Vec<u32> = (0..64).map(|t| if t % 2 == 0 { 7 } else { 0 }).collect();
    assert_eq!(got, want);
}

#[test]
fn a_return_from_the_middle_of_an_inlined_function_continues_after_the_call() {
    // Threads below 16 return before the barrier's second half; all go on in the caller.
    let func = ".func (.param .b32 ret) early(.param .b32 x)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
        ld.param.b32 %r1, [x];\nst.param.b32 [ret], %r1;\nbar.sync 0;\n\
        setp.lt.u32 %p1, %r1, 16;\n@%p1 ret;\nadd.u32 %r1, %r1, 100;\nst.param.b32 [ret], %r1;\nret;\n}\n";
    let body = "{\n.param .b32 param0;\nst.param.b32 [param0], %t;\n.param .b32 retval0;\n\
        call.uni (retval0), early, (param0);\nld.param.b32 %r2, [retval0];\n}\n\
        add.u32 %r2, %r2, 1000;\nst.global.u32 [%o], %r2;";
    let got = run(func, body, 32).unwrap();
    let want: Vec<u32> = (0..32)
        .map(|t| 1000 + if t < 16 { t } else { t + 100 })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_function_calling_a_function_with_a_barrier_is_inlined_too() {
    let outer = ".func (.param .b32 ret) outer(.param .b32 x)\n{\n.reg .b32 %r<4>;\n\
        ld.param.b32 %r1, [x];\nadd.u32 %r1, %r1, 1;\n{\n.param .b32 p;\nst.param.b32 [p], %r1;\n\
        .param .b32 r;\ncall.uni (r), neighbour, (p);\nld.param.b32 %r2, [r];\n}\n\
        st.param.b32 [ret], %r2;\nret;\n}\n";
    let body = "{\n.param .b32 param0;\nst.param.b32 [param0], %t;\n.param .b32 retval0;\n\
        call.uni (retval0), outer, (param0);\nld.param.b32 %r2, [retval0];\n}\n\
        st.global.u32 [%o], %r2;";
    let got = run(&format!("{NEIGHBOUR}{outer}"), body, 32).unwrap();
    let want: Vec<u32> = (0..32).map(|t| (t + 1) % 32 + 1).collect();
    assert_eq!(got, want);
}

#[test]
fn a_warp_collective_inside_a_called_function_sees_the_whole_warp() {
    let func = ".func (.param .b32 ret) down(.param .b32 x)\n{\n.reg .b32 %r<4>;\n\
        ld.param.b32 %r1, [x];\nshfl.sync.down.b32 %r2, %r1, 1, 31, -1;\nst.param.b32 [ret], %r2;\nret;\n}\n";
    let body = "{\n.param .b32 param0;\nst.param.b32 [param0], %t;\n.param .b32 retval0;\n\
        call.uni (retval0), down, (param0);\nld.param.b32 %r2, [retval0];\n}\n\
        st.global.u32 [%o], %r2;";
    let got = run(func, body, 32).unwrap();
    let want: Vec<u32> = (0..32).map(|t| if t < 31 { t + 1 } else { 31 }).collect();
    assert_eq!(got, want);
}

#[test]
fn a_function_with_a_barrier_that_calls_itself_is_refused() {
    let func = ".func rec(.param .b32 x)\n{\n.reg .b32 %r<2>;\nbar.sync 0;\n\
        {\n.param .b32 p;\nst.param.b32 [p], 0;\ncall.uni rec, (p);\n}\nret;\n}\n";
    let body = "{\n.param .b32 param0;\nst.param.b32 [param0], %t;\ncall.uni rec, (param0);\n}";
    let err = run(func, body, 32).unwrap_err();
    assert!(
        err.contains("'rec' waits for other threads and calls itself"),
        "{err}"
    );
}

#[test]
fn a_function_with_a_barrier_called_with_registers_is_refused_by_name() {
    let func = ".func barrier_of(.reg .b32 x)\n{\nbar.sync 0;\nret;\n}\n";
    let err = run(func, "call.uni barrier_of, (%t);", 32).unwrap_err();
    assert!(
        err.contains("'barrier_of' waits for other threads"),
        "{err}"
    );
    assert!(err.contains("pass .param variables"), "{err}");
}

#[test]
fn a_function_with_a_barrier_called_through_a_pointer_is_refused_by_name() {
    let func = ".func (.param .b32 ret) neighbour_ptr(.param .b32 x)\n{\n.reg .b32 %r<2>;\n\
        bar.sync 0;\nld.param.b32 %r1, [x];\nst.param.b32 [ret], %r1;\nret;\n}\n";
    let body = "mov.u64 %rd1, neighbour_ptr;\n{\n.param .b32 param0;\nst.param.b32 [param0], %t;\n\
        .param .b32 retval0;\nproto: .callprototype (.param .b32 _) _ (.param .b32 _);\n\
        call (retval0), %rd1, (param0), proto;\nld.param.b32 %r2, [retval0];\n}\n\
        st.global.u32 [%o], %r2;";
    let err = run(func, body, 32).unwrap_err();
    assert!(
        err.contains("'neighbour_ptr' waits for other threads")
            && err.contains("through a pointer"),
        "{err}"
    );
}

#[test]
fn a_shared_variable_of_an_inlined_function_is_one_per_block_for_all_its_calls() {
    // `count()` adds 1 to its `.shared` counter, waits, and returns it: the second call
    // sees both calls' additions.
    let func = ".func (.param .b32 ret) count()\n{\n.shared .align 4 .u32 c;\n.reg .b32 %r<4>;\n\
        atom.shared.add.u32 %r1, [c], 1;\nbar.sync 0;\nld.shared.u32 %r2, [c];\nbar.sync 0;\n\
        st.param.b32 [ret], %r2;\nret;\n}\n";
    let call = |dst: &str| {
        format!("{{\n.param .b32 r;\ncall.uni (r), count, ();\nld.param.b32 {dst}, [r];\n}}\n")
    };
    let body = format!(
        "{}{}add.u32 %r3, %r1, %r2;\nst.global.u32 [%o], %r3;",
        call("%r1"),
        call("%r2")
    );
    let got = run(func, &body, 40).unwrap();
    assert_eq!(got, vec![40 + 80; 40]);
}
