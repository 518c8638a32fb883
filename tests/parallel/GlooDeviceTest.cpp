// How a rank picks its Gloo device: loopback for local worlds, GLOO_SOCKET_IFNAME (comma list)
// when set, else the address that routes to MASTER_ADDR; bad names are errors naming them.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "parallel/GlooDevice.h"
#include "util/Error.h"

namespace halo::parallel {
namespace {

WorldInfo world_at(const std::string& master) {
  WorldInfo w;
  w.world_size = 2;
  w.master_addr = master;
  return w;
}

// A non-loopback IPv4 address of this machine, if it has one.
std::optional<std::string> some_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> out;
  for (ifaddrs* i = list; i && !out; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
      char text[32] = {0};
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
      if (std::string(text).rfind("127.", 0) != 0) out = text;
    }
  ::freeifaddrs(list);
  return out;
}

TEST(GlooDevice, IfnameListsSplitAtCommas) {
  EXPECT_EQ(split_ifnames("eth1"), std::vector<std::string>{"eth1"});
  EXPECT_EQ(split_ifnames("eth1,ib0"), (std::vector<std::string>{"eth1", "ib0"}));
  EXPECT_EQ(split_ifnames(" eth1, ,ib0,"), (std::vector<std::string>{"eth1", "ib0"}));
  EXPECT_TRUE(split_ifnames(",").empty());
}

TEST(GlooDevice, LocalWorldsBindLoopbackWhateverTheVariableSays) {
  const GlooChoice c = choose_gloo_device(world_at("127.0.0.1"), "eth-none");
  EXPECT_EQ(c.address, "127.0.0.1");
  EXPECT_TRUE(c.interfaces.empty());
  EXPECT_EQ(make_gloo_devices(c).size(), 1u);
}

TEST(GlooDevice, WithoutTheVariableTheAddressRoutingToTheMasterIsBound) {
  EXPECT_EQ(local_address_towards("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(local_address_towards("no-such-host.invalid"), std::nullopt);
  const auto mine = some_address();
  ASSERT_TRUE(mine) << "this machine has no non-loopback IPv4 address to test with";
  // Node 0 itself: the route to its own address starts at that address, never at 127.0.0.1.
  const GlooChoice c = choose_gloo_device(world_at(*mine), nullptr);
  EXPECT_EQ(c.address, *mine);
  EXPECT_EQ(c.describe(), "address " + *mine);
  EXPECT_EQ(make_gloo_devices(c).size(), 1u);
}

TEST(GlooDevice, TheVariableNamesInterfacesAndBadNamesAreErrors) {
  const auto mine = some_address();
  ASSERT_TRUE(mine);
  const GlooChoice lo = choose_gloo_device(world_at(*mine), "lo");
  EXPECT_EQ(lo.interfaces, std::vector<std::string>{"lo"});
  EXPECT_EQ(lo.describe(), "interface lo (GLOO_SOCKET_IFNAME)");
  EXPECT_EQ(make_gloo_devices(choose_gloo_device(world_at(*mine), "lo,lo")).size(), 2u);
  try {
    choose_gloo_device(world_at(*mine), "eth-none9");
    FAIL() << "no error";
  } catch (const util::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GLOO_SOCKET_IFNAME names interface 'eth-none9'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(choose_gloo_device(world_at(*mine), ","), util::Error);
  EXPECT_THROW(choose_gloo_device(world_at("no-such-host.invalid"), nullptr), util::Error);
}

}  // namespace
}  // namespace halo::parallel
