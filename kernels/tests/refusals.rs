//! Every refusal of the elementwise API: the right typed `tessera::Error`,
//! a Display that names the operand, and nothing written (the destination is
//! filled with a sentinel first and must come back untouched).

use tessera::elementwise;
use tessera::tier::parse_tier;
use tessera::{available_tiers, ArrayView, ArrayViewMut, DType, Error, Exec, Kind, Tier};

const SENTINEL: u8 = 0xA5;

/// Bytes for `count` elements of `dtype`, a recognisable pattern.
fn bytes(dtype: DType, count: usize) -> Vec<u8> {
    let info = dtype.info();
    let n = if info.values_per_byte > 1 {
        count.div_ceil(info.values_per_byte as usize)
    } else {
        count * info.item_bytes
    };
    (0..n).map(|i| (i % 7) as u8).collect()
}

/// An input in C order.
struct Input {
    dtype: DType,
    shape: Vec<usize>,
    data: Vec<u8>,
}

fn input(dtype: DType, shape: &[usize]) -> Input {
    Input {
        dtype,
        shape: shape.to_vec(),
        data: bytes(dtype, shape.iter().product()),
    }
}

/// Call `kind` on every available tier with 1 and 4 threads, into a sentinel
/// destination of `out_dtype` and `out_shape`; every call must be refused with
/// the same error, writing nothing. Returns the error.
fn refused(kind: Kind, inputs: &[Input], out_dtype: DType, out_shape: &[usize]) -> Error {
    let mut first: Option<Error> = None;
    for tier in available_tiers() {
        for threads in [1, 4] {
            let mut out = vec![SENTINEL; bytes(out_dtype, out_shape.iter().product()).len()];
            let before = out.clone();
            let r = {
                let views: Vec<ArrayView<'_>> = inputs
                    .iter()
                    .map(|i| {
                        ArrayView::contiguous(i.dtype, &i.shape, &i.data).expect("a valid input")
                    })
                    .collect();
                let mut y = ArrayViewMut::contiguous(out_dtype, out_shape, &mut out)
                    .expect("a valid destination");
                elementwise(kind, &views, &mut y, &Exec::on(tier).threads(threads))
            };
            let e = match r {
                Ok(()) => panic!("{kind} was not refused on {tier}"),
                Err(e) => e,
            };
            assert!(
                out == before,
                "{kind} on {tier}: a refused call wrote to the destination ({e})"
            );
            match &first {
                None => first = Some(e),
                Some(f) => assert_eq!(&e, f, "the error depends on the tier or thread count"),
            }
        }
    }
    first.expect("at least the scalar tier")
}

fn shown(e: &Error) -> String {
    e.to_string()
}

// ---- arity and dtypes -------------------------------------------------------

#[test]
fn wrong_arity() {
    let f = || input(DType::F32, &[4]);
    let cases: Vec<(Kind, Vec<Input>, usize, DType)> = vec![
        (Kind::Add, vec![f()], 2, DType::F32),
        (Kind::Add, vec![f(), f(), f()], 2, DType::F32),
        (Kind::Neg, vec![f(), f()], 1, DType::F32),
        (Kind::Fma, vec![f(), f()], 3, DType::F32),
        (
            Kind::Select,
            vec![input(DType::Bool, &[4]), f()],
            3,
            DType::F32,
        ),
        (Kind::Add, vec![], 2, DType::F32),
    ];
    for (kind, ins, expected, out) in cases {
        let got = ins.len();
        let e = refused(kind, &ins, out, &[4]);
        assert_eq!(
            e,
            Error::Arity {
                kind,
                expected,
                got
            }
        );
        assert_eq!(
            shown(&e),
            format!("kind `{kind}` takes {expected} inputs, got {got}")
        );
    }
}

#[test]
fn dtype_mismatch_between_inputs() {
    let e = refused(
        Kind::Add,
        &[input(DType::F32, &[4]), input(DType::F64, &[4])],
        DType::F32,
        &[4],
    );
    assert_eq!(
        e,
        Error::DTypeMismatch {
            operand: "input 1".into(),
            expected: DType::F32,
            got: DType::F64
        }
    );
    assert_eq!(shown(&e), "input 1: dtype `f64`, expected `f32`");

    let e = refused(
        Kind::Fma,
        &[
            input(DType::Bf16, &[4]),
            input(DType::Bf16, &[4]),
            input(DType::F16, &[4]),
        ],
        DType::Bf16,
        &[4],
    );
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, expected: DType::Bf16, got: DType::F16 } if operand == "input 2")
    );
    assert!(shown(&e).starts_with("input 2: "), "{e}");

    // A packed dtype and its unpacked carrier are different dtypes.
    let e = refused(
        Kind::Add,
        &[input(DType::I8, &[4]), input(DType::I4, &[4])],
        DType::I8,
        &[4],
    );
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, expected: DType::I8, got: DType::I4 } if operand == "input 1")
    );
}

#[test]
fn select_condition_not_bool() {
    let e = refused(
        Kind::Select,
        &[
            input(DType::F32, &[4]),
            input(DType::F32, &[4]),
            input(DType::F32, &[4]),
        ],
        DType::F32,
        &[4],
    );
    assert_eq!(
        e,
        Error::DTypeMismatch {
            operand: "input 0".into(),
            expected: DType::Bool,
            got: DType::F32
        }
    );
    assert_eq!(shown(&e), "input 0: dtype `f32`, expected `bool`");

    // u8 bytes are not a bool condition either.
    let e = refused(
        Kind::Select,
        &[
            input(DType::U8, &[4]),
            input(DType::I32, &[4]),
            input(DType::I32, &[4]),
        ],
        DType::I32,
        &[4],
    );
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, expected: DType::Bool, got: DType::U8 } if operand == "input 0")
    );

    // The values must agree with each other.
    let e = refused(
        Kind::Select,
        &[
            input(DType::Bool, &[4]),
            input(DType::F32, &[4]),
            input(DType::F64, &[4]),
        ],
        DType::F32,
        &[4],
    );
    assert!(
        matches!(&e, Error::DTypeMismatch { operand, expected: DType::F32, got: DType::F64 } if operand == "input 2")
    );
}

#[test]
fn destination_of_the_wrong_dtype() {
    let two = |d| vec![input(d, &[4]), input(d, &[4])];
    let cases = [
        (Kind::Add, two(DType::F32), DType::F64, DType::F32),
        (Kind::Lt, two(DType::F32), DType::F32, DType::Bool),
        (Kind::Eq, two(DType::C64), DType::C64, DType::Bool),
        (Kind::Add, two(DType::I4), DType::I8, DType::I4),
    ];
    for (kind, ins, got, expected) in cases {
        let e = refused(kind, &ins, got, &[4]);
        assert_eq!(
            e,
            Error::DTypeMismatch {
                operand: "destination".into(),
                expected,
                got
            }
        );
        assert_eq!(
            shown(&e),
            format!("destination: dtype `{got}`, expected `{expected}`")
        );
    }
    // abs of a complex number is real: its component dtype.
    let e = refused(Kind::Abs, &[input(DType::C64, &[4])], DType::C64, &[4]);
    assert_eq!(
        e,
        Error::DTypeMismatch {
            operand: "destination".into(),
            expected: DType::F32,
            got: DType::C64
        }
    );
    let e = refused(Kind::Abs, &[input(DType::C128, &[4])], DType::F32, &[4]);
    assert!(matches!(
        e,
        Error::DTypeMismatch {
            expected: DType::F64,
            got: DType::F32,
            ..
        }
    ));
}

#[test]
fn kind_not_defined_for_the_dtype() {
    let cases = [
        (Kind::Sqrt, DType::I32, 1),
        (Kind::Shl, DType::F32, 2),
        (Kind::Conj, DType::F64, 1),
        (Kind::BitwiseAnd, DType::F16, 2),
        (Kind::Lt, DType::C64, 2),
        (Kind::Fma, DType::I8, 3),
    ];
    for (kind, dtype, arity) in cases {
        let ins: Vec<Input> = (0..arity).map(|_| input(dtype, &[4])).collect();
        let e = refused(kind, &ins, dtype, &[4]);
        assert_eq!(e, Error::Unsupported { kind, dtype });
        assert_eq!(
            shown(&e),
            format!("kind `{kind}` is not defined for dtype `{dtype}`")
        );
        assert!(tessera::result_dtype(kind, dtype).is_err());
    }
}

// ---- shapes -------------------------------------------------------------------

#[test]
fn shape_that_does_not_broadcast() {
    let e = refused(
        Kind::Add,
        &[input(DType::F32, &[3]), input(DType::F32, &[4])],
        DType::F32,
        &[4],
    );
    assert_eq!(
        e,
        Error::Shape {
            operand: "input 0".into(),
            shape: vec![3],
            target: vec![4]
        }
    );
    assert_eq!(shown(&e), "input 0: shape [3] does not broadcast to [4]");

    // Checked for every input before anything runs: the last one is wrong.
    let e = refused(
        Kind::Fma,
        &[
            input(DType::F32, &[2, 4]),
            input(DType::F32, &[1, 4]),
            input(DType::F32, &[3, 1]),
        ],
        DType::F32,
        &[2, 4],
    );
    assert!(
        matches!(&e, Error::Shape { operand, shape, target } if operand == "input 2" && shape == &[3, 1] && target == &[2, 4]),
        "{e}"
    );
    assert!(shown(&e).starts_with("input 2: "));

    // An input may not be bigger than the destination (no broadcasting of
    // the destination), in extent or in rank.
    let e = refused(
        Kind::Add,
        &[input(DType::I32, &[4]), input(DType::I32, &[2, 4])],
        DType::I32,
        &[4],
    );
    assert!(
        matches!(&e, Error::Shape { operand, .. } if operand == "input 1"),
        "{e}"
    );
    let e = refused(Kind::Neg, &[input(DType::I32, &[4])], DType::I32, &[1]);
    assert!(
        matches!(&e, Error::Shape { operand, .. } if operand == "input 0"),
        "{e}"
    );
    let e = refused(
        Kind::Neg,
        &[input(DType::I32, &[1, 1, 4])],
        DType::I32,
        &[4],
    );
    assert!(
        matches!(&e, Error::Shape { operand, .. } if operand == "input 0"),
        "{e}"
    );
}

// ---- views ---------------------------------------------------------------------

fn view_err(dtype: DType, shape: &[usize], strides: &[isize], offset: usize, len: usize) -> Error {
    let data = vec![0u8; len];
    let e = ArrayView::new(dtype, shape, strides, offset, &data)
        .expect_err("an invalid view was accepted");
    // The destination refuses the same geometry, under its own name.
    let mut out = vec![SENTINEL; len];
    let d = ArrayViewMut::new(dtype, shape, strides, offset, &mut out)
        .expect_err("an invalid destination was accepted");
    assert!(out.iter().all(|&b| b == SENTINEL));
    assert_eq!(std::mem::discriminant(&e), std::mem::discriminant(&d));
    assert!(shown(&e).starts_with("view: "), "{e}");
    assert!(shown(&d).starts_with("destination: "), "{d}");
    e
}

#[test]
fn strides_and_shape_of_different_rank() {
    let e = view_err(DType::F32, &[2, 3], &[3], 0, 24);
    assert_eq!(
        e,
        Error::Layout {
            operand: "view".into(),
            reason: "2 axes but 1 strides".into()
        }
    );
    let e = view_err(DType::F32, &[], &[1], 0, 4);
    assert!(matches!(e, Error::Layout { .. }), "{e}");
}

#[test]
fn view_out_of_bounds_with_positive_strides() {
    // Four f32 at stride 2 reach element 6: 28 bytes, 24 given.
    let e = view_err(DType::F32, &[4], &[2], 0, 24);
    assert_eq!(
        e,
        Error::OutOfBounds {
            operand: "view".into(),
            needed: 28,
            len: 24
        }
    );
    assert_eq!(shown(&e), "view: the view needs 28 bytes but 24 are given");
    // The offset counts.
    let e = view_err(DType::F64, &[2, 2], &[2, 1], 1, 32);
    assert_eq!(
        e,
        Error::OutOfBounds {
            operand: "view".into(),
            needed: 40,
            len: 32
        }
    );
    // Packed: two rows of four i4 at a row stride of 4 reach element 7, byte 3.
    let e = view_err(DType::I4, &[2, 4], &[4, 1], 0, 3);
    assert_eq!(
        e,
        Error::OutOfBounds {
            operand: "view".into(),
            needed: 4,
            len: 3
        }
    );
    // A huge stride is measured, not wrapped.
    let e = view_err(DType::F32, &[3], &[isize::MAX], 0, 64);
    match e {
        Error::OutOfBounds {
            needed, len: 64, ..
        } => {
            assert_eq!(needed, (2 * isize::MAX as u128 + 1) * 4)
        }
        other => panic!("{other}"),
    }
}

#[test]
fn view_out_of_bounds_with_negative_strides() {
    // Reversed from element 2: reaches element -1, before the bytes.
    let e = view_err(DType::F32, &[4], &[-1], 2, 64);
    assert!(
        matches!(&e, Error::Layout { operand, reason } if operand == "view" && reason.contains("-1")),
        "{e}"
    );
    // A reversed outer axis: rows at 4, 0, -4.
    let e = view_err(DType::I16, &[3, 4], &[-4, 1], 4, 64);
    assert!(
        matches!(&e, Error::Layout { reason, .. } if reason.contains("-4")),
        "{e}"
    );
    // Reversed from past the end.
    let e = view_err(DType::F32, &[4], &[-1], 6, 24);
    assert_eq!(
        e,
        Error::OutOfBounds {
            operand: "view".into(),
            needed: 28,
            len: 24
        }
    );
    // A valid reversed view next to them is accepted.
    let data = vec![0u8; 24];
    assert!(ArrayView::new(DType::F32, &[4], &[-1], 5, &data).is_ok());
    assert!(ArrayView::new(DType::F32, &[4], &[-1], 3, &data).is_ok());
}

#[test]
fn size_overflow() {
    for shape in [
        vec![usize::MAX, 2],
        vec![1usize << 33, 1 << 33],
        vec![3, usize::MAX / 2],
        vec![isize::MAX as usize + 1],
    ] {
        let strides = vec![0isize; shape.len()];
        let e = view_err(DType::F32, &shape, &strides, 0, 4);
        assert_eq!(
            e,
            Error::Overflow {
                operand: "view".into()
            },
            "{shape:?}"
        );
        assert_eq!(shown(&e), "view: size arithmetic overflows");
    }
    // An empty axis makes any other extent harmless.
    let data = [0u8; 4];
    assert!(ArrayView::new(DType::F32, &[0, usize::MAX], &[0, 1], 0, &data).is_ok());
}

#[test]
fn packed_last_axis_not_whole_bytes() {
    for (dtype, shape) in [
        (DType::E2m1fn, vec![3usize]),
        (DType::I4, vec![2, 5]),
        (DType::U1, vec![2, 4]),
        (DType::U1, vec![9]),
    ] {
        let strides = tessera::array::c_strides(&shape);
        let e = view_err(dtype, &shape, &strides, 0, 64);
        assert!(
            matches!(&e, Error::Layout { reason, .. } if reason.contains("whole number of bytes")),
            "{dtype} {shape:?}: {e}"
        );
    }
    // A single value (rank 0, or a last axis of one) sits in the high bits of
    // its byte; its rows must still start on whole bytes.
    let data = [0u8; 4];
    assert!(ArrayView::new(DType::I4, &[], &[], 0, &data).is_ok());
    assert!(ArrayView::new(DType::U1, &[3, 1], &[8, 1], 0, &data).is_ok());
    let e = view_err(DType::U1, &[3, 1], &[1, 1], 0, 4);
    assert!(
        matches!(&e, Error::Layout { reason, .. } if reason.contains("stride 1 of axis 0")),
        "{e}"
    );
    let e = view_err(DType::I4, &[], &[], 1, 4);
    assert!(
        matches!(&e, Error::Layout { reason, .. } if reason.contains("offset 1")),
        "{e}"
    );
}

#[test]
fn packed_last_axis_stride_not_one() {
    for (dtype, strides) in [
        (DType::I4, [4isize, 2]),
        (DType::U4, [4, -1]),
        (DType::E2m1fn, [4, 0]),
    ] {
        let e = view_err(dtype, &[2, 4], &strides, 4, 64);
        assert!(
            matches!(&e, Error::Layout { reason, .. } if reason.contains("must have stride 1")),
            "{dtype} {strides:?}: {e}"
        );
    }
}

#[test]
fn packed_offset_or_outer_stride_not_whole_bytes() {
    let e = view_err(DType::I4, &[4], &[1], 1, 64);
    assert!(
        matches!(&e, Error::Layout { reason, .. } if reason.contains("offset 1")),
        "{e}"
    );
    let e = view_err(DType::U1, &[8], &[1], 4, 64);
    assert!(
        matches!(&e, Error::Layout { reason, .. } if reason.contains("offset 4")),
        "{e}"
    );
    let e = view_err(DType::I4, &[2, 4], &[5, 1], 0, 64);
    assert!(
        matches!(&e, Error::Layout { reason, .. } if reason.contains("stride 5 of axis 0")),
        "{e}"
    );
}

// ---- the destination ---------------------------------------------------------------

/// A destination that reaches one element twice (a zero stride) would make
/// the result depend on which write lands last — with threads, on timing.
#[test]
fn destination_writing_one_element_twice() {
    for (shape, strides) in [
        (vec![4usize, 8], vec![0isize, 1]),
        (vec![8], vec![0]),
        (vec![3, 3], vec![1, 1]),
    ] {
        let a: Vec<f32> = (0..shape.iter().product::<usize>())
            .map(|i| i as f32)
            .collect();
        let mut out = vec![f32::from_bits(0x7FC0_0A5A); 16];
        let before: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        let e = {
            let av = ArrayView::from_slice(&a, &shape).unwrap();
            let bv = ArrayView::from_slice(&a, &shape).unwrap();
            let mut y = ArrayViewMut::from_slice_strided(&mut out, &shape, &strides, 0).unwrap();
            elementwise(
                Kind::Add,
                &[av, bv],
                &mut y,
                &Exec::on(Tier::ALL[0]).threads(2),
            )
            .expect_err("a self-overlapping destination was accepted")
        };
        assert!(
            matches!(&e, Error::Layout { operand, .. } if operand == "destination"),
            "{shape:?} {strides:?}: {e}"
        );
        assert!(shown(&e).starts_with("destination: "));
        assert!(out.iter().map(|v| v.to_bits()).eq(before));
    }
}

// ---- tiers ---------------------------------------------------------------------------

#[test]
fn unknown_tier_name() {
    for name in ["avx9", "", "scalar2", "neon512"] {
        let e = parse_tier(name).expect_err("an unknown tier was accepted");
        assert_eq!(e, Error::UnknownTier(name.to_string()));
        assert_eq!(shown(&e), format!("unknown tier `{name}`"));
    }
    // Every tier the spec declares parses, surrounding spaces allowed.
    for t in Tier::ALL {
        let r = parse_tier(&format!(" {} ", t.name()));
        if t.available() {
            assert_eq!(r, Ok(t));
        } else {
            assert_eq!(r, Err(Error::TierUnavailable(t)));
        }
    }
}

#[test]
fn tier_the_cpu_cannot_run() {
    let unavailable: Vec<Tier> = Tier::ALL.into_iter().filter(|t| !t.available()).collect();
    for t in unavailable {
        let a = [1.0f32; 4];
        let mut out = [f32::from_bits(0x7FC0_0A5A); 4];
        let e = {
            let av = ArrayView::from_slice(&a, &[4]).unwrap();
            let mut y = ArrayViewMut::from_slice(&mut out, &[4]).unwrap();
            elementwise(Kind::Neg, &[av], &mut y, &Exec::on(t))
                .expect_err("an unavailable tier ran")
        };
        assert_eq!(e, Error::TierUnavailable(t));
        assert!(shown(&e).contains(t.name()));
        assert!(out.iter().all(|v| v.to_bits() == 0x7FC0_0A5A));
    }
}

/// Refusals come before any write, even when the call is large enough to
/// run on many threads.
#[test]
fn refusals_of_large_calls_write_nothing() {
    let n = 1usize << 18;
    let e = refused(
        Kind::Add,
        &[input(DType::F32, &[n]), input(DType::F32, &[n + 1])],
        DType::F32,
        &[n],
    );
    assert!(matches!(&e, Error::Shape { operand, .. } if operand == "input 1"));
    let e = refused(
        Kind::Add,
        &[input(DType::U8, &[n]), input(DType::U8, &[n])],
        DType::I8,
        &[n],
    );
    assert!(matches!(&e, Error::DTypeMismatch { operand, .. } if operand == "destination"));
}
