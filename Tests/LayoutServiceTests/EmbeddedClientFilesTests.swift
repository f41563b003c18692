import ByteTools
import Foundation
import Testing

@testable import LayoutService

/// The web client compiled into the binary (`scripts/embed-client`) is the client kept in `Resources/client/`.
struct EmbeddedClientFilesTests {
    @Test func theCompiledFilesAreTheKeptFilesByteForByte() throws {
        let folder = ClientRoutesTests.clientFolder
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let compiled = EmbeddedClientFiles.files.map(\.name)
        #expect(
            compiled == kept,
            "Sources/LayoutService/Client/EmbeddedClientFiles.swift is out of date with Resources/client: run scripts/embed-client"
        )
        for (name, base64) in EmbeddedClientFiles.files {
            let bytes = try #require(Base64.decode(Array(base64.utf8), alphabet: .standard, padded: true), "\(name)")
            #expect(
                bytes == [UInt8](try Data(contentsOf: folder.appendingPathComponent(name))),
                "\(name) differs from Resources/client/\(name): run scripts/embed-client")
        }
    }

    @Test func aDamagedCompiledFileIsAnErrorNamingIt() {
        #expect {
            try ClientFiles(embedded: [("feed.js", "not base64!")])
        } throws: { error in
            "\(error)".contains("feed.js") && "\(error)".contains("scripts/embed-client")
        }
    }
}
