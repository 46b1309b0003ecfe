//! Compensated contractions (accumulators `df32` and `dd64`).
//!
//! - Bits: every tier, 1/2/7 threads, transposed and strided layouts, batch
//!   axes, inits of the part dtype and of the pair dtype, operands of other
//!   dtypes, equal to an independent slow model of the stated orders written
//!   here (chain: its compensated steps in k order from init's pair; lane:
//!   Dot2's 16 lanes per
//!   block of 1024, the fold, the block tree, then init joined), the result
//!   normalised by TwoSum.
//! - Accuracy: Ogita–Rump–Oishi's ill-conditioned dot products (condition up
//!   to 10^12 for df32, 10^32 for dd64) in rows and columns of chain- and
//!   lane-order products, against the exact value (astro-float): within
//!   u·|x| + γ(K+2)²·Σ|a||b|, and orders of magnitude below the plain
//!   accumulator's error.

mod common;

use common::gendot::{big, exact_dot, gen_dot, to_f64, PREC, RM};
use tessera::pair::PairFloat;
use tessera::{contract, ContractSpec};
use tessera::{ArrayView, ArrayViewMut, DType, Element, Exec, Pair};
use tessera_testkit::rng::Rng;

/// (s, c) after one Dot2 step with the product a·b (the lanes of lane
/// order): TwoProd, TwoSum, the error terms into c.
fn step<F: PairFloat>(s: F, c: F, a: F, b: F) -> (F, F) {
    let p = a * b;
    let e = a.fma(b, -p);
    let s1 = s + p;
    let bb = s1 - s;
    let q = (s - (s1 - bb)) + (p - bb);
    (s1, c + (q + e))
}

/// (s, c) after one chain step: s + a·b's rounded part into s, the rest,
/// TwoSum's leading error term plus fma(a, b, −b'), into c.
fn chain_step<F: PairFloat>(s: F, c: F, a: F, b: F) -> (F, F) {
    let p = a * b;
    let s1 = s + p;
    let bb = s1 - s;
    let t = s - (s1 - bb);
    (s1, c + (t + a.fma(b, -bb)))
}

/// Two partial states joined: TwoSum of the sums, the compensations and
/// the error added.
fn join<F: PairFloat>(l: (F, F), r: (F, F)) -> (F, F) {
    let s = l.0 + r.0;
    let bb = s - l.0;
    let q = (l.0 - (s - bb)) + (r.0 - bb);
    (s, (l.1 + r.1) + q)
}

/// The stated finish: (s, c) as the TwoSum of its parts when s and that sum
/// are finite, (s, +0) when s is not.
fn finish<F: PairFloat>((s, c): (F, F)) -> Pair<F> {
    if !s.finite() {
        return Pair { hi: s, lo: F::ZERO };
    }
    let h = s + c;
    if !h.finite() {
        return Pair { hi: s, lo: c };
    }
    let bb = h - s;
    Pair {
        hi: h,
        lo: (s - (h - bb)) + (c - bb),
    }
}

/// The block tree: the left part holds the largest power of two of blocks
/// strictly below their count.
fn tree<F: PairFloat>(v: &[(F, F)]) -> (F, F) {
    if v.len() == 1 {
        return v[0];
    }
    let mut m = 1;
    while m * 2 < v.len() {
        m *= 2;
    }
    join(tree(&v[..m]), tree(&v[m..]))
}

/// The lane-order (s, c) of Σ x·y.
fn lane<F: PairFloat>(x: &[F], y: &[F]) -> (F, F) {
    let blocks: Vec<(F, F)> = x
        .chunks(1024)
        .zip(y.chunks(1024))
        .map(|(bx, by)| {
            let mut l = [(F::ZERO, F::ZERO); 16];
            for (j, (&a, &b)) in bx.iter().zip(by).enumerate() {
                let (s, c) = l[j % 16];
                l[j % 16] = step(s, c, a, b);
            }
            for w in [8, 4, 2, 1] {
                for i in 0..w {
                    l[i] = join(l[i], l[i + w]);
                }
            }
            l[0]
        })
        .collect();
    if blocks.is_empty() {
        (F::ZERO, F::ZERO)
    } else {
        tree(&blocks)
    }
}

/// The model of a contraction of a [R, K] and b [K, C] (row-major, in the
/// part dtype already) with inits as pairs: chain or lane order by §5.5's
/// rule.
fn model<F: PairFloat>(
    a: &[F],
    b: &[F],
    init: &[Pair<F>],
    (r, c, k): (usize, usize, usize),
) -> Vec<Pair<F>> {
    let chain = r > 4 && c > 4 && r * c >= 64 && k < 128 * r * c;
    let mut out = Vec::with_capacity(r * c);
    for i in 0..r {
        for j in 0..c {
            let x: Vec<F> = (0..k).map(|q| a[i * k + q]).collect();
            let y: Vec<F> = (0..k).map(|q| b[q * c + j]).collect();
            let i0 = init[i * c + j];
            let v = if chain {
                let mut st = (i0.hi, i0.lo);
                for q in 0..k {
                    st = chain_step(st.0, st.1, x[q], y[q]);
                }
                st
            } else if k == 0 {
                (i0.hi, i0.lo)
            } else {
                join(lane(&x, &y), (i0.hi, i0.lo))
            };
            out.push(finish(v));
        }
    }
    out
}

trait Part: PairFloat + Element + Default + std::fmt::Debug {
    fn view<'a>(p: &'a [Pair<Self>], shape: &[usize]) -> ArrayView<'a>;
    fn view_mut<'a>(p: &'a mut [Pair<Self>], shape: &[usize]) -> ArrayViewMut<'a>;
    const PAIR: DType;
    fn from_f64(v: f64) -> Self;
    fn bits(self) -> u64;
}
impl Part for f32 {
    fn view<'a>(p: &'a [Pair<Self>], shape: &[usize]) -> ArrayView<'a> {
        ArrayView::from_slice(p, shape).unwrap()
    }
    fn view_mut<'a>(p: &'a mut [Pair<Self>], shape: &[usize]) -> ArrayViewMut<'a> {
        ArrayViewMut::from_slice(p, shape).unwrap()
    }
    const PAIR: DType = DType::Df32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Part for f64 {
    fn view<'a>(p: &'a [Pair<Self>], shape: &[usize]) -> ArrayView<'a> {
        ArrayView::from_slice(p, shape).unwrap()
    }
    fn view_mut<'a>(p: &'a mut [Pair<Self>], shape: &[usize]) -> ArrayViewMut<'a> {
        ArrayViewMut::from_slice(p, shape).unwrap()
    }
    const PAIR: DType = DType::Dd64;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Values of very different magnitudes and signs, so that compensations
/// matter, with some exact zeros.
fn values<F: Part>(n: usize, rng: &mut Rng) -> Vec<F> {
    (0..n)
        .map(|i| {
            if i % 37 == 5 {
                return F::from_f64(0.0);
            }
            let m = 2.0 * rng.unit() - 1.0;
            let e = (rng.unit() * 40.0) as i32 - 20;
            F::from_f64(m * 2f64.powi(e))
        })
        .collect()
}

fn same<F: Part>(got: &[Pair<F>], want: &[Pair<F>], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.hi.bits() == w.hi.bits() && g.lo.bits() == w.lo.bits(),
            "{what}: output {i}: got {g:?}, model {w:?}"
        );
    }
}

fn bits_case<F: Part>(rng: &mut Rng, (r, c, k): (usize, usize, usize), pair_init: bool) {
    let a = values::<F>(r * k, rng);
    let b = values::<F>(k * c, rng);
    let init_f = values::<F>(r * c, rng);
    // A pair init whose parts are both in play.
    let init_p: Vec<Pair<F>> = init_f
        .iter()
        .map(|&h| Pair {
            hi: h,
            lo: h * F::from_f64(2f64.powi(-30)),
        })
        .collect();
    // A pair init enters as a cast into the pair: its exact value as a
    // normalised pair (TwoSum of its parts).
    let inits: Vec<Pair<F>> = if pair_init {
        init_p
            .iter()
            .map(|p| {
                let s = p.hi + p.lo;
                let bb = s - p.hi;
                Pair {
                    hi: s,
                    lo: (p.hi - (s - bb)) + (p.lo - bb),
                }
            })
            .collect()
    } else {
        init_f
            .iter()
            .map(|&h| Pair { hi: h, lo: F::ZERO })
            .collect()
    };
    let want = model(&a, &b, &inits, (r, c, k));
    // a also as its transpose [K, R] (contracted axis 0), b as a strided
    // view of a wider buffer.
    let at: Vec<F> = (0..k * r).map(|q| a[(q % r) * k + q / r]).collect();
    let mut bw = vec![F::default(); k * (c + 3)];
    for q in 0..k {
        bw[q * (c + 3)..q * (c + 3) + c].copy_from_slice(&b[q * c..q * c + c]);
    }
    let spec = ContractSpec::new(F::PAIR).contracting(1, 0);
    let spec_t = ContractSpec::new(F::PAIR).contracting(0, 0);
    for tier in common::tiers() {
        for threads in [1, 2, 7] {
            let exec = Exec::on(tier).threads(threads);
            for transposed in [false, true] {
                let mut out = vec![Pair::<F>::default(); r * c];
                let va = if transposed {
                    ArrayView::from_slice(&at, &[k, r]).unwrap()
                } else {
                    ArrayView::from_slice(&a, &[r, k]).unwrap()
                };
                let vb =
                    ArrayView::from_slice_strided(&bw, &[k, c], &[(c + 3) as isize, 1], 0).unwrap();
                let iv = if pair_init {
                    F::view(&init_p, &[r, c])
                } else {
                    ArrayView::from_slice(&init_f, &[r, c]).unwrap()
                };
                contract(
                    if transposed { &spec_t } else { &spec },
                    &va,
                    &vb,
                    Some(&iv),
                    &mut F::view_mut(&mut out, &[r, c]),
                    &exec,
                )
                .unwrap();
                same(
                    &out,
                    &want,
                    &format!(
                        "{:?} {r}×{c}×{k} {tier:?} threads {threads} transposed {transposed} pair init {pair_init}",
                        F::PAIR
                    ),
                );
            }
        }
    }
}

#[test]
fn pair_contractions_follow_the_stated_orders_on_every_tier() {
    let mut rng = Rng::for_label("contract-pair/bits", 1);
    // Chain order (edge tiles, k-blocks of 256, column blocks of 256) and
    // lane order (few rows or columns; depth over several blocks).
    let shapes = [
        (37, 29, 300),
        (8, 8, 1),
        (5, 300, 20),
        (70, 9, 600),
        (3, 2, 5000),
        (1, 7, 1025),
        (9, 4, 2048),
        (6, 6, 0),
    ];
    for (i, &shape) in shapes.iter().enumerate() {
        bits_case::<f32>(&mut rng, shape, i % 2 == 1);
        bits_case::<f64>(&mut rng, shape, i % 2 == 0);
    }
}

#[test]
fn pair_contraction_with_batch_axes_and_other_operand_dtypes() {
    // a [2, R, K] f64 (rounded into f32 for df32), b [2, K, C] i16: each
    // batch element equals the model of its own product.
    let mut rng = Rng::for_label("contract-pair/batch", 2);
    let (nb, r, c, k) = (2, 9, 10, 70);
    let a: Vec<f64> = values::<f64>(nb * r * k, &mut rng);
    let b: Vec<i16> = (0..nb * k * c)
        .map(|_| (rng.unit() * 2000.0) as i16 - 1000)
        .collect();
    let spec = ContractSpec::new(DType::Df32).batch(0, 0).contracting(2, 1);
    for tier in common::tiers() {
        let mut out = vec![0f64; nb * r * c];
        contract(
            &spec,
            &ArrayView::from_slice(&a, &[nb, r, k]).unwrap(),
            &ArrayView::from_slice(&b, &[nb, k, c]).unwrap(),
            None,
            &mut ArrayViewMut::from_slice(&mut out, &[nb, r, c]).unwrap(),
            &Exec::on(tier).threads(2),
        )
        .unwrap();
        for bi in 0..nb {
            let af: Vec<f32> = a[bi * r * k..][..r * k].iter().map(|&v| v as f32).collect();
            let bf: Vec<f32> = b[bi * k * c..][..k * c].iter().map(|&v| v as f32).collect();
            let inits = vec![Pair::<f32>::default(); r * c];
            let want = model(&af, &bf, &inits, (r, c, k));
            for (i, w) in want.iter().enumerate() {
                // hi + lo of two f32 is exact in f64 when lo is within half
                // an ulp of hi and both are normal: here they are.
                let exact = w.hi as f64 + w.lo as f64;
                assert_eq!(
                    out[bi * r * c + i].to_bits(),
                    exact.to_bits(),
                    "batch {bi} output {i} {tier:?}"
                );
            }
        }
    }
}

#[test]
fn pair_accumulators_refuse_complex_operands() {
    let a = vec![num_complex::Complex::<f32>::new(1.0, 2.0); 4];
    let b = vec![1f32; 4];
    let mut out = vec![Pair::<f32>::default(); 4];
    let err = contract(
        &ContractSpec::new(DType::Df32).contracting(1, 0),
        &ArrayView::from_slice(&a, &[2, 2]).unwrap(),
        &ArrayView::from_slice(&b, &[2, 2]).unwrap(),
        None,
        &mut ArrayViewMut::from_slice(&mut out, &[2, 2]).unwrap(),
        &Exec::SEQ,
    )
    .unwrap_err();
    assert!(format!("{err}").contains("real operands"), "{err}");
    assert!(out.iter().all(|p| p.hi == 0.0 && p.lo == 0.0));
}

fn gamma(n: f64, u: f64) -> f64 {
    n * u / (1.0 - n * u)
}

/// Rows of a (each an x of GenDot) against columns of b (each a y), in a
/// product of `rows` × `rows` outputs: the diagonal outputs are the
/// ill-conditioned dots, the others ordinary ones; every output is checked
/// against its exact value.
fn accuracy_case<F: Part>(n: usize, cond: f64, rows: usize, rng: &mut Rng) -> (f64, f64) {
    let single = F::PAIR == DType::Df32;
    let u = if single {
        2f64.powi(-24)
    } else {
        2f64.powi(-53)
    };
    let pairs: Vec<(Vec<f64>, Vec<f64>)> =
        (0..rows).map(|_| gen_dot(n, cond, single, rng)).collect();
    let a: Vec<F> = pairs
        .iter()
        .flat_map(|(x, _)| x.iter().map(|&v| F::from_f64(v)))
        .collect();
    let b: Vec<F> = (0..n)
        .flat_map(|q| pairs.iter().map(move |(_, y)| F::from_f64(y[q])))
        .collect();
    let shape = [(rows, n), (n, rows)];
    let run = |acc: DType| -> Vec<f64> {
        let mut out = vec![0f64; rows * rows];
        contract(
            &ContractSpec::new(acc).contracting(1, 0),
            &ArrayView::from_slice(&a, &[shape[0].0, shape[0].1]).unwrap(),
            &ArrayView::from_slice(&b, &[shape[1].0, shape[1].1]).unwrap(),
            None,
            &mut ArrayViewMut::from_slice(&mut out, &[rows, rows]).unwrap(),
            &Exec::SEQ,
        )
        .unwrap();
        out
    };
    let part = if single { DType::F32 } else { DType::F64 };
    let (comp, plain) = (run(F::PAIR), run(part));
    let (mut worst_comp, mut worst_plain) = (0f64, 0f64);
    for i in 0..rows {
        for j in 0..rows {
            let (x, y) = (&pairs[i].0, &pairs[j].1);
            let exact = exact_dot(x, y);
            let xv = to_f64(&exact);
            let abs: f64 = x.iter().zip(y).map(|(p, q)| (p * q).abs()).sum();
            // The output rounded into f64 (dst), so the part's u applies
            // only through the pair's own bound plus f64's rounding.
            let err = |v: f64| to_f64(&big(v).sub(&exact, PREC, RM).abs());
            let e = err(comp[i * rows + j]);
            let bound = 2f64.powi(-53) * xv.abs() + gamma((n + 2) as f64, u).powi(2) * abs;
            assert!(
                e <= bound,
                "{:?} n {n} cond {cond:e} ({i}, {j}): error {e:e} > bound {bound:e}",
                F::PAIR
            );
            if i == j {
                worst_comp = worst_comp.max(e / xv.abs());
                worst_plain = worst_plain.max(err(plain[i * rows + j]) / xv.abs());
            }
        }
    }
    (worst_comp, worst_plain)
}

#[test]
fn pair_contractions_on_ill_conditioned_dots() {
    let mut rng = Rng::for_label("contract-pair/gendot", 3);
    // rows = 8: chain order (8 × 8 outputs, K < 128·64); rows = 2: lane.
    for rows in [8usize, 2] {
        for &cond in &[1e4, 1e8, 1e12] {
            let (c, p) = accuracy_case::<f32>(1500, cond, rows, &mut rng);
            eprintln!("df32 rows {rows} cond {cond:e}: relative error {c:e} (plain f32 {p:e})");
            if cond >= 1e8 {
                assert!(
                    c * 1e3 < p.max(1e-300),
                    "df32 not far below plain: {c:e} vs {p:e}"
                );
            }
        }
        for &cond in &[1e8, 1e16, 1e24, 1e32] {
            let (c, p) = accuracy_case::<f64>(1500, cond, rows, &mut rng);
            eprintln!("dd64 rows {rows} cond {cond:e}: relative error {c:e} (plain f64 {p:e})");
            if cond >= 1e16 {
                assert!(
                    c * 1e3 < p.max(1e-300),
                    "dd64 not far below plain: {c:e} vs {p:e}"
                );
            }
        }
    }
}
