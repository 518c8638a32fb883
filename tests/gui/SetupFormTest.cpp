// The setup form: presets load and round-trip, bad values are rejected with the CLI's own
// messages (config problems and the launcher's width check), good values are accepted.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>

#include <QCheckBox>

#include "CoreChecks.h"
#include "SetupForm.h"
#include "config/ExperimentConfig.h"
#include "config/FieldInfo.h"

namespace halo::gui {
namespace {

QString quickstart() { return QDir(HALO_SOURCE_DIR "/experiments").filePath("quickstart.json"); }

TEST(SetupForm, LoadsThePresetAndWritesTheSameExperiment) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  EXPECT_TRUE(form.valid()) << form.problems_text().toStdString();
  const auto from_form = config::parse_experiment(form.experiment());
  ASSERT_TRUE(from_form.problems.empty());
  EXPECT_EQ(from_form.config, config::load_experiment(quickstart().toStdString(), {}));
  EXPECT_EQ(form.spin("data.width")->value(), 256);
  EXPECT_EQ(form.combo("parallel.strategy")->currentText(), "tp");
}

TEST(SetupForm, RejectsBadValuesWithTheCliMessages) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  QSignalSpy validity(&form, &SetupForm::validityChanged);
  auto* launch = form.findChild<QPushButton*>("launch");
  ASSERT_NE(launch, nullptr);
  EXPECT_TRUE(launch->isEnabled());

  form.line("optim.lr")->setText("-0.1");  // typed as the user would
  EXPECT_FALSE(form.valid());
  ASSERT_EQ(validity.count(), 1);
  EXPECT_FALSE(validity.takeFirst().at(0).toBool());
  EXPECT_FALSE(launch->isEnabled());
  const auto parsed = config::parse_experiment(form.experiment());
  EXPECT_EQ(form.problems_text().toStdString(), config::describe_problems(parsed.problems));
  EXPECT_NE(form.problems_text().toStdString().find("optim.lr: -0.1: use a finite number > 0"), std::string::npos);

  form.line("optim.lr")->setText("abc");  // not a number at all
  EXPECT_NE(form.problems_text().toStdString().find("optim.lr: \"abc\""), std::string::npos);

  form.line("optim.lr")->setText("3e-4");
  form.spin("parallel.sp")->setValue(1);  // tp needs sp >= 2
  EXPECT_FALSE(form.valid());
  EXPECT_NE(form.problems_text().toStdString().find("parallel.sp: 1: \"tp\" shards the width"), std::string::npos);

  form.spin("parallel.sp")->setValue(3);  // 256 does not split over 3 ranks: the launcher's check
  EXPECT_FALSE(form.valid());
  EXPECT_NE(form.problems_text().toStdString().find("cannot be sharded over sp=3"), std::string::npos)
      << form.problems_text().toStdString();
  EXPECT_NE(form.problems_text().toStdString().find("hint: nearest input widths"), std::string::npos);

  form.spin("data.height")->setValue(16);  // below the backbone's stride
  EXPECT_NE(form.problems_text().toStdString().find("data.height: 16: use an integer from 32 to 65536"),
            std::string::npos);

  form.combo("train.precision")->setCurrentText("fp16");  // fp16 needs CUDA
  EXPECT_NE(form.problems_text().toStdString().find("fp16 needs device cuda"), std::string::npos);
}

TEST(SetupForm, AcceptsGoodValues) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  QSignalSpy validity(&form, &SetupForm::validityChanged);
  form.spin("parallel.sp")->setValue(4);
  form.spin("data.width")->setValue(512);
  form.combo("parallel.strategy")->setCurrentText("tp+checkpoint");
  form.combo("optim.name")->setCurrentText("lamb");
  form.combo("train.precision")->setCurrentText("bf16");
  form.line("optim.lr")->setText("5e-4");
  form.spin("schedule.steps")->setValue(10);
  EXPECT_TRUE(form.valid()) << form.problems_text().toStdString();
  EXPECT_EQ(validity.count(), 0);  // never went invalid on the way
  const auto parsed = config::parse_experiment(form.experiment());
  ASSERT_TRUE(parsed.problems.empty());
  EXPECT_EQ(parsed.config.parallel.sp, 4);
  EXPECT_EQ(parsed.config.parallel.strategy, config::Strategy::TpCheckpoint);
  EXPECT_EQ(parsed.config.optim.name, config::OptimizerKind::Lamb);
  EXPECT_DOUBLE_EQ(parsed.config.optim.lr, 5e-4);
  EXPECT_EQ(parsed.config.data.width, 512);

  // Invalid, then fixed: the form says so and the launch button comes back.
  form.spin("schedule.warmup_steps")->setValue(50);
  EXPECT_FALSE(form.valid());
  EXPECT_NE(form.problems_text().toStdString().find("schedule.warmup_steps: 50: use at most schedule.steps (10)"),
            std::string::npos);
  form.spin("schedule.warmup_steps")->setValue(2);
  EXPECT_TRUE(form.valid());
  ASSERT_EQ(validity.count(), 2);
  EXPECT_TRUE(validity.at(1).at(0).toBool());
  EXPECT_TRUE(form.findChild<QPushButton*>("launch")->isEnabled());
}

TEST(SetupForm, ShowsThePlannersPredictionForTheChosenStrategy) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  const auto cfg = config::parse_experiment(form.experiment()).config;
  const QString tp = form.predicted_text();
  EXPECT_EQ(tp.toStdString(), CoreChecks::prediction_text(cfg));
  EXPECT_TRUE(tp.contains("rank 0: peak")) << tp.toStdString();
  EXPECT_TRUE(tp.contains("rank 1: peak")) << tp.toStdString();
  // Another strategy, another prediction: one rank, all activations kept.
  form.combo("parallel.strategy")->setCurrentText("none");
  form.spin("parallel.sp")->setValue(1);
  ASSERT_TRUE(form.valid()) << form.problems_text().toStdString();
  EXPECT_NE(form.predicted_text(), tp);
  EXPECT_FALSE(form.predicted_text().contains("rank 1:"));
  const auto none = CoreChecks::predicted_peak_bytes(config::parse_experiment(form.experiment()).config);
  const auto sharded = CoreChecks::predicted_peak_bytes(cfg);
  ASSERT_TRUE(none && sharded);
  EXPECT_GT(*none, *sharded);
}

TEST(SetupForm, OffersEveryBackboneWithItsPredictionOrWhyThereIsNone) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  QComboBox* arch = form.combo("model.arch");
  for (const char* name : {"convnext_atto", "resnet18", "resnet101", "regnety_032"})
    EXPECT_NE(arch->findText(name), -1) << name;
  arch->setCurrentText("resnet50");
  ASSERT_TRUE(form.valid()) << form.problems_text().toStdString();
  std::string text = form.predicted_text().toStdString();
  EXPECT_NE(text.find("23.5 M parameters"), std::string::npos) << text;  // fc of 10 classes, not 1000
  EXPECT_NE(text.find("rank 1: peak"), std::string::npos) << text;       // the quickstart's tp over 2 ranks
  // The planner models ResNet and RegNet at fp32: at bf16 the form says so instead.
  form.combo("train.precision")->setCurrentText("bf16");
  ASSERT_TRUE(form.valid()) << form.problems_text().toStdString();
  text = form.predicted_text().toStdString();
  EXPECT_NE(text.find("resnet50: 23.5 M parameters"), std::string::npos) << text;
  EXPECT_NE(text.find("models resnet50 at fp32 only"), std::string::npos) << text;
}

TEST(SetupForm, SaveThenLoadKeepsEveryField) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  form.spin("train.checkpoint_every")->setValue(7);
  form.line("name")->setText("saved-one");
  const QString path = QDir::temp().filePath(QString("halo-gui-form-%1.json").arg(QCoreApplication::applicationPid()));
  ASSERT_TRUE(form.save_file(path));
  SetupForm other;
  ASSERT_TRUE(other.load_file(path));
  EXPECT_EQ(config::parse_experiment(other.experiment()).config, config::parse_experiment(form.experiment()).config);
  EXPECT_EQ(other.spin("train.checkpoint_every")->value(), 7);
  QFile::remove(path);
  QSignalSpy messages(&other, &SetupForm::message);
  EXPECT_FALSE(other.load_file(path));  // gone: a message, not a crash
  EXPECT_EQ(messages.count(), 1);
}

TEST(SetupForm, AFileWithADuplicateKeyIsRefusedNamingTheKey) {
  const QString path = QDir::temp().filePath(QString("halo-gui-dup-%1.json").arg(QCoreApplication::applicationPid()));
  {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"name": "a", "optim": {"lr": 0.1, "lr": 0.2}})");
  }
  SetupForm form;
  QSignalSpy messages(&form, &SetupForm::message);
  EXPECT_FALSE(form.load_file(path));
  ASSERT_EQ(messages.count(), 1);
  const QString text = messages.at(0).at(0).toString();
  EXPECT_TRUE(text.contains("has the key 'optim.lr' twice")) << text.toStdString();
  QFile::remove(path);
}

TEST(SetupForm, HasAWidgetForEveryFieldOfTheConfig) {
  SetupForm form;
  for (const config::FieldInfo& f : config::field_list()) {
    if (f.path == "run_dir") continue;
    const QString p = QString::fromStdString(f.path);
    EXPECT_TRUE(form.line(p) || form.spin(p) || form.combo(p) || form.check(p)) << f.path;
    if (f.kind == config::FieldInfo::Kind::Choice) {
      ASSERT_NE(form.combo(p), nullptr) << f.path;
      EXPECT_EQ(form.combo(p)->count(), static_cast<int>(f.choices.size())) << f.path;
    }
  }
  EXPECT_NE(form.check("optim.scale_lr"), nullptr);
}

TEST(SetupForm, ShowsEveryProblemAtOnce) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  form.line("optim.lr")->setText("-0.1");  // a config problem
  form.spin("parallel.sp")->setValue(3);   // 256 does not shard over 3: the launcher's check
  form.combo("data.source")->setCurrentText("openlanev2");
  form.line("data.root")->setText("/no/such/openlane-folder");  // a folder that does not exist
  EXPECT_FALSE(form.valid());
  const std::string text = form.problems_text().toStdString();
  EXPECT_NE(text.find("optim.lr: -0.1"), std::string::npos) << text;
  EXPECT_NE(text.find("cannot be sharded over sp=3"), std::string::npos) << text;
  EXPECT_NE(text.find("data.root: \"/no/such/openlane-folder\": no such folder"), std::string::npos) << text;
  EXPECT_EQ(form.problem_count(), 3);
  form.line("data.root")->setText(HALO_SOURCE_DIR);  // a folder: that problem goes, the others stay
  EXPECT_EQ(form.problem_count(), 2);
}

TEST(SetupForm, PretrainedWeightsHaveAFilePickerAndAMissingFileIsAProblem) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  EXPECT_NE(form.findChild<QPushButton*>("browse:model.pretrained"), nullptr);
  EXPECT_NE(form.findChild<QPushButton*>("browse:data.root"), nullptr);
  ASSERT_TRUE(form.valid()) << form.problems_text().toStdString();
  form.line("model.pretrained")->setText("/no/such/weights.safetensors");
  EXPECT_FALSE(form.valid());
  EXPECT_TRUE(form.problems_text().contains("model.pretrained: \"/no/such/weights.safetensors\": no such file"))
      << form.problems_text().toStdString();
  const QString file = QDir(HALO_SOURCE_DIR).filePath("CMakeLists.txt");  // any existing file passes this check
  form.line("model.pretrained")->setText(file);
  form.line("model.pretrained_skip")->setText("head., stages.3.");
  EXPECT_TRUE(form.valid()) << form.problems_text().toStdString();
  const nlohmann::json e = form.experiment();
  EXPECT_EQ(e["model"]["pretrained"], file.toStdString());
  EXPECT_EQ(config::parse_experiment(e).config.model.pretrained_skip, (std::vector<std::string>{"head.", "stages.3."}));
}

TEST(SetupForm, CudaExperimentGetsAPredictionWithoutACudaDevice) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(quickstart()));
  form.combo("parallel.device")->setCurrentText("cuda");
  EXPECT_TRUE(form.predicted_text().contains("rank 0: peak")) << form.predicted_text().toStdString();
  EXPECT_TRUE(form.predicted_text().contains("rank 1: peak"));
  if (CoreChecks::cuda_devices() == 0) {  // the launch is refused here, the plan is not
    EXPECT_FALSE(form.valid());
    EXPECT_TRUE(form.problems_text().contains("no CUDA device")) << form.problems_text().toStdString();
  }
}

TEST(SetupForm, OpenLaneShowsDimAndLossWeightsNotClasses) {
  SetupForm form;
  ASSERT_TRUE(form.load_file(QDir(HALO_SOURCE_DIR "/experiments").filePath("openlanev2_baseline.json")));
  EXPECT_TRUE(form.row_visible("model.dim"));
  EXPECT_EQ(form.spin("model.dim")->value(), 64);
  for (const char* k :
       {"loss.lc_cls", "loss.lc_bbox", "loss.te_cls", "loss.te_bbox", "loss.te_iou", "loss.lclc", "loss.lcte"})
    EXPECT_TRUE(form.row_visible(k)) << k;
  EXPECT_EQ(form.line("loss.lclc")->text(), "2.0");
  EXPECT_FALSE(form.row_visible("model.num_classes"));
  form.combo("task")->setCurrentText("convnext");
  EXPECT_TRUE(form.row_visible("model.num_classes"));
  EXPECT_FALSE(form.row_visible("model.dim"));
  EXPECT_FALSE(form.row_visible("loss.lclc"));
}

TEST(SetupForm, NamesWhereTheExperimentCameFrom) {
  SetupForm form;
  QSignalSpy source(&form, &SetupForm::sourceChanged);
  ASSERT_TRUE(form.load_file(quickstart()));
  ASSERT_EQ(source.count(), 1);
  EXPECT_EQ(source.at(0).at(0).toString(), "quickstart.json");
  EXPECT_EQ(form.source(), "quickstart.json");
}

}  // namespace
}  // namespace halo::gui
