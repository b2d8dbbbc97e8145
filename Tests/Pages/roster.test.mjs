// The roster import's decisions (web-static/js/roster.js): which chosen files are sent, and every answer and
// problem as a catalog key with what fills it in.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Refused } from "../../web-static/js/api.js";
import { MAX_BYTES, countWords, problemWords, rosterBody, rosterFailure } from "../../web-static/js/roster.js";

const file = (name, text = "x", size = text.length) => ({ name, size, text: async () => text });

test("the roster's files are sent as text; a folder's other files are left out and named", async () => {
  const prepared = await rosterBody([file("manifest.csv", "propertyName,value"), file("users.csv", "sourcedId"), file("notes.txt"), file("photo.csv")], true);
  assert.deepEqual(prepared.body, { files: { "manifest.csv": "propertyName,value", "users.csv": "sourcedId" }, check: true });
  assert.deepEqual(prepared.left, ["notes.txt", "photo.csv"]);
});

test("without a manifest, or larger than the limit, nothing is sent", async () => {
  assert.deepEqual(await rosterBody([file("users.csv")], false), { problem: "admin.roster.no_manifest", left: [] });
  const big = await rosterBody([file("manifest.csv"), file("users.csv", "x", MAX_BYTES)], false);
  assert.equal(big.problem, "admin.roster.too_large");
});

test("a problem is worded at its file, line and column", () => {
  assert.deepEqual(problemWords({ file: "users.csv", line: 4, field: "givenName", code: "value_missing", params: {} }), {
    place: { key: "admin.roster.place_field", params: { file: "users.csv", line: 4, field: "givenName" } },
    key: "admin.roster.problem.value_missing",
    params: { field: "givenName" },
  });
  assert.equal(problemWords({ file: "orgs.csv", line: 3, field: "", code: "csv_unterminated_quote" }).place.key, "admin.roster.place");
  assert.equal(problemWords({ file: "orgs.csv", line: 3, field: "", code: "csv_unterminated_quote" }).key, "admin.roster.problem.csv");
  assert.deepEqual(problemWords({ file: "users.csv", line: 0, field: "", code: "file_missing" }).place, { key: "admin.roster.place_file", params: { file: "users.csv" } });
  assert.equal(problemWords({ file: "", line: 0, field: "", code: "too_many_problems" }).place, null);
  assert.equal(problemWords({ file: "enrollments.csv", line: 9, field: "classSourcedId", code: "unknown_reference", params: { kind: "class", value: "c9" } }).key,
    "admin.roster.problem.unknown_class");
  assert.equal(problemWords({ file: "classes.csv", line: 2, field: "termSourcedIds", code: "unknown_reference", params: { kind: "academic session" } }).key,
    "admin.roster.problem.unknown_session");
  assert.equal(problemWords({ file: "users.csv", line: 2, field: "x", code: "something_new" }).key, "admin.roster.problem.other");
});

test("the counts are what changed, in order", () => {
  assert.deepEqual(countWords({ schoolsCreated: 1, teachersCreated: 0, classesUpdated: 2, childrenRemoved: 1, usersSkipped: 4 }), [
    { key: "admin.roster.count.schools_created", params: { count: 1 } },
    { key: "admin.roster.count.classes_updated", params: { count: 2 } },
    { key: "admin.roster.count.children_removed", params: { count: 1 } },
  ]);
  assert.deepEqual(countWords({}), []);
});

test("a refused import: its problems, or its own words, or none (the screen's general words)", () => {
  const problems = new Refused(422, { code: "invalid_roster", problems: [{ file: "users.csv", line: 2, field: "role", code: "value_invalid", params: { value: "pupil" } }] });
  assert.equal(rosterFailure(problems).problems[0].key, "admin.roster.problem.value_invalid");
  assert.deepEqual(rosterFailure(new Refused(409, { code: "conflict" })), { key: "admin.roster.error.changed" });
  assert.deepEqual(rosterFailure(new Refused(409, { code: "name_taken", params: { name: "4B" } })), { key: "admin.roster.error.class_name_taken", params: { name: "4B" } });
  assert.deepEqual(rosterFailure(new Refused(413, { code: "payload_too_large" })), { key: "admin.roster.too_large" });
  assert.deepEqual(rosterFailure(new Refused(403, { code: "wrong_role" })), { key: "admin.roster.error.district_only" });
  assert.deepEqual(rosterFailure(new Refused(401, { code: "unauthorized" })), { key: null });
  assert.deepEqual(rosterFailure(new TypeError("offline")), { key: null });
});
