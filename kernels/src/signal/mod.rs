//! Discrete convolution and correlation along the last axis
//! (`convolve.rs`): each output is one dot product of a window of the signal
//! with the kernel, computed by the contraction engine in its order, so the
//! bits follow from the values alone whatever the layouts, the batch or the
//! thread count.

mod convolve;

pub use convolve::{convolve, convolve_shape, correlate, ConvMode};

/// The signature [`convolve`] and [`correlate`] share, for the conveniences
/// that take either.
pub(crate) type SignalFn = fn(
    &crate::ArrayView<'_>,
    &crate::ArrayView<'_>,
    ConvMode,
    crate::DType,
    &mut crate::ArrayViewMut<'_>,
    &crate::Exec,
) -> crate::Result<()>;
