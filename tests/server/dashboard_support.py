"""Sessions for the dashboard tests, made the way a user makes them: through the HTTP API of a
real server, each run played by a model that answers by the prompt's first word.

``fail ...`` ends in a model error (the run's status is ``error``), ``ask ...`` writes a file
under the developer profile (the run waits for approval), ``look ...`` reads two files (one
missing: a failed tool call) and then answers, ``loop ...`` calls a tool with a turn limit of 1
(``max_turns``), ``hang ...`` never finishes (a run in progress until cancelled), anything
else answers at once. Older sessions are made by moving a
session's ``created_at`` back in its meta.json, as a session of last week has it.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from server_support import http

from rho_adapters.fakes import FunctionModel, Turn, call, text, tools
from rho_domain.errors import ModelHTTPError
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest

MODELS = ("gpt-4o-mini", "claude-3-5-sonnet-20241022", "qwen2.5-coder-32b-instruct-q4_k_m")


def _answer(request: ModelRequest) -> Turn:
    prompt = next(m.content for m in request.messages if isinstance(m, UserMessage))
    word = prompt.split()[0]
    answered = request.messages[-1].role == "tool"
    if word == "hang":
        return Turn(text="Working on it", hang=True)
    if word == "fail":
        return Turn(error=ModelHTTPError("HTTP 500: the endpoint broke", status=500))
    if word == "ask" and not answered:
        return tools(call("write", {"path": "notes.txt", "content": "hi"}))
    if word == "look" and not answered:
        reads = (call("read", {"path": "README.md"}), call("read", {"path": "missing.txt"}))
        return tools(*reads, input_tokens=48_210, output_tokens=1_305)
    if word == "loop":
        return tools(call("read", {"path": "README.md"}), input_tokens=2_000, output_tokens=10)
    return text(f"Answered: {prompt}", input_tokens=23_456, output_tokens=1_890)


def model() -> FunctionModel:
    """The model behind every session of these tests."""
    return FunctionModel(_answer)


PROMPTS = (
    "plain summarise the repository layout and list every module with its purpose",
    "look at the README and the missing notes",
    "fail on purpose",
    "ask to write the notes file",
    "loop until the turn limit",
)


def start(url: str, auth: dict[str, str], prompt: str, *, index: int = 0, wait: bool = True) -> str:
    """A new session running ``prompt``; returns when its run has ended or waits for an
    approval (at once when not ``wait``). The model varies with ``index``."""
    body: dict[str, Any] = {"prompt": prompt, "model": MODELS[index % len(MODELS)]}
    if prompt.startswith("ask"):
        body["profile"] = "developer"
    if prompt.startswith("loop"):
        body["max_turns"] = 1
    created = http().post(f"{url}/api/sessions", json=body, headers=auth)
    assert created.status_code == 201, created.text
    sid: str = created.json()["id"]
    if not wait:
        return sid
    done = http().get(f"{url}/api/sessions/{sid}/stream", params={"until": "idle"}, headers=auth)
    assert done.status_code == 200, done.text
    return sid


def run_started(url: str, auth: dict[str, str], sid: str) -> None:
    """Return once ``sid``'s run has really begun: its model call started (``llm_start`` on its
    event stream, replayed from the first line). The listing says ``running`` from the moment
    the server holds the run (``running_here``), before anything is written: a cancel sent
    then landed before the run's start (round 24)."""
    stream = f"{url}/api/sessions/{sid}/stream"
    with http().stream("GET", stream, headers=auth) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line == "event: llm_start":
                return
    raise AssertionError(f"the stream of {sid} ended before its model call began")


def seed(url: str, auth: dict[str, str], count: int, *, first: int = 0) -> list[str]:
    """``count`` sessions cycling through ``PROMPTS`` (every kind of outcome), numbered from
    ``first``, in that order; each has ended (or waits for approval) on return.

    Eight are made at a time, as eight browser tabs would: one after another, 50 sessions
    waited out each run's file writes in turn (12 s of a 19 s test at load 9). Eight stay
    well under the server's ``max_runs``, so none is refused as busy."""

    def one(i: int) -> str:
        return start(url, auth, f"{PROMPTS[i % len(PROMPTS)]} #{i}", index=i)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(one, range(first, first + count)))


def age(sessions: Path, sid: str, seconds: float) -> None:
    """Move a session's creation ``seconds`` into the past (its meta.json; a session the
    server still holds open rewrites it: give the server ``approval_hold=0``)."""
    meta_path = sessions / sid / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["created_at"] -= seconds
    meta_path.write_text(json.dumps(meta))


def column_texts(page: Any, column: str) -> list[str]:
    """The texts of one column of the shown rows, top to bottom."""
    texts: list[str] = page.locator(f"#sessions tbody td.c-{column}").all_inner_texts()
    return texts


def overflow(page: Any) -> dict[str, int]:
    """How the table's width compares with its card's (and the page's)."""
    sizes: dict[str, int] = page.evaluate(
        """() => {
          const card = document.querySelector('#sessions-card');
          const table = document.querySelector('#sessions');
          return {card_scroll: card.scrollWidth, card_client: card.clientWidth,
                  table: table.getBoundingClientRect().width,
                  page_scroll: document.documentElement.scrollWidth,
                  page_client: document.documentElement.clientWidth};
        }"""
    )
    return sizes


def dashboard(page: Any, url: str, token: str) -> None:
    """Open the dashboard as ``rho-agent serve`` prints its URL (the token in the fragment)."""
    page.goto(f"{url}/dashboard#token={token}")


def edges(page: Any, selector: str) -> list[dict[str, float]]:
    """Left and right edges of the visible elements matching ``selector``, and of the card."""
    found: list[dict[str, float]] = page.evaluate(
        """(selector) => {
          const card = document.querySelector('#sessions-card').getBoundingClientRect();
          return [...document.querySelectorAll(selector)]
            .filter((node) => node.offsetParent !== null)
            .map((node) => {
              const box = node.getBoundingClientRect();
              return {left: box.left, right: box.right, card_left: card.left,
                      card_right: card.right};
            });
        }""",
        selector,
    )
    return found
