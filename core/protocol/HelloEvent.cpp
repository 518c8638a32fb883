// The hello event's keys and their JSON: every field optional on reading (default 0 / "").
#include "protocol/HelloEvent.h"

#include <nlohmann/json.hpp>

#include "protocol/FieldReader.h"

namespace halo::protocol {

namespace {
constexpr char kWorld[] = "world", kPid[] = "pid", kDevice[] = "device", kHost[] = "host", kSpIndex[] = "sp_index",
               kDpIndex[] = "dp_index";
}

void to_json(nlohmann::json& j, const HelloEvent& e) {
  j = {{keys::event, HelloEvent::name},
       {keys::rank, e.rank},
       {kWorld, e.world},
       {kPid, e.pid},
       {kDevice, e.device},
       {kHost, e.host},
       {kSpIndex, e.sp_index},
       {kDpIndex, e.dp_index}};
}

void from_json(const nlohmann::json& j, HelloEvent& e) {
  const FieldReader r = FieldReader::event(j, HelloEvent::name);
  e.rank = static_cast<int>(r.integer(keys::rank));
  e.world = static_cast<int>(r.integer(kWorld));
  e.pid = r.integer(kPid);
  e.device = r.text(kDevice);
  e.host = r.text(kHost);
  e.sp_index = static_cast<int>(r.integer(kSpIndex));
  e.dp_index = static_cast<int>(r.integer(kDpIndex));
}

}  // namespace halo::protocol
