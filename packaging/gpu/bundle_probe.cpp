// The GPU bundle's completeness probe (packaging/gpu-check.sh, stage a): one translation unit
// that includes every third-party header the headless build uses and calls every library it
// links, compiled and linked against .gpu-bundle only (the script checks from the compiler's
// dependency file and from ldd that nothing came from /usr). Prints one line per check.
// fmt is there as a CMake package only: Halo includes LibTorch's own fmt headers.
#include <openssl/evp.h>
#include <sqlite3.h>

#include <gloo/algorithm.h>
#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

namespace {

int failures = 0;

template <typename... A>
std::string format(const char* f, A... a) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

void report(const char* what, bool ok, const std::string& detail) {
  std::printf("bundle probe: %-10s %s  %s\n", what, ok ? "ok  " : "FAIL", detail.c_str());
  if (!ok) ++failures;
}

TEST(BundleProbe, GMockMatches) {
  const std::vector<int> v{1, 2, 3};
  EXPECT_THAT(v, ::testing::ElementsAre(1, 2, 3));
}

}  // namespace

int main(int argc, char** argv) {
  // nlohmann-json, CLI11, Gloo (headers)
  const auto j = nlohmann::json::parse(R"({"views": 7, "width": 2048})");
  report("json", j["views"] == 7, j.dump());
  CLI::App app("probe");
  int width = 0;
  app.add_option("--width", width);
  const char* cli_argv[] = {"probe", "--width", "2048"};
  app.parse(3, cli_argv);
  report("cli11", width == 2048, format("--width %d", width));
  report("gloo", sizeof(gloo::Context) > 0, "headers compile (c10d's ProcessGroupGloo includes them)");

  // SQLite
  sqlite3* db = nullptr;
  int rc = sqlite3_open(":memory:", &db);
  sqlite3_exec(db, "create table t(x); insert into t values (41), (1);", nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "select sum(x) from t", -1, &st, nullptr);
  const bool sql_ok = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 42;
  sqlite3_finalize(st);
  sqlite3_close(db);
  report("sqlite", sql_ok, std::string("libsqlite3 ") + sqlite3_libversion());

  // OpenSSL libcrypto: SHA-256("abc")
  unsigned char md[32];
  unsigned int n = 0;
  EVP_Digest("abc", 3, md, &n, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned i = 0; i < n; ++i) hex += format("%02x", md[i]);
  report("openssl", hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex.substr(0, 16));

  // OpenCV: what core/data calls (drawing, resize, JPEG/PNG encode and decode).
  cv::Mat img(128, 256, CV_8UC3, cv::Scalar(20, 40, 60));
  cv::line(img, {0, 0}, {255, 127}, cv::Scalar(255, 0, 0), 2, cv::LINE_AA);
  cv::circle(img, {64, 64}, 10, cv::Scalar(0, 255, 0), cv::FILLED);
  cv::ellipse(img, {128, 64}, {20, 10}, 30, 0, 360, cv::Scalar(0, 0, 255), 1);
  cv::rectangle(img, cv::Rect(10, 10, 30, 20), cv::Scalar(9, 9, 9), cv::FILLED);
  std::vector<cv::Point> poly{{200, 10}, {240, 30}, {210, 60}};
  cv::fillConvexPoly(img, poly, cv::Scalar(1, 2, 3));
  cv::arrowedLine(img, {10, 100}, {100, 100}, cv::Scalar(7, 7, 7));
  cv::Mat small;
  cv::resize(img, small, cv::Size(128, 64), 0, 0, cv::INTER_LINEAR);
  std::vector<uchar> jpg, png;
  cv::imencode(".jpg", img, jpg, {cv::IMWRITE_JPEG_QUALITY, 90});
  cv::imencode(".png", small, png);
  const cv::Mat back = cv::imdecode(jpg, cv::IMREAD_COLOR), back_png = cv::imdecode(png, cv::IMREAD_COLOR);
  report("opencv", back.cols == 256 && back.rows == 128 && back_png.cols == 128 && cv::norm(back_png, small) == 0,
         format("OpenCV %s: jpeg %zu B, png %zu B", CV_VERSION, jpg.size(), png.size()));

  // GoogleTest + GMock (static libraries)
  ::testing::InitGoogleTest(&argc, argv);
  report("gtest", RUN_ALL_TESTS() == 0, "libgtest.a + libgmock.a");
  std::printf("bundle probe: %s\n", failures == 0 ? "all ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
