"""The secrets policy compiles no regular expression: a process's first judgements (one of
each rule, under a policy with locations and homes too) cost no sre compile, where the union
of a rule group's ``fnmatch`` translations used to cost ~4-8 ms at the first file a tool
touched. Measured in a fresh process: this one's ``re`` cache holds what other tests
compiled."""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = """
import json
from re import _compiler
from rho_domain.secrets import DEFAULT_POLICY, SecretPolicy

compiled = []
real = _compiler.compile

def counting(pattern, flags=0):
    compiled.append(str(pattern))
    return real(pattern, flags)

_compiler.compile = counting
policy = SecretPolicy(
    locations=("/srv/agent/sessions",), homes=("/home/u",), open_trees=("/home/u/.config/nvim",)
)
verdicts = {}
for path in (
    "/home/u/work/src/app.py", "notes.txt", "/dev/null", "/proc/self/environ", "/home/u/.ssh",
    "/etc/ssh/ssh_host_rsa_key", "a/.env.local", "x.env", "/w/.env.example", "id_rsa",
    "id_rsa.pub", "/srv/agent/sessions/s1", "/home/u/.bashrc", "/home/u/.config/nvim/init.lua",
    "keys/id_github.pub", "/w/cert.PEM", "/w/store/objects/5a/ea61", "/w/objects/5g",
):
    verdicts[path] = [DEFAULT_POLICY.refusal(path), policy.refusal(path)]
print(json.dumps({"compiled": compiled, "verdicts": verdicts}))
"""


def test_judging_paths_compiles_no_expression() -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["compiled"] == []
    # the paths were judged, every rule reached: secrets refused, the rest let through
    refused = {path for path, (plain, _) in report["verdicts"].items() if plain}
    assert refused == {
        "/proc/self/environ", "/home/u/.ssh", "/etc/ssh/ssh_host_rsa_key", "a/.env.local",
        "x.env", "id_rsa", "/w/cert.PEM", "/w/store/objects/5a/ea61",
    }  # fmt: skip
    assert report["verdicts"]["/srv/agent/sessions/s1"][1] is not None
    assert report["verdicts"]["/home/u/.bashrc"][1] is not None
    assert report["verdicts"]["/home/u/.config/nvim/init.lua"][1] is None
