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
  bool enabled() const { return out_ != nullptr || hold_only_; }

  // A named track of a device; returns its id (stable in creation order).
  std::uint32_t track(std::uint32_t device, std::string_view name);
  // A duration event ("X") and an instant event ("i") on a track.
  void span(std::uint32_t device, std::uint32_t track, std::string_view name, Tick start, Tick duration,
            std::string_view args_json = {});
  void instant(std::uint32_t device, std::uint32_t track, std::string_view name, Tick t,
               std::string_view args_json = {});
  std::uint64_t events() const { return events_; }
  std::uint64_t dropped() const { return dropped_; }
  // A world split into blocks (docs/partition.md): tracks are numbered per
  // device, and every event is held until close() and written in the order
  // (time, device, the device's own count), which no other block changes;
  // max_events applies then. With `write` false nothing is written: the
  // events wait to be exported (another process's part of a run).
  void hold_in_device_order(bool write = true);
  std::string export_held();
  void import_held(const std::string& bytes);

 private:
  struct Track {
    std::uint32_t device;
    std::string name;
    std::uint32_t tid;  // the track's id: its index, or its index in its device
  };
  struct Held {
    Tick t;
    std::uint64_t seq;  // device << 40 | the device's count
    std::string line;
  };
  bool drops(Tick t);
  void begin_event();
  void write_tracks_metadata();
  void write_event(std::uint32_t device, Tick t, const std::string& line);
  void write_held();
  bool device_order_ = false;
  bool hold_only_ = false;
  std::vector<std::uint64_t> device_events_;
  std::vector<Held> held_;
  Tick held_latest_ = 0;
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
