//! The kernels of tessera's `avx512` tier (`spec/tiers.toml`): one function per
//! kernel and per cast of the generated registry, each an instance of a loop
//! shell of `tessera-runtime` compiled with the tier's target features, and
//! the tier's dispatch tables `KERNELS` and `CASTS`. The functions are
//! written once for every tier by `tessera_generated::tier!`; each tier is a
//! crate of its own so that the tiers compile in parallel.

#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

tessera_generated::tier!(avx512);
