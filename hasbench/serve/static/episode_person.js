// A person's page of a served episode (hasbench.serve.episode): their part, the requests
// routed to them, what they have seen, and their own input. Everything shown comes from
// the state the server sends (hasbench.participants.person_view); cards stay in place
// while the person types, and drafts survive a reload.
"use strict";

const { el } = HB;
const cards = new Map();
let lastPart = "";
let ownKinds = "";

function list(items) {
  return el("ul", {}, items.map((item) => el("li", { text: item })));
}

function renderPart(you) {
  const text = JSON.stringify(you);
  if (text === lastPart) return;
  lastPart = text;
  const part = document.getElementById("hb-part");
  const facts = you.facts.length
    ? el("dl", { class: "hb-facts" }, you.facts.map(([name, value]) => [
      el("dt", { text: name }), el("dd", { text: value })]))
    : el("p", { class: "hb-muted", text:
      "No facts of your own: go by your rules and by what the agents tell you." });
  part.replaceChildren(...[
    el("h3", { text: "Your goal" }), el("p", { class: "hb-goal", text: you.goal }),
    you.responsibilities.length ? [el("h3", { text: "You answer for" }),
      list(you.responsibilities)] : null,
    you.rules.length ? [el("h3", { text: "Your rules" }), list(you.rules)] : null,
    el("h3", { text: "What you know" }), facts,
    you.unknown.length ? [el("h3", { text: "What you do not know" }),
      el("p", { text: you.unknown.join(", ") })] : null,
    you.tools.length ? [el("h3", { text: "What you can do yourself" }),
      list(you.tools.map(([name, about]) => `${name}: ${about}`))] : null,
  ].flat().filter(Boolean));
}

function typed(original, text, name) {
  if (typeof original === "number") {
    const value = Number(text);
    if (text.trim() === "" || Number.isNaN(value)) throw new Error(`${name} must be a number`);
    return value;
  }
  if (typeof original === "boolean") return text.trim().toLowerCase() === "true";
  if (original !== null && typeof original === "object") {
    try { return JSON.parse(text); } catch { throw new Error(`${name} must be JSON`); }
  }
  return text;
}

function buildCard(request) {
  const key = `card-${request.number}`;
  const problem = el("p", { class: "hb-problem", role: "alert" });
  const words = el("textarea", {
    rows: 3, id: `hb-text-${request.number}`, class: "hb-answer-text",
    placeholder: request.kind === "control"
      ? "Your words to the agent (why, or what to do instead)" : "Your answer",
  });
  HB.draft(`${key}-text`, words);
  const inputs = new Map();
  let argumentBox = null;
  if (request.action) {
    const rows = Object.entries(request.action.arguments).map(([name, value]) => {
      const input = el("input", {
        id: `hb-arg-${request.number}-${name}`, class: "hb-argument",
        value: request.action.texts[name],
      });
      HB.draft(`${key}-arg-${name}`, input);
      inputs.set(name, { input, value });
      return el("tr", {}, el("th", {}, el("label", { for: input.id, text: name })),
        el("td", {}, input));
    });
    argumentBox = el("div", { class: "hb-action" },
      el("p", {}, "Action: ", el("code", { text: request.action.name }),
        request.action.about ? ` (${request.action.about})` : ""),
      rows.length ? el("table", { class: "hb-arguments" }, rows) : null,
      rows.length && request.choices.some((c) => c.takes_arguments)
        ? el("p", { class: "hb-muted", text:
          "To change the action, edit its values above, then choose “Approve with changes” " +
          "or “Override”." }) : null);
  }
  let rating = null;
  if (request.takes_rating) {
    rating = el("select", { id: `hb-rating-${request.number}` },
      el("option", { value: "", text: "no rating" }),
      [1, 2, 3, 4, 5].map((n) => el("option", { value: String(n), text: String(n) })));
  }
  let tool = null;
  if (request.tools.length) {
    tool = el("select", { id: `hb-tool-${request.number}` },
      request.tools.map((name) => el("option", { value: name, text: name })));
  }
  const buttons = request.choices.map((choice) => el("button", {
    class: `hb-button hb-choice hb-choice-${choice.value}`, title: choice.help,
    text: choice.label,
    onclick: async () => {
      const action = { do: "answer", number: request.number, choice: choice.value,
        text: words.value.trim() };
      try {
        if (choice.takes_arguments) {
          const values = {};
          for (const [name, { input, value }] of inputs) {
            const now = typed(value, input.value, name);
            if (choice.value !== "modify" || JSON.stringify(now) !== JSON.stringify(value)) {
              values[name] = now;
            }
          }
          if (choice.value === "modify" && !Object.keys(values).length) {
            throw new Error("change at least one value first, or choose Approve");
          }
          action.arguments = values;
        }
      } catch (error) {
        problem.textContent = error.message;
        return;
      }
      if (tool && choice.value === "take_over") action.tool = tool.value;
      if (rating && rating.value) action.rating = Number(rating.value);
      problem.textContent = "";
      for (const b of buttons) b.disabled = true;
      const refused = await HB.send(action);
      for (const b of buttons) b.disabled = false;
      if (refused) {
        problem.textContent = refused;
      } else {
        HB.forget(`${key}-text`);
        for (const name of inputs.keys()) HB.forget(`${key}-arg-${name}`);
      }
    },
  }));
  const help = el("dl", { class: "hb-choice-help" }, request.choices.map((choice) => [
    el("dt", { text: choice.label }), el("dd", { text: choice.help })]));
  return el("article", { class: `hb-card hb-card-${request.kind}`, "data-number": request.number },
    el("h3", {}, request.heading, request.request_id
      ? el("span", { class: "hb-id", text: request.request_id }) : null),
    el("p", { class: "hb-asked", text: request.asked }),
    request.words ? el("blockquote", { class: "hb-words", text: request.words }) : null,
    argumentBox,
    tool ? el("p", {}, el("label", { for: tool.id, text: "Your tool: " }), tool) : null,
    el("label", { for: words.id, text: request.kind === "control"
      ? "Your words to the agent (optional)" : "Your answer" }),
    words,
    rating ? el("p", {}, el("label", { for: rating.id, text: "Rating (1 poor, 5 good): " }),
      rating) : null,
    el("div", { class: "hb-choices" }, buttons),
    problem,
    help);
}

function renderRequests(requests) {
  const box = document.getElementById("hb-requests");
  const numbers = new Set(requests.map((r) => r.number));
  for (const [number, node] of cards) {
    if (!numbers.has(number)) { node.remove(); cards.delete(number); }
  }
  for (const request of requests) {
    if (!cards.has(request.number)) {
      const node = buildCard(request);
      cards.set(request.number, node);
      box.append(node);
    }
  }
  document.getElementById("hb-no-requests").hidden = requests.length > 0;
}

function renderLog(lines) {
  const log = document.getElementById("hb-log");
  log.replaceChildren(...lines.map((line) => el("li", { class: line.speaker === "you"
    ? "hb-mine" : "" },
  el("span", { class: "hb-turn", text: `turn ${line.turn}` }),
  el("span", { class: "hb-who", text: line.to ? `${line.speaker} → ${line.to}` : line.speaker }),
  el("span", { class: "hb-what", text: line.what }),
  el("span", { class: "hb-said", text: line.text }))));
  document.getElementById("hb-no-log").hidden = lines.length > 0;
}

function renderOwn(own) {
  const kinds = document.getElementById("hb-own-kind");
  const choices = own.kinds.filter((k) => k.value !== "stop");
  if (JSON.stringify(choices) !== ownKinds) {
    ownKinds = JSON.stringify(choices);
    kinds.replaceChildren(...choices.map((k) => el("option", { value: k.value, text: k.label })));
  }
  document.getElementById("hb-own").hidden = !own.open;
  document.getElementById("hb-queued").replaceChildren(...own.queued.map((text) =>
    el("li", { text: `Sent; the agents get it at their next turn: “${text}”` })));
}

function render(state) {
  const you = state.you;
  document.title = `${you.role || you.user_id}: ${state.task_id}`;
  document.getElementById("hb-title").textContent =
    `You are the ${you.role || you.user_id}`;
  document.getElementById("hb-subtitle").textContent =
    `${you.user_id}${state.name ? ` (${state.name})` : ""} in task ${state.task_id}` +
    (state.wait && state.phase !== "ended"
      ? ` · answer each request within ${Math.max(1, Math.round(state.wait / 60))} min` : "");
  const status = document.getElementById("hb-status");
  status.textContent = state.status;
  status.className = `hb-status hb-phase-${state.phase}` +
    (state.requests.length ? " hb-your-turn" : "");
  document.getElementById("hb-requests-box").hidden = state.phase === "ended";
  renderPart(you);
  renderRequests(state.requests);
  renderLog(state.conversation);
  renderOwn(state.own);
}

async function own(kind, text) {
  const problem = document.getElementById("hb-own-problem");
  const refused = await HB.send({ do: "own", kind, text });
  problem.textContent = refused || "";
  return !refused;
}

const ownText = document.getElementById("hb-own-text");
HB.draft("own-text", ownText);
document.getElementById("hb-own-send").addEventListener("click", async () => {
  if (await own(document.getElementById("hb-own-kind").value, ownText.value)) {
    ownText.value = "";
    HB.forget("own-text");
  }
});
const confirmStop = document.getElementById("hb-stop-confirm");
document.getElementById("hb-stop").addEventListener("click", () => { confirmStop.hidden = false; });
document.getElementById("hb-stop-no").addEventListener("click", () => { confirmStop.hidden = true; });
document.getElementById("hb-stop-yes").addEventListener("click", async () => {
  confirmStop.hidden = true;
  await own("stop", ownText.value);
});

HB.start(render);
