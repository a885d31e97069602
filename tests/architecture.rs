//! The shape of the code, enforced: no file-level import circle anywhere in `src/`, and no
//! import that runs against the layering (docs/architecture.md):
//!
//! ```text
//! files, memory, threads     foundations: no crate imports, nor each other
//!   ← job                    the one background-job type
//!   ← model                  the trace model
//!   ← synth                  the nsys schema, written (reports made, captures saved)
//!   ← loader, annotations,   sources: an nsys report read; the notes beside it; the engine
//!     engine_process         (sightline-engine) run as a child process
//!   ← capture                a live source (writes with synth, reads snapshots with loader)
//!   ← analysis               summaries, reports, findings
//!   ← lessons
//!   ← app                    the window
//!   ← cli                    the command line (opens the window too)
//! ```
//!
//! A module imports only from lower lines; two on one line do not import each other.
//!
//! Inside `app/` the same rule holds one level down: `shell` (the window) → `document` →
//! `panels` → `timeline` (the widget, which a panel such as compare may embed) → `state` (the
//! selection, events and commands every view speaks) → `widgets` → `job`.
//!
//! The check reads the sources, not the compiler: every `use` tree and every `crate::`,
//! `super::` and `self::` path, with comments, strings and `#[cfg(test)]` modules left out. A
//! path is followed to the file that *defines* what it names: `use super::Thing` where the
//! parent's `mod.rs` only re-exports `Thing` from a sibling is an edge to that sibling, not to
//! the parent. A parent's `pub use` of its own children is its facade, not a dependency.
//!
//! Each check is also run on a planted violation (the tests at the end), so a check that
//! stopped seeing anything fails too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the crate root (`["analysis", "stats"]`); the root is empty.
type ModPath = Vec<String>;

/// One source file as the check sees it.
#[derive(Default)]
struct SourceFile {
    /// Whether the file is a `mod.rs` or `lib.rs`: its `self` is its own module.
    is_dir_module: bool,
    /// Child modules it declares (`mod x;`).
    children: BTreeSet<String>,
    /// Names of the items it defines.
    defines: BTreeSet<String>,
    /// `pub use` re-exports: the name seen from outside → the absolute path it stands for.
    reexports: BTreeMap<String, ModPath>,
    /// Every path it names, absolute, with whether it came from a `pub use`.
    paths: Vec<(ModPath, bool)>,
}

/// The crate's source files by module path.
struct Crate {
    files: BTreeMap<ModPath, SourceFile>,
}

impl Crate {
    /// Reads every `.rs` file under `root` (the binary's `main.rs` aside: it is a crate of its own).
    fn read(root: &Path) -> Crate {
        let mut sources = BTreeMap::new();
        for path in rust_files(root) {
            let rel = path.strip_prefix(root).expect("under the root");
            if rel == Path::new("main.rs") || rel.starts_with("bin") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            sources.insert(module_path(rel), (is_dir_module(rel), text));
        }
        Crate::from_sources(sources)
    }

    /// The crate made of these sources (module path → (is a `mod.rs`, text)).
    fn from_sources(sources: BTreeMap<ModPath, (bool, String)>) -> Crate {
        let mut files = BTreeMap::new();
        for (module, (is_dir_module, text)) in sources {
            files.insert(module.clone(), parse(&module, is_dir_module, &text));
        }
        Crate { files }
    }

    /// The file that defines what `path` names: the deepest module file on the path, and from
    /// there through re-exports to the file the item is defined in.
    fn target(&self, path: &[String], hops: usize) -> Option<ModPath> {
        let mut module: ModPath = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let mut next = module.clone();
            next.push(segment.clone());
            if self.files.contains_key(&next) {
                module = next;
                continue;
            }
            let file = self.files.get(&module)?;
            if let Some(full) = file.reexports.get(segment)
                && hops < 8
                && !file.defines.contains(segment)
            {
                let mut rest = full.clone();
                rest.extend(path[i + 1..].iter().cloned());
                return self.target(&rest, hops + 1).or(Some(module));
            }
            return Some(module);
        }
        Some(module)
    }

    /// File-level imports: file → the files it uses.
    fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (module, file) in &self.files {
            let out = edges.entry(module.clone()).or_default();
            for (path, is_pub_use) in &file.paths {
                let Some(target) = self.target(path, 0) else {
                    continue;
                };
                let facade = *is_pub_use && target.starts_with(module);
                if target != *module && !facade {
                    out.insert(target);
                }
            }
        }
        edges
    }
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("a readable folder")
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

fn is_dir_module(rel: &Path) -> bool {
    matches!(
        rel.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "lib.rs")
    )
}

fn module_path(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if is_dir_module(rel) {
        parts.pop();
    }
    parts
}

/// The code of a file with comments, string and character literals blanked out.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            // Block comments nest in Rust.
            let mut depth = 0;
            let mut j = i;
            while j < bytes.len() {
                if text[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if text[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            i = j;
        } else if let Some(len) = raw_string_len(rest, i == 0 || !is_ident(bytes[i - 1])) {
            out.push_str("\"\"");
            i += len;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if let Some(len) = char_literal_len(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let ch = rest.chars().next().expect("not at the end");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting here.
fn raw_string_len(rest: &str, at_token_start: bool) -> Option<usize> {
    if !at_token_start {
        return None;
    }
    let after_b = rest.strip_prefix('b').unwrap_or(rest);
    let after_r = after_b.strip_prefix('r')?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let closing = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&closing)?;
    Some(rest.len() - body.len() + end + closing.len())
}

/// The length of a character literal starting here (`'a'`, `'\n'`, `'\u{1F600}'`), not a
/// lifetime.
fn char_literal_len(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('\'')?;
    let mut chars = body.char_indices();
    let (_, first) = chars.next()?;
    let end = if first == '\\' {
        body[1..].find('\'')? + 1
    } else {
        first.len_utf8()
    };
    (body[end..].starts_with('\'')).then_some(end + 2)
}

/// The code with every `#[cfg(test)]`-gated module body removed.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let head = after.trim_start();
        let head = head.strip_prefix("pub ").unwrap_or(head);
        let Some(open) = head
            .strip_prefix("mod ")
            .and_then(|m| m.find(['{', ';']).map(|k| (m, k)))
            .filter(|(m, k)| m.as_bytes()[*k] == b'{')
            .map(|(m, k)| code.len() - m.len() + k)
        else {
            rest = after;
            continue;
        };
        let mut depth = 0;
        let mut close = open;
        for (k, b) in code.as_bytes()[open..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &code[close..];
    }
    out.push_str(rest);
    out
}

/// Words (identifiers and `::`-joined paths) of the code in order.
fn identifier_at(code: &str, at: usize) -> &str {
    let end = code[at..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(code.len(), |k| at + k);
    &code[at..end]
}

/// Parses one file: the modules it declares, what it defines, and every path it names.
fn parse(module: &[String], is_dir_module: bool, text: &str) -> SourceFile {
    let code = without_test_modules(&code_only(text));
    let mut file = SourceFile {
        is_dir_module,
        ..SourceFile::default()
    };
    // Declarations: `mod x;` and the items it defines.
    const ITEM_KEYWORDS: [&str; 9] = [
        "struct", "enum", "fn", "trait", "type", "const", "static", "union", "mod",
    ];
    let words = tokens(&code);
    for pair in words.windows(3) {
        if ITEM_KEYWORDS.contains(&pair[0].as_str()) && is_identifier(&pair[1]) {
            file.defines.insert(pair[1].clone());
            if pair[0] == "mod" && pair[2] == ";" {
                file.children.insert(pair[1].clone());
            }
        }
    }
    // `use` trees.
    let mut use_statements = Vec::new();
    let mut search = 0;
    while let Some(found) = find_word(&code, "use", search) {
        let Some(semi) = code[found..].find(';') else {
            break;
        };
        // Whitespace kept only where it separates words (`x as y`).
        let tree = code[found + 3..found + semi]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" ::", "::")
            .replace(":: ", "::");
        let is_pub = code[..found].trim_end().ends_with("pub")
            || code[..found].trim_end().ends_with(')') && {
                let before = code[..found].trim_end();
                before.rfind("pub(").is_some_and(|p| before[p..].len() < 16)
            };
        let mut leaves = Vec::new();
        expand_use_tree(&[], &tree, &mut leaves);
        for (relative, alias) in leaves {
            if let Some(absolute) = absolute_path(module, &file, &relative) {
                if is_pub && let Some(name) = alias.or_else(|| relative.last().cloned()) {
                    file.reexports.insert(name, absolute.clone());
                }
                file.paths.push((absolute, is_pub));
            }
        }
        use_statements.push(found..found + semi);
        search = found + semi;
    }
    // Paths in the code: `crate::…`, `super::…`, `self::…`, and `child::…`, each from where it
    // starts (an identifier not itself preceded by `::`).
    for (at, _) in code.match_indices("::") {
        let start = at - identifier_len_before(&code, at);
        let in_use = use_statements.iter().any(|r| r.contains(&at));
        if in_use || start == at || code[..start].ends_with("::") {
            continue;
        }
        let first = &code[start..at];
        if !(matches!(first, "crate" | "super" | "self") || file.children.contains(first)) {
            continue;
        }
        let segments: Vec<String> = path_from(&code, start)
            .split("::")
            .map(str::to_string)
            .collect();
        if let Some(absolute) = absolute_path(module, &file, &segments) {
            file.paths.push((absolute, false));
        }
    }
    file
}

fn identifier_len_before(code: &str, at: usize) -> usize {
    code[..at].len()
        - code[..at]
            .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_')
            .len()
}

/// The path (`a::b::C`) that starts at `start`.
fn path_from(code: &str, start: usize) -> &str {
    let mut end = start;
    let bytes = code.as_bytes();
    while end < bytes.len() {
        if is_ident(bytes[end]) {
            end += 1;
        } else if code[end..].starts_with("::") && bytes.get(end + 2).is_some_and(|b| is_ident(*b))
        {
            end += 2;
        } else {
            break;
        }
    }
    &code[start..end]
}

fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The code's words and punctuation, roughly: enough to see `struct Name` and `mod x;`.
fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    let bytes = code.as_bytes();
    while at < bytes.len() {
        if is_ident(bytes[at]) {
            let word = identifier_at(code, at);
            out.push(word.to_string());
            at += word.len();
        } else if bytes[at].is_ascii_whitespace() {
            at += 1;
        } else {
            let ch = code[at..].chars().next().expect("not at the end");
            out.push(ch.to_string());
            at += ch.len_utf8();
        }
    }
    out
}

/// Where `word` next stands alone at or after `from`.
fn find_word(code: &str, word: &str, from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(k) = code[at..].find(word) {
        let pos = at + k;
        let before_ok = pos == 0 || !is_ident(code.as_bytes()[pos - 1]);
        let after_ok = code
            .as_bytes()
            .get(pos + word.len())
            .is_none_or(|b| !is_ident(*b));
        if before_ok && after_ok {
            return Some(pos);
        }
        at = pos + word.len();
    }
    None
}

/// The leaves of a `use` tree (`a::{b, c::{d as e}}`), each with its alias.
fn expand_use_tree(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim().trim_start_matches("::");
    match tree.find('{') {
        None => {
            let (path, alias) = match tree.split_once(" as ") {
                Some((p, a)) => (p.trim(), Some(a.trim().to_string())),
                None => (tree, None),
            };
            let mut segments = prefix.to_vec();
            segments.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
            if segments.last().is_some_and(|s| s == "self") {
                segments.pop();
            }
            if segments.last().is_some_and(|s| s == "*") {
                segments.pop();
            }
            out.push((segments, alias));
        }
        Some(open) => {
            let close = tree.rfind('}').unwrap_or(tree.len());
            let mut segments = prefix.to_vec();
            segments.extend(
                tree[..open]
                    .split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            let inner = &tree[open + 1..close];
            let mut depth = 0;
            let mut part_start = 0;
            for (k, ch) in inner.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if part_start < k {
                            expand_use_tree(&segments, &inner[part_start..k], out);
                        }
                        part_start = k + 1;
                    }
                    _ => {}
                }
            }
            if part_start < inner.len() {
                expand_use_tree(&segments, &inner[part_start..], out);
            }
        }
    }
}

/// A path as written in `module` made absolute; `None` for paths into other crates.
fn absolute_path(module: &[String], file: &SourceFile, path: &[String]) -> Option<ModPath> {
    let (first, rest) = path.split_first()?;
    let mut base: ModPath = module.to_vec();
    let mut rest = rest;
    match first.as_str() {
        "crate" => base.clear(),
        "self" => {}
        "super" => {
            base.pop();
            while let Some((next, tail)) = rest.split_first() {
                if next != "super" {
                    break;
                }
                base.pop();
                rest = tail;
            }
        }
        child if file.children.contains(child) => base.push(child.to_string()),
        _ => return None,
    }
    let _ = file.is_dir_module;
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The strongly connected components of more than one file (Tarjan's).
fn circles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(state: &mut State<'a>, v: &'a ModPath) {
        let next = state.index.len();
        state.index.insert(v, next);
        state.low.insert(v, next);
        state.stack.push(v);
        state.on_stack.insert(v);
        let edges = state.edges;
        for w in edges.get(v).into_iter().flatten() {
            let Some((w, _)) = edges.get_key_value(w) else {
                continue;
            };
            if !state.index.contains_key(w) {
                visit(state, w);
                let low = state.low[v].min(state.low[w]);
                state.low.insert(v, low);
            } else if state.on_stack.contains(w) {
                let low = state.low[v].min(state.index[w]);
                state.low.insert(v, low);
            }
        }
        if state.low[v] == state.index[v] {
            let mut component = Vec::new();
            while let Some(w) = state.stack.pop() {
                state.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// The layer of a module: a file may import only from lower layers, or from its own top-level
/// module. `None` for the crate root.
fn layer(module: &[String]) -> Option<(usize, &str)> {
    let top = module.first()?.as_str();
    let rank = match top {
        "files" | "memory" | "threads" => 0,
        "job" => 1,
        "model" => 2,
        "synth" => 3,
        "loader" | "annotations" | "engine_process" => 4,
        "capture" => 5,
        "analysis" => 6,
        "lessons" => 7,
        "app" => 8,
        "cli" => 9,
        _ => return Some((usize::MAX, top)),
    };
    Some((rank, top))
}

/// The layer of a file inside `app/`: `shell` above `document` above `panels` and `timeline`
/// above `widgets` above `job`. `None` for files outside these folders (`app/mod.rs`).
fn app_layer(module: &[String]) -> Option<(usize, &str)> {
    if module.first().map(String::as_str) != Some("app") {
        return None;
    }
    let part = module.get(1)?.as_str();
    let rank = match part {
        "job" => 0,
        "widgets" => 1,
        "state" => 2,
        "timeline" => 3,
        "panels" => 4,
        "document" => 5,
        "shell" => 6,
        _ => return None,
    };
    Some((rank, part))
}

/// Every import against the layering, as "from → to" lines.
fn upward_imports(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<String> {
    let mut found = Vec::new();
    for (from, targets) in edges {
        for to in targets {
            let upward = match (layer(from), layer(to)) {
                (Some((a, ta)), Some((b, tb))) => {
                    ta != tb && (b >= a || b == usize::MAX || a == usize::MAX)
                }
                _ => false,
            } || match (app_layer(from), app_layer(to)) {
                (Some((a, pa)), Some((b, pb))) => pa != pb && b >= a,
                _ => false,
            };
            if upward {
                found.push(format!("{} → {}", from.join("::"), to.join("::")));
            }
        }
    }
    found
}

fn src_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn describe(circles: &[Vec<ModPath>]) -> String {
    circles
        .iter()
        .map(|c| {
            c.iter()
                .map(|m| m.join("::"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[ignore]
fn dump_edges() {
    let krate = Crate::read(&src_root());
    let edges = krate.edges();
    for c in circles(&edges) {
        println!(
            "== {}",
            c.iter()
                .map(|m| m.join("::"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for a in &c {
            for b in &edges[a] {
                if c.contains(b) {
                    let file = &krate.files[a];
                    let why: Vec<String> = file
                        .paths
                        .iter()
                        .filter(|(p, _)| krate.target(p, 0).as_ref() == Some(b))
                        .map(|(p, _)| p.join("::"))
                        .collect();
                    println!(
                        "  {} -> {}   {:?}",
                        a.join("::"),
                        b.join("::"),
                        why.iter().take(4).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

#[test]
fn no_file_level_import_circle() {
    let krate = Crate::read(&src_root());
    assert!(krate.files.len() > 100, "the check found the sources");
    let found = circles(&krate.edges());
    assert!(
        found.is_empty(),
        "{} import circle(s), each a set of files that import one another:\n{}",
        found.len(),
        describe(&found)
    );
}

#[test]
fn the_engine_crate_has_no_file_level_import_circle() {
    let krate = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("engine/src"));
    assert!(
        krate.files.len() > 10,
        "the check found the engine's sources"
    );
    let found = circles(&krate.edges());
    assert!(
        found.is_empty(),
        "{} import circle(s) in the engine, each a set of files that import one another:\n{}",
        found.len(),
        describe(&found)
    );
}

#[test]
fn no_import_against_the_layering() {
    let krate = Crate::read(&src_root());
    let found = upward_imports(&krate.edges());
    assert!(
        found.is_empty(),
        "{} import(s) against the layering:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// A small crate of planted sources for the checks' own tests.
fn planted(files: &[(&str, bool, &str)]) -> Crate {
    let sources = files
        .iter()
        .map(|(path, dir, text)| {
            let module: ModPath = path
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            (module, (*dir, text.to_string()))
        })
        .collect();
    Crate::from_sources(sources)
}

#[test]
fn a_planted_circle_is_found() {
    let krate = planted(&[
        ("", true, "pub mod analysis;"),
        ("analysis", true, "pub mod stats;\npub mod reports;"),
        (
            "analysis::stats",
            false,
            "use super::reports::gpu_sum; pub struct Table; fn f() { gpu_sum(); }",
        ),
        (
            "analysis::reports",
            false,
            "// use crate::nothing::Here;\nuse crate::analysis::stats::Table;\npub fn gpu_sum() {}",
        ),
    ]);
    let found = circles(&krate.edges());
    assert_eq!(describe(&found), "analysis::reports, analysis::stats");
}

#[test]
fn a_path_written_in_code_is_an_import_too() {
    let krate = planted(&[
        ("", true, "pub mod a; pub mod b;"),
        ("a", false, "pub fn f() { crate::b::g(); }"),
        (
            "b",
            false,
            "pub fn g() { let s = \"crate::a::f\"; super::a::f(); }",
        ),
    ]);
    assert_eq!(describe(&circles(&krate.edges())), "a, b");
}

#[test]
fn a_facade_is_not_a_circle_and_a_reexport_leads_to_its_file() {
    let krate = planted(&[
        ("", true, "pub mod model;"),
        (
            "model",
            true,
            "mod ids; mod time;\npub use ids::EventId;\npub use time::{Ns, TimeRange};",
        ),
        ("model::ids", false, "use super::Ns; pub struct EventId;"),
        (
            "model::time",
            false,
            "pub type Ns = i64; pub struct TimeRange;",
        ),
    ]);
    assert!(circles(&krate.edges()).is_empty());
    let edges = krate.edges();
    let ids = edges
        .get(&vec!["model".to_string(), "ids".to_string()])
        .expect("ids read");
    assert!(ids.contains(&vec!["model".to_string(), "time".to_string()]));
}

#[test]
fn test_modules_are_left_out() {
    let krate = planted(&[
        ("", true, "pub mod a; pub mod b;"),
        ("a", false, "pub fn f() { crate::b::g(); }"),
        (
            "b",
            false,
            "pub fn g() {}\n#[cfg(test)]\nmod tests { use crate::a::f; #[test] fn t() { f(); } }",
        ),
    ]);
    assert!(circles(&krate.edges()).is_empty());
}

#[test]
fn a_planted_upward_import_is_found() {
    let krate = planted(&[
        ("", true, "pub mod model; pub mod analysis; pub mod app;"),
        (
            "model",
            false,
            "use crate::analysis::stats::Table; pub struct Trace;",
        ),
        ("analysis", true, "pub mod stats;"),
        (
            "analysis::stats",
            false,
            "use crate::model::Trace; pub struct Table;",
        ),
        ("app", true, "pub mod widgets; pub mod panels;"),
        ("app::widgets", false, "use crate::app::panels::Panel;"),
        ("app::panels", false, "pub struct Panel;"),
    ]);
    let found = upward_imports(&krate.edges());
    assert_eq!(
        found,
        vec![
            "app::widgets → app::panels".to_string(),
            "model → analysis::stats".to_string()
        ]
    );
}
