// symlab views: the browser half of symlab.notebook's widgets (anywidget ESM, shipped with the package).
//
// Python draws the pictures (SVG made by Graphviz from the view model) and decides everything; this
// script shows them and reports clicks and keys. Safety: the SVG is parsed with DOMParser, never
// innerHTML; <script>, <foreignObject>, on* and *href attributes are dropped; every text outside the
// SVG is set with textContent. Graphviz ids are moved to data-key (ids are global in a page).

const SVG_NS = "http://www.w3.org/2000/svg";
const DROP_ELEMENTS = new Set(["script", "foreignobject", "iframe", "object", "embed", "style"]);

function sanitize(node) {
  for (const child of Array.from(node.children)) {
    const name = child.localName.toLowerCase();
    if (DROP_ELEMENTS.has(name)) {
      child.remove();
      continue;
    }
    if (name === "a") {
      // Graphviz wraps shapes with a tooltip in <a xlink:title=...>: keep the shapes and the tooltip as a
      // <title>, drop the link.
      const tip = child.getAttribute("xlink:title") || child.getAttribute("title");
      const parent = child.parentNode;
      if (tip && !Array.from(parent.children).some((c) => c.localName === "title")) {
        const title = document.createElementNS(SVG_NS, "title");
        title.textContent = tip;
        parent.insertBefore(title, child);
      }
      while (child.firstChild) parent.insertBefore(child.firstChild, child);
      child.remove();
      continue;
    }
    sanitize(child);
  }
  for (const attr of Array.from(node.attributes || [])) {
    const name = attr.name.toLowerCase();
    if (name.startsWith("on") || name === "href" || name.endsWith(":href") || name === "src") {
      node.removeAttribute(attr.name);
    }
  }
}

export function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.localName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  sanitize(root);
  for (const g of root.querySelectorAll("g.node, g.edge, g.cluster")) {
    if (g.id) {
      g.dataset.key = g.id;
      g.removeAttribute("id");
    }
  }
  for (const el of root.querySelectorAll("[id]")) el.removeAttribute("id");
  // Over each arrow an invisible wide stroke (views.css: path.sl-hit) that takes its clicks.
  for (const path of root.querySelectorAll("g.edge[data-key] path")) {
    const hit = path.cloneNode(false);
    hit.setAttribute("class", "sl-hit");
    path.after(hit);
  }
  const svg = document.importNode(root, true);
  // Graphviz's own size in pt, never wider than the output area.
  svg.classList.add("sl-svg");
  return svg;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// A labelled checkbox (keyboard-reachable); returns [box, label], the label to place, the box to read.
function checkbox(text, onChange, title) {
  const box = el("input");
  box.type = "checkbox";
  box.id = `sl-box-${Math.random().toString(36).slice(2)}`;
  const label = el("label", "sl-check", ` ${text}`);
  label.htmlFor = box.id;
  if (title) label.title = title;
  label.prepend(box);
  box.addEventListener("change", () => onChange(box.checked));
  return [box, label];
}

function button(label, title, onClick) {
  const b = el("button", "sl-button", label);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  b.addEventListener("click", onClick);
  return b;
}

// A small icon drawn with SVG shapes (no font has to carry a glyph for it): "first" |◀ and "last" ▶|.
const ICONS = {
  first: [["rect", { x: "1", y: "1", width: "2", height: "10" }], ["polygon", { points: "11,1 11,11 4,6" }]],
  last: [["polygon", { points: "1,1 1,11 8,6" }], ["rect", { x: "9", y: "1", width: "2", height: "10" }]],
};

function icon(name) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 12 12");
  svg.setAttribute("class", "sl-icon");
  svg.setAttribute("aria-hidden", "true");
  for (const [tag, attrs] of ICONS[name]) {
    const shape = document.createElementNS(SVG_NS, tag);
    for (const [attr, value] of Object.entries(attrs)) shape.setAttribute(attr, value);
    svg.append(shape);
  }
  return svg;
}

function iconButton(name, title, onClick) {
  const b = button("", title, onClick);
  b.classList.add("sl-icon-button");
  b.append(icon(name));
  return b;
}

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

// -- the picture: fit, zoom, pan, minimap, click, highlight --------------------------------------------------
// Scales are CSS px per pt of Graphviz's drawing (its width/height attributes are in pt; 1 pt = 4/3 px is
// Graphviz's own size). By default ("auto") a picture fits its pane's width, but never shrinks its node labels
// below LEGIBLE_PX (nor grows beyond its own size): a picture too large for that is shown in part, scrolled to
// what matters (the selection, the keys to reveal, else the outputs), with a line saying what is off screen
// and a minimap. "fit" shows it whole however small; +/- zoom by ZOOM_STEP from the scale shown.
const PX_PER_PT = 4 / 3;
const LEGIBLE_PX = 9;
const ZOOM_STEP = 1.25;
const MAX_ZOOM = 4; // times Graphviz's own size
const DRAG_PX = 4; // a press that moves less is a click
const MINIMAP_PX = [180, 130]; // the minimap's largest width and height
const MINIMAP_PANE = 0.35; // nor more than this share of the pane's width and height
const MINIMAP_BELOW = 0.75; // a minimap when less than this share of the picture is in view

// Run `work` when the browser is idle (after the frame being made is painted); returns what cancels it.
function whenIdle(work) {
  if (typeof requestIdleCallback === "function") {
    const id = requestIdleCallback(work, { timeout: 400 });
    return () => cancelIdleCallback(id);
  }
  const id = setTimeout(work, 30);
  return () => clearTimeout(id);
}

// Set a text only when it changes (a write makes the browser lay the page out again).
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

// The width of a classic scroll bar (0 where they overlay the content), measured once.
let scrollbarPx = null;
function scrollbarWidth() {
  if (scrollbarPx === null) {
    const probe = el("div");
    probe.style.cssText = "position:absolute;top:-999px;left:-999px;width:100px;height:100px;overflow:scroll;";
    document.body.append(probe);
    scrollbarPx = probe.offsetWidth - probe.clientWidth;
    probe.remove();
  }
  return scrollbarPx;
}

// The drawing's size in pt and the size in pt of its node labels' font (the median of the first 64 labels).
function drawingSize(svg) {
  const box = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
  const viewW = box.length === 4 && box[2] > 0 ? box[2] : null;
  const viewH = box.length === 4 && box[3] > 0 ? box[3] : null;
  const width = parseFloat(svg.getAttribute("width")) || viewW || 0;
  const height = parseFloat(svg.getAttribute("height")) || viewH || 0;
  // Graphviz scales a drawing made smaller than its layout (the "size" attribute) with a transform.
  const graph = svg.querySelector("g.graph");
  const scaled = /scale\(\s*([0-9.eE+-]+)/.exec((graph && graph.getAttribute("transform")) || "");
  const unit = (viewW ? width / viewW : 1) * (scaled ? Number(scaled[1]) || 1 : 1);
  const sizes = [];
  for (const text of svg.querySelectorAll("g.node text[font-size]")) {
    sizes.push(parseFloat(text.getAttribute("font-size")));
    if (sizes.length >= 64) break;
  }
  const sorted = sizes.filter((s) => s > 0).sort((a, b) => a - b);
  const font = sorted.length ? sorted[Math.floor(sorted.length / 2)] : 14; // Graphviz's default
  return { width, height, fontPt: font * unit };
}

// A picture of a view: `root` (.sl-picture-frame) is what a view places; inside it the scrolling pane
// `scroller` (.sl-picture, holding the drawn <svg>), the minimap and the status line. `update(svgText)` shows a
// drawing, `mark(classes)` paints Python's marks, `reveal(keys)` brings keys into view, `dispose()` stops it.
class Picture {
  constructor(model, onPick) {
    this.model = model;
    this.onPick = onPick;
    this.svg = null;
    this.scale = 1;
    this.mode = "auto"; // "auto" | "fit" | "user" (a scale the user chose, kept for the next pictures)
    this.shownText = null; // the SVG text shown (see update)
    this.revealKeys = [];
    this.pendingReveal = null; // keys to bring into view once the picture has a size
    this.frame = 0; // a requestAnimationFrame pending
    this.laidWidth = 0;
    this.dragged = false;

    this.root = el("div", "sl-picture-frame");
    this.stage = el("div", "sl-picture-stage");
    this.scroller = el("div", "sl-picture");
    this.scroller.tabIndex = 0;
    this.scroller.setAttribute("role", "img");
    this.scroller.setAttribute("aria-label", "graph picture: click a node to select it, arrow keys move along edges, "
      + "+ and - zoom, 0 shows it whole, drag to pan");
    this.minimap = el("div", "sl-minimap");
    this.minimap.hidden = true;
    this.minimap.setAttribute("aria-hidden", "true");
    this.viewBox = el("div", "sl-minimap-view");
    this.stage.append(this.scroller, this.minimap);
    this.status = el("div", "sl-picture-status");
    this.zoomLabel = el("span", "sl-zoom-level");
    this.offScreen = el("span", "sl-off-screen");
    this.offScreen.setAttribute("aria-live", "polite");
    const zoomButton = (label, title, zoom, action) => {
      const b = button(label, title, action);
      b.classList.add("sl-zoom");
      b.dataset.zoom = zoom;
      return b;
    };
    this.status.append(
      zoomButton("−", "zoom out (-)", "out", () => this.zoom(1 / ZOOM_STEP)),
      zoomButton("+", "zoom in (+)", "in", () => this.zoom(ZOOM_STEP)),
      zoomButton("fit", "show the whole picture (0)", "fit", () => this.fit()),
      this.zoomLabel, this.offScreen,
    );
    this.root.append(this.stage, this.status);

    this.scroller.addEventListener("click", (event) => {
      if (this.dragged) { // the end of a drag, not a click
        this.dragged = false;
        return;
      }
      const g = event.target.closest("g.node, g.edge");
      if (g && this.scroller.contains(g) && g.dataset.key) onPick(g.dataset.key);
    });
    this.scroller.addEventListener("wheel", (event) => {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      this.zoom(event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, event);
    }, { passive: false });
    this.scroller.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === "+" || event.key === "=") this.zoom(ZOOM_STEP);
      else if (event.key === "-" || event.key === "_") this.zoom(1 / ZOOM_STEP);
      else if (event.key === "0") this.fit();
      else return;
      event.preventDefault();
    });
    this.scroller.addEventListener("scroll", () => this.schedule());
    this.listenDrag();
    this.listenMinimap();
    // The pane's width decides the scale: follow it (the output area, the window, a side panel opening).
    this.resizer = typeof ResizeObserver === "function" ? new ResizeObserver(() => this.resized()) : null;
    if (this.resizer) this.resizer.observe(this.scroller);
  }

  // Drag to pan: the pointer is captured by the picture once it moves (never a window listener), so the drag
  // ends wherever the button is released; a press that does not move stays a click (it selects).
  listenDrag() {
    let drag = null;
    const scroller = this.scroller;
    scroller.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || event.pointerType === "touch") return; // touch scrolls natively
      drag = { id: event.pointerId, x: event.clientX, y: event.clientY, left: scroller.scrollLeft,
        top: scroller.scrollTop, moving: false };
      this.dragged = false;
    });
    scroller.addEventListener("pointermove", (event) => {
      if (!drag || event.pointerId !== drag.id) return;
      if (!(event.buttons & 1)) { // released where the picture could not see it
        drag = null;
        return;
      }
      const dx = event.clientX - drag.x;
      const dy = event.clientY - drag.y;
      if (!drag.moving) {
        if (Math.abs(dx) + Math.abs(dy) < DRAG_PX) return;
        drag.moving = true;
        scroller.setPointerCapture(event.pointerId);
        scroller.classList.add("sl-dragging");
      }
      event.preventDefault();
      scroller.scrollLeft = drag.left - dx;
      scroller.scrollTop = drag.top - dy;
    });
    const end = (event) => {
      if (!drag || event.pointerId !== drag.id) return;
      if (drag.moving) {
        this.dragged = event.type === "pointerup"; // swallow the click that ends the drag
        if (scroller.hasPointerCapture(event.pointerId)) scroller.releasePointerCapture(event.pointerId);
        scroller.classList.remove("sl-dragging");
      }
      drag = null;
    };
    scroller.addEventListener("pointerup", end);
    scroller.addEventListener("pointercancel", end);
    scroller.addEventListener("lostpointercapture", end);
  }

  // Press or drag on the minimap: the view centres on that point.
  listenMinimap() {
    const map = this.minimap;
    const go = (event) => {
      const box = map.getBoundingClientRect();
      if (!box.width || !box.height) return;
      const fx = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
      const fy = Math.min(1, Math.max(0, (event.clientY - box.top) / box.height));
      const s = this.scroller;
      s.scrollLeft = fx * s.scrollWidth - s.clientWidth / 2;
      s.scrollTop = fy * s.scrollHeight - s.clientHeight / 2;
    };
    map.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      map.setPointerCapture(event.pointerId);
      go(event);
    });
    map.addEventListener("pointermove", (event) => {
      if (map.hasPointerCapture(event.pointerId)) go(event);
    });
    map.addEventListener("pointerup", (event) => {
      if (map.hasPointerCapture(event.pointerId)) map.releasePointerCapture(event.pointerId);
    });
  }

  centres() {
    const found = new Map();
    if (!this.svg) return found;
    for (const g of this.svg.querySelectorAll("g.node[data-key]")) {
      const box = g.getBBox();
      found.set(g.dataset.key, [box.x + box.width / 2, box.y + box.height / 2]);
    }
    return found;
  }

  // With animate, nodes that keep their key move from where they were to where they are now (Web
  // Animations; nothing moves under prefers-reduced-motion).
  show(svgText, animate = false) {
    const reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    const old = animate && !reduced ? this.centres() : null;
    const svg = parseSvg(svgText);
    const first = !this.svg;
    const keep = { left: this.scroller.scrollLeft, top: this.scroller.scrollTop };
    this.stopAnimations();
    this.scroller.replaceChildren();
    this.svg = svg;
    this.minimapFor = null;
    if (!svg) {
      this.scroller.append(el("div", "sl-empty", "(no picture: Graphviz is not installed, or the graph is empty)"));
      this.minimap.hidden = true;
      this.schedule();
      return;
    }
    const size = drawingSize(svg);
    this.width = size.width;
    this.height = size.height;
    this.legible = size.fontPt > 0 ? LEGIBLE_PX / size.fontPt : 0;
    this.scroller.append(svg);
    if (this.mode === "user") this.applyScale(this.scale, null, false);
    else this.autoScale(false);
    // What to bring into view: the keys given (a selection, a step's change), else the outputs on a first
    // picture; a new picture of the same view keeps the place the user was looking at.
    if (!first) {
      this.scroller.scrollLeft = keep.left;
      this.scroller.scrollTop = keep.top;
    }
    this.pendingReveal = { keys: this.revealKeys, outputs: first };
    this.schedule(); // the reveal waits for the frame: a view sets its keys right after the picture
    if (old && old.size && svg.animate !== undefined) {
      for (const [key, [x, y]] of this.centres()) {
        const before = old.get(key);
        if (!before) continue;
        const dx = before[0] - x;
        const dy = before[1] - y;
        if (Math.abs(dx) + Math.abs(dy) < 0.5) continue;
        const g = svg.querySelector(`g.node[data-key="${CSS.escape(key)}"]`);
        g.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "translate(0px, 0px)" }],
          { duration: 350, easing: "ease-out" });
      }
    }
  }

  // Show svgText if it differs from what is shown (Python resends every trait with each answer).
  update(svgText, animate = false) {
    if (svgText === this.shownText) return;
    this.shownText = svgText;
    this.show(svgText, animate);
  }

  // -- scales ------------------------------------------------------------------------------------------------
  // The width a picture fits in: the pane's, less room for a vertical scroll bar whether one shows or not (a
  // scale that made the bar come and go would change the width it was fitted to).
  paneWidth() {
    const s = this.scroller;
    if (!s.offsetWidth) return 0;
    const border = s.clientLeft * 2;
    const bar = s.offsetWidth - border - s.clientWidth; // the bar shown now, if any
    this.bar = Math.max(this.bar || 0, bar, scrollbarWidth());
    return Math.max(0, s.offsetWidth - border - this.bar);
  }

  paneHeight() {
    const cap = parseFloat(getComputedStyle(this.scroller).maxHeight);
    return Number.isFinite(cap) && cap > 0 ? cap : window.innerHeight * 0.7;
  }

  // The scale that fits the pane's width, kept legible and no larger than Graphviz's own size.
  autoScaleValue() {
    const fitWidth = this.paneWidth() / this.width;
    return Math.min(PX_PER_PT, Math.max(fitWidth, Math.min(this.legible, PX_PER_PT)));
  }

  // The scale that shows the whole picture in the pane (the overview), no larger than its own size.
  fitScaleValue() {
    const border = this.scroller.clientTop * 2;
    return Math.min(PX_PER_PT, this.paneWidth() / this.width, (this.paneHeight() - border) / this.height);
  }

  autoScale(keep = true) {
    if (!this.svg || !this.width || !this.paneWidth()) return; // not laid out yet: resized() does it
    this.applyScale(this.mode === "fit" ? this.fitScaleValue() : this.autoScaleValue(), null, keep);
  }

  // Set the scale; with keep, the point under `anchor` (a pointer event; else the pane's middle) stays put.
  applyScale(scale, anchor = null, keep = true) {
    if (!this.svg || !this.width) return;
    const s = this.scroller;
    if (!keep) {
      this.scale = scale;
      this.svg.style.width = `${this.width * scale}px`;
      this.svg.style.height = `${this.height * scale}px`;
      this.schedule();
      return;
    }
    const box = s.getBoundingClientRect();
    const ax = anchor ? anchor.clientX - box.left - s.clientLeft : s.clientWidth / 2;
    const ay = anchor ? anchor.clientY - box.top - s.clientTop : s.clientHeight / 2;
    const old = this.svg.getBoundingClientRect();
    const fx = old.width ? (s.scrollLeft + ax - (old.left - box.left - s.clientLeft + s.scrollLeft)) / old.width : 0.5;
    const fy = old.height ? (s.scrollTop + ay - (old.top - box.top - s.clientTop + s.scrollTop)) / old.height : 0;
    this.scale = scale;
    this.svg.style.width = `${this.width * scale}px`;
    this.svg.style.height = `${this.height * scale}px`;
    if (old.width) {
      const now = this.svg.getBoundingClientRect();
      const offsetX = now.left - box.left - s.clientLeft + s.scrollLeft;
      const offsetY = now.top - box.top - s.clientTop + s.scrollTop;
      s.scrollLeft = offsetX + fx * now.width - ax;
      s.scrollTop = offsetY + fy * now.height - ay;
    }
    this.schedule();
  }

  // Zoom by `factor` from the scale shown, between the whole picture and MAX_ZOOM times its own size.
  zoom(factor, anchor) {
    if (!this.svg || !this.width) return;
    const least = Math.min(this.fitScaleValue(), this.autoScaleValue());
    const most = PX_PER_PT * MAX_ZOOM;
    const scale = Math.min(most, Math.max(least, this.scale * factor));
    if (Math.abs(scale - this.scale) < 1e-9) return;
    this.mode = "user";
    this.applyScale(scale, anchor);
  }

  fit() {
    this.mode = "fit";
    this.autoScale();
  }

  resized() {
    const width = this.paneWidth();
    if (!width || Math.abs(width - this.laidWidth) < 0.5) return; // a change of height only
    this.laidWidth = width;
    if (this.mode !== "user") this.autoScale();
    if (this.pendingReveal) this.revealNow();
    this.schedule();
  }

  // -- what is in view -----------------------------------------------------------------------------------
  // Bring `keys` (one key, or a list: the selection, a step's changed nodes) into the middle of the pane.
  reveal(keys) {
    const list = (Array.isArray(keys) ? keys : [keys]).filter((k) => typeof k === "string" && k);
    const same = list.length === this.revealKeys.length && list.every((k, i) => k === this.revealKeys[i]);
    this.revealKeys = list;
    if (same && !this.pendingReveal) return; // nothing new to show: leave the view where the user put it
    this.pendingReveal = { keys: list, outputs: this.pendingReveal ? this.pendingReveal.outputs : false };
    this.schedule();
  }

  revealNow() {
    const s = this.scroller;
    if (!this.svg || !s.clientWidth || !this.pendingReveal) return;
    const { keys, outputs } = this.pendingReveal;
    this.pendingReveal = null;
    const found = keys.map((k) => this.svg.querySelector(`g[data-key="${CSS.escape(k)}"]`)).filter(Boolean);
    if (!found.length && outputs) found.push(...this.svg.querySelectorAll('g.node[data-key^="out"]'));
    if (!found.length) return;
    // Boxes in the pane's coordinates (0, 0 is the visible top left).
    const pane = s.getBoundingClientRect();
    const boxes = found.map((g) => {
      const r = g.getBoundingClientRect();
      const x = r.left - pane.left - s.clientLeft;
      const y = r.top - pane.top - s.clientTop;
      return [x, y, x + r.width, y + r.height];
    });
    const x0 = Math.min(...boxes.map((b) => b[0]));
    const y0 = Math.min(...boxes.map((b) => b[1]));
    const x1 = Math.max(...boxes.map((b) => b[2]));
    const y1 = Math.max(...boxes.map((b) => b[3]));
    const w = s.clientWidth;
    const h = s.clientHeight;
    // Already well inside (a click on a node in view): do not move the picture under the pointer.
    if (x0 >= w * 0.15 && x1 <= w * 0.85 && y0 >= h * 0.15 && y1 <= h * 0.85) return;
    // The middle of them all in the middle of the pane; when they do not fit together, the first one whole.
    let dx = (x0 + x1) / 2 - w / 2;
    let dy = (y0 + y1) / 2 - h / 2;
    const [fx0, fy0, fx1, fy1] = boxes[0];
    if (x1 - x0 > w) dx = Math.min(Math.max(dx, fx1 - w), fx0);
    if (y1 - y0 > h) dy = Math.min(Math.max(dy, fy1 - h), fy0);
    s.scrollLeft += dx;
    s.scrollTop += dy;
    this.schedule();
  }

  // -- the status line and the minimap, redrawn at most once a frame -------------------------------------------
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.pendingReveal) this.revealNow();
      this.paintStatus();
    });
  }

  paintStatus() {
    const s = this.scroller;
    if (!this.svg || !this.width) {
      this.zoomLabel.textContent = "";
      this.offScreen.textContent = "";
      this.root.dataset.shown = "1";
      return;
    }
    setText(this.zoomLabel, `${Math.round((this.scale / PX_PER_PT) * 100)}%`);
    const totalW = this.width * this.scale;
    const totalH = this.height * this.scale;
    const seenW = Math.min(1, s.clientWidth / totalW);
    const seenH = Math.min(1, s.clientHeight / totalH);
    const shown = seenW * seenH;
    const whole = seenW > 0.995 && seenH > 0.995;
    this.root.dataset.shown = whole ? "1" : shown.toFixed(3);
    this.root.dataset.scale = this.scale.toFixed(4);
    if (whole) {
      setText(this.offScreen, this.scale < this.legible - 1e-6 && this.legible <= PX_PER_PT
        ? "the whole picture, smaller than legible: + to zoom in" : "");
      this.minimap.hidden = true;
      return;
    }
    const hidden = [];
    if (s.scrollTop > 1) hidden.push("above");
    if (s.scrollTop + s.clientHeight < s.scrollHeight - 1) hidden.push("below");
    if (s.scrollLeft > 1) hidden.push("left");
    if (s.scrollLeft + s.clientWidth < s.scrollWidth - 1) hidden.push("right");
    const where = hidden.length ? ` (more ${hidden.join(", ")})` : "";
    setText(this.offScreen, `showing ${Math.max(1, Math.round(shown * 100))}% of the picture${where}: `
      + "drag to pan, fit to see it all");
    if (shown < MINIMAP_BELOW) this.paintMinimap();
    else this.minimap.hidden = true;
  }

  // A small copy of the drawing with a rectangle on the part in view. The copy is made when the browser is idle
  // (a new picture is painted first: on a 1,000-node drawing a copy takes tens of ms), once a picture.
  paintMinimap() {
    const map = this.minimap;
    const s = this.scroller;
    if (this.minimapFor !== this.svg) {
      map.hidden = true;
      if (!this.cancelCopy) {
        this.cancelCopy = whenIdle(() => {
          this.cancelCopy = null;
          this.copyForMinimap();
          this.schedule();
        });
      }
      return;
    }
    const k = Math.min(Math.min(MINIMAP_PX[0], s.clientWidth * MINIMAP_PANE) / this.width,
      Math.min(MINIMAP_PX[1], s.clientHeight * MINIMAP_PANE) / this.height);
    const mw = Math.max(8, this.width * k);
    const mh = Math.max(8, this.height * k);
    const copy = map.firstChild;
    copy.setAttribute("width", String(mw));
    copy.setAttribute("height", String(mh));
    map.hidden = false;
    const fw = mw / Math.max(1, s.scrollWidth);
    const fh = mh / Math.max(1, s.scrollHeight);
    Object.assign(this.viewBox.style, {
      left: `${s.scrollLeft * fw}px`,
      top: `${s.scrollTop * fh}px`,
      width: `${Math.min(mw, s.clientWidth * fw)}px`,
      height: `${Math.min(mh, s.clientHeight * fh)}px`,
    });
  }

  // The copy: the sanitized drawing cloned, without the keys and classes a test or a style could take for the
  // picture's (its text and hit strokes are hidden by views.css).
  copyForMinimap() {
    if (!this.svg) return;
    const copy = this.svg.cloneNode(true);
    copy.removeAttribute("style");
    copy.setAttribute("class", "sl-minimap-svg");
    copy.setAttribute("aria-hidden", "true");
    for (const g of copy.querySelectorAll("g[class], g[data-key]")) {
      g.removeAttribute("class");
      g.removeAttribute("data-key");
    }
    this.minimap.replaceChildren(copy, this.viewBox);
    this.minimapFor = this.svg;
  }

  // -- marks ---------------------------------------------------------------------------------------------------
  mark(classes) {
    if (!this.svg) return;
    for (const g of this.svg.querySelectorAll("g.node.sl-marked, g.edge.sl-marked")) {
      g.classList.remove("sl-marked", "sl-selected", "sl-client", "sl-input", "sl-neighbour");
    }
    for (const [key, names] of Object.entries(classes || {})) {
      const g = this.svg.querySelector(`g[data-key="${CSS.escape(key)}"]`);
      if (!g) continue;
      g.classList.add("sl-marked", ...names.map((n) => `sl-${n}`));
    }
  }

  // -- life cycle ----------------------------------------------------------------------------------------------
  stopAnimations() {
    if (this.svg && this.svg.getAnimations) for (const a of this.svg.getAnimations({ subtree: true })) a.cancel();
  }

  // Everything the picture started: its observer, its pending frame and copy, its animations.
  dispose() {
    if (this.resizer) this.resizer.disconnect();
    this.resizer = null;
    if (this.cancelCopy) this.cancelCopy();
    this.cancelCopy = null;
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.stopAnimations();
  }
}

// An object named in a panel: a link to it when it has a key in the picture, else its text.
function itemElement(item, onPick) {
  if (!item.key) return el("span", "sl-text", item.text);
  const link = button(item.text, `go to ${item.text}`, () => onPick(item.key));
  link.className = "sl-link";
  link.dataset.key = item.key;
  return link;
}

// -- the details panel --------------------------------------------------------------------------------------
function renderDetails(container, details, onPick) {
  container.replaceChildren();
  if (!details || !details.rows || !details.rows.length) {
    container.append(el("div", "sl-hint", details && details.hint ? details.hint : "Click a node to see its details."));
    return;
  }
  const title = el("div", "sl-details-title", details.title || "");
  container.append(title);
  const table = el("table", "sl-details-table");
  for (const row of details.rows) {
    const tr = el("tr");
    tr.append(el("th", "", row.label));
    const td = el("td");
    const items = row.items || [];
    if (row.text !== undefined && row.text !== null) td.append(el("span", "sl-text", row.text));
    items.forEach((item, index) => {
      if (index || (row.text !== undefined && row.text !== null)) td.append(el("span", "sl-sep", index ? ", " : " "));
      td.append(itemElement(item, onPick));
    });
    if (!items.length && (row.text === undefined || row.text === null)) td.append(el("span", "sl-none", row.empty || "none"));
    tr.append(td);
    table.append(tr);
  }
  container.append(table);
  for (const action of details.actions || []) {
    container.append(button(action.text, action.title || action.text, () => onPick(action.key, action.kind)));
  }
}

// -- the clients inspector's parts: a search box, its matches, and what changed since the last picture --------
function inspectorParts(send, pick) {
  const finder = searchBox(send, pick, "find a variable by name");
  const changes = el("div", "sl-changes");
  changes.setAttribute("aria-live", "polite");
  const links = (container, items, className) => {
    container.replaceChildren();
    for (const item of items) {
      const row = el("div", className);
      if (item.kind) row.classList.add(`sl-change-${item.kind}`);
      row.append(itemElement(item, pick));
      container.append(row);
    }
  };
  const update = (model) => {
    finder.update(model);
    const panel = model.get("changes_panel") || {};
    changes.replaceChildren();
    changes.hidden = !panel.title;
    if (panel.title) {
      changes.append(el("div", "sl-details-title", panel.title));
      const list = el("div", "sl-change-list");
      links(list, panel.rows || [], "sl-change");
      changes.append(list);
    }
  };
  return { finder, changes, update };
}

// -- the search box: one for every graph view (the inspector's finds variables by name) ------------------------
// Typing lists the matches (Python's "matches" trait: [{key, text, kind}]) once the typing pauses; Enter asks
// Python to select the first match (expanding what hides it); a match is a link that selects its node.
const SEARCH_WAIT_MS = 120;

function searchBox(send, pick, what) {
  const input = el("input", "sl-filter sl-search");
  input.type = "search";
  input.placeholder = what;
  input.setAttribute("aria-label", `${what} (Enter selects the first match, ↓ goes to the matches)`);
  const matches = el("div", "sl-matches");
  matches.setAttribute("aria-label", "matches of the search");
  matches.hidden = true;
  let timer = null;
  const ask = (first) => {
    clearTimeout(timer);
    timer = null;
    send({ type: "search", text: input.value, pick: first });
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => ask(false), SEARCH_WAIT_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") ask(true);
    else if (event.key === "ArrowDown" && matches.querySelector(".sl-link")) matches.querySelector(".sl-link").focus();
    else return;
    event.preventDefault();
    event.stopPropagation(); // not JupyterLab's: Enter would put the cell in edit mode
  });
  matches.addEventListener("keydown", (event) => {
    const links = Array.from(matches.querySelectorAll(".sl-link"));
    const at = links.indexOf(document.activeElement);
    if (at < 0 || (event.key !== "ArrowDown" && event.key !== "ArrowUp")) return;
    const next = at + (event.key === "ArrowDown" ? 1 : -1);
    (next < 0 ? input : links[Math.min(next, links.length - 1)]).focus();
    event.preventDefault();
    event.stopPropagation();
  });
  let shown = null;
  const update = (model) => {
    const items = model.get("matches") || [];
    if (items === shown) return;
    shown = items;
    matches.replaceChildren();
    for (const item of items) {
      const row = el("div", "sl-match");
      if (item.kind) row.dataset.kind = item.kind;
      row.append(itemElement(item, pick));
      matches.append(row);
    }
    matches.hidden = !items.length;
  };
  return { input, matches, update, dispose: () => clearTimeout(timer) };
}

// -- the text twin: the graph as a debugprint-style tree (Python's "outline": [{key, depth, text, repeat, also}]),
// beside the picture while "text_mode" is on (the "text" toggle asks for it). Rows carry the picture's keys (data-key) and its marks (the same
// sl-selected, sl-input, sl-client classes); a click selects; the arrow keys move (up/down a row, left to the
// parent, right to the first input), Escape clears. Rows are built only when the outline changes (the graph
// did), and only while the pane is shown.
const TEXT_INDENT_EM = 1.2;
const TEXT_MAX_INDENT = 32; // deeper rows are indented no further; their depth is written before them

function textPane(model, send, what) {
  const root = el("div", "sl-text-pane");
  root.tabIndex = 0;
  root.setAttribute("role", "listbox");
  root.setAttribute("aria-label", "the graph as text: click a row to select it; arrow keys move, Escape clears");
  root.hidden = true;
  let outline = null; // the rows shown (the model's array: a new one when the graph changed)
  let rows = []; // their elements
  let byKey = new Map(); // a key (a row's own, or one of its "also") -> the indexes of its rows
  let parents = []; // the index of the row right above each row in the tree (-1 at the top)
  let children = []; // the indexes of the rows right under each row
  let marked = new Map(); // the rows carrying marks now -> the classes given them
  let cursor = -1; // the row the keyboard is on
  let revealed = null; // the selection last brought into view
  let frame = 0;

  const build = (items) => {
    outline = items;
    byKey = new Map();
    marked = new Map();
    cursor = -1;
    revealed = null;
    parents = [];
    children = items.map(() => []);
    const above = []; // the row at each depth on the path to the current row
    rows = items.map((item, index) => {
      const row = el("div", `sl-text-row${item.repeat ? " sl-repeat" : ""}`);
      const depth = Number(item.depth) || 0;
      row.dataset.key = item.key;
      row.dataset.index = String(index);
      row.dataset.depth = String(depth);
      row.setAttribute("role", "option");
      row.setAttribute("aria-selected", "false");
      row.style.paddingLeft = `${Math.min(depth, TEXT_MAX_INDENT) * TEXT_INDENT_EM + 0.3}em`;
      row.textContent = depth > TEXT_MAX_INDENT ? `${depth}: ${item.text}` : String(item.text);
      for (const key of [item.key, ...(item.also || [])]) {
        if (!byKey.has(key)) byKey.set(key, []);
        byKey.get(key).push(index);
      }
      above.length = Math.min(above.length, depth);
      parents.push(above.length ? above[above.length - 1] : -1);
      if (above.length) children[above[above.length - 1]].push(index);
      above.push(index);
      return row;
    });
    root.replaceChildren(...rows);
  };

  // The same classes as the picture's nodes: sl-marked, and sl-<mark> for each mark (sl-selected, sl-input, ...).
  const mark = (marks, selected) => {
    for (const [row, names] of marked) {
      row.classList.remove(...names);
      row.setAttribute("aria-selected", "false");
    }
    marked = new Map();
    const add = (index, names) => {
      const row = rows[index];
      const classes = ["sl-marked", ...names.map((n) => `sl-${n}`)];
      row.classList.add(...classes);
      marked.set(row, [...(marked.get(row) || []), ...classes]);
    };
    for (const [key, names] of Object.entries(marks || {})) {
      for (const index of byKey.get(key) || []) add(index, names);
    }
    const chosen = new Set((selected && byKey.get(selected)) || []);
    for (const [key, names] of Object.entries(marks || {})) {
      if (names.includes("selected")) for (const index of byKey.get(key) || []) chosen.add(index);
    }
    for (const index of chosen) {
      add(index, ["selected"]);
      rows[index].setAttribute("aria-selected", "true");
    }
    // The selection's neighbours read from the tree (the rows right under it: its inputs; the row right above
    // each of its rows: a client), so that they are lit also when the picture has folded them into a group.
    for (const index of chosen) {
      const parent = parents[index];
      if (parent >= 0 && !chosen.has(parent)) add(parent, ["client"]);
      for (const child of children[index]) if (!chosen.has(child)) add(child, ["input"]);
    }
  };

  // The selected row in the middle of the pane: the row the keyboard is on if it shows the selection, else the
  // first row of it that is not a repeat.
  const reveal = (selected) => {
    const indexes = (selected && byKey.get(selected)) || [];
    if (!indexes.includes(cursor)) {
      cursor = indexes.find((i) => !rows[i].classList.contains("sl-repeat"));
      if (cursor === undefined) cursor = indexes.length ? indexes[0] : -1;
    }
    const row = rows[cursor];
    if (!row || !root.clientHeight) return;
    root.scrollTop = row.offsetTop - root.clientHeight / 2 + row.offsetHeight / 2;
    const indent = parseFloat(getComputedStyle(row).paddingLeft) || 0;
    if (indent < root.scrollLeft || indent > root.scrollLeft + root.clientWidth * 0.6) {
      root.scrollLeft = Math.max(0, indent - 24);
    }
  };

  const choose = (index) => {
    if (index < 0 || index >= rows.length) return;
    cursor = index;
    send({ type: "select", key: rows[index].dataset.key });
  };
  root.addEventListener("click", (event) => {
    const row = event.target.closest(".sl-text-row");
    if (row && root.contains(row)) choose(Number(row.dataset.index));
  });
  root.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || !rows.length) return;
    const at = cursor >= 0 ? cursor : -1;
    const depth = at >= 0 ? Number(rows[at].dataset.depth) : 0;
    if (event.key === "ArrowDown") choose(Math.min(rows.length - 1, at + 1));
    else if (event.key === "ArrowUp") choose(Math.max(0, at - 1));
    else if (event.key === "Home") choose(0);
    else if (event.key === "End") choose(rows.length - 1);
    else if (event.key === "ArrowLeft") {
      let i = at - 1;
      while (i >= 0 && Number(rows[i].dataset.depth) >= depth) i -= 1;
      if (i >= 0) choose(i);
    } else if (event.key === "ArrowRight") {
      if (at + 1 < rows.length && Number(rows[at + 1].dataset.depth) > depth) choose(at + 1);
    } else if (event.key === "Escape") {
      send({ type: "select", key: "" });
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation(); // not JupyterLab's: the arrows would move between cells
  });

  // The "text" toggle of the toolbar; Python's answer (or `view.text_mode = True` in a cell) shows the pane.
  const [box, toggle] = checkbox("text", (on) => send({ type: "text_mode", on }), `show ${what} as text (a `
    + "debugprint tree) beside the picture");

  const update = () => {
    const on = Boolean(model.get("text_mode"));
    box.checked = on;
    const wasHidden = root.hidden;
    root.hidden = !on;
    if (!on) return;
    const items = model.get("outline") || [];
    if (items !== outline) build(items);
    const selected = model.get("selected_key") || "";
    mark(model.get("marks"), selected);
    if (selected !== revealed || wasHidden) {
      revealed = selected;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => { // once the pane has its size
        frame = 0;
        reveal(selected);
      });
    }
    root.dataset.rows = String(rows.length);
  };
  model.on("change:text_mode", update); // set from Python outside an answer: no "drawn" comes with it
  return {
    root,
    toggle,
    update,
    dispose() {
      cancelAnimationFrame(frame);
      model.off("change:text_mode", update);
    },
  };
}

// -- the graph view (and the clients inspector, which is a graph view that follows its graph) ------------------
function renderGraphView({ model, el: host }) {
  const inspecting = model.get("view") === "inspector";
  const root = el("div", `sl-view sl-graph-view${inspecting ? " sl-inspector" : ""}`);
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const body = el("div", "sl-body");
  const details = el("div", "sl-details");
  details.setAttribute("aria-live", "polite");
  const notice = el("div", "sl-notice");
  const legend = el("div", "sl-legend");

  const watch = kernelWatch(model, host, root);
  const send = (message) => watch.send(message);
  const pick = (key, kind) => {
    if (kind === "expand" || kind === "collapse") send({ type: kind, key });
    else send({ type: "select", key });
  };
  const picture = new Picture(model, (key) => pick(key));

  const styleSelect = el("select", "sl-select");
  styleSelect.setAttribute("aria-label", "style of the picture");
  for (const name of ["structure", "compact"]) {
    const option = el("option", "", name);
    option.value = name;
    styleSelect.append(option);
  }
  styleSelect.addEventListener("change", () => send({ type: "style", style: styleSelect.value }));
  const [focusBox, focusLabel] = checkbox("focus on the selection", (on) => send({ type: "focus", focus: on }));
  const parts = inspecting ? inspectorParts(send, pick) : null;
  const finder = parts ? parts.finder : searchBox(send, pick, "find a node: name, op, type or key");
  const text = textPane(model, send, "the graph");
  toolbar.append(finder.input, text.toggle);
  toolbar.append(
    el("span", "sl-toolbar-label", "style"), styleSelect, focusLabel,
    button("clear", "clear the selection (Escape)", () => send({ type: "select", key: "" })),
  );
  picture.root.addEventListener("keydown", (event) => {
    const moves = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
    if (moves[event.key]) {
      event.preventDefault();
      send({ type: "move", direction: moves[event.key] });
    } else if (event.key === "Escape") {
      event.preventDefault();
      send({ type: "select", key: "" });
    }
  });

  const side = el("div", "sl-side");
  side.append(finder.matches, ...(parts ? [parts.changes] : []), details);
  body.append(picture.root, text.root, side);
  root.append(toolbar, notice, body, legend);
  host.append(root);

  const update = () => {
    picture.update(model.get("svg"));
    picture.mark(model.get("marks"));
    renderDetails(details, model.get("panel"), pick);
    if (!parts) finder.update(model);
    text.update();
    if (parts) {
      parts.update(model);
      root.dataset.live = String(model.get("live"));
      root.dataset.changes = String(((model.get("changes_panel") || {}).rows || []).length);
    }
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    legend.textContent = model.get("legend") || "";
    styleSelect.value = model.get("picture_style");
    focusBox.checked = model.get("focus");
    const selected = model.get("selected_key") || "";
    root.dataset.selected = selected;
    root.dataset.drawn = String(model.get("drawn"));
    root.dataset.style = model.get("picture_style");
    const reveal = model.get("reveal"); // the keys to bring into view (the selection), when Python says
    picture.reveal(Array.isArray(reveal) ? reveal : selected);
  };
  // Python answers an interaction with all of its traits in one message, then bumps "drawn": draw once.
  model.on("change:drawn", update);
  update();
  return () => {
    model.off("change:drawn", update);
    watch.dispose();
    picture.dispose();
    text.dispose();
    finder.dispose();
    root.remove(); // something outside may keep the host element: it must not keep the drawings
  };
}


// -- the rewrite stepper -------------------------------------------------------------------------------------
// The step as a text diff of its neighbourhood: one line per node, "-" before only, "+" after only (DOM text only).
// A click on a line (or Enter on it) asks why the rules tried on its node did or did not apply.
function renderStepDiff(container, rows, onPick) {
  container.replaceChildren();
  container.hidden = !rows.length;
  if (!rows.length) return;
  const title = el("div", "sl-pane-title", "the step as text (- before only, + after only)");
  const lines = el("div", "sl-diff-lines");
  lines.setAttribute("role", "list");
  for (const row of rows) {
    const kind = row.sign === "+" ? "add" : row.sign === "-" ? "del" : "same";
    const line = el("div", `sl-diff-line sl-diff-${kind}`, `${row.sign === " " ? "\u00a0" : row.sign} ${row.text}`);
    line.setAttribute("role", "listitem");
    if (row.key) {
      line.dataset.key = row.key;
      line.tabIndex = 0;
      line.title = `${row.key}: click to see which rules were tried on it`;
      line.addEventListener("click", () => onPick(row.key));
      line.addEventListener("keydown", (event) => {
        if (event.key !== "Enter") return;
        event.preventDefault();
        event.stopPropagation();
        onPick(row.key);
      });
    }
    lines.append(line);
  }
  container.append(title, lines);
}

// The "why not" answer of the stepper's card: the rules tried on the clicked node and what came of each.
function renderStepperWhy(card, why) {
  if (!why) {
    card.append(el("div", "sl-hint", "click a node in either picture: which rules were tried on it, and why not"));
    return;
  }
  const box = el("div", "sl-why");
  box.append(el("div", "sl-details-title", `rules tried on ${why.node}`));
  const table = el("table", "sl-details-table");
  for (const row of why.rows) {
    const tr = el("tr");
    const steps = row.steps.length ? ` (step ${row.steps.join(", ")})` : "";
    tr.append(el("th", "", row.rule || "-"), el("td", `sl-status-${row.outcome}`, `${row.outcome}${steps}`),
              el("td", "", row.reason));
    table.append(tr);
  }
  box.append(table);
  card.append(box);
}

function renderStepper({ model, el: host }) {
  const root = el("div", "sl-view sl-stepper");
  root.tabIndex = 0;
  root.setAttribute("aria-label", "rewrite stepper: left and right arrow keys move between steps");
  const watch = kernelWatch(model, host, root);
  const send = (message) => watch.send(message);
  const toolbar = el("div", "sl-toolbar");
  toolbar.setAttribute("role", "toolbar");
  const slider = el("input", "sl-slider");
  slider.type = "range";
  slider.min = "0";
  slider.setAttribute("aria-label", "step");
  slider.addEventListener("input", () => send({ type: "goto", step: Number(slider.value) }));
  const position = el("span", "sl-position");
  const [compareBox, compareLabel] = checkbox("unoptimized | optimized", (on) => send({ type: "compare", compare: on }));
  let player = null;
  const speed = el("select", "sl-select");
  speed.setAttribute("aria-label", "playing speed");
  for (const [text, ms] of [["0.5 s a step", 500], ["1 s a step", 1000], ["2 s a step", 2000]]) {
    const option = el("option", "", text);
    option.value = String(ms);
    speed.append(option);
  }
  speed.value = "1000";
  const stop = () => {
    if (player !== null) clearInterval(player);
    player = null;
    playButton.textContent = "play";
  };
  const playButton = button("play", "play the steps at the chosen speed (again: pause)", () => {
    if (player !== null) {
      stop();
      return;
    }
    playButton.textContent = "pause";
    player = setInterval(() => {
      if (model.get("step") >= model.get("total")) stop();
      else send({ type: "move", direction: "next" });
    }, Number(speed.value));
  });
  const [fullBox, fullLabel] = checkbox("whole graph", (on) => send({ type: "full", full: on }),
    "large graphs are drawn around each step's change; tick to draw all of it (folded)");
  toolbar.append(
    iconButton("first", "first step (the unoptimized graph)", () => send({ type: "move", direction: "first" })),
    button("◀", "previous step (←)", () => send({ type: "move", direction: "prev" })),
    slider,
    button("▶", "next step (→)", () => send({ type: "move", direction: "next" })),
    iconButton("last", "last step (the optimized graph)", () => send({ type: "move", direction: "last" })),
    position,
    button("◀ rule", "previous use of this step's rule", () => send({ type: "rule", backward: true })),
    button("rule ▶", "next use of this step's rule", () => send({ type: "rule", backward: false })),
    playButton,
    speed,
    compareLabel,
    fullLabel,
  );
  const notice = el("div", "sl-notice");
  const panes = el("div", "sl-panes");
  // Clicking a node of either pane asks why the rules tried on it did or did not apply.
  const before = new Picture(model, (key) => send({ type: "why", key }));
  const after = new Picture(model, (key) => send({ type: "why", key }));
  const beforeBox = el("div", "sl-pane sl-before");
  const afterBox = el("div", "sl-pane sl-after");
  const beforeTitle = el("div", "sl-pane-title");
  const afterTitle = el("div", "sl-pane-title");
  beforeBox.append(beforeTitle, before.root);
  afterBox.append(afterTitle, after.root);
  panes.append(beforeBox, afterBox);
  const lower = el("div", "sl-body");
  const card = el("div", "sl-card");
  card.setAttribute("aria-live", "polite");
  const listBox = el("div", "sl-steps");
  const filter = el("input", "sl-filter");
  filter.type = "search";
  filter.placeholder = "filter rules";
  filter.setAttribute("aria-label", "filter the steps by rule name");
  const [hideBox, hideLabel] = checkbox("hide refused", () => applyFilter());
  const [quietBox, quietLabel] = checkbox("hide steps that moved no node", () => applyFilter());
  const list = el("ol", "sl-step-list");
  listBox.append(filter, hideLabel, quietLabel, list);
  lower.append(card, listBox);
  const diffBox = el("div", "sl-diff");
  diffBox.setAttribute("aria-label", "the step as a text diff");
  root.append(toolbar, notice, panes, diffBox, lower);
  host.append(root);

  root.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === "ArrowRight") send({ type: "move", direction: "next" });
    else if (event.key === "ArrowLeft") send({ type: "move", direction: "prev" });
    else if (event.key === "Home") send({ type: "move", direction: "first" });
    else if (event.key === "End") send({ type: "move", direction: "last" });
    else return;
    event.preventDefault();
  });

  let rows = [];
  const buildList = () => {
    list.replaceChildren();
    const steps = model.get("steps");
    const counts = new Map();
    for (const [, phase, , accepted] of steps) {
      const c = counts.get(phase) || [0, 0];
      c[accepted ? 0 : 1] += 1;
      counts.set(phase, c);
    }
    let phaseShown = null;
    rows = steps.map(([index, phase, rule, accepted, quiet]) => {
      if (phase !== phaseShown) {
        const [applied, refused] = counts.get(phase);
        const header = el("li", "sl-phase", `${phase}: ${applied} applied, ${refused} refused`);
        header.setAttribute("aria-hidden", "true");
        list.append(header);
        phaseShown = phase;
      }
      const li = el("li", `sl-step${accepted ? "" : " sl-refused"}${quiet ? " sl-quiet" : ""}`);
      li.value = index;
      li.dataset.step = String(index);
      li.dataset.rule = rule;
      li.append(el("span", "sl-step-rule", rule),
                el("span", "sl-step-status", accepted ? (quiet ? "applied, no node moved" : "applied") : "refused"));
      li.addEventListener("click", () => send({ type: "goto", step: index }));
      list.append(li);
      return li;
    });
  };
  const applyFilter = () => {
    const words = filter.value.trim().toLowerCase();
    for (const li of rows) {
      const hidden = (hideBox.checked && li.classList.contains("sl-refused"))
        || (quietBox.checked && li.classList.contains("sl-quiet"))
        || (words && !li.dataset.rule.toLowerCase().includes(words));
      li.hidden = Boolean(hidden);
    }
  };
  filter.addEventListener("input", applyFilter);

  const renderCard = (data) => {
    card.replaceChildren(el("div", "sl-details-title", data.title || ""));
    if (data.counts) {
      const table = el("table", "sl-details-table");
      const head = el("tr");
      head.append(el("th", "", "rule"), el("th", "", "applied"), el("th", "", "refused"), el("th", "", "time"));
      table.append(head);
      for (const [rule, applied, refused, time] of data.counts) {
        const tr = el("tr");
        tr.append(el("td", "", rule), el("td", "", applied), el("td", "", refused), el("td", "", time));
        table.append(tr);
      }
      card.append(table);
      renderStepperWhy(card, data.why); // why-not answers at step 0 too
      return;
    }
    const table = el("table", "sl-details-table");
    const fields = [["rule", data.rule], ["status", data.status], ["phase", data.phase], ["reason", data.reason],
      ["node", data.node], ["where", data.location], ["time", data.seconds],
      ["removed / created", `${data.removed} / ${data.created} nodes`]];
    for (const [label, value] of fields) {
      const tr = el("tr");
      tr.append(el("th", "", label), el("td", label === "status" ? `sl-status-${value}` : "", value));
      table.append(tr);
    }
    const replaced = el("tr");
    const cell = el("td");
    (data.replacements || []).forEach((text) => cell.append(el("div", "sl-code", text)));
    if (!(data.replacements || []).length) cell.append(el("span", "sl-none", "none"));
    replaced.append(el("th", "", "replacements"), cell);
    table.append(replaced);
    card.append(table);
    const exclude = el("input", "sl-exclude");
    exclude.readOnly = true;
    exclude.value = data.exclude || "";
    exclude.setAttribute("aria-label", "the line that excludes this rule");
    exclude.addEventListener("focus", () => exclude.select());
    card.append(el("div", "sl-hint", "to leave this rule out:"), exclude);
    if (data.source) {
      card.append(el("pre", "sl-source", data.source));
    } else {
      card.append(button("show the rule's source", "show the source code of this rule", () => send({ type: "source" })));
    }
    if (data.check) {
      card.append(el("div", "sl-check-result", data.check));
    } else {
      card.append(button("check this step", "evaluate the graph before and after this step on random inputs",
        () => send({ type: "check" })));
    }
    renderStepperWhy(card, data.why);
  };

  let shown = { steps: null };
  const update = () => {
    if (model.get("steps") !== shown.steps) {
      buildList();
      applyFilter();
      shown.steps = model.get("steps");
    }
    const step = model.get("step");
    const total = model.get("total");
    slider.max = String(total);
    slider.value = String(step);
    position.textContent = `step ${step} / ${total}`;
    compareBox.checked = model.get("compare");
    fullBox.checked = model.get("full");
    const animate = !model.get("compare");
    before.update(model.get("before_svg"), animate);
    after.update(model.get("after_svg"), animate);
    beforeBox.hidden = !model.get("before_title");
    beforeTitle.textContent = model.get("before_title");
    afterTitle.textContent = model.get("after_title");
    renderCard(model.get("card") || {});
    renderStepDiff(diffBox, model.get("diff") || [], (key) => send({ type: "why", key }));
    notice.textContent = model.get("notice") || "";
    notice.hidden = !model.get("notice");
    for (const li of rows) li.classList.toggle("sl-current", Number(li.dataset.step) === step);
    const current = rows[step - 1];
    // The current row in view inside the list only: scrollIntoView would also scroll the notebook, and the
    // pictures of the step (above the list) would leave the screen.
    if (current) {
      const top = current.getBoundingClientRect().top - list.getBoundingClientRect().top + list.scrollTop;
      if (top < list.scrollTop) list.scrollTop = top;
      else if (top + current.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = top + current.offsetHeight - list.clientHeight;
      }
    }
    root.dataset.step = String(step);
    root.dataset.drawn = String(model.get("drawn"));
    // The step's change in view: what it removed in "before", what it created in "after" (when Python says).
    before.reveal(model.get("reveal_before") || []);
    after.reveal(model.get("reveal_after") || []);
  };
  model.on("change:drawn", update);
  update();
  return () => {
    model.off("change:drawn", update);
    stop();
    watch.dispose();
    before.dispose();
    after.dispose();
    root.remove(); // something outside may keep the host element: it must not keep the drawings
  };
}

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

  const pick = (key, kind) => {
    if (kind === "expand" || kind === "collapse") send({ type: kind, key });
    else send({ type: "select", key });
  };
  const picture = new Picture(model, (key) => pick(key));
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
  root.append(caption, nanNote, controls, toolbar, notice, body, legend);
  host.append(root);

  const update = () => {
    picture.update(model.get("svg"));
    picture.mark(model.get("marks"));
    renderDetails(details, model.get("panel"), pick);
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

const VIEWS = { graph: renderGraphView, inspector: renderGraphView, stepper: renderStepper, values: renderValuesView };

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
