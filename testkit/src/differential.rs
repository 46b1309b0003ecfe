//! The tier-vs-scalar differential engine: one kernel of a tier's table run on
//! buffers laid out as its loop variant asks (contiguous, one input broadcast,
//! any strides, misaligned), its logical output read back and every byte
//! outside its elements checked untouched; and the check that runs one
//! kernel, on the same logical operands, as the scalar tier's contiguous
//! kernel (the reference), as the scalar tier's kernel of its variant in the
//! layout under test, and as every other tier's kernel in that layout, and
//! compares their bits, the sign and payload of a NaN result aside (DESIGN
//! §5.1).
//!
//! A user builds a [`Subject`] per kernel (an elementwise kernel of
//! `KERNELS`, or a cast), a [`Case`] per run (element count, layout, logical
//! operands), calls [`check`], and reports the [`Outcome`] its own way: the
//! tests assert and record coverage, `tessera selftest` counts.

use crate::values::{in_dtypes, out_dtype, same_result, width};
use tessera::tier::{cast_table, kernel_table};
use tessera::{cast_index, kernel_index, Args, DType, Kind, LoopFn, Tier, Variant};

/// The kernel of a tier, if the tier runs here and the kernel exists.
pub fn kernel(tier: Tier, kind: Kind, d: DType, v: Variant) -> Option<LoopFn> {
    let table = kernel_table(tier)?;
    table.get(kernel_index(kind, d, v)?).copied()
}

/// The cast kernel of a tier from `src` to `dst` (`saturating` mode or the
/// default one), if the tier runs here and the kernel exists.
pub fn cast_kernel(
    tier: Tier,
    src: DType,
    dst: DType,
    saturating: bool,
    v: Variant,
) -> Option<LoopFn> {
    let table = cast_table(tier)?;
    table.get(cast_index(src, dst, saturating, v)?).copied()
}

/// Guard bytes before and after every buffer.
const GUARD: usize = 24;
/// The byte every destination buffer starts as.
pub const SENTINEL: u8 = 0xa5;
/// The byte input buffers are padded with.
const PAD: u8 = 0x5a;

/// Where the operands of one run live.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Input strides in elements.
    pub src: [isize; 3],
    /// Destination stride in elements (not 0).
    pub dst: isize,
    /// Bytes added to every buffer's start (misalignment).
    pub misalign: usize,
}

impl Layout {
    /// Every operand contiguous.
    pub const CONTIG: Layout = Layout {
        src: [1, 1, 1],
        dst: 1,
        misalign: 0,
    };

    /// The layout of a contiguous or broadcast variant.
    pub fn unit(v: Variant, misalign: usize) -> Layout {
        let mut src = [1isize; 3];
        match v {
            Variant::Bcast0 => src[0] = 0,
            Variant::Bcast1 => src[1] = 0,
            Variant::Bcast2 => src[2] = 0,
            Variant::Contig => {}
            Variant::Strided => panic!("strided has no unit layout"),
        }
        Layout {
            src,
            dst: 1,
            misalign,
        }
    }

    /// The strided layouts exercised: each input sees strides 2, -1, 0 and 3
    /// across them, the destination 1, -1, 2, 3; odd ones are misaligned.
    pub fn strided() -> [Layout; 4] {
        [
            Layout {
                src: [2, -1, 0],
                dst: 1,
                misalign: 0,
            },
            Layout {
                src: [-1, 0, 3],
                dst: -1,
                misalign: 1,
            },
            Layout {
                src: [0, 3, 2],
                dst: 2,
                misalign: 0,
            },
            Layout {
                src: [3, 2, -1],
                dst: 3,
                misalign: 3,
            },
        ]
    }
}

/// A buffer holding n elements of w bytes at `stride`, and the offset of element 0.
fn place(
    logical: &[u8],
    w: usize,
    n: usize,
    stride: isize,
    misalign: usize,
    fill: u8,
) -> (Vec<u8>, usize) {
    let span = if n == 0 {
        0
    } else {
        (n - 1) * stride.unsigned_abs()
    };
    let mut buf = vec![fill; 2 * GUARD + misalign + (span + 1) * w];
    let base = GUARD + misalign + if stride < 0 { span * w } else { 0 };
    for i in 0..n {
        let off = offset(base, i, stride, w);
        buf[off..off + w].copy_from_slice(&logical[i * w..(i + 1) * w]);
    }
    (buf, base)
}

fn offset(base: usize, i: usize, stride: isize, w: usize) -> usize {
    (base as isize + i as isize * stride * w as isize) as usize
}

/// Run kernel `f` on `n` elements: input k holds `logical[k]` (n elements of
/// `in_w[k]` bytes; an input of stride 0 must hold n equal elements), laid out
/// by `layout`. Returns the n output elements, or a message if the kernel wrote
/// outside them.
pub fn run(
    f: LoopFn,
    in_w: &[usize],
    out_w: usize,
    logical: &[&[u8]],
    n: usize,
    layout: &Layout,
) -> Result<Vec<u8>, String> {
    assert_eq!(in_w.len(), logical.len());
    let mut bufs = Vec::new();
    for (k, (&w, &l)) in in_w.iter().zip(logical).enumerate() {
        assert_eq!(l.len(), n * w, "input {k}: wrong length");
        if layout.src[k] == 0 {
            for i in 1..n {
                assert_eq!(
                    &l[i * w..(i + 1) * w],
                    &l[..w],
                    "input {k} has stride 0 but differing elements"
                );
            }
        }
        bufs.push(place(l, w, n, layout.src[k], layout.misalign, PAD));
    }
    assert_ne!(layout.dst, 0);
    let (mut out, obase) = place(
        &vec![SENTINEL; n * out_w],
        out_w,
        n,
        layout.dst,
        layout.misalign,
        SENTINEL,
    );
    let mut args = Args {
        n,
        src: [std::ptr::null(); 3],
        src_stride: [0; 3],
        dst: std::ptr::null_mut(),
        dst_stride: layout.dst,
    };
    for (k, (buf, base)) in bufs.iter().enumerate() {
        // `base` lies inside `buf` (place() made it so).
        args.src[k] = buf[*base..].as_ptr();
        args.src_stride[k] = layout.src[k];
    }
    args.dst = out[obase..].as_mut_ptr();
    // SAFETY: every input buffer holds its n elements at its stride from
    // src[k] (place() sized it so, stride 0 included); the destination buffer
    // holds n elements at dst_stride from dst and overlaps no input.
    unsafe { f(&args) };
    let mut touched = vec![false; out.len()];
    let mut result = Vec::with_capacity(n * out_w);
    for i in 0..n {
        let off = offset(obase, i, layout.dst, out_w);
        result.extend_from_slice(&out[off..off + out_w]);
        touched[off..off + out_w].iter_mut().for_each(|t| *t = true);
    }
    if let Some(p) = (0..out.len()).find(|&p| !touched[p] && out[p] != SENTINEL) {
        return Err(format!(
            "wrote byte {p} of the destination buffer, outside its {n} elements (layout {layout:?})"
        ));
    }
    Ok(result)
}

/// Run kernel `f` in place: the destination is input 0 (same pointer and
/// stride), as the kernels' contract allows. Returns the n output elements.
pub fn run_in_place(
    f: LoopFn,
    in_w: &[usize],
    logical: &[&[u8]],
    n: usize,
    layout: &Layout,
) -> Vec<u8> {
    let w0 = in_w[0];
    let mut bufs = Vec::new();
    for (k, (&w, &l)) in in_w.iter().zip(logical).enumerate() {
        bufs.push(place(l, w, n, layout.src[k], layout.misalign, PAD));
    }
    let mut args = Args {
        n,
        src: [std::ptr::null(); 3],
        src_stride: [0; 3],
        dst: std::ptr::null_mut(),
        dst_stride: layout.src[0],
    };
    for (k, (buf, base)) in bufs.iter().enumerate().skip(1) {
        args.src[k] = buf[*base..].as_ptr();
        args.src_stride[k] = layout.src[k];
    }
    let (buf0, base0) = &mut bufs[0];
    let p0 = buf0[*base0..].as_mut_ptr();
    args.src[0] = p0 as *const u8;
    args.src_stride[0] = layout.src[0];
    args.dst = p0;
    // SAFETY: as in run(); the destination is exactly input 0 (same pointer,
    // same stride, same element size), which the LoopFn contract allows.
    unsafe { f(&args) };
    let (buf0, base0) = &bufs[0];
    (0..n)
        .flat_map(|i| {
            let off = offset(*base0, i, layout.src[0], w0);
            buf0[off..off + w0].to_vec()
        })
        .collect()
}

/// How an output compares with the expected one, element by element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// Elements whose bits differ but that are the same result: NaNs that
    /// differ only in sign or payload.
    pub nan_only: usize,
    /// Elements that are different results.
    pub differ: usize,
    /// The first element that is a different result.
    pub first: Option<usize>,
}

impl Diff {
    /// Whether every element is the same result.
    pub fn same(&self) -> bool {
        self.differ == 0
    }
}

/// Compare two outputs of dtype `d` (elements of `width(d)` bytes) under the
/// numerical contract: bit for bit, except that two NaNs (of a float output,
/// or of one complex component) are the same result whatever their signs and
/// payloads. Outputs of different lengths differ from their first element.
pub fn compare(d: DType, got: &[u8], want: &[u8]) -> Diff {
    let w = width(d).max(1);
    let mut diff = Diff::default();
    if got.len() != want.len() {
        let n = got.len().max(want.len()).div_ceil(w);
        diff.differ = n.max(1);
        diff.first = Some(0);
        return diff;
    }
    for (i, (g, x)) in got.chunks_exact(w).zip(want.chunks_exact(w)).enumerate() {
        if g == x {
            continue;
        }
        if same_result(d, g, x) {
            diff.nan_only += 1;
        } else {
            diff.differ += 1;
            diff.first.get_or_insert(i);
        }
    }
    diff
}

/// One kernel under the differential check: its operands, the scalar tier's
/// kernels it is held to, and the kernel of every other tier checked.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The dtype of each input.
    pub inputs: Vec<DType>,
    /// The dtype of the output.
    pub out: DType,
    /// The loop variant of the kernels under test.
    pub variant: Variant,
    /// The scalar tier's contiguous kernel of the same operation: the
    /// reference, run on contiguous operands.
    pub contig: LoopFn,
    /// The scalar tier's kernel of `variant`.
    pub scalar: LoopFn,
    /// Every other tier checked, with its kernel of `variant` (None where the
    /// tier has no table or no such kernel: a failure of the check).
    pub tiers: Vec<(Tier, Option<LoopFn>)>,
}

impl Subject {
    /// The elementwise kernel `kind` on `d` in variant `v`, checked on
    /// `tiers` (the scalar tier among them is skipped: it is the reference).
    /// None where the scalar tier has no such kernel or no contiguous one.
    pub fn kernel(kind: Kind, d: DType, v: Variant, tiers: &[Tier]) -> Option<Subject> {
        Some(Subject {
            inputs: in_dtypes(kind, d),
            out: out_dtype(kind, d),
            variant: v,
            contig: kernel(Tier::Scalar, kind, d, Variant::Contig)?,
            scalar: kernel(Tier::Scalar, kind, d, v)?,
            tiers: others(tiers, |t| kernel(t, kind, d, v)),
        })
    }

    /// The cast from `src` to `dst` (`saturating` or the default mode) in
    /// variant `v`, checked on `tiers` as [`Subject::kernel`].
    pub fn cast(
        src: DType,
        dst: DType,
        saturating: bool,
        v: Variant,
        tiers: &[Tier],
    ) -> Option<Subject> {
        Some(Subject {
            inputs: vec![src],
            out: dst,
            variant: v,
            contig: cast_kernel(Tier::Scalar, src, dst, saturating, Variant::Contig)?,
            scalar: cast_kernel(Tier::Scalar, src, dst, saturating, v)?,
            tiers: others(tiers, |t| cast_kernel(t, src, dst, saturating, v)),
        })
    }

    /// Bytes of one element of each input.
    pub fn in_widths(&self) -> Vec<usize> {
        self.inputs.iter().map(|&d| width(d)).collect()
    }

    /// Bytes of one output element.
    pub fn out_width(&self) -> usize {
        width(self.out)
    }

    /// Whether the kernel may run in place in `layout` with input 0 as its
    /// destination (same pointer and stride): the output has input 0's dtype,
    /// input 0 is not broadcast, and the destination stride is input 0's, or
    /// free (the strided variant).
    pub fn in_place_allowed(&self, layout: &Layout) -> bool {
        self.out == self.inputs[0]
            && layout.src[0] != 0
            && (layout.src[0] == layout.dst || self.variant == Variant::Strided)
    }
}

/// The tiers of `tiers` other than scalar, with their kernels.
fn others(tiers: &[Tier], f: impl Fn(Tier) -> Option<LoopFn>) -> Vec<(Tier, Option<LoopFn>)> {
    tiers
        .iter()
        .filter(|&&t| t != Tier::Scalar)
        .map(|&t| (t, f(t)))
        .collect()
}

/// One run of a subject: `n` elements of each input, laid out by `layout`.
#[derive(Clone, Copy, Debug)]
pub struct Case<'a> {
    /// Elements.
    pub n: usize,
    /// The logical operands: input k holds `n` elements of the subject's
    /// input k (an input of stride 0 in `layout` must hold `n` equal ones).
    pub inputs: &'a [&'a [u8]],
    /// Where the operands lie.
    pub layout: Layout,
    /// Whether to run every tier's kernel in place too (see
    /// [`Subject::in_place_allowed`]).
    pub in_place: bool,
}

/// One kernel's run in a case and how it compares with what it is held to.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The tier whose kernel ran.
    pub tier: Tier,
    /// The output elements, or why there are none (the kernel wrote outside
    /// them, or the tier has no such kernel).
    pub output: Result<Vec<u8>, String>,
    /// The comparison with the expected output; None where either is missing.
    pub diff: Option<Diff>,
}

impl Checked {
    /// Whether the kernel ran and gave the expected results.
    pub fn passed(&self) -> bool {
        self.output.is_ok() && self.diff.is_some_and(|d| d.same())
    }
}

/// What [`check`] found in one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The scalar tier's contiguous kernel on contiguous operands.
    pub reference: Result<Vec<u8>, String>,
    /// The scalar tier's kernel of the variant in the case's layout, against
    /// the reference (results never depend on layout).
    pub scalar: Checked,
    /// Every other tier's kernel in the case's layout, against the scalar
    /// tier's (`scalar`), in the subject's order.
    pub tiers: Vec<Checked>,
    /// With `Case::in_place` and a layout that allows it: the scalar tier's
    /// kernel and then every other tier's, run in place, against the reference.
    pub in_place: Vec<Checked>,
}

impl Outcome {
    /// Kernel runs made: the reference, the scalar kernel, the other tiers'
    /// (those that have the kernel) and the in-place ones.
    pub fn runs(&self) -> usize {
        let ran = |c: &&Checked| !matches!(&c.output, Err(e) if e.starts_with(NO_KERNEL));
        2 + self.tiers.iter().filter(ran).count() + self.in_place.len()
    }

    /// Every comparison of the case: the scalar kernel's, the other tiers',
    /// then the in-place runs'.
    pub fn checked(&self) -> impl Iterator<Item = &Checked> {
        std::iter::once(&self.scalar)
            .chain(&self.tiers)
            .chain(&self.in_place)
    }
}

/// The start of the message of a tier that has no kernel for a subject.
pub const NO_KERNEL: &str = "no kernel";

/// `output` compared with `want` (when both exist).
fn checked(
    tier: Tier,
    out: DType,
    output: Result<Vec<u8>, String>,
    want: &Result<Vec<u8>, String>,
) -> Checked {
    let diff = match (&output, want) {
        (Ok(g), Ok(w)) => Some(compare(out, g, w)),
        _ => None,
    };
    Checked { tier, output, diff }
}

/// Run `subject` on `case`: the reference, the scalar tier's kernel of the
/// variant in the case's layout, every other tier's kernel in that layout
/// (against the scalar tier's), and in place where asked and allowed.
///
/// # Panics
///
/// When the case's operands do not fit the subject (their count, their
/// lengths, or a broadcast input that holds differing elements).
pub fn check(subject: &Subject, case: &Case) -> Outcome {
    let in_w = subject.in_widths();
    let out_w = subject.out_width();
    let n = case.n;
    let reference = run(
        subject.contig,
        &in_w,
        out_w,
        case.inputs,
        n,
        &Layout::CONTIG,
    );
    let base = run(subject.scalar, &in_w, out_w, case.inputs, n, &case.layout);
    let tiers = subject
        .tiers
        .iter()
        .map(|&(tier, f)| {
            let output = match f {
                Some(f) => run(f, &in_w, out_w, case.inputs, n, &case.layout),
                None => Err(format!("{NO_KERNEL} in the {} tier's table", tier.name())),
            };
            checked(tier, subject.out, output, &base)
        })
        .collect();
    let mut in_place = Vec::new();
    if case.in_place && subject.in_place_allowed(&case.layout) {
        let mut l = case.layout;
        l.dst = l.src[0];
        let scalar = std::iter::once((Tier::Scalar, Some(subject.scalar)));
        for (tier, f) in scalar.chain(subject.tiers.iter().copied()) {
            let Some(f) = f else { continue };
            let output = Ok(run_in_place(f, &in_w, case.inputs, n, &l));
            in_place.push(checked(tier, subject.out, output, &reference));
        }
    }
    let scalar = checked(Tier::Scalar, subject.out, base, &reference);
    Outcome {
        reference,
        scalar,
        tiers,
        in_place,
    }
}

/// The tiers besides scalar this CPU runs that `keep` accepts: the ones a
/// tier-versus-scalar comparison compares. Where there is none, it says so
/// on stderr, naming the caller: its comparisons are skipped, not passed.
#[track_caller]
pub fn compared_tiers(keep: impl Fn(Tier) -> bool) -> Vec<Tier> {
    let tiers: Vec<Tier> = Tier::ALL
        .iter()
        .copied()
        .filter(|&t| t != Tier::Scalar && t.available() && keep(t))
        .collect();
    if tiers.is_empty() {
        eprintln!(
            "skipped ({}): no tier besides scalar runs on this CPU, so no tier is compared with it",
            std::panic::Location::caller()
        );
    }
    tiers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(xs: &[f32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn nan_sign_and_payload_are_the_only_freedom() {
        let nan = f32::from_bits(0x7fc0_0000);
        let other_nan = f32::from_bits(0xffd2_3456);
        let want = f32s(&[1.0, nan, 0.0, 2.0]);
        let d = compare(DType::F32, &f32s(&[1.0, other_nan, 0.0, 2.0]), &want);
        assert_eq!((d.nan_only, d.differ, d.first), (1, 0, None));
        assert!(d.same());
        // -0 is not +0; a NaN is not a number.
        let d = compare(DType::F32, &f32s(&[1.0, nan, -0.0, 3.0]), &want);
        assert_eq!((d.nan_only, d.differ, d.first), (0, 2, Some(2)));
        let d = compare(DType::F32, &f32s(&[nan, nan, 0.0, 2.0]), &want);
        assert_eq!((d.differ, d.first), (1, Some(0)));
        // Integers have no NaN: every bit counts.
        let d = compare(DType::I32, &(-1i32).to_le_bytes(), &(-2i32).to_le_bytes());
        assert_eq!((d.nan_only, d.differ), (0, 1));
        assert_eq!(compare(DType::F32, &want[..4], &want).first, Some(0));
    }

    /// A kernel that adds 1.0 to each f32 of input 0 but writes each result
    /// one element further on when the destination stride is not 1.
    ///
    /// # Safety
    ///
    /// As any `LoopFn`.
    unsafe fn strays_when_strided(a: &Args) {
        for i in 0..a.n as isize {
            // SAFETY: the caller's layout holds n f32 elements at the strides
            // (read and written unaligned); the stray element n falls in the
            // 24 guard bytes that run() and run_in_place() place around the
            // elements, at the one test's destination strides (-1, and 2 in
            // place) and element count (5).
            unsafe {
                let x = (a.src[0].offset(i * a.src_stride[0] * 4) as *const f32).read_unaligned();
                let j = if a.dst_stride == 1 { i } else { i + 1 };
                (a.dst.offset(j * a.dst_stride * 4) as *mut f32).write_unaligned(x + 1.0);
            }
        }
    }

    /// Adds 1.0 to each f32 of input 0, as a kernel should.
    ///
    /// # Safety
    ///
    /// As any `LoopFn`.
    unsafe fn add_one(a: &Args) {
        for i in 0..a.n as isize {
            // SAFETY: as in `strays_when_strided`, element i only.
            unsafe {
                let x = (a.src[0].offset(i * a.src_stride[0] * 4) as *const f32).read_unaligned();
                (a.dst.offset(i * a.dst_stride * 4) as *mut f32).write_unaligned(x + 1.0);
            }
        }
    }

    /// As `add_one`, with a NaN result's sign flipped.
    ///
    /// # Safety
    ///
    /// As any `LoopFn`.
    unsafe fn add_one_negative_nan(a: &Args) {
        for i in 0..a.n as isize {
            // SAFETY: as in `add_one`.
            unsafe {
                let x = (a.src[0].offset(i * a.src_stride[0] * 4) as *const f32).read_unaligned();
                let y = x + 1.0;
                let y = if y.is_nan() { -y } else { y };
                (a.dst.offset(i * a.dst_stride * 4) as *mut f32).write_unaligned(y);
            }
        }
    }

    fn subject(scalar: LoopFn, other: LoopFn) -> Subject {
        Subject {
            inputs: vec![DType::F32],
            out: DType::F32,
            variant: Variant::Strided,
            contig: add_one,
            scalar,
            tiers: vec![(Tier::Avx2, Some(other)), (Tier::Avx512, None)],
        }
    }

    #[test]
    fn a_check_finds_strays_wrong_bits_and_missing_kernels() {
        let x = f32s(&[1.0, f32::NAN, -2.0, 0.5, 7.0]);
        let inputs = [x.as_slice()];
        let layout = Layout {
            src: [2, 1, 1],
            dst: -1,
            misalign: 1,
        };
        let case = Case {
            n: 5,
            inputs: &inputs,
            layout,
            in_place: true,
        };
        let good = check(&subject(add_one, add_one_negative_nan), &case);
        assert_eq!(good.reference, Ok(f32s(&[2.0, f32::NAN, -1.0, 1.5, 8.0])));
        assert!(good.scalar.passed(), "{:?}", good.scalar);
        assert!(good.tiers[0].passed());
        assert_eq!(good.tiers[0].diff.map(|d| d.nan_only), Some(1));
        assert!(!good.tiers[1].passed());
        assert!(good.tiers[1]
            .output
            .as_ref()
            .unwrap_err()
            .starts_with(NO_KERNEL));
        // In place: the scalar tier and the tier that has the kernel.
        assert_eq!(good.in_place.len(), 2);
        assert!(good.in_place.iter().all(Checked::passed));
        assert_eq!(good.runs(), 2 + 1 + 2);

        let bad = check(&subject(strays_when_strided, add_one), &case);
        let err = bad.scalar.output.as_ref().unwrap_err();
        assert!(err.contains("outside its 5 elements"), "{err}");
        assert_eq!(bad.tiers[0].diff, None);
        assert!(bad.checked().any(|c| !c.passed()));
    }

    #[test]
    fn operands_are_placed_at_their_strides() {
        // Input 0 broadcast, input 1 reversed: a kernel that copies input 1.
        unsafe fn copy1(a: &Args) {
            for i in 0..a.n as isize {
                // SAFETY: the caller's layout holds n one-byte elements.
                unsafe { *a.dst.offset(i * a.dst_stride) = *a.src[1].offset(i * a.src_stride[1]) };
            }
        }
        let a = [9u8; 4];
        let b = [1u8, 2, 3, 4];
        let layout = Layout {
            src: [0, -1, 1],
            dst: 3,
            misalign: 2,
        };
        assert_eq!(
            run(copy1, &[1, 1], 1, &[&a, &b], 4, &layout),
            Ok(b.to_vec())
        );
        assert_eq!(
            run_in_place(copy1, &[1, 1], &[&b, &b], 4, &Layout::CONTIG),
            b.to_vec()
        );
    }

    #[test]
    fn subjects_of_the_tables() {
        let s = Subject::kernel(Kind::Select, DType::F16, Variant::Bcast1, &Tier::ALL).unwrap();
        assert_eq!(s.inputs, [DType::Bool, DType::F16, DType::F16]);
        assert_eq!((s.out, s.out_width()), (DType::F16, 2));
        assert!(s.tiers.iter().all(|&(t, _)| t != Tier::Scalar));
        assert!(!s.in_place_allowed(&Layout::CONTIG));
        let s = Subject::kernel(Kind::Add, DType::F32, Variant::Contig, &[]).unwrap();
        assert!(s.in_place_allowed(&Layout::CONTIG));
        assert!(!s.in_place_allowed(&Layout::unit(Variant::Bcast0, 0)));
        assert!(Subject::kernel(Kind::Add, DType::F32, Variant::Bcast2, &[]).is_none());
        let c = Subject::cast(DType::F64, DType::E4m3fn, true, Variant::Strided, &[]).unwrap();
        assert_eq!((c.in_widths(), c.out_width()), (vec![8], 1));
    }
}
