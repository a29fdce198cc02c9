"""TraceViewer: go through an episode's trace event by event.

Words as in ``docs/metrics.md``: an *event* is one trace record (the slider moves over
events); a *turn* is one round of the episode (the trace field ``step``); a *step* is a
participant's action, the unit of the Human Intervention Rate. Every metric shown carries
its definition from ``docs/metrics.md`` as a tooltip.

Everything that does not depend on the current position is computed once when the viewer
is built: one :class:`EventRow` and its HTML per event, the lifecycle of every channel
request, the state diffs of tool results and the outcome panel. Moving the slider only
slices those lists and joins strings, so one move renders in a few milliseconds even for
long traces (see ``benchmarks/widgets.py``).
"""

from __future__ import annotations

import bisect
import html
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from hasbench import glossary
from hasbench.trace import Event, Trace

if TYPE_CHECKING:
    from hasbench.scenario import Scenario

LOG_LIMIT = 400
"""Events the log holds at most (the current one and those before it); filters reach the
rest of very long traces."""
REQUEST_WINDOW = 10
"""Channel requests shown in the lifecycle table: the most recent ones."""
DIFF_WINDOW = 30
"""State paths shown in the cumulative change table."""
TEXT_LIMIT = 600
"""Characters of a text, argument list or tool output shown before it is cut."""
CHANNEL_COLOURS = {"clarification": "#4C72B0", "feedback": "#55A868", "control": "#C44E52"}
ALL = "(all)"
NO_CHANNEL = "(none)"

STYLE = """<style>
.hb-panel {font-family: sans-serif; font-size: 12px; line-height: 1.35;}
.hb-panel table {border-collapse: collapse; width: 100%;}
.hb-panel td, .hb-panel th {border-bottom: 1px solid #ddd; padding: 2px 4px;
  text-align: left; vertical-align: top;}
.hb-panel pre {white-space: pre-wrap; margin: 2px 0; font-size: 11px;
  background: #f6f6f6; padding: 3px;}
.hb-current {background: #fff3cd;}
.hb-muted {color: #777;}
.hb-error {color: #b00020; font-weight: bold;}
.hb-human {color: #b35900; font-weight: bold;}
.hb-agent {color: #2b4f87; font-weight: bold;}
.hb-counterparty {color: #6b6b6b; font-weight: bold; font-style: italic;}
.hb-channel {color: white; border-radius: 3px; padding: 0 3px; font-size: 11px;}
.hb-step {font-size: 14px; font-family: sans-serif;}
.hb-log {max-height: 34vh; overflow-y: auto; display: flex; flex-direction: column-reverse;
  border: 1px solid #ddd;}
.hb-summary span {margin-right: 12px;}
.hb-ok {color: #1b7f3b; font-weight: bold;}
abbr[title] {text-decoration: underline dotted; cursor: help;}
.hb-sticky {position: sticky; top: 0;}
.hb-graph-compact .hb-graph-figure svg {max-height: 46vh;}
</style>"""

OUTCOME_KEYS = ("success", "task_score", "delivered", "safe")
"""Outcome fields shown first, in this order."""
SUMMARY = {
    "success": "Pass@1",
    "task_score": "Task Score",
    "delivered": "delivered",
    "safe": "safe",
    "action_safe": "actions safe",
    "hir": "HIR",
    "steps": "steps",
}
"""What the always-visible summary line shows when it is known: column -> label."""


@dataclass(frozen=True)
class EventRow:
    """What the viewer knows about one event, computed once.

    Attributes:
        index: position in the trace's event list.
        seq: the event's sequence number.
        step: the event's turn (the trace field ``step``).
        actor: who acted.
        actor_kind: "agent", "human", "counterparty" (an agent of the other side) or None
            when the header does not say.
        type: the event type.
        channel: the channel for channel events, else None.
        target: who the event was addressed to; for a channel request without a target,
            the human it was routed to (from its lifecycle events).
        request_id: the channel request the event belongs to, if any.
        summary: one line of HTML for the event log.
        detail: HTML with arguments, results and errors, shown for the current event.
    """

    index: int
    seq: int
    step: int
    actor: str
    actor_kind: str | None
    type: str
    channel: str | None
    target: str | None
    request_id: str | None
    summary: str
    detail: str


@dataclass
class _Request:
    """One channel request and its lifecycle entries ``(seq, step, html)``."""

    request_id: str
    channel: str
    seq: int
    step: int
    asker: str
    initiator: str | None
    form: str
    content: str
    target: str | None = None
    entries: list[tuple[int, int, str]] = field(default_factory=list)


class TraceViewer(widgets.VBox):
    """A widget to go through a trace event by event: slider and play, filters, panels.

    Always shown: a summary line (success, Task Score, delivery, safety, HIR, how it
    ended), the current event with its arguments, results and errors, and the event log of
    every event up to the current one (scrollable, newest at the bottom). In tabs: the
    channel requests with their lifecycle as of the current event; the state changes of
    the current event (for a tool call, those of its result) and all changes so far; the
    outcome and every metric, each with its definition as a tooltip.

    The panels are ``ipywidgets.HTML`` attributes (``summary_html``, ``position_html``,
    ``events_html``, ``channels_html``, ``diff_html``, ``outcome_html``) whose ``.value`` is
    what is shown.

    Args:
        trace: a :class:`~hasbench.trace.Trace` or the path of a JSONL trace file.
        scenario: the task; when given (and ``outcome`` is not), the trace is evaluated
            with the rule judge and its metrics computed.
        outcome: an :class:`~hasbench.evaluate.Outcome`, a results-store record's
            ``outcome`` dict, or a row of :func:`hasbench.runner.load_results`.
        metrics: per-episode metrics to show (default: computed when ``scenario`` is given).
        title: a heading (default: task id, setting and agent backend from the header).
    """

    def __init__(
        self,
        trace: Trace | str | Path,
        scenario: Scenario | None = None,
        outcome: Any = None,
        metrics: Mapping[str, Any] | None = None,
        title: str | None = None,
    ) -> None:
        self.trace = trace if isinstance(trace, Trace) else Trace.read(trace)
        header = self.trace.header
        if scenario is not None and scenario.content_hash() != header.scenario_hash:
            raise ValueError(
                f"trace of {header.scenario_id} ({header.scenario_hash}) does not match "
                f"scenario {scenario.task_id} ({scenario.content_hash()})"
            )
        if scenario is not None and (outcome is None or metrics is None):
            computed_outcome, computed_metrics = _evaluate(scenario, self.trace)
            outcome = computed_outcome if outcome is None else outcome
            metrics = computed_metrics if metrics is None else metrics
        self.requests: dict[str, _Request] = {}
        self.rows: list[EventRow] = self._build_rows()
        self._diffs: list[tuple[int, int, str, str, list[dict[str, Any]]]] = [
            (e.seq, e.step, e.actor, e.payload.name, e.payload.diff)
            for e in self.trace.events
            if e.type == "tool_result" and e.payload.diff
        ]
        self._results = {e.payload.call_id: e for e in self.trace.events if e.type == "tool_result"}
        self._diff_seqs = [d[0] for d in self._diffs]
        self._request_order = sorted(self.requests.values(), key=lambda r: r.seq)
        self._request_seqs = [r.seq for r in self._request_order]
        self._callbacks: list[Callable[[EventRow | None], None]] = []
        self.visible: list[int] = list(range(len(self.rows)))

        wide = {"description_width": "initial"}
        self.participant = widgets.Dropdown(
            options=[ALL, *header.participants] if header.participants else [ALL],
            description="participant", style=wide,
        )  # fmt: skip
        self.event_type = widgets.Dropdown(
            options=[ALL, *sorted({r.type for r in self.rows})], description="event type",
            style=wide,
        )  # fmt: skip
        self.channel = widgets.Dropdown(
            options=[ALL, "clarification", "feedback", "control", NO_CHANNEL],
            description="channel", style=wide,
        )  # fmt: skip
        last = max(len(self.rows) - 1, 0)
        self.slider = widgets.IntSlider(
            value=0, min=0, max=last, description="event", continuous_update=True, readout=False,
            layout=widgets.Layout(width="auto", flex="1 1 auto", min_width="160px"),
            tooltip=glossary.define("event"),
        )  # fmt: skip
        self.play = widgets.Play(value=0, min=0, max=last, interval=600, description="play")
        widgets.link((self.play, "value"), (self.slider, "value"))
        widgets.link((self.play, "max"), (self.slider, "max"))
        self.previous = widgets.Button(description="◀", layout=widgets.Layout(width="40px"))
        self.next = widgets.Button(description="▶", layout=widgets.Layout(width="40px"))
        self.previous.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))

        self.position_html = widgets.HTML()
        self.events_html = widgets.HTML()
        self.channels_html = widgets.HTML()
        self.diff_html = widgets.HTML()
        self.outcome_html = widgets.HTML(_outcome_html(self.trace, outcome, metrics))
        self.summary_html = widgets.HTML(_summary_line(self.trace, outcome, metrics))
        heading = title if title is not None else _title(self.trace)
        tabs = widgets.Tab(children=[self.channels_html, self.diff_html, self.outcome_html])
        for i, name in enumerate(("channels", "state diff", "outcome & metrics")):
            tabs.set_title(i, name)
        wrap = widgets.Layout(flex_flow="row wrap")
        super().__init__(
            children=[
                widgets.HTML(STYLE + f"<div class='hb-panel'><b>{html.escape(heading)}</b></div>"),
                self.summary_html,
                widgets.HBox([self.play, self.previous, self.slider, self.next]),
                widgets.HBox([self.participant, self.event_type, self.channel], layout=wrap),
                self.position_html,
                self.events_html,
                tabs,
            ]
        )
        self.add_class("hb-trace-viewer")
        self.slider.observe(lambda _: self._render(), names="value")
        for control in (self.participant, self.event_type, self.channel):
            control.observe(lambda _: self._apply_filters(), names="value")
        self._render()

    # -- public ----------------------------------------------------------------------

    @property
    def current(self) -> EventRow | None:
        """The event at the slider's position (None when no event passes the filters)."""
        if not self.visible:
            return None
        return self.rows[self.visible[min(self.slider.value, len(self.visible) - 1)]]

    @property
    def current_event(self) -> Event | None:
        """The trace event at the slider's position."""
        row = self.current
        return self.trace.events[row.index] if row is not None else None

    def on_step(self, callback: Callable[[EventRow | None], None]) -> None:
        """Call ``callback(current_row)`` now and after every change of position or filter."""
        self._callbacks.append(callback)
        callback(self.current)

    def show_turn(self, turn: int) -> None:
        """Move to the last shown event at or before ``turn`` (the trace field ``step``)."""
        turns = [self.rows[i].step for i in self.visible]
        self.slider.value = max(bisect.bisect_right(turns, turn) - 1, 0)

    def show_seq(self, seq: int) -> None:
        """Move to the last shown event with sequence number at most ``seq``."""
        seqs = [self.rows[i].seq for i in self.visible]
        self.slider.value = max(bisect.bisect_right(seqs, seq) - 1, 0)

    # -- precomputation --------------------------------------------------------------

    def _build_rows(self) -> list[EventRow]:
        header = self.trace.header
        outside = set(header.counterparties or ())
        kinds = {p: "counterparty" if p in outside else k for p, k in header.participants.items()}
        events = self.trace.events
        results = {e.payload.call_id: e for e in events if e.type == "tool_result"}
        calls = {e.payload.call_id: e for e in events if e.type == "tool_call"}
        for e in events:
            rid = getattr(e.payload, "request_id", None)
            if e.type == "channel_request":
                self.requests[rid] = _Request(
                    rid, e.channel or "?", e.seq, e.step, e.actor, e.initiator,
                    e.payload.form, e.payload.content, e.target,
                )  # fmt: skip
            request = self.requests.get(rid) if rid is not None else None
            if request is not None:
                if request.target is None and e.type == "channel_status" and e.target:
                    request.target = e.target
                request.entries.append((e.seq, e.step, _lifecycle_entry(e)))
        from hasbench.metrics import initiative_coding

        coding = {turn["seq"]: turn for turn in initiative_coding(self.trace)}
        rows = []
        for index, e in enumerate(events):
            rid = getattr(e.payload, "request_id", None)
            target = e.target
            if target is None and rid in self.requests and e.actor == self.requests[rid].asker:
                target = self.requests[rid].target
            call_id = getattr(e.payload, "call_id", None)
            partner = results.get(call_id) if e.type == "tool_call" else calls.get(call_id)
            rows.append(
                EventRow(
                    index=index, seq=e.seq, step=e.step, actor=e.actor,
                    actor_kind=kinds.get(e.actor), type=e.type, channel=e.channel,
                    target=target, request_id=rid,
                    summary=_summary(e, target, kinds) + _initiative_badge(coding.get(e.seq)),
                    detail=_detail(e, partner),
                )
            )  # fmt: skip
        return rows

    # -- interaction -----------------------------------------------------------------

    def _move(self, delta: int) -> None:
        self.slider.value = min(max(self.slider.value + delta, 0), self.slider.max)

    def _apply_filters(self) -> None:
        row = self.current
        who, kind, channel = self.participant.value, self.event_type.value, self.channel.value
        self.visible = [
            r.index
            for r in self.rows
            if (who == ALL or r.actor == who or r.target == who)
            and (kind == ALL or r.type == kind)
            and (channel == ALL or r.channel == (None if channel == NO_CHANNEL else channel))
        ]
        self.slider.max = max(len(self.visible) - 1, 0)
        self.slider.disabled = not self.visible
        before = self.slider.value
        if row is not None:
            self.show_seq(row.seq)
        if self.slider.value == before:
            self._render()  # the observer did not fire

    def _render(self) -> None:
        row = self.current
        if row is None:
            self.position_html.value = (
                "<div class='hb-step hb-muted'>No event matches the filters.</div>"
            )
            self.events_html.value = self.channels_html.value = self.diff_html.value = ""
        else:
            self.position_html.value = self._position(row)
            self.events_html.value = self._events(row)
            self.channels_html.value = self._channels(row)
            self.diff_html.value = self._diff(row)
        for callback in self._callbacks:
            callback(row)

    def _position(self, row: EventRow) -> str:
        term = self.trace.termination
        end = f" · ended in turn {term.step}: {term.reason}" if term is not None else ""
        return (
            f"<div class='hb-step'>{_term('Event', 'event')} "
            f"<b class='hb-event-number'>{self.slider.value + 1}</b> of {len(self.visible)} "
            f"shown · {_term('turn', 'turn')} <b class='hb-turn-number'>{row.step}</b>"
            f" · seq {row.seq}<span class='hb-muted'>{html.escape(end)}</span></div>"
        )

    def _events(self, row: EventRow) -> str:
        """The current event in full, then the log of every shown event up to it."""
        position = self.slider.value
        start = max(0, position - LOG_LIMIT + 1)
        lines = [
            f"<tr><td>{self.rows[i].step}</td><td>{self.rows[i].summary}</td></tr>"
            for i in self.visible[start:position]
        ]
        lines.append(f"<tr class='hb-current'><td>{row.step}</td><td>{row.summary}</td></tr>")
        earlier = (
            f"<div class='hb-muted'>{start} earlier events: choose a participant, type or "
            f"channel above to see them</div>"
            if start
            else ""
        )
        later = len(self.visible) - position - 1
        after = f"<div class='hb-muted'>{later} later events</div>" if later else ""
        return (
            f"<div class='hb-panel hb-events'><div class='hb-now'>{row.summary}{row.detail}"
            f"</div><div class='hb-log'><div>{earlier}<table><tr><th>{_term('turn', 'turn')}"
            f"</th><th>event log ({position + 1} so far)</th></tr>{''.join(lines)}</table>"
            f"{after}</div></div></div>"
        )

    def _channels(self, row: EventRow) -> str:
        upto = bisect.bisect_right(self._request_seqs, row.seq)
        if upto == 0:
            return "<div class='hb-panel hb-muted'>No channel request yet.</div>"
        shown = self._request_order[max(0, upto - REQUEST_WINDOW) : upto]
        lines = []
        for request in reversed(shown):
            entries = [text for seq, _, text in request.entries if seq <= row.seq]
            current = " class='hb-current'" if request.request_id == row.request_id else ""
            lines.append(
                f"<tr{current}><td>{html.escape(request.request_id)}</td>"
                f"<td>{_channel_badge(request.channel)} {html.escape(request.form)}</td>"
                f"<td>{html.escape(request.asker)} → {html.escape(request.target or '?')}"
                f"<br><span class='hb-muted'>{request.initiator or ''}-initiated</span></td>"
                f"<td>{request.step}</td><td>{'<br>'.join(entries)}</td></tr>"
            )
        earlier = (
            f"<div class='hb-muted'>{upto - len(shown)} earlier requests</div>"
            if upto > len(shown)
            else ""
        )
        return (
            f"<div class='hb-panel hb-channels'>{earlier}<table><tr><th>request</th>"
            f"<th>channel</th><th>who asked whom</th><th>{_term('turn', 'turn')}</th>"
            f"<th>lifecycle</th></tr>"
            f"{''.join(lines)}</table></div>"
        )

    def _diff(self, row: EventRow) -> str:
        event = self.trace.events[row.index]
        result = event
        if event.type == "tool_call":  # the change is recorded on the call's result
            result = self._results.get(event.payload.call_id, event)
        here = result.payload.diff if result.type == "tool_result" else None
        parts = ["<div class='hb-panel hb-diff'>"]
        if here:
            which = "This event" if result is event else "This call (its result, below)"
            parts.append(f"<b>{which}: {html.escape(result.payload.name)}</b>")
            parts.append(_diff_table([(d, result.step) for d in here]))
        elif event.type in ("tool_call", "tool_result"):
            failed = result.type == "tool_result" and result.payload.error
            why = "it failed" if failed else "it only read"
            parts.append(f"<div class='hb-muted'>This call changed no state ({why}).</div>")
        else:
            parts.append(
                f"<div class='hb-muted'>A {html.escape(event.type)} event changes no state; "
                f"only tool calls do.</div>"
            )
        merged: dict[str, tuple[Any, Any, int]] = {}
        for _, step, _, _, diff in self._diffs[: bisect.bisect_right(self._diff_seqs, row.seq)]:
            for d in diff:
                before = merged[d["path"]][0] if d["path"] in merged else d.get("before")
                merged[d["path"]] = (before, d.get("after"), step)
        if merged:
            changes = [
                ({"path": p, "before": b, "after": a}, s) for p, (b, a, s) in merged.items()
            ][-DIFF_WINDOW:]
            parts.append(f"<b>All changes so far ({len(merged)} paths)</b>")
            parts.append(_diff_table(changes))
        parts.append("</div>")
        return "".join(parts)


# -- HTML helpers --------------------------------------------------------------------


def _evaluate(scenario: Scenario, trace: Trace) -> tuple[Any, dict[str, Any]]:
    from hasbench.evaluate import evaluate
    from hasbench.metrics import trace_metrics
    from hasbench.participants.backends import make_judge
    from hasbench.sync import run_sync

    outcome = run_sync(evaluate(scenario, trace, make_judge("rule")))
    return outcome, trace_metrics(trace, scenario)


def _title(trace: Trace) -> str:
    h = trace.header
    setting = f"{h.setting.get('agency', '?')}/{h.setting.get('channels', '?')}"
    return f"{h.scenario_id} · {setting} · agent {h.backends.get('agent', '?')} · seed {h.seed}"


def _cut(text: str) -> str:
    return (
        text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + f" … (+{len(text) - TEXT_LIMIT})"
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _who(pid: str | None, kinds: Mapping[str, str]) -> str:
    if pid is None:
        return "?"
    kind = kinds.get(pid, "")
    css = f"hb-{kind}" if kind in ("agent", "human", "counterparty") else ""
    title = " title='the other side, not the team'" if kind == "counterparty" else ""
    return f"<span class='{css}'{title}>{html.escape(pid)}</span>"


def _channel_badge(channel: str | None) -> str:
    if channel is None:
        return ""
    colour = CHANNEL_COLOURS.get(channel, "#777")
    return f"<span class='hb-channel' style='background:{colour}'>{html.escape(channel)}</span>"


def _summary(e: Event, target: str | None, kinds: Mapping[str, str]) -> str:
    """One line: who did what to whom."""
    p = e.payload
    actor = _who(e.actor, kinds)
    to = f" → {_who(target, kinds)}" if target else ""
    if e.type == "message":
        text = f"{actor}{to}: {html.escape(_cut(p.text))}"
    elif e.type == "tool_call":
        text = f"{actor} calls <code>{html.escape(p.name)}</code>"
    elif e.type == "tool_result":
        status = "<span class='hb-error'>error</span>" if p.error else "ok"
        text = f"{actor} ← <code>{html.escape(p.name)}</code>: {status}"
    elif e.type == "channel_request":
        text = (
            f"{actor}{to} {_channel_badge(e.channel)} {html.escape(p.form)} "
            f"<code>{html.escape(p.request_id)}</code>"
        )
    elif e.type == "channel_status":
        text = (
            f"{actor}{to} {_channel_badge(e.channel)} "
            f"<code>{html.escape(p.request_id)}</code> {html.escape(p.status)}"
        )
    elif e.type == "channel_response":
        decision = f" <b>{html.escape(p.decision)}</b>" if p.decision else ""
        text = f"{actor}{to} {_channel_badge(e.channel)} answers{decision}"
    elif e.type == "model_call":
        text = f"{actor} model call <code>{html.escape(p.model)}</code>"
    elif e.type == "error":
        text = f"{actor} <span class='hb-error'>{html.escape(p.error_type)}</span>"
    elif e.type == "goal_revision":
        text = f"{actor} revises the goal"
    elif e.type == "finish":
        text = f"{actor}{to} finishes"
    else:
        text = f"{actor} {html.escape(e.type)}"
    return f"<span class='hb-type'>[{html.escape(e.type)}]</span> {text}"


def _initiative_badge(turn: Mapping[str, Any] | None) -> str:
    """The turn's initiative code (docs/metrics.md, Initiative Entropy), its reason on hover."""
    if turn is None:
        return ""
    word = "initiative" if turn["initiative"] else "responsive"
    return f" <span class='hb-muted' title='{html.escape(turn['reason'])}'>· {word}</span>"


def _field(name: str, value: Any, css: str = "") -> str:
    text = value if isinstance(value, str) else _json(value)
    cls = f" class='{css}'" if css else ""
    return f"<div{cls}><b>{html.escape(name)}</b><pre>{html.escape(_cut(text))}</pre></div>"


def _detail(e: Event, partner: Event | None) -> str:
    """Arguments, results and errors of the event (and of its call or result)."""
    p = e.payload
    parts: list[str] = []
    if e.type in ("tool_call", "tool_result"):
        call = e if e.type == "tool_call" else partner
        result = e if e.type == "tool_result" else partner
        if call is not None:
            parts.append(_field("arguments", call.payload.arguments))
            extra = call.payload.model_dump(mode="json", include={"side", "risk", "authorization"})
            parts.append(_field("call", extra))
        if result is None:
            parts.append("<div class='hb-muted'>no result recorded</div>")
        elif result.payload.error:
            kind = result.payload.error_type or "error"
            parts.append(_field(f"error ({kind})", str(result.payload.output), "hb-error"))
        else:
            parts.append(_field("result", str(result.payload.output)))
    elif e.type == "error":
        parts.append(_field(p.error_type, p.message, "hb-error"))
    elif e.type in ("channel_request", "channel_response"):
        parts.append(_field("content", p.content))
        rest = p.model_dump(mode="json", exclude={"content", "request_id", "form"})
        if rest:
            parts.append(_field("details", rest))
    elif e.type == "channel_status" and p.reason:
        parts.append(_field("reason", p.reason))
    elif e.type == "goal_revision":
        parts.append(_field("new goal", p.goal))
    elif e.type == "finish":
        parts.append(_field("deliverable", p.deliverable))
    elif e.type == "model_call":
        usage = e.usage.model_dump() if e.usage else {}
        parts.append(_field("call", {**p.model_dump(mode="json"), "usage": usage}))
    return "".join(parts)


def _lifecycle_entry(e: Event) -> str:
    """One line of a request's lifecycle: status, answer or decision, with the step."""
    p = e.payload
    at = f"<span class='hb-muted'>turn {e.step}</span>"
    if e.type == "channel_request":
        return f"{at} requested: {html.escape(_cut(p.content))}"
    if e.type == "channel_status":
        css = "hb-error" if p.status in ("expired", "refused", "terminated") else ""
        reason = f" ({html.escape(p.reason)})" if p.reason else ""
        return f"{at} <span class='{css}'>{html.escape(p.status)}</span>{reason}"
    decision = f"<b>{html.escape(p.decision)}</b> " if p.decision else ""
    answer = html.escape(_cut(p.content))
    return f"{at} {html.escape(e.actor)} answered: {decision}{answer}"


def _diff_table(changes: list[tuple[dict[str, Any], int]]) -> str:
    lines = [
        f"<tr><td><code>{html.escape(str(d['path']))}</code></td>"
        f"<td>{html.escape(_cut(_json(d.get('before'))))}</td>"
        f"<td>{html.escape(_cut(_json(d.get('after'))))}</td><td>{step}</td></tr>"
        for d, step in changes
    ]
    return (
        f"<table><tr><th>path</th><th>before</th><th>after</th><th>{_term('turn', 'turn')}"
        f"</th></tr>{''.join(lines)}</table>"
    )


def _outcome_html(trace: Trace, outcome: Any, metrics: Mapping[str, Any] | None) -> str:
    """The outcome and metrics panel (static); each name carries its definition."""
    term = trace.termination
    parts = ["<div class='hb-panel hb-outcome'>"]
    if term is not None:
        detail = f" ({html.escape(term.detail)})" if term.detail else ""
        parts.append(
            f"<div>{_term('Termination', 'termination')}: <b>{html.escape(term.reason)}</b> "
            f"in turn {term.step}{detail}</div>"
        )
    values = _as_mapping(outcome)
    if values:
        keys = [*OUTCOME_KEYS, "dimensions", "safety_violations"]
        rows = [(k, values[k]) for k in keys if k in values]
        if values.get("env_diff"):
            rows.append(("env_diff", values["env_diff"]))
        parts.append("<b>Outcome</b>" + _kv_table(rows))
    else:
        parts.append("<div class='hb-muted'>No outcome: give a scenario or an outcome.</div>")
    if metrics:
        rows = [
            (k, v)
            for k, v in sorted(metrics.items())
            if v is not None and not k.endswith(("_evidence", "_missing"))
        ]
        parts.append("<b>Metrics</b>" + _kv_table(rows))
    parts.append("</div>")
    return "".join(parts)


def _summary_line(trace: Trace, outcome: Any, metrics: Mapping[str, Any] | None) -> str:
    """One always-visible line: success, score, delivery, safety, HIR, steps, ending."""
    values = {**(dict(metrics) if metrics else {}), **_as_mapping(outcome)}
    items = []
    for key, label in SUMMARY.items():
        value = values.get(key)
        if value is None or (isinstance(value, float) and value != value):
            continue
        if isinstance(value, bool):
            css = "hb-ok" if value else "hb-error"
            shown = f"<span class='{css}'>{'yes' if value else 'no'}</span>"
        else:
            shown = f"<b>{_number(value)}</b>"
        items.append(f"<span>{_term(label, key)}: {shown}</span>")
    term = trace.termination
    if term is not None:
        items.append(
            f"<span>ended: <b>{html.escape(term.reason)}</b> in {_term('turn', 'turn')} "
            f"{term.step}</span>"
        )
    people = trace.header.people or {}
    if people:
        played = ", ".join(f"{h} ({i})" for h, i in sorted(people.items()))
        items.append(f"<span>played by a person: <b>{html.escape(played)}</b></span>")
    return f"<div class='hb-panel hb-summary'>{''.join(items)}</div>"


def _term(text: str, name: str) -> str:
    """``text`` with the definition of ``name`` from docs/metrics.md as its tooltip."""
    definition = glossary.define(name)
    if definition is None:
        return html.escape(text)
    return f"<abbr title='{html.escape(definition, quote=True)}'>{html.escape(text)}</abbr>"


def _number(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else html.escape(str(value))


def _as_mapping(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "to_dict"):  # a pandas row
        return dict(value.to_dict())
    return dict(value)


def _kv_table(rows: list[tuple[str, Any]]) -> str:
    """Name (readable title with tooltip, and the column name) and value, one row each."""
    cells = []
    for key, value in rows:
        text = f"{value:.3f}" if isinstance(value, float) else _json(value)
        css = " class='hb-error'" if value is False else ""
        name = glossary.title(key)
        label = _term(name, key) + (f" <code>{html.escape(key)}</code>" if name != key else "")
        cells.append(f"<tr><td>{label}</td><td{css}>{html.escape(_cut(text))}</td></tr>")
    return f"<table>{''.join(cells)}</table>"
