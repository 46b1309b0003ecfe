//! A sum and a scan of a block-distributed array over MPI, the same bits at
//! any process count: `mpiexec -n 3 target/release/examples/distributed_sum`.

use mpi::traits::*;
use tessera::{ArrayView, ArrayViewMut, Exec, ReduceOp, ScanOp};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = mpi::initialize().ok_or("MPI did not initialise")?;
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    // This rank's rows of a 10^6-element array: any split, empty allowed.
    let n = 1_000_000;
    let (lo, hi) = (n * rank / size, n * (rank + 1) / size);
    let x: Vec<f32> = (lo..hi).map(|i| 1.0 / (1.0 + i as f32)).collect();
    let xv = ArrayView::from_slice(&x, &[x.len()])?;
    let exec = Exec::default();

    // The sum on every rank, in the single-process lane order.
    let mut total = [0f32];
    tessera_mpi::reduce(
        &world,
        ReduceOp::Sum,
        &[0],
        &xv,
        &mut ArrayViewMut::from_slice(&mut total, &[])?,
        &exec,
    )?;
    // The running sum of this rank's rows, as one process computes it.
    let mut running = vec![0f32; x.len()];
    let rows = running.len();
    tessera_mpi::scan(
        &world,
        ScanOp::Sum,
        0,
        &xv,
        None,
        &mut ArrayViewMut::from_slice(&mut running, &[rows])?,
        &exec,
    )?;
    if rank == 0 {
        println!(
            "{size} ranks: sum = {} (bits {:#010x})",
            total[0],
            total[0].to_bits()
        );
    }
    Ok(())
}
