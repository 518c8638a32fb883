// Widgets keyed by their config path; experiment() writes them over the loaded file, and
// validate() runs core's parse_experiment plus the launcher's checks on every edit.
#include "SetupForm.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "CoreChecks.h"
#include "config/ExperimentConfig.h"
#include "util/Error.h"

namespace halo::gui {

using nlohmann::json;

namespace {

json* at_path(json& root, const QString& path, bool create) {
  json* node = &root;
  for (const QString& part : path.split('.')) {
    const std::string key = part.toStdString();
    if (!node->is_object()) return nullptr;
    if (!node->contains(key)) {
      if (!create) return nullptr;
      (*node)[key] = json();
    }
    node = &(*node)[key];
  }
  return node;
}

// Typed text as --set reads it: JSON when it parses ("3e-4", "true"), else a string.
json typed(const QString& text) {
  json v = json::parse(text.trimmed().toStdString(), nullptr, false);
  return v.is_discarded() ? json(text.toStdString()) : v;
}

QString shown(const json& v) {
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  return QString::fromStdString(v.dump());
}

}  // namespace

SetupForm::SetupForm(QWidget* parent) : QWidget(parent) {
  predict = [](const nlohmann::json& exp) {
    const std::string text = CoreChecks::prediction_text(config::parse_experiment(exp).config);
    return text.empty() ? tr("the memory planner cannot predict this experiment") : QString::fromStdString(text);
  };
  build();
  set_experiment(config::to_json(config::ExperimentConfig{}));
}

QString SetupForm::experiments_dir() {
  const QString env = qEnvironmentVariable("HALO_EXPERIMENTS");
  if (!env.isEmpty()) return env;
  const QDir app(QCoreApplication::applicationDirPath());
  for (const char* rel : {"../../experiments", "../share/halo/experiments", "../experiments", "experiments"})
    if (QFileInfo(app.filePath(rel)).isDir()) return QDir(app.filePath(rel)).absolutePath();
  return QDir("experiments").absolutePath();
}

QSpinBox* SetupForm::add_spin(const QString& path, int lo, int hi) {
  auto* s = new QSpinBox(this);
  s->setRange(lo, hi);
  s->setObjectName(path);
  connect(s, &QSpinBox::valueChanged, this, &SetupForm::validate);
  fields_[path] = s;
  return s;
}

namespace {

// A combo box's items: the spellings of one of the experiment's enums.
template <class E>
QStringList choices() {
  QStringList out;
  for (std::string_view n : config::names<E>()) out << QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
  return out;
}

}  // namespace

QComboBox* SetupForm::add_combo(const QString& path, const QStringList& items, bool editable) {
  auto* c = new QComboBox(this);
  c->addItems(items);
  c->setEditable(editable);
  c->setObjectName(path);
  connect(c, &QComboBox::currentTextChanged, this, &SetupForm::validate);
  fields_[path] = c;
  return c;
}

QLineEdit* SetupForm::add_line(const QString& path) {
  auto* l = new QLineEdit(this);
  l->setObjectName(path);
  connect(l, &QLineEdit::textChanged, this, &SetupForm::validate);
  fields_[path] = l;
  return l;
}

void SetupForm::build() {
  auto* top = new QHBoxLayout;
  presets_ = new QComboBox(this);
  presets_->setToolTip(tr("Ready experiments in %1").arg(experiments_dir()));
  auto* load = new QPushButton(tr("Load…"), this);
  auto* save = new QPushButton(tr("Save…"), this);
  top->addWidget(new QLabel(tr("Start from:"), this));
  top->addWidget(presets_, 1);
  top->addWidget(load);
  top->addWidget(save);

  auto group = [this](const QString& title, QFormLayout*& form) {
    auto* g = new QGroupBox(title, this);
    form = new QFormLayout(g);
    return g;
  };
  QFormLayout *fg, *fd, *fp, *fo, *ft;
  auto* general = group(tr("Task and model"), fg);
  fg->addRow(tr("Name"), add_line("name"));
  fg->addRow(tr("Task"), add_combo("task", choices<config::Task>()));
  QStringList archs = QString::fromStdString(CoreChecks::variant_names()).split(", ", Qt::SkipEmptyParts);
  archs << "resnet18";
  fg->addRow(tr("Architecture"), add_combo("model.arch", archs, true));
  fg->addRow(tr("Classes"), add_spin("model.num_classes", 0, 1'000'000));
  fg->addRow(tr("Drop path"), add_line("model.drop_path"));

  auto* data = group(tr("Data"), fd);
  fd->addRow(tr("Source"), add_combo("data.source", choices<config::DataSource>()));
  auto* root_row = new QHBoxLayout;
  root_row->addWidget(add_line("data.root"), 1);
  browse_ = new QPushButton(tr("Browse…"), this);
  root_row->addWidget(browse_);
  fd->addRow(tr("Data folder"), root_row);
  fd->addRow(tr("Views"), add_spin("data.views", 0, 1024));
  fd->addRow(tr("Height"), add_spin("data.height", 0, 65536));
  fd->addRow(tr("Width"), add_spin("data.width", 0, 65536));
  fd->addRow(tr("Batch (per dp group)"), add_spin("data.batch", 0, 1'000'000));
  fd->addRow(tr("Loader workers"), add_spin("data.workers", 0, 1024));

  auto* par = group(tr("Parallelism and memory"), fp);
  fp->addRow(tr("Strategy"), add_combo("parallel.strategy", choices<config::Strategy>()));
  fp->addRow(tr("sp (width shards)"), add_spin("parallel.sp", 0, 1024));
  fp->addRow(tr("dp (data parallel)"), add_spin("parallel.dp", 0, 1024));
  fp->addRow(tr("Checkpoint level"), add_combo("parallel.checkpoint_level", choices<config::CheckpointLevel>()));
  fp->addRow(tr("Backend"), add_combo("parallel.backend", choices<config::Backend>()));
  fp->addRow(tr("Device"), add_combo("parallel.device", choices<config::Device>()));
  fp->addRow(tr("Threads per rank"), add_spin("parallel.threads_per_rank", 0, 1024));
  devices_ = new QLabel(this);
  devices_->setWordWrap(true);
  fp->addRow(tr("Devices"), devices_);

  auto* opt = group(tr("Optimizer and schedule"), fo);
  fo->addRow(tr("Optimizer"), add_combo("optim.name", choices<config::OptimizerKind>()));
  fo->addRow(tr("Learning rate"), add_line("optim.lr"));
  fo->addRow(tr("Weight decay"), add_line("optim.weight_decay"));
  fo->addRow(tr("Momentum (sgd)"), add_line("optim.momentum"));
  fo->addRow(tr("Beta 1"), add_line("optim.beta1"));
  fo->addRow(tr("Beta 2"), add_line("optim.beta2"));
  fo->addRow(tr("Gradient clip (0 off)"), add_line("optim.grad_clip"));
  scale_lr_ = new QCheckBox(tr("scale lr with the global batch"), this);
  connect(scale_lr_, &QCheckBox::toggled, this, &SetupForm::validate);
  fo->addRow(QString(), scale_lr_);
  fo->addRow(tr("Steps"), add_spin("schedule.steps", 0, 1'000'000'000));
  fo->addRow(tr("Warm-up steps"), add_spin("schedule.warmup_steps", 0, 1'000'000'000));
  fo->addRow(tr("Min lr ratio"), add_line("schedule.min_lr_ratio"));

  auto* train = group(tr("Training"), ft);
  ft->addRow(tr("Accumulation"), add_spin("train.accumulation", 0, 65536));
  ft->addRow(tr("Precision"), add_combo("train.precision", choices<config::Precision>()));
  ft->addRow(tr("Seed"), add_line("train.seed"));
  ft->addRow(tr("Log every"), add_spin("train.log_every", 0, 1'000'000'000));
  ft->addRow(tr("Checkpoint every (0: end)"), add_spin("train.checkpoint_every", 0, 1'000'000'000));

  status_ = new QLabel(this);
  predicted_ = new QLabel(this);
  predicted_->setWordWrap(true);
  predicted_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  predicted_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  problems_ = new QPlainTextEdit(this);
  problems_->setReadOnly(true);
  problems_->setMaximumHeight(140);
  launch_ = new QPushButton(tr("Launch"), this);
  launch_->setObjectName("launch");

  auto* grid = new QGridLayout;
  grid->addWidget(general, 0, 0);
  grid->addWidget(data, 1, 0);
  grid->addWidget(par, 0, 1);
  grid->addWidget(train, 1, 1);
  grid->addWidget(opt, 0, 2, 2, 1);
  auto* bottom = new QHBoxLayout;
  auto* left = new QVBoxLayout;
  left->addWidget(status_);
  left->addWidget(problems_);
  bottom->addLayout(left, 3);
  auto* right = new QVBoxLayout;
  right->addWidget(new QLabel(tr("<b>Predicted memory per rank</b> (core's memory planner)"), this));
  right->addWidget(predicted_, 1);
  right->addWidget(launch_);
  bottom->addLayout(right, 2);
  auto* v = new QVBoxLayout(this);
  v->addLayout(top);
  v->addLayout(grid);
  v->addLayout(bottom);

  fill_presets();
  connect(presets_, &QComboBox::activated, this, [this](int i) {
    const QString path = presets_->itemData(i).toString();
    if (!path.isEmpty()) load_file(path);
  });
  connect(load, &QPushButton::clicked, this, [this] {
    const QString p =
        QFileDialog::getOpenFileName(this, tr("Load experiment"), experiments_dir(), tr("Experiments (*.json)"));
    if (!p.isEmpty()) load_file(p);
  });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString p =
        QFileDialog::getSaveFileName(this, tr("Save experiment"), experiments_dir(), tr("Experiments (*.json)"));
    if (!p.isEmpty()) save_file(p);
  });
  connect(browse_, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("OpenLane-V2 data folder"), line("data.root")->text());
    if (!d.isEmpty()) {
      line("data.root")->setText(d);
      combo("data.source")->setCurrentText(QString::fromStdString(config::name_of(config::DataSource::OpenLaneV2)));
    }
  });
  connect(launch_, &QPushButton::clicked, this, [this] {
    if (valid_) emit launchRequested(experiment());
  });
}

void SetupForm::fill_presets() {
  presets_->clear();
  presets_->addItem(tr("(choose a preset)"), QString());
  const QDir dir(experiments_dir());
  for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) presets_->addItem(f, dir.filePath(f));
}

QLineEdit* SetupForm::line(const QString& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : qobject_cast<QLineEdit*>(it->second);
}
QSpinBox* SetupForm::spin(const QString& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : qobject_cast<QSpinBox*>(it->second);
}
QComboBox* SetupForm::combo(const QString& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : qobject_cast<QComboBox*>(it->second);
}

void SetupForm::set_experiment(const json& experiment) {
  filling_ = true;
  base_ = experiment.is_object() ? experiment : json::object();
  base_.erase("run_dir");  // a new run gets its own folder
  // Missing fields show their defaults.
  json full = config::to_json(config::parse_experiment(base_).config);
  full.merge_patch(base_);
  for (auto& [path, w] : fields_) {
    const json* v = at_path(full, path, false);
    if (!v) continue;
    if (auto* s = qobject_cast<QSpinBox*>(w))
      s->setValue(v->is_number() ? v->get<int>() : 0);
    else if (auto* c = qobject_cast<QComboBox*>(w)) {
      if (c->findText(shown(*v)) < 0) c->addItem(shown(*v));
      c->setCurrentText(shown(*v));
    } else if (auto* l = qobject_cast<QLineEdit*>(w))
      l->setText(shown(*v));
  }
  if (const json* s = at_path(full, "optim.scale_lr", false); s && s->is_boolean())
    scale_lr_->setChecked(s->get<bool>());
  filling_ = false;
  validate();
}

json SetupForm::experiment() const {
  json out = base_;
  for (const auto& [path, w] : fields_) {
    json* v = at_path(out, path, true);
    if (!v) continue;
    if (auto* s = qobject_cast<QSpinBox*>(w))
      *v = s->value();
    else if (auto* c = qobject_cast<QComboBox*>(w))
      *v = c->currentText().toStdString();
    else if (auto* l = qobject_cast<QLineEdit*>(w))
      *v = (path == "name" || path == "data.root") ? json(l->text().toStdString()) : typed(l->text());
  }
  *at_path(out, "optim.scale_lr", true) = scale_lr_->isChecked();
  return out;
}

bool SetupForm::load_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    emit message(tr("cannot read experiment file '%1': %2").arg(path, f.errorString()));
    return false;
  }
  json j = json::parse(f.readAll().toStdString(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    emit message(tr("experiment file '%1' is not a JSON object; fix the JSON or choose another file").arg(path));
    return false;
  }
  set_experiment(j);
  return true;
}

bool SetupForm::save_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(experiment().dump(2) + "\n")) < 0) {
    emit message(tr("cannot write '%1': %2").arg(path, f.errorString()));
    return false;
  }
  emit message(tr("saved %1").arg(path));
  return true;
}

QString SetupForm::predicted_text() const { return predicted_->text(); }

QString SetupForm::problems_text() const { return valid_ ? QString() : problems_->toPlainText(); }

void SetupForm::validate() {
  if (filling_) return;
  const json exp = experiment();
  const config::ConfigResult r = config::parse_experiment(exp);
  std::string text = config::describe_problems(r.problems);
  if (r.problems.empty()) text = CoreChecks::before_launch(r.config);
  const bool ok = text.empty();
  std::string notes = text;
  for (const auto& w : r.warnings) notes += (notes.empty() ? "" : "\n") + std::string("warning: ") + w;
  problems_->setPlainText(QString::fromStdString(notes));
  status_->setText(ok ? tr("<span style='color:#2a7'>Ready to launch: %1 rank(s).</span>").arg(r.config.world_size())
                      : tr("<span style='color:#c33'>%1 problem(s): fix them to launch.</span>")
                            .arg(std::max<size_t>(1, r.problems.size())));
  devices_->setText(QString::fromStdString(CoreChecks::devices_text(r.config)));
  const bool source_files = r.config.data.source == config::DataSource::OpenLaneV2;
  line("data.root")->setEnabled(source_files);
  browse_->setEnabled(source_files);
  predicted_->setText(!ok ? tr("(fix the problems first)") : predict ? predict(exp) : QString());
  launch_->setEnabled(ok);
  if (ok != valid_) {
    valid_ = ok;
    emit validityChanged(ok);
  }
  valid_ = ok;
}

}  // namespace halo::gui
