//! `cp.async.bulk.tensor` in tile mode: the box a tensor map describes, moved between global
//! memory and a block's shared memory.
//!
//! The box starts at the instruction's coordinates and takes, in each dimension d,
//! ceil(box[d] / traversal stride[d]) elements, every stride-th one. In shared memory it is
//! packed, dimension 0 fastest, from the destination address; then the swizzle permutes
//! 16-byte chunks by the shared address's bits (`crate::swizzle`). Elements outside the
//! tensor (a coordinate below 0 or past its dimension) are filled with zeros or the OOB-NaN
//! when loading, and not written when storing. Every byte is confined as the compiled code
//! confines its own accesses.

use crate::swizzle::swizzle;
use crate::tensor_map::{MapError, Rule, TensorMap};

/// What the compiled code passes to [`run`] (`repr(C)`: it writes the inputs at these offsets
/// and reads the outputs back).
#[repr(C)]
#[derive(Default)]
pub struct Request {
    /// Host address of the tensor map (its 128 bytes already checked readable).
    pub map: u64,
    /// Host address of the block's shared memory, and its length.
    pub shared: u64,
    pub shared_len: u64,
    /// The box's address in the shared window.
    pub offset: u64,
    pub coords: [i32; 5],
    /// The instruction's `.dim`.
    pub dims: u32,
    /// 0: global to shared; 1: shared to global.
    pub store: u32,
    /// Out: the bytes of the box (the complete-tx count of a load).
    pub bytes: u64,
    /// Out, on failure: the faulting address and `Fault::detail` (thread 0), or a map error's
    /// words ([`MapError::to_words`]).
    pub fault_address: u64,
    pub fault_detail: u64,
}

/// Why a copy stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFault {
    Map(MapError),
    /// An access outside its memory (`shared`: `address` is an offset in the shared window).
    Outside {
        address: u64,
        width: u32,
        is_store: bool,
        shared: bool,
    },
    /// The shared-memory box is not 16-byte aligned.
    Misaligned(u64),
}

/// Where the copy's global memory may be: the compiled code's own test.
pub type InDevice<'a> = &'a dyn Fn(u64, u64) -> bool;

/// Moves the box at `coords` between global memory and the shared window `[shared, shared +
/// shared_len)` whose box starts at window address `offset`; returns the box's bytes.
///
/// # Safety
/// `shared` must point to `shared_len` writable bytes, and every global range `in_device`
/// accepts must be readable and writable.
pub unsafe fn copy(
    map: &TensorMap,
    coords: &[i32],
    shared: *mut u8,
    shared_len: u64,
    offset: u64,
    store: bool,
    in_device: InDevice,
) -> Result<u64, CopyFault> {
    if coords.len() != map.rank {
        return Err(CopyFault::Map(MapError {
            rule: Rule::InstructionDims,
            dim: coords.len() as u8,
            value: map.rank as u64,
        }));
    }
    if !offset.is_multiple_of(16) {
        return Err(CopyFault::Misaligned(offset));
    }
    let size = map.elem.size();
    let span = map.swizzle_span();
    let n: [u64; 5] = std::array::from_fn(|d| map.box_count(d));
    let fill = if map.nan_fill { map.elem.oob_nan() } else { 0 };
    let mut linear = 0u64;
    for outer in 0..n[1] * n[2] * n[3] * n[4] {
        // The global coordinates of dimensions 1..5 for this row of the box.
        let mut rest = outer;
        let mut row = Some(map.address);
        for d in 1..5 {
            let i = rest % n[d];
            rest /= n[d];
            if d >= map.rank {
                continue;
            }
            let c = coords[d] as i64 + (i * map.traversal_stride(d)) as i64;
            row = row
                .filter(|_| c >= 0 && (c as u64) < map.dims[d])
                .map(|r| r.wrapping_add((c as u64).wrapping_mul(map.strides[d - 1])));
        }
        for i in 0..n[0] {
            let c = coords[0] as i64 + (i * map.traversal_stride(0)) as i64;
            let global = row
                .filter(|_| c >= 0 && (c as u64) < map.dims[0])
                .map(|r| r.wrapping_add(c as u64 * size));
            let at = swizzle(offset + linear, span, 0);
            linear += size;
            if at.checked_add(size).is_none_or(|end| end > shared_len) {
                return Err(CopyFault::Outside {
                    address: at,
                    width: size as u32,
                    is_store: !store,
                    shared: true,
                });
            }
            // SAFETY: `at + size` is within the shared window (checked above).
            let smem = unsafe { shared.add(at as usize) };
            match global {
                Some(g) if !in_device(g, size) => {
                    return Err(CopyFault::Outside {
                        address: g,
                        width: size as u32,
                        is_store: store,
                        shared: false,
                    });
                }
                // SAFETY: both ranges were checked; they may not overlap (different memories).
                Some(g) if store => unsafe {
                    std::ptr::copy_nonoverlapping(smem, g as *mut u8, size as usize)
                },
                Some(g) => unsafe {
                    std::ptr::copy_nonoverlapping(g as *const u8, smem, size as usize)
                },
                None if store => {}
                // SAFETY: within the shared window.
                None => unsafe {
                    std::ptr::copy_nonoverlapping(fill.to_le_bytes().as_ptr(), smem, size as usize)
                },
            }
        }
    }
    Ok(linear)
}

/// The compiled code's entry: decodes the map and copies; returns 0 or the status kind that
/// ends the launch (the fault words filled in).
///
/// # Safety
/// `req` must be a valid [`Request`] whose map and shared pointers are as it says.
pub unsafe fn run(req: &mut Request) -> u32 {
    use ptxjit_runtime::{Fault, Status};
    // SAFETY: the compiled code checked the map's 128 bytes.
    let bytes = unsafe { &*(req.map as *const [u8; crate::tensor_map::SIZE]) };
    let arena = ptxjit_runtime::arena();
    let result = TensorMap::decode(bytes)
        .map_err(CopyFault::Map)
        .and_then(|map| {
            let dims = (req.dims as usize).min(5);
            // SAFETY: passed on from the caller.
            unsafe {
                copy(
                    &map,
                    &req.coords[..dims],
                    req.shared as *mut u8,
                    req.shared_len,
                    req.offset,
                    req.store != 0,
                    &|a, n| arena.contains(a, n),
                )
            }
        });
    match result {
        Ok(n) => {
            req.bytes = n;
            0
        }
        Err(CopyFault::Map(e)) => {
            (req.fault_address, req.fault_detail) = e.to_words();
            crate::sync::status::TENSOR_MAP
        }
        Err(CopyFault::Misaligned(offset)) => {
            req.fault_address = offset;
            req.fault_detail = Fault::detail(16, req.store == 0, true, 0);
            Status::MISALIGNED
        }
        Err(CopyFault::Outside {
            address,
            width,
            is_store,
            shared,
        }) => {
            req.fault_address = address;
            req.fault_detail = Fault::detail(width, is_store, shared, 0);
            Status::ILLEGAL_ADDRESS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor_map::ElemType;

    /// A 2-d u16 tensor whose element (x, y) holds y * 256 + x, and a map of it.
    fn tensor(w: u64, h: u64, box_dims: &[u32]) -> (Vec<u16>, TensorMap) {
        let data: Vec<u16> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (y * 256 + x) as u16))
            .collect();
        let map = TensorMap::tiled(data.as_ptr() as u64, ElemType::U16, &[w, h], box_dims);
        (data, map)
    }

    fn load(map: &TensorMap, coords: &[i32], smem: &mut [u16]) -> Result<u64, CopyFault> {
        let len = (smem.len() * 2) as u64;
        let any = |_, _| true;
        unsafe {
            copy(
                map,
                coords,
                smem.as_mut_ptr() as *mut u8,
                len,
                0,
                false,
                &any,
            )
        }
    }

    #[test]
    fn a_box_is_packed_dimension_0_fastest() {
        let (_data, map) = tensor(32, 8, &[8, 2]);
        let mut smem = vec![0u16; 16];
        assert_eq!(load(&map, &[8, 3], &mut smem), Ok(32));
        let want: Vec<u16> = (3..5)
            .flat_map(|y| (8..16).map(move |x| y * 256 + x))
            .collect();
        assert_eq!(smem, want);
    }

    #[test]
    fn elements_outside_the_tensor_are_zero_filled() {
        let (_data, map) = tensor(16, 4, &[8, 2]);
        let mut smem = vec![9u16; 16];
        load(&map, &[-4, 3], &mut smem).unwrap();
        // Row y = 3: x = -4..4, of which 0..4 exist; row y = 4 is past the tensor.
        assert_eq!(&smem[..8], &[0, 0, 0, 0, 768, 769, 770, 771]);
        assert_eq!(&smem[8..], &[0; 8]);
    }

    #[test]
    fn oob_nan_fill_writes_the_nan() {
        let data = [0u16; 64];
        let mut map = TensorMap::tiled(data.as_ptr() as u64, ElemType::F16, &[64], &[16]);
        map.nan_fill = true;
        let mut smem = vec![0u16; 16];
        load(&map, &[56], &mut smem).unwrap();
        assert_eq!(&smem[8..], &[0x7FFF; 8]);
        assert_eq!(&smem[..8], &[0; 8]);
    }

    #[test]
    fn swizzle_128b_xors_the_chunk_with_the_row() {
        // 64 u16 = 128-byte rows: row r's 16-byte chunk c lands at chunk c ^ (r % 8).
        let (_data, mut map) = tensor(64, 8, &[64, 8]);
        map.swizzle = 3;
        let mut smem = vec![0u16; 512];
        load(&map, &[0, 0], &mut smem).unwrap();
        for r in 0..8usize {
            for c in 0..8usize {
                let at = r * 64 + (c ^ r) * 8;
                assert_eq!(smem[at], (r * 256 + c * 8) as u16, "row {r} chunk {c}");
            }
        }
    }

    #[test]
    fn traversal_strides_take_every_nth_element() {
        let data: Vec<u32> = (0..64 * 8).collect();
        let mut map = TensorMap::tiled(data.as_ptr() as u64, ElemType::U32, &[64, 8], &[4, 6]);
        map.element_strides = [1, 3, 1, 1, 1];
        let mut smem = vec![0u32; 8];
        let len = 32;
        let any = |_, _| true;
        unsafe {
            copy(
                &map,
                &[0, 1],
                smem.as_mut_ptr() as *mut u8,
                len,
                0,
                false,
                &any,
            )
        }
        .unwrap();
        assert_eq!(smem, [64, 65, 66, 67, 256, 257, 258, 259]);
    }

    #[test]
    fn a_store_writes_only_elements_inside_the_tensor() {
        let (mut data, map) = tensor(16, 2, &[8, 2]);
        let smem: Vec<u16> = (1000..1016).collect();
        let any = |_, _| true;
        let stored = unsafe { copy(&map, &[12, 1], smem.as_ptr() as *mut u8, 32, 0, true, &any) };
        assert_eq!(stored, Ok(32));
        data.truncate(32);
        assert_eq!(&data[28..32], &[1000, 1001, 1002, 1003]);
        assert_eq!(&data[..16], &(0..16).collect::<Vec<u16>>()[..]);
    }

    #[test]
    fn a_box_past_shared_memory_is_an_illegal_address() {
        let (_data, map) = tensor(32, 8, &[8, 2]);
        let mut smem = vec![0u16; 8];
        assert!(matches!(
            load(&map, &[0, 0], &mut smem),
            Err(CopyFault::Outside {
                shared: true,
                address: 16,
                ..
            })
        ));
    }

    #[test]
    fn global_memory_outside_the_device_is_an_illegal_address() {
        let (_data, map) = tensor(32, 8, &[8, 2]);
        let mut smem = vec![0u16; 16];
        let none = |_, _| false;
        let r = unsafe {
            copy(
                &map,
                &[0, 0],
                smem.as_mut_ptr() as *mut u8,
                32,
                0,
                false,
                &none,
            )
        };
        assert!(matches!(r, Err(CopyFault::Outside { shared: false, .. })));
    }

    #[test]
    fn the_instruction_dims_match_the_map_rank() {
        let (_data, map) = tensor(32, 8, &[8, 2]);
        let mut smem = vec![0u16; 16];
        let e = load(&map, &[0], &mut smem).unwrap_err();
        assert!(matches!(
            e,
            CopyFault::Map(MapError {
                rule: Rule::InstructionDims,
                ..
            })
        ));
    }
}
