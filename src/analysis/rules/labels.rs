//! The text the rules' tables share: their column headers and the memory-kind
//! labels of copies and sets. A leaf, used by the rule files.

use crate::model::nsys;

/// `ENUM_CUDA_MEM_KIND` labels (identical in every nsys export schema that has
/// the table); the model stores the id, 255 for NULL.
pub(crate) fn mem_kind_label(kind: u8) -> Option<&'static str> {
    // The model's labels, but an id outside the enum (NULL) has none here:
    // nsys's rules print an empty cell for it.
    (kind <= 7).then(|| nsys::mem_kind_label(kind))
}

/// Column headers as a table holds them.
pub(super) fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}
