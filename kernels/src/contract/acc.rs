//! The accumulator element types and their one step, `acc + a·b`.

/// An accumulator element: fused multiply-add for floats (one rounding),
/// wrapping multiply and add for integers (exact modulo 2^w).
pub(crate) trait Acc: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The additive identity, +0.
    const ZERO: Self;
    /// `self + a·b`, rounded once (floats) or wrapped (integers).
    fn madd(self, a: Self, b: Self) -> Self;
    /// `self + o`, rounded once (floats) or wrapped (integers).
    fn plus(self, o: Self) -> Self;
}

impl Acc for f32 {
    const ZERO: Self = 0.0;
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
    const ZERO: Self = 0.0;
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
            const ZERO: Self = 0;
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
    pub(crate) unsafe fn get<T: Acc>(&self, e: isize) -> T {
        debug_assert!(e >= 0 && (e as usize + 1) * size_of::<T>() <= self.bytes.len());
        // SAFETY: in bounds by the caller's contract; unaligned reads are allowed
        // and every bit pattern is a valid float or integer.
        unsafe { (self.bytes.as_ptr() as *const T).offset(e).read_unaligned() }
    }

    /// A pointer to the element at position `e`, for unaligned vector loads.
    ///
    /// # Safety
    /// As [`Src::get`].
    #[inline(always)]
    pub(crate) unsafe fn ptr<T>(&self, e: isize) -> *const T {
        // SAFETY: in bounds by the caller's contract.
        unsafe { (self.bytes.as_ptr() as *const T).offset(e) }
    }

    /// [`Src::get`] for any plain-data element (complex pairs).
    ///
    /// # Safety
    /// As [`Src::get`].
    #[inline(always)]
    pub(crate) unsafe fn get_any<T: crate::Element>(&self, e: isize) -> T {
        debug_assert!(e >= 0 && (e as usize + 1) * size_of::<T>() <= self.bytes.len());
        // SAFETY: as in `get`; `Element` types are plain data.
        unsafe { (self.bytes.as_ptr() as *const T).offset(e).read_unaligned() }
    }
}
