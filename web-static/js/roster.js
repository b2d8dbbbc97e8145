// The roster import of the administrators' screen (admin.html, "Classes from the roster"): which of the
// chosen files are sent to `POST /api/roster/import`, and the words of its answer (what it made and changed)
// and of each problem it found (at its file, line and column). docs/protocol.md, "Roster import". Nothing
// here touches the page at import, so node's test runner loads it as it is (Tests/Pages/roster.test.mjs).

import { Refused } from "./api.js";
import { ERROR } from "./error-codes.js";

/** The files of a OneRoster 1.2 bundle the server takes (RosterRoutes.fileNames); a folder's others stay here. */
export const ROSTER_FILES = new Set([
  "manifest", "academicSessions", "categories", "classes", "classResources", "courses", "courseResources", "demographics", "enrollments",
  "lineItemLearningObjectiveIds", "lineItems", "lineItemScoreScales", "orgs", "resources", "resultLearningObjectiveIds", "results",
  "resultScoreScales", "roles", "scoreScales", "userProfiles", "userResources", "users",
].map((name) => `${name}.csv`));

/** What the page sends at most (the CLI's limit too). */
export const MAX_BYTES = 16 * 1024 * 1024;

/**
 * The body for the chosen files (`[{ name, size, text() }]`, as an `<input type=file>` gives them): the
 * roster's files as text, the names left out, or the catalog key of why nothing can be sent.
 */
export async function rosterBody(chosen, check) {
  const kept = chosen.filter((file) => ROSTER_FILES.has(file.name));
  const left = chosen.filter((file) => !ROSTER_FILES.has(file.name)).map((file) => file.name);
  if (!kept.some((file) => file.name === "manifest.csv")) return { problem: "admin.roster.no_manifest", left };
  if (kept.reduce((total, file) => total + file.size, 0) > MAX_BYTES) return { problem: "admin.roster.too_large", left };
  const files = {};
  for (const file of kept) files[file.name] = await file.text();
  return { body: { files, check }, left };
}

const PROBLEM_KEYS = {
  manifest_missing: "admin.roster.problem.manifest_missing",
  file_missing: "admin.roster.problem.file_missing",
  mode_invalid: "admin.roster.problem.mode_invalid",
  version_unsupported: "admin.roster.problem.version_unsupported",
  column_missing: "admin.roster.problem.column_missing",
  duplicate_column: "admin.roster.problem.duplicate_column",
  value_missing: "admin.roster.problem.value_missing",
  value_invalid: "admin.roster.problem.value_invalid",
  value_too_long: "admin.roster.problem.value_too_long",
  duplicate_id: "admin.roster.problem.duplicate_id",
  not_your_school: "admin.roster.problem.not_your_school",
  login_invalid: "admin.roster.problem.login_invalid",
  login_taken: "admin.roster.problem.login_taken",
  no_teacher: "admin.roster.problem.no_teacher",
  no_school: "admin.roster.problem.no_school",
  name_invalid: "admin.roster.problem.name_invalid",
  name_empty: "admin.roster.problem.name_empty",
  name_too_long: "admin.roster.problem.name_too_long",
  duplicate_name: "admin.roster.problem.duplicate_name",
  class_too_large: "admin.roster.problem.class_too_large",
  class_name_taken: "admin.roster.problem.class_name_taken",
  too_many_problems: "admin.roster.problem.too_many_problems",
};

// `unknown_reference` says what was looked for: each kind has its own words.
const REFERENCE_KEYS = {
  class: "admin.roster.problem.unknown_class",
  school: "admin.roster.problem.unknown_school",
  user: "admin.roster.problem.unknown_user",
  "academic session": "admin.roster.problem.unknown_session",
};

/**
 * One problem as the page shows it: where (`place`, a key and what fills it in; null for the roster as a
 * whole) and what (`key`, `params`). Values from the files are data: the page isolates them.
 */
export function problemWords(problem) {
  const params = { ...(problem.params ?? {}) };
  let key = PROBLEM_KEYS[problem.code] ?? "admin.roster.problem.other";
  if (problem.code === "unknown_reference") key = REFERENCE_KEYS[params.kind] ?? key;
  if (problem.code?.startsWith("csv_")) key = "admin.roster.problem.csv";
  params.field = problem.field ?? "";
  let place = null;
  if (problem.file && problem.line > 0) {
    place = { key: problem.field ? "admin.roster.place_field" : "admin.roster.place", params: { file: problem.file, line: problem.line, field: problem.field } };
  } else if (problem.file) {
    place = { key: "admin.roster.place_file", params: { file: problem.file } };
  }
  return { place, key, params };
}

const COUNT_KEYS = [
  ["schoolsCreated", "admin.roster.count.schools_created"],
  ["schoolsRenamed", "admin.roster.count.schools_renamed"],
  ["teachersCreated", "admin.roster.count.teachers_created"],
  ["teachersUpdated", "admin.roster.count.teachers_updated"],
  ["teachersDisabled", "admin.roster.count.teachers_disabled"],
  ["classesCreated", "admin.roster.count.classes_created"],
  ["classesUpdated", "admin.roster.count.classes_updated"],
  ["classesLeft", "admin.roster.count.classes_left"],
  ["childrenAdded", "admin.roster.count.children_added"],
  ["childrenRemoved", "admin.roster.count.children_removed"],
  ["otherTeachersNotKept", "admin.roster.count.other_teachers"],
];

/** What an import made and changed (or a check would), as catalog keys with their counts; empty: nothing. */
export function countWords(counts) {
  return COUNT_KEYS.filter(([name]) => (counts?.[name] ?? 0) > 0).map(([name, key]) => ({ key, params: { count: counts[name] } }));
}

/**
 * A refused import: `problems` (each one's words) for a roster with bad rows, else one catalog key for the
 * refusal (null: the administrators' screen words it as any other).
 */
export function rosterFailure(failure) {
  if (!(failure instanceof Refused)) return { key: null };
  const code = failure.error?.code;
  if (code === ERROR.INVALID_ROSTER) return { problems: (failure.error.problems ?? []).map(problemWords) };
  if (code === ERROR.CONFLICT) return { key: "admin.roster.error.changed" };
  if (code === ERROR.NAME_TAKEN) return { key: "admin.roster.error.class_name_taken", params: { name: failure.error.params?.name ?? "" } };
  if (code === ERROR.LOGIN_TAKEN) return { key: "admin.roster.error.login_taken", params: { login: failure.error.params?.login ?? "" } };
  if (code === ERROR.PAYLOAD_TOO_LARGE) return { key: "admin.roster.too_large" };
  // A school administrator: a roster is imported for the whole district.
  if (code === ERROR.WRONG_ROLE) return { key: "admin.roster.error.district_only" };
  return { key: null };
}
