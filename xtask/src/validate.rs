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
            println!("{summary}");
            Ok(ExitCode::SUCCESS)
        }
        Err(d) => {
            eprintln!("{d}");
            Ok(ExitCode::FAILURE)
        }
    }
}

