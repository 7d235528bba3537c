//! The grammar of workload and run ids, in one place: specs, plans, run directories and
//! test fixtures build their ids here.
//!
//! ```text
//! workload id   e<exp>-<model>-<dataset>-x<n>-<tag>        n identical jobs (a matrix cell)
//!               e<exp>-<model>+<model>+…-<tag>              jobs listed one by one, not alike
//!               e<exp>-<mix>-<tag>                          a mix of job classes (L+M+2S)
//!               an id written in the spec                   a listed workload's own `id:`
//! tag           exclusive | naive | mps | mig | mpslim, followed by the MIG profile as
//!               written with `.` → `_` when a matrix layout names one (mig1g, mig1g_18gb)
//! stand-in      the MPS stand-in of a MIG workload: its last `-mig` becomes `-mpslim`
//!               (`-mpslim` is appended when the id has no `-mig`)
//! data suffix   @syn | @gen | @real when a campaign part sets every job's data source
//! protocol      ~<protocol> after the data suffix when a campaign part runs under another
//!               protocol than its campaign's (e33-resnet26-cifar10-x7-mps@gen~epoch1)
//! run id        <workload id>.r<repetition>, with .a<attempt> after the first attempt
//! ```

use crate::jobfile::DataSource;
use crate::mode::Mode;

/// The mode's tag in workload ids.
pub fn mode_tag(m: Mode) -> &'static str {
    match m {
        Mode::Exclusive => "exclusive",
        Mode::Naive => "naive",
        Mode::Mps => "mps",
        Mode::MpsLimited => "mpslim",
        Mode::Mig => "mig",
    }
}

/// The tag of a mode with the MIG profile a layout names (`mig` + `1g` → `mig1g`).
pub fn layout_tag(m: Mode, profile: Option<&str>) -> String {
    match profile {
        Some(p) => format!("{}{}", mode_tag(m), p.replace('.', "_")),
        None => mode_tag(m).to_string(),
    }
}

/// `n` identical jobs of `model` on `dataset`.
pub fn homogeneous(experiment: u32, model: &str, dataset: &str, n: usize, tag: &str) -> String {
    format!("e{experiment}-{model}-{dataset}-x{n}-{tag}")
}

/// Jobs listed one by one, not all alike.
pub fn listed(experiment: u32, models: &[&str], tag: &str) -> String {
    format!("e{experiment}-{}-{tag}", models.join("+"))
}

/// A mix of job classes, labelled as written (`L+M+2S`).
pub fn mix(experiment: u32, label: &str, mode: Mode) -> String {
    format!("e{experiment}-{label}-{}", mode_tag(mode))
}

/// The id of the MPS stand-in of a MIG workload.
pub fn stand_in(mig_workload_id: &str) -> String {
    let tag = format!("-{}", mode_tag(Mode::Mig));
    match mig_workload_id.rsplit_once(&tag) {
        Some((a, b)) => format!("{a}-{}{b}", mode_tag(Mode::MpsLimited)),
        None => format!("{mig_workload_id}-{}", mode_tag(Mode::MpsLimited)),
    }
}

/// The suffix a campaign part's data source adds.
pub fn data_suffix(source: DataSource) -> &'static str {
    match source {
        DataSource::Synthetic => "@syn",
        DataSource::Generated => "@gen",
        DataSource::Imagefolder => "@real",
    }
}

/// The suffix a campaign part's own protocol adds (`~epoch1`).
pub fn protocol_suffix(protocol: &str) -> String {
    format!("~{protocol}")
}

/// The protocol a workload id names with [`protocol_suffix`], if any.
pub fn protocol_of_id(workload_id: &str) -> Option<&str> {
    workload_id.rsplit_once('~').map(|(_, p)| p).filter(|p| !p.is_empty())
}

/// A workload id without its `~<protocol>` suffix: the id of its twin under the campaign's
/// protocol.
pub fn workload_base(workload_id: &str) -> &str {
    match workload_id.rsplit_once('~') {
        Some((base, p)) if !p.is_empty() => base,
        _ => workload_id,
    }
}

/// The id of one run of a workload.
pub fn run_id(workload_id: &str, repetition: u32, attempt: u32) -> String {
    if attempt <= 1 {
        format!("{workload_id}.r{repetition}")
    } else {
        format!("{workload_id}.r{repetition}.a{attempt}")
    }
}

/// A run id's workload id, repetition and attempt; `None` for a name the grammar does not
/// make.
pub fn parse_run_id(run_id: &str) -> Option<(&str, u32, u32)> {
    let number = |s: &str| s.parse::<u32>().ok().filter(|n| *n >= 1 && !s.starts_with('0'));
    let (head, last) = run_id.rsplit_once('.')?;
    if let Some(a) = last.strip_prefix('a') {
        let attempt = number(a).filter(|a| *a >= 2)?;
        let (workload, r) = head.rsplit_once('.')?;
        let repetition = number(r.strip_prefix('r')?)?;
        return (!workload.is_empty()).then_some((workload, repetition, attempt));
    }
    let repetition = number(last.strip_prefix('r')?)?;
    (!head.is_empty()).then_some((head, repetition, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_as_the_spec_and_the_plan_write_them() {
        assert_eq!(
            homogeneous(33, "resnet26", "cifar10", 7, &layout_tag(Mode::Mig, Some("1g"))),
            "e33-resnet26-cifar10-x7-mig1g"
        );
        assert_eq!(layout_tag(Mode::Mig, Some("1g.18gb")), "mig1g_18gb");
        assert_eq!(listed(35, &["resnet26", "resnet50"], "mps"), "e35-resnet26+resnet50-mps");
        assert_eq!(mix(37, "L+M+2S", Mode::Mig), "e37-L+M+2S-mig");
        assert_eq!(stand_in("e37-L+M+2S-mig"), "e37-L+M+2S-mpslim");
        assert_eq!(stand_in("e33-resnet26-cifar10-x7-mig1g"), "e33-resnet26-cifar10-x7-mpslim1g");
        assert_eq!(stand_in("custom"), "custom-mpslim");
        assert_eq!(data_suffix(DataSource::Generated), "@gen");
        let own = format!("e33-resnet26-cifar10-x7-mps@gen{}", protocol_suffix("epoch1"));
        assert_eq!(own, "e33-resnet26-cifar10-x7-mps@gen~epoch1");
        assert_eq!(protocol_of_id(&own), Some("epoch1"));
        assert_eq!(protocol_of_id("e33-resnet26-cifar10-x7-mps@gen"), None);
        assert_eq!(workload_base(&own), "e33-resnet26-cifar10-x7-mps@gen");
        assert_eq!(workload_base("e33-resnet26-cifar10-x7-mps@gen"), "e33-resnet26-cifar10-x7-mps@gen");
        assert_eq!(workload_base("odd~"), "odd~");
    }

    #[test]
    fn run_ids_round_trip() {
        for (w, r, a) in [
            ("e37-L+M+2S-mps@syn", 1, 1),
            ("e33-resnet26-cifar10-x1-exclusive", 3, 2),
            ("x.y", 12, 1),
            ("e33-resnet26-cifar10-x7-mps@gen~epoch1", 2, 3),
            ("e33-resnet26-cifar10-x1-exclusive@gen~paper.v2", 1, 1),
        ] {
            assert_eq!(parse_run_id(&run_id(w, r, a)), Some((w, r, a)));
        }
        for bad in ["", "w", "w.r0", "w.r01", ".r1", "w.r1.a1", "w.rx", "w.a2"] {
            assert_eq!(parse_run_id(bad), None, "{bad}");
        }
    }
}
