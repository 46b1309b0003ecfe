//! The map engine against its stated semantics: a program's outputs are the
//! composition of single-kind elementwise and cast calls, one node at a time
//! (the oracle below runs exactly that through the public API), bit for bit,
//! for every layout, thread count (1, 2, 7) and tier this CPU runs. Also the
//! in-place rule, the text form (parse → print → parse) and the refusals, each
//! of which must leave every output untouched.

mod common;

use common::*;
use tessera::map::{map, map_in_place, Node, NodeId, Op, Program, ProgramBuilder, Scalar, Source};
use tessera::{
    available_tiers, reduce_terms, scan_terms, ArrayView, ArrayViewMut, CastMode, DType, Error,
    Exec, Kind, ReduceOp, ScanOp, Terms, Tier,
};
use tessera::{cast, elementwise};
use tessera_testkit::rng::Rng;

const THREADS: [usize; 3] = [1, 2, 7];
/// The engine's parallel threshold, as documented (2^18 indices).
const PARALLEL: usize = 1 << 18;

fn execs() -> Vec<Exec> {
    let mut out = Vec::new();
    for t in available_tiers() {
        for n in THREADS {
            out.push(Exec::on(t).threads(n));
        }
    }
    out
}

fn reference() -> Exec {
    Exec::on(Tier::ALL[0]).threads(1)
}

/// A contiguous array of codes (one code per byte for packed dtypes, in the
/// helpers' convention) in C order.
#[derive(Clone, Debug, PartialEq)]
struct Arr {
    dtype: DType,
    shape: Vec<usize>,
    codes: Vec<u8>,
}

fn packed_bytes(dt: Dt, codes: &[u8]) -> Vec<u8> {
    let g = place(Lay::Contig, &[codes.len() / dt.item], dt.vpb);
    store(dt, &g, codes, &mut Rng::new(1))
}

impl Arr {
    /// Storage bytes of the contiguous array.
    fn bytes(&self) -> Vec<u8> {
        let dt = Dt::of(self.dtype);
        if dt.packed() {
            packed_bytes(dt, &self.codes)
        } else {
            self.codes.clone()
        }
    }
    fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Arr {
        let dt = Dt::of(dtype);
        let n: usize = shape.iter().product();
        let g = place(Lay::Contig, &[n], dt.vpb);
        Arr {
            dtype,
            shape: shape.to_vec(),
            codes: load(dt, &g, bytes),
        }
    }
}

/// Whether two code arrays are equal, a NaN matching any NaN (the one freedom
/// the contract leaves).
fn same(a: &Arr, b: &Arr) -> bool {
    if a.dtype != b.dtype || a.shape != b.shape {
        return false;
    }
    let it = Dt::of(a.dtype).item;
    a.codes
        .chunks(it)
        .zip(b.codes.chunks(it))
        .all(|(x, y)| x == y || (is_nan(a.dtype, x) && is_nan(a.dtype, y)))
}

fn assert_same(got: &Arr, want: &Arr, what: &str) {
    if same(got, want) {
        return;
    }
    let it = Dt::of(got.dtype).item;
    let i = got
        .codes
        .chunks(it)
        .zip(want.codes.chunks(it))
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    panic!(
        "{what}: {} {:?} differs at index {i}: got {:?}, want {:?}",
        got.dtype,
        got.shape,
        &got.codes[i * it..(i + 1) * it],
        &want.codes[i * it..(i + 1) * it]
    );
}

/// The stated semantics, one node at a time through single-kind calls: loads
/// are the inputs as given (the kinds broadcast them), constants one-element
/// arrays, coordinates written out here, kinds `elementwise` and casts
/// `cast`, each into a fresh contiguous array of the outputs' shape.
fn oracle(exec: &Exec, p: &Program, inputs: &[ArrayView<'_>], shape: &[usize]) -> Vec<Arr> {
    enum Val<'a> {
        Input(ArrayView<'a>),
        Own(DType, Vec<usize>, Vec<u8>),
    }
    let n: usize = shape.iter().product();
    let mut vals: Vec<Val<'_>> = Vec::new();
    for node in p.nodes() {
        let v = match &node.op {
            Op::Load(i) => Val::Input(inputs[*i].clone()),
            Op::Const(s) => {
                // A one-element array holding the constant: built by the
                // builder's own rule, a cast from f64 / i64 / u64 / bool.
                let (from, bytes): (DType, Vec<u8>) = match s {
                    Scalar::Bool(b) => (DType::Bool, vec![*b as u8]),
                    Scalar::Int(v) => (DType::I64, v.to_le_bytes().to_vec()),
                    Scalar::UInt(v) => (DType::U64, v.to_le_bytes().to_vec()),
                    Scalar::Float(v) => (DType::F64, v.to_le_bytes().to_vec()),
                };
                let dt = Dt::of(node.dtype);
                let mut out = vec![0u8; dt.buffer_bytes(dt.vpb.max(1))];
                let shp = [1usize];
                cast(
                    CastMode::Default,
                    &ArrayView::contiguous(from, &shp, &bytes).unwrap(),
                    &mut ArrayViewMut::new(node.dtype, &shp, &[1], 0, &mut out).unwrap(),
                    &reference(),
                )
                .unwrap();
                Val::Own(node.dtype, vec![1], out)
            }
            Op::Coord(a) => {
                let inner: usize = shape[a + 1..].iter().product();
                let mut out = Vec::with_capacity(8 * n);
                for f in 0..n {
                    out.extend_from_slice(&(((f / inner) % shape[*a]) as i64).to_le_bytes());
                }
                Val::Own(DType::I64, shape.to_vec(), out)
            }
            Op::Kind(kind, args) => {
                let views: Vec<ArrayView<'_>> =
                    args.iter().map(|a| view_of(&vals[a.index()])).collect();
                let dt = Dt::of(node.dtype);
                let mut out = vec![0u8; dt.buffer_bytes(n)];
                elementwise(
                    *kind,
                    &views,
                    &mut ArrayViewMut::contiguous(node.dtype, shape, &mut out).unwrap(),
                    exec,
                )
                .unwrap();
                Val::Own(node.dtype, shape.to_vec(), out)
            }
            Op::Cast(a, mode) => {
                let src = view_of(&vals[a.index()]);
                let dt = Dt::of(node.dtype);
                let mut out = vec![0u8; dt.buffer_bytes(n)];
                cast(
                    *mode,
                    &src,
                    &mut ArrayViewMut::contiguous(node.dtype, shape, &mut out).unwrap(),
                    exec,
                )
                .unwrap();
                Val::Own(node.dtype, shape.to_vec(), out)
            }
        };
        vals.push(v);
    }
    fn view_of<'a>(v: &'a Val<'_>) -> ArrayView<'a> {
        match v {
            Val::Input(a) => a.clone(),
            Val::Own(d, s, b) => ArrayView::contiguous(*d, s, b).unwrap(),
        }
    }
    p.outputs()
        .iter()
        .map(|o| {
            let v = view_of(&vals[o.index()]);
            // Materialise (a kind or cast node is already contiguous and full).
            assert_eq!(v.shape(), shape, "oracle outputs are computed nodes");
            Arr::from_bytes(v.dtype(), shape, v.data())
        })
        .collect()
}

/// An input array placed in a layout: its buffer and geometry.
struct Placed {
    dtype: DType,
    geo: Geo,
    buf: Vec<u8>,
}

impl Placed {
    fn new(a: &Arr, lay: Lay, seed: u64) -> Placed {
        let dt = Dt::of(a.dtype);
        let geo = place(lay, &a.shape, dt.vpb);
        let buf = store(dt, &geo, &a.codes, &mut Rng::new(seed));
        Placed {
            dtype: a.dtype,
            geo,
            buf,
        }
    }
    fn view(&self) -> ArrayView<'_> {
        ArrayView::new(
            self.dtype,
            &self.geo.shape,
            &self.geo.strides,
            self.geo.offset,
            &self.buf,
        )
        .unwrap()
    }
    fn view_mut(&mut self) -> ArrayViewMut<'_> {
        ArrayViewMut::new(
            self.dtype,
            &self.geo.shape,
            &self.geo.strides,
            self.geo.offset,
            &mut self.buf,
        )
        .unwrap()
    }
    fn read(&self) -> Arr {
        Arr {
            dtype: self.dtype,
            shape: self.geo.shape.clone(),
            codes: load(Dt::of(self.dtype), &self.geo, &self.buf),
        }
    }
}

fn random(dtype: DType, shape: &[usize], seed: u64) -> Arr {
    let n: usize = shape.iter().product();
    Arr {
        dtype,
        shape: shape.to_vec(),
        codes: random_codes(Dt::of(dtype), n, &mut Rng::new(seed), false),
    }
}

/// Run `p` with inputs in layouts `lays` and outputs in layout `out_lay`;
/// returns the outputs' codes.
fn run_map(
    exec: &Exec,
    p: &Program,
    ins: &[Arr],
    lays: &[Lay],
    shape: &[usize],
    out_lay: Lay,
) -> Vec<Arr> {
    let placed: Vec<Placed> = ins
        .iter()
        .zip(lays)
        .enumerate()
        .map(|(k, (a, &l))| Placed::new(a, l, 100 + k as u64))
        .collect();
    let views: Vec<ArrayView<'_>> = placed.iter().map(|p| p.view()).collect();
    let mut outs: Vec<Placed> = p
        .output_dtypes()
        .iter()
        .enumerate()
        .map(|(k, &d)| {
            let zero = Arr {
                dtype: d,
                shape: shape.to_vec(),
                codes: vec![0; shape.iter().product::<usize>() * Dt::of(d).item],
            };
            Placed::new(&zero, out_lay, 7 + k as u64)
        })
        .collect();
    let before: Vec<(Vec<u8>, Vec<bool>)> = outs
        .iter()
        .map(|o| (o.buf.clone(), covered(Dt::of(o.dtype), &o.geo)))
        .collect();
    {
        let mut mv: Vec<ArrayViewMut<'_>> = outs.iter_mut().map(|o| o.view_mut()).collect();
        map(p, &views, &mut mv, exec).unwrap();
    }
    for (o, (b, cov)) in outs.iter().zip(&before) {
        // Bytes that hold no element are never written.
        for (j, c) in cov.iter().enumerate() {
            if !c {
                assert_eq!(o.buf[j], b[j], "a byte outside the output was written");
            }
        }
    }
    outs.iter().map(|o| o.read()).collect()
}

/// The first program: several kinds, a shared intermediate, constants,
/// a comparison, a select and casts, over three f32 inputs.
const F32_PROGRAM: &str = "t = fma(x0, x1, x2) * 0.5f32; \
    y0 = t - sqrt(abs(x0)) / (x1 + 2); \
    y1 = select(min(x0, x1) > x2, t, -x2); \
    y2 = cast<f16>(t) ; y3 = cast_sat<e4m3fn>(x0 * 100f32 - t)";

#[test]
fn fused_results_are_the_composed_single_kind_calls() {
    let f = DType::F32;
    let p = Program::parse(F32_PROGRAM, &[f, f, f]).unwrap();
    assert_eq!(
        p.output_dtypes(),
        vec![DType::F32, DType::F32, DType::F16, DType::E4m3fn]
    );
    for shape in [
        vec![0usize],
        vec![1],
        vec![5],
        vec![3, 1000],
        vec![2, 3, 17],
    ] {
        let ins: Vec<Arr> = (0..3).map(|k| random(f, &shape, k + 1)).collect();
        let views: Vec<ArrayView<'_>> = ins
            .iter()
            .map(|a| ArrayView::contiguous(a.dtype, &a.shape, &a.codes).unwrap())
            .collect();
        for exec in execs() {
            let want = oracle(&exec, &p, &views, &shape);
            let got = run_map(&exec, &p, &ins, &[Lay::Contig; 3], &shape, Lay::Contig);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_same(g, w, &format!("output {k}, shape {shape:?}, {exec:?}"));
            }
        }
    }
}

/// Every kind of the catalogue, on every dtype in a spread of classes that
/// it takes: `y0 = kind(x0, …)` and `y1 = kind(x0, …, 1)` (a constant last
/// argument, the broadcast loop), and for float dtypes a fused pair of the
/// kind and a cast, against the composed calls.
#[test]
fn every_kind_fuses_as_its_single_call() {
    let dtypes = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::Bf16,
        DType::E4m3fn,
        DType::E2m1fn,
        DType::I32,
        DType::U8,
        DType::I4,
        DType::U1,
        DType::Bool,
        DType::C64,
    ];
    let shape = [3usize, 40];
    let mut ran = 0;
    for kind in Kind::ALL {
        let arity = kind.info().arity;
        for d in dtypes {
            let ins: Vec<DType> = tessera_testkit::values::in_dtypes(kind, d);
            let mut b = ProgramBuilder::with_inputs(&ins);
            let loads: Vec<NodeId> = ins
                .iter()
                .enumerate()
                .map(|(j, &dt)| b.load(j, dt).unwrap())
                .collect();
            let Ok(y0) = b.apply(kind, &loads) else {
                continue; // the kind does not take this dtype
            };
            b.output(y0).unwrap();
            let mut args = loads.clone();
            if arity >= 2 {
                // The last input's own dtype (scale's is the real component).
                let c = b.constant(1i64, *ins.last().unwrap()).unwrap();
                *args.last_mut().unwrap() = c;
                let y1 = b.apply(kind, &args).unwrap();
                b.output(y1).unwrap();
            }
            if b.dtype(y0) == Some(d) && d.info().float.is_some() {
                let c = b.cast(y0, DType::F32, CastMode::Saturating).unwrap();
                let y2 = b.apply(Kind::Mul, &[c, c]).unwrap();
                b.output(y2).unwrap();
            }
            let p = b.build().unwrap();
            let data: Vec<Arr> = ins
                .iter()
                .enumerate()
                .map(|(j, &dt)| random(dt, &shape, 31 * j as u64 + kind as u64))
                .collect();
            let bytes: Vec<Vec<u8>> = data.iter().map(|a| a.bytes()).collect();
            let views: Vec<ArrayView<'_>> = data
                .iter()
                .zip(&bytes)
                .map(|(a, b)| ArrayView::contiguous(a.dtype, &a.shape, b).unwrap())
                .collect();
            for exec in [reference(), Exec::on(*available_tiers().last().unwrap())] {
                let want = oracle(&exec, &p, &views, &shape);
                let lays = vec![Lay::Reversed; arity];
                let got = run_map(&exec, &p, &data, &lays, &shape, Lay::EveryOther);
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_same(g, w, &format!("{kind} on {d}, output {k}, {exec:?}\n{p}"));
                }
            }
            ran += 1;
        }
    }
    assert!(ran > 100, "only {ran} kind/dtype pairs ran");
}

/// The same values through every layout (strided, reversed, offset,
/// transposed, padded), broadcast inputs (row, column, rank 0), and packed
/// dtypes, at 1, 2 and 7 threads on every tier, give the bits of the
/// contiguous single-thread scalar call. The large shape passes the
/// parallel threshold.
#[test]
fn layouts_threads_and_tiers_never_change_a_bit() {
    let (f, i4) = (DType::F32, DType::I4);
    let p = Program::parse(
        "t = x0 * x1 + x2; y0 = t - x0; y1 = cast_sat<e2m1fn>(t); \
         y2 = x3 + cast<i4>(coord(1)); y3 = cast<f32>(x3) * x1 > t",
        &[f, f, f, i4],
    )
    .unwrap();
    for (shape, big) in [(vec![6usize, 16], false), (vec![520, 512], true)] {
        assert_eq!(shape.iter().product::<usize>() >= PARALLEL, big);
        let (r, c) = (shape[0], shape[1]);
        // x1 broadcasts as a row, x2 as a column.
        let ins = vec![
            random(f, &shape, 1),
            random(f, &[c], 2),
            random(f, &[r, 1], 3),
            random(i4, &shape, 4),
        ];
        let want = run_map(
            &reference(),
            &p,
            &ins,
            &[Lay::Contig; 4],
            &shape,
            Lay::Contig,
        );
        let bytes: Vec<Vec<u8>> = ins.iter().map(|a| a.bytes()).collect();
        let views: Vec<ArrayView<'_>> = ins
            .iter()
            .zip(&bytes)
            .map(|(a, b)| ArrayView::contiguous(a.dtype, &a.shape, b).unwrap())
            .collect();
        let composed = oracle(&reference(), &p, &views, &shape);
        for (k, (g, w)) in want.iter().zip(&composed).enumerate() {
            assert_same(g, w, &format!("output {k} against the composed calls"));
        }
        let lays: &[Lay] = if big {
            &[Lay::Contig, Lay::Reversed, Lay::Transposed]
        } else {
            &ALL_LAYS
        };
        for exec in execs() {
            for &lay in lays {
                for &out_lay in lays {
                    let got = run_map(&exec, &p, &ins, &[lay; 4], &shape, out_lay);
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert_same(
                            g,
                            w,
                            &format!("output {k}, {shape:?} in {lay:?} → {out_lay:?}, {exec:?}"),
                        );
                    }
                }
            }
        }
    }
    // A rank-0 input and zero strides of a broadcast view.
    let p = Program::parse("y0 = x0 * x1 + x1", &[f, f]).unwrap();
    let x0 = random(f, &[4, 33], 9);
    let s = 1.25f32;
    let rank0 = ArrayView::from_slice(std::slice::from_ref(&s), &[]).unwrap();
    let zero =
        ArrayView::from_slice_strided(std::slice::from_ref(&s), &[4, 33], &[0, 0], 0).unwrap();
    let v0 = ArrayView::contiguous(f, &x0.shape, &x0.codes).unwrap();
    let want = oracle(&reference(), &p, &[v0.clone(), rank0.clone()], &[4, 33]);
    for exec in execs() {
        for x1 in [&rank0, &zero] {
            let mut y = vec![0f32; 4 * 33];
            map(
                &p,
                &[v0.clone(), x1.clone()],
                &mut [ArrayViewMut::from_slice(&mut y, &[4, 33]).unwrap()],
                &exec,
            )
            .unwrap();
            let got = Arr::from_bytes(f, &[4, 33], tessera::array::as_bytes(&y));
            assert_same(&got, &want[0], &format!("broadcast scalar, {exec:?}"));
        }
    }
}

#[test]
fn coordinates_are_the_output_indices() {
    let p = Program::parse(
        "y0 = coord(0) * 1000000i64 + coord(1) * 1000 + coord(2); y1 = cast<f32>(coord(2)) + x0",
        &[DType::F32],
    )
    .unwrap();
    let shape = [3usize, 70, 41];
    let x0 = [0.5f32; 41];
    for exec in execs() {
        let mut y0 = vec![0i64; 3 * 70 * 41];
        // y1 written through a reversed, strided view.
        let mut y1 = vec![0f32; 2 * 3 * 70 * 41];
        let n = 3 * 70 * 41;
        map(
            &p,
            &[ArrayView::from_slice(&x0, &[41]).unwrap()],
            &mut [
                ArrayViewMut::from_slice(&mut y0, &shape).unwrap(),
                ArrayViewMut::from_slice_strided(
                    &mut y1,
                    &shape,
                    &[-2 * 70 * 41, -2 * 41, -2],
                    2 * (n - 1),
                )
                .unwrap(),
            ],
            &exec,
        )
        .unwrap();
        for i in 0..3 {
            for j in 0..70 {
                for k in 0..41 {
                    let f = (i * 70 + j) * 41 + k;
                    assert_eq!(y0[f], (i * 1_000_000 + j * 1000 + k) as i64);
                    assert_eq!(y1[2 * (n - 1 - f)], k as f32 + 0.5, "{exec:?}");
                }
            }
        }
    }
    // A coordinate beyond the outputs' rank is refused, nothing written.
    let mut y0 = vec![7i64; 4];
    let mut y1 = vec![7f32; 4];
    let e = map(
        &p,
        &[ArrayView::from_slice(&x0[..4], &[4]).unwrap()],
        &mut [
            ArrayViewMut::from_slice(&mut y0, &[4]).unwrap(),
            ArrayViewMut::from_slice(&mut y1, &[4]).unwrap(),
        ],
        &reference(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node == "coord(1)"),
        "{e}"
    );
    assert_eq!((y0, y1), (vec![7i64; 4], vec![7f32; 4]));
}

#[test]
fn casts_in_both_modes_are_the_cast_calls() {
    let f = DType::F32;
    let p = Program::parse(
        "y0 = cast<e4m3fn>(x0); y1 = cast_sat<e4m3fn>(x0); y2 = cast<i8>(x0 * 1f32); \
         y3 = cast_sat<u8>(x1); y4 = cast<u8>(x1); y5 = cast<e5m2>(x0); y6 = cast_sat<e2m1fn>(x0); \
         y7 = cast<e2m1fn>(x0)",
        &[f, DType::I32],
    )
    .unwrap();
    let vals: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        447.0,
        449.0,
        464.0,
        1000.0,
        -1e6,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-9,
        3.3,
        -7.25,
        6.5,
        200.7,
        -129.5,
        5.0,
    ];
    let ints: Vec<i32> = vec![
        0,
        1,
        -1,
        255,
        256,
        -300,
        1000,
        i32::MIN,
        i32::MAX,
        77,
        3,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
    ];
    let n = vals.len();
    let xs = [
        ArrayView::from_slice(&vals, &[n]).unwrap(),
        ArrayView::from_slice(&ints, &[n]).unwrap(),
    ];
    let dtypes = p.output_dtypes();
    for exec in execs() {
        let want = oracle(&exec, &p, &xs, &[n]);
        let mut outs: Vec<Vec<u8>> = dtypes
            .iter()
            .map(|&d| vec![0; Dt::of(d).buffer_bytes(n)])
            .collect();
        {
            let mut mv: Vec<ArrayViewMut<'_>> = outs
                .iter_mut()
                .zip(&dtypes)
                .map(|(b, &d)| ArrayViewMut::contiguous(d, &[n], b).unwrap())
                .collect();
            map(&p, &xs, &mut mv, &exec).unwrap();
        }
        for (k, &d) in dtypes.iter().enumerate() {
            let got = Arr::from_bytes(d, &[n], &outs[k]);
            assert_same(&got, &want[k], &format!("cast output {k}, {exec:?}"));
        }
        // Saturating and default differ where they should.
        assert_ne!(outs[0], outs[1]);
        assert_ne!(outs[3], outs[4]);
    }
}

#[test]
fn in_place_reads_each_element_before_writing_it() {
    let f = DType::F32;
    let p = Program::parse("y0 = x0 * x1 + 1f32; y1 = x0; y2 = x0 - x1", &[f, f]).unwrap();
    for shape in [vec![7usize], vec![520, 512]] {
        let n: usize = shape.iter().product();
        let a = random(f, &shape, 5);
        let b = random(f, &shape, 6);
        let va = ArrayView::contiguous(f, &shape, &a.codes).unwrap();
        let vb = ArrayView::contiguous(f, &shape, &b.codes).unwrap();
        let mut fresh = vec![vec![0u8; 4 * n]; 3];
        {
            let mut mv: Vec<ArrayViewMut<'_>> = fresh
                .iter_mut()
                .map(|o| ArrayViewMut::contiguous(f, &shape, o).unwrap())
                .collect();
            map(&p, &[va.clone(), vb.clone()], &mut mv, &reference()).unwrap();
        }
        assert_eq!(fresh[1], a.codes, "y1 = x0 copies the input");
        for exec in execs() {
            for lay in [Lay::Contig, Lay::Reversed, Lay::EveryOther] {
                // Output 0 holds x0 and is overwritten by y0; y1 must still get x0.
                let mut o0 = Placed::new(&a, lay, 1);
                let mut o1 = Placed::new(
                    &Arr {
                        codes: vec![0; 4 * n],
                        ..a.clone()
                    },
                    lay,
                    2,
                );
                let mut o2 = Placed::new(
                    &Arr {
                        codes: vec![0; 4 * n],
                        ..a.clone()
                    },
                    lay,
                    3,
                );
                {
                    let mut mv = [o0.view_mut(), o1.view_mut(), o2.view_mut()];
                    map_in_place(
                        &p,
                        &[Source::Output(0), Source::View(vb.clone())],
                        &mut mv,
                        &exec,
                    )
                    .unwrap();
                }
                for (k, o) in [&o0, &o1, &o2].iter().enumerate() {
                    assert_eq!(
                        o.read().codes,
                        fresh[k],
                        "in place, output {k}, {lay:?}, {exec:?}"
                    );
                }
            }
        }
    }
    // An output index that does not exist is refused, nothing written.
    let mut y = [[9f32; 3]; 3];
    let [a0, a1, a2] = &mut y;
    let x = [1f32; 3];
    let e = map_in_place(
        &p,
        &[
            Source::Output(3),
            Source::View(ArrayView::from_slice(&x, &[3]).unwrap()),
        ],
        &mut [
            ArrayViewMut::from_slice(a0, &[3]).unwrap(),
            ArrayViewMut::from_slice(a1, &[3]).unwrap(),
            ArrayViewMut::from_slice(a2, &[3]).unwrap(),
        ],
        &reference(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node == "x0"),
        "{e}"
    );
    assert_eq!(y, [[9f32; 3]; 3]);
}

#[test]
fn text_round_trips() {
    let f = DType::F32;
    let cases: &[(&str, &[DType])] = &[
        (F32_PROGRAM, &[f, f, f]),
        (
            "y0 = x0 - (x1 - x0); y1 = (x0 - x1) - x0; y2 = x0 / (x1 * x0)",
            &[f, f],
        ),
        ("y0 = -0.0f32 * x0 + -1e-7f32 - -x0 % 3f32", &[f]),
        ("y0 = neg(2.5f32) + -(1f32) + --x0", &[f]),
        (
            "y0 = x0 * inf_f32 + -inf_f32 * nan_f32; y1 = x0 < 1e30f32",
            &[f],
        ),
        (
            "y0 = cast<e4m3fn>(x0) * 0.5_e4m3fn + 2e4m3fn; y1 = 1.5e5m2 + cast_sat<e5m2>(x0)",
            &[f],
        ),
        (
            "t = x0 + 1; u = t * t; y0 = u + t; y1 = u; y2 = select(x1, t, u)",
            &[DType::I32, DType::Bool],
        ),
        (
            "y0 = x0 * 3; y1 = (x0 > 2) == x1; y2 = x0 + 18446744073709551615u64 * 0",
            &[DType::U64, DType::Bool],
        ),
        (
            "y0 = -9223372036854775808i64 + coord(0) + x0",
            &[DType::I64],
        ),
        (
            "y0 = fma(x0, x1, x0) # a comment\n; y1 = clamp(x0, 0, 1);",
            &[f, f],
        ),
        ("y0 = cast<f16>(coord(1)) * x0 >= x0 != true", &[DType::F16]),
        ("y0 = x1; y1 = x0", &[f, DType::I4]),
    ];
    for (text, ins) in cases {
        let p = Program::parse(text, ins).unwrap_or_else(|e| panic!("{text}: {e}"));
        let printed = p.to_string();
        let q = Program::parse(&printed, ins).unwrap_or_else(|e| panic!("{printed}: {e}"));
        assert_eq!(p, q, "{text}\n → {printed}\n → {q}");
        assert_eq!(q.to_string(), printed);
    }
    // Precedence and folding, as documented.
    let p = Program::parse("y0 = -0.0f32 - x0 * 2 + x0", &[f]).unwrap();
    let q = Program::parse("y0 = ((-0.0f32) - (x0 * 2f32)) + x0", &[f]).unwrap();
    assert_eq!(p, q);
    assert_eq!(p.to_string(), "y0 = -0.0f32 - x0 * 2f32 + x0");
    let neg = Program::parse("y0 = -(0.0f32) + x0", &[f]).unwrap();
    assert_ne!(neg, Program::parse("y0 = -0.0f32 + x0", &[f]).unwrap());
    assert_eq!(neg.to_string(), "y0 = neg(0.0f32) + x0");
    // A builder-made program prints into text that parses back equal.
    let mut b = ProgramBuilder::new();
    let x1 = b.load(1, DType::F64).unwrap();
    let x0 = b.load(0, DType::F64).unwrap();
    let c = b.constant(0.25f64, DType::F64).unwrap();
    let m = b.apply(Kind::Mul, &[x0, c]).unwrap();
    let s = b.apply_named("sub", &[m, x1]).unwrap();
    let h = b.cast(s, DType::Bf16, CastMode::Saturating).unwrap();
    b.output(h).unwrap();
    b.output(m).unwrap();
    let p = b.build().unwrap();
    assert_eq!(
        p.to_string(),
        "t2 = x0 * 0.25f64; y0 = cast_sat<bf16>(t2 - x1); y1 = t2"
    );
    assert_eq!(Program::parse(&p.to_string(), p.inputs()).unwrap(), p);
    // Program::new over raw nodes is the same program.
    let nodes = vec![
        Node {
            op: Op::Load(0),
            dtype: DType::F64,
        },
        Node {
            op: Op::Const(Scalar::Float(0.25)),
            dtype: DType::F64,
        },
        Node {
            op: Op::Kind(Kind::Mul, vec![NodeId::new(0), NodeId::new(1)]),
            dtype: DType::F64,
        },
        Node {
            op: Op::Load(1),
            dtype: DType::F64,
        },
        Node {
            op: Op::Kind(Kind::Sub, vec![NodeId::new(2), NodeId::new(3)]),
            dtype: DType::F64,
        },
        Node {
            op: Op::Cast(NodeId::new(4), CastMode::Saturating),
            dtype: DType::Bf16,
        },
    ];
    let r = Program::new(
        &[DType::F64, DType::F64],
        nodes,
        vec![NodeId::new(5), NodeId::new(2)],
    )
    .unwrap();
    assert_eq!(r, p);
}

fn program_error(text: &str, ins: &[DType]) -> (String, String) {
    match Program::parse(text, ins) {
        Err(Error::Program { node, reason }) => (node, reason),
        other => panic!("{text}: expected a program error, got {other:?}"),
    }
}

#[test]
fn malformed_programs_are_refused_naming_the_node() {
    let (f, i) = (DType::F32, DType::I32);
    // Syntax: the offset and the token.
    for (text, offset, token) in [
        ("y0 = x0 +", 9usize, "end of input"),
        ("y0 = x0 $ x1", 8, "$"),
        ("y0 = 1.5q32", 5, "1.5q32"),
        ("y0 = cast<f99>(x0)", 10, "f99"),
        ("y0 = (x0 + x1", 13, "end of input"),
        ("y0 = x0 x1", 8, "x1"),
        ("x0 = x1", 0, "x0"),
        ("t = x0; t = x1; y0 = t", 8, "t"),
    ] {
        match Program::parse(text, &[f, f]) {
            Err(Error::Parse {
                offset: o,
                token: t,
                ..
            }) => {
                assert_eq!((o, t.as_str()), (offset, token), "{text}")
            }
            other => panic!("{text}: expected a parse error, got {other:?}"),
        }
    }
    // Types, arity, names: the node's text.
    let cases: &[(&str, &[DType], &str, &str)] = &[
        (
            "y0 = exp2(x0) + x0 * (x0 + x1)",
            &[f, i],
            "x0 + x1",
            "dtype",
        ),
        ("y0 = fma(x0, x1)", &[f, f], "fma(x0, x1)", "takes 3"),
        (
            "y0 = frobnicate(x0)",
            &[f],
            "frobnicate(x0)",
            "unknown kind",
        ),
        ("y0 = x0 + t", &[f], "t", "unknown variable"),
        ("y0 = x0 + x5", &[f], "x5", "unknown variable"),
        ("t = t + x0; y0 = t", &[f], "t", "unknown variable"),
        ("y0 = 2", &[f], "2", "untyped"),
        ("y0 = x0 + 0.5", &[i], "0.5", "float constant"),
        ("y0 = x0 + 300", &[DType::U8], "300", "range"),
        (
            "y0 = select(x0, x0, x0)",
            &[f],
            "select(x0, x0, x0)",
            "bool",
        ),
        ("y1 = x0", &[f], "y0", "never assigned"),
        (
            "y0 = logical_not(x0) + 1f32",
            &[f],
            "logical_not(x0) + 1f32",
            "dtype",
        ),
    ];
    for (text, ins, node, why) in cases {
        if text.contains("exp2") && Kind::from_name("exp2").is_none() {
            let (n, r) = program_error(text, ins);
            assert_eq!(n, "exp2(x0)", "{text}: {r}");
            continue;
        }
        let (n, r) = program_error(text, ins);
        assert_eq!(&n, node, "{text}: {r}");
        assert!(r.contains(why), "{text}: `{r}` should say `{why}`");
    }
    assert!(matches!(
        Program::parse("", &[f]),
        Err(Error::Program { .. })
    ));
    // Raw nodes: a forward reference (a cycle) and a wrong stated dtype.
    let e = Program::new(
        &[f],
        vec![
            Node {
                op: Op::Kind(Kind::Neg, vec![NodeId::new(1)]),
                dtype: f,
            },
            Node {
                op: Op::Load(0),
                dtype: f,
            },
        ],
        vec![NodeId::new(0)],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, reason } if node == "node 0" && reason.contains("before")),
        "{e}"
    );
    let e = Program::new(
        &[f],
        vec![
            Node {
                op: Op::Load(0),
                dtype: f,
            },
            Node {
                op: Op::Kind(Kind::Lt, vec![NodeId::new(0), NodeId::new(0)]),
                dtype: f,
            },
        ],
        vec![NodeId::new(1)],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node == "x0 < x0"),
        "{e}"
    );
    let e = Program::new(
        &[f],
        vec![Node {
            op: Op::Load(0),
            dtype: i,
        }],
        vec![NodeId::new(0)],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Program { node, .. } if node == "x0"),
        "{e}"
    );
    // The builder refuses ids it does not hold.
    let mut b = ProgramBuilder::new();
    let x = b.load(0, f).unwrap();
    assert!(b.apply(Kind::Add, &[x, NodeId::new(9)]).is_err());
    assert!(b.output(NodeId::new(9)).is_err());
    assert!(ProgramBuilder::new().build().is_err());
}

#[test]
fn call_refusals_write_nothing() {
    let f = DType::F32;
    let p = Program::parse("y0 = x0 + x1; y1 = cast<f16>(x0)", &[f, f]).unwrap();
    let a = [1f32; 12];
    let b = [2f32; 4];
    let h = half::f16::from_f32(5.0);
    let va = ArrayView::from_slice(&a, &[3, 4]).unwrap();
    let vb = ArrayView::from_slice(&b, &[4]).unwrap();
    let ok = [va.clone(), vb.clone()];
    // Shape mismatch: an input that does not broadcast.
    let vbad = ArrayView::from_slice(&b[..3], &[3]).unwrap();
    let e = try_call(
        &p,
        &[va.clone(), vbad],
        &[3, 4],
        &[4, 1],
        DType::F16,
        &[3, 4],
    );
    assert!(
        matches!(&e, Error::Shape { operand, .. } if operand.contains("input 1")),
        "{e}"
    );
    // Outputs of different shapes.
    let e = try_call(&p, &ok, &[3, 4], &[4, 1], DType::F16, &[12]);
    assert!(
        matches!(&e, Error::Shape { operand, .. } if operand == "output 1"),
        "{e}"
    );
    // An output of the wrong dtype names the output and its node.
    let e = try_call(&p, &ok, &[3, 4], &[4, 1], DType::Bf16, &[3, 4]);
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, .. } if operand == "output 1 (y1 = cast<f16>(x0))"),
        "{e}"
    );
    // An input of the wrong dtype.
    let ai = [1i32; 12];
    let vi = ArrayView::from_slice(&ai, &[3, 4]).unwrap();
    let e = try_call(&p, &[vi, vb.clone()], &[3, 4], &[4, 1], DType::F16, &[3, 4]);
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, .. } if operand.contains("input 0")),
        "{e}"
    );
    // The wrong number of inputs.
    let e = try_call(
        &p,
        std::slice::from_ref(&va),
        &[3, 4],
        &[4, 1],
        DType::F16,
        &[3, 4],
    );
    assert!(
        matches!(&e, Error::Program { node, .. } if node == "program"),
        "{e}"
    );
    // An output that reaches an element twice.
    let e = try_call(&p, &ok, &[3, 4], &[0, 1], DType::F16, &[3, 4]);
    assert!(
        matches!(&e, Error::Layout { operand, .. } if operand == "output 0"),
        "{e}"
    );
    // An unavailable tier (if this CPU lacks one).
    if let Some(t) = Tier::ALL.iter().find(|t| !t.available()) {
        let mut y0 = [9f32; 12];
        let mut y1 = [h; 12];
        let e = map(
            &p,
            &ok,
            &mut [
                ArrayViewMut::from_slice(&mut y0, &[3, 4]).unwrap(),
                ArrayViewMut::from_slice(&mut y1, &[3, 4]).unwrap(),
            ],
            &Exec::on(*t),
        )
        .unwrap_err();
        assert!(matches!(e, Error::TierUnavailable(_)));
        assert_eq!(y0, [9f32; 12]);
    }
}

/// Run `p` into a sentinel-filled f32 output 0 of shape `s0`, strides `st0`,
/// and an output 1 of dtype `d1` (16-bit) and shape `s1`; the call must be
/// refused and write nothing.
fn try_call(
    p: &Program,
    x: &[ArrayView<'_>],
    s0: &[usize],
    st0: &[isize],
    d1: DType,
    s1: &[usize],
) -> Error {
    let h = half::f16::from_f32(5.0);
    let mut y0 = vec![9f32; 24];
    let mut y1 = vec![h; 24];
    let e = {
        let v0 = ArrayViewMut::from_slice_strided(&mut y0, s0, st0, 0).unwrap();
        let v1 = ArrayViewMut::contiguous(d1, s1, unsafe_bytes(&mut y1)).unwrap();
        map(p, x, &mut [v0, v1], &reference()).unwrap_err()
    };
    assert!(y0.iter().all(|&v| v == 9.0), "{e}: output 0 was written");
    assert!(y1.iter().all(|&v| v == h), "{e}: output 1 was written");
    e
}

/// The bytes of an f16 slice, writable.
fn unsafe_bytes(s: &mut [half::f16]) -> &mut [u8] {
    // SAFETY: f16 is two plain bytes; every bit pattern is a valid f16.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, s.len() * 2) }
}

/// Fused against separate passes on 16M f32 (run with `--release --ignored
/// --nocapture`); prints the ratio, asserts nothing about time.
#[test]
#[ignore]
fn fused_against_separate_passes() {
    use std::time::Instant;
    let n = 1usize << 24;
    let f = DType::F32;
    let p = Program::parse("y0 = (x0 * x1 + x2) * x0 - x1", &[f, f, f]).unwrap();
    assert_eq!(
        p.nodes()
            .iter()
            .filter(|n| matches!(n.op, Op::Kind(..)))
            .count(),
        4
    );
    let xs: Vec<Vec<f32>> = (0..3)
        .map(|k| (0..n).map(|i| ((i * 7 + k) % 1000) as f32 * 1e-3).collect())
        .collect();
    let views: Vec<ArrayView<'_>> = xs
        .iter()
        .map(|x| ArrayView::from_slice(x, &[n]).unwrap())
        .collect();
    let mut y = vec![0f32; n];
    let mut t1 = vec![0f32; n];
    let mut t2 = vec![0f32; n];
    let mut t3 = vec![0f32; n];
    for threads in [1usize, 0] {
        let exec = Exec::default().threads(threads);
        let mut best = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            let s = Instant::now();
            map(
                &p,
                &views,
                &mut [ArrayViewMut::from_slice(&mut y, &[n]).unwrap()],
                &exec,
            )
            .unwrap();
            best.0 = best.0.min(s.elapsed().as_secs_f64());
            let s = Instant::now();
            elementwise(
                Kind::Mul,
                &[views[0].clone(), views[1].clone()],
                &mut ArrayViewMut::from_slice(&mut t1, &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            elementwise(
                Kind::Add,
                &[flat(&t1), views[2].clone()],
                &mut ArrayViewMut::from_slice(&mut t2, &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            elementwise(
                Kind::Mul,
                &[flat(&t2), views[0].clone()],
                &mut ArrayViewMut::from_slice(&mut t3, &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            elementwise(
                Kind::Sub,
                &[flat(&t3), views[1].clone()],
                &mut ArrayViewMut::from_slice(&mut t1, &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            best.1 = best.1.min(s.elapsed().as_secs_f64());
        }
        assert_eq!(tessera::array::as_bytes(&y), tessera::array::as_bytes(&t1));
        println!(
            "threads {threads}: fused {:.1} ms, four passes {:.1} ms, ratio {:.2}",
            best.0 * 1e3,
            best.1 * 1e3,
            best.1 / best.0
        );
    }
}

fn flat(x: &[f32]) -> ArrayView<'_> {
    ArrayView::from_slice(x, &[x.len()]).unwrap()
}

/// Reduce (or scan) into fresh contiguous destinations of `dtypes`; the
/// destinations' bytes.
fn reduce_into(
    exec: &Exec,
    terms: tessera::Terms<'_, '_>,
    axes: &[usize],
    ops: &[(ReduceOp, DType)],
    out_shape: &[usize],
) -> Vec<Vec<u8>> {
    let n: usize = out_shape.iter().product();
    let mut bufs: Vec<Vec<u8>> = ops
        .iter()
        .map(|&(_, d)| vec![0xA5; n * Dt::of(d).item])
        .collect();
    let mut views: Vec<ArrayViewMut<'_>> = bufs
        .iter_mut()
        .zip(ops)
        .map(|(b, &(_, d))| ArrayViewMut::contiguous(d, out_shape, b).unwrap())
        .collect();
    let mut outs: Vec<(ReduceOp, &mut ArrayViewMut<'_>)> = ops
        .iter()
        .map(|&(op, _)| op)
        .zip(views.iter_mut())
        .collect();
    reduce_terms(axes, terms, &mut outs, exec).unwrap();
    drop(outs);
    drop(views);
    bufs
}

fn same_bytes(dtype: DType, got: &[u8], want: &[u8]) -> bool {
    let it = Dt::of(dtype).item;
    got.chunks(it)
        .zip(want.chunks(it))
        .all(|(x, y)| x == y || (is_nan(dtype, x) && is_nan(dtype, y)))
}

/// A reduction of a program's output has the bits of that output mapped into
/// an array (by `map`, whose results the tests above pin to the composed
/// single-kind calls), then reduced (whose lane order tests/reduce.rs pins to
/// an independent model): for several programs (float, narrow float, integer
/// and coordinate-only outputs), axis sets, layouts, tiers and thread counts,
/// and several reductions of one loop.
#[test]
fn reductions_of_a_program_are_its_output_mapped_then_reduced() {
    use tessera::ReduceOp as R;
    let f = DType::F32;
    let floats = [
        (R::Sum, f),
        (R::Max, f),
        (R::ArgMax, DType::I64),
        (R::Logsumexp, DType::F64),
        (R::Variance, f),
        (R::Mean, DType::F16),
        (R::Prod, f),
    ];
    let ints = [
        (R::Sum, DType::I64),
        (R::Min, DType::I32),
        (R::ArgMin, DType::I64),
        (R::Prod, DType::I64),
    ];
    struct Case {
        text: &'static str,
        ins: Vec<DType>,
        shapes: Vec<Vec<usize>>,
        output: usize,
    }
    let cases = [
        Case {
            text: "y0 = exp(x0 - x1) * 0.5f32; y1 = cast<f16>(x0 * x1)",
            ins: vec![f, f],
            shapes: vec![vec![3, 1100, 2], vec![1100, 2]],
            output: 0,
        },
        Case {
            text: "y0 = exp(x0 - x1) * 0.5f32; y1 = cast<f16>(x0 * x1)",
            ins: vec![f, f],
            shapes: vec![vec![3, 1100, 2], vec![3, 1, 1]],
            output: 1,
        },
        Case {
            text: "y0 = x0 * x0 - cast<i16>(coord(1))",
            ins: vec![DType::I16],
            shapes: vec![vec![3, 1100, 2]],
            output: 0,
        },
    ];
    let shape = [3usize, 1100, 2];
    for case in &cases {
        let p = Program::parse(case.text, &case.ins).unwrap();
        let dtype = p.output_dtypes()[case.output];
        let ops: &[(ReduceOp, DType)] = if dtype == DType::I16 { &ints } else { &floats };
        let ins: Vec<Arr> = case
            .ins
            .iter()
            .zip(&case.shapes)
            .enumerate()
            .map(|(k, (&d, s))| random(d, s, 40 + k as u64))
            .collect();
        // The output mapped into an array, on the reference tier.
        let mapped = run_map(
            &reference(),
            &p,
            &ins,
            &vec![Lay::Contig; ins.len()],
            &shape,
            Lay::Contig,
        )
        .swap_remove(case.output);
        let mapped_bytes = mapped.bytes();
        let mv = ArrayView::contiguous(dtype, &shape, &mapped_bytes).unwrap();
        for axes in [vec![1usize], vec![0], vec![0, 1, 2], vec![2, 0], vec![]] {
            let out_shape = tessera::reduce::reduced_shape(&shape, &axes);
            let want = reduce_into(&reference(), Terms::of(&mv), &axes, ops, &out_shape);
            for exec in execs() {
                for lay in [Lay::Contig, Lay::Reversed, Lay::Transposed, Lay::Padded] {
                    let placed: Vec<Placed> = ins
                        .iter()
                        .enumerate()
                        .map(|(k, a)| Placed::new(a, lay, 70 + k as u64))
                        .collect();
                    let views: Vec<ArrayView<'_>> = placed.iter().map(|p| p.view()).collect();
                    let got = reduce_into(
                        &exec,
                        Terms::program(&p, case.output, &views, &shape),
                        &axes,
                        ops,
                        &out_shape,
                    );
                    for ((g, w), &(op, d)) in got.iter().zip(&want).zip(ops) {
                        assert!(
                            same_bytes(d, g, w),
                            "{} of y{} of `{}` along {axes:?}, inputs {lay:?}, {exec:?}",
                            op.name(),
                            case.output,
                            case.text
                        );
                    }
                }
            }
        }
    }
}

/// A program with no input reduces over the loop's shape alone: the sum of
/// coordinates against its exact value, and a scan of a program against the
/// scan of its mapped output.
#[test]
fn programs_without_inputs_and_scans_of_programs() {
    let p = Program::parse(
        "y0 = cast<f64>(coord(0)) * 1000f64 + cast<f64>(coord(2))",
        &[],
    )
    .unwrap();
    let shape = [4usize, 3, 2500];
    for exec in execs() {
        let mut y = vec![0f64; 4];
        reduce_terms(
            &[1, 2],
            Terms::program(&p, 0, &[], &shape),
            &mut [(
                ReduceOp::Sum,
                &mut ArrayViewMut::from_slice(&mut y, &[4]).unwrap(),
            )],
            &exec,
        )
        .unwrap();
        // Every partial sum is an integer below 2^53: exact in any order.
        for (i, &v) in y.iter().enumerate() {
            let want = 3.0 * (2500.0 * 1000.0 * i as f64 + (2499.0 * 2500.0) / 2.0);
            assert_eq!(v, want, "row {i}, {exec:?}");
        }
    }
    // Scans: the mapped output scanned, for a float and an integer program.
    for (text, ins) in [
        ("y0 = sqrt(abs(x0)) - x1", vec![DType::F32, DType::F32]),
        ("y0 = x0 * 7i32", vec![DType::I32, DType::I32]),
    ] {
        let p = Program::parse(text, &ins).unwrap();
        let shape = [3usize, 5000];
        let arrs: Vec<Arr> = ins
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                random(
                    d,
                    if k == 0 { &shape[..] } else { &shape[1..] },
                    90 + k as u64,
                )
            })
            .collect();
        let dtype = p.output_dtypes()[0];
        let mapped = run_map(
            &reference(),
            &p,
            &arrs,
            &[Lay::Contig, Lay::Contig],
            &shape,
            Lay::Contig,
        )
        .swap_remove(0);
        let mb = mapped.bytes();
        let mv = ArrayView::contiguous(dtype, &shape, &mb).unwrap();
        let ops: Vec<ScanOp> = if dtype == DType::F32 {
            vec![
                ScanOp::Sum,
                ScanOp::Max,
                ScanOp::Logsumexp,
                ScanOp::Variance,
            ]
        } else {
            vec![ScanOp::Sum, ScanOp::Min]
        };
        let scan_into = |exec: &Exec, terms: Terms<'_, '_>| -> Vec<Vec<u8>> {
            let out_dt = if dtype == DType::F32 {
                DType::F32
            } else {
                DType::I64
            };
            let mut bufs: Vec<Vec<u8>> = ops
                .iter()
                .map(|_| vec![0u8; shape.iter().product::<usize>() * Dt::of(out_dt).item])
                .collect();
            let mut views: Vec<ArrayViewMut<'_>> = bufs
                .iter_mut()
                .map(|b| ArrayViewMut::contiguous(out_dt, &shape, b).unwrap())
                .collect();
            let mut outs: Vec<(ScanOp, &mut ArrayViewMut<'_>)> =
                ops.iter().copied().zip(views.iter_mut()).collect();
            scan_terms(1, terms, None, &mut outs, exec).unwrap();
            drop(outs);
            drop(views);
            bufs
        };
        let want = scan_into(&reference(), Terms::of(&mv));
        for exec in execs() {
            for lay in [Lay::Contig, Lay::Reversed, Lay::Offset] {
                let placed: Vec<Placed> = arrs
                    .iter()
                    .enumerate()
                    .map(|(k, a)| Placed::new(a, lay, 3 + k as u64))
                    .collect();
                let views: Vec<ArrayView<'_>> = placed.iter().map(|p| p.view()).collect();
                let got = scan_into(&exec, Terms::program(&p, 0, &views, &shape));
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    let d = if dtype == DType::F32 {
                        DType::F32
                    } else {
                        DType::I64
                    };
                    assert!(
                        same_bytes(d, g, w),
                        "scan {:?} of `{text}`, {lay:?}, {exec:?}",
                        ops[k]
                    );
                }
            }
        }
    }
}

/// A program's refusals come from the reduction call, before any write.
#[test]
fn program_terms_are_refused_before_any_write() {
    let f = DType::F32;
    let p = Program::parse("y0 = x0 * x1 + cast<f32>(coord(1))", &[f, f]).unwrap();
    let a = vec![1f32; 12];
    let b = vec![2f32; 4];
    let av = ArrayView::from_slice(&a, &[3, 4]).unwrap();
    let bv = ArrayView::from_slice(&b, &[4]).unwrap();
    let bad_b = ArrayView::from_slice(&b, &[2, 2]).unwrap();
    let ints = vec![1i32; 4];
    let iv = ArrayView::from_slice(&ints, &[4]).unwrap();
    let good = [av.clone(), bv.clone()];
    let short = [av.clone()];
    let wrong_shape = [av.clone(), bad_b];
    let wrong_dtype = [av.clone(), iv];
    let cases: Vec<(Terms<'_, '_>, &[usize], &str)> = vec![
        (
            Terms::program(&p, 0, &short, &[3, 4]),
            &[1],
            "takes 2 inputs",
        ),
        (
            Terms::program(&p, 0, &wrong_shape, &[3, 4]),
            &[1],
            "input 1",
        ),
        (
            Terms::program(&p, 0, &wrong_dtype, &[3, 4]),
            &[1],
            "input 1",
        ),
        (Terms::program(&p, 1, &good, &[3, 4]), &[1], "y1"),
        (Terms::program(&p, 0, &good, &[3, 5]), &[1], "input 0"),
        (Terms::program(&p, 0, &good, &[3, 4]), &[2], "axis 2"),
    ];
    for (terms, axes, needle) in cases {
        let mut y = vec![7f32; 3];
        let mut yv = ArrayViewMut::from_slice(&mut y, &[3]).unwrap();
        let err = reduce_terms(
            axes,
            terms,
            &mut [(ReduceOp::Sum, &mut yv)],
            &Exec::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains(needle),
            "{err} should name {needle}"
        );
        assert_eq!(y, vec![7f32; 3], "a refused call wrote");
    }
    // A coordinate axis beyond the loop's rank.
    let q = Program::parse("y0 = cast<f32>(coord(2))", &[]).unwrap();
    let mut y = vec![7f32; 3];
    let mut yv = ArrayViewMut::from_slice(&mut y, &[3]).unwrap();
    let err = reduce_terms(
        &[1],
        Terms::program(&q, 0, &[], &[3, 4]),
        &mut [(ReduceOp::Sum, &mut yv)],
        &Exec::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("coord(2)"), "{err}");
    assert_eq!(y, vec![7f32; 3]);
}

#[test]
fn narrow_integer_bit_kinds_feed_the_next_node_their_values() {
    // On i4 a shift or a bit reversal that sets bit 3 makes a negative
    // value: the comparison after it in the same program must see it (its
    // carrier holds the value, not the bare 4-bit pattern).
    let i4 = DType::I4;
    let p = Program::parse(
        "y0 = shl(x0, x1) < 0; y1 = reverse_bits(x0) < 0; y2 = ones_count(x0); \
         y3 = rotl(x0, x1) < 0; y4 = mul_sat(x0, x0) + 0",
        &[i4, i4],
    )
    .unwrap();
    let shape = [16usize];
    let x0 = Arr {
        dtype: i4,
        shape: shape.to_vec(),
        codes: (0..16u8).collect(),
    };
    let x1 = Arr {
        dtype: i4,
        shape: shape.to_vec(),
        codes: vec![1; 16],
    };
    let val = |c: u8| ((c << 4) as i8) >> 4; // the i4 value of code c
    for exec in execs() {
        let got = run_map(
            &exec,
            &p,
            &[x0.clone(), x1.clone()],
            &[Lay::Contig, Lay::Contig],
            &shape,
            Lay::Contig,
        );
        for c in 0..16u8 {
            let i = c as usize;
            let ctx = format!("code {c:#x} on {exec:?}");
            assert_eq!(got[0].codes[i], (c & 4 != 0) as u8, "shl {ctx}");
            assert_eq!(got[1].codes[i], (c & 1 != 0) as u8, "reverse_bits {ctx}");
            assert_eq!(
                got[2].codes[i] & 0xf,
                c.count_ones() as u8,
                "ones_count {ctx}"
            );
            let rot = ((c << 1) | (c >> 3)) & 0xf;
            assert_eq!(got[3].codes[i], (rot & 8 != 0) as u8, "rotl {ctx}");
            let sq = (val(c) as i32 * val(c) as i32).clamp(-8, 7);
            assert_eq!(val(got[4].codes[i] & 0xf), sq as i8, "mul_sat {ctx}");
        }
    }
}

/// A program keeps its last resolution for the next call of the same loop
/// shape and uniform inputs (a cache that is no part of its value): calls
/// that alternate shapes, broadcasts, a uniform input and an input read in
/// place through one program each get their own results, checked against
/// f32 arithmetic (a product and a sum, each rounded once); a clone compares
/// and hashes equal to the program it was made from.
#[test]
fn a_reused_program_gives_every_call_its_own_shapes_results() {
    use std::hash::{BuildHasher, RandomState};
    let p = Program::parse("y0 = x0 * x1 + x1", &[DType::F32, DType::F32]).unwrap();
    let cases: [(&[usize], &[usize]); 9] = [
        (&[8], &[8]),
        (&[8], &[1]),
        (&[8], &[8]),
        (&[3, 5], &[5]),
        (&[3, 5], &[3, 1]),
        (&[5, 3], &[5, 3]),
        (&[1], &[1]),
        (&[3, 5], &[1]),
        (&[3000], &[3000]),
    ];
    let mut rng = Rng::for_label("map/reuse", 1);
    for tier in tiers() {
        let exec = Exec::on(tier).threads(1);
        for round in 0..2 {
            for (c, &(shape, sh1)) in cases.iter().enumerate() {
                let n: usize = shape.iter().product();
                let n1: usize = sh1.iter().product();
                let x0: Vec<f32> = (0..n).map(|_| (rng.unit() * 8.0 - 4.0) as f32).collect();
                let x1: Vec<f32> = (0..n1).map(|_| (rng.unit() * 8.0 - 4.0) as f32).collect();
                // Element i's x1: the broadcast of sh1 (aligned right) to shape.
                let b = |i: usize| -> f32 {
                    let (mut rest, mut at, mut step) = (i, 0usize, 1usize);
                    for d in (0..shape.len()).rev() {
                        let (e, k) = (shape[d], rest % shape[d]);
                        rest /= e;
                        let off = shape.len() - sh1.len();
                        if d >= off && sh1[d - off] > 1 {
                            at += k * step;
                            step *= sh1[d - off];
                        }
                    }
                    x1[at]
                };
                let want: Vec<f32> = (0..n).map(|i| x0[i] * b(i) + b(i)).collect();
                let v1 = ArrayView::from_slice(&x1, sh1).unwrap();
                let in_place = round == 1 && c % 2 == 0;
                let mut y = if in_place { x0.clone() } else { vec![0f32; n] };
                {
                    let mut out = [ArrayViewMut::from_slice(&mut y, shape).unwrap()];
                    if in_place {
                        let srcs = [Source::Output(0), Source::View(v1)];
                        map_in_place(&p, &srcs, &mut out, &exec).unwrap();
                    } else {
                        let v0 = ArrayView::from_slice(&x0, shape).unwrap();
                        map(&p, &[v0, v1], &mut out, &exec).unwrap();
                    }
                }
                for i in 0..n {
                    assert_eq!(
                        y[i].to_bits(),
                        want[i].to_bits(),
                        "{tier:?} round {round} case {c} ({shape:?}, {sh1:?}) index {i}"
                    );
                }
            }
        }
    }
    let q = p.clone();
    let h = RandomState::new();
    assert!(q == p && h.hash_one(&q) == h.hash_one(&p));
}
