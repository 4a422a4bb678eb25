// Packets from the wire library, written with PcapWriter, dissected by
// Wireshark's own InfiniBand dissector (tshark). tshark must be installed
// (Debian package `tshark`); without it these tests fail rather than skip,
// because the trace format is only proven by a real reader.
//
// What tshark 4.0 can and cannot check:
// - It reads LINKTYPE_ERF files with ERF type INFINIBAND records and
//   dissects them as `infiniband` with no options; LINKTYPE_INFINIBAND (247)
//   is refused, LINKTYPE_USER0 needs a user_dlts preference (tested below).
// - It shows ICRC and VCRC but does not verify them (no preference exists),
//   so the tests compare the shown values with the parser's; the CRCs are
//   proven by the known answers in wire_test.cc.
// - Opcodes 0x40-0x5F are decoded as Mellanox Dynamically Connected rather
//   than IBA Reliable Datagram, so RD packets are not dissected sensibly and
//   are left out here.
// - The RPC-over-RDMA heuristic claims SEND payloads it cannot parse and
//   reports them malformed; it is disabled (--disable-heuristic
//   rpcrdma_infiniband) since the payloads here are not RPC messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "ib_wire/ib_wire.h"
#include "sim/tests/test_shell.h"
#include "ib_wire/ib_pcap.h"
#include "trace/pcap.h"

namespace nicsim {
namespace {

using Bytes = std::vector<std::uint8_t>;

using testing::CommandResult;
using testing::require_tshark;
CommandResult run(const std::string& command) { return testing::run_command(command); }

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "nicsim_" + name + "_" + std::to_string(::getpid()) + ".pcap";
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// tshark -V output cut at each "Frame N:" line.
std::vector<std::string> split_frames(const std::string& text) {
  std::vector<std::string> frames;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t eol = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, eol - at);
    if (line.starts_with("Frame ") && line.size() > 6 && std::isdigit(static_cast<unsigned char>(line[6])))
      frames.emplace_back();
    if (!frames.empty()) frames.back().append(line).append("\n");
    at = eol + 1;
  }
  return frames;
}

// The value after "label: " on the first line that has it, or "".
std::string field(const std::string& frame, const std::string& label) {
  const std::size_t at = frame.find(label + ": ");
  if (at == std::string::npos) return "";
  const std::size_t start = at + label.size() + 2;
  return frame.substr(start, frame.find('\n', start) - start);
}

std::string hex(std::uint64_t v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

std::string squash(std::string_view s) {  // lower case letters and digits only
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Sent {
  ib::ParsedPacket parsed;
  Bytes wire;
  Tick time;
};

ib::PacketHeaders headers_for(const ib::OpcodeInfo& op, bool global, std::uint32_t n) {
  ib::PacketHeaders h;
  h.lrh = {
      .vl = 0, .sl = static_cast<std::uint8_t>(n % 16), .dlid = static_cast<std::uint16_t>(0x10 + n), .slid = 0x0042};
  if (global) {
    ib::Grh g{.ipver = 6, .tclass = 0, .flow_label = n, .hop_lmt = 64};
    g.sgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 0x01};
    g.dgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 0x02};
    h.grh = g;
  }
  // Destination QPs above 1: QP0/QP1 would be dissected as management MADs.
  h.bth = {.opcode = op.code,
           .se = static_cast<std::uint8_t>(op.last() ? 1 : 0),
           .p_key = 0xFFFF,
           .dest_qp = 0x000100 + n,
           .a = static_cast<std::uint8_t>(op.acked ? 1 : 0),
           .psn = 0x1000 + n};
  h.ext.deth = {.q_key = 0x80010000, .src_qp = 0x000200 + n};
  h.ext.reth = {.va = 0x00007f0000001000ull + 4096ull * n, .r_key = 0x0000AB00 + n, .dma_len = 4096};
  h.ext.atomic_eth = {.va = 0x00007f0000002000ull, .r_key = 0x0000CD00 + n, .swap_add = 5, .compare = 7};
  h.ext.aeth = {.syndrome = 0x1F, .msn = n};
  h.ext.atomic_ack_eth.orig_remote_data = 0x0123456789ABCDEFull;
  h.ext.imm_dt.imm = 0xC0DE0000 + n;
  h.ext.ieth.r_key = 0x0000EE00 + n;
  return h;
}

// One packet of every RC, UC and UD opcode, local and with a GRH.
std::vector<Sent> write_capture(const std::string& path, std::uint32_t linktype) {
  PcapWriter w;
  EXPECT_TRUE(w.open(path, linktype)) << w.error();
  std::vector<Sent> sent;
  std::uint32_t n = 0;
  for (bool global : {false, true}) {
    for (const ib::OpcodeInfo& op : ib::kOpcodes) {
      if (op.transport == ib::Transport::RD) continue;
      Bytes payload;
      if (op.payload) {
        payload.resize(5 + n % 8);  // every PadCnt
        for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(0x41 + (i + n) % 26);
      }
      Sent s;
      EXPECT_EQ(ib::build_packet(headers_for(op, global, n), payload, s.wire), ib::BuildStatus::Ok) << op.name;
      s.time = 1000 + Tick{n} * 1'234'567;
      if (linktype == kLinktypeErf)
        w.write_erf(s.time, kErfTypeInfiniband, s.wire.data(), s.wire.size());
      else
        w.write(s.time, s.wire.data(), s.wire.size());
      sent.push_back(std::move(s));
      ++n;
    }
  }
  w.close();
  EXPECT_EQ(w.error(), "");
  for (Sent& s : sent) {
    s.parsed = ib::parse_packet(s.wire);
    EXPECT_TRUE(s.parsed.ok()) << ib::verdict_name(s.parsed.verdict);
  }
  return sent;
}

// Everything tshark shows for one frame agrees with what was sent.
void check_frame(const std::string& frame, const Sent& s) {
  const ib::ParsedPacket& p = s.parsed;
  const ib::OpcodeInfo& op = *p.op;
  SCOPED_TRACE(std::string(op.name) + (p.hdr.grh ? " global" : " local") + "\n" + frame);
  EXPECT_EQ(count(frame, "Malformed"), 0u);
  EXPECT_EQ(count(frame, "[Expert Info"), 0u);
  EXPECT_NE(frame.find("\nInfiniBand\n"), std::string::npos);

  // "Reliable Connection (RC) - SEND Last with Immediate (3)"
  const std::string opcode = field(frame, "Opcode");
  EXPECT_NE(opcode.find(std::string("(") + ib::transport_name(op.transport) + ") - "), std::string::npos);
  EXPECT_NE(opcode.find("(" + std::to_string(op.code) + ")"), std::string::npos);
  std::string shown = squash(opcode.substr(opcode.find(") - ") + 4));
  shown = shown.substr(0, shown.size() - squash(std::to_string(op.code)).size());
  std::string ours = squash(std::string_view(op.name).substr(3));
  if (ours == "compareswap") ours = "cmpswap";  // Wireshark's word for it
  EXPECT_EQ(shown, ours);

  EXPECT_EQ(field(frame, "Destination Local ID"), std::to_string(p.hdr.lrh.dlid));
  EXPECT_EQ(field(frame, "Source Local ID"), std::to_string(p.hdr.lrh.slid));
  EXPECT_NE(field(frame, "Packet Length").find(std::to_string(p.hdr.lrh.pkt_len)), std::string::npos);
  EXPECT_NE(field(frame, "Link Next Header").find(hex(p.hdr.lrh.lnh, 1)), std::string::npos);
  EXPECT_NE(field(frame, "Pad Count").find(std::to_string(p.pad)), std::string::npos);
  EXPECT_EQ(field(frame, "Destination Queue Pair"), hex(p.hdr.bth.dest_qp, 6));
  EXPECT_EQ(field(frame, "Packet Sequence Number"), std::to_string(p.hdr.bth.psn));
  if (p.hdr.grh) {
    EXPECT_EQ(field(frame, "Source GID"), "fe80::202:c9ff:fe00:1");
    EXPECT_EQ(field(frame, "Payload Length"), std::to_string(p.hdr.grh->pay_len));
  }

  // The carried extended headers, and no others.
  EXPECT_EQ(count(frame, "Extended Transport Header\n"), op.num_exts);
  for (std::size_t i = 0; i < op.num_exts; ++i)
    EXPECT_NE(squash(frame).find(squash(std::string(ib::ext_name(op.order[i])) + " - ")), std::string::npos)
        << ib::ext_name(op.order[i]);
  if (op.has(ib::Ext::Reth)) {
    EXPECT_EQ(field(frame, "Virtual Address"), hex(p.hdr.ext.reth.va, 16));
  }
  if (op.has(ib::Ext::Deth)) {
    EXPECT_EQ(field(frame, "Source Queue Pair"), hex(p.hdr.ext.deth.src_qp, 8));
  }
  if (op.has(ib::Ext::Aeth)) {
    EXPECT_EQ(field(frame, "Message Sequence Number"), std::to_string(p.hdr.ext.aeth.msn));
  }
  if (op.has(ib::Ext::ImmDt)) {
    EXPECT_EQ(field(frame, "Immediate Data"), hex(p.hdr.ext.imm_dt.imm, 8).substr(2));
  }

  // ICRC and VCRC are found where the packet has them (shown, not checked).
  EXPECT_EQ(field(frame, "Invariant CRC"), hex(p.icrc, 8));
  EXPECT_EQ(field(frame, "Variant CRC"), hex(p.vcrc, 4));
  // Simulated time, to the nanosecond.
  char epoch[48];
  std::snprintf(epoch, sizeof epoch, "%llu.%09llu seconds", static_cast<unsigned long long>(s.time / kSec),
                static_cast<unsigned long long>(s.time % kSec / kNs));
  EXPECT_EQ(field(frame, "Epoch Time"), epoch);
}

TEST(Tshark, DissectsEveryRcUcUdOpcodeFromErfCapture) {
  ASSERT_NO_FATAL_FAILURE(require_tshark());
  const std::string path = temp_path("ib_erf");
  const std::vector<Sent> sent = write_capture(path, kLinktypeErf);
  const CommandResult r = run("tshark -n --disable-heuristic rpcrdma_infiniband -V -r " + path + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> frames = split_frames(r.output);
  ASSERT_EQ(frames.size(), sent.size()) << r.output;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_NE(frames[i].find("Record type: 0x15 (Type 21: INFINIBAND)"), std::string::npos);
    check_frame(frames[i], sent[i]);
  }
  std::remove(path.c_str());
}

TEST(Tshark, UserDltWithPreferenceAlsoDissects) {
  ASSERT_NO_FATAL_FAILURE(require_tshark());
  const std::string path = temp_path("ib_user0");
  const std::vector<Sent> sent = write_capture(path, kLinktypeUser0);
  const CommandResult r =
      run("tshark -n --disable-heuristic rpcrdma_infiniband "
          "-o 'uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\",\"0\",\"\"' -V -r " +
          path + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> frames = split_frames(r.output);
  ASSERT_EQ(frames.size(), sent.size()) << r.output;
  for (std::size_t i = 0; i < frames.size(); ++i) check_frame(frames[i], sent[i]);
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// The file format itself.
// ---------------------------------------------------------------------------

std::uint32_t le32(const Bytes& b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}

TEST(PcapWriter, HeadersAreNanosecondPcap) {
  const std::string path = temp_path("hdr");
  PcapWriter w;
  ASSERT_TRUE(w.open(path, kLinktypeInfiniband));
  const Bytes frame{1, 2, 3, 4, 5};
  w.write(3 * kSec + 123'456'789'999, frame.data(), frame.size());  // 3.123456789999 s
  w.close();
  EXPECT_EQ(w.records(), 1u);
  const Bytes b = read_file(path);
  ASSERT_EQ(b.size(), 24u + 16u + frame.size());
  EXPECT_EQ(le32(b, 0), 0xa1b23c4du);
  EXPECT_EQ(b[4] | b[5] << 8, 2);  // version 2.4
  EXPECT_EQ(b[6] | b[7] << 8, 4);
  EXPECT_EQ(le32(b, 8), 0u);
  EXPECT_EQ(le32(b, 12), 0u);
  EXPECT_EQ(le32(b, 16), 65535u);
  EXPECT_EQ(le32(b, 20), 247u);
  EXPECT_EQ(le32(b, 24), 3u);            // seconds
  EXPECT_EQ(le32(b, 28), 123'456'789u);  // nanoseconds, picoseconds dropped
  EXPECT_EQ(le32(b, 32), 5u);
  EXPECT_EQ(le32(b, 36), 5u);
  EXPECT_EQ(Bytes(b.begin() + 40, b.end()), frame);
  std::remove(path.c_str());
}

TEST(PcapWriter, LongFramesAreCutAtSnaplen) {
  const std::string path = temp_path("snap");
  PcapWriter w;
  ASSERT_TRUE(w.open(path, kLinktypeUser0));
  const Bytes big(70000, 0xAB);
  w.write(0, big.data(), big.size());
  w.close();
  const Bytes b = read_file(path);
  ASSERT_EQ(b.size(), 24u + 16u + 65535u);
  EXPECT_EQ(le32(b, 32), 65535u);
  EXPECT_EQ(le32(b, 36), 70000u);
  std::remove(path.c_str());
}

TEST(PcapWriter, ErfRecordLayout) {
  const std::string path = temp_path("erf");
  PcapWriter w;
  ASSERT_TRUE(w.open(path, kLinktypeErf));
  const Bytes frame(26, 0x11);
  w.write_erf(7 * kSec + 500'000'000'000, kErfTypeInfiniband, frame.data(), frame.size());  // 7.5 s
  w.close();
  const Bytes b = read_file(path);
  ASSERT_EQ(b.size(), 24u + 16u + 16u + frame.size());
  EXPECT_EQ(le32(b, 20), 197u);
  EXPECT_EQ(le32(b, 32), 42u);
  EXPECT_EQ(le32(b, 36), 42u);
  const std::size_t erf = 40;
  EXPECT_EQ(le32(b, erf), 0x80000000u);  // half a second as a binary fraction
  EXPECT_EQ(le32(b, erf + 4), 7u);
  EXPECT_EQ(b[erf + 8], 21);
  EXPECT_EQ(b[erf + 9], 0x04);
  EXPECT_EQ(b[erf + 10] << 8 | b[erf + 11], 42);  // rlen
  EXPECT_EQ(b[erf + 12] << 8 | b[erf + 13], 0);   // lctr
  EXPECT_EQ(b[erf + 14] << 8 | b[erf + 15], 26);  // wlen
  std::remove(path.c_str());
}

TEST(PcapWriter, SameInputGivesSameBytes) {
  const std::string a = temp_path("det_a"), b = temp_path("det_b");
  for (const std::string& path : {a, b}) {
    PcapWriter w;
    ASSERT_TRUE(w.open(path, kLinktypeErf));
    const Bytes frame{9, 8, 7, 6};
    for (Tick t = 0; t < 10; ++t) w.write_erf(t * 333'333'333, kErfTypeInfiniband, frame.data(), frame.size());
  }
  EXPECT_EQ(read_file(a), read_file(b));
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(PcapWriter, UnwritablePathIsAnError) {
  PcapWriter w;
  EXPECT_FALSE(w.open("/nonexistent-dir/x.pcap", kLinktypeErf));
  EXPECT_FALSE(w.is_open());
  EXPECT_NE(w.error().find("/nonexistent-dir/x.pcap"), std::string::npos);
  const Bytes frame{1};
  w.write(0, frame.data(), frame.size());  // ignored, no crash
  EXPECT_EQ(w.records(), 0u);
}

}  // namespace
}  // namespace nicsim
