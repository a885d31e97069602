//! Interned strings: every name in the trace is a `StrId`, four bytes per event.

use std::collections::HashMap;

/// An index into [`Strings`]. Equal strings always get equal ids, so grouping by
/// name is grouping by id.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

/// The string table of one trace.
#[derive(Debug, Default, Clone)]
pub struct Strings {
    values: Vec<Box<str>>,
    lookup: HashMap<Box<str>, StrId>,
}

impl Strings {
    pub fn new() -> Self {
        let mut strings = Self::default();
        strings.intern(""); // StrId(0) is the empty string: the "no name" value.
        strings
    }

    /// Returns the id of `value`, adding it when it is new.
    pub fn intern(&mut self, value: &str) -> StrId {
        if let Some(&id) = self.lookup.get(value) {
            return id;
        }
        let id = StrId(self.values.len() as u32);
        let boxed: Box<str> = value.into();
        self.values.push(boxed.clone());
        self.lookup.insert(boxed, id);
        id
    }

    /// The id of `value` if the trace has it.
    pub fn find(&self, value: &str) -> Option<StrId> {
        self.lookup.get(value).copied()
    }

    pub fn get(&self, id: StrId) -> &str {
        self.values.get(id.0 as usize).map_or("", |s| s)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.values
            .iter()
            .enumerate()
            .map(|(i, s)| (StrId(i as u32), &**s))
    }

    /// Bytes held by the table (strings, lookup map), for the memory benchmark.
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self.values.iter().map(|s| s.len()).sum();
        // Each string is stored twice (vector and map key) plus the map's slots.
        2 * text + self.values.capacity() * 16 + self.lookup.capacity() * 28
    }
}
