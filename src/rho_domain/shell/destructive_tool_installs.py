"""The destructive-program table's rows for the other installers that put anyone's program
where later commands run it, outside the workspace: the languages' user-wide installers
(``cabal install``, ``stack install``, ``opam install``, ``luarocks install``, ``cpanm x``,
``easy_install x``, ``volta install x``: their ``bin`` directories are on the PATH), a tool's
plugins, which that tool runs at each later call (``gh extension install``, ``kubectl krew
install``, ``helm plugin install URL``, whose install hooks run at once, ``asdf plugin add
NAME URL``, ``poetry self add``, ``pdm self add``, an editor's ``--install-extension``), and
what chooses the programs a name runs (``mise use -g``, ``nix profile install``, ``nix-env
-i``, ``corepack enable``, ``brew tap`` and a formula from a tap, ``brew install user/tap/x``).

The languages' package managers are ``shell.destructive_installs``'s rows; a system's
package manager (``apt-get install jq``, ``brew install jq``) is
``shell.destructive_system_installs``'s.

Contract: ``TOOL_INSTALL_JUDGES`` maps each program to ``rule(name, args) -> str``, the
reason to ask again, or "".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rho_domain.shell.destructive_words import Arg, split_options

_WHY = "installs a program outside the workspace that later commands run"


def _verb(*verbs: str) -> Callable[[str, Sequence[Arg]], str]:
    """Asks when the first operand is one of ``verbs``; a verb ``group:verb`` is two words
    (``gh extension install``), and ``*`` any first operand (``cpanm Some::Module``)."""

    def rule(name: str, args: Sequence[Arg]) -> str:
        _, operands = split_options(args)
        words = [w for w in operands[:2] if w is not None]
        for verb in verbs:
            wanted = verb.split(":")
            if words[: len(wanted)] == wanted or (verb == "*" and words):
                return f"{name} {' '.join(words[: len(wanted)])}: {_WHY}"
        return ""

    return rule


def _options(*given: str) -> Callable[[str, Sequence[Arg]], str]:
    """Asks when one of the options ``given`` is there (``nix-env -i``, ``code
    --install-extension``, ``mise use -g``), its short form in a cluster too."""

    def rule(name: str, args: Sequence[Arg]) -> str:
        options, _ = split_options(args)
        hit = next((o for o in options if o.split("=", 1)[0] in given), None)
        return f"{name} {hit}: {_WHY}" if hit else ""

    return rule


def _corepack(name: str, args: Sequence[Arg]) -> str:
    """``corepack enable`` puts its shims beside node, on the PATH; ``install -g`` chooses
    the version they run everywhere."""
    _, operands = split_options(args)
    if operands[:1] == ["install"]:
        return _options("-g", "--global")(name, args)
    return _verb("enable")(name, args)


def _brew(name: str, args: Sequence[Arg]) -> str:
    """``brew tap`` adds anyone's formulae (Ruby run at each install); a formula named by its
    tap (``user/tap/x``), a URL or a ``.rb`` file is anyone's too (``brew install jq``, from
    the configured core, asks as a system install: ``destructive_system_installs``)."""
    _, operands = split_options(args)
    verb = operands[0] if operands else ""
    if verb == "tap" and operands[1:]:
        return f"brew tap: {_WHY} (a third party's formulae)"
    if verb in ("install", "reinstall", "upgrade"):
        if hit := next((w for w in operands[1:] if w is None or "/" in w or w.endswith(".rb")), ""):
            return f"brew {verb} {hit}: {_WHY} (a third party's formula)"
        if None in operands[1:]:
            return f"brew {verb} with a glob or generated word: {_WHY}"
    return ""


def _mise(name: str, args: Sequence[Arg]) -> str:
    _, operands = split_options(args)
    if operands[:1] == ["use"]:
        return _options("-g", "--global")(name, args)
    return _verb("plugins:install", "plugin:install", "plugins:add", "plugin:add")(name, args)


TOOL_INSTALL_JUDGES: dict[str, Callable[[str, Sequence[Arg]], str]] = {
    **dict.fromkeys(["cabal", "stack", "opam", "luarocks", "volta"], _verb("install")),
    **dict.fromkeys(["cpanm", "cpan", "easy_install"], _verb("*")),
    "gh": _verb("extension:install", "extension:upgrade", "ext:install", "ext:upgrade"),
    "kubectl": _verb("krew:install", "krew:upgrade"),
    "kubectl-krew": _verb("install", "upgrade"),
    "helm": _verb("plugin:install", "plugin:update"),
    "asdf": _verb("plugin:add", "plugin-add"),
    "poetry": _verb("self:add", "self:install", "self:update"),
    "pdm": _verb("self:add", "self:update"),
    **dict.fromkeys(
        ["code", "codium", "code-insiders", "cursor", "windsurf"], _options("--install-extension")
    ),
    "mise": _mise,
    "nix": _verb("profile:install", "profile:add", "profile:upgrade"),
    "nix-env": _options("-i", "--install", "-u", "--upgrade"),
    "corepack": _corepack,
    "brew": _brew,
}
