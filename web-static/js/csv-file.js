// The name a downloaded CSV is saved under: the one the server chose (named after the story or class and
// the day, docs/protocol.md "Results"). A download from a fetched blob has no header of its own, so the
// page hands the name to the link that saves it.

/** The file name in a `Content-Disposition` value (`filename*`, else `filename`), or `fallback`. */
export function fileName(disposition, fallback) {
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition ?? "")?.[1];
  if (encoded) {
    try { return decodeURIComponent(encoded); } catch { /* the plain one below */ }
  }
  return /filename="([^"]+)"/i.exec(disposition ?? "")?.[1] ?? fallback;
}
