//! Long contiguous runs of the transcendental kinds give the scalar tier's
//! bits on every tier. Their loops ask for the source ahead, a block at a
//! time, over runs from memory (a MiB of source or more), and they write
//! results of 8 MiB or more plainly where other kinds stream them; the runs
//! here pass both sizes, at lengths that leave a partial block and a
//! destination off a line's start. A sample of each run is also held to the
//! kind's 1-ulp bound against f64 (f32 runs) from the standard library.

mod common;

use tessera::{elementwise, ArrayView, ArrayViewMut, DType, Exec, Kind, Tier};
use tessera_testkit::rng::Rng;

/// The kinds taken: the exponential and logarithm families, the split
/// trigonometric loop (sin, tan) and an inverse function.
const KINDS: [Kind; 6] = [
    Kind::Exp,
    Kind::Log2,
    Kind::Sin,
    Kind::Tan,
    Kind::Atan,
    Kind::Sinh,
];

/// `kind` of `n` elements of `dtype` from `src` (raw bytes), on `tier`, into
/// a destination that starts `skip` elements into its buffer.
fn run(kind: Kind, dtype: DType, src: &[u8], n: usize, tier: Tier, skip: usize) -> Vec<u8> {
    let item = dtype.info().item_bytes;
    let mut buf = vec![0xA5u8; (n + skip) * item];
    let x = ArrayView::contiguous(dtype, &[n], src).unwrap();
    let mut y = ArrayViewMut::contiguous(dtype, &[n], &mut buf[skip * item..]).unwrap();
    elementwise(kind, &[x], &mut y, &Exec::on(tier).threads(1)).unwrap();
    buf.drain(..skip * item);
    buf
}

/// Arguments where `kind` is defined and finite (the logarithm's positive),
/// one in eight a large one (the trigonometric kinds' long reduction).
fn argument(kind: Kind, rng: &mut Rng, i: usize) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let v = if i.is_multiple_of(8) {
        (u - 0.5) * 2.0e5
    } else {
        (u - 0.5) * 40.0
    };
    match kind {
        Kind::Log2 => v.abs() + 1e-3,
        Kind::Exp | Kind::Sinh => v.clamp(-80.0, 80.0),
        _ => v,
    }
}

/// The f64 value the standard library gives.
fn reference(kind: Kind, x: f64) -> f64 {
    match kind {
        Kind::Exp => x.exp(),
        Kind::Log2 => x.log2(),
        Kind::Sin => x.sin(),
        Kind::Tan => x.tan(),
        Kind::Atan => x.atan(),
        Kind::Sinh => x.sinh(),
        _ => unreachable!("not a kind of this test"),
    }
}

#[test]
fn long_transcendental_runs_match_the_scalar_tier_on_every_tier() {
    let tiers = common::tiers();
    let mut rng = Rng::new(0x10_9a7e);
    // 8 MiB of results and 37 more elements: past the streaming size and
    // not a whole number of the loops' blocks.
    for dtype in [DType::F32, DType::F64] {
        let item = dtype.info().item_bytes;
        let n = (8usize << 20) / item + 37;
        for kind in KINDS {
            let xs: Vec<f64> = (0..n).map(|i| argument(kind, &mut rng, i)).collect();
            let src: Vec<u8> = match dtype {
                DType::F32 => xs.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
                _ => xs.iter().flat_map(|&v| v.to_le_bytes()).collect(),
            };
            let want = run(kind, dtype, &src, n, Tier::Scalar, 0);
            // Sample of the scalar tier's results within 1 ulp of f64's
            // value (f32: the reference's own error is far below that ulp).
            if dtype == DType::F32 {
                for i in (0..n).step_by(997) {
                    let x = f32::from_le_bytes(src[4 * i..4 * i + 4].try_into().unwrap());
                    let y = f32::from_le_bytes(want[4 * i..4 * i + 4].try_into().unwrap());
                    let r = reference(kind, x as f64);
                    let ulp = (r.abs() as f32).max(f32::MIN_POSITIVE);
                    let ulp = (f32::from_bits(ulp.to_bits() + 1) - ulp) as f64;
                    assert!(
                        (y as f64 - r).abs() <= ulp,
                        "{kind:?}({x:e}) = {y:e}, f64 gives {r:e}"
                    );
                }
            }
            for &tier in &tiers {
                for skip in [0, 3] {
                    let got = run(kind, dtype, &src, n, tier, skip);
                    if let Some(i) =
                        (0..n).find(|&i| got[i * item..][..item] != want[i * item..][..item])
                    {
                        panic!("{kind:?} {dtype:?} on {tier:?}, destination {skip} elements in: element {i} of {n} differs from the scalar tier's");
                    }
                }
            }
        }
    }
}
