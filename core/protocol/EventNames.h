// The worker event protocol's names (docs/protocol.md): each line's "event" value, and the
// keys every line shares. Spelled here and nowhere else; the events' own keys live in their .cpp.
#pragma once

namespace halo::protocol {

namespace names {
inline constexpr char hello[] = "hello";
inline constexpr char layout[] = "layout";
inline constexpr char step[] = "step";
inline constexpr char eval[] = "eval";
inline constexpr char checkpoint[] = "checkpoint";
inline constexpr char error[] = "error";
inline constexpr char done[] = "done";
inline constexpr char heartbeat[] = "heartbeat";              // every few seconds; consumed by the launcher
inline constexpr char exchange[] = "exchange";                // halo exchange time per layer, once
inline constexpr char memory_timeline[] = "memory_timeline";  // live bytes through one step, once
inline constexpr char log[] = "log";                          // the launcher's pseudo-event for a line that is not JSON
}  // namespace names

namespace keys {
inline constexpr char event[] = "event";  // the event's name, on every line
inline constexpr char rank[] = "rank";    // the rank; on a tagged line, the launcher's (overwrites the worker's)
inline constexpr char time[] = "time";    // added by the launcher: Unix seconds when the line arrived
}  // namespace keys

}  // namespace halo::protocol
