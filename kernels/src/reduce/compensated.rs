//! Compensated sums ([`super::ReduceOp::Sum2`]): the lane order of §5.3 with
//! each lane's running sum kept as a pair (s, c), where s is the plain
//! running sum and c gathers the exact error of each of its additions
//! (Ogita–Rump–Oishi's Sum2, and Dot2 where the terms are products formed
//! exactly by TwoProd). The terms are pairs of the carrier (df32 for f32 and
//! narrower, dd64 for f64, a pair dtype itself): a term (t, e) adds t to s
//! by TwoSum, whose error q is exact, and q + e to c.
//!
//! The order, per block of 1024 terms: term j to lane j mod 16; each lane
//! from (+0, +0) takes its terms in increasing number,
//! `s' = s + t; q = TwoSum error; c' = c + (q + e)`; the lanes fold as §5.3
//! says (lane i takes lane i + 8, then i + 4, i + 2, i + 1), and the blocks
//! combine by §5.3's tree, each combination of (s₁, c₁) and (s₂, c₂) being
//! `s = s₁ + s₂; q = its TwoSum error; c = (c₁ + c₂) + q`. The result is
//! s + c rounded once into the destination (s alone, with c dropped, where s
//! is not finite). Every tier runs the same operations in this order: the
//! vector tiers instantiate the one body below under their target features.

use super::engine::Pass;
use super::lanes::{BLOCK, LANES};
use crate::{Pair, Tier};
use tessera_generated::runtime::pair::PairFloat;

/// The compensated-sum pass over pair terms.
pub(crate) struct PairSum(pub Tier);

/// One term into a lane: TwoSum of the running sum and the term's leading
/// part, its error and the term's trailing part into the compensation.
#[inline(always)]
fn step<F: PairFloat>(s: &mut F, c: &mut F, t: Pair<F>) {
    let s1 = *s + t.hi;
    let bb = s1 - *s;
    let q = (*s - (s1 - bb)) + (t.hi - bb);
    *c = *c + (q + t.lo);
    *s = s1;
}

/// Two partial sums, left then right.
#[inline(always)]
pub(crate) fn join<F: PairFloat>(a: Pair<F>, b: Pair<F>) -> Pair<F> {
    let s = a.hi + b.hi;
    let bb = s - a.hi;
    let q = (a.hi - (s - bb)) + (b.hi - bb);
    Pair {
        hi: s,
        lo: (a.lo + b.lo) + q,
    }
}

/// A term of a compensated sum: a pair, or one float (its trailing part
/// +0, which adds nothing: c + (q + 0) is c + q, c never being −0).
trait Term<F: PairFloat>: Copy {
    fn step(self, s: &mut F, c: &mut F);
}

/// The explicit register forms of [`block_body`] on the vector tiers: the
/// 16 lanes' (s, c) in `N` registers of `R` each, every lane's operations
/// those of [`Term::step`]; the last partial row and the fold as
/// [`block_body`] does them.
#[cfg(target_arch = "x86_64")]
mod vector {
    use super::*;
    use crate::simd::RealReg;

    /// The whole rows of a block (`full` terms, a multiple of 16): term
    /// `i + w·h` of a row starting at `i` is `term(i + w·h)`, a leading part
    /// and, where the terms are pairs, a trailing part (`None`: a float,
    /// whose step adds only TwoSum's error to c). Returns the lanes' (s, c).
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract);
    /// `term` may be called with any multiple of `w` below `full`.
    #[inline(always)]
    unsafe fn rows<R, const N: usize>(
        full: usize,
        term: impl Fn(usize) -> (R, Option<R>),
    ) -> ([R::T; LANES], [R::T; LANES])
    where
        R: RealReg,
        R::T: PairFloat,
    {
        const { assert!(N * R::LANES == LANES) };
        let w = R::LANES;
        let mut s = [R::T::ZERO; LANES];
        let mut c = [R::T::ZERO; LANES];
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); every store writes lanes w·h .. w·(h + 1) ≤ 16 of `s`
        // and `c`; `term` is called with multiples of w below `full`.
        unsafe {
            let mut rs = [R::zero(); N];
            let mut rc = [R::zero(); N];
            let mut i = 0;
            while i < full {
                for h in 0..N {
                    let (t, e) = term(i + w * h);
                    let s1 = R::add(rs[h], t);
                    let bb = R::sub(s1, rs[h]);
                    let q = R::add(R::sub(rs[h], R::sub(s1, bb)), R::sub(t, bb));
                    rc[h] = R::add(rc[h], e.map_or(q, |e| R::add(q, e)));
                    rs[h] = s1;
                }
                i += LANES;
            }
            for h in 0..N {
                rs[h].store(s.as_mut_ptr().add(w * h));
                rc[h].store(c.as_mut_ptr().add(w * h));
            }
        }
        (s, c)
    }

    /// A block of float terms.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    pub(super) unsafe fn block<R, const N: usize>(x: &[R::T]) -> Pair<R::T>
    where
        R: RealReg,
        R::T: PairFloat,
    {
        let full = x.len() / LANES * LANES;
        let p = x.as_ptr();
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); each load reads terms j .. j + w ≤ full ≤ x.len().
        let (mut s, mut c) = unsafe { rows::<R, N>(full, |j| (R::load(p.add(j)), None)) };
        for (l, &t) in x[full..].iter().enumerate() {
            t.step(&mut s[l], &mut c[l]);
        }
        fold(s, c)
    }

    /// [`block`] for the products of `x` and `y`, each formed exactly as
    /// (p, e) = (x·y, fma(x, y, −p)) (TwoProd) and added as a pair term.
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    pub(super) unsafe fn dot_block<R, const N: usize>(x: &[R::T], y: &[R::T]) -> Pair<R::T>
    where
        R: RealReg,
        R::T: PairFloat,
    {
        let n = x.len().min(y.len());
        let full = n / LANES * LANES;
        let (px, py) = (x.as_ptr(), y.as_ptr());
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); each load reads elements j .. j + w ≤ full ≤ n of `x`
        // and `y`.
        let (mut s, mut c) = unsafe {
            rows::<R, N>(full, |j| {
                let (a, b) = (R::load(px.add(j)), R::load(py.add(j)));
                let t = R::mul(a, b);
                (t, Some(R::fmsub(a, b, t)))
            })
        };
        for l in 0..n - full {
            product(x[full + l], y[full + l]).step(&mut s[l], &mut c[l]);
        }
        fold(s, c)
    }

    /// [`block`] for pair terms: the leading and trailing parts first
    /// copied apart (at most [`BLOCK`] of each, on the stack).
    ///
    /// # Safety
    /// The CPU runs `R`'s instruction set ([`RealReg`]'s feature contract).
    #[inline(always)]
    pub(super) unsafe fn pair_block<R, const N: usize>(x: &[Pair<R::T>]) -> Pair<R::T>
    where
        R: RealReg,
        R::T: PairFloat,
    {
        debug_assert!(x.len() <= BLOCK);
        let full = x.len() / LANES * LANES;
        let mut his = [R::T::ZERO; BLOCK];
        let mut los = [R::T::ZERO; BLOCK];
        for (i, t) in x[..full].iter().enumerate() {
            his[i] = t.hi;
            los[i] = t.lo;
        }
        let (ph, pl) = (his.as_ptr(), los.as_ptr());
        // SAFETY: the CPU runs R's instruction set (this function's
        // contract); each load reads elements j .. j + w ≤ full ≤ BLOCK of
        // `his` and `los`.
        let (mut s, mut c) =
            unsafe { rows::<R, N>(full, |j| (R::load(ph.add(j)), Some(R::load(pl.add(j))))) };
        for (l, &t) in x[full..].iter().enumerate() {
            t.step(&mut s[l], &mut c[l]);
        }
        fold(s, c)
    }
}

impl<F: PairFloat> Term<F> for Pair<F> {
    #[inline(always)]
    fn step(self, s: &mut F, c: &mut F) {
        step(s, c, self)
    }
}

impl<F: PairFloat> Term<F> for F {
    #[inline(always)]
    fn step(self, s: &mut F, c: &mut F) {
        let s1 = *s + self;
        let bb = s1 - *s;
        let q = (*s - (s1 - bb)) + (self - bb);
        *c = *c + q;
        *s = s1;
    }
}

/// TwoProd as the compensated dot forms it: (x·y, fma(x, y, −p)).
#[inline(always)]
fn product<F: PairFloat>(a: F, b: F) -> Pair<F> {
    let p = a * b;
    Pair {
        hi: p,
        lo: a.fma(b, -p),
    }
}

/// [`block_body`] of the products of `x` and `y` (the scalar tier's form).
#[inline(always)]
fn dot_body<F: PairFloat>(x: &[F], y: &[F]) -> Pair<F> {
    let mut s = [F::ZERO; LANES];
    let mut c = [F::ZERO; LANES];
    for (j, (&a, &b)) in x.iter().zip(y).enumerate() {
        let l = j % LANES;
        product(a, b).step(&mut s[l], &mut c[l]);
    }
    fold(s, c)
}

/// One block's (s, c): the 16 lanes, then their fold. The lanes are whole
/// arrays updated together (one vector register or two per array on the
/// vector tiers), each lane's operations those of [`Term::step`].
#[inline(always)]
fn block_body<F: PairFloat, T: Term<F>>(x: &[T]) -> Pair<F> {
    let mut s = [F::ZERO; LANES];
    let mut c = [F::ZERO; LANES];
    let mut chunks = x.chunks_exact(LANES);
    for ch in &mut chunks {
        let ch: &[T; LANES] = ch.try_into().expect("a whole chunk");
        let (mut ns, mut nc) = (s, c);
        for l in 0..LANES {
            let (mut sl, mut cl) = (s[l], c[l]);
            ch[l].step(&mut sl, &mut cl);
            ns[l] = sl;
            nc[l] = cl;
        }
        s = ns;
        c = nc;
    }
    for (l, &t) in chunks.remainder().iter().enumerate() {
        t.step(&mut s[l], &mut c[l]);
    }
    fold(s, c)
}

/// The lanes' fold: lane i takes lane i + 8, then i + 4, i + 2, i + 1.
#[inline(always)]
fn fold<F: PairFloat>(mut s: [F; LANES], mut c: [F; LANES]) -> Pair<F> {
    let mut w = LANES / 2;
    while w >= 1 {
        for i in 0..w {
            let r = join(
                Pair { hi: s[i], lo: c[i] },
                Pair {
                    hi: s[i + w],
                    lo: c[i + w],
                },
            );
            s[i] = r.hi;
            c[i] = r.lo;
        }
        w /= 2;
    }
    Pair { hi: s[0], lo: c[0] }
}

impl<F: FloatBlock + Send + Sync> Pass<Pair<F>> for PairSum {
    type V = Pair<F>;
    fn empty(&self) -> Pair<F> {
        Pair {
            hi: F::ZERO,
            lo: F::ZERO,
        }
    }
    fn block(&self, _: usize, _: usize, x: &[Pair<F>]) -> Pair<F> {
        F::pair_block_on(self.0, x)
    }
    fn combine(&self, a: Pair<F>, b: Pair<F>) -> Pair<F> {
        join(a, b)
    }
}

/// The compensated-sum pass over float terms (the terms' own values, read
/// in place where they lie contiguous): the bits of [`PairSum`] over the
/// same terms as pairs (t, +0).
pub(crate) struct FloatSum2(pub Tier);

impl<F: FloatBlock + Send + Sync> Pass<F> for FloatSum2 {
    type V = Pair<F>;
    fn empty(&self) -> Pair<F> {
        Pair {
            hi: F::ZERO,
            lo: F::ZERO,
        }
    }
    fn block(&self, _: usize, _: usize, x: &[F]) -> Pair<F> {
        F::float_block_on(self.0, x)
    }
    fn combine(&self, a: Pair<F>, b: Pair<F>) -> Pair<F> {
        join(a, b)
    }
}

/// A float carrier's compensated block on a tier: the register form where
/// the tier has vector registers, else [`block_body`] (the same bits).
pub(crate) trait FloatBlock: PairFloat {
    fn float_block_on(tier: Tier, x: &[Self]) -> Pair<Self>;
    fn pair_block_on(tier: Tier, x: &[Pair<Self>]) -> Pair<Self>;
    fn dot_block_on(tier: Tier, x: &[Self], y: &[Self]) -> Pair<Self>;
}

/// `vector::$form` over the arguments on the tier's registers where it has
/// vector ones (AVX-512: `$r5` × `$n5`; AVX2: `$r2` × `$n2`), else the
/// scalar form `$scalar` (the same bits).
macro_rules! on_tier {
    ($tier:expr, $form:ident, ($r2:ty, $n2:literal, $r5:ty, $n5:literal),
     ($($arg:ident: $ty:ty),*) -> $ret:ty, $scalar:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            /// # Safety
            /// The CPU runs AVX-512 F.
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn zmm($($arg: $ty),*) -> $ret {
                // SAFETY: this function enables AVX-512 F, which the CPU
                // runs (its contract).
                unsafe { vector::$form::<$r5, $n5>($($arg),*) }
            }
            /// # Safety
            /// The CPU runs AVX2 and FMA.
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2($($arg: $ty),*) -> $ret {
                // SAFETY: this function enables AVX2 and FMA, which the CPU
                // runs (its contract).
                unsafe { vector::$form::<$r2, $n2>($($arg),*) }
            }
            if crate::tier::runs_avx512($tier) {
                // SAFETY: the tier was resolved against this CPU and runs
                // AVX-512.
                return unsafe { zmm($($arg),*) };
            }
            if crate::tier::runs_avx2($tier) {
                // SAFETY: the tier was resolved against this CPU and runs
                // AVX2 and FMA.
                return unsafe { avx2($($arg),*) };
            }
        }
        let _ = $tier;
        $scalar
    }};
}

macro_rules! float_block {
    ($t:ty, $regs:tt) => {
        impl FloatBlock for $t {
            fn dot_block_on(tier: Tier, x: &[$t], y: &[$t]) -> Pair<$t> {
                on_tier!(tier, dot_block, $regs, (x: &[$t], y: &[$t]) -> Pair<$t>, dot_body(x, y))
            }
            fn pair_block_on(tier: Tier, x: &[Pair<$t>]) -> Pair<$t> {
                on_tier!(tier, pair_block, $regs, (x: &[Pair<$t>]) -> Pair<$t>, block_body(x))
            }
            fn float_block_on(tier: Tier, x: &[$t]) -> Pair<$t> {
                on_tier!(tier, block, $regs, (x: &[$t]) -> Pair<$t>, block_body(x))
            }
        }
    };
}

float_block!(
    f32,
    (core::arch::x86_64::__m256, 2, core::arch::x86_64::__m512, 1)
);
float_block!(
    f64,
    (
        core::arch::x86_64::__m256d,
        4,
        core::arch::x86_64::__m512d,
        2
    )
);

/// The compensated dot product's pass over two float operands (Dot2: each
/// product formed exactly by TwoProd, then added as a pair term): the bits
/// of [`PairSum`] over the products formed in pairs.
pub(crate) struct FloatDot2(pub Tier);

impl<F: FloatBlock + Send + Sync> Pass<F> for FloatDot2 {
    type V = Pair<F>;
    const TWO: bool = true;
    fn empty(&self) -> Pair<F> {
        Pair {
            hi: F::ZERO,
            lo: F::ZERO,
        }
    }
    fn block(&self, _: usize, _: usize, _: &[F]) -> Pair<F> {
        unreachable!("a two-operand pass takes its blocks by block2")
    }
    fn block2(&self, _: usize, _: usize, x: &[F], y: &[F]) -> Pair<F> {
        F::dot_block_on(self.0, x, y)
    }
    fn combine(&self, a: Pair<F>, b: Pair<F>) -> Pair<F> {
        join(a, b)
    }
}

/// The value of a pass's (s, c): the pair itself where s is finite, else
/// (s, +0) (an overflowed or NaN sum is the plain sum's).
pub(crate) fn settle<F: PairFloat>(v: Pair<F>) -> Pair<F> {
    if v.hi.finite() {
        v
    } else {
        Pair {
            hi: v.hi,
            lo: F::ZERO,
        }
    }
}
