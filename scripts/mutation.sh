#!/usr/bin/env bash
# Mutation testing of the safety rules with mutmut (docs/testing.md says why mutmut, and
# records the scores). Slow and CPU-heavy, so it is NOT part of the default suite.
#
#   bash scripts/mutation.sh approval              # one target
#   bash scripts/mutation.sh approval permissions  # several, one after the other
#   bash scripts/mutation.sh all                   # every target below
#
# Each target mutates its module(s) only and runs only the tests that exercise them, niced,
# in a throw-away copy of src/ and tests/ (the work tree is never touched). mutmut then runs,
# for each mutant, just the tests that reached the mutated function. The survivors are listed
# at the end; `mutmut show NAME` in the printed work directory shows one as a diff.
#
# Environment: MUTATION_JOBS (parallel mutants, default 1: the machine has 2 cores),
# MUTATION_TIMEOUT (seconds per target, default 1800), KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
JOBS=${MUTATION_JOBS:-1}
BOUND=${MUTATION_TIMEOUT:-1800}

"$PY" -c "import mutmut" 2>/dev/null || "$PY" -m pip install --quiet "mutmut==3.8.1"
MUTMUT=$(dirname "$PY")/mutmut

# target -> "files to mutate (globs)|test selection"
declare -A TARGETS=(
    [approval]="src/rho_domain/approval.py|tests/domain"
    [permissions]="src/rho_domain/permissions.py|tests/domain tests/tools/test_tools_handlers.py tests/cli/test_cli_config_files.py tests/store/test_store_codec.py"
    [paths]="src/rho_domain/paths.py src/rho_domain/write_rules.py src/rho_domain/create_only.py|tests/tools/test_confine_walk.py tests/tools/test_executor_paths.py tests/tools/test_secrets_policy.py tests/tools/test_executor_contract.py tests/daytona/test_daytona_confinement.py tests/daytona/test_daytona_tools.py tests/properties/test_properties_paths.py"
    [confine]="src/rho_adapters/local/confine.py|tests/tools/test_confine_walk.py tests/tools/test_executor_paths.py tests/tools/test_executor_contract.py tests/properties/test_properties_paths.py"
    [shell]="src/rho_domain/shell/lexer.py src/rho_domain/shell/parser.py src/rho_domain/shell/programs.py src/rho_domain/shell/machine_programs.py src/rho_domain/shell/plan.py|tests/tools/test_shell_adversarial.py tests/tools/test_shell_oracle.py tests/tools/test_shell_refusals.py tests/tools/test_shell_rewrites.py tests/tools/test_shell_glob.py tests/tools/test_awk.py tests/tools/test_git_repo_config.py tests/tools/test_secrets_shell.py tests/properties/test_properties_shell_lexer.py"
    [shell-rules]="src/rho_domain/shell/options.py src/rho_domain/shell/awk.py src/rho_domain/shell/reads.py src/rho_domain/shell/glob.py src/rho_domain/shell/git.py src/rho_domain/shell/git_repo.py src/rho_domain/shell/embedded.py src/rho_domain/shell/expand.py|tests/tools/test_shell_adversarial.py tests/tools/test_shell_oracle.py tests/tools/test_shell_refusals.py tests/tools/test_shell_rewrites.py tests/tools/test_shell_glob.py tests/tools/test_awk.py tests/tools/test_git_repo_config.py tests/tools/test_secrets_shell.py tests/properties/test_properties_shell_lexer.py"
    [secrets]="src/rho_domain/secrets.py|tests/properties/test_properties_secrets.py tests/tools/test_secrets_policy.py tests/tools/test_secrets_shell.py tests/tools/test_executor_paths.py tests/tools/test_tools_handlers.py tests/tools/test_shell_refusals.py tests/daytona/test_daytona_secrets.py tests/daytona/test_daytona_confinement.py"
    [sql]="src/rho_domain/sql/lexer.py src/rho_domain/sql/unicode_names.py src/rho_domain/sql/classify.py src/rho_domain/sql/token_rules.py src/rho_domain/sql/call_syntax.py src/rho_domain/sql/dialects.py src/rho_domain/sql/dialect_values.py src/rho_domain/sql/functions.py|tests/db/test_db_units.py tests/db/test_db_fake_dbapi.py tests/db/test_db_adversarial.py tests/db/test_db_engines.py tests/db/test_db_spellings.py tests/db/test_db_issue10.py tests/properties/test_properties_sql.py"
)
ORDER=(approval permissions paths secrets confine shell shell-rules sql)
# Extra test selection (pytest -k) per target. sql: in-process engines only; a database server
# started per mutant would cost minutes, and a server's own read-only transaction would hide
# the classifier's mistakes anyway.
declare -A SELECT=(
    [sql]="test_db_units or test_db_fake_dbapi or properties or not (postgres or mysql or mariadb)"
)

[ $# -gt 0 ] || { echo "usage: $0 TARGET... | all  (targets: ${ORDER[*]})" >&2; exit 2; }
[ "$1" = all ] && set -- "${ORDER[@]}"

for target in "$@"; do
    spec=${TARGETS[$target]:-}
    [ -n "$spec" ] || { echo "unknown target $target (targets: ${ORDER[*]})" >&2; exit 2; }
    files=${spec%%|*}
    tests=${spec#*|}
    select=${SELECT[$target]:-}
    work=$(mktemp -d "${TMPDIR:-/tmp}/rho-mutation-$target.XXXXXX")
    # What is in the work tree counts: uncommitted changes and new (untracked) files.
    git ls-files -z --cached --others --exclude-standard src tests pyproject.toml \
        | xargs -0 cp --parents -t "$work"
    {
        echo "[mutmut]"
        echo "source_paths = src"
        echo "only_mutate ="
        for f in $files; do echo "    $f"; done
        echo "pytest_add_cli_args_test_selection ="
        for t in $tests; do echo "    $t"; done
        echo "pytest_add_cli_args ="
        echo "    -p"
        echo "    no:cacheprovider"
        echo "    -q"
        if [ -n "$select" ]; then echo "    -k"; echo "    $select"; fi
        echo "use_git_change_detection = false"
        # A mutant that loops (i += 0 in a lexer) is stopped at 3x its tests' normal CPU time
        # plus 2 s (mutmut's default, 15x, spent most of a first sql run waiting on loops).
        echo "timeout_multiplier = 3.0"
        echo "timeout_constant = 2.0"
    } >"$work/setup.cfg"
    echo "== $target: mutating $files; tests: $tests; work dir $work"
    status=0
    (cd "$work" && CI=true HYPOTHESIS_PROFILE=mutation nice -n 10 timeout "$BOUND" \
        "$MUTMUT" run --max-children "$JOBS") \
        >"$work/run.log" 2>&1 || status=$?
    tail -n 3 "$work/run.log" | tr '\r' '\n' | tail -n 3
    [ "$status" -eq 0 ] || echo "mutmut exited $status (124: the ${BOUND}s bound); see $work/run.log"
    (cd "$work" && "$MUTMUT" export-cicd-stats >/dev/null 2>&1 || true)
    "$PY" - "$work/mutants/mutmut-cicd-stats.json" "$target" <<'EOF'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except FileNotFoundError:
    sys.exit(f"{sys.argv[2]}: no results")
decided = s["killed"] + s["survived"] + s.get("timeout", 0) + s.get("caught_by_type_check", 0)
caught = decided - s["survived"]
print(f"{sys.argv[2]}: {caught}/{decided} caught ({100 * caught / max(decided, 1):.1f}%), "
      f"survived {s['survived']}, killed {s['killed']}, timeout {s.get('timeout', 0)}, "
      f"no tests {s.get('no_tests', 0)}, skipped {s.get('skipped', 0)}, total {s['total']}")
EOF
    (cd "$work" && "$MUTMUT" results 2>/dev/null | grep -v ": killed" || true)
    [ "${KEEP:-0}" = 1 ] || [ "$status" -ne 0 ] || rm -rf "$work"
done
