//! Sums and means that do not depend on the order of their values: each value `v` counts as
//! the whole number of `1/scale` units `v·scale + 0.5` truncates to, the units are summed
//! as integers and the sum turned back into `f64` once. Outputs are byte-identical however
//! the values are read.
//!
//! These are, to the bit, the sums the analysis computed with polars as
//! `(v · scale + 0.5).cast(Int64).sum() / scale` (and `/ count` for a mean): a value too
//! large for an `i64` counts but adds nothing, as the cast made it null; the integer sum
//! wraps; and the units of a query's one group are divided by `scale`, those of a query of
//! several groups multiplied by `1/scale`, as polars' kernels do (the two can differ in the
//! last bit), so each sum is asked for with the number of groups it was summed among.

/// Resolution of percentages, seconds, images and watts in sums.
pub(crate) const FINE: f64 = 1e6;
/// Resolution of joules and bytes in sums.
pub(crate) const COARSE: f64 = 1.0;

/// A running sum and count of non-negative values at a resolution of `1/scale`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExactSum {
    scale: f64,
    units: i64,
    count: u64,
}

impl ExactSum {
    pub(crate) fn new(scale: f64) -> Self {
        ExactSum { scale, units: 0, count: 0 }
    }

    /// Adds a value; `None` (a value not available) is not counted.
    pub(crate) fn add(&mut self, v: Option<f64>) {
        let Some(v) = v else { return };
        self.count += 1;
        let units = v * self.scale + 0.5;
        // The range an `f64` truncates into an `i64` from; NaN is outside it.
        if units > -9_223_372_036_854_775_808.0 && units < 9_223_372_036_854_775_808.0 {
            self.units = self.units.wrapping_add(units as i64);
        }
    }

    /// The values counted.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The sum (0 when nothing was counted), as one of `groups` sums.
    pub(crate) fn sum(&self, groups: usize) -> f64 {
        if groups == 1 {
            self.units as f64 / self.scale
        } else {
            self.units as f64 * (1.0 / self.scale)
        }
    }

    /// The mean (NaN when nothing was counted), as one of `groups` means.
    pub(crate) fn mean(&self, groups: usize) -> f64 {
        self.sum(groups) / self.count as f64
    }
}

/// The greater of two values, a missing one left out (`None` when both are).
pub(crate) fn greatest(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::{ExactSum, COARSE, FINE};

    #[test]
    fn sums_do_not_depend_on_the_order_of_the_values() {
        let values = [0.1, 0.2, 0.3, 1e-7, 12345.678901, 7.0];
        let mut a = ExactSum::new(FINE);
        let mut b = ExactSum::new(FINE);
        for v in values {
            a.add(Some(v));
        }
        for v in values.iter().rev() {
            b.add(Some(*v));
        }
        assert_eq!(a.sum(1).to_bits(), b.sum(1).to_bits());
        assert_eq!(a.sum(1), 12353.278901);
        assert_eq!(a.count(), 6);
    }

    #[test]
    fn missing_values_are_not_counted_and_nothing_has_no_mean() {
        let mut s = ExactSum::new(COARSE);
        assert_eq!(s.sum(1), 0.0);
        assert!(s.mean(1).is_nan());
        s.add(None);
        s.add(Some(2.4));
        s.add(Some(2.5));
        assert_eq!((s.count(), s.sum(1), s.mean(1)), (2, 5.0, 2.5));
        // Too large for the units: counted, not summed; NaN likewise.
        s.add(Some(1e300));
        s.add(Some(f64::NAN));
        assert_eq!((s.count(), s.sum(1)), (4, 5.0));
    }

    /// One group's units are divided by the scale, several groups' multiplied by its inverse.
    #[test]
    fn a_sum_among_several_groups_is_multiplied_by_the_resolution() {
        let mut s = ExactSum::new(FINE);
        s.add(Some(0.618589));
        assert_eq!(s.sum(1), 0.618589);
        assert_eq!(s.sum(2), 618589.0 * 1e-6);
        assert_ne!(s.sum(1), s.sum(2));
    }
}
