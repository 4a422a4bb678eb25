// Recycled<T>: objects of T that the Elan3 engines make and drop every few
// packets (continuations waiting on the calendar or the host bus, MMU
// walks) go on a free list when deleted and are reused by the next new,
// instead of a malloc and a free each (together about 110 instructions per
// object in a 64-node multicast, over one object per packet). The
// simulation runs on one thread; the list only grows to the most objects
// ever alive at once and is kept for the process.
#pragma once
#include <cstddef>
#include <new>

namespace nicsim::elan3 {

template <class T>
class Recycled {
 public:
  static void* operator new(std::size_t bytes) {
    if (bytes == sizeof(T) && free_) {
      Free* f = free_;
      free_ = f->next;
      return f;
    }
    return ::operator new(bytes);
  }
  static void operator delete(void* p, std::size_t bytes) {
    if (bytes != sizeof(T)) {
      ::operator delete(p);
      return;
    }
    auto* f = static_cast<Free*>(p);
    f->next = free_;
    free_ = f;
  }

 private:
  struct Free {
    Free* next;
  };
  static inline Free* free_ = nullptr;
};

}  // namespace nicsim::elan3
