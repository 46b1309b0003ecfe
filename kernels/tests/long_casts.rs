//! Long contiguous casts (sources of several MiB, which the narrowing loops,
//! the F16C kernels and the fused packed encoders read with prefetch
//! requests ahead) give the scalar tier's bits on every tier: f32 and f64 to
//! every destination of 16 bits or fewer, and back from each to f32, both
//! modes; and the same bits as the same values cast in short pieces (which
//! take the in-cache form of those loops).

mod common;

use tessera::cast;
use tessera::{ArrayView, ArrayViewMut, CastMode, DType, Exec, Tier};
use tessera_testkit::rng::Rng;

/// Random f32 bit patterns, one in four a small value near the narrow
/// dtypes' ranges.
fn data(n: usize, rng: &mut Rng) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let r = rng.next_u64();
            if i % 4 == 0 {
                ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 1000.0
            } else {
                f32::from_bits(r as u32)
            }
        })
        .collect()
}

fn cast_bytes(
    exec: &Exec,
    from: DType,
    src: &[u8],
    to: DType,
    n: usize,
    mode: CastMode,
) -> Vec<u8> {
    let vpb = to.info().values_per_byte as usize;
    let mut out = vec![0xA5u8; (n / vpb) * to.info().item_bytes.max(1)];
    let s = ArrayView::contiguous(from, &[n], src).unwrap();
    let mut d = ArrayViewMut::contiguous(to, &[n], &mut out).unwrap();
    cast(mode, &s, &mut d, exec).unwrap();
    out
}

#[test]
fn long_narrowing_casts_match_the_scalar_tier_and_short_pieces() {
    let mut rng = Rng::new(0x10_4a57);
    // 2^19 + 64 values: 2 MiB of f32, 4 MiB of f64 (both past the point
    // where the loops ask for their source ahead); a whole number of bytes
    // of every packed dtype.
    let n = (1usize << 19) + 64;
    let x32 = data(n, &mut rng);
    let x64: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
    let sources = [
        (DType::F32, tessera::array::as_bytes(&x32)),
        (DType::F64, tessera::array::as_bytes(&x64)),
    ];
    let narrow: Vec<DType> = DType::ALL
        .iter()
        .copied()
        .filter(|d| d.info().bits <= 16 && d.info().class != tessera::Class::Complex)
        .collect();
    assert!(narrow.len() >= 19, "{narrow:?}");
    let scalar = Exec::on(Tier::Scalar).threads(1);
    for (from, src) in sources {
        let item = from.info().item_bytes;
        for &to in &narrow {
            let vpb = to.info().values_per_byte as usize;
            for mode in [CastMode::Default, CastMode::Saturating] {
                let want = cast_bytes(&scalar, from, src, to, n, mode);
                // Short pieces of 4096 values (16 KiB of f32), on the best tier.
                let piece = 4096;
                let mut pieces = Vec::with_capacity(want.len());
                for k in (0..n).step_by(piece) {
                    let m = piece.min(n - k);
                    let s = &src[k * item..(k + m) * item];
                    pieces.extend(cast_bytes(
                        &Exec::default().threads(1),
                        from,
                        s,
                        to,
                        m,
                        mode,
                    ));
                }
                assert!(
                    pieces == want,
                    "{from} -> {to} {mode:?}: short pieces differ"
                );
                for tier in tessera::available_tiers() {
                    let got = cast_bytes(&Exec::on(tier).threads(1), from, src, to, n, mode);
                    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                        panic!(
                            "{from} -> {to} {mode:?} {tier}: byte {i} is {:#x}, scalar tier {:#x} \
                             (values from {})",
                            got[i],
                            want[i],
                            i / to.info().item_bytes * vpb
                        );
                    }
                }
                if from == DType::F32 {
                    // And back: the codes (valid ones, from the cast) to f32.
                    let back = cast_bytes(&scalar, to, &want, DType::F32, n, mode);
                    for tier in tessera::available_tiers() {
                        let got =
                            cast_bytes(&Exec::on(tier).threads(1), to, &want, DType::F32, n, mode);
                        assert!(
                            got == back,
                            "{to} -> f32 {mode:?} {tier}: differs from the scalar tier"
                        );
                    }
                }
            }
        }
    }
}
