// The live channel of a served page (hasbench.serve.live): the page's state as it
// changes, actions sent back with an id (resent after a reconnect, applied once), drafts
// kept across reloads, and a small DOM builder that never parses data as HTML.
"use strict";

const HB = (() => {
  const token = location.pathname.split("/").pop();
  const pending = new Map();
  let socket = null;
  let render = null;
  let retry = 500;
  let failures = 0;
  let everConnected = false;

  function randomId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function banner(text) {
    const box = document.getElementById("hb-connection");
    if (!box) return;
    box.textContent = text || "";
    box.hidden = !text;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/live/${token}`);
    socket.onopen = () => {
      retry = 500;
      failures = 0;
      everConnected = true;
      banner(null);
      for (const [id, item] of pending) socket.send(JSON.stringify({ id, action: item.action }));
    };
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "state") {
        render(message.state);
      } else if (message.type === "ack" && pending.has(message.id)) {
        const item = pending.get(message.id);
        pending.delete(message.id);
        item.resolve(message.error);
      }
    };
    socket.onclose = () => {
      failures += 1;
      banner(everConnected && failures < 4
        ? "Connection lost: reconnecting… (nothing you did is lost)"
        : "Cannot reach the server, or this link was replaced. If this goes on, ask the " +
          "researcher for your link.");
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    };
  }

  /** Send an action; resolves to null when applied, or to the reason it was refused. */
  function send(action) {
    const id = randomId();
    return new Promise((resolve) => {
      pending.set(id, { action, resolve });
      if (socket && socket.readyState === WebSocket.OPEN) {
        socket.send(JSON.stringify({ id, action }));
      }
    });
  }

  /** Keep what is typed into `element` across reloads, under `key`. */
  function draft(key, element) {
    const name = `hb-draft-${token}-${key}`;
    const kept = localStorage.getItem(name);
    if (kept !== null) element.value = kept;
    element.addEventListener("input", () => localStorage.setItem(name, element.value));
  }

  function forget(key) {
    localStorage.removeItem(`hb-draft-${token}-${key}`);
  }

  /** An element with attributes (class, text, on<event>, others) and children. */
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

  function start(renderState) {
    render = renderState;
    connect();
  }

  return { start, send, draft, forget, el, token };
})();
