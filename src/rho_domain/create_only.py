"""What create-only mode may create: an allowlist of documents and data (``CREATED_KINDS``),
in no hidden directory, minus the names tools find and act on. Pure rules over path
components, compared as a case-insensitive disk compares names (``paths.folded``), applied by
every executor to the workspace-relative path as given and as resolved, after
``write_rules.write_refusal`` (what no mode writes)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from rho_domain.paths import components, folded, normalize

# What create-only mode creates, by construction an allowlist (a denylist of the files tools
# run by themselves is never complete): a document or data file a person opens, a report, notes,
# a table, an export. Not code, not a build or tool configuration of any kind (conftest.py,
# sitecustomize.py, a .pth, Makefile, setup.py, tox.ini, .pre-commit-config.yaml, a workflow),
# and nothing inside a hidden directory, where tools keep the configuration they load
# (.devcontainer, .cargo, .github, .zed...). A readonly investigation writes its findings.
CREATED_KINDS = (
    ".md", ".markdown", ".txt", ".rst", ".csv", ".tsv", ".log", ".json", ".jsonl", ".ndjson"
)  # fmt: skip
# Files of those kinds that a tool finds by their name and acts on: npm, composer and deno run
# a package.json's, composer.json's and deno.json's scripts, and npm ci installs the tarballs
# a lockfile's "resolved" URLs name (their install scripts run); Nx runs a project.json's
# commands, Vercel a vercel.json's build and install commands, firebase deploy a
# firebase.json's predeploy hooks, Heroku an app.json's scripts, CMake configures from
# CMakeLists.txt and its presets (a compiler launcher is any command), Railway a
# railway.json's build and start commands; lefthook runs the commands of lefthook.json (and
# merges lefthook-local.json's) from the git hooks it installed, at the next commit; devbox runs
# a devbox.json's init_hook at every devbox shell and run (and at cd, through its direnv
# integration), nodemon a nodemon.json's exec and event commands; and coding agents
# follow the instructions in AGENTS.md (Codex's AGENTS.override.md, Amp's AGENT.md),
# CLAUDE.md and CLAUDE.local.md, GEMINI.md, QWEN.md, CRUSH.md and WARP.md.
# Their twins: Nx's workspace files (nx.json's targetDefaults and plugins; workspace.json and
# angular.json, whose targets name builders such as nx:run-commands and their commands),
# Rush's rush.json (eventHooks: shell commands at install and build), Wrangler's build
# command (wrangler.json), Vercel's older now.json, the builders' nixpacks.json and
# railpack.json (build and start commands), Cloud Build's steps (cloudbuild.json), dub's pre-
# and post-build commands (dub.json), esy's build commands (esy.json), simple-git-hooks'
# hook commands (simple-git-hooks.json, as lefthook's), and vcpkg's manifests (vcpkg.json and
# vcpkg-configuration.json name the registries and overlay ports whose CMake scripts run).
_LOADED_BY_NAME = frozenset(
    {"package.json", "package-lock.json", "npm-shrinkwrap.json", "composer.json", "deno.json",
     "project.json", "vercel.json", "firebase.json", "app.json", "cmakelists.txt",
     "cmakepresets.json", "cmakeuserpresets.json", "railway.json", "lefthook.json",
     "lefthook-local.json", "devbox.json", "nodemon.json", "agents.md", "agents.override.md",
     "agent.md", "claude.md", "claude.local.md", "gemini.md", "qwen.md", "crush.md", "warp.md",
     "nx.json", "workspace.json", "angular.json", "rush.json", "wrangler.json", "now.json",
     "nixpacks.json", "railpack.json", "cloudbuild.json", "dub.json", "esy.json",
     "simple-git-hooks.json", "vcpkg.json", "vcpkg-configuration.json",
     # Conan's conanfile.txt (pip's requirements' twin: conan install fetches the recipes it
     # names, whose conanfile.py runs), Buildkite's buildkite.json (the steps pipeline upload
     # runs, cloudbuild.json's twin), dprint's dprint.json (its process plugins are programs
     # it downloads and runs at dprint fmt)
     "conanfile.txt", "buildkite.json", "dprint.json",
     # the JSON configurations that name a module node requires, and node loads a file of
     # any suffix as JavaScript (a created notes.txt is code then): Jest's jest.config.json
     # (setupFiles, globalSetup: at the next jest), Babel's babel.config.json (plugins, at
     # every build or test it transforms), ts-node's "ts-node" key in tsconfig.json
     # (require: at every ts-node start in the directory, found as tsc finds it)
     "jest.config.json", "babel.config.json", "tsconfig.json",
     # the instructions of CodeBuddy Code (CLAUDE.md's twin) and iFlow CLI (GEMINI.md's)
     "codebuddy.md", "iflow.md",
     # their twins a later npx run finds by name (varmcp20b): webpack-cli's webpack.config.json
     # (interpret's .json; a rule's loader is a module it requires), Nest's nest-cli.json
     # (webpackConfigPath, plugins), electron-builder.json (afterPack, beforeBuild...: modules),
     # cucumber.json (require: support code), nightwatch.json (globals_path), Jasmine's
     # jasmine.json (requires, helpers), Cypress 9's cypress.json (pluginsFile), the
     # Serverless Framework's serverless.json (plugins), GraphQL Codegen's codegen.json
     # (hooks are commands; require); and the commands tools run: the CDK's cdk.json and
     # cdktf.json (app: the command synth runs), tsup.config.json (onSuccess), Stryker's
     # stryker.conf.json and stryker.config.json (buildCommand, commandRunner), ReScript's
     # rescript.json and bsconfig.json (js-post-build), terragrunt.hcl.json (hooks)
     "webpack.config.json", "nest-cli.json", "electron-builder.json", "cucumber.json",
     "nightwatch.json", "jasmine.json", "cypress.json", "serverless.json", "codegen.json",
     "cdk.json", "cdktf.json", "tsup.config.json", "stryker.conf.json",
     "stryker.config.json", "rescript.json", "bsconfig.json", "terragrunt.hcl.json",
     # one rule for the rest (redmcp21): a file a tool the user runs finds by its name and
     # takes code, a command or a path to either from. Modules node loads: TypeDoc's
     # typedoc.json (plugin), Metro's metro.config.json (transformer and resolver paths, at
     # every react-native start), TSLint's tslint.json (rulesDirectory), Snowpack's
     # snowpack.config.json (plugins); commands: Zeabur's zbpack.json (build_command,
     # start_command), lerna.json (npmClient, the program lerna installs with), Testem's
     # testem.json (launchers, before_tests), Lighthouse CI's lighthouserc.json
     # (startServerCommand), Commitizen's cz.json (pre_bump_hooks), Detox's
     # detox.config.json (build), Renovate's renovate.json (postUpgradeTasks, where the
     # operator's allowedCommands let them run); language servers: rust-analyzer's
     # rust-project.json (runnables: its check program), sourcekit-lsp's buildServer.json
     # (argv: the build server it starts), compile_commands.json (the compiler commands
     # clangd, clang-tidy and ccls take, and clangd's --query-driver runs), OmniSharp's
     # omnisharp.json (LocationPaths: assemblies it loads); .NET: global.json
     # (msbuild-sdks: packages whose targets every dotnet build runs), a launchSettings.json
     # (environmentVariables dotnet run sets: DOTNET_STARTUP_HOOKS loads an assembly) and a
     # tool manifest, dotnet-tools.json (the tools dotnet tool restore installs and runs)
     "typedoc.json", "metro.config.json", "tslint.json", "snowpack.config.json",
     "zbpack.json", "lerna.json", "testem.json", "lighthouserc.json", "cz.json",
     "detox.config.json", "renovate.json", "rust-project.json", "buildserver.json",
     "compile_commands.json", "omnisharp.json", "global.json", "launchsettings.json",
     "dotnet-tools.json",
     # Rushstack Heft's config/heft.json (run-script-plugin's scriptPath: a module node loads)
     "heft.json",
     # the same rule (redmcp22): Azure Functions' local.settings.json (its Values are the
     # environment func start gives the host and its workers: NODE_OPTIONS=--require
     # notes.txt; git-ignored by the template, as launchSettings.json is), the Static Web
     # Apps CLI's swa-cli.config.json (run, appBuildCommand: commands swa start and swa
     # build run), Ionic's ionic.config.json (hooks: scripts the CLI requires at build),
     # nbdime's nbdime_config.json, read from the current directory (a browser given as
     # "cmd %s" is a command nbdiff-web and git nbdifftool run), and Replit Agent's
     # instructions, replit.md (AGENTS.md's twin)
     "local.settings.json", "swa-cli.config.json", "ionic.config.json", "nbdime_config.json",
     "replit.md"}
)  # fmt: skip
# Kinds of file a tool loads every one of from the directory it runs in: Terraform and
# OpenTofu every *.tf.json and *.tofu.json (a data "external" source runs its program at plan),
# Packer every *.pkr.json of a directory it builds (a shell-local provisioner runs here).
_LOADED_SUFFIXES = (".tf.json", ".tofu.json", ".pkr.json")
# Files tools find by their name in a directory of a given name: Buildkite's pipeline upload,
# given no file, reads buildkite/pipeline.json (buildkite.json's twin, outside .buildkite/);
# Rush common/config/rush/command-line.json (a custom command's shellCommand) and
# rush-plugins.json (plugins: code); Unity's Packages/manifest.json (a package by git URL,
# whose editor scripts run when the project is opened).
_LOADED_IN = {
    "buildkite": frozenset({"pipeline.json"}),
    "rush": frozenset({"command-line.json", "rush-plugins.json"}),
    "packages": frozenset({"manifest.json"}),
}
# Tauri's configuration, merged with its platform's (tauri.linux.conf.json...): its
# build.beforeDevCommand and beforeBuildCommand are shell commands tauri dev and build run.
_TAURI_CONFIG = re.compile(r"tauri(\.[a-z]+)?\.conf\.json")
# tsconfig.json's twins by convention (tsconfig.base.json, tsconfig.node.json): ts-node reads
# the "ts-node" key (require) of the file a tsconfig.json extends, so a missing base it names
# is a tsconfig.json to create.
_TSCONFIG_TWIN = re.compile(r"tsconfig\..+\.json")
# pip installs what a requirements file names, and obeys its options (--index-url, -e
# git+https://..., a local path whose setup.py runs): by convention any .txt whose name says
# requirements or constraints (requirements-dev.txt, dev-requirements.txt, constraints.txt),
# or any .txt in a requirements/ directory (requirements/base.txt), which pip -r, tox, nox,
# CI workflows and dependency bots read.
_REQUIREMENTS_WORDS = ("requirements", "constraints")


def _requirements(parts: tuple[str, ...], name: str) -> bool:
    """Whether the create-only ``parts`` (``name`` its last, folded) are a pip requirements
    file by the conventions above."""
    if not name.endswith(".txt"):
        return False  # a requirements/ directory's documents (.md) are no pip input
    if any(word in name for word in _REQUIREMENTS_WORDS):
        return True
    return any(folded(part).startswith(_REQUIREMENTS_WORDS) for part in parts[:-1])


def create_only_refusal(relative: str) -> str | None:
    """Why create-only mode may not create the workspace-relative ``relative``, or None: it
    creates only ``CREATED_KINDS``, never a name in ``_LOADED_BY_NAME``, never in a hidden
    directory. Checked by every executor on the path as given and as resolved."""
    parts = components(normalize(relative))
    if not parts:
        return None
    if reason := create_only_directory_refusal(relative, parts[:-1]):
        return reason
    name = folded(parts[-1])
    if name.startswith(".") or not name.endswith(CREATED_KINDS):
        kinds = " ".join(CREATED_KINDS)
        return (
            f"{relative!r} is not a document or data file; create-only mode creates only "
            f"{kinds} files, which no tool runs by itself"
        )
    loaded_in = len(parts) > 1 and name in _LOADED_IN.get(folded(parts[-2]), ())
    patterned = any(rule.fullmatch(name) for rule in (_TAURI_CONFIG, _TSCONFIG_TWIN))
    by_kind = name.endswith(_LOADED_SUFFIXES)
    if name in _LOADED_BY_NAME or patterned or loaded_in or by_kind or _requirements(parts, name):
        return (
            f"{relative!r} is a file tools find by its name and act on (scripts, builds, "
            "installs, agent instructions); create-only mode does not create it"
        )
    return None


def create_only_directory_refusal(relative: str, dirs: tuple[str, ...]) -> str | None:
    """Why create-only mode may not write ``relative`` through the directories ``dirs``, or
    None: one of them is hidden. Also asked before each directory is made on the way (a
    link may lead to a hidden one): a refused write leaves no ``.github/workflows/`` behind."""
    for part in dirs:
        if folded(part).startswith(".") and part != "..":
            return (
                f"{relative!r} is inside {part}/, a hidden directory where tools keep their "
                "configuration; create-only mode creates documents and data only"
            )
    return None


# A spreadsheet application opening a .csv or .tsv takes a cell that starts with one of these
# for a formula and runs it (OWASP's CSV injection list): =WEBSERVICE or =HYPERLINK send the
# sheet's other cells to a server, DDE starts a program. A readonly investigation exports rows
# it read from databases and logs, which anyone may have filled; its findings are data.
_FORMULA_LEADS = ("=", "+", "-", "@")
# what such a cell may still be: a number (-5, +1.5e3, -12%) or a lone dash, which no
# application takes for a formula
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?|-+")
# Excel splits a .csv by the list separator of the user's locale (a comma or a semicolon;
# for Arabic and Persian, whose decimal mark is neither, the Arabic semicolon U+061B or
# comma U+060C that CLDR gives them), or by the one a first line "sep=x" names; a .tsv by
# tabs (its import wizard's default). The sep= line chooses nothing for the other
# applications (LibreOffice, Google Sheets and Numbers guess the separator, and ignore it):
# its separator is tried besides, not instead. A full-width comma (U+FF0C) is no locale's
# list separator (Chinese and Japanese give ","): text that holds one is data, as written.
_CSV_SEPARATORS = (",", ";", "\t", "\u061b", "\u060c")
_ROW_END = re.compile(r"\r\n|\r|\n")
_SEP_LINE = re.compile(r"\Asep=(.)\r?\n", re.IGNORECASE)
# The encodings an application may read a file in by its byte-order mark, or guess from its
# NUL bytes when it has none (UTF-16 without a mark, as Notepad and LibreOffice detect it;
# UTF-32): any other encoding spells = + - @ as ASCII does, so UTF-8 covers it
_WIDE = ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
# Excel opens a .csv whose text starts with "ID" as SYLK, whatever its name (the known
# "SYLK: file format is not valid" of a sheet whose first header is ID), and a SYLK cell
# record's E field is a formula it runs: C;X1;Y1;K0;ECMD|' /C calc'!A0 has no cell that
# starts with = + - @ however it is split
_SYLK_FORMULA = re.compile(r"^C;(?:[^;\r\n]*;)*E", re.IGNORECASE | re.MULTILINE)


def _readings(data: bytes) -> Iterator[str]:
    """The texts an application may read ``data`` as, one by one: UTF-8 (with or without
    its mark), and when it holds a NUL byte (a wide encoding's), UTF-16 of each byte order,
    and UTF-32 when two NULs meet (as an ASCII character's three zero bytes do; decoding a
    UTF-16 file as UTF-32, every character an error, would triple the check's time)."""
    encodings = ["utf-8"]
    if b"\0" in data:
        encodings += _WIDE if b"\0\0" in data else _WIDE[:2]
    for encoding in encodings:
        yield data.decode(encoding, errors="replace").removeprefix("\ufeff")


def created_content_refusal(relative: str, data: bytes) -> str | None:
    """Why create-only mode may not create the workspace-relative ``relative`` holding
    ``data``, or None: a .csv or .tsv with a cell a spreadsheet application runs as a formula
    when the file is opened (it starts, after blanks, with ``= + - @`` and is no number),
    however the file is read (UTF-8, or a wide encoding when it holds NUL bytes) and split
    (each separator Excel may use for its name, and a sep= line's besides; quotes honoured)."""
    parts = components(normalize(relative))
    name = folded(parts[-1]) if parts else ""
    if not name.endswith((".csv", ".tsv")):
        return None
    usual = ("\t",) if name.endswith(".tsv") else _CSV_SEPARATORS
    for text in _readings(data):
        if text.startswith("ID") and (record := _SYLK_FORMULA.search(text)):
            line = text[record.start() :].partition("\n")[0][:40]
            return (
                f"{relative!r} starts with ID, so Excel opens it as a SYLK sheet, whose "
                f"record {line!r} it runs as a formula when the file is opened (the E "
                "field); create-only mode writes data, not formulas: name the first column "
                "otherwise than ID (Id, id) or drop the record"
            )
        separators = usual
        if declared := _SEP_LINE.match(text):
            separators, text = (declared.group(1), *separators), text[declared.end() :]
        for separator in dict.fromkeys(separators):
            if found := _formula_cell(text, separator):
                row, column, cell = found
                shown = cell if len(cell) <= 40 else f"{cell[:40]}..."
                return (
                    f"{relative!r} row {row}, column {column} holds {shown!r}, which a "
                    "spreadsheet application runs as a formula when the file is opened (it "
                    "may send the sheet's data away); create-only mode writes data, not "
                    "formulas: start such a cell with a single quote (') so that it is read "
                    "as text"
                )
    return None


def _formula_cell(text: str, separator: str) -> tuple[int, int, str] | None:
    """The first cell of ``text`` split by ``separator`` that is a formula (row and column
    from 1, and the cell), or None."""
    import csv  # with the first .csv or .tsv created, not by a run that writes none

    lead = re.compile(rf"[{re.escape(separator)}\r\n][ \t\"]*[=+\-@]")
    first = text.lstrip(' \t"')[:1]
    if first not in _FORMULA_LEADS and lead.search(text) is None:
        return None  # no cell can start so: the text is not parsed (a C-speed scan)
    import io

    # rows end where a spreadsheet ends them, at \r, \n or \r\n only: str.splitlines also
    # splits at \v, \f, \x1c-\x1e, NEL and U+2028/9, which would open a quoted field that
    # Excel, reading 'x\v"a' as one unquoted cell, never opens (newline="": no translation)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=separator))
    except csv.Error:  # a field past csv's size limit: every cell split without quotes
        rows = [line.split(separator) for line in _ROW_END.split(text)]
    for row_number, row in enumerate(rows, 1):
        for column, cell in enumerate(row, 1):
            value = cell.lstrip(' \t\r\n"')
            if value.startswith(_FORMULA_LEADS) and not _NUMBER.fullmatch(value.rstrip()):
                return row_number, column, cell
    return None
