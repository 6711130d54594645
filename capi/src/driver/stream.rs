//! Streams and events. Work completes before each call returns, so a stream orders nothing,
//! waiting is immediate and a host function added to a stream runs at once; an event records
//! the wall-clock time of `cuEventRecord`.

use std::ffi::{c_float, c_int, c_uint, c_ulonglong, c_void};
use std::time::Instant;

use super::context::{GREATEST_PRIORITY, LEAST_PRIORITY};
use super::*;

/// A created stream: its flags and priority.
struct Stream {
    flags: c_uint,
    priority: c_int,
}

/// An event: its flags and the time it was last recorded.
struct Event {
    flags: c_uint,
    recorded: Option<Instant>,
}

static STREAMS: Table<Stream> = Table::new();
static EVENTS: Table<Event> = Table::new();

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`: the default streams by name.
const LEGACY: usize = 1;
const PER_THREAD: usize = 2;

/// A default stream (null, legacy, per-thread) or a created one.
pub(crate) fn check(h: Handle) -> Result<(), CUresult> {
    match h as usize {
        0 | LEGACY | PER_THREAD => Ok(()),
        _ => STREAMS.with(h, |_| ()),
    }
}

const CU_STREAM_NON_BLOCKING: c_uint = 1;
const CU_EVENT_DISABLE_TIMING: c_uint = 2;

fn create(stream: *mut Handle, flags: c_uint, priority: c_int) -> Result<(), CUresult> {
    if flags & !CU_STREAM_NON_BLOCKING != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // A priority out of range is clamped, as CUDA does.
    let priority = priority.clamp(GREATEST_PRIORITY, LEAST_PRIORITY);
    put(stream, STREAMS.insert(Stream { flags, priority }))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut Handle, flags: c_uint) -> CUresult {
    call_in_context(|| create(stream, flags, LEAST_PRIORITY))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut Handle,
    flags: c_uint,
    priority: c_int,
) -> CUresult {
    call_in_context(|| create(stream, flags, priority))
}

/// A stream's (flags, priority); the default streams are blocking, of the least priority.
fn properties(h: Handle) -> Result<(c_uint, c_int), CUresult> {
    match h as usize {
        0 | LEGACY | PER_THREAD => Ok((0, LEAST_PRIORITY)),
        _ => STREAMS.with(h, |s| (s.flags, s.priority)),
    }
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetPriority(h: Handle, priority: *mut c_int) -> CUresult {
    call_in_context(|| put(priority, properties(h)?.1))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetFlags(h: Handle, flags: *mut c_uint) -> CUresult {
    call_in_context(|| put(flags, properties(h)?.0))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetId(h: Handle, id: *mut c_ulonglong) -> CUresult {
    call_in_context(|| {
        check(h)?;
        put(id, h as c_ulonglong)
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetCtx(h: Handle, ctx: *mut Handle) -> CUresult {
    call_in_context(|| {
        check(h)?;
        put(ctx, super::context::current()?)
    })
}

/// # Safety
/// `ctx` must be writable; `green` writable or null (no green contexts here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamGetCtx_v2(
    h: Handle,
    ctx: *mut Handle,
    green: *mut Handle,
) -> CUresult {
    call_in_context(|| {
        check(h)?;
        if !green.is_null() {
            put(green, std::ptr::null_mut())?;
        }
        put(ctx, super::context::current()?)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamSynchronize(h: Handle) -> CUresult {
    call_in_context(|| check(h))
}

/// Every stream is idle: its work finished when it was issued.
#[unsafe(no_mangle)]
pub extern "C" fn cuStreamQuery(h: Handle) -> CUresult {
    call_in_context(|| check(h))
}

/// No stream is ever capturing: capture into CUDA graphs is not supported.
///
/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamIsCapturing(h: Handle, status: *mut c_int) -> CUresult {
    const CU_STREAM_CAPTURE_STATUS_NONE: c_int = 0;
    call_in_context(|| {
        check(h)?;
        put(status, CU_STREAM_CAPTURE_STATUS_NONE)
    })
}

/// CUDA graphs (stream capture) are not supported: the work would run as it is issued.
#[unsafe(no_mangle)]
pub extern "C" fn cuStreamBeginCapture(h: Handle) -> CUresult {
    call_in_context(|| {
        check(h)?;
        Err(CUDA_ERROR_NOT_SUPPORTED)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamBeginCapture_v2(h: Handle, _mode: c_int) -> CUresult {
    cuStreamBeginCapture(h)
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamDestroy_v2(h: Handle) -> CUresult {
    call_in_context(|| {
        STREAMS
            .remove(h)
            .map(|_| ())
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamWaitEvent(h: Handle, event: Handle, _flags: c_uint) -> CUresult {
    call_in_context(|| {
        check(h)?;
        EVENTS.with(event, |_| ())
    })
}

/// `CUstreamCallback`.
pub type StreamCallback = unsafe extern "C" fn(Handle, CUresult, *mut c_void);
/// `CUhostFn`.
pub type HostFn = unsafe extern "C" fn(*mut c_void);

/// Runs `callback` now: the stream's earlier work is done.
///
/// # Safety
/// `callback` must be callable with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamAddCallback(
    h: Handle,
    callback: Option<StreamCallback>,
    user_data: *mut c_void,
    flags: c_uint,
) -> CUresult {
    call_in_context(|| {
        check(h)?;
        let callback = callback.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's callback, with its own data.
        unsafe { callback(h, CUDA_SUCCESS, user_data) };
        Ok(())
    })
}

/// Runs `f` now: the stream's earlier work is done.
///
/// # Safety
/// `f` must be callable with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchHostFunc(
    h: Handle,
    f: Option<HostFn>,
    user_data: *mut c_void,
) -> CUresult {
    call_in_context(|| {
        check(h)?;
        let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: the caller's function, with its own data.
        unsafe { f(user_data) };
        Ok(())
    })
}

/// [`cuLaunchHostFunc`] with a synchronization mode (the function runs at once either way).
///
/// # Safety
/// As [`cuLaunchHostFunc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchHostFunc_v2(
    h: Handle,
    f: Option<HostFn>,
    user_data: *mut c_void,
    _sync_mode: c_uint,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuLaunchHostFunc(h, f, user_data) }
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(event: *mut Handle, flags: c_uint) -> CUresult {
    call_in_context(|| {
        // DEFAULT, BLOCKING_SYNC (1), DISABLE_TIMING (2), INTERPROCESS (4).
        if flags & !7 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(
            event,
            EVENTS.insert(Event {
                flags,
                recorded: None,
            }),
        )
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventRecord(event: Handle, h: Handle) -> CUresult {
    call_in_context(|| {
        check(h)?;
        EVENTS.with(event, |e| e.recorded = Some(Instant::now()))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventRecordWithFlags(event: Handle, h: Handle, _flags: c_uint) -> CUresult {
    cuEventRecord(event, h)
}

/// The work an event follows is always done.
#[unsafe(no_mangle)]
pub extern "C" fn cuEventQuery(event: Handle) -> CUresult {
    call_in_context(|| EVENTS.with(event, |_| ()))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventSynchronize(event: Handle) -> CUresult {
    call_in_context(|| EVENTS.with(event, |_| ()))
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut c_float,
    start: Handle,
    end: Handle,
) -> CUresult {
    call_in_context(|| {
        let time = |h| {
            EVENTS.with(h, |e| match e.flags & CU_EVENT_DISABLE_TIMING {
                0 => Ok(e.recorded),
                _ => Err(CUDA_ERROR_INVALID_HANDLE),
            })?
        };
        match (time(start)?, time(end)?) {
            (Some(a), Some(b)) => {
                let d = if b >= a {
                    (b - a).as_secs_f64()
                } else {
                    -(a - b).as_secs_f64()
                };
                put(ms, (d * 1e3) as c_float)
            }
            _ => Err(CUDA_ERROR_NOT_READY),
        }
    })
}

/// # Safety
/// As [`cuEventElapsedTime`] (the same call, under CUDA 12.8's name).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime_v2(
    ms: *mut c_float,
    start: Handle,
    end: Handle,
) -> CUresult {
    // SAFETY: passed on.
    unsafe { cuEventElapsedTime(ms, start, end) }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventDestroy_v2(event: Handle) -> CUresult {
    call_in_context(|| {
        EVENTS
            .remove(event)
            .map(|_| ())
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}
