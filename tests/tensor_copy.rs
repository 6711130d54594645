//! `cp.async.bulk.tensor` (TMA, sm_90) through tensor maps built on the device by
//! `tensormap.replace` or on the host by `ptxjit::tensor_map`: a case per rule. The box walk
//! itself (packing, swizzle, fill, traversal strides) has its unit tests in `tensor_copy`.

use ptxjit::tensor_map::{ElemType, TensorMap};
use ptxjit::{Arg, DeviceBuffer, Module};

const HEAD: &str = ".version 8.3\n.target sm_90a\n.address_size 64\n";

/// Kernel `k(.param .align 64 .b8 map[128], .param .u64 data, .param .u64 out)` run by one
/// thread: `body` may use `%map` (the map's generic address), `%data`, `%out`, the shared
/// `bar` (.b64, initialized for one arrival) and `box` (1024 bytes, 1024-aligned).
fn run(body: &str, map: &[u8; 128], data: &DeviceBuffer, out: &DeviceBuffer) -> Result<(), String> {
    let ptx = format!(
        "{HEAD}.visible .entry k(.param .align 64 .b8 map[128], .param .u64 k_data, \
         .param .u64 k_out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>, %state, %map, %data, %out;\n\
         .shared .align 8 .b64 bar;\n.shared .align 1024 .b8 box[1024];\n\
         mov.b32 %r15, map;\ncvt.u64.u32 %rd7, %r15;\ncvta.param.u64 %map, %rd7;\n\
         ld.param.u64 %data, [k_data];\nld.param.u64 %out, [k_out];\n\
         mbarrier.init.shared::cta.b64 [bar], 1;\n{body}\nret;\n}}\n"
    );
    let module = Module::from_ptx(&ptx).map_err(|e| e.to_string())?;
    module
        .kernel("k")
        .unwrap()
        .launch(
            1,
            1,
            &[Arg::bytes(map), Arg::buffer(data), Arg::buffer(out)],
        )
        .map_err(|e| e.to_string())
}

/// Loads the box at (%r1, %r2) into `box`, waits, and copies its first `n` words to `out`.
fn load_box(n: u32) -> String {
    format!(
        "mbarrier.arrive.expect_tx.shared::cta.b64 %state, [bar], 64;\n\
         cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [box], \
         [%map, {{%r1, %r2}}], [bar];\n\
         WAIT:\nmbarrier.try_wait.shared::cta.b64 %p1, [bar], %state;\n@!%p1 bra WAIT;\n\
         mov.u32 %r3, 0;\nCOPY:\nmov.u32 %r4, box;\nadd.u32 %r4, %r4, %r3;\n\
         ld.shared.u32 %r5, [%r4];\ncvt.u64.u32 %rd1, %r3;\nadd.u64 %rd1, %out, %rd1;\n\
         st.global.u32 [%rd1], %r5;\nadd.u32 %r3, %r3, 4;\nsetp.lt.u32 %p2, %r3, {};\n\
         @%p2 bra COPY;\n",
        4 * n
    )
}

/// A 16 x 8 tensor of u32 holding 100 y + x, and a map of 4 x 4 boxes of it.
fn tensor() -> (DeviceBuffer, TensorMap) {
    let words: Vec<u32> = (0..8)
        .flat_map(|y| (0..16).map(move |x| 100 * y + x))
        .collect();
    let data = DeviceBuffer::from_slice(&words).unwrap();
    let map = TensorMap::tiled(data.address(), ElemType::U32, &[16, 8], &[4, 4]);
    (data, map)
}

#[test]
fn a_load_completes_its_bytes_on_the_mbarrier() {
    // expect_tx of 64 bytes: the phase completes only once the 4 x 4 u32 box has arrived.
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = format!("mov.u32 %r1, 12;\nmov.u32 %r2, 6;\n{}", load_box(16));
    run(&body, &map.encode(), &data, &out).unwrap();
    let want: Vec<u32> = (6..10)
        .flat_map(|y| (12..16).map(move |x| if y < 8 { 100 * y + x } else { 0 }))
        .collect();
    assert_eq!(out.to_vec::<u32>(), want);
}

#[test]
fn negative_coordinates_start_the_box_outside_the_tensor() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = format!("mov.u32 %r1, -2;\nmov.u32 %r2, -3;\n{}", load_box(16));
    run(&body, &map.encode(), &data, &out).unwrap();
    let got: Vec<u32> = out.to_vec();
    assert_eq!(&got[..12], &[0; 12]);
    assert_eq!(&got[12..], &[0, 0, 0, 1]);
}

#[test]
fn a_map_built_by_tensormap_replace_on_zeroed_shared_memory_works() {
    // Triton's device-side descriptors: zeroed bytes, then each field replaced.
    let (data, map) = tensor();
    let body = format!(
        ".shared .align 128 .b8 tm[128];\nmov.u32 %r10, tm;\ncvt.u64.u32 %rd2, %r10;\n\
         tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%rd2], %data;\n\
         tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd2], 1;\n\
         tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd2], 0, 4;\n\
         tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd2], 1, 4;\n\
         tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd2], 0, 16;\n\
         tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd2], 1, 8;\n\
         tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%rd2], 0, 64;\n\
         tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd2], 0, 1;\n\
         tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd2], 1, 1;\n\
         tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd2], 2;\n\
         tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned \
         [%out], [%rd2], 128;\n\
         fence.proxy.tensormap::generic.acquire.gpu [%out], 128;\n\
         mov.u64 %map, %out;\nadd.u64 %out, %out, 128;\n\
         mov.u32 %r1, 4;\nmov.u32 %r2, 1;\n{}",
        load_box(16)
    );
    let words = DeviceBuffer::zeroed(128 + 64).unwrap();
    run(&body, &[0; 128], &data, &words).unwrap();
    let got: Vec<u32> = words.to_vec();
    let want: Vec<u32> = (1..5)
        .flat_map(|y| (4..8).map(move |x| 100 * y + x))
        .collect();
    assert_eq!(&got[32..], &want[..]);
    // The map the device built is the one the host encodes.
    let bytes: Vec<u8> = words.to_bytes()[..128].to_vec();
    let decoded = TensorMap::decode(&bytes.try_into().unwrap()).unwrap();
    assert_eq!(decoded, map);
}

#[test]
fn a_store_writes_the_box_back_clipped_at_the_tensor_edge() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    // Load rows 0..4 of columns 0..4, store them at (14, 6): only 2 x 2 of it lands.
    let body = format!(
        "mov.u32 %r1, 0;\nmov.u32 %r2, 0;\n{}mov.u32 %r6, 14;\nmov.u32 %r7, 6;\n\
         cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%map, {{%r6, %r7}}], [box];\n\
         cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n",
        load_box(0)
    );
    run(&body, &map.encode(), &data, &out).unwrap();
    let got: Vec<u32> = data.to_vec();
    for y in 0..8u32 {
        for x in 0..16u32 {
            let want = match (x, y) {
                (14.., 6..) => 100 * (y - 6) + (x - 14),
                _ => 100 * y + x,
            };
            assert_eq!(got[(16 * y + x) as usize], want, "({x}, {y})");
        }
    }
}

#[test]
fn a_copy_through_a_map_that_breaks_a_rule_names_the_instruction_and_the_rule() {
    let (data, mut map) = tensor();
    map.box_dims[0] = 300;
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = format!("mov.u32 %r1, 0;\nmov.u32 %r2, 0;\n{}", load_box(1));
    let e = run(&body, &map.encode(), &data, &out).unwrap_err();
    assert!(
        e.contains("invalid tensor map: box dimension 0 is 300"),
        "{e}"
    );
    assert!(e.contains("cp.async.bulk.tensor.2d"), "{e}");
}

#[test]
fn the_instruction_dimension_is_the_map_rank() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = "mov.u32 %r1, 0;\n\
        cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes [box], \
        [%map, {%r1}], [bar];";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("1-d box, the map has rank 2"), "{e}");
}

#[test]
fn a_map_in_memory_outside_every_window_is_an_illegal_address() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = "mov.u64 %map, 4096;\nmov.u32 %r1, 0;\nmov.u32 %r2, 0;\n\
        cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [box], \
        [%map, {%r1, %r2}], [bar];";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("illegal address 0x1000 (128-byte load"), "{e}");
}

#[test]
fn tensormap_replace_codes_follow_table_33() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = "tensormap.replace.tile.swizzle_mode.global.b1024.b32 [%out], 5;";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("SwizzleMode value 5 is not 0 to 4"), "{e}");
    let body = "tensormap.replace.tile.box_dim.global.b1024.b32 [%out], 5, 8;";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("ordinal 5"), "{e}");
    let body = "tensormap.replace.tile.global_address.global.b1024.b32 [%out], 0;";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("is .b64"), "{e}");
}

#[test]
fn a_tensor_operand_belongs_to_the_tensor_copy_only() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let e = run("ld.u32 %r1, [%map, {%r2}];", &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("belongs to cp.async.bulk.tensor"), "{e}");
    let body = "cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes [box], \
        [%map], [bar];";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("expected [tensorMap, {coordinates}]"), "{e}");
}

#[test]
fn im2col_copies_are_precisely_unsupported() {
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes \
        [box], [%map, {%r1, %r2, %r3}], [bar], {%rs1};";
    let e = run(body, &map.encode(), &data, &out).unwrap_err();
    assert!(e.contains("unsupported instruction"), "{e}");
}

#[test]
fn a_kernel_parameter_address_is_an_offset_in_the_parameter_space() {
    // Triton: `mov.b32 %r, param` then `cvta.param`; `ld.param` through the register works too.
    let (data, map) = tensor();
    let out = DeviceBuffer::zeroed(64).unwrap();
    let body = "mov.b32 %r1, k_out;\nld.param.u64 %rd3, [%r1];\nld.u64 %rd4, [%map];\n\
        st.global.u64 [%rd3], %rd4;\nsetp.lt.u32 %p3, %r1, 256;\nselp.u32 %r2, 1, 0, %p3;\n\
        st.global.u32 [%rd3+8], %r2;";
    run(body, &map.encode(), &data, &out).unwrap();
    let got: Vec<u64> = out.to_vec();
    assert_eq!(
        got[0],
        data.address(),
        "the map's first word, read through cvta.param"
    );
    assert_eq!(
        got[1] as u32, 1,
        "k_out's address is a small param-space offset"
    );
}
