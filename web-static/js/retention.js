// A school's retention rules on the administrators' screen (docs/privacy.md, "Per school"): the form's fields
// from `GET /api/schools/:id/retention`, each box checked against its bounds before anything is sent, and the
// body `PUT` takes. An empty box follows the server's setting.

/** The six kinds, in the order the form shows them (the API's names). */
export const RETENTION_KINDS = ["rooms", "removed_members", "classes", "stories", "pictures", "audit"];

/** The path of a school's rules. */
export function retentionPath(school) {
  return `/api/schools/${encodeURIComponent(school)}/retention`;
}

/** What a box shows for a kind: the school's own number, or empty for the server's setting. */
export function fieldValue(shown, kind) {
  const own = shown?.retention?.[kind];
  return own === null || own === undefined ? "" : String(own);
}

/** The words under a box: the server's setting and the bounds, as catalog keys with their numbers. */
export function fieldHints(shown, kind) {
  const bounds = shown?.bounds?.[kind] ?? { min: 1, max: 3650, keep: false };
  const days = shown?.defaults?.[kind] ?? 0;
  return [
    days === 0 ? { key: "admin.retention.default_keep", params: {} } : { key: "admin.retention.default_days", params: { count: days } },
    { key: bounds.keep ? "admin.retention.bounds_keep" : "admin.retention.bounds", params: { min: bounds.min, max: bounds.max } },
  ];
}

/** The problem of one box's text, as a catalog key with its numbers, or null when it may be sent. */
export function fieldProblem(text, bounds) {
  const value = String(text ?? "").trim();
  if (value === "") return null;
  const days = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  const allowed = (bounds.keep && days === 0) || (days >= bounds.min && days <= bounds.max);
  if (allowed) return null;
  return { key: bounds.keep ? "admin.retention.problem_keep" : "admin.retention.problem", params: { min: bounds.min, max: bounds.max } };
}

/**
 * The body of `PUT` from the boxes' texts (`{kind: text}`), or the first problem with the kind it is in:
 * `{body}` or `{problem: {kind, key, params}}`.
 */
export function retentionDraft(texts, shown) {
  const body = {};
  for (const kind of RETENTION_KINDS) {
    const problem = fieldProblem(texts[kind], shown?.bounds?.[kind] ?? { min: 1, max: 3650, keep: false });
    if (problem) return { problem: { kind, ...problem } };
    const value = String(texts[kind] ?? "").trim();
    body[kind] = value === "" ? null : Number(value);
  }
  return { body };
}

/** The kind a refusal of the server names (`invalid_settings` with `kind`), if any. */
export function refusedKind(failure) {
  const kind = failure?.error?.params?.kind;
  return RETENTION_KINDS.includes(kind) ? kind : null;
}
