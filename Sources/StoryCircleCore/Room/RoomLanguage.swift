/// The languages the pages have a message catalog for (web-static/i18n/LANG.json; the catalog test checks
/// that this list and the catalogs agree), and how a voice name picks one.
public enum RoomLanguage {
    public static let available = ["en", "es", "fr", "de", "pt", "ar"]
    public static let fallback = "en"

    /// The language a room's screens speak: the teacher's choice, else the language of the voice the
    /// story is read with (the room's voice, or the story's), else English.
    public static func of(settings: RoomSettings, story: Story) -> String {
        settings.language ?? of(voice: settings.voice ?? story.narration.voice) ?? fallback
    }

    /// The catalog language of a voice or a language tag: its first part ("es-419" → "es", "pt-br" → "pt",
    /// "roa/es" → "es", a Piper voice "piper:es_ES-davefx-medium" → "es"), or nil when the pages have no
    /// catalog for it.
    public static func of(voice: String) -> String? {
        let name = voice.lowercased().split(whereSeparator: { $0 == "/" || $0 == ":" }).last.map(String.init) ?? ""
        let primary = name.split(whereSeparator: { $0 == "-" || $0 == "_" || $0 == "+" }).first.map(String.init) ?? ""
        return available.contains(primary) ? primary : nil
    }
}
