#!/usr/bin/env python3
"""The aggregates of a protocol-2 campaign computed with DuckDB: the same per-run and
per-workload values as `benchmarks/tools/pandas_analysis.py` (its docstring says what they are),
computed in SQL straight over the raw trace files through DuckDB's Python API: `read_json` of
every ok run's `meta.json` and of its jobs' event logs, `read_csv` of its gzip-compressed
telemetry and process samples (gzip is recognised by the file name). It shares no code with
crates/analysis nor with the pandas script; `cargo xtask bench` times it beside our verify +
analyse and checks that every engine gives the same numbers.

    python3 benchmarks/tools/duckdb_analysis.py CAMPAIGN_DIR OUT.json

Writes OUT.json ({"runs": {run_id: {...}}, "workloads": {id: {...}}}, the pandas script's
shape) and prints one line: `runs=N peak_kb=K seconds=S`. DuckDB uses every core it is given.
"""
import gzip
import json
import os
import resource
import sys
import time

import duckdb

GPM = ("sm_activity_pct", "sm_occupancy_pct", "tensor_activity_pct", "dram_bw_util_pct")


def sql_list(paths):
    """A SQL list literal of file names."""
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def load_runs(con, campaign):
    """Table `ok`: one row per ok run (its directory, ids, window, GPU, workload and jobs)."""
    runs_dir = os.path.join(campaign, "runs")
    metas = [os.path.join(runs_dir, d, "meta.json") for d in sorted(os.listdir(runs_dir)) if not d.startswith(".")]
    con.execute(
        f"""
        CREATE TEMP TABLE ok AS
        SELECT regexp_replace(filename, '/meta\\.json$', '') AS dir, run_id, workload_id,
               release_mono AS t0, window_end_mono AS t1, gpu.uuid AS uuid, workload.mode AS mode,
               workload.data AS wdata, workload.jobs AS wjobs, len(jobs) AS njobs
        FROM read_json({sql_list(metas)}, format = 'auto', filename = true, columns = {{
            run_id: 'VARCHAR', workload_id: 'VARCHAR', status: 'VARCHAR',
            release_mono: 'DOUBLE', window_end_mono: 'DOUBLE', gpu: 'STRUCT(uuid VARCHAR)',
            workload: 'STRUCT(mode VARCHAR, data VARCHAR,
                              jobs STRUCT(model VARCHAR, dataset VARCHAR, batch_size BIGINT)[])',
            jobs: 'JSON[]'}})
        WHERE status = 'ok'
        """
    )
    con.execute(
        """
        CREATE TEMP TABLE job_files AS
        SELECT dir || '/job-' || j || '.events.jsonl' AS f, dir, j AS job, t0, t1
        FROM ok, range(njobs) AS r(j)
        """
    )


def job_throughputs(con):
    """Table `tp` (dir, job, tp): each job's images credited to the window over its length.

    An iteration covers (previous end, its end], the first from the release; one straddling
    an edge counts pro rata in time; iterations after the first that reaches the window's end
    count for nothing. The iterations are ordered by their step (`first_step` + index), which
    is the order of the log. `images` is read as JSON: `window_end` events have a number there.
    """
    files = [r[0] for r in con.execute("SELECT f FROM job_files ORDER BY f").fetchall()]
    if not files:
        con.execute("CREATE TEMP TABLE tp (dir VARCHAR, job BIGINT, tp DOUBLE)")
        return
    con.execute(
        f"""
        CREATE TEMP TABLE tp AS
        WITH ev AS (
            SELECT f, first_step, base_mono, least(len(end_us), len(images), len(data_wait_us)) AS n,
                   end_us, images
            FROM (
                SELECT filename AS f, first_step, base_mono, end_us, data_wait_us,
                       CASE WHEN event = 'iterations' THEN CAST(images AS DOUBLE[]) END AS images
                FROM read_json({sql_list(files)}, format = 'newline_delimited', filename = true, columns = {{
                    event: 'VARCHAR', first_step: 'UBIGINT', base_mono: 'DOUBLE',
                    end_us: 'DOUBLE[]', images: 'JSON', data_wait_us: 'DOUBLE[]'}})
                WHERE event = 'iterations')),
        it AS (
            SELECT f, first_step, base_mono, unnest(range(n)) AS i,
                   unnest(end_us[1:n]) AS end_us, unnest(images[1:n]) AS img
            FROM ev),
        ends AS (
            SELECT it.f, jf.t0, jf.t1, first_step + i AS step, base_mono + end_us * 1e-6 AS e, img
            FROM it JOIN job_files AS jf ON it.f = jf.f),
        spans AS (
            SELECT f, t0, t1, step, e, img,
                   coalesce(lag(e) OVER (PARTITION BY f ORDER BY step), t0) AS s,
                   min(CASE WHEN e >= t1 THEN step END) OVER (PARTITION BY f) AS reach
            FROM ends),
        shares AS (
            SELECT f, t0, t1, step, e, img,
                   CASE WHEN reach IS NOT NULL AND step > reach THEN 0.0
                        WHEN e - s > 0 THEN greatest(least((least(e, t1) - greatest(s, t0)) / (e - s), 1.0), 0.0)
                        ELSE CAST(e > t0 AND e <= t1 AS DOUBLE) END AS share
            FROM spans),
        per_job AS (
            SELECT f, any_value(t0) AS t0, any_value(t1) AS t1, sum(img * share) AS credited,
                   arg_max(e, step) AS last
            FROM shares GROUP BY f)
        SELECT jf.dir, jf.job,
               CASE WHEN p.last IS NULL OR p.last <= p.t0 OR p.t1 <= p.t0 THEN NULL
                    ELSE p.credited / (least(p.t1, p.last) - p.t0) END AS tp
        FROM job_files AS jf LEFT JOIN per_job AS p ON jf.f = p.f
        """
    )


def header(path):
    """The column names of a gzip-compressed CSV file (its first line)."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return f.readline().rstrip("\r\n").split(",")


def csv_scan(files, types):
    """A SQL query of the rows of every CSV file in `files`: its `filename` and the columns of
    `types` (name: SQL type), NULL where a file lacks one. Files are read by `read_csv` with
    their columns given (DuckDB's sniffing of every file, `union_by_name`, costs more than the
    reading), one `read_csv` per distinct header."""
    by_header = {}
    for f in files:
        by_header.setdefault(tuple(header(f)), []).append(f)
    parts = []
    for cols, group in by_header.items():
        spec = ", ".join(f"'{c}': '{types.get(c, 'VARCHAR')}'" for c in cols)
        pick = ", ".join(c if c in cols else f"CAST(NULL AS {t}) AS {c}" for c, t in types.items())
        parts.append(
            f"SELECT filename, {pick} FROM read_csv({sql_list(group)}, header = true, auto_detect = false, "
            f"filename = true, columns = {{{spec}}})"
        )
    return " UNION ALL ".join(parts)


def telemetry(con):
    """Table `gpu`: per run, of the whole-GPU rows in the window, the means, peak memory and energy.

    A row with some GPM metrics missing counts for none of them; a GPM column a file lacks is
    missing in every row of it.
    """
    files = [r[0] + "/telemetry.csv.gz" for r in con.execute("SELECT dir FROM ok ORDER BY dir").fetchall()]
    if not files:
        con.execute(
            "CREATE TEMP TABLE gpu (dir VARCHAR, power_w DOUBLE, gpu_util_pct DOUBLE, sm_activity_pct DOUBLE, "
            "mem_used_bytes_max DOUBLE, energy_j DOUBLE)"
        )
        return
    numeric = ("mono", "instance", "power_w", "energy_j", "gpu_util_pct", "mem_used_bytes") + GPM
    scan = csv_scan(files, {c: "DOUBLE" for c in numeric})
    gpm_ok = " AND ".join(f"{c} IS NOT NULL" for c in GPM)
    con.execute(
        f"""
        CREATE TEMP TABLE gpu AS
        WITH rows AS (
            SELECT ok.dir, ok.t0, ok.t1, mono, power_w, gpu_util_pct, mem_used_bytes, energy_j,
                   CASE WHEN {gpm_ok} THEN sm_activity_pct END AS sm_activity_pct
            FROM ({scan}) AS t
            JOIN ok ON t.filename = ok.dir || '/telemetry.csv.gz'
            WHERE mono >= ok.t0 AND mono <= ok.t1 AND (instance < 0 OR instance IS NULL)),
        agg AS (
            SELECT dir, any_value(t0) AS t0, any_value(t1) AS t1,
                   avg(power_w) AS power_w, avg(gpu_util_pct) AS gpu_util_pct,
                   avg(sm_activity_pct) AS sm_activity_pct, max(mem_used_bytes) AS mem_used_bytes_max,
                   count(energy_j) AS n_e,
                   min(mono) FILTER (WHERE energy_j IS NOT NULL) AS m0,
                   max(mono) FILTER (WHERE energy_j IS NOT NULL) AS m1,
                   arg_min(energy_j, mono) FILTER (WHERE energy_j IS NOT NULL) AS e0,
                   arg_max(energy_j, mono) FILTER (WHERE energy_j IS NOT NULL) AS e1
            FROM rows GROUP BY dir)
        SELECT dir, power_w, gpu_util_pct, sm_activity_pct, mem_used_bytes_max,
               CASE WHEN n_e >= 2 AND m1 > m0 THEN (e1 - e0) / (m1 - m0) * (t1 - t0) END AS energy_j
        FROM agg
        """
    )


def processes(con):
    """Table `cpu` (dir, job, cpu_cores): each job's mean CPU use in the window, in cores."""
    files = [r[0] + "/processes.csv.gz" for r in con.execute("SELECT dir FROM ok ORDER BY dir").fetchall()]
    if not files:
        con.execute("CREATE TEMP TABLE cpu (dir VARCHAR, job BIGINT, cpu_cores DOUBLE)")
        return
    con.execute(
        f"""
        CREATE TEMP TABLE cpu AS
        SELECT ok.dir, job, avg(cpu_pct) / 100.0 AS cpu_cores
        FROM ({csv_scan(files, {"mono": "DOUBLE", "job": "BIGINT", "cpu_pct": "DOUBLE"})}) AS t
        JOIN ok ON t.filename = ok.dir || '/processes.csv.gz'
        WHERE mono >= ok.t0 AND mono <= ok.t1 AND job IS NOT NULL
        GROUP BY ok.dir, job
        """
    )


def aggregates(con):
    """Tables `run_agg` and `workload_agg`: aggregate throughput and ratio (STP) per run, medians per workload.

    The ratio's baseline for a job is the median throughput, on the same GPU, of the runs of
    its model (model, dataset, batch, data) alone: `exclusive` runs where there are any for
    the model, else one-job `naive` runs.
    """
    con.execute(
        """
        CREATE TEMP TABLE jobs AS
        SELECT ok.dir, ok.uuid, r.j AS job, tp.tp, cpu.cpu_cores,
               CASE WHEN r.j < len(ok.wjobs) THEN ok.wjobs[r.j + 1] END AS wj, ok.wdata
        FROM ok, range(ok.njobs) AS r(j)
        LEFT JOIN tp ON tp.dir = ok.dir AND tp.job = r.j
        LEFT JOIN cpu ON cpu.dir = ok.dir AND cpu.job = r.j
        """
    )
    con.execute(
        """
        CREATE TEMP TABLE base AS
        WITH alone AS (
            SELECT ok.mode, ok.uuid, ok.wjobs[1].model AS model, ok.wjobs[1].dataset AS dataset,
                   ok.wjobs[1].batch_size AS batch_size, ok.wdata AS wdata, jobs.tp
            FROM ok JOIN jobs ON jobs.dir = ok.dir AND jobs.job = 0
            WHERE ok.mode IN ('exclusive', 'naive') AND len(ok.wjobs) = 1 AND jobs.tp IS NOT NULL),
        chosen AS (
            SELECT model, dataset, batch_size, wdata,
                   CASE WHEN bool_or(mode = 'exclusive') THEN 'exclusive' ELSE 'naive' END AS mode
            FROM alone GROUP BY ALL)
        SELECT a.model, a.dataset, a.batch_size, a.wdata, a.uuid, median(a.tp) AS tp
        FROM alone AS a JOIN chosen AS c USING (model, dataset, batch_size, wdata, mode)
        GROUP BY ALL
        """
    )
    con.execute(
        """
        CREATE TEMP TABLE run_agg AS
        WITH per_job AS (
            SELECT j.dir, j.tp, j.wj IS NOT NULL AS zipped, j.tp / b.tp AS ratio
            FROM jobs AS j LEFT JOIN base AS b
              ON b.model = j.wj.model AND b.dataset = j.wj.dataset AND b.batch_size = j.wj.batch_size
             AND b.wdata = j.wdata AND b.uuid = j.uuid)
        SELECT ok.dir, ok.run_id, ok.workload_id,
               CASE WHEN count(per_job.dir) FILTER (WHERE per_job.tp IS NULL) = 0
                    THEN coalesce(sum(per_job.tp), 0.0) END AS aggregate_throughput,
               CASE WHEN count(per_job.dir) FILTER (WHERE per_job.zipped) > 0
                     AND count(per_job.dir) FILTER (WHERE per_job.zipped AND per_job.ratio IS NULL) = 0
                    THEN sum(per_job.ratio) FILTER (WHERE per_job.zipped) END AS aggregate_ratio
        FROM ok LEFT JOIN per_job ON per_job.dir = ok.dir
        GROUP BY ok.dir, ok.run_id, ok.workload_id
        """
    )
    con.execute(
        """
        CREATE TEMP TABLE workload_agg AS
        SELECT workload_id, median(aggregate_throughput) AS aggregate_throughput,
               median(aggregate_ratio) AS aggregate_ratio
        FROM run_agg GROUP BY workload_id
        """
    )


def as_json(con):
    """The pandas script's JSON shape, from the tables."""
    jobs = {}
    for d, job, tp, cpu in con.execute("SELECT dir, job, tp, cpu_cores FROM jobs ORDER BY dir, job").fetchall():
        jobs.setdefault(d, []).append({"throughput": tp, "cpu_cores": cpu})
    gpu = {r[0]: r[1:] for r in con.execute("SELECT * FROM gpu").fetchall()}
    runs = {}
    for d, run_id, _, agg_tp, agg_ratio in con.execute("SELECT * FROM run_agg ORDER BY dir").fetchall():
        v = {"jobs": jobs.get(d, []), "aggregate_throughput": agg_tp, "aggregate_ratio": agg_ratio}
        power, util, sm, mem, energy = gpu.get(d, (None,) * 5)
        v.update(power_w=power, gpu_util_pct=util, sm_activity_pct=sm, mem_used_bytes_max=mem)
        if energy is not None:
            v["energy_j"] = energy
        runs[run_id] = v
    workloads = {
        w: {"aggregate_throughput": tp, "aggregate_ratio": stp}
        for w, tp, stp in con.execute("SELECT * FROM workload_agg").fetchall()
    }
    return {"runs": runs, "workloads": workloads}


def main(campaign, out_path):
    start = time.monotonic()
    con = duckdb.connect()
    load_runs(con, campaign)
    job_throughputs(con)
    telemetry(con)
    processes(con)
    aggregates(con)
    out = as_json(con)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, sort_keys=True)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"runs={len(out['runs'])} peak_kb={peak_kb} seconds={time.monotonic() - start:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
