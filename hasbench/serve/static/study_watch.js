// The researcher's page of the served DocuTeam study (hasbench.serve.study): each
// participant's progress and links, the raters', the sessions listed apart.
"use strict";

const { el } = HB;
const $ = (id) => document.getElementById(id);

function page(seat) {
  return seat.connected ? "open" : seat.joined === false ? "not opened yet" : "closed";
}

function session(s) {
  const parts = [`${s.condition}, ${s.task}: ${s.status}`];
  if (s.seconds_left !== null) parts.push(`${Math.ceil(s.seconds_left / 60)} min left`);
  if (s.discussions !== null) parts.push(`${s.discussions} discussions`);
  if (s.survey) parts.push("questions answered");
  return parts.join(" · ");
}

function linkCell(seat) {
  return el("td", { class: "hb-link" }, el("code", { text: seat.link }), " ",
    el("button", { class: "hb-button hb-small", text: "New link",
      onclick: () => HB.send({ do: "new_link", seat: seat.name }) }));
}

function render(state) {
  $("hb-title").textContent = `${state.title}: progress`;
  $("hb-subtitle").textContent = `${state.minutes} minutes per session`;
  $("hb-people").replaceChildren(...state.people.map((p) => el("tr", { "data-person": p.name },
    el("td", { text: p.name }), el("td", { text: p.phase }), el("td", { text: page(p) }),
    p.sessions.map((s) => el("td", { text: session(s) })), linkCell(p))));
  $("hb-raters").replaceChildren(...state.raters.map((r) => el("tr", { "data-rater": r.name },
    el("td", { text: r.name }), el("td", { text: `${r.rated} of ${r.ready} ready plans` }),
    el("td", { text: r.connected ? "open" : "closed" }), linkCell(r))));
  $("hb-apart").textContent = state.apart.length ? state.apart.map((a) =>
    `${a.participant} session ${a.order}: ${a.how}`).join("; ") +
    " (failed sessions are not analysed; interrupted ones end where the log stops)"
    : "None.";
  $("hb-folder").textContent = state.folder;
  $("hb-analyze").textContent = `hasbench study analyze ${state.folder}`;
  $("hb-backends").textContent = `Backends: ${Object.entries(state.backends)
    .map(([role, model]) => `${role} ${model}`).join(", ")}`;
}

HB.start(render);
