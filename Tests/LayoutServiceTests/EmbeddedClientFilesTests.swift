import ByteTools
import Foundation
import Testing

@testable import LayoutService

/// The web client compiled into the binary (`scripts/embed-client`) is the client kept in `Resources/client/`.
struct EmbeddedClientFilesTests {
    @Test func theCompiledFilesAreTheKeptFilesByteForByte() throws {
        let folder = ClientRoutesTests.clientFolder
        // The ES module's files are kept in clients/js/, the view's and the form's in Resources/client/.
        let module = ClientRoutesTests.clientFolder.appendingPathComponent("../../../../../clients/js").standardized
        let moduleFiles = ["feedlayout.css", "feedlayout.mjs"]
        let kept = (try FileManager.default.contentsOfDirectory(atPath: folder.path) + moduleFiles).sorted()
        let compiled = EmbeddedClientFiles.files.map(\.name)
        #expect(
            compiled == kept,
            "Sources/LayoutService/Client/EmbeddedClientFiles.swift is out of date with Resources/client: run scripts/embed-client"
        )
        for (name, base64) in EmbeddedClientFiles.files {
            let bytes = try #require(Base64.decode(Array(base64.utf8), alphabet: .standard, padded: true), "\(name)")
            #expect(
                bytes == [UInt8](try Data(contentsOf: (moduleFiles.contains(name) ? module : folder).appendingPathComponent(name))),
                "\(name) differs from the kept \(name): run scripts/embed-client")
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
