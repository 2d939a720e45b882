// views/text_pane.js: the text twin: the graph as a debugprint-style tree beside the picture.

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
