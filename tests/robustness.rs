//! Kernels that misbehave end their launch with an error and leave the process, the runtime
//! and other buffers intact: runaway loops (timeouts), traps.

use std::time::{Duration, Instant};

use ptxjit::{Arg, CompileOptions, DeviceBuffer, Dim3, LaneGroups, LaunchConfig, Module};

fn module_with(ptx: &str, lane_groups: LaneGroups) -> Module {
    let opts = CompileOptions {
        lane_groups,
        ..CompileOptions::default()
    };
    Module::from_ptx_named("k.ptx", ptx, &opts).unwrap_or_else(|e| panic!("{e}"))
}

const SPIN: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry spin(.param .u64 out)\n{\n.reg .b32 %r<3>;\n.reg .pred %p;\n\
    mov.u32 %r1, 0;\nLOOP:\nadd.u32 %r1, %r1, 1;\nsetp.ne.u32 %p, %r1, 0xFFFFFFFF;\n@%p bra LOOP;\nbra LOOP;\n}\n";

const SPIN_WITH_BARRIER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry spin(.param .u64 out)\n{\n.reg .b32 %r<3>;\n\
    mov.u32 %r1, 0;\nLOOP:\nadd.u32 %r1, %r1, 1;\nbar.sync 0;\nbra LOOP;\n}\n";

const STORE: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry store(.param .u64 out)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<4>;\n\
    ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
    st.global.u32 [%rd3], %r1;\nret;\n}\n";

/// Held by tests whose launches must not share the workers with another test's long grid:
/// a launch waits for the workers, and a timeout counts that wait.
static WORKERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn workers_to_myself() -> std::sync::MutexGuard<'static, ()> {
    WORKERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The runtime still works: a correct kernel runs and gives its results.
fn runtime_still_works() {
    let out = DeviceBuffer::zeroed(64 * 4).unwrap();
    let m = Module::from_ptx(STORE).unwrap();
    m.kernel("store")
        .unwrap()
        .launch(1, 64, &[Arg::buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec::<u32>(), (0..64).collect::<Vec<u32>>());
}

#[test]
fn a_kernel_that_loops_forever_stops_at_its_timeout() {
    let _workers = workers_to_myself();
    let out = DeviceBuffer::zeroed(4).unwrap();
    for (ptx, mode) in [
        (SPIN, LaneGroups::Off),
        (SPIN, LaneGroups::Always),
        (SPIN_WITH_BARRIER, LaneGroups::WhenHot),
    ] {
        let kernel = module_with(ptx, mode)
            .kernel("spin")
            .unwrap()
            .with_timeout(Some(Duration::from_millis(200)));
        let start = Instant::now();
        let err = kernel
            .launch(64, 128, &[Arg::buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("kernel 'spin': timeout after 0.200 s"),
            "{mode:?}: {err}"
        );
        assert!(err.contains("k.ptx:"), "{err}");
        // Generous: a loaded 2-core machine; the point is that it returns at all.
        assert!(start.elapsed() < Duration::from_secs(30));
        runtime_still_works();
    }
}

#[test]
fn a_kernel_that_finishes_in_time_is_unaffected_by_its_timeout() {
    let out = DeviceBuffer::zeroed(64 * 4).unwrap();
    let m = Module::from_ptx(STORE).unwrap();
    m.kernel("store")
        .unwrap()
        .with_timeout(Some(Duration::from_secs(60)))
        .launch(1, 64, &[Arg::buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec::<u32>()[63], 63);
}

#[test]
fn trap_and_brkpt_end_the_launch_with_an_error_naming_the_instruction() {
    for inst in ["trap;", "brkpt;"] {
        let ptx = STORE.replace("ret;", inst);
        let out = DeviceBuffer::zeroed(64 * 4).unwrap();
        let err = module_with(&ptx, LaneGroups::Always)
            .kernel("store")
            .unwrap()
            .launch(1, 64, &[Arg::buffer(&out)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("trap in block (0, 0, 0) at k.ptx:"), "{err}");
        assert!(err.contains(inst), "{err}");
        runtime_still_works();
    }
}

#[test]
fn integer_division_by_zero_gives_the_hardware_value_not_a_host_trap() {
    let ptx = STORE.replace(
        "st.global.u32 [%rd3], %r1;",
        "mov.u32 %r2, 0;\ndiv.u32 %r2, %r1, %r2;\nst.global.u32 [%rd3], %r2;",
    );
    let out = DeviceBuffer::zeroed(64 * 4).unwrap();
    module_with(&ptx, LaneGroups::Always)
        .kernel("store")
        .unwrap()
        .launch(1, 64, &[Arg::buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec::<u32>(), vec![u32::MAX; 64]);
}

#[test]
fn endless_recursion_is_an_error_not_a_stack_overflow() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .func (.param .b32 r) down(.param .b32 n)\n{\n.reg .b32 %r<4>;\n\
        ld.param.b32 %r1, [n];\nadd.u32 %r2, %r1, 1;\n\
        { .param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r2;\ncall (b), down, (a);\nld.param.b32 %r3, [b];\n}\n\
        st.param.b32 [r], %r3;\nret;\n}\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<3>;\n\
        { .param .b32 a;\n.param .b32 b;\nst.param.b32 [a], 0;\ncall (b), down, (a);\n}\nret;\n}\n";
    let out = DeviceBuffer::zeroed(4).unwrap();
    let err = Module::from_ptx_named("k.ptx", ptx, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .kernel("k")
        .unwrap()
        .launch(2, 32, &[Arg::buffer(&out)])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stack overflow") && err.contains("'down'"),
        "{err}"
    );
    runtime_still_works();
}

#[test]
fn declared_but_unused_registers_cost_nothing() {
    // 16 ranges of 2^20 registers and a cooperative kernel of 1,024 threads: registers exist
    // once used (this took 42 s and 4.4 GB, and frames of 8 GB, when ranges were expanded).
    let mut decls = String::new();
    for c in 'a'..='p' {
        decls += &format!(".reg .b64 %{c}<1048576>;\n");
    }
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n{decls}.reg .b32 %unused<1048576>;\n\
         ld.param.u64 %a5, [out];\nbar.sync 0;\nst.global.u64 [%a5], %a5;\nret;\n}}\n"
    );
    let out = DeviceBuffer::zeroed(8).unwrap();
    let module = module_with(&ptx, LaneGroups::WhenHot);
    module
        .kernel("k")
        .unwrap()
        .launch(1, 1024, &[Arg::buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec::<u64>(), [out.address()]);
}

#[test]
fn a_body_imports_only_the_functions_it_calls() {
    // Importing every function into every body made compiling n functions cost n²
    // (20,000 empty entries: over 110 s; now about a second).
    let mut ptx = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .func (.param .b32 r) twice(.param .b32 x)\n{\n.reg .b32 %r<2>;\n\
         ld.param.b32 %r1, [x];\nadd.s32 %r1, %r1, %r1;\nst.param.b32 [r], %r1;\nret;\n}\n\
         .visible .entry caller(.param .u64 out)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [out];\nmov.b32 %r1, 21;\n\
         {\n.param .b32 x;\n.param .b32 r;\nst.param.b32 [x], %r1;\n\
         call (r), twice, (x);\nld.param.b32 %r2, [r];\n}\n\
         st.global.b32 [%rd1], %r2;\nret;\n}\n",
    );
    for i in 0..50 {
        ptx += &format!(".visible .entry empty{i}()\n{{\nret;\n}}\n");
    }
    let opts = CompileOptions {
        keep_clif: true,
        ..CompileOptions::default()
    };
    let module = Module::from_ptx_named("calls.ptx", &ptx, &opts).unwrap();
    for (name, clif) in module.clif() {
        let imports = clif
            .lines()
            .filter(|l| l.trim_start().starts_with("fn"))
            .count();
        let expected = usize::from(name == "caller");
        assert_eq!(imports, expected, "{name}:\n{clif}");
    }
    let out = DeviceBuffer::zeroed(4).unwrap();
    let caller = module.kernel("caller").unwrap();
    caller.launch(1, 1, &[Arg::buffer(&out)]).unwrap();
    assert_eq!(out.to_vec::<u32>(), [42]);
}

/// The process's resident memory, in bytes (Linux).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

const BIG_DATA: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .global .align 4 .u32 a[268435456] = {1, 2, 3};\n\
    .const .align 4 .u32 c[268435456] = {5};\n\
    .global .align 4 .u32 d[268435456];\n\
    .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n\
    ld.param.u64 %rd1, [out];\nld.global.u32 %r1, [a+8];\nld.const.u32 %r2, [c];\n\
    add.u32 %r1, %r1, %r2;\nld.global.u32 %r2, [d+1073741820];\nadd.u32 %r1, %r1, %r2;\n\
    st.global.u32 [%rd1], %r1;\nret;\n}\n";

#[test]
fn big_arrays_with_short_initializers_cost_nothing_until_touched() {
    // Three 1 GiB arrays: their initializers are stored, the rest is zero pages.
    let before = resident_bytes();
    let module = Module::from_ptx_named("big.ptx", BIG_DATA, &CompileOptions::default()).unwrap();
    let out = DeviceBuffer::zeroed(4).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(1, 1, &[Arg::buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec::<u32>(), [3 + 5]);
    let grown = resident_bytes().saturating_sub(before);
    assert!(
        grown < 256 << 20,
        "loading grew the process by {grown} bytes"
    );
}

#[test]
fn module_data_past_its_limit_is_an_error_at_the_variable() {
    let opts = CompileOptions {
        max_module_data: 2 << 30,
        ..CompileOptions::default()
    };
    let err = Module::from_ptx_named("big.ptx", BIG_DATA, &opts)
        .err()
        .expect("3 GiB of data under a 2 GiB limit");
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "big.ptx:6:1: error: 'd' (1073741824 bytes) brings the module's .global and .const \
             data to 3221225472 bytes, past the limit of 2147483648"
        ),
        "{msg}"
    );
}

const COUNTER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .global .u32 counter;\n.const .u32 table[2] = {7, 9};\n\
    .visible .entry bump(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n\
    ld.param.u64 %rd1, [out];\natom.global.add.u32 %r1, [counter], 1;\n\
    ld.const.u32 %r2, [table+4];\nadd.u32 %r3, %r1, %r2;\nst.global.u32 [%rd1], %r3;\nret;\n}\n";

/// Runs `bump` once in `m` and returns counter-before-the-add + table[1].
fn bump(m: &Module) -> u32 {
    let out = DeviceBuffer::zeroed(4).unwrap();
    m.kernel("bump")
        .unwrap()
        .launch(1, 1, &[Arg::buffer(&out)])
        .unwrap();
    out.to_vec::<u32>()[0]
}

#[test]
fn every_load_of_the_same_text_gets_its_own_initialized_globals() {
    let a = module_with(COUNTER, LaneGroups::WhenHot);
    let b = module_with(COUNTER, LaneGroups::WhenHot);
    assert!(a.holds_data());
    assert_ne!(a.global("counter"), b.global("counter"));
    assert_eq!(bump(&a), 9);
    assert_eq!(bump(&a), 10);
    // `b` has its own counter, and a `.const` overwritten in `a` stays initialized in `b`.
    let (table, _) = a.global("table").unwrap();
    // SAFETY: `table` is a live 8-byte variable of `a`.
    unsafe { *((table + 4) as *mut u32) = 100 };
    assert_eq!(bump(&a), 102);
    assert_eq!(bump(&b), 9);
    drop((a, b));
    assert_eq!(bump(&module_with(COUNTER, LaneGroups::WhenHot)), 9);
}

#[test]
fn a_timeout_bounds_a_grid_of_billions_of_blocks() {
    let _workers = workers_to_myself();
    let empty = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
    let kernel = module_with(empty, LaneGroups::WhenHot)
        .kernel("k")
        .unwrap()
        .with_timeout(Some(Duration::from_millis(200)));
    for grid in [
        Dim3::new(i32::MAX as u32, 1, 1),
        Dim3::new(i32::MAX as u32, 65535, 65535),
    ] {
        let config = LaunchConfig {
            grid,
            block: Dim3::new(1, 1, 1),
            dynamic_shared_bytes: 0,
            cluster: None,
            cooperative: false,
        };
        let start = Instant::now();
        let err = kernel.launch_with(&config, &[]).unwrap_err().to_string();
        assert!(err.contains("timeout after 0.200 s"), "{err}");
        // Generous (a loaded 2-core machine): unstarted blocks used to be skipped one by one,
        // about a minute for 2^31 and forever for 2^61.
        assert!(start.elapsed() < Duration::from_secs(20), "{grid:?}");
    }
}

/// A one-block grid runs on its caller's thread when that stack has room, else on the
/// workers: endless recursion is the same error either way, never a crash.
#[test]
fn endless_recursion_in_one_block_is_an_error_on_any_callers_stack() {
    let rec = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .func f() { call f, (); ret; }\n.visible .entry k() { call f, (); ret; }\n";
    for stack in [256 << 10, 1 << 20, 8 << 20] {
        let ptx = rec.to_string();
        let err = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || {
                let kernel = module_with(&ptx, LaneGroups::Off).kernel("k").unwrap();
                kernel.launch(1, 32, &[]).unwrap_err().to_string()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(err.contains("calls nested too deeply"), "{stack}: {err}");
    }
}
