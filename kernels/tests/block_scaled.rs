//! Operands with an array of block scales (`Operand::Blocked`): each element
//! enters the accumulator as its cast times its block's scale read into the
//! accumulator (a value's cast, 2^(e − 127) of a UE8M0 code, NaN of 255),
//! the product rounded once. Checked against operands decoded here by that
//! rule (then contracted plainly), against exact integer sums, against the
//! MX formats given as `Operand::Scaled`, and for the refusals.

mod common;

use common::{place, store, Dt, ALL_LAYS};
use tessera::contract::scaled::{contract_scaled, Blocked, Operand, Scaled};
use tessera::{
    contract, formats, ArrayView, ArrayViewMut, ContractSpec, DType, Error, Exec, Format, Par,
};
use tessera_testkit::rng::Rng;

fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in tessera::available_tiers() {
        for p in [Par::Seq, Par::threads(2), Par::threads(7)] {
            v.push(Exec::on(t).par(p));
        }
    }
    v
}

/// The value of a UE8M0 code, by the rule.
fn ue8m0(e: u8) -> f64 {
    if e == 255 {
        f64::NAN
    } else {
        2f64.powi(e as i32 - 127)
    }
}

/// The bits of a contraction's f32/f64 results, every NaN made one pattern
/// (a NaN's payload is not part of the contract).
fn bits(acc: DType, out: &[u8]) -> Vec<u64> {
    match acc {
        DType::F32 => out
            .chunks(4)
            .map(|c| {
                let x = f32::from_le_bytes(c.try_into().unwrap());
                if x.is_nan() {
                    u64::MAX
                } else {
                    x.to_bits() as u64
                }
            })
            .collect(),
        _ => out
            .chunks(8)
            .map(|c| {
                let x = f64::from_le_bytes(c.try_into().unwrap());
                if x.is_nan() {
                    u64::MAX
                } else {
                    x.to_bits()
                }
            })
            .collect(),
    }
}

/// `contract_scaled` of `a` [m, k] and `b` [n, k] (b's last axis contracted
/// too), into a fresh C-order destination of `acc`.
fn run_scaled(
    acc: DType,
    a: &Operand<'_>,
    b: &Operand<'_>,
    m: usize,
    n: usize,
    exec: &Exec,
) -> Vec<u8> {
    let mut out = vec![0u8; m * n * acc.info().item_bytes];
    contract_scaled(
        &ContractSpec::new(acc).contracting(1, 1),
        a,
        b,
        None,
        &mut ArrayViewMut::contiguous(acc, &[m, n], &mut out).unwrap(),
        exec,
    )
    .unwrap();
    out
}

/// A random operand of values in `dt` and scales of `st`, both in random
/// layouts, with the model's decoding (C order, f64 for the accumulator's
/// rounding below).
struct Side {
    dt: DType,
    st: DType,
    vbuf: Vec<u8>,
    vgeo: common::Geo,
    sbuf: Vec<u8>,
    sgeo: common::Geo,
    /// Values and scales as read exactly (f64), C order.
    vals: Vec<f64>,
    scales: Vec<f64>,
}

fn side(rng: &mut Rng, dt: DType, st: DType, rows: usize, k: usize, block: usize) -> Side {
    let mut junk = Rng::new(3);
    let n = rows * k;
    let nb = rows * (k / block);
    let (mut vcodes, mut vals) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let x = (rng.unit() - 0.5) * 2f64.powi(rng.range_i64(-30, 30) as i32);
        match dt {
            DType::F64 => {
                vcodes.extend(x.to_le_bytes());
                vals.push(x);
            }
            DType::F32 => {
                vcodes.extend((x as f32).to_le_bytes());
                vals.push(x as f32 as f64);
            }
            DType::I8 => {
                let v = rng.next_u64() as i8;
                vcodes.push(v as u8);
                vals.push(v as f64);
            }
            DType::C64 => {
                vcodes.extend((x as f32).to_le_bytes());
                vcodes.extend(((rng.unit() - 0.5) as f32).to_le_bytes());
                vals.push(x as f32 as f64);
            }
            _ => unreachable!(),
        }
    }
    let (mut scodes, mut scales) = (Vec::new(), Vec::new());
    for _ in 0..nb {
        match st {
            DType::F64 => {
                let s = (rng.unit() + 0.1) * 2f64.powi(rng.range_i64(-20, 20) as i32);
                scodes.extend(s.to_le_bytes());
                scales.push(s);
            }
            DType::F32 => {
                let s = ((rng.unit() + 0.1) * 2f64.powi(rng.range_i64(-20, 20) as i32)) as f32;
                scodes.extend(s.to_le_bytes());
                scales.push(s as f64);
            }
            _ => {
                // Codes over the whole range now and then (2^-127, 2^127,
                // NaN), mostly moderate.
                let e = match rng.below(12) {
                    0 => 0u8,
                    1 => 254,
                    2 => 255,
                    _ => (100 + rng.below(50)) as u8,
                };
                scodes.push(e);
                scales.push(ue8m0(e));
            }
        }
    }
    let vgeo = place(*rng.pick(&ALL_LAYS), &[rows, k], 1);
    let sgeo = place(*rng.pick(&ALL_LAYS), &[rows, k / block], 1);
    let vbuf = store(Dt::of(dt), &vgeo, &vcodes, &mut junk);
    let sbuf = store(Dt::of(st), &sgeo, &scodes, &mut junk);
    Side {
        dt,
        st,
        vbuf,
        vgeo,
        sbuf,
        sgeo,
        vals,
        scales,
    }
}

impl Side {
    fn blocked(&self, block: usize) -> Blocked<'_> {
        let g = &self.vgeo;
        let s = &self.sgeo;
        Blocked {
            values: ArrayView::new(self.dt, &g.shape, &g.strides, g.offset, &self.vbuf).unwrap(),
            scales: ArrayView::new(self.st, &s.shape, &s.strides, s.offset, &self.sbuf).unwrap(),
            block,
        }
    }
    /// The model: each element's cast into acc times its scale's, rounded
    /// once in acc (f32 arithmetic for an f32 acc, whose single product
    /// rounds once; f64 for f64).
    fn decoded(&self, acc: DType, block: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, &v) in self.vals.iter().enumerate() {
            let s = self.scales[i / block];
            match acc {
                DType::F32 => out.extend(((v as f32) * (s as f32)).to_le_bytes()),
                _ => out.extend((v * s).to_le_bytes()),
            }
        }
        out
    }
}

/// Blocked operands (a, b or both; values of f32, f64, i8, c64; scales as
/// f32, f64 or UE8M0 codes; random layouts) agree bit for bit with plain
/// contractions of the operands decoded by the rule, on every tier and
/// thread count, in f32 and f64.
#[test]
fn blocked_operands_match_the_rule_then_contract() {
    let mut rng = Rng::for_label("blocked", tessera_testkit::rng::seed());
    for &acc in &[DType::F32, DType::F64] {
        for round in 0..12 {
            let (m, n) = ([3, 9, 1][round % 3], [7, 10, 2][round % 3]);
            let block = [32, 4, 1, 16][round % 4];
            let k = block * [3, 1, 5][round % 3];
            let vdt = [DType::F32, DType::F64, DType::I8, DType::C64];
            let sdt = [DType::F32, DType::F64, DType::U8, DType::E8m0fnu];
            let (dt, st) = (*rng.pick(&vdt), *rng.pick(&sdt));
            let sa = side(&mut rng, dt, st, m, k, block);
            let (dt, st) = (*rng.pick(&vdt), *rng.pick(&sdt));
            let sb = side(&mut rng, dt, st, n, k, block);
            let (da, db) = (sa.decoded(acc, block), sb.decoded(acc, block));
            let pa = ArrayView::contiguous(acc, &[m, k], &da).unwrap();
            let pb = ArrayView::contiguous(acc, &[n, k], &db).unwrap();
            let which = round % 3;
            let (oa, ob) = match which {
                0 => (
                    Operand::Blocked(sa.blocked(block)),
                    Operand::Blocked(sb.blocked(block)),
                ),
                1 => (
                    Operand::Blocked(sa.blocked(block)),
                    Operand::Plain(pb.clone()),
                ),
                _ => (
                    Operand::Plain(pa.clone()),
                    Operand::Blocked(sb.blocked(block)),
                ),
            };
            let mut want = vec![0u8; m * n * acc.info().item_bytes];
            contract(
                &ContractSpec::new(acc).contracting(1, 1),
                &pa,
                &pb,
                None,
                &mut ArrayViewMut::contiguous(acc, &[m, n], &mut want).unwrap(),
                &Exec::SEQ,
            )
            .unwrap();
            for exec in execs() {
                let got = run_scaled(acc, &oa, &ob, m, n, &exec);
                assert_eq!(
                    bits(acc, &got),
                    bits(acc, &want),
                    "acc {acc} round {round} a {} / {} b {} / {} {exec:?}",
                    sa.dt,
                    sa.st,
                    sb.dt,
                    sb.st
                );
            }
        }
    }
}

/// Small integers times powers of two: every product and every partial sum
/// is exact in f64, so each output is the exact sum, computed here in i128
/// (in units of the smallest scale).
#[test]
fn exact_sums_against_integer_arithmetic() {
    let mut rng = Rng::new(11);
    let (m, k, n, block) = (5, 64, 6, 8);
    let av: Vec<i8> = (0..m * k).map(|_| rng.next_u64() as i8).collect();
    let bv: Vec<i16> = (0..n * k)
        .map(|_| rng.range_i64(-1000, 1000) as i16)
        .collect();
    // Codes 127..=137: scales 1 … 1024.
    let asc: Vec<u8> = (0..m * k / block)
        .map(|_| 127 + rng.below(11) as u8)
        .collect();
    let bsc: Vec<f64> = (0..n * k / block)
        .map(|_| 2f64.powi(rng.below(11) as i32))
        .collect();
    let oa = Operand::Blocked(Blocked {
        values: ArrayView::from_slice(&av, &[m, k]).unwrap(),
        scales: ArrayView::from_slice(&asc, &[m, k / block]).unwrap(),
        block,
    });
    let ob = Operand::Blocked(Blocked {
        values: ArrayView::from_slice(&bv, &[n, k]).unwrap(),
        scales: ArrayView::from_slice(&bsc, &[n, k / block]).unwrap(),
        block,
    });
    for exec in execs() {
        let got = run_scaled(DType::F64, &oa, &ob, m, n, &exec);
        for i in 0..m {
            for j in 0..n {
                let s: i128 = (0..k)
                    .map(|t| {
                        let x = av[i * k + t] as i128
                            * (1i128 << (asc[i * k / block + t / block] - 127));
                        let y = bv[j * k + t] as i128 * bsc[j * k / block + t / block] as i128;
                        x * y
                    })
                    .sum();
                let o = f64::from_le_bytes(got[(i * n + j) * 8..][..8].try_into().unwrap());
                assert_eq!(o, s as f64, "output {i},{j} {exec:?}");
            }
        }
    }
}

/// An MX operand given as codes with an array of UE8M0 scales (as `u8` and
/// as `e8m0fnu`) has the bits of the same operand given as `Scaled`.
#[test]
fn mx_given_either_way_has_the_same_bits() {
    let mut rng = Rng::new(5);
    let (m, k, n) = (7, 96, 9);
    for fmt in [Format::Mxfp8E4m3, Format::Mxfp8E5m2, Format::Mxfp4] {
        let elem = DType::from_name(fmt.info().element).unwrap();
        let mut enc = |rows: usize| {
            let vals: Vec<f32> = (0..rows * k)
                .map(|_| ((rng.unit() - 0.5) * 2f64.powi(rng.range_i64(-8, 8) as i32)) as f32)
                .collect();
            let sizes = formats::encoded_sizes(fmt, &[rows, k]).unwrap();
            let (mut codes, mut scales) = (vec![0u8; sizes.code_bytes], vec![0u8; sizes.blocks]);
            formats::encode(
                fmt,
                None,
                &ArrayView::from_slice(&vals, &[rows, k]).unwrap(),
                &mut codes,
                &mut scales,
                &Exec::default(),
            )
            .unwrap();
            (codes, scales)
        };
        let (ac, asc) = enc(m);
        let (bc, bsc) = enc(n);
        let scaled = |shape: &'static [usize], codes: &'static [u8], scales: &'static [u8]| {
            Operand::Scaled(Scaled {
                format: fmt,
                shape,
                codes,
                scales,
                tensor_scale: None,
            })
        };
        let leak = |v: Vec<u8>| -> &'static [u8] { Box::leak(v.into_boxed_slice()) };
        let (ac, asc, bc, bsc) = (leak(ac), leak(asc), leak(bc), leak(bsc));
        let sa: &'static [usize] = Box::leak(vec![m, k].into_boxed_slice());
        let sb: &'static [usize] = Box::leak(vec![n, k].into_boxed_slice());
        let (xa, xb) = (scaled(sa, ac, asc), scaled(sb, bc, bsc));
        for sdt in [DType::U8, DType::E8m0fnu] {
            let blocked = |shape: &[usize], codes: &'static [u8], scales: &'static [u8]| {
                Operand::Blocked(Blocked {
                    values: ArrayView::contiguous(elem, shape, codes).unwrap(),
                    scales: ArrayView::contiguous(sdt, &[shape[0], k / 32], scales).unwrap(),
                    block: 32,
                })
            };
            let (ya, yb) = (blocked(sa, ac, asc), blocked(sb, bc, bsc));
            for acc in [DType::F32, DType::F64] {
                for exec in execs() {
                    let want = run_scaled(acc, &xa, &xb, m, n, &exec);
                    let got = run_scaled(acc, &ya, &yb, m, n, &exec);
                    assert_eq!(
                        bits(acc, &got),
                        bits(acc, &want),
                        "{fmt:?} {sdt} {acc} {exec:?}"
                    );
                }
            }
        }
    }
}

/// Refusals, each a typed error before any write: a block of 0 or not
/// dividing the last extent, scales of the wrong shape or dtype, an
/// accumulator other than f32/f64, a last axis that is not contracted.
#[test]
fn refusals_come_before_any_write() {
    let vals = vec![1f32; 4 * 12];
    let sc = vec![1f32; 4 * 3];
    let sc_bad = vec![1f32; 4 * 4];
    let sc_f16 = vec![0u8; 4 * 3 * 2];
    let plain = vec![1f32; 5 * 12];
    let p = Operand::Plain(ArrayView::from_slice(&plain, &[5, 12]).unwrap());
    let blocked = |scales: ArrayView<'static>, block: usize| Blocked {
        values: ArrayView::from_slice(Box::leak(vals.clone().into_boxed_slice()), &[4, 12])
            .unwrap(),
        scales,
        block,
    };
    let leak_f32 = |x: &Vec<f32>, shape: &[usize]| {
        ArrayView::from_slice(Box::leak(x.clone().into_boxed_slice()), shape).unwrap()
    };
    let cases: Vec<(&str, Blocked<'static>, DType, ContractSpec)> = vec![
        (
            "block 0",
            blocked(leak_f32(&sc, &[4, 3]), 0),
            DType::F32,
            ContractSpec::new(DType::F32).contracting(1, 1),
        ),
        (
            "block 5",
            blocked(leak_f32(&sc, &[4, 3]), 5),
            DType::F32,
            ContractSpec::new(DType::F32).contracting(1, 1),
        ),
        (
            "scale shape",
            blocked(leak_f32(&sc_bad, &[4, 4]), 4),
            DType::F32,
            ContractSpec::new(DType::F32).contracting(1, 1),
        ),
        (
            "scale dtype",
            blocked(
                ArrayView::contiguous(
                    DType::F16,
                    &[4, 3],
                    Box::leak(sc_f16.clone().into_boxed_slice()),
                )
                .unwrap(),
                4,
            ),
            DType::F32,
            ContractSpec::new(DType::F32).contracting(1, 1),
        ),
        (
            "acc i32",
            blocked(leak_f32(&sc, &[4, 3]), 4),
            DType::I32,
            ContractSpec::new(DType::I32).contracting(1, 1),
        ),
        (
            "acc c64",
            blocked(leak_f32(&sc, &[4, 3]), 4),
            DType::C64,
            ContractSpec::new(DType::C64).contracting(1, 1),
        ),
    ];
    for (what, bl, dd, spec) in cases {
        let mut out = vec![0xA5u8; 4 * 5 * dd.info().item_bytes];
        let r = contract_scaled(
            &spec,
            &Operand::Blocked(bl),
            &p,
            None,
            &mut ArrayViewMut::contiguous(dd, &[4, 5], &mut out).unwrap(),
            &Exec::default(),
        );
        assert!(
            matches!(
                r,
                Err(Error::Attribute { .. } | Error::Shape { .. } | Error::DTypeUnsupported { .. })
            ),
            "{what}: {r:?}"
        );
        assert!(out.iter().all(|&x| x == 0xA5), "{what}: wrote");
    }
    // The blocks' axis not contracted: a [12, 4] blocks along 4, contracted on 0.
    let mut out = vec![0xA5u8; 4 * 5 * 4];
    let r = contract_scaled(
        &ContractSpec::new(DType::F32).contracting(0, 1),
        &Operand::Blocked(Blocked {
            values: ArrayView::from_slice(&vals, &[12, 4]).unwrap(),
            scales: ArrayView::from_slice(&sc, &[12, 1]).unwrap(),
            block: 4,
        }),
        &p,
        None,
        &mut ArrayViewMut::contiguous(DType::F32, &[4, 5], &mut out).unwrap(),
        &Exec::default(),
    );
    assert!(matches!(r, Err(Error::Axis { .. })), "{r:?}");
    assert!(out.iter().all(|&x| x == 0xA5));
}
