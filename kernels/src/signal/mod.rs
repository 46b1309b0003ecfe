//! Discrete convolution and correlation along the last axis
//! (`convolve.rs`): each output is one dot product of a window of the signal
//! with the kernel, computed by the contraction engine in its order, so the
//! bits follow from the values alone whatever the layouts, the batch or the
//! thread count.

mod convolve;

pub use convolve::{convolve, convolve_shape, correlate, ConvMode};
