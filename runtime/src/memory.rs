//! Device memory: buffers carved out of one reserved address range, the *arena*, whose
//! device address is the address of their host storage, so compiled kernels dereference
//! 64-bit pointers directly.
//!
//! Why an arena: compiled code checks every global or generic access against it (`arena()`:
//! its base, size and slot table are constants of the generated code). Each 64 KiB slot of the
//! arena has an entry in the table: the end (offset in the arena) of the allocation that owns
//! the slot, 0 if none. An access of `w` bytes at offset `o` is valid iff
//! `o + w <= table[o >> 16]`: two instructions and one load, byte-precise at allocation ends,
//! and a freed buffer's slots read 0 at once (a use after free is an illegal address).

use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::RuntimeError;

/// Alignment of every allocation: one slot (`cudaMalloc` guarantees at least 256 bytes).
pub const SLOT_SHIFT: u32 = 16;
const SLOT: u64 = 1 << SLOT_SHIFT;

/// `len` rounded up to whole slots: the bytes an allocation of `len` owns anyway, which the
/// driver API and module data let kernels touch, as a GPU does not fault inside a mapped
/// page past a small allocation's end (`None` past the address space).
pub fn granule(len: usize) -> Option<usize> {
    len.max(1).checked_next_multiple_of(SLOT as usize)
}

/// The reserved range and its slot table.
pub struct Arena {
    /// Address of the first byte.
    pub base: u64,
    pub size: u64,
    /// One `u64` per slot: the end offset of the allocation owning it, or 0.
    pub table: u64,
    /// Free ranges of slots (first slot → number of slots), and where the next search starts.
    free: Mutex<(BTreeMap<u64, u64>, u64)>,
}

/// Maps `len` bytes of zero-filled, lazily committed memory.
fn map(len: u64) -> Option<u64> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choice; nothing
    // else refers to it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as u64)
}

/// The process's arena, reserved on first use: 64 GiB of address space if the system gives
/// it (less otherwise); pages cost memory only once touched.
pub fn arena() -> &'static Arena {
    static ARENA: OnceLock<Arena> = OnceLock::new();
    ARENA.get_or_init(|| {
        let mut size = 64u64 << 30;
        loop {
            if let Some(arena) = Arena::new(size) {
                return arena;
            }
            assert!(
                size > 64 << 20,
                "cannot reserve address space for device memory"
            );
            size /= 2;
        }
    })
}

impl Arena {
    /// Reserves `size` bytes (a multiple of the slot size) and their slot table.
    fn new(size: u64) -> Option<Arena> {
        let slots = size >> SLOT_SHIFT;
        let base = map(size)?;
        let Some(table) = map(slots * 8) else {
            // SAFETY: unmapping what was just mapped.
            unsafe { libc::munmap(base as *mut libc::c_void, size as usize) };
            return None;
        };
        // The last slot is never allocated: an offset past the arena, clamped to its last
        // byte, then finds no allocation (see `contains`).
        Some(Arena {
            base,
            size,
            table,
            free: Mutex::new((BTreeMap::from([(0, slots - 1)]), 0)),
        })
    }

    fn entry(&self, slot: u64) -> &AtomicU64 {
        // SAFETY: `slot` is below the slot count; the table is mapped for the process's
        // lifetime and only accessed atomically.
        unsafe { &*((self.table + slot * 8) as *const AtomicU64) }
    }

    /// Whether `len` bytes at `address` lie inside one live allocation: the compiled code's
    /// test. An offset beyond the arena is clamped to its last byte, whose slot is never
    /// allocated (its entry stays 0), so no branch is needed for it.
    pub fn contains(&self, address: u64, len: u64) -> bool {
        let off = address.wrapping_sub(self.base).min(self.size - 1);
        // A length past the address space (a C caller's `(size_t)-1`) must not wrap.
        off.checked_add(len)
            .is_some_and(|end| end <= self.entry(off >> SLOT_SHIFT).load(Ordering::Relaxed))
    }

    /// Next fit: the search goes on from the last allocation, so a freed buffer's addresses
    /// stay invalid (a use after free stays an illegal address) until the arena wraps around.
    fn allocate(&self, len: usize) -> Option<u64> {
        let slots = (len as u64).div_ceil(SLOT).max(1);
        let mut guard = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let (free, cursor) = &mut *guard;
        // A free range [start, start + n) can serve slots from `at` on.
        let fits = |at: u64| {
            move |(&start, &n): (&u64, &u64)| {
                let from = at.max(start);
                (start + n >= from + slots).then_some((start, n, from))
            }
        };
        let (start, count, first) = free
            .range(..=*cursor)
            .next_back()
            .and_then(fits(*cursor))
            .or_else(|| free.range(*cursor..).find_map(fits(*cursor)))
            .or_else(|| free.iter().find_map(fits(0)))?;
        free.remove(&start);
        if first > start {
            free.insert(start, first - start);
        }
        if start + count > first + slots {
            free.insert(first + slots, start + count - first - slots);
        }
        *cursor = first + slots;
        drop(guard);
        let end = (first << SLOT_SHIFT) + len as u64;
        for s in first..first + slots {
            self.entry(s).store(end, Ordering::Release);
        }
        Some(self.base + (first << SLOT_SHIFT))
    }

    fn release(&self, address: u64, len: usize) {
        let first = (address - self.base) >> SLOT_SHIFT;
        let slots = (len as u64).div_ceil(SLOT).max(1);
        for s in first..first + slots {
            self.entry(s).store(0, Ordering::Release);
        }
        // Give the pages back; they read as zero when the slots are reused.
        // SAFETY: the range belongs to this (dropped) buffer, inside the arena's mapping.
        unsafe {
            libc::madvise(
                address as *mut libc::c_void,
                (slots << SLOT_SHIFT) as usize,
                libc::MADV_DONTNEED,
            )
        };
        let mut guard = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let free = &mut guard.0;
        let mut start = first;
        let mut count = slots;
        // Merge with the free ranges on either side.
        if let Some((&prev, &n)) = free.range(..first).next_back()
            && prev + n == first
        {
            free.remove(&prev);
            start = prev;
            count += n;
        }
        if let Some(n) = free.remove(&(first + slots)) {
            count += n;
        }
        free.insert(start, count);
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: both mappings were made by `Arena::new` and are not used any more.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.size as usize);
            libc::munmap(
                self.table as *mut libc::c_void,
                ((self.size >> SLOT_SHIFT) * 8) as usize,
            );
        }
    }
}

/// A block of device memory. Kernels reach it through its [`address`](Self::address); the host
/// copies in and out like `cudaMemcpy`. Copies do not synchronize with a running launch: as on
/// CUDA, reading a buffer while a kernel writes it gives unspecified contents.
pub struct DeviceBuffer {
    ptr: NonNull<u8>,
    len: usize,
}

// The buffer owns its bytes; all access goes through raw copies.
unsafe impl Send for DeviceBuffer {}
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// A zero-filled buffer of `len` bytes, 64 KiB-aligned in the arena.
    pub fn zeroed(len: usize) -> Result<DeviceBuffer, RuntimeError> {
        let address = arena()
            .allocate(len)
            .ok_or(RuntimeError::OutOfMemory(len))?;
        let ptr = NonNull::new(address as *mut u8).ok_or(RuntimeError::OutOfMemory(len))?;
        Ok(DeviceBuffer { ptr, len })
    }

    /// A buffer holding a copy of `data` (any plain-old-data element type, e.g. `half::f16`).
    pub fn from_slice<T: Copy>(data: &[T]) -> Result<DeviceBuffer, RuntimeError> {
        let bytes = std::mem::size_of_val(data);
        let buf = DeviceBuffer::zeroed(bytes)?;
        // SAFETY: `buf` has `bytes` bytes; the source is a valid slice of that many bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr() as *const u8, buf.ptr.as_ptr(), bytes)
        };
        Ok(buf)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address a kernel uses for this buffer.
    pub fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// Copies the contents out as elements of `T` (trailing bytes that do not fill a `T` are
    /// dropped). `T` must be plain old data: every bit pattern valid.
    pub fn to_vec<T: Copy + Default>(&self) -> Vec<T> {
        let n = self.len / std::mem::size_of::<T>().max(1);
        let mut out = vec![T::default(); n];
        // SAFETY: `out` has room for n*size_of::<T>() <= len bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr(),
                out.as_mut_ptr() as *mut u8,
                n * std::mem::size_of::<T>(),
            )
        };
        out
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_vec::<u8>()
    }

    /// Overwrites the start of the buffer with `data`; fails if it does not fit.
    pub fn copy_from<T: Copy>(&self, data: &[T]) -> Result<(), RuntimeError> {
        self.write_at(0, data)
    }

    /// Overwrites the bytes from `offset` on with `data`; fails if it does not fit.
    pub fn write_at<T: Copy>(&self, offset: usize, data: &[T]) -> Result<(), RuntimeError> {
        let bytes = std::mem::size_of_val(data);
        if offset.checked_add(bytes).is_none_or(|end| end > self.len) {
            return Err(RuntimeError::InvalidConfig(format!(
                "copy of {bytes} bytes at offset {offset} into a buffer of {} bytes",
                self.len
            )));
        }
        // SAFETY: bounds checked above.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr() as *const u8,
                self.ptr.as_ptr().add(offset),
                bytes,
            )
        };
        Ok(())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        arena().release(self.address(), self.len);
    }
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBuffer {{ address: {:#x}, len: {} }}",
            self.address(),
            self.len
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_alignment() {
        let b = DeviceBuffer::from_slice(&[1u16, 2, 3]).unwrap();
        assert_eq!(b.len(), 6);
        assert_eq!(b.address() % 256, 0);
        assert_eq!(b.to_vec::<u16>(), vec![1, 2, 3]);
        b.copy_from(&[9u8]).unwrap();
        assert_eq!(b.to_bytes()[0], 9);
        assert!(b.copy_from(&[0u64; 2]).is_err());
    }

    #[test]
    fn the_arena_knows_live_buffers_to_the_byte_and_forgets_freed_ones() {
        let b = DeviceBuffer::zeroed(100).unwrap();
        let (a, arena) = (b.address(), arena());
        assert!(arena.contains(a, 100));
        assert!(arena.contains(a + 96, 4));
        assert!(!arena.contains(a + 97, 4));
        assert!(!arena.contains(a - 1, 1));
        drop(b);
        assert!(!arena.contains(a, 1));
        // Not handed out again at once.
        let c = DeviceBuffer::zeroed(100).unwrap();
        assert_ne!(c.address(), a);
    }

    #[test]
    fn a_length_that_would_wrap_the_address_space_is_outside() {
        let a = DeviceBuffer::zeroed(100).unwrap();
        let b = DeviceBuffer::zeroed(100).unwrap();
        let arena = arena();
        for (address, len) in [
            (b.address(), u64::MAX),
            (b.address() + 8, u64::MAX - 7),
            (a.address(), u64::MAX - a.address() + 1),
            (b.address(), 101),
        ] {
            assert!(!arena.contains(address, len), "{address:#x} + {len:#x}");
        }
        assert!(arena.contains(b.address(), 100));
    }

    #[test]
    fn freed_pages_read_as_zero_when_reused() {
        let arena = Arena::new(4 << 20).unwrap();
        let a = arena.allocate(100).unwrap();
        // SAFETY: 100 bytes at `a` belong to this allocation.
        unsafe { std::ptr::write_bytes(a as *mut u8, 7, 100) };
        arena.release(a, 100);
        // The whole (small) arena, so the freed slot is reused.
        let b = arena.allocate((4 << 20) - SLOT as usize).unwrap();
        assert_eq!(b, a);
        // SAFETY: inside the new allocation.
        assert_eq!(unsafe { *(b as *const u8) }, 0);
    }

    #[test]
    fn zero_sized_buffer_is_fine() {
        let b = DeviceBuffer::zeroed(0).unwrap();
        assert!(b.is_empty());
        assert!(b.to_vec::<u32>().is_empty());
    }
}
