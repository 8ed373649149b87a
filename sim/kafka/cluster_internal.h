// Helpers shared by the files that implement kafka::Cluster (cluster.cc,
// cluster_controller.cc, cluster_replication.cc, cluster_serving.cc). Not
// part of the cluster's interface: include it from those files only.
#ifndef PRODSIM_SIM_KAFKA_CLUSTER_INTERNAL_H_
#define PRODSIM_SIM_KAFKA_CLUSTER_INTERNAL_H_

#include <algorithm>
#include <vector>

#include "sim/kafka/types.h"

namespace kafka::cluster_internal {

inline bool Contains(const std::vector<BrokerId>& v, BrokerId b) {
  return std::find(v.begin(), v.end(), b) != v.end();
}

inline void Erase(std::vector<BrokerId>& v, BrokerId b) {
  v.erase(std::remove(v.begin(), v.end(), b), v.end());
}

}  // namespace kafka::cluster_internal

#endif  // PRODSIM_SIM_KAFKA_CLUSTER_INTERNAL_H_
