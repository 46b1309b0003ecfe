//! The accumulator element types and their one step, `acc + a·b`.

/// Plain data the packers move: a zero (used for padding) and nothing else.
pub(crate) trait Bits: Copy + Send + Sync + 'static {
    /// The all-zero value (+0 for floats, the additive identity).
    const ZERO: Self;
}

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            const ZERO: Self = 0 as $t;
        }
    )*};
}
bits!(u8, u16, u32, u64, f32, f64, i32, i64);

impl Bits for num_complex::Complex<f64> {
    const ZERO: Self = num_complex::Complex { re: 0.0, im: 0.0 };
}

/// An accumulator element: fused multiply-add for floats (one rounding),
/// wrapping multiply and add for integers (exact modulo 2^w).
pub(crate) trait Acc: Bits + PartialEq + std::fmt::Debug {
    /// `self + a·b`, rounded once (floats) or wrapped (integers).
    fn madd(self, a: Self, b: Self) -> Self;
    /// `self + o`, rounded once (floats) or wrapped (integers).
    fn plus(self, o: Self) -> Self;
}

impl Acc for f32 {
    #[inline(always)]
    fn madd(self, a: Self, b: Self) -> Self {
        a.mul_add(b, self)
    }
    #[inline(always)]
    fn plus(self, o: Self) -> Self {
        self + o
    }
}

impl Acc for f64 {
    #[inline(always)]
    fn madd(self, a: Self, b: Self) -> Self {
        a.mul_add(b, self)
    }
    #[inline(always)]
    fn plus(self, o: Self) -> Self {
        self + o
    }
}

macro_rules! int_acc {
    ($($t:ty),*) => {$(
        impl Acc for $t {
            #[inline(always)]
            fn madd(self, a: Self, b: Self) -> Self {
                self.wrapping_add(a.wrapping_mul(b))
            }
            #[inline(always)]
            fn plus(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
        }
    )*};
}
int_acc!(i32, i64);

/// Elements of one dtype read from a validated byte buffer by element position.
#[derive(Clone, Copy)]
pub(crate) struct Src<'a> {
    bytes: &'a [u8],
}

impl<'a> Src<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Src { bytes }
    }

    /// The element at position `e`.
    ///
    /// # Safety
    /// `e` must be a position the validated view of these bytes reaches, with
    /// `T` the view's dtype, so that `e·size_of::<T>() + size_of::<T>()` is
    /// within the bytes.
    #[inline(always)]
    pub(crate) unsafe fn get<T: Copy>(&self, e: isize) -> T {
        debug_assert!(e >= 0 && (e as usize + 1) * size_of::<T>() <= self.bytes.len());
        // SAFETY: `e` is a position of the view and T its dtype (this
        // function's contract), so the element's bytes lie inside `bytes`;
        // the read is unaligned, and every bit pattern is a value of a
        // float or integer dtype.
        unsafe { (self.bytes.as_ptr() as *const T).offset(e).read_unaligned() }
    }

    /// A pointer to the element at position `e`, for unaligned vector loads.
    ///
    /// # Safety
    /// `e` must be a position the validated view of these bytes reaches, with
    /// `T` the view's dtype, so that the pointer lies inside the bytes.
    /// (Reads through it are the caller's to keep to the view's positions.)
    #[inline(always)]
    pub(crate) unsafe fn ptr<T>(&self, e: isize) -> *const T {
        // SAFETY: `e` is a position of the view and T its dtype (this
        // function's contract): the offset stays inside `bytes`.
        unsafe { (self.bytes.as_ptr() as *const T).offset(e) }
    }

    /// [`Src::get`] for any plain-data element (complex pairs).
    ///
    /// # Safety
    /// `e` must be a position the validated view of these bytes reaches, with
    /// `T` the view's dtype, so that the element's bytes lie inside them.
    #[inline(always)]
    pub(crate) unsafe fn get_any<T: crate::Element>(&self, e: isize) -> T {
        debug_assert!(e >= 0 && (e as usize + 1) * size_of::<T>() <= self.bytes.len());
        // SAFETY: `e` is a position of the view and T its dtype (this
        // function's contract), so the element's bytes lie inside `bytes`;
        // the read is unaligned, and `Element` types are plain data (any
        // bits a value).
        unsafe { (self.bytes.as_ptr() as *const T).offset(e).read_unaligned() }
    }
}
