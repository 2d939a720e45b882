// symlab views, offline: runs the grad stepper (views/grad_stepper.js) on the steps a GradStepper.export_html page
// carries. (The page's own part: after the views' script, widget.views_script(), and the offline pages' shared part,
// offline_page.js, inside one module script of that page; no kernel, no network, works from file://.)
//
// The data (symlab/notebook/grad_stepper_export.py): the two pictures once, unmarked; each step its marks, its
// "grad" lines, its card and the keys to bring into view; each rule's source once.
runOfflinePage("symlab-gradwalk", "symlab-gradwalk-steps", (data, host) => {
  const state = {
    step: 0, total: data.total, steps: data.steps, drawn: 0, notice: data.notice || "",
    forward_svg: data.forward_svg, gradient_svg: data.gradient_svg, with_values: data.with_values,
    forward_title: data.forward_title, gradient_title: data.gradient_title, compiled: null,
  };
  const show = () => { // (called once the model below is made)
    const here = data.states[state.step];
    Object.assign(state, {
      marks: here.marks, labels: here.labels, card: { ...here.card },
      reveal_forward: here.reveal_forward, reveal_gradient: here.reveal_gradient,
    });
    model.answer();
  };
  const model = offlineModel(state, (message) => {
    if (message.type === "source") {
      const index = state.card.source_index;
      state.card = { ...state.card, source: index === undefined ? "(no source stored)" : data.sources[index] };
      model.answer();
      return;
    }
    offlineMove(state, message);
    show();
  });
  show();
  renderGradStepper({ model, el: host });
});
