//! The swizzle of shared-memory tiles, one function for the TMA that writes them
//! (`crate::tensor_copy`) and the `wgmma` that reads them (`crate::wgmma`), so that a tile
//! one writes the other reads back in place.
//!
//! With a span of 2^k × 16 bytes (32, 64 or 128), the 16-byte chunk index (address bits 4 to
//! 4 + k − 1) is XORed with the index of the span-sized row within the pattern (bits 7 to
//! 7 + k − 1): the CuTe `Swizzle<k, 4, 3>` the ISA's canonical layouts name. The pattern
//! repeats every 8 × span bytes; it starts on such a boundary unless a `wgmma` descriptor's
//! base offset says it starts `base` 128-byte rows later (ISA "Matrix Descriptor Format":
//! base offset = (pattern start >> 7) & 7).

/// The shared address of byte `address` of a tile swizzled with `span` (other spans than 32,
/// 64 and 128 leave it in place), the pattern starting at 128-byte row `base` (mod 8).
pub fn swizzle(address: u64, span: u64, base: u64) -> u64 {
    let bits = match span {
        32 => 1,
        64 => 2,
        128 => 3,
        _ => return address,
    };
    let mask = (1u64 << bits) - 1;
    let row = (address >> 7).wrapping_sub(base) & mask;
    address ^ (row << 4)
}

#[cfg(test)]
mod tests {
    use super::swizzle;

    #[test]
    fn swizzle_32b_and_64b_use_one_and_two_row_bits() {
        assert_eq!(swizzle(0x80, 32, 0), 0x90);
        assert_eq!(swizzle(0x100, 32, 0), 0x100);
        assert_eq!(swizzle(0x180, 64, 0), 0x1B0);
        assert_eq!(swizzle(0x200, 64, 0), 0x200);
        assert_eq!(swizzle(0x395, 128, 0), 0x3E5);
    }

    #[test]
    fn no_swizzle_leaves_the_address() {
        assert_eq!(swizzle(0x395, 0, 0), 0x395);
        assert_eq!(swizzle(0x395, 16, 5), 0x395);
    }

    #[test]
    fn a_base_offset_starts_the_pattern_rows_later() {
        // A 128B pattern starting at 0x180 (row 3): its first row is unpermuted.
        assert_eq!(swizzle(0x180 + 0x10, 128, 3), 0x190);
        // Its second row (0x200) swaps chunks as row 1 does.
        assert_eq!(swizzle(0x200, 128, 3), 0x210);
        assert_eq!(swizzle(0x200, 128, 0), 0x240);
    }
}
