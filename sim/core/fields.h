// Fields of registers, descriptors and mailboxes as data: a byte offset and
// a width, read and written little-endian (the host's order, as the NIC
// models' contracts define their in-memory layouts). Every NIC model's
// register map and descriptor table is a list of these.
#pragma once
#include <cstdint>
#include <cstring>

namespace nicsim {

// A field: byte offset, width in bytes (1, 2, 4, 8; or 16 for a GID, read
// with get_bytes/put_bytes), and its name for traces and errors.
struct Field {
  std::uint32_t offset;
  std::uint32_t width;
  const char* name;
};

inline std::uint64_t get(const std::uint8_t* base, Field f) {
  std::uint64_t v = 0;
  std::memcpy(&v, base + f.offset, f.width > 8 ? 8 : f.width);
  return v;
}
inline void put(std::uint8_t* base, Field f, std::uint64_t v) {
  std::memcpy(base + f.offset, &v, f.width > 8 ? 8 : f.width);
}
inline void put_bytes(std::uint8_t* base, Field f, const void* src) { std::memcpy(base + f.offset, src, f.width); }
inline void get_bytes(const std::uint8_t* base, Field f, void* dst) { std::memcpy(dst, base + f.offset, f.width); }

}  // namespace nicsim
