// The known signatures per profile (explore --known): a model signature is
// known only on the profiles whose files record it, a real client's
// wherever it shows.
#include "search/explore.h"

#include <filesystem>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace search {
namespace {

// A mechanism recorded on sarama-1.42.1 is new on sarama-main: a fix
// reverted on main brings it back as a regression, not as something known.
TEST(KnownSignatures, AModelSignatureIsKnownOnlyOnItsProfiles) {
  KnownSignatures known;
  known.Add("unsequenced-retry-flush@partitionProducer.flushRetryBuffers", "sarama-1.42.1");
  known.Add("close-during-retry@asyncProducer.retryBatch", "sarama-main");
  known.Add("close-during-retry@asyncProducer.retryBatch", "sarama-1.42.1");
  known.Add("panic@asyncProducer.shutdown", "sarama-main");
  EXPECT_TRUE(
      known.Known("unsequenced-retry-flush@partitionProducer.flushRetryBuffers", "sarama-1.42.1"));
  EXPECT_FALSE(
      known.Known("unsequenced-retry-flush@partitionProducer.flushRetryBuffers", "sarama-main"));
  EXPECT_EQ(known.ProfilesOf("unsequenced-retry-flush@partitionProducer.flushRetryBuffers"),
            "sarama-1.42.1");
  EXPECT_TRUE(known.Known("close-during-retry@asyncProducer.retryBatch", "sarama-main"));
  EXPECT_EQ(known.ProfilesOf("close-during-retry@asyncProducer.retryBatch"),
            "sarama-1.42.1, sarama-main");
  EXPECT_FALSE(known.Known("panic@asyncProducer.shutdown", "sarama-1.42.1"));
  EXPECT_FALSE(known.Known("two-in-flight@Broker.AsyncProduce", "sarama-main"));
  EXPECT_EQ(known.ProfilesOf("two-in-flight@Broker.AsyncProduce"), "");
}

// A real client's signature names its client; it is known in any world.
TEST(KnownSignatures, ARealClientSignatureIsKnownEverywhere) {
  KnownSignatures known;
  known.Add("sequence-reuse@kafkajs", "sarama-1.42.1");
  known.Add("retry-overtaken@librdkafka", "sarama-1.42.1");
  EXPECT_TRUE(known.Known("sequence-reuse@kafkajs", "kafkajs"));
  EXPECT_TRUE(known.Known("retry-overtaken@librdkafka", "librdkafka@2.15.1"));
  // The model's retry-overtaken stays per profile.
  known.Add("retry-overtaken@asyncProducer.retryMessages", "sarama-1.42.1");
  EXPECT_FALSE(known.Known("retry-overtaken@asyncProducer.retryMessages", "sarama-main"));
}

// An unexplained family is known by its fingerprint on its profile; the
// bare word "unclassified" covers nothing else.
TEST(KnownSignatures, UnclassifiedFamiliesAreKnownByFingerprint) {
  KnownSignatures known;
  known.Add("unclassified#1a2b3c", "sarama-main");
  EXPECT_TRUE(known.Known("unclassified#1a2b3c", "sarama-main"));
  EXPECT_FALSE(known.Known("unclassified#1a2b3c", "sarama-1.42.1"));
  EXPECT_FALSE(known.Known("unclassified#ffffff", "sarama-main"));
}

// The repository's own known files load, and each [expect.profiles] entry
// counts on its own profile.
TEST(KnownSignatures, TheKnownDirectoryLoadsPerProfile) {
  KnownSignatures known;
  int code = 0;
  ASSERT_TRUE(LoadKnownSignatures(
      (std::filesystem::path(PRODSIM_SOURCE_DIR) / "scenarios/known").string(), &known, &code));
  // sarama-1.42.1-retry-batch-no-backoff.toml: a v1.42.1 bug main fixed.
  EXPECT_TRUE(known.Known("retry-without-backoff@asyncProducer.retryBatch", "sarama-1.42.1"));
  EXPECT_FALSE(known.Known("retry-without-backoff@asyncProducer.retryBatch", "sarama-main"));
  EXPECT_TRUE(known.Known("sequence-reuse@kafkajs", "kafkajs"));
}

}  // namespace
}  // namespace search
