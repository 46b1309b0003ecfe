//! The kinds that cross between complex numbers and reals, and the complex
//! exponential: `from_parts` (two reals into a complex number, bits kept),
//! `scale` (a complex number times a real, no cross terms) and `exp` of c64
//! and c128 (each component within 1 ulp of a 256-bit reference, C99 Annex
//! G's special values), on every tier, layout and through map programs.

mod common;

use astro_float::{BigFloat, Consts, RoundingMode};
use common::*;
use num_complex::Complex;
use tessera::{elementwise, map, ArrayView, ArrayViewMut, DType, Error, Exec, Kind, Program};
use tessera_testkit::rng::Rng;

/// Run `k` on 1-D slices (any element types; a one-element slice
/// broadcasts) into `out`.
fn run<O: tessera::Element>(exec: &Exec, k: Kind, ins: &[ArrayView<'_>], out: &mut [O]) {
    let n = out.len();
    let mut o = ArrayViewMut::from_slice(out, &[n]).expect("a destination");
    elementwise(k, ins, &mut o, exec).unwrap_or_else(|e| panic!("{k}: {e}"));
}

fn view<T: tessera::Element>(x: &[T]) -> ArrayView<'_> {
    ArrayView::from_slice(x, &[x.len()]).expect("a view")
}

/// Random f32 bits of every class: normals of every binade, subnormals,
/// zeros, infinities and NaNs with payloads.
fn f32_codes(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 16 {
            0 => f32::from_bits(0x7f80_0000 | (rng.next_u64() as u32 & 0x807f_ffff) | 1),
            1 => f32::from_bits(rng.next_u64() as u32 & 0x807f_ffff),
            2 => [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY][rng.below(4) as usize],
            _ => f32::from_bits(rng.next_u64() as u32),
        })
        .collect()
}

fn f64_codes(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| match i % 16 {
            0 => {
                f64::from_bits(0x7ff0_0000_0000_0000 | (rng.next_u64() & 0x800f_ffff_ffff_ffff) | 1)
            }
            1 => f64::from_bits(rng.next_u64() & 0x800f_ffff_ffff_ffff),
            2 => [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY][rng.below(4) as usize],
            _ => f64::from_bits(rng.next_u64()),
        })
        .collect()
}

#[test]
fn from_parts_keeps_the_bits_of_both_parts_on_every_tier_and_layout() {
    let mut rng = Rng::new(0xc0_0001);
    let n = 333;
    let (re, im) = (f32_codes(&mut rng, 2 * n), f32_codes(&mut rng, n));
    let (re64, im64) = (f64_codes(&mut rng, n), f64_codes(&mut rng, n));
    for tier in tiers() {
        let exec = Exec::on(tier);
        // Contiguous.
        let mut z = vec![Complex::new(0f32, 0.0); n];
        run(&exec, Kind::FromParts, &[view(&re[..n]), view(&im)], &mut z);
        for i in 0..n {
            assert_eq!(z[i].re.to_bits(), re[i].to_bits(), "{tier:?} re {i}");
            assert_eq!(z[i].im.to_bits(), im[i].to_bits(), "{tier:?} im {i}");
        }
        // Every other real part, and a broadcast imaginary part.
        let strided = ArrayView::from_slice_strided(&re, &[n], &[2], 0).expect("a view");
        let one = ArrayView::from_slice(&im[..1], &[1]).expect("a view");
        run(&exec, Kind::FromParts, &[strided, one], &mut z);
        for i in 0..n {
            assert_eq!(
                z[i].re.to_bits(),
                re[2 * i].to_bits(),
                "{tier:?} strided re {i}"
            );
            assert_eq!(
                z[i].im.to_bits(),
                im[0].to_bits(),
                "{tier:?} broadcast im {i}"
            );
        }
        let mut w = vec![Complex::new(0f64, 0.0); n];
        run(&exec, Kind::FromParts, &[view(&re64), view(&im64)], &mut w);
        for i in 0..n {
            assert_eq!(w[i].re.to_bits(), re64[i].to_bits(), "{tier:?} c128 re {i}");
            assert_eq!(w[i].im.to_bits(), im64[i].to_bits(), "{tier:?} c128 im {i}");
        }
        // real and imag take them apart again, bit for bit.
        let mut back = vec![0f64; n];
        run(&exec, Kind::Imag, &[view(&w)], &mut back);
        assert!(back
            .iter()
            .zip(&im64)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

#[test]
fn scale_multiplies_each_part_once_on_every_tier() {
    let mut rng = Rng::new(0xc0_0002);
    let n = 257;
    let parts = f32_codes(&mut rng, 2 * n);
    let z: Vec<Complex<f32>> = (0..n)
        .map(|i| Complex::new(parts[2 * i], parts[2 * i + 1]))
        .collect();
    let s = f32_codes(&mut rng, n);
    let parts64 = f64_codes(&mut rng, 2 * n);
    let z64: Vec<Complex<f64>> = (0..n)
        .map(|i| Complex::new(parts64[2 * i], parts64[2 * i + 1]))
        .collect();
    let s64 = f64_codes(&mut rng, n);
    // The model: each part times s, rounded once (f32 products are exact in
    // f64, so one rounding to f32 is the f32 product).
    let same = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
    for tier in tiers() {
        let exec = Exec::on(tier);
        let mut y = vec![Complex::new(0f32, 0.0); n];
        run(&exec, Kind::Scale, &[view(&z), view(&s)], &mut y);
        for i in 0..n {
            let want = (
                (z[i].re as f64 * s[i] as f64) as f32,
                (z[i].im as f64 * s[i] as f64) as f32,
            );
            assert!(
                same(y[i].re as f64, want.0 as f64) && same(y[i].im as f64, want.1 as f64),
                "{tier:?} c64 {i}: {:?} × {} gave {:?}, want {want:?}",
                z[i],
                s[i],
                y[i]
            );
        }
        // A broadcast real factor (a scalar).
        run(&exec, Kind::Scale, &[view(&z), view(&s[3..4])], &mut y);
        for i in 0..n {
            let want = (
                (z[i].re as f64 * s[3] as f64) as f32,
                (z[i].im as f64 * s[3] as f64) as f32,
            );
            assert!(same(y[i].re as f64, want.0 as f64) && same(y[i].im as f64, want.1 as f64));
        }
        let mut y64 = vec![Complex::new(0f64, 0.0); n];
        run(&exec, Kind::Scale, &[view(&z64), view(&s64)], &mut y64);
        for i in 0..n {
            let want = (z64[i].re * s64[i], z64[i].im * s64[i]);
            assert!(
                same(y64[i].re, want.0) && same(y64[i].im, want.1),
                "{tier:?} c128 {i}"
            );
        }
    }
    // No cross terms: inf + 0i scaled by 1 stays inf + 0i, where the complex
    // product by 1 + 0i has a NaN imaginary part (inf · 0).
    let z = [Complex::new(f32::INFINITY, 0.0f32)];
    let mut y = [Complex::new(0f32, 0.0)];
    run(
        &Exec::default(),
        Kind::Scale,
        &[view(&z), view(&[1.0f32])],
        &mut y,
    );
    assert_eq!((y[0].re, y[0].im.to_bits()), (f32::INFINITY, 0));
    run(
        &Exec::default(),
        Kind::Mul,
        &[view(&z), view(&[Complex::new(1.0f32, 0.0)])],
        &mut y,
    );
    assert!(y[0].im.is_nan());
}

#[test]
fn scale_refuses_a_real_factor_of_another_width_before_any_write() {
    let z = vec![Complex::new(1.0f32, 2.0); 4];
    let s = vec![2.0f64; 4];
    let mut y = vec![Complex::new(7.0f32, 7.0); 4];
    let mut o = ArrayViewMut::from_slice(&mut y, &[4]).expect("a destination");
    let e = elementwise(Kind::Scale, &[view(&z), view(&s)], &mut o, &Exec::default())
        .expect_err("an f64 factor of a c64 is refused");
    assert!(
        matches!(
            e,
            Error::DTypeMismatch {
                expected: DType::F32,
                got: DType::F64,
                ..
            }
        ),
        "{e}"
    );
    assert!(y.iter().all(|v| *v == Complex::new(7.0, 7.0)));
    // from_parts of two different widths, and of a narrow float no complex
    // dtype has as its component (f16 and bf16 have f16c and bf16c).
    let mut w = vec![Complex::new(0f64, 0.0); 4];
    let mut o = ArrayViewMut::from_slice(&mut w, &[4]).expect("a destination");
    let re = vec![1.0f32; 4];
    assert!(elementwise(
        Kind::FromParts,
        &[view(&re), view(&s)],
        &mut o,
        &Exec::default()
    )
    .is_err());
    assert!(tessera::result_dtype(Kind::FromParts, DType::E4m3fn).is_err());
    assert_eq!(
        tessera::result_dtype(Kind::FromParts, DType::Bf16).ok(),
        Some(DType::Bf16c)
    );
    assert_eq!(
        tessera::result_dtype(Kind::FromParts, DType::F64).ok(),
        Some(DType::C128)
    );
}

#[test]
fn the_parts_kinds_in_map_programs() {
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32 - 500.0) * 0.37).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.5).collect();
    for tier in tiers() {
        let exec = Exec::on(tier);
        // conj(from_parts(x0, x1)) scaled by 2 (an untyped literal takes the
        // real component's dtype), then its imaginary part.
        let p = Program::parse(
            "z = scale(conj(from_parts(x0, x1)), 2.0); y0 = imag(z); y1 = real(exp(z))",
            &[DType::F32, DType::F32],
        )
        .expect("a program");
        let mut im = vec![0f32; n];
        let mut re = vec![0f32; n];
        {
            let mut outs = [
                ArrayViewMut::from_slice(&mut im, &[n]).expect("a view"),
                ArrayViewMut::from_slice(&mut re, &[n]).expect("a view"),
            ];
            map(&p, &[view(&xs), view(&ys)], &mut outs, &exec).expect("runs");
        }
        for i in 0..n {
            assert_eq!(im[i], -2.0 * ys[i], "{tier:?} {i}");
        }
        // The same exp through the elementwise call.
        let z: Vec<Complex<f32>> = (0..n)
            .map(|i| Complex::new(2.0 * xs[i], -2.0 * ys[i]))
            .collect();
        let mut e = vec![Complex::new(0f32, 0.0); n];
        run(&exec, Kind::Exp, &[view(&z)], &mut e);
        for i in 0..n {
            assert_eq!(re[i].to_bits(), e[i].re.to_bits(), "{tier:?} {i}");
        }
    }
    // A complex literal factor is refused with the operand named.
    let e = Program::parse("y0 = scale(x0, x0)", &[DType::C64]).expect_err("c64 factor");
    assert!(e.to_string().contains("f32"), "{e}");
}

const PREC: usize = 256;
const RM: RoundingMode = RoundingMode::ToEven;

/// x exactly (astro-float reads a subnormal f64 as half its value: scaled in
/// and out by 2^64).
fn big(x: f64) -> BigFloat {
    const TWO64: f64 = 18446744073709551616.0;
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        BigFloat::from_f64(x * TWO64, PREC).mul(&BigFloat::from_f64(1.0 / TWO64, PREC), PREC, RM)
    } else {
        BigFloat::from_f64(x, PREC)
    }
}

/// (e^x cos y, e^x sin y) at PREC bits, y reduced modulo 2π at enough bits
/// that the reduced argument keeps PREC bits for any f64.
fn cexp_big(x: f64, y: f64, cc: &mut Consts) -> (BigFloat, BigFloat) {
    let wide = 1100 + PREC + 64;
    let r = if y.abs() >= 8.0 {
        let two_pi = cc.pi(wide, RM).mul(&big(2.0), wide, RM);
        let t = big(y).div(&two_pi, wide, RM);
        t.fract().mul(&two_pi, PREC + 64, RM)
    } else {
        big(y)
    };
    let e = big(x).exp(PREC, RM, cc);
    (
        e.mul(&r.cos(PREC, RM, cc), PREC, RM),
        e.mul(&r.sin(PREC, RM, cc), PREC, RM),
    )
}

fn to_f64(b: &BigFloat) -> f64 {
    format!("{b}").parse().unwrap_or(f64::NAN)
}

/// 2^k for k in [-1074, 1023], exactly.
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// |got − exact| in ulps of the exact value in a format of `p` significant
/// bits and minimum normal exponent `emin` (an infinite `got` counts as 0
/// where the exact value is beyond the format's largest finite value `max`
/// with its sign, else as infinitely far).
fn ulps(got: f64, exact: &BigFloat, p: i32, emin: i32, max: f64) -> f64 {
    if got.is_infinite() {
        let beyond = exact.abs().cmp(&big(max)) == Some(1);
        let same_sign = (got > 0.0) == exact.is_positive();
        return if beyond && same_sign {
            0.0
        } else {
            f64::INFINITY
        };
    }
    // astro-float's exponent e: |v| in [2^(e-1), 2^e).
    let e = match exact.exponent() {
        Some(e) if !exact.is_zero() => (e - 1).max(emin),
        _ => emin,
    };
    let ulp = big(pow2(e - (p - 1)));
    let d = big(got).sub(exact, PREC, RM).abs().div(&ulp, PREC, RM);
    to_f64(&d)
}

/// Uniform in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Inputs for the exponential: moderate and near-overflow x, y from tiny to
/// huge, near multiples of π/2, and y = ±0.
fn cexp_inputs(rng: &mut Rng, n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let (u, v) = (unit(rng), unit(rng));
            let x = match i % 4 {
                0 => -20.0 + 40.0 * u,
                1 => 700.0 + 40.0 * u,
                2 => -740.0 + 20.0 * u,
                _ => -2.0 + 4.0 * u,
            };
            let y = match i % 5 {
                0 => (v - 0.5) * 10.0,
                1 => f64::from_bits(rng.next_u64() & 0x7fef_ffff_ffff_ffff),
                2 => (v - 0.5) * 1e-12,
                3 => std::f64::consts::FRAC_PI_2 * (1 + rng.below(9)) as f64,
                _ => -f64::from_bits(rng.next_u64() & 0x3fef_ffff_ffff_ffff),
            };
            (x, y)
        })
        .collect()
}

#[test]
fn complex_exp_is_within_one_ulp_per_component_of_a_256_bit_reference() {
    let mut rng = Rng::new(0xc0_0003);
    let mut cc = Consts::new().expect("astro-float constants");
    // The exponent convention `ulps` reads.
    assert_eq!(big(1.0).exponent(), Some(1));
    assert_eq!(big(0.75).exponent(), Some(0));
    let n = 240;
    let z64: Vec<Complex<f64>> = cexp_inputs(&mut rng, n)
        .into_iter()
        .map(|(x, y)| Complex::new(x, y))
        .collect();
    // c64 inputs: f32 values (x within f32's exponential range).
    let z32: Vec<Complex<f32>> = z64
        .iter()
        .map(|z| {
            let y = if (z.im as f32).is_finite() {
                z.im
            } else {
                z.im * 1e-270
            };
            Complex::new((z.re / 9.0) as f32, y as f32)
        })
        .collect();
    let mut worst = (0f64, 0f64);
    let scalar = Exec::on(tessera::Tier::ALL[0]);
    let mut e64 = vec![Complex::new(0f64, 0.0); n];
    run(&scalar, Kind::Exp, &[view(&z64)], &mut e64);
    let mut e32 = vec![Complex::new(0f32, 0.0); n];
    run(&scalar, Kind::Exp, &[view(&z32)], &mut e32);
    for i in 0..n {
        let (re, im) = cexp_big(z64[i].re, z64[i].im, &mut cc);
        let (ur, ui) = (
            ulps(e64[i].re, &re, 53, -1022, f64::MAX),
            ulps(e64[i].im, &im, 53, -1022, f64::MAX),
        );
        assert!(
            ur <= 1.0 && ui <= 1.0,
            "c128 exp{:?} = {:?}: {ur} and {ui} ulps",
            z64[i],
            e64[i]
        );
        worst.0 = worst.0.max(ur.max(ui));
        let (re, im) = cexp_big(z32[i].re as f64, z32[i].im as f64, &mut cc);
        let max = f32::MAX as f64;
        let (ur, ui) = (
            ulps(e32[i].re as f64, &re, 24, -126, max),
            ulps(e32[i].im as f64, &im, 24, -126, max),
        );
        assert!(
            ur <= 1.0 && ui <= 1.0,
            "c64 exp{:?} = {:?}: {ur} and {ui} ulps",
            z32[i],
            e32[i]
        );
        worst.1 = worst.1.max(ur.max(ui));
    }
    eprintln!(
        "complex exp: worst {:.3} ulp (c128), {:.3} ulp (c64)",
        worst.0, worst.1
    );
    // Every tier gives the scalar tier's bits, contiguous and strided (the
    // strided kernels run the contiguous one over decoded blocks).
    let mut wide64 = vec![Complex::new(9f64, 9.0); 2 * n];
    for (i, z) in z64.iter().enumerate() {
        wide64[2 * i] = *z;
    }
    for tier in tiers() {
        let sv = ArrayView::from_slice_strided(&wide64, &[n], &[2], 0).unwrap();
        let mut t64 = vec![Complex::new(0f64, 0.0); n];
        run(&Exec::on(tier), Kind::Exp, &[sv], &mut t64);
        for i in 0..n {
            assert_eq!(
                (t64[i].re.to_bits(), t64[i].im.to_bits()),
                (e64[i].re.to_bits(), e64[i].im.to_bits()),
                "{tier:?} strided c128 {i}"
            );
        }
    }
    for tier in tiers() {
        let exec = Exec::on(tier);
        let mut t64 = vec![Complex::new(0f64, 0.0); n];
        run(&exec, Kind::Exp, &[view(&z64)], &mut t64);
        let mut t32 = vec![Complex::new(0f32, 0.0); n];
        run(&exec, Kind::Exp, &[view(&z32)], &mut t32);
        for i in 0..n {
            assert_eq!(
                (t64[i].re.to_bits(), t64[i].im.to_bits()),
                (e64[i].re.to_bits(), e64[i].im.to_bits()),
                "{tier:?} c128 {i}"
            );
            assert_eq!(
                (t32[i].re.to_bits(), t32[i].im.to_bits()),
                (e32[i].re.to_bits(), e32[i].im.to_bits()),
                "{tier:?} c64 {i}"
            );
        }
    }
}

#[test]
fn complex_exp_special_values_follow_annex_g() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // (x, y) → (re, im); a NaN expects the canonical quiet NaN's bits.
    let cases: [((f64, f64), (f64, f64)); 17] = [
        ((0.0, 0.0), (1.0, 0.0)),
        ((-0.0, -0.0), (1.0, -0.0)),
        ((2.0, -0.0), (2f64.exp(), -0.0)),
        ((inf, 0.0), (inf, 0.0)),
        ((inf, -0.0), (inf, -0.0)),
        ((nan, 0.0), (nan, 0.0)),
        ((nan, -0.0), (nan, -0.0)),
        ((-inf, 3.0), (0.0 * 3f64.cos(), 0.0 * 3f64.sin())),
        ((-inf, 0.5), (0.0, 0.0)),
        ((inf, 3.0), (inf * 3f64.cos(), inf * 3f64.sin())),
        ((inf, -5e-324), (inf, -inf)),
        ((1.0, inf), (nan, nan)),
        ((1.0, nan), (nan, nan)),
        ((inf, inf), (inf, nan)),
        ((inf, nan), (inf, nan)),
        ((-inf, inf), (0.0, 0.0)),
        ((nan, 1.0), (nan, nan)),
    ];
    let same = |a: f64, b: f64| {
        if b.is_nan() {
            a.to_bits() == f64::NAN.to_bits()
        } else {
            a.to_bits() == b.to_bits()
        }
    };
    for tier in tiers() {
        let exec = Exec::on(tier);
        let z: Vec<Complex<f64>> = cases
            .iter()
            .map(|((x, y), _)| Complex::new(*x, *y))
            .collect();
        let mut e = vec![Complex::new(7f64, 7.0); z.len()];
        run(&exec, Kind::Exp, &[view(&z)], &mut e);
        for (i, (_, (re, im))) in cases.iter().enumerate() {
            assert!(
                same(e[i].re, *re) && same(e[i].im, *im),
                "{tier:?}: exp{:?} = {:?}, want ({re}, {im})",
                z[i],
                e[i]
            );
        }
        // c64: the same values (all exact in f32 but e^2), NaN canonical.
        let z32: Vec<Complex<f32>> = z
            .iter()
            .map(|v| Complex::new(v.re as f32, v.im as f32))
            .collect();
        let mut e32 = vec![Complex::new(7f32, 7.0); z.len()];
        run(&exec, Kind::Exp, &[view(&z32)], &mut e32);
        for (i, (_, (re, im))) in cases.iter().enumerate() {
            if i == 10 {
                // -5e-324 is -0 in f32: another case.
                continue;
            }
            let (gr, gi) = (e32[i].re, e32[i].im);
            let ok = |g: f32, w: f64| {
                if w.is_nan() {
                    g.to_bits() == f32::NAN.to_bits()
                } else if i == 2 && w != 0.0 {
                    (g as f64 - w).abs() <= w * 2f64.powi(-24)
                } else {
                    g.to_bits() == (w as f32).to_bits()
                }
            };
            assert!(
                ok(gr, *re) && ok(gi, *im),
                "{tier:?}: c64 exp{:?} = {:?}",
                z32[i],
                e32[i]
            );
        }
    }
}
