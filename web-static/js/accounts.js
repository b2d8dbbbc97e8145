// What the administrators' screen and the account-setup page decide without the page: who may do what
// there, which roles an administrator may hand out, and every refusal of the schools', accounts' and setup
// routes as a catalog key with its parameters. Nothing here touches the page at import, so node's test
// runner loads it as it is (Tests/Pages/accounts.test.mjs).

import { Refused } from "./api.js";
import { ERROR } from "./error-codes.js";
import { ACCOUNT_ERRORS } from "./session.js";

/** The viewer of the administrators' screen: a signed-in account, or null for the school's key (the admin token). */
export function isDistrictAdmin(viewer) {
  return viewer === null || viewer?.role === "district_admin";
}

/** Whether the viewer may use the administrators' screen at all. */
export function mayAdminister(viewer) {
  return isDistrictAdmin(viewer) || viewer?.role === "school_admin";
}

/** The roles the viewer may give a new account, lowest first. */
export function assignableRoles(viewer) {
  if (isDistrictAdmin(viewer)) return ["teacher", "school_admin", "district_admin"];
  if (viewer?.role === "school_admin") return ["teacher", "school_admin"];
  return [];
}

/** `GET /api/accounts` for one school ("" for every school the viewer may see). */
export function accountsPath(schoolID) {
  return schoolID ? `/api/accounts?${new URLSearchParams({ school: schoolID })}` : "/api/accounts";
}

/** The catalog key saying whether an account can sign in (in words, never by colour alone). */
export function accountStateKey(account) {
  return account.disabled ? "admin.accounts.state_disabled" : "admin.accounts.state_enabled";
}

/** `PATCH /api/accounts/:id` that turns the account off or on again, based on the version the page shows. */
export function enableChange(account, enabled) {
  return { version: account.version, disabled: !enabled };
}

/** Checks a new account before it is sent: the field that is wrong and its problem's key, or null. */
export function draftProblem({ displayName, login, role, schoolID }, viewer) {
  if (!displayName.trim()) return { field: "account-name", key: "admin.accounts.problem.name_empty" };
  if (!login.trim()) return { field: "account-login", key: "admin.accounts.problem.login_empty" };
  if (!/^[\p{L}\p{N}.\-_@+]{1,128}$/u.test(login.trim())) return { field: "account-login", key: "admin.accounts.problem.login_invalid" };
  if (!assignableRoles(viewer).includes(role)) return { field: "account-role", key: "admin.accounts.problem.role" };
  if (role !== "district_admin" && !schoolID) return { field: "account-school", key: "admin.accounts.problem.school_needed" };
  return null;
}

/** The body of `POST /api/accounts` for the form's values (a district administrator belongs to no school). */
export function accountDraft({ displayName, login, role, schoolID }) {
  return { login: login.trim(), displayName: displayName.trim(), role, schoolID: role === "district_admin" ? null : schoolID };
}

function params(failure) {
  return failure.error?.params ?? {};
}

/** Words for a refusal of the schools' and accounts' routes: `{key, params}`. */
export function adminFailure(failure) {
  if (!(failure instanceof Refused)) return { key: "admin.error.network" };
  const { code } = failure.error;
  switch (code) {
    case ACCOUNT_ERRORS.CONFLICT: case ERROR.VERSION_CONFLICT:
      return { key: "admin.error.conflict", params: { name: failure.error.current?.displayName ?? params(failure).name ?? "" } };
    case "login_taken": return { key: "admin.error.login_taken", params: { login: params(failure).login ?? "" } };
    case ERROR.NAME_TAKEN: case "school_name_taken": return { key: "admin.error.school_name_taken", params: { name: params(failure).name ?? "" } };
    case "school_not_found": return { key: "admin.error.school_not_found" };
    case "account_not_found": return { key: "admin.error.account_not_found" };
    case ERROR.NOT_FOUND: return { key: "admin.error.not_found" };
    case "last_district_admin": return { key: "admin.error.last_district_admin" };
    case ACCOUNT_ERRORS.CSRF_FAILED: return { key: "account.error.csrf" };
    case ACCOUNT_ERRORS.UNAUTHORIZED: return { key: "account.error.signed_out" };
    case ACCOUNT_ERRORS.FORBIDDEN: case ACCOUNT_ERRORS.WRONG_ROLE: return { key: "account.error.not_allowed" };
    case ACCOUNT_ERRORS.RATE_LIMITED: return { key: "admin.error.rate_limited" };
    case ERROR.STORAGE_UNAVAILABLE: return { key: "library.error.storage" };
    default:
      if (failure.status === 400) return { key: "admin.error.invalid" };
      return { key: "library.error.other" };
  }
}

/** Checks the new password before it is sent (the server checks its length and says so). */
export function passwordProblem(password, repeated) {
  if (!password) return "setup.problem.empty";
  if (password !== repeated) return "setup.problem.mismatch";
  return null;
}

/** Words for a refusal of `POST /api/accounts/setup`: `{key, params}`. */
export function setupFailure(failure) {
  if (!(failure instanceof Refused)) return { key: "setup.error.network" };
  const { code } = failure.error;
  const { min, max } = params(failure);
  if (code === ACCOUNT_ERRORS.RATE_LIMITED) return { key: "setup.error.rate_limited" };
  if (/password/.test(code ?? "") || (failure.status === 400 && (min || max))) {
    if (min) return { key: "setup.error.too_short", params: { count: Number(min) } };
    if (max) return { key: "setup.error.too_long", params: { count: Number(max) } };
    return { key: "setup.error.password" };
  }
  if ([401, 403, 404, 410].includes(failure.status)) return { key: "setup.error.link_used" };
  if (failure.status === 400) return { key: "setup.error.link_used" };
  return { key: "setup.error.other" };
}
