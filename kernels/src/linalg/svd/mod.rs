//! The singular value decomposition of one matrix (in progress).
