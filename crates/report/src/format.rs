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
    let made = p.runs_by_status.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", ");
    match p.planned_runs {
        Some(n) if !p.missing_runs.is_empty() => {
            format!("{made}, of {n} planned ({} not yet made)", p.missing_runs.len())
        }
        Some(n) => format!("{made}: all {n} planned"),
        None => made,
    }
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
    fn words_and_lists() {
        assert_eq!((number_word(7), number_word(13)), ("seven".to_string(), "13".to_string()));
        let l = |v: &[&str]| and_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            (l(&[]), l(&["a"]), l(&["a", "b"]), l(&["a", "b", "c"])),
            ("".into(), "a".into(), "a and b".into(), "a, b and c".into())
        );
    }
}
