//! colloc-analysis
