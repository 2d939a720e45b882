// views/stepper.js: the rewrite stepper: two panes, the rule card, the steps, the text diff.

// -- the rewrite stepper -------------------------------------------------------------------------------------
// The step as a text diff of its neighbourhood: one line per node, "-" before only, "+" after only (DOM text only).
// A click on a line (or Enter on it) asks why the rules tried on its node did or did not apply.
function renderStepDiff(container, rows, onPick) {
  container.replaceChildren();
  container.hidden = !rows.length;
  if (!rows.length) return;
  const title = el("div", "sl-pane-title", "the step as text (- before only, + after only)");
  const lines = el("div", "sl-diff-lines");
  lines.setAttribute("role", "list");
  for (const row of rows) {
    const kind = row.sign === "+" ? "add" : row.sign === "-" ? "del" : "same";
    const line = el("div", `sl-diff-line sl-diff-${kind}`, `${row.sign === " " ? "\u00a0" : row.sign} ${row.text}`);
    line.setAttribute("role", "listitem");
    if (row.key) {
      line.dataset.key = row.key;
      line.tabIndex = 0;
      line.title = `${row.key}: click to see which rules were tried on it`;
      line.addEventListener("click", () => onPick(row.key));
      line.addEventListener("keydown", (event) => {
        if (event.key !== "Enter") return;
        event.preventDefault();
        event.stopPropagation();
        onPick(row.key);
      });
    }
    lines.append(line);
  }
  container.append(title, lines);
}

// The "why not" answer of the stepper's card: the rules tried on the clicked node and what came of each; for a
// node with an inner graph, buttons that open it in place (or close it) and step into its own rewrite.
function renderStepperWhy(card, why, send) {
  if (!why) {
    card.append(el("div", "sl-hint", "click a node in either picture: which rules were tried on it, and why not"));
    return;
  }
  const box = el("div", "sl-why");
  const inner = why.inner;
  if (inner && send) {
    const actions = el("div", "sl-inner-actions");
    actions.append(inner.open
      ? button("close its inner graph", "draw this node closed again", () => send({ type: "collapse", key: inner.key }))
      : button("open its inner graph here", "draw this node's inner graph inside its box, at every step",
        () => send({ type: "expand", key: inner.key })));
    if (inner.into) {
      actions.append(button("step into its rewrites", "step through the rewrite of this node's inner graph (back: ◀)",
        () => send({ type: "step_into", key: inner.key })));
    }
    box.append(actions);
  }
  box.append(el("div", "sl-details-title", `rules tried on ${why.node}`));
  const table = el("table", "sl-details-table");
  for (const row of why.rows) {
    const tr = el("tr");
    const steps = row.steps.length ? ` (step ${row.steps.join(", ")})` : "";
    tr.append(el("th", "", row.rule || "-"), el("td", `sl-status-${row.outcome}`, `${row.outcome}${steps}`),
              el("td", "", row.reason));
    table.append(tr);
  }
  box.append(table);
  card.append(box);
}

function renderStepper({ model, el: host }) {
  const root = el("div", "sl-view sl-stepper");
  root.tabIndex = 0;
  root.setAttribute("aria-label", "rewrite stepper: left and right arrow keys move between steps");
  const watch = kernelWatch(model, host, root);
  const send = (message) => watch.send(message);
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const controls = stepControls(root, send, model, {
    first: "first step (the unoptimized graph)", last: "last step (the optimized graph)",
    play: "play the steps at the chosen speed (again: pause)",
  });
  const [compareBox, compareLabel] = checkbox("unoptimized | optimized", (on) => send({ type: "compare", compare: on }));
  const [fullBox, fullLabel] = checkbox("whole graph", (on) => send({ type: "full", full: on }),
    "large graphs are drawn around each step's change; tick to draw all of it (folded)");
  toolbar.append(
    controls.first,
    controls.prev,
    controls.slider,
    controls.next,
    controls.last,
    controls.position,
    button("◀ rule", "previous use of this step's rule", () => send({ type: "rule", backward: true })),
    button("rule ▶", "next use of this step's rule", () => send({ type: "rule", backward: false })),
    controls.play,
    controls.speed,
    compareLabel,
    fullLabel,
  );
  const notice = el("div", "sl-notice");
  // Where the steps shown are: the graph, or inside a node (a stepper stepped into), with the way back.
  const nestBar = el("div", "sl-nest");
  const nestPath = el("span", "sl-nest-path");
  nestBar.append(button("◀ back", "back to the rewrite this one is inside", () => send({ type: "step_out" })), nestPath);
  const panes = el("div", "sl-panes");
  // Clicking a node of either pane asks why the rules tried on it did or did not apply; a node's inner-graph
  // button (kind "expand" or "collapse") opens or closes it in both panes.
  const pick = (key, kind) => send(kind === "expand" || kind === "collapse" ? { type: kind, key } : { type: "why", key });
  const before = new Picture(model, pick);
  const after = new Picture(model, pick);
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
  const diffBox = el("div", "sl-diff");
  diffBox.setAttribute("aria-label", "the step as a text diff");
  root.append(nestBar, toolbar, notice, panes, diffBox, lower);
  host.append(root);

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
      renderStepperWhy(card, data.why, send); // why-not answers at step 0 too
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
    renderStepperWhy(card, data.why, send);
  };

  let shown = { steps: null };
  const update = () => {
    if (model.get("steps") !== shown.steps) {
      buildList();
      applyFilter();
      shown.steps = model.get("steps");
    }
    const step = model.get("step");
    controls.show(step, model.get("total"));
    compareBox.checked = model.get("compare");
    fullBox.checked = model.get("full");
    const animate = !model.get("compare");
    before.update(model.get("before_svg"), animate);
    after.update(model.get("after_svg"), animate);
    beforeBox.hidden = !model.get("before_title");
    beforeTitle.textContent = model.get("before_title");
    afterTitle.textContent = model.get("after_title");
    renderCard(model.get("card") || {});
    renderStepDiff(diffBox, model.get("diff") || [], (key) => send({ type: "why", key }));
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    for (const li of rows) li.classList.toggle("sl-current", Number(li.dataset.step) === step);
    const current = rows[step - 1];
    // The current row in view inside the list only: scrollIntoView would also scroll the notebook, and the
    // pictures of the step (above the list) would leave the screen.
    if (current) {
      const top = current.getBoundingClientRect().top - list.getBoundingClientRect().top + list.scrollTop;
      if (top < list.scrollTop) list.scrollTop = top;
      else if (top + current.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = top + current.offsetHeight - list.clientHeight;
      }
    }
    const nest = model.get("nest") || [];
    nestBar.hidden = nest.length < 2;
    nestPath.textContent = nest.map((level) => level.title).join(" › ");
    root.dataset.depth = String(Math.max(0, nest.length - 1));
    root.dataset.open = (model.get("open_keys") || []).join(" ");
    root.dataset.step = String(step);
    root.dataset.drawn = String(model.get("drawn"));
    // The step's change in view: what it removed in "before", what it created in "after" (when Python says).
    before.reveal(model.get("reveal_before") || []);
    after.reveal(model.get("reveal_after") || []);
  };
  model.on("change:drawn", update);
  update();
  return () => {
    model.off("change:drawn", update);
    controls.stop();
    watch.dispose();
    before.dispose();
    after.dispose();
    root.remove(); // something outside may keep the host element: it must not keep the drawings
  };
}
