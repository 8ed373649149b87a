#include "sim/kafka/raw_client.h"

#include "absl/strings/str_cat.h"
#include "sim/core/chan.h"
#include "sim/core/sync.h"

namespace kafka {

sim::Task<absl::StatusOr<net::Endpoint>> RawClient::Connection(net::NodeId broker) {
  auto it = conns_.find(broker);
  if (it != conns_.end() && !it->second.closed()) co_return it->second;
  absl::StatusOr<net::Endpoint> ep = co_await network_.Dial(self_, broker);
  if (!ep.ok()) co_return ep.status();
  conns_[broker] = *ep;
  co_return *ep;
}

void RawClient::Disconnect(net::NodeId broker) {
  auto it = conns_.find(broker);
  if (it == conns_.end()) return;
  it->second.Close();
  conns_.erase(it);
}

sim::Task<absl::Status> RawClient::Send(net::NodeId broker, std::shared_ptr<Message> req) {
  absl::StatusOr<net::Endpoint> ep = co_await Connection(broker);
  if (!ep.ok()) co_return ep.status();
  if (!ep->Send(std::move(req))) co_return absl::UnavailableError("connection reset");
  co_return absl::OkStatus();
}

sim::Task<absl::StatusOr<net::PayloadPtr>> RawClient::Call(net::NodeId broker,
                                                           std::shared_ptr<Message> req,
                                                           sim::Duration timeout) {
  absl::StatusOr<net::Endpoint> ep = co_await Connection(broker);
  if (!ep.ok()) co_return ep.status();
  const int32_t corr = req->correlation_id;
  if (!ep->Send(std::move(req))) co_return absl::UnavailableError("connection reset");
  sim::Timer timer(sched_, "raw-client.timeout", timeout);
  for (;;) {
    // Await the response and the timer together: a select over the
    // connection's receive and the timer channel, as a Go client would.
    std::optional<net::PayloadPtr> msg;
    std::optional<sim::Time> fired;
    sim::Chan<net::PayloadPtr>* inbox = ep->inbox();
    const int which =
        co_await sim::Select(sched_, sim::RecvCase(inbox, &msg), sim::RecvCase(timer.C(), &fired));
    if (which == 1) {
      Disconnect(broker);
      co_return absl::DeadlineExceededError(absl::StrCat("no response to correlation id ", corr));
    }
    if (!msg.has_value()) {
      conns_.erase(broker);
      co_return absl::UnavailableError("connection reset");
    }
    const auto* m = dynamic_cast<const Message*>(msg->get());
    if (m != nullptr && m->correlation_id == corr) co_return *msg;
    // A late response to an earlier, timed-out call: skip it.
  }
}

}  // namespace kafka
