//! Sequences of driver-API calls with hostile sizes, offsets, handles and launch shapes,
//! through the C library's entry points: every call returns a CUresult, none crashes,
//! panics (the fuzzer's panic hook aborts even where the library would catch it) or hangs.
//!
//! What the caller must get right stays right, as the driver's contract asks of any program:
//! host pointers are valid for the sizes passed (a host buffer as large as any device
//! allocation this target keeps), `kernelParams` holds a pointer per parameter, out-pointers
//! are writable. Everything on the device side is fair game: wild device pointers, sizes that
//! wrap, stale and made-up handles, impossible grids. One oracle beyond "no crash": a copy or
//! memset longer than any live allocation must fail.
#![no_main]

use std::ffi::{c_uint, c_void};
use std::ptr::{null, null_mut};

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use ptxjit_capi::driver::context::*;
use ptxjit_capi::driver::launch::*;
use ptxjit_capi::driver::memory::*;
use ptxjit_capi::driver::module::*;
use ptxjit_capi::driver::stream::*;
use ptxjit_capi::driver::{CUDA_SUCCESS, CUdeviceptr, CUresult, Handle};

/// Device allocations larger than this are freed at once (so that a legitimate copy or
/// launch never commits gigabytes); the host buffer is this large.
const KEPT_BYTES: usize = 1 << 20;

/// Sizes at the edges: wrapping, near-wrapping, just past a buffer, huge but not wrapping.
const EDGES: [u64; 12] = [
    0,
    1,
    3,
    4096,
    KEPT_BYTES as u64,
    KEPT_BYTES as u64 + 1,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 63,
    u64::MAX - 7,
    u64::MAX,
];

const MODULES: [&str; 4] = [
    // Stores its thread index through a pointer; reads a constant table.
    ".version 8.0\n.target sm_80\n.address_size 64\n\
     .const .align 4 .u32 table[4] = {1, 2, 3, 4};\n.global .align 8 .u64 counter;\n\
     .visible .entry store(.param .u64 out, .param .u32 v)\n{\n.reg .b32 %r<4>;\n\
     .reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nld.param.u32 %r1, [v];\nmov.u32 %r2, %tid.x;\n\
     mul.wide.u32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\nld.const.u32 %r3, [table+4];\n\
     add.u32 %r1, %r1, %r3;\nst.global.u32 [%rd3], %r1;\natom.global.add.u64 %rd2, [counter], 1;\n\
     ret;\n}\n",
    // A loop over n words, shared memory and a barrier, dynamic shared memory.
    ".version 8.0\n.target sm_80\n.address_size 64\n.extern .shared .align 16 .b8 dyn[];\n\
     .visible .entry copy(.param .u64 dst, .param .u64 src, .param .u32 n)\n{\n\
     .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p;\n.shared .align 4 .u32 s[256];\n\
     ld.param.u64 %rd1, [dst];\nld.param.u64 %rd2, [src];\nld.param.u32 %r1, [n];\n\
     mov.u32 %r2, %tid.x;\nmov.u32 %r5, dyn;\nst.shared.u32 [%r5], %r2;\nbar.sync 0;\n\
     LOOP:\nsetp.ge.u32 %p, %r2, %r1;\n@%p bra DONE;\nmul.wide.u32 %rd3, %r2, 4;\n\
     add.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r3, [%rd4];\nand.b32 %r6, %r2, 255;\n\
     shl.b32 %r6, %r6, 2;\nmov.u32 %r7, s;\nadd.u32 %r7, %r7, %r6;\nst.shared.u32 [%r7], %r3;\n\
     add.s64 %rd5, %rd1, %rd3;\nst.global.u32 [%rd5], %r3;\nmov.u32 %r4, %ntid.x;\n\
     add.u32 %r2, %r2, %r4;\nbra LOOP;\nDONE:\nret;\n}\n",
    // Never ends: the launch timeout ends it.
    ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry spin()\n{\nL:\nbra L;\n}\n",
    // Not PTX this library can run.
    ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry bad()\n{\nfoo.bar;\n}\n",
];

const NAMES: [&[u8]; 6] = [
    b"store\0",
    b"copy\0",
    b"spin\0",
    b"bad\0",
    b"table\0",
    b"counter\0",
];

#[derive(Arbitrary, Debug)]
enum Size {
    Small(u16),
    Edge(u8),
    Any(u64),
}

#[derive(Arbitrary, Debug)]
enum Ptr {
    /// Into (or near) one of this input's allocations, live or freed.
    Alloc {
        which: u8,
        offset: i32,
    },
    Null,
    Any(u64),
}

/// A handle: one this input made (maybe destroyed since), or a made-up one.
#[derive(Arbitrary, Debug)]
enum Pick {
    Made(u8),
    Null,
    Any(usize),
}

#[derive(Arbitrary, Debug)]
enum Dim {
    Small(u8),
    Edge(u8),
}

#[derive(Arbitrary, Debug)]
enum Text {
    Bundled(u8),
    /// Arbitrary bytes (NUL-terminated by the target).
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Call {
    Init,
    CtxCreate,
    CtxDestroy(Pick),
    CtxSetCurrent(Pick),
    CtxSynchronize,
    MemAlloc(Size),
    MemFree(Ptr),
    HtoD {
        dst: Ptr,
        n: Size,
        null_host: bool,
    },
    DtoH {
        src: Ptr,
        n: Size,
        null_host: bool,
    },
    DtoD {
        dst: Ptr,
        src: Ptr,
        n: Size,
    },
    MemsetD8 {
        dst: Ptr,
        value: u8,
        n: Size,
    },
    MemsetD32 {
        dst: Ptr,
        value: u32,
        n: Size,
    },
    ModuleLoad(Text),
    ModuleUnload(Pick),
    GetFunction {
        module: Pick,
        name: u8,
    },
    GetGlobal {
        module: Pick,
        name: u8,
    },
    Launch {
        f: Pick,
        grid: [Dim; 3],
        block: [Dim; 3],
        shared: Size,
        args: [Ptr; 3],
        packed: Option<Size>,
    },
    StreamCreate,
    StreamDestroy(Pick),
    EventCreate,
    EventRecord {
        event: Pick,
        stream: Pick,
    },
    EventElapsed {
        start: Pick,
        end: Pick,
    },
    EventDestroy(Pick),
}

/// What one input has made, to pick from and to clean up.
#[derive(Default)]
struct Made {
    allocs: Vec<(CUdeviceptr, u64)>,
    contexts: Vec<Handle>,
    modules: Vec<Handle>,
    functions: Vec<Handle>,
    streams: Vec<Handle>,
    events: Vec<Handle>,
}

impl Size {
    fn get(&self) -> u64 {
        match *self {
            Size::Small(n) => n as u64,
            Size::Edge(i) => EDGES[i as usize % EDGES.len()],
            Size::Any(n) => n,
        }
    }
}

impl Dim {
    fn get(&self) -> c_uint {
        const EDGES: [c_uint; 8] = [0, 1, 64, 1024, 1025, 65535, 65536, c_uint::MAX];
        match *self {
            Dim::Small(n) => n as c_uint % 9,
            Dim::Edge(i) => EDGES[i as usize % EDGES.len()],
        }
    }
}

impl Made {
    fn ptr(&self, p: &Ptr) -> CUdeviceptr {
        match *p {
            Ptr::Alloc { which, offset } if !self.allocs.is_empty() => {
                let (base, _) = self.allocs[which as usize % self.allocs.len()];
                base.wrapping_add_signed(offset as i64)
            }
            Ptr::Alloc { .. } | Ptr::Null => 0,
            Ptr::Any(a) => a,
        }
    }

    fn pick(list: &[Handle], p: &Pick) -> Handle {
        match *p {
            Pick::Made(i) if !list.is_empty() => list[i as usize % list.len()],
            Pick::Made(_) | Pick::Null => null_mut(),
            Pick::Any(a) => a as Handle,
        }
    }
}

/// Whether `n` bytes from any address could lie inside one live allocation.
fn could_fit(made: &Made, n: u64) -> bool {
    n <= made
        .allocs
        .iter()
        .map(|a| a.1)
        .max()
        .unwrap_or(0)
        .max(1 << 16)
}

fn expect_failure(what: &str, n: u64, r: CUresult) {
    assert_ne!(
        r, CUDA_SUCCESS,
        "{what} of {n} bytes, more than any allocation, succeeded"
    );
}

fn call(c: &Call, made: &mut Made, host: &mut [u8]) {
    // SAFETY (every call below): host pointers are valid for the sizes passed (`host` is
    // KEPT_BYTES long and larger sizes never reach a call with a host pointer), out-pointers
    // are locals, `kernelParams` has a pointer per parameter to 8 readable bytes.
    unsafe {
        match c {
            Call::Init => {
                cuInit(0);
            }
            Call::CtxCreate => {
                let mut ctx = null_mut();
                if cuCtxCreate_v2(&mut ctx, 0, 0) == CUDA_SUCCESS {
                    made.contexts.push(ctx);
                }
            }
            Call::CtxDestroy(p) => {
                cuCtxDestroy_v2(Made::pick(&made.contexts, p));
            }
            Call::CtxSetCurrent(p) => {
                cuCtxSetCurrent(Made::pick(&made.contexts, p));
            }
            Call::CtxSynchronize => {
                cuCtxSynchronize();
            }
            Call::MemAlloc(size) => {
                let n = size.get();
                let mut d = 0;
                if cuMemAlloc_v2(&mut d, n as usize) == CUDA_SUCCESS {
                    if n > KEPT_BYTES as u64 {
                        cuMemFree_v2(d);
                    } else {
                        made.allocs.push((d, n));
                    }
                }
            }
            Call::MemFree(p) => {
                cuMemFree_v2(made.ptr(p));
            }
            Call::HtoD { dst, n, null_host } => {
                let n = n.get();
                let src = if *null_host {
                    null()
                } else {
                    host.as_ptr() as *const c_void
                };
                if n <= KEPT_BYTES as u64 {
                    cuMemcpyHtoD_v2(made.ptr(dst), src, n as usize);
                } else if *null_host {
                    expect_failure("HtoD", n, cuMemcpyHtoD_v2(made.ptr(dst), src, n as usize));
                }
            }
            Call::DtoH { src, n, null_host } => {
                let n = n.get();
                let dst = if *null_host {
                    null_mut()
                } else {
                    host.as_mut_ptr() as *mut c_void
                };
                if n <= KEPT_BYTES as u64 {
                    cuMemcpyDtoH_v2(dst, made.ptr(src), n as usize);
                } else if *null_host {
                    expect_failure("DtoH", n, cuMemcpyDtoH_v2(dst, made.ptr(src), n as usize));
                }
            }
            Call::DtoD { dst, src, n } => {
                let n = n.get();
                let r = cuMemcpyDtoD_v2(made.ptr(dst), made.ptr(src), n as usize);
                if !could_fit(made, n) {
                    expect_failure("DtoD", n, r);
                }
            }
            Call::MemsetD8 { dst, value, n } => {
                let n = n.get();
                let r = cuMemsetD8_v2(made.ptr(dst), *value, n as usize);
                if !could_fit(made, n) {
                    expect_failure("MemsetD8", n, r);
                }
            }
            Call::MemsetD32 { dst, value, n } => {
                let n = n.get();
                let r = cuMemsetD32_v2(made.ptr(dst), *value, n as usize);
                if !could_fit(made, n.saturating_mul(4)) {
                    expect_failure("MemsetD32", n, r);
                }
            }
            Call::ModuleLoad(text) => {
                let mut bytes = match text {
                    Text::Bundled(i) => MODULES[*i as usize % MODULES.len()].as_bytes().to_vec(),
                    Text::Raw(b) => b.clone(),
                };
                bytes.push(0);
                let mut m = null_mut();
                if cuModuleLoadData(&mut m, bytes.as_ptr() as *const c_void) == CUDA_SUCCESS {
                    made.modules.push(m);
                }
            }
            Call::ModuleUnload(p) => {
                cuModuleUnload(Made::pick(&made.modules, p));
            }
            Call::GetFunction { module, name } => {
                let mut f = null_mut();
                let name = NAMES[*name as usize % NAMES.len()];
                let m = Made::pick(&made.modules, module);
                if cuModuleGetFunction(&mut f, m, name.as_ptr().cast()) == CUDA_SUCCESS {
                    made.functions.push(f);
                }
            }
            Call::GetGlobal { module, name } => {
                let (mut d, mut n) = (0, 0);
                let name = NAMES[*name as usize % NAMES.len()];
                let m = Made::pick(&made.modules, module);
                cuModuleGetGlobal_v2(&mut d, &mut n, m, name.as_ptr().cast());
            }
            Call::Launch {
                f,
                grid,
                block,
                shared,
                args,
                packed,
            } => {
                let values: Vec<u64> = args.iter().map(|a| made.ptr(a)).collect();
                let slots: Vec<*const c_void> = values
                    .iter()
                    .map(|v| v as *const u64 as *const c_void)
                    .collect();
                // The packed form: three 8-byte values in 256 readable bytes, whatever size
                // the caller claims.
                let mut buffer = [0u64; 32];
                buffer[..3].copy_from_slice(&values);
                let claimed = packed.as_ref().map_or(0, |s| s.get() as usize);
                // CU_LAUNCH_PARAM_BUFFER_POINTER, _SIZE, _END.
                const BUFFER_POINTER: usize = 1;
                const BUFFER_SIZE: usize = 2;
                let extra: [*mut c_void; 5] = [
                    BUFFER_POINTER as *mut c_void,
                    buffer.as_mut_ptr() as *mut c_void,
                    BUFFER_SIZE as *mut c_void,
                    &claimed as *const usize as *mut c_void,
                    null_mut(),
                ];
                let (params, extra) = match packed {
                    None => (slots.as_ptr(), null()),
                    Some(_) => (null(), extra.as_ptr()),
                };
                cuLaunchKernel(
                    Made::pick(&made.functions, f),
                    grid[0].get(),
                    grid[1].get(),
                    grid[2].get(),
                    block[0].get(),
                    block[1].get(),
                    block[2].get(),
                    shared.get() as c_uint,
                    null_mut(),
                    params,
                    extra,
                );
            }
            Call::StreamCreate => {
                let mut s = null_mut();
                if cuStreamCreate(&mut s, 0) == CUDA_SUCCESS {
                    made.streams.push(s);
                }
            }
            Call::StreamDestroy(p) => {
                cuStreamDestroy_v2(Made::pick(&made.streams, p));
            }
            Call::EventCreate => {
                let mut e = null_mut();
                if cuEventCreate(&mut e, 0) == CUDA_SUCCESS {
                    made.events.push(e);
                }
            }
            Call::EventRecord { event, stream } => {
                cuEventRecord(
                    Made::pick(&made.events, event),
                    Made::pick(&made.streams, stream),
                );
            }
            Call::EventElapsed { start, end } => {
                let mut ms = 0.0;
                cuEventElapsedTime(
                    &mut ms,
                    Made::pick(&made.events, start),
                    Made::pick(&made.events, end),
                );
            }
            Call::EventDestroy(p) => {
                cuEventDestroy_v2(Made::pick(&made.events, p));
            }
        }
    }
}

fuzz_target!(
    init: {
        // SAFETY: before any other thread of the process reads the environment.
        unsafe { std::env::set_var("PTXJIT_LAUNCH_TIMEOUT", "0.05") };
        // Once for the process (calls before it are `tests/clients/driver_state.c`'s).
        cuInit(0);
    },
    |calls: Vec<Call>| {
        let mut host = vec![0u8; KEPT_BYTES];
        let mut made = Made::default();
        for c in calls.iter().take(64) {
            call(c, &mut made, &mut host);
        }
        // Leave nothing for the next input (so that a crash reproduces from its input alone),
        // from a context of its own: the input may have destroyed its own.
        let mut cleaner = null_mut();
        unsafe { cuCtxCreate_v2(&mut cleaner, 0, 0) };
        for &(d, _) in &made.allocs {
            cuMemFree_v2(d);
        }
        for &m in &made.modules {
            cuModuleUnload(m);
        }
        for &s in &made.streams {
            cuStreamDestroy_v2(s);
        }
        for &e in &made.events {
            cuEventDestroy_v2(e);
        }
        for &c in made.contexts.iter().chain([&cleaner]) {
            cuCtxDestroy_v2(c);
        }
        cuCtxSetCurrent(null_mut());
    }
);
