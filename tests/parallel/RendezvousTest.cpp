// Rendezvous security: a local run's store listens on 127.0.0.1 only (checked in /proc/net/tcp
// and by connecting through the machine's other addresses), a multi-node run's node 0 store on
// every interface; malformed torchrun variables are errors naming the variable.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "parallel/Rendezvous.h"
#include "support/Sockets.h"
#include "util/Error.h"

namespace halo::parallel {
namespace {

using namespace std::chrono_literals;

// Every listening socket on `port` is bound to 127.0.0.1.
void expect_loopback_only(uint16_t port) {
  int found = 0;
  for (const auto& [addr, p] : testing::listening_sockets())
    if (p == port) {
      ++found;
      EXPECT_EQ(addr, testing::kProcLoopback) << "port " << port << " listens on a non-loopback address";
    }
  EXPECT_EQ(found, 1) << "port " << port;
}

// The machine's IPv4 addresses other than 127.0.0.0/8.
std::vector<in_addr> other_addresses() {
  std::vector<in_addr> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
      const in_addr a = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
      if ((ntohl(a.s_addr) >> 24) != 127) out.push_back(a);
    }
  ::freeifaddrs(list);
  return out;
}

int connect_errno(in_addr addr, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr = addr;
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

TEST(Rendezvous, LauncherStoreListensOnLoopbackOnly) {
  LocalStoreServer server(0, 2, 5s);
  ASSERT_NE(server.port(), 0);
  expect_loopback_only(server.port());
  EXPECT_EQ(connect_errno(in_addr{htonl(INADDR_LOOPBACK)}, server.port()), 0);
  for (const in_addr a : other_addresses())
    EXPECT_EQ(connect_errno(a, server.port()), ECONNREFUSED) << "reachable through " << ::inet_ntoa(a);
}

// Node 0 of a multi-node run is the one store that listens on every interface.
TEST(Rendezvous, MultiNodeStoreListensOnAllInterfaces) {
  LocalStoreServer server(0, 2, 5s, /*all_interfaces=*/true);
  ASSERT_NE(server.port(), 0);
  int found = 0;
  for (const auto& [addr, p] : testing::listening_sockets())
    if (p == server.port()) {
      ++found;
      EXPECT_EQ(addr, 0u) << "not bound to 0.0.0.0";
    }
  EXPECT_EQ(found, 1);
  EXPECT_EQ(connect_errno(in_addr{htonl(INADDR_LOOPBACK)}, server.port()), 0);
  for (const in_addr a : other_addresses()) {
    EXPECT_EQ(connect_errno(a, server.port()), 0) << ::inet_ntoa(a);
  }
}

TEST(Rendezvous, RankZeroHostedStoreListensOnLoopbackOnly) {
  auto [fd, port] = testing::occupy_port();
  ::close(fd);
  WorldInfo w;
  w.rank = 0;
  w.world_size = 1;
  w.master_addr = "127.0.0.1";
  w.master_port = port;
  auto store = connect_store(w, 5s);
  expect_loopback_only(port);
}

TEST(Rendezvous, TakenPortIsAnErrorNamingThePort) {
  auto [fd, port] = testing::occupy_port();
  try {
    LocalStoreServer server(port, 1, 5s);
    ADD_FAILURE() << "bound a taken port";
  } catch (const util::Error& e) {
    EXPECT_NE(e.problem().find("127.0.0.1:" + std::to_string(port)), std::string::npos) << e.problem();
  }
  ::close(fd);
}

TEST(Rendezvous, MalformedVariablesNameTheVariable) {
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_PORT", "99999", 1);
  try {
    world_from_env();
    ADD_FAILURE() << "accepted MASTER_PORT=99999";
  } catch (const util::Error& e) {
    EXPECT_NE(e.problem().find("MASTER_PORT='99999'"), std::string::npos) << e.problem();
  }
  ::setenv("MASTER_PORT", "29500", 1);
  ::setenv("RANK", "2", 1);
  EXPECT_THROW(world_from_env(), util::Error);
  for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_PORT"}) ::unsetenv(v);
}

}  // namespace
}  // namespace halo::parallel
