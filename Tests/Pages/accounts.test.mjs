// The administrators' screen's and the account-setup page's decisions (web-static/js/accounts.js): who may do
// what, the bodies sent, and every refusal as a catalog key with what fills it in.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Refused } from "../../web-static/js/api.js";
import {
  accountDraft, accountStateKey, accountsPath, adminFailure, assignableRoles, draftProblem, enableChange, isDistrictAdmin, mayAdminister,
  passwordProblem, setupFailure,
} from "../../web-static/js/accounts.js";

const DISTRICT = { id: "acc_d", role: "district_admin", schoolID: null };
const SCHOOL = { id: "acc_s", role: "school_admin", schoolID: "sch_1" };
const TEACHER = { id: "acc_t", role: "teacher", schoolID: "sch_1" };

test("the school's key and a district administrator manage everything; a school administrator their school; a teacher nothing", () => {
  assert.equal(isDistrictAdmin(null), true, "the admin token is the district administrator's");
  assert.equal(isDistrictAdmin(DISTRICT), true);
  assert.equal(isDistrictAdmin(SCHOOL), false);
  assert.equal(mayAdminister(SCHOOL), true);
  assert.equal(mayAdminister(TEACHER), false);
  assert.equal(mayAdminister(undefined), false);
  assert.deepEqual(assignableRoles(null), ["teacher", "school_admin", "district_admin"]);
  assert.deepEqual(assignableRoles(SCHOOL), ["teacher", "school_admin"]);
  assert.deepEqual(assignableRoles(TEACHER), []);
});

test("a new account is checked field by field before it is sent, and a district administrator is in no school", () => {
  const good = { displayName: " Ana Lima ", login: " ana@school.example ", role: "teacher", schoolID: "sch_1" };
  assert.equal(draftProblem(good, DISTRICT), null);
  assert.deepEqual(accountDraft(good), { login: "ana@school.example", displayName: "Ana Lima", role: "teacher", schoolID: "sch_1" });
  assert.deepEqual(accountDraft({ ...good, role: "district_admin" }).schoolID, null);
  assert.equal(draftProblem({ ...good, displayName: "  " }, DISTRICT).field, "account-name");
  assert.equal(draftProblem({ ...good, login: "" }, DISTRICT).key, "admin.accounts.problem.login_empty");
  assert.equal(draftProblem({ ...good, login: "ana lima" }, DISTRICT).key, "admin.accounts.problem.login_invalid");
  assert.equal(draftProblem({ ...good, login: "x".repeat(129) }, DISTRICT).key, "admin.accounts.problem.login_invalid");
  assert.equal(draftProblem({ ...good, login: "José.Ñ-1_2+3" }, DISTRICT), null, "letters of any language");
  assert.equal(draftProblem({ ...good, role: "district_admin" }, SCHOOL).key, "admin.accounts.problem.role");
  assert.equal(draftProblem({ ...good, schoolID: "" }, DISTRICT).key, "admin.accounts.problem.school_needed");
  assert.equal(draftProblem({ ...good, role: "district_admin", schoolID: "" }, DISTRICT), null);
});

test("turning an account off or on is based on the version the page shows", () => {
  assert.deepEqual(enableChange({ version: 4, disabled: false }, false), { version: 4, disabled: true });
  assert.deepEqual(enableChange({ version: 5, disabled: true }, true), { version: 5, disabled: false });
  assert.equal(accountStateKey({ disabled: true }), "admin.accounts.state_disabled");
  assert.equal(accountStateKey({ disabled: false }), "admin.accounts.state_enabled");
  assert.equal(accountsPath(""), "/api/accounts");
  assert.equal(accountsPath("sch_1&x=1"), "/api/accounts?school=sch_1%26x%3D1");
});

test("every refusal of the administrators' routes has words, a stale change naming the account as it is now", () => {
  const conflict = new Refused(409, { code: "conflict", current: { id: "acc_t", displayName: "Ana", version: 6 } });
  assert.deepEqual(adminFailure(conflict), { key: "admin.error.conflict", params: { name: "Ana" } });
  assert.deepEqual(adminFailure(new Refused(409, { code: "login_taken", params: { login: "ana" } })), { key: "admin.error.login_taken", params: { login: "ana" } });
  assert.equal(adminFailure(new Refused(409, { code: "name_taken", params: { name: "North" } })).key, "admin.error.school_name_taken");
  assert.equal(adminFailure(new Refused(409, { code: "last_district_admin" })).key, "admin.error.last_district_admin");
  assert.equal(adminFailure(new Refused(404, { code: "school_not_found" })).key, "admin.error.school_not_found");
  assert.equal(adminFailure(new Refused(403, { code: "csrf_failed" })).key, "account.error.csrf");
  assert.equal(adminFailure(new Refused(401, { code: "unauthorized" })).key, "account.error.signed_out");
  assert.equal(adminFailure(new Refused(403, { code: "forbidden" })).key, "account.error.not_allowed");
  assert.equal(adminFailure(new Refused(400, { code: "invalid_account" })).key, "admin.error.invalid");
  assert.equal(adminFailure(new Refused(404, { code: "account_not_found" })).key, "admin.error.account_not_found");
  assert.equal(adminFailure(new Refused(404, { code: "not_found" })).key, "admin.error.not_found", "a server without the account routes");
  assert.equal(adminFailure(new Refused(500, { code: "internal_error" })).key, "library.error.other");
  assert.equal(adminFailure(new TypeError("Failed to fetch")).key, "admin.error.network");
});

test("a new password is typed twice; the server's refusals of it and of the link are told apart", () => {
  assert.equal(passwordProblem("", ""), "setup.problem.empty");
  assert.equal(passwordProblem("a long phrase", "a long phrase."), "setup.problem.mismatch");
  assert.equal(passwordProblem("a long phrase", "a long phrase"), null);
  assert.deepEqual(setupFailure(new Refused(400, { code: "invalid_password", params: { min: 12 } })), { key: "setup.error.too_short", params: { count: 12 } });
  assert.deepEqual(setupFailure(new Refused(400, { code: "password_too_long", params: { max: 1024 } })), { key: "setup.error.too_long", params: { count: 1024 } });
  assert.deepEqual(setupFailure(new Refused(400, { code: "weak_password" })), { key: "setup.error.password" });
  assert.deepEqual(setupFailure(new Refused(401, { code: "unauthorized" })), { key: "setup.error.link_used" });
  assert.deepEqual(setupFailure(new Refused(410, { code: "setup_link_used" })), { key: "setup.error.link_used" });
  assert.deepEqual(setupFailure(new Refused(429, { code: "rate_limited" })), { key: "setup.error.rate_limited" });
  assert.deepEqual(setupFailure(new Refused(500, { code: "internal_error" })), { key: "setup.error.other" });
  assert.deepEqual(setupFailure(new TypeError("offline")), { key: "setup.error.network" });
});
