// symlab views, offline: the part every exported page shares (symlab/notebook/offline_page.py): its data unpacked,
// and a view's model with no kernel behind it. (After the views' script, before the page's own part, in one module
// script of that page; no kernel, no network, works from file://.)

// Unpack the data of the element `dataId` (gzip-compressed JSON in base64) and call `run(data, host)`, `host` being
// the element `hostId`; where that cannot be done, say why in `host`.
function runOfflinePage(hostId, dataId, run) {
  const host = document.getElementById(hostId);
  const say = (text) => {
    const box = document.createElement("div");
    box.className = "sl-notice";
    box.setAttribute("role", "alert");
    box.textContent = text;
    host.replaceChildren(box);
  };
  const unpack = async () => {
    const packed = JSON.parse(document.getElementById(dataId).textContent);
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
  unpack().then((data) => { if (data) run(data, host); })
    .catch((err) => say(`This page's steps could not be read: ${err}`));
}

// A view's model with no kernel behind it: its traits are `state`'s, "change:drawn" its one event (no kernel: no
// other), `send(message)` calls `onMessage(message)`, and `answer()` counts an answer and redraws the view, as an
// answer of the kernel does.
function offlineModel(state, onMessage) {
  const listeners = new Set();
  return {
    offline: true,
    get: (name) => state[name],
    on: (event, listener) => { if (event === "change:drawn") listeners.add(listener); },
    off: (event, listener) => listeners.delete(listener),
    send: (message) => onMessage(message),
    answer() {
      state.drawn += 1;
      for (const listener of listeners) listener();
    },
  };
}

// A "move" or "goto" message answered as the kernel answers it: `state.step` becomes the step it asks for when that
// is one from 0 to `state.total` (anything else is ignored).
function offlineMove(state, message) {
  const moves = { first: 0, prev: state.step - 1, next: state.step + 1, last: state.total };
  let k;
  if (message.type === "move" && message.direction in moves) k = moves[message.direction];
  else if (message.type === "goto") k = message.step;
  if (Number.isInteger(k) && k >= 0 && k <= state.total) state.step = k;
}
