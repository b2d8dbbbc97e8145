// The retention form's decisions (web-static/js/retention.js): what each box shows, the words under it, every
// text checked against its kind's bounds before it is sent, and the body sent.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fieldHints, fieldProblem, fieldValue, refusedKind, retentionDraft, retentionPath, RETENTION_KINDS } from "../../web-static/js/retention.js";

const SHOWN = {
  school: "sch_1",
  retention: { rooms: 14, removed_members: null, classes: 0, stories: null, pictures: null, audit: null },
  defaults: { rooms: 30, removed_members: 30, classes: 0, stories: 0, pictures: 0, audit: 400 },
  bounds: {
    rooms: { min: 1, max: 3650, keep: false }, removed_members: { min: 1, max: 3650, keep: true }, classes: { min: 1, max: 3650, keep: true },
    stories: { min: 1, max: 3650, keep: true }, pictures: { min: 1, max: 3650, keep: true }, audit: { min: 365, max: 3650, keep: false },
  },
};

test("each box shows the school's own number, or nothing where the server's setting applies", () => {
  assert.equal(fieldValue(SHOWN, "rooms"), "14");
  assert.equal(fieldValue(SHOWN, "classes"), "0", "kept until deleted is a choice of its own");
  assert.equal(fieldValue(SHOWN, "audit"), "");
  assert.equal(retentionPath("sch 1"), "/api/schools/sch%201/retention");
  assert.deepEqual(RETENTION_KINDS, Object.keys(SHOWN.bounds));
});

test("the words under a box say the server's setting and the bounds", () => {
  assert.deepEqual(fieldHints(SHOWN, "audit"), [
    { key: "admin.retention.default_days", params: { count: 400 } }, { key: "admin.retention.bounds", params: { min: 365, max: 3650 } },
  ]);
  assert.deepEqual(fieldHints(SHOWN, "stories"), [
    { key: "admin.retention.default_keep", params: {} }, { key: "admin.retention.bounds_keep", params: { min: 1, max: 3650 } },
  ]);
});

test("a box out of its bounds is a problem with the bounds in it; an empty one is the server's setting", () => {
  assert.equal(fieldProblem("", SHOWN.bounds.audit), null);
  assert.equal(fieldProblem(" 400 ", SHOWN.bounds.audit), null);
  assert.deepEqual(fieldProblem("30", SHOWN.bounds.audit), { key: "admin.retention.problem", params: { min: 365, max: 3650 } });
  assert.deepEqual(fieldProblem("0", SHOWN.bounds.rooms), { key: "admin.retention.problem", params: { min: 1, max: 3650 } });
  assert.equal(fieldProblem("0", SHOWN.bounds.classes), null);
  for (const bad of ["1.5", "-1", "ten", "3651", "1e3"]) {
    assert.deepEqual(fieldProblem(bad, SHOWN.bounds.classes), { key: "admin.retention.problem_keep", params: { min: 1, max: 3650 } }, bad);
  }
});

test("the body sends every kind, null for the server's setting, and stops at the first problem", () => {
  const texts = { rooms: "14", removed_members: "", classes: "0", stories: " ", pictures: "90", audit: "" };
  assert.deepEqual(retentionDraft(texts, SHOWN), { body: { rooms: 14, removed_members: null, classes: 0, stories: null, pictures: 90, audit: null } });
  assert.deepEqual(retentionDraft({ ...texts, audit: "7" }, SHOWN), { problem: { kind: "audit", key: "admin.retention.problem", params: { min: 365, max: 3650 } } });
  assert.equal(refusedKind({ error: { params: { kind: "audit" } } }), "audit");
  assert.equal(refusedKind({ error: { params: { kind: "children" } } }), null);
});
