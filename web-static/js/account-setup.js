// `/account-setup#code=ONE-TIME-CODE`: the link an administrator hands over after adding an account or
// resetting its password. The code leaves the address and the tab's history before anything can wait (as
// page-keys.js does with a key); the page keeps it in memory only. The person types a new password twice
// (autocomplete "new-password", so a password manager offers and keeps one); `POST /api/accounts/setup`
// sets it and uses the code up, and the page offers the sign-in.

import { $ } from "./dom.js";
import { t, setLanguage, browserLanguage, ownChoice, languagePicker } from "./i18n.js";
import { fragmentOf } from "./page-keys.js";
import { passwordProblem, setupFailure } from "./accounts.js";
import { Refused } from "./api.js";

const code = fragmentOf(location.href).get("code") ?? "";
history.replaceState(null, "", location.pathname);

const state = { problem: null, busy: false, done: false };
// Refusals about the password itself (its field is marked); the others are about the link.
const PASSWORD_PROBLEMS = new Set(["setup.error.too_short", "setup.error.too_long", "setup.error.password"]);
window.storycircle = { setup: state };

await setLanguage(ownChoice() ?? browserLanguage());
languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? browserLanguage()).then(reword), "library.language_follow");

function showProblem(problem) {
  state.problem = problem;
  const box = $("#setup-error");
  box.hidden = !problem;
  box.textContent = problem ? t(problem.key, problem.params) : "";
  for (const id of ["#setup-password", "#setup-repeat"]) $(id).setAttribute("aria-invalid", problem?.field === id ? "true" : "false");
}

function reword() {
  if (state.problem) $("#setup-error").textContent = t(state.problem.key, state.problem.params);
}

async function submit() {
  if (state.busy) return;
  const password = $("#setup-password").value;
  const repeated = $("#setup-repeat").value;
  const problem = passwordProblem(password, repeated);
  if (problem) {
    const field = problem === "setup.problem.mismatch" ? "#setup-repeat" : "#setup-password";
    showProblem({ key: problem, field });
    $(field).focus();
    return;
  }
  state.busy = true;
  $("#setup-submit").disabled = true;
  showProblem(null);
  try {
    const response = await fetch("/api/accounts/setup", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code, password }),
      credentials: "same-origin", cache: "no-store", referrerPolicy: "no-referrer",
    });
    const answer = await response.json().catch(() => null);
    if (!response.ok) throw new Refused(response.status, answer?.error);
    const login = answer?.account?.login ?? answer?.login;
    if (login) $("#setup-login").value = login;
    state.done = true;
    $("#setup-section").hidden = true;
    $("#setup-done").hidden = false;
    $("#setup-sign-in").focus();
  } catch (failure) {
    const words = setupFailure(failure);
    showProblem({ ...words, field: PASSWORD_PROBLEMS.has(words.key) ? "#setup-password" : null });
    $("#setup-password").focus();
  } finally {
    state.busy = false;
    $("#setup-submit").disabled = false;
  }
}

$("#setup-form").addEventListener("submit", (event) => { event.preventDefault(); submit(); });
$("#setup-show-password").addEventListener("change", (event) => {
  for (const id of ["#setup-password", "#setup-repeat"]) $(id).type = event.target.checked ? "text" : "password";
});

if (!code) {
  $("#setup-status").textContent = t("setup.missing");
} else {
  $("#setup-section").hidden = false;
  $("#setup-password").focus();
}
state.ready = true;
