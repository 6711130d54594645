//! Device `malloc` and `free`: CUDA's device heap, a region of device memory of a size fixed
//! before its first use (`cudaLimitMallocHeapSize`, 8 MiB unless set), from which kernels
//! allocate. It is one device allocation, made at the first `malloc`; blocks within it are
//! 16-byte aligned, first fit. `malloc` gives a null pointer when the heap has no room, as
//! CUDA's does; `free` of a pointer `malloc` did not give ends the launch.

use std::collections::BTreeMap;
use std::sync::Mutex;

use ptxjit_runtime::DeviceBuffer;

/// CUDA's default heap size.
pub const DEFAULT_LIMIT: u64 = 8 << 20;
const ALIGN: u64 = 16;

struct Heap {
    buffer: DeviceBuffer,
    /// Offsets of the live blocks → their lengths, and of the free ranges → theirs.
    live: BTreeMap<u64, u64>,
    free: BTreeMap<u64, u64>,
}

/// The heap's size, and the heap once made.
static HEAP: Mutex<(u64, Option<Heap>)> = Mutex::new((DEFAULT_LIMIT, None));

/// Sets the heap's size; refused (false) once a kernel has allocated from it, as CUDA
/// refuses it after a launch that used it.
pub fn set_limit(bytes: u64) -> bool {
    let mut heap = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    if heap.1.is_some() {
        return false;
    }
    heap.0 = bytes;
    true
}

pub fn limit() -> u64 {
    HEAP.lock().unwrap_or_else(|e| e.into_inner()).0
}

/// `malloc(size)`: the address of `size` fresh bytes, or 0.
pub fn malloc(size: u64) -> u64 {
    let mut guard = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let (limit, heap) = &mut *guard;
    if heap.is_none() {
        let Ok(buffer) = DeviceBuffer::zeroed(*limit as usize) else {
            return 0;
        };
        let free = BTreeMap::from([(0, buffer.len() as u64 / ALIGN * ALIGN)]);
        *heap = Some(Heap {
            buffer,
            live: BTreeMap::new(),
            free,
        });
    }
    let heap = heap.as_mut().expect("made above");
    let Some(len) = size.max(1).checked_next_multiple_of(ALIGN) else {
        return 0;
    };
    let Some((&start, &n)) = heap.free.iter().find(|&(_, &n)| n >= len) else {
        return 0;
    };
    heap.free.remove(&start);
    if n > len {
        heap.free.insert(start + len, n - len);
    }
    heap.live.insert(start, len);
    heap.buffer.address() + start
}

/// `free(ptr)`: gives the block back (a null pointer is nothing to free); `Err` when `ptr`
/// is no block `malloc` gave that is still live.
pub fn free(ptr: u64) -> Result<(), u64> {
    if ptr == 0 {
        return Ok(());
    }
    let mut guard = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let heap = guard.1.as_mut().ok_or(ptr)?;
    let start = ptr.wrapping_sub(heap.buffer.address());
    let mut len = heap.live.remove(&start).ok_or(ptr)?;
    let mut start = start;
    // Merge with the free ranges on either side.
    if let Some((&prev, &n)) = heap.free.range(..start).next_back()
        && prev + n == start
    {
        heap.free.remove(&prev);
        start = prev;
        len += n;
    }
    if let Some(n) = heap.free.remove(&(start + len)) {
        len += n;
    }
    heap.free.insert(start, len);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the heap is the process's.
    #[test]
    fn blocks_are_aligned_distinct_reused_after_free_and_bounded_by_the_limit() {
        let a = malloc(10);
        let b = malloc(1);
        assert_ne!(a, 0);
        assert_eq!((a % ALIGN, b - a), (0, 16), "16-byte blocks, first fit");
        assert!(ptxjit_runtime::arena().contains(a, 16));
        assert!(
            !set_limit(1 << 30),
            "the size is fixed once the heap is made"
        );
        assert_eq!(free(a + 1), Err(a + 1), "not a block");
        free(a).unwrap();
        assert_eq!(free(a), Err(a), "a block is freed once");
        assert_eq!(malloc(16), a, "its room is reused");
        assert_eq!(malloc(limit()), 0, "no room: a null pointer");
        free(0).unwrap();
    }
}
