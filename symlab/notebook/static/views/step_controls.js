// views/step_controls.js: a stepper's controls: first, previous, the slider, next, last, where it is, play and its
// speed, and the keys that move it.

// -- a stepper's controls ------------------------------------------------------------------------------------
const STEP_SPEEDS = [["0.5 s a step", 500], ["1 s a step", 1000], ["2 s a step", 2000]];

// The controls of a stepper (a model with "step" and "total"), for the view to place: each sends a "move" or a "goto"
// message with `send`, and so do → ←, Home and End on `root` (outside the text boxes, selects and the slider). Play
// sends "next" at the chosen speed until the last step (from the last step it starts again at the first);
// `root.dataset.playing` says whether it plays. Neither the keys nor the slider's own keys reach JupyterLab (its
// notebook shortcuts would move cells). `titles`: the tooltips of the first, last and play buttons. `show(step,
// total)` puts the slider and the position at the step, `stop()` stops playing.
function stepControls(root, send, model, titles) {
  const slider = el("input", "sl-slider");
  slider.type = "range";
  slider.min = "0";
  slider.setAttribute("aria-label", "step");
  slider.addEventListener("input", () => send({ type: "goto", step: Number(slider.value) }));
  slider.addEventListener("keydown", (event) => {
    if (/^(Arrow|Page|Home$|End$)/.test(event.key)) event.stopPropagation();
  });
  const position = el("span", "sl-position");
  const speed = el("select", "sl-select");
  speed.setAttribute("aria-label", "playing speed");
  for (const [text, ms] of STEP_SPEEDS) {
    const option = el("option", "", text);
    option.value = String(ms);
    speed.append(option);
  }
  speed.value = "1000";
  let player = null;
  const stop = () => {
    if (player !== null) clearInterval(player);
    player = null;
    play.textContent = "play";
    root.dataset.playing = "0";
  };
  const play = button("play", titles.play, () => {
    if (player !== null) {
      stop();
      return;
    }
    if (model.get("step") >= model.get("total")) send({ type: "move", direction: "first" });
    play.textContent = "pause";
    root.dataset.playing = "1";
    player = setInterval(() => {
      if (model.get("step") >= model.get("total")) stop();
      else send({ type: "move", direction: "next" });
    }, Number(speed.value));
  });
  const move = (direction) => () => send({ type: "move", direction });
  const keys = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last" };
  root.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea") || !keys[event.key]) return;
    event.preventDefault();
    event.stopPropagation();
    send({ type: "move", direction: keys[event.key] });
  });
  return {
    first: iconButton("first", titles.first, move("first")),
    prev: button("◀", "previous step (←)", move("prev")),
    slider,
    next: button("▶", "next step (→)", move("next")),
    last: iconButton("last", titles.last, move("last")),
    position,
    play,
    speed,
    show(step, total) {
      slider.max = String(total);
      slider.value = String(step);
      position.textContent = `step ${step} / ${total}`;
    },
    stop,
  };
}
