// views/values.js: the values view: values on the picture, sliders and number boxes for inputs.

// -- the values view -----------------------------------------------------------------------------------------
// Every variable's value (and gradient) is written on the picture by Python; scalar inputs get a slider and a
// number box. A drag must not queue one re-evaluation per pixel: while a value waits for Python's answer, only
// the newest value asked for meanwhile is kept, and sent when the answer comes.
function renderValuesView({ model, el: host }) {
  const root = el("div", "sl-view sl-values-view");
  let waiting = false;
  // An answer that never comes (no kernel) must not freeze the sliders.
  const watch = kernelWatch(model, host, root, () => { waiting = false; });
  const send = (message) => watch.send(message);
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
  // A histogram of many draws of a random draw, when asked for: Python's SVG, parsed safely; its words as text.
  const histogram = el("div", "sl-histogram-panel");
  histogram.setAttribute("aria-live", "polite");
  let histogramShown = null;
  const showHistogram = (found) => {
    const stamp = JSON.stringify(found || {});
    if (stamp === histogramShown) return;
    histogramShown = stamp;
    histogram.replaceChildren();
    histogram.hidden = !(found && found.svg);
    if (histogram.hidden) return;
    histogram.dataset.key = found.key || "";
    const svg = parseSvg(found.svg);
    if (svg) histogram.append(svg);
    const words = el("pre", "sl-histogram-text", found.text || "");
    words.hidden = !!svg; // the picture when it parsed, else its text
    histogram.append(words);
  };

  const pick = (key, kind) => {
    if (kind === "expand" || kind === "collapse" || kind === "histogram") send({ type: kind, key });
    else send({ type: "select", key });
  };
  const picture = new Picture(model, (key, kind) => pick(key, kind)); // kind: a node's inner-graph button
  picture.scroller.setAttribute("aria-label", "graph picture with values: click a box to see its whole value and "
    + "gradient, + and - zoom, 0 shows it whole, drag to pan");
  toolbar.append(
    button("clear", "clear the selection (Escape)", () => pick("")),
  );
  const text = textPane(model, send, "the graph and its values");
  toolbar.append(text.toggle);
  picture.root.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      pick("");
    }
  });

  let queued = null;
  const sendValue = (key, value) => {
    if (waiting && !watch.lost) {
      queued = { key, value };
      return;
    }
    waiting = true;
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
      // The arrow keys move the slider; JupyterLab's notebook shortcuts must not take them (they would move cells).
      slider.addEventListener("keydown", (event) => {
        if (/^(Arrow|Page|Home$|End$)/.test(event.key)) event.stopPropagation();
      });
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

  body.append(picture.root, text.root, details);
  root.append(caption, nanNote, controls, toolbar, notice, body, histogram, legend);
  host.append(root);

  const update = () => {
    picture.update(model.get("svg"));
    picture.mark(model.get("marks"));
    renderDetails(details, model.get("panel"), pick);
    showHistogram(model.get("histogram_panel"));
    text.update();
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
    const reveal = model.get("reveal"); // the keys to bring into view (the selection), when Python says
    picture.reveal(Array.isArray(reveal) ? reveal : root.dataset.selected);
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
    model.off("change:drawn", update);
    watch.dispose();
    picture.dispose();
    text.dispose();
    root.remove(); // something outside may keep the host element: it must not keep the drawings
  };
}
