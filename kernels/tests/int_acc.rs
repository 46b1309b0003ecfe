//! Integer accumulators of every width (`i4` … `u64`): each element of a, b
//! and init enters acc as a cast into acc's dtype (integers modulo 2^w,
//! floats truncated toward zero and saturated, a complex number by its real
//! part), the sum is exact modulo 2^w, and dst takes the acc value as a cast
//! does. Checked against a model written here in i128 arithmetic (wrapping,
//! so exact modulo 2^128 and hence modulo 2^w), over every tier, 1, 2 and 7
//! threads, several layouts (packed operands included), batch axes that
//! broadcast, and inits.

mod common;

use common::{load, place, store, Dt, Lay, ALL_LAYS};
use tessera::{contract, ArrayView, ArrayViewMut, Class, ContractSpec, DType, Error, Exec, Par};
use tessera_testkit::rng::Rng;

const ACCS: [DType; 10] = [
    DType::I4,
    DType::U4,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U64,
];

/// Operand dtypes: integers of every width, bool, floats and a complex one.
const INPUTS: [DType; 14] = [
    DType::I4,
    DType::U4,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U64,
    DType::Bool,
    DType::F32,
    DType::F64,
    DType::C64,
];

/// A value as the model reads it: an integer, or a float (the real part of
/// a complex number).
#[derive(Clone, Copy, Debug)]
enum V {
    I(i128),
    F(f64),
}

/// Smallest and largest value of an integer dtype of `bits` bits.
fn range(d: DType) -> (i128, i128) {
    let bits = d.info().bits;
    if d.info().class == Class::Int {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `x` modulo 2^w in the range of `acc`.
fn wrap(x: i128, acc: DType) -> i128 {
    let bits = acc.info().bits;
    let m = 1i128 << bits;
    let r = x.rem_euclid(m);
    if acc.info().class == Class::Int && r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// The cast of a value into an integer `acc`, by the documented rules.
fn into_acc(v: V, acc: DType) -> i128 {
    match v {
        V::I(x) => wrap(x, acc),
        V::F(f) => {
            if f.is_nan() {
                return 0;
            }
            let (lo, hi) = range(acc);
            let t = f.trunc();
            if t <= lo as f64 {
                lo
            } else if t >= hi as f64 {
                hi
            } else {
                t as i128
            }
        }
    }
}

/// Decode one element code (little-endian bytes, or one packed code).
fn decode(d: DType, code: &[u8]) -> V {
    let info = d.info();
    match info.class {
        Class::Bool => V::I((code[0] != 0) as i128),
        Class::Int | Class::Uint => {
            let mut u: u128 = 0;
            for (i, &b) in code.iter().enumerate() {
                u |= (b as u128) << (8 * i);
            }
            let bits = info.bits;
            let u = u & ((1u128 << bits) - 1);
            if info.class == Class::Int && u >> (bits - 1) == 1 {
                V::I(u as i128 - (1i128 << bits))
            } else {
                V::I(u as i128)
            }
        }
        _ => match d {
            DType::F32 | DType::C64 => {
                V::F(f32::from_le_bytes(code[..4].try_into().unwrap()) as f64)
            }
            DType::F64 => V::F(f64::from_le_bytes(code[..8].try_into().unwrap())),
            _ => unreachable!("no other input dtype"),
        },
    }
}

/// Random codes of `d`: integers over their whole range with the extremes
/// often, floats from small fractions to huge magnitudes, infinities and
/// NaN.
fn codes(rng: &mut Rng, d: DType, n: usize) -> Vec<u8> {
    let dt = Dt::of(d);
    let mut out = Vec::with_capacity(n * dt.item);
    for _ in 0..n {
        match d.info().class {
            Class::Bool => out.push([0u8, 1, 2, 0xFF][rng.below_usize(4)]),
            Class::Int | Class::Uint => {
                let (lo, hi) = range(d);
                let x: i128 = match rng.below(6) {
                    0 => lo,
                    1 => hi,
                    2 => rng.range_i64(-3, 3) as i128,
                    _ => rng.next_u64() as i128,
                };
                let x = wrap(x, d);
                let u = x as u128;
                for i in 0..dt.item {
                    out.push((u >> (8 * i)) as u8 & if dt.packed() { 0x0F } else { 0xFF });
                }
            }
            _ => {
                let f = match rng.below(10) {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => f64::NEG_INFINITY,
                    3 => (rng.unit() - 0.5) * 1e30,
                    4 => (rng.unit() - 0.5) * 4e19,
                    _ => (rng.unit() - 0.5) * 600.0,
                };
                match d {
                    DType::F32 => out.extend((f as f32).to_le_bytes()),
                    DType::F64 => out.extend(f.to_le_bytes()),
                    DType::C64 => {
                        out.extend((f as f32).to_le_bytes());
                        out.extend((((rng.unit() - 0.5) * 1e6) as f32).to_le_bytes());
                    }
                    _ => unreachable!(),
                }
            }
        }
    }
    out
}

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in tessera::available_tiers() {
        for p in [Par::Seq, Par::threads(2), Par::threads(7)] {
            v.push(Exec::on(t).par(p));
        }
    }
    v
}

/// The code of a model value in `dst`'s dtype: an integer acc value cast
/// into `dst` (integers wrap, floats round to nearest).
fn dst_code(v: i128, d: DType) -> Vec<u8> {
    match d.info().class {
        Class::Int | Class::Uint => {
            let u = wrap(v, d) as u128;
            let dt = Dt::of(d);
            (0..dt.item)
                .map(|i| (u >> (8 * i)) as u8 & if dt.packed() { 0x0F } else { 0xFF })
                .collect()
        }
        _ => match d {
            DType::F64 => (v as f64).to_le_bytes().to_vec(),
            DType::F32 => (v as f32).to_le_bytes().to_vec(),
            _ => unreachable!(),
        },
    }
}

/// One case: `a` `[B?, m, k]` and `b` `[k, n]` or `[B, k, n]` (batch 1
/// broadcasting), an optional init, into `dst` of `dd`.
struct Case {
    acc: DType,
    da: DType,
    db: DType,
    di: Option<(DType, bool)>,
    dd: DType,
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
}

fn run_case(rng: &mut Rng, c: &Case, lays: (Lay, Lay, Lay), label: &str) {
    let (bt, m, k, n) = (c.batch, c.m, c.k, c.n);
    let (sa, sb, sd) = if bt > 0 {
        (vec![bt, m, k], vec![1, k, n], vec![bt, m, n])
    } else {
        (vec![m, k], vec![k, n], vec![m, n])
    };
    let nb = bt.max(1);
    let (ta, tb, tdd) = (Dt::of(c.da), Dt::of(c.db), Dt::of(c.dd));
    let ca = codes(rng, c.da, nb * m * k);
    let cb = codes(rng, c.db, k * n);
    let ga = place(lays.0, &sa, ta.vpb);
    let gb = place(lays.1, &sb, tb.vpb);
    let gd = place(lays.2, &sd, tdd.vpb);
    let mut junk = Rng::new(7);
    let ba = store(ta, &ga, &ca, &mut junk);
    let bb = store(tb, &gb, &cb, &mut junk);
    let va = ArrayView::new(c.da, &ga.shape, &ga.strides, ga.offset, &ba).unwrap();
    let vb = ArrayView::new(c.db, &gb.shape, &gb.strides, gb.offset, &bb).unwrap();
    // init: the whole destination's shape, or one row broadcast.
    let init = c.di.map(|(d, full)| {
        let shape = if full { sd.clone() } else { vec![n] };
        let cnt: usize = shape.iter().product();
        (d, shape, codes(rng, d, cnt))
    });
    let init_buf = init.as_ref().map(|(d, shape, codes)| {
        let dt = Dt::of(*d);
        store(dt, &place(Lay::Contig, shape, dt.vpb), codes, &mut junk)
    });
    let vi = init
        .as_ref()
        .zip(init_buf.as_ref())
        .map(|((d, shape, _), buf)| ArrayView::contiguous(*d, shape, buf).unwrap());
    // The model.
    let elt = |d: DType, bytes: &[u8], i: usize| {
        let item = Dt::of(d).item;
        decode(d, &bytes[i * item..(i + 1) * item])
    };
    let mut want = Vec::new();
    for bi in 0..nb {
        for i in 0..m {
            for j in 0..n {
                let mut s: i128 = 0;
                for t in 0..k {
                    let x = into_acc(elt(c.da, &ca, (bi * m + i) * k + t), c.acc);
                    let y = into_acc(elt(c.db, &cb, t * n + j), c.acc);
                    s = s.wrapping_add(x.wrapping_mul(y));
                }
                if let Some((d, shape, bytes)) = &init {
                    let p = if shape.len() == 1 {
                        j
                    } else {
                        (bi * m + i) * n + j
                    };
                    s = s.wrapping_add(into_acc(elt(*d, bytes, p), c.acc));
                }
                want.extend(dst_code(wrap(s, c.acc), c.dd));
            }
        }
    }
    let spec = if bt > 0 {
        ContractSpec::new(c.acc).batch(0, 0).contracting(2, 1)
    } else {
        ContractSpec::new(c.acc).contracting(1, 0)
    };
    for exec in execs() {
        let mut bd = store(tdd, &gd, &vec![0u8; tdd.item * nb * m * n], &mut junk);
        let mut vd = ArrayViewMut::new(c.dd, &gd.shape, &gd.strides, gd.offset, &mut bd).unwrap();
        contract(&spec, &va, &vb, vi.as_ref(), &mut vd, &exec).unwrap();
        let got = load(tdd, &gd, &bd);
        if got != want {
            let item = tdd.item;
            let first = (0..want.len() / item)
                .find(|&q| got[q * item..(q + 1) * item] != want[q * item..(q + 1) * item])
                .unwrap();
            panic!(
                "{label}: acc {} a {} b {} init {:?} dst {} shape {bt}x{m}x{k}x{n} {lays:?} {exec:?}: \
                 output {first}: got {:?}, want {:?}",
                c.acc,
                c.da,
                c.db,
                c.di,
                c.dd,
                &got[first * item..(first + 1) * item],
                &want[first * item..(first + 1) * item],
            );
        }
    }
}

/// Every integer accumulator, against operands of every dtype of the list
/// (each as a and as b, with a partner drawn at random), destinations of the
/// accumulator's dtype and of others, inits of any dtype.
#[test]
fn every_width_against_the_model() {
    let mut rng = Rng::for_label("int_acc", tessera_testkit::rng::seed());
    // Sizes: tiny; wide enough for the packed integer kernels and the
    // exact f64 GEMM (rows and columns of at least 8); batched.
    let shapes = [(0, 3, 6, 4), (0, 9, 38, 10), (3, 5, 4, 6)];
    for &acc in &ACCS {
        for (q, &input) in INPUTS.iter().enumerate() {
            let partner = *rng.pick(&INPUTS);
            let (da, db) = if q % 2 == 0 {
                (input, partner)
            } else {
                (partner, input)
            };
            let (batch, m, k, n) = shapes[q % shapes.len()];
            let dd = match rng.below(4) {
                0 => DType::I64,
                1 => DType::F64,
                _ => acc,
            };
            let di = match rng.below(3) {
                0 => None,
                _ => Some((*rng.pick(&INPUTS), rng.chance(1, 2))),
            };
            let lays = (
                *rng.pick(&ALL_LAYS),
                *rng.pick(&ALL_LAYS),
                *rng.pick(&ALL_LAYS),
            );
            let case = Case {
                acc,
                da,
                db,
                di,
                dd,
                batch,
                m,
                k,
                n,
            };
            run_case(&mut rng, &case, lays, "mixed");
        }
    }
}

/// Operands of the accumulator's own dtype and of the packed kernels'
/// (`i8`, `u8`, `i16`), the destination in the accumulator, every layout.
#[test]
fn own_dtype_and_narrow_inputs_every_layout() {
    let mut rng = Rng::for_label("int_acc_own", tessera_testkit::rng::seed());
    for &acc in &ACCS {
        for (q, &lay) in ALL_LAYS.iter().enumerate() {
            let (da, db) = match q % 3 {
                0 => (acc, acc),
                1 => (DType::I8, DType::U8),
                _ => (DType::I16, acc),
            };
            let case = Case {
                acc,
                da,
                db,
                di: Some((acc, true)),
                dd: acc,
                batch: 0,
                m: 9,
                k: 38,
                n: 10,
            };
            let lb = *rng.pick(&ALL_LAYS);
            run_case(&mut rng, &case, (lay, lb, lay), "own");
        }
    }
}

/// Floats saturate at the accumulator's range (not at a wider one) before
/// the products: 1000.9 · 1 into i8 is 127, into u4 15; −3.5 into u8 is 0.
#[test]
fn floats_saturate_into_the_accumulator() {
    let a = [1000.9f64, -3.5, -1e300, f64::NAN];
    let b = [1i8, 1, 1, 1];
    for (acc, want) in [
        (DType::I8, 127i128 - 3 - 128),
        (DType::U8, 255),
        (DType::I4, 7 - 3 - 8),
        (DType::U4, 15),
        (DType::I16, 1000 - 3 - 32768),
        (DType::U32, 1000),
    ] {
        for exec in execs() {
            let mut out = [0i64];
            contract(
                &ContractSpec::new(acc).contracting(0, 0),
                &ArrayView::from_slice(&a, &[4]).unwrap(),
                &ArrayView::from_slice(&b, &[4]).unwrap(),
                None,
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(out[0] as i128, wrap(want, acc), "acc {acc} {exec:?}");
        }
    }
}

/// Accumulators that are not integers of 4 to 64 bits (nor the float ones)
/// are refused before any write.
#[test]
fn other_accumulators_are_refused() {
    for acc in [
        DType::U1,
        DType::Bool,
        DType::F16,
        DType::Bf16,
        DType::E4m3fn,
    ] {
        let x = [1i32, 2];
        let mut out = [77i64];
        let r = contract(
            &ContractSpec::new(acc).contracting(0, 0),
            &ArrayView::from_slice(&x, &[2]).unwrap(),
            &ArrayView::from_slice(&x, &[2]).unwrap(),
            None,
            &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
            &Exec::default(),
        );
        assert!(
            matches!(r, Err(Error::DTypeUnsupported { .. })),
            "acc {acc}: {r:?}"
        );
        assert_eq!(out, [77]);
        assert!(!tessera::contract::ACCUMULATORS.contains(&acc));
    }
}
