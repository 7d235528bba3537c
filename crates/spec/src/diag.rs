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
            writeln!(f, "{pad} |")?;
            writeln!(f, "{n} | {src}")?;
            let caret_at = (self.column.max(1) - 1) as usize;
            let prefix: String = src.chars().take(caret_at).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
            write!(f, "{pad} | {prefix}^")?;
        }
        Ok(())
    }
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

/// Parses YAML text into `T`, or a located diagnostic.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(file: &Path, text: &str) -> Result<T, Diagnostic> {
    serde_saphyr::from_str::<T>(text).map_err(|e| Diagnostic::from_yaml(file, text, &e))
}
