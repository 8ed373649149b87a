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
  // The real files' known_on: a finding known on some versions of its
  // client, new on the others (issue 29: the Sarama job could not gate).
  EXPECT_TRUE(known.Known("sequence-reuse@kafkajs", "kafkajs@2.2.4"));
  EXPECT_TRUE(known.Known("sequence-reuse@kafkajs", "kafkajs-fixes@2.3.1"));
  EXPECT_FALSE(known.Known("sequence-reuse@kafkajs", "kafkajs@2.3.0"));
  EXPECT_TRUE(known.Known("goroutine-leak@Broker.responseReceiver", "sarama@1.42.1"));
  EXPECT_FALSE(known.Known("goroutine-leak@Broker.responseReceiver", "sarama@1.61.1"));
  EXPECT_TRUE(known.Known("ack-without-write@librdkafka", "librdkafka@2.12.0"));
  EXPECT_FALSE(known.Known("ack-without-write@librdkafka", "librdkafka@2.17.0"));
  EXPECT_EQ(known.ProfilesOf("rewritten-under-new-epoch@librdkafka"), "librdkafka@2.0.2..2.16.0");
}

// known_on keys a real client's signature by client and version range: a
// finding known on one version and seen on another is new there, and says
// where it is known.
TEST(KnownSignatures, ARealFindingIsKnownOnItsClientsVersions) {
  KnownSignatures known;
  const absl::StatusOr<scenarios::KnownOn> on =
      scenarios::ParseKnownOn("librdkafka@2.0.2..2.15.1,2.16.0; java@3.0..");
  ASSERT_TRUE(on.ok()) << on.status();
  known.Add("ack-without-write@librdkafka", *on, "librdkafka@2.0.2..2.15.1,2.16.0; java@3.0..");
  EXPECT_TRUE(known.Known("ack-without-write@librdkafka", "librdkafka@2.0.2"));
  EXPECT_TRUE(known.Known("ack-without-write@librdkafka", "librdkafka@2.9.1"));
  EXPECT_TRUE(known.Known("ack-without-write@librdkafka", "librdkafka@2.16"));
  EXPECT_FALSE(known.Known("ack-without-write@librdkafka", "librdkafka@2.15.2"));
  EXPECT_FALSE(known.Known("ack-without-write@librdkafka", "librdkafka@2.0.1"));
  EXPECT_FALSE(known.Known("ack-without-write@librdkafka", "librdkafka"));
  EXPECT_FALSE(known.Known("ack-without-write@librdkafka", "kafkajs@2.2.4"));
  EXPECT_TRUE(known.Known("ack-without-write@librdkafka", "java@4.4.0"));
  EXPECT_FALSE(known.Known("ack-without-write@librdkafka", "java@2.8.2"));
  EXPECT_EQ(known.ProfilesOf("ack-without-write@librdkafka"),
            "librdkafka@2.0.2..2.15.1,2.16.0; java@3.0..");
  EXPECT_EQ(known.size(), 1u);
}

TEST(KnownOn, ParsesRangesAndRefusesBadOnes) {
  using scenarios::CompareVersions;
  EXPECT_LT(CompareVersions("2.9.1", "2.15.0"), 0);
  EXPECT_EQ(CompareVersions("2.16", "2.16.0"), 0);
  EXPECT_LT(CompareVersions("main", "1.0.0"), 0);
  const absl::StatusOr<scenarios::KnownOn> main = scenarios::ParseKnownOn("sarama@main,1.42.1");
  ASSERT_TRUE(main.ok());
  EXPECT_TRUE(main->Covers("sarama", "main"));
  EXPECT_TRUE(main->Covers("sarama", "1.42.1"));
  EXPECT_FALSE(main->Covers("sarama", "1.42.2"));
  for (const char* bad : {"librdkafka", "@2.0", "librdkafka@", "librdkafka@2.15..2.0",
                          "sarama@main..1.0", "librdkafka@2 0", "librdkafka@2.0,"}) {
    EXPECT_FALSE(scenarios::ParseKnownOn(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace search
