"""A session whose stored data cannot be read, on every route that names it.

A ``DELETE`` of a session whose trace is past its bound cancelled its run and ended its
streams, then answered 409 ``unreadable_session``: a refusal that had changed everything.
A meta.json past its bound (or not JSON) placed the session nowhere, so every route answered
404 'no session', as if it were not there; now 409 naming what is wrong (``lookup``), while
a session whose config places it outside the roots stays a 404."""

from __future__ import annotations

import os
from pathlib import Path

from server_support import app_for, by_prompt, client_for, finished_sessions, place

from rho_adapters.store.layout import META_BYTES
from rho_adapters.store.trace import TRACE_BYTES


async def test_a_refused_delete_changes_nothing_and_an_unreadable_summary_is_no_404(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    model = by_prompt({"hi": "done"})
    app = app_for(where, model)
    host = app.state.host
    async with client_for(app) as client:
        ids = await finished_sessions(client, 4)
        busy, summary, broken, elsewhere = ids
        assert (await client.post(f"/api/sessions/{busy}/chat", json={"prompt": "x"})).is_success
        await model.hanging.wait()  # its run is in progress
        os.truncate(where.sessions / busy / "trace.jsonl", TRACE_BYTES + 1)  # sparse
        refused = await client.delete(f"/api/sessions/{busy}")
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "unreadable_session"
        assert host.runs.active(busy)  # the refusal closed nothing: before, the run was gone
        cancelled = await client.post(f"/api/sessions/{busy}/cancel")
        assert cancelled.json()["outcome"] == "cancelling"  # what stops it reads no trace

        config = where.sessions / elsewhere / "config.yaml"
        config.write_text(config.read_text().replace(str(where.work.resolve()), "/elsewhere"))
        for sid in (summary, elsewhere):
            os.truncate(where.sessions / sid / "meta.json", META_BYTES + 1)
        (where.sessions / broken / "meta.json").write_text("{not json")
        for sid, status in ((summary, 409), (broken, 409), (elsewhere, 404)):
            for method, tail in (("GET", ""), ("DELETE", ""), ("GET", "/stream")):
                answer = await client.request(method, f"/api/sessions/{sid}{tail}")
                assert answer.status_code == status, (sid, method, tail, answer.text)
        # listed too, placed by their config.yaml (before: left out of the listing)
        rows = (await client.get("/api/sessions")).json()["sessions"]
        listed = {row["id"]: row for row in rows}
        assert {summary, broken} <= listed.keys()
        assert elsewhere not in listed
        assert listed[broken]["status"] == "unknown"
        assert f"rho-agent --resume {broken} rebuilds it" in listed[broken]["first_prompt"]
        moved = where.sessions / broken / "config.yaml"
        moved.write_text(moved.read_text().replace(str(where.work.resolve()), "/elsewhere"))
        again = (await client.get("/api/sessions")).json()["sessions"]
        assert broken in {row["id"] for row in again}  # placed once, not read at each poll
        message = (await client.get(f"/api/sessions/{summary}")).json()["error"]["message"]
        assert message == (
            f"session {summary}'s summary cannot be read (its meta.json, or its row's meta in a "
            "shared store: missing, not JSON, or past its bound); "
            f"`rho-agent --resume {summary}` rebuilds it from the trace"
        )


async def test_a_working_directory_with_a_nul_leaves_the_listing_whole(tmp_path: Path) -> None:
    """meta.json's ``working_dir`` with a NUL, or config.yaml's of a session whose meta.json
    cannot be read: placing it resolved that path, which raised ``ValueError`` ('embedded null
    byte'): GET /api/sessions (the dashboard's listing) was a 500 for every session. Now no
    such text is a path: meta.json's is left out, config.yaml's is refused as invalid."""
    where = place(tmp_path)
    app = app_for(where, by_prompt({"hi": "done"}))
    async with client_for(app) as client:
        by_meta, by_config, fine = await finished_sessions(client, 3)
        meta = where.sessions / by_meta / "meta.json"
        meta.write_text(meta.read_text().replace(str(where.work.resolve()), "/srv/\\u0000x"))
        config = where.sessions / by_config / "config.yaml"
        config.write_text(config.read_text().replace(str(where.work.resolve()), '"/srv/\\0x"'))
        (where.sessions / by_config / "meta.json").write_text("{not json")
        listing = await client.get("/api/sessions")
        assert listing.status_code == 200, listing.text
        listed = {row["id"] for row in listing.json()["sessions"]}
        assert listed == {by_meta, fine}  # by_meta placed by its config.yaml, in the roots
        assert (await client.get(f"/api/sessions/{by_meta}")).status_code == 409
        assert (await client.get(f"/api/sessions/{by_config}")).status_code == 404


async def test_a_stored_config_this_version_cannot_read_is_unreadable_not_invalid(
    tmp_path: Path,
) -> None:
    """A config.yaml (or a shared store's config row) that this version cannot read: a key
    another version wrote, a ``working_dir`` with a NUL. GET /api/sessions/ID answered 422
    'invalid', as if the request were, and a chat 403 naming the field ``profile``; now both
    are 409 ``unreadable_session`` naming the file and the key, as other stored data."""
    where = place(tmp_path)
    app = app_for(where, by_prompt({"hi": "done"}))
    async with client_for(app) as client:
        newer, nul = await finished_sessions(client, 2)
        work = where.work.resolve()
        for sid, old, new in (
            (newer, "model:", "new_setting: 1\nmodel:"),
            (nul, f"working_dir: {work}", f'working_dir: "{work}\\0x"'),
        ):
            config = where.sessions / sid / "config.yaml"
            config.write_text(config.read_text().replace(old, new, 1))
            for method, tail, body in (
                ("GET", "", None),  # before: 422 'invalid', as if the request were
                ("POST", "/chat", {"prompt": "hi"}),
                ("POST", "/resume", {}),
            ):
                answer = await client.request(method, f"/api/sessions/{sid}{tail}", json=body)
                assert answer.status_code == 409, (sid, tail, answer.text)
                error = answer.json()["error"]
                assert error["code"] == "unreadable_session", (sid, tail, error)
                assert str(config) in error["message"] or "NUL" in error["message"], error


async def test_a_run_here_whose_config_became_unreadable_is_still_cancelled(
    tmp_path: Path,
) -> None:
    """A run in progress in this server whose config.yaml was edited since it began (another
    version's key): POST /cancel read the stored config first and answered 409
    ``unreadable_session``, and DELETE (which says ``cancel`` stops its run) 409 too, so
    nothing could stop it. The run was admitted as it began: its stop reads nothing stored."""
    where = place(tmp_path)
    model = by_prompt({"hi": "done"})
    app = app_for(where, model)
    host = app.state.host
    async with client_for(app) as client:
        (busy,) = await finished_sessions(client, 1)
        assert (await client.post(f"/api/sessions/{busy}/chat", json={"prompt": "x"})).is_success
        await model.hanging.wait()  # its run is in progress
        config = where.sessions / busy / "config.yaml"
        config.write_text(config.read_text().replace("model:", "new_setting: 1\nmodel:", 1))
        refused = await client.delete(f"/api/sessions/{busy}")
        assert refused.json()["error"]["code"] == "unreadable_session", refused.text
        handle = host.runs.handles[busy]
        cancelled = await client.post(f"/api/sessions/{busy}/cancel")
        assert cancelled.json()["outcome"] == "cancelling", cancelled.text  # before: 409
        await handle.wait_done()
        assert not host.runs.active(busy)
        again = await client.post(f"/api/sessions/{busy}/cancel")  # nothing runs: read again
        assert again.json()["error"]["code"] == "unreadable_session", again.text
