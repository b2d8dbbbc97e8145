import Testing
@testable import StoryCircleCore

/// A class as a teacher sends it: every problem at its path, nothing cut, look-alike names refused.
@Suite("Class rules")
struct ClassRulesTests {
    let unicode = LookalikeTable()

    func problems(_ name: String, _ children: [ClassRules.RawChild]) -> [ClassRules.Problem] {
        switch ClassRules.check(name: name, children: children, using: unicode) {
        case .success: []
        case .failure(let refusal): refusal.problems
        }
    }

    @Test func aGoodClassIsNormalisedAndChildrenWithoutAPictureGetOneInTurn() throws {
        let draft = try ClassRules.check(name: "  Class   1B ", children: [
            .init(name: " Ada  Lovelace "), .init(name: "Bo", avatar: "emoji:🦊"), .init(name: "Cy"),
        ], using: unicode).get()
        #expect(draft.name == "Class 1B")
        #expect(draft.nameKeys == ["classlb"], "1 and l look alike")
        #expect(draft.children.map(\.name) == ["Ada Lovelace", "Bo", "Cy"])
        #expect(draft.children.map(\.avatar) == ["owl", "emoji:🦊", "bear"])
    }

    @Test func anEmptyClassIsAllowed() throws {
        #expect(try ClassRules.check(name: "Nobody yet", children: [], using: unicode).get().children == [])
    }

    @Test func fiveHundredNamesAreOneProblemWithTheLimit() {
        let children = (0..<500).map { ClassRules.RawChild(name: "Child \($0)") }
        #expect(problems("Big", children) == [ClassRules.Problem(path: "children", code: "class_too_large", params: ["max": "60", "count": "500"])])
        #expect(problems("Just right", Array(children.prefix(60))) == [])
        #expect(problems("One over", Array(children.prefix(61))).map(\.code) == ["class_too_large"])
    }

    @Test func duplicatesAndLookalikesAreRefusedAtTheSecondName() {
        let found = problems("2A", [.init(name: "Ada"), .init(name: "Bo"), .init(name: "\u{0410}da"), .init(name: "ADA"), .init(name: "Ida"), .init(name: "lda")])
        #expect(found == [
            ClassRules.Problem(path: "children[2].name", code: "duplicate_name", params: ["other": "children[0].name", "name": "\u{0410}da"]),
            ClassRules.Problem(path: "children[3].name", code: "duplicate_name", params: ["other": "children[0].name", "name": "ADA"]),
            ClassRules.Problem(path: "children[5].name", code: "duplicate_name", params: ["other": "children[4].name", "name": "lda"]),
        ])
    }

    @Test func namesAndPicturesAreCheckedEachAtItsPath() {
        let long = String(repeating: "a", count: 43)
        let found = problems("   ", [.init(name: ""), .init(name: long), .init(name: "Cy", avatar: "unicorn"), .init(name: "Di", avatar: "emoji:1"), .init(name: "Ed", avatar: "emoji:🦊🦊")])
        #expect(found == [
            ClassRules.Problem(path: "name", code: "name_empty"),
            ClassRules.Problem(path: "children[0].name", code: "name_empty"),
            ClassRules.Problem(path: "children[1].name", code: "name_too_long", params: ["max": "40", "length": "43"]),
            ClassRules.Problem(path: "children[2].avatar", code: "avatar_unknown", params: ["avatar": "unicorn"]),
            ClassRules.Problem(path: "children[3].avatar", code: "avatar_unknown", params: ["avatar": "emoji:1"]),
            ClassRules.Problem(path: "children[4].avatar", code: "avatar_unknown", params: ["avatar": "emoji:🦊🦊"]),
        ])
        #expect(problems(String(repeating: "x", count: 61), []) == [ClassRules.Problem(path: "name", code: "name_too_long", params: ["max": "60", "length": "61"])])
    }

    /// A name of only characters that cannot be shown is not an empty one: the teacher typed something, and
    /// is told what is wrong with it.
    @Test(arguments: ["\u{200B}", "\u{0301}", "\u{2800}\u{2800}", "a\u{0007}b", "\u{200E}"])
    func aNameOfCharactersThatCannotBeShownIsInvalidNotEmpty(_ name: String) {
        #expect(problems(name, [.init(name: name)]) == [
            ClassRules.Problem(path: "name", code: "name_invalid"),
            ClassRules.Problem(path: "children[0].name", code: "name_invalid"),
        ])
        #expect(problems("Class 1B", [.init(name: "Ada"), .init(name: " \t ")]) == [ClassRules.Problem(path: "children[1].name", code: "name_empty")])
    }

    @Test(arguments: ["owl", "bee", "emoji:🦊", "emoji:👩‍🚀", "emoji:🇫🇷", "emoji:❤️"])
    func picturesThatAreAllowed(_ avatar: String) {
        #expect(ClassRules.isAvatar(avatar))
    }

    @Test(arguments: ["", "Owl", "emoji:", "emoji:a", "emoji:1", "emoji:#", "emoji:🦊x", "unicorn", "emoji:❤"])
    func picturesThatAreNot(_ avatar: String) {
        #expect(!ClassRules.isAvatar(avatar))
    }
}
