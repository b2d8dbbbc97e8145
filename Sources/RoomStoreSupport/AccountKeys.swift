import StoryCircleCore

/// What both stores compare accounts' and schools' names by, so SQLite and PostgreSQL refuse the same ones.
public enum AccountKeys {
    /// A school's name as it is kept unique: trimmed, runs of white space made one space, case-folded
    /// ("North  School" and "north school" are one school).
    public static func schoolName(_ name: String) -> String {
        name.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
    }

    /// A login as the store keeps it (`AccountLogins.normalised`); a draft the routes have not checked
    /// keeps its own text, case-folded, so it can never collide with a checked one by case.
    public static func login(_ text: String) -> String {
        AccountLogins.normalised(text) ?? text.lowercased()
    }
}
