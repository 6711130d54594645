//! Tensor maps: `cuTensorMapEncodeTiled` and `cuTensorMapReplaceAddress` write ptxjit's
//! 128-byte encoding (`ptxjit::tensor_map`), which `cp.async.bulk.tensor` reads; a map that
//! breaks the driver's rules is `CUDA_ERROR_INVALID_VALUE`, one ptxjit cannot run (swizzle
//! atomicity, packed types) `CUDA_ERROR_NOT_SUPPORTED`.

use std::ffi::{c_int, c_void};

use ptxjit::tensor_map::{ALIGN, ElemType, MAX_RANK, MapError, SIZE, TensorMap};

use super::errors::*;
use super::{CUresult, call, debug};

fn refused(e: MapError) -> CUresult {
    debug(&format!("cuTensorMapEncodeTiled: {e}"));
    if e.is_unsupported() {
        CUDA_ERROR_NOT_SUPPORTED
    } else {
        CUDA_ERROR_INVALID_VALUE
    }
}

fn invalid(why: &str) -> CUresult {
    debug(&format!("cuTensorMapEncodeTiled: {why}"));
    CUDA_ERROR_INVALID_VALUE
}

/// The map object's 128 bytes, if `p` may hold one (non-null, 64-byte aligned).
///
/// # Safety
/// A non-null `p` must point to 128 writable bytes.
unsafe fn map_bytes<'a>(p: *mut c_void) -> Result<&'a mut [u8; SIZE], CUresult> {
    if p.is_null() || !(p as u64).is_multiple_of(ALIGN) {
        return Err(invalid("the tensor map is null or not 64-byte aligned"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { &mut *(p as *mut [u8; SIZE]) })
}

/// # Safety
/// The arrays must hold `tensorRank` elements (`globalStrides` one fewer); `tensorMap` must
/// point to 128 writable bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuTensorMapEncodeTiled(
    tensor_map: *mut c_void,
    data_type: c_int,
    rank: u32,
    global_address: *mut c_void,
    global_dim: *const u64,
    global_strides: *const u64,
    box_dim: *const u32,
    element_strides: *const u32,
    interleave: c_int,
    swizzle: c_int,
    l2_promotion: c_int,
    oob_fill: c_int,
) -> CUresult {
    call(|| {
        // SAFETY: the caller's contract.
        let out = unsafe { map_bytes(tensor_map) }?;
        let rank = rank as usize;
        if !(1..=MAX_RANK).contains(&rank) {
            return Err(invalid("the rank is not 1 to 5"));
        }
        let elem = u32::try_from(data_type)
            .ok()
            .and_then(ElemType::from_driver)
            .ok_or_else(|| invalid("unknown or packed data type"))?;
        if global_dim.is_null()
            || box_dim.is_null()
            || element_strides.is_null()
            || (rank > 1 && global_strides.is_null())
        {
            return Err(invalid("a null array"));
        }
        // SAFETY: the caller's contract: `rank` elements each (strides one fewer).
        let (dims, boxes, steps) = unsafe {
            (
                std::slice::from_raw_parts(global_dim, rank),
                std::slice::from_raw_parts(box_dim, rank),
                std::slice::from_raw_parts(element_strides, rank),
            )
        };
        let mut map = TensorMap::tiled(global_address as u64, elem, dims, boxes);
        map.element_strides[..rank].copy_from_slice(steps);
        if rank > 1 {
            // SAFETY: as above.
            let strides = unsafe { std::slice::from_raw_parts(global_strides, rank - 1) };
            map.strides[..rank - 1].copy_from_slice(strides);
        }
        map.interleave = u8::try_from(interleave).map_err(|_| invalid("unknown interleave"))?;
        // The driver's swizzles 4 to 6 are the 128B swizzle with 32B/64B atomicity.
        (map.swizzle, map.swizzle_atomicity) = match swizzle {
            0..=3 => (swizzle as u8, 0),
            4..=6 => (3, (swizzle - 3) as u8),
            _ => return Err(invalid("unknown swizzle")),
        };
        map.l2_promotion = match l2_promotion {
            0..=3 => l2_promotion as u8,
            _ => return Err(invalid("unknown L2 promotion")),
        };
        map.nan_fill = match oob_fill {
            0 | 1 => oob_fill == 1,
            _ => return Err(invalid("unknown OOB fill")),
        };
        map.check().map_err(refused)?;
        *out = map.encode();
        Ok(())
    })
}

/// # Safety
/// `tensorMap` must point to a map `cuTensorMapEncodeTiled` wrote.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuTensorMapReplaceAddress(
    tensor_map: *mut c_void,
    global_address: *mut c_void,
) -> CUresult {
    call(|| {
        // SAFETY: the caller's contract.
        let bytes = unsafe { map_bytes(tensor_map) }?;
        let mut map = TensorMap::decode(bytes).map_err(refused)?;
        map.address = global_address as u64;
        map.check().map_err(refused)?;
        *bytes = map.encode();
        Ok(())
    })
}
