//! The complex dtypes of narrow floats, `f16c` and `bf16c`: two f16 or two
//! bf16 codes (real part first) that compute in c64, each part of a result
//! rounded once into the component. Checked on every tier and layout against
//! models written here: the `half` crate's conversions (f32 or f64 to f16 or
//! bf16, round to nearest even), the stated formulas in plain f32 arithmetic,
//! and the value-only contract (an f16c array reduces, scans, contracts and
//! sorts to the bits of the same values held in c64).

mod common;

use common::*;
use half::{bf16, f16};
use num_complex::Complex;
use tessera::fft::{c2c, Direction, Norm};
use tessera::{
    cast, contract, elementwise, reduce, scan, sort, ArrayView, ArrayViewMut, CastMode,
    ContractSpec, DType, Error, Exec, Kind, ReduceOp, ScanOp,
};
use tessera_testkit::rng::Rng;

/// One of the two component formats.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    H,
    B,
}

const PARTS: [Part; 2] = [Part::H, Part::B];

impl Part {
    fn complex(self) -> DType {
        match self {
            Part::H => DType::F16c,
            Part::B => DType::Bf16c,
        }
    }
    fn real(self) -> DType {
        match self {
            Part::H => DType::F16,
            Part::B => DType::Bf16,
        }
    }
    /// The value of a code (exact in f32).
    fn dec(self, c: u16) -> f32 {
        match self {
            Part::H => f16::from_bits(c).to_f32(),
            Part::B => bf16::from_bits(c).to_f32(),
        }
    }
    /// An f32 rounded to the nearest code, ties to even.
    fn enc(self, x: f32) -> u16 {
        match self {
            Part::H => f16::from_f32(x).to_bits(),
            Part::B => bf16::from_f32(x).to_bits(),
        }
    }
    /// An f64 rounded to one of the two codes around it (`half` rounds
    /// through f32 on hosts with F16C, so not always the nearest).
    fn enc64(self, x: f64) -> u16 {
        match self {
            Part::H => f16::from_f64(x).to_bits(),
            Part::B => bf16::from_f64(x).to_bits(),
        }
    }
    /// The bits of +∞.
    fn inf(self) -> u16 {
        match self {
            Part::H => 0x7c00,
            Part::B => 0x7f80,
        }
    }
    fn is_nan(self, c: u16) -> bool {
        c & 0x7fff > self.inf()
    }
}

/// Codes of every class: NaNs with payloads, infinities, zeros, subnormals,
/// normals of every binade; a few values repeat so that equal operands meet.
fn codes(rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n)
        .map(|i| match i % 11 {
            0 => [0x0000, 0x8000, 0x3c00, 0x3f80, 0xc000][rng.below(5) as usize],
            1 => rng.next_u64() as u16 & 0x83ff,
            _ => rng.next_u64() as u16,
        })
        .collect()
}

/// Codes of the integers −8 … 8 (exact in both formats): a product of two
/// complex numbers has parts of at most 128 in magnitude, so a sum of a few
/// hundred of them is an integer below 2^24, exact in f32 in any order; the
/// exact result is then an integer sum the test computes itself.
fn small_ints(p: Part, rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n).map(|_| p.enc(rng.below(17) as f32 - 8.0)).collect()
}

fn pairs(v: &[u16]) -> Vec<[u16; 2]> {
    v.chunks_exact(2).map(|c| [c[0], c[1]]).collect()
}

fn bytes(v: &[[u16; 2]]) -> Vec<u8> {
    v.iter()
        .flat_map(|z| z.iter().flat_map(|c| c.to_le_bytes()))
        .collect()
}

fn unbytes(b: &[u8]) -> Vec<[u16; 2]> {
    b.chunks_exact(4)
        .map(|c| {
            [
                u16::from_le_bytes([c[0], c[1]]),
                u16::from_le_bytes([c[2], c[3]]),
            ]
        })
        .collect()
}

/// The same result in one part: equal bits, or both NaN (a NaN's sign and
/// payload are not part of an arithmetic kind's contract).
fn same(p: Part, got: u16, want: u16) -> bool {
    got == want || (p.is_nan(got) && p.is_nan(want))
}

/// Every tier, one and three threads.
fn execs() -> Vec<Exec> {
    let mut v = Vec::new();
    for t in tiers() {
        for n in [1, 3] {
            v.push(Exec::on(t).threads(n));
        }
    }
    v
}

#[test]
fn casts_decode_exactly_and_round_each_part_once() {
    let mut rng = Rng::new(0xf16c_0001);
    for p in PARTS {
        let d = p.complex();
        // Every code as a real part, random imaginary parts.
        let z: Vec<[u16; 2]> = (0..=u16::MAX).map(|c| [c, rng.next_u64() as u16]).collect();
        let zb = bytes(&z);
        let n = z.len();
        for exec in execs() {
            // Into c64: exact (NaN stays NaN).
            let mut out = vec![Complex::new(0f32, 0.0); n];
            let x = ArrayView::contiguous(d, &[n], &zb).unwrap();
            cast(
                CastMode::Default,
                &x,
                &mut ArrayViewMut::from_slice(&mut out, &[n]).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, (g, w)) in out.iter().zip(&z).enumerate() {
                for (gp, wp) in [(g.re, w[0]), (g.im, w[1])] {
                    let want = p.dec(wp);
                    assert!(
                        gp.to_bits() == want.to_bits() || (gp.is_nan() && want.is_nan()),
                        "{d} -> c64 {i}: {gp} want {want} ({exec:?})"
                    );
                }
            }
            // Back from c64 (every other element: a strided source): each
            // part rounds to itself.
            let mut back = vec![0u8; (n / 2) * 4];
            let src = ArrayView::from_slice_strided(&out, &[n / 2], &[2], 0).unwrap();
            cast(
                CastMode::Default,
                &src,
                &mut ArrayViewMut::contiguous(d, &[n / 2], &mut back).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, g) in unbytes(&back).iter().enumerate() {
                for k in 0..2 {
                    assert!(
                        same(p, g[k], z[2 * i][k]),
                        "round trip {i}.{k}: {:#06x} want {:#06x}",
                        g[k],
                        z[2 * i][k]
                    );
                }
            }
        }
        // Random c64 into the format: each part rounded once from f32.
        let src: Vec<Complex<f32>> = (0..4000)
            .map(|_| {
                let mut f = || f32::from_bits(rng.next_u64() as u32 & 0xc7ff_ffff | 0x3000_0000);
                Complex::new(f(), f())
            })
            .collect();
        // And f64 values just beside the format's midpoints, each with the
        // code it must round to by construction: one rounding from f64 (a
        // rounding through f32 first would land on the midpoint and round
        // to even instead, as `half`'s own f64 conversion does on x86 with
        // F16C).
        let mids: Vec<(f64, u16)> = (0..4000)
            .map(|_| {
                let c = (rng.next_u64() % 0x7bfe) as u16;
                let (a, b) = (p.dec(c) as f64, p.dec(c + 1) as f64);
                let mid = (a + b) / 2.0;
                let tiny = (b - a) * 2f64.powi(-30);
                if rng.chance(1, 2) {
                    (mid + tiny, c + 1)
                } else {
                    (mid - tiny, c)
                }
            })
            .collect();
        let mid_values: Vec<f64> = mids.iter().map(|m| m.0).collect();
        for exec in execs() {
            let n = src.len();
            let mut got = vec![0u8; 4 * n];
            cast(
                CastMode::Default,
                &ArrayView::from_slice(&src, &[n]).unwrap(),
                &mut ArrayViewMut::contiguous(d, &[n], &mut got).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, (g, s)) in unbytes(&got).iter().zip(&src).enumerate() {
                assert!(same(p, g[0], p.enc(s.re)), "c64 -> {d} re {i}");
                assert!(same(p, g[1], p.enc(s.im)), "c64 -> {d} im {i}");
            }
            let n = mids.len();
            let mut got = vec![0u8; 4 * n];
            cast(
                CastMode::Default,
                &ArrayView::from_slice(&mid_values, &[n]).unwrap(),
                &mut ArrayViewMut::contiguous(d, &[n], &mut got).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, (g, &(x, want))) in unbytes(&got).iter().zip(&mids).enumerate() {
                assert_eq!(g[0], want, "f64 -> {d} {i}: {x:e}");
                assert_eq!(g[1], 0, "f64 -> {d} {i}: imaginary part +0");
            }
        }
        // Between the two formats: f16c -> bf16c rounds each f16 value into
        // bf16 once, and the reverse.
        let other = if p == Part::H { Part::B } else { Part::H };
        let z = pairs(&codes(&mut rng, 6000));
        let n = z.len();
        let mut got = vec![0u8; 4 * n];
        cast(
            CastMode::Default,
            &ArrayView::contiguous(d, &[n], &bytes(&z)).unwrap(),
            &mut ArrayViewMut::contiguous(other.complex(), &[n], &mut got).unwrap(),
            &Exec::default(),
        )
        .unwrap();
        for (i, (g, w)) in unbytes(&got).iter().zip(&z).enumerate() {
            for k in 0..2 {
                assert!(
                    same(other, g[k], other.enc(p.dec(w[k]))),
                    "{d} -> {} {i}.{k}",
                    other.complex()
                );
            }
        }
    }
}

/// Between f32 and a complex half (both modes, every tier and thread
/// count, contiguous and strided, lengths around the vector widths): f32 →
/// complex rounds the value once into the real part (the saturating mode
/// clamps to the largest finite code first) with a +0 imaginary part;
/// complex → f32 is the real part's value (the saturating mode turns ±∞
/// into ±f32::MAX), the imaginary part dropped. Into the complex: every
/// code's value, the midpoints between neighbouring codes and one f32 ulp
/// either side of them, specials and random bits; out of it: every code as
/// the real part beside random imaginary parts. Models: `half`'s f32
/// conversions (round to nearest even).
#[test]
fn f32_casts_take_the_real_part_and_give_a_zero_imaginary_one() {
    let mut rng = Rng::new(0xf16c_0032);
    for p in PARTS {
        let d = p.complex();
        let max_code = p.inf() - 1;
        let mut xs: Vec<f32> = vec![f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN];
        xs.extend([f32::MAX, f32::MIN, 0.0, -0.0, 1e-30, -1e-30]);
        for c in 0..max_code {
            for sign in [0u16, 0x8000] {
                let (a, b) = (p.dec(c | sign), p.dec((c + 1) | sign));
                let mid = ((a as f64 + b as f64) / 2.0) as f32;
                xs.extend([a, mid, f32::from_bits(mid.to_bits() + 1)]);
                if mid != 0.0 {
                    xs.push(f32::from_bits(mid.to_bits() - 1));
                }
            }
        }
        xs.extend((0..20000).map(|_| f32::from_bits(rng.next_u64() as u32)));
        xs.truncate(xs.len() / 8 * 8 + 5);
        let z: Vec<[u16; 2]> = (0..=u16::MAX).map(|c| [c, rng.next_u64() as u16]).collect();
        let mut z = z;
        z.truncate(z.len() - 3);
        let zb = bytes(&z);
        for mode in [CastMode::Default, CastMode::Saturating] {
            let sat = mode == CastMode::Saturating;
            let lim = p.dec(max_code);
            let into = |x: f32| -> u16 {
                if sat && !x.is_nan() {
                    p.enc(x.clamp(-lim, lim))
                } else {
                    p.enc(x)
                }
            };
            let out_of = |c: u16| -> f32 {
                let v = p.dec(c);
                if sat && v.is_infinite() {
                    f32::MAX.copysign(v)
                } else {
                    v
                }
            };
            for exec in execs() {
                for step in [1usize, 3] {
                    // f32 → complex (every `step`-th value).
                    let n = xs.len() / step;
                    let mut got = vec![0u8; 4 * n];
                    let src =
                        ArrayView::from_slice_strided(&xs, &[n], &[step as isize], 0).unwrap();
                    let mut dst = ArrayViewMut::contiguous(d, &[n], &mut got).unwrap();
                    cast(mode, &src, &mut dst, &exec).unwrap();
                    for (i, g) in unbytes(&got).iter().enumerate() {
                        let x = xs[i * step];
                        assert!(
                            same(p, g[0], into(x)) && g[1] == 0,
                            "f32 -> {d} {mode:?} {i} ({x:e}): {:#06x} {:#06x} ({exec:?}, step {step})",
                            g[0],
                            g[1]
                        );
                    }
                    // Complex → f32 (every `step`-th element).
                    let n = z.len() / step;
                    let mut out = vec![0f32; n];
                    let src = ArrayView::new(d, &[n], &[step as isize], 0, &zb).unwrap();
                    cast(
                        mode,
                        &src,
                        &mut ArrayViewMut::from_slice(&mut out, &[n]).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    for (i, g) in out.iter().enumerate() {
                        let w = out_of(z[i * step][0]);
                        assert!(
                            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                            "{d} -> f32 {mode:?} {i}: {g:e} want {w:e} ({exec:?}, step {step})"
                        );
                    }
                }
            }
        }
    }
}

/// The model of one kind on f16c/bf16c operands (parts in f32, the stated
/// formula, each part then rounded), as codes.
fn model(p: Part, k: Kind, a: [u16; 2], b: [u16; 2]) -> Vec<u16> {
    let (ar, ai, br, bi) = (p.dec(a[0]), p.dec(a[1]), p.dec(b[0]), p.dec(b[1]));
    let both = |re: f32, im: f32| vec![p.enc(re), p.enc(im)];
    match k {
        Kind::Add => both(ar + br, ai + bi),
        Kind::Sub => both(ar - br, ai - bi),
        // (ac - bd) + i(ad + bc), each product and sum rounded in f32.
        Kind::Mul => both(ar * br - ai * bi, ar * bi + ai * br),
        Kind::Neg => both(-ar, -ai),
        // The kinds that move bits: exact, NaN payloads included.
        Kind::Conj => vec![a[0], a[1] ^ 0x8000],
        Kind::Real => vec![a[0]],
        Kind::Imag => vec![a[1]],
        // b's real part is the real factor.
        Kind::Scale => both(ar * br, ai * br),
        Kind::Eq => vec![(ar == br && ai == bi) as u16],
        _ => unreachable!(),
    }
}

#[test]
fn kinds_follow_the_stated_formulas_on_every_tier_and_layout() {
    let mut rng = Rng::new(0xf16c_0002);
    let n = 3001;
    for p in PARTS {
        let d = p.complex();
        let a = pairs(&codes(&mut rng, 2 * n));
        let mut b = pairs(&codes(&mut rng, 2 * n));
        // Some equal operands (eq, cancellation in sub).
        for i in (0..n).step_by(7) {
            b[i] = a[i];
        }
        let (ab, bb) = (bytes(&a), bytes(&b));
        let reals: Vec<u16> = b.iter().map(|z| z[0]).collect();
        let rb: Vec<u8> = reals.iter().flat_map(|c| c.to_le_bytes()).collect();
        for k in [
            Kind::Add,
            Kind::Sub,
            Kind::Mul,
            Kind::Neg,
            Kind::Conj,
            Kind::Real,
            Kind::Imag,
            Kind::Scale,
            Kind::Eq,
        ] {
            let arity = k.info().arity;
            let out_d = tessera::result_dtype(k, d).unwrap();
            let out_w = out_d.info().item_bytes;
            // The second operand: a complex one, or scale's real factor.
            let (second, second_d, second_w) = if k == Kind::Scale {
                (&rb, p.real(), 2)
            } else {
                (&bb, d, 4)
            };
            for exec in execs() {
                for layout in 0..3 {
                    // 0: contiguous; 1: input 0 every other element of a
                    // longer buffer and the result strided; 2: input 1 one
                    // element broadcast.
                    let m = if layout == 1 { n / 2 } else { n };
                    let x0 = if layout == 1 {
                        ArrayView::new(d, &[m], &[2], 0, &ab).unwrap()
                    } else {
                        ArrayView::contiguous(d, &[m], &ab[..4 * m]).unwrap()
                    };
                    let x1 = if layout == 2 {
                        ArrayView::new(second_d, &[m], &[0], 5, second).unwrap()
                    } else {
                        ArrayView::contiguous(second_d, &[m], &second[..second_w * m]).unwrap()
                    };
                    let ins = if arity == 1 { vec![x0] } else { vec![x0, x1] };
                    let step = if layout == 1 { 3 } else { 1 };
                    let mut out = vec![0xa5u8; out_w * (step * (m - 1) + 1)];
                    elementwise(
                        k,
                        &ins,
                        &mut ArrayViewMut::new(out_d, &[m], &[step as isize], 0, &mut out).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    for i in 0..m {
                        let ia = if layout == 1 { 2 * i } else { i };
                        let ib = if layout == 2 { 5 } else { i };
                        let bz = if k == Kind::Scale {
                            [reals[ib], 0]
                        } else {
                            b[ib]
                        };
                        let want = model(p, k, a[ia], bz);
                        let o = &out[i * step * out_w..][..out_w];
                        let got: Vec<u16> = if out_w == 1 {
                            vec![o[0] as u16]
                        } else {
                            o.chunks_exact(2)
                                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                                .collect()
                        };
                        let exact = matches!(k, Kind::Conj | Kind::Real | Kind::Imag | Kind::Eq);
                        let ok =
                            got.iter().zip(&want).all(
                                |(&g, &w)| {
                                    if exact {
                                        g == w
                                    } else {
                                        same(p, g, w)
                                    }
                                },
                            );
                        assert!(
                            ok,
                            "{k} {d} layout {layout} {i}: {a:x?} {bz:x?} -> {got:x?}, want {want:x?} ({exec:?})",
                            a = a[ia]
                        );
                    }
                    // Nothing written between the strided results.
                    if layout == 1 {
                        for (j, chunk) in out.chunks(out_w).enumerate() {
                            if j % step != 0 {
                                assert!(chunk.iter().all(|&c| c == 0xa5), "{k}: gap {j} written");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn from_parts_builds_the_complex_dtype_bit_for_bit() {
    let mut rng = Rng::new(0xf16c_0006);
    for p in PARTS {
        // Every code as a real part (NaN payloads included), random
        // imaginary parts; the imaginary input strided.
        let re: Vec<u16> = (0..=u16::MAX).collect();
        let im = codes(&mut rng, 2 * re.len());
        let n = re.len();
        let rb: Vec<u8> = re.iter().flat_map(|c| c.to_le_bytes()).collect();
        let ib: Vec<u8> = im.iter().flat_map(|c| c.to_le_bytes()).collect();
        assert_eq!(
            tessera::result_dtype(Kind::FromParts, p.real()).unwrap(),
            p.complex()
        );
        for exec in execs() {
            let mut out = vec![0u8; 4 * n];
            elementwise(
                Kind::FromParts,
                &[
                    ArrayView::contiguous(p.real(), &[n], &rb).unwrap(),
                    ArrayView::new(p.real(), &[n], &[2], 1, &ib).unwrap(),
                ],
                &mut ArrayViewMut::contiguous(p.complex(), &[n], &mut out).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, g) in unbytes(&out).iter().enumerate() {
                assert_eq!(*g, [re[i], im[2 * i + 1]], "{} {i}", p.complex());
            }
        }
    }
}

#[test]
fn abs_is_the_modulus_rounded_into_the_component() {
    let mut rng = Rng::new(0xf16c_0003);
    let n = 4000;
    for p in PARTS {
        let d = p.complex();
        let z = pairs(&codes(&mut rng, 2 * n));
        let zb = bytes(&z);
        for exec in execs() {
            let mut out = vec![0u8; 2 * n];
            elementwise(
                Kind::Abs,
                &[ArrayView::contiguous(d, &[n], &zb).unwrap()],
                &mut ArrayViewMut::contiguous(p.real(), &[n], &mut out).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, w) in z.iter().enumerate() {
                let g = u16::from_le_bytes([out[2 * i], out[2 * i + 1]]);
                let (re, im) = (p.dec(w[0]) as f64, p.dec(w[1]) as f64);
                let m = re.hypot(im);
                // c64's modulus is within 1 ulp of f32, far below the
                // component's spacing: the result is one of the two
                // component values around the exact modulus.
                let ok = if m.is_nan() {
                    p.is_nan(g)
                } else {
                    let down = p.enc64(m);
                    let v = p.dec(down) as f64;
                    let other = if v < m {
                        down + 1
                    } else if v > m {
                        down - 1
                    } else {
                        down
                    };
                    g == down || g == other
                };
                assert!(ok, "abs {d} {i}: {w:x?} -> {g:#06x} (|z| = {m:e})");
            }
        }
    }
}

/// Values in c64 of f16c/bf16c codes.
fn widen(p: Part, z: &[[u16; 2]]) -> Vec<Complex<f32>> {
    z.iter()
        .map(|w| Complex::new(p.dec(w[0]), p.dec(w[1])))
        .collect()
}

#[test]
fn reductions_scans_and_contractions_see_the_values_alone() {
    let mut rng = Rng::new(0xf16c_0004);
    for p in PARTS {
        let d = p.complex();
        let (r, k, c) = (37, 300, 19);
        // Full codes for the sums (random magnitudes: rounding happens), moderate
        // ones for the contraction.
        let x = pairs(&codes(&mut rng, 2 * r * k))
            .into_iter()
            .map(|w| [w[0] & 0x7bff & !0x4000 | (w[0] & 0x8000), w[1] & 0xbbff])
            .collect::<Vec<_>>();
        let xb = bytes(&x);
        let xw = widen(p, &x);
        let a = pairs(&small_ints(p, &mut rng, 2 * r * k));
        let bm = pairs(&small_ints(p, &mut rng, 2 * k * c));
        let (aw, bw) = (widen(p, &a), widen(p, &bm));
        // The exact product, in integers.
        let int = |z: Complex<f32>| (z.re as i64, z.im as i64);
        let exact: Vec<(i64, i64)> = (0..r * c)
            .map(|o| {
                let (i, j) = (o / c, o % c);
                (0..k).fold((0, 0), |(sr, si), q| {
                    let ((ar, ai), (br, bi)) = (int(aw[i * k + q]), int(bw[q * c + j]));
                    (sr + ar * br - ai * bi, si + ar * bi + ai * br)
                })
            })
            .collect();
        for exec in execs() {
            let xv = ArrayView::contiguous(d, &[r, k], &xb).unwrap();
            let wv = ArrayView::from_slice(&xw, &[r, k]).unwrap();
            for op in [ReduceOp::Sum, ReduceOp::Prod] {
                for axes in [&[1usize][..], &[0], &[0, 1]] {
                    let count = if axes.len() == 2 {
                        1
                    } else {
                        [r, k][1 - axes[0]]
                    };
                    let shape: Vec<usize> = if axes.len() == 2 { vec![] } else { vec![count] };
                    let mut want = vec![Complex::new(0f32, 0.0); count];
                    reduce(
                        op,
                        axes,
                        &wv,
                        &mut ArrayViewMut::from_slice(&mut want, &shape).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    let mut got = vec![Complex::new(0f32, 0.0); count];
                    reduce(
                        op,
                        axes,
                        &xv,
                        &mut ArrayViewMut::from_slice(&mut got, &shape).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    for (g, w) in got.iter().zip(&want) {
                        assert!(
                            (g.re.to_bits(), g.im.to_bits()) == (w.re.to_bits(), w.im.to_bits())
                                || (g.re.is_nan() && w.re.is_nan())
                                || (g.im.is_nan() && w.im.is_nan()),
                            "{op:?} {axes:?} {d} into c64: {g} want {w} ({exec:?})"
                        );
                    }
                    // Into the dtype itself: c64's result, each part rounded.
                    let mut gotd = vec![0u8; 4 * count];
                    reduce(
                        op,
                        axes,
                        &xv,
                        &mut ArrayViewMut::contiguous(d, &shape, &mut gotd).unwrap(),
                        &exec,
                    )
                    .unwrap();
                    for (g, w) in unbytes(&gotd).iter().zip(&want) {
                        assert!(
                            same(p, g[0], p.enc(w.re)) && same(p, g[1], p.enc(w.im)),
                            "{op:?} {axes:?} into {d}: {g:x?} want {w}"
                        );
                    }
                }
            }
            // Scans along either axis.
            for axis in 0..2 {
                let mut want = vec![Complex::new(0f32, 0.0); r * k];
                scan(
                    ScanOp::Sum,
                    axis,
                    &wv,
                    None,
                    &mut ArrayViewMut::from_slice(&mut want, &[r, k]).unwrap(),
                    &exec,
                )
                .unwrap();
                let mut got = vec![0u8; 4 * r * k];
                scan(
                    ScanOp::Sum,
                    axis,
                    &xv,
                    None,
                    &mut ArrayViewMut::contiguous(d, &[r, k], &mut got).unwrap(),
                    &exec,
                )
                .unwrap();
                for (i, (g, w)) in unbytes(&got).iter().zip(&want).enumerate() {
                    assert!(
                        same(p, g[0], p.enc(w.re)) && same(p, g[1], p.enc(w.im)),
                        "cumsum axis {axis} {d} {i}: {g:x?} want {w}"
                    );
                }
            }
            // A @ B with a c64 accumulator, B read transposed (a strided
            // operand): the c64 product of the same values, bit for bit,
            // and its parts rounded for an f16c/bf16c result.
            let bt: Vec<[u16; 2]> = (0..c * k).map(|i| bm[(i % k) * c + i / k]).collect();
            let btb = bytes(&bt);
            let abytes = bytes(&a);
            let av2 = ArrayView::contiguous(d, &[r, k], &abytes).unwrap();
            let bv = ArrayView::new(d, &[k, c], &[1, k as isize], 0, &btb).unwrap();
            let spec = ContractSpec::new(DType::C64).contracting(1, 0);
            let mut want = vec![Complex::new(0f32, 0.0); r * c];
            contract(
                &spec,
                &ArrayView::from_slice(&aw, &[r, k]).unwrap(),
                &ArrayView::from_slice(&bw, &[k, c]).unwrap(),
                None,
                &mut ArrayViewMut::from_slice(&mut want, &[r, c]).unwrap(),
                &exec,
            )
            .unwrap();
            let mut got = vec![Complex::new(0f32, 0.0); r * c];
            contract(
                &spec,
                &av2,
                &bv,
                None,
                &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    (g.re.to_bits(), g.im.to_bits()),
                    (w.re.to_bits(), w.im.to_bits()),
                    "{d} contract {i} ({exec:?})"
                );
                let e = exact[i];
                assert_eq!(
                    (g.re, g.im),
                    (e.0 as f32, e.1 as f32),
                    "{d} contract {i}: exact"
                );
            }
            let mut gotd = vec![0u8; 4 * r * c];
            contract(
                &spec,
                &av2,
                &bv,
                None,
                &mut ArrayViewMut::contiguous(d, &[r, c], &mut gotd).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, (g, e)) in unbytes(&gotd).iter().zip(&exact).enumerate() {
                // The exact integers (below 2^24: f32 values) rounded once.
                let want = (p.enc(e.0 as f32), p.enc(e.1 as f32));
                assert!(
                    (g[0], g[1]) == want,
                    "{d} contract into {d} {i}: {g:x?} want {want:x?} ({e:?})"
                );
            }
            // A sum of the integer-valued rows: exact, against the test's own.
            let mut sums = vec![Complex::new(0f32, 0.0); r];
            reduce(
                ReduceOp::Sum,
                &[1],
                &av2,
                &mut ArrayViewMut::from_slice(&mut sums, &[r]).unwrap(),
                &exec,
            )
            .unwrap();
            for (i, s) in sums.iter().enumerate() {
                let e = (0..k).fold((0, 0), |(sr, si), q| {
                    let (x, y) = int(aw[i * k + q]);
                    (sr + x, si + y)
                });
                assert_eq!((s.re, s.im), (e.0 as f32, e.1 as f32), "{d} row sum {i}");
            }
        }
    }
}

/// A part's sort key: the sign trick (−0 before +0), NaN above everything.
fn key16(p: Part, c: u16) -> u32 {
    if p.is_nan(c) {
        u32::MAX
    } else if c & 0x8000 != 0 {
        (!c) as u32
    } else {
        (c | 0x8000) as u32
    }
}

#[test]
fn sort_orders_by_real_then_imaginary_part_stably() {
    let mut rng = Rng::new(0xf16c_0005);
    let n = 5000;
    for p in PARTS {
        let d = p.complex();
        // Few distinct parts: many ties, kept in input order.
        let pool = codes(&mut rng, 24);
        let z: Vec<[u16; 2]> = (0..n)
            .map(|_| [pool[rng.below(24) as usize], pool[rng.below(24) as usize]])
            .collect();
        let zb = bytes(&z);
        let key = |w: &[u16; 2]| -> u64 {
            let (kr, ki) = (key16(p, w[0]), key16(p, w[1]));
            if kr == u32::MAX || ki == u32::MAX {
                u64::MAX
            } else {
                ((kr as u64) << 32) | ki as u64
            }
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| key(&z[i]));
        for exec in execs() {
            let mut got = vec![0u8; 4 * n];
            let mut pos = vec![0i64; n];
            sort(
                0,
                false,
                &ArrayView::contiguous(d, &[n], &zb).unwrap(),
                &mut ArrayViewMut::contiguous(d, &[n], &mut got).unwrap(),
                Some(&mut ArrayViewMut::from_slice(&mut pos, &[n]).unwrap()),
                &exec,
            )
            .unwrap();
            let got = unbytes(&got);
            for i in 0..n {
                assert_eq!(pos[i] as usize, order[i], "{d} position {i} ({exec:?})");
                assert_eq!(got[i], z[order[i]], "{d} value {i}");
            }
        }
    }
}

#[test]
fn engines_without_narrow_complex_refuse_before_writing() {
    let z = vec![[0x3c00u16, 0]; 8];
    let zb = bytes(&z);
    for p in PARTS {
        let d = p.complex();
        let mut out = vec![0x5au8; 32];
        let e = c2c(
            &[0],
            Direction::Forward,
            Norm::None,
            &ArrayView::contiguous(d, &[8], &zb).unwrap(),
            &mut ArrayViewMut::contiguous(d, &[8], &mut out).unwrap(),
            &Exec::default(),
        );
        assert!(
            matches!(
                e,
                Err(Error::DTypeUnsupported { .. }) | Err(Error::DTypeMismatch { .. })
            ),
            "{d} fft: {e:?}"
        );
        assert!(out.iter().all(|&b| b == 0x5a), "{d} fft wrote");
    }
}

#[test]
fn typed_calls_take_complex_halves() {
    // Complex<half::f16> and Complex<half::bf16> are the element types of
    // f16c and bf16c.
    let h = |re: f32, im: f32| Complex::new(f16::from_f32(re), f16::from_f32(im));
    let a = [h(1.0, 2.0), h(0.5, 0.0), h(-3.0, 0.25), h(2.0, -1.0)];
    let b = [h(3.0, -1.0), h(-2.0, 4.0), h(1.0, 1.0), h(0.0, 0.5)];
    let mut y = [h(0.0, 0.0); 4];
    tessera::typed::elementwise(Kind::Mul, &[&a, &b], &mut y, &Exec::default()).unwrap();
    // (1+2i)(3-i) = 5+5i; (0.5)(-2+4i) = -1+2i; (-3+0.25i)(1+i) = -3.25-2.75i;
    // (2-i)(0.5i) = 0.5+i: every part exact in f16.
    let want = [h(5.0, 5.0), h(-1.0, 2.0), h(-3.25, -2.75), h(0.5, 1.0)];
    assert_eq!(y, want);
    // A 2 × 2 product accumulated in c64 (the default accumulator),
    // rounded into f16c: [[1+2i, 0.5], [-3+0.25i, 2-i]] · [[3-i, -2+4i], [1+i, 0.5i]].
    let mut p = [h(0.0, 0.0); 4];
    tessera::typed::matmul(&a, &b, (2, 2, 2), &mut p, &Exec::default()).unwrap();
    let want = [
        h(5.0 + 0.5, 5.0 + 0.5),
        h(-10.0 + 0.0, 0.0 + 0.25),
        h(-9.0 + 0.25 + 3.0, 3.0 + 0.75 + 1.0),
        h(6.0 - 1.0 + 0.5, -12.0 - 0.5 + 1.0),
    ];
    assert_eq!(p, want);
    let s: Complex<f32> = tessera::typed::reduce(ReduceOp::Sum, &a, &Exec::default()).unwrap();
    assert_eq!(s, Complex::new(0.5, 1.25));
}
