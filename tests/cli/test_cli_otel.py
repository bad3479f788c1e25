"""The CLI records OpenTelemetry spans when the process has an SDK set up, as
``opentelemetry-instrument rho-agent ...`` does; otherwise it imports no OpenTelemetry."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import rho_process as rho

SITECUSTOMIZE = """
import json, os
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class Lines(SpanExporter):
    def export(self, spans):
        with open(os.environ["SPANS_FILE"], "a") as out:
            for span in spans:
                parent = span.parent.span_id if span.parent else None
                out.write(json.dumps({"name": span.name, "id": span.context.span_id,
                                      "parent": parent}) + "\\n")
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(Lines()))
trace.set_tracer_provider(provider)
"""


PROBE = """
import atexit, os, sys


def _report():
    with open(os.environ["MODS"], "w") as out:
        out.write(str(any(m.startswith("opentelemetry") for m in sys.modules)))


atexit.register(_report)
"""


def test_the_cli_records_spans_when_the_process_has_opentelemetry_set_up(tmp_path: Path) -> None:
    """As ``opentelemetry-instrument rho-agent ...`` would: an SDK provider set up before the
    CLI starts (here by a ``sitecustomize``). Without one the CLI imports no OpenTelemetry."""
    site, work, home = tmp_path / "site", tmp_path / "work", tmp_path / "home"
    for directory in (site, work, home):
        directory.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (work / "README.md").write_text("# Demo\n")
    spans_file = tmp_path / "spans.jsonl"
    done = rho(
        "-m", "demo", "What is here?", cwd=work, home=home,
        PYTHONPATH=str(site), SPANS_FILE=str(spans_file),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    by_name = {s["name"]: s for s in spans}
    session, run = by_name["rho.session"], by_name["invoke_agent rho-agent"]
    assert run["parent"] == session["id"]
    assert by_name["execute_tool list"]["parent"] == run["id"]
    assert [s["name"] for s in spans].count("chat demo") >= 2

    # The same run without the sitecustomize: no spans, and OpenTelemetry never imported.
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sitecustomize.py").write_text(PROBE)
    mods = tmp_path / "mods.txt"
    done = rho(
        "-m", "demo", "What is here?", cwd=work, home=home,
        PYTHONPATH=str(probe), MODS=str(mods),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert mods.read_text() == "False"
