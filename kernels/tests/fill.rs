//! The counter-based random fill against an independent model of its stated
//! stream (splitmix64's finaliser over seed + (i + 1)·φ), on every layout and
//! thread count; floats in [0, 1); refusals write nothing.

use tessera::fill::random;
use tessera::{ArrayViewMut, DType, Error, Exec};
use tessera_testkit::rng::{mix, GOLDEN};

/// Element i of the stream of `seed`: splitmix64's output function (the test
/// generator's, written apart from the library) of seed + (i + 1)·φ.
fn model(seed: u64, i: u64) -> u64 {
    mix(seed.wrapping_add((i + 1).wrapping_mul(GOLDEN)))
}

#[test]
fn integers_and_floats_follow_the_stream() {
    let n = 100_000;
    let mut u = vec![0u64; n];
    random(
        7,
        &mut ArrayViewMut::from_slice(&mut u, &[n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for (i, &v) in u.iter().enumerate() {
        assert_eq!(v, model(7, i as u64), "u64 element {i}");
    }
    let mut b = vec![0u8; n];
    random(
        7,
        &mut ArrayViewMut::from_slice(&mut b, &[n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for (i, &v) in b.iter().enumerate() {
        assert_eq!(v, model(7, i as u64) as u8, "u8 element {i}");
    }
    let mut f = vec![0f32; n];
    random(
        9,
        &mut ArrayViewMut::from_slice(&mut f, &[n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for (i, &v) in f.iter().enumerate() {
        assert!((0.0..1.0).contains(&v), "f32 element {i} = {v}");
        assert_eq!(
            v as f64,
            (model(9, i as u64) >> 40) as f64 / (1u64 << 24) as f64
        );
    }
    let mut g = vec![0f64; n];
    random(
        9,
        &mut ArrayViewMut::from_slice(&mut g, &[n]).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for (i, &v) in g.iter().enumerate() {
        assert!((0.0..1.0).contains(&v));
        assert_eq!(v, (model(9, i as u64) >> 11) as f64 / (1u64 << 53) as f64);
    }
    let mut h = vec![0u8; 2 * n];
    random(
        3,
        &mut ArrayViewMut::contiguous(DType::F16, &[n], &mut h).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for i in 0..n {
        let v = half::f16::from_bits(u16::from_le_bytes([h[2 * i], h[2 * i + 1]])).to_f64();
        assert_eq!(
            v,
            (model(3, i as u64) >> 53) as f64 / 2048.0,
            "f16 element {i}"
        );
    }
    let mut bf = vec![0u8; 2 * n];
    random(
        3,
        &mut ArrayViewMut::contiguous(DType::Bf16, &[n], &mut bf).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for i in 0..n {
        let v = half::bf16::from_bits(u16::from_le_bytes([bf[2 * i], bf[2 * i + 1]])).to_f64();
        assert_eq!(
            v,
            (model(3, i as u64) >> 56) as f64 / 256.0,
            "bf16 element {i}"
        );
    }
}

#[test]
fn same_values_at_every_position_for_any_layout_and_thread_count() {
    let (r, c) = (300, 700);
    let mut want = vec![0f32; r * c];
    random(
        42,
        &mut ArrayViewMut::from_slice(&mut want, &[r, c]).unwrap(),
        &Exec::default().threads(1),
    )
    .unwrap();
    for t in [2, 7] {
        let mut got = vec![0f32; r * c];
        random(
            42,
            &mut ArrayViewMut::from_slice(&mut got, &[r, c]).unwrap(),
            &Exec::default().threads(t),
        )
        .unwrap();
        assert_eq!(got, want, "{t} threads");
    }
    // Transposed storage: position (i, j) lives at j*r + i.
    let mut tr = vec![0f32; r * c];
    random(
        42,
        &mut ArrayViewMut::from_slice_strided(&mut tr, &[r, c], &[1, r as isize], 0).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for i in 0..r {
        for j in 0..c {
            assert_eq!(tr[j * r + i].to_bits(), want[i * c + j].to_bits());
        }
    }
    // Reversed rows.
    let mut rev = vec![0f32; r * c];
    random(
        42,
        &mut ArrayViewMut::from_slice_strided(&mut rev, &[r, c], &[c as isize, -1], c - 1).unwrap(),
        &Exec::default(),
    )
    .unwrap();
    for i in 0..r {
        for j in 0..c {
            assert_eq!(
                rev[i * c + (c - 1 - j)].to_bits(),
                want[i * c + j].to_bits()
            );
        }
    }
}

#[test]
fn refusals_write_nothing() {
    let mut codes = vec![0xaau8; 16];
    let e = random(
        1,
        &mut ArrayViewMut::contiguous(DType::E4m3fn, &[16], &mut codes).unwrap(),
        &Exec::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::DTypeUnsupported {
                dtype: DType::E4m3fn,
                ..
            }
        ),
        "{e}"
    );
    assert!(codes.iter().all(|&b| b == 0xaa));
    let mut y = vec![5f32; 4];
    let e = random(
        1,
        &mut ArrayViewMut::from_slice_strided(&mut y, &[4, 2], &[1, 0], 0).unwrap(),
        &Exec::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Layout { .. }), "{e}");
    assert!(y.iter().all(|&v| v == 5.0));
}
