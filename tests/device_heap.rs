//! Device `malloc` and `free` (`ptxjit::device_heap`): blocks of one device heap, reached by
//! the kernel as device memory. (Its own test binary: the heap is the process's, one device
//! allocation that other tests' out-of-bounds cases could land in.)

use ptxjit::{Arg, DeviceBuffer, Module};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

fn kernel_ptx(params: &str, body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k({params})\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n{body}\nret;\n}}\n"
    )
}

/// Launches `k` on one block of `threads`; the error text, or "".
fn launch_error(ptx: &str, threads: u32, args: &[Arg]) -> String {
    let m =
        Module::from_ptx_named("k.ptx", ptx, &Default::default()).unwrap_or_else(|e| panic!("{e}"));
    match m.kernel("k").unwrap().launch(1, threads, args) {
        Ok(()) => String::new(),
        Err(e) => e.to_string(),
    }
}

const HEAP_DECLS: &str = ".extern .func (.param .b64 r) malloc (.param .b64 size);\n\
                          .extern .func free (.param .b64 ptr);\n";

/// `body` after `%rd1 = malloc(64)` in each thread; out[tid] = `%rd4`.
fn with_malloc(body: &str) -> String {
    let ptx = kernel_ptx(
        ".param .u64 out",
        &format!(
            "{{ .param .b64 s; .param .b64 r; st.param.b64 [s], 64;\n\
             call.uni (r), malloc, (s);\nld.param.b64 %rd1, [r]; }}\n{body}\n\
             ld.param.u64 %rd2, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 8;\n\
             add.s64 %rd2, %rd2, %rd3;\nst.global.u64 [%rd2], %rd4;"
        ),
    );
    ptx.replacen(
        ".visible .entry",
        &format!("{HEAP_DECLS}.visible .entry"),
        1,
    )
}

#[test]
fn device_malloc_gives_each_thread_its_own_device_memory_and_free_takes_it_back() {
    let ptx = with_malloc(
        "mov.u32 %r2, %tid.x;\nst.u32 [%rd1+60], %r2;\nld.global.u32 %r3, [%rd1+60];\n\
         cvt.u64.u32 %rd4, %r3;\nand.b64 %rd5, %rd1, 15;\nadd.s64 %rd4, %rd4, %rd5;\n\
         { .param .b64 p; st.param.b64 [p], %rd1; call.uni free, (p); }",
    );
    let out = DeviceBuffer::zeroed(32 * 8).unwrap();
    assert_eq!(launch_error(&ptx, 32, &[Arg::buffer(&out)]), "");
    let got: Vec<u64> = out.to_vec();
    assert_eq!(
        got,
        (0..32).collect::<Vec<u64>>(),
        "each thread's block, 16-byte aligned"
    );
}

#[test]
fn free_of_a_pointer_malloc_did_not_give_is_an_illegal_address() {
    let ptx = with_malloc(
        "add.s64 %rd5, %rd1, 16;\n{ .param .b64 p; st.param.b64 [p], %rd5; call.uni free, (p); }",
    );
    let out = DeviceBuffer::zeroed(8).unwrap();
    let e = launch_error(&ptx, 1, &[Arg::buffer(&out)]);
    assert!(
        e.contains("illegal address") && e.contains("call.uni free"),
        "{e}"
    );
}
