// broker_state_fuzzer: random produce sequences against the broker's
// producer-state rules (sim/kafka ProducerStateManager), compared with the
// independent model in sim/kafka/producer_state_model.h. Each 4-byte
// record of the input is one batch; byte 0 of the input picks the Kafka
// version. Sequences are drawn near what the rules expect (the next one, a
// resend of a cached batch, a gap, an overlap, a wrap at INT32_MAX) so that
// small inputs reach every rule. A disagreement aborts with both answers.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/core/time.h"
#include "sim/kafka/producer_state.h"
#include "sim/kafka/producer_state_model.h"

namespace {

using kafka::state_model::AppendCheck;
using kafka::state_model::Model;

const char* KindName(AppendCheck::Kind k) {
  switch (k) {
    case AppendCheck::Kind::kAppend: return "append";
    case AppendCheck::Kind::kDuplicate: return "duplicate";
    case AppendCheck::Kind::kError: return "error";
  }
  return "?";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const kafka::KafkaVersion kVersions[] = {
      kafka::KafkaVersion::k2_6, kafka::KafkaVersion::k2_0, kafka::KafkaVersion::k0_11};
  Model m;
  m.version = kVersions[data[0] % 3];
  kafka::ProducerStateManager sut(m.version);
  for (size_t i = 1; i + 4 <= size && i < 1 + 4 * 512; i += 4) {
    const uint8_t a = data[i], b = data[i + 1], c = data[i + 2], d = data[i + 3];
    const int64_t pid = (a & 3) == 0 ? -1 : (a & 3);  // 0: not idempotent
    const std::vector<kafka::state_model::LogBatch> cache = m.Cache(pid);
    const int16_t current = cache.empty() ? int16_t{0} : static_cast<int16_t>(cache.back().epoch);
    const int16_t epoch =
        static_cast<int16_t>(std::max(0, current + static_cast<int>((a >> 2) % 4) - 1));
    const int32_t count = 1 + (d % 5);
    int64_t next =
        cache.empty() ? 0 : (int64_t{cache.back().last_seq} + 1) % kafka::state_model::kSeqSpace;
    int64_t first = next;
    switch (b % 6) {
      case 0: break;  // the expected one
      case 1: first = cache.empty() ? 0 : cache[c % cache.size()].first_seq; break;  // a resend
      case 2: first = next + 1 + c % 3; break;                                       // a gap
      case 3: first = next - 1 - c % 3; break;                                       // an overlap
      case 4: first = INT32_MAX - (c % 3); break;  // near the wrap
      case 5: first = c % 8; break;                // small, anywhere
    }
    first = ((first % kafka::state_model::kSeqSpace) + kafka::state_model::kSeqSpace) %
            kafka::state_model::kSeqSpace;
    const int32_t seq = static_cast<int32_t>(first);
    const AppendCheck want = kafka::state_model::ModelAnswer(m, pid, epoch, seq, count);
    const AppendCheck got =
        sut.Check(pid < 0 ? kafka::ProducerId::kNone : kafka::ProducerId(pid),
                  pid < 0 ? kafka::Epoch::kNone : kafka::Epoch(epoch), kafka::Sequence(seq), count);
    if (!(got == want)) {
      std::fprintf(stderr,
                   "broker_state_fuzzer: batch %zu pid=%lld epoch=%d seq=%d n=%d: manager says %s "
                   "(%s, offset %lld), model says %s (%s, offset %lld)\n",
                   (i - 1) / 4, static_cast<long long>(pid), epoch, seq, count, KindName(got.kind),
                   std::string(kafka::ErrorCodeName(got.error)).c_str(),
                   static_cast<long long>(got.duplicate_base_offset.value), KindName(want.kind),
                   std::string(kafka::ErrorCodeName(want.error)).c_str(),
                   static_cast<long long>(want.duplicate_base_offset.value));
      std::abort();
    }
    if (want.kind == AppendCheck::Kind::kAppend) {
      kafka::state_model::AppendToLog(m, pid, epoch, seq, count);
      if (pid >= 0) {
        const kafka::state_model::LogBatch& lb = m.log.back();
        sut.Update(kafka::ProducerId(pid), kafka::Epoch(epoch), kafka::Sequence(seq),
                   kafka::LastSequence(kafka::Sequence(seq), count), kafka::Offset(lb.first_offset),
                   kafka::Offset(lb.last_offset), sim::Time() + sim::Duration::Millis(lb.time_ms));
      }
    }
  }
  return 0;
}
