//! Diagnostics that point into a YAML file: `file:line:column: message`, then a snippet.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_saphyr::{Location, Spanned};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    /// 1-based; 0 when the problem has no place in the file (e.g. it cannot be read).
    pub line: u64,
    pub column: u64,
    pub message: String,
    /// The offending line of the file, if known.
    pub source_line: Option<String>,
}

impl Diagnostic {
    pub fn new(file: &Path, text: &str, loc: Location, message: impl Into<String>) -> Self {
        Self::at(file, text, loc.line(), loc.column(), message)
    }

    pub fn at(file: &Path, text: &str, line: u64, column: u64, message: impl Into<String>) -> Self {
        let source_line = (line > 0).then(|| text.lines().nth(line as usize - 1).map(str::to_string)).flatten();
        Diagnostic { file: file.to_path_buf(), line, column, message: message.into(), source_line }
    }

    pub fn spanned<T>(file: &Path, text: &str, s: &Spanned<T>, message: impl Into<String>) -> Self {
        Self::new(file, text, s.referenced, message)
    }

    /// A problem with the file as a whole.
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        Diagnostic { file: file.to_path_buf(), line: 0, column: 0, message: message.into(), source_line: None }
    }

    /// From a YAML deserialisation error: its location and its message without the
    /// library's own snippet (we print ours).
    pub fn from_yaml(file: &Path, text: &str, e: &serde_saphyr::Error) -> Self {
        let message = plain_message(e);
        match e.location() {
            Some(loc) if loc.line() > 0 => Self::new(file, text, loc, message),
            _ => Self::file(file, message),
        }
    }
}

fn plain_message(e: &serde_saphyr::Error) -> String {
    let full = e.without_snippet().to_string();
    // The library appends " at line L, column C"; we print the place ourselves.
    let msg = match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    };
    msg.lines().next().unwrap_or("").trim().to_string()
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        if self.line == 0 {
            return write!(f, "{file}: error: {}", self.message);
        }
        writeln!(f, "{file}:{}:{}: error: {}", self.line, self.column, self.message)?;
        if let Some(src) = &self.source_line {
            let n = self.line.to_string();
            let pad = " ".repeat(n.len());
            let (shown, caret_at) = snippet(src, (self.column.max(1) - 1) as usize);
            writeln!(f, "{pad} |")?;
            writeln!(f, "{n} | {shown}")?;
            let prefix: String = shown.chars().take(caret_at).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
            write!(f, "{pad} | {prefix}^")?;
        }
        Ok(())
    }
}

/// Characters of a source line shown at most; a longer line is cut around the column.
const SNIPPET_CHARS: usize = 100;

/// The part of `line` to show and where the caret goes in it (both in characters).
fn snippet(line: &str, caret: usize) -> (String, usize) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= SNIPPET_CHARS {
        return (line.to_string(), caret);
    }
    let caret = caret.min(chars.len());
    let start = caret.saturating_sub(SNIPPET_CHARS / 2).min(chars.len() - SNIPPET_CHARS);
    let end = start + SNIPPET_CHARS;
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(&chars[start..end]);
    if end < chars.len() {
        shown.push('…');
    }
    (shown, caret - start + usize::from(start > 0))
}

/// Several diagnostics, printed one after another.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "{d}")?;
        }
        write!(f, "{} error{}", self.0.len(), if self.0.len() == 1 { "" } else { "s" })
    }
}

impl std::error::Error for Diagnostics {}

/// Whether `text` holds no YAML node: only blank lines, comments, document markers (`---`,
/// `...`, each perhaps followed by a comment), directives (`%YAML 1.2`) and a byte-order
/// mark. Such a file would read as a document of defaults, so it is refused instead.
pub(crate) fn holds_no_yaml(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').lines().all(|l| {
        let l = l.trim();
        let l = match l.strip_prefix("---").or_else(|| l.strip_prefix("...")) {
            Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => rest.trim_start(),
            _ => l,
        };
        l.is_empty() || l.starts_with('#') || l.starts_with('%')
    })
}

/// Parses YAML text into `T`, or a located diagnostic. A file that holds no YAML (empty,
/// or comments only) is an error at its line 1, not a document of defaults.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(file: &Path, text: &str) -> Result<T, Diagnostic> {
    if holds_no_yaml(text) {
        return Err(Diagnostic::at(file, text, 1, 1, "the file holds no YAML, only comments or blank lines"));
    }
    serde_saphyr::from_str::<T>(text).map_err(|e| Diagnostic::from_yaml(file, text, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_comments_markers_and_directives_hold_no_yaml() {
        for empty in ["", "\n \n", "# c\n", "---\n# c\n...\n", "--- # c\n", "%YAML 1.2\n---\n", "\u{feff}# c\n"] {
            assert!(holds_no_yaml(empty), "{empty:?}");
            let e = parse_yaml::<crate::gpu::GpuTable>(Path::new("g.yaml"), empty).unwrap_err();
            assert_eq!((e.line, e.column), (1, 1), "{empty:?}");
            assert!(e.to_string().starts_with("g.yaml:1:1: error: the file holds no YAML"), "{e}");
        }
        for yaml in ["a: 1\n", "# c\nkey: v\n", "--- v\n", "---x\n", "~\n"] {
            assert!(!holds_no_yaml(yaml), "{yaml:?}");
        }
    }

    #[test]
    fn a_long_line_is_cut_around_the_column() {
        let line = format!("{}BAD{}", "a".repeat(5000), "b".repeat(5000));
        let d = Diagnostic::at(Path::new("f.yaml"), &line, 1, 5001, "here");
        let shown = d.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[2].chars().count() < SNIPPET_CHARS + 10, "{}", lines[2].len());
        assert!(lines[2].starts_with("1 | …") && lines[2].ends_with('…'), "{}", lines[2]);
        // The caret stands under the B of BAD.
        let caret = lines[3].chars().position(|c| c == '^').unwrap();
        assert_eq!(lines[2].chars().nth(caret), Some('B'), "{shown}");
        // Short lines are shown whole.
        let d = Diagnostic::at(Path::new("f.yaml"), "key: value", 1, 6, "here");
        assert!(d.to_string().contains("1 | key: value\n  |      ^"), "{d}");
    }
}
