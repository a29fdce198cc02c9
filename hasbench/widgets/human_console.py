"""Play a human of an episode yourself, in the notebook: :func:`play` and its console.

:func:`play` sets up an episode whose humans (or some of them) are played by you through
the ``human:notebook`` backend and returns a :class:`HumanConsole`. The episode starts
when you press the console's Start button (or call :meth:`HumanConsole.start`), after you
have read your part, and runs in the notebook's event loop; whenever an agent asks a
human you play, the console shows the request with what is asked and what that human
knows (its facts and rules), and waits for your answer (text; approve, deny, approve with
changes, override, do it yourself, or stop). Between turns you can give feedback or
information on your own, or stop the episode. When it ends, the console shows the
outcome and the trace beside its graph. What it shows is built by
:mod:`hasbench.participants.person_view`, as the terminal and the served page show it.

Starting on the person's click is also what keeps the page whole: a page that is still
loading (Voila restoring the widgets from the kernel) drops updates the kernel sends in
the meantime, so an episode that ran while the page loaded could show a request's buttons
without its card. A click comes from a page whose widgets are all in place.
"""

from __future__ import annotations

import asyncio
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from hasbench.agency import Setting
from hasbench.participants.backends import make_judge
from hasbench.participants.human import Answer, Ask, Desk
from hasbench.participants.person_view import (
    TAKES_ARGUMENTS,
    Card,
    Knowledge,
    card,
    conversation,
    knowledge,
)
from hasbench.scenario import Scenario, load_task
from hasbench.simulator import Backends, Episode
from hasbench.trace import Trace
from hasbench.widgets.episode_view import EpisodeView
from hasbench.widgets.trace_viewer import STYLE

_CONSOLE_STYLE = """<style>
.hb-console .hb-card {border: 2px solid #C44E52; border-radius: 4px; padding: 6px;
  background: #fff8f8;}
.hb-console .hb-context {border-left: 4px solid #DD8452; padding-left: 6px;}
.hb-console pre {white-space: pre-wrap;}
.hb-console .hb-asked {font-weight: bold; margin: 4px 0;}
.hb-console .hb-words {font-style: italic; margin: 4px 0;}
.hb-console ul {margin: 2px 0 2px 18px; padding: 0;}
</style>"""


def play(
    task: Scenario | str | Path,
    task_id: str | None = None,
    *,
    setting: Setting | None = None,
    agent: str = "scripted:oracle",
    plays: Sequence[str] | None = None,
    others: str = "scripted:user",
    judge: str = "rule",
    seed: int = 0,
    pace: float = 1.0,
    out: str | Path | None = None,
) -> HumanConsole:
    """Set up an episode in which you play humans, and return its console (display it).

    The episode runs from the moment the console's Start button is pressed.

    Args:
        task: a scenario, or a task file (then ``task_id`` names the task).
        task_id: the task in ``task``'s file.
        setting: the participation setting (default A3, all channels).
        agent: who plays the agents (a model string or ``scripted:*``).
        plays: the humans you play (default: all of them).
        others: who plays the humans you do not play.
        judge: the judge of the outcome shown at the end.
        seed: the episode seed.
        pace: seconds to wait before each turn, to leave room for your own input.
        out: where to write the trace when the episode ends.

    Raises:
        RuntimeError: called outside a running event loop (use ``hasbench episode ...
            --user human:terminal`` in a terminal).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "play() runs the episode in the notebook's event loop; in a terminal use "
            "`hasbench episode FILE TASK_ID --user human:terminal`"
        ) from None
    scenario = task if isinstance(task, Scenario) else load_task(task, task_id)
    user = "human:notebook" + (f"?play={','.join(plays)}&others={others}" if plays else "")
    desk = Desk(pace=pace)
    with desk.use():
        episode = Episode(scenario, setting, Backends(agent=agent, user=user, judge=judge), seed)
    return HumanConsole(episode, desk, loop, out)


class HumanConsole(widgets.VBox):
    """The person's side of an episode: requests to answer, their own input, the outcome.

    Attributes:
        episode: the running episode.
        desk: where its requests to the person wait.
        task: the asyncio task running the episode (None until it starts).
        trace: the finished trace (None while it runs).
        outcome: the finished episode's outcome (None while it runs).
        status_html, context_html, request_html, log_html: the shown panels.
        answer_text, arguments_text: the answer's words and, for control, the arguments.
        buttons: the answer buttons of the current request, by decision or action name.
        start_button: starts the episode.
        own_kind, own_text, own_send, stop: input of your own at any time.
    """

    def __init__(
        self,
        episode: Episode,
        desk: Desk,
        loop: asyncio.AbstractEventLoop,
        out: str | Path | None = None,
    ) -> None:
        self.episode = episode
        self.desk = desk
        self.task: asyncio.Task[Any] | None = None
        self._loop = loop
        self._out = out
        self.trace: Trace | None = None
        self.outcome: Any = None
        self.error: str | None = None
        people = episode.trace.header.people or {}
        self.played = [u for u in episode.humans if u in people]
        self.status_html = widgets.HTML()
        self.context_html = widgets.HTML()
        self.request_html = widgets.HTML()
        self.answer_text = widgets.Textarea(
            placeholder="your words to the agent", layout=widgets.Layout(width="100%")
        )
        self.arguments_text = widgets.Textarea(layout=widgets.Layout(width="100%", height="70px"))
        self.answer_text.add_class("hb-answer-text")
        self.arguments_text.add_class("hb-arguments")
        self.rating = widgets.Dropdown(
            options=[("no rating", None), *[(str(i), i) for i in range(1, 6)]], description="rating"
        )
        self.own_tool = widgets.Dropdown(description="your tool")
        self.buttons: dict[str, widgets.Button] = {}
        self.answer_box = widgets.VBox()
        self.problem_html = widgets.HTML()
        self.own_user = widgets.Dropdown(
            options=self.played, description="as", layout=widgets.Layout(width="160px")
        )
        self.own_kind = widgets.Dropdown(
            options=[("feedback", "feedback"), ("information", "inform")],
            layout=widgets.Layout(width="130px"),
        )
        self.own_text = widgets.Text(
            placeholder="say something to the agent on your own",
            layout=widgets.Layout(flex="1 1 auto"),
        )
        self.own_send = widgets.Button(
            description="Send", tooltip="reaches the agent before the next turn"
        )
        self.stop = widgets.Button(description="Stop the episode", button_style="danger")
        self.start_button = widgets.Button(
            description="Start", button_style="primary", tooltip="the agents begin"
        )
        self.start_button.add_class("hb-start")
        self.start_button.on_click(lambda _: self.start())
        self.own_send.on_click(lambda _: self._offer(self.own_kind.value, self.own_text.value))
        self.stop.on_click(lambda _: self._offer("stop", self.own_text.value))
        self.log_html = widgets.HTML()
        self.result = widgets.Box(layout=widgets.Layout(width="100%"))
        own = widgets.HBox(
            [self.own_user, self.own_kind, self.own_text, self.own_send, self.stop],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        super().__init__(
            children=[
                widgets.HTML(STYLE + _CONSOLE_STYLE),
                self.status_html,
                self.start_button,
                widgets.HBox(
                    [
                        widgets.VBox(
                            [self.request_html, self.answer_box, self.problem_html],
                            layout=widgets.Layout(flex="3 1 0", min_width="0"),
                        ),
                        widgets.VBox(
                            [self.context_html], layout=widgets.Layout(flex="2 1 0", min_width="0")
                        ),
                    ],
                    layout=widgets.Layout(width="100%", grid_gap="12px"),
                ),
                own,
                self.log_html,
                self.result,
            ]
        )
        self.add_class("hb-console")
        self._shown: Ask | None = None
        desk.subscribe(self.refresh)
        self.refresh()

    # -- running -----------------------------------------------------------------------

    def start(self) -> asyncio.Task[Any]:
        """Start the episode (what the Start button does); starting again changes nothing."""
        if self.task is None:
            self.task = self._loop.create_task(self._run())
            self.start_button.layout.display = "none"
            self.refresh()
        return self.task

    async def _run(self) -> Trace | None:
        """Run the episode to its end, write and evaluate its trace, show the outcome."""
        from hasbench.evaluate import evaluate
        from hasbench.metrics import trace_metrics

        try:
            trace = await self.episode.run()
            if self._out is not None:
                trace.write(self._out)
            judge = make_judge(self.episode.backends.judge, self.episode.client)
            self.outcome = await evaluate(self.episode.scenario, trace, judge)
            self.trace = trace
            view = EpisodeView(
                trace,
                self.episode.scenario,
                outcome=self.outcome,
                metrics=trace_metrics(trace, self.episode.scenario),
            )
            self.result.children = [view]
        except Exception as exc:  # noqa: BLE001 - shown in the console, not lost in a task
            self.error = f"{type(exc).__name__}: {exc}"
        self.refresh()
        return self.trace

    @property
    def waiting(self) -> Ask | None:
        """The oldest request waiting for you."""
        return self.desk.waiting[0] if self.desk.waiting else None

    def answer(self, decision: str | None = None, **fields: Any) -> None:
        """Answer the waiting request (as its buttons do): a decision and/or text, rating."""
        ask = self.waiting
        if ask is None:
            raise ValueError("no request is waiting for you")
        self.desk.answer(ask, Answer(decision=decision, **fields))

    # -- showing -----------------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw status, context, the waiting request and the log."""
        self.status_html.value = self._status()
        ask = self.waiting
        users = [ask.user_id] if ask is not None else self.played
        views = [self.desk.views.get(u) or self.episode.human_view(u) for u in users]
        self.context_html.value = "".join(_knowledge_html(knowledge(v)) for v in views)
        if ask is not self._shown:
            self._shown = ask
            self._show_request(ask)
        ended = self.episode.ended
        for control in (self.own_send, self.stop, self.own_text, self.own_kind):
            control.disabled = ended or self.task is None  # nothing to say before Start
        self.log_html.value = self._log()

    def _status(self) -> str:
        who = ", ".join(self.played) or "nobody"
        head = (
            f"<b>{html.escape(self.episode.scenario.task_id)}</b> · "
            f"{html.escape(self.episode.setting.label())} · agent "
            f"{html.escape(self.episode.backends.agent)} · you play <b>{html.escape(who)}</b>"
        )
        if self.error is not None:
            state = f"<span class='hb-error'>failed: {html.escape(self.error)}</span>"
        elif self.trace is not None and self.trace.termination is not None:
            term = self.trace.termination
            ok = self.outcome.success if self.outcome is not None else None
            score = self.outcome.task_score if self.outcome is not None else None
            shown = "–" if score is None else f"{score:.2f}"
            state = (
                f"<span class='hb-ended'>ended: <b>{html.escape(term.reason)}</b> in turn "
                f"{term.step} · success <b>{'yes' if ok else 'no'}</b> · Task Score {shown}</span>"
            )
        elif self.waiting is not None:
            state = "<span class='hb-error'>waiting for you</span>"
        elif self.task is None:
            state = "not started: read your part below, then press Start"
        else:
            state = f"running · turn {self.episode.step_no}"
        return f"<div class='hb-panel hb-status'>{head} · {state}</div>"

    def _show_request(self, ask: Ask | None) -> None:
        self.problem_html.value = ""
        self.buttons = {}
        if ask is None:
            self.request_html.value = (
                "<div class='hb-panel hb-muted'>No request for you right now.</div>"
            )
            self.answer_box.children = []
            return
        self.answer_text.value = ""
        shown = card(ask)
        self.request_html.value = _card_html(shown)
        children: list[widgets.Widget] = [self.answer_text]
        if shown.action is not None:
            self.arguments_text.value = json.dumps(shown.action.arguments, indent=1, sort_keys=True)
            children = [
                widgets.HTML(
                    "<div class='hb-panel'>the action's values (edit them to approve with "
                    "changes, override or do it yourself)</div>"
                ),
                self.arguments_text,
                self.answer_text,
            ]
        if shown.tools:
            self.own_tool.options = shown.tools
            children.append(self.own_tool)
        if shown.takes_rating:
            children.append(self.rating)
        for choice in shown.choices:
            button = widgets.Button(
                description=choice.label,
                tooltip=choice.help,
                button_style=_STYLES.get(choice.value, ""),
                layout=widgets.Layout(width="auto"),
            )
            button.add_class(f"hb-answer-{choice.value}")
            button.on_click(lambda _, n=choice.value: self._answer_clicked(n))
            self.buttons[choice.value] = button
        self.answer_box.children = [*children, widgets.HBox(list(self.buttons.values()))]

    def _answer_clicked(self, name: str) -> None:
        ask = self.waiting
        if ask is None:
            return
        text = self.answer_text.value.strip()
        try:
            if ask.kind == "control":
                takes = name in TAKES_ARGUMENTS
                arguments = json.loads(self.arguments_text.value) if takes else None
                tool = self.own_tool.value if name == "take_over" else None
                answer = Answer(text=text, decision=name, arguments=arguments, tool=tool)
            elif name == "decline":
                answer = Answer(text=text, declined=True)
            else:
                rating = self.rating.value if ask.kind == "feedback" else None
                answer = Answer(text=text, rating=rating)
            self.desk.answer(ask, answer)
        except (ValueError, json.JSONDecodeError) as exc:
            self._problem(str(exc))

    def _offer(self, kind: str, text: str) -> None:
        user = self.own_user.value
        if user is None or self.episode.ended:
            return
        try:
            self.desk.offer(user, kind, text)
        except ValueError as exc:
            self._problem(str(exc))
            return
        self.own_text.value = ""

    def _problem(self, text: str) -> None:
        self.problem_html.value = f"<div class='hb-panel hb-error'>{html.escape(text)}</div>"

    def _log(self) -> str:
        """What the humans you play saw: said to them, by them, and their requests' fates."""
        rows = [
            f"<tr><td>{line.turn}</td><td>{html.escape(user)}</td><td>{html.escape(line.speaker)}"
            f" → {html.escape(line.to or '')}</td><td>{html.escape(line.what)}</td>"
            f"<td>{html.escape(line.text)}</td></tr>"
            for user in self.played
            for line in conversation(self.episode.trace.events, user)
        ]
        if not rows:
            return "<div class='hb-panel hb-muted'>Nothing said to or by you yet.</div>"
        return (
            "<div class='hb-panel'><b>Your conversation</b><table><tr><th>turn</th>"
            "<th>as</th><th>who</th><th>what</th><th>said</th></tr>"
            f"{''.join(rows)}</table></div>"
        )


_STYLES = {
    "approve": "success",
    "execute": "success",
    "send": "success",
    "deny": "warning",
    "modify": "info",
    "override": "info",
    "take_over": "info",
    "stop": "danger",
}


def _knowledge_html(known: Knowledge) -> str:
    """The played human's part, rules and facts."""

    def items(values: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(v)}</li>" for v in values) + "</ul>"

    facts = [f"{name}: {value}" for name, value in known.facts]
    parts = [
        f"<div class='hb-panel hb-context'><b>You play {html.escape(known.title)}</b>",
        f"<div>Your goal: {html.escape(known.goal)}</div>",
    ]
    if known.responsibilities:
        parts.append("<div>You answer for:</div>" + items(list(known.responsibilities)))
    if known.rules:
        parts.append("<div>Your rules:</div>" + items(list(known.rules)))
    parts.append(
        "<div>What you know:</div>"
        + (items(facts) if facts else "<div class='hb-muted'>no facts of your own</div>")
    )
    if known.unknown:
        parts.append(f"<div>What you do not know: {html.escape(', '.join(known.unknown))}</div>")
    if known.tools:
        names = ", ".join(name for name, _ in known.tools)
        parts.append(f"<div>Your own tools: {html.escape(names)}</div>")
    parts.append(f"<div class='hb-muted'>Persona: {html.escape(known.persona)}</div></div>")
    return "".join(parts)


def _card_html(shown: Card) -> str:
    """A waiting request: who asks, what is asked, their words, the action."""
    lines = [
        f"<div class='hb-panel hb-card'><b>{html.escape(shown.heading)}</b>"
        + (f" <code>{html.escape(shown.request_id)}</code>" if shown.request_id else ""),
        f"<div class='hb-asked'>{html.escape(shown.asked)}</div>",
    ]
    if shown.words:
        lines.append(f"<pre class='hb-words'>{html.escape(shown.words)}</pre>")
    if shown.action is not None:
        about = f" ({html.escape(shown.action.about)})" if shown.action.about else ""
        lines.append(f"<div>Action: <code>{html.escape(shown.action.name)}</code>{about}</div>")
    return "".join(lines) + "</div>"
