"""DuckDB, pyarrow, Apache Spark and DataFusion read the same store with nothing but hive
partitioning, and agree on what is in it.

Why Spark too: it is where users go when one machine is not enough, and it is the strictest reader
(it rejects nanosecond timestamps and UUID-annotated ids outright). The store holds spans of several
services spread over partitions on two dates, with hour 0, 9, 10 and 23, so the unpadded hour
partition must type as an integer everywhere (`hour < 10` must work), plus the SDK scenario's spans
with nested columns (events, links, attribute maps, tool definitions), which every engine decodes.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

import genai_scenario as sc
import otlp_http
import synthetic
from collector_process import Collector
from store import query

SERVICES = {"acme-agent-host": 3, "acme-mcp-server": 2, "billing-svc": 1}  # requests per hour
HOURS = [(0, 0), (0, 9), (0, 10), (0, 23), (1, 0)]  # (day offset, hour)
SPANS_PER_REQUEST = 4


@pytest.fixture(scope="module")
def store(tripline_bin, tmp_path_factory):
    """A store filled over HTTP; returns (data_dir, expected spans per service, per hour<10)."""
    collector = Collector(tripline_bin, tmp_path_factory.mktemp("engines") / "data").start()
    expected: Counter[str] = Counter()
    below_ten = 0
    try:
        batch = 0
        for day, hour in HOURS:
            for service, n in SERVICES.items():
                for _ in range(n):
                    start = synthetic.DAY_START_NS + day * 24 * synthetic.HOUR_NS + hour * synthetic.HOUR_NS + batch
                    req = synthetic.tool_call_request(service, batch, SPANS_PER_REQUEST, start)
                    assert otlp_http.export(collector.traces_url, req).status == 200
                    expected[service] += SPANS_PER_REQUEST
                    below_ten += SPANS_PER_REQUEST if hour < 10 else 0
                    batch += 1
        scenario = sc.scenario_spans()
        assert otlp_http.export(collector.traces_url, encode_spans(scenario)).status == 200
        for span in scenario:
            service = span.resource.attributes["service.name"]
            expected[service] += 1
            below_ten += 1 if (span.start_time // synthetic.HOUR_NS) % 24 < 10 else 0
        assert collector.stop() == 0
    except BaseException:
        collector.kill()
        print(collector.output())
        raise
    return collector.data_dir, dict(expected), below_ten


def duckdb_counts(data_dir) -> dict[str, int]:
    rows = query(data_dir, "SELECT service_name, count(*) AS n FROM spans GROUP BY service_name")
    return {r["service_name"]: r["n"] for r in rows}


def test_duckdb_counts_what_was_sent(store):
    data_dir, expected, below_ten = store
    assert duckdb_counts(data_dir) == expected
    assert query(data_dir, "SELECT count(*) AS n FROM spans WHERE hour < 10")[0]["n"] == below_ten
    hours = query(data_dir, "SELECT DISTINCT date::VARCHAR AS d, hour FROM spans WHERE service_name = 'billing-svc' ORDER BY ALL")
    assert [(r["d"], r["hour"]) for r in hours] == [
        ("2026-11-30", 0),
        ("2026-11-30", 9),
        ("2026-11-30", 10),
        ("2026-11-30", 23),
        ("2026-12-01", 0),
    ]


def test_pyarrow_dataset_agrees_with_duckdb(store):
    data_dir, expected, _ = store
    dataset = ds.dataset(data_dir / "spans", format="parquet", partitioning="hive")
    table = dataset.to_table()  # every column, nested ones included
    assert table.num_rows == sum(expected.values())
    grouped = table.group_by("service_name").aggregate([("span_id", "count")])
    counts = dict(zip(grouped["service_name"].to_pylist(), grouped["span_id_count"].to_pylist()))
    assert counts == duckdb_counts(data_dir) == expected
    assert pa.types.is_integer(table.schema.field("hour").type)
    billing_hours = table.filter(pc.equal(table["service_name"], "billing-svc"))["hour"].to_pylist()
    assert sorted(set(billing_hours)) == [0, 9, 10, 23]


def test_spark_reads_the_store(store, spark):
    data_dir, expected, below_ten = store
    df = spark.read.parquet(str(data_dir / "spans"))
    assert df.count() == sum(expected.values())
    by_service = {r["service_name"]: r["count"] for r in df.groupBy("service_name").count().collect()}
    assert by_service == duckdb_counts(data_dir) == expected
    assert dict(df.dtypes)["hour"] == "int"
    assert df.filter("hour < 10").count() == below_ten
    # decode every column of every row, nested maps / lists / structs included
    rows = df.collect()
    assert len(rows) == sum(expected.values())
    tool = df.filter(f"gen_ai_tool_call_id = '{sc.TOOL_CALL_ID}' AND kind = 'INTERNAL' AND gen_ai_operation_name = 'execute_tool'")
    got = tool.select("gen_ai_tool_name", "start_time_unix_nano", "links", "attributes").collect()
    assert len(got) == 1
    assert got[0]["gen_ai_tool_name"] == sc.TOOL
    assert got[0]["attributes"]["acme.retry_count"]["int"] == 2
    assert len(got[0]["links"]) == 2
    spark_nanos = sorted(r["start_time_unix_nano"] for r in df.select("start_time_unix_nano").collect())
    duck_nanos = sorted(r["n"] for r in query(data_dir, "SELECT start_time_unix_nano AS n FROM spans"))
    assert spark_nanos == duck_nanos


def test_datafusion_reads_the_store(store):
    datafusion = pytest.importorskip("datafusion")
    data_dir, expected, below_ten = store
    ctx = datafusion.SessionContext()
    ctx.register_parquet("spans", str(data_dir / "spans"), table_partition_cols=[("date", pa.string()), ("hour", pa.int64())])
    batches = ctx.sql("SELECT service_name, count(*) AS n FROM spans GROUP BY service_name").collect()
    counts = {}
    for batch in batches:
        counts.update(dict(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist())))
    assert counts == expected
    below = ctx.sql("SELECT count(*) AS n FROM spans WHERE hour < 10").collect()[0].column(0).to_pylist()[0]
    assert below == below_ten
