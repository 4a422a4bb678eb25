// Frames of the debugger's remote protocol (sim/proto/debug.proto): a 4-byte
// big-endian length and one protobuf message. The decoder takes bytes as
// they arrive and never trusts them: a length over kMaxFrame or a body that
// does not parse is an error naming what is wrong.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "debug.pb.h"

namespace nicsim::debug {

inline constexpr std::uint32_t kMaxFrame = 65536;

// The frame of a serialised message.
std::string frame(const google::protobuf::MessageLite& message);

class FrameDecoder {
 public:
  // Appends bytes read from the connection.
  void feed(const char* data, std::size_t n) { buffer_.append(data, n); }
  enum class Status { NeedMore, Message, Malformed, Oversized };
  // Takes the next whole frame into `out`. Malformed: the frame was taken
  // but did not parse (the stream goes on); Oversized: the stream cannot go
  // on. `error` says what was wrong.
  Status next(google::protobuf::MessageLite& out, std::string& error);
  std::size_t buffered() const { return buffer_.size(); }

 private:
  std::string buffer_;
};

// The checks of a connection's requests in order: the Hello first with the
// session's token, then sequence numbers 1, 2, 3, ... An error (returned)
// gets a reply and changes nothing.
class RequestOrder {
 public:
  explicit RequestOrder(std::string token) : token_(std::move(token)) {}
  std::optional<std::string> check(const wire::Request& r);
  bool greeted() const { return greeted_; }

 private:
  std::string token_;
  bool greeted_ = false;
  std::uint64_t last_seq_ = 0;
};

}  // namespace nicsim::debug
