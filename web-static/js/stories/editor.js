// The story editor: `/stories/edit#id=STORY&token=ADMIN-TOKEN` (no id: a new story). The teacher writes the
// title, the text (shown as the sentences the server will narrate, each with Listen), the voice, rate and
// pitch, and the questions (2 to 8 options, the right one, an explanation, the time; reordered and deleted
// freely). The server's validator runs as the teacher types and each problem is shown at its field. The
// draft is kept in this browser on every change, so a reload or a dropped connection loses nothing; Save
// sends it with the version it was based on, and a story saved by someone else meanwhile opens the
// conflict screen with both versions. A story with pictures keeps them: its pages are edited one by one
// (each keeps its picture), and its questions and answers keep theirs as they are edited, moved or removed;
// the editor uploads no pictures, so it adds no answer to a question whose answers are pictures.

import { $, el, clear, announce } from "../dom.js";
import { t, setLanguage, browserLanguage, catalogLanguage, LANGUAGES, ownChoice, languagePicker, onLanguageChange } from "../i18n.js";
import { call, failureText, pageLink, token, Refused } from "./api.js";
import { problemText } from "./problems.js";
import { fragmentParameters } from "../connection.js";

// The teacher's own choice on this browser (kept like a child's), else the link's, else the browser's.
const linkLanguage = fragmentParameters().get("lang");
await setLanguage(ownChoice() ?? linkLanguage ?? browserLanguage());
languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? linkLanguage ?? browserLanguage()), "library.language_follow");

const MIN_OPTIONS = 2;
const MAX_OPTIONS = 8;
const state = { id: fragmentParameters().get("id"), version: null, doc: null, issues: [], sentences: [], voices: [], conflict: null };
window.storycircle = { editor: state, listened: [] };

const draftKey = () => `storycircle.draft.${state.id ?? "new"}`;

function blankStory() {
  return {
    title: "",
    text: "",
    narration: { voice: "en", rate: 150, pitch: 50 },
    quiz: { questions: [blankQuestion()] },
  };
}

function blankQuestion() {
  return { question: "", options: ["", ""], answer: 0, time: 20, explanation: "" };
}

const pageText = (page) => (typeof page === "string" ? page : String(page?.text ?? ""));
const optionLabel = (option) => (typeof option === "string" ? option : String(option?.label ?? ""));

/** The editor's form of a stored story: the text as paragraphs (or, with pictures, as its pages, each with
 * its picture), each answer as its option's index, every picture kept as stored. */
function fromStored(story) {
  const pieces = Array.isArray(story.text) ? story.text : null;
  const text = pieces ? pieces.map(pageText).join("\n\n") : String(story.text ?? "");
  const pictured = pieces?.some((page) => typeof page !== "string" && page?.picture);
  return {
    title: story.title ?? "",
    text,
    pages: pictured ? pieces.map((page) => ({ text: pageText(page), picture: typeof page === "string" ? null : page.picture ?? null })) : undefined,
    narration: { voice: story.narration?.voice ?? "en", rate: story.narration?.rate ?? 150, pitch: story.narration?.pitch ?? 50 },
    quizTitle: story.quiz?.title,
    quiz: {
      questions: (story.quiz?.questions ?? []).map((q) => ({
        question: q.question ?? "", options: (q.options ?? []).map(optionLabel), answer: Math.max(0, (q.options ?? []).map(optionLabel).indexOf(q.answer)),
        time: q.time ?? 20, explanation: q.explanation ?? "",
        picture: q.picture ?? undefined,
        optionPictures: (q.options ?? []).some((option) => typeof option !== "string")
          ? q.options.map((option) => (typeof option === "string" ? null : option.picture ?? null)) : undefined,
      })),
    },
  };
}

/** The story file the server takes, from the editor's form. */
function toStory(doc) {
  const quiz = {
    questions: doc.quiz.questions.map((q) => {
      const options = q.optionPictures ? q.options.map((label, index) => ({ label, picture: q.optionPictures[index] })) : q.options;
      const question = { question: q.question, options, answer: q.options[q.answer] ?? "" };
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

// ---- Drawing the form ----

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

function problemNode(id) {
  return document.getElementById(`${id}-problem`);
}

/** Shows each of the validator's issues at its field (errors first); the rest at the top of the form. */
function showIssues() {
  for (const node of document.querySelectorAll(".field-problem")) {
    node.hidden = true;
    node.textContent = "";
  }
  for (const node of document.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
  for (const issue of state.issues) {
    const id = fieldId(issue.path);
    const problem = (id && problemNode(id)) || $("#editor-general-problem");
    if (!problem.hidden && issue.severity !== "error") continue;
    const words = problemText(issue);
    problem.textContent = problem.hidden ? words : `${problem.textContent} ${words}`;
    problem.hidden = false;
    const field = id && document.getElementById(id);
    if (field && issue.severity === "error") field.setAttribute("aria-invalid", "true");
  }
}

function renderSentences() {
  const list = clear($("#edit-sentences"));
  state.sentences.forEach((sentence, index) => {
    list.append(el("li", {},
      el("span", { dir: "auto", text: sentence }),
      el("button", { type: "button", class: "secondary", "data-sentence": index, "aria-label": t("library.editor.listen_to", { number: index + 1 }),
        onclick: () => listen(sentence), text: t("library.editor.listen") })));
  });
  if (!state.sentences.length) list.append(el("li", { class: "muted", text: t("library.editor.no_sentences") }));
}

function renderVoices() {
  const select = clear($("#edit-voice"));
  if (!state.voices.some((voice) => voice.name === state.doc.narration.voice)) state.voices.unshift({ name: state.doc.narration.voice, language: catalogLanguage(state.doc.narration.voice) });
  // Languages without a catalog are named by the browser (Intl.DisplayNames, in the page's language).
  let names = null;
  try { names = new Intl.DisplayNames([document.documentElement.lang || "en"], { type: "language", fallback: "none" }); } catch { names = null; }
  const spoken = (name) => {
    const tag = name.replace(/^piper:/, "").replace(/_/g, "-").split(/[+/]/).pop();
    try { return names?.of(tag.split("-")[0]) ?? null; } catch { return null; }
  };
  for (const voice of state.voices) {
    const language = voice.language ? LANGUAGES[voice.language].name : (spoken(voice.name) ?? t("library.editor.other_language"));
    select.append(el("option", { value: voice.name, text: `${voice.name} · ${language}` }));
  }
  select.value = state.doc.narration.voice;
}

/** Moves option `from` to `to`, with its picture; the right answer stays the same option. */
function moveOption(q, from, to) {
  const [moved] = q.options.splice(from, 1);
  q.options.splice(to, 0, moved);
  if (q.optionPictures) q.optionPictures.splice(to, 0, q.optionPictures.splice(from, 1)[0]);
  if (q.answer === from) q.answer = to;
  else if (from < q.answer && q.answer <= to) q.answer -= 1;
  else if (to <= q.answer && q.answer < from) q.answer += 1;
}

function renderQuestions(focus = null) {
  const box = clear($("#edit-questions"));
  const questions = state.doc.quiz.questions;
  questions.forEach((q, qi) => {
    const optionRows = q.options.map((option, oi) => [el("div", { class: "option-row" },
      el("input", { type: "radio", name: `q-${qi}-answer`, id: `q-${qi}-correct-${oi}`, checked: q.answer === oi,
        "aria-label": t("library.editor.correct_option", { number: oi + 1 }),
        onchange: () => { q.answer = oi; changed(); } }),
      el("input", { type: "text", id: `q-${qi}-option-${oi}`, value: option, maxlength: 120, dir: "auto",
        "aria-label": t("library.editor.option", { number: oi + 1 }), "aria-describedby": `q-${qi}-option-${oi}-problem`,
        oninput: (event) => { q.options[oi] = event.target.value; changed(); } }),
      el("button", { type: "button", class: "quiet", id: `q-${qi}-option-up-${oi}`, disabled: oi === 0,
        "aria-label": t("library.editor.option_up", { number: oi + 1 }), text: "↑",
        onclick: () => { moveOption(q, oi, oi - 1); structural(`q-${qi}-option-up-${Math.max(oi - 1, 1)}`); } }),
      el("button", { type: "button", class: "quiet", id: `q-${qi}-option-down-${oi}`, disabled: oi === q.options.length - 1,
        "aria-label": t("library.editor.option_down", { number: oi + 1 }), text: "↓",
        onclick: () => { moveOption(q, oi, oi + 1); structural(oi + 1 === q.options.length - 1 ? `q-${qi}-option-up-${oi + 1}` : `q-${qi}-option-down-${oi + 1}`); } }),
      el("button", { type: "button", class: "quiet", id: `q-${qi}-remove-${oi}`, disabled: q.options.length <= MIN_OPTIONS,
        "aria-label": t("library.editor.remove_option", { number: oi + 1 }), text: "✕",
        onclick: () => {
          q.options.splice(oi, 1);
          q.optionPictures?.splice(oi, 1);
          if (q.answer >= q.options.length || q.answer === oi) q.answer = Math.max(0, q.answer > oi ? q.answer - 1 : 0);
          else if (q.answer > oi) q.answer -= 1;
          structural(`q-${qi}-option-${Math.min(oi, q.options.length - 1)}`);
        } }),
    ), el("p", { id: `q-${qi}-option-${oi}-problem`, class: "field-problem", hidden: true })]);
    box.append(el("fieldset", { class: "question", id: `q-${qi}` },
      el("legend", { text: t("library.editor.question_number", { number: qi + 1 }) }),
      el("label", { for: `q-${qi}-text`, text: t("library.editor.question_text") }),
      q.picture ? el("p", { class: "muted", dir: "auto", text: t("library.editor.has_picture", { alt: q.picture.alt ?? "" }) }) : null,
      el("input", { type: "text", id: `q-${qi}-text`, value: q.question, maxlength: 300, dir: "auto", "aria-describedby": `q-${qi}-text-problem`,
        oninput: (event) => { q.question = event.target.value; changed(); } }),
      el("p", { id: `q-${qi}-text-problem`, class: "field-problem", hidden: true }),
      el("fieldset", { class: "edit-options", id: `q-${qi}-options`, "aria-describedby": `q-${qi}-options-problem q-${qi}-answer-problem` },
        el("legend", { text: t("library.editor.options") }),
        optionRows.flat(),
        el("p", { id: `q-${qi}-options-problem`, class: "field-problem", hidden: true }),
        el("p", { id: `q-${qi}-answer-problem`, class: "field-problem", hidden: true }),
        q.optionPictures ? el("p", { class: "muted", text: t("library.editor.picture_options") }) : null,
        el("button", { type: "button", class: "secondary", id: `q-${qi}-add-option`, disabled: q.options.length >= MAX_OPTIONS || Boolean(q.optionPictures),
          text: t("library.editor.add_option"),
          onclick: () => { q.options.push(""); structural(`q-${qi}-option-${q.options.length - 1}`); } })),
      el("div", { class: "editor-row" },
        el("div", {},
          el("label", { for: `q-${qi}-time`, text: t("library.editor.time") }),
          el("input", { type: "number", id: `q-${qi}-time`, value: q.time, min: 5, max: 300, "aria-describedby": `q-${qi}-time-problem`,
            oninput: (event) => { q.time = event.target.value; changed(); } }),
          el("p", { id: `q-${qi}-time-problem`, class: "field-problem", hidden: true })),
        el("div", {},
          el("label", { for: `q-${qi}-explanation`, text: t("library.editor.explanation") }),
          el("input", { type: "text", id: `q-${qi}-explanation`, value: q.explanation, maxlength: 500, dir: "auto", "aria-describedby": `q-${qi}-explanation-problem`,
            oninput: (event) => { q.explanation = event.target.value; changed(); } }),
          el("p", { id: `q-${qi}-explanation-problem`, class: "field-problem", hidden: true }))),
      el("div", { class: "question-tools" },
        el("button", { type: "button", class: "quiet", id: `q-${qi}-up`, disabled: qi === 0, text: t("library.editor.move_up"),
          onclick: () => { questions.splice(qi - 1, 0, questions.splice(qi, 1)[0]); structural(`q-${qi - 1}-up`); } }),
        el("button", { type: "button", class: "quiet", id: `q-${qi}-down`, disabled: qi === questions.length - 1, text: t("library.editor.move_down"),
          onclick: () => { questions.splice(qi + 1, 0, questions.splice(qi, 1)[0]); structural(`q-${qi + 1}-down`); } }),
        el("button", { type: "button", class: "quiet", id: `q-${qi}-delete`, disabled: questions.length === 1, text: t("library.editor.delete_question"),
          onclick: () => { questions.splice(qi, 1); structural(questions.length ? `q-${Math.min(qi, questions.length - 1)}-text` : "edit-add-question"); } })),
    ));
  });
  showIssues();
  if (focus) document.getElementById(focus)?.focus();
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

function renderAll() {
  $("#edit-title").value = state.doc.title;
  $("#edit-text").value = state.doc.text;
  renderPages();
  $("#edit-rate").value = state.doc.narration.rate;
  $("#edit-pitch").value = state.doc.narration.pitch;
  renderVoices();
  renderQuestions();
  renderSentences();
  $("#editor-heading").textContent = state.id ? t("library.editor.heading_version", { version: state.version ?? 0 }) : t("library.editor.heading");
}

// The form's words (labels, problems, the voices' languages) in the language just picked; what the teacher
// typed is the state's, so nothing of it is lost.
onLanguageChange(() => { if (state.doc) renderAll(); });

// ---- Changes, validation, listening, saving ----

let validateTimer = null;

function changed() {
  saveDraft();
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
    const result = await call("POST", "/api/stories/validate", { story: toStory(state.doc) });
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

let player = null;

async function listen(sentence) {
  try {
    const result = await call("POST", "/api/stories/listen", {
      text: sentence, voice: state.doc.narration.voice, rate: Number(state.doc.narration.rate), pitch: Number(state.doc.narration.pitch),
    });
    player?.pause();
    player = new Audio(result.audio);
    window.storycircle.listened.push({ sentence, audio: result.audio });
    player.addEventListener("playing", () => { window.storycircle.playing = result.audio; }, { once: true });
    await player.play().catch(() => {});
    announce(t("library.editor.listening"));
  } catch (failure) {
    showMessage(failureText(failure));
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
  const story = toStory(state.doc);
  try {
    const saved = state.id
      ? await call("PUT", `/api/stories/${encodeURIComponent(state.id)}`, { story, version })
      : await call("POST", "/api/stories", { story });
    const wasNew = !state.id;
    dropDraft();
    state.id = saved.id;
    state.version = saved.version;
    state.conflict = null;
    $("#editor-conflict").hidden = true;
    if (wasNew) {
      history.replaceState(null, "", pageLink("/stories/edit", { id: saved.id }));
      try { localStorage.removeItem("storycircle.draft.new"); } catch { /* nothing kept */ }
    }
    $("#editor-heading").textContent = t("library.editor.heading_version", { version: saved.version });
    $("#edit-status").textContent = t("library.editor.saved", { version: saved.version });
    showMessage(t("library.editor.saved", { version: saved.version }), { good: true });
  } catch (failure) {
    if (failure instanceof Refused && failure.error.code === "story_conflict") return showConflict(failure.error.current);
    if (failure instanceof Refused && failure.error.issues) {
      state.issues = failure.error.issues;
      showIssues();
      const first = document.querySelector("[aria-invalid=true]");
      first?.focus();
    }
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
$("#edit-title").addEventListener("input", (event) => { state.doc.title = event.target.value; changed(); });
$("#edit-text").addEventListener("input", (event) => { state.doc.text = event.target.value; changed(); });
$("#edit-voice").addEventListener("change", (event) => { state.doc.narration.voice = event.target.value; changed(); });
$("#edit-rate").addEventListener("input", (event) => { state.doc.narration.rate = event.target.value; changed(); });
$("#edit-pitch").addEventListener("input", (event) => { state.doc.narration.pitch = event.target.value; changed(); });
$("#edit-add-question").addEventListener("click", () => {
  state.doc.quiz.questions.push(blankQuestion());
  structural(`q-${state.doc.quiz.questions.length - 1}-text`);
});
$("#edit-discard").addEventListener("click", async () => {
  dropDraft();
  await load({ ignoreDraft: true });
  $("#edit-status").textContent = t("library.editor.draft_discarded");
  $("#edit-title").focus();
});
$("#editor-back").href = pageLink("/stories");

async function load({ ignoreDraft = false } = {}) {
  try {
    const voices = await call("GET", "/api/stories/voices");
    state.voices = voices.voices;
  } catch { state.voices = []; }
  let stored = null;
  if (state.id) {
    try {
      stored = await call("GET", `/api/stories/${encodeURIComponent(state.id)}`);
    } catch (failure) {
      showMessage(failureText(failure));
    }
  }
  const draft = ignoreDraft ? null : readDraft();
  if (draft?.doc) {
    state.doc = draft.doc;
    state.version = draft.version ?? stored?.version ?? null;
    $("#edit-discard").hidden = false;
    showMessage(t("library.editor.draft_restored"), { good: true });
  } else {
    state.doc = stored ? fromStored(stored.story) : blankStory();
    state.version = stored?.version ?? null;
  }
  renderAll();
  // A blank new story is not told what it lacks before the teacher has typed anything.
  if (stored || draft?.doc) await validate();
  window.storycircle.ready = true;
}

if (!token) {
  showMessage(t("library.link_missing"));
} else {
  load();
}
