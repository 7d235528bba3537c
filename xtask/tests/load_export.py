"""Loads the frames `cargo xtask export` wrote in polars, pandas and DuckDB, as a user would,
and prints as JSON what each engine read: per frame its rows and each column's type, and
the values the test holds to the analysis' results (floats as their 64-bit patterns, so that
they compare to the bit). An engine that cannot be imported is named under "missing" with why.

usage: python3 load_export.py EXPORT_DIR FRAME...
"""

import json
import math
import struct
import sys


def bits(x):
    """A float's 64-bit pattern, None for a missing value."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def values(rows):
    """rows: the frames' rows as dicts (column -> value) per frame."""
    return {
        "workloads": {
            r["workload_id"]: [bits(r[c]) for c in
                               ("stp_median", "stp_ci_low", "stp_ci_high", "aggregate_throughput_img_s_median")]
            for r in rows["workloads"]
        },
        "runs": {r["run_id"]: bits(r["stp"]) for r in rows["runs"]},
        "jobs": [[r["run_id"], int(r["job_index"]), bits(r["throughput_img_s"])] for r in rows["jobs"]],
    }


def with_polars(folder, frames):
    import polars as pl

    kinds = {pl.Float64: "float", pl.Int64: "integer", pl.Boolean: "boolean", pl.String: "text"}
    out, rows = {}, {}
    for name in frames:
        df = pl.read_csv(f"{folder}/{name}.csv", infer_schema_length=None)
        out[name] = {
            "rows": df.height,
            "types": {c: "empty" if df[c].null_count() == df.height else kinds.get(df.schema[c], f"other:{df.schema[c]}")
                      for c in df.columns},
        }
        rows[name] = df.to_dicts()
    return out, rows


def with_pandas(folder, frames):
    import pandas as pd

    def kind(series):
        if series.isna().all():
            return "empty"
        dtype = series.dtype
        if pd.api.types.is_bool_dtype(dtype):
            return "boolean"
        if pd.api.types.is_integer_dtype(dtype):
            return "integer"
        if pd.api.types.is_float_dtype(dtype):
            return "float"
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            return "text"
        return f"other:{dtype}"

    out, rows = {}, {}
    for name in frames:
        df = pd.read_csv(f"{folder}/{name}.csv", keep_default_na=False, na_values=[""])
        out[name] = {"rows": len(df), "types": {c: kind(df[c]) for c in df.columns}}
        rows[name] = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
                      for r in df.to_dict("records")]
    return out, rows


def with_duckdb(folder, frames):
    import duckdb

    kinds = {"DOUBLE": "float", "BIGINT": "integer", "BOOLEAN": "boolean", "VARCHAR": "text"}
    con = duckdb.connect()
    out, rows = {}, {}
    for name in frames:
        rel = con.read_csv(f"{folder}/{name}.csv")
        names, types = rel.columns, [str(t) for t in rel.types]
        data = rel.fetchall()
        empty = {c: all(row[i] is None for row in data) for i, c in enumerate(names)}
        out[name] = {"rows": len(data),
                     "types": {c: "empty" if empty[c] else kinds.get(t, f"other:{t}") for c, t in zip(names, types)}}
        rows[name] = [dict(zip(names, row)) for row in data]
    return out, rows


def main():
    folder, frames = sys.argv[1], sys.argv[2:]
    report = {"engines": {}, "missing": {}}
    for engine, load in (("polars", with_polars), ("pandas", with_pandas), ("duckdb", with_duckdb)):
        try:
            loaded, rows = load(folder, frames)
        except ImportError as e:
            report["missing"][engine] = str(e)
            continue
        report["engines"][engine] = {"frames": loaded, **values(rows)}
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
