// The signed-in header of the teacher's and administrators' pages: who is signed in (name and role, in
// words), the way to the administrators' screen for an administrator, "Sign out" (this browser) and "Sign out
// everywhere" (every device of this account: a lost laptop, a shared PC left signed in). A tab that works with
// the laptop's school key shows none of it. And the words a page shows instead of its content when nobody is
// signed in: a sentence and the sign-in link that comes back to the page.

import { $, el, clear } from "./dom.js";
import { t, isolate, onLanguageChange } from "./i18n.js";
import { ERROR } from "./error-codes.js";
import { administers, listHeadingKey, roleKey, signInFailure, signInLink, signOut, signOutEverywhere } from "./session.js";

let shown = null;
// The passkeys module, on a server that has passkeys (web-static/js/passkeys.js): looked for once.
let passkeys = null;

function passkeysModule() {
  if (!globalThis.PublicKeyCredential) return Promise.resolve(null);
  passkeys ??= import("./passkeys.js").then((module) => (typeof module.registerPasskey === "function" ? module : null), () => null);
  return passkeys;
}

/** Fills `#account-bar` for the session `api` holds (nothing for a key or nobody). */
export function showAccountBar(api) {
  const bar = $("#account-bar");
  if (!bar || !api?.account || api.token) return;
  shown = api;
  render(bar);
}

function render(bar) {
  const { account, csrf } = shown;
  // The server answers /admin at /admin/ as well (the web server's mount adds the slash).
  const onAdmin = location.pathname.replace(/\/+$/, "") === "/admin";
  const parts = [
    el("span", { id: "account-who", class: "account-who", text: t("account.bar.who", { name: isolate(account.displayName || account.login), role: t(roleKey(account.role)) }) }),
    administers(account) && !onAdmin ? el("a", { id: "account-admin", class: "button secondary", href: "/admin", text: t("account.bar.admin") }) : null,
    el("button", { id: "account-sign-out", type: "button", class: "quiet", text: t("account.bar.sign_out"), onclick: () => leave(() => signOut(csrf), "out") }),
    el("button", { id: "account-sign-out-everywhere", type: "button", class: "quiet", text: t("account.bar.sign_out_everywhere"),
      onclick: () => leave(() => signOutEverywhere(csrf), "everywhere") }),
    el("span", { id: "account-bar-problem", class: "field-problem", role: "alert", hidden: true }),
    el("span", { id: "account-bar-status", class: "account-bar-status", role: "status" }),
  ];
  clear(bar).append(...parts.filter(Boolean));
  bar.hidden = false;
  passkeysModule().then((module) => {
    if (!module || $("#account-add-passkey")) return;
    $("#account-sign-out").before(el("button", { id: "account-add-passkey", type: "button", class: "secondary", text: t("account.passkey.add"),
      onclick: () => addPasskey(module) }));
  });
}

/**
 * Registers a passkey of this device for the signed-in account (the browser asks for the fingerprint or PIN).
 * A sign-in older than five minutes is not enough on its own: the server asks for the password
 * (`recent_sign_in_needed`), and the bar shows a password field; an account without one signs in again.
 */
async function addPasskey(module, password) {
  const problem = $("#account-bar-problem");
  const status = $("#account-bar-status");
  problem.hidden = true;
  status.textContent = "";
  try {
    await module.registerPasskey(t("account.passkey.this_device"), shown.csrf, { password });
    $("#account-passkey-form")?.remove();
    status.textContent = t("account.passkey.added");
    $("#account-add-passkey")?.focus();
  } catch (failure) {
    const reason = failure?.error?.code === ERROR.RECENT_SIGN_IN_NEEDED ? failure.error.reason : null;
    if (reason === "password_needed" || reason === "password_wrong") {
      askPassword(module, reason === "password_wrong");
      return;
    }
    $("#account-passkey-form")?.remove();
    if (reason === "sign_in_again") {
      problem.replaceChildren(t("account.passkey.sign_in_again"), " ",
        el("a", { id: "account-passkey-sign-in", class: "button secondary", href: signInLink(location.pathname), text: t("account.sign_in_link") }));
    } else if (failure?.error?.code === ERROR.RATE_LIMITED) {
      const words = signInFailure(failure);
      problem.textContent = t(words.key, words.params);
    } else {
      problem.textContent = t(failure?.name === "NotAllowedError" ? "account.passkey.cancelled" : "account.passkey.failed");
    }
    problem.hidden = false;
  }
}

/** The password field the server asked for, in the bar (again, marked, after a wrong one). */
function askPassword(module, wrong) {
  let form = $("#account-passkey-form");
  if (!form) {
    form = el("form", { id: "account-passkey-form", class: "account-passkey-form", novalidate: true },
      el("p", { id: "account-passkey-why", text: t("account.passkey.password_needed") }),
      el("label", { for: "account-passkey-password", text: t("account.sign_in.password") }),
      el("input", { id: "account-passkey-password", type: "password", autocomplete: "current-password", dir: "ltr", maxlength: "1024",
        required: true, "aria-describedby": "account-passkey-why" }),
      el("button", { id: "account-passkey-confirm", type: "submit", text: t("account.passkey.confirm") }),
      el("button", { id: "account-passkey-cancel", type: "button", class: "quiet", text: t("controls.cancel"),
        onclick: () => { form.remove(); $("#account-add-passkey")?.focus(); } }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const field = $("#account-passkey-password");
      if (!field.value) {
        field.setAttribute("aria-invalid", "true");
        field.focus();
        return;
      }
      addPasskey(module, field.value);
    });
    $("#account-bar").append(form);
  }
  const field = $("#account-passkey-password");
  field.value = "";
  field.setAttribute("aria-invalid", wrong ? "true" : "false");
  const problem = $("#account-bar-problem");
  problem.textContent = wrong ? t("account.passkey.password_wrong") : "";
  problem.hidden = !wrong;
  field.focus();
}

async function leave(call, how) {
  const problem = $("#account-bar-problem");
  problem.hidden = true;
  try {
    await call();
  } catch (failure) {
    // A session that had ended already is signed out all the same.
    if (failure?.status !== 401) {
      problem.textContent = t("account.bar.sign_out_failed");
      problem.hidden = false;
      return;
    }
  }
  location.replace(`/sign-in#${new URLSearchParams({ signed_out: how })}`);
}

onLanguageChange(() => {
  const bar = $("#account-bar");
  if (shown && bar) render(bar);
});

/**
 * For a district administrator on a teacher's page (the library, the classes), whose content is the teachers'
 * of each school: puts what the page is for and the link to the administrators' screen into `node`, and
 * answers true. False (and nothing changed) for anybody else.
 */
export function offerAdminScreen(node, api, id) {
  if (api?.token || api?.account?.role !== "district_admin") return false;
  clear(node).append(el("span", { text: t("account.error.district_admin") }), " ",
    el("a", { id, class: "button secondary", href: "/admin", text: t("account.go_admin") }));
  return true;
}

/** Words the heading `node` of the library or the class list (`page`) for who is looking (`listHeadingKey`). */
export function nameListHeading(node, page, api) {
  node.dataset.i18n = listHeadingKey(page, api);
  node.textContent = t(node.dataset.i18n);
}

/** Puts "sign in to see this page" and the sign-in link (back to `page`) into `node`. */
export function offerSignIn(node, page, key = "account.sign_in_needed") {
  clear(node).append(el("span", { class: "sign-in-needed", text: t(key) }), " ",
    el("a", { id: "sign-in-link", class: "button", href: signInLink(page), text: t("account.sign_in_link") }));
}
