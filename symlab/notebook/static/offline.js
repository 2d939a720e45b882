// symlab views, offline: runs the views' stepper (views/stepper.js) on the steps a RewriteStepper.export_html page
// carries. (Appended to the views' script, widget.views_script(), inside one module script of that page; no kernel,
// no network, works from file://.)
//
// The data is gzip-compressed JSON in base64 (symlab/notebook/stepper_export.py): each distinct picture is
// stored once, unmarked, and a pane is [picture index, {key: mark}]; the marks are painted here exactly as the
// kernel paints them (step_pictures.paint_svg), the rule sources are stored once per rule.
{
  const host = document.getElementById("symlab-stepper");
  const say = (text) => {
    const box = document.createElement("div");
    box.className = "sl-notice";
    box.setAttribute("role", "alert");
    box.textContent = text;
    host.replaceChildren(box);
  };

  const unpack = async () => {
    const packed = JSON.parse(document.getElementById("symlab-steps").textContent);
    if (packed.encoding !== "gzip+base64") throw new Error(`unknown encoding ${packed.encoding}`);
    if (typeof DecompressionStream === "undefined") {
      say("This page needs a browser that can unpack gzip data (DecompressionStream: Chrome or Edge 80+, "
        + "Firefox 113+, Safari 16.4+). Open it in one of those; it needs no network.");
      return null;
    }
    const binary = atob(packed.data);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  };

  // The stroke Graphviz writes for a mark (CLASS_STYLES of symlab.printing.diagram, carried in the data).
  const stroke = (look, dashed) => {
    let text = ` stroke="${look.color}"`;
    if (look.penwidth) text += ` stroke-width="${look.penwidth}"`;
    if (dashed || (look.style || "").includes("dashed")) text += ' stroke-dasharray="5,2"';
    return text;
  };
  const paint = (svg, marks, looks) => {
    for (const [key, cls] of Object.entries(marks || {})) {
      const look = looks[cls];
      const opening = `<g id="${key}" class="node `;
      const start = svg.indexOf(opening);
      if (!look || start < 0) continue;
      const from = start + opening.length;
      const classEnd = svg.indexOf('"', from);
      const [kind, ...others] = svg.slice(from, classEnd).split(/\s+/).filter(Boolean);
      if (others.includes(cls)) continue;
      svg = svg.slice(0, from) + [kind, ...[...others, cls].sort()].join(" ") + svg.slice(classEnd);
      const end = svg.indexOf("</g>", start);
      const shapeRe = /<(polygon|ellipse|path|polyline)\b[^>]*>/g;
      shapeRe.lastIndex = start;
      const found = shapeRe.exec(svg);
      if (!found || (end >= 0 && found.index > end)) continue;
      const element = found[0];
      const dashed = element.includes('stroke-dasharray="');
      const plain = element.replace(/ stroke-(?:width|dasharray)="[^"]*"/g, "");
      const painted = plain.replace(/ stroke="[^"]*"/, stroke(look, dashed));
      svg = svg.slice(0, found.index) + painted + svg.slice(found.index + element.length);
    }
    return svg;
  };

  const run = (data) => {
    const listeners = new Set();
    const state = {
      step: 0, compare: false, full: false, drawn: 0, notice: "", steps: data.steps, total: data.total,
      diff: [], reveal_before: [], reveal_after: [],
    };
    const picture = ([index, marks]) => (index < 0 ? "" : paint(data.svgs[index], marks, data.looks));
    const show = () => {
      const here = data.states[state.step];
      const panes = state.compare ? data.compare : here;
      Object.assign(state, {
        before_svg: picture(panes.before), after_svg: picture(panes.after),
        before_title: panes.before_title, after_title: panes.after_title,
        // the rule's source travels with the page (stored once per rule): shown at once, no kernel to ask
        card: here.card.location ? { ...here.card, source: data.sources[here.card.location] } : { ...here.card },
        diff: state.compare ? [] : here.diff,
        reveal_before: state.compare ? [] : here.reveal_before,
        reveal_after: state.compare ? [] : here.reveal_after,
      });
      state.drawn += 1;
      for (const listener of listeners) listener();
    };
    const answer = () => {
      state.drawn += 1;
      for (const listener of listeners) listener();
    };
    const goto = (k) => {
      if (Number.isInteger(k) && k >= 0 && k <= data.total) state.step = k;
    };
    const findRule = (backward) => {
      const rule = state.step ? data.steps[state.step - 1][2] : null;
      if (!rule) return;
      const order = backward ? [...Array(state.step - 1).keys()].reverse() : [...Array(data.total).keys()].slice(state.step);
      const found = order.find((i) => data.steps[i][2] === rule);
      if (found !== undefined) goto(found + 1);
    };
    const offline = "(needs a kernel: this page was exported without one)";
    const model = {
      get: (name) => state[name],
      on: (event, listener) => { if (event === "change:drawn") listeners.add(listener); }, // no kernel: no other events
      off: (event, listener) => listeners.delete(listener),
      send(message) {
        const moves = { first: 0, prev: state.step - 1, next: state.step + 1, last: data.total };
        if (message.type === "move" && message.direction in moves) goto(moves[message.direction]);
        else if (message.type === "goto") goto(message.step);
        else if (message.type === "rule") findRule(Boolean(message.backward));
        else if (message.type === "compare") state.compare = Boolean(message.compare);
        else if (message.type === "check") {
          state.card = { ...state.card, check: `check ${offline}` };
          answer();
          return;
        } else if (message.type === "why") {
          state.card = { ...state.card, why: { node: offline, rows: [] } };
          answer();
          return;
        } else if (message.type === "source") {
          state.card = { ...state.card, source: data.sources[state.card.location] || "(no source stored)" };
          answer();
          return;
        }
        show();
      },
    };
    show();
    renderStepper({ model, el: host });
  };

  unpack().then((data) => { if (data) run(data); })
    .catch((err) => say(`This page's steps could not be read: ${err}`));
}
