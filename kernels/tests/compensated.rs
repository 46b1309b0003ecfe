//! Compensated sums and dot products (`ReduceOp::Sum2`, `dot2`) on
//! Ogita–Rump–Oishi's ill-conditioned generator (GenDot, "Accurate sum and
//! dot product", SIAM J. Sci. Comput. 26(6), 2005, Algorithm 6.1), condition
//! 10^8 to 10^32, against the exact value (astro-float at 3 000 bits, exact
//! for these operands): within the stated bound u·|S| + 2γ(r+1)²·Σ|tᵢ|, and
//! orders of magnitude below the plain lane-order sum's error; the same bits
//! at 1, 2 and 7 threads and in a reversed, strided layout.

mod common;

use common::gendot::{big, exact_dot, gen_dot, to_f64, PREC, RM};
use tessera::reduce::dot2;
use tessera::{dot, reduce, ArrayView, ArrayViewMut, Exec, Pair, ReduceOp};
use tessera_testkit::rng::Rng;

fn gamma(k: f64, u: f64) -> f64 {
    k * u / (1.0 - k * u)
}

/// The stated bound's factor r + 1 for n terms in one output (§5.3's r).
fn depth(n: usize) -> f64 {
    let blocks = n.div_ceil(1024).max(1);
    (n.min(1024).div_ceil(16) + 4) as f64 + (blocks as f64).log2().ceil() + 1.0
}

fn run_dot(single: bool, x: &[f64], y: &[f64], comp: bool, exec: &Exec) -> f64 {
    let n = x.len();
    if single {
        let (a, b): (Vec<f32>, Vec<f32>) = (
            x.iter().map(|&v| v as f32).collect(),
            y.iter().map(|&v| v as f32).collect(),
        );
        let mut out = [0f32];
        let (va, vb) = (
            ArrayView::from_slice(&a, &[n]).unwrap(),
            ArrayView::from_slice(&b, &[n]).unwrap(),
        );
        let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
        if comp {
            dot2(&[0], &va, &vb, &mut d, exec).unwrap();
        } else {
            dot(&[0], &va, &vb, &mut d, exec).unwrap();
        }
        out[0] as f64
    } else {
        let mut out = [0f64];
        let (va, vb) = (
            ArrayView::from_slice(x, &[n]).unwrap(),
            ArrayView::from_slice(y, &[n]).unwrap(),
        );
        let mut d = ArrayViewMut::from_slice(&mut out, &[]).unwrap();
        if comp {
            dot2(&[0], &va, &vb, &mut d, exec).unwrap();
        } else {
            dot(&[0], &va, &vb, &mut d, exec).unwrap();
        }
        out[0]
    }
}

#[test]
fn compensated_dot_on_ill_conditioned_data() {
    let mut rng = Rng::for_label("compensated/gendot", 1);
    for single in [false, true] {
        let u = if single {
            2f64.powi(-24)
        } else {
            2f64.powi(-53)
        };
        let conds: &[f64] = if single {
            &[1e4, 1e8, 1e12, 1e16]
        } else {
            &[1e8, 1e16, 1e24, 1e32]
        };
        for &cond in conds {
            for n in [100usize, 1000, 5000] {
                let (x, y) = gen_dot(n, cond, single, &mut rng);
                let s = exact_dot(&x, &y);
                let abs_sum: f64 = x.iter().zip(&y).map(|(a, b)| (a * b).abs()).sum();
                let sv = to_f64(&s);
                let err = |v: f64| to_f64(&big(v).sub(&s, PREC, RM).abs());
                let plain = run_dot(single, &x, &y, false, &Exec::SEQ);
                let comp = run_dot(single, &x, &y, true, &Exec::SEQ);
                let g = gamma(depth(n), u);
                let bound = u * sv.abs() + 2.0 * g * g * abs_sum * 1.01;
                let (ep, ec) = (err(plain), err(comp));
                eprintln!(
                    "{} n {n} cond {cond:e}: relative error plain {:.2e}, dot2 {:.2e} (bound {:.2e})",
                    if single { "f32" } else { "f64" },
                    ep / sv.abs(),
                    ec / sv.abs(),
                    bound / sv.abs()
                );
                assert!(ec <= bound, "dot2 error {ec:e} above the bound {bound:e}");
                // Orders of magnitude below the plain sum's where the plain
                // one has any error to speak of and the compensated one is
                // meaningful (cond·u² well below 1).
                if ep > 1e6 * u * sv.abs() && cond * u * u < 1e-2 {
                    assert!(ec * 1e3 <= ep, "dot2 {ec:e} not far below plain {ep:e}");
                }
                // Every tier and thread count: the same bits.
                for tier in common::tiers() {
                    for t in [1, 2, 7] {
                        let exec = Exec::on(tier).threads(t);
                        assert_eq!(
                            run_dot(single, &x, &y, true, &exec).to_bits(),
                            comp.to_bits(),
                            "{tier:?} {t} threads"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn compensated_sum_of_the_split_products() {
    // Σ (p + e) over TwoProd's pairs of GenDot data: an ill-conditioned sum
    // of 2n terms with the dot product's condition.
    let mut rng = Rng::for_label("compensated/sum", 2);
    let u = 2f64.powi(-53);
    for &cond in &[1e8, 1e16, 1e24] {
        let (x, y) = gen_dot(2000, cond, false, &mut rng);
        let terms: Vec<f64> = x
            .iter()
            .zip(&y)
            .flat_map(|(a, b)| {
                let p = a * b;
                [p, a.mul_add(*b, -p)]
            })
            .collect();
        let s = exact_dot(&x, &y);
        let sv = to_f64(&s);
        let abs_sum: f64 = terms.iter().map(|t| t.abs()).sum();
        let n = terms.len();
        let sum = |op: ReduceOp, v: &ArrayView, exec: &Exec| {
            let mut out = [0f64];
            reduce(
                op,
                &[0],
                v,
                &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
                exec,
            )
            .unwrap();
            out[0]
        };
        let v = ArrayView::from_slice(&terms, &[n]).unwrap();
        let plain = sum(ReduceOp::Sum, &v, &Exec::SEQ);
        let comp = sum(ReduceOp::Sum2, &v, &Exec::SEQ);
        let err = |r: f64| to_f64(&big(r).sub(&s, PREC, RM).abs());
        let g = gamma(depth(n), u);
        let bound = u * sv.abs() + 2.0 * g * g * abs_sum * 1.01;
        eprintln!(
            "sum n {n} cond {cond:e}: plain {:.2e}, sum2 {:.2e} relative",
            err(plain) / sv.abs(),
            err(comp) / sv.abs()
        );
        assert!(err(comp) <= bound);
        // Reversed and strided: the same terms in the same numbering.
        let mut wide = vec![0f64; 3 * n];
        for (i, t) in terms.iter().enumerate() {
            wide[3 * (n - 1 - i) + 1] = *t;
        }
        let rv = ArrayView::from_slice_strided(&wide, &[n], &[-3], 3 * (n - 1) + 1).unwrap();
        for t in [1, 2, 7] {
            assert_eq!(
                sum(ReduceOp::Sum2, &rv, &Exec::default().threads(t)).to_bits(),
                comp.to_bits()
            );
        }
    }
}

#[test]
fn pairs_sum_in_pairs() {
    // Σ of n copies of (1, 2^-40) as df32: n + n·2^-40 (exact in the pair).
    let n = 4099;
    let v = vec![
        Pair {
            hi: 1.0f32,
            lo: 2f32.powi(-40)
        };
        n
    ];
    let mut out = [Pair::<f32>::default()];
    reduce(
        ReduceOp::Sum2,
        &[0],
        &ArrayView::from_slice(&v, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        &Exec::SEQ,
    )
    .unwrap();
    assert_eq!(
        out[0].hi as f64 + out[0].lo as f64,
        n as f64 + n as f64 * 2f64.powi(-40)
    );
    // Infinities and NaN give the plain sum's value.
    let w = [1.0f64, f64::INFINITY, 2.0];
    let mut o = [0f64];
    reduce(
        ReduceOp::Sum2,
        &[0],
        &ArrayView::from_slice(&w, &[3]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut o, &[]).unwrap(),
        &Exec::SEQ,
    )
    .unwrap();
    assert_eq!(o[0], f64::INFINITY);
    // A plain Sum of pairs is refused (it would drop the trailing parts).
    let r = reduce(
        ReduceOp::Sum,
        &[0],
        &ArrayView::from_slice(&v, &[n]).unwrap(),
        &mut ArrayViewMut::from_slice(&mut out, &[]).unwrap(),
        &Exec::SEQ,
    );
    assert!(r.is_err());
}

#[test]
fn dot2_is_the_compensated_sum_of_the_two_prod_pairs() {
    // Dot2 reads its operands; the same products made by the `two_prod`
    // kind and summed as pairs by Sum2 give the same bits.
    let mut rng = Rng::for_label("compensated/dot-vs-pairs", 3);
    for n in [1usize, 15, 16, 17, 1000, 1024, 1025, 5000] {
        let x: Vec<f32> = (0..n).map(|_| (rng.unit() as f32 - 0.5) * 4.0).collect();
        let y: Vec<f32> = (0..n).map(|_| (rng.unit() as f32 - 0.5) * 4.0).collect();
        for tier in common::tiers() {
            let exec = Exec::on(tier);
            let mut pairs = vec![Pair::<f32>::default(); n];
            tessera::typed::elementwise(tessera::Kind::TwoProd, &[&x, &y], &mut pairs, &exec)
                .unwrap();
            let mut a = [0f32];
            reduce(
                ReduceOp::Sum2,
                &[0],
                &ArrayView::from_slice(&pairs, &[n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut a, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            let mut b = [0f32];
            dot2(
                &[0],
                &ArrayView::from_slice(&x, &[n]).unwrap(),
                &ArrayView::from_slice(&y, &[n]).unwrap(),
                &mut ArrayViewMut::from_slice(&mut b, &[]).unwrap(),
                &exec,
            )
            .unwrap();
            assert_eq!(a[0].to_bits(), b[0].to_bits(), "n {n} {tier:?}");
        }
    }
}
