// Halo's exception type: message = problem, then "hint: ..." when there is one.
// Keeps both parts so the CLI and GUI can show them separately.
#include "util/Error.h"

namespace halo::util {

namespace {
std::string compose(const std::string& what, const std::string& hint) {
  return hint.empty() ? what : what + "\n  hint: " + hint;
}
}  // namespace

Error::Error(std::string what, std::string hint)
    : std::runtime_error(compose(what, hint)), problem_(std::move(what)), hint_(std::move(hint)) {}

}  // namespace halo::util
