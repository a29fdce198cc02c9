// A participant's page of the served DocuTeam study (hasbench.serve.study): consent, a
// brief before each session, the session itself in the DocuTeam UI (the notebook
// widget's page, loaded from this seat's assets), the questionnaire after each session.
// Everything shown comes from the state the server sends; answers being chosen are kept
// in the browser across a reload.
"use strict";

const { el } = HB;
const $ = (id) => document.getElementById(id);
const sections = ["consent", "brief", "session", "survey", "done"];
let ui = null;
let uiLoading = null;
let deadline = null;
let surveyFor = null;
let last = null;

function show(phase) {
  for (const name of sections) $(`hb-${name}`).hidden = name !== phase;
  document.body.classList.toggle("hb-in-session", phase === "session");
}

function problem(text) {
  $("hb-problem").textContent = text || "";
  $("hb-problem").hidden = !text;
}

async function act(action) {
  const error = await HB.send(action);
  problem(error);
  return error;
}

function loadUI() {
  if (uiLoading) return uiLoading;
  const sheet = el("link", { rel: "stylesheet", href: `/asset/${HB.token}/docuteam.css` });
  document.head.append(sheet);
  uiLoading = import(`/asset/${HB.token}/docuteam.js`).then((module) => {
    ui = module.mount($("hb-session"), (action) => HB.send({ do: "ui", action }));
    return ui;
  });
  return uiLoading;
}

function tick() {
  if (deadline === null) return;
  const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
  const minutes = Math.floor(left / 60);
  const seconds = String(left % 60).padStart(2, "0");
  $("hb-timer").textContent = `Time left: ${minutes}:${seconds}`;
  $("hb-timer").classList.toggle("hb-late", left < 120);
}
setInterval(tick, 1000);

function renderSurvey(state) {
  const key = `${state.name}-${state.order}`;
  if (surveyFor === key) return;
  surveyFor = key;
  const stored = JSON.parse(localStorage.getItem(`hb-survey-${HB.token}-${key}`) || "{}");
  const rows = [];
  let group = null;
  for (const item of state.items) {
    if (item.group !== group) {
      group = item.group;
      const [low, high] = state.anchors[group];
      rows.push(el("div", { class: "hb-item-head" },
        el("span", { text: group === "nasa_tlx" ? "How was the work?" : "How much do you agree?" }),
        el("span", { class: "hb-scale-names" }, el("span", { text: `1 = ${low}` }),
          el("span", { text: `7 = ${high}` }))));
    }
    const choices = [1, 2, 3, 4, 5, 6, 7].map((n) => {
      const input = el("input", { type: "radio", name: item.id, value: String(n),
        checked: stored[item.id] === n, "aria-label": `${n}`,
        onchange: () => {
          stored[item.id] = n;
          localStorage.setItem(`hb-survey-${HB.token}-${key}`, JSON.stringify(stored));
          left(state, stored);
        } });
      return el("label", { class: "hb-choice" }, input, el("span", { text: String(n) }));
    });
    rows.push(el("fieldset", { class: "hb-item", "data-item": item.id },
      el("legend", { text: item.text }), el("div", { class: "hb-scale" }, choices)));
  }
  $("hb-items").replaceChildren(...rows);
  $("hb-survey-send").onclick = async () => {
    const error = await act({ do: "survey", answers: stored });
    if (!error) localStorage.removeItem(`hb-survey-${HB.token}-${key}`);
  };
  left(state, stored);
}

function left(state, stored) {
  const missing = state.items.filter((item) => !stored[item.id]).length;
  $("hb-survey-left").textContent = missing ? `${missing} of ${state.items.length} still to answer.`
    : "All answered.";
}

function render(state) {
  last = state;
  $("hb-title").textContent = state.title;
  document.title = state.title;
  $("hb-step").textContent = `${state.name} · ${state.step}`;
  $("hb-note").textContent = state.note || "";
  $("hb-note").hidden = !state.note;
  const inSession = state.phase === "session";
  $("hb-timer").hidden = !inSession;
  $("hb-finish-box").hidden = !inSession;
  deadline = inSession ? Date.now() + state.seconds_left * 1000 : null;
  tick();
  show(state.phase);
  if (state.phase === "consent") {
    $("hb-consent-text").textContent = state.consent;
  } else if (state.phase === "brief") {
    $("hb-brief-title").textContent = `Session ${state.order} of 2`;
    $("hb-brief-intro").textContent = state.intro;
    $("hb-brief-minutes").textContent = String(state.minutes);
    $("hb-brief-task").textContent = state.task;
  } else if (inSession) {
    loadUI().then((loaded) => { if (last === state) loaded.render(state.ui); });
  } else if (state.phase === "survey") {
    $("hb-survey-title").textContent = `Questions about session ${state.order}`;
    renderSurvey(state);
  }
}

$("hb-consent-go").onclick = () => act({ do: "consent", agree: $("hb-agree").checked });
$("hb-start").onclick = () => act({ do: "start_session" });
$("hb-finish").onclick = () => { $("hb-finish-confirm").hidden = false; $("hb-finish").hidden = true; };
$("hb-finish-no").onclick = () => { $("hb-finish-confirm").hidden = true; $("hb-finish").hidden = false; };
$("hb-finish-yes").onclick = async () => {
  $("hb-finish-confirm").hidden = true;
  $("hb-finish").hidden = false;
  await act({ do: "finish_session" });
};
HB.start(render);
