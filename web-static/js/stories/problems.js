// The validator's problems in the teacher's language: each code the server's story validator gives
// (Sources/StoryCircleCore/Model/ValidationCode.swift) with its catalog key; the issue's params fill the
// words in. The server's English message is for the command line only.

import { t } from "../i18n.js";

export const PROBLEMS = Object.freeze({
  invalid_json: "library.problem.invalid_json",
  file_unreadable: "library.problem.file_unreadable",
  not_an_object: "library.problem.not_an_object",
  unknown_field: "library.problem.unknown_field",
  unknown_field_typo: "library.problem.unknown_field_typo",
  required: "library.problem.required",
  not_text: "library.problem.not_text",
  empty: "library.problem.empty",
  too_long: "library.problem.too_long",
  not_whole_number: "library.problem.not_whole_number",
  out_of_range: "library.problem.out_of_range",
  text_required: "library.problem.text_required",
  text_empty: "library.problem.text_empty",
  text_wrong_type: "library.problem.text_wrong_type",
  page_text_required: "library.problem.page_text_required",
  sentence_too_long: "library.problem.sentence_too_long",
  too_many_sentences: "library.problem.too_many_sentences",
  too_many_words: "library.problem.too_many_words",
  voice_malformed: "library.problem.voice_malformed",
  voice_not_installed: "library.problem.voice_not_installed",
  quiz_required: "library.problem.quiz_required",
  questions_required: "library.problem.questions_required",
  questions_wrong_type: "library.problem.questions_wrong_type",
  no_questions: "library.problem.no_questions",
  too_many_questions: "library.problem.too_many_questions",
  answer_required: "library.problem.answer_required",
  answer_wrong_type: "library.problem.answer_wrong_type",
  answer_not_an_option: "library.problem.answer_not_an_option",
  answer_not_an_option_case: "library.problem.answer_not_an_option_case",
  options_required: "library.problem.options_required",
  options_wrong_type: "library.problem.options_wrong_type",
  too_few_options: "library.problem.too_few_options",
  too_many_options: "library.problem.too_many_options",
  option_duplicate: "library.problem.option_duplicate",
  options_mixed_pictures: "library.problem.options_mixed_pictures",
  option_label_required: "library.problem.option_label_required",
  option_picture_required: "library.problem.option_picture_required",
  picture_file_required: "library.problem.picture_file_required",
  picture_file_and_id: "library.problem.picture_file_and_id",
  picture_id_malformed: "library.problem.picture_id_malformed",
  picture_alt_required: "library.problem.picture_alt_required",
  picture_not_uploaded: "library.problem.picture_not_uploaded",
  picture_not_stored: "library.problem.picture_not_stored",
  picture_unusable: "library.problem.picture_unusable",
  pictures_unchecked: "library.problem.pictures_unchecked",
  too_many_pictures: "library.problem.too_many_pictures",
  pictures_too_large: "library.problem.pictures_too_large",
});

/** The words for one of the validator's issues (`{code, params, path}`), in the page's language. */
export function problemText(issue) {
  const key = Object.hasOwn(PROBLEMS, issue?.code) ? PROBLEMS[issue.code] : "library.problem.unknown";
  return t(key, issue?.params ?? {});
}

/** Where in the editor a problem is, in words ("Question 2, answer 1"), for the list of problems; null
 * for the story as a whole. */
export function problemPlace(path) {
  const question = String(path ?? "").match(/^quiz\.questions\[(\d+)\](.*)$/);
  if (question) {
    const number = Number(question[1]) + 1;
    const rest = question[2];
    const option = rest.match(/^\.options\[(\d+)\]/);
    if (option) return t("library.editor.where_option", { number, option: Number(option[1]) + 1 });
    const part = {
      ".answer": "library.editor.where_answer",
      ".options": "library.editor.where_options",
      ".time": "library.editor.where_time",
      ".explanation": "library.editor.where_explanation",
    }[rest.match(/^\.\w+/)?.[0]];
    return t(part ?? "library.editor.question_number", { number });
  }
  const page = String(path ?? "").match(/^text\[(\d+)\]/);
  if (page) return t("library.editor.page_number", { number: Number(page[1]) + 1 });
  const narration = String(path ?? "").match(/^narration\.(voice|rate|pitch)$/)?.[1];
  const field = narration
    ? { voice: "library.editor.voice", rate: "library.editor.rate", pitch: "library.editor.pitch" }[narration]
    : path === "title" ? "library.editor.title" : path === "text" ? "library.editor.text" : null;
  return field ? t(field) : null;
}
