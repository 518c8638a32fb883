// Every width-sharded op against the unsharded PyTorch op on real ranks (Gloo, loopback):
// output, input gradient, weight and bias gradients (conv, max/avg pool, global average
// pool, channel LayerNorm, sync BatchNorm, all-gather/scatter); sp in {1,2,3,4}; shapes over
// kernels {1,2,3,4,5,7}, strides {1,2,4}, dilation {1,2}, groups {1,C}; halos wider than stripes;
// stripes in the standard and the channels-last layout, neighbours in different ones.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>
#include <torch/torch.h>

#include "parallel/Collectives.h"
#include "parallel/ShardedConv.h"
#include "parallel/ShardedPool.h"
#include "parallel/SyncBatchNorm.h"
#include "support/RankHarness.h"

namespace halo::parallel {
namespace {

struct OpCase {
  std::string op;  // conv | maxpool | avgpool | avgpool_nopad | gap | batchnorm | gather | scatter
  int64_t B = 2, C = 4, H = 5, W = 8;
  shard::ConvSpec spec;
  torch::Dtype dtype = torch::kFloat64;
  bool overlap = true;
};

bool outputs_nonempty(const OpCase& c, int sp) {
  const shard::Partition in = shard::even_partition(c.W, sp);
  const shard::Window w = c.spec.along_w();
  if (shard::output_width(c.W, w) <= 0) return false;
  const shard::Partition out = shard::output_partition(in, w);
  for (const shard::Span& s : out.spans())
    if (s.empty()) return false;
  const int64_t kh = c.spec.dilation[0] * (c.spec.kernel[0] - 1) + 1;
  return c.H + 2 * c.spec.padding[0] >= kh;
}

std::vector<OpCase> make_cases(const std::string& family, int sp) {
  std::mt19937_64 rng(1234 + static_cast<uint64_t>(sp) * 97 + std::hash<std::string>{}(family) % 1000);
  auto pick = [&](std::vector<int64_t> v) { return v[rng() % v.size()]; };
  std::vector<OpCase> cases;
  auto add_windowed = [&](const std::string& op, int64_t k, int64_t s, int64_t d, int64_t g, torch::Dtype dt) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      OpCase c;
      c.op = op;
      c.dtype = dt;
      c.C = 4;
      const int64_t reach = d * (k - 1) + 1;
      const int64_t pmax = op == "conv" ? reach : k / 2;  // pooling: padding <= kernel/2
      c.spec = {{k, k},
                {s, s},
                {pick({0, 1, 2, 3}) % (pmax + 1), static_cast<int64_t>(rng() % (pmax + 1))},
                {op == "avgpool" || op == "avgpool_nopad" ? 1 : d, op == "avgpool" || op == "avgpool_nopad" ? 1 : d},
                op == "conv" ? g : 1};
      // Stripes from 1 column (halo far wider than the stripe) to a few strides.
      const int64_t each = attempt < 25 ? pick({1, 2, 3, s, 2 * s, 3 * s + 1}) : 4 * s + attempt;
      c.W = each * sp;
      c.H = reach + static_cast<int64_t>(rng() % 4);
      c.overlap = rng() % 4 != 0;
      if (outputs_nonempty(c, sp)) {
        cases.push_back(c);
        return;
      }
    }
  };
  if (family == "conv") {
    for (int64_t k : {1, 2, 3, 4, 5, 7})
      for (int64_t s : {1, 2, 4})
        for (int64_t d : {1, 2})
          for (int64_t g : {int64_t{1}, int64_t{4}}) add_windowed("conv", k, s, d, g, torch::kFloat64);
    for (int64_t k : {3, 7}) add_windowed("conv", k, 1, 1, 4, torch::kFloat32);
    add_windowed("conv", 4, 4, 1, 1, torch::kFloat32);
  } else if (family == "pool") {
    for (const char* op : {"maxpool", "avgpool", "avgpool_nopad"})
      for (int64_t k : {1, 2, 3, 4, 5, 7})
        for (int64_t s : {1, 2, 4}) add_windowed(op, k, s, op[0] == 'm' ? pick({1, 2}) : 1, 1, torch::kFloat64);
  } else {
    for (const char* op : {"gap", "batchnorm", "layernorm", "gather", "scatter"})
      for (torch::Dtype dt : {torch::kFloat64, torch::kFloat32}) {
        OpCase c;
        c.op = op;
        c.dtype = dt;
        c.W = sp * pick({1, 3, 5});
        c.H = 3;
        c.C = 3;
        cases.push_back(c);
      }
  }
  return cases;
}

// LayerNorm over the channels of (B, C, H, W), as timm's LayerNorm2d.
torch::Tensor channel_layer_norm(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return at::layer_norm(x.permute({0, 2, 3, 1}), {x.size(1)}, w, b, 1e-6).permute({0, 3, 1, 2});
}

// Full-size random tensors of case i, identical in every process.
struct CaseData {
  torch::Tensor x, w, b, grad_out;
};

torch::Tensor reference_forward(const OpCase& c, const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                torch::Tensor* rm = nullptr, torch::Tensor* rv = nullptr) {
  const auto& s = c.spec;
  if (c.op == "conv")
    return at::conv2d(x, w, b, {s.stride[0], s.stride[1]}, {s.padding[0], s.padding[1]}, {s.dilation[0], s.dilation[1]},
                      s.groups);
  if (c.op == "maxpool")
    return at::max_pool2d(x, {s.kernel[0], s.kernel[1]}, {s.stride[0], s.stride[1]}, {s.padding[0], s.padding[1]},
                          {s.dilation[0], s.dilation[1]});
  if (c.op == "avgpool" || c.op == "avgpool_nopad")
    return at::avg_pool2d(x, {s.kernel[0], s.kernel[1]}, {s.stride[0], s.stride[1]}, {s.padding[0], s.padding[1]},
                          false, c.op == "avgpool");
  if (c.op == "gap") return x.mean({2, 3});
  if (c.op == "batchnorm") return at::batch_norm(x, w, b, *rm, *rv, true, 0.1, 1e-5, false);
  if (c.op == "layernorm") return channel_layer_norm(x, w, b);
  return x * 1.0;  // gather / scatter: identity on the full tensor
}

CaseData make_data(const OpCase& c, size_t i) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 + i);
  auto o = torch::TensorOptions().dtype(c.dtype);
  CaseData d;
  d.x = torch::randn({c.B, c.C, c.H, c.W}, gen, o);
  if (c.op == "conv") {
    d.w = torch::randn({c.C, c.C / c.spec.groups, c.spec.kernel[0], c.spec.kernel[1]}, gen, o);
    d.b = torch::randn({c.C}, gen, o);
  } else if (c.op == "batchnorm" || c.op == "layernorm") {
    d.w = torch::randn({c.C}, gen, o);
    d.b = torch::randn({c.C}, gen, o);
  }
  torch::Tensor rm = torch::zeros({c.C}, o), rv = torch::ones({c.C}, o);
  at::NoGradGuard ng;
  d.grad_out = torch::randn(reference_forward(c, d.x, d.w, d.b, &rm, &rv).sizes(), gen, o);
  return d;
}

void run_rank(const std::string& family, int sp, const testing::RankHarness& h) {
  auto mesh = h.join({1, sp});
  auto group = mesh->sp_ptr();
  torch::serialize::OutputArchive ar;
  const auto cases = make_cases(family, sp);
  for (size_t i = 0; i < cases.size(); ++i) {
    const OpCase& c = cases[i];
    CaseData d = make_data(c, i);
    torch::Tensor w = d.w.defined() ? d.w.clone().requires_grad_(true) : torch::Tensor();
    torch::Tensor b = d.b.defined() ? d.b.clone().requires_grad_(true) : torch::Tensor();
    torch::Tensor x_in;  // the tensor whose gradient we report
    torch::Tensor y, y_grad;
    if (c.op == "scatter") {
      x_in = d.x.clone().requires_grad_(true);
      ShardedTensor s = scatter_width(x_in, shard::even_partition(c.W, sp), group);
      y = s.local;
      y_grad = d.grad_out.narrow(-1, s.part.span(group->rank()).begin, s.local.size(-1));
    } else {
      ShardedTensor x = shard_evenly(d.x, group);
      // Stripes in either layout, neighbours in different ones: halos travel in one wire order
      // from either. Two consecutive cases share a layout (so conv's two group counts and the
      // collectives' two dtypes each see both), and it flips from rank to rank.
      if ((i / 2 + static_cast<size_t>(h.rank())) % 2 == 1 && x.local.dim() == 4)
        x.local = x.local.contiguous(at::MemoryFormat::ChannelsLast);
      x.local.requires_grad_(true);
      x_in = x.local;
      if (c.op == "gap" || c.op == "gather") {
        y = c.op == "gap" ? global_avg_pool(x) : gather_width(x);
        y_grad = d.grad_out;
      } else {
        ShardedTensor out;
        BatchNormState bn{w, b, torch::zeros({c.C}, x.local.options()), torch::ones({c.C}, x.local.options())};
        if (c.op == "conv") out = sharded_conv2d(x, w, b, c.spec, {c.overlap});
        if (c.op == "maxpool") out = sharded_max_pool2d(x, c.spec);
        if (c.op == "avgpool" || c.op == "avgpool_nopad") out = sharded_avg_pool2d(x, c.spec, c.op == "avgpool");
        if (c.op == "layernorm") out = x.with(channel_layer_norm(x.local, w, b));  // per pixel: local
        if (c.op == "batchnorm") {
          out = sync_batch_norm(x, bn, true);
          ar.write(fmt::format("c{}/running_var", i), bn.running_var);
        }
        y = out.local;
        const shard::Span mine = out.part.span(group->rank());
        y_grad = d.grad_out.narrow(-1, mine.begin, mine.size());
      }
    }
    (y * y_grad).sum().backward();
    ar.write(fmt::format("c{}/y", i), y.detach());
    ar.write(fmt::format("c{}/gx", i), x_in.grad());
    if (w.defined()) ar.write(fmt::format("c{}/gw", i), w.grad());
    if (b.defined()) ar.write(fmt::format("c{}/gb", i), b.grad());
  }
  ar.save_to(fmt::format("{}/r{}.pt", h.dir(), h.rank()));
}

double rel(const torch::Tensor& got, const torch::Tensor& want) {
  EXPECT_EQ(got.sizes(), want.sizes());
  if (got.sizes() != want.sizes()) return 1e9;
  const double scale = std::max(want.abs().max().item<double>(), 1e-300);
  return (got - want).abs().max().item<double>() / scale;
}

class ShardedOps : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ShardedOps, MatchUnshardedPyTorch) {
  const auto [family, sp] = GetParam();
  testing::RankHarness h(sp);
  if (h.is_rank()) return run_rank(family, sp, h);
  torch::set_num_threads(1);
  h.run_ranks();
  if (::testing::Test::HasFatalFailure()) return;
  std::vector<torch::serialize::InputArchive> ar(static_cast<size_t>(sp));
  for (int r = 0; r < sp; ++r) ar[static_cast<size_t>(r)].load_from(fmt::format("{}/r{}.pt", h.dir(), r));
  auto read = [&](int r, const std::string& k) {
    torch::Tensor t;
    ar[static_cast<size_t>(r)].read(k, t);
    return t;
  };
  const auto cases = make_cases(family, sp);
  ASSERT_GE(cases.size(), family == "conv" ? 70u : 8u);
  for (size_t i = 0; i < cases.size(); ++i) {
    const OpCase& c = cases[i];
    const double tol = c.dtype == torch::kFloat64 ? 1e-10 : 1e-5;
    CaseData d = make_data(c, i);
    torch::Tensor x = d.x.clone().requires_grad_(true);
    torch::Tensor w = d.w.defined() ? d.w.clone().requires_grad_(true) : torch::Tensor();
    torch::Tensor b = d.b.defined() ? d.b.clone().requires_grad_(true) : torch::Tensor();
    torch::Tensor rm = torch::zeros({c.C}, x.options()), rv = torch::ones({c.C}, x.options());
    torch::Tensor y = reference_forward(c, x, w, b, &rm, &rv);
    (y * d.grad_out).sum().backward();
    const std::string what =
        fmt::format("case {} {} W={} k={} s={} p={} d={} g={} sp={} overlap={}", i, c.op, c.W, c.spec.kernel[1],
                    c.spec.stride[1], c.spec.padding[1], c.spec.dilation[1], c.spec.groups, sp, c.overlap);
    const bool replicated_out = c.op == "gap" || c.op == "gather";
    const bool replicated_in = c.op == "scatter";
    std::vector<torch::Tensor> ys, gxs;
    torch::Tensor gw, gb;
    for (int r = 0; r < sp; ++r) {
      const std::string k = fmt::format("c{}/", i);
      if (replicated_out) {
        EXPECT_LE(rel(read(r, k + "y"), y.detach()), tol) << what << " rank " << r;
      }
      if (replicated_in) {
        EXPECT_LE(rel(read(r, k + "gx"), x.grad()), tol) << what << " rank " << r;
      }
      ys.push_back(read(r, k + "y"));
      gxs.push_back(read(r, k + "gx"));
      if (w.defined()) gw = r == 0 ? read(r, k + "gw") : gw + read(r, k + "gw");
      if (b.defined()) gb = r == 0 ? read(r, k + "gb") : gb + read(r, k + "gb");
      if (c.op == "batchnorm") {
        EXPECT_LE(rel(read(r, k + "running_var"), rv), tol) << what;
      }
    }
    if (!replicated_out) {
      EXPECT_LE(rel(torch::cat(ys, -1), y.detach()), tol) << what << " (output)";
    }
    if (!replicated_in) {
      EXPECT_LE(rel(torch::cat(gxs, -1), x.grad()), tol) << what << " (input grad)";
    }
    if (w.defined()) {
      EXPECT_LE(rel(gw, w.grad()), tol) << what << " (weight grad)";
    }
    if (b.defined()) {
      EXPECT_LE(rel(gb, b.grad()), tol) << what << " (bias grad)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllRanks, ShardedOps,
                         ::testing::Combine(::testing::Values("conv", "pool", "norm_collectives"),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const auto& info) {
                           return fmt::format("{}_sp{}", std::get<0>(info.param), std::get<1>(info.param));
                         });

}  // namespace
}  // namespace halo::parallel
