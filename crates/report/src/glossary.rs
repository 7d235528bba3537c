//! The glossary: each term the tables, figures, claims and documents use, once, with its one
//! name. The HTML report prints it; the README carries the same text (a test compares them).

/// (term, meaning), in the order a reader meets them.
pub const GLOSSARY: &[(&str, &str)] = &[
    ("workload", "one cell of the paper's experiment matrix: a set of training jobs run together on one GPU in one mode (e.g. 7 × resnet26 under MPS)."),
    ("job", "one training process of a workload: one model, batch size and data source."),
    ("alone", "a job's model trained by itself on the whole GPU (mode `exclusive`): the baseline every ratio divides by."),
    ("naive", "collocation by starting the jobs as ordinary processes on the same GPU; the GPU time-slices between them."),
    ("MPS", "NVIDIA's Multi-Process Service: the jobs' kernels share the GPU at once through one MPS server."),
    ("MIG", "Multi-Instance GPU: the GPU split into isolated instances (profiles such as `1g.18gb`, one to seven compute slices); needs MIG mode on, which the runner never changes."),
    ("MPS-limited (MIG stand-in)", "a MIG workload measured under MPS with each job capped to its MIG profile's share of the SMs and memory (`CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`, a memory limit), where MIG mode is off; not isolated as MIG is. Values measured so are marked (stand-in)."),
    ("layout", "the MIG profiles of a workload's jobs, written `4g+1g×3` (one 4g instance and three 1g); infeasible when the profiles need more compute or memory slices than the GPU has."),
    ("skipped", "a planned run not made, with its reason (MIG workloads on a GPU whose MIG mode is off)."),
    ("infeasible", "a MIG workload whose layout cannot be made on the GPU: a finding (claim C4), not a missing measurement."),
    ("STP", "system throughput: each job's throughput over its model's throughput alone, summed over the jobs (1 for one job alone; the number of jobs if collocation cost nothing). The paper's \"aggregate throughput\" compared with one job alone."),
    ("ANTT", "average normalised turnaround time: the mean over the jobs of alone throughput over collocated throughput (1 when no job slows down; higher is worse)."),
    ("fairness", "the smallest over the largest of the jobs' normalised progress (throughput collocated over alone): 1 when every job slows down alike."),
    ("aggregate throughput", "the images per second of all of a workload's jobs together, in its window."),
    ("protocol `quick`", "warm-up, a start barrier, then one common 10-second measurement window in which every job of the workload trains (event-log protocol version 2); the paper's own protocol, `epochs`, trains whole epochs."),
    ("barrier, release", "each job warms up and waits at the barrier; when all are ready the runner releases them at once, so their windows coincide."),
    ("window", "the interval in which every job of a workload trains beside all the others, after the release; throughputs are measured in it, each with its 95% interval (batch means)."),
    ("settle", "a run made once, unrecorded, before a host's first recorded run on a data set (`--settle`): a freshly started host's first run can be slower."),
    ("preload", "the jobs forked from one job server that imported PyTorch and timm once per invocation (`--preload`)."),
    ("invocation", "one start of the runner on one host; every run names its invocation in `meta.json`."),
    ("interleaved baseline", "runs alone of a model the host's CPU holds back, measured on the host and in the invocation of the collocated runs they divide, before, between and after them; each ratio divides by the median of the three nearest in time."),
    ("host", "one physical machine with its GPU, named by the GPU's UUID; lent machines of one model are several hosts, whose CPUs differ."),
    ("95% interval", "the range in brackets after a value, `2.85 [2.69–3.02]`: a seeded bootstrap over the repetitions, the runs alone a ratio divides by and each window's own interval."),
    ("headline", "the workloads repeated most (the `headline` of a campaign); a claim's headline grade is its grade on the data source closest to the paper's image files."),
    ("grades", "holds, direction only, inconclusive, does not hold, by construction, not run: how a claim's checks came out (the claims table's notes say each)."),
    ("`@gen`, `@syn`, `@real`", "a workload on generated image files, on synthetic data made on the GPU (the GPU-bound control), or on a real image folder."),
    ("`.r3`, `.a2`, `~epochs`", "repetition 3 of a workload; a second attempt of a run; a workload under another protocol than its campaign's."),
    ("†", "some job of the value is divided by the baseline of other hosts: its own host has no run of its model alone."),
    ("‡", "a process of someone else was on the GPU during some run's window: the value is disturbed."),
    ("§", "implausible as it stands (ANTT below 1 or STP above the number of jobs beyond the interval, one run alone, an unsettled host's first run); the reasons follow each table."),
    ("GPM", "NVML's GPU Performance Monitoring metrics (SM activity, SM occupancy, tensor activity, DRAM bandwidth), read without DCGM."),
];

/// The glossary as a Markdown list (the README's `## Glossary` section holds exactly this).
pub fn markdown() -> String {
    GLOSSARY.iter().map(|(term, meaning)| format!("- **{term}**: {meaning}\n")).collect()
}

/// The glossary as an HTML definition list.
pub(crate) fn html() -> String {
    let mut out = String::from("<dl class=\"glossary\">\n");
    for (term, meaning) in GLOSSARY {
        out.push_str(&format!("<dt>{}</dt><dd>{}</dd>\n", code_spans(term), code_spans(meaning)));
    }
    out.push_str("</dl>\n");
    out
}

/// Escapes for HTML, then turns Markdown's `` `code` `` spans into `<code>`.
fn code_spans(s: &str) -> String {
    let escaped = crate::escape::html(s);
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{part}</code>"));
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_term_once_and_code_spans_closed() {
        let mut terms: Vec<&str> = super::GLOSSARY.iter().map(|(t, _)| *t).collect();
        let n = terms.len();
        terms.sort();
        terms.dedup();
        assert_eq!(terms.len(), n, "a term twice");
        for (t, m) in super::GLOSSARY {
            assert_eq!(t.matches('`').count() % 2, 0, "{t}");
            assert_eq!(m.matches('`').count() % 2, 0, "{t}: {m}");
        }
        assert!(super::html().contains("<dt><code>@gen</code>, <code>@syn</code>, <code>@real</code></dt>"));
    }
}
