//! The paper's claims as declared in `artifact.yaml` (`claims:`), each with the paper's
//! number and the check run over our results.
