//! `ld.shared`/`st.shared` in the group code where the lanes' offsets are not one range
//! (Triton's layout conversions shuffle `%tid.x`'s bits with `and`, `or` and `xor`): the
//! offsets stay vectors, every lane's element is checked at once, then each lane's element
//! is loaded or stored on its own, in lane order as the lanes would run, without spilling
//! the group's registers as running the access lane by lane does. A lane outside shared
//! memory or misaligned sends the whole access lane by lane (`v_access`), which names it.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

use super::super::data::bits_type;
use super::super::lanes::vector_of;
use super::super::{LResult, Translator};
use super::Wide;
use crate::frontend::ast::StateSpace;
use crate::frontend::checked::Arg;
use crate::types::PtxType;

impl Translator<'_, '_> {
    /// Each lane's shared offset, `base`'s value + `offset` (mod 2^32, as the one-thread
    /// code takes it), and whether every lane's `width` bytes lie in shared memory and are
    /// aligned (always, in a module without confinement).
    pub(super) fn v_scattered_offsets(
        &mut self,
        base: u32,
        offset: i64,
        width: u32,
    ) -> LResult<(Wide, Value)> {
        self.v_scattered_offsets_of(base, offset, width, &|_| true)
    }

    /// [`v_scattered_offsets`](Self::v_scattered_offsets) where only the lanes of the
    /// vectors (of four lanes each, lanes 0.. first) that `used` names give an address: the
    /// others are not checked.
    pub(super) fn v_scattered_offsets_of(
        &mut self,
        base: u32,
        offset: i64,
        width: u32,
        used: &dyn Fn(usize) -> bool,
    ) -> LResult<(Wide, Value)> {
        let offsets = self.v_read(&Arg::Reg(base), PtxType::U32)?;
        let add = self.v_splat(types::I32X4, offset as u32 as i64);
        let offsets: Wide = offsets
            .into_iter()
            .map(|v| self.b.ins().iadd(v, add))
            .collect();
        if !self.confined {
            return Ok((offsets, self.b.ins().iconst(types::I8, 1)));
        }
        // Every offset at most the length − width (and that not negative), a multiple of
        // the width.
        let len = self.shared_len();
        let last = self.b.ins().iadd_imm_s(len, -i64::from(width));
        let some = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, last, 0);
        let last = self.b.ins().ireduce(types::I32, last);
        let last = self.b.ins().splat(types::I32X4, last);
        let low = self.v_splat(types::I32X4, i64::from(width) - 1);
        let zero = self.v_splat(types::I32X4, 0);
        let ok: Wide = offsets
            .iter()
            .enumerate()
            .filter(|&(c, _)| used(c))
            .map(|(_, &v)| {
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, v, last);
                let misaligned = self.b.ins().band(v, low);
                let aligned = self.b.ins().icmp(IntCC::Equal, misaligned, zero);
                self.b.ins().band(inside, aligned)
            })
            .collect();
        let every = self.v_all(&ok);
        Ok((offsets, self.b.ins().band(every, some)))
    }

    /// The lanes' `width`-byte elements at `offsets` in shared memory, as vectors of them
    /// in lane order.
    pub(super) fn v_gather(&mut self, offsets: &[Value], width: u32) -> Wide {
        let lane = bits_type(8 * width).expect("1 to 8 bytes").ir_type();
        let vt = vector_of(lane).expect("a lane");
        let per = 16 / width as usize;
        let mut loaded = vec![self.v_splat(vt, 0); self.width() / per];
        for k in 0..self.width() {
            let at = self.v_lane_address(offsets, k);
            let x = self.b.ins().load(lane, MemFlagsData::new(), at, 0);
            loaded[k / per] = self.b.ins().insertlane(loaded[k / per], x, (k % per) as u8);
        }
        loaded
    }

    /// Stores each lane's `width`-byte element of `v` (vectors of them in lane order) at its
    /// offset in shared memory, lane 0 first.
    pub(super) fn v_scatter(&mut self, offsets: &[Value], width: u32, v: Wide) {
        let lane = bits_type(8 * width).expect("1 to 8 bytes").ir_type();
        let v = self.v_as(v, vector_of(lane).expect("a lane"));
        let per = 16 / width as usize;
        for k in 0..self.width() {
            let at = self.v_lane_address(offsets, k);
            let x = self.b.ins().extractlane(v[k / per], (k % per) as u8);
            self.b.ins().store(MemFlagsData::new(), x, at, 0);
        }
    }

    /// Lane `k`'s host address from the offsets' vectors.
    pub(super) fn v_lane_address(&mut self, offsets: &[Value], k: usize) -> Value {
        let off = self.b.ins().extractlane(offsets[k / 4], (k % 4) as u8);
        let off = self.b.ins().uextend(types::I64, off);
        self.space_to_host(off, StateSpace::Shared)
    }
}
