// A FIFO in one power-of-two ring of slots: no allocation per element once
// it has grown to its working size (std::deque allocates a block whenever
// its end crosses one, which for large elements is every element or two).
//
// Ring<T, kInline> keeps its first kInline slots inside the object: while at
// most that many elements are queued the ring reads no memory outside its
// owner (a fabric port's pending credit returns, usually none or one, sit in
// the port's own cache line). Above that it moves to its heap slots, and
// back when it empties; the heap slots are kept for the next burst.
//
// Growth moves the elements, so references into the ring are valid only
// until the next push. Elements are reused, not destroyed, when popped: a
// caller that pushes assigns the whole element.
#pragma once
#include <cstddef>
#include <array>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace nicsim {

template <class T, std::uint32_t kInline = 0>
class Ring {
  static_assert((kInline & (kInline - 1)) == 0, "the inline slots are a power of two (or none)");

 public:
  Ring() {
    if constexpr (kInline > 0) slots_ = inline_.data();
  }
  // The slots may be inside the object.
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  // The i-th element from the front.
  T& operator[](std::size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return slots_[(head_ + i) & mask_]; }
  // The slot behind the last element, now part of the ring (to be assigned).
  T& push_back() {
    if (full()) grow();
    return slots_[(head_ + count_++) & mask_];
  }
  void push_back(const T& v) { push_back() = v; }
  void pop_front(std::size_t n = 1) {
    head_ = (head_ + static_cast<std::uint32_t>(n)) & mask_;
    count_ -= static_cast<std::uint32_t>(n);
    if (count_ == 0) back_inline();
  }
  // Keeps the first n elements.
  void truncate(std::size_t n) {
    count_ = static_cast<std::uint32_t>(n);
    if (count_ == 0) back_inline();
  }
  void clear() {
    head_ = count_ = 0;
    back_inline();
  }

 private:
  bool full() const {
    if constexpr (kInline > 0)
      return count_ > mask_;
    else
      return count_ > mask_ || slots_ == nullptr;
  }
  void back_inline() {
    if constexpr (kInline > 0) {
      slots_ = inline_.data();
      head_ = 0;
      mask_ = kInline - 1;
    }
  }
  void grow() {
    const std::uint32_t capacity = slots_ ? mask_ + 1 : 0;
    const std::uint32_t slots = capacity < heap_capacity_ ? heap_capacity_ : capacity < 4 ? 8 : 2 * capacity;
    if (slots > heap_capacity_) {
      auto larger = std::make_unique<T[]>(slots);
      for (std::uint32_t i = 0; i < count_; ++i) larger[i] = std::move((*this)[i]);
      heap_ = std::move(larger);
      heap_capacity_ = slots;
    } else {
      // Back to the kept heap slots from the inline ones.
      for (std::uint32_t i = 0; i < count_; ++i) heap_[i] = std::move((*this)[i]);
    }
    slots_ = heap_.get();
    head_ = 0;
    mask_ = heap_capacity_ - 1;
  }

  struct NoInlineSlots {};
  T* slots_ = nullptr;  // the inline slots or heap_'s; none before the first push without inline slots
  std::uint32_t head_ = 0, count_ = 0;
  std::uint32_t mask_ = kInline > 0 ? kInline - 1 : 0;  // slots - 1
  std::uint32_t heap_capacity_ = 0;
  std::unique_ptr<T[]> heap_;  // kept for the next burst
  [[no_unique_address]] std::conditional_t<(kInline > 0), std::array<T, kInline>, NoInlineSlots> inline_;
};

}  // namespace nicsim
