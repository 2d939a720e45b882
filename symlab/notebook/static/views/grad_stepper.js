// views/grad_stepper.js: the grad stepper: grad's walk step by step, the forward graph and the gradient graph.

// -- the grad stepper ---------------------------------------------------------------------------------------
// Both pictures are drawn once (forward_svg, gradient_svg); a step only changes classes on their nodes and edges
// (marks: {forward: {key: [class]}, gradient: {...}}, every class "sl-gw-..."), the "grad" line of the forward
// boxes (labels: {key: text}) and the card. All text is set with textContent.

// Set the "sl-gw-*" classes of `picture`'s nodes and edges to `marks`; `state` remembers what was marked.
function gwMark(picture, state, marks) {
  if (state.svg !== picture.svg) { // a new drawing: index its keyed groups once
    state.svg = picture.svg;
    state.index = new Map();
    state.marked = new Map();
    state.labels = new Map();
    if (picture.svg) {
      for (const g of picture.svg.querySelectorAll("g.node[data-key], g.edge[data-key]")) state.index.set(g.dataset.key, g);
    }
  }
  const wanted = marks || {};
  for (const [key, names] of state.marked) {
    const now = wanted[key] || [];
    if (now.length === names.length && now.every((n, i) => n === names[i])) continue;
    state.index.get(key).classList.remove(...names);
    state.marked.delete(key);
  }
  for (const [key, names] of Object.entries(wanted)) {
    if (state.marked.has(key)) continue;
    const g = state.index.get(key);
    if (!g || !names.length) continue;
    const classes = names.filter((n) => typeof n === "string" && n.startsWith("sl-gw-"));
    g.classList.add(...classes);
    state.marked.set(key, classes);
  }
}

// Rewrite the last text line of each labelled box (its "grad" line) with textContent.
function gwLabels(state, labels) {
  for (const [key, text] of Object.entries(labels || {})) {
    if (state.labels.get(key) === text) continue;
    const g = state.index && state.index.get(key);
    if (!g) continue;
    const lines = g.querySelectorAll("text:not(.sl-gw-sigma)");
    if (!lines.length) continue;
    lines[lines.length - 1].textContent = text;
    state.labels.set(key, text);
  }
}

// The box of a node's shape: a polygon or an ellipse (shapeBox), or a rounded box's path (its points' extent).
function gwBox(g) {
  const box = shapeBox(g);
  if (box) return box;
  const path = g.querySelector("path");
  const xy = ((path && path.getAttribute("d")) || "").match(/-?[0-9.]+/g);
  if (!xy || xy.length < 4) return null;
  const numbers = xy.map(Number);
  const xs = numbers.filter((_, i) => i % 2 === 0);
  const ys = numbers.filter((_, i) => i % 2 === 1);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

// A Σ badge on each variable box that may be marked as a sum (shown by views.css when it is).
function gwBadges(picture, keys) {
  if (!picture.svg) return;
  for (const key of keys) {
    const g = picture.svg.querySelector(`g.node[data-key="${CSS.escape(key)}"]`);
    if (!g || g.querySelector("text.sl-gw-sigma")) continue;
    const box = gwBox(g);
    if (!box) continue;
    const sigma = document.createElementNS(SVG_NS, "text");
    sigma.setAttribute("class", "sl-gw-sigma");
    sigma.setAttribute("x", String(box[2] - 5));
    sigma.setAttribute("y", String(box[1] + 14));
    sigma.setAttribute("text-anchor", "end");
    sigma.textContent = "Σ";
    g.append(sigma);
  }
}

// The two panes share one height when side by side: the taller picture's at its scale, at most the panes' cap. The
// shorter picture, when shown in part (wider than its pane), is drawn larger to use that height (by one zoom step
// at most, never beyond its own size: more would show too little of it); what is still shorter is centred in it. No blank band under one pane, neither pane squeezed. Panes
// wrapped one under the other keep their own heights.
function gwFitRow(pictures) {
  const laid = pictures.filter((p) => p.svg && p.width && p.height && p.scroller.offsetWidth);
  const chrome = (p) => p.scroller.offsetHeight - p.scroller.clientHeight; // borders, a horizontal scroll bar
  const tops = new Set(laid.map((p) => Math.round(p.root.getBoundingClientRect().top)));
  if (laid.length < 2 || tops.size > 1) {
    for (const p of laid) {
      p.scroller.style.height = "";
      p.svg.style.marginTop = "";
    }
    return;
  }
  const cap = Math.min(...laid.map((p) => p.paneHeight()));
  const row = Math.min(cap, Math.max(...laid.map((p) => p.height * p.scale + chrome(p))));
  for (const p of laid) {
    const room = row - chrome(p);
    if (p.mode === "auto" && p.width * p.scale > p.paneWidth() + 1 && p.height * p.scale < room - 1) {
      const grown = Math.min(PX_PER_PT, p.autoScaleValue() * ZOOM_STEP, room / p.height); // one "+" at most
      if (grown > p.scale + 1e-4) p.applyScale(grown, null, false);
    }
  }
  for (const p of laid) {
    p.scroller.style.height = `${Math.ceil(row)}px`;
    const spare = row - chrome(p) - p.height * p.scale;
    p.svg.style.marginTop = spare > 1 ? `${Math.floor(spare / 2)}px` : "";
    p.schedule(); // its status line (how much is shown) and minimap follow the new height
  }
}

// Bring `keys` into view in `picture` now, on the pane's final size and scale (the picture's own reveal may have
// run before a later change of scale or size): centred unless already well inside, the first one whole when they
// do not fit together.
function gwRevealNow(picture, keys) {
  if (!picture.svg || !keys.length) return;
  picture.pendingReveal = { keys, outputs: false };
  picture.revealNow();
}

function gwCard(card, data, send, kernel) {
  card.replaceChildren();
  card.dataset.step = String(data.step ?? "");
  card.dataset.kind = data.kind || "";
  card.append(el("div", "sl-details-title sl-gw-card-title", data.title || ""));
  if (data.summary) card.append(el("div", "sl-gw-summary", data.summary));
  const table = el("table", "sl-details-table sl-gw-card-table");
  const row = (label, value, className) => {
    const tr = el("tr", className || "");
    const td = el("td");
    if (value instanceof Node) td.append(value);
    else td.textContent = value;
    tr.append(el("th", "", label), td);
    table.append(tr);
    return tr;
  };
  if (data.node) row("node", data.node, "sl-gw-card-node");
  for (const a of data.arriving || []) {
    const cell = el("span");
    cell.append(el("span", "sl-code", a.gradient));
    if (a.value) cell.append(el("span", "sl-gw-value", ` = ${a.value}`));
    row(data.kind === "start" ? `seed of ${a.output}` : `arriving at ${a.output}`, cell, "sl-gw-card-arriving");
  }
  if (data.rule) row("rule", data.rule, "sl-gw-card-rule");
  for (const c of data.contributions || []) {
    const cell = el("span");
    if (c.reason) {
      cell.append(el("span", "sl-gw-reason", `none: ${c.reason}`));
    } else {
      cell.append(el("span", "sl-code", c.gradient));
      if (c.value) cell.append(el("span", "sl-gw-value", ` = ${c.value}`));
      const total = el("div", "sl-gw-total");
      total.append(el("span", "", c.summed ? "Σ added to what it had: total " : "its total: "),
        el("span", "sl-code", c.total));
      if (c.total_value) total.append(el("span", "sl-gw-value", ` = ${c.total_value}`));
      cell.append(total);
    }
    const tr = row(`input ${c.index}: ${c.input}`, cell, "sl-gw-card-input");
    if (c.summed) tr.classList.add("sl-gw-sum");
    if (c.reason) tr.classList.add("sl-gw-refused");
  }
  if ((data.new || []).length) {
    const cell = el("span");
    for (const text of data.new) cell.append(el("div", "sl-code", text));
    row(`new nodes (${data.new.length})`, cell, "sl-gw-card-new");
  }
  if ((data.sums || []).length) row("sums", `Σ ${data.sums.join(", ")}: contributions of several clients add up`, "sl-gw-card-sums");
  if (data.why) row("why", data.why, "sl-gw-card-why");
  for (const p of data.problems || []) row(`grad says (${p.wrt})`, p.problem, "sl-gw-card-problem");
  card.append(table);
  if (data.kind && data.kind !== "start") {
    if (data.source) card.append(el("pre", "sl-source sl-gw-source", data.source));
    else {
      const b = button("show the rule's source", "show the source code of this op's gradient rule", () => send({ type: "source" }));
      b.classList.add("sl-gw-source-button");
      card.append(b);
    }
  }
  if (data.last && kernel) {
    const b = button("compiled →", "open the rewrite stepper on this gradient graph: watch it become the compiled one",
      () => send({ type: "compiled" }));
    b.classList.add("sl-gw-compiled-button");
    card.append(b);
  }
}

function renderGradStepper({ model, el: host, host: widgetHost }) {
  const root = el("div", "sl-view sl-gradwalk");
  root.tabIndex = 0;
  root.setAttribute("aria-label", "grad stepper: left and right arrow keys move between steps");
  const offline = Boolean(model.offline);
  const watch = offline ? null : kernelWatch(model, host, root);
  const send = (message) => (watch ? watch.send(message) : model.send(message));
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const controls = stepControls(root, send, model, {
    first: "the start: the cost's gradient is 1 (Home)", last: "the last step (End)",
    play: "play the backward pass at the chosen speed (again: pause)",
  });
  const order = ["first", "prev", "slider", "next", "last", "position", "play", "speed"];
  for (const name of order) controls[name].classList.add(`sl-gw-${name}`); // "sl-gw-play", ...: styles and tests
  toolbar.append(...order.map((name) => controls[name]));
  const notice = el("div", "sl-notice");
  const panes = el("div", "sl-panes");
  const forward = new Picture(model, () => {});
  const gradient = new Picture(model, () => {});
  const forwardBox = el("div", "sl-pane sl-gw-forward");
  const gradientBox = el("div", "sl-pane sl-gw-gradient");
  const forwardTitle = el("div", "sl-pane-title");
  const gradientTitle = el("div", "sl-pane-title");
  forwardBox.append(forwardTitle, forward.root);
  gradientBox.append(gradientTitle, gradient.root);
  panes.append(forwardBox, gradientBox);
  const legend = el("div", "sl-legend sl-gw-legend",
    "orange: the node visited; lit arrows: the gradient arriving; Σ: contributions of several clients add up; "
    + "green: the nodes this step built; grey: visited");
  const lower = el("div", "sl-body");
  const card = el("div", "sl-card sl-gw-card");
  card.setAttribute("aria-live", "polite");
  const tableBox = el("div", "sl-steps sl-gw-steps");
  const table = el("table", "sl-details-table sl-gw-table");
  const head = el("tr");
  for (const title of ["k", "node", "arriving gradient", "rule result", "new nodes", "sums"]) head.append(el("th", "", title));
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  table.append(thead, tbody);
  tableBox.append(table);
  lower.append(card, tableBox);
  const compiledBox = el("div", "sl-gw-compiled");
  compiledBox.hidden = true;
  root.append(toolbar, notice, panes, legend, lower, compiledBox);
  host.append(root);

  let rows = [];
  const buildTable = () => {
    tbody.replaceChildren();
    rows = (model.get("steps") || []).map((cells) => {
      const tr = el("tr", "sl-gw-row");
      tr.dataset.step = String(cells[0]);
      tr.tabIndex = -1;
      for (const value of cells) tr.append(el("td", "", value));
      tr.addEventListener("click", () => send({ type: "goto", step: cells[0] }));
      tbody.append(tr);
      return tr;
    });
  };

  const forwardMarks = {};
  const gradientMarks = {};
  let compiledShown = null;
  const shown = { steps: null };
  // After every answer and every change of the panes' size, in this order: the shared height, then each step's
  // nodes brought into view (in the frame after: the pictures' own reveal and resize handling have run).
  let settleFrame = 0;
  const settle = () => {
    gwFitRow([forward, gradient]);
    gwRevealNow(forward, model.get("reveal_forward") || []);
    gwRevealNow(gradient, model.get("reveal_gradient") || []);
  };
  const settleSoon = () => {
    if (settleFrame) cancelAnimationFrame(settleFrame);
    settleFrame = requestAnimationFrame(() => {
      settleFrame = 0;
      settle();
    });
  };
  const sizes = typeof ResizeObserver === "function" ? new ResizeObserver(() => settleSoon()) : null;
  if (sizes) {
    sizes.observe(forward.scroller);
    sizes.observe(gradient.scroller);
  }
  const update = () => {
    if (model.get("steps") !== shown.steps) {
      buildTable();
      shown.steps = model.get("steps");
    }
    const step = model.get("step");
    const total = model.get("total");
    controls.show(step, total);
    forward.update(model.get("forward_svg"));
    gradient.update(model.get("gradient_svg"));
    const marks = model.get("marks") || {};
    gwMark(forward, forwardMarks, marks.forward);
    gwMark(gradient, gradientMarks, marks.gradient);
    gwBadges(forward, Object.entries(marks.forward || {})
      .filter(([, names]) => names.includes("sl-gw-sum") || names.includes("sl-gw-summed")).map(([key]) => key));
    gwLabels(forwardMarks, model.get("labels"));
    forwardTitle.textContent = model.get("forward_title") || "";
    gradientTitle.textContent = model.get("gradient_title") || "";
    gwCard(card, model.get("card") || {}, send, !offline);
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    for (const tr of rows) tr.classList.toggle("sl-current", Number(tr.dataset.step) === step);
    const current = rows[step];
    if (current) { // in view inside the table's box only (scrollIntoView would scroll the notebook too)
      const top = current.offsetTop - thead.offsetHeight;
      if (top < tableBox.scrollTop) tableBox.scrollTop = top;
      else if (current.offsetTop + current.offsetHeight > tableBox.scrollTop + tableBox.clientHeight) {
        tableBox.scrollTop = current.offsetTop + current.offsetHeight - tableBox.clientHeight;
      }
    }
    forward.reveal(model.get("reveal_forward") || []);
    gradient.reveal(model.get("reveal_gradient") || []);
    settleSoon();
    const compiled = offline ? null : model.get("compiled");
    if (compiled && compiled !== compiledShown && widgetHost && widgetHost.getWidget) {
      compiledShown = compiled;
      compiledBox.hidden = false;
      compiledBox.replaceChildren(el("div", "sl-pane-title", "then compiled: the rewrites of this gradient graph"));
      const place = el("div", "sl-gw-compiled-view");
      compiledBox.append(place);
      widgetHost.getWidget(compiled).then((child) => child.render({ el: place }))
        .catch((err) => place.append(el("div", "sl-notice", `the rewrite stepper could not be shown: ${err}`)));
    }
    root.dataset.step = String(step);
    root.dataset.total = String(total);
    root.dataset.drawn = String(model.get("drawn"));
  };
  model.on("change:drawn", update);
  update();
  return () => {
    model.off("change:drawn", update);
    controls.stop();
    if (sizes) sizes.disconnect();
    if (settleFrame) cancelAnimationFrame(settleFrame);
    if (watch) watch.dispose();
    forward.dispose();
    gradient.dispose();
    root.remove();
  };
}
