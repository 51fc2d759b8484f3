import Testing
import Foundation
import Sampling

@Suite struct SoundFontLocatorTests {
    @Test func explicitPath_wins() throws {
        let locator = SoundFontLocator(explicitPath: timGM, environment: "/nope.sf2", repositoryFolder: nil, systemPaths: [])
        #expect(try locator.locate() == timGM)
    }

    @Test func explicitMissing_isAnError_notAFallback() {
        let locator = SoundFontLocator(explicitPath: "/nope.sf2", environment: nil, repositoryFolder: nil, systemPaths: [timGM])
        #expect(throws: SoundFontLocator.Failure.explicitNotFound("/nope.sf2", source: "--soundfont")) { try locator.locate() }
    }

    @Test func environment_beforeRepositoryAndSystem() throws {
        let locator = SoundFontLocator(explicitPath: nil, environment: timGM, repositoryFolder: "/nowhere", systemPaths: ["/usr/share/sounds/sf2/FluidR3_GM.sf2"])
        #expect(try locator.locate() == timGM)
    }

    @Test func repositoryFolder_beforeSystem() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/b.sf2", contents: Data())
        FileManager.default.createFile(atPath: "\(dir)/a.sf3", contents: Data())
        let locator = SoundFontLocator(explicitPath: nil, environment: nil, repositoryFolder: dir, systemPaths: [timGM])
        #expect(try locator.locate() == "\(dir)/a.sf3")
    }

    @Test func systemFonts_inOrder() throws {
        let locator = SoundFontLocator(explicitPath: nil, environment: nil, repositoryFolder: "/nowhere",
                                       systemPaths: ["/nope/default-GM.sf2", timGM])
        #expect(try locator.locate() == timGM)
    }

    @Test func noneFound_listsEveryPlaceAndThePackage() {
        let locator = SoundFontLocator(explicitPath: nil, environment: nil, repositoryFolder: "/repo/soundfonts",
                                       systemPaths: ["/a/default-GM.sf2", "/a/FluidR3_GM.sf2"])
        do {
            _ = try locator.locate()
            Issue.record("expected a failure")
        } catch {
            let text = "\(error)"
            for place in ["--soundfont", "$CARILLON_SOUNDFONT", "/repo/soundfonts", "/a/default-GM.sf2", "/a/FluidR3_GM.sf2",
                          "sudo apt-get install fluid-soundfont-gm"] {
                #expect(text.contains(place), "\(place) missing from: \(text)")
            }
        }
    }
}
