// libFuzzer target: arbitrary bytes as an Elan3 packet or ack token
// arriving at an Elan3 (node a of two Elan3 nodes back to back). A daemon on
// a maps a 64 KiB buffer for every remote access, a remote event and an
// input queue of 8 slots of 64 bytes, and prints their Elan addresses once
// (the seeds use them); before each input it empties the queue, writes its
// descriptor back and primes the event again. A packet comes over the link
// from b (with its route kept, as the DMA engine sends them, for a's token
// back); a token is handed to a's Elan as a reply carried back to it. The
// world then runs until a has answered.
//
// Input: byte 0 bit 0 set: the rest is sealed (length field and CRC made
// right); bit 1 set: the rest is an ack token, else a packet.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "elan_model/driver/elan3_dev.h"
#include "elan_model/elan3.h"
#include "nicsim/app.h"
#include "sim/fuzz/fuzz_world.h"
#include "world/node.h"

using namespace nicsim;
using namespace nicsim::elan3;

namespace {

constexpr std::size_t kBuf = 65536;
constexpr std::size_t kMaxWire = pkt::kHeaderSize + 4096 + pkt::kCrcSize;

struct Setup {
  Elan3Dev* d = Elan3Dev::attach();
  E3Addr buf_e = 0;
  ElanMem ev;
  InputQueue q;
  std::uint8_t desc[queue::kSize] = {};  // the queue's descriptor as set up

  Setup() {
    void* buf = nicsim_alloc(kBuf, 64);
    std::memset(buf, 0, kBuf);
    ElanRange range;
    const std::uint32_t all = perm::kLocalRead | perm::kLocalWrite | perm::kRemoteRead | perm::kRemoteWrite;
    if (d->map(buf, kBuf, all, 0, 0, true, &range, &buf_e) != DevStatus::Ok) std::abort();
    ev = d->alloc_event(true);
    if (d->alloc_queue(8, 64, 0, &q) != DevStatus::Ok) std::abort();
    std::memcpy(desc, q.desc.host, queue::kSize);
    std::fprintf(stderr, "fuzz_elan_packet: node a: buffer %#x, event %#x, queue %#x\n", buf_e, ev.elan, q.desc.elan);
  }

  // Consumes what arrived, and writes the descriptor back as it was set up
  // (a packet may have overwritten it: other nodes may write it).
  void refresh() {
    for (std::uint32_t i = 0; i < q.nslots && d->queue_peek(q); ++i) d->queue_consume(q);
    d->store(q.desc, 0, desc, queue::kSize);
    d->prime_event(ev, 1, event::Type::None, 0, 0, false, 0);
  }
};

Setup* g_setup = nullptr;

int setup_daemon(int, char**) {
  g_setup = new Setup();
  nicsim::fuzzing::serve_put_back(g_setup->d->host(), [] { g_setup->refresh(); });
}
const BuiltinProgram reg_daemon("fuzz_elan_setup", setup_daemon, "fuzz_elan_packet: a's buffer, event and queue");

struct Target {
  nicsim::fuzzing::PersistentWorld fw{R"(
      name: "fuzz_elan_packet" seed: 1 stop_time: "1ms"
      node { name: "a" nic: "elan3" param { key: "bus.profile" value: "pci-66" } }
      node { name: "b" nic: "elan3" param { key: "bus.profile" value: "pci-66" } }
      link { name: "ab" a: "a" b: "b" bandwidth: "400MB/s" delay: "20ns" }
    )",
                                      {{"fuzz_elan_setup", 0}}};
  Elan3& a = *fw.world().node(0).nic_as<Elan3>();
};

void seal(std::vector<std::uint8_t>& b, std::size_t header) {
  if (b.size() < header + pkt::kCrcSize) b.resize(header + pkt::kCrcSize);
  if (header == pkt::kHeaderSize) put(b.data(), pkt::length, b.size() - pkt::kHeaderSize - pkt::kCrcSize);
  const std::uint32_t crc = pkt::crc32(b.data(), b.size() - pkt::kCrcSize);
  std::memcpy(b.data() + b.size() - pkt::kCrcSize, &crc, 4);
}

void send_packet(Target& t, const std::vector<std::uint8_t>& bytes) {
  fabric::Port& from = *t.a.port(1).peer();
  fabric::Packet* p = t.fw.world().fabric().pool().get(bytes.size());
  std::copy(bytes.begin(), bytes.end(), p->bytes.begin());
  p->meta.kind = fabric::kPacketElan;
  p->meta.slid = 1;
  p->meta.dlid = 0;
  p->meta.keep_route = true;
  p->meta.bit_errors = 1;
  p->meta.src_node = from.owner().device_id();
  p->meta.created = now();
  p->ready_at = now();
  from.send(p);
}

void send_token(Target& t, const std::vector<std::uint8_t>& bytes) {
  fabric::Packet* p = t.fw.world().fabric().pool().get(bytes.size());
  std::copy(bytes.begin(), bytes.end(), p->bytes.begin());
  p->meta.kind = fabric::kPacketElanAck;
  p->meta.slid = 1;
  p->meta.dlid = 0;
  p->meta.created = now();
  p->tail_at = now();
  t.a.take_reply(t.a.port(1), p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target target;
  Target* t = &target;
  if (size < 2) return 0;
  t->fw.put_back("the queue and event");
  const bool token = data[0] & 2;
  std::vector<std::uint8_t> bytes(data + 1, data + std::min(size, kMaxWire + 1));
  if (data[0] & 1) seal(bytes, token ? pkt::kAckSize - pkt::kCrcSize : pkt::kHeaderSize);
  if (token)
    send_token(*t, bytes);
  else
    send_packet(*t, bytes);
  t->fw.run_for(50 * kUs);
  t->fw.forget_errors();
  return 0;
}
