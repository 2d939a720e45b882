// views/graph_view.js: the graph view (and the clients inspector): the picture, the toolbar, the panel.

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

  const watch = kernelWatch(model, host, root);
  const send = (message) => watch.send(message);
  const pick = (key, kind) => {
    if (kind === "expand" || kind === "collapse") send({ type: kind, key });
    else send({ type: "select", key });
  };
  const picture = new Picture(model, (key, kind) => pick(key, kind)); // kind: a node's inner-graph button

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
  const finder = parts ? parts.finder : searchBox(send, pick, "find a node: name, op, type or key");
  const text = textPane(model, send, "the graph");
  toolbar.append(finder.input, text.toggle);
  toolbar.append(
    el("span", "sl-toolbar-label", "style"), styleSelect, focusLabel,
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
    }
  });

  const side = el("div", "sl-side");
  side.append(finder.matches, ...(parts ? [parts.changes] : []), details);
  body.append(picture.root, text.root, side);
  root.append(toolbar, notice, body, legend);
  host.append(root);

  const update = () => {
    picture.update(model.get("svg"));
    picture.mark(model.get("marks"));
    renderDetails(details, model.get("panel"), pick);
    if (!parts) finder.update(model);
    text.update();
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
    const reveal = model.get("reveal"); // the keys to bring into view (the selection), when Python says
    picture.reveal(Array.isArray(reveal) ? reveal : selected);
  };
  // Python answers an interaction with all of its traits in one message, then bumps "drawn": draw once.
  model.on("change:drawn", update);
  update();
  return () => {
    model.off("change:drawn", update);
    watch.dispose();
    picture.dispose();
    text.dispose();
    finder.dispose();
    root.remove(); // something outside may keep the host element: it must not keep the drawings
  };
}
