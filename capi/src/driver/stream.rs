//! Streams and events. Work completes before each call returns, so a stream orders nothing
//! and waiting is immediate; an event records the wall-clock time of `cuEventRecord`.

use std::ffi::{c_float, c_uint};
use std::time::Instant;

use super::*;

static STREAMS: Table<()> = Table::new();
static EVENTS: Table<Option<Instant>> = Table::new();

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut Handle, _flags: c_uint) -> CUresult {
    call_in_context(|| put(stream, STREAMS.insert(())))
}

/// The default stream (null) or a created one.
fn stream(h: Handle) -> Result<(), CUresult> {
    if h.is_null() {
        Ok(())
    } else {
        STREAMS.with(h, |_| ())
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamSynchronize(h: Handle) -> CUresult {
    call_in_context(|| stream(h))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamDestroy_v2(h: Handle) -> CUresult {
    call_in_context(|| STREAMS.remove(h).ok_or(CUDA_ERROR_INVALID_HANDLE))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamWaitEvent(h: Handle, event: Handle, _flags: c_uint) -> CUresult {
    call_in_context(|| {
        stream(h)?;
        EVENTS.with(event, |_| ())
    })
}

/// # Safety
/// The out-pointer must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(event: *mut Handle, _flags: c_uint) -> CUresult {
    call_in_context(|| put(event, EVENTS.insert(None)))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventRecord(event: Handle, h: Handle) -> CUresult {
    call_in_context(|| {
        stream(h)?;
        EVENTS.with(event, |t| *t = Some(Instant::now()))
    })
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
        let (a, b) = (EVENTS.with(start, |t| *t)?, EVENTS.with(end, |t| *t)?);
        match (a, b) {
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

#[unsafe(no_mangle)]
pub extern "C" fn cuEventDestroy_v2(event: Handle) -> CUresult {
    call_in_context(|| {
        EVENTS
            .remove(event)
            .map(|_| ())
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    })
}
