// The DocuTeam UI (DocuTeam paper §4.1): one page for the notebook widget and the served
// study. It draws the JSON state that hasbench.docuteam.widget.controller makes from a
// session and sends the person's actions back as JSON ({do: ...}); `send` resolves to
// null when an action was applied, or to the reason it was refused.
//
// Layout: the document on the left reads as a document (blocks grow with their text,
// headings and lists styled as such); beside it, a margin holds each discussion's card
// next to the first block it is about, the notices of discussions the agents opened and
// the agents' reactions to an edit, without moving the text. The side panel on the right
// holds the team (add or edit an agent), the form that starts a discussion, the list of
// discussions (unread ones marked) and the open thread. Edits are sent while typing,
// EDIT_PAUSE ms after the last keystroke; the session's debounce counts from there.
"use strict";

const EDIT_PAUSE = 250;
const MARGIN_GAP = 8;

/** An element with attributes (class, text, on<event>, others) and children; never parses HTML. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name in node && typeof value !== "string") node[name] = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function short(text, n = 48) {
  const one = String(text || "").split(/\s+/).join(" ").trim();
  return one.length <= n ? one : `${one.slice(0, n - 1)}…`;
}

function grow(area) {
  area.style.height = "auto";
  area.style.height = `${area.scrollHeight}px`;
}

class DocuTeamUI {
  constructor(root, send) {
    this.send = send;
    this.state = null;
    this.selected = new Set();
    this.rows = new Map();
    this.typing = new Map();
    this.messageIds = [];
    this.shownThread = null;
    this.editingAgent = null;
    this.startMode = "idea";
    this.startAgents = new Set();
    this.problem = "";
    this.root = el("div", { class: "hb-dt-app" });
    root.append(this.root);
    this.buildFrame();
    this.resize = new ResizeObserver(() => {
      this.growAll();
      this.placeMargin();
    });
    this.resize.observe(this.page);
  }

  destroy() {
    this.resize.disconnect();
    this.root.remove();
  }

  // -- the frame ----------------------------------------------------------------------

  buildFrame() {
    this.titleLine = el("div", { class: "hb-dt-title" });
    this.taskBox = el("details", { class: "hb-dt-task" },
      el("summary", { text: "Your task (click to read it again)" }), el("div"));
    this.problemLine = el("div", { class: "hb-dt-problem", role: "alert", hidden: true });
    this.failedLine = el("div", { class: "hb-dt-failed", role: "alert", hidden: true });
    this.blocks = el("div", { class: "hb-dt-blocks" });
    this.margin = el("div", { class: "hb-dt-margin", "aria-label": "Discussions beside the text" });
    this.hint = el("p", { class: "hb-dt-hint" });
    this.page = el("div", { class: "hb-dt-page" }, this.hint, this.blocks, this.margin);
    this.docPane = el("div", { class: "hb-dt-doc" }, this.page);
    this.side = el("div", { class: "hb-dt-side" });
    this.buildSide();
    this.root.append(
      el("div", { class: "hb-dt-head" }, this.titleLine, this.taskBox),
      this.problemLine, this.failedLine,
      el("div", { class: "hb-dt-body" }, this.docPane, this.side),
    );
  }

  buildSide() {
    this.teamBox = el("div", { class: "hb-dt-team" });
    this.agentForm = el("div", { class: "hb-dt-agent-form", hidden: true });
    this.startBox = el("section", { class: "hb-dt-start" });
    this.listBox = el("section", { class: "hb-dt-list" });
    this.threadBox = el("section", { class: "hb-dt-thread", hidden: true });
    this.buildStart();
    this.buildThread();
    this.side.append(
      el("h2", { class: "hb-dt-side-title", text: "Agents" }), this.teamBox, this.agentForm,
      this.startBox, this.listBox, this.threadBox,
    );
  }

  // -- actions --------------------------------------------------------------------------

  async act(action) {
    const error = await this.send(action);
    this.showProblem(error || "");
    return error;
  }

  showProblem(text) {
    this.problem = text;
    this.renderProblems();
  }

  renderProblems() {
    const lines = [this.problem, ...((this.state && this.state.errors) || [])].filter(Boolean);
    this.problemLine.replaceChildren(...lines.map((line) => el("div", { text: line })));
    this.problemLine.hidden = lines.length === 0;
  }

  // -- rendering ------------------------------------------------------------------------

  render(state) {
    if (!state) return;
    this.state = state;
    this.agentsById = new Map(state.agents.map((a) => [a.id, a]));
    this.discussionsById = new Map(state.discussions.map((d) => [d.id, d]));
    this.root.classList.toggle("hb-dt-baseline", state.baseline);
    this.titleLine.textContent = state.title;
    this.taskBox.lastChild.textContent = state.task || "(no task description)";
    this.failedLine.textContent = state.failed || "";
    this.failedLine.hidden = !state.failed;
    this.hint.textContent = state.baseline
      ? "Click any text to edit the plan. Talk with the agents in the panel on the right."
      : "Click any text to edit the plan; the agents read your edits and may start a " +
        "discussion beside them. Tick the box left of a block to discuss it with agents.";
    this.renderProblems();
    this.renderBlocks();
    this.renderTeam();
    this.renderStart();
    this.renderList();
    this.renderThread();
    this.renderMargin();
  }

  // -- the document ---------------------------------------------------------------------

  renderBlocks() {
    const blocks = this.state.blocks;
    const ids = new Set(blocks.map((b) => b.id));
    for (const [id, row] of this.rows) {
      if (!ids.has(id)) {
        row.node.remove();
        this.rows.delete(id);
        this.selected.delete(id);
      }
    }
    let previous = null;
    blocks.forEach((block, index) => {
      let row = this.rows.get(block.id);
      const tableHead = block.type === "table_row" &&
        (index === 0 || blocks[index - 1].type !== "table_row");
      const shape = `${block.type}:${block.level}:${tableHead}:${block.type === "table_row" ?
        block.text.split("|").length : 0}`;
      if (row && row.shape !== shape) {
        row.node.remove();
        this.rows.delete(block.id);
        row = null;
      }
      const fresh = !row;
      if (!row) {
        row = this.newRow(block, tableHead);
        row.shape = shape;
        this.rows.set(block.id, row);
      }
      this.fillRow(row, block);
      const expected = previous ? previous.nextSibling : this.blocks.firstChild;
      if (expected !== row.node) this.blocks.insertBefore(row.node, expected);
      if (fresh && this.focusAfter && index > 0 && blocks[index - 1].id === this.focusAfter) {
        this.focusAfter = null;
        row.fields[0].focus();
        row.fields[0].select();
      }
      previous = row.node;
    });
  }

  newRow(block, tableHead) {
    const select = el("input", {
      type: "checkbox", class: "hb-dt-select",
      title: "Select this block for a new discussion",
      "aria-label": "Select this block for a new discussion",
      onchange: () => {
        if (select.checked) this.selected.add(block.id); else this.selected.delete(block.id);
        this.renderStart();
      },
    });
    const add = el("button", {
      class: "hb-dt-add-block", type: "button", title: "Add a paragraph below",
      "aria-label": "Add a paragraph below", text: "+",
      onclick: () => this.act({ do: "insert", after: block.id }),
    });
    const gutter = el("div", { class: "hb-dt-gutter" }, select, add);
    let fields;
    let sign = null;
    if (block.type === "table_row") {
      const count = block.text.split("|").length;
      fields = Array.from({ length: count }, (_, i) => el("textarea", {
        class: "hb-dt-cell", rows: 1, "aria-label": `Cell ${i + 1}`,
      }));
    } else {
      fields = [el("textarea", { class: "hb-dt-text", rows: 1, spellcheck: true })];
    }
    if (block.type === "list_item") sign = el("span", { class: "hb-dt-bullet", text: "•" });
    if (block.type === "todo") {
      sign = el("input", {
        type: "checkbox", class: "hb-dt-todo", "aria-label": "Done",
        onchange: () => this.act({ do: "check", block: block.id, checked: sign.checked }),
      });
    }
    for (const field of fields) {
      field.addEventListener("input", () => {
        grow(field);
        this.typed(block.id);
      });
      field.addEventListener("blur", () => this.flushTyping(block.id, true));
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          this.flushTyping(block.id, true);
          this.focusAfter = block.id;
          this.act({ do: "insert", after: block.id });
        }
      });
    }
    const classes = [`hb-dt-block`, `hb-dt-${block.type}`];
    if (block.type === "heading") classes.push(`hb-dt-h${Math.min(block.level || 2, 4)}`);
    if (tableHead) classes.push("hb-dt-table-head");
    const content = el("div", { class: "hb-dt-content" }, sign, fields);
    const node = el("div", { class: classes.join(" "), "data-block": block.id }, gutter, content);
    return { node, select, fields, sign, block };
  }

  fillRow(row, block) {
    row.block = block;
    row.select.checked = this.selected.has(block.id);
    if (row.sign && row.sign.type === "checkbox") row.sign.checked = block.checked;
    if (this.typing.has(block.id)) return;
    const values = block.type === "table_row"
      ? block.text.split("|").map((cell) => cell.trim()) : [block.text];
    row.fields.forEach((field, i) => {
      if (field.value !== values[i]) {
        field.value = values[i] === undefined ? "" : values[i];
      }
      grow(field);
    });
  }

  blockText(row) {
    if (row.block.type === "table_row") return row.fields.map((f) => f.value.trim()).join(" | ");
    return row.fields[0].value;
  }

  typed(blockId) {
    const entry = this.typing.get(blockId) || { timer: null, inflight: 0 };
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.flushTyping(blockId, false), EDIT_PAUSE);
    this.typing.set(blockId, entry);
  }

  /** Send a block's text; an emptied block is deleted only when the person leaves it. */
  flushTyping(blockId, leaving) {
    const entry = this.typing.get(blockId);
    if (!entry || entry.timer === null) return;
    const row = this.rows.get(blockId);
    const text = row ? this.blockText(row) : "";
    if (!text.trim() && !leaving) return;
    clearTimeout(entry.timer);
    entry.timer = null;
    if (!row) {
      this.typing.delete(blockId);
      return;
    }
    entry.inflight += 1;
    this.act({ do: "edit", block: blockId, text }).then(() => {
      entry.inflight -= 1;
      if (entry.inflight === 0 && entry.timer === null && this.typing.get(blockId) === entry) {
        this.typing.delete(blockId);
        if (this.state) this.renderBlocks();
      }
    });
  }

  growAll() {
    for (const row of this.rows.values()) {
      for (const field of row.fields) grow(field);
    }
  }

  // -- the margin -----------------------------------------------------------------------

  renderMargin() {
    if (this.state.baseline) {
      this.margin.replaceChildren();
      return;
    }
    const items = [];
    const byBlock = new Map();
    const add = (blockId, node) => {
      if (!byBlock.has(blockId)) byBlock.set(blockId, []);
      byBlock.get(blockId).push(node);
    };
    for (const [blockId, beside] of Object.entries(this.state.beside)) {
      for (const id of beside.notices || []) add(blockId, this.notice(id, beside.reactions));
    }
    for (const d of this.state.discussions) if (d.anchor) add(d.anchor, this.card(d));
    for (const [blockId, beside] of Object.entries(this.state.beside)) {
      if (beside.reading) add(blockId, el("div", { class: "hb-dt-reading" },
        "The agents are reading this edit…"));
      else if (beside.reactions && !(beside.notices || []).length) {
        add(blockId, this.reactions(beside.reactions));
      }
    }
    for (const row of this.rows.values()) {
      const nodes = byBlock.get(row.block.id);
      if (nodes) items.push({ row, node: el("div", { class: "hb-dt-beside",
        "data-beside": row.block.id }, nodes) });
    }
    this.marginItems = items;
    this.margin.replaceChildren(...items.map((item) => item.node));
    this.placeMargin();
  }

  placeMargin() {
    let bottom = 0;
    for (const item of this.marginItems || []) {
      const top = Math.max(item.row.node.offsetTop, bottom);
      item.node.style.top = `${top}px`;
      bottom = top + item.node.offsetHeight + MARGIN_GAP;
    }
    this.margin.style.height = `${bottom}px`;
  }

  avatar(agentId) {
    const agent = this.agentsById.get(agentId);
    const name = agent ? agent.name : agentId;
    const node = el("span", { class: "hb-dt-avatar", title: name, text: name.slice(0, 1).toUpperCase() });
    if (agent) node.style.background = agent.colour;
    return node;
  }

  agentName(agentId) {
    const agent = this.agentsById.get(agentId);
    return agent ? agent.name : agentId;
  }

  reactions(list) {
    return el("div", { class: "hb-dt-reactions" }, list.map((r) => el("div",
      { class: "hb-dt-reaction" }, this.avatar(r.agent), `${this.agentName(r.agent)}: “${r.text}”`)));
  }

  notice(discussionId, reactions) {
    const d = this.discussionsById.get(discussionId);
    if (!d) return null;
    return el("div", { class: "hb-dt-notice", role: "status", "data-notice": d.id },
      el("div", { class: "hb-dt-notice-text" },
        el("b", { text: "New: " }),
        `the agents started a discussion about this part (${d.mode_label} mode).`),
      reactions ? this.reactions(reactions) : null,
      el("div", { class: "hb-dt-row" },
        el("button", { class: "hb-dt-button hb-dt-primary", type: "button", text: "Open it",
          onclick: () => this.act({ do: "open", discussion: d.id }) }),
        el("button", { class: "hb-dt-button", type: "button", text: "Later",
          onclick: () => this.act({ do: "dismiss", discussion: d.id }) })));
  }

  card(d) {
    const classes = ["hb-dt-card", `hb-dt-by-${d.initiator}`];
    if (d.question) classes.push("hb-dt-asks");
    if (this.state.thread && this.state.thread.id === d.id) classes.push("hb-dt-current");
    const line = d.question
      ? el("div", { class: "hb-dt-ask" }, "The agents ask you: ", d.question)
      : el("div", { class: "hb-dt-bubble", text: d.bubble || d.focus || "…" });
    return el("div", {
      class: classes.join(" "), "data-card": d.id, role: "button", tabindex: "0",
      title: "Open this discussion",
      onclick: () => this.act({ do: "open", discussion: d.id }),
      onkeydown: (event) => {
        if (event.key === "Enter") this.act({ do: "open", discussion: d.id });
      },
    },
    el("div", { class: "hb-dt-card-top" },
      el("span", { class: "hb-dt-avatars" }, d.participants.map((a) => this.avatar(a))),
      el("span", { class: "hb-dt-mode", text: d.mode_label }),
      d.initiator === "agents" ? el("span", { class: "hb-dt-tag", text: "by the agents" }) : null,
      d.unread ? el("span", { class: "hb-dt-unread", title: "New messages",
        "aria-label": `${d.unread} new messages` }) : null),
    el("div", { class: "hb-dt-status" }, this.status(d)),
    line);
  }

  status(d) {
    if (d.status === "running") {
      const who = d.next_speaker ? ` ${this.agentName(d.next_speaker)} is preparing to speak` : "";
      return el("span", { class: "hb-dt-thinking" }, "● thinking…", who);
    }
    return el("span", { class: `hb-dt-status-${d.status}`, text: d.status_label });
  }

  // -- the team ---------------------------------------------------------------------------

  renderTeam() {
    const chips = this.state.agents.map((agent) => el("button", {
      class: "hb-dt-chip", type: "button", title: `${agent.role}: ${agent.stance} (click to edit)`,
      "data-agent": agent.id,
      onclick: () => this.openAgentForm(agent.id),
    }, this.avatar(agent.id), el("span", { text: agent.name }),
    el("span", { class: "hb-dt-muted", text: agent.role })));
    const add = el("button", { class: "hb-dt-chip hb-dt-add-agent", type: "button",
      text: "+ Add agent", onclick: () => this.openAgentForm("new") });
    this.teamBox.replaceChildren(...chips, add);
  }

  openAgentForm(agentId) {
    this.editingAgent = agentId;
    const agent = agentId === "new" ? null : this.agentsById.get(agentId);
    const field = (label, name, value, multiline) => {
      const input = el(multiline ? "textarea" : "input", {
        class: "hb-dt-input", name, rows: multiline ? 2 : null, "aria-label": label,
      });
      input.value = value || "";
      return el("label", { class: "hb-dt-field" }, el("span", { text: label }), input);
    };
    const fields = [
      field("Name", "name", agent && agent.name),
      field("Role", "role", agent && agent.role),
      field("Stance (the view it argues for)", "stance", agent && agent.stance, true),
      field("Expertise (separate with commas)", "expertise", agent && agent.expertise.join(", ")),
    ];
    const problem = el("p", { class: "hb-dt-problem-inline", role: "alert" });
    const save = async () => {
      const values = Object.fromEntries(fields.map((f) => {
        const input = f.querySelector("input, textarea");
        return [input.name, input.value];
      }));
      const action = agent ? { do: "edit_agent", agent: agent.id, ...values }
        : { do: "add_agent", ...values };
      const error = await this.send(action);
      if (error) problem.textContent = error;
      else this.closeAgentForm();
    };
    this.agentForm.replaceChildren(
      el("h3", { text: agent ? `Edit ${agent.name}` : "Add an agent" }),
      ...fields, problem,
      el("div", { class: "hb-dt-row" },
        el("button", { class: "hb-dt-button hb-dt-primary", type: "button",
          text: agent ? "Save" : "Add agent", onclick: save }),
        el("button", { class: "hb-dt-button", type: "button", text: "Cancel",
          onclick: () => this.closeAgentForm() })));
    this.agentForm.hidden = false;
    fields[0].querySelector("input").focus();
  }

  closeAgentForm() {
    this.editingAgent = null;
    this.agentForm.hidden = true;
    this.agentForm.replaceChildren();
  }

  // -- starting a discussion ------------------------------------------------------------

  buildStart() {
    this.startAbout = el("p", { class: "hb-dt-about" });
    this.modeButtons = el("div", { class: "hb-dt-modes", role: "radiogroup",
      "aria-label": "Mode" });
    this.modeHelp = el("p", { class: "hb-dt-muted hb-dt-mode-help" });
    this.startPicks = el("div", { class: "hb-dt-picks" });
    this.startComment = el("input", { class: "hb-dt-input", type: "text",
      placeholder: "What should the agents focus on? (optional)",
      "aria-label": "What should the agents focus on? (optional)" });
    this.startButton = el("button", { class: "hb-dt-button hb-dt-primary hb-dt-start-button",
      type: "button", text: "Start discussion", onclick: () => this.start() });
    this.startTitle = el("h2", { text: "Start a discussion" });
    this.startBox.append(this.startTitle, this.startAbout, this.modeButtons, this.modeHelp,
      el("div", { class: "hb-dt-label", text: "With (choose 2 to 4 agents):" }), this.startPicks,
      this.startComment, this.startButton);
  }

  renderStart() {
    const state = this.state;
    if (!state) return;
    if (state.baseline) {
      this.startAbout.textContent = "A new chat with agents about the whole plan.";
    } else {
      const chosen = state.blocks.filter((b) => this.selected.has(b.id));
      this.startAbout.replaceChildren(chosen.length
        ? `About ${chosen.length === 1 ? "the block" : `${chosen.length} blocks from`} “${short(chosen[0].text, 40)}”`
        : "First tick ☐ the blocks of the plan you want to discuss.");
      this.startAbout.classList.toggle("hb-dt-muted", !chosen.length);
    }
    this.modeButtons.replaceChildren(...state.modes.map((mode) => el("button", {
      class: `hb-dt-seg${mode.value === this.startMode ? " hb-dt-on" : ""}`, type: "button",
      role: "radio", "aria-checked": mode.value === this.startMode ? "true" : "false",
      "data-mode": mode.value, text: mode.label,
      onclick: () => { this.startMode = mode.value; this.renderStart(); },
    })));
    const help = state.modes.find((m) => m.value === this.startMode);
    this.modeHelp.textContent = help ? `${help.label}: ${help.help}.` : "";
    const known = new Set(state.agents.map((a) => a.id));
    for (const id of [...this.startAgents]) if (!known.has(id)) this.startAgents.delete(id);
    this.startPicks.replaceChildren(...state.agents.map((agent) => {
      const box = el("input", { type: "checkbox", "data-pick": agent.id,
        checked: this.startAgents.has(agent.id),
        onchange: () => {
          if (box.checked) this.startAgents.add(agent.id); else this.startAgents.delete(agent.id);
        } });
      return el("label", { class: "hb-dt-pick" }, box, this.avatar(agent.id), agent.name);
    }));
  }

  async start() {
    const action = { do: "start", agents: [...this.startAgents], mode: this.startMode,
      blocks: [...this.selected], comment: this.startComment.value };
    const error = await this.act(action);
    if (!error) {
      this.startAgents.clear();
      this.selected.clear();
      this.startComment.value = "";
      for (const row of this.rows.values()) row.select.checked = false;
      this.renderStart();
    }
  }

  // -- the discussion list --------------------------------------------------------------

  renderList() {
    const items = [...this.state.discussions].reverse().map((d) => el("button", {
      class: `hb-dt-entry${d.unread ? " hb-dt-has-unread" : ""}`, type: "button",
      "data-entry": d.id, onclick: () => this.act({ do: "open", discussion: d.id }),
    },
    el("span", { class: "hb-dt-entry-top" },
      d.unread ? el("span", { class: "hb-dt-unread", title: "New messages" }) : null,
      el("span", { class: "hb-dt-mode", text: d.mode_label }),
      el("span", { class: `hb-dt-status-${d.status}`, text: d.status_label }),
      el("span", { class: "hb-dt-muted",
        text: d.initiator === "agents" ? "started by the agents" : "started by you" })),
    el("span", { class: "hb-dt-entry-text", text: d.focus || d.comment || "…" })));
    this.listBox.replaceChildren(el("h2", { text: "Discussions" }),
      ...(items.length ? items : [el("p", { class: "hb-dt-muted",
        text: "None yet. Start one above, or keep writing: the agents may start one." })]));
  }

  // -- the open thread ------------------------------------------------------------------

  buildThread() {
    this.threadHead = el("div", { class: "hb-dt-thread-head" });
    this.threadStatus = el("div", { class: "hb-dt-thread-status" });
    this.stopButton = el("button", { class: "hb-dt-button hb-dt-danger hb-dt-stop", type: "button",
      text: "Stop", onclick: () => this.act({ do: "stop", discussion: this.shownThread }) });
    this.question = el("div", { class: "hb-dt-question", hidden: true });
    this.replyText = el("input", { class: "hb-dt-input hb-dt-reply-text", type: "text",
      placeholder: "Or write your own answer", "aria-label": "Your own answer" });
    this.replyButton = el("button", { class: "hb-dt-button hb-dt-reply-send", type: "button",
      text: "Answer", onclick: () => this.answer({ text: this.replyText.value }) });
    this.summaryBox = el("div", { class: "hb-dt-summary" });
    this.messages = el("div", { class: "hb-dt-messages", role: "log" });
    this.target = el("select", { class: "hb-dt-target", "aria-label": "Block to apply to" });
    this.placement = el("select", { class: "hb-dt-placement", "aria-label": "Where" },
      el("option", { value: "after", text: "below" }),
      el("option", { value: "replace", text: "in place of" }));
    this.postText = el("textarea", { class: "hb-dt-input hb-dt-post-text", rows: 2,
      placeholder: "Write to the agents (a wish, a fact, a direction)",
      "aria-label": "Write to the agents" });
    this.postButton = el("button", { class: "hb-dt-button hb-dt-primary hb-dt-post", type: "button",
      text: "Send", onclick: () => this.post() });
    this.postText.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); this.post(); }
    });
    this.steerBox = el("details", { class: "hb-dt-steer" });
    this.buildSteer();
    this.threadBox.append(
      el("button", { class: "hb-dt-button hb-dt-back", type: "button", text: "← All discussions",
        onclick: () => this.act({ do: "close" }) }),
      this.threadHead,
      el("div", { class: "hb-dt-row hb-dt-status-row" }, this.threadStatus, this.stopButton),
      this.question,
      el("div", { class: "hb-dt-apply-to" }, el("span", { text: "Apply puts the text" }),
        this.placement, el("span", { text: "block" }), this.target),
      this.messages,
      this.summaryBox,
      el("div", { class: "hb-dt-composer" }, this.postText, this.postButton),
      this.steerBox);
  }

  renderThread() {
    const thread = this.state.thread;
    const d = thread && this.discussionsById.get(thread.id);
    this.threadBox.hidden = !d;
    this.startBox.hidden = Boolean(d);
    this.listBox.hidden = Boolean(d);
    if (!d) {
      this.shownThread = null;
      return;
    }
    if (this.shownThread !== d.id) {
      this.shownThread = d.id;
      this.messageIds = [];
      this.messages.replaceChildren();
      this.postText.value = "";
      this.replyText.value = "";
      this.focusInput.value = "";
      this.targetFor = null;
    }
    const scope = d.scope === null ? "the whole plan"
      : `“${short((this.state.blocks.find((b) => b.id === d.anchor) || {}).text || "a removed block", 40)}”`;
    this.threadHead.replaceChildren(
      el("div", { class: "hb-dt-thread-title" },
        el("span", { class: "hb-dt-mode", text: d.mode_label }), ` about ${scope}, started by `,
        d.initiator === "agents" ? "the agents" : "you"),
      el("div", {}, el("b", { text: "Focus: " }), d.focus || "…"),
      el("div", { class: "hb-dt-with" }, el("b", { text: "With: " }), d.participants.map((a) =>
        el("span", { class: "hb-dt-person" }, this.avatar(a), this.agentName(a)))));
    this.threadStatus.replaceChildren(this.status(d));
    this.stopButton.disabled = !d.active || d.status === "waiting_for_user";
    this.renderQuestion(d);
    this.renderTargets(thread);
    this.renderMessages(thread);
    this.renderSummary(thread, d);
    this.renderSteer(d);
  }

  renderQuestion(d) {
    this.question.hidden = !d.question;
    if (!d.question) return;
    const keep = [this.replyText, this.replyButton];
    this.question.replaceChildren(
      el("div", { class: "hb-dt-ask" }, "The agents ask you: ", d.question),
      el("div", { class: "hb-dt-replies" }, d.options.map((option, i) => el("button", {
        class: `hb-dt-button hb-dt-reply hb-dt-reply-${i + 1}`, type: "button", text: option,
        onclick: () => this.answer({ option: i + 1 }),
      }))),
      el("div", { class: "hb-dt-row" }, keep));
  }

  async answer(reply) {
    const error = await this.act({ do: "answer", discussion: this.shownThread, ...reply });
    if (!error) this.replyText.value = "";
  }

  async post() {
    const text = this.postText.value;
    if (!text.trim()) return;
    const error = await this.act({ do: "post", discussion: this.shownThread, text });
    if (!error) this.postText.value = "";
  }

  renderTargets(thread) {
    const current = this.targetFor === thread.id ? this.target.value : thread.target;
    this.target.replaceChildren(...this.state.blocks.map((b) => el("option", {
      value: b.id, text: short(b.text, 42) || "(empty)",
    })));
    if (current && this.state.blocks.some((b) => b.id === current)) this.target.value = current;
    this.targetFor = thread.id;
  }

  apply(messageId, text) {
    const action = { do: "apply", discussion: this.shownThread, message: messageId,
      target: this.target.value, placement: this.placement.value };
    if (text !== undefined) action.text = text;
    return this.act(action);
  }

  renderMessages(thread) {
    const near = this.messages.scrollHeight - this.messages.scrollTop - this.messages.clientHeight < 40;
    for (const m of thread.messages) {
      if (this.messageIds.includes(m.id)) continue;
      this.messageIds.push(m.id);
      let who;
      if (m.kind === "question") who = el("b", { text: "The moderator asks you" });
      else if (m.author === "user") who = el("b", { text: m.kind === "answer" ? "You answered" : "You" });
      else who = el("span", {}, this.avatar(m.author), el("b", { text: m.author_name }));
      const act = m.act ? el("span", { class: `hb-dt-act hb-dt-act-${m.act}`, text: m.act }) : null;
      const apply = m.kind === "utterance" ? el("button", {
        class: "hb-dt-button hb-dt-apply", type: "button", "data-apply": m.id, text: "Apply",
        title: "Put this into the plan at the chosen block",
        onclick: () => this.apply(m.id),
      }) : null;
      this.messages.append(el("div", {
        class: `hb-dt-msg hb-dt-msg-${m.kind}`, id: `hb-dt-${m.id}`, "data-message": m.id,
      }, el("div", { class: "hb-dt-msg-head" }, who, act, apply),
      el("div", { class: "hb-dt-msg-text", text: m.text })));
    }
    if (near) this.messages.scrollTop = this.messages.scrollHeight;
  }

  renderSummary(thread) {
    if (!thread.summary.length) {
      this.summaryBox.replaceChildren(el("h3", { text: "Summary" }),
        el("p", { class: "hb-dt-muted", text: "A summary appears once the agents have spoken." }));
      return;
    }
    const rows = [];
    let section = null;
    for (const entry of thread.summary) {
      if (entry.section !== section) {
        section = entry.section;
        rows.push(el("div", { class: "hb-dt-summary-section", text: section }));
      }
      rows.push(el("div", { class: "hb-dt-summary-item" },
        el("span", { class: "hb-dt-summary-text", text: entry.text }),
        el("button", { class: "hb-dt-link", type: "button", text: "see message",
          onclick: () => {
            const node = this.messages.querySelector(`[data-message="${entry.message_id}"]`);
            if (node) { node.scrollIntoView({ block: "center" }); node.classList.add("hb-dt-flash"); }
          } }),
        el("button", { class: "hb-dt-button hb-dt-apply-summary", type: "button", text: "Apply",
          title: "Put this into the plan at the chosen block",
          onclick: () => this.apply(entry.message_id, entry.text) })));
    }
    this.summaryBox.replaceChildren(el("h3", { text: "Summary" }), ...rows);
  }

  buildSteer() {
    this.steerPeople = el("div", { class: "hb-dt-row hb-dt-wrap" });
    this.addSelect = el("select", { class: "hb-dt-add-select", "aria-label": "Agent to add" });
    this.addRow = el("div", { class: "hb-dt-row" }, this.addSelect,
      el("button", { class: "hb-dt-button hb-dt-add-participant", type: "button",
        text: "Add to discussion", onclick: () => this.act({ do: "add_participant",
          discussion: this.shownThread, agent: this.addSelect.value }) }));
    this.focusInput = el("input", { class: "hb-dt-input hb-dt-focus-text", type: "text",
      placeholder: "New focus in your words", "aria-label": "New focus" });
    this.modeSelect = el("select", { class: "hb-dt-mode-select", "aria-label": "Mode" });
    this.steerBox.append(
      el("summary", { text: "Change this discussion (agents, focus, mode)" }),
      this.steerPeople, this.addRow,
      el("div", { class: "hb-dt-row" }, this.focusInput,
        el("button", { class: "hb-dt-button hb-dt-set-focus", type: "button", text: "Set focus",
          onclick: async () => {
            const focus = this.focusInput.value;
            const error = await this.act({ do: "set_focus", discussion: this.shownThread, focus });
            if (!error) this.focusInput.value = "";
          } })),
      el("div", { class: "hb-dt-row" }, this.modeSelect,
        el("button", { class: "hb-dt-button hb-dt-set-mode", type: "button", text: "Switch mode",
          onclick: () => this.act({ do: "set_mode", discussion: this.shownThread,
            mode: this.modeSelect.value }) })));
  }

  /** Put options in a select, keeping its choice while it is still offered. */
  options(select, items, fallback) {
    const current = select.value;
    select.replaceChildren(...items.map(([value, text]) => el("option", { value, text })));
    const values = items.map(([value]) => value);
    select.value = values.includes(current) && !fallback ? current : (fallback || values[0] || "");
  }

  renderSteer(d) {
    this.steerBox.hidden = this.state.baseline;
    if (this.state.baseline) return;
    this.steerPeople.replaceChildren(el("span", { text: "Agents:" }),
      ...d.participants.map((a) => el("span", { class: "hb-dt-person" }, this.avatar(a),
        this.agentName(a), el("button", { class: "hb-dt-button hb-dt-small hb-dt-remove",
          type: "button", text: "Remove", "data-remove": a, title: `Take ${this.agentName(a)} out`,
          onclick: () => this.act({ do: "remove_participant", discussion: d.id, agent: a }) }))));
    const others = this.state.agents.filter((a) => !d.participants.includes(a.id));
    this.options(this.addSelect, others.map((a) => [a.id, a.name]));
    this.addRow.hidden = others.length === 0;
    const modeChanged = this.modeFor !== `${d.id}:${d.mode}`;
    this.modeFor = `${d.id}:${d.mode}`;
    this.options(this.modeSelect, this.state.modes.map((m) => [m.value, m.label]),
      modeChanged ? d.mode : null);
  }
}

/** Mount the UI in `root`; `send(action)` resolves to null or the reason it was refused. */
export function mount(root, send) {
  return new DocuTeamUI(root, send);
}

/** The notebook side (anywidget): the state trait in, actions out as custom messages. */
export default {
  render({ model, el: root }) {
    const pending = new Map();
    let count = 0;
    const send = (action) => new Promise((resolve) => {
      count += 1;
      const id = `${Date.now()}-${count}`;
      pending.set(id, resolve);
      model.send({ id, action });
    });
    const onMessage = (message) => {
      if (message && message.type === "ack" && pending.has(message.id)) {
        pending.get(message.id)(message.error);
        pending.delete(message.id);
      }
    };
    model.on("msg:custom", onMessage);
    const ui = mount(root, send);
    const update = () => ui.render(model.get("state"));
    model.on("change:state", update);
    update();
    return () => {
      model.off("change:state", update);
      model.off("msg:custom", onMessage);
      ui.destroy();
    };
  },
};
