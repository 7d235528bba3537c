//! Number formatting: one function per quantity, used by every table, figure and page, so
//! a number reads the same everywhere.

use colloc_analysis::Stats;

/// The text for a missing value.
pub(crate) const MISSING: &str = "—";

/// What a number measures, which fixes its decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quantity {
    /// images/s, no decimals.
    Throughput,
    /// ×, two decimals.
    Ratio,
    /// seconds, one decimal.
    Seconds,
    /// GiB from bytes, one decimal.
    GiB,
    /// % from a share in [0, 1], one decimal.
    Share,
    /// %, one decimal.
    Percent,
    /// W, no decimals.
    Watts,
    /// J per image, three decimals.
    JoulesPerImage,
    /// CPU cores, two decimals.
    Cores,
    /// A relative half-width: ± % from a share, one decimal, the unit in the cell.
    HalfWidth,
    /// A count.
    Count,
    /// A plain number with up to two decimals.
    Plain,
}

pub(crate) const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Quantity {
    /// The value in the unit shown (bytes → GiB, share → %).
    pub(crate) fn scale(self, v: f64) -> f64 {
        match self {
            Quantity::GiB => v / GIB,
            Quantity::Share | Quantity::HalfWidth => v * 100.0,
            _ => v,
        }
    }

    pub(crate) fn decimals(self) -> usize {
        match self {
            Quantity::Throughput | Quantity::Watts | Quantity::Count => 0,
            Quantity::Seconds | Quantity::GiB | Quantity::Share | Quantity::Percent | Quantity::HalfWidth => 1,
            Quantity::Ratio | Quantity::Cores | Quantity::Plain => 2,
            Quantity::JoulesPerImage => 3,
        }
    }

    /// The unit as written after a header: `img/s`, `×`, `s`, `GiB`, `%`, `W`, `J/img`, `cores`.
    pub(crate) fn unit(self) -> Option<&'static str> {
        match self {
            Quantity::Throughput => Some("img/s"),
            Quantity::Ratio => Some("×"),
            Quantity::Seconds => Some("s"),
            Quantity::GiB => Some("GiB"),
            Quantity::Share | Quantity::Percent => Some("%"),
            Quantity::Watts => Some("W"),
            Quantity::JoulesPerImage => Some("J/img"),
            Quantity::Cores => Some("cores"),
            Quantity::Count | Quantity::Plain | Quantity::HalfWidth => None,
        }
    }

    /// The number alone, in the unit shown.
    pub(crate) fn number(self, v: f64) -> String {
        let x = self.scale(v);
        if !x.is_finite() {
            return MISSING.to_string();
        }
        let s = format!("{:.*}", self.decimals(), x);
        // No "-0.0".
        if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
            s.trim_start_matches('-').to_string()
        } else {
            s
        }
    }

    /// The number or the missing mark.
    pub(crate) fn opt(self, v: Option<f64>) -> String {
        v.map_or_else(|| MISSING.to_string(), |v| self.number(v))
    }

    /// `median (min–max)`, or the median alone when there is no spread.
    pub(crate) fn stats(self, s: Option<Stats>) -> String {
        match s {
            None => MISSING.to_string(),
            Some(s) => {
                let (m, lo, hi) = (self.number(s.median), self.number(s.min), self.number(s.max));
                if lo == hi {
                    m
                } else {
                    format!("{m} ({lo}–{hi})")
                }
            }
        }
    }

    /// The number with its unit: `2.31×`, `12.0 s`, `45.2 %`.
    pub(crate) fn with_unit(self, v: f64) -> String {
        match self.unit() {
            Some("×") => format!("{}×", self.number(v)),
            Some(u) => format!("{} {u}", self.number(v)),
            None => self.number(v),
        }
    }
}

/// Bytes as `140.4 GiB`.
pub(crate) fn gib(bytes: f64) -> String {
    Quantity::GiB.with_unit(bytes)
}

/// `80 ok, 31 skipped` and, against the plan, `of 157 planned (43 not yet made)`.
pub(crate) fn runs_line(p: &colloc_analysis::Provenance) -> String {
    let total: usize = p.runs_by_status.values().sum();
    let mut by_status: Vec<(&String, &usize)> = p.runs_by_status.iter().collect();
    by_status.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let made = by_status.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", ");
    let Some(planned) = p.planned_runs else {
        return format!("{total} runs ({made})");
    };
    let mut parts = vec![if p.missing_runs.is_empty() {
        format!("the {planned} the plan asks for")
    } else {
        format!(
            "{} of the {planned} the plan asks for ({} not yet made)",
            planned - p.missing_runs.len(),
            p.missing_runs.len()
        )
    }];
    if p.attempts_again > 0 {
        parts.push(format!("{} later attempts of them (the latest attempt counts)", p.attempts_again));
    }
    if p.beyond_plan > 0 {
        parts.push(format!("{} runs of models alone the runner added", p.beyond_plan));
    }
    format!("{total} runs ({made}): {}", and_list(&parts))
}

/// A small count in words (`seven`), larger ones in digits.
pub(crate) fn number_word(n: usize) -> String {
    const WORDS: [&str; 13] =
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    WORDS.get(n).map_or_else(|| n.to_string(), |w| w.to_string())
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A dataset's name in prose: `CIFAR-10` for `cifar10`; the spec's name when it has no
/// usual spelling here.
pub(crate) fn dataset_title(name: &str) -> &str {
    match name {
        "cifar10" => "CIFAR-10",
        "imagenet64" => "ImageNet64",
        "imagenet" => "ImageNet",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_fixed() {
        assert_eq!(Quantity::Ratio.number(2.0), "2.00");
        assert_eq!(Quantity::Throughput.number(3199.6), "3200");
        assert_eq!(Quantity::Share.number(0.1234), "12.3");
        assert_eq!(Quantity::GiB.number(GIB * 1.25), "1.2");
        assert_eq!(Quantity::Seconds.number(-0.01), "0.0");
        assert_eq!(Quantity::Ratio.opt(None), MISSING);
        assert_eq!(Quantity::Ratio.with_unit(1.5), "1.50×");
        let s = Stats { median: 2.0, min: 1.5, max: 2.5, n: 3 };
        assert_eq!(Quantity::Ratio.stats(Some(s)), "2.00 (1.50–2.50)");
        let one = Stats { median: 2.0, min: 2.0, max: 2.0, n: 1 };
        assert_eq!(Quantity::Ratio.stats(Some(one)), "2.00");
    }

    #[test]
    fn the_runs_line_adds_up() {
        let mut p = colloc_analysis::Provenance::default();
        p.runs_by_status = [
            ("ok".to_string(), 252),
            ("skipped".to_string(), 72),
            ("failed".to_string(), 6),
            ("infeasible".to_string(), 6),
        ]
        .into();
        p.planned_runs = Some(288);
        (p.attempts_again, p.beyond_plan) = (19, 29);
        assert_eq!(
            runs_line(&p),
            "336 runs (252 ok, 72 skipped, 6 failed, 6 infeasible): the 288 the plan asks for, 19 later attempts of them (the latest attempt counts) and 29 runs of models alone the runner added"
        );
        p.runs_by_status = [("ok".to_string(), 39), ("failed".to_string(), 1)].into();
        p.planned_runs = Some(590);
        p.missing_runs = vec!["x.r1".to_string(); 563];
        (p.attempts_again, p.beyond_plan) = (0, 13);
        assert_eq!(runs_line(&p), "40 runs (39 ok, 1 failed): 27 of the 590 the plan asks for (563 not yet made) and 13 runs of models alone the runner added");
        p.planned_runs = None;
        assert_eq!(runs_line(&p), "40 runs (39 ok, 1 failed)");
    }

    #[test]
    fn words_and_lists() {
        assert_eq!((number_word(7), number_word(13)), ("seven".to_string(), "13".to_string()));
        let l = |v: &[&str]| and_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            (l(&[]), l(&["a"]), l(&["a", "b"]), l(&["a", "b", "c"])),
            ("".into(), "a".into(), "a and b".into(), "a, b and c".into())
        );
    }
}
