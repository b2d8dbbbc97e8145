// The story editor: `/stories/edit#id=STORY&token=ADMIN-TOKEN` (no id: a new story). The teacher writes the
// title, the text (shown as the sentences the server will narrate, each with Listen), the voice, rate and
// pitch, and the questions (questions.js). The server's validator runs as the teacher types; a problem is
// shown at its field once the teacher has left that field, and after a save attempt every problem is listed
// above the Save button, each a link to its field. The draft is kept in this browser on every change, so a
// reload or a dropped connection loses nothing; Save sends it with the version it was based on, and a story
// saved by someone else meanwhile opens the conflict screen with both versions. Once saved, "Start a room"
// starts a room on it (rooms.js). A story with pictures keeps them: its pages are edited one by one (each
// keeps its picture), and its questions and answers keep theirs as they are edited, moved or removed; the
// editor uploads no pictures, so it adds no answer to a question whose answers are pictures.

import { $, el, clear, announce } from "../dom.js";
import { t, isolate, setLanguage, browserLanguage, currentLanguage, catalogLanguage, ownChoice, languagePicker, onLanguageChange } from "../i18n.js";
import { Refused } from "../api.js";
import { api, failureText, pageLink } from "./common.js";
import { problemText, problemPlace } from "./problems.js";
import { fragmentParameters } from "../connection.js";
import { ERROR } from "../error-codes.js";
import { blankQuestion, renderQuestions as drawQuestions } from "./questions.js";
import { bestVoice, renderVoiceMenu } from "./voices.js";
import { startRoom } from "./rooms.js";
import { listenTo, stopListening } from "./listen.js";
import { showAccountBar, offerSignIn } from "../account-bar.js";

// The teacher's own choice on this browser (kept like a child's), else the link's, else the browser's.
const linkLanguage = fragmentParameters().get("lang");
await setLanguage(ownChoice() ?? linkLanguage ?? browserLanguage());
languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? linkLanguage ?? browserLanguage()), "library.language_follow");

const state = {
  id: fragmentParameters().get("id"), version: null, doc: null, issues: [], sentences: [], conflict: null,
  voiceMenu: { voices: [], best: {} }, moreVoices: false,
  // The fields the teacher has left (their problems are shown) and whether Save was pressed (all are).
  touched: new Set(), attempted: false,
  // The answer last removed, for Undo: {qi, removed}.
  undo: null,
  // Saved and unchanged since: a room can be started on it.
  saved: false,
};
window.storycircle = { editor: state, listened: [] };

const draftKey = () => `storycircle.draft.${state.id ?? "new"}`;

/** A new story, read by the best voice this server has for the page's language. */
function blankStory() {
  return {
    title: "",
    text: "",
    narration: { voice: bestVoice(state.voiceMenu, currentLanguage()), rate: 150, pitch: 50 },
    quiz: { questions: [blankQuestion()] },
  };
}

const pageText = (page) => (typeof page === "string" ? page : String(page?.text ?? ""));
const optionLabel = (option) => (typeof option === "string" ? option : String(option?.label ?? ""));

/** The editor's form of a stored story: the text as paragraphs (or, with pictures, as its pages, each with
 * its picture), each answer as its option's index (null when it matches none: the teacher chooses), every
 * picture kept as stored. */
function fromStored(story) {
  const pieces = Array.isArray(story.text) ? story.text : null;
  const text = pieces ? pieces.map(pageText).join("\n\n") : String(story.text ?? "");
  const pictured = pieces?.some((page) => typeof page !== "string" && page?.picture);
  return {
    title: story.title ?? "",
    text,
    pages: pictured ? pieces.map((page) => ({ text: pageText(page), picture: typeof page === "string" ? null : page.picture ?? null })) : undefined,
    narration: {
      voice: story.narration?.voice ?? bestVoice(state.voiceMenu, currentLanguage()),
      rate: story.narration?.rate ?? 150, pitch: story.narration?.pitch ?? 50,
    },
    quizTitle: story.quiz?.title,
    quiz: {
      questions: (story.quiz?.questions ?? []).map((q) => {
        const labels = (q.options ?? []).map(optionLabel);
        const answer = labels.indexOf(q.answer);
        return {
          question: q.question ?? "", options: labels, answer: answer >= 0 ? answer : null,
          time: q.time ?? 20, explanation: q.explanation ?? "",
          picture: q.picture ?? undefined,
          optionPictures: (q.options ?? []).some((option) => typeof option !== "string")
            ? q.options.map((option) => (typeof option === "string" ? null : option.picture ?? null)) : undefined,
        };
      }),
    },
  };
}

/** The story file the server takes, from the editor's form. A question without a chosen right answer is
 * sent without one, and the validator refuses it there (`answer_required`). */
function toStory(doc) {
  const quiz = {
    questions: doc.quiz.questions.map((q) => {
      const options = q.optionPictures ? q.options.map((label, index) => ({ label, picture: q.optionPictures[index] })) : q.options;
      const question = { question: q.question, options };
      if (q.answer !== null && q.answer !== undefined && q.options[q.answer] !== undefined) question.answer = q.options[q.answer];
      if (q.picture) question.picture = q.picture;
      if (q.time !== "" && q.time !== null && q.time !== undefined) question.time = Number(q.time);
      if (q.explanation.trim()) question.explanation = q.explanation;
      return question;
    }),
  };
  if (doc.quizTitle) quiz.title = doc.quizTitle;
  return {
    title: doc.title,
    text: doc.pages ? doc.pages.map((page) => (page.picture ? { text: page.text, picture: page.picture } : page.text)) : doc.text,
    narration: { voice: doc.narration.voice, rate: Number(doc.narration.rate), pitch: Number(doc.narration.pitch) },
    quiz,
  };
}

// ---- The draft ----

function saveDraft() {
  try {
    localStorage.setItem(draftKey(), JSON.stringify({ doc: state.doc, version: state.version, at: Date.now() }));
  } catch { /* private mode: the page still works, only without the safety net */ }
  $("#edit-discard").hidden = false;
  $("#edit-status").textContent = t("library.editor.draft_kept");
}

function readDraft() {
  try { return JSON.parse(localStorage.getItem(draftKey()) ?? "null"); } catch { return null; }
}

function dropDraft() {
  try { localStorage.removeItem(draftKey()); } catch { /* nothing kept */ }
  $("#edit-discard").hidden = true;
}

// ---- Problems ----

function fieldId(path) {
  // quiz.questions[2].options[1] → q-2-option-1; quiz.questions[2].answer → q-2-answer, …
  let match = path.match(/^quiz\.questions\[(\d+)\]\.options\[(\d+)\](?:\.label)?$/);
  if (match) return `q-${match[1]}-option-${match[2]}`;
  match = path.match(/^quiz\.questions\[(\d+)\](?:\.(\w+))?$/);
  if (match) return match[2] ? `q-${match[1]}-${match[2] === "question" ? "text" : match[2]}` : `q-${match[1]}-text`;
  if (/^quiz(\.questions)?(\b|$)/.test(path)) return "edit-questions";
  if (path === "title") return "edit-title";
  match = path.match(/^text\[(\d+)\]/);
  if (match && state.doc?.pages) return `edit-page-${match[1]}`;
  if (path === "text" || path.startsWith("text[")) return state.doc?.pages ? "edit-pages" : "edit-text";
  if (path.startsWith("narration.")) return `edit-${path.slice("narration.".length)}`;
  return null;
}

/** The control a problem's link moves the focus to: the field itself, or the first control of a group
 * (a question's right answer: its chosen radio, else its first). */
function focusTarget(id) {
  const answer = id?.match(/^q-(\d+)-(answer|options)$/);
  if (answer) return document.querySelector(`input[name="q-${answer[1]}-answer"]:checked`) ?? document.getElementById(`q-${answer[1]}-correct-0`);
  if (id === "edit-questions") return $("#edit-add-question");
  if (id === "edit-pages") return $("#edit-page-0");
  return id ? document.getElementById(id) : null;
}

/** Whether a problem at field `id` is shown: after a save attempt, or once the teacher has left it. */
function shown(id) {
  return state.attempted || (id !== null && state.touched.has(id));
}

/** Shows each of the validator's issues at its field (errors first) when it is due; after a save attempt,
 * also lists every error above the Save button, each a link to its field. */
function showIssues() {
  for (const node of document.querySelectorAll(".field-problem")) {
    node.hidden = true;
    node.textContent = "";
  }
  for (const node of document.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
  for (const issue of state.issues) {
    const id = fieldId(issue.path);
    if (!shown(id)) continue;
    const problem = (id && document.getElementById(`${id}-problem`)) || $("#editor-general-problem");
    if (!problem.hidden && issue.severity !== "error") continue;
    const words = problemText(issue);
    problem.textContent = problem.hidden ? words : `${problem.textContent} ${words}`;
    problem.hidden = false;
    const field = id && document.getElementById(id);
    if (field && issue.severity === "error") field.setAttribute("aria-invalid", "true");
  }
  showSummary();
}

function showSummary() {
  const errors = state.attempted ? state.issues.filter((issue) => issue.severity === "error") : [];
  const box = $("#editor-problems");
  box.hidden = errors.length === 0;
  if (!errors.length) return;
  // Drawn again only when it changed: a link being pressed stays where it is.
  const drawn = JSON.stringify([currentLanguage(), errors.map((issue) => [issue.path, issue.code, issue.params])]);
  if (box.dataset.drawn === drawn) return;
  box.dataset.drawn = drawn;
  $("#editor-problems-title").textContent = t("library.error.invalid_story", { count: errors.length });
  clear($("#editor-problems-list")).append(...errors.map((issue) => {
    const id = fieldId(issue.path);
    const place = problemPlace(issue.path);
    const words = place ? t("library.editor.problem_at", { place, problem: problemText(issue) }) : problemText(issue);
    if (!focusTarget(id)) return el("li", { dir: "auto", text: words });
    return el("li", {}, el("a", { href: `#${id}`, dir: "auto", "data-field": id, text: words,
      onclick: (event) => {
        event.preventDefault();
        const target = focusTarget(id);
        target?.focus();
        target?.scrollIntoView({ block: "center" });
      } }));
  }));
}

// A field the teacher leaves shows its problems from then on; leaving a question's answers shows what
// they lack (too few, no right answer).
$("#editor-form").addEventListener("focusout", (event) => {
  const before = state.touched.size;
  const id = event.target.id;
  if (id && event.target.matches("input:not([type=radio]), textarea, select")) state.touched.add(id);
  const options = event.target.closest?.(".edit-options");
  if (options && !options.contains(event.relatedTarget)) {
    state.touched.add(options.id);
    state.touched.add(options.id.replace(/-options$/, "-answer"));
  }
  if (state.touched.size !== before) showIssues();
});

// ---- Drawing the form ----

function renderSentences() {
  stopListening();
  const list = clear($("#edit-sentences"));
  state.sentences.forEach((sentence, index) => {
    list.append(el("li", { "data-index": index },
      el("span", { dir: "auto", text: sentence }),
      el("span", { class: "listen-state muted", "aria-hidden": "true" }),
      el("button", { type: "button", class: "secondary", "data-sentence": index, "aria-label": t("library.editor.listen_to", { number: index + 1 }),
        onclick: () => listenTo(index, state.sentences[index], state.doc.narration, (failure) => showMessage(failureText(failure))),
        text: t("library.editor.listen") })));
  });
  if (!state.sentences.length) list.append(el("li", { class: "muted", text: t("library.editor.no_sentences") }));
}

function renderVoices() {
  const language = catalogLanguage(state.doc.narration.voice) ?? currentLanguage();
  const hidden = renderVoiceMenu($("#edit-voice"), state.voiceMenu, state.doc.narration.voice, language, state.moreVoices);
  const more = $("#edit-more-voices");
  more.hidden = hidden === 0;
  more.textContent = t(state.moreVoices ? "library.editor.fewer_voices" : "library.editor.more_voices");
  more.setAttribute("aria-expanded", String(state.moreVoices));
}

const editor = {
  state,
  changed: () => changed(),
  structural: (focus) => structural(focus),
  showIssues: () => showIssues(),
};

function renderQuestions(focus = null) {
  drawQuestions($("#edit-questions"), editor, focus);
}

/** A picture story's pages, each its own text box with its picture named beside it. */
function renderPages() {
  const box = clear($("#edit-pages"));
  const pages = state.doc.pages;
  $("#edit-text-box").hidden = Boolean(pages);
  box.hidden = !pages;
  if (!pages) return;
  box.append(el("legend", { text: t("library.editor.text") }), el("p", { class: "muted", text: t("library.editor.pages_hint") }));
  pages.forEach((page, index) => {
    const id = `edit-page-${index}`;
    box.append(el("div", { class: "edit-page" },
      el("label", { for: id, text: t("library.editor.page_number", { number: index + 1 }) }),
      page.picture ? el("p", { class: "muted", id: `${id}-picture`, dir: "auto", text: t("library.editor.has_picture", { alt: page.picture.alt ?? "" }) }) : null,
      el("textarea", { id, rows: 2, dir: "auto", "aria-describedby": `${page.picture ? `${id}-picture ` : ""}${id}-problem`,
        oninput: (event) => { page.text = event.target.value; changed(); } }),
      el("p", { id: `${id}-problem`, class: "field-problem", hidden: true })));
    box.lastChild.querySelector("textarea").value = page.text;
  });
}

/** "Editing “Pip the Robot”" once the story has a title, "A new story" before. */
function renderHeading() {
  const title = state.doc.title.trim();
  $("#editor-heading").textContent = title ? t("library.editor.heading_title", { title: isolate(title) }) : t("library.editor.heading");
  $("#editor-heading").dir = "auto";
}

function renderSaved() {
  $("#editor-start").hidden = !(state.saved && state.id);
}

function renderAll() {
  $("#edit-title").value = state.doc.title;
  $("#edit-text").value = state.doc.text;
  renderPages();
  $("#edit-rate").value = state.doc.narration.rate;
  $("#edit-pitch").value = state.doc.narration.pitch;
  renderVoices();
  renderQuestions();
  renderSentences();
  renderHeading();
  renderSaved();
}

// The form's words (labels, problems, the voices' names) in the language just picked; what the teacher
// typed is the state's, so nothing of it is lost.
onLanguageChange(() => { if (state.doc) renderAll(); });

// ---- Changes, validation, listening, saving ----

let validateTimer = null;

function changed() {
  saveDraft();
  state.saved = false;
  renderSaved();
  $("#room-started").hidden = true;
  clearTimeout(validateTimer);
  validateTimer = setTimeout(validate, 300);
}

function structural(focus) {
  renderQuestions(focus);
  changed();
}

let validating = 0;

async function validate() {
  const ticket = ++validating;
  try {
    const result = await api.call("POST", "/api/stories/validate", { story: toStory(state.doc) });
    if (ticket !== validating) return;
    state.issues = result.issues;
    const sentences = result.sentences ?? [];
    const same = sentences.length === state.sentences.length && sentences.every((sentence, index) => sentence === state.sentences[index]);
    state.sentences = sentences;
    showIssues();
    // Drawn again only when they changed: a Listen button keeps the focus while the teacher types elsewhere.
    if (!same || !$("#edit-sentences").childElementCount) renderSentences();
    window.storycircle.validated = (window.storycircle.validated ?? 0) + 1;
  } catch (failure) {
    if (ticket === validating) $("#edit-status").textContent = failureText(failure);
  }
}

function showMessage(text, { good = false } = {}) {
  const box = $("#editor-message");
  box.className = good ? "message good" : "message error";
  box.setAttribute("role", good ? "status" : "alert");
  box.textContent = text;
  box.hidden = false;
}

async function save(version = state.version) {
  $("#editor-message").hidden = true;
  state.attempted = true;
  clearTimeout(validateTimer);
  const story = toStory(state.doc);
  try {
    const saved = state.id
      ? await api.call("PUT", `/api/stories/${encodeURIComponent(state.id)}`, { story, version })
      : await api.call("POST", "/api/stories", { story });
    const wasNew = !state.id;
    dropDraft();
    state.id = saved.id;
    state.version = saved.version;
    state.conflict = null;
    state.saved = true;
    state.attempted = false;
    state.issues = state.issues.filter((issue) => issue.severity !== "error");
    showIssues();
    $("#editor-conflict").hidden = true;
    if (wasNew) {
      history.replaceState(null, "", pageLink("/stories/edit", { id: saved.id }));
      try { localStorage.removeItem("storycircle.draft.new"); } catch { /* nothing kept */ }
    }
    renderHeading();
    renderSaved();
    $("#edit-status").textContent = t("library.editor.saved", { version: saved.version });
    showMessage(t("library.editor.saved", { version: saved.version }), { good: true });
  } catch (failure) {
    if (failure instanceof Refused && failure.error.code === ERROR.STORY_CONFLICT) return showConflict(failure.error.current);
    if (failure instanceof Refused && failure.error.issues) {
      // Every problem, listed beside the Save button that was just pressed, each a link to its field.
      state.issues = failure.error.issues;
      showIssues();
      $("#edit-status").textContent = "";
      const box = $("#editor-problems");
      box.scrollIntoView({ block: "nearest" });
      box.focus();
      return;
    }
    $("#edit-status").textContent = failureText(failure);
    showMessage(failureText(failure));
  }
}

function summary(doc) {
  return el("div", {},
    el("p", { dir: "auto" }, el("strong", { text: doc.title })),
    el("p", { class: "muted", dir: "auto", text: (doc.pages ? doc.pages.map((page) => page.text).join(" ") : doc.text).slice(0, 240) }),
    el("ol", {}, doc.quiz.questions.map((q) => el("li", { dir: "auto", text: q.question }))));
}

function showConflict(current) {
  state.conflict = current;
  $("#conflict-text").textContent = t("library.editor.conflict_text", { version: current.version, by: current.updatedBy });
  clear($("#conflict-theirs")).append(summary(fromStored(current.story)));
  clear($("#conflict-yours")).append(summary(state.doc));
  $("#editor-conflict").hidden = false;
  $("#conflict-keep-mine").focus();
  announce($("#conflict-title").textContent);
}

$("#conflict-keep-mine").addEventListener("click", () => save(state.conflict.version));
$("#conflict-keep-theirs").addEventListener("click", () => {
  const current = state.conflict;
  state.doc = fromStored(current.story);
  state.version = current.version;
  state.conflict = null;
  state.saved = true;
  dropDraft();
  $("#editor-conflict").hidden = true;
  renderAll();
  validate();
  $("#edit-title").focus();
  $("#edit-status").textContent = t("library.editor.took_theirs", { version: current.version });
});

$("#editor-form").addEventListener("submit", (event) => {
  event.preventDefault();
  save();
});
$("#edit-title").addEventListener("input", (event) => { state.doc.title = event.target.value; renderHeading(); changed(); });
$("#edit-text").addEventListener("input", (event) => { state.doc.text = event.target.value; changed(); });
$("#edit-voice").addEventListener("change", (event) => { state.doc.narration.voice = event.target.value; stopListening(); changed(); });
$("#edit-more-voices").addEventListener("click", () => {
  state.moreVoices = !state.moreVoices;
  renderVoices();
  announce(t(state.moreVoices ? "library.editor.more_voices_shown" : "library.editor.fewer_voices_shown"));
});
$("#edit-rate").addEventListener("input", (event) => { state.doc.narration.rate = event.target.value; changed(); });
$("#edit-pitch").addEventListener("input", (event) => { state.doc.narration.pitch = event.target.value; changed(); });
$("#edit-add-question").addEventListener("click", () => {
  state.doc.quiz.questions.push(blankQuestion());
  state.undo = null;
  structural(`q-${state.doc.quiz.questions.length - 1}-text`);
});
$("#edit-discard").addEventListener("click", async () => {
  dropDraft();
  await load({ ignoreDraft: true });
  $("#edit-status").textContent = t("library.editor.draft_discarded");
  $("#edit-title").focus();
});
$("#editor-start").addEventListener("click", async () => {
  try {
    await startRoom(state.id);
  } catch (failure) {
    showMessage(failureText(failure));
    $("#edit-status").textContent = failureText(failure);
  }
});
$("#editor-back").href = pageLink("/stories");

async function load({ ignoreDraft = false } = {}) {
  try {
    const menu = await api.call("GET", "/api/stories/voices");
    state.voiceMenu = { voices: menu.voices ?? [], best: menu.best ?? {} };
  } catch { state.voiceMenu = { voices: [], best: {} }; }
  let stored = null;
  if (state.id) {
    try {
      stored = await api.call("GET", `/api/stories/${encodeURIComponent(state.id)}`);
    } catch (failure) {
      showMessage(failureText(failure));
    }
  }
  state.touched.clear();
  state.attempted = false;
  state.undo = null;
  const draft = ignoreDraft ? null : readDraft();
  if (draft?.doc) {
    state.doc = draft.doc;
    state.version = draft.version ?? stored?.version ?? null;
    state.saved = false;
    $("#edit-discard").hidden = false;
    showMessage(t("library.editor.draft_restored"), { good: true });
  } else {
    state.doc = stored ? fromStored(stored.story) : blankStory();
    state.version = stored?.version ?? null;
    state.saved = Boolean(stored);
  }
  renderAll();
  // A blank new story is not told what it lacks before the teacher has typed anything.
  if (stored || draft?.doc) await validate();
  window.storycircle.ready = true;
}

if (!api.signedIn) {
  showMessage("");
  offerSignIn($("#editor-message"), `/stories/edit${location.hash}`);
} else {
  showAccountBar(api);
  load();
}
