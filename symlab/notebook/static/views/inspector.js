// views/inspector.js: the clients inspector's parts: its search by name and what changed.

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
