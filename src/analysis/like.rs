//! SQL `LIKE` as nsys's rules use it, for matching API names against the
//! rules' patterns (the rules and the API classes both match names this way).

/// SQL `LIKE` for the patterns the rules use: ASCII case-insensitive prefix,
/// then `%`-separated parts in order (`cudaMemcpy%Async%`).
pub fn like(text: &str, pattern: &str) -> bool {
    let text = text.to_ascii_lowercase();
    let pattern = pattern.to_ascii_lowercase();
    let mut parts = pattern.split('%');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            // The last part must end the text (empty after a trailing `%`).
            return rest.ends_with(part) || part.is_empty();
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_as_sqlite() {
        assert!(like("cudaMemcpyAsync_v3020", "cudaMemcpy%Async%"));
        assert!(like("cudaMemcpy2DAsync_v3020", "cudaMemcpy%Async%"));
        assert!(!like("cudaMemcpy_v3020", "cudaMemcpy%Async%"));
        assert!(like("CUDAMEMCPY_v3020", "cudaMemcpy%"));
        assert!(like(
            "cudaStreamSynchronize_v3020",
            "cudaStreamSynchronize%"
        ));
        assert!(!like("cuStreamSynchronize", "cudaStreamSynchronize%"));
        assert!(like("x_async_y", "%async%"));
        assert!(like("abc", "abc"));
        assert!(!like("abcd", "abc"));
    }
}
