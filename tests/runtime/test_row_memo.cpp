// The verification forward's memo (runtime/row_memo.hpp): a row is computed once while the memo
// has room, the rows past its room this round are computed and not kept, a full memo starts again
// at the next prepare(), and two threads that look rows up at once get every row's own value.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/row_memo.hpp"

using raspc::verification_plan::RowMemo;

namespace {

constexpr int kKeyWidth = 3, kValueWidth = 2;

// A memo whose lookups always pay (the cost is far above a lookup's).
RowMemo memo() { return RowMemo(kKeyWidth, kValueWidth, 1e6); }

// Keys (rows of kKeyWidth floats): row n holds the key of `ids[n]`.
std::vector<float> keys_of(const std::vector<int>& ids) {
  std::vector<float> keys;
  for (int id : ids) keys.insert(keys.end(), {float(id), 0.5f * float(id), -float(id % 7)});
  return keys;
}

// The function memoised: a row's value from its key alone.
void compute(float* value, const float* key) {
  value[0] = key[0] + key[1];
  value[1] = key[0] * key[2];
}

// Looks up `ids` with `scratch`; counts the computes in `computed` and checks each value.
void look_up(RowMemo& m, const std::vector<int>& ids, RowMemo::Scratch& scratch, std::atomic<int>& computed,
             std::atomic<int>& wrong) {
  const std::vector<float> keys = keys_of(ids);
  m.find_rows(
      keys.data(), kKeyWidth, ids.size(), scratch,
      [&](float* value, const float* key) {
        ++computed;
        compute(value, key);
      },
      [&](size_t n, const float* value) {
        float want[kValueWidth];
        compute(want, keys.data() + n * kKeyWidth);
        if (value[0] != want[0] || value[1] != want[1]) ++wrong;
      });
}

std::vector<int> range(int first, int end) {
  std::vector<int> ids;
  for (int id = first; id < end; ++id) ids.push_back(id);
  return ids;
}

}  // namespace

TEST_CASE("row memo: each row computed once while there is room, then looked up") {
  RowMemo m = memo();
  REQUIRE(m.enabled());
  RowMemo::Scratch scratch;
  std::atomic<int> computed{0}, wrong{0};
  m.prepare(8);
  look_up(m, {1, 2, 1, 3, 2, 1}, scratch, computed, wrong);
  CHECK(computed == 3);
  m.prepare(8);
  look_up(m, {3, 2, 1}, scratch, computed, wrong);
  CHECK(computed == 3);
  CHECK(wrong == 0);
}

TEST_CASE("row memo: rows past the room prepare() gave are computed, not kept, until the next prepare()") {
  RowMemo m = memo();
  RowMemo::Scratch scratch;
  std::atomic<int> computed{0}, wrong{0};
  m.prepare(2);
  look_up(m, {1, 2, 3, 4, 3}, scratch, computed, wrong);
  CHECK(computed == 5);  // 1 and 2 kept; 3, 4 and 3 again computed
  m.prepare(8);
  look_up(m, {1, 2, 3, 4, 3}, scratch, computed, wrong);
  CHECK(computed == 7);  // 3 and 4 now kept
  CHECK(wrong == 0);
}

TEST_CASE("row memo: a full memo starts again empty at the next prepare()") {
  RowMemo m = memo();
  m.set_budget(0);  // the least it holds: 1,024 rows
  RowMemo::Scratch scratch;
  std::atomic<int> computed{0}, wrong{0};
  m.prepare(5000);
  look_up(m, range(0, 1024), scratch, computed, wrong);
  look_up(m, range(1024, 1030), scratch, computed, wrong);  // no room: computed, not kept
  CHECK(computed == 1030);
  m.prepare(5000);
  look_up(m, {0, 1, 2}, scratch, computed, wrong);  // emptied
  CHECK(computed == 1033);
  look_up(m, {0, 1, 2}, scratch, computed, wrong);
  CHECK(computed == 1033);
  CHECK(wrong == 0);
}

TEST_CASE("row memo: two threads at once, each row's own value, and every row kept for both") {
  // The rows overlap between the threads, in another order on each: both compute some rows at
  // the same moment; whichever entry the table keeps, each caller gets the row's own value. The
  // table starts small and grows at prepare(), between the rounds.
  RowMemo m = memo();
  std::atomic<int> computed{0}, wrong{0};
  std::vector<int> forward = range(0, 20000), backward(forward.rbegin(), forward.rend());
  for (int round = 0; round < 2; ++round) {
    m.prepare(2 * forward.size());
    std::thread other([&] {
      RowMemo::Scratch scratch;
      look_up(m, backward, scratch, computed, wrong);
    });
    RowMemo::Scratch scratch;
    look_up(m, forward, scratch, computed, wrong);
    other.join();
    if (round == 0) {
      CHECK(computed >= 20000);
      CHECK(computed <= 40000);
    }
  }
  const int first_rounds = computed;
  m.prepare(100);
  RowMemo::Scratch scratch;
  look_up(m, range(0, 20000), scratch, computed, wrong);
  CHECK(computed == first_rounds);  // every row kept
  CHECK(wrong == 0);
}
