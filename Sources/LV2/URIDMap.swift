import CLilv
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// LV2's URID map and unmap (`urid:map`, `urid:unmap`): one number per URI,
/// the same for every plugin of the process. Plugins call it while they are
/// instantiated (and may from any thread): a short lock, never on Carillon's
/// render thread (which uses the numbers it took before).
public final class URIDMap: Sendable {
    private struct Table {
        var byURI: [String: UInt32] = [:]
        /// Index `id - 1`, as C strings that live as long as the map (unmap hands them out).
        var uris: [UnsafeMutablePointer<CChar>] = []
    }
    private let table = Mutex(Table())

    public init() {}

    deinit { table.withLock { for p in $0.uris { free(p) } } }

    /// The URI's number (1…), made on first use.
    public func map(_ uri: String) -> UInt32 {
        table.withLock { t in
            if let id = t.byURI[uri] { return id }
            t.uris.append(strdup(uri))
            let id = UInt32(t.uris.count)
            t.byURI[uri] = id
            return id
        }
    }

    /// The URI of a number, nil for 0 or one never made.
    public func unmap(_ id: UInt32) -> String? {
        table.withLock { t in id >= 1 && Int(id) <= t.uris.count ? String(cString: t.uris[Int(id) - 1]) : nil }
    }

    fileprivate func unmapPointer(_ id: UInt32) -> UnsafePointer<CChar>? {
        table.withLock { t in id >= 1 && Int(id) <= t.uris.count ? UnsafePointer(t.uris[Int(id) - 1]) : nil }
    }

    /// The C structures a plugin receives; valid as long as this map lives.
    func makeFeatures() -> (map: UnsafeMutablePointer<LV2_URID_Map>, unmap: UnsafeMutablePointer<LV2_URID_Unmap>) {
        let handle = Unmanaged.passUnretained(self).toOpaque()
        let map = UnsafeMutablePointer<LV2_URID_Map>.allocate(capacity: 1)
        map.initialize(to: LV2_URID_Map(handle: handle, map: { handle, uri in
            guard let handle, let uri else { return 0 }
            return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
        }))
        let unmap = UnsafeMutablePointer<LV2_URID_Unmap>.allocate(capacity: 1)
        unmap.initialize(to: LV2_URID_Unmap(handle: handle, unmap: { handle, id in
            guard let handle else { return nil }
            return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().unmapPointer(id)
        }))
        return (map, unmap)
    }
}
