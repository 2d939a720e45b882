// views/main.js: the module's one export: which view a widget draws (its "view" trait).

const VIEWS = { graph: renderGraphView, inspector: renderGraphView, stepper: renderStepper, values: renderValuesView,
  gradwalk: renderGradStepper };

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
