// `/sign-in` without a one-time code: a teacher or an administrator signs in with their login and password
// (POST /api/session; the server answers the same for an unknown login, a wrong password and a disabled
// account, and throttles guesses), or with a passkey when this server has them. The form is one a password
// manager fills (autocomplete "username" and "current-password"); a refusal is said in words under the
// fields and read out (role="alert"); after a throttled try the button waits, saying how long. Signed in,
// the page goes on to where the teacher was going (`#next=/classes`, only one of our pages) or to the
// library (an administrator: the administrators' screen).

import { $ } from "./dom.js";
import { t, setLanguage, browserLanguage, ownChoice, languagePicker } from "./i18n.js";
import { landingPage, signIn, signInFailure } from "./session.js";

const state = { busy: false, waitUntil: 0, timer: null, next: null, failure: null };
window.storycircle = { signIn: state };

/** Shows the form (the one-time-link part of the page stays silent); `fragment`: the address's `#…` parameters. */
export async function showPasswordSignIn(fragment) {
  state.next = fragment.get("next");
  await setLanguage(ownChoice() ?? browserLanguage());
  languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? browserLanguage()).then(reword), "library.language_follow");
  $("#sign-in-language").hidden = false;
  const out = fragment.get("signed_out");
  say(out === "everywhere" ? "account.signed_out_everywhere" : out ? "account.signed_out" : null);
  $("#password-sign-in").hidden = false;
  $("#password-form").addEventListener("submit", (event) => { event.preventDefault(); submit(); });
  $("#sign-in-show-password").addEventListener("change", (event) => { $("#sign-in-password").type = event.target.checked ? "text" : "password"; });
  offerPasskeys();
  $("#sign-in-login").focus();
  state.ready = true;
}

function say(key) {
  const status = $("#sign-in-status");
  status.textContent = key ? t(key) : "";
  status.hidden = !key;
}

function showProblem(problem) {
  state.failure = problem;
  const box = $("#sign-in-error");
  box.hidden = !problem;
  box.textContent = problem ? t(problem.key, problem.params) : "";
  for (const field of ["#sign-in-login", "#sign-in-password"]) {
    const input = $(field);
    if (problem) {
      input.setAttribute("aria-describedby", "sign-in-error");
    } else {
      input.removeAttribute("aria-describedby");
    }
  }
}

function reword() {
  if (state.failure) $("#sign-in-error").textContent = t(state.failure.key, state.failure.params);
}

async function submit() {
  if (state.busy || Date.now() < state.waitUntil) return;
  const login = $("#sign-in-login").value.trim();
  const password = $("#sign-in-password").value;
  if (!login || !password) {
    showProblem({ key: login ? "account.sign_in.password_needed" : "account.sign_in.login_needed" });
    $(login ? "#sign-in-password" : "#sign-in-login").focus();
    return;
  }
  state.busy = true;
  $("#sign-in-submit").disabled = true;
  showProblem(null);
  try {
    const session = await signIn(login, password);
    location.replace(landingPage(session.account, state.next));
    return;
  } catch (failure) {
    const problem = signInFailure(failure);
    showProblem(problem);
    if (failure?.error?.code === "rate_limited") holdBack(failure.retryAfter);
    // A wrong password is typed again; the login stays.
    $("#sign-in-password").value = "";
    $("#sign-in-password").focus();
  } finally {
    state.busy = false;
    if (Date.now() >= state.waitUntil) $("#sign-in-submit").disabled = false;
  }
}

/** After a throttled try the button waits as long as the server said, then comes back by itself. */
function holdBack(seconds) {
  state.waitUntil = Date.now() + seconds * 1000;
  clearTimeout(state.timer);
  state.timer = setTimeout(() => {
    $("#sign-in-submit").disabled = false;
    showProblem({ key: "account.sign_in.try_again_now" });
  }, seconds * 1000);
}

/**
 * The passkey button, when this browser can use passkeys and this server offers them: the passkeys module
 * (web-static/js/passkeys.js) is there only on a server with the passkey routes. It exports
 * `signInWithPasskey()`, answering `{account, csrf}` as a password sign-in does or throwing `Refused`.
 */
async function offerPasskeys() {
  if (!globalThis.PublicKeyCredential) return;
  let passkeys;
  try {
    passkeys = await import("./passkeys.js");
  } catch {
    return;
  }
  if (typeof passkeys.signInWithPasskey !== "function") return;
  $("#passkey-choice").hidden = false;
  $("#passkey-sign-in").addEventListener("click", async () => {
    if (state.busy) return;
    state.busy = true;
    showProblem(null);
    try {
      const session = await passkeys.signInWithPasskey();
      location.replace(landingPage(session.account, state.next));
    } catch (failure) {
      // The browser's own passkey window was closed or found no passkey (NotAllowedError): said kindly.
      if (failure?.name === "NotAllowedError") showProblem({ key: "account.sign_in.passkey_cancelled" });
      else if (failure?.name !== "AbortError") showProblem(signInFailure(failure));
    } finally {
      state.busy = false;
    }
  });
}
