import ArgumentParser

@main
struct FeedLayoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "feedlayout")
}
