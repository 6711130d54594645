//! Several host threads launching different kernels (and the same kernel) on the shared
//! runtime at once all get correct results, including while a hot kernel's lane-group form
//! is being compiled by one of them.

use ptxjit::{Arg, DeviceBuffer, Module};

const ADD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry add_k(.param .u64 out, .param .u32 k)\n{\n\
    .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
    ld.param.u64 %rd1, [out];\nld.param.u32 %r5, [k];\n\
    mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.s32 %r4, %r1, %r2, %r3;\n\
    add.u32 %r6, %r4, %r5;\nmul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r6;\nret;\n}\n";

const H2: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry twice(.param .u64 out, .param .u32 k)\n{\n\
    .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
    ld.param.u64 %rd1, [out];\nld.param.u32 %r5, [k];\n\
    mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.s32 %r4, %r1, %r2, %r3;\n\
    and.b32 %r6, %r4, 0x3FF;\nor.b32 %r6, %r6, 0x3C00;\nshl.b32 %r7, %r6, 16;\nor.b32 %r7, %r7, %r6;\n\
    add.rn.f16x2 %r7, %r7, %r7;\nmul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r7;\nret;\n}\n";

#[test]
fn host_threads_launching_different_kernels_at_once_get_correct_results() {
    let add = Module::from_ptx(ADD).unwrap();
    let h2 = Module::from_ptx(H2).unwrap();
    std::thread::scope(|s| {
        for t in 0..6u32 {
            let (add, h2) = (&add, &h2);
            s.spawn(move || {
                for round in 0..10u32 {
                    let grid = 1 + (t + round) % 40;
                    let n = grid * 256;
                    let out = DeviceBuffer::zeroed(n as usize * 4).unwrap();
                    let args = [Arg::buffer(&out), Arg::u32(t * 1000 + round)];
                    let words = |out: &DeviceBuffer| -> Vec<u32> {
                        out.to_bytes()
                            .chunks(4)
                            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                            .collect()
                    };
                    if t % 2 == 0 {
                        add.kernel("add_k")
                            .unwrap()
                            .launch(grid, 256, &args)
                            .unwrap();
                        let expected: Vec<u32> = (0..n).map(|i| i + t * 1000 + round).collect();
                        assert_eq!(words(&out), expected, "thread {t} round {round}");
                    } else {
                        h2.kernel("twice")
                            .unwrap()
                            .launch(grid, 256, &args)
                            .unwrap();
                        for (i, w) in words(&out).into_iter().enumerate() {
                            // x in [1, 2): x + x = 2x exactly, one more in the exponent.
                            let h = (i as u32 & 0x3FF | 0x3C00) + 0x0400;
                            assert_eq!(w, h | h << 16, "thread {t} round {round} element {i}");
                        }
                    }
                }
            });
        }
    });
}
