// symlab views: the browser half of symlab.notebook's widgets (anywidget ESM, shipped with the package).
//
// Python draws the pictures (SVG made by Graphviz from the view model) and decides everything; this
// script shows them and reports clicks and keys. Safety: the SVG is parsed with DOMParser, never
// innerHTML; <script>, <foreignObject>, on* and *href attributes are dropped; every text outside the
// SVG is set with textContent. Graphviz ids are moved to data-key (ids are global in a page).

const SVG_NS = "http://www.w3.org/2000/svg";
const DROP_ELEMENTS = new Set(["script", "foreignobject", "iframe", "object", "embed", "style"]);

function sanitize(node) {
  for (const child of Array.from(node.children)) {
    const name = child.localName.toLowerCase();
    if (DROP_ELEMENTS.has(name)) {
      child.remove();
      continue;
    }
    if (name === "a") {
      // Graphviz wraps shapes with a tooltip in <a xlink:title=...>: keep the shapes and the tooltip as a
      // <title>, drop the link.
      const tip = child.getAttribute("xlink:title") || child.getAttribute("title");
      const parent = child.parentNode;
      if (tip && !Array.from(parent.children).some((c) => c.localName === "title")) {
        const title = document.createElementNS(SVG_NS, "title");
        title.textContent = tip;
        parent.insertBefore(title, child);
      }
      while (child.firstChild) parent.insertBefore(child.firstChild, child);
      child.remove();
      continue;
    }
    sanitize(child);
  }
  for (const attr of Array.from(node.attributes || [])) {
    const name = attr.name.toLowerCase();
    if (name.startsWith("on") || name === "href" || name.endsWith(":href") || name === "src") {
      node.removeAttribute(attr.name);
    }
  }
}

export function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.localName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  sanitize(root);
  for (const g of root.querySelectorAll("g.node, g.edge, g.cluster")) {
    if (g.id) {
      g.dataset.key = g.id;
      g.removeAttribute("id");
    }
  }
  for (const el of root.querySelectorAll("[id]")) el.removeAttribute("id");
  const svg = document.importNode(root, true);
  // Graphviz's own size in pt, never wider than the output area.
  svg.classList.add("sl-svg");
  return svg;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// A labelled checkbox (keyboard-reachable); returns [box, label], the label to place, the box to read.
function checkbox(text, onChange, title) {
  const box = el("input");
  box.type = "checkbox";
  box.id = `sl-box-${Math.random().toString(36).slice(2)}`;
  const label = el("label", "sl-check", ` ${text}`);
  label.htmlFor = box.id;
  if (title) label.title = title;
  label.prepend(box);
  box.addEventListener("change", () => onChange(box.checked));
  return [box, label];
}

function button(label, title, onClick) {
  const b = el("button", "sl-button", label);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  b.addEventListener("click", onClick);
  return b;
}

// -- the picture: pan, zoom, click, highlight --------------------------------------------------------------
class Picture {
  constructor(model, onPick) {
    this.model = model;
    this.scale = 1;
    this.shownText = null; // the SVG text shown (see update)
    this.root = el("div", "sl-picture");
    this.root.tabIndex = 0;
    this.root.setAttribute("role", "img");
    this.root.setAttribute("aria-label", "graph picture: click a node to select it, arrow keys move along edges");
    this.root.addEventListener("click", (event) => {
      const g = event.target.closest("g.node, g.edge");
      if (g && this.root.contains(g) && g.dataset.key) onPick(g.dataset.key);
    });
    this.root.addEventListener("wheel", (event) => {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      this.zoom(event.deltaY < 0 ? 1.2 : 1 / 1.2);
    }, { passive: false });
    let drag = null;
    this.root.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || event.target.closest("g.node")) return;
      drag = { x: event.clientX, y: event.clientY, left: this.root.scrollLeft, top: this.root.scrollTop };
    });
    window.addEventListener("pointerup", () => { drag = null; });
    this.root.addEventListener("pointermove", (event) => {
      if (!drag) return;
      this.root.scrollLeft = drag.left - (event.clientX - drag.x);
      this.root.scrollTop = drag.top - (event.clientY - drag.y);
    });
  }

  centres() {
    const found = new Map();
    if (!this.svg) return found;
    for (const g of this.svg.querySelectorAll("g.node[data-key]")) {
      const box = g.getBBox();
      found.set(g.dataset.key, [box.x + box.width / 2, box.y + box.height / 2]);
    }
    return found;
  }

  // With animate, nodes that keep their key move from where they were to where they are now (Web
  // Animations; nothing moves under prefers-reduced-motion).
  show(svgText, animate = false) {
    const reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    const old = animate && !reduced ? this.centres() : null;
    const svg = parseSvg(svgText);
    this.root.replaceChildren();
    this.svg = svg;
    if (!svg) {
      this.root.append(el("div", "sl-empty", "(no picture: Graphviz is not installed, or the graph is empty)"));
      return;
    }
    this.width = parseFloat(svg.getAttribute("width")) || null;
    this.height = parseFloat(svg.getAttribute("height")) || null;
    this.root.append(svg);
    this.applyScale();
    if (old && old.size && svg.animate !== undefined) {
      for (const [key, [x, y]] of this.centres()) {
        const before = old.get(key);
        if (!before) continue;
        const dx = before[0] - x;
        const dy = before[1] - y;
        if (Math.abs(dx) + Math.abs(dy) < 0.5) continue;
        const g = svg.querySelector(`g.node[data-key="${CSS.escape(key)}"]`);
        g.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "translate(0px, 0px)" }],
          { duration: 350, easing: "ease-out" });
      }
    }
  }

  // Show svgText if it differs from what is shown (Python resends every trait with each answer).
  update(svgText, animate = false) {
    if (svgText === this.shownText) return;
    this.shownText = svgText;
    this.show(svgText, animate);
  }

  applyScale() {
    if (!this.svg || !this.width) return;
    this.svg.style.width = `${this.width * this.scale}pt`;
    this.svg.style.height = `${this.height * this.scale}pt`;
    this.svg.style.maxWidth = this.scale <= 1 ? "100%" : "none";
  }

  zoom(factor) {
    this.scale = Math.min(8, Math.max(0.1, this.scale * factor));
    this.applyScale();
  }

  fit() {
    this.scale = 1;
    this.applyScale();
  }

  mark(classes) {
    if (!this.svg) return;
    for (const g of this.svg.querySelectorAll("g.node.sl-marked, g.edge.sl-marked")) {
      g.classList.remove("sl-marked", "sl-selected", "sl-client", "sl-input", "sl-neighbour");
    }
    for (const [key, names] of Object.entries(classes || {})) {
      const g = this.svg.querySelector(`g[data-key="${CSS.escape(key)}"]`);
      if (!g) continue;
      g.classList.add("sl-marked", ...names.map((n) => `sl-${n}`));
    }
  }

  reveal(key) {
    if (!this.svg || !key) return;
    const g = this.svg.querySelector(`g[data-key="${CSS.escape(key)}"]`);
    if (g && g.scrollIntoView) g.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
}

// An object named in a panel: a link to it when it has a key in the picture, else its text.
function itemElement(item, onPick) {
  if (!item.key) return el("span", "sl-text", item.text);
  const link = button(item.text, `go to ${item.text}`, () => onPick(item.key));
  link.className = "sl-link";
  link.dataset.key = item.key;
  return link;
}

// -- the details panel --------------------------------------------------------------------------------------
function renderDetails(container, details, onPick) {
  container.replaceChildren();
  if (!details || !details.rows || !details.rows.length) {
    container.append(el("div", "sl-hint", details && details.hint ? details.hint : "Click a node to see its details."));
    return;
  }
  const title = el("div", "sl-details-title", details.title || "");
  container.append(title);
  const table = el("table", "sl-details-table");
  for (const row of details.rows) {
    const tr = el("tr");
    tr.append(el("th", "", row.label));
    const td = el("td");
    const items = row.items || [];
    if (row.text !== undefined && row.text !== null) td.append(el("span", "sl-text", row.text));
    items.forEach((item, index) => {
      if (index || (row.text !== undefined && row.text !== null)) td.append(el("span", "sl-sep", index ? ", " : " "));
      td.append(itemElement(item, onPick));
    });
    if (!items.length && (row.text === undefined || row.text === null)) td.append(el("span", "sl-none", row.empty || "none"));
    tr.append(td);
    table.append(tr);
  }
  container.append(table);
  for (const action of details.actions || []) {
    container.append(button(action.text, action.title || action.text, () => onPick(action.key, action.kind)));
  }
}

// -- the clients inspector's parts: a search box, its matches, and what changed since the last picture --------
function inspectorParts(send, pick) {
  const search = el("input", "sl-filter sl-search");
  search.type = "search";
  search.placeholder = "find a variable by name";
  search.setAttribute("aria-label", "find a variable by name (Enter selects the first match)");
  search.addEventListener("input", () => send({ type: "search", text: search.value }));
  search.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    event.stopPropagation(); // not JupyterLab's: Enter would put the cell in edit mode
    send({ type: "search", text: search.value, pick: true });
  });
  const matches = el("div", "sl-matches");
  const changes = el("div", "sl-changes");
  changes.setAttribute("aria-live", "polite");
  const links = (container, items, className) => {
    container.replaceChildren();
    for (const item of items) {
      const row = el("div", className);
      if (item.kind) row.classList.add(`sl-change-${item.kind}`);
      row.append(itemElement(item, pick));
      container.append(row);
    }
  };
  const update = (model) => {
    links(matches, model.get("matches") || [], "sl-match");
    matches.hidden = !(model.get("matches") || []).length;
    const panel = model.get("changes_panel") || {};
    changes.replaceChildren();
    changes.hidden = !panel.title;
    if (panel.title) {
      changes.append(el("div", "sl-details-title", panel.title));
      const list = el("div", "sl-change-list");
      links(list, panel.rows || [], "sl-change");
      changes.append(list);
    }
  };
  return { search, matches, changes, update };
}

// -- the graph view (and the clients inspector, which is a graph view that follows its graph) ------------------
function renderGraphView({ model, el: host }) {
  const inspecting = model.get("view") === "inspector";
  const root = el("div", `sl-view sl-graph-view${inspecting ? " sl-inspector" : ""}`);
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const body = el("div", "sl-body");
  const details = el("div", "sl-details");
  details.setAttribute("aria-live", "polite");
  const notice = el("div", "sl-notice");
  const legend = el("div", "sl-legend");

  const send = (message) => model.send(message);
  const pick = (key, kind) => {
    if (kind === "expand") send({ type: "expand", key });
    else send({ type: "select", key });
  };
  const picture = new Picture(model, (key) => pick(key));

  const styleSelect = el("select", "sl-select");
  styleSelect.setAttribute("aria-label", "style of the picture");
  for (const name of ["structure", "compact"]) {
    const option = el("option", "", name);
    option.value = name;
    styleSelect.append(option);
  }
  styleSelect.addEventListener("change", () => send({ type: "style", style: styleSelect.value }));
  const [focusBox, focusLabel] = checkbox("focus on the selection", (on) => send({ type: "focus", focus: on }));
  const parts = inspecting ? inspectorParts(send, pick) : null;
  if (parts) toolbar.append(parts.search);
  toolbar.append(
    el("span", "sl-toolbar-label", "style"), styleSelect, focusLabel,
    button("+", "zoom in", () => picture.zoom(1.25)),
    button("−", "zoom out", () => picture.zoom(0.8)),
    button("fit", "zoom to fit the output width", () => picture.fit()),
    button("clear", "clear the selection (Escape)", () => send({ type: "select", key: "" })),
  );
  picture.root.addEventListener("keydown", (event) => {
    const moves = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
    if (moves[event.key]) {
      event.preventDefault();
      send({ type: "move", direction: moves[event.key] });
    } else if (event.key === "Escape") {
      event.preventDefault();
      send({ type: "select", key: "" });
    } else if (event.key === "+" || event.key === "=") {
      picture.zoom(1.25);
    } else if (event.key === "-") {
      picture.zoom(0.8);
    }
  });

  if (parts) {
    const side = el("div", "sl-side");
    side.append(parts.matches, parts.changes, details);
    body.append(picture.root, side);
  } else {
    body.append(picture.root, details);
  }
  root.append(toolbar, notice, body, legend);
  host.append(root);

  const update = () => {
    picture.update(model.get("svg"));
    picture.mark(model.get("marks"));
    renderDetails(details, model.get("panel"), pick);
    if (parts) {
      parts.update(model);
      root.dataset.live = String(model.get("live"));
      root.dataset.changes = String(((model.get("changes_panel") || {}).rows || []).length);
    }
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    legend.textContent = model.get("legend") || "";
    styleSelect.value = model.get("picture_style");
    focusBox.checked = model.get("focus");
    const selected = model.get("selected_key") || "";
    root.dataset.selected = selected;
    root.dataset.drawn = String(model.get("drawn"));
    root.dataset.style = model.get("picture_style");
    picture.reveal(selected);
  };
  // Python answers an interaction with all of its traits in one message, then bumps "drawn": draw once.
  model.on("change:drawn", update);
  update();
  return () => model.off("change:drawn", update);
}


// -- the rewrite stepper -------------------------------------------------------------------------------------
function renderStepper({ model, el: host }) {
  const root = el("div", "sl-view sl-stepper");
  root.tabIndex = 0;
  root.setAttribute("aria-label", "rewrite stepper: left and right arrow keys move between steps");
  const send = (message) => model.send(message);
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const slider = el("input", "sl-slider");
  slider.type = "range";
  slider.min = "0";
  slider.setAttribute("aria-label", "step");
  slider.addEventListener("input", () => send({ type: "goto", step: Number(slider.value) }));
  const position = el("span", "sl-position");
  const [compareBox, compareLabel] = checkbox("unoptimized | optimized", (on) => send({ type: "compare", compare: on }));
  let player = null;
  const speed = el("select", "sl-select");
  speed.setAttribute("aria-label", "playing speed");
  for (const [text, ms] of [["0.5 s a step", 500], ["1 s a step", 1000], ["2 s a step", 2000]]) {
    const option = el("option", "", text);
    option.value = String(ms);
    speed.append(option);
  }
  speed.value = "1000";
  const stop = () => {
    if (player !== null) clearInterval(player);
    player = null;
    playButton.textContent = "play";
  };
  const playButton = button("play", "play the steps at the chosen speed (again: pause)", () => {
    if (player !== null) {
      stop();
      return;
    }
    playButton.textContent = "pause";
    player = setInterval(() => {
      if (model.get("step") >= model.get("total")) stop();
      else send({ type: "move", direction: "next" });
    }, Number(speed.value));
  });
  const [fullBox, fullLabel] = checkbox("whole graph", (on) => send({ type: "full", full: on }),
    "large graphs are drawn around each step's change; tick to draw all of it (folded)");
  toolbar.append(
    button("⏮", "first step (the unoptimized graph)", () => send({ type: "move", direction: "first" })),
    button("◀", "previous step (←)", () => send({ type: "move", direction: "prev" })),
    slider,
    button("▶", "next step (→)", () => send({ type: "move", direction: "next" })),
    button("⏭", "last step (the optimized graph)", () => send({ type: "move", direction: "last" })),
    position,
    button("◀ rule", "previous use of this step's rule", () => send({ type: "rule", backward: true })),
    button("rule ▶", "next use of this step's rule", () => send({ type: "rule", backward: false })),
    playButton,
    speed,
    compareLabel,
    fullLabel,
  );
  const notice = el("div", "sl-notice");
  const panes = el("div", "sl-panes");
  // Clicking a node of either pane asks why the rules tried on it did or did not apply.
  const before = new Picture(model, (key) => send({ type: "why", key }));
  const after = new Picture(model, (key) => send({ type: "why", key }));
  const beforeBox = el("div", "sl-pane sl-before");
  const afterBox = el("div", "sl-pane sl-after");
  const beforeTitle = el("div", "sl-pane-title");
  const afterTitle = el("div", "sl-pane-title");
  beforeBox.append(beforeTitle, before.root);
  afterBox.append(afterTitle, after.root);
  panes.append(beforeBox, afterBox);
  const lower = el("div", "sl-body");
  const card = el("div", "sl-card");
  card.setAttribute("aria-live", "polite");
  const listBox = el("div", "sl-steps");
  const filter = el("input", "sl-filter");
  filter.type = "search";
  filter.placeholder = "filter rules";
  filter.setAttribute("aria-label", "filter the steps by rule name");
  const [hideBox, hideLabel] = checkbox("hide refused", () => applyFilter());
  const [quietBox, quietLabel] = checkbox("hide steps that moved no node", () => applyFilter());
  const list = el("ol", "sl-step-list");
  listBox.append(filter, hideLabel, quietLabel, list);
  lower.append(card, listBox);
  root.append(toolbar, notice, panes, lower);
  host.append(root);

  root.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === "ArrowRight") send({ type: "move", direction: "next" });
    else if (event.key === "ArrowLeft") send({ type: "move", direction: "prev" });
    else if (event.key === "Home") send({ type: "move", direction: "first" });
    else if (event.key === "End") send({ type: "move", direction: "last" });
    else return;
    event.preventDefault();
  });

  let rows = [];
  const buildList = () => {
    list.replaceChildren();
    const steps = model.get("steps");
    const counts = new Map();
    for (const [, phase, , accepted] of steps) {
      const c = counts.get(phase) || [0, 0];
      c[accepted ? 0 : 1] += 1;
      counts.set(phase, c);
    }
    let phaseShown = null;
    rows = steps.map(([index, phase, rule, accepted, quiet]) => {
      if (phase !== phaseShown) {
        const [applied, refused] = counts.get(phase);
        const header = el("li", "sl-phase", `${phase}: ${applied} applied, ${refused} refused`);
        header.setAttribute("aria-hidden", "true");
        list.append(header);
        phaseShown = phase;
      }
      const li = el("li", `sl-step${accepted ? "" : " sl-refused"}${quiet ? " sl-quiet" : ""}`);
      li.value = index;
      li.dataset.step = String(index);
      li.dataset.rule = rule;
      li.append(el("span", "sl-step-rule", rule),
                el("span", "sl-step-status", accepted ? (quiet ? "applied, no node moved" : "applied") : "refused"));
      li.addEventListener("click", () => send({ type: "goto", step: index }));
      list.append(li);
      return li;
    });
  };
  const applyFilter = () => {
    const words = filter.value.trim().toLowerCase();
    for (const li of rows) {
      const hidden = (hideBox.checked && li.classList.contains("sl-refused"))
        || (quietBox.checked && li.classList.contains("sl-quiet"))
        || (words && !li.dataset.rule.toLowerCase().includes(words));
      li.hidden = Boolean(hidden);
    }
  };
  filter.addEventListener("input", applyFilter);

  const renderCard = (data) => {
    card.replaceChildren(el("div", "sl-details-title", data.title || ""));
    if (data.counts) {
      const table = el("table", "sl-details-table");
      const head = el("tr");
      head.append(el("th", "", "rule"), el("th", "", "applied"), el("th", "", "refused"), el("th", "", "time"));
      table.append(head);
      for (const [rule, applied, refused, time] of data.counts) {
        const tr = el("tr");
        tr.append(el("td", "", rule), el("td", "", applied), el("td", "", refused), el("td", "", time));
        table.append(tr);
      }
      card.append(table);
      return;
    }
    const table = el("table", "sl-details-table");
    const fields = [["rule", data.rule], ["status", data.status], ["phase", data.phase], ["reason", data.reason],
      ["node", data.node], ["where", data.location], ["time", data.seconds],
      ["removed / created", `${data.removed} / ${data.created} nodes`]];
    for (const [label, value] of fields) {
      const tr = el("tr");
      tr.append(el("th", "", label), el("td", label === "status" ? `sl-status-${value}` : "", value));
      table.append(tr);
    }
    const replaced = el("tr");
    const cell = el("td");
    (data.replacements || []).forEach((text) => cell.append(el("div", "sl-code", text)));
    if (!(data.replacements || []).length) cell.append(el("span", "sl-none", "none"));
    replaced.append(el("th", "", "replacements"), cell);
    table.append(replaced);
    card.append(table);
    const exclude = el("input", "sl-exclude");
    exclude.readOnly = true;
    exclude.value = data.exclude || "";
    exclude.setAttribute("aria-label", "the line that excludes this rule");
    exclude.addEventListener("focus", () => exclude.select());
    card.append(el("div", "sl-hint", "to leave this rule out:"), exclude);
    if (data.source) {
      card.append(el("pre", "sl-source", data.source));
    } else {
      card.append(button("show the rule's source", "show the source code of this rule", () => send({ type: "source" })));
    }
    if (data.check) {
      card.append(el("div", "sl-check-result", data.check));
    } else {
      card.append(button("check this step", "evaluate the graph before and after this step on random inputs",
        () => send({ type: "check" })));
    }
    if (data.why) {
      const why = el("div", "sl-why");
      why.append(el("div", "sl-details-title", `rules tried on ${data.why.node}`));
      const table = el("table", "sl-details-table");
      for (const row of data.why.rows) {
        const tr = el("tr");
        const steps = row.steps.length ? ` (step ${row.steps.join(", ")})` : "";
        tr.append(el("th", "", row.rule || "-"), el("td", `sl-status-${row.outcome}`, `${row.outcome}${steps}`),
                  el("td", "", row.reason));
        table.append(tr);
      }
      why.append(table);
      card.append(why);
    } else {
      card.append(el("div", "sl-hint", "click a node in either picture: which rules were tried on it, and why not"));
    }
  };

  let shown = { steps: null };
  const update = () => {
    if (model.get("steps") !== shown.steps) {
      buildList();
      applyFilter();
      shown.steps = model.get("steps");
    }
    const step = model.get("step");
    const total = model.get("total");
    slider.max = String(total);
    slider.value = String(step);
    position.textContent = `step ${step} / ${total}`;
    compareBox.checked = model.get("compare");
    fullBox.checked = model.get("full");
    const animate = !model.get("compare");
    before.update(model.get("before_svg"), animate);
    after.update(model.get("after_svg"), animate);
    beforeBox.hidden = !model.get("before_title");
    beforeTitle.textContent = model.get("before_title");
    afterTitle.textContent = model.get("after_title");
    renderCard(model.get("card") || {});
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    for (const li of rows) li.classList.toggle("sl-current", Number(li.dataset.step) === step);
    const current = rows[step - 1];
    if (current && current.scrollIntoView) current.scrollIntoView({ block: "nearest" });
    root.dataset.step = String(step);
    root.dataset.drawn = String(model.get("drawn"));
  };
  model.on("change:drawn", update);
  update();
  return () => model.off("change:drawn", update);
}

// -- the values view -----------------------------------------------------------------------------------------
// Every variable's value (and gradient) is written on the picture by Python; scalar inputs get a slider and a
// number box. A drag must not queue one re-evaluation per pixel: while a value waits for Python's answer, only
// the newest value asked for meanwhile is kept, and sent when the answer comes.
function renderValuesView({ model, el: host }) {
  const root = el("div", "sl-view sl-values-view");
  const send = (message) => model.send(message);
  const caption = el("div", "sl-caption");
  const nanNote = el("div", "sl-nan-note");
  nanNote.setAttribute("role", "status");
  const controls = el("div", "sl-controls");
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const notice = el("div", "sl-notice");
  const body = el("div", "sl-body");
  const details = el("div", "sl-details");
  details.setAttribute("aria-live", "polite");
  const legend = el("div", "sl-legend");

  const pick = (key) => send({ type: "select", key });
  const picture = new Picture(model, (key) => pick(key));
  picture.root.setAttribute("aria-label", "graph picture with values: click a box to see its whole value and gradient");
  toolbar.append(
    button("+", "zoom in", () => picture.zoom(1.25)),
    button("−", "zoom out", () => picture.zoom(0.8)),
    button("fit", "zoom to fit the output width", () => picture.fit()),
    button("clear", "clear the selection (Escape)", () => pick("")),
  );
  picture.root.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      pick("");
    } else if (event.key === "+" || event.key === "=") {
      picture.zoom(1.25);
    } else if (event.key === "-") {
      picture.zoom(0.8);
    }
  });

  let waiting = false;
  let queued = null;
  let lost = null;
  const sendValue = (key, value) => {
    if (waiting) {
      queued = { key, value };
      return;
    }
    waiting = true;
    clearTimeout(lost);
    lost = setTimeout(() => { waiting = false; }, 5000); // an answer that never comes must not freeze the sliders
    send({ type: "value", key, value });
  };

  // The rows are rebuilt only when the inputs change, so a slider being dragged is never replaced.
  const rows = new Map();
  let shape = null;
  const buildControls = (items) => {
    controls.replaceChildren();
    rows.clear();
    for (const item of items) {
      const row = el("div", "sl-control");
      row.dataset.key = item.key;
      row.append(el("span", "sl-control-name", item.name));
      if (!item.editable) {
        row.append(el("span", "sl-code", item.text), el("span", "sl-hint", item.why));
        controls.append(row);
        continue;
      }
      const slider = el("input", "sl-slider");
      slider.type = "range";
      slider.setAttribute("aria-label", `slider for input ${item.name}`);
      slider.addEventListener("input", () => sendValue(item.key, Number(slider.value)));
      const box = el("input", "sl-number");
      box.type = "text";
      box.inputMode = "decimal";
      box.spellcheck = false;
      box.setAttribute("aria-label", `value of input ${item.name} (a number, nan or inf; Enter applies it)`);
      box.addEventListener("input", () => { box.dataset.dirty = "1"; });
      const commit = () => {
        if (!box.dataset.dirty) return;
        delete box.dataset.dirty;
        sendValue(item.key, box.value); // Python reads the text: "1.5", "-inf", "nan", or says what is wrong
      };
      box.addEventListener("change", commit);
      // Enter applies the value; JupyterLab's notebook shortcuts must not see it (Enter would edit the cell).
      box.addEventListener("keydown", (event) => {
        if (event.key !== "Enter") return;
        event.preventDefault();
        event.stopPropagation();
        commit();
      });
      const range = el("span", "sl-range");
      row.append(slider, box, range);
      rows.set(item.key, { slider, box, range });
      controls.append(row);
    }
  };
  const syncControls = (items) => {
    const now = JSON.stringify(items.map((item) => [item.key, item.name, item.editable]));
    if (now !== shape) {
      buildControls(items);
      shape = now;
    }
    for (const item of items) {
      const row = rows.get(item.key);
      if (!row) continue;
      row.slider.min = String(item.min);
      row.slider.max = String(item.max);
      row.slider.step = String(item.step);
      if (!(queued && queued.key === item.key)) {
        if (item.value !== null && item.value !== undefined) row.slider.value = String(item.value);
        if (!row.box.dataset.dirty) row.box.value = item.entry;
      }
      row.range.textContent = `${item.min} … ${item.max}`;
    }
  };

  body.append(picture.root, details);
  root.append(caption, nanNote, controls, toolbar, notice, body, legend);
  host.append(root);

  const update = () => {
    picture.update(model.get("svg"));
    picture.mark(model.get("marks"));
    renderDetails(details, model.get("panel"), pick);
    caption.textContent = model.get("caption") || "";
    nanNote.textContent = model.get("nan_note") || "";
    nanNote.hidden = !model.get("nan_note");
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    legend.textContent = model.get("legend") || "";
    waiting = false;
    syncControls(model.get("controls") || []);
    root.dataset.selected = model.get("selected_key") || "";
    root.dataset.drawn = String(model.get("drawn"));
    if (queued) {
      const next = queued;
      queued = null;
      sendValue(next.key, next.value);
    }
  };
  // Python answers each message with all of its traits in one message, then bumps "drawn": draw once.
  model.on("change:drawn", update);
  update();
  return () => {
    clearTimeout(lost);
    model.off("change:drawn", update);
  };
}

const VIEWS = { graph: renderGraphView, inspector: renderGraphView, stepper: renderStepper, values: renderValuesView };

export default {
  render(context) {
    const view = VIEWS[context.model.get("view")];
    if (!view) {
      context.el.append(el("div", "sl-empty", `unknown symlab view ${context.model.get("view")}`));
      return undefined;
    }
    return view(context);
  },
};
