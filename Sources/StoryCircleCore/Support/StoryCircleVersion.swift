/// The release, shown by `--version`, `/healthz` and the pages.
public enum StoryCircleVersion {
    public static let current = "0.1.0"
}
