// views/search.js: the search box every graph view has, and its matches.

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
