//! Text made safe for the format it goes into: every string that comes with the traces (host
//! and GPU names, driver strings, reasons, workload labels, campaign names) passes through
//! one of these before it reaches an output. Markdown ([`md`], [`md_code`]) for the tables,
//! `paper/claims.md`, `compare.md` and the appendix; HTML ([`html`]) for the report; LaTeX
//! ([`latex`]) for the tables' `.tex`; CSV ([`csv`]) for their `.csv`; one line of plain
//! text ([`line`]) for what is printed. SVG text is escaped by plotters' SVG backend.

/// Text in Markdown (CommonMark and GitHub's tables), read as it was written: `\`, `` ` ``,
/// `*`, `[`, `]`, `|` and `~` escaped with a backslash, `_` too unless it stands inside a
/// word (where it cannot start or end emphasis: `dram_bw_util_pct` reads as written), `<`,
/// `>` and `&` as entities (no raw HTML, no entity read as its character), line breaks and
/// other control characters as spaces (a table row stays one line).
pub fn md(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\\' | '`' | '*' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '_' => {
                let word = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
                if !(word(i.checked_sub(1)) && word(Some(i + 1))) {
                    out.push('\\');
                }
                out.push('_');
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Markdown code span of `s` (`` `s` ``), or, when `s` holds what a code span cannot show
/// as written (a backtick, `|` (a table's cell edge even in a code span), `<`, `>`, a
/// control character, a space at either end) or nothing, `s` as [`md`] text.
pub fn md_code(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !s.chars().any(|c| matches!(c, '`' | '|' | '<' | '>') || c.is_control());
    if plain {
        format!("`{s}`")
    } else {
        md(s)
    }
}

/// Plain text on one line of a terminal (the console summaries, `reproduce --claim`'s
/// evidence): line breaks and other control characters (escape sequences among them) as
/// spaces.
pub fn line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// HTML text and attribute values (in double or single quotes).
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// LaTeX text: its special characters escaped, the few non-ASCII symbols used spelled, line
/// breaks and other control characters as spaces (a blank line would end a caption).
pub fn latex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '×' => out.push_str("$\\times$"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            '≥' => out.push_str("$\\geq$"),
            '≤' => out.push_str("$\\leq$"),
            '±' => out.push_str("$\\pm$"),
            '†' => out.push_str("\\textsuperscript{\\dag}"),
            '‡' => out.push_str("\\textsuperscript{\\ddag}"),
            '§' => out.push_str("\\textsuperscript{\\S}"),
            'Σ' => out.push_str("$\\Sigma$"),
            '→' => out.push_str("$\\rightarrow$"),
            '·' => out.push_str("$\\cdot$"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            c if c.is_control() => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a
/// line break; as it is otherwise.
pub fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown() {
        assert_eq!(md("a|b<c>`d`"), "a\\|b&lt;c&gt;\\`d\\`");
        assert_eq!(md("GPU-1_2*x\ny"), "GPU-1_2\\*x y");
        assert_eq!(md("_x_ dram_bw_util_pct _"), "\\_x\\_ dram_bw_util_pct \\_");
        assert_eq!(md("[a](javascript:x) ~~s~~ &amp; \\"), "\\[a\\](javascript:x) \\~\\~s\\~\\~ &amp;amp; \\\\");
        assert_eq!(
            md("NVIDIA H200, 580.95.05 (e33-resnet26-x1@gen.r1)"),
            "NVIDIA H200, 580.95.05 (e33-resnet26-x1@gen.r1)"
        );
        assert_eq!(md_code("data/h200/"), "`data/h200/`");
        assert_eq!(md_code("a`b"), "a\\`b");
        assert_eq!(md_code("a|b"), "a\\|b");
        assert_eq!(md_code("<x>"), "&lt;x&gt;");
        assert_eq!(md_code(""), "");
    }

    #[test]
    fn latex_and_html_and_csv() {
        assert_eq!(latex("7 × resnet_26 & 50%"), "7 $\\times$ resnet\\_26 \\& 50\\%");
        assert_eq!(latex("1.0 (0.9–1.1)"), "1.0 (0.9--1.1)");
        assert_eq!(latex("\\textbf{x}\n\nnext"), "\\textbackslash{}textbf\\{x\\}  next");
        assert_eq!(html("<a href='x'>&amp;\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;amp;&quot;&lt;/a&gt;");
        assert_eq!(csv("agrees, the host differs"), "\"agrees, the host differs\"");
        assert_eq!(csv("a\"b"), "\"a\"\"b\"");
        assert_eq!(csv("line\nbreak"), "\"line\nbreak\"");
        assert_eq!(csv("agrees"), "agrees");
        assert_eq!(line("a\nb\u{1b}[2Jc"), "a b [2Jc");
    }
}
