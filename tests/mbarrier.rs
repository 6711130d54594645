//! `mbarrier` (sm_80/sm_90): a case per rule of the ISA's mbarrier object, with threads that
//! really wait on each other (each kernel is cooperative: its waits are synchronization points).

mod common;

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Kernel `k(.param .u64 out)` with a shared `bar` (.b64) and `sh` (64 × u32): `body` runs
/// with `%t` = %tid.x, `%n` = %ntid.x, `%bar` = bar's shared address, `%sh` = sh's, and `%o`
/// = out + 4 × %t. Returns `words` u32 of the output.
fn run(body: &str, threads: u32, words: usize) -> Result<Vec<u32>, String> {
    run_on(body, threads, &vec![0; words])
}

/// [`run`] with the output buffer holding `words` at the start; returns all of it.
fn run_on(body: &str, threads: u32, words: &[u32]) -> Result<Vec<u32>, String> {
    let ptx = format!(
        "{HEAD}.visible .entry k(.param .u64 k_out)\n{{\n\
         .reg .pred %p<8>;\n.reg .b32 %r<24>;\n.reg .b64 %rd<8>, %state;\n\
         .reg .b32 %t, %n, %bar, %sh;\n.reg .b64 %out, %o;\n\
         .shared .align 8 .b64 bar;\n.shared .align 4 .u32 sh[64];\n\
         ld.param.u64 %out, [k_out];\nmov.u32 %t, %tid.x;\nmov.u32 %n, %ntid.x;\n\
         mov.u32 %bar, bar;\nmov.u32 %sh, sh;\nmul.wide.u32 %rd7, %t, 4;\nadd.s64 %o, %out, %rd7;\n\
         {body}\nret;\n}}\n"
    );
    common::out_in_both_forms(&ptx, &common::plain_launch(1, threads), words)
}

/// Thread 0 initializes `bar` for `count` arrivals; everyone passes a barrier after it.
fn init(count: &str) -> String {
    format!(
        "setp.eq.u32 %p7, %t, 0;\n@%p7 mbarrier.init.shared::cta.b64 [%bar], {count};\n\
         fence.mbarrier_init.release.cluster;\nbar.sync 0;\n"
    )
}

/// `%r1` = the sum of `sh[0..n]`.
const SUM_SH: &str = "mov.u32 %r1, 0;\nmov.u32 %r2, 0;\nSUM:\nshl.b32 %r3, %r2, 2;\n\
    add.u32 %r3, %sh, %r3;\nld.shared.u32 %r4, [%r3];\nadd.u32 %r1, %r1, %r4;\n\
    add.u32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, %n;\n@%p1 bra SUM;\n";

/// Each thread stores `%t + 1` to `sh[%t]`.
const STORE_OWN: &str =
    "shl.b32 %r5, %t, 2;\nadd.u32 %r5, %sh, %r5;\nadd.u32 %r6, %t, 1;\nst.shared.u32 [%r5], %r6;\n";

#[test]
fn a_phase_completes_when_every_expected_thread_has_arrived() {
    // Every thread stores, arrives, and waits on its state: each sees every store.
    let body = format!(
        "{}{STORE_OWN}mbarrier.arrive.shared::cta.b64 %state, [%bar];\n\
         WAIT:\nmbarrier.try_wait.shared::cta.b64 %p2, [%bar], %state;\n@!%p2 bra WAIT;\n\
         {SUM_SH}st.global.u32 [%o], %r1;",
        init("%n")
    );
    let got = run(&body, 48, 48).unwrap();
    assert_eq!(got, vec![48 * 49 / 2; 48]);
}

#[test]
fn a_wait_on_the_preceding_phase_parity_is_complete_and_on_the_current_one_waits() {
    // Thread 0 produces three values, one phase each (count 1); the others wait on parity 0,
    // 1, 0 and read each value after its phase. Parity 1 before any phase: complete at once.
    let body = format!(
        "{}mbarrier.test_wait.parity.shared::cta.b64 %p3, [%bar], 1;\n\
         selp.u32 %r10, 1, 0, %p3;\nbar.sync 0;\nmov.u32 %r11, 0;\nmov.u32 %r12, 0;\n\
         STEP:\n@!%p7 bra CONSUME;\n\
         add.u32 %r13, %r11, 100;\nst.shared.u32 [%sh], %r13;\n\
         mbarrier.arrive.release.cta.shared::cta.b64 %state, [%bar];\n\
         CONSUME:\nand.b32 %r14, %r11, 1;\n\
         WAIT:\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [%bar], %r14, 1000;\n@!%p2 bra WAIT;\n\
         ld.shared.u32 %r15, [%sh];\nadd.u32 %r12, %r12, %r15;\nbar.sync 0;\n\
         add.u32 %r11, %r11, 1;\nsetp.lt.u32 %p1, %r11, 3;\n@%p1 bra STEP;\n\
         mad.lo.u32 %r12, %r10, 1000, %r12;\nst.global.u32 [%o], %r12;",
        init("1")
    );
    let got = run(&body, 40, 40).unwrap();
    assert_eq!(got, vec![1000 + 100 + 101 + 102; 40]);
}

#[test]
fn transactions_hold_a_phase_open_until_complete_tx_counts_them_down() {
    // Thread 0 arrives expecting 8 bytes; threads 1 and 2 each complete 4, thread 2 only after
    // the others have seen the phase still open (test_wait gives false until then).
    let body = format!(
        "{}setp.eq.u32 %p4, %t, 1;\nsetp.eq.u32 %p5, %t, 2;\n\
         @%p7 mbarrier.arrive.expect_tx.shared::cta.b64 %state, [%bar], 8;\n\
         @%p4 mbarrier.complete_tx.shared::cta.b64 [%bar], 4;\n\
         mbarrier.test_wait.parity.shared::cta.b64 %p2, [%bar], 0;\nselp.u32 %r1, 1, 0, %p2;\n\
         bar.sync 0;\n\
         @%p5 mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%bar], 4;\n\
         WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n@!%p2 bra WAIT;\n\
         add.u32 %r1, %r1, 10;\nst.global.u32 [%o], %r1;",
        init("1")
    );
    let got = run(&body, 4, 4).unwrap();
    assert_eq!(got, vec![10; 4]);
}

#[test]
fn expect_tx_raises_the_count_that_complete_tx_lowers() {
    let body = format!(
        "{}@%p7 mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%bar], 32;\n\
         @%p7 mbarrier.arrive.shared::cta.b64 %state, [%bar];\n\
         mbarrier.test_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n\
         @%p7 mbarrier.complete_tx.shared::cta.b64 [%bar], 32;\n\
         mbarrier.test_wait.parity.shared::cta.b64 %p3, [%bar], 0;\n\
         selp.u32 %r1, 1, 0, %p2;\nselp.u32 %r2, 2, 0, %p3;\nadd.u32 %r1, %r1, %r2;\n\
         st.global.u32 [%o], %r1;",
        init("1")
    );
    // One thread: false while the bytes are outstanding, true once they are counted.
    assert_eq!(run(&body, 1, 1).unwrap(), vec![2]);
}

#[test]
fn a_register_written_before_a_wait_that_finds_its_phase_complete_keeps_its_value() {
    // %r5 is 1 at the first barrier and 2 at the wait, which finds its phase complete and
    // goes on without waiting; the value of %r5 after the next barrier is 2.
    let got = run(
        &format!(
            "{}mov.u32 %r5, 1;\nmbarrier.arrive.shared::cta.b64 %state, [%bar];\nbar.sync 0;\n\
             mov.u32 %r5, 2;\nmbarrier.test_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n\
             bar.sync 0;\nselp.u32 %r6, 10, 20, %p2;\nadd.u32 %r5, %r5, %r6;\nst.global.u32 [%o], %r5;",
            init("%n")
        ),
        64,
        64,
    )
    .unwrap();
    assert_eq!(got, [12; 64]);
}

#[test]
fn test_wait_returns_false_while_the_phase_is_incomplete() {
    // One thread polls its own barrier and arrives only after a false answer: the poll must
    // return, not block.
    let body = format!(
        "{}mov.u32 %r1, 0;\n\
         POLL:\nmbarrier.test_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n@%p2 bra DONE;\n\
         add.u32 %r1, %r1, 1;\nmbarrier.arrive.shared::cta.b64 %state, [%bar];\nbra POLL;\n\
         DONE:\nst.global.u32 [%o], %r1;",
        init("1")
    );
    assert_eq!(run(&body, 1, 1).unwrap(), vec![1]);
}

#[test]
fn pending_count_reads_the_count_before_the_arrival_from_the_state() {
    let body = format!(
        "{}@%p7 mbarrier.arrive.noComplete.shared::cta.b64 %state, [%bar], 2;\n\
         @%p7 mbarrier.pending_count.b64 %r1, %state;\n\
         @%p7 mbarrier.arrive.shared::cta.b64 %state, [%bar], 3;\n\
         @%p7 mbarrier.pending_count.b64 %r2, %state;\n\
         mad.lo.u32 %r1, %r1, 100, %r2;\nst.global.u32 [%o], %r1;",
        init("5")
    );
    assert_eq!(run(&body, 1, 1).unwrap(), vec![503]);
}

#[test]
fn arrive_drop_lowers_the_expected_count_of_the_phases_after() {
    // 8 threads; the odd ones drop out after the first phase; the second phase completes with
    // the even ones alone.
    let body = format!(
        "{}and.b32 %r1, %t, 1;\nsetp.eq.u32 %p1, %r1, 1;\n\
         @%p1 mbarrier.arrive_drop.shared::cta.b64 %state, [%bar];\n\
         @!%p1 mbarrier.arrive.shared::cta.b64 %state, [%bar];\n\
         W0:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n@!%p2 bra W0;\n\
         @%p1 bra OUT;\nmbarrier.arrive.shared::cta.b64 %state, [%bar];\n\
         W1:\nmbarrier.try_wait.shared::cta.b64 %p2, [%bar], %state;\n@!%p2 bra W1;\n\
         OUT:\nst.global.u32 [%o], 7;",
        init("%n")
    );
    assert_eq!(run(&body, 8, 8).unwrap(), vec![7; 8]);
}

#[test]
fn cp_async_mbarrier_arrive_noinc_counts_as_the_threads_arrival() {
    // Each thread copies its word with cp.async and lets the copies arrive for it.
    let body = format!(
        "{}cvta.to.global.u64 %rd1, %out;\nadd.s64 %rd1, %rd1, 256;\nmul.wide.u32 %rd2, %t, 4;\n\
         add.s64 %rd1, %rd1, %rd2;\nshl.b32 %r5, %t, 2;\nadd.u32 %r5, %sh, %r5;\n\
         cp.async.ca.shared.global [%r5], [%rd1], 4;\n\
         cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%bar];\n\
         W:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n@!%p2 bra W;\n\
         {SUM_SH}st.global.u32 [%o], %r1;",
        init("%n")
    );
    // Words 0..64: results; 64..128: the inputs, 1..=64.
    let words: Vec<u32> = (0..128).map(|i| if i < 64 { 0 } else { i - 63 }).collect();
    let got = run_on(&body, 32, &words).unwrap();
    assert_eq!(got[..32], vec![32 * 33 / 2; 32]);
}

#[test]
fn cp_async_mbarrier_arrive_without_noinc_leaves_the_arrival_to_the_thread() {
    // Without .noinc the copies' arrival is matched by a pending-count increment: the phase
    // needs every thread's own arrive as well.
    let body = format!(
        "{}cp.async.mbarrier.arrive.shared.b64 [%bar];\n\
         mbarrier.test_wait.parity.shared.b64 %p2, [%bar], 0;\n\
         mbarrier.arrive.shared.b64 %state, [%bar];\n\
         W:\nmbarrier.try_wait.parity.shared.b64 %p3, [%bar], 0;\n@!%p3 bra W;\n\
         selp.u32 %r1, 1, 2, %p2;\nst.global.u32 [%o], %r1;",
        init("%n")
    );
    assert_eq!(run(&body, 4, 4).unwrap(), vec![2; 4]);
}

#[test]
fn generic_addresses_of_shared_objects_work_as_the_shared_space() {
    let body = "cvta.shared.u64 %rd1, bar;\nsetp.eq.u32 %p7, %t, 0;\n\
        @%p7 mbarrier.init.b64 [%rd1], %n;\nbar.sync 0;\n\
        mbarrier.arrive.b64 %state, [%rd1];\n\
        W:\nmbarrier.try_wait.b64 %p2, [%rd1], %state;\n@!%p2 bra W;\n\
        bar.sync 0;\n@%p7 mbarrier.inval.b64 [%rd1];\nst.global.u32 [%o], 1;";
    assert_eq!(run(body, 16, 16).unwrap(), vec![1; 16]);
}

#[test]
fn a_phase_that_can_never_complete_is_an_error_naming_the_wait() {
    // Two arrivals expected, one made.
    let body = format!(
        "{}@%p7 mbarrier.arrive.shared::cta.b64 %state, [%bar];\n\
         W:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%bar], 0;\n@!%p2 bra W;",
        init("2")
    );
    let err = run(&body, 4, 4).unwrap_err();
    assert!(
        err.starts_with("kernel 'k': mbarrier phase that can never complete"),
        "{err}"
    );
    assert!(err.contains("mbarrier.try_wait.parity"), "{err}");
}

#[test]
fn an_operation_on_memory_that_holds_no_mbarrier_is_an_error() {
    let err = run("mbarrier.arrive.shared.b64 %state, [%bar];", 1, 1).unwrap_err();
    assert!(
        err.contains("memory that holds no mbarrier object"),
        "{err}"
    );
    assert!(err.contains("mbarrier.arrive.shared.b64"), "{err}");
    // An invalidated object holds none either.
    let body = format!(
        "{}mbarrier.inval.shared.b64 [%bar];\nmbarrier.arrive.shared.b64 %state, [%bar];",
        init("1")
    );
    assert!(run(&body, 1, 1).unwrap_err().contains("holds no mbarrier"));
}

#[test]
fn counts_outside_the_isa_ranges_are_errors() {
    let err = run("mbarrier.init.shared.b64 [%bar], 0;", 1, 1).unwrap_err();
    assert!(err.contains("mbarrier count out of range"), "{err}");
    let err = run("mbarrier.init.shared.b64 [%bar], 1048576;", 1, 1).unwrap_err();
    assert!(err.contains("mbarrier count out of range"), "{err}");
    let body = format!("{}mbarrier.arrive.shared.b64 %state, [%bar], 2;", init("1"));
    assert!(run(&body, 1, 1).unwrap_err().contains("count out of range"));
    let body = format!(
        "{}mbarrier.expect_tx.shared.b64 [%bar], 1048575;\nmbarrier.expect_tx.shared.b64 [%bar], 1;",
        init("1")
    );
    assert!(run(&body, 1, 1).unwrap_err().contains("count out of range"));
    // A misaligned object is a misaligned access.
    let body = "add.u32 %r1, %bar, 4;\nmbarrier.init.shared.b64 [%r1], 1;";
    let err = run(body, 1, 1).unwrap_err();
    assert!(err.contains("misaligned shared address"), "{err}");
}

#[test]
fn proxy_and_restricted_fences_are_accepted() {
    let body = "fence.proxy.async.shared::cta;\nfence.proxy.async;\nfence.proxy.async.global;\n\
        fence.proxy.alias;\nfence.acquire.sync_restrict::shared::cluster.cluster;\n\
        fence.release.sync_restrict::shared::cta.cluster;\n\
        fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;\n\
        fence.proxy.tensormap::generic.release.gpu;\n\
        fence.proxy.tensormap::generic.acquire.gpu [%out], 128;\n\
        fence.acquire.gpu;\nst.global.u32 [%o], 5;";
    assert_eq!(run(body, 1, 1).unwrap(), vec![5]);
}
