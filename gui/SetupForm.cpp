// Widgets keyed by their config path, made from config::field_list() (kind -> widget);
// experiment() writes them over the loaded file, validate() runs core's parser + launch checks.
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
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include <climits>
#include <set>

#include "CoreChecks.h"
#include "config/ExperimentConfig.h"
#include "config/FieldInfo.h"
#include "util/Error.h"

namespace halo::gui {

using config::FieldInfo;
using nlohmann::json;

namespace {

json* at_path(json& root, const QString& path, bool create) {
  json* node = &root;
  for (const QString& part : path.split('.')) {
    const std::string key = part.toStdString();
    if (create && node->is_null()) *node = json::object();  // a section the file left out
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

// Fields that name a folder or a file: a "Browse…" button beside them.
const std::set<QString> kPathFields{"data.root", "model.pretrained"};

// Row labels where the key alone reads badly; other keys are shown as "Warmup steps".
QString label_of(const FieldInfo& f) {
  static const std::map<std::string, const char*> labels{
      {"model.arch", "Architecture"},
      {"model.num_classes", "Classes"},
      {"model.dim", "Neck / head width (dim)"},
      {"model.pretrained", "Pretrained weights"},
      {"model.pretrained_skip", "Skip weight prefixes"},
      {"data.root", "Data folder"},
      {"data.batch", "Batch (per dp group)"},
      {"data.workers", "Loader workers"},
      {"data.eval_split", "Eval split"},
      {"parallel.sp", "sp (width shards)"},
      {"parallel.dp", "dp (data parallel)"},
      {"optim.name", "Optimizer"},
      {"optim.lr", "Learning rate"},
      {"optim.momentum", "Momentum (sgd)"},
      {"optim.grad_clip", "Gradient clip (0 off)"},
      {"optim.scale_lr", "Scale lr with the global batch"},
      {"train.checkpoint_every", "Checkpoint every (0: end)"},
      {"train.eval_every", "Eval every (0: off)"},
      {"loss.lc_cls", "Lane class"},
      {"loss.lc_bbox", "Lane points"},
      {"loss.te_cls", "Traffic element class"},
      {"loss.te_bbox", "Traffic element box"},
      {"loss.te_iou", "Traffic element IoU"},
      {"loss.lclc", "Lane-lane topology"},
      {"loss.lcte", "Lane-element topology"},
  };
  if (auto it = labels.find(f.path); it != labels.end()) return QObject::tr(it->second);
  QString k = QString::fromStdString(f.key()).replace('_', ' ');
  if (!k.isEmpty()) k[0] = k[0].toUpper();
  return k;
}

// Each section's group box: its title and its place in the 4-column grid.
struct Group {
  const char* title;
  int row, column;
};
Group group_of(const std::string& section) {
  static const std::map<std::string, Group> groups{
      {"", {"Task and model", 0, 0}},
      {"model", {"Task and model", 0, 0}},
      {"loss", {"Loss weights (OpenLane-V2)", 1, 0}},
      {"data", {"Data", 0, 1}},
      {"train", {"Training", 1, 1}},
      {"parallel", {"Parallelism and memory", 0, 2}},
      {"optim", {"Optimizer", 0, 3}},
      {"schedule", {"Schedule", 1, 3}},
  };
  auto it = groups.find(section);
  return it == groups.end() ? Group{"Other settings", 1, 2} : it->second;
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

QWidget* SetupForm::field_widget(const FieldInfo& f) {
  const QString path = QString::fromStdString(f.path);
  QWidget* w = nullptr;
  if (f.path == "model.arch") {  // a free string in the config: offer the variants core knows
    auto* c = new QComboBox(this);
    c->addItems(QString::fromStdString(CoreChecks::variant_names()).split(", ", Qt::SkipEmptyParts));
    c->setEditable(true);
    connect(c, &QComboBox::currentTextChanged, this, &SetupForm::validate);
    w = c;
  } else if (f.kind == FieldInfo::Kind::Choice) {
    auto* c = new QComboBox(this);
    for (const auto& n : f.choices) c->addItem(QString::fromStdString(n));
    connect(c, &QComboBox::currentTextChanged, this, &SetupForm::validate);
    w = c;
  } else if (f.kind == FieldInfo::Kind::Integer && f.hi <= INT_MAX) {
    auto* s = new QSpinBox(this);  // wider than the rule, so out-of-range values get the CLI's message
    s->setRange(f.lo < 0 ? static_cast<int>(f.lo) : 0, INT_MAX);
    connect(s, &QSpinBox::valueChanged, this, &SetupForm::validate);
    w = s;
  } else if (f.kind == FieldInfo::Kind::Boolean) {
    auto* b = new QCheckBox(this);
    connect(b, &QCheckBox::toggled, this, &SetupForm::validate);
    w = b;
  } else {
    auto* l = new QLineEdit(this);
    connect(l, &QLineEdit::textChanged, this, &SetupForm::validate);
    w = l;
  }
  w->setObjectName(path);
  fields_[path] = w;
  return w;
}

QFormLayout* SetupForm::section_form(const std::string& section, QGridLayout* grid) {
  const Group g = group_of(section);
  if (auto it = forms_.find(g.title); it != forms_.end()) return it->second;
  auto* box = new QGroupBox(tr(g.title), this);
  auto* form = new QFormLayout(box);
  forms_[g.title] = form;
  groups_[g.title] = box;
  grid->addWidget(box, g.row, g.column);
  return form;
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

  auto* grid = new QGridLayout;
  for (const FieldInfo& f : config::field_list()) {
    if (f.path == "run_dir") continue;  // a new run gets its own folder
    QFormLayout* form = section_form(f.section(), grid);
    QWidget* w = field_widget(f);
    const QString path = QString::fromStdString(f.path);
    if (!kPathFields.count(path)) {
      form->addRow(label_of(f), w);
      rows_[path] = Row{form, w};
      continue;
    }
    auto* box = new QWidget(this);
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(w, 1);
    auto* button = new QPushButton(tr("Browse…"), box);
    button->setObjectName("browse:" + path);
    connect(button, &QPushButton::clicked, this, [this, path] { browse(path); });
    browse_[path] = button;
    row->addWidget(button);
    form->addRow(label_of(f), box);
    rows_[path] = Row{form, box};
  }
  devices_ = new QLabel(this);
  devices_->setWordWrap(true);
  section_form("parallel", grid)->addRow(tr("Devices"), devices_);
  grid->setRowStretch(2, 1);
  auto* fields = new QWidget(this);
  fields->setLayout(grid);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(fields);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);

  status_ = new QLabel(this);
  predicted_ = new QLabel(this);
  predicted_->setWordWrap(true);
  predicted_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  predicted_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  problems_ = new QPlainTextEdit(this);
  problems_->setReadOnly(true);
  problems_->setMaximumHeight(160);
  launch_ = new QPushButton(tr("Launch"), this);
  launch_->setObjectName("launch");

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
  v->addWidget(scroll, 1);
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
  connect(launch_, &QPushButton::clicked, this, [this] {
    if (valid_) emit launchRequested(experiment());
  });
}

void SetupForm::browse(const QString& path) {
  if (path == "model.pretrained") {
    const QString f = QFileDialog::getOpenFileName(this, tr("Pretrained weights (timm names)"), line(path)->text(),
                                                   tr("Weights (*.safetensors *.pt *.pth *.bin);;All files (*)"));
    if (!f.isEmpty()) line(path)->setText(f);
    return;
  }
  const QString d = QFileDialog::getExistingDirectory(this, tr("OpenLane-V2 data folder"), line(path)->text());
  if (d.isEmpty()) return;
  line(path)->setText(d);
  combo("data.source")->setCurrentText(QString::fromStdString(config::name_of(config::DataSource::OpenLaneV2)));
}

void SetupForm::fill_presets() {
  presets_->clear();
  presets_->addItem(tr("(choose a preset)"), QString());
  const QDir dir(experiments_dir());
  for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) presets_->addItem(f, dir.filePath(f));
}

template <class W>
static W* widget_as(const std::map<QString, QWidget*>& fields, const QString& path) {
  auto it = fields.find(path);
  return it == fields.end() ? nullptr : qobject_cast<W*>(it->second);
}
QLineEdit* SetupForm::line(const QString& path) const { return widget_as<QLineEdit>(fields_, path); }
QSpinBox* SetupForm::spin(const QString& path) const { return widget_as<QSpinBox>(fields_, path); }
QComboBox* SetupForm::combo(const QString& path) const { return widget_as<QComboBox>(fields_, path); }
QCheckBox* SetupForm::check(const QString& path) const { return widget_as<QCheckBox>(fields_, path); }

bool SetupForm::row_visible(const QString& path) const {
  auto row = rows_.find(path);
  if (row == rows_.end()) return false;
  QGroupBox* box = qobject_cast<QGroupBox*>(row->second.form->parentWidget());
  return row->second.form->isRowVisible(row->second.widget) && (!box || !box->isHidden());
}

void SetupForm::set_experiment(const json& experiment, const QString& source) {
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
    } else if (auto* b = qobject_cast<QCheckBox*>(w))
      b->setChecked(v->is_boolean() && v->get<bool>());
    else if (auto* l = qobject_cast<QLineEdit*>(w))
      l->setText(shown(*v));
  }
  filling_ = false;
  if (source != source_ || !source.isEmpty()) {
    source_ = source;
    emit sourceChanged(source_);
  }
  validate();
}

json SetupForm::experiment() const {
  json out = base_;
  const std::set<QString> strings{"name", "data.root", "model.pretrained"};  // as typed, never parsed as JSON
  for (const auto& [path, w] : fields_) {
    json* v = at_path(out, path, true);
    if (!v) continue;
    if (auto* s = qobject_cast<QSpinBox*>(w))
      *v = s->value();
    else if (auto* c = qobject_cast<QComboBox*>(w))
      *v = c->currentText().toStdString();
    else if (auto* b = qobject_cast<QCheckBox*>(w))
      *v = b->isChecked();
    else if (auto* l = qobject_cast<QLineEdit*>(w))
      *v = strings.count(path) ? json(l->text().toStdString()) : typed(l->text());
  }
  return out;
}

bool SetupForm::load_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    emit message(tr("cannot read experiment file '%1': %2").arg(path, f.errorString()));
    return false;
  }
  json j;
  try {  // as the launcher reads it: duplicate keys and bad JSON are named
    j = config::parse_json_strict(f.readAll().toStdString(), "experiment file '" + path.toStdString() + "'");
  } catch (const util::Error& e) {
    emit message(QString::fromStdString(e.problem() + "; " + e.hint()));
    return false;
  }
  if (!j.is_object()) {
    emit message(tr("experiment file '%1' is not a JSON object; fix the JSON or choose another file").arg(path));
    return false;
  }
  set_experiment(j, QFileInfo(path).fileName());
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

// The other task's fields are hidden (classes for OpenLane-V2; dim and the loss weights for
// classification); the data folder is enabled only when the data comes from files.
void SetupForm::show_task_fields() {
  const auto task = config::from_string<config::Task>(combo("task")->currentText().toStdString());
  for (const FieldInfo& f : config::field_list()) {
    auto row = rows_.find(QString::fromStdString(f.path));
    if (row == rows_.end()) continue;
    row->second.form->setRowVisible(row->second.widget, !f.task || !task || *f.task == *task);
  }
  for (auto& [title, box] : groups_) {
    bool any = false;
    for (auto& [path, row] : rows_)
      if (row.form == forms_[title] && row.form->isRowVisible(row.widget)) any = true;
    box->setVisible(any || title == group_of("parallel").title);
  }
  const bool files =
      combo("data.source")->currentText().toStdString() == config::name_of(config::DataSource::OpenLaneV2);
  line("data.root")->setEnabled(files);
  browse_.at("data.root")->setEnabled(files);
}

void SetupForm::validate() {
  if (filling_) return;
  show_task_fields();
  const json exp = experiment();
  const config::ConfigResult r = config::parse_experiment(exp);
  std::set<std::string> bad;
  for (const auto& p : r.problems) bad.insert(p.field);
  const std::vector<std::string> launch = CoreChecks::before_launch(r.config, bad);
  std::string text = config::describe_problems(r.problems);
  for (const auto& l : launch) text += (text.empty() ? "" : "\n") + ("  - " + l);
  problem_count_ = static_cast<int>(r.problems.size() + launch.size());
  const bool ok = problem_count_ == 0;
  std::string notes = text;
  for (const auto& w : r.warnings) notes += (notes.empty() ? "" : "\n") + std::string("warning: ") + w;
  problems_->setPlainText(QString::fromStdString(notes));
  status_->setText(ok ? tr("<span style='color:#2a7'>Ready to launch: %1 rank(s).</span>").arg(r.config.world_size())
                      : tr("<span style='color:#c33'>%1 problem(s): fix them to launch.</span>").arg(problem_count_));
  devices_->setText(QString::fromStdString(CoreChecks::devices_text(r.config)));
  // The prediction needs a config that parses; launch-only problems (no CUDA here, no data
  // folder yet) do not stop it.
  predicted_->setText(!r.problems.empty() ? tr("(fix the experiment's problems first)")
                      : predict           ? predict(exp)
                                          : QString());
  launch_->setEnabled(ok);
  if (ok != valid_) {
    valid_ = ok;
    emit validityChanged(ok);
  }
  valid_ = ok;
  emit experimentChanged();
}

}  // namespace halo::gui
