// views/kernel.js: is the kernel still there? a view says so when its messages get no answer.

// -- is the kernel still there? ------------------------------------------------------------------------------
// After a kernel restart the widget's messages go nowhere. A view says so, keeping its last picture, when its
// kernel restarts or dies (the kernel's status, where the widget manager has a kernel), when ipywidgets marks
// its model disconnected (the "jupyter-widgets-disconnected" class it puts on a view's element: a notebook
// reopened from its saved widget state), or when a message sent to Python gets no answer (a new "drawn" or
// the "ack" every message gets) within ANSWER_MS while the kernel is not busy running a cell. An answer that
// comes late takes the notice away again.
const ANSWER_MS = 3000;
const LOST_TEXT = "this view lost its kernel (restarted or stopped): the picture is the last one drawn; "
  + "run the cell again to use it";

function kernelWatch(model, host, root, onLost) {
  const notice = el("div", "sl-lost", LOST_TEXT);
  notice.setAttribute("role", "alert");
  notice.hidden = true;
  root.prepend(notice);
  let timer = null;
  let lost = false;
  const disconnected = () => Boolean(host && host.closest && host.closest(".jupyter-widgets-disconnected"));
  let kernel = null;
  try {
    kernel = (model.widget_manager && model.widget_manager.kernel) || null;
  } catch (err) {
    kernel = null;
  }
  const busy = () => Boolean(kernel) && kernel.status === "busy"; // a cell running: messages wait their turn
  const setLost = (on) => {
    if (lost === on) return;
    lost = on;
    notice.hidden = !on;
    if (on) root.dataset.kernel = "lost";
    else delete root.dataset.kernel;
    if (on && onLost) onLost();
  };
  const expire = () => {
    timer = null;
    if (busy() && !disconnected()) timer = setTimeout(expire, ANSWER_MS);
    else setLost(true);
  };
  const answered = () => {
    clearTimeout(timer);
    timer = null;
    if (!disconnected()) setLost(false);
  };
  const onCustom = (content) => {
    if (content && content.type === "ack") answered();
  };
  const onComm = () => {
    if (disconnected()) setLost(true);
  };
  const onStatus = (sender, status) => {
    if (status === "restarting" || status === "autorestarting" || status === "dead") setLost(true);
  };
  const signal = kernel && kernel.statusChanged && typeof kernel.statusChanged.connect === "function"
    ? kernel.statusChanged : null;
  if (signal) signal.connect(onStatus);
  model.on("change:drawn", answered);
  model.on("msg:custom", onCustom);
  model.on("comm_live_update", onComm);
  onComm();
  return {
    send(message) {
      if (timer === null) timer = setTimeout(expire, ANSWER_MS);
      try {
        model.send(message);
      } catch (err) {
        clearTimeout(timer);
        timer = null;
        setLost(true);
      }
    },
    get lost() {
      return lost;
    },
    dispose() {
      clearTimeout(timer);
      timer = null;
      model.off("change:drawn", answered);
      model.off("msg:custom", onCustom);
      model.off("comm_live_update", onComm);
      if (signal) signal.disconnect(onStatus);
    },
  };
}
