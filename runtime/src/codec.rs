//! Codecs: how a stored element becomes the value a kernel computes on (its
//! carrier) and how a carrier value is rounded back into storage.

use core::marker::PhantomData;
use num_complex::Complex;

/// Moves values between storage and carrier. `encode` is the one rounding a
/// kernel's result goes through.
pub trait Codec: 'static {
    /// The element as stored (one code per byte for sub-byte dtypes).
    type Store: Copy + 'static;
    /// The type the element computes in.
    type Carrier: Copy + 'static;
    /// Storage to carrier (exact).
    fn decode(s: Self::Store) -> Self::Carrier;
    /// Carrier to storage, by the dtype's rounding and default overflow rule.
    fn encode(c: Self::Carrier) -> Self::Store;
}

/// A type stored as itself and computing as itself (i8..u64, f32, f64, complex).
pub struct Native<T>(PhantomData<T>);

impl<T: Copy + 'static> Codec for Native<T> {
    type Store = T;
    type Carrier = T;
    #[inline(always)]
    fn decode(s: T) -> T {
        s
    }
    #[inline(always)]
    fn encode(c: T) -> T {
        c
    }
}

/// Raw storage, passed through bit for bit (for kinds that only move values).
pub struct Raw<T>(PhantomData<T>);

impl<T: Copy + 'static> Codec for Raw<T> {
    type Store = T;
    type Carrier = T;
    #[inline(always)]
    fn decode(s: T) -> T {
        s
    }
    #[inline(always)]
    fn encode(c: T) -> T {
        c
    }
}

/// bool: one byte, zero is false and any other byte is true; results are 0 or 1.
pub struct Bool;

impl Codec for Bool {
    type Store = u8;
    type Carrier = bool;
    #[inline(always)]
    fn decode(s: u8) -> bool {
        s != 0
    }
    #[inline(always)]
    fn encode(c: bool) -> u8 {
        c as u8
    }
}

/// A signed integer of `BITS` < 8 bits, one code per byte in its low bits,
/// computing in i8 and wrapping into its width on encode.
pub struct NarrowInt<const BITS: u32>;

impl<const BITS: u32> Codec for NarrowInt<BITS> {
    type Store = u8;
    type Carrier = i8;
    #[inline(always)]
    fn decode(s: u8) -> i8 {
        ((s << (8 - BITS)) as i8) >> (8 - BITS)
    }
    #[inline(always)]
    fn encode(c: i8) -> u8 {
        (c as u8) & ((1u16 << BITS) - 1) as u8
    }
}

/// An unsigned integer of `BITS` < 8 bits, one code per byte in its low bits,
/// computing in u8 and wrapping into its width on encode.
pub struct NarrowUint<const BITS: u32>;

impl<const BITS: u32> Codec for NarrowUint<BITS> {
    type Store = u8;
    type Carrier = u8;
    #[inline(always)]
    fn decode(s: u8) -> u8 {
        s & ((1u16 << BITS) - 1) as u8
    }
    #[inline(always)]
    fn encode(c: u8) -> u8 {
        c & ((1u16 << BITS) - 1) as u8
    }
}

/// The range and width of an integer dtype, in its carrier.
pub trait IntCodec: Codec {
    /// Value bits.
    const BITS: u32;
    /// Smallest value.
    const MIN: Self::Carrier;
    /// Largest value.
    const MAX: Self::Carrier;
}

macro_rules! native_int {
    ($($t:ty),*) => {$(
        impl IntCodec for Native<$t> {
            const BITS: u32 = <$t>::BITS;
            const MIN: $t = <$t>::MIN;
            const MAX: $t = <$t>::MAX;
        }
    )*};
}
native_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl<const BITS: u32> IntCodec for NarrowInt<BITS> {
    const BITS: u32 = BITS;
    const MIN: i8 = -(1i16 << (BITS - 1)) as i8;
    const MAX: i8 = ((1i16 << (BITS - 1)) - 1) as i8;
}

impl<const BITS: u32> IntCodec for NarrowUint<BITS> {
    const BITS: u32 = BITS;
    const MIN: u8 = 0;
    const MAX: u8 = ((1u16 << BITS) - 1) as u8;
}

/// The component type of a complex carrier, as a codec.
pub type ComplexOf<T> = Native<Complex<T>>;

/// A complex number of two narrow floats (f16c, bf16c) stored as two codes of
/// the codec `C` (real part first) and computed as a complex of `C`'s carrier
/// (f32): each part decoded exactly and encoded by `C`'s rounding.
pub struct MiniComplex<C>(PhantomData<C>);

impl<C: Codec<Carrier = f32>> Codec for MiniComplex<C> {
    type Store = Complex<C::Store>;
    type Carrier = Complex<f32>;
    #[inline(always)]
    fn decode(s: Self::Store) -> Complex<f32> {
        Complex::new(C::decode(s.re), C::decode(s.im))
    }
    #[inline(always)]
    fn encode(c: Complex<f32>) -> Self::Store {
        Complex::new(C::encode(c.re), C::encode(c.im))
    }
}
