// Friendly generated nicknames, for children who would rather not type one: in the page's language.
import { words } from "./i18n.js";

export function friendlyName() {
  const names = words("names.list");
  return names[Math.floor(Math.random() * names.length)];
}
