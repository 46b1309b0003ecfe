//! Elements moved between views and C-ordered bytes with their bits
//! unchanged (a cast canonicalises bools and NaNs; a sort's values and a
//! transform's points must arrive as they were computed).

use tessera::{ArrayView, ArrayViewMut, CastMode, Exec};

/// Byte offsets of every element of a layout, in C order.
fn offsets(shape: &[usize], strides: &[isize], offset: usize, item: usize) -> Vec<usize> {
    let count: usize = shape.iter().product();
    let mut out = Vec::with_capacity(count);
    if count == 0 {
        return out;
    }
    let mut idx = vec![0usize; shape.len()];
    let mut pos = offset as isize;
    loop {
        out.push(pos as usize * item);
        let mut ax = shape.len();
        loop {
            if ax == 0 {
                return out;
            }
            ax -= 1;
            idx[ax] += 1;
            pos += strides[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            pos -= strides[ax] * shape[ax] as isize;
            idx[ax] = 0;
        }
    }
}

/// The elements of `x` in C order, bits unchanged.
pub(crate) fn load(x: &ArrayView<'_>) -> tessera::Result<Vec<u8>> {
    let info = x.dtype().info();
    let count: usize = x.shape().iter().product();
    if info.values_per_byte != 1 {
        // Packed codes: the cast between equal dtypes moves codes.
        let mut out = vec![0u8; count.div_ceil(info.values_per_byte as usize)];
        let mut d = ArrayViewMut::contiguous(x.dtype(), x.shape(), &mut out)?;
        tessera::cast(CastMode::Default, x, &mut d, &Exec::default().threads(1))?;
        return Ok(out);
    }
    let item = info.item_bytes;
    let data = x.data();
    let mut out = Vec::with_capacity(count * item);
    for at in offsets(x.shape(), x.strides(), x.layout().offset, item) {
        out.extend_from_slice(&data[at..at + item]);
    }
    Ok(out)
}

/// `bytes` (`dst`'s elements in C order) into `dst`, bits unchanged.
pub(crate) fn store(dst: &mut ArrayViewMut<'_>, bytes: &[u8]) -> tessera::Result<()> {
    let info = dst.dtype().info();
    if info.values_per_byte != 1 {
        let v = ArrayView::contiguous(dst.dtype(), dst.shape(), bytes)?;
        return tessera::cast(CastMode::Default, &v, dst, &Exec::default().threads(1));
    }
    let item = info.item_bytes;
    let count: usize = dst.shape().iter().product();
    if bytes.len() != count * item {
        return Err(tessera::Error::Length {
            operand: "the result".into(),
            len: bytes.len(),
            expected: count * item,
            unit: "bytes",
        });
    }
    let offs = offsets(dst.shape(), dst.strides(), dst.layout().offset, item);
    let data = dst.data_mut();
    for (at, v) in offs.into_iter().zip(bytes.chunks_exact(item)) {
        data[at..at + item].copy_from_slice(v);
    }
    Ok(())
}
