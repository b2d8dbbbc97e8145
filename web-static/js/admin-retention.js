// The administrators' screen's part for retention (web-static/js/retention.js decides): a school's rules as
// one box per kind, each with the server's setting and its bounds beneath it, checked before it is sent;
// a box out of its bounds says so next to itself and takes the focus. A school administrator sees their
// school's; the district's administrator (and the school's key) picks the school.

import { $, el, clear, announce } from "./dom.js";
import { t } from "./i18n.js";
import { adminFailure, isDistrictAdmin } from "./accounts.js";
import { RETENTION_KINDS, fieldHints, fieldProblem, fieldValue, refusedKind, retentionDraft, retentionPath } from "./retention.js";

const part = { api: null, state: null, school: "", shown: null };

/** Each kind's label, by its catalog key. */
const KIND_LABELS = {
  rooms: "admin.retention.kind.rooms", removed_members: "admin.retention.kind.removed_members", classes: "admin.retention.kind.classes",
  stories: "admin.retention.kind.stories", pictures: "admin.retention.kind.pictures", audit: "admin.retention.kind.audit",
};

/** Shows the form for the viewer's school (or the first school, with a choice, for the district's). */
export async function startRetention(api, state) {
  Object.assign(part, { api, state });
  const district = isDistrictAdmin(state.viewer);
  const schools = district ? state.schools : state.viewer?.schoolID ? [{ id: state.viewer.schoolID }] : [];
  if (!schools.length) return;
  part.school = schools.some((school) => school.id === part.school) ? part.school : schools[0].id;
  const picker = clear($("#retention-school"));
  for (const school of district ? schools : []) picker.append(el("option", { value: school.id, dir: "auto", text: school.name }));
  picker.value = part.school;
  $("#retention-school-field").hidden = !district;
  $("#retention").hidden = false;
  await loadRetention();
}

async function loadRetention() {
  const status = $("#retention-status");
  status.textContent = t("admin.loading");
  try {
    part.shown = await part.api.call("GET", retentionPath(part.school));
    renderRetention();
    status.textContent = "";
  } catch (failure) {
    $("#retention-form").hidden = true;
    status.textContent = t(adminFailure(failure).key);
  }
}

function renderRetention() {
  const fields = clear($("#retention-fields"));
  for (const kind of RETENTION_KINDS) {
    const id = `retention-${kind}`;
    fields.append(el("div", { class: "retention-field", "data-kind": kind },
      el("label", { for: id, text: t(KIND_LABELS[kind]) }),
      el("div", { class: "retention-input" },
        el("input", { id, type: "text", inputmode: "numeric", autocomplete: "off", dir: "ltr", maxlength: "5", size: "6", value: fieldValue(part.shown, kind),
          "aria-describedby": `${id}-unit ${id}-hint ${id}-problem` }),
        el("span", { id: `${id}-unit`, text: t("admin.retention.days") })),
      el("p", { id: `${id}-hint`, class: "muted", text: hintText(kind) }),
      el("p", { id: `${id}-problem`, class: "field-problem", hidden: true })));
  }
  $("#retention-form").hidden = false;
}

/** Words again in another language, keeping what is typed. */
export function wordRetention() {
  if (!part.shown) return;
  for (const kind of RETENTION_KINDS) {
    const field = $(`[data-kind="${kind}"]`);
    if (!field) continue;
    field.querySelector("label").textContent = t(KIND_LABELS[kind]);
    field.querySelector(".retention-input span").textContent = t("admin.retention.days");
    field.querySelector(".muted").textContent = hintText(kind);
    const problem = fieldProblem($(`#retention-${kind}`).value, part.shown.bounds[kind]);
    const box = $(`#retention-${kind}-problem`);
    if (!box.hidden && problem) box.textContent = t(problem.key, problem.params);
  }
}

function hintText(kind) {
  return fieldHints(part.shown, kind).map((hint) => t(hint.key, hint.params)).join(" ");
}

function showProblem(kind, key, params) {
  const box = $(`#retention-${kind}-problem`);
  box.textContent = t(key, params);
  box.hidden = false;
  const input = $(`#retention-${kind}`);
  input.setAttribute("aria-invalid", "true");
  input.focus();
}

async function saveRetention() {
  const texts = Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, $(`#retention-${kind}`).value]));
  for (const kind of RETENTION_KINDS) {
    $(`#retention-${kind}`).removeAttribute("aria-invalid");
    $(`#retention-${kind}-problem`).hidden = true;
  }
  const status = $("#retention-status");
  status.textContent = "";
  const draft = retentionDraft(texts, part.shown);
  if (draft.problem) return showProblem(draft.problem.kind, draft.problem.key, draft.problem.params);
  try {
    part.shown = await part.api.call("PUT", retentionPath(part.school), draft.body);
    renderRetention();
    status.textContent = t("admin.retention.saved");
    announce(t("admin.retention.saved"));
    $("#retention-save").focus();
  } catch (failure) {
    const kind = refusedKind(failure);
    const problem = kind ? fieldProblem("-", part.shown.bounds[kind]) : null;
    if (problem) return showProblem(kind, problem.key, problem.params);
    status.textContent = t(adminFailure(failure).key);
  }
}

$("#retention-form").addEventListener("submit", (event) => { event.preventDefault(); saveRetention(); });
$("#retention-school").addEventListener("change", (event) => {
  part.school = event.target.value;
  loadRetention();
});
