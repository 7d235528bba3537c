//! colloc-report
