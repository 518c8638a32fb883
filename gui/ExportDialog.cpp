// The checkpoint list is <run>/checkpoints/step-*.pt (newest first); the output defaults
// to <run>/export/model-step-N.<ext>; `halo export --json` reports the written paths.
#include "ExportDialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "RunController.h"

namespace halo::gui {

ExportDialog::ExportDialog(const QString& run_dir, QWidget* parent) : QDialog(parent), run_dir_(run_dir) {
  setWindowTitle(tr("Export a checkpoint of %1").arg(QFileInfo(run_dir).fileName()));
  checkpoints_ = new QComboBox(this);
  QDir ckpt(QDir(run_dir).filePath("checkpoints"));
  QStringList files = ckpt.entryList({"step-*.pt"}, QDir::Files, QDir::Name | QDir::Reversed);
  for (const QString& f : files) checkpoints_->addItem(f, ckpt.filePath(f));
  format_ = new QComboBox(this);
  format_->addItem("safetensors");
  format_->addItem("torch");
  output_ = new QLineEdit(this);
  auto* browse = new QPushButton(tr("Browse…"), this);
  auto* out_row = new QHBoxLayout;
  out_row->addWidget(output_, 1);
  out_row->addWidget(browse);
  replace_ = new QCheckBox(tr("Replace the file if it exists (never a checkpoint or the run history)"), this);
  result_ = new QPlainTextEdit(this);
  result_->setReadOnly(true);
  export_ = new QPushButton(tr("Export"), this);
  auto* form = new QFormLayout;
  form->addRow(tr("Checkpoint"), checkpoints_);
  form->addRow(tr("Format"), format_);
  form->addRow(tr("Output file"), out_row);
  form->addRow(QString(), replace_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  buttons->addButton(export_, QDialogButtonBox::ActionRole);
  auto* v = new QVBoxLayout(this);
  v->addLayout(form);
  v->addWidget(result_, 1);
  v->addWidget(buttons);
  resize(640, 360);
  if (files.isEmpty()) {
    result_->setPlainText(tr("This run has no checkpoint in %1 (a run writes one at its end; set "
                             "train.checkpoint_every for more).")
                              .arg(ckpt.path()));
    export_->setEnabled(false);
  }
  suggest_output();
  connect(checkpoints_, &QComboBox::currentIndexChanged, this, &ExportDialog::suggest_output);
  connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::suggest_output);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export to"), output_->text());
    if (!p.isEmpty()) output_->setText(p);
  });
  connect(export_, &QPushButton::clicked, this, &ExportDialog::start_export);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

void ExportDialog::suggest_output() {
  const QString ckpt = QFileInfo(checkpoints_->currentData().toString()).completeBaseName();  // step-000060
  const QString ext = format_->currentText() == "torch" ? "pt" : "safetensors";
  output_->setText(QDir(QDir(run_dir_).filePath("export"))
                       .filePath(QString("model-%1.%2").arg(ckpt.isEmpty() ? "latest" : ckpt, ext)));
}

QString ExportDialog::result_text() const { return result_->toPlainText(); }

void ExportDialog::start_export() {
  if (process_) return;
  const QString out = output_->text().trimmed();
  if (out.isEmpty()) return result_->setPlainText(tr("choose an output file"));
  QDir().mkpath(QFileInfo(out).absolutePath());
  process_ = new QProcess(this);
  QStringList args{"export", checkpoints_->currentData().toString(), "-o", out, "--format", format_->currentText(),
                   "--json"};
  if (!db_path.isEmpty()) args << "--db" << db_path;
  if (replace_->isChecked()) args << "--force";
  export_->setEnabled(false);
  result_->setPlainText(tr("Exporting…"));
  connect(process_, &QProcess::finished, this, [this, out](int code, QProcess::ExitStatus status) {
    const QString stdout_text = QString::fromUtf8(process_->readAllStandardOutput());
    const QString stderr_text = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    const bool ok = status == QProcess::NormalExit && code == 0;
    if (ok) {
      auto j = nlohmann::json::parse(stdout_text.toStdString(), nullptr, false);
      QString text = tr("Exported.\n");
      if (!j.is_discarded())
        text += tr("File: %1\nManifest: %2\nArchitecture: %3, step %4, %5 tensors, %6 bytes")
                    .arg(QString::fromStdString(j.value("output", "")), QString::fromStdString(j.value("manifest", "")),
                         QString::fromStdString(j.value("arch", "")))
                    .arg(j.value("step", int64_t{0}))
                    .arg(j.value("tensors", int64_t{0}))
                    .arg(j.value("bytes", int64_t{0}));
      result_->setPlainText(text);
    } else {
      result_->setPlainText(
          tr("Export failed (exit %1):\n%2").arg(code).arg(stderr_text.isEmpty() ? stdout_text : stderr_text));
    }
    process_->deleteLater();
    process_ = nullptr;
    export_->setEnabled(true);
    emit exported(ok, out);
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    result_->setPlainText(tr("cannot start %1: %2").arg(RunController::halo_binary(), process_->errorString()));
    process_->deleteLater();
    process_ = nullptr;
    export_->setEnabled(true);
    emit exported(false, QString());
  });
  process_->start(RunController::halo_binary(), args);
}

}  // namespace halo::gui
