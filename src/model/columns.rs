//! Compact event columns: bytes are spent where events differ.
//!
//! Most per-event attributes are either the same for nearly every event (an API
//! call's return code is 0, a kernel launched outside a graph has no graph
//! node) or close together (a context's grid ids count up from a base). Plain
//! vectors would pay 4 or 8 bytes an event for them; these columns pay for the
//! exceptions only, and fall back to a plain vector where exceptions are the
//! rule, so no report costs more than before. Both only grow: `push` appends,
//! and an index, once given, keeps its value. Their values sit in shared
//! [`Column`]s, so a growing trace's snapshots share them.

use super::column::Column;

/// A column whose usual value is `T::default()`, storing only the others.
#[derive(Debug, Clone)]
pub enum SparseColumn<T: Copy> {
    /// Every value, where too many differ from the default.
    Dense(Column<T>),
    /// The length, and `(index, value)` of the values that are not the
    /// default, in index order.
    Sparse {
        len: usize,
        others: Column<(u32, T)>,
    },
}

impl<T: Copy> Default for SparseColumn<T> {
    fn default() -> Self {
        SparseColumn::Sparse {
            len: 0,
            others: Column::new(),
        }
    }
}

impl<T: Copy + Default + PartialEq> SparseColumn<T> {
    pub fn from_vec(values: Vec<T>) -> Self {
        let others = values.iter().filter(|&&v| v != T::default()).count();
        if !sparse_is_smaller::<T>(others, values.len()) {
            return SparseColumn::Dense(values.into());
        }
        // Built at once, not pushed value by value: a push weighs dense
        // against sparse each time, and the whole column is known here.
        let mut kept = Vec::with_capacity(others);
        kept.extend(
            values
                .iter()
                .enumerate()
                .filter(|&(_, &v)| v != T::default())
                .map(|(i, &v)| (i as u32, v)),
        );
        SparseColumn::Sparse {
            len: values.len(),
            others: kept.into(),
        }
    }

    pub fn push(&mut self, value: T) {
        let SparseColumn::Sparse { len, others } = self else {
            if let SparseColumn::Dense(values) = self {
                values.push(value);
            }
            return;
        };
        if value != T::default() {
            others.push((*len as u32, value));
        }
        *len += 1;
        // A young column stays sparse: its first few values say little.
        if *len < MIN_DENSE || sparse_is_smaller::<T>(others.len(), *len) {
            return;
        }
        let dense = self.iter().collect();
        *self = SparseColumn::Dense(dense);
    }

    pub fn len(&self) -> usize {
        match self {
            SparseColumn::Dense(values) => values.len(),
            SparseColumn::Sparse { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `i`, None past the end.
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            SparseColumn::Dense(values) => values.get(i).copied(),
            SparseColumn::Sparse { len, others } => {
                (i < *len).then(
                    || match others.binary_search_by_key(&(i as u32), |&(j, _)| j) {
                        Ok(at) => others[at].1,
                        Err(_) => T::default(),
                    },
                )
            }
        }
    }

    /// The value at `i` (panics past the end, as indexing does).
    pub fn at(&self, i: usize) -> T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("index {i} past a column of {}", self.len()),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let (dense, len, others) = match self {
            SparseColumn::Dense(values) => (Some(values), values.len(), &[][..]),
            SparseColumn::Sparse { len, others } => (None, *len, &others[..]),
        };
        // The sparse form walks its exceptions alongside, not a search each.
        let mut next = others.iter().peekable();
        (0..len).map(move |i| match dense {
            Some(values) => values[i],
            None => match next.next_if(|&&(j, _)| j as usize == i) {
                Some(&(_, v)) => v,
                None => T::default(),
            },
        })
    }

    /// How many values differ from the default.
    pub fn others(&self) -> usize {
        match self {
            SparseColumn::Dense(values) => values.iter().filter(|&&v| v != T::default()).count(),
            SparseColumn::Sparse { others, .. } => others.len(),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        match self {
            SparseColumn::Dense(values) => values.capacity() * std::mem::size_of::<T>(),
            SparseColumn::Sparse { others, .. } => {
                others.capacity() * std::mem::size_of::<(u32, T)>()
            }
        }
    }
}

/// The length below which a growing sparse column never turns dense.
const MIN_DENSE: usize = 4096;

/// Whether `others` exceptions out of `len` cost less than a plain vector.
fn sparse_is_smaller<T>(others: usize, len: usize) -> bool {
    others * std::mem::size_of::<(u32, T)>() <= len * std::mem::size_of::<T>() / 2
}

/// A column of 64-bit ids that usually lie within 4 G of each other: 4 bytes
/// an event from a base, or 8 where they spread wider.
#[derive(Debug, Clone)]
pub enum IdColumn {
    Narrow { base: u64, offsets: Column<u32> },
    Wide(Column<u64>),
}

impl Default for IdColumn {
    fn default() -> Self {
        IdColumn::Narrow {
            base: 0,
            offsets: Column::new(),
        }
    }
}

impl IdColumn {
    pub fn from_vec(values: Vec<u64>) -> Self {
        let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else {
            return IdColumn::default();
        };
        if hi - lo <= u32::MAX as u64 {
            IdColumn::Narrow {
                base: lo,
                offsets: values.iter().map(|&v| (v - lo) as u32).collect(),
            }
        } else {
            IdColumn::Wide(values.into())
        }
    }

    pub fn push(&mut self, value: u64) {
        let IdColumn::Narrow { base, offsets } = self else {
            if let IdColumn::Wide(values) = self {
                values.push(value);
            }
            return;
        };
        if offsets.is_empty() {
            *base = value;
        }
        if let Some(Ok(offset)) = value.checked_sub(*base).map(u32::try_from) {
            offsets.push(offset);
            return;
        }
        let mut wide: Column<u64> = self.iter().collect();
        wide.push(value);
        *self = IdColumn::Wide(wide);
    }

    pub fn len(&self) -> usize {
        match self {
            IdColumn::Wide(values) => values.len(),
            IdColumn::Narrow { offsets, .. } => offsets.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            IdColumn::Wide(values) => values.get(i).copied(),
            IdColumn::Narrow { base, offsets } => offsets.get(i).map(|&o| base + o as u64),
        }
    }

    /// The value at `i` (panics past the end, as indexing does).
    pub fn at(&self, i: usize) -> u64 {
        match self.get(i) {
            Some(v) => v,
            None => panic!("index {i} past a column of {}", self.len()),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    pub fn heap_bytes(&self) -> usize {
        match self {
            IdColumn::Wide(values) => values.capacity() * 8,
            IdColumn::Narrow { offsets, .. } => offsets.capacity() * 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_column_reads_back_what_was_pushed_in_either_form() {
        // Mostly zeros: stays sparse. Then mostly values: turns dense.
        let mut values: Vec<i32> = (0..1000)
            .map(|i| if i % 97 == 0 { -i } else { 0 })
            .collect();
        let mut column = SparseColumn::from_vec(values.clone());
        assert!(matches!(column, SparseColumn::Sparse { .. }));
        assert!(column.heap_bytes() < values.len());
        for i in 0..5000 {
            column.push(i + 1);
            values.push(i + 1);
        }
        assert!(matches!(column, SparseColumn::Dense(_)));
        assert_eq!(column.iter().collect::<Vec<_>>(), values);
        assert_eq!(column.get(values.len()), None);
        let dense = SparseColumn::from_vec(vec![1u8, 2, 3]);
        assert!(matches!(dense, SparseColumn::Dense(_)));
        assert_eq!(dense.at(2), 3);
    }

    #[test]
    fn an_id_column_widens_when_an_id_falls_outside_its_base() {
        let ids = vec![1u64 << 40, (1 << 40) + 7, (1 << 40) + 3];
        let mut column = IdColumn::from_vec(ids.clone());
        assert!(matches!(column, IdColumn::Narrow { .. }));
        column.push(5);
        assert!(matches!(column, IdColumn::Wide(_)));
        assert_eq!(column.iter().collect::<Vec<_>>(), [ids, vec![5]].concat());
        let mut grown = IdColumn::default();
        for id in [10u64, 12, 11] {
            grown.push(id);
        }
        assert!(matches!(grown, IdColumn::Narrow { base: 10, .. }));
        grown.push(9);
        assert_eq!(grown.iter().collect::<Vec<_>>(), [10, 12, 11, 9]);
    }
}
