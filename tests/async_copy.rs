//! `cp.async` (sm_80), a case per rule, in both compiled forms: each thread copies a chunk
//! of global memory to shared memory, waits, and writes shared memory back out.

use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

/// Runs `copy` (which moves 16 bytes from `%src` to shared `[%dst]`) in each of 4 threads,
/// then `wait`, then copies each thread's 16 shared bytes to the output. `input` is 64 bytes;
/// `%r1` holds the thread index. The output (the same in both compiled forms).
fn run(copy: &str, wait: &str, input: &[u8; 64]) -> Vec<u8> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<8>, %src, %out;\n.reg .b32 %dst;\n\
         .shared .align 16 .b8 buf[64];\n\
         mov.u32 %r1, %tid.x;\nld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\n\
         mul.wide.u32 %rd3, %r1, 16;\nadd.s64 %src, %rd1, %rd3;\nadd.s64 %out, %rd2, %rd3;\n\
         mov.u32 %r2, buf;\nmul.lo.u32 %r3, %r1, 16;\nadd.u32 %dst, %r2, %r3;\n\
         {copy}\n{wait}\n\
         ld.shared.v2.b64 {{%rd4, %rd5}}, [%dst];\nst.global.v2.b64 [%out], {{%rd4, %rd5}};\nret;\n}}\n"
    );
    let results: Vec<Vec<u8>> = [LaneGroups::Off, LaneGroups::Always]
        .into_iter()
        .map(|lane_groups| {
            let opts = CompileOptions {
                lane_groups,
                ..CompileOptions::default()
            };
            let module = Module::from_ptx_named("t.ptx", &ptx, &opts)
                .unwrap_or_else(|e| panic!("{e}\n{ptx}"));
            let inp = DeviceBuffer::from_slice(input).unwrap();
            let out = DeviceBuffer::zeroed(64).unwrap();
            module
                .kernel("k")
                .unwrap()
                .launch(1, 4, &[Arg::buffer(&inp), Arg::buffer(&out)])
                .unwrap_or_else(|e| panic!("{e}"));
            out.to_bytes()
        })
        .collect();
    assert_eq!(results[0], results[1], "the two compiled forms differ");
    results[0].clone()
}

fn input() -> [u8; 64] {
    std::array::from_fn(|i| i as u8 + 1)
}

const WAIT: &str = "cp.async.commit_group;\ncp.async.wait_group 0;";

#[test]
fn cp_async_copies_cp_size_bytes_to_shared_memory() {
    let copy = "cp.async.cg.shared.global [%dst], [%src], 16;";
    assert_eq!(run(copy, WAIT, &input()), input());
    // Four and eight bytes at a time, .ca, with the ::cta space and a prefetch size.
    let copy = "cp.async.ca.shared::cta.global.L2::128B [%dst], [%src], 8;\n\
                cp.async.ca.shared.global [%dst+8], [%src+8], 4;\n\
                cp.async.ca.shared.global [%dst+12], [%src+12], 4;";
    assert_eq!(run(copy, "cp.async.wait_all;", &input()), input());
}

#[test]
fn bytes_past_src_size_are_zeros_and_never_read() {
    // Thread t copies t * 5 bytes of 16; thread 0 reads nothing (its source is 0: no memory).
    let copy = "mul.lo.u32 %r3, %r1, 5;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 mov.u64 %src, 0;\n\
                cp.async.cg.shared.global [%dst], [%src], 16, %r3;";
    let got = run(copy, WAIT, &input());
    for t in 0..4 {
        for k in 0..16 {
            let want = if k < t * 5 { input()[16 * t + k] } else { 0 };
            assert_eq!(got[16 * t + k], want, "thread {t} byte {k}");
        }
    }
}

#[test]
fn ignore_src_writes_zeros_without_reading() {
    let copy = "setp.eq.u32 %p1, %r1, 2;\n@%p1 mov.u64 %src, 0;\n\
                cp.async.ca.shared.global [%dst], [%src], 16, %p1;";
    let got = run(copy, WAIT, &input());
    let mut want = input();
    want[32..48].fill(0);
    assert_eq!(got, want);
    // Negated: `!p` ignores the source where p is false.
    let copy = "setp.ne.u32 %p1, %r1, 2;\n@!%p1 mov.u64 %src, 0;\n\
                cp.async.ca.shared.global [%dst], [%src], 16, !%p1;";
    assert_eq!(run(copy, WAIT, &input()), want);
}

#[test]
fn a_cache_hint_takes_its_cache_policy_operand() {
    let copy = "createpolicy.fractional.L2::evict_last.b64 %rd6, 1.0;\n\
                cp.async.cg.shared.global.L2::cache_hint [%dst], [%src], 16, 16, %rd6;";
    assert_eq!(run(copy, WAIT, &input()), input());
}

#[test]
fn cp_size_is_4_8_or_16_and_cg_copies_16() {
    for (copy, msg) in [
        (
            "cp.async.ca.shared.global [%dst], [%src], 2;",
            "cp-size is 4, 8 or 16",
        ),
        (
            "cp.async.cg.shared.global [%dst], [%src], 8;",
            "cp.async.cg copies 16 bytes",
        ),
    ] {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .b64 %src;\n.reg .b32 %dst;\nld.param.u64 %src, [p];\nmov.u32 %dst, 0;\n{copy}\nret;\n}}\n"
        );
        let e = Module::from_ptx(&ptx).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }
}

#[test]
fn a_source_outside_device_memory_is_an_illegal_address() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
               .reg .b64 %src;\n.reg .b32 %dst;\n.shared .align 16 .b8 buf[16];\n\
               mov.u64 %src, 64;\nmov.u32 %dst, buf;\n\
               cp.async.cg.shared.global [%dst], [%src], 16, 4;\nret;\n}\n";
    let module = Module::from_ptx(ptx).unwrap();
    let e = module
        .kernel("k")
        .unwrap()
        .launch(1, 1, &[Arg::u64(0)])
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("illegal address") && e.contains("cp.async"),
        "{e}"
    );
}

/// One thread: `body` runs with `%in`/`%out` (global), `buf` (128 shared bytes, at `%buf`) and
/// an initialized mbarrier `bar` (count 1, at `%bar`). Returns the 128 output bytes, or the
/// launch error.
fn bulk(body: &str, input: &[u8; 128]) -> Result<Vec<u8>, String> {
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<8>, %buf, %bar;\n.reg .b64 %in, %out, %state;\n\
         .shared .align 16 .b8 buf[128];\n.shared .align 8 .b64 bar;\n\
         ld.param.u64 %in, [in];\nld.param.u64 %out, [out];\ncvta.to.global.u64 %in, %in;\n\
         cvta.to.global.u64 %out, %out;\nmov.u32 %buf, buf;\nmov.u32 %bar, bar;\n\
         mbarrier.init.shared::cta.b64 [%bar], 1;\n{body}\nret;\n}}\n"
    );
    let module = Module::from_ptx_named("t.ptx", &ptx, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let inp = DeviceBuffer::from_slice(input).unwrap();
    let out = DeviceBuffer::zeroed(128).unwrap();
    module
        .kernel("k")
        .unwrap()
        .launch(1, 1, &[Arg::buffer(&inp), Arg::buffer(&out)])
        .map_err(|e| e.to_string())?;
    Ok(out.to_bytes())
}

fn bulk_input() -> [u8; 128] {
    std::array::from_fn(|i| (i * 7 + 3) as u8)
}

const BULK_WAIT: &str =
    "W:\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%bar], 0;\n@!%p1 bra W;\n";
const BULK_OUT: &str = "fence.proxy.async.shared::cta;\n\
    cp.async.bulk.global.shared::cta.bulk_group [%out], [%buf], 128;\n\
    cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n";

#[test]
fn cp_async_bulk_to_shared_memory_completes_its_bytes_on_the_mbarrier() {
    // Two copies of 64 bytes; the phase completes when both have counted their bytes.
    let body = format!(
        "mbarrier.arrive.expect_tx.shared::cta.b64 %state, [%bar], 128;\n\
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%buf], [%in], 64, [%bar];\n\
         mbarrier.test_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n\
         @%p2 trap;\nadd.s64 %in, %in, 64;\nadd.u32 %r1, %buf, 64;\n\
         cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%in], 64, [%bar], %state;\n\
         {BULK_WAIT}{BULK_OUT}"
    );
    assert_eq!(bulk(&body, &bulk_input()).unwrap(), bulk_input());
}

#[test]
fn cp_async_bulk_copies_shared_to_shared_and_prefetch_does_nothing_visible() {
    let body = format!(
        "cp.async.bulk.prefetch.L2.global [%in], 128;\n\
         mbarrier.arrive.expect_tx.shared::cta.b64 %state, [%bar], 64;\n\
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%buf], [%in], 64, [%bar];\n\
         {BULK_WAIT}mbarrier.arrive.expect_tx.shared::cta.b64 %state, [%bar], 64;\n\
         add.u32 %r1, %buf, 64;\n\
         cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%buf], 64, [%bar];\n\
         W2:\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%bar], 1;\n@!%p1 bra W2;\n{BULK_OUT}"
    );
    let want: Vec<u8> = bulk_input()[..64].repeat(2);
    assert_eq!(bulk(&body, &bulk_input()).unwrap(), want);
}

#[test]
fn cp_async_bulk_size_must_be_a_multiple_of_sixteen() {
    let body = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%buf], [%in], 24, [%bar];";
    let err = bulk(body, &bulk_input()).unwrap_err();
    assert!(err.contains("misaligned"), "{err}");
    assert!(
        err.contains("cp.async.bulk.shared::cluster.global"),
        "{err}"
    );
}

#[test]
fn cp_async_bulk_outside_its_memory_is_an_illegal_address() {
    // 144 bytes from a 128-byte buffer.
    let body = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%buf], [%in], 144, [%bar];";
    let err = bulk(body, &bulk_input()).unwrap_err();
    assert!(err.contains("illegal"), "{err}");
}
