// views/panels.js: the details panel: what Python says of the selection, objects as links.

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
