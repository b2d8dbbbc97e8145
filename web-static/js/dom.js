// Building the page. Text always goes in as text (textContent), never as HTML: nicknames and story
// text can contain anything, and none of it may ever run.

import { t, number, ordinal, list, isolate, onLanguageChange } from "./i18n.js";

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

/** Shows exactly one of `sections` (by id), hiding the others. */
export function showOnly(sections, id) {
  for (const section of sections) $(`#${section}`).hidden = section !== id;
}

export function reducedMotion() {
  return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

let announcing = null;

/** Announces a sentence to screen readers through a polite live region. */
export function announce(text) {
  const region = $("#announcer");
  if (!region) return;
  region.textContent = "";
  clearTimeout(announcing);
  announcing = setTimeout(() => { region.textContent = text; }, 50);
}

// A sentence announced in the language just left is not said again in it.
onLanguageChange(() => {
  clearTimeout(announcing);
  const region = $("#announcer");
  if (region) region.textContent = "";
});

/** "1st", "2.º", "1er": the place, as the page's language writes it. */
export { ordinal } from "./i18n.js";

export function points(n) {
  return t("points.count", { count: n });
}

/** "🔥 3 in a row", from two correct answers in a row. */
export function streakText(streak) {
  return streak >= 2 ? t("streak.text", { count: streak }) : "";
}

const RESULT_WORDS = { correct: "dots.correct", wrong: "dots.wrong", missed: "dots.missed", skipped: "dots.skipped", pending: "dots.pending" };
const RESULT_MARKS = { correct: "✓", wrong: "✗", missed: "–", skipped: "»" };

/**
 * Text someone wrote (a nickname, a story's words) as an element whose direction follows its own
 * letters (dir="auto"), so a Hebrew name in an English room, or an English one in an Arabic room, reads right.
 */
export function written(text, tag = "bdi", attributes = {}) {
  return el(tag, { dir: "auto", ...attributes, text });
}

/** Progress dots, one per question: a mark and a word for each (✓ right, ✗ not right, – no answer, » skipped, ring not yet). */
export function progressDots(results, count, label = t("dots.label")) {
  const dots = el("ol", { class: "dots", "aria-label": label });
  for (let i = 0; i < count; i++) {
    const result = results[i] ?? "pending";
    const words = t("dots.question", { number: i + 1, result: t(RESULT_WORDS[result] ?? "dots.pending") });
    dots.append(el("li", { class: `dot ${result}`, title: words },
      el("span", { "aria-hidden": "true", class: result === "skipped" ? "mirror" : undefined, text: RESULT_MARKS[result] ?? "" }),
      el("span", { class: "visually-hidden", text: words })));
  }
  return dots;
}

/** A ranked list. `limit` keeps the top ones and says how many more there are. */
export function board(entries, { highlightId = null, limit = Infinity } = {}) {
  const list = el("ol", { class: "board" });
  for (const entry of entries.slice(0, limit)) {
    const me = entry.id === highlightId;
    list.append(el("li", { class: me ? "me" : "" },
      el("span", { class: "rank num", text: `${number(entry.rank)}.` }),
      el("span", { class: "name" }, written(entry.nickname), me ? ` ${t("board.you")}` : null),
      entry.streak >= 2 ? el("span", { class: "streak-mark num", text: `🔥${number(entry.streak)}`, title: streakText(entry.streak) }) : null,
      el("span", { class: "points num", text: number(entry.score) })));
  }
  if (entries.length > limit) list.append(el("li", { class: "more", text: t("board.more_with_points", { count: entries.length - limit }) }));
  return list;
}

/**
 * "Ana, Ben and Cat" (Intl.ListFormat); with `more` left out, "Ana, Ben, Cat and 4 more", or "Ana, Ben,
 * Cat, you and 3 more" when this child is one of them.
 */
export function podiumNames(names, more = 0, youAmongMore = false) {
  const all = names.map(isolate);
  if (youAmongMore && more > 0) {
    all.push(t("podium.you"));
    more -= 1;
  }
  if (more > 0) all.push(t("podium.more", { count: more }));
  return list(all);
}

/**
 * The podium: places 2, 1, 3 left to right. Nobody with 0 points is on it (the server leaves them out).
 * The server names at most a few players; `more` (`podiumMore`: `{rank, count}`) says how many more share
 * the last place named, and `you` (a child's own standing and id) lets that child read "you" among them.
 * With motion, the places appear one by one, third first; `onPlace` is told as each appears.
 */
export function podium(entries, { onPlace = () => {}, more = null, you = null } = {}) {
  const places = [["second", "🥈", 2], ["first", "🥇", 1], ["third", "🥉", 3]];
  const node = el("ol", { class: "podium", "aria-label": t("podium.label") });
  const steps = new Map();
  for (const [place, medal, rank] of places) {
    const winners = entries.filter((entry) => entry.rank === rank);
    if (winners.length === 0) continue;
    const left = more && more.rank === rank ? more.count : 0;
    const youAmongMore = Boolean(you && you.standing && you.standing.rank === rank && you.standing.score > 0
      && !winners.some((w) => w.id === you.id));
    const names = podiumNames(winners.map((w) => w.nickname), left, youAmongMore);
    const step = el("li", { class: `step ${place}`, "aria-label": t("podium.step", { place: ordinal(rank), names, points: points(winners[0].score) }) },
      el("div", { class: "who" },
        el("strong", { dir: "auto", text: names }),
        el("span", { text: points(winners[0].score) })),
      el("div", { class: "pillar", "aria-hidden": "true" }, medal, el("span", { class: "place-number", text: ordinal(rank) })));
    steps.set(rank, step);
    node.append(step);
  }
  if (steps.size === 0) return el("p", { class: "podium-empty", text: t("podium.empty") });
  if (!reducedMotion()) {
    node.classList.add("staged");
    let delay = 300;
    for (const rank of [3, 2, 1]) {
      const step = steps.get(rank);
      if (!step) continue;
      setTimeout(() => { step.classList.add("shown"); onPlace(rank); }, delay);
      delay += 900;
    }
  } else {
    for (const rank of [3, 2, 1]) if (steps.has(rank)) onPlace(rank);
  }
  return node;
}

/**
 * Keeps a list inside its box: while the last item overflows, items come off the end and one "+ N more"
 * item says how many (so a projector never needs scrolling, whatever the size of the class). `left` is
 * how many were left out before (they are counted in N too).
 */
export function fitList(list, moreItem, left = 0) {
  const items = [...list.children];
  let hidden = 0;
  const overflowing = () => list.scrollHeight > list.clientHeight + 1;
  if (!overflowing() && left === 0) return 0;
  const more = moreItem(left);
  list.append(more);
  while (overflowing() && hidden < items.length) {
    hidden += 1;
    items[items.length - hidden].hidden = true;
    more.textContent = moreItem(left + hidden).textContent;
  }
  return hidden;
}
