"""Long-format CSV schema for the DocuTeam user study, its measures, and a validating loader.

One row is one recorded value. Columns (all required, in any order):

=============  ================================================================
participant    participant id, e.g. ``P01``
condition      ``DocuTeam`` (mixed-initiative) or ``Baseline`` (user-initiated)
order          1 or 2: the block in which the participant used this condition
task           the task done in this condition, e.g. ``workshop``, ``sports_day``
measure_group  ``blind_rating`` | ``survey`` | ``nasa_tlx`` | ``interaction``
measure        the analysed variable, e.g. ``novelty``, ``confidence``, ``effort``,
               ``steering_messages`` (see :data:`MEASURES`; other names are allowed)
item           item of a multi-item measure (values of one measure are averaged over
               its items); empty for single-item measures
rater          blind-rating rater id (required for ``blind_rating``, empty otherwise);
               ratings are averaged over raters per plan
value          the number recorded
scale          ``L-H`` for an integer scale from L to H (``1-5``, ``1-7``) or
               ``count`` for a non-negative integer
=============  ================================================================

Leading lines ``# key: value`` are metadata (e.g. ``# synthetic: true`` marks generated
data, which every output then labels as synthetic).

Every participant must have both conditions, in orders 1 and 2, with a different task
in each, and every value recorded in one condition must be recorded in the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

CONDITIONS: tuple[str, str] = ("DocuTeam", "Baseline")
COLUMNS: tuple[str, ...] = (
    "participant",
    "condition",
    "order",
    "task",
    "measure_group",
    "measure",
    "item",
    "rater",
    "value",
    "scale",
)
MEASURE_GROUPS: tuple[str, ...] = ("blind_rating", "survey", "nasa_tlx", "interaction")
GROUP_LABELS = {
    "blind_rating": "Blind rating",
    "survey": "Post-task survey",
    "nasa_tlx": "NASA-TLX",
    "interaction": "Interaction log",
}
"""Readable names of the measure groups."""
KEY: list[str] = ["participant", "condition", "measure_group", "measure", "item", "rater"]
MAX_REPORTED_PROBLEMS = 50


@dataclass(frozen=True)
class Measure:
    """A known measure: its group, name, short label, scale and the figure showing it."""

    group: str
    name: str
    label: str
    scale: str
    figure: str = ""


MEASURES: tuple[Measure, ...] = (
    # Blind expert ratings of the final plans (DocuTeam §5.1.5, after Dean et al. 2006).
    Measure("blind_rating", "novelty", "Novelty", "1-5", "figure3"),
    Measure("blind_rating", "workability", "Workability", "1-5", "figure3"),
    Measure("blind_rating", "relevance", "Relevance", "1-5", "figure3"),
    Measure("blind_rating", "specificity", "Specificity", "1-5", "figure3"),
    # Post-task survey (App. B.2), paraphrased; 1 = strongly disagree, 7 = strongly agree.
    Measure("survey", "confidence", "Confident in my final plan", "1-7", "figure4"),
    Measure("survey", "satisfaction", "Satisfied with my final plan", "1-7", "figure4"),
    Measure("survey", "easy_to_apply", "Easy to bring agent ideas into my draft", "1-7", "figure4"),
    Measure(
        "survey", "tool_not_partner", "Agents felt like a tool, not a partner", "1-7", "figure4"
    ),
    Measure("survey", "expanded_thinking", "Broadened my thinking", "1-7", "figure8"),
    Measure("survey", "deepened_thinking", "Deepened my thinking", "1-7", "figure8"),
    Measure("survey", "use_again", "Would use such a system again", "1-7", "figure8"),
    Measure("survey", "hard_to_engage", "Hard to stay engaged; uneven pacing", "1-7", "figure8"),
    Measure("survey", "ai_aware_of_me", "Agents noticed what I was doing", "1-7", "figure8"),
    Measure("survey", "aware_of_ai", "I could follow what the agents did", "1-7", "figure8"),
    # NASA-TLX without physical demand, 7 points (1 = very low, 7 = very high).
    Measure("nasa_tlx", "mental_demand", "Mental demand", "1-7", "figure5"),
    Measure("nasa_tlx", "temporal_demand", "Temporal demand", "1-7", "figure5"),
    Measure("nasa_tlx", "performance", "Performance", "1-7", "figure5"),
    Measure("nasa_tlx", "effort", "Effort", "1-7", "figure5"),
    Measure("nasa_tlx", "frustration", "Frustration", "1-7", "figure5"),
    # Interaction logs: discussions the user started per mode, steering, edits, uptake.
    Measure("interaction", "idea_mode", "Idea", "count", "figure3"),
    Measure("interaction", "discussion_mode", "Discussion", "count", "figure3"),
    Measure("interaction", "evaluation_mode", "Evaluation", "count", "figure3"),
    Measure("interaction", "steering_messages", "Steering msgs.", "count", "table2"),
    Measure("interaction", "draft_word_changes", "Draft word changes", "count", "table2"),
    Measure("interaction", "messages_applied", "Msgs applied to doc.", "count", "table2"),
)
KNOWN_MEASURES: dict[tuple[str, str], Measure] = {(m.group, m.name): m for m in MEASURES}


def measure_label(group: str, name: str) -> str:
    """Return the short label of a measure (its name when the measure is not known)."""
    known = KNOWN_MEASURES.get((group, name))
    return known.label if known else name.replace("_", " ").capitalize()


class StudyDataError(ValueError):
    """Study data that break the schema; ``problems`` name the offending file lines."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        shown = problems[:MAX_REPORTED_PROBLEMS]
        more = len(problems) - len(shown)
        lines = [f"{source}: {len(problems)} problem(s) in the study data:"]
        lines += [f"  {p}" for p in shown]
        if more:
            lines.append(f"  ... and {more} more")
        super().__init__("\n".join(lines))

    def _render_traceback_(self) -> list[str]:
        """Show only the problems (not a Python traceback) when raised in a notebook."""
        return str(self).splitlines()


@dataclass(frozen=True)
class StudyData:
    """Validated study data: the long-format table plus its metadata.

    ``frame`` has the schema columns with ``order`` as int and ``value`` as float, and a
    ``line`` column with the source line of each row (for error messages).
    """

    frame: pd.DataFrame
    source: str
    meta: dict[str, str] = field(default_factory=dict)
    conditions: tuple[str, str] = CONDITIONS

    @property
    def synthetic(self) -> bool:
        """True when the data were generated, not collected (metadata ``synthetic: true``)."""
        return self.meta.get("synthetic", "").strip().lower() == "true"

    @property
    def participants(self) -> list[str]:
        """Participant ids, sorted."""
        return sorted(self.frame["participant"].unique())


_SCALE = re.compile(r"^(\d+)-(\d+)$")


def _scale_problem(scale: str, value: float) -> str | None:
    """Return why ``value`` does not fit ``scale``, or None if it does."""
    if scale == "count":
        if value < 0 or value != int(value):
            return f"value {value:g} is not a non-negative integer (scale count)"
        return None
    match = _SCALE.match(scale)
    if not match:
        return f"unknown scale {scale!r} (expected L-H such as 1-7, or count)"
    low, high = int(match.group(1)), int(match.group(2))
    if not (low <= value <= high) or value != int(value):
        return f"value {value:g} is outside scale {scale} (integers {low} to {high})"
    return None


def _row_problems(row: pd.Series, conditions: tuple[str, str]) -> list[str]:
    """Problems of one row taken on its own."""
    where = f"line {row['line']}"
    problems = []
    for col in ("participant", "task", "measure"):
        if not row[col]:
            problems.append(f"{where}: {col} is empty")
    if row["condition"] not in conditions:
        problems.append(
            f"{where}: unknown condition {row['condition']!r} (expected {' or '.join(conditions)})"
        )
    if row["order"] not in ("1", "2"):
        problems.append(f"{where}: order {row['order']!r} is not 1 or 2")
    group = row["measure_group"]
    if group not in MEASURE_GROUPS:
        problems.append(
            f"{where}: unknown measure_group {group!r} "
            f"(expected one of {', '.join(MEASURE_GROUPS)})"
        )
    if group == "blind_rating" and not row["rater"]:
        problems.append(f"{where}: blind_rating needs a rater")
    if group != "blind_rating" and row["rater"]:
        problems.append(f"{where}: rater {row['rater']!r} given for a {group} measure")
    known = KNOWN_MEASURES.get((group, row["measure"]))
    if known and row["scale"] != known.scale:
        problems.append(
            f"{where}: {group}/{row['measure']} has scale {row['scale']!r}, expected {known.scale}"
        )
    try:
        value = float(row["value"])
    except ValueError:
        problems.append(f"{where}: value {row['value']!r} is not a number")
        return problems
    if value != value or value in (float("inf"), float("-inf")):
        problems.append(f"{where}: value {row['value']!r} is not a finite number")
        return problems
    issue = _scale_problem(row["scale"], value)
    if issue:
        problems.append(f"{where}: {issue}")
    return problems


def _describe(row: pd.Series) -> str:
    text = f"participant {row['participant']}, {row['measure_group']}/{row['measure']}"
    if row["item"]:
        text += f" item {row['item']}"
    if row["rater"]:
        text += f" rater {row['rater']}"
    return text


def _table_problems(frame: pd.DataFrame, conditions: tuple[str, str]) -> list[str]:
    """Problems across rows: duplicates, unpaired values, design, inconsistent scales."""
    problems = []
    dup = frame[frame.duplicated(KEY, keep=False)]
    for _, rows in dup.groupby(KEY, sort=False):
        lines = ", ".join(str(n) for n in rows["line"])
        first = rows.iloc[0]
        problems.append(
            f"lines {lines}: duplicated row for {_describe(first)}, condition {first['condition']}"
        )
    pair_key = [k for k in KEY if k != "condition"]
    for _, rows in frame.groupby(pair_key, sort=False):
        present = set(rows["condition"])
        for missing in (c for c in conditions if c not in present):
            first = rows.iloc[0]
            problems.append(
                f"line {first['line']}: {_describe(first)} is recorded for "
                f"{first['condition']} but not for {missing} (unpaired)"
            )
    for participant, rows in frame.groupby("participant", sort=False):
        for column in ("order", "task"):
            per_condition = rows.groupby("condition")[column].unique()
            for condition, values in per_condition.items():
                if len(values) > 1:
                    lines = rows.loc[rows["condition"] == condition, "line"]
                    problems.append(
                        f"lines {lines.min()}-{lines.max()}: participant {participant} has "
                        f"several {column} values in {condition}: {sorted(values)}"
                    )
        firsts = rows.drop_duplicates("condition")
        if len(firsts) == 2:
            for column in ("order", "task"):
                if firsts[column].nunique() == 1:
                    lines = ", ".join(str(n) for n in firsts["line"])
                    problems.append(
                        f"lines {lines}: participant {participant} has the same {column} "
                        f"({firsts[column].iloc[0]}) in both conditions"
                    )
    scales = frame.groupby(["measure_group", "measure"])["scale"].unique()
    for (group, measure), values in scales.items():
        if len(values) > 1:
            problems.append(f"{group}/{measure} uses several scales: {sorted(values)}")
    return problems


def validate_frame(
    raw: pd.DataFrame,
    source: str,
    *,
    meta: dict[str, str] | None = None,
    conditions: tuple[str, str] = CONDITIONS,
    first_line: int = 2,
) -> StudyData:
    """Validate a table of strings in the schema and return typed StudyData.

    Args:
        raw: the table, every cell a string (empty string for empty cells).
        source: name used in error messages (a file path).
        meta: metadata (``# key: value`` lines).
        conditions: the two condition names, treatment first.
        first_line: source line number of the first data row.

    Raises:
        StudyDataError: listing every problem with the lines it concerns.
    """
    missing = [c for c in COLUMNS if c not in raw.columns]
    unknown = [c for c in raw.columns if c not in COLUMNS]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing column(s): {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown column(s): {', '.join(map(str, unknown))}")
        raise StudyDataError(source, problems)
    if raw.empty:
        raise StudyDataError(source, ["no data rows"])
    frame = raw[list(COLUMNS)].astype(str).apply(lambda col: col.str.strip())
    frame.insert(0, "line", range(first_line, first_line + len(frame)))
    problems = []
    for _, row in frame.iterrows():
        problems.extend(_row_problems(row, conditions))
    if problems:
        raise StudyDataError(source, problems)
    problems = _table_problems(frame, conditions)
    if problems:
        raise StudyDataError(source, problems)
    frame["order"] = frame["order"].astype(int)
    frame["value"] = frame["value"].astype(float)
    return StudyData(
        frame=frame.reset_index(drop=True),
        source=source,
        meta=dict(meta or {}),
        conditions=conditions,
    )


def complete_pairs(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """Drop values missing (NaN) in either condition of a participant, saying why.

    ``frame`` has the schema's columns and a ``reason`` for each missing value. Returns
    the rows kept and, per dropped value, its key, the conditions it was missing in and
    why.
    """
    key = ["participant", "measure_group", "measure", "rater"]
    missing = frame[frame["value"].isna()]
    dropped = []
    for values, rows in missing.groupby(key, sort=True):
        dropped.append(
            {
                **dict(zip(key, values, strict=True)),
                "conditions": ", ".join(sorted(rows["condition"])),
                "reason": "; ".join(sorted({str(r) for r in rows["reason"]})),
            }
        )
    incomplete = missing[key].drop_duplicates()
    kept = frame.merge(incomplete, on=key, how="left", indicator=True)
    kept = kept[kept["_merge"] == "left_only"].drop(columns="_merge")
    return kept, dropped


def load_study(path: str | Path, conditions: tuple[str, str] = CONDITIONS) -> StudyData:
    """Read and validate a study CSV in the long-format schema.

    Raises:
        StudyDataError: the file is missing or unreadable, or the data break the schema.
    """
    source = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise StudyDataError(source, [f"cannot read the file: {error}"]) from None
    meta: dict[str, str] = {}
    n_meta = 0
    for line in lines:
        if not line.startswith("#"):
            break
        n_meta += 1
        key, sep, value = line[1:].partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    if n_meta == len(lines):
        raise StudyDataError(source, ["the file has no header row and no data"])
    try:
        raw = pd.read_csv(
            path, skiprows=n_meta, dtype=str, keep_default_na=False, skip_blank_lines=False
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as error:
        raise StudyDataError(source, [f"not a readable CSV: {error}"]) from None
    return validate_frame(raw, source, meta=meta, conditions=conditions, first_line=n_meta + 2)


def write_study(data: StudyData, path: str | Path) -> Path:
    """Write study data as CSV in the schema, metadata first as ``# key: value`` lines."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = data.frame[list(COLUMNS)].copy()
    frame["value"] = frame["value"].map(lambda v: f"{v:g}")
    header = "".join(f"# {key}: {value}\n" for key, value in data.meta.items())
    path.write_text(header + frame.to_csv(index=False, lineterminator="\n"), encoding="utf-8")
    return path
