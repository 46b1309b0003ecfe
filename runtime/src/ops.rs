//! The operations of the elementwise kinds, generic over carriers. A kind's
//! `algorithm` in `spec/kinds.toml` names one of the unit structs here, in
//! snake_case; [`Operation`] lists them all.

use super::codec::{Bool, Codec, IntCodec, Native};
use super::pair::{Pair, PairFloat};
use num_complex::Complex;

mod carriers;
pub use carriers::*;

/// Every operation of the runtime: one variant per operation struct of this
/// module, of the same name. The set of operations is declared here once:
/// tessera-codegen reads this block (a plain list of variants, each with its
/// doc comment) and refuses a `spec/kinds.toml` whose kinds name an operation
/// missing here or leave one of these unnamed (a kind's `algorithm` is the
/// variant's name in snake_case: `BitAnd` is `bit_and`), and the generated
/// catalogue maps every `Kind` to its `Operation` and back with exhaustive
/// matches, so the compiler refuses the same mismatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// a + b ([`Add`]).
    Add,
    /// a - b ([`Sub`]).
    Sub,
    /// a × b ([`Mul`]).
    Mul,
    /// a ÷ b ([`Div`]).
    Div,
    /// a rem b, sign of a ([`Rem`]).
    Rem,
    /// -a ([`Neg`]).
    Neg,
    /// |a|, into the real type for complex ([`Abs`]).
    Abs,
    /// IEEE 754-2019 minimum ([`Minimum`]).
    Minimum,
    /// IEEE 754-2019 maximum ([`Maximum`]).
    Maximum,
    /// a × b + c with one rounding ([`Fma`]).
    Fma,
    /// square root ([`Sqrt`]).
    Sqrt,
    /// floor ([`Floor`]).
    Floor,
    /// ceil ([`Ceil`]).
    Ceil,
    /// trunc ([`Trunc`]).
    Trunc,
    /// round half away from zero ([`Round`]).
    Round,
    /// round half to even ([`Rint`]).
    Rint,
    /// copysign ([`Copysign`]).
    Copysign,
    /// sign ([`Sign`]).
    Sign,
    /// minimum(maximum(x, lo), hi) ([`Clamp`]).
    Clamp,
    /// a == b ([`Eq`]).
    Eq,
    /// a != b ([`Ne`]).
    Ne,
    /// a < b ([`Lt`]).
    Lt,
    /// a <= b ([`Le`]).
    Le,
    /// a > b ([`Gt`]).
    Gt,
    /// a >= b ([`Ge`]).
    Ge,
    /// cond ? a : b ([`Select`]).
    Select,
    /// a and b ([`LogicalAnd`]).
    LogicalAnd,
    /// a or b ([`LogicalOr`]).
    LogicalOr,
    /// a xor b ([`LogicalXor`]).
    LogicalXor,
    /// a == 0 ([`LogicalNot`]).
    LogicalNot,
    /// a & b ([`BitAnd`]).
    BitAnd,
    /// a | b ([`BitOr`]).
    BitOr,
    /// a ^ b ([`BitXor`]).
    BitXor,
    /// !a ([`BitNot`]).
    BitNot,
    /// a << b; 0 for a count at or above the width ([`Shl`]).
    Shl,
    /// a >> b; the sign fill for a count at or above the width ([`Shr`]).
    Shr,
    /// rotate left by b mod width ([`Rotl`]).
    Rotl,
    /// rotate right by b mod width ([`Rotr`]).
    Rotr,
    /// saturating a + b ([`AddSat`]).
    AddSat,
    /// saturating a - b ([`SubSat`]).
    SubSat,
    /// IEEE totalOrder as −1, 0 or +1 ([`TotalOrder`]).
    TotalOrder,
    /// saturating a × b ([`MulSat`]).
    MulSat,
    /// the number of one bits ([`OnesCount`]).
    OnesCount,
    /// the leading zero bits, the width for 0 ([`LeadingZeros`]).
    LeadingZeros,
    /// the trailing zero bits, the width for 0 ([`TrailingZeros`]).
    TrailingZeros,
    /// the bits in reverse order ([`ReverseBits`]).
    ReverseBits,
    /// the bytes in reverse order ([`ByteSwap`]).
    ByteSwap,
    /// conjugate ([`Conj`]).
    Conj,
    /// the real part ([`Real`]).
    Real,
    /// the imaginary part ([`Imag`]).
    Imag,
    /// a complex number from its parts ([`FromParts`]).
    FromParts,
    /// a complex number times a real ([`Scale`]).
    Scale,
    /// e^a within 1 ulp ([`Exp`]).
    Exp,
    /// 2^a within 1 ulp (exact at integers) ([`Exp2`]).
    Exp2,
    /// e^a - 1 within 1 ulp ([`Expm1`]).
    Expm1,
    /// natural logarithm within 1 ulp ([`Log`]).
    Log,
    /// base-2 logarithm within 1 ulp (exact at powers of two) ([`Log2`]).
    Log2,
    /// base-10 logarithm within 1 ulp ([`Log10`]).
    Log10,
    /// ln(1 + a) within 1 ulp ([`Log1p`]).
    Log1p,
    /// sine within 1 ulp ([`Sin`]).
    Sin,
    /// cosine within 1 ulp ([`Cos`]).
    Cos,
    /// tangent within 1 ulp ([`Tan`]).
    Tan,
    /// arcsine within 1 ulp ([`Asin`]).
    Asin,
    /// arccosine within 1 ulp ([`Acos`]).
    Acos,
    /// arctangent within 1 ulp ([`Atan`]).
    Atan,
    /// atan2(a, b), the angle of (b, a), within 1 ulp ([`Atan2`]).
    Atan2,
    /// hyperbolic sine within 1 ulp ([`Sinh`]).
    Sinh,
    /// hyperbolic cosine within 1 ulp ([`Cosh`]).
    Cosh,
    /// hyperbolic tangent within 1 ulp ([`Tanh`]).
    Tanh,
    /// inverse hyperbolic sine within 1 ulp ([`Asinh`]).
    Asinh,
    /// inverse hyperbolic cosine within 1 ulp ([`Acosh`]).
    Acosh,
    /// inverse hyperbolic tangent within 1 ulp ([`Atanh`]).
    Atanh,
    /// error function within 1 ulp ([`Erf`]).
    Erf,
    /// complementary error function within 1 ulp ([`Erfc`]).
    Erfc,
    /// a^b within 1 ulp (C99 Annex F special cases) ([`Pow`]).
    Pow,
    /// sqrt(a^2 + b^2) without overflow, within 1 ulp ([`Hypot`]).
    Hypot,
    /// cube root within 1 ulp ([`Cbrt`]).
    Cbrt,
    /// 1 / (1 + e^-a) within 1 ulp ([`Sigmoid`]).
    Sigmoid,
    /// 1 / sqrt(a) within 1 ulp ([`Rsqrt`]).
    Rsqrt,
    /// e^a within 3.5 ulp ([`FastExp`]).
    FastExp,
    /// natural logarithm within 3.5 ulp ([`FastLog`]).
    FastLog,
    /// sine within 3.5 ulp ([`FastSin`]).
    FastSin,
    /// cosine within 3.5 ulp ([`FastCos`]).
    FastCos,
    /// hyperbolic tangent within 3.5 ulp ([`FastTanh`]).
    FastTanh,
    /// 1 / (1 + e^-a) within 3.5 ulp ([`FastSigmoid`]).
    FastSigmoid,
    /// a^b within 3.5 ulp ([`FastPow`]).
    FastPow,
    /// a + b + c, left to right in the carrier, one rounding into the dtype ([`Add3`]).
    Add3,
    /// a × b × c, left to right in the carrier, one rounding into the dtype ([`Mul3`]).
    Mul3,
    /// a + b × s (the product rounded in the carrier, then the sum) ([`Axpy`]).
    Axpy,
    /// lerp(a, b, t): a + (b − a)·t, exactly b at t = 1 ([`Lerp`]).
    Lerp,
    /// a + b as the rounded sum and its exact error ([`TwoSum`]).
    TwoSum,
    /// a + b as a pair for |a| ≥ |b| ([`FastTwoSum`]).
    FastTwoSum,
    /// a × b as the rounded product and its exact error ([`TwoProd`]).
    TwoProd,
    /// The pair (a, b) as given ([`PairFrom`]).
    PairFrom,
    /// A pair's leading part ([`PairHi`]).
    PairHi,
    /// A pair's trailing part ([`PairLo`]).
    PairLo,
}

/// A one-input operation from codec `A`'s carrier to codec `O`'s.
pub trait Op1<A: Codec, O: Codec> {
    /// Compute.
    fn f(a: A::Carrier) -> O::Carrier;
    /// Whether the operation has a second form, [`Op1::f_small`], with the
    /// bits of [`Op1::f`] wherever [`Op1::fits`] holds and no table loads:
    /// the contiguous loop then runs chunks whose arguments all fit with it,
    /// so they vectorise (a function of each value alone, as `f` is).
    const SPLIT: bool = false;
    /// Whether `f_small(a)` has the bits of `f(a)`.
    #[inline(always)]
    fn fits(_a: A::Carrier) -> bool {
        false
    }
    /// `f` for arguments that fit.
    #[inline(always)]
    fn f_small(a: A::Carrier) -> O::Carrier {
        Self::f(a)
    }
    /// Whether `f_mid(a)` has the bits of `f(a)`: a [`Op1::SPLIT`]
    /// operation's third form, between the other two (no table loads, so it
    /// vectorises, but dearer than `f_small`), for the chunks whose
    /// arguments do not all fit `fits` but all fit this.
    #[inline(always)]
    fn fits_mid(_a: A::Carrier) -> bool {
        false
    }
    /// `f` for arguments that fit [`Op1::fits_mid`].
    #[inline(always)]
    fn f_mid(a: A::Carrier) -> O::Carrier {
        Self::f(a)
    }
    /// Whether each result costs tens of operations (the transcendentals),
    /// so that over a run from memory the hardware prefetcher alone falls
    /// behind the loop: the contiguous loop then asks for the source ahead
    /// (`loops::prefetch_ahead`). A hint: no result depends on it.
    /// `tessera-bench math:…` on an Intel Xeon (family 6 model a7h), 16M
    /// f32, two runs each, Gelem/s on avx2 / avx512 without and with the
    /// requests: exp 1.05 / 1.39–1.41 against 1.52–1.72 / 1.67–2.15, log
    /// 0.76 / 1.25–1.28 against 1.26–1.43 / 1.64–2.51, log2 0.72–0.75 /
    /// 1.06–1.09 against 1.15–1.16 / 1.47–1.97, sinh 0.62 / 0.85–0.87
    /// against 1.06–1.07 / 1.43–1.58.
    const PREFETCH_FAR: bool = false;
}

/// A two-input operation.
pub trait Op2<A: Codec, B: Codec, O: Codec> {
    /// Compute.
    fn f(a: A::Carrier, b: B::Carrier) -> O::Carrier;
}

/// A three-input operation.
pub trait Op3<A: Codec, B: Codec, C: Codec, O: Codec> {
    /// Compute.
    fn f(a: A::Carrier, b: B::Carrier, c: C::Carrier) -> O::Carrier;
}

// ---------------------------------------------------------------- the operations

macro_rules! same1 {
    ($name:ident, $bound:ident, |$a:ident| $body:expr, $doc:literal) => {
        same1!($name, $bound, |$a| $body, $doc, false);
    };
    ($name:ident, $bound:ident, |$a:ident| $body:expr, $doc:literal, $far:literal) => {
        #[doc = $doc]
        pub struct $name;
        impl<C: Codec> Op1<C, C> for $name
        where
            C::Carrier: $bound,
        {
            #[inline(always)]
            fn f($a: C::Carrier) -> C::Carrier {
                $body
            }
            const PREFETCH_FAR: bool = $far;
        }
    };
}

macro_rules! same2 {
    ($name:ident, $bound:ident, |$a:ident, $b:ident| $body:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $name;
        impl<C: Codec> Op2<C, C, C> for $name
        where
            C::Carrier: $bound,
        {
            #[inline(always)]
            fn f($a: C::Carrier, $b: C::Carrier) -> C::Carrier {
                $body
            }
        }
    };
}

macro_rules! to_bool2 {
    ($name:ident, $bound:ident, |$a:ident, $b:ident| $body:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $name;
        impl<C: Codec> Op2<C, C, Bool> for $name
        where
            C::Carrier: $bound,
        {
            #[inline(always)]
            fn f($a: C::Carrier, $b: C::Carrier) -> bool {
                $body
            }
        }
    };
}

macro_rules! int2 {
    ($name:ident, |$a:ident, $b:ident, $c:ident| $body:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $name;
        impl<C: IntCodec> Op2<C, C, C> for $name
        where
            C::Carrier: IntBits,
        {
            #[inline(always)]
            fn f($a: C::Carrier, $b: C::Carrier) -> C::Carrier {
                #[allow(non_snake_case)]
                let $c = PhantomCodec::<C>::new();
                $body
            }
        }
    };
}

macro_rules! int1 {
    ($name:ident, |$a:ident, $c:ident| $body:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $name;
        impl<C: IntCodec> Op1<C, C> for $name
        where
            C::Carrier: IntBits,
        {
            #[inline(always)]
            fn f($a: C::Carrier) -> C::Carrier {
                #[allow(non_snake_case)]
                let $c = PhantomCodec::<C>::new();
                $body
            }
        }
    };
}

/// Gives an `int1!`/`int2!` body access to its codec's width and range.
pub struct PhantomCodec<C>(core::marker::PhantomData<C>);

impl<C: IntCodec> PhantomCodec<C> {
    #[inline(always)]
    fn new() -> Self {
        PhantomCodec(core::marker::PhantomData)
    }
    #[inline(always)]
    fn width(&self) -> u32 {
        C::BITS
    }
    #[inline(always)]
    fn mask(&self) -> u64 {
        u64::MAX >> (64 - C::BITS)
    }
    /// Whether the dtype fills its carrier (every native integer; not the
    /// 4- and 1-bit ones, carried in a byte).
    #[inline(always)]
    fn native(&self) -> bool
    where
        C::Carrier: IntBits,
    {
        C::BITS == <C::Carrier as IntBits>::WIDTH
    }
    /// `v` wrapped into the dtype's range (the identity for a native
    /// dtype): the low `width` bits, sign-extended where signed.
    #[inline(always)]
    fn fit(&self, v: C::Carrier) -> C::Carrier
    where
        C::Carrier: IntBits,
    {
        if self.native() {
            v
        } else {
            self.canon(v.bits())
        }
    }
    /// The carrier value of the dtype's bit pattern `b` (its low `width`
    /// bits): sign-extended for a signed dtype, so a narrow dtype's carrier
    /// always holds the value in the dtype's range.
    #[inline(always)]
    fn canon(&self, b: u64) -> C::Carrier
    where
        C::Carrier: IntBits,
    {
        let b = b & self.mask();
        let signed = C::MIN < C::Carrier::from_bits(0);
        if signed && b >> (C::BITS - 1) & 1 == 1 {
            C::Carrier::from_bits(b | !self.mask())
        } else {
            C::Carrier::from_bits(b)
        }
    }
    #[inline(always)]
    fn clamp(&self, v: C::Carrier) -> C::Carrier
    where
        C::Carrier: Ord,
    {
        v.clamp(C::MIN, C::MAX)
    }
}

same2!(Add, Arith, |a, b| a.add(b), "a + b");
same2!(Sub, Arith, |a, b| a.sub(b), "a - b");
same2!(Mul, Arith, |a, b| a.mul(b), "a × b");
same2!(Div, Arith, |a, b| a.div(b), "a ÷ b");
same2!(Rem, RemT, |a, b| a.rem(b), "a rem b, sign of a");
same1!(Neg, Arith, |a| a.neg(), "-a");
same2!(
    Minimum,
    MinMax,
    |a, b| a.minimum(b),
    "IEEE 754-2019 minimum"
);
same2!(
    Maximum,
    MinMax,
    |a, b| a.maximum(b),
    "IEEE 754-2019 maximum"
);
same1!(Sqrt, SqrtT, |a| a.root(), "square root");
same1!(Exp, ExpT, |a| a.expo(), "e^a", true);
same1!(Floor, FloatT, |a| a.floor(), "floor");
same1!(Ceil, FloatT, |a| a.ceil(), "ceil");
same1!(Trunc, FloatT, |a| a.trunc(), "trunc");
same1!(Round, FloatT, |a| a.round(), "round half away from zero");
same1!(Rint, FloatT, |a| a.rint(), "round half to even");
same2!(Copysign, FloatT, |a, b| a.copysign(b), "copysign");
same1!(Sign, Signum, |a| a.sign(), "sign");
same2!(BitAnd, BitOps, |a, b| a.and(b), "a & b");
same2!(BitOr, BitOps, |a, b| a.or(b), "a | b");
same2!(BitXor, BitOps, |a, b| a.xor(b), "a ^ b");
same1!(BitNot, BitOps, |a| a.not(), "!a");
same1!(Conj, ComplexT, |a| a.conj(), "conjugate");
/// IEEE 754 totalOrder of a and b as an i8: −1, 0 or +1.
pub struct TotalOrder;
impl<C: Codec> Op2<C, C, Native<i8>> for TotalOrder
where
    C::Carrier: TotalOrderT,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier) -> i8 {
        a.total_cmp3(b)
    }
}

to_bool2!(Eq, EqT, |a, b| a.eq(b), "a == b");
to_bool2!(Ne, EqT, |a, b| !a.eq(b), "a != b");
to_bool2!(Lt, OrdT, |a, b| a.lt(b), "a < b");
to_bool2!(Le, OrdT, |a, b| a.le(b), "a <= b");
to_bool2!(Gt, OrdT, |a, b| b.lt(a), "a > b");
to_bool2!(Ge, OrdT, |a, b| b.le(a), "a >= b");
to_bool2!(
    LogicalAnd,
    Truthy,
    |a, b| a.truthy() & b.truthy(),
    "a and b"
);
to_bool2!(LogicalOr, Truthy, |a, b| a.truthy() | b.truthy(), "a or b");
to_bool2!(
    LogicalXor,
    Truthy,
    |a, b| a.truthy() ^ b.truthy(),
    "a xor b"
);

int2!(
    Shl,
    |a, b, c| {
        let s = b.bits() & c.mask();
        if s >= c.width() as u64 {
            C::Carrier::from_bits(0)
        } else {
            c.fit(a.shl(s as u32))
        }
    },
    "a << b; 0 for a count at or above the width"
);
int2!(
    Shr,
    |a, b, c| {
        let s = b.bits() & c.mask();
        if s >= c.width() as u64 {
            a.sign_fill()
        } else {
            a.shr(s as u32)
        }
    },
    "a >> b; the sign fill for a count at or above the width"
);
int2!(
    Rotl,
    |a, b, c| {
        let w = c.width() as u64;
        let s = (b.bits() & c.mask()) % w;
        let u = a.bits() & c.mask();
        let r = if s == 0 { u } else { (u << s) | (u >> (w - s)) };
        c.canon(r)
    },
    "rotate left by b mod width"
);
int2!(
    Rotr,
    |a, b, c| {
        let w = c.width() as u64;
        let s = (b.bits() & c.mask()) % w;
        let u = a.bits() & c.mask();
        let r = if s == 0 { u } else { (u >> s) | (u << (w - s)) };
        c.canon(r)
    },
    "rotate right by b mod width"
);
int2!(AddSat, |a, b, c| c.clamp(a.sat_add(b)), "saturating a + b");
int2!(SubSat, |a, b, c| c.clamp(a.sat_sub(b)), "saturating a - b");
// A 4-bit product fits its 8-bit carrier, so the carrier's saturating
// product clamped to the dtype's range is the saturated product.
int2!(MulSat, |a, b, c| c.clamp(a.sat_mul(b)), "saturating a × b");
int1!(
    OnesCount,
    |a, c| if c.native() {
        a.ones()
    } else {
        c.canon((a.bits() & c.mask()).count_ones() as u64)
    },
    "the number of one bits of the value's two's complement over the dtype's width"
);
int1!(
    LeadingZeros,
    |a, c| if c.native() {
        a.lead_zeros()
    } else {
        c.canon(((a.bits() & c.mask()).leading_zeros() - (64 - c.width())) as u64)
    },
    "the leading zero bits over the dtype's width; the width for 0"
);
int1!(
    TrailingZeros,
    |a, c| if c.native() {
        a.trail_zeros()
    } else {
        let u = a.bits() & c.mask();
        c.canon(if u == 0 {
            c.width() as u64
        } else {
            u.trailing_zeros() as u64
        })
    },
    "the trailing zero bits over the dtype's width; the width for 0"
);
int1!(
    ReverseBits,
    |a, c| if c.native() {
        a.rev_bits()
    } else {
        c.canon((a.bits() & c.mask()).reverse_bits() >> (64 - c.width()))
    },
    "the dtype's width of bits in reverse order"
);
int1!(
    ByteSwap,
    |a, c| if c.native() { a.swap_bytes_() } else { a },
    "the bytes in reverse order; a value of one byte or less is its own reversal"
);

/// |a|, into the real type for complex.
pub struct Abs;
impl<C: Codec, O: Codec<Carrier = <C::Carrier as AbsT>::Out>> Op1<C, O> for Abs
where
    C::Carrier: AbsT,
{
    #[inline(always)]
    fn f(a: C::Carrier) -> O::Carrier {
        a.abs()
    }
}

/// A complex number's real part, bits unchanged.
pub struct Real;
impl<C: Codec, O: Codec<Carrier = <C::Carrier as PartsT>::Part>> Op1<C, O> for Real
where
    C::Carrier: PartsT,
{
    #[inline(always)]
    fn f(a: C::Carrier) -> O::Carrier {
        a.re_part()
    }
}

/// A complex number's imaginary part, bits unchanged.
pub struct Imag;
impl<C: Codec, O: Codec<Carrier = <C::Carrier as PartsT>::Part>> Op1<C, O> for Imag
where
    C::Carrier: PartsT,
{
    #[inline(always)]
    fn f(a: C::Carrier) -> O::Carrier {
        a.im_part()
    }
}

/// A complex number from its real and imaginary parts, bits unchanged.
pub struct FromParts;
impl<C: Codec, O: Codec> Op2<C, C, O> for FromParts
where
    O::Carrier: FromPartsT<Part = C::Carrier>,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier) -> O::Carrier {
        O::Carrier::from_parts(a, b)
    }
}

/// A complex number times a real of its component type: each component
/// multiplied by it, rounded once.
pub struct Scale;
impl<C: Codec, R: Codec> Op2<C, R, C> for Scale
where
    C::Carrier: CompositeT<Part = R::Carrier>,
{
    #[inline(always)]
    fn f(a: C::Carrier, s: R::Carrier) -> C::Carrier {
        a.scale(s)
    }
}

/// a == 0
pub struct LogicalNot;
impl<C: Codec> Op1<C, Bool> for LogicalNot
where
    C::Carrier: Truthy,
{
    #[inline(always)]
    fn f(a: C::Carrier) -> bool {
        !a.truthy()
    }
}

/// a × b + c with one rounding.
pub struct Fma;
impl<C: Codec> Op3<C, C, C, C> for Fma
where
    C::Carrier: FloatT,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier, c: C::Carrier) -> C::Carrier {
        a.fma(b, c)
    }
}

/// minimum(maximum(x, lo), hi)
pub struct Clamp;
impl<C: Codec> Op3<C, C, C, C> for Clamp
where
    C::Carrier: MinMax,
{
    #[inline(always)]
    fn f(x: C::Carrier, lo: C::Carrier, hi: C::Carrier) -> C::Carrier {
        x.maximum(lo).minimum(hi)
    }
}

/// cond ? a : b
pub struct Select;
impl<C: Codec> Op3<Bool, C, C, C> for Select {
    #[inline(always)]
    fn f(c: bool, a: C::Carrier, b: C::Carrier) -> C::Carrier {
        if c {
            a
        } else {
            b
        }
    }
}

// ---------------------------------------------------------------- transcendentals

macro_rules! math_ops {
    (unary { $( $op:ident $m:ident $f32:path, $f64:path, $doc:literal; )* }
     binary { $( $op2:ident $m2:ident $g32:path, $g64:path, $doc2:literal; )* }) => {
        /// The transcendental functions of a float carrier (`f32`, `f64`), from
        /// `runtime::math`: the same IEEE operations on every tier.
        pub trait MathT: Copy {
            $( #[doc = $doc] fn $m(self) -> Self; )*
            $( #[doc = $doc2] fn $m2(self, b: Self) -> Self; )*
        }
        impl MathT for f32 {
            $( #[inline(always)] fn $m(self) -> f32 { $f32(self) } )*
            $( #[inline(always)] fn $m2(self, b: f32) -> f32 { $g32(self, b) } )*
        }
        impl MathT for f64 {
            $( #[inline(always)] fn $m(self) -> f64 { $f64(self) } )*
            $( #[inline(always)] fn $m2(self, b: f64) -> f64 { $g64(self, b) } )*
        }
        $( same1!($op, MathT, |a| a.$m(), $doc, true); )*
        $( same2!($op2, MathT, |a, b| a.$m2(b), $doc2); )*
    };
}

use super::math::{atrig, erf, exp, log, pow, root, trig};

math_ops! {
unary {
    Exp2 exp2 exp::exp2_f32, exp::exp2_f64, "2^a within 1 ulp (exact at integers)";
    Expm1 expm1 exp::expm1_f32, exp::expm1_f64, "e^a - 1 within 1 ulp";
    Log log log::log_f32, log::log_f64, "natural logarithm within 1 ulp";
    Log2 log2 log::log2_f32, log::log2_f64, "base-2 logarithm within 1 ulp (exact at powers of two)";
    Log10 log10 log::log10_f32, log::log10_f64, "base-10 logarithm within 1 ulp";
    Log1p log1p log::log1p_f32, log::log1p_f64, "ln(1 + a) within 1 ulp";
    Asin asin atrig::asin_f32, atrig::asin_f64, "arcsine within 1 ulp";
    Acos acos atrig::acos_f32, atrig::acos_f64, "arccosine within 1 ulp";
    Atan atan atrig::atan_f32, atrig::atan_f64, "arctangent within 1 ulp";
    Sinh sinh exp::sinh_f32, exp::sinh_f64, "hyperbolic sine within 1 ulp";
    Cosh cosh exp::cosh_f32, exp::cosh_f64, "hyperbolic cosine within 1 ulp";
    Tanh tanh exp::tanh_f32, exp::tanh_f64, "hyperbolic tangent within 1 ulp";
    Asinh asinh log::asinh_f32, log::asinh_f64, "inverse hyperbolic sine within 1 ulp";
    Acosh acosh log::acosh_f32, log::acosh_f64, "inverse hyperbolic cosine within 1 ulp";
    Atanh atanh log::atanh_f32, log::atanh_f64, "inverse hyperbolic tangent within 1 ulp";
    Erf erf erf::erf_f32, erf::erf_f64, "error function within 1 ulp";
    Erfc erfc erf::erfc_f32, erf::erfc_f64, "complementary error function within 1 ulp";
    Cbrt cbrt root::cbrt_f32, root::cbrt_f64, "cube root within 1 ulp";
    Sigmoid sigmoid exp::sigmoid_f32, exp::sigmoid_f64, "1 / (1 + e^-a) within 1 ulp";
    Rsqrt rsqrt root::rsqrt_f32, root::rsqrt_f64, "1 / sqrt(a) within 1 ulp";
    FastExp fast_exp exp::fast_exp_f32, exp::fast_exp_f64, "e^a within 3.5 ulp";
    FastLog fast_log log::fast_log_f32, log::fast_log_f64, "natural logarithm within 3.5 ulp";
    FastTanh fast_tanh exp::fast_tanh_f32, exp::fast_tanh_f64, "hyperbolic tangent within 3.5 ulp";
    FastSigmoid fast_sigmoid exp::fast_sigmoid_f32, exp::fast_sigmoid_f64, "1 / (1 + e^-a) within 3.5 ulp";
}
binary {
    Atan2 atan2 atrig::atan2_f32, atrig::atan2_f64, "atan2(a, b), the angle of (b, a), within 1 ulp";
    Pow pow pow::pow_f32, pow::pow_f64, "a^b within 1 ulp (C99 Annex F special cases)";
    Hypot hypot root::hypot_f32, root::hypot_f64, "sqrt(a^2 + b^2) without overflow, within 1 ulp";
    FastPow fast_pow pow::fast_pow_f32, pow::fast_pow_f64, "a^b within 3.5 ulp";
}
}

/// The trigonometric functions of a float carrier in two or three forms (see
/// [`Op1::SPLIT`]): the full-range form, and the small one that gives its
/// bits where it fits (the f32 sine's and cosine's f32-lane path up to
/// [`crate::math::trig::LANES_LIMIT_F32`]; the f32 tangent's Cody–Waite
/// reduction below 2^25; for f64, the reduction whose table read is the
/// constants of its first entry). The f32 sine and cosine have a third form
/// without gathered table loads ([`Op1::f_mid`]) for arguments below 2^25 on
/// both sides of the lanes' limit.
pub trait TrigT: Copy {
    /// Whether the small form of tan gives the full form's bits for `self`.
    fn tan_fits(self) -> bool;
    /// Whether the small forms of sin, cos, fast_sin and fast_cos give the
    /// full forms' bits for `self`.
    fn sincos_fit(self) -> bool;
    /// Whether the `*_mid` forms of sin, cos, fast_sin and fast_cos give the
    /// full forms' bits for `self` (false where the carrier has no such form).
    #[inline(always)]
    fn sincos_fit_mid(self) -> bool {
        false
    }
    /// sine without gathered table loads (the full form where the carrier has
    /// no such form).
    #[inline(always)]
    fn sin_mid(self) -> Self {
        self.sin_on::<false>()
    }
    /// cosine without gathered table loads.
    #[inline(always)]
    fn cos_mid(self) -> Self {
        self.cos_on::<false>()
    }
    /// sine within 3.5 ulp without gathered table loads.
    #[inline(always)]
    fn fast_sin_mid(self) -> Self {
        self.fast_sin_on::<false>()
    }
    /// cosine within 3.5 ulp without gathered table loads.
    #[inline(always)]
    fn fast_cos_mid(self) -> Self {
        self.fast_cos_on::<false>()
    }
    /// sine; `SMALL` selects the form.
    fn sin_on<const SMALL: bool>(self) -> Self;
    /// cosine.
    fn cos_on<const SMALL: bool>(self) -> Self;
    /// tangent.
    fn tan_on<const SMALL: bool>(self) -> Self;
    /// sine within 3.5 ulp.
    fn fast_sin_on<const SMALL: bool>(self) -> Self;
    /// cosine within 3.5 ulp.
    fn fast_cos_on<const SMALL: bool>(self) -> Self;
}

macro_rules! trig_t {
    ($t:ty, $fits:ident, $sincos:ident, $sin:ident, $cos:ident, $tan:ident, $fsin:ident, $fcos:ident
     $(, mid: $midfit:ident, $msin:ident, $mcos:ident, $mfsin:ident, $mfcos:ident)?) => {
        impl TrigT for $t {
            #[inline(always)]
            fn tan_fits(self) -> bool {
                trig::$fits(self)
            }
            #[inline(always)]
            fn sincos_fit(self) -> bool {
                trig::$sincos(self)
            }
            $(
                #[inline(always)]
                fn sincos_fit_mid(self) -> bool {
                    trig::$midfit(self)
                }
                #[inline(always)]
                fn sin_mid(self) -> $t {
                    trig::$msin(self)
                }
                #[inline(always)]
                fn cos_mid(self) -> $t {
                    trig::$mcos(self)
                }
                #[inline(always)]
                fn fast_sin_mid(self) -> $t {
                    trig::$mfsin(self)
                }
                #[inline(always)]
                fn fast_cos_mid(self) -> $t {
                    trig::$mfcos(self)
                }
            )?
            #[inline(always)]
            fn sin_on<const SMALL: bool>(self) -> $t {
                trig::$sin::<SMALL>(self)
            }
            #[inline(always)]
            fn cos_on<const SMALL: bool>(self) -> $t {
                trig::$cos::<SMALL>(self)
            }
            #[inline(always)]
            fn tan_on<const SMALL: bool>(self) -> $t {
                trig::$tan::<SMALL>(self)
            }
            #[inline(always)]
            fn fast_sin_on<const SMALL: bool>(self) -> $t {
                trig::$fsin::<SMALL>(self)
            }
            #[inline(always)]
            fn fast_cos_on<const SMALL: bool>(self) -> $t {
                trig::$fcos::<SMALL>(self)
            }
        }
    };
}

trig_t!(
    f32,
    fits_small_f32,
    fits_lanes_f32,
    sin_f32_on,
    cos_f32_on,
    tan_f32_on,
    fast_sin_f32_on,
    fast_cos_f32_on,
    mid: fits_small_f32,
    sin_f32_mid,
    cos_f32_mid,
    fast_sin_f32_mid,
    fast_cos_f32_mid
);
// The f64 fast forms are the default ones (no faster one was found).
trig_t!(
    f64,
    fits_small_f64,
    fits_small_f64,
    sin_f64_on,
    cos_f64_on,
    tan_f64_on,
    sin_f64_on,
    cos_f64_on
);

macro_rules! split_trig {
    ($( $name:ident $m:ident $fit:ident $( mid $mm:ident $mfit:ident )? $doc:literal; )*) => {$(
        #[doc = $doc]
        pub struct $name;
        impl<C: Codec> Op1<C, C> for $name
        where
            C::Carrier: TrigT,
        {
            #[inline(always)]
            fn f(a: C::Carrier) -> C::Carrier {
                a.$m::<false>()
            }
            const SPLIT: bool = true;
            const PREFETCH_FAR: bool = true;
            #[inline(always)]
            fn fits(a: C::Carrier) -> bool {
                a.$fit()
            }
            #[inline(always)]
            fn f_small(a: C::Carrier) -> C::Carrier {
                a.$m::<true>()
            }
            $(
                #[inline(always)]
                fn fits_mid(a: C::Carrier) -> bool {
                    a.$mfit()
                }
                #[inline(always)]
                fn f_mid(a: C::Carrier) -> C::Carrier {
                    a.$mm()
                }
            )?
        }
    )*};
}

split_trig! {
    Sin sin_on sincos_fit mid sin_mid sincos_fit_mid "sine within 1 ulp";
    Cos cos_on sincos_fit mid cos_mid sincos_fit_mid "cosine within 1 ulp";
    Tan tan_on tan_fits "tangent within 1 ulp";
    FastSin fast_sin_on sincos_fit mid fast_sin_mid sincos_fit_mid "sine within 3.5 ulp";
    FastCos fast_cos_on sincos_fit mid fast_cos_mid sincos_fit_mid "cosine within 3.5 ulp";
}

// ---------------------------------------------------------------- fused kinds

/// a + b + c, left to right in the carrier, one rounding into the dtype.
pub struct Add3;
impl<C: Codec> Op3<C, C, C, C> for Add3
where
    C::Carrier: Arith,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier, c: C::Carrier) -> C::Carrier {
        a.add(b).add(c)
    }
}

/// a × b × c, left to right in the carrier, one rounding into the dtype.
pub struct Mul3;
impl<C: Codec> Op3<C, C, C, C> for Mul3
where
    C::Carrier: Arith,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier, c: C::Carrier) -> C::Carrier {
        a.mul(b).mul(c)
    }
}

/// a + b × s (the product rounded in the carrier, then the sum).
pub struct Axpy;
impl<C: Codec> Op3<C, C, C, C> for Axpy
where
    C::Carrier: Arith,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier, s: C::Carrier) -> C::Carrier {
        a.add(b.mul(s))
    }
}

/// Linear interpolation that lands on b at t = 1.
pub trait LerpT: Copy {
    /// t == 1 ? b : a + (b − a) × t, each operation rounded in the carrier.
    fn lerp(self, b: Self, t: Self) -> Self;
}

impl LerpT for f32 {
    #[inline(always)]
    fn lerp(self, b: f32, t: f32) -> f32 {
        if t == 1.0 {
            b
        } else {
            self + (b - self) * t
        }
    }
}

impl LerpT for f64 {
    #[inline(always)]
    fn lerp(self, b: f64, t: f64) -> f64 {
        if t == 1.0 {
            b
        } else {
            self + (b - self) * t
        }
    }
}

/// lerp(a, b, t): a + (b − a)·t, exactly b at t = 1.
pub struct Lerp;
impl<C: Codec> Op3<C, C, C, C> for Lerp
where
    C::Carrier: LerpT,
{
    #[inline(always)]
    fn f(a: C::Carrier, b: C::Carrier, t: C::Carrier) -> C::Carrier {
        a.lerp(b, t)
    }
}

// ---------------------------------------------------------------- pairs

macro_rules! to_pair2 {
    ($name:ident, |$a:ident, $b:ident| $body:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $name;
        impl<T: PairFloat> Op2<Native<T>, Native<T>, Native<Pair<T>>> for $name {
            #[inline(always)]
            fn f($a: T, $b: T) -> Pair<T> {
                $body
            }
        }
    };
}

to_pair2!(
    TwoSum,
    |a, b| crate::pair::two_sum(a, b),
    "a + b as the rounded sum and its exact error (Knuth's TwoSum)"
);
to_pair2!(
    FastTwoSum,
    |a, b| crate::pair::fast_two_sum(a, b),
    "a + b as a pair, exact for |a| ≥ |b| (Dekker's FastTwoSum)"
);
to_pair2!(
    TwoProd,
    |a, b| crate::pair::two_prod(a, b),
    "a × b as the rounded product and its exact error (one fused multiply-add)"
);
to_pair2!(
    PairFrom,
    |a, b| Pair::new(a, b),
    "the pair (a, b), stored as given"
);

/// A pair's leading part.
pub struct PairHi;
impl<T: PairFloat> Op1<Native<Pair<T>>, Native<T>> for PairHi {
    #[inline(always)]
    fn f(a: Pair<T>) -> T {
        a.hi
    }
}

/// A pair's trailing part.
pub struct PairLo;
impl<T: PairFloat> Op1<Native<Pair<T>>, Native<T>> for PairLo {
    #[inline(always)]
    fn f(a: Pair<T>) -> T {
        a.lo
    }
}
