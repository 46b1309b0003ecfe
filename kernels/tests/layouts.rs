//! Layout identity of the elementwise engine: the same values through any
//! layout — strided, reversed, offset, transposed, padded 3-D, broadcast (row,
//! column, rank 0, zero strides) — give the bits of the contiguous call, on
//! every tier the CPU runs and with 1, 2 and 7 threads. Large cases pass the
//! engine's parallel threshold (2^18 elements).

mod common;

use common::*;
use tessera::elementwise;
use tessera::{available_tiers, result_dtype, ArrayView, ArrayViewMut, DType, Exec, Kind, Tier};
use tessera_testkit::rng::Rng;

const THREADS: [usize; 3] = [1, 2, 7];
/// The engine's parallel threshold, as documented.
const PARALLEL: usize = 1 << 18;

fn execs() -> Vec<Exec> {
    let tiers = available_tiers();
    assert_eq!(
        tiers.first(),
        Some(&Tier::ALL[0]),
        "the scalar tier is always available"
    );
    let mut out = Vec::new();
    for t in tiers {
        for n in THREADS {
            out.push(Exec::on(t).threads(n));
        }
    }
    out
}

fn reference_exec() -> Exec {
    Exec::on(Tier::ALL[0]).threads(1)
}

/// The dtype of each input of `kind` on `dtype`.
fn input_dtypes(kind: Kind, dtype: DType) -> Vec<DType> {
    // The operand rules as the test kit models them (spec/kinds.toml).
    tessera_testkit::values::in_dtypes(kind, dtype)
}

/// Logical inputs (codes in C order) for a call of `count` elements.
fn inputs_for(kind: Kind, dtype: DType, shapes: &[Vec<usize>], seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    input_dtypes(kind, dtype)
        .into_iter()
        .zip(shapes)
        .enumerate()
        .map(|(k, (d, s))| {
            let dt = Dt::of(d);
            let n: usize = s.iter().product();
            let mut codes = random_codes(dt, n, &mut rng, false);
            if kind == Kind::Shl && k == 1 {
                // Shift counts around the width, most of them in range.
                let width = dt.bits as u64;
                for el in codes.chunks_mut(dt.item) {
                    let c = rng.below(width + 3);
                    el.fill(0);
                    el[0] = c as u8;
                }
            }
            codes
        })
        .collect()
}

/// One operand placed in a buffer.
struct Placed {
    dt: Dt,
    geo: Geo,
    buf: Vec<u8>,
}

impl Placed {
    fn new(dtype: DType, geo: Geo, codes: &[u8], junk: &mut Rng) -> Placed {
        let dt = Dt::of(dtype);
        let buf = store(dt, &geo, codes, junk);
        Placed { dt, geo, buf }
    }
    /// Values stored in the layout `stored`, viewed through `view` (which
    /// may reach the same element more than once: zero strides).
    fn aliased(dtype: DType, stored: &Geo, view: Geo, codes: &[u8], junk: &mut Rng) -> Placed {
        let dt = Dt::of(dtype);
        let mut buf = store(dt, stored, codes, junk);
        buf.resize(dt.buffer_bytes(view.elems.max(stored.elems)), 0x5A);
        Placed { dt, geo: view, buf }
    }
    fn view(&self) -> ArrayView<'_> {
        ArrayView::new(
            self.dt.dtype,
            &self.geo.shape,
            &self.geo.strides,
            self.geo.offset,
            &self.buf,
        )
        .unwrap_or_else(|e| {
            panic!(
                "a valid {:?} layout {:?} was refused: {e}",
                self.dt.dtype, self.geo
            )
        })
    }
}

const SENTINEL: u8 = 0xA5;

/// Run `kind` into a fresh destination of layout `out_geo`, check that no
/// byte outside the destination's elements was written, and return the
/// destination's codes in C order.
fn run(exec: &Exec, kind: Kind, ins: &[Placed], out_dtype: DType, out_geo: &Geo) -> Vec<u8> {
    let dt = Dt::of(out_dtype);
    let mut buf = vec![SENTINEL; dt.buffer_bytes(out_geo.elems)];
    {
        let views: Vec<ArrayView<'_>> = ins.iter().map(Placed::view).collect();
        let mut out = ArrayViewMut::new(
            out_dtype,
            &out_geo.shape,
            &out_geo.strides,
            out_geo.offset,
            &mut buf,
        )
        .unwrap_or_else(|e| panic!("a valid destination layout {out_geo:?} was refused: {e}"));
        elementwise(kind, &views, &mut out, exec).unwrap_or_else(|e| {
            panic!(
                "{kind} on {:?} refused: {e}",
                ins.last().map(|p| p.dt.dtype)
            )
        });
    }
    let cov = covered(dt, out_geo);
    if let Some(i) = (0..buf.len()).find(|&i| !cov[i] && buf[i] != SENTINEL) {
        panic!("{kind}: byte {i} outside the destination {out_geo:?} was written");
    }
    load(dt, out_geo, &buf)
}

/// First differing element, for messages.
fn first_diff(a: &[u8], b: &[u8], item: usize) -> Option<usize> {
    a.chunks(item).zip(b.chunks(item)).position(|(x, y)| x != y)
}

fn assert_same(got: &[u8], want: &[u8], item: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = first_diff(got, want, item) {
        panic!(
            "{what}: element {i} is {:02x?}, the contiguous call gives {:02x?}",
            &got[i * item..(i + 1) * item],
            &want[i * item..(i + 1) * item]
        );
    }
}

/// The contiguous reference of `kind` on logical inputs of `shape`.
fn reference(kind: Kind, dtype: DType, shape: &[usize], codes: &[Vec<u8>]) -> Vec<u8> {
    let mut junk = Rng::new(7);
    let ins: Vec<Placed> = input_dtypes(kind, dtype)
        .into_iter()
        .zip(codes)
        .map(|(d, c)| Placed::new(d, place(Lay::Contig, shape, Dt::of(d).vpb), c, &mut junk))
        .collect();
    let out = result_dtype(kind, dtype).expect("the kind is defined for the dtype");
    run(
        &reference_exec(),
        kind,
        &ins,
        out,
        &place(Lay::Contig, shape, Dt::of(out).vpb),
    )
}

/// Check `kind` on `dtype` over `shape` in each layout of `lays` (every
/// operand in the same layout), and in mixed layouts (each operand in another).
fn check_layouts(kind: Kind, dtype: DType, shape: &[usize], lays: &[Lay], seed: u64) {
    let arity = kind.info().arity;
    let shapes = vec![shape.to_vec(); arity];
    let codes = inputs_for(kind, dtype, &shapes, seed);
    let want = reference(kind, dtype, shape, &codes);
    let out_dtype = result_dtype(kind, dtype).unwrap();
    let out_dt = Dt::of(out_dtype);
    let in_dts = input_dtypes(kind, dtype);
    let mut junk = Rng::new(seed ^ 0xDEAD);

    // Uniform layouts, then mixed ones: operand k in lays[(j + k) % len].
    let mut plans: Vec<(Vec<Lay>, Lay)> = lays.iter().map(|&l| (vec![l; arity], l)).collect();
    for j in 0..lays.len().min(3) {
        let ins = (0..arity).map(|k| lays[(j + k + 1) % lays.len()]).collect();
        plans.push((ins, lays[j]));
    }
    for (in_lays, out_lay) in plans {
        let ins: Vec<Placed> = in_dts
            .iter()
            .zip(&codes)
            .zip(&in_lays)
            .map(|((&d, c), &l)| Placed::new(d, place(l, shape, Dt::of(d).vpb), c, &mut junk))
            .collect();
        let out_geo = place(out_lay, shape, out_dt.vpb);
        for exec in execs() {
            let got = run(&exec, kind, &ins, out_dtype, &out_geo);
            let what = format!(
                "{kind} on {dtype} {shape:?}, inputs {in_lays:?}, destination {out_lay:?}, {exec:?}"
            );
            assert_same(&got, &want, out_dt.item, &what);
        }
    }
}

/// The kinds and dtypes of the identity tests.
fn cases() -> Vec<(Kind, DType)> {
    use DType::*;
    let mut v = Vec::new();
    for d in [F32, F64, F16, Bf16, E4m3fn, E2m1fn, I4, U1, I32, U8, C64] {
        v.push((Kind::Add, d));
    }
    for d in [F16, Bf16, E4m3fn, I4, U8, C64] {
        v.push((Kind::Mul, d));
    }
    for d in [F32, F64, Bf16, E4m3fn, E2m1fn] {
        v.push((Kind::Fma, d));
    }
    for d in [F32, C64, I4, U1, E2m1fn, Bool, U8] {
        v.push((Kind::Select, d));
    }
    for d in [F16, I32, U8, Bool, E2m1fn, I4] {
        v.push((Kind::Lt, d));
    }
    for d in [I32, U8, I4] {
        v.push((Kind::Shl, d));
    }
    for d in [C64, F32, E4m3fn] {
        v.push((Kind::Abs, d));
    }
    for d in [F64, E4m3fn, I4, U1, C64] {
        v.push((Kind::Neg, d));
    }
    v
}

#[test]
fn every_layout_gives_the_contiguous_bits() {
    for (i, (kind, dtype)) in cases().into_iter().enumerate() {
        check_layouts(kind, dtype, &[13, 48], &ALL_LAYS, 100 + i as u64);
    }
}

#[test]
fn three_dimensional_layouts_that_do_not_merge() {
    for (i, (kind, dtype)) in cases().into_iter().enumerate() {
        check_layouts(
            kind,
            dtype,
            &[5, 6, 16],
            &[Lay::Padded, Lay::Transposed, Lay::Reversed],
            200 + i as u64,
        );
    }
}

#[test]
fn single_rows_and_short_runs() {
    // One element, one row, a run shorter than any vector, empty.
    for (i, (kind, dtype)) in cases().into_iter().enumerate() {
        let n = if Dt::of(dtype).packed() { 8 } else { 1 };
        check_layouts(kind, dtype, &[1, n], &ALL_LAYS, 300 + i as u64);
        check_layouts(
            kind,
            dtype,
            &[3, 8],
            &[Lay::Reversed, Lay::Padded],
            400 + i as u64,
        );
        check_layouts(
            kind,
            dtype,
            &[0, 8],
            &[Lay::Contig, Lay::Reversed],
            500 + i as u64,
        );
        // A last axis of one value: packed dtypes keep it in the high bits.
        check_layouts(kind, dtype, &[5, 1], &ALL_LAYS, 600 + i as u64);
    }
}

/// Sizes past the parallel threshold: the row split (many rows), the split
/// within a row (one merged row), and the tile path of packed dtypes.
#[test]
fn large_calls_on_every_thread_count() {
    use DType::*;
    let big2 = [520usize, 512];
    let big1 = [PARALLEL + 64];
    assert!(big2.iter().product::<usize>() >= PARALLEL);
    let lays = [Lay::Contig, Lay::Transposed, Lay::Reversed, Lay::EveryOther];
    check_layouts(Kind::Add, F32, &big2, &lays, 1);
    check_layouts(Kind::Fma, Bf16, &big2, &[Lay::Contig, Lay::Transposed], 2);
    check_layouts(Kind::Select, C64, &big1, &[Lay::Contig, Lay::Reversed], 3);
    check_layouts(
        Kind::Neg,
        E4m3fn,
        &big1,
        &[Lay::Contig, Lay::EveryOther, Lay::Offset],
        4,
    );
    check_layouts(
        Kind::Add,
        I4,
        &big2,
        &[Lay::Contig, Lay::Reversed, Lay::EveryOther],
        5,
    );
    check_layouts(Kind::Lt, U8, &big2, &[Lay::Contig, Lay::Padded], 6);
}

// ---- broadcasting ----------------------------------------------------------

/// How one input is given for a destination of shape [m, n].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bc {
    /// [m, n]
    Full,
    /// [1, n]
    Row,
    /// [m, 1]
    Col,
    /// [] (rank 0)
    Scalar,
    /// [n] (lower rank)
    Vector,
    /// [m, n] with strides [0, 1] over one row
    RowByStride,
    /// [m, n] with strides [1, 0] over one column
    ColByStride,
}

impl Bc {
    /// The shape of the logical values the input holds.
    fn value_shape(self, m: usize, n: usize) -> Vec<usize> {
        match self {
            Bc::Full => vec![m, n],
            Bc::Row | Bc::RowByStride => vec![1, n],
            Bc::Col | Bc::ColByStride => vec![m, 1],
            Bc::Scalar => vec![],
            Bc::Vector => vec![n],
        }
    }
    /// Whether a packed dtype can take this form (its last axis must be a
    /// whole number of bytes with unit stride, or a single value).
    fn packable(self) -> bool {
        !matches!(self, Bc::ColByStride)
    }
    /// The index into the value array of destination element (i, j).
    fn source(self, i: usize, j: usize, n: usize) -> usize {
        match self {
            Bc::Full => i * n + j,
            Bc::Row | Bc::RowByStride | Bc::Vector => j,
            Bc::Col | Bc::ColByStride => i,
            Bc::Scalar => 0,
        }
    }
    fn geo(self, m: usize, n: usize, vpb: usize) -> Geo {
        match self {
            Bc::RowByStride => Geo {
                shape: vec![m, n],
                strides: vec![0, 1],
                offset: 0,
                elems: n.div_ceil(vpb) * vpb,
            },
            Bc::ColByStride => Geo {
                shape: vec![m, n],
                strides: vec![1, 0],
                offset: 0,
                elems: m,
            },
            _ => place(Lay::Contig, &self.value_shape(m, n), vpb),
        }
    }
}

/// `kind` with inputs given as `forms`, against the contiguous call on the
/// inputs broadcast by hand.
fn check_broadcast(
    kind: Kind,
    dtype: DType,
    m: usize,
    n: usize,
    forms: &[Bc],
    out_lay: Lay,
    seed: u64,
) {
    let in_dts = input_dtypes(kind, dtype);
    let shapes: Vec<Vec<usize>> = forms.iter().map(|f| f.value_shape(m, n)).collect();
    let codes = inputs_for(kind, dtype, &shapes, seed);
    // Broadcast by hand to [m, n].
    let full: Vec<Vec<u8>> = in_dts
        .iter()
        .zip(&codes)
        .zip(forms)
        .map(|((&d, c), &f)| {
            let item = Dt::of(d).item;
            let mut v = Vec::with_capacity(m * n * item);
            for i in 0..m {
                for j in 0..n {
                    let s = f.source(i, j, n);
                    v.extend_from_slice(&c[s * item..(s + 1) * item]);
                }
            }
            v
        })
        .collect();
    let want = reference(kind, dtype, &[m, n], &full);
    let out_dtype = result_dtype(kind, dtype).unwrap();
    let out_dt = Dt::of(out_dtype);
    let mut junk = Rng::new(seed ^ 0xBEEF);
    let ins: Vec<Placed> = in_dts
        .iter()
        .zip(&codes)
        .zip(forms)
        .map(|((&d, c), &f)| {
            let vpb = Dt::of(d).vpb;
            let stored = place(Lay::Contig, &f.value_shape(m, n), vpb);
            Placed::aliased(d, &stored, f.geo(m, n, vpb), c, &mut junk)
        })
        .collect();
    let out_geo = place(out_lay, &[m, n], out_dt.vpb);
    for exec in execs() {
        let got = run(&exec, kind, &ins, out_dtype, &out_geo);
        let what = format!(
            "{kind} on {dtype} [{m}, {n}], inputs {forms:?}, destination {out_lay:?}, {exec:?}"
        );
        assert_same(&got, &want, out_dt.item, &what);
    }
}

/// Every assignment of broadcast forms to the inputs of `kind` that the
/// dtypes allow, from a fixed list per arity.
fn broadcast_forms(kind: Kind, dtype: DType) -> Vec<Vec<Bc>> {
    let arity = kind.info().arity;
    let dts = input_dtypes(kind, dtype);
    let all = [
        Bc::Row,
        Bc::Col,
        Bc::Scalar,
        Bc::Vector,
        Bc::RowByStride,
        Bc::ColByStride,
    ];
    let mut out = Vec::new();
    // One input broadcast, the others full.
    for k in 0..arity {
        for &f in &all {
            let mut forms = vec![Bc::Full; arity];
            forms[k] = f;
            out.push(forms);
        }
    }
    // Every input broadcast, differently (an outer product and more).
    for r in 0..all.len() {
        out.push((0..arity).map(|k| all[(r + 2 * k) % all.len()]).collect());
    }
    out.retain(|forms| {
        forms
            .iter()
            .zip(&dts)
            .all(|(f, d)| f.packable() || !Dt::of(*d).packed())
    });
    out
}

#[test]
fn broadcasting_gives_the_bits_of_the_expanded_call() {
    for (i, (kind, dtype)) in cases().into_iter().enumerate() {
        for (j, forms) in broadcast_forms(kind, dtype).into_iter().enumerate() {
            let out_lay = if j % 2 == 0 {
                Lay::Contig
            } else {
                Lay::Reversed
            };
            check_broadcast(
                kind,
                dtype,
                7,
                16,
                &forms,
                out_lay,
                1000 + 50 * i as u64 + j as u64,
            );
        }
    }
}

#[test]
fn large_broadcasts_on_every_thread_count() {
    use DType::*;
    // Column and row inputs: the broadcast loop variants inside the parallel split.
    check_broadcast(
        Kind::Add,
        F32,
        520,
        512,
        &[Bc::Col, Bc::Full],
        Lay::Contig,
        11,
    );
    check_broadcast(
        Kind::Add,
        F32,
        520,
        512,
        &[Bc::Full, Bc::Scalar],
        Lay::Contig,
        12,
    );
    check_broadcast(
        Kind::Fma,
        F16,
        520,
        512,
        &[Bc::Full, Bc::Row, Bc::Col],
        Lay::Transposed,
        13,
    );
    check_broadcast(
        Kind::Select,
        U1,
        520,
        512,
        &[Bc::Col, Bc::Row, Bc::Full],
        Lay::Contig,
        14,
    );
}

// ---- independent values ----------------------------------------------------

fn f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 1000.0)
        .collect()
}

/// f32 add through a transposed input, a broadcast row and a reversed
/// destination, against plain Rust: the engine pairs the right elements.
#[test]
fn f32_add_pairs_the_right_elements() {
    for (m, n) in [(9usize, 31usize), (520, 512)] {
        let mut rng = Rng::new(77);
        // a is stored Fortran-order: a[i][j] at j * m + i.
        let a_store = f32s(&mut rng, m * n);
        let b_row = f32s(&mut rng, n);
        let expected: Vec<f32> = (0..m * n)
            .map(|ij| a_store[(ij % n) * m + ij / n] + b_row[ij % n])
            .collect();
        for exec in execs() {
            let mut out = vec![f32::NAN; m * n];
            {
                let a =
                    ArrayView::from_slice_strided(&a_store, &[m, n], &[1, m as isize], 0).unwrap();
                let b = ArrayView::from_slice(&b_row, &[1, n]).unwrap();
                // The destination reversed along both axes: out[i][j] lands at
                // (m - 1 - i) * n + (n - 1 - j).
                let mut y = ArrayViewMut::from_slice_strided(
                    &mut out,
                    &[m, n],
                    &[-(n as isize), -1],
                    m * n - 1,
                )
                .unwrap();
                elementwise(Kind::Add, &[a, b], &mut y, &exec).unwrap();
            }
            for i in 0..m {
                for j in 0..n {
                    let got = out[(m - 1 - i) * n + (n - 1 - j)];
                    let want = expected[i * n + j];
                    assert_eq!(got.to_bits(), want.to_bits(), "[{i}, {j}] {exec:?}");
                }
            }
        }
    }
}

/// i4 add on packed bytes built by hand: element 0 in the high nibble, sums
/// wrapping in four bits, the destination packed the same way.
#[test]
fn packed_i4_add_matches_hand_packing() {
    let (m, n) = (6usize, 10usize);
    let mut rng = Rng::new(5);
    let a: Vec<u8> = (0..m * n / 2).map(|_| rng.next_u64() as u8).collect();
    let b: Vec<u8> = (0..m * n / 2).map(|_| rng.next_u64() as u8).collect();
    let nib = |bytes: &[u8], k: usize| -> i8 {
        // Element 0 of a byte in its high nibble.
        let v = (bytes[k / 2] >> (4 * (1 - k % 2))) & 0xF;
        ((v << 4) as i8) >> 4
    };
    let mut want = vec![0u8; m * n / 2];
    for k in 0..m * n {
        let s = (nib(&a, k).wrapping_add(nib(&b, k)) as u8) & 0xF;
        want[k / 2] |= s << (4 * (1 - k % 2));
    }
    for exec in execs() {
        let mut y = vec![0u8; m * n / 2];
        {
            let av = ArrayView::new(DType::I4, &[m, n], &[n as isize, 1], 0, &a).unwrap();
            let bv = ArrayView::new(DType::I4, &[m, n], &[n as isize, 1], 0, &b).unwrap();
            let mut yv =
                ArrayViewMut::new(DType::I4, &[m, n], &[n as isize, 1], 0, &mut y).unwrap();
            elementwise(Kind::Add, &[av, bv], &mut yv, &exec).unwrap();
        }
        assert_eq!(y, want, "{exec:?}");
    }
}

/// u1 select on packed bits built by hand (most significant bit first).
#[test]
fn packed_u1_select_matches_hand_packing() {
    let n = 64usize;
    let mut rng = Rng::new(9);
    let cond: Vec<u8> = (0..n).map(|_| (rng.below(3) as u8) * 0x40).collect();
    let a: Vec<u8> = (0..n / 8).map(|_| rng.next_u64() as u8).collect();
    let b: Vec<u8> = (0..n / 8).map(|_| rng.next_u64() as u8).collect();
    let bit = |bytes: &[u8], k: usize| (bytes[k / 8] >> (7 - k % 8)) & 1;
    let mut want = vec![0u8; n / 8];
    for k in 0..n {
        let v = if cond[k] != 0 { bit(&a, k) } else { bit(&b, k) };
        want[k / 8] |= v << (7 - k % 8);
    }
    for exec in execs() {
        let mut y = vec![0u8; n / 8];
        {
            let c = ArrayView::new(DType::Bool, &[n], &[1], 0, &cond).unwrap();
            let av = ArrayView::new(DType::U1, &[n], &[1], 0, &a).unwrap();
            let bv = ArrayView::new(DType::U1, &[n], &[1], 0, &b).unwrap();
            let mut yv = ArrayViewMut::new(DType::U1, &[n], &[1], 0, &mut y).unwrap();
            elementwise(Kind::Select, &[c, av, bv], &mut yv, &exec).unwrap();
        }
        assert_eq!(y, want, "{exec:?}");
    }
}

/// With NaN and infinity inputs the contract leaves only a NaN result's sign
/// and payload open: every layout gives the same non-NaN bits and NaN where
/// the contiguous call gives NaN.
#[test]
fn nan_inputs_give_nan_in_the_same_places() {
    use DType::*;
    for (kind, dtype) in [
        (Kind::Add, F32),
        (Kind::Mul, F16),
        (Kind::Fma, E4m3fn),
        (Kind::Add, Bf16),
    ] {
        let shape = [11usize, 24];
        let arity = kind.info().arity;
        let dt = Dt::of(dtype);
        let mut rng = Rng::new(31);
        // The first draw of the inputs that holds a NaN (most draws do: a
        // random code of f32 or bf16 is a NaN one time in 500 or so).
        let codes: Vec<Vec<u8>> = std::iter::repeat_with(|| {
            (0..arity)
                .map(|_| random_codes(dt, shape[0] * shape[1], &mut rng, true))
                .collect::<Vec<_>>()
        })
        .find(|codes| {
            codes
                .iter()
                .any(|c| c.chunks(dt.item).any(|e| is_nan(dtype, e)))
        })
        .expect("an endless stream of draws");
        let want = reference(kind, dtype, &shape, &codes);
        let mut junk = Rng::new(3);
        for lay in ALL_LAYS {
            let ins: Vec<Placed> = codes
                .iter()
                .map(|c| Placed::new(dtype, place(lay, &shape, dt.vpb), c, &mut junk))
                .collect();
            let out_geo = place(lay, &shape, dt.vpb);
            for exec in execs() {
                let got = run(&exec, kind, &ins, dtype, &out_geo);
                for (i, (g, w)) in got.chunks(dt.item).zip(want.chunks(dt.item)).enumerate() {
                    let same = g == w || (is_nan(dtype, g) && is_nan(dtype, w));
                    assert!(
                        same,
                        "{kind} on {dtype} {lay:?} {exec:?}: element {i} {g:02x?} vs {w:02x?}"
                    );
                }
            }
        }
    }
}

// ---- the helpers themselves --------------------------------------------------

#[test]
fn test_layouts_are_what_they_claim() {
    // Every layout reaches each element once, inside its buffer.
    for shape in [
        vec![13usize, 48],
        vec![5, 6, 16],
        vec![0, 8],
        vec![1, 8],
        vec![4, 1],
        vec![],
    ] {
        for vpb in [1usize, 2, 8] {
            for lay in ALL_LAYS {
                let g = place(lay, &shape, vpb);
                let ps = positions(&g);
                let mut sorted = ps.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), ps.len(), "{lay:?} {shape:?} overlaps");
                assert!(ps.iter().all(|&p| p < g.elems), "{lay:?} {shape:?}");
                if vpb > 1 && !shape.is_empty() {
                    let r = shape.len();
                    assert_eq!(
                        g.strides[r - 1],
                        1,
                        "{lay:?}: the packed axis is contiguous"
                    );
                    assert_eq!(g.offset % vpb, 0);
                    for a in 0..r - 1 {
                        assert_eq!(
                            g.strides[a] % vpb as isize,
                            0,
                            "{lay:?} {shape:?}: rows on bytes"
                        );
                    }
                }
            }
        }
    }
    // The layouts differ from C order where they say so.
    let c = place(Lay::Contig, &[4, 8], 1);
    assert_eq!(c.strides, vec![8, 1]);
    assert_eq!(place(Lay::EveryOther, &[4, 8], 1).strides, vec![16, 2]);
    assert_eq!(place(Lay::Reversed, &[4, 8], 1).strides, vec![-8, -1]);
    assert_eq!(place(Lay::Reversed, &[4, 8], 1).offset, 31);
    assert_eq!(place(Lay::Transposed, &[4, 8], 1).strides, vec![1, 4]);
    assert_eq!(place(Lay::Offset, &[4, 8], 1).offset, 5);
    let p = place(Lay::Padded, &[2, 3, 4], 1);
    assert_ne!(p.strides[1], 4);
    assert_ne!(p.strides[0], 3 * p.strides[1]);
    // Packing puts element 0 in the most significant bits.
    let dt = Dt::of(DType::I4);
    let mut buf = vec![0u8; 1];
    put(dt, &mut buf, 0, &[0xA]);
    put(dt, &mut buf, 1, &[0x3]);
    assert_eq!(buf, [0xA3]);
    let dt = Dt::of(DType::U1);
    let mut buf = vec![0u8; 1];
    put(dt, &mut buf, 0, &[1]);
    put(dt, &mut buf, 6, &[1]);
    assert_eq!(buf, [0b1000_0010]);
}

/// Element bytes at odd addresses: the same bits as an aligned call.
#[test]
fn misaligned_bytes_give_the_same_bits() {
    use DType::*;
    for (kind, dtype) in [
        (Kind::Add, F64),
        (Kind::Mul, C64),
        (Kind::Fma, F32),
        (Kind::Shl, I32),
    ] {
        let shape = [9usize, 10];
        let arity = kind.info().arity;
        let codes = inputs_for(kind, dtype, &vec![shape.to_vec(); arity], 61);
        let want = reference(kind, dtype, &shape, &codes);
        let out_dtype = result_dtype(kind, dtype).unwrap();
        let out_dt = Dt::of(out_dtype);
        let dt = Dt::of(dtype);
        let geo = place(Lay::Contig, &shape, 1);
        for shift in [1usize, 3, 5] {
            let mut junk = Rng::new(shift as u64);
            // Each input `shift` bytes into its buffer.
            let bufs: Vec<Vec<u8>> = codes
                .iter()
                .map(|c| {
                    let mut b = vec![0u8; shift];
                    b.extend(store(dt, &geo, c, &mut junk));
                    b
                })
                .collect();
            for exec in execs() {
                let mut out = vec![SENTINEL; shift + out_dt.buffer_bytes(geo.elems)];
                {
                    let views: Vec<ArrayView<'_>> = bufs
                        .iter()
                        .map(|b| ArrayView::contiguous(dtype, &shape, &b[shift..]).unwrap())
                        .collect();
                    let mut y =
                        ArrayViewMut::contiguous(out_dtype, &shape, &mut out[shift..]).unwrap();
                    elementwise(kind, &views, &mut y, &exec).unwrap();
                }
                assert!(out[..shift].iter().all(|&b| b == SENTINEL));
                let got = load(out_dt, &geo, &out[shift..]);
                assert_same(
                    &got,
                    &want,
                    out_dt.item,
                    &format!("{kind} on {dtype}, {shift} bytes off, {exec:?}"),
                );
            }
        }
    }
}

/// Calls of 16 MiB and more (one flat kernel call per thread) give the bits of
/// the same call cut into small pieces, whatever the destination's alignment,
/// on every tier and thread count.
#[test]
fn large_calls_match_small_pieces() {
    let n = (16 << 20) / 4 + 1000;
    let mut rng = Rng::new(0x5742);
    let a = f32s(&mut rng, n + 3);
    let b = f32s(&mut rng, n + 3);
    // The reference: small pieces on the scalar tier, one thread.
    let piece = 1 << 16;
    let mut want = vec![0f32; n];
    let mut want64 = vec![0i64; n];
    for i0 in (0..n).step_by(piece) {
        let i1 = (i0 + piece).min(n);
        let len = i1 - i0;
        elementwise(
            Kind::Add,
            &[
                ArrayView::from_slice(&a[1 + i0..1 + i1], &[len]).unwrap(),
                ArrayView::from_slice(&b[i0..i1], &[len]).unwrap(),
            ],
            &mut ArrayViewMut::from_slice(&mut want[i0..i1], &[len]).unwrap(),
            &reference_exec(),
        )
        .unwrap();
        for (w, x) in want64[i0..i1].iter_mut().zip(&a[i0..i1]) {
            *w = *x as i64; // Rust's `as`: truncate, saturate, NaN → 0, as the cast states
        }
    }
    for exec in execs() {
        // Destination offsets 0..3 elements: every 4-byte misalignment to 16 bytes.
        for off in 0..4 {
            let mut y = vec![0f32; n + 4];
            elementwise(
                Kind::Add,
                &[
                    ArrayView::from_slice(&a[1..1 + n], &[n]).unwrap(),
                    ArrayView::from_slice(&b[..n], &[n]).unwrap(),
                ],
                &mut ArrayViewMut::from_slice(&mut y[off..off + n], &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            assert!(y[off..off + n] == want[..], "{exec:?} offset {off}");
        }
        // A widening cast: 32 MiB of i64 from 16 MiB of f32.
        let mut z = vec![0i64; n];
        tessera::cast(
            tessera::CastMode::Default,
            &ArrayView::from_slice(&a[..n], &[n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut z, &[n]).unwrap(),
            &exec,
        )
        .unwrap();
        assert!(z == want64, "{exec:?} f32 -> i64");
    }
}
