import Glibc

// The C ABI of libcarillonc.so (declared in python/carillon/_native.py for ctypes).
//
// Handles are opaque pointers: a renderer (`carillon_renderer_new`, freed by
// `carillon_renderer_free`) and a result (`carillon_render`, freed by
// `carillon_result_free`); what a result's accessors return lives as long as
// the result. A failing call returns NULL and sets `*kind` (1 MIDI, 2
// SoundFont, 3 option, 4 render, 5 a stream stopped by its consumer) and `*message` (a malloc'd UTF-8 string the
// caller frees with `carillon_string_free`). No global mutable state: a
// renderer may be used from several threads at once; a result from one.

/// Reports `error` through the out-parameters (either may be NULL).
private func report(_ error: CarillonError, _ kind: UnsafeMutablePointer<Int32>?, _ message: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
    kind?.pointee = error.kind
    message?.pointee = strdup(error.message)
}

/// A renderer made from a JSON object of `carillon render`'s long option names.
@_cdecl("carillon_renderer_new")
public func carillon_renderer_new(_ options: UnsafePointer<CChar>?, _ kind: UnsafeMutablePointer<Int32>?,
                                  _ message: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> UnsafeMutableRawPointer? {
    kind?.pointee = 0
    do throws(CarillonError) {
        let renderer = try MemoryRenderer(json: options.map { String(cString: $0) } ?? "{}")
        return Unmanaged.passRetained(renderer).toOpaque()
    } catch {
        report(error, kind, message)
        return nil
    }
}

@_cdecl("carillon_renderer_free")
public func carillon_renderer_free(_ renderer: UnsafeMutableRawPointer?) {
    guard let renderer else { return }
    Unmanaged<MemoryRenderer>.fromOpaque(renderer).release()
}

/// Renders `length` bytes of a Standard MIDI File; `name` names it in
/// messages and the facts, `key` picks its font and draws its augmentation.
@_cdecl("carillon_render")
public func carillon_render(_ renderer: UnsafeMutableRawPointer?, _ midi: UnsafePointer<UInt8>?, _ length: Int64,
                            _ name: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?, _ kind: UnsafeMutablePointer<Int32>?,
                            _ message: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> UnsafeMutableRawPointer? {
    render(renderer, midi, length, name, key, kind, message, stream: nil)
}

private func render(_ renderer: UnsafeMutableRawPointer?, _ midi: UnsafePointer<UInt8>?, _ length: Int64,
                    _ name: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?, _ kind: UnsafeMutablePointer<Int32>?,
                    _ message: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, stream: CallbackSink?) -> UnsafeMutableRawPointer? {
    kind?.pointee = 0
    guard let renderer else { report(.option("no renderer (NULL)"), kind, message); return nil }
    guard length >= 0, midi != nil || length == 0 else { report(.option("no MIDI bytes (NULL, or a negative length)"), kind, message); return nil }
    let bytes = midi.map { Array(UnsafeBufferPointer(start: $0, count: Int(length))) } ?? []
    let name = name.map { String(cString: $0) } ?? "<midi>"
    let key = key.map { String(cString: $0) } ?? name
    let job = Unmanaged<MemoryRenderer>.fromOpaque(renderer).takeUnretainedValue()
    do throws(CarillonError) {
        let result = try job.render(midi: bytes, name: name, key: key, stream: stream)
        return Unmanaged.passRetained(result).toOpaque()
    } catch {
        report(error, kind, message)
        return nil
    }
}

/// Renders as `carillon_render` does, handing the frames to `callback`
/// (interleaved stereo, `frames` of them, `context` passed back) in chunks of
/// `chunk_frames` as they come, on the calling thread; the result holds the
/// facts and labels, no frames. `callback` returns non-zero to stop the
/// render: then NULL, kind 5.
@_cdecl("carillon_render_stream")
public func carillon_render_stream(_ renderer: UnsafeMutableRawPointer?, _ midi: UnsafePointer<UInt8>?, _ length: Int64,
                                   _ name: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?, _ chunkFrames: Int64,
                                   _ callback: (@convention(c) (UnsafePointer<Float>?, Int64, UnsafeMutableRawPointer?) -> Int32)?, _ context: UnsafeMutableRawPointer?,
                                   _ kind: UnsafeMutablePointer<Int32>?,
                                   _ message: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> UnsafeMutableRawPointer? {
    kind?.pointee = 0
    guard let callback else { report(.option("no callback (NULL)"), kind, message); return nil }
    guard chunkFrames > 0, chunkFrames <= 1 << 24 else { report(.option("chunk frames must be 1...16777216"), kind, message); return nil }
    return render(renderer, midi, length, name, key, kind, message,
                  stream: CallbackSink(callback: callback, context: context, chunkFrames: Int(chunkFrames)))
}

private func result(_ handle: UnsafeMutableRawPointer) -> MemoryRender {
    Unmanaged<MemoryRender>.fromOpaque(handle).takeUnretainedValue()
}

/// Stereo frames rendered.
@_cdecl("carillon_result_frames")
public func carillon_result_frames(_ handle: UnsafeMutableRawPointer) -> Int64 { Int64(result(handle).frames) }

/// Copies the interleaved stereo samples into `out` (room for `2 * frames` floats).
@_cdecl("carillon_result_copy_samples")
public func carillon_result_copy_samples(_ handle: UnsafeMutableRawPointer, _ out: UnsafeMutablePointer<Float>, _ frames: Int64) {
    let samples = result(handle).samples.buffer
    let count = min(samples.count, 2 * Int(max(0, frames)))
    if let from = samples.baseAddress, count > 0 { out.update(from: from, count: count) }
}

/// The interleaved stereo samples where the result holds them (`2 * frames`
/// floats; NULL when there are none), valid until `carillon_result_free`:
/// Python's array is made on them, with no copy, and frees the result when it goes.
@_cdecl("carillon_result_samples")
public func carillon_result_samples(_ handle: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Float>? {
    result(handle).samples.base
}

/// The manifest line's facts (JSON), a malloc'd string for `carillon_string_free`.
@_cdecl("carillon_result_facts")
public func carillon_result_facts(_ handle: UnsafeMutableRawPointer) -> UnsafeMutablePointer<CChar>? { strdup(result(handle).facts) }

/// notes.csv (header and rows), a malloc'd string for `carillon_string_free`; NULL without labels.
@_cdecl("carillon_result_notes_csv")
public func carillon_result_notes_csv(_ handle: UnsafeMutableRawPointer) -> UnsafeMutablePointer<CChar>? {
    result(handle).notesCSV.map { strdup($0) } ?? nil
}

@_cdecl("carillon_result_free")
public func carillon_result_free(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<MemoryRender>.fromOpaque(handle).release()
}

@_cdecl("carillon_string_free")
public func carillon_string_free(_ text: UnsafeMutablePointer<CChar>?) { free(text) }
