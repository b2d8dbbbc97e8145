/// The two operations of Unicode's text-security standards that telling look-alike nicknames apart needs
/// (see `Nickname.matchingKeys`). The core only asks for them: the server hands in ICU's (the
/// `Confusables` target, TR39's own data, not a table of ours), and tests hand in small pure ones.
///
/// Both must be pure functions of their input, and callable from any thread.
public protocol ConfusableSkeleton: Sendable {
    /// `text` under Unicode's NFKC_Casefold: compatibility forms to plain ones (full-width `Ｐ`, `ℙ`,
    /// `①`), case folded (`P` and `ß` to `p` and `ss`), default-ignorable code points removed.
    func foldCase(_ text: String) -> String

    /// TR39's skeleton of `text` (section 4): each character replaced by the prototype it is confusable
    /// with (`0` to `O`, Cyrillic `р` to Latin `p`), in NFD. Two strings look alike when their skeletons
    /// are equal.
    func skeleton(_ text: String) -> String
}
