//! Metric names checked against what the chip supports, before any run, with
//! the closest supported names for a misspelt one.
//!
//! CUPTI's host API lists base metrics (`dram__bytes_read`) per type and, per
//! base metric, its sub-metrics (`sum`, `avg.pct_of_peak_sustained_elapsed`,
//! …); a full name is `base.sub`. [`SupportedMetrics`] holds that list, from
//! the host API on the GPU machine or from a recorded file in tests.

use std::collections::BTreeMap;

/// A chip's metrics: base name → its sub-metrics (empty when not listed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SupportedMetrics {
    pub chip: String,
    pub bases: BTreeMap<String, Vec<String>>,
}

impl SupportedMetrics {
    /// Reads the text form written by [`SupportedMetrics::to_text`]: a
    /// `chip NAME` line, then one line per base metric, `base sub sub …`.
    pub fn from_text(text: &str) -> Result<SupportedMetrics, String> {
        let mut out = SupportedMetrics::default();
        for (n, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            let Some(first) = words.next() else {
                continue;
            };
            if first == "chip" {
                out.chip = words.next().unwrap_or_default().to_string();
                continue;
            }
            if !first
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                return Err(format!(
                    "line {}: '{first}' is not a base metric name",
                    n + 1
                ));
            }
            out.bases
                .insert(first.to_string(), words.map(str::to_string).collect());
        }
        if out.bases.is_empty() {
            return Err("no metrics listed".into());
        }
        Ok(out)
    }

    pub fn to_text(&self) -> String {
        let mut text = format!("chip {}\n", self.chip);
        for (base, subs) in &self.bases {
            text.push_str(base);
            for s in subs {
                text.push(' ');
                text.push_str(s);
            }
            text.push('\n');
        }
        text
    }

    /// Checks every name; the error names each unknown one with the closest
    /// supported names.
    pub fn check(&self, metrics: &[String]) -> Result<(), String> {
        let problems: Vec<String> = metrics
            .iter()
            .filter_map(|m| self.check_one(m).err())
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    fn check_one(&self, metric: &str) -> Result<(), String> {
        let (base, sub) = metric.split_once('.').unwrap_or((metric, ""));
        let chip = if self.chip.is_empty() {
            "this GPU".to_string()
        } else {
            self.chip.clone()
        };
        let Some(subs) = self.bases.get(base) else {
            let near: Vec<String> = closest(base, self.bases.keys().map(String::as_str), 3)
                .into_iter()
                .map(|b| {
                    if sub.is_empty() {
                        b.to_string()
                    } else {
                        format!("{b}.{sub}")
                    }
                })
                .collect();
            return Err(format!(
                "'{metric}' is not a metric of {chip}{}",
                did_you_mean(&near)
            ));
        };
        if sub.is_empty() {
            let examples: Vec<String> =
                subs.iter().take(3).map(|s| format!("{base}.{s}")).collect();
            return Err(format!(
                "'{metric}' needs a rollup and suffix{}",
                did_you_mean(&examples)
            ));
        }
        if subs.is_empty() || subs.iter().any(|s| s == sub) {
            return Ok(());
        }
        let near: Vec<String> = closest(sub, subs.iter().map(String::as_str), 3)
            .into_iter()
            .map(|s| format!("{base}.{s}"))
            .collect();
        Err(format!(
            "'{metric}': {base} has no '.{sub}'{}",
            did_you_mean(&near)
        ))
    }
}

fn did_you_mean(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(" (closest: {})", names.join(", "))
    }
}

/// The `n` candidates nearest to `word` by edit distance (ties by name).
pub fn closest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
    n: usize,
) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> = candidates.map(|c| (edit_distance(word, c), c)).collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

/// Levenshtein distance over bytes (metric names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("dram", "dram"), 0);
        assert_eq!(edit_distance("dram", "drma"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn text_form_round_trips_and_rejects_garbage() {
        let m =
            SupportedMetrics::from_text("chip GH100\ndram__bytes_read sum avg\n").expect("parses");
        assert_eq!(SupportedMetrics::from_text(&m.to_text()), Ok(m));
        assert!(SupportedMetrics::from_text("chip X\n").is_err());
        assert!(SupportedMetrics::from_text("dram-bytes sum\n").is_err());
    }
}
