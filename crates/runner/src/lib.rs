//! colloc-runner
