//! Durations as people read them.

/// `1 h 7 min`, `42 min 10 s`, `9 s`: to the nearest second under an hour, else to the
/// nearest minute.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s < 3600 {
        return match s / 60 {
            0 => format!("{s} s"),
            m => format!("{m} min {} s", s % 60),
        };
    }
    let minutes = (s + 30) / 60;
    format!("{} h {} min", minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations() {
        assert_eq!(duration(4020.0), "1 h 7 min");
        assert_eq!(duration(62.0), "1 min 2 s");
        // Beyond an hour, to the nearest minute: 1 h 45 min 53 s reads 1 h 46 min.
        assert_eq!(duration(6353.0), "1 h 46 min");
        assert_eq!(duration(7199.6), "2 h 0 min");
        assert_eq!(duration(3599.6), "1 h 0 min");
        assert_eq!(duration(9.0), "9 s");
    }
}
