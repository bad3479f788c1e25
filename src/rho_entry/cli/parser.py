"""The argument parser of ``rho-agent``: standard library only, so ``--help`` is instant.

Nothing here imports httpx, yaml, cattrs or a driver; the rest of the CLI is imported after
parsing. Every setting flag defaults to None ("not given"), so that settings can tell a flag
from the environment and the config file.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rho_entry.cli.budget_flags import add_budget_flags
from rho_entry.cli.exit_codes import EXIT_CODES_HELP
from rho_entry.usage import UsageParser, parsed
from rho_entry.version import VERSION

DESCRIPTION = """\
Run an agent on a task (one-shot), or open an interactive session (REPL).

  rho-agent "task"            run once and exit (text on stdout, progress on stderr)
  rho-agent                   REPL on a terminal; reads the task from stdin otherwise
  rho-agent monitor ...       watch and control running sessions (see: rho-agent monitor -h)
  rho-agent export ID         print a session's trace as one JSON document (-o FILE)
  rho-agent ps | kill ID      short for: monitor ps | monitor cancel ID (kill: also cancel)
  rho-agent fork ID --at N    a new session from turn N of ID (without --at: list turns)
  rho-agent eval bird ...     run BIRD-Bench text-to-SQL (see: rho-agent eval -h)
  rho-agent continuum PRD     build a PRD with developer sessions (docs/continuum.md)
  rho-agent stats [ID|--all]  telemetry: model calls (latency, tokens, cost), tool calls
  rho-agent serve             serve sessions over HTTP (see: rho-agent serve -h)
  rho-agent worker ...        run durable runs from a queue (extra dbos; docs/durable.md)
  rho-agent queue ...         enqueue, wait for, approve durable runs (rho-agent queue -h)
  rho-agent mcp list          MCP servers configured: state and tools (docs/mcp.md)
"""

EPILOG = f"""\
environment (flags win over the environment, which wins over --config):
  OPENAI_API_KEY, ANTHROPIC_API_KEY   API keys (or name another with --api-key-env)
  OPENAI_BASE_URL, OPENAI_MODEL       endpoint and model (RHO_AGENT_BASE_URL/_MODEL win)
  RHO_AGENT_PROFILE, RHO_AGENT_PROVIDER, RHO_AGENT_WORKING_DIR, RHO_AGENT_BACKEND,
  RHO_AGENT_SERVICE_TIER, RHO_AGENT_REASONING_EFFORT, RHO_AGENT_MAX_TURNS,
  RHO_AGENT_CONTEXT_WINDOW, RHO_AGENT_AUTO_APPROVE, RHO_AGENT_API_KEY_ENV,
  RHO_AGENT_TIMEOUT, RHO_AGENT_RETRIES (--timeout, --retries),
  RHO_AGENT_CONFIG, RHO_AGENT_PREVIEW_LINES   the flags of the same name
  RHO_AGENT_HOME      config directory (default $XDG_CONFIG_HOME/rho-agent or
                      ~/.config/rho-agent): sessions/, history, default.md, profiles/
  NO_COLOR            disable colour (also off when output is not a terminal)

exit codes:
{EXIT_CODES_HELP}

examples:
  rho-agent --model demo "what is in this directory?"     offline demo, no account
  rho-agent -m gpt-5-mini --profile developer "fix the failing test"
  rho-agent --base-url http://localhost:11434/v1 -m qwen3 "summarise README.md"
  rho-agent -p review.md --var repo=api -o review.md --force
  rho-agent --json "count the TODOs" | jq -c 'select(.kind=="tool_start")'
  rho-agent --resume latest
"""


def build_parser() -> UsageParser:
    """The ``rho-agent`` argument parser (flags documented in its help)."""
    parser = UsageParser(
        prog="rho-agent",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("task", nargs="?", help="the task; omit it for the REPL (or stdin)")
    parser.add_argument("--version", action="version", version=f"rho-agent {VERSION}")

    model = parser.add_argument_group("model")
    model.add_argument("-m", "--model", help="model id, or 'demo' for the offline demo model")
    model.add_argument("--base-url", help="OpenAI-compatible endpoint (vLLM, Ollama, ...)")
    model.add_argument("--api-key-env", metavar="VAR", help="read the API key from VAR")
    model.add_argument(
        "--provider",
        help="kind of server: openai, anthropic, vllm, ollama, groq, cerebras, llamacpp, "
        "llama-cpp-python, openrouter, azure or generic (default: from the base URL's host, "
        "or asked from the server; an unknown name lists them all)",
    )
    model.add_argument("--reasoning-effort", metavar="LEVEL", help="e.g. low, medium, high")
    model.add_argument("--service-tier", metavar="TIER", help="e.g. flex, priority")
    model.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="for compaction (default: what the server reports, else 100000)",
    )
    model.add_argument(
        "--tool-choice",
        metavar="CHOICE",
        help="auto, none, required, or a tool name to force on the first call of a turn",
    )
    model.add_argument(
        "--timeout",
        dest="model_timeout",
        type=float,
        metavar="SECONDS",
        help="longest wait for the model's next response piece; also bounds connecting "
        "(default 120)",
    )
    model.add_argument(
        "--retries",
        dest="model_retries",
        type=int,
        metavar="N",
        help="extra attempts after a failed model call (default 2; 0: none)",
    )
    model.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stream responses (default: where the server can)",
    )

    agent = parser.add_argument_group("agent")
    agent.add_argument(
        "--profile",
        help="readonly (default), developer, eval, a YAML path, or a name in "
        "<config dir>/profiles/",
    )
    agent.add_argument(
        "--shell-mode",
        choices=("restricted", "unrestricted"),
        help="override the profile's shell mode (its other tools are kept)",
    )
    agent.add_argument("-w", "--working-dir", metavar="DIR", help="workspace (default: cwd)")
    agent.add_argument("-c", "--config", metavar="FILE", help="AgentConfig YAML file")
    agent.add_argument(
        "--mcp-config",
        metavar="FILE",
        help="YAML file with mcp_servers: (MCP servers whose tools the agent may use)",
    )
    agent.add_argument(
        "-s", "--system-prompt", metavar="FILE|TEXT", help="system prompt: a .md template or text"
    )
    agent.add_argument(
        "-p",
        "--prompt",
        metavar="TEMPLATE",
        help="task template (.md with frontmatter, or a name in <config dir>/prompts/)",
    )
    agent.add_argument(
        "--var", action="append", default=[], metavar="KEY=VALUE", help="template variable"
    )
    agent.add_argument("--vars-file", metavar="FILE", help="YAML mapping of template variables")
    agent.add_argument(
        "--max-turns", type=int, metavar="N", help="model calls per run (default 100; 0: no limit)"
    )
    agent.add_argument(
        "--repeat-limit",
        type=int,
        metavar="N",
        help="the same tool call N times in a row: the model is told, then the run ends "
        "stuck (default 3; 0: never)",
    )
    agent.add_argument(
        "--output-schema",
        metavar="FILE",
        help="a JSON Schema file the final answer must match (parsed into the result; "
        "--json prints it as 'output')",
    )
    agent.add_argument("--backend", help="where tools run: local (default)")
    agent.add_argument(
        "--upload",
        action="append",
        default=[],
        metavar="LOCAL:REMOTE",
        help="put a file or directory into the sandbox (or workspace) before the run; "
        "repeatable; secrets are never uploaded",
    )
    agent.add_argument(
        "--download",
        action="append",
        default=[],
        metavar="REMOTE:LOCAL",
        help="copy a file the agent left back here after the run; repeatable",
    )
    agent.add_argument(
        "--dockerfile", metavar="FILE", help="build the Daytona sandbox from FILE (implies daytona)"
    )
    agent.add_argument(
        "--snapshot",
        metavar="NAME",
        help="start the Daytona sandbox from a snapshot (implies daytona)",
    )
    agent.add_argument(
        "-y",
        "--auto-approve",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run tool calls without asking (the REPL's /approve toggles it); never "
        "inherited by --resume or fork: give it again",
    )

    add_budget_flags(parser)

    output = parser.add_argument_group("output")
    output.add_argument("-o", "--output", metavar="FILE", help="write the final answer to FILE")
    output.add_argument("--force", action="store_true", help="let --output overwrite FILE")
    output.add_argument("--json", action="store_true", help="JSONL events on stdout (scripts)")
    output.add_argument("-q", "--quiet", action="store_true", help="only the final answer")
    output.add_argument(
        "-v", "--verbose", action="store_true", help="full tool output, reasoning, timings"
    )
    output.add_argument(
        "--preview-lines", type=int, metavar="N", help="tool output lines shown (default 6)"
    )

    sessions = parser.add_argument_group("sessions")
    sessions.add_argument("-l", "--list", action="store_true", help="list saved sessions")
    sessions.add_argument(
        "--store",
        metavar="URL",
        help="where sessions are kept: postgresql://... (shared by hosts), a directory or "
        "file:///path (default: $RHO_AGENT_STORE, the config's store:, else the config dir)",
    )
    sessions.add_argument(
        "-r",
        "--resume",
        metavar="ID",
        type=_session_ref,
        help="continue a session: latest, an id, a prefix, a path",
    )
    sessions.add_argument(
        "--approve",
        action="append",
        metavar="CALL@DIGEST|all",
        help="with --resume: approve a waiting tool call (its id or a prefix, with the digest "
        "it was shown with) and continue; all: whatever waits, unseen, as -y",
    )
    sessions.add_argument(
        "--deny",
        action="append",
        metavar="CALL|all",
        help="with --resume: reject a waiting tool call and continue",
    )
    sessions.add_argument(
        "--always",
        action="store_true",
        help="with --approve: the approved calls' tools run without asking for the rest of the run",
    )
    sessions.add_argument("--reason", metavar="TEXT", help="with --deny: why (the model reads it)")
    sessions.add_argument(
        "--server",
        metavar="URL",
        help="run on a `rho-agent serve` server (token from RHO_AGENT_SERVER_TOKEN)",
    )
    return parser


def parse_words(words: Sequence[str], *, commands: Sequence[str] = ()) -> argparse.Namespace | int:
    """The parsed invocation, or the exit code when parsing ended it: 0 after ``--help`` or
    ``--version`` (printed), 1 after a usage error (printed; ``commands``, the subcommands'
    names, for a hint at a misspelt one)."""
    parser = build_parser()
    parser.commands = commands
    return parsed(parser, words)


def _session_ref(text: str) -> str:
    """``--resume``'s value, refused when empty: ``--resume "$ID"`` with ID unset was no
    resume at all (a new session ran), and ``' '`` named the current directory."""
    if not text.strip():
        from rho_domain.ports.store import EMPTY_ID

        raise argparse.ArgumentTypeError(f"{text!r}: {EMPTY_ID}")
    return text
