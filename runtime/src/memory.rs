//! Device memory: buffers whose device address is the address of their host storage, so
//! compiled kernels dereference 64-bit pointers directly.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

use crate::RuntimeError;

/// Alignment of every allocation (as `cudaMalloc` guarantees at least 256 bytes).
const ALIGN: usize = 256;

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
    /// A zero-filled buffer of `len` bytes.
    pub fn zeroed(len: usize) -> Result<DeviceBuffer, RuntimeError> {
        let layout = Layout::from_size_align(len.max(1), ALIGN)
            .map_err(|_| RuntimeError::OutOfMemory(len))?;
        // SAFETY: the layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(RuntimeError::OutOfMemory(len))?;
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
        let bytes = std::mem::size_of_val(data);
        if bytes > self.len {
            return Err(RuntimeError::InvalidConfig(format!(
                "copy of {bytes} bytes into a buffer of {} bytes",
                self.len
            )));
        }
        // SAFETY: bounds checked above.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr() as *const u8, self.ptr.as_ptr(), bytes)
        };
        Ok(())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(1), ALIGN)
            .expect("layout was valid at allocation");
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout) };
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
        assert_eq!(b.address() % ALIGN as u64, 0);
        assert_eq!(b.to_vec::<u16>(), vec![1, 2, 3]);
        b.copy_from(&[9u8]).unwrap();
        assert_eq!(b.to_bytes()[0], 9);
        assert!(b.copy_from(&[0u64; 2]).is_err());
    }

    #[test]
    fn zero_sized_buffer_is_fine() {
        let b = DeviceBuffer::zeroed(0).unwrap();
        assert!(b.is_empty());
        assert!(b.to_vec::<u32>().is_empty());
    }
}
