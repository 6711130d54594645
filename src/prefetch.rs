//! Software prefetch for a lane group's contiguous accesses inside loops (`lower::simd`).
//!
//! Why: a grid-stride loop makes each group jump by the grid's size from one iteration to
//! the next (128 KiB and more), a few cache lines at a time, and the next group of the
//! block touches the lines beside them only after all of this group's iterations. The
//! hardware's prefetchers do not follow that far, so every iteration waits for memory. The
//! group code remembers where each access site went last and, before accessing, prefetches
//! its range eight steps of that distance ahead ([`DISTANCE_SHIFT`]): where a GPU's many
//! warps in flight would have been. Cranelift has no prefetch instruction, so the JIT code calls
//! [`SYMBOL`], written in assembly to change no register and declared `preserve_all`: the
//! call site keeps its values in registers.
//!
//! A prefetch never faults, so an address from a stale or meaningless distance (the first
//! iteration, a group that starts after another) costs one useless request, nothing more.

/// How many of the last distance ahead a site prefetches (a power of two: a shift). Eight
/// since the axpy's loads went to the helper directly (`lower::lanes::forward`): a step
/// took less time, and four steps no longer covered memory's latency (the bench's
/// grid-stride axpy 43–44 → 39–40 GB/s with four, 46 with eight, 38–42 with sixteen).
pub const DISTANCE_SHIFT: i64 = 3;

/// The least distance a site prefetches for: the hardware's own prefetchers follow steps
/// within a 4 KiB page (a group after the group beside it, one element a thread).
pub const FAR: i64 = 4096;

/// The helper: prefetches the cache lines of `[rdi, rdi + rsi)` (`rsi` > 0) into every
/// level; preserves every register.
pub const SYMBOL: &str = "ptxjit_prefetch";

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".globl ptxjit_prefetch_lines",
    ".p2align 4",
    "ptxjit_prefetch_lines:",
    "    push rdi",
    "    push rsi",
    "2:",
    "    prefetcht0 [rdi]",
    "    add rdi, 64",
    "    sub rsi, 64",
    "    jg 2b",
    "    pop rsi",
    "    pop rdi",
    "    ret",
);

#[cfg(target_arch = "x86_64")]
unsafe extern "C" {
    fn ptxjit_prefetch_lines();
}

/// The helper's address, where this target has one.
pub fn address() -> Option<*const u8> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(ptxjit_prefetch_lines as *const u8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    /// The JIT code keeps its values in registers across the call (`preserve_all`): the
    /// helper must give every register back as it found it, its arguments included.
    #[test]
    fn the_helper_changes_no_register() {
        let data = [0u8; 4096];
        let (mut rdi, mut rsi) = (data.as_ptr() as u64 + 100, 1000u64);
        let (mut rax, mut rcx, mut rdx, mut r8, mut r11) = (1u64, 2u64, 3u64, 4u64, 5u64);
        // SAFETY: the helper reads no memory (a prefetch is a hint) and keeps the stack
        // balanced; every register it could touch is an operand here.
        unsafe {
            std::arch::asm!(
                "call {f}",
                f = sym super::ptxjit_prefetch_lines,
                inout("rdi") rdi,
                inout("rsi") rsi,
                inout("rax") rax,
                inout("rcx") rcx,
                inout("rdx") rdx,
                inout("r8") r8,
                inout("r11") r11,
            );
        }
        assert_eq!((rdi, rsi), (data.as_ptr() as u64 + 100, 1000));
        assert_eq!((rax, rcx, rdx, r8, r11), (1, 2, 3, 4, 5));
    }
}
