// symlab views, offline: runs views.js's stepper on the steps a RewriteStepper.export_html page carries.
// (Appended to views.js inside one module script of that page; no kernel, no network.)
{
  const data = JSON.parse(document.getElementById("symlab-steps").textContent);
  const listeners = new Set();
  const state = { step: 0, compare: false, full: false, drawn: 0, notice: "", steps: data.steps, total: data.total };
  const show = () => {
    const drawn = data.compare && state.compare
      ? { ...data.states[state.step], ...data.compare }
      : data.states[state.step];
    Object.assign(state, drawn);
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
    on: (event, listener) => listeners.add(listener),
    off: (event, listener) => listeners.delete(listener),
    send(message) {
      const moves = { first: 0, prev: state.step - 1, next: state.step + 1, last: data.total };
      if (message.type === "move" && message.direction in moves) goto(moves[message.direction]);
      else if (message.type === "goto") goto(message.step);
      else if (message.type === "rule") findRule(Boolean(message.backward));
      else if (message.type === "compare") state.compare = Boolean(message.compare);
      else if (message.type === "check") { show(); state.card = { ...state.card, check: `check ${offline}` }; }
      else if (message.type === "why") {
        show();
        state.card = { ...state.card, why: { node: offline, rows: [] } };
      }
      if (message.type !== "check" && message.type !== "why") show();
      else { state.drawn += 1; for (const listener of listeners) listener(); }
    },
  };
  show();
  renderStepper({ model, el: document.getElementById("symlab-stepper") });
}
