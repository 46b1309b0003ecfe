//! The association a contraction uses, chosen from its rows, columns and depth
//! alone (ARCHITECTURE.md §5.5).

/// How each output's products are associated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// One chain per output: its products added in increasing k by fused
    /// multiply-adds, starting from init (cast into the accumulator) or +0.
    Chain,
    /// Lane order (ARCHITECTURE.md §5.3) over the products, numbered by k: blocks of
    /// 1024, lane `k mod 16` within a block, a fixed fold of the lanes and a
    /// binary tree of the blocks; init is added to the total last.
    Lane,
}

/// The order of a contraction of `rows` rows (a's free extents multiplied),
/// `cols` columns (b's) and depth `depth` (the contracted extents multiplied):
/// chain order where `rows > 4`, `cols > 4`, `rows·cols ≥ 64` and
/// `depth < 128·rows·cols`; lane order otherwise.
pub fn choose(rows: usize, cols: usize, depth: usize) -> Order {
    let outputs = rows as u128 * cols as u128;
    if rows > 4 && cols > 4 && outputs >= 64 && (depth as u128) < 128 * outputs {
        Order::Chain
    } else {
        Order::Lane
    }
}
