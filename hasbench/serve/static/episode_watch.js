// The researcher's page of a served episode (hasbench.serve.episode): who is connected and
// what waits for whom, the trace as it is recorded, the graph, and the outcome.
"use strict";

const { el } = HB;
let shownEvents = 0;

function renderPeople(state) {
  document.getElementById("hb-people").replaceChildren(...state.people.map((p) => el("tr", {},
    el("td", { text: `${p.user_id}${p.role ? ` (${p.role})` : ""}${p.name ? `, ${p.name}` : ""}` }),
    el("td", { class: p.connected ? "hb-ok" : "hb-warn",
      text: p.connected ? "open" : p.joined ? "closed (rejoins with the same link)" : "not opened yet" }),
    el("td", { text: p.waiting.join("; ") || "–" }),
    el("td", { text: String(p.unanswered) }),
    el("td", {},
      el("input", { class: "hb-link", readOnly: true, value: p.link, "aria-label": `link of ${p.user_id}` }),
      el("button", { class: "hb-button", text: "New link", title:
        "Replace this link (the old one stops working), e.g. when the person changes computer",
      onclick: async () => {
        const refused = await HB.send({ do: "new_link", seat: p.user_id });
        document.getElementById("hb-watch-problem").textContent = refused || "";
      } })))));
  document.getElementById("hb-simulated").textContent = state.simulated.length
    ? `Simulated (${state.backends.user.split("others=").pop()}): ${state.simulated.join(", ")}` : "";
}

function renderEvents(events) {
  const body = document.getElementById("hb-events");
  const scroll = document.getElementById("hb-events-scroll");
  const atBottom = scroll.scrollTop + scroll.clientHeight >= scroll.scrollHeight - 20;
  if (events.length < shownEvents) { body.replaceChildren(); shownEvents = 0; }
  for (const e of events.slice(shownEvents)) {
    const detail = el("pre", { class: "hb-detail", text: JSON.stringify(e.detail, null, 1), hidden: true });
    body.append(el("tr", { class: `hb-event hb-type-${e.type}`, title: "click for the whole event",
      onclick: () => { detail.hidden = !detail.hidden; } },
    el("td", { text: String(e.seq) }), el("td", { text: String(e.turn) }),
    el("td", { text: e.target ? `${e.actor} → ${e.target}` : e.actor }),
    el("td", { text: e.channel ? `${e.type} · ${e.channel}` : e.type }),
    el("td", {}, el("span", { text: e.text }), detail)));
  }
  shownEvents = events.length;
  document.getElementById("hb-count").textContent = `(${events.length} events)`;
  if (atBottom) scroll.scrollTop = scroll.scrollHeight;
}

function renderOutcome(outcome) {
  const box = document.getElementById("hb-outcome-box");
  box.hidden = !outcome;
  if (!outcome) return;
  const rows = [
    ["ended", `${outcome.termination} in turn ${outcome.turns}`],
    ["success", outcome.success === undefined ? "–" : outcome.success ? "yes" : "no"],
    ["Task Score", outcome.task_score === undefined || outcome.task_score === null
      ? "–" : outcome.task_score.toFixed(2)],
    ["people's steps", Object.entries(outcome.person_steps).map(([u, n]) => `${u}: ${n}`).join(", ")],
    ["all human steps", String(outcome.human_steps)],
    ["trace", outcome.trace],
  ];
  if (outcome.error) rows.push(["error", outcome.error]);
  document.getElementById("hb-outcome").replaceChildren(...rows.flatMap(([name, value]) =>
    [el("dt", { text: name }), el("dd", { text: value })]));
}

function render(state) {
  document.title = `Watching ${state.task_id}`;
  document.getElementById("hb-title").textContent = `Watching ${state.task_id}`;
  document.getElementById("hb-subtitle").textContent =
    `${state.setting} · agent ${state.backends.agent} · judge ${state.backends.judge} · ` +
    `seed ${state.seed} · trace ${state.trace}`;
  const words = { before: "Not started: waiting for everyone to open their page",
    running: `Running: turn ${state.turn}`, ended: "Ended" };
  document.getElementById("hb-status").textContent = words[state.phase] || state.phase;
  document.getElementById("hb-start").hidden = state.phase !== "before";
  renderPeople(state);
  renderEvents(state.events);
  renderOutcome(state.outcome);
  document.getElementById("hb-earlier").replaceChildren(...(state.earlier.length
    ? state.earlier.map((line) => el("li", { text: line }))
    : [el("li", { class: "hb-muted", text: "none" })]));
}

document.getElementById("hb-graph").src = `/asset/${HB.token}/graph.svg`;
document.getElementById("hb-start").addEventListener("click", () => HB.send({ do: "start" }));
HB.start(render);
