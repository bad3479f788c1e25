"""The destructive-program table's rows for programs that delete resources or stop services:
the cloud, container and package command lines (docker, kubectl, terraform, aws, npm, apt,
...), kill, systemctl, iptables, ip6tables and nft, redis-cli.

``SERVICE_JUDGES`` maps each program to its rule: ``rule(name, args) -> str``, the reason the
command asks again after "always", or "" when it may run. The rows are described in
``destructive_table.py``'s docstring, which joins them with ``destructive_files.py``'s.
Words are parsed words; ``None`` is a word not known before it runs (a glob, ``{}``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, short_hits, split_options


def _deleting_cli(name: str, args: Sequence[Arg]) -> str:
    options, operands = split_options(args)
    verbs = _DELETING_VERBS | _MORE_VERBS.get(name, frozenset())
    for operand in operands:
        if operand is None:
            continue
        verb = operand.casefold()
        if verb in verbs or verb.startswith(("delete-", "terminate-", "remove-")):
            return f"{name} {operand}: deletes resources"
    # an option that deletes (aws s3 sync --delete, kubectl apply --prune), or its short form
    deleting = next((o for o in options if o.startswith(_DELETING_OPTIONS)), None)
    if hit := deleting or short_hits(options, _DELETING_SHORT.get(name, "")):
        return f"{name} {hit}: deletes resources"
    destroy = ("-destroy", "--destroy")  # terraform's single-dash long option
    if hit := next((a for a in args if a is not None and a.split("=", 1)[0] in destroy), None):
        return f"{name} {hit}: deletes resources"
    return _scaled_to_zero(name, args)


def _scaled_to_zero(name: str, args: Sequence[Arg]) -> str:
    """Why a count set to zero stops every instance of a service (``kubectl scale
    --replicas=0``, ``docker service scale web=0``, ``aws ecs update-service --desired-count
    0``, ``heroku ps:scale web=0``, ``flyctl scale count 0``), or ""."""
    words = [a for a in args if a is not None]
    scaling = any(w.casefold() in _SCALE_VERBS for w in words)
    # the word after each (cut to none for no word: ``docker`` alone raised here)
    for word, following in zip(words, [*words[1:], ""][: len(words)], strict=True):
        option, _, glued = word.partition("=")
        if option in _COUNT_OPTIONS:
            value = glued if "=" in word else following
            if value.rsplit("=", 1)[-1] in _ZERO:
                shown = word if "=" in word else f"{word} {value}"
                return f"{name} {shown}: scales a service to zero (stops every instance)"
        elif scaling and not word.startswith("-") and word.rsplit("=", 1)[-1] in _ZERO:
            return f"{name} scale {word}: scales a service to zero (stops every instance)"
    return ""


def _kill(name: str, args: Sequence[Arg]) -> str:
    # a pid of -1 signals every process the user may signal, 0 or -PGID a whole group
    for arg in args:
        if arg is None:
            return f"{name} with a glob or generated operand"
        if arg == "0" or (arg.startswith("-") and arg[1:].isdigit() and not _is_signal(args, arg)):
            return f"{name} {arg}: signals every process of a group or of the user"
    return ""


def _is_signal(args: Sequence[Arg], arg: str) -> bool:
    """``kill -9 PID``: a first ``-NUMBER`` before any operand is the signal, not a group."""
    first = next((a for a in args if a is not None and a.startswith("-")), None)
    operands_before = any(
        a is not None and not a.startswith("-") for a in args[: list(args).index(arg)]
    )
    return arg == first and not operands_before and arg != "-1"


def _verbs(verbs: frozenset[str], why: str) -> Callable[[str, Sequence[Arg]], str]:
    """The program asks when an operand (or an option, for ``iptables -F``) is one of
    ``verbs``, or unknown."""

    def rule(name: str, args: Sequence[Arg]) -> str:
        for arg in args:
            if arg is None:
                return f"{name} with a glob or generated word"
            if arg.casefold() in verbs:
                return f"{name} {arg}: {why}"
        return ""

    return rule


_DELETING_VERBS = frozenset(
    [
        "delete",
        "destroy",
        "prune",
        "rm",
        "rmi",
        "purge",
        "uninstall",
        "unpublish",
        "remove",
        "autoremove",
        "rb",
        "down",
        "kill",
        "drop",
        "erase",
        "wipe",
        "nuke",
        "reset",
        "del",
        "rmdir",
        "undefine",
        "drain",
    ]
)
_SCALE_VERBS = frozenset(["scale", "ps:scale", "resize", "set-desired-capacity"])
_COUNT_OPTIONS = frozenset(
    [
        "--replicas", "--desired-count", "--desired-capacity", "--max-size", "--size",
        "--new-capacity", "--scale", "--count", "--instance-count", "--num-nodes",
    ]
)  # fmt: skip
_ZERO = frozenset(["0", "00", "+0"])
_DELETING_OPTIONS = ("--delete", "--prune", "--purge", "--remove")
_DELETING_SHORT = {"dpkg": "rP", "gsutil": "d"}  # dpkg -r/-P, gsutil rsync -d
# verbs that delete only in one program's words (rclone sync/move remove files as they go)
_MORE_VERBS = {
    "rclone": frozenset(["sync", "move", "deletefile", "rmdirs", "cleanup", "dedupe"]),
    "cmake": frozenset(["remove_directory"]),  # cmake -E remove_directory DIR
}
_DELETING_CLIS = [
    "docker",
    "podman",
    "kubectl",
    "oc",
    "helm",
    "terraform",
    "tofu",
    "pulumi",
    "aws",
    "gcloud",
    "az",
    "gh",
    "glab",
    "heroku",
    "flyctl",
    "npm",
    "pip",
    "pip3",
    "brew",
    "apt",
    "apt-get",
    "yum",
    "dnf",
    "snap", "gem", "cargo", "conda", "mamba", "micromamba", "pipx", "rustup", "yarn", "pnpm",
    "bun", "composer", "poetry", "pdm", "uv", "apk", "flatpak", "zypper", "port", "dpkg",
    "rclone", "mc", "s3cmd", "gsutil", "bq", "docker-compose", "doctl", "hcloud", "vercel",
    "netlify", "wrangler", "firebase", "supabase", "eksctl", "minikube", "kind", "k3d",
    "nomad", "vagrant", "multipass", "lxc", "virsh", "openstack", "dotnet", "cmake",
]  # fmt: skip

_NETWORK_RUNS = frozenset(["-e", "--exec", "--sh-exec", "--lua-exec"])  # nc -e /bin/sh
_SERVICE_VERBS = frozenset(
    ["stop", "kill", "disable", "mask", "isolate", "poweroff", "reboot", "halt", "kexec"]
)
_FIREWALL_VERBS = frozenset(["-f", "--flush", "-x", "--delete-chain", "-d", "--delete", "flush"])
_REDIS_VERBS = frozenset(
    ["flushall", "flushdb", "del", "unlink", "shutdown", "config", "eval", "script", "debug"]
)

# every subcommand word the rows above compare, for a glob that may expand to one
SERVICE_VERBS = frozenset(
    [*_DELETING_VERBS, *_SCALE_VERBS, *_SERVICE_VERBS, *_FIREWALL_VERBS, *_REDIS_VERBS,
     *(verb for verbs in _MORE_VERBS.values() for verb in verbs),
     "delete-x", "terminate-x", "remove-x", "shutdown", "stop"]
)  # fmt: skip

SERVICE_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    **dict.fromkeys(_DELETING_CLIS, _deleting_cli),
    "kill": _kill,
    "systemctl": _verbs(_SERVICE_VERBS, "stops or disables services"),
    **dict.fromkeys(
        ["iptables", "ip6tables", "nft"], _verbs(_FIREWALL_VERBS, "deletes firewall rules")
    ),
    "redis-cli": _verbs(_REDIS_VERBS, "deletes keys, stops or reconfigures the server"),
    **dict.fromkeys(
        ["nc", "ncat", "netcat"],
        _verbs(_NETWORK_RUNS, "runs a program for whoever connects"),
    ),
    "mysqladmin": _verbs(frozenset(["drop", "shutdown", "kill"]), "drops or stops databases"),
    "pg_ctl": _verbs(frozenset(["stop", "kill"]), "stops the database server"),
    "pg_ctlcluster": _verbs(frozenset(["stop"]), "stops the database server"),
}
