// views/picture.js: a picture of a view: fit, zoom, pan, minimap, click, reveal, marks.

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

// The box of a node's shape from its attributes (no layout needed: the picture may not be shown yet).
function shapeBox(g) {
  const shape = g.querySelector("polygon, ellipse");
  if (!shape) return null;
  if (shape.localName === "ellipse") {
    const [cx, cy, rx, ry] = ["cx", "cy", "rx", "ry"].map((a) => parseFloat(shape.getAttribute(a)));
    return [cx - rx, cy - ry, cx + rx, cy + ry].every(Number.isFinite) ? [cx - rx, cy - ry, cx + rx, cy + ry] : null;
  }
  const xy = (shape.getAttribute("points") || "").trim().split(/[\s,]+/).map(Number).filter(Number.isFinite);
  if (xy.length < 4) return null;
  const xs = xy.filter((_, i) => i % 2 === 0);
  const ys = xy.filter((_, i) => i % 2 === 1);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

// A node whose op has an inner graph (class "openable") gets a small round button at its top right: "+" asks
// Python to open the inner graph in place, "−" (the node is drawn "open") to close it. The key and the action
// go to Python, which decides; the button's shapes are made here, no text from the picture is read into them.
function addToggles(svg) {
  for (const g of svg.querySelectorAll("g.node.openable[data-key]")) {
    const box = shapeBox(g);
    if (!box) continue;
    const open = g.classList.contains("open");
    const r = 7;
    const cx = box[2] - 2;
    const cy = box[1] + 2;
    const toggle = document.createElementNS(SVG_NS, "g");
    toggle.setAttribute("class", `sl-toggle${open ? " sl-toggle-open" : ""}`);
    toggle.dataset.key = g.dataset.key;
    toggle.dataset.action = open ? "collapse" : "expand";
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = open ? "close the inner graph" : "open the inner graph in place";
    const circle = document.createElementNS(SVG_NS, "circle");
    circle.setAttribute("cx", String(cx));
    circle.setAttribute("cy", String(cy));
    circle.setAttribute("r", String(r));
    const sign = document.createElementNS(SVG_NS, "path");
    const bar = `M${cx - 4},${cy} L${cx + 4},${cy}`;
    sign.setAttribute("d", open ? bar : `${bar} M${cx},${cy - 4} L${cx},${cy + 4}`);
    toggle.append(title, circle, sign);
    g.append(toggle);
  }
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
      const toggle = event.target.closest("g.sl-toggle"); // a node's inner graph: open or close it
      if (toggle && this.scroller.contains(toggle) && toggle.dataset.key) {
        onPick(toggle.dataset.key, toggle.dataset.action);
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
    addToggles(svg);
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
    for (const toggle of copy.querySelectorAll("g.sl-toggle")) toggle.remove(); // no buttons in the overview
    // No words either: too small to read, and a view that rewrites its labels (the grad stepper's "grad" lines)
    // would leave stale ones in the copy.
    for (const item of copy.querySelectorAll("text, title, path.sl-hit")) item.remove();
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
