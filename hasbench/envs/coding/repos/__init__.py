"""The small Python repositories of the Coding tasks and the changes asked of them.

Each module of this package is one repository: ``NAME``, ``PACKAGE``, ``FILES`` (path ->
text of every file, tests and project files included) and ``FEATURES``, the changes its
tasks ask for. A :class:`Feature` adds a behaviour to one function whose details have
several reasonable answers (its :class:`Mode` s): how negative amounts are written, which
eviction policy a cache uses, ... The task generator decides per task which mode is the
default, which other mode a keyword option must also offer, what the option is called and
which error message rejects unknown values, renders the new code, and writes hidden tests
from the modes' examples. Who knows those decisions depends on the task's pattern.

Rendering replaces ``old`` in ``module`` by ``new`` after filling its markers:

- ``@PARAM@``: ``, <option>=<default>`` (nothing when the change has no option);
- ``@CHECK@``: the validation of the option (nothing without option);
- ``@BRANCHES@``: the default mode's code alone, or an ``if``/``elif`` chain over the
  offered modes (each mode's ``code`` assigns what the code after the marker uses);
- ``@OPTION@``: the option's name (or the default mode's value without option).

Markers stand on their own lines at the indentation their code needs.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """One answer to what a feature leaves open.

    Attributes:
        name: the option value selecting it.
        description: how a person describes it, with an example.
        code: Python lines (indented as at top level) for the ``@BRANCHES@`` marker.
        examples: (call arguments, expected result) pairs, as Python source; the hidden
            tests call the feature with them.
    """

    name: str
    description: str
    code: str
    examples: tuple[tuple[str, str], ...]

    def said(self, with_value: bool = True) -> str:
        """What a person says about this mode (naming its option value when asked for)."""
        return f"the value '{self.name}': {self.description}" if with_value else self.description


@dataclass(frozen=True)
class Feature:
    """A change to one function of a repository, with the modes it can take.

    Attributes:
        key: unique id, ``<repo>.<name>``.
        module: the file the change edits.
        call: the expression the hidden tests call (a function, or a helper of ``helper``).
        imports: import lines of the hidden tests.
        helper: extra code for the hidden tests (e.g. a function driving a class).
        summary: the issue title.
        problem: what is wrong or missing today (public).
        aspect: what the modes decide, as a noun phrase ("how negative amounts look").
        fact_key: the known_info key under which people state their mode.
        option: the keyword option's default name.
        option_names: names a reviewer may require instead.
        messages: error-message prefixes a reviewer may require.
        default_message: the error message when nobody asks for one.
        old: the exact text of ``module`` the change replaces.
        new: the replacement, with markers.
        modes: the possible answers (at least three).
    """

    key: str
    module: str
    call: str
    imports: str
    summary: str
    problem: str
    aspect: str
    fact_key: str
    option: str
    option_names: tuple[str, ...]
    messages: tuple[str, ...]
    default_message: str
    old: str
    new: str
    modes: tuple[Mode, ...]
    helper: str = ""

    def mode(self, name: str) -> Mode:
        """The mode with this name."""
        return next(m for m in self.modes if m.name == name)

    def render(
        self, source: str, default: str, others: tuple[str, ...], option: str | None, message: str
    ) -> str:
        """The module source with the feature implemented.

        Args:
            source: the module's current text.
            default: the mode used when the option is not given.
            others: further modes the option offers.
            option: the option's name; None renders the default mode without option.
            message: the error-message prefix for unknown option values.
        """
        if self.old not in source:
            raise ValueError(f"{self.key}: the text to replace is not in {self.module}")
        offered = (default, *others)
        lines = []
        for line in self.new.splitlines():
            marker = line.strip()
            indent = line[: len(line) - len(line.lstrip())]
            if marker == "@CHECK@":
                if option is not None:
                    check = (
                        f"if {option} not in {offered!r}:\n"
                        f'    raise ValueError(f"{message}: {{{option}!r}}")'
                    )
                    lines.append(textwrap.indent(check, indent))
            elif marker == "@BRANCHES@":
                lines.append(textwrap.indent(self._branches(offered, option), indent))
            else:
                lines.append(line)
        text = "\n".join(lines)
        param = f", {option}={default!r}" if option is not None else ""
        text = text.replace("@PARAM@", param).replace("@OPTION@", option or repr(default))
        return source.replace(self.old, text)

    def _branches(self, offered: tuple[str, ...], option: str | None) -> str:
        if option is None:
            return textwrap.dedent(self.mode(offered[0]).code).strip("\n")
        parts = []
        for index, name in enumerate(offered):
            keyword = "if" if index == 0 else "elif"
            body = textwrap.indent(textwrap.dedent(self.mode(name).code).strip("\n"), "    ")
            parts.append(f"{keyword} {option} == {name!r}:\n{body}")
        return "\n".join(parts)


def deprecated_alias(
    package: str, old: str, new: str, params: str, *, since: str, users: str, call: str = ""
) -> str:
    """The text of ``<package>/legacy.py``: ``old``, a deprecated function that calls ``new``.

    Args:
        package: the repository's package.
        old: the deprecated function's name.
        new: what to use instead, as ``module.function`` inside the package.
        params: the deprecated function's parameters.
        since: the version that deprecated it.
        users: the versions whose users it is kept for ("1.x").
        call: the arguments it passes on (default: the parameters as they are).
    """
    module, name = new.split(".")
    return f'''\
"""Deprecated names kept for {package} {users} users."""

import warnings

from {package}.{module} import {name}


def {old}({params}):
    """Deprecated since {since}: use {name}."""
    warnings.warn("{old} is deprecated; use {name}", DeprecationWarning, stacklevel=2)
    return {name}({call or params})
'''


@dataclass(frozen=True)
class Legacy:
    """A deprecated module a task may remove: its file, the name it exports, its test."""

    module: str
    name: str
    test: str


@dataclass(frozen=True)
class Rename:
    """A public name a task may rename, and a test expression that uses the new name.

    Attributes:
        module: the module defining it.
        old: the current name.
        new: the new name.
        check: a Python expression, true when ``<package>.<new>`` works as before.
        imports: import lines the check needs (besides the package itself).
    """

    module: str
    old: str
    new: str
    check: str
    imports: str = ""


@dataclass(frozen=True)
class Repository:
    """One repository of the Coding tasks.

    Attributes:
        name: the repository name, also its package name.
        description: what it is, as a noun phrase.
        files: path -> text of every file.
        features: the changes its tasks ask for.
        legacy: the deprecated module (for removal tasks).
        rename: the public function to rename (for breaking-change tasks).
        dependency: a requirement a task may add.
        next_version: the version a release task sets.
    """

    name: str
    description: str
    files: dict[str, str]
    features: tuple[Feature, ...]
    legacy: Legacy
    rename: Rename
    dependency: str
    next_version: str

    @property
    def package(self) -> str:
        """The import package (the repository name)."""
        return self.name


CI_WORKFLOW = """\
name: tests
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.10", "3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: pip install -e .[test]
      - run: pytest
"""


def project_files(
    name: str, version: str, summary: str, example: str, owners: str = ""
) -> dict[str, str]:
    """The files every repository has: README, pyproject, CI workflow, CODEOWNERS, version.

    Args:
        name: the repository and package name.
        version: the current version.
        summary: one sentence for the README and pyproject.
        example: a short interactive session for the README.
        owners: further CODEOWNERS lines.
    """
    return {
        "README.md": f"# {name}\n\n{summary}\n\n```python\n{example}```\n",
        "pyproject.toml": (
            f'[project]\nname = "{name}"\nversion = "{version}"\ndescription = "{summary}"\n'
            'requires-python = ">=3.10"\ndependencies = []\n\n'
            '[project.optional-dependencies]\ntest = ["pytest>=7"]\n\n'
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        ),
        ".github/workflows/ci.yml": CI_WORKFLOW,
        ".github/CODEOWNERS": (
            "# Release metadata is owned by the release managers.\n"
            f"/{name}/_version.py @{name}/release-managers\n{owners}"
        ),
        f"{name}/_version.py": f'__version__ = "{version}"\n',
    }
