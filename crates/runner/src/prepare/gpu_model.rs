//! A campaign is made on one GPU model: the model its runs record (or the options name), and
//! the refusal of a GPU of another model, since ratios and throughputs of two models do not
//! pool.

use anyhow::{bail, Result};
use colloc_trace::meta::RunMeta;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::backend::Backend;

/// The GPU model the campaign is made on: `expected`, else the model its runs record (the
/// first run's; runs of several models are an error naming them).
pub(crate) fn campaign_gpu_model(metas: &BTreeMap<String, RunMeta>, expected: Option<&str>) -> Result<Option<String>> {
    let models: BTreeSet<&str> = metas.values().filter_map(|m| m.gpu.as_ref()).map(|g| g.name.as_str()).collect();
    if models.len() > 1 {
        bail!(
            "the campaign's runs were made on several GPU models ({}); a campaign is made on one",
            models.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let found = models.into_iter().next();
    match (expected, found) {
        (Some(e), Some(f)) if e != f => bail!("the campaign's runs were made on {f}, not on {e}"),
        (Some(e), _) => Ok(Some(e.to_string())),
        (None, f) => Ok(f.map(str::to_string)),
    }
}

/// An error when a GPU is not the campaign's model: ratios and throughputs of two models do
/// not pool, so runs on another model go into a campaign directory of their own.
pub(crate) fn check_gpu_model(dir: &Path, model: Option<&str>, gpus: &[Box<dyn Backend>]) -> Result<()> {
    let first = model.map(str::to_string).or_else(|| gpus.first().map(|g| g.name().to_string()));
    for g in gpus {
        if let Some(m) = &first {
            if g.name() != m {
                bail!(
                    "GPU {} is {}, but the runs of {} are made on {m}: a campaign is made on one GPU model \
                     (ratios of two models do not pool); run on a GPU of that model, or into a new directory \
                     (`cargo xtask run --here` names one after the GPU), and compare the two with `cargo xtask compare`",
                    g.index(),
                    g.name(),
                    dir.display()
                );
            }
        }
    }
    Ok(())
}
