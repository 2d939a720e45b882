// symlab views, offline: runs the grad stepper (views/grad_stepper.js) on the steps a GradStepper.export_html page
// carries. (Appended to the views' script, widget.views_script(), inside one module script of that page; no kernel,
// no network, works from file://.)
//
// The data is gzip-compressed JSON in base64 (symlab/notebook/grad_stepper_export.py): the two pictures once,
// unmarked; each step its marks, its "grad" lines, its card and the keys to bring into view; each rule's source once.
{
  const host = document.getElementById("symlab-gradwalk");
  const say = (text) => {
    const box = document.createElement("div");
    box.className = "sl-notice";
    box.setAttribute("role", "alert");
    box.textContent = text;
    host.replaceChildren(box);
  };

  const unpack = async () => {
    const packed = JSON.parse(document.getElementById("symlab-gradwalk-steps").textContent);
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

  const run = (data) => {
    const listeners = new Set();
    const state = {
      step: 0, total: data.total, steps: data.steps, drawn: 0, notice: data.notice || "",
      forward_svg: data.forward_svg, gradient_svg: data.gradient_svg, with_values: data.with_values,
      forward_title: data.forward_title, gradient_title: data.gradient_title, compiled: null,
    };
    const show = () => {
      const here = data.states[state.step];
      Object.assign(state, {
        marks: here.marks, labels: here.labels, card: { ...here.card },
        reveal_forward: here.reveal_forward, reveal_gradient: here.reveal_gradient,
      });
      state.drawn += 1;
      for (const listener of listeners) listener();
    };
    const goto = (k) => {
      if (Number.isInteger(k) && k >= 0 && k <= data.total) state.step = k;
    };
    const model = {
      offline: true,
      get: (name) => state[name],
      on: (event, listener) => { if (event === "change:drawn") listeners.add(listener); },
      off: (event, listener) => listeners.delete(listener),
      send(message) {
        const moves = { first: 0, prev: state.step - 1, next: state.step + 1, last: data.total };
        if (message.type === "move" && message.direction in moves) goto(moves[message.direction]);
        else if (message.type === "goto") goto(message.step);
        else if (message.type === "source") {
          const index = state.card.source_index;
          state.card = { ...state.card, source: index === undefined ? "(no source stored)" : data.sources[index] };
          state.drawn += 1;
          for (const listener of listeners) listener();
          return;
        }
        show();
      },
    };
    show();
    renderGradStepper({ model, el: host });
  };

  unpack().then((data) => { if (data) run(data); })
    .catch((err) => say(`This page's steps could not be read: ${err}`));
}
