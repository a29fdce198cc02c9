// A rater's page of the served DocuTeam study (hasbench.serve.study): the final plans,
// blind and in this rater's own order, each scored on the four dimensions (1-5).
"use strict";

const { el } = HB;
const $ = (id) => document.getElementById(id);
let current = null;
let shownPlan = null;
const chosen = new Map();

function problem(text) {
  $("hb-problem").textContent = text || "";
  $("hb-problem").hidden = !text;
}

function documentView(blocks) {
  const nodes = [];
  let table = null;
  for (const block of blocks) {
    if (block.type !== "table_row") table = null;
    if (block.type === "heading") {
      nodes.push(el(`h${Math.min(Math.max(block.level, 1) + 1, 5)}`, { text: block.text }));
    } else if (block.type === "list_item") {
      nodes.push(el("ul", {}, el("li", { text: block.text })));
    } else if (block.type === "todo") {
      nodes.push(el("p", { text: `${block.checked ? "☑" : "☐"} ${block.text}` }));
    } else if (block.type === "table_row") {
      const row = el("tr", {}, block.text.split("|").map((cell) =>
        el(table ? "td" : "th", { text: cell.trim() })));
      if (!table) {
        table = el("table", { class: "hb-plan-table" });
        nodes.push(table);
      }
      table.append(row);
    } else {
      nodes.push(el("p", { text: block.text }));
    }
  }
  return el("article", { class: "hb-plan-doc" }, nodes);
}

function renderPlan(state, plan, number) {
  const scores = chosen.get(plan.id) || { ...(plan.scores || {}) };
  chosen.set(plan.id, scores);
  const [low, high] = state.scale;
  const rows = state.dimensions.map((d) => el("fieldset", { class: "hb-item", "data-dimension": d.id },
    el("legend", {}, el("b", { text: `${d.id[0].toUpperCase()}${d.id.slice(1)}: ` }), d.question),
    el("div", { class: "hb-scale" }, Array.from({ length: high - low + 1 }, (_, i) => low + i).map(
      (n) => el("label", { class: "hb-choice" },
        el("input", { type: "radio", name: `${plan.id}-${d.id}`, value: String(n),
          checked: scores[d.id] === n, "aria-label": `${n}`,
          onchange: () => { scores[d.id] = n; } }),
        el("span", { text: String(n) }))))));
  $("hb-plan").replaceChildren(
    el("h2", { text: `Plan ${number}` }),
    el("details", { class: "hb-task" }, el("summary", { text: "The task this plan answers" }),
      el("div", { class: "hb-prose", text: plan.task })),
    documentView(plan.blocks),
    el("h3", { text: `Your scores (${low} = not at all, ${high} = fully)` }),
    ...rows,
    el("p", {}, el("button", { class: "hb-button hb-primary hb-save", text: plan.scores ?
      "Save the new scores" : "Save and go to the next plan",
    onclick: async () => {
      const error = await HB.send({ do: "rate", plan: plan.id, scores });
      problem(error);
      if (!error) {
        const next = state.plans.find((p) => !p.scores && p.id !== plan.id);
        if (next) current = next.id;
      }
    } })));
}

function render(state) {
  $("hb-title").textContent = `${state.title}: rating plans`;
  const rated = state.plans.filter((p) => p.scores).length;
  $("hb-progress").textContent = `${state.name} · ${rated} of ${state.plans.length} ready plans ` +
    `rated (${state.expected} expected in all)`;
  if (!state.plans.length) return;
  if (!current || !state.plans.some((p) => p.id === current)) {
    current = (state.plans.find((p) => !p.scores) || state.plans[0]).id;
  }
  $("hb-plans").replaceChildren(...state.plans.map((p, i) => el("button", {
    class: `hb-plan-entry${p.id === current ? " hb-current" : ""}${p.scores ? " hb-rated" : ""}`,
    "data-plan": p.id, text: `Plan ${i + 1}${p.scores ? " ✓" : ""}`,
    onclick: () => { current = p.id; render(state); },
  })));
  const index = state.plans.findIndex((p) => p.id === current);
  const plan = state.plans[index];
  const key = `${plan.id}:${JSON.stringify(plan.scores)}`;
  if (shownPlan !== key) {
    shownPlan = key;
    renderPlan(state, plan, index + 1);
  }
}

HB.start(render);
