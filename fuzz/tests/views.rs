//! Fuzz target: random views against every public call of `tessera`
//! (elementwise, cast, map and map in place, reduce, scan, contract and
//! matmul, formats encode and decode, quantize and dequantize, the random
//! fill, polyval, the linear-algebra routines). Shapes with 0 and 1 extents, zero, negative, padded and
//! huge strides, offsets, packed dtypes, wrong layouts, mismatched shapes,
//! dtypes that do not fit, destinations that reach an element twice, an
//! input that is an output's own memory. Every destination is filled with
//! canary bytes first. A refusal must leave every destination byte as it
//! was; a success must reach no destination element twice, leave every
//! byte outside its elements alone, and equal the same call on contiguous
//! copies of the operands on the scalar tier, sequentially (layout and tier
//! independence); for a few calls also a slow model.

use tessera::assembly::{AxisPad, Pad, PaddedLoad, Piece, Window};
use tessera::contract::ContractSpec;
use tessera::map::{map_in_place, Program, Source};
use tessera::movement::Combine;
use tessera::quant::QParams;
use tessera::{
    ArrayView, ArrayViewMut, CastMode, Class, DType, Exec, Format, Kind, Par, ReduceOp, ScaleRule,
    ScanOp, Tier,
};
use tessera_fuzz::program::{random_dtype, random_text};
use tessera_fuzz::views::{
    broadcast_shape, check_untouched, check_written, describe, fix_packed_shape, random_shape, Buf,
};
use tessera_fuzz::{run, Plan, Stats, Verdict};
use tessera_testkit::rng::Rng;

type Call = Box<
    dyn Fn(
        &[ArrayView<'_>],
        &mut [ArrayViewMut<'_>],
        &mut [Vec<u8>],
        &Exec,
        bool,
    ) -> tessera::Result<()>,
>;

/// A slow model of a call's first destination from the contiguous inputs.
type Model = fn(&[Buf]) -> Vec<Vec<u8>>;

struct Case {
    what: String,
    ins: Vec<Buf>,
    outs: Vec<Buf>,
    raw: Vec<Vec<u8>>,
    /// Map in place: input `.0` is output `.1`'s memory.
    in_place: Option<(usize, usize)>,
    call: Call,
    model: Option<Model>,
}

fn show(c: &Case) -> String {
    let i: Vec<String> = c.ins.iter().map(describe).collect();
    let o: Vec<String> = c.outs.iter().map(describe).collect();
    let r: Vec<usize> = c.raw.iter().map(|r| r.len()).collect();
    format!(
        "{}; inputs {i:?}; outputs {o:?}; raw outputs of {r:?} bytes; in place {:?}",
        c.what, c.in_place
    )
}

fn wild(rng: &mut Rng) -> bool {
    rng.chance(1, 25)
}

fn input(rng: &mut Rng, d: DType, shape: &[usize]) -> Buf {
    let w = wild(rng);
    Buf::random(rng, d, shape, true, w)
}

fn output(rng: &mut Rng, d: DType, shape: &[usize]) -> Buf {
    let zero = rng.chance(1, 25);
    let w = wild(rng);
    Buf::random(rng, d, shape, zero, w)
}

/// A shape, sometimes not the one asked for.
fn maybe_wrong(rng: &mut Rng, d: DType, shape: &[usize]) -> Vec<usize> {
    if rng.chance(1, 20) {
        random_shape(rng, d, 3, 4)
    } else {
        shape.to_vec()
    }
}

fn pick_dtype(rng: &mut Rng, ok: impl Fn(DType) -> bool) -> DType {
    for _ in 0..6 {
        let d = random_dtype(rng);
        if ok(d) {
            return d;
        }
    }
    random_dtype(rng)
}

fn elementwise_case(rng: &mut Rng) -> Case {
    let kind = *rng.pick(&Kind::ALL);
    let arity = kind.info().arity;
    let d = pick_dtype(rng, |d| {
        tessera::elementwise::call_dtype(kind, &vec![d; arity]).is_ok()
    });
    let od = if rng.chance(1, 15) {
        random_dtype(rng)
    } else {
        tessera::result_dtype(kind, d).unwrap_or(d)
    };
    let shape = random_shape(rng, od, 3, 5);
    let mut ins = Vec::new();
    for _ in 0..arity + (rng.chance(1, 40) as usize) {
        let mut sh = broadcast_shape(rng, &shape);
        fix_packed_shape(rng, d, &mut sh);
        let sh = maybe_wrong(rng, d, &sh);
        ins.push(input(rng, d, &sh));
    }
    let sh = maybe_wrong(rng, od, &shape);
    let outs = vec![output(rng, od, &sh)];
    let model: Option<Model> = (kind == Kind::Add
        && d == DType::F64
        && od == DType::F64
        && ins.len() == 2
        && ins.iter().all(|b| b.shape == outs[0].shape))
    .then_some(add_f64 as Model);
    Case {
        what: format!("elementwise {} of {d} into {od}", kind.name()),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| tessera::elementwise(kind, i, &mut o[0], e)),
        model,
    }
}

fn f64s(b: &Buf) -> Vec<f64> {
    b.bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn add_f64(ins: &[Buf]) -> Vec<Vec<u8>> {
    let (a, b) = (f64s(&ins[0]), f64s(&ins[1]));
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x + y).to_le_bytes().to_vec())
        .collect()
}

fn cast_f32_f64(ins: &[Buf]) -> Vec<Vec<u8>> {
    ins[0]
        .bytes
        .chunks_exact(4)
        .map(|c| {
            (f32::from_le_bytes(c.try_into().unwrap()) as f64)
                .to_le_bytes()
                .to_vec()
        })
        .collect()
}

fn sum_i64(ins: &[Buf]) -> Vec<Vec<u8>> {
    let s = ins[0]
        .bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .fold(0i64, |s, v| s.wrapping_add(v));
    vec![s.to_le_bytes().to_vec()]
}

fn cast_case(rng: &mut Rng) -> Case {
    let (s, d) = if rng.chance(1, 6) {
        (DType::F32, DType::F64)
    } else {
        (random_dtype(rng), random_dtype(rng))
    };
    let mode = if rng.chance(1, 2) {
        CastMode::Default
    } else {
        CastMode::Saturating
    };
    let shape = random_shape(rng, d, 3, 5);
    let mut sh = broadcast_shape(rng, &shape);
    fix_packed_shape(rng, s, &mut sh);
    let sh = maybe_wrong(rng, s, &sh);
    let ins = vec![input(rng, s, &sh)];
    let outs = vec![output(rng, d, &shape)];
    let model: Option<Model> =
        (s == DType::F32 && d == DType::F64 && mode == CastMode::Default && ins[0].shape == shape)
            .then_some(cast_f32_f64 as Model);
    Case {
        what: format!("cast {s} to {d} ({mode:?})"),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| tessera::cast(mode, &i[0], &mut o[0], e)),
        model,
    }
}

fn map_case(rng: &mut Rng) -> Case {
    let t = loop {
        let t = random_text(rng);
        if Program::parse(&t.text, &t.inputs).is_ok() || rng.chance(1, 10) {
            break t;
        }
    };
    let p = match Program::parse(&t.text, &t.inputs) {
        Ok(p) => p,
        Err(_) => Program::parse("y0 = x0", &[DType::F32]).unwrap(),
    };
    let text = p.to_string();
    let odt = p.output_dtypes();
    let mut shape = random_shape(rng, odt[0], 3, 4);
    for &d in odt.iter().chain(p.inputs()) {
        fix_packed_shape(rng, d, &mut shape);
    }
    let mut ins: Vec<Buf> = p
        .inputs()
        .iter()
        .map(|&d| {
            let mut sh = broadcast_shape(rng, &shape);
            fix_packed_shape(rng, d, &mut sh);
            input(rng, d, &sh)
        })
        .collect();
    let outs: Vec<Buf> = odt.iter().map(|&d| output(rng, d, &shape)).collect();
    // In place: an input of an output's dtype reads that output's memory.
    let mut in_place = None;
    if rng.chance(1, 4) {
        let pairs: Vec<(usize, usize)> = (0..ins.len())
            .flat_map(|i| (0..outs.len()).map(move |k| (i, k)))
            .filter(|&(i, k)| p.inputs()[i] == odt[k])
            .collect();
        if !pairs.is_empty() {
            let (i, k) = *rng.pick(&pairs);
            in_place = Some((i, k));
            ins.remove(i);
        }
    }
    let p2 = p.clone();
    Case {
        what: format!("map {text:?} over {shape:?}"),
        ins,
        outs,
        raw: vec![],
        in_place,
        call: Box::new(move |i, o, _, e, reference| {
            let mut srcs: Vec<Source<'_>> = i.iter().cloned().map(Source::View).collect();
            if let Some((at, k)) = in_place {
                if reference {
                    // The reference reads a copy of the output, passed last.
                    let copy = srcs.pop().expect("the copy of the output");
                    srcs.insert(at, copy);
                } else {
                    srcs.insert(at, Source::Output(k));
                }
            }
            map_in_place(&p2, &srcs, o, e)
        }),
        model: None,
    }
}

fn reduce_case(rng: &mut Rng) -> Case {
    let d = random_dtype(rng);
    let shape = random_shape(rng, d, 3, 5);
    let rank = shape.len();
    let mut axes: Vec<usize> = (0..rank).filter(|_| rng.chance(1, 2)).collect();
    if rng.chance(1, 15) {
        axes.push(rng.below_usize(rank + 2));
    }
    let keep = rng.chance(1, 3);
    let out_shape: Vec<usize> = if keep {
        shape
            .iter()
            .enumerate()
            .map(|(k, &e)| if axes.contains(&k) { 1 } else { e })
            .collect()
    } else {
        tessera::reduce::reduced_shape(&shape, &axes)
    };
    let n_ops = 1 + rng.chance(1, 4) as usize;
    let ops: Vec<ReduceOp> = (0..n_ops).map(|_| *rng.pick(&ReduceOp::ALL)).collect();
    let ins = vec![input(rng, d, &shape)];
    let outs: Vec<Buf> = ops
        .iter()
        .map(|op| {
            let od = match op {
                ReduceOp::ArgMax | ReduceOp::ArgMin => DType::I64,
                _ if rng.chance(1, 2) => tessera::reduce::carrier(d),
                _ => random_dtype(rng),
            };
            let sh = maybe_wrong(rng, od, &out_shape);
            output(rng, od, &sh)
        })
        .collect();
    let model: Option<Model> = (d == DType::I64
        && ops == [ReduceOp::Sum]
        && axes.len() == rank
        && (0..rank).all(|k| axes.contains(&k))
        && outs[0].dtype == DType::I64
        && outs[0].shape == out_shape)
        .then_some(sum_i64 as Model);
    let ops2 = ops.clone();
    Case {
        what: format!("reduce {ops:?} of {d} {shape:?} over {axes:?}"),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| {
            let mut refs: Vec<(ReduceOp, &mut ArrayViewMut<'_>)> =
                ops2.iter().copied().zip(o.iter_mut()).collect();
            tessera::reduce_many(&axes, &i[0], &mut refs, e)
        }),
        model,
    }
}

fn scan_case(rng: &mut Rng) -> Case {
    let d = random_dtype(rng);
    let mut shape = random_shape(rng, d, 3, 5);
    if shape.is_empty() {
        shape.push(1 + rng.below_usize(5));
        fix_packed_shape(rng, d, &mut shape);
    }
    let extra = rng.chance(1, 15) as usize;
    let axis = rng.below_usize(shape.len() + extra);
    let op = *rng.pick(&ScanOp::ALL);
    let mut ins = vec![input(rng, d, &shape)];
    let carry = rng.chance(1, 4);
    if carry {
        let c = tessera::reduce::carrier(d);
        let cs = tessera::reduce::reduced_shape(&shape, &[axis.min(shape.len() - 1)]);
        let cs = maybe_wrong(rng, c, &cs);
        ins.push(input(rng, c, &cs));
    }
    let od = if rng.chance(3, 4) {
        tessera::reduce::carrier(d)
    } else {
        random_dtype(rng)
    };
    let sh = maybe_wrong(rng, od, &shape);
    let outs = vec![output(rng, od, &sh)];
    Case {
        what: format!("scan {op:?} of {d} {shape:?} along {axis} (carry {carry})"),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| tessera::scan(op, axis, &i[0], i.get(1), &mut o[0], e)),
        model: None,
    }
}

fn contract_case(rng: &mut Rng) -> Case {
    let int = rng.chance(1, 4);
    let (da, db) = if int {
        (
            *rng.pick(&[DType::I8, DType::U8, DType::I32]),
            *rng.pick(&[DType::I8, DType::I16]),
        )
    } else {
        (
            pick_dtype(rng, |d| d.info().class == Class::Float),
            pick_dtype(rng, |d| d.info().class == Class::Float),
        )
    };
    let acc = if rng.chance(3, 4) {
        tessera::contract::default_acc(da, db)
    } else {
        *rng.pick(&tessera::contract::ACCUMULATORS)
    };
    let batch = rng.chance(1, 4);
    let (m, k, n) = (
        rng.below_usize(6) + 1,
        rng.below_usize(9),
        rng.below_usize(6) + 1,
    );
    let bt = 1 + rng.below_usize(3);
    let (sa, sb, sy) = if batch {
        (vec![bt, m, k], vec![bt, k, n], vec![bt, m, n])
    } else {
        (vec![m, k], vec![k, n], vec![m, n])
    };
    let mut sa = maybe_wrong(rng, da, &sa);
    fix_packed_shape(rng, da, &mut sa);
    let spec = if rng.chance(1, 15) {
        ContractSpec::new(acc).contracting(rng.below_usize(4), rng.below_usize(4))
    } else {
        ContractSpec::matmul(sy.len(), acc)
    };
    let od = if rng.chance(3, 4) {
        acc
    } else {
        random_dtype(rng)
    };
    let mut ins = vec![input(rng, da, &sa), input(rng, db, &sb)];
    let init = rng.chance(1, 4);
    if init {
        let sh = broadcast_shape(rng, &sy);
        ins.push(input(rng, od, &sh));
    }
    let outs = vec![output(rng, od, &sy)];
    // The matmul convenience: the default accumulator, no init.
    let via_matmul = !init && rng.chance(1, 3);
    let s2 = spec.clone();
    Case {
        what: format!(
            "contract {spec:?} of {da} and {db} into {od} (init {init}, matmul {via_matmul})"
        ),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| {
            if via_matmul {
                tessera::matmul(&i[0], &i[1], &mut o[0], e)
            } else {
                tessera::contract(&s2, &i[0], &i[1], i.get(2), &mut o[0], e)
            }
        }),
        model: None,
    }
}

fn encode_case(rng: &mut Rng) -> Case {
    let f = *rng.pick(&Format::ALL);
    let block = f.info().block;
    let d = pick_dtype(rng, |d| d.info().class == Class::Float);
    let lead = rng.below_usize(3);
    let last = if rng.chance(1, 8) {
        rng.below_usize(40)
    } else {
        block * (1 + rng.below_usize(2))
    };
    let bump = (lead == 0 && rng.chance(1, 2)) as usize;
    let r = rng.below_usize(2);
    let mut shape = vec![lead + bump; r];
    shape.push(last);
    fix_packed_shape(rng, d, &mut shape);
    let rule = match rng.below(4) {
        0 => Some(ScaleRule::Floor),
        1 => Some(ScaleRule::Ceil),
        2 => Some(ScaleRule::Nvfp4),
        _ => None,
    };
    let sizes = tessera::formats::encoded_sizes(f, &shape).ok();
    let (mut cb, mut sb) = sizes.map(|s| (s.code_bytes, s.blocks)).unwrap_or((3, 1));
    if rng.chance(1, 15) {
        cb += 1;
    }
    if rng.chance(1, 15) {
        sb = sb.saturating_sub(1);
    }
    let canary =
        |rng: &mut Rng, n: usize| (0..n).map(|_| rng.next_u64() as u8).collect::<Vec<u8>>();
    let raw = vec![canary(rng, cb), canary(rng, sb)];
    let ins = vec![input(rng, d, &shape)];
    Case {
        what: format!("encode {} ({rule:?}) of {d} {shape:?}", f.info().name),
        ins,
        outs: vec![],
        raw,
        in_place: None,
        call: Box::new(move |i, _, r, e, _| {
            let (c, s) = r.split_at_mut(1);
            tessera::formats::encode(f, rule, &i[0], &mut c[0], &mut s[0], e).map(|_| ())
        }),
        model: None,
    }
}

fn decode_case(rng: &mut Rng) -> Case {
    let f = *rng.pick(&Format::ALL);
    let block = f.info().block;
    let od = random_dtype(rng);
    let last = if rng.chance(1, 8) {
        rng.below_usize(40)
    } else {
        block * (1 + rng.below_usize(2))
    };
    let e = 1 + rng.below_usize(2);
    let r = rng.below_usize(2);
    let mut shape = vec![e; r];
    shape.push(last);
    fix_packed_shape(rng, od, &mut shape);
    let sizes = tessera::formats::encoded_sizes(f, &shape).ok();
    let (mut cb, sb) = sizes.map(|s| (s.code_bytes, s.blocks)).unwrap_or((4, 1));
    if rng.chance(1, 15) {
        cb += 1;
    }
    let codes: Vec<u8> = (0..cb).map(|_| rng.next_u64() as u8).collect();
    let scales: Vec<u8> = (0..sb).map(|_| rng.next_u64() as u8).collect();
    let ts = match rng.below(6) {
        0 => None,
        1 => Some(*rng.pick(&[f32::NAN, f32::INFINITY, -1.0, 0.0, 1e-45])),
        _ => Some(0.5 + rng.unit() as f32),
    };
    let outs = vec![output(rng, od, &shape)];
    Case {
        what: format!(
            "decode {} into {od} {shape:?} (tensor scale {ts:?}, {cb} code bytes, {sb} scales)",
            f.info().name
        ),
        ins: vec![],
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |_, o, _, e, _| {
            tessera::formats::decode(f, &codes, &scales, ts, &mut o[0], e)
        }),
        model: None,
    }
}

fn quant_case(rng: &mut Rng) -> Case {
    let quantize = rng.chance(1, 2);
    let fd = pick_dtype(rng, |d| d.info().class == Class::Float);
    let qd = pick_dtype(rng, |d| matches!(d.info().class, Class::Int | Class::Uint));
    let shape = random_shape(rng, qd, 3, 4);
    let scale = *rng.pick(&[0.5, 1.0, 0.0, -1.0, f64::NAN, 1e-300, 3.0]);
    let zero_point = *rng.pick(&[0i64, 3, -128, 255, 1 << 40]);
    let (sd, dd) = if quantize { (fd, qd) } else { (qd, fd) };
    let mut ins_shape = maybe_wrong(rng, sd, &shape);
    fix_packed_shape(rng, sd, &mut ins_shape);
    let ins = vec![input(rng, sd, &ins_shape)];
    let outs = vec![output(rng, dd, &shape)];
    Case {
        what: format!(
            "{} {sd} to {dd}, scale {scale}, zero point {zero_point}",
            if quantize { "quantize" } else { "dequantize" }
        ),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| {
            let p = QParams::Tensor { scale, zero_point };
            if quantize {
                tessera::quant::quantize(&p, &i[0], &mut o[0], e)
            } else {
                tessera::quant::dequantize(&p, &i[0], &mut o[0], e)
            }
        }),
        model: None,
    }
}

fn fill_case(rng: &mut Rng) -> Case {
    let d = random_dtype(rng);
    let shape = random_shape(rng, d, 3, 5);
    let seed = rng.next_u64();
    let outs = vec![output(rng, d, &shape)];
    Case {
        what: format!("random fill of {d} {shape:?}, seed {seed:#x}"),
        ins: vec![],
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |_, o, _, e, _| tessera::fill::random(seed, &mut o[0], e)),
        model: None,
    }
}

fn poly_case(rng: &mut Rng) -> Case {
    let xd = pick_dtype(rng, |d| d.info().class == Class::Float);
    let yd = if rng.chance(3, 4) {
        xd
    } else {
        random_dtype(rng)
    };
    let shape = random_shape(rng, xd, 3, 5);
    let coeffs: Vec<f64> = (0..rng.below_usize(5)).map(|_| rng.spread()).collect();
    let sh = maybe_wrong(rng, xd, &shape);
    let ins = vec![input(rng, xd, &sh)];
    let outs = vec![output(rng, yd, &shape)];
    let c2 = coeffs.clone();
    Case {
        what: format!("polyval {coeffs:?} of {xd} into {yd}"),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| tessera::poly::polyval(&c2, &i[0], &mut o[0], e)),
        model: None,
    }
}

/// A random pad of `rank` axes (sometimes another rank, zero window
/// parameters, windows longer than their axis).
fn random_pad(rng: &mut Rng, rank: usize) -> Pad {
    let rank = if rng.chance(1, 20) {
        rng.below_usize(4)
    } else {
        rank
    };
    Pad {
        axes: (0..rank)
            .map(|_| AxisPad {
                before: rng.below_usize(3),
                after: rng.below_usize(3),
                window: rng.chance(1, 2).then(|| Window {
                    size: rng.below_usize(4),
                    stride: rng.below_usize(3),
                    dilation: rng.below_usize(3),
                }),
            })
            .collect(),
    }
}

fn assembly_case(rng: &mut Rng) -> Case {
    let d = random_dtype(rng);
    let shape = random_shape(rng, d, 3, 4);
    match rng.below(3) {
        0 => {
            let pad = random_pad(rng, shape.len());
            let xs = pad
                .load_shape(&shape)
                .unwrap_or_else(|_| random_shape(rng, d, 4, 4));
            let xd = if rng.chance(9, 10) {
                d
            } else {
                random_dtype(rng)
            };
            let xs2 = maybe_wrong(rng, xd, &xs);
            let ins = vec![input(rng, xd, &xs2)];
            let outs = vec![output(rng, d, &shape)];
            Case {
                what: format!("fold of {xd} {xs:?} into {d} {shape:?} by {pad:?}"),
                ins,
                outs,
                raw: vec![],
                in_place: None,
                call: Box::new(move |i, o, _, e, _| {
                    tessera::assembly::fold(&pad, &i[0], &mut o[0], e)
                }),
                model: None,
            }
        }
        1 => {
            let n = rng.below_usize(4);
            let mut ins = Vec::new();
            let mut starts = Vec::new();
            for _ in 0..n {
                let pd = if rng.chance(19, 20) {
                    d
                } else {
                    random_dtype(rng)
                };
                let ext: Vec<usize> = shape.iter().map(|&e| rng.below_usize(e + 2)).collect();
                let mut ext = maybe_wrong(rng, pd, &ext);
                fix_packed_shape(rng, pd, &mut ext);
                starts.push(
                    shape
                        .iter()
                        .map(|&e| rng.below_usize(e + 1))
                        .collect::<Vec<usize>>(),
                );
                ins.push(input(rng, pd, &ext));
            }
            let outs = vec![output(rng, d, &shape)];
            // A fill of the destination's dtype, now and then of another.
            let fill: Option<(DType, Vec<u8>)> = rng.chance(1, 2).then(|| {
                let fd = if rng.chance(1, 20) {
                    if d == DType::U8 {
                        DType::I8
                    } else {
                        DType::U8
                    }
                } else {
                    d
                };
                let item = fd.info().item_bytes.max(1);
                (fd, (0..item).map(|_| rng.next_u64() as u8 & 0x0f).collect())
            });
            Case {
                what: format!("assemble of {n} pieces into {d} {shape:?} at {starts:?}"),
                ins,
                outs,
                raw: vec![],
                in_place: None,
                call: Box::new(move |i, o, _, e, _| {
                    let pieces: Vec<Piece> = i
                        .iter()
                        .zip(&starts)
                        .map(|(x, s)| Piece {
                            start: s.clone(),
                            x: x.clone(),
                        })
                        .collect();
                    let fv = match &fill {
                        Some((fd, b)) => Some(ArrayView::contiguous(*fd, &[], b)?),
                        None => None,
                    };
                    tessera::assembly::assemble(fv.as_ref(), &pieces, &mut o[0], e)
                }),
                model: None,
            }
        }
        _ => {
            // A padded load reduced by Max over its tap axes.
            let pad = random_pad(rng, shape.len());
            let ls = pad.load_shape(&shape).unwrap_or_default();
            let rank = shape.len().min(ls.len());
            let taps: Vec<usize> = (rank..ls.len()).collect();
            let od = tessera::reduce::carrier(d);
            let ins = vec![input(rng, d, &shape)];
            let outs = vec![output(rng, od, &ls[..rank])];
            Case {
                what: format!("padded load of {d} {shape:?} by {pad:?}, max over {taps:?}"),
                ins,
                outs,
                raw: vec![],
                in_place: None,
                call: Box::new(move |i, o, _, e, _| {
                    let load = PaddedLoad::new(&pad, &i[0], None)?;
                    tessera::reduce(ReduceOp::Max, &taps, &load.view(), &mut o[0], e)
                }),
                model: None,
            }
        }
    }
}

/// i64 positions below `d` mostly, some out of range either way.
fn positions(rng: &mut Rng, shape: &[usize], d: usize) -> Buf {
    let elems: Vec<Vec<u8>> = (0..tessera_fuzz::views::count(shape))
        .map(|_| {
            let p: i64 = match rng.below(10) {
                0 => -1 - rng.below(3) as i64,
                1 => d as i64 + rng.below(3) as i64,
                2 => rng.next_u64() as i64,
                _ => rng.below_usize(d.max(1)) as i64,
            };
            p.to_le_bytes().to_vec()
        })
        .collect();
    let pd = if rng.chance(1, 30) {
        DType::I32
    } else {
        DType::I64
    };
    if pd == DType::I64 {
        Buf::contiguous(pd, shape, &elems)
    } else {
        input(rng, pd, shape)
    }
}

fn movement_case(rng: &mut Rng) -> Case {
    let d = random_dtype(rng);
    let mut shape = random_shape(rng, d, 3, 5);
    if shape.is_empty() {
        shape.push(1 + rng.below_usize(5));
        fix_packed_shape(rng, d, &mut shape);
    }
    let axis = rng.below_usize(shape.len());
    match rng.below(3) {
        0 => {
            // gather: dst and positions of one shape, x differing along axis.
            let mut xs = shape.clone();
            xs[axis] = rng.below_usize(6);
            fix_packed_shape(rng, d, &mut xs);
            let xs = maybe_wrong(rng, d, &xs);
            let ins = vec![
                input(rng, d, &xs),
                positions(rng, &shape, xs.get(axis).copied().unwrap_or(1)),
            ];
            let os = maybe_wrong(rng, d, &shape);
            let outs = vec![output(rng, d, &os)];
            Case {
                what: format!("gather of {d} {xs:?} along {axis} into {shape:?}"),
                ins,
                outs,
                raw: vec![],
                in_place: None,
                call: Box::new(move |i, o, _, e, _| {
                    tessera::movement::gather(axis, &i[0], &i[1], &mut o[0], e)
                }),
                model: None,
            }
        }
        1 => {
            // scatter: updates and positions of one shape into `into`.
            let combine = *rng.pick(&[Combine::Set, Combine::Add, Combine::Max, Combine::Min]);
            let mut us = shape.clone();
            us[axis] = rng.below_usize(7);
            fix_packed_shape(rng, d, &mut us);
            let d_axis = shape[axis];
            let us2 = maybe_wrong(rng, d, &us);
            let ins = vec![
                input(rng, d, &shape),
                positions(rng, &us, d_axis),
                input(rng, d, &us2),
            ];
            let os = maybe_wrong(rng, d, &shape);
            let outs = vec![output(rng, d, &os)];
            Case {
                what: format!("scatter {combine:?} of {d} {us:?} into {shape:?} along {axis}"),
                ins,
                outs,
                raw: vec![],
                in_place: None,
                call: Box::new(move |i, o, _, e, _| {
                    tessera::movement::scatter(combine, axis, &i[0], &i[1], &i[2], &mut o[0], e)
                }),
                model: None,
            }
        }
        _ => {
            // unique over [n; w] u64 words.
            let n = rng.below_usize(40);
            let w = rng.below_usize(4);
            let elems: Vec<Vec<u8>> = (0..n * w)
                .map(|_| rng.below(4).to_le_bytes().to_vec())
                .collect();
            let keys = Buf::contiguous(DType::U64, &[n, w], &elems);
            let m = rng.below_usize(n + 3);
            let ids = maybe_wrong(rng, DType::I64, &[n]);
            let outs = vec![
                output(rng, DType::I64, &ids),
                output(rng, DType::I64, &[m]),
                output(rng, DType::I64, &[m]),
            ];
            Case {
                what: format!("unique of [{n}; {w}] keys, {m} first/counts"),
                ins: vec![keys],
                outs,
                raw: vec![],
                in_place: None,
                call: Box::new(move |i, o, _, e, _| {
                    let (a, rest) = o.split_at_mut(1);
                    let (b, c) = rest.split_at_mut(1);
                    tessera::unique::unique(&i[0], &mut a[0], &mut b[0], &mut c[0], e).map(|_| ())
                }),
                model: None,
            }
        }
    }
}

fn order_case(rng: &mut Rng) -> Case {
    let d = random_dtype(rng);
    let mut shape = random_shape(rng, d, 3, 6);
    if shape.is_empty() {
        shape.push(1 + rng.below_usize(6));
        fix_packed_shape(rng, d, &mut shape);
    }
    let axis = rng.below_usize(shape.len());
    let descending = rng.chance(1, 2);
    let mut ks = shape.clone();
    if rng.chance(1, 3) {
        ks[axis] = rng.below_usize(shape[axis] + 1);
        fix_packed_shape(rng, d, &mut ks);
    }
    let ks = maybe_wrong(rng, d, &ks);
    let ins = vec![input(rng, d, &shape)];
    let with_pos = rng.chance(1, 2);
    let mut outs = vec![output(rng, d, &ks)];
    if with_pos {
        outs.push(output(rng, DType::I64, &ks));
    }
    Case {
        what: format!("sort of {d} {shape:?} along {axis} (descending {descending}) into {ks:?}, positions {with_pos}"),
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| {
            let (v, p) = o.split_at_mut(1);
            tessera::order::sort(axis, descending, &i[0], &mut v[0], p.first_mut(), e)
        }),
        model: None,
    }
}

/// One of the linear-algebra routines on a batch of small matrices:
/// square or not, any dtype (the four it takes, mostly), values that may
/// be NaN, infinite or huge, destinations sometimes of the wrong shape or
/// dtype.
/// A destination of `shape`, sometimes of another.
fn wrong_out(rng: &mut Rng, d: DType, shape: &[usize]) -> Buf {
    let s = maybe_wrong(rng, d, shape);
    output(rng, d, &s)
}

fn linalg_case(rng: &mut Rng) -> Case {
    use tessera::linalg::{self, Triangle};
    let d = pick_dtype(rng, |d| {
        matches!(d, DType::F32 | DType::F64 | DType::C64 | DType::C128)
    });
    let (real, cplx) = match d {
        DType::F32 | DType::C64 => (DType::F32, DType::C64),
        _ => (DType::F64, DType::C128),
    };
    let lead: Vec<usize> = (0..rng.below_usize(3))
        .map(|_| rng.below_usize(3))
        .collect();
    let m = rng.below_usize(6);
    let n = if rng.chance(2, 3) {
        m
    } else {
        rng.below_usize(6)
    };
    let k = m.min(n);
    let with = |tail: &[usize]| -> Vec<usize> { lead.iter().chain(tail).copied().collect() };
    let routine = rng.below(7);
    let a = input(rng, d, &with(&[m, n]));
    let tri = if rng.chance(1, 2) {
        Triangle::Lower
    } else {
        Triangle::Upper
    };
    let (adjoint, unit, vectors, complete) = (
        rng.chance(1, 2),
        rng.chance(1, 3),
        rng.chance(3, 4),
        rng.chance(1, 2),
    );
    let mut ins = vec![a];
    let outs: Vec<Buf> = match routine {
        0 => vec![wrong_out(rng, d, &with(&[m, n]))],
        1 => vec![
            output(rng, d, &with(&[m, n])),
            wrong_out(rng, DType::I64, &with(&[k])),
            output(rng, DType::I64, &with(&[m])),
        ],
        2 => {
            let qc = if complete { m } else { k };
            vec![
                output(rng, d, &with(&[m, qc])),
                wrong_out(rng, d, &with(&[qc, n])),
            ]
        }
        3 => {
            let r = rng.below_usize(4);
            let b = broadcast_shape(rng, &with(&[m, r]));
            let b = if b.len() < 2 { vec![m, r] } else { b };
            ins.push(input(rng, d, &b));
            vec![wrong_out(rng, d, &with(&[m, r]))]
        }
        4 | 6 => {
            let wd = if routine == 4 { real } else { cplx };
            let vd = if routine == 4 { d } else { cplx };
            let mut o = vec![wrong_out(rng, wd, &with(&[m]))];
            if vectors {
                o.push(output(rng, vd, &with(&[m, n])));
            }
            o
        }
        _ => {
            let (uc, vr) = if complete { (m, n) } else { (k, k) };
            let mut o = vec![output(rng, real, &with(&[k]))];
            if vectors {
                o.push(wrong_out(rng, d, &with(&[m, uc])));
                o.push(output(rng, d, &with(&[vr, n])));
            }
            o
        }
    };
    let what = format!(
        "linalg routine {routine} of {d} {:?} (triangle {tri:?}, adjoint {adjoint}, unit {unit}, vectors {vectors}, complete {complete})",
        with(&[m, n])
    );
    Case {
        what,
        ins,
        outs,
        raw: vec![],
        in_place: None,
        call: Box::new(move |i, o, _, e, _| match (routine, o) {
            (0, [l]) => linalg::cholesky(tri, &i[0], l, e),
            (1, [f, p, q]) => linalg::lu(&i[0], f, p, q, e),
            (2, [q, r]) => linalg::qr(&i[0], q, r, e),
            (3, [x]) => linalg::solve_triangular(tri, adjoint, unit, &i[0], &i[1], x, e),
            (4, [w]) => linalg::eigh(&i[0], w, None, e),
            (4, [w, v]) => linalg::eigh(&i[0], w, Some(v), e),
            (6, [w]) => linalg::eig(&i[0], w, None, e),
            (6, [w, v]) => linalg::eig(&i[0], w, Some(v), e),
            (_, [s]) => linalg::svd(&i[0], s, None, e),
            (_, [s, u, vh]) => linalg::svd(&i[0], s, Some((u, vh)), e),
            _ => unreachable!("the destinations made above"),
        }),
        model: None,
    }
}

fn generate(rng: &mut Rng, _: u64) -> Case {
    match rng.below(28) {
        26..=27 => linalg_case(rng),
        22 => assembly_case(rng),
        23 => movement_case(rng),
        24..=25 => order_case(rng),
        0..=4 => elementwise_case(rng),
        5..=7 => cast_case(rng),
        8..=10 => map_case(rng),
        11..=12 => reduce_case(rng),
        13 => scan_case(rng),
        14..=15 => contract_case(rng),
        16 => encode_case(rng),
        17 => decode_case(rng),
        18..=19 => quant_case(rng),
        20 => fill_case(rng),
        _ => poly_case(rng),
    }
}

fn check(c: &Case) -> Result<Verdict, String> {
    let mut outs = c.outs.clone();
    let mut raw = c.raw.clone();
    let exec = Exec::default();
    let result = {
        let ins: Result<Vec<ArrayView<'_>>, _> = c.ins.iter().map(|b| b.view()).collect();
        let mut views = Vec::new();
        let mut bad = None;
        for o in outs.iter_mut() {
            match o.view_mut() {
                Ok(v) => views.push(v),
                Err(e) => bad = Some(e),
            }
        }
        match (ins, bad) {
            (Err(e), _) | (_, Some(e)) => Err(e),
            (Ok(ins), None) => (c.call)(&ins, &mut views, &mut raw, &exec, false),
        }
    };
    if let Err(e) = result {
        for (k, (b, a)) in c.outs.iter().zip(&outs).enumerate() {
            check_untouched(&format!("destination {k} ({e})"), &b.bytes, &a.bytes)?;
        }
        for (k, (b, a)) in c.raw.iter().zip(&raw).enumerate() {
            check_untouched(&format!("raw destination {k} ({e})"), b, a)?;
        }
        return Ok(Verdict::Refused);
    }
    // The same call on contiguous copies, on the scalar tier, sequentially.
    let mut ins: Vec<Buf> = c.ins.iter().map(|b| b.to_contiguous()).collect();
    if let Some((_, k)) = c.in_place {
        ins.push(c.outs[k].to_contiguous());
    }
    let mut ref_outs: Vec<Buf> = c
        .outs
        .iter()
        .map(|b| Buf::zeroed(b.dtype, &b.shape))
        .collect();
    let mut ref_raw: Vec<Vec<u8>> = c.raw.iter().map(|r| vec![0u8; r.len()]).collect();
    let scalar = Exec::on(Tier::Scalar).par(Par::Seq);
    {
        let views: Vec<ArrayView<'_>> = ins
            .iter()
            .map(|b| b.view())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("a contiguous copy is refused: {e}"))?;
        let mut dsts: Vec<ArrayViewMut<'_>> = ref_outs
            .iter_mut()
            .map(|b| b.view_mut())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("a contiguous destination is refused: {e}"))?;
        (c.call)(&views, &mut dsts, &mut ref_raw, &scalar, true).map_err(|e| {
            format!("the call succeeded, its contiguous scalar copy was refused: {e}")
        })?;
    }
    let mut models = 0;
    for (k, (b, a)) in c.outs.iter().zip(&outs).enumerate() {
        check_written(
            &format!("destination {k}"),
            &b.bytes,
            a,
            &ref_outs[k].elements(),
        )?;
        models += 1;
    }
    for (k, (a, w)) in raw.iter().zip(&ref_raw).enumerate() {
        if a != w {
            return Err(format!(
                "raw destination {k} differs from the contiguous scalar call's"
            ));
        }
        models += 1;
    }
    if let Some(model) = c.model {
        let want = model(&ins);
        check_written(
            "destination 0 (slow model)",
            &c.outs[0].bytes,
            &outs[0],
            &want,
        )?;
        models += 1;
    }
    Ok(Verdict::Succeeded { models })
}

fn target(plan: Plan, verbose: bool) -> Stats {
    run("views", plan, verbose, generate, show, check)
}

#[test]
fn views_default_run() {
    let s = target(Plan::default_run(), true);
    assert!(
        s.refusals > 0 && s.successes > 0 && s.model_checks > 0,
        "{s:?}"
    );
}

#[test]
#[ignore = "long run: TESSERA_FUZZ_CASES (default 10^6), TESSERA_FUZZ_SEED"]
fn views_long_run() {
    target(Plan::long_run(), true);
}
