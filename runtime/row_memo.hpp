// The results of a per-row function (a block's product, or an MLP's two products and activation)
// by the exact bits of its input row, for the verification forward (runtime/verification_backend.*).
// Verification feeds inputs that share most of their states: a token's normalised columns at one
// layer take a few thousand values over 10^5 inputs (its position, its symbol, the counts its heads
// averaged), so most rows are looked up, not computed. A hit returns what the function returned
// for the same bits, and the function depends on its row alone, so the forward's result is the
// same whatever came before it, and whichever thread computed the row.
//
// One memo serves every thread of a verification: a row one thread computed is there for the
// others (with a memo a thread, the threads computed the same rows each; sort_unique at 16 spent
// a fifth more CPU time on 2 threads than on 1). Entries are only ever added between two calls of
// prepare(): a thread writes an entry's key and value where nobody reads, then publishes it into
// its table slot with one compare-and-swap, and a reader sees a slot either empty or pointing at a
// whole entry. Two threads that miss the same row at once both compute it; one entry wins the
// slot, the other stays unused. prepare(), which grows the table or empties a full memo, runs
// while no thread uses the memo (between the verification's rounds, or before a forward of a
// backend that does not share its memos).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace raspc::verification_plan {

class RowMemo {
 public:
  // What one thread's calls need of their own.
  struct Scratch {
    std::vector<uint64_t> hashes;  // find_rows': its rows' hashes
    std::vector<float> value;      // a row computed when the memo has no room left this round
  };

  // `cost`: the function's multiply-adds a row. Below what a lookup costs (hashing and comparing
  // the key, copying the value, and a likely cache miss), every row is computed instead.
  RowMemo(int key_width, int value_width, double cost)
      : key_width_(key_width), value_width_(value_width), enabled_(cost > 4.0 * (key_width + value_width) + 256) {
    set_budget(size_t(32) << 20);
  }
  RowMemo(const RowMemo&) = delete;
  RowMemo& operator=(const RowMemo&) = delete;

  bool enabled() const { return enabled_; }
  // At most `bytes` of keys and values: when full, the memo starts again empty (at a prepare()).
  void set_budget(size_t bytes) {
    const size_t row_bytes = sizeof(float) * size_t(std::max(1, key_width_ + value_width_));
    limit_ = std::clamp<size_t>(bytes / row_bytes, 1024, size_t(1) << 20);
  }

  // Room for `rows` more entries until the next call (fewer if the budget says so: the rows past
  // it are computed and not kept). Not to be called while any thread is in find_rows.
  void prepare(size_t rows) {
    if (!enabled_) return;
    size_t count = std::min(claimed_.load(std::memory_order_relaxed), capacity_);
    if (count >= limit_) {  // full: start again (a miss costs only the compute)
      table_.reset();
      slots_ = 0;
      count = 0;
    }
    if (!keys_) {  // the whole budget, untouched until written (the pages come as entries do)
      keys_.reset(new float[limit_ * size_t(key_width_)]);
      values_.reset(new float[limit_ * size_t(value_width_)]);
    }
    capacity_ = std::min(limit_, count + rows);
    claimed_.store(count, std::memory_order_relaxed);
    size_t slots = std::max<size_t>(slots_, 1024);
    while (slots < 2 * capacity_) slots *= 2;  // at most half full: a probe always ends
    if (slots != slots_) rehash(slots);
  }

  // The value of each of rows [0, rows) of `keys` (key_width floats each, `stride` apart), in
  // order: use(n, value) with the value the memo holds for the row's key, or, on a miss, with
  // what compute(value, key) fills in (value_width floats), which the memo then keeps. The table's
  // slots and the entries they point at are fetched into the cache a few rows ahead (a miss in the
  // table, a random access into tens of MB, was most of a lookup's time). Only for an enabled
  // memo, after a prepare(): the forward runs a disabled one's block as one product over the batch.
  // Several threads may call it at once, each with its own scratch.
  template <class Compute, class Use>
  void find_rows(const float* keys, size_t stride, size_t rows, Scratch& scratch, const Compute& compute,
                 const Use& use) {
    scratch.hashes.resize(rows);
    for (size_t n = 0; n < rows; ++n) scratch.hashes[n] = hash(keys + n * stride);
    constexpr size_t kAhead = 8;
    const uint64_t* hashes = scratch.hashes.data();
    for (size_t n = 0; n < std::min(rows, 2 * kAhead); ++n) __builtin_prefetch(&table_[size_t(hashes[n]) & mask_]);
    for (size_t n = 0; n < rows; ++n) {
      if (n + 2 * kAhead < rows) __builtin_prefetch(&table_[size_t(hashes[n + 2 * kAhead]) & mask_]);
      if (n + kAhead < rows) prefetch_entry(hashes[n + kAhead]);
      const float* key = keys + n * stride;
      use(n, find_hashed(key, hashes[n], scratch, [&](float* value) { compute(value, key); }));
    }
  }

 private:
  // A slot: 0 when empty, else the entry's index + 1 in its low 32 bits and the hash's high 32
  // bits (a tag that skips most unequal keys without reading them) in its high ones.
  static uint64_t pack(uint32_t tag, size_t entry) { return uint64_t(tag) << 32 | uint64_t(entry + 1); }
  static size_t entry_of(uint64_t slot) { return size_t(uint32_t(slot)) - 1; }
  static uint32_t tag_of(uint64_t slot) { return uint32_t(slot >> 32); }
  uint64_t load(size_t at) const { return std::atomic_ref<uint64_t>(table_[at]).load(std::memory_order_acquire); }
  const float* key_of(size_t entry) const { return keys_.get() + entry * size_t(key_width_); }
  float* value_of(size_t entry) const { return values_.get() + entry * size_t(value_width_); }
  bool holds(uint64_t slot, uint32_t tag, const float* key) const {
    return tag_of(slot) == tag && std::memcmp(key_of(entry_of(slot)), key, sizeof(float) * size_t(key_width_)) == 0;
  }

  template <class Compute>
  const float* find_hashed(const float* key, uint64_t h, Scratch& scratch, const Compute& compute) {
    const uint32_t tag = uint32_t(h >> 32);
    for (size_t at = size_t(h) & mask_;; at = (at + 1) & mask_) {
      const uint64_t slot = load(at);
      if (slot == 0) break;
      if (holds(slot, tag, key)) return value_of(entry_of(slot));
    }
    const size_t entry = claimed_.fetch_add(1, std::memory_order_relaxed);
    if (entry >= capacity_) {  // no room until the next prepare(): computed, not kept
      scratch.value.resize(size_t(value_width_));
      compute(scratch.value.data());
      return scratch.value.data();
    }
    std::memcpy(keys_.get() + entry * size_t(key_width_), key, sizeof(float) * size_t(key_width_));
    float* value = value_of(entry);
    compute(value);
    // Published with release: a thread that reads the slot with acquire sees the key and value.
    const uint64_t mine = pack(tag, entry);
    for (size_t at = size_t(h) & mask_;; at = (at + 1) & mask_) {
      uint64_t seen = 0;
      if (std::atomic_ref<uint64_t>(table_[at]).compare_exchange_strong(seen, mine, std::memory_order_release,
                                                                        std::memory_order_acquire))
        break;
      if (holds(seen, tag, key)) break;  // another thread's entry for the same row got there first
    }
    return value;
  }
  // The key and value of the entry at h's first slot, where it is likely h's, into the cache.
  void prefetch_entry(uint64_t h) const {
    const uint64_t slot = std::atomic_ref<uint64_t>(table_[size_t(h) & mask_]).load(std::memory_order_relaxed);
    if (slot == 0 || tag_of(slot) != uint32_t(h >> 32)) return;
    const char* key = reinterpret_cast<const char*>(key_of(entry_of(slot)));
    for (size_t at = 0; at < sizeof(float) * size_t(key_width_) && at < 512; at += 64) __builtin_prefetch(key + at);
    __builtin_prefetch(value_of(entry_of(slot)));
  }
  // Four independent multiply chains over the key's 8-byte words (one chain was half of a
  // forward's time), mixed at the end; any collision is caught by comparing the whole key.
  uint64_t hash(const float* key) const {
    constexpr uint64_t kMultiplier = 0xFF51AFD7ED558CCDull;
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(key);
    const size_t size = sizeof(float) * size_t(key_width_);
    uint64_t lane[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0x27D4EB2F165667C5ull};
    size_t at = 0;
    for (; at + 32 <= size; at += 32)
      for (int k = 0; k < 4; ++k) {
        uint64_t word;
        std::memcpy(&word, bytes + at + 8 * k, sizeof word);
        lane[k] = (lane[k] ^ word) * kMultiplier;
      }
    for (int k = 0; at + 8 <= size; at += 8, ++k) {
      uint64_t word;
      std::memcpy(&word, bytes + at, sizeof word);
      lane[k] = (lane[k] ^ word) * kMultiplier;
    }
    if (at < size) {
      uint32_t word;
      std::memcpy(&word, bytes + at, sizeof word);
      lane[3] = (lane[3] ^ word) * kMultiplier;
    }
    uint64_t h = lane[0] ^ (lane[1] << 21 | lane[1] >> 43) ^ (lane[2] << 42 | lane[2] >> 22) ^ (lane[3] << 11 | lane[3] >> 53);
    h ^= h >> 29;
    h *= kMultiplier;
    return h ^ (h >> 32);
  }
  // A table of `slots` (a power of two) holding the published entries of the old one.
  void rehash(size_t slots) {
    std::unique_ptr<uint64_t[]> old = std::move(table_);
    const size_t old_slots = slots_;
    table_.reset(new uint64_t[slots]());
    slots_ = slots;
    mask_ = slots - 1;
    for (size_t k = 0; k < old_slots; ++k) {
      if (old[k] == 0) continue;
      size_t at = size_t(hash(key_of(entry_of(old[k])))) & mask_;
      while (table_[at] != 0) at = (at + 1) & mask_;
      table_[at] = old[k];
    }
  }

  int key_width_, value_width_;
  bool enabled_;
  size_t limit_ = 0;     // entries the budget holds
  size_t capacity_ = 0;  // entries until the next prepare()
  std::atomic<size_t> claimed_{0};  // entries claimed (past capacity_: rows computed and not kept)
  std::unique_ptr<float[]> keys_, values_;  // (limit_, key_width), (limit_, value_width)
  std::unique_ptr<uint64_t[]> table_;
  size_t slots_ = 0, mask_ = 0;
};

}  // namespace raspc::verification_plan
