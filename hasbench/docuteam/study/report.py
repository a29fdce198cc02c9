"""Tables (CSV, Markdown, LaTeX) and figures (Figures 3, 4, 5, 8) of the DocuTeam study.

Tables read as a paper's: readable group and measure names, rounded numbers, and the
significance stars in a column of their own. Figures are written as PNG and PDF. Outputs
made from synthetic data say so: a first comment line in CSV, a note in Markdown, the
LaTeX caption, and a banner on every figure. Data from simulated participants (metadata
``participants: simulated``) say that instead, and a simulated study's outputs add
``stand_in_rules``: per measure, the stand-in rules that can drive its difference.
"""

from __future__ import annotations

import json
import math
from importlib.metadata import version
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import scipy

from hasbench.docuteam.study.analysis import (
    TLX_OVERALL,
    WILCOXON_OPTIONS,
    StudyAnalysis,
    analyze,
    likert_counts,
)
from hasbench.docuteam.study.data import (
    GROUP_LABELS,
    KNOWN_MEASURES,
    StudyData,
    load_study,
)
from hasbench.docuteam.study.example import generate_example

SYNTHETIC_NOTE = "SYNTHETIC EXAMPLE DATA - generated to exercise the pipeline, not study results"
SIMULATED_NOTE = (
    "SIMULATED PARTICIPANTS - scripted or model personas used both conditions; not results "
    "from people"
)
COLORS = {"treatment": "#3b6fb6", "control": "#9a9a9a"}
AGREE_LABELS = (
    "Strongly disagree",
    "Disagree",
    "Somewhat disagree",
    "Neutral",
    "Somewhat agree",
    "Agree",
    "Strongly agree",
)
TLX_LABELS = ("Very low", "Low", "Somewhat low", "Moderate", "Somewhat high", "High", "Very high")
TEST_NAMES = {"paired-t": "Paired t", "wilcoxon": "Wilcoxon signed-rank"}
"""Readable names of the tests."""


# --------------------------------------------------------------------------- tables


def _m_sd(results: pd.DataFrame, condition: str) -> list[str]:
    """Format a condition's means and SDs as ``M ± SD`` strings."""
    means, sds = results[f"{condition}_mean"], results[f"{condition}_sd"]
    return [f"{m:.2f} ± {s:.2f}" for m, s in zip(means, sds, strict=True)]


def results_table(analysis: StudyAnalysis) -> pd.DataFrame:
    """The full results table for display: M ± SD per condition, test, statistic, p, effect."""
    treat, control = analysis.data.conditions
    res = analysis.results
    return pd.DataFrame(
        {
            "Group": [GROUP_LABELS.get(g, g) for g in res["measure_group"]],
            "Measure": res["label"],
            treat: _m_sd(res, treat),
            control: _m_sd(res, control),
            "Test": [TEST_NAMES.get(t, t) for t in res["test"]],
            "Result": res["apa"],
            "Effect": [
                f"{k} = {e:.2f}"
                for k, e in zip(res["effect_size_kind"], res["effect_size"], strict=True)
            ],
            "Sig.": res["stars"],
        }
    )


def table2(analysis: StudyAnalysis) -> pd.DataFrame:
    """Table 2: task-process measures (steering, draft word changes, messages applied)."""
    treat, control = analysis.data.conditions
    names = [m.name for m in KNOWN_MEASURES.values() if m.figure == "table2"]
    res = analysis.results[
        (analysis.results["measure_group"] == "interaction")
        & analysis.results["measure"].isin(names)
    ]
    return pd.DataFrame(
        {
            "Metric": res["label"],
            treat: _m_sd(res, treat),
            control: _m_sd(res, control),
            "Test": res["apa"],
            "Sig.": res["stars"],
        }
    ).reset_index(drop=True)


def _missing(value: object) -> bool:
    """Whether a table value is absent (None or NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _two_places(value: object) -> str:
    """A number with two decimals, or an en dash when it is absent (e.g. kappa undefined)."""
    return "–" if _missing(value) else f"{value:.2f}"


def agreement_table(analysis: StudyAnalysis) -> pd.DataFrame:
    """Inter-rater agreement for reading: weighted kappa and its CI, two decimals."""
    columns = ["label", "n_plans", "kappa", "ci_low", "ci_high", "weights"]
    agreement = analysis.agreement.reindex(columns=columns)  # undefined rows lack a CI
    if agreement.empty:  # no blind ratings
        return pd.DataFrame(columns=["Dimension", "Plans", "Weighted κ", "95% CI", "Weights"])
    return pd.DataFrame(
        {
            "Dimension": agreement["label"],
            "Plans": agreement["n_plans"],
            "Weighted κ": [_two_places(k) for k in agreement["kappa"]],
            "95% CI": [
                "–" if _missing(lo) or _missing(hi) else f"[{lo:.2f}, {hi:.2f}]"
                for lo, hi in zip(agreement["ci_low"], agreement["ci_high"], strict=True)
            ],
            "Weights": agreement["weights"],
        }
    )


def power_table(analysis: StudyAnalysis) -> pd.DataFrame:
    """Participants needed for 80% power, for reading: effect size, test, N, achieved power."""
    power = analysis.power
    return pd.DataFrame(
        {
            "Effect size (d_z)": [f"{d:.1f}" for d in power["effect_size_dz"]],
            "Test": [TEST_NAMES.get(t, t) for t in power["test"]],
            "Participants needed": power["n_participants"],
            "Achieved power": [f"{p:.2f}" for p in power["achieved_power"]],
            "Method": power["method"],
        }
    )


def simulated_study(data: StudyData) -> bool:
    """True for data written by ``hasbench study simulate``.

    Its report lists the stand-in rules behind each difference
    (:mod:`hasbench.docuteam.simulation.drivers`).
    """
    return (
        data.meta.get("participants", "").strip().lower() == "simulated"
        and data.meta.get("generator") == "hasbench study simulate"
    )


def data_note(data: StudyData) -> str:
    """The note every output of these data carries ('' for collected data)."""
    if data.meta.get("participants", "").strip().lower() == "simulated":
        return SIMULATED_NOTE
    return SYNTHETIC_NOTE if data.synthetic else ""


def _write_table(
    frame: pd.DataFrame, stem: Path, caption: str, note: str, shown: pd.DataFrame | None = None
) -> list[Path]:
    """Write a table as CSV (``frame``), Markdown and LaTeX (``shown`` or ``frame``) with a note."""
    csv, md, tex = (stem.with_suffix(s) for s in (".csv", ".md", ".tex"))
    with csv.open("w", encoding="utf-8") as handle:
        if note:
            handle.write(f"# {note}\n")
        frame.to_csv(handle, index=False, lineterminator="\n")
    frame = frame if shown is None else shown
    quote = f"> **{note}**\n\n" if note else ""
    text = frame.to_markdown(index=False, disable_numparse=True)
    md.write_text(f"{quote}**{caption}**\n\n{text}\n", encoding="utf-8")
    full_caption = f"{caption} ({note})" if note else caption
    latex = frame.to_latex(
        index=False,
        caption=full_caption,
        label=f"tab:docuteam-{stem.name}",
        escape=True,
        float_format="%.3f",
    )
    latex = latex.replace("±", r"$\pm$").replace("<", "$<$").replace("κ", r"$\kappa$")
    tex.write_text(latex, encoding="utf-8")
    return [csv, md, tex]


# --------------------------------------------------------------------------- figures


def _banner(fig: plt.Figure, note: str) -> None:
    if note:
        fig.text(0.5, 0.005, note, ha="center", va="bottom", color="#b00020", fontsize=8)


def _present(analysis: StudyAnalysis, group: str, scale: str | None = None) -> list[str]:
    """Measures of a group present in the results (optionally only those on ``scale``)."""
    res = analysis.results[analysis.results["measure_group"] == group]
    names = [n for n in res["measure"] if n != TLX_OVERALL]
    if scale is not None:
        scales = analysis.data.frame.groupby("measure")["scale"].first()
        names = [n for n in names if scales.get(n) == scale]
    return names


def _grouped_bars(ax: plt.Axes, analysis: StudyAnalysis, group: str, names: list[str]) -> None:
    """Grouped bars (M, SD error bars) per measure, with stars above significant pairs."""
    treat, control = analysis.data.conditions
    res = analysis.results.set_index(["measure_group", "measure"]).loc[group]
    xs = np.arange(len(names))
    width = 0.38
    tops = (res.loc[names, f"{c}_mean"] + res.loc[names, f"{c}_sd"] for c in (treat, control))
    height = np.maximum(*tops).to_numpy()
    top = float(height.max())
    for offset, cond, color in ((-width / 2, treat, "treatment"), (width / 2, control, "control")):
        ax.bar(
            xs + offset,
            res.loc[names, f"{cond}_mean"],
            width,
            yerr=res.loc[names, f"{cond}_sd"],
            capsize=3,
            label=cond,
            color=COLORS[color],
            edgecolor="black",
            linewidth=0.5,
        )
    for x, name, h in zip(xs, names, height, strict=True):
        mark = res.loc[name, "stars"]
        if mark:
            y = h + 0.05 * top
            ax.plot(
                [x - width / 2, x - width / 2, x + width / 2, x + width / 2],
                [y, y + 0.02 * top, y + 0.02 * top, y],
                color="black",
                linewidth=0.8,
            )
            ax.text(x, y + 0.03 * top, mark, ha="center", va="bottom", fontsize=11)
    ax.set_xticks(xs, list(res.loc[names, "label"]))
    ax.set_ylim(0, top * 1.25)
    ax.spines[["top", "right"]].set_visible(False)


def figure3(analysis: StudyAnalysis) -> plt.Figure | None:
    """Figure 3: blind ratings and user-initiated discussions per mode (None without data)."""
    modes = [m.name for m in KNOWN_MEASURES.values() if m.figure == "figure3"]
    panels = [
        (
            "blind_rating",
            _present(analysis, "blind_rating"),
            "Rating (mean of raters)",
            "Blind evaluation of final plans",
            "Rating dimension",
        ),
        (
            "interaction",
            [n for n in _present(analysis, "interaction") if n in modes],
            "Discussions started by the user",
            "User-initiated discussions per mode",
            "Discussion mode",
        ),
    ]
    panels = [p for p in panels if p[1]]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 5.0), squeeze=False)
    for ax, (group, names, ylabel, title, xlabel) in zip(axes[0], panels, strict=True):
        _grouped_bars(ax, analysis, group, names)
        ax.set_ylabel(ylabel)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="lower center", ncols=2, frameon=False, bbox_to_anchor=(0.5, 0.04)
    )
    fig.suptitle("Error bars: 1 SD.  * p < .05, ** p < .01, *** p < .001", fontsize=9, y=0.995)
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    _banner(fig, data_note(analysis.data))
    return fig


def likert_figure(
    analysis: StudyAnalysis, group: str, names: list[str], labels: tuple[str, ...], title: str
) -> plt.Figure | None:
    """Diverging stacked bars of 7-point responses, neutral centred, per condition.

    Returns None when ``names`` is empty.
    """
    if not names:
        return None
    data = analysis.data
    counts = likert_counts(data, group)
    res = analysis.results.set_index(["measure_group", "measure"]).loc[group]
    colors = plt.get_cmap("RdBu_r")(np.linspace(0.05, 0.95, len(labels)))
    colors[len(labels) // 2] = (0.82, 0.82, 0.82, 1.0)
    fig, axes = plt.subplots(
        len(names), 1, figsize=(10, 1.05 * len(names) + 1.6), sharex=True, squeeze=False
    )
    for ax, name in zip(axes[:, 0], names, strict=True):
        for row, cond in enumerate(data.conditions):
            part = counts[(counts["measure"] == name) & (counts["condition"] == cond)]
            pct = part.sort_values("point")["count"].to_numpy(float)
            pct = 100 * pct / pct.sum()
            mid = len(pct) // 2
            left = -(pct[:mid].sum() + pct[mid] / 2)
            for level, share in enumerate(pct):
                ax.barh(
                    row,
                    share,
                    left=left,
                    color=colors[level],
                    edgecolor="white",
                    linewidth=0.5,
                    height=0.75,
                )
                left += share
        ax.set_yticks([0, 1], list(data.conditions), fontsize=8)
        ax.set_ylabel("Condition", fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_title(
            f"{res.loc[name, 'label']} {res.loc[name, 'stars']}".strip(), loc="left", fontsize=9
        )
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_xlim(-100, 100)
    bottom = axes[-1, 0]
    ticks = np.arange(-100, 101, 25)
    bottom.set_xticks(ticks, [f"{abs(t)}" for t in ticks])
    bottom.set_xlabel(
        f"Participants (%):   \u2190 {labels[0].lower()}   |   {labels[-1].lower()} \u2192"
    )
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors]
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncols=4,
        fontsize=8,
        frameon=False,
        bbox_to_anchor=(0.5, 0.03),
    )
    fig.suptitle(f"{title}  (* p < .05, ** p < .01, *** p < .001)", fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 0.97))
    _banner(fig, data_note(analysis.data))
    return fig


# --------------------------------------------------------------------------- outputs


def write_outputs(analysis: StudyAnalysis, out_dir: str | Path) -> list[Path]:
    """Write every table and figure of the study analysis into ``out_dir``.

    Returns:
        The written paths (tables as CSV/Markdown/LaTeX, figures as PNG and PDF, and
        ``analysis.json`` with parameters, versions and the artifact list).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    synthetic = analysis.synthetic
    note = data_note(analysis.data)
    written: list[Path] = []
    raw = analysis.results.drop(columns=["apa"])
    written += _write_table(raw, out / "results_raw", "All measures (numeric)", note)
    written += _write_table(
        results_table(analysis), out / "results", "DocuTeam vs Baseline, all measures", note
    )
    written += _write_table(
        table2(analysis), out / "table2", "Table 2: task-process measures (M ± SD)", note
    )
    written += _write_table(
        analysis.agreement, out / "agreement", "Inter-rater agreement (weighted kappa)",
        note, agreement_table(analysis),
    )  # fmt: skip
    written += _write_table(
        analysis.power, out / "power", "Participants needed for 80% power (paired)", note,
        power_table(analysis),
    )  # fmt: skip
    if simulated_study(analysis.data):
        from hasbench.docuteam.simulation.drivers import stand_in_rules

        written += _write_table(
            stand_in_rules(analysis), out / "stand_in_rules",
            "Stand-in rules that can drive each measure's difference", note,
        )  # fmt: skip
    fig4_names = {m.name for m in KNOWN_MEASURES.values() if m.figure == "figure4"}
    survey = _present(analysis, "survey", scale="1-7")
    figures = {
        "figure3": figure3(analysis),
        "figure4": likert_figure(
            analysis,
            "survey",
            [n for n in survey if n in fig4_names],
            AGREE_LABELS,
            "Post-task survey: outcome and collaboration",
        ),
        "figure5": likert_figure(
            analysis,
            "nasa_tlx",
            _present(analysis, "nasa_tlx", scale="1-7"),
            TLX_LABELS,
            "NASA-TLX workload",
        ),
        "figure8": likert_figure(
            analysis,
            "survey",
            [n for n in survey if n not in fig4_names],
            AGREE_LABELS,
            "Post-task survey: remaining items",
        ),
    }
    for name, fig in figures.items():
        if fig is None:
            continue
        png, pdf = out / f"{name}.png", out / f"{name}.pdf"
        fig.savefig(png, dpi=150, metadata={"Software": None})
        fig.savefig(pdf, metadata={"Creator": None, "Producer": None, "CreationDate": None})
        plt.close(fig)
        written += [png, pdf]
    manifest = out / "analysis.json"
    manifest.write_text(
        json.dumps(
            {
                "source": analysis.data.source,
                "synthetic": synthetic,
                "note": note,
                "metadata": analysis.data.meta,
                "alpha": analysis.alpha,
                "seed": analysis.seed,
                "conditions": list(analysis.data.conditions),
                "n_participants": len(analysis.data.participants),
                "tests": {
                    "likert": {"test": "wilcoxon", **WILCOXON_OPTIONS},
                    "interaction": {
                        "test": "Shapiro-Wilk on the differences; paired-t if p >= alpha, "
                        "else wilcoxon",
                        "alpha": analysis.alpha,
                    },
                    "per_measure": "results_raw.csv: test, method, options, scipy_version",
                },
                "versions": {
                    "hasbench": version("hasbench"),
                    "scipy": scipy.__version__,
                    "numpy": np.__version__,
                    "pandas": pd.__version__,
                },
                "artifacts": sorted(p.name for p in written),
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    written.append(manifest)
    return written


def run_study_analysis(
    data_path: str | Path | None,
    output_dir: str | Path,
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[StudyAnalysis, list[Path]]:
    """Load (or, without ``data_path``, generate) study data, analyse it, write outputs.

    Raises:
        StudyDataError: the data file breaks the schema (the message lists the lines).
    """
    data: StudyData = generate_example(seed=seed) if data_path is None else load_study(data_path)
    analysis = analyze(data, alpha=alpha, seed=seed)
    return analysis, write_outputs(analysis, output_dir)
