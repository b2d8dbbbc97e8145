/// What kind of problem a `ValidationIssue` is, stable across releases and languages: the pages word
/// each one from their catalogs (`story.problem.CODE`, with the issue's `params`), so a teacher reads
/// the validator in their own language while the CLI keeps the English `message`.
public enum ValidationCode: String, Sendable, CaseIterable, Codable {
    // The document as a whole.
    case invalidJSON = "invalid_json"
    case fileUnreadable = "file_unreadable"
    case notAnObject = "not_an_object"
    case unknownField = "unknown_field"
    case unknownFieldTypo = "unknown_field_typo"
    // Any text or number field.
    case required = "required"
    case notText = "not_text"
    case empty = "empty"
    case tooLong = "too_long"
    case notWholeNumber = "not_whole_number"
    case outOfRange = "out_of_range"
    // The story text.
    case textRequired = "text_required"
    case textEmpty = "text_empty"
    case textWrongType = "text_wrong_type"
    case pageTextRequired = "page_text_required"
    case sentenceTooLong = "sentence_too_long"
    case tooManySentences = "too_many_sentences"
    case tooManyWords = "too_many_words"
    // The voice.
    case voiceMalformed = "voice_malformed"
    case voiceNotInstalled = "voice_not_installed"
    // The quiz and its questions.
    case quizRequired = "quiz_required"
    case questionsRequired = "questions_required"
    case questionsWrongType = "questions_wrong_type"
    case noQuestions = "no_questions"
    case tooManyQuestions = "too_many_questions"
    case answerRequired = "answer_required"
    case answerWrongType = "answer_wrong_type"
    case answerNotAnOption = "answer_not_an_option"
    case answerNotAnOptionCase = "answer_not_an_option_case"
    case optionsRequired = "options_required"
    case optionsWrongType = "options_wrong_type"
    case tooFewOptions = "too_few_options"
    case tooManyOptions = "too_many_options"
    case optionDuplicate = "option_duplicate"
    // Pictures.
    case optionsMixedPictures = "options_mixed_pictures"
    case optionLabelRequired = "option_label_required"
    case optionPictureRequired = "option_picture_required"
    case pictureFileRequired = "picture_file_required"
    case pictureFileAndID = "picture_file_and_id"
    case pictureIDMalformed = "picture_id_malformed"
    case pictureAltRequired = "picture_alt_required"
    case pictureNotUploaded = "picture_not_uploaded"
    case pictureNotStored = "picture_not_stored"
    case pictureUnusable = "picture_unusable"
    case picturesUnchecked = "pictures_unchecked"
    case tooManyPictures = "too_many_pictures"
    case picturesTooLarge = "pictures_too_large"
}
