#include "wire/drivers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scenarios/spec.h"
#include "wire/json_line.h"

namespace wire {
namespace {

using scenarios::ProducerSpec;

std::string Ms(sim::Duration d) { return absl::StrCat(d.millis()); }

// Where the named driver programs are: $PRODSIM_CLIENTS_DIR, then beside an
// installed prodsim (PREFIX/libexec/prodsim), then the build tree's, then,
// for a driver that is not built (`source_needs` names what must be beside
// it, e.g. kafkajs's node_modules), the source tree's.
std::optional<std::string> FindProgram(const std::string& file, const std::string& subdir,
                                       const char* source_needs) {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("PRODSIM_CLIENTS_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "libexec" / "prodsim");
#ifdef PRODSIM_BUILD_CLIENTS_DIR
  dirs.push_back(std::filesystem::path(PRODSIM_BUILD_CLIENTS_DIR) / subdir);
#endif
  for (const std::filesystem::path& d : dirs) {
    const std::filesystem::path p = d / file;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
#ifdef PRODSIM_SOURCE_CLIENTS_DIR
  if (source_needs != nullptr) {
    const std::filesystem::path d = std::filesystem::path(PRODSIM_SOURCE_CLIENTS_DIR) / subdir;
    const std::filesystem::path p = d / file;
    if (access(p.c_str(), X_OK) == 0 && access((d / source_needs).c_str(), R_OK) == 0) {
      return p.string();
    }
  }
#endif
  return std::nullopt;
}

// The scenario's settings under their own names, for a --client=CMD driver.
ClientConfig ScenarioNames(const ProducerSpec& p) {
  ClientConfig c;
  auto put = [&](std::string_view name, const auto& v) {
    if (!v) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(*v)>, sim::Duration>) {
      c.config.emplace_back(std::string(name), absl::StrCat(Ms(*v), "ms"));
    } else if constexpr (std::is_same_v<std::decay_t<decltype(*v)>, bool>) {
      c.config.emplace_back(std::string(name), *v ? "true" : "false");
    } else {
      c.config.emplace_back(std::string(name), absl::StrCat(*v));
    }
  };
  put("idempotent", p.idempotent);
  put("net_max_open_requests", p.net_max_open_requests);
  put("net_read_timeout", p.net_read_timeout);
  put("net_dial_timeout", p.net_dial_timeout);
  put("required_acks", p.required_acks);
  put("timeout", p.timeout);
  put("retry_max", p.retry_max);
  put("retry_backoff", p.retry_backoff);
  put("return_successes", p.return_successes);
  put("return_errors", p.return_errors);
  put("flush_messages", p.flush_messages);
  put("flush_bytes", p.flush_bytes);
  put("flush_frequency", p.flush_frequency);
  put("flush_max_messages", p.flush_max_messages);
  put("max_message_bytes", p.max_message_bytes);
  put("channel_buffer_size", p.channel_buffer_size);
  put("metadata_retry_max", p.metadata_retry_max);
  put("metadata_retry_backoff", p.metadata_retry_backoff);
  put("version", p.version);
  return c;
}

}  // namespace

// clients/README.md has this table with the reasons.
ClientConfig LibrdkafkaConfig(const ProducerSpec& p) {
  ClientConfig c;
  auto set = [&](const char* prop, std::string value) {
    c.config.emplace_back(prop, std::move(value));
  };
  if (p.idempotent) set("enable.idempotence", *p.idempotent ? "true" : "false");
  if (p.net_max_open_requests) {
    set("max.in.flight.requests.per.connection", absl::StrCat(*p.net_max_open_requests));
  }
  if (p.required_acks) set("acks", *p.required_acks == -1 ? "all" : absl::StrCat(*p.required_acks));
  if (p.timeout) set("request.timeout.ms", Ms(*p.timeout));
  if (p.retry_max) set("retries", absl::StrCat(*p.retry_max));
  if (p.retry_backoff) set("retry.backoff.ms", Ms(*p.retry_backoff));
  if (p.flush_frequency) set("linger.ms", Ms(*p.flush_frequency));
  if (p.flush_max_messages) set("batch.num.messages", absl::StrCat(*p.flush_max_messages));
  if (p.flush_bytes) set("batch.size", absl::StrCat(*p.flush_bytes));
  if (p.max_message_bytes) set("message.max.bytes", absl::StrCat(*p.max_message_bytes));
  if (p.net_read_timeout) set("socket.timeout.ms", Ms(*p.net_read_timeout));
  if (p.net_dial_timeout) set("socket.connection.setup.timeout.ms", Ms(*p.net_dial_timeout));
  auto ignore = [&](const char* name, bool set_in_scenario) {
    if (set_in_scenario) c.ignored.emplace_back(name);
  };
  ignore("return_successes", p.return_successes.has_value());
  ignore("return_errors", p.return_errors.has_value());
  ignore("flush_messages", p.flush_messages.has_value());
  ignore("channel_buffer_size", p.channel_buffer_size.has_value());
  ignore("metadata_retry_max", p.metadata_retry_max.has_value());
  ignore("metadata_retry_backoff", p.metadata_retry_backoff.has_value());
  ignore("version", p.version.has_value());
  return c;
}

namespace {

// The drivers known by name, each with the client's defaults for what the
// checks read (when the scenario leaves the setting unset).
struct KnownDriver {
  const char* name;
  const char* family;  // whose [clients."NAME"] settings it takes
  const char* program;
  const char* subdir;         // under clients/ (and the build tree's clients/)
  const char* source_needs;   // not built: run from the source tree when this is there
  const char* missing;        // how to get the program
  const char* built_version;  // the version the program runs without @VERSION
  const char* module;         // kafkajs: the npm module the driver requires ("" if none)
  ClientConfig (*config)(const ProducerSpec&);
  bool idempotent_default;
  int16_t acks_default;
  int32_t max_in_flight_default;
  bool sequence_error_is_violation;
};

constexpr KnownDriver kKnownDrivers[] = {
    // librdkafka 2.0.2 CONFIGURATION.md: enable.idempotence false, acks all,
    // max.in.flight 1000000 (5 with idempotence: the broker's limit).
    // rd_kafka_handle_idempotent_Produce_error retries a batch refused with
    // OUT_OF_ORDER_SEQUENCE_NUMBER when an earlier one in flight failed, so
    // that answer is not itself a violation. Debian 12's library unless
    // @VERSION names one built by clients/librdkafka/build-version.sh.
    {"librdkafka", "librdkafka", "prodsim-librdkafka", "librdkafka", nullptr,
     "build the default preset, or set PRODSIM_CLIENTS_DIR", "2.0.2", "", LibrdkafkaConfig, false,
     -1, 1000000, false},
    // kafkajs 2.2.4: idempotent false, acks -1 (all), maxInFlightRequests
    // unlimited (null); the driver takes the scenario's names as they are.
    // Not built by CMake: node, and `npm ci` in clients/kafkajs (its README).
    {"kafkajs", "kafkajs", "prodsim-kafkajs", "kafkajs", "node_modules",
     "run 'npm ci' in clients/kafkajs (node and npm), or set PRODSIM_CLIENTS_DIR", "2.2.4",
     "kafkajs", ScenarioNames, false, -1, 1000000, true},
    // kafkajs-fixes 2.3.1, a fork of kafkajs 2.2.4 on npm (the same options),
    // locked beside it in clients/kafkajs/package-lock.json.
    {"kafkajs-fixes", "kafkajs", "prodsim-kafkajs", "kafkajs", "node_modules",
     "run 'npm ci' in clients/kafkajs (node and npm), or set PRODSIM_CLIENTS_DIR", "2.3.1",
     "kafkajs-fixes", ScenarioNames, false, -1, 1000000, true},
    // sarama.NewConfig(): idempotent false, WaitForLocal (1), 5 open requests.
    // Sarama 1.42.1 unless @VERSION: CMake builds it (clients/sarama/build.sh,
    // module mode, pinned by clients/sarama/versions/1.42.1).
    {"sarama", "sarama", "prodsim-sarama", "sarama", nullptr,
     "build the default preset (go 1.25 or newer and the module proxy), or "
     "clients/sarama/build.sh into $PRODSIM_CLIENTS_DIR",
     "1.42.1", "", ScenarioNames, false, 1, 5, true},
    // The Java client (org.apache.kafka:kafka-clients): its real
    // KafkaProducer, in lockstep in simulated time, over real sockets on the
    // wall clock (clients/java/README.md).
    // 3.0+: enable.idempotence true, acks all, 5 in flight (KIP-679); 2.x:
    // false and acks 1 (FindDriver). Like librdkafka, it retries a batch
    // answered OUT_OF_ORDER_SEQUENCE_NUMBER when one before it failed
    // (TransactionManager's canRetry), so that answer is not itself a
    // violation. 3.9.1 unless @VERSION: CMake builds 2.6.3, 3.9.1, 4.4.0.
    {"java", "java", "prodsim-java", "java", nullptr,
     "build the default preset (a JDK 17+ and Maven, Maven Central), or clients/java/build.sh "
     "DIR VERSION with DIR in $PRODSIM_CLIENTS_DIR",
     "3.9.1", "", ScenarioNames, true, -1, 5, false},
    // franz-go's kgo (clients/franz-go/README.md): idempotent by default,
    // acks all (config.go's defaults), up to 5 requests in flight per broker
    // once the first answer shows Produce v4+ (4 before 1.21; sink.go). A
    // batch answered OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID
    // is retried under a bumped epoch by design (sink.go's
    // errReloadProducerID), so that answer is not itself a violation.
    // 1.22.3 unless @VERSION: built by CMake, any other release on demand.
    {"franz-go", "franz-go", "prodsim-franz-go", "franz-go", nullptr,
     "build the default preset (go 1.25 or newer and the module proxy), or "
     "clients/franz-go/build.sh "
     "PROGRAM VERSION",
     "1.22.3", "", ScenarioNames, true, -1, 5, false},
};

bool IsVersionText(std::string_view v) {
  if (v.empty() || v.size() > 64) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
           c == '-' || c == '_';
  });
}

// Where clients/FAMILY/build.sh is: an install's PREFIX/share/prodsim, else
// the source tree's.
std::optional<std::filesystem::path> BuildScript(std::string_view family) {
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path().parent_path() / "share" / "prodsim" / "clients" /
                         std::string(family) / "build.sh");
  }
#ifdef PRODSIM_SOURCE_CLIENTS_DIR
  candidates.push_back(std::filesystem::path(PRODSIM_SOURCE_CLIENTS_DIR) / std::string(family) /
                       "build.sh");
#endif
  for (const std::filesystem::path& p : candidates) {
    if (access(p.c_str(), R_OK) == 0) return p;
  }
  return std::nullopt;
}

// Runs a driver's build script, its output on prodsim's stderr; true if it
// exited 0.
bool RunBuild(std::vector<std::string> argv) {
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(STDERR_FILENO, STDOUT_FILENO);  // prodsim's stdout stays its own
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Builds the Sarama driver for `version` into `program` with
// clients/sarama/build.sh (its lines on stderr): a release through the
// module proxy, "main" (or "main-COMMIT") from the checkout
// $PRODSIM_SARAMA_MAIN names. A version once built is not built again: a
// newer checkout of main needs its own name (main-COMMIT) or the old
// program removed.
absl::Status BuildSarama(const std::string& version, const std::filesystem::path& program) {
  std::vector<std::string> args;
  const bool main = version == "main" || absl::StartsWith(version, "main-");
  if (main) {
    const char* checkout = std::getenv("PRODSIM_SARAMA_MAIN");
    if (checkout == nullptr || *checkout == '\0') {
      return absl::NotFoundError(absl::StrCat(
          "sarama main is not built: no ", program.string(),
          " (the module proxy serves releases only: set PRODSIM_SARAMA_MAIN to a checkout of "
          "IBM/sarama, or run clients/sarama/build.sh ",
          program.string(), " --checkout DIR)"));
    }
    args = {"--checkout", checkout};
  } else {
    args = {version};
  }
  std::optional<std::filesystem::path> script = BuildScript("sarama");
  if (!script) {
    return absl::NotFoundError(absl::StrCat("sarama ", version, " is not built: no ",
                                            program.string(),
                                            " and no clients/sarama/build.sh to build it"));
  }
  std::cerr << "prodsim: building the Sarama driver for " << version << " into " << program.string()
            << " (" << script->string() << ")\n";
  // main-COMMIT: the version the driver reports is the one asked for (the
  // checkout must be at that commit).
  std::vector<std::string> argv = {"env", absl::StrCat("SARAMA_VERSION=", version), "bash",
                                   script->string(), program.string()};
  if (!main || version == "main") argv.erase(argv.begin(), argv.begin() + 2);
  argv.insert(argv.end(), args.begin(), args.end());
  if (!RunBuild(std::move(argv)) || access(program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("sarama ", version,
                                            " could not be built (clients/sarama/build.sh: see "
                                            "its lines above)"));
  }
  return absl::OkStatus();
}

// Builds a driver with clients/FAMILY/build.sh ARGS (its lines on stderr)
// into `program`: the Java driver (build.sh DIR VERSION: kafka-clients from
// Maven Central), franz-go's (build.sh PROGRAM VERSION: kgo from the module
// proxy). `what` names the client in the messages.
absl::Status BuildWith(const std::string& family, const std::string& what,
                       const std::vector<std::string>& args, const std::filesystem::path& program) {
  std::optional<std::filesystem::path> script = BuildScript(family);
  if (!script) {
    return absl::NotFoundError(absl::StrCat(what, " is not built: no ", program.string(),
                                            " and no clients/", family, "/build.sh to build it"));
  }
  std::cerr << "prodsim: building the " << family << " driver for " << what << " into "
            << program.string() << " (" << script->string() << ")\n";
  std::vector<std::string> argv = {"bash", script->string()};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!RunBuild(std::move(argv)) || access(program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(what, " could not be built (clients/", family,
                                            "/build.sh: see its lines above)"));
  }
  return absl::OkStatus();
}

// What @VERSION changes for `k`, from the versions directory.
absl::Status UseVersion(const KnownDriver& k, const std::string& version, Driver* d) {
  const std::filesystem::path dir = std::filesystem::path(VersionsDir());
  const std::string family = k.family;
  if (family == "librdkafka") {
    const std::filesystem::path lib = dir / absl::StrCat("librdkafka-", version) / "lib";
    if (access((lib / "librdkafka.so.1").c_str(), R_OK) != 0) {
      return absl::NotFoundError(absl::StrCat(
          "librdkafka ", version, " is not built: no ", (lib / "librdkafka.so.1").string(),
          " (clients/librdkafka/build-version.sh SOURCE ", (dir / "librdkafka-").string(), version,
          "; SOURCE pypi:confluent-kafka==2.16.1 takes "
          "2.16.0 from that wheel)"));
    }
    d->env.emplace_back("LD_LIBRARY_PATH", lib.string());
    return absl::OkStatus();
  }
  if (family == "kafkajs") {
    // "kafkajs_fixes-2.3.1", not "kafkajs-fixes-2.3.1": kafkajs-fixes's
    // index.js finds itself by replacing the first "-fixes" in its own path.
    std::string stem = k.module;
    std::replace(stem.begin(), stem.end(), '-', '_');
    const std::filesystem::path prefix = dir / absl::StrCat(stem, "-", version);
    const std::filesystem::path module = prefix / "node_modules" / k.module;
    if (access((module / "package.json").c_str(), R_OK) != 0) {
      return absl::NotFoundError(absl::StrCat(
          k.module, " ", version, " is not installed: no ", (module / "package.json").string(),
          " (npm install --prefix ", prefix.string(), " ", k.module, "@", version, ")"));
    }
    d->env.emplace_back("PRODSIM_KAFKAJS_MODULE", module.string());
    return absl::OkStatus();
  }
  // Sarama, Java and franz-go: FAMILY-V/PROGRAM where the named drivers are
  // (a build tree or an install holds the versions CMake built), else in
  // the versions directory, else built there now (clients/sarama/build.sh:
  // a release from the module proxy, main from $PRODSIM_SARAMA_MAIN, a
  // checkout; clients/java/build.sh: kafka-clients from Maven Central;
  // clients/franz-go/build.sh: kgo from the module proxy).
  const std::string subdir = absl::StrCat(family, "-", version);
  if (std::optional<std::string> built =
          FindProgram(absl::StrCat(subdir, "/", k.program), k.subdir, nullptr)) {
    d->argv = {*built};
    return absl::OkStatus();
  }
  const std::filesystem::path program = dir / subdir / k.program;
  if (access(program.c_str(), X_OK) != 0) {
    absl::Status st = family == "java" ? BuildWith(family, absl::StrCat("kafka-clients ", version),
                                                   {(dir / subdir).string(), version}, program)
                      : family == "franz-go" ? BuildWith(family, absl::StrCat("franz-go ", version),
                                                         {program.string(), version}, program)
                                             : BuildSarama(version, program);
    if (!st.ok()) return st;
  }
  d->argv = {program.string()};
  return absl::OkStatus();
}

}  // namespace

std::string VersionsDir() {
  if (const char* env = std::getenv("PRODSIM_VERSIONS_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/prodsim/versions");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr && *home != '\0' ? home : "/tmp", "/.cache/prodsim/versions");
}

std::vector<std::string> DriverNames() {
  std::vector<std::string> names;
  for (const KnownDriver& k : kKnownDrivers) names.emplace_back(k.name);
  return names;
}

absl::StatusOr<Driver> FindDriver(std::string_view client) {
  Driver d;
  const size_t at = client.find('@');
  const std::string_view name = client.substr(0, at);
  const std::string version =
      at == std::string_view::npos ? "" : std::string(client.substr(at + 1));
  for (const KnownDriver& k : kKnownDrivers) {
    if (name != k.name) continue;
    if (at != std::string_view::npos && !IsVersionText(version)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--client=", absl::string_view(client.data(), client.size()),
          ": a version is letters, digits, '.', '-' and '_' (e.g. ", k.name, "@2.15.1)"));
    }
    std::optional<std::string> program = FindProgram(k.program, k.subdir, k.source_needs);
    // A Sarama version other than the built-in one is a program of its own
    // (UseVersion), found or built without the default one.
    const std::string_view fam = k.family;
    const bool own_program = (fam == "sarama" || fam == "java" || fam == "franz-go") &&
                             !version.empty() && version != k.built_version;
    if (!program && !own_program) {
      return absl::NotFoundError(
          absl::StrCat("the ", k.name, " driver (", k.program, ") was not found: ", k.missing));
    }
    d.name = std::string(client);
    d.family = k.family;
    d.version = version.empty() ? std::string(k.built_version) : version;
    if (program) d.argv = {*program};
    if (*k.module != '\0') d.env.emplace_back("PRODSIM_KAFKAJS_MODULE", k.module);
    if (!version.empty() && version != k.built_version) {
      d.env.clear();
      if (absl::Status st = UseVersion(k, version, &d); !st.ok()) return st;
    }
    d.config = k.config;
    d.idempotent_default = k.idempotent_default;
    d.acks_default = k.acks_default;
    d.max_in_flight_default = k.max_in_flight_default;
    d.sequence_error_is_violation = k.sequence_error_is_violation;
    // kafka-clients before 3.0: enable.idempotence false, acks 1 (KIP-679
    // changed both in 3.0).
    if (std::string_view(k.family) == "java" && version.size() > 1 && version[0] < '3' &&
        version[1] == '.') {
      d.idempotent_default = false;
      d.acks_default = 1;
    }
    // The families whose drivers have simulated time, and whose replays
    // are exact (docs/real-clients.md).
    const std::string_view family = k.family;
    d.simulated_time = family == "kafkajs" || family == "sarama" || family == "java";
    d.exact_replay = family == "kafkajs" || family == "java";
    return d;
  }
  if (client.empty())
    return absl::InvalidArgumentError("--client needs a driver name or a command");
  d.name = std::string(client);
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(client.data(), client.size()), ' ', absl::SkipEmpty())) {
    d.argv.emplace_back(part);
  }
  d.config = ScenarioNames;
  return d;
}

namespace {

// An acks value as the client spells it: a number, or "all", "leader",
// "none" (kgo's RequiredAcks).
std::optional<int16_t> AcksOf(std::string_view v) {
  if (v == "all") return -1;
  if (v == "leader") return 1;
  if (v == "none") return 0;
  int32_t n = 0;
  if (absl::SimpleAtoi(absl::string_view(v.data(), v.size()), &n) && n >= -1 && n <= 1)
    return static_cast<int16_t>(n);
  return std::nullopt;
}

}  // namespace

Effective EffectiveSettings(const Driver& driver, const scenarios::Scenario& s) {
  Effective e;
  e.idempotent = s.producer.idempotent.value_or(driver.idempotent_default);
  e.acks = static_cast<int16_t>(s.producer.required_acks.value_or(driver.acks_default));
  e.max_in_flight = s.producer.net_max_open_requests.value_or(driver.max_in_flight_default);
  const std::string_view f = driver.family;
  const bool rdk = f == "librdkafka", java = f == "java", kgo = f == "franz-go";
  const scenarios::ClientSpec* c = f.empty() ? nullptr : s.Client(driver.family);
  bool idempotence_set = s.producer.idempotent.has_value();
  // Each family's own names for the three settings.
  for (const auto& [k, v] : c != nullptr ? c->settings : decltype(c->settings){}) {
    int32_t n = 0;
    if (kgo && k == "DisableIdempotentWrite") {
      e.idempotent = v != "true";
      idempotence_set = true;
    } else if (k == (rdk || java ? "enable.idempotence" : "idempotent")) {
      e.idempotent = v == "true";
      idempotence_set = true;
    } else if ((rdk && (k == "acks" || k == "request.required.acks")) || (java && k == "acks") ||
               (kgo && k == "RequiredAcks") || (f == "kafkajs" && k == "acks")) {
      e.acks = AcksOf(v).value_or(e.acks);
    } else if (((rdk || java) && k == "max.in.flight.requests.per.connection") ||
               (rdk && k == "max.in.flight") || (f == "kafkajs" && k == "maxInFlightRequests") ||
               (kgo && k == "MaxProduceRequestsInflightPerBroker")) {
      if (absl::SimpleAtoi(v, &n)) e.max_in_flight = n;
    }
  }
  // The Java client: idempotence asked for with acks left unset means acks
  // all on every line (2.x's default acks is 1, but enable.idempotence
  // sets it). Idempotent by default (3.0+), but not with acks other than
  // all, retries 0 or more than 5 in flight unless asked: KAFKA-13673 in
  // 3.0.2 and 3.1.2 (3.0.0 and 3.1.0 raised a ConfigException; 4.x still
  // refuses more than 5 in flight). prodsim-franz-go does as the Java
  // client for acks (kgo itself refuses them).
  const bool acks_set =
      s.producer.required_acks.has_value() ||
      (c != nullptr && std::any_of(c->settings.begin(), c->settings.end(),
                                   [](const auto& kv) { return kv.first == "acks"; }));
  if (java && e.idempotent && idempotence_set && !acks_set) e.acks = -1;
  if ((java || kgo) && !idempotence_set && e.acks != -1) e.idempotent = false;
  const bool no_retries =
      (s.producer.retry_max.has_value() && *s.producer.retry_max == 0) ||
      (c != nullptr && std::any_of(c->settings.begin(), c->settings.end(), [](const auto& kv) {
         return kv.first == "retries" && kv.second == "0";
       }));
  if (java && !idempotence_set && (no_retries || e.max_in_flight > 5)) {
    e.idempotent = false;
  }
  // librdkafka caps an idempotent producer at 5 in flight (rdkafka_conf.c).
  if (rdk && e.idempotent) e.max_in_flight = std::min(e.max_in_flight, 5);
  return e;
}

ConfigList WithClientSettings(const Driver& driver, const scenarios::Scenario& s, ConfigList mapped,
                              std::vector<std::string>* not_taken) {
  for (const scenarios::ClientSpec& c : s.clients) {
    if (c.name != driver.family) {
      not_taken->push_back(absl::StrCat("[clients.", c.name, "]"));
      continue;
    }
    for (const auto& kv : c.settings) mapped.push_back(kv);
  }
  return mapped;
}

std::string JobLine(const scenarios::WorkloadSpec& w, const std::vector<std::string>& topics,
                    const std::string& bootstrap, sim::Duration flush_timeout,
                    const ConfigList& config) {
  std::vector<std::string> quoted_topics;
  for (const std::string& t : topics) quoted_topics.push_back(JsonQuote(t));
  std::vector<std::string> pairs;
  for (const auto& [k, v] : config)
    pairs.push_back(absl::StrCat("[", JsonQuote(k), ",", JsonQuote(v), "]"));
  return absl::StrCat(
      "{\"bootstrap\":", JsonQuote(bootstrap), ",\"topics\":[", absl::StrJoin(quoted_topics, ","),
      "],\"messages\":", w.messages, ",\"keys\":", w.keys, ",\"burst\":", w.burst,
      ",\"interval_us\":", w.interval.nanos() / 1000, ",\"value_bytes\":", w.value_bytes,
      ",\"close_at_us\":", w.close_at ? w.close_at->nanos() / 1000 : -1,
      ",\"flush_timeout_ms\":", flush_timeout.millis(), ",\"config\":[", absl::StrJoin(pairs, ","),
      "]}");
}

}  // namespace wire
