// The administrators' screen, `/admin`: a district administrator (or the school's key on the laptop) lists and
// adds schools; an administrator lists a school's accounts, adds a teacher or an administrator with a role,
// turns an account off and on again, and makes a new one-time setup link (a reset: the account's password and
// sessions end) to hand over, with a button that copies it; it shows an account's passkeys and removes one. Two administrators changing one account: the
// later change, made on what the page showed, is refused (409 `conflict`), the page shows the account as it
// is now and says so in words. The school's retention rules have their part (admin-retention.js).
// docs/protocol.md, "Accounts".

import { $, el, clear, announce } from "./dom.js";
import { t, isolate, setLanguage, browserLanguage, ownChoice, languagePicker, onLanguageChange } from "./i18n.js";
import { schoolApi, Refused } from "./api.js";
import { showAccountBar, offerSignIn } from "./account-bar.js";
import { roleChoiceKey, roleKey } from "./session.js";
import { countWords, rosterBody, rosterFailure } from "./roster.js";
import {
  accountDraft, accountStateKey, accountsPath, adminFailure, assignableRoles, draftProblem, enableChange, isDistrictAdmin, mayAdminister,
} from "./accounts.js";
import { startRetention, wordRetention } from "./admin-retention.js";

const pending = schoolApi();
await setLanguage(ownChoice() ?? browserLanguage());
languagePicker($("#language-picker"), (picked) => setLanguage(picked ?? browserLanguage()), "library.language_follow");
const api = await pending;

// `passkeys`: the accounts whose passkeys are shown, by id (`{loading}` or `{list}`).
const state = { viewer: api.token ? null : api.account, schools: [], accounts: [], school: "", loaded: false, setup: null, passkeys: {} };
window.storycircle = { admin: state };
const dateFormat = () => new Intl.DateTimeFormat(document.documentElement.lang || undefined, { dateStyle: "medium" });

function listOf(answer, name) {
  return Array.isArray(answer) ? answer : answer?.[name] ?? [];
}

function showMessage(words, { good = false } = {}) {
  const box = $("#admin-message");
  box.className = good ? "message good" : "message error";
  box.setAttribute("role", good ? "status" : "alert");
  box.textContent = t(words.key, words.params);
  box.hidden = false;
}

function hideMessage() {
  $("#admin-message").hidden = true;
}

function schoolName(id) {
  if (!id) return t("admin.accounts.no_school");
  return state.schools.find((school) => school.id === id)?.name ?? t("admin.accounts.own_school");
}

// ---- Schools ----

async function loadSchools() {
  if (!isDistrictAdmin(state.viewer)) {
    state.schools = state.viewer?.schoolID ? [{ id: state.viewer.schoolID, name: t("admin.accounts.own_school") }] : [];
    state.school = state.viewer?.schoolID ?? "";
    return;
  }
  state.schools = listOf(await api.call("GET", "/api/schools"), "schools");
  $("#schools").hidden = false;
  renderSchools();
}

function renderSchools() {
  const list = clear($("#school-list"));
  for (const school of state.schools) {
    list.append(el("li", { class: "admin-item", "data-school": school.id },
      el("h3", { dir: "auto", text: school.name }),
      school.createdAt ? el("p", { class: "facts", text: t("admin.schools.added_on", { date: dateFormat().format(new Date(school.createdAt)) }) }) : null));
  }
  $("#schools-status").textContent = state.schools.length ? t("admin.schools.count", { count: state.schools.length }) : t("admin.schools.none");
  renderSchoolChoices();
}

function renderSchoolChoices() {
  const filter = clear($("#accounts-school"));
  const district = isDistrictAdmin(state.viewer);
  if (district) filter.append(el("option", { value: "", text: t("admin.accounts.every_school") }));
  const form = clear($("#account-school"));
  for (const school of state.schools) {
    filter.append(el("option", { value: school.id, dir: "auto", text: school.name }));
    form.append(el("option", { value: school.id, dir: "auto", text: school.name }));
  }
  filter.value = state.school;
  if (state.school) form.value = state.school;
  $("#accounts-filter").hidden = !district;
}

async function addSchool() {
  const input = $("#school-name");
  const name = input.value.trim();
  const problem = $("#school-name-problem");
  if (!name) {
    problem.textContent = t("admin.schools.name_empty");
    problem.hidden = false;
    input.setAttribute("aria-invalid", "true");
    input.focus();
    return;
  }
  problem.hidden = true;
  input.removeAttribute("aria-invalid");
  hideMessage();
  try {
    const school = await api.call("POST", "/api/schools", { name });
    input.value = "";
    state.schools = listOf(await api.call("GET", "/api/schools"), "schools");
    renderSchools();
    startRetention(api, state);
    showMessage({ key: "admin.schools.added", params: { name: isolate(school.name ?? name) } }, { good: true });
    input.focus();
  } catch (failure) {
    const words = adminFailure(failure);
    if (words.key === "admin.error.school_name_taken") {
      problem.textContent = t(words.key, { name: isolate(name) });
      problem.hidden = false;
      input.setAttribute("aria-invalid", "true");
      input.focus();
    } else {
      showMessage(words);
    }
  }
}

// ---- Accounts ----

async function loadAccounts() {
  const ticket = (state.ticket = (state.ticket ?? 0) + 1);
  $("#accounts-status").textContent = t("admin.loading");
  try {
    const accounts = listOf(await api.call("GET", accountsPath(state.school)), "accounts");
    if (ticket !== state.ticket) return;
    state.accounts = accounts;
    renderAccounts();
  } catch (failure) {
    if (ticket === state.ticket) $("#accounts-status").textContent = t(adminFailure(failure).key);
  }
}

function renderAccounts() {
  const list = clear($("#account-list"));
  for (const account of state.accounts) {
    const title = `account-${account.id}`;
    const self = state.viewer?.id === account.id;
    list.append(el("li", { class: `admin-item${account.disabled ? " is-disabled" : ""}`, "data-account": account.id, "aria-labelledby": title },
      el("h3", { id: title, dir: "auto", text: account.displayName }),
      el("p", { class: "facts", text: t("admin.accounts.facts", { login: isolate(account.login), role: t(roleKey(account.role)), school: isolate(schoolName(account.schoolID)) }) }),
      el("p", { class: `account-state ${account.disabled ? "off" : "on"}`, text: t(accountStateKey(account)) }),
      self ? null : el("div", { class: "library-buttons" },
        el("button", { type: "button", class: account.disabled ? "secondary" : "quiet", "data-action": account.disabled ? "enable" : "disable", "aria-describedby": title,
          text: t(account.disabled ? "admin.accounts.enable" : "admin.accounts.disable"), onclick: () => askSetEnabled(account, account.disabled) }),
        el("button", { type: "button", class: "secondary", "data-action": "reset", "aria-describedby": title,
          text: t("admin.accounts.reset"), onclick: () => askReset(account) }),
        el("button", { type: "button", class: "quiet", "data-action": "passkeys", "aria-describedby": title, "aria-expanded": String(Boolean(state.passkeys[account.id])),
          "aria-controls": `passkeys-${account.id}`, text: t("admin.passkeys.show"), onclick: () => togglePasskeys(account) })),
      self ? null : passkeyList(account)));
  }
  $("#accounts-status").textContent = state.accounts.length ? t("admin.accounts.count", { count: state.accounts.length }) : t("admin.accounts.none");
}

// ---- An account's passkeys: seen by name and date (never a key), removed one by one (a lost phone) ----

function passkeyList(account) {
  const shown = state.passkeys[account.id];
  if (!shown) return null;
  const name = isolate(account.displayName);
  const heading = `passkeys-title-${account.id}`;
  const section = el("section", { id: `passkeys-${account.id}`, class: "account-passkeys", "aria-labelledby": heading },
    el("h4", { id: heading, text: t("admin.passkeys.heading", { name }) }));
  if (shown.loading || !shown.list.length) {
    section.append(el("p", { class: "muted", role: "status", text: shown.loading ? t("admin.loading") : t("admin.passkeys.none", { name }) }));
    return section;
  }
  const date = (milliseconds) => dateFormat().format(new Date(milliseconds));
  section.append(el("ul", { class: "passkey-list" }, shown.list.map((passkey) => {
    const label = `passkey-${account.id}-${passkey.id}`;
    return el("li", { "data-passkey": passkey.id },
      el("span", { id: label, class: "passkey-name", dir: "auto", text: passkey.name }),
      el("span", { class: "facts", text: passkey.lastUsedAt
        ? t("admin.passkeys.facts", { created: date(passkey.createdAt), used: date(passkey.lastUsedAt) })
        : t("admin.passkeys.facts_unused", { created: date(passkey.createdAt) }) }),
      el("button", { type: "button", class: "quiet", "data-action": "remove-passkey", "aria-describedby": label, text: t("admin.passkeys.remove"),
        onclick: () => askRemovePasskey(account, passkey) }));
  })));
  return section;
}

async function loadPasskeys(account) {
  try {
    const answer = await api.call("GET", `/api/accounts/${encodeURIComponent(account.id)}/passkeys`);
    if (state.passkeys[account.id]) state.passkeys[account.id] = { list: listOf(answer, "passkeys") };
  } catch (failure) {
    delete state.passkeys[account.id];
    showMessage(adminFailure(failure));
  }
  renderAccounts();
}

async function togglePasskeys(account) {
  hideMessage();
  if (state.passkeys[account.id]) {
    delete state.passkeys[account.id];
    renderAccounts();
    focusAccount(account.id, "passkeys");
    return;
  }
  state.passkeys[account.id] = { loading: true, list: [] };
  renderAccounts();
  focusAccount(account.id, "passkeys");
  await loadPasskeys(account);
  focusAccount(account.id, "passkeys");
  $(`#passkeys-${CSS.escape(account.id)}`)?.scrollIntoView({ block: "nearest" });
}

function askRemovePasskey(account, passkey) {
  confirmFirst(account, { title: "admin.confirm.passkey_title", sentence: "admin.confirm.passkey_text", yes: "admin.confirm.passkey_yes" },
    () => removePasskey(account, passkey), { passkey: isolate(passkey.name) });
}

async function removePasskey(account, passkey) {
  hideMessage();
  try {
    await api.call("DELETE", `/api/accounts/${encodeURIComponent(account.id)}/passkeys/${encodeURIComponent(passkey.id)}`);
    announce(t("admin.passkeys.removed", { name: isolate(account.displayName), passkey: isolate(passkey.name) }));
  } catch (failure) {
    showMessage(adminFailure(failure));
  }
  await loadPasskeys(account);
  const next = $(`#passkeys-${CSS.escape(account.id)} [data-action="remove-passkey"]`);
  if (next) next.focus();
  else focusAccount(account.id, "passkeys");
}

function replaceAccount(account) {
  state.accounts = state.accounts.map((known) => (known.id === account.id ? account : known));
  renderAccounts();
}

function focusAccount(id, action) {
  $(`[data-account="${CSS.escape(id)}"] [data-action="${action}"]`)?.focus();
}

// ---- Asking first: turning an account off and a new password link both sign its person out everywhere ----

let confirming = null;

function confirmFirst(account, { title, sentence, yes }, action, params = {}) {
  confirming = { action, returnTo: document.activeElement };
  const name = isolate(account.displayName);
  $("#admin-confirm-title").textContent = t(title, { name, ...params });
  $("#admin-confirm-text").textContent = t(sentence, { name, ...params });
  $("#admin-confirm-yes").textContent = t(yes);
  $("#admin-confirm").showModal();
  $("#admin-confirm-no").focus();
}

function closeConfirm() {
  const open = confirming;
  confirming = null;
  if ($("#admin-confirm").open) $("#admin-confirm").close();
  return open;
}

$("#admin-confirm-no").addEventListener("click", () => closeConfirm()?.returnTo?.focus?.());
$("#admin-confirm").addEventListener("cancel", () => { confirming = null; });
$("#admin-confirm-yes").addEventListener("click", () => closeConfirm()?.action());

function askSetEnabled(account, enabled) {
  if (enabled) return setEnabled(account, true);
  confirmFirst(account, { title: "admin.confirm.disable_title", sentence: "admin.confirm.disable_text", yes: "admin.confirm.disable_yes" },
    () => setEnabled(account, false));
}

function askReset(account) {
  confirmFirst(account, { title: "admin.confirm.reset_title", sentence: "admin.confirm.reset_text", yes: "admin.confirm.reset_yes" }, () => reset(account));
}

async function setEnabled(account, enabled) {
  hideMessage();
  try {
    const changed = await api.call("PATCH", `/api/accounts/${encodeURIComponent(account.id)}`, enableChange(account, enabled));
    replaceAccount(changed.account ?? changed);
    announce(t(enabled ? "admin.accounts.enabled" : "admin.accounts.disabled", { name: isolate(account.displayName) }));
    focusAccount(account.id, enabled ? "disable" : "enable");
  } catch (failure) {
    const current = failure instanceof Refused ? failure.error.current : null;
    if (current?.id === account.id) {
      replaceAccount(current);
      focusAccount(account.id, current.disabled ? "enable" : "disable");
    }
    showMessage(adminFailure(failure));
  }
}

async function reset(account) {
  hideMessage();
  try {
    const answer = await api.call("POST", `/api/accounts/${encodeURIComponent(account.id)}/reset`);
    showSetupLink(account, answer.setupLink, "admin.setup_link.reset_note");
  } catch (failure) {
    showMessage(adminFailure(failure));
  }
}

function renderRoles() {
  const select = clear($("#account-role"));
  // The role's name as a choice on its own ("Teacher"), not as it reads inside a sentence ("a teacher").
  for (const role of assignableRoles(state.viewer)) select.append(el("option", { value: role, text: t(roleChoiceKey(role)) }));
  select.value = state.role ?? "teacher";
  $("#account-school-field").hidden = select.value === "district_admin" || !isDistrictAdmin(state.viewer);
}

async function addAccount() {
  const values = {
    displayName: $("#account-name").value, login: $("#account-login").value, role: $("#account-role").value,
    schoolID: isDistrictAdmin(state.viewer) ? $("#account-school").value : state.viewer?.schoolID ?? "",
  };
  const problem = draftProblem(values, state.viewer);
  for (const id of ["account-name", "account-login", "account-role", "account-school"]) $(`#${id}`).removeAttribute("aria-invalid");
  const box = $("#account-problem");
  if (problem) return showAccountProblem(problem.key, {}, problem.field);
  box.hidden = true;
  hideMessage();
  try {
    const answer = await api.call("POST", "/api/accounts", accountDraft(values));
    const account = answer.account ?? answer;
    $("#account-name").value = "";
    $("#account-login").value = "";
    await loadAccounts();
    if (answer.setupLink) showSetupLink(account, answer.setupLink, "admin.setup_link.new_note");
    else showMessage({ key: "admin.accounts.added", params: { name: isolate(account.displayName ?? values.displayName) } }, { good: true });
  } catch (failure) {
    const words = adminFailure(failure);
    if (words.key === "admin.error.login_taken") return showAccountProblem(words.key, { login: isolate(values.login.trim()) }, "account-login");
    showMessage(words);
  }
}

function showAccountProblem(key, params, field) {
  const box = $("#account-problem");
  box.textContent = t(key, params);
  box.hidden = false;
  const input = $(`#${field}`);
  input.setAttribute("aria-invalid", "true");
  input.focus();
}

// ---- The setup link to hand over ----

function showSetupLink(account, link, noteKey) {
  state.setup = { name: account.displayName, noteKey };
  $("#setup-link").value = link;
  $("#setup-link-copied").textContent = "";
  wordSetupLink();
  const box = $("#setup-link-box");
  box.hidden = false;
  box.focus();
  announce(t("admin.setup_link.title", { name: isolate(account.displayName) }));
}

function wordSetupLink() {
  if (!state.setup) return;
  $("#setup-link-title").textContent = t("admin.setup_link.title", { name: isolate(state.setup.name) });
  $("#setup-link-note").textContent = t(state.setup.noteKey, { name: isolate(state.setup.name) });
}

async function copySetupLink() {
  const input = $("#setup-link");
  let copied = false;
  try {
    await navigator.clipboard.writeText(input.value);
    copied = true;
  } catch {
    input.select();
    try { copied = document.execCommand("copy"); } catch { copied = false; }
  }
  $("#setup-link-copied").textContent = t(copied ? "admin.setup_link.copied" : "admin.setup_link.copy_by_hand");
  if (!copied) input.select();
}

$("#setup-link-copy").addEventListener("click", copySetupLink);
$("#setup-link-done").addEventListener("click", () => {
  state.setup = null;
  $("#setup-link").value = "";
  $("#setup-link-box").hidden = true;
  $("#account-name").focus();
});
$("#school-form").addEventListener("submit", (event) => { event.preventDefault(); addSchool(); });
$("#account-form").addEventListener("submit", (event) => { event.preventDefault(); addAccount(); });
$("#account-role").addEventListener("change", (event) => { state.role = event.target.value; renderRoles(); });
$("#accounts-school").addEventListener("change", (event) => {
  state.school = event.target.value;
  if (state.school) $("#account-school").value = state.school;
  loadAccounts();
});

// ---- Classes from the roster ----

async function sendRoster(check) {
  const outcome = $("#roster-outcome");
  const chosen = [...$("#roster-files").files];
  hideMessage();
  const prepared = await rosterBody(chosen, check);
  state.roster = { left: prepared.left };
  if (prepared.problem) {
    state.roster.summary = { key: prepared.problem };
  } else {
    $("#roster-check").disabled = $("#roster-import").disabled = true;
    $("#roster-summary").textContent = t(check ? "admin.roster.checking" : "admin.roster.importing");
    outcome.hidden = false;
    try {
      const answer = await api.call("POST", "/api/roster/import", prepared.body);
      const counts = countWords(answer.counts);
      const done = answer.imported ? "admin.roster.imported" : "admin.roster.checked";
      const changed = counts.some((count) => count.key !== "admin.roster.count.other_teachers");
      state.roster.summary = { key: changed ? done : "admin.roster.nothing" };
      state.roster.counts = counts;
      state.roster.newTeachers = answer.imported && answer.counts.teachersCreated > 0;
      if (answer.imported) loadAccounts();
    } catch (failure) {
      const words = rosterFailure(failure);
      if (words.problems) {
        state.roster.summary = { key: "admin.roster.refused", params: { count: words.problems.length } };
        state.roster.problems = words.problems;
      } else {
        state.roster.summary = words.key ? { key: words.key, params: words.params } : adminFailure(failure);
      }
    } finally {
      $("#roster-check").disabled = $("#roster-import").disabled = false;
    }
  }
  renderRoster();
  outcome.hidden = false;
  outcome.focus();
}

function renderRoster() {
  const shown = state.roster;
  if (!shown) return;
  const params = Object.fromEntries(Object.entries(shown.summary.params ?? {}).map(([name, value]) => [name, typeof value === "string" ? isolate(value) : value]));
  $("#roster-summary").textContent = t(shown.summary.key, params) + (shown.newTeachers ? " " + t("admin.roster.new_teachers") : "");
  const counts = clear($("#roster-counts"));
  for (const count of shown.counts ?? []) counts.append(el("li", { text: t(count.key, count.params) }));
  const problems = clear($("#roster-problems"));
  for (const problem of shown.problems ?? []) {
    const isolated = Object.fromEntries(Object.entries(problem.params).map(([name, value]) => [name, isolate(String(value))]));
    const where = problem.place ? t(problem.place.key, Object.fromEntries(Object.entries(problem.place.params).map(([name, value]) => [name, isolate(String(value))]))) : "";
    problems.append(el("li", {}, where ? el("strong", { text: where }) : null, where ? " " : null, t(problem.key, isolated)));
  }
  const left = $("#roster-left");
  left.hidden = !shown.left?.length;
  left.textContent = shown.left?.length ? t("admin.roster.left_out", { names: shown.left.map(isolate).join(", ") }) : "";
}

$("#roster-form").addEventListener("submit", (event) => { event.preventDefault(); sendRoster(false); });
$("#roster-check").addEventListener("click", () => sendRoster(true));

onLanguageChange(() => {
  renderRoster();
  if (!state.loaded) return;
  if (isDistrictAdmin(state.viewer)) renderSchools();
  renderRoles();
  renderAccounts();
  wordSetupLink();
  wordRetention();
});

async function start() {
  const status = $("#admin-status");
  if (!api.signedIn) return offerSignIn(status, "/admin");
  showAccountBar(api);
  // The library and the classes are the teachers' of each school: a district administrator's account has
  // none (the school's key, on the laptop, opens them all).
  if (state.viewer?.role === "district_admin") $(".page-links").hidden = true;
  if (!mayAdminister(state.viewer)) {
    status.textContent = t("admin.not_allowed");
    return;
  }
  try {
    await loadSchools();
  } catch (failure) {
    status.textContent = t(adminFailure(failure).key);
    return;
  }
  if (!isDistrictAdmin(state.viewer)) renderSchoolChoices();
  renderRoles();
  $("#accounts").hidden = false;
  $("#roster").hidden = false;
  status.hidden = true;
  state.loaded = true;
  await Promise.all([loadAccounts(), startRetention(api, state)]);
  state.ready = true;
}

start();
