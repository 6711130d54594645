//! Confined memory (`lower::confine`): a kernel cannot touch memory outside what its launch
//! gave it. An access outside ends the launch with an error naming the kernel, the PTX
//! `file:line`, the address and the access; the process, other buffers and later launches are
//! unaffected. Every case runs one thread at a time and in lane groups.

use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, LaunchConfig, Module};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

fn kernel_ptx(params: &str, body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k({params})\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p;\n{body}\nret;\n}}\n"
    )
}

/// Launches `k` (32 threads unless `threads`) in both forms; returns the error texts.
fn launch_errors(ptx: &str, threads: u32, args: &[Arg]) -> Vec<String> {
    [LaneGroups::Off, LaneGroups::Always]
        .iter()
        .map(|&lane_groups| {
            let opts = CompileOptions {
                lane_groups,
                ..CompileOptions::default()
            };
            let m = Module::from_ptx_named("k.ptx", ptx, &opts).unwrap_or_else(|e| panic!("{e}"));
            match m.kernel("k").unwrap().launch(1, threads, args) {
                Ok(()) => String::new(),
                Err(e) => e.to_string(),
            }
        })
        .collect()
}

fn assert_all(errors: &[String], wanted: &[&str]) {
    for e in errors {
        for w in wanted {
            assert!(e.contains(w), "expected '{w}' in: {e}");
        }
    }
}

/// Thread `tid` stores its id at `out + 4 * (tid + shift)`.
fn store_at(shift: i64) -> String {
    kernel_ptx(
        ".param .u64 out",
        &format!(
            "ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\ncvt.s64.s32 %rd2, %r1;\n\
             add.s64 %rd2, %rd2, {shift};\nshl.b64 %rd2, %rd2, 2;\nadd.s64 %rd3, %rd1, %rd2;\n\
             st.global.u32 [%rd3], %r1;"
        ),
    )
}

#[test]
fn a_store_past_the_end_of_a_buffer_is_an_illegal_address() {
    let out = DeviceBuffer::zeroed(32 * 4).unwrap();
    let neighbour = DeviceBuffer::from_slice(&[7u32; 64]).unwrap();
    let errors = launch_errors(&store_at(1), 32, &[Arg::buffer(&out)]);
    let past_end = format!("{:#x}", out.address() + 128);
    assert_all(
        &errors,
        &[
            "kernel 'k': illegal address",
            &past_end,
            "(4-byte store, thread 31)",
            "k.ptx:",
            "st.global.u32 [%rd3], %r1;",
        ],
    );
    assert_eq!(neighbour.to_vec::<u32>(), vec![7; 64]);
    // In bounds, the same kernel is fine.
    assert_all(
        &launch_errors(&store_at(0), 32, &[Arg::buffer(&out)]),
        &[""],
    );
    assert_eq!(out.to_vec::<u32>(), (0..32).collect::<Vec<u32>>());
}

#[test]
fn a_store_before_the_start_of_a_buffer_is_an_illegal_address() {
    let out = DeviceBuffer::zeroed(32 * 4).unwrap();
    let errors = launch_errors(&store_at(-1), 32, &[Arg::buffer(&out)]);
    assert_all(&errors, &["illegal address", "(4-byte store, thread 0)"]);
}

#[test]
fn wild_and_host_pointers_are_illegal_addresses() {
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nst.global.u32 [%rd1], %r1;",
    );
    let host = vec![5u32; 16];
    for address in [0u64, 0x1000, host.as_ptr() as u64, u64::MAX - 3] {
        let errors = launch_errors(&ptx, 32, &[Arg::u64(address)]);
        assert_all(
            &errors,
            &["illegal address", &format!("{address:#x}"), "4-byte load"],
        );
    }
    assert_eq!(host, vec![5u32; 16]);
}

#[test]
fn a_freed_buffer_is_an_illegal_address() {
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];",
    );
    let address = DeviceBuffer::zeroed(64).unwrap().address();
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::u64(address)]),
        &["illegal address"],
    );
}

#[test]
fn a_misaligned_vector_access_is_a_misaligned_address() {
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\nadd.s64 %rd1, %rd1, 4;\nld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];",
    );
    let buf = DeviceBuffer::zeroed(64).unwrap();
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::buffer(&buf)]),
        &["misaligned address", "16-byte load", "ld.global.v4.u32"],
    );
}

#[test]
fn shared_memory_accesses_stay_inside_the_blocks_shared_memory() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u32 at)\n{{\n.reg .b32 %r<8>;\n\
         .shared .align 4 .b8 s[64];\nld.param.u32 %r1, [at];\nmov.u32 %r2, s;\nadd.u32 %r2, %r2, %r1;\n\
         st.shared.u32 [%r2], %r1;\nret;\n}}\n"
    );
    assert_all(&launch_errors(&ptx, 32, &[Arg::u32(60)]), &[""]);
    let errors = launch_errors(&ptx, 32, &[Arg::u32(64)]);
    assert_all(
        &errors,
        &["illegal shared address 0x40 (4-byte store, thread 0; \
             the block has 64 bytes of shared memory)"],
    );
    let errors = launch_errors(&ptx, 32, &[Arg::u32(1 << 20)]);
    assert_all(&errors, &["illegal shared address 0x100000"]);
}

#[test]
fn a_shared_fault_names_the_offset_the_kernel_computed_not_a_host_address() {
    // No shared memory at all: any offset is outside, and outside wins over misaligned.
    let ptx = kernel_ptx(
        ".param .u32 at",
        "ld.param.u32 %r1, [at];\nld.shared.u32 %r2, [%r1];",
    );
    for (at, wanted) in [(0, "0x0"), (6, "0x6"), (64, "0x40")] {
        let errors = launch_errors(&ptx, 32, &[Arg::u32(at)]);
        assert_all(
            &errors,
            &[
                &format!("illegal shared address {wanted} (4-byte load, thread 0; "),
                "the block has 0 bytes of shared memory",
            ],
        );
    }
}

#[test]
fn an_access_both_outside_and_misaligned_is_an_illegal_address() {
    let buf = DeviceBuffer::zeroed(64).unwrap();
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\nadd.s64 %rd1, %rd1, 66;\nld.global.u32 %r1, [%rd1];",
    );
    let address = format!("illegal address {:#x}", buf.address() + 66);
    assert_all(&launch_errors(&ptx, 32, &[Arg::buffer(&buf)]), &[&address]);
}

#[test]
fn dynamic_shared_memory_is_checked_against_its_launch_size() {
    let ptx = format!(
        "{HEADER}.extern .shared .align 16 .b8 dyn[];\n.visible .entry k(.param .u32 at)\n{{\n\
         .reg .b32 %r<8>;\nld.param.u32 %r1, [at];\nmov.u32 %r2, dyn;\nadd.u32 %r2, %r2, %r1;\n\
         st.shared.u32 [%r2], %r1;\nret;\n}}\n"
    );
    let m = Module::from_ptx_named("k.ptx", &ptx, &CompileOptions::default()).unwrap();
    let k = m.kernel("k").unwrap();
    let config = LaunchConfig {
        grid: 1.into(),
        block: 32.into(),
        dynamic_shared_bytes: 256,
        cluster: None,
        cooperative: false,
    };
    k.launch_with(&config, &[Arg::u32(252)]).unwrap();
    let err = k.launch_with(&config, &[Arg::u32(256)]).unwrap_err();
    assert!(
        err.to_string().contains(
            "illegal shared address 0x100 (4-byte store, thread 0; \
             the block has 256 bytes of shared memory)"
        ),
        "{err}"
    );
}

#[test]
fn local_arrays_are_bounded() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u32 at)\n{{\n.local .align 4 .b8 arr[32];\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\nld.param.u32 %r1, [at];\nmov.u64 %rd1, arr;\n\
         cvt.u64.u32 %rd2, %r1;\nadd.s64 %rd1, %rd1, %rd2;\nst.local.u32 [%rd1], %r1;\n\
         cvta.local.u64 %rd3, %rd1;\nld.u32 %r2, [%rd3];\nret;\n}}\n"
    );
    assert_all(&launch_errors(&ptx, 32, &[Arg::u32(28)]), &[""]);
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::u32(32)]),
        &["illegal address", "4-byte store", "st.local.u32"],
    );
}

#[test]
fn generic_pointers_reach_shared_and_global_memory_but_nothing_else() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out, .param .u64 extra)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         .shared .align 4 .b8 s[128];\nld.param.u64 %rd1, [out];\nld.param.u64 %rd6, [extra];\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nmov.u64 %rd3, s;\ncvta.shared.u64 %rd3, %rd3;\n\
         add.s64 %rd3, %rd3, %rd2;\nst.u32 [%rd3], %r1;\nld.u32 %r2, [%rd3];\n\
         add.s64 %rd4, %rd1, %rd2;\nst.u32 [%rd4], %r2;\nadd.s64 %rd5, %rd4, %rd6;\nst.u32 [%rd5], %r2;\nret;\n}}\n"
    );
    let out = DeviceBuffer::zeroed(32 * 4).unwrap();
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::buffer(&out), Arg::u64(0)]),
        &[""],
    );
    assert_eq!(out.to_vec::<u32>(), (0..32).collect::<Vec<u32>>());
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::buffer(&out), Arg::u64(1 << 40)]),
        &["illegal address", "st.u32 [%rd5], %r2;"],
    );
}

#[test]
fn module_variables_read_past_their_end_as_on_the_gpu_and_fault_past_the_granule() {
    // One segment in declaration order, as a GPU lays out a module's data: g[4] reads on into
    // h; past the segment's 64 KiB granule is an illegal address.
    let ptx = format!(
        "{HEADER}.global .align 4 .u32 g[4];\n.global .align 4 .u32 h[1] = {{7}};\n\
         .visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n\
         ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [g+16];\nst.global.u32 [%rd1], %r1;\n\
         ld.global.u32 %r2, [g+65536];\nret;\n}}\n"
    );
    let out = DeviceBuffer::zeroed(4).unwrap();
    assert_all(
        &launch_errors(&ptx, 1, &[Arg::buffer(&out)]),
        &["illegal address", "ld.global.u32 %r2, [g+65536];"],
    );
    assert_eq!(out.to_vec::<u32>(), [7]);
}

#[test]
fn atomics_are_checked_too() {
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\natom.global.add.u32 %r1, [%rd1+64], 1;",
    );
    let buf = DeviceBuffer::zeroed(64).unwrap();
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::buffer(&buf)]),
        &["illegal address", "atom.global.add.u32"],
    );
}

#[test]
fn unconfined_modules_reach_host_memory_when_asked_to() {
    // For embedders that hand kernels host pointers (and trust them).
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd1, %rd1, %rd2;\nst.global.u32 [%rd1], %r1;",
    );
    let opts = CompileOptions {
        confine: false,
        ..CompileOptions::default()
    };
    let m = Module::from_ptx_named("k.ptx", &ptx, &opts).unwrap();
    let mut host = vec![0u32; 32];
    m.kernel("k")
        .unwrap()
        .launch(1, 32, &[Arg::u64(host.as_mut_ptr() as u64)])
        .unwrap();
    assert_eq!(host, (0..32).collect::<Vec<u32>>());
}

#[test]
fn cooperative_kernels_are_confined_too() {
    // A barrier makes the kernel run in rounds; the access after it is still checked.
    let ptx = kernel_ptx(
        ".param .u64 p",
        "ld.param.u64 %rd1, [p];\nbar.sync 0;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 8;\n\
         add.s64 %rd1, %rd1, %rd2;\nst.global.u32 [%rd1], %r1;",
    );
    let buf = DeviceBuffer::zeroed(128).unwrap();
    assert_all(
        &launch_errors(&ptx, 32, &[Arg::buffer(&buf)]),
        &["illegal address", "(4-byte store, thread 16)"],
    );
}

/// A kernel passes the generic address of one of its `.local` words to `bump`, which reads and
/// writes it at `offset` bytes from there (NVVM's calling convention for numba's linked
/// functions: results and arguments by pointer to the caller's locals).
fn callee_touches_callers_local(offset: i64) -> String {
    format!(
        "{HEADER}.func bump(.param .b64 p)\n{{\n.reg .b32 %a<3>;\n.reg .b64 %q<3>;\n\
         ld.param.b64 %q1, [p];\nadd.s64 %q1, %q1, {offset};\nld.u32 %a1, [%q1];\n\
         add.u32 %a2, %a1, 1;\nst.u32 [%q1], %a2;\nret;\n}}\n\
         .visible .entry k(.param .u64 out)\n{{\n.local .align 4 .b8 depot[8];\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nmov.u64 %rd1, depot;\ncvta.local.u64 %rd2, %rd1;\n\
         mov.u32 %r1, 41;\nst.local.u32 [depot], %r1;\n\
         {{ .param .b64 a; st.param.b64 [a], %rd2; call.uni bump, (a); }}\n\
         ld.local.u32 %r2, [depot];\nld.param.u64 %rd3, [out];\nst.global.u32 [%rd3], %r2;\nret;\n}}\n"
    )
}

#[test]
fn a_called_function_reaches_its_callers_locals_through_a_generic_address() {
    let out = DeviceBuffer::zeroed(4).unwrap();
    let errors = launch_errors(&callee_touches_callers_local(0), 1, &[Arg::buffer(&out)]);
    assert!(errors.iter().all(String::is_empty), "{errors:?}");
    assert_eq!(out.to_vec::<u32>(), [42]);
}

#[test]
fn a_called_function_cannot_reach_past_its_callers_locals() {
    let out = DeviceBuffer::zeroed(4).unwrap();
    // Far past the caller's locals (its depot and its call's parameter slot).
    let errors = launch_errors(&callee_touches_callers_local(4096), 1, &[Arg::buffer(&out)]);
    assert_all(&errors, &["illegal address", "4-byte load"]);
}

#[test]
fn printf_of_a_string_outside_device_memory_is_an_illegal_address() {
    let ptx = kernel_ptx(
        "",
        ".local .align 8 .b8 args[8];\n.reg .b64 %SP;\n\
         mov.u64 %rd1, 0x10;\nst.local.u64 [args], %rd1;\n\
         mov.u64 %SP, args;\ncvta.local.u64 %rd2, %SP;\nmov.u64 %rd3, fmt;\ncvta.global.u64 %rd3, %rd3;\n\
         { .param .b64 f; .param .b64 a; .param .b32 r; st.param.b64 [f], %rd3; st.param.b64 [a], %rd2;\n\
         call.uni (r), vprintf, (f, a); }",
    )
    .replacen(
        ".visible .entry",
        ".global .align 1 .b8 fmt[3] = {37, 115, 0};\n\
         .extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);\n.visible .entry",
        1,
    );
    assert_all(
        &launch_errors(&ptx, 1, &[]),
        &["illegal address 0x10", "call.uni (r), vprintf"],
    );
}
