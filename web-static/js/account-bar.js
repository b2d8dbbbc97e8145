// The signed-in header of the teacher's and administrators' pages: who is signed in (name and role, in
// words), the way to the administrators' screen for an administrator, "Sign out" (this browser) and "Sign out
// everywhere" (every device of this account: a lost laptop, a shared PC left signed in). A tab that works with
// the laptop's school key shows none of it. And the words a page shows instead of its content when nobody is
// signed in: a sentence and the sign-in link that comes back to the page.

import { $, el, clear } from "./dom.js";
import { t, isolate, onLanguageChange } from "./i18n.js";
import { administers, roleKey, signInLink, signOut, signOutEverywhere } from "./session.js";

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

/** Registers a passkey of this device for the signed-in account (the browser asks for the fingerprint or PIN). */
async function addPasskey(module) {
  const problem = $("#account-bar-problem");
  const status = $("#account-bar-status");
  problem.hidden = true;
  status.textContent = "";
  try {
    await module.registerPasskey(t("account.passkey.this_device"), shown.csrf);
    status.textContent = t("account.passkey.added");
  } catch (failure) {
    problem.textContent = t(failure?.name === "NotAllowedError" ? "account.passkey.cancelled" : "account.passkey.failed");
    problem.hidden = false;
  }
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

/** Puts "sign in to see this page" and the sign-in link (back to `page`) into `node`. */
export function offerSignIn(node, page, key = "account.sign_in_needed") {
  clear(node).append(el("span", { class: "sign-in-needed", text: t(key) }), " ",
    el("a", { id: "sign-in-link", class: "button", href: signInLink(page), text: t("account.sign_in_link") }));
}
