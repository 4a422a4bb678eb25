// A FIFO in one power-of-two ring of slots: no allocation per element once
// it has grown to its working size (std::deque allocates a block whenever
// its end crosses one, which for large elements is every element or two).
//
// Growth moves the elements, so references into the ring are valid only
// until the next push. Elements are reused, not destroyed, when popped: a
// caller that pushes assigns the whole element.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace nicsim {

template <class T>
class Ring {
 public:
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  // The i-th element from the front.
  T& operator[](std::size_t i) { return buf_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  // The slot behind the last element, now part of the ring (to be assigned).
  T& push_back() {
    if (count_ == buf_.size()) grow();
    return buf_[(head_ + count_++) & mask_];
  }
  void push_back(const T& v) { push_back() = v; }
  void pop_front(std::size_t n = 1) {
    head_ = (head_ + n) & mask_;
    count_ -= n;
  }
  // Keeps the first n elements.
  void truncate(std::size_t n) { count_ = n; }
  void clear() { head_ = count_ = 0; }

 private:
  void grow() {
    std::vector<T> next(buf_.empty() ? 8 : 2 * buf_.size());
    for (std::size_t i = 0; i < count_; ++i) next[i] = std::move((*this)[i]);
    buf_.swap(next);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }

  std::vector<T> buf_;
  std::size_t head_ = 0, count_ = 0, mask_ = 0;
};

}  // namespace nicsim
