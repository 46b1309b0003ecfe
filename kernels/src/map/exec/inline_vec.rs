//! A short list of plain values kept inline up to a fixed length and on the
//! heap beyond it: the per-axis and per-operand tables a call binds (strides,
//! merged extents, flags), which a call of the usual rank and operand count
//! then makes without an allocation.

/// A list of `Copy` values, inline while it holds at most `N`.
#[derive(Clone)]
pub(crate) enum InlineVec<T: Copy + Default, const N: usize> {
    /// The first `len` entries of the array.
    Inline { items: [T; N], len: usize },
    /// More than `N` entries.
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    /// An empty list.
    pub(crate) fn new() -> Self {
        InlineVec::Inline {
            items: [T::default(); N],
            len: 0,
        }
    }

    /// `len` copies of `value`.
    pub(crate) fn filled(value: T, len: usize) -> Self {
        if len <= N {
            InlineVec::Inline {
                items: [value; N],
                len,
            }
        } else {
            InlineVec::Heap(vec![value; len])
        }
    }

    /// Append `value` (moving the list to the heap past `N` entries).
    pub(crate) fn push(&mut self, value: T) {
        match self {
            InlineVec::Inline { items, len } if *len < N => {
                items[*len] = value;
                *len += 1;
            }
            InlineVec::Inline { items, len } => {
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend_from_slice(&items[..*len]);
                v.push(value);
                *self = InlineVec::Heap(v);
            }
            InlineVec::Heap(v) => v.push(value),
        }
    }
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    /// Keep the first `len` entries (all of them where there are fewer).
    pub(crate) fn truncate(&mut self, keep: usize) {
        match self {
            InlineVec::Inline { len, .. } => *len = (*len).min(keep),
            InlineVec::Heap(v) => v.truncate(keep),
        }
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> core::ops::Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            InlineVec::Inline { items, len } => &items[..*len],
            InlineVec::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default, const N: usize> core::ops::DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            InlineVec::Inline { items, len } => &mut items[..*len],
            InlineVec::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = InlineVec::new();
        for x in iter {
            v.push(x);
        }
        v
    }
}

impl<T: Copy + Default + core::fmt::Debug, const N: usize> core::fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::InlineVec;

    #[test]
    fn holds_what_a_vec_holds_inline_and_past_its_length() {
        for count in 0..20usize {
            let mut v: InlineVec<usize, 4> = InlineVec::new();
            let mut w = Vec::new();
            for i in 0..count {
                v.push(i * 3 + 1);
                w.push(i * 3 + 1);
                assert_eq!(&v[..], &w[..]);
            }
            assert_eq!(matches!(v, InlineVec::Heap(_)), count > 4);
            v[..].reverse();
            w.reverse();
            assert_eq!(&v[..], &w[..]);
            let c: InlineVec<usize, 4> = w.iter().copied().collect();
            assert_eq!(&c[..], &w[..]);
            let mut f: InlineVec<isize, 4> = InlineVec::filled(-2, count);
            assert_eq!(&f[..], &vec![-2isize; count][..]);
            f.truncate(count / 2);
            assert_eq!(&f[..], &vec![-2isize; count / 2][..]);
        }
    }
}
