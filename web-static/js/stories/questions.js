// The editor's questions: each with its text, its answers (2 to 8, moved and removed freely, each keeping
// its picture), the right answer, the time and the explanation. The right answer is the teacher's choice
// and only theirs: a new question has none, and removing the right answer leaves none (the validator then
// refuses the story at `quiz.questions[N].answer` until one is chosen), never a guess. The chosen answer
// says "✓ right" in words beside it. A removed answer can be brought back (Undo) at its place, with its
// mark and its picture.

import { $, el, clear, announce } from "../dom.js";
import { t, isolate } from "../i18n.js";

export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 8;

export function blankQuestion() {
  return { question: "", options: ["", ""], answer: null, time: 20, explanation: "" };
}

/** Moves option `from` to `to`, with its picture; the right answer stays the same option. */
export function moveOption(q, from, to) {
  const [moved] = q.options.splice(from, 1);
  q.options.splice(to, 0, moved);
  if (q.optionPictures) q.optionPictures.splice(to, 0, q.optionPictures.splice(from, 1)[0]);
  if (q.answer === null) return;
  if (q.answer === from) q.answer = to;
  else if (from < q.answer && q.answer <= to) q.answer -= 1;
  else if (to <= q.answer && q.answer < from) q.answer += 1;
}

/** Removes option `index`; answers what Undo needs to put it back as it was. */
export function removeOption(q, index) {
  const removed = { index, label: q.options[index], picture: q.optionPictures?.[index] ?? null, wasRight: q.answer === index };
  q.options.splice(index, 1);
  q.optionPictures?.splice(index, 1);
  if (q.answer === index) q.answer = null;
  else if (q.answer !== null && q.answer > index) q.answer -= 1;
  return removed;
}

/** Puts a removed option back at its place, with its picture, and its mark when it was the right one
 * and no other answer has been chosen since. */
export function restoreOption(q, removed) {
  const index = Math.min(removed.index, q.options.length);
  q.options.splice(index, 0, removed.label);
  if (q.optionPictures) q.optionPictures.splice(index, 0, removed.picture);
  if (q.answer !== null && q.answer >= index) q.answer += 1;
  if (removed.wasRight && q.answer === null) q.answer = index;
  return index;
}

/** The words that name an answer in a sentence: its text, or "answer N" while it has none. */
function answerName(label, index) {
  return label.trim() ? t("library.editor.quoted", { text: isolate(label.trim()) }) : t("library.editor.option", { number: index + 1 });
}

/**
 * Draws the questions of `editor.state.doc` into `box`. `editor` gives `state` (with `undo`: the last
 * removed answer, {qi, removed}), `changed()` (after an edit), `structural(focus)` (after a change that
 * redraws) and `showIssues()`.
 */
export function renderQuestions(box, editor, focus = null) {
  const { state } = editor;
  clear(box);
  const questions = state.doc.quiz.questions;
  questions.forEach((q, qi) => {
    const optionRows = q.options.map((option, oi) => {
      const right = q.answer === oi;
      return [el("div", { class: right ? "option-row is-right" : "option-row" },
        el("input", { type: "radio", name: `q-${qi}-answer`, id: `q-${qi}-correct-${oi}`, checked: right,
          "aria-label": t("library.editor.correct_option", { number: oi + 1 }),
          onchange: () => { q.answer = oi; state.undo = null; editor.structural(`q-${qi}-correct-${oi}`); } }),
        el("input", { type: "text", id: `q-${qi}-option-${oi}`, value: option, maxlength: 120, dir: "auto",
          "aria-label": t("library.editor.option", { number: oi + 1 }), "aria-describedby": `q-${qi}-option-${oi}-problem`,
          oninput: (event) => { q.options[oi] = event.target.value; editor.changed(); } }),
        // Said in words, beside the answer, not by colour; the radio says it to a screen reader.
        right ? el("span", { class: "right-mark", id: `q-${qi}-right-mark`, "aria-hidden": "true", text: t("library.editor.right_mark") }) : null,
        el("span", { class: "option-tools" },
        el("button", { type: "button", class: "quiet", id: `q-${qi}-option-up-${oi}`, disabled: oi === 0,
          "aria-label": t("library.editor.option_up", { number: oi + 1 }), text: "↑",
          onclick: () => { moveOption(q, oi, oi - 1); state.undo = null; editor.structural(`q-${qi}-option-up-${Math.max(oi - 1, 1)}`); } }),
        el("button", { type: "button", class: "quiet", id: `q-${qi}-option-down-${oi}`, disabled: oi === q.options.length - 1,
          "aria-label": t("library.editor.option_down", { number: oi + 1 }), text: "↓",
          onclick: () => {
            moveOption(q, oi, oi + 1);
            state.undo = null;
            editor.structural(oi + 1 === q.options.length - 1 ? `q-${qi}-option-up-${oi + 1}` : `q-${qi}-option-down-${oi + 1}`);
          } }),
        el("button", { type: "button", class: "quiet", id: `q-${qi}-remove-${oi}`, disabled: q.options.length <= MIN_OPTIONS,
          "aria-label": t("library.editor.remove_option", { number: oi + 1 }), text: "✕",
          onclick: () => {
            const removed = removeOption(q, oi);
            state.undo = { qi, removed };
            // A question that just lost its right answer says so at once.
            if (removed.wasRight) state.touched.add(`q-${qi}-answer`);
            editor.structural(`q-${qi}-undo`);
            announce(t(removed.wasRight ? "library.editor.removed_right" : "library.editor.removed", { option: answerName(removed.label, oi) }));
          } })),
      ), el("p", { id: `q-${qi}-option-${oi}-problem`, class: "field-problem", hidden: true })];
    });
    const undo = state.undo?.qi === qi ? state.undo.removed : null;
    box.append(el("fieldset", { class: "question", id: `q-${qi}` },
      el("legend", { text: t("library.editor.question_number", { number: qi + 1 }) }),
      el("label", { for: `q-${qi}-text`, text: t("library.editor.question_text") }),
      q.picture ? el("p", { class: "muted", dir: "auto", text: t("library.editor.has_picture", { alt: q.picture.alt ?? "" }) }) : null,
      el("input", { type: "text", id: `q-${qi}-text`, value: q.question, maxlength: 300, dir: "auto", "aria-describedby": `q-${qi}-text-problem`,
        oninput: (event) => { q.question = event.target.value; editor.changed(); } }),
      el("p", { id: `q-${qi}-text-problem`, class: "field-problem", hidden: true }),
      el("fieldset", { class: "edit-options", id: `q-${qi}-options`, "aria-describedby": `q-${qi}-options-problem q-${qi}-answer-problem` },
        el("legend", { text: t("library.editor.options") }),
        optionRows.flat(),
        undo ? el("p", { class: "undo-removal", id: `q-${qi}-undo-box` },
          el("span", { text: t(undo.wasRight ? "library.editor.removed_right" : "library.editor.removed", { option: answerName(undo.label, undo.index) }) }),
          el("button", { type: "button", class: "secondary", id: `q-${qi}-undo`, text: t("library.editor.undo"),
            onclick: () => {
              const index = restoreOption(q, undo);
              state.undo = null;
              editor.structural(`q-${qi}-option-${index}`);
              announce(t("library.editor.restored", { option: answerName(undo.label, index) }));
            } })) : null,
        el("p", { id: `q-${qi}-options-problem`, class: "field-problem", hidden: true }),
        el("p", { id: `q-${qi}-answer-problem`, class: "field-problem", hidden: true }),
        q.optionPictures ? el("p", { class: "muted", text: t("library.editor.picture_options") }) : null,
        el("button", { type: "button", class: "secondary", id: `q-${qi}-add-option`, disabled: q.options.length >= MAX_OPTIONS || Boolean(q.optionPictures),
          text: t("library.editor.add_option"),
          onclick: () => { q.options.push(""); state.undo = null; editor.structural(`q-${qi}-option-${q.options.length - 1}`); } })),
      el("label", { for: `q-${qi}-time`, text: t("library.editor.time") }),
      el("input", { type: "number", id: `q-${qi}-time`, value: q.time, min: 5, max: 300, "aria-describedby": `q-${qi}-time-problem`,
        oninput: (event) => { q.time = event.target.value; editor.changed(); } }),
      el("p", { id: `q-${qi}-time-problem`, class: "field-problem", hidden: true }),
      el("label", { for: `q-${qi}-explanation`, text: t("library.editor.explanation") }),
      el("textarea", { id: `q-${qi}-explanation`, rows: 3, maxlength: 500, dir: "auto", class: "grows", "aria-describedby": `q-${qi}-explanation-problem`,
        oninput: (event) => { q.explanation = event.target.value; grow(event.target); editor.changed(); } }),
      el("p", { id: `q-${qi}-explanation-problem`, class: "field-problem", hidden: true }),
      el("div", { class: "question-tools" },
        el("button", { type: "button", class: "quiet", id: `q-${qi}-up`, disabled: qi === 0, text: t("library.editor.move_up"),
          onclick: () => { questions.splice(qi - 1, 0, questions.splice(qi, 1)[0]); state.undo = null; editor.structural(`q-${qi - 1}-up`); } }),
        el("button", { type: "button", class: "quiet", id: `q-${qi}-down`, disabled: qi === questions.length - 1, text: t("library.editor.move_down"),
          onclick: () => { questions.splice(qi + 1, 0, questions.splice(qi, 1)[0]); state.undo = null; editor.structural(`q-${qi + 1}-down`); } }),
        el("button", { type: "button", class: "quiet", id: `q-${qi}-delete`, disabled: questions.length === 1, text: t("library.editor.delete_question"),
          onclick: () => {
            questions.splice(qi, 1);
            state.undo = null;
            editor.structural(questions.length ? `q-${Math.min(qi, questions.length - 1)}-text` : "edit-add-question");
          } })),
    ));
    const explanation = $(`#q-${qi}-explanation`, box);
    explanation.value = q.explanation;
  });
  editor.showIssues();
  // Drawn first, then sized: a textarea measures its text only once it is on the page.
  for (const area of box.querySelectorAll("textarea.grows")) grow(area);
  if (focus) document.getElementById(focus)?.focus();
}

/** A multi-line field as tall as its text, so none of it is hidden. */
export function grow(area) {
  area.style.height = "auto";
  const style = getComputedStyle(area);
  const edges = style.boxSizing === "border-box" ? parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth) : -parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  area.style.height = `${Math.ceil(area.scrollHeight + edges)}px`;
}
