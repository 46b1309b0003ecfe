//! The pair dtypes (df32, dd64) and their kinds through the public calls,
//! against exact arithmetic:
//!
//! * `two_sum` and `two_prod` on f16-representable operands (sampled here;
//!   every pair with `--ignored`), where a + b and a·b are exact in f64, and
//!   on random and adversarial f32/f64 operands checked with 2 400-bit
//!   arithmetic (astro-float): a + b = s + e and a·b = p + e exactly, on
//!   every tier this CPU runs. A build that reassociated `(a − (s − bb)) +
//!   (b − bb)` or contracted `a·b − p` would fail here.
//! * pair add, sub, mul, div, sqrt and exp on random normalised pairs and on
//!   cancelling ones, within the bounds spec/kinds.toml states, against a
//!   400-bit reference; the measured worst case is printed.
//! * `map` programs of pair kinds (text form) give the bits of the
//!   elementwise calls.

mod common;

use astro_float::{BigFloat, Consts, RoundingMode};
use tessera::typed;
use tessera::{DType, Exec, Kind, Pair, Program, Tier};
use tessera_testkit::rng::Rng;

const RM: RoundingMode = RoundingMode::ToEven;

/// x exactly at `prec` bits (subnormals scaled into the normal range first:
/// astro-float misreads them).
fn big(x: f64, prec: usize) -> BigFloat {
    const TWO64: f64 = 18446744073709551616.0;
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        BigFloat::from_f64(x * TWO64, prec).mul(&BigFloat::from_f64(1.0 / TWO64, prec), prec, RM)
    } else {
        BigFloat::from_f64(x, prec)
    }
}

/// Every finite f16 value, as f32.
fn f16_values() -> Vec<f32> {
    (0..=u16::MAX)
        .map(|c| half::f16::from_bits(c).to_f32())
        .filter(|v| v.is_finite())
        .collect()
}

/// two_sum and two_prod of f16-representable f32 operands: s + e = a + b
/// and p + e = a·b in f64 (exact there: 11-bit significands, exponents
/// within ±40), every a against `bs`.
fn f16_identities(bs: &[f32], tier: Tier) -> usize {
    let a_all = f16_values();
    let exec = Exec::on(tier).threads(2);
    let mut checked = 0;
    for &b in bs {
        let bv = vec![b; a_all.len()];
        let mut out = vec![Pair::<f32>::default(); a_all.len()];
        typed::elementwise(Kind::TwoSum, &[&a_all, &bv], &mut out, &exec).unwrap();
        for (a, r) in a_all.iter().zip(&out) {
            let exact = *a as f64 + b as f64;
            assert_eq!(r.hi, (*a + b), "two_sum {a} {b} on {tier:?}");
            assert_eq!(
                r.hi as f64 + r.lo as f64,
                exact,
                "two_sum {a} {b} on {tier:?}"
            );
        }
        typed::elementwise(Kind::TwoProd, &[&a_all, &bv], &mut out, &exec).unwrap();
        for (a, r) in a_all.iter().zip(&out) {
            let exact = *a as f64 * b as f64;
            assert_eq!(r.hi, (*a * b), "two_prod {a} {b} on {tier:?}");
            assert_eq!(
                r.hi as f64 + r.lo as f64,
                exact,
                "two_prod {a} {b} on {tier:?}"
            );
        }
        checked += 2 * a_all.len();
    }
    checked
}

#[test]
fn two_sum_and_two_prod_are_exact_on_f16_values() {
    let all = f16_values();
    let mut rng = Rng::for_label("pairs/f16", 1);
    // Every 97th value, and the extremes.
    let mut bs: Vec<f32> = all.iter().step_by(97).copied().collect();
    bs.extend([65504.0, -65504.0, 5.96e-8, -5.96e-8, 1.0, -1.0, 0.0, -0.0]);
    bs.push(all[rng.below_usize(all.len())]);
    for tier in common::tiers() {
        let n = f16_identities(&bs, tier);
        eprintln!("{tier:?}: {n} f16 operand pairs exact");
    }
}

#[test]
#[ignore = "every pair of f16 values (2^32 per kind and tier): minutes"]
fn two_sum_and_two_prod_are_exact_on_every_f16_pair() {
    let all = f16_values();
    for tier in common::tiers() {
        let n = f16_identities(&all, tier);
        eprintln!("{tier:?}: {n} f16 operand pairs exact");
    }
}

/// Random operands with exponents far apart, close, equal and opposite, and
/// some few-bit values (ties).
fn adversarial_f64(rng: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    for _ in 0..n {
        let x = f64::from_bits(
            rng.next_u64() & !(0x7ffu64 << 52) | ((rng.range_i64(1, 2046) as u64) << 52),
        );
        let y = match rng.below(5) {
            0 => -x * (1.0 + rng.unit() * 1e-12),
            1 => x * rng.unit() * 2f64.powi(-(rng.range_i64(0, 120) as i32)),
            2 => (rng.range_i64(-4096, 4096) as f64) * 2f64.powi(rng.range_i64(-1000, 1000) as i32),
            3 => -x,
            _ => f64::from_bits(
                rng.next_u64() & !(0x7ffu64 << 52) | ((rng.range_i64(1, 2046) as u64) << 52),
            ),
        };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

fn exact_sum_eq(prec: usize, a: f64, b: f64, s: f64, e: f64) -> bool {
    let l = big(a, prec).add(&big(b, prec), prec, RM);
    let r = big(s, prec).add(&big(e, prec), prec, RM);
    l.cmp(&r) == Some(0)
}

#[test]
fn error_free_transformations_hold_exactly_on_random_operands() {
    let mut rng = Rng::for_label("pairs/eft", 2);
    const PREC: usize = 2400; // every sum of two f64 is exact at this width
    let (a64, b64) = adversarial_f64(&mut rng, 20_000);
    let a32: Vec<f32> = a64.iter().map(|&x| (x * 1e-290) as f32).collect();
    let b32: Vec<f32> = b64.iter().map(|&x| (x * 1e-290) as f32).collect();
    for tier in common::tiers() {
        let exec = Exec::on(tier);
        let mut o64 = vec![Pair::<f64>::default(); a64.len()];
        let mut o32 = vec![Pair::<f32>::default(); a32.len()];
        for kind in [Kind::TwoSum, Kind::TwoProd, Kind::FastTwoSum] {
            typed::elementwise(kind, &[&a64, &b64], &mut o64, &exec).unwrap();
            typed::elementwise(kind, &[&a32, &b32], &mut o32, &exec).unwrap();
            for i in 0..a64.len() {
                let (a, b, r) = (a64[i], b64[i], o64[i]);
                let (x, y, q) = (a32[i] as f64, b32[i] as f64, o32[i]);
                match kind {
                    Kind::TwoProd => {
                        // Where p + e is representable (no underflow of e),
                        // it is a·b exactly.
                        let p = big(a, 200).mul(&big(b, 200), 200, RM);
                        if r.hi.is_finite() && (r.hi.abs() > 1e-290 || a == 0.0 || b == 0.0) {
                            let got = big(r.hi, 200).add(&big(r.lo, 200), 200, RM);
                            assert_eq!(got.cmp(&p), Some(0), "two_prod {a:e} {b:e} on {tier:?}");
                        }
                        let p = big(x, 200).mul(&big(y, 200), 200, RM);
                        if q.hi.is_finite() && (q.hi.abs() > 1e-30 || x == 0.0 || y == 0.0) {
                            let got = big(q.hi as f64, 200).add(&big(q.lo as f64, 200), 200, RM);
                            assert_eq!(
                                got.cmp(&p),
                                Some(0),
                                "two_prod {x:e} {y:e} f32 on {tier:?}"
                            );
                        }
                    }
                    Kind::FastTwoSum if a.abs() < b.abs() => {}
                    _ => {
                        if r.hi.is_finite() {
                            assert!(
                                exact_sum_eq(PREC, a, b, r.hi, r.lo),
                                "{kind} {a:e} {b:e} on {tier:?}"
                            );
                            assert_eq!(r.hi, a + b);
                        }
                        if q.hi.is_finite() && (kind == Kind::TwoSum || x.abs() >= y.abs()) {
                            assert!(
                                exact_sum_eq(PREC, x, y, q.hi as f64, q.lo as f64),
                                "{kind} {x:e} {y:e} f32 on {tier:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_reassociated_two_sum_would_be_seen() {
    // (a − (s − bb)) + (b − bb) is 0 if reassociated; here it is 2^-40.
    for tier in common::tiers() {
        let mut o = [Pair::<f32>::default(); 1];
        typed::elementwise(
            Kind::TwoSum,
            &[&[1.0f32], &[2f32.powi(-40)]],
            &mut o,
            &Exec::on(tier),
        )
        .unwrap();
        assert_eq!((o[0].hi, o[0].lo), (1.0, 2f32.powi(-40)), "{tier:?}");
        let mut o = [Pair::<f64>::default(); 1];
        let t = 1.0 + 2f64.powi(-30);
        typed::elementwise(Kind::TwoProd, &[&[t], &[t]], &mut o, &Exec::on(tier)).unwrap();
        // (1 + 2^-30)^2 = 1 + 2^-29 + 2^-60: the last term is the error.
        assert_eq!(
            (o[0].hi, o[0].lo),
            (1.0 + 2f64.powi(-29), 2f64.powi(-60)),
            "{tier:?}"
        );
    }
}

/// A random normalised pair with its leading part's exponent in `exps`.
fn random_pair64(rng: &mut Rng, exps: (i64, i64)) -> Pair<f64> {
    let hi = f64::from_bits(
        rng.next_u64() >> 12 | ((rng.range_i64(exps.0, exps.1) + 1023) as u64) << 52,
    );
    let hi = if rng.chance(1, 2) { -hi } else { hi };
    let ulp = f64::from_bits(hi.abs().to_bits() + 1) - hi.abs();
    let lo = ulp * (rng.unit() - 0.5);
    let p = tessera::pair::fast_two_sum(hi, lo);
    assert_eq!(p.hi, hi);
    p
}

fn random_pair32(rng: &mut Rng, exps: (i64, i64)) -> Pair<f32> {
    let hi = f32::from_bits(
        (rng.next_u64() as u32) >> 9 | ((rng.range_i64(exps.0, exps.1) + 127) as u32) << 23,
    );
    let hi = if rng.chance(1, 2) { -hi } else { hi };
    let ulp = f32::from_bits(hi.abs().to_bits() + 1) - hi.abs();
    let lo = (ulp as f64 * (rng.unit() - 0.5)) as f32;
    Pair { hi, lo }
}

trait Comp: Copy + Default + tessera::Element {
    const P: i32;
    fn parts(self) -> (f64, f64);
}
impl Comp for Pair<f32> {
    const P: i32 = 24;
    fn parts(self) -> (f64, f64) {
        (self.hi as f64, self.lo as f64)
    }
}
impl Comp for Pair<f64> {
    const P: i32 = 53;
    fn parts(self) -> (f64, f64) {
        (self.hi, self.lo)
    }
}

const PREC: usize = 400;

fn value(p: impl Comp) -> BigFloat {
    let (h, l) = p.parts();
    big(h, PREC).add(&big(l, PREC), PREC, RM)
}

/// The worst relative error, in units of u², of `kind` over `xs` (and `ys`
/// for two operands), on every tier; each tier's bits equal the scalar
/// tier's.
fn worst_u2<P: Comp>(kind: Kind, xs: &[P], ys: Option<&[P]>, cc: &mut Consts) -> f64 {
    let mut want: Option<Vec<P>> = None;
    let mut worst = 0.0f64;
    for tier in common::tiers() {
        let mut out = vec![P::default(); xs.len()];
        match ys {
            Some(ys) => typed::elementwise(kind, &[xs, ys], &mut out, &Exec::on(tier)),
            None => typed::elementwise(kind, &[xs], &mut out, &Exec::on(tier)),
        }
        .unwrap();
        if let Some(w) = &want {
            let same = w.iter().zip(&out).all(|(a, b)| {
                a.parts().0.to_bits() == b.parts().0.to_bits()
                    && a.parts().1.to_bits() == b.parts().1.to_bits()
            });
            assert!(same, "{kind} on {tier:?}: not the scalar tier's bits");
            continue;
        }
        let u2 = 2f64.powi(-2 * P::P);
        for i in 0..xs.len() {
            let x = value(xs[i]);
            let r = match kind {
                Kind::Add => x.add(&value(ys.unwrap()[i]), PREC, RM),
                Kind::Sub => x.sub(&value(ys.unwrap()[i]), PREC, RM),
                Kind::Mul => x.mul(&value(ys.unwrap()[i]), PREC, RM),
                Kind::Div => x.div(&value(ys.unwrap()[i]), PREC, RM),
                Kind::Sqrt => x.sqrt(PREC, RM),
                Kind::Exp => x.exp(PREC, RM, cc),
                _ => unreachable!(),
            };
            if r.is_zero() {
                continue;
            }
            let err = value(out[i]).sub(&r, PREC, RM).div(&r, PREC, RM).abs();
            let rel = err.div(&big(u2, PREC), PREC, RM);
            let rel: f64 = format!("{rel}").parse().unwrap_or(f64::INFINITY);
            worst = worst.max(rel);
            let (h, l) = out[i].parts();
            // Normalised: hi is the value rounded to one component.
            let rounded = if P::P == 24 {
                (h + l) as f32 as f64
            } else {
                h + l
            };
            assert!(
                rounded == h || P::P == 24 && ((h as f32) + (l as f32)) as f64 == h,
                "{kind}: result ({h:e}, {l:e}) not normalised"
            );
        }
        want = Some(out);
    }
    worst
}

#[test]
fn pair_arithmetic_within_its_stated_bounds() {
    let mut rng = Rng::for_label("pairs/arith", 3);
    let mut cc = Consts::new().unwrap();
    let n = 3000;
    // (kind, bound in u², whether it takes two operands)
    let kinds = [
        (Kind::Add, 3.0 + 1e-5, true),
        (Kind::Sub, 3.0 + 1e-5, true),
        (Kind::Mul, 4.0, true),
        (Kind::Div, 15.0 + 1e-5, true),
        (Kind::Sqrt, 25.0 / 8.0, false),
        (Kind::Exp, 32.0, false),
    ];
    for (kind, bound, two) in kinds {
        let exps = if kind == Kind::Exp {
            (-8, 8)
        } else {
            (-60, 60)
        };
        // dd64
        let mut xs: Vec<Pair<f64>> = (0..n).map(|_| random_pair64(&mut rng, exps)).collect();
        let mut ys: Vec<Pair<f64>> = (0..n).map(|_| random_pair64(&mut rng, exps)).collect();
        if kind == Kind::Sqrt {
            xs.iter_mut().for_each(|p| {
                *p = Pair {
                    hi: p.hi.abs(),
                    lo: if p.hi < 0.0 { -p.lo } else { p.lo },
                }
            });
        }
        if matches!(kind, Kind::Add | Kind::Sub) {
            // Cancellation: y close to ∓x.
            for i in 0..n / 4 {
                let s = if kind == Kind::Add { -1.0 } else { 1.0 };
                let t = random_pair64(&mut rng, (-40, -20));
                ys[i] = xs[i]
                    .mul(Pair::from_hi(s))
                    .add(t.mul(Pair::from_hi(xs[i].hi)));
            }
        }
        let w64 = worst_u2(kind, &xs, two.then_some(&ys[..]), &mut cc);
        // df32
        let exps32 = if kind == Kind::Exp {
            (-8, 5)
        } else {
            (-30, 30)
        };
        let mut xs: Vec<Pair<f32>> = (0..n).map(|_| random_pair32(&mut rng, exps32)).collect();
        let ys: Vec<Pair<f32>> = (0..n).map(|_| random_pair32(&mut rng, exps32)).collect();
        if kind == Kind::Sqrt {
            xs.iter_mut().for_each(|p| {
                *p = Pair {
                    hi: p.hi.abs(),
                    lo: if p.hi < 0.0 { -p.lo } else { p.lo },
                }
            });
        }
        let w32 = worst_u2(kind, &xs, two.then_some(&ys[..]), &mut cc);
        eprintln!(
            "{kind}: worst relative error dd64 {w64:.3} u², df32 {w32:.3} u² (bound {bound} u²)"
        );
        assert!(w64 <= bound, "{kind} dd64: {w64} u² > {bound}");
        assert!(w32 <= bound, "{kind} df32: {w32} u² > {bound}");
    }
}

#[test]
fn map_programs_of_pair_kinds_match_the_elementwise_calls() {
    let mut rng = Rng::for_label("pairs/map", 4);
    let n = 1000;
    let a: Vec<f64> = (0..n).map(|_| rng.unit() * 8.0 - 4.0).collect();
    let b: Vec<f64> = (0..n).map(|_| (rng.unit() - 0.5) * 1e-9).collect();
    // exp(two_sum(a, b)) rounded to one f64, and its trailing part.
    let p = Program::parse(
        "t = exp(two_sum(x0, x1) * two_prod(x0, x0)); y0 = pair_hi(t); y1 = pair_lo(t)",
        &[DType::F64, DType::F64],
    )
    .unwrap();
    for tier in common::tiers() {
        let exec = Exec::on(tier);
        let mut y0 = vec![0.0f64; n];
        let mut y1 = vec![0.0f64; n];
        typed::map(&p, &[&a, &b], &mut [&mut y0, &mut y1], &exec).unwrap();
        let mut s = vec![Pair::<f64>::default(); n];
        let mut q = vec![Pair::<f64>::default(); n];
        typed::elementwise(Kind::TwoSum, &[&a, &b], &mut s, &exec).unwrap();
        typed::elementwise(Kind::TwoProd, &[&a, &a], &mut q, &exec).unwrap();
        let mut m = vec![Pair::<f64>::default(); n];
        typed::elementwise(Kind::Mul, &[&s, &q], &mut m, &exec).unwrap();
        let mut e = vec![Pair::<f64>::default(); n];
        typed::elementwise(Kind::Exp, &[&m], &mut e, &exec).unwrap();
        for i in 0..n {
            assert_eq!(y0[i].to_bits(), e[i].hi.to_bits(), "{tier:?} {i}");
            assert_eq!(y1[i].to_bits(), e[i].lo.to_bits(), "{tier:?} {i}");
        }
    }
}
