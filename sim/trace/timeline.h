// Chrome trace-event JSON timeline (opens in Perfetto / chrome://tracing).
// One process per device (node or switch), one track ("thread") per
// component instance: a link port, a DMA engine, a host thread, an FSM.
// Timestamps are microseconds with picosecond precision, printed exactly.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace nicsim {

class Timeline {
 public:
  ~Timeline();
  // Device names become process names. Call before open().
  void set_devices(std::vector<std::string> names) { devices_ = std::move(names); }
  bool open(const std::string& path, std::uint64_t max_events);
  void close();
  // Open: callers build events; beyond max_events they are counted as
  // dropped (and the count is written at the end) instead of written.
  bool enabled() const { return out_ != nullptr; }

  // A named track of a device; returns its id (stable in creation order).
  std::uint32_t track(std::uint32_t device, std::string_view name);
  // A duration event ("X") and an instant event ("i") on a track.
  void span(std::uint32_t device, std::uint32_t track, std::string_view name, Tick start, Tick duration,
            std::string_view args_json = {});
  void instant(std::uint32_t device, std::uint32_t track, std::string_view name, Tick t,
               std::string_view args_json = {});
  std::uint64_t events() const { return events_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  struct Track {
    std::uint32_t device;
    std::string name;
  };
  void begin_event();
  void write_tracks_metadata();
  std::vector<std::string> devices_;
  std::vector<Track> tracks_;
  std::FILE* out_ = nullptr;
  std::uint64_t max_events_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t dropped_ = 0;
  bool first_ = true;
};

// "12.345678" microseconds from picoseconds, exact.
std::string ps_to_us_string(Tick t);

}  // namespace nicsim
