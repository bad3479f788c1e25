"""Every argv the restricted shell accepts is rebuilt so that nothing after it is an option.

For any command ``check_argv`` accepts (drawn from each program's own option table, with
values and operands that look like options, and ``--`` anywhere): the rebuilt argv starts
with the program's forced flags, reading it again gives it back unchanged, and any words
appended after it (what ``xargs`` adds) are read by the program's table as operands.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rho_domain.errors import CommandRefused
from rho_domain.shell import check_argv, harden_argv
from rho_domain.shell.options import OptionSpec, split_options
from rho_domain.shell.programs import SPECS, XARGS_TARGETS

# Values and operands an attacker would pick: options, "--", secrets, empty.
TRICKY = st.sampled_from(
    ["--", "-", "", "-f.env", "--pre=sh", "--sandbox", "--no-config", "-e", "x", ".env", "-5"]
)
WORDS = st.one_of(TRICKY, st.text("-=ab.", max_size=4))


def _option_words(spec: OptionSpec) -> st.SearchStrategy[list[str]]:
    """One option of ``spec`` in any spelling: short flags, clusters, glued or separate
    values, ``--name=value`` or ``--name value``."""
    choices: list[st.SearchStrategy[list[str]]] = [st.just(["--"]), WORDS.map(lambda w: [w])]
    if spec.flags:
        choices.append(st.text(spec.flags, min_size=1, max_size=3).map(lambda f: [f"-{f}"]))
    if spec.valued:
        letter = st.sampled_from(spec.valued)
        choices.append(st.tuples(letter, WORDS).map(lambda lv: [f"-{lv[0]}{lv[1]}"]))
        choices.append(st.tuples(letter, WORDS).map(lambda lv: [f"-{lv[0]}", lv[1]]))
    for names, valued in ((spec.long_flags, False), (spec.long_valued, True)):
        if names:
            name = st.sampled_from(sorted(names))
            if valued:
                choices.append(st.tuples(name, WORDS).map(lambda nv: [f"--{nv[0]}", nv[1]]))
                choices.append(st.tuples(name, WORDS).map(lambda nv: [f"--{nv[0]}={nv[1]}"]))
            else:
                choices.append(name.map(lambda n: [f"--{n}"]))
    return st.one_of(choices)


@st.composite
def commands(draw: st.DrawFn) -> tuple[str, ...]:
    program = draw(st.sampled_from(sorted(SPECS)))
    parts = draw(st.lists(_option_words(SPECS[program]), max_size=6))
    return (program, *(w for part in parts for w in part))


@given(commands(), st.lists(TRICKY, min_size=1, max_size=3))
def test_a_rebuilt_argv_is_a_fixed_point_and_ends_the_options(
    argv: tuple[str, ...], items: list[str]
) -> None:
    try:
        check_argv(argv)
    except CommandRefused:
        return
    program, spec = argv[0], SPECS[argv[0]]
    built = harden_argv(argv)
    assert built[: 1 + len(spec.forced)] == (program, *spec.forced)
    assert harden_argv(built) == built
    if spec.spelling.dashdash == "first" and spec.max_operands is None:
        reread = split_options(program, [*built[1:], *items], spec)
        assert reread.operands[-len(items) :] == tuple(items)


@st.composite
def xargs_commands(draw: st.DrawFn) -> tuple[str, ...]:
    own = draw(st.lists(st.sampled_from(["-0", "-r", "-n1", "-n", "2", "--", "-t"]), max_size=3))
    program = draw(st.sampled_from(sorted(XARGS_TARGETS)))
    parts = draw(st.lists(_option_words(SPECS[program]), max_size=5))
    return ("xargs", *own, program, *(w for part in parts for w in part))


@given(xargs_commands(), st.lists(TRICKY, min_size=1, max_size=3))
def test_items_xargs_appends_are_operands_of_its_rebuilt_target(
    argv: tuple[str, ...], items: list[str]
) -> None:
    try:
        check_argv(argv)
    except CommandRefused:
        return
    built = harden_argv(argv)
    start = built.index("--") + 1  # xargs' own options end here; the target follows
    program, rest = built[start], built[start + 1 :]
    assert rest[: len(SPECS[program].forced)] == SPECS[program].forced
    reread = split_options(program, [*rest, *items], SPECS[program])
    assert reread.operands[-len(items) :] == tuple(items)
