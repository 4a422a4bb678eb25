// libFuzzer target: bytes as a remote client might send them, through the
// frame decoder and the request-order checks of the debugger's server
// (debug/frames.h). Each input is fed in two pieces so that frames split
// across reads are exercised too. Built with clang (-fsanitize=fuzzer,
// address, undefined) when it is installed: target fuzz_frames.
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>

#include "debug/frames.h"

namespace {

void drain(nicsim::debug::FrameDecoder& decoder, nicsim::debug::RequestOrder& order) {
  for (;;) {
    nicsim::debug::wire::Request r;
    std::string error;
    const auto status = decoder.next(r, error);
    if (status == nicsim::debug::FrameDecoder::Status::NeedMore ||
        status == nicsim::debug::FrameDecoder::Status::Oversized)
      return;
    if (status == nicsim::debug::FrameDecoder::Status::Message) order.check(r);
  }
}

}  // namespace

// Protobuf logs each string field with bad UTF-8 it meets; a client's bad
// bytes are the point here.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nicsim::debug::FrameDecoder decoder;
  nicsim::debug::RequestOrder order("0123456789abcdef0123456789abcdef");
  const std::size_t half = size / 2;
  decoder.feed(reinterpret_cast<const char*>(data), half);
  drain(decoder, order);
  decoder.feed(reinterpret_cast<const char*>(data) + half, size - half);
  drain(decoder, order);
  return 0;
}
