//! Products of narrow integers (`i8`, `u8`, `i16`) into `i32`: the packed
//! kernels (VNNI quads, pairs) on every tier, at 1, 2 and 7 threads, at every
//! edge of their tiles and blocks, over plain, transposed, strided,
//! negative-stride and batched operands, against the exact sum computed in
//! i128 here and reduced modulo 2^32.

use tessera::{contract, ArrayView, ArrayViewMut, ContractSpec, DType, Element, Exec, Par};
use tessera_testkit::rng::Rng;

/// The narrow input types, with a random value over their whole range.
trait Input: Element + Copy + Default {
    fn draw(rng: &mut Rng) -> Self;
    fn wide(self) -> i128;
}
impl Input for i8 {
    fn draw(rng: &mut Rng) -> Self {
        rng.next_u64() as i8
    }
    fn wide(self) -> i128 {
        self as i128
    }
}
impl Input for u8 {
    fn draw(rng: &mut Rng) -> Self {
        rng.next_u64() as u8
    }
    fn wide(self) -> i128 {
        self as i128
    }
}
impl Input for i16 {
    fn draw(rng: &mut Rng) -> Self {
        rng.next_u64() as i16
    }
    fn wide(self) -> i128 {
        self as i128
    }
}

/// `Σ_t a[i, t]·b[t, j]` exactly, modulo 2^32, for C-order `a` [m, k] and
/// `b` [k, n].
fn model<A: Input, B: Input>(a: &[A], b: &[B], m: usize, k: usize, n: usize) -> Vec<i32> {
    let mut c = vec![0i32; m * n];
    for i in 0..m {
        for j in 0..n {
            let s: i128 = (0..k)
                .map(|t| a[i * k + t].wide() * b[t * n + j].wide())
                .sum();
            c[i * n + j] = s as i32; // modulo 2^32
        }
    }
    c
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

fn draw<T: Input>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::draw(rng)).collect()
}

fn product(a: &ArrayView<'_>, b: &ArrayView<'_>, m: usize, n: usize, exec: &Exec) -> Vec<i32> {
    let mut c = vec![i32::MIN; m * n];
    contract(
        &ContractSpec::new(DType::I32).contracting(1, 0),
        a,
        b,
        None,
        &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
        exec,
    )
    .unwrap();
    c
}

/// One shape: plain, b transposed in memory, a read backwards through a
/// negative stride and b through a column stride of 2.
fn check_shape<A: Input, B: Input>(rng: &mut Rng, m: usize, k: usize, n: usize, execs: &[Exec]) {
    let a: Vec<A> = draw(rng, m * k);
    let b: Vec<B> = draw(rng, k * n);
    let want = model(&a, &b, m, k, n);
    let bt: Vec<B> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
    // a reversed in memory, read with negative strides from its last element.
    let ar: Vec<A> = a.iter().rev().copied().collect();
    // b with a gap after each value.
    let mut b2 = vec![B::default(); 2 * k * n];
    for (i, &x) in b.iter().enumerate() {
        b2[2 * i] = x;
    }
    let name = format!("{:?}x{:?} {m}x{k}x{n}", A::DTYPE, B::DTYPE);
    for exec in execs {
        let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
        let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
        assert_eq!(product(&av, &bv, m, n, exec), want, "{name} on {exec:?}");
        let btv = ArrayView::from_slice_strided(&bt, &[k, n], &[1, k as isize], 0).unwrap();
        assert_eq!(
            product(&av, &btv, m, n, exec),
            want,
            "{name} bᵀ on {exec:?}"
        );
        let arv = ArrayView::from_slice_strided(
            &ar,
            &[m, k],
            &[-(k as isize), -1],
            (m * k).saturating_sub(1),
        )
        .unwrap();
        let b2v = ArrayView::from_slice_strided(&b2, &[k, n], &[2 * n as isize, 2], 0).unwrap();
        assert_eq!(
            product(&arv, &b2v, m, n, exec),
            want,
            "{name} a reversed, b strided on {exec:?}"
        );
    }
}

fn every_pair(rng: &mut Rng, m: usize, k: usize, n: usize, execs: &[Exec]) {
    check_shape::<i8, i8>(rng, m, k, n, execs);
    check_shape::<i8, u8>(rng, m, k, n, execs);
    check_shape::<u8, i8>(rng, m, k, n, execs);
    check_shape::<u8, u8>(rng, m, k, n, execs);
    check_shape::<i16, i8>(rng, m, k, n, execs);
    check_shape::<u8, i16>(rng, m, k, n, execs);
    check_shape::<i8, i16>(rng, m, k, n, execs);
    check_shape::<i16, u8>(rng, m, k, n, execs);
    check_shape::<i16, i16>(rng, m, k, n, execs);
}

#[test]
fn edge_tiles_of_every_size_are_exact_on_every_tier() {
    let mut rng = Rng::new(0x1A7);
    let execs = execs();
    // Every partial tile of the 14 × 32 and 6 × 16 kernels in each dimension,
    // with depths that end inside a pair and inside a quad.
    for m in 1..=33 {
        let n = 1 + (m * 7) % 33;
        let k = [1, 2, 3, 5, 8, 13][m % 6];
        every_pair(&mut rng, m, k, n, &execs);
    }
    for n in 1..=33 {
        let m = 1 + (n * 5) % 33;
        every_pair(&mut rng, m, 6 + n % 4, n, &execs);
    }
}

#[test]
fn block_boundaries_and_threads_are_exact() {
    let mut rng = Rng::new(0x1A8);
    let execs = execs();
    // Depths across the packed blocks (256 groups: 1024 quads' steps, 512
    // pairs'), columns across the 384-column block, rows across threads.
    for &(m, k, n) in &[(20, 1030, 9), (15, 515, 40), (9, 40, 400), (100, 100, 100)] {
        every_pair(&mut rng, m, k, n, &execs);
    }
}

#[test]
fn sums_past_2_pow_31_wrap_exactly() {
    // Extreme values along a depth long enough to wrap: (−128)·(−128),
    // 255·255, (−32768)·(−32768) (whose pair sum, 2^31, the pair instruction
    // gives as −2^31: the same value modulo 2^32).
    let execs = execs();
    let k = 140_000;
    let (m, n) = (3, 17);
    fn filled<A: Input, B: Input>(x: A, y: B, m: usize, k: usize, n: usize, execs: &[Exec]) {
        let a = vec![x; m * k];
        let b = vec![y; k * n];
        let exact = x.wide() * y.wide() * k as i128;
        let want = vec![exact as i32; m * n];
        for exec in execs {
            let got = product(
                &ArrayView::from_slice(&a, &[m, k]).unwrap(),
                &ArrayView::from_slice(&b, &[k, n]).unwrap(),
                m,
                n,
                exec,
            );
            assert_eq!(
                got,
                want,
                "{:?}·{:?} over {k} on {exec:?}",
                A::DTYPE,
                B::DTYPE
            );
        }
    }
    filled(-128i8, -128i8, m, k, n, &execs);
    filled(255u8, 255u8, m, k, n, &execs);
    filled(-128i8, 255u8, m, k, n, &execs);
    filled(255u8, -128i8, m, k, n, &execs);
    filled(i16::MIN, i16::MIN, m, k, n, &execs);
    filled(i16::MIN, 255u8, m, k, n, &execs);
}

#[test]
fn batches_init_and_other_destinations() {
    // A batch axis with a broadcast side, an init added modulo 2^32, and the
    // result cast into i64 and f64 destinations.
    let mut rng = Rng::new(0x1A9);
    let (nb, m, k, n) = (3, 17, 45, 21);
    let a: Vec<i8> = draw(&mut rng, nb * m * k);
    let b: Vec<u8> = draw(&mut rng, k * n);
    let init: Vec<i32> = (0..nb * m * n).map(|_| rng.next_u64() as i32).collect();
    let mut want = Vec::new();
    for q in 0..nb {
        let part = model(&a[q * m * k..(q + 1) * m * k], &b, m, k, n);
        for (i, v) in part.into_iter().enumerate() {
            want.push(v.wrapping_add(init[q * m * n + i]));
        }
    }
    let spec = ContractSpec::new(DType::I32).batch(0, 0).contracting(2, 1);
    for exec in execs() {
        let av = ArrayView::from_slice(&a, &[nb, m, k]).unwrap();
        let bv = ArrayView::from_slice(&b, &[1, k, n]).unwrap();
        let iv = ArrayView::from_slice(&init, &[nb, m, n]).unwrap();
        let mut c = vec![0i32; nb * m * n];
        let mut dv = ArrayViewMut::from_slice(&mut c, &[nb, m, n]).unwrap();
        contract(&spec, &av, &bv, Some(&iv), &mut dv, &exec).unwrap();
        assert_eq!(c, want, "i32 on {exec:?}");
        let mut c64 = vec![0i64; nb * m * n];
        let mut dv = ArrayViewMut::from_slice(&mut c64, &[nb, m, n]).unwrap();
        contract(&spec, &av, &bv, Some(&iv), &mut dv, &exec).unwrap();
        let w64: Vec<i64> = want.iter().map(|&v| v as i64).collect();
        assert_eq!(c64, w64, "i64 destination on {exec:?}");
        let mut cf = vec![0f64; nb * m * n];
        let mut dv = ArrayViewMut::from_slice(&mut cf, &[nb, m, n]).unwrap();
        contract(&spec, &av, &bv, Some(&iv), &mut dv, &exec).unwrap();
        let wf: Vec<f64> = want.iter().map(|&v| v as f64).collect();
        assert_eq!(cf, wf, "f64 destination on {exec:?}");
    }
}

#[test]
fn qmatmul_i8_takes_the_same_path() {
    let mut rng = Rng::new(0x1AA);
    let (m, k, n) = (29, 77, 35);
    let a: Vec<u8> = draw(&mut rng, m * k);
    let b: Vec<i8> = draw(&mut rng, k * n);
    let want = model(&a, &b, m, k, n);
    for exec in execs() {
        let mut c = vec![0i32; m * n];
        tessera::contract::qmatmul::qmatmul_i8(
            &ArrayView::from_slice(&a, &[m, k]).unwrap(),
            &ArrayView::from_slice(&b, &[k, n]).unwrap(),
            &mut ArrayViewMut::from_slice(&mut c, &[m, n]).unwrap(),
            &exec,
        )
        .unwrap();
        assert_eq!(c, want, "qmatmul_i8 on {exec:?}");
    }
}

#[test]
fn destinations_in_place_misaligned_and_padded_take_the_same_sums() {
    // An i32 destination of C order takes the sums in place; a misaligned
    // one (bytes shifted by one) and one with padded rows go through a
    // buffer: the same exact sums, the padding untouched.
    let mut rng = Rng::new(0x1A9);
    let (m, k, n) = (29, 68, 45);
    let a: Vec<i8> = draw(&mut rng, m * k);
    let b: Vec<u8> = draw(&mut rng, k * n);
    let want = model(&a, &b, m, k, n);
    let av = ArrayView::from_slice(&a, &[m, k]).unwrap();
    let bv = ArrayView::from_slice(&b, &[k, n]).unwrap();
    let spec = ContractSpec::new(DType::I32).contracting(1, 0);
    for exec in &execs() {
        let mut bytes = vec![0xAAu8; 1 + 4 * m * n];
        contract(
            &spec,
            &av,
            &bv,
            None,
            &mut ArrayViewMut::new(DType::I32, &[m, n], &[n as isize, 1], 0, &mut bytes[1..])
                .unwrap(),
            exec,
        )
        .unwrap();
        assert_eq!(bytes[0], 0xAA);
        let got: Vec<i32> = bytes[1..]
            .chunks_exact(4)
            .map(|q| i32::from_le_bytes(q.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "misaligned on {exec:?}");
        let ld = n + 2;
        let mut padded = vec![7i32; m * ld];
        contract(
            &spec,
            &av,
            &bv,
            None,
            &mut ArrayViewMut::from_slice_strided(&mut padded, &[m, n], &[ld as isize, 1], 0)
                .unwrap(),
            exec,
        )
        .unwrap();
        for i in 0..m {
            assert_eq!(&padded[i * ld..i * ld + n], &want[i * n..(i + 1) * n]);
            assert_eq!(&padded[i * ld + n..(i + 1) * ld], &[7, 7]);
        }
    }
}
