// views/dom.js: building the page: elements with text only, checkboxes, buttons, icons.

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
