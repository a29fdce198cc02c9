"""Issue 29, points 1-3: a served episode, driven through its links without a browser.

Each test starts the server itself on 127.0.0.1 with a free port (``port=0``) in its own
event loop, opens pages as a browser would (the link, its cookie, the live channel) and
stops the server at the end.
"""

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from clients import Page, fetch

from hasbench.paths import REPO_ROOT, TASKS_DIR
from hasbench.scenario import load_task
from hasbench.serve.episode import Person, ServedEpisode, parse_people
from hasbench.serve.live import Room
from hasbench.serve.server import Server, check_host
from hasbench.serve.tokens import Seat
from hasbench.trace import Trace

D_001 = load_task(TASKS_DIR / "examples.yaml", "mock_D_001")
C_001 = load_task(TASKS_DIR / "examples.yaml", "mock_C_001")
PEOPLE = [Person("user_0"), Person("user_1", "P02")]


@contextlib.asynccontextmanager
async def serving(tmp_path, task=D_001, people=PEOPLE, **options):
    """The served episode and its server, started on 127.0.0.1 with a free port."""
    options = {"pace": 0.0, "wait": 30.0, **options}
    app = ServedEpisode(task, people, out=tmp_path, **options)
    server = Server(app, port=0)
    await server.start()
    try:
        yield app, server
    finally:
        await server.stop()


async def join(server, seat):
    """Open a seat's link as a browser: (page, cookie)."""
    status, _, cookie = await fetch(server.link(seat))
    assert status == 200
    return await Page.open(server.link(seat), cookie), cookie


def waiting(kind):
    return lambda state: any(r["kind"] == kind for r in state["requests"])


async def answer(page, kind, **fields):
    state = await page.until(waiting(kind))
    number = next(r["number"] for r in state["requests"] if r["kind"] == kind)
    return await page.send({"do": "answer", "number": number, **fields})


# -- point 1: the episode, served --------------------------------------------------------


def test_serve_two_people_play_mock_d_001_and_the_trace_names_both(tmp_path):
    async def session():
        async with serving(tmp_path) as (app, server):
            running = asyncio.create_task(app.run())
            watch, _ = await join(server, "researcher")
            customer, _ = await join(server, "user_0")
            assert customer.state["phase"] == "before"  # waits for the manager
            manager, _ = await join(server, "user_1")
            assert await answer(customer, "clarification", choice="send",
                                text="t.wren@example.org") is None  # fmt: skip
            assert await answer(manager, "clarification", choice="send", text="30.00") is None
            state = await manager.until(waiting("control"))
            (request,) = state["requests"]
            assert request["action"]["arguments"] == {"account_id": "A101", "amount": 30.0}
            assert [c["value"] for c in request["choices"]] == [
                "approve", "deny", "modify", "override", "stop",
            ]  # fmt: skip
            refused = await manager.send({"do": "answer", "number": request["number"],
                                          "choice": "modify", "arguments": {}})  # fmt: skip
            assert refused == "modify needs at least one changed value (or approve)"
            assert await answer(manager, "control", choice="approve", text="ok") is None
            outcome = await running
            final = await watch.until(lambda s: s["outcome"] is not None)
            return outcome, final, manager

    outcome, final, manager = asyncio.run(session())
    assert outcome["success"] is True and outcome["termination"] == "agent_done"
    assert outcome["person_steps"] == {"user_0": 1, "user_1": 2}
    assert [p["user_id"] for p in final["people"]] == ["user_0", "user_1"]
    trace = Trace.read(app_path(tmp_path))
    assert final["simulated"] == [] and len(final["events"]) == len(trace.events)
    assert trace.header.people == {"user_0": "human:serve", "user_1": "human:serve?person=P02"}
    assert trace.header.backends["user"] == "human:serve?play=user_0,user_1&others=scripted:user"


def app_path(tmp_path):
    (path,) = tmp_path.glob("mock_D_001-*.jsonl")
    return path


def test_serve_humans_nobody_plays_are_simulated(tmp_path):
    async def session():
        async with serving(tmp_path, people=[Person("user_1")]) as (app, server):
            running = asyncio.create_task(app.run())
            manager, _ = await join(server, "user_1")
            await answer(manager, "clarification", choice="send", text="It is 30.00")
            await answer(manager, "control", choice="deny", text="Wrong amount.")
            watch, _ = await join(server, "researcher")
            await running
            return await watch.until(lambda s: s["outcome"] is not None)

    final = asyncio.run(session())
    assert final["simulated"] == ["user_0"]
    trace = Trace.read(app_path(tmp_path))
    assert trace.header.people == {"user_1": "human:serve"}
    customer = [e for e in trace.of_type("channel_response") if e.actor == "user_0"]
    assert customer and customer[0].payload.info == {"email": "t.wren@example.org"}  # simulated
    (denial,) = [e.payload for e in trace.of_type("channel_response")
                 if e.actor == "user_1" and e.payload.decision]  # fmt: skip
    assert (denial.decision, denial.content) == ("deny", "Wrong amount.")


# -- point 2: safe to open to a lab network ---------------------------------------------


def test_serve_links_are_private_and_bad_or_used_links_get_403(tmp_path):
    async def session():
        async with serving(tmp_path) as (app, server):
            links = {seat: server.link(seat) for seat in ("user_0", "user_1", "researcher")}
            tokens = [link.rsplit("/", 1)[1] for link in links.values()]
            base = server.base_url
            checks = {
                "tokens": tokens,
                "index": (await fetch(base + "/"))[0],
                "bad": (await fetch(base + "/join/" + "A" * 43))[0],
                "short": (await fetch(base + "/join/abc"))[0],
                "join as watch": (await fetch(links["researcher"].replace("/watch/", "/join/")))[0],
                "watch as join": (await fetch(links["user_0"].replace("/join/", "/watch/")))[0],
            }
            status, body, cookie = await fetch(links["user_0"])
            checks["first"] = status
            checks["again, same browser"] = (await fetch(links["user_0"], cookie))[0]
            status, body, _ = await fetch(links["user_0"])
            checks["another browser"] = (status, "already opened in another browser" in body)
            checks["wrong cookie"] = (await fetch(links["user_0"], cookie.split("=")[0] + "=x"))[0]
            with pytest.raises(Exception, match="403"):
                await Page.open(links["user_0"], None)  # the live channel without the cookie
            checks["researcher twice"] = [(await fetch(links["researcher"]))[0] for _ in "ab"]
            new = server.reissue("user_0")
            checks["replaced"] = (await fetch(links["user_0"], cookie))[0]
            checks["new"] = (await fetch(new))[0]
            status, _, _ = await fetch(f"{base}/asset/{tokens[0]}/graph.svg")
            checks["asset of another seat"] = status
            return checks

    checks = asyncio.run(session())
    assert len(set(checks.pop("tokens"))) == 3
    assert all(status == 403 for key, status in checks.items() if key in (
        "index", "bad", "short", "join as watch", "watch as join", "wrong cookie", "replaced",
        "asset of another seat"))  # fmt: skip
    assert checks["first"] == checks["again, same browser"] == checks["new"] == 200
    assert checks["another browser"] == (403, True)
    assert checks["researcher twice"] == [200, 200]  # the researcher's link is not claimed


def test_serve_tokens_are_long_random_and_compared_whole():
    from hasbench.serve.tokens import Refused, Tokens

    tokens = Tokens([Seat("a", "a", "p"), Seat("b", "b", "p")])
    token = tokens.token("a")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token) and token != tokens.token("b")
    for wrong in (token[:-1], token + "x", token.upper() if token.upper() != token else "x"):
        with pytest.raises(Refused):
            tokens.find(wrong)


def test_serve_pages_carry_no_other_node_s_facts_no_criteria_and_no_key(tmp_path, monkeypatch):
    key = "sk-test-do-not-leak-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    async def session():
        async with serving(tmp_path) as (app, server):
            running = asyncio.create_task(app.run())
            joined = {seat: await join(server, seat) for seat in ("user_0", "user_1", "researcher")}
            pages = {seat: page for seat, (page, _) in joined.items()}
            html = {seat: (await fetch(server.link(seat), cookie))[1]
                    for seat, (_, cookie) in joined.items()}  # fmt: skip
            await answer(pages["user_0"], "clarification", choice="send", text="t.wren@example.org")
            await answer(pages["user_1"], "clarification", choice="send", text="30.00")
            await answer(pages["user_1"], "control", choice="approve")
            await running
            await pages["researcher"].until(lambda s: s["outcome"] is not None)
            await asyncio.sleep(0.2)
            return {seat: "\n".join(page.sent) + html[seat] for seat, page in pages.items()}

    sent = asyncio.run(session())
    criteria = ["evaluation_criteria", "env_assertions", "assert_refunded", "reward_basis",
                "note_contains", "communicate_info", "action_id"]  # fmt: skip
    for seat, text in sent.items():
        assert key not in text, seat
        for word in criteria:
            assert word not in text, (seat, word)
    assert "30.00" not in sent["user_0"] and "approved_amount" not in sent["user_0"]
    assert "t.wren" not in sent["user_1"]
    assert "t.wren" in sent["user_0"] and "30.00" in sent["user_1"]  # their own facts


def test_serve_every_page_is_a_whole_document_in_the_one_frame():
    from hasbench.serve.pages import PAGES, STATIC, render

    contents = {p.stem for p in STATIC.glob("*.html")}
    assert contents == set(PAGES)  # a page's content without its frame facts is an error
    for name, page in PAGES.items():
        html = render(name)
        assert html.startswith("<!doctype html>\n") and html.endswith("</body>\n</html>\n")
        assert f"<title>{page.title}</title>" in html and f'<body class="{page.kind}">' in html
        assert html.count("<body") == html.count("<head>") == 1  # the content adds no frame
        scripts = re.findall(r'<script src="/static/([\w.]+)"></script>', html)
        assert scripts == ["live.js", f"{name}.js"] and (STATIC / f"{name}.js").is_file()
        for style in page.styles:
            assert (STATIC / style).is_file()
            assert f'<link rel="stylesheet" href="/static/{style}">' in html


def test_serve_binding_beyond_this_computer_must_be_asked_for(tmp_path):
    for host in ("127.0.0.1", "localhost", "::1"):
        assert check_host(host, open_to_network=False) is None
    with pytest.raises(ValueError, match="add --open-to-network to do that on purpose"):
        check_host("0.0.0.0", open_to_network=False)
    assert "anyone on the network who has a link" in check_host("0.0.0.0", open_to_network=True)
    done = subprocess.run(
        [sys.executable, "-m", "hasbench.cli", "serve", str(TASKS_DIR / "examples.yaml"),
         "mock_D_001", "--people", "user_0", "--host", "0.0.0.0", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=REPO_ROOT,
    )  # fmt: skip
    assert done.returncode == 2 and "--open-to-network" in done.stderr
    assert "http://" not in done.stdout  # nothing was served


def test_serve_people_must_be_humans_of_the_task():
    assert parse_people("user_1=P02, user_0", D_001) == [Person("user_1", "P02"), Person("user_0")]
    for text, message in [
        ("agent_0", "'agent_0' is not a human of mock_D_001 \\(its humans: user_0, user_1\\)"),
        ("user_0,user_0", "user_0 is named twice"),
        ("user_0=Ana Lima", "a pseudonym is 1-40 letters"),
        ("", "name at least one human"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_people(text, D_001)


# -- point 3: people are unreliable; the episode is not -----------------------------------


def test_serve_a_dropped_connection_rejoins_where_the_person_was(tmp_path):
    async def session():
        async with serving(tmp_path, people=[Person("user_1")], start="now") as (app, server):
            running = asyncio.create_task(app.run())
            manager, cookie = await join(server, "user_1")
            first = await manager.until(waiting("clarification"))
            manager.close()
            await asyncio.sleep(0.3)
            watch, _ = await join(server, "researcher")
            (person,) = watch.state["people"]
            assert person["joined"] and not person["connected"]
            again = await Page.open(server.link("user_1"), cookie)  # the same browser
            state = await again.until(lambda s: True)
            assert state["requests"] == first["requests"]  # the same request, still waiting
            assert state["you"] == first["you"]
            assert await answer(again, "clarification", choice="send", text="30.00") is None
            assert await answer(again, "control", choice="approve") is None
            return await running

    assert asyncio.run(session())["termination"] == "agent_done"


def test_serve_an_absent_person_s_requests_are_left_unanswered_after_the_wait(tmp_path):
    async def session():
        async with serving(tmp_path, task=C_001, people=[Person("user_1")], start="now",
                           wait=0.2) as (app, server):  # fmt: skip
            outcome = await app.run()  # nobody ever opens the reviewer's page
            watch, _ = await join(server, "researcher")
            return outcome, watch.state

    outcome, state = asyncio.run(session())
    assert outcome["termination"] == "agent_done" and outcome["person_steps"] == {"user_1": 0}
    assert state["people"][0]["unanswered"] == 2
    (path,) = tmp_path.glob("mock_C_001-*.jsonl")
    ends = [e for e in Trace.read(path).of_type("channel_status")
            if e.payload.status == "terminated"]  # fmt: skip
    assert [e.payload.reason for e in ends] == [
        "no usable answer from the person playing user_1"
    ] * 2


def test_serve_actions_arriving_at_once_give_the_same_trace_whatever_their_order(tmp_path):
    """The manager's answer and the customer's own feedback arrive together, in either order."""

    async def session(folder, manager_first):
        async with serving(folder, start="now") as (app, server):
            running = asyncio.create_task(app.run())
            customer, _ = await join(server, "user_0")
            manager, _ = await join(server, "user_1")
            await answer(customer, "clarification", choice="send", text="t.wren@example.org")
            state = await manager.until(waiting("clarification"))
            number = state["requests"][0]["number"]
            own = {"id": "own", "action": {"do": "own", "kind": "feedback", "text": "Quick!"}}
            reply = {"id": "reply", "action": {"do": "answer", "number": number,
                                               "choice": "send", "text": "30.00"}}  # fmt: skip
            first, second = [(manager, reply), (customer, own)][:: 1 if manager_first else -1]
            first[0].connection.write_message(json.dumps(first[1]))
            await asyncio.sleep(0.01)  # apart, but within one tick (0.05 s) of each other
            second[0].connection.write_message(json.dumps(second[1]))
            await answer(manager, "control", choice="approve")
            await running
        (path,) = folder.glob("*.jsonl")
        return Trace.read(path)

    one = asyncio.run(session(tmp_path / "a", True))
    other = asyncio.run(session(tmp_path / "b", False))
    assert one.to_jsonl() == other.to_jsonl()
    (own,) = [e for e in one.of_type("channel_request") if e.initiator == "human"]
    reply = next(e for e in one.of_type("channel_response") if e.actor == "user_1")
    assert (own.actor, own.payload.content, own.step) == ("user_0", "Quick!", reply.step + 1)


def test_serve_the_room_applies_simultaneous_actions_in_seat_order_and_each_once():
    applied = []

    class Sink:
        def __init__(self):
            self.sent = []

        def send(self, text):
            self.sent.append(json.loads(text))

        def close(self):
            pass

    async def session():
        room = Room(lambda seat: {"seat": seat.id}, lambda seat, action: applied.append(
            (seat.id, action["n"])), {"a": 0, "b": 1}, tick=0.05)  # fmt: skip
        a, b = Seat("a", "a", "p"), Seat("b", "b", "p")
        page_a, page_b = Sink(), Sink()
        room.connect(a, page_a)
        room.connect(b, page_b)
        room.receive(b, page_b, json.dumps({"id": "1", "action": {"n": 1}}))
        room.receive(b, page_b, json.dumps({"id": "2", "action": {"n": 2}}))
        room.receive(a, page_a, json.dumps({"id": "3", "action": {"n": 3}}))
        room.receive(b, page_b, json.dumps({"id": "1", "action": {"n": 1}}))  # resent
        room.receive(a, page_a, "not json")
        await asyncio.sleep(0.2)
        return page_a.sent, page_b.sent

    sent_a, sent_b = asyncio.run(session())
    assert applied == [("a", 3), ("b", 1), ("b", 2)]
    assert sent_a[0] == {"type": "state", "state": {"seat": "a"}}
    assert sent_a[1]["error"].startswith("bad message")
    assert [m["id"] for m in sent_b if m["type"] == "ack"] == ["1", "2", "1"]


def start_serving(command):
    """Start ``hasbench serve``; return the process and the lines it printed up to the trace's."""
    server = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)  # fmt: skip
    lines = []
    while not lines or not lines[-1].startswith("trace "):
        line = server.stdout.readline()
        assert line, f"hasbench serve stopped: {lines}"
        lines.append(line.rstrip("\n"))
    return server, lines


def stop_serving(server):
    os.killpg(server.pid, signal.SIGTERM)
    assert server.wait(timeout=20) == 0
    return server.stdout.read()


def test_serve_the_trace_is_written_as_it_goes_and_a_restart_names_the_incomplete(tmp_path):
    command = [sys.executable, "-m", "hasbench.cli", "serve", str(TASKS_DIR / "examples.yaml"),
               "mock_C_001", "--people", "user_1", "--start", "now", "--port", "0",
               "--pace", "0", "--out", str(tmp_path)]  # fmt: skip
    server, lines = start_serving(command)
    path = tmp_path / "mock_C_001-001.jsonl"
    try:
        assert lines[0].startswith("hasbench serve: mock_C_001 (A3/full) on http://127.0.0.1:")
        assert re.fullmatch(r"  user_1 \(safety reviewer\): http://127\.0\.0\.1:\d+/join/\S{43}",
                            lines[2])  # fmt: skip
        assert re.fullmatch(r"  researcher: http://127\.0\.0\.1:\d+/watch/\S{43}", lines[3])
        assert lines[4] == f"trace (written as the episode goes): {path}"
        deadline = time.monotonic() + 30
        while '"ctrl-0001","status":"dispatched"' not in path.read_text():
            assert time.monotonic() < deadline, "the request never reached the file"
            time.sleep(0.1)
    finally:
        tail = stop_serving(server)  # stopped while the reviewer's request waits
    assert f"stopped before the episode ended; its trace so far: {path}" in tail
    trace = Trace.read(path)  # every line written is whole
    assert trace.termination is None
    assert trace.of_type("channel_request")[-1].target == "user_1"
    server, lines = start_serving(command)
    stop_serving(server)
    assert lines[1] == (
        f"incomplete earlier episode: {path}: mock_C_001 stopped in turn "
        f"{trace.events[-1].step} after {len(trace.events)} events (people: user_1)"
    )
    assert lines[-1].endswith("mock_C_001-002.jsonl")
