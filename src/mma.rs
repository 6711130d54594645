//! Warp-level `mma.sync.aligned`: where each lane's registers sit in the A, B, C and D
//! matrices (the ISA's fragment tables), and the product's arithmetic ([`sum`]: the tensor
//! cores' rule), which the warpgroup MMA (`crate::wgmma`) shares.

pub(crate) mod sum;

use crate::frontend::checked::{MmaForm, MmaType};
use sum::Arith;

/// `mma.sync.aligned` over a warp: `regs` holds each lane's A, B and C registers in order,
/// lane 0's first; `out` gets each lane's D registers the same way. Each product's lanes
/// (the whole warp, or one quad pair for `m8n8k4` on f16) gather A, B and C from their
/// fragments, then each lane's D elements are computed at its fragment positions
/// ([`a_at`], [`b_at`], [`cd_at`]).
///
/// Accumulation: f16, bf16, tf32 and fp8 products sum as an H200's tensor cores sum them
/// ([`sum`]: exact products aligned on the largest exponent and truncated 25 bits below it,
/// the sum rounded toward zero to f32 or to nearest f16); tf32 inputs ignore their low 13
/// bits; f64 is a chain of fused multiply-adds from C in k order; integers sum exactly and
/// wrap to s32, or clamp with `.satfinite`.
pub fn mma(form: MmaForm, regs: &[u64], out: &mut [u64]) {
    out.fill(0);
    if halves_m16n8k16(form) {
        let (stride, nd) = (operand_registers(form), form.registers()[3] as usize);
        let d = halves_product(form, |l, i| regs[l * stride + i] as u32);
        for (out, d) in out.chunks_exact_mut(nd).zip(&d) {
            for (o, &w) in out.iter_mut().zip(d) {
                *o = w as u64;
            }
        }
        return;
    }
    each_product(form, |lanes| match form.d {
        MmaType::S32 | MmaType::F64 => value_product(form, regs, lanes, out),
        _ => float_product(form, regs, lanes, out),
    });
}

/// `each` of the lanes of each product `form` makes: the warp's, or each quad pair's.
fn each_product(form: MmaForm, mut each: impl FnMut(&[usize])) {
    if form.quad_pairs() {
        for q in 0..4 {
            each(&[0, 1, 2, 3, 16, 17, 18, 19].map(|l| l + 4 * q));
        }
    } else {
        each(&std::array::from_fn::<usize, 32, _>(|l| l));
    }
}

/// Registers of A, B and C a lane holds for `form` (`mma`'s stride in `regs`).
pub fn operand_registers(form: MmaForm) -> usize {
    form.registers()[..3].iter().sum::<u32>() as usize
}

/// [`mma`]'s product of `lanes` (the warp, or a quad pair), its elements as [`Value`]s:
/// any form.
fn value_product(form: MmaForm, regs: &[u64], lanes: &[usize], out: &mut [u64]) {
    let [na, nb, _, nd] = form.registers().map(|n| n as usize);
    let (m, n, k) = (form.m as usize, form.n as usize, form.k as usize);
    let per = |ty: MmaType| (32 / ty.bits()).max(1) as usize;
    let elements = |rows: usize, cols: usize| rows * cols / lanes.len();
    let mut a = vec![vec![Value::Int(0); k]; m];
    let mut b = vec![vec![Value::Int(0); n]; k];
    let mut c = vec![vec![Value::Int(0); n]; m];
    for &l in lanes {
        let r = &regs[l * operand_registers(form)..];
        for i in 0..elements(m, k) {
            let (row, col) = a_at(form, l, i);
            a[row][col] = element(form.a, r[i / per(form.a)], i % per(form.a));
        }
        for i in 0..elements(k, n) {
            let (row, col) = b_at(form, l, i);
            b[row][col] = element(form.b, r[na + i / per(form.b)], i % per(form.b));
        }
        for i in 0..elements(m, n) {
            let (row, col) = cd_at(form, form.c, l, i);
            c[row][col] = element(form.c, r[na + nb + i / per(form.c)], i % per(form.c));
        }
    }
    for &l in lanes {
        for i in 0..elements(m, n) {
            let (row, col) = cd_at(form, form.d, l, i);
            let products = (0..k).map(|kk| (a[row][kk], b[kk][col]));
            let bits = match form.d {
                MmaType::S32 | MmaType::F64 => {
                    accumulate(form.d, form.satfinite, products, c[row][col])
                }
                _ => {
                    let products: Vec<_> = products.map(|(x, y)| (x.float(), y.float())).collect();
                    Arith::of_mma(form).element(&products, c[row][col].float())
                }
            };
            out[l * nd + i / per(form.d)] |= bits << (form.d.bits() as usize * (i % per(form.d)));
        }
    }
}

/// Most elements of a float product's A (16 × 32, fp8's), B (32 × 8) and C (16 × 8).
const MOST_A: usize = 16 * 32;
const MOST_B: usize = 32 * 8;
const MOST_C: usize = 16 * 8;

/// [`mma`]'s product of `lanes` where D is a float type (f16, f32): the same bits as
/// [`value_product`]'s, from flat arrays of f64 instead of lists of [`Value`]s (the matrix
/// kernels spent most of their time allocating and matching those), its fragments placed
/// by the form's [`Placement`].
fn float_product(form: MmaForm, regs: &[u64], lanes: &[usize], out: &mut [u64]) {
    let [na, nb, _, nd] = form.registers().map(|n| n as usize);
    let (m, n, k) = (form.m as usize, form.n as usize, form.k as usize);
    let p = Placement::of(form, lanes.len());
    let (mut a, mut b, mut c) = ([0.0; MOST_A], [0.0; MOST_B], [0.0; MOST_C]);
    let stride = operand_registers(form);
    for (&l, at) in lanes.iter().zip(p.at.chunks(p.elements())) {
        let r = &regs[l * stride..];
        let [at_a, at_b, at_c, _] = p.split(at);
        for (&(reg, j), &at) in p.source[0].iter().zip(at_a) {
            a[at] = float_element(form.a, r[reg], j);
        }
        for (&(reg, j), &at) in p.source[1].iter().zip(at_b) {
            b[at] = float_element(form.b, r[na + reg], j);
        }
        for (&(reg, j), &at) in p.source[2].iter().zip(at_c) {
            c[at] = float_element(form.c, r[na + nb + reg], j);
        }
    }
    let mut d = [0; MOST_C];
    Arith::of_mma(form).matrix((&a, b.as_chunks().0, &c), (m, n, k), &mut d);
    let shift = form.d.bits() as usize;
    for (&l, at) in lanes.iter().zip(p.at.chunks(p.elements())) {
        let [.., at_d] = p.split(at);
        for (&(reg, j), &at) in p.source[3].iter().zip(at_d) {
            out[l * nd + reg] |= d[at] << (shift * j);
        }
    }
}

/// Whether `form` is `m16n8k16` on halves (f16 or bf16 A and B, f16 or f32 C and D): nvcc's
/// and Triton's product, which [`halves_product`] computes.
pub(crate) fn halves_m16n8k16(form: MmaForm) -> bool {
    use MmaType::{BF16, F16, F32};
    (form.m, form.n, form.k) == (16, 8, 16)
        && matches!(form.a, F16 | BF16)
        && form.b == form.a
        && matches!(form.c, F16 | F32)
        && matches!(form.d, F16 | F32)
}

/// [`float_product`] of the warp for an `m16n8k16` on halves, its fragments placed
/// directly: each register holds neighbours of a row of A or C or of a column of B (the
/// lane 4g + t holds A's rows g and g + 8, columns 2t, 2t + 1 and 2t + 8, 2t + 9; B's column
/// g, rows the same as A's columns; C's rows g and g + 8, columns 2t and 2t + 1: [`a_m16`],
/// [`b_at`], [`cd_at`]), and A and B are decoded a matrix at a time. (The general placement,
/// an element at a time through the form's tables, took three times the product's
/// arithmetic in Triton's matmul.) Lane l's operand register i (A's four, B's two, then C's)
/// is `operand(l, i)`; returns each lane's D registers, the first `form.registers()[3]` of
/// its four: read and written where they are (a warp's registers in its threads' frames,
/// `sync`), not through arrays of every lane's registers, whose zeroing and copying took 7%
/// of Triton's matmul.
pub(crate) fn halves_product(
    form: MmaForm,
    operand: impl Fn(usize, usize) -> u32,
) -> [[u32; 4]; 32] {
    // (Elements a register: 2 halves, or 1 f32.)
    let (c_per, d_per) = (32 / form.c.bits() as usize, 32 / form.d.bits() as usize);
    // A (16 × 16) and B (16 × 8) row-major, as their halves' bits.
    let (mut a, mut b) = ([0u16; 16 * 16], [0u16; 16 * 8]);
    let mut c = [0.0; 16 * 8];
    // (row × 8 + column of C and D element i of the lane with group g and thread t.)
    let cd = |g: usize, t: usize, i: usize| (g + 8 * (i / 2)) * 8 + 2 * t + i % 2;
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        // (A register's two halves: neighbours in a row of A, in a column of B.)
        for reg in 0..4 {
            let w = operand(l, reg);
            let at = (g + 8 * (reg % 2)) * 16 + 2 * t + 8 * (reg / 2);
            (a[at], a[at + 1]) = (w as u16, (w >> 16) as u16);
        }
        for reg in 0..2 {
            let w = operand(l, 4 + reg);
            let at = (2 * t + 8 * reg) * 8 + g;
            (b[at], b[at + 8]) = (w as u16, (w >> 16) as u16);
        }
        for i in 0..4 {
            // (C's type matched once, not for each element.)
            let reg = operand(l, 6 + i / c_per);
            c[cd(g, t, i)] = match form.c {
                MmaType::F32 => f32::from_bits(reg) as f64,
                _ => half::f16::from_bits((reg >> (16 * (i % 2))) as u16).to_f64(),
            };
        }
    }
    let (a, b) = (halves_to_f64(form.a, &a), halves_to_f64(form.b, &b));
    let mut sums = [0; 16 * 8];
    Arith::of_mma(form).matrix((&a, b.as_chunks().0, &c), (16, 8, 16), &mut sums);
    let mut d = [[0; 4]; 32];
    for (l, d) in d.iter_mut().enumerate() {
        for i in 0..4 {
            d[i / d_per] |= (sums[cd(l / 4, l % 4, i)] as u32) << (16 * (i % d_per));
        }
    }
    d
}

/// Every operand type, in the order of [`group_code`]'s fields.
const TYPES: [MmaType; 10] = [
    MmaType::F16,
    MmaType::BF16,
    MmaType::Tf32,
    MmaType::F32,
    MmaType::F64,
    MmaType::E4m3,
    MmaType::E5m2,
    MmaType::S8,
    MmaType::U8,
    MmaType::S32,
];

/// The code [`group_mma`] takes for `form`, where its registers are 32-bit (every form but
/// f64's): M, N and K in bits 0, 8 and 16, D's, A's, B's and C's types (their places in
/// [`TYPES`]) in bits 32, 36, 40 and 44, then `.satfinite`, A row-major and B column-major.
pub(crate) fn group_code(form: MmaForm) -> Option<u64> {
    let types = [form.d, form.a, form.b, form.c];
    if types.contains(&MmaType::F64) {
        return None;
    }
    let place = |t: MmaType| TYPES.iter().position(|&x| x == t).expect("listed") as u64;
    let mut code = form.m as u64 | (form.n as u64) << 8 | (form.k as u64) << 16;
    for (i, t) in types.into_iter().enumerate() {
        code |= place(t) << (32 + 4 * i);
    }
    let flags = [form.satfinite, form.a_row, form.b_col];
    for (i, f) in flags.into_iter().enumerate() {
        code |= (f as u64) << (48 + i);
    }
    Some(code)
}

/// The form of a [`group_code`].
fn form_of_group_code(code: u64) -> MmaForm {
    let ty = |i: u64| TYPES[(code >> (32 + 4 * i) & 15) as usize];
    let flag = |i: u64| code >> (48 + i) & 1 == 1;
    MmaForm {
        m: (code & 0xFF) as u32,
        n: (code >> 8 & 0xFF) as u32,
        k: (code >> 16 & 0xFFFF) as u32,
        d: ty(0),
        a: ty(1),
        b: ty(2),
        c: ty(3),
        satfinite: flag(0),
        a_row: flag(1),
        b_col: flag(2),
    }
}

/// The `mma` of a lane group (`lower::simd::warp`): the form with [`group_code`] `code`
/// for each warp of the group's `width` lanes. Register i of the operands (A's, B's, then
/// C's) of lane l is `operands[i × width + l]`; register j of its D goes to `d[j × width +
/// l]`. The group code's vectors store and load so, a register's lanes in a row. An
/// `m16n8k16` on halves takes [`halves_product`]; other forms [`mma`]'s arrays of every
/// lane's registers.
///
/// # Safety
/// `operands` must hold the form's operand registers for `width` lanes and `d` its D
/// registers for as many; `width` a multiple of 32.
pub(crate) unsafe extern "C" fn group_mma(
    code: u64,
    operands: *const u32,
    d: *mut u32,
    width: u32,
) {
    let form = form_of_group_code(code);
    let width = width as usize;
    let nd = form.registers()[3] as usize;
    for warp in (0..width).step_by(32) {
        // SAFETY: within the operands, by the caller's promise.
        let operand = |l: usize, i: usize| unsafe { *operands.add(i * width + warp + l) };
        let place = |l: usize, j: usize, w: u32| {
            // SAFETY: within D, by the caller's promise.
            unsafe { *d.add(j * width + warp + l) = w };
        };
        if halves_m16n8k16(form) {
            for (l, registers) in halves_product(form, operand).iter().enumerate() {
                for (j, &w) in registers[..nd].iter().enumerate() {
                    place(l, j, w);
                }
            }
        } else {
            warp_product(form, &operand, &place);
        }
    }
}

/// [`mma`] of one warp whose lane l has operand register i `operand(l, i)`: `place(l, j,
/// w)` for each lane's D register j. (Apart from [`group_mma`]: inlined there, its arrays of
/// every lane's registers made the `m16n8k16` on halves 18% slower, nvcc's gemm 29.4 → 35.4
/// ms.)
#[inline(never)]
fn warp_product(
    form: MmaForm,
    operand: &dyn Fn(usize, usize) -> u32,
    place: &dyn Fn(usize, usize, u32),
) {
    let (n, nd) = (operand_registers(form), form.registers()[3] as usize);
    // (At most 16 operand registers a lane, and 8 of D: `sync::frame`'s bounds.)
    let (mut regs, mut out) = ([0u64; 32 * 16], [0u64; 32 * 8]);
    for (k, r) in regs[..32 * n].iter_mut().enumerate() {
        *r = operand(k / n, k % n) as u64;
    }
    mma(form, &regs[..32 * n], &mut out[..32 * nd]);
    for (k, &w) in out[..32 * nd].iter().enumerate() {
        place(k / nd, k % nd, w as u32);
    }
}

/// The values of `bits`, halves of type `ty` (f16 or bf16), exactly.
fn halves_to_f64<const N: usize>(ty: MmaType, bits: &[u16; N]) -> [f64; N] {
    let mut values = [0.0; N];
    halves_into_f64(ty, bits, &mut values);
    values
}

/// [`halves_to_f64`] into `values`, of `bits`'s length (f16 a slice at a time, with the
/// host's conversion instructions where it has them).
pub(crate) fn halves_into_f64(ty: MmaType, bits: &[u16], values: &mut [f64]) {
    match ty {
        MmaType::F16 => {
            use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
            bits.reinterpret_cast::<half::f16>()
                .convert_to_f64_slice(values);
        }
        _ => {
            for (v, &h) in values.iter_mut().zip(bits) {
                *v = f32::from_bits((h as u32) << 16) as f64;
            }
        }
    }
}

/// Where a form's fragments sit: for each of A, B, C and D, the register (counted from the
/// operand's first) and the element of it that hold a lane's element i, and for each lane
/// of a product (by its place among them) the flat index (row × columns + column) of each
/// of its elements in the operand's matrix ([`a_at`], [`b_at`], [`cd_at`]; k in the order
/// of [`Arith::k_position`]). Computed once a form and thread: those functions' divisions
/// cost a product more than its arithmetic.
struct Placement {
    source: [Vec<(usize, usize)>; 4],
    at: Vec<usize>,
}

impl Placement {
    /// The placement of `form`'s products of `lanes` lanes (a warp, or a quad pair: a
    /// quad pair's lanes sit as the first pair's do).
    fn of(form: MmaForm, lanes: usize) -> std::rc::Rc<Placement> {
        thread_local! {
            static PLACEMENTS: std::cell::RefCell<Vec<(MmaForm, std::rc::Rc<Placement>)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        PLACEMENTS.with_borrow_mut(|known| {
            if let Some((_, p)) = known.iter().find(|(f, _)| *f == form) {
                return p.clone();
            }
            let p = std::rc::Rc::new(Placement::new(form, lanes));
            known.push((form, p.clone()));
            p
        })
    }

    fn new(form: MmaForm, lanes: usize) -> Placement {
        let (m, n, k) = (form.m as usize, form.n as usize, form.k as usize);
        let per = |ty: MmaType| (32 / ty.bits()).max(1) as usize;
        let shapes = [
            (m, k, form.a),
            (k, n, form.b),
            (m, n, form.c),
            (m, n, form.d),
        ];
        let source = shapes.map(|(rows, cols, ty)| {
            (0..rows * cols / lanes)
                .map(|i| (i / per(ty), i % per(ty)))
                .collect()
        });
        let first: Vec<usize> = match form.quad_pairs() {
            true => vec![0, 1, 2, 3, 16, 17, 18, 19],
            false => (0..32).collect(),
        };
        // (A's columns and B's rows in the order the product's blocks take them.)
        let k_at = |kk| Arith::of_mma(form).k_position(kk, k);
        let at = first
            .iter()
            .flat_map(|&l| {
                let place = move |op: usize, i: usize| match op {
                    0 => a_at(form, l, i),
                    1 => b_at(form, l, i),
                    2 => cd_at(form, form.c, l, i),
                    _ => cd_at(form, form.d, l, i),
                };
                let place = move |op, i| match (op, place(op, i)) {
                    (0, (row, col)) => (row, k_at(col)),
                    (1, (row, col)) => (k_at(row), col),
                    (_, at) => at,
                };
                (0..4).flat_map(move |op| {
                    let (rows, cols, _) = shapes[op];
                    (0..rows * cols / lanes).map(move |i| {
                        let (row, col) = place(op, i);
                        row * cols + col
                    })
                })
            })
            .collect();
        Placement { source, at }
    }

    /// Elements a lane holds, A's to D's.
    fn elements(&self) -> usize {
        self.source.iter().map(Vec::len).sum()
    }

    /// A lane's flat indices (`at`, [`elements`](Self::elements) of them) split by operand.
    fn split<'a>(&self, at: &'a [usize]) -> [&'a [usize]; 4] {
        let (a, rest) = at.split_at(self.source[0].len());
        let (b, rest) = rest.split_at(self.source[1].len());
        let (c, d) = rest.split_at(self.source[2].len());
        [a, b, c, d]
    }
}

/// Element `j` of a register holding float `ty` values, as [`element`] gives it.
#[inline(always)]
pub(crate) fn float_element(ty: MmaType, reg: u64, j: usize) -> f64 {
    let raw = (reg >> (16 * j)) as u16;
    match ty {
        MmaType::F16 => half::f16::from_bits(raw).to_f64(),
        MmaType::BF16 => f32::from_bits((raw as u32) << 16) as f64,
        MmaType::F32 => f32::from_bits(reg as u32) as f64,
        MmaType::Tf32 => f32::from_bits(reg as u32 & !0x1FFF) as f64,
        MmaType::E4m3 | MmaType::E5m2 => fp8_value(ty, (reg >> (8 * j)) as u8),
        _ => element(ty, reg, j).float(),
    }
}

/// The value of the fp8 (e4m3 or e5m2) `bits`, as [`element`] gives it, from a table of the
/// 256 of each type made once: decoding them one at a time took most of an fp8 product's.
fn fp8_value(ty: MmaType, bits: u8) -> f64 {
    use crate::semantics::minifloat::Mini;
    static VALUES: std::sync::LazyLock<[[f64; 256]; 2]> = std::sync::LazyLock::new(|| {
        [Mini::E4m3, Mini::E5m2].map(|mini| std::array::from_fn(|b| mini.to_f64(b as u8)))
    });
    VALUES[usize::from(ty == MmaType::E5m2)][bits as usize]
}

/// (row, column) of A element `i` (element i mod e of register i div e, e per register) of
/// `lane`, from the ISA's fragment tables: [`a_m16`] (row g only for m8); `m8n8k4` on f16
/// (r = lane mod 4, h = 4 in the high group of a quad pair): (r + h, i) for `.row`, (i + h, r)
/// for `.col`.
fn a_at(form: MmaForm, lane: usize, i: usize) -> (usize, usize) {
    if form.quad_pairs() {
        let (r, h) = quad_pair_lane(lane);
        return if form.a_row { (r + h, i) } else { (i + h, r) };
    }
    let (row, col) = a_m16(form.k, form.a, lane, i);
    match form.m {
        16 => (row, col),
        _ => (row % 8, col),
    }
}

/// (row, column) of A element `i` of `lane` in a 16-row fragment of `k` columns of `ty`: row
/// g + 8·(r mod 2), column t·e + j + (r div 2)·k/2 (lane = 4g + t, element j of register r,
/// e per register). `mma.m16n8k*` and each warp's 16 rows of `wgmma`'s A take this layout.
pub(crate) fn a_m16(k: u32, ty: MmaType, lane: usize, i: usize) -> (usize, usize) {
    let e = (32 / ty.bits()).max(1) as usize;
    let (g, t, reg, j) = (lane / 4, lane % 4, i / e, i % e);
    (g + 8 * (reg % 2), t * e + j + (reg / 2) * (k as usize / 2))
}

/// (row k, column) of B element `i`: row t·e + j + r·k/2 of column g; `m8n8k4` on f16:
/// (r, i + h) for `.row`, (i, r + h) for `.col`.
fn b_at(form: MmaForm, lane: usize, i: usize) -> (usize, usize) {
    if form.quad_pairs() {
        let (r, h) = quad_pair_lane(lane);
        return if form.b_col { (i, r + h) } else { (r, i + h) };
    }
    let e = (32 / form.b.bits()).max(1) as usize;
    let (g, t, reg, j) = (lane / 4, lane % 4, i / e, i % e);
    (t * e + j + reg * (form.k as usize / 2), g)
}

/// (row, column) of C or D element `i` when that accumulator holds `ty`: row g + 8·(i div 2),
/// column 2t + (i mod 2) (row g, column 2t + i for m8); `m8n8k4` on f16: (r + h, i) for f16,
/// ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)) for f32.
fn cd_at(form: MmaForm, ty: MmaType, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match (form.quad_pairs(), ty) {
        (true, MmaType::F16) => (t + quad_pair_lane(lane).1, i),
        (true, _) => {
            let h = quad_pair_lane(lane).1;
            ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1))
        }
        _ if form.m == 16 => (g + 8 * (i / 2), 2 * t + i % 2),
        _ => (g, 2 * t + i),
    }
}

/// A quad pair's lane (ISA "Matrix Fragments for mma.m8n8k4 with .f16 floating point type"):
/// its index r in its group of four and the row offset h, 4 for the high group (lanes 16–31).
fn quad_pair_lane(lane: usize) -> (usize, usize) {
    (lane % 4, if lane >= 16 { 4 } else { 0 })
}

/// An element of an mma fragment: a float value or an integer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value {
    Float(f64),
    Int(i64),
}

impl Value {
    pub(crate) fn float(self) -> f64 {
        match self {
            Value::Float(x) => x,
            Value::Int(i) => i as f64,
        }
    }
    fn int(self) -> i64 {
        match self {
            Value::Int(i) => i,
            Value::Float(x) => x as i64,
        }
    }
}

/// Element `j` of a register holding `ty` values.
pub(crate) fn element(ty: MmaType, reg: u64, j: usize) -> Value {
    use crate::semantics::half::{BF16, F16};
    use crate::semantics::minifloat::Mini;
    let bits = ty.bits() as usize;
    let raw = if bits == 64 {
        reg
    } else {
        (reg >> (bits * j)) & ((1 << bits) - 1)
    };
    match ty {
        MmaType::F16 => Value::Float(F16.to_f64(raw as u16)),
        MmaType::BF16 => Value::Float(BF16.to_f64(raw as u16)),
        MmaType::Tf32 => Value::Float(f32::from_bits(raw as u32 & !0x1FFF) as f64),
        MmaType::F32 => Value::Float(f32::from_bits(raw as u32) as f64),
        MmaType::F64 => Value::Float(f64::from_bits(raw)),
        MmaType::E4m3 => Value::Float(Mini::E4m3.to_f64(raw as u8)),
        MmaType::E5m2 => Value::Float(Mini::E5m2.to_f64(raw as u8)),
        MmaType::S8 => Value::Int(raw as u8 as i8 as i64),
        MmaType::U8 => Value::Int(raw as i64),
        MmaType::S32 => Value::Int(raw as u32 as i32 as i64),
    }
}

/// D's bits for one element of an integer or f64 type `d`: Σ a·b + c per the rule of
/// [`mma`] (the float types' is [`Arith::element`]).
pub(crate) fn accumulate(
    d: MmaType,
    satfinite: bool,
    products: impl Iterator<Item = (Value, Value)>,
    c: Value,
) -> u64 {
    match d {
        MmaType::S32 => {
            let sum = products.fold(c.int(), |s, (x, y)| s + x.int() * y.int());
            let sum = if satfinite {
                sum.clamp(i32::MIN as i64, i32::MAX as i64)
            } else {
                sum
            };
            sum as u32 as u64
        }
        MmaType::F64 => products
            .fold(c.float(), |s, (x, y)| x.float().mul_add(y.float(), s))
            .to_bits(),
        _ => unreachable!("float D elements are Arith::element's"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The float form of shape m16n8`k`, A and B of type `ab`, C and D of type `cd`.
    fn form(k: u32, ab: MmaType, cd: MmaType) -> MmaForm {
        MmaForm {
            m: 16,
            n: 8,
            k,
            d: cd,
            a: ab,
            b: ab,
            c: cd,
            satfinite: false,
            a_row: true,
            b_col: true,
        }
    }

    /// The bits of `x` (exactly representable) in a float mma type.
    fn bits_of(ty: MmaType, x: f64) -> u64 {
        use crate::frontend::checked::Rounding::Rn;
        use crate::semantics::minifloat::Mini;
        match ty {
            MmaType::F16 => half::f16::from_f64(x).to_bits() as u64,
            MmaType::BF16 => half::bf16::from_f64(x).to_bits() as u64,
            MmaType::E4m3 => Mini::E4m3.round(x, Rn, false) as u64,
            MmaType::E5m2 => Mini::E5m2.round(x, Rn, false) as u64,
            _ => (x as f32).to_bits() as u64,
        }
    }

    /// D's bits at row 0, column 0 of `form` where A's row 0 starts with `a` (its other
    /// elements zero), B's column 0 with `b`, and C's element (0, 0) is `c`: `mma`'s, which
    /// the element-at-a-time reference (`value_product`) must give too.
    fn d00(form: MmaForm, a: &[f64], b: &[f64], c: f64) -> u64 {
        let [na, nb, _, nd] = form.registers().map(|n| n as usize);
        let stride = operand_registers(form);
        let mut regs = vec![0; 32 * stride];
        let mut put = |ty: MmaType, l: usize, first: usize, i: usize, x: f64| {
            let (bits, per) = (ty.bits() as usize, (32 / ty.bits()) as usize);
            regs[l * stride + first + i / per] |= bits_of(ty, x) << (bits * (i % per));
        };
        let (m, n, k) = (16, 8, form.k as usize);
        for l in 0..32 {
            for i in 0..m * k / 32 {
                if let (0, col) = a_at(form, l, i) {
                    put(form.a, l, 0, i, a.get(col).copied().unwrap_or(0.0));
                }
            }
            for i in 0..k * n / 32 {
                if let (row, 0) = b_at(form, l, i) {
                    put(form.b, l, na, i, b.get(row).copied().unwrap_or(0.0));
                }
            }
            for i in 0..m * n / 32 {
                if cd_at(form, form.c, l, i) == (0, 0) {
                    put(form.c, l, na + nb, i, c);
                }
            }
        }
        let (mut fast, mut reference) = (vec![0; 32 * nd], vec![0; 32 * nd]);
        mma(form, &regs, &mut fast);
        each_product(form, |lanes| {
            value_product(form, &regs, lanes, &mut reference)
        });
        assert_eq!(fast, reference, "{form:?}: a {a:?}, b {b:?}, c {c}");
        let (l, i) = (0..32)
            .flat_map(|l| (0..m * n / 32).map(move |i| (l, i)))
            .find(|&(l, i)| cd_at(form, form.d, l, i) == (0, 0))
            .expect("a lane holds D(0, 0)");
        let (bits, per) = (form.d.bits() as usize, (32 / form.d.bits()) as usize);
        fast[l * nd + i / per] >> (bits * (i % per)) & ((1 << bits) - 1)
    }

    /// D(0, 0) of `m16n8k16.f32.f16.f16.f32` as a value.
    fn f16_d(a: &[f64], b: &[f64], c: f64) -> f64 {
        f32::from_bits(d00(form(16, MmaType::F16, MmaType::F32), a, b, c) as u32) as f64
    }

    const fn pow2(n: i32) -> f64 {
        f64::from_bits(((n + 1023) as u64) << 52)
    }

    // The tensor cores' sum (`sum`'s rule, an H200's), a case per rule.

    #[test]
    fn a_product_aligns_on_the_sum_of_its_operands_exponents() {
        // 1.5 · 1.5 = 2.25 aligns at 2^0 (0 + 0), not at its own 2^1: E is 0 and the last
        // product, 2^-25, is kept (aligned at 2^1 it would be truncated away).
        let a = [1.5, 1.5, pow2(-13)];
        let b = [1.5, -1.5, pow2(-12)];
        assert_eq!(f16_d(&a, &b, 0.0), pow2(-25));
    }

    #[test]
    fn a_term_is_truncated_toward_zero_25_bits_below_the_largest() {
        // E is 0 (1 · 1): 1.5 · 2^-25 keeps only 2^-25, toward zero on either side.
        let a = [1.0, 1.0, 1.5 * pow2(-13)];
        assert_eq!(f16_d(&a, &[1.0, -1.0, pow2(-12)], 0.0), pow2(-25));
        assert_eq!(f16_d(&a, &[1.0, -1.0, -pow2(-12)], 0.0), -pow2(-25));
    }

    #[test]
    fn c_is_a_term_of_the_block_truncated_like_the_products() {
        // Products 2^24 and -2^24 make E 24: C, 1.75, keeps only multiples of 2^-1.
        let a = [pow2(12), pow2(12)];
        assert_eq!(f16_d(&a, &[pow2(12), -pow2(12)], 1.75), 1.5);
    }

    #[test]
    fn the_sum_rounds_toward_zero_to_f32() {
        // 1 + 3 · 2^-25 is 0.75 of an f32 unit above 1: nearest would give 1 + 2^-23.
        let a = [1.0, 1.5 * pow2(-12)];
        assert_eq!(f16_d(&a, &[1.0, pow2(-12)], 0.0), 1.0);
        assert_eq!(f16_d(&a, &[-1.0, -pow2(-12)], 0.0), -1.0);
    }

    #[test]
    fn a_sum_from_2_to_the_128_is_infinity() {
        // bf16's largest, 2^128 - 2^120, plus 2^120; or plus 2^120 - 2^102 (from its largest
        // finite f32 on, short of 2^128: toward zero, the largest finite f32).
        let bf16 = form(16, MmaType::BF16, MmaType::F32);
        let d = |a: &[f64]| f32::from_bits(d00(bf16, a, &[1.0; 4], 0.0) as u32);
        let largest = pow2(128) - pow2(120);
        assert_eq!(d(&[largest, pow2(120)]), f32::INFINITY);
        let short = [
            largest,
            pow2(120) - pow2(112),
            pow2(112) - pow2(104),
            0.75 * pow2(104),
        ];
        assert_eq!(d(&short), f32::MAX);
    }

    #[test]
    fn the_block_is_all_16_products_and_c() {
        // The first two products make E 10 for the 16th too: 1.5 · 2^-15 keeps 2^-15 (a block
        // of its own, k 8 to 15, would keep it whole).
        let mut a = [0.0; 16];
        let mut b = [0.0; 16];
        (a[0], b[0], a[1], b[1]) = (pow2(5), pow2(5), pow2(5), -pow2(5));
        (a[15], b[15]) = (1.5 * pow2(-8), pow2(-7));
        assert_eq!(f16_d(&a, &b, 0.0), pow2(-15));
    }

    /// D(0, 0)'s bits of `m16n8k16.f32.f16.f16.f32`.
    fn f16_d_bits(a: &[f64], b: &[f64], c: f64) -> u32 {
        d00(form(16, MmaType::F16, MmaType::F32), a, b, c) as u32
    }

    #[test]
    fn a_zero_sum_is_negative_only_where_every_term_is() {
        // (IEEE 754's sum of zeros: no recording holds a zero sum.) Every product -0, and C:
        let (minus, plus) = ((-0.0f32).to_bits(), 0);
        assert_eq!(f16_d_bits(&[-0.0; 16], &[1.0; 16], -0.0), minus);
        // but one, or C +0:
        let mut one_plus = [-0.0; 16];
        one_plus[7] = 0.0;
        assert_eq!(f16_d_bits(&one_plus, &[1.0; 16], -0.0), plus);
        assert_eq!(f16_d_bits(&[-0.0; 16], &[1.0; 16], 0.0), plus);
        // A sum of terms that cancel is +0.
        assert_eq!(f16_d_bits(&[1.0, 1.0], &[1.0, -1.0], -0.0), plus);
    }

    #[test]
    fn nan_and_infinity_follow_ieee_754_and_nan_is_canonical() {
        let d = f16_d_bits;
        let (inf, nan) = (f64::INFINITY, crate::lower::softfloat::CANONICAL_NAN_F32);
        assert_eq!(d(&[inf, 1.0], &[1.0, 1.0], 1.0), f32::INFINITY.to_bits());
        assert_eq!(d(&[inf, 1.0], &[-1.0, 1.0], inf), nan);
        assert_eq!(d(&[inf, 1.0], &[0.0, 1.0], 1.0), nan);
        assert_eq!(d(&[f64::NAN], &[1.0], 1.0), nan);
        let f16_nan = d00(form(16, MmaType::F16, MmaType::F16), &[inf], &[0.0], 0.0);
        assert_eq!(f16_nan, crate::semantics::half::CANONICAL_NAN as u64);
    }

    #[test]
    fn an_f16_d_rounds_the_block_sum_to_nearest_even() {
        let f16 = form(16, MmaType::F16, MmaType::F16);
        let d = |x: f64| half::f16::from_bits(d00(f16, &[1.0, x], &[1.0, 1.0], 0.0) as u16);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to 1, even; 1 + 3 · 2^-11 to 1 + 2^-9.
        assert_eq!(d(pow2(-11)).to_f64(), 1.0);
        assert_eq!(d(3.0 * pow2(-11)).to_f64(), 1.0 + pow2(-9));
    }

    #[test]
    fn fp8_products_sum_as_two_f16_blocks_chained_then_c_is_added_to_nearest() {
        let e4m3 = form(32, MmaType::E4m3, MmaType::F32);
        let d = |a: &[f64], b: &[f64], c: f64| f32::from_bits(d00(e4m3, a, b, c) as u32) as f64;
        // k 0 and 1 (k mod 4 < 2) cancel in the first block; the second block's 1.5 · 2^-12
        // (k 2) is whole. One block of all 32 would truncate it away (E 14), and so would
        // the blocks the other way round.
        let (big, small) = (pow2(7), 1.5 * pow2(-6));
        assert_eq!(
            d(&[big, big, small], &[big, -big, pow2(-6)], 0.0),
            1.5 * pow2(-12)
        );
        // C is added after, to nearest: 1 + 3 · 2^-25 gives 1 + 2^-23.
        assert_eq!(d(&[1.0], &[1.0], 3.0 * pow2(-25)), 1.0 + pow2(-23));
    }

    /// Every float form's product on flat arrays ([`halves_product`]'s, [`float_product`]'s)
    /// equals the general one's, bit for bit, on registers of random bits (NaNs, infinities
    /// and subnormals among them).
    #[test]
    fn a_float_product_is_the_value_product() {
        let form = |m, n, k, d, ab, c| MmaForm {
            m,
            n,
            k,
            d,
            a: ab,
            b: ab,
            c,
            satfinite: false,
            a_row: true,
            b_col: true,
        };
        use MmaType::*;
        let forms = [
            form(16, 8, 16, F32, F16, F32),
            form(16, 8, 16, F16, F16, F16),
            form(16, 8, 16, F16, F16, F32),
            form(16, 8, 16, F32, F16, F16),
            form(16, 8, 8, F32, F16, F32),
            form(16, 8, 16, F32, BF16, F32),
            form(16, 8, 8, F32, Tf32, F32),
            form(16, 8, 32, F32, E4m3, F32),
            form(16, 8, 32, F16, E5m2, F16),
            form(8, 8, 4, F32, F16, F32),
            form(8, 8, 4, F16, F16, F16),
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        // Halves of tiny, huge and unit magnitudes of both signs, or small random ones: sums
        // whose order matters (tiny + huge - huge).
        let palette = [0x0001, 0x7800, 0xF800, 0x3C00, 0xBC00, 0x8001, 0x0400];
        let mut random = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let half = |x: u64| match palette.get(x as usize % 10) {
                Some(&h) => h,
                None => x >> 4 & 0xBFFF,
            };
            half(seed) | half(seed >> 20) << 16
        };
        for f in forms {
            let nd = f.registers()[3] as usize;
            for _ in 0..50 {
                let regs: Vec<u64> = (0..32 * operand_registers(f)).map(|_| random()).collect();
                let (mut fast, mut slow) = (vec![0; 32 * nd], vec![0; 32 * nd]);
                mma(f, &regs, &mut fast);
                each_product(f, |lanes| value_product(f, &regs, lanes, &mut slow));
                assert_eq!(fast, slow, "{f:?}");
            }
        }
    }

    #[test]
    fn a_float_element_is_the_value_element_gives_for_every_half_bf16_and_fp8() {
        use MmaType::*;
        for (ty, per) in [(F16, 2), (BF16, 2), (E4m3, 4), (E5m2, 4)] {
            let bits = 32 / per;
            for raw in 0..1u64 << bits {
                for j in 0..per {
                    // (The other elements of the register 0x5A.)
                    let others = 0x5A5A_5A5A & !(((1 << bits) - 1) << (bits * j));
                    let reg = raw << (bits * j) | others;
                    let (fast, slow) = (float_element(ty, reg, j), element(ty, reg, j).float());
                    assert!(
                        fast.to_bits() == slow.to_bits() || (fast.is_nan() && slow.is_nan()),
                        "{ty:?} {raw:#x}"
                    );
                }
            }
        }
    }
}
