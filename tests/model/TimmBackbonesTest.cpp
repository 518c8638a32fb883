// ResNet and RegNet against timm (the real package of the project's .venv): every state_dict name and
// shape in timm's order, parameter counts, and timm's logits from timm's weights in eval mode
// (running statistics, float32) and train mode (batch statistics synced over sp, float64: a
// 2x4 map's statistics amplify float32 rounding), unsharded and at sp=2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "arch/Backbones.h"
#include "io/TensorFile.h"
#include "model/Backbone.h"
#include "model/StateDict.h"
#include "parallel/Communicator.h"
#include "parallel/ShardedTensor.h"
#include "support/RankHarness.h"

namespace halo::model {
namespace {

// timm's resnet18/34/50/101 and regnety_008/032: state_dict names and shapes, parameter
// counts; for resnet18, resnet50 and regnety_008 (4 classes, random BatchNorm state) the
// weights and both modes' logits.
void write_timm_resnets(const std::string& dir) {
  const std::string script = dir + "/make.py";
  std::ofstream(script) << R"(import sys, json, torch, timm
from safetensors.torch import save_file
d = sys.argv[1]
out = {}
for name in ['resnet18', 'resnet34', 'resnet50', 'resnet101', 'regnety_008', 'regnety_032']:
    m = timm.create_model(name, pretrained=False)
    out[name] = {'state': [[k, list(v.shape)] for k, v in m.state_dict().items()],
                 'parameters': sum(p.numel() for p in m.parameters())}
json.dump(out, open(d + '/timm.json', 'w'))
torch.manual_seed(0)
for name in ['resnet18', 'resnet50', 'regnety_008']:
    m = timm.create_model(name, pretrained=False, num_classes=4)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.weight.uniform_(0.5, 1.5); mod.bias.uniform_(-0.2, 0.2)
                mod.running_mean.uniform_(-0.1, 0.1); mod.running_var.uniform_(0.5, 2.0)
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, d + '/' + name + '.safetensors')
    x = torch.randn(2, 3, 64, 128)
    with torch.no_grad():
        ev = m.eval()(x)
        tr = m.double().train()(x.double())
    save_file({'input': x, 'eval': ev, 'train': tr}, d + '/' + name + '-ref.safetensors')
)";
  const std::string cmd = std::string(HALO_PYTHON) + " " + script + " " + dir + " > " + dir + "/make.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "see " << dir << "/make.log";
}

std::shared_ptr<BackboneImpl> from_timm(const std::string& arch, const std::string& file) {
  std::shared_ptr<BackboneImpl> m = make_backbone(arch, 4);
  std::map<std::string, at::Tensor> weights;
  for (auto& [name, t] : io::load_safetensors(file)) weights[name] = t;
  torch::NoGradGuard no_grad;
  size_t copied = 0;
  for (auto& [name, t] : state_dict(*m)) {
    auto it = weights.find(name);
    if (it == weights.end() || it->second.sizes() != t.sizes()) {
      ADD_FAILURE() << name << " is not in " << file << " with shape " << t.sizes();
      continue;
    }
    t.copy_(it->second);
    ++copied;
  }
  EXPECT_EQ(copied, weights.size()) << file;
  return m;
}

// {eval logits (float32), train logits (float64)} for the reference input over `sp`.
std::pair<at::Tensor, at::Tensor> halo_logits(const std::string& arch, const std::string& dir,
                                              std::shared_ptr<parallel::Communicator> sp) {
  std::shared_ptr<BackboneImpl> m = from_timm(arch, dir + "/" + arch + ".safetensors");
  const at::Tensor x = io::load_safetensors(dir + "/" + arch + "-ref.safetensors")[1].second;  // "input"
  torch::NoGradGuard no_grad;
  m->eval();
  at::Tensor ev = m->forward(parallel::shard_evenly(x, sp));
  m->train();
  m->to(torch::kFloat64);
  at::Tensor tr = m->forward(parallel::shard_evenly(x.to(torch::kFloat64), sp));
  return {ev, tr};
}

double rel(const at::Tensor& got, const at::Tensor& want) {
  return ((got - want).abs().max() / want.abs().max()).item<double>();
}

TEST(TimmBackbones, StateDictNamesShapesAndParameterCountsAreTimms) {
  testing::RankHarness h(1);
  write_timm_resnets(h.dir());
  const nlohmann::json timm = nlohmann::json::parse(std::ifstream(h.dir() + "/timm.json"));
  for (const char* name : {"resnet18", "resnet34", "resnet50", "resnet101", "regnety_008", "regnety_032"}) {
    EXPECT_EQ(arch::backbone_layers(name)->parameter_count(), timm[name]["parameters"].get<int64_t>()) << name;
    const std::shared_ptr<BackboneImpl> m = make_backbone(name, 1000);
    const auto state = state_dict(*m);
    const auto& want = timm[name]["state"];
    ASSERT_EQ(state.size(), want.size()) << name;
    for (size_t i = 0; i < state.size(); ++i) {
      EXPECT_EQ(state[i].first, want[i][0].get<std::string>()) << name << " #" << i;
      EXPECT_EQ(state[i].second.sizes().vec(), want[i][1].get<std::vector<int64_t>>()) << state[i].first;
    }
  }
}

TEST(TimmBackbones, TimmWeightsGiveTimmsLogitsInBothModesUnshardedAndOverTwoRanks) {
  testing::RankHarness h(2);
  const std::string dir = h.dir();
  const std::vector<std::string> archs{"resnet18", "resnet50", "regnety_008"};
  if (h.is_rank()) {
    auto mesh = h.join({1, 2});
    for (const std::string& a : archs) {
      auto [ev, tr] = halo_logits(a, dir, mesh->sp_ptr());
      if (h.rank() == 0) io::save_safetensors(dir + "/sp2-" + a + ".safetensors", {{"eval", ev}, {"train", tr}}, {});
    }
    return;
  }
  write_timm_resnets(dir);
  h.run_ranks();
  for (const std::string& a : archs) {
    const io::NamedTensors ref = io::load_safetensors(dir + "/" + a + "-ref.safetensors");  // eval, input, train
    const io::NamedTensors sp2 = io::load_safetensors(dir + "/sp2-" + a + ".safetensors");  // eval, train
    auto [ev, tr] = halo_logits(a, dir, parallel::Communicator::solo());
    EXPECT_LE(rel(ev, ref[0].second), 1e-5) << a << " eval, one process";
    EXPECT_LE(rel(tr, ref[2].second), 1e-10) << a << " train, one process";
    EXPECT_LE(rel(sp2[0].second, ref[0].second), 1e-5) << a << " eval, sp=2";
    EXPECT_LE(rel(sp2[1].second, ref[2].second), 1e-10) << a << " train, sp=2";
  }
}

}  // namespace
}  // namespace halo::model
