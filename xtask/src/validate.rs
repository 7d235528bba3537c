//! `cargo xtask validate [FILE...]`: check spec files, GPU tables and artifact.yaml.

use std::path::PathBuf;
use std::process::ExitCode;

use colloc_spec::validate::{check_counts, Document, Problem};

#[derive(clap::Args)]
pub struct Args {
    /// Spec files to check; none: every spec under experiments/, every GPU table and artifact.yaml.
    pub files: Vec<PathBuf>,
    /// Print one JSON document to stdout instead of the text (schemas/validate.schema.json):
    /// every problem with its file, line and column, or the counts found valid.
    #[arg(long)]
    pub json: bool,
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project_root()?;
    let (doc, text) = match check_counts(&root, &a.files) {
        Ok(summary) => {
            // The claims' checks must name queries the analysis knows, with known arguments.
            let project = colloc_spec::load_project(&root)?;
            if let Err(e) = colloc_analysis::validate_claims(&project.artifact.claims) {
                let message = format!("{e:#}");
                let problem =
                    Problem { file: "artifact.yaml".into(), line: None, column: None, message, source_line: None };
                let text = format!("artifact.yaml: error: {}", problem.message);
                (Document::problems(vec![problem]), Err(text))
            } else {
                let text = format!("{summary}, {} claims", project.artifact.claims.len());
                (Document::valid(summary), Ok(text))
            }
        }
        Err(d) => (Document::problems(d.0.iter().map(Problem::from).collect()), Err(d.to_string())),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        match &text {
            Ok(t) => println!("{t}"),
            Err(t) => eprintln!("{t}"),
        }
    }
    Ok(if text.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
