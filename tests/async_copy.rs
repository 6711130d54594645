//! `cp.async` (sm_80), a case per rule, in both compiled forms: each thread copies a chunk
//! of global memory to shared memory, waits, and writes shared memory back out.

use ptxjit::{Arg, CompileOptions, DeviceBuffer, LaneGroups, Module};

/// Runs `copy` (which moves 16 bytes from `%src` to shared `[%dst]`) in each of 4 threads,
/// then `wait`, then copies each thread's 16 shared bytes to the output. `input` is 64 bytes;
/// `%r1` holds the thread index. The output ([`in_both_forms`]).
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
    in_both_forms(&ptx, 4, input, 64).unwrap_or_else(|e| panic!("{e}"))
}

/// Launches kernel `k` of `ptx` (parameters: the input, the output) on one block of
/// `threads`, compiled one thread at a time and in lane groups: the output (`out_bytes`),
/// the same in both, or the launch error (the same but for addresses: each run allocates
/// its own buffers).
fn in_both_forms(
    ptx: &str,
    threads: u32,
    input: &[u8],
    out_bytes: usize,
) -> Result<Vec<u8>, String> {
    let results: Vec<Result<Vec<u8>, String>> = [LaneGroups::Off, LaneGroups::Always]
        .into_iter()
        .map(|lane_groups| {
            let opts = CompileOptions {
                lane_groups,
                ..CompileOptions::default()
            };
            let module = Module::from_ptx_named("t.ptx", ptx, &opts)
                .unwrap_or_else(|e| panic!("{e}\n{ptx}"));
            let inp = DeviceBuffer::from_slice(input).unwrap();
            let out = DeviceBuffer::zeroed(out_bytes).unwrap();
            module
                .kernel("k")
                .unwrap()
                .launch(1, threads, &[Arg::buffer(&inp), Arg::buffer(&out)])
                .map_err(|e| e.to_string())?;
            Ok(out.to_bytes())
        })
        .collect();
    let same = |r: &Result<Vec<u8>, String>| r.clone().map_err(|e| without_addresses(&e));
    assert_eq!(
        same(&results[0]),
        same(&results[1]),
        "the two compiled forms differ"
    );
    results[0].clone()
}

/// `text` with each hexadecimal number (`0x…`) as `0x_`.
fn without_addresses(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at]);
        out.push_str("0x_");
        rest = rest[at + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out + rest
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

/// The group form's `cp.async` (Triton's: each lane copies `size` bytes, lane k's source and
/// destination the first lane's + k × `size`, its index `%tid.x & 63`): `copy` in each of
/// 64 threads of one block, `%src` = in + t·size and `%dst` = buf + t·size (t = `%t`, its
/// bytes 0xFF before), then each thread's `size` shared bytes written out ([`in_both_forms`]).
fn run_lanes(copy: &str, size: u32, input: &[u8]) -> Result<Vec<u8>, String> {
    let fill: String = (0..size / 4)
        .map(|i| format!("st.shared.b32 [%dst+{}], -1;\n", 4 * i))
        .collect();
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<8>, %t, %dst, %n;\n.reg .b64 %rd<8>, %src, %out;\n\
         .shared .align 16 .b8 buf[1024];\n\
         mov.u32 %r1, %tid.x;\nand.b32 %t, %r1, 63;\n\
         ld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\n\
         mul.wide.u32 %rd3, %t, {size};\nadd.s64 %src, %rd1, %rd3;\nadd.s64 %out, %rd2, %rd3;\n\
         mov.u32 %r2, buf;\nmul.lo.u32 %r3, %t, {size};\nadd.u32 %dst, %r2, %r3;\n\
         {fill}{copy}\ncp.async.wait_all;\n\
         mov.u32 %r5, 0;\nBYTES:\nadd.u32 %r6, %dst, %r5;\nld.shared.b8 %r4, [%r6];\n\
         cvt.u64.u32 %rd4, %r5;\nadd.s64 %rd5, %out, %rd4;\nst.global.b8 [%rd5], %r4;\n\
         add.u32 %r5, %r5, 1;\nsetp.lt.u32 %p1, %r5, {size};\n@%p1 bra BYTES;\nret;\n}}\n"
    );
    in_both_forms(&ptx, 64, input, 64 * size as usize)
}

fn lanes_input(size: u32) -> Vec<u8> {
    (0..64 * size).map(|i| (i * 5 + 1) as u8).collect()
}

#[test]
fn lanes_copying_in_a_row_copy_as_one_range() {
    for size in [4, 8, 16] {
        let cache = if size == 16 { "cg" } else { "ca" };
        let copy = format!("cp.async.{cache}.shared.global [%dst], [%src], {size};");
        assert_eq!(
            run_lanes(&copy, size, &lanes_input(size)),
            Ok(lanes_input(size))
        );
        let whole = format!("cp.async.{cache}.shared.global [%dst], [%src], {size}, {size};");
        assert_eq!(
            run_lanes(&whole, size, &lanes_input(size)),
            Ok(lanes_input(size))
        );
    }
}

#[test]
fn lanes_past_a_rows_end_write_zeros_and_read_nothing() {
    // Threads 0..end copy their 4 bytes; the others copy none, from address 0 (no memory):
    // groups (of 16 or 32) wholly copying and wholly not, or one partly (lane by lane).
    for end in [32, 40] {
        let copy = format!(
            "setp.lt.u32 %p1, %t, {end};\nselp.b32 %n, 4, 0, %p1;\n@!%p1 mov.u64 %src, 0;\n\
             cp.async.ca.shared.global [%dst], [%src], 4, %n;"
        );
        let mut want = lanes_input(4);
        want[4 * end..].fill(0);
        assert_eq!(run_lanes(&copy, 4, &lanes_input(4)), Ok(want), "{end}");
    }
}

#[test]
fn lanes_copying_part_of_their_bytes_copy_lane_by_lane() {
    // Thread t copies t mod 9 of its 8 bytes.
    let copy = "rem.u32 %n, %t, 9;\ncp.async.ca.shared.global [%dst], [%src], 8, %n;";
    let got = run_lanes(copy, 8, &lanes_input(8)).unwrap();
    for t in 0..64 {
        for k in 0..8 {
            let want = if k < t % 9 {
                lanes_input(8)[8 * t + k]
            } else {
                0
            };
            assert_eq!(got[8 * t + k], want, "thread {t} byte {k}");
        }
    }
}

#[test]
fn lanes_reading_out_of_order_copy_lane_by_lane() {
    // Thread t reads thread 63 − t's bytes: not one range.
    let copy = "sub.u32 %r7, 63, %t;\nmul.wide.u32 %rd6, %r7, 16;\nadd.s64 %rd7, %rd1, %rd6;\n\
                cp.async.cg.shared.global [%dst], [%rd7], 16;";
    let want: Vec<u8> = lanes_input(16)
        .chunks(16)
        .rev()
        .flatten()
        .copied()
        .collect();
    assert_eq!(run_lanes(copy, 16, &lanes_input(16)), Ok(want));
}

#[test]
fn lanes_reading_outside_device_memory_fault_as_one_thread_does() {
    // Thread 20's source runs 2 bytes past the input.
    let copy = "cp.async.ca.shared.global [%dst], [%src], 4;";
    let err = run_lanes(copy, 4, &lanes_input(4)[..20 * 4 + 2]).unwrap_err();
    assert!(
        err.contains("illegal address") && err.contains("thread 20") && err.contains("cp.async"),
        "{err}"
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
