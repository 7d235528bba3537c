//! `cargo xtask validate [FILE...]`: check spec files, GPU tables and artifact.yaml.

use std::path::PathBuf;
use std::process::ExitCode;

use colloc_spec::validate::check;

#[derive(clap::Args)]
pub struct Args {
    /// Spec files to check; none: every spec under experiments/, every GPU table and artifact.yaml.
    pub files: Vec<PathBuf>,
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project_root();
    match check(&root, &a.files) {
        Ok(summary) => {
            // The claims' checks must name queries the analysis knows, with known arguments.
            let project = colloc_spec::load_project(&root)?;
            if let Err(e) = colloc_analysis::validate_claims(&project.artifact.claims) {
                eprintln!("artifact.yaml: error: {e:#}");
                return Ok(ExitCode::FAILURE);
            }
            println!("{summary}, {} claims", project.artifact.claims.len());
            Ok(ExitCode::SUCCESS)
        }
        Err(d) => {
            eprintln!("{d}");
            Ok(ExitCode::FAILURE)
        }
    }
}
