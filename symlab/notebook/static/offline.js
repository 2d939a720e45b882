// symlab views, offline: runs the views' stepper (views/stepper.js) on the steps a RewriteStepper.export_html page
// carries. (The page's own part: after the views' script, widget.views_script(), and the offline pages' shared part,
// offline_page.js, inside one module script of that page; no kernel, no network, works from file://.)
//
// The data (symlab/notebook/stepper_export.py): each distinct picture is stored once, unmarked, and a pane is
// [picture index, {key: mark}]; the marks are painted here exactly as the kernel paints them
// (step_pictures.paint_svg), the rule sources are stored once per rule.
runOfflinePage("symlab-stepper", "symlab-steps", (data, host) => {
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

  const state = {
    step: 0, compare: false, full: false, drawn: 0, notice: "", steps: data.steps, total: data.total,
    diff: [], reveal_before: [], reveal_after: [],
  };
  const picture = ([index, marks]) => (index < 0 ? "" : paint(data.svgs[index], marks, data.looks));
  const show = () => { // (called once the model below is made)
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
    model.answer();
  };
  const findRule = (backward) => {
    const rule = state.step ? data.steps[state.step - 1][2] : null;
    if (!rule) return;
    const order = backward ? [...Array(state.step - 1).keys()].reverse() : [...Array(data.total).keys()].slice(state.step);
    const found = order.find((i) => data.steps[i][2] === rule);
    if (found !== undefined) state.step = found + 1;
  };
  const offline = "(needs a kernel: this page was exported without one)";
  const model = offlineModel(state, (message) => {
    if (message.type === "rule") findRule(Boolean(message.backward));
    else if (message.type === "compare") state.compare = Boolean(message.compare);
    else if (message.type === "check") {
      state.card = { ...state.card, check: `check ${offline}` };
      model.answer();
      return;
    } else if (message.type === "why") {
      state.card = { ...state.card, why: { node: offline, rows: [] } };
      model.answer();
      return;
    } else if (message.type === "source") {
      state.card = { ...state.card, source: data.sources[state.card.location] || "(no source stored)" };
      model.answer();
      return;
    } else offlineMove(state, message);
    show();
  });
  show();
  renderStepper({ model, el: host });
});
