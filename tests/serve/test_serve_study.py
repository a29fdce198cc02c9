"""Issue 30, points 1-2: the DocuTeam study served to participants, raters and a researcher.

Driven through the links without a browser (the browser test is
``test_serve_study_browser.py``): each test starts the server itself on 127.0.0.1 with a
free port, writes the study folder under ``tmp_path`` and stops the server.
"""

import asyncio
import contextlib
import json

import pytest
from clients import Page, fetch
from docuteam_helpers import NETWORKING_EDIT

from hasbench.cli import main
from hasbench.docuteam.study.design import StudyDesignError, load_design
from hasbench.docuteam.study.folder import study_from_folder
from hasbench.docuteam.study.questionnaire import ITEMS, RATING_DIMENSIONS
from hasbench.llm import ModelError, register_test_provider
from hasbench.serve.server import Server
from hasbench.serve.study import ServedStudy

EDITS = {
    "workshop": ("b22", NETWORKING_EDIT),
    "sports_day": ("b9", "Relay race or a tug of war between mixed teams?"),
}


def design(tmp_path, **fields):
    """A study file under tmp_path (scripted engine, short sessions)."""
    values = {
        "title": "Test study",
        "consent": "You agree to take part.",
        "participants": 4,
        "raters": ["R1", "R2"],
        "tasks": ["workshop", "sports_day"],
        "minutes_per_session": 5,
        "debounce": 0.05,
        "backends": "scripted:docuteam",
        **fields,
    }
    path = tmp_path / "study.yaml"
    path.write_text(json.dumps(values), encoding="utf-8")
    return load_design(path)


@contextlib.asynccontextmanager
async def serving(study, out):
    app = ServedStudy(study, out)
    server = Server(app, port=0, tick=0.01)
    await server.start()
    try:
        yield app, server
    finally:
        await server.stop()


async def join(server, seat):
    status, _, cookie = await fetch(server.link(seat))
    assert status == 200
    return await Page.open(server.link(seat), cookie)


def answers(value):
    return {item: value for item in ITEMS}


async def participate(page, order_values=(6, 3)):
    """Consent, then both sessions (an edit each, agents react), each with its survey."""
    assert await page.send({"do": "consent", "agree": False}) is not None
    assert await page.send({"do": "consent", "agree": True}) is None
    for value in order_values:
        state = await page.until(lambda s: s["phase"] == "brief")
        assert state["task"] and state["intro"]
        assert await page.send({"do": "start_session"}) is None
        state = await page.until(lambda s: s["phase"] == "session")
        ui = state["ui"]
        task = "workshop" if ui["task"].startswith("You help organise") else "sports_day"
        block, text = EDITS[task]
        edit = {"do": "ui", "action": {"do": "edit", "block": block, "text": text}}
        assert await page.send(edit) is None
        if ui["baseline"]:  # the agents talk only when asked
            agents = [a["id"] for a in ui["agents"][:2]]
            start = {"do": "start", "agents": agents, "mode": "idea"}
            assert await page.send({"do": "ui", "action": start}) is None
            await page.until(lambda s: any(d["bubble"] for d in s["ui"]["discussions"]))
        else:  # the agents read the edit and react beside it
            await page.until(lambda s: "reactions" in str(s["ui"]["beside"]))
        assert await page.send({"do": "finish_session"}) is None
        await page.until(lambda s: s["phase"] == "survey")
        assert await page.send({"do": "survey", "answers": {"use_again": 5}}) is not None
        assert await page.send({"do": "survey", "answers": answers(value)}) is None
    return await page.until(lambda s: s["phase"] == "done")


def test_a_study_runs_from_consent_to_analysis(tmp_path, capsys):
    study = design(tmp_path)
    out = tmp_path / "folder"

    async def run():
        async with serving(study, out) as (app, server):
            pages = [await join(server, p) for p in study.design.people]
            watch = await join(server, "researcher")
            first = pages[0].state
            await asyncio.gather(*(participate(page) for page in pages))
            raters = [await join(server, r) for r in ("R1", "R2")]
            for rater in raters:
                state = await rater.until(lambda s: len(s["plans"]) == 8)
                for number, plan in enumerate(state["plans"]):
                    scores = {d: 1 + (number + len(d)) % 5 for d in RATING_DIMENSIONS}
                    rating = {"do": "rate", "plan": plan["id"], "scores": scores}
                    assert await rater.send(rating) is None
                rating = {"do": "rate", "plan": "nope", "scores": scores}
                assert await rater.send(rating) is not None
            orders = [[p["id"] for p in (await r.until(lambda s: True))["plans"]] for r in raters]
            progress = await watch.until(lambda s: all(r["rated"] == 8 for r in s["raters"]))
            rater_text = json.dumps(raters[0].state)
            for page in [*pages, *raters, watch]:
                page.close()
            return first, orders, progress, rater_text

    first, orders, progress, rater_text = asyncio.run(run())
    assert first["phase"] == "consent" and first["consent"] == "You agree to take part."
    # Raters see every plan, blind, each in an order of their own.
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]
    assert not any(word in rater_text for word in ("P01", "P02", "DocuTeam", "Baseline"))
    # The researcher's page shows every participant's progress.
    assert [p["phase"] for p in progress["people"]] == ["Finished"] * 4
    assert all(s["status"] == "finished" and s["survey"] for p in progress["people"]
               for s in p["sessions"])  # fmt: skip
    # Everything is in the folder, and the analysis reads it directly.
    logs = sorted(p.name for p in (out / "sessions").iterdir())
    assert len(logs) == 8 and (out / "surveys.jsonl").exists()
    folder = study_from_folder(out)
    assert folder.data.participants == study.design.people and not folder.left_out
    counts = folder.data.frame.groupby("measure_group").size().to_dict()
    assert counts["survey"] == 4 * 2 * 10 and counts["nasa_tlx"] == 4 * 2 * 5
    assert counts["blind_rating"] == 4 * 2 * 2 * 4 and counts["interaction"] > 0
    figures = tmp_path / "figures"
    assert main(["study", "analyze", str(out), "--out", str(figures)]) == 0
    produced = {p.name for p in figures.iterdir()}
    assert {"table2.csv", "figure3.png", "figure4.png", "figure5.png", "figure8.png"} <= produced


def test_links_are_private_and_a_restart_resumes_where_everyone_was(tmp_path):
    study = design(tmp_path, participants=["A1", "A2"], raters=["R1"])
    out = tmp_path / "folder"

    async def first_run():
        async with serving(study, out) as (app, server):
            links = {s.id: server.link(s.id).rsplit("/", 2)[1:] for s in app.seats()}
            bad = server.link("A1").rsplit("/", 1)[0] + "/not-a-token"
            refused = [(await fetch(bad))[0]]
            page = await join(server, "A1")
            refused.append((await fetch(server.link("A1")))[0])  # another browser: refused
            await page.send({"do": "consent", "agree": True})
            await page.send({"do": "start_session"})
            state = await page.until(lambda s: s["phase"] == "session")
            await page.send({"do": "ui", "action": {"do": "edit", "block": "b2", "text": "x y z"}})
            other = await join(server, "A2")
            peek = json.dumps(other.state)
            page.close()
            other.close()
            return links, refused, state, peek

    links, refused, state, peek = asyncio.run(first_run())
    assert refused == [403, 403]
    assert "x y z" not in peek and "blocks" not in peek  # A2 sees nothing of A1's session

    async def second_run():
        async with serving(study, out) as (app, server):
            again = {s.id: server.link(s.id).rsplit("/", 2)[1:] for s in app.seats()}
            page = await join(server, "A1")
            return app.interrupted, again, page.state

    interrupted, again, resumed = asyncio.run(second_run())
    assert interrupted == [("A1", state["order"])] and again == links
    assert resumed["phase"] == "survey" and resumed["order"] == 1
    progress = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert progress[-1]["event"] == "session_ended" and progress[-1]["how"] == "interrupted"
    log = (out / "sessions").glob("A1_*.jsonl")
    assert "x y z" in next(log).read_text()


def unreachable(messages, tools):
    raise ModelError("unreachable", "the endpoint does not answer")


def test_a_failed_session_is_listed_apart_and_not_analysed(tmp_path, capsys):
    down = register_test_provider("study-down", unreachable)
    study = design(tmp_path, participants=["A1"], backends={"trigger": down})
    out = tmp_path / "folder"

    async def run():
        async with serving(study, out) as (app, server):
            page = await join(server, "A1")
            await page.send({"do": "consent", "agree": True})
            await page.send({"do": "start_session"})
            edit = {"do": "ui", "action": {"do": "edit", "block": "b2", "text": "A new aim here"}}
            await page.send(edit)
            state = await page.until(lambda s: s["phase"] == "brief", timeout=30)
            page.close()
            return state

    state = asyncio.run(run())
    assert state["order"] == 2 and "technical reason" in state["note"]
    assert main(["study", "analyze", str(out), "--out", str(tmp_path / "f")]) == 1
    printed = capsys.readouterr()
    assert "no participant has completed the study" in printed.err
    assert "failed session, not analysed: A1 " in printed.err and "unreachable" in printed.err


def test_a_bad_study_file_names_the_file_and_the_field(tmp_path):
    with pytest.raises(StudyDesignError, match=r"study.yaml: minutes_per_session"):
        design(tmp_path, minutes_per_session=0)
    with pytest.raises(StudyDesignError, match=r"tasks: 'picnic' is neither"):
        design(tmp_path, tasks=["workshop", "picnic"])
    with pytest.raises(StudyDesignError, match=r"counterbalancing.P01: two sessions"):
        design(tmp_path, participants=["P01"],
               counterbalancing={"P01": ["DocuTeam workshop", "DocuTeam sports_day"]})  # fmt: skip
    with pytest.raises(StudyDesignError, match=r"backends.writer: not a DocuTeam role"):
        design(tmp_path, backends={"writer": "scripted:docuteam"})
    assert main(["serve", "study", str(tmp_path / "missing.yaml")]) == 1
