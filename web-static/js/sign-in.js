// The sign-in page: `/sign-in#code=ONE-TIME-CODE`, the link `storycircle start` prints for the teacher's own
// screen. The code leaves the address at once; the page trades it (POST /api/sign-in, once: a second use is
// refused) for the room's teacher and projector tokens and the school's key, keeps them in this tab's
// session (page-keys.js) and goes on to the page the server names, with no token in its address.
// Without a code, `/sign-in` is where a teacher or an administrator signs in with their own account
// (password-sign-in.js).

import { $ } from "./dom.js";
import { t, setLanguage, browserLanguage, translatePage } from "./i18n.js";
import { ERROR } from "./error-codes.js";
import { SCHOOL_SLOT, dashboardSlot, fragmentOf, keepToken, teacherSlot } from "./page-keys.js";

await setLanguage(browserLanguage());
translatePage();

const fragment = fragmentOf(location.href);
const code = fragment.get("code") ?? "";
// Out of the address bar and the tab's history before anything else is done with it.
history.replaceState(null, "", location.pathname);

function say(key, params) {
  $("#sign-in-status").textContent = t(key, params);
}

async function signIn() {
  let response;
  let answer;
  try {
    response = await fetch("/api/sign-in", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code }), cache: "no-store", referrerPolicy: "no-referrer",
    });
    answer = await response.json().catch(() => null);
  } catch {
    return say("signin.failed");
  }
  if (!response.ok) {
    if (answer?.error?.code === ERROR.RATE_LIMITED) return say("signin.rate_limited", { seconds: Number(answer.error.params?.seconds ?? 60) });
    if (answer?.error?.code === ERROR.UNAUTHORIZED) return say("signin.used");
    if (answer?.error?.code === ERROR.WRONG_ROLE) return say("signin.this_laptop");
    return say("signin.failed");
  }
  if (answer.room) {
    keepToken(teacherSlot(answer.room), answer.teacherToken);
    keepToken(dashboardSlot(answer.room), answer.dashboardToken);
  }
  keepToken(SCHOOL_SLOT, answer.adminToken);
  // Only a path of this server; replace(), so that Back does not come here again.
  const go = typeof answer.go === "string" && answer.go.startsWith("/") && !answer.go.startsWith("//") ? answer.go : "/";
  location.replace(go);
}

if (code) {
  signIn();
} else {
  const { showPasswordSignIn } = await import("./password-sign-in.js");
  showPasswordSignIn(fragment);
}
