// The story library: `/stories#token=ADMIN-TOKEN`. Every story with its title, language, questions and
// when it changed; search; new, edit, duplicate, export, delete (after a confirmation); import a story
// file (ours or either seed shape); and "Start a room", which creates a room on the story and offers the
// teacher page with the projector link beside it, each in a tab of its own (rooms.js).

import { $, el, clear, announce } from "../dom.js";
import { t, setLanguage, browserLanguage, number, LANGUAGES, ownChoice, languagePicker, onLanguageChange } from "../i18n.js";
import { Refused } from "../api.js";
import { api, failureText, pageLink } from "./common.js";
import { problemText } from "./problems.js";
import { startRoom as startStoryRoom } from "./rooms.js";
import { showAccountBar, offerSignIn, offerAdminScreen, nameListHeading } from "../account-bar.js";

// The teacher's own choice on this browser (kept like a child's), else the link's, else the browser's.
const linkLanguage = new URLSearchParams(location.hash.slice(1)).get("lang");
await setLanguage(ownChoice() ?? linkLanguage ?? browserLanguage());
languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? linkLanguage ?? browserLanguage()), "library.language_follow");

const PAGE = 100;
const state = { stories: [], next: null, query: "", loading: 0 };
window.storycircle = { library: state };
const dateFormat = () => new Intl.DateTimeFormat(document.documentElement.lang || undefined, { dateStyle: "medium", timeStyle: "short" });

function showMessage(text, { good = false, details = [] } = {}) {
  const box = $("#library-message");
  clear(box);
  box.className = good ? "message good" : "message error";
  box.setAttribute("role", good ? "status" : "alert");
  box.append(el("p", { text }));
  if (details.length) {
    // Each problem in the page's language, with its place in the file (a path, left to right).
    box.append(el("ul", { class: "library-issues" }, details.map((issue) => el("li", { dir: "auto" },
      issue.path ? el("code", { dir: "ltr", text: issue.path }) : null, issue.path ? " " : null, el("span", { text: problemText(issue) })))));
  }
  box.hidden = false;
}

function hideMessage() {
  $("#library-message").hidden = true;
}

async function load({ more = false } = {}) {
  const ticket = ++state.loading;
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (state.query) query.set("q", state.query);
  if (more && state.next) query.set("after", state.next);
  try {
    const page = await api.call("GET", `/api/stories?${query}`);
    if (ticket !== state.loading) return;
    state.stories = more ? state.stories.concat(page.stories) : page.stories;
    state.next = page.next ?? null;
    state.loaded = true;
    render();
  } catch (failure) {
    if (ticket !== state.loading) return;
    $("#library-status").textContent = failureText(failure);
  }
}

function languageName(story) {
  return story.language ? LANGUAGES[story.language].name : story.voice;
}

function render() {
  const listNode = clear($("#library-list"));
  for (const story of state.stories) {
    const title = `library-story-${story.id}`;
    listNode.append(el("li", { class: "library-story", "aria-labelledby": title, "data-story": story.id },
      el("h2", { id: title, dir: "auto", text: story.title }),
      el("p", { class: "facts", text: t("library.facts", {
        language: languageName(story),
        questions: t("library.questions", { count: story.questions }),
        changed: dateFormat().format(new Date(story.updatedAt)),
        by: story.updatedBy,
      }) }),
      el("div", { class: "library-buttons" },
        el("button", { type: "button", "data-action": "start", "aria-describedby": title, onclick: () => startRoom(story), text: t("library.start") }),
        el("a", { class: "button secondary", href: pageLink("/stories/edit", { id: story.id }), "data-action": "edit", "aria-describedby": title, text: t("library.edit") }),
        el("button", { type: "button", class: "secondary", "data-action": "duplicate", "aria-describedby": title, onclick: () => duplicate(story), text: t("library.duplicate") }),
        el("button", { type: "button", class: "secondary", "data-action": "export", "aria-describedby": title, onclick: () => exportStory(story), text: t("library.export") }),
        el("button", { type: "button", class: "quiet", "data-action": "delete", "aria-describedby": title, onclick: () => confirmDelete(story), text: t("library.delete") }),
      )));
  }
  $("#library-status").textContent = state.stories.length
    ? t("library.count", { count: state.stories.length, shown: number(state.stories.length) })
    : (state.query ? t("library.none_found") : t("library.empty"));
  $("#library-more").hidden = !state.next;
}

// The list's words (counts, dates, buttons) in the language just picked.
onLanguageChange(() => { if (state.loaded) render(); });

async function startRoom(story) {
  hideMessage();
  try {
    await startStoryRoom(story.id);
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

async function duplicate(story) {
  hideMessage();
  try {
    const full = await api.call("GET", `/api/stories/${encodeURIComponent(story.id)}`);
    const copy = { ...full.story, title: t("library.copy_title", { title: full.story.title }).slice(0, 120) };
    const saved = await api.call("POST", "/api/stories", { story: copy });
    showMessage(t("library.duplicated", { title: saved.title }), { good: true });
    await load();
  } catch (failure) {
    showMessage(failureText(failure), { details: failure instanceof Refused ? failure.error.issues ?? [] : [] });
  }
}

async function exportStory(story) {
  hideMessage();
  try {
    const full = await api.call("GET", `/api/stories/${encodeURIComponent(story.id)}`);
    const blob = new Blob([JSON.stringify(full.story, null, 2) + "\n"], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `${fileName(full.title)}.json` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    announce(t("library.exported", { title: full.title }));
  } catch (failure) {
    showMessage(failureText(failure));
  }
}

function fileName(title) {
  return title.normalize("NFKD").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "").toLowerCase() || "story";
}

let pendingDelete = null;
let returnFocus = null;

function confirmDelete(story) {
  pendingDelete = story;
  returnFocus = document.activeElement;
  $("#library-confirm-text").textContent = t("library.delete_confirm", { title: story.title });
  $("#library-confirm-text").dir = "auto";
  $("#library-confirm").showModal();
  $("#library-confirm-no").focus();
}

function closeConfirm() {
  $("#library-confirm").close();
  pendingDelete = null;
  returnFocus?.focus?.();
}

$("#library-confirm-no").addEventListener("click", closeConfirm);
$("#library-confirm").addEventListener("cancel", () => { pendingDelete = null; });
$("#library-confirm-yes").addEventListener("click", async () => {
  const story = pendingDelete;
  closeConfirm();
  if (!story) return;
  try {
    await api.call("DELETE", `/api/stories/${encodeURIComponent(story.id)}`);
    showMessage(t("library.deleted", { title: story.title }), { good: true });
    await load();
    $("#library-search").focus();
  } catch (failure) {
    showMessage(failureText(failure));
  }
});

$("#library-import").addEventListener("change", async (event) => {
  const file = event.target.files?.[0];
  event.target.value = "";
  if (!file) return;
  hideMessage();
  let text;
  try {
    text = await file.text();
  } catch {
    showMessage(t("library.error.unreadable"));
    return;
  }
  try {
    // The server takes our shape and both seed shapes, and says what is wrong with anything else.
    const saved = await api.call("POST", "/api/stories", text);
    showMessage(t("library.imported", { title: saved.title }), { good: true });
    await load();
  } catch (failure) {
    showMessage(failureText(failure), { details: failure instanceof Refused ? failure.error.issues ?? [] : [] });
  }
});

let searchTimer = null;
$("#library-search").addEventListener("input", (event) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.query = event.target.value.trim();
    load();
  }, 250);
});
$("#library-more").addEventListener("click", () => load({ more: true }));
$("#library-new").href = pageLink("/stories/edit");
$("#library-classes").href = pageLink("/classes");

nameListHeading($("#library-title"), "library", api);
if (!api.signedIn) {
  $(".library-tools").hidden = true;
  offerSignIn($("#library-status"), "/stories");
} else if (offerAdminScreen($("#library-status"), api, "library-admin-link")) {
  $(".library-tools").hidden = true;
  $("#library-classes").hidden = true;
  showAccountBar(api);
} else {
  showAccountBar(api);
  load();
}
