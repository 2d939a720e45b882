// views/sanitise.js: parsing Python's SVG safely: DOMParser, then no script, no on*, no href; ids to data-key.
//
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
